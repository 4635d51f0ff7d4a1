//! Container images: images built here (tar layers around small vLLM-shaped files), laid out as
//! OCI directories, `docker save` archives and pushed to a real registry, then merged by
//! `pinprobe::view::image` (whiteouts, early stop, provenance) and scanned through the CLI; faults
//! from a loopback server must each be one line and exit 2.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../common/mod.rs"]
mod common;

use common::image as build;
#[allow(unused_imports)]
use common::require;
mod fault;
mod fleet_cache;
mod front;
mod image_elf;
mod python_path;
mod reference;
mod registry;
mod resume;
mod sources;
mod tags;

use build::{Compression, Image, Layer, SITE};
use common::{Pinprobe, Run, Sm90Call, block_info_new, fwd_sm90};
use pinprobe::view::View;
use pinprobe::view::image::{self, Merged, Options};
use std::path::Path;
use std::time::Duration;

const VERSION_PY: &str = "usr/local/lib/python3.12/site-packages/vllm/_version.py";
const RECORD: &str = "usr/local/lib/python3.12/site-packages/vllm-0.30.0.dist-info/RECORD";
const SM90: &str =
    "usr/local/lib/python3.12/site-packages/vllm/vllm_flash_attn/cute/flash_fwd_sm90.py";

fn vllm(version: &str) -> Vec<(String, Vec<u8>)> {
    build::vllm_install(SITE, version, &block_info_new(), &fwd_sm90(Sm90Call::Buggy))
}

fn base_layer() -> Layer {
    Layer::new("ADD rootfs.tar / # base", Compression::Gzip)
        .dir("etc")
        .file("etc/os-release", "ID=debian\n")
        .file("usr/bin/python3", vec![0x7f; 4096])
        .file("usr/local/lib/python3.12/os.py", "import sys\n")
}

/// Base, the vLLM install, an unrelated app layer on top (zstd).
fn standard() -> Image {
    Image::new(vec![
        base_layer(),
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
        Layer::new("COPY app /app", Compression::Zstd).file("app/main.py", "print('hi')\n"),
    ])
}

fn oci(dir: &Path, image: &Image, tag: &str) -> String {
    build::write_oci(dir, &[(tag, &image.build())]);
    format!("oci:{}:{tag}", dir.display())
}

fn open(target: &str, opts: &Options) -> Merged {
    image::open(target, opts).unwrap_or_else(|e| panic!("{e}"))
}

/// The default: every layer is read.
fn all_layers() -> Options {
    Options {
        fast_layers: false,
        ..Options::default()
    }
}

/// `--fast-layers`: the RECORD-based early stop, an assumption the report states.
fn fast() -> Options {
    Options {
        fast_layers: true,
        ..Options::default()
    }
}

fn text(m: &Merged, path: &str) -> String {
    String::from_utf8(
        m.view
            .read(path)
            .unwrap()
            .unwrap_or_else(|| panic!("{path} kept")),
    )
    .unwrap()
}

#[test]
fn oci_layout_merges_layers_and_records_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let target = oci(dir.path(), &standard(), "v1");
    let m = open(&target, &fast());
    assert!(text(&m, VERSION_PY).contains("0.30.0"));
    assert!(text(&m, SM90).contains("self.is_split_kv"));
    assert!(m.view.read(RECORD).unwrap().is_some());
    // Only what an artifact scan needs is kept.
    assert!(
        m.view
            .read(&format!("{SITE}/vllm/engine/llm_engine.py"))
            .unwrap()
            .is_none()
    );
    assert!(m.view.read("etc/os-release").unwrap().is_none());
    // Provenance: the install layer, its history step (empty ENV steps skipped).
    let layer = m.info.layer_of(VERSION_PY).expect("provenance");
    assert_eq!(layer.index, 1);
    assert_eq!(
        layer.created_by.as_deref(),
        Some("RUN pip install vllm==0.30.0")
    );
    assert_eq!(
        m.info.layers[2].created_by.as_deref(),
        Some("COPY app /app")
    );
    assert_eq!(m.info.platform.as_deref(), Some("linux/amd64"));
    // Early stop: the top layer, then the install layer; the base is never read.
    assert_eq!(m.info.layers_scanned, 2);
    assert!(
        m.info
            .stopped_early
            .as_deref()
            .unwrap()
            .contains("vllm-0.30.0.dist-info")
    );
    assert!(!m.info.layers[0].scanned);
    let all = open(&target, &all_layers());
    assert_eq!(all.info.layers_scanned, 3);
    assert!(all.info.stopped_early.is_none());
    assert_eq!(all.view.len(), m.view.len());
    // The default reads every layer.
    assert_eq!(open(&target, &Options::default()).info.layers_scanned, 3);
}

