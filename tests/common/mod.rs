//! Test helpers: real git repositories built in temporary directories, FlashAttention-shaped
//! Python sources in the buggy, fixed and literal-`False` shapes (written for these tests), and
//! vLLM-shaped source trees that pin a commit through CMake.
#![allow(dead_code)]

pub mod artifact;
pub mod elf;
pub mod git_http;
pub mod image;
pub mod layouts;
pub mod require;
pub mod run;
pub mod sarif;

#[allow(unused_imports)]
pub use run::{Pinprobe, Run, pinprobe, run_in, scan_offline_json};

use std::path::{Path, PathBuf};
use std::process::Command;

/// Run git in `dir` with a fixed identity and clock, returning stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Commit everything in `dir` and return the full SHA.
pub fn commit(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

pub fn init(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q", "-b", "main"]);
}

/// Cute files that never change in the synthetic history (fingerprints need more than two).
pub const CUTE_EXTRAS: &[(&str, &str)] = &[
    ("__init__.py", "__version__ = \"4.0.0\"\n"),
    (
        "utils.py",
        "def ceil_div(a, b):\n    return (a + b - 1) // b\n",
    ),
    (
        "interface.py",
        "from flash_attn.cute.utils import ceil_div\n\n\ndef _flash_attn_fwd(q, k, v, num_splits=1):\n    return ceil_div(k.shape[1], 128), num_splits\n",
    ),
    (
        "seqlen_info.py",
        "class SeqlenInfo:\n    def __init__(self, seqlen_k):\n        self.seqlen_k = seqlen_k\n",
    ),
];

pub const BLOCK_INFO: &str = "flash_attn/cute/block_info.py";
pub const FWD_SM90: &str = "flash_attn/cute/flash_fwd_sm90.py";

/// `block_info.py` before the bug: no `num_splits` field.
pub fn block_info_old() -> String {
    r#"from dataclasses import dataclass
from cutlass import Int32


@dataclass(frozen=True)
class BlockInfo:
    tile_m: int
    tile_n: int
    is_causal: bool
    is_local: bool = False
    is_split_kv: bool = False

    def get_n_block_min_max(self, seqlen_info, m_block, split_idx=0, num_splits=1):
        n_block_max = (seqlen_info.seqlen_k + self.tile_n - 1) // self.tile_n
        n_block_min = 0
        if self.is_split_kv:
            per_split = (n_block_max - n_block_min + num_splits - 1) // num_splits
            n_block_min = n_block_min + split_idx * per_split
            n_block_max = min(n_block_min + per_split, n_block_max)
        return n_block_min, n_block_max
"#
    .to_string()
}

/// `block_info.py` with the bug's first half: a `num_splits` field that overrides the argument.
pub fn block_info_new() -> String {
    r#"from dataclasses import dataclass
from cutlass import Int32


@dataclass(frozen=True)
class BlockInfo:
    tile_m: int
    tile_n: int
    is_causal: bool
    is_local: bool = False
    is_split_kv: bool = False
    num_splits: Int32 = 1

    def get_n_block_min_max(self, seqlen_info, m_block, split_idx=0, num_splits=1):
        n_block_max = (seqlen_info.seqlen_k + self.tile_n - 1) // self.tile_n
        n_block_min = 0
        if self.is_split_kv:
            num_splits = self.num_splits
            per_split = (n_block_max - n_block_min + num_splits - 1) // num_splits
            n_block_min = n_block_min + split_idx * per_split
            n_block_max = min(n_block_min + per_split, n_block_max)
        return n_block_min, n_block_max
"#
    .to_string()
}

/// How the SM90 kernel builds its `BlockInfo`.
#[derive(Clone, Copy, Debug)]
pub enum Sm90Call {
    /// Non-literal `is_split_kv`, no `num_splits=`: the bug.
    Buggy,
    /// Non-literal `is_split_kv` and `num_splits=num_splits`: the fix.
    Fixed,
    /// Literal `False` for `is_split_kv` (upstream flash-attn-4): not affected.
    LiteralFalse,
}

pub fn fwd_sm90(call: Sm90Call) -> String {
    let args = match call {
        Sm90Call::Buggy => "            self.is_split_kv,\n",
        Sm90Call::Fixed => {
            "            self.is_split_kv,\n            # pass the split count through\n            num_splits=num_splits,\n"
        }
        Sm90Call::LiteralFalse => "            False,\n",
    };
    format!(
        r#"from flash_attn.cute.block_info import BlockInfo


class FlashAttentionForwardSm90:
    def __init__(self, tile_m, tile_n, is_causal, is_local, is_split_kv):
        self.tile_m = tile_m
        self.tile_n = tile_n
        self.is_causal = is_causal
        self.is_local = is_local
        self.is_split_kv = is_split_kv

    def kernel(self, mQ, mK, mV, num_splits):
        # a comment that mentions num_splits=num_splits must not count as the fix
        block_info = BlockInfo(
            self.tile_m,
            self.tile_n,
            self.is_causal,
            self.is_local,
{args}        )
        return block_info
"#
    )
}

/// A synthetic FlashAttention history (see `build`).
pub struct FaHistory {
    pub dir: PathBuf,
    /// Before the bug (old BlockInfo).
    pub c0: String,
    /// Introduces the bug (BlockInfo gains num_splits).
    pub introduce: String,
    /// Unrelated change after the bug.
    pub c2: String,
    /// The fix (num_splits= in the SM90 call).
    pub fix: String,
    /// Unrelated change after the fix.
    pub c4: String,
    /// Reverts the fix: the bug is back.
    pub revert: String,
    /// Side branch from c2: an unrelated commit (still buggy).
    pub side1: String,
    /// Side branch: cherry-pick of the fix.
    pub side_pick: String,
    /// Branch from `introduce` whose SM90 call passes literal False.
    pub literal_false: String,
}

impl FaHistory {
    pub fn build(dir: &Path) -> FaHistory {
        init(dir);
        write(
            dir,
            "README.md",
            "flash-attention (synthetic test history)\n",
        );
        write(dir, BLOCK_INFO, &block_info_old());
        write(dir, FWD_SM90, &fwd_sm90(Sm90Call::Buggy));
        for (name, text) in CUTE_EXTRAS {
            write(dir, &format!("flash_attn/cute/{name}"), text);
        }
        let c0 = commit(dir, "initial");
        write(dir, BLOCK_INFO, &block_info_new());
        let introduce = commit(dir, "BlockInfo: carry num_splits");
        write(
            dir,
            "README.md",
            "flash-attention (synthetic test history)\n\nmore words\n",
        );
        let c2 = commit(dir, "docs");
        git(dir, &["checkout", "-q", "-b", "side", &c2]);
        write(dir, "setup.py", "print('side')\n");
        let side1 = commit(dir, "side: unrelated");
        git(dir, &["checkout", "-q", "main"]);
        write(dir, FWD_SM90, &fwd_sm90(Sm90Call::Fixed));
        let fix = commit(dir, "sm90: pass num_splits to BlockInfo");
        write(dir, "CHANGELOG.md", "fixed split-kv\n");
        let c4 = commit(dir, "changelog");
        git(dir, &["revert", "--no-edit", &fix]);
        let revert = git(dir, &["rev-parse", "HEAD"]);
        git(dir, &["checkout", "-q", "side"]);
        git(dir, &["cherry-pick", "-x", &fix]);
        let side_pick = git(dir, &["rev-parse", "HEAD"]);
        git(dir, &["checkout", "-q", "-b", "upstream-style", &introduce]);
        write(dir, FWD_SM90, &fwd_sm90(Sm90Call::LiteralFalse));
        let literal_false = commit(dir, "sm90: no split-kv");
        git(dir, &["checkout", "-q", "main"]);
        FaHistory {
            dir: dir.to_path_buf(),
            c0,
            introduce,
            c2,
            fix,
            c4,
            revert,
            side1,
            side_pick,
            literal_false,
        }
    }
}

/// The CMake file that pins FlashAttention, in vLLM's shape.
pub fn fa_cmake(repo: &str, tag: &str, patch: Option<&str>) -> String {
    let patch = patch
        .map(|p| {
            format!("          PATCH_COMMAND git apply ${{CMAKE_CURRENT_LIST_DIR}}/patches/{p}\n")
        })
        .unwrap_or_default();
    format!(
        r#"include(FetchContent)

if (DEFINED ENV{{VLLM_FLASH_ATTN_SRC_DIR}})
  set(VLLM_FLASH_ATTN_SRC_DIR $ENV{{VLLM_FLASH_ATTN_SRC_DIR}})
endif()

if(VLLM_FLASH_ATTN_SRC_DIR)
  FetchContent_Declare(
          vllm-flash-attn SOURCE_DIR
          ${{VLLM_FLASH_ATTN_SRC_DIR}}
          BINARY_DIR ${{CMAKE_BINARY_DIR}}/vllm-flash-attn
  )
else()
  FetchContent_Declare(
          vllm-flash-attn
          GIT_REPOSITORY {repo}
          GIT_TAG {tag}
          GIT_PROGRESS TRUE
          # Don't share the vllm-flash-attn build between build types
          BINARY_DIR ${{CMAKE_BINARY_DIR}}/vllm-flash-attn
{patch}  )
endif()

FetchContent_MakeAvailable(vllm-flash-attn)
"#
    )
}

pub const FA_REPO: &str = "https://github.com/vllm-project/flash-attention.git";

/// A vLLM-shaped source tree pinning FlashAttention at `tag`.
pub fn vllm_tree(root: &Path, repo: &str, tag: &str) {
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\n",
    );
    write(
        root,
        "cmake/external_projects/vllm_flash_attn.cmake",
        &fa_cmake(repo, tag, None),
    );
}

