//! Joined decisions (`interp/join.rs`): a condition on an input that
//! changes nothing fetched runs both sides from one state and merges them. Each test is a
//! program whose merged state CMake could leave differently under the input, and asserts what
//! every configuration of the input can fetch, or why the evaluation is unknown.

use super::*;

/// `k` declared at the tag `t`, not made available.
const DECLARE_K: &str =
    "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG t)\n";

/// Each configuration's fetched tags, each with whether that configuration fails.
fn tags_and_failures(e: &Evaluation) -> Vec<(String, bool)> {
    e.configurations
        .iter()
        .flat_map(|c| {
            c.fetches.iter().map(move |f| {
                (
                    f.tag.as_ref().map(|t| t.text.clone()).unwrap_or_default(),
                    c.failed.is_some(),
                )
            })
        })
        .collect()
}

/// The literal texts a tag can take (its alternatives, or its own text when it has none).
fn texts(tag: &Value) -> Vec<String> {
    let mut out: Vec<String> = match tag.finite() {
        Some(alts) => alts.into_iter().map(|a| a.text).collect(),
        None => vec![tag.text.clone()],
    };
    out.sort();
    out.dedup();
    out
}

/// A condition on an opaque input (no default) is joined, not forked; the two sides must then
/// leave the same functions. One definition node run on both sides with the name spelled in
/// another case (the same command, but `CMAKE_CURRENT_FUNCTION` differs) or other parameters
/// is a different definition: the join cannot merge them, so the condition is forked. The
/// same call on both sides joins and is decided.
#[test]
fn a_function_defined_differently_on_the_sides_of_a_join_is_undecided() {
    let def = "macro(def n p)\n  function(${n} ${p})\n    set(T ${CMAKE_CURRENT_FUNCTION} PARENT_SCOPE)\n  endfunction()\nendmacro()\n";
    for (one, other) in [("def(F a)", "def(f a)"), ("def(f a)", "def(f b)")] {
        let e = eval_fetching_t(&format!(
            "{def}if(CMAKE_PP_OPAQUE)\n  {one}\nelse()\n  {other}\nendif()\nf(x)\n"
        ));
        // The sides cannot be merged: the condition is forked instead, each configuration
        // calling its own definition.
        assert_eq!(e.undecided, None, "{one} / {other}");
        assert_eq!(e.configurations.len(), 2, "{one} / {other}");
        assert!(
            e.configurations.iter().all(|c| !c.default),
            "no default: opaque"
        );
    }
    let e = eval_fetching_t(&format!(
        "{def}if(CMAKE_PP_OPAQUE)\n  def(F a)\nelse()\n  def(F a)\nendif()\nf(x)\n"
    ));
    assert_eq!(e.undecided, None);
    // The same definition (same body, file and line) on both sides: the sides merge.
    assert_eq!(e.configurations.len(), 1, "merged");
    let fetch = e
        .configurations
        .iter()
        .flat_map(|c| &c.fetches)
        .next()
        .expect("a fetch");
    assert_eq!(
        fetch.tag.as_ref().map(|t| t.text.as_str()),
        Some("F"),
        "{fetch:?}"
    );
}

/// A value joined over a condition with no default lists its alternatives, each with the
/// outcome it takes; the alternative of the side CMake takes with the input unset is the
/// default one. An exact value has no alternatives.
#[test]
fn a_joined_values_default_alternative_is_the_unset_inputs_side() {
    for (cond, default_text) in [("CMAKE_PP_OPAQUE", "b"), ("NOT CMAKE_PP_OPAQUE", "a")] {
        let e = eval_fetching_t(&format!(
            "if({cond})\n  set(T a)\nelse()\n  set(T b)\nendif()\n"
        ));
        let tag = any_tag(&e);
        let mut alts: Vec<(String, bool)> = tag
            .alternatives
            .iter()
            .map(|a| (a.text.clone(), a.is_default()))
            .collect();
        alts.sort();
        assert_eq!(
            alts,
            [
                ("a".to_string(), default_text == "a"),
                ("b".to_string(), default_text == "b")
            ],
            "{cond}"
        );
    }
    let top = format!("include(FetchContent)\nset(T t)\n{FETCH_K}");
    let e = eval(&[("CMakeLists.txt", &top)]).expect("evaluates");
    let tag = first_default_fetch(&e).tag.clone().expect("a tag");
    assert!(tag.is_exact() && tag.alternatives.is_empty(), "{tag:?}");
}

