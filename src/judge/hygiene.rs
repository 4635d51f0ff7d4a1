//! Pin-hygiene findings: properties of a pin that are problems whatever the rule database says
//! (a fork instead of the project's repository, a reference that can move or is ambiguous, a
//! commit that the repository's default branch does not reach: an unmerged or squash-merged PR
//! head, a WIP branch).

use crate::model::Pin;
use crate::model::Severity;
use crate::model::{Evidence, EvidenceKind, Finding, Location, Status};
use crate::pin::components::Registry;
use crate::resolve::{Answer, Repo};
use crate::rules::evaluate;

pub const FORK_PIN: &str = "hygiene/fork-pin";
pub const MOVABLE_REF: &str = "hygiene/movable-ref";
pub const SHORT_SHA: &str = "hygiene/short-sha";
pub const UNREACHABLE: &str = "hygiene/unreachable-pin";

fn finding(pin: &Pin, rule: &str, severity: Severity, summary: &str, detail: String) -> Finding {
    let evidence = Evidence {
        kind: EvidenceKind::Hygiene,
        status: Status::Affected,
        detail,
        file: Some(pin.file.clone()),
        line: Some(pin.line),
    };
    let verdict = evaluate::on_its_own(&evidence);
    Finding {
        rule: rule.to_string(),
        status: verdict.status,
        severity,
        summary: summary.to_string(),
        component: pin.component.clone(),
        decided_by: verdict.decided_by,
        evidence: vec![evidence],
        location: Some(Location {
            file: pin.file.clone(),
            line: pin.line,
        }),
        suppressed: None,
    }
}

/// Hygiene findings for one pin; `resolved` is the clone and the pinned commit, when both are
/// known (reachability needs them).
pub fn check(
    pin: &Pin,
    registry: &Registry,
    resolved: Option<(&Repo, gix::ObjectId)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some((clone, commit)) = resolved
        && let Some((branch, tip)) = clone.default_branch()
        && clone.is_ancestor(&commit, &tip) == Answer::Known(false)
    {
        out.push(finding(
            pin,
            UNREACHABLE,
            Severity::Low,
            "the pinned commit is not on the repository's default branch (an unmerged PR head or a WIP branch?)",
            format!(
                "{commit} is not reachable from {branch} ({}) in the clone {}; a squash-merged pull request's head stays off the default branch, and a branch can be deleted",
                &tip.to_string()[..12],
                clone.path().display()
            ),
        ));
    }
    if crate::pin::is_foreign_repo(pin, registry) {
        out.push(finding(
            pin,
            FORK_PIN,
            Severity::Medium,
            "GIT_REPOSITORY is not the component's repository (a personal fork?)",
            format!(
                "{} is fetched from {} instead of {}",
                pin.component,
                pin.repo.as_deref().unwrap_or("?"),
                pin.component_repo.as_deref().unwrap_or("?")
            ),
        ));
    }
    if let Some(reference) = &pin.reference {
        let hex = reference.bytes().all(|b| b.is_ascii_hexdigit());
        if hex && (4..40).contains(&reference.len()) {
            out.push(finding(
                pin,
                SHORT_SHA,
                Severity::Low,
                "GIT_TAG is a short SHA: it can become ambiguous",
                format!(
                    "`{reference}` is a {}-digit abbreviation; pin the full 40-hex SHA",
                    reference.len()
                ),
            ));
        } else if !hex {
            out.push(finding(
                pin,
                MOVABLE_REF,
                Severity::Low,
                "GIT_TAG is a tag or branch, which can move",
                format!(
                    "`{reference}` names a tag or branch; pin the full commit SHA it points to"
                ),
            ));
        }
    }
    out
}
