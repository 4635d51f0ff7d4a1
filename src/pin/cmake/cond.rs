//! `if()` / `elseif()` / `while()` conditions, evaluated the way CMake's condition evaluator
//! does (policy CMP0054 NEW: quoted arguments are neither keywords nor dereferenced;
//! CMP0012 NEW: numbers and boolean constants are recognised).
//!
//! Reduction runs in CMake's levels, each left to right: parentheses, unary predicates
//! (`DEFINED`, `EXISTS`, `COMMAND`, ...), binary operators (`STREQUAL`, `MATCHES`, `LESS`,
//! `VERSION_*`, `IN_LIST`, ...), `NOT`, then `AND` and `OR` together. Every result carries the inputs it
//! depends on; a result that does not depend on an input is exact.

use super::value::{Arg, Input, Taint, Val, list_items};

/// What a condition needs from the evaluator.
pub(super) trait Env {
    /// A normal or cache variable; `None` when undefined (with the input that could define it).
    fn defined(&self, name: &str) -> (Option<Val>, Taint);
    fn env_defined(&self, name: &str) -> (bool, Taint);
    fn cache_defined(&self, name: &str) -> (bool, Taint);
    /// Whether the name is used as a variable anywhere in the tree (so an undefined operand
    /// named so may come from the user's cache).
    fn is_variable_name(&self, name: &str) -> bool;
    fn is_command(&self, name: &str) -> bool;
    /// `EXISTS` / `IS_DIRECTORY` of an absolute path; `None` when not decidable.
    fn exists(&self, path: &str, directory: bool) -> Option<bool>;
    /// `MATCHES` clears `CMAKE_MATCH_<n>`, then sets them from a match.
    fn set_matches(&mut self, matched: Option<(&super::regex::Captures, &str)>, taint: &Taint);
}

/// A condition's value and the inputs it depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Truth {
    pub value: bool,
    pub taint: Taint,
}

#[derive(Debug, Clone)]
enum Item {
    Arg(Arg),
    Bool(bool, Taint),
}

impl Item {
    fn keyword(&self, k: &str) -> bool {
        matches!(self, Item::Arg(a) if !a.quoted && a.text == k)
    }
}

/// A malformed condition (CMake stops with an error).
#[derive(Debug)]
pub(super) struct CondError(pub String);

const UNARY: &[&str] = &[
    "EXISTS",
    "COMMAND",
    "DEFINED",
    "TARGET",
    "TEST",
    "POLICY",
    "IS_DIRECTORY",
    "IS_SYMLINK",
    "IS_ABSOLUTE",
    "IS_READABLE",
    "IS_WRITABLE",
    "IS_EXECUTABLE",
];

pub(super) const BINARY: &[&str] = &[
    "MATCHES",
    "LESS",
    "GREATER",
    "EQUAL",
    "LESS_EQUAL",
    "GREATER_EQUAL",
    "STRLESS",
    "STRGREATER",
    "STREQUAL",
    "STRLESS_EQUAL",
    "STRGREATER_EQUAL",
    "VERSION_LESS",
    "VERSION_GREATER",
    "VERSION_EQUAL",
    "VERSION_LESS_EQUAL",
    "VERSION_GREATER_EQUAL",
    "IN_LIST",
    "PATH_EQUAL",
    "IS_NEWER_THAN",
];

/// Whether `word` is a keyword of conditions (an operator, never a variable name there).
pub(super) fn is_keyword(word: &str) -> bool {
    ["NOT", "AND", "OR", "ENV", "CACHE"].contains(&word)
        || UNARY.contains(&word)
        || BINARY.contains(&word)
}

/// Evaluate a condition.
pub(super) fn evaluate(args: &[Arg], env: &mut dyn Env) -> Result<Truth, CondError> {
    let items: Vec<Item> = args.iter().cloned().map(Item::Arg).collect();
    let item = reduce(items, env)?;
    Ok(boolean(&item, env))
}

fn reduce(items: Vec<Item>, env: &mut dyn Env) -> Result<Item, CondError> {
    let items = parentheses(items, env)?;
    let items = unary(items, env)?;
    let items = binary(items, env)?;
    let items = not(items, env)?;
    let mut items = logic(items, env)?;
    match items.len() {
        0 => Ok(Item::Bool(false, Taint::new())),
        1 => Ok(items.remove(0)),
        _ => Err(CondError("unknown arguments specified".into())),
    }
}

