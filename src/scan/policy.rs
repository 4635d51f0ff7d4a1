//! The ignore policy: `.pinprobe.yaml`, read from the scanned tree's root (or `--ignore FILE`),
//! whose entries suppress findings for a stated reason until an expiry date.
//!
//! ```yaml
//! ignore:
//!   - rule: PINPROBE-2026-0001        # required: a rule id (or a hygiene/drift check)
//!     component: flash-attention      # optional scope: the component name
//!     pin: 506341a143fc               # optional scope: the pinned commit (a prefix of >= 7 hex)
//!     path: cmake/external_projects/  # optional scope: the finding's file, or a folder of it
//!     reason: "not built for SM90 here; tracked in #123"   # required, non-empty
//!     expires: 2026-12-31             # required: YYYY-MM-DD, the last day it suppresses
//! ```
//!
//! The same file may hold run settings, which the CLI merges under its own flags (a flag wins):
//!
//! ```yaml
//! fail_on: high                       # --fail-on
//! fail_on_unknown: never              # --fail-on-unknown
//! repositories:                       # --repo NAME=PATH (a relative PATH is from this file's folder)
//!   flash-attention: ../flash-attention
//! mirrors:                            # --mirror FROM=TO (scan)
//!   https://github.com/: https://git.internal/github/
//! offline: true                       # --offline (scan)
//! formats: [table, json=pinprobe.json, sarif=pinprobe.sarif]   # --format, when none is given
//! ```
//!
//! Every key is checked here for its shape (unknown keys are errors naming the file and line);
//! the values the CLI owns (severities, format names) are checked there, with the same line.
//!
//! [`apply`] is the one place a policy touches findings, after evaluation, for `scan` and
//! `diff` alike: a matched finding keeps its status and gains [`Suppression`]; renderers show
//! it as suppressed, the exit code and SARIF results leave it out. An expired entry suppresses
//! nothing and is warned about; so is an entry that matched nothing.

use crate::model::TargetReport;
use crate::model::{Date, Finding, RuleId, Suppression};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// The file name looked for at the root of a scanned tree.
pub const FILE_NAME: &str = ".pinprobe.yaml";

/// Why a policy file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        path: String,
        line: Option<usize>,
        message: String,
    },
}

/// One validated ignore entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The id as written (trimmed); matched without regard to case.
    pub rule: RuleId,
    pub component: Option<String>,
    pub pin: Option<String>,
    pub path: Option<String>,
    pub reason: String,
    pub expires: Date,
    /// The line of the entry in its file.
    pub line: usize,
}

/// A loaded ignore file.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from, as shown in messages.
    pub file: String,
    pub entries: Vec<Entry>,
    /// The run settings beside the ignore list.
    pub settings: Settings,
}

/// A setting's value and the line it sits on (for errors the CLI raises about the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub line: usize,
}

/// The run settings a policy file may hold; every one is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// A severity name or `never`, as `--fail-on` takes it.
    pub fail_on: Option<Setting<String>>,
    pub fail_on_unknown: Option<Setting<String>>,
    /// Component name -> clone path, as written (the CLI resolves it against the file's folder).
    pub repositories: Vec<Setting<(String, String)>>,
    /// URL prefix FROM -> TO.
    pub mirrors: Vec<Setting<(String, String)>>,
    pub offline: Option<bool>,
    /// `NAME[=FILE]`, as `--format` takes it.
    pub formats: Vec<Setting<String>>,
}

