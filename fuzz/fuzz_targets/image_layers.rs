//! Layer reading and merging: two fuzzed layers (gzip, zstd or plain tar, told apart by their
//! first bytes) merged newest first with whiteouts, hard links and the early stop, then the
//! artifact scan over the merged files. The first two bytes give the older layer's length.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use pinprobe::view::image::manifest::{ImageConfig, Platform};
use pinprobe::view::image::{Fault, LayerRef, Options, Resolved, Source, overlay};
use std::io::Read;

struct Layers(Vec<Vec<u8>>);

impl Source for Layers {
    fn resolve(&mut self, _: &Platform) -> Result<Resolved, Fault> {
        unreachable!("the target resolves by hand")
    }
    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        let i: usize = layer.location.parse().unwrap_or(0);
        Ok(Box::new(self.0.get(i).map(Vec::as_slice).unwrap_or_default()))
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = (u16::from_le_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
    let rest = &data[2..];
    let layers = vec![rest[..split].to_vec(), rest[split..].to_vec()];
    let Ok(config) = ImageConfig::parse(
        br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#,
        "config",
    ) else {
        return;
    };
    let resolved = Resolved {
        manifest_digest: None,
        config,
        layers: (0..2)
            .map(|i| LayerRef {
                digest: None,
                diff_id: None,
                size: None,
                location: i.to_string(),
            })
            .collect(),
        warnings: Vec::new(),
    };
    let Ok(platform) = Platform::parse("linux/amd64") else {
        return;
    };
    let mut source = Layers(layers);
    for fast_layers in [false, true] {
        let opts = Options {
            fast_layers,
            ..Options::default()
        };
        if let Ok(merged) = overlay::run("fuzz", &mut source, resolved.clone(), &platform, &opts) {
            common::scan_artifact(&merged.view);
        }
    }
});
