//! Python pins: what a tree's requirement files, project files and lock files say about the
//! packages it installs ([`Requirement`]), read with real parsers (PEP 508 and PEP 440 through
//! `pep508_rs`, version sets through `version-ranges`, TOML through `toml`).
//!
//! - [`requirements`]: pip requirement files (`-r`/`-c` includes, hashes, direct URLs, `git+`
//!   URLs at a revision, wheel file names).
//! - [`project`]: `pyproject.toml` (PEP 621 dependencies and optional dependencies, PEP 735
//!   dependency groups, `build-system.requires`, Poetry's dependency tables) and `setup.cfg`.
//! - [`lock`]: `uv.lock`, `pylock.toml` (PEP 751) and `poetry.lock`: exact versions and VCS
//!   commits.
//!
//! - [`setup_py`]: the literal requirement lists of a static `setup.py` (tree-sitter, nothing
//!   executed).
//! - [`dockerfile`]: `pip install` in a Dockerfile's `RUN` lines (`ARG` defaults substituted).
//!
//! [`find`] walks a view for all of them. Which packages matter, and what a vLLM version pins,
//! is the scan's business (`scan::python`).

pub mod dockerfile;
pub mod lock;
pub mod project;
pub mod requirements;
pub mod setup_py;

use crate::view::{TargetError, View};
use pep508_rs::pep440_rs::{Version, VersionSpecifiers};
use std::str::FromStr;
use version_ranges::Ranges;

/// The versions a requirement allows, or what else it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// PEP 440 versions (a specifier set, an exact lock entry, a wheel's file name).
    Versions(Ranges<Version>),
    /// A git repository at a revision (`git+https://...@<rev>`, a lock file's VCS source).
    Git {
        repo: String,
        reference: Option<String>,
    },
    /// Another direct reference (an archive URL, a local path) whose version is not written.
    Url(String),
}

/// One requirement (or lock entry) on a Python distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The distribution name, PEP 503 normalised (`flash-attn`).
    pub name: String,
    /// The requirement as written (one line).
    pub written: String,
    pub allowed: Allowed,
    /// The environment marker, when the requirement has one (it may not apply everywhere).
    pub marker: Option<String>,
    /// What kind of file it comes from (`requirements`, `pyproject.toml`, `uv.lock`, ...).
    pub source: &'static str,
    pub file: String,
    pub line: u32,
}

