//! Checking a signature against the grammar and turning its matchers into a form ready to run:
//! node kinds and field names exist in tree-sitter-python, regexes compile, nesting is bounded,
//! condition ids are unique and file paths are relative.

use std::collections::HashSet;

use regex::Regex;

use super::tree::python;
use super::{ArgMatcher, Condition, Matcher, Signature, SignatureError};

/// Deepest matcher nesting a rule may use; deeper rules are refused rather than risking the stack.
pub(super) const MAX_MATCHER_DEPTH: usize = 64;

/// A condition ready to run.
#[derive(Debug)]
pub(super) struct CompiledCondition {
    pub mode: Mode,
    pub matcher: Compiled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Some node matches.
    Exists,
    /// No node matches.
    Absent,
}

/// A [`Matcher`] whose regex is compiled and whose kinds and fields are known to exist.
#[derive(Debug, Default)]
pub(super) struct Compiled {
    pub kind: Option<String>,
    pub text: Option<String>,
    pub regex: Option<Regex>,
    pub name: Option<String>,
    pub field: Option<String>,
    pub arg: Option<Box<CompiledArg>>,
    pub child: Option<Box<Compiled>>,
    pub has: Option<Box<Compiled>>,
    pub inside: Option<Box<Compiled>>,
    pub not: Option<Box<Compiled>>,
    pub all: Vec<Compiled>,
    pub any: Option<Vec<Compiled>>,
}

#[derive(Debug)]
pub(super) struct CompiledArg {
    pub position: Option<usize>,
    pub keyword: Option<String>,
    pub value: Option<Compiled>,
}

/// Check the whole signature and compile its conditions, in order.
pub(super) fn compile(signature: &Signature) -> Result<Vec<CompiledCondition>, SignatureError> {
    if signature.conditions.is_empty() {
        return Err(error("signature has no conditions"));
    }
    let grammar = Grammar(python());
    let mut ids = HashSet::new();
    signature
        .conditions
        .iter()
        .enumerate()
        .map(|(index, condition)| {
            let label = if condition.id.is_empty() {
                format!("condition #{}", index + 1)
            } else {
                format!("condition `{}`", condition.id)
            };
            compile_condition(condition, &grammar, &mut ids)
                .map_err(|e| error(&format!("{label}: {}", e.message)))
        })
        .collect()
}

fn compile_condition<'a>(
    condition: &'a Condition,
    grammar: &Grammar,
    ids: &mut HashSet<&'a str>,
) -> Result<CompiledCondition, SignatureError> {
    if condition.id.trim().is_empty() {
        return Err(error("`id` is empty"));
    }
    if !ids.insert(condition.id.as_str()) {
        return Err(error("`id` is used by an earlier condition"));
    }
    check_path(&condition.file)?;
    let (mode, matcher, at) = match (&condition.exists, &condition.absent) {
        (Some(m), None) => (Mode::Exists, m, "exists"),
        (None, Some(m)) => (Mode::Absent, m, "absent"),
        _ => return Err(error("needs exactly one of `exists` and `absent`")),
    };
    let matcher = compile_matcher(matcher, grammar, at, 1)?;
    Ok(CompiledCondition { mode, matcher })
}

/// Paths are relative to the kernel project's root, `/`-separated, without `..`.
fn check_path(path: &str) -> Result<(), SignatureError> {
    if path.trim().is_empty() {
        return Err(error("`file` is empty"));
    }
    if path.starts_with('/') || path.contains('\\') {
        return Err(error(&format!(
            "`file` `{path}` must be a relative, `/`-separated path"
        )));
    }
    if path.split('/').any(|part| part.is_empty() || part == "..") {
        return Err(error(&format!(
            "`file` `{path}` has an empty or `..` component"
        )));
    }
    Ok(())
}

struct Grammar(tree_sitter::Language);

