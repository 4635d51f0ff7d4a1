//! Tests of the CMake evaluation as a whole on an in-memory view: what the default
//! configuration fetches, patch files, declarations no configuration reaches (read from their
//! own file), and bad input as errors within bounds. `tests/cmake_differential.rs` checks the
//! semantics against real CMake.

use super::*;
use crate::target::{TargetError, View};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Far above what these inputs take even unoptimised on a loaded machine: only a hang fails it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// An in-memory [`View`].
struct MemView(BTreeMap<String, Vec<u8>>);

impl View for MemView {
    fn describe(&self) -> String {
        "memory".into()
    }
    fn kind(&self) -> &'static str {
        "memory"
    }
    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        Ok(self
            .0
            .keys()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect())
    }
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        Ok(self.0.get(path).cloned())
    }
}

fn view(files: &[(&str, &[u8])]) -> MemView {
    MemView(
        files
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect(),
    )
}

fn eval(files: &[(&str, &str)]) -> Result<Evaluation, CmakeError> {
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, s)| (*p, s.as_bytes())).collect();
    evaluate(&view(&files))
}

fn default_fetches(e: &Evaluation) -> Vec<(String, Option<String>)> {
    let d = e
        .configurations
        .iter()
        .find(|c| c.default)
        .expect("a default configuration");
    d.fetches
        .iter()
        .filter(|f| f.only_if.is_empty())
        .map(|f| (f.name.clone(), f.tag.as_ref().map(|t| t.text.clone())))
        .collect()
}

const VLLM_FA: &str = "\
include(FetchContent)
if (DEFINED ENV{VLLM_FLASH_ATTN_SRC_DIR})
  set(VLLM_FLASH_ATTN_SRC_DIR $ENV{VLLM_FLASH_ATTN_SRC_DIR})
endif()
if(VLLM_FLASH_ATTN_SRC_DIR)
  FetchContent_Declare(vllm-flash-attn SOURCE_DIR ${VLLM_FLASH_ATTN_SRC_DIR})
else()
  FetchContent_Declare(
          vllm-flash-attn
          GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git
          GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5
          GIT_PROGRESS TRUE
          PATCH_COMMAND git apply ${CMAKE_CURRENT_LIST_DIR}/patches/../patches/one.patch
            COMMAND patch -p1 -i inside-the-dependency.patch
  )
endif()
FetchContent_MakeAvailable(vllm-flash-attn)
";

#[test]
fn vllm_shape_default_fetch_patches_and_the_override() {
    let files: Vec<(&str, &[u8])> = vec![
        (
            "CMakeLists.txt",
            b"project(x)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\n",
        ),
        (
            "cmake/external_projects/vllm_flash_attn.cmake",
            VLLM_FA.as_bytes(),
        ),
        ("cmake/external_projects/patches/one.patch", b""),
    ];
    let v = view(&files);
    let e = evaluate(&v).expect("evaluates");
    assert_eq!(
        default_fetches(&e),
        vec![(
            "vllm-flash-attn".to_string(),
            Some("506341a143fcabd4bb79052a7605ada727d6b3f5".to_string())
        )]
    );
    let d = e
        .configurations
        .iter()
        .find(|c| c.default)
        .expect("default");
    let fetch = d.fetches.first().expect("a fetch");
    assert_eq!(fetch.tag_line, Some(11));
    assert_eq!(
        fetch.patches(&v).expect("patches"),
        vec![
            "cmake/external_projects/patches/one.patch".to_string(),
            "inside-the-dependency.patch".to_string()
        ]
    );
    // The environment variable selects another configuration, with a local directory.
    assert!(
        e.configurations
            .iter()
            .any(|c| !c.default && c.fetches.iter().any(|f| f.local_source.is_some()))
    );
    assert!(e.unreached.is_empty(), "{:?}", e.unreached);
}

