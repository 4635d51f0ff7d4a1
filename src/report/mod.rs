//! Reports: one serialisable [`Report`] that every format renders (table, JSON, SARIF,
//! Markdown). Renderers write to `&mut dyn Write`, so tests need no process.

mod cyclonedx;
mod exchange;
mod json;
pub(crate) mod markdown;
pub mod review;
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
        Format::Table => table::render(report, out),
        Format::Json => json::render(report, out),
        Format::Sarif => sarif::render(report, db, out),
        Format::Markdown => markdown::render(report, out),
        Format::OpenVex => vex::render(report, db, out),
        Format::CycloneDx => cyclonedx::render(report, db, out),
    }
}

/// ` of YYYY-MM-DD` after the rule database's digest, when the database has a date.
pub(crate) fn of_date(date: Option<&str>) -> String {
    date.map(|d| format!(" of {d}")).unwrap_or_default()
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
