//! The ignore-file loader (`.pinprobe.yaml`: serde-saphyr YAML, then validation) on fuzzed text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = pinprobe::scan::policy::Policy::parse(".pinprobe.yaml", text);
    }
});
