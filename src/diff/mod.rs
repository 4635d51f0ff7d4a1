//! Pin-bump review (`pinprobe diff`): scan a source tree at two revisions, pair the pins and the
//! findings, and say what the bump introduces, fixes or keeps.
//!
//! Both sides go through [`crate::scan::scan_source_sharing`] with `Options.rev`, so nothing is
//! checked out. Each revision is evaluated once, BASE first, then HEAD on this thread: HEAD
//! takes BASE's CMake evaluation, Python requirements and subproject search where every file
//! and listing they read answers the same at HEAD ([`crate::scan::shared`]); where a CMake
//! input changed (a pin bump), each run of HEAD starts from BASE's where everything it
//! consulted is the same ([`crate::pin::cmake::Sharing`]).
//! Components pair by name (and declared name); findings pair by (component, rule).
//!
//! # The gate judges the head
//!
//! A finding affected at HEAD fails the gate (at or above `--fail-on`) unless BASE had the same
//! finding *decided* affected (`kept`: not the bump's doing). A BASE that is unknown for the
//! finding, undecided as a whole (it pins nothing), or lacks the finding never lets HEAD's
//! affected finding pass: it is `introduced`, and `base_undecided` says when BASE could not be
//! decided ("affected; base undecided"). Symmetrically, a HEAD not affected over an undecided
//! BASE is no fix. Each pair is classified from its two statuses ([`classify`]):
//!
//! | BASE \ HEAD                   | affected                       | unknown | not affected / absent  |
//! |--------------------------------|--------------------------------|---------|------------------------|
//! | affected (decided)             | kept                           | unknown | fixed                  |
//! | unknown                        | introduced, `base_undecided`   | unknown | unknown (not a fix)    |
//! | not affected                   | introduced                     | unknown | (not listed)           |
//! | absent                         | introduced                     | unknown | (not listed)           |
//! | absent, BASE pins nothing      | introduced, `base_undecided`   | unknown | (not listed)           |
//!
//! A pair undecided on both sides whose pin did not move is not listed (not the bump's doing).
//!
//! What each change does to the exit code ([`crate::exit::for_diff`]), for an unsuppressed
//! finding of severity `S`, `--fail-on A` and `--fail-on-unknown U` (`never` is above every
//! severity); the highest code wins, 1 over 3 over 0:
//!
//! | change                              | exit                                              |
//! |-------------------------------------|---------------------------------------------------|
//! | introduced (`base_undecided` or not)| 1 when `S >= A`, else 0                           |
//! | unknown, HEAD unknown, pin moved    | 3 when `S >= U`, else 0                           |
//! | unknown, HEAD unknown, pin unmoved  | 0 (listed only when BASE was decided)             |
//! | unknown, HEAD not affected          | 0                                                 |
//! | kept, fixed, any suppressed change  | 0                                                 |
//! | HEAD pins nothing                   | 3 unless `U` is `never`                           |
//! | an ignore entry, rule or VEX statement HEAD adds or edits, not allowed | 1 unless `A` is `never` |
//!
//! So under the README's pull-request settings (`--fail-on high --fail-on-unknown never`) a
//! bump to a known-affected pin fails (1) whether BASE was decided or not, and a bump that only
//! leaves a finding undecided passes. `tests/cli/diff.rs` and the unit tests of [`crate::exit`]
//! check every cell.
//!
//! The ignore policy ([`crate::scan::policy`]) is applied to both sides; it is BASE's
//! `.pinprobe.yaml` (or `--ignore FILE`), never HEAD's, so a change cannot suppress its own
//! findings: the entries HEAD adds or edits are review items ([`edits`]) that fail the gate
//! unless the workflow allows HEAD's policy. Only unused entries of the policy in force are
//! warned about.
//! With clones (`--repo`), [`suggest`] proposes the `GIT_TAG` that fixes what stays open.

pub mod edits;
pub mod suggest;

use crate::model::Date;
use crate::model::Pin;
use crate::model::{
    Change, ChangeKind, Counts, PinChange, PinChangeKind, PinSide, PolicyEdit, Review, Side,
};
use crate::model::{Finding, Status};
use crate::model::{TargetReport, Tool};
use crate::resolve::Clones;
use crate::rules::Database;
use crate::scan::policy::{self, Policy, PolicyError};
use crate::scan::vex::Statements;
use crate::scan::{self, Options, ScanError};
use std::path::Path;

/// Why a review could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{side} {rev}: {source}")]
    Scan {
        side: &'static str,
        rev: String,
        source: Box<ScanError>,
    },
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("--vex: {0}")]
    Vex(#[from] crate::view::TargetError),
}

