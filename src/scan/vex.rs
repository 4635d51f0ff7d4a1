//! `scan --vex FILE`: an OpenVEX document's `not_affected` statements as suppressions, like the
//! ignore file's entries.
//!
//! A statement suppresses a finding when its vulnerability (`name` or an alias) is the finding's
//! rule and one of its products (`@id` or `identifiers.purl`) is the finding's pin: the same
//! package URL, or the same URL without a version, which OpenVEX reads as every version. Only
//! `not_affected` statements suppress; the finding keeps its status, carries the statement's
//! justification and impact statement as the reason, and leaves the exit code and SARIF.
//! Statements of other statuses are read and ignored. A document that is not OpenVEX (no
//! `@context` naming openvex, a statement without a vulnerability name or products, an unknown
//! status) is an error naming the file.

use crate::model::{Report, Suppression};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A bad `--vex` file.
#[derive(Debug, thiserror::Error)]
pub enum VexError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not an OpenVEX document: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

/// The `not_affected` statements of one document.
#[derive(Debug, Clone)]
pub struct Statements {
    file: String,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// Index in the document's `statements`.
    index: usize,
    names: Vec<String>,
    products: Vec<String>,
    reason: String,
}

#[derive(Deserialize)]
struct RawDocument {
    #[serde(rename = "@context")]
    context: String,
    statements: Vec<RawStatement>,
}

#[derive(Deserialize)]
struct RawStatement {
    vulnerability: RawVulnerability,
    products: Vec<RawProduct>,
    status: RawStatus,
    justification: Option<String>,
    impact_statement: Option<String>,
}

#[derive(Deserialize)]
struct RawVulnerability {
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
}

#[derive(Deserialize)]
struct RawProduct {
    #[serde(rename = "@id")]
    id: Option<String>,
    identifiers: Option<RawIdentifiers>,
}

#[derive(Deserialize)]
struct RawIdentifiers {
    purl: Option<String>,
}

#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum RawStatus {
    NotAffected,
    Affected,
    Fixed,
    UnderInvestigation,
}

/// Largest `--vex` file read (a VEX document is a few kilobytes to a few megabytes).
const MAX_BYTES: u64 = 16 << 20;

