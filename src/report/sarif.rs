//! SARIF 2.1.0 for code scanning: one result per affected finding (and, with
//! `--sarif-unknown`, per undecided one), pointing at the `GIT_TAG` line (or the shipped file),
//! with a stable partial fingerprint.
//!
//! What GitHub code scanning needs, and how this meets it (Microsoft's SARIF Multitool with
//! GitHub's rules, `validate --rule-kind "Gh;Sarif"`, reports nothing on it: tests/cli/sarif.rs):
//! - every result's `ruleId` is in `tool.driver.rules`, and every rule (the built-in pin-hygiene
//!   and drift checks included) has `shortDescription`, `fullDescription`, `help` (text and
//!   Markdown) and `properties.security-severity` from its severity (critical 9.5, high 8.0,
//!   medium 5.5, low 2.0), so code scanning ranks the alerts; the rule database's rules are
//!   tagged `security`;
//! - `tool.driver.informationUri` is `$PINPROBE_INFORMATION_URI` (the Action sets it to its
//!   repository), else the `repository` or `homepage` of the Cargo.toml pinprobe was built from;
//! - `locations` carry a relative `artifactLocation.uri` (relative to the scanned tree,
//!   `%SRCROOT%`) and a `region.startLine`;
//! - `partialFingerprints` hash the rule, component and file (not the pinned commit, so an alert
//!   follows its pin across bumps), and the target when the run has several; findings that
//!   still share one (two pins of one component in one file) are told apart by their order;
//! - `versionControlProvenance` names the repository, commit and branch of every source tree
//!   in git;
//! - `level` is `error` / `warning` / `note` by severity; undecided findings are not alerts
//!   unless asked for (`note`). Suppressed findings (`.pinprobe.yaml`) and `not_affected` ones
//!   are never results.
//!
//! A run holds at most [`MAX_RESULTS`] results (GitHub's limit per run): above it the most
//! severe are kept and `properties.truncated` says how many were dropped.

use super::headline;
use crate::model::Severity;
use crate::model::gate::is_hygiene;
use crate::model::{Finding, GateView, Status};
use crate::model::{Report, VersionControl};
use crate::rules::Database;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;

const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// GitHub code scanning accepts at most this many results per run.
pub const MAX_RESULTS: usize = 25_000;

fn level(status: Status, severity: Severity) -> &'static str {
    match (status, severity) {
        (Status::Unknown, _) => "note",
        (_, Severity::High | Severity::Critical) => "error",
        (_, Severity::Medium) => "warning",
        _ => "note",
    }
}

/// GitHub's `security-severity` (a CVSS-like score: 9.0 and above critical, 7.0 high, 4.0
/// medium, above 0 low) for a severity.
pub(crate) fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "2.0",
    }
}

/// The tool's documentation: `$PINPROBE_INFORMATION_URI`, else Cargo.toml's `repository`, else
/// its `homepage`; `None` when none is an absolute http(s) URI.
pub(crate) fn information_uri() -> Option<String> {
    let candidates = [
        std::env::var("PINPROBE_INFORMATION_URI").ok(),
        Some(env!("CARGO_PKG_REPOSITORY").to_string()),
        Some(env!("CARGO_PKG_HOMEPAGE").to_string()),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|u| u.trim().to_string())
        .find(|u| {
            (u.starts_with("https://") || u.starts_with("http://"))
                && !u.bytes().any(|b| b.is_ascii_control() || b == b' ')
        })
}

/// The description and the help of a built-in check that is not in the rule database.
fn builtin_text(id: &str, summary: &str) -> (String, String) {
    let (full, help) = match id {
        "hygiene/fork-pin" => (
            "The pin fetches the component from a repository that is not the component's own (a personal fork?). Known-bug rules follow the upstream history; a fork's commits can carry anything.",
            "Pin the component's own repository, or review the fork and the commit it pins before shipping.",
        ),
        "hygiene/movable-ref" => (
            "GIT_TAG names a tag or a branch. Tags can be moved and branches move on every push, so what a build fetches can change without any change to the tree.",
            "Replace the tag or branch with the full 40-hex commit SHA it points to today.",
        ),
        "hygiene/short-sha" => (
            "GIT_TAG is an abbreviated commit SHA. An abbreviation can become ambiguous as the repository grows, and then the fetch fails or picks another object.",
            "Pin the full 40-hex commit SHA.",
        ),
        "hygiene/unreachable-pin" => (
            "The pinned commit is not reachable from the repository's default branch: an unmerged pull request's head, a WIP branch, or a squash-merged pull request's head. Such commits can disappear when the branch is deleted.",
            "Pin the commit on the default branch that holds the same change (the squash merge), or a released tag's commit.",
        ),
        "drift/pin-vs-artifact" => (
            "The artifact's shipped files fingerprint to commits other than the pin the source tree declares: it was not built from that pin, or its files were patched after the fetch.",
            "Rebuild the artifact from the declared pin, or scan the artifact itself and judge what it ships.",
        ),
        "drift/ledger-vs-artifact" => (
            "The artifact's shipped files are not those of the pin its vLLM release records in the release ledger: it is not the release as built.",
            "Obtain the artifact from the release itself, or scan what it ships and judge that.",
        ),
        _ => ("", ""),
    };
    if full.is_empty() {
        let summary = summary.trim_end_matches('.');
        (
            format!("{summary}."),
            format!(
                "{summary}. A check built into pinprobe: the finding's evidence names the pin and what to change."
            ),
        )
    } else {
        (full.to_string(), help.to_string())
    }
}

