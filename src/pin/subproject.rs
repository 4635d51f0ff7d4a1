//! Kernel CMake projects below the root: a repository whose kernel build lives in a
//! subdirectory (SGLang's `sgl-kernel/`, a vendored project) declares its pins where the
//! top-level `CMakeLists.txt` never reaches. Each such directory with a `CMakeLists.txt` that
//! calls `project()` is evaluated as the root CMake would be given (`cmake -S DIR`), and its
//! pins join the tree's, with paths from the tree's root.

use super::{CmakePins, cmake, components::Registry, from_evaluation};
use crate::model::{CmakeRoot, TargetKind};
use crate::view::{TargetError, View};

/// A directory of another view, seen as a view of its own.
pub struct SubView<'a> {
    inner: &'a dyn View,
    /// The directory, relative to the inner view's root, without a trailing `/`.
    prefix: String,
}

impl<'a> SubView<'a> {
    pub fn new(inner: &'a dyn View, prefix: &str) -> Self {
        SubView {
            inner,
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    fn outer(&self, path: &str) -> String {
        if path.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}/{path}", self.prefix)
        }
    }

    /// A path climbing above the directory (`../cmake/x.cmake`) as a path of the inner view,
    /// when it stays inside that view.
    fn above(&self, path: &str) -> Option<String> {
        if !path.starts_with("../") {
            return None;
        }
        cmake::normalize_path(&self.outer(path))
    }
}

impl View for SubView<'_> {
    fn describe(&self) -> String {
        format!("{} ({}/)", self.inner.describe(), self.prefix)
    }
    fn kind(&self) -> TargetKind {
        self.inner.kind()
    }
    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let strip = format!("{}/", self.prefix);
        Ok(self
            .inner
            .files_under(&self.outer(dir))?
            .into_iter()
            .filter_map(|f| f.strip_prefix(&strip).map(str::to_string))
            .collect())
    }
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        if path.starts_with("../") {
            // Never a path of the inner view that climbs out of it.
            return match self.above(path) {
                Some(p) => self.inner.read(&p),
                None => Ok(None),
            };
        }
        self.inner.read(&self.outer(path))
    }
    fn reaches_above(&self, path: &str) -> bool {
        self.above(path).is_some()
    }
}

