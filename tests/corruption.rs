//! Property: random corruptions of an affected target never give a clean verdict. A corrupted
//! source tree (its FlashAttention pin file), wheel or image may become an error (2), unknown
//! (3) or stay affected (1), but never exit 0 with PINPROBE-2026-0001 `not_affected`.
//!
//! Cases come from a fixed seed (`PINPROBE_CORRUPTION_SEED` to try others) and are bounded
//! (`PINPROBE_CORRUPTION_CASES`, default 64 per target) to keep `cargo test` quick. A failing
//! case prints the seed and the corruption so it can be replayed.

mod common;

use common::image as build;

use build::{Compression, Image, Layer, SITE};
use clap::Parser;
use common::artifact::{vllm_files, with_dist_info, write_wheel};
use common::{Sm90Call, block_info_new, fwd_sm90};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::{Path, PathBuf};

const RULE: &str = "PINPROBE-2026-0001";

fn cases() -> usize {
    std::env::var("PINPROBE_CORRUPTION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn seed() -> u64 {
    std::env::var("PINPROBE_CORRUPTION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0006)
}

/// One corruption of a byte string, described for replay.
fn corrupt(bytes: &mut Vec<u8>, rng: &mut StdRng) -> String {
    if bytes.is_empty() {
        bytes.push(rng.random());
        return "insert into empty".into();
    }
    let at = rng.random_range(0..bytes.len());
    match rng.random_range(0..6) {
        0 => {
            let bit = rng.random_range(0..8);
            bytes[at] ^= 1 << bit;
            format!("flip bit {bit} at {at}")
        }
        1 => {
            bytes.truncate(at);
            format!("truncate at {at}")
        }
        2 => {
            let n = rng.random_range(1..16);
            let junk: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            bytes.splice(at..at, junk);
            format!("insert {n} random bytes at {at}")
        }
        3 => {
            let end = (at + rng.random_range(1..64)).min(bytes.len());
            for b in &mut bytes[at..end] {
                *b = rng.random();
            }
            format!("overwrite {at}..{end} with random bytes")
        }
        4 => {
            let end = (at + rng.random_range(1..64)).min(bytes.len());
            bytes.drain(at..end);
            format!("delete {at}..{end}")
        }
        _ => {
            let v = rng.random();
            bytes[at] = v;
            format!("set byte {at} to {v:#04x}")
        }
    }
}

/// Scan through the CLI entry point (in process): the exit code, and the FA4 rule's statuses.
fn scan(target: &Path, cache: &Path) -> (i32, Vec<String>) {
    let args = [
        "pinprobe",
        "scan",
        "--format",
        "json",
        "--cache",
        cache.to_str().unwrap(),
        target.to_str().unwrap(),
    ];
    let cli = pinprobe::cli::Cli::try_parse_from(args).expect("args parse");
    let mut out = Vec::new();
    match pinprobe::cli::run(cli, &mut out) {
        Err(_) => (2, Vec::new()),
        Ok(exit) => {
            let report: Value = serde_json::from_slice(&out).expect("json report");
            let statuses = report["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| t["findings"].as_array().into_iter().flatten())
                .filter(|f| f["rule"] == RULE)
                .map(|f| f["status"].as_str().unwrap_or("").to_string())
                .collect();
            (exit.code(), statuses)
        }
    }
}

/// Run `cases()` corruptions of `file` (restored from `original` each time) and check the
/// property after each; returns the tally of exit codes.
fn check(name: &str, target: &Path, file: &Path, original: &[u8], stream: u64) -> [usize; 4] {
    let tmp = tempfile::tempdir().unwrap();
    let (code, statuses) = scan(target, tmp.path());
    assert_eq!(code, 1, "{name}: the uncorrupted target must be affected");
    assert!(
        statuses.iter().any(|s| s == "affected"),
        "{name}: {statuses:?}"
    );
    let mut rng = StdRng::seed_from_u64(seed() ^ stream);
    let mut tally = [0usize; 4];
    for i in 0..cases() {
        let mut bytes = original.to_vec();
        let mut what = vec![corrupt(&mut bytes, &mut rng)];
        if rng.random_bool(0.25) {
            what.push(corrupt(&mut bytes, &mut rng));
        }
        std::fs::write(file, &bytes).unwrap();
        let (code, statuses) = scan(target, tmp.path());
        let clean =
            code == 0 && (statuses.is_empty() || statuses.iter().all(|s| s == "not_affected"));
        assert!(
            !clean,
            "{name} case {i} (seed {}): `{}` gave exit 0 with {RULE} {statuses:?}",
            seed(),
            what.join(", ")
        );
        tally[code.clamp(0, 3) as usize] += 1;
    }
    std::fs::write(file, original).unwrap();
    eprintln!(
        "{name}: {} corruptions, exit codes 0/1/2/3 = {tally:?}",
        cases()
    );
    tally
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_corrupted_pin_file_is_never_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("vllm");
    std::fs::create_dir_all(&tree).unwrap();
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm"),
        &tree,
    );
    let file = tree.join("cmake/external_projects/vllm_flash_attn.cmake");
    let original = std::fs::read(&file).unwrap();
    check("source tree", &tree, &file, &original, 1);
}

#[test]
fn a_corrupted_wheel_is_never_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let whl = tmp
        .path()
        .join("vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    write_wheel(
        &whl,
        &with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy)),
    );
    let original = std::fs::read(&whl).unwrap();
    check("wheel", &whl, &whl.clone(), &original, 2);
}

#[test]
fn a_corrupted_image_is_never_clean() {
    let image = Image::new(vec![
        Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
        Layer::new("RUN pip install vllm==0.30.0", Compression::None).files(build::vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        )),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    // docker save, OCI form: blobs named by digest, the vLLM layer stored uncompressed.
    let oci = tmp.path().join("oci.tar");
    build::write_docker_save_oci(&oci, &image);
    let original = std::fs::read(&oci).unwrap();
    check(
        "image (docker save, OCI form)",
        &oci,
        &oci.clone(),
        &original,
        3,
    );
    // docker save, legacy form: layers checked against the config's diff ids only.
    let legacy = tmp.path().join("legacy.tar");
    build::write_docker_save_legacy(&legacy, &image.build(), false);
    let original = std::fs::read(&legacy).unwrap();
    check(
        "image (docker save, legacy)",
        &legacy,
        &legacy.clone(),
        &original,
        4,
    );
}
