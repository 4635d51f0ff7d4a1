//! Layouts of other engines and of a deployment (tests/common/layouts.rs, synthetic and in
//! pinprobe's own words), each scanned offline without a clone: which pins are read in which
//! form, and what they come out as.

use crate::common;

use common::layouts::{self, *};
use common::*;
use std::path::Path;

/// What one layout must give.
struct Expect {
    name: &'static str,
    build: fn(&Path),
    code: i32,
    /// (component, found_by, commit) of pins that must be reported.
    pins: Vec<(&'static str, &'static str, Option<&'static str>)>,
    /// Components that must not be reported (not kernel projects pinprobe knows).
    absent: Vec<&'static str>,
    /// (rule, component, status) of findings that must be reported.
    findings: Vec<(&'static str, &'static str, &'static str)>,
}

fn expectations() -> Vec<Expect> {
    vec![
        Expect {
            name: "engine with its kernel build below the root",
            build: |d| layouts::sglang(d, SYNTH_ATTN),
            // Without a clone the fork's commit decides nothing: undecided, never clean.
            code: 3,
            pins: vec![
                ("cutlass", "cmake GIT_TAG", Some(SYNTH_CUTLASS)),
                ("flashinfer", "cmake URL archive", Some(SYNTH_FLASHINFER)),
                ("sgl-attn", "cmake URL archive", Some(SYNTH_ATTN)),
                ("sgl-kernel", "python requirement", None),
                ("flashinfer", "python requirement", None),
            ],
            absent: vec![],
            findings: vec![
                ("PINPROBE-2026-0014", "sgl-attn", "unknown"),
                ("PINPROBE-2026-0001", "sgl-attn", "unknown"),
                ("PINPROBE-2026-0015", "flashinfer", "not_affected"),
            ],
        },
        Expect {
            name: "engine whose fork pin is vLLM 0.30.0's affected commit",
            build: |d| layouts::sglang(d, FA_VLLM_0_30),
            code: 1,
            pins: vec![("sgl-attn", "cmake URL archive", Some(FA_VLLM_0_30))],
            absent: vec![],
            findings: vec![("PINPROBE-2026-0001", "sgl-attn", "affected")],
        },
        Expect {
            name: "framework with kernel submodules in third_party/",
            build: |d| layouts::pytorch(d, FA_UPSTREAM_2448),
            code: 1,
            pins: vec![
                (
                    "flash-attention-upstream",
                    "git submodule",
                    Some(FA_UPSTREAM_2448),
                ),
                ("cutlass", "git submodule", Some(SYNTH_CUTLASS)),
            ],
            absent: vec!["composable_kernel", "composable-kernel"],
            findings: vec![("PINPROBE-2026-0010", "flash-attention-upstream", "affected")],
        },
        Expect {
            name: "kernel library with CUTLASS as a submodule",
            build: layouts::flashinfer,
            // CUTLASS has no rule: pins read, nothing to judge.
            code: 0,
            pins: vec![
                ("cutlass", "git submodule", Some(SYNTH_CUTLASS)),
                ("cutlass", "python requirement", None),
            ],
            absent: vec!["spdlog"],
            findings: vec![],
        },
        Expect {
            name: "engine with a JSON manifest of pins",
            build: layouts::tensorrt_llm,
            // `string(JSON)` is evaluated as CMake does: the loop declares each of the
            // manifest's pins with its values, CUTLASS (no rule judges it) and FlashAttention at
            // vLLM 0.30.0's known-affected commit.
            code: 1,
            pins: vec![
                ("cutlass", "cmake GIT_TAG", Some(SYNTH_CUTLASS)),
                ("flash-attention", "cmake GIT_TAG", Some(FA_VLLM_0_30)),
            ],
            absent: vec![],
            findings: vec![("PINPROBE-2026-0001", "flash-attention", "affected")],
        },
        Expect {
            name: "deployment repository",
            build: |d| layouts::deployment(d, "0.30.0"),
            code: 1,
            pins: vec![
                ("flash-attention", "python requirement", Some(FA_VLLM_0_30)),
                ("flashinfer", "python requirement", None),
            ],
            absent: vec![],
            findings: vec![
                ("PINPROBE-2026-0001", "flash-attention", "affected"),
                ("PINPROBE-2026-0015", "flashinfer", "not_affected"),
            ],
        },
    ]
}

#[test]
fn each_layout_gives_its_pins_and_verdicts() {
    let mut failures = Vec::new();
    for e in expectations() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("repo");
        (e.build)(&dir);
        for rev in [false, true] {
            let mut args = vec!["scan", ".", "--format", "json"];
            if rev {
                args.extend(["--rev", "HEAD"]);
            }
            let run = Pinprobe::new(&args).dir(&dir).run();
            let mut wrong = Vec::new();
            if run.code != e.code {
                wrong.push(format!("exit {} (want {})", run.code, e.code));
            }
            let json: serde_json::Value = match serde_json::from_str(&run.stdout) {
                Ok(j) => j,
                Err(err) => {
                    failures.push(format!("{} (rev {rev}): {err}\n{}", e.name, run.all()));
                    continue;
                }
            };
            let target = &json["targets"][0];
            let pins: Vec<&serde_json::Value> = target["components"]
                .as_array()
                .into_iter()
                .flatten()
                .collect();
            for (component, found_by, commit) in &e.pins {
                let hit = pins.iter().any(|p| {
                    p["component"] == *component
                        && p["found_by"] == *found_by
                        && commit.is_none_or(|c| p["commit"] == c)
                });
                if !hit {
                    wrong.push(format!("no {component} pin by {found_by} at {commit:?}"));
                }
            }
            for component in &e.absent {
                if pins.iter().any(|p| p["component"] == *component) {
                    wrong.push(format!("{component} is reported"));
                }
            }
            let findings: Vec<&serde_json::Value> = target["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .collect();
            for (rule, component, status) in &e.findings {
                let got: Vec<&str> = findings
                    .iter()
                    .filter(|f| f["rule"] == *rule && f["component"] == *component)
                    .filter_map(|f| f["status"].as_str())
                    .collect();
                if got.is_empty() || got.iter().any(|s| s != status) {
                    wrong.push(format!("{rule} on {component}: {got:?} (want {status})"));
                }
            }
            if e.findings.is_empty()
                && let Some(f) = findings.iter().find(|f| {
                    f["rule"]
                        .as_str()
                        .is_some_and(|r| r.starts_with("PINPROBE-"))
                })
            {
                wrong.push(format!("unexpected finding {f}"));
            }
            if !wrong.is_empty() {
                failures.push(format!(
                    "{} (rev {rev}): {}\n{}",
                    e.name,
                    wrong.join("; "),
                    run.all()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
