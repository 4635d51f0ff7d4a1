//! The one place pinprobe's exit codes live (DESIGN.md, "Contracts").

use crate::model::Severity;

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
/// `None` (`never`) lets that status pass. Pin-hygiene findings (`hygiene/*`) count only with
/// `hygiene_fails` (`--fail-on-hygiene`): a gate that fails on every real vLLM tree because it
/// pins CUTLASS by tag would be switched off.
pub fn for_scan(report: &crate::model::Report, gate: Gate, hygiene_fails: bool) -> Exit {
    use crate::model::Status;
    // Suppressed findings (`.pinprobe.yaml`) keep their status but never set the exit code.
    let at_or_above = |status, threshold: Option<Severity>| {
        threshold.is_some_and(|threshold| {
            report.findings().any(|f| {
                f.status == status
                    && f.severity >= threshold
                    && f.suppressed.is_none()
                    && (hygiene_fails || !f.rule.starts_with("hygiene/"))
            })
        })
    };
    if at_or_above(Status::Affected, gate.affected) {
        Exit::Findings
    } else if at_or_above(Status::Unknown, gate.unknown)
        || (gate.unknown.is_some() && report.targets.iter().any(|t| t.undecided.is_some()))
    {
        Exit::Undecided
    } else {
        Exit::Clean
    }
}

/// The exit status of a pin-bump review (`pinprobe diff`), counting only what the bump changes
/// and leaving suppressed findings out: an `introduced` finding at or above the threshold (1)
/// outranks an `unknown` change at or above it that is still open at HEAD (unknown there, or
/// affected with BASE undecided) on a component whose pin changed, or a HEAD that pins nothing
/// (3). Kept and fixed findings never fail a review: they are not the bump's doing.
pub fn for_diff(review: &crate::model::Review, gate: Gate) -> Exit {
    use crate::model::ChangeKind;
    use crate::model::Status;
    let counted = |threshold: Option<Severity>| {
        review.changes.iter().filter(move |c| {
            c.suppressed.is_none() && threshold.is_some_and(|threshold| c.severity >= threshold)
        })
    };
    // A change that edits its own ignore entries or rule overrides, without the workflow's
    // leave, fails the gate whatever it introduces (when the affected gate is on).
    if gate.affected.is_some() && review.policy_edits.iter().any(|e| !e.allowed) {
        return Exit::Findings;
    }
    if counted(gate.affected).any(|c| c.change == ChangeKind::Introduced) {
        Exit::Findings
    } else if counted(gate.unknown).any(|c| {
        c.change == ChangeKind::Unknown && c.pin_changed && c.status != Status::NotAffected
    }) || (gate.unknown.is_some() && review.undecided.is_some())
    {
        Exit::Undecided
    } else {
        Exit::Clean
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
