//! Images as users name them (the prefixes Skopeo, Syft and Trivy users type), each form read
//! through the CLI and judged: `docker-archive:` (one image, or one of several by its
//! `RepoTags` name), `oci-archive:` (an OCI layout in a tar, by tag), `oci:`, `docker://` and
//! `registry:` against a real registry, and `docker-daemon:` / `podman:` through an engine API
//! stand-in on a unix socket in a temporary directory (it serves `GET /images/NAME/get` as the
//! Docker Engine API does, chunked, from a real `docker save` archive).
//!
//! Registry credentials from Docker's `credHelpers` and `credsStore`: a stand-in
//! `docker-credential-*` script on `PATH` answers the registry (a real one with htpasswd).

use crate::build::{self, Compression, Image, Layer};
use crate::registry;
use crate::{base_layer, pinprobe, standard};
use common::{Sm90Call, block_info_new, fwd_sm90};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use crate::common;

/// The same install with the fixed FA4 source: a clean image to tell two images apart.
fn fixed() -> Image {
    Image::new(vec![
        base_layer(),
        Layer::new("RUN pip install vllm==0.33.0", Compression::Gzip).files(build::vllm_install(
            build::SITE,
            "0.33.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Fixed),
        )),
    ])
}

fn add(t: &mut tar::Builder<std::fs::File>, name: &str, bytes: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    t.append_data(&mut h, name, bytes).unwrap();
}

/// A legacy `docker save` of two images (as `docker save a b` writes it): the buggy one as
/// `team/vllm:0.30.0`, the fixed one as `team/vllm:0.33.0` (listed first).
fn two_image_archive(path: &Path) {
    let mut t = tar::Builder::new(std::fs::File::create(path).unwrap());
    let mut manifest = Vec::new();
    for (tag, image) in [
        ("team/vllm:0.33.0", fixed()),
        ("team/vllm:0.30.0", standard()),
    ] {
        let b = image.build();
        let config = format!("{}.json", build::hex_of(&b.config_digest));
        add(&mut t, &config, &b.config);
        let mut layers = Vec::new();
        for l in &b.layers {
            let name = format!("{}/layer.tar", build::hex_of(&l.diff_id));
            add(&mut t, &name, &l.tar);
            layers.push(name);
        }
        manifest.push(serde_json::json!({"Config": config, "RepoTags": [tag], "Layers": layers}));
    }
    add(
        &mut t,
        "manifest.json",
        &serde_json::to_vec(&manifest).unwrap(),
    );
    t.into_inner().unwrap().flush().unwrap();
}

/// An OCI layout tagged `v1` (buggy) and `v2` (fixed), tarred as `skopeo copy oci-archive:`
/// writes it.
fn oci_archive(path: &Path) {
    let dir = tempfile::tempdir().unwrap();
    build::write_oci(
        dir.path(),
        &[("v1", &standard().build()), ("v2", &fixed().build())],
    );
    let mut t = tar::Builder::new(std::fs::File::create(path).unwrap());
    t.append_dir_all(".", dir.path()).unwrap();
    t.into_inner().unwrap().flush().unwrap();
}

fn scan(target: &str, env: &[(&str, &str)]) -> common::Run {
    pinprobe(&["scan", target, "--format", "json"], env)
}

