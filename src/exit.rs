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

/// The exit status of a scan: findings at or above the threshold (1) outrank undecided ones (3),
/// which outrank a clean result. `threshold` is `None` for `--fail-on never`.
pub fn for_scan(report: &crate::model::Report, threshold: Option<crate::model::Severity>) -> Exit {
    use crate::model::Status;
    let Some(threshold) = threshold else {
        return Exit::Clean;
    };
    // Suppressed findings (`.pinprobe.yaml`) keep their status but never set the exit code.
    let at_or_above = |status| {
        report
            .findings()
            .any(|f| f.status == status && f.severity >= threshold && f.suppressed.is_none())
    };
    if at_or_above(Status::Affected) {
        Exit::Findings
    } else if at_or_above(Status::Unknown) || report.targets.iter().any(|t| t.undecided.is_some()) {
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
pub fn for_diff(review: &crate::model::Review, threshold: Option<crate::model::Severity>) -> Exit {
    use crate::model::ChangeKind;
    use crate::model::Status;
    let Some(threshold) = threshold else {
        return Exit::Clean;
    };
    // A change that edits its own ignore entries or rule overrides, without the workflow's
    // leave, fails the gate whatever it introduces.
    if review.policy_edits.iter().any(|e| !e.allowed) {
        return Exit::Findings;
    }
    let counted = || {
        review
            .changes
            .iter()
            .filter(move |c| c.suppressed.is_none() && c.severity >= threshold)
    };
    if counted().any(|c| c.change == ChangeKind::Introduced) {
        Exit::Findings
    } else if counted().any(|c| {
        c.change == ChangeKind::Unknown && c.pin_changed && c.status != Status::NotAffected
    }) || review.undecided.is_some()
    {
        Exit::Undecided
    } else {
        Exit::Clean
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
