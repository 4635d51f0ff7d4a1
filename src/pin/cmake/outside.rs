//! CMake code read from outside the scanned tree: a file the configuration wrote into the build
//! directory (`file(WRITE|APPEND|COPY|CONFIGURE)`, `configure_file`, `execute_process(COMMAND
//! cmake -E copy ...)`), or a file above or beside the tree (a monorepo's parent). pinprobe
//! cannot see what such a file declares, so the evaluation is undecided, naming the file; it is
//! never dropped.

use super::paths::BINARY_ROOT;

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
    fn the_build_directory_and_nothing_else() {
        assert!(build_dir_include(&format!("{BINARY_ROOT}/gen.cmake")).is_some());
        assert!(build_dir_include(&format!("{BINARY_ROOT}x/gen.cmake")).is_none());
        assert!(outside_include("../x.cmake", "/x.cmake").contains("outside the scanned tree"));
    }
}
