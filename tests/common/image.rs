//! Container images built for tests and benchmarks: layers written with the `tar` crate,
//! compressed (none, gzip, zstd), and laid out as OCI image-layout directories, multi-arch
//! indexes and `docker save` archives (legacy `manifest.json` form and the OCI form).
#![allow(dead_code)]

use sha2::{Digest as _, Sha256};
use std::io::Write;
use std::path::Path;

pub const SITE: &str = "usr/local/lib/python3.12/site-packages";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

#[derive(Debug, Clone)]
pub enum Node {
    File(Vec<u8>),
    Dir,
    Symlink(String),
    /// A hard link to another path of the same layer.
    Hardlink(String),
}

/// One layer: entries in tar order, how it is compressed, the build step that made it.
#[derive(Debug, Clone)]
pub struct Layer {
    pub entries: Vec<(String, Node)>,
    pub compression: Compression,
    pub created_by: String,
}

impl Layer {
    pub fn new(created_by: &str, compression: Compression) -> Self {
        Layer {
            entries: Vec::new(),
            compression,
            created_by: created_by.to_string(),
        }
    }

    pub fn file(mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.entries
            .push((path.to_string(), Node::File(bytes.into())));
        self
    }

    pub fn files(mut self, files: Vec<(String, Vec<u8>)>) -> Self {
        for (p, b) in files {
            self.entries.push((p, Node::File(b)));
        }
        self
    }

    pub fn dir(mut self, path: &str) -> Self {
        self.entries.push((path.to_string(), Node::Dir));
        self
    }

    pub fn symlink(mut self, path: &str, target: &str) -> Self {
        self.entries
            .push((path.to_string(), Node::Symlink(target.to_string())));
        self
    }

    pub fn hardlink(mut self, path: &str, target: &str) -> Self {
        self.entries
            .push((path.to_string(), Node::Hardlink(target.to_string())));
        self
    }

    /// `.wh.NAME` next to `path`: deletes `path` in older layers.
    pub fn whiteout(self, path: &str) -> Self {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let wh = if dir.is_empty() {
            format!(".wh.{name}")
        } else {
            format!("{dir}/.wh.{name}")
        };
        self.file(&wh, Vec::new())
    }

    /// `DIR/.wh..wh..opq`: hides everything older under `dir`.
    pub fn opaque(self, dir: &str) -> Self {
        self.file(&format!("{dir}/.wh..wh..opq"), Vec::new())
    }

    /// The uncompressed tar.
    pub fn tar(&self) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, node) in &self.entries {
            let mut h = tar::Header::new_gnu();
            h.set_mtime(0);
            match node {
                Node::File(bytes) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_mode(0o644);
                    h.set_size(bytes.len() as u64);
                    b.append_data(&mut h, path, bytes.as_slice()).unwrap();
                }
                Node::Dir => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(0o755);
                    h.set_size(0);
                    b.append_data(&mut h, path, std::io::empty()).unwrap();
                }
                Node::Symlink(target) => {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_mode(0o777);
                    h.set_size(0);
                    b.append_link(&mut h, path, target).unwrap();
                }
                Node::Hardlink(target) => {
                    h.set_entry_type(tar::EntryType::Link);
                    h.set_mode(0o644);
                    h.set_size(0);
                    b.append_link(&mut h, path, target).unwrap();
                }
            }
        }
        b.into_inner().unwrap()
    }
}

pub fn compress(tar: &[u8], c: Compression) -> Vec<u8> {
    match c {
        Compression::None => tar.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        Compression::Zstd => {
            ruzstd::encoding::compress_to_vec(tar, ruzstd::encoding::CompressionLevel::Fastest)
        }
    }
}

pub fn media_type(c: Compression) -> &'static str {
    match c {
        Compression::None => "application/vnd.oci.image.layer.v1.tar",
        Compression::Gzip => "application/vnd.oci.image.layer.v1.tar+gzip",
        Compression::Zstd => "application/vnd.oci.image.layer.v1.tar+zstd",
    }
}

pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

pub fn hex_of(digest: &str) -> &str {
    digest.trim_start_matches("sha256:")
}

/// An image's layers, base first, and its platform.
#[derive(Debug, Clone)]
pub struct Image {
    pub layers: Vec<Layer>,
    pub os: String,
    pub arch: String,
    /// The config's `config` object (`Env`, `Volumes`, `WorkingDir`); `{}` by default.
    pub process: serde_json::Value,
}

impl Image {
    pub fn new(layers: Vec<Layer>) -> Self {
        Image {
            layers,
            os: "linux".into(),
            arch: "amd64".into(),
            process: serde_json::json!({}),
        }
    }

    /// The config's `Env` (`KEY=VALUE` strings, as `ENV` steps leave them).
    pub fn env(mut self, env: &[&str]) -> Self {
        self.process["Env"] = serde_json::json!(env);
        self
    }

