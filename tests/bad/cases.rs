//! The bad-input corpus (`fixtures/bad/`): the manifest of cases, the generators for the cases
//! too big or too binary to commit, and a guarded runner. Shared by `tests/cli/bad_inputs.rs` (the
//! contract: exit code, one-line error, substring, no panic, within 60 s and 512 MB) and
//! `benches/bad_inputs.rs` (each case's time and peak memory).
#![allow(dead_code)]

use super::build::{self, Built, BuiltLayer, Compression, Image, Layer, SITE};
use crate::common::artifact::{vllm_files, with_dist_info, write_wheel};
use crate::common::{Sm90Call, block_info_new, fwd_sm90};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One case of `fixtures/bad/cases.yaml`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    /// What the case exercises (for the reader).
    pub about: String,
    /// Arguments; `{case}` is the case's input (committed `fixtures/bad/NAME`, or generated),
    /// `{demo}` the demo tree.
    pub args: Vec<String>,
    pub exit: i32,
    /// For errors (exit 2): a substring of the one stderr line.
    #[serde(default)]
    pub stderr: Option<String>,
    /// For verdicts: a substring of stdout + stderr.
    #[serde(default)]
    pub output: Option<String>,
    /// Built at run time by [`generate`] instead of read from `fixtures/bad/NAME`.
    #[serde(default)]
    pub generate: bool,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn load() -> Vec<Case> {
    let path = root().join("fixtures/bad/cases.yaml");
    let text = std::fs::read_to_string(&path).expect("fixtures/bad/cases.yaml");
    serde_saphyr::from_str(&text).expect("cases.yaml parses")
}

/// The case's arguments with placeholders filled (generating its input under `tmp`).
pub fn args(case: &Case, tmp: &Path) -> Vec<String> {
    let input = if case.generate {
        generate(&case.name, tmp)
    } else {
        root().join("fixtures/bad").join(&case.name)
    };
    args_with(case, &input)
}

/// The case's arguments with `{case}` = `input`.
pub fn args_with(case: &Case, input: &Path) -> Vec<String> {
    let demo = root().join("fixtures/demo-vllm");
    case.args
        .iter()
        .map(|a| {
            a.replace("{case}", &input.display().to_string())
                .replace("{demo}", &demo.display().to_string())
        })
        .collect()
}

/// What a guarded run gave.
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub timed_out: bool,
    /// Peak resident memory of the process, in KiB (from `wait4`).
    pub max_rss_kib: i64,
}

/// Run `bin args` with an address-space limit (`ulimit -v`) and a wall-clock limit (killed
/// past it), the cache and home pointed at `tmp`, and registry credentials removed.
// The child is reaped with `wait4` (for its resource usage), not `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn run_guarded(
    bin: &Path,
    args: &[String],
    tmp: &Path,
    limit: Duration,
    mem_mb: u64,
) -> Outcome {
    let cache = tmp.join("cache");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mem_mb * 1024))
        .arg(bin)
        .args(args)
        .env("PINPROBE_CACHE", &cache)
        .env("PINPROBE_OFFLINE", "1")
        .env("HOME", tmp)
        .env("XDG_CACHE_HOME", tmp.join("xdg"))
        .env_remove("PINPROBE_REGISTRY_USERNAME")
        .env_remove("PINPROBE_REGISTRY_PASSWORD")
        .env_remove("PINPROBE_REGISTRY_HOST")
        .env_remove("DOCKER_CONFIG")
        .env_remove("VLLM_FLASH_ATTN_SRC_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn pinprobe");
    let pid = child.id() as libc::pid_t;
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let mut timed_out = false;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child; pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if start.elapsed() > limit && !timed_out {
            timed_out = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = start.elapsed();
    let code = if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        None
    };
    Outcome {
        code,
        stdout: String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned(),
        elapsed,
        timed_out,
        max_rss_kib: usage.ru_maxrss,
    }
}

// ---------------------------------------------------------------------------------------------
// Generators.

fn vllm_wheel_files() -> Vec<(String, Vec<u8>)> {
    with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy))
}

fn wheel(dir: &Path, files: &[(String, Vec<u8>)]) -> PathBuf {
    let path = dir.join("vllm-0.30.0-py3-none-any.whl");
    write_wheel(&path, &files.to_vec());
    path
}

/// A vLLM 0.27.0 wheel (its real commit, so the release ledger's recorded verdicts would say
/// `not_affected`) whose FA3 library is `library`: only the library can make PINPROBE-2026-0003
/// and -0007 anything but clean, so a bad one must leave them `unknown` (exit 3).
fn fa3_wheel(dir: &Path, library: Vec<u8>) -> PathBuf {
    let mut files = vllm_files("0.27.0", Sm90Call::Fixed);
    for (path, bytes) in files.iter_mut() {
        if path == "vllm/_version.py" {
            *bytes =
                b"__version__ = version = '0.27.0'\n__commit_id__ = commit_id = 'g4bdc8a788'\n"
                    .to_vec();
        }
    }
    files.push((
        "vllm/vllm_flash_attn/flash_attn_interface.py".into(),
        b"try:\n    from . import _vllm_fa3_C\nexcept ImportError:\n    FA3_AVAILABLE = False\n"
            .to_vec(),
    ));
    files.push((
        "vllm/vllm_flash_attn/cute/flash_fwd_sm100.py".into(),
        b"max_offset = 8 if cutlass.const_expr(self.q_dtype.width == 8) else 0\nrescale_threshold = 8.0 if const_expr(self.q_dtype.width == 16) else 0.0\n".to_vec(),
    ));
    files.push(("vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so".into(), library));
    let path = dir.join("vllm-0.27.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    write_wheel(&path, &with_dist_info("vllm", "0.27.0", files));
    path
}

fn good_wheel(dir: &Path) -> PathBuf {
    wheel(dir, &vllm_wheel_files())
}

/// Replace `from` by `to` (same length) everywhere in `bytes`; returns how many.
fn patch(bytes: &mut [u8], from: &[u8], to: &[u8]) -> usize {
    assert_eq!(from.len(), to.len());
    let mut n = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
            n += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    n
}

fn patch_file(path: &Path, from: &[u8], to: &[u8]) {
    let mut bytes = std::fs::read(path).expect("read");
    assert!(patch(&mut bytes, from, to) > 0, "pattern not found");
    std::fs::write(path, bytes).expect("write");
}

/// Offsets of the central directory entries (`PK\x01\x02`) of a zip.
fn central_entries(bytes: &[u8]) -> Vec<usize> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x01\x02")
        .map(|(i, _)| i)
        .collect()
}

