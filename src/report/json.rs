//! JSON: the report as is, pretty-printed, versioned by `"schema"`; JSON lines: one compact
//! report per target.

use crate::model::{Report, TargetReport};
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}

/// One line per target: a compact report holding that target alone.
pub fn render_lines(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for target in &report.targets {
        render_line(report, target, out)?;
    }
    Ok(())
}

/// The line of `target`: `report` (its tool, digest and date) holding `target` alone.
pub fn render_line(
    report: &Report,
    target: &TargetReport,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let one = Report {
        schema: report.schema,
        tool: report.tool.clone(),
        rules_digest: report.rules_digest.clone(),
        rules_date: report.rules_date.clone(),
        rules_source: report.rules_source.clone(),
        shard: report.shard,
        targets: vec![target.clone()],
        gate: report.gate,
        sarif_unknown: report.sarif_unknown,
    };
    serde_json::to_writer(&mut *out, &one)?;
    writeln!(out)
}
