//! Rule test vectors (`pinprobe rules test`): each rule's `tests` run through the same
//! evaluation a scan uses, and compared with the status they expect.
//!
//! - `files` vectors run the signature over the given source text (in memory);
//! - `pin` vectors decide through known pins and event commits, and with a clone of the
//!   vector's component (`--repo NAME=PATH`) through ancestry and the signature on the pinned tree;
//! - `symbols` vectors run the symbol signature over the given `nm -D` lines (one library);
//! - `with` gives other components' pins for rules with `requires` (with their clones, if given);
//! - `needs_clone` vectors are skipped, visibly, unless their component's clone is given.

use super::evaluate::{self, OtherPin, Subject};
use super::load::Database;
use super::model::{Rule, TestVector};
use super::signature::symbols::Libraries;
use crate::resolve::Clones;
use crate::resolve::PatchedTree;
use crate::view::SourceFiles;
use std::collections::BTreeMap;

/// What happened to one vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// The rule gave `got`; `why` is the deciding evidence (or what left it undecided).
    Failed {
        got: String,
        why: String,
    },
    /// Not run: the vector needs a clone that was not given.
    Skipped {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorResult {
    pub rule: crate::model::RuleId,
    pub name: String,
    pub expect: String,
    pub outcome: Outcome,
}

/// Source files held in memory (a vector's `files`).
struct MemFiles<'a>(&'a BTreeMap<String, String>);

impl SourceFiles for MemFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.0.get(path).cloned())
    }

    /// A vector's files stand for what an artifact ships (every signature scope applies).
    fn shipped(&self) -> bool {
        true
    }
}

/// A vector's `symbols` (`nm -D` lines) as one library.
struct MemLibrary(Vec<crate::pin::shipped::elf::DynamicSymbol>);

impl MemLibrary {
    fn parse(lines: &[String]) -> Self {
        use crate::pin::shipped::elf::{DynamicSymbol, SymbolKind};
        MemLibrary(
            lines
                .iter()
                .map(|line| {
                    let (letter, name) = line.trim().split_once(' ').unwrap_or(("", line));
                    let kind = match letter {
                        "U" => SymbolKind::Undefined,
                        "w" | "v" => SymbolKind::UndefinedWeak,
                        _ => SymbolKind::Defined,
                    };
                    DynamicSymbol {
                        name: name.trim().to_string(),
                        kind,
                    }
                })
                .collect(),
        )
    }
}

impl Libraries for MemLibrary {
    fn libraries(
        &self,
        pattern: &str,
    ) -> Vec<(
        String,
        Result<Vec<crate::pin::shipped::elf::DynamicSymbol>, String>,
    )> {
        vec![(pattern.replace('*', ""), Ok(self.0.clone()))]
    }
}

/// The component a vector is about: its own `component`, else the one owning the rule's first
/// GIT range, else the one its first package entry names.
pub fn component_of(rule: &Rule, vector: &TestVector, db: &Database) -> Option<String> {
    vector
        .component
        .clone()
        .or_else(|| {
            rule.git_ranges().find_map(|(_, r)| {
                let repo = crate::pin::url::canonical(r.repo.as_deref()?)?;
                db.registry
                    .identify("", Some(&repo))
                    .map(|c| c.name.clone())
            })
        })
        .or_else(|| rule.package_entries().next().map(|(_, c)| c))
}

/// A vector's `version`, as the pinned distribution of each of the rule's package entries for
/// `component` (a version alone is `==` it; anything else is a PEP 440 specifier set). A
/// version that does not parse pins nothing, and the vector then fails visibly.
fn vector_package(
    rule: &Rule,
    vector: &TestVector,
    component: &str,
) -> Vec<crate::model::PackagePin> {
    let Some(version) = vector.version.as_deref() else {
        return Vec::new();
    };
    let allowed =
        crate::pin::python::exactly(version).or_else(|_| crate::pin::python::allowed_by(version));
    let Ok(allowed) = allowed else {
        return Vec::new();
    };
    rule.package_entries()
        .filter(|(_, c)| c == component)
        .map(|(a, _)| crate::model::PackagePin {
            name: a.package.name.clone(),
            allowed: allowed.clone(),
            written: format!("{}{version}", a.package.name),
        })
        .collect()
}

/// Run every vector of every rule.
pub fn run(db: &Database, clones: &Clones) -> Vec<VectorResult> {
    let mut out = Vec::new();
    for loaded in &db.rules {
        for vector in &loaded.rule.database_specific.tests {
            out.push(run_one(&loaded.rule, vector, db, clones));
        }
    }
    out
}

fn run_one(rule: &Rule, vector: &TestVector, db: &Database, clones: &Clones) -> VectorResult {
    let result = |outcome| VectorResult {
        rule: rule.id.clone(),
        name: vector.name.clone(),
        expect: vector.expect.clone(),
        outcome,
    };
    let Some(component) = component_of(rule, vector, db) else {
        return result(Outcome::Failed {
            got: "error".into(),
            why: "no component: the rule has no GIT range with a known repository".into(),
        });
    };
    let clone = clones.get(&component);
    if vector.needs_clone && clone.is_none() {
        return result(Outcome::Skipped {
            reason: format!("needs --repo {component}=PATH"),
        });
    }
    let commit = vector
        .pin
        .as_deref()
        .and_then(|p| gix::ObjectId::from_hex(p.as_bytes()).ok());
    let tree = match (clone, commit) {
        (Some(c), Some(id)) if vector.files.is_empty() && c.has_commit(&id) => Some(
            PatchedTree::new(c, id, &crate::resolve::PatchSet::default()),
        ),
        _ => None,
    };
    let mem = MemFiles(&vector.files);
    let (sources, sources_label): (Option<&dyn SourceFiles>, String) = if !vector.files.is_empty() {
        (Some(&mem), format!("test `{}`'s files", vector.name))
    } else if let Some(t) = &tree {
        (
            Some(t),
            format!("{component} at {}", vector.pin.as_deref().unwrap_or("?")),
        )
    } else {
        (None, String::new())
    };
    let library = MemLibrary::parse(&vector.symbols);
    let subject = Subject {
        component: &component,
        commit,
        commit_unknown: commit
            .is_none()
            .then(|| format!("test `{}` gives no pin", vector.name)),
        clone,
        sources,
        sources_label,
        binaries: (!vector.symbols.is_empty()).then_some(&library as &dyn Libraries),
        packages: Vec::new(),
        package_pins: vector_package(rule, vector, &component),
        no_clone: None,
        recorded: Vec::new(),
        patches: None,
        location: None,
    };
    let others: Vec<OtherPin> = vector
        .with
        .iter()
        .map(|(name, sha)| OtherPin {
            component: name.clone(),
            commit: gix::ObjectId::from_hex(sha.as_bytes()).ok(),
            commit_unknown: Some(format!("test `{}`: `{sha}` is not a full SHA", vector.name)),
            clone: clones.get(name),
        })
        .collect();
    let finding = evaluate::evaluate_with(rule, &subject, &db.registry, &others);
    let got = finding.status.to_string();
    if got == vector.expect {
        return result(Outcome::Passed);
    }
    let why = finding
        .evidence
        .iter()
        .find(|e| Some(e.kind) == finding.decided_by)
        .or_else(|| finding.evidence.first())
        .map(|e| e.detail.clone())
        .unwrap_or_else(|| "no evidence".into());
    result(Outcome::Failed { got, why })
}