/// Fetches of a joined condition: each side's own fetch kept (the other side's with the
/// condition), the declarations before it fetched once, a dependency both sides declare
/// differently fetched as each declares it, and one both fetch through the same call once.
#[test]
fn a_joined_conditions_fetches_keep_each_sides_own() {
    let decl = |n: &str, t: &str| {
        format!(
            "FetchContent_Declare({n} GIT_REPOSITORY https://example.invalid/{n}.git GIT_TAG {t})\n"
        )
    };
    let top = format!(
        "include(FetchContent)\n{}{}{}{}macro(get_a)\n  FetchContent_MakeAvailable(a)\nendmacro()\nif(CMAKE_PP_OPAQUE)\n  {}  FetchContent_MakeAvailable(x)\n  get_a()\n  set(M x)\nelse()\n  {}  FetchContent_MakeAvailable(y)\n  get_a()\nendif()\nFetchContent_MakeAvailable(k)\nset(T \"${{M}}\")\n{}FetchContent_MakeAvailable(m)\n",
        decl("a", "ta"),
        decl("x", "tx"),
        decl("y", "ty"),
        decl("s", "ts"),
        decl("k", "k1"),
        decl("k", "k2"),
        decl("m", "\"${T}\""),
    );
    let e = eval(&[("CMakeLists.txt", &top)]).expect("evaluates");
    assert_eq!(e.undecided, None);
    let c = e.configurations.first().expect("a configuration");
    assert_eq!(e.configurations.len(), 1);
    let got: Vec<(String, String, bool)> = c
        .fetches
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                f.tag.as_ref().map(|t| t.text.clone()).unwrap_or_default(),
                f.only_if.is_empty(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("y".to_string(), "ty".to_string(), true),
            ("a".to_string(), "ta".to_string(), true),
            ("x".to_string(), "tx".to_string(), false),
            ("k".to_string(), "k2".to_string(), true),
            ("k".to_string(), "k1".to_string(), false),
            ("m".to_string(), String::new(), true),
        ],
        "{:#?}",
        c.fetches
    );
    // `M`, set on the other side only, is unknown after the join.
    let m = c
        .fetches
        .last()
        .and_then(|f| f.tag.clone())
        .expect("m's tag");
    assert!(!m.is_exact(), "{m:?}");
}

/// A side of a joined condition that stops CMake (`FATAL_ERROR`): the configurations that go
/// on are the other side's; when both sides stop, the configuration fails with the error.
#[test]
fn a_joined_side_that_stops_cmake_leaves_the_other() {
    for cond in ["CMAKE_PP_OPAQUE", "NOT CMAKE_PP_OPAQUE"] {
        let e = eval_fetching_t(&format!(
            "if({cond})\n  set(T a)\nelse()\n  message(FATAL_ERROR \"no\")\nendif()\n"
        ));
        assert_eq!(e.undecided, None, "{cond}");
        assert_eq!(tags_and_failures(&e), [("a".to_string(), false)], "{cond}");
        // A condition with no default: no configuration is claimed as the default one.
        assert!(!e.configurations.iter().any(|c| c.default), "{cond}");
    }
    let e = eval_fetching_t(
        "set(T t)\nif(CMAKE_PP_OPAQUE)\n  message(FATAL_ERROR \"one\")\nelse()\n  message(FATAL_ERROR \"two\")\nendif()\n",
    );
    assert_eq!(e.undecided, None);
    let failed: Vec<Option<String>> = e.configurations.iter().map(|c| c.failed.clone()).collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]
            .as_deref()
            .is_some_and(|f| f.contains("one") || f.contains("two")),
        "{failed:?}"
    );
}