fn parentheses(items: Vec<Item>, env: &mut dyn Env) -> Result<Vec<Item>, CondError> {
    let mut out: Vec<Item> = Vec::new();
    let mut stack: Vec<Vec<Item>> = Vec::new();
    for item in items {
        if item.keyword("(") {
            stack.push(std::mem::take(&mut out));
        } else if item.keyword(")") {
            let Some(outer) = stack.pop() else {
                return Err(CondError("mismatched parenthesis".into()));
            };
            let inner = std::mem::replace(&mut out, outer);
            let r = reduce(inner, env)?;
            let (v, t) = truth_of(&r, env);
            out.push(Item::Bool(v, t));
        } else {
            out.push(item);
        }
    }
    if !stack.is_empty() {
        return Err(CondError("mismatched parenthesis".into()));
    }
    Ok(out)
}

fn truth_of(item: &Item, env: &mut dyn Env) -> (bool, Taint) {
    let t = boolean(item, env);
    (t.value, t.taint)
}

fn unary(items: Vec<Item>, env: &mut dyn Env) -> Result<Vec<Item>, CondError> {
    let mut out: Vec<Item> = Vec::new();
    let mut it = items.into_iter().peekable();
    while let Some(item) = it.next() {
        let op = match &item {
            Item::Arg(a) if !a.quoted && UNARY.contains(&a.text.as_str()) => a.text.clone(),
            _ => {
                out.push(item);
                continue;
            }
        };
        let Some(Item::Arg(operand)) = it.peek().cloned() else {
            out.push(item);
            continue;
        };
        it.next();
        let (value, taint) = predicate(&op, &operand, env);
        out.push(Item::Bool(value, taint));
    }
    Ok(out)
}

fn predicate(op: &str, a: &Arg, env: &mut dyn Env) -> (bool, Taint) {
    let mut taint = a.taint.clone();
    let opaque = |what: &str| Input::Opaque(format!("if({op} {what})"));
    let value = match op {
        "DEFINED" => {
            let (d, t) = if let Some(n) = a
                .text
                .strip_prefix("ENV{")
                .and_then(|s| s.strip_suffix('}'))
            {
                env.env_defined(n)
            } else if let Some(n) = a
                .text
                .strip_prefix("CACHE{")
                .and_then(|s| s.strip_suffix('}'))
            {
                env.cache_defined(n)
            } else {
                let (v, mut t) = env.defined(&a.text);
                // Set from an unknown value that is empty by default: maybe not set at all.
                if let Some(v) = &v
                    && (v.text.is_empty() || v.taint.iter().any(|i| matches!(i, Input::Join(_))))
                {
                    t.extend(v.taint.iter().cloned());
                }
                (v.is_some(), t)
            };
            taint.extend(t);
            d
        }
        "COMMAND" => env.is_command(&a.text),
        "POLICY" => match policy_number(&a.text) {
            // Every CMake from 3.26 (the oldest vLLM builds with) knows these.
            Some(n) if n <= LAST_POLICY_OF_3_26 => true,
            // Known or not depending on the CMake version.
            Some(n) if n <= LAST_POLICY_KNOWN => {
                taint.insert(opaque(&a.text));
                false
            }
            _ => false,
        },
        "IS_ABSOLUTE" => a.text.starts_with('/'),
        "EXISTS" | "IS_DIRECTORY" | "IS_READABLE" => {
            match env.exists(&a.text, op == "IS_DIRECTORY") {
                Some(v) => v,
                None => {
                    taint.insert(opaque(&a.text));
                    false
                }
            }
        }
        _ => {
            taint.insert(opaque(&a.text));
            false
        }
    };
    (value, taint)
}

/// The last policy CMake 3.26 has (`CMP0144` came with 3.27).
const LAST_POLICY_OF_3_26: u32 = 143;
/// The last policy of the newest CMake this evaluator was checked against (4.4); a policy
/// past it is one no released CMake has.
const LAST_POLICY_KNOWN: u32 = 219;

