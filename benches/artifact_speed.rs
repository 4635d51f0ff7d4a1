//! Benchmark (issue 34, "every artifact as fast as a wheel"): `pinprobe scan` of a real vLLM
//! wheel and of its installed environment, each next to a baseline command run in the same
//! program, pair by pair (A B A B ...), with the median ratio of CPU time (user + system, from
//! wait4, children included) and of wall time:
//!
//! - an environment, warm cache, against `find ENV | wc -l` (target: <= 3x);
//! - five copies of the environment in one run, cold cache, against one copy, cold (<= 1.5x):
//!   hard-linked copies (`cp -al`, as uv installs from its cache) and, with
//!   `PINPROBE_BENCH_FULL_COPIES=1`, full copies (`cp -a`, other files with the same bytes);
//! - two identical wheels (two files) in one run, cold, against one (<= 1.15x);
//! - one wheel, cold, against `unzip -p WHEEL` of its FA3 library to /dev/null (<= 0.4x);
//! - one wheel, warm, against `unzip -l WHEEL` (no worse than before).
//!
//! Opt-in: the wheel and the environment are downloaded and installed outside the repository.
//!   pip download vllm==0.30.0 --no-deps -d WHEELS
//!   pip install --no-deps --target ENV WHEELS/vllm-0.30.0-*.whl
//!   PINPROBE_BENCH_WHEEL=WHEELS/vllm-0.30.0-....whl PINPROBE_BENCH_ENV=ENV \
//!     cargo bench --bench artifact_speed
//! `PINPROBE_BENCH_BIN=PATH` times another pinprobe binary (a build of an older commit) with
//! the same program; `PINPROBE_BENCH_RUNS=N` sets the pairs per figure (default 5). The binary
//! is copied before it is timed. The copies of the environment and the wheel are made in a
//! temporary directory on the environment's file system (`PINPROBE_BENCH_TMP` elsewhere).

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const FA3: &str = "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so";

/// One finished run: CPU seconds (user + system, the command and the children it waited for)
/// and wall seconds.
#[derive(Debug, Clone, Copy)]
struct Usage {
    cpu: f64,
    wall: f64,
}

/// Run `cmd` with its output thrown away, reaped by wait4 for its resource usage.
// The child is reaped by wait4 (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn measure(mut cmd: Command) -> Usage {
    let started = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on our own child's pid, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(pid > 0, "wait4");
    let wall = started.elapsed().as_secs_f64();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    assert!(matches!(code, 0 | 1 | 3), "{cmd:?}: exit {code}");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        wall,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A and B in turn, `runs` pairs after one warm-up pair; prints one row: the medians of A's and
/// B's CPU and wall, and the medians of the pairwise ratios.
fn pair(label: &str, target: &str, runs: usize, a: &dyn Fn() -> Command, b: &dyn Fn() -> Command) {
    measure(a());
    measure(b());
    let mut rows = Vec::new();
    for _ in 0..runs {
        rows.push((measure(a()), measure(b())));
    }
    let cpu_ratio = median(rows.iter().map(|(a, b)| a.cpu / b.cpu).collect());
    let wall_ratio = median(rows.iter().map(|(a, b)| a.wall / b.wall).collect());
    println!(
        "| {label} | {:.3} | {:.3} | {:.3} | {:.3} | **{cpu_ratio:.2}x** | {wall_ratio:.2}x | {target} |",
        median(rows.iter().map(|(a, _)| a.cpu).collect()),
        median(rows.iter().map(|(_, b)| b.cpu).collect()),
        median(rows.iter().map(|(a, _)| a.wall).collect()),
        median(rows.iter().map(|(_, b)| b.wall).collect()),
    );
}

fn copy(args: &[&str], from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .args(args)
        .arg(from)
        .arg(to)
        .status()
        .expect("cp runs")
        .success();
    assert!(ok, "cp {args:?} {} {}", from.display(), to.display());
}

