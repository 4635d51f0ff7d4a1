//! The ignore file (`.pinprobe.yaml`) through the binary: expiry in the past and the future,
//! entries that match nothing, scopes, and a missing reason (an error naming the file).

use crate::common;

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

// The settings a `.pinprobe.yaml` holds besides its ignore list (src/cli/config.rs): each key
// through the binary, flags overriding them, unknown keys, and diff reading only BASE's.

/// The demo tree holds one affected (high) finding and undecided ones (high and medium).
#[test]
fn fail_thresholds_come_from_the_file_and_flags_override_them() {
    let tree = demo_with("fail_on: never\n");
    // Affected passes, and undecided follows fail_on: everything passes.
    assert_eq!(scan(tree.path(), &[]).code, 0);
    assert_eq!(
        scan(tree.path(), &["--fail-on", "low"]).code,
        1,
        "the flag wins"
    );
    let tree = demo_with("fail_on: never\nfail_on_unknown: high\n");
    assert_eq!(scan(tree.path(), &[]).code, 3);
    assert_eq!(
        scan(tree.path(), &["--fail-on-unknown", "never"]).code,
        0,
        "the flag wins"
    );
    let tree = demo_with("fail_on: high\nfail_on_unknown: never\n");
    assert_eq!(scan(tree.path(), &[]).code, 1, "affected still fails");
    // --config is --ignore: the same file, for every target.
    let cfg = tree.path().join("team.yaml");
    std::fs::write(&cfg, "fail_on: never\nfail_on_unknown: never\n").expect("write");
    let cfg = cfg.to_str().expect("utf-8");
    assert_eq!(scan(Path::new(DEMO), &["--config", cfg]).code, 0);
}

#[test]
fn repositories_are_clones_read_from_the_files_folder_and_a_repo_flag_replaces_one() {
    let tree = demo_with("repositories:\n  flash-attention: ../no-such-clone\n");
    let run = scan(tree.path(), &[]);
    run.assert_error("no-such-clone");
    assert!(
        run.stderr
            .contains(&tree.path().join("../no-such-clone").display().to_string()),
        "resolved against the file's folder: {}",
        run.stderr
    );
    // A --repo for the same component replaces the file's (here: with another missing path).
    let run = scan(
        tree.path(),
        &["--repo", "flash-attention=/nonexistent/flag-clone"],
    );
    run.assert_error("flag-clone");
}

#[test]
fn offline_and_mirrors_from_the_file_steer_fetching() {
    let tree = demo_with("offline: true\n");
    let run = Pinprobe::new(&["scan", tree.path().to_str().expect("utf-8")])
        .env_remove("PINPROBE_OFFLINE")
        .run();
    // (The known affected pin outranks the undecided rules: exit 1.)
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stderr
            .contains("offline: fetching https://github.com/vllm-project/flash-attention"),
        "{}",
        run.stderr
    );
    // A mirror to a closed loopback port: the fetch goes there (and fails), never to GitHub.
    let tree = demo_with("mirrors:\n  https://github.com/: http://127.0.0.1:9/gh/\n");
    let run = Pinprobe::new(&[
        "scan",
        tree.path().to_str().expect("utf-8"),
        "--fetch-timeout",
        "5",
    ])
    .env_remove("PINPROBE_OFFLINE")
    .run();
    assert!(
        run.stderr
            .contains("fetching http://127.0.0.1:9/gh/vllm-project/flash-attention"),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        !run.stderr.contains("fetching https://github.com/"),
        "{}",
        run.stderr
    );
}

#[test]
fn formats_from_the_file_apply_when_no_format_flag_is_given() {
    let tree = demo_with("formats:\n  - json=out.json\n  - markdown\n");
    let run = Pinprobe::new(&["scan", "."]).dir(tree.path()).run();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stdout.starts_with('#'),
        "markdown on stdout: {}",
        run.stdout
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tree.path().join("out.json")).expect("out.json"),
    )
    .expect("json");
    assert_eq!(json["schema"], 1);
    // A --format replaces the file's list.
    std::fs::remove_file(tree.path().join("out.json")).expect("rm");
    let run = Pinprobe::new(&["scan", ".", "--format", "json"])
        .dir(tree.path())
        .run();
    run.json();
    assert!(!tree.path().join("out.json").exists());
}

#[test]
fn unknown_keys_and_bad_values_are_errors_naming_file_and_line() {
    for (text, at, what) in [
        ("ignore: []\nfail_onn: high\n", ":2: ", "fail_onn"),
        ("fail_on: sometimes\n", ":1: ", "fail_on: `sometimes`"),
        ("offline: maybe\n", ":1: ", "boolean"),
        ("formats:\n  - table\n  - yaml\n", ":3: ", "yaml"),
        ("mirrors:\n  https://github.com/: \"\"\n", ":2: ", "mirrors"),
    ] {
        let tree = demo_with(text);
        let run = scan(tree.path(), &[]);
        run.assert_error(&format!(".pinprobe.yaml{at}"));
        assert!(run.stderr.contains(what), "{text:?}: {}", run.stderr);
    }
}

/// diff takes every setting from BASE's file: a change that adds `fail_on: never` still fails
/// on the finding it introduces, even with --allow-head-ignores; BASE's threshold applies, and
/// a flag overrides it.
#[test]
fn diff_reads_settings_at_base_never_at_head() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let out = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/fixture-bump.sh"))
        .arg(&repo)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = common::git(&repo, &["rev-parse", "HEAD~1"]);
    let bump = common::git(&repo, &["rev-parse", "HEAD"]);
    let lenient = "fail_on: never\nfail_on_unknown: never\n";
    common::write(&repo, ".pinprobe.yaml", lenient);
    common::git(&repo, &["add", ".pinprobe.yaml"]);
    let head = common::commit(&repo, "the bump relaxes its own gate");
    let diff = |from: &str, to: &str, extra: &[&str]| {
        let mut args = vec!["diff", from, to, "."];
        args.extend_from_slice(extra);
        Pinprobe::new(&args).dir(&repo).run()
    };
    assert_eq!(diff(&base, &head, &[]).code, 1);
    assert_eq!(diff(&base, &head, &["--allow-head-ignores"]).code, 1);

    // BASE holding the same file: its thresholds apply to the bump.
    common::git(&repo, &["checkout", "-q", "-b", "lenient", &base]);
    common::write(&repo, ".pinprobe.yaml", lenient);
    common::git(&repo, &["add", ".pinprobe.yaml"]);
    let lenient_base = common::commit(&repo, "a lenient policy");
    common::git(&repo, &["cherry-pick", &bump]);
    let lenient_head = common::git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(diff(&lenient_base, &lenient_head, &[]).code, 0);
    assert_eq!(
        diff(&lenient_base, &lenient_head, &["--fail-on", "low"]).code,
        1,
        "the flag wins"
    );
}
