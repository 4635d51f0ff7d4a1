//! Loading the database: the embedded rules (or the newest valid database pulled with
//! `pinprobe rules pull`, which replaces them whole), with a user's `--rules DIR` layered over
//! them, each file validated as it is read, and one digest over what was loaded.

use super::embedded;
use super::lint::{self, Diagnostic};
use super::model::Rule;
use crate::pin::components::Registry;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Where a rule came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    /// From a database pulled into the cache (its directory).
    Pulled(PathBuf),
    User(PathBuf),
}

#[derive(Debug, Clone)]
pub struct LoadedRule {
    pub rule: Rule,
    pub origin: Origin,
    /// The file name (built-in) or path (user) the rule was read from.
    pub file: String,
    /// SHA-256 of the file's text, for the database digest.
    pub sha256: [u8; 32],
}

/// The effective rule database.
#[derive(Debug, Clone)]
pub struct Database {
    pub rules: Vec<LoadedRule>,
    pub registry: Registry,
    /// `sha256:<hex>` over every loaded file's name and text, in id order.
    pub digest: String,
    /// The database's date: the latest `modified` day (`YYYY-MM-DD`) of its rules.
    pub date: Option<String>,
    /// Its feed serial (`rules::feed`): the built-in database's, or the pulled one's.
    pub serial: u64,
    /// Whether it is a pulled database accepted with --allow-rules-downgrade (below a newer one
    /// trusted before): every run says so, even with --quiet.
    pub downgraded: bool,
    /// Where it came from, as reports name it (built in or pulled, the signing key, a user
    /// directory over it).
    pub source: crate::model::RulesSource,
    /// The ids of the rules it withdraws (OSV `withdrawn`): recorded, never judged, and not in
    /// `rules`.
    pub withdrawn: Vec<crate::model::RuleId>,
    /// The release ledger: the user directory's `ledger.yaml` if it has one, else the built-in
    /// one ([`Database::ledger`]).
    ledger: LedgerCell,
}

/// A ledger read from a file is parsed when the database is loaded (its errors are the load's);
/// the built-in one, which the test suite parses, only when a scan first asks for it, so a run
/// that reuses every report never parses its 67 KB.
#[derive(Debug, Clone, Default)]
struct LedgerCell(std::sync::OnceLock<super::Ledger>);

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(Diagnostic),
}

impl Database {
    /// The release ledger.
    pub fn ledger(&self) -> &super::Ledger {
        // The built-in ledger always parses (`rules::ledger::tests`); were it ever not to, no
        // release would be known, so nothing would be decided from it.
        self.ledger
            .0
            .get_or_init(|| super::Ledger::builtin().unwrap_or_else(|_| super::Ledger::none()))
    }

    /// Replace the release ledger (a database built for a test, a ledger under review).
    pub fn set_ledger(&mut self, ledger: super::Ledger) {
        self.ledger = LedgerCell(std::sync::OnceLock::from(ledger));
    }

    pub fn get(&self, id: &str) -> Option<&LoadedRule> {
        self.rules
            .iter()
            .find(|r| r.rule.id.eq_ignore_ascii_case(id))
    }
}

/// A rule file's text, parsed and validated. All problems found, not only the first.
pub fn parse(file: &str, text: &str, registry: &Registry) -> Result<Rule, Vec<Diagnostic>> {
    let rule: Rule = serde_saphyr::from_str(text).map_err(|e| {
        vec![Diagnostic {
            file: file.to_string(),
            line: None,
            message: format!("invalid rule: {}", e.to_string().replace('\n', " ")),
        }]
    })?;
    let problems = lint::check(file, text, &rule, registry);
    if problems.is_empty() {
        Ok(rule)
    } else {
        Err(problems)
    }
}

/// The release ledger's file name in a rule directory: data, not a rule.
pub const LEDGER_FILE: &str = "ledger.yaml";

