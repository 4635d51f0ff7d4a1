//! pinprobe's binary: parse arguments, run the library, map the outcome to an exit code.

use clap::Parser;
use pinprobe::cli::{self, Cli};
use pinprobe::exit::Exit;

/// mimalloc: the CMake evaluator makes and drops small values at every command (glibc's
/// malloc and free were about 40% of the CPU of a scan of a real vLLM tree).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match cli::run(cli, &mut out) {
        Ok(exit) => exit,
        Err(err) if is_broken_pipe(&err) => Exit::Clean,
        Err(err) => {
            // One line: the input and the cause, chained.
            eprintln!("pinprobe: error: {}", one_line(&err));
            Exit::Error
        }
    };
    std::process::exit(code.code());
}

/// The error and its causes on one line, control characters escaped; a cause whose text the
/// message before it already ends with (an I/O error wrapped with its path) is said once.
fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if parts.last().is_some_and(|prev| prev.ends_with(&text)) {
            continue;
        }
        parts.push(text);
    }
    pinprobe::model::text::printable(&parts.join(": "))
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
