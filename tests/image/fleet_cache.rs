//! The content-addressed cache end to end: signature outcomes are computed once per distinct
//! file content (in one run and across runs), image layers are read once per digest (in one run
//! with parallel workers, and across runs) and registry manifests and configs fetched by digest
//! once, damaged entries of every kind are detected, dropped and rebuilt without changing a
//! verdict, and several processes sharing one cache at once agree.

use crate::common;
use crate::registry;

use common::Sm90Call;
use common::artifact::{vllm_files, with_dist_info, write_wheel};
use common::image::{self as build, Compression, Image, Layer, SITE};
#[allow(unused_imports)]
use common::require;
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

/// A scan with every cache but whole wheel reports (`--rescan`): what these tests count is
/// the work a scan does.
fn scan(cache: &Path, targets: &[String]) -> Run {
    scan_with(cache, targets, &["--rescan"])
}

fn scan_with(cache: &Path, targets: &[String], extra: &[&str]) -> Run {
    let mut args = vec!["scan".to_string(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(targets.iter().cloned());
    Pinprobe::new(&args)
        .cache(cache)
        .env("PINPROBE_STATS", "1")
        .run()
}

/// The two counts of the `PINPROBE_STATS` line that starts with `what`.
fn stats(run: &Run, what: &str) -> (u64, u64) {
    let prefix = format!("pinprobe: stats: {what}: ");
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no `{what}` stats line: {}", run.stderr));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect();
    (nums[0], nums[1])
}

/// `(computed, reused)` signature outcomes.
fn outcomes(run: &Run) -> (u64, u64) {
    stats(run, "signature outcomes")
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    entries_under(&cache.join("cas"))
        .into_iter()
        .filter(|p| !p.starts_with(cache.join("cas/.locks")))
        .collect()
}

fn entries_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
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

/// Three images on one shared base layer (the vLLM install), each with its own top layer.
fn shared_base_images(dir: &Path) -> Vec<String> {
    let install = build::vllm_install(
        SITE,
        "0.30.0",
        &common::block_info_new(),
        &common::fwd_sm90(Sm90Call::Buggy),
    );
    let base = Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip)
        .files(install)
        .file("etc/os-release", "ID=debian\n")
        .symlink("opt/venv", "/usr/local");
    let built: Vec<(String, build::Built)> = (0..3)
        .map(|i| {
            let top = Layer::new(&format!("COPY app{i} /app"), Compression::Zstd)
                .file("app/main.py", format!("print({i})\n"));
            (
                format!("img{i}"),
                Image::new(vec![base.clone(), top]).build(),
            )
        })
        .collect();
    let tagged: Vec<(&str, &build::Built)> = built.iter().map(|(t, b)| (t.as_str(), b)).collect();
    build::write_oci(dir, &tagged);
    built
        .iter()
        .map(|(tag, _)| format!("oci:{}:{tag}", dir.display()))
        .collect()
}

fn scan_images(cache: &Path, targets: &[String], extra: &[&str]) -> Run {
    let mut args = vec!["scan".to_string(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(targets.iter().cloned());
    Pinprobe::new(&args).cache(cache).run()
}

/// The report without what may differ between a cold and a warm cache: the bytes read and
/// whether each layer came from the cache.
fn without_reads(run: &Run) -> serde_json::Value {
    let mut json = run.json();
    for t in json["targets"].as_array_mut().expect("targets") {
        let image = t["image"].as_object_mut().expect("an image object");
        image.remove("bytes_read");
        for l in image["layers"].as_array_mut().expect("layers") {
            l.as_object_mut().expect("layer").remove("cached");
        }
    }
    json
}

/// Per target: (bytes read, each layer's `cached`).
fn reads(run: &Run) -> Vec<(u64, Vec<bool>)> {
    run.json()["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| {
            let image = &t["image"];
            let cached = image["layers"]
                .as_array()
                .expect("layers")
                .iter()
                .map(|l| l["cached"].as_bool().unwrap_or(false))
                .collect();
            (image["bytes_read"].as_u64().expect("bytes_read"), cached)
        })
        .collect()
}

/// An entry as the store writes it, around `payload` (its checksum valid).
fn checked_entry(payload: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(payload));
    let mut entry = format!("pinprobe-cache 1\n{digest} {}\n", payload.len()).into_bytes();
    entry.extend_from_slice(payload);
    entry
}

#[test]
fn a_shared_layer_is_read_once_and_a_warm_rescan_reads_no_layer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let targets = shared_base_images(&tmp.path().join("layout"));
    // Three workers race for the base layer: one reads it, the others wait and take its extract.
    let cold = scan_images(&cache, &targets, &["--jobs", "3"]);
    assert_eq!(cold.code, 1, "{}", cold.stderr);
    cold.assert_fa4_affected();
    let first = reads(&cold);
    let base_reads = first.iter().filter(|(_, c)| !c[0]).count();
    assert_eq!(base_reads, 1, "the base layer read once: {first:?}");
    assert!(first.iter().all(|(_, c)| !c[1]), "each top layer read");
    // The bytes read add up to the distinct layers' size.
    let layout = tmp.path().join("layout");
    let json = cold.json();
    let mut distinct = std::collections::BTreeMap::new();
    for t in json["targets"].as_array().expect("targets") {
        for l in t["image"]["layers"].as_array().expect("layers") {
            distinct.insert(l["digest"].to_string(), l["size"].as_u64().expect("size"));
        }
    }
    let total: u64 = first.iter().map(|(b, _)| b).sum();
    assert_eq!(total, distinct.values().sum::<u64>(), "{layout:?}");
    assert!(cache_info(&cache).contains("layer: 4 entries"));
    // A warm re-scan reads no layer and reports the same, byte for byte, but for the reads.
    let warm = scan_images(&cache, &targets, &["--jobs", "3"]);
    assert_eq!(warm.code, 1, "{}", warm.stderr);
    assert!(
        reads(&warm)
            .iter()
            .all(|(b, c)| *b == 0 && c.iter().all(|c| *c)),
        "{:?}",
        reads(&warm)
    );
    assert_eq!(without_reads(&warm), without_reads(&cold));
    // Without the cache's reads the report is the private-cache answer.
    let private = scan_images(&tmp.path().join("private"), &targets, &["--jobs", "1"]);
    assert_eq!(without_reads(&private), without_reads(&cold));
}

