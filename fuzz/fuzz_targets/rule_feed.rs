//! The signed rule feed (src/rules/feed.rs) on fuzzed input: an envelope (JSON, base64, an
//! Ed25519 signature) opened with a fixed trusted key, public keys, trust files and secret keys
//! parsed; nothing may panic, and nothing but a validly signed statement may open.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::rules::feed;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The project's key: no fuzzed input carries a valid signature of its secret half, so
    // every envelope must be refused.
    let key = feed::PublicKey::parse(
        "fuzz",
        "pinprobe-ed25519:ALG/I7Gns5N+BbmnO92UZzyHX5QHOmpbbp6T6C5bEx4=",
    );
    if let Ok(key) = key {
        assert!(feed::open(text, &[key]).is_err(), "a fuzzed envelope opened");
    }
    let _ = feed::PublicKey::parse("fuzz", text);
    let _ = feed::parse_trust_file("fuzz", text);
    let _ = feed::SecretKey::parse("fuzz", text);
});