#[test]
fn early_stop_reads_only_the_top_layer_when_it_holds_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let image = Image::new(vec![
        base_layer(),
        Layer::new("RUN apt-get install -y build-essential", Compression::Gzip)
            .file("usr/share/doc/x", vec![b'x'; 100_000]),
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
    ]);
    let m = open(&oci(dir.path(), &image, "v1"), &fast());
    assert_eq!(m.info.layers_scanned, 1);
    let top = image.build().layers[2].blob.len() as u64;
    assert_eq!(m.info.bytes_read, top);
}

#[test]
fn whiteouts_delete_a_vllm_install() {
    let dir = tempfile::tempdir().unwrap();
    let image = Image::new(vec![
        base_layer(),
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
        Layer::new("RUN pip uninstall -y vllm", Compression::Gzip)
            .whiteout(&format!("{SITE}/vllm"))
            .whiteout(&format!("{SITE}/vllm-0.30.0.dist-info")),
    ]);
    let target = oci(dir.path(), &image, "v1");
    let m = open(&target, &fast());
    assert!(m.view.is_empty(), "{:?}", m.view.files_under(""));
    assert_eq!(m.info.layers_scanned, 1, "the deletion fixes the answer");
    assert!(m.info.stopped_early.unwrap().contains("(deleted)"));
    let all = open(&target, &all_layers());
    assert!(all.view.is_empty());
    assert_eq!(all.info.layers_scanned, 3);
}

#[test]
fn opaque_directory_hides_older_contents() {
    let dir = tempfile::tempdir().unwrap();
    let new_version = "__version__ = '0.33.0'\n";
    let image = Image::new(vec![
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
        Layer::new("COPY vllm/ site-packages/vllm/", Compression::None)
            .opaque(&format!("{SITE}/vllm"))
            .file(VERSION_PY, new_version),
    ]);
    let m = open(&oci(dir.path(), &image, "v1"), &all_layers());
    assert_eq!(text(&m, VERSION_PY), new_version);
    assert_eq!(m.info.files[VERSION_PY], 1);
    assert!(
        m.view.read(SM90).unwrap().is_none(),
        "hidden by the opaque whiteout"
    );
    // The dist-info sits outside the opaque directory and survives.
    assert_eq!(m.info.files[RECORD], 0);
}

#[test]
fn plain_gzip_and_zstd_layers_are_told_apart_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let files = vllm("0.30.0");
    let (a, b) = files.split_at(4);
    let (b, c) = b.split_at(2);
    let image = Image::new(vec![
        Layer::new("plain", Compression::None).files(a.to_vec()),
        Layer::new("gzip", Compression::Gzip).files(b.to_vec()),
        Layer::new("zstd", Compression::Zstd).files(c.to_vec()),
    ]);
    let m = open(&oci(dir.path(), &image, "v1"), &all_layers());
    for (path, bytes) in &files {
        if pinprobe::view::is_interesting(path) {
            assert_eq!(m.view.read(path).unwrap().as_ref(), Some(bytes), "{path}");
        }
    }
    assert_eq!(m.info.layers_scanned, 3);
}

#[test]
fn multi_arch_index_picks_the_platform() {
    let dir = tempfile::tempdir().unwrap();
    let amd = standard().build();
    let arm = Image::new(vec![
        Layer::new("RUN pip install vllm==0.33.0", Compression::Gzip).files(vllm("0.33.0")),
    ])
    .arch("arm64")
    .build();
    build::write_oci_index(dir.path(), "multi", &[&amd, &arm]);
    let target = format!("oci:{}:multi", dir.path().display());
    let m = open(&target, &Options::default());
    assert!(text(&m, VERSION_PY).contains("0.30.0"));
    assert_eq!(
        m.info.manifest.as_deref(),
        Some(amd.manifest_digest.as_str())
    );
    let arm_opts = Options {
        platform: "linux/arm64".into(),
        ..Options::default()
    };
    let m = open(&target, &arm_opts);
    assert!(text(&m, VERSION_PY).contains("0.33.0"));
    assert_eq!(m.info.platform.as_deref(), Some("linux/arm64"));
    let s390 = Options {
        platform: "linux/s390x".into(),
        ..Options::default()
    };
    let err = image::open(&target, &s390).unwrap_err().to_string();
    assert!(err.contains("no image for platform linux/s390x"), "{err}");
    assert!(err.contains("linux/amd64, linux/arm64"), "{err}");
}

