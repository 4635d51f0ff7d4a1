//! The rule model on synthetic histories built by the tests: several fixed events, a rule scoped
//! to one repository with a fork that carries a revert in the same merge, a moved repository
//! (aliases) with a short-SHA pin, a condition over two components (vLLM's own revision and the
//! DeepGEMM pin), squash-merged PR heads (patch-id equivalence), the unreachable-pin hygiene
//! finding; then `rules test` and `rules export --osv` through the CLI, and an opt-in run of the
//! bundled vectors against real clones.

use crate::common;

use assert_cmd::Command;
use common::*;
use pinprobe::model::TargetReport;
use pinprobe::model::{EvidenceKind, Finding, Status};
use pinprobe::resolve::Clones;
use pinprobe::resolve::Repo;
use pinprobe::rules::evaluate::{self, Subject};
use pinprobe::scan::{self, Options};
use std::path::{Path, PathBuf};

fn db_with(dir: &Path) -> pinprobe::rules::Database {
    pinprobe::rules::load(Some(dir)).expect("rules load").0
}

fn eval(
    db: &pinprobe::rules::Database,
    id: &str,
    component: &str,
    pin: &str,
    clone: Option<&Repo>,
) -> Finding {
    let rule = &db.get(id).expect("rule loaded").rule;
    let subject = Subject {
        component,
        commit: gix::ObjectId::from_hex(pin.as_bytes()).ok(),
        commit_unknown: None,
        clone,
        sources: None,
        sources_label: String::new(),
        binaries: None,
        packages: Vec::new(),
        package_pins: Vec::new(),
        no_clone: None,
        recorded: Vec::new(),
        patches: None,
        location: None,
    };
    evaluate::evaluate(rule, &subject, &db.registry)
}

fn ancestry(f: &Finding) -> &str {
    &f.evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Ancestry)
        .expect("ancestry evidence")
        .detail
}

/// One range of a synthetic rule: `(repo, component, events, note)`.
type RangeSpec<'a> = (&'a str, &'a str, Vec<(&'a str, String)>, &'a str);

/// A rule over one or more ranges.
fn rule_text(id: &str, ranges: &[RangeSpec], extra: &str) -> String {
    let mut affected = String::new();
    for (repo, component, events, note) in ranges {
        let events: String = events
            .iter()
            .map(|(k, v)| format!("          - {k}: \"{v}\"\n"))
            .collect();
        let note = if note.is_empty() {
            String::new()
        } else {
            format!("      note: \"{note}\"\n")
        };
        affected.push_str(&format!(
            "  - package:\n      ecosystem: GIT\n      name: {component}\n    ranges:\n      - type: GIT\n        repo: {repo}\n        events:\n{events}    database_specific:\n      component: {component}\n{note}"
        ));
    }
    format!(
        "id: {id}\nmodified: \"2026-11-30T00:00:00Z\"\nsummary: \"synthetic test rule\"\naffected:\n{affected}database_specific:\n  severity: high\n  kind: crash\n{extra}"
    )
}

const FORK: &str = "https://github.com/vllm-project/flash-attention";
const UPSTREAM: &str = "https://github.com/Dao-AILab/flash-attention";

#[test]
fn several_fixed_events_each_close_the_range() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fa");
    init(&repo);
    write(&repo, "a.txt", "base\n");
    let _c0 = commit(&repo, "base");
    write(&repo, "bug.txt", "bug\n");
    let intro = commit(&repo, "introduce");
    git(&repo, &["checkout", "-q", "-b", "one"]);
    write(&repo, "bug.txt", "fixed one way\n");
    let fix1 = commit(&repo, "fix, the fork's way");
    git(&repo, &["checkout", "-q", "-b", "two", &intro]);
    write(&repo, "bug.txt", "fixed another way\n");
    let fix2 = commit(&repo, "fix, upstream's way");
    write(&repo, "b.txt", "later\n");
    let after2 = commit(&repo, "later");
    let rules = tmp.path().join("rules");
    write(
        &rules,
        "t.yaml",
        &rule_text(
            "TEST-TWO-FIXES",
            &[(
                FORK,
                "flash-attention",
                vec![
                    ("introduced", intro.clone()),
                    ("fixed", fix1.clone()),
                    ("fixed", fix2.clone()),
                ],
                "",
            )],
            "",
        ),
    );
    let db = db_with(&rules);
    let clone = Repo::open(&repo).unwrap();
    for (pin, want) in [
        (&intro, Status::Affected),
        (&fix1, Status::NotAffected),
        (&fix2, Status::NotAffected),
        (&after2, Status::NotAffected),
    ] {
        let f = eval(&db, "TEST-TWO-FIXES", "flash-attention", pin, Some(&clone));
        assert_eq!(f.status, want, "{pin}: {f:#?}");
    }
    // Without a clone, each fix commit is recognised by event equality.
    let f = eval(&db, "TEST-TWO-FIXES", "flash-attention", &fix2, None);
    assert_eq!(f.status, Status::NotAffected);
    assert_eq!(f.decided_by, Some(EvidenceKind::KnownPin));
}

