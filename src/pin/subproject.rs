//! Kernel CMake projects below the root: a repository whose kernel build lives in a
//! subdirectory (SGLang's `sgl-kernel/`, a vendored project) declares its pins where the
//! top-level `CMakeLists.txt` never reaches. Each such directory with a `CMakeLists.txt` that
//! calls `project()` is evaluated as the root CMake would be given (`cmake -S DIR`), and its
//! pins join the tree's, with paths from the tree's root.

use super::{CmakePins, cmake, components::Registry, from_evaluation};
use crate::model::TargetKind;
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
        self.inner.read(&self.outer(path))
    }
}

/// The directories below the root whose `CMakeLists.txt` starts a project and holds (in it
/// or below it) declarations the root's evaluation never reached: the shallowest of each; and
/// the directory the Python build configures (`pyproject.toml`'s `[tool.scikit-build]`
/// `cmake.source-dir`), whatever it declares literally.
pub fn roots(view: &dyn View, found: &CmakePins) -> Result<Vec<String>, TargetError> {
    let mut out: Vec<String> = Vec::new();
    if let Some(dir) = python_build_root(view)?
        && view.read(&format!("{dir}/CMakeLists.txt"))?.is_some()
    {
        out.push(dir);
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
                .iter()
                .any(|o| dir == *o || dir.starts_with(&format!("{o}/")))
            {
                break;
            }
            let Some(bytes) = view.read(&format!("{dir}/CMakeLists.txt"))? else {
                continue;
            };
            if String::from_utf8_lossy(&bytes)
                .to_ascii_lowercase()
                .contains("project(")
            {
                out.push(dir.clone());
                break;
            }
        }
    }
    Ok(out)
}

/// Evaluate each subproject root of `found` and merge its pins into `found`: its declarations
/// stop being unreached, its own unreached ones and unread files stay, with tree paths.
pub fn merge(
    view: &dyn View,
    registry: &Registry,
    found: &mut CmakePins,
) -> Result<(), cmake::CmakeError> {
    for dir in roots(view, found)? {
        let sub = SubView::new(view, &dir);
        let evaluation = cmake::evaluate(&sub)?;
        let mut pins = from_evaluation(&evaluation, &sub, registry)?;
        let at = |f: &str| format!("{dir}/{f}");
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
        found.unreached.extend(pins.unreached);
        found.pins.extend(pins.pins);
        found.unread.extend(
            pins.unread
                .iter()
                .map(|f| format!("{f} (from the project in {dir}/)")),
        );
        if found.undecided.is_none()
            && let Some(why) = pins.undecided
        {
            found.undecided = Some(format!("the project in {dir}/: {why}"));
        }
    }
    Ok(())
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
