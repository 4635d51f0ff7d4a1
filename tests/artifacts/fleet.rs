//! Fleet scale: many targets in one run (`scan A B C`, `--targets-from`), a bounded pool
//! (`--jobs`), JSON lines streamed per target, the order given kept whatever the completion
//! order, and the exit code the worst over all targets.

use crate::common;

use common::Sm90Call;
use common::artifact::{vllm_files, with_dist_info, write_wheel};
use common::run::Pinprobe;
use serde_json::Value;
use std::path::{Path, PathBuf};

const R1: &str = "PINPROBE-2026-0001";

/// A vLLM wheel of `version` shipping the FA4 sources in `call`'s shape.
fn wheel(dir: &Path, name: &str, version: &str, call: Sm90Call) -> PathBuf {
    let path = dir.join(format!(
        "{name}-vllm-{version}-cp38-abi3-manylinux1_x86_64.whl"
    ));
    write_wheel(
        &path,
        &with_dist_info("vllm", version, vllm_files(version, call)),
    );
    path
}

/// Wheels of mixed verdicts: R1 affected (exit 1) and not affected (the others undecided).
fn mixed(dir: &Path, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let (version, call) = if i % 3 == 1 {
                ("0.30.0", Sm90Call::Buggy)
            } else {
                ("0.33.0", Sm90Call::Fixed)
            };
            wheel(dir, &format!("w{i:02}"), version, call)
                .display()
                .to_string()
        })
        .collect()
}

fn scan(args: &[&str], targets: &[String]) -> common::Run {
    let mut all: Vec<String> = vec!["scan".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(targets.iter().cloned());
    Pinprobe::new(&all).run()
}

fn r1_status(target: &Value) -> String {
    target["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == R1)
        .and_then(|f| f["status"].as_str())
        .unwrap_or("none")
        .to_string()
}

#[test]
fn a_pool_keeps_the_order_given_and_the_worst_exit_code() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 9);
    let one = scan(&["--jobs", "1", "--format", "json"], &targets);
    let four = scan(&["--jobs", "4", "--format", "json"], &targets);
    // The same report byte for byte, whatever order the pool finished in.
    assert_eq!(one.stdout, four.stdout, "stderr: {}", four.stderr);
    let report = four.json();
    let listed: Vec<&str> = report["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| t["target"].as_str().expect("target"))
        .collect();
    assert_eq!(
        listed,
        targets.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for (i, t) in report["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .enumerate()
    {
        let want = if i % 3 == 1 {
            "affected"
        } else {
            "not_affected"
        };
        assert_eq!(r1_status(t), want, "target {i}");
    }
    // Affected anywhere outranks undecided anywhere.
    assert_eq!((one.code, four.code), (1, 1));
    // Only undecided targets: 3 (fail closed).
    let clean: Vec<String> = targets.iter().step_by(3).cloned().collect();
    assert_eq!(scan(&["-j", "3", "--format", "json"], &clean).code, 3);
}

#[test]
fn json_lines_are_one_report_per_target_in_the_order_given() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 7);
    let lines = scan(&["--jobs", "3", "--format", "jsonl"], &targets);
    assert_eq!(lines.code, 1, "stderr: {}", lines.stderr);
    let combined = scan(&["--jobs", "3", "--format", "json"], &targets).json();
    let got: Vec<Value> = lines
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(got.len(), targets.len());
    for (i, line) in got.iter().enumerate() {
        assert_eq!(line["schema"], 1);
        assert_eq!(line["rules_digest"], combined["rules_digest"]);
        let only = line["targets"].as_array().expect("targets");
        assert_eq!(only.len(), 1, "one target a line");
        assert_eq!(only[0], combined["targets"][i], "line {i}");
    }
    // The same lines when written to a file beside another format.
    let file = tmp.path().join("out.jsonl");
    let arg = format!("jsonl={}", file.display());
    let both = scan(&["--format", "table", "--format", &arg], &targets);
    assert_eq!(both.code, 1);
    assert_eq!(
        std::fs::read_to_string(&file).expect("written"),
        lines.stdout
    );
}

#[test]
fn targets_come_from_a_file_or_stdin_after_the_arguments() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 4);
    let list = format!(
        "# a fleet\n{}\n\n  {}  \n{}\n",
        targets[1], targets[2], targets[3]
    );
    let file = tmp.path().join("targets.txt");
    std::fs::write(&file, &list).expect("write list");
    let order = |run: &common::Run| -> Vec<String> {
        run.json()["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| t["target"].as_str().expect("target").to_string())
            .collect()
    };
    let from_file = Pinprobe::new(&[
        "scan",
        &targets[0],
        "--targets-from",
        &file.display().to_string(),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(order(&from_file), targets, "stderr: {}", from_file.stderr);
    let from_stdin = Pinprobe::new(&[
        "scan",
        &targets[0],
        "--targets-from",
        "-",
        "--format",
        "json",
    ])
    .stdin(list)
    .run();
    assert_eq!(from_stdin.stdout, from_file.stdout);

    let missing = tmp.path().join("absent.txt");
    Pinprobe::new(&["scan", "--targets-from", &missing.display().to_string()])
        .run()
        .assert_error("absent.txt");
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "# nothing\n\n").expect("write");
    Pinprobe::new(&["scan", "--targets-from", &empty.display().to_string()])
        .run()
        .assert_error("no targets");
    // A usage error (clap's own message).
    let zero = Pinprobe::new(&["scan", "--jobs", "0", &targets[0]]).run();
    assert_eq!(zero.code, 2);
    assert!(zero.stderr.contains("--jobs"), "{}", zero.stderr);
}

#[test]
fn a_bad_target_stops_the_run_after_the_targets_before_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut targets = mixed(tmp.path(), 6);
    let bad = tmp.path().join("broken.whl");
    std::fs::write(&bad, b"PK\x03\x04 not a zip").expect("write");
    targets.insert(3, bad.display().to_string());
    for jobs in ["1", "4"] {
        // The combined report: one error line naming the bad target, no report.
        scan(&["--jobs", jobs, "--format", "json"], &targets).assert_error("broken.whl");
        // Streamed: the lines of the targets before it, then the error.
        let lines = scan(&["--jobs", jobs, "--format", "jsonl"], &targets);
        assert_eq!(lines.code, 2, "stderr: {}", lines.stderr);
        let listed: Vec<String> = lines
            .stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).expect("JSON line");
                v["targets"][0]["target"]
                    .as_str()
                    .expect("target")
                    .to_string()
            })
            .collect();
        assert_eq!(listed, targets[..3], "jobs {jobs}");
        assert!(lines.stderr.contains("broken.whl"), "{}", lines.stderr);
    }
}

