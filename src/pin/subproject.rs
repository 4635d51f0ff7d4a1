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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::MemView;

    const FA: &str = "https://github.com/vllm-project/flash-attention.git";
    const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    const FIXED: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    const SKBUILD: &str = "[build-system]\nrequires = [\"scikit-build-core\"]\nbuild-backend = \"scikit_build_core.build\"\n";

    fn registry() -> Registry {
        serde_saphyr::from_str(include_str!("../../rules/components.yaml"))
            .expect("the shipped registry")
    }

    fn tree(files: &[(&str, &str)]) -> MemView {
        let mut view = MemView::new("tree", TargetKind::SourceTree);
        for (path, text) in files {
            view.insert(*path, text.as_bytes().to_vec());
        }
        view
    }

    fn project(name: &str, tag: &str) -> String {
        format!(
            "cmake_minimum_required(VERSION 3.26)\nproject({name} LANGUAGES CXX)\ninclude(FetchContent)\nFetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY {FA}\n  GIT_TAG {tag})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
        )
    }

    /// The roots [`roots`] finds: (directory, why, origin), and its warnings.
    fn found_roots(
        view: &MemView,
        found: &CmakePins,
    ) -> (Vec<(String, String, Origin)>, Vec<String>) {
        let r = roots(view, found).expect("reads");
        assert_eq!(r.roots.len(), r.origins.len());
        (
            r.roots
                .into_iter()
                .zip(r.origins)
                .map(|(root, o)| (root.dir, root.why, o))
                .collect(),
            r.warnings,
        )
    }

    /// The top-level evaluation, then [`merge`]: the pins, the roots evaluated, the warnings.
    fn scanned(view: &MemView) -> (CmakePins, Vec<(String, String)>, Vec<String>) {
        let registry = registry();
        let mut found = if view.contains("CMakeLists.txt") {
            crate::pin::from_cmake(view, &registry).expect("evaluates")
        } else {
            CmakePins::default()
        };
        let (evaluated, warnings) =
            merge(view, &registry, &mut found).unwrap_or_else(|e| panic!("{e}"));
        (
            found,
            evaluated.into_iter().map(|r| (r.dir, r.why)).collect(),
            warnings,
        )
    }
    #[test]
    fn a_sub_view_is_its_directory_and_reads_above_it_only_inside_the_tree() {
        let mut inner = MemView::new("an image", TargetKind::Image);
        for (path, text) in [
            ("kernels/CMakeLists.txt", "project(k)\n"),
            ("kernels/cmake/a.cmake", "# a\n"),
            ("cmake/pin.cmake", "# pin\n"),
            ("kernelsx/CMakeLists.txt", "project(x)\n"),
        ] {
            inner.insert(path, text.as_bytes().to_vec());
        }
        let sub = SubView::new(&inner, "kernels/");
        assert_eq!(sub.describe(), "an image (kernels/)");
        assert_eq!(sub.kind(), TargetKind::Image);
        assert_eq!(
            sub.files_under("").expect("lists"),
            ["CMakeLists.txt", "cmake/a.cmake"]
        );
        assert_eq!(sub.files_under("cmake").expect("lists"), ["cmake/a.cmake"]);
        assert_eq!(
            sub.read("CMakeLists.txt").expect("reads"),
            Some(b"project(k)\n".to_vec())
        );
        assert_eq!(
            sub.read("cmake/a.cmake").expect("reads"),
            Some(b"# a\n".to_vec())
        );
        assert_eq!(
            sub.read("../cmake/pin.cmake").expect("reads"),
            Some(b"# pin\n".to_vec())
        );
        assert_eq!(sub.read("missing.cmake").expect("reads"), None);
        // Above the whole tree: nothing, never a file of the inner view's.
        assert_eq!(sub.read("../../cmake/pin.cmake").expect("reads"), None);
        assert!(sub.reaches_above("../cmake/pin.cmake"));
        assert!(sub.reaches_above("../kernelsx/CMakeLists.txt"));
        assert!(!sub.reaches_above("cmake/a.cmake"));
        assert!(!sub.reaches_above("../../cmake/pin.cmake"));
    }

    #[test]
    fn only_cmake_files_are_cmake_files() {
        for (path, is) in [
            ("CMakeLists.txt", true),
            ("a/b/CMakeLists.txt", true),
            ("cmake/utils.cmake", true),
            ("cmake/Utils.CMake", true),
            ("a/CMakeLists.txt.in", false),
            ("a/cmakelists.txt", false),
            ("a/notes.txt", false),
            ("a/x.cmake.in", false),
        ] {
            assert_eq!(is_cmake_file(path), is, "{path}");
        }
    }

    #[test]
    fn references_are_the_paths_of_subdirectories_included_lists_and_source_dirs() {
        let text = "project(t)\nadd_subdirectory(kernels)\nADD_SUBDIRECTORY( \"csrc/b\"  bin )\n\
                    include(cmake/utils.cmake)\ninclude(\"third/CMakeLists.txt\")\n\
                    ExternalProject_Add(e\n  SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/ext)\n\
                    FetchContent_Declare(f SOURCE_DIR \"vendor/f\")\nset(MY_SOURCE_DIR nope)\n\
                    set(x SOURCE_DIR)\nFetchContent_Declare(g\nSOURCE_DIR\tlast)";
        assert_eq!(
            references(text),
            [
                "kernels",
                "csrc/b",
                "third/CMakeLists.txt",
                "${CMAKE_CURRENT_SOURCE_DIR}/ext",
                "vendor/f",
                "last",
            ]
        );
        // At the very start of the text, and after `(`.
        assert_eq!(references("SOURCE_DIR a"), ["a"]);
        assert_eq!(references("x(SOURCE_DIR b)"), ["b"]);
        assert_eq!(references("include(x.cmake)"), Vec::<String>::new());
    }

    #[test]
    fn reached_directories_are_read_from_lists_files_and_list_dir_paths_only() {
        let files = [
            (
                "CMakeLists.txt",
                "project(t)\nadd_subdirectory(kernels)\nadd_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/a)\n\
                 add_subdirectory(/abs/b)\nadd_subdirectory(${OTHER}/c)\nadd_subdirectory($ENV{HOME}/d)\n\
                 add_subdirectory(@X@/e)\nadd_subdirectory(.)\ninclude(g/h/CMakeLists.txt)\n",
            ),
            (
                "cmake/x.cmake",
                "add_subdirectory(rel)\nadd_subdirectory(${CMAKE_CURRENT_LIST_DIR}/../listdir)\n\
                 add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/srcdir)\n",
            ),
            (
                "sub/CMakeLists.txt",
                "ExternalProject_Add(e SOURCE_DIR ../sibling)\nadd_subdirectory(${CMAKE_CURRENT_LIST_DIR}/inner/)\n",
            ),
            ("docs/notes.txt", "add_subdirectory(not_cmake)\n"),
        ];
        let view = tree(&files);
        let listed: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        let reached = reached_dirs(&view, &listed).expect("reads");
        assert_eq!(
            reached.into_iter().collect::<Vec<_>>(),
            ["a", "g/h", "kernels", "listdir", "sibling", "sub/inner"]
        );
    }

    #[test]
    fn a_project_could_pin_when_a_cmake_file_declares_a_fetch_or_reads_outside() {
        let view = tree(&[
            (
                "fetches/cmake/deps.cmake",
                "fetchcontent_declare(x GIT_REPOSITORY r GIT_TAG v1)\n",
            ),
            ("fetches/CMakeLists.txt", "project(f)\n"),
            (
                "library/CMakeLists.txt",
                "project(l)\nadd_library(l STATIC l.cc)\n",
            ),
            (
                "library/README.md",
                "download it with execute_process and FetchContent_Declare\n",
            ),
            (
                "parent/CMakeLists.txt",
                "project(p)\ninclude(../cmake/helpers.cmake)\n",
            ),
            ("env/CMakeLists.txt", "project(e)\nset(X $ENV{ROOT})\n"),
        ]);
        assert!(could_pin(&view, "fetches").expect("reads"));
        assert!(could_pin(&view, "parent").expect("reads"));
        assert!(could_pin(&view, "env").expect("reads"));
        // Words in a file CMake does not read are not CMake's.
        assert!(!could_pin(&view, "library").expect("reads"));
        assert!(!could_pin(&view, "empty").expect("reads"));
    }

    #[test]
    fn the_python_build_root_is_scikit_builds_source_dir_in_either_spelling() {
        for (pyproject, dir) in [
            (
                "[tool.scikit-build]\ncmake.source-dir = \"kernels\"\n",
                Some("kernels"),
            ),
            (
                "[tool.scikit-build]\ncmake = { source-dir = \"./csrc/k/\" }\n",
                Some("csrc/k"),
            ),
            ("[tool.scikit-build]\ncmake.source-dir = \".\"\n", None),
            (
                "[tool.scikit-build]\ncmake.build-type = \"Release\"\n",
                None,
            ),
            ("[tool.other]\ncmake.source-dir = \"kernels\"\n", None),
            ("not toml = = \n", None),
        ] {
            let view = tree(&[("pyproject.toml", pyproject)]);
            assert_eq!(
                python_build_root(&view).expect("reads").as_deref(),
                dir,
                "{pyproject}"
            );
        }
        assert_eq!(python_build_root(&tree(&[])).expect("reads"), None);
    }

    #[test]
    fn the_python_builds_roots_are_known_only_from_scikit_build_cores_own_backend() {
        let lists = ("kernels/CMakeLists.txt", "project(k)\n");
        for (pyproject, with_lists, known) in [
            (
                SKBUILD.to_string(),
                false,
                Some("pyproject.toml: scikit-build-core configures the root"),
            ),
            (
                SKBUILD.replace(
                    "\"scikit_build_core.build\"",
                    "\" scikit_build_core.build \"",
                ),
                false,
                Some("pyproject.toml: scikit-build-core configures the root"),
            ),
            (
                format!("{SKBUILD}[tool.scikit-build]\ncmake.source-dir = \"kernels\"\n"),
                true,
                Some("pyproject.toml: scikit-build-core configures kernels/"),
            ),
            // The directory named has no project: what the build configures is not known.
            (
                format!("{SKBUILD}[tool.scikit-build]\ncmake.source-dir = \"kernels\"\n"),
                false,
                None,
            ),
            (
                format!(
                    "{SKBUILD}[[tool.scikit-build.overrides]]\nif.platform-system = \"win32\"\ncmake.source-dir = \"kernels\"\n"
                ),
                true,
                None,
            ),
            (
                format!(
                    "{SKBUILD}[[tool.scikit-build.overrides]]\nif.platform-system = \"win32\"\ncmake.build-type = \"Debug\"\n"
                ),
                true,
                Some("pyproject.toml: scikit-build-core configures the root"),
            ),
            (
                SKBUILD.replace("scikit_build_core.build", "setuptools.build_meta"),
                true,
                None,
            ),
            ("[project]\nname = \"k\"\n".to_string(), true, None),
            ("[[[".to_string(), true, None),
        ] {
            let mut files = vec![("pyproject.toml", pyproject.as_str())];
            if with_lists {
                files.push(lists);
            }
            let view = tree(&files);
            assert_eq!(
                known_python_roots(&view).expect("reads").as_deref(),
                known,
                "{pyproject}"
            );
        }
        assert_eq!(known_python_roots(&tree(&[lists])).expect("reads"), None);
    }

    fn unreached(file: &str, line: u32) -> crate::pin::Unreached {
        crate::pin::Unreached {
            component: Some("flash-attention".into()),
            declared_name: "vllm-flash-attn".into(),
            repo: Some(FA.into()),
            reference: None,
            file: file.into(),
            line,
        }
    }

    #[test]
    fn roots_are_what_the_python_build_configures_then_unreached_declarations_then_lists_nothing_reaches()
     {
        let setup = "import os\nsetup(\n    ext_modules=[\n        CMakeExtension(\"a._C\", sourcedir=\"kernels\"),\n        CMakeExtension(\"b._C\", sourcedir=\"csrc/b/\"),\n        CMakeExtension(\"c._C\", sourcedir=\".\"),\n        CMakeExtension(\"d._C\", sourcedir=\"missing\"),\n        CMakeExtension(\"e._C\", sourcedir=SRC),\n    ]\n)\nsubprocess.check_call([\"cmake\", \"-S\", \"nolists\", \"-B\", \"build\"])\nsubprocess.check_call([\"cmake\", \"--build\", \"build\"])\n";
        let view = tree(&[
            (
                "pyproject.toml",
                "[tool.scikit-build]\ncmake.source-dir = \"kernels\"\n",
            ),
            ("setup.py", setup),
            ("CMakeLists.txt", "project(top)\nadd_subdirectory(added)\n"),
            ("kernels/CMakeLists.txt", "add_subdirectory(sub)\n"),
            ("kernels/sub/CMakeLists.txt", "project(s)\n"),
            ("csrc/b/CMakeLists.txt", "project(b)\n"),
            ("nolists/README.md", "no project here\n"),
            ("added/CMakeLists.txt", "project(added)\n"),
            // Declarations the top-level does not reach: the shallowest project above each.
            ("deep/CMakeLists.txt", "add_library(d STATIC d.cc)\n"),
            (
                "deep/er/CMakeLists.txt",
                "PROJECT (er)\nadd_subdirectory(x)\n",
            ),
            ("deep/er/x/CMakeLists.txt", "project(x)\n"),
            ("z/CMakeLists.txt", "project(z)\n"),
            ("a/CMakeLists.txt", "project(a)\n"),
            ("a/b/CMakeLists.txt", "project(ab)\n"),
        ]);
        let found = CmakePins {
            unreached: vec![
                unreached("top.cmake", 1),
                unreached("kernels/sub/x.cmake", 4),
                unreached("deep/er/x/fa.cmake", 3),
                unreached("deep/er/y.cmake", 7),
                unreached("nowhere/fa.cmake", 2),
            ],
            ..CmakePins::default()
        };
        let (roots, warnings) = found_roots(&view, &found);
        let configured = Origin::Configured;
        let why = "no other CMakeLists.txt reaches it".to_string();
        assert_eq!(
            roots,
            [
                ("kernels".to_string(), "pyproject.toml: [tool.scikit-build] cmake.source-dir".to_string(), configured),
                ("csrc/b".to_string(), "setup.py:5: CMakeExtension(\"csrc/b/\")".to_string(), configured),
                (
                    "deep/er".to_string(),
                    "holds deep/er/x/fa.cmake:3, a declaration the top-level evaluation does not reach".to_string(),
                    configured
                ),
                ("a".to_string(), why.clone(), Origin::Unreached),
                ("deep".to_string(), why.clone(), Origin::Unreached),
                ("z".to_string(), why.clone(), Origin::Unreached),
                ("a/b".to_string(), why, Origin::Unreached),
            ]
        );
        assert_eq!(
            warnings,
            [
                "setup.py:7: CMakeExtension(\"missing\"): `missing` is not a directory of the tree with a CMakeLists.txt",
                "setup.py:8: CMakeExtension(SRC): the CMake source directory is not written out; every CMakeLists.txt no other one reaches is evaluated instead",
            ]
        );
        // A source directory without a project, and the roots known from the backend: what
        // nothing reaches is evaluated as what no configuration reaches.
        let view = tree(&[
            (
                "pyproject.toml",
                &format!("{SKBUILD}[tool.scikit-build]\ncmake.source-dir = \"gone\"\n"),
            ),
            ("z/CMakeLists.txt", "project(z)\n"),
        ]);
        let (roots, warnings) = found_roots(&view, &CmakePins::default());
        assert_eq!(
            roots,
            [(
                "z".to_string(),
                "no other CMakeLists.txt reaches it".to_string(),
                Origin::Unreached
            )]
        );
        assert_eq!(
            warnings,
            ["pyproject.toml: [tool.scikit-build] cmake.source-dir `gone` has no CMakeLists.txt"]
        );
        let view = tree(&[
            ("pyproject.toml", SKBUILD),
            ("z/CMakeLists.txt", "project(z)\n"),
        ]);
        let (roots, warnings) = found_roots(&view, &CmakePins::default());
        assert_eq!(
            roots,
            [(
                "z".to_string(),
                "no other CMakeLists.txt reaches it and the Python build does not configure it (pyproject.toml: scikit-build-core configures the root): what it fetches is reported as declarations no configuration reaches".to_string(),
                Origin::NotConfigured
            )]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// A tree with a kernel project whose own declaration the top-level never reaches, and
    /// three projects nothing reaches: one lists file CMake cannot read that can pin nothing,
    /// one that reads the environment, one that stops at a command not evaluated.
    fn layout(extra: &[(&'static str, &'static str)]) -> MemView {
        let decl = format!(
            "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {FIXED})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
        );
        let kernels = format!(
            "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude(../cmake/decl.cmake)\ninclude(FetchContent)\nif(USE_OLD)\n  set(T {AFFECTED})\nelse()\n  set(T {FIXED})\nendif()\nFetchContent_Declare(cutlass GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git GIT_TAG ${{T}} PATCH_COMMAND git apply ${{CMAKE_CURRENT_SOURCE_DIR}}/patches/fix.patch)\nFetchContent_MakeAvailable(cutlass)\n"
        );
        // A declaration in no project at all: unreached whatever is evaluated.
        let loose = format!(
            "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {AFFECTED})\n"
        );
        let mut files: Vec<(&str, &str)> = vec![
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.26)\nproject(top LANGUAGES CXX)\ninclude(cmake/decl.cmake)\n",
            ),
            ("cmake/decl.cmake", &decl),
            ("kernels/CMakeLists.txt", &kernels),
            ("kernels/patches/fix.patch", "--- a/x\n+++ b/x\n"),
            ("broken/CMakeLists.txt", "project(b)\nset(X\n"),
            ("env/CMakeLists.txt", "project(e)\nset(Y $ENV{Y})\nset(X\n"),
            ("partial/CMakeLists.txt", "project(t)\nvariable_watch(X)\n"),
            ("loose/fa.cmake", &loose),
        ];
        files.extend_from_slice(extra);
        tree(&files)
    }

    #[test]
    fn merge_evaluates_each_root_and_names_its_files_from_the_trees_root() {
        let (found, roots, warnings) = scanned(&layout(&[]));
        let why = "no other CMakeLists.txt reaches it";
        assert_eq!(
            roots,
            [
                (".".to_string(), "the top-level CMakeLists.txt".to_string()),
                (
                    "kernels".to_string(),
                    "holds kernels/CMakeLists.txt:10, a declaration the top-level evaluation does not reach".to_string()
                ),
                ("env".to_string(), why.to_string()),
                ("partial".to_string(), why.to_string()),
            ]
        );
        assert_eq!(
            warnings,
            [
                format!(
                    "the CMake project in broken/ ({why}) was not evaluated: CMakeLists.txt:2: unterminated `set(`: missing `)`; it declares no fetch and reads nothing outside its directory"
                ),
                format!(
                    "the CMake project in partial/ ({why}) is not fully evaluated: CMakeLists.txt:2: variable_watch() is not evaluated; no pin found before it stopped; it declares no fetch and reads nothing outside its directory"
                ),
            ]
        );
        assert_eq!(
            found.undecided.as_deref(),
            Some(format!("the CMake project in env/ ({why}) could not be evaluated: CMakeLists.txt:3: unterminated `set(`: missing `)`").as_str())
        );
        // The helper above the kernel project is named by its place in the tree, and its pin,
        // the top-level's too, is kept once; the kernel project's own declaration is no longer
        // unreached.
        let pins: Vec<(&str, Option<&str>, &str, u32)> = found
            .pins
            .iter()
            .map(|p| {
                (
                    p.component.as_str(),
                    p.reference.as_deref(),
                    p.file.as_str(),
                    p.line,
                )
            })
            .collect();
        assert_eq!(
            pins,
            [
                ("flash-attention", Some(FIXED), "cmake/decl.cmake", 2),
                ("cutlass", Some(FIXED), "kernels/CMakeLists.txt", 10),
            ]
        );
        let cutlass = &found.pins[1];
        assert_eq!(cutlass.patches, ["kernels/patches/fix.patch"]);
        let possible: Vec<(&str, u32, Option<&str>)> = cutlass
            .possible
            .iter()
            .map(|p| (p.file.as_str(), p.line, p.reference.as_deref()))
            .collect();
        assert_eq!(
            possible,
            [
                ("kernels/CMakeLists.txt", 10, Some(FIXED)),
                ("kernels/CMakeLists.txt", 10, Some(AFFECTED))
            ]
        );
        // What no root holds stays unreached after every root is evaluated.
        let unreached: Vec<(&str, u32, Option<&str>)> = found
            .unreached
            .iter()
            .map(|u| (u.file.as_str(), u.line, u.reference.as_deref()))
            .collect();
        assert_eq!(unreached, [("loose/fa.cmake", 2, Some(AFFECTED))]);
        assert!(found.unread.is_empty(), "{:?}", found.unread);
    }

    #[test]
    fn a_configured_project_that_cannot_be_evaluated_fails_the_merge() {
        // setup.py configures env/: its error is the tree's.
        let view = layout(&[(
            "setup.py",
            "setup(ext_modules=[CMakeExtension(\"e._C\", sourcedir=\"env\")])\n",
        )]);
        let registry = registry();
        let mut found = crate::pin::from_cmake(&view, &registry).expect("evaluates");
        let err = merge(&view, &registry, &mut found).expect_err("env/ does not evaluate");
        assert_eq!(
            err.to_string(),
            "CMakeLists.txt:3: unterminated `set(`: missing `)`"
        );
        // A tree without a top-level project lists only the others.
        let view = tree(&[("kernels/CMakeLists.txt", &project("kernels", AFFECTED))]);
        let (found, roots, _) = scanned(&view);
        assert_eq!(
            roots,
            [(
                "kernels".to_string(),
                "no other CMakeLists.txt reaches it".to_string()
            )]
        );
        assert_eq!(found.pins.len(), 1);
        assert_eq!(found.pins[0].reference.as_deref(), Some(AFFECTED));
        assert_eq!(found.pins[0].file, "kernels/CMakeLists.txt");
    }

    /// A pin as these tests compare it: component, reference, file, line, every value.
    type PinRow<'a> = (&'a str, Option<&'a str>, &'a str, u32, Vec<&'a str>);
    /// An unreached declaration: component, declared name, reference, file, line.
    type UnreachedRow<'a> = (Option<&'a str>, &'a str, Option<&'a str>, &'a str, u32);

    #[test]
    fn what_a_project_no_build_configures_fetches_is_unreached_never_a_pin() {
        // A helper both projects include, declaring with the includer's values: the
        // top-level's are the tree's pins; the other project's, where the Python build's
        // roots are known, are declarations no configuration reaches, except a value the
        // top-level pins at the same place.
        let decl = format!(
            "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {FIXED})\nFetchContent_MakeAvailable(vllm-flash-attn)\nFetchContent_Declare(cutlass GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git GIT_TAG ${{CUTLASS_TAG}})\nFetchContent_MakeAvailable(cutlass)\n"
        );
        let top = "cmake_minimum_required(VERSION 3.26)\nproject(top LANGUAGES CXX)\nif(TOP_OLD)\n  set(CUTLASS_TAG v3.4.0)\nelse()\n  set(CUTLASS_TAG v3.5.0)\nendif()\ninclude(cmake/decl.cmake)\n";
        let ext = "cmake_minimum_required(VERSION 3.26)\nproject(ext LANGUAGES CXX)\nif(OLD)\n  set(CUTLASS_TAG v3.4.0)\nelse()\n  set(CUTLASS_TAG v3.6.0)\nendif()\ninclude(../cmake/decl.cmake)\n";
        for pyproject in [Some(SKBUILD), None] {
            let mut files = vec![
                ("CMakeLists.txt", top),
                ("cmake/decl.cmake", decl.as_str()),
                ("ext/CMakeLists.txt", ext),
            ];
            if let Some(p) = pyproject {
                files.push(("pyproject.toml", p));
            }
            let (found, roots, _) = scanned(&tree(&files));
            assert_eq!(roots.len(), 2, "{roots:?}");
            assert_eq!(roots[1].0, "ext");
            let pins: Vec<PinRow> = found
                .pins
                .iter()
                .map(|p| {
                    (
                        p.component.as_str(),
                        p.reference.as_deref(),
                        p.file.as_str(),
                        p.line,
                        p.possible
                            .iter()
                            .filter_map(|q| q.reference.as_deref())
                            .collect(),
                    )
                })
                .collect();
            let unreached: Vec<UnreachedRow> = found
                .unreached
                .iter()
                .map(|u| {
                    (
                        u.component.as_deref(),
                        u.declared_name.as_str(),
                        u.reference.as_deref(),
                        u.file.as_str(),
                        u.line,
                    )
                })
                .collect();
            let fa = (
                "flash-attention",
                Some(FIXED),
                "cmake/decl.cmake",
                2,
                vec![],
            );
            let top_cutlass = (
                "cutlass",
                Some("v3.5.0"),
                "cmake/decl.cmake",
                4,
                vec!["v3.5.0", "v3.4.0"],
            );
            if pyproject.is_some() {
                assert_eq!(pins, [fa, top_cutlass], "{pins:?}");
                // v3.4.0 is the top-level's at the same place: kept once, as its pin.
                assert_eq!(
                    unreached,
                    [(
                        Some("cutlass"),
                        "cutlass",
                        Some("v3.6.0"),
                        "cmake/decl.cmake",
                        4
                    )]
                );
            } else {
                // Nothing says what the build configures: the other project's pins are the
                // tree's, each once.
                assert_eq!(
                    pins,
                    [
                        fa,
                        top_cutlass,
                        (
                            "cutlass",
                            Some("v3.6.0"),
                            "cmake/decl.cmake",
                            4,
                            vec!["v3.6.0", "v3.4.0"]
                        )
                    ],
                    "{pins:?}"
                );
                assert_eq!(unreached, []);
            }
        }
    }

    #[test]
    fn a_pin_not_named_by_the_registry_is_unreached_without_a_component() {
        let view = tree(&[(
            "CMakeLists.txt",
            "project(t)\ninclude(FetchContent)\nFetchContent_Declare(else GIT_REPOSITORY https://example.invalid/else.git GIT_TAG v1)\nFetchContent_MakeAvailable(else)\n",
        )]);
        let found = crate::pin::from_cmake(&view, &registry()).expect("evaluates");
        let pin = found.pins.first().expect("a pin");
        assert_eq!(
            unreached_of(pin, &registry()),
            [crate::pin::Unreached {
                component: None,
                declared_name: "else".into(),
                repo: Some("https://example.invalid/else.git".into()),
                reference: Some("v1".into()),
                file: "CMakeLists.txt".into(),
                line: 3,
            }]
        );
    }
}
