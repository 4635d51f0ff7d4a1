//! Seeds for the fuzz targets (`fuzz/`), built from the same helpers the tests use so that no
//! binary seed is committed. `fuzz/run.sh` runs this test with `PINPROBE_FUZZ_SEEDS=DIR`; without
//! it the seeds are written to a temporary directory, which keeps the writer itself tested.

mod common;

use common::artifact::{fa4_files, vllm_files, with_dist_info, write_wheel};
use common::{FA_REPO, Sm90Call, block_info_new, fa_cmake, fwd_sm90};
use std::path::Path;

fn put(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(name), bytes).expect("write seed");
}

fn joined(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(&0u8)
}

fn write_seeds(out: &Path) {
    let root = env!("CARGO_MANIFEST_DIR");
    let demo = Path::new(root).join("fixtures/demo-vllm");
    let read = |p: &str| std::fs::read(demo.join(p)).expect("demo file");
    // cmake: root file NUL flash-attn module NUL another module.
    put(
        out,
        "cmake",
        "demo",
        &joined(&[
            &read("CMakeLists.txt"),
            &read("cmake/external_projects/vllm_flash_attn.cmake"),
            &read("cmake/external_projects/flashmla.cmake"),
        ]),
    );
    for (i, (repo, tag, patch)) in [
        (FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5", None),
        (FA_REPO, "${FA_TAG}", Some("fix.patch")),
        (
            "https://github.com/someone/flash-attention.git",
            "main",
            None,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let module = fa_cmake(repo, tag, patch);
        let root_file = "set(FA_TAG 506341a)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\nCPMAddPackage(\"gh:deepseek-ai/FlashMLA#v1.0\")\n";
        put(
            out,
            "cmake",
            &format!("fa{i}"),
            &joined(&[root_file.as_bytes(), module.as_bytes()]),
        );
    }

    // Wheels and the same files as an installed layout.
    let cases = [
        ("0.30.0", Sm90Call::Buggy),
        ("0.33.0", Sm90Call::Fixed),
        ("0.31.0", Sm90Call::LiteralFalse),
    ];
    for (i, (version, call)) in cases.into_iter().enumerate() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let whl = tmp.path().join("w.whl");
        write_wheel(
            &whl,
            &with_dist_info("vllm", version, vllm_files(version, call)),
        );
        put(
            out,
            "wheel",
            &format!("vllm{i}"),
            &std::fs::read(&whl).unwrap(),
        );
        let files = with_dist_info("vllm", version, vllm_files(version, call));
        let get = |suffix: &str| {
            files
                .iter()
                .find(|(p, _)| p.ends_with(suffix))
                .map(|(_, b)| b.as_slice())
                .unwrap_or_default()
        };
        put(
            out,
            "artifact_files",
            &format!("vllm{i}"),
            &joined(&[
                get("METADATA"),
                get("RECORD"),
                get("_version.py"),
                get("block_info.py"),
                get("flash_fwd_sm90.py"),
            ]),
        );
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let whl = tmp.path().join("fa4.whl");
    write_wheel(
        &whl,
        &with_dist_info("flash-attn-4", "4.0.0", fa4_files(Sm90Call::Buggy)),
    );
    put(out, "wheel", "fa4", &std::fs::read(&whl).unwrap());

    // Rules: every bundled rule file, and a signature alone (JSON is YAML).
    for entry in std::fs::read_dir(Path::new(root).join("rules")).expect("rules dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        put(out, "rule_yaml", &name, &std::fs::read(&path).unwrap());
    }
    let (db, _) = pinprobe::rules::load(None).expect("embedded rules");
    for loaded in &db.rules {
        if let Some(sig) = &loaded.rule.database_specific.signature {
            let json = serde_json::to_vec_pretty(sig).expect("signature json");
            put(out, "signature_yaml", &loaded.rule.id, &json);
        }
    }

    // Python for the FA4 signature: block_info.py NUL flash_fwd_sm90.py.
    for (i, call) in [Sm90Call::Buggy, Sm90Call::Fixed, Sm90Call::LiteralFalse]
        .into_iter()
        .enumerate()
    {
        put(
            out,
            "signature_python",
            &format!("shape{i}"),
            &joined(&[block_info_new().as_bytes(), fwd_sm90(call).as_bytes()]),
        );
    }

    // A fingerprint index naming the buggy files' blobs.
    let blob = |text: &str| {
        use sha1_like::blob_id;
        blob_id(text.as_bytes())
    };
    let index = serde_json::json!({
        "format": 1,
        "component": "flash-attention",
        "source": "/fuzz/flash-attention",
        "states": [
            {"tree": "0".repeat(40), "files": {
                "block_info.py": blob(&block_info_new()),
                "flash_fwd_sm90.py": blob(&fwd_sm90(Sm90Call::Buggy)),
            }},
            {"tree": "1".repeat(40), "files": {"block_info.py": blob("x")}},
        ],
        "commits": [
            ["506341a143fcabd4bb79052a7605ada727d6b3f5", 1_700_000_000, 0],
            ["6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46", 1_700_000_100, 1],
        ],
    });
    put(
        out,
        "index",
        "two-states",
        &serde_json::to_vec_pretty(&index).unwrap(),
    );
}

/// Git blob ids without a git dependency in the tests: `sha1("blob <len>\0" + bytes)`.
mod sha1_like {
    pub fn blob_id(bytes: &[u8]) -> String {
        let out = std::process::Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().expect("stdin").write_all(bytes)?;
                child.wait_with_output()
            })
            .expect("git hash-object");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

#[test]
fn fuzz_seeds_are_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = match std::env::var_os("PINPROBE_FUZZ_SEEDS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tmp.path().to_path_buf(),
    };
    write_seeds(&out);
    for target in [
        "cmake",
        "wheel",
        "rule_yaml",
        "signature_python",
        "signature_yaml",
        "index",
        "artifact_files",
    ] {
        let n = std::fs::read_dir(out.join(target)).expect(target).count();
        assert!(n > 0, "no seeds for {target}");
    }
}
