//! The same shape through PyTorch's `scaled_dot_product_attention`, when `python3` with torch
//! is on the machine: a point of comparison for the probe's best split count, timed the same
//! way (CUDA graph, rotated K/V copies, events, median). Skipped with a note otherwise; never an
//! error.

use std::process::Command;

use serde::{Deserialize, Serialize};

use super::Shape;

/// The script, run with `python3 -c`.
pub const SCRIPT: &str = include_str!("sdpa_bench.py");

/// What the comparison found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdpaResult {
    /// `measured` or `skipped`.
    pub status: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub median_us: Option<f64>,
    #[serde(default)]
    pub torch: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    /// SDPA's median over the probe's best-split median (above 1: the probe is faster).
    #[serde(default)]
    pub ratio_to_probe_best: Option<f64>,
}

impl SdpaResult {
    pub fn skipped(note: impl Into<String>) -> Self {
        SdpaResult {
            status: "skipped".into(),
            note: Some(note.into()),
            median_us: None,
            torch: None,
            mode: None,
            ratio_to_probe_best: None,
        }
    }

    /// One line for the table output.
    pub fn describe(&self) -> String {
        match (self.median_us, self.ratio_to_probe_best) {
            (Some(m), Some(r)) => format!(
                "PyTorch {} scaled_dot_product_attention ({}): {m:.1} µs, {r:.2}x the probe's best split",
                self.torch.as_deref().unwrap_or("?"),
                self.mode.as_deref().unwrap_or("?"),
            ),
            (Some(m), None) => format!("PyTorch scaled_dot_product_attention: {m:.1} µs"),
            _ => format!(
                "PyTorch comparison skipped: {}",
                self.note.as_deref().unwrap_or("no result")
            ),
        }
    }
}

/// Parse the script's last stdout line.
pub fn parse_output(stdout: &str) -> SdpaResult {
    let Some(last) = stdout.lines().rev().find(|l| !l.trim().is_empty()) else {
        return SdpaResult::skipped("the PyTorch script printed nothing");
    };
    serde_json::from_str(last).unwrap_or_else(|e| {
        SdpaResult::skipped(format!("unreadable PyTorch script output ({e}): {last}"))
    })
}

/// Run the comparison for `shape` on device `device`.
pub fn measure(shape: &Shape, device: usize, rounds: usize, launches: usize) -> SdpaResult {
    let args = [
        device,
        shape.head_dim,
        shape.kv_heads,
        shape.q_per_kv,
        shape.batch,
        shape.tokens,
        rounds,
        launches,
    ]
    .map(|n| n.to_string());
    match Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .args(&args)
        .output()
    {
        Err(e) => SdpaResult::skipped(format!("python3 could not be run ({e})")),
        Ok(out) if !out.status.success() => {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail = err.lines().last().unwrap_or("").trim().to_string();
            SdpaResult::skipped(format!(
                "the PyTorch script failed ({}): {tail}",
                out.status
            ))
        }
        Ok(out) => parse_output(&String::from_utf8_lossy(&out.stdout)),
    }
}

/// Attach the ratio to the probe's best-split median.
pub fn with_ratio(mut r: SdpaResult, probe_best_us: Option<f64>) -> SdpaResult {
    r.ratio_to_probe_best = match (r.median_us, probe_best_us) {
        (Some(s), Some(p)) if p > 0.0 => Some(s / p),
        _ => None,
    };
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_measured_and_skipped_lines() {
        let r = parse_output(
            "warning: something\n{\"status\": \"measured\", \"median_us\": 40.5, \"torch\": \"2.11.0\", \"mode\": \"cuda-graph\", \"samples_us\": [40.5]}\n",
        );
        assert_eq!(r.status, "measured");
        assert_eq!(r.median_us, Some(40.5));
        let r = with_ratio(r, Some(20.25));
        assert_eq!(r.ratio_to_probe_best, Some(2.0));
        assert!(r.describe().contains("2.00x"));

        let s = parse_output("{\"status\": \"skipped\", \"note\": \"PyTorch is not importable\"}");
        assert_eq!(s.status, "skipped");
        assert!(s.describe().contains("not importable"));
        assert_eq!(parse_output("").status, "skipped");
        assert_eq!(parse_output("garbage").status, "skipped");
    }
}
