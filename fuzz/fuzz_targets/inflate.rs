//! A wheel member's deflate stream (the fuzzed bytes, stored as a deflated `.so` in a zip)
//! streamed by the wheel view's own inflater, judged against zlib-rs: the same bytes when
//! zlib-rs inflates the stream (its CRC-32 and size in the central directory), a refusal
//! when it refuses it, and never a panic or a read outside the buffers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::view::{View, WheelView};
use std::io::Write;

/// What zlib-rs makes of `raw` (bytes after the stream's end are not read); `None`: refused.
fn zlib_rs(raw: &[u8]) -> Option<Vec<u8>> {
    let mut d = flate2::Decompress::new(false);
    let mut out = Vec::with_capacity(1 << 16);
    loop {
        if out.len() == out.capacity() {
            if out.len() > 64 << 20 {
                return None;
            }
            out.reserve(1 << 16);
        }
        let (taken, made) = (d.total_in() as usize, out.len());
        let status = d
            .decompress_vec(&raw[taken..], &mut out, flate2::FlushDecompress::Finish)
            .ok()?;
        if status == flate2::Status::StreamEnd {
            return Some(out);
        }
        if d.total_in() as usize == taken && out.len() == made {
            return None;
        }
    }
}

/// A zip with one deflated member `lib.so` whose compressed bytes are `raw`.
fn zip_of(raw: &[u8], crc: u32, size: u32) -> Vec<u8> {
    let name = b"lib.so";
    let mut local = Vec::new();
    local.extend_from_slice(&[0x50, 0x4b, 3, 4, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    local.extend_from_slice(&crc.to_le_bytes());
    local.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    local.extend_from_slice(&size.to_le_bytes());
    local.extend_from_slice(&(name.len() as u16).to_le_bytes());
    local.extend_from_slice(&0u16.to_le_bytes());
    local.extend_from_slice(name);
    local.extend_from_slice(raw);
    let central_at = local.len() as u32;
    let mut central = Vec::new();
    central.extend_from_slice(&[0x50, 0x4b, 1, 2, 20, 3, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    central.extend_from_slice(&crc.to_le_bytes());
    central.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    central.extend_from_slice(&size.to_le_bytes());
    central.extend_from_slice(&(name.len() as u16).to_le_bytes());
    central.extend_from_slice(&[0; 8]);
    central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
    central.extend_from_slice(&0u32.to_le_bytes());
    central.extend_from_slice(name);
    let mut zip = local;
    let central_len = central.len() as u32;
    zip.extend_from_slice(&central);
    zip.extend_from_slice(&[0x50, 0x4b, 5, 6, 0, 0, 0, 0, 1, 0, 1, 0]);
    zip.extend_from_slice(&central_len.to_le_bytes());
    zip.extend_from_slice(&central_at.to_le_bytes());
    zip.extend_from_slice(&0u16.to_le_bytes());
    zip
}

fuzz_target!(|raw: &[u8]| {
    let expected = zlib_rs(raw);
    let (crc, size) = match &expected {
        Some(bytes) => (crc32fast::hash(bytes), bytes.len() as u32),
        None => (0, 1 << 20),
    };
    let Ok(mut file) = tempfile::Builder::new().suffix(".whl").tempfile() else {
        return;
    };
    if file.write_all(&zip_of(raw, crc, size)).is_err() || file.flush().is_err() {
        return;
    }
    let Ok(view) = WheelView::open(file.path()) else {
        return;
    };
    let mut got: Option<std::io::Result<Vec<u8>>> = None;
    let streamed = view.read_stream("lib.so", &mut |r| {
        let mut out = Vec::new();
        got = Some(r.read_to_end(&mut out).map(|_| out));
    });
    // The view checks the CRC and size after the reader's end: a refusal there is the
    // stream's refusal too.
    let ours = match (streamed, got) {
        (Ok(true), Some(Ok(bytes))) => Some(bytes),
        _ => None,
    };
    match expected {
        Some(bytes) => assert!(ours.as_deref() == Some(&bytes[..]), "zlib-rs inflates it"),
        // (A stream both refuse fails here, as a stream only ours accepted fails its CRC of 0.)
        None => assert!(ours.is_none(), "zlib-rs refuses it"),
    }
});
