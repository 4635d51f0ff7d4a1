//! `string(JSON <out> [ERROR_VARIABLE <err>] GET|TYPE|LENGTH|MEMBER <json> <path>...)` as CMake
//! (jsoncpp) computes it: members in byte order of their names, scalars as text (booleans
//! `ON`/`OFF`, null empty, numbers as jsoncpp prints them), objects and arrays in jsoncpp's
//! styled layout (two-space indent), errors as `<path>-NOTFOUND` with `ERROR_VARIABLE` and a
//! failed command without it. `SET`, `REMOVE` and `EQUAL` are left unknown.

use super::builtins::Sets;
use super::value::{Input, Taint, Val};
use serde_json::Value;

fn val(text: impl Into<String>, taint: &Taint) -> Option<Val> {
    Some(Val {
        text: text.into(),
        taint: taint.clone(),
        alts: crate::pin::cmake::value::Alts::new(),
    })
}

/// Something jsoncpp would print in a way pinprobe does not reproduce (a non-ASCII or control
/// character in a string, a number past what it formats exactly).
struct Unsure;

/// `args` after `JSON`. `Ok(None)`: not evaluated (the outputs become unknown).
pub(super) fn string_json(args: &[&str], taint: &Taint) -> Result<Option<Sets>, String> {
    let Some((out, rest)) = args.split_first() else {
        return Err("string(JSON) needs an output variable".into());
    };
    let (err_var, rest) = match rest {
        ["ERROR_VARIABLE", e, rest @ ..] => (Some(*e), rest),
        _ => (None, rest),
    };
    let Some((mode, rest)) = rest.split_first() else {
        return Err("string(JSON) needs a mode".into());
    };
    let Some((json, path)) = rest.split_first() else {
        return Err(format!("string(JSON {mode}) needs a JSON string"));
    };
    let (path, index) = match *mode {
        "GET" | "TYPE" | "LENGTH" => (path, None),
        "MEMBER" => match path.split_last() {
            Some((i, p)) => (p, Some(*i)),
            None => return Err("string(JSON MEMBER) needs an index".into()),
        },
        _ => return Ok(None),
    };
    let unsure = |sets: &mut Sets| {
        let mut t = taint.clone();
        t.insert(Input::Opaque(format!("string(JSON {mode})")));
        sets.push((out.to_string(), val("", &t)));
        if let Some(e) = err_var {
            sets.push((e.to_string(), val("", &t)));
        }
    };
    let mut sets: Sets = Vec::new();
    let fail = |sets: &mut Sets, notfound: String, message: String| -> Result<(), String> {
        let Some(e) = err_var else {
            return Err(format!("string(JSON {mode}): {message}"));
        };
        sets.push((out.to_string(), val(notfound, taint)));
        // CMake's wording of a missing member or an index past the end (checked); other
        // messages are jsoncpp's or CMake's own: known to be an error, not their text.
        let exact = message.starts_with("member '") && message.ends_with("' not found")
            || message.starts_with("expected an index less than ")
            || message.starts_with("expected an array index, got: '");
        let mut t = taint.clone();
        if !exact {
            t.insert(Input::Opaque("string(JSON) error message".into()));
        }
        sets.push((e.to_string(), val(message, &t)));
        Ok(())
    };
    let root: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            fail(
                &mut sets,
                "NOTFOUND".into(),
                format!("failed parsing json string: {e}"),
            )?;
            return Ok(Some(sets));
        }
    };
    let mut at = &root;
    for (i, step) in path.iter().enumerate() {
        let notfound = || format!("{}-NOTFOUND", path[..=i].join("-"));
        let next = match at {
            Value::Object(m) => m
                .get(*step)
                // CMake names the whole path so far, space-separated.
                .ok_or_else(|| format!("member '{}' not found", path[..=i].join(" "))),
            Value::Array(a) => match step.parse::<usize>() {
                Ok(n) if n < a.len() => Ok(&a[n]),
                Ok(_) | Err(_) if step.bytes().all(|b| b.is_ascii_digit()) && !step.is_empty() => {
                    Err(format!(
                        "expected an index less than {} got '{step}'",
                        a.len()
                    ))
                }
                _ => Err(format!("expected an array index, got: '{step}'")),
            },
            _ => Err(format!(
                "invalid path '{step}', need element of OBJECT or ARRAY type to lookup member"
            )),
        };
        match next {
            Ok(v) => at = v,
            Err(message) => {
                fail(&mut sets, notfound(), message)?;
                return Ok(Some(sets));
            }
        }
    }
    let text = match *mode {
        "GET" => match scalar_or_styled(at) {
            Ok(t) => t,
            Err(Unsure) => {
                unsure(&mut sets);
                return Ok(Some(sets));
            }
        },
        "TYPE" => type_name(at).to_string(),
        "LENGTH" => match at {
            Value::Array(a) => a.len().to_string(),
            Value::Object(m) => m.len().to_string(),
            other => {
                fail(
                    &mut sets,
                    format!("{}-NOTFOUND", path.join("-")),
                    format!(
                        "LENGTH needs to be called with an element of type ARRAY or OBJECT, got {}",
                        type_name(other)
                    ),
                )?;
                return Ok(Some(sets));
            }
        },
        _ => {
            let Value::Object(m) = at else {
                fail(
                    &mut sets,
                    format!("{}-NOTFOUND", path.join("-")),
                    format!(
                        "MEMBER needs to be called with an element of type OBJECT, got {}",
                        type_name(at)
                    ),
                )?;
                return Ok(Some(sets));
            };
            let names = sorted_names(m);
            match index.and_then(|i| i.parse::<usize>().ok()) {
                Some(i) if i < names.len() => names[i].to_string(),
                _ => {
                    let idx = index.unwrap_or("");
                    let mut p: Vec<&str> = path.to_vec();
                    p.push(idx);
                    // As for an array's index: a number out of range, or not a number.
                    let message = if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) {
                        format!("expected an index less than {} got '{idx}'", names.len())
                    } else {
                        format!("expected an array index, got: '{idx}'")
                    };
                    fail(&mut sets, format!("{}-NOTFOUND", p.join("-")), message)?;
                    return Ok(Some(sets));
                }
            }
        }
    };
    sets.push((out.to_string(), val(text, taint)));
    if let Some(e) = err_var {
        sets.push((e.to_string(), val("NOTFOUND", taint)));
    }
    Ok(Some(sets))
}

