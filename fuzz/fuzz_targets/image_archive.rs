//! A fuzzed `docker save` archive (legacy `manifest.json` or OCI form, plain or gzip): the
//! archive index, manifest, config and layers, merged and scanned.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Ok(mut file) = tempfile::Builder::new().suffix(".tar").tempfile() else {
        return;
    };
    if file.write_all(data).is_err() || file.flush().is_err() {
        return;
    }
    let target = file.path().display().to_string();
    let _ = pinprobe::scan::scan_target(&target, &pinprobe::scan::Options::default(), common::db(), &pinprobe::resolve::Clones::default());
});