/// `CMP<NNNN>`: the policy's number.
fn policy_number(text: &str) -> Option<u32> {
    let digits = text.strip_prefix("CMP")?;
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An operand of a binary operator: the variable's value when unquoted and defined, else the
/// text itself.
fn operand(item: &Item, env: &mut dyn Env) -> Val {
    match item {
        Item::Bool(b, t) => Val {
            text: if *b { "1" } else { "0" }.into(),
            taint: t.clone(),
            alts: crate::pin::cmake::value::Alts::new(),
        },
        Item::Arg(a) if a.quoted => a.val(),
        Item::Arg(a) => {
            let (v, t) = env.defined(&a.text);
            match v {
                Some(v) => {
                    let mut taint = v.taint;
                    taint.extend(a.taint.iter().cloned());
                    Val {
                        text: v.text,
                        taint,
                        alts: crate::pin::cmake::value::Alts::new(),
                    }
                }
                None => {
                    let mut taint = a.taint.clone();
                    if env.is_variable_name(&a.text) {
                        taint.extend(t);
                    }
                    Val {
                        text: a.text.clone(),
                        taint,
                        alts: crate::pin::cmake::value::Alts::new(),
                    }
                }
            }
        }
    }
}

fn binary(mut items: Vec<Item>, env: &mut dyn Env) -> Result<Vec<Item>, CondError> {
    // CMake's passes: left to right, an operator with an operand on each side is replaced by
    // its result, and passes repeat while one reduces (so `a STREQUAL a STREQUAL 1` compares
    // the first result with `1`). An operator short of an operand stays an argument.
    loop {
        let mut reduced = false;
        let mut i = 0;
        while i + 2 < items.len() {
            let op = match &items[i + 1] {
                Item::Arg(a) if !a.quoted && BINARY.contains(&a.text.as_str()) => a.text.clone(),
                _ => {
                    i += 1;
                    continue;
                }
            };
            let rhs = items.remove(i + 2);
            items.remove(i + 1);
            let (value, taint) = if op == "MATCHES" {
                matches(&items[i], &rhs, env)?
            } else {
                binop(&op, &items[i], &rhs, env)
            };
            items[i] = Item::Bool(value, taint);
            reduced = true;
            i += 1;
        }
        if !reduced {
            return Ok(items);
        }
    }
}

/// `MATCHES`: a search in CMake's dialect; a pattern CMake cannot compile stops CMake.
fn matches(lhs: &Item, rhs: &Item, env: &mut dyn Env) -> Result<(bool, Taint), CondError> {
    let l = operand(lhs, env);
    let r = match rhs {
        Item::Arg(a) => a.val(),
        other => operand(other, env),
    };
    let mut taint = l.taint;
    taint.extend(r.taint);
    let re = super::regexes::compiled(&r.text).map_err(|e| {
        CondError(format!(
            "regular expression \"{}\" cannot compile: {e}",
            r.text
        ))
    })?;
    match re.captures(&l.text) {
        Ok(found) => {
            env.set_matches(found.as_ref().map(|c| (c, l.text.as_str())), &taint);
            Ok((found.is_some(), taint))
        }
        Err(super::regex::OverBudget) => {
            taint.insert(super::regex::unknown_match(&r.text));
            Ok((false, taint))
        }
    }
}

fn binop(op: &str, lhs: &Item, rhs: &Item, env: &mut dyn Env) -> (bool, Taint) {
    let l = operand(lhs, env);
    if op == "IN_LIST" {
        // The right side names a variable, quoted or not; a result names none.
        let Item::Arg(a) = rhs else {
            return (false, l.taint);
        };
        let (v, t) = env.defined(&a.text);
        let mut taint = l.taint;
        taint.extend(t);
        return match v {
            Some(list) => {
                taint.extend(list.taint);
                // Empty elements count, and an empty value is one empty element.
                let found = if list.text.is_empty() {
                    l.text.is_empty()
                } else {
                    list_items(&list.text).contains(&l.text)
                };
                (found, taint)
            }
            None => (false, taint),
        };
    }
    let r = operand(rhs, env);
    let mut taint = l.taint.clone();
    taint.extend(r.taint.iter().cloned());
    let value = match op {
        "STREQUAL" => l.text == r.text,
        "STRLESS" => l.text < r.text,
        "STRGREATER" => l.text > r.text,
        "STRLESS_EQUAL" => l.text <= r.text,
        "STRGREATER_EQUAL" => l.text >= r.text,
        "PATH_EQUAL" => l
            .text
            .split('/')
            .filter(|s| !s.is_empty())
            .eq(r.text.split('/').filter(|s| !s.is_empty())),
        "LESS" | "GREATER" | "EQUAL" | "LESS_EQUAL" | "GREATER_EQUAL" => {
            match (number_prefix(&l.text), number_prefix(&r.text)) {
                (Some(a), Some(b)) => match op {
                    "LESS" => a < b,
                    "GREATER" => a > b,
                    "EQUAL" => a == b,
                    "LESS_EQUAL" => a <= b,
                    _ => a >= b,
                },
                _ => false,
            }
        }
        "VERSION_LESS"
        | "VERSION_GREATER"
        | "VERSION_EQUAL"
        | "VERSION_LESS_EQUAL"
        | "VERSION_GREATER_EQUAL" => {
            let c = version_compare(&l.text, &r.text);
            match op {
                "VERSION_LESS" => c.is_lt(),
                "VERSION_GREATER" => c.is_gt(),
                "VERSION_EQUAL" => c.is_eq(),
                "VERSION_LESS_EQUAL" => c.is_le(),
                _ => c.is_ge(),
            }
        }
        _ => {
            taint.insert(Input::Opaque(format!("if(... {op} ...)")));
            false
        }
    };
    (value, taint)
}

fn not(mut items: Vec<Item>, env: &mut dyn Env) -> Result<Vec<Item>, CondError> {
    // CMake's passes: left to right, `NOT` and the argument after it (whatever it is, another
    // `NOT` too) become the negation; passes repeat while one reduces. So `NOT NOT x` negates
    // the word `NOT` and leaves two arguments (an error), and a `NOT` with nothing after it
    // stays an argument.
    loop {
        let mut reduced = false;
        let mut i = 0;
        while i + 1 < items.len() {
            if items[i].keyword("NOT") {
                let operand = items.remove(i + 1);
                let (v, t) = truth_of(&operand, env);
                items[i] = Item::Bool(!v, t);
                reduced = true;
            }
            i += 1;
        }
        if !reduced {
            return Ok(items);
        }
    }
}

/// `AND` and `OR`: one level, left to right (`TRUE OR FALSE AND FALSE` is false).
fn logic(items: Vec<Item>, env: &mut dyn Env) -> Result<Vec<Item>, CondError> {
    let mut out: Vec<Item> = Vec::new();
    let mut it = items.into_iter();
    while let Some(item) = it.next() {
        let and = item.keyword("AND");
        if !and && !item.keyword("OR") {
            out.push(item);
            continue;
        }
        let op = if and { "AND" } else { "OR" };
        let (Some(lhs), Some(rhs)) = (out.pop(), it.next()) else {
            return Err(CondError(format!("{op} needs two operands")));
        };
        let (a, ta) = truth_of(&lhs, env);
        let (b, tb) = truth_of(&rhs, env);
        let value = if and { a && b } else { a || b };
        // A side that decides alone (exact false for AND, exact true for OR) makes it exact.
        let decides = |v: bool, t: &Taint| t.is_empty() && v != and;
        let taint = if decides(a, &ta) {
            ta
        } else if decides(b, &tb) {
            tb
        } else {
            ta.into_iter().chain(tb).collect()
        };
        out.push(Item::Bool(value, taint));
    }
    Ok(out)
}

/// `if(<constant>)`, `if(<variable>)`, `if(<string>)`.
fn boolean(item: &Item, env: &mut dyn Env) -> Truth {
    match item {
        Item::Bool(v, t) => Truth {
            value: *v,
            taint: t.clone(),
        },
        Item::Arg(a) => {
            let mut taint = a.taint.clone();
            if let Some(v) = constant(&a.text) {
                return Truth { value: v, taint };
            }
            if let Some(n) = full_number(&a.text) {
                return Truth {
                    value: n != 0.0,
                    taint,
                };
            }
            if a.quoted {
                return Truth {
                    value: false,
                    taint,
                };
            }
            let (v, t) = env.defined(&a.text);
            match v {
                Some(v) => {
                    taint.extend(v.taint);
                    Truth {
                        value: !is_off(&v.text),
                        taint,
                    }
                }
                None => {
                    if env.is_variable_name(&a.text) {
                        taint.extend(t);
                    }
                    Truth {
                        value: false,
                        taint,
                    }
                }
            }
        }
    }
}

/// Boolean constants (case-insensitive); `None` for anything else.
pub(super) fn constant(s: &str) -> Option<bool> {
    // `NOTFOUND` and the `-NOTFOUND` suffix are case-sensitive, the others not.
    if s == "NOTFOUND" || s.ends_with("-NOTFOUND") {
        return Some(false);
    }
    let u = s.to_ascii_uppercase();
    match u.as_str() {
        "1" | "ON" | "YES" | "TRUE" | "Y" => Some(true),
        "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE" | "" => Some(false),
        _ => None,
    }
}

/// CMake's `cmIsOff`.
pub(super) fn is_off(s: &str) -> bool {
    constant(s) == Some(false)
}

/// The whole text as a C `strtod` number (leading blanks allowed).
fn full_number(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let (n, len) = number_at(t)?;
    (len == t.len()).then_some(n)
}

/// `sscanf("%lg")`: the longest number at the start. Unlike `strtod`, glibc's `sscanf` reads
/// nothing from a bare `0x` (as real CMake shows: `"0x" EQUAL 0` is false).
fn number_prefix(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned.eq_ignore_ascii_case("0x") {
        return None;
    }
    number_at(t).map(|(n, _)| n)
}

fn number_at(t: &str) -> Option<(f64, usize)> {
    let b = t.as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if let Some((n, len)) = special_number_at(t.get(i..)?) {
        return Some((if negative { -n } else { n }, i + len));
    }
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let mantissa = t.get(digits_start..i).unwrap_or("");
    if mantissa.is_empty() || mantissa == "." {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            i = j;
        }
    }
    t.get(..i)?.parse::<f64>().ok().map(|n| (n, i))
}

