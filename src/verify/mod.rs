//! GPU verifier: the bundled split-KV decode probe (`kernels/splitkv_decode.cu`), swept over
//! `num_splits`, and a statistical verdict on whether latency scales.
//!
//! Public surface: [`Options`] in, [`run`] out to a [`report::Report`]; [`VerifyError::NoGpu`]
//! when there is no usable GPU. The pieces, one concern each:
//!
//! - [`partition`]: FlashAttention's split math and `num_splits` heuristic.
//! - [`coverage`]: what each split says it processed, against the partition.
//! - [`reference`]: fp64 CPU attention, split partials and combine.
//! - [`stats`]: medians, bootstrap intervals, verdicts and their thresholds.
//! - `probe`: the GPU (cudarc, loaded at run time): NVRTC, buffers, CUDA graphs, events.
//! - [`sdpa`]: the same shape through PyTorch, when it is installed.
//! - [`deployed`]: the same sweep through the FlashAttention 4 kernel a build ships
//!   (`--deployed TARGET`): an embedded Python harness, its JSON-lines protocol, its verdict.
//! - [`report`]: the report model and its table, JSON and SVG renderers.
//!
//! Per shape, [`run`] draws fresh random inputs, checks every split count's output against the
//! fp64 reference (outputs poisoned first) and every split's coverage, then times the probe, the
//! ignored-splits negative control and the streaming-read positive control in CUDA graphs, split
//! counts in a fresh random order each round, and judges. With [`Options::deployed`], the harness
//! runs first (in its own process, so the two never share the GPU) and each shape's report
//! carries the deployed kernel's curve and verdict beside the probe's; the run's verdict is then
//! the deployed kernel's.

pub mod attention;
pub mod coverage;
pub mod deployed;
pub mod partition;
mod probe;
pub mod render;
pub mod report;
pub mod sdpa;
pub mod stats;

use serde::Serialize;
use std::io::Write;
use std::time::Instant;

use coverage::Coverage;
pub use probe::{compile_cubin, device_count, driver_present};
use report::{DeployedInfo, Point, Report, SeriesReport, ShapeReport, Thresholds};
use stats::{Checks, Row, Verdict};

/// Relative error (`‖out − ref‖ / ‖ref‖` against the fp64 reference) above which an output is
/// wrong. bf16 inputs with fp32 accumulation land around 2e-3 (probabilities are rounded to bf16
/// for the P.V product, as FlashAttention does); a lost or doubled split moves the output by
/// far more than 1e-2 at these sequence lengths.
pub const MAX_REL_ERROR: f64 = 1e-2;

/// One decode-attention problem: one query token per sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub head_dim: usize,
    pub kv_heads: usize,
    /// Query heads per KV head (grouped-query attention).
    pub q_per_kv: usize,
    pub batch: usize,
    /// KV tokens per sequence.
    pub tokens: usize,
}

/// Head dims the probe is compiled for.
pub const HEAD_DIMS: [usize; 4] = [64, 128, 256, 512];

/// Most query heads per KV head one CTA handles (the MMA's M side).
pub const MAX_Q_PER_KV: usize = 16;

/// Most splits a sweep may ask for (the combine kernel's weight table holds 1,024).
pub const MAX_SPLITS: usize = 1024;

impl Shape {
    /// The reported case: head dim 512, 2 KV heads, 8 query heads each, batch 1, 7,168 tokens.
    pub const REPORTED: Shape = Shape {
        head_dim: 512,
        kv_heads: 2,
        q_per_kv: 8,
        batch: 1,
        tokens: 7168,
    };
    /// Long context: head dim 128, 8 KV heads, 4 query heads each, batch 1, 32,768 tokens.
    pub const LONG: Shape = Shape {
        head_dim: 128,
        kv_heads: 8,
        q_per_kv: 4,
        batch: 1,
        tokens: 32768,
    };
    /// Long context as `--deployed` measures it by default (the seed report's second case):
    /// head dim 128, 2 KV heads, 8 query heads each, batch 1, 32,768 tokens.
    pub const DEPLOYED_LONG: Shape = Shape {
        head_dim: 128,
        kv_heads: 2,
        q_per_kv: 8,
        batch: 1,
        tokens: 32768,
    };