/// The CMake projects below the root to evaluate, in order, each with why
/// ([`CmakeRoot::why`]), and what could not be read about them (warnings):
///
/// 1. the directories the Python build configures: `pyproject.toml`'s `[tool.scikit-build]`
///    `cmake.source-dir`, and `setup.py`'s CMake extensions and `cmake` runs
///    ([`super::setup_py`]);
/// 2. the shallowest directory with a `CMakeLists.txt` calling `project()` above each
///    declaration the root's evaluation never reached;
/// 3. every other directory whose `CMakeLists.txt` no other CMake file reaches (by
///    `add_subdirectory`, `include` of a `CMakeLists.txt`, or a `SOURCE_DIR`, with a path
///    read without evaluating): a project the Python build may configure in a way not read
///    here (a computed path), or that is built on its own. Where the Python build's roots are
///    known ([`known_python_roots`]), such a project is one no build of the package
///    configures: it is still evaluated, but what it fetches counts as unreached declarations
///    ([`Origin::NotConfigured`]), never as the tree's pins and never dropped.
pub fn roots(view: &dyn View, found: &CmakePins) -> Result<Roots, TargetError> {
    let mut out = Roots::default();
    let known = known_python_roots(view)?;
    // A path the Python build names may be anything (a file, a directory the tree lacks).
    let has_lists = |dir: &str| -> Result<bool, TargetError> {
        Ok(matches!(
            view.read(&format!("{dir}/CMakeLists.txt")),
            Ok(Some(_))
        ))
    };
    let push = |out: &mut Roots, dir: String, why: String, origin: Origin| {
        if !out.roots.iter().any(|r| r.dir == dir) {
            out.roots.push(CmakeRoot { dir, why });
            out.origins.push(origin);
        }
    };
    if let Some(dir) = python_build_root(view)? {
        if has_lists(&dir)? {
            push(
                &mut out,
                dir,
                "pyproject.toml: [tool.scikit-build] cmake.source-dir".into(),
                Origin::Configured,
            );
        } else {
            out.warnings.push(format!(
                "pyproject.toml: [tool.scikit-build] cmake.source-dir `{dir}` has no CMakeLists.txt"
            ));
        }
    }
    if let Some(bytes) = view.read("setup.py")? {
        let text = String::from_utf8_lossy(&bytes);
        for c in super::setup_py::configured("setup.py", &text) {
            let Some(raw) = c.dir else {
                if !c.extension {
                    continue;
                }
                out.warnings.push(format!(
                    "{}: the CMake source directory is not written out; every CMakeLists.txt no other one reaches is evaluated instead",
                    c.why
                ));
                continue;
            };
            match crate::pin::cmake::normalize_path(raw.trim_end_matches('/')) {
                // The top-level project: evaluated already.
                Some(dir) if dir.is_empty() || dir == "." => {}
                Some(dir) if has_lists(&dir)? => push(&mut out, dir, c.why, Origin::Configured),
                _ if !c.extension => {}
                _ => out.warnings.push(format!(
                    "{}: `{raw}` is not a directory of the tree with a CMakeLists.txt",
                    c.why
                )),
            }
        }
    }
    for u in &found.unreached {
        let mut dir = String::new();
        for part in u
            .file
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(&[][..], |(_, d)| d)
        {
            dir = if dir.is_empty() {
                (*part).to_string()
            } else {
                format!("{dir}/{part}")
            };
            if out
                .roots
                .iter()
                .any(|o| dir == o.dir || dir.starts_with(&format!("{}/", o.dir)))
            {
                break;
            }
            let Some(bytes) = view.read(&format!("{dir}/CMakeLists.txt"))? else {
                continue;
            };
            if cmake::calls_project(&String::from_utf8_lossy(&bytes)) {
                let why = format!(
                    "holds {}:{}, a declaration the top-level evaluation does not reach",
                    u.file, u.line
                );
                push(&mut out, dir.clone(), why, Origin::Configured);
                break;
            }
        }
    }
    let files = view.files_under("")?;
    let reached = reached_dirs(view, &files)?;
    let mut lists: Vec<&str> = files
        .iter()
        .filter_map(|f| f.strip_suffix("/CMakeLists.txt"))
        .collect();
    lists.sort_by_key(|d| (d.matches('/').count(), *d));
    for dir in lists {
        if reached.contains(dir) {
            continue;
        }
        let (why, origin) = match &known {
            None => (
                "no other CMakeLists.txt reaches it".into(),
                Origin::Unreached,
            ),
            Some(by) => (
                format!(
                    "no other CMakeLists.txt reaches it and the Python build does not configure it ({by}): what it fetches is reported as declarations no configuration reaches"
                ),
                Origin::NotConfigured,
            ),
        };
        push(&mut out, dir.to_string(), why, origin);
    }
    Ok(out)
}

/// Why [`roots`] evaluates a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Something configures it (the Python build, a declaration only it can reach): a problem
    /// evaluating it leaves the tree undecided.
    Configured,
    /// Nothing reaches it and the Python build's roots are not known: its pins are the tree's;
    /// a problem evaluating it leaves the tree undecided only when it could pin something.
    Unreached,
    /// Nothing reaches it and the Python build, whose roots are known, does not configure
    /// it: its fetches are declarations no configuration reaches (unknown for every rule of
    /// their component), a problem evaluating it as for [`Origin::Unreached`].
    NotConfigured,
}