#[test]
fn archives_and_layouts_by_every_prefix() {
    let dir = tempfile::tempdir().unwrap();
    // docker-archive: one image (the OCI form Docker 25+ writes, and the legacy form).
    let save = dir.path().join("save.tar");
    build::write_docker_save_oci(&save, &standard());
    scan(&format!("docker-archive:{}", save.display()), &[]).assert_fa4_affected();
    let legacy = dir.path().join("legacy.tar.gz");
    build::write_docker_save_legacy(&legacy, &standard().build(), true);
    scan(&format!("docker-archive:{}", legacy.display()), &[]).assert_fa4_affected();

    // docker-archive:PATH:REF picks one of several images by its RepoTags name; without a
    // name, the first is read and a warning names them.
    let two = dir.path().join("two.tar");
    two_image_archive(&two);
    scan(
        &format!("docker-archive:{}:team/vllm:0.30.0", two.display()),
        &[],
    )
    .assert_fa4_affected();
    let clean = scan(
        &format!("docker-archive:{}:team/vllm:0.33.0", two.display()),
        &[],
    );
    clean.assert_status("PINPROBE-2026-0001", "not_affected");
    let first = scan(&format!("docker-archive:{}", two.display()), &[]);
    first.assert_status("PINPROBE-2026-0001", "not_affected");
    assert!(first.stderr.contains("holds 2 images"), "{}", first.stderr);
    scan(
        &format!("docker-archive:{}:team/none:1", two.display()),
        &[],
    )
    .assert_error("no image named `team/none:1`");

    // oci-archive:PATH:TAG, and oci:DIR:TAG for the same layout unpacked.
    let archive = dir.path().join("layout.tar");
    oci_archive(&archive);
    scan(&format!("oci-archive:{}:v1", archive.display()), &[]).assert_fa4_affected();
    scan(&format!("oci-archive:{}:v2", archive.display()), &[])
        .assert_status("PINPROBE-2026-0001", "not_affected");
    scan(&format!("oci-archive:{}", archive.display()), &[])
        .assert_error("name one as oci:DIR:TAG");
    let layout = dir.path().join("layout");
    build::write_oci(&layout, &[("v1", &standard().build())]);
    scan(&format!("oci:{}:v1", layout.display()), &[]).assert_fa4_affected();

    // A missing file is one line naming it, as for a plain path.
    scan(
        &format!("docker-archive:{}/none.tar", dir.path().display()),
        &[],
    )
    .assert_error("none.tar");
}

// ---- docker-daemon: / podman: through a stand-in engine API on a unix socket ----

/// An engine API stand-in: answers `GET /images/NAME/get` for `name` with `archive` (chunked,
/// as the Docker daemon streams it) and 404 with the engine's JSON error for any other name.
/// Serves `connections` requests, then stops. Returns the requests it saw.
fn engine(
    socket: &Path,
    name: &'static str,
    archive: Vec<u8>,
    connections: usize,
) -> std::thread::JoinHandle<Vec<String>> {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for stream in listener.incoming().take(connections) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            reader.read_line(&mut request).unwrap();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            seen.push(path.clone());
            if path == format!("/images/{name}/get") {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                .unwrap();
                for chunk in archive.chunks(7919) {
                    write!(stream, "{:x}\r\n", chunk.len()).unwrap();
                    stream.write_all(chunk).unwrap();
                    stream.write_all(b"\r\n").unwrap();
                }
                stream.write_all(b"0\r\n\r\n").unwrap();
            } else {
                let body = br#"{"message":"reference does not exist"}"#;
                write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .unwrap();
                stream.write_all(body).unwrap();
            }
        }
        seen
    })
}

#[test]
fn docker_daemon_and_podman_images_come_through_the_engine_socket() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("save.tar");
    build::write_docker_save_oci(&save, &standard());
    let bytes = std::fs::read(&save).unwrap();

    // Docker: DOCKER_HOST=unix://SOCKET.
    let socket = dir.path().join("docker.sock");
    let server = engine(&socket, "team/vllm:0.30.0", bytes.clone(), 2);
    let host = format!("unix://{}", socket.display());
    scan("docker-daemon:team/vllm:0.30.0", &[("DOCKER_HOST", &host)]).assert_fa4_affected();
    scan("docker-daemon:team/other:1", &[("DOCKER_HOST", &host)])
        .assert_error("team/other:1: HTTP 404: reference does not exist");
    assert_eq!(
        server.join().unwrap(),
        ["/images/team/vllm:0.30.0/get", "/images/team/other:1/get"]
    );

    // Podman: CONTAINER_HOST=unix://SOCKET (its Docker-compatible API).
    let socket = dir.path().join("podman.sock");
    let server = engine(&socket, "localhost/vllm:latest", bytes, 1);
    let host = format!("unix://{}", socket.display());
    scan("podman:localhost/vllm:latest", &[("CONTAINER_HOST", &host)]).assert_fa4_affected();
    server.join().unwrap();

    // No socket: one line saying where it looked and what to do instead.
    let missing = format!("unix://{}", dir.path().join("none.sock").display());
    scan(
        "docker-daemon:team/vllm:0.30.0",
        &[("DOCKER_HOST", &missing)],
    )
    .assert_error("none.sock");
    scan(
        "docker-daemon:team/vllm:0.30.0",
        &[("DOCKER_HOST", "tcp://10.0.0.1:2375")],
    )
    .assert_error("only a local unix:// socket is read");
}

