//! The scanner end to end through the library: vLLM-shaped trees pinning commits of a synthetic
//! FlashAttention history, decided through signatures (built-in rule) and ancestry (test rules).

use crate::common;

use common::*;
use pinprobe::model::{EvidenceKind, Finding, Status};
use pinprobe::resolve::Clones;
use pinprobe::scan::{self, Options};

const R1: &str = "PINPROBE-2026-0001";
const TEST_RULE: &str = "TEST-SPLITKV-ANCESTRY";

fn fixture() -> AncestryFixture {
    AncestryFixture::new(TEST_RULE)
}

fn tree_pinning(fx: &AncestryFixture, name: &str, sha: &str) -> std::path::PathBuf {
    let tree = fx.root.join(name);
    vllm_tree(&tree, FA_REPO, sha);
    tree
}

#[test]
fn signature_and_ancestry_decide_each_commit_of_the_history() {
    let fx = fixture();
    let h = &fx.history;
    // (commit, built-in signature status, test-rule ancestry status)
    let cases = [
        ("c0", &h.c0, Status::NotAffected, Status::NotAffected),
        (
            "introduce",
            &h.introduce,
            Status::Affected,
            Status::Affected,
        ),
        ("c2", &h.c2, Status::Affected, Status::Affected),
        ("fix", &h.fix, Status::NotAffected, Status::NotAffected),
        ("c4", &h.c4, Status::NotAffected, Status::NotAffected),
        ("side1", &h.side1, Status::Affected, Status::Affected),
        (
            "side_pick",
            &h.side_pick,
            Status::NotAffected,
            Status::NotAffected,
        ),
        // The revert brings the bug back: the signature sees it; ancestry (fix is an ancestor)
        // does not, which is why the signature outranks it.
        ("revert", &h.revert, Status::Affected, Status::NotAffected),
        (
            "literal_false",
            &h.literal_false,
            Status::NotAffected,
            Status::Affected,
        ),
    ];
    for (name, sha, sig_status, anc_status) in cases {
        let tree = tree_pinning(&fx, name, sha);
        let report = scan_tree(&tree, Some(&h.dir), Some(&fx.rules), None);
        assert_eq!(report.components.len(), 1, "{name}");
        assert_eq!(report.components[0].component, "flash-attention");
        assert_eq!(report.components[0].commit.as_deref(), Some(sha.as_str()));

        let r1 = finding(&report, R1);
        assert_eq!(r1.status, sig_status, "{name}: built-in rule: {r1:#?}");
        assert_eq!(r1.decided_by, Some(EvidenceKind::Signature), "{name}");
        assert_eq!(
            r1.evidence[0].kind,
            EvidenceKind::Signature,
            "strongest first"
        );

        let t = finding(&report, TEST_RULE);
        assert_eq!(t.status, anc_status, "{name}: ancestry rule: {t:#?}");
        assert_eq!(t.decided_by, Some(EvidenceKind::Ancestry), "{name}");
    }
}

#[test]
fn cherry_picked_fix_is_named_in_the_evidence() {
    let fx = fixture();
    let tree = tree_pinning(&fx, "pick", &fx.history.side_pick);
    let report = scan_tree(&tree, Some(&fx.history.dir), Some(&fx.rules), None);
    let t = finding(&report, TEST_RULE);
    assert_eq!(t.status, Status::NotAffected);
    let detail = &t
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Ancestry)
        .unwrap()
        .detail;
    assert!(detail.contains("patch-id"), "{detail}");
    assert!(detail.contains(&fx.history.side_pick[..12]), "{detail}");
}

#[test]
fn a_rule_listing_the_revert_as_reintroduction_sees_it_through_ancestry() {
    let fx = fixture();
    let h = &fx.history;
    write(
        &fx.rules,
        "test.yaml",
        &ancestry_rule(
            TEST_RULE,
            &[
                ("introduced", &h.introduce),
                ("fixed", &h.fix),
                ("introduced", &h.revert),
            ],
        ),
    );
    let tree = tree_pinning(&fx, "revert", &h.revert);
    let report = scan_tree(&tree, Some(&h.dir), Some(&fx.rules), None);
    assert_eq!(finding(&report, TEST_RULE).status, Status::Affected);
    let tree = tree_pinning(&fx, "c4", &h.c4);
    let report = scan_tree(&tree, Some(&h.dir), Some(&fx.rules), None);
    assert_eq!(finding(&report, TEST_RULE).status, Status::NotAffected);
}

