//! Tests of the CMake evaluation as a whole on an in-memory view: what the default
//! configuration fetches, patch files, declarations no configuration reaches (read from their
//! own file), and bad input as errors within bounds. `tests/cmake/cmake_differential.rs` checks the
//! semantics against real CMake.

use super::*;
use crate::model::TargetKind;
use crate::view::{TargetError, View};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

mod join;

/// Far above what these inputs take even unoptimised on a loaded machine: only a hang fails it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// An in-memory [`View`].
struct MemView(BTreeMap<String, Vec<u8>>);

impl View for MemView {
    fn describe(&self) -> String {
        "memory".into()
    }
    fn kind(&self) -> TargetKind {
        TargetKind::SourceTree
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

/// The default configuration's first fetch.
fn first_default_fetch(e: &Evaluation) -> &Fetch {
    e.configurations
        .iter()
        .find(|c| c.default)
        .and_then(|d| d.fetches.first())
        .expect("a default configuration with a fetch")
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
    let fetch = first_default_fetch(&e);
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
fn patches_are_what_the_patch_step_names_files_globs_and_directories() {
    let top = "project(x)\ninclude(FetchContent)\nFetchContent_Declare(dep GIT_REPOSITORY r GIT_TAG t\n  UPDATE_COMMAND git apply ${CMAKE_CURRENT_SOURCE_DIR}/p/not-this.patch\n  PATCH_COMMAND git apply ${CMAKE_CURRENT_SOURCE_DIR}/p/one.patch\n  COMMAND git apply ${CMAKE_CURRENT_SOURCE_DIR}/globbed/*.patch\n  COMMAND apply-all ${CMAKE_CURRENT_SOURCE_DIR}/dir\n  COMMAND git apply ${CMAKE_CURRENT_SOURCE_DIR}/p/one.patch -DPATCH=rel.diff\n  BINARY_DIR ${CMAKE_BINARY_DIR}/b\n  TEST_COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/p/not-this.patch)\nFetchContent_MakeAvailable(dep)\n";
    let files: Vec<(&str, &[u8])> = vec![
        ("CMakeLists.txt", top.as_bytes()),
        ("p/one.patch", b""),
        ("p/not-this.patch", b""),
        ("globbed/a.patch", b""),
        ("globbed/b.diff", b""),
        ("globbed/c.patch", b""),
        ("globbed/readme.md", b""),
        ("dir/x.diff", b""),
        ("dir/y.txt", b""),
        ("dir/sub/z.patch", b""),
    ];
    let v = view(&files);
    let e = evaluate(&v).expect("evaluates");
    let fetch = first_default_fetch(&e);
    // The patch step's files in order, each once: a file, a glob's patch files, a directory's
    // patch files, a `-D` value naming one; not what other steps name.
    assert_eq!(
        fetch.patches(&v).expect("patches"),
        vec![
            "p/one.patch",
            "globbed/a.patch",
            "globbed/c.patch",
            "dir/sub/z.patch",
            "dir/x.diff",
            "rel.diff",
        ]
    );
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
        (
            "third_party/pop.cmake",
            "set(PT c1 CACHE STRING \"\")\nFetchContent_Populate(pop GIT_REPOSITORY r GIT_TAG ${PT})\n",
        ),
        (
            "third_party/inputs.cmake",
            "FetchContent_Declare(from_env GIT_REPOSITORY r GIT_TAG $ENV{PP_TAG})\nFetchContent_Declare(from_cache GIT_REPOSITORY r GIT_TAG $CACHE{PP_TAG})\nFetchContent_Declare(from_var GIT_REPOSITORY r GIT_TAG ${PP_TAG})\n",
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
            // A value the file's own set()s do not give stays unresolved, wherever it would
            // come from.
            (
                "from_env".into(),
                "third_party/inputs.cmake".into(),
                1,
                None
            ),
            (
                "from_cache".into(),
                "third_party/inputs.cmake".into(),
                2,
                None
            ),
            (
                "from_var".into(),
                "third_party/inputs.cmake".into(),
                3,
                None
            ),
            // A cache set()'s value is what comes before CACHE; a populate declares too.
            (
                "pop".into(),
                "third_party/pop.cmake".into(),
                2,
                Some("c1".into())
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
    // The cap itself is allowed: a file of exactly MAX_CMAKE_BYTES is read.
    let at_cap = format!("# {}\n", "x".repeat(MAX_CMAKE_BYTES - 3));
    assert_eq!(at_cap.len(), MAX_CMAKE_BYTES);
    assert!(tokenize_file("CMakeLists.txt", at_cap.as_bytes()).is_ok());
    assert!(matches!(
        tokenize_file("CMakeLists.txt", format!("{at_cap}\n").as_bytes()),
        Err(CmakeError::TooLarge { size, .. }) if size == MAX_CMAKE_BYTES + 1
    ));
}

/// The fetch `k`'s tag text in each configuration, by preset (`None`: no preset).
fn tags_by_setup(e: &Evaluation) -> Vec<(Option<String>, bool, String)> {
    e.configurations
        .iter()
        .flat_map(|c| {
            c.fetches.iter().filter(|f| f.name == "k").map(|f| {
                (
                    c.preset.clone(),
                    c.default,
                    f.tag.as_ref().map(|t| t.text.clone()).unwrap_or_default(),
                )
            })
        })
        .collect()
}

const FETCH_K: &str = "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG ${T})\nFetchContent_MakeAvailable(k)\n";

/// Three independent decisions on `-D` inputs: eight configurations, each its own tag. The
/// budget bounds them: eight fit a budget of eight; a budget of seven is undecided, and a
/// budget of four stops as soon as the decisions seen open more than it, before running them.
#[test]
fn a_summarised_call_with_other_effects_is_unknown() {
    // A function whose return() depends on an input is summarised: what it sets in its caller
    // becomes unknown. Any other effect it has cannot be summarised, so the evaluation is.
    for (effect, named) in [
        ("option(OPT_IN \"\" ON)", "option()"),
        ("include(${CMAKE_CURRENT_SOURCE_DIR}/x.cmake)", "include()"),
        ("project(p2 LANGUAGES NONE)", "project()"),
        ("file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/w.txt x)", "file()"),
        (
            "FetchContent_Declare(d GIT_REPOSITORY r GIT_TAG t)",
            "FetchContent_Declare()",
        ),
        ("set(CV x CACHE STRING \"\")", "cache"),
        ("set(ENV{PP_SET} x)", "environment"),
        (
            "function(defined_inside)\n  endfunction()",
            "defines a function",
        ),
    ] {
        let top = format!(
            "include(FetchContent)\nfunction(f)\n  if(PP_IN)\n    return()\n  endif()\n  if(PP_IN2)\n    return()\n  endif()\n  if(PP_IN3)\n    return()\n  endif()\n  if(PP_IN4)\n    return()\n  endif()\n  {effect}\n  set(T x PARENT_SCOPE)\nendfunction()\nf()\n{FETCH_K}"
        );
        let files: Vec<(&str, &[u8])> = vec![("CMakeLists.txt", top.as_bytes()), ("x.cmake", b"")];
        let e = evaluate(&view(&files)).expect("evaluates");
        let why = e.undecided.unwrap_or_default();
        assert!(why.contains(named), "{effect}: {why:?}");
    }
    // Only parent-scope writes (and calls of functions that have no other effect): decided.
    let top = format!(
        "include(FetchContent)\nfunction(g)\n  set(G_LOCAL x)\nendfunction()\nfunction(f)\n  if(PP_IN)\n    return()\n  endif()\n  if(PP_IN2)\n    return()\n  endif()\n  if(PP_IN3)\n    return()\n  endif()\n  if(PP_IN4)\n    return()\n  endif()\n  g()\n  message(STATUS \"in f\")\n  string(APPEND L x)\n  set(T x PARENT_SCOPE)\nendfunction()\nf()\n{FETCH_K}"
    );
    let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
    assert_eq!(e.undecided, None);
    // What it propagates with return(PROPAGATE) is unknown in the caller, not the value from
    // before the call.
    let top = format!(
        "include(FetchContent)\nset(T before)\nfunction(f)\n  if(PP_IN)\n    return()\n  endif()\n  if(PP_IN2)\n    return()\n  endif()\n  if(PP_IN3)\n    return()\n  endif()\n  if(PP_IN4)\n    return()\n  endif()\n  set(T after)\n  return(PROPAGATE T)\nendfunction()\nf()\n{FETCH_K}"
    );
    let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
    assert_eq!(e.undecided, None);
    let tag = e
        .configurations
        .iter()
        .flat_map(|c| &c.fetches)
        .find_map(|f| f.tag.clone())
        .expect("a tag");
    assert!(!tag.is_exact(), "{tag:?}");
}

#[test]
fn a_set_whose_whole_name_comes_from_an_input_is_unknown() {
    for set in ["set(${PP_NAME} v)", "set(ENV{${PP_NAME}} v)"] {
        let top = format!("include(FetchContent)\nset(T t)\n{set}\n{FETCH_K}");
        let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
        let why = e.undecided.unwrap_or_default();
        assert!(why.contains("name comes from an input"), "{set}: {why:?}");
    }
    // A written prefix and suffix bound what it may set: decided, the variables with both
    // unknown, every other one (`CMAKE_SOURCE_DIR` after `set(CMAKE_${LANG}_FLAGS)`) known.
    for (set, read, known) in [
        ("set(X_${PP_NAME} v)", "X_A", false),
        ("set(X_${PP_NAME} v)", "X_", false),
        ("set(X_${PP_NAME} v)", "Y_A", true),
        ("set(CMAKE_${PP_L}_FLAGS v)", "CMAKE_CXX_FLAGS", false),
        ("set(CMAKE_${PP_L}_FLAGS v)", "CMAKE__FLAGS", false),
        ("set(CMAKE_${PP_L}_FLAGS v)", "CMAKE_SOURCE_DIR", true),
        ("set(CMAKE_${PP_L}_FLAGS v)", "CMAKE_FLAGS", true),
        ("set(A${PP_L}B${PP_M}C v)", "AxBxC", false),
        ("set(A${PP_L}B${PP_M}C v)", "AxBx", true),
    ] {
        let e = eval_fetching_t(&format!("set({read} t)\n{set}\nset(T \"${{{read}}}\")\n"));
        assert_eq!(e.undecided, None, "{set}");
        assert_eq!(
            any_tag(&e).is_exact(),
            known,
            "{set} then {read}: {:?}",
            any_tag(&e)
        );
    }
}

#[test]
fn the_trees_own_cpm_cmake_is_not_run() {
    // CPMAddPackage is modelled as CPM defines it; the tree's copy of CPM.cmake (or the
    // get_cpm.cmake that downloads it) is not read.
    for file in ["cmake/CPM.cmake", "cmake/get_cpm.cmake"] {
        let top = format!("include(FetchContent)\nset(T t)\ninclude({file})\n{FETCH_K}");
        let files: Vec<(&str, &[u8])> = vec![
            ("CMakeLists.txt", top.as_bytes()),
            (file, b"set(T from-the-file)\n"),
        ];
        let e = evaluate(&view(&files)).expect("evaluates");
        let tags: Vec<String> = tags_by_setup(&e).into_iter().map(|t| t.2).collect();
        assert_eq!(tags, ["t"], "{file}");
    }
}

#[test]
fn a_condition_after_a_call_still_forks() {
    // After a function call returns, a condition on an input is a decision again (two
    // configurations), not a join into one.
    let top = format!(
        "include(FetchContent)\nfunction(f)\n  set(U u PARENT_SCOPE)\nendfunction()\nf()\nset(T a)\nif(PP_A)\n  set(T b)\nendif()\n{FETCH_K}"
    );
    let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
    let mut tags: Vec<String> = tags_by_setup(&e).into_iter().map(|t| t.2).collect();
    tags.sort();
    assert_eq!(tags, ["a", "b"]);
    // A while() on an input at the top level is a decision too.
    let top = format!(
        "include(FetchContent)\nset(T a)\nwhile(PP_W AND NOT T STREQUAL \"ab\")\n  string(APPEND T b)\nendwhile()\n{FETCH_K}"
    );
    let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
    assert_eq!(e.undecided, None);
    let mut tags: Vec<String> = tags_by_setup(&e).into_iter().map(|t| t.2).collect();
    tags.sort();
    assert_eq!(tags, ["a", "ab"]);
}

#[test]
fn commands_that_run_code_pinprobe_cannot_see_are_unknown() {
    for call in [
        "cmake_language(EVAL CODE \"set(T x)\")",
        "variable_watch(T)",
        "load_cache(${CMAKE_BINARY_DIR} READ_WITH_PREFIX P_ T)",
    ] {
        let top = format!("include(FetchContent)\nset(T t)\n{call}\n{FETCH_K}");
        let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
        assert!(e.undecided.is_some(), "{call}");
    }
}

#[test]
fn the_configuration_budget_bounds_the_forks() {
    let top = format!(
        "include(FetchContent)\nset(T t)\nif(PP_A)\n  string(APPEND T a)\nendif()\nif(PP_B)\n  string(APPEND T b)\nendif()\nif(PP_C)\n  string(APPEND T c)\nendif()\n{FETCH_K}"
    );
    let v = view(&[("CMakeLists.txt", top.as_bytes())]);
    let with = |n| {
        evaluate_with(
            &v,
            Limits {
                configurations: n,
                ..Limits::default()
            },
        )
        .expect("evaluates")
    };
    let all = with(8);
    assert_eq!(all.undecided, None);
    let mut tags: Vec<String> = tags_by_setup(&all).into_iter().map(|t| t.2).collect();
    tags.sort();
    assert_eq!(tags, ["t", "ta", "tab", "tabc", "tac", "tb", "tbc", "tc"]);
    assert_eq!(
        tags_by_setup(&all)
            .iter()
            .filter(|t| t.1)
            .map(|t| t.2.as_str())
            .collect::<Vec<_>>(),
        ["t"],
        "one default configuration, every input unset"
    );
    let seven = with(7);
    assert_eq!(
        seven.undecided.as_deref(),
        Some("more than 7 configurations (combinations of conditions on inputs)")
    );
    let four = with(4);
    assert!(four.undecided.is_some());
    assert!(
        four.configurations.len() < 4,
        "{} configurations run under a budget of 4",
        four.configurations.len()
    );
}

/// `CMakePresets.json` and `CMakeUserPresets.json`: each configure preset is a configuration of
/// its own (never the default), its cache variables its own first, then inherited ones (one
/// name or a list, depth-bounded, cycles cut); strings, booleans and `{"value": ...}` objects.
#[test]
fn presets_are_configurations_with_their_cache_variables() {
    let top = format!(
        "include(FetchContent)\nset(T \"${{PP_TAG}}-${{PP_FLAG}}-${{PP_OFF}}-${{PP_USER}}-${{PP_DEEP}}-${{PP_DEEPER}}\")\n{FETCH_K}"
    );
    let mut chain = String::new();
    for i in 0..18 {
        let vars = match i {
            16 => r#", "cacheVariables": {"PP_DEEP": "d16"}"#,
            17 => r#", "cacheVariables": {"PP_DEEPER": "d17"}"#,
            _ => "",
        };
        chain.push_str(&format!(
            r#", {{"name": "p{i}", "inherits": "p{}"{vars}}}"#,
            i + 1
        ));
    }
    let presets = format!(
        r#"{{"version": 3, "configurePresets": [
  {{"name": "base", "hidden": true, "cacheVariables": {{"PP_TAG": "from-base", "PP_FLAG": true}}}},
  {{"name": "child", "inherits": "base", "cacheVariables": {{"PP_TAG": {{"type": "STRING", "value": "from-child"}}}}}},
  {{"name": "multi", "inherits": ["child", "base"], "cacheVariables": {{"PP_OFF": {{"value": false}}, "PP_FLAG": false}}}},
  {{"name": "numbers", "cacheVariables": {{"PP_TAG": 7, "PP_FLAG": {{"value": 7}}, "PP_OFF": {{"value": true}}}}}},
  {{"name": "cycle-a", "inherits": "cycle-b", "cacheVariables": {{"PP_TAG": "a"}}}},
  {{"name": "cycle-b", "inherits": "cycle-a", "cacheVariables": {{"PP_FLAG": "b"}}}}
  {chain}
]}}"#
    );
    let user = r#"{"version": 3, "configurePresets": [{"name": "mine", "inherits": "child", "cacheVariables": {"PP_USER": "u"}}]}"#;
    let v = view(&[
        ("CMakeLists.txt", top.as_bytes()),
        ("CMakePresets.json", presets.as_bytes()),
        ("CMakeUserPresets.json", user.as_bytes()),
    ]);
    let e = evaluate(&v).expect("evaluates");
    let of = |name: &str| -> Vec<(bool, String)> {
        tags_by_setup(&e)
            .into_iter()
            .filter(|t| t.0.as_deref() == Some(name))
            .map(|t| (t.1, t.2))
            .collect()
    };
    let one = |tag: &str| vec![(false, tag.to_string())];
    assert_eq!(of("base"), one("from-base-TRUE----"));
    assert_eq!(of("child"), one("from-child-TRUE----"));
    assert_eq!(of("multi"), one("from-child-FALSE-FALSE---"));
    assert_eq!(of("numbers"), one("--TRUE---"));
    assert_eq!(of("mine"), one("from-child-TRUE--u--"));
    assert_eq!(of("cycle-a"), one("a-b----"));
    assert_eq!(of("p0"), one("----d16-"));
    assert_eq!(of("p1"), one("----d16-d17"));
    assert_eq!(
        tags_by_setup(&e).iter().filter(|t| t.1).count(),
        1,
        "only the setup without a preset is the default"
    );
}

/// `-D<NAME>=<value>` in `setup.py`, `*.sh` and `Dockerfile*` up to two directories deep is one
/// more setup: literal values as written (a `:TYPE` dropped), computed or conflicting ones a
/// value set by a build script (an input, so never the default).
#[test]
fn build_script_definitions_are_one_more_setup() {
    let top = format!(
        "include(FetchContent)\nset(T \"${{PP_LIT}}-${{PP_TYPED}}-${{PP_SAME}}-${{PP_DEEP}}\")\nif(PP_BRACES STREQUAL \"<set by a build script>\")\n  string(APPEND T -braces)\nendif()\nif(PP_DOLLAR STREQUAL \"<set by a build script>\")\n  string(APPEND T -dollar)\nendif()\nif(PP_PERCENT STREQUAL \"<set by a build script>\")\n  string(APPEND T -percent)\nendif()\nif(PP_EMPTY STREQUAL \"<set by a build script>\")\n  string(APPEND T -empty)\nendif()\nif(PP_CONFLICT STREQUAL \"<set by a build script>\")\n  string(APPEND T -conflict)\nendif()\n{FETCH_K}"
    );
    let setup = "cmake_args = ['-DPP_LIT=lit', '-DPP_TYPED:BOOL=ON', '-DPP_BRACES={}'.format(x), '-DPP_SAME=s', '-DPP_CONFLICT=one']\n";
    let script =
        "cmake -DPP_DOLLAR=$X -DPP_PERCENT=%x -DPP_EMPTY= -DPP_SAME=s -DPP_CONFLICT=two ..\n";
    let v = view(&[
        ("CMakeLists.txt", top.as_bytes()),
        ("setup.py", setup.as_bytes()),
        ("tools/ci/build.sh", script.as_bytes()),
        ("docker/Dockerfile.cuda", b"RUN cmake -DPP_LIT=lit .\n"),
        ("a/b/c/build.sh", b"cmake -DPP_DEEP=deep\n"),
        ("notes.txt", b"-DPP_LIT=other\n"),
    ]);
    let e = evaluate(&v).expect("evaluates");
    let scripted: Vec<(bool, String)> = tags_by_setup(&e)
        .into_iter()
        .filter(|t| t.0.as_deref() == Some("build scripts"))
        .map(|t| (t.1, t.2))
        .collect();
    assert_eq!(
        scripted,
        vec![(
            false,
            "lit-ON-s--braces-dollar-percent-empty-conflict".to_string()
        )]
    );
    let none = view(&[("CMakeLists.txt", top.as_bytes())]);
    assert!(
        evaluate(&none)
            .expect("evaluates")
            .configurations
            .iter()
            .all(|c| c.preset.is_none()),
        "no build script, no setup for it"
    );
}

/// Files the evaluator reads: `CMakeLists.txt` and `*.cmake` (any case) at any depth; CPM's own
/// script (`CPM.cmake`, `get_cpm.cmake`) is the command, its declaring calls are no pins; a file
/// that does not parse still names each declaring command in it, by line.
#[test]
fn unreached_declarations_come_from_cmake_files_only() {
    let e = eval(&[
        ("CMakeLists.txt", "project(x)\n"),
        (
            "cmake/CPM.cmake",
            "function(CPMAddPackage)\n  FetchContent_Declare(${name} GIT_TAG ${tag})\nendfunction()\n",
        ),
        (
            "cmake/get_cpm.cmake",
            "FetchContent_Declare(cpm GIT_TAG v1)\n",
        ),
        ("deps/Upper.CMAKE", "FetchContent_Declare(upper GIT_TAG u1)\n"),
        ("sub/CMakeLists.txt", "ExternalProject_Add(ep GIT_TAG e1)\n"),
        ("notes.txt", "FetchContent_Declare(notes GIT_TAG n1)\n"),
        ("notes.cmake.txt", "FetchContent_Declare(notes2 GIT_TAG n2)\n"),
        (
            "broken.cmake",
            "set(A b)\nFetchContent_Populate(p1 GIT_TAG x)\nExternalProject_Add(e2\nCPMAddPackage(c3\nfetchcontent_declare(d4 \"unterminated\n",
        ),
    ])
    .expect("evaluates");
    let got: Vec<(String, String, u32, Command)> = e
        .unreached
        .iter()
        .map(|d| (d.file.clone(), d.name.clone(), d.line, d.command))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "broken.cmake".into(),
                String::new(),
                2,
                Command::FetchContentPopulate
            ),
            (
                "broken.cmake".into(),
                String::new(),
                3,
                Command::ExternalProjectAdd
            ),
            (
                "broken.cmake".into(),
                String::new(),
                4,
                Command::CpmAddPackage
            ),
            (
                "broken.cmake".into(),
                String::new(),
                5,
                Command::FetchContentDeclare
            ),
            (
                "deps/Upper.CMAKE".into(),
                "upper".into(),
                1,
                Command::FetchContentDeclare
            ),
            (
                "sub/CMakeLists.txt".into(),
                "ep".into(),
                1,
                Command::ExternalProjectAdd
            ),
        ]
    );
}

