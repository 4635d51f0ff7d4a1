//! Values of the evaluator: a string plus the unknown inputs it depends on, and the expansion of
//! one written argument (`${}`, `$ENV{}`, `$CACHE{}`, escapes, `;` splitting) into them.
//!
//! A value with no inputs is exact. A value with inputs is what the *default configuration*
//! (no `-D`, empty environment) gives when every input is a cache or environment variable, and
//! may be anything otherwise.

use super::lexer::{Quoting, Token};
use std::collections::BTreeSet;

/// Longest value kept; a longer one stops the evaluation (over budget).
pub(super) const MAX_VALUE: usize = 1 << 20;

/// Something the evaluation cannot know.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Input {
    /// A cache variable the user may pass with `-D` (default: unset, or the `set(CACHE)` /
    /// `option()` default).
    Cache(String),
    /// An environment variable (default: unset).
    Env(String),
    /// Something with no default pinprobe can name: the compiler, `find_package`, a command's
    /// output, the build directory.
    Opaque(String),
    /// A value that differs between the sides of this condition (which depends on an input);
    /// the text is the default side's.
    Join(String),
}

impl Input {
    /// Whether the default configuration fixes it (cache and environment variables do).
    pub fn has_default(&self) -> bool {
        !matches!(self, Input::Opaque(_))
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Cache(n) => write!(f, "-D{n}"),
            Input::Env(n) => write!(f, "$ENV{{{n}}}"),
            Input::Opaque(n) => write!(f, "{n}"),
            Input::Join(n) => write!(f, "the outcome of {n}"),
        }
    }
}

pub(super) type Taint = BTreeSet<Input>;

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Val {
    pub text: String,
    pub taint: Taint,
}

impl Val {
    pub fn exact(text: impl Into<String>) -> Val {
        Val {
            text: text.into(),
            taint: Taint::new(),
        }
    }

    pub fn with(text: impl Into<String>, input: Input) -> Val {
        Val {
            text: text.into(),
            taint: [input].into_iter().collect(),
        }
    }
}

/// One argument after expansion: a list element (or a whole quoted argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg {
    pub text: String,
    pub taint: Taint,
    /// Written quoted or bracketed: `if()` neither dereferences it nor reads it as a keyword.
    pub quoted: bool,
    pub line: u32,
}

impl Arg {
    pub fn val(&self) -> Val {
        Val {
            text: self.text.clone(),
            taint: self.taint.clone(),
        }
    }
}

/// Where `${NAME}` reads from.
pub(super) trait Lookup {
    /// `${NAME}`: a macro argument, normal variable, cache entry or built-in; undefined names
    /// read as empty with their input recorded.
    fn var(&self, name: &str) -> Val;
    fn env(&self, name: &str) -> Val;
    fn cache(&self, name: &str) -> Val;
}

/// Why an expansion failed.
#[derive(Debug)]
pub(super) enum ExpandError {
    TooLong,
}

/// Expand one written argument into its elements.
pub(super) fn expand(token: &Token, scope: &dyn Lookup) -> Result<Vec<Arg>, ExpandError> {
    match token.quoting {
        Quoting::Bracket => Ok(vec![Arg {
            text: token.text.clone(),
            taint: Taint::new(),
            quoted: true,
            line: token.line,
        }]),
        Quoting::Quoted => {
            let v = expand_text(&token.text, scope)?;
            Ok(vec![Arg {
                text: v.text,
                taint: v.taint,
                quoted: true,
                line: token.line,
            }])
        }
        Quoting::Unquoted => {
            let v = expand_text(&token.text, scope)?;
            let mut items = split_list(&v.text);
            // An unknown value that is empty by default may not be empty: keep one element
            // standing for it, so its inputs are not lost with the empty argument.
            if items.is_empty() && !v.taint.is_empty() {
                items.push(String::new());
            }
            Ok(items
                .into_iter()
                .map(|text| Arg {
                    text,
                    taint: v.taint.clone(),
                    quoted: false,
                    line: token.line,
                })
                .collect())
        }
    }
}

/// CMake's list splitting: on `;` outside `[]` and not escaped, empty elements dropped.
pub(super) fn split_list(text: &str) -> Vec<String> {
    let mut items = list_items(text);
    items.retain(|item| !item.is_empty());
    items
}

/// Every element of a list value, empty ones kept (as `list()` sees them).
pub(super) fn list_items(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&';') => {
                cur.push('\\');
                cur.push(';');
                chars.next();
            }
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ';' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Expand references and escapes in a quoted or unquoted argument's text (not split).
pub(super) fn expand_text(text: &str, scope: &dyn Lookup) -> Result<Val, ExpandError> {
    // Open references, innermost last: (kind, name so far).
    #[derive(PartialEq)]
    enum Kind {
        Var,
        Env,
        Cache,
    }
    let mut open: Vec<(Kind, String)> = Vec::new();
    let mut out = String::new();
    let mut taint = Taint::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let rest = text.get(i..).unwrap_or("");
        if c == '$' {
            let opener = [
                ("${", Kind::Var),
                ("$ENV{", Kind::Env),
                ("$CACHE{", Kind::Cache),
            ]
            .into_iter()
            .find(|(p, _)| rest.starts_with(p));
            if let Some((p, kind)) = opener {
                for _ in 1..p.len() {
                    chars.next();
                }
                open.push((kind, String::new()));
                continue;
            }
        }
        let ch = if c == '\\' {
            match chars.next() {
                Some((_, 't')) => "\t".to_string(),
                Some((_, 'n')) => "\n".to_string(),
                Some((_, 'r')) => "\r".to_string(),
                Some((_, ';')) => "\\;".to_string(),
                Some((_, other)) => other.to_string(),
                None => "\\".to_string(),
            }
        } else {
            c.to_string()
        };
        if c == '}'
            && let Some((kind, name)) = open.pop()
        {
            let v = match kind {
                Kind::Var => scope.var(&name),
                Kind::Env => scope.env(&name),
                Kind::Cache => scope.cache(&name),
            };
            taint.extend(v.taint);
            match open.last_mut() {
                Some((_, outer)) => outer.push_str(&v.text),
                None => out.push_str(&v.text),
            }
            if out.len() > MAX_VALUE || open.last().is_some_and(|(_, n)| n.len() > MAX_VALUE) {
                return Err(ExpandError::TooLong);
            }
            continue;
        }
        match open.last_mut() {
            Some((_, name)) => name.push_str(&ch),
            None => out.push_str(&ch),
        }
    }
    // An unclosed `${` is an error in CMake; the text stays literal here, marked unknown.
    if !open.is_empty() {
        for (_, name) in open {
            out.push_str(&name);
        }
        taint.insert(Input::Opaque("an unterminated ${} reference".into()));
    }
    Ok(Val { text: out, taint })
}
