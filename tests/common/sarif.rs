//! Microsoft's SARIF Multitool with GitHub's rules (`validate --rule-kind "Gh;Sarif"`), the
//! check GitHub code scanning's ingestion follows, run over a SARIF file a test produced.
//!
//! The tool is the npm package `@microsoft/sarif-multitool` (`.ci/run` installs a pinned
//! version); `sarif-multitool` must be on PATH. A prerequisite through [`super::require`]: a
//! visible skip locally without it, a failure under `PINPROBE_CI=1`.

use std::path::Path;
use std::process::Command;

/// The information URI the tests give pinprobe (`PINPROBE_INFORMATION_URI`): the SARIF
/// Multitool warns (SARIF2005) about a tool without one, and this repository's Cargo.toml
/// names no repository to fall back on.
pub const INFORMATION_URI: &str = "https://example.invalid/pinprobe";

/// The Multitool's errors and warnings on `sarif` (empty: GitHub's rules accept it), or
/// `None` when the tool is missing and the test may skip.
pub fn multitool_problems(sarif: &Path) -> Option<Vec<String>> {
    if !super::require::require(
        super::require::tool("sarif-multitool"),
        "sarif-multitool on PATH (npm install -g @microsoft/sarif-multitool@5.7.0) to check SARIF with GitHub's rules",
    ) {
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("validation.sarif");
    // The npm shim runs the tool through a shell: the `;` of the rule kinds is quoted for it.
    let out = Command::new("sarif-multitool")
        .arg("validate")
        .arg("--rule-kind")
        .arg("'Gh;Sarif'")
        .arg("--output")
        .arg(&log)
        .arg(sarif)
        .output()
        .expect("sarif-multitool runs");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| {
        panic!(
            "sarif-multitool wrote no log ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let log: serde_json::Value = serde_json::from_str(&text).expect("the validation log is JSON");
    let run = &log["runs"][0];
    let mut problems: Vec<String> = run["results"]
        .as_array()
        .into_iter()
        .flatten()
        // SARIF's default level is `warning`.
        .filter(|r| {
            matches!(
                r["level"].as_str().unwrap_or("warning"),
                "error" | "warning"
            )
        })
        .map(|r| {
            format!(
                "{} {}: {}",
                r["level"].as_str().unwrap_or("warning"),
                r["ruleId"].as_str().unwrap_or("?"),
                r["message"]
            )
        })
        .collect();
    for invocation in run["invocations"].as_array().into_iter().flatten() {
        for n in invocation["toolExecutionNotifications"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(
                invocation["toolConfigurationNotifications"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
        {
            if n["level"].as_str().unwrap_or("warning") == "error" {
                problems.push(format!("tool error: {}", n["message"]));
            }
        }
    }
    Some(problems)
}

/// Assert GitHub's rules accept `sarif` (a skip when the tool is missing, outside CI).
#[track_caller]
pub fn assert_github_accepts(sarif: &Path, label: &str) {
    if let Some(problems) = multitool_problems(sarif) {
        assert!(
            problems.is_empty(),
            "{label}: the SARIF Multitool (GitHub's rules) reports: {problems:#?}"
        );
    }
}
