//! The bad-input corpus (`fixtures/bad/cases.yaml`): every case through the real binary, under
//! a 60 s wall-clock and 512 MB address-space guard, must exit as listed; an error is exactly
//! one stderr line naming the cause; nothing panics; nothing hangs or blows up.

#[path = "../bad/cases.rs"]
mod cases;
use crate::common;

use common::image as build;

use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
const MEMORY_MB: u64 = 512;

#[test]
fn every_bad_input_fails_closed_within_bounds() {
    let bin = Path::new(env!("CARGO_BIN_EXE_pinprobe"));
    let all = cases::load();
    assert!(all.len() >= 40, "the corpus has {} cases", all.len());
    let only = std::env::var("PINPROBE_BAD_CASE").ok();
    let mut failures = Vec::new();
    for case in &all {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let args = cases::args(case, &tmp.path().join("input"));
        let run = cases::run_guarded(bin, &args, tmp.path(), LIMIT, MEMORY_MB);
        let mut problems = Vec::new();
        if run.timed_out {
            problems.push(format!("killed after {:?}", LIMIT));
        }
        if run.code != Some(case.exit) {
            problems.push(format!("exit {:?}, expected {}", run.code, case.exit));
        }
        let all_output = format!("{}{}", run.stdout, run.stderr);
        if all_output.contains("panicked") || all_output.contains("RUST_BACKTRACE") {
            problems.push("panicked".into());
        }
        if let Some(needle) = &case.stderr {
            let lines = run.stderr.trim_end().lines().count();
            if lines != 1 {
                problems.push(format!("{lines} stderr lines, expected one"));
            }
            if !run.stderr.contains(needle.as_str()) {
                problems.push(format!("stderr lacks `{needle}`"));
            }
        }
        if let Some(needle) = &case.output
            && !all_output.contains(needle.as_str())
        {
            problems.push(format!("output lacks `{needle}`"));
        }
        if case.exit == 0 {
            problems.push("a bad input must never be clean (exit 0)".into());
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}\n  stdout: {}",
                case.name,
                problems.join("; "),
                run.stderr.trim_end(),
                run.stdout
                    .chars()
                    .take(600)
                    .collect::<String>()
                    .replace('\n', "\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
