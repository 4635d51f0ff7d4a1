//! What a change does to its own review: ignore entries (`.pinprobe.yaml`), rule overrides
//! (a `--rules` directory kept in the repository) and VEX statements (a `--vex` document kept
//! in the repository) that HEAD adds or edits.
//!
//! `diff` takes all three from BASE, so a pull request cannot suppress or weaken the findings
//! it introduces: every entry, rule file or statement HEAD adds or edits is listed as a
//! [`PolicyEdit`], counted, and fails the gate, unless the workflow (not the pull request)
//! allows HEAD's version with `--allow-head-ignores` / `--allow-head-rules` /
//! `--allow-head-vex`.

use crate::model::{EditKind, PolicyEdit, PolicyEditKind, TargetReport};
use crate::rules::load::{LEDGER_FILE, RuleDir};
use crate::scan::policy::{self, Policy};
use crate::scan::vex::{self, Statements};
use crate::view::TargetError;
use std::path::{Path, PathBuf};

/// The ignore entries of `head` that `base` does not hold word for word, with the findings of
/// `head_report` each would suppress.
pub fn ignore_edits(
    base: Option<&Policy>,
    head: Option<&Policy>,
    head_report: &TargetReport,
    allowed: bool,
) -> Vec<PolicyEdit> {
    let Some(head) = head else {
        return Vec::new();
    };
    let base_entries = base.map(|p| p.entries.as_slice()).unwrap_or_default();
    head.entries
        .iter()
        .filter(|e| !base_entries.iter().any(|b| b.same_as(e)))
        .map(|e| PolicyEdit {
            kind: PolicyEditKind::IgnoreEntry,
            edit: if base_entries
                .iter()
                .any(|b| b.rule.eq_ignore_ascii_case(&e.rule))
            {
                EditKind::Edited
            } else {
                EditKind::Added
            },
            rule: e.rule.to_string(),
            at: format!("{}:{}", head.file, e.line),
            matches: Some(policy::count_matches(e, head_report)),
            allowed,
        })
        .collect()
}

/// The `not_affected` statements of `head` that `base` does not hold word for word, with the
/// findings of `head_report` each would suppress.
pub fn vex_edits(
    base: Option<&Statements>,
    head: Option<&Statements>,
    head_report: &TargetReport,
    allowed: bool,
) -> Vec<PolicyEdit> {
    let Some(head) = head else {
        return Vec::new();
    };
    head.new_since(base, head_report)
        .into_iter()
        .map(|s| PolicyEdit {
            kind: PolicyEditKind::VexStatement,
            edit: if s.edited {
                EditKind::Edited
            } else {
                EditKind::Added
            },
            rule: s.vulnerability,
            at: s.at,
            matches: Some(s.matches),
            allowed,
        })
        .collect()
}

/// Where a `--vex` file lies inside the tree at `repo`: its path relative to the tree's root
/// (the file itself need not exist in the work tree, its folder must), or `None` when it lies
/// outside (then the workflow, not the change, controls it).
pub fn file_in_tree(repo: &Path, file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = rules_in_tree(repo, parent)?;
    Some(if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    })
}

/// The OpenVEX document `rel` of the tree at `repo` as of `rev` (`None` when that revision has
/// no such file), named `FILE@REV` in suppressions and review items.
pub fn vex_at(repo: &Path, rev: &str, rel: &str) -> Result<Option<Statements>, TargetError> {
    let view = crate::view::open(repo, Some(rev))?;
    let shown = format!("{}@{rev}", repo.join(rel).display());
    let Some(bytes) = view.read(rel)? else {
        return Ok(None);
    };
    let malformed = |message: String| TargetError::Malformed {
        path: PathBuf::from(&shown),
        message,
    };
    if bytes.len() as u64 > vex::MAX_BYTES {
        return Err(malformed(format!(
            "{} bytes, over the {}-byte limit",
            bytes.len(),
            vex::MAX_BYTES
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        malformed(format!(
            "not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    vex::parse(&shown, &text)
        .map(Some)
        .map_err(|m| malformed(format!("not an OpenVEX document: {m}")))
}

/// The rule files of `head` that `base` does not hold byte for byte (`components.yaml` and the
/// release ledger too).
pub fn rule_edits(base: &RuleDir, head: &RuleDir, allowed: bool) -> Vec<PolicyEdit> {
    let name = |p: &Path| p.file_name().map(|n| n.to_os_string());
    let mut out = Vec::new();
    for (path, text) in &head.files {
        let before = base.files.iter().find(|(b, _)| name(b) == name(path));
        if before.is_some_and(|(_, t)| t == text) {
            continue;
        }
        out.push(PolicyEdit {
            kind: PolicyEditKind::RuleOverride,
            edit: if before.is_some() {
                EditKind::Edited
            } else {
                EditKind::Added
            },
            rule: rule_ids(text).unwrap_or_else(|| path.display().to_string()),
            at: path.display().to_string(),
            matches: None,
            allowed,
        });
    }
    for (name, before, after) in [
        ("components.yaml", &base.components, &head.components),
        (LEDGER_FILE, &base.ledger, &head.ledger),
    ] {
        if let Some(text) = after
            && before.as_ref() != Some(text)
        {
            out.push(PolicyEdit {
                kind: PolicyEditKind::RuleOverride,
                edit: if before.is_some() {
                    EditKind::Edited
                } else {
                    EditKind::Added
                },
                rule: name.into(),
                at: name.into(),
                matches: None,
                allowed,
            });
        }
    }
    out
}

/// The `id:` values of a rule file, comma-separated (a plain look, for the review item only).
fn rule_ids(text: &str) -> Option<String> {
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|v| v.trim().trim_matches(['"', '\'']))
        .filter(|v| !v.is_empty())
        .collect();
    (!ids.is_empty()).then(|| ids.join(", "))
}

/// Where `rules` lies inside the tree at `repo`: its path relative to the tree's root, or
/// `None` when it lies outside (then the workflow, not the change, controls it).
pub fn rules_in_tree(repo: &Path, rules: &Path) -> Option<String> {
    let repo = repo.canonicalize().ok()?;
    let rules = rules.canonicalize().ok()?;
    let rel = rules.strip_prefix(&repo).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// The rule directory `rel` of the tree at `repo` as of `rev`, read through git (empty when
/// the revision has no such directory). Paths are shown as `DIR@REV/NAME`.
pub fn rule_dir_at(repo: &Path, rev: &str, rel: &str) -> Result<RuleDir, TargetError> {
    let view = crate::view::open(repo, Some(rev))?;
    let mut dir = RuleDir::default();
    let shown = repo.join(rel);
    for child in view.children(rel)? {
        if child.ends_with('/') || !(child.ends_with(".yaml") || child.ends_with(".yml")) {
            continue;
        }
        let path = if rel.is_empty() {
            child.clone()
        } else {
            format!("{rel}/{child}")
        };
        let Some(bytes) = view.read(&path)? else {
            continue;
        };
        let text = String::from_utf8(bytes).map_err(|e| TargetError::Malformed {
            path: PathBuf::from(format!("{}@{rev}/{child}", shown.display())),
            message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        })?;
        if child == "components.yaml" {
            dir.components = Some(text);
        } else if child == LEDGER_FILE {
            dir.ledger = Some(text);
        } else {
            dir.files.push((
                PathBuf::from(format!("{}@{rev}/{child}", shown.display())),
                text,
            ));
        }
    }
    Ok(dir)
}