    pub fn q_heads(&self) -> usize {
        self.kv_heads * self.q_per_kv
    }
    /// Elements of `q`.
    pub fn q_len(&self) -> usize {
        self.batch * self.q_heads() * self.head_dim
    }
    /// Elements of `k` (and of `v`).
    pub fn kv_len(&self) -> usize {
        self.batch * self.tokens * self.kv_heads * self.head_dim
    }
    /// Bytes one decode step must read: K and V (bf16) and Q.
    pub fn bytes_read(&self) -> usize {
        (2 * self.kv_len() + self.q_len()) * 2
    }
    /// FlashAttention-style KV tile: 128 rows up to head dim 128, 64 above.
    pub fn block_n(&self) -> usize {
        if self.head_dim <= 128 { 128 } else { 64 }
    }
    /// Short label, e.g. `d512 kv2 q8 b1 t7168`.
    pub fn label(&self) -> String {
        format!(
            "d{} kv{} q{} b{} t{}",
            self.head_dim, self.kv_heads, self.q_per_kv, self.batch, self.tokens
        )
    }

    /// Parse `reported`, `long`, or `HEAD_DIM:KV_HEADS:Q_PER_KV:BATCH:TOKENS`.
    pub fn parse(text: &str) -> Result<Shape, VerifyError> {
        let shape = match text {
            "reported" => Shape::REPORTED,
            "long" => Shape::LONG,
            _ => {
                let parts: Vec<&str> = text.split(':').collect();
                let nums: Option<Vec<usize>> =
                    parts.iter().map(|p| p.trim().parse().ok()).collect();
                match nums.as_deref() {
                    Some(&[head_dim, kv_heads, q_per_kv, batch, tokens]) => Shape {
                        head_dim,
                        kv_heads,
                        q_per_kv,
                        batch,
                        tokens,
                    },
                    _ => {
                        return Err(VerifyError::Options(format!(
                            "shape {text:?}: expected `reported`, `long` or \
                             HEAD_DIM:KV_HEADS:Q_PER_KV:BATCH:TOKENS (e.g. 512:2:8:1:7168)"
                        )));
                    }
                }
            }
        };
        shape.validate()?;
        Ok(shape)
    }

    pub fn validate(&self) -> Result<(), VerifyError> {
        let bad = |why: String| {
            Err(VerifyError::Options(format!(
                "shape {}: {why}",
                self.label()
            )))
        };
        if !HEAD_DIMS.contains(&self.head_dim) {
            return bad(format!("head dim must be one of {HEAD_DIMS:?}"));
        }
        if self.q_per_kv == 0 || self.q_per_kv > MAX_Q_PER_KV {
            return bad(format!(
                "query heads per KV head must be 1..={MAX_Q_PER_KV}"
            ));
        }
        if self.kv_heads == 0 || self.kv_heads > 65535 || self.batch == 0 || self.batch > 65535 {
            return bad("KV heads and batch must be 1..=65535".into());
        }
        if self.tokens == 0 || self.tokens > (1 << 30) {
            return bad("tokens must be 1..=2^30".into());
        }
        if self.kv_len().saturating_mul(2) > (16usize << 30) {
            return bad("K and V together would exceed 16 GiB".into());
        }
        Ok(())
    }
}

/// A bug to reproduce on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inject {
    /// The FA4 SM90 bug: every split launched, the partition computed for one split.
    IgnoreSplits,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    pub shapes: Vec<Shape>,
    /// Split counts to sweep; FlashAttention's heuristic choice is added per shape. Must hold 1.
    pub splits: Vec<usize>,
    /// Timing rounds; each round times every (series, split count) once, in a fresh random order.
    pub rounds: usize,
    /// At least this many launches per CUDA graph (rounded up to a multiple of the K/V copies).
    pub launches: usize,
    /// CUDA device ordinal.
    pub device: usize,
    pub inject: Option<Inject>,
    /// Also time the shapes through PyTorch's `scaled_dot_product_attention` (if installed).
    pub compare_sdpa: bool,
    /// Also sweep the FlashAttention 4 kernel a build ships (imports code from the target).
    pub deployed: Option<deployed::Deployed>,
    /// Seed for the inputs, the visiting order and the bootstrap; fresh when absent.
    pub seed: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            shapes: vec![Shape::REPORTED, Shape::LONG],
            splits: vec![1, 2, 4, 8, 16, 32, 64],
            rounds: 15,
            launches: 16,
            device: 0,
            inject: None,
            compare_sdpa: false,
            deployed: None,
            seed: None,
        }
    }
}

