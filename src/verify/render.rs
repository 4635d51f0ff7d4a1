//! The verifier's report rendered: a table ([`render_table`]), JSON ([`render_json`],
//! `"schema": 1`) and an SVG plot of latency against `num_splits` for the probe, both controls
//! and, with `--deployed`, the deployed FA4 kernel ([`render_svg`]).

use std::io::Write;
use std::path::Path;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use plotters::prelude::*;

use super::Inject;
use super::coverage::Coverage;
use super::report::*;
use super::stats::{Estimate, Verdict};

/// JSON, pretty-printed, newline-terminated.
/// Every GPU's table, then the host's verdict.
pub fn render_host_table(host: &HostReport, out: &mut dyn Write) -> std::io::Result<()> {
    for (i, gpu) in host.gpus.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "== GPU {} ==", gpu.device.ordinal)?;
        render_table(gpu, out)?;
    }
    let each: Vec<String> = host
        .gpus
        .iter()
        .map(|g| format!("GPU {} {}", g.device.ordinal, g.verdict.as_str()))
        .collect();
    writeln!(
        out,
        "\nhost verdict over {} GPUs: {} ({})",
        host.gpus.len(),
        host.verdict.as_str().to_uppercase(),
        each.join(", ")
    )
}

pub fn render_host_json(host: &HostReport, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, host)?;
    writeln!(out)
}

pub fn render_json(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}

fn us(e: Option<Estimate>) -> String {
    match e {
        Some(e) => format!("{:.1} ({:.1}-{:.1})", e.median, e.ci_low, e.ci_high),
        None => "-".into(),
    }
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn err(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| {
        if x.is_nan() {
            "NaN".into()
        } else {
            format!("{x:.1e}")
        }
    })
}

fn cov(c: Option<Coverage>) -> &'static str {
    match c {
        Some(Coverage::Honoured) => "honoured",
        Some(Coverage::Ignored) => "ignored",
        Some(Coverage::Either) => "either",
        Some(Coverage::Broken) => "BROKEN",
        None => "-",
    }
}

