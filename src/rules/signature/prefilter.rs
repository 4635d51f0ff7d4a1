//! A text prefilter run before a file is parsed: the literals any node a matcher can match (or
//! may match) must have in the file's text. A node's text is a slice of the file, so a literal
//! it must equal (`text:`), or a name it must have outside a call (`name:` on a `kind` other
//! than `call`), occurs in the file; a `child`, `has` or `inside` matcher needs some node of
//! the same file to match, so its literals do too. What can match without a literal in the
//! text contributes none: `kind`, `field`, `regex`, `not`, `arg` (a splat may supply it), and
//! a call's `name` (an unknown callee may be it, and aliases may name it).
//!
//! The requirement is a conjunction of clauses, each a set of literals one of which must
//! occur. When a clause has no literal in the text, no node of the file matches or may match,
//! whatever its parse: an `exists` condition then fails without a parse.

use super::compile::Compiled;

/// Clauses that all hold on a file any node of which `m` matches or may match.
pub(super) fn requirement(m: &Compiled) -> Vec<Vec<String>> {
    let mut clauses = Vec::new();
    if let Some(text) = m.text.as_deref().filter(|t| !t.is_empty()) {
        clauses.push(vec![text.to_string()]);
    }
    if let (Some(name), Some(kind)) = (m.name.as_deref(), m.kind.as_deref())
        && kind != "call"
        && !name.is_empty()
    {
        clauses.push(vec![name.to_string()]);
    }
    for sub in [&m.child, &m.has, &m.inside].into_iter().flatten() {
        clauses.extend(requirement(sub));
    }
    for each in &m.all {
        clauses.extend(requirement(each));
    }
    if let Some(any) = &m.any {
        // Some branch matches: then every clause of that branch holds, so one literal of the
        // first clauses of all branches does. A branch with no clause leaves nothing required.
        let mut either = Vec::new();
        for branch in any {
            match requirement(branch).into_iter().next() {
                Some(first) => either.extend(first),
                None => {
                    either.clear();
                    break;
                }
            }
        }
        if !either.is_empty() {
            clauses.push(either);
        }
    }
    clauses
}

/// Whether `text` holds every clause: some node of it could match.
pub(super) fn may_match(clauses: &[Vec<String>], text: &str) -> bool {
    clauses
        .iter()
        .all(|clause| clause.iter().any(|literal| text.contains(literal.as_str())))
}
