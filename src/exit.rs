//! The one place pinprobe's exit codes live (docs/src/design.md, "Contracts").

use crate::model::Severity;
use crate::model::{GateVerdict, GateView};

/// Process exit status, shared by every subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Nothing at or above `--fail-on` (scan), or latency scales (verify).
    Clean = 0,
    /// Findings at or above `--fail-on` (scan), or latency is flat (verify).
    Findings = 1,
    /// Usage, input or I/O error.
    Error = 2,
    /// Undecided: a pin or a rule could not be resolved, or a verifier control failed. Fail closed.
    Undecided = 3,
    /// No usable GPU (no driver, no NVIDIA device).
    NoGpu = 4,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The exit status of a scan: an affected finding at or above `gate.affected` (1) outranks an
/// undecided one at or above `gate.unknown` (3), which outranks a clean result. A threshold of
/// `None` (`never`) lets that status pass. Pin-hygiene findings ([`crate::model::FindingKind::Hygiene`]) count only with
/// `hygiene_fails` (`--fail-on-hygiene`): a gate that fails on every real vLLM tree because it
/// pins CUTLASS by tag would be switched off. [`GateView`] decides; the renderers print the same
/// verdict as the headline.
pub fn for_scan(report: &crate::model::Report, gate: Gate, hygiene_fails: bool) -> Exit {
    of(gate.view(hygiene_fails).report(report))
}

/// The exit status of a pin-bump review (`pinprobe diff`): the gate judges HEAD (the table in
/// [`crate::diff`]'s documentation). Leaving suppressed findings out, an `introduced` finding at
/// or above the threshold (1: affected at HEAD and not decided affected at BASE, including over
/// an undecided BASE) outranks an `unknown` change at or above it still unknown at HEAD on a
/// component whose pin changed, or a HEAD that pins nothing (3). Kept findings (decided affected
/// at BASE too) and fixed ones never fail a review: they are not the bump's doing. A change
/// that edits its own ignore entries or rule overrides without the workflow's leave fails
/// (when the affected gate is on).
pub fn for_diff(review: &crate::model::Review, gate: Gate) -> Exit {
    of(gate.view(false).review(review))
}

/// The exit status of a gate's verdict.
pub fn of(verdict: GateVerdict) -> Exit {
    match verdict {
        GateVerdict::Fails => Exit::Findings,
        GateVerdict::Undecided => Exit::Undecided,
        GateVerdict::Passes => Exit::Clean,
    }
}

/// The two thresholds of a gate: the least severity of an `affected` finding that fails it
/// (exit 1), and of an `unknown` one (exit 3). `None` is `never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    pub affected: Option<Severity>,
    pub unknown: Option<Severity>,
}

impl Gate {
    /// `--fail-on` and `--fail-on-unknown` (which defaults to `--fail-on`).
    pub fn new(fail_on: FailOn, fail_on_unknown: Option<FailOn>) -> Gate {
        Gate {
            affected: fail_on.threshold(),
            unknown: fail_on_unknown.unwrap_or(fail_on).threshold(),
        }
    }

    /// What the renderers read of this gate (pin hygiene counting with `hygiene_fails`).
    pub fn view(self, hygiene_fails: bool) -> GateView {
        GateView {
            affected: self.affected,
            unknown: self.unknown,
            hygiene_fails,
        }
    }
}

/// The `--fail-on` threshold: a severity, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Low,
    Medium,
    High,
    Critical,
    Never,
}

impl FailOn {
    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Low => Some(Severity::Low),
            FailOn::Medium => Some(Severity::Medium),
            FailOn::High => Some(Severity::High),
            FailOn::Critical => Some(Severity::Critical),
            FailOn::Never => None,
        }
    }
}

/// The exit status of `verify`: `scales` 0, `flat` 1, anything that cannot tell 3.
pub fn for_verify(verdict: crate::verify::stats::Verdict) -> Exit {
    use crate::verify::stats::Verdict;
    match verdict {
        Verdict::Scales => Exit::Clean,
        Verdict::Flat => Exit::Findings,
        Verdict::Inconclusive | Verdict::Invalid | Verdict::Unsupported => Exit::Undecided,
    }
}

