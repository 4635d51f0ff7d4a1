//! Variables: the one scope shared by every scanned file, and `${}` / `$ENV{}` expansion of
//! arguments into CMake's list elements.
//!
//! Expansion is an explicit stack machine (no recursion), so `${A_${B_${C}}}` nests to any
//! depth; values are capped at [`MAX_VALUE`] bytes so `set(A ${A}${A})` repeated cannot grow
//! without bound (a capped value reads as unknown).

use super::lexer::{Quoting, Token};
use std::collections::{BTreeSet, HashMap};

/// Longest value kept for one argument or variable; longer ones become unknown.
const MAX_VALUE: usize = 1 << 20;

/// One variable: its value (`None`: set from something unknown, such as `$ENV{X}`).
#[derive(Debug, Clone)]
struct Var {
    value: Option<String>,
}

/// Where the file being evaluated sits, for the built-in directory variables.
#[derive(Debug, Clone, Default)]
pub(super) struct FileDirs {
    /// `CMAKE_CURRENT_LIST_DIR`: the file's own directory.
    pub list_dir: String,
    /// `CMAKE_CURRENT_SOURCE_DIR`: the directory of the `CMakeLists.txt` being processed.
    pub source_dir: String,
    /// `CMAKE_CURRENT_LIST_FILE`.
    pub list_file: String,
}

/// The single variable scope (plus what each variable was derived from).
#[derive(Debug, Default)]
pub(super) struct Scope {
    vars: HashMap<String, Var>,
    /// Per variable, the user variables and environment names its `set()`s referenced directly,
    /// over every `set()` seen (never cleared: with all branches taken, any may have run).
    origins: HashMap<String, BTreeSet<Origin>>,
    pub dirs: FileDirs,
}

/// What a variable's value was taken from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Origin {
    Var(String),
    Env(String),
}

/// One list element after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    pub text: String,
    /// False when any variable it references is unknown.
    pub resolved: bool,
    /// True when it starts with a built-in directory variable, so it is a view-relative path.
    pub anchored: bool,
}

/// An expanded argument: its elements and every name it referenced.
#[derive(Debug, Clone, Default)]
pub(super) struct Expansion {
    pub pieces: Vec<Piece>,
    /// `${NAME}` references (final names, inner ones too), in order.
    pub vars: Vec<String>,
    /// `$ENV{NAME}` references.
    pub envs: Vec<String>,
}

impl Expansion {
    /// An argument left unexpanded: one unknown element.
    pub fn unknown(raw: &str) -> Self {
        Expansion {
            pieces: vec![Piece {
                text: raw.to_string(),
                resolved: false,
                anchored: false,
            }],
            ..Expansion::default()
        }
    }
}

/// Built-in variables whose value says where a directory is, not where a pin comes from.
pub(super) fn is_builtin(name: &str) -> bool {
    name.starts_with("CMAKE_")
        || name.starts_with("PROJECT_")
        || name.ends_with("_BINARY_DIR")
        || name == "FETCHCONTENT_BASE_DIR"
}

impl Scope {
    /// A variable's value: `Some(Some(v))` known, `Some(None)` set but unknown, `None` unset.
    fn lookup(&self, name: &str) -> Option<Option<String>> {
        let dir = match name {
            "CMAKE_CURRENT_LIST_DIR" => Some(self.dirs.list_dir.clone()),
            "CMAKE_CURRENT_SOURCE_DIR" => Some(self.dirs.source_dir.clone()),
            "CMAKE_SOURCE_DIR" | "PROJECT_SOURCE_DIR" | "CMAKE_HOME_DIRECTORY" => {
                Some(String::new())
            }
            "CMAKE_CURRENT_LIST_FILE" => Some(self.dirs.list_file.clone()),
            _ => None,
        };
        match dir {
            Some(d) => Some(Some(d)),
            None => self.vars.get(name).map(|v| v.value.clone()),
        }
    }

    fn is_dir_builtin(name: &str) -> bool {
        matches!(
            name,
            "CMAKE_CURRENT_LIST_DIR"
                | "CMAKE_CURRENT_SOURCE_DIR"
                | "CMAKE_SOURCE_DIR"
                | "PROJECT_SOURCE_DIR"
                | "CMAKE_HOME_DIRECTORY"
        )
    }

    /// Set `name` to `value` (`None`: unknown), recording what it came from.
    pub fn set(&mut self, name: &str, value: Option<String>, from: BTreeSet<Origin>) {
        let value = value.filter(|v| v.len() <= MAX_VALUE);
        self.vars.insert(name.to_string(), Var { value });
        if !from.is_empty() {
            self.origins
                .entry(name.to_string())
                .or_default()
                .extend(from);
        }
    }

