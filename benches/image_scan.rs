//! Benchmark: `pinprobe scan` of a generated image (2.1 GB uncompressed over 5 gzip filler
//! layers plus a small vLLM-install layer) next to `gzip -dc LAYER | tar -t` of every layer, in
//! the same run: once with the install in the top layer and once in the bottom layer, each with
//! the sound default (every layer is read) and with `--fast-layers` (the RECORD early stop: one
//! layer when the install is on top). Prints wall times, ratios, pinprobe's peak RSS
//! (`/usr/bin/time -f %M`) and, when `docker-registry` and `skopeo` are installed, the same two
//! scans through a loopback registry with the bytes downloaded.
//!
//! Run: `cargo bench --bench image_scan`. The image is generated once into
//! `$CARGO_TARGET_DIR/pinprobe-bench-image` (about 1.5 GB; delete it to regenerate).
//!
//! Generator: each filler layer holds 420 files of 1 MiB; each file is a slice, at a
//! pseudo-random offset, of an 8 MiB pool of text: words drawn at random (xorshift64, fixed
//! seed) from a vocabulary of 4,096 random lowercase words, so gzip has real matching and
//! Huffman work to undo, like text and code in real layers, and generation stays quick.

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/image.rs"]
mod build;
#[path = "../tests/image/registry.rs"]
mod registry;
#[path = "../tests/common/require.rs"]
mod require;

use sha2::{Digest as _, Sha256};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const FILLER_LAYERS: usize = 5;
const FILES_PER_LAYER: usize = 420;
const FILE_SIZE: usize = 1 << 20;
const POOL: usize = 8 << 20;
const VOCABULARY: usize = 4096;
const GENERATOR_VERSION: &str = "2";

struct HashWriter<W> {
    inner: W,
    hasher: Sha256,
    count: u64,
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn word_pool() -> Vec<u8> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let vocabulary: Vec<Vec<u8>> = (0..VOCABULARY)
        .map(|_| {
            let r = xorshift(&mut s);
            let len = 2 + (r % 9) as usize;
            (0..len)
                .map(|i| b'a' + ((r >> (8 + i * 5)) % 26) as u8)
                .collect()
        })
        .collect();
    let mut pool = Vec::with_capacity(POOL + 16);
    while pool.len() < POOL {
        let r = xorshift(&mut s);
        pool.extend_from_slice(&vocabulary[(r % VOCABULARY as u64) as usize]);
        pool.push(if r >> 59 == 0 { b'\n' } else { b' ' });
    }
    pool
}

/// A layer blob: (digest, diff id, size).
struct Blob {
    digest: String,
    diff_id: String,
    size: u64,
    created_by: String,
}

/// Write a gzip layer by streaming `fill` into tar → gzip → file, hashing both sides.
fn write_layer(
    dir: &Path,
    created_by: &str,
    fill: impl FnOnce(&mut tar::Builder<&mut dyn Write>),
) -> Blob {
    let tmp = dir.join("blobs/sha256/tmp");
    std::fs::create_dir_all(tmp.parent().unwrap()).unwrap();
    let file = io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
    let mut stored = HashWriter {
        inner: file,
        hasher: Sha256::new(),
        count: 0,
    };
    let diff_id;
    {
        let gz = flate2::write::GzEncoder::new(&mut stored, flate2::Compression::fast());
        let mut tar_side = HashWriter {
            inner: gz,
            hasher: Sha256::new(),
            count: 0,
        };
        {
            let w: &mut dyn Write = &mut tar_side;
            let mut b = tar::Builder::new(w);
            fill(&mut b);
            b.finish().unwrap();
        }
        diff_id = format!("sha256:{}", hex::encode(tar_side.hasher.clone().finalize()));
        tar_side.inner.finish().unwrap();
    }
    stored.flush().unwrap();
    let digest = format!("sha256:{}", hex::encode(stored.hasher.clone().finalize()));
    std::fs::rename(&tmp, dir.join("blobs/sha256").join(build::hex_of(&digest))).unwrap();
    Blob {
        digest,
        diff_id,
        size: stored.count,
        created_by: created_by.to_string(),
    }
}