/// The central directory entry of the member whose name ends with `suffix`.
fn central_entry_of(bytes: &[u8], suffix: &str) -> usize {
    central_entries(bytes)
        .into_iter()
        .find(|&at| {
            let n = u16::from_le_bytes([bytes[at + 28], bytes[at + 29]]) as usize;
            bytes[at + 46..at + 46 + n].ends_with(suffix.as_bytes())
        })
        .expect("member in central directory")
}

fn site_packages(dir: &Path) -> PathBuf {
    let site = dir.join("site-packages");
    crate::common::artifact::write_tree(&site, &vllm_wheel_files());
    site
}

const SM90_IN_SITE: &str = "vllm/vllm_flash_attn/cute/flash_fwd_sm90.py";

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

/// Replace `path` (if there) with a FIFO (`fifo`) or a link to `/dev/zero`.
fn make_special(path: &Path, fifo: bool) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if fifo {
        mkfifo(path);
    } else {
        std::os::unix::fs::symlink("/dev/zero", path).unwrap();
    }
}

/// A valid binary fingerprint index (one state, one commit), as `index build` writes it.
fn binary_index() -> Vec<u8> {
    use pinprobe::pin::fingerprint::{Commit, Format, Index, State, codec};
    let id = |n: u8| gix::ObjectId::try_from(&[n; 20][..]).unwrap();
    let index = Index {
        component: "flash-attention".into(),
        source: "/x".into(),
        hash: gix::hash::Kind::Sha1,
        names: vec!["block_info.py".into()],
        states: vec![State {
            tree: id(1),
            files: vec![(0, id(2))],
        }],
        commits: vec![Commit {
            id: id(3),
            time: 1_700_000_000,
            state: 0,
        }],
        format: Format::Binary,
        checksum: [0; 32],
    };
    codec::encode(&index).0
}

/// The cases that put a FIFO or `/dev/zero` where pinprobe takes a file: a wheel, a `docker
/// save` tarball, an OCI layout's `index.json`, manifest, config and layer blobs, an ignore
/// file, a `--vex` document, a rule file, a fingerprint index in the cache.
fn special_case(name: &str, dir: &Path) -> PathBuf {
    let fifo = name.ends_with("-fifo");
    let place = name.trim_end_matches("-fifo").trim_end_matches("-dev-zero");
    let oci = |pick: &dyn Fn(&Built) -> String| {
        let b = vllm_image(Compression::Gzip).build();
        let layout = oci_target(dir, &b);
        let rel = pick(&b);
        make_special(&layout.join(rel), fifo);
        layout
    };
    let blob = |digest: &str| format!("blobs/sha256/{}", build::hex_of(digest));
    match place {
        "special-wheel" => {
            let p = dir.join("vllm-0.30.0-cp38-abi3-linux_x86_64.whl");
            make_special(&p, fifo);
            p
        }
        "special-archive" => {
            let p = dir.join("image.tar");
            make_special(&p, fifo);
            p
        }
        "special-image-index" => oci(&|_| "index.json".into()),
        "special-image-manifest" => oci(&|b| blob(&b.manifest_digest)),
        "special-image-config" => oci(&|b| blob(&b.config_digest)),
        "special-image-layer" => oci(&|b| blob(&b.layers.last().unwrap().digest)),
        "special-ignore" => {
            let p = dir.join(".pinprobe.yaml");
            make_special(&p, fifo);
            p
        }
        "special-vex" => {
            let p = dir.join("vex.json");
            make_special(&p, fifo);
            p
        }
        "special-rules" => {
            let rules = dir.join("rules");
            make_special(&rules.join("hostile.yaml"), fifo);
            rules
        }
        "special-index" => {
            make_special(&dir.join("cache/index/flash-attention.json"), fifo);
            dir.join("cache")
        }
        "special-index-binary" => {
            make_special(&dir.join("cache/index/flash-attention.idx"), fifo);
            dir.join("cache")
        }
        other => panic!("no generator for case {other}"),
    }
}

fn tree_with_cmake(dir: &Path, text: &[u8]) -> PathBuf {
    let root = dir.join("tree");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("CMakeLists.txt"), text).unwrap();
    root
}

/// The affected pin, declared and fetched (CMake fetches only what is made available).
const DECLARE: &str = "FetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n  GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5)\nFetchContent_MakeAvailable(vllm-flash-attn)\n";