impl Options {
    pub fn validate(&self) -> Result<(), VerifyError> {
        if self.shapes.is_empty() {
            return Err(VerifyError::Options("no shape to measure".into()));
        }
        for shape in &self.shapes {
            shape.validate()?;
        }
        if !self.splits.contains(&1) {
            return Err(VerifyError::Options(
                "split counts must include 1 (the baseline every ratio is taken against)".into(),
            ));
        }
        if let Some(&bad) = self.splits.iter().find(|&&s| s == 0 || s > MAX_SPLITS) {
            return Err(VerifyError::Options(format!(
                "split count {bad}: must be 1..={MAX_SPLITS}"
            )));
        }
        if self.rounds == 0 {
            return Err(VerifyError::Options("rounds must be at least 1".into()));
        }
        if self.launches == 0 || self.launches > 4096 {
            return Err(VerifyError::Options("launches must be 1..=4096".into()));
        }
        Ok(())
    }
}

/// Why a run could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// No driver, no NVIDIA device, or none this probe can run on (exit 4).
    #[error("no usable GPU: {0}")]
    NoGpu(String),
    #[error("{0}")]
    Options(String),
    #[error("NVRTC: {0}")]
    Nvrtc(String),
    #[error("CUDA {what}: {source}")]
    Cuda {
        what: &'static str,
        #[source]
        source: cudarc::driver::DriverError,
    },
    #[error("the CUDA library failed: {0}")]
    Panic(String),
    /// `--deployed`: the harness could not run, a module it needs is missing, the target holds
    /// no FA4 sources, or the kernel failed (exit 2).
    #[error("deployed kernel: {0}")]
    Deployed(String),
    #[error("writing progress: {0}")]
    Io(#[from] std::io::Error),
}

/// The three things timed per split count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Series {
    /// Splits honoured: the probe.
    Probe,
    /// Negative control: splits launched, partition of one.
    IgnoreSplits,
    /// Positive control: streaming read over the same grid and partition.
    StreamRead,
}

impl Series {
    fn name(self) -> &'static str {
        match self {
            Series::Probe => "probe",
            Series::IgnoreSplits => "ignore-splits",
            Series::StreamRead => "stream-read",
        }
    }
}

/// Run the verifier. Progress goes to `progress` (stderr in the CLI); the report is returned.
/// Any panic inside the CUDA bindings (a driver missing a symbol, say) is caught and returned as
/// [`VerifyError::Panic`], without the panic message on stderr.
pub fn run(opts: &Options, progress: &mut dyn Write) -> Result<Report, VerifyError> {
    opts.validate()?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_gpu(opts, progress)));
    std::panic::set_hook(hook);
    match result {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(VerifyError::Panic(msg.replace('\n', " ")))
        }
    }
}

/// [`run`] on each of `devices`, one after another (a GPU's timing is never shared with work on
/// another), and the host's verdict over them ([`stats::overall`]: any GPU flat makes the host
/// flat, any invalid makes it invalid).
pub fn run_host(
    opts: &Options,
    devices: &[usize],
    progress: &mut dyn Write,
) -> Result<report::HostReport, VerifyError> {
    let mut gpus = Vec::with_capacity(devices.len());
    for &device in devices {
        let one = Options {
            device,
            ..opts.clone()
        };
        gpus.push(run(&one, progress)?);
    }
    let verdicts: Vec<Verdict> = gpus.iter().map(|r| r.verdict).collect();
    Ok(report::HostReport {
        schema: 1,
        verdict: stats::overall(&verdicts),
        gpus,
    })
}

