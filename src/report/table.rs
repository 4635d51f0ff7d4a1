//! The terminal table: a one-line verdict per target first, then per target its components and
//! the decided (or suppressed) findings with the evidence that decided each, the undecided ones
//! grouped by what would decide them, and the rule database on its own line. Laid out for
//! [`width`] columns: evidence and paths wrap inside their cells.

use super::headline;
use crate::model::{Finding, GateView, Report, Status, TargetReport};
use comfy_table::{Cell, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;

/// The width when neither `COLUMNS` nor a terminal says otherwise (piped output, files, CI logs).
pub const DEFAULT_WIDTH: u16 = 100;

/// The width tables are laid out for: `COLUMNS` when set to a number of at least 40 (shells
/// export it; set it to choose), else the terminal's when stdout is one, else [`DEFAULT_WIDTH`].
pub fn width() -> u16 {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<u16>().ok())
        .filter(|w| *w >= 40)
    {
        return w;
    }
    let probe = Table::new();
    if probe.is_tty() {
        probe.width().filter(|w| *w >= 40).unwrap_or(DEFAULT_WIDTH)
    } else {
        DEFAULT_WIDTH
    }
}

/// A table laid out for `width` columns.
pub(crate) fn sized(width: u16) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    table
}

/// A cell whose control characters are already escaped, so that its width is the width shown
/// (the whole rendering is escaped again on the way out: a no-op by then).
pub(crate) fn cell(text: impl AsRef<str>) -> Cell {
    Cell::new(crate::model::text::printable_lines(text.as_ref(), true))
}

/// `text` wrapped at spaces to `width` columns, continuation lines indented by `indent`.
pub(crate) fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let text = crate::model::text::printable_lines(text, true);
    let text = text.as_str();
    // The text's own leading spaces stay (an indented line).
    let body = text.trim_start_matches(' ');
    let mut line = text[..text.len() - body.len()].to_string();
    for word in body.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
        } else if !line.trim_start().is_empty() {
            line.push(' ');
        }
        let room = width.saturating_sub(line.chars().count()).max(1);
        let mut chars: Vec<char> = word.chars().collect();
        // A word longer than a line (a URL, a path) is cut where the line ends.
        while chars.len() > room && line.chars().count() <= indent.chars().count() {
            let rest = chars.split_off(room.min(chars.len()));
            line.extend(chars);
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            chars = rest;
        }
        line.extend(chars);
    }
    out.push_str(&line);
    out
}

/// The one-line verdict of a target: the gate's verdict on it (the word the exit code says)
/// and what its unsuppressed findings add up to, pin hygiene apart.
fn verdict(target: &TargetReport, gate: &GateView) -> String {
    let word = gate.target(target).word();
    format!(
        "{word}: {} ({}): {}",
        target.target,
        target.kind,
        GateView::tally(target).line()
    )
}

fn short(s: &str) -> &str {
    if s.len() == 40 { &s[..12] } else { s }
}

/// Render `report` for [`width`] columns.
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    render_at(report, width(), out)
}

/// Render `report` for `width` columns.
pub fn render_at(report: &Report, width: u16, out: &mut dyn Write) -> std::io::Result<()> {
    let cols = usize::from(width);
    for target in &report.targets {
        writeln!(out, "{}", wrap(&verdict(target, &report.gate), cols, "  "))?;
    }
    for target in &report.targets {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            wrap(&format!("{} ({})", target.target, target.kind), cols, "  ")
        )?;
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
            let mut table = sized(width);
            // Three columns, two lines each: the repository under its component, the notes
            // under the place, so that 100 columns hold them.
            table.set_header(["component / repository", "pin", "where / notes"]);
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
                let mut place = place(target, &pin.file, pin.line);
                if !notes.is_empty() {
                    place.push('\n');
                    place.push_str(&notes.join("; "));
                }
                table.add_row([
                    cell(match &pin.repo {
                        Some(repo) => format!("{}\n{repo}", pin.component),
                        None => pin.component.clone(),
                    }),
                    cell(pin_text),
                    cell(place),
                ]);
            }
            writeln!(out, "{table}")?;
        }
        // Undecided findings, unsuppressed: grouped below by what would decide them.
        let grouped = |f: &&Finding| f.status == Status::Unknown && f.suppressed.is_none();
        let listed: Vec<&Finding> = target.findings.iter().filter(|f| !grouped(f)).collect();
        if !listed.is_empty() {
            let mut table = sized(width);
            table.set_header(["status / severity", "rule / component", "evidence"]);
            for f in listed {
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
                        format!("{} (suppressed)", GateView::label(f)),
                        format!("\nsuppressed until {}: {}", s.expires, s.reason),
                    ),
                    None => (GateView::label(f), String::new()),
                };
                table.add_row([
                    cell(format!("{status}\n{}", f.severity)),
                    cell(format!("{}\n{}", f.rule, f.component)),
                    cell(format!("{by}{}\n{}{note}", headline(f), f.summary)),
                ]);
            }
            writeln!(out, "{table}")?;
        }
        let mut groups: Vec<(String, Vec<&Finding>)> = Vec::new();
        for f in target.findings.iter().filter(grouped) {
            let why = format!("{}: {}", f.component, headline(f));
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some((_, members)) => members.push(f),
                None => groups.push((why, vec![f])),
            }
        }
        for (why, members) in &groups {
            let n = members.len();
            let head = format!(
                "unknown, {n} finding{} undecided; {why}",
                if n == 1 { "" } else { "s" }
            );
            writeln!(out, "{}", wrap(&head, cols, "    "))?;
            for f in members {
                let line = format!("  {} {}: {}", f.rule, f.severity, f.summary);
                writeln!(out, "{}", wrap(&line, cols, "      "))?;
            }
        }
        if let Some(why) = &target.undecided {
            writeln!(out, "{}", wrap(&format!("undecided: {why}"), cols, "  "))?;
        }
        // The CMake projects evaluated, said when there is more than the top-level one.
        if target.cmake_roots.iter().any(|r| r.dir != ".") {
            let roots: Vec<String> = target
                .cmake_roots
                .iter()
                .map(|r| format!("{} ({})", r.dir, r.why))
                .collect();
            let line = format!("CMake projects evaluated: {}", roots.join("; "));
            writeln!(out, "{}", wrap(&line, cols, "  "))?;
        }
        for w in &target.warnings {
            writeln!(out, "{}", wrap(&format!("warning: {w}"), cols, "  "))?;
        }
    }
    let mut tally = crate::model::Tally::default();
    for t in &report.targets {
        tally.add(GateView::tally(t));
    }
    writeln!(out)?;
    let verdict = report.gate.report(report);
    writeln!(
        out,
        "{}: {} (exit {})",
        verdict.word(),
        tally.line(),
        verdict.code()
    )?;
    writeln!(
        out,
        "rules {}{}{}",
        short_digest(&report.rules_digest),
        super::of_date(report.rules_date.as_deref()),
        super::source_note(report.rules_source.as_ref())
    )
}

fn short_digest(d: &str) -> &str {
    d.get(..19).unwrap_or(d)
}

/// `file:line`, and for an image the layer that brought the file (index, digest, build step).
fn place(target: &crate::model::TargetReport, file: &str, line: u32) -> String {
    let mut text = crate::model::text::file_line(file, line);
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