/// Evaluate `include(FetchContent)`, `body`, then [`FETCH_K`] (which fetches `k` at `${T}`).
fn eval_fetching_t(body: &str) -> Evaluation {
    eval(&[(
        "CMakeLists.txt",
        &format!("include(FetchContent)\n{body}{FETCH_K}"),
    )])
    .expect("evaluates")
}

/// The first tag any configuration fetches.
fn any_tag(e: &Evaluation) -> Value {
    e.configurations
        .iter()
        .flat_map(|c| &c.fetches)
        .find_map(|f| f.tag.clone())
        .expect("a tag")
}

/// `elseif()`/`else()` belong to an `if()`: inside a `foreach()` they are a syntax error, as
/// CMake reports ("Flow control statements are not properly nested").
#[test]
fn else_outside_an_if_is_a_syntax_error() {
    for stray in ["else()", "elseif(X)"] {
        let top = format!("foreach(x a)\n  {stray}\nendforeach()\n");
        match eval(&[("CMakeLists.txt", &top)]) {
            Err(CmakeError::Syntax { line, message, .. }) => {
                assert_eq!(line, 2, "{stray}");
                assert!(message.contains("outside if()"), "{stray}: {message}");
            }
            other => panic!("{stray}: {other:?}"),
        }
    }
}

