//! The commands' side of CMake's regular expressions: `string(REGEX MATCH|MATCHALL|REPLACE)`,
//! the repeated search they share, and `CMAKE_MATCH_<n>` / `CMAKE_MATCH_COUNT`.

use super::{Captures, OverBudget, Regex};
use crate::pin::cmake::builtins::Sets;
use crate::pin::cmake::value::{Arg, Input, Taint, Val};

fn val(text: impl Into<String>, taint: &Taint) -> Option<Val> {
    Some(Val {
        text: text.into(),
        taint: taint.clone(),
        alts: crate::pin::cmake::value::Alts::new(),
    })
}

/// What `cmMakefile::ClearMatches` then `StoreMatches` leave, as sets over the current values
/// (`get`): every `CMAKE_MATCH_<i>` up to the old `CMAKE_MATCH_COUNT` that is not empty becomes
/// empty and the count `0`; then, after a match, each group 0 to 9 that matched something
/// non-empty is set, and the count is the highest such group (empty when none is: the whole
/// match was empty).
pub(in crate::pin::cmake) fn match_vars(
    get: &dyn Fn(&str) -> Val,
    matched: Option<(&Captures, &str)>,
    taint: &Taint,
) -> Sets {
    let mut sets: Sets = Vec::new();
    let old = get("CMAKE_MATCH_COUNT");
    // Undefined (it reads empty, as an input), nothing is cleared; defined, even empty, it is.
    let undefined = old.text.is_empty() && !old.taint.is_empty();
    if !undefined {
        // `for (i = 0; i <= atoi(count); i++)`: a negative count clears nothing. (A count
        // over 9 reads past CMake's ten names: CMake 4.4 crashes; pinprobe stops at 9.)
        for i in 0..=leading_int(&old.text).min(9) {
            let name = format!("CMAKE_MATCH_{i}");
            let cur = get(&name);
            if !cur.text.is_empty() || !cur.taint.is_empty() {
                let mut t = taint.clone();
                t.extend(cur.taint.iter().filter(|_| cur.text.is_empty()).cloned());
                sets.push((name, val("", &t)));
            }
        }
        sets.push(("CMAKE_MATCH_COUNT".into(), val("0", taint)));
    }
    if let Some((caps, hay)) = matched {
        let mut highest = None;
        for i in 0..10.min(caps.len()) {
            let text = caps.text(i, hay);
            let name = format!("CMAKE_MATCH_{i}");
            if text.is_empty() {
                // CMake leaves an empty group's variable as it was. One the clearing emptied
                // stays so; one holding a value the clearing did not reach (a script set it)
                // keeps it. One never defined reads a cache variable a `-D` could set: pinprobe
                // sets it empty, so reading an optional group that did not match is exact
                // (only `DEFINED` tells the two apart).
                let cleared = sets.iter().any(|(n, _)| *n == name);
                let cur = get(&name);
                let undefined = cur.text.is_empty() && !cur.taint.is_empty();
                if !cleared && undefined {
                    sets.push((name, val("", taint)));
                }
                continue;
            }
            highest = Some(i);
            sets.push((name, val(text, taint)));
        }
        let count = highest.map(|h| h.to_string()).unwrap_or_default();
        sets.push(("CMAKE_MATCH_COUNT".into(), val(count, taint)));
    }
    sets
}

/// What a failing `string(REGEX ...)` leaves: CMake clears the match variables before it
/// compiles the pattern; a `REPLACE` whose replacement names a group the pattern lacks fails at
/// its first match, after storing it.
pub(in crate::pin::cmake) fn cleared(
    get: &dyn Fn(&str) -> Val,
    args: &[Arg],
    caret_once: bool,
) -> Sets {
    let taint: Taint = args.iter().flat_map(|a| a.taint.iter().cloned()).collect();
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    if let ["REGEX", "REPLACE", pattern, repl, _, input @ ..] = texts.as_slice()
        && replacement(repl).is_ok()
        && let Ok(re) = super::super::regexes::compiled(pattern)
    {
        let input = input.concat();
        return match searches(&re, &input, caret_once).next() {
            Some(Ok(first)) => match_vars(get, Some((&first, &input)), &taint),
            Some(Err(OverBudget)) => {
                let mut t = taint;
                t.insert(unknown_match(pattern));
                match_vars(get, None, &t)
            }
            None => match_vars(get, None, &taint),
        };
    }
    match_vars(get, None, &taint)
}

