//! The ignore file (`.pinprobe.yaml`) through the binary: expiry in the past and the future,
//! entries that match nothing, scopes, and a missing reason (an error naming the file).

mod common;

use common::{Pinprobe, Run};
use std::path::Path;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");
const R1: &str = "PINPROBE-2026-0001";

fn scan(tree: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["scan", tree.to_str().expect("utf-8 path")];
    args.extend_from_slice(extra);
    Pinprobe::new(&args)
        .env("PINPROBE_TODAY", "2026-06-01")
        .run()
}

/// A copy of the demo tree (R1 affected by its known pin) with `policy` as its ignore file.
fn demo_with(policy: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(Path::new(DEMO), tmp.path());
    std::fs::write(tmp.path().join(".pinprobe.yaml"), policy).expect("write");
    tmp
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).expect("copy");
        }
    }
}

fn entry(rule: &str, scope: &str, expires: &str) -> String {
    format!(
        "ignore:\n  - rule: {rule}\n{scope}    reason: \"not built for SM90 in this deployment\"\n    expires: {expires}\n"
    )
}

fn findings(run: &Run) -> Vec<serde_json::Value> {
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    json["targets"][0]["findings"]
        .as_array()
        .expect("findings")
        .clone()
}

#[test]
fn an_entry_expiring_in_the_future_suppresses_and_stays_visible() {
    let tree = demo_with(&entry(
        R1,
        "    component: flash-attention\n    pin: 506341a143fc\n    path: cmake/external_projects/\n",
        "2026-12-31",
    ));
    let run = scan(tree.path(), &["--format", "json"]);
    // R1 no longer counts; the other rules stay unknown without a clone: undecided.
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let r1 = findings(&run)
        .into_iter()
        .find(|f| f["rule"] == R1)
        .expect("R1 still reported");
    assert_eq!(r1["status"], "affected", "the status is kept");
    assert_eq!(
        r1["suppressed"]["reason"],
        "not built for SM90 in this deployment"
    );
    assert_eq!(r1["suppressed"]["expires"], "2026-12-31");
    assert!(
        r1["suppressed"]["entry"]
            .as_str()
            .is_some_and(|e| e.ends_with(".pinprobe.yaml:2")),
        "{r1:#}"
    );
    // No warning about the entry (only the offline run's note of what a fetch would decide).
    assert!(
        run.stderr
            .lines()
            .all(|l| l.starts_with("pinprobe: offline:")),
        "{}",
        run.stderr
    );

    let table = scan(tree.path(), &[]);
    assert!(
        table.stdout.contains("affected (suppressed)"),
        "{}",
        table.stdout
    );
    let sarif = scan(tree.path(), &["--format", "sarif"]);
    let doc: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("sarif");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    assert!(
        results.iter().all(|r| r["ruleId"] != R1),
        "suppressed findings are not SARIF results"
    );
}

#[test]
fn an_expired_entry_stops_suppressing_and_is_reported() {
    let tree = demo_with(&entry(R1, "", "2026-05-31"));
    let run = scan(tree.path(), &["--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("expired on 2026-05-31"),
        "{}",
        run.stderr
    );
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let warnings = json["targets"][0]["warnings"].to_string();
    assert!(warnings.contains("expired"), "{warnings}");
    assert!(findings(&run).iter().all(|f| f.get("suppressed").is_none()));
    // The last day still suppresses.
    let tree = demo_with(&entry(R1, "", "2026-06-01"));
    assert_eq!(scan(tree.path(), &[]).code, 3);
}

#[test]
fn entries_that_match_nothing_are_warned_about() {
    for scope in [
        "    component: flashmla\n",
        "    pin: 0123456789ab\n",
        "    path: CMakeLists.txt\n",
    ] {
        let tree = demo_with(&entry(R1, scope, "2030-01-01"));
        let run = scan(tree.path(), &[]);
        assert_eq!(run.code, 1, "{scope}: {}", run.stderr);
        assert!(
            run.stderr.contains("matches no finding"),
            "{scope}: {}",
            run.stderr
        );
    }
    let tree = demo_with(&entry("PINPROBE-9999-0001", "", "2030-01-01"));
    assert!(scan(tree.path(), &[]).stderr.contains("matches no finding"));
}

#[test]
fn a_missing_reason_is_an_error_naming_the_file_and_line() {
    let tree = demo_with("ignore:\n  - rule: PINPROBE-2026-0001\n    expires: 2030-01-01\n");
    let run = scan(tree.path(), &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(".pinprobe.yaml:2"), "{}", run.stderr);
    assert!(
        run.stderr.contains("`reason` is required"),
        "{}",
        run.stderr
    );

    let tree =
        demo_with("ignore:\n  - rule: R\n    reason: r\n    expires: 2030-01-01\n    until: x\n");
    let run = scan(tree.path(), &[]);
    assert_eq!(run.code, 2, "unknown fields are errors: {}", run.stderr);
    assert!(run.stderr.contains(".pinprobe.yaml"), "{}", run.stderr);
}

#[test]
fn ignore_flag_replaces_the_trees_file() {
    let tree = demo_with("ignore:\n  - rule: R\n    expires: 2030-01-01\n");
    let file = tree.path().join("other.yaml");
    std::fs::write(&file, entry(R1, "", "2030-01-01")).expect("write");
    let run = scan(tree.path(), &["--ignore", file.to_str().expect("utf-8")]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let run = scan(tree.path(), &["--ignore", "/no/such/file.yaml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("/no/such/file.yaml"), "{}", run.stderr);
}