/// `CMAKE_BUILD_TYPE` is a name the user sets with `-D` (empty by default for the Makefile
/// and Ninja generators), unlike the other `CMAKE_` names pinprobe cannot know: a condition
/// on it forks, and the default configuration takes the empty build type.
#[test]
fn the_build_type_is_an_input_with_a_default() {
    let e = eval_fetching_t(
        "if(CMAKE_BUILD_TYPE STREQUAL \"Release\")\n  set(T rel)\nelse()\n  set(T dbg)\nendif()\n",
    );
    assert_eq!(e.undecided, None);
    assert_eq!(
        default_fetches(&e),
        [("k".to_string(), Some("dbg".to_string()))]
    );
    let other = e
        .configurations
        .iter()
        .find(|c| !c.default)
        .expect("the Release configuration");
    assert_eq!(
        other.assumptions.first().map(|a| a.inputs.clone()),
        Some(vec![Input::Cache("CMAKE_BUILD_TYPE".into())])
    );
}

/// The build directories are not in the tree: values with the build directory as their input
/// (the `<binary>` placeholder as text), never the empty text of an unset name.
#[test]
fn the_build_directories_are_an_opaque_input() {
    for name in [
        "CMAKE_BINARY_DIR",
        "PROJECT_BINARY_DIR",
        "CMAKE_CURRENT_BINARY_DIR",
    ] {
        let top = format!("include(FetchContent)\nset(T \"${{{name}}}/x\")\n{FETCH_K}");
        let e = eval(&[("CMakeLists.txt", &top)]).expect("evaluates");
        let tag = first_default_fetch(&e).tag.clone().expect("a tag");
        assert!(
            tag.inputs
                .contains(&Input::Opaque("the build directory".into())),
            "{name}: {tag:?}"
        );
        assert!(
            tag.text.ends_with("/x") && tag.text.len() > 2,
            "{name}: {tag:?}"
        );
    }
}

