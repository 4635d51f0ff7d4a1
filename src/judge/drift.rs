//! Drift: the pin a source tree declares against the commits an artifact's shipped files
//! fingerprint to (`pinprobe scan --expect TREE ARTIFACT`). A wheel built from another commit,
//! or with files patched after the pin, is a finding of its own.

use crate::model::Pin;
use crate::model::Severity;
use crate::model::{Evidence, EvidenceKind, Finding, Location, Status};
use crate::rules::evaluate;

pub const DRIFT: &str = "drift/pin-vs-artifact";
pub const LEDGER_DRIFT: &str = "drift/ledger-vs-artifact";

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
        rule: LEDGER_DRIFT.to_string(),
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
    for copy in shipped.iter().filter(|p| p.found_by == "shipped files") {
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
            rule: DRIFT.to_string(),
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
