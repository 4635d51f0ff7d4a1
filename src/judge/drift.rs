//! Drift: the pin a source tree declares against the commits an artifact's shipped files
//! fingerprint to (`pinprobe scan --expect TREE ARTIFACT`). A wheel built from another commit,
//! or with files patched after the pin, is a finding of its own.

use crate::model::Severity;
use crate::model::{Evidence, EvidenceKind, Finding, FindingKind, Location, RuleId, Status};
use crate::model::{FoundBy, Pin};
use crate::rules::evaluate;

/// The drift checks' names (`drift/NAME`).
pub const DRIFT: &str = "pin-vs-artifact";
pub const LEDGER_DRIFT: &str = "ledger-vs-artifact";

/// A shipped copy whose files fingerprint to commits that do not include the pin the release
/// ledger records for its vLLM release (or include it only with files changed): the artifact is
/// not the release as built. `None` when they agree.
pub fn against_ledger(
    component: &str,
    dir: &str,
    fingerprint: &crate::model::Fingerprint,
    ledger_commit: &str,
    version: &str,
) -> Option<Finding> {
    let has = fingerprint.commits.iter().any(|c| c == ledger_commit);
    let detail = match (has, fingerprint.mismatched.is_empty()) {
        (true, true) => return None,
        (true, false) => format!(
            "vLLM {version}'s {component} pin is {ledger_commit} (release ledger); the shipped files match it except {}: changed after the build",
            fingerprint.mismatched.join(", ")
        ),
        (false, _) => format!(
            "vLLM {version}'s {component} pin is {ledger_commit} (release ledger), but the shipped files do not come from it: {}",
            fingerprint.summary
        ),
    };
    let evidence = Evidence {
        kind: EvidenceKind::Fingerprint,
        status: Status::Affected,
        detail,
        file: None,
        line: None,
    };
    let verdict = evaluate::on_its_own(&evidence);
    Some(Finding {
        rule: RuleId::check(FindingKind::Drift, LEDGER_DRIFT),
        status: verdict.status,
        severity: Severity::Medium,
        summary: "the artifact's files are not those of its vLLM release's pin".into(),
        component: component.to_string(),
        decided_by: verdict.decided_by,
        evidence: vec![evidence],
        location: Some(Location {
            file: dir.to_string(),
            line: 1,
        }),
        suppressed: None,
    })
}

