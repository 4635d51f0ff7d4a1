//! Statistics and verdicts, CPU-only: medians, bootstrap confidence intervals, the speedup from
//! one split to the best split, and the verdict rules with their thresholds.
//!
//! A timing table is one row per split count, each row the per-launch latency measured in every
//! round (one CUDA-graph replay per round, split counts visited in a fresh random order).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Fewer rounds than this and the verdict is `inconclusive`: a median of 4 samples has a
/// bootstrap interval too coarse to mean anything (its resamples take only a handful of values).
pub const MIN_ROUNDS: usize = 5;

/// `scales` needs the lower confidence bound of (latency at 1 split) / (latency at the best
/// split) to reach 2x. A working split-KV decode at the reported shape gains ~16x (334 -> 21 us
/// on an H200) and the buggy one ~1x (335 -> 362 us), so 2x sits far from both; it also stays
/// clear of the few-percent wobble clocks and launch overhead add.
pub const SCALES_MIN_SPEEDUP: f64 = 2.0;

/// `flat` needs the upper confidence bound of the speedup to stay at or below 1.5x: the bug gives
/// ~1.0x. Between 1.5x and 2x (or when the interval straddles either bound) nothing is claimed:
/// `inconclusive`.
pub const FLAT_MAX_SPEEDUP: f64 = 1.5;

/// Two-sided confidence of the bootstrap intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap resamples: 2,000 puts the 2.5% / 97.5% percentiles within a fraction of the
/// interval's width of where infinitely many would, and costs milliseconds.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// A scaling verdict (docs/src/design.md, "Contracts": exit 0, 1, 3, 3, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Scales,
    Flat,
    Inconclusive,
    Invalid,
    /// `verify --deployed` only: the kernel refuses `num_splits > 1` on this GPU (upstream
    /// flash-attn-4 asserts "SplitKV not supported on SM 9.0"), so nothing about scaling can be
    /// measured.
    Unsupported,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Scales => "scales",
            Verdict::Flat => "flat",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Invalid => "invalid",
            Verdict::Unsupported => "unsupported",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A median with its bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Median of finite samples; `None` when there are none.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    // Linear interpolation between closest ranks.
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn resample(samples: &[f64], rng: &mut StdRng, scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend((0..samples.len()).map(|_| samples[rng.random_range(0..samples.len())]));
    median(scratch).unwrap_or(f64::NAN)
}

fn interval(mut stats: Vec<f64>) -> (f64, f64) {
    stats.retain(|x| x.is_finite());
    if stats.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (
        percentile_sorted(&stats, tail),
        percentile_sorted(&stats, 1.0 - tail),
    )
}

/// Median and percentile-bootstrap interval of the median; `None` without finite samples.
pub fn estimate(samples: &[f64], seed: u64) -> Option<Estimate> {
    let finite: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    let median = median(&finite)?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut scratch = Vec::with_capacity(finite.len());
    let stats = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| resample(&finite, &mut rng, &mut scratch))
        .collect();
    let (ci_low, ci_high) = interval(stats);
    Some(Estimate {
        median,
        ci_low,
        ci_high,
    })
}

/// One row of a timing table: a split count and its per-round latencies (any unit).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub splits: usize,
    pub samples: Vec<f64>,
}

/// How one series (probe or control) scales from one split to its best.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    pub verdict: Verdict,
    /// The split count with the lowest median latency.
    pub best_splits: Option<usize>,
    /// Median latency at one split over median latency at `best_splits`, with its interval.
    pub speedup: Option<Estimate>,
    /// Why the verdict is what it is, in words.
    pub reason: String,
}

