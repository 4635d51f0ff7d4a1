//! Rule lint: what serde cannot check. Full SHAs, known components, repository URLs, version
//! strings and signatures that parse. Each diagnostic names the file and, where the offending
//! text can be found, the line.

use super::model::{Event, RangeType, Rule};
use crate::model::is_full_sha;
use crate::pin::components::Registry;
use crate::pin::url;

/// One problem in a rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// Every problem in `rule` (parsed from `text` in `file`).
pub fn check(file: &str, text: &str, rule: &Rule, registry: &Registry) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = comment_truncations(text)
        .into_iter()
        .map(|cut| Diagnostic {
            file: file.to_string(),
            line: Some(cut.line),
            message: cut.to_string(),
        })
        .collect();
    let mut report = |needle: &str, message: String| {
        out.push(Diagnostic {
            file: file.to_string(),
            line: line_of(text, needle),
            message,
        })
    };
    let id_ok = !rule.id.is_empty()
        && rule
            .id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if !id_ok {
        report(
            "id:",
            format!(
                "rule id `{}` must be letters, digits, '-', '_' or '.'",
                rule.id
            ),
        );
    }
    if rule.summary.trim().is_empty() {
        report("summary:", "summary is empty".into());
    }
    if rule.affected.is_empty() {
        report("affected:", "no affected entries".into());
    }
    for affected in &rule.affected {
        let spec = affected.specific();
        for range in &affected.ranges {
            if range.events.is_empty() {
                report("events:", "a range has no events".into());
            }
            if !range
                .events
                .iter()
                .any(|e| matches!(e, Event::Introduced(_)))
            {
                report(
                    "events:",
                    "a range has no `introduced` event (OSV requires one)".into(),
                );
            }
            match range.kind {
                RangeType::Git => {
                    match range.repo.as_deref() {
                        None => report("type: GIT", "a GIT range needs `repo`".into()),
                        Some(repo) if url::canonical(repo).is_none() => {
                            report(repo, format!("`{repo}` is not a repository URL"))
                        }
                        Some(_) => {}
                    }
                    check_git_events(&mut report, range);
                    check_git_scope(&mut report, range, spec.component.as_deref(), registry);
                }
                RangeType::Ecosystem | RangeType::Semver => {
                    for event in &range.events {
                        let v = event.value();
                        if !(v == "0" || crate::rules::version::Version::parse(v).is_some()) {
                            report(v, format!("{} `{v}` is not a version", event.name()));
                        }
                    }
                }
            }
        }
        // A package entry names the component that ships the distribution.
        if let Some(component) = &spec.component
            && !affected.package.ecosystem.eq_ignore_ascii_case("GIT")
        {
            let ships = registry.get(component).is_some_and(|d| {
                d.packages.iter().any(|p| {
                    crate::pin::components::normalise_package(p)
                        == crate::pin::components::normalise_package(&affected.package.name)
                })
            });
            if !ships {
                report(
                    &affected.package.name,
                    format!(
                        "component `{component}` does not ship the {} package `{}` (its `packages` in rules/components.yaml)",
                        affected.package.ecosystem, affected.package.name
                    ),
                );
            }
        }
        for prefix in &spec.fixed_prefixes {
            let hex = prefix.commit.bytes().all(|b| b.is_ascii_hexdigit());
            if !hex || !(7..40).contains(&prefix.commit.len()) {
                report(
                    &prefix.commit,
                    format!(
                        "fixed prefix `{}` must be 7 to 39 hex digits (a full SHA is a `fixed` event)",
                        prefix.commit
                    ),
                );
            }
        }
        for pin in &spec.known_affected_pins {
            if !is_full_sha(&pin.commit) {
                report(
                    &pin.commit,
                    format!(
                        "known affected pin `{}` is not a full 40-hex commit SHA",
                        pin.commit
                    ),
                );
            }
        }
    }
    for prefix in affected_prefixes(rule) {
        let hex = prefix.commit.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex || !(7..40).contains(&prefix.commit.len()) {
            report(
                &prefix.commit,
                format!(
                    "known affected prefix `{}` must be 7 to 39 hex digits (a full SHA goes in known_affected_pins)",
                    prefix.commit
                ),
            );
        }
    }
    for requirement in &rule.database_specific.requires {
        if registry.get(&requirement.component).is_none() {
            report(
                &requirement.component,
                format!(
                    "requires: component `{}` is not in the component registry",
                    requirement.component
                ),
            );
        }
        if requirement.ranges.is_empty() {
            report("requires:", "a requirement has no ranges".into());
        }
        for range in &requirement.ranges {
            if range.kind != RangeType::Git {
                report("requires:", "requirement ranges must be GIT ranges".into());
                continue;
            }
            check_git_events(&mut report, range);
            check_git_scope(&mut report, range, Some(&requirement.component), registry);
        }
    }
    for (field, value) in [
        ("modified", &rule.modified),
        ("published", &rule.published),
        ("withdrawn", &rule.withdrawn),
    ] {
        if let Some(v) = value
            && !is_rfc3339_utc(v)
        {
            report(
                v,
                format!("{field} `{v}` is not an RFC 3339 UTC time (2026-01-31T00:00:00Z)"),
            );
        }
    }
    check_tests(&mut report, rule, registry);
    if let Some(signature) = &rule.database_specific.signature
        && let Err(e) = signature.validate()
    {
        report("signature:", format!("signature: {e}"));
    }
    if let Some(symbols) = &rule.database_specific.symbols
        && let Err(e) = symbols.validate()
    {
        report("symbols:", format!("symbols: {e}"));
    }
    out
}

