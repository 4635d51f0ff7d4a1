//! pip requirements files as pip reads them: `\` continuations, `#` comments (at the start or
//! after whitespace), `-r`/`--requirement` and `-c`/`--constraint` includes (relative to the
//! including file), `-e`/`--editable`, per-requirement options (`--hash=...`), global options
//! (ignored), PEP 508 requirements, and bare direct references (`git+...#egg=name`, a wheel's
//! URL or path). A constraint narrows the versions of a requirement of the same name; it is
//! not a requirement itself.

use super::{Allowed, Requirement, direct_reference, parse_pep508};
use crate::view::{TargetError, View};

/// Includes followed at most (a cycle stops earlier: each file is read once).
const MAX_INCLUDES: usize = 256;

/// What one top-level requirements file gives.
#[derive(Debug, Default)]
pub struct Read {
    pub requirements: Vec<Requirement>,
    /// The files it included (`-r`, `-c`), which the walk need not read again.
    pub included: Vec<String>,
}

/// Read `file` and everything it includes.
pub fn read(view: &dyn View, file: &str, problems: &mut Vec<String>) -> Result<Read, TargetError> {
    let mut out = Read::default();
    let mut constraints = Vec::new();
    let mut seen = vec![file.to_string()];
    let mut queue = vec![(file.to_string(), false)];
    while let Some((path, is_constraint)) = queue.pop() {
        let bytes = match view.read(&path) {
            Err(TargetError::Unreadable { .. }) => None,
            other => other?,
        };
        let Some(bytes) = bytes else {
            problems.push(format!(
                "{path}: included from a requirements file but not in the tree: its requirements are not seen"
            ));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (line, logical) in logical_lines(&text) {
            match parse_line(&logical) {
                Line::Nothing => {}
                Line::Include {
                    path: target,
                    constraint,
                } => {
                    let joined = join(&path, &target);
                    if joined.is_none() {
                        problems.push(format!(
                            "{path}:{line}: `{target}` is outside the tree or a URL: its requirements are not seen"
                        ));
                    }
                    if let Some(joined) = joined
                        && !seen.contains(&joined)
                        && seen.len() < MAX_INCLUDES
                    {
                        seen.push(joined.clone());
                        out.included.push(joined.clone());
                        queue.push((joined, constraint || is_constraint));
                    }
                }
                Line::Requirement(text) => {
                    let parsed = match direct_reference(&text, None) {
                        Some((name, allowed)) if !text.contains(" @ ") => Ok(Requirement {
                            name,
                            written: text.clone(),
                            allowed,
                            marker: None,
                            source: "requirements",
                            file: path.clone(),
                            line,
                        }),
                        _ => parse_pep508(&text, "requirements", &path, line),
                    };
                    match parsed {
                        Ok(r) if is_constraint => constraints.push(r),
                        Ok(r) => out.requirements.push(r),
                        Err(why) => problems.push(format!("{path}:{line}: `{text}`: {why}")),
                    }
                }
            }
        }
    }
    // A constraint narrows the versions of the requirement of its name.
    for c in &constraints {
        for r in out.requirements.iter_mut().filter(|r| r.name == c.name) {
            match (&mut r.allowed, &c.allowed) {
                (Allowed::Versions(mine), Allowed::Versions(theirs)) => {
                    *mine = mine.intersection(theirs);
                    r.written = format!(
                        "{} (constrained by `{}`, {}:{})",
                        r.written, c.written, c.file, c.line
                    );
                }
                (Allowed::Versions(_), other) => {
                    r.allowed = other.clone();
                    r.written = format!(
                        "{} (constrained to `{}`, {}:{})",
                        r.written, c.written, c.file, c.line
                    );
                }
                _ => {}
            }
        }
    }
    out.requirements
        .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(out)
}

/// One logical line's meaning.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Nothing,
    Include { path: String, constraint: bool },
    Requirement(String),
}

/// Lines joined at a trailing `\`, comments removed, each with its first physical line.
fn logical_lines(text: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut current: Option<(u32, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let (start, mut acc) = current.take().unwrap_or((line_no, String::new()));
        match raw.strip_suffix('\\') {
            Some(part) => {
                acc.push_str(part);
                acc.push(' ');
                current = Some((start, acc));
            }
            None => {
                acc.push_str(raw);
                out.push((start, strip_comment(&acc)));
            }
        }
    }
    if let Some((start, acc)) = current {
        out.push((start, strip_comment(&acc)));
    }
    out
}

/// A `#` at the start of the line or after whitespace starts a comment (pip's rule).
fn strip_comment(line: &str) -> String {
    let bytes = line.as_bytes();
    let cut = (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()))
        .unwrap_or(bytes.len());
    line[..cut].trim().to_string()
}