#[test]
fn shards_cover_every_target_exactly_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 7);
    let mut seen: Vec<String> = Vec::new();
    for shard in 0..3 {
        let spec = format!("{shard}/3");
        let run = scan(&["--shard", &spec, "--format", "jsonl"], &targets);
        for line in run.stdout.lines() {
            let v: Value = serde_json::from_str(line).expect("JSON line");
            seen.push(
                v["targets"][0]["target"]
                    .as_str()
                    .expect("target")
                    .to_string(),
            );
        }
        assert_eq!(
            run.stdout.lines().count(),
            targets.iter().skip(shard).step_by(3).count(),
            "shard {spec}"
        );
    }
    seen.sort();
    let mut want = targets.clone();
    want.sort();
    assert_eq!(seen, want);
    // A shard past a short list: nothing to do, exit 0.
    let empty = scan(&["--shard", "5/9", "--format", "json"], &targets[..2]);
    assert_eq!(empty.code, 0, "{}", empty.stderr);
    for bad in ["3/3", "1", "a/2", "0/0"] {
        let run = scan(&["--shard", bad], &targets);
        assert_eq!(run.code, 2, "{bad}");
        assert!(run.stderr.contains("--shard"), "{}", run.stderr);
    }
}

fn merge(args: &[&str], reports: &[PathBuf]) -> common::Run {
    let mut all: Vec<String> = vec!["merge".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(reports.iter().map(|p| p.display().to_string()));
    Pinprobe::new(&all).run()
}

/// Each shard of `targets` scanned into `dir/shard-I.EXT` in `format` (json or jsonl).
fn shards(dir: &Path, targets: &[String], n: usize, format: &str) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let file = dir.join(format!("shard-{i}.{format}"));
            let run = scan(
                &[
                    "--shard",
                    &format!("{i}/{n}"),
                    "--format",
                    &format!("{format}={}", file.display()),
                    "--format",
                    "table",
                ],
                targets,
            );
            assert!(matches!(run.code, 0 | 1 | 3), "shard {i}: {}", run.stderr);
            file
        })
        .collect()
}

