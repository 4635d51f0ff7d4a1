//! pinprobe audits the exact commit of every kernel project a vLLM build pins against a database
//! of known kernel bugs, and verifies on the GPU that split-KV decode latency scales.
//!
//! The pipeline (DESIGN.md):
//!
//! ```text
//! target --open--> View --pin::find--> pins --resolve--> commits
//!        --rules::evaluate--> findings --report--> table | json | sarif | markdown, exit code
//! ```
//!
//! - [`target`]: input kinds, each a read-only [`target::View`]; [`image`] for container images.
//! - [`pin`]: finders (CMake declarations) and repository URL canonicalisation.
//! - [`artifact`]: what a wheel or environment ships; [`index`]: shipped files back to commits.
//! - [`resolve`]: a clone through gix (references, ancestry, patch-id).
//! - [`rules`]: the rule database, its signatures and its evaluation.
//! - [`scan`]: the pipeline for one target; [`review`]: two revisions compared (`diff`).
//! - [`policy`]: the ignore file; [`report`]: every output format.
//! - [`verify`]: the GPU verifier.
//! - [`exit`]: the exit codes.

pub mod artifact;
pub mod cli;
pub mod exit;
pub mod image;
pub mod index;
pub mod pin;
pub mod policy;
pub mod report;
pub mod resolve;
pub mod review;
pub mod rules;
pub mod scan;
pub mod target;
pub mod verify;
