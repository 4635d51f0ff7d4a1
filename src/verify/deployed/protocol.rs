//! The harness's JSON-lines protocol (version 1), CPU-only: one [`Event`] per stdout line, folded
//! by a [`Collector`] into a [`HarnessRun`] (what was imported, per shape the correctness checks,
//! the timings and whether the kernel refused split-KV), or into a [`HarnessFailure`].
//!
//! The event names and fields are documented at the top of `harness.py`; lines that are not
//! protocol events (a library printing to stdout despite the harness's redirection) are ignored.

use serde::{Deserialize, Serialize};

/// Protocol version the harness speaks.
pub const PROTOCOL: u32 = 1;

/// One line of the harness's stdout.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Hello(Versions),
    Target(Staged),
    Error {
        kind: String,
        message: String,
        #[serde(default)]
        missing: Option<String>,
    },
    Check {
        shape: usize,
        splits: usize,
        /// `None` when the output held NaN (never written, or computed wrong).
        rel_error: Option<f64>,
        #[serde(default)]
        seconds: f64,
    },
    Unsupported {
        shape: usize,
        splits: usize,
        message: String,
    },
    Timing {
        shape: usize,
        splits: usize,
        samples_us: Vec<f64>,
        launches: usize,
        copies: usize,
        mode: String,
    },
    ShapeDone {
        shape: usize,
        #[serde(default)]
        eager_call_us: Option<f64>,
        #[serde(default)]
        seconds: f64,
    },
    Done {
        #[serde(default)]
        seconds: f64,
    },
}

/// The software the harness ran with (`hello`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Versions {
    #[serde(default)]
    pub protocol: u32,
    #[serde(default)]
    pub python: Option<String>,
    #[serde(default)]
    pub torch: Option<String>,
    #[serde(default)]
    pub cuda: Option<String>,
    #[serde(default)]
    pub cutlass_dsl: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub capability: Option<String>,
}

/// What was staged from the target (`target`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Staged {
    /// `wheel`, `site-packages` or `venv`.
    pub kind: String,
    /// The directory inside site-packages, e.g. `vllm/vllm_flash_attn/cute`.
    pub package: String,
    /// The module imported, e.g. `vllm.vllm_flash_attn.cute`.
    pub module: String,
    /// The wheel, or the site-packages directory the sources came from.
    pub source: String,
    pub files: usize,
    /// SHA-256 of `interface.py`, `flash_fwd_sm90.py` and `block_info.py` as staged.
    #[serde(default)]
    pub sha256: std::collections::BTreeMap<String, String>,
}

/// One split count's correctness check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub splits: usize,
    pub rel_error: Option<f64>,
    /// The first call, JIT compilation included.
    pub seconds: f64,
}

/// One split count's timing.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingResult {
    pub splits: usize,
    pub samples_us: Vec<f64>,
    pub launches: usize,
    pub copies: usize,
    pub mode: String,
}

/// Everything the harness reported for one shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShapeRun {
    pub checks: Vec<CheckResult>,
    /// The split count the kernel refused and its message.
    pub unsupported: Option<(usize, String)>,
    pub timings: Vec<TimingResult>,
    pub eager_call_us: Option<f64>,
    pub seconds: f64,
    pub done: bool,
}

/// A finished harness run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HarnessRun {
    pub versions: Versions,
    pub staged: Staged,
    pub shapes: Vec<ShapeRun>,
    pub seconds: f64,
}

/// Why the harness produced no run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HarnessFailure {
    /// PyTorch sees no GPU (exit 4, like the probe).
    #[error("{0}")]
    NoGpu(String),
    /// Something the kernel needs is not importable: PyTorch, the CuTe DSL, a module FA4 imports.
    #[error("missing {what}: {message}")]
    Missing { what: String, message: String },
    /// Any other error the harness reported (target, import, kernel, usage).
    #[error("{kind}: {message}")]
    Reported { kind: String, message: String },
    /// The harness stopped without `done` and without an error event.
    #[error("{0}")]
    Incomplete(String),
}

/// Folds events, in order, into a run.
#[derive(Debug, Default)]
pub struct Collector {
    run: HarnessRun,
    failure: Option<HarnessFailure>,
    done: bool,
    saw_target: bool,
}

