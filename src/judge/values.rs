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
    let mut rules: Vec<crate::model::RuleId> = findings.iter().map(|f| f.rule.clone()).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Location;

    fn finding(rule: &str, status: Status, detail: &str) -> Finding {
        Finding {
            rule: rule.into(),
            status,
            severity: crate::model::Severity::High,
            summary: format!("{rule} summary"),
            component: "flash-attention".to_string(),
            decided_by: (status != Status::Unknown).then_some(EvidenceKind::Ancestry),
            evidence: vec![Evidence {
                kind: EvidenceKind::Ancestry,
                status,
                detail: detail.to_string(),
                file: None,
                line: None,
            }],
            location: Some(Location {
                file: "cmake/fa.cmake".into(),
                line: 7,
            }),
            suppressed: None,
        }
    }

    fn value(reference: &str, default: bool, condition: &str, line: u32) -> Possible {
        Possible {
            reference: Some(reference.to_string()),
            set_by: Vec::new(),
            commit: None,
            repo: None,
            url: None,
            url_hash: None,
            default,
            conditions: if condition.is_empty() {
                Vec::new()
            } else {
                vec![condition.to_string()]
            },
            file: "cmake/fa.cmake".to_string(),
            line,
            release: None,
        }
    }

    fn details(f: &Finding) -> Vec<(Status, String)> {
        f.evidence
            .iter()
            .map(|e| (e.status, e.detail.clone()))
            .collect()
    }

    #[test]
    fn an_affected_default_decides_and_keeps_its_deciding_evidence() {
        let main = value("aaa", true, "", 3);
        let old = value("bbb", false, "USE_OLD_FA", 5);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::Affected, "ancestry: in range")],
            &[(old, vec![finding("R", Status::NotAffected, "past the fix")])],
        );
        assert_eq!(out.len(), 1);
        let f = &out[0];
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Ancestry));
        assert_eq!(
            details(f),
            vec![
                (Status::Affected, "ancestry: in range".to_string()),
                (
                    Status::Affected,
                    "the default configuration's pin is affected: `aaa` when the default configuration (cmake/fa.cmake:3): affected".to_string()
                ),
                (
                    Status::NotAffected,
                    "`bbb` when USE_OLD_FA (cmake/fa.cmake:5): not_affected (past the fix)"
                        .to_string()
                ),
            ]
        );
        assert_eq!(f.evidence[1].kind, EvidenceKind::Configuration);
        assert_eq!(f.evidence[1].file.as_deref(), Some("cmake/fa.cmake"));
        assert_eq!(f.evidence[1].line, Some(3));
        assert_eq!(f.evidence[2].line, Some(5));
    }

    #[test]
    fn a_clean_default_with_an_affected_option_is_unknown_and_names_both() {
        let main = value("aaa", true, "", 3);
        let old = value("bbb", false, "USE_OLD_FA", 5);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::NotAffected, "past the fix")],
            &[(old, vec![finding("R", Status::Affected, "in range")])],
        );
        let f = &out[0];
        assert_eq!(f.status, Status::Unknown);
        assert_eq!(f.decided_by, None);
        assert_eq!(
            details(f),
            vec![
                (Status::NotAffected, "past the fix".to_string()),
                (
                    Status::Unknown,
                    "the pin can take several values and not all are known not affected"
                        .to_string()
                ),
                (
                    Status::NotAffected,
                    "`aaa` when the default configuration (cmake/fa.cmake:3): not_affected"
                        .to_string()
                ),
                (
                    Status::Affected,
                    "`bbb` when USE_OLD_FA (cmake/fa.cmake:5): affected (in range)".to_string()
                ),
            ]
        );
    }

    #[test]
    fn every_value_clean_is_clean_and_keeps_what_decided() {
        let main = value("aaa", true, "", 3);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::NotAffected, "past the fix")],
            &[
                (
                    value("bbb", false, "A", 5),
                    vec![finding("R", Status::NotAffected, "x")],
                ),
                (
                    value("ccc", false, "B", 6),
                    vec![finding("R", Status::NotAffected, "y")],
                ),
            ],
        );
        let f = &out[0];
        assert_eq!(f.status, Status::NotAffected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Ancestry));
        assert_eq!(
            f.evidence[1].detail,
            "every one of the 3 values the pin can take is not affected"
        );
        assert_eq!(f.evidence.len(), 5);
    }

    #[test]
    fn every_value_affected_without_a_default_is_affected() {
        let main = value("aaa", false, "A", 3);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::Affected, "in")],
            &[(
                value("bbb", false, "B", 5),
                vec![finding("R", Status::Affected, "in too")],
            )],
        );
        let f = &out[0];
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Ancestry));
        assert_eq!(
            details(f)[1..],
            [
                (
                    Status::Affected,
                    "every value the pin can take is affected".to_string()
                ),
                (
                    Status::Affected,
                    "`aaa` when A (cmake/fa.cmake:3): affected".to_string()
                ),
                (
                    Status::Affected,
                    "`bbb` when B (cmake/fa.cmake:5): affected (in too)".to_string()
                ),
            ]
        );
    }

    #[test]
    fn an_affected_first_value_that_is_not_the_default_does_not_decide() {
        let main = value("aaa", false, "A", 3);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::Affected, "in")],
            &[(
                value("bbb", false, "B", 5),
                vec![finding("R", Status::NotAffected, "out")],
            )],
        );
        assert_eq!(out[0].status, Status::Unknown);
        assert_eq!(out[0].decided_by, None);
    }

    #[test]
    fn a_rule_only_another_value_meets_counts_the_others_as_not_affected() {
        // The default value is another component's: the rule does not apply to it, so it is
        // not affected by it; the rule's finding comes from the value it applies to.
        let main = value("aaa", true, "", 3);
        let out = over_values(
            Some(&main),
            vec![finding("R", Status::NotAffected, "r")],
            &[
                (
                    value("bbb", false, "B", 5),
                    vec![
                        finding("S", Status::Affected, "s in"),
                        finding("R", Status::NotAffected, "r2"),
                    ],
                ),
                (
                    value("ccc", false, "C", 6),
                    vec![finding("S", Status::Affected, "s in again")],
                ),
            ],
        );
        let rules: Vec<&str> = out.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["R", "S"]);
        let s = &out[1];
        assert_eq!(s.status, Status::Unknown);
        assert_eq!(s.evidence[0].detail, "s in");
        assert_eq!(
            s.evidence[2].detail,
            "`aaa` when the default configuration (cmake/fa.cmake:3): not_affected"
        );
        assert_eq!(s.evidence[3].status, Status::Affected);
        assert_eq!(s.evidence[4].status, Status::Affected);
        assert_eq!(s.evidence.len(), 5);
        // Every value not affected by a rule none applies to: clean.
        let out = over_values(
            None,
            Vec::new(),
            &[(
                value("bbb", false, "B", 5),
                vec![finding("S", Status::NotAffected, "s out")],
            )],
        );
        assert_eq!(out[0].status, Status::NotAffected);
        assert_eq!(
            out[0].evidence[2].detail, "the first value: not_affected",
            "{:#?}",
            out[0].evidence
        );
        assert_eq!(out[0].evidence[1].file, None);
        assert_eq!(out[0].evidence[1].line, None);
    }
}