/// What says which CMake projects the Python build configures, when that is known in full:
/// `pyproject.toml`'s build backend is scikit-build-core's own (`scikit_build_core.build`),
/// which configures exactly one project, `cmake.source-dir` (the root when not given), and no
/// `[[tool.scikit-build.overrides]]` entry changes that directory. `None` otherwise (a
/// `setup.py`, whose code may configure anything; another backend; an override): then every
/// project nothing reaches may be one the build configures.
pub fn known_python_roots(view: &dyn View) -> Result<Option<String>, TargetError> {
    let Some(bytes) = view.read("pyproject.toml")? else {
        return Ok(None);
    };
    let Ok(doc) = toml::from_str::<toml::Value>(&String::from_utf8_lossy(&bytes)) else {
        return Ok(None);
    };
    let backend = doc
        .get("build-system")
        .and_then(|b| b.get("build-backend"))
        .and_then(toml::Value::as_str);
    if backend.map(str::trim) != Some("scikit_build_core.build") {
        return Ok(None);
    }
    let sk = doc.get("tool").and_then(|t| t.get("scikit-build"));
    // An override may select another directory under a condition (a platform, an
    // environment variable): more than one root, not read here.
    let overridden = sk
        .and_then(|s| s.get("overrides"))
        .is_some_and(|o| o.to_string().contains("source-dir"));
    if overridden {
        return Ok(None);
    }
    let dir = python_build_root(view)?;
    if let Some(dir) = &dir
        && !matches!(view.read(&format!("{dir}/CMakeLists.txt")), Ok(Some(_)))
    {
        return Ok(None);
    }
    Ok(Some(format!(
        "pyproject.toml: scikit-build-core configures {}",
        dir.as_deref()
            .map_or("the root".to_string(), |d| format!("{d}/"))
    )))
}

/// The projects [`roots`] found.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub roots: Vec<CmakeRoot>,
    /// Per root: why it is evaluated.
    pub origins: Vec<Origin>,
    pub warnings: Vec<String>,
}

/// Commands that pin a fetched source, as CMake files spell them (lowercase).
const DECLARING: [&str; 6] = [
    "fetchcontent_declare",
    "fetchcontent_populate",
    "externalproject_add",
    "cpmaddpackage",
    "cpmdeclarepackage",
    "cpmfindpackage",
];

/// Markers of a CMake file reading what lies outside its own directory (a parent's helpers,
/// the environment, a download, a program's output).
const READS_OUTSIDE: [&str; 6] = [
    "../",
    "cmake_source_dir",
    "$env{",
    "execute_process",
    "download",
    "cmake_module_path",
];

