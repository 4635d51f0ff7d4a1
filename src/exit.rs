//! The one place pinprobe's exit codes live (DESIGN.md, "Contracts").

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
pub fn for_scan(report: &crate::report::Report, threshold: Option<crate::rules::Severity>) -> Exit {
    use crate::rules::evaluate::Status;
    let Some(threshold) = threshold else {
        return Exit::Clean;
    };
    let at_or_above = |status| {
        report
            .findings()
            .any(|f| f.status == status && f.severity >= threshold)
    };
    if at_or_above(Status::Affected) {
        Exit::Findings
    } else if at_or_above(Status::Unknown) || report.targets.iter().any(|t| t.undecided.is_some()) {
        Exit::Undecided
    } else {
        Exit::Clean
    }
}
