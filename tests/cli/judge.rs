//! The judge end to end on a pin that can take several values: a vLLM-shaped tree whose CMake
//! option `USE_OLD_FA` selects another FlashAttention commit, scanned with a clone (`--repo`)
//! so ancestry decides each value. The exit code says what a build of the tree can be: never
//! clean while one configuration fetches a known-affected pin (README, "A pin that can take
//! several values").

use crate::common;

use common::*;
use std::path::Path;

const TEST_RULE: &str = "TEST-SPLITKV-ANCESTRY";

/// A tree that fetches FlashAttention at `default` and, with `-DUSE_OLD_FA=ON`, at `old`.
fn tree_with_option(root: &Path, default: &str, old: &str) {
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\n",
    );
    let cmake = fa_cmake(FA_REPO, "${FA_TAG}", None);
    write(
        root,
        "cmake/external_projects/vllm_flash_attn.cmake",
        &format!(
            "option(USE_OLD_FA \"build against the old FlashAttention\" OFF)\nif(USE_OLD_FA)\n  set(FA_TAG {old})\nelse()\n  set(FA_TAG {default})\nendif()\n{cmake}"
        ),
    );
}

struct Fixture {
    tmp: tempfile::TempDir,
    history: FaHistory,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let history = FaHistory::build(&tmp.path().join("flash-attention"));
    write(
        &tmp.path().join("rules"),
        "test.yaml",
        // Critical, so that `--fail-on critical` gates on this rule alone (the built-in rules,
        // high at most, stay undecided without clones of their repositories).
        &ancestry_rule(
            TEST_RULE,
            &[("introduced", &history.introduce), ("fixed", &history.fix)],
        )
        .replace("severity: high", "severity: critical"),
    );
    Fixture { tmp, history }
}

/// Scan the tree pinning `default` (and `old` behind the option) with the test rule and a clone
/// of the history, the exit code gated on critical findings (the test rule's) only.
fn scan(fx: &Fixture, name: &str, default: &str, old: &str) -> Run {
    let tree = fx.tmp.path().join(name);
    tree_with_option(&tree, default, old);
    let rules = fx.tmp.path().join("rules");
    let repo = format!("flash-attention={}", fx.history.dir.display());
    pinprobe(&[
        "scan",
        tree.to_str().expect("utf-8"),
        "--rules",
        rules.to_str().expect("utf-8"),
        "--repo",
        &repo,
        "--fail-on",
        "critical",
        "--format",
        "json",
    ])
}

/// The test rule's one finding in a JSON report.
fn rule_finding(run: &Run) -> serde_json::Value {
    let json = run.json();
    let found: Vec<serde_json::Value> = json["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == TEST_RULE)
        .cloned()
        .collect();
    assert_eq!(found.len(), 1, "{}\n{}", run.stdout, run.stderr);
    found[0].clone()
}

/// The case: the default GIT_TAG is clean (past the fix) but `-DUSE_OLD_FA=ON` fetches
/// a pin the bug is in. The tree is not clean: `unknown`, exit 3, the evidence naming the
/// option and the affected value; never exit 0.
#[test]
fn an_option_that_selects_an_affected_pin_is_never_clean() {
    let fx = fixture();
    let h = &fx.history;
    let run = scan(&fx, "old-fa", &h.fix, &h.introduce);
    let f = rule_finding(&run);
    assert_eq!(f["status"], "unknown", "{f:#}");
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let evidence = f["evidence"].as_array().expect("evidence");
    let named = |status: &str, needle: &str| {
        evidence.iter().any(|e| {
            e["kind"] == "configuration"
                && e["status"] == status
                && e["detail"].as_str().is_some_and(|d| d.contains(needle))
        })
    };
    assert!(named("affected", "USE_OLD_FA"), "{f:#}");
    assert!(named("affected", &h.introduce), "{f:#}");
    assert!(named("not_affected", &h.fix), "{f:#}");
}

/// The same tree the other way round: the default configuration fetches the affected pin, so
/// the tree is affected (exit 1) whatever the option selects.
#[test]
fn an_affected_default_decides_whatever_the_option_selects() {
    let fx = fixture();
    let h = &fx.history;
    let run = scan(&fx, "new-fa-optional", &h.introduce, &h.fix);
    let f = rule_finding(&run);
    assert_eq!(f["status"], "affected", "{f:#}");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
}

/// Both values past the fix: the only clean answer, exit 0.
#[test]
fn every_value_clean_is_clean() {
    let fx = fixture();
    let h = &fx.history;
    let run = scan(&fx, "both-fixed", &h.fix, &h.c4);
    let f = rule_finding(&run);
    assert_eq!(f["status"], "not_affected", "{f:#}");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
}

/// Both values before the fix, neither the default's own: affected (exit 1).
#[test]
fn every_value_affected_is_affected() {
    let fx = fixture();
    let h = &fx.history;
    let run = scan(&fx, "both-buggy", &h.introduce, &h.c2);
    let f = rule_finding(&run);
    assert_eq!(f["status"], "affected", "{f:#}");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
}