fn add(b: &mut tar::Builder<&mut dyn Write>, path: &str, bytes: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_size(bytes.len() as u64);
    b.append_data(&mut h, path, bytes).unwrap();
}

fn write_json_blob(dir: &Path, bytes: &[u8]) -> String {
    let d = build::digest(bytes);
    std::fs::write(dir.join("blobs/sha256").join(build::hex_of(&d)), bytes).unwrap();
    d
}

fn manifest_for(dir: &Path, layers: &[&Blob]) -> serde_json::Value {
    let history: Vec<_> = layers
        .iter()
        .map(|l| serde_json::json!({"created_by": l.created_by}))
        .collect();
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|l| l.diff_id.clone()).collect::<Vec<_>>()},
        "history": history,
    }))
    .unwrap();
    let config_digest = write_json_blob(dir, &config);
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": build::OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": layers.iter().map(|l| serde_json::json!({
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": l.digest, "size": l.size,
        })).collect::<Vec<_>>(),
    }))
    .unwrap();
    let digest = write_json_blob(dir, &manifest);
    serde_json::json!({"mediaType": build::OCI_MANIFEST, "digest": digest, "size": manifest.len()})
}

/// Generate (or reuse) the layout; returns it and the filler + vllm layer blobs.
fn generate(dir: &Path) -> Vec<Blob> {
    let marker = dir.join("generated");
    let blobs_file = dir.join("layers.json");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(GENERATOR_VERSION) {
        let v: Vec<(String, String, u64, String)> =
            serde_json::from_slice(&std::fs::read(&blobs_file).unwrap()).unwrap();
        return v
            .into_iter()
            .map(|(digest, diff_id, size, created_by)| Blob {
                digest,
                diff_id,
                size,
                created_by,
            })
            .collect();
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    eprintln!("generating the benchmark image in {} ...", dir.display());
    let started = Instant::now();
    let pool = word_pool();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut blobs = Vec::new();
    for layer in 0..FILLER_LAYERS {
        let mut offsets = Vec::new();
        for _ in 0..FILES_PER_LAYER {
            offsets.push((xorshift(&mut seed) as usize) % (POOL - FILE_SIZE));
        }
        blobs.push(write_layer(dir, &format!("RUN make filler-{layer}"), |b| {
            for (i, off) in offsets.iter().enumerate() {
                add(
                    b,
                    &format!("opt/filler{layer}/data/{i:04}.txt"),
                    &pool[*off..off + FILE_SIZE],
                );
            }
        }));
    }
    let install = build::vllm_install(
        "usr/local/lib/python3.12/site-packages",
        "0.30.0",
        "class BlockInfo:\n    num_splits: Int32 = 1\n",
        "block_info = BlockInfo(a, b, c, d, self.is_split_kv)\n",
    );
    blobs.push(write_layer(dir, "RUN pip install vllm==0.30.0", |b| {
        for (p, bytes) in &install {
            add(b, p, bytes);
        }
    }));
    let (fill, vllm) = blobs.split_at(FILLER_LAYERS);
    let mut top: Vec<&Blob> = fill.iter().collect();
    top.push(&vllm[0]);
    let mut bottom: Vec<&Blob> = vec![&vllm[0]];
    bottom.extend(fill.iter());
    let mut entries = Vec::new();
    for (tag, layers) in [("top", &top), ("bottom", &bottom)] {
        let mut e = manifest_for(dir, layers);
        e["annotations"] = serde_json::json!({"org.opencontainers.image.ref.name": tag});
        entries.push(e);
    }
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec(&serde_json::json!({"schemaVersion": 2, "manifests": entries})).unwrap(),
    )
    .unwrap();
    let saved: Vec<_> = blobs
        .iter()
        .map(|b| {
            (
                b.digest.clone(),
                b.diff_id.clone(),
                b.size,
                b.created_by.clone(),
            )
        })
        .collect();
    std::fs::write(&blobs_file, serde_json::to_vec(&saved).unwrap()).unwrap();
    std::fs::write(&marker, GENERATOR_VERSION).unwrap();
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());
    blobs
}

