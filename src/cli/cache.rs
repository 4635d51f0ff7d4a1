//! `pinprobe cache`: what the content-addressed cache holds (`info`), and `prune` to a size.

use crate::cache::{DEFAULT_MAX_BYTES, Store};
use crate::exit::Exit;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: CacheCommand,
    /// The cache directory (default `$PINPROBE_CACHE`, `$XDG_CACHE_HOME/pinprobe`,
    /// `~/.cache/pinprobe`).
    #[arg(long, value_name = "DIR", global = true)]
    pub cache: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum CacheCommand {
    /// Entries and bytes per kind, and entries that fail their check (each entry is read).
    Info,
    /// Delete entries that fail their check, then the least recently used until the cache
    /// fits in --max-size.
    Prune {
        /// The bound, in bytes or with a suffix K, M, G (powers of 1024).
        #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value_t = DEFAULT_MAX_BYTES)]
        max_size: u64,
    },
}

/// `123`, `64K`, `500M`, `2G`.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&t[..i], t[i..].to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let shift = match unit.trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("`{s}` is not a size (e.g. 500M)")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 500M)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("`{s}` is too large"))
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let Some(dir) = args
        .cache
        .or_else(crate::pin::fingerprint::default_cache_dir)
    else {
        anyhow::bail!("no cache directory: pass --cache DIR or set PINPROBE_CACHE");
    };
    let store = Store::new(&dir);
    match args.command {
        CacheCommand::Info => {
            let info = store.info();
            writeln!(out, "cache: {}", store.root().display())?;
            for (kind, entries, bytes) in &info.kinds {
                writeln!(out, "{kind}: {entries} entries, {bytes} bytes")?;
            }
            writeln!(out, "failing their check: {}", info.bad)?;
        }
        CacheCommand::Prune { max_size } => {
            let pruned = store.prune(max_size);
            writeln!(
                out,
                "removed {} failing their check and {} least recently used ({} bytes); {} bytes left",
                pruned.bad, pruned.evicted, pruned.freed, pruned.left
            )?;
        }
    }
    Ok(Exit::Clean)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("500m"), Ok(500 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("2T").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }
}
