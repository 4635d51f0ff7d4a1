//! `list()`, `string()` and `math()`: pure functions from arguments (and the variables they
//! read) to the variables they set. A form not listed here is reported as `None` and the
//! evaluator treats its outputs as unknown.

use super::value::{Arg, Input, Taint, Val, list_items};

/// What a command sets: (variable, value); `None` unsets it.
pub(super) type Sets = Vec<(String, Option<Val>)>;

fn taint_of<'a>(args: impl IntoIterator<Item = &'a Arg>) -> Taint {
    args.into_iter()
        .flat_map(|a| a.taint.iter().cloned())
        .collect()
}

fn val(text: impl Into<String>, taint: Taint) -> Option<Val> {
    Some(Val {
        text: text.into(),
        taint,
        alts: crate::pin::cmake::value::Alts::new(),
    })
}

/// `list(<op> <list> ...)`. `get` reads a variable. `Err` is a CMake error message.
pub(super) fn list(args: &[Arg], get: &dyn Fn(&str) -> Val) -> Result<Option<Sets>, String> {
    let (Some(op), Some(var)) = (args.first(), args.get(1)) else {
        return Err("list() needs an operation and a list".into());
    };
    let name = var.text.clone();
    let rest = args.get(2..).unwrap_or_default();
    let mut cur = get(&name);
    let mut taint = cur.taint.clone();
    taint.extend(taint_of(rest));
    taint.extend(var.taint.iter().cloned());
    // APPEND and PREPEND (most list() calls, on lists that grow) need no elements.
    let mut items = if matches!(op.text.as_str(), "APPEND" | "PREPEND") {
        Vec::new()
    } else {
        list_items(&cur.text)
    };
    let index = |i: &str, len: usize| -> Result<usize, String> {
        let n: i64 = i.trim().parse().map_err(|_| format!("list index `{i}`"))?;
        let len_i = len as i64;
        let at = if n < 0 { len_i + n } else { n };
        if at < 0 || at >= len_i {
            return Err(format!("list index {n} out of range ({len})"));
        }
        Ok(at as usize)
    };
    let texts: Vec<String> = rest.iter().map(|a| a.text.clone()).collect();
    let out_last = || rest.last().map(|a| a.text.clone()).unwrap_or_default();
    let set_list =
        |items: &[String], taint: Taint| vec![(name.clone(), val(items.join(";"), taint))];
    Ok(Some(match op.text.as_str() {
        "APPEND" => {
            if texts.is_empty() {
                return Ok(Some(Vec::new()));
            }
            let mut v = std::mem::take(&mut cur.text);
            for t in &texts {
                if !v.is_empty() {
                    v.push(';');
                }
                v.push_str(t);
            }
            vec![(name, val(v, taint))]
        }
        "PREPEND" => {
            if texts.is_empty() {
                return Ok(Some(Vec::new()));
            }
            let mut v = texts.join(";");
            if !cur.text.is_empty() {
                v.push(';');
                v.push_str(&cur.text);
            }
            vec![(name, val(v, taint))]
        }
        "INSERT" => {
            let Some((at, new)) = texts.split_first() else {
                return Err("list(INSERT) needs an index".into());
            };
            let n: i64 = at
                .trim()
                .parse()
                .map_err(|_| format!("list index `{at}`"))?;
            let len = items.len() as i64;
            let pos = if n < 0 { len + n } else { n };
            if pos < 0 || pos > len {
                return Err(format!("list index {n} out of range"));
            }
            let pos = pos as usize;
            for (i, t) in new.iter().enumerate() {
                items.insert(pos + i, t.clone());
            }
            set_list(&items, taint)
        }
        "REMOVE_ITEM" => {
            items.retain(|i| !texts.contains(i));
            set_list(&items, taint)
        }
        "REMOVE_AT" => {
            let len = items.len();
            let mut drop = Vec::new();
            for t in &texts {
                drop.push(index(t, len)?);
            }
            let kept: Vec<String> = items
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(i))
                .map(|(_, s)| s)
                .collect();
            set_list(&kept, taint)
        }
        "REMOVE_DUPLICATES" => {
            let mut seen: Vec<String> = Vec::new();
            for i in items {
                if !seen.contains(&i) {
                    seen.push(i);
                }
            }
            set_list(&seen, taint)
        }
        "REVERSE" => {
            items.reverse();
            set_list(&items, taint)
        }
        "SORT" => {
            // COMPARE STRING, CASE, ORDER as CMake sorts; COMPARE NATURAL or FILE_BASENAME is
            // not followed.
            let mut insensitive = false;
            let mut descending = false;
            let mut opts = texts.iter();
            while let Some(o) = opts.next() {
                match (o.as_str(), opts.next().map(String::as_str)) {
                    ("COMPARE", Some("STRING")) => {}
                    ("CASE", Some("SENSITIVE")) => insensitive = false,
                    ("CASE", Some("INSENSITIVE")) => insensitive = true,
                    ("ORDER", Some("ASCENDING")) => descending = false,
                    ("ORDER", Some("DESCENDING")) => descending = true,
                    _ => return Ok(None),
                }
            }
            // A stable sort by the comparison, reversed for DESCENDING (equal items keep
            // their order either way).
            let key = |i: &String| {
                if insensitive {
                    i.to_lowercase()
                } else {
                    i.clone()
                }
            };
            items.sort_by(|a, b| {
                let o = key(a).cmp(&key(b));
                if descending { o.reverse() } else { o }
            });
            set_list(&items, taint)
        }
        "LENGTH" => vec![(out_last(), val(items.len().to_string(), taint))],
        "GET" => {
            let (out, idx) = texts.split_last().ok_or("list(GET) needs an output")?;
            let mut got = Vec::new();
            for i in idx {
                got.push(
                    items
                        .get(index(i, items.len())?)
                        .cloned()
                        .unwrap_or_default(),
                );
            }
            vec![(out.clone(), val(got.join(";"), taint))]
        }
        "JOIN" => {
            let (Some(glue), Some(out)) = (texts.first(), texts.get(1)) else {
                return Err("list(JOIN) needs a glue and an output".into());
            };
            vec![(out.clone(), val(items.join(glue), taint))]
        }
        "SUBLIST" => {
            let (Some(b), Some(l), Some(out)) = (texts.first(), texts.get(1), texts.get(2)) else {
                return Err("list(SUBLIST) arguments".into());
            };
            let b: usize = b.trim().parse().map_err(|_| "list(SUBLIST) begin")?;
            let l: i64 = l.trim().parse().map_err(|_| "list(SUBLIST) length")?;
            if l < -1 {
                return Err(format!("list(SUBLIST) length {l} is under -1"));
            }
            // An empty list gives an empty sublist whatever the begin; otherwise the begin
            // must be an element.
            if !items.is_empty() && b >= items.len() {
                return Err("list(SUBLIST) begin out of range".into());
            }
            let end = if l < 0 {
                items.len()
            } else {
                (b + l as usize).min(items.len())
            };
            let got = items.get(b..end).unwrap_or_default();
            vec![(out.clone(), val(got.join(";"), taint))]
        }
        "FIND" => {
            let (Some(x), Some(out)) = (texts.first(), texts.get(1)) else {
                return Err("list(FIND) arguments".into());
            };
            let at = items.iter().position(|i| i == x).map_or(-1, |p| p as i64);
            vec![(out.clone(), val(at.to_string(), taint))]
        }
        "POP_BACK" | "POP_FRONT" => {
            let mut sets = Vec::new();
            let outs: Vec<String> = if texts.is_empty() {
                vec![String::new()]
            } else {
                texts.clone()
            };
            for out in outs {
                let item = if op.text == "POP_BACK" {
                    items.pop()
                } else if items.is_empty() {
                    None
                } else {
                    Some(items.remove(0))
                };
                if !out.is_empty() {
                    sets.push((
                        out,
                        item.map(|i| Val {
                            text: i,
                            taint: taint.clone(),
                            alts: crate::pin::cmake::value::Alts::new(),
                        }),
                    ));
                }
            }
            if items.is_empty() {
                sets.push((name, None));
            } else {
                sets.push((name, val(items.join(";"), taint)));
            }
            sets
        }
        "FILTER" => {
            let (Some(mode), Some(kw), Some(re)) = (texts.first(), texts.get(1), texts.get(2))
            else {
                return Err("list(FILTER) arguments".into());
            };
            if kw != "REGEX" {
                return Err("list(FILTER) needs REGEX".into());
            }
            let include = mode == "INCLUDE";
            if super::regex::filter(&mut items, include, re)?.is_none() {
                return Ok(None);
            }
            set_list(&items, taint)
        }
        "TRANSFORM" => {
            let Some(action) = texts.first() else {
                return Err("list(TRANSFORM) needs an action".into());
            };
            let mut out = name.clone();
            let mut params: Vec<String> = Vec::new();
            let mut it = texts.iter().skip(1);
            while let Some(t) = it.next() {
                if t == "OUTPUT_VARIABLE" {
                    out = it.next().cloned().unwrap_or_default();
                } else if matches!(t.as_str(), "AT" | "FOR" | "REGEX") {
                    return Ok(None);
                } else {
                    params.push(t.clone());
                }
            }
            let mapped: Vec<String> = match (action.as_str(), params.as_slice()) {
                ("APPEND", [s]) => items.iter().map(|i| format!("{i}{s}")).collect(),
                ("PREPEND", [s]) => items.iter().map(|i| format!("{s}{i}")).collect(),
                ("TOLOWER", []) => items.iter().map(|i| i.to_lowercase()).collect(),
                ("TOUPPER", []) => items.iter().map(|i| i.to_uppercase()).collect(),
                ("STRIP", []) => items.iter().map(|i| i.trim().to_string()).collect(),
                _ => return Ok(None),
            };
            vec![(out, val(mapped.join(";"), taint))]
        }
        _ => return Ok(None),
    }))
}

