//! Python environments inside a view, as pip, uv and conda lay them out: every directory that
//! holds an installed distribution (`*.dist-info/`) or a `vllm` / `flash_attn` package, at any
//! depth: `site-packages` and `dist-packages` of virtual environments, `uv tool` environments,
//! conda prefixes (`conda-meta/` beside `lib/pythonX.Y/site-packages`), system prefixes
//! (`/usr/lib/python3/dist-packages`), `pip install --target` directories, and the view root
//! itself for a wheel or a site-packages directory given directly. No `pyvenv.cfg` is needed.
//! The distributions installed in each come from `*.dist-info/METADATA`.

use crate::view::{TargetError, View};

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist {
    /// The name as in METADATA.
    pub name: String,
    pub version: String,
    /// The `*.dist-info` directory, relative to the view root.
    pub dist_info: String,
}

impl Dist {
    /// PEP 503 normalised name (`flash_attn-4` and `Flash-Attn.4` are `flash-attn-4`).
    pub fn normalized(&self) -> String {
        normalize(&self.name)
    }
}

pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// One environment: a directory that Python imports packages from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// Relative to the view root (`""` for the root itself), without a trailing slash.
    pub root: String,
    pub dists: Vec<Dist>,
    /// For an editable install's source directory: the environment that installed it.
    pub editable_of: Option<String>,
}

impl Env {
    /// The directory `root` as an environment of its own (no distributions read).
    pub fn at(root: &str) -> Env {
        Env {
            root: root.to_string(),
            dists: Vec::new(),
            editable_of: None,
        }
    }

    /// A path inside the environment, relative to the view root.
    pub fn join(&self, rel: &str) -> String {
        if self.root.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.root)
        }
    }

    /// A view path relative to the environment root (RECORD's paths); unchanged when it does
    /// not lie under the root.
    pub fn in_env(&self, view_path: &str) -> String {
        if self.root.is_empty() {
            return view_path.to_string();
        }
        view_path
            .strip_prefix(&self.root)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or(view_path)
            .to_string()
    }

    pub fn dist(&self, normalized_name: &str) -> Option<&Dist> {
        self.dists
            .iter()
            .find(|d| d.normalized() == normalized_name)
    }
}

fn holds_packages(view: &dyn View, dir: &str) -> Result<bool, TargetError> {
    Ok(view
        .children(dir)?
        .iter()
        .any(|c| c.ends_with(".dist-info/") || c == "vllm/" || c == "flash_attn/"))
}

/// Every environment in the view: each directory, at any depth, that holds packages. The walk
/// does not enter pseudo filesystems (`proc`, `sys`, `dev`), `.git`, `node_modules`,
/// `__pycache__`, `*.dist-info`, or the importable packages of an environment found.
pub fn find(view: &dyn View) -> Result<Vec<Env>, TargetError> {
    let mut roots = Vec::new();
    let mut stack = vec![String::new()];
    // Directories already walked, by identity: symbolic links (`lib64 -> lib`, a loop) reach
    // each directory once.
    let mut visited = std::collections::HashSet::new();
    while let Some(dir) = stack.pop() {
        if let Some(id) = view.dir_identity(&dir)
            && !visited.insert(id)
        {
            continue;
        }
        let is_env = holds_packages(view, &dir)?;
        if is_env {
            roots.push(dir.clone());
        }
        for child in view.children(&dir)? {
            let Some(name) = child.strip_suffix('/') else {
                continue;
            };
            let path = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            let skip = matches!(
                name,
                "proc" | "sys" | "dev" | ".git" | "node_modules" | "__pycache__"
            ) || name.ends_with(".dist-info")
                || (is_env && is_package_dir(view, &path)?);
            if !skip {
                stack.push(path);
            }
        }
    }
    roots.sort();
    roots.dedup();
    let mut envs = Vec::new();
    for root in roots {
        let dists = dists(view, &root)?;
        envs.push(Env {
            root,
            dists,
            editable_of: None,
        });
    }
    // Editable installs: their sources are imported from elsewhere. Followed when that place
    // is inside the view; a vllm left without its copy is `unknown` (see the scanner).
    let mut editable: Vec<(String, usize)> = Vec::new();
    for (i, env) in envs.iter().enumerate() {
        for dir in editable_dirs(view, env)? {
            if dir != env.root && !editable.iter().any(|(d, _)| *d == dir) {
                editable.push((dir, i));
            }
        }
    }
    for (dir, from) in editable {
        let (root, dists) = (envs[from].root.clone(), envs[from].dists.clone());
        match envs.iter_mut().find(|e| e.root == dir) {
            // The source directory was found as a package directory of its own: it is this
            // environment's editable install.
            Some(found) if found.dists.is_empty() => {
                found.dists = dists;
                found.editable_of = Some(root);
            }
            Some(_) => {}
            None => envs.push(Env {
                root: dir,
                dists,
                editable_of: Some(root),
            }),
        }
    }
    Ok(envs)
}