impl Settings {
    /// Whether the file sets anything besides its ignore list.
    pub fn is_empty(&self) -> bool {
        *self == Settings::default()
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    ignore: Vec<Spanned<RawEntry>>,
    #[serde(default)]
    fail_on: Option<Spanned<String>>,
    #[serde(default)]
    fail_on_unknown: Option<Spanned<String>>,
    #[serde(default)]
    repositories: std::collections::BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    mirrors: std::collections::BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    offline: Option<bool>,
    #[serde(default)]
    formats: Vec<Spanned<String>>,
}

fn setting<T>(spanned: Spanned<T>) -> Setting<T> {
    Setting {
        line: spanned.referenced.line() as usize,
        value: spanned.value,
    }
}

/// A parse error as `message` with its line, without the parser's source snippet.
fn parse_error(e: &serde_saphyr::Error) -> (Option<usize>, String) {
    let line = e.location().map(|l| l.line() as usize).filter(|l| *l > 0);
    let text = e.without_snippet().to_string().replace('\n', " ");
    // "error: line 2 column 1: unknown field ..." -> "unknown field ..."
    let message = match text.strip_prefix("error: line ") {
        Some(rest) => rest
            .split_once(": ")
            .map(|(_, m)| m.to_string())
            .unwrap_or(text.clone()),
        None => text.clone(),
    };
    // The line is said once, before the message.
    let message = match message.rsplit_once(" at line ") {
        Some((m, rest)) if rest.starts_with(|c: char| c.is_ascii_digit()) => m.to_string(),
        _ => message,
    };
    (line, message)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    rule: String,
    #[serde(default)]
    component: Option<String>,
    #[serde(default)]
    pin: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    expires: Option<String>,
}

impl Policy {
    /// Parse a policy's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Policy, PolicyError> {
        let invalid = |line: Option<usize>, message: String| PolicyError::Invalid {
            path: file.to_string(),
            line,
            message,
        };
        let raw: RawFile = if text.trim().is_empty() {
            RawFile::default()
        } else {
            serde_saphyr::from_str(text).map_err(|e| {
                let (line, message) = parse_error(&e);
                invalid(line, message)
            })?
        };
        let pairs =
            |key: &str, map: std::collections::BTreeMap<String, Spanned<String>>, what: &str| {
                map.into_iter()
                    .map(|(name, spanned)| {
                        let s = setting(spanned);
                        if name.trim().is_empty() || s.value.trim().is_empty() {
                            return Err(invalid(
                                Some(s.line).filter(|l| *l > 0),
                                format!("{key}: each entry needs {what}"),
                            ));
                        }
                        Ok(Setting {
                            value: (name, s.value),
                            line: s.line,
                        })
                    })
                    .collect::<Result<Vec<_>, PolicyError>>()
            };
        let settings = Settings {
            fail_on: raw.fail_on.map(setting),
            fail_on_unknown: raw.fail_on_unknown.map(setting),
            repositories: pairs(
                "repositories",
                raw.repositories,
                "a component name and a clone path",
            )?,
            mirrors: pairs("mirrors", raw.mirrors, "a URL prefix and its replacement")?,
            offline: raw.offline,
            formats: raw.formats.into_iter().map(setting).collect(),
        };
        let mut entries = Vec::new();
        for spanned in raw.ignore {
            let line = spanned.referenced.line() as usize;
            let e = spanned.value;
            let at = Some(line).filter(|l| *l > 0);
            let rule = e.rule.trim().to_string();
            if rule.is_empty() {
                return Err(invalid(at, "ignore entry: `rule` is empty".into()));
            }
            let reason = e.reason.map(|r| r.trim().to_string()).unwrap_or_default();
            if reason.is_empty() {
                return Err(invalid(
                    at,
                    format!(
                        "ignore entry for {rule}: `reason` is required (why is it safe to ignore?)"
                    ),
                ));
            }
            let expires = match e.expires.as_deref().map(str::trim) {
                None | Some("") => {
                    return Err(invalid(
                        at,
                        format!("ignore entry for {rule}: `expires` (YYYY-MM-DD) is required"),
                    ));
                }
                Some(s) => Date::parse(s).ok_or_else(|| {
                    invalid(
                        at,
                        format!("ignore entry for {rule}: expires `{s}` is not a YYYY-MM-DD date"),
                    )
                })?,
            };
            if let Some(pin) = &e.pin
                && !(pin.len() >= 7
                    && pin.len() <= 40
                    && pin.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                return Err(invalid(
                    at,
                    format!(
                        "ignore entry for {rule}: pin `{pin}` is not a commit SHA (7 to 40 hex digits)"
                    ),
                ));
            }
            entries.push(Entry {
                rule: RuleId::parse(&rule),
                component: e.component,
                pin: e.pin.map(|p| p.to_ascii_lowercase()),
                path: e.path.map(|p| p.trim_start_matches("./").to_string()),
                reason,
                expires,
                line,
            });
        }
        Ok(Policy {
            file: file.to_string(),
            entries,
            settings,
        })
    }

