//! What a configuration fetches: each fetch's values, as exact texts, finite sets of
//! alternatives (each with the joined conditions selecting it) or unknown.

use super::value::{Input, Val};
use super::{CmakeError, Command};
use crate::view::View;

/// A value: exact when `inputs` is empty; else the default configuration's value (when every
/// input has a default) that the inputs can change: to any value, or, when `alternatives` is
/// not empty, only to one of those.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Value {
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Input>,
    /// When every input is a joined condition whose sides each gave a known value: every value
    /// it can take (its own text among them), each with the join outcomes that select it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternative>,
}

/// One literal value a [`Value`] can take.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Alternative {
    pub text: String,
    pub when: Vec<JoinOutcome>,
}

/// The outcome of a joined condition (past the decision depth, or one without a default).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JoinOutcome {
    /// Which join of its configuration: alternatives of two values that need different
    /// outcomes of one join never occur together.
    pub join: u32,
    /// `file:line: if(...)` as written.
    pub condition: String,
    pub outcome: bool,
    /// Whether it is the outcome with every input at its default.
    pub default: bool,
}

impl Value {
    pub(super) fn of(v: &Val) -> Value {
        let alternatives = match v.finite() {
            Some(alts) if !v.taint.is_empty() => alts
                .into_iter()
                .map(|a| Alternative {
                    text: a.text,
                    when: a
                        .when
                        .into_iter()
                        .map(|o| JoinOutcome {
                            join: o.join,
                            condition: o.what,
                            outcome: o.outcome,
                            default: o.default_side,
                        })
                        .collect(),
                })
                .collect(),
            _ => Vec::new(),
        };
        Value {
            text: v.text.clone(),
            inputs: v.taint.iter().cloned().collect(),
            alternatives,
        }
    }

    pub fn is_exact(&self) -> bool {
        self.inputs.is_empty()
    }

    /// Every value it can take, each with the join outcomes selecting it; `None`: any value.
    pub fn finite(&self) -> Option<Vec<Alternative>> {
        if self.inputs.is_empty() {
            return Some(vec![Alternative {
                text: self.text.clone(),
                when: Vec::new(),
            }]);
        }
        (!self.alternatives.is_empty()).then(|| self.alternatives.clone())
    }
}

impl Alternative {
    /// Whether this and `other` can occur together (no join with two outcomes).
    pub fn compatible(&self, other: &Alternative) -> bool {
        self.when.iter().all(|a| {
            other
                .when
                .iter()
                .all(|b| a.join != b.join || a.outcome == b.outcome)
        })
    }

    /// Whether every join took its default outcome.
    pub fn is_default(&self) -> bool {
        self.when.iter().all(|w| w.default)
    }
}

/// What one configuration fetches for one name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fetch {
    pub command: Command,
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub name_inputs: Vec<Input>,
    /// The declaring call (the `FetchContent_Declare` whose details are used).
    pub file: String,
    pub line: u32,
    pub repository: Option<Value>,
    pub tag: Option<Value>,
    pub tag_line: Option<u32>,
    pub url: Option<Value>,
    /// A local directory used instead of downloading (`SOURCE_DIR` without a download, or
    /// `FETCHCONTENT_SOURCE_DIR_<NAME>`).
    pub local_source: Option<Value>,
    /// Inputs that would replace the download by a local directory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bypass: Vec<Input>,
    /// The call's evaluated arguments (text, line).
    #[serde(skip)]
    pub args: Vec<(String, u32)>,
    /// Where `FetchContent_MakeAvailable` / `_Populate(name)` fetched it.
    pub populated_at: Option<(String, u32)>,
    /// Conditions (joined, see the evaluator) under which alone this fetch happens; empty when
    /// it happens in this configuration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[serde(serialize_with = "as_text")]
    pub only_if: Vec<Input>,
}

impl Fetch {
    /// Patch files its `PATCH_COMMAND` (or CPM `PATCHES`) applies, view-relative where the
    /// evaluated path lies inside the tree (globs and patch directories listed through the
    /// view); others as written (relative to the dependency's own source, where the patch step
    /// runs). Order kept, duplicates dropped.
    pub fn patches(&self, view: &dyn View) -> Result<Vec<String>, CmakeError> {
        let mut out: Vec<String> = Vec::new();
        let mut in_patch = false;
        for (i, (text, _)) in self.args.iter().enumerate() {
            if i == 0 {
                continue;
            }
            if super::declare::is_keyword(text) && !(text == "COMMAND" && in_patch) {
                in_patch = text == "PATCH_COMMAND" || text == "PATCHES";
                continue;
            }
            if !in_patch {
                continue;
            }
            let mut push = |p: String| {
                if !out.contains(&p) {
                    out.push(p);
                }
            };
            match super::paths::view_path(text).filter(|p| !p.is_empty()) {
                Some(path) if super::paths::is_glob(&path) => {
                    super::paths::glob(view, &path, false)?
                        .into_iter()
                        .filter(|f| super::paths::is_patch(f))
                        .for_each(&mut push);
                }
                Some(path) if super::paths::is_patch(&path) => push(path),
                Some(path) => view
                    .files_under(&path)?
                    .into_iter()
                    .filter(|f| super::paths::is_patch(f))
                    .for_each(&mut push),
                None => {
                    // `-DPATCH=x.patch` names the file after `=`.
                    let file = text.rsplit('=').next().unwrap_or(text);
                    if super::paths::is_patch(file) {
                        push(file.to_string());
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Conditions serialised as they read (`the outcome of file:line: if(...)`).
fn as_text<S: serde::Serializer>(conds: &[Input], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(conds.iter().map(ToString::to_string))
}