/// The synthetic FlashAttention history beside a rules directory holding one ancestry-only
/// rule `id` (introduced and fixed at the history's commits): what ancestry tests scan against.
pub struct AncestryFixture {
    _tmp: tempfile::TempDir,
    pub history: FaHistory,
    /// The rules directory (`--rules`).
    pub rules: std::path::PathBuf,
    /// A scratch directory for the trees under test.
    pub root: std::path::PathBuf,
}

impl AncestryFixture {
    pub fn new(id: &str) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let history = FaHistory::build(&tmp.path().join("flash-attention"));
        let rules = tmp.path().join("rules");
        write(
            &rules,
            "test.yaml",
            &ancestry_rule(
                id,
                &[("introduced", &history.introduce), ("fixed", &history.fix)],
            ),
        );
        let root = tmp.path().to_path_buf();
        AncestryFixture {
            _tmp: tmp,
            history,
            rules,
            root,
        }
    }
}

/// Scan a source tree in process (`scan::scan_source`): with `clone` as FlashAttention's
/// repository, `rules` as `--rules` and `rev` as `--rev`.
pub fn scan_tree(
    tree: &Path,
    clone: Option<&Path>,
    rules: Option<&Path>,
    rev: Option<&str>,
) -> pinprobe::model::TargetReport {
    let (db, _) = pinprobe::rules::load(rules).expect("rules load");
    let repos: Vec<(String, PathBuf)> = clone
        .map(|c| vec![("flash-attention".to_string(), c.to_path_buf())])
        .unwrap_or_default();
    let clones = pinprobe::resolve::Clones::open(&repos).expect("clone opens");
    let opts = pinprobe::scan::Options {
        rev: rev.map(String::from),
        repos,
        ..Default::default()
    };
    pinprobe::scan::scan_source(tree, &opts, &db, &clones).expect("scan succeeds")
}