/// Human-readable report: per shape a table of latency per split count (median and 95% CI, µs),
/// ratio to one split, achieved bandwidth, the controls, error and coverage; then the verdict.
pub fn render_table(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let d = &report.device;
    writeln!(
        out,
        "pinprobe verify on {} (compute {}, {} SMs, {} MB L2, driver {}): {}",
        d.name,
        d.compute_capability,
        d.sms,
        d.l2_bytes >> 20,
        d.driver,
        report.verdict.as_str().to_uppercase()
    )?;
    if let Some(d) = &report.deployed {
        writeln!(
            out,
            "deployed kernel: {} from the {} {} ({} files), imported by {} (Python {}, PyTorch {}, CuTe DSL {})",
            d.staged.module,
            d.staged.kind,
            d.target,
            d.staged.files,
            d.python,
            d.versions.python.as_deref().unwrap_or("?"),
            d.versions.torch.as_deref().unwrap_or("?"),
            d.versions.cutlass_dsl.as_deref().unwrap_or("?"),
        )?;
    }
    if let Some(Inject::IgnoreSplits) = report.inject {
        writeln!(
            out,
            "injected bug: ignore-splits (every split launched, partition of one split)"
        )?;
    }
    for s in &report.shapes {
        writeln!(out)?;
        let sh = &s.shape;
        writeln!(
            out,
            "{}: head dim {}, {} KV heads x {} query heads, batch {}, {} tokens; tiles of {} rows; \
             FlashAttention heuristic: {} splits (*)",
            sh.label(),
            sh.head_dim,
            sh.kv_heads,
            sh.q_per_kv,
            sh.batch,
            sh.tokens,
            s.block_n,
            s.heuristic_splits
        )?;
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        let mut header = vec![
            "splits".to_string(),
            format!("{} µs (95% CI)", s.probe.name),
            "vs 1 split".into(),
            "GB/s".into(),
            "rel err".into(),
            "coverage".into(),
        ];
        if let Some(d) = &s.deployed {
            header.push(format!("{} µs (95% CI)", d.series.name));
            header.push(format!("{} vs 1", d.series.name));
            header.push(format!("{} rel err", d.series.name));
        }
        if let Some(n) = &s.negative_control {
            header.push(format!("{} µs", n.name));
        }
        header.push(format!("{} µs", s.positive_control.name));
        header.push(format!("{} GB/s", s.positive_control.name));
        t.set_header(header);
        for p in &s.probe.points {
            let mut row = vec![
                format!("{}{}", p.splits, if p.heuristic { "*" } else { "" }),
                us(p.latency_us),
                opt(p.ratio_to_one, 2),
                opt(p.bandwidth_gbs, 0),
                err(p.rel_error),
                cov(p.coverage).to_string(),
            ];
            if let Some(d) = &s.deployed {
                let q = d.series.at(p.splits);
                row.push(us(q.and_then(|q| q.latency_us)));
                row.push(opt(q.and_then(|q| q.ratio_to_one), 2));
                row.push(err(q.and_then(|q| q.rel_error)));
            }
            if let Some(n) = &s.negative_control {
                row.push(us(n.at(p.splits).and_then(|q| q.latency_us)));
            }
            let c = s.positive_control.at(p.splits);
            row.push(us(c.and_then(|q| q.latency_us)));
            row.push(opt(c.and_then(|q| q.bandwidth_gbs), 0));
            t.add_row(row);
        }
        writeln!(out, "{t}")?;
        if let Some(d) = &s.deployed {
            writeln!(
                out,
                "deployed kernel: {} ({})",
                d.verdict,
                d.reasons.join("; ")
            )?;
            if let (Some(p), Some(k), Some(r)) = (
                s.probe.best_splits().zip(s.probe.best_median_us()),
                d.series.best_splits().zip(d.series.best_median_us()),
                d.probe_over_deployed,
            ) {
                writeln!(
                    out,
                    "  best split: probe {:.1} µs at {}, deployed {:.1} µs at {}: the probe takes {:.2}x the deployed kernel's time",
                    p.1, p.0, k.1, k.0, r
                )?;
            }
            if let Some(e) = d.eager_call_us {
                writeln!(
                    out,
                    "  deployed interface launched call by call: {e:.0} µs of host time per call \
                     (hence the CUDA graphs: {} launches per graph, {} K/V copies, {})",
                    d.launches_per_graph.unwrap_or(0),
                    d.kv_copies.unwrap_or(0),
                    d.mode.as_deref().unwrap_or("-")
                )?;
            }
        }
        let which = if s.deployed.is_some() {
            "probe verdict"
        } else {
            "verdict"
        };
        writeln!(out, "{which}: {} ({})", s.verdict, s.reasons.join("; "))?;
        for series in std::iter::once(&s.probe)
            .chain(&s.negative_control)
            .chain(std::iter::once(&s.positive_control))
        {
            writeln!(
                out,
                "  {}: {} - {}",
                series.name, series.scaling.verdict, series.scaling.reason
            )?;
        }
        if let Some(f) = s.bandwidth_fraction {
            writeln!(
                out,
                "  probe at its best split count reaches {:.0}% of the streaming read's best bandwidth",
                f * 100.0
            )?;
        }
        if let Some(sdpa) = &s.sdpa {
            writeln!(out, "  {}", sdpa.describe())?;
        }
    }
    let harness = report.deployed.as_ref().map_or(String::new(), |d| {
        format!(", deployed-kernel harness {:.1} s", d.harness_ms / 1e3)
    });
    writeln!(
        out,
        "\n{} in {:.2} s (compile {:.0} ms{harness}; whole run {:.1} s); exit {}",
        report.verdict,
        report.verify_ms / 1e3,
        report.compile_ms,
        report.total_ms / 1e3,
        match report.verdict {
            Verdict::Scales => 0,
            Verdict::Flat => 1,
            _ => 3,
        }
    )
}

/// Errors drawing the plot, as text (plotters' error type is generic over its backend).
#[derive(Debug, thiserror::Error)]
#[error("plot {path}: {message}")]
pub struct PlotError {
    pub path: String,
    pub message: String,
}

