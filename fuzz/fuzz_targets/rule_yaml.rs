//! The rule loader (serde-saphyr YAML, then validation and lint) on a fuzzed rule file.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let db = common::db();
    if let Ok(rule) = pinprobe::rules::load::parse("fuzz.yaml", text, &db.registry) {
        // A rule that validates must also evaluate and export without panicking.
        if let Some(sig) = &rule.database_specific.signature {
            let _ = sig.evaluate(&common::Files(common::buggy_files()));
        }
        let _ = pinprobe::rules::osv::to_osv(&rule, "fuzz.yaml");
    }
});
