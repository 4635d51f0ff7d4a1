//! CMake projects below the repository root: the ones the Python build configures
//! (`setup.py` extensions and `cmake` runs, scikit-build-core's `cmake.source-dir`) and every
//! `CMakeLists.txt` no other one reaches are evaluated from the root, and the report says
//! which; a project that can pin nothing (a test project, a vendored library) does not make a
//! tree undecided when it cannot be evaluated.

use crate::common::*;
use std::path::Path;

const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
const R1: &str = "PINPROBE-2026-0001";

fn kernels_lists(tag: &str) -> String {
    format!(
        "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude(FetchContent)\nFetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY {FA_REPO}\n  GIT_TAG {tag})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
    )
}

fn scan(dir: &Path) -> (Run, serde_json::Value) {
    let run = run_in(dir, &["scan", ".", "--offline", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run, json)
}

fn roots(json: &serde_json::Value) -> Vec<(String, String)> {
    json["targets"][0]["cmake_roots"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["dir"].as_str().unwrap_or_default().to_string(),
                        r["why"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn affected_at(json: &serde_json::Value, file: &str) -> bool {
    json["targets"][0]["findings"].as_array().is_some_and(|f| {
        f.iter().any(|f| {
            f["rule"] == R1
                && f["status"] == "affected"
                && f["location"]["file"].as_str() == Some(file)
        })
    })
}

/// An affected pin in `kernels/CMakeLists.txt`, configured by `setup.py`'s CMake extension,
/// and the same project configured by nothing: found from the root either way, and the
/// report names the project and why it was evaluated.
#[test]
fn a_kernel_project_in_a_subdirectory_is_found_from_the_root() {
    for setup in [
        Some(
            "from setuptools import setup\nfrom cmake_build import CMakeExtension, CMakeBuild\n\nsetup(\n    name=\"k\",\n    ext_modules=[CMakeExtension(\"k._C\", sourcedir=\"kernels\")],\n    cmdclass={\"build_ext\": CMakeBuild},\n)\n",
        ),
        Some(
            "import subprocess\nsubprocess.check_call([\"cmake\", \"-S\", \"kernels\", \"-B\", \"build\"])\n",
        ),
        None,
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(
            tmp.path(),
            "kernels/CMakeLists.txt",
            &kernels_lists(AFFECTED),
        );
        write(
            tmp.path(),
            "README.md",
            "a Python package with a kernel subproject\n",
        );
        if let Some(text) = setup {
            write(tmp.path(), "setup.py", text);
        }
        let (run, json) = scan(tmp.path());
        assert_eq!(run.code, 1, "{setup:?}: {}{}", run.stdout, run.stderr);
        assert!(affected_at(&json, "kernels/CMakeLists.txt"), "{json:#}");
        let found = roots(&json);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "kernels");
        match setup {
            Some(t) if t.contains("CMakeExtension(") => {
                assert_eq!(found[0].1, "setup.py:6: CMakeExtension(\"kernels\")")
            }
            Some(_) => assert_eq!(found[0].1, "setup.py:2: cmake -S kernels -B build"),
            None => assert!(found[0].1.contains("kernels/CMakeLists.txt:"), "{found:?}"),
        }
    }
}

/// The top-level project and a kernel project share a helper that declares the fetch: the
/// top-level calls it with one commit, the kernel project (which nothing reaches) with the
/// affected one. The declaration is reached, so only evaluating the kernel project as a root
/// of its own finds the affected pin. With the helper in the kernel project it is found; with
/// the helper above it (`../cmake/pin.cmake`, resolved against the kernel project's directory
/// as CMake does) it is found too, the file named by its place in the tree. A helper above the
/// scanned tree itself is not read: the scan is undecided naming it, never clean.
#[test]
fn a_shared_helper_called_by_an_unreached_project_is_evaluated_there() {
    for helper in ["kernels/cmake/pin.cmake", "cmake/pin.cmake"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(
            root,
            helper,
            &format!(
                "include(FetchContent)\nfunction(pin_fa TAG)\n  FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA_REPO} GIT_TAG ${{TAG}})\n  FetchContent_MakeAvailable(vllm-flash-attn)\nendfunction()\n"
            ),
        );
        write(
            root,
            "CMakeLists.txt",
            &format!(
                "cmake_minimum_required(VERSION 3.26)\nproject(top LANGUAGES CXX)\ninclude({helper})\npin_fa(6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46)\n"
            ),
        );
        let from_kernels = if helper.starts_with("kernels/") {
            "cmake/pin.cmake"
        } else {
            "../cmake/pin.cmake"
        };
        write(
            root,
            "kernels/CMakeLists.txt",
            &format!(
                "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude(${{CMAKE_CURRENT_SOURCE_DIR}}/{from_kernels})\npin_fa({AFFECTED})\n"
            ),
        );
        let (run, json) = scan(root);
        let dirs: Vec<String> = roots(&json).into_iter().map(|(d, _)| d).collect();
        assert_eq!(dirs, [".", "kernels"]);
        let t = &json["targets"][0];
        assert_eq!(run.code, 1, "{helper}: {}{}", run.stdout, run.stderr);
        // The helper's declaration, with the kernel project's value, located where its text
        // is (the helper), as for any function body.
        let components = t["components"].as_array().expect("components");
        assert!(
            components
                .iter()
                .any(|c| c["commit"] == AFFECTED && c["file"] == helper),
            "{components:#?}"
        );
        assert!(affected_at(&json, helper), "{json:#}");
        assert!(t["undecided"].is_null(), "{t:#}");
    }
    // The kernel project's helper above the scanned tree (`kernels/` scanned alone): not read,
    // undecided with the file named.
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "kernels/CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude(../cmake/pin.cmake)\npin_fa({AFFECTED})\n"
        ),
    );
    let run = run_in(
        &tmp.path().join("kernels"),
        &["scan", ".", "--offline", "--format", "json"],
    );
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("include(../cmake/pin.cmake) reads")
            && run.stdout.contains("outside the scanned tree"),
        "{}",
        run.stdout
    );
    // A subdirectory the top-level adds is part of it, not a root of its own.
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "kernels/CMakeLists.txt",
        &kernels_lists(AFFECTED),
    );
    write(
        tmp.path(),
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(top LANGUAGES CXX)\nadd_subdirectory(kernels)\n",
    );
    let (_, json) = scan(tmp.path());
    assert_eq!(
        roots(&json),
        [(".".to_string(), "the top-level CMakeLists.txt".to_string())]
    );
    assert!(affected_at(&json, "kernels/CMakeLists.txt"), "{json:#}");
}

