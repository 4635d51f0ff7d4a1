//! Exchange formats: one scan writes JSON, SARIF, OpenVEX and CycloneDX; each is checked
//! against its specification.
//!
//! - CycloneDX 1.6: the official JSON schema (with the SPDX and JSF schemas it references), as
//!   shipped inside the `cyclonedx-python-lib` wheel, downloaded with pip at test time (nothing
//!   third-party is committed). Opt-in: `PINPROBE_SCHEMAS=1` (`.ci/run` sets it);
//!   `PINPROBE_SCHEMA_DIR` keeps the download between runs. Without it the schema check prints
//!   `skipped` and the structural checks still run.
//! - OpenVEX 0.2.0: no package ships its JSON schema, so the document is read into a strict
//!   typed model written from the specification (every struct `deny_unknown_fields`, enums for
//!   status and justification), plus the specification's rules a schema cannot say (an
//!   `affected` statement needs an `action_statement`; `not_affected` a justification or an
//!   impact statement); and, under `PINPROBE_SCHEMAS=1`, by an independent implementation,
//!   `vexipy` (pydantic models of the specification, installed with pip at test time):
//!   `vexipy.Document.model_validate_json` must accept it.
//! - SARIF: serde-sarif's typed model (tests/cli/sarif.rs validates against the schema).

use crate::common;

use common::*;
use serde::Deserialize;
use std::path::{Path, PathBuf};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");
const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
/// The cyclonedx-python-lib release whose wheel provides the schema files.
const CYCLONEDX_LIB: &str = "cyclonedx-python-lib==11.12.0";
/// An independent OpenVEX 0.2.0 implementation (pydantic models of the specification).
const VEXIPY: &str = "vexipy==0.3.0";

