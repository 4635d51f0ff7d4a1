//! `pinprobe completions SHELL` and `pinprobe man`: shell completions and manual pages generated
//! from the clap definition itself, so they never drift from the arguments.

use super::Cli;
use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
use std::path::PathBuf;

/// Shells with completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write `pinprobe.1` and a page per subcommand (`pinprobe-scan.1`, ...) into DIR instead
    /// of printing `pinprobe.1` on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Print the completion script for `args.shell`.
pub fn completions(args: CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "pinprobe", &mut buf);
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}

/// Print `pinprobe.1`, or write every page into `args.dir`.
pub fn man(args: ManArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match args.dir {
        Some(dir) => clap_mangen::generate_to(cmd, &dir)
            .with_context(|| format!("writing manual pages to {}", dir.display())),
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            out.write_all(&buf)?;
            out.flush()?;
            Ok(())
        }
    }
}
