//! `execute_process` of git that only reads the repository (a build-information step:
//! llama.cpp's `rev-parse --short HEAD`, sherpa-onnx's `describe` and `log`) leaves the tree's
//! files the tree's: a later `include()` is read, and its affected pin found. Judged on a real
//! git repository: git run by hand writes nothing in the work tree or the index, and real CMake
//! (with the recording stand-ins) fetches the pin pinprobe reports. A form that may write (an
//! index refresh, a diff driver, an `OUTPUT_FILE` into the tree) keeps the include undecided.

use crate::cmake_differential::{cmake_available, run_cmake};
use crate::common;

use common::*;
use std::path::Path;

const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

/// A committed repository whose top-level file runs `git FORM` in its source directory, then
/// includes `cmake/deps.cmake`, which pins the affected FlashAttention commit.
fn repo(dir: &Path, form: &str, extra: &str) {
    init(dir);
    write(
        dir,
        "CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(Git QUIET)\nif(Git_FOUND)\n  execute_process(COMMAND ${{GIT_EXECUTABLE}} {form}\n    WORKING_DIRECTORY ${{CMAKE_CURRENT_SOURCE_DIR}} OUTPUT_VARIABLE out ERROR_QUIET {extra})\nendif()\ninclude(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/deps.cmake)\n"
        ),
    );
    write(
        dir,
        "cmake/deps.cmake",
        &format!(
            "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {AFFECTED})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
        ),
    );
    commit(dir, "tree");
    git(dir, &["tag", "v1.0"]);
}

/// The work tree's files and the index, byte for byte.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(dir)
                .expect("below")
                .to_string_lossy()
                .to_string();
            if rel == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.push((
        ".git/index".into(),
        std::fs::read(dir.join(".git/index")).expect("index"),
    ));
    out.sort();
    out
}

fn scan(dir: &Path) -> Run {
    pinprobe(&[
        "scan",
        dir.to_str().expect("utf-8"),
        "--format",
        "json",
        "--offline",
    ])
}

const READS: &[&str] = &[
    "rev-parse --short HEAD",
    "rev-list --count HEAD",
    "describe --always --abbrev=40",
    "describe --tags",
    "log -1 --format=%ad --date=local",
    "show -s --format=%ci HEAD",
    "symbolic-ref --short HEAD",
    "branch --show-current",
];

#[test]
fn git_reading_the_repository_leaves_later_includes_the_trees() {
    let cmake = cmake_available();
    for form in READS {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        repo(dir, form, "");
        // git itself: nothing written in the work tree or the index.
        let before = snapshot(dir);
        let args: Vec<&str> = form.split_whitespace().collect();
        git(dir, &args);
        assert_eq!(snapshot(dir), before, "git {form} wrote");
        let run = scan(dir);
        assert_eq!(run.code, 1, "{form}: {}{}", run.stdout, run.stderr);
        let t = &run.json()["targets"][0];
        assert!(t["undecided"].is_null(), "{form}: {t:#}");
        assert!(
            t["components"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["commit"] == AFFECTED)),
            "{form}: {t:#}"
        );
        // Real CMake fetches that very pin after running git.
        if cmake {
            let outcome = run_cmake(dir, &[], &[]);
            assert!(!outcome.failed, "{form}: {}", outcome.log);
            assert!(
                outcome
                    .records
                    .iter()
                    .any(|r| r.name == "vllm-flash-attn" && r.tag == AFFECTED),
                "{form}: {:?}",
                outcome.records
            );
        }
    }
}

/// Forms that may write or run another program, and an `OUTPUT_FILE` into the tree: the
/// include after them reads a file the configuration may have written: undecided (exit 3).
#[test]
fn git_that_may_write_keeps_the_include_undecided() {
    for (form, extra) in [
        ("status --porcelain", ""),
        ("describe --always --dirty", ""),
        ("show HEAD", ""),
        ("log -p -1", ""),
        ("-c core.fsmonitor=true rev-parse HEAD", ""),
        ("checkout -q v1.0", ""),
        (
            "rev-parse HEAD",
            "OUTPUT_FILE ${CMAKE_CURRENT_SOURCE_DIR}/cmake/deps.cmake",
        ),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        repo(tmp.path(), form, extra);
        let run = scan(tmp.path());
        assert_eq!(run.code, 3, "{form} {extra}: {}{}", run.stdout, run.stderr);
        let undecided = run.json()["targets"][0]["undecided"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            undecided.contains("deps.cmake") && undecided.contains("wrote"),
            "{form}: {undecided}"
        );
    }
    // The OUTPUT_FILE form, run by real CMake: git's output replaces the file, and the fetch
    // the tree declares is not made.
    if cmake_available() {
        let tmp = tempfile::tempdir().expect("tempdir");
        repo(
            tmp.path(),
            "rev-parse HEAD",
            "OUTPUT_FILE ${CMAKE_CURRENT_SOURCE_DIR}/cmake/deps.cmake",
        );
        let outcome = run_cmake(tmp.path(), &[], &[]);
        assert!(
            !outcome.records.iter().any(|r| r.tag == AFFECTED),
            "{:?}",
            outcome.records
        );
    }
}

/// `${GIT_EXECUTABLE}` set in the tree to another program is that program: not read-only.
#[test]
fn a_git_executable_set_to_another_program_is_not_git() {
    let tmp = tempfile::tempdir().expect("tempdir");
    repo(tmp.path(), "rev-parse HEAD", "");
    let lists = std::fs::read_to_string(tmp.path().join("CMakeLists.txt")).expect("read");
    write(
        tmp.path(),
        "CMakeLists.txt",
        &lists.replace(
            "find_package(Git QUIET)\n",
            "find_package(Git QUIET)\nset(GIT_EXECUTABLE ${CMAKE_CURRENT_SOURCE_DIR}/tools/gen.sh)\n",
        ),
    );
    let run = scan(tmp.path());
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}
