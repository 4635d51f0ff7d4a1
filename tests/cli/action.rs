//! The GitHub Action (`.github/actions/pinprobe`): its review step (`run.sh`) run with a
//! simulated GitHub environment (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH and
//! RUNNER_TEMP pointing at files written here) and the real binary cargo built, on the fixture
//! history the project's CI job uses (`.ci/fixture-bump.sh`); and the action file's shape.

use crate::common;
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
        "mode",
        "target",
        "build-from-source",
        "release-repository",
        "verify-provenance",
        "fail-on-unknown",
        "path",
        "base",
        "head",
        "fail-on",
        "rules",
        "repos",
        "sarif",
        "allow-head-ignores",
        "allow-head-rules",
        "sarif-unknown",
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
    for output in [
        "findings",
        "introduced",
        "fixed",
        "kept",
        "affected",
        "not-affected",
        "unknown",
        "suppressed",
        "json",
        "sarif",
        "exit-code",
    ] {
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
        // Downloads happen in install.sh only, where the checksum is checked (tested below).
        for fetcher in ["curl", "wget", "releases/download"] {
            assert!(
                !run.contains(fetcher),
                "no download outside install.sh: {run}"
            );
        }
    }
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.iter().any(|r| r.contains("install.sh")));
    assert!(runs.iter().any(|r| r.contains("cargo install --locked")));
    assert!(runs.iter().any(|r| r.contains("run.sh")));
    // The build cache's key comes from the files the build reads, never the action's ref.
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .expect("cache step");
    assert_eq!(
        cache["with"]["key"],
        "${{ steps.install.outputs.cache-key }}"
    );
    assert!(!text.contains("action_ref") && !text.contains("action_repository"));
    assert_eq!(
        action["inputs"]["build-from-source"]["default"], "false",
        "the release binary is the default"
    );
}

/// Every `uses:` in the Action and the workflows names a full commit SHA, with the version it
/// stands for in a `# vX` comment (a tag can be moved; a SHA cannot).
#[test]
fn every_nested_action_is_pinned_by_full_commit_sha() {
    let mut files = vec![Path::new(ROOT).join(".github/actions/pinprobe/action.yml")];
    for dir in [".github/workflows", "examples/workflows"] {
        let Ok(entries) = std::fs::read_dir(Path::new(ROOT).join(dir)) else {
            continue;
        };
        files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
    }
    let pinned = regex::Regex::new(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d").expect("regex");
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        for line in text.lines() {
            let Some(reference) = line.trim().trim_start_matches("- ").strip_prefix("uses: ")
            else {
                continue;
            };
            checked += 1;
            // Local actions (./...) are this repository's own files, pinned by the checkout.
            if reference.starts_with("./") {
                continue;
            }
            // The examples use pinprobe's own Action by a placeholder the reader fills in.
            if reference.starts_with("OWNER/pinprobe/") {
                assert!(
                    reference.contains("@FULL_COMMIT_SHA"),
                    "{}: {line}",
                    file.display()
                );
                continue;
            }
            assert!(pinned.is_match(reference), "{}: {line}", file.display());
        }
    }
    assert!(checked >= 10, "only {checked} uses: lines in {files:?}");
}

