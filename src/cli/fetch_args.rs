//! The fetch options `scan` and `diff` share (`--offline`, `--mirror`, `--fetch-timeout`) and
//! the environment they read (`PINPROBE_OFFLINE`, `PINPROBE_GIT_TOKEN` with
//! `PINPROBE_GIT_TOKEN_HOST`), turned into [`crate::resolve::fetch::Settings`].

use crate::resolve::fetch::{self, Settings, Token};
use anyhow::bail;
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct FetchArgs {
    /// Never touch the network (also `PINPROBE_OFFLINE=1`): pinned history missing from every
    /// `--repo` clone is not fetched; the cache is used as it is, and stderr says which
    /// findings a fetch would decide.
    #[arg(long)]
    pub offline: bool,

    /// Fetch repositories whose URL starts with FROM from TO instead (repeatable; the longest
    /// FROM wins; before git's `url.<base>.insteadOf`). Plain `http://` is used only through
    /// such a rewrite.
    #[arg(long = "mirror", value_name = "FROM=TO", value_parser = parse_mirror)]
    pub mirrors: Vec<(String, String)>,

    /// Seconds a git fetch may take to connect, or stall, before it fails (the findings it
    /// would decide stay `unknown`).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub fetch_timeout: f64,
}

impl FetchArgs {
    /// The settings for one run: `None` without a cache directory (nothing to fetch into).
    pub fn settings(
        &self,
        cache: Option<PathBuf>,
        ca_file: Option<PathBuf>,
        progress: bool,
    ) -> anyhow::Result<Option<Settings>> {
        if !(self.fetch_timeout.is_finite() && self.fetch_timeout > 0.0) {
            bail!("--fetch-timeout must be a positive number of seconds");
        }
        let token = token_from_env()?;
        let offline = self.offline || offline_from_env();
        Ok(cache.map(|cache| {
            let mut mirrors = self.mirrors.clone();
            if !offline {
                // Offline nothing is fetched, so git's rewrites (read by running git) change
                // nothing.
                mirrors.extend(fetch::git_config_rewrites());
            }
            Settings {
                cache,
                offline,
                mirrors,
                timeout: std::time::Duration::from_secs_f64(self.fetch_timeout),
                ca_file,
                token,
                progress,
            }
        }))
    }
}

fn parse_mirror(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        _ => Err(format!(
            "`{s}` is not FROM=TO (e.g. https://github.com/=http://mirror.internal/github/)"
        )),
    }
}

/// Whether `PINPROBE_OFFLINE` asks for offline mode (set, and not `0`, `false` or empty).
fn offline_from_env() -> bool {
    std::env::var("PINPROBE_OFFLINE").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no"))
}

/// `PINPROBE_GIT_TOKEN`, bound to the host `PINPROBE_GIT_TOKEN_HOST` names. A token without a
/// valid host is refused (it would otherwise go wherever a pin points); the token itself never
/// appears in a message.
fn token_from_env() -> anyhow::Result<Option<Token>> {
    let secret = std::env::var("PINPROBE_GIT_TOKEN").unwrap_or_default();
    let host = std::env::var("PINPROBE_GIT_TOKEN_HOST").unwrap_or_default();
    if secret.is_empty() {
        return Ok(None);
    }
    match Token::new(&host, &secret) {
        Some(token) => Ok(Some(token)),
        None if host.trim().is_empty() => bail!(
            "PINPROBE_GIT_TOKEN is set without PINPROBE_GIT_TOKEN_HOST: a token is sent only to the one host that variable names"
        ),
        None => bail!(
            "PINPROBE_GIT_TOKEN_HOST `{}` is not a host name (HOST or HOST:PORT, no scheme or path)",
            host.escape_default()
        ),
    }
}

/// Past this many days the rule database in use is warned about on every run (`--max-db-age`
/// turns an age past its own limit into an error).
pub const DB_WARN_DAYS: i64 = 30;

/// How to get newer rules, said with every freshness warning and error.
const DB_UPDATE: &str =
    "install a newer pinprobe, or `pinprobe rules pull REF --trust KEY.pub` for a signed database";

/// The rule database's freshness: an error (exit 2) when `max_age` is given and the database is
/// older than that many days, or has no date to check; a warning when it is older than
/// [`DB_WARN_DAYS`]; else nothing. Today is the system clock's (`PINPROBE_TODAY` in tests).
pub fn db_freshness(
    db: &crate::rules::Database,
    max_age: Option<u32>,
) -> anyhow::Result<Option<String>> {
    let today = crate::model::Date::today();
    let Some(date) = db.date.as_deref().and_then(crate::model::Date::parse) else {
        if let Some(max_age) = max_age {
            bail!(
                "the rule database in use ({}) has no date: its age cannot be checked against --max-db-age {max_age}",
                db.digest
            );
        }
        return Ok(None);
    };
    let age = today.to_days() - date.to_days();
    if let Some(max_age) = max_age
        && age > i64::from(max_age)
    {
        bail!(
            "the rule database in use ({}, dated {date}) is {age} days old, older than --max-db-age {max_age}: {DB_UPDATE}",
            db.digest
        );
    }
    Ok((age > DB_WARN_DAYS).then(|| {
        format!(
            "the rule database in use ({}, dated {date}) is {age} days old: bugs found since are not in it; {DB_UPDATE} (--max-db-age DAYS makes an old database an error)",
            db.digest
        )
    }))
}

/// `-v`: which rule database this run judges with, and what `--rules` layered over it.
pub fn say_database(db: &crate::rules::Database, rules: Option<&std::path::Path>) {
    crate::model::verbose::say(format_args!(
        "rule database {} of {}: {} rules{}",
        db.digest,
        db.date.as_deref().unwrap_or("no date"),
        db.rules.len(),
        rules
            .map(|d| format!(", {} layered over the built-in ones", d.display()))
            .unwrap_or_default()
    ));
}

/// The loud warning for a database accepted with `--allow-rules-downgrade`, and for a pulled
/// database refused for this run: printed on every run, `--quiet` or not.
pub fn print_downgrade_warning(db: &crate::rules::Database) {
    // A pulled database refused for this run: never hidden either.
    if let Some(why) = &db.source.refused {
        eprintln!(
            "pinprobe: warning: rules: {}; using the built-in database ({}, serial {})",
            crate::model::text::printable(why),
            db.digest,
            db.serial
        );
    }
    if db.downgraded {
        eprintln!(
            "pinprobe: warning: the rule database in use ({}, serial {}) was accepted with --allow-rules-downgrade: it is older than, or drops rules of, a database trusted before",
            db.digest, db.serial
        );
    }
}