#[test]
fn declarations_no_configuration_reaches_are_kept_with_their_own_files_values() {
    let e = eval(&[
        (
            "CMakeLists.txt",
            "project(x)\ninclude(FetchContent)\nif(FALSE)\n  FetchContent_Declare(dead GIT_REPOSITORY r GIT_TAG t0)\nendif()\n",
        ),
        (
            "third_party/x.cmake",
            "set(PIN 506341a143fcabd4bb79052a7605ada727d6b3f5)\nFetchContent_Declare(moved\n  GIT_REPOSITORY https://example.invalid/fa.git\n  GIT_TAG ${PIN})\n",
        ),
        (
            "third_party/cpm/deps.cmake",
            "CPMAddPackage(\"gh:owner/proj#v1.2\")\n",
        ),
    ])
    .expect("evaluates");
    let got: Vec<(String, String, u32, Option<String>)> = e
        .unreached
        .iter()
        .map(|d| {
            (
                d.name.clone(),
                d.file.clone(),
                d.line,
                d.git_tag.as_ref().and_then(|a| a.value.clone()),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("dead".into(), "CMakeLists.txt".into(), 4, Some("t0".into())),
            (
                "proj".into(),
                "third_party/cpm/deps.cmake".into(),
                1,
                Some("v1.2".into())
            ),
            (
                "moved".into(),
                "third_party/x.cmake".into(),
                2,
                Some("506341a143fcabd4bb79052a7605ada727d6b3f5".into())
            ),
        ]
    );
}

#[test]
fn unterminated_constructs_name_their_opening_line() {
    let err = |src: &str| match eval(&[
        ("CMakeLists.txt", "project(x)\ninclude(cmake/a.cmake)\n"),
        ("cmake/a.cmake", src),
    ]) {
        Err(CmakeError::Syntax { file, line, .. }) => Some((file, line)),
        _ => None,
    };
    let at = |line| Some(("cmake/a.cmake".to_string(), line));
    assert_eq!(
        err("set(A b)\nFetchContent_Declare(x\n  GIT_TAG abc\n\n"),
        at(2)
    );
    assert_eq!(err("FetchContent_Declare(x\n  GIT_TAG \"abc)\n\n"), at(2));
    assert_eq!(err("\n\nFetchContent_Declare(x [==[ abc ]=] )"), at(3));
    assert_eq!(err("FetchContent_Declare(x ((\n)"), at(1));
}

#[test]
fn non_utf8_file_is_an_error() {
    let files: Vec<(&str, &[u8])> = vec![
        ("CMakeLists.txt", b"project(x)\ninclude(cmake/bad.cmake)\n"),
        ("cmake/bad.cmake", b"set(A \"caf\xe9\")\n"),
    ];
    match evaluate(&view(&files)) {
        Err(CmakeError::NotUtf8 { file, offset }) => {
            assert_eq!((file.as_str(), offset), ("cmake/bad.cmake", 10));
        }
        other => panic!("expected NotUtf8, got {other:?}"),
    }
}

#[test]
fn deeply_nested_parentheses_and_references_stay_bounded() {
    let depth = 100_000;
    let src = format!(
        "include(FetchContent)\nFetchContent_Declare(deep GIT_REPOSITORY r GIT_TAG abc CMAKE_ARGS {}{})\nFetchContent_MakeAvailable(deep)\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let start = Instant::now();
    let e = eval(&[("CMakeLists.txt", &src)]).expect("evaluates");
    // A hang guard (a quadratic or recursive reader would blow it), not a speed check.
    assert!(start.elapsed() < HANG_GUARD);
    assert_eq!(
        default_fetches(&e),
        vec![("deep".to_string(), Some("abc".to_string()))]
    );
    // Unbalanced: the error names the opening line, without recursion either.
    let src = format!("\nfoo({}", "(".repeat(depth));
    assert!(matches!(
        eval(&[("CMakeLists.txt", &src)]),
        Err(CmakeError::Syntax { line: 2, .. })
    ));
}

#[test]
fn a_million_parentheses_are_refused_not_stored() {
    // Found by the bad-input corpus: each nested `(` is an argument, and a million of them took
    // more than 512 MB. The tokenizer stops at its budget with a syntax error.
    let src = format!(
        "set(X {}{})\n",
        "(".repeat(1_000_000),
        ")".repeat(1_000_000)
    );
    let start = Instant::now();
    match eval(&[("CMakeLists.txt", &src)]) {
        Err(CmakeError::Syntax { message, .. }) => {
            assert!(message.contains("more than 1000000"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < HANG_GUARD);
}

#[test]
fn cmake_files_over_the_cap_are_refused() {
    let big = format!("# {}\n", "x".repeat(MAX_CMAKE_BYTES));
    match eval(&[("CMakeLists.txt", &big)]) {
        Err(e @ CmakeError::TooLarge { .. }) => {
            assert!(e.to_string().contains("cap for a CMake file"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}
