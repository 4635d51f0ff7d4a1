//! Programs built to defeat the relevance analysis (issue 29): a fetch argument computed
//! through ten levels of functions in ten include files, `cmake_language(EVAL)` and `CALL`,
//! `variable_watch`, a property set in one directory and read in another. Real CMake (the
//! recording stand-in modules of `tests/cmake_oracle/`) runs each program under each input
//! setting given; pinprobe, with the joins and with every decision forked, must give every tag
//! CMake fetches, or say that an input makes the tag anything, or stay undecided: never a
//! narrower set.

use crate::cmake_differential::{cmake_available, fetched_by, run_cmake, write_tree};
use std::collections::{BTreeMap, BTreeSet};

/// `(name, value)` pairs: `-D` values or environment variables.
type Pairs = Vec<(String, String)>;

/// One adversarial program: its files and the input settings (`-D`, environment) CMake is
/// run with.
struct Program {
    name: &'static str,
    files: BTreeMap<String, String>,
    settings: Vec<(Pairs, Pairs)>,
}

const HEAD: &str = "cmake_minimum_required(VERSION 3.26)\nproject(p NONE)\ninclude(FetchContent)\n";

fn declare(tag: &str) -> String {
    format!(
        "FetchContent_Declare(dep GIT_REPOSITORY https://example.invalid/dep.git GIT_TAG {tag})\nFetchContent_MakeAvailable(dep)\n"
    )
}