#[test]
fn scan_mode_checks_a_tree_and_sets_the_counts_by_status() {
    let gh = setup();
    let step = run_step(
        &gh,
        &[
            ("INPUT_MODE", "scan"),
            ("INPUT_TARGET", "fixture"),
            ("PINPROBE_OFFLINE", "1"),
        ],
        None,
    );
    // HEAD pins vLLM 0.30.0's FlashAttention commit: the known affected pin.
    assert_eq!(step.code, 1, "{}", step.stdout);
    let out = |k: &str| step.outputs.get(k).map(String::as_str);
    assert_eq!(out("affected"), Some("1"), "{:?}", step.outputs);
    assert_eq!(out("findings"), Some("1"));
    assert_eq!(out("suppressed"), Some("0"));
    assert_eq!(out("exit-code"), Some("1"));
    assert_eq!(
        out("introduced"),
        Some(""),
        "diff's counts are empty in scan"
    );
    let unknown: usize = out("unknown")
        .and_then(|v| v.parse().ok())
        .expect("unknown");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out("json").expect("json output")).expect("json file"),
    )
    .expect("json");
    let statuses: Vec<&str> = json["targets"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["status"].as_str())
        .collect();
    assert_eq!(
        unknown,
        statuses.iter().filter(|s| **s == "unknown").count()
    );
    assert!(
        step.summary.contains("PINPROBE-2026-0001"),
        "{}",
        step.summary
    );
    assert!(
        step.stdout.contains("1 affected finding(s)"),
        "{}",
        step.stdout
    );

    // Undecided findings alone never fail when fail-on-unknown is never; affected ones still do.
    let step = run_step(
        &gh,
        &[
            ("INPUT_MODE", "scan"),
            ("INPUT_TARGET", "fixture"),
            ("PINPROBE_OFFLINE", "1"),
            ("INPUT_FAIL_ON_UNKNOWN", "never"),
            ("INPUT_SARIF", "false"),
        ],
        None,
    );
    assert_eq!(step.code, 1, "{}", step.stdout);

    let step = run_step(&gh, &[("INPUT_MODE", "audit")], None);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(
        step.stdout.contains("mode must be diff or scan"),
        "{}",
        step.stdout
    );
}

#[test]
fn a_push_that_creates_the_branch_reviews_head_against_itself() {
    let gh = setup();
    let push = serde_json::json!({
        "before": "0000000000000000000000000000000000000000",
        "after": gh.head,
    });
    let step = run_step(&gh, &[("PINPROBE_OFFLINE", "1")], Some(push));
    // Nothing changes, so nothing is introduced; the SARIF still lists HEAD's open finding.
    assert_eq!(
        step.outputs.get("introduced").map(String::as_str),
        Some("0")
    );
    assert_ne!(step.code, 1, "{}", step.stdout);
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(step.outputs.get("sarif").expect("sarif")).expect("sarif file"),
    )
    .expect("sarif json");
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .any(|r| r["ruleId"] == "PINPROBE-2026-0001"),
        "{sarif:#}"
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

/// A release host on loopback: GET /PATH serves ROOT/PATH (404 when absent), or `status` for
/// every request when set; every requested path is recorded.
struct Releases {
    root: PathBuf,
    url: String,
    requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn serve(root: PathBuf, status: Option<u16>) -> Releases {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (seen, dir) = (requests.clone(), root.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(n) if n > 2 => continue,
                    _ => break,
                }
            }
            seen.lock().expect("lock").push(path.clone());
            let file = dir.join(path.trim_start_matches('/'));
            let (code, body) = match status {
                Some(code) => (code, b"no".to_vec()),
                None if !path.contains("..") && file.is_file() => {
                    (200, std::fs::read(&file).expect("read"))
                }
                None => (404, b"Not Found".to_vec()),
            };
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    Releases {
        root,
        url,
        requests,
    }
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn triple() -> String {
    format!("{}-unknown-linux-musl", std::env::consts::ARCH)
}

/// The release archive, pinprobe-VERSION-TRIPLE.tar.gz holding the binary cargo built, packed
/// once per test run (gzip -1: the debug binary is large) under CARGO_TARGET_TMPDIR.
fn archive() -> &'static Path {
    static ARCHIVE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let name = format!("pinprobe-{VERSION}-{}", triple());
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("action-release");
        let stage = root.join(&name);
        std::fs::create_dir_all(&stage).expect("mkdir");
        std::fs::copy(env!("CARGO_BIN_EXE_pinprobe"), stage.join("pinprobe")).expect("copy");
        let archive = root.join(format!("{name}.tar.gz"));
        let tar = Command::new("tar")
            .arg("-C")
            .arg(&root)
            .args(["--use-compress-program", "gzip -1", "-cf"])
            .arg(&archive)
            .arg(&name)
            .status()
            .expect("tar");
        assert!(tar.success());
        archive
    })
}

