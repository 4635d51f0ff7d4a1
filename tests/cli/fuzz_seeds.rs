//! Seeds for the fuzz targets (`fuzz/`), built from the same helpers the tests use so that no
//! binary seed is committed. `fuzz/run.sh` runs this test with `PINPROBE_FUZZ_SEEDS=DIR`; without
//! it the seeds are written to a temporary directory, which keeps the writer itself tested.

use crate::common;

use common::image as build;

use build::{Compression, Image, Layer, SITE};
use common::artifact::{fa4_files, vllm_files, with_dist_info, write_wheel};
use common::{FA_REPO, Sm90Call, block_info_new, fa_cmake, fwd_sm90};
use std::path::Path;

fn put(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(name), bytes).expect("write seed");
}

fn joined(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(&0u8)
}

fn write_seeds(out: &Path) {
    let root = env!("CARGO_MANIFEST_DIR");
    let demo = Path::new(root).join("fixtures/demo-vllm");
    let read = |p: &str| std::fs::read(demo.join(p)).expect("demo file");
    // cmake: root file NUL flash-attn module NUL another module.
    put(
        out,
        "cmake",
        "demo",
        &joined(&[
            &read("CMakeLists.txt"),
            &read("cmake/external_projects/vllm_flash_attn.cmake"),
            &read("cmake/external_projects/flashmla.cmake"),
        ]),
    );
    for (i, (repo, tag, patch)) in [
        (FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5", None),
        (FA_REPO, "${FA_TAG}", Some("fix.patch")),
        (
            "https://github.com/someone/flash-attention.git",
            "main",
            None,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let module = fa_cmake(repo, tag, patch);
        let root_file = "set(FA_TAG 506341a)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\nCPMAddPackage(\"gh:deepseek-ai/FlashMLA#v1.0\")\n";
        put(
            out,
            "cmake",
            &format!("fa{i}"),
            &joined(&[root_file.as_bytes(), module.as_bytes()]),
        );
    }

    // Wheels and the same files as an installed layout.
    let cases = [
        ("0.30.0", Sm90Call::Buggy),
        ("0.33.0", Sm90Call::Fixed),
        ("0.31.0", Sm90Call::LiteralFalse),
    ];
    for (i, (version, call)) in cases.into_iter().enumerate() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let whl = tmp.path().join("w.whl");
        write_wheel(
            &whl,
            &with_dist_info("vllm", version, vllm_files(version, call)),
        );
        put(
            out,
            "wheel",
            &format!("vllm{i}"),
            &std::fs::read(&whl).unwrap(),
        );
        let files = with_dist_info("vllm", version, vllm_files(version, call));
        let get = |suffix: &str| {
            files
                .iter()
                .find(|(p, _)| p.ends_with(suffix))
                .map(|(_, b)| b.as_slice())
                .unwrap_or_default()
        };
        put(
            out,
            "artifact_files",
            &format!("vllm{i}"),
            &joined(&[
                get("METADATA"),
                get("RECORD"),
                get("_version.py"),
                get("block_info.py"),
                get("flash_fwd_sm90.py"),
            ]),
        );
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let whl = tmp.path().join("fa4.whl");
    write_wheel(
        &whl,
        &with_dist_info("flash-attn-4", "4.0.0", fa4_files(Sm90Call::Buggy)),
    );
    put(out, "wheel", "fa4", &std::fs::read(&whl).unwrap());

    // Rules: every bundled rule file, and a signature alone (JSON is YAML).
    for entry in std::fs::read_dir(Path::new(root).join("rules")).expect("rules dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        put(out, "rule_yaml", &name, &std::fs::read(&path).unwrap());
    }
    let (db, _) = pinprobe::rules::load(None).expect("embedded rules");
    for loaded in &db.rules {
        if let Some(sig) = &loaded.rule.database_specific.signature {
            let json = serde_json::to_vec_pretty(sig).expect("signature json");
            put(out, "signature_yaml", &loaded.rule.id, &json);
        }
    }

    // Python for the FA4 signature: block_info.py NUL flash_fwd_sm90.py.
    for (i, call) in [Sm90Call::Buggy, Sm90Call::Fixed, Sm90Call::LiteralFalse]
        .into_iter()
        .enumerate()
    {
        put(
            out,
            "signature_python",
            &format!("shape{i}"),
            &joined(&[block_info_new().as_bytes(), fwd_sm90(call).as_bytes()]),
        );
    }

    // A fingerprint index naming the buggy files' blobs.
    let blob = |text: &str| {
        use sha1_like::blob_id;
        blob_id(text.as_bytes())
    };
    let index = serde_json::json!({
        "format": 1,
        "component": "flash-attention",
        "source": "/fuzz/flash-attention",
        "states": [
            {"tree": "0".repeat(40), "files": {
                "block_info.py": blob(&block_info_new()),
                "flash_fwd_sm90.py": blob(&fwd_sm90(Sm90Call::Buggy)),
            }},
            {"tree": "1".repeat(40), "files": {"block_info.py": blob("x")}},
        ],
        "commits": [
            ["506341a143fcabd4bb79052a7605ada727d6b3f5", 1_700_000_000, 0],
            ["6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46", 1_700_000_100, 1],
        ],
    });
    put(
        out,
        "index",
        "two-states",
        &serde_json::to_vec_pretty(&index).unwrap(),
    );
    // The same index in the binary format, as `index build` writes it.
    let json = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(json.path(), serde_json::to_vec(&index).unwrap()).unwrap();
    let loaded = pinprobe::pin::fingerprint::load(json.path()).unwrap();
    let (binary, _) = pinprobe::pin::fingerprint::codec::encode(&loaded);
    put(out, "index", "two-states-binary", &binary);
}

/// The rule feed: a signed envelope (by a fresh key), its public key, a trust file.
fn feed_seeds(out: &Path) {
    use pinprobe::rules::feed;
    let (secret, public) = feed::generate().expect("keygen");
    let key = feed::SecretKey::parse("seed", &secret).expect("key");
    let statement = feed::Statement {
        kind: feed::STATEMENT_TYPE.into(),
        serial: 1_900_000_000,
        db_digest: "sha256:00".into(),
        date: Some("2026-12-01".into()),
        rules: vec!["PINPROBE-2026-0001".into(), "X".into()],
        withdrawn: vec!["X".into()],
    };
    put(
        out,
        "rule_feed",
        "envelope",
        feed::sign(&statement, &key).as_bytes(),
    );
    put(out, "rule_feed", "public", public.as_bytes());
    put(
        out,
        "rule_feed",
        "trust",
        format!("# team feed\n{public}\n{}", feed::PROJECT_KEY).as_bytes(),
    );
}

/// `.pth` files as pip, setuptools, virtualenv and editable installs write them, and the line
/// endings and marks `site` reads differently from a plain line split.
fn pth_seeds(out: &Path) {
    for (name, text) in [
        ("paths", &b"# comment\n../src\n/opt/vllm\n\n"[..]),
        ("distutils", b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"),
        ("virtualenv", b"import _virtualenv\n"),
        ("editable", b"import __editable___vllm_0_1_finder; __editable___vllm_0_1_finder.install()\n"),
        ("insert", b"import sys; sys.path.insert(0, '/opt/elsewhere')\n"),
        ("cr", b"/opt/a\rimport\tsys\r\n/opt/b"),
        ("bom", "\u{feff}import sys\n".as_bytes()),
        ("latin1", b"/opt/\xe9t\xe9\n"),
    ] {
        put(out, "pth_file", name, text);
    }
}

/// Deflate streams as flate2 writes them at several levels (stored, fixed and dynamic blocks),
/// and one stored block written here.
fn inflate_seeds(out: &Path) {
    use std::io::Write;
    let text: Vec<u8> = b"dynamic symbols of a shared library; "
        .iter()
        .cycle()
        .take(20_000)
        .enumerate()
        .map(|(i, &b)| {
            if i % 97 == 0 {
                b'0' + (i % 10) as u8
            } else {
                b
            }
        })
        .collect();
    for level in [0u32, 1, 6, 9] {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(&text).expect("deflate");
        put(
            out,
            "inflate",
            &format!("level{level}"),
            &e.finish().expect("deflate"),
        );
    }
    put(
        out,
        "inflate",
        "stored",
        &[1, 3, 0, 0xfc, 0xff, b'a', b'b', b'c'],
    );
}

fn image_seeds(out: &Path) {
    let install = build::vllm_install(
        SITE,
        "0.30.0",
        &block_info_new(),
        &fwd_sm90(Sm90Call::Buggy),
    );
    let older = Layer::new("RUN pip install vllm", Compression::Gzip)
        .dir("usr")
        .symlink("usr/lib64", "lib")
        .files(install);
    let newer = Layer::new("RUN rm", Compression::Zstd)
        .whiteout(&format!("{SITE}/vllm/_version.py"))
        .opaque(&format!("{SITE}/vllm/engine"))
        .file(
            &format!("{SITE}/vllm/vllm_flash_attn/cute/flash_fwd_sm90.py"),
            fwd_sm90(Sm90Call::Fixed),
        );
    for (name, a, b) in [("gzip-zstd", &older, &newer), ("zstd-gzip", &newer, &older)] {
        let a = build::compress(&a.tar(), a.compression);
        let b = build::compress(&b.tar(), b.compression);
        let mut seed = (a.len().min(u16::MAX as usize) as u16)
            .to_le_bytes()
            .to_vec();
        seed.extend_from_slice(&a);
        seed.extend_from_slice(&b);
        put(out, "image_layers", name, &seed);
    }
    let plain = Layer::new("plain", Compression::None).file("etc/os-release", "ID=x\n");
    let mut seed = (plain.tar().len() as u16).to_le_bytes().to_vec();
    seed.extend_from_slice(&plain.tar());
    seed.extend_from_slice(&older.tar());
    put(out, "image_layers", "plain", &seed);

    let image = Image::new(vec![older.clone(), newer.clone()]);
    let built = image.build();
    put(out, "oci_manifest", "manifest", &built.manifest);
    put(out, "oci_manifest", "config", &built.config);
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    std::fs::create_dir_all(&layout).unwrap();
    build::write_oci_index(
        &layout,
        "latest",
        &[&built, &image.clone().arch("arm64").build()],
    );
    put(
        out,
        "oci_manifest",
        "index-json",
        &std::fs::read(layout.join("index.json")).unwrap(),
    );
    for entry in std::fs::read_dir(layout.join("blobs/sha256")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        if bytes.first() == Some(&b'{') && bytes.len() < 4096 {
            let name = path.file_name().unwrap().to_string_lossy()[..12].to_string();
            put(out, "oci_manifest", &name, &bytes);
        }
    }
    for (name, gzip) in [("legacy", false), ("legacy-gz", true)] {
        let path = tmp.path().join(name);
        build::write_docker_save_legacy(&path, &built, gzip);
        put(out, "image_archive", name, &std::fs::read(&path).unwrap());
    }
    let path = tmp.path().join("oci.tar");
    build::write_docker_save_oci(&path, &image);
    put(out, "image_archive", "oci", &std::fs::read(&path).unwrap());

    put(
        out,
        "ignore_file",
        "policy",
        b"ignore:\n  - rule: PINPROBE-2026-0001\n    component: flash-attention\n    pin: 506341a143fc\n    path: cmake/external_projects/\n    reason: \"not built for SM90 here; tracked in #123\"\n    expires: 2026-12-31\n  - rule: hygiene/short-sha\n    reason: x\n    expires: 2027-02-28\n",
    );
    put(out, "ignore_file", "empty", b"ignore: []\n");
    registry_and_tar_seeds(out, &built);
}

/// `registry_client`: raw HTTP responses separated by `\n==\n`; `tar_headers`: entry records
/// `[type][name length][name][body length LE16][body]` (type indexes `0 1 2 5 L K x g 0`).
fn registry_and_tar_seeds(out: &Path, built: &build::Built) {
    let ok = |content_type: &str, body: &[u8]| {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    };
    let manifest = ok(
        "application/vnd.oci.image.manifest.v1+json",
        &built.manifest,
    );
    let config = ok("application/octet-stream", &built.config);
    let layer = ok(
        "application/octet-stream",
        &built.layers.first().expect("a layer").blob,
    );
    let join = |parts: &[&[u8]]| parts.join(&b"\n==\n"[..]);
    let bearer = b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"http://@O/token\",service=\"r\",scope=\"repository:test/img:pull\"\r\nContent-Length: 0\r\n\r\n";
    let basic = b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\n\r\n";
    let redirect = b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://@O/v2/test/img/blobs/x\r\nContent-Length: 0\r\n\r\n";
    let token = ok("application/json", br#"{"token":"t0k3n"}"#);
    put(
        out,
        "registry_client",
        "plain",
        &join(&[&manifest, &config, &layer]),
    );
    put(
        out,
        "registry_client",
        "basic",
        &join(&[basic, &manifest, &config, &layer]),
    );
    put(
        out,
        "registry_client",
        "redirect",
        &join(&[&manifest, &config, redirect]),
    );
    put(
        out,
        "registry_client",
        "bearer-elsewhere",
        &join(&[bearer, &manifest, &config, &layer]),
    );
    put(out, "registry_client", "token", &join(&[&token]));

    let record = |kind: u8, name: &[u8], body: &[u8]| {
        let mut r = vec![kind, name.len() as u8];
        r.extend_from_slice(name);
        r.extend_from_slice(&(body.len() as u16).to_le_bytes());
        r.extend_from_slice(body);
        r
    };
    let long = "vllm/vllm_flash_attn/cute/".repeat(6) + "flash_fwd_sm90.py";
    // A PAX record: its length (three digits here) counts itself.
    let pax_body = format!(" path={long}\n");
    let pax = format!("{}{pax_body}", pax_body.len() + 3);
    let seeds: [(&str, Vec<u8>); 4] = [
        (
            "long-name",
            [
                record(4, b"././@LongLink", long.as_bytes()),
                record(0, b"ignored", fwd_sm90(Sm90Call::Buggy).as_bytes()),
            ]
            .concat(),
        ),
        (
            "pax-path",
            [
                record(6, b"pax", pax.as_bytes()),
                record(0, b"x", b"print(1)\n"),
            ]
            .concat(),
        ),
        (
            "long-link",
            [
                record(
                    0,
                    b"vllm-0.30.0.dist-info/METADATA",
                    b"Name: vllm\nVersion: 0.30.0\n",
                ),
                record(5, b"././@LongLink", b"vllm-0.30.0.dist-info/METADATA"),
                record(1, b"vllm-0.30.0.dist-info/RECORD", b""),
            ]
            .concat(),
        ),
        (
            "global-pax",
            [
                record(7, b"g", b"20 comment=globalxx\n"),
                record(0, b"vllm/_version.py", b"__version__ = '0.30.0'\n"),
            ]
            .concat(),
        ),
    ];
    for (name, bytes) in seeds {
        put(out, "tar_headers", name, &bytes);
    }
}

/// Git blob ids without a git dependency in the tests: `sha1("blob <len>\0" + bytes)`.
mod sha1_like {
    pub fn blob_id(bytes: &[u8]) -> String {
        let out = std::process::Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().expect("stdin").write_all(bytes)?;
                child.wait_with_output()
            })
            .expect("git hash-object");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

#[test]
fn fuzz_seeds_are_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = match std::env::var_os("PINPROBE_FUZZ_SEEDS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tmp.path().to_path_buf(),
    };
    write_seeds(&out);
    image_seeds(&out);
    feed_seeds(&out);
    pth_seeds(&out);
    inflate_seeds(&out);
    for target in [
        "cmake",
        "wheel",
        "rule_yaml",
        "signature_python",
        "signature_yaml",
        "index",
        "artifact_files",
        "image_layers",
        "image_archive",
        "oci_manifest",
        "ignore_file",
        "registry_client",
        "tar_headers",
        "rule_feed",
        "pth_file",
        "inflate",
    ] {
        let n = std::fs::read_dir(out.join(target)).expect(target).count();
        assert!(n > 0, "no seeds for {target}");
    }
}
