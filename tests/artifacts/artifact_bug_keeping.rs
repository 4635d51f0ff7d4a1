//! Property: random edits that keep the FA4 SM90 bug never give exit 0 or a
//! PINPROBE-2026-0001 `not_affected` finding, in wheels, deep environments and images.
//!
//! Each case composes random source rewrites of the buggy `flash_fwd_sm90.py` (an import alias,
//! a module alias, a local alias, `num_splits=<literal>`, a `**kwargs` splat, `is_split_kv` as a
//! keyword) with a random packaging (wheel root, `.data/purelib` over a fixed root file, a moved
//! FlashAttention directory, bytecode only, an environment ten levels deep, an image whose
//! `cute/` is a symbolic link to `/opt/fa/cute`, an image whose file is a hard link) and a
//! random version label (0.30.0 in the affected range, or 0.33.0 outside it). Every case keeps
//! the bug, so the only acceptable answers are `affected` (exit 1) or `unknown` (exit 3).
//!
//! Fixed seed (`PINPROBE_BUG_KEEPING_SEED` for others), `PINPROBE_BUG_KEEPING_CASES` cases
//! (default 48); a failing case prints its seed and recipe.

use crate::common;

use build::{Compression, Image, Layer, SITE};
use clap::Parser;
use common::artifact::{vllm_files, with_dist_info, write_tree, write_wheel};
use common::image as build;
use common::{Sm90Call, fwd_sm90};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::Path;

const RULE: &str = "PINPROBE-2026-0001";
const CUTE: &str = "vllm/vllm_flash_attn/cute";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A source rewrite that keeps the bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    ImportAlias,
    ModuleAlias,
    LocalAlias,
    LiteralNumSplits,
    KwargsSplat,
    KeywordSplitKv,
}

const EDITS: [Edit; 6] = [
    Edit::ImportAlias,
    Edit::ModuleAlias,
    Edit::LocalAlias,
    Edit::LiteralNumSplits,
    Edit::KwargsSplat,
    Edit::KeywordSplitKv,
];

/// Where and how the buggy file ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Packaging {
    WheelRoot,
    WheelPurelibOverFixed,
    WheelMovedCopy,
    WheelBytecodeOnly,
    DeepEnvironment,
    ImageDirSymlink,
    ImageHardlinkToStore,
}

const PACKAGINGS: [Packaging; 7] = [
    Packaging::WheelRoot,
    Packaging::WheelPurelibOverFixed,
    Packaging::WheelMovedCopy,
    Packaging::WheelBytecodeOnly,
    Packaging::DeepEnvironment,
    Packaging::ImageDirSymlink,
    Packaging::ImageHardlinkToStore,
];

/// The buggy SM90 source (upstream namespace) with `edits` applied.
fn edited(edits: &[Edit], rng: &mut StdRng) -> String {
    let mut text = fwd_sm90(Sm90Call::Buggy);
    let import = "from flash_attn.cute.block_info import BlockInfo\n";
    let call = "block_info = BlockInfo(";
    assert!(text.contains(import) && text.contains(call));
    for edit in edits {
        match edit {
            Edit::ImportAlias if text.contains(call) => {
                text = text
                    .replace(
                        import,
                        "from flash_attn.cute.block_info import BlockInfo as BI\n",
                    )
                    .replace(call, "block_info = BI(");
            }
            Edit::ModuleAlias if text.contains(call) => {
                text = text
                    .replace(import, "import flash_attn.cute.block_info as bim\n")
                    .replace(call, "block_info = bim.BlockInfo(");
            }
            Edit::LocalAlias if text.contains(call) => {
                text = text.replace(
                    &format!("        {call}"),
                    "        make = BlockInfo\n        block_info = make(",
                );
            }
            Edit::LiteralNumSplits => {
                let literal = ["1", "0", "None", "True"][rng.random_range(0..4)];
                text = insert_after_split_kv(&text, &format!("num_splits={literal},"));
            }
            Edit::KwargsSplat => text = insert_after_split_kv(&text, "**self.extra,"),
            Edit::KeywordSplitKv => {
                text = text.replace(
                    "            self.is_split_kv,\n",
                    "            is_split_kv=self.is_split_kv,\n",
                );
            }
            _ => {}
        }
    }
    text
}

