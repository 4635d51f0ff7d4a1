//! SARIF 2.1.0 for code scanning: one result per affected or unknown finding, pointing at the
//! `GIT_TAG` line (or the shipped file), with a stable partial fingerprint.

use super::{Report, headline};
use crate::rules::Database;
use crate::rules::Severity;
use crate::rules::evaluate::Status;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;

const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(status: Status, severity: Severity) -> &'static str {
    match (status, severity) {
        (Status::Unknown, _) => "note",
        (_, Severity::High | Severity::Critical) => "error",
        (_, Severity::Medium) => "warning",
        _ => "note",
    }
}

pub fn render(report: &Report, db: &Database, out: &mut dyn Write) -> std::io::Result<()> {
    let mut rule_ids: Vec<&str> = report.findings().map(|f| f.rule.as_str()).collect();
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
                    "properties": {"tags": ["kernel-pin", r.database_specific.kind.clone()], "severity": r.database_specific.severity.to_string()}
                })
            }
            None => json!({
                "id": id,
                "shortDescription": {"text": report.findings().find(|f| f.rule == *id).map(|f| f.summary.clone()).unwrap_or_default()},
                "help": {"text": "A pin-hygiene check built into pinprobe."}
            }),
        })
        .collect();
    let mut results = Vec::new();
    for target in &report.targets {
        for f in target
            .findings
            .iter()
            .filter(|f| f.status != Status::NotAffected)
        {
            let location = f.location.as_ref();
            let file = location.map(|l| l.file.clone()).unwrap_or_default();
            let mut hasher = Sha256::new();
            hasher.update(format!("{}\0{}\0{}", f.rule, f.component, file));
            let fingerprint = hex::encode(&hasher.finalize()[..16]);
            let mut result = json!({
                "ruleId": f.rule,
                "level": level(f.status, f.severity),
                "message": {"text": format!("{} [{}] {}: {}", f.component, f.status, f.summary, headline(f))},
                "partialFingerprints": {"pinprobe/v1": fingerprint},
                "properties": {"status": f.status, "component": f.component}
            });
            if let Some(loc) = location {
                result["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": {"uri": loc.file},
                        "region": {"startLine": loc.line.max(1)}
                    }
                }]);
            }
            results.push(result);
        }
    }
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "pinprobe",
                "version": report.tool.version,
                "semanticVersion": report.tool.version,
                "rules": rules
            }},
            "results": results,
            "properties": {"rulesDigest": report.rules_digest}
        }]
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