#[test]
fn shallow_clone_answers_unknown_never_not_affected() {
    let fx = fixture();
    let h = &fx.history;
    let shallow = fx.root.join("shallow");
    let src = format!("file://{}", h.dir.display());
    git(
        &fx.root,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "main",
            &src,
            shallow.to_str().unwrap(),
        ],
    );
    // The tip (the revert) is present, its history is not.
    let tree = tree_pinning(&fx, "shallow-pin", &h.revert);
    let report = scan_tree(&tree, Some(&shallow), Some(&fx.rules), None);
    let t = finding(&report, TEST_RULE);
    assert_eq!(t.status, Status::Unknown, "{t:#?}");
    assert!(
        t.evidence.iter().any(|e| e.detail.contains("shallow")),
        "{t:#?}"
    );
    // The signature still reads the pinned tree, which a shallow clone has.
    assert_eq!(finding(&report, R1).status, Status::Affected);

    // A pin the shallow clone does not have at all.
    let tree = tree_pinning(&fx, "shallow-missing", &h.c2);
    let report = scan_tree(&tree, Some(&shallow), Some(&fx.rules), None);
    assert_eq!(finding(&report, TEST_RULE).status, Status::Unknown);
    assert_eq!(finding(&report, R1).status, Status::Unknown);
}

#[test]
fn without_a_clone_known_pins_decide_and_everything_else_is_unknown() {
    let fx = fixture();
    let known = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    let tree = tree_pinning(&fx, "known", known);
    let report = scan_tree(&tree, None, None, None);
    let r1 = finding(&report, R1);
    assert_eq!(r1.status, Status::Affected);
    assert_eq!(r1.decided_by, Some(EvidenceKind::KnownPin));
    assert!(r1.evidence.iter().any(|e| e.detail.contains("vLLM 0.30.0")));

    let fixed = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    let report = scan_tree(&tree_pinning(&fx, "fixed", fixed), None, None, None);
    assert_eq!(finding(&report, R1).status, Status::NotAffected);

    let other = "0123456789abcdef0123456789abcdef01234567";
    let report = scan_tree(&tree_pinning(&fx, "other", other), None, None, None);
    let r1 = finding(&report, R1);
    assert_eq!(r1.status, Status::Unknown);
    assert!(
        r1.evidence
            .iter()
            .any(|e| e.detail.contains("--repo flash-attention="))
    );
}

#[test]
fn short_sha_and_tag_pins_resolve_through_the_clone() {
    let fx = fixture();
    let h = &fx.history;
    git(&h.dir, &["tag", "v-fixed", &h.fix]);
    for (name, reference, want) in [
        ("short", &h.c2[..10], Status::Affected),
        ("tag", "v-fixed", Status::NotAffected),
    ] {
        let tree = tree_pinning(&fx, name, reference);
        let report = scan_tree(&tree, Some(&h.dir), Some(&fx.rules), None);
        assert!(
            report.components[0]
                .commit
                .as_ref()
                .is_some_and(|c| c.len() == 40)
        );
        assert_eq!(finding(&report, TEST_RULE).status, want, "{name}");
        // Hygiene: short SHAs and tags are findings of their own.
        let hygiene = if name == "short" {
            "hygiene/short-sha"
        } else {
            "hygiene/movable-ref"
        };
        assert_eq!(finding(&report, hygiene).status, Status::Affected);
    }
    // Without a clone they cannot be resolved: unknown.
    let tree = tree_pinning(&fx, "tag-noclone", "v-fixed");
    let report = scan_tree(&tree, None, Some(&fx.rules), None);
    assert_eq!(finding(&report, TEST_RULE).status, Status::Unknown);
}