/// The rule files of a directory, `components.yaml` and `ledger.yaml` apart.
#[derive(Debug, Clone, Default)]
pub struct RuleDir {
    /// `*.yaml` / `*.yml` files, sorted by path, with their text.
    pub files: Vec<(PathBuf, String)>,
    /// The text of `components.yaml`, if present.
    pub components: Option<String>,
    /// The text of `ledger.yaml` (the release ledger, tools/ledger/build.py), if present.
    pub ledger: Option<String>,
}

/// Read a rule directory.
pub fn read_dir(dir: &Path) -> Result<RuleDir, RulesError> {
    let io = |path: &Path, source| RulesError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    let mut components = None;
    let mut ledger = None;
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let path = entry.map_err(|e| io(dir, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        // A rule file that is a FIFO, a device or a directory is an error, not skipped.
        let bytes =
            crate::input::read_file(&path, crate::input::MAX_TEXT).map_err(|e| io(&path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            RulesError::Invalid(Diagnostic {
                file: path.display().to_string(),
                line: None,
                message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
            })
        })?;
        if name == "components.yaml" {
            components = Some(text);
        } else if name == LEDGER_FILE {
            ledger = Some(text);
        } else {
            files.push((path, text));
        }
    }
    files.sort();
    Ok(RuleDir {
        files,
        components,
        ledger,
    })
}

fn parse_registry(file: &str, text: &str) -> Result<Registry, RulesError> {
    serde_saphyr::from_str(text).map_err(|e| {
        RulesError::Invalid(Diagnostic {
            file: file.to_string(),
            line: None,
            message: format!(
                "invalid component registry: {}",
                e.to_string().replace('\n', " ")
            ),
        })
    })
}

fn parse_one(
    file: &str,
    text: &str,
    origin: Origin,
    registry: &Registry,
) -> Result<LoadedRule, RulesError> {
    let rule = parse(file, text, registry).map_err(|mut d| RulesError::Invalid(d.remove(0)))?;
    Ok(LoadedRule {
        rule,
        origin,
        file: file.to_string(),
        sha256: Sha256::digest(text.as_bytes()).into(),
    })
}

/// Load the embedded database, then `user_dir` over it. Returns the database and notices for
/// stderr (a user rule overriding a built-in one).
pub fn load(user_dir: Option<&Path>) -> Result<(Database, Vec<String>), RulesError> {
    let user = user_dir.map(read_dir).transpose()?;
    load_with(user_dir.zip(user.as_ref()))
}

/// The databases pulled into `CACHE/rules/` (see [`crate::rules::oci`]), each a directory
/// holding a whole database.
pub const PULLED_DIR: &str = "rules";

/// The file in `CACHE/rules/` recording which pulled database is trusted
/// ([`super::feed::TrustState`]).
pub const TRUST_FILE: &str = "trust.json";

/// The cache's trust record, if it has a readable one.
pub fn trust_state(cache: &Path) -> Option<super::feed::TrustState> {
    let path = cache.join(PULLED_DIR).join(TRUST_FILE);
    let text = crate::input::read_text(&path, crate::input::MAX_TEXT).ok()?;
    serde_json::from_str(&text).ok()
}

/// [`load`] over the database `rules pull` last accepted into `cache` (its trust record,
/// [`super::feed::TrustState`]), else the embedded one. The pulled database is used only when
/// it still loads, is the database its signed statement names, and is not older than the
/// embedded one (a newer binary's own rules win over an older pull) unless it was accepted with
/// `--allow-rules-downgrade`; otherwise a notice names it and the cause.
pub fn load_in(
    cache: Option<&Path>,
    user_dir: Option<&Path>,
) -> Result<(Database, Vec<String>), RulesError> {
    let user = user_dir.map(read_dir).transpose()?;
    let user = user_dir.zip(user.as_ref());
    let mut notices = Vec::new();
    // A pulled database not used for this run, and why: the report names it and the command
    // line says it on stderr whatever `--quiet` says.
    let mut refused = None;
    let state = cache.and_then(trust_state);
    let mut chosen = None;
    if let (Some(cache), Some(state)) = (cache, &state) {
        let dir = cache.join(PULLED_DIR).join(&state.current);
        let safe = state.current.starts_with("sha256-")
            && state
                .current
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let checked = if !safe {
            Err(format!("`{}` is not a pulled database", state.current))
        } else if state.statement.serial < embedded::SERIAL && !state.downgraded {
            Err(format!(
                "serial {} is older than the built-in database's {}",
                state.statement.serial,
                embedded::SERIAL
            ))
        } else {
            match read_dir(&dir).and_then(|base| load_layers(Some((&dir, &base)), None)) {
                Ok((db, _)) if db.digest == state.statement.db_digest => Ok(dir.clone()),
                Ok((db, _)) => Err(format!(
                    "it holds {}, the signed statement names {}",
                    db.digest, state.statement.db_digest
                )),
                Err(e) => Err(e.to_string()),
            }
        };
        match checked {
            Ok(dir) => chosen = Some(dir),
            Err(why) => {
                refused = Some(format!(
                    "the pulled rule database {} is not used: {why}",
                    dir.display()
                ))
            }
        }
    } else if !pulled_dirs(cache).is_empty() {
        refused = Some(
            "databases pulled without a signed feed record are not used (pull again)".to_string(),
        );
    }
    let (db, more) = match (chosen, &state) {
        (Some(dir), Some(state)) => {
            let base = read_dir(&dir)?;
            let (mut db, more) = load_layers(Some((&dir, &base)), user)?;
            db.serial = state.statement.serial;
            db.downgraded = state.downgraded;
            db.source = crate::model::RulesSource {
                origin: "pulled".into(),
                serial: db.serial,
                key: state.keyid.clone(),
                feed: state.feed.clone(),
                path: Some(dir.display().to_string()),
                user_rules: db.source.user_rules.clone(),
                downgraded: state.downgraded,
                refused: None,
            };
            notices.push(format!(
                "rules: the database pulled into {} ({}, serial {}, dated {})",
                dir.display(),
                db.digest,
                db.serial,
                db.date.as_deref().unwrap_or("undated")
            ));
            (db, more)
        }
        _ => load_layers(None, user)?,
    };
    let mut db = db;
    db.source.refused = refused;
    notices.extend(more);
    Ok((db, notices))
}

/// The pulled database directories in `cache` (complete ones: a pull writes elsewhere first).
fn pulled_dirs(cache: Option<&Path>) -> Vec<PathBuf> {
    let Some(cache) = cache else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(cache.join(PULLED_DIR)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("sha256-"))
        })
        .collect();
    dirs.sort();
    dirs
}

