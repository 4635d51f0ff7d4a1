//! Verdicts the release ledger records from a release's wheel (`decided_by: release-wheel
//! signature`, tools/ledger/build.py), as a source tree scan uses them: through a synthetic
//! ledger (`--rules DIR` with its own `ledger.yaml`), a tree that pins exactly the release's
//! commits and declares byte-identical patch files is decided by the recorded verdict; a moved
//! pin, an edited, added or missing patch, or a ledger that does not record the patches leaves
//! the verdict unapplied (`unknown`, with a warning saying why); a recorded `affected` stays
//! `affected`. `rules lint` checks a wheel verdict's provenance.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

const FA4: &str = "PINPROBE-2026-0001";
const FA3_IMPORT: &str = "PINPROBE-2026-0004";
/// The synthetic release's FlashAttention pin and a second component's.
const PIN: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const OTHER_PIN: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f001122334";
const MOVED: &str = "b1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const VERSION: &str = "0.99.0";
const COMMIT: &str = "abcdef123";
const PATCH: &str = "cmake/external_projects/patches/fix.patch";
const PATCH_TEXT: &str = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// The `patches:` line of a ledger pin: `None` leaves the field out.
fn patches_yaml(patches: Option<&[(&str, &str)]>) -> String {
    match patches {
        None => String::new(),
        Some([]) => "    patches: []\n".into(),
        Some(list) => {
            let mut out = "    patches:\n".to_string();
            for (file, text) in list {
                out.push_str(&format!(
                    "    - file: {file}\n      sha256: \"{}\"\n",
                    sha256_hex(text.as_bytes())
                ));
            }
            out
        }
    }
}

/// A ledger with one release whose flash-attention pin carries recorded wheel verdicts.
fn ledger(verdicts: &[(&str, &str)], patches: Option<&[(&str, &str)]>) -> String {
    let mut v = String::new();
    for (rule, status) in verdicts {
        v.push_str(&format!(
            r#"    - rule: {rule}
      status: {status}
      decided_by: release-wheel signature
      wheel: vllm-{VERSION}-cp38-abi3-manylinux_2_28_x86_64.whl
      wheel_sha256: "{wheel}"
      pinprobe: pinprobe 0.1.0
      checked_by: Python ast (test)
      commits:
      - "{PIN}"
"#,
            wheel = sha256_hex(b"the wheel")
        ));
    }
    let verdicts = if v.is_empty() {
        String::new()
    } else {
        format!("    verdicts:\n{v}")
    };
    format!(
        r#"schema: 1
generated_by: tests/artifacts/ledger_wheel.rs
source: synthetic
extracted_with: hand
releases:
- version: "{VERSION}"
  vllm_commit: "{COMMIT}"
  pins:
  - component: flashmla
    declared_name: flashmla
    command: FetchContent_Declare
    repo: https://github.com/vllm-project/FlashMLA
    reference: "{OTHER_PIN}"
    commit: "{OTHER_PIN}"
    file: cmake/external_projects/flashmla.cmake
    line: 20
    configurations:
    - cuda
    patches: []
  - component: flash-attention
    declared_name: vllm-flash-attn
    command: FetchContent_Declare
    repo: {FA_REPO}
    reference: "{PIN}"
    commit: "{PIN}"
    file: cmake/external_projects/vllm_flash_attn.cmake
    line: 22
    configurations:
    - cuda
{patches}{verdicts}"#,
        patches = patches_yaml(patches)
    )
}

/// A release tree: the FA pin at `tag`, optionally a PATCH_COMMAND applying `patch` with `text`.
fn tree(root: &Path, tag: &str, patch: Option<&str>, commit: &str) {
    vllm_tree(root, FA_REPO, tag);
    if let Some(text) = patch {
        write(
            root,
            "cmake/external_projects/vllm_flash_attn.cmake",
            &fa_cmake(FA_REPO, tag, Some("fix.patch")),
        );
        write(root, PATCH, text);
    }
    write(
        root,
        "vllm/_version.py",
        &format!("__version__ = version = '{VERSION}'\n__commit_id__ = commit_id = 'g{commit}'\n"),
    );
}

fn rules_dir(root: &Path, ledger_text: &str) -> std::path::PathBuf {
    let dir = root.join("rules");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ledger.yaml"), ledger_text).unwrap();
    dir
}