fn d(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// Ten include files, each defining one level of a chain of functions; each level passes the
/// value on to its caller (through `PARENT_SCOPE`, `string()`, `list()` and a macro), the
/// innermost computes it (`innermost`, the body of `f9(out)`).
fn ten_levels(name: &'static str, top: &str, innermost: &str) -> Program {
    let mut files = BTreeMap::new();
    files.insert(
        "CMakeLists.txt".to_string(),
        format!(
            "{HEAD}{top}include(${{CMAKE_CURRENT_LIST_DIR}}/cmake/l0.cmake)\nf0(TAG)\n{}",
            declare("${TAG}")
        ),
    );
    for i in 0..10 {
        let mut text = String::new();
        if i < 9 {
            text.push_str(&format!(
                "include(${{CMAKE_CURRENT_LIST_DIR}}/l{}.cmake)\n",
                i + 1
            ));
        }
        let body = match i {
            9 => innermost.to_string(),
            3 => "  f4(r)\n  string(REPLACE \"@\" \"\" r2 \"@${r}\")\n  set(${out} \"${r2}\" PARENT_SCOPE)\n".into(),
            5 => "  f6(r)\n  list(APPEND l \"${r}\")\n  list(GET l 0 r2)\n  set(${out} \"${r2}\" PARENT_SCOPE)\n".into(),
            7 => "  m8(r)\n  set(${out} \"${r}\" PARENT_SCOPE)\n".into(),
            _ => format!("  f{}(r)\n  set(${{out}} \"${{r}}\" PARENT_SCOPE)\n", i + 1),
        };
        text.push_str(&format!("function(f{i} out)\n{body}endfunction()\n"));
        if i == 7 {
            text.push_str("macro(m8 out)\n  f8(${out})\nendmacro()\n");
        }
        files.insert(format!("cmake/l{i}.cmake"), text);
    }
    Program {
        name,
        files,
        settings: vec![
            (vec![], vec![]),
            (vec![d("PP_PICK", "ON")], vec![]),
            (vec![], vec![d("PP_ENV", "1")]),
        ],
    }
}

fn single(name: &'static str, top: String, settings: Vec<Pairs>) -> Program {
    let mut files = BTreeMap::new();
    files.insert("CMakeLists.txt".to_string(), format!("{HEAD}{top}"));
    Program {
        name,
        files,
        settings: settings.into_iter().map(|s| (s, vec![])).collect(),
    }
}

fn programs() -> Vec<Program> {
    let mut out = vec![
        ten_levels(
            "a decision at the top, its value through ten levels",
            "if(PP_PICK)\n  set(BASE v2)\nelse()\n  set(BASE v1)\nendif()\n",
            "  set(${out} \"${BASE}\" PARENT_SCOPE)\n",
        ),
        ten_levels(
            "a decision in the innermost of ten levels",
            "",
            "  if(PP_PICK)\n    set(${out} v2 PARENT_SCOPE)\n  elseif(DEFINED ENV{PP_ENV})\n    set(${out} v3 PARENT_SCOPE)\n  else()\n    set(${out} v1 PARENT_SCOPE)\n  endif()\n",
        ),
        ten_levels(
            "an input's own value through ten levels",
            "set(PP_TAG v1 CACHE STRING \"\")\n",
            "  set(${out} \"${PP_TAG}\" PARENT_SCOPE)\n",
        ),
    ];
    out.push(single(
        "cmake_language(EVAL) sets the tag",
        format!(
            "set(TAG v1)\ncmake_language(EVAL CODE \"set(TAG v2)\")\n{}",
            declare("${TAG}")
        ),
        vec![vec![]],
    ));
    out.push(single(
        "cmake_language(CALL) of a function named by an input",
        format!(
            "function(pick_a)\n  set(TAG va PARENT_SCOPE)\nendfunction()\nfunction(pick_b)\n  set(TAG vb PARENT_SCOPE)\nendfunction()\nset(PP_WHICH a CACHE STRING \"\")\nset(TAG v0)\ncmake_language(CALL pick_${{PP_WHICH}})\n{}",
            declare("${TAG}")
        ),
        vec![vec![], vec![d("PP_WHICH", "b")]],
    ));
    out.push(single(
        "variable_watch() runs a macro that sets the tag",
        format!(
            "set(TAG v1)\nmacro(watcher var access value)\n  set(TAG v2)\nendmacro()\nvariable_watch(TRIGGER watcher)\nset(TRIGGER 1)\n{}",
            declare("${TAG}")
        ),
        vec![vec![]],
    ));
    let mut prop = single(
        "a global property set in a subdirectory, read at the top",
        format!(
            "add_subdirectory(sub)\nget_property(TAG GLOBAL PROPERTY PP_TAGP)\n{}",
            declare("${TAG}")
        ),
        vec![vec![], vec![d("PP_PICK", "ON")]],
    );
    prop.files.insert(
        "sub/CMakeLists.txt".into(),
        "if(PP_PICK)\n  set_property(GLOBAL PROPERTY PP_TAGP v2)\nelse()\n  set_property(GLOBAL PROPERTY PP_TAGP v1)\nendif()\n".into(),
    );
    out.push(prop);
    let mut dir_prop = single(
        "a directory property set in a subdirectory, read at the top",
        format!(
            "add_subdirectory(sub)\nget_directory_property(TAG DIRECTORY sub PP_TAGP)\n{}",
            declare("${TAG}")
        ),
        vec![vec![], vec![d("PP_PICK", "ON")]],
    );
    dir_prop.files.insert(
        "sub/CMakeLists.txt".into(),
        "set(T v1)\nif(PP_PICK)\n  set(T v2)\nendif()\nset_directory_properties(PROPERTIES PP_TAGP ${T})\n".into(),
    );
    out.push(dir_prop);
    out
}

/// The tags CMake fetches for `dep` over the program's settings.
fn cmake_tags(p: &Program, dir: &std::path::Path) -> BTreeSet<String> {
    let mut tags = BTreeSet::new();
    for (defs, env) in &p.settings {
        let outcome = run_cmake(dir, defs, env);
        assert!(
            !outcome.failed,
            "{}: CMake fails with {defs:?} {env:?}:\n{}",
            p.name, outcome.log
        );
        for r in outcome.records.iter().filter(|r| r.name == "dep") {
            tags.insert(r.tag.clone());
        }
    }
    tags
}

#[test]
fn adversarial_programs_give_every_tag_cmake_fetches_or_say_they_cannot() {
    if !cmake_available() {
        return;
    }
    let mut failures = Vec::new();
    let mut decided = 0;
    for p in programs() {
        let dir = write_tree(&p.files);
        let truth = cmake_tags(&p, dir.path());
        assert!(!truth.is_empty(), "{}: CMake fetched nothing", p.name);
        for fork_all in [false, true] {
            let Some(found) = fetched_by(dir.path(), fork_all) else {
                eprintln!("{} (fork_all {fork_all}): undecided", p.name);
                continue;
            };
            let Some((literals, any, _)) = found.get("dep") else {
                failures.push(format!(
                    "{}: dep not fetched at all; CMake: {truth:?}",
                    p.name
                ));
                continue;
            };
            let tags: BTreeSet<String> = literals.iter().map(|(_, t)| t.clone()).collect();
            eprintln!(
                "{} (fork_all {fork_all}): pinprobe {tags:?}, any value: {any}; CMake {truth:?}",
                p.name
            );
            decided += 1;
            if !*any && !truth.is_subset(&tags) {
                failures.push(format!(
                    "{} (fork_all {fork_all}): pinprobe says {tags:?} and nothing else, CMake fetches {truth:?}",
                    p.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "narrower than CMake:\n{}",
        failures.join("\n")
    );
    // The ten-level chains are decided (they use nothing pinprobe refuses).
    assert!(decided >= 6, "only {decided} evaluations decided");
}
