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
