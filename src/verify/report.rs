//! The verifier's report: plain serialisable data ([`Report`]), one per run, with a
//! [`ShapeReport`] per decode shape. Its renderers are in `verify::render`.

use serde::Serialize;

use super::coverage::Coverage;
use super::deployed::protocol::{Staged, Versions};
use super::sdpa::SdpaResult;
use super::stats::{self, Estimate, Scaling, Verdict};
use super::{Inject, MAX_REL_ERROR, Shape};

/// `verify --device all` (or a list): one [`Report`] per GPU, run one after another, and the
/// host's verdict over them.
#[derive(Debug, Clone, Serialize)]
pub struct HostReport {
    pub schema: u32,
    /// Over all GPUs, as over shapes ([`stats::overall`]).
    pub verdict: Verdict,
    /// In the order the GPUs ran.
    pub gpus: Vec<Report>,
}

/// Everything one `pinprobe verify` run found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: u32,
    /// Over all shapes (see [`stats::overall`]): the probe's verdicts, or with `--deployed` the
    /// deployed kernel's.
    pub verdict: Verdict,
    /// With `--deployed`: what was imported and with which software.
    pub deployed: Option<DeployedInfo>,
    pub device: DeviceInfo,
    pub inject: Option<Inject>,
    pub rounds: usize,
    pub seed: u64,
    pub compile_ms: f64,
    /// Start to the last shape's verdict (the deployed-kernel harness if any, compile, checks,
    /// controls, all shapes).
    pub verify_ms: f64,
    /// Including the optional PyTorch comparison.
    pub total_ms: f64,
    pub thresholds: Thresholds,
    pub shapes: Vec<ShapeReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    pub name: String,
    pub ordinal: usize,
    pub compute_capability: String,
    pub arch: String,
    pub sms: usize,
    pub l2_bytes: usize,
    pub driver: String,
}

/// The constants the verdicts were decided with.
#[derive(Debug, Clone, Serialize)]
pub struct Thresholds {
    pub scales_min_speedup: f64,
    pub flat_max_speedup: f64,
    pub confidence: f64,
    pub min_rounds: usize,
    pub max_rel_error: f64,
}

impl Thresholds {
    pub fn current() -> Self {
        Thresholds {
            scales_min_speedup: stats::SCALES_MIN_SPEEDUP,
            flat_max_speedup: stats::FLAT_MAX_SPEEDUP,
            confidence: stats::CONFIDENCE,
            min_rounds: stats::MIN_ROUNDS,
            max_rel_error: MAX_REL_ERROR,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ShapeReport {
    pub shape: Shape,
    pub block_n: usize,
    /// FlashAttention's `num_splits` heuristic for this shape on this device.
    pub heuristic_splits: usize,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// The series under test (the ignored-splits kernel itself under `--inject ignore-splits`).
    pub probe: SeriesReport,
    /// Ignored splits; absent when the probe is the injected bug.
    pub negative_control: Option<SeriesReport>,
    /// Streaming read over the same grids.
    pub positive_control: SeriesReport,
    /// Probe bandwidth at its best split count over the positive control's best.
    pub bandwidth_fraction: Option<f64>,
    pub sdpa: Option<SdpaResult>,
    /// With `--deployed`: the same sweep through the deployed FA4 kernel.
    pub deployed: Option<DeployedSeries>,
    pub launches_per_graph: usize,
    pub kv_copies: usize,
    pub elapsed_ms: f64,
}

/// What `--deployed` imported (the harness's `target` and `hello` events).
#[derive(Debug, Clone, Serialize)]
pub struct DeployedInfo {
    /// TARGET as given.
    pub target: String,
    /// The interpreter that ran the harness.
    pub python: String,
    pub staged: Staged,
    pub versions: Versions,
    /// Wall time of the harness process (staging, imports, JIT, checks, timing).
    pub harness_ms: f64,
}

/// One shape through the deployed kernel.
#[derive(Debug, Clone, Serialize)]
pub struct DeployedSeries {
    /// `scales`, `flat`, `inconclusive`, `invalid` (a control failed or an output was wrong) or
    /// `unsupported` (the kernel refused `num_splits > 1`).
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// The kernel's own message when it refused split-KV.
    pub unsupported: Option<String>,
    /// Host time per call of the Python interface, launched one by one (µs).
    pub eager_call_us: Option<f64>,
    pub launches_per_graph: Option<usize>,
    pub kv_copies: Option<usize>,
    /// `cuda-graph`, or `eager (...)` when graph capture failed.
    pub mode: Option<String>,
    pub harness_seconds: f64,
    /// The probe's best-split median over the deployed kernel's (at most 1: the probe is no
    /// slower).
    pub probe_over_deployed: Option<f64>,
    pub series: SeriesReport,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeriesReport {
    pub name: String,
    pub scaling: Scaling,
    /// What the coverage reports showed over the sweep (absent for the streaming read).
    pub coverage: Option<Coverage>,
    /// Worst relative error against the fp64 reference (absent for the streaming read).
    pub max_rel_error: Option<f64>,
    pub points: Vec<Point>,
}

impl SeriesReport {
    fn best(&self) -> Option<&Point> {
        self.points
            .iter()
            .filter(|p| p.latency_us.is_some())
            .min_by(|a, b| median(a).total_cmp(&median(b)))
    }
    pub fn best_median_us(&self) -> Option<f64> {
        self.best().and_then(|p| p.latency_us.map(|l| l.median))
    }
    pub fn best_bandwidth(&self) -> Option<f64> {
        self.best().and_then(|p| p.bandwidth_gbs)
    }
    pub fn best_splits(&self) -> Option<usize> {
        self.best().map(|p| p.splits)
    }
    /// The point measured at `splits`, if any.
    pub fn at(&self, splits: usize) -> Option<&Point> {
        self.points.iter().find(|p| p.splits == splits)
    }
}

fn median(p: &Point) -> f64 {
    p.latency_us.map_or(f64::INFINITY, |l| l.median)
}

/// One split count of one series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub splits: usize,
    /// This is FlashAttention's heuristic choice.
    pub heuristic: bool,
    /// Per-launch latency: median over rounds and its bootstrap interval.
    pub latency_us: Option<Estimate>,
    /// Median latency at one split over this one (higher is faster).
    pub ratio_to_one: Option<f64>,
    /// Bytes of K, V and Q over the median latency, GB/s.
    pub bandwidth_gbs: Option<f64>,
    pub rel_error: Option<f64>,
    pub coverage: Option<Coverage>,
    pub samples_us: Vec<f64>,
}
