//! Opt-in: real vLLM wheels downloaded at run time with pip (nothing third-party is committed).
//! Set `PINPROBE_REAL_WHEELS=1` (and optionally `PINPROBE_WHEEL_DIR` to reuse downloads).
//! Checks docs/src/design.md's facts: 0.29.0 and 0.33.0 ship the FA4 source without the bug shape,
//! 0.30.0 ships it; vLLM's third_party/tml_fa4 copy (literal False) is never flagged.

use crate::common::require;

use assert_cmd::cargo::cargo_bin_cmd;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The wheel of vLLM `version` in `dir`, downloaded with pip unless it is there already. Once
/// the test is opted in, a pip failure is a test failure (never a skip): it panics with pip's
/// own output.
fn download(version: &str, dir: &Path) -> PathBuf {
    let find = || {
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with(&format!("vllm-{version}-")) && n.ends_with(".whl")
                })
            })
    };
    if let Some(found) = find() {
        return found;
    }
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
        ])
        .args([
            "--python-version",
            "3.12",
            "--platform",
            "manylinux_2_28_x86_64",
        ])
        .arg(format!("vllm=={version}"))
        .arg("-d")
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("PINPROBE_REAL_WHEELS=1 but python3 does not run: {e}"));
    assert!(
        out.status.success(),
        "PINPROBE_REAL_WHEELS=1 but `pip download vllm=={version}` failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    find().unwrap_or_else(|| {
        panic!(
            "pip succeeded but no vllm-{version} wheel in {}",
            dir.display()
        )
    })
}

fn statuses(wheel: &Path) -> (i32, Vec<(String, String)>) {
    let out = cargo_bin_cmd!("pinprobe")
        .args(["scan", wheel.to_str().unwrap(), "--format", "json"])
        .output()
        .expect("runs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let found = report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "PINPROBE-2026-0001")
        .map(|f| {
            (
                f["component"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap(), found)
}

#[test]
fn real_vllm_wheels_match_the_known_facts() {
    if !require::opt_in_var(
        "PINPROBE_REAL_WHEELS",
        "download vllm 0.29.0, 0.30.0 and 0.33.0 with pip",
    ) {
        return;
    }
    let keep = std::env::var_os("PINPROBE_WHEEL_DIR").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    for (version, fa_status) in [
        ("0.29.0", "not_affected"),
        ("0.30.0", "affected"),
        ("0.33.0", "not_affected"),
    ] {
        let wheel = download(version, &dir);
        let (code, found) = statuses(&wheel);
        assert!(
            found.contains(&("flash-attention".into(), fa_status.into())),
            "{version}: {found:?}"
        );
        assert!(
            found.contains(&("tml_fa4".into(), "not_affected".into())),
            "{version}: {found:?}"
        );
        assert!(
            !found
                .iter()
                .any(|(c, s)| c != "flash-attention" && s == "affected"),
            "{version}: {found:?}"
        );
        if fa_status == "affected" {
            assert_eq!(code, 1, "{version}");
        } else {
            // Other FlashAttention rules need the commit, which no wheel records: unknown (3)
            // unless a fingerprint index recovers it.
            assert!(code == 0 || code == 3, "{version}: exit {code}");
        }
    }
}
