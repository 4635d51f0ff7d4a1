//! `-v` says on stderr what is read and evaluated, and changes nothing else; each warning is
//! said once per run, naming the targets it concerns.

use crate::common;

use common::*;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

#[test]
fn verbose_says_what_is_read_and_evaluated_and_changes_nothing_else() {
    let quiet = pinprobe(&["scan", DEMO, "--format", "json"]);
    let loud = pinprobe(&["scan", "-v", DEMO, "--format", "json"]);
    // `--verbose` is global: after the subcommand as well as before it.
    let global = pinprobe(&["--verbose", "scan", DEMO, "--format", "json"]);
    assert_eq!(loud.code, quiet.code);
    assert_eq!(loud.stdout, quiet.stdout, "the report is the same");
    assert_eq!(global.stderr, loud.stderr);
    for said in [
        "pinprobe: rule database sha256:",
        &format!("pinprobe: {DEMO}: reading it as a source tree"),
        "evaluating its CMake code from the top-level CMakeLists.txt",
        "flash-attention pinned at 506341a143fcabd4bb79052a7605ada727d6b3f5 (cmake/external_projects/vllm_flash_attn.cmake:18, cmake GIT_TAG)",
        "flash-attention: the pinned history",
    ] {
        assert!(
            loud.stderr.contains(said),
            "-v says `{said}`:\n{}",
            loud.stderr
        );
        assert!(
            !quiet.stderr.contains(said),
            "only with -v: {}",
            quiet.stderr
        );
    }
}

#[test]
fn a_warning_several_targets_share_is_said_once_naming_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let clone = tmp.path().join("clone");
    init(&clone);
    write(&clone, "README.md", "x\n");
    commit(&clone, "one");
    let repo = format!("nothing-pinned={}", clone.display());
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    vllm_tree(&a, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    vllm_tree(&b, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let run = pinprobe(&["scan", &a, &b, "--repo", &repo, "--format", "json"]);
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("--repo nothing-pinned"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].ends_with("(all 2 targets)"), "{}", lines[0]);
    // Each target's report still carries it.
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    for t in json["targets"].as_array().expect("targets") {
        assert!(
            t["warnings"].to_string().contains("--repo nothing-pinned"),
            "{t}"
        );
    }
    // One target: the warning as it is.
    let one = pinprobe(&["scan", &a, "--repo", &repo, "--format", "json"]);
    let lines: Vec<&str> = one
        .stderr
        .lines()
        .filter(|l| l.contains("--repo nothing-pinned"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", one.stderr);
    assert!(!lines[0].contains("targets"), "{}", lines[0]);
}
