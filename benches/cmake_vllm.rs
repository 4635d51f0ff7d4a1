//! Benchmark (issue 29): CPU time and peak memory of `pinprobe scan` on a real vLLM source
//! tree (the unpacked sdist, CMake evaluation included), side by side with `grep -rn GIT_TAG`
//! over the same tree, in one run; prints the ratio.
//!
//! Run: `PINPROBE_VLLM_SDIST=/path/to/vllm-0.33.0 cargo bench --bench cmake_vllm` (release
//! build; needs `/usr/bin/time` and `grep`). The tree is a real download (see
//! `tools/ledger/fetch.sh`), never committed: without the variable the benchmark prints a skip
//! line. Targets: at most 0.7 s of CPU, at most 10x grep, at most 64 MB peak RSS.

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 5;

/// (user + system seconds, peak RSS in KB) of one run of `cmd`, from `/usr/bin/time`.
fn measure(cmd: &[&str]) -> (f64, u64) {
    let out = tempfile::NamedTempFile::new().expect("temp file");
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%U %S %M", "-o"])
        .arg(out.path())
        .args(cmd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("/usr/bin/time runs");
    // pinprobe exits 1 or 3 on findings; grep 0. Only a signal is a failure.
    assert!(status.code().is_some(), "{cmd:?} was killed");
    let text = std::fs::read_to_string(out.path()).expect("time output");
    let last = text.lines().last().unwrap_or_default();
    let f: Vec<&str> = last.split_whitespace().collect();
    let num = |i: usize| {
        f.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (num(0) + num(1), num(2) as u64)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let Some(tree) = std::env::var_os("PINPROBE_VLLM_SDIST").map(PathBuf::from) else {
        println!(
            "skipped: set PINPROBE_VLLM_SDIST to an unpacked vLLM sdist (tools/ledger/fetch.sh) to run the cmake_vllm benchmark"
        );
        return;
    };
    assert!(
        tree.join("CMakeLists.txt").is_file(),
        "{}: no CMakeLists.txt",
        tree.display()
    );
    // A private copy of the binary, so nothing rebuilds it while it is timed.
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("pinprobe");
    std::fs::copy(env!("CARGO_BIN_EXE_pinprobe"), &bin).expect("copy the binary");
    let tree_s = tree.to_str().expect("utf-8 path");
    let bin_s = bin.to_str().expect("utf-8 path");
    let scan = [bin_s, "scan", tree_s, "--offline", "--format", "json"];
    let grep = ["grep", "-rn", "GIT_TAG", tree_s];
    let (mut scan_cpu, mut grep_cpu, mut rss) = (Vec::new(), Vec::new(), 0u64);
    for _ in 0..RUNS {
        let (c, r) = measure(&scan);
        scan_cpu.push(c);
        rss = rss.max(r);
        grep_cpu.push(measure(&grep).0);
    }
    let (s, g) = (median(scan_cpu), median(grep_cpu));
    let name = Path::new(tree_s)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(tree_s);
    println!("cmake_vllm: {name}, median of {RUNS} runs (CPU = user + system)");
    println!(
        "  pinprobe scan --offline: {s:.3} s CPU, peak RSS {:.1} MB",
        rss as f64 / 1024.0
    );
    println!("  grep -rn GIT_TAG:        {g:.3} s CPU");
    println!(
        "  ratio: {:.1}x grep (targets: <= 0.7 s, <= 10x grep, <= 64 MB)",
        s / g.max(0.001)
    );
}