/// The directories an environment imports editable installs from, inside the view: path lines
/// of its `*.pth` files, and the `file://` URL of an editable distribution's
/// `direct_url.json`; only those that hold a `vllm` or `flash_attn` package.
fn editable_dirs(view: &dyn View, env: &Env) -> Result<Vec<String>, TargetError> {
    let mut candidates = Vec::new();
    let mut relative: Vec<String> = Vec::new();
    for child in view.children(&env.root)? {
        if !child.ends_with(".pth") {
            continue;
        }
        let Ok(Some(bytes)) = view.read(&env.join(&child)) else {
            continue;
        };
        for (_, line) in super::pth::Pth::parse(&bytes).paths() {
            if line.starts_with('/') {
                candidates.push(line.to_string());
            } else if let Some(rel) = super::pth::join_relative(&env.root, line) {
                // site.addpackage joins a relative line to the site directory.
                if holds_packages(view, &rel)? && !relative.contains(&rel) && rel != env.root {
                    relative.push(rel);
                }
            }
        }
    }
    for dist in &env.dists {
        let Ok(Some(bytes)) = view.read(&format!("{}/direct_url.json", dist.dist_info)) else {
            continue;
        };
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        if json["dir_info"]["editable"] == true
            && let Some(path) = json["url"].as_str().and_then(|u| u.strip_prefix("file://"))
        {
            candidates.push(path.to_string());
        }
    }
    let mut out = relative;
    for abs in candidates {
        if let Some(rel) = view.resolve_absolute(&abs)
            && holds_packages(view, &rel)?
            && !out.contains(&rel)
        {
            out.push(rel);
        }
    }
    Ok(out)
}

/// A directory that is an importable package (has `__init__.py`): not worth descending into
/// from an environment root looking for more environments.
fn is_package_dir(view: &dyn View, dir: &str) -> Result<bool, TargetError> {
    Ok(view.children(dir)?.iter().any(|c| c == "__init__.py"))
}

fn dists(view: &dyn View, root: &str) -> Result<Vec<Dist>, TargetError> {
    let mut out = Vec::new();
    for child in view.children(root)? {
        let Some(dir) = child
            .strip_suffix('/')
            .filter(|d| d.ends_with(".dist-info"))
        else {
            continue;
        };
        let dist_info = if root.is_empty() {
            dir.to_string()
        } else {
            format!("{root}/{dir}")
        };
        let Some(bytes) = view.read(&format!("{dist_info}/METADATA"))? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let field = |key: &str| {
            text.lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
        };
        if let (Some(name), Some(version)) = (field("Name:"), field("Version:")) {
            out.push(Dist {
                name,
                version,
                dist_info,
            });
        }
    }
    Ok(out)
}

/// vLLM's own commit from `vllm/_version.py` (`__commit_id__ = 'g1a2b3c4'`), without the `g`.
pub fn vllm_commit(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        // setuptools-scm writes `__commit_id__ = commit_id = 'g1a2b3c4'`: the value is last.
        let rest = l.trim().strip_prefix("__commit_id__")?;
        let rest = rest
            .rsplit('=')
            .next()?
            .trim()
            .trim_matches(|c| c == '\'' || c == '"');
        let sha = rest.strip_prefix('g').unwrap_or(rest);
        (sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| sha.to_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise() {
        assert_eq!(normalize("Flash_Attn.4"), "flash-attn-4");
        assert_eq!(normalize("vllm"), "vllm");
    }

    #[test]
    fn commit_from_version_file() {
        let text = "__version__ = version = '0.30.0'\n__commit_id__ = commit_id = 'g1a2b3c4d5'\n";
        assert_eq!(vllm_commit(text), Some("1a2b3c4d5".into()));
        assert_eq!(vllm_commit("__commit_id__ = commit_id = None\n"), None);
        assert_eq!(
            vllm_commit("__commit_id__ = 'g1a2b3c4d5'\n"),
            Some("1a2b3c4d5".into())
        );
    }
}