/// What a failing `string(JSON)` without `ERROR_VARIABLE` still sets: its output, as with one.
pub(super) fn failed(args: &[&str], taint: &Taint) -> Sets {
    const PROBE: &str = "\u{0}error";
    let Some((out, rest)) = args.split_first() else {
        return Vec::new();
    };
    let mut with: Vec<&str> = vec![out, "ERROR_VARIABLE", PROBE];
    with.extend_from_slice(rest);
    match string_json(&with, taint) {
        Ok(Some(sets)) => sets.into_iter().filter(|(n, _)| n != PROBE).collect(),
        _ => Vec::new(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(_) => "NUMBER",
        Value::String(_) => "STRING",
        Value::Array(_) => "ARRAY",
        Value::Object(_) => "OBJECT",
    }
}

fn sorted_names(m: &serde_json::Map<String, Value>) -> Vec<&str> {
    let mut names: Vec<&str> = m.keys().map(String::as_str).collect();
    names.sort_unstable();
    names
}

/// What `GET` gives: a scalar's text, or the styled JSON of an object or array.
fn scalar_or_styled(v: &Value) -> Result<String, Unsure> {
    Ok(match v {
        Value::Null => String::new(),
        Value::Bool(b) => if *b { "ON" } else { "OFF" }.to_string(),
        Value::Number(n) => number(n)?,
        Value::String(s) => s.clone(),
        _ => {
            let mut w = Styled {
                out: String::new(),
                indent: String::new(),
                indented: true,
            };
            w.value(v)?;
            w.out
        }
    })
}

/// jsoncpp's number text: integers as written, reals as `%.17g` with `.0` added when that has
/// neither a point nor an exponent.
fn number(n: &serde_json::Number) -> Result<String, Unsure> {
    if let Some(i) = n.as_i64() {
        return Ok(i.to_string());
    }
    if let Some(u) = n.as_u64() {
        return Ok(u.to_string());
    }
    let x = n.as_f64().ok_or(Unsure)?;
    let mut s = g17(x).ok_or(Unsure)?;
    if !s.contains('.') && !s.contains('e') {
        s.push_str(".0");
    }
    Ok(s)
}

/// C's `%.17g`.
fn g17(x: f64) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(if x.is_sign_negative() { "-0" } else { "0" }.into());
    }
    let sci = format!("{x:.16e}");
    let (mantissa, exp) = sci.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..17).contains(&exp) {
        let m = trim(mantissa.to_string());
        let sign = if exp < 0 { '-' } else { '+' };
        Some(format!("{m}e{sign}{:02}", exp.abs()))
    } else {
        let decimals = usize::try_from(16 - exp).ok()?;
        Some(trim(format!("{x:.decimals$}")))
    }
}

