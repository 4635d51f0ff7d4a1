//! `pinprobe verify --deployed` without a GPU: the embedded harness (syntax, staging of wheels,
//! site-packages directories and virtual environments built here with sources written for these
//! tests), the command line's error paths (no interpreter, a missing PyTorch, no GPU) through
//! stand-in interpreters that speak the harness protocol, and `--help`. Tests that need `python3`
//! ask `require` (a failure under `PINPROBE_CI=1`, a visible skip elsewhere).

#[path = "common/require.rs"]
mod require;

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
