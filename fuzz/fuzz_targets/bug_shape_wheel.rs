//! Property: a wheel that ships the FA4 bug shape never evaluates `not_affected`. Structured
//! input (drawn with `arbitrary`'s `Unstructured`) builds a real wheel (zip, METADATA, WHEEL and
//! a RECORD with correct sha256 digests: digest checks stay on) holding vLLM's FA4 sources
//! whose SM90 `BlockInfo(...)` call keeps the bug: a non-literal `is_split_kv` (positional or
//! keyword, in several spellings) and no `num_splits=`, with the other arguments, comments,
//! strings, blank lines, aliases and the file's place varied. The truth comes from how the
//! wheel is built, so the FA4 finding must be `affected` or `unknown` (or the whole target
//! undecided, or an error): never `not_affected`, never absent.
#![no_main]

#[path = "common.rs"]
mod common;

use base64::Engine;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use pinprobe::model::Status;
use sha2::{Digest, Sha256};
use std::io::Write;

const FA4: &str = "PINPROBE-2026-0001";
const CUTE: &str = "vllm/vllm_flash_attn/cute";

const BLOCK_INFO: &str = r#"from dataclasses import dataclass
from cutlass import Int32


@dataclass(frozen=True)
class BlockInfo:
    tile_m: int
    tile_n: int
    is_causal: bool
    is_local: bool = False
    is_split_kv: bool = False
    num_splits: Int32 = 1

    def get_n_block_min_max(self, seqlen_info, m_block, split_idx=0, num_splits=1):
        n_block_max = (seqlen_info.seqlen_k + self.tile_n - 1) // self.tile_n
        n_block_min = 0
        if self.is_split_kv:
            num_splits = self.num_splits
            per_split = (n_block_max - n_block_min + num_splits - 1) // num_splits
            n_block_min = n_block_min + split_idx * per_split
            n_block_max = min(n_block_min + per_split, n_block_max)
        return n_block_min, n_block_max
"#;

/// Non-literal spellings of `is_split_kv`.
const SPLIT_KV: &[&str] = &[
    "self.is_split_kv",
    "is_split_kv",
    "(self.is_split_kv)",
    "self.is_split_kv and True",
    "bool(self.is_split_kv)",
    "num_splits > 1",
];
/// Keyword arguments that are not `num_splits=`.
const EXTRA: &[&str] = &[
    "packgqa=self.packgqa",
    "window_size_left=window_left",
    "window_size_right=window_right",
    "num_splits_dynamic=False",
    "qhead_per_kvhead=1",
];
/// Lines between arguments that do not pass `num_splits`.
const NOISE: &[&str] = &[
    "# num_splits=num_splits is not passed here",
    "",
    "# a comment",
];

fn sm90(u: &mut Unstructured) -> Result<(String, &'static str)> {
    let alias = *u.choose(&["BlockInfo", "BlockInfo as BI", "BlockInfo as _BlockInfo"])?;
    let name = alias.rsplit(' ').next().unwrap_or("BlockInfo");
    let split = *u.choose(SPLIT_KV)?;
    let keyword = u.arbitrary::<bool>()?;
    let mut args = vec![
        "self.tile_m".to_string(),
        "self.tile_n".to_string(),
        "self.is_causal".to_string(),
        "self.is_local".to_string(),
    ];
    let mut kwargs = Vec::new();
    if keyword {
        kwargs.push(format!("is_split_kv={split}"));
    } else {
        args.push(split.to_string());
    }
    for _ in 0..u.int_in_range(0..=3u8)? {
        kwargs.push(u.choose(EXTRA)?.to_string());
    }
    // Keyword order is free in Python.
    let mut ordered = Vec::new();
    while !kwargs.is_empty() {
        let i = u.choose_index(kwargs.len())?;
        ordered.push(kwargs.remove(i));
    }
    let indent = *u.choose(&["            ", "\t\t\t", "                "])?;
    let mut call = String::new();
    for a in args.iter().chain(&ordered) {
        if u.ratio(1, 4)? {
            call.push_str(&format!("{indent}{}\n", u.choose(NOISE)?));
        }
        call.push_str(&format!("{indent}{a},\n"));
    }
    let module = "vllm.vllm_flash_attn.cute.block_info";
    let text = format!(
        r#"from {module} import {alias}

DOC = "BlockInfo(num_splits=num_splits)"


class FlashAttentionForwardSm90:
    def __init__(self, tile_m, tile_n, is_causal, is_local, is_split_kv):
        self.tile_m = tile_m
        self.tile_n = tile_n
        self.is_causal = is_causal
        self.is_local = is_local
        self.is_split_kv = is_split_kv

    def kernel(self, mQ, mK, mV, num_splits, window_left, window_right):
        block_info = {name}(
{call}        )
        return block_info
"#
    );
    let place = *u.choose(&[
        "flash_fwd_sm90.py",
        "flash_fwd_sm90.py",
        "flash_fwd_hopper.py",
    ])?;
    Ok((text, place))
}

