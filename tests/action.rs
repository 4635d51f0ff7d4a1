//! The GitHub Action (`.github/actions/pinprobe`): its review step (`run.sh`) run with a
//! simulated GitHub environment (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH and
//! RUNNER_TEMP pointing at files written here) and the real binary cargo built, on the fixture
//! history the project's CI job uses (`.ci/fixture-bump.sh`); and the action file's shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Github {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    base: String,
    head: String,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn setup() -> Github {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_path_buf();
    let fixture = dir.join("fixture");
    let out = Command::new("bash")
        .arg(Path::new(ROOT).join(".ci/fixture-bump.sh"))
        .arg(&fixture)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "fixture: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = git(&fixture, &["rev-parse", "HEAD~1"]);
    let head = git(&fixture, &["rev-parse", "HEAD"]);
    Github {
        _tmp: tmp,
        dir,
        base,
        head,
    }
}

struct Step {
    code: i32,
    stdout: String,
    outputs: BTreeMap<String, String>,
    summary: String,
}

/// Run the Action's review step as the runner would: inputs as INPUT_* variables, the
/// pull-request event in GITHUB_EVENT_PATH, pinprobe (the binary cargo built) on PATH.
fn run_step(gh: &Github, inputs: &[(&str, &str)], event: Option<serde_json::Value>) -> Step {
    let output = gh.dir.join("github_output");
    let summary = gh.dir.join("step_summary.md");
    let event_path = gh.dir.join("event.json");
    for f in [&output, &summary] {
        std::fs::write(f, "").expect("write");
    }
    if let Some(event) = &event {
        std::fs::write(&event_path, event.to_string()).expect("write");
    } else {
        let _ = std::fs::remove_file(&event_path);
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_pinprobe"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg(Path::new(ROOT).join(".github/actions/pinprobe/run.sh"))
        .current_dir(&gh.dir)
        .env("PATH", path)
        .env_remove("PINPROBE")
        .env_remove("VLLM_FLASH_ATTN_SRC_DIR")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("RUNNER_TEMP", gh.dir.join("runner_temp"))
        // What action.yml passes when the inputs keep their defaults outside a pull request.
        .env("INPUT_PATH", "fixture")
        .env("INPUT_BASE", "")
        .env("INPUT_HEAD", "")
        .env("INPUT_FAIL_ON", "high")
        .env("INPUT_RULES", "")
        .env("INPUT_REPOS", "")
        .env("INPUT_SARIF", "true");
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    let outputs = std::fs::read_to_string(&output)
        .expect("output file")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Step {
        code: out.status.code().expect("exited"),
        stdout: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        outputs,
        summary: std::fs::read_to_string(&summary).expect("summary"),
    }
}

fn pull_request(gh: &Github) -> serde_json::Value {
    serde_json::json!({
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "base": {"sha": gh.base, "ref": "main"},
            "head": {"sha": gh.head, "ref": "bump-fa"}
        }
    })
}

#[test]
fn the_review_step_reports_the_introduced_finding_from_the_pull_request_event() {
    let gh = setup();
    let step = run_step(&gh, &[], Some(pull_request(&gh)));
    assert_eq!(step.code, 1, "{}", step.stdout);
    assert_eq!(
        step.outputs.get("findings").map(String::as_str),
        Some("1"),
        "{:?}",
        step.outputs
    );
    assert_eq!(step.outputs.get("exit-code").map(String::as_str), Some("1"));
    assert!(
        step.stdout.contains("::error title=pinprobe::"),
        "{}",
        step.stdout
    );
    // The job summary: the review in Markdown, naming both commits.
    assert!(
        step.summary.starts_with("## pinprobe: pin bump"),
        "{}",
        step.summary
    );
    assert!(step.summary.contains(&gh.base[..12]));
    assert!(step.summary.contains(&gh.head[..12]));
    assert!(step.summary.contains("❌ introduced"));
    assert!(step.summary.contains("PINPROBE-2026-0001"));
    // The SARIF file exists, and holds the introduced finding at the GIT_TAG line.
    let sarif_path = step.outputs.get("sarif").expect("sarif output");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).expect("sarif file"))
            .expect("sarif json");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(results.iter().any(|r| r["ruleId"] == "PINPROBE-2026-0001"
        && r["properties"]["change"] == "introduced"
        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            == "cmake/external_projects/vllm_flash_attn.cmake"));
}

#[test]
fn inputs_override_the_event_and_the_threshold_decides_the_exit_code() {
    let gh = setup();
    // Explicit revisions, the reverse bump: the bug is fixed; nothing introduced.
    let step = run_step(
        &gh,
        &[
            ("INPUT_BASE", gh.head.as_str()),
            ("INPUT_HEAD", gh.base.as_str()),
            ("INPUT_SARIF", "false"),
        ],
        None,
    );
    assert_ne!(step.code, 1, "{}", step.stdout);
    assert_eq!(step.outputs.get("findings").map(String::as_str), Some("0"));
    assert_eq!(step.outputs.get("sarif").map(String::as_str), Some(""));
    assert!(step.summary.contains("✅ fixed"), "{}", step.summary);

    // The bump again, failing only on critical findings: the high one does not fail the step.
    let step = run_step(
        &gh,
        &[("INPUT_FAIL_ON", "critical")],
        Some(pull_request(&gh)),
    );
    assert_eq!(step.code, 0, "{}", step.stdout);
    assert_eq!(step.outputs.get("findings").map(String::as_str), Some("1"));
}