/// A test project and a vendored library that nothing reaches, declare no fetch and read
/// nothing outside their directories: one pinprobe cannot evaluate fully (a command it does
/// not evaluate) is a
/// warning, not an undecided tree; one it can is evaluated and listed. The findings are those
/// of the tree without them.
#[test]
fn projects_that_can_pin_nothing_do_not_make_a_tree_undecided() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    vllm_tree(root, FA_REPO, AFFECTED);
    let (before, before_json) = scan(root);
    write(
        root,
        "tests/cmake/CMakeLists.txt",
        "project(t)\nvariable_watch(X)\n",
    );
    write(
        root,
        "third_party/lib/CMakeLists.txt",
        "project(lib)\nadd_library(lib STATIC lib.cc)\n",
    );
    let (after, json) = scan(root);
    assert_eq!(after.code, before.code, "{}{}", after.stdout, after.stderr);
    assert_eq!(
        json["targets"][0]["findings"], before_json["targets"][0]["findings"],
        "the same findings"
    );
    assert!(json["targets"][0]["undecided"].is_null(), "{json:#}");
    let warnings = json["targets"][0]["warnings"].to_string();
    assert!(
        warnings.contains("the CMake project in tests/cmake/ (no other CMakeLists.txt reaches it) is not fully evaluated"),
        "{warnings}"
    );
    let dirs: Vec<String> = roots(&json).into_iter().map(|(d, _)| d).collect();
    // Both evaluated (the test project as far as it goes) and listed.
    assert_eq!(dirs, [".", "tests/cmake", "third_party/lib"]);
    // The same broken project, once it declares a fetch, leaves the tree undecided.
    write(
        root,
        "tests/cmake/CMakeLists.txt",
        "project(t)\nvariable_watch(X)\ninclude(FetchContent)\nFetchContent_Declare(x GIT_REPOSITORY https://example.invalid/x.git GIT_TAG v1)\nFetchContent_MakeAvailable(x)\n",
    );
    let (run, json) = scan(root);
    assert_ne!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let undecided = json["targets"][0]["undecided"].as_str().unwrap_or_default();
    assert!(
        undecided.contains(
            "the project in tests/cmake/: CMakeLists.txt:2: variable_watch() is not evaluated"
        ),
        "{json:#}"
    );
}

