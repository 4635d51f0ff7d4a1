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
            || message.starts_with("expected an index less than ");
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
                .ok_or_else(|| format!("member '{step}' not found")),
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
                    fail(
                        &mut sets,
                        format!("{}-NOTFOUND", p.join("-")),
                        format!("expected an index less than {} got '{idx}'", names.len()),
                    )?;
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
