//! Property: a rule that parses round-trips. Structured input (drawn with `arbitrary`'s
//! `Unstructured`) builds a rule file from the real grammar (every event kind, known pins,
//! version ranges, `requires`, quoted text with YAML's special characters), so most inputs get
//! past parsing; each rule that `rules::load::parse` accepts is serialised back to YAML,
//! parsed again, and must come back equal.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::fmt::Write as _;

const REPOS: &[&str] = &[
    "https://github.com/vllm-project/flash-attention",
    "https://github.com/vllm-project/FlashMLA",
    "https://github.com/deepseek-ai/DeepGEMM",
];
const COMPONENTS: &[&str] = &["flash-attention", "flashmla", "deepgemm"];
const EVENTS: &[&str] = &["introduced", "fixed", "last_affected", "limit"];
const TEXTS: &[&str] = &[
    "plain",
    "with: colon",
    "# hash",
    "quote \" inside",
    "back\\slash",
    "tab\there",
    "ünïcödé ✓",
    "  leading space",
    "trailing space  ",
    "- dash",
    "&anchor *alias",
    "{flow}",
    "[list]",
    "yes",
    "null",
    "0x1F",
    "1e3",
    "",
];

fn sha(u: &mut Unstructured) -> Result<String> {
    let bytes: [u8; 20] = u.arbitrary()?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A double-quoted YAML scalar of `s`.
fn quoted(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\t' => q.push_str("\\t"),
            '\n' => q.push_str("\\n"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

fn text(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(1, 4)? {
        let s: String = u.arbitrary()?;
        s.chars().take(80).collect()
    } else {
        (*u.choose(TEXTS)?).to_string()
    })
}

fn rule_text(u: &mut Unstructured) -> Result<String> {
    let mut y = String::new();
    let _ = writeln!(y, "id: PINPROBE-2099-{:04}", u.int_in_range(1..=9999u16)?);
    let _ = writeln!(y, "summary: {}", quoted(&text(u)?));
    if u.arbitrary()? {
        let _ = writeln!(y, "details: {}", quoted(&text(u)?));
    }
    y.push_str("affected:\n");
    let which = u.choose_index(REPOS.len())?;
    y.push_str("  - package:\n      ecosystem: GIT\n      name: x\n    ranges:\n");
    let _ = writeln!(
        y,
        "      - type: GIT\n        repo: {}\n        events:",
        REPOS[which]
    );
    let n = u.int_in_range(1..=5u8)?;
    for i in 0..n {
        let kind = if i == 0 {
            "introduced"
        } else {
            *u.choose(EVENTS)?
        };
        let value = if kind == "introduced" && u.ratio(1, 3)? {
            "0".to_string()
        } else {
            sha(u)?
        };
        let _ = writeln!(y, "          - {kind}: \"{value}\"");
    }
    let _ = writeln!(
        y,
        "    database_specific:\n      component: {}",
        COMPONENTS[which]
    );
    if u.arbitrary()? {
        y.push_str("      introduced_unknown: true\n");
    }
    if u.arbitrary()? {
        y.push_str("      known_affected_pins:\n");
        for _ in 0..u.int_in_range(1..=3u8)? {
            let _ = writeln!(
                y,
                "        - commit: {}\n          note: {}",
                sha(u)?,
                quoted(&text(u)?)
            );
        }
    }
    if u.arbitrary()? {
        let _ = writeln!(y, "      note: {}", quoted(&text(u)?));
    }
    if u.arbitrary()? {
        let v = |u: &mut Unstructured| -> Result<String> {
            Ok(format!(
                "{}.{}.{}",
                u.int_in_range(0..=1u8)?,
                u.int_in_range(0..=40u8)?,
                u.int_in_range(0..=9u8)?
            ))
        };
        let _ = writeln!(
            y,
            "  - package:\n      ecosystem: PyPI\n      name: vllm\n    ranges:\n      - type: ECOSYSTEM\n        events:\n          - introduced: \"{}\"\n          - fixed: \"{}\"",
            v(u)?,
            v(u)?
        );
        if u.arbitrary()? {
            let _ = writeln!(y, "    versions: [\"{}\", \"{}\"]", v(u)?, v(u)?);
        }
    }
    y.push_str("database_specific:\n");
    let severity = *u.choose(&["low", "medium", "high", "critical"])?;
    let _ = writeln!(y, "  severity: {severity}\n  kind: {}", quoted(&text(u)?));
    if u.arbitrary()? {
        y.push_str("  arch: [sm90, sm100]\n");
    }
    if u.arbitrary()? {
        let _ = writeln!(
            y,
            "  symptoms: {}\n  workaround: {}",
            quoted(&text(u)?),
            quoted(&text(u)?)
        );
    }
    if u.arbitrary()? {
        let _ = writeln!(
            y,
            "  requires:\n    - component: vllm\n      ranges:\n        - type: GIT\n          repo: https://github.com/vllm-project/vllm\n          events:\n            - introduced: \"{}\"",
            sha(u)?
        );
    }
    Ok(y)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(text) = rule_text(&mut u) else {
        return;
    };
    let db = common::db();
    let Ok(rule) = pinprobe::rules::load::parse("fuzz.yaml", &text, &db.registry) else {
        return;
    };
    let yaml = serde_saphyr::to_string(&rule).expect("a parsed rule serialises");
    let again =
        pinprobe::rules::load::parse("fuzz.yaml", &yaml, &db.registry).unwrap_or_else(|e| {
            panic!("the serialised rule does not parse: {e:?}\n{text}\n---\n{yaml}")
        });
    assert_eq!(
        rule, again,
        "the round trip changed the rule:\n{text}\n---\n{yaml}"
    );
});
