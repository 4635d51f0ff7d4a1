//! The files CMake reads at `project()`, whatever their names: `CMAKE_PROJECT_INCLUDE_BEFORE`,
//! `CMAKE_PROJECT_<name>_INCLUDE_BEFORE`, then (the project's variables set)
//! `CMAKE_PROJECT_TOP_LEVEL_INCLUDES` at the first `project()` only, then
//! `CMAKE_PROJECT_INCLUDE` and `CMAKE_PROJECT_<name>_INCLUDE` (checked against CMake 4.4).
//!
//! Each variable holds a list. An absolute path is read as is; a relative one ending in
//! `.cmake` from the current source directory; any other relative one is a module, looked up
//! on `CMAKE_MODULE_PATH` (CMake: "could not find requested module" otherwise). A missing file
//! is an error that ends the `project()` call there.

use super::value::{Arg, Val, list_items};

/// The steps of one `project()` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Include the files the named variable lists.
    Include,
    /// The command itself: `PROJECT_NAME` and the rest set.
    Project,
}

/// The variables read, in order, around the command itself (`first`: no `project()` ran yet).
pub(super) fn steps(name: &str, first: bool) -> Vec<(Step, String)> {
    let mut out = vec![
        (Step::Include, "CMAKE_PROJECT_INCLUDE_BEFORE".to_string()),
        (
            Step::Include,
            format!("CMAKE_PROJECT_{name}_INCLUDE_BEFORE"),
        ),
        (Step::Project, String::new()),
    ];
    if first {
        out.push((Step::Include, "CMAKE_PROJECT_TOP_LEVEL_INCLUDES".into()));
    }
    out.push((Step::Include, "CMAKE_PROJECT_INCLUDE".into()));
    out.push((Step::Include, format!("CMAKE_PROJECT_{name}_INCLUDE")));
    out
}

/// The `include()` arguments that read what `value` (the variable `var`) lists; `Err` names
/// what pinprobe cannot follow (a value from an input, a module path with a directory in it).
pub(super) fn files(var: &str, value: &Val) -> Result<Vec<Arg>, String> {
    if !value.taint.is_empty() {
        return Err(format!(
            "project() reads the files `{var}` names, and its value `{}` depends on an input",
            value.text
        ));
    }
    let mut out = Vec::new();
    for item in list_items(&value.text) {
        if item.is_empty() {
            continue;
        }
        let absolute = item.starts_with('/');
        if !absolute && !item.ends_with(".cmake") && item.contains('/') {
            return Err(format!(
                "project() reads `{item}` from `{var}` as a module with a directory in its name"
            ));
        }
        out.push(Arg {
            text: item,
            taint: Default::default(),
            quoted: true,
            line: 0,
            alts: crate::pin::cmake::value::Alts::new(),
        });
    }
    Ok(out)
}
