//! Fuzzed signature YAML (deserialised, validated, evaluated) over the FA4 rule's fixed
//! buggy-shape Python.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::rules::signature::Signature;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sig) = serde_saphyr::from_str::<Signature>(text) else {
        return;
    };
    if sig.validate().is_ok() {
        let _ = sig.evaluate(&common::Files(common::buggy_files()));
    }
});
