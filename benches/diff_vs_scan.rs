//! Benchmark: `pinprobe diff BASE HEAD` against `pinprobe scan --rev HEAD` of the same tree, in
//! one run, printing the medians and the ratios (issue 30: a review should cost about one scan,
//! at most 1.3x), in wall-clock time and in CPU time (user + system of the process: what the
//! review costs whether or not its work overlaps).
//!
//! The tree: `PINPROBE_REAL_SDISTS=DIR` holding the unpacked `vllm-0.33.0` sdist (the real
//! tree; as for tests/cmake_real_sdists.rs), else the bundled demo tree with 3,000 filler
//! files beside it (real-shaped, not real). BASE is the tree as it is; two reviews of it:
//! - `bump`: HEAD moves FlashAttention's `GIT_TAG` to `506341a1` (vLLM 0.30.0's pin);
//! - `no pin change`: HEAD edits a file no CMake code reads (`README.md`), the other common
//!   pull request, where the CMake evaluation is shared between the revisions.
//!
//! Both are committed to a fresh git repository. Offline, no clones; the binary is copied
//! before timing.
//!
//! Run: `cargo bench --bench diff_vs_scan` (release build; needs `git`). `RUNS=N` sets the
//! number of timed runs of each (default 7, alternated); `PINPROBE_BIN=PATH` times another
//! build (an older one, for a before/after).

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

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-R")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(status.success());
}

/// The tree to review, and what it is.
fn tree(tmp: &Path) -> (PathBuf, String) {
    let repo = tmp.join("vllm");
    let real = std::env::var_os("PINPROBE_REAL_SDISTS")
        .map(|d| PathBuf::from(d).join("vllm-0.33.0"))
        .filter(|d| d.is_dir());
    let what = match &real {
        Some(dir) => {
            copy_dir(dir, &repo);
            format!("the real vLLM 0.33.0 sdist ({})", dir.display())
        }
        None => {
            copy_dir(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm"),
                &repo,
            );
            for i in 0..3_000 {
                let dir = repo.join(format!("vllm/filler/m{}", i / 100));
                std::fs::create_dir_all(&dir).expect("mkdir");
                std::fs::write(
                    dir.join(format!("f{i}.py")),
                    format!("def f{i}(x):\n    return x + {i}\n"),
                )
                .expect("write");
            }
            "the demo tree with 3,000 filler files (set PINPROBE_REAL_SDISTS=DIR for the real 0.33.0 tree)".to_string()
        }
    };
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let cmake = repo.join("cmake/external_projects/vllm_flash_attn.cmake");
    let text = std::fs::read_to_string(&cmake).expect("the FlashAttention cmake file");
    let re = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    let bumped = re.replace(&text, "GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5");
    let bumped = if bumped == text {
        // The demo pins the affected commit already: bump it to the fix.
        text.replace(
            "506341a143fcabd4bb79052a7605ada727d6b3f5",
            "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46",
        )
    } else {
        bumped.into_owned()
    };
    std::fs::write(&cmake, bumped).expect("write");
    git(&repo, &["commit", "-q", "-a", "-m", "bump"]);
    // The other common pull request: a change no CMake code reads.
    let readme = repo.join("README.md");
    let mut text = std::fs::read_to_string(&readme).unwrap_or_default();
    text.push_str("\nA documentation edit.\n");
    std::fs::write(&readme, text).expect("write");
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "docs"]);
    (repo, what)
}

/// The CPU time (user + system) of the children waited for so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given and reads nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "getrusage");
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// One timed run: (wall, CPU).
fn time(bin: &Path, dir: &Path, args: &[&str]) -> (Duration, Duration) {
    let cpu = children_cpu();
    let start = Instant::now();
    let status = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("PINPROBE_OFFLINE", "1")
        .env("PINPROBE_CACHE", dir.join("../cache"))
        .env_remove("VLLM_FLASH_ATTN_SRC_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("pinprobe runs");
    let elapsed = start.elapsed();
    assert!(
        matches!(status.code(), Some(0 | 1 | 3)),
        "pinprobe {args:?}: {status}"
    );
    (elapsed, children_cpu() - cpu)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
        .max(1);
    let tmp = tempfile::tempdir().expect("tempdir");
    let (repo, what) = tree(tmp.path());
    // A copy of the binary, so nothing rebuilds it under the timing.
    let bin = tmp.path().join("pinprobe");
    let source =
        std::env::var("PINPROBE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pinprobe").into());
    std::fs::copy(&source, &bin).expect("copy the binary");
    println!("diff_vs_scan on {what}, {runs} runs each, alternated, medians ({source}):");
    // (the review, its BASE, its HEAD)
    let reviews = [
        ("bump (GIT_TAG moved)", "HEAD~2", "HEAD~1"),
        ("no pin change (README.md edited)", "HEAD~1", "HEAD"),
    ];
    for (name, base, head) in reviews {
        let scan: &[&str] = &["scan", ".", "--rev", head, "--format", "json", "-q"];
        let diff: &[&str] = &["diff", base, head, "--format", "json", "-q"];
        // Warm the page cache and the report cache alike for both.
        time(&bin, &repo, scan);
        time(&bin, &repo, diff);
        let (mut scans, mut diffs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            scans.push(time(&bin, &repo, scan));
            diffs.push(time(&bin, &repo, diff));
        }
        let wall = |v: &[(Duration, Duration)]| median(v.iter().map(|t| t.0).collect());
        let cpu = |v: &[(Duration, Duration)]| median(v.iter().map(|t| t.1).collect());
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (sw, dw, sc, dc) = (wall(&scans), wall(&diffs), cpu(&scans), cpu(&diffs));
        println!("{name}:");
        println!(
            "  scan --rev {head:<6}     : {:>9.1} ms wall, {:>9.1} ms CPU",
            ms(sw),
            ms(sc)
        );
        println!(
            "  diff {base} {head:<6}   : {:>9.1} ms wall, {:>9.1} ms CPU",
            ms(dw),
            ms(dc)
        );
        println!(
            "  ratio diff/scan       : {:.2}x wall, {:.2}x CPU (target <= 1.30x; {} CPUs here)",
            dw.as_secs_f64() / sw.as_secs_f64(),
            dc.as_secs_f64() / sc.as_secs_f64(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
    }
}