/// The command budget counts every command run: a program of `n` commands fits a budget of
/// `n` and not of `n - 1`, whatever `n` is.
#[test]
fn the_command_budget_counts_each_command_run() {
    for sets in [1usize, 7, 40] {
        let mut top = String::from("include(FetchContent)\n");
        for i in 0..sets {
            top.push_str(&format!("set(T t{i})\n"));
        }
        top.push_str(FETCH_K);
        let commands = sets + 3;
        let v = view(&[("CMakeLists.txt", top.as_bytes())]);
        let with = |steps| {
            evaluate_with(
                &v,
                Limits {
                    steps,
                    ..Limits::default()
                },
            )
            .expect("evaluates")
        };
        let fits = with(commands);
        assert_eq!(fits.undecided, None, "{sets} sets, budget {commands}");
        let over = with(commands - 1).undecided.unwrap_or_default();
        assert!(
            over.contains(&format!("budget of {}", commands - 1)),
            "{sets} sets: {over:?}"
        );
    }
}

/// Messages name the file and line: a failed configuration's error, a decision's condition
/// (as written, quotes kept).
#[test]
fn messages_name_the_file_and_line_and_conditions_as_written() {
    let top = format!(
        "include(FetchContent)\nset(T t)\nif(PP_W STREQUAL \"a b\")\n  set(T w)\nendif()\n{FETCH_K}foreach(i RANGE 5 1 2)\nendforeach()\n"
    );
    let e = eval(&[("CMakeLists.txt", &top)]).expect("evaluates");
    let d = e
        .configurations
        .iter()
        .find(|c| c.default)
        .expect("a default configuration");
    let failed = d.failed.clone().unwrap_or_default();
    assert!(failed.starts_with("CMakeLists.txt:8: "), "{failed:?}");
    let other = e
        .configurations
        .iter()
        .find(|c| !c.default)
        .expect("the other outcome");
    assert_eq!(
        other.assumptions.first().map(|a| a.condition.as_str()),
        Some("CMakeLists.txt:3: if(PP_W STREQUAL \"a b\")")
    );
}

/// An unquoted reference to an empty-by-default input is dropped from the arguments by
/// default: a decision with a default (the list has one element), not a loss of the default.
#[test]
fn an_unquoted_empty_input_is_a_decision_with_a_default() {
    let e = eval_fetching_t("set(L a ${PP_E})\nlist(LENGTH L n)\nset(T len${n})\n");
    assert_eq!(e.undecided, None);
    assert_eq!(
        default_fetches(&e),
        [("k".to_string(), Some("len1".to_string()))]
    );
}

/// The arguments of one command are bounded at 16 values' worth of bytes: sixteen values of
/// the largest size fit exactly, seventeen are undecided (the budget, not a crash), and a few
/// values of that size are far inside it.
#[test]
fn one_commands_arguments_are_bounded_at_sixteen_values() {
    let max = super::value::MAX_VALUE;
    for (n, over) in [(2usize, false), (16, false), (17, true)] {
        let refs = vec!["${A}"; n].join(" ");
        let e = eval_fetching_t(&format!(
            "string(REPEAT x {max} A)\nmessage({refs})\nset(T t)\n"
        ));
        let why = e.undecided.unwrap_or_default();
        assert_eq!(why.contains("arguments over"), over, "{n} values: {why:?}");
        if !over {
            assert_eq!(why, "", "{n} values");
        }
    }
}

