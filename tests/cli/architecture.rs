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
    "judge",   // every status decision, on the one lattice: value sets, drift, ledger, hygiene
    "scan",    // one target through the pipeline (orchestration only); the ignore policy
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

/// Modules that never decide a status: they orchestrate (`scan`), compare (`diff`) or render
/// (`report`) what the judge layer decided on the one lattice.
const NO_STATUS: &[&str] = &["scan", "diff", "report"];

/// One line of a module in [`NO_STATUS`] that constructs or overrides a status.
#[derive(Debug, PartialEq, Eq)]
struct Decision {
    file: String,
    line: usize,
    code: String,
}

/// Whether `code` (a line without comments and strings) constructs or overrides a status: a
/// `status` field initialised or assigned with a `Status::` value, any assignment to a
/// `.status` or `.decided_by` field, or a `Verdict` built by hand.
fn decides_status(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let literal = |after: &str| {
        let after = after.strip_prefix("crate::model::").unwrap_or(after);
        let after = after.strip_prefix("model::").unwrap_or(after);
        after.starts_with("Status::")
    };
    let mut rest = compact.as_str();
    while let Some(at) = rest.find("status") {
        let before = &rest[..at];
        let after = &rest[at + "status".len()..];
        let word_start = !before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let assigned = after.strip_prefix('=').filter(|a| !a.starts_with('='));
        if word_start {
            if let Some(value) = after.strip_prefix(':').filter(|a| !a.starts_with(':'))
                && literal(value)
            {
                return true;
            }
            if let Some(value) = assigned
                && (before.ends_with('.') || literal(value))
            {
                return true;
            }
        }
        rest = after;
    }
    compact.contains(".decided_by=") && !compact.contains(".decided_by==")
        || compact.contains("Verdict{")
}

/// Every line of a [`NO_STATUS`] module's source `text` that decides a status.
fn decisions_in(file: &str, module: &str, text: &str) -> Vec<Decision> {
    if !NO_STATUS.contains(&module) {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| decides_status(&code_of(line)))
        .map(|(i, line)| Decision {
            file: file.to_string(),
            line: i + 1,
            code: line.trim().to_string(),
        })
        .collect()
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

#[test]
fn only_the_judge_decides_a_status() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut all = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src/");
        let text = std::fs::read_to_string(path).expect("source is UTF-8");
        all.extend(decisions_in(
            &rel.display().to_string(),
            &module_of(rel),
            &text,
        ));
    }
    let report: Vec<String> = all
        .iter()
        .map(|d| format!("src/{}:{}: {}", d.file, d.line, d.code))
        .collect();
    assert!(
        report.is_empty(),
        "statuses decided outside src/judge/ (ask the judge, which asks rules::evaluate):\n{}",
        report.join("\n")
    );
}

#[test]
fn a_status_decided_outside_the_judge_is_caught() {
    for decided in [
        "status: Status::Unknown,",
        "        status : crate::model::Status::NotAffected,",
        "finding.status = Status::Unknown;",
        "f.status = other;",
        "finding.decided_by = None;",
        "let v = Verdict { status, decided_by: None };",
        "let mut status = Status::Affected; status = Status::NotAffected;",
    ] {
        assert!(decides_status(&code_of(decided)), "{decided}");
    }
    for read in [
        "if finding.status == Status::Unknown {",
        "status: f.status,",
        "Status::Affected => 2,",
        "base_status: Some(f.status),",
        "matches!(f.status, Status::Affected | Status::Unknown)",
        "// finding.status = Status::Unknown;",
        "let s = \"status: Status::Unknown\";",
        "f.status != Status::NotAffected",
        "decided_by: f.decided_by,",
    ] {
        assert!(!decides_status(&code_of(read)), "{read}");
    }
    let text = "use crate::model::Status;\nlet e = Evidence { status: Status::Unknown };\n";
    assert_eq!(decisions_in("scan/x.rs", "scan", text).len(), 1);
    assert_eq!(decisions_in("judge/x.rs", "judge", text), Vec::new());
}

/// The first word of each line of `docs/src/layout.md`'s listings (its `text` blocks) that
/// starts at the margin: the paths the page describes, in order.
fn listed_paths(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_listing = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_listing = !in_listing && line == "```text";
            continue;
        }
        if in_listing
            && !line.starts_with(' ')
            && let Some(word) = line.split_whitespace().next()
        {
            out.push(word.trim_end_matches(';').to_string());
        }
    }
    out
}

/// `docs/src/layout.md` describes the tree as it is: every path it lists exists, every
/// top-level module of `src/` is listed once, highest layer first (as [`LAYERS`] orders
/// them), and every folder of `tests/` is named.
#[test]
fn the_layout_page_matches_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/src/layout.md")).expect("the layout page");
    let listed = listed_paths(&page);
    assert!(listed.len() > 20, "the listings were read: {listed:?}");
    let missing: Vec<&String> = listed.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "listed but not in the tree: {missing:?}"
    );
    let modules: Vec<String> = listed
        .iter()
        .filter_map(|p| p.strip_prefix("src/"))
        .map(|m| m.trim_end_matches('/').trim_end_matches(".rs").to_string())
        .filter(|m| m != "main")
        .collect();
    let top_down: Vec<String> = LAYERS.iter().rev().map(|m| m.to_string()).collect();
    assert_eq!(modules, top_down, "src/ modules, highest layer first");
    let mut on_disk: Vec<String> = std::fs::read_dir(root.join("src"))
        .expect("src/ is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .map(|n| n.trim_end_matches(".rs").to_string())
        .filter(|n| n != "lib" && n != "main")
        .collect();
    on_disk.sort();
    let mut sorted = modules.clone();
    sorted.sort();
    assert_eq!(
        sorted, on_disk,
        "every top-level module of src/ is on the page"
    );
    for entry in std::fs::read_dir(root.join("tests")).expect("tests/ is readable") {
        let entry = entry.expect("entry");
        if entry.path().is_dir() {
            let name = format!("{}/", entry.file_name().to_string_lossy());
            assert!(
                page.contains(&name),
                "tests/{name} is not on the layout page"
            );
        }
    }
}
