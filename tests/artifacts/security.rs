//! Security contracts (issue 6): nothing from a scanned artifact is executed or imported;
//! nothing is written outside the cache directory; registry credentials never appear in
//! anything pinprobe prints; TLS verification is on by default.

use crate::common;

use common::image as build;
#[allow(dead_code)]
#[path = "../image/fault.rs"]
mod fault;

use base64::Engine as _;
use build::{Compression, Image, Layer, SITE};
use common::artifact::{vllm_files, with_dist_info, write_tree, write_wheel};
use common::{FaHistory, Pinprobe, Run, Sm90Call, block_info_new, fwd_sm90};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Run the binary in a sandbox: HOME, XDG_CACHE_HOME, PINPROBE_CACHE, TMPDIR and DOCKER_CONFIG
/// under `sandbox`, PATH led by `sandbox/bin`.
fn pinprobe(sandbox: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let path = format!(
        "{}:{}",
        sandbox.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Pinprobe::new(args)
        .env("HOME", sandbox.join("home"))
        .env("XDG_CACHE_HOME", sandbox.join("xdg-cache"))
        .env("PINPROBE_CACHE", sandbox.join("cache"))
        .env("TMPDIR", sandbox.join("tmp"))
        .env("DOCKER_CONFIG", sandbox.join("docker"))
        .env("PATH", path)
        .dir(&sandbox.join("home"))
        .envs(env)
        .run()
}

fn sandbox() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for d in ["bin", "home", "xdg-cache", "tmp", "docker"] {
        std::fs::create_dir_all(tmp.path().join(d)).unwrap();
    }
    tmp
}

/// Every file under `root` (symbolic links as their target text) with a hash of its content.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let ft = entry.file_type().unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if ft.is_symlink() {
                out.insert(rel, format!("-> {:?}", std::fs::read_link(&path).unwrap()));
            } else if ft.is_dir() {
                out.insert(rel, "dir".into());
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(rel, hex::encode(Sha256::digest(&bytes)));
            }
        }
    }
    out
}

/// Python that leaves a marker file when imported or run.
fn payload(marker: &Path) -> String {
    format!(
        "open({:?}, 'w').write('imported')\nimport os\nos.system('touch {}')\n",
        marker.display().to_string(),
        marker.display()
    )
}

/// A vLLM 0.30.0 install whose every Python file, `.pth` file and `sitecustomize.py` would
/// leave `marker` if Python ever imported it; fake `python`, `python3` and `pip` on PATH would
/// leave it too.
fn booby_trapped(marker: &Path) -> Vec<(String, Vec<u8>)> {
    let trap = payload(marker);
    let mut files = vllm_files("0.30.0", Sm90Call::Buggy);
    for (name, bytes) in files.iter_mut() {
        if name.ends_with(".py") {
            let mut text = trap.clone().into_bytes();
            text.extend_from_slice(bytes);
            *bytes = text;
        }
    }
    files.push((
        "vllm.pth".into(),
        format!("import os; {}", trap.replace('\n', "; ")).into_bytes(),
    ));
    files.push(("sitecustomize.py".into(), trap.clone().into_bytes()));
    files.push(("usercustomize.py".into(), trap.into_bytes()));
    with_dist_info("vllm", "0.30.0", files)
}

