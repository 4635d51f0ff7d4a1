//! A CMake project below the scanned root that reads a file above its own directory, as real
//! CMake resolves it: `include(../cmake/deps.cmake)` (relative to the current source
//! directory) or `include(deps)` through a `CMAKE_MODULE_PATH` entry above it. Inside the
//! scanned tree the file is read and its affected pin found; above the scanned tree it is not
//! read and the scan is undecided naming it, never clean (issue 31's "include() of a file
//! outside the scanned tree").

use crate::cmake_differential::{cmake_available, run_cmake};
use crate::common;

use common::*;
use std::path::Path;

const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

/// `root/cmake/deps.cmake` pins the affected commit; `root/proj/CMakeLists.txt` declares a
/// benign pin of its own, then reaches the helper by `how`.
fn monorepo(root: &Path, how: &str) {
    write(
        root,
        "cmake/deps.cmake",
        &format!(
            "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {AFFECTED})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
        ),
    );
    write(
        root,
        "proj/CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(proj NONE)\ninclude(FetchContent)\nFetchContent_Declare(other GIT_REPOSITORY https://example.invalid/other.git GIT_TAG v1)\nFetchContent_MakeAvailable(other)\n{how}\n"
        ),
    );
}

const HOWS: &[&str] = &[
    "include(../cmake/deps.cmake)",
    "include(${CMAKE_CURRENT_SOURCE_DIR}/../cmake/deps.cmake)",
    "list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/../cmake)\ninclude(deps)",
    "list(APPEND CMAKE_MODULE_PATH ${CMAKE_SOURCE_DIR}/../cmake)\ninclude(deps)",
];

#[test]
fn a_file_above_a_project_is_read_inside_the_tree_and_undecided_outside() {
    let cmake = cmake_available();
    for how in HOWS {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        monorepo(root, how);
        // Real CMake, configuring the project: the helper's pin is fetched.
        if cmake {
            let outcome = run_cmake(&root.join("proj"), &[], &[]);
            assert!(!outcome.failed, "{how}: {}", outcome.log);
            assert!(
                outcome.records.iter().any(|r| r.tag == AFFECTED),
                "{how}: {:?}",
                outcome.records
            );
        }
        // The whole tree scanned: the project is a root of its own, the helper read there.
        let run = scan_offline_json(root);
        assert_eq!(run.code, 1, "{how}: {}{}", run.stdout, run.stderr);
        let t = &run.json()["targets"][0];
        assert!(t["undecided"].is_null(), "{how}: {t:#}");
        assert!(
            t["components"].as_array().is_some_and(|c| c
                .iter()
                .any(|c| c["commit"] == AFFECTED && c["file"] == "cmake/deps.cmake")),
            "{how}: {t:#}"
        );
        // The project scanned alone: the helper is above the scanned tree, not read.
        let run = scan_offline_json(&root.join("proj"));
        assert_eq!(run.code, 3, "{how}: {}{}", run.stdout, run.stderr);
        let undecided = run.json()["targets"][0]["undecided"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            undecided.contains("deps") && undecided.contains("outside the scanned tree"),
            "{how}: {undecided}"
        );
    }
}