/// C's `atoi`: the leading integer, 0 without one.
fn leading_int(s: &str) -> i64 {
    let s = s.trim_start();
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let n: String = digits
        .chars()
        .take_while(char::is_ascii_digit)
        .take(18)
        .collect();
    sign * n.parse::<i64>().unwrap_or(0)
}

/// CMake's repeated search (`MATCHALL`, `REPLACE`): from where the last match ended. `^`
/// matches where each search starts unless `caret_once` (policy CMP0186 NEW), where it matches
/// only at the input's start. A match of the empty string is the last one yielded: CMake 3
/// stops with an error there and CMake 4 moves on by a byte, so what follows depends on the
/// CMake that runs (callers make it unknown, [`empty`]).
pub(in crate::pin::cmake) fn searches<'a>(
    re: &'a Regex,
    input: &'a str,
    caret_once: bool,
) -> impl Iterator<Item = Result<Captures, OverBudget>> + 'a {
    let mut next = Some(0);
    std::iter::from_fn(move || {
        let at = next?;
        let found = re.find_at(input, at, if caret_once { 0 } else { at });
        next = match &found {
            Ok(Some(caps)) => caps.span(0).filter(|(l, r)| r > l).map(|(_, r)| r),
            _ => None,
        };
        found.transpose()
    })
}

/// One piece of a `REPLACE` replacement.
enum Piece {
    Text(String),
    Group(usize),
}

/// CMake's replacement escapes: `\0`..`\9` a group, `\\` a backslash, `\n` a newline; any other
/// escape, or a backslash at the end, is an error. `$` is literal.
fn replacement(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            lit.push(c);
            continue;
        }
        match chars.next() {
            Some(d) if d.is_ascii_digit() => {
                if !lit.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut lit)));
                }
                pieces.push(Piece::Group(d.to_digit(10).unwrap_or(0) as usize));
            }
            Some('\\') => lit.push('\\'),
            Some('n') => lit.push('\n'),
            Some(other) => {
                return Err(format!(
                    "string(REGEX REPLACE): unknown escape `\\{other}` in the replacement"
                ));
            }
            None => return Err("string(REGEX REPLACE): the replacement ends in a backslash".into()),
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Text(lit));
    }
    Ok(pieces)
}