/// `--vex FILE` of a review.
pub enum VexSource {
    /// A document outside the tree: the workflow controls it, and it applies to both sides.
    Fixed(Statements),
    /// A document inside the tree (its path from the root): the change can edit it, so
    /// BASE's statements apply and those HEAD adds or edits are review items.
    InTree(String),
}

/// One side of a pin change, from the pin.
fn pin_side(pin: &Pin) -> PinSide {
    PinSide {
        repo: pin.repo.clone(),
        reference: pin.reference.clone(),
        commit: pin.commit.clone(),
        fork: is_fork(pin),
        file: pin.file.clone(),
        line: pin.line,
    }
}

fn is_fork(pin: &Pin) -> bool {
    matches!((&pin.repo_canonical, &pin.component_repo), (Some(r), Some(c)) if r != c)
}

/// Inputs of one review.
pub struct Request<'a> {
    pub path: &'a Path,
    pub base: &'a str,
    pub head: &'a str,
    pub opts: &'a Options,
    /// `--ignore FILE`, else BASE's `.pinprobe.yaml`.
    pub policy: &'a policy::Source,
    pub today: Date,
    /// Apply HEAD's `.pinprobe.yaml` instead of BASE's (the workflow's `--allow-head-ignores`).
    pub allow_head_ignores: bool,
    /// Rule overrides HEAD adds or edits (found by the caller, which loads the rules).
    pub rule_edits: Vec<PolicyEdit>,
    /// `--vex FILE`, if given.
    pub vex: Option<&'a VexSource>,
    /// Apply HEAD's version of an in-tree `--vex` document (the workflow's `--allow-head-vex`).
    pub allow_head_vex: bool,
}

/// Scan both revisions and compare them.
pub fn review(req: &Request, db: &Database, clones: &Clones) -> Result<Review, ReviewError> {
    let evaluations = scan::shared::Evaluations::default();
    let side = |label: &'static str, rev: &str, clones: &Clones| {
        let opts = Options {
            rev: Some(rev.to_string()),
            ..req.opts.clone()
        };
        scan::scan_source_sharing(req.path, &opts, db, clones, Some(&evaluations)).map_err(
            |source| ReviewError::Scan {
                side: label,
                rev: rev.to_string(),
                source: Box::new(source),
            },
        )
    };
    // Each revision is evaluated once, BASE first, keeping what it computed with everything it
    // read (`scan::shared`) while this thread records its CMake runs (`pin::cmake::Sharing`).
    // HEAD takes BASE's CMake evaluation, Python requirements and subprojects where every
    // file and listing they read answers the same at HEAD (a change to Python code or docs:
    // the review then costs about one scan); where a CMake input changed (a pin bump), each of
    // HEAD's runs starts where BASE's run of the same configuration was after the last
    // top-level statement up to which everything it consulted is the same at HEAD: the files
    // before the bump are evaluated once. benches/diff_vs_scan.rs prints the ratio against
    // one scan.
    // What differs, read from the two trees' objects (only the subtrees that differ): BASE's
    // runs then keep only the states HEAD's can start from.
    let changed = crate::view::GitTreeView::open(req.path, req.base)
        .ok()
        .and_then(|v| v.changes_to(req.head))
        .map(|(paths, listing)| crate::pin::cmake::Changed { paths, listing });
    let sharing = crate::pin::cmake::Sharing::record_for(changed);
    let base = side("BASE", req.base, clones);
    sharing.resume();
    evaluations.last();
    let head = side("HEAD", req.head, clones);
    let runs_shared = sharing.shared();
    drop(sharing);
    if std::env::var_os("PINPROBE_STATS").is_some() {
        eprintln!(
            "pinprobe: stats: diff: CMake evaluations shared between the revisions: {}; Python requirement reads and subproject searches shared: {}; runs started from BASE's: {}, top-level statements skipped: {}, included files taken as evaluated: {}",
            evaluations.shared(),
            evaluations.taken(),
            runs_shared.0,
            runs_shared.1,
            runs_shared.2
        );
    }
    let mut base = base?;
    let mut head = head?;
    let mut warnings: Vec<String> = head.warnings.clone();
    let mut policy_edits = Vec::new();
    let policy: Option<Policy> = match req.policy {
        policy::Source::File(path) => Some(Policy::load(path)?),
        policy::Source::TreeRoot => {
            let head_policy = policy::from_tree(req.path, Some(req.head))?;
            // A BASE policy that does not parse suppresses nothing (and is said so).
            let base_policy = policy::from_tree(req.path, Some(req.base)).unwrap_or_else(|e| {
                warnings.push(format!("{e}: BASE's ignore file is not used"));
                None
            });
            policy_edits = edits::ignore_edits(
                base_policy.as_ref(),
                head_policy.as_ref(),
                &head,
                req.allow_head_ignores,
            );
            if req.allow_head_ignores {
                head_policy
            } else {
                base_policy
            }
        }
    };
    policy_edits.extend(req.rule_edits.iter().cloned());
    let vex: Option<Statements> = match req.vex {
        None => None,
        Some(VexSource::Fixed(statements)) => Some(statements.clone()),
        Some(VexSource::InTree(rel)) => {
            let head_vex = edits::vex_at(req.path, req.head, rel)?;
            // A BASE document that does not parse suppresses nothing (and is said so).
            let base_vex = edits::vex_at(req.path, req.base, rel).unwrap_or_else(|e| {
                warnings.push(format!("{e}: BASE's VEX document is not used"));
                None
            });
            policy_edits.extend(edits::vex_edits(
                base_vex.as_ref(),
                head_vex.as_ref(),
                &head,
                req.allow_head_vex,
            ));
            if req.allow_head_vex {
                head_vex
            } else {
                base_vex
            }
        }
    };
    if let Some(policy) = &policy {
        policy::apply(policy, &mut [&mut base], req.today, false);
        let outcome = policy::apply(policy, &mut [&mut head], req.today, true);
        warnings.extend(outcome.warnings);
    }
    if let Some(vex) = &vex {
        vex.apply_targets(&mut [&mut base]);
        warnings.extend(vex.apply_targets(&mut [&mut head]));
    }
    let pins = pin_changes(&base.components, &head.components);
    let changes = compare(&base, &head, &pins);
    let suggestions = suggest::for_head(&head, db, clones);
    let mut counts = Counts {
        policy_edits: policy_edits.len(),
        ..Counts::default()
    };
    for c in &changes {
        if c.suppressed.is_some() {
            counts.suppressed += 1;
            continue;
        }
        match c.change {
            ChangeKind::Introduced => counts.introduced += 1,
            ChangeKind::Fixed => counts.fixed += 1,
            ChangeKind::Kept => counts.kept += 1,
            ChangeKind::Unknown => counts.unknown += 1,
        }
    }
    Ok(Review {
        schema: crate::model::SCHEMA,
        tool: Tool::this(),
        rules_digest: db.digest.clone(),
        rules_date: db.date.clone(),
        rules_source: Some(db.source.clone()),
        base: Side {
            rev: req.base.to_string(),
            target: base.target.clone(),
        },
        head: Side {
            rev: req.head.to_string(),
            target: head.target.clone(),
        },
        counts,
        pins,
        changes,
        policy_edits,
        suggestions,
        undecided: head.undecided.clone(),
        warnings,
        head_report: head,
        gate: crate::model::GateView::default(),
        sarif_unknown: false,
    })
}