/// The exit status of `verify` when no GPU can be used.
pub const NO_GPU: Exit = Exit::NoGpu;

/// The exit status of `rules test`: every vector passes (0), or some fail (1).
pub fn for_vectors(failed: usize) -> Exit {
    if failed == 0 {
        Exit::Clean
    } else {
        Exit::Findings
    }
}

/// The exit status of `rules lint`: no problem (0), else a bad input (2).
pub fn for_lint(problems: usize) -> Exit {
    if problems == 0 {
        Exit::Clean
    } else {
        Exit::Error
    }
}

#[cfg(test)]
mod tests {
    //! Every branch of the mapping from outcomes to exit codes, on reports built here: a gate
    //! that lets an affected finding through, or fails a clean one, is a false clean (or a
    //! false alarm) in every CI that runs pinprobe.
    use super::*;
    use crate::model::{
        Change, ChangeKind, Counts, EditKind, Finding, PinChange, PinChangeKind, PolicyEdit,
        PolicyEditKind, Report, Review, Side, Status, Suppression, TargetReport,
    };
    use crate::verify::stats::Verdict;

    const FA4: &str = "PINPROBE-2026-0001";

    fn finding(rule: &str, status: Status, severity: Severity) -> Finding {
        Finding {
            rule: rule.into(),
            status,
            severity,
            summary: String::new(),
            component: "flash-attention".to_string(),
            decided_by: None,
            evidence: Vec::new(),
            location: None,
            suppressed: None,
        }
    }

    fn suppression() -> Suppression {
        Suppression {
            reason: "accepted".to_string(),
            expires: "2099-01-01".to_string(),
            entry: ".pinprobe.yaml:3".to_string(),
        }
    }

    fn report(findings: Vec<Finding>) -> Report {
        let mut target =
            TargetReport::new("tree".to_string(), crate::model::TargetKind::SourceTree);
        target.findings = findings;
        Report::new(String::new(), vec![target])
    }

    fn gate(affected: FailOn, unknown: FailOn) -> Gate {
        Gate::new(affected, Some(unknown))
    }

    const LOW: Gate = Gate {
        affected: Some(Severity::Low),
        unknown: Some(Severity::Low),
    };

    #[test]
    fn codes_are_the_contracts() {
        let codes: Vec<i32> = [
            Exit::Clean,
            Exit::Findings,
            Exit::Error,
            Exit::Undecided,
            Exit::NoGpu,
        ]
        .into_iter()
        .map(Exit::code)
        .collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
        assert_eq!(NO_GPU.code(), 4);
    }

    #[test]
    fn the_headline_code_is_the_exit_code() {
        for verdict in [
            GateVerdict::Fails,
            GateVerdict::Undecided,
            GateVerdict::Passes,
        ] {
            assert_eq!(of(verdict).code(), verdict.code(), "{verdict:?}");
        }
    }

    #[test]
    fn fail_on_thresholds() {
        assert_eq!(FailOn::Low.threshold(), Some(Severity::Low));
        assert_eq!(FailOn::Medium.threshold(), Some(Severity::Medium));
        assert_eq!(FailOn::High.threshold(), Some(Severity::High));
        assert_eq!(FailOn::Critical.threshold(), Some(Severity::Critical));
        assert_eq!(FailOn::Never.threshold(), None);
        let g = Gate::new(FailOn::High, None);
        assert_eq!(
            (g.affected, g.unknown),
            (Some(Severity::High), Some(Severity::High))
        );
        let g = Gate::new(FailOn::High, Some(FailOn::Never));
        assert_eq!((g.affected, g.unknown), (Some(Severity::High), None));
    }

