//! Wheel reading (zip central directory, member checks, bounded inflation) and the artifact
//! scan over it (environments, METADATA, RECORD, shipped copies, signatures) on fuzzed bytes.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::view::{View, WheelView};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Ok(mut file) = tempfile::Builder::new().suffix(".whl").tempfile() else {
        return;
    };
    if file.write_all(data).is_err() || file.flush().is_err() {
        return;
    }
    let Ok(view) = WheelView::open(file.path()) else {
        return;
    };
    if let Ok(files) = view.files_under("") {
        for f in files.iter().take(64) {
            let _ = view.read(f);
        }
    }
    let _ = view.children("vllm");
    common::scan_artifact(&view);
});