/// The R10 shape: upstream introduces a bug; the fork merges upstream in a PR branch, reverts the
/// introducing commit on that branch, and merges the branch into main in one merge.
struct RevertInMerge {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    rules: PathBuf,
    intro: String,
    ufix: String,
    branch_merge: String,
    revert: String,
    main_merge: String,
}

fn revert_in_merge() -> RevertInMerge {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fork");
    init(&repo);
    write(
        &repo,
        "flash_api.cpp",
        "if (seqlenq_ngroups_swapped) {\n  split();\n}\n",
    );
    commit(&repo, "base");
    // Upstream's line of history.
    git(&repo, &["checkout", "-q", "-b", "upstream"]);
    write(
        &repo,
        "flash_api.cpp",
        "if (paged_KV || seqlenq_ngroups_swapped) {\n  split();\n}\n",
    );
    let intro = commit(&repo, "expose num_splits (the bug)");
    write(&repo, "README.md", "upstream docs\n");
    commit(&repo, "upstream docs");
    // The fork's PR branch merges upstream, then reverts the introducing commit.
    git(&repo, &["checkout", "-q", "-b", "merge_upstream", "main"]);
    write(&repo, "fork.txt", "fork work\n");
    commit(&repo, "fork work");
    git(&repo, &["merge", "-q", "--no-ff", "--no-edit", "upstream"]);
    let branch_merge = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["revert", "--no-edit", &intro]);
    let revert = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-q", "main"]);
    git(
        &repo,
        &["merge", "-q", "--no-ff", "--no-edit", "merge_upstream"],
    );
    let main_merge = git(&repo, &["rev-parse", "HEAD"]);
    // Upstream fixes it later.
    git(&repo, &["checkout", "-q", "upstream"]);
    write(
        &repo,
        "flash_api.cpp",
        "if (seqlenq_ngroups_swapped) {\n  split();\n} else if (paged_KV) {\n  check();\n}\n",
    );
    let ufix = commit(&repo, "fix varlen paged split-kv");
    git(&repo, &["checkout", "-q", "main"]);
    let rules = tmp.path().join("rules");
    RevertInMerge {
        repo,
        rules,
        intro,
        ufix,
        branch_merge,
        revert,
        main_merge,
        _tmp: tmp,
    }
}

#[test]
fn a_rule_for_upstream_does_not_reach_the_fork() {
    let h = revert_in_merge();
    write(
        &h.rules,
        "t.yaml",
        &rule_text(
            "TEST-UPSTREAM-ONLY",
            &[(
                UPSTREAM,
                "flash-attention-upstream",
                vec![("introduced", h.intro.clone()), ("fixed", h.ufix.clone())],
                "",
            )],
            "",
        ),
    );
    let db = db_with(&h.rules);
    let rule = &db.get("TEST-UPSTREAM-ONLY").unwrap().rule;
    // Keyed by repository: the fork is not an alias of upstream, though it shares the commits.
    assert!(!evaluate::applies(rule, "flash-attention", &db.registry));
    assert!(evaluate::applies(
        rule,
        "flash-attention-upstream",
        &db.registry
    ));
    let clone = Repo::open(&h.repo).unwrap();
    let f = eval(
        &db,
        "TEST-UPSTREAM-ONLY",
        "flash-attention-upstream",
        &h.intro,
        Some(&clone),
    );
    assert_eq!(f.status, Status::Affected);
}