#[test]
fn personal_fork_is_a_finding_but_rules_still_apply() {
    let fx = fixture();
    let tree = fx.root.join("fork");
    vllm_tree(
        &tree,
        "git@github.com:someone/flash-attention.git",
        &fx.history.c2,
    );
    let report = scan_tree(&tree, Some(&fx.history.dir), Some(&fx.rules), None);
    let fork = finding(&report, "hygiene/fork-pin");
    assert_eq!(fork.status, Status::Affected);
    assert!(fork.evidence[0].detail.contains("someone/flash-attention"));
    assert_eq!(finding(&report, R1).status, Status::Affected);
    // The canonical repository in another spelling is not a fork.
    let tree = fx.root.join("canonical");
    vllm_tree(
        &tree,
        "ssh://git@GitHub.com/vllm-project/flash-attention",
        &fx.history.c2,
    );
    let report = scan_tree(&tree, Some(&fx.history.dir), Some(&fx.rules), None);
    assert!(report.findings.iter().all(|f| f.rule != "hygiene/fork-pin"));
}

#[test]
fn declared_patches_are_applied_before_the_signature() {
    let fx = fixture();
    let h = &fx.history;
    let tree = fx.root.join("patched");
    vllm_tree(&tree, FA_REPO, &h.c2);
    write(
        &tree,
        "cmake/external_projects/vllm_flash_attn.cmake",
        &fa_cmake(FA_REPO, &h.c2, Some("fix-splits.patch")),
    );
    // The fix as a patch file, made by git from the real fix commit.
    let patch = git(&h.dir, &["format-patch", "-1", "--stdout", &h.fix]);
    write(
        &tree,
        "cmake/external_projects/patches/fix-splits.patch",
        &(patch + "\n"),
    );
    let report = scan_tree(&tree, Some(&h.dir), Some(&fx.rules), None);
    assert_eq!(
        report.components[0].patches,
        vec!["cmake/external_projects/patches/fix-splits.patch".to_string()]
    );
    let r1 = finding(&report, R1);
    assert_eq!(r1.status, Status::NotAffected, "{r1:#?}");
    assert!(r1.evidence[0].detail.contains("fix-splits.patch"));
    // Ancestry knows nothing of patches: the pinned commit itself is affected.
    assert_eq!(finding(&report, TEST_RULE).status, Status::Affected);
}

#[test]
fn rev_reads_an_older_revision_without_checkout() {
    let fx = fixture();
    let h = &fx.history;
    let tree = fx.root.join("vllm");
    init(&tree);
    vllm_tree(&tree, FA_REPO, &h.c2);
    let old = commit(&tree, "pin buggy");
    vllm_tree(&tree, FA_REPO, &h.c4);
    commit(&tree, "bump flash-attention");
    let now = scan_tree(&tree, Some(&h.dir), None, None);
    assert_eq!(finding(&now, R1).status, Status::NotAffected);
    for rev in [old.as_str(), "HEAD~1"] {
        let then = scan_tree(&tree, Some(&h.dir), None, Some(rev));
        assert_eq!(then.kind, pinprobe::model::TargetKind::GitTree);
        assert_eq!(finding(&then, R1).status, Status::Affected, "{rev}");
    }
}

#[test]
fn ambiguous_short_sha_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fa");
    init(&repo);
    // Make commits until two share a 4-hex prefix.
    let mut seen = std::collections::HashMap::new();
    let prefix = loop {
        let n = seen.len();
        write(&repo, "n.txt", &format!("{n}\n"));
        let sha = commit(&repo, &format!("c{n}"));
        let p = sha[..4].to_string();
        if seen.insert(p.clone(), sha).is_some() {
            break p;
        }
    };
    let tree = tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, &prefix);
    let (db, _) = pinprobe::rules::load(None).unwrap();
    let repos = vec![("flash-attention".to_string(), repo.clone())];
    let clones = Clones::open(&repos).unwrap();
    let err = scan::scan_source(&tree, &Options::default(), &db, &clones).unwrap_err();
    assert!(err.to_string().contains("ambiguous"), "{err}");
}