/// Parse one stdout line; `None` for anything that is not a protocol event.
pub fn parse_line(line: &str) -> Option<Result<Event, serde_json::Error>> {
    let line = line.trim();
    if !line.starts_with('{') || !line.contains("\"event\"") {
        return None;
    }
    Some(serde_json::from_str(line))
}

impl Collector {
    pub fn new(shapes: usize) -> Self {
        Collector {
            run: HarnessRun {
                shapes: vec![ShapeRun::default(); shapes],
                ..HarnessRun::default()
            },
            ..Collector::default()
        }
    }

    fn shape(&mut self, index: usize) -> Option<&mut ShapeRun> {
        self.run.shapes.get_mut(index)
    }

    /// Take one event. Events about a shape that was not asked for are ignored.
    pub fn push(&mut self, event: Event) {
        match event {
            Event::Hello(v) => self.run.versions = v,
            Event::Target(s) => {
                self.saw_target = true;
                self.run.staged = s;
            }
            Event::Error {
                kind,
                message,
                missing,
            } => {
                let failure = match (kind.as_str(), missing) {
                    ("no_gpu", _) => HarnessFailure::NoGpu(message),
                    ("missing", Some(what)) => HarnessFailure::Missing { what, message },
                    _ => HarnessFailure::Reported { kind, message },
                };
                self.failure.get_or_insert(failure);
            }
            Event::Check {
                shape,
                splits,
                rel_error,
                seconds,
            } => {
                if let Some(s) = self.shape(shape) {
                    s.checks.push(CheckResult {
                        splits,
                        rel_error,
                        seconds,
                    });
                }
            }
            Event::Unsupported {
                shape,
                splits,
                message,
            } => {
                if let Some(s) = self.shape(shape) {
                    s.unsupported.get_or_insert((splits, message));
                }
            }
            Event::Timing {
                shape,
                splits,
                samples_us,
                launches,
                copies,
                mode,
            } => {
                if let Some(s) = self.shape(shape) {
                    s.timings.push(TimingResult {
                        splits,
                        samples_us,
                        launches,
                        copies,
                        mode,
                    });
                }
            }
            Event::ShapeDone {
                shape,
                eager_call_us,
                seconds,
            } => {
                if let Some(s) = self.shape(shape) {
                    s.eager_call_us = eager_call_us;
                    s.seconds = seconds;
                    s.done = true;
                }
            }
            Event::Done { seconds } => {
                self.done = true;
                self.run.seconds = seconds;
            }
        }
    }