// ---- OpenVEX 0.2.0, from the specification (openvex/spec, OPENVEX-SPEC.md v0.2.0) ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VexDocument {
    #[serde(rename = "@context")]
    context: String,
    #[serde(rename = "@id")]
    id: String,
    author: String,
    role: Option<String>,
    timestamp: String,
    last_updated: Option<String>,
    version: u64,
    tooling: Option<String>,
    statements: Vec<VexStatement>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VexStatement {
    #[serde(rename = "@id")]
    id: Option<String>,
    version: Option<u64>,
    vulnerability: VexVulnerability,
    timestamp: Option<String>,
    last_updated: Option<String>,
    products: Vec<VexComponent>,
    status: VexStatus,
    supplier: Option<String>,
    status_notes: Option<String>,
    justification: Option<VexJustification>,
    impact_statement: Option<String>,
    action_statement: Option<String>,
    action_statement_timestamp: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VexVulnerability {
    #[serde(rename = "@id")]
    id: Option<String>,
    name: String,
    description: Option<String>,
    aliases: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VexComponent {
    #[serde(rename = "@id")]
    id: Option<String>,
    identifiers: Option<VexIdentifiers>,
    hashes: Option<std::collections::BTreeMap<String, String>>,
    subcomponents: Option<Vec<VexComponent>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VexIdentifiers {
    purl: Option<String>,
    cpe22: Option<String>,
    cpe23: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum VexStatus {
    NotAffected,
    Affected,
    Fixed,
    UnderInvestigation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum VexJustification {
    ComponentNotPresent,
    VulnerableCodeNotPresent,
    VulnerableCodeNotInExecutePath,
    VulnerableCodeCannotBeControlledByAdversary,
    InlineMitigationsAlreadyExist,
}

/// RFC 3339 `YYYY-MM-DDTHH:MM:SSZ` (what pinprobe writes; the spec asks for RFC 3339).
fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && [0..4, 5..7, 8..10, 11..13, 14..16, 17..19]
            .into_iter()
            .all(|r| b[r].iter().all(u8::is_ascii_digit))
}

/// The directory `vexipy` and its dependencies are installed into (kept with
/// `PINPROBE_SCHEMA_DIR`), or why not.
fn vexipy_dir() -> Result<PathBuf, String> {
    if std::env::var("PINPROBE_SCHEMAS").as_deref() != Ok("1") {
        return Err(format!(
            "set PINPROBE_SCHEMAS=1 to install {VEXIPY} with pip"
        ));
    }
    let dir = match std::env::var_os("PINPROBE_SCHEMA_DIR") {
        Some(d) => PathBuf::from(d).join("vexipy"),
        None => std::env::temp_dir().join(format!("pinprobe-vexipy-{}", std::process::id())),
    };
    if !dir.join("vexipy").is_dir() {
        let out = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--only-binary",
                ":all:",
                "--target",
            ])
            .arg(&dir)
            .arg(VEXIPY)
            .output()
            .map_err(|e| format!("python3 -m pip: {e}"))?;
        assert!(
            out.status.success(),
            "pip install {VEXIPY}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(dir)
}

/// `vexipy` reads the document (an OpenVEX implementation other than this test's model).
fn check_openvex_with_vexipy(text: &str) {
    let dir = match vexipy_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipped: OpenVEX check with vexipy: {why}");
            return;
        }
    };
    let file = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(file.path(), text).expect("write");
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys; sys.path.insert(0, sys.argv[1]); import vexipy; \
             d = vexipy.Document.model_validate_json(open(sys.argv[2]).read()); \
             print(len(d.statements))",
        )
        .arg(&dir)
        .arg(file.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "vexipy rejects the OpenVEX document: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_openvex(text: &str) -> VexDocument {
    check_openvex_with_vexipy(text);
    let doc: VexDocument = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(doc.context, "https://openvex.dev/ns/v0.2.0");
    assert!(doc.id.starts_with("https://"), "{}", doc.id);
    assert!(is_rfc3339_utc(&doc.timestamp), "{}", doc.timestamp);
    assert!(doc.version >= 1);
    let mut seen = Vec::new();
    for s in &doc.statements {
        assert!(!s.products.is_empty());
        for p in &s.products {
            let id = p.id.as_deref().expect("product @id");
            assert!(id.starts_with("pkg:"), "{id}");
            let key = (s.vulnerability.name.clone(), id.to_string());
            assert!(
                !seen.contains(&key),
                "one statement per rule x product: {key:?}"
            );
            seen.push(key);
        }
        match s.status {
            VexStatus::Affected => assert!(
                s.action_statement.as_deref().is_some_and(|a| !a.is_empty()),
                "affected needs an action_statement: {s:?}"
            ),
            VexStatus::NotAffected => assert!(
                s.justification.is_some() || s.impact_statement.is_some(),
                "not_affected needs a justification or an impact statement: {s:?}"
            ),
            _ => {}
        }
        if s.status != VexStatus::NotAffected {
            assert!(s.justification.is_none(), "{s:?}");
        }
    }
    doc
}

// ---- CycloneDX 1.6: the official schema from the cyclonedx-python-lib wheel ----

/// The three schema files, from the wheel pip downloads (or `None`, with the reason).
fn cyclonedx_schemas() -> Result<Vec<(String, serde_json::Value)>, String> {
    if std::env::var("PINPROBE_SCHEMAS").as_deref() != Ok("1") {
        return Err(format!(
            "set PINPROBE_SCHEMAS=1 to download {CYCLONEDX_LIB} with pip for the CycloneDX 1.6 schema"
        ));
    }
    let keep = std::env::var_os("PINPROBE_SCHEMA_DIR").map(PathBuf::from);
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    let wheel = |dir: &Path| -> Option<PathBuf> {
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("cyclonedx_python_lib-"))
            })
    };
    if wheel(&dir).is_none() {
        let out = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
            ])
            .arg(&dir)
            .arg(CYCLONEDX_LIB)
            .output()
            .map_err(|e| format!("python3 -m pip: {e}"))?;
        assert!(
            out.status.success(),
            "pip download {CYCLONEDX_LIB}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let path = wheel(&dir).expect("the wheel was downloaded");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&path).expect("wheel opens"))
        .expect("wheel is a zip");
    let mut schemas = Vec::new();
    for (member, id) in [
        (
            "cyclonedx/schema/_res/bom-1.6.SNAPSHOT.schema.json",
            "http://cyclonedx.org/schema/bom-1.6.schema.json",
        ),
        (
            "cyclonedx/schema/_res/spdx.SNAPSHOT.schema.json",
            "http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json",
        ),
        (
            "cyclonedx/schema/_res/jsf-0.82.SNAPSHOT.schema.json",
            "http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json",
        ),
    ] {
        let file = zip.by_name(member).expect("schema member");
        let value: serde_json::Value = serde_json::from_reader(file).expect("schema is JSON");
        schemas.push((id.to_string(), value));
    }
    Ok(schemas)
}

