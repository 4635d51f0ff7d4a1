//! The binary's contracts: exit codes, one-line errors naming the input, output formats.

use crate::common;

use common::*;
use std::path::Path;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

#[test]
fn demo_tree_reports_the_affected_pin_and_exits_1() {
    // Wide enough that no evidence wraps inside its cell (tests/cli/reports.rs checks 100 columns).
    let run = common::Pinprobe::new(&["scan", DEMO])
        .env("COLUMNS", "400")
        .run();
    assert!(run.stdout.starts_with("AFFECTED: "), "{}", run.stdout);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("PINPROBE-2026-0001"));
    assert!(run.stdout.contains("affected"));
    assert!(run.stdout.contains("known affected pin"));
    assert!(run.stdout.contains("flashmla"));
}

#[test]
fn json_report_has_schema_components_findings_and_digest() {
    let run = pinprobe(&["scan", DEMO, "--format", "json"]);
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["schema"], 1);
    assert!(v["rules_digest"].as_str().unwrap().starts_with("sha256:"));
    let t = &v["targets"][0];
    assert_eq!(t["kind"], "source-tree");
    let fa = t["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["component"] == "flash-attention")
        .expect("flash-attention component");
    assert_eq!(fa["commit"], "506341a143fcabd4bb79052a7605ada727d6b3f5");
    assert_eq!(fa["file"], "cmake/external_projects/vllm_flash_attn.cmake");
    assert_eq!(fa["line"], 18);
    assert_eq!(
        fa["overrides"],
        serde_json::json!([
            "FETCHCONTENT_SOURCE_DIR_VLLM-FLASH-ATTN",
            "VLLM_FLASH_ATTN_SRC_DIR"
        ])
    );
    let f = t["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "PINPROBE-2026-0001")
        .expect("finding");
    assert_eq!(f["status"], "affected");
    assert_eq!(f["decided_by"], "known-pin");
    assert!(f["evidence"].as_array().unwrap().len() >= 2);
}

#[test]
fn sarif_points_at_the_git_tag_line() {
    let run = pinprobe(&["scan", DEMO, "--format", "sarif"]);
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "PINPROBE-2026-0001")
        .unwrap();
    let loc = &r["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "cmake/external_projects/vllm_flash_attn.cmake"
    );
    assert_eq!(loc["region"]["startLine"], 18);
    assert_eq!(r["level"], "error");
    assert!(r["partialFingerprints"]["pinprobe/v1"].is_string());
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(
        rules
            .iter()
            .any(|x| x["id"] == "PINPROBE-2026-0001" && x["help"]["text"].is_string())
    );
}

#[test]
fn markdown_is_a_table() {
    let run = pinprobe(&["scan", DEMO, "--format", "markdown"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("| status | rule |"));
    assert!(run.stdout.contains("❌ affected"));
}

#[test]
fn fail_on_sets_the_threshold() {
    assert_eq!(pinprobe(&["scan", DEMO, "--fail-on", "never"]).code, 0);
    assert_eq!(pinprobe(&["scan", DEMO, "--fail-on", "high"]).code, 1);
    // Nothing in the demo is critical, and the flashmla pin has no rules to be unknown under.
    assert_eq!(pinprobe(&["scan", DEMO, "--fail-on", "critical"]).code, 0);
}

#[test]
fn missing_path_is_a_one_line_error() {
    let run = pinprobe(&["scan", "/nonexistent/vllm"]);
    run.assert_error("/nonexistent/vllm");
}

#[test]
fn non_utf8_cmake_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("cmake/external_projects/x.cmake");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"FetchContent_Declare(x GIT_TAG \xff\xfe)\n").unwrap();
    let run = pinprobe(&["scan", tmp.path().to_str().unwrap()]);
    run.assert_error("x.cmake");
}