    /// The run, or why there is none. `exit` describes how the process ended, for the message
    /// when the harness stopped without saying why.
    pub fn finish(self, exit: &str) -> Result<HarnessRun, HarnessFailure> {
        if let Some(f) = self.failure {
            return Err(f);
        }
        if !self.done || !self.saw_target {
            return Err(HarnessFailure::Incomplete(format!(
                "the harness {exit} before reporting a result (its messages are above)"
            )));
        }
        if let Some(i) = self.run.shapes.iter().position(|s| !s.done) {
            return Err(HarnessFailure::Incomplete(format!(
                "the harness finished without results for shape {i}"
            )));
        }
        Ok(self.run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(lines: &str, shapes: usize) -> Result<HarnessRun, HarnessFailure> {
        let mut c = Collector::new(shapes);
        for line in lines.lines() {
            if let Some(Ok(e)) = parse_line(line) {
                c.push(e);
            }
        }
        c.finish("exited with status 0")
    }

    const TARGET: &str = r#"{"event": "target", "kind": "wheel", "package": "vllm/vllm_flash_attn/cute", "module": "vllm.vllm_flash_attn.cute", "source": "/x/vllm.whl", "files": 60, "sha256": {"interface.py": "ab"}}"#;

    #[test]
    fn a_whole_run_is_collected() {
        let text = format!(
            "{TARGET}\n\
             {{\"event\": \"hello\", \"protocol\": 1, \"python\": \"3.12.3\", \"torch\": \"2.11.0+cu130\", \"cuda\": \"13.0\", \"cutlass_dsl\": \"4.7.1\", \"device\": \"NVIDIA H200\", \"capability\": \"9.0\"}}\n\
             some library chatter on stdout\n\
             {{\"event\": \"check\", \"shape\": 0, \"splits\": 1, \"rel_error\": 0.0021, \"ok\": true, \"seconds\": 3.1}}\n\
             {{\"event\": \"check\", \"shape\": 0, \"splits\": 2, \"rel_error\": null, \"ok\": false, \"seconds\": 2.0}}\n\
             {{\"event\": \"timing\", \"shape\": 0, \"splits\": 1, \"samples_us\": [335.0, 336.0], \"launches\": 21, \"copies\": 7, \"mode\": \"cuda-graph\"}}\n\
             {{\"event\": \"shape_done\", \"shape\": 0, \"eager_call_us\": 95.5, \"seconds\": 9.0}}\n\
             {{\"event\": \"shape_done\", \"shape\": 7, \"seconds\": 1.0}}\n\
             {{\"event\": \"done\", \"seconds\": 12.5}}\n"
        );
        let run = collect(&text, 1).expect("run");
        assert_eq!(run.versions.torch.as_deref(), Some("2.11.0+cu130"));
        assert_eq!(run.staged.module, "vllm.vllm_flash_attn.cute");
        assert_eq!(run.staged.sha256["interface.py"], "ab");
        let s = &run.shapes[0];
        assert_eq!(s.checks.len(), 2);
        assert_eq!(s.checks[1].rel_error, None);
        assert_eq!(s.timings[0].samples_us, vec![335.0, 336.0]);
        assert_eq!(s.eager_call_us, Some(95.5));
        assert_eq!(run.seconds, 12.5);
    }

    #[test]
    fn unsupported_is_recorded_once() {
        let text = format!(
            "{TARGET}\n\
             {{\"event\": \"unsupported\", \"shape\": 0, \"splits\": 2, \"message\": \"AssertionError: SplitKV not supported on SM 9.0\"}}\n\
             {{\"event\": \"unsupported\", \"shape\": 0, \"splits\": 4, \"message\": \"again\"}}\n\
             {{\"event\": \"shape_done\", \"shape\": 0}}\n\
             {{\"event\": \"done\"}}\n"
        );
        let run = collect(&text, 1).expect("run");
        let (splits, msg) = run.shapes[0].unsupported.clone().expect("unsupported");
        assert_eq!(splits, 2);
        assert!(msg.contains("SM 9.0"));
    }

    #[test]
    fn errors_map_to_failures() {
        let missing = collect(
            r#"{"event": "error", "kind": "missing", "missing": "PyTorch", "message": "PyTorch is not importable (ModuleNotFoundError: No module named 'torch')"}"#,
            1,
        );
        let Err(HarnessFailure::Missing { what, .. }) = &missing else {
            panic!("{missing:?}")
        };
        assert_eq!(what, "PyTorch");
        assert!(
            missing
                .unwrap_err()
                .to_string()
                .starts_with("missing PyTorch")
        );
        assert!(matches!(
            collect(
                r#"{"event": "error", "kind": "no_gpu", "message": "PyTorch sees no CUDA device"}"#,
                1
            ),
            Err(HarnessFailure::NoGpu(_))
        ));
        assert!(matches!(
            collect(
                r#"{"event": "error", "kind": "target", "message": "x: no FlashAttention 4 sources"}"#,
                1
            ),
            Err(HarnessFailure::Reported { .. })
        ));
        // Nothing at all, or a run cut short.
        assert!(matches!(collect("", 1), Err(HarnessFailure::Incomplete(_))));
        let cut = format!("{TARGET}\n{{\"event\": \"done\"}}\n");
        assert!(matches!(
            collect(&cut, 1),
            Err(HarnessFailure::Incomplete(_))
        ));
    }

    #[test]
    fn non_events_are_skipped_and_bad_events_are_errors() {
        assert!(parse_line("plain text").is_none());
        assert!(parse_line(r#"{"not": "an event"}"#).is_none());
        assert!(matches!(
            parse_line(r#"{"event": "nonsense"}"#),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_line(r#"{"event": "done", "seconds": 1}"#),
            Some(Ok(Event::Done { .. }))
        ));
    }
}
