//! Pin forms beyond CMake's `GIT_TAG`, gathered for one source view in one place: kernel
//! CMake projects below the root (a vendored subproject), git submodules (gitlinks), and
//! Python requirements and lock files (a `vllm` version through the release ledger). Archive
//! `URL`s are read with CMake's pins (`pin::archive`). Every pin found here is judged as a
//! CMake pin is.

use super::ScanError;
use crate::model::TargetKind;
use crate::model::TargetReport;
use crate::pin::{self, CmakePins};
use crate::rules::Database;
use crate::rules::evaluate::OtherPin;
use crate::view::{TargetError, View};

/// Add the view's other pins to `found` (and what could not be read to the report's
/// warnings). `own` holds the target's own revision, whose repository holds the gitlinks;
/// `shared`, in a review, what the other revision found where it read the same.
pub(super) fn add(
    view: &dyn View,
    db: &Database,
    own: &[OtherPin],
    found: &mut CmakePins,
    report: &mut TargetReport,
    shared: Option<&super::shared::Evaluations>,
) -> Result<(), ScanError> {
    let (roots, warnings) = match shared {
        Some(s) => pin::subproject::merge_with(view, &db.registry, found, &|v, f| s.roots(v, f))?,
        None => pin::subproject::merge(view, &db.registry, found)?,
    };
    for root in &roots {
        crate::model::verbose::say(format_args!(
            "{}: evaluated the CMake project in {} ({})",
            view.describe(),
            root.dir,
            root.why
        ));
    }
    report.cmake_roots = roots;
    report.warnings.extend(warnings);
    submodules(view, db, own, found, report)?;
    let python = match shared {
        Some(s) => s.python(view)?,
        None => pin::python::find(view)?,
    };
    report.warnings.extend(
        python
            .problems
            .iter()
            .map(|p| format!("Python requirements: {p}")),
    );
    found
        .pins
        .extend(super::python::pins(&python.requirements, db));
    Ok(())
}

/// How deep submodules of submodules are read (a cycle of repositories ends here too).
const NESTING: usize = 8;

/// The kernel submodules of `.gitmodules`, at the commits their gitlinks record: in the work
/// tree's index when the view is the work tree, else in the revision scanned (`--rev`, a bare
/// repository); and, nested, the submodules of each submodule whose repository is here
/// (initialised in the work tree, or under the superproject's `modules/`).
fn submodules(
    view: &dyn View,
    db: &Database,
    own: &[OtherPin],
    found: &mut CmakePins,
    report: &mut TargetReport,
) -> Result<(), ScanError> {
    let text = match view.read(".gitmodules") {
        Err(TargetError::Unreadable { .. }) | Ok(None) => return Ok(()),
        Err(e) => return Err(e.into()),
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
    };
    let Some((clone, commit)) = own.iter().find_map(|o| o.clone.map(|c| (c, o.commit))) else {
        let why = format!(
            "{} is not a git repository: no gitlink to read",
            view.describe()
        );
        let mut gitlink = |_: &str| -> Result<Option<String>, String> { Err(why.clone()) };
        found
            .pins
            .extend(pin::submodule::pins(&text, &db.registry, &mut gitlink));
        return Ok(());
    };
    let work_tree = view.kind() == TargetKind::SourceTree && clone.has_work_tree();
    let at = if work_tree {
        Level::Index
    } else {
        match commit {
            Some(c) => Level::Commit(c),
            None => {
                let mut gitlink = |_: &str| -> Result<Option<String>, String> {
                    Err("the revision scanned has no commit".into())
                };
                found
                    .pins
                    .extend(pin::submodule::pins(&text, &db.registry, &mut gitlink));
                return Ok(());
            }
        }
    };
    let mut not_here = Vec::new();
    level(
        view,
        db,
        clone,
        at,
        &text,
        "",
        0,
        found,
        &mut not_here,
        report,
    );
    if !not_here.is_empty() {
        let shown: Vec<&str> = not_here.iter().take(5).map(String::as_str).collect();
        report.warnings.push(format!(
            "the submodules of {} submodule(s) were not read, their repositories are not here (not initialised, or a bare clone): {}{}",
            not_here.len(),
            shown.join(", "),
            if not_here.len() > shown.len() { ", ..." } else { "" }
        ));
    }
    Ok(())
}

/// Where a level's gitlinks are read: the work tree's index, or a commit's tree.
#[derive(Clone, Copy)]
enum Level {
    Index,
    Commit(gix::ObjectId),
}

/// The kernel pins of one repository's `.gitmodules` (`text`, at `prefix` in the tree), then
/// those of each submodule's own `.gitmodules`, depth first.
#[allow(clippy::too_many_arguments)]
fn level(
    view: &dyn View,
    db: &Database,
    clone: &crate::resolve::Repo,
    at: Level,
    text: &str,
    prefix: &str,
    depth: usize,
    found: &mut CmakePins,
    not_here: &mut Vec<String>,
    report: &mut TargetReport,
) {
    let commit = match at {
        Level::Index => None,
        Level::Commit(c) => Some(c),
    };
    let mut gitlink = |path: &str| -> Result<Option<String>, String> {
        clone
            .gitlink(commit.as_ref(), path)
            .map(|c| c.map(|c| c.to_string()))
            .map_err(|e| e.to_string())
    };
    let file = format!("{prefix}.gitmodules");
    for mut pin in pin::submodule::pins(text, &db.registry, &mut gitlink) {
        pin.file = file.clone();
        for p in &mut pin.possible {
            p.file = file.clone();
        }
        found.pins.push(pin);
    }
    for sub in pin::submodule::parse_gitmodules(text) {
        let path = sub.path.clone().unwrap_or_else(|| sub.name.clone());
        let shown = format!("{prefix}{path}");
        let Ok(Some(recorded)) = clone.gitlink(commit.as_ref(), &path) else {
            continue;
        };
        let Some(repo) = clone.submodule(&sub.name, &path) else {
            not_here.push(shown);
            continue;
        };
        if depth + 1 >= NESTING {
            report.warnings.push(format!(
                "submodule {shown}: submodules nested deeper than {NESTING} levels are not read"
            ));
            continue;
        }
        // The work tree builds what is checked out (its own `.gitmodules` and index); a
        // revision builds the commit its gitlink records.
        let (inner, inner_at) = match at {
            Level::Index => {
                let read = match view.read(&format!("{shown}/.gitmodules")) {
                    Ok(Some(bytes)) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                    _ => None,
                };
                (read, Level::Index)
            }
            Level::Commit(_) => match repo.file_at(&recorded, ".gitmodules") {
                Ok(bytes) => (
                    bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
                    Level::Commit(recorded),
                ),
                Err(e) => {
                    report.warnings.push(format!(
                        "submodule {shown}: its recorded commit {recorded} cannot be read in {} ({e}): its own submodules were not read",
                        repo.path().display()
                    ));
                    continue;
                }
            },
        };
        let Some(inner) = inner else { continue };
        level(
            view,
            db,
            &repo,
            inner_at,
            &inner,
            &format!("{shown}/"),
            depth + 1,
            found,
            not_here,
            report,
        );
    }
}