fn scan(tree: &Path, rules: &Path) -> Run {
    let run = pinprobe(&[
        "scan",
        tree.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_ne!(run.code, 2, "{}", run.stderr);
    run
}

fn finding<'a>(report: &'a Value, rule: &str) -> &'a Value {
    report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule && f["component"] == "flash-attention")
        .unwrap_or_else(|| panic!("no {rule} finding: {report:#}"))
}

fn warnings(report: &Value) -> String {
    report["targets"][0]["warnings"].to_string()
}

#[test]
fn identical_pins_and_patches_are_decided_by_the_recorded_wheel_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let patches: &[(&str, &str)] = &[(PATCH, PATCH_TEXT)];
    let rules = rules_dir(
        tmp.path(),
        &ledger(
            &[(FA4, "not_affected"), (FA3_IMPORT, "not_affected")],
            Some(patches),
        ),
    );
    let root = tmp.path().join("tree");
    tree(&root, PIN, Some(PATCH_TEXT), COMMIT);
    let run = scan(&root, &rules);
    let report = run.json();
    for rule in [FA4, FA3_IMPORT] {
        let f = finding(&report, rule);
        assert_eq!(f["status"], "not_affected", "{rule}: {report:#}");
        assert_eq!(f["decided_by"], "recorded", "{rule}: {f:#}");
        let text = f["evidence"].to_string();
        assert!(
            text.contains("release-wheel")
                || text.contains("signatures on the release's wheel vllm-0.99.0"),
            "{text}"
        );
        // The pin, shortened to 12, names what was decided.
        assert!(text.contains(&format!("pin {}", &PIN[..12])), "{text}");
        assert!(text.contains(&sha256_hex(b"the wheel")[..12]), "{text}");
    }
    // Without patches on either side: the same.
    let rules = rules_dir(
        &tmp.path().join("b"),
        &ledger(&[(FA3_IMPORT, "not_affected")], Some(&[])),
    );
    let root = tmp.path().join("plain");
    tree(&root, PIN, None, COMMIT);
    let report = scan(&root, &rules).json();
    assert_eq!(finding(&report, FA3_IMPORT)["status"], "not_affected");
    assert_eq!(finding(&report, FA3_IMPORT)["decided_by"], "recorded");
}

#[test]
fn a_moved_pin_or_other_patches_leave_the_verdict_unapplied() {
    let tmp = tempfile::tempdir().unwrap();
    let patches: &[(&str, &str)] = &[(PATCH, PATCH_TEXT)];
    let rules = rules_dir(
        tmp.path(),
        &ledger(&[(FA3_IMPORT, "not_affected")], Some(patches)),
    );
    let cases: [(&str, &str, Option<&str>, &str); 4] = [
        (
            "moved pin",
            MOVED,
            Some(PATCH_TEXT),
            "changed after the release",
        ),
        (
            "edited patch",
            PIN,
            Some("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+other\n"),
            "are not the release's",
        ),
        ("patch dropped", PIN, None, "are not the release's"),
        ("identical", PIN, Some(PATCH_TEXT), ""),
    ];
    for (name, tag, patch, why) in cases {
        let root = tmp.path().join(name.replace(' ', "-"));
        tree(&root, tag, patch, COMMIT);
        let run = scan(&root, &rules);
        let report = run.json();
        let f = finding(&report, FA3_IMPORT);
        if why.is_empty() {
            assert_eq!(f["status"], "not_affected", "{name}: {report:#}");
            assert!(!warnings(&report).contains("release ledger"), "{name}");
            continue;
        }
        assert_eq!(f["status"], "unknown", "{name}: {report:#}");
        assert_eq!(run.code, 3, "{name}");
        assert!(
            !f["evidence"].to_string().contains("release ledger:"),
            "{name}: the recorded verdict must not be listed: {f:#}"
        );
        let w = warnings(&report);
        assert!(w.contains(why), "{name}: {w}");
        if name == "moved pin" {
            assert!(w.contains(&MOVED[..12]) && w.contains(&PIN[..12]), "{w}");
        }
    }
    // The FA4 rule's version range follows the patches too: with other patches the tree's
    // version says nothing of what it builds.
    let root = tmp.path().join("edited-fa4");
    tree(&root, PIN, Some("+other\n"), COMMIT);
    let report = scan(&root, &rules).json();
    assert_eq!(finding(&report, FA4)["status"], "unknown", "{report:#}");
    // A ledger that does not record the patches: the verdict does not apply to a tree.
    let rules = rules_dir(
        &tmp.path().join("nopatches"),
        &ledger(&[(FA3_IMPORT, "not_affected")], None),
    );
    let root = tmp.path().join("unrecorded");
    tree(&root, PIN, None, COMMIT);
    let report = scan(&root, &rules).json();
    assert_eq!(finding(&report, FA3_IMPORT)["status"], "unknown");
    assert!(
        warnings(&report).contains("does not record the patches"),
        "{report:#}"
    );
}