/// Images: a base layer and a vLLM 0.30.0 install (the bug's shape) in `compression`.
fn vllm_image(compression: Compression) -> Image {
    Image::new(vec![
        Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
        Layer::new("RUN pip install vllm==0.30.0", compression).files(build::vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        )),
    ])
}

fn oci_target(dir: &Path, built: &Built) -> PathBuf {
    let layout = dir.join("layout");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci(&layout, &[("latest", built)]);
    layout
}

/// An image whose top layer's stored bytes are `blob` (digests recomputed, so only the bytes
/// themselves are wrong).
fn with_top_blob(image: &Image, blob: Vec<u8>) -> Built {
    let b = image.build();
    let mut layers = b.layers.clone();
    let top = layers.last_mut().unwrap();
    top.digest = build::digest(&blob);
    top.blob = blob;
    build::built_from("linux", "amd64", layers)
}

/// A raw tar with entries (path, type, link target, data); names are written byte for byte
/// (the `tar` crate refuses `..`, which is the point here).
fn raw_tar(entries: &[(&str, tar::EntryType, &str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, kind, link, data) in entries {
        let mut h = tar::Header::new_old();
        {
            let old = h.as_old_mut();
            old.name[..path.len()].copy_from_slice(path.as_bytes());
            old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_size(data.len() as u64);
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        out.extend(std::iter::repeat_n(0u8, pad));
    }
    out.extend(std::iter::repeat_n(0u8, 1024));
    out
}

/// A vLLM-shaped git repository whose second commit bumps the pin to a known-affected commit
/// and adds a file 30,000 directories deep (no filesystem holds such a path: that commit is
/// written with `git fast-import`).
fn deep_git_tree(dir: &Path) -> PathBuf {
    let repo = dir.join("deep");
    crate::common::init(&repo);
    crate::common::vllm_tree(
        &repo,
        crate::common::FA_REPO,
        "0123456789abcdef0123456789abcdef01234567",
    );
    crate::common::commit(&repo, "pin");
    let cmake = "cmake/external_projects/vllm_flash_attn.cmake";
    let text = std::fs::read_to_string(repo.join(cmake)).unwrap().replace(
        "0123456789abcdef0123456789abcdef01234567",
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    // Under cmake/, which the CMake finder lists.
    let deep = format!("cmake/{}deep.txt", "d/".repeat(30_000));
    let script = format!(
        "commit refs/heads/main\ncommitter T <t@example.invalid> 1767225600 +0000\ndata 4\ndeep\nfrom refs/heads/main^0\nM 100644 inline {deep}\ndata 2\nx\nM 100644 inline {cmake}\ndata {}\n{text}\n",
        text.len()
    );
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write");
    assert!(child.wait().expect("wait").success());
    repo
}

/// An image whose gzip top layer holds an extended header of `kind` with a `size`-byte body,
/// then one small file: streamed into the compressor (the body never sits in memory here).
fn image_with_extended_header(kind: tar::EntryType, size: u64) -> Built {
    use flate2::{Compression as Level, write::GzEncoder};
    let mut gz = GzEncoder::new(Vec::new(), Level::fast());
    let mut tar_hash = sha2::Sha256::default();
    let mut put = |bytes: &[u8], gz: &mut GzEncoder<Vec<u8>>| {
        sha2::Digest::update(&mut tar_hash, bytes);
        gz.write_all(bytes).unwrap();
    };
    let mut h = tar::Header::new_gnu();
    h.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_cksum();
    put(h.as_bytes(), &mut gz);
    let body = if kind == tar::EntryType::XHeader {
        b"99 comment=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"[..]
            .to_vec()
    } else {
        vec![b'a'; 1 << 20]
    };
    let mut left = size;
    while left > 0 {
        let n = left.min(body.len() as u64) as usize;
        put(&body[..n], &mut gz);
        left -= n as u64;
    }
    put(&vec![0u8; ((512 - size % 512) % 512) as usize], &mut gz);
    let rest = raw_tar(&[("etc/hostname", tar::EntryType::Regular, "", b"x\n")]);
    put(&rest, &mut gz);
    let blob = gz.finish().unwrap();
    let tar_digest = format!("sha256:{}", hex::encode(sha2::Digest::finalize(tar_hash)));
    let b = vllm_image(Compression::Gzip).build();
    let mut layers = b.layers.clone();
    layers.push(BuiltLayer {
        diff_id: tar_digest,
        digest: build::digest(&blob),
        media_type: build::media_type(Compression::Gzip),
        blob,
        tar: Vec::new(),
        created_by: "RUN hostile".into(),
    });
    build::built_from("linux", "amd64", layers)
}

/// An image whose top layer is the given tar (plain), over the vLLM install.
fn image_with_top_tar(tar: Vec<u8>) -> Built {
    let b = vllm_image(Compression::Gzip).build();
    let mut layers = b.layers.clone();
    layers.push(BuiltLayer {
        diff_id: build::digest(&tar),
        digest: build::digest(&tar),
        media_type: build::media_type(Compression::None),
        blob: tar.clone(),
        tar,
        created_by: "RUN hostile".into(),
    });
    build::built_from("linux", "amd64", layers)
}

fn oci_with_manifest(dir: &Path, manifest: serde_json::Value) -> PathBuf {
    let b = vllm_image(Compression::Gzip).build();
    let layout = oci_target(dir, &b);
    let bytes = serde_json::to_vec(&manifest).unwrap();
    let digest = build::digest(&bytes);
    std::fs::write(
        layout.join("blobs/sha256").join(build::hex_of(&digest)),
        &bytes,
    )
    .unwrap();
    let index = serde_json::json!({"schemaVersion": 2, "manifests": [{
        "mediaType": manifest.get("mediaType").cloned().unwrap_or(serde_json::json!(build::OCI_MANIFEST)),
        "digest": digest, "size": bytes.len(),
        "annotations": {"org.opencontainers.image.ref.name": "latest"},
    }]});
    std::fs::write(
        layout.join("index.json"),
        serde_json::to_vec(&index).unwrap(),
    )
    .unwrap();
    layout
}

fn manifest_of(b: &Built) -> serde_json::Value {
    serde_json::from_slice(&b.manifest).unwrap()
}

/// Build the input of a generated case in `dir`; returns the path the args name as `{case}`.
pub fn generate(name: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    match name {
        // Nothing there: the args name a path under it that does not exist.
        "target-missing" | "rules-missing-dir" => dir.to_path_buf(),
        // ---- ELF (the FA3 library a wheel ships) ----
        "elf-truncated" | "elf-huge-section-count" | "elf-wrong-class" => {
            use crate::common::elf::{self, Sym};
            let mut lib = elf::fa3_library(elf::SM80, Sym::Defined);
            match name {
                "elf-truncated" => lib.truncate(lib.len() - 40),
                "elf-huge-section-count" => {
                    lib[elf::SHNUM..elf::SHNUM + 2].copy_from_slice(&u16::MAX.to_le_bytes())
                }
                _ => lib[elf::CLASS] = 1,
            }
            fa3_wheel(dir, lib)
        }
        // ---- Python's import path: startup code in an environment ----
        "env-pth-import-line" | "env-sitecustomize" => {
            let site = dir.join("site-packages");
            crate::common::artifact::write_tree(
                &site,
                &with_dist_info("vllm", "0.33.0", vllm_files("0.33.0", Sm90Call::Fixed)),
            );
            let (file, text) = match name {
                "env-pth-import-line" => (
                    "zz-first.pth",
                    "import sys; sys.path.insert(0, '/opt/elsewhere')\n",
                ),
                _ => (
                    "sitecustomize.py",
                    "import sys\nsys.path.insert(0, '/opt/elsewhere')\n",
                ),
            };
            std::fs::write(site.join(file), text).unwrap();
            site
        }
        // A .pth file site reads differently from a naive line split: an import line after a
        // lone CR, an import line in a dot-file (Pythons before 3.13 read them), bytes that are
        // not UTF-8, and a path entry naming a file.
        "env-pth-cr-import-line"
        | "env-pth-dotfile-import-line"
        | "env-pth-not-utf8"
        | "env-pth-entry-is-a-file" => {
            let site = dir.join("site-packages");
            // The entry naming a file: the package is not in site-packages, only its metadata.
            let package = if name == "env-pth-entry-is-a-file" {
                Vec::new()
            } else {
                vllm_files("0.33.0", Sm90Call::Fixed)
            };
            crate::common::artifact::write_tree(&site, &with_dist_info("vllm", "0.33.0", package));
            let (file, bytes): (&str, &[u8]) = match name {
                "env-pth-cr-import-line" => (
                    "paths.pth",
                    b"/opt/none\rimport sys; sys.path.insert(0, '/opt/elsewhere')\r",
                ),
                "env-pth-dotfile-import-line" => (
                    ".first.pth",
                    b"import sys; sys.path.insert(0, '/opt/elsewhere')\n",
                ),
                "env-pth-not-utf8" => ("paths.pth", b"/opt/\xff\xfe\n"),
                _ => ("paths.pth", b"vllm-0.33.0.dist-info/METADATA\n"),
            };
            std::fs::write(site.join(file), bytes).unwrap();
            site
        }
        // An image whose config sets PYTHONPATH where the scan cannot follow it, or whose
        // config.Env is not a list, or whose interpreter has its own sitecustomize.py.
        "image-pythonpath-volume"
        | "image-pythonpath-relative"
        | "image-config-env-not-a-list"
        | "image-interpreter-sitecustomize" => {
            let mut layers = vec![
                Layer::new("ADD rootfs.tar /", Compression::Gzip)
                    .file("etc/os-release", "ID=debian\n"),
                Layer::new("RUN pip install vllm==0.33.0", Compression::Gzip).files(
                    build::vllm_install(
                        SITE,
                        "0.33.0",
                        &block_info_new(),
                        &fwd_sm90(Sm90Call::Fixed),
                    ),
                ),
            ];
            if name == "image-interpreter-sitecustomize" {
                layers.push(Layer::new("COPY sitecustomize.py", Compression::Gzip).file(
                    "usr/local/lib/python3.12/sitecustomize.py",
                    "import sys\nsys.path.insert(0, '/srv/other')\n",
                ));
            }
            let mut image = Image::new(layers);
            image = match name {
                "image-pythonpath-volume" => image
                    .env(&["PYTHONPATH=/models/vllm"])
                    .volumes(&["/models"]),
                "image-pythonpath-relative" => image.env(&["PYTHONPATH=vllm-src"]),
                "image-config-env-not-a-list" => {
                    image.process = serde_json::json!({"Env": "PYTHONPATH=/opt/vllm"});
                    image
                }
                _ => image,
            };
            oci_target(dir, &image.build())
        }
        // A cache holding a pulled database without a trust record: refused, said under -q.
        "feed-pulled-without-record-quiet" => {
            let cache = dir.join("cache");
            std::fs::create_dir_all(cache.join("rules/sha256-00")).unwrap();
            cache
        }
        // ---- CMake ----
        "cmake-100mb-file" => {
            let mut text = Vec::with_capacity(100 << 20);
            text.extend_from_slice(b"include(FetchContent)\n");
            let line = b"# padding padding padding padding padding padding padding padding pad\n";
            while text.len() < 100 << 20 {
                text.extend_from_slice(line);
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-20mb-file" => {
            let mut text = b"include(FetchContent)\n".to_vec();
            while text.len() < 20 << 20 {
                text.extend_from_slice(b"# padding padding padding padding padding padding\n");
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-dense-calls-under-cap" => {
            let mut text = Vec::new();
            // 500,000 commands: half the tokenizer's budget, in 2 MB.
            for _ in 0..500_000 {
                text.extend_from_slice(b"a()\n");
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-deep-parentheses" => {
            let depth = 1_000_000;
            let mut text = b"set(X ".to_vec();
            text.extend(std::iter::repeat_n(b'(', depth));
            text.extend(std::iter::repeat_n(b')', depth));
            text.extend_from_slice(b")\n");
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-deep-parentheses-unbalanced" => {
            let mut text = DECLARE.as_bytes().to_vec();
            text.extend_from_slice(b"set(X ");
            text.extend(std::iter::repeat_n(b'(', 1_000_000));
            tree_with_cmake(dir, &text)
        }
        "cmake-not-utf8" => {
            let mut text = DECLARE.as_bytes().to_vec();
            text.extend_from_slice(b"# caf\xe9 \xff\xfe\n");
            tree_with_cmake(dir, &text)
        }
        "cmake-nul-byte" => {
            let text = DECLARE.replace("GIT_TAG", "GIT\0TAG");
            tree_with_cmake(dir, text.as_bytes())
        }
        "cmake-fifo" => {
            let root = dir.join("tree");
            std::fs::create_dir_all(root.join("cmake")).unwrap();
            mkfifo(&root.join("CMakeLists.txt"));
            root
        }
        "cmake-dev-zero" => {
            let root = dir.join("tree");
            std::fs::create_dir_all(root.join("cmake")).unwrap();
            std::os::unix::fs::symlink("/dev/zero", root.join("CMakeLists.txt")).unwrap();
            root
        }
        "cmake-symlink-outside" => {
            let outside = dir.join("outside.cmake");
            std::fs::write(&outside, DECLARE).unwrap();
            let root = dir.join("tree");
            std::fs::create_dir_all(root.join("cmake")).unwrap();
            std::os::unix::fs::symlink(&outside, root.join("CMakeLists.txt")).unwrap();
            root
        }
        "cmake-symlink-loop" => {
            let root = dir.join("tree");
            std::fs::create_dir_all(root.join("cmake")).unwrap();
            std::os::unix::fs::symlink("loop-b", root.join("CMakeLists.txt")).unwrap();
            std::os::unix::fs::symlink("CMakeLists.txt", root.join("loop-b")).unwrap();
            root
        }
        "cmake-include-recursion" => {
            let root = tree_with_cmake(dir, b"include(a.cmake)\n");
            std::fs::write(root.join("a.cmake"), "include(b.cmake)\n").unwrap();
            std::fs::write(
                root.join("b.cmake"),
                format!("include(FetchContent)\n{DECLARE}include(a.cmake)\n"),
            )
            .unwrap();
            root
        }
        "cmake-many-ifs" => {
            // 50,000 conditions on an input (0.7 MB): forks up to the limit, joins after.
            let mut text = b"include(FetchContent)\n".to_vec();
            for _ in 0..50_000 {
                text.extend_from_slice(b"if(A)\nendif()\n");
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-step-budget" => {
            // Three million loop iterations: over the budget of commands.
            let text = format!(
                "include(FetchContent)\nforeach(i RANGE 3000000)\n  set(X ${{i}})\nendforeach()\n{DECLARE}"
            );
            tree_with_cmake(dir, text.as_bytes())
        }
        "cmake-million-ifs" => {
            // A million: over the size cap.
            let mut text = Vec::new();
            for _ in 0..1_000_000 {
                text.extend_from_slice(b"if(A)\nendif()\n");
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-nested-ifs" => {
            // 200,000 nested conditions (no stack may grow with them).
            let mut text = b"include(FetchContent)\n".to_vec();
            for _ in 0..200_000 {
                text.extend_from_slice(b"if(A)\n");
            }
            for _ in 0..200_000 {
                text.extend_from_slice(b"endif()\n");
            }
            text.extend_from_slice(DECLARE.as_bytes());
            tree_with_cmake(dir, &text)
        }
        "cmake-unterminated-if" => tree_with_cmake(
            dir,
            format!("include(FetchContent)\nif(A)\n{DECLARE}").as_bytes(),
        ),
        "cmake-unterminated-function" => tree_with_cmake(
            dir,
            format!("include(FetchContent)\nfunction(f)\n{DECLARE}").as_bytes(),
        ),
        "cmake-directory-symlink-loop" => {
            // A directory linking to its parent: walking the tree's CMake files must end.
            let root = tree_with_cmake(dir, format!("include(FetchContent)\n{DECLARE}").as_bytes());
            std::fs::create_dir_all(root.join("third_party")).unwrap();
            std::os::unix::fs::symlink("..", root.join("third_party/up")).unwrap();
            root
        }
        "cmake-declaration-never-reached" => tree_with_cmake(
            dir,
            format!("include(FetchContent)\nif(FALSE)\n{DECLARE}endif()\n").as_bytes(),
        ),
        // ---- wheels ----
        "wheel-truncated" => {
            let w = good_wheel(dir);
            let bytes = std::fs::read(&w).unwrap();
            std::fs::write(&w, &bytes[..bytes.len() / 2]).unwrap();
            w
        }
        "wheel-empty-file" => {
            let w = dir.join("vllm-0.30.0-py3-none-any.whl");
            std::fs::write(&w, b"").unwrap();
            w
        }
        "wheel-not-a-zip" => {
            let w = dir.join("vllm-0.30.0-py3-none-any.whl");
            std::fs::write(&w, b"#!/bin/sh\necho this is not a wheel\n").unwrap();
            w
        }
        "wheel-path-traversal" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"../../evil.py!!!");
            w
        }
        "wheel-absolute-path" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"/etc/cron.d/evil");
            w
        }
        "wheel-backslash-path" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"..\\..\\evil.py!!!");
            w
        }
        "wheel-drive-letter" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"C:/Windows/x.py!");
            w
        }
        "wheel-duplicate-member" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"vllm/_version.py");
            w
        }
        "wheel-non-utf8-name" => {
            let w = good_wheel(dir);
            patch_file(&w, b"vllm/__init__.py", b"vllm/__init\xff\xfe.py");
            w
        }
        "wheel-declared-size-bomb" => {
            let w = good_wheel(dir);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            bytes[at + 24..at + 28].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-deflate-bomb" => {
            let mut files = vllm_wheel_files();
            files.push((
                "vllm/vllm_flash_attn/cute/bomb.py".into(),
                vec![b' '; 256 << 20],
            ));
            wheel(dir, &files)
        }
        "wheel-nested-archive" => {
            // A zip bomb inside the wheel: pinprobe never opens archives inside archives.
            let inner_dir = dir.join("inner");
            std::fs::create_dir_all(&inner_dir).unwrap();
            let inner = wheel(&inner_dir, &[("zeros.py".to_string(), vec![0u8; 64 << 20])]);
            let mut files = vllm_wheel_files();
            files.push((
                "vllm/vllm_flash_attn/cute/nested.whl".into(),
                std::fs::read(inner).unwrap(),
            ));
            wheel(dir, &files)
        }
        "wheel-member-over-cap" => {
            // 300 KB of incompressible bytes declared as 100 MB: a plausible ratio, over the cap.
            let mut noise = Vec::with_capacity(300_000);
            let mut x: u64 = 0x9e3779b97f4a7c15;
            while noise.len() < 300_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                noise.extend_from_slice(&x.to_le_bytes());
            }
            let mut files = vllm_wheel_files();
            for (name, bytes) in files.iter_mut() {
                if name.ends_with("flash_fwd_sm90.py") {
                    *bytes = noise.clone();
                }
            }
            let w = wheel(dir, &files);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            bytes[at + 24..at + 28].copy_from_slice(&(100u32 << 20).to_le_bytes());
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-inflates-past-declared-size" => {
            let w = good_wheel(dir);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            let size = u32::from_le_bytes(bytes[at + 24..at + 28].try_into().unwrap());
            bytes[at + 24..at + 28].copy_from_slice(&(size - 10).to_le_bytes());
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-crc-mismatch" => {
            let w = good_wheel(dir);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            bytes[at + 16] ^= 0xff;
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-encrypted-member" => {
            let w = good_wheel(dir);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            bytes[at + 8] |= 1;
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-unsupported-compression" => {
            let w = good_wheel(dir);
            let mut bytes = std::fs::read(&w).unwrap();
            let at = central_entry_of(&bytes, "flash_fwd_sm90.py");
            bytes[at + 10..at + 12].copy_from_slice(&99u16.to_le_bytes());
            std::fs::write(&w, bytes).unwrap();
            w
        }
        "wheel-record-disagrees" => {
            // The fixed shape shipped, but RECORD was written for the buggy file.
            let mut files = vllm_wheel_files();
            for (name, bytes) in files.iter_mut() {
                if name.ends_with("flash_fwd_sm90.py") {
                    *bytes = fwd_sm90(Sm90Call::Fixed)
                        .replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
                        .into_bytes();
                }
            }
            wheel(dir, &files)
        }
        "wheel-without-vllm" => wheel(
            dir,
            &with_dist_info(
                "requests",
                "2.0.0",
                vec![("requests/__init__.py".into(), b"".to_vec())],
            ),
        ),
        "wheel-garbage-metadata" => {
            let mut files = vllm_wheel_files();
            for (name, bytes) in files.iter_mut() {
                if name.ends_with("METADATA") {
                    *bytes = (0..=255u8).cycle().take(4096).collect();
                }
            }
            wheel(dir, &files)
        }
        // ---- installed environments ----
        "site-fifo" => {
            let site = site_packages(dir);
            let p = site.join(SM90_IN_SITE);
            std::fs::remove_file(&p).unwrap();
            mkfifo(&p);
            site
        }
        "site-dev-zero" => {
            let site = site_packages(dir);
            let p = site.join("vllm/_version.py");
            std::fs::remove_file(&p).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            site
        }
        "site-symlink-outside" => {
            let site = site_packages(dir);
            let outside = dir.join("elsewhere.py");
            std::fs::write(&outside, fwd_sm90(Sm90Call::Fixed)).unwrap();
            let p = site.join(SM90_IN_SITE);
            std::fs::remove_file(&p).unwrap();
            std::os::unix::fs::symlink(&outside, &p).unwrap();
            site
        }
        "site-directory-symlink-loop" => {
            let site = site_packages(dir);
            std::os::unix::fs::symlink(".", site.join("vllm/vllm_flash_attn/cute/again")).unwrap();
            std::os::unix::fs::symlink("../..", site.join("vllm/vllm_flash_attn/up")).unwrap();
            site
        }
        "site-sparse-huge-file" => {
            let site = site_packages(dir);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(site.join(SM90_IN_SITE))
                .unwrap();
            f.set_len(1 << 30).unwrap();
            site
        }
        // ---- rules ----
        "rules-deep-nesting" => {
            let rules = dir.join("rules");
            std::fs::create_dir_all(&rules).unwrap();
            let text = format!("id: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
            std::fs::write(rules.join("deep.yaml"), text).unwrap();
            rules
        }
        "rules-deep-mappings" => {
            let rules = dir.join("rules");
            std::fs::create_dir_all(&rules).unwrap();
            let text = format!("id: {}1{}\n", "{a: ".repeat(20_000), "}".repeat(20_000));
            std::fs::write(rules.join("deep.yaml"), text).unwrap();
            rules
        }
        "rules-not-utf8" => {
            let rules = dir.join("rules");
            std::fs::create_dir_all(&rules).unwrap();
            std::fs::write(rules.join("latin1.yaml"), b"id: PINPROBE-caf\xe9\n").unwrap();
            rules
        }
        "rules-huge-file" => {
            let rules = dir.join("rules");
            std::fs::create_dir_all(&rules).unwrap();
            let mut text =
                String::from("id: PINPROBE-9999-0009\nsummary: x\naffected: []\nnotes:\n");
            while text.len() < 20 << 20 {
                text.push_str("  - \"padding padding padding padding padding padding\"\n");
            }
            std::fs::write(rules.join("huge.yaml"), text).unwrap();
            rules
        }
        // ---- images ----
        "image-layer-digest-mismatch" => {
            let b = vllm_image(Compression::Gzip).build();
            let layout = oci_target(dir, &b);
            let top = b.layers.last().unwrap();
            let path = layout.join("blobs/sha256").join(build::hex_of(&top.digest));
            let mut bytes = std::fs::read(&path).unwrap();
            let n = bytes.len();
            bytes[n / 2] ^= 0x55;
            std::fs::write(&path, bytes).unwrap();
            layout
        }
        "image-truncated-gzip-layer" => {
            let image = vllm_image(Compression::Gzip);
            let mut blob = image.build().layers.last().unwrap().blob.clone();
            blob.truncate(blob.len() / 2);
            oci_target(dir, &with_top_blob(&image, blob))
        }
        "image-truncated-zstd-layer" => {
            let image = vllm_image(Compression::Zstd);
            let mut blob = image.build().layers.last().unwrap().blob.clone();
            blob.truncate(blob.len() / 2);
            oci_target(dir, &with_top_blob(&image, blob))
        }
        "image-garbage-gzip-layer" => {
            let image = vllm_image(Compression::Gzip);
            let mut blob = b"\x1f\x8b\x08\x00".to_vec();
            blob.extend((0..4096u32).map(|i| (i * 7919 % 251) as u8));
            oci_target(dir, &with_top_blob(&image, blob))
        }
        "image-missing-layer-blob" => {
            let b = vllm_image(Compression::Gzip).build();
            let layout = oci_target(dir, &b);
            let top = b.layers.last().unwrap();
            std::fs::remove_file(layout.join("blobs/sha256").join(build::hex_of(&top.digest)))
                .unwrap();
            layout
        }
        "image-manifest-without-layers" => {
            let b = vllm_image(Compression::Gzip).build();
            let mut m = manifest_of(&b);
            m.as_object_mut().unwrap().remove("layers");
            oci_with_manifest(dir, m)
        }
        "image-manifest-wrong-media-type" => {
            let b = vllm_image(Compression::Gzip).build();
            let mut m = manifest_of(&b);
            m["mediaType"] = serde_json::json!("application/vnd.docker.plugin.v1+json");
            oci_with_manifest(dir, m)
        }
        "image-layer-wrong-media-type" => {
            let b = vllm_image(Compression::Gzip).build();
            let mut m = manifest_of(&b);
            m["layers"][1]["mediaType"] = serde_json::json!("application/vnd.example.not-a-layer");
            oci_with_manifest(dir, m)
        }
        "image-blob-digest-traversal" => {
            let b = vllm_image(Compression::Gzip).build();
            let mut m = manifest_of(&b);
            m["layers"][1]["digest"] = serde_json::json!("sha256:../../../../../../etc/passwd");
            oci_with_manifest(dir, m)
        }
        "index-binary-truncated" | "index-binary-bit-flip" | "index-binary-absurd-count" => {
            let mut bytes = binary_index();
            match name {
                "index-binary-truncated" => bytes.truncate(bytes.len() - 30),
                "index-binary-bit-flip" => {
                    let at = bytes.len() - 50;
                    bytes[at] ^= 4;
                }
                _ => {
                    // 2^32-1 file names, under a checksum that fits (as a forger would write it).
                    use sha2::{Digest, Sha256};
                    let at = 64 + 4 + "flash-attention".len() + 4 + "/x".len();
                    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
                    let sum = Sha256::digest(&bytes[64..]);
                    bytes[32..64].copy_from_slice(&sum);
                }
            }
            let path = dir.join("cache/index/flash-attention.idx");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            dir.to_path_buf()
        }
        "image-index-not-json" => {
            let b = vllm_image(Compression::Gzip).build();
            let layout = oci_target(dir, &b);
            std::fs::write(layout.join("index.json"), b"{\"manifests\": [").unwrap();
            layout
        }
        "image-config-digest-mismatch" => {
            let b = vllm_image(Compression::Gzip).build();
            let layout = oci_target(dir, &b);
            let path = layout
                .join("blobs/sha256")
                .join(build::hex_of(&b.config_digest));
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend_from_slice(b" ");
            std::fs::write(&path, bytes).unwrap();
            layout
        }
        "image-layer-path-traversal" => {
            let tar = raw_tar(&[(
                "../../../../etc/cron.d/evil",
                tar::EntryType::Regular,
                "",
                b"* * * * * root sh\n",
            )]);
            oci_target(dir, &image_with_top_tar(tar))
        }
        "image-symlink-loop-in-layer" => {
            let a = format!("{SITE}/vllm/_version.py");
            let b = format!("{SITE}/vllm/loop");
            let tar = raw_tar(&[
                (a.as_str(), tar::EntryType::Symlink, "loop", b""),
                (b.as_str(), tar::EntryType::Symlink, "_version.py", b""),
            ]);
            oci_target(dir, &image_with_top_tar(tar))
        }
        "image-hardlink-to-missing-target" => {
            let sm90 = format!("{SITE}/{SM90_IN_SITE}");
            let tar = raw_tar(&[(
                sm90.as_str(),
                tar::EntryType::Link,
                "nowhere/missing.py",
                b"",
            )]);
            oci_target(dir, &image_with_top_tar(tar))
        }
        "image-whiteout-of-missing-path" => {
            let wh = format!("{SITE}/vllm/.wh.no_such_module.py");
            let wh2 = "no/such/dir/.wh..wh..opq".to_string();
            let tar = raw_tar(&[
                (wh.as_str(), tar::EntryType::Regular, "", b""),
                (wh2.as_str(), tar::EntryType::Regular, "", b""),
            ]);
            oci_target(dir, &image_with_top_tar(tar))
        }
        "image-gzip-bomb-layer" => {
            // 512 MiB of zeros in one uninteresting file: streamed past, never stored.
            let mut tar = tar::Builder::new(Vec::new());
            let mut h = tar::Header::new_gnu();
            h.set_size(512 << 20);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut h, "var/zeros", std::io::repeat(0).take(512 << 20))
                .unwrap();
            let tar = tar.into_inner().unwrap();
            let blob = build::compress(&tar, Compression::Gzip);
            let b = vllm_image(Compression::Gzip).build();
            let mut layers = b.layers.clone();
            layers.push(BuiltLayer {
                diff_id: build::digest(&tar),
                digest: build::digest(&blob),
                media_type: build::media_type(Compression::Gzip),
                blob,
                tar: Vec::new(),
                created_by: "RUN dd if=/dev/zero".into(),
            });
            oci_target(dir, &build::built_from("linux", "amd64", layers))
        }
        "image-interesting-file-over-cap" => {
            let sm90 = format!("{SITE}/{SM90_IN_SITE}");
            let big = vec![b'#'; 9 << 20];
            let tar = raw_tar(&[(sm90.as_str(), tar::EntryType::Regular, "", big.as_slice())]);
            oci_target(dir, &image_with_top_tar(tar))
        }
        "image-interesting-files-over-total-cap" => {
            // One 8 MiB METADATA file (under the per-file cap) and 80 hard links to it, each
            // kept as a copy: 648 MiB in all without the total cap, from an 8 MiB layer.
            let big = vec![b'#'; 8 << 20];
            let first = format!("{SITE}/pkg-1.0.dist-info/METADATA");
            let paths: Vec<String> = (0..80)
                .map(|i| format!("{SITE}/pkg{i}-1.0.dist-info/METADATA"))
                .collect();
            let mut entries: Vec<(&str, tar::EntryType, &str, &[u8])> =
                vec![(first.as_str(), tar::EntryType::Regular, "", big.as_slice())];
            entries.extend(
                paths
                    .iter()
                    .map(|p| (p.as_str(), tar::EntryType::Link, first.as_str(), &b""[..])),
            );
            oci_target(dir, &image_with_top_tar(raw_tar(&entries)))
        }
        "image-docker-save-truncated" => {
            let b = vllm_image(Compression::Gzip).build();
            let path = dir.join("image.tar");
            build::write_docker_save_legacy(&path, &b, false);
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
            path
        }
        "image-platform-missing" => {
            let layout = dir.join("layout");
            std::fs::create_dir_all(&layout).unwrap();
            let arm = vllm_image(Compression::Gzip).arch("arm64").build();
            build::write_oci_index(&layout, "latest", &[&arm]);
            layout
        }
        // ---- a git tree nested 30,000 directories deep (issue 20) ----
        "git-deep-tree-scan-rev" | "git-deep-tree-diff" => deep_git_tree(dir),
        // ---- tar extended headers with huge bodies (issue 20) ----
        "image-huge-gnu-longname" => oci_target(
            dir,
            &image_with_extended_header(tar::EntryType::GNULongName, 8 << 20),
        ),
        "image-huge-pax-header" => oci_target(
            dir,
            &image_with_extended_header(tar::EntryType::XHeader, 4 << 20),
        ),
        // ---- special files where a regular file is expected (issue 20) ----
        other if other.ends_with("-fifo") || other.ends_with("-dev-zero") => {
            special_case(other, dir)
        }
        other => panic!("no generator for case {other}"),
    }
}

/// Make sure stdout/stderr pipes are not left half-written by the caller.
pub fn flush() {
    let _ = std::io::stdout().flush();
}
