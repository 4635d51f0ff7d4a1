//! Which copy of a package Python imports from an environment, as CPython's `site` builds
//! `sys.path`: the `PYTHONPATH` entries first (an image's `config.Env`), then the interpreter's
//! standard library, the user site-packages (when enabled), the site directories, and each
//! site directory's `.pth` path entries after it. `sitecustomize` and `usercustomize`, wherever
//! that path finds them, and `.pth` `import` lines run when Python starts and can change it.
//!
//! A copy judged in an environment is the copy Python imports only when nothing before the
//! environment on that path holds the package and no startup code could put another first.
//! Every reason it may not be is a [`Concern`] naming the file or variable; the verdict then
//! carries `unknown` import-path evidence ([`evidence`]): `unknown`, or `affected` where the
//! copy itself is, never `not_affected`.
//!
//! Not followed (the target does not say): an interpreter outside the target (a venv's
//! `home` on the scanning machine), the environment of a process other than the image's own
//! (`docker run -e`), and the order of several system site directories' `.pth` entries.

use super::env::Env;
use super::pth::Pth;
use crate::model::{Evidence, EvidenceKind, Status};
use crate::view::{TargetError, View};

/// One reason the copy judged may not be the one Python imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concern {
    /// The file (relative to the view root) or variable (`PYTHONPATH`) that says so.
    pub file: String,
    /// Its line (1-based) for a `.pth` line.
    pub line: Option<u32>,
    /// The whole reason, one sentence.
    pub what: String,
}

/// The packages whose import location the scan judges.
const JUDGED_PACKAGES: &[&str] = &["vllm", "flash_attn"];

/// The modules `site` imports when Python starts, from anywhere on `sys.path`.
const CUSTOMIZE: &[&str] = &["sitecustomize.py", "usercustomize.py"];

const STARTUP: &str =
    "it can change sys.path, so which copy Python imports cannot be told without running it";