/// Publish a release as the release workflow lays it out: vVERSION/pinprobe-VERSION-TRIPLE.tar.gz
/// and vVERSION/SHA256SUMS, written by sha256sum.
fn publish(root: &Path) -> PathBuf {
    let release = root.join(format!("v{VERSION}"));
    std::fs::create_dir_all(&release).expect("mkdir");
    let source = archive();
    let archive = release.join(source.file_name().expect("name"));
    std::fs::copy(source, &archive).expect("copy");
    let sums = Command::new("sh")
        .args(["-c", "sha256sum -- *.tar.gz > SHA256SUMS"])
        .current_dir(&release)
        .status()
        .expect("sha256sum");
    assert!(sums.success());
    attest(root, &archive);
    archive
}

/// Record `archive`'s digest as attested by the release workflow (what
/// actions/attest-build-provenance publishes, outside the release): the `gh` stand-in reads it.
fn attest(root: &Path, archive: &Path) {
    let out = Command::new("sha256sum")
        .arg(archive)
        .output()
        .expect("sha256sum");
    let digest = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("digest")
        .to_string();
    let list = root.join("attested");
    let mut text = std::fs::read_to_string(&list).unwrap_or_default();
    text.push_str(&format!("{digest}\n"));
    std::fs::write(list, text).expect("write");
}

/// The release repository the install tests name, and the signer workflow the Action pins.
const RELEASE_REPO: &str = "example/pinprobe";
const SIGNER: &str = "example/pinprobe/.github/workflows/release.yml";

/// A stand-in for the GitHub CLI's `gh attestation verify FILE --repo R --signer-workflow W`
/// (the real one needs GitHub's attestation API and Sigstore, which no test reaches): it
/// succeeds only for a file whose SHA-256 is in the attested list and for the pinned signer,
/// and logs every call.
fn gh_stub(dir: &Path) -> PathBuf {
    let bin = dir.join("gh-stub");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let script = r#"#!/usr/bin/env bash
echo "$*" >>"$GH_STUB_LOG"
[ "$1 $2" = "attestation verify" ] || { echo "unexpected gh call: $*" >&2; exit 2; }
file=$3
shift 3
repo= signer=
while [ $# -gt 0 ]; do
  case $1 in
    --repo) repo=$2; shift 2 ;;
    --signer-workflow) signer=$2; shift 2 ;;
    *) shift ;;
  esac
done
digest=$(sha256sum "$file" | cut -d' ' -f1)
if [ "$signer" != "$GH_STUB_SIGNER" ] || [ "$repo" != "${GH_STUB_SIGNER%%/.github/*}" ]; then
  echo "verification failed: signer $signer is not the attestation's" >&2
  exit 1
fi
if ! grep -qx "$digest" "$GH_STUB_ATTESTED" 2>/dev/null; then
  echo "verification failed: no attestations found for sha256:$digest" >&2
  exit 1
fi
echo "Loaded 1 attestation from GitHub API; the attestation was verified"
"#;
    let gh = bin.join("gh");
    std::fs::write(&gh, script).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

struct Install {
    code: i32,
    stdout: String,
    outputs: BTreeMap<String, String>,
    path: String,
}