/// A condition on an input inside a function is joined, never forked: one configuration,
/// the value the call sets in its caller with both sides' alternatives.
#[test]
fn a_condition_inside_a_function_is_joined() {
    let e = eval_fetching_t(
        "function(f)\n  if(PP_X)\n    set(T a PARENT_SCOPE)\n  else()\n    set(T b PARENT_SCOPE)\n  endif()\nendfunction()\nf()\n",
    );
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1, "{:#?}", e.configurations);
    let tag = first_default_fetch(&e).tag.clone().expect("a tag");
    let mut alts: Vec<String> = tag.alternatives.iter().map(|a| a.text.clone()).collect();
    alts.sort();
    assert_eq!(
        (tag.text.as_str(), alts),
        ("b", vec!["a".to_string(), "b".to_string()])
    );
}

/// After a join, a variable both sides set and the program then unsets is the cache's again
/// (not "maybe set by a side"), and one declaration both sides made (a macro both call) is one
/// declaration, not an alternative of itself.
#[test]
fn a_join_keeps_what_both_sides_did_alike() {
    let joined = |body: &str| {
        format!("if(CMAKE_CXX_COMPILER_ID STREQUAL GNU)\n  {body}else()\n  {body}endif()\n")
    };
    let e = eval_fetching_t(&format!(
        "set(X \"\" CACHE INTERNAL \"\")\n{}unset(X)\nset(T \"x${{X}}\")\n",
        joined("set(X a)\n")
    ));
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "x", "{tag:?}");
    let e = eval(&[(
        "CMakeLists.txt",
        &format!(
            "include(FetchContent)\nmacro(decl)\n  FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG t)\nendmacro()\n{}FetchContent_MakeAvailable(k)\n",
            joined("decl()\n")
        ),
    )])
    .expect("evaluates");
    let fetches: Vec<&Fetch> = e.configurations.iter().flat_map(|c| &c.fetches).collect();
    assert_eq!(fetches.len(), 1, "{fetches:#?}");
    assert!(fetches.iter().all(|f| f.only_if.is_empty()), "{fetches:#?}");
}

/// What only the joined condition's other side did stays possible after the join: a variable
/// only it set (the program's cache value is not all it can be), a file only it wrote.
#[test]
fn a_join_keeps_what_only_the_other_side_did() {
    // `CMAKE_CXX_COMPILER_ID` is unset by default, so the else() side is this side.
    let e = eval_fetching_t(
        "set(X \"\" CACHE INTERNAL \"\")\nif(CMAKE_CXX_COMPILER_ID STREQUAL GNU)\n  set(X a)\nendif()\nset(T \"x${X}\")\n",
    );
    let tag = any_tag(&e);
    assert_eq!(tag.text, "x");
    assert!(!tag.is_exact(), "{tag:?}");
    let e = eval(&[
        (
            "CMakeLists.txt",
            &format!(
                "include(FetchContent)\nif(CMAKE_CXX_COMPILER_ID STREQUAL GNU)\n  file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/x.txt new)\nendif()\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/x.txt T)\n{FETCH_K}"
            ),
        ),
        ("x.txt", "orig"),
    ])
    .expect("evaluates");
    assert!(!any_tag(&e).is_exact(), "{:?}", any_tag(&e));
}

/// An unquoted reference to an unknown value that is empty by default (CMake drops the
/// argument when it is empty) is a decision: joined where it cannot change what is fetched,
/// forked once a fetch is found to depend on it (a second pass), joined inside a call.
#[test]
fn an_empty_argument_on_an_input_is_joined_unless_relevant() {
    // Irrelevant: one configuration, the tag exact.
    let e = eval_fetching_t("set(U a ${PP_E})\nmessage(STATUS ${U})\nset(T t)\n");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1, "{:#?}", e.configurations);
    assert!(any_tag(&e).is_exact());
    // Every decision forked: two configurations for the same program.
    let v = view(&[(
        "CMakeLists.txt",
        format!(
            "include(FetchContent)\nset(U a ${{PP_E}})\nmessage(STATUS ${{U}})\nset(T t)\n{FETCH_K}"
        )
        .as_bytes(),
    )]);
    let all = evaluate_with(
        &v,
        Limits {
            fork_all: true,
            ..Limits::default()
        },
    )
    .expect("evaluates");
    assert_eq!(all.configurations.len(), 2);
    // Relevant (the tag is built from it): forked, two configurations, the default one exact.
    let e = eval_fetching_t("set(T a ${PP_E})\n");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 2, "{:#?}", e.configurations);
    let default = first_default_fetch(&e).tag.clone().expect("a tag");
    assert!(default.is_exact() && default.text == "a", "{default:?}");
    // Inside a call: joined (no fork there), the value any value of -DPP_E, its default `a`.
    let e = eval_fetching_t(
        "set(T b)\nfunction(f)\n  set(T a ${PP_E} PARENT_SCOPE)\nendfunction()\nf()\n",
    );
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1);
    let tag = any_tag(&e);
    assert_eq!(tag.text, "a");
    assert!(tag.inputs.contains(&Input::Cache("PP_E".into())), "{tag:?}");
}

