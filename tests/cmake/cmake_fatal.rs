//! A configuration that ends in `message(FATAL_ERROR)`, as real CMake runs it: CMake stops at
//! once, so a fetch after the error is never made (and an `ExternalProject_Add` before it never
//! downloads either: the build that would download is never generated). The shape of the cmake
//! sdist's prebuilt-archive choice: the archive's name comes from a condition on
//! `CMAKE_SIZEOF_VOID_P` (a fact of the platform), the 32-bit archive's hash `NA` guards a
//! `FATAL_ERROR`, and the URL is read through the name (`${${archive}_url}`). Real CMake
//! fetches the 64-bit archive where pointers are 8 bytes and stops before any fetch where they
//! are 4; pinprobe's pin must cover the 64-bit URL, never name only the 32-bit text. Since the
//! guard reads nothing but the platform's choice, pinprobe narrows the choice by it: the URL is
//! the 64-bit archive exactly, and an affected archive only the stopping side selects is no
//! pin (`src/pin/cmake/interp/join.rs`, `Run::narrow`).

use crate::cmake_differential::{cmake_available, run_cmake};
use crate::common;

use common::*;
use pinprobe::pin::components::Registry;
use pinprobe::pin::{cmake, from_evaluation};
use pinprobe::view::DirView;

const LISTS: &str = "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nset(l32_url \"NA\")\nset(l32_sha256 \"NA\")\nset(l64_url \"https://example.invalid/l64.tar.gz\")\nset(l64_sha256 \"0000000000000000000000000000000000000000000000000000000000000000\")\nset(archive l32)\nif(CMAKE_SIZEOF_VOID_P EQUAL 8)\n  set(archive l64)\nendif()\nif(${archive}_sha256 STREQUAL \"NA\")\n  message(FATAL_ERROR \"no prebuilt archive for ${archive}\")\nendif()\ninclude(ExternalProject)\nExternalProject_Add(bin URL ${${archive}_url} URL_HASH SHA256=${${archive}_sha256})\n";

#[test]
fn a_url_chosen_by_a_platform_fact_covers_what_cmake_fetches() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "CMakeLists.txt", LISTS);
    if cmake_available() {
        let def = |v: &str| vec![("CMAKE_SIZEOF_VOID_P".to_string(), v.to_string())];
        let wide = run_cmake(tmp.path(), &def("8"), &[]);
        assert!(!wide.failed, "{}", wide.log);
        assert_eq!(
            wide.records
                .iter()
                .map(|r| r.url.as_str())
                .collect::<Vec<_>>(),
            ["https://example.invalid/l64.tar.gz"],
            "{}",
            wide.log
        );
        let narrow = run_cmake(tmp.path(), &def("4"), &[]);
        assert!(
            narrow.failed && narrow.records.is_empty(),
            "{:?}",
            narrow.records
        );
    }
    let view = DirView::new(tmp.path());
    let eval = cmake::evaluate(&view).expect("evaluates");
    let pins = from_evaluation(&eval, &view, &Registry { components: vec![] }).expect("pins");
    let pin = pins
        .pins
        .iter()
        .find(|p| p.declared_name == "bin")
        .expect("the pin");
    // The 32-bit side ends before the fetch: the 64-bit archive exactly (or, were the
    // evaluation coarser, a value the platform sets).
    let covered = pin.url.as_deref() == Some("https://example.invalid/l64.tar.gz")
        || pin.possible.iter().any(|p| {
            p.url.as_deref() == Some("https://example.invalid/l64.tar.gz") || !p.set_by.is_empty()
        });
    assert!(covered, "{:#?}", pin.possible);
}

/// A `FATAL_ERROR` before the fetch in the only configuration: CMake fetches nothing, and
/// pinprobe reports no pin (the configuration failed before it).
#[test]
fn a_fetch_after_a_fatal_error_is_never_made() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nset(a_sha NA)\nset(n a)\nif(${n}_sha STREQUAL \"NA\")\n  message(FATAL_ERROR \"no\")\nendif()\ninclude(FetchContent)\nFetchContent_Declare(bin URL https://example.invalid/x.tar.gz)\nFetchContent_MakeAvailable(bin)\n",
    );
    if cmake_available() {
        let outcome = run_cmake(tmp.path(), &[], &[]);
        assert!(
            outcome.failed && outcome.records.is_empty(),
            "{:?}",
            outcome.records
        );
    }
    let view = DirView::new(tmp.path());
    let eval = cmake::evaluate(&view).expect("evaluates");
    let pins = from_evaluation(&eval, &view, &Registry { components: vec![] }).expect("pins");
    assert!(pins.pins.is_empty(), "{:#?}", pins.pins);
}

