//! The JSON Schemas of the report and the review (`schema/*.schema.json`), generated from the
//! Rust types: the checked-in files must be current, and real output must validate against
//! them. `PINPROBE_UPDATE_SCHEMA=1 cargo test --test cli schema::` rewrites the files.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

fn current(name: &str, generated: serde_json::Value) -> serde_json::Value {
    let path = Path::new(ROOT).join("schema").join(name);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&generated).expect("serialises")
    );
    if std::env::var("PINPROBE_UPDATE_SCHEMA").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &text).expect("write");
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (PINPROBE_UPDATE_SCHEMA=1 writes it)",
            path.display()
        )
    });
    assert_eq!(
        checked_in,
        text,
        "{} is out of date: PINPROBE_UPDATE_SCHEMA=1 cargo test --test cli schema::",
        path.display()
    );
    generated
}

fn validate(schema: &serde_json::Value, doc: &serde_json::Value, label: &str) {
    let validator = jsonschema::validator_for(schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{label}: {errors:#?}");
}

#[test]
fn the_report_schema_is_current_and_real_reports_validate() {
    let schema = current("report.schema.json", pinprobe::model::schema::report());
    let fixed = tempfile::tempdir().expect("tempdir");
    vllm_tree(
        fixed.path(),
        FA_REPO,
        "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46",
    );
    let run = pinprobe(&[
        "scan",
        DEMO,
        fixed.path().to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = run.json();
    validate(&schema, &doc, "scan");
    // The schema does constrain: an unknown status fails.
    let mut bad = doc.clone();
    bad["targets"][0]["findings"][0]["status"] = serde_json::json!("maybe");
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    assert!(!validator.is_valid(&bad));
    let mut bad = doc;
    bad["targets"][0]
        .as_object_mut()
        .expect("target")
        .remove("findings");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn the_review_schema_is_current_and_a_real_review_validates() {
    let schema = current("review.schema.json", pinprobe::model::schema::review());
    let tmp = tempfile::tempdir().expect("tempdir");
    let fixture = tmp.path().join("fixture");
    let out = Command::new("bash")
        .arg(Path::new(ROOT).join(".ci/fixture-bump.sh"))
        .arg(&fixture)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = run_in(&fixture, &["diff", "HEAD~1", "HEAD", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = run.json();
    validate(&schema, &doc, "diff");
    let mut bad = doc;
    bad["changes"][0]["change"] = serde_json::json!("worse");
    assert!(
        !jsonschema::validator_for(&schema)
            .expect("compiles")
            .is_valid(&bad)
    );
}
