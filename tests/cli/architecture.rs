//! The crate's modules form layers, and every import points down: a module may use the modules
//! listed before it in [`LAYERS`], never one after it. The rule is data; this test reads every
//! `crate::MODULE` path in `src/` (comments and strings aside) and fails on a backward one,
//! naming the file, the line and both modules.

use std::path::{Path, PathBuf};

/// Top-level modules, lowest first (shared data at the bottom, the CLI on top). `lib.rs` and
/// `main.rs` stand above all of them.
const LAYERS: &[&str] = &[
    "input",   // the one guarded way to open a file: regular, non-blocking, bounded
    "model",   // plain shared data: pins, findings, evidence, reports, reviews
    "cache",   // the content-addressed cache: checked entries, atomic writes, LRU bound
    "view",    // every input kind opened as a read-only view; images
    "resolve", // clones through gix: references, ancestry, patch-id
    "pin",     // what a target pins: CMake, shipped copies, fingerprints, URLs, components
    "rules",   // the rule database, signatures, evaluation, OSV export
    "scan",    // one target through the pipeline; hygiene, drift, the ignore policy
    "diff",    // `diff`: two revisions compared, fix suggestions
    "report",  // renderers of scans and reviews
    "verify",  // the GPU verifier
    "exit",    // outcomes to exit codes
    "cli",     // arguments
];

/// One backward import.
#[derive(Debug, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    from: String,
    to: String,
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// The top-level module a file under `src/` belongs to (`src/pin/cmake/eval.rs` -> `pin`,
/// `src/exit.rs` -> `exit`).
fn module_of(rel: &Path) -> String {
    let mut parts = rel.components();
    let first = parts
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// `line` without its `//` comment and string literals (so prose and messages never count).
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// Every backward `crate::` path in the Rust source `text` of a file of module `from`.
fn violations_in(file: &str, from: &str, text: &str) -> Vec<Violation> {
    let Some(from_layer) = layer(from) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = code_of(line);
        let mut rest = code.as_str();
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::{a, b}` groups: check each name in the braces.
            let names: Vec<String> = if let Some(group) = after.strip_prefix('{') {
                group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or("").trim().to_string())
                    .collect()
            } else {
                vec![name]
            };
            for to in names {
                if let Some(to_layer) = layer(&to)
                    && to_layer > from_layer
                {
                    out.push(Violation {
                        file: file.to_string(),
                        line: i + 1,
                        from: from.to_string(),
                        to: to.clone(),
                    });
                }
            }
            rest = after;
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_points_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut modules_seen = std::collections::BTreeSet::new();
    let mut all = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src/");
        let module = module_of(rel);
        if module != "lib" && module != "main" {
            assert!(
                layer(&module).is_some(),
                "{}: module `{module}` is in no layer: add it to LAYERS in tests/cli/architecture.rs",
                rel.display()
            );
            modules_seen.insert(module.clone());
        }
        let text = std::fs::read_to_string(path).expect("source is UTF-8");
        all.extend(violations_in(&rel.display().to_string(), &module, &text));
    }
    let report: Vec<String> = all
        .iter()
        .map(|v| {
            format!(
                "src/{}:{}: `{}` imports `{}`, a layer above it",
                v.file, v.line, v.from, v.to
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "backward imports:\n{}",
        report.join("\n")
    );
    assert_eq!(
        modules_seen.len(),
        LAYERS.len(),
        "every layer names a module that exists: {modules_seen:?}"
    );
}

#[test]
fn a_backward_import_is_caught() {
    // A renderer reaching up into the exit codes, and a shared type reaching into a stage: both
    // must fail; downward imports, comments and strings must not.
    let text = "use crate::model::Finding;\nuse crate::exit::Exit;\n// crate::cli in a comment\nlet s = \"crate::cli\";\nuse crate::{model, diff::Review};\n";
    let found = violations_in("report/table.rs", "report", text);
    assert_eq!(
        found,
        vec![Violation {
            file: "report/table.rs".into(),
            line: 2,
            from: "report".into(),
            to: "exit".into(),
        }],
        "layers: {LAYERS:?}"
    );
    let found = violations_in("model/pin.rs", "model", "use crate::{rules, view::View};\n");
    assert_eq!(found.len(), 2, "{found:?}");
}
