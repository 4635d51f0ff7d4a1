//! Where a declaration made inside a function or macro is: the file and line of the declaring
//! statement's text (the file that defines the function or macro), whoever calls it and from
//! whichever file, at any depth of calls; and such a declaration, reached through a call, is
//! never listed as unreached. Judged by real CMake on generated trees: each declaration's tag
//! is built from `CMAKE_CURRENT_LIST_LINE` (the line of the statement running, which CMake
//! gives from the body's own file) and, in functions, `CMAKE_CURRENT_FUNCTION_LIST_FILE` /
//! `_LINE`; its repository from `CMAKE_CURRENT_LIST_FILE` (the caller's list file, in CMake,
//! for a function or macro body alike). pinprobe must give the same values (so the variables
//! are CMake's), and its pin's line must be the line CMake reports for the statement, in the
//! file the generator wrote it in.

use crate::cmake_differential::{cmake_available, run_cmake};
use crate::common;

use common::*;
use pinprobe::pin::cmake;
use pinprobe::pin::components::Registry;
use pinprobe::pin::from_evaluation;
use pinprobe::view::DirView;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

/// One generated tree: its files, and for each name it declares, where the declaring
/// statement is written (file, line).
struct Tree {
    files: BTreeMap<String, String>,
    at: BTreeMap<String, (String, u32)>,
}

/// Lines of a file being written, with the line number of each statement added.
#[derive(Default)]
struct Text {
    lines: Vec<String>,
}

impl Text {
    fn push(&mut self, line: impl Into<String>) -> u32 {
        self.lines.push(line.into());
        u32::try_from(self.lines.len()).expect("few lines")
    }

    fn pad(&mut self, rng: &mut StdRng) {
        for _ in 0..rng.random_range(0..3) {
            let blank = rng.random_bool(0.5);
            self.push(if blank { "" } else { "# padding" });
        }
    }

    fn text(&self) -> String {
        self.lines.join("\n") + "\n"
    }
}

/// The declaring statement of a body: name from `${id}` with a prefix, tag and repository
/// from the location variables (`in_function`: the `CMAKE_CURRENT_FUNCTION_LIST_*` too).
fn declare(t: &mut Text, prefix: &str, in_function: bool) -> u32 {
    t.push("  string(REPLACE \"${CMAKE_SOURCE_DIR}/\" \"\" _lf \"${CMAKE_CURRENT_LIST_FILE}\")");
    let func = if in_function {
        t.push(
            "  string(REPLACE \"${CMAKE_SOURCE_DIR}/\" \"\" _ff \"${CMAKE_CURRENT_FUNCTION_LIST_FILE}\")",
        );
        "-${_ff}-${CMAKE_CURRENT_FUNCTION_LIST_LINE}-${CMAKE_CURRENT_FUNCTION}"
    } else {
        ""
    };
    let line = t.push(format!(
        "  FetchContent_Declare({prefix}_${{id}} GIT_REPOSITORY \"https://example.invalid/${{_lf}}/${{id}}.git\" GIT_TAG \"L${{CMAKE_CURRENT_LIST_LINE}}{func}\")"
    ));
    t.push(format!("  FetchContent_MakeAvailable({prefix}_${{id}})"));
    line
}

