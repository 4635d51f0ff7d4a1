//! The plain data every stage shares: a [`Pin`], the [`Finding`]s rules give on it with their
//! [`Evidence`], the [`TargetReport`] and [`Report`] of a scan, the [`Review`] of a pin bump.
//!
//! This module imports nothing else from the crate: finders and evaluators produce these types,
//! policies and renderers read them.

mod date;
mod diff;
mod evidence;
mod finding;
pub mod gate;
mod pin;
mod report;
mod rule_id;
pub mod schema;
mod status;
pub mod text;
pub mod verbose;

pub use date::Date;
pub use diff::{
    Change, ChangeKind, Counts, EditKind, PinChange, PinChangeKind, PinSide, PolicyEdit,
    PolicyEditKind, Review, Side, Suggestion,
};
pub use evidence::{Evidence, EvidenceKind, Location};
pub use finding::{Finding, Suppression};
pub use gate::{GateVerdict, GateView, Tally};
pub use pin::{
    CommitId, Fingerprint, FoundBy, PackagePin, Pin, Possible, is_full_sha, purl_encode,
};
pub use report::{
    CmakeRoot, ImageInfo, LayerInfo, Report, RulesSource, SCHEMA, Shard, TargetKind, TargetReport,
    Tool, VersionControl,
};
pub use rule_id::{FindingKind, RuleId};
pub use status::{Severity, Status};
