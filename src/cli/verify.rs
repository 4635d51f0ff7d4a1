//! `pinprobe verify`: the GPU verifier's command line. Parses flags into
//! [`verify::Options`](crate::verify::Options), runs the verifier with progress on stderr, renders
//! the report on stdout (table or JSON) and an optional SVG plot, and maps the verdict to the
//! exit code. `--deployed TARGET` adds the FlashAttention 4 kernel a build ships (the only
//! pinprobe command that imports code from an artifact).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::exit::{self, Exit};
use crate::model::text::{PrintableWriter, printable};
use crate::verify::{self, Inject, Options, Shape, VerifyError, deployed::Deployed, render};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Which GPUs `--device` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    /// One index: the single-GPU report, as before.
    One(usize),
    /// Several indexes, in order, each once.
    List(Vec<usize>),
    /// Every device the driver reports.
    All,
}

fn parse_devices(s: &str) -> Result<Devices, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(Devices::All);
    }
    let index = |p: &str| {
        p.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{p}` is not a device index (N, N,M,... or all)"))
    };
    if !s.contains(',') {
        return index(s).map(Devices::One);
    }
    let mut list = Vec::new();
    for part in s.split(',') {
        let i = index(part)?;
        if list.contains(&i) {
            return Err(format!("device {i} is listed twice"));
        }
        list.push(i);
    }
    Ok(Devices::List(list))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InjectArg {
    /// Reproduce the FA4 SM90 bug: launch every split but partition for one split.
    IgnoreSplits,
}

/// `pinprobe verify --help`: what is measured, how, and what the verdicts mean.
pub const LONG_ABOUT: &str = "\
Does split-KV decode attention scale with num_splits on this GPU?

pinprobe compiles its bundled probe (kernels/splitkv_decode.cu) at run time with NVRTC for the \
GPU's architecture (sm_90 on H100/H200) and sweeps num_splits over decode attention shapes: one \
query token, grouped-query attention, bf16 K/V, fp32 accumulation. The KV range is split exactly \
as FlashAttention splits it (tiles of block_n rows, ceil(n_blocks / num_splits) tiles per split); \
a combine kernel merges the splits.

Before timing, every split count's output is checked against an fp64 CPU reference on fresh \
random inputs (outputs poisoned first; relative error under 1e-2, no NaN), and every split \
reports the KV rows it processed: honoured splits each take their share, ignored splits leave \
everything to split 0.

Timing: CUDA graphs of many launches, K/V rotated across copies that together exceed the L2 \
cache, CUDA events, split counts in a fresh random order each round; medians and bootstrap 95% \
intervals. Two controls run beside the probe: the negative control reproduces the bug (every \
split launched, partition of one split) and must come out flat; the positive control streams the \
same K/V rows over the same grids and must scale. Its bandwidth is what the probe could reach.

Verdicts (on the speedup from 1 split to the best split, lower/upper 95% bound):
  scales        lower bound >= 2x                        exit 0
  flat          upper bound <= 1.5x                      exit 1
  inconclusive  in between, too noisy, too few rounds    exit 3
  invalid       a control failed (wrong output, broken coverage, positive control flat,
                negative control scaling)                exit 3
  unsupported   --deployed only: the kernel refuses num_splits > 1 on this GPU
                (upstream flash-attn-4 on SM90)          exit 3
Errors exit 2. No NVIDIA driver or no usable GPU: one line on stderr, exit 4.

--deployed TARGET runs the same sweep through the FlashAttention 4 (CuTe DSL) kernel that a \
build ships: TARGET is a wheel, a site-packages directory or a virtual environment holding vLLM's \
vllm/vllm_flash_attn/cute/ or standalone flash_attn/cute/. THIS IMPORTS AND RUNS CODE FROM THE \
ARTIFACT: pinprobe copies only that cute/ directory to a temporary directory (under empty package \
__init__.py files, so the rest of vLLM is never imported), then runs a Python harness embedded in \
pinprobe with --python (default python3), which imports the target's interface.py and JIT-compiles \
its kernels. Run it only on artifacts you would run anyway. `pinprobe scan` never imports or \
runs anything from a target. The interpreter must import PyTorch and the CuTe DSL \
(nvidia-cutlass-dsl, with its dsl_packages directory on PYTHONPATH if it was installed with \
--target) and FA4's other imports (quack-kernels, apache-tvm-ffi, einops); a missing one is one \
line naming it, exit 2. The harness checks every split count against PyTorch's \
scaled_dot_product_attention in fp32 (relative error under 1e-2), then times each split count \
in CUDA graphs (the Python interface costs ~100 µs per call, which would hide the kernel if \
launches were timed one by one). Its curve is judged with the same statistics and controls as \
the probe and shown beside the probe's (one table, one plot); the run's verdict is the deployed \
kernel's. Default shapes with --deployed: reported (512:2:8:1:7168) and 128:2:8:1:32768.

Needs an NVIDIA driver (libcuda) and NVRTC from CUDA 13 (libnvrtc.so.13) at run time; nothing \
CUDA at build time. The report goes to stdout, progress to stderr.";

pub const AFTER_HELP: &str = "\
Examples:
  pinprobe verify                                  both default shapes, table on stdout
  pinprobe verify --format json --plot verify.svg  JSON report and a latency plot
  pinprobe verify --inject ignore-splits           the bug on purpose: expect `flat`, exit 1
  pinprobe verify --shape reported --splits 1,8,64 --rounds 30
  pinprobe verify --shape 128:8:4:4:16384 --device 1
  pinprobe verify --compare-sdpa                   also time PyTorch's SDPA on the same shapes
  pinprobe verify --deployed vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl --plot fa4.svg
  pinprobe verify --deployed .venv --python .venv/bin/python   the FA4 kernel a venv ships";

/// Flags of `pinprobe verify` (its help text is set where the subcommand is declared).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Shape to measure: `reported` (head dim 512, 2 KV heads x 8 query heads, batch 1, 7,168
    /// tokens), `long` (128, 8 x 4, batch 1, 32,768 tokens) or
    /// HEAD_DIM:KV_HEADS:Q_PER_KV:BATCH:TOKENS. Repeat for several [default: reported, long;
    /// with --deployed: reported, 128:2:8:1:32768]
    #[arg(long = "shape", value_name = "SHAPE")]
    pub shapes: Vec<String>,

    /// Split counts to sweep, comma-separated; must include 1. FlashAttention's heuristic choice
    /// for each shape is added
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    pub splits: Vec<usize>,

    /// Timing rounds: each times every series at every split count once (at least 5 for a
    /// verdict)
    #[arg(long, default_value_t = 15)]
    pub rounds: usize,

    /// Launches per CUDA graph, at least (rounded up to a multiple of the K/V copies)
    #[arg(long, default_value_t = 16)]
    pub launches: usize,

    /// CUDA device: an index, a comma-separated list (`0,1`) or `all`. With a list or `all`
    /// the probe runs on each GPU one after another; the report has one verdict per GPU and
    /// the host's (any GPU flat: the host is flat)
    #[arg(long, default_value = "0", value_name = "N|LIST|all", value_parser = parse_devices)]
    pub device: Devices,

    /// Run a known bug as the probe under test (the verdict is then about the bug)
    #[arg(long, value_enum, value_name = "BUG")]
    pub inject: Option<InjectArg>,

    /// Report format on stdout
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,

    /// Also write an SVG plot of latency against num_splits (probe and controls) to PATH
    #[arg(long, value_name = "PATH")]
    pub plot: Option<PathBuf>,

    /// Also time each shape through PyTorch's scaled_dot_product_attention (python3 with torch;
    /// skipped with a note if absent) and report its ratio to the probe's best split
    #[arg(long)]
    pub compare_sdpa: bool,

    /// Also sweep the FlashAttention 4 kernel this build ships: a wheel, site-packages directory
    /// or virtual environment with vllm/vllm_flash_attn/cute/ or flash_attn/cute/. IMPORTS AND
    /// RUNS CODE FROM THE TARGET (see above)
    #[arg(long, value_name = "TARGET")]
    pub deployed: Option<PathBuf>,

    /// Python interpreter for --deployed (needs PyTorch and the CuTe DSL)
    #[arg(
        long,
        value_name = "PATH",
        default_value = "python3",
        requires = "deployed"
    )]
    pub python: OsString,

    /// Seed for inputs, visiting order and bootstrap [default: fresh each run]
    #[arg(long)]
    pub seed: Option<u64>,
}

impl Args {
    pub fn options(&self) -> anyhow::Result<Options> {
        let shapes = if self.shapes.is_empty() && self.deployed.is_some() {
            vec![Shape::REPORTED, Shape::DEPLOYED_LONG]
        } else if self.shapes.is_empty() {
            Options::default().shapes
        } else {
            self.shapes
                .iter()
                .map(|s| Shape::parse(s))
                .collect::<Result<_, _>>()?
        };
        let opts = Options {
            shapes,
            splits: self.splits.clone(),
            rounds: self.rounds,
            launches: self.launches,
            device: match self.device {
                Devices::One(i) => i,
                Devices::List(ref l) => l.first().copied().unwrap_or(0),
                Devices::All => 0,
            },
            inject: self
                .inject
                .map(|InjectArg::IgnoreSplits| Inject::IgnoreSplits),
            compare_sdpa: self.compare_sdpa,
            deployed: match &self.deployed {
                Some(target) if !target.exists() => {
                    anyhow::bail!("--deployed {}: no such file or directory", target.display())
                }
                Some(target) => Some(Deployed {
                    target: target.clone(),
                    python: self.python.clone(),
                }),
                None => None,
            },
            seed: self.seed,
        };
        opts.validate()?;
        Ok(opts)
    }
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let opts = args.options()?;
    let devices = match &args.device {
        Devices::One(_) => None,
        Devices::List(list) => Some(list.clone()),
        Devices::All => match measured(|_| verify::device_count())? {
            Ok(n) => Some((0..n).collect()),
            Err(no_gpu) => return Ok(no_gpu),
        },
    };
    if let Some(devices) = devices {
        return run_host(&args, &opts, &devices, out);
    }
    let report = match measured(|progress| verify::run(&opts, progress))? {
        Ok(report) => report,
        Err(no_gpu) => return Ok(no_gpu),
    };
    match args.format {
        Format::Table => render::render_table(&report, &mut PrintableWriter::new(&mut *out))?,
        Format::Json => render::render_json(&report, out)?,
    }
    out.flush()?;
    if let Some(path) = &args.plot {
        render::render_svg(&report, path)?;
        eprintln!("plot written to {}", printable(&path.display().to_string()));
    }
    Ok(exit::for_verify(report.verdict))
}

/// Run `measure` with its progress on stderr. Progress and the table carry text from the
/// driver, the artifact and its harness, so both go through [`PrintableWriter`]: no control
/// character of theirs reaches the terminal (JSON escapes its own). No usable GPU is one line
/// and [`exit::NO_GPU`] (the inner `Err`).
fn measured<T>(
    measure: impl FnOnce(&mut dyn Write) -> Result<T, VerifyError>,
) -> anyhow::Result<Result<T, Exit>> {
    let mut progress = PrintableWriter::new(std::io::stderr().lock());
    let result = measure(&mut progress);
    drop(progress);
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(VerifyError::NoGpu(why)) => {
            eprintln!("pinprobe: no usable GPU: {}", printable(&why.to_string()));
            Ok(Err(exit::NO_GPU))
        }
        Err(e) => Err(e).context("verify"),
    }
}

/// `--device all` or a list: each GPU in turn, then the host's verdict.
fn run_host(
    args: &Args,
    opts: &Options,
    devices: &[usize],
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let host = match measured(|progress| verify::run_host(opts, devices, progress))? {
        Ok(host) => host,
        Err(no_gpu) => return Ok(no_gpu),
    };
    match args.format {
        Format::Table => render::render_host_table(&host, &mut PrintableWriter::new(&mut *out))?,
        Format::Json => render::render_host_json(&host, out)?,
    }
    out.flush()?;
    if let Some(path) = &args.plot {
        for gpu in &host.gpus {
            // One plot per GPU: PATH with `.gpuN` before its extension.
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            let name = match (stem, path.extension()) {
                (Some(stem), Some(ext)) => {
                    format!("{stem}.gpu{}.{}", gpu.device.ordinal, ext.to_string_lossy())
                }
                (Some(stem), None) => format!("{stem}.gpu{}", gpu.device.ordinal),
                _ => format!("verify.gpu{}.svg", gpu.device.ordinal),
            };
            let file = path.with_file_name(name);
            render::render_svg(gpu, &file)?;
            eprintln!("plot written to {}", printable(&file.display().to_string()));
        }
    }
    Ok(exit::for_verify(host.verdict))
}

#[cfg(test)]
mod tests {
    use super::{Devices, parse_devices};

    #[test]
    fn devices_parse() {
        assert_eq!(parse_devices("1"), Ok(Devices::One(1)));
        assert_eq!(parse_devices("ALL"), Ok(Devices::All));
        assert_eq!(parse_devices("0, 1"), Ok(Devices::List(vec![0, 1])));
        assert!(parse_devices("0,0").is_err());
        assert!(parse_devices("gpu0").is_err());
        assert!(parse_devices("0,").is_err());
    }
}