/// The finding of `rule` in `report` (a test failure naming the findings when there is none).
pub fn finding<'a>(
    report: &'a pinprobe::model::TargetReport,
    rule: &str,
) -> &'a pinprobe::model::Finding {
    report
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no finding for {rule}: {:#?}", report.findings))
}

/// A rule file pinning the synthetic history's commits (ancestry only, no signature).
pub fn ancestry_rule(id: &str, events: &[(&str, &str)]) -> String {
    let events: String = events
        .iter()
        .map(|(k, v)| format!("          - {k}: \"{v}\"\n"))
        .collect();
    format!(
        r#"id: {id}
summary: "synthetic split-kv bug (test rule)"
affected:
  - package:
      ecosystem: GIT
      name: flash-attention
    ranges:
      - type: GIT
        repo: https://github.com/vllm-project/flash-attention
        events:
{events}    database_specific:
      component: flash-attention
database_specific:
  severity: high
  kind: performance
"#
    )
}

/// The documented pull-request workflow, as the CI chapter of the book shows it (the ```yaml
/// block that runs on `pull_request` with `mode: diff`; the README's ten-line workflow has the
/// same gate settings and is checked against examples/workflows/minimal.yml): the tests of the
/// gate and of the Action read their settings from here, so the docs cannot drift from what is
/// tested.
pub fn documented_pull_request_workflow() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/ci.md"))
            .expect("docs/src/ci.md");
    let blocks: Vec<&str> = readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split_once("```").map(|(code, _)| code))
        .filter(|code| code.contains("\n  pull_request:") && code.contains("mode: diff"))
        .collect();
    assert_eq!(
        blocks.len(),
        1,
        "docs/src/ci.md shows one pull-request workflow (found {})",
        blocks.len()
    );
    blocks[0].to_string()
}