/// The same shape choosing between a text that is no archive (`NA`) and the affected
/// FlashAttention archive, under a name no component has: real CMake with 8-byte pointers
/// fetches the affected commit, so pinprobe never exits 0 (the URL is any value: unknown).
#[test]
fn an_affected_archive_behind_a_platform_fact_is_never_clean() {
    let affected = "https://github.com/vllm-project/flash-attention/archive/506341a143fcabd4bb79052a7605ada727d6b3f5.tar.gz";
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nset(l32_url \"NA\")\nset(l64_url \"{affected}\")\nset(archive l32)\nif(CMAKE_SIZEOF_VOID_P EQUAL 8)\n  set(archive l64)\nendif()\ninclude(FetchContent)\nFetchContent_Declare(bin URL ${{${{archive}}_url}})\nFetchContent_Populate(bin)\n"
        ),
    );
    if cmake_available() {
        let def = vec![("CMAKE_SIZEOF_VOID_P".to_string(), "8".to_string())];
        let wide = run_cmake(tmp.path(), &def, &[]);
        assert!(
            wide.records.iter().any(|r| r.url == affected),
            "{:?}\n{}",
            wide.records,
            wide.log
        );
    }
    let run = pinprobe(&[
        "scan",
        tmp.path().to_str().expect("utf-8"),
        "--offline",
        "--format",
        "json",
    ]);
    assert_ne!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}

const FA_ARCHIVE: &str = "https://github.com/vllm-project/flash-attention/archive/506341a143fcabd4bb79052a7605ada727d6b3f5.tar.gz";
const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

/// The cmake sdist's shape with the affected FlashAttention archive as the 32-bit choice,
/// under neutral names: the 32-bit side's hash `NA` guards a `FATAL_ERROR` before the fetch
/// (`extra_guard` is added to that condition). `fetch_first`: the 32-bit side's archive is
/// also fetched before the guard (a `FetchContent_Populate` downloads at once).
fn platform_choice(extra_guard: &str, fetch_first: bool) -> String {
    let early = if fetch_first {
        "FetchContent_Declare(early URL ${${archive}_url})\nFetchContent_Populate(early)\n"
    } else {
        ""
    };
    format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\ninclude(FetchContent)\nset(narrow_url \"{FA_ARCHIVE}\")\nset(narrow_sha256 \"NA\")\nset(wide_url \"https://example.invalid/wide.tar.gz\")\nset(wide_sha256 \"0000000000000000000000000000000000000000000000000000000000000000\")\nset(archive narrow)\nif(CMAKE_SIZEOF_VOID_P EQUAL 8)\n  set(archive wide)\nendif()\n{early}if(${{archive}}_sha256 STREQUAL \"NA\"{extra_guard})\n  message(FATAL_ERROR \"no prebuilt archive for ${{archive}}\")\nendif()\nFetchContent_Declare(bin URL ${{${{archive}}_url}})\nFetchContent_Populate(bin)\n"
    )
}

fn scan_json(dir: &std::path::Path) -> (i32, serde_json::Value, String) {
    let run = scan_offline_json(dir);
    let json = serde_json::from_str(&run.stdout).unwrap_or(serde_json::Value::Null);
    (run.code, json, format!("{}{}", run.stdout, run.stderr))
}

/// Every URL and reference pinprobe reports for a tree, its pins' and their possible values'.
fn reported(json: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for c in json["targets"][0]["components"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for k in ["url", "reference"] {
            if let Some(s) = c[k].as_str() {
                out.push(s.to_string());
            }
        }
        for p in c["possible"].as_array().into_iter().flatten() {
            for k in ["url", "reference"] {
                if let Some(s) = p[k].as_str() {
                    out.push(s.to_string());
                }
            }
        }
    }
    out
}

