//! `pinprobe verify --deployed` without a GPU: the embedded harness (syntax, staging of wheels,
//! site-packages directories and virtual environments built here with sources written for these
//! tests), the command line's error paths (no interpreter, a missing PyTorch, no GPU) through
//! stand-in interpreters that speak the harness protocol, and `--help`. Tests that need `python3`
//! ask `require` (a failure under `PINPROBE_CI=1`, a visible skip elsewhere).

use crate::common::require;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use pinprobe::verify::deployed;

fn python3() -> bool {
    require::require(
        Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "python3",
    )
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Fake FA4 sources (no CuTe DSL in them: these only need staging).
const INTERFACE: &str =
    "def _flash_attn_fwd(q, k, v, num_splits=1, out=None):\n    raise NotImplementedError\n";
const SM90: &str = "block_info = BlockInfo(\n    self.tile_m,\n)\n";

/// Run `harness.py stage TARGET DEST` and return the parsed `target` (or `error`) event.
fn stage(target: &Path, dest: &Path) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let harness = deployed::write_harness(dir.path()).expect("harness");
    let out = Command::new("python3")
        .arg(&harness)
        .arg("stage")
        .arg(target)
        .arg(dest)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {stdout:?}"))
}

/// Zip `files` into `path` with Python's zipfile (no zip writer in pinprobe's dependencies).
fn zip(path: &Path, files: &[(&str, &str)]) {
    let spec = serde_json::to_string(&files).expect("json");
    let status = Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
             \x20   for name, text in json.loads(sys.argv[2]):\n\
             \x20       z.writestr(name, text)\n",
        )
        .arg(path)
        .arg(spec)
        .status()
        .expect("python3 runs");
    assert!(status.success());
}

#[test]
fn harness_is_valid_python() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let harness = deployed::write_harness(dir.path()).expect("harness");
    let out = Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(&harness)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_wheel_stages_only_its_cute_directory() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let wheel = dir.path().join("vllm-0.0.0-cp38-abi3-linux_x86_64.whl");
    zip(
        &wheel,
        &[
            (
                "vllm/__init__.py",
                "raise ImportError('the rest of vLLM')\n",
            ),
            ("vllm/vllm_flash_attn/__init__.py", "import vllm._C\n"),
            ("vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so", "not a library"),
            ("vllm/vllm_flash_attn/cute/interface.py", INTERFACE),
            ("vllm/vllm_flash_attn/cute/flash_fwd_sm90.py", SM90),
            ("vllm/vllm_flash_attn/cute/sub/helper.py", "X = 1\n"),
            ("vllm-0.0.0.dist-info/METADATA", "Name: vllm\n"),
        ],
    );
    let dest = dir.path().join("stage");
    let event = stage(&wheel, &dest);
    assert_eq!(event["event"], "target", "{event}");
    assert_eq!(event["kind"], "wheel");
    assert_eq!(event["module"], "vllm.vllm_flash_attn.cute");
    assert_eq!(event["files"], 3);
    assert!(event["sha256"]["flash_fwd_sm90.py"].is_string());
    let cute = dest.join("vllm/vllm_flash_attn/cute");
    assert_eq!(
        std::fs::read_to_string(cute.join("interface.py")).expect("staged"),
        INTERFACE
    );
    assert!(cute.join("sub/helper.py").is_file());
    // The package __init__ files above cute/ are empty stand-ins, never the wheel's.
    for init in ["vllm/__init__.py", "vllm/vllm_flash_attn/__init__.py"] {
        assert_eq!(std::fs::read_to_string(dest.join(init)).expect(init), "");
    }
    assert!(
        !dest
            .join("vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so")
            .exists()
    );
    assert!(!dest.join("vllm-0.0.0.dist-info").exists());
}