/// Inside a function call a join whose sides cannot be merged (one side defines a function)
/// is not forked there: the call is summarised, and a call that defines functions under an
/// input makes the evaluation unknown, naming the call. Forking inside the call would claim
/// two configurations CMake's call does not make.
#[test]
fn an_unmergeable_join_inside_a_call_summarises_the_call() {
    let e = eval_fetching_t(
        "function(f)\n  if(CMAKE_PP_OPAQUE)\n    function(g)\n    endfunction()\n  endif()\n  set(T a PARENT_SCOPE)\nendfunction()\nf()\n",
    );
    let why = e.undecided.clone().expect("unknown");
    assert!(why.contains("f() depends on an input"), "{why}");
    assert!(
        e.configurations.iter().all(|c| c.assumptions.is_empty()),
        "no fork inside the call: {:#?}",
        e.configurations
    );
}

/// Unquoted empty references in one command: the relevant ones (a fetch's arguments) fork
/// while the run has forks left (three), the rest are joined, up to three per command; past
/// three each is a decision of its own.
#[test]
fn empty_references_fork_within_the_limit_and_join_up_to_three() {
    // Four in a fetch: three forks (eight configurations), the fourth joined.
    let e = eval(&[(
        "CMakeLists.txt",
        "include(FetchContent)\nFetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG t ${PP_A} ${PP_B} ${PP_C} ${PP_D})\nFetchContent_MakeAvailable(k)\n",
    )])
    .expect("evaluates");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 8, "{:#?}", e.configurations);
    // Three where nothing fetched depends on them: joined, one configuration.
    let e = eval_fetching_t("set(U a ${PP_A} ${PP_B} ${PP_C})\nmessage(STATUS ${U})\nset(T t)\n");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1, "{:#?}", e.configurations);
    // Four: too many to join in one command, each is a decision (sixteen configurations).
    let e = eval_fetching_t(
        "set(U a ${PP_A} ${PP_B} ${PP_C} ${PP_D})\nmessage(STATUS ${U})\nset(T t)\n",
    );
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 16, "{:#?}", e.configurations);
}

/// Cache entries and environment variables the sides set differently keep both values after
/// the join; one only the other side created stays possible (not the default's exact value).
#[test]
fn a_join_merges_the_cache_and_the_environment() {
    for (one, other, read) in [
        (
            "set(C a CACHE STRING \"\" FORCE)",
            "set(C b CACHE STRING \"\" FORCE)",
            "${C}",
        ),
        ("set(ENV{E} a)", "set(ENV{E} b)", "$ENV{E}"),
    ] {
        let e = eval_fetching_t(&format!(
            "if(CMAKE_PP_OPAQUE)\n  {one}\nelse()\n  {other}\nendif()\nset(T \"{read}\")\n"
        ));
        assert_eq!(e.undecided, None, "{one}");
        let tag = any_tag(&e);
        assert_eq!(texts(&tag), ["a", "b"], "{one}: {tag:?}");
    }
    // Removed before the join (so no `-D` or environment can hold them there): unset, not
    // any value, on the default side.
    for (set, read) in [
        ("set(D d CACHE STRING \"\" FORCE)", "${D}"),
        ("set(ENV{D} d)", "$ENV{D}"),
    ] {
        let e = eval_fetching_t(&format!(
            "set(D \"\" CACHE INTERNAL \"\")\nunset(D CACHE)\nunset(ENV{{D}})\nset(T \"x{read}\")\n"
        ));
        let tag = any_tag(&e);
        assert!(
            tag.is_exact() && tag.text == "x",
            "{set}: without the join: {tag:?}"
        );
        let e = eval_fetching_t(&format!(
            "set(D \"\" CACHE INTERNAL \"\")\nunset(D CACHE)\nunset(ENV{{D}})\nif(CMAKE_PP_OPAQUE)\n  {set}\nendif()\nset(T \"x{read}\")\n"
        ));
        let tag = any_tag(&e);
        assert_eq!(tag.text, "x", "{set}");
        assert!(
            !tag.is_exact(),
            "{set}: only the other side set it: {tag:?}"
        );
        if read.starts_with("$ENV") {
            // Read as the environment's: any value (the join is not what it depends on).
            assert!(tag.inputs.contains(&Input::Env("D".into())), "{tag:?}");
            continue;
        }
        // On a condition with a default: the fetch depends on the join, so the condition is
        // forked, each configuration exact.
        let e = eval_fetching_t(&format!(
            "set(D \"\" CACHE INTERNAL \"\")\nunset(D CACHE)\nunset(ENV{{D}})\nif(PP_C)\n  {set}\nendif()\nset(T \"x{read}\")\n"
        ));
        assert_eq!(e.configurations.len(), 2, "{set}: {:#?}", e.configurations);
        assert_eq!(
            tag_values(&e),
            (vec!["x".into(), "xd".into()], false),
            "{set}"
        );
    }
    // An environment variable only the other side set is no variable of the same name.
    let e = eval_fetching_t(
        "set(E \"\" CACHE INTERNAL \"\")\nif(CMAKE_PP_OPAQUE)\n  set(ENV{E} e)\nendif()\nset(T \"x${E}\")\n",
    );
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "x", "{tag:?}");
}

