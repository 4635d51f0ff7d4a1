//! Bounds under attack: every case of the bad-input corpus (`fixtures/bad/cases.yaml`) through
//! the release binary, printing its wall time and peak resident memory against the targets
//! (10 s, 200 MB). `cargo bench --bench bad_inputs`; `PINPROBE_BIN` times another binary.

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/bad/cases.rs"]
mod cases;
#[path = "../tests/common/mod.rs"]
mod common;

use common::image as build;

use std::path::PathBuf;
use std::time::Duration;

const TIME_TARGET: Duration = Duration::from_secs(10);
const MEMORY_TARGET_MB: f64 = 200.0;

fn main() {
    // Generating runs in a child process (`--generate NAME DIR` prints the input's path): a
    // child's peak-RSS figure starts from its parent's, which must stay small.
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--generate") {
        let path = cases::generate(&argv[2], std::path::Path::new(&argv[3]));
        println!("{}", path.display());
        return;
    }
    let bin = std::env::var_os("PINPROBE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "--release", "--quiet", "--bin", "pinprobe"])
                .status()
                .expect("cargo build");
            assert!(status.success(), "release build failed");
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| cases::root().join("target"));
            target.join("release/pinprobe")
        });
    let only = argv.get(1).filter(|a| !a.starts_with('-')).cloned();
    println!(
        "{:<40} {:>4} {:>9} {:>9}  within targets ({} s, {} MB)",
        "case",
        "exit",
        "time",
        "peak RSS",
        TIME_TARGET.as_secs(),
        MEMORY_TARGET_MB
    );
    let (mut worst_time, mut worst_mem) = (Duration::ZERO, 0.0f64);
    let mut over = 0;
    let all = cases::load();
    for case in &all {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let input = if case.generate {
            let out = std::process::Command::new(std::env::current_exe().expect("own path"))
                .arg("--generate")
                .arg(&case.name)
                .arg(tmp.path().join("input"))
                .output()
                .expect("generator runs");
            assert!(out.status.success(), "generating {}", case.name);
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        } else {
            cases::root().join("fixtures/bad").join(&case.name)
        };
        let args = cases::args_with(case, &input);
        let run = cases::run_guarded(&bin, &args, tmp.path(), Duration::from_secs(60), 512);
        let mb = run.max_rss_kib as f64 / 1024.0;
        let ok = run.elapsed <= TIME_TARGET && mb <= MEMORY_TARGET_MB && !run.timed_out;
        over += usize::from(!ok);
        worst_time = worst_time.max(run.elapsed);
        worst_mem = worst_mem.max(mb);
        println!(
            "{:<40} {:>4} {:>7.0}ms {:>7.1}MB  {}",
            case.name,
            run.code.map_or("kill".to_string(), |c| c.to_string()),
            run.elapsed.as_secs_f64() * 1000.0,
            mb,
            if ok { "yes" } else { "NO" }
        );
    }
    println!(
        "{} cases; slowest {:.0} ms, largest {:.1} MB; {over} over a target",
        all.len(),
        worst_time.as_secs_f64() * 1000.0,
        worst_mem
    );
}