// ---- docker:// and registry: against a real registry; credential helpers ----

/// A `docker-credential-NAME` stand-in in `bin`: it answers `get` for `host` with
/// alice/`secret`, and says "credentials not found" for anything else (as Docker's helpers do).
fn helper(bin: &Path, name: &str, host: &str, secret: &str) -> PathBuf {
    let path = bin.join(format!("docker-credential-{name}"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n[ \"$1\" = get ] || exit 2\nread -r server\nif [ \"$server\" = \"{host}\" ]; then\n  printf '{{\"ServerURL\":\"%s\",\"Username\":\"alice\",\"Secret\":\"{secret}\"}}\\n' \"$server\"\nelse\n  echo 'credentials not found in native keychain'; exit 1\nfi\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn registry_references_and_docker_credential_helpers() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(Some(("alice", "wonderland")));
    let layout = tempfile::tempdir().unwrap();
    build::write_oci(layout.path(), &[("v1", &standard().build())]);
    reg.push(layout.path(), "v1", "pp/private", Some("alice:wonderland"));
    let bin = tempfile::tempdir().unwrap();
    helper(bin.path(), "pinprobe-test", &reg.host, "wonderland");
    helper(bin.path(), "pinprobe-store", &reg.host, "wonderland");
    helper(bin.path(), "pinprobe-wrong", &reg.host, "looking-glass");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let config = tempfile::tempdir().unwrap();
    let docker_config = config.path().to_str().unwrap();
    let run_with = |target: &str, config_json: &str| {
        std::fs::write(config.path().join("config.json"), config_json).unwrap();
        pinprobe(
            &[
                "scan",
                target,
                "--insecure-registry",
                &reg.host,
                "--format",
                "json",
            ],
            &[("PATH", &path), ("DOCKER_CONFIG", docker_config)],
        )
    };
    let docker = format!("docker://{}/pp/private:v1", reg.host);
    let registry = format!("registry:{}/pp/private:v1", reg.host);

    // credHelpers names a helper for this registry: both spellings of the reference pull.
    let helpers = format!(r#"{{"credHelpers":{{"{}":"pinprobe-test"}}}}"#, reg.host);
    for target in [&docker, &registry] {
        let run = run_with(target, &helpers);
        run.assert_fa4_affected();
        assert!(!run.all().contains("wonderland"), "{}", run.all());
    }
    // credsStore: the helper for every registry without its own.
    run_with(&docker, r#"{"credsStore":"pinprobe-store"}"#).assert_fa4_affected();
    // A helper for another registry leaves this one to the store.
    let other = r#"{"credHelpers":{"gcr.io":"pinprobe-wrong"},"credsStore":"pinprobe-store"}"#;
    run_with(&docker, other).assert_fa4_affected();
    // Wrong credentials from the helper: rejected, said as such, the secret never shown.
    let wrong = format!(r#"{{"credHelpers":{{"{}":"pinprobe-wrong"}}}}"#, reg.host);
    let run = run_with(&docker, &wrong);
    run.assert_error("credentials from the Docker config's credential helper were rejected");
    assert!(!run.all().contains("looking-glass"), "{}", run.all());
    // A helper that is not installed: the registry's 401, saying which helper failed.
    let absent = format!(r#"{{"credHelpers":{{"{}":"pinprobe-absent"}}}}"#, reg.host);
    let run = run_with(&docker, &absent);
    run.assert_error("the registry needs credentials");
    assert!(
        run.stderr.contains("docker-credential-pinprobe-absent"),
        "{}",
        run.stderr
    );
}
