//! `pinprobe verify` end to end: the CPU-side pieces through the library's public API, the
//! command line's exit codes, and (where a GPU exists) the probe itself. Without a GPU the GPU
//! test skips through `require::hardware` (visible, summarised; CI has no GPU).

use crate::common::require;

use std::io::Write;

use assert_cmd::cargo::cargo_bin_cmd;
use pinprobe::verify::{
    self, Inject, Options, Shape, VerifyError, attention, coverage, partition, stats,
};

/// Write past the test harness's output capture (it only captures `print!`/`eprint!`), so a
/// skipped GPU test says so in a plain `cargo test`.
fn visible(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

// ---- CPU side -------------------------------------------------------------------------------

#[test]
fn heuristic_and_partition_for_the_default_shapes_on_an_h200() {
    let sms = 132;
    let n = partition::n_blocks(7168, Shape::REPORTED.block_n());
    assert_eq!(n, 112);
    assert_eq!(
        partition::fa_num_splits_heuristic(2, sms, n, partition::fa_max_splits(sms, n)),
        56
    );
    let n = partition::n_blocks(32768, Shape::LONG.block_n());
    assert_eq!(
        partition::fa_num_splits_heuristic(8, sms, n, partition::fa_max_splits(sms, n)),
        14
    );
    // The bug's partition: split 0 everything.
    assert_eq!(partition::split_range(7168, 64, 1, 0), 0..7168);
    assert!(partition::split_range(7168, 64, 1, 5).is_empty());
}

#[test]
fn split_partials_and_combine_match_the_reference_for_both_partitions() {
    let shape = Shape {
        head_dim: 128,
        kv_heads: 2,
        q_per_kv: 5,
        batch: 1,
        tokens: 1000, // 8 tiles of 128, the last one short
    };
    let inputs = attention::Inputs::random(&shape, 99);
    let full = attention::attention(&shape, &inputs);
    for splits in [1, 3, 8, 16] {
        for partition_splits in [splits, 1] {
            let partials = attention::split_partials(&shape, &inputs, splits, partition_splits);
            let merged = attention::combine(&shape, &partials);
            let out: Vec<f32> = merged.iter().map(|&x| x as f32).collect();
            let err = attention::relative_error(&out, &full);
            assert!(err < 1e-6, "splits {splits}/{partition_splits}: {err}");
        }
    }
}

#[test]
fn coverage_tells_honoured_from_ignored_for_the_reported_shape() {
    let shape = Shape::REPORTED;
    let report = |partition_splits: usize, splits: usize| -> Vec<coverage::Reported> {
        (0..splits)
            .flat_map(|s| {
                let r = partition::split_range(shape.tokens, shape.block_n(), partition_splits, s);
                let e = if r.is_empty() {
                    (-1, 0)
                } else {
                    (r.start as i32, r.len() as i32)
                };
                std::iter::repeat_n(e, shape.kv_heads)
            })
            .collect()
    };
    assert_eq!(
        coverage::classify(&shape, 64, &report(64, 64)),
        coverage::Coverage::Honoured
    );
    assert_eq!(
        coverage::classify(&shape, 64, &report(1, 64)),
        coverage::Coverage::Ignored
    );
}

#[test]
fn verdicts_on_the_measured_facts() {
    // docs/src/design.md: the fixed kernel 334 -> 21.3 us, the buggy one 335 -> 362 us (1 -> 64 splits).
    let table = |lat: &dyn Fn(usize) -> f64| -> Vec<stats::Row> {
        [1usize, 2, 4, 8, 16, 32, 64]
            .iter()
            .map(|&s| stats::Row {
                splits: s,
                samples: (0..10).map(|r| lat(s) * (1.0 + 0.004 * r as f64)).collect(),
            })
            .collect()
    };
    let fixed = stats::assess(&table(&|s| (334.0 / s as f64).max(21.3)), 1);
    assert_eq!(fixed.verdict, stats::Verdict::Scales);
    let buggy = stats::assess(&table(&|s| 335.0 + 27.0 * (s as f64).log2() / 6.0), 1);
    assert_eq!(buggy.verdict, stats::Verdict::Flat);
    let checks = stats::Checks {
        outputs_correct: true,
        coverage_consistent: true,
    };
    assert_eq!(
        stats::judge(&fixed, Some(&buggy), &fixed, &checks).0,
        stats::Verdict::Scales
    );
    assert_eq!(
        stats::judge(&fixed, Some(&buggy), &buggy, &checks).0,
        stats::Verdict::Invalid
    );
}

// ---- command line ---------------------------------------------------------------------------

#[test]
fn no_gpu_is_one_line_and_exit_4() {
    if !require::no_hardware(
        !verify::driver_present(),
        "no NVIDIA driver (one is present here; the no-GPU path is not exercised)",
    ) {
        return;
    }
    let out = cargo_bin_cmd!("pinprobe")
        .arg("verify")
        .output()
        .expect("run pinprobe");
    assert_eq!(out.status.code(), Some(4));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.contains("no usable GPU"), "{stderr}");
}