    pub fn unset(&mut self, name: &str) {
        self.vars.remove(name);
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// The current value of a user variable (`None` when unset or unknown).
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).and_then(|v| v.value.clone())
    }

    /// The names `name` was derived from (user variables and environment names), following
    /// variables transitively; iterative, so cycles (`set(A ${A})`) and long chains are fine.
    pub fn origins(&self, name: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut todo = vec![name];
        while let Some(var) = todo.pop() {
            for origin in self.origins.get(var).into_iter().flatten() {
                match origin {
                    Origin::Env(e) => {
                        out.insert(e.clone());
                    }
                    Origin::Var(v) => {
                        out.insert(v.clone());
                        if seen.insert(v) {
                            todo.push(v);
                        }
                    }
                }
            }
        }
        out
    }

    /// Direct origins of a value that referenced `exp`'s names: its non-built-in variables and
    /// its environment names.
    pub fn origins_of(exp: &Expansion) -> BTreeSet<Origin> {
        let vars = exp.vars.iter().filter(|v| !is_builtin(v));
        vars.map(|v| Origin::Var(v.clone()))
            .chain(exp.envs.iter().map(|e| Origin::Env(e.clone())))
            .collect()
    }

    /// Expand one argument into list elements.
    pub fn expand(&self, token: &Token) -> Expansion {
        match token.quoting {
            Quoting::Bracket => Expansion {
                pieces: vec![Piece {
                    text: token.text.clone(),
                    resolved: true,
                    anchored: false,
                }],
                ..Expansion::default()
            },
            Quoting::Quoted => self.expand_text(&token.text, false),
            Quoting::Unquoted => self.expand_text(&token.text, true),
        }
    }

    fn expand_text(&self, text: &str, split: bool) -> Expansion {
        let mut out = Builder::new(split);
        // Open `${` / `$ENV{` references, innermost last: (is_env, name so far, name resolved).
        let mut open: Vec<(bool, String, bool)> = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let rest = text.get(i..).unwrap_or("");
            if c == '$' {
                let opener = ["${", "$ENV{", "$CACHE{"]
                    .into_iter()
                    .find(|p| rest.starts_with(p));
                if let Some(p) = opener {
                    for _ in 1..p.len() {
                        chars.next();
                    }
                    open.push((p == "$ENV{", String::new(), true));
                    continue;
                }
            }
            let ch = if c == '\\' {
                match chars.next() {
                    Some((_, 't')) => '\t',
                    Some((_, 'n')) => '\n',
                    Some((_, 'r')) => '\r',
                    Some((_, ';')) => {
                        // An escaped `;` never splits the list.
                        match open.last_mut() {
                            Some((_, name, _)) => name.push(';'),
                            None => out.push_literal(';'),
                        }
                        continue;
                    }
                    Some((_, other)) => other,
                    None => '\\',
                }
            } else {
                c
            };
            if ch == '}'
                && c == '}'
                && let Some((is_env, name, name_ok)) = open.pop()
            {
                let value = if !name_ok {
                    None
                } else if is_env {
                    out.envs.push(name.clone());
                    None
                } else {
                    out.vars.push(name.clone());
                    self.lookup(&name).flatten()
                };
                match (open.last_mut(), value) {
                    (Some((_, outer, _)), Some(v)) if outer.len() + v.len() <= MAX_VALUE => {
                        outer.push_str(&v)
                    }
                    (Some((_, _, outer_ok)), _) => *outer_ok = false,
                    (None, Some(v)) => {
                        out.push_value(&v, !is_env && Self::is_dir_builtin(&name));
                    }
                    (None, None) => out.unresolved(),
                }
                if out.too_long() {
                    out.unresolved();
                    break;
                }
                continue;
            }
            match open.last_mut() {
                Some((_, name, _)) => name.push(ch),
                None if ch == ';' && c == ';' => out.split_here(),
                None => out.push_literal(ch),
            }
        }
        // Unclosed references are an error in CMake; here they make the value unknown.
        if !open.is_empty() {
            out.unresolved();
        }
        out.finish()
    }
}

/// Accumulates the list elements of one argument.
struct Builder {
    split: bool,
    pieces: Vec<Piece>,
    cur: Piece,
    /// A built-in root directory (`""`) was just expanded at the start: drop one `/` after it.
    strip_slash: bool,
    vars: Vec<String>,
    envs: Vec<String>,
    total: usize,
}

impl Builder {
    fn new(split: bool) -> Self {
        Builder {
            split,
            pieces: Vec::new(),
            cur: Piece {
                text: String::new(),
                resolved: true,
                anchored: false,
            },
            strip_slash: false,
            vars: Vec::new(),
            envs: Vec::new(),
            total: 0,
        }
    }

