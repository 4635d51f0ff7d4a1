//! Benchmark: 20 images sharing one 2 GB base layer in a local registry, scanned in one
//! `pinprobe scan` run, next to 20 sequential runs of a baseline binary (the one before the
//! layer cache), in the same command. Prints, measured through a counting loopback proxy in
//! front of the registry (every byte the registry served, every blob request):
//!
//! - (a) bytes served during the one 20-image run vs the distinct layers' size (target 1.1x);
//! - (b) its wall time vs the 20 sequential baseline runs;
//! - (c) a re-scan of the same 20 images with the warm cache: layer requests and layer bytes
//!   served (target 0), and whether its report is the cold run's, but for the reads;
//! - (d) peak RSS (wait4 `ru_maxrss`) of the 20-image runs (target under 100 MB).
//!
//! Run: `cargo bench --bench image_fleet` (needs `docker-registry` and `skopeo`).
//! `PINPROBE_BIN` times a copy of the binary, `PINPROBE_BASE_BIN` names the baseline (without
//! one the baseline is skipped), `PINPROBE_BENCH_BASE_MB`
//! the base layer's size (2000). The images are generated into
//! `$CARGO_TARGET_DIR/pinprobe-bench-fleet`, pushed, and the layout deleted again; the
//! registry's storage lives there too while the benchmark runs.
//!
//! The base layer is a gzip stream of stored (uncompressed) deflate blocks over pseudo-random
//! bytes (xorshift64), so it really is ~2 GB stored and on the wire; each image adds its own
//! small vLLM-install layer (the test fixture builders).

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
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const IMAGES: usize = 20;
const FILE: usize = 64 << 20;

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

/// Pseudo-random bytes (xorshift64), `len` of them.
struct Filler {
    state: u64,
    left: usize,
}

impl Read for Filler {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.left) & !7;
        let n = if n == 0 { buf.len().min(self.left) } else { n };
        for chunk in buf[..n].chunks_mut(8) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            chunk.copy_from_slice(&self.state.to_le_bytes()[..chunk.len()]);
        }
        self.left -= n;
        Ok(n)
    }
}

/// The base layer, streamed into `blobs/sha256/`: (digest, diff id, stored size).
fn write_base(dir: &Path, megabytes: usize) -> (String, String, u64) {
    let tmp = dir.join("blobs/sha256/base.tmp");
    let file = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).unwrap());
    let mut stored = HashWriter {
        inner: file,
        hasher: Sha256::new(),
        count: 0,
    };
    let diff_id;
    {
        let gz = flate2::write::GzEncoder::new(&mut stored, flate2::Compression::none());
        let mut tar_side = HashWriter {
            inner: gz,
            hasher: Sha256::new(),
            count: 0,
        };
        {
            let mut b = tar::Builder::new(&mut tar_side);
            let mut h = tar::Header::new_gnu();
            h.set_mode(0o644);
            h.set_size(10);
            b.append_data(&mut h, "etc/os-release", &b"ID=debian\n"[..])
                .unwrap();
            let files = (megabytes * 1_000_000).div_ceil(FILE);
            for i in 0..files {
                let mut h = tar::Header::new_gnu();
                h.set_mode(0o644);
                h.set_size(FILE as u64);
                let filler = Filler {
                    state: 0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1),
                    left: FILE,
                };
                b.append_data(&mut h, format!("opt/base/data/{i:04}.bin"), filler)
                    .unwrap();
            }
            b.finish().unwrap();
        }
        diff_id = format!("sha256:{}", hex::encode(tar_side.hasher.clone().finalize()));
        tar_side.inner.finish().unwrap();
    }
    stored.flush().unwrap();
    let digest = format!("sha256:{}", hex::encode(stored.hasher.clone().finalize()));
    std::fs::rename(&tmp, dir.join("blobs/sha256").join(build::hex_of(&digest))).unwrap();
    (digest, diff_id, stored.count)
}

fn write_blob(dir: &Path, bytes: &[u8]) -> String {
    let d = build::digest(bytes);
    std::fs::write(dir.join("blobs/sha256").join(build::hex_of(&d)), bytes).unwrap();
    d
}