fn run_gpu(opts: &Options, progress: &mut dyn Write) -> Result<Report, VerifyError> {
    let started = Instant::now();
    let seed = opts.seed.unwrap_or_else(rand::random);
    // The deployed kernel first: its errors (no PyTorch, no CuTe DSL, no FA4 in the target) come
    // before the probe's seconds are spent, and its process is gone before the probe times.
    let harness = match &opts.deployed {
        Some(d) => {
            let t = Instant::now();
            let run = deployed::measure(d, opts, seed, progress)?;
            Some((d, run, t.elapsed().as_secs_f64() * 1e3))
        }
        None => None,
    };
    let device = probe::Device::open(opts.device)?;
    let info = device.info.clone();
    writeln!(
        progress,
        "pinprobe verify: {} (GPU {}, compute {}, {} SMs, {} MB L2)",
        info.name,
        info.ordinal,
        info.compute_capability,
        info.sms,
        info.l2_bytes >> 20
    )?;
    let mut head_dims: Vec<usize> = opts.shapes.iter().map(|s| s.head_dim).collect();
    head_dims.sort_unstable();
    head_dims.dedup();
    let kernels = device.compile(&head_dims)?;
    let compile_ms = kernels.compile_ms;
    writeln!(
        progress,
        "compiled the probe with NVRTC for {} in {:.0} ms",
        kernels.arch, kernels.compile_ms
    )?;

    let mut shapes = Vec::new();
    for (i, shape) in opts.shapes.iter().enumerate() {
        let shape_seed = seed.wrapping_add(i as u64 * 0x9e37_79b9);
        shapes.push(run_shape(
            &device, &kernels, shape, opts, shape_seed, progress,
        )?);
    }
    drop(kernels);
    drop(device);
    let gpu_ms = started.elapsed().as_secs_f64() * 1e3;

    if opts.compare_sdpa {
        for sr in &mut shapes {
            writeln!(
                progress,
                "timing {} through PyTorch scaled_dot_product_attention",
                sr.shape.label()
            )?;
            let result = sdpa::measure(&sr.shape, opts.device, opts.rounds, opts.launches);
            sr.sdpa = Some(sdpa::with_ratio(result, sr.probe.best_median_us()));
        }
    }

    let mut deployed_info = None;
    if let Some((d, run, harness_ms)) = harness {
        for (i, (sr, shape_run)) in shapes.iter_mut().zip(&run.shapes).enumerate() {
            let judged = deployed::judge::judge(
                shape_run,
                &sr.shape,
                sr.heuristic_splits,
                seed.wrapping_add(i as u64),
                sr.negative_control.as_ref().map(|n| &n.scaling),
                &sr.positive_control.scaling,
                sr.probe.best_median_us(),
            );
            writeln!(
                progress,
                "{}: deployed kernel {}",
                sr.shape.label(),
                judged.verdict
            )?;
            sr.deployed = Some(judged);
        }
        deployed_info = Some(DeployedInfo {
            target: d.target.display().to_string(),
            python: d.python.to_string_lossy().into_owned(),
            staged: run.staged,
            versions: run.versions,
            harness_ms,
        });
    }
    let verdicts: Vec<Verdict> = shapes
        .iter()
        .map(|s| s.deployed.as_ref().map_or(s.verdict, |d| d.verdict))
        .collect();
    let verdict = stats::overall(&verdicts);
    Ok(Report {
        schema: 1,
        verdict,
        deployed: deployed_info,
        device: info,
        inject: opts.inject,
        rounds: opts.rounds,
        seed,
        compile_ms,
        verify_ms: gpu_ms,
        total_ms: started.elapsed().as_secs_f64() * 1e3,
        thresholds: Thresholds::current(),
        shapes,
    })
}

