//! `scan --state FILE`: a fleet run killed in the middle (SIGKILL while a slow registry holds
//! an image) resumes from its state file: the targets it finished are not scanned again, and
//! the report and exit code are those of an uninterrupted run. A changed image digest or rule
//! database scans again; a damaged state file is one error line; a second run on a state file
//! in use is refused.

use super::front::Front;
use super::{Image, Layer, SITE, build, registry};
use crate::common::artifact::{vllm_files, with_dist_info, write_wheel};
use crate::common::{Pinprobe, Run, Sm90Call, block_info_new, fwd_sm90};
use build::Compression;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn release(version: &str, call: Sm90Call) -> Image {
    let files = build::vllm_install(SITE, version, &block_info_new(), &fwd_sm90(call));
    Image::new(vec![
        Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
        Layer::new(
            &format!("RUN pip install vllm=={version}"),
            Compression::Gzip,
        )
        .files(files),
    ])
}

fn push(reg: &registry::Registry, repo: &str, image: &Image) {
    let dir = tempfile::tempdir().unwrap();
    build::write_oci(dir.path(), &[("v1", &image.build())]);
    reg.push(dir.path(), "v1", repo, None);
}

fn wheel(dir: &Path, name: &str, version: &str, call: Sm90Call) -> String {
    let path = dir.join(format!("{name}-{version}-cp38-abi3-manylinux1_x86_64.whl"));
    write_wheel(
        &path,
        &with_dist_info("vllm", version, vllm_files(version, call)),
    );
    path.display().to_string()
}