/// A command pinprobe does not model may set any variable it names, whatever its characters
/// (`get_property("a:b" ...)` sets `a:b`, and `${${n}}` reads it back): their values become
/// unknown, with the command as their input.
#[test]
fn an_unmodelled_command_makes_the_names_it_is_given_unknown() {
    for name in ["T", "_T_1", "T1x", "1T", "a-b", "a.b", "a:b c", "a/b+c"] {
        let e = eval_fetching_t(&format!(
            "set(N \"{name}\")\nset(\"{name}\" t)\ncmake_host_system_information(RESULT \"{name}\" QUERY HOSTNAME)\nset(T ${{${{N}}}})\n"
        ));
        let tag = first_default_fetch(&e).tag.clone().expect("a tag");
        assert!(
            tag.inputs
                .contains(&Input::Opaque("cmake_host_system_information()".into())),
            "{name}: {tag:?}"
        );
    }
}

/// A declaration no configuration reaches is read from its own file: a tag from the
/// environment or the cache is unknown there, a `set()` in the file gives its value (the words
/// before `CACHE` or `PARENT_SCOPE`), and `FetchContent_Populate` declares too.
#[test]
fn unreached_declarations_read_their_values_from_their_file() {
    let e = eval(&[
        ("CMakeLists.txt", "project(x)\n"),
        (
            "cmake/deps.cmake",
            "set(UT abc CACHE STRING \"\")\nset(UP def PARENT_SCOPE)\nFetchContent_Declare(env GIT_REPOSITORY r GIT_TAG x$ENV{PP_T})\nFetchContent_Declare(cache GIT_REPOSITORY r GIT_TAG x$CACHE{PP_T})\nFetchContent_Declare(set GIT_REPOSITORY r GIT_TAG \"${UT}\")\nFetchContent_Declare(up GIT_REPOSITORY r GIT_TAG \"${UP}\")\nFetchContent_Populate(pop GIT_REPOSITORY r GIT_TAG p1)\n",
        ),
    ])
    .expect("evaluates");
    let got: Vec<(String, Command, Option<String>)> = e
        .unreached
        .iter()
        .map(|d| {
            (
                d.name.clone(),
                d.command,
                d.git_tag.as_ref().and_then(|t| t.value.clone()),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("env".into(), Command::FetchContentDeclare, None),
            ("cache".into(), Command::FetchContentDeclare, None),
            (
                "set".into(),
                Command::FetchContentDeclare,
                Some("abc".into())
            ),
            (
                "up".into(),
                Command::FetchContentDeclare,
                Some("def".into())
            ),
            (
                "pop".into(),
                Command::FetchContentPopulate,
                Some("p1".into())
            ),
        ]
    );
}

/// Inside a function, a `while()` on an input is not a decision the run forks on: the call is
/// summarised, one configuration, what it sets in its caller unknown. (An unquoted empty
/// argument on an input is joined there: see
/// `an_empty_argument_on_an_input_is_joined_unless_relevant`.)
#[test]
fn a_while_or_an_empty_argument_on_an_input_inside_a_function_summarises_the_call() {
    let body = "  while(PP_W)\n    set(T a PARENT_SCOPE)\n    break()\n  endwhile()\n";
    {
        let e = eval_fetching_t(&format!(
            "set(T b)\nfunction(f)\n{body}endfunction()\nf()\n"
        ));
        assert_eq!(e.undecided, None, "{body}");
        assert_eq!(e.configurations.len(), 1, "{body}: {:#?}", e.configurations);
        let tag = any_tag(&e);
        assert!(
            tag.inputs
                .iter()
                .any(|i| matches!(i, Input::Opaque(w) if w.contains("the result of f()"))),
            "{body}: {tag:?}"
        );
    }
}

/// Build-graph commands (targets, options, install rules) set no variable and decide
/// nothing, even on an input; `find_package()` sets what it finds as unknown values.
#[test]
fn target_commands_set_nothing_and_find_package_sets_what_it_finds() {
    let e = eval_fetching_t(
        "set(T t)\nadd_library(T INTERFACE ${PP_E})\ntarget_link_libraries(T INTERFACE T)\ninstall(TARGETS T)\n",
    );
    assert_eq!(e.configurations.len(), 1, "{:#?}", e.configurations);
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "t", "{tag:?}");
    for var in ["Foo_FOUND", "FOO_FOUND", "Foo_VERSION", "Foo_DIR"] {
        let e = eval_fetching_t(&format!(
            "set({var} before)\nfind_package(Foo QUIET)\nset(T \"${{{var}}}\")\n"
        ));
        let tag = any_tag(&e);
        assert!(
            tag.text.is_empty()
                && tag
                    .inputs
                    .contains(&Input::Opaque("find_package(Foo)".into())),
            "{var}: {tag:?}"
        );
    }
}

/// `file(READ)` of a file the configuration wrote, of a file outside the tree or of a path
/// from an input is unknown (not the tree's content, not an error); the file commands that
/// only touch the disk set no variable.
#[test]
fn file_reads_of_written_or_outside_files_are_unknown() {
    for (before, path) in [
        (
            "file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/x.txt new)\n",
            "${CMAKE_CURRENT_SOURCE_DIR}/x.txt",
        ),
        (
            "file(APPEND ${CMAKE_CURRENT_SOURCE_DIR}/x.txt new)\n",
            "${CMAKE_CURRENT_SOURCE_DIR}/x.txt",
        ),
        ("", "/etc/hostname"),
        ("", "\"${PP_FILE}\""),
    ] {
        let top = format!("include(FetchContent)\n{before}file(READ {path} T)\n{FETCH_K}");
        let e = eval(&[("CMakeLists.txt", &top), ("x.txt", "orig")]).expect("evaluates");
        assert!(
            e.configurations.iter().all(|c| c.failed.is_none()),
            "{top}: {:#?}",
            e.configurations
        );
        let tag = any_tag(&e);
        assert!(!tag.is_exact() && tag.text.is_empty(), "{top}: {tag:?}");
    }
    for op in [
        "MAKE_DIRECTORY D",
        "REMOVE D",
        "REMOVE_RECURSE D",
        "COPY D DESTINATION D",
        "INSTALL D DESTINATION D",
        "CHMOD D",
        "CHMOD_RECURSE D",
    ] {
        let e = eval_fetching_t(&format!("set(D t)\nfile({op})\nset(T ${{D}})\n"));
        let tag = any_tag(&e);
        assert!(tag.is_exact() && tag.text == "t", "{op}: {tag:?}");
    }
}

