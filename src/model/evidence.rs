//! What a verdict rests on: each piece of [`Evidence`], of one [`EvidenceKind`], with the status
//! it supports on its own.

use super::Status;
use serde::{Deserialize, Serialize};

/// Kinds of evidence, strongest first (the derive order is the strength order).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    /// Which copy Python imports: code that runs when Python starts (a `.pth` import line,
    /// `sitecustomize.py`) could import another copy than the one judged. Only ever `unknown`:
    /// it blocks a clean answer, never an affected one.
    ImportPath,
    Signature,
    Ancestry,
    KnownPin,
    /// A verdict a clone decided for this release's pin when the ledger was built
    /// (`rules/ledger.yaml`, with its provenance).
    Recorded,
    VersionRange,
    /// A `requires` condition on another component's pin (a gate, not a strength).
    Requirement,
    /// What another CMake configuration pins (a pin that can take several values): the status
    /// over the set (a gate, not a strength).
    Configuration,
    /// What RECORD says of the files the verdict read (informational: never decides).
    Integrity,
    /// Shipped files matched against a fingerprint index.
    Fingerprint,
    Hygiene,
}

/// One piece of evidence and the status it supports on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub status: Status,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Where a finding points (the `GIT_TAG` line, or the shipped file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Location {
    pub file: String,
    pub line: u32,
}