/// [`load`] with the user directory already read (`dir` names it in messages): `diff` reads a
/// rules directory kept in the repository at a revision, through git.
pub fn load_with(user: Option<(&Path, &RuleDir)>) -> Result<(Database, Vec<String>), RulesError> {
    load_layers(None, user)
}

/// Load `base` (a whole database read from a directory: its `components.yaml`, `ledger.yaml`
/// and rules; `None`: the embedded one), then `user` over it.
pub fn load_layers(
    base: Option<(&Path, &RuleDir)>,
    user: Option<(&Path, &RuleDir)>,
) -> Result<(Database, Vec<String>), RulesError> {
    let missing = |dir: &Path, what: &str| {
        RulesError::Invalid(Diagnostic {
            file: dir.display().to_string(),
            line: None,
            message: format!("a whole rule database needs {what}"),
        })
    };
    let (components_file, components_text) = match base {
        Some((dir, b)) => (
            dir.join("components.yaml").display().to_string(),
            b.components
                .as_deref()
                .ok_or_else(|| missing(dir, "components.yaml"))?,
        ),
        None => ("components.yaml".to_string(), embedded::COMPONENTS),
    };
    let base_rules: Vec<(String, &str, Origin)> = match base {
        Some((dir, b)) => {
            if b.files.is_empty() {
                return Err(missing(dir, "at least one rule file"));
            }
            b.files
                .iter()
                .map(|(p, t)| {
                    (
                        p.display().to_string(),
                        t.as_str(),
                        Origin::Pulled(dir.to_path_buf()),
                    )
                })
                .collect()
        }
        None => embedded::RULES
            .iter()
            .map(|(n, t)| (n.to_string(), *t, Origin::Builtin))
            .collect(),
    };
    let base_ledger = match base {
        Some((dir, b)) => Some((
            dir.join(LEDGER_FILE).display().to_string(),
            b.ledger
                .as_deref()
                .ok_or_else(|| missing(dir, LEDGER_FILE))?,
        )),
        None => None,
    };
    let mut registry = parse_registry(&components_file, components_text)?;
    let mut hasher = Sha256::new();
    hasher.update(components_text.as_bytes());
    let (user_dir, user) = (user.map(|u| u.0), user.map(|u| u.1));
    if let (Some(dir), Some(text)) = (user_dir, user.and_then(|u| u.components.as_ref())) {
        registry.layer(parse_registry(
            &dir.join("components.yaml").display().to_string(),
            text,
        )?);
        hasher.update(text.as_bytes());
    }
    let mut rules: Vec<LoadedRule> = Vec::new();
    for (name, text, origin) in base_rules {
        let loaded = parse_one(&name, text, origin, &registry)?;
        push_unique(&mut rules, loaded)?;
    }
    let mut notices = Vec::new();
    for (path, text) in user.iter().flat_map(|u| u.files.iter()) {
        let file = path.display().to_string();
        let loaded = parse_one(&file, text, Origin::User(path.clone()), &registry)?;
        if let Some(pos) = rules
            .iter()
            .position(|r| !matches!(r.origin, Origin::User(_)) && r.rule.id == loaded.rule.id)
        {
            notices.push(format!(
                "rule {} from {file} overrides the built-in rule",
                loaded.rule.id
            ));
            rules.remove(pos);
        }
        push_unique(&mut rules, loaded)?;
    }
    rules.sort_by(|a, b| a.rule.id.cmp(&b.rule.id));
    for r in &rules {
        hasher.update(r.rule.id.as_bytes());
        hasher.update(r.sha256);
    }
    let from_file = match (user_dir, user.as_ref().and_then(|u| u.ledger.as_ref())) {
        (Some(dir), Some(text)) => {
            Some((dir.join(LEDGER_FILE).display().to_string(), text.as_str()))
        }
        _ => base_ledger,
    };
    let ledger = match from_file {
        Some((file, text)) => {
            hasher.update(text.as_bytes());
            let parsed = super::Ledger::parse(&file, text).map_err(|problems| {
                RulesError::Invalid(problems.into_iter().next().unwrap_or_else(|| Diagnostic {
                    file: file.clone(),
                    line: None,
                    message: "invalid release ledger".into(),
                }))
            })?;
            LedgerCell(std::sync::OnceLock::from(parsed))
        }
        None => {
            hasher.update(embedded::LEDGER.as_bytes());
            LedgerCell::default()
        }
    };
    let digest = format!("sha256:{}", hex::encode(hasher.finalize()));
    let date = rules
        .iter()
        .filter_map(|r| r.rule.modified.as_deref()?.get(..10))
        .filter_map(crate::model::Date::parse)
        .max()
        .map(|d| d.to_string());
    let (withdrawn, rules): (Vec<LoadedRule>, Vec<LoadedRule>) =
        rules.into_iter().partition(|r| r.rule.withdrawn.is_some());
    let withdrawn = withdrawn.into_iter().map(|r| r.rule.id).collect();
    Ok((
        Database {
            rules,
            registry,
            digest,
            date,
            serial: embedded::SERIAL,
            downgraded: false,
            source: crate::model::RulesSource {
                user_rules: user_dir.map(|d| d.display().to_string()),
                ..crate::model::RulesSource::builtin(embedded::SERIAL)
            },
            withdrawn,
            ledger,
        },
        notices,
    ))
}

