//! Markdown for pull-request comments and job summaries.

use super::headline;
use crate::model::GateView;
use crate::model::Report;
use crate::model::Status;
use crate::model::gate::{HYGIENE_LABEL, is_hygiene};
use std::io::Write;

pub(crate) fn status_mark(status: Status) -> &'static str {
    match status {
        Status::Affected => "❌ affected",
        Status::Unknown => "❔ unknown",
        Status::NotAffected => "✅ not affected",
    }
}

pub(crate) use crate::model::text::{markdown_cell as cell, markdown_code as code};

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut tally = crate::model::Tally::default();
    for t in &report.targets {
        tally.add(GateView::tally(t));
    }
    let verdict = report.gate.report(report);
    writeln!(out, "## pinprobe")?;
    writeln!(out)?;
    writeln!(
        out,
        "**{}** (exit {}): {}. Rules `{}`{}{}.",
        verdict.word(),
        verdict.code(),
        tally.line(),
        report.rules_digest,
        super::of_date(report.rules_date.as_deref()),
        super::source_note(report.rules_source.as_ref())
    )?;
    for target in &report.targets {
        writeln!(out)?;
        writeln!(out, "### {} ({})", code(&target.target), target.kind)?;
        writeln!(out)?;
        if !target.components.is_empty() {
            writeln!(out, "| component | repository | pin | where |")?;
            writeln!(out, "|---|---|---|---|")?;
            for pin in &target.components {
                writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    cell(&pin.component),
                    cell(pin.repo.as_deref().unwrap_or("-")),
                    code(
                        pin.commit
                            .as_deref()
                            .or(pin.reference.as_deref())
                            .unwrap_or("-")
                    ),
                    code(&crate::model::text::file_line(&pin.file, pin.line)),
                )?;
            }
            writeln!(out)?;
        }
        if !target.findings.is_empty() {
            writeln!(out, "| status | rule | component | severity | evidence |")?;
            writeln!(out, "|---|---|---|---|---|")?;
            for f in &target.findings {
                let mark = if is_hygiene(&f.rule) && f.status != Status::NotAffected {
                    format!("🧹 {HYGIENE_LABEL}")
                } else {
                    status_mark(f.status).to_string()
                };
                let (mark, note) = match &f.suppressed {
                    Some(s) => (
                        format!("🔇 suppressed ({})", GateView::label(f)),
                        format!(" — suppressed until {}: {}", s.expires, s.reason),
                    ),
                    None => (mark, String::new()),
                };
                writeln!(
                    out,
                    "| {mark} | {} | {} | {} | {} |",
                    code(&f.rule),
                    cell(&f.component),
                    f.severity,
                    cell(&format!("{} — {}{note}", f.summary, headline(f)))
                )?;
            }
        }
        if let Some(why) = &target.undecided {
            writeln!(out, "\n> undecided: {}", cell(why))?;
        }
        for w in &target.warnings {
            writeln!(out, "\n> warning: {}", cell(w))?;
        }
    }
    Ok(())
}
