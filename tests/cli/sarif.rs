//! SARIF output checked against the SARIF 2.1.0 JSON schema, for `scan` and `diff`.
//!
//! The schema is third-party data and is not committed: it ships inside the `serde-sarif`
//! crate (a dev-dependency, fetched by cargo like any other), whose typed structs are generated
//! from it. Two checks:
//! 1. deserialising our output into serde-sarif's typed `Sarif` (always runs);
//! 2. validating it with the `jsonschema` crate against the schema file from serde-sarif's
//!    sources in cargo's registry (runs wherever cargo unpacked the crate there, as on CI; a
//!    vendored build without it skips through `common::require` and still runs check 1).
//!
//! Plus what GitHub code scanning needs beyond the schema: `fullDescription`, `help` and
//! `security-severity` on every rule, `informationUri`, relative `artifactLocation.uri` with
//! `region.startLine`, distinct `partialFingerprints`, a `level`; and Microsoft's SARIF
//! Multitool with GitHub's rules (`common::sarif`) over every SARIF these tests produce: no
//! error, no warning.

use crate::common;

use assert_cmd::cargo::cargo_bin_cmd;
use common::*;
use std::path::{Path, PathBuf};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

fn pinprobe(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = cargo_bin_cmd!("pinprobe")
        .args(args)
        .current_dir(dir)
        .env_remove("VLLM_FLASH_ATTN_SRC_DIR")
        .env("PINPROBE_OFFLINE", "1")
        .env("PINPROBE_INFORMATION_URI", common::sarif::INFORMATION_URI)
        .output()
        .expect("runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "SARIF is JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// serde-sarif's `src/schema.json` in cargo's registry sources.
fn schema_path() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = home.join("registry").join("src");
    let mut found: Vec<PathBuf> = std::fs::read_dir(src)
        .ok()?
        .filter_map(Result::ok)
        .flat_map(|index| std::fs::read_dir(index.path()).into_iter().flatten())
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("serde-sarif-0.8")
        })
        .map(|e| e.path().join("src").join("schema.json"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

fn check(doc: &serde_json::Value, label: &str) {
    // 1. The typed model generated from the schema.
    let typed: serde_sarif::sarif::Sarif =
        serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(typed.runs.len(), 1, "{label}");

    // 2. The schema itself.
    let path = schema_path();
    if common::require::require(
        path.is_some(),
        "serde-sarif's schema.json in cargo's registry sources (a vendored build lacks it; the typed check ran)",
    ) && let Some(path) = path
    {
        let text = std::fs::read_to_string(&path).expect("schema reads");
        // The published schema's `language` patterns have a stray `]` that ECMAScript
        // reads as a literal and Rust's regex engines reject; escape it (pinprobe never
        // writes `language`, so nothing else changes).
        let text = text.replace("{2}]?$", "{2}\\\\]?$");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{label}: {errors:#?}");
        // The validator does reject what the schema forbids.
        let mut bad = doc.clone();
        bad["runs"][0]["results"][0]["level"] = serde_json::json!("severe");
        assert!(
            !validator.is_valid(&bad),
            "{label}: an invalid level passes"
        );
        eprintln!("{label}: valid against {}", path.display());
    }

    // 3. GitHub code scanning's needs.
    let run = &doc["runs"][0];
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(
        run["tool"]["driver"]["informationUri"],
        common::sarif::INFORMATION_URI
    );
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    for rule in rules {
        for key in ["help", "fullDescription", "shortDescription"] {
            assert!(
                rule[key]["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{label}: rule without {key}: {rule:#}"
            );
        }
        let score: f64 = rule["properties"]["security-severity"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{label}: rule without security-severity: {rule:#}"));
        let want = match rule["properties"]["severity"].as_str() {
            Some("critical") => 9.0..=10.0,
            Some("high") => 7.0..=8.9,
            Some("medium") => 4.0..=6.9,
            Some("low") => 0.1..=3.9,
            other => panic!("{label}: severity {other:?}"),
        };
        assert!(want.contains(&score), "{label}: {rule:#}");
    }
    let mut prints: Vec<&str> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            r["partialFingerprints"]["pinprobe/v1"]
                .as_str()
                .expect("fingerprint")
        })
        .collect();
    let n = prints.len();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), n, "{label}: results share a fingerprint");

    // 4. GitHub's rules, through the SARIF Multitool.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(format!("{label}.sarif"));
    std::fs::write(&file, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
    common::sarif::assert_github_accepts(&file, label);
    let results = run["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{label}");
    for r in results {
        let id = r["ruleId"].as_str().expect("ruleId");
        assert!(rules.iter().any(|x| x["id"] == id), "{label}: {id}");
        assert!(
            ["error", "warning", "note"].contains(&r["level"].as_str().expect("level")),
            "{label}"
        );
        assert!(r["partialFingerprints"]["pinprobe/v1"].is_string());
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().expect("uri");
        assert!(
            !uri.starts_with('/') && !uri.contains("://"),
            "relative: {uri}"
        );
        assert!(loc["region"]["startLine"].as_u64().is_some_and(|l| l >= 1));
    }
}

#[test]
fn scan_sarif_is_valid_sarif_2_1_0() {
    let doc = pinprobe(Path::new(DEMO), &["scan", ".", "--format", "sarif"]);
    check(&doc, "scan");
    let r1 = doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == "PINPROBE-2026-0001")
        .expect("R1 result");
    let loc = &r1["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "cmake/external_projects/vllm_flash_attn.cmake"
    );
    let text = std::fs::read_to_string(
        Path::new(DEMO).join("cmake/external_projects/vllm_flash_attn.cmake"),
    )
    .expect("cmake");
    let line = loc["region"]["startLine"].as_u64().expect("line") as usize;
    assert!(
        text.lines()
            .nth(line - 1)
            .is_some_and(|l| l.contains("GIT_TAG")),
        "points at the GIT_TAG line"
    );
    // A folder inside a repository (the demo tree inside pinprobe's) is no repository root:
    // no provenance that would map another tree's root to it.
    assert!(
        doc["runs"][0]["versionControlProvenance"].is_null(),
        "{:#}",
        doc["runs"][0]["versionControlProvenance"]
    );
    // Stable: the same input gives the same fingerprints.
    let again = pinprobe(Path::new(DEMO), &["scan", ".", "--format", "sarif"]);
    assert_eq!(doc["runs"][0]["results"], again["runs"][0]["results"]);
}

#[test]
fn diff_sarif_is_valid_sarif_2_1_0() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("vllm");
    init(&repo);
    // The fix commit, then the affected pin vLLM 0.30.0 shipped (both decided by known pins).
    vllm_tree(&repo, FA_REPO, "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46");
    let base = commit(&repo, "base");
    vllm_tree(
        &repo,
        "https://github.com/someone/flash-attention.git",
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    let head = commit(&repo, "head");
    let doc = pinprobe(&repo, &["diff", &base, &head, "--format", "sarif"]);
    check(&doc, "diff");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "PINPROBE-2026-0001"
                && r["properties"]["change"] == "introduced")
    );
    assert!(results.iter().any(|r| r["ruleId"] == "hygiene/fork-pin"));
}