/// Decide whether a timing table scales (see the thresholds above). The speedup's interval
/// resamples the one-split row and the best row independently; the best row is chosen once, on
/// all the data.
pub fn assess(rows: &[Row], seed: u64) -> Scaling {
    let inconclusive = |reason: String| Scaling {
        verdict: Verdict::Inconclusive,
        best_splits: None,
        speedup: None,
        reason,
    };
    let rounds = rows.iter().map(|r| r.samples.len()).min().unwrap_or(0);
    if rounds < MIN_ROUNDS {
        return inconclusive(format!(
            "too few rounds: {rounds} (at least {MIN_ROUNDS} needed)"
        ));
    }
    let Some(base) = rows.iter().find(|r| r.splits == 1) else {
        return inconclusive("no num_splits = 1 baseline in the sweep".into());
    };
    let medians: Vec<(usize, f64)> = rows
        .iter()
        .filter_map(|r| median(&r.samples).map(|m| (r.splits, m)))
        .collect();
    let Some(&(best_splits, _)) = medians.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return inconclusive("no finite latency".into());
    };
    let Some(best) = rows.iter().find(|r| r.splits == best_splits) else {
        return inconclusive("no finite latency".into());
    };
    let (Some(m1), Some(mb)) = (median(&base.samples), median(&best.samples)) else {
        return inconclusive("no finite latency at one split".into());
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let stats = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let a = resample(&base.samples, &mut rng, &mut scratch);
            let b = resample(&best.samples, &mut rng, &mut scratch);
            a / b
        })
        .collect();
    let (lo, hi) = interval(stats);
    let speedup = Estimate {
        median: m1 / mb,
        ci_low: lo,
        ci_high: hi,
    };
    let pct = CONFIDENCE * 100.0;
    let (verdict, reason) = if lo >= SCALES_MIN_SPEEDUP {
        (
            Verdict::Scales,
            format!(
                "1 -> {best_splits} splits is {:.1}x faster ({pct:.0}% CI {lo:.2}-{hi:.2}x, needs >= {SCALES_MIN_SPEEDUP}x)",
                speedup.median
            ),
        )
    } else if hi <= FLAT_MAX_SPEEDUP {
        (
            Verdict::Flat,
            format!(
                "best split count ({best_splits}) gains only {:.2}x over 1 split ({pct:.0}% CI {lo:.2}-{hi:.2}x, flat means <= {FLAT_MAX_SPEEDUP}x)",
                speedup.median
            ),
        )
    } else {
        (
            Verdict::Inconclusive,
            format!(
                "speedup 1 -> {best_splits} splits {:.2}x with {pct:.0}% CI {lo:.2}-{hi:.2}x: neither >= {SCALES_MIN_SPEEDUP}x nor <= {FLAT_MAX_SPEEDUP}x",
                speedup.median
            ),
        )
    };
    Scaling {
        verdict,
        best_splits: Some(best_splits),
        speedup: Some(speedup),
        reason,
    }
}

/// What the checks around the timing found for one shape.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// Every split count's output matched the fp64 reference (and had no NaN).
    pub outputs_correct: bool,
    /// Every split's reported rows matched the partition its kernel was meant to use.
    pub coverage_consistent: bool,
}

/// The verdict for one shape: the probe's own, unless a control says the measurement cannot be
/// trusted. `negative` is the ignored-splits control (absent when the probe itself is the
/// injected bug); it must come out `flat`. `positive` is the streaming-read control; it must
/// come out `scales`, or the GPU / timing cannot show scaling at all.
pub fn judge(
    probe: &Scaling,
    negative: Option<&Scaling>,
    positive: &Scaling,
    checks: &Checks,
) -> (Verdict, Vec<String>) {
    let mut invalid = Vec::new();
    if !checks.outputs_correct {
        invalid.push("an output did not match the fp64 reference".to_string());
    }
    if !checks.coverage_consistent {
        invalid.push("a split's KV rows did not match the partition".to_string());
    }
    if positive.verdict != Verdict::Scales {
        invalid.push(format!(
            "positive control (streaming read) did not scale: {}",
            positive.reason
        ));
    }
    if let Some(neg) = negative
        && neg.verdict != Verdict::Flat
    {
        invalid.push(format!(
            "negative control (ignored splits) was not flat: {}",
            neg.reason
        ));
    }
    if invalid.is_empty() {
        (probe.verdict, vec![probe.reason.clone()])
    } else {
        (Verdict::Invalid, invalid)
    }
}

