//! Static `setup.py` requirements: the string literals of `install_requires=[...]`,
//! `setup_requires=[...]` and `extras_require={...: [...]}` in a `setup(...)` call, parsed
//! with tree-sitter's Python grammar (nothing is executed). A requirement list that is
//! computed (a name, a call, a comprehension) is reported as not read, never guessed.

use super::{Requirement, parse_pep508};

const KEYS: &[&str] = &["install_requires", "setup_requires", "extras_require"];

/// The requirements of `setup.py`; `problems` names what could not be read statically.
pub fn read(file: &str, text: &str, problems: &mut Vec<String>) -> Vec<Requirement> {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        problems.push(format!("{file}: the Python grammar could not be loaded"));
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        problems.push(format!("{file}: not parsed"));
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "keyword_argument"
            && let Some(name) = node.child_by_field_name("name")
            && let Some(value) = node.child_by_field_name("value")
            && let Ok(key) = name.utf8_text(text.as_bytes())
            && KEYS.contains(&key)
        {
            let line = value.start_position().row as u32 + 1;
            if !literal_strings(value, text, file, &mut out) {
                problems.push(format!(
                    "{file}:{line}: `{key}` is computed, not a literal list: its requirements are not read"
                ));
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort_by_key(|r| r.line);
    out
}

/// The requirements in a list (or tuple) of string literals, or a dict of such lists; `false`
/// when the value is anything else.
fn literal_strings(
    value: tree_sitter::Node,
    text: &str,
    file: &str,
    out: &mut Vec<Requirement>,
) -> bool {
    match value.kind() {
        "list" | "tuple" => {
            let mut cursor = value.walk();
            for item in value.named_children(&mut cursor) {
                if item.kind() == "comment" {
                    continue;
                }
                let Some(s) = string_literal(item, text) else {
                    return false;
                };
                let line = item.start_position().row as u32 + 1;
                if let Ok(r) = parse_pep508(&s, "setup.py", file, line) {
                    out.push(r);
                }
            }
            true
        }
        "dictionary" => {
            let mut cursor = value.walk();
            for pair in value.named_children(&mut cursor) {
                if pair.kind() == "comment" {
                    continue;
                }
                let Some(v) = pair.child_by_field_name("value") else {
                    return false;
                };
                if !literal_strings(v, text, file, out) {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

/// A plain string literal's content (no f-string, no concatenation).
fn string_literal(node: tree_sitter::Node, text: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut cursor = node.walk();
    let mut content = String::new();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "string_start" | "string_end" => {}
            "string_content" => content.push_str(child.utf8_text(text.as_bytes()).ok()?),
            _ => return None,
        }
    }
    let start = node.child(0)?.utf8_text(text.as_bytes()).ok()?;
    if start.to_ascii_lowercase().contains('f') {
        return None;
    }
    Some(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_lists_are_read_and_computed_ones_named() {
        let text = "from setuptools import setup\n\nREQS = open('r.txt').read().splitlines()\nsetup(\n    name='deploy',\n    install_requires=[\n        'vllm==0.30.0',  # the engine\n        \"numpy\",\n    ],\n    extras_require={'fa': ['flash-attn>=2.7']},\n    setup_requires=REQS,\n)\n";
        let mut problems = Vec::new();
        let reqs = read("setup.py", text, &mut problems);
        let got: Vec<(String, u32)> = reqs.iter().map(|r| (r.name.clone(), r.line)).collect();
        assert_eq!(
            got,
            [
                ("vllm".to_string(), 7),
                ("numpy".to_string(), 8),
                ("flash-attn".to_string(), 10)
            ]
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("setup.py:11:"), "{problems:?}");
    }

    #[test]
    fn f_strings_are_not_literals() {
        let mut problems = Vec::new();
        let reqs = read(
            "setup.py",
            "setup(install_requires=[f'vllm=={V}'])\n",
            &mut problems,
        );
        assert!(reqs.is_empty());
        assert_eq!(problems.len(), 1);
    }
}