fn affected_prefixes(rule: &Rule) -> Vec<super::model::KnownPin> {
    rule.affected
        .iter()
        .flat_map(|a| a.specific().known_affected_prefixes)
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`, as OSV's `modified` and `published` want.
pub fn is_rfc3339_utc(v: &str) -> bool {
    let b = v.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b.last() == Some(&b'Z')
        && (b.len() == 20 || (b[19] == b'.' && digits(20..b.len() - 1) && b.len() > 21))
}

fn check_git_events(report: &mut impl FnMut(&str, String), range: &super::model::Range) {
    for event in &range.events {
        let v = event.value();
        let zero_ok = matches!(event, Event::Introduced(_)) && v == "0";
        if !zero_ok && !is_full_sha(v) {
            report(
                v,
                format!(
                    "{} `{v}` is not a full 40-hex commit SHA (short SHAs are ambiguous; write the full one)",
                    event.name()
                ),
            );
        }
    }
}

/// A GIT range is keyed by its repository: some component must own it (as its repository or an
/// alias), and a declared `component` must be that one.
fn check_git_scope(
    report: &mut impl FnMut(&str, String),
    range: &super::model::Range,
    declared: Option<&str>,
    registry: &Registry,
) {
    let Some(repo) = range.repo.as_deref().and_then(url::canonical) else {
        return;
    };
    let owner = registry.identify("", Some(&repo)).map(|c| c.name.clone());
    match (declared, owner) {
        (Some(name), _) if registry.get(name).is_none() => report(
            name,
            format!("component `{name}` is not in the component registry"),
        ),
        (Some(name), _) if registry.get(name).is_some_and(|c| c.owns_repo(&repo)) => {}
        (Some(name), owner) => report(
            &repo_needle(range),
            format!(
                "the range's repository {repo} is neither component `{name}`'s repository nor one of its aliases{} (ranges are keyed by repository; a fork is not an alias)",
                owner
                    .map(|o| format!("; it belongs to `{o}`"))
                    .unwrap_or_default()
            ),
        ),
        (None, None) => report(
            &repo_needle(range),
            format!(
                "the GIT range's repository {repo} is not a known component or alias (rules/components.yaml)"
            ),
        ),
        (None, Some(_)) => {}
    }
}

fn repo_needle(range: &super::model::Range) -> String {
    range.repo.clone().unwrap_or_else(|| "type: GIT".into())
}

fn check_tests(report: &mut impl FnMut(&str, String), rule: &Rule, registry: &Registry) {
    let mut names: Vec<&str> = Vec::new();
    for t in &rule.database_specific.tests {
        if names.contains(&t.name.as_str()) {
            report(&t.name, format!("duplicate test vector name `{}`", t.name));
        }
        names.push(&t.name);
        if !matches!(t.expect.as_str(), "affected" | "not_affected" | "unknown") {
            report(
                &t.expect,
                format!(
                    "test `{}`: expect `{}` must be affected, not_affected or unknown",
                    t.name, t.expect
                ),
            );
        }
        if t.pin.is_none() && t.files.is_empty() && t.symbols.is_empty() && t.version.is_none() {
            report(
                &t.name,
                format!(
                    "test `{}` has neither `pin`, `files`, `symbols` nor `version`",
                    t.name
                ),
            );
        }
        if t.version.is_some() && rule.package_entries().next().is_none() {
            report(
                &t.name,
                format!(
                    "test `{}` gives a version but no package entry of the rule names a component",
                    t.name
                ),
            );
        }
        if !t.symbols.is_empty() && rule.database_specific.symbols.is_none() {
            report(
                &t.name,
                format!(
                    "test `{}` gives symbols but the rule has no symbol signature",
                    t.name
                ),
            );
        }
        if !t.files.is_empty() && rule.database_specific.signature.is_none() {
            report(
                &t.name,
                format!(
                    "test `{}` gives files but the rule has no signature",
                    t.name
                ),
            );
        }
        if let Some(pin) = &t.pin
            && !is_full_sha(pin)
        {
            report(
                pin,
                format!("test `{}`: pin `{pin}` is not a full 40-hex SHA", t.name),
            );
        }
        let component_ok = match &t.component {
            Some(c) => {
                rule.git_ranges()
                    .any(|(_, r)| crate::rules::evaluate::range_applies(r, c, registry))
                    || rule.package_entries().any(|(_, pc)| pc == *c)
            }
            None => rule.git_ranges().next().is_some() || rule.package_entries().next().is_some(),
        };
        if let Some(v) = &t.version
            && crate::pin::python::exactly(v)
                .or_else(|_| crate::pin::python::allowed_by(v))
                .is_err()
        {
            report(
                v,
                format!(
                    "test `{}`: version `{v}` is not a PEP 440 version or specifier set",
                    t.name
                ),
            );
        }
        if !component_ok {
            report(
                &t.name,
                format!(
                    "test `{}`: no GIT range of the rule applies to component `{}`",
                    t.name,
                    t.component.as_deref().unwrap_or("?")
                ),
            );
        }
        for (component, sha) in &t.with {
            if registry.get(component).is_none() {
                report(
                    component,
                    format!(
                        "test `{}`: `with` names unknown component `{component}`",
                        t.name
                    ),
                );
            }
            if !is_full_sha(sha) {
                report(
                    sha,
                    format!(
                        "test `{}`: `with` pin `{sha}` is not a full 40-hex SHA",
                        t.name
                    ),
                );
            }
        }
    }
}

/// A plain (unquoted) YAML value that a ` #` cut short: YAML reads the rest of the line as a
/// comment, so `note: vLLM 0.30.0 (PR #54819)` loads as `vLLM 0.30.0 (PR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentTruncation {
    pub line: usize,
    pub key: String,
    /// What YAML keeps.
    pub kept: String,
    /// What YAML drops, from the `#` on.
    pub dropped: String,
}

