//! The documentation: the book under docs/ and the README.
//!
//! - docs/src/cli.md is what `pinprobe cli-reference` prints from the argument definitions
//!   (`PINPROBE_UPDATE_DOCS=1` rewrites it);
//! - every relative link in docs/src/*.md and README.md resolves to a file in the repository,
//!   and every `#anchor` to a heading of that file (ids made as mdBook makes them);
//! - every chapter is in SUMMARY.md, and the README fits two screens (at most 200 lines);
//! - nothing in the documentation, the code or the data points at a file outside the
//!   repository (a machine's absolute path, a design document that is not here).
//!
//! `mdbook build docs` itself runs in CI (`.ci/run`).

use crate::common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_cli_reference_is_generated_from_the_argument_definitions() {
    let run = pinprobe(&["cli-reference"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = Path::new(ROOT).join("docs/src/cli.md");
    if std::env::var_os("PINPROBE_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &run.stdout).expect("write cli.md");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == run.stdout,
        "docs/src/cli.md is stale: run `PINPROBE_UPDATE_DOCS=1 cargo test --test cli book::` \
         (or `pinprobe cli-reference > docs/src/cli.md`)"
    );
    // Every visible subcommand and a few options it must carry.
    for needle in [
        "## `pinprobe scan`",
        "## `pinprobe diff`",
        "### `pinprobe rules pull`",
        "`--max-db-age <DAYS>`",
        "`-v, --verbose`",
        "**Images**",
    ] {
        assert!(run.stdout.contains(needle), "cli.md lacks {needle}");
    }
    assert!(
        !run.stdout.contains("`pinprobe cli-reference`\n"),
        "the hidden command has no section"
    );
}

/// The book's chapters and the README.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs/src"))
        .expect("docs/src")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.push(Path::new(ROOT).join("README.md"));
    docs
}

/// Text outside fenced code blocks and inline code spans, line by line (code is not Markdown).
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let mut kept = String::new();
        let mut code = false;
        for c in line.chars() {
            if c == '`' {
                code = !code;
                kept.push('`');
            } else if !code {
                kept.push(c);
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// `[text](target)` link targets of one line.
fn links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(after[..end].trim().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

/// The heading ids of a Markdown file, as mdBook makes them (`normalize_id`: alphanumerics,
/// `_` and `-` kept and lower-cased, whitespace to `-`, the rest dropped; repeats get `-1`,
/// `-2`, ...). Inline code and link syntax are rendered away first.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        // `[text](url)` -> text
        let mut rendered = String::new();
        let mut rest = title.trim();
        while let Some(open) = rest.find('[') {
            rendered.push_str(&rest[..open]);
            let tail = &rest[open + 1..];
            match (tail.find("]("), tail.find(')')) {
                (Some(close), Some(end)) if close < end => {
                    rendered.push_str(&tail[..close]);
                    rest = &tail[end + 1..];
                }
                _ => {
                    rendered.push('[');
                    rest = tail;
                }
            }
        }
        rendered.push_str(rest);
        let id: String = rendered
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        out.push(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    out
}

/// Every problem with the links of `doc`.
fn broken_links(doc: &Path, root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(doc).expect("read doc");
    let mut problems = Vec::new();
    for (line_no, line) in prose(&text) {
        for target in links(&line) {
            let where_ = format!("{}:{line_no}: `{target}`", doc.display());
            if target.starts_with("https://")
                || target.starts_with("http://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                doc.to_path_buf()
            } else {
                doc.parent().expect("parent").join(file)
            };
            let Ok(canonical) = resolved.canonicalize() else {
                problems.push(format!("{where_}: no such file"));
                continue;
            };
            if !canonical.starts_with(root) {
                problems.push(format!("{where_}: outside the repository"));
                continue;
            }
            if let Some(anchor) = anchor
                && canonical.extension().is_some_and(|e| e == "md")
            {
                let target_text = std::fs::read_to_string(&canonical).expect("read target");
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    problems.push(format!("{where_}: no heading with that id"));
                }
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = Path::new(ROOT).canonicalize().expect("root");
    let mut problems = Vec::new();
    for doc in documents() {
        problems.extend(broken_links(&doc, &root));
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_link_checker_finds_a_missing_file_a_missing_anchor_and_a_way_out() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().canonicalize().expect("root");
    write(
        &root,
        "a.md",
        "# A title: with `code`\n\n## Twice\n\n## Twice\n",
    );
    write(
        &root,
        "b.md",
        "[ok](a.md#a-title-with-code) [ok2](a.md#twice-1) [ok3](#self) [web](https://x.example/y)\n\
         [gone](c.md) [anchor](a.md#nope) [out](../../etc/passwd)\n\
         ```\n[in code](ignored.md)\n```\n`[span](ignored.md)`\n\n# Self\n",
    );
    let problems = broken_links(&root.join("b.md"), &root);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems[0].contains("`c.md`: no such file"),
        "{problems:#?}"
    );
    assert!(problems[1].contains("a.md#nope"), "{problems:#?}");
    assert!(problems[2].contains("../../etc/passwd"), "{problems:#?}");
}

#[test]
fn every_chapter_is_in_the_summary_and_the_readme_fits_two_screens() {
    let summary =
        std::fs::read_to_string(Path::new(ROOT).join("docs/src/SUMMARY.md")).expect("SUMMARY");
    for doc in documents() {
        let name = doc
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if name == "SUMMARY.md" || name == "README.md" {
            continue;
        }
        assert!(
            summary.contains(&format!("]({name})")),
            "docs/src/{name} is not in SUMMARY.md"
        );
    }
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines (at most 200)");
}

/// Nothing points at a file outside the repository: no machine's absolute path in the docs,
/// the code, the rules or the tools, and no design document other than docs/src/design.md.
#[test]
fn nothing_refers_to_a_file_outside_the_repository() {
    let mut offenders = Vec::new();
    let mut stack: Vec<PathBuf> = [
        "docs/src", "src", "rules", "tools", "examples", ".github", "benches", "fixtures",
        "schema", "kernels", ".ci",
    ]
    .iter()
    .map(|d| Path::new(ROOT).join(d))
    .collect();
    stack.push(Path::new(ROOT).join("README.md"));
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("dir") {
                stack.push(entry.expect("entry").path());
            }
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // binary
        };
        for (i, line) in text.lines().enumerate() {
            for needle in ["/work/", "DESIGN.md", "/home/", "/Users/"] {
                if line.contains(needle) {
                    offenders.push(format!("{}:{}: {needle}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
