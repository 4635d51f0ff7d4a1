//! `pinprobe index`: build and list the fingerprint indexes that name the commit an artifact's
//! shipped FlashAttention sources came from.

use crate::exit::Exit;
use crate::pin::fingerprint;
use crate::resolve::Repo;
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: IndexCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum IndexCommand {
    /// Record, for every commit of a clone, the blob ids of its `flash_attn/cute/*.py` files.
    /// Incremental: commits already indexed are skipped, and an index that gains none is not
    /// rewritten (a JSON index of an earlier version is converted). `scan` then names the
    /// commits a wheel's shipped files match.
    Build {
        /// A clone by component name, e.g. `flash-attention=~/src/flash-attention`
        /// (`flash-attention-upstream` for Dao-AILab/flash-attention).
        #[arg(long = "repo", value_name = "NAME=PATH", required = true, value_parser = super::scan::parse_repo)]
        repos: Vec<(String, PathBuf)>,
        /// The cache directory (default `$PINPROBE_CACHE`, `$XDG_CACHE_HOME/pinprobe`, `~/.cache/pinprobe`).
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
    },
    /// List the indexes in the cache, with the format each is stored in.
    List {
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
    },
}

fn cache_dir(cache: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match cache.or_else(fingerprint::default_cache_dir) {
        Some(dir) => Ok(dir),
        None => bail!("no cache directory: pass --cache DIR or set PINPROBE_CACHE"),
    }
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match args.command {
        IndexCommand::Build { repos, cache } => {
            let cache = cache_dir(cache)?;
            for (name, path) in repos {
                let clone = Repo::open(&path)
                    .with_context(|| format!("--repo {name}={}", path.display()))?;
                eprintln!(
                    "pinprobe: indexing {} from {} ...",
                    crate::model::text::printable(&name),
                    crate::model::text::printable(&path.display().to_string())
                );
                let built = fingerprint::build(&clone, &name, &cache)?;
                if let Some(why) = &built.discarded {
                    eprintln!("pinprobe: warning: {why}; rebuilt from the clone");
                }
                if let Some(legacy) = &built.converted {
                    eprintln!(
                        "pinprobe: converted the JSON index {} to the binary format",
                        legacy.display()
                    );
                }
                writeln!(
                    out,
                    "{name}: {} commits ({} new), {} distinct states of {} -> {}",
                    built.commits,
                    built.new_commits,
                    built.states,
                    fingerprint::CUTE_DIR,
                    built.path.display()
                )?;
                if built.commits == 0 {
                    eprintln!(
                        "pinprobe: warning: no commit of {} has {}",
                        path.display(),
                        fingerprint::CUTE_DIR
                    );
                }
            }
            Ok(Exit::Clean)
        }
        IndexCommand::List { cache } => {
            let cache = cache_dir(cache)?;
            let all = fingerprint::load_all(&cache)?;
            if all.is_empty() {
                writeln!(out, "no indexes in {}", cache.display())?;
            }
            for i in all {
                writeln!(
                    out,
                    "{}: {} commits, {} states, from {}, {}",
                    i.component,
                    i.commits.len(),
                    i.states.len(),
                    crate::model::text::printable(&i.source),
                    i.format.describe()
                )?;
            }
            Ok(Exit::Clean)
        }
    }
}
