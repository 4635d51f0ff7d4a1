//! Project files: `pyproject.toml` (PEP 621 `[project] dependencies` and
//! `optional-dependencies`, PEP 735 `[dependency-groups]`, PEP 518 `[build-system] requires`,
//! Poetry's `[tool.poetry.*dependencies]` tables) and `setup.cfg` (`install_requires`,
//! `setup_requires`, `extras_require`).

use super::{Allowed, Requirement, allowed_by, line_of, parse_pep508};
use toml::Value;

/// The requirements of a `pyproject.toml`; `Err` names the file when it is not TOML.
pub fn pyproject(file: &str, text: &str) -> Result<Vec<Requirement>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "{file}: not TOML ({})",
            e.message().lines().next().unwrap_or("")
        )
    })?;
    let mut out = Vec::new();
    let strings = |list: Option<&Value>, what: &'static str, out: &mut Vec<Requirement>| {
        for item in list.and_then(Value::as_array).into_iter().flatten() {
            // A PEP 735 `{include-group = "..."}` is followed where the group is read.
            let Some(s) = item.as_str() else { continue };
            let line = line_of(text, &format!("\"{s}\""), 1).max(line_of(text, s, 1));
            if let Ok(r) = parse_pep508(s, what, file, line) {
                out.push(r);
            }
        }
    };
    let project = doc.get("project");
    strings(
        project.and_then(|p| p.get("dependencies")),
        "pyproject.toml",
        &mut out,
    );
    if let Some(extras) = project
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(Value::as_table)
    {
        for list in extras.values() {
            strings(Some(list), "pyproject.toml", &mut out);
        }
    }
    if let Some(groups) = doc.get("dependency-groups").and_then(Value::as_table) {
        for list in groups.values() {
            strings(Some(list), "pyproject.toml", &mut out);
        }
    }
    strings(
        doc.get("build-system").and_then(|b| b.get("requires")),
        "pyproject.toml",
        &mut out,
    );
    // Poetry: `[tool.poetry.dependencies]`, `[tool.poetry.group.<g>.dependencies]`.
    let poetry = doc.get("tool").and_then(|t| t.get("poetry"));
    let mut tables: Vec<&toml::Table> = Vec::new();
    if let Some(t) = poetry
        .and_then(|p| p.get("dependencies"))
        .and_then(Value::as_table)
    {
        tables.push(t);
    }
    if let Some(groups) = poetry
        .and_then(|p| p.get("group"))
        .and_then(Value::as_table)
    {
        tables.extend(
            groups
                .values()
                .filter_map(|g| g.get("dependencies").and_then(Value::as_table)),
        );
    }
    for table in tables {
        for (name, spec) in table {
            if name == "python" {
                continue;
            }
            if let Some(r) = poetry_dependency(file, text, name, spec) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// One Poetry dependency (`vllm = "0.30.0"`, `"^0.30"`, `{ version = "...", ... }`,
/// `{ git = "...", rev = "..." }`).
fn poetry_dependency(file: &str, text: &str, name: &str, spec: &Value) -> Option<Requirement> {
    let line = line_of(text, &format!("{name} ="), 1);
    let (written, allowed) = match spec {
        Value::String(s) => (s.clone(), Allowed::Versions(poetry_constraint(s)?)),
        Value::Table(t) => {
            if let Some(git) = t.get("git").and_then(Value::as_str) {
                let reference = ["rev", "tag", "branch"]
                    .iter()
                    .find_map(|k| t.get(*k).and_then(Value::as_str))
                    .map(str::to_string);
                (
                    format!("git {git}"),
                    Allowed::Git {
                        repo: git.to_string(),
                        reference,
                    },
                )
            } else {
                let v = t.get("version").and_then(Value::as_str)?;
                (v.to_string(), Allowed::Versions(poetry_constraint(v)?))
            }
        }
        _ => return None,
    };
    Some(Requirement {
        name: crate::pin::components::normalise_package(name),
        written: format!("{name} = {written}"),
        allowed,
        marker: None,
        source: "pyproject.toml",
        file: file.to_string(),
        line,
    })
}

/// Poetry's constraint syntax: a bare version is exact, `^` and `~` are ranges, the rest is
/// PEP 440 (`>=`, `,`-joined).
fn poetry_constraint(spec: &str) -> Option<version_ranges::Ranges<pep508_rs::pep440_rs::Version>> {
    let spec = spec.trim();
    let parts =
        |v: &str| -> Option<Vec<u64>> { v.split('.').map(|p| p.parse::<u64>().ok()).collect() };
    let join = |p: &[u64]| p.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
    if let Some(v) = spec.strip_prefix('^') {
        let p = parts(v.trim())?;
        // The first non-zero part may not change.
        let at = p
            .iter()
            .position(|x| *x != 0)
            .unwrap_or(p.len().saturating_sub(1));
        let mut upper: Vec<u64> = p.iter().take(at + 1).copied().collect();
        *upper.last_mut()? += 1;
        return allowed_by(&format!(">={},<{}", join(&p), join(&upper))).ok();
    }
    if let Some(v) = spec.strip_prefix('~').filter(|v| !v.starts_with('=')) {
        let p = parts(v.trim())?;
        let mut upper: Vec<u64> = p
            .iter()
            .take(if p.len() > 1 { 2 } else { 1 })
            .copied()
            .collect();
        if p.len() == 1 {
            *upper.last_mut()? += 1;
        } else {
            upper[1] += 1;
        }
        return allowed_by(&format!(">={},<{}", join(&p), join(&upper))).ok();
    }
    if spec.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return allowed_by(&format!("=={spec}")).ok();
    }
    allowed_by(spec).ok()
}

/// The requirements of a `setup.cfg`: the indented lines (or `;`-less single value) of
/// `install_requires`, `setup_requires` in `[options]` and every key of
/// `[options.extras_require]`.
pub fn setup_cfg(file: &str, text: &str) -> Vec<Requirement> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut collecting = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let trimmed = raw.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            section = trimmed[1..trimmed.len() - 1].trim().to_ascii_lowercase();
            collecting = false;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let indented = raw.starts_with([' ', '\t']);
        let value = if indented && collecting {
            Some(trimmed)
        } else if let Some((key, value)) = trimmed.split_once(['=', ':']) {
            let key = key.trim().to_ascii_lowercase();
            collecting = (section == "options"
                && matches!(key.as_str(), "install_requires" | "setup_requires"))
                || section == "options.extras_require";
            Some(value.trim()).filter(|_| collecting)
        } else {
            collecting = false;
            None
        };
        if let Some(v) = value.filter(|v| !v.is_empty())
            && let Ok(r) = parse_pep508(v, "setup.cfg", file, line_no)
        {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(reqs: &[Requirement]) -> Vec<(String, u32)> {
        reqs.iter().map(|r| (r.name.clone(), r.line)).collect()
    }

    #[test]
    fn pyproject_lists_every_kind_of_dependency() {
        let text = r#"[build-system]
requires = ["setuptools>=77", "torch==2.9.0"]

[project]
name = "deploy"
dependencies = [
  "vllm==0.30.0",
]
[project.optional-dependencies]
fa = ["flash-attn>=2.7"]

[dependency-groups]
dev = ["pytest", {include-group = "fa"}]

[tool.poetry.dependencies]
python = "^3.10"
flashinfer-python = "^0.2.5"
deep_gemm = { git = "https://github.com/deepseek-ai/DeepGEMM", rev = "a6b593d2826719dcf4892609af7b84ee23aaf32a" }
"#;
        let reqs = pyproject("pyproject.toml", text).expect("parses");
        assert_eq!(
            names(&reqs),
            [
                ("vllm".to_string(), 7),
                ("flash-attn".to_string(), 10),
                ("pytest".to_string(), 13),
                ("setuptools".to_string(), 2),
                ("torch".to_string(), 2),
                ("deep-gemm".to_string(), 18),
                ("flashinfer-python".to_string(), 17),
            ]
        );
        let fi = reqs
            .iter()
            .find(|r| r.name == "flashinfer-python")
            .expect("fi");
        let Allowed::Versions(set) = &fi.allowed else {
            panic!("versions")
        };
        let ver = |s: &str| std::str::FromStr::from_str(s).expect("version");
        assert!(set.contains(&ver("0.2.9")) && !set.contains(&ver("0.3.0")));
        assert!(pyproject("pyproject.toml", "[project\n").is_err());
    }

    #[test]
    fn poetry_constraints_follow_poetrys_rules() {
        let ver = |s: &str| std::str::FromStr::from_str(s).expect("version");
        let caret = poetry_constraint("^0.30.1").expect("parses");
        assert!(caret.contains(&ver("0.30.9")) && !caret.contains(&ver("0.31.0")));
        let caret = poetry_constraint("^2.7").expect("parses");
        assert!(caret.contains(&ver("2.9")) && !caret.contains(&ver("3.0")));
        let tilde = poetry_constraint("~1.2.3").expect("parses");
        assert!(tilde.contains(&ver("1.2.9")) && !tilde.contains(&ver("1.3.0")));
        let bare = poetry_constraint("0.30.0").expect("parses");
        assert!(bare.contains(&ver("0.30.0")) && !bare.contains(&ver("0.30.1")));
    }

    #[test]
    fn setup_cfg_reads_the_requirement_keys() {
        let text = "[metadata]\nname = x\n[options]\ninstall_requires =\n    vllm==0.30.0\n    numpy\nzip_safe = false\n[options.extras_require]\nfa = flash-attn==2.7.4\n";
        assert_eq!(
            names(&setup_cfg("setup.cfg", text)),
            [
                ("vllm".to_string(), 5),
                ("numpy".to_string(), 6),
                ("flash-attn".to_string(), 9)
            ]
        );
    }
}
