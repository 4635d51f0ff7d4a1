//! Source signatures: structural patterns over Python source, written as data in a rule and
//! evaluated with tree-sitter on shipped files or on a pinned commit's tree.
//!
//! A signature lists conditions; each names one file and one matcher. The bug's shape is
//! present when every condition holds. Matchers follow ast-grep's rule syntax, evaluated on
//! tree-sitter-python's named nodes:
//!
//! ```yaml
//! signature:
//!   language: python
//!   conditions:
//!     - id: sm90-call-drops-num-splits       # unique, used in reasons
//!       file: flash_attn/cute/flash_fwd_sm90.py
//!       exists:                              # some node matches (or `absent:`: none does)
//!         kind: call                         # node kind (quote "true"/"false"/"none")
//!         name: BlockInfo                    # `name` field, or a call's callee (last segment)
//!         arg: { position: 4, keyword: is_split_kv, value: { not: { kind: "false" } } }
//!         not: { arg: { keyword: num_splits } }
//! ```
//!
//! Matcher keys, all optional, all given ones must hold: `kind`, `text` (exact node text),
//! `regex` (searched in the node text), `name`, `field` (the node sits in this field of its
//! parent), `child` / `has` / `inside` (a direct child / a descendant / an ancestor matches),
//! `not`, `all: [..]`, `any: [..]`, and `arg: { position, keyword, value }` (a `call` node's
//! positional argument at 0-based `position`, or else its keyword argument `keyword`, exists and
//! its value matches `value` if given).
//!
//! Matching is three-valued: a `call` whose `*args` / `**kwargs` may supply the argument asked
//! for, or whose callee is not a plain name, *may* match; a condition whose best node may match
//! is undecidable (see `matcher.rs`). A call's `name` sees through import aliases
//! (`from m import BlockInfo as BI`, `import m as x`) and local assignments (`BI = BlockInfo`).
//!
//! Evaluation reads and parses each file once. A missing, unreadable, oversized or unparsable
//! file (any syntax error) makes its conditions undecidable; so does running out of the step
//! budget. Any undecidable condition makes the whole outcome [`Outcome::Undecidable`], even if
//! another condition failed: a missing file usually means the tree is not laid out as the rule
//! expects, so the other answers cannot be trusted either (fail closed). Otherwise any failed
//! condition gives [`Outcome::Absent`], and all holding gives [`Outcome::Present`].
//!
//! One exception, decided before any parse (`prefilter.rs`): when every file is there (read,
//! within the parse limit) and an `exists` condition needs a literal its file's text does not
//! hold (`text: num_splits` in a file that never says `num_splits`), no parse of that file,
//! recovered or not, could match it: the outcome is [`Outcome::Absent`] without parsing, even
//! where a parse would have found a syntax error, a splat or a runaway search elsewhere.

mod compile;
mod matcher;
pub mod memo;
mod prefilter;
pub mod symbols;
#[cfg(test)]
mod tests;
mod tree;

use crate::view::SourceFiles;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use compile::Mode;
use matcher::{Found, STEP_BUDGET, Search};
use tree::SourceTree;

/// A rule's signature: conditions over named files that together identify the bug's shape.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    pub language: Language,
    /// Where the signature applies; left out, on shipped files and on pinned trees alike.
    #[serde(default, skip_serializing_if = "Scope::is_any")]
    pub scope: Scope,
    /// All must hold for the shape to be present.
    pub conditions: Vec<Condition>,
}

/// The sources a signature is evaluated on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Shipped files and pinned commits' trees.
    #[default]
    Any,
    /// Only the files an artifact ships (its shape was read from shipped files; a pinned tree
    /// of an older layout, which may lack the file, is left to ancestry).
    Shipped,
}

impl Scope {
    fn is_any(&self) -> bool {
        *self == Scope::Any
    }
}

/// The language a signature's files are parsed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
}

/// One file and what must (or must not) be in it. Exactly one of `exists` and `absent` is set.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub id: String,
    /// Relative to the kernel project's root, `/`-separated.
    pub file: String,
    /// Holds when some node in the file matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<Matcher>,
    /// Holds when no node in the file matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<Matcher>,
}

