//! Shell completions and manual pages, judged by the real tools: bash completes through the
//! generated function, zsh and fish parse their scripts (`zsh -n`, `fish --no-execute`), groff
//! renders the manual pages without warnings. A missing shell or groff is skipped visibly
//! (`.ci/run` installs zsh and fish; groff comes with man).

use crate::common;

use common::*;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What bash's completion offers for `words` (the last one being completed).
fn bash_complete(script: &str, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "{script}\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _pinprobe pinprobe '{cur}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        words = quoted.join(" "),
        cword = words.len() - 1,
        line = words.join(" "),
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn bash_completes_subcommands_options_and_values() {
    let run = pinprobe(&["completions", "bash"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let script = run.stdout;
    let subcommands = bash_complete(&script, &["pinprobe", ""]);
    for sub in ["scan", "diff", "rules", "verify", "completions", "man"] {
        assert!(
            subcommands.iter().any(|s| s == sub),
            "{sub}: {subcommands:?}"
        );
    }
    let options = bash_complete(&script, &["pinprobe", "scan", "--f"]);
    for opt in ["--format", "--fail-on", "--fail-on-unknown"] {
        assert!(options.iter().any(|s| s == opt), "{opt}: {options:?}");
    }
    let shells = bash_complete(&script, &["pinprobe", "completions", ""]);
    let shells: Vec<&String> = shells.iter().filter(|s| !s.starts_with('-')).collect();
    assert_eq!(shells, ["bash", "zsh", "fish"]);
    let severities = bash_complete(&script, &["pinprobe", "diff", "--fail-on", ""]);
    assert!(severities.iter().any(|s| s == "never"), "{severities:?}");
}

#[test]
fn zsh_and_fish_parse_their_scripts() {
    for (shell, check) in [("zsh", ["-n"]), ("fish", ["--no-execute"])] {
        let run = pinprobe(&["completions", shell]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("pinprobe") && run.stdout.contains("fail-on-unknown"));
        if !have(shell) {
            eprintln!("skipped: {shell} is not installed; its script was generated but not parsed");
            continue;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(format!("pinprobe.{shell}"));
        std::fs::write(&file, &run.stdout).expect("write");
        let out = Command::new(shell)
            .args(check)
            .arg(&file)
            .output()
            .expect("shell runs");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // An unknown shell is a usage error.
    assert_eq!(pinprobe(&["completions", "tcsh"]).code, 2);
}

#[test]
fn manual_pages_render_without_warnings() {
    let run = pinprobe(&["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(".TH pinprobe 1"), "{}", run.stdout);
    let dir = tempfile::tempdir().expect("tempdir");
    let run = pinprobe(&["man", "--dir", dir.path().to_str().expect("utf-8")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for page in [
        "pinprobe.1",
        "pinprobe-scan.1",
        "pinprobe-diff.1",
        "pinprobe-man.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page}: {pages:?}");
    }
    if !have("groff") {
        eprintln!("skipped: groff is not installed; the pages were generated but not rendered");
        return;
    }
    for page in &pages {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(dir.path().join(page))
            .output()
            .expect("groff runs");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{page}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let scan = std::fs::read_to_string(dir.path().join("pinprobe-scan.1")).expect("page");
    assert!(
        scan.contains("fail\\-on\\-unknown"),
        "the scan page documents its options"
    );
    // A directory that cannot be written: one line naming it.
    pinprobe(&["man", "--dir", "/nonexistent/man"]).assert_error("/nonexistent/man");
}
