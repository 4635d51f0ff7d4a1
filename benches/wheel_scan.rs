//! Benchmark: `pinprobe scan` of a real vLLM wheel next to `unzip -l` of the same file, in the
//! same run: median time, peak RSS (from `/usr/bin/time -f %M`) and the bytes pinprobe read.
//!
//! Opt-in, the wheel is downloaded at run time (nothing third-party is committed):
//!   PINPROBE_BENCH_WHEEL=/path/to/vllm-0.30.0-....whl cargo bench --bench wheel_scan
//! or let it fetch one with pip:
//!   PINPROBE_BENCH_DOWNLOAD=1 cargo bench --bench wheel_scan

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 15;

fn median_time(mut make: impl FnMut() -> Command) -> Duration {
    let mut runs: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let mut c = make();
            let start = Instant::now();
            let status = c
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("runs");
            let took = start.elapsed();
            assert!(matches!(status.code(), Some(0 | 1 | 3)), "exit {status:?}");
            took
        })
        .collect();
    runs.sort();
    runs[RUNS / 2]
}

/// Peak RSS in KiB of one run, through `/usr/bin/time -f %M`.
fn peak_rss(program: &str, args: &[&str]) -> Option<u64> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", program])
        .args(args)
        .stdout(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn wheel() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PINPROBE_BENCH_WHEEL") {
        return Some(PathBuf::from(p));
    }
    if std::env::var("PINPROBE_BENCH_DOWNLOAD").as_deref() != Ok("1") {
        return None;
    }
    let dir = std::env::temp_dir().join("pinprobe-bench-wheels");
    std::fs::create_dir_all(&dir).ok()?;
    let ok = Command::new("python3")
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
            "vllm==0.30.0",
            "-d",
        ])
        .arg(&dir)
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
}

fn main() {
    let Some(wheel) = wheel() else {
        println!("skipped: set PINPROBE_BENCH_WHEEL=PATH or PINPROBE_BENCH_DOWNLOAD=1");
        return;
    };
    let bin = env!("CARGO_BIN_EXE_pinprobe");
    let w = wheel.to_str().expect("UTF-8 path");
    let tmp = tempfile::tempdir().expect("tempdir");
    let warm = tmp.path().join("warm");
    let scan = |cache: &Path| {
        let mut c = Command::new(bin);
        c.args(["scan", w, "--format", "json", "--cache"])
            .arg(cache)
            .env("PINPROBE_OFFLINE", "1");
        c
    };
    // Cold: a fresh cache every run (every signature computed, every library read); warm: the
    // cache filled once (outcomes and library symbol tables reused).
    let mut run = 0;
    let cold = median_time(|| {
        run += 1;
        scan(&tmp.path().join(format!("cold{run}")))
    });
    let _ = scan(&warm).output();
    let hot = median_time(|| scan(&warm));
    let theirs = median_time(|| {
        let mut c = Command::new("unzip");
        c.args(["-l", w]);
        c
    });
    let stats = scan(&warm)
        .env("PINPROBE_STATS", "1")
        .output()
        .expect("runs");
    let read = String::from_utf8_lossy(&stats.stderr)
        .lines()
        .find_map(|l| l.split(": read ").nth(1).map(String::from))
        .unwrap_or_default();
    let size = std::fs::metadata(Path::new(w)).map_or(0, |m| m.len());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("wheel: {} ({:.0} MB)", wheel.display(), size as f64 / 1e6);
    println!("pinprobe scan, cold cache: {:>8.1} ms", ms(cold));
    println!(
        "pinprobe scan, warm cache: {:>8.1} ms   read {read}",
        ms(hot)
    );
    println!(
        "unzip -l:                  {:>8.1} ms   peak RSS {:>6} KiB",
        ms(theirs),
        peak_rss("unzip", &["-l", w]).unwrap_or(0)
    );
    let ratio = |a: Duration| a.as_secs_f64() / theirs.as_secs_f64();
    println!("ratio cold: {:.2}x (target 2x)", ratio(cold));
    println!("ratio warm: {:.2}x (target 1x)", ratio(hot));
}
