//! Rule lint: what serde cannot check. Full SHAs, known components, repository URLs, version
//! strings and signatures that parse. Each diagnostic names the file and, where the offending
//! text can be found, the line.

use super::components::Registry;
use super::model::{Event, RangeType, Rule};
use crate::pin::url;

/// One problem in a rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Whether `s` is a full 40-hex SHA-1.
pub fn is_full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// Every problem in `rule` (parsed from `text` in `file`).
pub fn check(file: &str, text: &str, rule: &Rule, registry: &Registry) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut report = |needle: &str, message: String| {
        out.push(Diagnostic {
            file: file.to_string(),
            line: line_of(text, needle),
            message,
        })
    };
    let id_ok = !rule.id.is_empty()
        && rule
            .id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if !id_ok {
        report(
            "id:",
            format!(
                "rule id `{}` must be letters, digits, '-', '_' or '.'",
                rule.id
            ),
        );
    }
    if rule.summary.trim().is_empty() {
        report("summary:", "summary is empty".into());
    }
    if rule.affected.is_empty() {
        report("affected:", "no affected entries".into());
    }
    for affected in &rule.affected {
        let spec = affected.specific();
        for range in &affected.ranges {
            if range.events.is_empty() {
                report("events:", "a range has no events".into());
            }
            if !range
                .events
                .iter()
                .any(|e| matches!(e, Event::Introduced(_)))
            {
                report(
                    "events:",
                    "a range has no `introduced` event (OSV requires one)".into(),
                );
            }
            match range.kind {
                RangeType::Git => {
                    match range.repo.as_deref() {
                        None => report("type: GIT", "a GIT range needs `repo`".into()),
                        Some(repo) if url::canonical(repo).is_none() => {
                            report(repo, format!("`{repo}` is not a repository URL"))
                        }
                        Some(_) => {}
                    }
                    for event in &range.events {
                        let v = event.value();
                        let zero_ok = matches!(event, Event::Introduced(_)) && v == "0";
                        if !zero_ok && !is_full_sha(v) {
                            report(
                                v,
                                format!(
                                    "{} `{v}` is not a full 40-hex commit SHA (short SHAs are ambiguous; write the full one)",
                                    event.name()
                                ),
                            );
                        }
                    }
                    let component = spec.component.clone().or_else(|| {
                        range
                            .repo
                            .as_deref()
                            .and_then(url::canonical)
                            .and_then(|r| registry.identify("", Some(&r)).map(|c| c.name.clone()))
                    });
                    match component {
                        None => report(
                            "type: GIT",
                            "the GIT range's repository is not a known component: set database_specific.component".into(),
                        ),
                        Some(name) if registry.get(&name).is_none() => report(
                            &name,
                            format!("component `{name}` is not in the component registry"),
                        ),
                        Some(_) => {}
                    }
                }
                RangeType::Ecosystem | RangeType::Semver => {
                    for event in &range.events {
                        let v = event.value();
                        if !(v == "0" || crate::rules::version::Version::parse(v).is_some()) {
                            report(v, format!("{} `{v}` is not a version", event.name()));
                        }
                    }
                }
            }
        }
        for pin in &spec.known_affected_pins {
            if !is_full_sha(&pin.commit) {
                report(
                    &pin.commit,
                    format!(
                        "known affected pin `{}` is not a full 40-hex commit SHA",
                        pin.commit
                    ),
                );
            }
        }
    }
    if let Some(signature) = &rule.database_specific.signature
        && let Err(e) = signature.validate()
    {
        report("signature:", format!("signature: {e}"));
    }
    out
}
