//! The layer reader's tar extended headers: the input is a list of entries, each written with
//! a valid header checksum (so inputs are not lost to checksum failures) and a type the fuzzer
//! picks among regular files, hard and symbolic links, directories, GNU long names and long
//! link names, and local and global PAX headers, with fuzzed names and bodies; the resulting
//! layer is merged (kept files, links, whiteouts) and scanned. Extended-header bodies are read
//! under caps of 64 KiB and 1 MiB, so no input may take memory beyond them.
//!
//! Input: repeated `[type][name length][name][body length: 2 bytes LE][body]`.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::view::image::manifest::{ImageConfig, Platform};
use pinprobe::view::image::{Fault, LayerRef, Options, Resolved, Source, overlay};
use std::io::Read;

const KINDS: [u8; 9] = [b'0', b'1', b'2', b'5', b'L', b'K', b'x', b'g', b'0'];
const SITE: &str = "usr/lib/python3/site-packages/";

struct Layer(Vec<u8>);

impl Source for Layer {
    fn resolve(&mut self, _: &Platform) -> Result<Resolved, Fault> {
        unreachable!("the target resolves by hand")
    }
    fn open_layer(&mut self, _: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        Ok(Box::new(self.0.as_slice()))
    }
}

fn tar_of(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while data.len() >= 4 {
        let kind = KINDS[data[0] as usize % KINDS.len()];
        let name_len = (data[1] as usize).min(data.len() - 2);
        let raw_name = &data[2..2 + name_len];
        data = &data[2 + name_len..];
        if data.len() < 2 {
            break;
        }
        let body_len = (u16::from_le_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
        let body = &data[2..2 + body_len];
        data = &data[2 + body_len..];
        // Names under site-packages reach the kept-file paths (METADATA, RECORD, vllm/...).
        let mut name = SITE.as_bytes().to_vec();
        name.extend_from_slice(raw_name);
        let mut h = tar::Header::new_gnu();
        {
            let gnu = h.as_gnu_mut().expect("gnu header");
            let n = name.len().min(gnu.name.len());
            gnu.name[..n].copy_from_slice(&name[..n]);
            let l = raw_name.len().min(gnu.linkname.len());
            gnu.linkname[..l].copy_from_slice(&raw_name[..l]);
        }
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_mode(0o644);
        h.set_size(body.len() as u64);
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(body);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(config) = ImageConfig::parse(
        br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#,
        "config",
    ) else {
        return;
    };
    let Ok(platform) = Platform::parse("linux/amd64") else {
        return;
    };
    let resolved = Resolved {
        manifest_digest: None,
        config,
        layers: vec![LayerRef {
            digest: None,
            diff_id: None,
            size: None,
            location: "0".into(),
        }],
        warnings: Vec::new(),
    };
    let mut source = Layer(tar_of(data));
    let opts = Options {
        fast_layers: false,
        ..Options::default()
    };
    if let Ok(merged) = overlay::run("fuzz", &mut source, resolved, &platform, &opts) {
        common::scan_artifact(&merged.view);
    }
});