/// A summarised function's calls are followed for their effects: a function it calls that
/// fetches (or any macro, which would write the caller's scope) makes the evaluation unknown,
/// one with only local effects does not, and the calls are followed 8 deep (a recursive or
/// deeper chain is unknown).
#[test]
fn a_summarised_calls_callees_are_followed_for_effects_eight_deep() {
    let summarised = |defs: &str, call: &str| {
        eval_fetching_t(&format!(
            "{defs}function(f)\n  if(PP_IN)\n    return()\n  endif()\n  if(PP_IN2)\n    return()\n  endif()\n  if(PP_IN3)\n    return()\n  endif()\n  if(PP_IN4)\n    return()\n  endif()\n  {call}\n  set(T x PARENT_SCOPE)\nendfunction()\nf()\n"
        ))
        .undecided
        .unwrap_or_default()
    };
    let why = summarised(
        "function(g)\n  FetchContent_Declare(d GIT_REPOSITORY r GIT_TAG t)\nendfunction()\n",
        "g()",
    );
    assert!(why.contains("FetchContent_Declare()"), "{why:?}");
    let why = summarised("macro(m)\n  message(STATUS m)\nendmacro()\n", "m()");
    assert!(why.contains("calls m()"), "{why:?}");
    assert_eq!(
        summarised(
            "function(g)\n  set(L x)\n  message(STATUS g)\nendfunction()\n",
            "g()"
        ),
        ""
    );
    let chain = |n: usize| -> String {
        (1..=n)
            .map(|i| {
                let body = if i < n {
                    format!("g{}()", i + 1)
                } else {
                    "set(L x)".into()
                };
                format!("function(g{i})\n  {body}\nendfunction()\n")
            })
            .collect()
    };
    assert_eq!(summarised(&chain(8), "g1()"), "", "eight deep");
    let why = summarised(&chain(9), "g1()");
    assert!(why.contains("calls g9()"), "nine deep: {why:?}");
    let why = summarised("function(g)\n  g()\nendfunction()\n", "g()");
    assert!(why.contains("calls g()"), "recursive: {why:?}");
}

/// `if(EXISTS)` after a write: the written path is unknown, a directory above it that was
/// there still is, one that was not may now be; paths elsewhere are the tree's.
#[test]
fn exists_after_a_write_is_unknown_only_where_the_write_can_change_it() {
    for (check, known) in [
        ("EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/w/gen/x.txt", None),
        ("EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/w/gen", Some(true)),
        ("IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/w", Some(true)),
        ("EXISTS ${CMAKE_CURRENT_SOURCE_DIR}", Some(true)),
        ("IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/w/new", None),
        ("EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/other.txt", Some(true)),
        ("EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/nope.txt", Some(false)),
    ] {
        let top = format!(
            "include(FetchContent)\nfile(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/w/gen/x.txt x)\nfile(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/w/new/y.txt y)\nif({check})\n  set(T yes)\nelse()\n  set(T no)\nendif()\n{FETCH_K}"
        );
        let e = eval(&[
            ("CMakeLists.txt", &top),
            ("w/gen/x.txt", "old"),
            ("other.txt", ""),
        ])
        .expect("evaluates");
        let tag = any_tag(&e);
        let decided = tag.is_exact().then(|| tag.text == "yes");
        assert_eq!(decided, known, "{check}: {tag:?}");
    }
}

/// A patch file the configuration writes before CMake applies it is not the tree's copy (which
/// the scan reads to tell whether the patch removes the bug): the evaluation is unknown.
#[test]
fn a_patch_the_configuration_writes_is_unknown() {
    let fetch = "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG t PATCH_COMMAND git apply ${CMAKE_CURRENT_SOURCE_DIR}/patches/k.patch)\nFetchContent_MakeAvailable(k)\n";
    for (write, unknown) in [
        (
            "file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/patches/k.patch \"\")\n",
            true,
        ),
        (
            "file(REMOVE_RECURSE ${CMAKE_CURRENT_SOURCE_DIR}/patches)\n",
            true,
        ),
        (
            "file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/patches/other.txt \"\")\n",
            false,
        ),
    ] {
        let top = format!("include(FetchContent)\n{write}{fetch}");
        let e =
            eval(&[("CMakeLists.txt", &top), ("patches/k.patch", "--- a\n")]).expect("evaluates");
        let why = e.undecided.unwrap_or_default();
        assert_eq!(
            why.contains("patches/k.patch, which the configuration wrote"),
            unknown,
            "{write}: {why:?}"
        );
    }
}

/// Where a write lands: a path from an input may be anywhere (every later read of the tree is
/// unknown) unless only a directory is made there or it is in the build directory; a path
/// that is one of a joined condition's values writes each; a module the configuration wrote
/// is not CMake's own; a glob elsewhere, and what `file()` forms that write nothing compute,
/// are as before.
#[test]
fn writes_land_where_their_paths_can_point() {
    let read_x = "file(READ ${CMAKE_CURRENT_SOURCE_DIR}/x.txt T)\n";
    let joined = "if(EXISTS \"$ENV{PP_E0}\")\n  set(P a)\nelse()\n  set(P b)\nendif()\n";
    for (body, exact) in [
        (format!("file(MAKE_DIRECTORY \"${{PP_D}}\")\n{read_x}"), true),
        (format!("file(WRITE \"${{PP_D}}/y.txt\" new)\n{read_x}"), false),
        (format!("file(WRITE \"${{CMAKE_BINARY_DIR}}/x.txt\" new)\n{read_x}"), true),
        (
            format!("{joined}file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/${{P}}.txt new)\n{read_x}"),
            true,
        ),
        (
            format!("{joined}file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/${{P}}.txt new)\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/a.txt T)\n"),
            false,
        ),
        (
            format!("{joined}file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/${{P}}.txt new)\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/b.txt T)\n"),
            false,
        ),
        (
            "file(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/g/y.txt new)\nfile(GLOB T RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/h/*.txt)\n".into(),
            true,
        ),
        ("set(T t)\nfile(SHA256 ${CMAKE_CURRENT_SOURCE_DIR}/x.txt T)\n".into(), false),
        ("set(T t)\nfile(TOUCH_NOCREATE T)\n".into(), true),
    ] {
        let top = format!("include(FetchContent)\n{body}{FETCH_K}");
        let e = eval(&[
            ("CMakeLists.txt", &top),
            ("x.txt", "orig"),
            ("a.txt", "a"),
            ("b.txt", "b"),
            ("h/x.txt", ""),
        ])
        .expect("evaluates");
        assert_eq!(e.undecided, None, "{body}");
        let tag = any_tag(&e);
        assert_eq!(tag.is_exact(), exact, "{body}: {tag:?}");
    }
    // A module on CMAKE_MODULE_PATH that the configuration wrote is read, not CMake's own.
    let e = eval_fetching_t(
        "list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/m)\nfile(WRITE ${CMAKE_CURRENT_SOURCE_DIR}/m/gen.cmake \"set(T x)\")\ninclude(gen)\n",
    );
    let why = e.undecided.unwrap_or_default();
    assert!(
        why.contains("include(gen) reads a file the configuration wrote"),
        "{why:?}"
    );
    // Before any project(): the top directory, as CMake's implicit project().
    let e = eval_fetching_t(
        "if(PROJECT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)\n  set(T top)\nendif()\n",
    );
    assert_eq!(any_tag(&e).text, "top");
}