    /// The config's `Volumes` (`VOLUME` steps).
    pub fn volumes(mut self, volumes: &[&str]) -> Self {
        let map: serde_json::Map<String, serde_json::Value> = volumes
            .iter()
            .map(|v| (v.to_string(), serde_json::json!({})))
            .collect();
        self.process["Volumes"] = serde_json::Value::Object(map);
        self
    }

    pub fn arch(mut self, arch: &str) -> Self {
        self.arch = arch.to_string();
        self
    }

    pub fn build(&self) -> Built {
        let mut layers = Vec::new();
        for l in &self.layers {
            let tar = l.tar();
            let blob = compress(&tar, l.compression);
            layers.push(BuiltLayer {
                diff_id: digest(&tar),
                digest: digest(&blob),
                media_type: media_type(l.compression),
                tar,
                blob,
                created_by: l.created_by.clone(),
            });
        }
        built_with(&self.os, &self.arch, layers, self.process.clone())
    }
}

/// A built layer: its tar, the stored blob and their digests.
#[derive(Debug, Clone)]
pub struct BuiltLayer {
    pub tar: Vec<u8>,
    pub blob: Vec<u8>,
    pub diff_id: String,
    pub digest: String,
    pub media_type: &'static str,
    pub created_by: String,
}

/// An image ready to lay out: manifest, config and layer blobs.
#[derive(Debug, Clone)]
pub struct Built {
    pub manifest: Vec<u8>,
    pub manifest_digest: String,
    pub config: Vec<u8>,
    pub config_digest: String,
    pub layers: Vec<BuiltLayer>,
    pub platform: (String, String),
}

/// Assemble config and manifest around built layers. The history interleaves `empty_layer`
/// steps (ENV) so provenance must skip them.
pub fn built_from(os: &str, arch: &str, layers: Vec<BuiltLayer>) -> Built {
    built_with(os, arch, layers, serde_json::json!({}))
}

/// [`built_from`] with the config's `config` object (`Env`, `Volumes`, ...).
pub fn built_with(
    os: &str,
    arch: &str,
    layers: Vec<BuiltLayer>,
    process: serde_json::Value,
) -> Built {
    let mut history = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        history.push(serde_json::json!({"created_by": l.created_by}));
        history
            .push(serde_json::json!({"created_by": format!("ENV STEP={i}"), "empty_layer": true}));
    }
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": arch,
        "os": os,
        "config": process,
        "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|l| l.diff_id.clone()).collect::<Vec<_>>()},
        "history": history,
    }))
    .unwrap();
    let config_digest = digest(&config);
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": layers.iter().map(|l| serde_json::json!({
            "mediaType": l.media_type, "digest": l.digest, "size": l.blob.len()
        })).collect::<Vec<_>>(),
    }))
    .unwrap();
    Built {
        manifest_digest: digest(&manifest),
        manifest,
        config,
        config_digest,
        layers,
        platform: (os.to_string(), arch.to_string()),
    }
}

fn write_blob(dir: &Path, bytes: &[u8]) -> String {
    let d = digest(bytes);
    let path = dir.join("blobs/sha256").join(hex_of(&d));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if !path.exists() {
        std::fs::write(path, bytes).unwrap();
    }
    d
}

fn write_image_blobs(dir: &Path, b: &Built) {
    write_blob(dir, &b.config);
    write_blob(dir, &b.manifest);
    for l in &b.layers {
        write_blob(dir, &l.blob);
    }
}

/// An OCI image-layout directory holding each image under its tag.
pub fn write_oci(dir: &Path, tagged: &[(&str, &Built)]) {
    let mut manifests = Vec::new();
    for (tag, b) in tagged {
        write_image_blobs(dir, b);
        manifests.push(serde_json::json!({
            "mediaType": OCI_MANIFEST, "digest": b.manifest_digest, "size": b.manifest.len(),
            "annotations": {"org.opencontainers.image.ref.name": tag},
        }));
    }
    write_layout(dir, manifests);
}

/// An OCI layout whose `tag` names a multi-arch index of `images`. Returns the index digest.
pub fn write_oci_index(dir: &Path, tag: &str, images: &[&Built]) -> String {
    let entries: Vec<_> = images
        .iter()
        .map(|b| {
            write_image_blobs(dir, b);
            serde_json::json!({
                "mediaType": OCI_MANIFEST, "digest": b.manifest_digest, "size": b.manifest.len(),
                "platform": {"os": b.platform.0, "architecture": b.platform.1},
            })
        })
        .collect();
    let index = serde_json::to_vec(
        &serde_json::json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}),
    )
    .unwrap();
    let d = write_blob(dir, &index);
    write_layout(
        dir,
        vec![serde_json::json!({
            "mediaType": OCI_INDEX, "digest": d, "size": index.len(),
            "annotations": {"org.opencontainers.image.ref.name": tag},
        })],
    );
    d
}

fn write_layout(dir: &Path, manifests: Vec<serde_json::Value>) {
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec(
            &serde_json::json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}),
        )
        .unwrap(),
    )
    .unwrap();
}

