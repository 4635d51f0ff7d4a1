//! The fingerprint index loaders (binary, and the legacy JSON) on fuzzed bytes, then matching
//! a fixed shipped copy against whatever index loaded.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::view::MemView;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the reader: the binary magic starts with an even byte (`p`), JSON
    // with an odd one (`{`), so each seed reaches its own reader and mutations cross over.
    let suffix = if data.first().is_some_and(|b| b % 2 == 1) {
        ".json"
    } else {
        ".idx"
    };
    let Ok(mut file) = tempfile::Builder::new().suffix(suffix).tempfile() else {
        return;
    };
    if file.write_all(data).is_err() || file.flush().is_err() {
        return;
    }
    let Ok(index) = pinprobe::pin::fingerprint::load(file.path()) else {
        return;
    };
    let mut view = MemView::new("fuzz", pinprobe::model::TargetKind::Installed);
    for (path, text) in common::buggy_files() {
        view.insert(path, text.into_bytes());
    }
    view.insert(
        "flash_attn_4-4.0.0.dist-info/METADATA",
        b"Metadata-Version: 2.1\nName: flash-attn-4\nVersion: 4.0.0\n".to_vec(),
    );
    let opts = pinprobe::scan::Options {
        indexes: vec![index],
        ..Default::default()
    };
    let _ = pinprobe::scan::scan_artifact(&view, &opts, common::db(), &Default::default());
});
