//! The deployed kernel's verdict for one shape, CPU-only: its latency curve as a
//! [`SeriesReport`], the same statistics as the probe ([`stats::assess`]), the same controls
//! ([`stats::judge`]: the probe's negative control must be flat and its positive control must
//! scale), and `unsupported` when the kernel refused split-KV.

use super::super::report::{DeployedSeries, Point, SeriesReport};
use super::super::stats::{self, Checks, Row, Scaling, Verdict};
use super::super::{MAX_REL_ERROR, Shape};
use super::protocol::ShapeRun;

/// Judge one shape. `negative` / `positive` are the probe's controls on the same shape;
/// `probe_best_us` the probe's best-split median there.
pub fn judge(
    run: &ShapeRun,
    shape: &Shape,
    heuristic: usize,
    seed: u64,
    negative: Option<&Scaling>,
    positive: &Scaling,
    probe_best_us: Option<f64>,
) -> DeployedSeries {
    let mut timings = run.timings.clone();
    timings.sort_by_key(|t| t.splits);
    let error_of = |s: usize| {
        run.checks
            .iter()
            .find(|c| c.splits == s)
            .map(|c| c.rel_error.unwrap_or(f64::NAN))
    };
    let mut points: Vec<Point> = timings
        .iter()
        .map(|t| {
            let latency = stats::estimate(&t.samples_us, seed ^ t.splits as u64);
            Point {
                splits: t.splits,
                heuristic: t.splits == heuristic,
                latency_us: latency,
                ratio_to_one: None,
                bandwidth_gbs: latency.map(|l| shape.bytes_read() as f64 / (l.median * 1e3)),
                rel_error: error_of(t.splits),
                coverage: None,
                samples_us: t.samples_us.clone(),
            }
        })
        .collect();
    let one = points
        .iter()
        .find(|p| p.splits == 1)
        .and_then(|p| p.latency_us.map(|l| l.median));
    for p in &mut points {
        p.ratio_to_one = match (one, p.latency_us) {
            (Some(one), Some(l)) => Some(one / l.median),
            _ => None,
        };
    }
    let rows: Vec<Row> = timings
        .iter()
        .map(|t| Row {
            splits: t.splits,
            samples: t.samples_us.clone(),
        })
        .collect();
    let mut scaling = stats::assess(&rows, seed ^ 0xde9_1075);
    let max_rel_error = run
        .checks
        .iter()
        .map(|c| c.rel_error.unwrap_or(f64::NAN))
        .reduce(|a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        });
    let wrong = run
        .checks
        .iter()
        .filter(|c| !c.rel_error.is_some_and(|e| e <= MAX_REL_ERROR))
        .map(|c| c.splits)
        .collect::<Vec<_>>();
    let eager = timings.iter().find(|t| t.mode != "cuda-graph");

    let (verdict, reasons) = if let Some((s, message)) = &run.unsupported {
        let reason = if *s == 1 {
            format!("the kernel refuses this shape ({message})")
        } else {
            format!(
                "the kernel refuses split-KV (num_splits={s}: {message}); only num_splits=1 runs"
            )
        };
        scaling = Scaling {
            verdict: Verdict::Unsupported,
            reason: reason.clone(),
            ..scaling
        };
        (Verdict::Unsupported, vec![reason])
    } else if !wrong.is_empty() {
        (
            Verdict::Invalid,
            vec![format!(
                "the deployed kernel's output did not match PyTorch's fp32 \
                 scaled_dot_product_attention (relative error above {MAX_REL_ERROR:.0e} or NaN) \
                 at num_splits {wrong:?}"
            )],
        )
    } else if let Some(t) = eager {
        (
            Verdict::Inconclusive,
            vec![format!(
                "timed launch by launch ({}): the interface's Python overhead hides the kernel",
                t.mode
            )],
        )
    } else {
        let checks = Checks {
            outputs_correct: true,
            coverage_consistent: true,
        };
        stats::judge(&scaling, negative, positive, &checks)
    };

    let series = SeriesReport {
        name: "deployed".into(),
        scaling,
        coverage: None,
        max_rel_error,
        points,
    };
    let probe_over_deployed = match (probe_best_us, series.best_median_us()) {
        (Some(p), Some(d)) if d > 0.0 => Some(p / d),
        _ => None,
    };
    DeployedSeries {
        verdict,
        reasons,
        unsupported: run.unsupported.as_ref().map(|(_, m)| m.clone()),
        eager_call_us: run.eager_call_us,
        launches_per_graph: timings.first().map(|t| t.launches),
        kv_copies: timings.first().map(|t| t.copies),
        mode: timings.first().map(|t| t.mode.clone()),
        harness_seconds: run.seconds,
        probe_over_deployed,
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::super::protocol::{CheckResult, TimingResult};
    use super::*;

    fn run(latency: impl Fn(usize) -> f64, err: Option<f64>, mode: &str) -> ShapeRun {
        let splits = [1usize, 2, 4, 8, 16, 32, 64];
        ShapeRun {
            checks: splits
                .iter()
                .map(|&s| CheckResult {
                    splits: s,
                    rel_error: err,
                    seconds: 2.0,
                })
                .collect(),
            unsupported: None,
            timings: splits
                .iter()
                .map(|&s| TimingResult {
                    splits: s,
                    samples_us: (0..15)
                        .map(|i| latency(s) * (1.0 + 0.002 * (i % 5) as f64))
                        .collect(),
                    launches: 21,
                    copies: 7,
                    mode: mode.into(),
                })
                .collect(),
            eager_call_us: Some(95.0),
            seconds: 9.0,
            done: true,
        }
    }

    fn scaling(v: Verdict) -> Scaling {
        Scaling {
            verdict: v,
            best_splits: None,
            speedup: None,
            reason: v.to_string(),
        }
    }

    fn judged(r: &ShapeRun) -> DeployedSeries {
        let (flat, scales) = (scaling(Verdict::Flat), scaling(Verdict::Scales));
        judge(r, &Shape::REPORTED, 56, 1, Some(&flat), &scales, Some(17.2))
    }

    #[test]
    fn shipped_vllm_0_30_is_flat_and_fixed_scales() {
        // Measured shapes of the curves (docs/src/design.md): 335 -> 362 us shipped, 334 -> 21.3 us fixed.
        let shipped = judged(&run(
            |s| 335.0 + 27.0 * (s as f64).log2() / 6.0,
            Some(2e-3),
            "cuda-graph",
        ));
        assert_eq!(shipped.verdict, Verdict::Flat, "{:?}", shipped.reasons);
        let fixed = judged(&run(
            |s| (334.0 / s as f64).max(21.3),
            Some(2e-3),
            "cuda-graph",
        ));
        assert_eq!(fixed.verdict, Verdict::Scales, "{:?}", fixed.reasons);
        assert_eq!(fixed.series.points.len(), 7);
        assert!(fixed.series.points[0].ratio_to_one == Some(1.0));
        // The probe's best (17.2 us) over FA4's best (21.3 us): the probe is faster.
        let r = fixed.probe_over_deployed.expect("ratio");
        assert!(r < 1.0 && r > 0.7, "{r}");
        assert_eq!(fixed.series.max_rel_error, Some(2e-3));
    }

    #[test]
    fn refused_split_kv_is_unsupported() {
        let mut r = run(|_| 335.0, Some(2e-3), "cuda-graph");
        r.unsupported = Some((2, "AssertionError: SplitKV not supported on SM 9.0".into()));
        r.timings.retain(|t| t.splits == 1);
        r.checks.retain(|c| c.splits == 1);
        let d = judged(&r);
        assert_eq!(d.verdict, Verdict::Unsupported);
        assert_eq!(d.series.scaling.verdict, Verdict::Unsupported);
        assert!(d.reasons[0].contains("SM 9.0"));
        assert_eq!(d.series.points.len(), 1);
    }

    #[test]
    fn wrong_output_is_invalid_and_eager_timing_inconclusive() {
        let nan = judged(&run(|s| 334.0 / s as f64, None, "cuda-graph"));
        assert_eq!(nan.verdict, Verdict::Invalid);
        assert!(nan.reasons[0].contains("fp32"));
        let big = judged(&run(|s| 334.0 / s as f64, Some(0.5), "cuda-graph"));
        assert_eq!(big.verdict, Verdict::Invalid);
        let eager = judged(&run(
            |s| 334.0 / s as f64,
            Some(2e-3),
            "eager (capture failed)",
        ));
        assert_eq!(eager.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn controls_still_gate_the_deployed_verdict() {
        let fixed = run(|s| (334.0 / s as f64).max(21.3), Some(2e-3), "cuda-graph");
        let flat = scaling(Verdict::Flat);
        let d = judge(&fixed, &Shape::REPORTED, 56, 1, Some(&flat), &flat, None);
        assert_eq!(d.verdict, Verdict::Invalid, "positive control flat");
        assert_eq!(d.probe_over_deployed, None);
    }
}