/// Latency against `num_splits` (log-log), one panel per shape: the probe, the ignored-splits
/// negative control and the streaming-read positive control, each median with its interval.
pub fn render_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    let fail = |e: &dyn std::fmt::Display| PlotError {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let panels = report.shapes.len().max(1);
    let root = SVGBackend::new(path, (900, 420 * panels as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let areas = root.split_evenly((panels, 1));
    for (shape, area) in report.shapes.iter().zip(areas) {
        draw_shape(shape, report, &area).map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_shape(
    s: &ShapeReport,
    report: &Report,
    area: &Area<'_>,
) -> Result<(), Box<dyn std::error::Error>> {
    let series: Vec<(&SeriesReport, RGBColor)> = std::iter::once((&s.probe, BLUE))
        .chain(
            s.deployed
                .iter()
                .map(|d| (&d.series, RGBColor(150, 0, 170))),
        )
        .chain(s.negative_control.iter().map(|n| (n, RED)))
        .chain(std::iter::once((&s.positive_control, RGBColor(0, 150, 0))))
        .collect();
    let all: Vec<(f64, Estimate)> = series
        .iter()
        .flat_map(|(r, _)| r.points.iter())
        .filter_map(|p| p.latency_us.map(|l| (p.splits as f64, l)))
        .collect();
    let x_max = all.iter().map(|(x, _)| *x).fold(1.0, f64::max) * 1.3;
    let y_min = all
        .iter()
        .map(|(_, l)| l.ci_low.min(l.median))
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let y_max = all
        .iter()
        .map(|(_, l)| l.ci_high.max(l.median))
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max);
    let (y_min, y_max) = if y_min.is_finite() && y_max > 0.0 {
        (y_min / 1.5, y_max * 1.5)
    } else {
        (1.0, 1000.0)
    };
    let title = match &s.deployed {
        Some(d) => format!(
            "{} on {}: deployed {}, probe {}",
            s.shape.label(),
            report.device.name,
            d.verdict,
            s.verdict
        ),
        None => format!(
            "{} on {}: {} (heuristic {} splits)",
            s.shape.label(),
            report.device.name,
            s.verdict,
            s.heuristic_splits
        ),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.8f64..x_max).log_scale(), (y_min..y_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("num_splits")
        .y_desc("latency per launch (µs)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (r, color) in series {
        let pts: Vec<(f64, Estimate)> = r
            .points
            .iter()
            .filter_map(|p| p.latency_us.map(|l| (p.splits as f64, l)))
            .collect();
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|(x, l)| (*x, l.median)),
                color.stroke_width(2),
            ))?
            .label(r.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            pts.iter()
                .map(|(x, l)| Circle::new((*x, l.median), 3, color.filled())),
        )?;
        // Confidence intervals as vertical bars.
        for (x, l) in &pts {
            if l.ci_low.is_finite() && l.ci_high.is_finite() && l.ci_low > 0.0 {
                chart.draw_series(LineSeries::new(
                    vec![(*x, l.ci_low), (*x, l.ci_high)],
                    color.stroke_width(1),
                ))?;
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verify::Shape;
    use crate::verify::deployed::protocol::{Staged, Versions};
    use crate::verify::sdpa::SdpaResult;
    use crate::verify::stats::{self, assess};

    /// A synthetic report: a scaling probe, a flat negative control, a scaling stream.
    pub(crate) fn sample_report() -> Report {
        let splits = [1usize, 2, 4, 8, 16, 32, 56, 64];
        let series = |name: &str, lat: &dyn Fn(usize) -> f64, cov: Option<Coverage>| {
            let points: Vec<Point> = splits
                .iter()
                .map(|&s| {
                    let samples: Vec<f64> =
                        (0..8).map(|i| lat(s) * (1.0 + 0.01 * i as f64)).collect();
                    let l = stats::estimate(&samples, 1);
                    Point {
                        splits: s,
                        heuristic: s == 56,
                        latency_us: l,
                        ratio_to_one: l.map(|l| lat(1) * 1.035 / l.median),
                        bandwidth_gbs: l.map(|l| 29.4e6 / (l.median * 1e3)),
                        rel_error: cov.map(|_| 2.1e-3),
                        coverage: cov,
                        samples_us: samples,
                    }
                })
                .collect();
            let rows: Vec<stats::Row> = points
                .iter()
                .map(|p| stats::Row {
                    splits: p.splits,
                    samples: p.samples_us.clone(),
                })
                .collect();
            SeriesReport {
                name: name.into(),
                scaling: assess(&rows, 3),
                coverage: cov,
                max_rel_error: cov.map(|_| 2.1e-3),
                points,
            }
        };
        let probe = series(
            "probe",
            &|s| (334.0 / s as f64).max(21.3),
            Some(Coverage::Honoured),
        );
        let neg = series("ignore-splits", &|_| 335.0, Some(Coverage::Ignored));
        let pos = series("stream-read", &|s| (200.0 / s as f64).max(9.0), None);
        let shape = ShapeReport {
            shape: Shape::REPORTED,
            block_n: 64,
            heuristic_splits: 56,
            verdict: Verdict::Scales,
            reasons: vec![probe.scaling.reason.clone()],
            probe,
            negative_control: Some(neg),
            positive_control: pos,
            bandwidth_fraction: Some(0.42),
            sdpa: Some(SdpaResult::skipped("torch is not installed")),
            deployed: None,
            launches_per_graph: 21,
            kv_copies: 7,
            elapsed_ms: 1234.0,
        };
        Report {
            schema: 1,
            verdict: Verdict::Scales,
            deployed: None,
            device: DeviceInfo {
                name: "NVIDIA H200".into(),
                ordinal: 0,
                compute_capability: "9.0".into(),
                arch: "sm_90".into(),
                sms: 132,
                l2_bytes: 60 << 20,
                driver: "13.0".into(),
            },
            inject: None,
            rounds: 8,
            seed: 42,
            compile_ms: 800.0,
            verify_ms: 4000.0,
            total_ms: 4000.0,
            thresholds: Thresholds::current(),
            shapes: vec![shape],
        }
    }

    #[test]
    fn table_has_every_split_and_the_verdict() {
        let mut buf = Vec::new();
        render_table(&sample_report(), &mut buf).expect("render");
        let text = String::from_utf8(buf).expect("utf8");
        assert!(text.contains("SCALES"));
        assert!(text.contains("56*"), "heuristic marked");
        assert!(text.contains("honoured"));
        assert!(text.contains("ignore-splits µs"));
        assert!(text.contains("42% of the streaming read"));
        assert!(text.contains("skipped"));
    }

    #[test]
    fn json_has_schema_and_verdicts() {
        let mut buf = Vec::new();
        render_json(&sample_report(), &mut buf).expect("render");
        let v: serde_json::Value = serde_json::from_slice(&buf).expect("json");
        assert_eq!(v["schema"], 1);
        assert_eq!(v["verdict"], "scales");
        let shape = &v["shapes"][0];
        assert_eq!(shape["shape"]["head_dim"], 512);
        assert_eq!(shape["probe"]["coverage"], "honoured");
        assert_eq!(shape["negative_control"]["scaling"]["verdict"], "flat");
        assert_eq!(shape["probe"]["points"].as_array().map(Vec::len), Some(8));
        assert!(shape["probe"]["points"][0]["latency_us"]["median"].is_number());
    }

    /// The sample with the deployed kernel's curve beside the probe's.
    fn with_deployed() -> Report {
        let mut r = sample_report();
        let shape = &mut r.shapes[0];
        let mut series = shape.negative_control.clone().expect("negative control");
        series.name = "deployed".into();
        series.coverage = None;
        shape.deployed = Some(DeployedSeries {
            verdict: Verdict::Flat,
            reasons: vec![series.scaling.reason.clone()],
            unsupported: None,
            eager_call_us: Some(95.0),
            launches_per_graph: Some(21),
            kv_copies: Some(7),
            mode: Some("cuda-graph".into()),
            harness_seconds: 20.0,
            probe_over_deployed: Some(0.06),
            series,
        });
        r.verdict = Verdict::Flat;
        r.deployed = Some(DeployedInfo {
            target: "vllm-0.30.0.whl".into(),
            python: "python3".into(),
            staged: Staged {
                kind: "wheel".into(),
                package: "vllm/vllm_flash_attn/cute".into(),
                module: "vllm.vllm_flash_attn.cute".into(),
                source: "/x/vllm-0.30.0.whl".into(),
                files: 53,
                sha256: Default::default(),
            },
            versions: Versions {
                torch: Some("2.11.0+cu130".into()),
                cutlass_dsl: Some("4.7.1".into()),
                ..Versions::default()
            },
            harness_ms: 25_000.0,
        });
        r
    }

    /// The device name comes from the driver and the versions from the imported artifact: the
    /// CLI writes the table through `PrintableWriter`, so none of their control characters
    /// reaches the terminal.
    #[test]
    fn hostile_strings_in_the_table_reach_the_terminal_escaped() {
        let mut report = with_deployed();
        report.device.name = "H200\x1b]0;owned\x07".into();
        if let Some(d) = &mut report.deployed {
            d.versions.torch = Some("2.11\x1b[2J\r".into());
            d.target = "img\u{9b}31m".into();
        }
        let mut raw = Vec::new();
        render_table(&report, &mut raw).expect("render");
        assert!(
            raw.contains(&0x1b),
            "the raw table carries the hostile bytes"
        );
        let mut shown = Vec::new();
        render_table(
            &report,
            &mut crate::model::text::PrintableWriter::new(&mut shown),
        )
        .expect("render");
        let text = String::from_utf8(shown).expect("utf-8");
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
        assert!(text.contains("H200\\x1b]0;owned\\x07"), "{text}");
        assert!(text.contains("2.11\\x1b[2J\\r"), "{text}");
        assert!(text.contains("img\\u{9b}31m"), "{text}");
    }

    #[test]
    fn table_json_and_plot_carry_the_deployed_curve() {
        let report = with_deployed();
        let mut buf = Vec::new();
        render_table(&report, &mut buf).expect("render");
        let text = String::from_utf8(buf).expect("utf8");
        assert!(text.starts_with("pinprobe verify on NVIDIA H200"));
        assert!(text.contains("FLAT"));
        assert!(
            text.contains("deployed µs (95% CI)"),
            "one table, both curves"
        );
        assert!(text.contains("probe µs (95% CI)"));
        assert!(text.contains("vllm.vllm_flash_attn.cute from the wheel vllm-0.30.0.whl"));
        assert!(text.contains("deployed kernel: flat"));
        assert!(text.contains("probe verdict: scales"));
        assert!(text.contains("the probe takes 0.06x the deployed kernel's time"));
        assert!(text.contains("95 µs of host time per call"));

        let mut buf = Vec::new();
        render_json(&report, &mut buf).expect("json");
        let v: serde_json::Value = serde_json::from_slice(&buf).expect("json");
        assert_eq!(v["verdict"], "flat");
        assert_eq!(
            v["deployed"]["staged"]["module"],
            "vllm.vllm_flash_attn.cute"
        );
        assert_eq!(v["shapes"][0]["deployed"]["verdict"], "flat");
        assert_eq!(v["shapes"][0]["deployed"]["series"]["name"], "deployed");
        assert_eq!(
            v["shapes"][0]["verdict"], "scales",
            "the probe's own verdict stays"
        );

        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("deployed.svg");
        render_svg(&report, &path).expect("plot");
        let svg = std::fs::read_to_string(&path).expect("read");
        assert!(svg.contains("deployed"), "deployed curve in the legend");
        assert!(svg.contains("probe"));
    }

    #[test]
    fn svg_plot_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("verify.svg");
        render_svg(&sample_report(), &path).expect("plot");
        let svg = std::fs::read_to_string(&path).expect("read");
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("num_splits"));
        assert!(svg.contains("ignore-splits"));
        assert!(svg.contains("<circle") || svg.contains("circle"));
    }
}
