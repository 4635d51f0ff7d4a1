//! Artifact builders: wheels (real zip files with METADATA, WHEEL and RECORD carrying sha256
//! hashes) and site-packages directories around FA4 sources written for these tests.

use super::{Sm90Call, block_info_new, fwd_sm90, write};
use base64::Engine;
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::Path;

/// Files of one distribution, relative to the environment root.
pub type Files = Vec<(String, Vec<u8>)>;

/// The FA4 cute files as vLLM ships them: under `vllm/vllm_flash_attn/cute/`, imports rewritten.
pub fn vllm_files(version: &str, call: Sm90Call) -> Files {
    let rewrite = |s: String| {
        s.replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
            .into_bytes()
    };
    vec![
        ("vllm/__init__.py".into(), b"".to_vec()),
        (
            "vllm/_version.py".into(),
            format!(
                "__version__ = version = '{version}'\n__commit_id__ = commit_id = 'g0a1b2c3d4'\n"
            )
            .into_bytes(),
        ),
        ("vllm/vllm_flash_attn/__init__.py".into(), b"".to_vec()),
        ("vllm/vllm_flash_attn/cute/__init__.py".into(), b"".to_vec()),
        (
            "vllm/vllm_flash_attn/cute/block_info.py".into(),
            rewrite(block_info_new()),
        ),
        (
            "vllm/vllm_flash_attn/cute/flash_fwd_sm90.py".into(),
            rewrite(fwd_sm90(call)),
        ),
    ]
}

/// Standalone flash-attn-4 files (`flash_attn/cute/`).
pub fn fa4_files(call: Sm90Call) -> Files {
    vec![
        ("flash_attn/__init__.py".into(), b"".to_vec()),
        ("flash_attn/cute/__init__.py".into(), b"".to_vec()),
        (
            "flash_attn/cute/block_info.py".into(),
            block_info_new().into_bytes(),
        ),
        (
            "flash_attn/cute/flash_fwd_sm90.py".into(),
            fwd_sm90(call).into_bytes(),
        ),
    ]
}

pub fn record_line(path: &str, bytes: &[u8]) -> String {
    let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
    format!("{path},sha256={hash},{}\n", bytes.len())
}

/// The dist-info files (METADATA, WHEEL, RECORD) for `files`.
pub fn with_dist_info(name: &str, version: &str, mut files: Files) -> Files {
    let dist_info = format!("{}-{version}.dist-info", name.replace('-', "_"));
    files.push((
        format!("{dist_info}/METADATA"),
        format!(
            "Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA test distribution.\n"
        )
        .into_bytes(),
    ));
    files.push((
        format!("{dist_info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: pinprobe-tests\nRoot-Is-Purelib: false\n".to_vec(),
    ));
    let mut record: String = files.iter().map(|(p, b)| record_line(p, b)).collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    files.push((format!("{dist_info}/RECORD"), record.into_bytes()));
    files
}

pub fn write_wheel(path: &Path, files: &Files) {
    let file = std::fs::File::create(path).expect("create wheel");
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(name.as_str(), options).expect("start file");
        zip.write_all(bytes).expect("write member");
    }
    zip.finish().expect("finish zip");
}

pub fn write_tree(root: &Path, files: &Files) {
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }
}

/// Replace every occurrence of `from` by `to` (same length) in a file's bytes.
pub fn patch_bytes(path: &Path, from: &[u8], to: &[u8]) -> usize {
    assert_eq!(from.len(), to.len());
    let mut bytes = std::fs::read(path).expect("read");
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
    std::fs::write(path, bytes).expect("write");
    n
}

#[allow(dead_code)]
pub fn touch(root: &Path, rel: &str, text: &str) {
    write(root, rel, text);
}
