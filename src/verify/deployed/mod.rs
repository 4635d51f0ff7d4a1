//! `pinprobe verify --deployed TARGET`: the same split sweep through the FlashAttention 4 kernel a
//! build ships, beside the probe.
//!
//! Public surface: [`Deployed`] (the target and the Python to run it with) and [`measure`], which
//! writes the embedded harness ([`HARNESS`], `harness.py`) to a temporary directory, runs it, and
//! streams its JSON lines ([`protocol`]) into a [`protocol::HarnessRun`]; [`judge`] turns one
//! shape's results into the report's [`DeployedSeries`](super::report::DeployedSeries).
//!
//! This is the only part of pinprobe that imports code from an artifact: the harness stages the
//! target's `vllm/vllm_flash_attn/cute/` (or `flash_attn/cute/`) and imports its `interface.py`.

pub mod judge;
pub mod protocol;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Serialize;

use super::{Options, VerifyError};
use protocol::{Collector, HarnessFailure, HarnessRun};

/// The harness, embedded; written to a temporary directory at run time.
pub const HARNESS: &str = include_str!("harness.py");

/// What `--deployed` measures, and with which Python.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployed {
    /// A wheel, a site-packages directory or a virtual environment.
    pub target: PathBuf,
    /// The interpreter that runs the harness (`--python`, default `python3`): it must import
    /// PyTorch and the CuTe DSL (nvidia-cutlass-dsl) and FA4's other imports.
    pub python: OsString,
}

/// The harness's configuration (its `run` argument).
#[derive(Debug, Serialize)]
struct Config<'a> {
    target: PathBuf,
    stage_dir: PathBuf,
    device: usize,
    shapes: &'a [super::Shape],
    splits: &'a [usize],
    rounds: usize,
    launches: usize,
    seed: u64,
}

impl From<HarnessFailure> for VerifyError {
    fn from(f: HarnessFailure) -> Self {
        match f {
            HarnessFailure::NoGpu(why) => VerifyError::NoGpu(why),
            other => VerifyError::Deployed(other.to_string()),
        }
    }
}

/// Write the harness to `dir` and return its path.
pub fn write_harness(dir: &std::path::Path) -> std::io::Result<PathBuf> {
    let path = dir.join("pinprobe_deployed_harness.py");
    std::fs::write(&path, HARNESS)?;
    Ok(path)
}

/// Run the harness on `deployed.target` for `opts`' shapes and split counts. Progress (one line
/// per event) goes to `progress`; the harness's own stderr (JIT logs, tracebacks) is inherited.
pub fn measure(
    deployed: &Deployed,
    opts: &Options,
    seed: u64,
    progress: &mut dyn Write,
) -> Result<HarnessRun, VerifyError> {
    let dir = tempfile::Builder::new()
        .prefix("pinprobe-deployed-")
        .tempdir()?;
    let harness = write_harness(dir.path())?;
    let target = std::path::absolute(&deployed.target)?;
    let config = Config {
        target,
        stage_dir: dir.path().join("stage"),
        device: opts.device,
        shapes: &opts.shapes,
        splits: &opts.splits,
        rounds: opts.rounds,
        launches: opts.launches,
        seed,
    };
    let config = serde_json::to_string(&config).map_err(std::io::Error::other)?;
    let python = deployed.python.to_string_lossy().into_owned();
    let mut child = Command::new(&deployed.python)
        .arg(&harness)
        .arg("run")
        .arg(&config)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| VerifyError::Deployed(format!("--python {python}: could not be run ({e})")))?;
    writeln!(
        progress,
        "deployed: running {} with {python} (imports the target's FlashAttention code)",
        deployed.target.display()
    )?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| VerifyError::Deployed("no pipe from the harness".into()))?;
    let mut collector = Collector::new(opts.shapes.len());
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        match protocol::parse_line(&line) {
            Some(Ok(event)) => {
                if let Some(text) = describe(&event, opts) {
                    writeln!(progress, "deployed: {text}")?;
                }
                collector.push(event);
            }
            Some(Err(e)) => writeln!(progress, "deployed: unreadable event ({e}): {line}")?,
            None => {}
        }
    }
    let status = child.wait()?;
    let exit = match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    };
    Ok(collector.finish(&exit)?)
}

/// A progress line for an event, if it deserves one.
fn describe(event: &protocol::Event, opts: &Options) -> Option<String> {
    use protocol::Event::*;
    let label = |i: usize| {
        opts.shapes
            .get(i)
            .map_or(format!("shape {i}"), |s| s.label())
    };
    Some(match event {
        Target(s) => format!(
            "staged {} ({} files) from the {} {}",
            s.package, s.files, s.kind, s.source
        ),
        Hello(v) => format!(
            "Python {}, PyTorch {}, CuTe DSL {}, {} (compute {})",
            v.python.as_deref().unwrap_or("?"),
            v.torch.as_deref().unwrap_or("?"),
            v.cutlass_dsl.as_deref().unwrap_or("?"),
            v.device.as_deref().unwrap_or("?"),
            v.capability.as_deref().unwrap_or("?"),
        ),
        Check {
            shape,
            splits,
            rel_error,
            seconds,
        } => format!(
            "{}: num_splits={splits} rel error {} ({seconds:.1} s, JIT included)",
            label(*shape),
            rel_error.map_or("NaN".into(), |e| format!("{e:.1e}"))
        ),
        Unsupported {
            shape,
            splits,
            message,
        } if *splits == 1 => format!(
            "{}: the kernel refuses this shape: {message}",
            label(*shape)
        ),
        Unsupported {
            shape,
            splits,
            message,
        } => format!(
            "{}: the kernel refuses num_splits={splits}: {message}",
            label(*shape)
        ),
        ShapeDone { shape, seconds, .. } => format!("{}: timed ({seconds:.1} s)", label(*shape)),
        Done { seconds } => format!("harness finished in {seconds:.1} s"),
        Error { .. } | Timing { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_is_embedded_and_speaks_the_protocol() {
        assert!(HARNESS.contains("PROTOCOL = 1"));
        assert_eq!(protocol::PROTOCOL, 1);
        for event in [
            "\"hello\"",
            "\"target\"",
            "\"error\"",
            "\"check\"",
            "\"unsupported\"",
            "\"timing\"",
            "\"shape_done\"",
            "\"done\"",
        ] {
            assert!(HARNESS.contains(event), "harness never emits {event}");
        }
        assert!(HARNESS.contains("_flash_attn_fwd"));
        assert!(HARNESS.contains("torch.cuda.graph"));
    }
}