/// Whether a project in `dir` could pin anything: a CMake file below it declares a fetch, or
/// reads what lies outside the directory (where a declaring helper may live).
fn could_pin(view: &dyn View, dir: &str) -> Result<bool, TargetError> {
    for file in view.files_under(dir)? {
        if !is_cmake_file(&file) {
            continue;
        }
        let Some(bytes) = view.read(&file)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        if DECLARING
            .iter()
            .chain(READS_OUTSIDE.iter())
            .any(|m| text.contains(m))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

fn is_cmake_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "CMakeLists.txt" || name.to_ascii_lowercase().ends_with(".cmake")
}

/// The directories whose `CMakeLists.txt` another CMake file reaches: `add_subdirectory(X)`,
/// `include(X/CMakeLists.txt)`, `SOURCE_DIR X`, with `X` relative or under
/// `${CMAKE_CURRENT_SOURCE_DIR}` / `${CMAKE_CURRENT_LIST_DIR}` (read from a `CMakeLists.txt`;
/// in a `*.cmake` file only `${CMAKE_CURRENT_LIST_DIR}`, the includer being unknown). A path
/// with any other variable reaches nothing here: the directory is then evaluated on its own
/// too, which is the safe side.
fn reached_dirs(
    view: &dyn View,
    files: &[String],
) -> Result<std::collections::BTreeSet<String>, TargetError> {
    let mut out = std::collections::BTreeSet::new();
    for file in files.iter().filter(|f| is_cmake_file(f)) {
        let Some(bytes) = view.read(file)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let here = file.rsplit_once('/').map_or("", |(d, _)| d);
        let lists = file.ends_with("CMakeLists.txt");
        for target in references(&text) {
            let mut path = target.replace("${CMAKE_CURRENT_LIST_DIR}", "@HERE@");
            if lists {
                path = path.replace("${CMAKE_CURRENT_SOURCE_DIR}", "@HERE@");
            } else if !path.starts_with("@HERE@") {
                continue;
            }
            let path = match path.strip_prefix("@HERE@") {
                Some(rest) => format!("{here}/{}", rest.trim_start_matches('/')),
                None if path.starts_with('/') => continue,
                None => format!("{here}/{path}"),
            };
            if path.contains("${") || path.contains("$ENV{") || path.contains('@') {
                continue;
            }
            let path = path.strip_suffix("/CMakeLists.txt").unwrap_or(&path);
            if let Some(dir) = crate::pin::cmake::normalize_path(path.trim_start_matches('/'))
                && dir != here
            {
                out.insert(dir);
            }
        }
    }
    Ok(out)
}

/// The path arguments of `add_subdirectory(...)`, `include(...CMakeLists.txt)` and every
/// `SOURCE_DIR ...` in a CMake file's text, unquoted.
fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    let words = |at: usize| -> Vec<String> {
        text[at..]
            .split(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(|w| w.trim_matches('"').to_string())
            .collect()
    };
    for (at, _) in lower.match_indices("add_subdirectory(") {
        if let Some(first) = words(at + "add_subdirectory(".len()).into_iter().next() {
            out.push(first);
        }
    }
    for (at, _) in lower.match_indices("include(") {
        if let Some(first) = words(at + "include(".len()).into_iter().next()
            && first.ends_with("CMakeLists.txt")
        {
            out.push(first);
        }
    }
    for (at, _) in text.match_indices("SOURCE_DIR") {
        let before = text[..at].chars().last();
        if before.is_some_and(|c| !c.is_whitespace() && c != '(') {
            continue;
        }
        if let Some(value) = text[at + "SOURCE_DIR".len()..].split_whitespace().next() {
            let value = value.trim_end_matches(')').trim_matches('"');
            if !value.is_empty() {
                out.push(value.to_string());
            }
        }
    }
    out
}

/// Evaluate each root of [`roots`] and merge its pins into `found`: its declarations stop
/// being unreached, its own unreached ones and unread files stay, with tree paths; a pin the
/// top-level evaluation (or an earlier root) found at the same place is kept once. Returns
/// the roots evaluated (the top-level first) and warnings.
pub fn merge(
    view: &dyn View,
    registry: &Registry,
    found: &mut CmakePins,
) -> Result<(Vec<CmakeRoot>, Vec<String>), cmake::CmakeError> {
    merge_with(view, registry, found, &roots)
}

/// [`merge`], with the roots from `roots_of` (a review takes them from the other revision's
/// where everything [`roots`] read is the same: `scan::shared`).
pub fn merge_with(
    view: &dyn View,
    registry: &Registry,
    found: &mut CmakePins,
    roots_of: &dyn Fn(&dyn View, &CmakePins) -> Result<Roots, TargetError>,
) -> Result<(Vec<CmakeRoot>, Vec<String>), cmake::CmakeError> {
    let Roots {
        roots: candidates,
        origins,
        mut warnings,
    } = roots_of(view, found)?;
    let mut evaluated = Vec::new();
    if view.read("CMakeLists.txt")?.is_some() {
        evaluated.push(CmakeRoot {
            dir: ".".into(),
            why: "the top-level CMakeLists.txt".into(),
        });
    }
    for (root, origin) in candidates.into_iter().zip(origins) {
        let configured = origin == Origin::Configured;
        let dir = root.dir.clone();
        let sub = SubView::new(view, &dir);
        // A project found only because nothing reaches it and that can pin nothing (a test
        // project, a vendored library): what stops its evaluation is said, not undecided.
        let matters = configured || could_pin(view, &dir)?;
        let evaluation = match cmake::evaluate(&sub) {
            Ok(e) => e,
            Err(e) if !matters => {
                warnings.push(format!(
                    "the CMake project in {dir}/ ({}) was not evaluated: {e}; it declares no fetch and reads nothing outside its directory",
                    root.why
                ));
                continue;
            }
            Err(e) if !configured => {
                found.undecided.get_or_insert_with(|| {
                    format!(
                        "the CMake project in {dir}/ ({}) could not be evaluated: {e}",
                        root.why
                    )
                });
                evaluated.push(root);
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut pins = from_evaluation(&evaluation, &sub, registry)?;
        // A file above the project (`../cmake/x.cmake`) is named by its place in the tree.
        let at = |f: &str| {
            let joined = format!("{dir}/{f}");
            cmake::normalize_path(&joined).unwrap_or(joined)
        };
        for pin in &mut pins.pins {
            pin.file = at(&pin.file);
            pin.patches = pin.patches.iter().map(|p| at(p)).collect();
            for p in &mut pin.possible {
                p.file = at(&p.file);
            }
        }
        for u in &mut pins.unreached {
            u.file = at(&u.file);
        }
        let inside = format!("{dir}/");
        found.unreached.retain(|u| !u.file.starts_with(&inside));
        if origin == Origin::NotConfigured {
            // No build of the package configures it: what it fetches is declared where no
            // configuration reaches, each value as one declaration (unknown for every rule of
            // its component, never a pin of the tree's).
            let demoted: Vec<crate::pin::Unreached> = std::mem::take(&mut pins.pins)
                .iter()
                .flat_map(|p| unreached_of(p, registry))
                // Kept once where a configured project pins the same value at the same place.
                .filter(|u| {
                    !found.pins.iter().any(|p| {
                        p.file == u.file
                            && p.line == u.line
                            && (p.reference == u.reference
                                || p.possible.iter().any(|q| q.reference == u.reference))
                    })
                })
                .collect();
            pins.unreached.extend(demoted);
        }
        for u in pins.unreached {
            if !found.unreached.contains(&u) {
                found.unreached.push(u);
            }
        }
        for pin in pins.pins {
            let same = |p: &crate::model::Pin| {
                p.file == pin.file
                    && p.line == pin.line
                    && p.reference == pin.reference
                    && p.component == pin.component
            };
            if !found.pins.iter().any(same) {
                found.pins.push(pin);
            }
        }
        found.unread.extend(
            pins.unread
                .iter()
                .map(|f| format!("{f} (from the project in {dir}/)")),
        );
        if let Some(why) = pins.undecided {
            if matters {
                found
                    .undecided
                    .get_or_insert_with(|| format!("the project in {dir}/: {why}"));
            } else {
                warnings.push(format!(
                    "the CMake project in {dir}/ ({}) is not fully evaluated: {why}; it declares no fetch and reads nothing outside its directory",
                    root.why
                ));
            }
        }
        evaluated.push(root);
    }
    Ok((evaluated, warnings))
}

/// A pin as the declarations no configuration reaches it stands for: one per value (a value
/// no text gives, an input's, has no reference: unknown for every rule of the component).
fn unreached_of(pin: &crate::model::Pin, registry: &Registry) -> Vec<crate::pin::Unreached> {
    let component = registry.get(&pin.component).map(|_| pin.component.clone());
    let one = |repo: &Option<String>, reference: &Option<String>, file: &str, line: u32| {
        crate::pin::Unreached {
            component: component.clone(),
            declared_name: pin.declared_name.clone(),
            repo: repo.clone(),
            reference: reference.clone(),
            file: file.to_string(),
            line,
        }
    };
    if pin.possible.is_empty() {
        return vec![one(&pin.repo, &pin.reference, &pin.file, pin.line)];
    }
    pin.possible
        .iter()
        .map(|p| one(&p.repo, &p.reference, &p.file, p.line))
        .collect()
}

/// `[tool.scikit-build] cmake.source-dir` (or `cmake = { source-dir = ... }`) of the tree's
/// `pyproject.toml`, normalised; `None` for the root itself or none given.
pub fn python_build_root(view: &dyn View) -> Result<Option<String>, TargetError> {
    let Some(bytes) = view.read("pyproject.toml")? else {
        return Ok(None);
    };
    let Ok(doc) = toml::from_str::<toml::Value>(&String::from_utf8_lossy(&bytes)) else {
        return Ok(None);
    };
    let sk = doc.get("tool").and_then(|t| t.get("scikit-build"));
    let dir = sk
        .and_then(|s| s.get("cmake.source-dir"))
        .or_else(|| {
            sk.and_then(|s| s.get("cmake"))
                .and_then(|c| c.get("source-dir"))
        })
        .and_then(|d| d.as_str());
    Ok(dir
        .and_then(crate::pin::cmake::normalize_path)
        .filter(|d| !d.is_empty()))
}