#[test]
fn damaged_layer_extracts_are_dropped_and_the_layers_read_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let targets = shared_base_images(&tmp.path().join("layout"));
    // A wheel scan leaves a signature entry: a valid entry of the wrong kind.
    let wheel = wheel(tmp.path(), "w", "0.30.0", Sm90Call::Buggy);
    assert_eq!(scan(&cache, &[wheel]).code, 1);
    let signature = entries_under(&cache.join("cas/signature"))
        .into_iter()
        .next()
        .expect("a signature entry");
    let signature = std::fs::read(signature).expect("read");
    let clean = scan_images(&cache, &targets, &["--jobs", "1"]);
    assert_eq!(clean.code, 1, "{}", clean.stderr);
    let cold_reads = reads(&clean);
    let layer_entries = || entries_under(&cache.join("cas/layer"));
    assert_eq!(layer_entries().len(), 4);
    type Damage = Box<dyn Fn(&[Vec<u8>], usize) -> Vec<u8>>;
    let damages: Vec<(&str, Damage)> = vec![
        (
            "truncated",
            Box::new(|all, i| all[i][..all[i].len() / 2].to_vec()),
        ),
        (
            "one bit flipped",
            Box::new(|all, i| {
                let mut b = all[i].clone();
                let at = b.len() - 3;
                b[at] ^= 0x04;
                b
            }),
        ),
        ("garbage", Box::new(|_, _| b"garbage\n\x00\xff".to_vec())),
        (
            "another layer's valid extract",
            Box::new(|all, i| all[(i + 1) % all.len()].clone()),
        ),
        (
            "a valid entry of another kind",
            Box::new(move |_, _| signature.clone()),
        ),
        (
            "a valid entry whose payload is no extract",
            Box::new(|_, _| checked_entry(b"{\"digest\":null}")),
        ),
    ];
    for (what, damage) in &damages {
        let files = layer_entries();
        let originals: Vec<Vec<u8>> = files
            .iter()
            .map(|f| std::fs::read(f).expect("read"))
            .collect();
        for (i, f) in files.iter().enumerate() {
            std::fs::write(f, damage(&originals, i)).expect("damage");
        }
        let rerun = scan_images(&cache, &targets, &["--jobs", "1"]);
        assert_eq!(rerun.code, 1, "{what}: {}", rerun.stderr);
        assert_eq!(without_reads(&rerun), without_reads(&clean), "{what}");
        assert_eq!(reads(&rerun), cold_reads, "{what}: every layer read again");
        assert!(
            cache_info(&cache).contains("failing their check: 0"),
            "{what}"
        );
        assert_eq!(layer_entries().len(), 4, "{what}: rebuilt");
        let rebuilt: Vec<Vec<u8>> = files
            .iter()
            .map(|f| std::fs::read(f).expect("read"))
            .collect();
        assert_eq!(rebuilt, originals, "{what}: the same entries rebuilt");
    }
}