fn key(pin: &Pin) -> (&str, &str) {
    (pin.component.as_str(), pin.declared_name.as_str())
}

/// The pins that were added, removed, moved to another commit or another repository.
pub fn pin_changes(base: &[Pin], head: &[Pin]) -> Vec<PinChange> {
    let mut out = Vec::new();
    for h in head {
        let Some(b) = base.iter().find(|b| key(b) == key(h)) else {
            out.push(PinChange {
                component: h.component.clone(),
                change: PinChangeKind::Added,
                base: None,
                head: Some(pin_side(h)),
                repo_changed: false,
                fork: is_fork(h).then_some("to"),
            });
            continue;
        };
        let repo = |p: &Pin| p.repo_canonical.clone().or_else(|| p.repo.clone());
        let repo_changed = repo(b) != repo(h);
        let moved = b.commit != h.commit || b.reference != h.reference || b.url != h.url;
        if !(moved || repo_changed) {
            continue;
        }
        let fork = match (is_fork(b), is_fork(h)) {
            (false, true) => Some("to"),
            (true, false) => Some("from"),
            _ => None,
        };
        out.push(PinChange {
            component: h.component.clone(),
            change: PinChangeKind::Changed,
            base: Some(pin_side(b)),
            head: Some(pin_side(h)),
            repo_changed,
            fork,
        });
    }
    for b in base {
        if !head.iter().any(|h| key(h) == key(b)) {
            out.push(PinChange {
                component: b.component.clone(),
                change: PinChangeKind::Removed,
                base: Some(pin_side(b)),
                head: None,
                repo_changed: false,
                fork: None,
            });
        }
    }
    out
}

