//! Fix suggestions: for a component with open (affected, unsuppressed) findings and a clone, the
//! earliest commit on the clone's default branch (`origin/HEAD`, else `main`/`master`), in
//! first-parent order, that contains the current pin and every `fixed` commit of the open
//! findings' rules that the clone has. Containment is monotone along a first-parent chain (each
//! commit is an ancestor of the next), so the earliest one is found by bisection.

use crate::model::Status;
use crate::model::TargetReport;
use crate::model::{Pin, RuleId, Suggestion};
use crate::resolve::Clones;
use crate::resolve::{Answer, Repo};
use crate::rules::Database;
use crate::rules::evaluate;
use crate::rules::model::Event;
use gix::ObjectId;

/// Suggestions for every component of `head` with open findings and a clone.
pub fn for_head(head: &TargetReport, db: &Database, clones: &Clones) -> Vec<Suggestion> {
    let mut out = Vec::new();
    for pin in &head.components {
        let Some(clone) = clones.get(&pin.component) else {
            continue;
        };
        let open: Vec<&RuleId> = head
            .findings
            .iter()
            .filter(|f| {
                f.component == pin.component
                    && f.status == Status::Affected
                    && f.suppressed.is_none()
            })
            .map(|f| &f.rule)
            .collect();
        if open.is_empty() {
            continue;
        }
        out.push(suggest(clone, pin, &open, db));
    }
    out
}

/// The earliest default-branch commit containing `pin` and the fixes of `rules`.
pub fn suggest(clone: &Repo, pin: &Pin, rules: &[&RuleId], db: &Database) -> Suggestion {
    let mut s = Suggestion {
        component: pin.component.clone(),
        file: pin.file.clone(),
        line: pin.line,
        current: pin
            .commit
            .as_ref()
            .map(|c| c.to_string())
            .or_else(|| pin.reference.clone()),
        commit: None,
        git_tag: None,
        branch: None,
        rules: rules.iter().map(|r| (*r).clone()).collect(),
        fixes: Vec::new(),
        absent: Vec::new(),
        note: String::new(),
    };
    let mut fixes: Vec<ObjectId> = Vec::new();
    let mut without_fix = Vec::new();
    for id in rules {
        let Some(loaded) = db.get(id) else {
            without_fix.push(id.to_string());
            continue;
        };
        let mut any = false;
        for (_, range) in loaded.rule.git_ranges() {
            if !evaluate::range_applies(range, &pin.component, &db.registry) {
                continue;
            }
            for event in &range.events {
                if let Event::Fixed(sha) = event
                    && let Ok(id) = ObjectId::from_hex(sha.as_bytes())
                {
                    any = true;
                    if clone.has_commit(&id) {
                        if !fixes.contains(&id) {
                            fixes.push(id);
                        }
                    } else if !s.absent.contains(sha) {
                        s.absent.push(sha.clone());
                    }
                }
            }
        }
        if !any {
            without_fix.push(id.to_string());
        }
    }
    s.fixes = fixes.iter().map(ObjectId::to_string).collect();
    let mut notes = Vec::new();
    if !without_fix.is_empty() {
        notes.push(format!(
            "no fix commit is known for {} (a newer pin cannot be chosen for it)",
            without_fix.join(", ")
        ));
    }
    if !s.absent.is_empty() {
        notes.push(format!(
            "fix commits not in the clone {} were left out: {} (fetch the clone)",
            clone.path().display(),
            s.absent.join(", ")
        ));
    }
    let Some(current) = pin
        .commit
        .as_deref()
        .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
    else {
        notes.insert(0, "the current pin is not a known commit".into());
        s.note = notes.join("; ");
        return s;
    };
    if fixes.is_empty() {
        notes.insert(0, "no fix commit to move to".into());
        s.note = notes.join("; ");
        return s;
    }
    let Some((branch, tip)) = clone.default_branch() else {
        notes.insert(
            0,
            "the clone has no default branch (origin/HEAD, main or master)".into(),
        );
        s.note = notes.join("; ");
        return s;
    };
    s.branch = Some(branch.clone());
    let contains = |c: &ObjectId| {
        std::iter::once(&current)
            .chain(fixes.iter())
            .all(|x| clone.is_ancestor(x, c) == Answer::Known(true))
    };
    let mut chain = clone.first_parents(&tip);
    chain.reverse();
    let first = chain.partition_point(|c| !contains(c));
    match chain.get(first) {
        Some(found) => {
            s.commit = Some(found.to_string());
            s.git_tag = Some(format!("GIT_TAG {found}"));
            if *found == current {
                notes.insert(
                    0,
                    "the current pin already contains every fix commit: the finding comes from other evidence (a revert, or the source signature)".into(),
                );
            } else {
                notes.insert(
                    0,
                    format!(
                        "the earliest commit on {branch} (first-parent order) that contains the current pin and {}",
                        if fixes.len() == 1 { "the fix" } else { "every fix" }
                    ),
                );
            }
        }
        None => notes.insert(
            0,
            format!(
                "no commit on {branch} contains the current pin and every fix (the pin is off the branch, or a fix is not merged)"
            ),
        ),
    }
    s.note = notes.join("; ");
    s
}