fn run_shape(
    device: &probe::Device,
    kernels: &probe::Kernels,
    shape: &Shape,
    opts: &Options,
    seed: u64,
    progress: &mut dyn Write,
) -> Result<ShapeReport, VerifyError> {
    let started = Instant::now();
    let block_n = shape.block_n();
    let n_blocks = partition::n_blocks(shape.tokens, block_n);
    let sms = device.info.sms;
    let heuristic = partition::fa_num_splits_heuristic(
        shape.batch * shape.kv_heads,
        sms,
        n_blocks,
        partition::fa_max_splits(sms, n_blocks),
    );
    let mut splits = opts.splits.clone();
    splits.push(heuristic);
    splits.sort_unstable();
    splits.dedup();

    let (probe_series, negative) = match opts.inject {
        Some(Inject::IgnoreSplits) => (Series::IgnoreSplits, None),
        None => (Series::Probe, Some(Series::IgnoreSplits)),
    };
    let checked: Vec<Series> = std::iter::once(probe_series).chain(negative).collect();
    let timed: Vec<Series> = checked
        .iter()
        .copied()
        .chain(std::iter::once(Series::StreamRead))
        .collect();

    writeln!(
        progress,
        "{}: fresh random inputs (seed {seed}), {} KV tiles of {block_n} rows, heuristic picks {heuristic} splits",
        shape.label(),
        n_blocks
    )?;
    let inputs = attention::Inputs::random(shape, seed);
    let max_splits = splits.iter().copied().max().unwrap_or(1);
    let mut bufs = device.upload(shape, &inputs, max_splits)?;

    std::thread::scope(|scope| -> Result<ShapeReport, VerifyError> {
        // The fp64 reference runs on the CPU while the GPU works.
        let reference = scope.spawn(|| attention::attention(shape, &inputs));

        // Correctness and coverage, before any timing.
        let mut outputs = Vec::new();
        for &series in &checked {
            for &s in &splits {
                let partition_splits = if series == Series::IgnoreSplits { 1 } else { s };
                let (out, cov) =
                    device.run_checked(kernels, &mut bufs, shape, s, partition_splits)?;
                outputs.push((series, s, out, cov));
            }
        }
        writeln!(
            progress,
            "{}: outputs and coverage read back for {} runs; timing {} rounds x {} series x {} split counts ({} launches per graph, {} K/V copies)",
            shape.label(),
            outputs.len(),
            opts.rounds,
            timed.len(),
            splits.len(),
            bufs.launches_per_graph(opts.launches),
            bufs.copies()
        )?;

        let timings = device.time_sweep(
            kernels,
            &mut bufs,
            shape,
            &timed,
            &splits,
            opts.rounds,
            opts.launches,
            seed,
        )?;
        let reference = reference
            .join()
            .map_err(|_| VerifyError::Panic("the CPU reference panicked".into()))?;

        let mut series_reports = Vec::new();
        let mut checks = Checks {
            outputs_correct: true,
            coverage_consistent: true,
        };
        for (si, &series) in timed.iter().enumerate() {
            let expected = match series {
                Series::Probe => Some(Coverage::Honoured),
                Series::IgnoreSplits => Some(Coverage::Ignored),
                Series::StreamRead => None,
            };
            let mut points = Vec::new();
            let mut rows = Vec::new();
            let mut coverages = Vec::new();
            let mut max_err: Option<f64> = None;
            for &s in &splits {
                let samples = timings.samples(series, s).to_vec();
                let latency = stats::estimate(&samples, seed ^ (s as u64) ^ ((si as u64) << 32));
                let (rel_error, cov) = match outputs
                    .iter()
                    .find(|(se, sp, _, _)| *se == series && *sp == s)
                {
                    Some((_, _, out, cov)) => {
                        let err = attention::relative_error(out, &reference);
                        let class = coverage::classify(shape, s, cov);
                        (Some(err), Some(class))
                    }
                    None => (None, None),
                };
                if let Some(err) = rel_error {
                    // NaN never passes.
                    if err.is_nan() || err > MAX_REL_ERROR {
                        checks.outputs_correct = false;
                    }
                    max_err = Some(match max_err {
                        Some(m) if m.is_nan() => m,
                        Some(m) if !err.is_nan() => m.max(err),
                        _ => err,
                    });
                }
                if let (Some(expected), Some(class)) = (expected, cov) {
                    if !class.consistent_with(expected) {
                        checks.coverage_consistent = false;
                    }
                    coverages.push(class);
                }
                points.push(Point {
                    splits: s,
                    heuristic: s == heuristic,
                    latency_us: latency,
                    ratio_to_one: None,
                    bandwidth_gbs: latency.map(|l| shape.bytes_read() as f64 / (l.median * 1e3)),
                    rel_error,
                    coverage: cov,
                    samples_us: samples.clone(),
                });
                rows.push(Row { splits: s, samples });
            }
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
            let scaling = stats::assess(&rows, seed ^ 0x5ca1e ^ si as u64);
            series_reports.push(SeriesReport {
                name: series.name().to_string(),
                scaling,
                coverage: coverage::summarise(&coverages),
                max_rel_error: max_err,
                points,
            });
        }
        let positive = series_reports
            .pop()
            .ok_or(VerifyError::Panic("no positive control".into()))?;
        let negative_report = if negative.is_some() {
            series_reports.pop()
        } else {
            None
        };
        let probe_report = series_reports
            .pop()
            .ok_or(VerifyError::Panic("no probe series".into()))?;

        let (verdict, reasons) = stats::judge(
            &probe_report.scaling,
            negative_report.as_ref().map(|r| &r.scaling),
            &positive.scaling,
            &checks,
        );
        let bandwidth_fraction = match (probe_report.best_bandwidth(), positive.best_bandwidth()) {
            (Some(p), Some(c)) if c > 0.0 => Some(p / c),
            _ => None,
        };
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        writeln!(progress, "{}: {verdict} ({:.0} ms)", shape.label(), elapsed)?;
        Ok(ShapeReport {
            shape: *shape,
            block_n,
            heuristic_splits: heuristic,
            verdict,
            reasons,
            probe: probe_report,
            negative_control: negative_report,
            positive_control: positive,
            bandwidth_fraction,
            sdpa: None,
            deployed: None,
            launches_per_graph: bufs.launches_per_graph(opts.launches),
            kv_copies: bufs.copies(),
            elapsed_ms: elapsed,
        })
    })
}