/// The OCI layout of the 20 images (tags img00..img19); returns the distinct layers' size and
/// the base layer's.
fn generate(dir: &Path, megabytes: usize) -> (u64, u64) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
    let (base_digest, base_diff, base_size) = write_base(dir, megabytes);
    let mut distinct = base_size;
    let mut entries = Vec::new();
    for i in 0..IMAGES {
        let mut install = build::vllm_install(
            "usr/local/lib/python3.12/site-packages",
            "0.30.0",
            "class BlockInfo:\n    num_splits: Int32 = 1\n",
            "block_info = BlockInfo(a, b, c, d, self.is_split_kv)\n",
        );
        install.push((
            format!("app/image-{i:02}.txt"),
            format!("{i}\n").into_bytes(),
        ));
        let layer = build::Layer::new("RUN pip install vllm==0.30.0", build::Compression::Gzip)
            .files(install);
        let tar = layer.tar();
        let blob = build::compress(&tar, build::Compression::Gzip);
        let digest = write_blob(dir, &blob);
        distinct += blob.len() as u64;
        let config = serde_json::to_vec(&serde_json::json!({
            "architecture": "amd64", "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": [base_diff, build::digest(&tar)]},
            "history": [{"created_by": "ADD base.tar /"}, {"created_by": "RUN pip install vllm==0.30.0"}],
        }))
        .unwrap();
        let config_digest = write_blob(dir, &config);
        let manifest = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2, "mediaType": build::OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": base_digest, "size": base_size},
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": blob.len()},
            ],
        }))
        .unwrap();
        let manifest_digest = write_blob(dir, &manifest);
        entries.push(serde_json::json!({
            "mediaType": build::OCI_MANIFEST, "digest": manifest_digest, "size": manifest.len(),
            "annotations": {"org.opencontainers.image.ref.name": format!("img{i:02}")},
        }));
    }
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec(&serde_json::json!({"schemaVersion": 2, "manifests": entries})).unwrap(),
    )
    .unwrap();
    (distinct, base_size)
}

/// What the proxy saw: bytes from the registry, and blob GETs.
#[derive(Default)]
struct Counts {
    served: AtomicU64,
    blob_gets: AtomicU64,
    layer_gets: AtomicU64,
}