/// Wall time of `gzip -dc BLOB | tar -t` for every layer, in one shell.
fn baseline(dir: &Path, blobs: &[Blob]) -> f64 {
    let mut script = String::from("set -e\n");
    for b in blobs {
        let path = dir.join("blobs/sha256").join(build::hex_of(&b.digest));
        script.push_str(&format!(
            "gzip -dc '{}' | tar -t > /dev/null\n",
            path.display()
        ));
    }
    let started = Instant::now();
    let st = Command::new("sh").arg("-c").arg(&script).status().unwrap();
    assert!(st.success());
    started.elapsed().as_secs_f64()
}

struct Scan {
    seconds: f64,
    rss_kb: Option<u64>,
    json: serde_json::Value,
}

fn pinprobe(args: &[&str]) -> Scan {
    // PINPROBE_BIN: a copy of the binary to time (a shared target directory's
    // `release/pinprobe` can be replaced by another checkout's build mid-run).
    let bin =
        std::env::var("PINPROBE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pinprobe").into());
    let time = Path::new("/usr/bin/time").exists();
    let mut cmd = if time {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M", &bin]);
        c
    } else {
        Command::new(&bin)
    };
    cmd.arg("scan")
        .args(args)
        .args(["--format", "json", "--fail-on", "never"]);
    let started = Instant::now();
    let out = cmd.stderr(Stdio::piped()).output().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("pinprobe {args:?}: {e}: {stderr}"));
    let rss_kb = if time {
        stderr.lines().last().and_then(|l| l.trim().parse().ok())
    } else {
        None
    };
    Scan {
        seconds,
        rss_kb,
        json,
    }
}

fn row(label: &str, scan: &Scan, base: f64) {
    let image = &scan.json["targets"][0]["image"];
    println!(
        "| {label} | {}/{} | {:.2} s | {base:.2} s | {:.2}x | {} | {} |",
        image["layers_scanned"],
        image["layers"].as_array().map_or(0, |l| l.len()),
        scan.seconds,
        scan.seconds / base,
        scan.rss_kb
            .map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0)),
        bytes(image["bytes_read"].as_u64().unwrap_or(0)),
    );
}

fn bytes(n: u64) -> String {
    if n < 1_000_000 {
        format!("{:.1} kB", n as f64 / 1e3)
    } else {
        format!("{:.1} MB", n as f64 / 1e6)
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target_dir.join("pinprobe-bench-image");
    let blobs = generate(&dir);
    let uncompressed = (FILLER_LAYERS * FILES_PER_LAYER * FILE_SIZE) as f64 / 1e9;
    let stored: u64 = blobs.iter().map(|b| b.size).sum();
    println!(
        "image: {} gzip layers, {uncompressed:.2} GB uncompressed, {:.2} GB stored",
        blobs.len(),
        stored as f64 / 1e9
    );
    // Warm the page cache, then time the baseline and pinprobe in the same run.
    baseline(&dir, &blobs);
    let base = baseline(&dir, &blobs);
    println!(
        "\n| vLLM install | layers read | pinprobe | gzip -dc \\| tar -t (all layers) | ratio | peak RSS | bytes read |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for tag in ["top", "bottom"] {
        for (mode, flags) in [
            ("default", &[][..]),
            ("--fast-layers", &["--fast-layers"][..]),
        ] {
            let target = format!("oci:{}:{tag}", dir.display());
            let mut args = vec![target.as_str()];
            args.extend_from_slice(flags);
            let scan = pinprobe(&args);
            row(&format!("{tag} layer (oci dir, {mode})"), &scan, base);
        }
    }
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    for tag in ["top", "bottom"] {
        reg.push(&dir, tag, "bench/vllm", None);
        for (mode, flags) in [
            ("default", &[][..]),
            ("--fast-layers", &["--fast-layers"][..]),
        ] {
            let reference = reg.reference("bench/vllm", tag);
            let mut args = vec![reference.as_str(), "--insecure-registry", reg.host.as_str()];
            args.extend_from_slice(flags);
            let scan = pinprobe(&args);
            row(&format!("{tag} layer (registry, {mode})"), &scan, base);
        }
    }
}