fn check_cyclonedx(doc: &serde_json::Value, label: &str) {
    assert_eq!(doc["bomFormat"], "CycloneDX");
    assert_eq!(doc["specVersion"], "1.6");
    match cyclonedx_schemas() {
        Ok(schemas) => {
            let mut registry = jsonschema::Registry::new();
            for (id, schema) in schemas.iter().skip(1) {
                registry = registry.add(id.as_str(), schema.clone()).expect("resource");
            }
            let registry = registry.prepare().expect("registry");
            let validator = jsonschema::options()
                .with_registry(&registry)
                .should_validate_formats(true)
                .build(&schemas[0].1)
                .expect("the CycloneDX 1.6 schema compiles");
            let errors: Vec<String> = validator
                .iter_errors(doc)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{label}: {errors:#?}");
            // The validator rejects what the schema forbids.
            let mut bad = doc.clone();
            bad["vulnerabilities"][0]["analysis"]["state"] = serde_json::json!("fine");
            assert!(!validator.is_valid(&bad), "{label}: a bad state passes");
            let mut bad = doc.clone();
            bad["serialNumber"] = serde_json::json!("not-a-urn");
            assert!(!validator.is_valid(&bad), "{label}: a bad serial passes");
            eprintln!("{label}: valid against the CycloneDX 1.6 schema ({CYCLONEDX_LIB})");
        }
        Err(why) => eprintln!("skipped: {label}: CycloneDX schema check: {why}"),
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn one_scan_writes_json_sarif_openvex_and_cyclonedx_that_follow_their_specifications() {
    let fixed = tempfile::tempdir().expect("tempdir");
    vllm_tree(fixed.path(), FA_REPO, FIX);
    let out = tempfile::tempdir().expect("tempdir");
    let f = |name: &str| out.path().join(name);
    let arg = |fmt: &str, name: &str| format!("{fmt}={}", f(name).display());
    let run = pinprobe(&[
        "scan",
        DEMO,
        fixed.path().to_str().expect("utf-8"),
        "--format",
        &arg("json", "r.json"),
        "--format",
        &arg("sarif", "r.sarif"),
        "--format",
        &arg("openvex", "r.vex.json"),
        "--format",
        &arg("cyclonedx", "r.cdx.json"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "", "every format went to its file");

    // JSON and SARIF as ever.
    let json: serde_json::Value = serde_json::from_str(&read(&f("r.json"))).expect("JSON");
    let digest = json["rules_digest"].as_str().expect("digest").to_string();
    // The database's date: its latest rule change, in every format.
    let date = json["rules_date"].as_str().expect("rules_date").to_string();
    assert_eq!(date.len(), 10, "{date}");
    let sarif_text = read(&f("r.sarif"));
    let sarif: serde_sarif::sarif::Sarif = serde_json::from_str(&sarif_text).expect("typed SARIF");
    assert_eq!(sarif.runs.len(), 1);
    let sarif_json: serde_json::Value = serde_json::from_str(&sarif_text).expect("JSON");
    assert_eq!(
        sarif_json["runs"][0]["properties"]["rulesDate"],
        date.as_str()
    );

    // OpenVEX: the affected pin and the fixed pin, each its own product.
    let vex = check_openvex(&read(&f("r.vex.json")));
    let fa4 = |pin: &str| {
        let purl = format!("pkg:github/vllm-project/flash-attention@{pin}");
        vex.statements
            .iter()
            .find(|s| {
                s.vulnerability.name == "PINPROBE-2026-0001"
                    && s.products.iter().any(|p| {
                        p.id.as_deref() == Some(&purl)
                            && p.identifiers.as_ref().and_then(|i| i.purl.as_deref()) == Some(&purl)
                    })
            })
            .unwrap_or_else(|| panic!("a statement for {purl}"))
    };
    assert_eq!(fa4(AFFECTED).status, VexStatus::Affected);
    let clean = fa4(FIX);
    assert_eq!(clean.status, VexStatus::NotAffected);
    assert_eq!(
        clean.justification,
        Some(VexJustification::VulnerableCodeNotPresent)
    );
    assert!(clean.impact_statement.is_some());
    // Undecided rules (no clone given) are under investigation, never not_affected.
    assert!(
        vex.statements
            .iter()
            .any(|s| s.status == VexStatus::UnderInvestigation)
    );
    assert!(
        vex.tooling
            .as_deref()
            .is_some_and(|t| t.contains(&digest) && t.contains(&date))
    );
    // Hygiene notes are not vulnerabilities.
    assert!(
        vex.statements
            .iter()
            .all(|s| s.vulnerability.name.starts_with("PINPROBE-"))
    );

    // CycloneDX: vLLM per target, every pinned project with its commit in the purl, findings
    // as vulnerabilities with an analysis state.
    let cdx: serde_json::Value = serde_json::from_str(&read(&f("r.cdx.json"))).expect("JSON");
    check_cyclonedx(&cdx, "scan");
    let components = cdx["components"].as_array().expect("components");
    assert_eq!(
        components
            .iter()
            .filter(|c| c["name"] == "vllm" && c["type"] == "application")
            .count(),
        2
    );
    for pin in [AFFECTED, FIX] {
        let purl = format!("pkg:github/vllm-project/flash-attention@{pin}");
        assert!(
            components.iter().any(|c| c["purl"] == purl.as_str()),
            "{purl}"
        );
    }
    let vulns = cdx["vulnerabilities"].as_array().expect("vulnerabilities");
    let state = |pin: &str| {
        let purl = format!("pkg:github/vllm-project/flash-attention@{pin}");
        vulns
            .iter()
            .find(|v| v["id"] == "PINPROBE-2026-0001" && v["affects"][0]["ref"] == purl.as_str())
            .map(|v| v["analysis"]["state"].clone())
    };
    assert_eq!(state(AFFECTED), Some(serde_json::json!("exploitable")));
    assert_eq!(state(FIX), Some(serde_json::json!("not_affected")));
    assert!(vulns.iter().any(|v| v["analysis"]["state"] == "in_triage"));
    assert_eq!(
        cdx["metadata"]["properties"][0]["value"].as_str(),
        Some(digest.as_str())
    );
    assert_eq!(
        cdx["metadata"]["properties"][1]["name"],
        "pinprobe:rules_date"
    );
    assert_eq!(cdx["metadata"]["properties"][1]["value"], date.as_str());
}

#[test]
fn exchange_documents_are_reproducible_with_source_date_epoch() {
    let run = |fmt: &str| {
        let r = Pinprobe::new(&["scan", DEMO, "--format", fmt])
            .env("SOURCE_DATE_EPOCH", "1790000000")
            .run();
        assert_eq!(r.code, 1, "{}", r.stderr);
        r.stdout
    };
    for fmt in ["openvex", "cyclonedx"] {
        let a = run(fmt);
        assert_eq!(a, run(fmt), "{fmt}");
        assert!(a.contains("\"2026-09-21T14:13:20Z\""), "{fmt}: {a}");
    }
}

fn vex_file(dir: &Path, status: &str, product: &str) -> PathBuf {
    let doc = serde_json::json!({
        "@context": "https://openvex.dev/ns/v0.2.0",
        "@id": "https://example.invalid/vex/1",
        "author": "a team",
        "timestamp": "2026-11-01T00:00:00Z",
        "version": 1,
        "statements": [{
            "vulnerability": {"name": "PINPROBE-2026-0001"},
            "products": [{"@id": product}],
            "status": status,
            "justification": "vulnerable_code_not_in_execute_path",
            "impact_statement": "SM100-only deployment",
            "action_statement": "none needed",
        }]
    });
    let path = dir.join(format!("{status}.vex.json"));
    std::fs::write(&path, doc.to_string()).expect("write");
    path
}

fn fa4_finding(run: &Run) -> serde_json::Value {
    run.json()["targets"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == "PINPROBE-2026-0001")
        .cloned()
        .expect("the FA4 finding")
}

#[test]
fn vex_not_affected_statements_suppress_like_the_ignore_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let purl = format!("pkg:github/vllm-project/flash-attention@{AFFECTED}");
    // Without --vex: affected, exit 1.
    let plain = pinprobe(&["scan", DEMO, "--format", "json"]);
    assert_eq!(plain.code, 1);
    assert!(fa4_finding(&plain).get("suppressed").is_none());
    // A not_affected statement for this pin: suppressed, status kept, exit no longer 1 (the
    // demo's other rules are undecided without a clone: 3).
    let vex = vex_file(dir.path(), "not_affected", &purl);
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--format",
        "json",
        "--vex",
        vex.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let f = fa4_finding(&run);
    assert_eq!(f["status"], "affected");
    let reason = f["suppressed"]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("vulnerable_code_not_in_execute_path") && reason.contains("SM100-only")
    );
    assert!(
        f["suppressed"]["entry"]
            .as_str()
            .is_some_and(|e| e.ends_with("#statements[0]"))
    );
    // The versionless purl means every version.
    let vex = vex_file(
        dir.path(),
        "not_affected",
        "pkg:github/vllm-project/flash-attention",
    );
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--format",
        "json",
        "--vex",
        vex.to_str().expect("utf-8"),
    ]);
    assert!(fa4_finding(&run).get("suppressed").is_some());
    // Another commit, or a status other than not_affected, suppresses nothing; the unused
    // statement is warned about.
    let vex = vex_file(
        dir.path(),
        "not_affected",
        &format!("pkg:github/vllm-project/flash-attention@{FIX}"),
    );
    let run = pinprobe(&[
        "scan",
        DEMO,
        "--format",
        "json",
        "--vex",
        vex.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 1);
    assert!(fa4_finding(&run).get("suppressed").is_none());
    assert!(run.stderr.contains("matches no finding"), "{}", run.stderr);
    let vex = vex_file(dir.path(), "affected", &purl);
    let run = pinprobe(&["scan", DEMO, "--vex", vex.to_str().expect("utf-8")]);
    assert_eq!(run.code, 1);
    // A document that is not OpenVEX, or missing: one line naming it, exit 2.
    let bad = dir.path().join("bad.vex.json");
    std::fs::write(
        &bad,
        r#"{"@context": "https://example.org", "statements": []}"#,
    )
    .expect("w");
    pinprobe(&["scan", DEMO, "--vex", bad.to_str().expect("utf-8")]).assert_error("bad.vex.json");
    std::fs::write(&bad, "{").expect("w");
    pinprobe(&["scan", DEMO, "--vex", bad.to_str().expect("utf-8")]).assert_error("bad.vex.json");
    pinprobe(&["scan", DEMO, "--vex", "/nonexistent/x.vex"]).assert_error("/nonexistent/x.vex");
}

#[test]
fn pinprobes_own_openvex_round_trips_as_suppressions() {
    // A tree pinned at the fix: its OpenVEX says not_affected; fed back to a scan of the same
    // tree, that statement suppresses the (not_affected) finding and matches, so no warning.
    let fixed = tempfile::tempdir().expect("tempdir");
    vllm_tree(fixed.path(), FA_REPO, FIX);
    let t = fixed.path().to_str().expect("utf-8");
    let doc = pinprobe(&["scan", t, "--format", "openvex"]);
    let vex = fixed.path().join("own.vex.json");
    std::fs::write(&vex, &doc.stdout).expect("write");
    let run = pinprobe(&[
        "scan",
        t,
        "--format",
        "json",
        "--vex",
        vex.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, doc.code, "{}", run.stderr);
    assert!(!run.stderr.contains("matches no finding"), "{}", run.stderr);
    assert!(fa4_finding(&run).get("suppressed").is_some());
}

// ---- every target kind: real-shaped scans, both documents checked, every purl parsed ----

/// A package URL, parsed back by the `packageurl` crate (the purl specification's parser):
/// it must round-trip to the same text, carry no description words as a version, and, for a
/// repository on GitHub, name owner and repository.
fn parsed_purl(purl: &str) -> packageurl::PackageUrl<'static> {
    let parsed: packageurl::PackageUrl<'static> = purl
        .parse()
        .unwrap_or_else(|e| panic!("{purl} is not a package URL: {e}"));
    assert_eq!(parsed.to_string(), purl, "{purl} does not round-trip");
    if let Some(v) = parsed.version() {
        assert!(
            !v.contains(' ') && !v.starts_with("vllm") && !v.starts_with("shipped"),
            "{purl}: `{v}` is not a version"
        );
    }
    if parsed.ty() == "github" {
        assert!(parsed.namespace().is_some(), "{purl}: no owner");
    }
    parsed
}

/// The component with `bom-ref` `r` (metadata's subject included).
fn cdx_component<'a>(cdx: &'a serde_json::Value, r: &str) -> &'a serde_json::Value {
    std::iter::once(&cdx["metadata"]["component"])
        .chain(cdx["components"].as_array().expect("components"))
        .find(|c| c["bom-ref"] == r)
        .unwrap_or_else(|| panic!("no component {r}"))
}

