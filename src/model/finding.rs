//! A rule's verdict on one component ([`Finding`]), and what the ignore policy attaches to it.

use super::{Evidence, EvidenceKind, Location, RuleId, Severity, Status};
use serde::{Deserialize, Serialize};

/// A rule's verdict on one component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    // The rule's id and what the finding is about (a rule, pin hygiene, drift); a comment, not
    // a doc comment, so the JSON schema stays as it was.
    #[schemars(with = "String")]
    pub rule: RuleId,
    pub status: Status,
    pub severity: Severity,
    pub summary: String,
    pub component: String,
    /// The evidence kind that decided the status; absent when nothing decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<EvidenceKind>,
    pub evidence: Vec<Evidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// Set by the ignore policy (`.pinprobe.yaml`): the status stays, the exit code and SARIF
    /// results leave the finding out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<Suppression>,
}

/// What a suppressed finding carries (JSON `suppressed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Suppression {
    pub reason: String,
    pub expires: String,
    /// The entry that matched: `FILE:LINE`.
    pub entry: String,
}
