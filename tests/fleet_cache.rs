//! The content-addressed cache end to end: signature outcomes are computed once per distinct
//! file content (in one run and across runs), damaged entries are detected, dropped and rebuilt
//! without changing a verdict, and several processes sharing one cache at once agree.

mod common;

use common::Sm90Call;
use common::artifact::{vllm_files, with_dist_info, write_wheel};
use common::run::{Pinprobe, Run};
use std::path::{Path, PathBuf};

fn wheel(dir: &Path, name: &str, version: &str, call: Sm90Call) -> String {
    let path = dir.join(format!(
        "{name}-vllm-{version}-cp38-abi3-manylinux1_x86_64.whl"
    ));
    write_wheel(
        &path,
        &with_dist_info("vllm", version, vllm_files(version, call)),
    );
    path.display().to_string()
}

fn scan(cache: &Path, targets: &[String]) -> Run {
    let mut args = vec!["scan".to_string(), "--format".into(), "json".into()];
    args.extend(targets.iter().cloned());
    Pinprobe::new(&args)
        .cache(cache)
        .env("PINPROBE_STATS", "1")
        .run()
}

/// `(computed, reused)` from the stats line.
fn outcomes(run: &Run) -> (u64, u64) {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("pinprobe: stats: signature outcomes: "))
        .unwrap_or_else(|| panic!("no stats line: {}", run.stderr));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect();
    (nums[0], nums[1])
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![cache.join("cas")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn cache_info(cache: &Path) -> String {
    let run = Pinprobe::new(&["cache", "info", "--cache", &cache.display().to_string()]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn each_distinct_content_is_parsed_once_across_targets_and_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    // Five wheels, two distinct FlashAttention contents (the version file differs, which no
    // signature reads).
    let targets: Vec<String> = (0..5)
        .map(|i| {
            let call = if i % 2 == 0 {
                Sm90Call::Buggy
            } else {
                Sm90Call::Fixed
            };
            wheel(tmp.path(), &format!("w{i}"), "0.30.0", call)
        })
        .collect();
    let first = scan(&cache, &targets);
    assert_eq!(first.code, 1, "{}", first.stderr);
    let (computed, reused) = outcomes(&first);
    // Two contents: one outcome each for the one signature rule (racing workers may both
    // compute the same key; never more than one per target).
    assert!((2..=5).contains(&computed), "computed {computed}");
    assert_eq!(computed + reused, 5);
    assert_eq!(entries(&cache).len(), 2, "{:?}", entries(&cache));
    // A re-scan computes nothing and says the same.
    let again = scan(&cache, &targets);
    assert_eq!(outcomes(&again), (0, 5));
    assert_eq!(again.stdout, first.stdout);
    assert!(cache_info(&cache).contains("signature: 2 entries"));
}

#[test]
fn damaged_entries_are_dropped_and_rebuilt_never_trusted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let buggy = wheel(tmp.path(), "b", "0.33.0", Sm90Call::Buggy);
    let fixed = wheel(tmp.path(), "f", "0.33.0", Sm90Call::Fixed);
    let targets = vec![buggy.clone(), fixed.clone()];
    let clean = scan(&cache, &targets);
    assert_eq!(clean.code, 1, "{}", clean.stderr);
    let files = entries(&cache);
    assert_eq!(files.len(), 2);
    // Swap the two entries' payloads' verdicts by hand-editing one byte, truncate the other:
    // neither passes its check, so neither may decide anything.
    let mut altered = std::fs::read(&files[0]).expect("read");
    let last = altered.len() - 2;
    altered[last] ^= 0x20;
    std::fs::write(&files[0], &altered).expect("write");
    let bytes = std::fs::read(&files[1]).expect("read");
    std::fs::write(&files[1], &bytes[..bytes.len() / 2]).expect("truncate");
    assert!(cache_info(&cache).contains("failing their check: 2"));
    let rerun = scan(&cache, &targets);
    assert_eq!(rerun.stdout, clean.stdout, "the same verdicts");
    assert_eq!(outcomes(&rerun), (2, 0), "both recomputed");
    assert!(cache_info(&cache).contains("failing their check: 0"));
    assert_eq!(entries(&cache).len(), 2, "rebuilt");
    // A payload that passes its check but is not an outcome is a miss too.
    for file in entries(&cache) {
        let payload = b"not json";
        let digest = {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(payload))
        };
        let mut entry = format!("pinprobe-cache 1\n{digest} {}\n", payload.len()).into_bytes();
        entry.extend_from_slice(payload);
        std::fs::write(file, entry).expect("write");
    }
    let rerun = scan(&cache, &targets);
    assert_eq!(rerun.stdout, clean.stdout);
    assert_eq!(outcomes(&rerun), (2, 0));
}