    #[test]
    fn scan_affected_outranks_unknown_outranks_clean() {
        let affected = finding(FA4, Status::Affected, Severity::High);
        let unknown = finding("PINPROBE-2026-0002", Status::Unknown, Severity::High);
        let clean = finding(
            "PINPROBE-2026-0003",
            Status::NotAffected,
            Severity::Critical,
        );
        let all = report(vec![clean.clone(), unknown.clone(), affected.clone()]);
        assert_eq!(for_scan(&all, LOW, false), Exit::Findings);
        let undecided = report(vec![clean.clone(), unknown]);
        assert_eq!(for_scan(&undecided, LOW, false), Exit::Undecided);
        assert_eq!(for_scan(&report(vec![clean]), LOW, false), Exit::Clean);
        assert_eq!(for_scan(&report(Vec::new()), LOW, false), Exit::Clean);
        // An unknown finding never counts as affected, nor an affected one as unknown.
        let only_affected = report(vec![affected]);
        assert_eq!(
            for_scan(&only_affected, gate(FailOn::Never, FailOn::Low), false),
            Exit::Clean
        );
    }

    #[test]
    fn scan_thresholds_are_inclusive_and_separate() {
        let high = report(vec![finding(FA4, Status::Affected, Severity::High)]);
        assert_eq!(
            for_scan(&high, gate(FailOn::High, FailOn::Never), false),
            Exit::Findings
        );
        assert_eq!(
            for_scan(&high, gate(FailOn::Medium, FailOn::Never), false),
            Exit::Findings
        );
        assert_eq!(
            for_scan(&high, gate(FailOn::Critical, FailOn::Low), false),
            Exit::Clean
        );
        let unknown = report(vec![finding(FA4, Status::Unknown, Severity::Medium)]);
        assert_eq!(
            for_scan(&unknown, gate(FailOn::Low, FailOn::Medium), false),
            Exit::Undecided
        );
        assert_eq!(
            for_scan(&unknown, gate(FailOn::Low, FailOn::High), false),
            Exit::Clean
        );
        assert_eq!(
            for_scan(&unknown, gate(FailOn::Low, FailOn::Never), false),
            Exit::Clean
        );
    }

    #[test]
    fn scan_leaves_out_suppressed_findings() {
        let mut affected = finding(FA4, Status::Affected, Severity::Critical);
        affected.suppressed = Some(suppression());
        assert_eq!(
            for_scan(&report(vec![affected.clone()]), LOW, false),
            Exit::Clean
        );
        let mut unknown = finding(FA4, Status::Unknown, Severity::Critical);
        unknown.suppressed = Some(suppression());
        assert_eq!(
            for_scan(&report(vec![affected, unknown]), LOW, false),
            Exit::Clean
        );
    }

    #[test]
    fn scan_counts_hygiene_only_when_asked() {
        let hygiene = report(vec![finding(
            "hygiene/tag-pin",
            Status::Affected,
            Severity::High,
        )]);
        assert_eq!(for_scan(&hygiene, LOW, false), Exit::Clean);
        assert_eq!(for_scan(&hygiene, LOW, true), Exit::Findings);
        // A real rule counts whatever `hygiene_fails` says.
        let rule = report(vec![finding(FA4, Status::Affected, Severity::High)]);
        assert_eq!(for_scan(&rule, LOW, false), Exit::Findings);
        assert_eq!(for_scan(&rule, LOW, true), Exit::Findings);
    }

    #[test]
    fn scan_of_an_undecided_target_fails_closed_unless_unknown_is_never() {
        let mut r = report(Vec::new());
        r.targets[0].undecided = Some("no pin found".to_string());
        assert_eq!(for_scan(&r, LOW, false), Exit::Undecided);
        assert_eq!(
            for_scan(&r, gate(FailOn::Low, FailOn::Never), false),
            Exit::Clean
        );
        r.targets[0].findings = vec![finding(FA4, Status::Affected, Severity::High)];
        assert_eq!(for_scan(&r, LOW, false), Exit::Findings);
    }