#[test]
fn unterminated_parenthesis_names_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "CMakeLists.txt",
        "project(x)\n\nFetchContent_Declare(\n  foo\n  GIT_TAG abc\n",
    );
    let run = pinprobe(&["scan", tmp.path().to_str().unwrap()]);
    run.assert_error("CMakeLists.txt:3");
}

#[test]
fn a_tree_without_pins_is_undecided() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "README.md", "not vllm\n");
    let run = pinprobe(&["scan", tmp.path().to_str().unwrap()]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(run.stdout.contains("no pinned kernel projects"));
}

#[test]
fn an_unknown_pin_without_a_clone_is_undecided() {
    let tmp = tempfile::tempdir().unwrap();
    vllm_tree(
        tmp.path(),
        FA_REPO,
        "0123456789abcdef0123456789abcdef01234567",
    );
    let run = pinprobe(&["scan", tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(run.code, 3);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["targets"][0]["findings"][0]["status"], "unknown");
}

fn bad_rule_dir(text: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "bad.yaml", text);
    tmp
}

#[test]
fn invalid_rule_yaml_is_a_one_line_error_naming_the_file() {
    let dir = bad_rule_dir("id: [unclosed\n");
    let run = pinprobe(&["scan", DEMO, "--rules", dir.path().to_str().unwrap()]);
    run.assert_error("bad.yaml");
    let dir = bad_rule_dir("id: X\nsummary: s\nunknown_key: 1\n");
    let run = pinprobe(&["scan", DEMO, "--rules", dir.path().to_str().unwrap()]);
    run.assert_error("unknown_key");
}

#[test]
fn short_sha_in_a_rule_is_rejected_with_its_line() {
    let rule = ancestry_rule("TEST-SHORT", &[("introduced", "0"), ("fixed", "6d11b3c")]);
    let dir = bad_rule_dir(&rule);
    let run = pinprobe(&["scan", DEMO, "--rules", dir.path().to_str().unwrap()]);
    run.assert_error("bad.yaml:12");
    assert!(run.stderr.contains("6d11b3c"));
    let lint = pinprobe(&["rules", "lint", dir.path().to_str().unwrap()]);
    assert_eq!(lint.code, 2);
    assert!(
        lint.stdout
            .contains("bad.yaml:12: fixed `6d11b3c` is not a full 40-hex commit SHA"),
        "{}",
        lint.stdout
    );
}

#[test]
fn lint_flags_a_note_a_comment_marker_cut_short() {
    // serde accepts the file (the note is just shorter than written): only lint can tell.
    let rule = ancestry_rule(
        "TEST-CUT",
        &[
            ("introduced", "0"),
            ("fixed", "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46"),
        ],
    )
    .replace(
        "      component: flash-attention\n",
        "      component: flash-attention\n      note: vLLM 0.30.0 (PR #54819)\n",
    );
    let dir = bad_rule_dir(&rule);
    let lint = pinprobe(&["rules", "lint", dir.path().to_str().unwrap()]);
    assert_eq!(lint.code, 2, "{}", lint.stdout);
    assert!(
        lint.stdout.contains(
            "bad.yaml:15: `note` is cut by a comment marker: YAML reads `vLLM 0.30.0 (PR` and drops `#54819)`"
        ),
        "{}",
        lint.stdout
    );
    let quoted = rule.replace(
        "note: vLLM 0.30.0 (PR #54819)",
        "note: \"vLLM 0.30.0 (PR #54819)\"",
    );
    let dir = bad_rule_dir(&quoted);
    let lint = pinprobe(&["rules", "lint", dir.path().to_str().unwrap()]);
    assert_eq!(lint.code, 0, "{}", lint.stdout);
}

#[test]
fn user_rule_overriding_a_builtin_is_announced() {
    let rule = ancestry_rule(
        "PINPROBE-2026-0001",
        &[
            ("introduced", "0"),
            ("fixed", "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46"),
        ],
    );
    let dir = bad_rule_dir(&rule);
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--rules",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        run.stderr.contains("overrides the built-in rule"),
        "{}",
        run.stderr
    );
    let builtin = pinprobe(&["scan", DEMO, "--format", "json"]);
    let digest = |r: &Run| {
        serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap()["rules_digest"].clone()
    };
    assert_ne!(digest(&run), digest(&builtin));
}