fn install(dir: &Path, releases: &str, inputs: &[(&str, &str)]) -> Install {
    let (output, path) = (dir.join("install_output"), dir.join("install_path"));
    for f in [&output, &path] {
        std::fs::write(f, "").expect("write");
    }
    let stub = gh_stub(dir);
    let search = format!(
        "{}:{}",
        stub.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg(Path::new(ROOT).join(".github/actions/pinprobe/install.sh"))
        .env("PINPROBE_SOURCE", ROOT)
        .env("PINPROBE_RELEASES", releases)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_PATH", &path)
        .env("RUNNER_TEMP", dir.join("runner_temp"))
        .env("INPUT_BUILD_FROM_SOURCE", "false")
        .env("INPUT_RELEASE_REPOSITORY", RELEASE_REPO)
        .env("PATH", search)
        .env("GH_STUB_LOG", dir.join("gh.log"))
        .env("GH_STUB_ATTESTED", dir.join("attested"))
        .env("GH_STUB_SIGNER", SIGNER)
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("all_proxy")
        .env_remove("ALL_PROXY");
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    Install {
        code: out.status.code().expect("exited"),
        stdout: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        outputs: std::fs::read_to_string(&output)
            .expect("output")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        path: std::fs::read_to_string(&path).expect("path"),
    }
}

fn supported_platform() -> bool {
    cfg!(target_os = "linux") && matches!(std::env::consts::ARCH, "x86_64" | "aarch64")
}

#[test]
fn the_install_step_runs_the_release_binary_whose_checksum_matches() {
    if !supported_platform() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    publish(tmp.path());
    let releases = serve(tmp.path().to_path_buf(), None);
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 0, "{}", step.stdout);
    assert_eq!(
        step.outputs.get("source").map(String::as_str),
        Some("release")
    );
    assert_eq!(
        step.outputs.get("version").map(String::as_str),
        Some(VERSION)
    );
    let bin = Path::new(step.path.trim()).join("pinprobe");
    let out = Command::new(&bin).arg("--version").output().expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("pinprobe {VERSION}")
    );
    assert_eq!(
        *releases.requests.lock().expect("lock"),
        [
            format!("/v{VERSION}/SHA256SUMS"),
            format!("/v{VERSION}/pinprobe-{VERSION}-{}.tar.gz", triple())
        ]
    );
    // The cache key is a hash of the files the build reads: stable from run to run.
    let key = step.outputs.get("cache-key").expect("cache-key").clone();
    assert!(key.starts_with(step.outputs.get("cache-prefix").expect("prefix")));
    assert!(key.contains(VERSION));
    let again = install(
        tmp.path(),
        &releases.url,
        &[("INPUT_BUILD_FROM_SOURCE", "true")],
    );
    assert_eq!(again.outputs.get("cache-key"), Some(&key));
}

#[test]
fn a_checksum_mismatch_refuses_to_install() {
    if !supported_platform() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let archive = publish(tmp.path());
    // One byte more after SHA256SUMS was written: a corrupted or substituted download.
    let mut bytes = std::fs::read(&archive).expect("read");
    bytes.push(0);
    std::fs::write(&archive, bytes).expect("write");
    // Even with an attestation that verifies, the checksum is a second check.
    attest(tmp.path(), &archive);
    let releases = serve(tmp.path().to_path_buf(), None);
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(step.stdout.contains("checksum mismatch"), "{}", step.stdout);
    assert!(
        step.stdout.contains("refusing to run it"),
        "{}",
        step.stdout
    );
    assert_eq!(
        step.outputs.get("source"),
        None,
        "neither installed nor built"
    );
    assert_eq!(step.path, "", "nothing on PATH");
    assert!(!tmp.path().join("runner_temp/pinprobe-install/bin").exists());

    // A release whose SHA256SUMS does not list the archive is refused the same way.
    std::fs::write(
        releases.root.join(format!("v{VERSION}/SHA256SUMS")),
        format!("{}  pinprobe-other.tar.gz\n", "0".repeat(64)),
    )
    .expect("write");
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(step.stdout.contains("lists no"), "{}", step.stdout);
}