/// One finding to emit, with extra result properties (a diff's `change`).
pub(crate) struct Item<'a> {
    pub finding: &'a Finding,
    pub properties: Vec<(&'static str, String)>,
    /// The target, when the run holds several (it then enters the fingerprint).
    pub target: Option<&'a str>,
}

/// What a SARIF run is written from, besides its items.
pub(crate) struct Run<'a> {
    pub version: &'a str,
    pub digest: &'a str,
    pub db: &'a Database,
    /// Undecided findings as `note` results (`--sarif-unknown`).
    pub include_unknown: bool,
    pub provenance: Vec<&'a VersionControl>,
}

pub fn render(report: &Report, db: &Database, out: &mut dyn Write) -> std::io::Result<()> {
    let several = report.targets.len() > 1;
    let items: Vec<Item> = report
        .targets
        .iter()
        .flat_map(|t| {
            t.findings.iter().map(move |finding| Item {
                finding,
                properties: Vec::new(),
                target: several.then_some(t.target.as_str()),
            })
        })
        .collect();
    let mut provenance: Vec<&VersionControl> = Vec::new();
    for p in report.targets.iter().filter_map(|t| t.provenance.as_ref()) {
        if !provenance.contains(&p) {
            provenance.push(p);
        }
    }
    let run = Run {
        version: &report.tool.version,
        digest: &report.rules_digest,
        db,
        include_unknown: report.sarif_unknown,
        provenance,
    };
    write(&items, &run, out)
}

fn rule_json(id: &str, items: &[&Item], db: &Database) -> Value {
    match db.get(id) {
        Some(loaded) => {
            let r = &loaded.rule;
            let severity = r.database_specific.severity;
            let details = r.details.trim();
            let full = if details.is_empty() {
                r.summary.clone()
            } else {
                details.to_string()
            };
            let help = format!(
                "{full}\n\nSymptoms: {}\n\nWorkaround: {}",
                r.database_specific.symptoms.trim(),
                r.database_specific.workaround.trim()
            );
            let markdown = format!(
                "{full}\n\n**Symptoms:** {}\n\n**Workaround:** {}",
                r.database_specific.symptoms.trim(),
                r.database_specific.workaround.trim()
            );
            let mut rule = json!({
                "id": r.id,
                "name": rule_name(&r.id),
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": full},
                "help": {"text": help, "markdown": markdown},
                "defaultConfiguration": {"level": level(Status::Affected, severity)},
                "properties": {
                    "tags": ["security", "kernel-pin", r.database_specific.kind.clone()],
                    "severity": severity.to_string(),
                    "security-severity": security_severity(severity),
                    "precision": "high"
                }
            });
            if let Some(uri) = r.references.first().map(|x| x.url.clone()) {
                rule["helpUri"] = json!(uri);
            }
            rule
        }
        None => {
            let first = items.iter().find(|i| i.finding.rule == id);
            let summary = first.map(|i| i.finding.summary.clone()).unwrap_or_default();
            let severity = items
                .iter()
                .filter(|i| i.finding.rule == id)
                .map(|i| i.finding.severity)
                .max()
                .unwrap_or(Severity::Low);
            let (full, help) = builtin_text(id, &summary);
            let kind = if is_hygiene(&crate::model::RuleId::parse(id)) {
                "pin-hygiene"
            } else {
                "drift"
            };
            json!({
                "id": id,
                "name": rule_name(id),
                "shortDescription": {"text": summary},
                "fullDescription": {"text": full},
                "help": {"text": help, "markdown": help},
                "defaultConfiguration": {"level": level(Status::Affected, severity)},
                "properties": {
                    "tags": ["kernel-pin", kind],
                    "severity": severity.to_string(),
                    "security-severity": security_severity(severity),
                    "precision": "high"
                }
            })
        }
    }
}