/// A structural pattern over one syntax node; every key given must hold on the node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// tree-sitter-python node kind, e.g. `call`, `class_definition`, `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The node's exact source text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A regex that must match somewhere in the node's source text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// The text of the node's `name` field; for a `call`, the callee's identifier or the last
    /// segment of an attribute callee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The node sits in this field of its parent (`left`, `right`, `body`, `arguments`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Some argument of a `call` node matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<Box<ArgMatcher>>,
    /// Some direct named child matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<Box<Matcher>>,
    /// Some named descendant matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has: Option<Box<Matcher>>,
    /// Some named ancestor matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside: Option<Box<Matcher>>,
    /// The node does not match this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<Matcher>>,
    /// The node matches every one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<Vec<Matcher>>,
    /// The node matches at least one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any: Option<Vec<Matcher>>,
}

impl Matcher {
    fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// An argument of a `call`: positional at `position` (0-based, counting positional arguments
/// only), or else the keyword argument `keyword`; either form counts. Absent argument: no match.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArgMatcher {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// What the argument's value must match; left out, the argument only has to be there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Matcher>,
}

/// One place where a condition matched. `exists` conditions give one each (the first matching
/// node); `absent` conditions have no place to point at and give none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub condition: String,
    pub file: String,
    /// 1-based line where the matching node starts.
    pub line: u32,
}

/// What evaluating a signature found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Every condition holds: the bug's shape is in the source.
    Present { hits: Vec<Hit> },
    /// A condition does not hold, on files that exist and parse.
    Absent { reason: String },
    /// A file is missing, unreadable or does not parse: the signature cannot decide.
    Undecidable { reason: String },
}

/// A signature that cannot be used (unknown node kind or field, bad regex, bad shape).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SignatureError {
    pub message: String,
}