/// Issue 30: a release whose binary was swapped and whose SHA256SUMS was rewritten to match
/// (what anyone who can edit the release can do) is refused, because the archive has no
/// build-provenance attestation from the pinned release workflow; without gh the step fails
/// closed; only an explicit `verify-provenance: false` falls back to the checksum alone.
#[test]
fn a_tampered_release_whose_checksums_match_is_refused() {
    if !supported_platform() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let genuine = publish(tmp.path());
    // The genuine release installs, verified, and gh was asked with the pinned signer.
    let releases = serve(tmp.path().to_path_buf(), None);
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 0, "{}", step.stdout);
    assert_eq!(
        step.outputs.get("provenance").map(String::as_str),
        Some("verified")
    );
    let log = std::fs::read_to_string(tmp.path().join("gh.log")).expect("gh was called");
    assert!(
        log.contains(&format!("--repo {RELEASE_REPO} --signer-workflow {SIGNER}")),
        "{log}"
    );

    // Tamper: another binary in the archive, SHA256SUMS rewritten to match it.
    let stage = tmp.path().join("tamper");
    std::fs::create_dir_all(&stage).expect("mkdir");
    let name = format!("pinprobe-{VERSION}-{}", triple());
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&genuine)
        .arg("-C")
        .arg(&stage)
        .status()
        .expect("tar");
    assert!(untar.success());
    let bin = stage.join(&name).join("pinprobe");
    std::fs::write(
        &bin,
        format!("#!/bin/sh\necho 'pinprobe {VERSION}'\ntouch \"$0.ran\"\n"),
    )
    .expect("write");
    let tar = Command::new("tar")
        .arg("-C")
        .arg(&stage)
        .arg("-czf")
        .arg(&genuine)
        .arg(&name)
        .status()
        .expect("tar");
    assert!(tar.success());
    let sums = Command::new("sh")
        .args(["-c", "sha256sum -- *.tar.gz > SHA256SUMS"])
        .current_dir(genuine.parent().expect("release dir"))
        .status()
        .expect("sha256sum");
    assert!(sums.success());
    let _ = std::fs::remove_dir_all(tmp.path().join("runner_temp"));
    std::fs::write(tmp.path().join("install_path"), "").expect("reset");
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(
        step.stdout
            .contains("no valid build-provenance attestation"),
        "{}",
        step.stdout
    );
    assert!(step.stdout.contains(SIGNER), "{}", step.stdout);
    assert_eq!(step.path, "", "nothing on PATH");
    assert_eq!(step.outputs.get("source"), None);
    let installed = tmp.path().join("runner_temp/pinprobe-install");
    assert!(!installed.join("bin").exists());
    assert!(
        !installed.join(format!("{name}.tar.gz")).exists(),
        "the archive is deleted"
    );

    // No gh at all (a PATH without the stand-in): fail closed, unless the workflow opts out
    // explicitly.
    let (output, path) = (tmp.path().join("o2"), tmp.path().join("p2"));
    for f in [&output, &path] {
        std::fs::write(f, "").expect("write");
    }
    let bare_path = "/usr/local/bin:/usr/bin:/bin";
    let has_gh = bare_path
        .split(':')
        .any(|d| Path::new(d).join("gh").exists());
    let run = |verify: &str| {
        Command::new("bash")
            .arg(Path::new(ROOT).join(".github/actions/pinprobe/install.sh"))
            .env("PINPROBE_SOURCE", ROOT)
            .env("PINPROBE_RELEASES", &releases.url)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_PATH", &path)
            .env("RUNNER_TEMP", tmp.path().join("runner_temp2"))
            .env("INPUT_BUILD_FROM_SOURCE", "false")
            .env("INPUT_RELEASE_REPOSITORY", RELEASE_REPO)
            .env("INPUT_VERIFY_PROVENANCE", verify)
            .env("PATH", bare_path)
            .env_remove("http_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("all_proxy")
            .env_remove("ALL_PROXY")
            .output()
            .expect("bash runs")
    };
    if !has_gh {
        let out = run("true");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("gh is not on PATH"), "{text}");
    }
    // The explicit opt-out: the checksum alone, with a warning (here it cannot tell the
    // tampered archive from the genuine one: that is what the attestation is for).
    let out = run("false");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("verify-provenance is false"), "{text}");
    assert!(
        std::fs::read_to_string(&output)
            .expect("output")
            .contains("provenance=skipped")
    );
}

#[test]
fn without_a_release_or_when_asked_the_action_builds_from_source() {
    if !supported_platform() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    // An empty host: no release for this version.
    let releases = serve(tmp.path().join("empty"), None);
    let step = install(tmp.path(), &releases.url, &[]);
    assert_eq!(step.code, 0, "{}", step.stdout);
    assert_eq!(
        step.outputs.get("source").map(String::as_str),
        Some("build")
    );
    assert!(
        step.stdout.contains(&format!("no release v{VERSION}")),
        "{}",
        step.stdout
    );
    assert_eq!(step.path, "");

    // build-from-source: the host is never asked.
    publish(tmp.path());
    let releases = serve(tmp.path().to_path_buf(), None);
    let step = install(
        tmp.path(),
        &releases.url,
        &[("INPUT_BUILD_FROM_SOURCE", "true")],
    );
    assert_eq!(step.code, 0, "{}", step.stdout);
    assert_eq!(
        step.outputs.get("source").map(String::as_str),
        Some("build")
    );
    assert!(releases.requests.lock().expect("lock").is_empty());

    // A host that fails otherwise (500) is an error, not a silent slow path.
    let broken = serve(tmp.path().to_path_buf(), Some(500));
    let step = install(tmp.path(), &broken.url, &[]);
    assert_eq!(step.code, 2, "{}", step.stdout);
    assert!(step.stdout.contains("HTTP 500"), "{}", step.stdout);
}