/// A rule's `name`: its id in PascalCase words (`hygiene/movable-ref` -> `HygieneMovableRef`).
fn rule_name(id: &str) -> String {
    id.split(['-', '/', '.', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

/// Write one SARIF run holding `items` (those affected, or unknown when asked for, and not
/// suppressed).
pub(crate) fn write(items: &[Item], run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let mut items: Vec<&Item> = items
        .iter()
        .filter(|i| match i.finding.status {
            Status::Affected => true,
            Status::Unknown => run.include_unknown,
            Status::NotAffected => false,
        })
        .filter(|i| i.finding.suppressed.is_none())
        .collect();
    let total = items.len();
    if total > MAX_RESULTS {
        // Most severe first, affected before unknown; the sort is stable.
        items.sort_by_key(|i| {
            (
                std::cmp::Reverse(i.finding.status == Status::Affected),
                std::cmp::Reverse(i.finding.severity),
            )
        });
        items.truncate(MAX_RESULTS);
    }
    let mut rule_ids: Vec<&str> = items.iter().map(|i| i.finding.rule.as_str()).collect();
    rule_ids.sort();
    rule_ids.dedup();
    let rules: Vec<Value> = rule_ids
        .iter()
        .map(|id| rule_json(id, &items, run.db))
        .collect();
    let mut results = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for item in &items {
        let f = item.finding;
        let location = f.location.as_ref();
        let file = location.map(|l| l.file.clone()).unwrap_or_default();
        let mut hasher = Sha256::new();
        hasher.update(format!("{}\0{}\0{}", f.rule, f.component, file));
        if let Some(target) = item.target {
            hasher.update(format!("\0{target}"));
        }
        let mut fingerprint = hex::encode(&hasher.finalize()[..16]);
        let n = seen.entry(fingerprint.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            fingerprint = format!("{fingerprint}:{n}");
        }
        let mut properties = json!({"status": f.status, "component": f.component});
        if let Some(target) = item.target {
            properties["target"] = json!(target);
        }
        for (k, v) in &item.properties {
            properties[*k] = json!(v);
        }
        let mut result = json!({
            "ruleId": f.rule,
            "level": level(f.status, f.severity),
            "message": {"text": format!("{} [{}] {}: {}", f.component, GateView::label(f), f.summary, headline(f))},
            "partialFingerprints": {"pinprobe/v1": fingerprint},
            "properties": properties
        });
        if let Some(index) = rule_ids.iter().position(|r| *r == f.rule) {
            result["ruleIndex"] = json!(index);
        }
        if let Some(loc) = location {
            result["locations"] = json!([{
                "physicalLocation": {
                    "artifactLocation": {"uri": loc.file.trim_start_matches('/'), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": loc.line.max(1)}
                }
            }]);
        }
        results.push(result);
    }
    let mut run_properties = json!({"rulesDigest": run.digest, "rulesSource": run.db.source});
    if let Some(date) = &run.db.date {
        run_properties["rulesDate"] = json!(date);
    }
    if total > MAX_RESULTS {
        run_properties["truncated"] = json!(total - MAX_RESULTS);
    }
    let mut driver = json!({
        "name": "pinprobe",
        "version": run.version,
        "semanticVersion": run.version,
        "rules": rules
    });
    if let Some(uri) = information_uri() {
        driver["informationUri"] = json!(uri);
    }
    let mut sarif_run = json!({
        "tool": {"driver": driver},
        "results": results,
        "properties": run_properties
    });
    if !run.provenance.is_empty() {
        let provenance: Vec<Value> = run
            .provenance
            .iter()
            .map(|p| {
                let mut v = json!({
                    "repositoryUri": p.repository_uri,
                    "revisionId": p.revision_id,
                    "mappedTo": {"uriBaseId": "%SRCROOT%"}
                });
                if let Some(branch) = &p.branch {
                    v["branch"] = json!(branch);
                }
                v
            })
            .collect();
        sarif_run["versionControlProvenance"] = json!(provenance);
    }
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [sarif_run]
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TargetReport;
    use crate::model::{Finding, Location};

    #[test]
    fn results_are_capped_at_githubs_limit_most_severe_first() {
        let (db, _) = crate::rules::load(None).expect("rules load");
        let finding = |i: usize, severity, status| Finding {
            rule: "hygiene/short-sha".into(),
            status,
            severity,
            summary: "s".into(),
            component: format!("c{i}"),
            decided_by: None,
            evidence: Vec::new(),
            location: Some(Location {
                file: "cmake/x.cmake".into(),
                line: 3,
            }),
            suppressed: None,
        };
        let mut target = TargetReport::new("t".into(), crate::model::TargetKind::SourceTree);
        target.findings = (0..MAX_RESULTS)
            .map(|i| finding(i, Severity::Low, Status::Unknown))
            .collect();
        target
            .findings
            .push(finding(MAX_RESULTS, Severity::High, Status::Affected));
        let mut report = Report::new(db.digest.clone(), vec![target]);
        report.sarif_unknown = true;
        let mut out = Vec::new();
        render(&report, &db, &mut out).expect("renders");
        let doc: Value = serde_json::from_slice(&out).expect("json");
        let results = doc["runs"][0]["results"].as_array().expect("results");
        assert_eq!(results.len(), MAX_RESULTS);
        assert_eq!(doc["runs"][0]["properties"]["truncated"], 1);
        assert_eq!(
            results[0]["level"], "error",
            "the most severe is kept first"
        );
    }
}
