//! What a gate counts ([`GateView`]): the thresholds of a run and whether pin-hygiene findings
//! count, and the [`GateVerdict`] they give a scan or a review. `crate::exit` maps the verdict
//! to the exit code and the renderers print it as the headline, so the two always tell one
//! story: a report never says AFFECTED for a run that exits 3, or counts as affected the
//! pin-hygiene findings that never fail the gate.

use super::{
    ChangeKind, Finding, FindingKind, Report, Review, RuleId, Severity, Status, TargetReport,
};

/// How a pin-hygiene finding is labelled wherever a status would be shown.
pub const HYGIENE_LABEL: &str = "pin-hygiene";

/// Whether `rule` is a pin-hygiene check (advice about how a pin is written: a movable tag, a
/// short SHA, a fork), by its kind, not by how its id is spelled.
pub fn is_hygiene(rule: &RuleId) -> bool {
    rule.kind() == FindingKind::Hygiene
}

/// The outcome of a gate, worst first; `crate::exit` maps it to 1, 3 and 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateVerdict {
    /// Something counted fails the gate (exit 1).
    Fails,
    /// Something counted is undecided (exit 3).
    Undecided,
    /// Nothing counted at or above the thresholds (exit 0).
    Passes,
}

impl GateVerdict {
    /// The headline word.
    pub fn word(self) -> &'static str {
        match self {
            GateVerdict::Fails => "AFFECTED",
            GateVerdict::Undecided => "UNDECIDED",
            GateVerdict::Passes => "PASSES",
        }
    }

    /// The exit code the verdict gives (`crate::exit` holds the mapping; this is for the
    /// headline).
    pub fn code(self) -> i32 {
        match self {
            GateVerdict::Fails => 1,
            GateVerdict::Undecided => 3,
            GateVerdict::Passes => 0,
        }
    }
}

/// The gate of one run: the least severity of an `affected` finding that fails it and of an
/// `unknown` one (`None`: never), and whether pin-hygiene findings count (`--fail-on-hygiene`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateView {
    pub affected: Option<Severity>,
    pub unknown: Option<Severity>,
    pub hygiene_fails: bool,
}

impl Default for GateView {
    /// The command line's defaults: `--fail-on low`, `--fail-on-unknown` the same, hygiene
    /// reported without failing.
    fn default() -> Self {
        GateView {
            affected: Some(Severity::Low),
            unknown: Some(Severity::Low),
            hygiene_fails: false,
        }
    }
}

/// What one target's findings add up to, as the gate counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Unsuppressed affected findings of real rules (pin hygiene apart).
    pub affected: usize,
    /// Unsuppressed undecided findings of real rules.
    pub unknown: usize,
    pub not_affected: usize,
    /// Unsuppressed pin-hygiene findings that are open (affected or unknown).
    pub hygiene: usize,
    pub suppressed: usize,
}

impl GateView {
    fn at_or_above(threshold: Option<Severity>, severity: Severity) -> bool {
        threshold.is_some_and(|t| severity >= t)
    }

    /// Whether `f` sets the exit code of a scan: unsuppressed, at or above its status's
    /// threshold, and not pin hygiene unless hygiene counts.
    pub fn counts(&self, f: &Finding) -> bool {
        let threshold = match f.status {
            Status::Affected => self.affected,
            Status::Unknown => self.unknown,
            Status::NotAffected => return false,
        };
        f.suppressed.is_none()
            && Self::at_or_above(threshold, f.severity)
            && (self.hygiene_fails || !is_hygiene(&f.rule))
    }

    /// The verdict on one target of a scan.
    pub fn target(&self, t: &TargetReport) -> GateVerdict {
        let counted = |s: Status| t.findings.iter().any(|f| f.status == s && self.counts(f));
        if counted(Status::Affected) {
            GateVerdict::Fails
        } else if counted(Status::Unknown) || (self.unknown.is_some() && t.undecided.is_some()) {
            GateVerdict::Undecided
        } else {
            GateVerdict::Passes
        }
    }

    /// The verdict on a scan: its worst target's.
    pub fn report(&self, r: &Report) -> GateVerdict {
        r.targets
            .iter()
            .map(|t| self.target(t))
            .min()
            .unwrap_or(GateVerdict::Passes)
    }

    /// The verdict on a review (the table in `crate::diff`'s documentation): an unallowed
    /// policy edit or an `introduced` change at or above `--fail-on` fails; a change still
    /// unknown at HEAD on a moved pin at or above `--fail-on-unknown`, or a HEAD that pins
    /// nothing, is undecided. Kept, fixed and suppressed changes never count. Pin hygiene a
    /// change introduces counts like any finding (a move to a fork is the change's doing).
    pub fn review(&self, r: &Review) -> GateVerdict {
        if self.affected.is_some() && r.policy_edits.iter().any(|e| !e.allowed) {
            return GateVerdict::Fails;
        }
        let open = |threshold| {
            r.changes
                .iter()
                .filter(move |c| c.suppressed.is_none() && Self::at_or_above(threshold, c.severity))
        };
        if open(self.affected).any(|c| c.change == ChangeKind::Introduced) {
            GateVerdict::Fails
        } else if open(self.unknown).any(|c| {
            c.change == ChangeKind::Unknown && c.pin_changed && c.status == Status::Unknown
        }) || (self.unknown.is_some() && r.undecided.is_some())
        {
            GateVerdict::Undecided
        } else {
            GateVerdict::Passes
        }
    }

    /// The counts of one target, pin hygiene apart.
    pub fn tally(t: &TargetReport) -> Tally {
        let mut tally = Tally::default();
        for f in &t.findings {
            if f.suppressed.is_some() {
                tally.suppressed += 1;
            } else if f.status == Status::NotAffected {
                tally.not_affected += 1;
            } else if is_hygiene(&f.rule) {
                tally.hygiene += 1;
            } else if f.status == Status::Affected {
                tally.affected += 1;
            } else {
                tally.unknown += 1;
            }
        }
        tally
    }

    /// The label of a finding's status where it is shown: `pin-hygiene` for hygiene checks.
    pub fn label(f: &Finding) -> String {
        if is_hygiene(&f.rule) && f.status != Status::NotAffected {
            HYGIENE_LABEL.to_string()
        } else {
            f.status.to_string()
        }
    }
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.affected += other.affected;
        self.unknown += other.unknown;
        self.not_affected += other.not_affected;
        self.hygiene += other.hygiene;
        self.suppressed += other.suppressed;
    }

    /// `N affected, N unknown, N not affected[, N pin-hygiene][, N suppressed]`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} affected, {} unknown, {} not affected",
            self.affected, self.unknown, self.not_affected
        );
        if self.hygiene > 0 {
            s.push_str(&format!(", {} {HYGIENE_LABEL}", self.hygiene));
        }
        if self.suppressed > 0 {
            s.push_str(&format!(", {} suppressed", self.suppressed));
        }
        s
    }
}