#[test]
fn bad_repo_argument_is_an_error() {
    let run = pinprobe(&["scan", DEMO, "--repo", "flash-attention=/nonexistent/fa"]);
    run.assert_error("/nonexistent/fa");
    let run = pinprobe(&["scan", DEMO, "--repo", "no-equals-sign"]);
    assert_eq!(run.code, 2);
}

#[test]
fn rev_on_a_plain_directory_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    vllm_tree(
        tmp.path(),
        FA_REPO,
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    let run = pinprobe(&["scan", tmp.path().to_str().unwrap(), "--rev", "HEAD"]);
    run.assert_error("git");
}

#[test]
fn bad_revision_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path());
    vllm_tree(
        tmp.path(),
        FA_REPO,
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    commit(tmp.path(), "pin");
    let run = pinprobe(&[
        "scan",
        tmp.path().to_str().unwrap(),
        "--rev",
        "no-such-branch",
    ]);
    run.assert_error("no-such-branch");
}

#[test]
fn rules_commands() {
    let list = pinprobe(&["rules", "list"]);
    assert_eq!(list.code, 0);
    assert!(list.stdout.contains("PINPROBE-2026-0001"));
    let show = pinprobe(&["rules", "show", "PINPROBE-2026-0001"]);
    assert_eq!(show.code, 0);
    assert!(
        show.stdout
            .contains("6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46")
    );
    pinprobe(&["rules", "show", "NOPE"]).assert_error("NOPE");
    let lint = pinprobe(&["rules", "lint"]);
    assert_eq!(lint.code, 0);
    let rules_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let lint = pinprobe(&["rules", "lint", rules_dir.to_str().unwrap()]);
    assert_eq!(lint.code, 0, "{}", lint.stdout);
}

#[test]
fn help_teaches() {
    let help = pinprobe(&["--help"]);
    assert_eq!(help.code, 0);
    insta::assert_snapshot!("help", help.stdout);
    let scan = pinprobe(&["scan", "--help"]);
    insta::assert_snapshot!("scan_help", scan.stdout);
    let diff = pinprobe(&["diff", "--help"]);
    insta::assert_snapshot!("diff_help", diff.stdout);
    let merge = pinprobe(&["merge", "--help"]);
    insta::assert_snapshot!("merge_help", merge.stdout);
}

/// A vLLM-shaped tree pinning FlashAttention at a full SHA no rule knows: every FA rule is
/// undecided without a clone.
fn undecided_tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    vllm_tree(
        tmp.path(),
        FA_REPO,
        "1111111111111111111111111111111111111111",
    );
    tmp
}

#[test]
fn fail_on_unknown_never_lets_undecided_pass_but_not_affected() {
    let tree = undecided_tree();
    let t = tree.path().to_str().expect("utf-8");
    // Fail closed by default: undecided is 3.
    let run = pinprobe(&["scan", t]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    // Undecided findings may pass ...
    let run = pinprobe(&["scan", t, "--fail-on-unknown", "never"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // ... above a severity only: every FA rule is at least low, none is above critical.
    assert_eq!(pinprobe(&["scan", t, "--fail-on-unknown", "low"]).code, 3);
    // ... while an affected finding still fails.
    let run = pinprobe(&["scan", DEMO, "--fail-on-unknown", "never"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // `--fail-on never` alone still means never for both (the unknown threshold follows it).
    assert_eq!(pinprobe(&["scan", DEMO, "--fail-on", "never"]).code, 0);
    assert_eq!(pinprobe(&["scan", t, "--fail-on", "never"]).code, 0);
    // And the two thresholds are independent.
    let run = pinprobe(&["scan", t, "--fail-on", "never", "--fail-on-unknown", "low"]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}