fn parse_line(line: &str) -> Line {
    let line = line.trim();
    if line.is_empty() {
        return Line::Nothing;
    }
    for (flag, constraint) in [
        ("--requirement", false),
        ("-r", false),
        ("--constraint", true),
        ("-c", true),
    ] {
        if let Some(rest) = line.strip_prefix(flag) {
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            // `-rfile` is pip's short form too; `--requirement` needs a separator.
            if flag.starts_with("--") && !(rest.starts_with([' ', '\t']) || line.contains('=')) {
                continue;
            }
            let path = rest.trim();
            if !path.is_empty() {
                return Line::Include {
                    path: path.to_string(),
                    constraint,
                };
            }
        }
    }
    let line = line
        .strip_prefix("--editable")
        .or_else(|| line.strip_prefix("-e"))
        .map(|r| r.trim_start_matches('=').trim())
        .unwrap_or(line);
    if line.starts_with('-') {
        // A global option (--index-url, --find-links, --pre, --require-hashes, ...).
        return Line::Nothing;
    }
    // Per-requirement options follow the requirement: ` --hash=...`, ` --config-settings ...`.
    let requirement = match line.find(" --").or_else(|| line.find("\t--")) {
        Some(at) => &line[..at],
        None => line,
    };
    let requirement = requirement.trim();
    if requirement.is_empty() {
        Line::Nothing
    } else {
        Line::Requirement(requirement.to_string())
    }
}

/// `target` relative to the directory of `from`, normalised; `None` when it leaves the tree,
/// is absolute or is a URL.
fn join(from: &str, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::MemView;

    fn view(files: &[(&str, &str)]) -> MemView {
        let mut v = MemView::new("mem", crate::model::TargetKind::SourceTree);
        for (p, t) in files {
            v.insert(*p, t.as_bytes().to_vec());
        }
        v
    }

    #[test]
    fn lines_join_strip_comments_and_options() {
        assert_eq!(
            logical_lines(
                "a==1 \\\n  --hash=sha256:00 \\\n  --hash=sha256:11\n# c\nb#frag # note\n"
            ),
            vec![
                (
                    1,
                    "a==1    --hash=sha256:00    --hash=sha256:11".to_string()
                ),
                (4, String::new()),
                (5, "b#frag".to_string())
            ]
        );
        assert_eq!(
            parse_line("a==1    --hash=sha256:00"),
            Line::Requirement("a==1".into())
        );
        assert_eq!(parse_line("--index-url https://x/simple"), Line::Nothing);
        assert_eq!(
            parse_line("-r base.txt"),
            Line::Include {
                path: "base.txt".into(),
                constraint: false
            }
        );
        assert_eq!(
            parse_line("--constraint=c.txt"),
            Line::Include {
                path: "c.txt".into(),
                constraint: true
            }
        );
        assert_eq!(
            parse_line("-e git+https://github.com/o/r@abc#egg=r"),
            Line::Requirement("git+https://github.com/o/r@abc#egg=r".into())
        );
    }

    #[test]
    fn includes_and_constraints_are_followed() {
        let v = view(&[
            (
                "deploy/requirements.txt",
                "-r ../common/base.txt\n-c constraints.txt\nvllm>=0.29\n",
            ),
            (
                "common/base.txt",
                "flashinfer-python==0.2.5 \\\n    --hash=sha256:00\n-r ../deploy/requirements.txt\n",
            ),
            ("deploy/constraints.txt", "vllm<0.31\nnumpy<2\n"),
        ]);
        let mut problems = Vec::new();
        let read = read(&v, "deploy/requirements.txt", &mut problems).expect("reads");
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<&str> = read.requirements.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["flashinfer-python", "vllm"]);
        let vllm = &read.requirements[1];
        let Allowed::Versions(set) = &vllm.allowed else {
            panic!("versions")
        };
        let ver = |s: &str| std::str::FromStr::from_str(s).expect("version");
        assert!(set.contains(&ver("0.30.0")));
        assert!(!set.contains(&ver("0.31.0")));
        assert!(!set.contains(&ver("0.28.0")));
        assert_eq!(
            (vllm.file.as_str(), vllm.line),
            ("deploy/requirements.txt", 3)
        );
        assert_eq!(read.requirements[0].line, 1);
        assert_eq!(read.included, ["common/base.txt", "deploy/constraints.txt"]);
    }

    #[test]
    fn a_missing_include_and_a_bad_line_are_named() {
        let v = view(&[(
            "requirements.txt",
            "-r nowhere.txt\nvllm ==\n-r ../../up.txt\n",
        )]);
        let mut problems = Vec::new();
        let read = read(&v, "requirements.txt", &mut problems).expect("reads");
        assert!(read.requirements.is_empty());
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("nowhere.txt:")));
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("requirements.txt:2:"))
        );
        assert!(problems.iter().any(|p| p.contains("outside the tree")));
    }
}