#[test]
fn several_processes_scanning_images_that_share_layers_agree() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let targets = shared_base_images(&tmp.path().join("layout"));
    let reference = scan_images(&tmp.path().join("private"), &targets, &["--jobs", "1"]);
    assert_eq!(reference.code, 1, "{}", reference.stderr);
    for round in 0..2 {
        let runs: Vec<Run> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let mut mine = targets.clone();
                    mine.rotate_left(i % targets.len());
                    let cache = &cache;
                    s.spawn(move || (mine.clone(), scan_images(cache, &mine, &["--jobs", "2"])))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .map(|(mine, run)| {
                    assert_eq!(run.code, 1, "{}", run.stderr);
                    let got = without_reads(&run);
                    let want = without_reads(&reference);
                    for t in got["targets"].as_array().expect("targets") {
                        let w = want["targets"]
                            .as_array()
                            .expect("targets")
                            .iter()
                            .find(|w| w["target"] == t["target"])
                            .expect("same target");
                        assert_eq!(t, w, "round {round}: {mine:?}");
                    }
                    run
                })
                .collect()
        });
        // Processes wait on each other's layers: across all of them, each distinct layer read
        // once in the first round, none in the second.
        let read: usize = runs
            .iter()
            .flat_map(reads)
            .map(|(_, c)| c.iter().filter(|c| !**c).count())
            .sum();
        assert_eq!(read, if round == 0 { 4 } else { 0 }, "round {round}");
        assert!(cache_info(&cache).contains("failing their check: 0"));
        assert_eq!(
            entries_under(&cache.join("cas/layer")).len(),
            4,
            "no stray files"
        );
    }
}