fn main() {
    let (Some(wheel), Some(env)) = (
        std::env::var_os("PINPROBE_BENCH_WHEEL").map(PathBuf::from),
        std::env::var_os("PINPROBE_BENCH_ENV").map(PathBuf::from),
    ) else {
        println!(
            "skipped: set PINPROBE_BENCH_WHEEL=WHEEL and PINPROBE_BENCH_ENV=ENV (see the doc)"
        );
        return;
    };
    let runs: usize = std::env::var("PINPROBE_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let scratch_parent = std::env::var_os("PINPROBE_BENCH_TMP")
        .map(PathBuf::from)
        .or_else(|| env.parent().map(Path::to_path_buf))
        .expect("a directory for copies");
    let tmp = tempfile::Builder::new()
        .prefix("pinprobe-bench-")
        .tempdir_in(&scratch_parent)
        .expect("tempdir");
    let tmp = tmp.path();
    // The binary timed is a copy: nothing rebuilds it while it runs.
    let source = std::env::var_os("PINPROBE_BENCH_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_pinprobe")),
        PathBuf::from,
    );
    let bin = tmp.join("pinprobe");
    std::fs::copy(&source, &bin).expect("copy the binary");
    // Five hard-linked copies of the environment, two copies of the wheel (other files).
    let linked: Vec<PathBuf> = (0..5).map(|i| tmp.join(format!("env{i}"))).collect();
    for copy_dir in &linked {
        copy(&["-al"], &env, copy_dir);
    }
    let full_copies = std::env::var("PINPROBE_BENCH_FULL_COPIES").as_deref() == Ok("1");
    let copied: Vec<PathBuf> = if full_copies {
        (0..5).map(|i| tmp.join(format!("copy{i}"))).collect()
    } else {
        Vec::new()
    };
    for copy_dir in &copied {
        copy(&["-a"], &env, copy_dir);
    }
    let name = wheel.file_name().expect("a file name");
    let twins: Vec<PathBuf> = (0..2)
        .map(|i| {
            let dir = tmp.join(format!("wheel{i}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            dir.join(name)
        })
        .collect();
    for twin in &twins {
        copy(&[], &wheel, twin);
    }
    // Files changed within two seconds of a scan are not remembered (racy stamps).
    std::thread::sleep(std::time::Duration::from_millis(2100));

    let cold_dirs = Cell::new(0u32);
    let fresh_cache = || {
        cold_dirs.set(cold_dirs.get() + 1);
        tmp.join(format!("cold-cache-{}", cold_dirs.get()))
    };
    let scan = |targets: &[&Path], cache: &Path| {
        let mut c = Command::new(&bin);
        c.arg("scan")
            .args(targets)
            .args(["--format", "json", "--cache"])
            .arg(cache)
            .env("PINPROBE_OFFLINE", "1");
        c
    };
    let shell = |script: String| {
        let mut c = Command::new("sh");
        c.args(["-c", &script]);
        c
    };
    let quote = |p: &Path| format!("'{}'", p.display());
    let warm_env = tmp.join("warm-env");
    let warm_wheel = tmp.join("warm-wheel");
    let _ = measure(scan(&[&env], &warm_env));
    let _ = measure(scan(&[&wheel], &warm_wheel));
    let size = std::fs::metadata(&wheel).map_or(0, |m| m.len());
    println!(
        "pinprobe {} | wheel {} ({:.0} MB) | environment {} | {runs} pairs per row, after one warm-up pair",
        source.display(),
        wheel.display(),
        size as f64 / 1e6,
        env.display()
    );
    println!();
    println!(
        "| A vs B | A CPU s | B CPU s | A wall s | B wall s | CPU A/B | wall A/B | target (CPU) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    pair(
        "environment, warm cache vs `find ENV \\| wc -l`",
        "<= 3x",
        runs,
        &|| scan(&[&env], &warm_env),
        &|| shell(format!("find {} | wc -l", quote(&env))),
    );
    let five: Vec<&Path> = linked.iter().map(PathBuf::as_path).collect();
    pair(
        "five hard-linked environment copies, cold vs one, cold",
        "<= 1.5x",
        runs,
        &|| scan(&five, &fresh_cache()),
        &|| scan(&five[..1], &fresh_cache()),
    );
    if full_copies {
        let five: Vec<&Path> = copied.iter().map(PathBuf::as_path).collect();
        pair(
            "five full environment copies (`cp -a`), cold vs one, cold",
            "<= 1.5x",
            runs,
            &|| scan(&five, &fresh_cache()),
            &|| scan(&five[..1], &fresh_cache()),
        );
    }
    let two: Vec<&Path> = twins.iter().map(PathBuf::as_path).collect();
    pair(
        "two identical wheels (two files), cold vs one, cold",
        "<= 1.15x",
        runs,
        &|| scan(&two, &fresh_cache()),
        &|| scan(&two[..1], &fresh_cache()),
    );
    pair(
        "one wheel, cold vs `unzip -p WHEEL FA3 > /dev/null`",
        "<= 0.4x",
        runs,
        &|| scan(&[&wheel], &fresh_cache()),
        &|| {
            let mut c = Command::new("unzip");
            c.arg("-p").arg(&wheel).arg(FA3);
            c
        },
    );
    pair(
        "one wheel, warm cache vs `unzip -l WHEEL`",
        "no worse than before",
        runs,
        &|| scan(&[&wheel], &warm_wheel),
        &|| {
            let mut c = Command::new("unzip");
            c.arg("-l").arg(&wheel);
            c
        },
    );
    // The cold caches are thrown away with the temporary directory.
}