fn record_line(path: &str, bytes: &[u8]) -> String {
    let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
    format!("{path},sha256={hash},{}\n", bytes.len())
}

fn wheel(u: &mut Unstructured) -> Result<(Vec<u8>, String)> {
    let version = *u.choose(&["0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.40.0"])?;
    let (sm90_text, place) = sm90(u)?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("vllm/__init__.py".into(), Vec::new()),
        (
            "vllm/_version.py".into(),
            format!(
                "__version__ = version = '{version}'\n__commit_id__ = commit_id = 'g0a1b2c3d4'\n"
            )
            .into_bytes(),
        ),
        ("vllm/vllm_flash_attn/__init__.py".into(), Vec::new()),
        (format!("{CUTE}/__init__.py"), Vec::new()),
        (
            format!("{CUTE}/block_info.py"),
            BLOCK_INFO.as_bytes().to_vec(),
        ),
        (format!("{CUTE}/{place}"), sm90_text.clone().into_bytes()),
    ];
    if u.arbitrary()? {
        files.push((
            format!("{CUTE}/flash_fwd_sm100.py"),
            b"# SM100 passes num_splits=num_splits\n".to_vec(),
        ));
    }
    let dist = format!("vllm-{version}.dist-info");
    files.push((
        format!("{dist}/METADATA"),
        format!("Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n").into_bytes(),
    ));
    files.push((
        format!("{dist}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: fuzz\nRoot-Is-Purelib: false\nTag: cp38-abi3-manylinux_2_28_x86_64\n".to_vec(),
    ));
    let mut record: String = files.iter().map(|(p, b)| record_line(p, b)).collect();
    record.push_str(&format!("{dist}/RECORD,,\n"));
    files.push((format!("{dist}/RECORD"), record.into_bytes()));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, bytes) in &files {
        zip.start_file(path.as_str(), opts).expect("zip entry");
        zip.write_all(bytes).expect("zip write");
    }
    let bytes = zip.finish().expect("zip finish").into_inner();
    Ok((bytes, format!("vllm {version}, {place}:\n{sm90_text}")))
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok((bytes, described)) = wheel(&mut u) else {
        return;
    };
    let mut file = tempfile::Builder::new()
        .suffix(".whl")
        .tempfile()
        .expect("temp wheel");
    file.write_all(&bytes).expect("write wheel");
    file.flush().expect("flush wheel");
    let view = pinprobe::view::WheelView::open(file.path()).expect("a well-formed wheel opens");
    let Ok(report) = pinprobe::scan::scan_artifact(
        &view,
        &pinprobe::scan::Options::default(),
        common::db(),
        &pinprobe::resolve::Clones::default(),
    ) else {
        // An error is exit 2: not a clean verdict.
        return;
    };
    if report.undecided.is_some() {
        return;
    }
    let fa4: Vec<Status> = report
        .findings
        .iter()
        .filter(|f| f.rule == FA4)
        .map(|f| f.status)
        .collect();
    assert!(
        !fa4.is_empty() && !fa4.contains(&Status::NotAffected),
        "a wheel that ships the bug shape evaluates {fa4:?} for {FA4}:\n{described}\n{:#?}",
        report
            .findings
            .iter()
            .filter(|f| f.rule == FA4)
            .map(|f| &f.evidence)
            .collect::<Vec<_>>()
    );
});