#[test]
fn docker_save_archives_legacy_gzip_and_oci_forms() {
    let dir = tempfile::tempdir().unwrap();
    let image = standard();
    let built = image.build();
    let legacy = dir.path().join("legacy.tar");
    build::write_docker_save_legacy(&legacy, &built, false);
    let legacy_gz = dir.path().join("legacy.tar.gz");
    build::write_docker_save_legacy(&legacy_gz, &built, true);
    let oci_form = dir.path().join("oci-form.tar");
    build::write_docker_save_oci(&oci_form, &image);
    for path in [&legacy, &legacy_gz, &oci_form] {
        let m = open(path.to_str().unwrap(), &Options::default());
        assert!(
            text(&m, VERSION_PY).contains("0.30.0"),
            "{}",
            path.display()
        );
        let layer = m.info.layer_of(VERSION_PY).unwrap();
        assert_eq!(layer.index, 1);
        assert_eq!(
            layer.created_by.as_deref(),
            Some("RUN pip install vllm==0.30.0")
        );
        assert_eq!(m.info.layers_scanned, 3, "{}", path.display());
    }
    // Legacy layers are checked against the config's diff ids.
    let m = open(legacy.to_str().unwrap(), &Options::default());
    assert_eq!(m.info.layers[1].digest, built.layers[1].diff_id);
}

#[test]
fn a_corrupted_layer_is_a_digest_error() {
    let dir = tempfile::tempdir().unwrap();
    let built = standard().build();
    build::write_oci(dir.path(), &[("v1", &built)]);
    let top = &built.layers[2];
    let path = dir
        .path()
        .join("blobs/sha256")
        .join(build::hex_of(&top.digest));
    let mut bytes = top.blob.clone();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let target = format!("oci:{}:v1", dir.path().display());
    let err = image::open(&target, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with(&target), "{err}");
    assert!(
        err.contains(&format!("layer {} digest mismatch", top.digest)),
        "{err}"
    );
    let run = pinprobe(&["scan", &target], &[]);
    run.assert_error("digest mismatch");
}

#[test]
fn malformed_layouts_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.json"), "{\"manifests\": [").unwrap();
    let run = pinprobe(&["scan", &format!("oci:{}", dir.path().display())], &[]);
    run.assert_error("malformed index.json");
    let built = standard().build();
    build::write_oci(dir.path(), &[("v1", &built)]);
    let run = pinprobe(
        &["scan", &format!("oci:{}:nope", dir.path().display())],
        &[],
    );
    run.assert_error("no manifest tagged `nope`");
    let not_tar = dir.path().join("junk.tar");
    std::fs::write(&not_tar, vec![b'z'; 2000]).unwrap();
    let run = pinprobe(&["scan", not_tar.to_str().unwrap()], &[]);
    run.assert_error("junk.tar");
    let run = pinprobe(&["scan", "oci:/nonexistent/layout"], &[]);
    run.assert_error("/nonexistent/layout");
}

