//! `pip install` in a Dockerfile's `RUN` instructions: `pip`, `pip3`, `python -m pip`,
//! `python3 -m pip` and `uv pip` installs of named requirements (`vllm==0.30.0`,
//! `"flash-attn>=2.7"`), with `ARG`/`ENV` defaults substituted (`vllm==${VLLM_VERSION}`). A
//! requirement whose text still holds a variable with no default is reported, not guessed.
//! Options and their arguments (`-r file`, `--index-url URL`) are skipped.

use super::{Requirement, parse_pep508};

/// Options of `pip install` that take an argument.
const WITH_ARGUMENT: &[&str] = &[
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--trusted-host",
    "--config-settings",
    "-C",
    "--global-option",
    "--no-binary",
    "--only-binary",
    "--upgrade-strategy",
    "--progress-bar",
    "--python",
    "-e",
    "--editable",
];

/// The requirements a Dockerfile's `RUN` lines install; `problems` gets the ones that could not
/// be read (an unset variable, a bad requirement), naming file and line.
pub fn read(file: &str, text: &str, problems: &mut Vec<String>) -> Vec<Requirement> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for (line, instruction) in instructions(text) {
        let (keyword, rest) = instruction
            .trim()
            .split_once(char::is_whitespace)
            .unwrap_or((instruction.trim(), ""));
        match keyword.to_ascii_uppercase().as_str() {
            "ARG" | "ENV" => {
                for assignment in rest.split_whitespace() {
                    if let Some((k, v)) = assignment.split_once('=') {
                        let v = v.trim_matches(['"', '\'']);
                        let v = substitute(v, &vars).unwrap_or_else(|| v.to_string());
                        vars.retain(|(name, _)| name != k);
                        vars.push((k.to_string(), v));
                    }
                }
            }
            "RUN" => {
                for command in rest.split(['&', ';', '|']) {
                    for text in installs(command) {
                        let Some(expanded) = substitute(&text, &vars) else {
                            problems.push(format!(
                                "{file}:{line}: `{text}` uses a build argument with no default"
                            ));
                            continue;
                        };
                        match parse_pep508(&expanded, "Dockerfile", file, line) {
                            Ok(r) => out.push(r),
                            Err(why) => problems.push(format!("{file}:{line}: `{text}`: {why}")),
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Instructions with `\` continuations joined and comments dropped, each with its first line.
fn instructions(text: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut current: Option<(u32, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.starts_with('#') {
            continue;
        }
        let (start, mut acc) = current.take().unwrap_or((i as u32 + 1, String::new()));
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                acc.push_str(part);
                acc.push(' ');
                current = Some((start, acc));
            }
            None => {
                acc.push_str(trimmed);
                if !acc.trim().is_empty() {
                    out.push((start, acc));
                }
            }
        }
    }
    if let Some(last) = current {
        out.push(last);
    }
    out
}

/// The requirement arguments of one shell command, when it is a pip install.
fn installs(command: &str) -> Vec<String> {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']).to_string())
        .collect();
    let Some(at) = words.windows(2).position(|w| {
        w[1] == "install"
            && (w[0] == "pip"
                || w[0] == "pip3"
                || w[0].ends_with("/pip")
                || w[0].ends_with("/pip3"))
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words.iter().skip(at + 2) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if w.starts_with('-') {
            skip_next = WITH_ARGUMENT.contains(&w.as_str());
            continue;
        }
        if w.starts_with('.') || w.starts_with('/') || w.is_empty() {
            // A local path (a project, a wheel file copied in): not a named requirement.
            continue;
        }
        out.push(w.clone());
    }
    out
}

/// `${NAME}` and `$NAME` replaced by their values; `None` when one has none.
fn substitute(text: &str, vars: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            let inner = &braced[..end];
            // `${NAME:-default}`
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            let value = vars
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .or(default)?;
            out.push_str(value);
            rest = &braced[end + 1..];
            continue;
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        let value = vars.iter().rev().find(|(k, _)| k == name)?;
        out.push_str(&value.1);
        rest = tail;
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_installs_in_run_lines() {
        let text = "FROM python:3.12\nARG VLLM_VERSION=0.30.0\n# RUN pip install vllm==0.1.0\nRUN apt-get update && \\\n    python3 -m pip install --no-cache-dir \\\n      --extra-index-url https://example.invalid/simple \\\n      \"vllm==${VLLM_VERSION}\" 'flash-attn>=2.7' && rm -rf /root/.cache\nRUN uv pip install --system -r requirements.txt .\nRUN pip3 install sgl-kernel==$SGL\n";
        let mut problems = Vec::new();
        let reqs = read("Dockerfile", text, &mut problems);
        let got: Vec<(String, u32)> = reqs.iter().map(|r| (r.written.clone(), r.line)).collect();
        assert_eq!(
            got,
            [
                ("vllm==0.30.0".to_string(), 4),
                ("flash-attn>=2.7".to_string(), 4)
            ]
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("Dockerfile:9:"), "{problems:?}");
    }

    #[test]
    fn substitution_forms() {
        let vars = vec![("A".to_string(), "1".to_string())];
        assert_eq!(substitute("x${A}y$A", &vars).as_deref(), Some("x1y1"));
        assert_eq!(substitute("${B:-2}", &vars).as_deref(), Some("2"));
        assert_eq!(substitute("$B", &vars), None);
        assert_eq!(substitute("${A", &vars), None);
    }
}