/// jsoncpp's `BuiltStyledStreamWriter` with a two-space indentation (what CMake prints).
struct Styled {
    out: String,
    indent: String,
    indented: bool,
}

const RIGHT_MARGIN: usize = 74;

impl Styled {
    fn newline_indent(&mut self) {
        self.out.push('\n');
        self.out.push_str(&self.indent);
    }

    fn with_indent(&mut self, s: &str) {
        if !self.indented {
            self.newline_indent();
        }
        self.out.push_str(s);
        self.indented = false;
    }

    fn scalar(v: &Value) -> Result<String, Unsure> {
        Ok(match v {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => number(n)?,
            Value::String(s) => quoted(s)?,
            Value::Array(a) if a.is_empty() => "[]".into(),
            Value::Object(m) if m.is_empty() => "{}".into(),
            _ => return Err(Unsure),
        })
    }

    fn value(&mut self, v: &Value) -> Result<(), Unsure> {
        match v {
            Value::Array(a) if !a.is_empty() => self.array(a),
            Value::Object(m) if !m.is_empty() => {
                self.with_indent("{");
                self.indent.push_str("  ");
                let names = sorted_names(m);
                for (i, name) in names.iter().enumerate() {
                    self.with_indent(&quoted(name)?);
                    self.out.push_str(" : ");
                    self.value(&m[*name])?;
                    if i + 1 < names.len() {
                        self.out.push(',');
                    }
                }
                self.indent.truncate(self.indent.len() - 2);
                self.with_indent("}");
                Ok(())
            }
            other => {
                let s = Self::scalar(other)?;
                self.out.push_str(&s);
                Ok(())
            }
        }
    }

    fn array(&mut self, a: &[Value]) -> Result<(), Unsure> {
        let mut multiline = a.len() * 3 >= RIGHT_MARGIN
            || a.iter().any(|c| match c {
                Value::Array(x) => !x.is_empty(),
                Value::Object(x) => !x.is_empty(),
                _ => false,
            });
        let mut children = Vec::new();
        if !multiline {
            for c in a {
                children.push(Self::scalar(c)?);
            }
            let len = 4 + (a.len() - 1) * 2 + children.iter().map(String::len).sum::<usize>();
            multiline = len >= RIGHT_MARGIN;
        }
        if !multiline {
            self.out.push_str("[ ");
            self.out.push_str(&children.join(", "));
            self.out.push_str(" ]");
            return Ok(());
        }
        self.with_indent("[");
        self.indent.push_str("  ");
        for (i, c) in a.iter().enumerate() {
            if children.is_empty() {
                if !self.indented {
                    self.newline_indent();
                }
                self.indented = true;
                self.value(c)?;
                self.indented = false;
            } else {
                let s = children[i].clone();
                self.with_indent(&s);
            }
            if i + 1 < a.len() {
                self.out.push(',');
            }
        }
        self.indent.truncate(self.indent.len() - 2);
        self.with_indent("]");
        Ok(())
    }
}

