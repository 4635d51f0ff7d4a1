//! Lock files: every locked package with its exact version, or the VCS commit it was locked
//! at. `uv.lock` (`[[package]]`, `source = { git = "URL?rev=...#<commit>" }`), PEP 751
//! `pylock.toml` (`[[packages]]`, `vcs.commit-id`) and `poetry.lock` (`[[package]]`,
//! `source.resolved_reference`).

use super::{Allowed, Requirement, exactly, line_of};
use toml::Value;

fn parse(file: &str, text: &str) -> Result<toml::Table, String> {
    toml::from_str(text).map_err(|e| {
        format!(
            "{file}: not TOML ({})",
            e.message().lines().next().unwrap_or("")
        )
    })
}

/// One locked package; `line_from` moves past each entry so that a name locked twice (two
/// versions for two platforms) gets each entry's own line.
fn entry(
    file: &str,
    text: &str,
    source: &'static str,
    name: &str,
    version: Option<&str>,
    git: Option<GitSource>,
    line_from: &mut u32,
) -> Option<Requirement> {
    let line = line_of(text, &format!("name = \"{name}\""), *line_from);
    *line_from = line + 1;
    let (allowed, written) = match (git, version) {
        (Some((repo, reference)), _) => (
            Allowed::Git {
                repo: repo.clone(),
                reference: reference.clone(),
            },
            format!(
                "{name} from {repo}{}",
                reference.map(|r| format!(" at {r}")).unwrap_or_default()
            ),
        ),
        (None, Some(v)) => (Allowed::Versions(exactly(v).ok()?), format!("{name}=={v}")),
        (None, None) => return None,
    };
    Some(Requirement {
        name: crate::pin::components::normalise_package(name),
        written,
        allowed,
        marker: None,
        source,
        file: file.to_string(),
        line,
    })
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A package's git source: the repository and the commit or reference it was locked at.
type GitSource = (String, Option<String>);

/// Every package of the array `key` of a lock file: its exact version, or its git source as
/// `git` reads it from the package's table.
fn locked(
    file: &str,
    text: &str,
    source: &'static str,
    key: &str,
    git: impl Fn(&Value) -> Option<GitSource>,
) -> Result<Vec<Requirement>, String> {
    let doc = parse(file, text)?;
    let mut out = Vec::new();
    let mut from = 1;
    for p in doc.get(key).and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = str_of(p, "name") else {
            continue;
        };
        out.extend(entry(
            file,
            text,
            source,
            name,
            str_of(p, "version"),
            git(p),
            &mut from,
        ));
    }
    Ok(out)
}

/// `uv.lock`.
pub fn uv(file: &str, text: &str) -> Result<Vec<Requirement>, String> {
    locked(file, text, "uv.lock", "package", |p| {
        // `git = "https://github.com/o/r?rev=v1#<commit>"`: the fragment is the commit.
        p.get("source").and_then(|s| str_of(s, "git")).map(|g| {
            let (url, commit) = match g.split_once('#') {
                Some((u, c)) => (u, Some(c.to_string())),
                None => (g, None),
            };
            let repo = url.split('?').next().unwrap_or(url).to_string();
            (repo, commit.filter(|c| !c.is_empty()))
        })
    })
}

/// PEP 751 `pylock.toml` (and `pylock.<name>.toml`).
pub fn pylock(file: &str, text: &str) -> Result<Vec<Requirement>, String> {
    locked(file, text, "pylock.toml", "packages", |p| {
        p.get("vcs")
            .filter(|v| str_of(v, "type") == Some("git"))
            .and_then(|v| {
                let repo = str_of(v, "url").or_else(|| str_of(v, "path"))?;
                Some((
                    repo.to_string(),
                    str_of(v, "commit-id")
                        .or_else(|| str_of(v, "requested-revision"))
                        .map(str::to_string),
                ))
            })
    })
}

/// `poetry.lock`.
pub fn poetry(file: &str, text: &str) -> Result<Vec<Requirement>, String> {
    locked(file, text, "poetry.lock", "package", |p| {
        p.get("source")
            .filter(|s| str_of(s, "type") == Some("git"))
            .and_then(|s| {
                Some((
                    str_of(s, "url")?.to_string(),
                    str_of(s, "resolved_reference")
                        .or_else(|| str_of(s, "reference"))
                        .map(str::to_string),
                ))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "a6b593d2826719dcf4892609af7b84ee23aaf32a";

    #[test]
    fn uv_lock_entries_are_exact() {
        let text = format!(
            r#"version = 1
requires-python = ">=3.10"

[[package]]
name = "numpy"
version = "2.2.0"
source = {{ registry = "https://example.org/simple" }}

[[package]]
name = "vllm"
version = "0.30.0"
source = {{ registry = "https://example.org/simple" }}

[[package]]
name = "deep-gemm"
version = "2.1.0"
source = {{ git = "https://github.com/deepseek-ai/DeepGEMM?rev=main#{SHA}" }}
"#
        );
        let reqs = uv("uv.lock", &text).expect("parses");
        let vllm = &reqs[1];
        assert_eq!((vllm.name.as_str(), vllm.line), ("vllm", 10));
        assert_eq!(
            vllm.exact_version().map(|v| v.to_string()).as_deref(),
            Some("0.30.0")
        );
        assert_eq!(
            reqs[2].allowed,
            Allowed::Git {
                repo: "https://github.com/deepseek-ai/DeepGEMM".into(),
                reference: Some(SHA.into())
            }
        );
        assert!(uv("uv.lock", "[[package]\n").is_err());
    }

    #[test]
    fn pylock_and_poetry_lock_entries() {
        let text = format!(
            r#"lock-version = "1.0"
created-by = "pip"

[[packages]]
name = "vllm"
version = "0.31.0"

[[packages]]
name = "flash-attn"
[packages.vcs]
type = "git"
url = "https://github.com/Dao-AILab/flash-attention"
commit-id = "{SHA}"
"#
        );
        let reqs = pylock("pylock.toml", &text).expect("parses");
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].line, 5);
        assert_eq!(reqs[1].line, 9);
        assert!(matches!(&reqs[1].allowed, Allowed::Git { reference: Some(r), .. } if r == SHA));
        let poetry_text = format!(
            r#"[[package]]
name = "vllm"
version = "0.32.0"
description = ""

[[package]]
name = "flashinfer-python"
version = "0.2.5"

[package.source]
type = "git"
url = "https://github.com/flashinfer-ai/flashinfer"
reference = "main"
resolved_reference = "{SHA}"
"#
        );
        let reqs = poetry("poetry.lock", &poetry_text).expect("parses");
        assert_eq!(
            reqs[0].exact_version().map(|v| v.to_string()).as_deref(),
            Some("0.32.0")
        );
        assert!(matches!(&reqs[1].allowed, Allowed::Git { reference: Some(r), .. } if r == SHA));
    }
}
