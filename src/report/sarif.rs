//! SARIF 2.1.0 for code scanning: one result per affected or unknown finding, pointing at the
//! `GIT_TAG` line (or the shipped file), with a stable partial fingerprint.
//!
//! What GitHub code scanning needs, and how this meets it: every result has a `ruleId` whose rule
//! is in `tool.driver.rules` with `help` text; `locations` carry a relative
//! `artifactLocation.uri` (relative to the scanned tree, `%SRCROOT%`) and `region.startLine`;
//! `partialFingerprints` hash the rule, component and file (not the pinned commit, so an alert
//! follows its pin across bumps); `level` is `error` / `warning` / `note` by severity (`note` for
//! `unknown`). Suppressed findings (`.pinprobe.yaml`) and `not_affected` ones are not results.
//! A run holds at most [`MAX_RESULTS`] results (GitHub's limit per run): above it the most
//! severe are kept and `properties.truncated` says how many were dropped.

use super::headline;
use crate::model::Report;
use crate::model::Severity;
use crate::model::{Finding, Status};
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

/// One finding to emit, with extra result properties (a diff's `change`).
pub(crate) struct Item<'a> {
    pub finding: &'a Finding,
    pub properties: Vec<(&'static str, String)>,
}

pub fn render(report: &Report, db: &Database, out: &mut dyn Write) -> std::io::Result<()> {
    let items: Vec<Item> = report
        .findings()
        .map(|finding| Item {
            finding,
            properties: Vec::new(),
        })
        .collect();
    write(&items, &report.tool.version, &report.rules_digest, db, out)
}

/// Write one SARIF run holding `items` (those affected or unknown and not suppressed).
pub(crate) fn write(
    items: &[Item],
    version: &str,
    digest: &str,
    db: &Database,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut items: Vec<&Item> = items
        .iter()
        .filter(|i| i.finding.status != Status::NotAffected && i.finding.suppressed.is_none())
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
        .map(|id| match db.get(id) {
            Some(loaded) => {
                let r = &loaded.rule;
                let help = format!(
                    "{}\n\nSymptoms: {}\n\nWorkaround: {}",
                    r.details.trim(),
                    r.database_specific.symptoms,
                    r.database_specific.workaround
                );
                json!({
                    "id": r.id,
                    "name": r.id.replace(['-', '/', '.'], "_"),
                    "shortDescription": {"text": r.summary},
                    "fullDescription": {"text": r.details.trim()},
                    "help": {"text": help},
                    "helpUri": r.references.first().map(|x| x.url.clone()),
                    "defaultConfiguration": {"level": level(Status::Affected, r.database_specific.severity)},
                    "properties": {"tags": ["kernel-pin", r.database_specific.kind.clone()], "severity": r.database_specific.severity.to_string()}
                })
            }
            None => {
                let summary = items
                    .iter()
                    .find(|i| i.finding.rule == *id)
                    .map(|i| i.finding.summary.clone())
                    .unwrap_or_default();
                json!({
                    "id": id,
                    "name": id.replace(['-', '/', '.'], "_"),
                    "shortDescription": {"text": summary},
                    "help": {"text": format!("{summary}.\n\nA pin-hygiene check built into pinprobe: see the finding's evidence for the pin and the fix.")},
                    "properties": {"tags": ["kernel-pin", "hygiene"]}
                })
            }
        })
        .collect();
    let mut results = Vec::new();
    for item in &items {
        let f = item.finding;
        let location = f.location.as_ref();
        let file = location.map(|l| l.file.clone()).unwrap_or_default();
        let mut hasher = Sha256::new();
        hasher.update(format!("{}\0{}\0{}", f.rule, f.component, file));
        let fingerprint = hex::encode(&hasher.finalize()[..16]);
        let mut properties = json!({"status": f.status, "component": f.component});
        for (k, v) in &item.properties {
            properties[*k] = json!(v);
        }
        let mut result = json!({
            "ruleId": f.rule,
            "level": level(f.status, f.severity),
            "message": {"text": format!("{} [{}] {}: {}", f.component, f.status, f.summary, headline(f))},
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
    let mut run_properties = json!({"rulesDigest": digest});
    if let Some(date) = &db.date {
        run_properties["rulesDate"] = json!(date);
    }
    if total > MAX_RESULTS {
        run_properties["truncated"] = json!(total - MAX_RESULTS);
    }
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "pinprobe",
                "version": version,
                "semanticVersion": version,
                "rules": rules
            }},
            "results": results,
            "properties": run_properties
        }]
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
        let mut target = TargetReport::new("t".into(), "source-tree");
        target.findings = (0..MAX_RESULTS)
            .map(|i| finding(i, Severity::Low, Status::Unknown))
            .collect();
        target
            .findings
            .push(finding(MAX_RESULTS, Severity::High, Status::Affected));
        let report = Report::new(db.digest.clone(), vec![target]);
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