#[test]
fn the_fork_that_merged_the_bug_with_its_revert_is_not_affected() {
    let h = revert_in_merge();
    write(
        &h.rules,
        "t.yaml",
        &rule_text(
            "TEST-R10",
            &[
                (
                    UPSTREAM,
                    "flash-attention-upstream",
                    vec![("introduced", h.intro.clone()), ("fixed", h.ufix.clone())],
                    "",
                ),
                (
                    FORK,
                    "flash-attention",
                    vec![
                        ("introduced", h.intro.clone()),
                        ("fixed", h.revert.clone()),
                        ("fixed", h.ufix.clone()),
                    ],
                    "fork: the bug arrived in the same merge as its revert",
                ),
            ],
            "",
        ),
    );
    let db = db_with(&h.rules);
    let clone = Repo::open(&h.repo).unwrap();
    let f = eval(
        &db,
        "TEST-R10",
        "flash-attention",
        &h.main_merge,
        Some(&clone),
    );
    assert_eq!(f.status, Status::NotAffected, "{f:#?}");
    assert_eq!(f.decided_by, Some(EvidenceKind::Ancestry));
    let detail = ancestry(&f);
    assert!(detail.contains(&h.revert[..12]), "{detail}");
    assert!(detail.contains("same merge as its revert"), "{detail}");
    // The PR branch's own merge of upstream, before the revert, carries the bug.
    let f = eval(
        &db,
        "TEST-R10",
        "flash-attention",
        &h.branch_merge,
        Some(&clone),
    );
    assert_eq!(f.status, Status::Affected, "{f:#?}");
    // The upstream range alone would call the fork's merge affected: it contains the
    // introducing commit and not upstream's fix. That is why the range is keyed by repository.
    let f = eval(
        &db,
        "TEST-R10",
        "flash-attention-upstream",
        &h.main_merge,
        Some(&clone),
    );
    assert_eq!(f.status, Status::Affected);
}

fn deepgemm_cmake(repo: &str, tag: &str) -> String {
    format!(
        "include(FetchContent)\nFetchContent_Declare(\n  deepgemm\n  GIT_REPOSITORY {repo}\n  GIT_TAG {tag}\n  GIT_PROGRESS TRUE\n)\nFetchContent_MakeAvailable(deepgemm)\n"
    )
}

fn deepgemm_tree(root: &Path, repo: &str, tag: &str) {
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm LANGUAGES CXX)\ninclude(cmake/external_projects/deepgemm.cmake)\n",
    );
    write(
        root,
        "cmake/external_projects/deepgemm.cmake",
        &deepgemm_cmake(repo, tag),
    );
}

fn scan_with(
    tree: &Path,
    repos: Vec<(String, PathBuf)>,
    rules: &Path,
    rev: Option<&str>,
) -> TargetReport {
    let (db, _) = pinprobe::rules::load(Some(rules)).unwrap();
    let clones = Clones::open(&repos).unwrap();
    let opts = Options {
        rev: rev.map(String::from),
        repos,
        ..Default::default()
    };
    scan::scan_source(tree, &opts, &db, &clones).unwrap()
}

fn finding<'a>(report: &'a TargetReport, rule: &str) -> &'a Finding {
    report
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no finding for {rule}: {:#?}", report.findings))
}

#[test]
fn a_rule_for_the_fork_url_applies_to_a_pin_from_the_other_url_and_prefixes_need_a_clone() {
    let tmp = tempfile::tempdir().unwrap();
    let dg = tmp.path().join("DeepGEMM");
    init(&dg);
    write(&dg, "csrc/gemm.cu", "sm90\n");
    let pin = commit(&dg, "sm90 only");
    let rules = tmp.path().join("rules");
    let prefix = &pin[..9];
    write(
        &rules,
        "t.yaml",
        &rule_text(
                "TEST-R13",
                &[(
                    "https://github.com/vllm-project/DeepGEMM",
                    "deepgemm",
                    vec![("introduced", "0".to_string())],
                    "",
                )],
                "",
            )
            .replace(
                "      component: deepgemm\n",
                &format!(
                    "      component: deepgemm\n      introduced_unknown: true\n      known_affected_prefixes:\n        - commit: \"{prefix}\"\n          note: published abbreviated\n"
                ),
            ),
    );
    // The tree fetches from deepseek-ai; the rule names vllm-project: aliases share history.
    for url in [
        "https://github.com/deepseek-ai/DeepGEMM.git",
        "https://github.com/vllm-project/DeepGEMM.git",
    ] {
        let tree = tmp.path().join(format!("tree-{}", url.len()));
        deepgemm_tree(&tree, url, &pin);
        let report = scan_with(&tree, vec![("deepgemm".into(), dg.clone())], &rules, None);
        let f = finding(&report, "TEST-R13");
        assert_eq!(f.status, Status::Affected, "{url}: {f:#?}");
        assert_eq!(f.decided_by, Some(EvidenceKind::KnownPin));
        let e = f
            .evidence
            .iter()
            .find(|e| e.kind == EvidenceKind::KnownPin)
            .unwrap();
        assert!(e.detail.contains(prefix), "{}", e.detail);
        // An alias is not a fork pin.
        assert!(
            !report.findings.iter().any(|f| f.rule == "hygiene/fork-pin"),
            "{url}: {:#?}",
            report.findings
        );
        // Without a clone, a prefix gives no evidence: unknown, never affected by text match.
        let report = scan_with(&tree, vec![], &rules, None);
        let f = finding(&report, "TEST-R13");
        assert_eq!(f.status, Status::Unknown, "{f:#?}");
        assert!(!f.evidence.iter().any(|e| e.kind == EvidenceKind::KnownPin));
    }
}

