//! OpenVEX 0.2.0: one statement per (rule, product), telling downstream scanners which of
//! pinprobe's findings apply to a pinned kernel commit and which do not.
//!
//! Status from the finding: `affected`, `not_affected` (with a justification from the deciding
//! evidence: `vulnerable_code_not_present` when the signature, ancestry, a known pin or a version
//! range rules the bug out; `vulnerable_code_not_in_execute_path` when a `requires` condition on
//! another component does), and `under_investigation` for `unknown`. A product that appears in
//! several targets with different statuses gets the least reassuring one (affected, then
//! under_investigation, then not_affected). A suppressed finding keeps its status; the ignore
//! entry's reason goes into `status_notes`.

use super::exchange::{self, Product};
use super::headline;
use crate::model::{EvidenceKind, Finding, Report, Status};
use crate::rules::Database;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;

pub const CONTEXT: &str = "https://openvex.dev/ns/v0.2.0";

fn rank(status: Status) -> u8 {
    match status {
        Status::Affected => 2,
        Status::Unknown => 1,
        Status::NotAffected => 0,
    }
}

pub fn render(report: &Report, db: &Database, out: &mut dyn Write) -> std::io::Result<()> {
    // (rule, purl) -> the finding that speaks for it, and its product.
    let mut chosen: Vec<(&Finding, Product)> = Vec::new();
    for (target, finding) in exchange::vulnerability_findings(report, db) {
        let product = exchange::product_of(target, finding);
        match chosen
            .iter_mut()
            .find(|(f, p)| f.rule == finding.rule && p.purl == product.purl)
        {
            Some(slot) if rank(finding.status) > rank(slot.0.status) => slot.0 = finding,
            Some(_) => {}
            None => chosen.push((finding, product)),
        }
    }
    let statements: Vec<Value> = chosen.iter().map(|(f, p)| statement(f, p, db)).collect();
    // A stable document id: the digest of what it says.
    let mut hash = Sha256::new();
    hash.update(report.rules_digest.as_bytes());
    for s in &statements {
        hash.update(s.to_string().as_bytes());
    }
    let id = hex::encode(hash.finalize());
    let doc = json!({
        "@context": CONTEXT,
        "@id": format!("https://openvex.dev/docs/pinprobe/{}", &id[..32]),
        "author": "pinprobe",
        "role": "Document Creator",
        "timestamp": exchange::timestamp(),
        "version": 1,
        "tooling": format!(
            "{} {} (rules {}{}{})",
            report.tool.name,
            report.tool.version,
            report.rules_digest,
            super::of_date(report.rules_date.as_deref()),
            super::source_note(report.rules_source.as_ref())
        ),
        "statements": statements,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn statement(f: &Finding, p: &Product, db: &Database) -> Value {
    let rule = db.get(&f.rule).map(|r| &r.rule);
    let mut vuln = Map::new();
    vuln.insert("name".into(), json!(f.rule));
    if let Some(rule) = rule.filter(|r| !r.aliases.is_empty()) {
        vuln.insert("aliases".into(), json!(rule.aliases));
    }
    vuln.insert("description".into(), json!(f.summary));
    let mut product = Map::new();
    product.insert("@id".into(), json!(p.purl));
    product.insert("identifiers".into(), json!({ "purl": p.purl }));
    let mut s = Map::new();
    s.insert("vulnerability".into(), Value::Object(vuln));
    s.insert("products".into(), json!([Value::Object(product)]));
    let why = headline(f);
    let mut notes = Vec::new();
    match f.status {
        Status::Affected => {
            s.insert("status".into(), json!("affected"));
            let workaround = rule
                .map(|r| r.database_specific.workaround.trim())
                .filter(|w| !w.is_empty());
            let action = match workaround {
                Some(w) => format!("Move the pin past the rule's fix commit. {w}"),
                None => "Move the pin past the rule's fix commit.".to_string(),
            };
            s.insert("action_statement".into(), json!(action));
            notes.push(why);
        }
        Status::NotAffected => {
            s.insert("status".into(), json!("not_affected"));
            let justification = match f.decided_by {
                Some(EvidenceKind::Requirement) => "vulnerable_code_not_in_execute_path",
                _ => "vulnerable_code_not_present",
            };
            s.insert("justification".into(), json!(justification));
            s.insert("impact_statement".into(), json!(why));
        }
        Status::Unknown => {
            s.insert("status".into(), json!("under_investigation"));
            notes.push(format!("undecided: {why}"));
        }
    }
    if let Some(sup) = &f.suppressed {
        notes.push(format!(
            "suppressed until {} by {}: {}",
            sup.expires, sup.entry, sup.reason
        ));
    }
    notes.retain(|n| !n.is_empty());
    if !notes.is_empty() {
        s.insert("status_notes".into(), json!(notes.join("; ")));
    }
    Value::Object(s)
}