/// A side that sets more variables than a scope's shared layer holds (it folds them into a
/// map of its own, so the sides no longer share one) is merged name by name all the same.
#[test]
fn a_join_merges_scopes_that_no_longer_share_a_base() {
    let many = "  foreach(i RANGE 40)\n    set(V${i} x)\n  endforeach()\n";
    let e = eval_fetching_t(&format!(
        "if(CMAKE_PP_OPAQUE)\n{many}  set(X a)\nelse()\n  set(X b)\nendif()\nset(T \"${{X}}\")\n"
    ));
    assert_eq!(texts(&any_tag(&e)), ["a", "b"], "{:?}", any_tag(&e));
    // `Y` is the cache's empty value on the default side (no `-DY` can change it).
    let known = "set(Y \"\" CACHE INTERNAL \"\")\n";
    let e = eval_fetching_t(&format!(
        "{known}if(CMAKE_PP_OPAQUE)\n{many}  set(Y y)\nendif()\nset(T \"x${{Y}}\")\n"
    ));
    let tag = any_tag(&e);
    assert_eq!(tag.text, "x");
    assert!(!tag.is_exact(), "only the other side set Y: {tag:?}");
    // The default side folds: the same.
    let e = eval_fetching_t(&format!(
        "{known}if(CMAKE_PP_OPAQUE)\n  set(Y y)\nelse()\n{many}endif()\nset(T \"x${{Y}}\")\n"
    ));
    assert!(!any_tag(&e).is_exact(), "{:?}", any_tag(&e));
}

/// Functions the sides define differently cannot be merged; where a side forked (so the
/// decision cannot be forked instead) the evaluation is unknown, naming the functions that
/// differ and none that both sides share.
#[test]
fn an_unmergeable_join_names_the_functions_that_differ() {
    let e = eval_fetching_t(
        "function(h)\nendfunction()\nset(T t)\nif(CMAKE_PP_OPAQUE)\n  function(g)\n  endfunction()\n  if(PP_X)\n    set(T a)\n  endif()\nendif()\n",
    );
    let why = e.undecided.clone().expect("unknown");
    assert!(why.contains("g() defined differently"), "{why}");
    assert!(!why.contains("h()"), "{why}");
}

/// A dependency only the default side made available is not available on the other: a later
/// `FetchContent_MakeAvailable` fetches it there (here: again).
#[test]
fn a_join_keeps_populated_only_what_both_sides_populated() {
    let e = eval(&[(
        "CMakeLists.txt",
        &format!(
            "include(FetchContent)\n{DECLARE_K}if(CMAKE_PP_OPAQUE)\nelse()\n  FetchContent_MakeAvailable(k)\nendif()\nFetchContent_MakeAvailable(k)\n"
        ),
    )])
    .expect("evaluates");
    let at: Vec<Option<u32>> = e
        .configurations
        .iter()
        .flat_map(|c| &c.fetches)
        .map(|f| f.populated_at.as_ref().map(|(_, line)| *line))
        .collect();
    assert_eq!(at, [Some(5), Some(7)], "{:#?}", e.configurations);
}

