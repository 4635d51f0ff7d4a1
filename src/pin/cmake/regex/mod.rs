//! CMake's regular expressions, as `cmsys::RegularExpression` (Henry Spencer's engine) compiles
//! and runs them: the dialect of `if(MATCHES)`, `string(REGEX MATCH|MATCHALL|REPLACE)`,
//! `list(FILTER ... REGEX)` and `file(STRINGS ... REGEX)`.
//!
//! The syntax is small: `^` `$` `.` `[...]` `[^...]` `(...)` `|` `*` `+` `?` and `\x` (the byte
//! `x`, whatever it is: `\d` is `d`). No classes (`\d` `\w` `\s`, `[[:digit:]]` is a bracket
//! holding `[:digt`), no counted repetition (`{` and `}` are literal), no lazy quantifiers (`+?`
//! is an error), at most nine groups. Matching is over bytes, leftmost, by backtracking: the
//! first alternative that lets the rest match wins, repetitions are greedy, and a group holds
//! what its last iteration on the matching path matched. [`parse`] builds the tree and rejects
//! what CMake rejects, with CMake's message; [`exec`] searches.

mod command;
mod exec;
mod parse;

pub(super) use command::{cleared, filter, match_vars, string_regex, unknown_match};
pub(super) use exec::Captures;

/// A compiled CMake regular expression.
#[derive(Debug)]
pub(super) struct Regex {
    root: parse::Node,
    /// Groups, `(` counted left to right (at most nine).
    groups: usize,
    /// Every alternative starts with `^`: only the search's start can match.
    anchored: bool,
    /// Longer than [`parse::MAX_PATTERN`]: not compiled, every search unknown.
    too_long: bool,
}

/// Why CMake refuses a pattern: its compiler's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct CompileError(pub &'static str);

/// A search gave up (too many steps, too deep, or a pattern too long): the answer is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OverBudget;

impl Regex {
    pub(super) fn new(pattern: &str) -> Result<Regex, CompileError> {
        if pattern.len() > parse::MAX_PATTERN {
            return Ok(Regex {
                root: parse::Node::Empty,
                groups: 0,
                anchored: false,
                too_long: true,
            });
        }
        let (root, groups) = parse::parse(pattern.as_bytes())?;
        let anchored = root.anchored();
        Ok(Regex {
            root,
            groups,
            anchored,
            too_long: false,
        })
    }

    /// The first match at or after byte `at` of `haystack`, with `^` matching at `bol` only.
    pub(super) fn find_at(
        &self,
        haystack: &str,
        at: usize,
        bol: usize,
    ) -> Result<Option<Captures>, OverBudget> {
        if self.too_long {
            return Err(OverBudget);
        }
        exec::search(self, haystack.as_bytes(), at, bol)
    }

    /// The first match in `haystack` (`^` at its start).
    pub(super) fn captures(&self, haystack: &str) -> Result<Option<Captures>, OverBudget> {
        self.find_at(haystack, 0, 0)
    }

    pub(super) fn is_match(&self, haystack: &str) -> Result<bool, OverBudget> {
        Ok(self.captures(haystack)?.is_some())
    }
}

#[cfg(test)]
mod tests;
