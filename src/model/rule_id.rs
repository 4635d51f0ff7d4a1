//! What a finding is about ([`FindingKind`]) and the id it carries ([`RuleId`]): a database
//! rule's, or one of pinprobe's own checks (pin hygiene, drift). The kind is part of the id's
//! type, decided once where the id is made or read, so no consumer tests an id's text.

use serde::{Deserialize, Serialize};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// A rule of the database (`PINPROBE-2026-0001`, or a user rule).
    Rule,
    /// A property of a pin that is a problem whatever the database says (a fork, a movable
    /// reference): gated only with `--fail-on-hygiene`.
    Hygiene,
    /// An artifact that was not built from the pin it should have been.
    Drift,
}

impl FindingKind {
    /// The namespace of pinprobe's own checks of this kind (`hygiene`, `drift`); none for rules.
    pub fn namespace(self) -> Option<&'static str> {
        match self {
            FindingKind::Rule => None,
            FindingKind::Hygiene => Some("hygiene"),
            FindingKind::Drift => Some("drift"),
        }
    }
}

/// A finding's id, with its kind: `PINPROBE-2026-0001` (a rule), `hygiene/fork-pin`,
/// `drift/pin-vs-artifact`. Serialized as the id's text (JSON `rule`); read back, the text's
/// namespace gives the kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId {
    kind: FindingKind,
    id: String,
}

impl RuleId {
    /// A database rule's id.
    pub fn rule(id: impl Into<String>) -> RuleId {
        RuleId {
            kind: FindingKind::Rule,
            id: id.into(),
        }
    }

    /// One of pinprobe's own checks of `kind`, named `name` (`fork-pin`): `hygiene/fork-pin`.
    /// A `kind` of [`FindingKind::Rule`] gives the rule id `name`.
    pub fn check(kind: FindingKind, name: &str) -> RuleId {
        RuleId {
            kind,
            id: match kind.namespace() {
                Some(ns) => format!("{ns}/{name}"),
                None => name.to_string(),
            },
        }
    }

    /// An id read as text (a report, an ignore entry): its namespace, if any, gives the kind.
    pub fn parse(text: &str) -> RuleId {
        let kind = [FindingKind::Hygiene, FindingKind::Drift]
            .into_iter()
            .find(|k| {
                k.namespace()
                    .and_then(|ns| text.strip_prefix(ns))
                    .is_some_and(|rest| rest.starts_with('/'))
            })
            .unwrap_or(FindingKind::Rule);
        RuleId {
            kind,
            id: text.to_string(),
        }
    }

    /// A database rule's id read from its file (`id:`), a rule whatever its text, as
    /// [`RuleId::rule`] makes it (`#[serde(deserialize_with)]` on the rule model).
    pub fn deserialize_rule<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<RuleId, D::Error> {
        String::deserialize(deserializer).map(RuleId::rule)
    }

    pub fn kind(&self) -> FindingKind {
        self.kind
    }

    pub fn as_str(&self) -> &str {
        &self.id
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id)
    }
}

impl std::ops::Deref for RuleId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.id
    }
}

impl AsRef<str> for RuleId {
    fn as_ref(&self) -> &str {
        &self.id
    }
}

impl From<&str> for RuleId {
    fn from(text: &str) -> RuleId {
        RuleId::parse(text)
    }
}

impl From<String> for RuleId {
    fn from(text: String) -> RuleId {
        RuleId::parse(&text)
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.id == other
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.id == *other
    }
}

impl PartialEq<String> for RuleId {
    fn eq(&self, other: &String) -> bool {
        &self.id == other
    }
}

impl PartialEq<RuleId> for String {
    fn eq(&self, other: &RuleId) -> bool {
        *self == other.id
    }
}

impl PartialEq<RuleId> for &str {
    fn eq(&self, other: &RuleId) -> bool {
        *self == other.id
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.id)
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RuleId, D::Error> {
        String::deserialize(deserializer).map(RuleId::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_comes_from_how_the_id_was_made_or_its_namespace() {
        let fork = RuleId::check(FindingKind::Hygiene, "fork-pin");
        assert_eq!(fork.as_str(), "hygiene/fork-pin");
        assert_eq!(fork.kind(), FindingKind::Hygiene);
        assert_eq!(RuleId::parse("hygiene/fork-pin"), fork);
        let drift = RuleId::check(FindingKind::Drift, "pin-vs-artifact");
        assert_eq!(drift.to_string(), "drift/pin-vs-artifact");
        assert_eq!(
            RuleId::from("drift/pin-vs-artifact").kind(),
            FindingKind::Drift
        );
        assert_eq!(RuleId::check(FindingKind::Rule, "R-1"), RuleId::rule("R-1"));
        for rule in [
            "PINPROBE-2026-0001",
            "hygiene",
            "hygienic/x",
            "drifted/x",
            "",
        ] {
            assert_eq!(RuleId::parse(rule).kind(), FindingKind::Rule, "{rule}");
        }
    }

    #[test]
    fn serialized_as_its_text() {
        let id = RuleId::check(FindingKind::Hygiene, "short-sha");
        let json = serde_json::to_string(&id).expect("serializes");
        assert_eq!(json, "\"hygiene/short-sha\"");
        let back: RuleId = serde_json::from_str(&json).expect("reads back");
        assert_eq!(
            (back.kind(), back.as_str()),
            (FindingKind::Hygiene, "hygiene/short-sha")
        );
        let text = String::from("hygiene/short-sha");
        assert_eq!(id, "hygiene/short-sha");
        assert_eq!("hygiene/short-sha", id);
        assert_eq!(id, text);
        assert_eq!(text, id);
        assert_ne!(id, "hygiene/fork-pin");
    }
}
