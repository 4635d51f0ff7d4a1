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

const READS: &[&str] = &[
    "diff-index --quiet HEAD -- .",
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
    for (form, found) in READS
        .iter()
        .map(|f| (*f, false))
        .chain([("rev-parse --short HEAD", true)])
    {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        repo(dir, form, "");
        if found {
            // git found by `find_program` (ggml's way) rather than FindGit.
            let lists = std::fs::read_to_string(dir.join("CMakeLists.txt")).expect("read");
            write(
                dir,
                "CMakeLists.txt",
                &lists
                    .replace(
                        "find_package(Git QUIET)\nif(Git_FOUND)",
                        "find_program(GIT_EXE NAMES git git.exe NO_CMAKE_FIND_ROOT_PATH)\nif(GIT_EXE)",
                    )
                    .replace("${GIT_EXECUTABLE}", "${GIT_EXE}"),
            );
            git(dir, &["commit", "-qam", "find_program"]);
        }
        // git itself: nothing written in the work tree or the index.
        let before = snapshot(dir);
        let args: Vec<&str> = form.split_whitespace().collect();
        git(dir, &args);
        assert_eq!(snapshot(dir), before, "git {form} wrote");
        let run = scan_offline_json(dir);
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
        // Relative to the working directory, as real CMake writes it.
        ("rev-parse HEAD", "OUTPUT_FILE cmake/deps.cmake"),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        repo(tmp.path(), form, extra);
        let run = scan_offline_json(tmp.path());
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
    // The OUTPUT_FILE forms, run by real CMake: git's output replaces the file, and the fetch
    // the tree declares is not made.
    if cmake_available() {
        for file in [
            "${CMAKE_CURRENT_SOURCE_DIR}/cmake/deps.cmake",
            "cmake/deps.cmake",
        ] {
            let tmp = tempfile::tempdir().expect("tempdir");
            repo(tmp.path(), "rev-parse HEAD", &format!("OUTPUT_FILE {file}"));
            let outcome = run_cmake(tmp.path(), &[], &[]);
            assert!(
                !outcome.records.iter().any(|r| r.tag == AFFECTED),
                "{file}: {:?}",
                outcome.records
            );
        }
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
    let run = scan_offline_json(tmp.path());
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}

/// The reason `status` and `describe --dirty` are not read-only, shown on a real repository:
/// with a file's stat information stale (touched, same content), they rewrite the index, and
/// the allowed forms leave it as it is.
#[test]
fn an_index_refresh_writes_and_the_allowed_forms_do_not() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    repo(dir, "rev-parse HEAD", "");
    let touch = || {
        let f = std::fs::File::options()
            .append(true)
            .open(dir.join("cmake/deps.cmake"))
            .expect("open");
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        f.set_modified(later).expect("mtime");
    };
    for form in READS {
        touch();
        let before = snapshot(dir);
        let args: Vec<&str> = form.split_whitespace().collect();
        let _ = std::process::Command::new("git")
            .args(&args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert_eq!(snapshot(dir), before, "git {form} wrote");
    }
    touch();
    let before = snapshot(dir);
    git(dir, &["status", "--porcelain"]);
    assert_ne!(snapshot(dir), before, "git status refreshed the index");
}

/// A tree that gets CMake to run its own `git` (a script that rewrites `cmake/deps.cmake` to
/// pin another commit): through `PATH`, a `find_program` with `PATHS` into the tree, or a
/// search path naming the tree before `FindGit`. Real CMake fetches the rewritten pin;
/// pinprobe never takes that git as read-only: undecided, never the tree's pin alone.
#[test]
fn a_git_the_tree_ships_is_not_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let other = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    let cases = [
        "set(ENV{PATH} \"${CMAKE_CURRENT_SOURCE_DIR}/tools:$ENV{PATH}\")\nset(G git)",
        "find_program(G NAMES git PATHS ${CMAKE_CURRENT_SOURCE_DIR}/tools NO_DEFAULT_PATH)",
        "list(APPEND CMAKE_PROGRAM_PATH ${CMAKE_CURRENT_SOURCE_DIR}/tools)\nunset(GIT_EXECUTABLE CACHE)\nfind_package(Git QUIET)\nset(G ${GIT_EXECUTABLE})",
    ];
    for setup in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        repo(dir, "rev-parse HEAD", "");
        write(
            dir,
            "tools/git",
            &format!(
                "#!/bin/sh\nprintf 'include(FetchContent)\\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {other})\\nFetchContent_MakeAvailable(vllm-flash-attn)\\n' > \"$(dirname \"$0\")/../cmake/deps.cmake\"\n"
            ),
        );
        std::fs::set_permissions(
            dir.join("tools/git"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        write(
            dir,
            "CMakeLists.txt",
            &format!(
                "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\n{setup}\nexecute_process(COMMAND ${{G}} rev-parse --short HEAD\n  WORKING_DIRECTORY ${{CMAKE_CURRENT_SOURCE_DIR}} OUTPUT_VARIABLE out ERROR_QUIET)\ninclude(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/deps.cmake)\n"
            ),
        );
        if cmake_available() {
            let outcome = run_cmake(dir, &[], &[]);
            assert!(
                outcome.records.iter().any(|r| r.tag == other),
                "{setup}: {:?}\n{}",
                outcome.records,
                outcome.log
            );
            // Put the tree back as committed for the scan.
            git(dir, &["checkout", "--", "cmake/deps.cmake"]);
        }
        let run = scan_offline_json(dir);
        assert_eq!(run.code, 3, "{setup}: {}{}", run.stdout, run.stderr);
    }
}
