//! Command-line interface: one file per subcommand, each with its `Args` and a `run`.

pub mod cache;
pub mod config;
pub mod diff;
pub mod docs;
pub mod fetch_args;
pub mod index;
pub mod merge;
pub mod output;
pub mod rules;
pub mod scan;
pub mod verify;

use crate::exit::Exit;
use clap::{Parser, Subcommand};
use std::io::Write;

/// pinprobe: audit the kernel projects a vLLM build pins, and verify split-KV decode on the GPU.
#[derive(Debug, Parser)]
#[command(
    name = "pinprobe",
    version,
    about = "Audit the kernel commits a vLLM build pins, and verify split-KV decode scaling on the GPU",
    long_about = "pinprobe answers one deployment question: does the vLLM build I am about to ship \
carry a known kernel bug through a dependency pin, and does its split-KV decode path actually scale \
on this GPU?\n\n\
`scan` finds every kernel project a vLLM source tree pins (FetchContent_Declare, \
ExternalProject_Add, CPMAddPackage under cmake/), resolves the pinned commits and matches them \
against the rule database. `diff BASE HEAD` says what a pin bump between two git revisions \
introduces, fixes or keeps (for pull requests; the GitHub Action runs it). `verify` runs a bundled split-KV decode probe on the GPU and decides \
whether latency scales with num_splits; `verify --deployed TARGET` runs the same sweep through \
the FlashAttention 4 kernel a wheel or environment ships, and is the only command that imports code \
from an artifact (`scan` never does). `rules` lists, shows, lints, tests and exports (OSV) the rule \
database.\n\n\
Exit codes: 0 clean, 1 findings (scan) or flat (verify), 2 usage/input/I-O error, \
3 undecided (fail closed), 4 no usable GPU.",
    after_help = "Examples:\n  pinprobe scan ~/src/vllm\n  pinprobe scan ~/src/vllm --rev v0.30.0 --repo flash-attention=~/src/flash-attention\n  pinprobe scan . --format json\n  pinprobe diff origin/main HEAD --format markdown\n  pinprobe rules list\n  pinprobe verify"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Say on stderr what is being read and evaluated: the rule database, the settings files,
    /// each target and its kind, the pins found, the rules evaluated, every fetch.
    #[arg(short, long, global = true, help_heading = "Output")]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find pinned kernel commits in a target and match them against the rule database.
    #[command(long_about = scan::LONG_ABOUT, after_help = scan::AFTER_HELP)]
    Scan(Box<scan::Args>),
    /// What a pin bump between two git revisions introduces, fixes or keeps.
    #[command(long_about = diff::LONG_ABOUT, after_help = diff::AFTER_HELP)]
    Diff(diff::Args),
    /// Combine the JSON reports of a sharded sweep into one report, with scan's exit code.
    #[command(long_about = merge::LONG_ABOUT, after_help = merge::AFTER_HELP)]
    Merge(merge::Args),
    /// List, show, lint, test and export the rule database.
    Rules(rules::Args),
    /// Build fingerprint indexes that recover the commit of shipped FlashAttention sources.
    Index(index::Args),
    /// Sweep num_splits through the bundled split-KV decode probe on the GPU.
    #[command(long_about = verify::LONG_ABOUT, after_help = verify::AFTER_HELP)]
    Verify(verify::Args),
    /// What the content-addressed cache holds, and prune it to a size (LRU).
    Cache(cache::Args),
    /// Print shell completions (bash, zsh, fish), e.g. `pinprobe completions bash >
    /// ~/.local/share/bash-completion/completions/pinprobe`.
    Completions(docs::CompletionsArgs),
    /// Print the manual page (roff), or write a page per subcommand with --dir.
    Man(docs::ManArgs),
    /// Print the command-line reference as Markdown (docs/src/cli.md).
    #[command(hide = true)]
    CliReference(docs::ReferenceArgs),
}

/// Run one subcommand, writing its report to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<Exit> {
    crate::model::verbose::enable(cli.verbose);
    match cli.command {
        Command::Scan(args) => scan::run(*args, out),
        Command::Diff(args) => diff::run(args, out),
        Command::Merge(args) => merge::run(args, out),
        Command::Rules(args) => rules::run(args, out),
        Command::Index(args) => index::run(args, out),
        Command::Verify(args) => verify::run(args, out),
        Command::Cache(args) => cache::run(args, out),
        Command::Completions(args) => docs::completions(args, out).map(|()| Exit::Clean),
        Command::Man(args) => docs::man(args, out).map(|()| Exit::Clean),
        Command::CliReference(args) => docs::reference(args, out).map(|()| Exit::Clean),
    }
}
