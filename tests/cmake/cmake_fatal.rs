//! A configuration that ends in `message(FATAL_ERROR)`, as real CMake runs it: CMake stops at
//! once, so a fetch after the error is never made (and an `ExternalProject_Add` before it never
//! downloads either: the build that would download is never generated). The shape of the cmake
//! sdist's prebuilt-archive choice: the archive's name comes from a condition on
//! `CMAKE_SIZEOF_VOID_P` (a fact of the platform), the 32-bit archive's hash `NA` guards a
//! `FATAL_ERROR`, and the URL is read through the name (`${${archive}_url}`). Real CMake
//! fetches the 64-bit archive where pointers are 8 bytes and stops before any fetch where they
//! are 4; pinprobe's pin must cover the 64-bit URL (as a value the platform sets), never name
//! only the 32-bit text.

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
    let covered = pin.possible.iter().any(|p| {
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