/// A fetch command's quoted argument is its list's elements even when part of it is an input:
/// `GIT_TAG "t;${PP_X}"` is the tag `t` (depending on `PP_X`), and a keyword among the
/// elements is a keyword.
#[test]
fn a_fetch_commands_quoted_list_with_an_input_is_its_elements() {
    let e = eval(&[(
        "CMakeLists.txt",
        "include(FetchContent)\nFetchContent_Declare(k GIT_REPOSITORY r GIT_TAG \"t;${PP_X}\")\nFetchContent_MakeAvailable(k)\n",
    )])
    .expect("evaluates");
    let tag = any_tag(&e);
    assert_eq!(tag.text, "t", "{tag:?}");
    assert!(tag.inputs.contains(&Input::Cache("PP_X".into())), "{tag:?}");
    let e = eval(&[(
        "CMakeLists.txt",
        "include(FetchContent)\nFetchContent_Declare(k \"GIT_REPOSITORY;r${PP_X};GIT_TAG;t\")\nFetchContent_MakeAvailable(k)\n",
    )])
    .expect("evaluates");
    assert_eq!(any_tag(&e).text, "t");
}

/// `string(ASCII)` is computed only when every code is below 128; otherwise (a code CMake
/// turns into a byte that is no character here) its output is unknown, not the other codes'.
#[test]
fn string_ascii_with_a_code_past_127_is_unknown() {
    let e = eval_fetching_t("string(ASCII 65 66 T)\n");
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "AB", "{tag:?}");
    for codes in ["65 200", "65 128", "127 128"] {
        let e = eval_fetching_t(&format!("set(T t)\nstring(ASCII {codes} T)\n"));
        assert!(!any_tag(&e).is_exact(), "{codes}: {:?}", any_tag(&e));
    }
    let e = eval_fetching_t("string(ASCII 127 T)\n");
    assert_eq!(any_tag(&e).text, "\u{7f}");
}

/// A condition on an input whose branches change nothing fetched is joined (one
/// configuration); one whose outcome reaches a fetch is forked.
#[test]
fn only_conditions_that_reach_a_fetch_fork() {
    let e =
        eval_fetching_t("set(T t)\nif(PP_X)\n  set(U x)\nendif()\nif(PP_Y)\n  set(U y)\nendif()\n");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1);
    assert!(any_tag(&e).is_exact());
    let e =
        eval_fetching_t("set(T t)\nif(PP_X)\n  set(U x)\nendif()\nif(PP_Y)\n  set(T y)\nendif()\n");
    assert_eq!(e.configurations.len(), 2);
    let mut tags: Vec<String> = tags_by_setup(&e).into_iter().map(|t| t.2).collect();
    tags.sort();
    assert_eq!(tags, ["t", "y"]);
    // Through a variable set under a joined condition and read by a later one.
    let e =
        eval_fetching_t("set(T t)\nif(PP_X)\n  set(U x)\nendif()\nif(U)\n  set(T u)\nendif()\n");
    let mut tags: Vec<String> = tags_by_setup(&e).into_iter().map(|t| t.2).collect();
    tags.sort();
    tags.dedup();
    assert_eq!(tags, ["t", "u"]);
    assert!(
        e.configurations.iter().all(|c| c
            .assumptions
            .iter()
            .all(|a| !a.inputs.iter().any(|i| matches!(i, Input::Join(_))))),
        "forks are on real inputs: {:#?}",
        e.configurations
    );
}

/// A condition on an input that guards `return()` in a function: the call runs under each
/// outcome and the two states are joined (decided, the values of both sides), up to three
/// such conditions in one call; past them the call is summarised.
#[test]
fn a_return_under_a_condition_on_an_input_runs_the_call_both_ways() {
    let e = eval_fetching_t(
        "set(T b)\nfunction(f)\n  if(PP_IN)\n    return()\n  endif()\n  set(T a PARENT_SCOPE)\nendfunction()\nf()\n",
    );
    assert_eq!(e.undecided, None);
    let mut tags: Vec<String> = e
        .configurations
        .iter()
        .flat_map(|c| &c.fetches)
        .flat_map(|f| {
            let t = f.tag.clone().expect("a tag");
            match t.finite() {
                Some(alts) => alts.into_iter().map(|a| a.text).collect(),
                None => vec![t.text],
            }
        })
        .collect();
    tags.sort();
    tags.dedup();
    assert_eq!(tags, ["a", "b"]);
    let default = first_default_fetch(&e).tag.clone().expect("a tag");
    assert_eq!(default.text, "a", "PP_IN unset: no return, T is a");
    let guards: String = (0..4)
        .map(|i| format!("  if(PP_IN{i})\n    return()\n  endif()\n"))
        .collect();
    let e = eval_fetching_t(&format!(
        "set(T b)\nfunction(f)\n{guards}  set(T a PARENT_SCOPE)\nendfunction()\nf()\n"
    ));
    assert_eq!(e.undecided, None);
    let tag = any_tag(&e);
    assert!(
        tag.inputs
            .iter()
            .any(|i| matches!(i, Input::Opaque(w) if w.contains("the result of f()"))),
        "four guards: summarised: {tag:?}"
    );
}

