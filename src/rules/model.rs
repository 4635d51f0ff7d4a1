//! The rule model: OSV-shaped YAML deserialised raw, then validated into [`Rule`].
//!
//! OSV fields (`id`, `summary`, `details`, `affected[].ranges[]` with `type: GIT`, `repo` and
//! `events`, `versions`, `references`) keep their OSV names so a rule exports as OSV JSON;
//! pinprobe's own parts sit in `database_specific`.

use super::signature::Signature;
use crate::model::{RuleId, Severity};
use serde::{Deserialize, Serialize};

/// One rule as written in `rules/*.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Always a [`FindingKind::Rule`](crate::model::FindingKind) id, whatever its text.
    #[serde(deserialize_with = "RuleId::deserialize_rule")]
    pub id: RuleId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// OSV `withdrawn`: when the rule was withdrawn. A withdrawn rule stays in the database as
    /// the record that it went away (the feed refuses a database that drops a rule without
    /// one) and judges nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub summary: String,
    #[serde(default)]
    pub details: String,
    pub affected: Vec<Affected>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Reference>,
    pub database_specific: RuleSpecific,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Affected {
    pub package: Package,
    #[serde(default)]
    pub ranges: Vec<Range>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_specific: Option<AffectedSpecific>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    pub ecosystem: String,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum RangeType {
    #[serde(rename = "GIT")]
    Git,
    #[serde(rename = "ECOSYSTEM")]
    Ecosystem,
    #[serde(rename = "SEMVER")]
    Semver,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    #[serde(rename = "type")]
    pub kind: RangeType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub events: Vec<Event>,
}

/// An OSV range event. For GIT ranges every value is a full 40-hex SHA, or `"0"` for
/// `introduced` (the start of history).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    Introduced(String),
    Fixed(String),
    LastAffected(String),
    Limit(String),
}

impl Event {
    pub fn value(&self) -> &str {
        match self {
            Event::Introduced(v) | Event::Fixed(v) | Event::LastAffected(v) | Event::Limit(v) => v,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Event::Introduced(_) => "introduced",
            Event::Fixed(_) => "fixed",
            Event::LastAffected(_) => "last_affected",
            Event::Limit(_) => "limit",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

/// pinprobe's part of one `affected[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AffectedSpecific {
    /// The component (see `rules/components.yaml`) the GIT ranges apply to. On an entry whose
    /// package is a Python distribution (`ecosystem: PyPI`), the component that ships it
    /// (listed under its `packages`): the entry's version ranges then judge that component's
    /// requirement and lock pins, and the rule applies to the component without a GIT range. Ranges are keyed by
    /// repository: a range applies to a component only when its `repo` is the component's
    /// repository or one of its aliases; lint rejects a `component` that does not own the
    /// range's `repo` (a fork is not an alias of its upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// The introducing commit is unknown: `introduced: "0"` stands in, and ancestry alone never
    /// reports `affected`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub introduced_unknown: bool,
    /// Pins known to be affected (exact full SHAs), e.g. the pins of released vLLM versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_affected_pins: Vec<KnownPin>,
    /// Pins known to be affected for which only an abbreviated SHA was ever published. They
    /// match only through a clone that resolves the prefix to exactly one commit, never by text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_affected_prefixes: Vec<KnownPin>,
    /// Fixing commits for which only an abbreviated SHA was ever published (a pin bump quoted
    /// short in a pull request). A clone that resolves the prefix to exactly one commit makes it
    /// a `fixed` event of this entry's GIT ranges; without one it gives no evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_prefixes: Vec<KnownPin>,
    /// Why this entry's ranges are scoped as they are (e.g. "the fork received the bug in the
    /// same merge as its revert"); appended to the ancestry evidence of its ranges.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KnownPin {
    pub commit: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// pinprobe's part of a rule.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpecific {
    pub severity: Severity,
    /// `performance`, `correctness`, `crash`, `build`, ...
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arch: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub symptoms: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub workaround: String,
    /// The bug's shape in source, evaluated on shipped files or on the pinned commit's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
    /// The bug's shape in a shipped shared library's dynamic symbols (wheels, environments,
    /// images; never a source tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbols: Option<super::signature::symbols::SymbolSignature>,
    /// Conditions on other components that must also hold (e.g. vLLM's own revision enables a
    /// code path only from some commit on). Each is a GIT range over another component's pin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    /// Test vectors run by `pinprobe rules test`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestVector>,
}

/// A condition on another component: its pin must be in one of `ranges` (OSV GIT semantics).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub component: String,
    pub ranges: Vec<Range>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One test vector: a pin (or source files) and the status the rule must give it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TestVector {
    pub name: String,
    /// The component the pin belongs to (defaults to the rule's first GIT component).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// A full commit SHA to evaluate (known pins and event commits decide without a clone;
    /// ancestry decides when a clone is given to `rules test --repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// Source files (path relative to the project root -> text) to run the signature on.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub files: std::collections::BTreeMap<String, String>,
    /// A shipped library's dynamic symbols for the rule's `symbols` signature, as `nm -D`
    /// prints them: a type letter (`U` undefined, `w`/`v` weak undefined, any other defined)
    /// and the raw name, e.g. `U _Z12run_mha_fwd_ILi80E...`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// A version (or PEP 440 specifier set, `>=0.6,<0.7`) of the package of the rule's entry
    /// for the vector's component, judged by the entry's version ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Pins of other components, for rules with `requires` (component -> full SHA).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub with: std::collections::BTreeMap<String, String>,
    /// The expected status: affected, not_affected or unknown.
    pub expect: String,
    /// Whether the vector needs a real clone (`rules test --repo`); skipped visibly without.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_clone: bool,
}

impl Rule {
    /// The GIT ranges of the rule with the component they apply to.
    pub fn git_ranges(&self) -> impl Iterator<Item = (&Affected, &Range)> {
        self.affected.iter().flat_map(|a| {
            a.ranges
                .iter()
                .filter(|r| r.kind == RangeType::Git)
                .map(move |r| (a, r))
        })
    }
}

impl Rule {
    /// The entries whose package a component ships (`ecosystem` not GIT, `database_specific`
    /// naming the component), with that component.
    pub fn package_entries(&self) -> impl Iterator<Item = (&Affected, String)> {
        self.affected.iter().filter_map(|a| {
            let component = a.specific().component?;
            (!a.package.ecosystem.eq_ignore_ascii_case("GIT")
                && a.ranges.iter().all(|r| r.kind != RangeType::Git))
            .then_some((a, component))
        })
    }
}

impl Affected {
    pub fn specific(&self) -> AffectedSpecific {
        self.database_specific.clone().unwrap_or_default()
    }
}