/// The affected archive is the choice of a side that real CMake ends with `FATAL_ERROR`
/// before any fetch: on no platform is it fetched, so pinprobe reports only the wide
/// archive, exactly, and the tree is clean.
#[test]
fn an_archive_only_a_fatal_side_selects_is_no_pin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "CMakeLists.txt", &platform_choice("", false));
    if cmake_available() {
        let def = |v: &str| vec![("CMAKE_SIZEOF_VOID_P".to_string(), v.to_string())];
        let wide = run_cmake(tmp.path(), &def("8"), &[]);
        assert!(!wide.failed, "{}", wide.log);
        let urls: Vec<&str> = wide.records.iter().map(|r| r.url.as_str()).collect();
        assert_eq!(
            urls,
            ["https://example.invalid/wide.tar.gz"],
            "{}",
            wide.log
        );
        for narrow in ["4", ""] {
            let o = run_cmake(tmp.path(), &def(narrow), &[]);
            assert!(
                o.failed && o.records.is_empty(),
                "{narrow}: {:?}",
                o.records
            );
        }
    }
    let (code, json, all) = scan_json(tmp.path());
    assert_eq!(
        reported(&json),
        ["https://example.invalid/wide.tar.gz"],
        "{all}"
    );
    assert_eq!(code, 0, "{all}");
}

/// The same, but the guard also depends on a `-D` option: with `-DALLOW_ANY=ON` real CMake
/// goes on past the guard on the 32-bit side and fetches the affected archive. pinprobe
/// cannot narrow (the condition reads an input besides the platform's choice), so the URL
/// stays any value: never clean.
#[test]
fn a_guard_that_an_option_can_open_narrows_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "CMakeLists.txt",
        &platform_choice(" AND NOT ALLOW_ANY", false),
    );
    if cmake_available() {
        let defs = vec![
            ("CMAKE_SIZEOF_VOID_P".to_string(), "4".to_string()),
            ("ALLOW_ANY".to_string(), "ON".to_string()),
        ];
        let o = run_cmake(tmp.path(), &defs, &[]);
        assert!(
            o.records.iter().any(|r| r.url == FA_ARCHIVE),
            "{:?}\n{}",
            o.records,
            o.log
        );
    }
    let (code, _, all) = scan_json(tmp.path());
    assert_ne!(code, 0, "{all}");
}

/// A fetch the fatal side makes before it stops: `FetchContent_Populate` downloads at once,
/// so real CMake fetches the affected archive on the 32-bit platform and then stops.
/// pinprobe reports it (the URL, read through the platform's choice, stays any value too).
#[test]
fn a_fetch_before_the_fatal_error_is_still_reported() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "CMakeLists.txt", &platform_choice("", true));
    if cmake_available() {
        let def = vec![("CMAKE_SIZEOF_VOID_P".to_string(), "4".to_string())];
        let o = run_cmake(tmp.path(), &def, &[]);
        assert!(o.failed, "{}", o.log);
        assert!(
            o.records.iter().any(|r| r.url == FA_ARCHIVE),
            "{:?}\n{}",
            o.records,
            o.log
        );
    }
    let (code, json, all) = scan_json(tmp.path());
    assert!(reported(&json).iter().any(|u| u == FA_ARCHIVE), "{all}");
    // Read through the platform's choice of name before the guard: any value besides (an
    // affected commit among them), so undecided, never clean.
    assert_eq!(code, 3, "{all}");
}

/// A branch on a `-D` option (joined where it changes no fetch) that fetches the affected
/// commit and then stops with `FATAL_ERROR`: CMake's configure-time download happened, so
/// the pin is reported (affected), never dropped with the branch or listed as unreached.
#[test]
fn a_fatal_branch_keeps_what_it_fetched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\ninclude(FetchContent)\nif(USE_PREBUILT)\n  set(x 1)\nelse()\n  FetchContent_Declare(kernels GIT_REPOSITORY {FA} GIT_TAG {AFFECTED})\n  FetchContent_MakeAvailable(kernels)\n  message(FATAL_ERROR \"unsupported\")\nendif()\n"
        ),
    );
    if cmake_available() {
        let o = run_cmake(tmp.path(), &[], &[]);
        assert!(o.failed, "{}", o.log);
        assert!(o.records.iter().any(|r| r.tag == AFFECTED), "{}", o.log);
    }
    let (code, json, all) = scan_json(tmp.path());
    assert!(reported(&json).iter().any(|r| r == AFFECTED), "{all}");
    assert_eq!(code, 1, "{all}");
}