#[test]
fn several_processes_share_one_cache_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let targets: Vec<String> = (0..4)
        .map(|i| {
            let call = [Sm90Call::Buggy, Sm90Call::Fixed, Sm90Call::LiteralFalse][i % 3];
            wheel(tmp.path(), &format!("w{i}"), "0.31.0", call)
        })
        .collect();
    // The answer without any cache to share.
    let reference = scan(&tmp.path().join("private"), &targets);
    assert_eq!(reference.code, 1, "{}", reference.stderr);
    for round in 0..3 {
        let runs: Vec<Run> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|i| {
                    // Each process sees the targets in its own order.
                    let mut mine = targets.clone();
                    mine.rotate_left(i % targets.len());
                    let cache = &cache;
                    s.spawn(move || (mine.clone(), scan(cache, &mine)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    let (mine, run) = h.join().expect("thread");
                    // Same verdicts as the reference for each target.
                    let got = run.json();
                    let want = reference.json();
                    for t in got["targets"].as_array().expect("targets") {
                        let w = want["targets"]
                            .as_array()
                            .expect("targets")
                            .iter()
                            .find(|w| w["target"] == t["target"])
                            .expect("same target");
                        assert_eq!(t["findings"], w["findings"], "round {round}: {mine:?}");
                    }
                    run
                })
                .collect()
        });
        assert!(runs.iter().all(|r| r.code == 1));
        if round > 0 {
            // A warm shared cache: no process computes anything.
            for run in &runs {
                assert_eq!(outcomes(run).0, 0, "round {round}: {}", run.stderr);
            }
        }
        assert!(cache_info(&cache).contains("failing their check: 0"));
        assert_eq!(entries(&cache).len(), 3, "no stray temporary files");
    }
}

const FA3: &str = "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so";
/// PINPROBE-2026-0007: decided by whether the FA3 library leaves the sm80 kernel undefined.
const R7: &str = "PINPROBE-2026-0007";

/// A vLLM 0.30.0 wheel shipping `library` as its FA3 library, with RECORD written for
/// `recorded` (the same bytes for an honest build).
fn wheel_with_library(path: &Path, recorded: Vec<u8>, library: Vec<u8>) -> String {
    let mut files = vllm_files("0.30.0", Sm90Call::Fixed);
    files.push((FA3.into(), recorded));
    let mut files = with_dist_info("vllm", "0.30.0", files);
    for (name, bytes) in files.iter_mut() {
        if name == FA3 {
            *bytes = library.clone();
        }
    }
    write_wheel(path, &files);
    path.display().to_string()
}

/// `(read, reused)` from the library stats line.
fn libraries(run: &Run) -> (u64, u64) {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("pinprobe: stats: library symbol tables: "))
        .unwrap_or_else(|| panic!("no library stats line: {}", run.stderr));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect();
    (nums[0], nums[1])
}

fn r7(run: &Run) -> String {
    let report = run.json();
    report["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["rule"] == R7 && f["component"] == "flash-attention")
        .and_then(|f| f["status"].as_str())
        .unwrap_or_else(|| panic!("no {R7} finding: {report:#}"))
        .to_string()
}

#[test]
fn a_library_changed_inside_the_wheel_is_never_served_its_cached_symbols() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let clean = common::elf::fa3_library(common::elf::SM80, common::elf::Sym::Defined);
    let buggy = common::elf::fa3_library(common::elf::SM80, common::elf::Sym::Undefined);
    let weak = common::elf::fa3_library(common::elf::SM80, common::elf::Sym::Weak);
    assert_eq!(clean.len(), weak.len(), "the swap below keeps every size");
    let name = "vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl";
    let dir = |d: &str| {
        let p = tmp.path().join(d);
        std::fs::create_dir_all(&p).unwrap();
        p.join(name)
    };
    // The honest wheel: read once, then served from the cache with the same verdict.
    let honest = wheel_with_library(&dir("honest"), clean.clone(), clean.clone());
    let first = scan(&cache, std::slice::from_ref(&honest));
    assert_eq!(r7(&first), "not_affected", "{}", first.stderr);
    assert_eq!(libraries(&first), (1, 0));
    let again = scan(&cache, std::slice::from_ref(&honest));
    assert_eq!(r7(&again), "not_affected");
    assert_eq!(libraries(&again), (0, 1), "a re-scan reads no library");
    assert_eq!(first.json()["targets"], again.json()["targets"]);
    // Rebuilt with the bug (RECORD and the zip entry both new): read, affected.
    let rebuilt = wheel_with_library(&dir("rebuilt"), buggy.clone(), buggy);
    let run = scan(&cache, &[rebuilt]);
    assert_eq!(libraries(&run), (1, 0));
    assert_eq!(r7(&run), "affected");
    // Swapped after the build, RECORD left as for the clean library and every size the same:
    // only the zip entry's CRC-32 differs. Read again, and RECORD's mismatch is reported.
    let swapped = wheel_with_library(&dir("swapped"), clean.clone(), weak);
    let run = scan(&cache, std::slice::from_ref(&swapped));
    assert_eq!(libraries(&run), (1, 0), "the changed CRC-32 is a miss");
    assert_eq!(r7(&run), "unknown");
    assert!(
        run.stdout.contains("was modified after install"),
        "{}",
        run.stdout
    );
    // And the swapped-in library is never remembered: the next scan reads it again.
    let run = scan(&cache, &[swapped]);
    assert_eq!(libraries(&run), (1, 0));
    assert_eq!(r7(&run), "unknown");
}
