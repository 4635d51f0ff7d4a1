//! An incomplete CMake evaluation keeps the pins it found (issue 29): a vLLM-shaped tree that
//! pins the known-affected FlashAttention commit and then does something pinprobe cannot follow
//! (a construct it does not evaluate, a file the configuration wrote, a function it cannot
//! summarise) is `affected` with exit 1, and the target stays undecided with the reason naming
//! the pin; where the stop comes before any pin, exit 3 and the reason says so.

use crate::common;

use common::*;

const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";

/// A vLLM-shaped tree: the top-level file includes `cmake/external_projects/vllm_flash_attn.cmake`
/// (which pins `tag`), then runs `after`; `before` runs ahead of the include.
fn tree(before: &str, tag: &str, after: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(FetchContent)\n{before}\ninclude(${{CMAKE_CURRENT_LIST_DIR}}/cmake/external_projects/vllm_flash_attn.cmake)\n{after}\n"
        ),
    );
    write(
        dir.path(),
        "cmake/external_projects/vllm_flash_attn.cmake",
        &format!(
            "FetchContent_Declare(\n  vllm-flash-attn\n  GIT_REPOSITORY {FA}\n  GIT_TAG {tag}\n  GIT_PROGRESS TRUE\n)\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
        ),
    );
    dir
}

fn scan(dir: &tempfile::TempDir) -> Run {
    pinprobe(&[
        "scan",
        dir.path().to_str().expect("utf-8"),
        "--format",
        "json",
        "--offline",
    ])
}

fn undecided(run: &Run) -> String {
    run.json()["targets"][0]["undecided"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// What stops the evaluation after the pin, and a word of the reason given.
const STOPS: &[(&str, &str)] = &[
    ("cmake_language(EVAL CODE \"set(X y)\")", "cmake_language"),
    ("variable_watch(X)", "variable_watch"),
    (
        "file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/gen.cmake \"set(X y)\")\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/gen.cmake)",
        "wrote",
    ),
    (
        // Four conditions guarding return() in one call: past the three a call runs both
        // ways, it is summarised, and a declaration inside cannot be.
        "function(f)\n  if(PP_A)\n    return()\n  endif()\n  if(PP_B)\n    return()\n  endif()\n  if(PP_C)\n    return()\n  endif()\n  if(PP_D)\n    return()\n  endif()\n  FetchContent_Declare(other GIT_REPOSITORY https://example.invalid/o.git GIT_TAG v1)\nendfunction()\nf()",
        "depends on an input",
    ),
];

#[test]
fn a_known_affected_pin_before_a_stop_is_affected_and_exits_1() {
    for (stop, why) in STOPS {
        let dir = tree("", AFFECTED, stop);
        let run = scan(&dir);
        run.assert_fa4_affected();
        let reason = undecided(&run);
        assert!(reason.contains(why), "{stop}: {reason}");
        assert!(
            reason.contains(AFFECTED) && reason.contains("vllm_flash_attn.cmake:4"),
            "{stop}: the reason lists the pin found, with its file and line: {reason}"
        );
        let fa = &run.json()["targets"][0]["components"][0];
        assert_eq!(fa["commit"], AFFECTED, "{stop}");
        assert_eq!(fa["line"], 4, "{stop}");
    }
}

#[test]
fn a_fixed_pin_before_a_stop_is_not_a_clean_target() {
    // The pin found decides its own rule, but the target stays undecided: exit 3, never 0.
    for (stop, _) in STOPS {
        let dir = tree("", FIX, stop);
        let run = scan(&dir);
        assert_eq!(run.code, 3, "{stop}: {}{}", run.stdout, run.stderr);
        assert!(undecided(&run).contains(FIX), "{stop}: {}", undecided(&run));
    }
}

#[test]
fn a_stop_before_any_pin_is_undecided_and_says_none_was_found() {
    for (stop, why) in STOPS {
        let dir = tree(stop, AFFECTED, "");
        let run = scan(&dir);
        assert_eq!(run.code, 3, "{stop}: {}{}", run.stdout, run.stderr);
        let reason = undecided(&run);
        assert!(
            reason.contains(why) && reason.contains("no pin found"),
            "{stop}: {reason}"
        );
    }
}
