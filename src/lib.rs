//! pinprobe audits the exact commit of every kernel project a vLLM build pins against a database
//! of known kernel bugs, and verifies on the GPU that split-KV decode latency scales.
//!
//! The pipeline reads top to bottom, and so do the modules: each imports only those listed
//! below it (`tests/cli/architecture.rs` keeps it so).
//!
//! ```text
//! target --open--> View --pin::find--> pins --resolve--> commits
//!        --rules::evaluate--> findings --scan::policy--> Report --report::render--> output
//!                                                              --exit--> exit code
//! ```
//!
//! - [`cli`]: arguments only; each subcommand calls one orchestrator and [`exit`].
//! - [`exit`]: the one place outcomes (scan, diff, verify, rules) become exit codes.
//! - [`verify`]: the GPU verifier (its model in `verify::report`, its renderers beside it).
//! - [`report`]: renderers (table, JSON, SARIF, markdown) of scans and reviews; read [`model`].
//! - [`diff`]: `pinprobe diff`, two revisions scanned and compared, fix suggestions.
//! - [`scan`]: one target of any kind through the pipeline (it orchestrates; [`judge`] decides);
//!   the ignore policy.
//! - [`judge`]: every status decision (value sets, known pins elsewhere, drift, the ledger,
//!   hygiene, artifacts), each asking the one lattice in `rules::evaluate`.
//! - [`rules`]: the rule database, signatures, evaluation of one rule on one pin, OSV export.
//! - [`pin`]: what a target pins: CMake declarations, shipped copies, fingerprints, URLs.
//! - [`resolve`]: clones through gix: references, ancestry, patch-id, patched trees.
//! - [`target`]: every input kind opened as a read-only [`view::View`], and which kind a
//!   target string names ([`view::classify`]); container images in [`view::image`].
//! - [`cache`]: the content-addressed cache (checked entries, atomic writes, LRU bound).
//! - [`model`]: the plain data every stage shares.
//! - [`input`]: the one guarded way to open a file pinprobe is pointed at.

pub mod cache;
pub mod cli;
pub mod diff;
pub mod exit;
pub mod input;
pub mod judge;
pub mod model;
pub mod pin;
pub mod report;
pub mod resolve;
pub mod rules;
pub mod scan;
pub mod verify;
pub mod view;

pub use exit::Exit;
pub use model::{
    Change, ChangeKind, Evidence, EvidenceKind, Finding, Fingerprint, ImageInfo, LayerInfo,
    Location, Pin, Report, Review, Severity, Status, Suppression, TargetReport,
};
pub use resolve::{Clones, Repo};
pub use rules::{Database, Rule};
pub use scan::Options as ScanOptions;
pub use view::{TargetError, TargetInput, View};