/// What a failing `string()` still sets: `REGEX` clears the match variables first (and a
/// `REPLACE` stores its first match); `JSON` sets its output to `<path>-NOTFOUND`.
pub(super) fn string_failed(args: &[Arg], get: &dyn Fn(&str) -> Val, caret_once: bool) -> Sets {
    match args.first().map(|a| a.text.as_str()) {
        Some("REGEX") => super::regex::cleared(get, args, caret_once),
        Some("JSON") => {
            let texts: Vec<&str> = args.iter().skip(1).map(|a| a.text.as_str()).collect();
            super::json::failed(&texts, &taint_of(args))
        }
        _ => Vec::new(),
    }
}

/// `string(<op> ...)`.
/// `caret_once`: policy CMP0186 (CMake 4.1) is NEW, so `^` matches only at the start of the
/// input, not at the start of each repeated search as before.
pub(super) fn string(
    args: &[Arg],
    get: &dyn Fn(&str) -> Val,
    caret_once: bool,
) -> Result<Option<Sets>, String> {
    let Some(op) = args.first() else {
        return Err("string() needs an operation".into());
    };
    let rest = args.get(1..).unwrap_or_default();
    let texts: Vec<&str> = rest.iter().map(|a| a.text.as_str()).collect();
    let all = taint_of(rest);
    let opaque = |what: &str| {
        let mut t = all.clone();
        t.insert(Input::Opaque(format!("string({what})")));
        t
    };
    Ok(Some(match (op.text.as_str(), texts.as_slice()) {
        ("APPEND" | "PREPEND", [var, items @ ..]) => {
            let cur = get(var);
            let mut taint = cur.taint.clone();
            taint.extend(all.iter().cloned());
            let add = items.concat();
            let text = if op.text == "APPEND" {
                format!("{}{add}", cur.text)
            } else {
                format!("{add}{}", cur.text)
            };
            vec![(var.to_string(), val(text, taint))]
        }
        ("CONCAT", [out, items @ ..]) => vec![(out.to_string(), val(items.concat(), all))],
        ("JOIN", [glue, out, items @ ..]) => {
            vec![(out.to_string(), val(items.join(glue), all))]
        }
        ("REPLACE", [from, to, out, input @ ..]) => {
            let input = input.concat();
            let text = if from.is_empty() {
                input
            } else {
                input.replace(from, to)
            };
            vec![(out.to_string(), val(text, all))]
        }
        ("TOLOWER", [input, out]) => vec![(out.to_string(), val(input.to_lowercase(), all))],
        ("TOUPPER", [input, out]) => vec![(out.to_string(), val(input.to_uppercase(), all))],
        ("LENGTH", [input, out]) => vec![(out.to_string(), val(input.len().to_string(), all))],
        ("STRIP", [input, out]) => vec![(out.to_string(), val(input.trim(), all))],
        ("SUBSTRING", [input, begin, len, out]) => {
            let b: usize = begin
                .trim()
                .parse()
                .map_err(|_| "string(SUBSTRING) begin")?;
            let l: i64 = len.trim().parse().map_err(|_| "string(SUBSTRING) length")?;
            let bytes = input.as_bytes();
            if l < -1 {
                return Err(format!("string(SUBSTRING) length {l} is under -1"));
            }
            if b > bytes.len() {
                return Err("string(SUBSTRING) begin out of range".into());
            }
            let end = if l < 0 {
                bytes.len()
            } else {
                (b + l as usize).min(bytes.len())
            };
            let text = String::from_utf8_lossy(&bytes[b..end]).into_owned();
            vec![(out.to_string(), val(text, all))]
        }
        ("FIND", [input, needle, out, flags @ ..]) => {
            let at = if flags.contains(&"REVERSE") {
                input.rfind(needle)
            } else {
                input.find(needle)
            };
            let n = at.map_or(-1, |p| p as i64);
            vec![(out.to_string(), val(n.to_string(), all))]
        }
        ("REPEAT", [input, count, out]) => {
            let n: usize = count.trim().parse().map_err(|_| "string(REPEAT) count")?;
            if input.len().saturating_mul(n) > super::value::MAX_VALUE {
                return Ok(None);
            }
            vec![(out.to_string(), val(input.repeat(n), all))]
        }
        ("COMPARE", [how, a, b, out]) => {
            let r = match *how {
                "EQUAL" => a == b,
                "NOTEQUAL" => a != b,
                "LESS" => a < b,
                "GREATER" => a > b,
                "LESS_EQUAL" => a <= b,
                "GREATER_EQUAL" => a >= b,
                _ => return Ok(None),
            };
            vec![(out.to_string(), val(if r { "1" } else { "0" }, all))]
        }
        ("REGEX", rest) => return super::regex::string_regex(rest, get, caret_once, &all),
        ("JSON", rest) => return super::json::string_json(rest, &all),
        // `string(ASCII <code>... <out>)`: codes below 128 are those characters.
        ("ASCII", [codes @ .., out])
            if !codes.is_empty()
                && codes
                    .iter()
                    .all(|c| c.trim().parse::<u8>().is_ok_and(|n| n < 128)) =>
        {
            let text: String = codes
                .iter()
                .filter_map(|c| c.trim().parse::<u8>().ok())
                .map(char::from)
                .collect();
            vec![(out.to_string(), val(text, all))]
        }
        ("HEX", [input, out]) => {
            let text = hex::encode(input.as_bytes());
            vec![(out.to_string(), val(text, all))]
        }
        // A leading digit gets a `_` before it; every byte that is not a letter, a digit or
        // `_` becomes `_`.
        ("MAKE_C_IDENTIFIER", [input, out]) => {
            let mut text = String::new();
            if input.starts_with(|c: char| c.is_ascii_digit()) {
                text.push('_');
            }
            text.extend(input.bytes().map(|b| {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    char::from(b)
                } else {
                    '_'
                }
            }));
            vec![(out.to_string(), val(text, all))]
        }
        ("SHA256", [out, input]) => {
            use sha2::Digest;
            let text = hex::encode(sha2::Sha256::digest(input.as_bytes()));
            vec![(out.to_string(), val(text, all))]
        }
        (
            "MD5" | "SHA1" | "SHA224" | "SHA256" | "SHA384" | "SHA512" | "SHA3_224" | "SHA3_256"
            | "SHA3_384" | "SHA3_512" | "GENEX_STRIP" | "MAKE_C_IDENTIFIER" | "HEX" | "ASCII"
            | "CONFIGURE",
            [..],
        ) => {
            let out = match op.text.as_str() {
                "ASCII" => texts.last(),
                "CONFIGURE" | "GENEX_STRIP" | "MAKE_C_IDENTIFIER" | "HEX" => texts.get(1),
                _ => texts.first(),
            };
            match out {
                Some(o) => vec![(o.to_string(), val("", opaque(&op.text)))],
                None => return Ok(None),
            }
        }
        ("TIMESTAMP" | "RANDOM" | "UUID", [..]) => {
            let out = match op.text.as_str() {
                "RANDOM" => texts.last(),
                _ => texts.first(),
            };
            match out {
                Some(o) => vec![(o.to_string(), val("", opaque(&op.text)))],
                None => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
}

/// `math(EXPR <var> "<expr>" [OUTPUT_FORMAT ...])`: 64-bit integer arithmetic.
pub(super) fn math(args: &[Arg]) -> Result<Option<Sets>, String> {
    let (Some(op), Some(out), Some(expr)) = (args.first(), args.get(1), args.get(2)) else {
        return Err("math() arguments".into());
    };
    if op.text != "EXPR" {
        return Err("math() needs EXPR".into());
    }
    let hex = args.get(4).is_some_and(|a| a.text == "HEXADECIMAL");
    let taint = taint_of(&args[2..]);
    let mut p = MathParser {
        s: expr.text.as_bytes(),
        i: 0,
        depth: 0,
        too_deep: false,
    };
    let v = p.or().and_then(|v| {
        p.ws();
        if p.i == p.s.len() { Some(v) } else { None }
    });
    let Some(v) = v else {
        if p.too_deep {
            return Ok(None);
        }
        return Err(format!("math(EXPR) cannot parse `{}`", expr.text));
    };
    let text = if hex {
        // CMake prints the 64 bits as unsigned (`-1` is `0xffffffffffffffff`).
        format!("0x{:x}", v as u64)
    } else {
        v.to_string()
    };
    Ok(Some(vec![(out.text.clone(), val(text, taint))]))
}

struct MathParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
    /// Nested past [`MATH_DEPTH`].
    too_deep: bool,
}

/// Unary operators and parentheses nested deeper than this are not followed: CMake's parser
/// runs out of stack at about 197, and no build nests anywhere near this.
const MATH_DEPTH: usize = 64;

impl MathParser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }
    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s.get(self.i..self.i + tok.len()) == Some(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Option<i64> {
        let mut v = self.xor()?;
        while self.eat("|") {
            v |= self.xor()?;
        }
        Some(v)
    }
    fn xor(&mut self) -> Option<i64> {
        let mut v = self.and()?;
        while self.eat("^") {
            v ^= self.and()?;
        }
        Some(v)
    }
    fn and(&mut self) -> Option<i64> {
        let mut v = self.shift()?;
        while self.eat("&") {
            v &= self.shift()?;
        }
        Some(v)
    }
    fn shift(&mut self) -> Option<i64> {
        let mut v = self.sum()?;
        loop {
            if self.eat("<<") {
                let r = self.sum()?;
                v = v.checked_shl(u32::try_from(r).ok()?)?;
            } else if self.eat(">>") {
                let r = self.sum()?;
                v = v.checked_shr(u32::try_from(r).ok()?)?;
            } else {
                return Some(v);
            }
        }
    }
    fn sum(&mut self) -> Option<i64> {
        let mut v = self.product()?;
        loop {
            if self.eat("+") {
                v = v.checked_add(self.product()?)?;
            } else if self.eat("-") {
                v = v.checked_sub(self.product()?)?;
            } else {
                return Some(v);
            }
        }
    }
    fn product(&mut self) -> Option<i64> {
        let mut v = self.unary()?;
        loop {
            if self.eat("*") {
                v = v.checked_mul(self.unary()?)?;
            } else if self.eat("/") {
                v = v.checked_div(self.unary()?)?;
            } else if self.eat("%") {
                v = v.checked_rem(self.unary()?)?;
            } else {
                return Some(v);
            }
        }
    }
    fn unary(&mut self) -> Option<i64> {
        self.depth += 1;
        if self.depth > MATH_DEPTH {
            self.too_deep = true;
            return None;
        }
        let r = if self.eat("-") {
            self.unary().and_then(i64::checked_neg)
        } else if self.eat("+") {
            self.unary()
        } else if self.eat("~") {
            self.unary().map(|v| !v)
        } else if self.eat("(") {
            let v = self.or()?;
            self.eat(")").then_some(v)
        } else {
            self.number()
        };
        self.depth -= 1;
        r
    }
    fn number(&mut self) -> Option<i64> {
        self.ws();
        let start = self.i;
        if self.s.get(self.i..self.i + 2) == Some(b"0x")
            || self.s.get(self.i..self.i + 2) == Some(b"0X")
        {
            self.i += 2;
            let hs = self.i;
            while self.s.get(self.i).is_some_and(u8::is_ascii_hexdigit) {
                self.i += 1;
            }
            let t = std::str::from_utf8(self.s.get(hs..self.i)?).ok()?;
            return i64::from_str_radix(t, 16).ok();
        }
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let t = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
        t.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(texts: &[&str]) -> Vec<Arg> {
        texts
            .iter()
            .map(|t| Arg {
                text: t.to_string(),
                taint: Taint::new(),
                quoted: true,
                line: 1,
                alts: crate::pin::cmake::value::Alts::new(),
            })
            .collect()
    }

    fn out(texts: &[&str]) -> Option<String> {
        let unset = |_: &str| Val::exact("");
        let sets = if texts.first() == Some(&"EXPR") {
            math(&args(texts))
        } else {
            string(&args(texts), &unset, false)
        }
        .ok()??;
        sets.into_iter()
            .find(|(n, _)| n == "OUT")
            .and_then(|(_, v)| v)
            .filter(|v| v.taint.is_empty())
            .map(|v| v.text)
    }

    #[test]
    fn a_search_that_matches_the_empty_string_is_unknown() {
        // CMake 3.x fails here and CMake 4 goes on: which CMake runs decides.
        assert_eq!(out(&["REGEX", "REPLACE", "a*", "y", "OUT", "aab"]), None);
        assert_eq!(out(&["REGEX", "MATCHALL", "b*", "OUT", "ab"]), None);
        assert_eq!(out(&["REGEX", "REPLACE", "x*", "y", "OUT", ""]), None);
        // Matches that are never empty, up to the end of the input.
        assert_eq!(
            out(&["REGEX", "REPLACE", "a+", "y", "OUT", "aabaa"]).as_deref(),
            Some("yby")
        );
        assert_eq!(
            out(&["REGEX", "MATCHALL", "[0-9]", "OUT", "1a2"]).as_deref(),
            Some("1;2")
        );
        // Nesting at MATH_DEPTH is computed; one level more is unknown, not an error.
        let deep = format!("{}1", "-".repeat(MATH_DEPTH - 1));
        assert_eq!(out(&["EXPR", "OUT", &deep]).as_deref(), Some("-1"));
        let deeper = format!("-{deep}");
        let sets = math(&args(&["EXPR", "OUT", &deeper])).expect("not an error");
        assert!(sets.is_none(), "{sets:?}");
        // A MATCH (one search) of the empty string is that empty match.
        assert_eq!(
            out(&["REGEX", "MATCH", "x*", "OUT", "ab"]).as_deref(),
            Some("")
        );
    }
}
