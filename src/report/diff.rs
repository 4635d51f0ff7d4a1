//! Renderers for a [`Review`]: a terminal table, Markdown for a pull-request comment or a job
//! summary, JSON (the review as is) and SARIF (every finding open at HEAD, with its `change`).
//!
//! SARIF holds all unsuppressed affected or unknown findings at HEAD, not only the introduced
//! ones: code scanning compares a pull request's analysis with its base branch's by fingerprint,
//! so leaving out the kept findings would make it close their alerts as fixed.

use crate::model::Finding;
use crate::model::{
    ChangeKind, EditKind, PinChange, PinChangeKind, PinSide, PolicyEdit, PolicyEditKind, Review,
};
use crate::report::markdown::{cell, code};
use crate::report::sarif::{self, Item};
use crate::report::{Format, headline};
use crate::rules::Database;
use std::io::Write;

/// Render `review` in `format` to `out`.
pub fn render(
    review: &Review,
    format: Format,
    db: &Database,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Format::Table => super::escaped(out, |buf| table(review, buf)),
        Format::Markdown => super::escaped(out, |buf| markdown(review, buf)),
        // The exchange formats describe what HEAD pins: the report of the head revision.
        Format::OpenVex | Format::CycloneDx => {
            let head = crate::model::Report {
                schema: crate::model::SCHEMA,
                tool: review.tool.clone(),
                rules_digest: review.rules_digest.clone(),
                rules_date: review.rules_date.clone(),
                rules_source: review.rules_source.clone(),
                shard: None,
                targets: vec![review.head_report.clone()],
                gate: review.gate,
                sarif_unknown: review.sarif_unknown,
            };
            super::render(&head, format, db, out)
        }
        Format::Json => super::json_escaped(out, |buf| {
            serde_json::to_writer_pretty(&mut *buf, review)?;
            writeln!(buf)
        }),
        Format::Jsonl => super::json_escaped(out, |buf| {
            serde_json::to_writer(&mut *buf, review)?;
            writeln!(buf)
        }),
        Format::Sarif => super::json_escaped(out, |out| {
            let items: Vec<Item> = review
                .head_report
                .findings
                .iter()
                .map(|finding| Item {
                    finding,
                    properties: change_of(review, finding)
                        .map(|c| vec![("change", c.to_string())])
                        .unwrap_or_default(),
                    target: None,
                })
                .collect();
            let run = sarif::Run {
                version: &review.tool.version,
                digest: &review.rules_digest,
                db,
                include_unknown: review.sarif_unknown,
                provenance: review.head_report.provenance.iter().collect(),
            };
            sarif::write(&items, &run, out)
        }),
    }
}

fn change_of(review: &Review, f: &Finding) -> Option<ChangeKind> {
    review
        .changes
        .iter()
        .find(|c| c.rule == f.rule && c.component == f.component)
        .map(|c| c.change)
}

fn short(s: &str) -> &str {
    if s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        &s[..12]
    } else {
        s
    }
}

fn side_text(side: Option<&PinSide>) -> String {
    let Some(side) = side else {
        return "-".into();
    };
    let pin = side
        .commit
        .as_deref()
        .or(side.reference.as_deref())
        .map(short)
        .unwrap_or("-");
    let repo = side.repo.as_deref().unwrap_or("-");
    let fork = if side.fork { ", a fork" } else { "" };
    format!("{pin} ({repo}{fork})")
}

fn pin_where(p: &PinChange) -> String {
    p.head
        .as_ref()
        .or(p.base.as_ref())
        .map(|s| crate::model::text::file_line(&s.file, s.line))
        .unwrap_or_default()
}

fn pin_note(p: &PinChange) -> String {
    let mut notes = Vec::new();
    match p.change {
        PinChangeKind::Added => notes.push("added"),
        PinChangeKind::Removed => notes.push("removed"),
        PinChangeKind::Changed => {}
    }
    if p.repo_changed {
        notes.push("repository changed");
    }
    match p.fork {
        Some("to") => notes.push("moves to a fork"),
        Some("from") => notes.push("moves back from a fork"),
        _ => {}
    }
    notes.join(", ")
}

fn mark(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Introduced => "❌ introduced",
        ChangeKind::Unknown => "❔ unknown",
        ChangeKind::Kept => "⚠️ kept",
        ChangeKind::Fixed => "✅ fixed",
    }
}

fn statuses(c: &crate::model::Change) -> String {
    let base = match c.base_status {
        Some(s) => s.to_string(),
        None if c.base_undecided => "undecided".into(),
        None => "-".into(),
    };
    let note = if c.change == ChangeKind::Introduced && c.base_undecided {
        " (base undecided)"
    } else {
        ""
    };
    format!("{base} → {}{note}", c.status)
}

fn evidence_line(c: &crate::model::Change) -> String {
    let f = Finding {
        rule: c.rule.clone(),
        status: c.status,
        severity: c.severity,
        summary: c.summary.clone(),
        component: c.component.clone(),
        decided_by: c.decided_by,
        evidence: c.evidence.clone(),
        location: c.location.clone(),
        suppressed: None,
    };
    headline(&f)
}