#[test]
fn registry_manifests_and_configs_by_digest_come_from_the_cache() {
    if !registry::available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let layout = tmp.path().join("layout");
    shared_base_images(&layout);
    let reg = registry::Registry::start(None);
    reg.push(&layout, "img0", "team/vllm", None);
    let by_tag = reg.reference("team/vllm", "img0");
    let host = reg.host.clone();
    let flags = ["--insecure-registry", host.as_str()];
    let cold = scan_images(&cache, std::slice::from_ref(&by_tag), &flags);
    assert_eq!(cold.code, 1, "{}", cold.stderr);
    let manifest = cold.json()["targets"][0]["image"]["manifest"]
        .as_str()
        .expect("manifest digest")
        .to_string();
    let by_digest = format!("docker://{host}/team/vllm@{manifest}");
    let warm = scan_images(&cache, std::slice::from_ref(&by_digest), &flags);
    assert_eq!(warm.code, 1, "{}", warm.stderr);
    assert_eq!(reads(&warm), vec![(0, vec![true, true])]);
    // With the registry gone, the image by digest is still scanned whole from the cache; the
    // tag is asked of the registry every time (tags move).
    drop(reg);
    let offline = scan_images(&cache, std::slice::from_ref(&by_digest), &flags);
    assert_eq!(offline.code, 1, "{}", offline.stderr);
    assert_eq!(
        offline.json()["targets"][0]["findings"],
        cold.json()["targets"][0]["findings"]
    );
    let tag = scan_images(&cache, std::slice::from_ref(&by_tag), &flags);
    assert_eq!(tag.code, 2, "{}", tag.stdout);
    // A blob entry is checked against its digest on every read: swapped (each a valid entry
    // of the other blob), it is not trusted, and with the registry gone the scan fails.
    let blobs = entries_under(&cache.join("cas/blob"));
    assert_eq!(blobs.len(), 2, "the manifest and the config");
    let a = std::fs::read(&blobs[0]).expect("read");
    let b = std::fs::read(&blobs[1]).expect("read");
    std::fs::write(&blobs[0], &b).expect("swap");
    std::fs::write(&blobs[1], &a).expect("swap");
    let swapped = scan_images(&cache, std::slice::from_ref(&by_digest), &flags);
    assert_eq!(swapped.code, 2, "{}", swapped.stdout);
    // The manifest, read first, is dropped (the config was never reached).
    assert_eq!(entries_under(&cache.join("cas/blob")).len(), 1, "dropped");
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

/// `(read, reused)` library symbol tables.
fn libraries(run: &Run) -> (u64, u64) {
    stats(run, "library symbol tables")
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

/// Each finding's (rule, component, status) for the target `target` of a JSON report.
fn verdicts(run: &Run, target: &str) -> Vec<(String, String, String)> {
    let report = run.json();
    let t = report["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["target"] == target)
        .unwrap_or_else(|| panic!("no target {target}: {report:#}"));
    t["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("component"), s("status"))
        })
        .collect()
}

/// `wheel reports reused: N`.
fn reports_reused(run: &Run) -> u64 {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("pinprobe: stats: wheel reports reused: "))
        .unwrap_or_else(|| panic!("no report stats line: {}", run.stderr));
    line.trim().parse().expect("a count")
}

fn report_entries(cache: &Path) -> Vec<PathBuf> {
    entries_under(&cache.join("cas/report"))
}

#[test]
fn an_unchanged_wheel_is_not_scanned_again_and_a_changed_one_always_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let fixed = wheel(tmp.path(), "f", "0.31.0", Sm90Call::Fixed);
    let buggy = wheel(tmp.path(), "b", "0.31.0", Sm90Call::Buggy);
    let both = vec![fixed.clone(), buggy.clone()];
    let reference = scan(&tmp.path().join("private"), &both);
    assert_eq!(reference.code, 1, "{}", reference.stderr);
    assert!(
        verdicts(&reference, &buggy)
            .iter()
            .any(|(_, _, s)| s == "affected")
    );
    assert!(
        !verdicts(&reference, &fixed)
            .iter()
            .any(|(_, _, s)| s == "affected")
    );

    // Just written: a later write within the file system's timestamp tick could leave the
    // stamp as it is, so no report is kept yet.
    let fresh = scan_with(&cache, &both, &[]);
    assert_eq!(fresh.stdout, reference.stdout);
    assert_eq!(reports_reused(&fresh), 0);
    assert!(
        report_entries(&cache).is_empty(),
        "{:?}",
        report_entries(&cache)
    );

    // Settled: kept, then reused, the same report byte for byte, and no signature evaluated.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let first = scan_with(&cache, &both, &[]);
    assert_eq!(first.stdout, reference.stdout);
    assert_eq!(reports_reused(&first), 0);
    assert_eq!(report_entries(&cache).len(), 2);
    let warm = scan_with(&cache, &both, &[]);
    assert_eq!(warm.code, 1);
    assert_eq!(warm.stdout, reference.stdout);
    assert_eq!(reports_reused(&warm), 2);
    assert_eq!(outcomes(&warm), (0, 0), "nothing scanned");
    // --rescan scans them (from the signature cache) and says the same.
    let rescan = scan_with(&cache, &both, &["--rescan"]);
    assert_eq!(rescan.stdout, reference.stdout);
    assert_eq!(reports_reused(&rescan), 0);
    assert_eq!(outcomes(&rescan).0, 0);

    // A damaged entry is dropped and the wheel scanned again.
    for entry in report_entries(&cache) {
        let bytes = std::fs::read(&entry).expect("read");
        std::fs::write(&entry, &bytes[..bytes.len() - 3]).expect("truncate");
    }
    let damaged = scan_with(&cache, &both, &[]);
    assert_eq!(damaged.stdout, reference.stdout);
    assert_eq!(reports_reused(&damaged), 0);

    // The clean wheel's file rewritten in place with the buggy wheel's bytes, its modification
    // time set back: the same path, size and mtime, but not the same file any more.
    let mtime = std::fs::metadata(&fixed)
        .and_then(|m| m.modified())
        .expect("mtime");
    let sizes = (
        std::fs::metadata(&fixed).expect("meta").len(),
        std::fs::metadata(&buggy).expect("meta").len(),
    );
    std::fs::write(&fixed, std::fs::read(&buggy).expect("read")).expect("rewrite");
    std::fs::File::options()
        .write(true)
        .open(&fixed)
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
    let changed = scan_with(&cache, &both, &[]);
    assert_eq!(changed.code, 1);
    assert_eq!(
        reports_reused(&changed),
        1,
        "only the untouched wheel is reused (sizes {sizes:?})"
    );
    let now_buggy = verdicts(&changed, &fixed);
    assert_eq!(
        now_buggy,
        verdicts(&reference, &buggy),
        "{}",
        changed.stdout
    );

    // Replaced by another file (a new inode) with the clean bytes again: scanned, clean.
    let rebuilt = wheel(tmp.path(), "g", "0.31.0", Sm90Call::Fixed);
    std::fs::rename(&rebuilt, &fixed).expect("replace");
    let replaced = scan_with(&cache, &both, &[]);
    assert_eq!(reports_reused(&replaced), 1);
    assert_eq!(verdicts(&replaced, &fixed), verdicts(&reference, &fixed));
}