/// The copy-paste workflows of the book's CI chapter (docs/src/ci.md) and the README's ten-line
/// one are the files actionlint checks in CI (examples/workflows/), byte for byte: one per use
/// (pull request, pre-deploy, image scan; the minimal pull-request gate).
#[test]
fn the_documented_workflows_are_the_linted_examples() {
    let yaml_blocks = |doc: &str| -> Vec<String> {
        let text = std::fs::read_to_string(Path::new(ROOT).join(doc)).expect("doc");
        text.split("```yaml\n")
            .skip(1)
            .filter_map(|b| b.split_once("```").map(|(code, _)| code.to_string()))
            .collect()
    };
    let book = yaml_blocks("docs/src/ci.md");
    let readme = yaml_blocks("README.md");
    for (doc, blocks, example) in [
        ("docs/src/ci.md", &book, "pull-request.yml"),
        ("docs/src/ci.md", &book, "pre-deploy.yml"),
        ("docs/src/ci.md", &book, "image-scan.yml"),
        ("README.md", &readme, "minimal.yml"),
    ] {
        let text =
            std::fs::read_to_string(Path::new(ROOT).join("examples/workflows").join(example))
                .expect("example");
        assert!(
            blocks.contains(&text),
            "{doc} has no copy of examples/workflows/{example}"
        );
    }
}

// ---- the README's pull-request workflow, end to end (issue 30) ----

/// The `with:` inputs of the Action step of examples/workflows/pull-request.yml (the README's
/// copy), as the INPUT_* variables action.yml passes to run.sh.
fn readme_inputs() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("examples/workflows/pull-request.yml"))
        .expect("workflow");
    let workflow: serde_json::Value = serde_saphyr::from_str(&text).expect("workflow is YAML");
    let steps = workflow["jobs"]["pin-bump"]["steps"]
        .as_array()
        .expect("steps");
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.contains("/.github/actions/pinprobe@"))
        })
        .expect("the pinprobe step");
    let with = step["with"].as_object().expect("with");
    with.iter()
        .map(|(k, v)| {
            let value = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (
                format!("INPUT_{}", k.to_uppercase().replace('-', "_")),
                value,
            )
        })
        .collect()
}

/// Commit the fixture's FlashAttention pin at `pin` (and a README line), returning the commit.
fn bump(gh: &Github, pin: &str, message: &str) -> String {
    let fixture = gh.dir.join("fixture");
    let cmake = fixture.join("cmake/external_projects/vllm_flash_attn.cmake");
    let text = std::fs::read_to_string(&cmake).expect("cmake");
    let re = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    std::fs::write(
        &cmake,
        re.replace(&text, format!("GIT_TAG {pin}").as_str())
            .as_bytes(),
    )
    .expect("write");
    let readme = fixture.join("README.md");
    let mut notes = std::fs::read_to_string(&readme).unwrap_or_default();
    notes.push_str(&format!("\n{message}\n"));
    std::fs::write(&readme, notes).expect("write");
    git(
        &fixture,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qam",
            message,
        ],
    );
    git(&fixture, &["rev-parse", "HEAD"])
}