/// What only the other side reached stays reached after the join: a declaration there is no
/// unreached declaration, and a file it could not read is the configuration's.
#[test]
fn a_join_keeps_the_other_sides_declarations_and_unread_files() {
    let e = eval_fetching_t(
        "set(T t)\nif(CMAKE_PP_OPAQUE)\n  FetchContent_Declare(z GIT_REPOSITORY https://example.invalid/z.git GIT_TAG tz)\n  include(${PP_DIR}/x.cmake)\nendif()\n",
    );
    assert_eq!(e.undecided, None);
    assert!(e.unreached.is_empty(), "{:#?}", e.unreached);
    let unread: Vec<&String> = e.configurations.iter().flat_map(|c| &c.unread).collect();
    assert!(
        unread
            .iter()
            .any(|u| u.contains("include(") && u.contains("x.cmake")),
        "{unread:?}"
    );
}

/// A side that stops CMake keeps, with the condition, what it fetched before it stopped (even
/// where the side that goes on fetched something else first), the declarations it reached and
/// the files it could not read.
#[test]
fn a_side_that_stops_keeps_what_it_did_before() {
    let decl = |n: &str| {
        format!(
            "FetchContent_Declare({n} GIT_REPOSITORY https://example.invalid/{n}.git GIT_TAG t{n})\n"
        )
    };
    let top = format!(
        "include(FetchContent)\n{}{}if(CMAKE_PP_OPAQUE)\n  FetchContent_MakeAvailable(x)\n  {}  include(${{PP_DIR}}/x.cmake)\n  message(FATAL_ERROR \"no\")\nelse()\n  FetchContent_MakeAvailable(y)\nendif()\n",
        decl("x"),
        decl("y"),
        decl("z"),
    );
    let e = eval(&[("CMakeLists.txt", &top)]).expect("evaluates");
    assert_eq!(e.undecided, None);
    assert_eq!(e.configurations.len(), 1, "{:#?}", e.configurations);
    let c = &e.configurations[0];
    let got: Vec<(String, bool)> = c
        .fetches
        .iter()
        .map(|f| (f.name.clone(), f.only_if.is_empty()))
        .collect();
    assert_eq!(
        got,
        [("y".to_string(), true), ("x".to_string(), false)],
        "{:#?}",
        c.fetches
    );
    assert!(e.unreached.is_empty(), "{:#?}", e.unreached);
    assert!(
        c.unread.iter().any(|u| u.contains("x.cmake")),
        "{:?}",
        c.unread
    );
}

/// Narrowing after a joined `if()` whose one side stops CMake: the alternatives only the
/// stopping outcomes select are gone. Here `T` is `a` (neither input set), `b` or `c`; a
/// `FATAL_ERROR` on `a` leaves `b` and `c`, and the value's own text becomes one of them.
#[test]
fn a_stop_on_one_value_drops_it_from_the_others() {
    let e = eval_fetching_t(
        "if(CMAKE_PP_A)\n  set(T b)\nelse()\n  set(T a)\nendif()\nif(CMAKE_PP_B)\n  set(T c)\nendif()\nif(T STREQUAL a)\n  message(FATAL_ERROR \"a is refused\")\nendif()\n",
    );
    assert_eq!(e.undecided, None);
    let tag = any_tag(&e);
    assert_eq!(texts(&tag), ["b", "c"], "{tag:?}");
    assert!(tag.text == "b" || tag.text == "c", "{tag:?}");
    // The same through a macro's parameter: the macro's own copy of the value is narrowed too.
    let e = eval_fetching_t(
        "if(CMAKE_PP_A)\n  set(V b)\nelse()\n  set(V a)\nendif()\nmacro(m v)\n  if(\"${v}\" STREQUAL a)\n    message(FATAL_ERROR \"a is refused\")\n  endif()\n  set(T \"${v}\")\nendmacro()\nm(\"${V}\")\n",
    );
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "b", "{tag:?}");
}

