//! Issue 31's classes against real CMake, CMake's answers recorded in
//! `tests/data/cmake_oracle/round2.json`: files CMake reads at `project()` whatever their names,
//! CMake's regex dialect deciding a branch, and CMake code read from outside the tree (a file the
//! configuration wrote into the build directory, a parent directory's file), which pinprobe
//! leaves undecided, naming it. Every tree whose CMake run fetches the affected commit must fail
//! `pinprobe scan` and `pinprobe diff` (a pull request introducing it never passes).

use super::{AFFECTED, Case, FA, FIX, files};
use crate::common::{self, git};

const MIN: &str = "cmake_minimum_required(VERSION 3.26)\n";

fn fa_fetch(tag: &str) -> String {
    format!(
        "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {tag})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
    )
}

fn raw(name: &str, list: &[(&str, &str)], undecided: bool) -> Case {
    Case {
        name: format!("round2 {name}"),
        files: files(list),
        has_inputs: undecided,
        variants: Vec::new(),
        undecided_ok: undecided,
    }
}

pub(super) fn round2_cases() -> Vec<Case> {
    let hook = fa_fetch(AFFECTED);
    let mut cases = vec![
        raw(
            "a project() hook not named .cmake",
            &[
                (
                    "CMakeLists.txt",
                    &format!(
                        "{MIN}set(CMAKE_PROJECT_INCLUDE \"${{CMAKE_SOURCE_DIR}}/cmake/hooks/fa.txt\")\nproject(t LANGUAGES NONE)\n"
                    ),
                ),
                ("cmake/hooks/fa.txt", &hook),
            ],
            false,
        ),
        raw(
            "a project() hook before, relative, in .cmake",
            &[
                (
                    "CMakeLists.txt",
                    &format!(
                        "{MIN}set(CMAKE_PROJECT_INCLUDE_BEFORE hooks/fa.cmake)\nproject(t LANGUAGES NONE)\n"
                    ),
                ),
                ("hooks/fa.cmake", &hook),
            ],
            false,
        ),
        raw(
            "project() hooks by name, at every project() call, in CMake's order",
            &[
                (
                    "CMakeLists.txt",
                    &format!(
                        "{MIN}set(ORDER \"\" CACHE INTERNAL \"\")\nset(H \"${{CMAKE_SOURCE_DIR}}/h\")\nset(CMAKE_PROJECT_INCLUDE_BEFORE ${{H}}/before)\nset(CMAKE_PROJECT_t_INCLUDE_BEFORE ${{H}}/named_before)\nset(CMAKE_PROJECT_INCLUDE \"${{H}}/after;${{H}}/after2.cmake\")\nset(CMAKE_PROJECT_sub_INCLUDE ${{H}}/named)\nset(CMAKE_PROJECT_TOP_LEVEL_INCLUDES ${{H}}/top)\nproject(t LANGUAGES NONE)\nadd_subdirectory(sub)\ninclude(FetchContent)\nFetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG \"o${{ORDER}}\")\nFetchContent_MakeAvailable(k)\n"
                    ),
                ),
                ("sub/CMakeLists.txt", "project(sub LANGUAGES NONE)\n"),
                (
                    "h/before",
                    "set(ORDER \"${ORDER}-b\" CACHE INTERNAL \"\")\n",
                ),
                (
                    "h/named_before",
                    "set(ORDER \"${ORDER}-nb\" CACHE INTERNAL \"\")\n",
                ),
                (
                    "h/top",
                    "set(ORDER \"${ORDER}-top${PROJECT_NAME}\" CACHE INTERNAL \"\")\n",
                ),
                (
                    "h/after",
                    "set(ORDER \"${ORDER}-a${PROJECT_NAME}\" CACHE INTERNAL \"\")\n",
                ),
                (
                    "h/after2.cmake",
                    "set(ORDER \"${ORDER}-a2${PROJECT_NAME}\" CACHE INTERNAL \"\")\n",
                ),
                (
                    "h/named",
                    "set(ORDER \"${ORDER}-n${PROJECT_NAME}\" CACHE INTERNAL \"\")\n",
                ),
            ],
            false,
        ),
        raw(
            "a project() hook that is missing fails that project() call",
            &[
                (
                    "CMakeLists.txt",
                    &format!(
                        "{MIN}set(CMAKE_PROJECT_INCLUDE_BEFORE \"${{CMAKE_SOURCE_DIR}}/missing.txt\")\nset(CMAKE_PROJECT_INCLUDE \"${{CMAKE_SOURCE_DIR}}/fa.txt\")\nproject(t LANGUAGES NONE)\n{}",
                        fa_fetch(FIX)
                    ),
                ),
                ("fa.txt", &hook),
            ],
            false,
        ),
        raw(
            "regex dialect: no \\d, \\s, \\w or classes, braces literal",
            &[(
                "CMakeLists.txt",
                &format!(
                    "{MIN}project(t LANGUAGES NONE)\nset(T {FIX})\nif(\"v12\" MATCHES \"^v\\\\d+$\")\nelseif(\"12\" MATCHES \"^[[:digit:]]+$\")\nelseif(\"aa\" MATCHES \"^a{{2}}$\")\nelse()\n  set(T {AFFECTED})\nendif()\nstring(REGEX REPLACE \"\\\\s\" \"\" S \"a s\")\nset(L \"1;w;_\")\nlist(FILTER L INCLUDE REGEX \"^\\\\w$\")\nif(NOT S STREQUAL \"a \" OR NOT L STREQUAL \"w\")\n  set(T {FIX})\nendif()\n{}",
                    fa_fetch("${T}")
                ),
            )],
            false,
        ),
        raw(
            "regex dialect: a lazy quantifier stops CMake",
            &[(
                "CMakeLists.txt",
                &format!(
                    "{MIN}project(t LANGUAGES NONE)\n{}if(\"abc\" MATCHES \"b+?\")\nendif()\nFetchContent_Declare(other GIT_REPOSITORY {FA} GIT_TAG {FIX})\nFetchContent_MakeAvailable(other)\n",
                    fa_fetch(AFFECTED)
                ),
            )],
            false,
        ),
        raw(
            "regex dialect: CMAKE_MATCH groups pick the tag",
            &[(
                "CMakeLists.txt",
                &format!(
                    "{MIN}project(t LANGUAGES NONE)\nset(V \"pin={AFFECTED};fix={FIX}\")\nif(V MATCHES \"pin=([0-9a-f]+);fix=([0-9a-f]+)\")\n  set(T ${{CMAKE_MATCH_1}})\nendif()\n{}",
                    fa_fetch("${T}")
                ),
            )],
            false,
        ),
    ];
    // A JSON manifest drives the declarations.
    let manifest = format!(
        "{{\"deps\": [{{\"name\": \"vllm-flash-attn\", \"repo\": \"{FA}\", \"tag\": \"{AFFECTED}\"}}, {{\"tag\": \"v1.2\", \"name\": \"other\", \"repo\": \"https://example.invalid/o.git\"}}], \"version\": 2}}"
    );
    cases.push(raw(
        "string(JSON) over a manifest in a foreach",
        &[
            (
                "CMakeLists.txt",
                &format!(
                    "{MIN}project(t LANGUAGES NONE)\ninclude(FetchContent)\nfile(READ ${{CMAKE_SOURCE_DIR}}/deps.json J)\nstring(JSON n LENGTH \"${{J}}\" deps)\nmath(EXPR last \"${{n}} - 1\")\nforeach(i RANGE ${{last}})\n  string(JSON name GET \"${{J}}\" deps ${{i}} name)\n  string(JSON repo GET \"${{J}}\" deps ${{i}} repo)\n  string(JSON tag GET \"${{J}}\" deps ${{i}} tag)\n  FetchContent_Declare(${{name}} GIT_REPOSITORY ${{repo}} GIT_TAG ${{tag}})\n  FetchContent_MakeAvailable(${{name}})\nendforeach()\n"
                ),
            ),
            ("deps.json", &manifest),
        ],
        false,
    ));
    let table = [
        "string(JSON O GET \"${J}\" b)",
        "string(JSON O GET \"${J}\" b a)",
        "string(JSON O GET \"${J}\" b a 1)",
        "string(JSON O GET \"${J}\" b a 3)",
        "string(JSON O GET \"${J}\" b a 4)",
        "string(JSON O GET \"${J}\" n)",
        "string(JSON O GET \"${J}\" e)",
        "string(JSON O GET \"${J}\" f)",
        "string(JSON O GET \"${J}\" s)",
        "string(JSON O GET \"${J}\" short)",
        "string(JSON O GET \"${J}\" long)",
        "string(JSON O GET \"${J}\" empty)",
        "string(JSON O TYPE \"${J}\" b a 5)",
        "string(JSON O TYPE \"${J}\" b a 4)",
        "string(JSON O LENGTH \"${J}\")",
        "string(JSON O MEMBER \"${J}\" 0)",
        "string(JSON O MEMBER \"${J}\" b 1)",
        "string(JSON O ERROR_VARIABLE E GET \"${J}\" nope)\nstring(APPEND O \"+${E}\")",
        "string(JSON O ERROR_VARIABLE E GET \"${J}\" b a 9)",
        "string(JSON O ERROR_VARIABLE E GET \"${J}\" s x)",
        "string(JSON O ERROR_VARIABLE E GET \"${J}\" s)\nstring(APPEND O \"+${E}\")",
        "string(JSON O ERROR_VARIABLE E GET \"${J}\" b a 7)\nstring(APPEND O \"+${E}\")",
        "string(JSON O ERROR_VARIABLE E MEMBER \"${J}\" 99)",
        "string(JSON O ERROR_VARIABLE E GET \"{bad\" a)",
    ];
    let mut body = String::from(
        "set(J [=[{\"s\": \"str\", \"b\": {\"z\": 1, \"a\": [1, 2.50, \"x\", true, null, {\"k\": \"v\"}]}, \"n\": 1.0, \"e\": 1e3, \"f\": 0.1, \"short\": [1, \"two\", [], {}], \"long\": [\"aaaaaaaaaaaaaaaaaaaa\", \"bbbbbbbbbbbbbbbbbbbbbbbbb\", \"cccccccccccccccccccccccccc\"], \"empty\": {}}]=])\nset(R r)\n",
    );
    for step in table {
        body.push_str(&format!(
            "set(O none)\n{step}\nstring(HEX \"${{O}}\" H)\nstring(APPEND R \"-${{H}}\")\n"
        ));
    }
    body.push_str("string(JSON O GET \"${J}\" nope)\nstring(APPEND R \"-${O}\")\n");
    cases.push(raw(
        "string(JSON) as jsoncpp prints it",
        &[(
            "CMakeLists.txt",
            &format!(
                "{MIN}project(t LANGUAGES NONE)\n{body}include(FetchContent)\nFetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG \"${{R}}\")\nFetchContent_MakeAvailable(k)\n"
            ),
        )],
        false,
    ));
    // CMake code from outside the tree: undecided, never dropped.
    let written = [
        (
            "file(WRITE) into the build directory",
            format!(
                "file(WRITE ${{CMAKE_BINARY_DIR}}/gen.cmake \"include(FetchContent)\\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {AFFECTED})\\nFetchContent_MakeAvailable(vllm-flash-attn)\\n\")\ninclude(${{CMAKE_BINARY_DIR}}/gen.cmake)\n"
            ),
        ),
        (
            "configure_file into the build directory",
            "set(PIN ".to_string()
                + AFFECTED
                + ")\nconfigure_file(gen.in ${CMAKE_BINARY_DIR}/gen.cmake @ONLY)\ninclude(${CMAKE_BINARY_DIR}/gen.cmake)\n",
        ),
        (
            "cmake -E copy into the build directory",
            "execute_process(COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/gen.txt ${CMAKE_BINARY_DIR}/gen.cmake)\ninclude(${CMAKE_BINARY_DIR}/gen.cmake)\n".to_string(),
        ),
        (
            "file(COPY) into the build directory",
            "file(COPY ${CMAKE_SOURCE_DIR}/x/gen.cmake DESTINATION ${CMAKE_BINARY_DIR}/y)\ninclude(${CMAKE_BINARY_DIR}/y/gen.cmake)\n".to_string(),
        ),
        (
            "a file above the tree",
            "include(${CMAKE_SOURCE_DIR}/../pinprobe-parent-that-is-not-there.cmake OPTIONAL)\n".to_string(),
        ),
    ];
    let gen_in = fa_fetch("@PIN@");
    for (name, body) in written {
        cases.push(raw(
            name,
            &[
                (
                    "CMakeLists.txt",
                    &format!("{MIN}project(t LANGUAGES NONE)\n{body}"),
                ),
                ("gen.in", &gen_in),
                ("gen.txt", &hook),
                ("x/gen.cmake", &hook),
            ],
            true,
        ));
    }
    cases
}