/// A tree: `cmake/defs.cmake` defines a function and a macro that declare; `cmake/mid.cmake`
/// defines a function that declares itself and calls both; the top level and a
/// subdirectory call them in a random order, with random padding moving every line.
fn tree(seed: u64) -> Tree {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut at = BTreeMap::new();
    let mut defs = Text::default();
    defs.pad(&mut rng);
    defs.push("function(fdecl id)");
    defs.pad(&mut rng);
    let fline = declare(&mut defs, "f", true);
    defs.push("endfunction()");
    defs.pad(&mut rng);
    defs.push("macro(mdecl id)");
    defs.pad(&mut rng);
    let mline = declare(&mut defs, "m", false);
    defs.push("endmacro()");
    let mut mid = Text::default();
    mid.pad(&mut rng);
    mid.push("function(fmid id)");
    mid.pad(&mut rng);
    let midline = declare(&mut mid, "n", true);
    mid.push("  fdecl(${id}x)");
    mid.push("  mdecl(${id}y)");
    mid.push("endfunction()");
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut counter = 0;
    let mut call = |rng: &mut StdRng, dir: &str| -> String {
        counter += 1;
        let id = format!("{dir}{counter}");
        match rng.random_range(0..3) {
            0 => {
                calls.push((format!("f_{id}"), "defs:f".into()));
                format!("fdecl({id})")
            }
            1 => {
                calls.push((format!("m_{id}"), "defs:m".into()));
                format!("mdecl({id})")
            }
            _ => {
                calls.push((format!("n_{id}"), "mid".into()));
                calls.push((format!("f_{id}x"), "defs:f".into()));
                calls.push((format!("m_{id}y"), "defs:m".into()));
                format!("fmid({id})")
            }
        }
    };
    let mut sub = Text::default();
    sub.pad(&mut rng);
    for _ in 0..rng.random_range(1..3) {
        let c = call(&mut rng, "s");
        sub.push(c);
    }
    let mut top = Text::default();
    top.push("cmake_minimum_required(VERSION 3.20)");
    top.push("project(p NONE)");
    top.push("include(FetchContent)");
    if rng.random_bool(0.5) {
        top.push("include(cmake/defs.cmake)");
        top.push("include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/mid.cmake)");
    } else {
        top.push("include(${CMAKE_CURRENT_LIST_DIR}/cmake/mid.cmake)");
        top.push("include(cmake/defs.cmake)");
    }
    for _ in 0..rng.random_range(1..4) {
        top.pad(&mut rng);
        let c = call(&mut rng, "t");
        top.push(c);
    }
    top.push("add_subdirectory(sub)");
    for (name, which) in calls {
        let place = match which.as_str() {
            "defs:f" => ("cmake/defs.cmake".to_string(), fline),
            "defs:m" => ("cmake/defs.cmake".to_string(), mline),
            _ => ("cmake/mid.cmake".to_string(), midline),
        };
        at.insert(name, place);
    }
    let files = [
        ("CMakeLists.txt", top.text()),
        ("sub/CMakeLists.txt", sub.text()),
        ("cmake/defs.cmake", defs.text()),
        ("cmake/mid.cmake", mid.text()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Tree { files, at }
}

/// A pin as compared: repository, tag, file, line.
type Located = (String, String, String, u32);

/// pinprobe's pins of a tree by name; and the declarations it lists as unreached.
fn pinprobe_pins(dir: &Path) -> (BTreeMap<String, Located>, Vec<String>) {
    let view = DirView::new(dir);
    let eval = cmake::evaluate(&view).expect("evaluates");
    assert!(eval.undecided.is_none(), "{:?}", eval.undecided);
    let pins = from_evaluation(&eval, &view, &Registry { components: vec![] }).expect("pins");
    let mut out = BTreeMap::new();
    for p in &pins.pins {
        out.insert(
            p.declared_name.clone(),
            (
                p.repo.clone().unwrap_or_default(),
                p.reference.clone().unwrap_or_default(),
                p.file.clone(),
                p.line,
            ),
        );
    }
    let unreached = eval
        .unreached
        .iter()
        .map(|d| format!("{}:{} {}", d.file, d.line, d.name))
        .collect();
    (out, unreached)
}

#[test]
fn a_declaration_in_a_called_body_is_located_where_its_text_is() {
    let cmake = cmake_available();
    let cases: u64 = std::env::var("PINPROBE_LOCATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    for seed in 0..cases {
        let t = tree(seed);
        let tmp = tempfile::tempdir().expect("tempdir");
        for (k, v) in &t.files {
            write(tmp.path(), k, v);
        }
        let (pins, unreached) = pinprobe_pins(tmp.path());
        let all = || {
            t.files
                .iter()
                .map(|(k, v)| format!("--- {k}\n{v}"))
                .collect::<String>()
        };
        // Listed unreached: only a body no call reaches (`fmid()` never called).
        let reached: BTreeSet<String> = t.at.values().map(|(f, l)| format!("{f}:{l}")).collect();
        for u in &unreached {
            let place = u.split(' ').next().unwrap_or("");
            assert!(
                !reached.contains(place),
                "seed {seed}: a reached declaration listed unreached: {u}\n{}",
                all()
            );
        }
        let names: BTreeSet<&String> = pins.keys().collect();
        assert_eq!(
            names,
            t.at.keys().collect::<BTreeSet<_>>(),
            "seed {seed}\n{}",
            all()
        );
        for (name, (_, tag, file, line)) in &pins {
            let (want_file, want_line) = &t.at[name];
            assert_eq!(
                (file, line),
                (want_file, want_line),
                "seed {seed}: {name}\n{}",
                all()
            );
            // The tag pinprobe computes says the same line (CMAKE_CURRENT_LIST_LINE).
            assert!(tag.starts_with(&format!("L{line}")), "{name}: {tag}");
        }
        if cmake {
            let outcome = run_cmake(tmp.path(), &[], &[]);
            assert!(!outcome.failed, "seed {seed}: {}", outcome.log);
            let recorded: BTreeMap<String, (String, String)> = outcome
                .records
                .iter()
                .map(|r| (r.name.clone(), (r.repo.clone(), r.tag.clone())))
                .collect();
            let ours: BTreeMap<String, (String, String)> = pins
                .iter()
                .map(|(k, (r, g, _, _))| (k.clone(), (r.clone(), g.clone())))
                .collect();
            // Same values: CMake's location variables as pinprobe computes them, and the
            // line CMake reports for each declaring statement is pinprobe's pin line.
            assert_eq!(recorded, ours, "seed {seed}\n{}", all());
        }
    }
}

/// The shape of the bug report: `cmake/deps.cmake` defines `get_fa()`, which declares the
/// affected FlashAttention commit; the top level includes it and calls it. The finding points
/// at `cmake/deps.cmake` and the declaring line, and nothing is listed as unreached.
#[test]
fn the_affected_pin_of_a_helper_function_points_at_the_helper() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "cmake/deps.cmake",
        &format!(
            "# helpers\nfunction(get_fa)\n  FetchContent_Declare(vllm-flash-attn\n    GIT_REPOSITORY {FA}\n    GIT_TAG {AFFECTED})\n  FetchContent_MakeAvailable(vllm-flash-attn)\nendfunction()\n"
        ),
    );
    write(
        tmp.path(),
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\ninclude(FetchContent)\ninclude(cmake/deps.cmake)\n\n\nget_fa()\n",
    );
    if cmake_available() {
        let outcome = run_cmake(tmp.path(), &[], &[]);
        assert!(
            outcome.records.iter().any(|r| r.tag == AFFECTED),
            "{}",
            outcome.log
        );
    }
    let run = scan_offline_json(tmp.path());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let target = &json["targets"][0];
    let fa = target["components"]
        .as_array()
        .expect("components")
        .iter()
        .find(|c| c["declared_name"] == "vllm-flash-attn")
        .expect("the pin");
    assert_eq!(fa["file"], "cmake/deps.cmake", "{fa}");
    // The pin's line is its `GIT_TAG`'s (what SARIF points at), in the helper.
    assert_eq!(fa["line"], 5, "{fa}");
    assert!(
        !run.stdout.contains("no CMake configuration") && !run.stderr.contains("unreached"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}