impl std::fmt::Display for CommentTruncation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = if self.key.is_empty() {
            "a sequence item".to_string()
        } else {
            format!("`{}`", self.key)
        };
        write!(
            f,
            "{key} is cut by a comment marker: YAML reads `{}` and drops `{}`; quote the value",
            self.kept, self.dropped
        )
    }
}

/// Every plain scalar in `text` that a ` #` probably truncated: the comment starts right after
/// the `#` (`#54819`, an issue or PR number) or the kept part leaves a bracket or quote open.
/// A deliberate trailing comment (`key: value  # why`) is not flagged. Block scalars (`|`, `>`)
/// and quoted or flow values are skipped: a `#` cannot cut them.
pub fn comment_truncations(text: &str) -> Vec<CommentTruncation> {
    let mut out = Vec::new();
    let mut block: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start_matches(' ');
        if let Some(parent) = block {
            if body.is_empty() || indent > parent {
                continue;
            }
            block = None;
        }
        let mut rest = body;
        while let Some(after) = rest.strip_prefix("- ") {
            rest = after.trim_start_matches(' ');
        }
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        let (key, value) = split_key(rest);
        let value = value.trim_start_matches([' ', '\t']);
        let Some(first) = value.chars().next() else {
            continue;
        };
        if first == '|' || first == '>' {
            block = Some(indent);
            continue;
        }
        if matches!(
            first,
            '"' | '\'' | '[' | '{' | '&' | '*' | '!' | '%' | '@' | '`' | '#'
        ) {
            continue;
        }
        let bytes = value.as_bytes();
        let Some(hash) =
            (1..bytes.len()).find(|&i| bytes[i] == b'#' && matches!(bytes[i - 1], b' ' | b'\t'))
        else {
            continue;
        };
        let kept = value[..hash].trim_end();
        let comment = &value[hash + 1..];
        let glued = comment.chars().next().is_some_and(|c| !c.is_whitespace());
        if glued || unbalanced(kept) {
            out.push(CommentTruncation {
                line: index + 1,
                key: key.to_string(),
                kept: kept.to_string(),
                dropped: value[hash..].to_string(),
            });
        }
    }
    out
}

