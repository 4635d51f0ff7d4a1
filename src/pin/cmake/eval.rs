//! Evaluator: walks each file's command invocations in order, keeping the variable scope
//! (`set`, `unset`, `option`, `list(APPEND|PREPEND)`, `file(GLOB)`) and the stack of enclosing
//! `if()` conditions, and hands every declaring call to `declare`.
//!
//! `if()` is not evaluated: every branch runs, in order, so a later `set()` wins. Function and
//! macro bodies and `foreach` loops run once, where they are written, with their parameters and
//! loop variables unknown.

use super::declare::{self, Call, Condition, Item};
use super::expand::{Expansion, FileDirs, Origin, Piece, Scope};
use super::lexer::{Invocation, Quoting, Token};
use super::paths::{glob, normalize};
use super::{Command, Declaration};
use crate::target::{TargetError, View};
use std::collections::BTreeSet;

/// Most bytes the arguments of one invocation may expand to.
const MAX_EXPANSION: usize = 16 << 20;

pub(super) struct Evaluator<'v> {
    view: &'v dyn View,
    scope: Scope,
    /// One entry per open `if()`: the conditions of the `if` and of each `elseif` so far.
    conditions: Vec<Vec<Condition>>,
    pub declarations: Vec<Declaration>,
}

impl<'v> Evaluator<'v> {
    pub fn new(view: &'v dyn View) -> Self {
        Evaluator {
            view,
            scope: Scope::default(),
            conditions: Vec::new(),
            declarations: Vec::new(),
        }
    }

    /// Evaluate one file's invocations; `path` is view-relative.
    pub fn file(&mut self, path: &str, invocations: &[Invocation]) -> Result<(), TargetError> {
        let list_dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        // A `.cmake` module runs in the scope of the CMakeLists.txt that includes it, which for
        // the files under `cmake/` is the root one.
        let source_dir = if path.ends_with("CMakeLists.txt") {
            list_dir.clone()
        } else {
            String::new()
        };
        self.scope.dirs = FileDirs {
            list_dir,
            source_dir,
            list_file: path.to_string(),
        };
        self.conditions.clear();
        for inv in invocations {
            self.invocation(path, inv)?;
        }
        Ok(())
    }

    fn invocation(&mut self, path: &str, inv: &Invocation) -> Result<(), TargetError> {
        let name = inv.name.to_ascii_lowercase();
        match name.as_str() {
            "if" => self.conditions.push(vec![condition(&inv.args)]),
            "elseif" => {
                if let Some(top) = self.conditions.last_mut() {
                    top.push(condition(&inv.args));
                }
            }
            "endif" => {
                self.conditions.pop();
            }
            "set" => self.set(&inv.args),
            "unset" => {
                if let Some(name) = self.names(&inv.args).first() {
                    self.scope.unset(name);
                }
            }
            "option" => {
                let names = self.names(&inv.args);
                if let Some(var) = names.first()
                    && !self.scope.is_set(var)
                {
                    let value = names.get(2).cloned().unwrap_or_else(|| "OFF".into());
                    self.scope.set(var, Some(value), BTreeSet::new());
                }
            }
            "list" => self.list(&inv.args),
            "file" => self.file_glob(&inv.args)?,
            "fetchcontent_declare" => self.declare(Command::FetchContentDeclare, path, inv)?,
            "externalproject_add" => self.declare(Command::ExternalProjectAdd, path, inv)?,
            // The direct form (name plus content options) fetches without a declaration.
            "fetchcontent_populate" if inv.args.len() > 1 => {
                self.declare(Command::FetchContentPopulate, path, inv)?
            }
            "cpmaddpackage" => self.declare(Command::CpmAddPackage, path, inv)?,
            _ => {}
        }
        Ok(())
    }

    /// Names of the `ENV{}` tests in every enclosing condition.
    fn condition_envs(&self) -> BTreeSet<Origin> {
        self.conditions
            .iter()
            .flatten()
            .flat_map(|c| c.envs.iter().map(|e| Origin::Env(e.clone())))
            .collect()
    }