    /// Read a policy file from disk.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let shown = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::MAX_TEXT).map_err(|source| {
            PolicyError::Io {
                path: shown.clone(),
                source,
            }
        })?;
        Policy::parse(&shown, &text)
    }
}

/// The policy at the root of a source tree (at `rev`, read through git, when given), if the
/// tree has one.
pub fn from_tree(path: &Path, rev: Option<&str>) -> Result<Option<Policy>, PolicyError> {
    let shown = match rev {
        Some(rev) => format!("{}@{rev}", path.join(FILE_NAME).display()),
        None => path.join(FILE_NAME).display().to_string(),
    };
    let io = |message: String| PolicyError::Invalid {
        path: shown.clone(),
        line: None,
        message,
    };
    let view = crate::view::open(path, rev).map_err(|e| io(e.to_string()))?;
    let Some(bytes) = view.read(FILE_NAME).map_err(|e| io(e.to_string()))? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|_| io("not UTF-8".into()))?;
    Policy::parse(&shown, &text).map(Some)
}

/// Where the policy for a run comes from.
#[derive(Debug, Clone, Default)]
pub enum Source {
    /// `.pinprobe.yaml` at the root of each source tree (at the revision scanned), if present.
    #[default]
    TreeRoot,
    /// `--ignore FILE` for every target.
    File(PathBuf),
}

/// What applying a policy left to say.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Expired and unused entries, one line each.
    pub warnings: Vec<String>,
}

/// How many findings of `target` `entry` matches (expired or not).
pub fn count_matches(entry: &Entry, target: &TargetReport) -> usize {
    target
        .findings
        .iter()
        .filter(|f| matches(entry, f, target))
        .count()
}

impl Entry {
    /// Whether two entries say the same thing (their lines aside).
    pub fn same_as(&self, other: &Entry) -> bool {
        self.rule.eq_ignore_ascii_case(&other.rule)
            && self.component == other.component
            && self.pin == other.pin
            && self.path == other.path
            && self.reason == other.reason
            && self.expires == other.expires
    }
}

/// Whether `entry` matches finding `f` of `target`.
fn matches(entry: &Entry, f: &Finding, target: &TargetReport) -> bool {
    if !entry.rule.eq_ignore_ascii_case(&f.rule) {
        return false;
    }
    if let Some(c) = &entry.component
        && c != &f.component
    {
        return false;
    }
    if let Some(pin) = &entry.pin {
        let pinned = target
            .components
            .iter()
            .filter(|p| p.component == f.component)
            .filter_map(|p| p.commit.as_deref().or(p.reference.as_deref()))
            .any(|c| c.to_ascii_lowercase().starts_with(pin.as_str()));
        if !pinned {
            return false;
        }
    }
    if let Some(path) = &entry.path {
        let Some(file) = f.location.as_ref().map(|l| l.file.as_str()) else {
            return false;
        };
        let dir = path.trim_end_matches('/');
        if !(file == path || file.starts_with(&format!("{dir}/"))) {
            return false;
        }
    }
    true
}

