//! pinprobe's binary: parse arguments, run the library, map the outcome to an exit code.

use clap::Parser;
use pinprobe::cli::{self, Cli};
use pinprobe::exit::Exit;

fn main() {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match cli::run(cli, &mut out) {
        Ok(exit) => exit,
        Err(err) if is_broken_pipe(&err) => Exit::Clean,
        Err(err) => {
            // One line: the input and the cause, chained.
            eprintln!("pinprobe: error: {}", format!("{err:#}").replace('\n', " "));
            Exit::Error
        }
    };
    std::process::exit(code.code());
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