fn scan(front: &Front, state: Option<&Path>, targets: &[String], extra: &[&str]) -> Pinprobe {
    let mut args: Vec<String> = ["scan", "--jobs", "1", "--insecure-registry", &front.host]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(state) = state {
        args.extend(["--state".to_string(), state.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(targets.iter().cloned());
    Pinprobe::new(&args).env("PINPROBE_STATS", "1")
}

/// `(reused, scanned)` from the stats line.
/// A report (JSON, or JSON lines) without what records how it was read rather than what it
/// found: an image's `bytes_read` and each layer's `cached` (a layer that another target of the
/// run, or an earlier run, already read comes from the layer cache, and says so).
fn reported(stdout: &str) -> Vec<serde_json::Value> {
    let docs: Vec<serde_json::Value> = match serde_json::from_str(stdout) {
        Ok(doc) => vec![doc],
        Err(_) => stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect(),
    };
    docs.into_iter()
        .map(|mut doc| {
            for target in doc["targets"].as_array_mut().expect("targets") {
                let Some(image) = target.get_mut("image").and_then(|i| i.as_object_mut()) else {
                    continue;
                };
                image.remove("bytes_read");
                for layer in image["layers"].as_array_mut().expect("layers") {
                    layer.as_object_mut().expect("a layer").remove("cached");
                }
            }
            doc
        })
        .collect()
}

fn counts(run: &Run) -> (usize, usize) {
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("--state:"))
        .unwrap_or_else(|| panic!("a --state stats line: {}", run.stderr));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

fn wait_for(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "waited for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn entries(state: &Path) -> usize {
    std::fs::read_to_string(state)
        .map(|s| s.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

#[test]
fn a_killed_sweep_resumes_with_the_report_of_an_uninterrupted_one() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    push(&reg, "pp/a", &release("0.30.0", Sm90Call::Buggy));
    push(&reg, "pp/b", &release("0.33.0", Sm90Call::Fixed));
    let front = Front::start(&reg.host);
    let tmp = tempfile::tempdir().unwrap();
    let image = |repo: &str| format!("docker://{}/{repo}:v1", front.host);
    let targets = vec![
        wheel(tmp.path(), "w0", "0.33.0", Sm90Call::Fixed),
        wheel(tmp.path(), "w1", "0.30.0", Sm90Call::Buggy),
        image("pp/a"),
        wheel(tmp.path(), "w3", "0.33.0", Sm90Call::Fixed),
        image("pp/b"),
    ];
    let state = tmp.path().join("sweep.state");

    // The registry holds the first image: the run is killed with two targets done.
    front.open.store(false, Ordering::SeqCst);
    let running = scan(&front, Some(&state), &targets, &["--format", "jsonl"]).spawn();
    wait_for("two targets recorded and the image held", || {
        entries(&state) == 2 && front.held.load(Ordering::SeqCst) > 0
    });
    let killed = running.kill();
    assert_eq!(killed.code, -1, "killed by a signal: {}", killed.stderr);
    assert_eq!(
        killed.stdout.lines().count(),
        2,
        "the lines of the two done"
    );
    assert_eq!(entries(&state), 2);
    front.open.store(true, Ordering::SeqCst);

    // Resumed: the two finished targets are reused, the other three scanned.
    let resumed = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!(counts(&resumed), (2, 3), "{}", resumed.stderr);
    let whole = scan(&front, None, &targets, &["--format", "json"]).run();
    assert_eq!(whole.code, 1, "{}", whole.stderr);
    assert_eq!(
        reported(&resumed.stdout),
        reported(&whole.stdout),
        "the report of an uninterrupted run"
    );
    assert_eq!(resumed.code, whole.code);
    assert_eq!(entries(&state), 5);

    // Everything done: nothing scanned, no layer read (a manifest per image says unchanged).
    let before = front.requests().len();
    let again = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!(counts(&again), (5, 0), "{}", again.stderr);
    assert_eq!(
        (reported(&again.stdout), again.code),
        (reported(&whole.stdout), 1)
    );
    let asked = front.requests()[before..].to_vec();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked.iter().all(|p| p.contains("/manifests/v1")),
        "{asked:?}"
    );
    // Streamed lines too: the lines an uninterrupted run writes.
    let lines = scan(&front, Some(&state), &targets, &["--format", "jsonl"]).run();
    let whole_lines = scan(&front, None, &targets, &["--format", "jsonl"]).run();
    assert_eq!(reported(&lines.stdout), reported(&whole_lines.stdout));

    // A tag moved to another image: that target alone is scanned again, and its new verdict
    // is the one reported.
    push(&reg, "pp/a", &release("0.33.0", Sm90Call::Fixed));
    let moved = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!(counts(&moved), (4, 1), "{}", moved.stderr);
    let fresh = scan(&front, None, &targets, &["--format", "json"]).run();
    assert_eq!(reported(&moved.stdout), reported(&fresh.stdout));
    assert_eq!(moved.code, fresh.code);
    let a = &moved.json()["targets"][2];
    assert!(
        a["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "PINPROBE-2026-0001" && f["status"] == "not_affected"),
        "{a}"
    );
    // A wheel rewritten in place is scanned again.
    std::fs::copy(&targets[1], &targets[0]).unwrap();
    let rewritten = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!(counts(&rewritten), (4, 1), "{}", rewritten.stderr);
    assert_eq!(
        reported(&rewritten.stdout),
        reported(
            &scan(&front, None, &targets, &["--format", "json"])
                .run()
                .stdout
        )
    );

    // Another rule database: every target is scanned again.
    let rules = tmp.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(
        rules.join("extra.yaml"),
        crate::common::ancestry_rule("TEST-STATE-1", &[("introduced", &"1".repeat(40))]),
    )
    .unwrap();
    let rules_arg = rules.display().to_string();
    let other = scan(
        &front,
        Some(&state),
        &targets,
        &["--rules", &rules_arg, "--format", "json"],
    )
    .run();
    assert!(matches!(other.code, 1 | 3), "{}", other.stderr);
    assert_eq!(counts(&other), (0, 5), "{}", other.stderr);
}

#[test]
fn a_state_file_is_locked_checked_and_never_guessed() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    push(&reg, "pp/a", &release("0.30.0", Sm90Call::Buggy));
    let front = Front::start(&reg.host);
    let tmp = tempfile::tempdir().unwrap();
    let targets = vec![
        format!("docker://{}/pp/a:v1", front.host),
        wheel(tmp.path(), "w1", "0.33.0", Sm90Call::Fixed),
    ];
    let state = tmp.path().join("sweep.state");
    // A second run on a state file in use is refused at once.
    front.open.store(false, Ordering::SeqCst);
    let first = scan(&front, Some(&state), &targets, &[]).spawn();
    wait_for("the first run held", || {
        front.held.load(Ordering::SeqCst) > 0
    });
    scan(&front, Some(&state), &targets, &[])
        .run()
        .assert_error("in use by another pinprobe run");
    first.kill();
    front.open.store(true, Ordering::SeqCst);
    let done = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!((done.code, counts(&done)), (1, (0, 2)), "{}", done.stderr);

    // A last line cut short (a crash while writing): dropped with a warning, scanned again.
    let text = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, &text[..text.len() - 40]).unwrap();
    let torn = scan(&front, Some(&state), &targets, &["--format", "json"]).run();
    assert_eq!(counts(&torn), (1, 1), "{}", torn.stderr);
    assert!(
        torn.stderr.contains("line 3 is incomplete"),
        "{}",
        torn.stderr
    );
    assert_eq!(torn.stdout, done.stdout);
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        text,
        "rewritten whole"
    );

    // A damaged line, or a file that is not a state file: one error line, exit 2, nothing
    // scanned, the file left as it is.
    let damaged = text.replacen("not_affected", "affected_not", 1);
    std::fs::write(&state, &damaged).unwrap();
    let run = scan(&front, Some(&state), &targets, &[]).run();
    run.assert_error("checksum does not match");
    assert!(run.stderr.contains("sweep.state"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&state).unwrap(), damaged);
    std::fs::write(&state, "{\"schema\": 1}\n").unwrap();
    scan(&front, Some(&state), &targets, &[])
        .run()
        .assert_error("not a pinprobe state file");
}