/// A vLLM-shaped git repository: `before` does not enable the code path, `enable` does; both
/// pin the same DeepGEMM commit.
struct TwoComponents {
    _tmp: tempfile::TempDir,
    vllm: PathBuf,
    rules: PathBuf,
    before: String,
    enable: String,
}

fn two_components() -> TwoComponents {
    let tmp = tempfile::tempdir().unwrap();
    let dg = "1111111111111111111111111111111111111111";
    let vllm = tmp.path().join("vllm");
    init(&vllm);
    deepgemm_tree(&vllm, "https://github.com/deepseek-ai/DeepGEMM.git", dg);
    write(&vllm, "vllm/utils/deep_gemm.py", "SUPPORTED = (90, 100)\n");
    let before = commit(&vllm, "deepgemm on sm90/sm100");
    write(
        &vllm,
        "vllm/utils/deep_gemm.py",
        "SUPPORTED = (90, 100, 120)\n",
    );
    let enable = commit(&vllm, "enable deepgemm on sm120");
    let rules = tmp.path().join("rules");
    let text = rule_text(
        "TEST-R12",
        &[(
            "https://github.com/deepseek-ai/DeepGEMM",
            "deepgemm",
            vec![("introduced", "0".to_string())],
            "",
        )],
        &format!(
            "  requires:\n    - component: vllm\n      note: vLLM enables DeepGEMM on SM120\n      ranges:\n        - type: GIT\n          repo: https://github.com/vllm-project/vllm\n          events:\n            - introduced: {enable}\n"
        ),
    )
    .replace(
        "      component: deepgemm\n",
        &format!("      component: deepgemm\n      introduced_unknown: true\n      known_affected_pins:\n        - commit: {dg}\n"),
    );
    write(&rules, "t.yaml", &text);
    TwoComponents {
        _tmp: tmp,
        vllm,
        rules,
        before,
        enable,
    }
}

#[test]
fn a_condition_over_two_components_uses_the_trees_own_revision() {
    let t = two_components();
    // HEAD enables the path: the known pin decides, the requirement holds.
    let report = scan_with(&t.vllm, vec![], &t.rules, None);
    let f = finding(&report, "TEST-R12");
    assert_eq!(f.status, Status::Affected, "{f:#?}");
    let req = f
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Requirement)
        .expect("requirement evidence");
    assert_eq!(req.status, Status::Affected);
    assert!(req.detail.contains("requires vllm"), "{}", req.detail);
    // The same pin at a vLLM revision that does not enable the path: not affected, and the
    // requirement is what decided.
    let report = scan_with(&t.vllm, vec![], &t.rules, Some(&t.before));
    let f = finding(&report, "TEST-R12");
    assert_eq!(f.status, Status::NotAffected, "{f:#?}");
    assert_eq!(f.decided_by, Some(EvidenceKind::Requirement));
    assert!(f.evidence[0].detail.contains("does not hold"), "{f:#?}");
    let report = scan_with(&t.vllm, vec![], &t.rules, Some(&t.enable));
    assert_eq!(finding(&report, "TEST-R12").status, Status::Affected);
}

