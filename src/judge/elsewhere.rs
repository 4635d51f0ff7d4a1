//! Rules that do not apply to a pin's component but can still bite it: a commit id is global, so
//! a pin at a commit some rule lists as a known affected pin (under another component's name)
//! is affected ([`known_pin`]), and a GIT_TAG an input can set to any value may be one
//! ([`any_value`]).

use crate::model::{Evidence, EvidenceKind, Finding, Location, Pin, Possible, Status};
use crate::rules::model::Rule;

/// A rule that does not apply to the pin's component but lists its commit as a known affected
/// pin: a commit id is global, so the pin is affected whatever it is called. `None` when the
/// rule does not list `commit`.
pub fn known_pin(rule: &Rule, pin: &Pin, commit: &str) -> Option<Finding> {
    let (affected, known) = rule.affected.iter().find_map(|a| {
        a.specific()
            .known_affected_pins
            .iter()
            .find(|k| k.commit.eq_ignore_ascii_case(commit))
            .cloned()
            .map(|k| (a, k))
    })?;
    let listed_for = affected
        .specific()
        .component
        .clone()
        .or_else(|| rule.git_ranges().find_map(|(_, r)| r.repo.clone()))
        .unwrap_or_else(|| affected.package.name.clone());
    let note = if known.note.is_empty() {
        String::new()
    } else {
        format!(" ({})", known.note)
    };
    let evidence = Evidence {
        kind: EvidenceKind::KnownPin,
        status: Status::Affected,
        detail: format!(
            "pin {commit} is a known affected pin{note}, listed for {listed_for}; pinned here as `{}`{}: the names differ",
            pin.declared_name,
            pin.repo
                .as_deref()
                .map(|r| format!(" from {r}"))
                .unwrap_or_default()
        ),
        file: Some(pin.file.clone()),
        line: Some(pin.line),
    };
    let location = Location {
        file: pin.file.clone(),
        line: pin.line,
    };
    Some(super::decided(
        rule,
        pin.component.clone(),
        vec![evidence],
        Some(location),
    ))
}

/// A rule that does not apply to the pin's component, on a GIT_TAG an input can set to any
/// value (`value`): the rule's known affected pins are among the values, so `unknown`.
pub fn any_value(rule: &Rule, pin: &Pin, value: &Possible) -> Finding {
    let evidence = Evidence {
        kind: EvidenceKind::Configuration,
        status: Status::Unknown,
        detail: format!(
            "GIT_TAG of `{}` can be {}: a commit this rule lists as a known affected pin is one of them, whatever the component is called",
            pin.declared_name,
            value.shown()
        ),
        file: Some(value.file.clone()),
        line: Some(value.line),
    };
    let location = Location {
        file: value.file.clone(),
        line: value.line,
    };
    super::decided(rule, pin.component.clone(), vec![evidence], Some(location))
}