    fn change(kind: ChangeKind, status: Status, pin_changed: bool) -> Change {
        Change {
            change: kind,
            rule: FA4.into(),
            component: "flash-attention".to_string(),
            status,
            base_status: None,
            base_undecided: false,
            severity: Severity::High,
            summary: String::new(),
            decided_by: None,
            evidence: Vec::new(),
            location: None,
            suppressed: None,
            pin_changed,
        }
    }

    fn review(changes: Vec<Change>) -> Review {
        let side = |rev: &str| Side {
            rev: rev.to_string(),
            target: ".".to_string(),
        };
        Review {
            schema: 1,
            tool: Report::new(String::new(), Vec::new()).tool,
            rules_digest: String::new(),
            rules_date: None,
            rules_source: None,
            base: side("BASE"),
            head: side("HEAD"),
            counts: Counts::default(),
            pins: Vec::new(),
            changes,
            policy_edits: Vec::new(),
            suggestions: Vec::new(),
            undecided: None,
            warnings: Vec::new(),
            head_report: TargetReport::new(".".to_string(), crate::model::TargetKind::SourceTree),
            gate: crate::model::GateView::default(),
            sarif_unknown: false,
        }
    }

    #[test]
    fn diff_fails_on_what_the_bump_introduces() {
        let introduced = change(ChangeKind::Introduced, Status::Affected, true);
        assert_eq!(
            for_diff(&review(vec![introduced.clone()]), LOW),
            Exit::Findings
        );
        let high = gate(FailOn::High, FailOn::High);
        assert_eq!(
            for_diff(&review(vec![introduced.clone()]), high),
            Exit::Findings
        );
        let critical = gate(FailOn::Critical, FailOn::Never);
        assert_eq!(
            for_diff(&review(vec![introduced.clone()]), critical),
            Exit::Clean
        );
        let never = gate(FailOn::Never, FailOn::Never);
        assert_eq!(
            for_diff(&review(vec![introduced.clone()]), never),
            Exit::Clean
        );
        let mut suppressed = introduced;
        suppressed.suppressed = Some(suppression());
        assert_eq!(for_diff(&review(vec![suppressed]), LOW), Exit::Clean);
        // Kept and fixed findings are not the bump's doing.
        let kept = change(ChangeKind::Kept, Status::Affected, true);
        let fixed = change(ChangeKind::Fixed, Status::NotAffected, true);
        assert_eq!(for_diff(&review(vec![kept, fixed]), LOW), Exit::Clean);
    }

    #[test]
    fn diff_unknown_counts_only_when_open_on_a_moved_pin() {
        let open = change(ChangeKind::Unknown, Status::Unknown, true);
        assert_eq!(for_diff(&review(vec![open.clone()]), LOW), Exit::Undecided);
        // Unknown at BASE, affected at HEAD: introduced over an undecided BASE, and it fails.
        let mut affected = change(ChangeKind::Introduced, Status::Affected, true);
        affected.base_status = Some(Status::Unknown);
        affected.base_undecided = true;
        assert_eq!(
            for_diff(&review(vec![affected.clone()]), LOW),
            Exit::Findings
        );
        let readme = gate(FailOn::High, FailOn::Never);
        assert_eq!(for_diff(&review(vec![affected]), readme), Exit::Findings);
        // Decided clean at HEAD: the bump leaves nothing open.
        let closed = change(ChangeKind::Unknown, Status::NotAffected, true);
        assert_eq!(for_diff(&review(vec![closed]), LOW), Exit::Clean);
        // The pin did not move: not the bump's doing.
        let unmoved = change(ChangeKind::Unknown, Status::Unknown, false);
        assert_eq!(for_diff(&review(vec![unmoved]), LOW), Exit::Clean);
        let only_affected_gate = gate(FailOn::Low, FailOn::Never);
        assert_eq!(
            for_diff(&review(vec![open.clone()]), only_affected_gate),
            Exit::Clean
        );
        let critical_unknown = gate(FailOn::Low, FailOn::Critical);
        assert_eq!(
            for_diff(&review(vec![open.clone()]), critical_unknown),
            Exit::Clean
        );
        // An introduced finding outranks an open unknown one.
        let introduced = change(ChangeKind::Introduced, Status::Affected, true);
        assert_eq!(
            for_diff(&review(vec![open, introduced]), LOW),
            Exit::Findings
        );
    }

