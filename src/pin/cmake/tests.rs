//! Tests of the CMake finder as a whole: CMake shapes in an in-memory view, each asserting the
//! exact declarations found.

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

fn scan(files: &[(&str, &str)]) -> Result<Vec<Declaration>, CmakeError> {
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, s)| (*p, s.as_bytes())).collect();
    find(&view(&files))
}

/// The declarations of a single root `CMakeLists.txt`.
fn root(src: &str) -> Vec<Declaration> {
    match scan(&[("CMakeLists.txt", src)]) {
        Ok(d) => d,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn decl(command: Command, name: &str, file: &str, line: u32) -> Declaration {
    Declaration {
        command,
        name: name.into(),
        file: file.into(),
        line,
        git_repository: None,
        git_tag: None,
        url: None,
        source_dir: None,
        patches: Vec::new(),
        overrides: Vec::new(),
    }
}

fn fc(name: &str, line: u32) -> Declaration {
    decl(Command::FetchContentDeclare, name, "CMakeLists.txt", line)
}

/// An argument whose value is its raw text.
fn lit(raw: &str, line: u32) -> Option<Arg> {
    arg(raw, Some(raw), line)
}

fn arg(raw: &str, value: Option<&str>, line: u32) -> Option<Arg> {
    Some(Arg {
        raw: raw.into(),
        value: value.map(String::from),
        line,
    })
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const FA_REPO: &str = "https://github.com/vllm-project/flash-attention.git";
const SHA: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

/// The shape vLLM's `cmake/external_projects/vllm_flash_attn.cmake` has (written for this test).
const VLLM: &str = "\
if (DEFINED ENV{VLLM_FLASH_ATTN_SRC_DIR})
  set(VLLM_FLASH_ATTN_SRC_DIR $ENV{VLLM_FLASH_ATTN_SRC_DIR})
endif()
if(VLLM_FLASH_ATTN_SRC_DIR)
  FetchContent_Declare(
          vllm-flash-attn SOURCE_DIR
          ${VLLM_FLASH_ATTN_SRC_DIR}
          BINARY_DIR ${CMAKE_BINARY_DIR}/vllm-flash-attn
  )
else()
  FetchContent_Declare(
          vllm-flash-attn
          GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git
          GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5
          GIT_PROGRESS TRUE
          # Don't share the vllm-flash-attn build between build types
          BINARY_DIR ${CMAKE_BINARY_DIR}/vllm-flash-attn
          PATCH_COMMAND git apply --ignore-whitespace ${CMAKE_CURRENT_LIST_DIR}/patches/fa4-sm90.patch
  )
endif()
";

#[test]
fn vllm_flash_attn_shape() {
    let file = "cmake/external_projects/vllm_flash_attn.cmake";
    let got = scan(&[("CMakeLists.txt", "project(vllm)\n"), (file, VLLM)]);
    let overrides = strings(&["VLLM_FLASH_ATTN_SRC_DIR"]);
    let mut local = decl(Command::FetchContentDeclare, "vllm-flash-attn", file, 5);
    local.source_dir = arg("${VLLM_FLASH_ATTN_SRC_DIR}", None, 7);
    local.overrides = overrides.clone();
    let mut pinned = decl(Command::FetchContentDeclare, "vllm-flash-attn", file, 11);
    pinned.git_repository = lit(FA_REPO, 13);
    pinned.git_tag = lit(SHA, 14);
    pinned.patches = strings(&["cmake/external_projects/patches/fa4-sm90.patch"]);
    pinned.overrides = overrides;
    assert_eq!(got.ok(), Some(vec![local, pinned]));
}

#[test]
fn multi_line_with_comments_between_arguments() {
    let got = root(
        "include(FetchContent) # fetch things\n\
         FetchContent_Declare( # opening comment\n\
         \x20 cutlass # the name\n\
         \x20 # a whole-line comment ( with a paren\n\
         \x20 GIT_REPOSITORY\n\
         \x20   https://github.com/NVIDIA/cutlass.git # trailing\n\
         \x20 GIT_TAG v3.9.2# no space before the comment\n\
         \x20 GIT_SHALLOW TRUE\n\
         )\n",
    );
    let mut want = fc("cutlass", 2);
    want.git_repository = lit("https://github.com/NVIDIA/cutlass.git", 6);
    want.git_tag = lit("v3.9.2", 7);
    assert_eq!(got, vec![want]);
}

#[test]
fn bracket_comments_and_bracket_arguments() {
    let got = root(
        "FetchContent_Declare(flashmla #[[ a bracket\ncomment ]] GIT_REPOSITORY\n\
         #[==[ another ]] still comment ]==]\n\
         [[https://github.com/vllm-project/FlashMLA]]\n\
         GIT_TAG [=[\nabc${NOT_EXPANDED}]=])\n",
    );
    let mut want = fc("flashmla", 1);
    want.git_repository = lit("https://github.com/vllm-project/FlashMLA", 4);
    // The newline right after `[=[` is not content; brackets are never expanded.
    want.git_tag = lit("abc${NOT_EXPANDED}", 5);
    assert_eq!(got, vec![want]);
}

#[test]
fn quoted_values_with_escapes_and_continuations() {
    let got = root(
        "set(TAG \"v1.0\")\n\
         FetchContent_Declare(\"deep gemm\"\n\
         \x20 GIT_REPOSITORY \"https://github.com/deepseek-ai/\\\n\
         DeepGEMM.git\"\n\
         \x20 GIT_TAG \"${TAG}\"\n\
         \x20 SOURCE_DIR \"a\\;b\\tc\")\n",
    );
    let mut want = fc("deep gemm", 2);
    want.git_repository = arg(
        "https://github.com/deepseek-ai/DeepGEMM.git",
        Some("https://github.com/deepseek-ai/DeepGEMM.git"),
        3,
    );
    want.git_tag = arg("${TAG}", Some("v1.0"), 5);
    want.source_dir = arg("a\\;b\\tc", Some("a;b\tc"), 6);
    assert_eq!(got, vec![want]);
}

#[test]
fn set_indirection_cache_and_nested_references() {
    let got = root(
        "set(FA_REPO_OWNER vllm-project)\n\
         set(FA_REPO https://github.com/${FA_REPO_OWNER}/flash-attention.git CACHE STRING \"repo\" FORCE)\n\
         set(WHICH MAIN)\n\
         set(FA_TAG_MAIN 9cd61de38763d712bb6ce56e2a02cc2bf718c89f)\n\
         set(JOINED a b \"c d\")\n\
         FetchContent_Declare(fa\n\
         \x20 GIT_REPOSITORY ${FA_REPO}\n\
         \x20 GIT_TAG ${FA_TAG_${WHICH}}\n\
         \x20 SOURCE_DIR \"${JOINED}\")\n",
    );
    let mut want = fc("fa", 6);
    want.git_repository = arg("${FA_REPO}", Some(FA_REPO), 7);
    want.git_tag = arg(
        "${FA_TAG_${WHICH}}",
        Some("9cd61de38763d712bb6ce56e2a02cc2bf718c89f"),
        8,
    );
    want.source_dir = arg("${JOINED}", Some("a;b;c d"), 9);
    assert_eq!(got, vec![want]);
}

#[test]
fn unset_and_unknown_variables_give_no_value() {
    let got = root(
        "set(TAG abc)\n\
         unset(TAG)\n\
         FetchContent_Declare(x GIT_REPOSITORY ${CMAKE_BINARY_DIR}/r GIT_TAG ${TAG})\n",
    );
    let mut want = fc("x", 3);
    want.git_repository = arg("${CMAKE_BINARY_DIR}/r", None, 3);
    want.git_tag = arg("${TAG}", None, 3);
    assert_eq!(got, vec![want]);
}

#[test]
fn all_branches_run_in_order() {
    let got = root(
        "if(USE_OLD)\n  set(TAG old)\nelseif(USE_MID)\n  set(TAG mid)\nelse()\n  set(TAG new)\nendif()\n\
         FetchContent_Declare(x GIT_TAG ${TAG})\n",
    );
    let mut want = fc("x", 8);
    want.git_tag = arg("${TAG}", Some("new"), 8);
    assert_eq!(got, vec![want]);
}

#[test]
fn environment_overrides_with_other_names() {
    let got = root(
        "if(DEFINED ENV{FA_CHECKOUT})\n\
         \x20 set(FA_SOURCE_DIR $ENV{FA_CHECKOUT})\n\
         endif()\n\
         set(FA_LOCAL ${FA_SOURCE_DIR})\n\
         FetchContent_Declare(fa SOURCE_DIR ${FA_LOCAL})\n\
         FetchContent_Declare(other SOURCE_DIR $ENV{OTHER_SRC})\n\
         if(DEFINED ENV{MLA_SRC_DIR})\n\
         \x20 FetchContent_Declare(mla GIT_REPOSITORY https://x/mla.git GIT_TAG main SOURCE_DIR ${FA_LOCAL})\n\
         endif()\n",
    );
    let mut fa = fc("fa", 5);
    fa.source_dir = arg("${FA_LOCAL}", None, 5);
    fa.overrides = strings(&["FA_CHECKOUT", "FA_LOCAL", "FA_SOURCE_DIR"]);
    let mut other = fc("other", 6);
    other.source_dir = arg("$ENV{OTHER_SRC}", None, 6);
    other.overrides = strings(&["OTHER_SRC"]);
    // With a download source, SOURCE_DIR is where the clone goes, not a bypass; the enclosing
    // `ENV{MLA_SRC_DIR}` test is.
    let mut mla = fc("mla", 8);
    mla.git_repository = lit("https://x/mla.git", 8);
    mla.git_tag = lit("main", 8);
    mla.source_dir = arg("${FA_LOCAL}", None, 8);
    mla.overrides = strings(&["MLA_SRC_DIR"]);
    assert_eq!(got, vec![fa, other, mla]);
}

#[test]
fn external_project_add() {
    let got = root(
        "ExternalProject_Add(qutlass\n\
         \x20 GIT_REPOSITORY https://github.com/IST-DASLab/qutlass.git\n\
         \x20 GIT_TAG 1f7b1f2e\n\
         \x20 CONFIGURE_COMMAND \"\"\n\
         \x20 BUILD_COMMAND make -j COMMAND make install\n\
         \x20 INSTALL_COMMAND \"\")\n",
    );
    let mut want = decl(Command::ExternalProjectAdd, "qutlass", "CMakeLists.txt", 1);
    want.git_repository = lit("https://github.com/IST-DASLab/qutlass.git", 2);
    want.git_tag = lit("1f7b1f2e", 3);
    assert_eq!(got, vec![want]);
}

#[test]
fn cpm_keyword_forms() {
    let got = root(
        "CPMAddPackage(\n\
         \x20 NAME triton_kernels\n\
         \x20 GITHUB_REPOSITORY triton-lang/triton\n\
         \x20 GIT_TAG v3.5.0\n\
         \x20 OPTIONS \"BUILD_TESTS OFF\")\n\
         CPMAddPackage(GITLAB_REPOSITORY g/lib VERSION 1.2.3 DOWNLOAD_ONLY YES)\n\
         CPMAddPackage(NAME zlib URL https://x/zlib.tar.gz URL_HASH SHA256=00)\n",
    );
    let cpm = |name: &str, line| decl(Command::CpmAddPackage, name, "CMakeLists.txt", line);
    let mut a = cpm("triton_kernels", 1);
    a.git_repository = arg(
        "triton-lang/triton",
        Some("https://github.com/triton-lang/triton"),
        3,
    );
    a.git_tag = lit("v3.5.0", 4);
    // CPM tags a bare VERSION as `v<VERSION>`.
    let mut b = cpm("lib", 6);
    b.git_repository = arg("g/lib", Some("https://gitlab.com/g/lib"), 6);
    b.git_tag = arg("1.2.3", Some("v1.2.3"), 6);
    let mut c = cpm("zlib", 7);
    c.url = lit("https://x/zlib.tar.gz", 7);
    assert_eq!(got, vec![a, b, c]);
}

#[test]
fn cpm_shorthand_forms() {
    let got = root(
        "CPMAddPackage(\"gh:fmtlib/fmt#10.2.1\")\n\
         set(CCCL_VERSION 2.8.0)\n\
         CPMAddPackage(\"gh:NVIDIA/cccl@${CCCL_VERSION}\")\n\
         CPMAddPackage(\"gh:owner/repo@1.0#deadbeef\") # `#` unquoted starts a comment\n\
         CPMAddPackage(\"https://example.com/x/y.git@2.0\")\n",
    );
    let cpm = |name: &str, line| decl(Command::CpmAddPackage, name, "CMakeLists.txt", line);
    let mut fmt = cpm("fmt", 1);
    fmt.git_repository = arg("fmtlib/fmt", Some("https://github.com/fmtlib/fmt"), 1);
    fmt.git_tag = lit("10.2.1", 1);
    let mut cccl = cpm("cccl", 3);
    cccl.git_repository = arg("NVIDIA/cccl", Some("https://github.com/NVIDIA/cccl"), 3);
    cccl.git_tag = arg("${CCCL_VERSION}", Some("v2.8.0"), 3);
    let mut repo = cpm("repo", 4);
    repo.git_repository = arg("owner/repo", Some("https://github.com/owner/repo"), 4);
    repo.git_tag = lit("deadbeef", 4);
    let mut y = cpm("y", 5);
    y.git_repository = lit("https://example.com/x/y.git", 5);
    y.git_tag = arg("2.0", Some("v2.0"), 5);
    assert_eq!(got, vec![fmt, cccl, repo, y]);
}

#[test]
fn several_declares_in_one_file_and_argument_lists_from_variables() {
    let got = root(
        "FetchContent_Declare(a GIT_REPOSITORY https://x/a.git GIT_TAG 1)\n\
         set(B_ARGS GIT_REPOSITORY https://x/b.git GIT_TAG 2)\n\
         FetchContent_Declare(b\n  ${B_ARGS})\n\
         FetchContent_Declare(c URL https://x/c.zip)\n",
    );
    let mut a = fc("a", 1);
    a.git_repository = lit("https://x/a.git", 1);
    a.git_tag = lit("1", 1);
    let mut b = fc("b", 3);
    b.git_repository = arg("${B_ARGS}", Some("https://x/b.git"), 4);
    b.git_tag = arg("${B_ARGS}", Some("2"), 4);
    let mut c = fc("c", 5);
    c.url = lit("https://x/c.zip", 5);
    assert_eq!(got, vec![a, b, c]);
}

#[test]
fn declares_across_files_share_one_scope_in_order() {
    let got = scan(&[
        (
            "CMakeLists.txt",
            "set(MLA_TAG abc)\ninclude(cmake/external_projects/flashmla.cmake)\n\
             FetchContent_Declare(root_dep GIT_TAG ${LATER})\n",
        ),
        (
            "cmake/external_projects/flashmla.cmake",
            "FetchContent_Declare(flashmla GIT_TAG ${MLA_TAG})\n",
        ),
        ("cmake/external_projects/b.cmake", "set(LATER late)\n"),
        (
            "cmake/utils/CMakeLists.txt",
            "FetchContent_Declare(sub GIT_TAG t)\n",
        ),
        // Neither a .cmake file nor under cmake/: not scanned.
        ("cmake/notes.txt", "FetchContent_Declare(no GIT_TAG t)\n"),
        (
            "csrc/CMakeLists.txt",
            "FetchContent_Declare(no GIT_TAG t)\n",
        ),
    ]);
    let mut root_dep = fc("root_dep", 3);
    root_dep.git_tag = arg("${LATER}", None, 3);
    let mut mla = decl(
        Command::FetchContentDeclare,
        "flashmla",
        "cmake/external_projects/flashmla.cmake",
        1,
    );
    mla.git_tag = arg("${MLA_TAG}", Some("abc"), 1);
    let mut sub = decl(
        Command::FetchContentDeclare,
        "sub",
        "cmake/utils/CMakeLists.txt",
        1,
    );
    sub.git_tag = lit("t", 1);
    assert_eq!(got.ok(), Some(vec![root_dep, mla, sub]));
}

#[test]
fn missing_git_tag_and_branch_names() {
    let got = root(
        "FetchContent_Declare(a GIT_REPOSITORY https://x/a.git)\n\
         FetchContent_Declare(b GIT_REPOSITORY https://x/b.git GIT_TAG main GIT_SHALLOW ON)\n\
         FetchContent_Declare(c GIT_REPOSITORY https://x/c.git GIT_TAG GIT_SHALLOW ON)\n",
    );
    let mut a = fc("a", 1);
    a.git_repository = lit("https://x/a.git", 1);
    let mut b = fc("b", 2);
    b.git_repository = lit("https://x/b.git", 2);
    b.git_tag = lit("main", 2);
    let mut c = fc("c", 3);
    c.git_repository = lit("https://x/c.git", 3);
    assert_eq!(got, vec![a, b, c]);
}

#[test]
fn url_instead_of_git() {
    let got = root(
        "FetchContent_Declare(json\n  URL https://x/json-3.11.3.tar.xz\n  URL_HASH SHA256=abc\n  DOWNLOAD_EXTRACT_TIMESTAMP ON)\n",
    );
    let mut want = fc("json", 1);
    want.url = lit("https://x/json-3.11.3.tar.xz", 2);
    assert_eq!(got, vec![want]);
}

#[test]
fn unterminated_constructs_name_their_opening_line() {
    let err = |src: &str| match scan(&[("CMakeLists.txt", "project(x)\n"), ("cmake/a.cmake", src)])
    {
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
fn tabs_and_crlf() {
    let got = root(
        "if(X)\r\n\tFetchContent_Declare(\t\r\n\t\ttabbed\r\n\t\tGIT_REPOSITORY\thttps://x/t.git\r\n\t\tGIT_TAG\t\"v1\"\t# c\r\n\t)\r\nendif()\r\n",
    );
    let mut want = fc("tabbed", 2);
    want.git_repository = lit("https://x/t.git", 4);
    want.git_tag = lit("v1", 5);
    assert_eq!(got, vec![want]);
}

#[test]
fn command_names_are_case_insensitive() {
    let got = root(
        "SET(T abc)\nfetchcontent_declare(a GIT_TAG ${T})\nFETCHCONTENT_DECLARE(b)\n\
         externalproject_add(c)\ncpmaddpackage(NAME d)\n",
    );
    let mut a = fc("a", 2);
    a.git_tag = arg("${T}", Some("abc"), 2);
    let c = decl(Command::ExternalProjectAdd, "c", "CMakeLists.txt", 4);
    let d = decl(Command::CpmAddPackage, "d", "CMakeLists.txt", 5);
    assert_eq!(got, vec![a, fc("b", 3), c, d]);
}

#[test]
fn patch_command_with_files_commands_and_globs() {
    let file = "cmake/external_projects/deps.cmake";
    let src = "\
FetchContent_Declare(one
  GIT_TAG a
  PATCH_COMMAND git apply ${CMAKE_CURRENT_LIST_DIR}/patches/../patches/one.patch
    COMMAND patch -p1 -i ${CMAKE_SOURCE_DIR}/third_party/two.diff
    COMMAND patch -p1 -i inside-the-dependency.patch
  UPDATE_COMMAND \"\")
FetchContent_Declare(dir
  PATCH_COMMAND ${CMAKE_COMMAND} -DPATCH_DIR=x -P apply.cmake ${CMAKE_CURRENT_LIST_DIR}/patches)
FetchContent_Declare(glob
  PATCH_COMMAND git apply ${CMAKE_CURRENT_LIST_DIR}/patches/0*.patch)
file(GLOB FA_PATCHES ${CMAKE_CURRENT_LIST_DIR}/patches/*.patch)
FetchContent_Declare(var PATCH_COMMAND git apply ${FA_PATCHES})
FetchContent_Declare(unknown PATCH_COMMAND git apply ${NOPE}/x.patch)
";
    let files: Vec<(&str, &[u8])> = vec![
        ("CMakeLists.txt", b"project(x)\n"),
        (file, src.as_bytes()),
        ("cmake/external_projects/patches/one.patch", b""),
        ("cmake/external_projects/patches/02-b.patch", b""),
        ("cmake/external_projects/patches/01-a.patch", b""),
        ("cmake/external_projects/patches/README.md", b""),
    ];
    let got = find(&view(&files));
    let d = |name: &str, line| decl(Command::FetchContentDeclare, name, file, line);
    let mut one = d("one", 1);
    one.git_tag = lit("a", 2);
    one.patches = strings(&[
        "cmake/external_projects/patches/one.patch",
        "third_party/two.diff",
        "inside-the-dependency.patch",
    ]);
    let mut dir = d("dir", 7);
    dir.patches = strings(&[
        "cmake/external_projects/patches/01-a.patch",
        "cmake/external_projects/patches/02-b.patch",
        "cmake/external_projects/patches/one.patch",
    ]);
    let mut glob = d("glob", 9);
    glob.patches = strings(&[
        "cmake/external_projects/patches/01-a.patch",
        "cmake/external_projects/patches/02-b.patch",
    ]);
    let mut var = d("var", 12);
    var.patches = dir.patches.clone();
    let mut unknown = d("unknown", 13);
    unknown.patches = strings(&["${NOPE}/x.patch"]);
    assert_eq!(got.ok(), Some(vec![one, dir, glob, var, unknown]));
}

#[test]
fn non_utf8_file_is_an_error() {
    let files: Vec<(&str, &[u8])> = vec![
        ("CMakeLists.txt", b"project(x)\n"),
        ("cmake/bad.cmake", b"set(A \"caf\xe9\")\n"),
    ];
    match find(&view(&files)) {
        Err(CmakeError::NotUtf8 { file, offset }) => {
            assert_eq!((file.as_str(), offset), ("cmake/bad.cmake", 10));
        }
        other => panic!("expected NotUtf8, got {other:?}"),
    }
}

#[test]
fn deeply_nested_parentheses() {
    let depth = 100_000;
    let src = format!(
        "FetchContent_Declare(deep GIT_TAG abc CMAKE_ARGS {}{})\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let start = Instant::now();
    let got = root(&src);
    // A hang guard (a quadratic or recursive reader would blow it), not a speed check.
    assert!(start.elapsed() < HANG_GUARD);
    let mut want = fc("deep", 1);
    want.git_tag = lit("abc", 1);
    assert_eq!(got, vec![want]);
    // Unbalanced: the error names the opening line, without recursion either.
    let src = format!("\nfoo({}", "(".repeat(depth));
    assert!(matches!(
        scan(&[("CMakeLists.txt", &src)]),
        Err(CmakeError::Syntax { line: 2, .. })
    ));
    // Nested references expand without recursion too.
    let tag = format!("{}A{}", "${".repeat(depth), "}".repeat(depth));
    let src = format!("FetchContent_Declare(x GIT_TAG {tag})\n");
    let mut want = fc("x", 1);
    want.git_tag = arg(&tag, None, 1);
    assert_eq!(root(&src), vec![want]);
}

#[test]
fn a_large_file_parses_quickly() {
    // As large as a CMake file may be (larger ones are refused: see the cap test).
    let limit = MAX_CMAKE_BYTES - (64 << 10);
    let mut src = String::with_capacity(MAX_CMAKE_BYTES);
    let mut lines: u32 = 0;
    let mut n: u32 = 0;
    while src.len() < limit {
        src.push_str(&format!(
            "# comment {n}\n\
             if(OPT_{n} AND NOT DEFINED ENV{{X_{n}}})\n\
             \tset(VAR_{n} \"value {n}\" [[bracket]]) # trailing\n\
             \tset(REF_{n} ${{VAR_{}}}/x CACHE STRING \"doc\")\n\
             \tFetchContent_Declare(dep_{n} GIT_TAG ${{REF_{n}}})\n\
             endif()\n",
            n / 2
        ));
        lines += 6;
        n += 1;
    }
    src.push_str("FetchContent_Declare(last GIT_TAG \"${VAR_1}\")\n");
    // Speed is for benchmarks; this checks that a large file is read whole and right.
    let got = root(&src);
    assert_eq!(got.len() as u32, n + 1);
    let mut want = fc("last", lines + 1);
    want.git_tag = arg("${VAR_1}", Some("value 1;bracket"), lines + 1);
    assert_eq!(got.last(), Some(&want));
}

#[test]
fn commented_out_declares_are_not_found() {
    let got = root(
        "# FetchContent_Declare(old GIT_TAG x)\n\
         #[[\nFetchContent_Declare(older GIT_TAG y)\n]]\n\
         #[=[ FetchContent_Declare(oldest) ]]\n]=]\n\
         set(S \"FetchContent_Declare(in_a_string)\")\n\
         FetchContent_Declare(live #[[ GIT_TAG hidden ]] GIT_TAG shown) # FetchContent_Declare(no)\n",
    );
    let mut want = fc("live", 8);
    want.git_tag = lit("shown", 8);
    assert_eq!(got, vec![want]);
}

#[test]
fn declare_name_from_a_variable() {
    let got = root(
        "set(DEP_NAME vllm-flash-attn)\n\
         FetchContent_Declare(${DEP_NAME} GIT_TAG ${SHA})\n\
         FetchContent_Declare(${UNKNOWN_NAME} GIT_TAG x)\n",
    );
    let mut a = fc("vllm-flash-attn", 2);
    a.git_tag = arg("${SHA}", None, 2);
    let mut b = fc("${UNKNOWN_NAME}", 3);
    b.git_tag = lit("x", 3);
    assert_eq!(got, vec![a, b]);
}

#[test]
fn fetchcontent_source_dir_is_an_override_only_when_mentioned() {
    let src = "FetchContent_Declare(vllm-flash-attn GIT_TAG abc)\nFetchContent_Declare(other GIT_TAG d)\n";
    let mut fa = fc("vllm-flash-attn", 1);
    fa.git_tag = lit("abc", 1);
    let mut other = fc("other", 2);
    other.git_tag = lit("d", 2);
    assert_eq!(root(src), vec![fa.clone(), other.clone()]);

    let got = scan(&[
        ("CMakeLists.txt", src),
        (
            "cmake/hints.cmake",
            "# Use -DFETCHCONTENT_SOURCE_DIR_VLLM_FLASH_ATTN=/path for a local checkout\n",
        ),
    ]);
    fa.overrides = strings(&["FETCHCONTENT_SOURCE_DIR_VLLM_FLASH_ATTN"]);
    assert_eq!(got.ok(), Some(vec![fa, other]));
}

#[test]
fn current_source_dir_is_the_including_lists_directory() {
    let got = scan(&[
        ("CMakeLists.txt", "project(x)\n"),
        (
            "cmake/a.cmake",
            "FetchContent_Declare(a PATCH_COMMAND p ${CMAKE_CURRENT_SOURCE_DIR}/p/a.patch)\n",
        ),
        (
            "cmake/sub/CMakeLists.txt",
            "FetchContent_Declare(b PATCH_COMMAND p ${CMAKE_CURRENT_SOURCE_DIR}/b.patch)\n",
        ),
    ]);
    let mut a = decl(Command::FetchContentDeclare, "a", "cmake/a.cmake", 1);
    a.patches = strings(&["p/a.patch"]);
    let mut b = decl(
        Command::FetchContentDeclare,
        "b",
        "cmake/sub/CMakeLists.txt",
        1,
    );
    b.patches = strings(&["cmake/sub/b.patch"]);
    assert_eq!(got.ok(), Some(vec![a, b]));
}

#[test]
fn list_append_and_option() {
    let got = root(
        "option(FA_TAG \"doc\" abc)\n\
         list(APPEND FA_ARGS GIT_REPOSITORY https://x/fa.git)\n\
         list(APPEND FA_ARGS GIT_TAG ${FA_TAG})\n\
         FetchContent_Declare(fa ${FA_ARGS})\n",
    );
    let mut want = fc("fa", 4);
    want.git_repository = arg("${FA_ARGS}", Some("https://x/fa.git"), 4);
    want.git_tag = arg("${FA_ARGS}", Some("abc"), 4);
    assert_eq!(got, vec![want]);
}

#[test]
fn no_cmake_files_means_no_declarations() {
    assert_eq!(scan(&[]).ok(), Some(Vec::new()));
    assert_eq!(scan(&[("setup.py", "x")]).ok(), Some(Vec::new()));
}

#[test]
fn directory_view_on_disk() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    };
    let ext = dir.path().join("cmake/external_projects");
    let write = |p: &std::path::Path, s: &str| {
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(p, s) {
            panic!("write {}: {e}", p.display());
        }
    };
    write(&dir.path().join("CMakeLists.txt"), "project(vllm)\n");
    write(&ext.join("vllm_flash_attn.cmake"), VLLM);
    write(&ext.join("patches/fa4-sm90.patch"), "");
    let got = find(&crate::target::DirView::new(dir.path()));
    let tags: Option<Vec<Option<String>>> = got.ok().map(|d| {
        d.into_iter()
            .map(|d| d.git_tag.and_then(|a| a.value))
            .collect()
    });
    assert_eq!(tags, Some(vec![None, Some(SHA.to_string())]));
}

#[test]
fn hostile_expansion_stays_bounded() {
    // 20 doublings would be a 1 TiB value; values past 1 MiB read as unknown instead.
    let mut src = String::from("set(A 0123456789abcdef)\n");
    for _ in 0..40 {
        src.push_str("set(A ${A}${A})\n");
    }
    // A huge value referenced by many arguments of one call.
    src.push_str("set(B 0123456789abcdef)\n");
    for _ in 0..15 {
        src.push_str("set(B \"${B}${B}\")\n");
    }
    src.push_str(&format!(
        "FetchContent_Declare(x GIT_TAG \"${{A}}\" SOURCE_DIR \"${{B}}\" {})\n",
        "\"${B}\" ".repeat(100_000)
    ));
    let start = Instant::now();
    let got = root(&src);
    assert!(start.elapsed() < HANG_GUARD);
    assert_eq!(got.len(), 1);
    let tag = got.first().and_then(|d| d.git_tag.clone());
    assert_eq!(tag, arg("${A}", None, 58));
    let dir = got
        .first()
        .and_then(|d| d.source_dir.as_ref())
        .and_then(|a| a.value.clone());
    assert_eq!(dir.map(|v| v.len()), Some(16 << 15));
}

#[test]
fn a_million_parentheses_are_refused_not_stored() {
    // Found by the bad-input corpus: each nested `(` is an argument, and a million of them took
    // more than 512 MB. The tokenizer now stops at its budget with a syntax error.
    let src = format!(
        "set(X {}{})\n",
        "(".repeat(1_000_000),
        ")".repeat(1_000_000)
    );
    let start = Instant::now();
    match scan(&[("CMakeLists.txt", &src)]) {
        Err(CmakeError::Syntax { message, .. }) => {
            assert!(message.contains("more than 1000000"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < HANG_GUARD);
    // Many small commands under the budget still read.
    let mut src = "a()\n".repeat(500_000);
    src.push_str("FetchContent_Declare(x GIT_TAG v1)\n");
    assert_eq!(root(&src).len(), 1);
}

#[test]
fn cmake_files_over_the_cap_are_refused() {
    let big = format!("# {}\n", "x".repeat(MAX_CMAKE_BYTES));
    match scan(&[("CMakeLists.txt", &big)]) {
        Err(e @ CmakeError::TooLarge { .. }) => {
            assert!(e.to_string().contains("cap for a CMake file"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}
