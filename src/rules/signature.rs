//! Source signatures: structural patterns over Python source, written as data in a rule and
//! evaluated with tree-sitter on shipped files or on a pinned commit's tree.
//!
//! (Stub: the matcher lands with the signature work.)

use serde::{Deserialize, Serialize};

/// A rule's signature: conditions over named files that together identify the bug's shape.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Signature(pub serde_json::Value);

/// Where the signature reads files from (a view, a commit's tree, a patched tree).
/// Paths are relative to the kernel project's root, e.g. `flash_attn/cute/block_info.py`.
pub trait SourceFiles {
    /// The file's text, `Ok(None)` when it does not exist, `Err` when it could not be read.
    fn read(&self, path: &str) -> Result<Option<String>, String>;
}

/// One place where a condition matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    pub condition: String,
    pub file: String,
    pub line: u32,
}

/// What evaluating a signature found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Every condition holds: the bug's shape is in the source.
    Present { hits: Vec<Hit> },
    /// A condition does not hold, on files that exist and parse.
    Absent { reason: String },
    /// A file is missing, unreadable or does not parse: the signature cannot decide.
    Undecidable { reason: String },
}

/// A signature that cannot be used (bad query, unknown node kind, bad regex).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SignatureError {
    pub message: String,
}

impl Signature {
    /// The files the signature reads.
    pub fn files(&self) -> Vec<String> {
        Vec::new()
    }

    /// Check that the signature is well-formed.
    pub fn validate(&self) -> Result<(), SignatureError> {
        Ok(())
    }

    /// Evaluate the signature over `source`.
    pub fn evaluate(&self, _source: &dyn SourceFiles) -> Outcome {
        Outcome::Undecidable {
            reason: "signature matcher not built yet".into(),
        }
    }
}