/// One review item: an ignore entry, rule override or VEX statement the change adds or edits.
fn edit_line(e: &PolicyEdit) -> String {
    let verb = match e.edit {
        EditKind::Added => "adds",
        EditKind::Edited => "edits",
    };
    let (what, flag) = match e.kind {
        PolicyEditKind::IgnoreEntry => ("an ignore entry", "--allow-head-ignores"),
        PolicyEditKind::RuleOverride => ("a rule override", "--allow-head-rules"),
        PolicyEditKind::VexStatement => ("a VEX statement", "--allow-head-vex"),
    };
    let matched = match e.matches {
        Some(1) => ", matching 1 finding at HEAD".to_string(),
        Some(n) => format!(", matching {n} findings at HEAD"),
        None => String::new(),
    };
    let applied = if e.allowed {
        format!("applied ({flag})")
    } else {
        format!("not applied; fails the gate unless the workflow passes {flag}")
    };
    format!(
        "this change {verb} {what} for {} ({}{matched}): {applied}",
        e.rule, e.at
    )
}

fn summary_line(r: &Review) -> String {
    let c = &r.counts;
    let verdict = r.gate.review(r);
    let word = match verdict {
        crate::model::GateVerdict::Fails => "FAILS",
        crate::model::GateVerdict::Undecided => "UNDECIDED",
        crate::model::GateVerdict::Passes => "PASSES",
    };
    let undecided_base = r
        .changes
        .iter()
        .filter(|c| c.change == ChangeKind::Introduced && c.base_undecided)
        .count();
    let mut s = format!(
        "{word} (exit {}): {} introduced{}, {} fixed, {} kept, {} unknown",
        verdict.code(),
        c.introduced,
        if undecided_base > 0 {
            format!(" ({undecided_base} over an undecided base)")
        } else {
            String::new()
        },
        c.fixed,
        c.kept,
        c.unknown
    );
    if c.suppressed > 0 {
        s.push_str(&format!(" ({} suppressed)", c.suppressed));
    }
    if c.policy_edits > 0 {
        s.push_str(&format!(
            ", {} ignore/rule edit{} by the change itself",
            c.policy_edits,
            if c.policy_edits == 1 { "" } else { "s" }
        ));
    }
    s
}

/// Whether the bump changed this finding's status (introduced, fixed, or a move to or from
/// `unknown`); `kept` findings and findings undecided on both sides are unchanged.
fn changed(c: &crate::model::Change) -> bool {
    c.base_status != Some(c.status)
}

/// One line of the comment's lead: what the bump does to one finding.
fn lead_line(c: &crate::model::Change) -> String {
    let verb = match c.change {
        ChangeKind::Introduced if c.base_undecided => "introduces (affected; base undecided)",
        ChangeKind::Introduced => "introduces",
        ChangeKind::Fixed => "fixes",
        ChangeKind::Unknown => "leaves undecided",
        ChangeKind::Kept => "keeps",
    };
    let suppressed = if c.suppressed.is_some() {
        " (suppressed)"
    } else {
        ""
    };
    format!(
        "{} {verb} {} ({}, {}){suppressed}: {}",
        mark(c.change).split(' ').next().unwrap_or_default(),
        code(&c.rule),
        cell(&c.component),
        c.severity,
        cell(&c.summary)
    )
}

fn findings_table(rows: &[&crate::model::Change], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "| change | rule | component | severity | base → head | evidence |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for c in rows {
        let (m, note) = match &c.suppressed {
            Some(s) => (
                format!("🔇 {} (suppressed)", c.change),
                format!(" — suppressed until {}: {}", s.expires, s.reason),
            ),
            None => (mark(c.change).to_string(), String::new()),
        };
        writeln!(
            out,
            "| {m} | {} | {} | {} | {} | {} |",
            code(&c.rule),
            cell(&c.component),
            c.severity,
            statuses(c),
            cell(&format!("{} — {}{note}", c.summary, evidence_line(c)))
        )?;
    }
    Ok(())
}