#[test]
fn site_packages_venvs_and_standalone_fa4_are_found() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // A site-packages directory with standalone flash-attn-4.
    let site = dir.path().join("site-packages");
    write(&site, "flash_attn/cute/interface.py", INTERFACE);
    write(
        &site,
        "flash_attn/cute/__pycache__/interface.cpython-312.pyc",
        "",
    );
    let dest = dir.path().join("stage1");
    let event = stage(&site, &dest);
    assert_eq!(event["kind"], "site-packages", "{event}");
    assert_eq!(event["module"], "flash_attn.cute");
    assert!(dest.join("flash_attn/__init__.py").is_file());
    assert!(!dest.join("flash_attn/cute/__pycache__").exists());

    // A virtual environment with vLLM: vLLM's copy is preferred to a standalone one.
    let venv = dir.path().join("venv");
    write(&venv, "pyvenv.cfg", "version = 3.12.3\n");
    let sp = "lib/python3.12/site-packages";
    write(
        &venv,
        &format!("{sp}/flash_attn/cute/interface.py"),
        INTERFACE,
    );
    write(
        &venv,
        &format!("{sp}/vllm/vllm_flash_attn/cute/interface.py"),
        INTERFACE,
    );
    let dest = dir.path().join("stage2");
    let event = stage(&venv, &dest);
    assert_eq!(event["kind"], "venv", "{event}");
    assert_eq!(event["module"], "vllm.vllm_flash_attn.cute");
    assert!(
        event["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("site-packages"))
    );

    // Nothing to import, a missing path, a zip escaping its directory.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let event = stage(&empty, &dir.path().join("stage3"));
    assert_eq!(event["event"], "error");
    assert_eq!(event["kind"], "target");
    assert!(
        event["message"]
            .as_str()
            .is_some_and(|m| m.contains("no FlashAttention 4 sources"))
    );
    let event = stage(&dir.path().join("missing"), &dir.path().join("stage4"));
    assert_eq!(event["kind"], "target");
    let evil = dir.path().join("evil.whl");
    zip(
        &evil,
        &[
            ("flash_attn/cute/interface.py", INTERFACE),
            ("flash_attn/cute/../../../escape.py", "x"),
        ],
    );
    let event = stage(&evil, &dir.path().join("stage5"));
    assert_eq!(event["kind"], "target", "{event}");
    assert!(!dir.path().join("escape.py").exists());
}

// ---- command line ---------------------------------------------------------------------------

/// A stand-in interpreter: a shell script that prints `lines` as the harness would.
#[cfg(unix)]
fn fake_python(dir: &Path, lines: &[&str]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("python");
    let mut script = String::from("#!/bin/sh\n");
    for line in lines {
        script.push_str(&format!("echo '{line}'\n"));
    }
    std::fs::write(&path, script).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn target(dir: &Path) -> PathBuf {
    let site = dir.join("site-packages");
    write(&site, "flash_attn/cute/interface.py", INTERFACE);
    site
}

fn errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("pinprobe:"))
        .collect()
}

#[test]
fn a_missing_interpreter_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .arg("--deployed")
        .arg(target(dir.path()))
        .arg("--python")
        .arg(dir.path().join("no-such-python"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no-such-python: could not be run"),
        "{stderr}"
    );
}