/// The gate: every case whose recorded CMake run fetches the affected commit fails `pinprobe
/// scan` (exit 1 or 3), and fails `pinprobe diff` for a pull request that changes a tree
/// fetching the fix into it (offline, built-in rules; no cmake needed).
#[test]
fn a_tree_cmake_makes_fetch_the_affected_commit_never_passes_scan_or_diff() {
    let recorded: std::collections::BTreeMap<String, super::Recorded> =
        super::load_corpus(super::ROUND2_PART)
            .into_iter()
            .map(|r| (r.name.clone(), r))
            .collect();
    let mut gated = 0;
    for case in round2_cases() {
        let Some(rec) = recorded.get(&case.name) else {
            panic!("{}: not recorded (re-record: {})", case.name, super::RECORD);
        };
        let affected = rec
            .runs
            .iter()
            .any(|o| o.records.iter().any(|r| r.tag == AFFECTED));
        if !affected {
            continue;
        }
        gated += 1;
        let dir = super::write_tree(&case.files);
        let scan = common::pinprobe(&[
            "scan",
            "--offline",
            "--format",
            "json",
            dir.path().to_str().expect("utf-8"),
        ]);
        assert!(
            matches!(scan.code, 1 | 3),
            "{}: cmake fetches {AFFECTED}; scan exits {}\n{}",
            case.name,
            scan.code,
            scan.stdout
        );
        // A pull request: from a tree that fetches the fix to this one.
        let repo = tempfile::tempdir().expect("tempdir");
        git(repo.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(
            repo.path().join("CMakeLists.txt"),
            format!("{MIN}project(t LANGUAGES NONE)\n{}", fa_fetch(FIX)),
        )
        .expect("write");
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-q", "-m", "base"]);
        let base = git(repo.path(), &["rev-parse", "HEAD"]);
        for (path, text) in &case.files {
            let p = repo.path().join(path);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-q", "-m", "head"]);
        let diff = common::run_in(repo.path(), &["diff", &base, "HEAD", ".", "--offline"]);
        assert!(
            matches!(diff.code, 1 | 3),
            "{}: the pull request makes cmake fetch {AFFECTED}; diff exits {}\n{}{}",
            case.name,
            diff.code,
            diff.stdout,
            diff.stderr
        );
    }
    assert!(
        gated >= 9,
        "only {gated} recorded cases fetch the affected commit"
    );
}

/// The CMake project a Python build configures (`[tool.scikit-build] cmake.source-dir`) is a
/// root of its own: a declaration only its evaluation reaches (in a file not named `.cmake`)
/// decides the scan. Without the Python build it is still evaluated (no other CMakeLists.txt
/// reaches it); the report says why each project was evaluated.
#[test]
fn the_project_a_python_build_configures_is_evaluated() {
    let mut list = vec![
        (
            "CMakeLists.txt",
            format!("{MIN}project(top LANGUAGES NONE)\n"),
        ),
        (
            "csrc/CMakeLists.txt",
            format!(
                "{MIN}project(k LANGUAGES NONE)\ninclude(${{CMAKE_CURRENT_SOURCE_DIR}}/deps.txt)\n"
            ),
        ),
        ("csrc/deps.txt", fa_fetch(AFFECTED)),
    ];
    let scan = |list: &[(&str, String)]| {
        let files: Vec<(&str, &str)> = list.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let dir = super::write_tree(&super::files(&files));
        let out = common::pinprobe(&[
            "scan",
            "--offline",
            "--format",
            "json",
            dir.path().to_str().expect("utf-8"),
        ]);
        (Some(out.code), out.stdout)
    };
    let (code, json) = scan(&list);
    assert_eq!(code, Some(1), "found as a project nothing reaches: {json}");
    assert!(
        json.contains("no other CMakeLists.txt reaches it"),
        "{json}"
    );
    list.push((
        "pyproject.toml",
        "[project]\nname = \"x\"\nversion = \"1\"\n[tool.scikit-build]\ncmake.source-dir = \"csrc\"\n".into(),
    ));
    let (code, json) = scan(&list);
    assert_eq!(code, Some(1), "{json}");
    assert!(
        json.contains("pyproject.toml: [tool.scikit-build] cmake.source-dir"),
        "{json}"
    );
    assert!(
        json.contains("csrc/deps.txt"),
        "the pin is located in the file that declares it: {json}"
    );
}