/// Every concern for the copy of `package` (a top-level package: `vllm`, `flash_attn`) that
/// `env` holds; `envs` are all the environments of the view. A copy on no path the target
/// sets up (not a site directory, a `.pth` entry, a `PYTHONPATH` entry or the view's root) is
/// imported only if code puts it on the path: the startup code of every site directory counts.
pub fn concerns(
    view: &dyn View,
    env: &Env,
    package: &str,
    envs: &[Env],
) -> Result<Vec<Concern>, TargetError> {
    let mut out = startup_code(view, env)?;
    let on_path = env.root.is_empty()
        || env.editable_of.is_some()
        || Layout::of(view, &env.root)?.is_some()
        || pythonpath_dirs(view).contains(&env.root);
    if !on_path {
        for other in envs {
            if other.root != env.root && Layout::of(view, &other.root)?.is_some() {
                out.extend(startup_code(view, other)?);
                out.extend(interpreter(view, other, package)?);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|c| seen.insert((c.file.clone(), c.line)));
    }
    if let Some(root) = &env.editable_of {
        // A directory a site directory's `.pth` entry (or an editable install) puts on the
        // path: that site directory's `site` runs, and what comes before the entry wins.
        out.extend(startup_code(view, &Env::at(root))?);
        out.extend(before_entry(view, root, env, package)?);
    }
    out.extend(pythonpath(view, env, package)?);
    out.extend(interpreter(view, env, package)?);
    Ok(out)
}

/// The evidence concerns give: `unknown`, naming the first file (and line) and how many more
/// there are; `None` without any.
pub fn evidence(concerns: &[Concern]) -> Option<Evidence> {
    let first = concerns.first()?;
    let more = match concerns.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(Evidence {
        kind: EvidenceKind::ImportPath,
        status: Status::Unknown,
        detail: format!("{}{more}", first.what),
        file: Some(first.file.clone()),
        line: first.line,
    })
}

/// The startup code of one site directory: its `.pth` `import` lines (every `.pth` file, in
/// name order; Pythons before 3.13 read dot-files too) and the `sitecustomize.py` /
/// `usercustomize.py` it holds. A few `.pth` import lines known not to touch `sys.path` for the
/// packages judged here (setuptools' `distutils-precedence.pth`, virtualenv's `_virtualenv`, a
/// setuptools editable finder whose mapping names neither `vllm` nor `flash_attn`) are not
/// counted, nor the Debian/Ubuntu `sitecustomize` that only installs apport's hook.
pub fn startup_code(view: &dyn View, env: &Env) -> Result<Vec<Concern>, TargetError> {
    let mut out = Vec::new();
    let mut children = view.children(&env.root)?;
    children.sort();
    for child in &children {
        if CUSTOMIZE.contains(&child.as_str()) {
            out.extend(customize(view, &env.join(child))?);
            continue;
        }
        if !child.ends_with(".pth") {
            continue;
        }
        let file = env.join(child);
        let bytes = match view.read(&file) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(TargetError::Unreadable { .. }) => {
                out.push(Concern {
                    file: file.clone(),
                    line: None,
                    what: format!("{child} cannot be read (a link not resolved): {STARTUP}"),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let pth = Pth::parse(&bytes);
        if pth.not_utf8 {
            out.push(Concern {
                file: file.clone(),
                line: None,
                what: format!(
                    "{child} is not UTF-8: depending on the locale, Python stops at it or reads other lines than this scan does"
                ),
            });
        }
        for (line, code) in pth.imports() {
            if harmless_import_line(view, env, code)? {
                continue;
            }
            out.push(Concern {
                file: file.clone(),
                line: Some(line),
                what: format!(
                    "{child}:{line} is an `import` line, run when Python starts: {STARTUP}"
                ),
            });
        }
    }
    Ok(out)
}

/// A `sitecustomize.py` / `usercustomize.py` at `file`: a concern unless it is known harmless.
fn customize(view: &dyn View, file: &str) -> Result<Option<Concern>, TargetError> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let text = match view.read(file) {
        Ok(Some(bytes)) => Some(bytes),
        Ok(None) => return Ok(None),
        // A link the view does not resolve (Debian's -> /etc/python3.X/): not known harmless.
        Err(TargetError::Unreadable { .. }) => None,
        Err(e) => return Err(e),
    };
    if text.as_deref().is_some_and(is_apport_hook) {
        return Ok(None);
    }
    Ok(Some(Concern {
        file: file.to_string(),
        line: None,
        what: format!("{name} runs when Python starts ({file}): {STARTUP}"),
    }))
}

/// Debian's and Ubuntu's `/etc/python3.X/sitecustomize.py`: installs apport's exception hook
/// when apport is there, nothing else.
fn is_apport_hook(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let code: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    code == [
        "try:",
        "import apport_python_hook",
        "except ImportError:",
        "pass",
        "else:",
        "apport_python_hook.install()",
    ]
}

/// `.pth` import lines known not to change where `vllm` or `flash_attn` is imported from.
fn harmless_import_line(view: &dyn View, env: &Env, line: &str) -> Result<bool, TargetError> {
    let line = line.trim();
    // setuptools' distutils-precedence.pth: a meta-path shim for `distutils` only.
    // The whole line, nothing after it: code appended to the shim runs too.
    if line
        == "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim();"
    {
        return Ok(true);
    }
    // virtualenv's `_virtualenv.pth`: patches distutils' install schemes.
    if line == "import _virtualenv" {
        return Ok(true);
    }
    // A setuptools editable install: `import __editable___NAME_finder;
    // __editable___NAME_finder.install()`; the finder maps the packages it serves.
    if let Some(rest) = line.strip_prefix("import __editable___")
        && let Some((module, call)) = rest.split_once(';')
        && call.trim() == format!("__editable___{}.install()", module.trim())
        && module
            .trim()
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        let finder = env.join(&format!("__editable___{}.py", module.trim()));
        if let Some(text) = view.read(&finder)? {
            let text = String::from_utf8_lossy(&text);
            return Ok(!JUDGED_PACKAGES.iter().any(|p| text.contains(p)));
        }
    }
    Ok(false)
}

/// For `env`, a directory that `site`'s `.pth` path entries put on the path after the site
/// directory `site`: the site directory itself comes first, then the entries in file-name and
/// line order. One of them that holds `package` before `env`'s entry means Python imports it
/// from there; an entry outside the view before it may (it is not known what it holds).
fn before_entry(
    view: &dyn View,
    site: &str,
    env: &Env,
    package: &str,
) -> Result<Vec<Concern>, TargetError> {
    if holds(view, site, package)? {
        return Ok(vec![Concern {
            file: site.to_string(),
            line: None,
            what: format!(
                "the site directory {site} holds {package} itself, before its .pth entries: Python imports that copy, not this one"
            ),
        }]);
    }
    let mut out = Vec::new();
    let mut names = view.children(site)?;
    names.sort();
    for name in names.iter().filter(|n| n.ends_with(".pth")) {
        let file = join(site, name);
        let Ok(Some(bytes)) = view.read(&file) else {
            continue;
        };
        for (line, entry) in Pth::parse(&bytes).paths() {
            let dir = if entry.starts_with('/') {
                view.resolve_absolute(entry)
            } else {
                super::pth::join_relative(site, entry)
            };
            match dir {
                Some(dir) if dir == env.root => return Ok(out),
                Some(dir) if dir == site => {}
                Some(dir) if holds(view, &dir, package)? => {
                    out.push(Concern {
                        file,
                        line: Some(line),
                        what: format!(
                            "{name}:{line} puts {dir} on sys.path before {}, and it holds {package}: Python imports that copy, not this one",
                            env.root
                        ),
                    });
                    return Ok(out);
                }
                Some(_) => {}
                None if entry.starts_with('/') => out.push(Concern {
                    file: file.clone(),
                    line: Some(line),
                    what: format!(
                        "{name}:{line} puts {} on sys.path before {}, outside the target: whether Python imports {package} from there is not known",
                        crate::model::text::printable(entry),
                        env.root
                    ),
                }),
                None => {}
            }
        }
    }
    Ok(out)
}

/// Whether `dir` holds `package` as Python would import it (a package directory or a module).
fn holds(view: &dyn View, dir: &str, package: &str) -> Result<bool, TargetError> {
    let children = view.children(dir)?;
    Ok(children.contains(&format!("{package}/"))
        || children.contains(&format!("{package}.py"))
        || children
            .iter()
            .any(|c| c.starts_with(&format!("{package}.")) && c.ends_with(".so")))
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// An image's `PYTHONPATH` (its `config.Env`): entries inside the image are followed in order,
/// before the environment; one that holds the package first means Python imports it from
/// there. An entry that is empty or relative (the working directory at run time), under a
/// declared volume, a link not resolved, or a file (a zip archive) cannot be followed.
fn pythonpath(view: &dyn View, env: &Env, package: &str) -> Result<Vec<Concern>, TargetError> {
    let Some(rt) = view.runtime() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let concern = |what: String| Concern {
        file: "PYTHONPATH".into(),
        line: None,
        what,
    };
    if let Some(why) = &rt.malformed {
        out.push(Concern {
            file: "config.Env".into(),
            line: None,
            what: format!(
                "the image's config.Env cannot be read ({why}): whether PYTHONPATH puts another {package} first is not known"
            ),
        });
        return Ok(out);
    }
    if rt.var("PYTHONHOME").is_some_and(|v| !v.is_empty()) {
        out.push(Concern {
            file: "PYTHONHOME".into(),
            line: None,
            what: "PYTHONHOME (the image's config.Env) moves the standard library and site-packages: not followed".into(),
        });
    }
    let Some(value) = rt.var("PYTHONPATH").filter(|v| !v.is_empty()) else {
        return Ok(out);
    };
    for (i, entry) in value.split(':').enumerate() {
        let named = format!(
            "PYTHONPATH entry {} `{}` (the image's config.Env)",
            i + 1,
            crate::model::text::printable(entry)
        );
        if entry.is_empty() || !entry.starts_with('/') {
            out.push(concern(format!(
                "{named} is {}: Python resolves it against the working directory at run time, which the image does not fix, before {} on sys.path",
                if entry.is_empty() { "empty" } else { "relative" },
                env.root
            )));
            continue;
        }
        let Some(path) = view.resolve_absolute(entry) else {
            out.push(concern(format!(
                "{named} cannot be resolved inside the image"
            )));
            continue;
        };
        if let Some(volume) = rt.volumes.iter().find(|v| {
            let v = v.trim_matches('/');
            v.is_empty() || path == v || path.starts_with(&format!("{v}/"))
        }) {
            out.push(concern(format!(
                "{named} lies under the volume {volume}, mounted from outside the image at run time: what Python imports from it is not in the image"
            )));
            continue;
        }
        if path == env.root {
            // The environment itself is this entry: nothing later comes first.
            break;
        }
        match view.read(&path) {
            Err(TargetError::Unreadable { .. }) => {
                out.push(concern(format!(
                    "{named} is a link the image does not resolve: where it leads is not known"
                )));
                continue;
            }
            Ok(Some(_)) => {
                out.push(concern(format!(
                    "{named} is a file (a zip archive Python imports from), which this scan does not read"
                )));
                continue;
            }
            Ok(None) => {}
            Err(e) => return Err(e),
        }
        for name in CUSTOMIZE {
            if view.children(&path)?.iter().any(|c| c == name) {
                out.extend(customize(view, &join(&path, name))?);
            }
        }
        if holds(view, &path, package)? {
            out.push(concern(format!(
                "{named} comes before {} on sys.path and holds {package}: Python imports {package} from /{path}, not this copy",
                if env.root.is_empty() { "/" } else { &env.root }
            )));
            break;
        }
    }
    Ok(out)
}

/// The image's `PYTHONPATH` entries that resolve inside it.
fn pythonpath_dirs(view: &dyn View) -> Vec<String> {
    view.runtime()
        .and_then(|rt| rt.var("PYTHONPATH"))
        .into_iter()
        .flat_map(|v| v.split(':'))
        .filter(|e| e.starts_with('/'))
        .filter_map(|e| view.resolve_absolute(e))
        .collect()
}

/// Where an environment sits in an interpreter's layout.
struct Layout {
    /// The prefix (`usr/local`, a venv's root), relative to the view root.
    prefix: String,
    /// `python3.12`; several for Debian's shared `lib/python3/dist-packages`.
    versions: Vec<String>,
    /// `dist-packages` (Debian's interpreter) rather than `site-packages`.
    debian: bool,
}

impl Layout {
    fn of(view: &dyn View, root: &str) -> Result<Option<Layout>, TargetError> {
        let parts: Vec<&str> = root.split('/').collect();
        let [.., lib, version, site] = parts.as_slice() else {
            return Ok(None);
        };
        if !matches!(*lib, "lib" | "lib64") || !matches!(*site, "site-packages" | "dist-packages") {
            return Ok(None);
        }
        let prefix = parts[..parts.len() - 3].join("/");
        let debian = *site == "dist-packages";
        let versions = if *version == "python3" && debian {
            view.children(&join(&prefix, lib))?
                .iter()
                .filter_map(|c| c.strip_suffix('/'))
                .filter(|c| is_version_dir(c))
                .map(String::from)
                .collect()
        } else if is_version_dir(version) {
            vec![version.to_string()]
        } else {
            return Ok(None);
        };
        Ok(Some(Layout {
            prefix,
            versions,
            debian,
        }))
    }
}

fn is_version_dir(name: &str) -> bool {
    name.strip_prefix("python3.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// A venv's `pyvenv.cfg`: the base interpreter's directory and whether the system
/// site-packages are on the path.
fn venv_settings(text: &str) -> (Option<String>, bool) {
    let mut home = None;
    let mut system = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "home" => home = Some(value.trim().to_string()),
            "include-system-site-packages" => {
                system = value.trim().eq_ignore_ascii_case("true");
            }
            _ => {}
        }
    }
    (home, system)
}

/// The interpreter's own library directory (and a venv's base interpreter's, where the target
/// holds it) and the user site-packages: startup modules in them, and a user site that holds
/// the package first.
fn interpreter(view: &dyn View, env: &Env, package: &str) -> Result<Vec<Concern>, TargetError> {
    let Some(layout) = Layout::of(view, &env.root)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let cfg = view
        .read(&join(&layout.prefix, "pyvenv.cfg"))
        .ok()
        .flatten();
    let venv = cfg.map(|b| venv_settings(&String::from_utf8_lossy(&b)));
    let mut libraries: Vec<String> = Vec::new();
    // A user site-packages (`~/.local/lib/python3.X/site-packages`) belongs to whichever
    // interpreter of that version runs: every one the target holds.
    let user = env.root.starts_with("root/.local/")
        || (env.root.starts_with("home/") && env.root.contains("/.local/lib/"));
    for version in &layout.versions {
        if user {
            for prefix in ["lib", "usr/lib", "usr/local/lib"] {
                let lib = format!("{prefix}/{version}");
                if !view.children(&lib)?.is_empty() {
                    libraries.push(lib);
                }
            }
            continue;
        }
        match &venv {
            Some((home, _)) => {
                // `home` is the base interpreter's `bin` directory; its prefix is the parent.
                let base = home
                    .as_deref()
                    .and_then(|h| h.trim_end_matches('/').rsplit_once('/'))
                    .map(|(parent, _)| if parent.is_empty() { "/" } else { parent })
                    .and_then(|p| view.resolve_absolute(p));
                if let Some(base) = base {
                    libraries.push(join(&join(&base, "lib"), version));
                }
            }
            None => {
                libraries.push(join(&join(&layout.prefix, "lib"), version));
                if layout.debian {
                    libraries.push(format!("usr/lib/{version}"));
                }
            }
        }
    }
    libraries.sort();
    libraries.dedup();
    for lib in &libraries {
        for name in CUSTOMIZE {
            out.extend(customize(view, &join(lib, name))?);
        }
    }
    let user_site = match &venv {
        Some((_, system)) => *system,
        None => true,
    } && view
        .runtime()
        .and_then(|rt| rt.var("PYTHONNOUSERSITE"))
        .is_none_or(str::is_empty);
    if !user_site {
        return Ok(out);
    }
    for version in &layout.versions {
        for user in user_sites(view, version)? {
            if user == env.root {
                continue;
            }
            out.extend(startup_code(view, &Env::at(&user))?);
            if holds(view, &user, package)? {
                out.push(Concern {
                    file: user.clone(),
                    line: None,
                    what: format!(
                        "the user site-packages {user} comes before {} on sys.path and holds {package}: Python imports {package} from there, not this copy",
                        env.root
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// The user site-packages directories of `version` the target holds: `PYTHONUSERBASE`'s when
/// the image sets it, else `~/.local` of root and of every home directory.
fn user_sites(view: &dyn View, version: &str) -> Result<Vec<String>, TargetError> {
    let tail = format!("lib/{version}/site-packages");
    let bases: Vec<String> = match view
        .runtime()
        .and_then(|rt| rt.var("PYTHONUSERBASE"))
        .filter(|v| !v.is_empty())
    {
        Some(base) => view.resolve_absolute(base).into_iter().collect(),
        None => {
            let mut bases = vec!["root/.local".to_string()];
            for home in view.children("home")? {
                if let Some(name) = home.strip_suffix('/') {
                    bases.push(format!("home/{name}/.local"));
                }
            }
            bases
        }
    };
    let mut out = Vec::new();
    for base in bases {
        let dir = join(&base, &tail);
        if !view.children(&dir)?.is_empty() {
            out.push(dir);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{MemView, Runtime};

    fn put(view: &mut MemView, path: &str, text: &str) {
        view.insert(path.to_string(), text.as_bytes().to_vec());
    }

    #[test]
    fn startup_code_is_import_lines_and_customize_modules_not_known_harmless_lines() {
        let mut view = MemView::new("env", crate::model::TargetKind::Installed);
        let site = "lib/python3.11/site-packages";
        let at = |rel: &str| format!("{site}/{rel}");
        put(&mut view, &at("vllm/__init__.py"), "");
        put(
            &mut view,
            &at("distutils-precedence.pth"),
            "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n",
        );
        put(&mut view, &at("_virtualenv.pth"), "import _virtualenv\n");
        put(
            &mut view,
            &at("__editable__.other-1.0.pth"),
            "import __editable___other_1_0_finder; __editable___other_1_0_finder.install()\n",
        );
        put(
            &mut view,
            &at("__editable___other_1_0_finder.py"),
            "MAPPING = {'other': '/src/other'}\n",
        );
        put(
            &mut view,
            &at("paths.pth"),
            "# a comment\n../../../src\n/abs/dir\n",
        );
        let env = Env::at(site);
        assert_eq!(startup_code(&view, &env).expect("reads"), []);

        put(
            &mut view,
            &at("__editable__.vllm-0.1.pth"),
            "import __editable___vllm_0_1_finder; __editable___vllm_0_1_finder.install()\n",
        );
        put(
            &mut view,
            &at("__editable___vllm_0_1_finder.py"),
            "MAPPING = {'vllm': '/src/vllm/vllm'}\n",
        );
        // Python 3.11 reads dot-files; a lone CR ends a line as a newline does.
        put(
            &mut view,
            &at(".hidden.pth"),
            "import sys; sys.path.insert(0, '/x')\n",
        );
        put(
            &mut view,
            &at("zz.pth"),
            "/abs\rimport\tsys; sys.path.insert(0, '/x')\n",
        );
        // The shim's line with code after it is no longer the shim.
        put(
            &mut view,
            &at("zzz-distutils.pth"),
            "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); import a\n",
        );
        put(&mut view, &at("sitecustomize.py"), "import sys\n");
        let found = startup_code(&view, &env).expect("reads");
        let at: Vec<(String, Option<u32>)> =
            found.iter().map(|c| (c.file.clone(), c.line)).collect();
        assert_eq!(
            at,
            [
                (format!("{site}/.hidden.pth"), Some(1)),
                (format!("{site}/__editable__.vllm-0.1.pth"), Some(1)),
                (format!("{site}/sitecustomize.py"), None),
                (format!("{site}/zz.pth"), Some(2)),
                (format!("{site}/zzz-distutils.pth"), Some(1)),
            ]
        );
        let e = evidence(&found).expect("evidence");
        assert_eq!(e.status, Status::Unknown);
        assert!(e.detail.contains("(and 4 more)"), "{}", e.detail);
        assert!(evidence(&[]).is_none());
    }

    #[test]
    fn the_interpreters_own_library_and_the_user_site_count() {
        let mut view = MemView::new("image", crate::model::TargetKind::Image);
        let site = "usr/local/lib/python3.12/site-packages";
        put(&mut view, &format!("{site}/vllm/__init__.py"), "");
        let env = Env::at(site);
        assert_eq!(concerns(&view, &env, "vllm", &[]).expect("reads"), []);
        // Debian's apport hook is harmless; anything else in the library directory is not.
        let apport = "# install the apport exception handler if available\ntry:\n    import apport_python_hook\nexcept ImportError:\n    pass\nelse:\n    apport_python_hook.install()\n";
        put(
            &mut view,
            "usr/local/lib/python3.12/sitecustomize.py",
            apport,
        );
        assert_eq!(concerns(&view, &env, "vllm", &[]).expect("reads"), []);
        put(
            &mut view,
            "usr/local/lib/python3.12/usercustomize.py",
            "import sys\n",
        );
        let found = concerns(&view, &env, "vllm", &[]).expect("reads");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].file, "usr/local/lib/python3.12/usercustomize.py");
        view.remove("usr/local/lib/python3.12/usercustomize.py");

        // A user site-packages comes first and holds vllm: not this copy.
        put(
            &mut view,
            "root/.local/lib/python3.12/site-packages/vllm/__init__.py",
            "",
        );
        let found = concerns(&view, &env, "vllm", &[]).expect("reads");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].what.contains("user site-packages"), "{found:?}");
        // ... unless the image turns the user site off.
        view.set_runtime(Runtime {
            env: vec![("PYTHONNOUSERSITE".into(), "1".into())],
            ..Runtime::default()
        });
        assert_eq!(concerns(&view, &env, "vllm", &[]).expect("reads"), []);
        // A venv without the system site-packages has no user site either, and its base
        // interpreter's library directory counts.
        let venv_site = "opt/venv/lib/python3.12/site-packages";
        put(&mut view, &format!("{venv_site}/vllm/__init__.py"), "");
        put(
            &mut view,
            "opt/venv/pyvenv.cfg",
            "home = /usr/local/bin\ninclude-system-site-packages = false\n",
        );
        view.set_runtime(Runtime::default());
        assert_eq!(
            concerns(&view, &Env::at(venv_site), "vllm", &[]).expect("r"),
            []
        );
        put(
            &mut view,
            "usr/local/lib/python3.12/sitecustomize.py",
            "import x\n",
        );
        let found = concerns(&view, &Env::at(venv_site), "vllm", &[]).expect("r");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].file, "usr/local/lib/python3.12/sitecustomize.py");
    }

    #[test]
    fn pythonpath_entries_come_first_or_are_unknown() {
        let mut view = MemView::new("image", crate::model::TargetKind::Image);
        let site = "usr/local/lib/python3.12/site-packages";
        put(&mut view, &format!("{site}/vllm/__init__.py"), "");
        put(&mut view, "opt/vllm-copy/vllm/__init__.py", "");
        put(&mut view, "opt/empty/other.pth", "");
        put(&mut view, "opt/app.zip", "PK");
        let env = Env::at(site);
        let with = |view: &mut MemView, value: &str, volumes: &[&str]| {
            view.set_runtime(Runtime {
                env: vec![
                    ("PATH".into(), "/usr/bin".into()),
                    ("PYTHONPATH".into(), value.into()),
                ],
                volumes: volumes.iter().map(|v| v.to_string()).collect(),
                ..Runtime::default()
            });
        };
        // An entry that holds vllm comes first; one that does not (or does not exist) is passed.
        with(&mut view, "/opt/nothing:/opt/empty:/opt/vllm-copy", &[]);
        let found = concerns(&view, &env, "vllm", &[]).expect("reads");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].file, "PYTHONPATH");
        assert!(found[0].what.contains("/opt/vllm-copy"), "{found:?}");
        // The environment itself first: nothing later counts.
        with(&mut view, &format!("/{site}:/opt/vllm-copy"), &[]);
        assert_eq!(concerns(&view, &env, "vllm", &[]).expect("reads"), []);
        for (value, volumes, says) in [
            ("", &[][..], None),
            ("relative/dir", &[][..], Some("relative")),
            ("/opt/empty::/x", &[][..], Some("empty")),
            ("/mnt/models", &["/mnt"][..], Some("volume")),
            ("/opt/app.zip", &[][..], Some("zip")),
        ] {
            with(&mut view, value, volumes);
            let found = concerns(&view, &env, "vllm", &[]).expect("reads");
            match says {
                None => assert_eq!(found, [], "{value}"),
                Some(word) => {
                    assert_eq!(found.len(), 1, "{value}: {found:?}");
                    assert!(found[0].what.contains(word), "{value}: {found:?}");
                }
            }
        }
        view.set_runtime(Runtime {
            malformed: Some("config.Env is 1, not a list".into()),
            ..Runtime::default()
        });
        assert_eq!(
            concerns(&view, &env, "vllm", &[]).expect("reads")[0].file,
            "config.Env"
        );
    }
}