#[test]
fn the_review_step_runs_pinprobe_once_for_every_rendering() {
    let gh = setup();
    // PINPROBE: a wrapper that logs each invocation's arguments, then runs the real binary.
    let log = gh.dir.join("calls.log");
    let wrapper = gh.dir.join("pinprobe-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_pinprobe")
        ),
    )
    .expect("write");
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .expect("chmod");
    assert!(chmod.success());
    let step = run_step(
        &gh,
        &[("PINPROBE", wrapper.to_str().expect("utf-8"))],
        Some(pull_request(&gh)),
    );
    assert_eq!(step.code, 1, "{}", step.stdout);
    let calls = std::fs::read_to_string(&log).expect("calls");
    assert_eq!(calls.lines().count(), 1, "{calls}");
    for fmt in ["json=", "markdown=", "sarif="] {
        assert!(calls.contains(fmt), "{calls}");
    }
    assert!(
        step.summary.contains("PINPROBE-2026-0001"),
        "{}",
        step.summary
    );
    assert!(
        step.outputs
            .get("sarif")
            .is_some_and(|p| Path::new(p).is_file())
    );
}

#[test]
fn no_revisions_and_bad_input_are_errors() {
    let gh = setup();
    let step = run_step(&gh, &[], None);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(
        step.stdout.contains("no base/head revision"),
        "{}",
        step.stdout
    );

    let step = run_step(
        &gh,
        &[("INPUT_FAIL_ON", "sometimes")],
        Some(pull_request(&gh)),
    );
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert_eq!(step.outputs.get("exit-code").map(String::as_str), Some("2"));

    let step = run_step(&gh, &[("INPUT_PATH", "nowhere")], Some(pull_request(&gh)));
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(
        step.stdout.contains("not a git work tree"),
        "{}",
        step.stdout
    );
}

#[test]
fn the_action_file_declares_its_inputs_outputs_and_steps() {
    let text = std::fs::read_to_string(Path::new(ROOT).join(".github/actions/pinprobe/action.yml"))
        .expect("action.yml");
    let action: serde_json::Value = serde_saphyr::from_str(&text).expect("action.yml is YAML");
    assert!(action["name"].is_string() && action["description"].is_string());
    assert_eq!(action["runs"]["using"], "composite");
    for input in [
        "path",
        "base",
        "head",
        "fail-on",
        "rules",
        "repos",
        "sarif",
        "allow-head-ignores",
        "allow-head-rules",
    ] {
        assert!(
            action["inputs"][input]["description"].is_string(),
            "input {input}"
        );
    }
    assert_eq!(
        action["inputs"]["base"]["default"],
        "${{ github.event.pull_request.base.sha }}"
    );
    assert_eq!(
        action["inputs"]["head"]["default"],
        "${{ github.event.pull_request.head.sha }}"
    );
    for output in ["findings", "sarif", "exit-code"] {
        assert!(
            action["outputs"][output]["value"]
                .as_str()
                .is_some_and(|v| v.contains("steps.review.outputs")),
            "output {output}"
        );
    }
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(uses.iter().any(|u| u.starts_with("actions/cache@")));
    assert!(
        uses.iter()
            .any(|u| u.starts_with("github/codeql-action/upload-sarif@"))
    );
    for step in steps.iter().filter(|s| s.get("run").is_some()) {
        // Composite `run` steps need a shell; inputs reach scripts through env, not `${{ }}`.
        assert_eq!(step["shell"], "bash", "{step:#}");
        let run = step["run"].as_str().expect("run");
        assert!(!run.contains("${{"), "no expression in a script: {run}");
        for fetcher in ["curl", "wget", "releases/download"] {
            assert!(!run.contains(fetcher), "no binary downloads: {run}");
        }
    }
    assert!(
        steps.iter().any(|s| s["run"]
            .as_str()
            .is_some_and(|r| r.contains("cargo install --locked"))),
        "pinprobe is built from source"
    );
    assert!(
        steps
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains("run.sh")))
    );
}

#[test]
fn a_pull_request_that_ignores_its_own_finding_fails_unless_the_workflow_allows_it() {
    let mut gh = setup();
    let fixture = gh.dir.join("fixture");
    std::fs::write(
        fixture.join(".pinprobe.yaml"),
        "ignore:\n  - rule: PINPROBE-2026-0001\n    reason: \"trust me\"\n    expires: 2099-12-31\n",
    )
    .expect("write");
    git(&fixture, &["add", ".pinprobe.yaml"]);
    git(
        &fixture,
        &[
            "-c",
            "user.name=PR author",
            "-c",
            "user.email=author@example.invalid",
            "commit",
            "-q",
            "-m",
            "ignore it",
        ],
    );
    gh.head = git(&fixture, &["rev-parse", "HEAD"]);
    let step = run_step(&gh, &[("INPUT_SARIF", "false")], Some(pull_request(&gh)));
    assert_eq!(step.code, 1, "{}", step.stdout);
    assert_eq!(step.outputs.get("findings").map(String::as_str), Some("1"));
    assert!(
        step.stdout
            .contains("adds or edits 1 ignore entr(y/ies) or rule override(s) of its own"),
        "{}",
        step.stdout
    );
    assert!(
        step.summary
            .contains("this change adds an ignore entry for PINPROBE-2026-0001"),
        "{}",
        step.summary
    );

    // The workflow author's input applies the pull request's policy: the finding is suppressed.
    let step = run_step(
        &gh,
        &[
            ("INPUT_SARIF", "false"),
            ("INPUT_ALLOW_HEAD_IGNORES", "true"),
        ],
        Some(pull_request(&gh)),
    );
    // (Other built-in rules stay undecided without a clone: 3, not 1.)
    assert_eq!(step.code, 3, "{}", step.stdout);
    assert_eq!(step.outputs.get("findings").map(String::as_str), Some("0"));
}