/// A loopback TCP proxy in front of `upstream` that counts what passes.
fn proxy(upstream: String, counts: Arc<Counts>, layers: Arc<Vec<String>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let (counts, layers) = (Arc::clone(&counts), Arc::clone(&layers));
            let (mut c_read, mut s_write) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut s_read, mut c_write) = (server, client);
            let up_counts = Arc::clone(&counts);
            std::thread::spawn(move || {
                // Requests: count blob GETs by their request lines.
                let mut buf = vec![0u8; 64 << 10];
                let mut tail = Vec::new();
                while let Ok(n) = c_read.read(&mut buf) {
                    if n == 0 || s_write.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&tail).into_owned();
                    for line in text.split("\r\n").filter(|l| l.starts_with("GET ")) {
                        if let Some(at) = line.find("/blobs/") {
                            up_counts.blob_gets.fetch_add(1, Ordering::Relaxed);
                            let digest = line[at + 7..].split(' ').next().unwrap_or("");
                            if layers.iter().any(|l| l == digest) {
                                up_counts.layer_gets.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    // Keep only an unfinished line.
                    let keep = text.rfind("\r\n").map_or(0, |i| i + 2);
                    tail = text.as_bytes()[keep..].to_vec();
                }
                let _ = s_write.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 256 << 10];
                while let Ok(n) = s_read.read(&mut buf) {
                    if n == 0 || c_write.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    counts.served.fetch_add(n as u64, Ordering::Relaxed);
                }
                let _ = c_write.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    addr
}

struct Run {
    seconds: f64,
    rss_kb: u64,
    stdout: Vec<u8>,
    code: i32,
}

/// Run `bin ARGS`, its wall time and peak RSS (wait4).
// The child is reaped by wait4 (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(bin: &str, args: &[String]) -> Run {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).unwrap();
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        err.read_to_end(&mut v).unwrap();
        v
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on our own child's pid, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(pid > 0, "wait4");
    let seconds = started.elapsed().as_secs_f64();
    let stdout = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    assert!(
        code == 0 || code == 1 || code == 3,
        "{bin} {args:?}: exit {code}: {}",
        String::from_utf8_lossy(&stderr)
    );
    Run {
        seconds,
        rss_kb: usage.ru_maxrss as u64,
        stdout,
        code,
    }
}

/// The report without the reads (bytes read, each layer's `cached`).
fn without_reads(stdout: &[u8]) -> serde_json::Value {
    let mut json: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    for t in json["targets"].as_array_mut().unwrap() {
        let image = t["image"].as_object_mut().unwrap();
        image.remove("bytes_read");
        for l in image["layers"].as_array_mut().unwrap() {
            l.as_object_mut().unwrap().remove("cached");
        }
    }
    json
}

fn summary(stdout: &[u8]) -> (u64, usize, usize) {
    let json: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    let mut bytes = 0;
    let mut layers = 0;
    let mut cached = 0;
    for t in json["targets"].as_array().unwrap() {
        bytes += t["image"]["bytes_read"].as_u64().unwrap_or(0);
        for l in t["image"]["layers"].as_array().unwrap() {
            layers += 1;
            cached += usize::from(l["cached"].as_bool().unwrap_or(false));
        }
    }
    (bytes, layers, cached)
}

fn mb(n: u64) -> String {
    format!("{:.1} MB", n as f64 / 1e6)
}

fn main() {
    if std::env::args().any(|a| a == "--list") || !registry::available() {
        return;
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let root = target_dir.join("pinprobe-bench-fleet");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let megabytes: usize = std::env::var("PINPROBE_BENCH_BASE_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let layout = root.join("layout");
    let started = Instant::now();
    let (distinct, base_size) = generate(&layout, megabytes);
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let mut layer_digests = Vec::new();
    for m in index["manifests"].as_array().unwrap() {
        let d = m["digest"].as_str().unwrap();
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(layout.join("blobs/sha256").join(build::hex_of(d))).unwrap(),
        )
        .unwrap();
        for l in manifest["layers"].as_array().unwrap() {
            layer_digests.push(l["digest"].as_str().unwrap().to_string());
        }
    }
    layer_digests.sort();
    layer_digests.dedup();

    let reg = registry::Registry::start_in(&root.join("registry"), None);
    let started = Instant::now();
    for i in 0..IMAGES {
        reg.push(&layout, &format!("img{i:02}"), "bench/vllm", None);
    }
    eprintln!("pushed in {:.1} s", started.elapsed().as_secs_f64());
    std::fs::remove_dir_all(&layout).unwrap();

    let counts = Arc::new(Counts::default());
    let host = proxy(
        reg.host.clone(),
        Arc::clone(&counts),
        Arc::new(layer_digests),
    );
    let targets: Vec<String> = (0..IMAGES)
        .map(|i| format!("docker://{host}/bench/vllm:img{i:02}"))
        .collect();
    let bin =
        std::env::var("PINPROBE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pinprobe").into());
    let base_bin = std::env::var("PINPROBE_BASE_BIN").unwrap_or_default();
    let common = |cache: &Path| -> Vec<String> {
        vec![
            "scan".into(),
            "--cache".into(),
            cache.display().to_string(),
            "--insecure-registry".into(),
            host.clone(),
            "--format".into(),
            "json".into(),
            "--fail-on".into(),
            "never".into(),
        ]
    };
    let take = |c: &Counts| {
        (
            c.served.swap(0, Ordering::Relaxed),
            c.blob_gets.swap(0, Ordering::Relaxed),
            c.layer_gets.swap(0, Ordering::Relaxed),
        )
    };
    println!(
        "20 images: one base layer of {}, 20 own layers; distinct layers {}",
        mb(base_size),
        mb(distinct)
    );

    // (b) The baseline: 20 sequential runs, one image each.
    let mut base_seconds = None;
    if !base_bin.is_empty() && Path::new(&base_bin).exists() {
        let copy = root.join("pinprobe-base");
        std::fs::copy(&base_bin, &copy).unwrap();
        let cache = root.join("cache-base");
        let started = Instant::now();
        let mut peak = 0;
        for t in &targets {
            let mut args = common(&cache);
            args.push(t.clone());
            peak = peak.max(run(&copy.display().to_string(), &args).rss_kb);
        }
        let seconds = started.elapsed().as_secs_f64();
        let (served, blobs, layers) = take(&counts);
        println!(
            "baseline, 20 sequential runs: {seconds:.1} s, served {} ({:.2}x the distinct layers), {blobs} blob requests ({layers} for layers), peak RSS {:.1} MB",
            mb(served),
            served as f64 / distinct as f64,
            peak as f64 / 1024.0
        );
        base_seconds = Some(seconds);
    }

    // (a) One run of all 20, cold cache.
    let cache = root.join("cache");
    let mut args = common(&cache);
    args.extend(targets.iter().cloned());
    let cold = run(&bin, &args);
    let (served, blobs, layers) = take(&counts);
    let (read, total_layers, cached) = summary(&cold.stdout);
    println!(
        "(a) one run, 20 images, cold cache: {:.1} s, served {} = {:.3}x the distinct layers (target <= 1.1x), {blobs} blob requests ({layers} for layers), bytes read {}, layers from the cache {cached}/{total_layers}, exit {}",
        cold.seconds,
        mb(served),
        served as f64 / distinct as f64,
        mb(read),
        cold.code
    );
    if let Some(base) = base_seconds {
        println!(
            "(b) wall time: one run {:.1} s vs 20 sequential baseline runs {base:.1} s = {:.3}x ({:.1}x faster)",
            cold.seconds,
            cold.seconds / base,
            base / cold.seconds
        );
    }
    // (c) The same 20 again, warm cache.
    let warm = run(&bin, &args);
    let (served, blobs, layers) = take(&counts);
    let (read, total_layers, cached) = summary(&warm.stdout);
    println!(
        "(c) re-scan, warm cache: {:.2} s, served {} (manifests by tag), {blobs} blob requests, {layers} layer requests, bytes read {read}, layers from the cache {cached}/{total_layers}; report the cold run's but for the reads: {}",
        warm.seconds,
        mb(served),
        without_reads(&warm.stdout) == without_reads(&cold.stdout)
    );
    println!(
        "(d) peak RSS: cold 20-image run {:.1} MB, warm {:.1} MB (target < 100 MB)",
        cold.rss_kb as f64 / 1024.0,
        warm.rss_kb as f64 / 1024.0
    );
    drop(reg);
    let _ = std::fs::remove_dir_all(&root);
}
