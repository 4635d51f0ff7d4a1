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

use crate::model::{Finding, Pin, Report, Suppression, TargetReport};
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
pub const MAX_BYTES: u64 = 16 << 20;

/// Read and check `path` (a regular file, at most [`MAX_BYTES`]).
pub fn load(path: &Path) -> Result<Statements, VexError> {
    let text = crate::input::read_text(path, MAX_BYTES).map_err(|source| VexError::Io {
        path: path.to_path_buf(),
        source,
    })?;
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
    // Qualifiers and subpath aside: a statement about a package covers the paths in it (a copy
    // shipped inside vLLM is `pkg:pypi/vllm@VERSION#PATH`).
    let stated = stated.split(['?', '#']).next().unwrap_or(stated);
    let purl = purl.split(['?', '#']).next().unwrap_or(purl);
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
        let mut targets: Vec<&mut TargetReport> = report.targets.iter_mut().collect();
        self.apply_targets(&mut targets)
    }

    /// [`Statements::apply`] over some targets (both sides of a review).
    pub fn apply_targets(&self, targets: &mut [&mut TargetReport]) -> Vec<String> {
        let mut used = vec![false; self.entries.len()];
        for target in targets.iter_mut() {
            let target = &mut **target;
            for finding in &mut target.findings {
                if finding.suppressed.is_some() {
                    continue;
                }
                let Some(i) = self
                    .entries
                    .iter()
                    .position(|e| e.covers(finding, &target.components))
                else {
                    continue;
                };
                used[i] = true;
                let e = &self.entries[i];
                finding.suppressed = Some(Suppression {
                    reason: e.reason.clone(),
                    expires: "never".to_string(),
                    entry: self.entry_name(e),
                });
            }
        }
        self.entries
            .iter()
            .zip(used)
            .filter(|(_, used)| !used)
            .map(|(e, _)| {
                format!(
                    "{}: not_affected statement for {} matches no finding",
                    self.entry_name(e),
                    e.names[0]
                )
            })
            .collect()
    }

    /// The statements of `self` that `base` does not hold word for word (same vulnerability
    /// names, products and reason), each with whether `base` had a statement for the same
    /// vulnerability (an edit) and how many unsuppressed findings of `report` it would
    /// suppress.
    pub fn new_since(&self, base: Option<&Statements>, report: &TargetReport) -> Vec<NewStatement> {
        let base_entries = base.map(|b| b.entries.as_slice()).unwrap_or_default();
        self.entries
            .iter()
            .filter(|e| !base_entries.iter().any(|b| b.same_as(e)))
            .map(|e| NewStatement {
                vulnerability: e.names[0].clone(),
                at: self.entry_name(e),
                edited: base_entries.iter().any(|b| {
                    b.names
                        .iter()
                        .any(|n| e.names.iter().any(|m| m.eq_ignore_ascii_case(n)))
                }),
                matches: report
                    .findings
                    .iter()
                    .filter(|f| f.suppressed.is_none() && e.covers(f, &report.components))
                    .count(),
            })
            .collect()
    }

    fn entry_name(&self, e: &Entry) -> String {
        format!("{}#statements[{}]", self.file, e.index)
    }
}

/// A `not_affected` statement a change adds or edits (see [`Statements::new_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewStatement {
    pub vulnerability: String,
    /// `FILE#statements[N]` in the newer document.
    pub at: String,
    /// The older document had a statement for the same vulnerability.
    pub edited: bool,
    /// Findings it would suppress.
    pub matches: usize,
}

impl Entry {
    /// Whether this statement names `finding`'s rule and the pin it was found on.
    fn covers(&self, finding: &Finding, components: &[Pin]) -> bool {
        let Some(purl) = components
            .iter()
            .find(|p| p.component == finding.component)
            .map(|p| p.purl())
        else {
            return false;
        };
        self.names
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&finding.rule))
            && self.products.iter().any(|p| names(p, &purl))
    }

    fn same_as(&self, other: &Entry) -> bool {
        self.names == other.names && self.products == other.products && self.reason == other.reason
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
        // A statement about vLLM covers a copy shipped inside it.
        let copy = "pkg:pypi/vllm@0.30.0#vllm/third_party/tml_fa4";
        assert!(names("pkg:pypi/vllm@0.30.0", copy));
        assert!(names("pkg:pypi/vllm", copy));
        assert!(!names("pkg:pypi/vllm@0.31.0", copy));
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