#[test]
fn a_recorded_affected_stays_affected() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = rules_dir(
        tmp.path(),
        &ledger(&[(FA4, "affected"), (FA3_IMPORT, "affected")], Some(&[])),
    );
    let root = tmp.path().join("tree");
    tree(&root, PIN, None, COMMIT);
    let run = scan(&root, &rules);
    let report = run.json();
    for rule in [FA4, FA3_IMPORT] {
        // 0.99.0 is outside the FA4 rule's version range (weaker, says not affected): the
        // recorded `affected` wins.
        assert_eq!(
            finding(&report, rule)["status"],
            "affected",
            "{rule}: {report:#}"
        );
        assert_eq!(finding(&report, rule)["decided_by"], "recorded");
    }
    assert_eq!(run.code, 1);
}

#[test]
fn the_release_commit_must_match_to_use_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = rules_dir(
        tmp.path(),
        &ledger(&[(FA3_IMPORT, "not_affected")], Some(&[])),
    );
    // (commit in the tree's _version.py, whether the ledger applies)
    for (commit, applies) in [
        ("abcdef1", true),    // seven characters, a prefix of the release's
        ("abcdef9", false),   // seven characters, another build
        ("abcdef12", true),   // a longer prefix
        ("abcde9", true),     // six characters: too short to compare, not a contradiction
        ("9bcdef123", false), // another build
    ] {
        let root = tmp.path().join(commit);
        tree(&root, PIN, None, commit);
        let report = scan(&root, &rules).json();
        let status = &finding(&report, FA3_IMPORT)["status"];
        if applies {
            assert_eq!(status, "not_affected", "{commit}: {report:#}");
        } else {
            assert_eq!(status, "unknown", "{commit}: {report:#}");
            assert!(warnings(&report).contains("another build"), "{commit}");
        }
    }
}

#[test]
fn lint_checks_a_wheel_verdicts_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let good = ledger(&[(FA4, "not_affected")], Some(&[]));
    let dir = rules_dir(&tmp.path().join("good"), &good);
    let run = pinprobe(&["rules", "lint", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let bad = [
        (
            "no wheel digest",
            good.replace("      wheel_sha256:", "      note:"),
            "wheel_sha256",
        ),
        (
            "another commit first",
            good.replace(
                &format!("      commits:\n      - \"{PIN}\""),
                &format!("      commits:\n      - \"{MOVED}\""),
            ),
            "does not name the pinned commit first",
        ),
        (
            "an unknown decider",
            good.replace("decided_by: release-wheel signature", "decided_by: a guess"),
            "decided_by `a guess`",
        ),
        (
            "a vLLM commit that is not hex",
            good.replace(
                &format!("vllm_commit: \"{COMMIT}\""),
                "vllm_commit: \"zzzzzzzzz\"",
            ),
            "is not a SHA",
        ),
        (
            "undecided status",
            good.replace("status: not_affected", "status: unknown"),
            "(affected or not_affected)",
        ),
    ];
    for (name, text, message) in bad {
        assert_ne!(text, good, "{name}: the edit must change the ledger");
        let dir = rules_dir(&tmp.path().join(name.replace(' ', "-")), &text);
        let run = pinprobe(&["rules", "lint", dir.to_str().unwrap()]);
        assert_ne!(run.code, 0, "{name}: {}", run.stdout);
        assert!(run.all().contains(message), "{name}: {}", run.all());
    }
}