#[test]
fn a_condition_that_cannot_be_checked_is_unknown_never_not_affected() {
    let t = two_components();
    // A plain directory: no revision, so the requirement is unknown and so is the finding.
    let plain = t._tmp.path().join("plain");
    deepgemm_tree(
        &plain,
        "https://github.com/deepseek-ai/DeepGEMM.git",
        "1111111111111111111111111111111111111111",
    );
    let report = scan_with(&plain, vec![], &t.rules, None);
    let f = finding(&report, "TEST-R12");
    assert_eq!(f.status, Status::Unknown, "{f:#?}");
    assert_eq!(f.decided_by, None);
    let req = f
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Requirement)
        .unwrap();
    assert_eq!(req.status, Status::Unknown);
    assert!(
        req.detail
            .contains("requires vllm (vLLM enables DeepGEMM on SM120)"),
        "{}",
        req.detail
    );
    assert!(req.detail.contains("not a git work tree"), "{}", req.detail);
}

/// A PR squash-merged into main: the PR head (two commits) is not an ancestor of main.
struct Squash {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    base: String,
    pr_head: String,
    squash: String,
}

fn squash_history() -> Squash {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fa");
    init(&repo);
    write(
        &repo,
        "kernel.py",
        "def f(x):\n    return x\n\n\ndef g(y):\n    return y\n",
    );
    let base = commit(&repo, "base");
    git(&repo, &["checkout", "-q", "-b", "pr"]);
    write(
        &repo,
        "kernel.py",
        "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n",
    );
    commit(&repo, "pr: part 1");
    write(
        &repo,
        "kernel.py",
        "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n",
    );
    let pr_head = commit(&repo, "pr: part 2");
    git(&repo, &["checkout", "-q", "main"]);
    write(&repo, "README.md", "unrelated\n");
    commit(&repo, "unrelated on main");
    git(&repo, &["merge", "-q", "--squash", "pr"]);
    let squash = commit(&repo, "the PR, squashed (#1)");
    Squash {
        _tmp: tmp,
        repo,
        base,
        pr_head,
        squash,
    }
}

#[test]
fn a_squash_merged_pr_head_carries_its_squash_by_patch_id() {
    let s = squash_history();
    let clone = Repo::open(&s.repo).unwrap();
    assert_eq!(
        clone.is_ancestor(
            &gix::ObjectId::from_hex(s.pr_head.as_bytes()).unwrap(),
            &gix::ObjectId::from_hex(s.squash.as_bytes()).unwrap()
        ),
        pinprobe::resolve::Answer::Known(false),
        "the PR head is not an ancestor of its squash"
    );
    let rules = s._tmp.path().join("rules");
    // The squash is the fix: the PR head contains it.
    write(
        &rules,
        "fix.yaml",
        &rule_text(
            "TEST-SQUASH-FIX",
            &[(
                FORK,
                "flash-attention",
                vec![("introduced", s.base.clone()), ("fixed", s.squash.clone())],
                "",
            )],
            "",
        ),
    );
    // The squash is the introducing commit: the PR head carries the bug.
    write(
        &rules,
        "intro.yaml",
        &rule_text(
            "TEST-SQUASH-INTRO",
            &[(
                FORK,
                "flash-attention",
                vec![("introduced", s.squash.clone())],
                "",
            )],
            "",
        ),
    );
    let db = db_with(&rules);
    let f = eval(
        &db,
        "TEST-SQUASH-FIX",
        "flash-attention",
        &s.pr_head,
        Some(&clone),
    );
    assert_eq!(f.status, Status::NotAffected, "{f:#?}");
    assert!(
        ancestry(&f).contains("squash-merge equivalence (patch-id)"),
        "{}",
        ancestry(&f)
    );
    let f = eval(
        &db,
        "TEST-SQUASH-INTRO",
        "flash-attention",
        &s.pr_head,
        Some(&clone),
    );
    assert_eq!(f.status, Status::Affected, "{f:#?}");
    assert!(
        ancestry(&f).contains("squash-merge equivalence (patch-id"),
        "{}",
        ancestry(&f)
    );
    // The base is before both: in range for the fix rule, out of range for the intro rule.
    assert_eq!(
        eval(
            &db,
            "TEST-SQUASH-FIX",
            "flash-attention",
            &s.base,
            Some(&clone)
        )
        .status,
        Status::Affected
    );
    assert_eq!(
        eval(
            &db,
            "TEST-SQUASH-INTRO",
            "flash-attention",
            &s.base,
            Some(&clone)
        )
        .status,
        Status::NotAffected
    );
}