/// The run's verdict over all shapes: `invalid` if any shape is; else `flat` if any shape is
/// flat (a real finding outranks an undecided shape); else `inconclusive` if any is; else
/// `unsupported` if any is; else `scales`. No shapes: `inconclusive`.
pub fn overall(verdicts: &[Verdict]) -> Verdict {
    if verdicts.is_empty() {
        return Verdict::Inconclusive;
    }
    for v in [
        Verdict::Invalid,
        Verdict::Flat,
        Verdict::Inconclusive,
        Verdict::Unsupported,
    ] {
        if verdicts.contains(&v) {
            return v;
        }
    }
    Verdict::Scales
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-1, 1).
    fn noise(i: usize, salt: u64) -> f64 {
        let mut z = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    fn table(latency: impl Fn(usize) -> f64, rel_noise: f64, rounds: usize) -> Vec<Row> {
        [1, 2, 4, 8, 16, 32, 64]
            .into_iter()
            .map(|s| Row {
                splits: s,
                samples: (0..rounds)
                    .map(|r| latency(s) * (1.0 + rel_noise * noise(r, s as u64)))
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn median_odd_even_and_nan() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn bootstrap_interval_brackets_the_median() {
        let xs: Vec<f64> = (0..31).map(|i| 100.0 + noise(i, 9) * 5.0).collect();
        let e = estimate(&xs, 1).expect("samples");
        assert!(e.ci_low <= e.median && e.median <= e.ci_high);
        assert!(e.ci_high - e.ci_low < 10.0);
        // Same seed, same interval.
        assert_eq!(estimate(&xs, 1), Some(e));
    }

    #[test]
    fn scaling_table_scales() {
        // The fixed kernel: 334 us at 1 split down to ~21 us.
        let t = table(|s| (334.0 / s as f64).max(21.3), 0.03, 15);
        let a = assess(&t, 7);
        assert_eq!(a.verdict, Verdict::Scales, "{}", a.reason);
        assert!(matches!(a.best_splits, Some(16 | 32 | 64)));
        assert!(a.speedup.expect("speedup").median > 14.0);
    }

    #[test]
    fn flat_table_is_flat() {
        // The bug: 335 -> 362 us.
        let t = table(|s| 335.0 + 27.0 * (s as f64).log2() / 6.0, 0.03, 15);
        let a = assess(&t, 7);
        assert_eq!(a.verdict, Verdict::Flat, "{}", a.reason);
        assert_eq!(a.best_splits, Some(1));
    }

    #[test]
    fn modest_gain_is_inconclusive() {
        let t = table(|s| if s == 1 { 100.0 } else { 57.0 }, 0.02, 15);
        assert_eq!(assess(&t, 7).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn noisy_table_is_inconclusive() {
        // A true 2.2x gain drowned in +-90% noise.
        let t = table(|s| if s == 1 { 220.0 } else { 100.0 }, 0.9, 15);
        let a = assess(&t, 7);
        assert_eq!(a.verdict, Verdict::Inconclusive, "{}", a.reason);
    }

    #[test]
    fn bimodal_best_split_is_inconclusive() {
        // The best split flips between a fast and a slow mode (e.g. clocks changing): 9 rounds
        // at 40 us, 7 at 400 us, against 150 us everywhere else. Its median is 40 us, but a
        // resample easily lands on 400 us.
        let mut t = table(|_| 150.0, 0.01, 16);
        for row in t.iter_mut().filter(|r| r.splits == 64) {
            row.samples = (0..16)
                .map(|i| if i % 2 == 0 || i == 15 { 40.0 } else { 400.0 })
                .collect();
        }
        let a = assess(&t, 7);
        assert_eq!(a.best_splits, Some(64));
        assert_eq!(a.verdict, Verdict::Inconclusive, "{}", a.reason);
    }

    #[test]
    fn too_few_rounds_is_inconclusive() {
        let t = table(|s| 334.0 / s as f64, 0.0, MIN_ROUNDS - 1);
        let a = assess(&t, 7);
        assert_eq!(a.verdict, Verdict::Inconclusive);
        assert!(a.reason.contains("too few rounds"));
    }

    #[test]
    fn missing_baseline_is_inconclusive() {
        let t: Vec<Row> = table(|s| 100.0 / s as f64, 0.0, 10)
            .into_iter()
            .filter(|r| r.splits != 1)
            .collect();
        assert_eq!(assess(&t, 7).verdict, Verdict::Inconclusive);
    }

    fn scaling(v: Verdict) -> Scaling {
        Scaling {
            verdict: v,
            best_splits: None,
            speedup: None,
            reason: v.to_string(),
        }
    }

    #[test]
    fn controls_gate_the_verdict() {
        let ok = Checks {
            outputs_correct: true,
            coverage_consistent: true,
        };
        let (scales, flat) = (scaling(Verdict::Scales), scaling(Verdict::Flat));
        assert_eq!(judge(&scales, Some(&flat), &scales, &ok).0, Verdict::Scales);
        assert_eq!(judge(&flat, Some(&flat), &scales, &ok).0, Verdict::Flat);
        // Positive control flat: the method cannot see scaling here.
        assert_eq!(judge(&scales, Some(&flat), &flat, &ok).0, Verdict::Invalid);
        // Negative control scales: the method cannot see the bug.
        assert_eq!(
            judge(&scales, Some(&scales), &scales, &ok).0,
            Verdict::Invalid
        );
        // Injected run: no separate negative control.
        assert_eq!(judge(&flat, None, &scales, &ok).0, Verdict::Flat);
        let wrong = Checks {
            outputs_correct: false,
            ..ok.clone()
        };
        let (v, why) = judge(&scales, Some(&flat), &scales, &wrong);
        assert_eq!(v, Verdict::Invalid);
        assert!(why[0].contains("reference"));
        let uncovered = Checks {
            coverage_consistent: false,
            ..ok
        };
        assert_eq!(
            judge(&scales, Some(&flat), &scales, &uncovered).0,
            Verdict::Invalid
        );
    }

    #[test]
    fn overall_precedence() {
        use Verdict::*;
        assert_eq!(overall(&[Scales, Scales]), Scales);
        assert_eq!(overall(&[Scales, Flat]), Flat);
        assert_eq!(overall(&[Inconclusive, Flat]), Flat);
        assert_eq!(overall(&[Scales, Inconclusive]), Inconclusive);
        assert_eq!(overall(&[Flat, Invalid]), Invalid);
        assert_eq!(overall(&[Unsupported, Unsupported]), Unsupported);
        assert_eq!(overall(&[Scales, Unsupported]), Unsupported);
        assert_eq!(overall(&[Inconclusive, Unsupported]), Inconclusive);
        assert_eq!(overall(&[]), Inconclusive);
    }
}
