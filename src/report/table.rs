//! The terminal table: components, then findings with the evidence that decided each.

use super::headline;
use crate::model::Report;
use comfy_table::{Cell, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;

fn short(s: &str) -> &str {
    if s.len() == 40 { &s[..12] } else { s }
}

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for target in &report.targets {
        writeln!(out, "{} ({})", target.target, target.kind)?;
        if let Some(image) = &target.image {
            writeln!(
                out,
                "layers read: {} of {}, newest first{}",
                image.layers_scanned,
                image.layers.len(),
                if image.stopped_early.is_some() {
                    " (stopped early; see the image's stopped_early)"
                } else {
                    ""
                }
            )?;
        }
        if !target.components.is_empty() {
            let mut table = Table::new();
            table
                .load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_header(["component", "repository", "pin", "where", "notes"]);
            for pin in &target.components {
                let mut notes = Vec::new();
                if !pin.patches.is_empty() {
                    notes.push(format!("patches: {}", pin.patches.join(", ")));
                }
                if !pin.overrides.is_empty() {
                    notes.push(format!("override: {}", pin.overrides.join(", ")));
                }
                if pin.possible.len() > 1 {
                    let others: Vec<String> = pin
                        .possible
                        .iter()
                        .skip(1)
                        .map(|p| match &p.reference {
                            Some(r) => short(r).to_string(),
                            None => p.shown(),
                        })
                        .collect();
                    notes.push(format!(
                        "{} possible values; also {}",
                        pin.possible.len(),
                        others.join(", ")
                    ));
                }
                let pin_text = match (&pin.commit, &pin.reference) {
                    (Some(c), Some(r)) if c != r => format!("{} ({})", short(c), r),
                    (Some(c), _) => short(c).to_string(),
                    (None, Some(r)) => r.clone(),
                    (None, None) => pin.url.clone().unwrap_or_else(|| "-".into()),
                };
                table.add_row([
                    Cell::new(&pin.component),
                    Cell::new(pin.repo.as_deref().unwrap_or("-")),
                    Cell::new(pin_text),
                    Cell::new(place(target, &pin.file, pin.line)),
                    Cell::new(notes.join("; ")),
                ]);
            }
            writeln!(out, "{table}")?;
        }
        if !target.findings.is_empty() {
            let mut table = Table::new();
            table
                .load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_header(["status", "rule", "component", "severity", "evidence"]);
            for f in &target.findings {
                let by = f
                    .decided_by
                    .map(|k| {
                        format!(
                            "[{}] ",
                            serde_json::to_value(k)
                                .ok()
                                .and_then(|v| v.as_str().map(String::from))
                                .unwrap_or_default()
                        )
                    })
                    .unwrap_or_default();
                let (status, note) = match &f.suppressed {
                    Some(s) => (
                        format!("{} (suppressed)", f.status),
                        format!("\nsuppressed until {}: {}", s.expires, s.reason),
                    ),
                    None => (f.status.to_string(), String::new()),
                };
                table.add_row([
                    Cell::new(status),
                    Cell::new(&f.rule),
                    Cell::new(&f.component),
                    Cell::new(f.severity.to_string()),
                    Cell::new(format!("{by}{}\n{}{note}", headline(f), f.summary)),
                ]);
            }
            writeln!(out, "{table}")?;
        }
        if let Some(why) = &target.undecided {
            writeln!(out, "undecided: {why}")?;
        }
        for w in &target.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    let (affected, unknown, not_affected) = report.counts();
    writeln!(
        out,
        "{affected} affected, {unknown} unknown, {not_affected} not affected (rules {}{})",
        short_digest(&report.rules_digest),
        super::of_date(report.rules_date.as_deref())
    )
}

fn short_digest(d: &str) -> &str {
    d.get(..19).unwrap_or(d)
}

/// `file:line`, and for an image the layer that brought the file (index, digest, build step).
fn place(target: &crate::model::TargetReport, file: &str, line: u32) -> String {
    let mut text = format!("{file}:{line}");
    if let Some(layer) = target.image.as_ref().and_then(|i| i.layer_of(file)) {
        let digest = layer.digest.get(..19).unwrap_or(&layer.digest);
        text.push_str(&format!("\nlayer {} {digest}", layer.index));
        if let Some(step) = &layer.created_by {
            let step: String = step.chars().take(60).collect();
            text.push_str(&format!(": {step}"));
        }
    }
    text
}