/// `key: value` -> (key, value); a line without a plain `key:` is all value.
fn split_key(rest: &str) -> (&str, &str) {
    let key_end = rest
        .char_indices()
        .find(|&(i, c)| {
            c == ':'
                && rest[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n == ' ' || n == '\t')
        })
        .map(|(i, _)| i);
    match key_end {
        Some(i)
            if i > 0
                && rest[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')) =>
        {
            (&rest[..i], &rest[i + 1..])
        }
        _ => ("", rest),
    }
}

fn unbalanced(s: &str) -> bool {
    let mut depth = [0i64; 3];
    for c in s.chars() {
        match c {
            '(' => depth[0] += 1,
            ')' => depth[0] -= 1,
            '[' => depth[1] += 1,
            ']' => depth[1] -= 1,
            '{' => depth[2] += 1,
            '}' => depth[2] -= 1,
            _ => {}
        }
    }
    depth.iter().any(|d| *d != 0) || s.matches('"').count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::comment_truncations;

    #[test]
    fn flags_a_note_cut_at_an_issue_number() {
        let text = "affected:\n  - database_specific:\n      known_affected_pins:\n        - commit: 506341a143fcabd4bb79052a7605ada727d6b3f5\n          note: vLLM 0.30.0 (PR #54819)\n";
        let cuts = comment_truncations(text);
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert_eq!(cuts[0].line, 5);
        assert_eq!(cuts[0].key, "note");
        assert_eq!(cuts[0].kept, "vLLM 0.30.0 (PR");
        assert_eq!(cuts[0].dropped, "#54819)");
        // What a YAML parser really keeps is what the lint says it keeps.
        let parsed: serde_json::Value = serde_saphyr::from_str(text).expect("valid YAML");
        assert_eq!(
            parsed["affected"][0]["database_specific"]["known_affected_pins"][0]["note"],
            "vLLM 0.30.0 (PR"
        );
    }

    #[test]
    fn flags_glued_hash_and_open_brackets_in_sequence_items() {
        let text = "a: see issue #59362 for why\nlist:\n  - fixed in (upstream # 2717\n";
        let cuts = comment_truncations(text);
        let lines: Vec<usize> = cuts.iter().map(|c| c.line).collect();
        assert_eq!(lines, vec![1, 3], "{cuts:?}");
        assert_eq!(cuts[0].kept, "see issue");
        assert_eq!(cuts[1].key, "");
    }

    #[test]
    fn leaves_quoted_block_and_commented_values_alone() {
        let text = concat!(
            "# a comment line #1\n",
            "note: \"vLLM 0.30.0 (PR #54819)\"\n",
            "other: 'PR #1'\n",
            "details: |\n",
            "  a block scalar keeps #198 and (PR #54819\n",
            "\n",
            "  still the block #2\n",
            "folded: >-\n",
            "  folded #3 (\n",
            "severity: high  # a deliberate trailing comment\n",
            "url: https://example.org/a#fragment\n",
            "flow: [a, b] # fine\n",
        );
        assert_eq!(comment_truncations(text), vec![]);
    }

    #[test]
    fn the_shipped_rules_have_no_truncated_values() {
        for (name, text) in crate::rules::embedded::RULES {
            assert_eq!(comment_truncations(text), vec![], "{name}");
        }
        assert_eq!(
            comment_truncations(crate::rules::embedded::COMPONENTS),
            vec![]
        );
    }
}