fn fake_interpreters(sandbox: &Path, marker: &Path) {
    for name in ["python", "python3", "pip", "pip3", "uv"] {
        let path = sandbox.join("bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::process::Command::new("chmod")
            .args(["+x", path.to_str().unwrap()])
            .status()
            .unwrap();
    }
}

#[test]
fn scanning_never_imports_or_runs_artifact_code() {
    let sb = sandbox();
    let marker = sb.path().join("pwned");
    fake_interpreters(sb.path(), &marker);
    let files = booby_trapped(&marker);
    let site = sb.path().join("targets/site-packages");
    write_tree(&site, &files);
    let venv = sb.path().join("targets/venv");
    write_tree(&venv.join("lib/python3.12/site-packages"), &files);
    std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let whl = sb.path().join("targets/vllm-0.30.0-py3-none-any.whl");
    write_wheel(&whl, &files);
    let image = Image::new(vec![
        Layer::new("RUN pip install vllm", Compression::Gzip).files(
            files
                .iter()
                .map(|(p, b)| (format!("{SITE}/{p}"), b.clone()))
                .collect(),
        ),
    ]);
    let layout = sb.path().join("targets/layout");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci(&layout, &[("latest", &image.build())]);
    let oci = format!("oci:{}:latest", layout.display());
    for target in [
        site.to_str().unwrap(),
        venv.to_str().unwrap(),
        whl.to_str().unwrap(),
        oci.as_str(),
    ] {
        for format in ["table", "json", "sarif", "markdown"] {
            let run = pinprobe(sb.path(), &["scan", target, "--format", format], &[]);
            assert_eq!(run.code, 1, "{target} {format}: {}", run.all());
            assert!(!marker.exists(), "scanning {target} ran its code");
        }
    }
    // The check itself works (positive controls): a real Python importing the installed
    // package leaves the marker, and so does the fake interpreter on the sandbox's PATH.
    assert!(!marker.exists());
    if common::require::require(common::require::tool("python3"), "python3") {
        let out = std::process::Command::new("python3")
            .args(["-S", "-c", "import vllm"])
            .env("PYTHONPATH", &site)
            .current_dir(sb.path())
            .output()
            .expect("python3 runs");
        assert!(
            marker.exists(),
            "importing the trapped vllm did not leave the marker: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_file(&marker).expect("marker removed");
    }
    let fake = sb.path().join("bin/python3");
    let status = std::process::Command::new(&fake)
        .status()
        .expect("the fake interpreter runs");
    assert!(status.success());
    assert!(marker.exists(), "the fake python3 did not leave the marker");
}

#[test]
fn nothing_is_written_outside_the_cache() {
    let sb = sandbox();
    let targets = sb.path().join("targets");
    // A source tree, a git clone for ancestry and the index, a wheel, an environment, images.
    let fa = FaHistory::build(&targets.join("flash-attention"));
    let tree = targets.join("vllm");
    common::init(&tree);
    common::vllm_tree(&tree, common::FA_REPO, &fa.introduce);
    common::commit(&tree, "vllm");
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    let whl = targets.join("vllm-0.30.0-py3-none-any.whl");
    write_wheel(&whl, &files);
    write_tree(&targets.join("site-packages"), &files);
    let image = Image::new(vec![
        Layer::new("RUN pip install vllm", Compression::Zstd).files(build::vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        )),
    ]);
    let layout = targets.join("layout");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci(&layout, &[("latest", &image.build())]);
    let archive = targets.join("image.tar");
    build::write_docker_save_legacy(&archive, &image.build(), true);

    let before = snapshot(sb.path());
    let repo = format!("flash-attention={}", fa.dir.display());
    let oci = format!("oci:{}:latest", layout.display());
    let site = targets.join("site-packages");
    let runs: Vec<Vec<&str>> = vec![
        vec!["index", "build", "--repo", &repo],
        vec!["scan", tree.to_str().unwrap(), "--repo", &repo],
        vec!["scan", tree.to_str().unwrap(), "--rev", "HEAD"],
        vec!["scan", whl.to_str().unwrap(), "--format", "sarif"],
        vec![
            "scan",
            "--expect",
            tree.to_str().unwrap(),
            whl.to_str().unwrap(),
        ],
        vec!["scan", site.to_str().unwrap()],
        vec!["scan", &oci, "--format", "json"],
        vec!["scan", archive.to_str().unwrap()],
        vec!["rules", "test"],
    ];
    for args in &runs {
        let run = pinprobe(sb.path(), args, &[]);
        assert_ne!(run.code, 2, "{args:?}: {}", run.all());
    }
    let after = snapshot(sb.path());
    let mut problems = Vec::new();
    for (path, hash) in &before {
        match after.get(path) {
            Some(h) if h == hash => {}
            Some(_) => problems.push(format!("changed: {}", path.display())),
            None => problems.push(format!("removed: {}", path.display())),
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        if !path.starts_with("cache") {
            problems.push(format!("written outside the cache: {}", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        after.keys().any(|p| p.starts_with("cache/index")),
        "the index was built into the cache"
    );
}

// ---- registry credentials ----

fn standard() -> build::Built {
    Image::new(vec![
        Layer::new("RUN pip install vllm", Compression::Gzip).files(build::vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        )),
    ])
    .build()
}

const USER: &str = "alice-sec";
const SECRET: &str = "hunter2-Zq9-never-printed";

fn assert_no_secret(what: &str, run: &Run) {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{SECRET}"));
    for needle in [SECRET, &basic, &basic[..basic.len() - 4], "hunter2"] {
        assert!(
            !run.all().contains(needle),
            "{what}: `{needle}` printed in:\n{}",
            run.all()
        );
    }
}

#[test]
fn registry_credentials_never_appear_in_output() {
    let modes = [
        fault::Mode::Ok,
        fault::Mode::BasicAlways401,
        fault::Mode::Bearer,
        fault::Mode::ManifestNotFound,
        fault::Mode::TruncatedBlob,
        fault::Mode::SubstitutedBlob,
        fault::Mode::MalformedManifest,
        fault::Mode::ManifestWithoutLayers,
    ];
    let mut checked = 0;
    for mode in modes {
        for source in ["env", "docker-config", "docker-config-fields"] {
            for format in ["table", "json", "sarif", "markdown"] {
                let sb = sandbox();
                let server = fault::serve(standard(), mode);
                let mut env: Vec<(&str, &str)> = Vec::new();
                match source {
                    "env" => {
                        env.push(("PINPROBE_REGISTRY_USERNAME", USER));
                        env.push(("PINPROBE_REGISTRY_PASSWORD", SECRET));
                        env.push(("PINPROBE_REGISTRY_HOST", &server.addr));
                    }
                    "docker-config" => {
                        let auth = base64::engine::general_purpose::STANDARD
                            .encode(format!("{USER}:{SECRET}"));
                        std::fs::write(
                            sb.path().join("docker/config.json"),
                            serde_json::json!({"auths": {&server.addr: {"auth": auth}}})
                                .to_string(),
                        )
                        .unwrap();
                    }
                    _ => {
                        std::fs::write(
                            sb.path().join("docker/config.json"),
                            serde_json::json!({"auths": {&server.addr: {"username": USER, "password": SECRET}}})
                                .to_string(),
                        )
                        .unwrap();
                    }
                }
                env.push(("RUST_LOG", "trace"));
                env.push(("RUST_BACKTRACE", "1"));
                let target = format!("docker://{}/test/img:v1", server.addr);
                let run = pinprobe(
                    sb.path(),
                    &[
                        "scan",
                        &target,
                        "--insecure-registry",
                        &server.addr,
                        "--registry-timeout",
                        "5",
                        "--format",
                        format,
                    ],
                    &env,
                );
                assert_no_secret(&format!("{mode:?} {source} {format}"), &run);
                // The credentials were really offered (so the check means something).
                if mode == fault::Mode::BasicAlways401 {
                    assert!(
                        server
                            .seen_auth
                            .lock()
                            .unwrap()
                            .iter()
                            .any(|a| a.starts_with("Basic ")),
                        "{source}: credentials offered"
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8 * 3 * 4);
}

#[test]
fn credentials_in_a_docker_config_that_does_not_parse_are_not_echoed() {
    let sb = sandbox();
    let server = fault::serve(standard(), fault::Mode::BasicAlways401);
    std::fs::write(
        sb.path().join("docker/config.json"),
        format!(
            "{{\"auths\": {{\"{}\": {{\"auth\": \"{SECRET}\" ",
            server.addr
        ),
    )
    .unwrap();
    let target = format!("docker://{}/test/img:v1", server.addr);
    let run = pinprobe(
        sb.path(),
        &["scan", &target, "--insecure-registry", &server.addr],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.all());
    assert_no_secret("unparsable config.json", &run);
}

// ---- TLS ----

/// A loopback HTTPS server with a self-signed certificate for 127.0.0.1 that answers every
/// request 404. Returns its address and the certificate (PEM).
fn tls_server() -> (String, String) {
    use std::io::{Read, Write};
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let pem = cert.cert.pem();
    let der = rustls_pki_types::CertificateDer::from(cert.cert.der().to_vec());
    let key = rustls_pki_types::PrivateKeyDer::try_from(cert.key_pair.serialize_der()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der], key)
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(50).flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
                    match tls.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let _ = tls.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    (addr, pem)
}

#[test]
fn tls_verification_is_on_by_default() {
    let sb = sandbox();
    let (addr, pem) = tls_server();
    let target = format!("docker://{addr}/test/img:v1");
    let run = pinprobe(
        sb.path(),
        &["scan", &target, "--registry-timeout", "5"],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.all());
    assert_eq!(run.all().trim_end().lines().count(), 1, "{}", run.all());
    assert!(
        run.all().to_ascii_lowercase().contains("certificate"),
        "a TLS certificate error: {}",
        run.all()
    );
    // Trusting the certificate with --ca-file gets past TLS to the registry's answer (404).
    let ca = sb.path().join("ca.pem");
    std::fs::write(&ca, pem).unwrap();
    let run = pinprobe(
        sb.path(),
        &[
            "scan",
            &target,
            "--ca-file",
            ca.to_str().unwrap(),
            "--registry-timeout",
            "5",
        ],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        !run.all().to_ascii_lowercase().contains("certificate"),
        "{}",
        run.all()
    );
    assert!(run.all().contains("404"), "{}", run.all());
}

// ---- credentials go to the registry they belong to, and nowhere else (issue 20) ----

/// Whether any request `server` saw carried an `Authorization` header.
fn saw_credentials(server: &fault::FaultServer) -> Vec<String> {
    server
        .seen_auth
        .lock()
        .unwrap()
        .iter()
        .filter(|a| !a.is_empty())
        .cloned()
        .collect()
}

#[test]
fn a_redirect_targets_challenge_never_gets_the_registrys_credentials() {
    for (challenge, from_env) in [
        (fault::Mode::BasicAlways401, true),
        (fault::Mode::Bearer, true),
        (fault::Mode::BasicAlways401, false),
        (fault::Mode::Bearer, false),
    ] {
        let sb = sandbox();
        // The storage host the registry hands blobs to answers 401 with its own challenge
        // (a Bearer realm on itself, or Basic).
        let other = fault::serve(standard(), challenge);
        let registry =
            fault::serve_redirecting(standard(), fault::Mode::Ok, Some(other.addr.clone()));
        let mut env: Vec<(&str, &str)> = Vec::new();
        if from_env {
            env.extend([
                ("PINPROBE_REGISTRY_USERNAME", USER),
                ("PINPROBE_REGISTRY_PASSWORD", SECRET),
                ("PINPROBE_REGISTRY_HOST", registry.addr.as_str()),
            ]);
        } else {
            let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{SECRET}"));
            std::fs::write(
                sb.path().join("docker/config.json"),
                serde_json::json!({"auths": {&registry.addr: {"auth": auth}}}).to_string(),
            )
            .unwrap();
        }
        let target = format!("docker://{}/test/img:v1", registry.addr);
        let run = pinprobe(
            sb.path(),
            &[
                "scan",
                &target,
                "--insecure-registry",
                &registry.addr,
                "--insecure-registry",
                &other.addr,
                "--registry-timeout",
                "5",
            ],
            &env,
        );
        let what = format!("{challenge:?} env={from_env}");
        run.assert_error("credentials are sent only to the registry");
        assert!(run.stderr.contains(&other.addr), "{what}: {}", run.stderr);
        assert_eq!(saw_credentials(&other), Vec::<String>::new(), "{what}");
        assert!(
            other.requests.load(std::sync::atomic::Ordering::SeqCst) >= 1,
            "{what}: the redirect was followed"
        );
        assert_no_secret(&what, &run);
    }
}

#[test]
fn environment_credentials_go_only_to_the_host_they_name() {
    for host in [None, Some("registry.example:5000")] {
        let sb = sandbox();
        let server = fault::serve(standard(), fault::Mode::BasicAlways401);
        let mut env = vec![
            ("PINPROBE_REGISTRY_USERNAME", USER),
            ("PINPROBE_REGISTRY_PASSWORD", SECRET),
        ];
        if let Some(h) = host {
            env.push(("PINPROBE_REGISTRY_HOST", h));
        }
        let target = format!("docker://{}/test/img:v1", server.addr);
        let run = pinprobe(
            sb.path(),
            &["scan", &target, "--insecure-registry", &server.addr],
            &env,
        );
        run.assert_error("401 Unauthorized: the registry needs credentials");
        assert_eq!(saw_credentials(&server), Vec::<String>::new(), "{host:?}");
    }
    // Named: sent (and rejected by this server, which never accepts).
    let sb = sandbox();
    let server = fault::serve(standard(), fault::Mode::BasicAlways401);
    let target = format!("docker://{}/test/img:v1", server.addr);
    let run = pinprobe(
        sb.path(),
        &["scan", &target, "--insecure-registry", &server.addr],
        &[
            ("PINPROBE_REGISTRY_USERNAME", USER),
            ("PINPROBE_REGISTRY_PASSWORD", SECRET),
            ("PINPROBE_REGISTRY_HOST", &server.addr),
        ],
    );
    run.assert_error("credentials from the environment were rejected");
    assert!(
        saw_credentials(&server)
            .iter()
            .all(|a| a.starts_with("Basic "))
    );
    assert!(!saw_credentials(&server).is_empty());
}

#[test]
fn a_password_in_an_image_reference_is_refused_and_never_echoed() {
    for format in ["table", "json", "sarif", "markdown"] {
        let sb = sandbox();
        let server = fault::serve(standard(), fault::Mode::Ok);
        let target = format!("docker://{USER}:{SECRET}@{}/test/img:v1", server.addr);
        let run = pinprobe(
            sb.path(),
            &[
                "scan",
                &target,
                "--insecure-registry",
                &server.addr,
                "--format",
                format,
            ],
            &[("RUST_LOG", "trace"), ("RUST_BACKTRACE", "1")],
        );
        run.assert_error("credentials in an image reference are refused");
        assert!(
            run.stderr.contains("docker://<redacted>@"),
            "{}",
            run.stderr
        );
        assert_no_secret(format, &run);
        assert!(!run.all().contains(USER), "{}", run.all());
        assert_eq!(
            server.requests.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "nothing was sent"
        );
    }
}
