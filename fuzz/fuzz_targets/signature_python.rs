//! The FA4 rule's signature (tree-sitter parse, then the matcher) over fuzzed Python:
//! `block_info.py` NUL `flash_fwd_sm90.py`.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let sig = common::fa4_rule()
        .database_specific
        .signature
        .as_ref()
        .expect("the FA4 rule has a signature");
    let mut files = BTreeMap::new();
    let names = [
        "flash_attn/cute/block_info.py",
        "flash_attn/cute/flash_fwd_sm90.py",
    ];
    for (name, part) in names.iter().zip(common::parts(data, 2)) {
        files.insert(name.to_string(), String::from_utf8_lossy(part).into_owned());
    }
    let _ = sig.evaluate(&common::Files(files));
});