/// `string(REGEX <mode> ...)`, `args` after `REGEX`: the output and the match variables
/// (unknown when a search is over its budget or matches the empty string), or `Err` for
/// CMake's errors (the command fails; CMake goes on).
pub(in crate::pin::cmake) fn string_regex(
    args: &[&str],
    get: &dyn Fn(&str) -> Val,
    caret_once: bool,
    taint: &Taint,
) -> Result<Option<Sets>, String> {
    let (mode, pattern, rest) = match args {
        [mode, pattern, rest @ ..] => (*mode, *pattern, rest),
        _ => return Err("string(REGEX) needs a mode and an expression".into()),
    };
    let compile = |what: &str| {
        super::super::regexes::compiled(pattern).map_err(|e| {
            format!("string(REGEX {what}): failed to compile regex \"{pattern}\": {e}")
        })
    };
    let (out, input, repl) = match (mode, rest) {
        ("MATCH" | "MATCHALL", [out, input @ ..]) => (*out, input.concat(), None),
        ("REPLACE", [repl, out, input @ ..]) => (*out, input.concat(), Some(replacement(repl)?)),
        _ => return Err(format!("string(REGEX {mode}) arguments")),
    };
    let re = compile(mode)?;
    let mut last: Option<Captures> = None;
    let text = match (mode, repl) {
        ("MATCH", _) => match re.captures(&input) {
            Ok(found) => {
                let whole = found.as_ref().map(|c| c.text(0, &input).to_string());
                last = found;
                whole.unwrap_or_default()
            }
            Err(OverBudget) => return Ok(Some(unknown(out, pattern, taint))),
        },
        (_, None) => {
            let mut found = Vec::new();
            for caps in searches(&re, &input, caret_once) {
                let Ok(caps) = caps else {
                    return Ok(Some(unknown(out, pattern, taint)));
                };
                if empty(&caps) {
                    return Ok(Some(unknown(out, pattern, taint)));
                }
                found.push(caps.text(0, &input).to_string());
                last = Some(caps);
            }
            found.join(";")
        }
        (_, Some(pieces)) => {
            let mut text = String::new();
            let mut done = 0;
            for caps in searches(&re, &input, caret_once) {
                let Ok(caps) = caps else {
                    return Ok(Some(unknown(out, pattern, taint)));
                };
                // CMake checks the replacement's groups at each match, the first one before
                // anything else (even an empty one).
                if pieces
                    .iter()
                    .any(|p| matches!(p, Piece::Group(g) if *g >= caps.len()))
                {
                    return Err(format!(
                        "string(REGEX REPLACE): the replacement has an out-of-range escape for \
                         regex \"{pattern}\""
                    ));
                }
                if empty(&caps) {
                    return Ok(Some(unknown(out, pattern, taint)));
                }
                let Some((l, r)) = caps.span(0) else { break };
                text.push_str(input.get(done..l).unwrap_or(""));
                for p in &pieces {
                    match p {
                        Piece::Text(t) => text.push_str(t),
                        Piece::Group(g) => text.push_str(caps.text(*g, &input)),
                    }
                }
                done = r;
                last = Some(caps);
            }
            text.push_str(input.get(done..).unwrap_or(""));
            text
        }
    };
    let mut sets = match_vars(get, last.as_ref().map(|c| (c, input.as_str())), taint);
    sets.push((out.to_string(), val(text, taint)));
    Ok(Some(sets))
}

/// The output and every match variable unknown: what pinprobe cannot compute.
fn unknown(out: &str, pattern: &str, taint: &Taint) -> Sets {
    let mut t = taint.clone();
    t.insert(unknown_match(pattern));
    let mut sets: Sets = (0..10)
        .map(|i| (format!("CMAKE_MATCH_{i}"), val("", &t)))
        .collect();
    sets.push(("CMAKE_MATCH_COUNT".into(), val("", &t)));
    sets.push((out.to_string(), val("", &t)));
    sets
}

/// A repeated search matched the empty string: CMake 3.x stops with an error there and CMake 4
/// goes on past it, so what the command computes depends on the CMake that runs (unknown).
fn empty(caps: &Captures) -> bool {
    caps.span(0).is_some_and(|(l, r)| l == r)
}

/// `list(FILTER <list> INCLUDE|EXCLUDE REGEX <re>)` over `items`: `Ok(None)` when not known.
pub(in crate::pin::cmake) fn filter(
    items: &mut Vec<String>,
    include: bool,
    pattern: &str,
) -> Result<Option<()>, String> {
    let re = super::super::regexes::compiled(pattern)
        .map_err(|e| format!("list(FILTER): failed to compile regex \"{pattern}\": {e}"))?;
    let mut kept = Vec::with_capacity(items.len());
    for i in items.drain(..) {
        match re.is_match(&i) {
            Ok(m) if m == include => kept.push(i),
            Ok(_) => {}
            Err(OverBudget) => return Ok(None),
        }
    }
    *items = kept;
    Ok(Some(()))
}

/// The taint `if(MATCHES)` adds when its search is over budget.
pub(in crate::pin::cmake) fn unknown_match(pattern: &str) -> Input {
    Input::Opaque(format!(
        "regex `{pattern}` (a search over budget, or a repeated one matching the empty string)"
    ))
}
