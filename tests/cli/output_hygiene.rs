//! Output hygiene (issue 20): text from inputs (a pull request controls `GIT_REPOSITORY`)
//! reaches no terminal raw and breaks no Markdown, checked byte for byte through the binary.
//! JSON and SARIF keep control characters as JSON escapes and round-trip the value.

use crate::common;

use common::*;

/// A repository URL carrying a CSI colour, OSC-like sequences, a C1 CSI, HTML and a
/// backtick (no `;` or CR: CMake splits a list at one and ends an argument at the other;
/// the error-line test has real OSCs and a CR).
const HOSTILE: &str = "https://github.com/vllm-project/flash-attention\x1b[31m\x1b]8:https://evil.example/\x07x\x1b]0:pwned\x07X\u{9b}2J<img/src=x>`y`.git";

fn hostile_tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    vllm_tree(
        tmp.path(),
        HOSTILE,
        "0123456789abcdef0123456789abcdef01234567",
    );
    tmp
}

/// No control character but the newline, as bytes.
fn assert_no_raw_control(what: &str, bytes: &str) {
    let bad: Vec<char> = bytes
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw control characters {bad:?} in {bytes}"
    );
}

#[test]
fn table_and_markdown_escape_every_control_character() {
    let tree = hostile_tree();
    let path = tree.path().to_str().expect("utf-8");
    // Wide enough that the escaped URL does not wrap inside its cell.
    let table = Pinprobe::new(&["scan", path, "--ignore", "/dev/null"])
        .env("COLUMNS", "400")
        .run();
    assert!(
        table.stdout.contains("flash-attention"),
        "{}{}",
        table.stdout,
        table.stderr
    );
    assert_no_raw_control("table", &table.stdout);
    assert_no_raw_control("stderr", &table.stderr);
    // The escapes, as text.
    assert!(
        table.stdout.contains(
            "flash-attention\\x1b[31m\\x1b]8:https://evil.example/\\x07x\\x1b]0:pwned\\x07X\\u{9b}2J<img/src=x>`y`.git"
        ),
        "{}",
        table.stdout
    );

    let md = pinprobe(&[
        "scan",
        path,
        "--ignore",
        "/dev/null",
        "--format",
        "markdown",
    ]);
    assert_no_raw_control("markdown", &md.stdout);
    let row = md
        .stdout
        .lines()
        .find(|l| l.starts_with("| flash-attention |"))
        .unwrap_or_else(|| panic!("component row in {}", md.stdout));
    assert_eq!(
        row.split(" | ").nth(1),
        Some(
            "https://github.com/vllm-project/flash-attention\\x1b\\[31m\\x1b\\]8:https://evil.example/\\x07x\\x1b\\]0:pwned\\x07X\\u{9b}2J&lt;img/src=x&gt;\\`y\\`.git"
        ),
        "{row}"
    );
    assert!(!md.stdout.contains("<img"), "{}", md.stdout);
}

#[test]
fn json_and_sarif_keep_control_characters_escaped() {
    let tree = hostile_tree();
    let path = tree.path().to_str().expect("utf-8");
    let json = pinprobe(&["scan", path, "--ignore", "/dev/null", "--format", "json"]);
    assert_no_raw_control("json", &json.stdout);
    assert!(json.stdout.contains("\\u001b[31m"), "{}", json.stdout);
    let value = json.json();
    assert_eq!(value["targets"][0]["components"][0]["repo"], HOSTILE);

    let sarif = pinprobe(&["scan", path, "--ignore", "/dev/null", "--format", "sarif"]);
    assert_no_raw_control("sarif", &sarif.stdout);
    let _: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("sarif is JSON");
}

#[test]
fn an_error_line_escapes_the_input_it_names() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let name = tmp.path().join("x\x1b]0;pwned\x07\r.whl");
    let run = pinprobe(&["scan", name.to_str().expect("utf-8")]);
    run.assert_error("x\\x1b]0;pwned\\x07\\r.whl");
    assert_no_raw_control("stderr", &run.stderr);
    // The path and the I/O cause are each said once.
    assert_eq!(
        run.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        run.stderr
    );
}