#[test]
fn a_missing_target_is_exit_2() {
    let out = cargo_bin_cmd!("pinprobe")
        .args(["verify", "--deployed", "/no/such/wheel.whl"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
}

#[cfg(unix)]
#[test]
fn a_missing_pytorch_is_named_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let python = fake_python(
        dir.path(),
        &[
            r#"{"event": "target", "kind": "site-packages", "package": "flash_attn/cute", "module": "flash_attn.cute", "source": "/x", "files": 1}"#,
            r#"{"event": "error", "kind": "missing", "missing": "PyTorch", "message": "PyTorch is not importable (ModuleNotFoundError: No module named torch)"}"#,
        ],
    );
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .arg("--deployed")
        .arg(target(dir.path()))
        .arg("--python")
        .arg(&python)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errs = errors(&stderr);
    assert_eq!(errs.len(), 1, "{stderr}");
    assert!(errs[0].contains("missing PyTorch"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn no_gpu_in_the_harness_is_exit_4_and_a_silent_harness_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let python = fake_python(
        dir.path(),
        &[r#"{"event": "error", "kind": "no_gpu", "message": "PyTorch sees no CUDA device"}"#],
    );
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .arg("--deployed")
        .arg(target(dir.path()))
        .arg("--python")
        .arg(&python)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no usable GPU"));

    let quiet = fake_python(dir.path(), &["not the protocol"]);
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .arg("--deployed")
        .arg(target(dir.path()))
        .arg("--python")
        .arg(&quiet)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("before reporting a result"), "{stderr}");
}

#[test]
fn the_real_harness_names_a_missing_pytorch() {
    let has_torch = Command::new("python3")
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !python3() || !require::require(!has_torch, "python3 without PyTorch") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .arg("--deployed")
        .arg(target(dir.path()))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errs = errors(&stderr);
    assert_eq!(errs.len(), 1, "{stderr}");
    assert!(errs[0].contains("missing PyTorch"), "{stderr}");
}

#[test]
fn help_says_deployed_imports_code_from_the_artifact() {
    let out = cargo_bin_cmd!("pinprobe")
        .args(["verify", "--help"])
        .output()
        .expect("run");
    assert!(out.status.success());
    // Wrapped to the terminal: compare with whitespace collapsed.
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for needle in [
        "--deployed <TARGET>",
        "--python <PATH>",
        "IMPORTS AND RUNS CODE FROM THE ARTIFACT",
        "`pinprobe scan` never imports",
        "unsupported",
        "CUDA graphs",
        "scaled_dot_product_attention",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}");
    }
    let out = cargo_bin_cmd!("pinprobe")
        .arg("--help")
        .output()
        .expect("run");
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("only command that imports code from an artifact"));
}

// ---- the deployed flow on recorded timings --------------------------------------------------

/// Medians per split count recorded on an H200 (`benches/results/verify-deployed-h200-*.txt`, run 1):
/// vLLM 0.30.0's shipped FA4 kernel and the same with the one-line fix, for the two default
/// shapes (head dim 512 / 7,168 tokens; head dim 128 / 32,768 tokens).
const SHIPPED: [&[(usize, f64)]; 2] = [
    &[
        (1, 339.7),
        (2, 359.1),
        (4, 359.1),
        (8, 359.5),
        (16, 360.4),
        (32, 358.8),
        (64, 361.4),
    ],
    &[
        (1, 335.9),
        (2, 338.2),
        (4, 338.3),
        (8, 338.3),
        (16, 338.2),
        (32, 338.4),
        (64, 338.8),
    ],
];
const FIXED: [&[(usize, f64)]; 2] = [
    &[
        (1, 339.7),
        (2, 183.7),
        (4, 96.4),
        (8, 52.5),
        (16, 31.8),
        (32, 24.2),
        (64, 21.8),
    ],
    &[
        (1, 335.4),
        (2, 174.0),
        (4, 90.7),
        (8, 49.0),
        (16, 28.9),
        (32, 20.1),
        (64, 18.9),
    ],
];
/// The probe's best medians on the same shapes, same run.
const PROBE_BEST_US: [f64; 2] = [17.3, 19.0];

/// The harness's JSON lines for a run with these medians (15 rounds each, spread +-0.2%
/// around the recorded median), `rel_error` for every check, and an optional refusal.
fn harness_lines(
    curves: &[&[(usize, f64)]],
    rel_error: f64,
    refuse: &[(usize, usize, &str)],
) -> String {
    let mut out = vec![
        r#"{"event": "hello", "protocol": 1, "python": "3.12.3", "torch": "2.11.0+cu130", "cuda": "13.0", "cutlass_dsl": "4.7.1", "device": "NVIDIA H200", "capability": "9.0"}"#.to_string(),
        r#"{"event": "target", "kind": "wheel", "package": "vllm/vllm_flash_attn/cute", "module": "vllm.vllm_flash_attn.cute", "source": "/x/vllm.whl", "files": 53}"#.to_string(),
    ];
    for (shape, curve) in curves.iter().enumerate() {
        for &(splits, median) in curve.iter() {
            if let Some((_, _, message)) = refuse
                .iter()
                .find(|(s, refused, _)| *s == shape && splits >= *refused)
            {
                out.push(format!(
                    r#"{{"event": "unsupported", "shape": {shape}, "splits": {splits}, "message": "{message}"}}"#
                ));
                break;
            }
            out.push(format!(
                r#"{{"event": "check", "shape": {shape}, "splits": {splits}, "rel_error": {rel_error}, "seconds": 0.1}}"#
            ));
            let samples: Vec<String> = (0..15)
                .map(|i| format!("{:.3}", median * (1.0 + 0.001 * ((i % 5) as f64 - 2.0))))
                .collect();
            out.push(format!(
                r#"{{"event": "timing", "shape": {shape}, "splits": {splits}, "samples_us": [{}], "launches": 21, "copies": 7, "mode": "cuda-graph"}}"#,
                samples.join(", ")
            ));
        }
        out.push(format!(
            r#"{{"event": "shape_done", "shape": {shape}, "eager_call_us": 64.0, "seconds": 9.0}}"#
        ));
    }
    out.push(r#"{"event": "done", "seconds": 29.0}"#.to_string());
    out.join("\n")
}

/// The flow `verify --deployed` runs after the GPU: the protocol's lines folded into a run,
/// each shape judged with the probe's controls, the overall verdict and its exit code.
fn verdict_and_exit(
    lines: &str,
    negative: pinprobe::verify::stats::Verdict,
    positive: pinprobe::verify::stats::Verdict,
) -> (pinprobe::verify::stats::Verdict, i32, Vec<String>) {
    use pinprobe::verify::stats::{self, Scaling};
    use pinprobe::verify::{Shape, partition};
    let mut collector = deployed::protocol::Collector::new(2);
    for line in lines.lines() {
        if let Some(event) = deployed::protocol::parse_line(line) {
            collector.push(event.expect("a protocol line"));
        }
    }
    let run = collector
        .finish("exited with status 0")
        .expect("a complete run");
    let scaling = |verdict| Scaling {
        verdict,
        best_splits: None,
        speedup: None,
        reason: format!("recorded {verdict}"),
    };
    let (neg, pos) = (scaling(negative), scaling(positive));
    let mut verdicts = Vec::new();
    let mut reasons = Vec::new();
    for (i, (shape, shape_run)) in [Shape::REPORTED, Shape::DEPLOYED_LONG]
        .iter()
        .zip(&run.shapes)
        .enumerate()
    {
        let n = partition::n_blocks(shape.tokens, shape.block_n());
        let heuristic = partition::fa_num_splits_heuristic(
            shape.batch * shape.kv_heads,
            132,
            n,
            partition::fa_max_splits(132, n),
        );
        let judged = deployed::judge::judge(
            shape_run,
            shape,
            heuristic,
            7 + i as u64,
            Some(&neg),
            &pos,
            Some(PROBE_BEST_US[i]),
        );
        verdicts.push(judged.verdict);
        reasons.extend(judged.reasons);
    }
    let verdict = stats::overall(&verdicts);
    (verdict, pinprobe::exit::for_verify(verdict).code(), reasons)
}

#[test]
fn recorded_h200_timings_give_the_recorded_verdicts_and_exit_codes() {
    use pinprobe::verify::stats::Verdict::{Flat, Invalid, Scales, Unsupported};
    // Shipped vLLM 0.30.0: flat, exit 1 (as recorded: rc=1 three times).
    let (v, code, why) = verdict_and_exit(&harness_lines(&SHIPPED, 2.3e-3, &[]), Flat, Scales);
    assert_eq!((v, code), (Flat, 1), "{why:?}");
    // With the one-line fix: scales, exit 0 (rc=0 three times).
    let (v, code, why) = verdict_and_exit(&harness_lines(&FIXED, 2.2e-3, &[]), Flat, Scales);
    assert_eq!((v, code), (Scales, 0), "{why:?}");
    // flash-attn-4 4.0.0b36 on SM90 refuses split-KV: unsupported, exit 3 (rc=3 three times).
    let refused = harness_lines(
        &SHIPPED,
        2.3e-3,
        &[
            (
                0,
                1,
                "AssertionError: head_dim 512 is not supported on SM90",
            ),
            (1, 2, "AssertionError: SplitKV not supported on SM 9.0"),
        ],
    );
    let (v, code, why) = verdict_and_exit(&refused, Flat, Scales);
    assert_eq!((v, code), (Unsupported, 3), "{why:?}");
    // Fast but wrong outputs are never `scales`: invalid, exit 3.
    let (v, code, why) = verdict_and_exit(&harness_lines(&FIXED, 0.5, &[]), Flat, Scales);
    assert_eq!((v, code), (Invalid, 3), "{why:?}");
    // Controls that failed (the negative control scaled): nothing can be concluded, exit 3.
    let (v, code, why) = verdict_and_exit(&harness_lines(&FIXED, 2.2e-3, &[]), Scales, Scales);
    assert_eq!(code, 3, "{v:?} {why:?}");
    let (v, code, why) = verdict_and_exit(&harness_lines(&SHIPPED, 2.3e-3, &[]), Flat, Flat);
    assert_eq!(
        code, 3,
        "a positive control that did not scale: {v:?} {why:?}"
    );
}