#[test]
fn cli_reports_layers_and_provenance_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let target = oci(dir.path(), &standard(), "v1");
    let run = pinprobe(&["scan", &target, "--format", "json"], &[]);
    run.assert_fa4_affected();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let t = &json["targets"][0];
    assert_eq!(t["kind"], "image");
    assert_eq!(t["target"], target.as_str());
    let image = &t["image"];
    assert_eq!(image["layers_scanned"], 3);
    assert_eq!(image["files"][VERSION_PY], 1);
    assert_eq!(
        image["layers"][1]["created_by"],
        "RUN pip install vllm==0.30.0"
    );
    assert_eq!(image["layers"][0]["scanned"], true);
    // --fast-layers stops after the install layer and says what it assumed.
    let run = pinprobe(&["scan", &target, "--format", "json", "--fast-layers"], &[]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let t = &json["targets"][0];
    assert_eq!(t["image"]["layers_scanned"], 2);
    assert_eq!(t["image"]["layers"][0]["scanned"], false);
    assert!(
        t["image"]["stopped_early"]
            .as_str()
            .unwrap()
            .contains("ASSUMED"),
        "{t:#}"
    );
    assert!(
        t["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("--fast-layers")),
        "{t:#}"
    );
}

#[test]
fn cli_finds_the_fa4_bug_in_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let target = oci(dir.path(), &standard(), "v1");
    let run = pinprobe(&["scan", &target, "--format", "json"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let findings = json["targets"][0]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "PINPROBE-2026-0001" && f["status"] == "affected"),
        "{findings:?}"
    );
    // The uninstalled image has nothing affected.
    let dir2 = tempfile::tempdir().unwrap();
    let image = Image::new(vec![
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
        Layer::new("RUN pip uninstall -y vllm", Compression::Gzip)
            .whiteout(&format!("{SITE}/vllm"))
            .whiteout(&format!("{SITE}/vllm-0.30.0.dist-info")),
    ]);
    let run = pinprobe(
        &["scan", &oci(dir2.path(), &image, "v1"), "--format", "json"],
        &[],
    );
    // Nothing left to decide: the scan fails closed (3), never clean, and nothing is affected.
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("\"affected\""), "{}", run.stdout);
}

// ---- the CLI ----

fn pinprobe(args: &[&str], env: &[(&str, &str)]) -> Run {
    Pinprobe::new(args).envs(env).run()
}

// ---- faults from a loopback server ----