/// Compare each shipped component with the same component's pin in the tree.
pub fn check(tree: &str, tree_pins: &[Pin], shipped: &[Pin]) -> Vec<Finding> {
    let mut out = Vec::new();
    for copy in shipped
        .iter()
        .filter(|p| p.found_by == FoundBy::ShippedFiles)
    {
        let Some(declared) = tree_pins.iter().find(|p| p.component == copy.component) else {
            continue;
        };
        let (status, detail) = match (&declared.commit, &copy.fingerprint) {
            (None, _) => (
                Status::Unknown,
                format!(
                    "{tree} pins {} at `{}`, which is not a full commit: cannot compare",
                    declared.component,
                    declared.reference.as_deref().unwrap_or("?")
                ),
            ),
            (Some(_), None) => (
                Status::Unknown,
                format!(
                    "no fingerprint index for {}: build one with `pinprobe index build --repo {}=PATH`",
                    copy.component, copy.component
                ),
            ),
            (Some(pin), Some(m))
                if m.commits.iter().any(|c| c == pin) && m.mismatched.is_empty() =>
            {
                (
                    Status::NotAffected,
                    format!(
                        "the shipped files match the declared pin {pin} ({})",
                        m.summary
                    ),
                )
            }
            (Some(pin), Some(m)) if m.commits.iter().any(|c| c == pin) => (
                Status::Affected,
                format!(
                    "the shipped files match the declared pin {pin} except {}: patched after the pin",
                    m.mismatched.join(", ")
                ),
            ),
            (Some(pin), Some(m)) => (
                Status::Affected,
                format!(
                    "{tree} pins {pin} but the shipped files do not come from it: {}",
                    m.summary
                ),
            ),
        };
        let evidence = Evidence {
            kind: EvidenceKind::Fingerprint,
            status,
            detail,
            file: Some(format!("{}:{}", declared.file, declared.line)),
            line: None,
        };
        let verdict = evaluate::on_its_own(&evidence);
        out.push(Finding {
            rule: RuleId::check(FindingKind::Drift, DRIFT),
            status: verdict.status,
            severity: Severity::Medium,
            summary: "the artifact was not built from the pin the source tree declares".into(),
            component: copy.component.clone(),
            decided_by: verdict.decided_by,
            evidence: vec![evidence],
            location: Some(Location {
                file: copy.file.clone(),
                line: 1,
            }),
            suppressed: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Fingerprint;

    const PIN: &str = "1111111111111111111111111111111111111111";
    const OTHER: &str = "2222222222222222222222222222222222222222";

    fn fingerprint(commits: &[&str], mismatched: &[&str]) -> Fingerprint {
        Fingerprint {
            component: "flash-attention".into(),
            commits: commits.iter().map(|c| c.to_string()).collect(),
            matched: 10,
            total: 10 + mismatched.len(),
            mismatched: mismatched.iter().map(|c| c.to_string()).collect(),
            summary: "the summary".into(),
        }
    }

    fn declared(commit: Option<&str>) -> Pin {
        let mut pin = Pin::shipped(
            "flash-attention",
            "cmake/fa.cmake",
            Some("v2".into()),
            commit.map(crate::model::CommitId::from),
            crate::model::FoundBy::Cmake,
        );
        pin.line = 12;
        pin
    }

    fn shipped(fp: Option<Fingerprint>) -> Pin {
        let mut pin = Pin::shipped(
            "flash-attention",
            "vllm/vllm_flash_attn",
            None,
            None,
            FoundBy::ShippedFiles,
        );
        pin.fingerprint = fp;
        pin
    }

    fn one(tree: &[Pin], copy: Pin) -> Finding {
        let out = check("tree", tree, &[copy]);
        assert_eq!(out.len(), 1, "{out:#?}");
        out.into_iter().next().expect("one")
    }

    #[test]
    fn each_way_a_copy_can_stand_to_its_declared_pin() {
        let f = one(&[declared(None)], shipped(None));
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert_eq!(
            f.evidence[0].detail,
            "tree pins flash-attention at `v2`, which is not a full commit: cannot compare"
        );
        let f = one(&[declared(Some(PIN))], shipped(None));
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert!(
            f.evidence[0]
                .detail
                .starts_with("no fingerprint index for flash-attention")
        );
        let f = one(
            &[declared(Some(PIN))],
            shipped(Some(fingerprint(&[OTHER, PIN], &[]))),
        );
        assert_eq!(
            (f.status, f.decided_by),
            (Status::NotAffected, Some(EvidenceKind::Fingerprint))
        );
        let f = one(
            &[declared(Some(PIN))],
            shipped(Some(fingerprint(&[PIN], &["a.py", "b.py"]))),
        );
        assert_eq!(
            (f.status, f.decided_by),
            (Status::Affected, Some(EvidenceKind::Fingerprint))
        );
        assert!(
            f.evidence[0]
                .detail
                .ends_with("except a.py, b.py: patched after the pin")
        );
        let f = one(
            &[declared(Some(PIN))],
            shipped(Some(fingerprint(&[OTHER], &[]))),
        );
        assert_eq!(f.status, Status::Affected);
        assert_eq!(
            f.evidence[0].detail,
            format!("tree pins {PIN} but the shipped files do not come from it: the summary")
        );
        assert_eq!(f.rule.as_str(), "drift/pin-vs-artifact");
        assert_eq!(f.rule.kind(), FindingKind::Drift);
        assert_eq!(f.evidence[0].file.as_deref(), Some("cmake/fa.cmake:12"));
        assert_eq!(
            f.location,
            Some(Location {
                file: "vllm/vllm_flash_attn".into(),
                line: 1
            })
        );
    }

    #[test]
    fn only_shipped_copies_with_a_declared_pin_are_compared() {
        let mut from_cmake = shipped(None);
        from_cmake.found_by = FoundBy::Cmake;
        assert!(check("tree", &[declared(Some(PIN))], &[from_cmake]).is_empty());
        let mut other = shipped(None);
        other.component = "cutlass".into();
        assert!(check("tree", &[declared(Some(PIN))], &[other]).is_empty());
    }

    #[test]
    fn a_copy_that_is_not_its_releases_pin_drifts_from_the_ledger() {
        let clean = fingerprint(&[PIN], &[]);
        assert_eq!(against_ledger("fa", "d", &clean, PIN, "0.30.0"), None);
        let patched = fingerprint(&[PIN], &["x.py"]);
        let f = against_ledger("fa", "d", &patched, PIN, "0.30.0").expect("drift");
        assert_eq!(
            (f.status, f.decided_by, f.rule.as_str()),
            (
                Status::Affected,
                Some(EvidenceKind::Fingerprint),
                "drift/ledger-vs-artifact"
            )
        );
        assert!(
            f.evidence[0]
                .detail
                .ends_with("except x.py: changed after the build")
        );
        let elsewhere = fingerprint(&[OTHER], &[]);
        let f = against_ledger("fa", "d", &elsewhere, PIN, "0.30.0").expect("drift");
        assert_eq!(f.status, Status::Affected);
        assert!(
            f.evidence[0]
                .detail
                .contains("do not come from it: the summary")
        );
        assert_eq!(f.location.map(|l| (l.file, l.line)), Some(("d".into(), 1)));
    }
}