#[test]
fn a_pin_off_the_default_branch_is_a_hygiene_finding() {
    let s = squash_history();
    let rules = s._tmp.path().join("empty-rules");
    std::fs::create_dir_all(&rules).unwrap();
    let tree = s._tmp.path().join("tree");
    vllm_tree(&tree, FA_REPO, &s.pr_head);
    let report = scan_with(
        &tree,
        vec![("flash-attention".into(), s.repo.clone())],
        &rules,
        None,
    );
    let f = finding(&report, "hygiene/unreachable-pin");
    assert_eq!(f.status, Status::Affected);
    assert_eq!(f.severity, pinprobe::Severity::Low);
    assert!(
        f.evidence[0].detail.contains("main"),
        "{}",
        f.evidence[0].detail
    );
    // A pin on main is not reported.
    let tree = s._tmp.path().join("tree-main");
    vllm_tree(&tree, FA_REPO, &s.squash);
    let report = scan_with(
        &tree,
        vec![("flash-attention".into(), s.repo.clone())],
        &rules,
        None,
    );
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.rule == "hygiene/unreachable-pin")
    );
    // Without a clone nothing can be said.
    let report = scan_with(&tree, vec![], &rules, None);
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.rule == "hygiene/unreachable-pin")
    );
}

#[test]
fn lint_rejects_a_range_whose_repository_its_component_does_not_own() {
    let (db, _) = pinprobe::rules::load(None).unwrap();
    let text = rule_text(
        "TEST-SCOPE",
        &[(
            UPSTREAM,
            "flash-attention",
            vec![("introduced", "0".into())],
            "",
        )],
        "",
    );
    let errors = pinprobe::rules::load::parse("t.yaml", &text, &db.registry).unwrap_err();
    let msg = errors
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        msg.contains("neither component `flash-attention`'s repository nor one of its aliases"),
        "{msg}"
    );
    assert!(msg.contains("t.yaml:"), "names file and line: {msg}");
    let text = rule_text(
        "TEST-PREFIX",
        &[(
            FORK,
            "flash-attention",
            vec![("introduced", "0".into())],
            "",
        )],
        "",
    )
    .replace(
        "      component: flash-attention\n",
        "      component: flash-attention\n      known_affected_prefixes:\n        - commit: e21\n",
    );
    let errors = pinprobe::rules::load::parse("p.yaml", &text, &db.registry).unwrap_err();
    assert!(
        errors[0].message.contains("known affected prefix `e21`"),
        "{errors:?}"
    );
}

fn pinprobe() -> Command {
    Command::cargo_bin("pinprobe").unwrap()
}

