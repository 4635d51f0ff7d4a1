//! The judge: every status decision of a scan, between the rule database ([`crate::rules`]) and
//! the scan pipeline ([`crate::scan`]), which only orchestrates and never sets a status itself.
//! Each decision here asks the one lattice in [`crate::rules::evaluate`] (`combine` and its
//! companions `over_values`, `on_its_own`, `distrusted`, `absent`) instead of deciding by hand,
//! so "never clean when unsure" holds in one place.
//!
//! - [`source`]: a source tree's pins, each rule on each value ([`Judge`]).
//! - [`values`]: one rule over every value a pin can take.
//! - [`elsewhere`]: a commit some rule lists under another component's name.
//! - [`integrity`]: a shipped copy's verdicts, with what RECORD says of the files read.
//! - [`ledger`]: the release ledger's pins and recorded verdicts for a target's vLLM release.
//! - [`hygiene`]: fork pins, short SHAs, movable references, unreachable commits.
//! - [`drift`]: a build's components against the tree it was declared from.

pub mod drift;
pub mod elsewhere;
pub mod hygiene;
pub mod integrity;
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
    // `combine` orders the applicable evidence strongest first itself.
    let weighed: Vec<(Evidence, bool)> = evidence.iter().cloned().map(|e| (e, true)).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_fetch_adds_undecided_ancestry() {
        let e = history_not_fetched("offline");
        assert_eq!(e.kind, EvidenceKind::Ancestry);
        assert_eq!(e.status, Status::Unknown);
        assert_eq!(e.detail, "the pinned history could not be fetched: offline");
        assert_eq!((e.file, e.line), (None, None));
    }

    #[test]
    fn a_finding_takes_the_lattices_verdict_on_its_evidence() {
        let db = crate::rules::load(None).expect("built-in rules").0;
        let rule = &db.rules[0].rule;
        let e = |kind, status| Evidence {
            kind,
            status,
            detail: format!("{kind:?} {status}"),
            file: None,
            line: None,
        };
        // The weaker evidence listed first still loses to the stronger one, which disagrees.
        let f = decided(
            rule,
            "c".into(),
            vec![
                e(EvidenceKind::KnownPin, Status::Affected),
                e(EvidenceKind::Signature, Status::NotAffected),
            ],
            None,
        );
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert_eq!(
            f.evidence[0].kind,
            EvidenceKind::KnownPin,
            "evidence kept as given"
        );
        let f = decided(
            rule,
            "c".into(),
            vec![e(EvidenceKind::KnownPin, Status::Affected)],
            Some(Location {
                file: "f".into(),
                line: 1,
            }),
        );
        assert_eq!(
            (f.status, f.decided_by),
            (Status::Affected, Some(EvidenceKind::KnownPin))
        );
        assert_eq!(
            (f.rule.as_str(), f.component.as_str(), f.severity),
            (rule.id.as_str(), "c", rule.database_specific.severity)
        );
        assert_eq!(f.summary, rule.summary);
        assert_eq!(f.suppressed, None);
        assert_eq!(f.location.map(|l| l.file), Some("f".into()));
        let f = decided(
            rule,
            "c".into(),
            vec![e(EvidenceKind::Configuration, Status::Unknown)],
            None,
        );
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
    }
}