    /// BASE's side of a cell of the change table.
    #[derive(Debug, Clone, Copy)]
    enum Base {
        Absent,
        /// No finding, and BASE as a whole undecided (it pins nothing).
        AbsentUndecided,
        Is(Status),
    }

    /// What a cell does to the gate.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Effect {
        None,
        /// Exit 1 at or above `--fail-on`.
        Fails,
        /// Exit 3 at or above `--fail-on-unknown`, when the pin moved.
        Undecided,
    }

    /// The change table of `crate::diff`'s documentation, written out cell by cell: (BASE,
    /// HEAD (`None`: absent), the change and its `base_undecided`, or `None` when not listed,
    /// and what it does to the gate). (unknown, unknown) is listed only when the pin moved.
    /// One cell: BASE, HEAD, the change and its `base_undecided`, the effect.
    type Cell = (Base, Option<Status>, Option<(ChangeKind, bool)>, Effect);

    const TABLE: &[Cell] = {
        use Base::*;
        use ChangeKind::*;
        use Effect::{Fails, Undecided};
        use Status::{Affected as A, NotAffected as N, Unknown as U};
        &[
            (Absent, None, None, Effect::None),
            (Absent, Some(N), None, Effect::None),
            (Absent, Some(U), Some((Unknown, false)), Undecided),
            (Absent, Some(A), Some((Introduced, false)), Fails),
            (AbsentUndecided, None, None, Effect::None),
            (AbsentUndecided, Some(N), None, Effect::None),
            (AbsentUndecided, Some(U), Some((Unknown, true)), Undecided),
            (AbsentUndecided, Some(A), Some((Introduced, true)), Fails),
            (Is(N), None, None, Effect::None),
            (Is(N), Some(N), None, Effect::None),
            (Is(N), Some(U), Some((Unknown, false)), Undecided),
            (Is(N), Some(A), Some((Introduced, false)), Fails),
            (Is(U), None, Some((Unknown, true)), Effect::None),
            (Is(U), Some(N), Some((Unknown, true)), Effect::None),
            (Is(U), Some(U), Some((Unknown, true)), Undecided),
            (Is(U), Some(A), Some((Introduced, true)), Fails),
            (Is(A), None, Some((Fixed, false)), Effect::None),
            (Is(A), Some(N), Some((Fixed, false)), Effect::None),
            (Is(A), Some(U), Some((Unknown, false)), Undecided),
            (Is(A), Some(A), Some((Kept, false)), Effect::None),
        ]
    };

    const FAIL_ON: [FailOn; 5] = [
        FailOn::Low,
        FailOn::Medium,
        FailOn::High,
        FailOn::Critical,
        FailOn::Never,
    ];
    const SEVERITIES: [Severity; 4] = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    fn at_or_above(severity: Severity, threshold: FailOn) -> bool {
        threshold.threshold().is_some_and(|t| severity >= t)
    }

    /// Every cell of the change table, through `diff::compare` and [`for_diff`], under every
    /// `--fail-on` x `--fail-on-unknown`, every severity, a moved or unmoved pin, and
    /// suppressed or not: 20 cells x 5 x 5 x 4 x 2 x 2.
    #[test]
    fn diff_change_table_every_cell_under_every_gate() {
        let mut checked = 0;
        for &(base_side, head_status, expected, effect) in TABLE {
            for severity in SEVERITIES {
                for moved in [true, false] {
                    for suppressed in [false, true] {
                        let with = |status| {
                            let mut f = finding(FA4, status, severity);
                            if suppressed {
                                f.suppressed = Some(suppression());
                            }
                            f
                        };
                        let mut base = TargetReport::new(
                            "tree@BASE".into(),
                            crate::model::TargetKind::SourceTree,
                        );
                        match base_side {
                            Base::Absent => {}
                            Base::AbsentUndecided => {
                                base.undecided = Some("BASE pins nothing".into())
                            }
                            Base::Is(status) => base.findings.push(with(status)),
                        }
                        let mut head = TargetReport::new(
                            "tree@HEAD".into(),
                            crate::model::TargetKind::SourceTree,
                        );
                        head.findings.extend(head_status.map(with));
                        let pins: Vec<PinChange> = if moved {
                            vec![PinChange {
                                component: "flash-attention".into(),
                                change: PinChangeKind::Changed,
                                base: None,
                                head: None,
                                repo_changed: false,
                                fork: None,
                            }]
                        } else {
                            Vec::new()
                        };
                        let changes = crate::diff::compare(&base, &head, &pins);
                        let cell = format!(
                            "{base_side:?} x {head_status:?}, {severity}, moved {moved}, suppressed {suppressed}"
                        );
                        let listed = match (base_side, head_status) {
                            (Base::Is(Status::Unknown), Some(Status::Unknown)) if !moved => None,
                            _ => expected,
                        };
                        let got = changes.first().map(|c| (c.change, c.base_undecided));
                        assert_eq!(got, listed, "{cell}: {changes:#?}");
                        assert!(changes.len() <= 1, "{cell}");
                        for fail_on in FAIL_ON {
                            for fail_on_unknown in FAIL_ON {
                                let want = if suppressed {
                                    Exit::Clean
                                } else {
                                    match effect {
                                        Effect::Fails if at_or_above(severity, fail_on) => {
                                            Exit::Findings
                                        }
                                        Effect::Undecided
                                            if moved && at_or_above(severity, fail_on_unknown) =>
                                        {
                                            Exit::Undecided
                                        }
                                        _ => Exit::Clean,
                                    }
                                };
                                let r = review(changes.clone());
                                assert_eq!(
                                    for_diff(&r, gate(fail_on, fail_on_unknown)),
                                    want,
                                    "{cell}, --fail-on {fail_on:?} --fail-on-unknown {fail_on_unknown:?}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 20 * 4 * 2 * 2 * 5 * 5);
    }

    #[test]
    fn diff_of_a_head_that_pins_nothing_fails_closed() {
        let mut r = review(Vec::new());
        r.undecided = Some("HEAD pins nothing".to_string());
        assert_eq!(for_diff(&r, LOW), Exit::Undecided);
        assert_eq!(for_diff(&r, gate(FailOn::Low, FailOn::Never)), Exit::Clean);
    }

    #[test]
    fn diff_fails_on_a_policy_edit_without_leave() {
        let edit = |allowed| PolicyEdit {
            kind: PolicyEditKind::IgnoreEntry,
            edit: EditKind::Added,
            rule: FA4.to_string(),
            at: ".pinprobe.yaml:3".to_string(),
            matches: Some(1),
            allowed,
        };
        let mut r = review(Vec::new());
        r.policy_edits = vec![edit(false)];
        assert_eq!(for_diff(&r, LOW), Exit::Findings);
        assert_eq!(for_diff(&r, gate(FailOn::Never, FailOn::Low)), Exit::Clean);
        r.policy_edits = vec![edit(true)];
        assert_eq!(for_diff(&r, LOW), Exit::Clean);
    }

    #[test]
    fn verify_and_vector_and_lint_codes() {
        assert_eq!(for_verify(Verdict::Scales), Exit::Clean);
        assert_eq!(for_verify(Verdict::Flat), Exit::Findings);
        for v in [
            Verdict::Inconclusive,
            Verdict::Invalid,
            Verdict::Unsupported,
        ] {
            assert_eq!(for_verify(v), Exit::Undecided);
        }
        assert_eq!(for_vectors(0), Exit::Clean);
        assert_eq!(for_vectors(2), Exit::Findings);
        assert_eq!(for_lint(0), Exit::Clean);
        assert_eq!(for_lint(1), Exit::Error);
    }
}