/// Generated programs of the shape above: two facts of the platform (no default, so pinprobe
/// joins every condition on them) choose an archive name through nested `if()`s; some names'
/// hashes are `NA`, which a guard turns into `FATAL_ERROR` before the fetch through
/// `${${archive}_url}`. Over every setting of the facts, real CMake's fetched URLs must be
/// among pinprobe's values (never a hidden pin), and where pinprobe gives only literal values
/// (no value an input sets), exactly those (no pin only a stopped configuration selects).
#[test]
fn generated_fatal_guards_drop_exactly_the_stopped_choices() {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let cases: u64 = std::env::var("PINPROBE_FATAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let cmake = cmake_available();
    let mut exact = 0;
    for seed in 0..cases {
        let mut rng = StdRng::seed_from_u64(seed);
        let names = ["a0", "a1", "a2", "a3"];
        let mut text = String::from(
            "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\ninclude(FetchContent)\n",
        );
        let mut any_fetched = false;
        for n in names {
            let na = rng.random_bool(0.4);
            any_fetched |= !na;
            let sha = if na { "NA" } else { "0123" };
            text.push_str(&format!(
                "set({n}_url \"https://example.invalid/{n}.tar.gz\")\nset({n}_sha \"{sha}\")\n"
            ));
        }
        // At least one archive is fetched somewhere, or the guard stops every configuration.
        if !any_fetched {
            text.push_str("set(a0_sha \"0123\")\n");
        }
        let pick = |rng: &mut StdRng| names[rng.random_range(0..names.len())];
        text.push_str(&format!("set(archive {})\n", pick(&mut rng)));
        for _ in 0..rng.random_range(1..4) {
            let fact = if rng.random_bool(0.5) {
                "CMAKE_PP_F1"
            } else {
                "CMAKE_PP_F2"
            };
            if rng.random_bool(0.5) {
                let (x, y) = (pick(&mut rng), pick(&mut rng));
                text.push_str(&format!(
                    "if({fact})\n  set(archive {x})\nelse()\n  set(archive {y})\nendif()\n"
                ));
            } else {
                let x = pick(&mut rng);
                let other = if fact == "CMAKE_PP_F1" {
                    "CMAKE_PP_F2"
                } else {
                    "CMAKE_PP_F1"
                };
                text.push_str(&format!(
                    "if({fact})\n  if(NOT {other})\n    set(archive {x})\n  endif()\nendif()\n"
                ));
            }
        }
        text.push_str("if(${archive}_sha STREQUAL \"NA\")\n  message(FATAL_ERROR \"no archive for ${archive}\")\nendif()\nFetchContent_Declare(bin URL ${${archive}_url})\nFetchContent_Populate(bin)\n");
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), "CMakeLists.txt", &text);
        let view = DirView::new(tmp.path());
        let eval = cmake::evaluate(&view).expect("evaluates");
        assert!(eval.undecided.is_none(), "{:?}\n{text}", eval.undecided);
        let pins = from_evaluation(&eval, &view, &Registry { components: vec![] }).expect("pins");
        let mut literal: std::collections::BTreeSet<String> = Default::default();
        let mut any_value = false;
        for p in pins.pins.iter().filter(|p| p.declared_name == "bin") {
            if p.possible.is_empty() {
                literal.extend(p.url.clone());
            }
            for v in &p.possible {
                if v.set_by.is_empty() {
                    literal.extend(v.url.clone());
                } else {
                    any_value = true;
                }
            }
        }
        if !cmake {
            continue;
        }
        let mut fetched: std::collections::BTreeSet<String> = Default::default();
        for f1 in ["0", "1"] {
            for f2 in ["0", "1"] {
                let defs = vec![
                    ("CMAKE_PP_F1".to_string(), f1.to_string()),
                    ("CMAKE_PP_F2".to_string(), f2.to_string()),
                ];
                let o = run_cmake(tmp.path(), &defs, &[]);
                fetched.extend(o.records.iter().map(|r| r.url.clone()));
            }
        }
        let hidden: Vec<&String> = fetched.difference(&literal).collect();
        assert!(
            hidden.is_empty() || any_value,
            "seed {seed}: CMake fetches {hidden:?}, pinprobe reports {literal:?}\n{text}"
        );
        if !any_value {
            exact += 1;
            assert_eq!(
                literal, fetched,
                "seed {seed}: pinprobe reports a pin no configuration fetches\n{text}"
            );
        }
    }
    if cmake {
        assert!(exact * 2 >= cases, "too few exact: {exact} of {cases}");
    }
}