impl Signature {
    /// The files the signature reads, each once, in the order conditions name them.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for condition in &self.conditions {
            if !files.contains(&condition.file) {
                files.push(condition.file.clone());
            }
        }
        files
    }

    /// Check that the signature is well-formed: at least one condition, unique ids, relative
    /// paths, one of `exists`/`absent` each, kinds and fields known to tree-sitter-python,
    /// regexes that compile, no empty matcher or list, nesting at most 64 deep.
    pub fn validate(&self) -> Result<(), SignatureError> {
        compile::compile(self).map(drop)
    }

    /// Evaluate the signature over `source`; see the module docs for how outcomes combine.
    /// Every file is read once; an outcome on the same file contents is reused ([`memo`]).
    pub fn evaluate(&self, source: &dyn SourceFiles) -> Outcome {
        let files = self.files();
        let read: Vec<(&str, Result<Option<String>, String>)> =
            files.iter().map(|f| (f.as_str(), source.read(f))).collect();
        let texts: Option<Vec<(&str, &str)>> = read
            .iter()
            .map(|(f, r)| match r {
                Ok(Some(text)) => Some((*f, text.as_str())),
                _ => None,
            })
            .collect();
        // Missing or unreadable files are not remembered: they cost no parse.
        let key = texts.map(|texts| memo::key(self, &texts));
        // One parse per signature and contents per run: a worker scanning a second copy of the
        // same files (two identical wheels) waits for the first, then reuses its outcome.
        let _flight = key.as_ref().map(memo::flight);
        if let Some(hit) = key.as_ref().and_then(memo::get) {
            return hit;
        }
        let outcome = self.evaluate_read(&Read(read), true);
        if let Some(key) = key {
            memo::put(key, &outcome);
        }
        outcome
    }

    /// The outcome on files already read; `prefilter`: decide from the text first where it can
    /// (off only to check, in tests, that it decides as a parse would).
    fn evaluate_read(&self, source: &dyn SourceFiles, prefilter: bool) -> Outcome {
        let compiled = match compile::compile(self) {
            Ok(compiled) => compiled,
            Err(e) => {
                return Outcome::Undecidable {
                    reason: format!("invalid signature: {e}"),
                };
            }
        };
        // A condition the text alone proves false (a literal every match needs is not in its
        // file) decides the outcome without a parse, when every file is there to be parsed:
        // a missing, unreadable or oversized file still makes it undecidable.
        let mut text_failed = Vec::new();
        let mut all_there = prefilter;
        for (condition, check) in self.conditions.iter().zip(&compiled).filter(|_| prefilter) {
            match source.read(&condition.file) {
                Ok(Some(text)) if text.len() <= tree::MAX_FILE_BYTES => {
                    if check.mode == Mode::Exists
                        && !prefilter::may_match(&prefilter::requirement(&check.matcher), &text)
                    {
                        text_failed.push(format!(
                            "condition `{}`: no match in `{}`",
                            condition.id, condition.file
                        ));
                    }
                }
                _ => all_there = false,
            }
        }
        if all_there && !text_failed.is_empty() {
            return Outcome::Absent {
                reason: text_failed.join("; "),
            };
        }
        let mut parsed: HashMap<&str, Result<SourceTree, String>> = HashMap::new();
        let mut reported: Vec<&str> = Vec::new();
        let mut hits = Vec::new();
        let mut failed = Vec::new();
        let mut undecidable = Vec::new();
        for (condition, check) in self.conditions.iter().zip(&compiled) {
            let file = condition.file.as_str();
            let tree = parsed.entry(file).or_insert_with(|| load(source, file));
            let tree = match tree {
                Ok(tree) => tree,
                Err(reason) => {
                    if !reported.contains(&file) {
                        reported.push(file);
                        undecidable.push(reason.clone());
                    }
                    continue;
                }
            };
            let id = &condition.id;
            match (
                check.mode,
                Search::new(tree, STEP_BUDGET).first_match(&check.matcher),
            ) {
                (_, Err(matcher::Exhausted)) => undecidable.push(format!(
                    "condition `{id}`: step budget exhausted on `{file}` \
                     (file too large or too deeply nested for this matcher)"
                )),
                (Mode::Exists, Ok(Found::Match(index))) => hits.push(Hit {
                    condition: id.clone(),
                    file: file.to_owned(),
                    line: tree.node(index).line,
                }),
                (Mode::Exists, Ok(Found::None)) => {
                    failed.push(format!("condition `{id}`: no match in `{file}`"));
                }
                (Mode::Absent, Ok(Found::None)) => {}
                (Mode::Absent, Ok(Found::Match(index))) => failed.push(format!(
                    "condition `{id}`: `{file}` line {} matches a pattern that must be absent",
                    tree.node(index).line
                )),
                (_, Ok(Found::Maybe(index))) => undecidable.push(format!(
                    "condition `{id}`: `{file}` line {} may match and the matcher cannot tell \
                     (an argument splat, or a callee that is not a plain name)",
                    tree.node(index).line
                )),
            }
        }
        if !undecidable.is_empty() {
            Outcome::Undecidable {
                reason: undecidable.join("; "),
            }
        } else if !failed.is_empty() {
            Outcome::Absent {
                reason: failed.join("; "),
            }
        } else {
            Outcome::Present { hits }
        }
    }
}

/// Files already read, served again without a second read.
struct Read<'a>(Vec<(&'a str, Result<Option<String>, String>)>);

impl SourceFiles for Read<'_> {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        self.0
            .iter()
            .find(|(f, _)| *f == path)
            .map_or(Ok(None), |(_, r)| r.clone())
    }
}

/// Read and parse one file; the error is a reason naming the file.
fn load(source: &dyn SourceFiles, file: &str) -> Result<SourceTree, String> {
    match source.read(file) {
        Err(e) => Err(format!("`{file}` could not be read: {e}")),
        Ok(None) => Err(format!("`{file}` does not exist")),
        Ok(Some(text)) => SourceTree::parse(text).map_err(|e| format!("`{file}` {e}")),
    }
}