/// A git work tree with an `origin` that carries a token, FlashAttention at the known-affected
/// pin and two CUTLASS declarations pinned by tag (two pin-hygiene findings of one rule, one
/// component and one file).
fn hygiene_tree(root: &Path) -> PathBuf {
    let repo = root.join("vllm");
    init(&repo);
    vllm_tree(&repo, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    let mut top = std::fs::read_to_string(repo.join("CMakeLists.txt")).expect("read");
    top.push_str(
        "include(FetchContent)\n\
         FetchContent_Declare(cutlass GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git GIT_TAG v4.2.1)\n\
         FetchContent_MakeAvailable(cutlass)\n\
         FetchContent_Declare(cutlass_b GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git GIT_TAG v4.2.0)\n\
         FetchContent_MakeAvailable(cutlass_b)\n",
    );
    write(&repo, "CMakeLists.txt", &top);
    commit(&repo, "pins");
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://x-access-token:secret-token@github.com/example/vllm.git",
        ],
    );
    repo
}

#[test]
fn hygiene_several_targets_and_undecided_findings_are_accepted_and_kept_apart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = hygiene_tree(tmp.path());
    let tree = repo.to_str().expect("utf-8");

    // One target: affected and hygiene results, no undecided ones unless asked for.
    let doc = pinprobe(&repo, &["scan", tree, "--format", "sarif"]);
    check(&doc, "hygiene");
    let run = &doc["runs"][0];
    let results = run["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .all(|r| r["properties"]["status"] == "affected"),
        "{results:#?}"
    );
    let hygiene: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "hygiene/movable-ref")
        .collect();
    assert_eq!(hygiene.len(), 2, "{results:#?}");
    assert!(hygiene.iter().all(|r| {
        r["message"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("[pin-hygiene]"))
    }));
    // Where the tree came from, without the token.
    let provenance = &run["versionControlProvenance"][0];
    assert_eq!(
        provenance["repositoryUri"],
        "https://github.com/example/vllm"
    );
    assert_eq!(provenance["revisionId"], git(&repo, &["rev-parse", "HEAD"]));
    assert!(
        !serde_json::to_string(&doc)
            .expect("json")
            .contains("secret-token")
    );
    // The same input, the same fingerprints.
    let again = pinprobe(&repo, &["scan", tree, "--format", "sarif"]);
    assert_eq!(
        results,
        again["runs"][0]["results"].as_array().expect("results")
    );

    // With --sarif-unknown the undecided findings come as notes.
    let doc = pinprobe(
        &repo,
        &["scan", tree, "--format", "sarif", "--sarif-unknown"],
    );
    check(&doc, "hygiene-unknown");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .any(|r| r["properties"]["status"] == "unknown" && r["level"] == "note")
    );

    // Two targets with the same findings: distinct fingerprints per target.
    let doc = pinprobe(&repo, &["scan", tree, DEMO, "--format", "sarif"]);
    check(&doc, "two-targets");
    let r1: Vec<&serde_json::Value> = doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["ruleId"] == "PINPROBE-2026-0001")
        .collect();
    assert_eq!(r1.len(), 2, "{r1:#?}");
    assert_ne!(r1[0]["partialFingerprints"], r1[1]["partialFingerprints"]);
}