/// What C's `strtod` reads besides decimal numbers, after the sign: hexadecimal (`0x10`, with
/// an optional fraction and `p` exponent), `inf` / `infinity` and `nan` (any case, `nan(...)`).
fn special_number_at(t: &str) -> Option<(f64, usize)> {
    let b = t.as_bytes();
    let lower = t.get(..t.len().min(8)).unwrap_or("").to_ascii_lowercase();
    if lower.starts_with("infinity") {
        return Some((f64::INFINITY, 8));
    }
    if lower.starts_with("inf") {
        return Some((f64::INFINITY, 3));
    }
    if lower.starts_with("nan") {
        // `nan(` n-char-sequence `)` is read whole when closed.
        let rest = t.get(3..).unwrap_or("");
        let seq = rest.strip_prefix('(').and_then(|r| {
            let end = r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            (r.as_bytes().get(end) == Some(&b')')).then_some(end + 2)
        });
        return Some((f64::NAN, 3 + seq.unwrap_or(0)));
    }
    if !(b.first() == Some(&b'0') && matches!(b.get(1), Some(b'x' | b'X'))) {
        return None;
    }
    let mut i = 2;
    let mut value = 0f64;
    let mut digits = 0;
    while let Some(d) = b.get(i).and_then(|c| (*c as char).to_digit(16)) {
        value = value * 16.0 + f64::from(d);
        digits += 1;
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        let mut scale = 1.0 / 16.0;
        let mut j = i + 1;
        while let Some(d) = b.get(j).and_then(|c| (*c as char).to_digit(16)) {
            value += f64::from(d) * scale;
            scale /= 16.0;
            digits += 1;
            j += 1;
        }
        if digits > 0 {
            i = j;
        }
    }
    if digits == 0 {
        // `0x` alone: the `0` is the number.
        return Some((0.0, 1));
    }
    if matches!(b.get(i), Some(b'p' | b'P')) {
        let mut j = i + 1;
        let neg = b.get(j) == Some(&b'-');
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let start = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > start {
            let e: i32 = t.get(start..j)?.parse().unwrap_or(i32::MAX);
            value *= 2f64.powi(if neg { -e } else { e });
            i = j;
        }
    }
    Some((value, i))
}

/// CMake's version comparison (`cmSystemTools::VersionCompare`): while either side is at a
/// digit, read each side's decimal number there (0, reading nothing, when it is not at one),
/// compare them as numbers of any length, and step over one `.` on each side.
pub(super) fn version_compare(a: &str, b: &str) -> std::cmp::Ordering {
    // The digits at `i` without leading zeros; longer is larger, equal lengths compare as text.
    fn number<'a>(s: &'a [u8], i: &mut usize) -> &'a [u8] {
        let start = *i;
        while s.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        let digits = s.get(start..*i).unwrap_or_default();
        let zeros = digits.iter().take_while(|d| **d == b'0').count();
        digits.get(zeros..).unwrap_or_default()
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    let digit = |s: &[u8], k: usize| s.get(k).is_some_and(u8::is_ascii_digit);
    while digit(a, i) || digit(b, j) {
        let (x, y) = (number(a, &mut i), number(b, &mut j));
        let c = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
        if c.is_ne() {
            return c;
        }
        if a.get(i) == Some(&b'.') {
            i += 1;
        }
        if b.get(j) == Some(&b'.') {
            j += 1;
        }
    }
    std::cmp::Ordering::Equal
}