#[test]
fn bad_options_exit_2() {
    for args in [
        &["verify", "--splits", "2,4"][..],
        &["verify", "--shape", "100:1:1:1:10"],
        &["verify", "--shape", "512:2:8"],
    ] {
        let out = cargo_bin_cmd!("pinprobe").args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn help_teaches_verdicts_controls_and_exit_codes() {
    let out = cargo_bin_cmd!("pinprobe")
        .args(["verify", "--help"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "scales",
        "flat",
        "inconclusive",
        "invalid",
        "exit 4",
        "--inject",
        "--compare-sdpa",
        "--plot",
        "negative control",
        "positive control",
        "HEAD_DIM:KV_HEADS:Q_PER_KV:BATCH:TOKENS",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}");
    }
}

// ---- the kernels, compiled without a GPU ------------------------------------------------------

/// `kernels/splitkv_decode.cu` compiles with NVRTC where no GPU exists (CI: `.ci/run` installs
/// the `nvidia-cuda-nvrtc` wheel and puts its `libnvrtc.so.13` on `LD_LIBRARY_PATH`): a CUBIN
/// (ELF) per architecture holding every kernel the probe loads, only the head dims asked for,
/// and a compile error for an architecture NVRTC does not know.
#[test]
fn the_probe_compiles_with_nvrtc_without_a_gpu() {
    let first = verify::compile_cubin("sm_90", &[512]);
    let missing =
        matches!(&first, Err(VerifyError::Nvrtc(m)) if m.contains("not found on the library path"));
    if !require::require(
        !missing,
        "libnvrtc.so.13 on LD_LIBRARY_PATH (pip install nvidia-cuda-nvrtc; .ci/run does)",
    ) {
        return;
    }
    for arch in ["sm_80", "sm_90"] {
        let started = std::time::Instant::now();
        let cubin = verify::compile_cubin(arch, &[64, 128, 256, 512])
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        visible(&format!(
            "NVRTC: kernels/splitkv_decode.cu for {arch}, 4 head dims: {} bytes in {:.1} s",
            cubin.len(),
            started.elapsed().as_secs_f64()
        ));
        assert!(
            cubin.starts_with(b"\x7fELF"),
            "{arch}: a CUBIN is an ELF file"
        );
        for d in [64, 128, 256, 512] {
            for kernel in [format!("splitkv_decode_d{d}"), format!("stream_read_d{d}")] {
                assert!(
                    contains(&cubin, kernel.as_bytes()),
                    "{arch}: {kernel} missing"
                );
            }
        }
        for kernel in ["splitkv_combine", "poison_u32"] {
            assert!(
                contains(&cubin, kernel.as_bytes()),
                "{arch}: {kernel} missing"
            );
        }
    }
    let only = first.expect("sm_90, head dim 512");
    assert!(contains(&only, b"splitkv_decode_d512"));
    assert!(
        !contains(&only, b"splitkv_decode_d64"),
        "-DPROBE_D512 builds only head dim 512"
    );
    match verify::compile_cubin("sm_1", &[64]) {
        Err(VerifyError::Nvrtc(m)) => assert!(m.contains("sm_1"), "{m}"),
        other => panic!("an unknown architecture must fail to compile: {other:?}"),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

// ---- verdicts to exit codes ---------------------------------------------------------------------

/// docs/src/design.md's contract, written out: `scales` 0, `flat` 1, `inconclusive` / `invalid` /
/// `unsupported` 3 (fail closed), no GPU 4.
#[test]
fn verdicts_map_to_the_contracts_exit_codes() {
    use pinprobe::exit::{self, Exit};
    use stats::Verdict;
    for (verdict, code) in [
        (Verdict::Scales, 0),
        (Verdict::Flat, 1),
        (Verdict::Inconclusive, 3),
        (Verdict::Invalid, 3),
        (Verdict::Unsupported, 3),
    ] {
        assert_eq!(exit::for_verify(verdict).code(), code, "{verdict:?}");
    }
    assert_eq!(exit::NO_GPU.code(), 4);
    assert_eq!(Exit::Error.code(), 2);
}

// ---- GPU --------------------------------------------------------------------------------------

/// The probe on the GPU: default shapes scale with a flat negative control and a scaling
/// positive control; the injected bug is flat; edge shapes (short last tile, batch > 1, 16 query
/// heads per KV head, head dims 64 and 256) compute the right output with honoured coverage.
/// One test, so nothing else shares the GPU while it times.
#[test]
fn gpu_probe() {
    let quick = Options {
        rounds: 6,
        launches: 8,
        seed: Some(7),
        ..Options::default()
    };
    let mut sink = std::io::sink();
    let report = match verify::run(&quick, &mut sink) {
        Err(VerifyError::NoGpu(why)) => {
            require::hardware(false, &format!("a GPU ({why})"));
            return;
        }
        other => other.expect("verify on the GPU"),
    };
    visible(&format!(
        "GPU: {} ({})",
        report.device.name, report.device.arch
    ));
    for s in &report.shapes {
        let label = s.shape.label();
        assert_eq!(
            s.verdict,
            stats::Verdict::Scales,
            "{label}: {:?}",
            s.reasons
        );
        assert_eq!(
            s.probe.coverage,
            Some(coverage::Coverage::Honoured),
            "{label}"
        );
        let neg = s.negative_control.as_ref().expect("negative control");
        assert_eq!(neg.scaling.verdict, stats::Verdict::Flat, "{label}");
        assert_eq!(neg.coverage, Some(coverage::Coverage::Ignored), "{label}");
        assert!(
            s.probe
                .max_rel_error
                .is_some_and(|e| e < verify::MAX_REL_ERROR)
        );
        assert!(neg.max_rel_error.is_some_and(|e| e < verify::MAX_REL_ERROR));
        visible(&format!(
            "{label}: {} x{:.1} at {:?} splits, {:.0}% of stream bandwidth",
            s.verdict,
            s.probe.scaling.speedup.map_or(0.0, |e| e.median),
            s.probe.scaling.best_splits,
            s.bandwidth_fraction.unwrap_or(0.0) * 100.0
        ));
    }

    let injected = Options {
        inject: Some(Inject::IgnoreSplits),
        shapes: vec![Shape::REPORTED],
        ..quick.clone()
    };
    let report = verify::run(&injected, &mut sink).expect("injected run");
    assert_eq!(report.verdict, stats::Verdict::Flat);
    assert_eq!(
        report.shapes[0].probe.coverage,
        Some(coverage::Coverage::Ignored)
    );

    let edges = Options {
        shapes: [
            "64:3:5:2:1000",
            "256:1:16:1:5000",
            "512:1:16:1:333",
            "128:4:1:3:129",
        ]
        .iter()
        .map(|s| Shape::parse(s).expect("shape"))
        .collect(),
        splits: vec![1, 2, 3, 7, 16],
        rounds: 2,
        launches: 2,
        ..quick
    };
    let report = verify::run(&edges, &mut sink).expect("edge shapes");
    for s in &report.shapes {
        let label = s.shape.label();
        let err = s.probe.max_rel_error.expect("checked");
        assert!(err < verify::MAX_REL_ERROR, "{label}: error {err}");
        assert!(matches!(
            s.probe.coverage,
            Some(coverage::Coverage::Honoured | coverage::Coverage::Either)
        ));
        let neg = s.negative_control.as_ref().expect("negative control");
        assert!(
            neg.max_rel_error.is_some_and(|e| e < verify::MAX_REL_ERROR),
            "{label}"
        );
        visible(&format!("{label}: max rel error {err:.1e}"));
    }
}