/// Every literal tag any configuration fetches for `k` (alternatives included), and whether
/// some configuration's tag can be any value.
fn tag_values(e: &Evaluation) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut any = false;
    for f in e.configurations.iter().flat_map(|c| &c.fetches) {
        let Some(t) = &f.tag else { continue };
        match t.finite() {
            Some(alts) => out.extend(alts.into_iter().map(|a| a.text)),
            None => {
                any = true;
                out.push(t.text.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    (out, any)
}

/// Bad input built to defeat the relevance of decisions: the tag is computed through ten
/// levels of include files and functions from a condition on an input at the bottom; the
/// evaluation still finds both values (or any value), never only the default one.
#[test]
fn a_tag_computed_ten_levels_down_keeps_every_value() {
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 1..10 {
        files.push((
            format!("cmake/inc{i}.cmake"),
            format!("include(${{CMAKE_CURRENT_LIST_DIR}}/inc{}.cmake)\n", i + 1),
        ));
    }
    files.push((
        "cmake/inc10.cmake".into(),
        "set(DEEP fixed)\nif(PP_DEEP)\n  set(DEEP other)\nendif()\n".into(),
    ));
    let mut funcs = String::new();
    for i in 1..10 {
        funcs.push_str(&format!(
            "function(f{i} out)\n  f{}(v)\n  set(${{out}} ${{v}} PARENT_SCOPE)\nendfunction()\n",
            i + 1
        ));
    }
    funcs.push_str("function(f10 out)\n  set(${out} ${DEEP} PARENT_SCOPE)\nendfunction()\n");
    let top = format!(
        "include(FetchContent)\ninclude(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/inc1.cmake)\n{funcs}f1(T)\n{FETCH_K}"
    );
    files.push(("CMakeLists.txt".into(), top));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let e = evaluate(&view(&refs)).expect("evaluates");
    assert_eq!(e.undecided, None);
    let (tags, any) = tag_values(&e);
    assert!(
        any || (tags.contains(&"fixed".to_string()) && tags.contains(&"other".to_string())),
        "{tags:?}"
    );
    let default = first_default_fetch(&e).tag.clone().expect("a tag");
    assert_eq!(default.text, "fixed");
}

/// Code pinprobe cannot see run (`cmake_language(EVAL)`, `variable_watch`) is undecided with
/// the pins found before it listed; a property set in one directory and read in another is
/// any value, never the value of one directory alone.
#[test]
fn eval_watches_and_properties_are_unknown_never_narrower() {
    for stop in [
        "cmake_language(EVAL CODE \"set(T other)\")",
        "variable_watch(T)",
    ] {
        let top = format!("include(FetchContent)\nset(T t)\n{FETCH_K}{stop}\n");
        let e = evaluate(&view(&[("CMakeLists.txt", top.as_bytes())])).expect("evaluates");
        assert!(e.undecided.is_some(), "{stop}");
        let (tags, _) = tag_values(&e);
        assert_eq!(tags, ["t"], "{stop}: the pin found before it is kept");
    }
    let top = format!(
        "include(FetchContent)\nset_property(DIRECTORY PROPERTY PIN_TAG fixed)\nadd_subdirectory(sub)\nget_property(T DIRECTORY sub PROPERTY PIN_TAG)\n{FETCH_K}"
    );
    let files: Vec<(&str, &[u8])> = vec![
        ("CMakeLists.txt", top.as_bytes()),
        (
            "sub/CMakeLists.txt",
            b"set_property(DIRECTORY PROPERTY PIN_TAG other)\n",
        ),
    ];
    let e = evaluate(&view(&files)).expect("evaluates");
    let (_, any) = tag_values(&e);
    assert!(any, "a property read is any value");
}

#[test]
fn project_calls_are_found_as_cmake_reads_them() {
    for text in [
        "project(p NONE)\n",
        "project (p NONE)\n",
        "PROJECT\t(p)\n",
        "cmake_minimum_required(VERSION 3.20)\nProject\n(p LANGUAGES CXX)\n",
    ] {
        assert!(calls_project(text), "{text:?}");
    }
    for text in [
        "# project(p)\n",
        "message(STATUS \"project(p)\")\n",
        "set(project_name p)\n",
        "my_project(p)\n",
    ] {
        assert!(!calls_project(text), "{text:?}");
    }
}

/// `add_subdirectory()` runs the directory's `CMakeLists.txt` (its fetches located there, its
/// variables its own scope's); a missing directory is an error CMake reports before going on;
/// a directory named by an input is a file pinprobe cannot read.
#[test]
fn add_subdirectory_runs_the_directorys_lists_file() {
    let e = eval(&[
        (
            "CMakeLists.txt",
            &format!(
                "include(FetchContent)\nset(T t)\nadd_subdirectory(sub)\nadd_subdirectory(nope)\nadd_subdirectory(${{PP_DIR}})\n{FETCH_K}"
            ),
        ),
        (
            "sub/CMakeLists.txt",
            "set(T inner)\nFetchContent_Declare(s GIT_REPOSITORY https://example.invalid/s.git GIT_TAG ts)\nFetchContent_MakeAvailable(s)\n",
        ),
    ])
    .expect("evaluates");
    assert_eq!(e.undecided, None);
    let c = e.configurations.first().expect("a configuration");
    let got: Vec<(&str, &str, Option<&str>)> = c
        .fetches
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.file.as_str(),
                f.tag.as_ref().map(|t| t.text.as_str()),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("s", "sub/CMakeLists.txt", Some("ts")),
            ("k", "CMakeLists.txt", Some("t"))
        ]
    );
    assert!(
        c.failed.as_deref().is_some_and(|f| f.contains("nope")),
        "{:?}",
        c.failed
    );
    assert!(
        c.unread.iter().any(|u| u.contains("add_subdirectory(")),
        "{:?}",
        c.unread
    );
}

/// A called function's statements are located in the file that defines it (a declaration's
/// `file` and `line`, `CMAKE_CURRENT_LIST_LINE`), while `CMAKE_CURRENT_LIST_FILE` stays the
/// caller's list file; after the call, the caller's statements are the caller's again.
#[test]
fn a_called_bodys_statements_are_located_where_it_is_defined() {
    let declare = |n: &str, tag: &str| {
        format!(
            "FetchContent_Declare({n} GIT_REPOSITORY https://example.invalid/{n}.git GIT_TAG {tag})\nFetchContent_MakeAvailable({n})\n"
        )
    };
    let e = eval(&[
        (
            "CMakeLists.txt",
            &format!(
                "include(FetchContent)\ninclude(cmake/deps.cmake)\nfunction(here)\n  {}endfunction()\nhere()\nget_k()\n{}",
                declare("h", "th"),
                declare("after", "ta")
            ),
        ),
        (
            "cmake/deps.cmake",
            &format!(
                "function(get_k)\n  {}endfunction()\n",
                declare("k", "${CMAKE_CURRENT_LIST_FILE}:${CMAKE_CURRENT_LIST_LINE}")
            ),
        ),
    ])
    .expect("evaluates");
    assert_eq!(e.undecided, None);
    let c = e.configurations.first().expect("a configuration");
    let got: Vec<(&str, &str, u32)> = c
        .fetches
        .iter()
        .map(|f| (f.name.as_str(), f.file.as_str(), f.line))
        .collect();
    assert_eq!(
        got,
        [
            ("h", "CMakeLists.txt", 4),
            ("k", "cmake/deps.cmake", 2),
            ("after", "CMakeLists.txt", 9)
        ]
    );
    let k_tag = c.fetches[1].tag.as_ref().map(|t| t.text.as_str());
    assert!(
        k_tag.is_some_and(|t| t.ends_with("/CMakeLists.txt:2")),
        "{k_tag:?}"
    );
}

/// `cmake_parse_arguments(PARSE_ARGV)` outside a function reads a variable `ARGC`: unset, it
/// is an input pinprobe cannot follow (CMake stops without one, `-DARGC=2` lets it go on);
/// set to no count, CMake stops there.
#[test]
fn parse_argv_outside_a_function_reads_the_variable_argc() {
    let e = eval_fetching_t("set(T t)\ncmake_parse_arguments(PARSE_ARGV 0 P \"\" \"\" \"\")\n");
    let why = e.undecided.clone().expect("unknown");
    assert!(why.contains("PARSE_ARGV with ARGC from an input"), "{why}");
    let e = eval_fetching_t(
        "set(T t)\nset(ARGC x)\ncmake_parse_arguments(PARSE_ARGV 0 P \"\" \"\" \"\")\n",
    );
    assert_eq!(e.undecided, None);
    let c = e.configurations.first().expect("a configuration");
    assert!(c.fetches.is_empty(), "CMake stops before the fetch");
    assert!(
        c.failed.as_deref().is_some_and(|f| f.contains("ARGC `x`")),
        "{:?}",
        c.failed
    );
}

/// A `foreach()` CMake refuses fails as a command does: reported, the next command runs, and
/// a function's body is left there.
#[test]
fn a_refused_foreach_fails_as_a_command_does() {
    let e = eval_fetching_t(
        "function(f)\n  foreach()\n  endforeach()\n  set(T inside PARENT_SCOPE)\nendfunction()\nset(T t)\nf()\nforeach(x IN FOO)\nendforeach()\nset(T \"${T}-after\")\n",
    );
    assert_eq!(e.undecided, None);
    let c = e.configurations.first().expect("a configuration");
    assert_eq!(
        c.fetches
            .iter()
            .map(|f| f.tag.as_ref().map(|t| t.text.as_str()))
            .collect::<Vec<_>>(),
        [Some("t-after")]
    );
    assert!(
        c.failed.as_deref().is_some_and(|f| f.contains("foreach()")),
        "{:?}",
        c.failed
    );
}
