//! OCI / Docker manifest, index and config parsing, and platform selection, on fuzzed JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::view::image::manifest::{self, Document, ImageConfig, Platform};

fuzz_target!(|data: &[u8]| {
    if let Ok(Document::Index(entries)) = manifest::parse(data, "fuzz") {
        for p in ["linux/amd64", "linux/arm64/v8"] {
            if let Ok(platform) = Platform::parse(p) {
                let _ = manifest::select(&entries, &platform, &mut Vec::new());
            }
        }
    }
    if let Ok(config) = ImageConfig::parse(data, "fuzz") {
        let _ = config.diff_ids();
        let _ = config.platform();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Platform::parse(text);
        let _ = pinprobe::view::image::reference::parse(text);
    }
});
