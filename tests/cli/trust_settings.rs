//! A scanned tree's `.pinprobe.yaml` is data, not orders (src/cli/config.rs): traced with
//! strace, a scan of a hostile tree (formats writing outside it, clones, mirrors, a loosened
//! gate) writes nothing but the report the command line asks for and the cache, connects to
//! nothing the tree names, and says once per key that it ignored the tree's setting.
//!
//! Needs strace (`.ci/run` installs it); skips visibly without (fails under CI).

use crate::common;

use common::*;
use std::path::Path;

fn strace_available() -> bool {
    common::require::require(
        common::require::tool("strace"),
        "strace (apt-get install strace) to trace what a scan writes",
    )
}

const HOSTILE: &str = "\
fail_on: never
fail_on_unknown: never
formats:
  - json=../escaped.json
  - sarif=ESCAPED_ABS
repositories:
  flash-attention: ../attacker-clone
mirrors:
  https://github.com/: http://127.0.0.1:9/attacker/
offline: false
";

#[test]
fn a_hostile_trees_settings_write_nothing_outside_the_requested_report_and_the_cache() {
    if !strace_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let tree = root.join("tree");
    vllm_tree(&tree, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    let escaped_abs = root.join("escaped-abs.sarif");
    write(
        &tree,
        ".pinprobe.yaml",
        &HOSTILE.replace("ESCAPED_ABS", &escaped_abs.display().to_string()),
    );
    let cache = root.join("cache");
    let out = root.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let report = out.join("report.json");
    // Online, with the command line's own mirror (nothing listens on 127.0.0.1:10), so a fetch
    // happens and stays on this machine: the tree's `offline: false` and mirror are ignored.
    let (run, written, connects) = Pinprobe::new(&[
        "scan",
        tree.to_str().expect("utf-8"),
        "--format",
        &format!("json={}", report.display()),
        "--mirror",
        "https://github.com/=http://127.0.0.1:10/own-mirror/",
    ])
    .cache(&cache)
    .env("PINPROBE_OFFLINE", "0")
    .traced_with_connects();
    assert!(
        connects.iter().any(|c| c == "127.0.0.1:10"),
        "the command line's mirror is tried: {connects:?}"
    );
    // The tree's mirror (127.0.0.1:9) is never reached: its settings fetch nothing.
    assert!(
        !connects.iter().any(|c| c.ends_with(":9")),
        "the tree's mirror was contacted: {connects:?}"
    );
    assert_eq!(run.code, 1, "the tree's gate is not used: {}", run.all());
    for key in [
        "fail_on",
        "fail_on_unknown",
        "formats",
        "repositories",
        "mirrors",
        "offline",
    ] {
        let lines = run
            .stderr
            .lines()
            .filter(|l| l.contains(&format!("`{key}` is ignored")))
            .count();
        assert_eq!(lines, 1, "one warning for {key}: {}", run.stderr);
    }
    assert!(report.is_file(), "the requested report: {}", run.all());
    assert!(
        written.contains(&report),
        "the trace sees the report: {written:?}"
    );
    let outside: Vec<_> = written
        .iter()
        .filter(|p| !p.starts_with(&cache) && !p.starts_with(&out))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the report and the cache: {outside:?}"
    );
    assert!(!root.join("escaped.json").exists());
    assert!(!escaped_abs.exists());
    assert!(!run.stderr.contains("attacker"), "{}", run.stderr);
}

/// The tracer itself sees a write outside the cache when one happens (a `--format FILE` the
/// user names anywhere is written, and shows up) and a connection (to a `--mirror` the user
/// names).
#[test]
fn the_trace_sees_writes_the_command_line_asks_for() {
    if !strace_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let tree = root.join("tree");
    vllm_tree(&tree, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    let elsewhere = root.join("elsewhere.sarif");
    let (run, written, connects) = Pinprobe::new(&[
        "scan",
        "tree",
        "--format",
        "table",
        "--format",
        "sarif=elsewhere.sarif",
        "--mirror",
        "https://github.com/=http://127.0.0.1:9/mirror/",
    ])
    .dir(&root)
    .cache(&root.join("cache"))
    .env("PINPROBE_OFFLINE", "0")
    .traced_with_connects();
    assert_eq!(run.code, 1, "{}", run.all());
    // The command line's mirror is tried (nothing listens there): the trace sees connects.
    assert!(
        connects.iter().any(|c| c == "127.0.0.1:9"),
        "{connects:?}: {}",
        run.all()
    );
    assert!(elsewhere.is_file());
    assert!(written.contains(&elsewhere), "{written:?}");
    assert!(Path::new(&elsewhere).starts_with(&root));
}