#[test]
fn merged_shards_are_the_unsharded_scan_byte_for_byte() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 8);
    let whole = scan(&["--jobs", "2", "--format", "json"], &targets);
    assert_eq!(whole.code, 1, "{}", whole.stderr);
    let whole_sarif = scan(&["--format", "sarif"], &targets);
    for format in ["jsonl", "json"] {
        let dir = tmp.path().join(format);
        std::fs::create_dir(&dir).expect("mkdir");
        let mut files = shards(&dir, &targets, 3, format);
        // Given in any order (a shell glob sorts shard 10 before shard 2): the list's order back.
        files.reverse();
        let merged = merge(&["--format", "json"], &files);
        assert_eq!(merged.code, whole.code, "{format}: {}", merged.stderr);
        assert_eq!(merged.stdout, whole.stdout, "{format}");
        let sarif = merge(&["--format", "sarif"], &files);
        assert_eq!(sarif.stdout, whole_sarif.stdout, "{format}");
        // The exit code follows the gate, as scan's does.
        let gate = [
            "--fail-on",
            "never",
            "--fail-on-unknown",
            "low",
            "--format",
            "json",
        ];
        let lenient = merge(&gate, &files);
        let scan_lenient = scan(&gate, &targets);
        assert_eq!((lenient.code, scan_lenient.code), (3, 3));
    }
    // Every shard's lines through stdin, concatenated in a shuffled order.
    let files = shards(tmp.path(), &targets, 3, "jsonl");
    let mut cat = String::new();
    for i in [2, 0, 1] {
        cat.push_str(&std::fs::read_to_string(&files[i]).expect("shard"));
    }
    let merged = Pinprobe::new(&["merge", "-", "--format", "json"])
        .stdin(cat)
        .run();
    assert_eq!(merged.stdout, whole.stdout, "{}", merged.stderr);
    // Unsharded reports are concatenated in the order given.
    let a = tmp.path().join("a.json");
    let b = tmp.path().join("b.json");
    for (file, part) in [(&a, &targets[..3]), (&b, &targets[3..])] {
        let run = scan(&["--format", &format!("json={}", file.display())], part);
        assert!(matches!(run.code, 1 | 3), "{}", run.stderr);
    }
    let joined = merge(&["--format", "json"], &[a.clone(), b.clone()]);
    assert_eq!(joined.stdout, whole.stdout, "{}", joined.stderr);
    assert_eq!(joined.code, 1);
}

#[test]
fn merge_refuses_what_one_run_could_not_have_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let targets = mixed(tmp.path(), 5);
    let files = shards(tmp.path(), &targets, 3, "jsonl");
    // A missing shard, and a shard cut short.
    merge(&[], &files[..2]).assert_error("shard 2/3 is missing");
    let short = tmp.path().join("short.jsonl");
    let first = std::fs::read_to_string(&files[0]).expect("shard 0");
    std::fs::write(
        &short,
        first.lines().next().expect("a line").to_string() + "\n",
    )
    .expect("write");
    merge(&[], &[short, files[1].clone(), files[2].clone()]).assert_error("shard 0/3");
    // The same shard twice: identical reports are one; a different report is refused.
    let again = merge(
        &["--format", "json"],
        &[
            files[0].clone(),
            files[0].clone(),
            files[1].clone(),
            files[2].clone(),
        ],
    );
    let once = merge(&["--format", "json"], &files);
    assert_eq!(again.stdout, once.stdout, "{}", again.stderr);
    let changed = tmp.path().join("changed.jsonl");
    std::fs::write(
        &changed,
        first.replacen("\"not_affected\"", "\"affected\"", 1),
    )
    .expect("write");
    merge(
        &[],
        &[
            files[0].clone(),
            changed,
            files[1].clone(),
            files[2].clone(),
        ],
    )
    .assert_error("different reports");
    // Another rule database, another version, garbage, a shard beside an unsharded report.
    let other_db = tmp.path().join("other-db.jsonl");
    let digest = serde_json::from_str::<Value>(first.lines().next().expect("line")).expect("json")
        ["rules_digest"]
        .as_str()
        .expect("digest")
        .to_string();
    std::fs::write(&other_db, first.replace(&digest, "sha256:0000")).expect("write");
    merge(&[], &[other_db, files[1].clone(), files[2].clone()]).assert_error("other-db.jsonl");
    let other_version = tmp.path().join("old.jsonl");
    std::fs::write(
        &other_version,
        first.replace(
            &format!("\"version\":\"{}\"", env!("CARGO_PKG_VERSION")),
            "\"version\":\"0.0.1\"",
        ),
    )
    .expect("write");
    merge(&[], &[other_version, files[1].clone(), files[2].clone()]).assert_error("pinprobe 0.0.1");
    let garbage = tmp.path().join("garbage.json");
    std::fs::write(&garbage, "{\"schema\": 1, \"targets\": [").expect("write");
    merge(&[], &[garbage]).assert_error("garbage.json");
    let plain = tmp.path().join("plain.json");
    let run = scan(
        &["--format", &format!("json={}", plain.display())],
        &targets[..1],
    );
    assert!(matches!(run.code, 1 | 3), "{}", run.stderr);
    merge(&[], &[files[0].clone(), plain.clone()]).assert_error("plain.json");
    // One target reported by two unsharded inputs.
    merge(&[], &[plain.clone(), plain]).assert_error("is in both");
}