/// The pull-request comment: what the bump changes first (pins, findings whose status moves,
/// ignore entries and rules the change edits), then the findings unchanged between base and
/// head folded in `<details>`.
fn markdown(r: &Review, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "## pinprobe: pin bump {} → {}",
        code(short(&r.base.rev)),
        code(short(&r.head.rev))
    )?;
    writeln!(out)?;
    let (moved, unchanged): (Vec<_>, Vec<_>) = r.changes.iter().partition(|c| changed(c));
    if r.pins.is_empty() {
        writeln!(out, "The change moves no pin.")?;
    }
    for p in &r.pins {
        let note = pin_note(p);
        writeln!(
            out,
            "- **{}** {} → {}{}",
            cell(&p.component),
            code(&side_text(p.base.as_ref())),
            code(&side_text(p.head.as_ref())),
            if note.is_empty() {
                String::new()
            } else {
                format!(" ({})", cell(&note))
            }
        )?;
    }
    for c in &moved {
        writeln!(out, "- {}", lead_line(c))?;
    }
    if moved.is_empty() && !r.pins.is_empty() {
        writeln!(out, "- no finding changes status")?;
    }
    for e in &r.policy_edits {
        writeln!(out, "- ⚠️ {}", cell(&edit_line(e)))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "**{}** in {}. Rules `{}`{}{}.",
        summary_line(r),
        code(&r.head.target),
        r.rules_digest,
        super::of_date(r.rules_date.as_deref()),
        super::source_note(r.rules_source.as_ref())
    )?;
    if !r.pins.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Pins that changed")?;
        writeln!(out)?;
        writeln!(out, "| component | from | to | where | note |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for p in &r.pins {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                cell(&p.component),
                code(&side_text(p.base.as_ref())),
                code(&side_text(p.head.as_ref())),
                code(&pin_where(p)),
                cell(&pin_note(p))
            )?;
        }
    }
    if !moved.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Findings the bump changes")?;
        writeln!(out)?;
        findings_table(&moved, out)?;
    }
    if !r.policy_edits.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Ignore entries and rules this change edits")?;
        writeln!(out)?;
        for e in &r.policy_edits {
            writeln!(out, "- {}", cell(&edit_line(e)))?;
        }
    }
    if !r.suggestions.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Suggested pin")?;
        writeln!(out)?;
        for s in &r.suggestions {
            match &s.git_tag {
                Some(tag) => writeln!(
                    out,
                    "- **{}**: {} in {} ({})",
                    cell(&s.component),
                    code(tag),
                    code(&crate::model::text::file_line(&s.file, s.line)),
                    cell(&s.note)
                )?,
                None => writeln!(
                    out,
                    "- **{}**: no suggestion: {}",
                    cell(&s.component),
                    cell(&s.note)
                )?,
            }
        }
    }
    if let Some(why) = &r.undecided {
        writeln!(out, "\n> undecided: {}", cell(why))?;
    }
    for w in &r.warnings {
        writeln!(out, "\n> warning: {}", cell(w))?;
    }
    if !unchanged.is_empty() {
        let kept = unchanged
            .iter()
            .filter(|c| c.change == ChangeKind::Kept)
            .count();
        writeln!(out)?;
        writeln!(out, "<details>")?;
        writeln!(
            out,
            "<summary>{} finding{} unchanged between base and head ({kept} kept affected, {} undecided on both sides)</summary>",
            unchanged.len(),
            if unchanged.len() == 1 { "" } else { "s" },
            unchanged.len() - kept
        )?;
        writeln!(out)?;
        findings_table(&unchanged, out)?;
        writeln!(out)?;
        writeln!(out, "</details>")?;
    }
    Ok(())
}

fn table(r: &Review, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} -> {}",
        r.head.target.split('@').next().unwrap_or_default(),
        r.base.rev,
        r.head.rev
    )?;
    if r.pins.is_empty() {
        writeln!(out, "no pin changed")?;
    } else {
        let mut t = super::table::sized(super::table::width());
        t.set_header(["component", "from", "to", "where", "note"]);
        for p in &r.pins {
            t.add_row([
                super::table::cell(&p.component),
                super::table::cell(side_text(p.base.as_ref())),
                super::table::cell(side_text(p.head.as_ref())),
                super::table::cell(pin_where(p)),
                super::table::cell(pin_note(p)),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    if !r.changes.is_empty() {
        let mut t = super::table::sized(super::table::width());
        t.set_header([
            "change",
            "rule",
            "component",
            "severity",
            "base -> head",
            "evidence",
        ]);
        for c in &r.changes {
            let (change, note) = match &c.suppressed {
                Some(s) => (
                    format!("{} (suppressed)", c.change),
                    format!("\nsuppressed until {}: {}", s.expires, s.reason),
                ),
                None => (c.change.to_string(), String::new()),
            };
            t.add_row([
                super::table::cell(change),
                super::table::cell(&c.rule),
                super::table::cell(&c.component),
                super::table::cell(c.severity.to_string()),
                super::table::cell(statuses(c).replace('→', "->")),
                super::table::cell(format!("{}\n{}{note}", evidence_line(c), c.summary)),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    for e in &r.policy_edits {
        writeln!(out, "review: {}", edit_line(e))?;
    }
    for s in &r.suggestions {
        match &s.git_tag {
            Some(tag) => writeln!(
                out,
                "suggested pin for {}: {tag}  ({}; {})",
                s.component,
                crate::model::text::file_line(&s.file, s.line),
                s.note
            )?,
            None => writeln!(out, "no suggested pin for {}: {}", s.component, s.note)?,
        }
    }
    if let Some(why) = &r.undecided {
        writeln!(out, "undecided: {why}")?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(
        out,
        "{} (rules {}{}{})",
        summary_line(r),
        short_digest(&r.rules_digest),
        super::of_date(r.rules_date.as_deref()),
        super::source_note(r.rules_source.as_ref())
    )
}

fn short_digest(d: &str) -> &str {
    d.get(..19).unwrap_or(d)
}