impl Requirement {
    /// Whether it names exactly one version (a `==` pin or a lock entry).
    pub fn exact_version(&self) -> Option<Version> {
        match &self.allowed {
            Allowed::Versions(r) => {
                let mut bounds = r.iter();
                let (lo, hi) = bounds.next()?;
                match (lo, hi, bounds.next()) {
                    (std::ops::Bound::Included(a), std::ops::Bound::Included(b), None)
                        if a == b =>
                    {
                        Some(a.clone())
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// What [`find`] read: the requirements, and what it could not read (a file that does not
/// parse, an include that is missing), one line each naming the file.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub requirements: Vec<Requirement>,
    pub problems: Vec<String>,
}

/// Whether `path` is a pip requirements file by its name: `requirements*.txt`,
/// `*requirements.txt` (or `.in`), or any `.txt` in a `requirements/` directory. A constraints
/// file is read only through the file that includes it with `-c`: alone it installs nothing.
pub fn is_requirements_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let (dir, name) = lower.rsplit_once('/').unwrap_or(("", &lower));
    if !name.ends_with(".txt") && !name.ends_with(".in") {
        return false;
    }
    name.starts_with("requirements")
        || name.ends_with("requirements.txt")
        || name.ends_with("requirements.in")
        || dir.rsplit('/').next() == Some("requirements")
}

/// Every requirement in the view's requirement files, project files and lock files (a file
/// included with `-r` or `-c` is read through its includer, not again on its own).
pub fn find(view: &dyn View) -> Result<Found, TargetError> {
    let mut found = Found::default();
    let files = view.files_under("")?;
    let skip = |f: &str| {
        f.split('/')
            .any(|part| part.starts_with('.') || part == "node_modules" || part == "site-packages")
    };
    // Requirements files: a file another one includes (`-r`, `-c`) is read through its
    // includer (its constraints apply there), not on its own.
    let mut reads = Vec::new();
    for file in files.iter().filter(|f| !skip(f) && is_requirements_file(f)) {
        let mut problems = Vec::new();
        let read = requirements::read(view, file, &mut problems)?;
        reads.push((file.clone(), read, problems));
    }
    let included: Vec<String> = reads
        .iter()
        .flat_map(|(_, r, _)| r.included.iter().cloned())
        .collect();
    for (file, read, problems) in reads {
        if included.contains(&file) {
            continue;
        }
        found.requirements.extend(read.requirements);
        for p in problems {
            if !found.problems.contains(&p) {
                found.problems.push(p);
            }
        }
    }
    for file in files.iter().filter(|f| !skip(f)) {
        let name = file.rsplit('/').next().unwrap_or(file);
        if name == "setup.py" {
            if let Some(text) = read_text(view, file)? {
                let reqs = setup_py::read(file, &text, &mut found.problems);
                found.requirements.extend(reqs);
            }
            continue;
        }
        if is_dockerfile(name) {
            if let Some(text) = read_text(view, file)? {
                let reqs = dockerfile::read(file, &text, &mut found.problems);
                found.requirements.extend(reqs);
            }
            continue;
        }
        let text = match name {
            "pyproject.toml" | "setup.cfg" | "uv.lock" | "poetry.lock" | "pylock.toml" => {
                read_text(view, file)?
            }
            n if n.starts_with("pylock.") && n.ends_with(".toml") => read_text(view, file)?,
            _ => continue,
        };
        let Some(text) = text else { continue };
        let parsed = match name {
            "pyproject.toml" => project::pyproject(file, &text),
            "setup.cfg" => Ok(project::setup_cfg(file, &text)),
            "uv.lock" => lock::uv(file, &text),
            "poetry.lock" => lock::poetry(file, &text),
            _ => lock::pylock(file, &text),
        };
        match parsed {
            Ok(reqs) => found.requirements.extend(reqs),
            Err(why) => found.problems.push(why),
        }
    }
    // A file read as an include before the walk reached it on its own was read twice.
    found.requirements.dedup();
    Ok(found)
}

/// `Dockerfile`, `Containerfile`, `Dockerfile.<x>`, `<x>.Dockerfile`.
fn is_dockerfile(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "dockerfile"
        || lower == "containerfile"
        || lower.starts_with("dockerfile.")
        || lower.ends_with(".dockerfile")
}

fn read_text(view: &dyn View, file: &str) -> Result<Option<String>, TargetError> {
    Ok(match view.read(file) {
        Err(TargetError::Unreadable { .. }) => None,
        other => other?.map(|b| String::from_utf8_lossy(&b).into_owned()),
    })
}

/// Parse one PEP 508 requirement string. `Err` carries the parser's message.
pub fn parse_pep508(
    text: &str,
    source: &'static str,
    file: &str,
    line: u32,
) -> Result<Requirement, String> {
    let req = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text)
        .map_err(|e| first_line(&e.to_string()))?;
    let name = req.name.to_string();
    let allowed = match &req.version_or_url {
        None => Allowed::Versions(Ranges::full()),
        Some(pep508_rs::VersionOrUrl::VersionSpecifier(specs)) => {
            Allowed::Versions(Ranges::from(specs.clone()))
        }
        Some(pep508_rs::VersionOrUrl::Url(url)) => {
            let given = url
                .given()
                .map(str::to_string)
                .unwrap_or_else(|| url.to_url().to_string());
            direct_reference(&given, Some(&name))
                .map(|(_, a)| a)
                .unwrap_or(Allowed::Url(given))
        }
    };
    let marker = req.marker.contents().map(|m| m.to_string());
    Ok(Requirement {
        name: crate::pin::components::normalise_package(&name),
        written: text.trim().to_string(),
        allowed,
        marker,
        source,
        file: file.to_string(),
        line,
    })
}

/// A direct reference: `git+<url>@<rev>` (name from `#egg=` when not given), or a wheel or
/// sdist file name (`vllm-0.30.0-cp38-abi3-manylinux1_x86_64.whl`, `vllm-0.30.0.tar.gz`) whose
/// name and version are in the file name. `None` when it names neither.
pub fn direct_reference(url: &str, name: Option<&str>) -> Option<(String, Allowed)> {
    let url = url.trim();
    let (without_fragment, fragment) = match url.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (url, None),
    };
    let egg = fragment.and_then(|f| {
        f.split('&')
            .find_map(|kv| kv.strip_prefix("egg="))
            .map(|e| e.split('[').next().unwrap_or(e).to_string())
    });
    if let Some(rest) = without_fragment.strip_prefix("git+") {
        let name = name.map(str::to_string).or(egg)?;
        // The revision follows the last `@` of the path (not the user-info's).
        let (scheme, after) = rest.split_once("://").unwrap_or(("", rest));
        let (repo_path, reference) = match after.rsplit_once('@') {
            Some((p, r)) if p.contains('/') && !r.contains('/') => (p, Some(r.to_string())),
            _ => (after, None),
        };
        let repo = if scheme.is_empty() {
            repo_path.to_string()
        } else {
            format!("{scheme}://{repo_path}")
        };
        return Some((
            name,
            Allowed::Git {
                repo,
                reference: reference.filter(|r| !r.is_empty()),
            },
        ));
    }
    let file = without_fragment
        .split(['?'])
        .next()
        .unwrap_or(without_fragment)
        .rsplit('/')
        .next()?;
    let (dist, version) = if let Some(stem) = file.strip_suffix(".whl") {
        let mut parts = stem.split('-');
        (parts.next()?, parts.next()?)
    } else {
        let stem = file
            .strip_suffix(".tar.gz")
            .or_else(|| file.strip_suffix(".zip"))?;
        stem.rsplit_once('-')?
    };
    let version = Version::from_str(version).ok()?;
    let dist = name.unwrap_or(dist);
    Some((
        crate::pin::components::normalise_package(dist),
        Allowed::Versions(Ranges::singleton(version)),
    ))
}

/// The versions a specifier string allows (`>=0.30,<0.33`; empty: every version).
pub fn allowed_by(spec: &str) -> Result<Ranges<Version>, String> {
    let spec = spec.trim();
    if spec.is_empty() || spec == "*" {
        return Ok(Ranges::full());
    }
    VersionSpecifiers::from_str(spec)
        .map(Ranges::from)
        .map_err(|e| first_line(&e.to_string()))
}

/// An exact version (`0.30.0`) as the set holding it alone.
pub fn exactly(version: &str) -> Result<Ranges<Version>, String> {
    Version::from_str(version.trim())
        .map(Ranges::singleton)
        .map_err(|e| first_line(&e.to_string()))
}

/// The 1-based line of the first occurrence of `needle` in `text` at or after line `from`.
pub(crate) fn line_of(text: &str, needle: &str, from: u32) -> u32 {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1) as usize)
        .find(|(_, l)| l.contains(needle))
        .map_or(from.max(1), |(i, _)| i as u32 + 1)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::from_str(s).expect("a version")
    }

    #[test]
    fn pep508_requirements_give_their_version_sets() {
        let r = parse_pep508(
            "vLLM[audio] >=0.30, <0.33 ; sys_platform == 'linux'",
            "t",
            "f",
            3,
        )
        .expect("parses");
        assert_eq!(r.name, "vllm");
        assert_eq!(r.marker.as_deref(), Some("sys_platform == 'linux'"));
        let Allowed::Versions(set) = &r.allowed else {
            panic!("versions")
        };
        assert!(set.contains(&v("0.30.0")) && set.contains(&v("0.32.0")));
        assert!(!set.contains(&v("0.33.0")) && !set.contains(&v("0.29.0")));
        let exact = parse_pep508("vllm==0.30.0", "t", "f", 1).expect("parses");
        assert_eq!(exact.exact_version(), Some(v("0.30.0")));
        assert_eq!(
            parse_pep508("vllm>=0.30", "t", "f", 1)
                .expect("parses")
                .exact_version(),
            None
        );
        assert!(parse_pep508("vllm ==", "t", "f", 1).is_err());
    }

    #[test]
    fn direct_references_name_a_revision_or_a_version() {
        let sha = "506341a143fcabd4bb79052a7605ada727d6b3f5";
        let r = parse_pep508(
            &format!("flash-attn @ git+https://github.com/Dao-AILab/flash-attention@{sha}"),
            "t",
            "f",
            1,
        )
        .expect("parses");
        assert_eq!(
            r.allowed,
            Allowed::Git {
                repo: "https://github.com/Dao-AILab/flash-attention".into(),
                reference: Some(sha.into())
            }
        );
        assert_eq!(
            direct_reference(
                "git+ssh://git@github.com/vllm-project/vllm.git@v0.30.0#egg=vllm",
                None
            ),
            Some((
                "vllm".into(),
                Allowed::Git {
                    repo: "ssh://git@github.com/vllm-project/vllm.git".into(),
                    reference: Some("v0.30.0".into())
                }
            ))
        );
        assert_eq!(
            direct_reference(
                "https://example.org/wheels/vllm-0.30.0-cp38-abi3-manylinux1_x86_64.whl",
                None
            ),
            Some((
                "vllm".into(),
                Allowed::Versions(Ranges::singleton(v("0.30.0")))
            ))
        );
        assert_eq!(
            direct_reference("./dist/flash_attn-2.7.4.post1.tar.gz", None).map(|(n, _)| n),
            Some("flash-attn".into())
        );
        assert_eq!(direct_reference("https://example.org/x", None), None);
    }

    #[test]
    fn requirement_file_names() {
        for yes in [
            "requirements.txt",
            "requirements-dev.txt",
            "docker/requirements.in",
            "requirements/cuda.txt",
            "ci/test-requirements.txt",
        ] {
            assert!(is_requirements_file(yes), "{yes}");
        }
        for no in [
            "README.txt",
            "requirements.py",
            "docs/notes.txt",
            "constraints.txt",
        ] {
            assert!(!is_requirements_file(no), "{no}");
        }
    }
}