fn fault_scan(mode: fault::Mode, extra: &[&str]) -> (Run, fault::FaultServer) {
    let server = fault::serve(standard().build(), mode);
    let target = format!("docker://{}/test/img:v1", server.addr);
    let mut args = vec![
        "scan",
        &target,
        "--insecure-registry",
        &server.addr,
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let run = pinprobe(&args, &[]);
    (run, server)
}

#[test]
fn fault_401_without_and_with_wrong_credentials() {
    let (run, _s) = fault_scan(fault::Mode::BasicAlways401, &[]);
    run.assert_error("401 Unauthorized: the registry needs credentials");
    let server = fault::serve(standard().build(), fault::Mode::BasicAlways401);
    let target = format!("docker://{}/test/img:v1", server.addr);
    let run = pinprobe(
        &["scan", &target, "--insecure-registry", &server.addr],
        &[
            ("PINPROBE_REGISTRY_USERNAME", "alice"),
            ("PINPROBE_REGISTRY_PASSWORD", "s3cr3t-never-printed"),
            ("PINPROBE_REGISTRY_HOST", &server.addr),
        ],
    );
    run.assert_error("credentials from the environment were rejected");
    assert!(!run.stderr.contains("s3cr3t"));
    assert!(
        server
            .seen_auth
            .lock()
            .unwrap()
            .iter()
            .any(|a| a.starts_with("Basic "))
    );
}

#[test]
fn fault_404_manifest() {
    let (run, _s) = fault_scan(fault::Mode::ManifestNotFound, &[]);
    run.assert_error("manifest v1: not found (404)");
}

#[test]
fn fault_truncated_blob() {
    let (run, _s) = fault_scan(fault::Mode::TruncatedBlob, &[]);
    run.assert_error("truncated");
}

#[test]
fn fault_digest_mismatch() {
    let (run, _s) = fault_scan(fault::Mode::SubstitutedBlob, &[]);
    run.assert_error("digest mismatch");
}

#[test]
fn fault_stalled_transfer_times_out() {
    let started = std::time::Instant::now();
    let (run, _s) = fault_scan(fault::Mode::StallBlob, &["--registry-timeout", "1"]);
    run.assert_error("stalled");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn fault_malformed_manifests() {
    let (run, _s) = fault_scan(fault::Mode::MalformedManifest, &[]);
    run.assert_error("malformed manifest v1");
    let (run, _s) = fault_scan(fault::Mode::ManifestWithoutLayers, &[]);
    run.assert_error("missing field `layers`");
}

#[test]
fn retries_429_and_503_then_succeeds() {
    for mode in [fault::Mode::TooManyThenOk, fault::Mode::UnavailableThenOk] {
        let (run, s) = fault_scan(mode, &[]);
        run.assert_fa4_affected();
        assert!(
            s.requests.load(std::sync::atomic::Ordering::SeqCst) >= 5,
            "{mode:?} retried"
        );
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(
            json["targets"][0]["image"]["files"][VERSION_PY], 1,
            "{mode:?}"
        );
    }
}

#[test]
fn bearer_token_challenge() {
    let built = standard().build();
    let server = fault::serve(built.clone(), fault::Mode::Bearer);
    let opts = Options {
        insecure_registries: vec![server.addr.clone()],
        timeout: Duration::from_secs(5),
        ..Options::default()
    };
    let m = open(&format!("docker://{}/test/img:v1", server.addr), &opts);
    assert!(text(&m, VERSION_PY).contains("0.30.0"));
    assert_eq!(
        m.info.manifest.as_deref(),
        Some(built.manifest_digest.as_str())
    );
    // By digest too.
    let m = open(
        &format!(
            "docker://{}/test/img@{}",
            server.addr, built.manifest_digest
        ),
        &opts,
    );
    assert_eq!(m.info.layers_scanned, 3);
}

#[test]
fn https_is_the_default() {
    let server = fault::serve(standard().build(), fault::Mode::Ok);
    let run = pinprobe(
        &[
            "scan",
            &format!("docker://{}/test/img:v1", server.addr),
            "--registry-timeout",
            "3",
        ],
        &[],
    );
    run.assert_error("--insecure-registry");
}

// ---- a real registry (docker-registry + skopeo) ----

fn registry_opts(host: &str) -> Options {
    Options {
        insecure_registries: vec![host.to_string()],
        timeout: Duration::from_secs(10),
        ..Options::default()
    }
}

#[test]
fn registry_pull_with_early_stop_whiteouts_zstd_and_index() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    // Several layers, the install on top: only the top layer is downloaded.
    let top = Image::new(vec![
        base_layer(),
        Layer::new("RUN apt-get install -y gcc", Compression::Gzip)
            .file("usr/bin/gcc", vec![1; 50_000]),
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
    ]);
    let built = top.build();
    let layout = dir.path().join("top");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci(&layout, &[("v1", &built)]);
    reg.push(&layout, "v1", "pp/top", None);
    // --fast-layers: a registry scan downloads only the install layer.
    let m = open(
        &reg.reference("pp/top", "v1"),
        &Options {
            fast_layers: true,
            ..registry_opts(&reg.host)
        },
    );
    assert!(text(&m, VERSION_PY).contains("0.30.0"));
    assert_eq!(m.info.layers_scanned, 1);
    assert_eq!(m.info.bytes_read, built.layers[2].blob.len() as u64);
    let all = open(
        &reg.reference("pp/top", "v1"),
        &Options {
            fast_layers: false,
            ..registry_opts(&reg.host)
        },
    );
    assert_eq!(
        all.info.bytes_read,
        built
            .layers
            .iter()
            .map(|l| l.blob.len() as u64)
            .sum::<u64>()
    );

    // A whiteout deleting the install, a zstd layer, in a multi-arch index.
    let amd = Image::new(vec![
        Layer::new("RUN pip install vllm==0.30.0", Compression::Gzip).files(vllm("0.30.0")),
        Layer::new("RUN pip uninstall -y vllm", Compression::Zstd)
            .whiteout(&format!("{SITE}/vllm"))
            .whiteout(&format!("{SITE}/vllm-0.30.0.dist-info")),
    ])
    .build();
    let arm = Image::new(vec![
        base_layer(),
        Layer::new("RUN pip install vllm==0.30.0", Compression::Zstd).files(vllm("0.30.0")),
    ])
    .arch("arm64")
    .build();
    let layout = dir.path().join("multi");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci_index(&layout, "multi", &[&amd, &arm]);
    reg.push(&layout, "multi", "pp/multi", None);
    let target = reg.reference("pp/multi", "multi");
    let m = open(&target, &registry_opts(&reg.host));
    assert!(
        m.view.is_empty(),
        "whited out: {:?}",
        m.view.files_under("")
    );
    assert_eq!(m.info.platform.as_deref(), Some("linux/amd64"));
    let m = open(
        &target,
        &Options {
            platform: "linux/arm64".into(),
            ..registry_opts(&reg.host)
        },
    );
    assert!(text(&m, SM90).contains("is_split_kv"));
    assert_eq!(m.info.layer_of(SM90).unwrap().index, 1);

    // The same image as an OCI directory and as a docker-save tarball gives the same files.
    let from_dir = open(
        &format!("oci:{}:v1", dir.path().join("top").display()),
        &Options::default(),
    );
    let saved = dir.path().join("top.tar");
    build::write_docker_save_legacy(&saved, &built, false);
    let from_tar = open(saved.to_str().unwrap(), &Options::default());
    let from_registry = open(&reg.reference("pp/top", "v1"), &registry_opts(&reg.host));
    for m in [&from_dir, &from_tar] {
        assert_eq!(m.info.files, from_registry.info.files);
    }
    // By digest.
    let digest = from_registry.info.manifest.clone().unwrap();
    let by_digest = open(
        &format!("docker://{}/pp/top@{digest}", reg.host),
        &registry_opts(&reg.host),
    );
    assert_eq!(by_digest.info.files, from_registry.info.files);
    // Through the CLI.
    let run = pinprobe(
        &[
            "scan",
            &reg.reference("pp/top", "v1"),
            "--insecure-registry",
            &reg.host,
            "--format",
            "json",
        ],
        &[],
    );
    run.assert_fa4_affected();
    let run = pinprobe(
        &[
            "scan",
            &reg.reference("pp/missing", "v1"),
            "--insecure-registry",
            &reg.host,
        ],
        &[],
    );
    run.assert_error("not found (404)");
}

#[test]
fn registry_basic_auth() {
    if !registry::available()
        || !common::require::require(
            std::process::Command::new("htpasswd")
                .arg("-h")
                .output()
                .is_ok(),
            "htpasswd (apache2-utils; .ci/run installs it)",
        )
    {
        return;
    }
    let reg = registry::Registry::start(Some(("alice", "wonderland")));
    let dir = tempfile::tempdir().unwrap();
    build::write_oci(dir.path(), &[("v1", &standard().build())]);
    reg.push(dir.path(), "v1", "pp/private", Some("alice:wonderland"));
    let target = reg.reference("pp/private", "v1");
    let base = [
        "scan",
        target.as_str(),
        "--insecure-registry",
        reg.host.as_str(),
        "--format",
        "json",
    ];
    let run = pinprobe(&base, &[]);
    run.assert_error("401 Unauthorized: the registry needs credentials");
    let run = pinprobe(
        &base,
        &[
            ("PINPROBE_REGISTRY_USERNAME", "alice"),
            ("PINPROBE_REGISTRY_PASSWORD", "looking-glass"),
            ("PINPROBE_REGISTRY_HOST", &reg.host),
        ],
    );
    run.assert_error("rejected");
    assert!(!run.stderr.contains("looking-glass"));
    let run = pinprobe(
        &base,
        &[
            ("PINPROBE_REGISTRY_USERNAME", "alice"),
            ("PINPROBE_REGISTRY_PASSWORD", "wonderland"),
            ("PINPROBE_REGISTRY_HOST", &reg.host),
        ],
    );
    run.assert_fa4_affected();
    assert!(!run.stdout.contains("wonderland"));
    // Credentials from a Docker config.json.
    let config = tempfile::tempdir().unwrap();
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:wonderland");
    std::fs::write(
        config.path().join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, reg.host),
    )
    .unwrap();
    let run = pinprobe(&base, &[("DOCKER_CONFIG", config.path().to_str().unwrap())]);
    run.assert_fa4_affected();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["targets"][0]["image"]["files"][VERSION_PY], 1);
}

#[test]
fn table_names_the_layer_that_brought_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = oci(dir.path(), &standard(), "v1");
    // Wide enough that the build step does not wrap inside its cell.
    let run = pinprobe(&["scan", &target], &[("COLUMNS", "400")]);
    assert_eq!(run.code, 1, "an affected image: {}", run.all());
    assert!(run.stdout.contains("layers read: 3 of 3"), "{}", run.stdout);
    assert!(
        run.stdout.contains("RUN pip install vllm==0.30.0"),
        "{}",
        run.stdout
    );
}
