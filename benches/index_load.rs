//! Benchmark: the fingerprint index of a real FlashAttention clone in the binary format next to
//! the same index in the JSON format earlier versions wrote, in one run: file size, the load in
//! process (median of `fingerprint::load`), and whole processes reading it (`index list`, and a
//! `scan` of a wheel when one is given), each with its ratio.
//!
//! Opt-in (nothing third-party is committed):
//!   PINPROBE_BENCH_FA_CLONE=/path/to/flash-attention \
//!   [PINPROBE_BENCH_WHEEL=/path/to/vllm-0.30.0-....whl] cargo bench --bench index_load

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use pinprobe::pin::fingerprint::{self, Format, Index};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LOADS: usize = 51;
const RUNS: usize = 15;

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// The median wall time of `RUNS` runs of `make()` (after one not counted).
fn process_time(mut make: impl FnMut() -> Command) -> Duration {
    let _ = make().output();
    median(
        (0..RUNS)
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
            .collect(),
    )
}

fn load_time(path: &Path) -> Duration {
    median(
        (0..LOADS)
            .map(|_| {
                let start = Instant::now();
                let index = fingerprint::load(path).expect("loads");
                let took = start.elapsed();
                std::hint::black_box(index);
                took
            })
            .collect(),
    )
}

/// `index` as earlier versions wrote it (`serde_json::to_vec` of format 1).
fn legacy_json(index: &Index) -> Vec<u8> {
    let states: Vec<serde_json::Value> = index
        .states
        .iter()
        .map(|s| {
            let files: serde_json::Map<String, serde_json::Value> = s
                .files
                .iter()
                .map(|(n, blob)| (index.names[*n as usize].clone(), blob.to_string().into()))
                .collect();
            serde_json::json!({"tree": s.tree.to_string(), "files": files})
        })
        .collect();
    let commits: Vec<serde_json::Value> = index
        .commits
        .iter()
        .map(|c| serde_json::json!([c.id.to_string(), c.time, c.state]))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "format": 1,
        "component": index.component,
        "source": index.source,
        "states": states,
        "commits": commits,
    }))
    .expect("serialises")
}

fn main() {
    let Some(clone) = std::env::var_os("PINPROBE_BENCH_FA_CLONE") else {
        println!("skipped: set PINPROBE_BENCH_FA_CLONE=PATH (a flash-attention clone)");
        return;
    };
    let wheel = std::env::var_os("PINPROBE_BENCH_WHEEL");
    let bin = env!("CARGO_BIN_EXE_pinprobe");
    let tmp = tempfile::tempdir().expect("tempdir");
    let binary_cache = tmp.path().join("binary");
    let json_cache = tmp.path().join("json");
    let mut repo = std::ffi::OsString::from("flash-attention=");
    repo.push(&clone);
    let built = Command::new(bin)
        .args(["index", "build", "--cache"])
        .arg(&binary_cache)
        .arg("--repo")
        .arg(&repo)
        .output()
        .expect("index build runs");
    assert!(built.status.success(), "{built:?}");
    let binary = fingerprint::path_for(&binary_cache, "flash-attention");
    let json = fingerprint::legacy_path_for(&json_cache, "flash-attention");
    let index = fingerprint::load(&binary).expect("loads");
    std::fs::create_dir_all(json.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(&json, legacy_json(&index)).expect("write");
    let from_json = fingerprint::load(&json).expect("loads");
    assert_eq!(from_json.format, Format::LegacyJson);
    assert_eq!(
        Index {
            format: Format::Binary,
            checksum: index.checksum,
            ..from_json
        },
        index,
        "the same index in both formats"
    );

    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "index: {} commits, {} states, {} file names",
        index.commits.len(),
        index.states.len(),
        index.names.len()
    );
    let (bs, js) = (size(&binary), size(&json));
    println!(
        "file size:   binary {bs:>9} B   JSON {js:>9} B   ratio {:.2}",
        bs as f64 / js as f64
    );
    let (bl, jl) = (load_time(&binary), load_time(&json));
    println!(
        "load:        binary {:>8.2} ms   JSON {:>8.2} ms   ratio {:.2}",
        ms(bl),
        ms(jl),
        bl.as_secs_f64() / jl.as_secs_f64()
    );
    let compare = |what: &str, args: &[&std::ffi::OsStr]| {
        let run = |cache: &Path| {
            let mut c = Command::new(bin);
            c.args(args)
                .arg("--cache")
                .arg(cache)
                .env("PINPROBE_OFFLINE", "1");
            c
        };
        let b = process_time(|| run(&binary_cache));
        let j = process_time(|| run(&json_cache));
        println!(
            "{what:<12} binary {:>8.2} ms   JSON {:>8.2} ms   ratio {:.2}",
            ms(b),
            ms(j),
            b.as_secs_f64() / j.as_secs_f64()
        );
    };
    compare("index list:", &["index".as_ref(), "list".as_ref()]);
    if let Some(wheel) = &wheel {
        compare("scan wheel:", &["scan".as_ref(), wheel.as_os_str()]);
    }
}
