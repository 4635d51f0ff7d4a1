//! The artifact scan (environment discovery, METADATA, RECORD, `_version.py`, shipped copies,
//! import-rewrite undoing, signatures) on an installed-vLLM layout whose files are fuzzed:
//! METADATA NUL RECORD NUL _version.py NUL block_info.py NUL flash_fwd_sm90.py.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::view::MemView;

fuzz_target!(|data: &[u8]| {
    let names = [
        "vllm-0.30.0.dist-info/METADATA",
        "vllm-0.30.0.dist-info/RECORD",
        "vllm/_version.py",
        "vllm/vllm_flash_attn/cute/block_info.py",
        "vllm/vllm_flash_attn/cute/flash_fwd_sm90.py",
    ];
    let mut view = MemView::new("fuzz", pinprobe::model::TargetKind::Installed);
    view.insert("vllm/__init__.py", Vec::new());
    for (name, part) in names.iter().zip(common::parts(data, names.len())) {
        view.insert(*name, part.to_vec());
    }
    common::scan_artifact(&view);
});