fn depends_on<'a>(cdx: &'a serde_json::Value, r: &str) -> Vec<&'a str> {
    cdx["dependencies"]
        .as_array()
        .expect("dependencies")
        .iter()
        .find(|d| d["ref"] == r)
        .unwrap_or_else(|| panic!("no dependency entry for {r}"))["dependsOn"]
        .as_array()
        .expect("dependsOn")
        .iter()
        .map(|v| v.as_str().expect("ref"))
        .collect()
}

/// Scan `target` into both exchange documents, check them against their specifications and
/// every purl with the parser; returns (CycloneDX, OpenVEX).
fn exchange_of(target: &str, label: &str) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().expect("tempdir");
    let cdx_path = out.path().join("r.cdx.json");
    let vex_path = out.path().join("r.vex.json");
    let run = pinprobe(&[
        "scan",
        target,
        "--format",
        &format!("cyclonedx={}", cdx_path.display()),
        "--format",
        &format!("openvex={}", vex_path.display()),
    ]);
    assert!(matches!(run.code, 0 | 1 | 3), "{label}: {}", run.stderr);
    let cdx: serde_json::Value = serde_json::from_str(&read(&cdx_path)).expect("CycloneDX JSON");
    check_cyclonedx(&cdx, label);
    let vex = read(&vex_path);
    let doc = check_openvex(&vex);
    // Every purl, in both documents, parses and round-trips; bom-refs are unique; every
    // dependency and `affects` reference names a component.
    let mut refs = vec![
        cdx["metadata"]["component"]["bom-ref"]
            .as_str()
            .expect("subject ref"),
    ];
    for c in cdx["components"].as_array().expect("components") {
        let r = c["bom-ref"].as_str().expect("bom-ref");
        assert!(!refs.contains(&r), "{label}: bom-ref {r} twice");
        refs.push(r);
    }
    for c in std::iter::once(&cdx["metadata"]["component"])
        .chain(cdx["components"].as_array().expect("components"))
    {
        if let Some(p) = c["purl"].as_str() {
            parsed_purl(p);
        }
    }
    for d in cdx["dependencies"].as_array().expect("dependencies") {
        for r in std::iter::once(&d["ref"]).chain(d["dependsOn"].as_array().expect("dependsOn")) {
            assert!(refs.contains(&r.as_str().expect("ref")), "{label}: {r}");
        }
    }
    for v in cdx["vulnerabilities"].as_array().expect("vulnerabilities") {
        for a in v["affects"].as_array().expect("affects") {
            assert!(
                refs.contains(&a["ref"].as_str().expect("ref")),
                "{label}: {a}"
            );
        }
    }
    for s in &doc.statements {
        for p in &s.products {
            if let Some(purl) = p.identifiers.as_ref().and_then(|i| i.purl.as_deref()) {
                parsed_purl(purl);
            }
        }
    }
    (cdx, vex)
}

