//! Git submodule pins: `.gitmodules` names each submodule's path and URL, and the gitlink at
//! that path (in the index of a work tree, or in a revision's tree) is the exact commit the
//! superproject pins. A submodule whose URL or name identifies a kernel component is a pin of
//! it like any other; one whose gitlink cannot be read is a pin whose commit is unknown.

use crate::model::{FoundBy, Pin, Possible};
use crate::pin::components::Registry;
use crate::pin::url;

/// One `[submodule "name"]` section of `.gitmodules`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submodule {
    pub name: String,
    pub path: Option<String>,
    pub url: Option<String>,
    /// The section header's line.
    pub line: u32,
}

/// The sections of a `.gitmodules` file (git-config syntax: `[submodule "name"]` headers,
/// case-insensitive keys, `#`/`;` comments, quoted values with `\"` escapes).
pub fn parse_gitmodules(text: &str) -> Vec<Submodule> {
    let mut out: Vec<Submodule> = Vec::new();
    let mut in_submodule = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or(header).trim();
            in_submodule = false;
            if let Some(rest) = header.strip_prefix("submodule") {
                let name = rest.trim();
                if let Some(name) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                    in_submodule = true;
                    out.push(Submodule {
                        name: name.replace("\\\"", "\"").replace("\\\\", "\\"),
                        path: None,
                        url: None,
                        line: i as u32 + 1,
                    });
                }
            }
            continue;
        }
        if !in_submodule {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = config_value(value);
        if let Some(current) = out.last_mut() {
            match key.trim().to_ascii_lowercase().as_str() {
                "path" => current.path = Some(value),
                "url" => current.url = Some(value),
                _ => {}
            }
        }
    }
    out
}

/// A git-config value: surrounding whitespace dropped, quotes removed, an unquoted `#` or `;`
/// starting a comment.
fn config_value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// The kernel pins among the submodules. `gitlink(path)` gives the commit recorded at a path,
/// or why it is not known.
pub fn pins(
    text: &str,
    registry: &Registry,
    gitlink: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
) -> Vec<Pin> {
    let mut out = Vec::new();
    for sub in parse_gitmodules(text) {
        let canonical = sub.url.as_deref().and_then(url::canonical);
        let path = sub.path.clone().unwrap_or_else(|| sub.name.clone());
        let last = path.rsplit('/').next().unwrap_or(&path).to_string();
        let def = registry
            .identify(&sub.name, canonical.as_deref())
            .or_else(|| registry.identify(&last, None))
            .or_else(|| registry.resembles(&sub.name, canonical.as_deref()))
            .or_else(|| registry.resembles(&last, None));
        let Some(def) = def else { continue };
        let mut pin = Pin::shipped(&def.name, ".gitmodules", None, None, FoundBy::Submodule);
        pin.declared_name = sub.name.clone();
        pin.line = sub.line;
        pin.repo = sub.url.clone();
        pin.repo_canonical = canonical;
        pin.component_repo = url::canonical(&def.repo);
        match gitlink(&path) {
            Ok(Some(commit)) => {
                pin.reference = Some(commit.clone());
                pin.commit = Some(commit.into());
            }
            Ok(None) => pin.possible = vec![unknown(&sub, &path, "no gitlink records its commit")],
            Err(why) => pin.possible = vec![unknown(&sub, &path, &why)],
        }
        out.push(pin);
    }
    out
}

fn unknown(sub: &Submodule, path: &str, why: &str) -> Possible {
    Possible {
        reference: None,
        set_by: vec![format!("submodule `{}` at {path}: {why}", sub.name)],
        commit: None,
        repo: sub.url.clone(),
        url: None,
        url_hash: None,
        default: true,
        conditions: Vec::new(),
        file: ".gitmodules".into(),
        line: sub.line,
        release: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keys_quotes_and_comments() {
        let text = "# kernels\n[submodule \"third_party/flash-attention\"]\n\tpath = third_party/flash-attention\n\tURL = \"https://github.com/Dao-AILab/flash-attention.git\" ; upstream\n[core]\n\tpath = nope\n[submodule \"cutlass\"]\n  path=third_party/cutlass # vendored\n  url=https://github.com/NVIDIA/cutlass\n";
        assert_eq!(
            parse_gitmodules(text),
            vec![
                Submodule {
                    name: "third_party/flash-attention".into(),
                    path: Some("third_party/flash-attention".into()),
                    url: Some("https://github.com/Dao-AILab/flash-attention.git".into()),
                    line: 2
                },
                Submodule {
                    name: "cutlass".into(),
                    path: Some("third_party/cutlass".into()),
                    url: Some("https://github.com/NVIDIA/cutlass".into()),
                    line: 7
                }
            ]
        );
    }
}