fn tar_add(b: &mut tar::Builder<impl Write>, path: &str, bytes: &[u8]) {
    let mut h = tar::Header::new_ustar();
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_size(bytes.len() as u64);
    b.append_data(&mut h, path, bytes).unwrap();
}

/// `docker save` in the legacy form: `manifest.json`, `<config hex>.json`, `<n>/layer.tar`
/// (uncompressed). With `gzip`, the whole archive is gzip-compressed (`docker save | gzip`).
pub fn write_docker_save_legacy(path: &Path, b: &Built, gzip: bool) {
    let out: Box<dyn Write> = if gzip {
        Box::new(flate2::write::GzEncoder::new(
            std::fs::File::create(path).unwrap(),
            flate2::Compression::fast(),
        ))
    } else {
        Box::new(std::fs::File::create(path).unwrap())
    };
    let mut t = tar::Builder::new(out);
    let config_name = format!("{}.json", hex_of(&b.config_digest));
    let mut layer_names = Vec::new();
    for (i, l) in b.layers.iter().enumerate() {
        let name = format!("{:064x}/layer.tar", i + 1);
        tar_add(&mut t, &name, &l.tar);
        layer_names.push(name);
    }
    tar_add(&mut t, &config_name, &b.config);
    let manifest = serde_json::to_vec(&serde_json::json!([{
        "Config": config_name, "RepoTags": ["pinprobe/test:latest"], "Layers": layer_names,
    }]))
    .unwrap();
    tar_add(&mut t, "manifest.json", &manifest);
    t.into_inner().unwrap().flush().unwrap();
}

/// `docker save` in the OCI form Docker 25+ writes: `blobs/sha256/*`, `index.json`,
/// `oci-layout` and a `manifest.json` naming blob paths. Layers are stored uncompressed, as
/// Docker does.
pub fn write_docker_save_oci(path: &Path, image: &Image) {
    let mut plain = image.clone();
    for l in &mut plain.layers {
        l.compression = Compression::None;
    }
    let b = plain.build();
    let mut t = tar::Builder::new(std::fs::File::create(path).unwrap());
    let blob = |d: &str| format!("blobs/sha256/{}", hex_of(d));
    for l in &b.layers {
        tar_add(&mut t, &blob(&l.digest), &l.blob);
    }
    tar_add(&mut t, &blob(&b.config_digest), &b.config);
    tar_add(&mut t, &blob(&b.manifest_digest), &b.manifest);
    tar_add(&mut t, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#);
    let index = serde_json::json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [{
        "mediaType": OCI_MANIFEST, "digest": b.manifest_digest, "size": b.manifest.len(),
        "annotations": {"io.containerd.image.name": "docker.io/pinprobe/test:latest", "org.opencontainers.image.ref.name": "latest"},
    }]});
    tar_add(&mut t, "index.json", &serde_json::to_vec(&index).unwrap());
    let manifest = serde_json::json!([{
        "Config": blob(&b.config_digest), "RepoTags": ["pinprobe/test:latest"],
        "Layers": b.layers.iter().map(|l| blob(&l.digest)).collect::<Vec<_>>(),
    }]);
    tar_add(
        &mut t,
        "manifest.json",
        &serde_json::to_vec(&manifest).unwrap(),
    );
    t.into_inner().unwrap().flush().unwrap();
}

/// A vLLM install in `site`: dist-info (METADATA, RECORD listing every file), `_version.py`,
/// the bundled FA4 cute sources (`block_info`, `flash_fwd_sm90` in the given texts) and one
/// module an artifact scan does not need.
pub fn vllm_install(
    site: &str,
    version: &str,
    block_info: &str,
    fwd_sm90: &str,
) -> Vec<(String, Vec<u8>)> {
    let pkg = |rel: &str| format!("vllm/{rel}");
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (
            pkg("__init__.py"),
            b"from vllm._version import __version__\n".to_vec(),
        ),
        (
            pkg("_version.py"),
            format!("__version__ = version = '{version}'\n__commit_id__ = 'g1a2b3c4d'\n")
                .into_bytes(),
        ),
        (
            pkg("engine/llm_engine.py"),
            b"class LLMEngine: pass\n".to_vec(),
        ),
        (pkg("vllm_flash_attn/__init__.py"), b"".to_vec()),
        (
            pkg("vllm_flash_attn/cute/block_info.py"),
            block_info.as_bytes().to_vec(),
        ),
        (
            pkg("vllm_flash_attn/cute/flash_fwd_sm90.py"),
            fwd_sm90.as_bytes().to_vec(),
        ),
        (
            format!("vllm-{version}.dist-info/METADATA"),
            format!("Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n").into_bytes(),
        ),
    ];
    let record_name = format!("vllm-{version}.dist-info/RECORD");
    let mut record = String::new();
    for (p, b) in &files {
        record.push_str(&format!("{p},sha256={},{}\n", hex_of(&digest(b)), b.len()));
    }
    record.push_str(&format!("{record_name},,\n"));
    files.push((record_name, record.into_bytes()));
    files
        .into_iter()
        .map(|(p, b)| (format!("{site}/{p}"), b))
        .collect()
}