/// Apply `policy` to the findings of `targets` as of `today`: the one place findings are
/// suppressed. Returns the warnings (expired entries, entries that matched nothing); with
/// `warn_unused` false, unused entries are not reported (a diff's base side).
pub fn apply(
    policy: &Policy,
    targets: &mut [&mut TargetReport],
    today: Date,
    warn_unused: bool,
) -> Outcome {
    let mut used = vec![false; policy.entries.len()];
    let mut outcome = Outcome::default();
    for target in targets.iter_mut() {
        let target: &mut TargetReport = target;
        let mut marks = Vec::new();
        for (i, f) in target.findings.iter().enumerate() {
            for (k, entry) in policy.entries.iter().enumerate() {
                if !matches(entry, f, target) {
                    continue;
                }
                used[k] = true;
                if entry.expires < today {
                    continue;
                }
                marks.push((i, k));
                break;
            }
        }
        for (i, k) in marks {
            let entry = &policy.entries[k];
            if let Some(f) = target.findings.get_mut(i) {
                f.suppressed = Some(Suppression {
                    reason: entry.reason.clone(),
                    expires: entry.expires.to_string(),
                    entry: format!("{}:{}", policy.file, entry.line),
                });
            }
        }
    }
    for (k, entry) in policy.entries.iter().enumerate() {
        let at = format!("{}:{}", policy.file, entry.line);
        if entry.expires < today {
            outcome.warnings.push(format!(
                "{at}: the ignore entry for {} expired on {}: it no longer suppresses anything",
                entry.rule, entry.expires
            ));
        } else if warn_unused && !used[k] {
            outcome.warnings.push(format!(
                "{at}: the ignore entry for {} matches no finding: remove it",
                entry.rule
            ));
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_reason_names_the_line() {
        let text = "ignore:\n  - rule: R1\n    reason: ok\n    expires: 2030-01-01\n  - rule: R2\n    expires: 2030-01-01\n";
        let err = Policy::parse("p.yaml", text).expect_err("no reason");
        let msg = err.to_string();
        assert!(msg.starts_with("p.yaml:5: "), "{msg}");
        assert!(msg.contains("`reason` is required"), "{msg}");
    }

    #[test]
    fn unknown_fields_and_bad_dates_are_errors() {
        for text in [
            "ignore:\n  - rule: R\n    reason: r\n    expires: 2030-01-01\n    scope: x\n",
            "ignores: []\n",
            "ignore:\n  - rule: R\n    reason: r\n    expires: 31/12/2030\n",
            "ignore:\n  - rule: R\n    reason: r\n",
            "ignore:\n  - rule: R\n    reason: r\n    expires: 2030-01-01\n    pin: v1.0\n",
            "ignore:\n  - rule: R\n    reason: \"  \"\n    expires: 2030-01-01\n",
        ] {
            let err = Policy::parse("p.yaml", text).expect_err(text);
            assert!(err.to_string().starts_with("p.yaml"), "{err}");
        }
        assert!(Policy::parse("p.yaml", "").is_ok_and(|p| p.entries.is_empty()));
    }

    #[test]
    fn settings_keep_their_lines_and_unknown_keys_name_theirs() {
        let text = "ignore: []\nfail_on: high\nfail_on_unknown: never\nrepositories:\n  flash-attention: ../fa\nmirrors:\n  https://github.com/: http://m/\noffline: true\nformats:\n  - table\n  - json=r.json\n";
        let p = Policy::parse("p.yaml", text).expect("valid");
        let s = &p.settings;
        assert_eq!(
            s.fail_on,
            Some(Setting {
                value: "high".into(),
                line: 2
            })
        );
        assert_eq!(s.fail_on_unknown.as_ref().map(|s| s.line), Some(3));
        assert_eq!(
            s.repositories,
            [Setting {
                value: ("flash-attention".into(), "../fa".into()),
                line: 5
            }]
        );
        assert_eq!(s.mirrors[0].value.1, "http://m/");
        assert_eq!(s.offline, Some(true));
        let formats: Vec<(&str, usize)> = s
            .formats
            .iter()
            .map(|f| (f.value.as_str(), f.line))
            .collect();
        assert_eq!(formats, [("table", 10), ("json=r.json", 11)]);

        for (text, line) in [
            ("ignore: []\nfail_onn: high\n", 2),
            ("offline: maybe\n", 1),
            ("repositories:\n  flash-attention: \"\"\n", 2),
            ("formats: json\n", 1),
        ] {
            let err = Policy::parse("p.yaml", text).expect_err(text).to_string();
            assert!(
                err.starts_with(&format!("p.yaml:{line}: ")),
                "{text:?}: {err}"
            );
            assert!(!err.contains("-->"), "no source snippet: {err}");
        }
        let err = Policy::parse("p.yaml", "fail_onn: high\n").expect_err("unknown");
        assert!(err.to_string().contains("fail_onn"), "{err}");
        assert!(!err.to_string().contains("column"), "{err}");
        assert!(Policy::parse("p.yaml", "ignore: []\n").is_ok_and(|p| p.settings.is_empty()));
    }
}