/// A source tree's `vllm/_version.py` is version-range evidence only when the tree pins what
/// that release pinned (rules/ledger.yaml); a tree whose pin moved says nothing by its version.
#[test]
fn a_release_tree_version_decides_only_when_its_pin_is_the_releases() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    write(
        root,
        "vllm/_version.py",
        "__version__ = version = '0.33.0'\n__commit_id__ = commit_id = 'g4ba787ec9'\n",
    );
    let scan = |args: &[&str]| {
        let mut all = vec!["scan", root.to_str().expect("utf-8"), "--format", "json"];
        all.extend_from_slice(args);
        let run = pinprobe(&all);
        let json: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
        (run.code, json)
    };
    let r1 = |json: &serde_json::Value| {
        json["targets"][0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["rule"] == "PINPROBE-2026-0001")
            .cloned()
            .expect("R1")
    };
    // vLLM 0.33.0's own pin (read from the 0.33.0 sdist into the ledger).
    vllm_tree(root, FA_REPO, "b273a02621d3c94bc747df67204f591b67f38fae");
    let (_, json) = scan(&[]);
    let f = r1(&json);
    assert_eq!(f["status"], "not_affected", "{f:#}");
    // The ledger's verdict recorded from the 0.33.0 wheel decides (it ranks above the version),
    // and the version range applies beside it.
    assert_eq!(f["decided_by"], "recorded", "{f:#}");
    assert!(
        f["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .any(|e| e["kind"] == "version-range" && e["status"] == "not_affected"),
        "{f:#}"
    );
    // The same tree with its pin moved to a commit the ledger does not give 0.33.0.
    vllm_tree(root, FA_REPO, "0123456789abcdef0123456789abcdef01234567");
    let (code, json) = scan(&[]);
    let f = r1(&json);
    assert_eq!(f["status"], "unknown", "{f:#}");
    assert_eq!(code, 3);
    assert!(
        json.to_string().contains("changed after the release"),
        "{json:#}"
    );
}

/// Hygiene findings report but do not fail the default gate; `--fail-on-hygiene` restores it.
#[test]
fn hygiene_findings_fail_only_with_their_flag() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    // A tag pin: `hygiene/movable-ref`, and no commit for the kernel rules to decide on.
    vllm_tree(root, FA_REPO, "v2.7.2");
    let path = root.to_str().expect("utf-8");
    let plain = pinprobe(&["scan", path, "--format", "json"]);
    assert!(
        plain.stdout.contains("hygiene/movable-ref"),
        "{}",
        plain.stdout
    );
    // Kernel rules stay undecided (3); the hygiene finding alone never makes it 1.
    assert_eq!(plain.code, 3, "{}{}", plain.stdout, plain.stderr);
    let gated = pinprobe(&["scan", path, "--format", "json", "--fail-on-hygiene"]);
    assert_eq!(gated.code, 1, "{}{}", gated.stdout, gated.stderr);
}

/// A CMake file that reaches the tree only through a symbolic link (the file behind it is not
/// named like one) is still read: included, its affected pin decides; left unreached, its
/// declaration is `unknown`, never a clean exit.
#[test]
fn a_cmake_file_behind_a_symbolic_link_is_read_and_never_hidden() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let affected = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    for (include, expected) in [(true, 1), (false, 3)] {
        let root = tmp.path().join(format!("tree-{include}"));
        let top = if include {
            "cmake_minimum_required(VERSION 3.26)\nproject(v LANGUAGES CXX)\ninclude(cmake/fa.cmake)\n"
        } else {
            "cmake_minimum_required(VERSION 3.26)\nproject(v LANGUAGES CXX)\n"
        };
        write(&root, "CMakeLists.txt", top);
        write(&root, "data/fa.txt", &fa_cmake(FA_REPO, affected, None));
        std::fs::create_dir_all(root.join("cmake")).expect("mkdir");
        std::os::unix::fs::symlink("../data/fa.txt", root.join("cmake/fa.cmake")).expect("link");
        let run = pinprobe(&[
            "scan",
            root.to_str().expect("utf-8"),
            "--offline",
            "--format",
            "json",
        ]);
        assert_eq!(
            run.code, expected,
            "include={include}: {}{}",
            run.stdout, run.stderr
        );
        let json = run.json();
        let r1 = json["targets"][0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["rule"] == "PINPROBE-2026-0001")
            .cloned()
            .expect("the FA4 rule has a finding");
        let status = if include { "affected" } else { "unknown" };
        assert_eq!(r1["status"], status, "{r1:#}");
    }
}