    /// Expand every argument. Past [`MAX_EXPANSION`] bytes for one invocation, the remaining
    /// arguments read as unknown without being expanded, so `foo(${BIG} ${BIG} ...)` stays
    /// bounded in memory and time.
    fn expand_all<'a>(&self, args: &'a [Token]) -> Vec<(Expansion, &'a Token)> {
        let mut total = 0usize;
        args.iter()
            .map(|t| {
                let e = if total > MAX_EXPANSION {
                    Expansion::unknown(&t.text)
                } else {
                    self.scope.expand(t)
                };
                total += e.pieces.iter().map(|p| p.text.len() + 1).sum::<usize>();
                (e, t)
            })
            .collect()
    }

    /// Every argument's resolved elements (unknown ones skipped), for commands where a name
    /// is all that matters.
    fn names(&self, args: &[Token]) -> Vec<String> {
        self.expand_all(args)
            .into_iter()
            .flat_map(|(e, _)| e.pieces)
            .filter(|p| p.resolved)
            .map(|p| p.text)
            .collect()
    }

    /// `set(VAR v...)`, `set(VAR v... CACHE TYPE doc [FORCE])`, `set(VAR v... PARENT_SCOPE)`.
    fn set(&mut self, args: &[Token]) {
        let expanded = self.expand_all(args);
        // Every list element with the index of the argument it came from.
        let pieces: Vec<(&Piece, usize)> = expanded
            .iter()
            .enumerate()
            .flat_map(|(i, (e, _))| e.pieces.iter().map(move |p| (p, i)))
            .collect();
        let Some(((var, _), values)) = pieces.split_first() else {
            return;
        };
        if !var.resolved || var.text.starts_with("ENV{") {
            return;
        }
        let mut values = values.to_vec();
        if let Some(cache) = values
            .iter()
            .position(|(p, _)| p.resolved && p.text == "CACHE")
        {
            values.truncate(cache);
        } else if values
            .last()
            .is_some_and(|(p, _)| p.resolved && p.text == "PARENT_SCOPE")
        {
            values.pop();
        }
        if values.is_empty() {
            self.scope.unset(&var.text);
            return;
        }
        let mut from = self.condition_envs();
        let used: BTreeSet<usize> = values.iter().map(|(_, i)| *i).collect();
        for (e, _) in used.into_iter().filter_map(|i| expanded.get(i)) {
            from.extend(Scope::origins_of(e));
        }
        let value = values.iter().all(|(p, _)| p.resolved).then(|| {
            values
                .iter()
                .map(|(p, _)| p.text.as_str())
                .collect::<Vec<_>>()
                .join(";")
        });
        self.scope.set(&var.text, value, from);
    }

    /// `list(APPEND|PREPEND VAR items...)`; any other list operation makes its output unknown.
    fn list(&mut self, args: &[Token]) {
        let expanded = self.expand_all(args);
        let mut pieces = expanded.iter().flat_map(|(e, _)| e.pieces.iter());
        let (Some(op), Some(var)) = (pieces.next(), pieces.next()) else {
            return;
        };
        if !op.resolved || !var.resolved {
            return;
        }
        let items: Vec<_> = pieces.collect();
        let var = var.text.clone();
        match op.text.as_str() {
            "APPEND" | "PREPEND" => {
                let mut from = BTreeSet::new();
                for (e, _) in &expanded {
                    from.extend(Scope::origins_of(e));
                }
                let current = if self.scope.is_set(&var) {
                    self.scope.get(&var)
                } else {
                    Some(String::new())
                };
                let new = items
                    .iter()
                    .all(|p| p.resolved)
                    .then(|| items.iter().map(|p| p.text.as_str()).collect::<Vec<_>>());
                let value = match (current, new) {
                    (Some(cur), Some(new)) => {
                        let mut all: Vec<&str> = Vec::new();
                        let cur_items = cur.split(';').filter(|s| !s.is_empty());
                        if op.text == "APPEND" {
                            all.extend(cur_items);
                            all.extend(new);
                        } else {
                            all.extend(new);
                            all.extend(cur_items);
                        }
                        Some(all.join(";"))
                    }
                    _ => None,
                };
                self.scope.set(&var, value, from);
            }
            "LENGTH" | "GET" | "JOIN" | "SUBLIST" | "FIND" => {
                if let Some(out) = items.last().filter(|p| p.resolved) {
                    self.scope.set(&out.text, None, BTreeSet::new());
                }
            }
            _ => self.scope.set(&var, None, BTreeSet::new()),
        }
    }

    /// `file(GLOB|GLOB_RECURSE VAR [LIST_DIRECTORIES b] [RELATIVE dir] [CONFIGURE_DEPENDS]
    /// globs...)`, listed through the view. A glob that is not view-relative, or `RELATIVE`,
    /// makes the variable unknown. Other `file()` forms are ignored.
    fn file_glob(&mut self, args: &[Token]) -> Result<(), TargetError> {
        let expanded = self.expand_all(args);
        let pieces: Vec<_> = expanded.iter().flat_map(|(e, _)| e.pieces.iter()).collect();
        let (Some(op), Some(var)) = (pieces.first(), pieces.get(1)) else {
            return Ok(());
        };
        let recurse = match op.text.as_str() {
            "GLOB" => false,
            "GLOB_RECURSE" => true,
            _ => return Ok(()),
        };
        if !var.resolved {
            return Ok(());
        }
        let mut files = Some(Vec::new());
        let mut rest = pieces.iter().skip(2);
        while let Some(p) = rest.next() {
            match p.text.as_str() {
                "LIST_DIRECTORIES" | "FOLLOW_SYMLINKS" if p.resolved => {
                    if p.text == "LIST_DIRECTORIES" {
                        rest.next();
                    }
                }
                "CONFIGURE_DEPENDS" if p.resolved => {}
                _ => {
                    let pattern = (p.resolved && p.anchored)
                        .then(|| normalize(&p.text))
                        .flatten()
                        .filter(|_| p.text != "RELATIVE");
                    match (pattern, files.as_mut()) {
                        (Some(pattern), Some(list)) => {
                            list.extend(glob(self.view, &pattern, recurse)?)
                        }
                        _ => files = None,
                    }
                }
            }
        }
        let value = files.map(|mut f| {
            f.sort();
            f.dedup();
            f.join(";")
        });
        self.scope.set(&var.text, value, BTreeSet::new());
        Ok(())
    }

    fn declare(
        &mut self,
        command: Command,
        path: &str,
        inv: &Invocation,
    ) -> Result<(), TargetError> {
        let items = self
            .expand_all(&inv.args)
            .into_iter()
            .flat_map(|(e, t)| {
                let Expansion { pieces, vars, envs } = e;
                pieces.into_iter().map(move |piece| Item {
                    raw: t.text.clone(),
                    piece,
                    line: t.line,
                    vars: vars.clone(),
                    envs: envs.clone(),
                })
            })
            .collect();
        let conditions: Vec<Condition> = self.conditions.iter().flatten().cloned().collect();
        let decl = declare::build(
            Call {
                command,
                file: path,
                line: inv.line,
                items,
                conditions: &conditions,
            },
            &self.scope,
            self.view,
        )?;
        self.declarations.push(decl);
        Ok(())
    }
}

/// The variable and environment names an `if()` / `elseif()` tests: bare identifiers,
/// `${X}` references, `ENV{X}` / `$ENV{X}` and `CACHE{X}`.
fn condition(args: &[Token]) -> Condition {
    let mut cond = Condition::default();
    for token in args.iter().filter(|t| t.quoting != Quoting::Bracket) {
        let text = token.text.as_str();
        if is_identifier(text) {
            cond.vars.push(text.to_string());
            continue;
        }
        for (marker, env) in [("ENV{", true), ("CACHE{", false), ("${", false)] {
            let mut rest = text;
            while let Some(at) = rest.find(marker) {
                let after = rest.get(at + marker.len()..).unwrap_or("");
                let end = after.find(['}', '$', '{']).unwrap_or(after.len());
                let name = after.get(..end).unwrap_or("");
                if !name.is_empty() {
                    if env {
                        cond.envs.push(name.to_string());
                    } else {
                        cond.vars.push(name.to_string());
                    }
                }
                rest = after;
            }
        }
    }
    cond
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
