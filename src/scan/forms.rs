//! Pin forms beyond CMake's `GIT_TAG`, gathered for one source view in one place: kernel
//! CMake projects below the root (a vendored subproject), git submodules (gitlinks), and
//! Python requirements and lock files (a `vllm` version through the release ledger). Archive
//! `URL`s are read with CMake's pins (`pin::archive`). Every pin found here is judged as a
//! CMake pin is.

use super::ScanError;
use crate::model::TargetReport;
use crate::pin::{self, CmakePins};
use crate::rules::Database;
use crate::rules::evaluate::OtherPin;
use crate::view::{TargetError, View};

/// Add the view's other pins to `found` (and what could not be read to the report's
/// warnings). `own` holds the target's own revision, whose repository holds the gitlinks.
pub(super) fn add(
    view: &dyn View,
    db: &Database,
    own: &[OtherPin],
    found: &mut CmakePins,
    report: &mut TargetReport,
) -> Result<(), ScanError> {
    pin::subproject::merge(view, &db.registry, found)?;
    submodules(view, db, own, found)?;
    let python = pin::python::find(view)?;
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

/// The kernel submodules of `.gitmodules`, at the commits their gitlinks record: in the work
/// tree's index when the view is the work tree, else in the revision scanned (`--rev`, a bare
/// repository).
fn submodules(
    view: &dyn View,
    db: &Database,
    own: &[OtherPin],
    found: &mut CmakePins,
) -> Result<(), ScanError> {
    let text = match view.read(".gitmodules") {
        Err(TargetError::Unreadable { .. }) | Ok(None) => return Ok(()),
        Err(e) => return Err(e.into()),
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
    };
    let repo = own.iter().find_map(|o| o.clone.map(|c| (c, o.commit)));
    let work_tree = view.kind() == "source-tree";
    let mut gitlink = |path: &str| -> Result<Option<String>, String> {
        let Some((clone, commit)) = repo else {
            return Err(format!(
                "{} is not a git repository: no gitlink to read",
                view.describe()
            ));
        };
        let at = if work_tree && clone.has_work_tree() {
            None
        } else {
            match commit {
                Some(c) => Some(c),
                None => return Err("the revision scanned has no commit".into()),
            }
        };
        clone
            .gitlink(at.as_ref(), path)
            .map(|c| c.map(|c| c.to_string()))
            .map_err(|e| e.to_string())
    };
    found
        .pins
        .extend(pin::submodule::pins(&text, &db.registry, &mut gitlink));
    Ok(())
}