/// Insert an argument line after the call's `is_split_kv` argument.
fn insert_after_split_kv(text: &str, arg: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if line.trim_end().ends_with("self.is_split_kv,") {
            out.push_str(&format!("            {arg}\n"));
        }
    }
    out
}

fn vllm_namespace(text: &str) -> String {
    text.replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
}

/// vLLM's files with `sm90` as the shipped SM90 source.
fn files(version: &str, sm90: &str) -> Vec<(String, Vec<u8>)> {
    let mut files = vllm_files(version, Sm90Call::Buggy);
    for (name, bytes) in &mut files {
        if name.ends_with("flash_fwd_sm90.py") {
            *bytes = vllm_namespace(sm90).into_bytes();
        }
    }
    files
}

/// Build the case's target under `dir`; returns the target string to scan.
fn build(dir: &Path, packaging: Packaging, version: &str, sm90: &str) -> String {
    let sm90_path = format!("{CUTE}/flash_fwd_sm90.py");
    let wheel = |files: Vec<(String, Vec<u8>)>| {
        let path = dir.join(format!("vllm-{version}-py3-none-any.whl"));
        write_wheel(&path, &with_dist_info("vllm", version, files));
        path.to_string_lossy().into_owned()
    };
    match packaging {
        Packaging::WheelRoot => wheel(files(version, sm90)),
        Packaging::WheelPurelibOverFixed => {
            let mut f = files(version, &fwd_sm90(Sm90Call::Fixed));
            f.push((
                format!("vllm-{version}.data/purelib/{sm90_path}"),
                vllm_namespace(sm90).into_bytes(),
            ));
            wheel(f)
        }
        Packaging::WheelMovedCopy => wheel(
            files(version, sm90)
                .into_iter()
                .map(|(n, b)| (n.replace("/cute/", "/cute_impl/"), b))
                .collect(),
        ),
        Packaging::WheelBytecodeOnly => {
            let mut f: Vec<_> = files(version, sm90)
                .into_iter()
                .filter(|(n, _)| !n.ends_with("flash_fwd_sm90.py"))
                .collect();
            f.push((
                format!("{CUTE}/__pycache__/flash_fwd_sm90.cpython-312.pyc"),
                b"\xcb\x0d\x0d\x0a\0\0\0\0 bytecode".to_vec(),
            ));
            wheel(f)
        }
        Packaging::DeepEnvironment => {
            // `uv tool install` layout: ten levels below the scanned root.
            let root = dir.join("root");
            let site = root.join("home/u/.local/share/uv/tools/vllm/lib/python3.12/site-packages");
            write_tree(
                &site,
                &with_dist_info("vllm", version, files(version, sm90)),
            );
            root.to_string_lossy().into_owned()
        }
        Packaging::ImageDirSymlink | Packaging::ImageHardlinkToStore => {
            let mut layer = Layer::new("RUN install", Compression::Gzip);
            for (name, bytes) in with_dist_info("vllm", version, files(version, sm90)) {
                let at = format!("{SITE}/{name}");
                if packaging == Packaging::ImageDirSymlink
                    && let Some(rest) = name.strip_prefix(&format!("{CUTE}/"))
                {
                    layer = layer.file(&format!("opt/fa/cute/{rest}"), bytes);
                } else if packaging == Packaging::ImageHardlinkToStore
                    && name.ends_with("flash_fwd_sm90.py")
                {
                    layer = layer
                        .file("opt/store/3f9a1c", bytes)
                        .hardlink(&at, "opt/store/3f9a1c");
                } else {
                    layer = layer.file(&at, bytes);
                }
            }
            if packaging == Packaging::ImageDirSymlink {
                layer = layer.symlink(&format!("{SITE}/{CUTE}"), "/opt/fa/cute");
            }
            let image = Image::new(vec![
                Layer::new("base", Compression::Gzip).file("etc/os-release", "ID=test\n"),
                layer,
            ]);
            let layout = dir.join("layout");
            std::fs::create_dir_all(&layout).expect("mkdir");
            build::write_oci(&layout, &[("v1", &image.build())]);
            format!("oci:{}:v1", layout.display())
        }
    }
}

