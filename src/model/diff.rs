//! What `pinprobe diff` found ([`Review`]): per (component, rule) how a pin bump changes the
//! verdict ([`Change`]), the pins that moved ([`PinChange`]), and suggested `GIT_TAG`s.
//!
//! A [`Change`] carries a finding's fields in its own order (the JSON schema is stable), with
//! the BASE status beside HEAD's.

use super::{Evidence, EvidenceKind, Location, Severity, Status, Suppression, TargetReport, Tool};
use serde::Serialize;

/// What a bump does to one (component, rule) finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Affected at HEAD, and not decided affected at BASE (not affected, absent or undecided
    /// there: [`Change::base_undecided`] tells).
    Introduced,
    /// Undecided on a side: the bump's effect cannot be told.
    Unknown,
    /// Affected at both.
    Kept,
    /// Affected at BASE, not at HEAD.
    Fixed,
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChangeKind::Introduced => "introduced",
            ChangeKind::Unknown => "unknown",
            ChangeKind::Kept => "kept",
            ChangeKind::Fixed => "fixed",
        })
    }
}

/// One (component, rule) pair whose status is, or was, not `not_affected`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Change {
    pub change: ChangeKind,
    #[schemars(with = "String")]
    pub rule: super::RuleId,
    pub component: String,
    /// The status at HEAD (`not_affected` when the rule no longer applies there).
    pub status: Status,
    /// The status at BASE; absent when the rule did not apply there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_status: Option<Status>,
    /// BASE could not be decided for this finding (unknown there, or BASE pins nothing): an
    /// `introduced` change over it reads "affected; base undecided", and still fails the gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base_undecided: bool,
    pub severity: Severity,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<EvidenceKind>,
    /// HEAD's evidence (BASE's when the finding is gone at HEAD).
    pub evidence: Vec<Evidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<Suppression>,
    /// Whether the component's pin changed between the revisions.
    pub pin_changed: bool,
}

/// How a pin changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinChangeKind {
    Added,
    Removed,
    Changed,
}

/// One side of a pin change.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PinSide {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub commit: Option<super::CommitId>,
    /// Whether the repository is not the component's own (a fork).
    pub fork: bool,
    pub file: String,
    pub line: u32,
}

/// A pin that differs between BASE and HEAD.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PinChange {
    pub component: String,
    pub change: PinChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<PinSide>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<PinSide>,
    pub repo_changed: bool,
    /// `to` a fork, `from` a fork, or absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork: Option<&'static str>,
}

/// Unsuppressed changes by kind, and the suppressed ones.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Counts {
    pub introduced: usize,
    pub fixed: usize,
    pub kept: usize,
    pub unknown: usize,
    pub suppressed: usize,
    /// Ignore entries and rule overrides the change itself adds or edits ([`PolicyEdit`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub policy_edits: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a [`PolicyEdit`] touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PolicyEditKind {
    /// An entry of the tree's `.pinprobe.yaml`.
    IgnoreEntry,
    /// A rule file (or `components.yaml`) of a `--rules` directory kept in the repository.
    RuleOverride,
    /// A `not_affected` statement of a `--vex` document kept in the repository.
    VexStatement,
}

/// Whether the change adds the entry or edits (rewords, widens, extends) one BASE had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    Added,
    Edited,
}

/// A review item: an ignore entry or rule override the change itself adds or edits. In `diff`
/// it never suppresses or replaces anything (BASE's policy and rules are used) unless the
/// workflow allows it (`allowed`); an edit not allowed fails the gate.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PolicyEdit {
    pub kind: PolicyEditKind,
    pub edit: EditKind,
    /// The rule id(s) concerned (for a rule file, the ids it defines; or the file name).
    pub rule: String,
    /// `FILE:LINE` of the ignore entry at HEAD, the rule file's path at HEAD, or
    /// `FILE@REV#statements[N]` of a VEX statement.
    pub at: String,
    /// For an ignore entry or VEX statement: how many findings at HEAD it would suppress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<usize>,
    /// Whether the workflow allowed HEAD's version to apply (`--allow-head-ignores`,
    /// `--allow-head-rules`).
    pub allowed: bool,
}

/// One revision of the review.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Side {
    pub rev: String,
    pub target: String,
}

/// Everything `pinprobe diff` found; every format renders it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Review {
    pub schema: u32,
    pub tool: Tool,
    pub rules_digest: String,
    /// The rule database's date (its latest rule change, `YYYY-MM-DD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_date: Option<String>,
    /// Which rule database that is (built in or pulled, its serial and signing key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_source: Option<super::RulesSource>,
    pub base: Side,
    pub head: Side,
    pub counts: Counts,
    pub pins: Vec<PinChange>,
    pub changes: Vec<Change>,
    /// Ignore entries and rule overrides the change itself adds or edits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_edits: Vec<PolicyEdit>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// Why HEAD as a whole could not be decided (it pins nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// HEAD's full scan, for SARIF.
    #[serde(skip)]
    pub head_report: TargetReport,
    /// The gate the run's exit code comes from (set by the command line).
    #[serde(skip)]
    pub gate: super::GateView,
    /// SARIF: undecided findings at HEAD as `note` results too (`--sarif-unknown`).
    #[serde(skip)]
    pub sarif_unknown: bool,
}

/// A proposed `GIT_TAG`, or why there is none.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Suggestion {
    pub component: String,
    /// The line to edit.
    pub file: String,
    pub line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The commit to pin, when one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `GIT_TAG <sha>`, ready to paste.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_tag: Option<String>,
    /// The branch searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The open findings' rules.
    #[schemars(with = "Vec<String>")]
    pub rules: Vec<super::RuleId>,
    /// Fix commits the suggestion contains.
    pub fixes: Vec<String>,
    /// Fix commits the clone does not have (not taken into account).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
    /// What to know about the suggestion (or why there is none).
    pub note: String,
}
