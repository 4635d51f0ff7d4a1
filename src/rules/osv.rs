//! OSV export (`pinprobe rules export --osv DIR`): one OSV JSON document per rule, in the shape
//! of OSV schema 1.6 (https://ossf.github.io/osv-schema/), so other tools can consume the database.
//!
//! Mapping: `id`, `modified`, `published`, `aliases`, `summary`, `details`, `references` as
//! written. Each `affected[]` keeps its `ranges` (`type`, `repo`, `events`) and `versions`; an
//! entry whose ecosystem is `GIT` (a repository, not a registry package) carries no `package`
//! object, as the schema allows for GIT ranges, and names the repository in its range and the
//! component in `database_specific`. pinprobe's own fields (component, known pins, notes) go to
//! `affected[].database_specific`; the rule's (severity, kind, arch, symptoms, workaround,
//! requires, signature, tests) to the top-level `database_specific`.

use super::model::{Event, Rule};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The OSV schema version the export follows.
pub const SCHEMA_VERSION: &str = "1.6.0";

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{file}: rule {id} has no `modified` time, which OSV requires")]
    NoModified { file: String, id: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn event_json(e: &Event) -> Value {
    let mut m = Map::new();
    m.insert(e.name().to_string(), Value::String(e.value().to_string()));
    Value::Object(m)
}

/// One rule as an OSV document. `file` names the rule file in errors.
pub fn to_osv(rule: &Rule, file: &str) -> Result<Value, ExportError> {
    let Some(modified) = rule.modified.clone() else {
        return Err(ExportError::NoModified {
            file: file.to_string(),
            id: rule.id.to_string(),
        });
    };
    let mut doc = Map::new();
    doc.insert(
        "schema_version".into(),
        json!(rule.schema_version.as_deref().unwrap_or(SCHEMA_VERSION)),
    );
    doc.insert("id".into(), json!(rule.id));
    doc.insert("modified".into(), json!(modified));
    if let Some(p) = &rule.published {
        doc.insert("published".into(), json!(p));
    }
    if let Some(w) = &rule.withdrawn {
        doc.insert("withdrawn".into(), json!(w));
    }
    if !rule.aliases.is_empty() {
        doc.insert("aliases".into(), json!(rule.aliases));
    }
    doc.insert("summary".into(), json!(rule.summary));
    if !rule.details.is_empty() {
        doc.insert("details".into(), json!(rule.details));
    }
    let affected: Vec<Value> = rule
        .affected
        .iter()
        .map(|a| {
            let mut entry = Map::new();
            if !a.package.ecosystem.eq_ignore_ascii_case("GIT") {
                entry.insert(
                    "package".into(),
                    json!({"ecosystem": a.package.ecosystem, "name": a.package.name}),
                );
            }
            let ranges: Vec<Value> = a
                .ranges
                .iter()
                .map(|r| {
                    let mut range = Map::new();
                    range.insert(
                        "type".into(),
                        serde_json::to_value(r.kind).unwrap_or(Value::Null),
                    );
                    if let Some(repo) = &r.repo {
                        range.insert("repo".into(), json!(repo));
                    }
                    range.insert(
                        "events".into(),
                        Value::Array(r.events.iter().map(event_json).collect()),
                    );
                    Value::Object(range)
                })
                .collect();
            if !ranges.is_empty() {
                entry.insert("ranges".into(), Value::Array(ranges));
            }
            if !a.versions.is_empty() {
                entry.insert("versions".into(), json!(a.versions));
            }
            let mut specific =
                serde_json::to_value(a.specific()).unwrap_or_else(|_| Value::Object(Map::new()));
            if let Value::Object(m) = &mut specific {
                m.insert("package".into(), json!(a.package));
            }
            entry.insert("database_specific".into(), specific);
            Value::Object(entry)
        })
        .collect();
    doc.insert("affected".into(), Value::Array(affected));
    if !rule.references.is_empty() {
        doc.insert(
            "references".into(),
            Value::Array(
                rule.references
                    .iter()
                    .map(|r| json!({"type": r.kind, "url": r.url}))
                    .collect(),
            ),
        );
    }
    let mut specific =
        serde_json::to_value(&rule.database_specific).unwrap_or_else(|_| Value::Object(Map::new()));
    if let Value::Object(m) = &mut specific {
        m.insert("source".into(), json!("pinprobe"));
    }
    doc.insert("database_specific".into(), specific);
    Ok(Value::Object(doc))
}

/// Write `<id>.json` for every rule into `dir` (created if needed); returns the paths written.
pub fn export(db: &super::Database, dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let io = |path: &Path, source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::new();
    for loaded in &db.rules {
        let doc = to_osv(&loaded.rule, &loaded.file)?;
        let path = dir.join(format!("{}.json", loaded.rule.id));
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        written.push(path);
    }
    Ok(written)
}