#[test]
fn rules_test_runs_the_embedded_vectors_and_skips_visibly() {
    let out = pinprobe().args(["rules", "test"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("ok       PINPROBE-2026-0001 buggy-shape-affected: affected"),
        "{stdout}"
    );
    assert!(
        stdout.contains("skipped (needs --repo flash-attention=PATH)"),
        "{stdout}"
    );
    let summary = stdout.lines().last().unwrap();
    assert!(
        summary.contains(" passed, 0 failed, ") && summary.contains(" skipped"),
        "{summary}"
    );
}

#[test]
fn rules_test_fails_with_exit_1_and_names_the_vector() {
    let tmp = tempfile::tempdir().unwrap();
    let text = rule_text(
        "TEST-WRONG",
        &[(
            FORK,
            "flash-attention",
            vec![("introduced", "0".into()), ("fixed", "2".repeat(40))],
            "",
        )],
        &format!(
            "  tests:\n    - name: fix-claimed-affected\n      pin: \"{}\"\n      expect: affected\n    - name: needs-a-clone\n      pin: \"{}\"\n      expect: affected\n      needs_clone: true\n",
            "2".repeat(40),
            "3".repeat(40)
        ),
    );
    write(tmp.path(), "t.yaml", &text);
    let out = pinprobe()
        .args(["rules", "test", "--rules", tmp.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "FAIL     TEST-WRONG fix-claimed-affected: expected affected, got not_affected"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "skipped  TEST-WRONG needs-a-clone: skipped (needs --repo flash-attention=PATH)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(" 1 failed, "), "{stdout}");
}

/// A strict model of the OSV schema (1.6) for what pinprobe exports, written from the spec:
/// unknown fields, unknown range types, event keys and reference types, and non-SHA GIT events
/// fail to deserialise or validate. (The schema file itself is third-party data and is not
/// committed; fields are declared so that they are accepted, not all are read.)
#[allow(dead_code)]
mod osv {
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Vulnerability {
        pub schema_version: String,
        pub id: String,
        pub modified: String,
        pub published: Option<String>,
        pub withdrawn: Option<String>,
        #[serde(default)]
        pub aliases: Vec<String>,
        #[serde(default)]
        pub related: Vec<String>,
        pub summary: Option<String>,
        pub details: Option<String>,
        #[serde(default)]
        pub severity: Vec<serde_json::Value>,
        pub affected: Vec<Affected>,
        #[serde(default)]
        pub references: Vec<Reference>,
        #[serde(default)]
        pub credits: Vec<serde_json::Value>,
        pub database_specific: Option<BTreeMap<String, serde_json::Value>>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Affected {
        pub package: Option<Package>,
        pub severity: Option<Vec<serde_json::Value>>,
        #[serde(default)]
        pub ranges: Vec<Range>,
        #[serde(default)]
        pub versions: Vec<String>,
        pub ecosystem_specific: Option<BTreeMap<String, serde_json::Value>>,
        pub database_specific: Option<BTreeMap<String, serde_json::Value>>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Package {
        pub ecosystem: String,
        pub name: String,
        pub purl: Option<String>,
    }

    #[derive(Deserialize, PartialEq, Eq, Clone, Copy, Debug)]
    pub enum RangeType {
        #[serde(rename = "GIT")]
        Git,
        #[serde(rename = "SEMVER")]
        Semver,
        #[serde(rename = "ECOSYSTEM")]
        Ecosystem,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Range {
        #[serde(rename = "type")]
        pub kind: RangeType,
        pub repo: Option<String>,
        pub events: Vec<Event>,
        pub database_specific: Option<BTreeMap<String, serde_json::Value>>,
    }

    #[derive(Deserialize, Debug)]
    #[serde(rename_all = "snake_case", deny_unknown_fields)]
    pub enum Event {
        Introduced(String),
        Fixed(String),
        LastAffected(String),
        Limit(String),
    }

    #[derive(Deserialize, Debug)]
    pub enum ReferenceType {
        #[serde(rename = "ADVISORY")]
        Advisory,
        #[serde(rename = "ARTICLE")]
        Article,
        #[serde(rename = "DETECTION")]
        Detection,
        #[serde(rename = "DISCUSSION")]
        Discussion,
        #[serde(rename = "REPORT")]
        Report,
        #[serde(rename = "FIX")]
        Fix,
        #[serde(rename = "INTRODUCED")]
        Introduced,
        #[serde(rename = "GIT")]
        Git,
        #[serde(rename = "PACKAGE")]
        Package,
        #[serde(rename = "EVIDENCE")]
        Evidence,
        #[serde(rename = "WEB")]
        Web,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Reference {
        #[serde(rename = "type")]
        pub kind: ReferenceType,
        pub url: String,
    }

    fn full_sha(v: &str) -> bool {
        v.len() == 40 && v.bytes().all(|b| b.is_ascii_hexdigit())
    }

    fn rfc3339(v: &str) -> bool {
        pinprobe::rules::lint::is_rfc3339_utc(v)
    }

    /// Every rule of the spec that serde's shape does not already enforce.
    pub fn validate(v: &Vulnerability) -> Result<(), String> {
        if !v.schema_version.starts_with("1.6") {
            return Err(format!("schema_version {}", v.schema_version));
        }
        if v.id.is_empty()
            || !v
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        {
            return Err(format!("id `{}`", v.id));
        }
        for t in [
            Some(&v.modified),
            v.published.as_ref(),
            v.withdrawn.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if !rfc3339(t) {
                return Err(format!("time `{t}`"));
            }
        }
        if v.affected.is_empty() {
            return Err("no affected".into());
        }
        for a in &v.affected {
            let git_only =
                !a.ranges.is_empty() && a.ranges.iter().all(|r| r.kind == RangeType::Git);
            if a.package.is_none() && !git_only {
                return Err("package omitted without GIT ranges".into());
            }
            if a.package.is_none() && !a.versions.is_empty() {
                return Err("versions without a package".into());
            }
            for r in &a.ranges {
                if r.events.is_empty() || !matches!(r.events[0], Event::Introduced(_)) {
                    return Err("a range must start with introduced".into());
                }
                if r.kind == RangeType::Git {
                    let repo = r.repo.as_deref().ok_or("GIT range without repo")?;
                    if !repo.starts_with("https://") {
                        return Err(format!("repo {repo}"));
                    }
                    for e in &r.events {
                        let value = match e {
                            Event::Introduced(x)
                            | Event::Fixed(x)
                            | Event::LastAffected(x)
                            | Event::Limit(x) => x,
                        };
                        let zero = matches!(e, Event::Introduced(x) if x == "0");
                        if !zero && !full_sha(value) {
                            return Err(format!("GIT event {e:?} is not a full SHA"));
                        }
                    }
                }
            }
        }
        for r in &v.references {
            if !r.url.starts_with("https://") {
                return Err(format!("reference {:?} url {}", r.kind, r.url));
            }
        }
        Ok(())
    }
}

#[test]
fn rules_export_writes_osv_json_that_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("osv");
    let out = pinprobe()
        .args(["rules", "export", "--osv", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (db, _) = pinprobe::rules::load(None).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), db.rules.len());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let doc: osv::Vulnerability =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        osv::validate(&doc).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(path.file_stem().unwrap().to_str().unwrap(), doc.id);
    }
    // R8 keeps two fixes (one per repository), R10 the fork's revert as a fix.
    let r10: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("PINPROBE-2026-0010.json")).unwrap(),
    )
    .unwrap();
    let fork = &r10["affected"][1];
    assert_eq!(
        fork["ranges"][0]["repo"],
        "https://github.com/vllm-project/flash-attention"
    );
    assert_eq!(
        fork["ranges"][0]["events"][1]["fixed"],
        "fe1ddad90f961a1fbc85304dff06220de2f1920f"
    );
    assert!(
        fork["database_specific"]["note"]
            .as_str()
            .unwrap()
            .contains("revert")
    );
    // The strict model rejects what the spec does not allow.
    let bad = r#"{"schema_version":"1.6.0","id":"X","modified":"2026-11-30T00:00:00Z","affected":[{"ranges":[{"type":"GIT","repo":"https://x","events":[{"introduced":"0"},{"fixed":"abc1234"}]}]}]}"#;
    let doc: osv::Vulnerability = serde_json::from_str(bad).unwrap();
    assert!(osv::validate(&doc).is_err());
    assert!(serde_json::from_str::<osv::Vulnerability>(r#"{"schema_version":"1.6.0","id":"X","modified":"2026-11-30T00:00:00Z","affected":[],"extra":1}"#).is_err());
}

#[test]
fn export_without_modified_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules");
    write(
        &rules,
        "t.yaml",
        &ancestry_rule("TEST-NO-MODIFIED", &[("introduced", "0")]),
    );
    let out = pinprobe()
        .args([
            "rules",
            "export",
            "--osv",
            tmp.path().join("o").to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("t.yaml") && stderr.contains("modified"),
        "{stderr}"
    );
}

/// Opt-in: the bundled vectors against real clones. Set any of PINPROBE_CLONE_FLASH_ATTENTION,
/// PINPROBE_CLONE_FLASH_ATTENTION_UPSTREAM, PINPROBE_CLONE_FLASHMLA, PINPROBE_CLONE_DEEPGEMM to
/// a clone's path (bare or not).
#[test]
fn bundled_vectors_against_real_clones_when_given() {
    let mut args = vec!["rules".to_string(), "test".to_string()];
    for (var, name) in [
        ("PINPROBE_CLONE_FLASH_ATTENTION", "flash-attention"),
        (
            "PINPROBE_CLONE_FLASH_ATTENTION_UPSTREAM",
            "flash-attention-upstream",
        ),
        ("PINPROBE_CLONE_FLASHMLA", "flashmla"),
        ("PINPROBE_CLONE_DEEPGEMM", "deepgemm"),
    ] {
        if let Some(path) = std::env::var_os(var) {
            args.push("--repo".into());
            args.push(format!("{name}={}", path.to_string_lossy()));
        }
    }
    if !common::require::opt_in(
        args.len() > 2,
        "set PINPROBE_CLONE_FLASH_ATTENTION (and _UPSTREAM, PINPROBE_CLONE_FLASHMLA, PINPROBE_CLONE_DEEPGEMM) to run the rules' vectors against real clones",
    ) {
        return;
    }
    let out = pinprobe().args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}
