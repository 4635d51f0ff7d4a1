//! Reports: one serialisable [`Report`] that every format renders (table, JSON, SARIF,
//! Markdown). Renderers write to `&mut dyn Write`, so tests need no process.

mod cyclonedx;
pub mod diff;
mod exchange;
mod json;
pub(crate) mod markdown;
pub(crate) mod sarif;
mod table;
mod vex;

use crate::model::Finding;
use crate::model::Report;
use crate::rules::Database;
use std::io::Write;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for terminals.
    Table,
    /// Versioned JSON (`"schema": 1`).
    Json,
    /// JSON lines: one compact schema-1 report per target, each with that one target (`scan`
    /// streams them to stdout as targets finish, in the order given).
    Jsonl,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// Markdown for pull-request comments and job summaries.
    Markdown,
    /// OpenVEX 0.2.0: one statement per rule and pinned product.
    #[value(name = "openvex")]
    OpenVex,
    /// CycloneDX 1.6 JSON: the pinned components (purls with the commit) and the findings as
    /// vulnerabilities.
    #[value(name = "cyclonedx")]
    CycloneDx,
}

/// Render `report` in `format` to `out`.
pub fn render(
    report: &Report,
    format: Format,
    db: &Database,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Format::Table => escaped(out, |buf| table::render(report, buf)),
        Format::Json => json_escaped(out, |buf| json::render(report, buf)),
        Format::Jsonl => json_escaped(out, |buf| json::render_lines(report, buf)),
        Format::Sarif => json_escaped(out, |buf| sarif::render(report, db, buf)),
        Format::Markdown => escaped(out, |buf| markdown::render(report, buf)),
        Format::OpenVex => json_escaped(out, |buf| vex::render(report, db, buf)),
        Format::CycloneDx => json_escaped(out, |buf| cyclonedx::render(report, db, buf)),
    }
}

/// The JSON line of one target (as [`Format::Jsonl`] writes it), under `report`'s tool, rule
/// database digest and date: for streaming targets as they finish.
pub fn render_line(
    report: &Report,
    target: &crate::model::TargetReport,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    json_escaped(out, |buf| json::render_line(report, target, buf))
}

/// ` of YYYY-MM-DD` after the rule database's digest, when the database has a date.
pub(crate) fn of_date(date: Option<&str>) -> String {
    date.map(|d| format!(" of {d}")).unwrap_or_default()
}

/// `, built-in, serial N` (or the pulled feed, its key and cache) after the rule database's
/// digest and date, when the report says which database it is.
pub(crate) fn source_note(source: Option<&crate::model::RulesSource>) -> String {
    source
        .map(|s| format!(", {}", s.describe()))
        .unwrap_or_default()
}

/// Run a JSON renderer into a buffer and write it with DEL and the C1 controls (which serde
/// leaves raw: they are legal in JSON strings) as `\u00XX` escapes, so JSON shown on a terminal
/// cannot carry a C1 CSI either. Outside strings JSON has no such characters, so the value is
/// unchanged.
pub(crate) fn json_escaped(
    out: &mut dyn Write,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    render(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && (c as u32) >= 0x7f {
            escaped.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            escaped.push(c);
        }
    }
    out.write_all(escaped.as_bytes())
}

/// Run a text renderer into a buffer and write it with every control character but the
/// newline escaped ([`crate::model::text`]): a component name, URL or registry message cannot
/// send a terminal sequence. JSON and SARIF escape control characters themselves.
pub(crate) fn escaped(
    out: &mut dyn Write,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    render(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    out.write_all(crate::model::text::printable_lines(&text, true).as_bytes())
}

/// One line per finding's deciding evidence (or the first reason it is unknown).
pub(crate) fn headline(f: &Finding) -> String {
    let decisive = f
        .decided_by
        .and_then(|k| {
            f.evidence
                .iter()
                .find(|e| e.kind == k && e.status == f.status)
        })
        .or_else(|| f.evidence.first());
    decisive.map(|e| e.detail.clone()).unwrap_or_default()
}