/// Narrowing enumerates the outcomes of at most six joins (2^6 evaluations of the
/// condition); a condition on seven narrows nothing (more than CMake, never less).
#[test]
fn narrowing_reads_at_most_six_joins() {
    let program = |n: usize| {
        let mut body = String::new();
        let mut cond: Vec<String> = Vec::new();
        for i in 1..=n {
            body.push_str(&format!(
                "if(CMAKE_PP_{i})\n  set(V{i} b)\nelse()\n  set(V{i} a)\nendif()\n"
            ));
            // Only V1 can meet its condition: V2.. are never `x`.
            cond.push(format!("V{i} STREQUAL {}", if i == 1 { "a" } else { "x" }));
        }
        body.push_str(&format!(
            "if({})\n  message(FATAL_ERROR \"refused\")\nendif()\nset(T \"${{V1}}\")\n",
            cond.join(" OR ")
        ));
        eval_fetching_t(&body)
    };
    let six = any_tag(&program(6));
    assert!(
        six.is_exact() && six.text == "b",
        "six joins: narrowed: {six:?}"
    );
    let seven = any_tag(&program(7));
    assert_eq!(
        texts(&seven),
        ["a", "b"],
        "seven joins: not narrowed: {seven:?}"
    );
}

/// A joined command that fails on one side (CMake leaves a macro's body at a failing command)
/// cannot be merged with the side that goes on: the decision is forked, each configuration
/// running its own side.
#[test]
fn a_command_failing_on_one_side_of_a_join_forks() {
    let e = eval_fetching_t(
        "set(T t)\nmacro(m)\n  include(${PP_A} missing.cmake)\n  set(T after)\nendmacro()\nm()\n",
    );
    assert_eq!(e.undecided, None);
    let mut got = tags_and_failures(&e);
    got.sort();
    assert_eq!(
        got,
        [("after".to_string(), false), ("t".to_string(), true)],
        "{:#?}",
        e.configurations
    );
}

/// A value both sides set alike stays exact; declarations a join inside the other side left
/// as alternatives stay alternatives after the outer join.
#[test]
fn a_join_keeps_equal_values_exact_and_nested_alternatives() {
    let e = eval_fetching_t("if(CMAKE_PP_OPAQUE)\n  set(T a)\nelse()\n  set(T a)\nendif()\n");
    let tag = any_tag(&e);
    assert!(tag.is_exact() && tag.text == "a", "{tag:?}");
    let decl = |t: &str| {
        format!(
            "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG {t})\n"
        )
    };
    let e = eval(&[(
        "CMakeLists.txt",
        &format!(
            "include(FetchContent)\nif(CMAKE_PP_A)\n  if(CMAKE_PP_B)\n    {}  else()\n    {}  endif()\nelse()\n  {}endif()\nFetchContent_MakeAvailable(k)\n",
            decl("tb"),
            decl("tc"),
            decl("ta")
        ),
    )])
    .expect("evaluates");
    assert_eq!(e.undecided, None);
    assert_eq!(
        tag_values(&e),
        (vec!["ta".into(), "tb".into(), "tc".into()], false)
    );
}

/// A dependency declared on one side only is fetched by a `FetchContent_MakeAvailable` after
/// the join, with the condition (either side: on the other, CMake would stop there or take a
/// later declaration).
#[test]
fn a_declaration_on_one_side_only_is_fetched_after_the_join() {
    for (one, other) in [("", DECLARE_K), (DECLARE_K, "")] {
        let e = eval(&[(
            "CMakeLists.txt",
            &format!(
                "include(FetchContent)\nif(CMAKE_PP_OPAQUE)\n  {one}else()\n  {other}endif()\nFetchContent_MakeAvailable(k)\n"
            ),
        )])
        .expect("evaluates");
        assert_eq!(e.undecided, None);
        let fetched: Vec<(String, bool)> = e
            .configurations
            .iter()
            .flat_map(|c| &c.fetches)
            .map(|f| {
                (
                    f.tag.as_ref().map(|t| t.text.clone()).unwrap_or_default(),
                    f.only_if.is_empty(),
                )
            })
            .collect();
        assert_eq!(fetched, [("t".to_string(), false)], "{one:?} / {other:?}");
    }
}