    fn push_literal(&mut self, c: char) {
        if std::mem::take(&mut self.strip_slash) && c == '/' {
            return;
        }
        self.cur.text.push(c);
        self.total += c.len_utf8();
    }

    fn push_value(&mut self, value: &str, dir_builtin: bool) {
        if dir_builtin && self.cur.text.is_empty() {
            self.cur.anchored = true;
            self.strip_slash = value.is_empty();
        } else {
            self.strip_slash = false;
        }
        self.total += value.len();
        if self.split {
            let mut parts = value.split(';');
            if let Some(first) = parts.next() {
                self.cur.text.push_str(first);
            }
            for part in parts {
                self.split_here();
                self.cur.text.push_str(part);
            }
        } else {
            self.cur.text.push_str(value);
        }
    }

    fn unresolved(&mut self) {
        self.cur.resolved = false;
        self.strip_slash = false;
    }

    fn too_long(&self) -> bool {
        self.total > MAX_VALUE
    }

    fn split_here(&mut self) {
        if !self.split {
            self.cur.text.push(';');
            return;
        }
        let done = std::mem::replace(
            &mut self.cur,
            Piece {
                text: String::new(),
                resolved: true,
                anchored: false,
            },
        );
        // CMake drops empty elements of unquoted arguments; an unknown one may not be empty.
        if !done.text.is_empty() || !done.resolved {
            self.pieces.push(done);
        }
        self.strip_slash = false;
    }

    fn finish(mut self) -> Expansion {
        if self.split {
            if !self.cur.text.is_empty() || !self.cur.resolved {
                self.pieces.push(self.cur);
            }
        } else {
            self.pieces.push(self.cur);
        }
        Expansion {
            pieces: self.pieces,
            vars: self.vars,
            envs: self.envs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(text: &str, quoting: Quoting) -> Token {
        Token {
            text: text.into(),
            quoting,
            line: 1,
        }
    }

    fn texts(e: &Expansion) -> Vec<(String, bool)> {
        e.pieces
            .iter()
            .map(|p| (p.text.clone(), p.resolved))
            .collect()
    }

    #[test]
    fn nested_and_list_expansion() {
        let mut s = Scope::default();
        s.set("B", Some("X".into()), BTreeSet::new());
        s.set("A_X", Some("1;2".into()), BTreeSet::new());
        let e = s.expand(&tok("${A_${B}}", Quoting::Unquoted));
        assert_eq!(texts(&e), vec![("1".into(), true), ("2".into(), true)]);
        assert_eq!(e.vars, vec!["B".to_string(), "A_X".to_string()]);
        let e = s.expand(&tok("${A_${B}}", Quoting::Quoted));
        assert_eq!(texts(&e), vec![("1;2".into(), true)]);
        let e = s.expand(&tok("a\\;b;;c", Quoting::Unquoted));
        assert_eq!(texts(&e), vec![("a;b".into(), true), ("c".into(), true)]);
    }

    #[test]
    fn unknowns_and_env() {
        let s = Scope::default();
        let e = s.expand(&tok("x/$ENV{HOME}/${NOPE}", Quoting::Unquoted));
        assert_eq!(texts(&e), vec![("x//".into(), false)]);
        assert_eq!(e.envs, vec!["HOME".to_string()]);
        let e = s.expand(&tok("${A_${NOPE}}", Quoting::Quoted));
        assert_eq!(texts(&e), vec![("".into(), false)]);
        let e = s.expand(&tok("${unclosed", Quoting::Quoted));
        assert!(!e.pieces.iter().all(|p| p.resolved));
    }

    #[test]
    fn root_directories_become_view_relative() {
        let mut s = Scope::default();
        s.dirs.list_dir = "cmake/x".into();
        let e = s.expand(&tok("${CMAKE_SOURCE_DIR}/p/a.patch", Quoting::Unquoted));
        assert_eq!(texts(&e), vec![("p/a.patch".into(), true)]);
        assert!(e.pieces.iter().all(|p| p.anchored));
        let e = s.expand(&tok("${CMAKE_CURRENT_LIST_DIR}/p", Quoting::Unquoted));
        assert_eq!(texts(&e), vec![("cmake/x/p".into(), true)]);
    }

    #[test]
    fn doubling_values_are_capped() {
        let mut s = Scope::default();
        s.set("A", Some("x".repeat(1000)), BTreeSet::new());
        for _ in 0..40 {
            let e = s.expand(&tok("${A}${A}", Quoting::Quoted));
            let p = e.pieces.first().cloned();
            let v = p.filter(|p| p.resolved).map(|p| p.text);
            s.set("A", v, BTreeSet::new());
        }
        assert_eq!(s.get("A"), None);
    }
}