/// Issue 15: in vLLM's shape the device chooses triton_kernels' repository and tag, after more
/// decisions than pinprobe forks on, so the choice is joined. The pin is the two literal values
/// (a tag of triton-lang/triton, a full SHA of the ROCm fork), so the FA4 rule, whose known
/// affected pins are full SHAs, is decided for it: no finding left unknown by an "any value".
#[test]
fn a_joined_device_choice_of_triton_kernels_leaves_the_fa4_rule_decided() {
    let fx = fixture();
    let fixed = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    let rocm = "669b31acc1dd1b3fd93286afd5db67f65d9f7557";
    let tree = tree_pinning(&fx, "triton", fixed);
    write(
        &tree,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\n\
         set(VLLM_TARGET_DEVICE \"cuda\" CACHE STRING \"\")\n\
         foreach(v IN ITEMS A B C)\n  if(DEFINED ENV{VLLM_OPT_${v}})\n    message(STATUS \"${v}\")\n  endif()\nendforeach()\n\
         include(FetchContent)\n\
         include(cmake/external_projects/triton_kernels.cmake)\n\
         include(cmake/external_projects/vllm_flash_attn.cmake)\n",
    );
    write(
        &tree,
        "cmake/external_projects/triton_kernels.cmake",
        &format!(
            r#"if(DEFINED ENV{{TRITON_KERNELS_SRC_DIR}})
  FetchContent_Declare(triton_kernels SOURCE_DIR $ENV{{TRITON_KERNELS_SRC_DIR}})
else()
  if(VLLM_TARGET_DEVICE STREQUAL "rocm")
    set(TRITON_GIT "https://github.com/ROCm/triton.git")
    set(TRITON_KERNELS_TAG "{rocm}")
  else()
    set(TRITON_GIT "https://github.com/triton-lang/triton.git")
    set(TRITON_KERNELS_TAG "v3.5.1")
  endif()
  FetchContent_Declare(
    triton_kernels
    GIT_REPOSITORY ${{TRITON_GIT}}
    GIT_TAG ${{TRITON_KERNELS_TAG}}
    SOURCE_SUBDIR python/triton_kernels/triton_kernels
  )
endif()
FetchContent_MakeAvailable(triton_kernels)
"#
        ),
    );
    let report = scan_tree(&tree, None, None, None);
    let triton = report
        .components
        .iter()
        .find(|c| c.declared_name == "triton_kernels")
        .unwrap_or_else(|| panic!("no triton_kernels pin: {:#?}", report.components));
    let values: Vec<(Option<&str>, Option<&str>)> = triton
        .possible
        .iter()
        .map(|p| (p.repo.as_deref(), p.reference.as_deref()))
        .collect();
    assert_eq!(
        values,
        [
            (
                Some("https://github.com/triton-lang/triton.git"),
                Some("v3.5.1")
            ),
            (Some("https://github.com/ROCm/triton.git"), Some(rocm)),
        ],
        "{:#?}",
        triton.possible
    );
    assert!(triton.possible.iter().all(|p| p.set_by.is_empty()));
    let fa4: Vec<&Finding> = report.findings.iter().filter(|f| f.rule == R1).collect();
    assert!(!fa4.is_empty(), "{:#?}", report.findings);
    for f in fa4 {
        assert_eq!(f.status, Status::NotAffected, "{f:#?}");
    }
}
