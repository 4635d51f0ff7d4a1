//! JSON: the report as is, pretty-printed, versioned by `"schema"`.

use crate::model::Report;
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}