/// Scan in process through the CLI entry point: the exit code and the FA4 rule's statuses.
fn scan(target: &str, cache: &Path) -> (i32, Vec<String>) {
    let args = [
        "pinprobe",
        "scan",
        "--format",
        "json",
        "--cache",
        cache.to_str().expect("utf-8"),
        target,
    ];
    let cli = pinprobe::cli::Cli::try_parse_from(args).expect("args parse");
    let mut out = Vec::new();
    match pinprobe::cli::run(cli, &mut out) {
        Err(_) => (2, Vec::new()),
        Ok(exit) => {
            let report: Value = serde_json::from_slice(&out).expect("json report");
            let statuses = report["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| t["findings"].as_array().into_iter().flatten())
                .filter(|f| f["rule"] == RULE)
                .map(|f| f["status"].as_str().unwrap_or("").to_string())
                .collect();
            (exit.code(), statuses)
        }
    }
}

#[test]
fn bug_keeping_edits_never_pass() {
    let seed = env_or("PINPROBE_BUG_KEEPING_SEED", 0x5eed_0014);
    let cases = env_or("PINPROBE_BUG_KEEPING_CASES", 48);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut failures = Vec::new();
    let mut tally = [0usize; 4];
    for i in 0..cases {
        // Every packaging is met in turn; the edits and the label are random.
        let packaging = PACKAGINGS[i as usize % PACKAGINGS.len()];
        let edits: Vec<Edit> = EDITS
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.4))
            .collect();
        let version = if rng.random_bool(0.5) {
            "0.30.0"
        } else {
            "0.33.0"
        };
        let sm90 = edited(&edits, &mut rng);
        let dir = tmp.path().join(format!("case-{i}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let target = build(&dir, packaging, version, &sm90);
        let (code, statuses) = scan(&target, &tmp.path().join("cache"));
        tally[code.clamp(0, 3) as usize] += 1;
        let recipe = format!("seed {seed:#x} case {i}: {packaging:?} {version} {edits:?}");
        if code == 0 {
            failures.push(format!("{recipe}: exit 0 {statuses:?}"));
        } else if statuses.iter().any(|s| s == "not_affected") {
            failures.push(format!(
                "{recipe}: not_affected ({statuses:?}, exit {code})"
            ));
        } else if statuses.is_empty() && code != 2 {
            failures.push(format!("{recipe}: silent: no {RULE} finding (exit {code})"));
        }
    }
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("bug-keeping: exit codes 0/1/2/3 = {tally:?}\n"),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The property is not vacuous: some cases are decided affected.
    assert!(tally[1] > 0, "{tally:?}");
}

/// An editable install (`pip install -e`): followed when its source directory is inside the
/// scanned tree (`.pth` line or `direct_url.json`), `unknown` when it is not; never silent.
#[test]
fn editable_installs_are_followed_inside_the_tree_and_unknown_outside() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    for (name, src_inside, by_pth) in [
        ("pth-inside", true, true),
        ("direct-url-inside", true, false),
        ("outside", false, false),
    ] {
        let root = tmp.path().join(name);
        let src = if src_inside {
            root.join("src/vllm")
        } else {
            outside.path().join(name)
        };
        write_tree(&src, &files("0.33.0", &fwd_sm90(Sm90Call::Buggy)));
        let site = root.join("venv/lib/python3.12/site-packages");
        let di = site.join("vllm-0.33.0.dist-info");
        std::fs::create_dir_all(&di).expect("mkdir");
        std::fs::write(
            di.join("METADATA"),
            "Metadata-Version: 2.1\nName: vllm\nVersion: 0.33.0\n",
        )
        .expect("write");
        std::fs::write(di.join("RECORD"), "").expect("write");
        let url = format!("file://{}", src.display());
        std::fs::write(
            di.join("direct_url.json"),
            serde_json::json!({"url": url, "dir_info": {"editable": true}}).to_string(),
        )
        .expect("write");
        if by_pth {
            std::fs::write(
                site.join("__editable__.vllm-0.33.0.pth"),
                format!("{}\n", src.display()),
            )
            .expect("write");
        }
        let (code, statuses) = scan(root.to_str().expect("utf-8"), &tmp.path().join("cache"));
        if src_inside {
            assert_eq!(code, 1, "{name}: {statuses:?}");
            assert!(
                statuses.iter().any(|s| s == "affected"),
                "{name}: {statuses:?}"
            );
        } else {
            assert_eq!(code, 3, "{name}: {statuses:?}");
            assert!(statuses.iter().all(|s| s == "unknown") && !statuses.is_empty());
        }
    }
}