/// Read and check `path`.
pub fn load(path: &Path) -> Result<Statements, VexError> {
    let io = |source| VexError::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_BYTES {
        return Err(VexError::Invalid {
            path: path.to_path_buf(),
            message: format!("{len} bytes, over the {MAX_BYTES}-byte limit"),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse(&path.display().to_string(), &text).map_err(|message| VexError::Invalid {
        path: path.to_path_buf(),
        message,
    })
}

/// Parse an OpenVEX document's text; `file` names it in suppressions.
pub fn parse(file: &str, text: &str) -> Result<Statements, String> {
    let doc: RawDocument = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if !doc.context.starts_with("https://openvex.dev/ns") {
        return Err(format!(
            "@context `{}` is not an OpenVEX context",
            doc.context
        ));
    }
    let mut entries = Vec::new();
    for (index, s) in doc.statements.into_iter().enumerate() {
        if s.vulnerability.name.trim().is_empty() {
            return Err(format!("statement {index}: empty vulnerability name"));
        }
        let products: Vec<String> = s
            .products
            .iter()
            .flat_map(|p| {
                p.id.iter()
                    .chain(p.identifiers.as_ref().and_then(|i| i.purl.as_ref()))
            })
            .filter(|p| p.starts_with("pkg:"))
            .cloned()
            .collect();
        if products.is_empty() {
            return Err(format!("statement {index}: no product with a package URL"));
        }
        if s.status != RawStatus::NotAffected {
            continue;
        }
        if s.justification.is_none() && s.impact_statement.is_none() {
            return Err(format!(
                "statement {index}: not_affected without a justification or impact_statement"
            ));
        }
        let reason = [s.justification, s.impact_statement]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ");
        let mut names = vec![s.vulnerability.name];
        names.extend(s.vulnerability.aliases);
        entries.push(Entry {
            index,
            names,
            products,
            reason: format!("OpenVEX not_affected ({reason})"),
        });
    }
    Ok(Statements {
        file: file.to_string(),
        entries,
    })
}

/// Whether a statement's product `stated` names the pin whose purl is `purl`: equal, or equal
/// without its version.
fn names(stated: &str, purl: &str) -> bool {
    let stated = stated.split(['?', '#']).next().unwrap_or(stated);
    stated.eq_ignore_ascii_case(purl)
        || (!stated.contains('@')
            && purl
                .split_once('@')
                .is_some_and(|(base, _)| base.eq_ignore_ascii_case(stated)))
}

impl Statements {
    /// Suppress the findings the statements cover (those not suppressed already). Returns a
    /// warning per statement that matched no finding.
    pub fn apply(&self, report: &mut Report) -> Vec<String> {
        let mut used = vec![false; self.entries.len()];
        for target in &mut report.targets {
            for finding in &mut target.findings {
                if finding.suppressed.is_some() {
                    continue;
                }
                let Some(purl) = target
                    .components
                    .iter()
                    .find(|p| p.component == finding.component)
                    .map(|p| p.purl())
                else {
                    continue;
                };
                let hit = self.entries.iter().position(|e| {
                    e.names
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(&finding.rule))
                        && e.products.iter().any(|p| names(p, &purl))
                });
                if let Some(i) = hit {
                    used[i] = true;
                    let e = &self.entries[i];
                    finding.suppressed = Some(Suppression {
                        reason: e.reason.clone(),
                        expires: "never".to_string(),
                        entry: format!("{}#statements[{}]", self.file, e.index),
                    });
                }
            }
        }
        self.entries
            .iter()
            .zip(used)
            .filter(|(_, used)| !used)
            .map(|(e, _)| {
                format!(
                    "{}#statements[{}]: not_affected statement for {} matches no finding",
                    self.file, e.index, e.names[0]
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_with_or_without_a_version() {
        let p = "pkg:github/vllm-project/flash-attention@506341a143fcabd4bb79052a7605ada727d6b3f5";
        assert!(names(p, p));
        assert!(names("pkg:github/vllm-project/flash-attention", p));
        assert!(!names("pkg:github/vllm-project/flash-attention@6d11b3c", p));
        assert!(!names("pkg:github/vllm-project/flash", p));
        assert!(!names(
            "pkg:github/vllm-project/flash-attention",
            "pkg:github/vllm-project/flash-attention-2@x"
        ));
    }

    #[test]
    fn documents_are_checked() {
        let ok = r#"{"@context":"https://openvex.dev/ns/v0.2.0","statements":[
            {"vulnerability":{"name":"R"},"products":[{"@id":"pkg:github/a/b"}],"status":"not_affected","justification":"vulnerable_code_not_present"},
            {"vulnerability":{"name":"S"},"products":[{"@id":"pkg:github/a/b"}],"status":"affected"}]}"#;
        assert_eq!(parse("f", ok).expect("parses").entries.len(), 1);
        for bad in [
            r#"{"@context":"https://example.org","statements":[]}"#,
            r#"{"@context":"https://openvex.dev/ns/v0.2.0","statements":[{"vulnerability":{"name":"R"},"products":[],"status":"not_affected","justification":"x"}]}"#,
            r#"{"@context":"https://openvex.dev/ns/v0.2.0","statements":[{"vulnerability":{"name":"R"},"products":[{"@id":"pkg:x/y"}],"status":"fine"}]}"#,
            r#"{"@context":"https://openvex.dev/ns/v0.2.0","statements":[{"vulnerability":{"name":"R"},"products":[{"@id":"pkg:x/y"}],"status":"not_affected"}]}"#,
            "[]",
        ] {
            assert!(parse("f", bad).is_err(), "{bad}");
        }
    }
}