/// Classify a pair of statuses (`None`: the rule did not apply on that side). Only a BASE
/// *decided* affected keeps HEAD's affected finding from being introduced (see the module's
/// table); whether BASE was undecided is [`Change::base_undecided`].
pub fn classify(base: Option<Status>, head: Option<Status>) -> Option<ChangeKind> {
    use Status::*;
    match (base, head) {
        (Some(Affected), Some(Affected)) => Some(ChangeKind::Kept),
        (Some(Affected), None | Some(NotAffected)) => Some(ChangeKind::Fixed),
        (None | Some(NotAffected) | Some(Unknown), Some(Affected)) => Some(ChangeKind::Introduced),
        (Some(Unknown), _) | (_, Some(Unknown)) => Some(ChangeKind::Unknown),
        _ => None,
    }
}

fn find(r: &TargetReport, f: &Finding) -> Option<Status> {
    r.findings
        .iter()
        .find(|g| g.component == f.component && g.rule == f.rule)
        .map(|g| g.status)
}

/// Pair the findings of both sides by (component, rule) and classify each pair.
pub fn compare(base: &TargetReport, head: &TargetReport, pins: &[PinChange]) -> Vec<Change> {
    let mut out = Vec::new();
    let pin_changed = |component: &str| pins.iter().any(|p| p.component == component);
    // BASE could not be decided for a finding: unknown there, or BASE as a whole undecided.
    let base_undecided = |status: Option<Status>| match status {
        Some(s) => s == Status::Unknown,
        None => base.undecided.is_some(),
    };
    for f in &head.findings {
        let base_status = find(base, f);
        let changed = pin_changed(&f.component);
        if !changed && base_status == Some(Status::Unknown) && f.status == Status::Unknown {
            // Undecided before and after, and the pin did not move: not the bump's doing.
            continue;
        }
        if let Some(kind) = classify(base_status, Some(f.status)) {
            out.push(Change {
                change: kind,
                rule: f.rule.clone(),
                component: f.component.clone(),
                status: f.status,
                base_status,
                base_undecided: base_undecided(base_status),
                severity: f.severity,
                summary: f.summary.clone(),
                decided_by: f.decided_by,
                evidence: f.evidence.clone(),
                location: f.location.clone(),
                suppressed: f.suppressed.clone(),
                pin_changed: changed,
            });
        }
    }
    for f in &base.findings {
        if find(head, f).is_some() {
            continue;
        }
        if let Some(kind) = classify(Some(f.status), None) {
            out.push(Change {
                change: kind,
                rule: f.rule.clone(),
                component: f.component.clone(),
                // The rule no longer applies on the head side.
                status: crate::rules::evaluate::absent(None),
                base_status: Some(f.status),
                base_undecided: f.status == Status::Unknown,
                severity: f.severity,
                summary: f.summary.clone(),
                decided_by: f.decided_by,
                evidence: f.evidence.clone(),
                location: f.location.clone(),
                suppressed: f.suppressed.clone(),
                pin_changed: pin_changed(&f.component),
            });
        }
    }
    out.sort_by(|a, b| {
        (
            a.change,
            std::cmp::Reverse(a.severity),
            &a.component,
            &a.rule,
        )
            .cmp(&(
                b.change,
                std::cmp::Reverse(b.severity),
                &b.component,
                &b.rule,
            ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    #[test]
    fn classification_table() {
        assert_eq!(
            classify(Some(Affected), Some(Affected)),
            Some(ChangeKind::Kept)
        );
        assert_eq!(classify(Some(Affected), None), Some(ChangeKind::Fixed));
        assert_eq!(
            classify(Some(Affected), Some(NotAffected)),
            Some(ChangeKind::Fixed)
        );
        assert_eq!(classify(None, Some(Affected)), Some(ChangeKind::Introduced));
        assert_eq!(
            classify(Some(NotAffected), Some(Affected)),
            Some(ChangeKind::Introduced)
        );
        // An undecided BASE never lets HEAD's affected finding pass as a mere "unknown".
        assert_eq!(
            classify(Some(Unknown), Some(Affected)),
            Some(ChangeKind::Introduced)
        );
        // Nor is HEAD's not affected over an undecided BASE a fix.
        assert_eq!(
            classify(Some(Unknown), Some(NotAffected)),
            Some(ChangeKind::Unknown)
        );
        assert_eq!(classify(Some(Unknown), None), Some(ChangeKind::Unknown));
        assert_eq!(
            classify(Some(Affected), Some(Unknown)),
            Some(ChangeKind::Unknown)
        );
        assert_eq!(classify(None, Some(Unknown)), Some(ChangeKind::Unknown));
        assert_eq!(classify(Some(NotAffected), Some(NotAffected)), None);
        assert_eq!(classify(None, Some(NotAffected)), None);
        assert_eq!(classify(Some(NotAffected), None), None);
    }
}