/// A file the configuration writes into the build directory and then includes: the scan is
/// undecided and says why (the recorded differential cases of tests/cmake gate it too).
#[test]
fn a_file_written_into_the_build_directory_and_included_is_undecided_with_the_reason() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.26)\nproject(t LANGUAGES NONE)\nfile(WRITE ${{CMAKE_BINARY_DIR}}/gen.cmake \"include(FetchContent)\\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA_REPO} GIT_TAG {AFFECTED})\\nFetchContent_MakeAvailable(vllm-flash-attn)\\n\")\ninclude(${{CMAKE_BINARY_DIR}}/gen.cmake)\n"
        ),
    );
    let (run, json) = scan(tmp.path());
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let t = &json["targets"][0];
    let said = format!("{} {}", t["undecided"], t["warnings"]);
    assert!(said.contains("gen.cmake"), "{t:#}");
}

/// The table and `-v` name the projects evaluated when there is more than the top-level one.
#[test]
fn the_table_and_verbose_output_name_the_projects_evaluated() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "kernels/CMakeLists.txt",
        &kernels_lists(AFFECTED),
    );
    write(
        tmp.path(),
        "setup.py",
        "setup(ext_modules=[CMakeExtension(\"k._C\", sourcedir=\"kernels\")])\n",
    );
    let run = run_in(tmp.path(), &["scan", ".", "--offline", "-v"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "CMake projects evaluated: kernels (setup.py:1: CMakeExtension(\"kernels\"))"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "evaluated the CMake project in kernels (setup.py:1: CMakeExtension(\"kernels\"))"
        ),
        "{}",
        run.stderr
    );
}

const SKBUILD: &str = "[build-system]\nrequires = [\"scikit-build-core\"]\nbuild-backend = \"scikit_build_core.build\"\n\n[project]\nname = \"k\"\nversion = \"1.0\"\n";

/// The kernel project of the shared-helper tree above (its helper above it), nothing reaching
/// it, now in a package
/// whose Python build is scikit-build-core's: the build configures the root only, so the
/// kernel project's fetches are not the tree's pins, yet its affected value is never dropped:
/// it is a declaration no configuration reaches, unknown for the rule, naming the file, and
/// the scan is undecided (never 0). Where the roots are not known in full (an override of the
/// source directory, another backend) the project is one the build may configure: its pin is
/// the tree's, affected. Where `cmake.source-dir` names it, it is configured: affected.
#[test]
fn a_project_the_python_build_does_not_configure_is_unreached_never_clean() {
    let cases: [(&str, &str, i32); 4] = [
        (SKBUILD, "does not configure it", 3),
        (
            &format!("{SKBUILD}\n[[tool.scikit-build.overrides]]\nif.platform-system = \"win32\"\ncmake.source-dir = \"kernels\"\n"),
            "no other CMakeLists.txt reaches it",
            1,
        ),
        (
            "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
            "no other CMakeLists.txt reaches it",
            1,
        ),
        (
            &format!("{SKBUILD}\n[tool.scikit-build]\ncmake.source-dir = \"kernels\"\n"),
            "cmake.source-dir",
            1,
        ),
    ]
    .map(|(p, w, c)| (Box::leak(p.to_string().into_boxed_str()) as &str, w, c));
    for (pyproject, why, code) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "pyproject.toml", pyproject);
        write(
            root,
            "cmake/pin.cmake",
            &format!(
                "include(FetchContent)\nfunction(pin_fa TAG)\n  FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA_REPO} GIT_TAG ${{TAG}})\n  FetchContent_MakeAvailable(vllm-flash-attn)\nendfunction()\n"
            ),
        );
        write(
            root,
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.26)\nproject(top LANGUAGES CXX)\ninclude(cmake/pin.cmake)\npin_fa(6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46)\n",
        );
        write(
            root,
            "kernels/CMakeLists.txt",
            &format!(
                "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude(../cmake/pin.cmake)\npin_fa({AFFECTED})\n"
            ),
        );
        let (run, json) = scan(root);
        assert_eq!(run.code, code, "{pyproject}: {}{}", run.stdout, run.stderr);
        let kernels = roots(&json)
            .into_iter()
            .find(|(d, _)| d == "kernels")
            .unwrap_or_else(|| panic!("{json:#}"));
        assert!(kernels.1.contains(why), "{pyproject}: {kernels:?}");
        let t = &json["targets"][0];
        let pinned = t["components"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["commit"] == AFFECTED));
        assert_eq!(pinned, code == 1, "{pyproject}: {t:#}");
        if code == 3 {
            assert!(!affected_at(&json, "cmake/pin.cmake"), "{t:#}");
            let unknown = t["findings"].as_array().is_some_and(|f| {
                f.iter().any(|f| {
                    f["rule"] == R1
                        && f["status"] == "unknown"
                        && f["location"]["file"] == "cmake/pin.cmake"
                })
            });
            assert!(unknown, "{t:#}");
        } else {
            assert!(affected_at(&json, "cmake/pin.cmake"), "{t:#}");
        }
    }
}
