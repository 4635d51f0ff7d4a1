//! Pin-hygiene findings: properties of a pin that are problems whatever the rule database says
//! (a fork instead of the project's repository, a reference that can move or is ambiguous, a
//! commit that the repository's default branch does not reach: an unmerged or squash-merged PR
//! head, a WIP branch).

use crate::model::Pin;
use crate::model::Severity;
use crate::model::{Evidence, EvidenceKind, Finding, FindingKind, Location, RuleId, Status};
use crate::pin::components::Registry;
use crate::resolve::{Answer, Repo};
use crate::rules::evaluate;

/// The hygiene checks' names (`hygiene/NAME`).
pub const FORK_PIN: &str = "fork-pin";
pub const MOVABLE_REF: &str = "movable-ref";
pub const SHORT_SHA: &str = "short-sha";
pub const UNREACHABLE: &str = "unreachable-pin";

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
        rule: RuleId::check(FindingKind::Hygiene, rule),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        crate::rules::load(None).expect("built-in rules").0.registry
    }

    fn pin(reference: Option<&str>, repo: &str) -> Pin {
        let mut pin = Pin::shipped(
            "flash-attention",
            "cmake/fa.cmake",
            reference.map(String::from),
            None,
            crate::model::FoundBy::Cmake,
        );
        pin.line = 9;
        pin.repo = Some(format!("https://{repo}.git"));
        pin.repo_canonical = Some(repo.to_string());
        pin.component_repo = Some("github.com/vllm-project/flash-attention".into());
        pin
    }

    /// The checks found, by name; each a hygiene finding named `hygiene/NAME`.
    fn rules(found: &[Finding]) -> Vec<&str> {
        found
            .iter()
            .map(|f| {
                assert_eq!(f.rule.kind(), FindingKind::Hygiene);
                f.rule.strip_prefix("hygiene/").expect("namespaced")
            })
            .collect()
    }

    const OWN: &str = "github.com/vllm-project/flash-attention";

    #[test]
    fn each_reference_form() {
        let r = registry();
        let full = "a".repeat(40);
        assert!(check(&pin(Some(&full), OWN), &r, None).is_empty());
        assert!(check(&pin(None, OWN), &r, None).is_empty());
        let found = check(&pin(Some("abcd"), OWN), &r, None);
        assert_eq!(rules(&found), [SHORT_SHA]);
        assert_eq!(
            found[0].evidence[0].detail,
            "`abcd` is a 4-digit abbreviation; pin the full 40-hex SHA"
        );
        assert_eq!(
            rules(&check(&pin(Some(&"b".repeat(39)), OWN), &r, None)),
            [SHORT_SHA]
        );
        // Three hex digits are no abbreviation git accepts, nor a name: no finding.
        assert!(check(&pin(Some("abc"), OWN), &r, None).is_empty());
        assert_eq!(
            rules(&check(&pin(Some("v2.7.2"), OWN), &r, None)),
            [MOVABLE_REF]
        );
    }

    #[test]
    fn a_fork_is_a_finding_with_the_lattices_verdict() {
        let r = registry();
        let found = check(
            &pin(Some("main"), "github.com/someone/flash-attention"),
            &r,
            None,
        );
        assert_eq!(rules(&found), [FORK_PIN, MOVABLE_REF]);
        let f = &found[0];
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Hygiene));
        assert_eq!(f.severity, Severity::Medium);
        assert_eq!(found[1].severity, Severity::Low);
        assert_eq!(
            f.evidence[0].detail,
            "flash-attention is fetched from https://github.com/someone/flash-attention.git instead of github.com/vllm-project/flash-attention"
        );
        assert_eq!(f.evidence[0].line, Some(9));
        assert_eq!(
            f.location,
            Some(Location {
                file: "cmake/fa.cmake".into(),
                line: 9
            })
        );
    }

    use crate::resolve::test_git::git;

    /// A real clone: `main` at `tip`, and `wip` one commit off it that `main` does not reach.
    #[test]
    fn a_commit_off_the_default_branch_is_unreachable_one_on_it_is_not() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("a"), "a").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        let first = git(dir, &["rev-parse", "HEAD"]);
        git(dir, &["checkout", "-q", "-b", "wip"]);
        std::fs::write(dir.join("b"), "b").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "wip"]);
        let wip = git(dir, &["rev-parse", "HEAD"]);
        git(dir, &["checkout", "-q", "main"]);
        std::fs::write(dir.join("c"), "c").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "two"]);
        let tip = git(dir, &["rev-parse", "HEAD"]);
        let clone = Repo::open(dir).expect("opens");
        let r = registry();
        let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).expect("hex");
        let full = |c: &str| pin(Some(c), OWN);
        // On the default branch (its tip, or an ancestor of it): nothing to say.
        assert!(check(&full(&tip), &r, Some((&clone, id(&tip)))).is_empty());
        assert!(check(&full(&first), &r, Some((&clone, id(&first)))).is_empty());
        let found = check(&full(&wip), &r, Some((&clone, id(&wip))));
        assert_eq!(rules(&found), [UNREACHABLE]);
        let f = &found[0];
        assert_eq!(
            (f.status, f.decided_by, f.severity),
            (Status::Affected, Some(EvidenceKind::Hygiene), Severity::Low)
        );
        assert_eq!(
            f.evidence[0].detail,
            format!(
                "{wip} is not reachable from main ({}) in the clone {}; a squash-merged pull request's head stays off the default branch, and a branch can be deleted",
                &tip[..12],
                clone.path().display()
            )
        );
        assert_eq!(f.component, "flash-attention");
        // Without the clone, reachability is not asked.
        assert!(check(&full(&wip), &r, None).is_empty());
    }
}