#[test]
fn every_target_kind_gets_matchable_purls_and_a_dependency_graph() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let vllm_030 = || {
        artifact::with_dist_info(
            "vllm",
            "0.30.0",
            artifact::vllm_files("0.30.0", Sm90Call::Buggy),
        )
    };

    // A source tree pinning the affected commit, and one pinning a tag.
    let tree = root.join("tree");
    vllm_tree(&tree, FA_REPO, AFFECTED);
    let (cdx, vex) = exchange_of(tree.to_str().expect("utf-8"), "tree");
    let fa = format!("pkg:github/vllm-project/flash-attention@{AFFECTED}");
    assert_eq!(cdx["metadata"]["component"]["name"], "vllm");
    assert_eq!(depends_on(&cdx, "target-0"), [fa.as_str()]);
    assert_eq!(cdx_component(&cdx, &fa)["version"], AFFECTED);
    assert!(vex.contains(&fa), "{vex}");
    let tagged = root.join("tagged");
    vllm_tree(&tagged, FA_REPO, "v2.7.4");
    let (cdx, _) = exchange_of(tagged.to_str().expect("utf-8"), "tag pin");
    let fa_tag = "pkg:github/vllm-project/flash-attention@v2.7.4";
    assert_eq!(depends_on(&cdx, "target-0"), [fa_tag]);
    assert_eq!(cdx_component(&cdx, fa_tag)["version"], "v2.7.4");

    // A wheel: the target is vLLM itself, by its PyPI version; vLLM depends on its FA copy.
    let wheel = root.join("vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    artifact::write_wheel(&wheel, &vllm_030());
    let (cdx, vex) = exchange_of(wheel.to_str().expect("utf-8"), "wheel");
    let subject = &cdx["metadata"]["component"];
    assert_eq!(subject["purl"], "pkg:pypi/vllm@0.30.0");
    assert_eq!(subject["version"], "0.30.0");
    let copies = depends_on(&cdx, "target-0");
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = parsed_purl(copies[0]);
    // The release ledger names 0.30.0's pin, or (another build) the copy is a path in vLLM.
    match copy.ty() {
        "github" => assert_eq!(copies[0], fa),
        _ => assert_eq!(copies[0], "pkg:pypi/vllm@0.30.0#vllm/vllm_flash_attn/cute"),
    }
    assert!(vex.contains(copies[0]), "{vex}");

    // An installed environment: the environment holds vLLM, vLLM depends on its copy.
    let env = root.join("venv/lib/python3.12/site-packages");
    artifact::write_tree(&env, &vllm_030());
    let (cdx, _) = exchange_of(root.join("venv").to_str().expect("utf-8"), "environment");
    assert_eq!(cdx["metadata"]["component"]["type"], "application");
    assert_eq!(depends_on(&cdx, "target-0"), ["pkg:pypi/vllm@0.30.0"]);
    assert_eq!(depends_on(&cdx, "pkg:pypi/vllm@0.30.0"), copies);

    // An image (`docker save`, OCI form): a container holding vLLM.
    let image = root.join("image.tar");
    let install = image::vllm_install(
        image::SITE,
        "0.30.0",
        &block_info_new(),
        &fwd_sm90(Sm90Call::Buggy),
    );
    image::write_docker_save_oci(
        &image,
        &image::Image::new(vec![
            image::Layer::new("RUN pip install vllm", image::Compression::Gzip).files(install),
        ]),
    );
    let (cdx, _) = exchange_of(image.to_str().expect("utf-8"), "image");
    assert_eq!(cdx["metadata"]["component"]["type"], "container");
    if let Some(purl) = cdx["metadata"]["component"]["purl"].as_str() {
        let parsed = parsed_purl(purl);
        assert_eq!(parsed.ty(), "oci");
        assert!(
            parsed.version().is_some_and(|v| v.starts_with("sha256:")),
            "{purl}"
        );
    }
    assert_eq!(depends_on(&cdx, "target-0"), ["pkg:pypi/vllm@0.30.0"]);
    let in_image = depends_on(&cdx, "pkg:pypi/vllm@0.30.0");
    assert_eq!(in_image.len(), 1, "{in_image:?}");
    parsed_purl(in_image[0]);

    // All four in one run: a `scan` subject over the targets, each with its own graph.
    let out = tempfile::tempdir().expect("tempdir");
    let cdx_path = out.path().join("all.cdx.json");
    let run = pinprobe(&[
        "scan",
        tree.to_str().expect("utf-8"),
        wheel.to_str().expect("utf-8"),
        root.join("venv").to_str().expect("utf-8"),
        image.to_str().expect("utf-8"),
        "--format",
        &format!("cyclonedx={}", cdx_path.display()),
    ]);
    assert!(matches!(run.code, 1 | 3), "{}", run.stderr);
    let cdx: serde_json::Value = serde_json::from_str(&read(&cdx_path)).expect("JSON");
    check_cyclonedx(&cdx, "four targets");
    assert_eq!(cdx["metadata"]["component"]["bom-ref"], "scan");
    assert_eq!(
        depends_on(&cdx, "scan"),
        ["target-0", "target-1", "target-2", "target-3"]
    );
    assert_eq!(depends_on(&cdx, "target-0"), [fa.as_str()]);
}
