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

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

    fn fa4() -> Rule {
        let db = crate::rules::load(None).expect("built-in rules").0;
        db.rules
            .iter()
            .find(|l| l.rule.id == "PINPROBE-2026-0001")
            .map(|l| l.rule.clone())
            .expect("the FA4 rule is built in")
    }

    fn pin(repo: Option<&str>) -> Pin {
        let mut pin = Pin::shipped(
            "my-attention",
            "cmake/x.cmake",
            None,
            None,
            crate::model::FoundBy::Cmake,
        );
        pin.declared_name = "my-fa".into();
        pin.repo = repo.map(String::from);
        pin.line = 11;
        pin
    }

    #[test]
    fn a_listed_commit_is_affected_and_says_where_it_is_listed() {
        let rule = fa4();
        let f = known_pin(&rule, &pin(None), &KNOWN.to_ascii_uppercase()).expect("listed");
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::KnownPin));
        assert_eq!(f.rule, rule.id);
        assert_eq!(f.severity, rule.database_specific.severity);
        assert_eq!(f.summary, rule.summary);
        assert_eq!(
            f.evidence[0].detail,
            format!(
                "pin {} is a known affected pin (vLLM 0.30.0 (PR #54819)), listed for flash-attention; pinned here as `my-fa`: the names differ",
                KNOWN.to_ascii_uppercase()
            )
        );
        assert_eq!(
            (f.evidence[0].file.as_deref(), f.evidence[0].line),
            (Some("cmake/x.cmake"), Some(11))
        );
        assert_eq!(f.location.map(|l| l.line), Some(11));
        assert_eq!(known_pin(&rule, &pin(None), &"e".repeat(40)), None);
    }

    #[test]
    fn a_listed_pin_without_a_note_or_component_names_what_it_can() {
        let mut rule = fa4();
        for specific in rule
            .affected
            .iter_mut()
            .filter_map(|a| a.database_specific.as_mut())
        {
            for k in &mut specific.known_affected_pins {
                k.note.clear();
            }
            specific.component = None;
        }
        let f = known_pin(&rule, &pin(Some("https://x.invalid/r.git")), KNOWN).expect("listed");
        let detail = &f.evidence[0].detail;
        assert!(
            detail.starts_with(&format!("pin {KNOWN} is a known affected pin, listed for ")),
            "{detail}"
        );
        assert!(
            detail.ends_with("from https://x.invalid/r.git: the names differ"),
            "{detail}"
        );
        assert!(!detail.contains("listed for flash-attention;"), "{detail}");
    }

    #[test]
    fn any_value_is_unknown_at_the_value() {
        let rule = fa4();
        let value = Possible {
            reference: None,
            set_by: vec!["-DFA_TAG".into()],
            commit: None,
            repo: None,
            url: None,
            url_hash: None,
            default: true,
            conditions: Vec::new(),
            file: "cmake/y.cmake".into(),
            line: 2,
            release: None,
        };
        let f = any_value(&rule, &pin(None), &value);
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert_eq!(f.component, "my-attention");
        assert_eq!(
            f.evidence[0].detail,
            "GIT_TAG of `my-fa` can be any value (set by -DFA_TAG): a commit this rule lists as a known affected pin is one of them, whatever the component is called"
        );
        assert_eq!(
            f.location,
            Some(Location {
                file: "cmake/y.cmake".into(),
                line: 2
            })
        );
    }
}