/// A JSON string literal; only printable ASCII (and the escapes jsoncpp writes the same way).
fn quoted(s: &str) -> Result<String, Unsure> {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            _ => return Err(Unsure),
        }
    }
    out.push('"');
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! `string(JSON)` against real CMake: every mode over every place of a set of documents
    //! (and steps that miss: a member not there, an index past the end or not a number, a step
    //! into a scalar), with and without `ERROR_VARIABLE`, in one configure run; pinprobe must
    //! give CMake's output and error variables for every call it decides, fail where CMake
    //! fails, and leave unknown only what it cannot print as jsoncpp does.

    use super::*;
    use std::fmt::Write as _;

    /// The documents (no duplicate names: jsoncpp and serde_json keep different ones).
    const DOCS: [&str; 8] = [
        r#"{"s": "str", "b": {"z": 1, "a": [1, 2.50, "x", true, null, {"k": "v"}]}, "n": 1.0, "e": 1e3, "f": 0.1, "short": [1, "two", [], {}], "long": ["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccccccccc"], "empty": {}, "ea": []}"#,
        r#"{"B": false, "a": {"y": {"x": [[1, 2], {"p": null}]}, "q": "tab\there \"quoted\" back\\slash\nline"}, "Z": -12, "big": 18446744073709551615, "neg": -9223372036854775808, "tiny": 1e-7, "huge": 1.5e300, "third": 0.333333333333333314829616256247390992939472198486328125, "int_real": 1e16, "m": -0.0, "frac": 123456.789}"#,
        r#"[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]"#,
        r#"[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]"#,
        r#"{"deps": [{"name": "vllm-flash-attn", "tag": "v2.6.2", "opts": {"patch": ["a.patch", "b.patch"], "shallow": true}}, {"name": "cutlass", "tag": "v3.5.0", "opts": {}}], "version": 2, "list": [[], {}, [[]], [{}], "x"]}"#,
        r#"{"u": "caf\u00e9", "c": "bell\u0007", "ok": "plain", "arr": ["caf\u00e9"], "obj": {"k": "\u00e9"}}"#,
        r#"{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": [true, false, null, 1, 2, 3, "sixty-four characters of text in one string!!"], "r": [1.25, 1e100, 5e-324]}"#,
        // Arrays one character either side of jsoncpp's right margin (74) on one line.
        r#"{"at73": ["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "ccccccccccccccccccc"], "at74": ["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc"]}"#,
    ];

    /// One `string(JSON)` call: the document, whether `ERROR_VARIABLE E` is given, the mode
    /// and the path (with `MEMBER`'s index last).
    struct Call {
        doc: usize,
        err: bool,
        mode: &'static str,
        path: Vec<String>,
    }

    /// Every place of `v` (depth 3 at most) and one step past it that misses.
    fn places(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(at.clone());
        let mut miss = |step: &str| {
            let mut p = at.clone();
            p.push(step.to_string());
            out.push(p);
        };
        match v {
            Value::Object(m) => {
                miss("nope");
                if at.len() < 3 {
                    for (k, c) in m {
                        at.push(k.clone());
                        places(c, at, out);
                        at.pop();
                    }
                }
            }
            Value::Array(a) => {
                miss(&a.len().to_string());
                miss("x");
                miss("-1");
                if at.len() < 3 {
                    for (i, c) in a.iter().enumerate() {
                        at.push(i.to_string());
                        places(c, at, out);
                        at.pop();
                    }
                }
            }
            _ => miss("x"),
        }
    }

    fn calls() -> Vec<Call> {
        let mut out = Vec::new();
        for (doc, text) in DOCS.iter().enumerate() {
            let root: Value = serde_json::from_str(text).expect("a test document parses");
            let mut paths = Vec::new();
            places(&root, &mut Vec::new(), &mut paths);
            for path in paths {
                // Each mode with `ERROR_VARIABLE`; without it, calls that succeed or fail as
                // the place makes them (a failure sets the output all the same: [`failed`]).
                for (err, mode, index) in [
                    (true, "GET", None),
                    (true, "TYPE", None),
                    (true, "LENGTH", None),
                    (true, "MEMBER", Some("1")),
                    (true, "MEMBER", Some("9")),
                    (true, "MEMBER", Some("x")),
                    (false, "GET", None),
                    (false, "LENGTH", None),
                    (false, "MEMBER", Some("0")),
                ] {
                    let mut path = path.clone();
                    path.extend(index.map(str::to_string));
                    out.push(Call {
                        doc,
                        err,
                        mode,
                        path,
                    });
                }
            }
        }
        // A document that does not parse, and one that is not an object or array at all.
        for (doc, path) in [
            (usize::MAX, vec!["a".to_string()]),
            (usize::MAX - 1, vec![]),
        ] {
            for err in [true, false] {
                out.push(Call {
                    doc,
                    err,
                    mode: "GET",
                    path: path.clone(),
                });
            }
        }
        out
    }

    fn document(doc: usize) -> &'static str {
        match doc {
            usize::MAX => "{bad",
            d if d == usize::MAX - 1 => "\"just a string\"",
            d => DOCS[d],
        }
    }

    /// What CMake computed for each call: the output and error variables (`None`: left as they
    /// were), and whether it reported an error.
    #[derive(Debug, Default, Clone, PartialEq)]
    struct Answer {
        out: Option<String>,
        err: Option<String>,
        failed: bool,
    }

    const UNSET: &str = "pinprobe-unset";

    fn cmake_answers(version: &str, calls: &[Call]) -> Vec<Answer> {
        let mut lists =
            String::from("cmake_minimum_required(VERSION 3.26)\nproject(t LANGUAGES NONE)\n");
        let mut line_of = std::collections::BTreeMap::new();
        for (i, call) in calls.iter().enumerate() {
            let mut words = vec!["O".to_string()];
            if call.err {
                words.extend(["ERROR_VARIABLE".into(), "E".into()]);
            }
            words.push(call.mode.into());
            words.push(format!("[==[{}]==]", document(call.doc)));
            words.extend(call.path.iter().map(|p| format!("\"{p}\"")));
            write!(lists, "set(O {UNSET})\nset(E {UNSET})\n").expect("write");
            line_of.insert(lists.lines().count() + 1, i);
            writeln!(lists, "string(JSON {})", words.join(" ")).expect("write");
            writeln!(
                lists,
                "string(HEX \"${{O}}\" HO)\nstring(HEX \"${{E}}\" HE)\nmessage(\"pinprobe-json {i} <${{HO}}> <${{HE}}>\")"
            )
            .expect("write");
        }
        let log = crate::pin::cmake::live::configure(version, &lists);
        let unhex = |h: &str| -> Option<String> {
            let bytes = hex::decode(h).expect("hex");
            let text = String::from_utf8(bytes).expect("utf-8");
            (text != UNSET).then_some(text)
        };
        let mut answers = vec![Answer::default(); calls.len()];
        for line in log.lines() {
            if let Some(rest) = line.strip_prefix("pinprobe-json ") {
                let mut parts = rest.split(' ');
                let i: usize = parts.next().and_then(|n| n.parse().ok()).expect("an index");
                let mut field = || {
                    parts
                        .next()
                        .and_then(|f| f.strip_prefix('<'))
                        .and_then(|f| f.strip_suffix('>'))
                        .expect("a field")
                };
                answers[i].out = unhex(field());
                answers[i].err = unhex(field());
            } else if let Some(rest) = line.strip_prefix("CMake Error at CMakeLists.txt:") {
                let n: usize = rest
                    .split(' ')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a line number");
                let i = line_of
                    .get(&n)
                    .unwrap_or_else(|| panic!("an error at line {n}: {log}"));
                answers[*i].failed = true;
            }
        }
        answers
    }

    /// Whether `GET` at `path` of document `doc` is a scalar, or an object or array whose
    /// names and strings are printable ASCII (with `\n`, `\t`): what pinprobe prints as jsoncpp.
    fn printable_at(doc: usize, path: &[String]) -> bool {
        fn printable(v: &Value) -> bool {
            let text = |s: &str| s.chars().all(|c| matches!(c, ' '..='~' | '\n' | '\t'));
            match v {
                Value::String(s) => text(s),
                Value::Array(a) => a.iter().all(printable),
                Value::Object(m) => m.iter().all(|(k, c)| text(k) && printable(c)),
                _ => true,
            }
        }
        let Some(text) = DOCS.get(doc) else {
            return true;
        };
        let mut at: Value = serde_json::from_str(text).expect("a test document parses");
        for step in path {
            let next = match &at {
                Value::Object(m) => m.get(step).cloned(),
                Value::Array(a) => step.parse::<usize>().ok().and_then(|i| a.get(i)).cloned(),
                _ => None,
            };
            match next {
                Some(v) => at = v,
                None => return true,
            }
        }
        !matches!(at, Value::Array(_) | Value::Object(_)) || printable(&at)
    }

    /// The error messages `fail` words as CMake does: a missing member, an index past the end
    /// or not a number.
    fn worded_as_cmake(message: &str) -> bool {
        message.starts_with("member '") && message.ends_with("' not found")
            || message.starts_with("expected an index less than ")
            || message.starts_with("expected an array index, got: '")
    }

    #[test]
    fn string_json_is_cmakes_on_every_place_of_real_shaped_documents() {
        let Some(version) = crate::pin::cmake::live::version("string(JSON)") else {
            return;
        };
        let calls = calls();
        let answers = cmake_answers(&version, &calls);
        let taint = Taint::new();
        let (mut decided, mut unknown, mut unworded) = (0, 0, 0);
        let mut failures = Vec::new();
        for (call, cmake) in calls.iter().zip(&answers) {
            let mut args: Vec<&str> = vec!["O"];
            if call.err {
                args.extend(["ERROR_VARIABLE", "E"]);
            }
            args.push(call.mode);
            args.push(document(call.doc));
            args.extend(call.path.iter().map(String::as_str));
            let shown = format!("string(JSON {}) on document {}", args.join(" "), call.doc);
            let sets = match string_json(&args, &taint) {
                Ok(Some(sets)) => {
                    if cmake.failed {
                        failures.push(format!("{shown}: CMake fails, pinprobe does not"));
                        continue;
                    }
                    sets
                }
                Ok(None) => {
                    // Every mode called here is one pinprobe evaluates.
                    failures.push(format!("{shown}: not evaluated"));
                    continue;
                }
                Err(why) => {
                    if call.err || !cmake.failed {
                        failures.push(format!("{shown}: pinprobe fails ({why}), CMake does not"));
                        continue;
                    }
                    failed(&args, &taint)
                }
            };
            for (name, cmake_value) in [("O", &cmake.out), ("E", &cmake.err)] {
                let ours = sets.iter().find(|(n, _)| n == name).map(|(_, v)| v);
                match ours {
                    None if cmake_value.is_none() => {}
                    // An error message pinprobe knows is one but not its wording.
                    Some(Some(v)) if !v.taint.is_empty() && name == "E" => {
                        // The wordings pinprobe reproduces must be decided, not only sound.
                        if cmake_value.as_deref().is_some_and(worded_as_cmake) {
                            failures.push(format!(
                                "{shown}: CMake's {cmake_value:?} is a wording pinprobe knows, yet unknown"
                            ));
                        } else {
                            unworded += 1;
                        }
                    }
                    Some(Some(v)) if !v.taint.is_empty() => {
                        // Only what jsoncpp prints in a way pinprobe does not reproduce (a
                        // character beyond printable ASCII in an object or array) may be unknown.
                        if call.mode == "GET" && !printable_at(call.doc, &call.path) {
                            unknown += 1;
                        } else {
                            failures.push(format!(
                                "{shown}: {name} is {cmake_value:?} for CMake, unknown for pinprobe"
                            ));
                        }
                    }
                    Some(Some(v)) if Some(&v.text) == cmake_value.as_ref() => decided += 1,
                    other => failures.push(format!(
                        "{shown}: {name} is {:?} for CMake, {:?} for pinprobe",
                        cmake_value,
                        other.map(|v| v.as_ref().map(|v| &v.text))
                    )),
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} calls differ from CMake; first ones:\n{}",
            failures.len(),
            calls.len(),
            failures[..failures.len().min(8)].join("\n")
        );
        eprintln!(
            "{} calls: {decided} values decided and equal to CMake's, {unknown} unknown, {unworded} error messages not worded",
            calls.len()
        );
        assert!(
            decided > 20 * unknown,
            "{decided} decided, {unknown} unknown"
        );
    }
}
