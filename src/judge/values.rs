//! A pin that can take several values (a CMake option, a preset, a `-D` a build script passes):
//! each rule decided over every value ([`over_values`]), by the lattice's
//! [`evaluate::over_values`].

use crate::model::{Evidence, EvidenceKind, Finding, Possible, Status};
use crate::rules::evaluate;

/// The status of each rule over every value a pin can take: `affected` when the default
/// configuration's value is (or every value is), `not_affected` only when every value is,
/// `unknown` otherwise, naming the values and what selects them. `main` is the default (else
/// first) value, whose findings are `findings`; `alternatives` the others'.
pub fn over_values(
    main: Option<&Possible>,
    findings: Vec<Finding>,
    alternatives: &[(Possible, Vec<Finding>)],
) -> Vec<Finding> {
    let mut rules: Vec<String> = findings.iter().map(|f| f.rule.clone()).collect();
    for (_, fs) in alternatives {
        for f in fs {
            if !rules.contains(&f.rule) {
                rules.push(f.rule.clone());
            }
        }
    }
    let main_is_default = main.is_some_and(|m| m.default);
    let mut out = Vec::new();
    for rule in rules {
        let main_finding = findings.iter().find(|f| f.rule == rule);
        let others: Vec<(&Possible, Option<&Finding>)> = alternatives
            .iter()
            .map(|(p, fs)| (p, fs.iter().find(|f| f.rule == rule)))
            .collect();
        // A value the rule does not apply to (another component) is not affected by it.
        let status_of = |f: Option<&Finding>| evaluate::absent(f.map(|f| f.status));
        let main_status = status_of(main_finding);
        let statuses: Vec<Status> = std::iter::once(main_status)
            .chain(others.iter().map(|(_, f)| status_of(*f)))
            .collect();
        let over = evaluate::over_values(&statuses, main_is_default);
        let Some(mut finding) = main_finding
            .cloned()
            .or_else(|| others.iter().find_map(|(_, f)| f.cloned()))
        else {
            continue;
        };
        let status = over.status;
        if finding.status != status {
            finding.decided_by = None;
        }
        finding.status = status;
        let describe = |p: Option<&Possible>, s: Status| match p {
            Some(p) => format!(
                "{} when {} ({}:{}): {s}",
                p.shown(),
                p.selected_by(),
                p.file,
                p.line
            ),
            None => format!("the first value: {s}"),
        };
        let summary = match (status, over.by_default) {
            (Status::Affected, true) => format!(
                "the default configuration's pin is affected: {}",
                describe(main, main_status)
            ),
            (Status::Affected, false) => "every value the pin can take is affected".to_string(),
            (Status::NotAffected, _) => format!(
                "every one of the {} values the pin can take is not affected",
                statuses.len()
            ),
            (Status::Unknown, _) => {
                "the pin can take several values and not all are known not affected".to_string()
            }
        };
        finding.evidence.push(Evidence {
            kind: EvidenceKind::Configuration,
            status,
            detail: summary,
            file: main.map(|p| p.file.clone()),
            line: main.map(|p| p.line),
        });
        if !over.by_default {
            finding.evidence.push(Evidence {
                kind: EvidenceKind::Configuration,
                status: main_status,
                detail: describe(main, main_status),
                file: main.map(|p| p.file.clone()),
                line: main.map(|p| p.line),
            });
        }
        for (p, f) in &others {
            let s = status_of(*f);
            let why = f
                .and_then(|f| f.evidence.first())
                .map(|e| format!(" ({})", e.detail))
                .unwrap_or_default();
            finding.evidence.push(Evidence {
                kind: EvidenceKind::Configuration,
                status: s,
                detail: format!("{}{why}", describe(Some(p), s)),
                file: Some(p.file.clone()),
                line: Some(p.line),
            });
        }
        out.push(finding);
    }
    out
}