impl Grammar {
    /// A kind a node in a parse tree can have: named and visible (supertypes such as
    /// `expression` and hidden rules never appear in a tree).
    fn has_kind(&self, kind: &str) -> bool {
        let id = self.0.id_for_node_kind(kind, true);
        id != 0 && self.0.node_kind_is_visible(id) && !self.0.node_kind_is_supertype(id)
    }

    fn has_field(&self, field: &str) -> bool {
        self.0.field_id_for_name(field).is_some()
    }
}

fn compile_matcher(
    matcher: &Matcher,
    grammar: &Grammar,
    at: &str,
    depth: usize,
) -> Result<Compiled, SignatureError> {
    if depth > MAX_MATCHER_DEPTH {
        return Err(error(&format!(
            "{at}: matchers nest deeper than {MAX_MATCHER_DEPTH} levels"
        )));
    }
    if matcher.is_empty() {
        return Err(error(&format!(
            "{at}: empty matcher (it would match every node)"
        )));
    }
    let nested =
        |m: &Matcher, key: &str| compile_matcher(m, grammar, &format!("{at}.{key}"), depth + 1);
    let boxed =
        |m: &Option<Box<Matcher>>, key: &str| -> Result<Option<Box<Compiled>>, SignatureError> {
            m.as_deref()
                .map(|m| nested(m, key).map(Box::new))
                .transpose()
        };
    let list = |ms: &[Matcher], key: &str| -> Result<Vec<Compiled>, SignatureError> {
        if ms.is_empty() {
            return Err(error(&format!("{at}.{key}: empty list")));
        }
        ms.iter()
            .enumerate()
            .map(|(i, m)| nested(m, &format!("{key}[{i}]")))
            .collect()
    };

    if let Some(kind) = &matcher.kind
        && !grammar.has_kind(kind)
    {
        return Err(error(&format!(
            "{at}.kind: `{kind}` is not a node kind of tree-sitter-python"
        )));
    }
    if let Some(field) = &matcher.field
        && !grammar.has_field(field)
    {
        return Err(error(&format!(
            "{at}.field: `{field}` is not a field name of tree-sitter-python"
        )));
    }
    let regex = matcher
        .regex
        .as_deref()
        .map(Regex::new)
        .transpose()
        .map_err(|e| error(&format!("{at}.regex: {e}")))?;
    let arg = match &matcher.arg {
        None => None,
        Some(arg) => Some(Box::new(compile_arg(
            arg,
            grammar,
            &format!("{at}.arg"),
            depth,
        )?)),
    };
    Ok(Compiled {
        kind: matcher.kind.clone(),
        text: matcher.text.clone(),
        regex,
        name: matcher.name.clone(),
        field: matcher.field.clone(),
        arg,
        child: boxed(&matcher.child, "child")?,
        has: boxed(&matcher.has, "has")?,
        inside: boxed(&matcher.inside, "inside")?,
        not: boxed(&matcher.not, "not")?,
        all: match &matcher.all {
            Some(ms) => list(ms, "all")?,
            None => Vec::new(),
        },
        any: matcher
            .any
            .as_deref()
            .map(|ms| list(ms, "any"))
            .transpose()?,
    })
}

fn compile_arg(
    arg: &ArgMatcher,
    grammar: &Grammar,
    at: &str,
    depth: usize,
) -> Result<CompiledArg, SignatureError> {
    if arg.position.is_none() && arg.keyword.is_none() {
        return Err(error(&format!("{at}: needs `position`, `keyword` or both")));
    }
    if let Some(keyword) = &arg.keyword
        && keyword.trim().is_empty()
    {
        return Err(error(&format!("{at}.keyword: empty")));
    }
    let value = arg
        .value
        .as_ref()
        .map(|m| compile_matcher(m, grammar, &format!("{at}.value"), depth + 1))
        .transpose()?;
    Ok(CompiledArg {
        position: arg.position,
        keyword: arg.keyword.clone(),
        value,
    })
}

fn error(message: &str) -> SignatureError {
    SignatureError {
        message: message.to_owned(),
    }
}