#[test]
fn the_readme_pull_request_workflow_on_four_bumps_and_no_change() {
    const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    const UNDECIDED: &str = "1111111111111111111111111111111111111111";
    let gh = setup();
    // setup(): BASE pins the fix (clean), HEAD the affected pin.
    let clean = gh.base.clone();
    let affected = gh.head.clone();
    let undecided = bump(&gh, UNDECIDED, "pin a commit nothing can decide offline");
    let over_undecided = bump(&gh, AFFECTED, "bump to vLLM 0.30.0's pin");
    let fixed = bump(&gh, FIX, "bump to the fix");
    let no_change = bump(&gh, FIX, "a README edit: no pin moves");
    // A clean bump: from the fix to vLLM 0.26.0's pin (before the bug). Offline and without a
    // clone only the fix is decided, so the new pin is undecided: listed, and passing under the
    // README's `fail-on-unknown: never`.
    let older = bump(
        &gh,
        "caaa4eb59845388a20b1f435ecaafb4bd9517ad8",
        "pin vLLM 0.26.0's FA",
    );
    let inputs = readme_inputs();
    assert!(
        inputs.contains(&("INPUT_FAIL_ON".into(), "high".into()))
            && inputs.contains(&("INPUT_FAIL_ON_UNKNOWN".into(), "never".into())),
        "{inputs:?}"
    );
    // (what, BASE, HEAD, exit code, introduced, fixed)
    let cases = [
        (
            "a clean bump (the fix -> 0.26.0's pin)",
            &no_change,
            &older,
            0,
            "0",
            "0",
        ),
        ("clean -> affected", &clean, &affected, 1, "1", "0"),
        (
            "undecided -> affected",
            &undecided,
            &over_undecided,
            1,
            "1",
            "0",
        ),
        ("affected -> fixed", &over_undecided, &fixed, 0, "0", "1"),
        ("no pin change", &fixed, &no_change, 0, "0", "0"),
    ];
    for (what, base, head, code, introduced, fixed_count) in cases {
        let event = serde_json::json!({
            "action": "synchronize",
            "number": 7,
            "pull_request": {
                "base": {"sha": base, "ref": "main"},
                "head": {"sha": head, "ref": "bump-fa"}
            }
        });
        let mut env: Vec<(&str, &str)> = inputs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.push(("PINPROBE_OFFLINE", "1"));
        env.push(("GITHUB_REPOSITORY", "example/pinprobe"));
        env.push(("GITHUB_SERVER_URL", "https://github.com"));
        let step = run_step(&gh, &env, Some(event));
        assert_eq!(step.code, code, "{what}: {}", step.stdout);
        let out = |k: &str| step.outputs.get(k).cloned().unwrap_or_default();
        assert_eq!(out("exit-code"), code.to_string(), "{what}");
        assert_eq!(out("introduced"), introduced, "{what}: {:?}", step.outputs);
        assert_eq!(out("fixed"), fixed_count, "{what}: {:?}", step.outputs);
        // The job summary's headline says what the exit code says.
        let word = match code {
            1 => "FAILS (exit 1)",
            3 => "UNDECIDED (exit 3)",
            _ => "PASSES (exit 0)",
        };
        assert!(step.summary.contains(word), "{what}: {}", step.summary);
        assert_eq!(
            step.summary.contains("The change moves no pin."),
            what == "no pin change",
            "{what}: {}",
            step.summary
        );
        if what == "undecided -> affected" {
            assert!(
                step.summary
                    .contains("introduces (affected; base undecided) `PINPROBE-2026-0001`"),
                "{what}: {}",
                step.summary
            );
            assert!(
                step.stdout.contains("::error title=pinprobe::"),
                "{}",
                step.stdout
            );
        }
        // The SARIF holds affected findings only (sarif-unknown defaults to false), names the
        // action's repository, and GitHub's rules accept it.
        let sarif_path = PathBuf::from(out("sarif"));
        let sarif: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&sarif_path).expect("sarif"))
                .expect("sarif json");
        let run = &sarif["runs"][0];
        assert_eq!(
            run["tool"]["driver"]["informationUri"],
            "https://github.com/example/pinprobe"
        );
        let results = run["results"].as_array().expect("results");
        assert!(
            results
                .iter()
                .all(|r| r["properties"]["status"] == "affected"),
            "{what}: {results:#?}"
        );
        assert_eq!(
            results.iter().any(|r| r["ruleId"] == "PINPROBE-2026-0001"),
            code == 1,
            "{what}"
        );
        common::sarif::assert_github_accepts(&sarif_path, what);
    }
    // sarif-unknown: true puts the undecided findings in as notes.
    let event = pull_request(&gh);
    let mut env: Vec<(&str, &str)> = inputs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    env.extend([("PINPROBE_OFFLINE", "1"), ("INPUT_SARIF_UNKNOWN", "true")]);
    let step = run_step(&gh, &env, Some(event));
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(step.outputs.get("sarif").expect("sarif")).expect("sarif"),
    )
    .expect("json");
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .any(|r| r["properties"]["status"] == "unknown" && r["level"] == "note")
    );
}
