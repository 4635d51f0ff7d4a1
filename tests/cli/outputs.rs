//! Where reports go: several `--format NAME[=FILE]` in one run, `--output FILE`, `--quiet`.
//! Each rendering written to a file must be byte-for-byte what the same format prints alone.

use crate::common;

use common::*;
use std::path::Path;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn one_scan_writes_every_format_and_prints_the_one_without_a_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = |name: &str| tmp.path().join(name);
    let arg = |fmt: &str, name: &str| format!("{fmt}={}", file(name).display());
    let (json, sarif, md) = (
        arg("json", "r.json"),
        arg("sarif", "r.sarif"),
        arg("markdown", "r.md"),
    );
    let run = pinprobe(&[
        "scan", DEMO, "--format", "table", "--format", &json, "--format", &sarif, "--format", &md,
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // stdout: the table, exactly as `scan` alone prints it.
    let alone = pinprobe(&["scan", DEMO]);
    assert_eq!(run.stdout, alone.stdout);
    assert!(run.stdout.contains("PINPROBE-2026-0001"));
    for (fmt, name) in [
        ("json", "r.json"),
        ("sarif", "r.sarif"),
        ("markdown", "r.md"),
    ] {
        let alone = pinprobe(&["scan", DEMO, "--format", fmt]);
        assert_eq!(alone.code, 1);
        assert_eq!(read(&file(name)), alone.stdout, "{fmt}");
    }
    // No temporary files left beside them.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["r.json", "r.md", "r.sarif"]);
}

#[test]
fn output_takes_the_format_without_a_file_and_stdout_stays_empty() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("report.json");
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--format",
        "json",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let v: serde_json::Value = serde_json::from_str(&read(&out)).expect("JSON");
    let findings = v["targets"][0]["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "PINPROBE-2026-0001" && f["status"] == "affected")
    );
    // The default format (the table) goes to --output too; `-o` is its short form.
    let table = tmp.path().join("table.txt");
    let run = pinprobe(&["scan", DEMO, "-o", table.to_str().expect("utf-8")]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(read(&table), pinprobe(&["scan", DEMO]).stdout);
}

#[test]
fn impossible_plans_are_one_line_errors_before_anything_is_scanned() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a.json");
    let a = a.to_str().expect("utf-8");
    // Two formats on stdout would interleave.
    let run = pinprobe(&["scan", DEMO, "--format", "json", "--format", "sarif"]);
    run.assert_error("stdout");
    // Two renderings into one file.
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--format",
        &format!("json={a}"),
        "--format",
        &format!("sarif={a}"),
    ]);
    run.assert_error("a.json");
    // --output with nothing to put in it.
    let run = pinprobe(&["scan", DEMO, "--format", &format!("json={a}"), "-o", "x"]);
    run.assert_error("--output");
    // An unknown format name (clap's usage error, exit 2) lists the known ones.
    let run = pinprobe(&["scan", DEMO, "--format", "out.json"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown format `out.json`"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("sarif"), "{}", run.stderr);
    // A file that cannot be written: one line naming it, nothing on stdout, no report left
    // (`-q`: the scan's own notices, such as what an offline run could not fetch, stay quiet).
    let missing = tmp.path().join("no/such/dir/r.sarif");
    let run = pinprobe(&[
        "scan",
        DEMO,
        "-q",
        "--format",
        "table",
        "--format",
        &format!("sarif={}", missing.display()),
    ]);
    run.assert_error("no/such/dir/r.sarif");
    // The bad plans wrote nothing.
    assert!(!Path::new(a).exists());
}

#[test]
fn quiet_silences_notices_but_not_errors() {
    // A user rule replacing a built-in one is announced on stderr ...
    let rules = tempfile::tempdir().expect("tempdir");
    let rule = ancestry_rule(
        "PINPROBE-2026-0001",
        &[
            ("introduced", "0"),
            ("fixed", "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46"),
        ],
    );
    write(rules.path(), "override.yaml", &rule);
    let dir = rules.path().to_str().expect("utf-8");
    let loud = pinprobe(&["scan", DEMO, "--rules", dir]);
    assert!(
        loud.stderr.contains("overrides the built-in rule"),
        "{}",
        loud.stderr
    );
    // ... and not with --quiet, whose report is the same.
    let quiet = pinprobe(&["scan", DEMO, "--rules", dir, "--quiet"]);
    assert_eq!(quiet.stderr, "");
    assert_eq!(quiet.stdout, loud.stdout);
    assert_eq!(quiet.code, loud.code);
    // An expired ignore entry is warned about, except with -q.
    let tree = tempfile::tempdir().expect("tempdir");
    vllm_tree(
        tree.path(),
        FA_REPO,
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    write(
        tree.path(),
        ".pinprobe.yaml",
        "ignore:\n  - rule: PINPROBE-2026-0001\n    reason: test\n    expires: 2020-01-01\n",
    );
    let t = tree.path().to_str().expect("utf-8");
    let loud = pinprobe(&["scan", t]);
    assert!(loud.stderr.contains("warning"), "{}", loud.stderr);
    let quiet = pinprobe(&["scan", t, "-q"]);
    assert_eq!(quiet.stderr, "");
    assert_eq!(quiet.code, loud.code);
    // Errors still print.
    pinprobe(&["scan", "/nonexistent/tree", "--quiet"]).assert_error("/nonexistent/tree");
}

#[test]
fn no_output_carries_terminal_escapes_with_or_without_no_color() {
    // pinprobe draws no colour; the progress bar is stderr-only and off when it is not a
    // terminal. Whatever NO_COLOR says, the report carries no escape sequence.
    for no_color in [None, Some("1")] {
        let mut cmd = Pinprobe::new(&["scan", DEMO]);
        cmd = match no_color {
            Some(v) => cmd.env("NO_COLOR", v),
            None => cmd.env_remove("NO_COLOR"),
        };
        let run = cmd.run();
        assert_eq!(run.code, 1);
        assert!(!run.all().contains('\u{1b}'), "{:?}", run.all());
    }
}

#[test]
fn a_format_written_to_a_device_leaves_the_device_in_place() {
    use std::os::unix::fs::FileTypeExt;
    // Renaming a finished report over `/dev/null` (as root) would replace the device node with
    // a regular file, breaking every other process on the machine.
    let demo = common::run::fixture_path("demo-vllm");
    let run = Pinprobe::new(&["scan", "-q", ".", "--format", "json=/dev/null"])
        .dir(&demo)
        .run();
    let after = std::fs::metadata("/dev/null").expect("/dev/null");
    assert!(
        after.file_type().is_char_device(),
        "/dev/null is still a device"
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
}