/// Whether the verdict means the run was undecided (exit 3).
pub fn is_undecided(v: Verdict) -> bool {
    matches!(
        v,
        Verdict::Inconclusive | Verdict::Invalid | Verdict::Unsupported
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_shapes() {
        assert_eq!(Shape::parse("reported").ok(), Some(Shape::REPORTED));
        assert_eq!(Shape::parse("long").ok(), Some(Shape::LONG));
        assert_eq!(Shape::parse("128:8:4:1:32768").ok(), Some(Shape::LONG));
        assert!(Shape::parse("100:8:4:1:32768").is_err()); // head dim
        assert!(Shape::parse("128:8:17:1:32768").is_err()); // too many q heads per KV head
        assert!(Shape::parse("128:8:4:1").is_err());
        assert!(Shape::parse("a:b:c:d:e").is_err());
        assert!(Shape::parse("128:0:4:1:10").is_err());
    }

    #[test]
    fn shape_sizes() {
        let s = Shape::REPORTED;
        assert_eq!(s.q_heads(), 16);
        assert_eq!(s.kv_len(), 7168 * 2 * 512);
        assert_eq!(s.block_n(), 64);
        assert_eq!(Shape::LONG.block_n(), 128);
        // 29.4 MB of K and V: under the H200's 60 MB L2, so copies must rotate.
        assert_eq!(s.bytes_read(), (2 * 7168 * 2 * 512 + 16 * 512) * 2);
    }

    #[test]
    fn options_validation() {
        assert!(Options::default().validate().is_ok());
        let no_one = Options {
            splits: vec![2, 4],
            ..Options::default()
        };
        assert!(no_one.validate().is_err());
        let zero = Options {
            splits: vec![1, 0],
            ..Options::default()
        };
        assert!(zero.validate().is_err());
        let no_rounds = Options {
            rounds: 0,
            ..Options::default()
        };
        assert!(no_rounds.validate().is_err());
    }
}
