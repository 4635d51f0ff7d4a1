//! CMake code read from outside the scanned tree: a file the configuration wrote into the build
//! directory (`file(WRITE|APPEND|COPY|CONFIGURE)`, `configure_file`, `execute_process(COMMAND
//! cmake -E copy ...)`), or a file above or beside the tree (a monorepo's parent). pinprobe
//! cannot see what such a file declares, so the evaluation is undecided, naming the file; it is
//! never dropped.

use super::paths::{BINARY_ROOT, SOURCE_ROOT};

/// `include()` of a path in the build directory (which starts empty: whatever is there, the
/// configuration wrote).
pub(super) fn build_dir_include(target: &str) -> Option<String> {
    let below = target.strip_prefix(BINARY_ROOT)?;
    (below.is_empty() || below.starts_with('/')).then(|| {
        format!(
            "include({target}) reads a file the configuration wrote into the build directory \
             (${{CMAKE_BINARY_DIR}}{below}); what it declares is not known"
        )
    })
}

/// An absolute path under the source root that climbs above it (`${CMAKE_SOURCE_DIR}/../x`),
/// as a normalised path relative to the root starting with `../`; `None` for any other path
/// (inside the root, the build directory, a system path).
pub(super) fn above_root(full: &str) -> Option<String> {
    let rest = full.strip_prefix(SOURCE_ROOT)?;
    if !rest.is_empty() && !rest.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    (parts.first() == Some(&"..")).then(|| parts.join("/"))
}

/// `include()` of a path outside the scanned tree.
pub(super) fn outside_include(target: &str, full: &str) -> String {
    if let Some(why) = build_dir_include(full) {
        return why;
    }
    format!(
        "include({target}) reads {full}, outside the scanned tree; what it declares is not known \
         (scan the tree that holds it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_above_the_source_root_and_nothing_else() {
        let at = |p: &str| above_root(&format!("{SOURCE_ROOT}{p}"));
        assert_eq!(at("/../cmake/x.cmake").as_deref(), Some("../cmake/x.cmake"));
        assert_eq!(at("/a/../../b/./x.cmake").as_deref(), Some("../b/x.cmake"));
        assert_eq!(at("/../../x").as_deref(), Some("../../x"));
        assert_eq!(at("/a/../x"), None);
        assert_eq!(at("/x"), None);
        assert_eq!(above_root(&format!("{SOURCE_ROOT}x/../../y")), None);
        assert_eq!(above_root("/usr/share/x.cmake"), None);
        assert_eq!(above_root(&format!("{BINARY_ROOT}/../x")), None);
    }

    #[test]
    fn the_build_directory_and_nothing_else() {
        assert!(build_dir_include(&format!("{BINARY_ROOT}/gen.cmake")).is_some());
        assert!(build_dir_include(&format!("{BINARY_ROOT}x/gen.cmake")).is_none());
        assert!(outside_include("../x.cmake", "/x.cmake").contains("outside the scanned tree"));
    }
}
