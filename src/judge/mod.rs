//! The judge: every status decision of a scan, between the rule database ([`crate::rules`]) and
//! the scan pipeline ([`crate::scan`]), which only orchestrates and never sets a status itself.
//! Each decision here asks the one lattice in [`crate::rules::evaluate`] (`combine` and its
//! companions `over_values`, `on_its_own`, `distrusted`, `absent`) instead of deciding by hand,
//! so "never clean when unsure" holds in one place.
//!
//! - [`source`]: a source tree's pins, each rule on each value ([`Judge`]).
//! - [`values`]: one rule over every value a pin can take.
//! - [`elsewhere`]: a commit some rule lists under another component's name.
//! - [`artifact`]: a shipped copy's verdicts, with what RECORD says of the files read.
//! - [`ledger`]: the release ledger's pins and recorded verdicts for a target's vLLM release.
//! - [`hygiene`]: fork pins, short SHAs, movable references, unreachable commits.
//! - [`drift`]: a build's components against the tree it was declared from.

pub mod artifact;
pub mod drift;
pub mod elsewhere;
pub mod hygiene;
pub mod ledger;
pub mod source;
pub mod values;

pub use source::{Judge, JudgeError, Judged};

use crate::model::{Evidence, EvidenceKind, Finding, Location, Status};
use crate::rules::evaluate;
use crate::rules::model::Rule;

/// The evidence a failed fetch of a pin's history adds to a finding that stayed undecided:
/// ancestry that could not be told, and why (`cause`).
pub fn history_not_fetched(cause: &str) -> Evidence {
    Evidence {
        kind: EvidenceKind::Ancestry,
        status: Status::Unknown,
        detail: format!("the pinned history could not be fetched: {cause}"),
        file: None,
        line: None,
    }
}

/// A finding of `rule` on `component` whose status is what the lattice
/// ([`evaluate::combine`]) makes of `evidence`, every piece of which applies.
fn decided(
    rule: &Rule,
    component: String,
    evidence: Vec<Evidence>,
    location: Option<Location>,
) -> Finding {
    let mut weighed: Vec<(Evidence, bool)> = evidence.iter().cloned().map(|e| (e, true)).collect();
    weighed.sort_by_key(|(e, _)| e.kind);
    let verdict = evaluate::combine(&weighed);
    Finding {
        rule: rule.id.clone(),
        status: verdict.status,
        severity: rule.database_specific.severity,
        summary: rule.summary.clone(),
        component,
        decided_by: verdict.decided_by,
        evidence,
        location,
        suppressed: None,
    }
}