fn push_unique(rules: &mut Vec<LoadedRule>, loaded: LoadedRule) -> Result<(), RulesError> {
    if let Some(other) = rules.iter().find(|r| r.rule.id == loaded.rule.id) {
        return Err(RulesError::Invalid(Diagnostic {
            file: loaded.file.clone(),
            line: None,
            message: format!(
                "duplicate rule id {} (also in {})",
                loaded.rule.id, other.file
            ),
        }));
    }
    rules.push(loaded);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::feed::{Statement, TrustState};

    /// A pulled copy of the embedded database in `cache`, recorded in trust.json under
    /// `serial` (with the digest the statement names, `digest` when given).
    fn pulled(cache: &Path, serial: u64, downgraded: bool, digest: Option<&str>) {
        let dir = cache.join(PULLED_DIR).join("sha256-00");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, text) in embedded::RULES {
            std::fs::write(dir.join(name), text).expect("write");
        }
        std::fs::write(dir.join("components.yaml"), embedded::COMPONENTS).expect("write");
        std::fs::write(dir.join(LEDGER_FILE), embedded::LEDGER).expect("write");
        let read = read_dir(&dir).expect("read");
        let (db, _) = load_layers(Some((&dir, &read)), None).expect("loads");
        let mut statement = Statement::of(&db, serial);
        if let Some(d) = digest {
            statement.db_digest = d.into();
        }
        let state = TrustState {
            current: "sha256-00".into(),
            statement,
            highest: serial,
            highest_rules: Vec::new(),
            downgraded,
            keyid: Some("0123456789abcdef".into()),
            feed: None,
        };
        std::fs::write(
            cache.join(PULLED_DIR).join(TRUST_FILE),
            serde_json::to_vec(&state).expect("json"),
        )
        .expect("write");
    }

    /// Whether the pulled database is used, and the refusal and notices the load gave.
    fn used(cache: &Path) -> (bool, Vec<String>) {
        let (db, notices) = load_in(Some(cache), None).expect("loads");
        let pulled = db
            .rules
            .iter()
            .all(|r| matches!(r.origin, Origin::Pulled(_)));
        // What reports name: the pulled database and its key, or the built-in one and why.
        assert_eq!(db.source.origin, if pulled { "pulled" } else { "built-in" });
        assert_eq!(db.source.serial, db.serial);
        assert_eq!(db.source.key.is_some(), pulled);
        assert_eq!(db.source.refused.is_some(), !pulled);
        (
            pulled,
            db.source.refused.into_iter().chain(notices).collect(),
        )
    }

    #[test]
    fn the_recorded_pull_is_used_only_while_it_is_the_signed_database_and_not_older() {
        let tmp = tempfile::tempdir().expect("tempdir");
        pulled(tmp.path(), embedded::SERIAL + 1, false, None);
        assert!(used(tmp.path()).0, "newer and intact: used");

        // A newer binary's own database is newer than the pull: the built-in one wins.
        pulled(tmp.path(), embedded::SERIAL - 1, false, None);
        let (pulled_used, notices) = used(tmp.path());
        assert!(!pulled_used);
        assert!(
            notices
                .iter()
                .any(|n| n.contains("older than the built-in")),
            "{notices:?}"
        );
        // Unless the user accepted the rollback (loudly, see print_downgrade_warning).
        pulled(tmp.path(), embedded::SERIAL - 1, true, None);
        let (db, _) = load_in(Some(tmp.path()), None).expect("loads");
        assert!(db.downgraded && db.serial == embedded::SERIAL - 1);

        // Files changed in the cache after the pull: not the database the statement names.
        pulled(
            tmp.path(),
            embedded::SERIAL + 1,
            false,
            Some("sha256:other"),
        );
        let (pulled_used, notices) = used(tmp.path());
        assert!(!pulled_used);
        assert!(
            notices
                .iter()
                .any(|n| n.contains("the signed statement names")),
            "{notices:?}"
        );
    }

    #[test]
    fn databases_pulled_without_a_trust_record_are_not_used() {
        let tmp = tempfile::tempdir().expect("tempdir");
        pulled(tmp.path(), embedded::SERIAL + 1, false, None);
        std::fs::remove_file(tmp.path().join(PULLED_DIR).join(TRUST_FILE)).expect("rm");
        let (pulled_used, notices) = used(tmp.path());
        assert!(!pulled_used);
        assert!(
            notices
                .iter()
                .any(|n| n.contains("without a signed feed record")),
            "{notices:?}"
        );
    }
}
