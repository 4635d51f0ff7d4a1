//! Pin-bump review (`pinprobe diff`) on real git histories built here: a vLLM-shaped repository
//! whose commits move `GIT_TAG` across a synthetic FlashAttention history (introduce, keep, fix,
//! move to a fork and back, pin a side branch), checked through the library and the binary.

use crate::common;

use common::*;
use pinprobe::diff::{self, Request};
use pinprobe::model::Date;
use pinprobe::model::Status;
use pinprobe::model::{ChangeKind, PinChangeKind, Review};
use pinprobe::resolve::Clones;
use pinprobe::scan::Options;
use pinprobe::scan::policy;
use std::path::{Path, PathBuf};

const R1: &str = "PINPROBE-2026-0001";
const TEST_RULE: &str = "TEST-SPLITKV-ANCESTRY";
const FORK: &str = "https://github.com/someone/flash-attention.git";
const FORK_PIN: &str = "hygiene/fork-pin";

struct Fixture {
    _tmp: tempfile::TempDir,
    h: FaHistory,
    rules: PathBuf,
    vllm: PathBuf,
    /// vLLM commits: v0 pins c0, v1 introduce, v2 c2, v3 fix, v4 the fix through a fork,
    /// v5 c4 upstream again, v6 a side-branch commit.
    v: Vec<String>,
}

/// The built-in rules (other than R1) that apply to flash-attention: the synthetic history lacks
/// their commits, so they are `unknown` everywhere; the vLLM tree's `.pinprobe.yaml` suppresses
/// them so the exit code speaks of R1 and the test rule alone.
fn ignore_unrelated_builtins() -> String {
    let (db, _) = pinprobe::rules::load(None).expect("rules load");
    let mut yaml = String::from("ignore:\n");
    for loaded in &db.rules {
        let id = &loaded.rule.id;
        if id != R1
            && pinprobe::rules::evaluate::applies(&loaded.rule, "flash-attention", &db.registry)
        {
            yaml.push_str(&format!(
                "  - rule: {id}\n    component: flash-attention\n    reason: \"the synthetic history has none of its commits\"\n    expires: 2099-12-31\n"
            ));
        }
    }
    yaml
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let h = FaHistory::build(&tmp.path().join("flash-attention"));
    let rules = tmp.path().join("rules");
    write(
        &rules,
        "test.yaml",
        &ancestry_rule(
            TEST_RULE,
            &[("introduced", &h.introduce), ("fixed", &h.fix)],
        ),
    );
    let vllm = tmp.path().join("vllm");
    init(&vllm);
    write(&vllm, ".pinprobe.yaml", &ignore_unrelated_builtins());
    let mut v = Vec::new();
    for (repo, sha, msg) in [
        (FA_REPO, &h.c0, "pin c0"),
        (FA_REPO, &h.introduce, "bump: introduce"),
        (FA_REPO, &h.c2, "bump: c2"),
        (FA_REPO, &h.fix, "bump: the fix"),
        (FORK, &h.fix, "pin a fork"),
        (FA_REPO, &h.c4, "back upstream"),
        (FA_REPO, &h.side1, "pin a side branch"),
    ] {
        vllm_tree(&vllm, repo, sha);
        v.push(commit(&vllm, msg));
    }
    Fixture {
        _tmp: tmp,
        h,
        rules,
        vllm,
        v,
    }
}

fn run_review(fx: &Fixture, base: &str, head: &str) -> Review {
    run_review_with(fx, base, head, false)
}

/// The review of BASE..HEAD of the tree at `path` as the README's workflow asks for it: BASE's
/// `.pinprobe.yaml`, no VEX, no rule edits, on a fixed date.
fn review_request<'a>(
    path: &'a Path,
    base: &'a str,
    head: &'a str,
    opts: &'a Options,
) -> Request<'a> {
    Request {
        path,
        base,
        head,
        opts,
        policy: &policy::Source::TreeRoot,
        today: Date::parse("2026-06-01").expect("date"),
        allow_head_ignores: false,
        rule_edits: Vec::new(),
        vex: None,
        allow_head_vex: false,
    }
}

fn run_review_with(fx: &Fixture, base: &str, head: &str, allow_head_ignores: bool) -> Review {
    let (db, _) = pinprobe::rules::load(Some(&fx.rules)).expect("rules load");
    let repos = vec![("flash-attention".to_string(), fx.h.dir.clone())];
    let clones = Clones::open(&repos).expect("clone opens");
    let opts = Options {
        repos,
        ..Default::default()
    };
    let req = Request {
        allow_head_ignores,
        ..review_request(&fx.vllm, base, head, &opts)
    };
    diff::review(&req, &db, &clones).expect("review succeeds")
}

fn change(r: &Review, rule: &str) -> Option<ChangeKind> {
    r.changes.iter().find(|c| c.rule == rule).map(|c| c.change)
}

#[test]
fn bumps_introduce_keep_fix_and_move_across_a_fork() {
    let fx = fixture();
    let v = &fx.v;

    // c0 -> introduce: both rules introduced, the pin moved on the same repository.
    let r = run_review(&fx, &v[0], &v[1]);
    assert_eq!(r.pins.len(), 1, "{:#?}", r.pins);
    let p = &r.pins[0];
    assert_eq!(p.change, PinChangeKind::Changed);
    assert!(!p.repo_changed);
    assert_eq!(p.fork, None);
    assert_eq!(
        p.base.as_ref().and_then(|s| s.commit.as_deref()),
        Some(fx.h.c0.as_str())
    );
    assert_eq!(
        p.head.as_ref().and_then(|s| s.commit.as_deref()),
        Some(fx.h.introduce.as_str())
    );
    assert_eq!(
        change(&r, R1),
        Some(ChangeKind::Introduced),
        "{:#?}",
        r.changes
    );
    assert_eq!(change(&r, TEST_RULE), Some(ChangeKind::Introduced));
    assert_eq!(r.counts.introduced, 2);
    let c = r.changes.iter().find(|c| c.rule == R1).expect("R1");
    assert_eq!(c.status, Status::Affected);
    assert_eq!(c.base_status, Some(Status::NotAffected));
    assert!(c.pin_changed);
    // The unrelated built-ins are unknown on both sides, and suppressed by the tree's policy.
    assert!(r.counts.suppressed > 0);
    assert_eq!(r.counts.unknown, 0, "{:#?}", r.changes);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    // introduce -> c2: kept.
    let r = run_review(&fx, &v[1], &v[2]);
    assert_eq!(change(&r, R1), Some(ChangeKind::Kept));
    assert_eq!(change(&r, TEST_RULE), Some(ChangeKind::Kept));
    assert_eq!(r.counts.introduced, 0);

    // c2 -> fix: fixed.
    let r = run_review(&fx, &v[2], &v[3]);
    assert_eq!(change(&r, R1), Some(ChangeKind::Fixed));
    assert_eq!(change(&r, TEST_RULE), Some(ChangeKind::Fixed));
    assert_eq!(r.counts.fixed, 2);
    assert!(
        r.suggestions.is_empty(),
        "nothing open: {:#?}",
        r.suggestions
    );

    // fix -> the same commit through a fork: the repository moves, the fork-pin check appears.
    let r = run_review(&fx, &v[3], &v[4]);
    let p = &r.pins[0];
    assert!(p.repo_changed);
    assert_eq!(p.fork, Some("to"));
    assert_eq!(
        p.base.as_ref().and_then(|s| s.commit.as_deref()),
        p.head.as_ref().and_then(|s| s.commit.as_deref())
    );
    assert!(p.head.as_ref().is_some_and(|s| s.fork));
    assert_eq!(change(&r, FORK_PIN), Some(ChangeKind::Introduced));
    assert_eq!(change(&r, R1), None, "not affected on both sides");

    // Back upstream: the fork-pin finding is fixed.
    let r = run_review(&fx, &v[4], &v[5]);
    assert_eq!(r.pins[0].fork, Some("from"));
    assert_eq!(change(&r, FORK_PIN), Some(ChangeKind::Fixed));

    // The same revision on both sides: no pin changed, what is affected is kept.
    let r = run_review(&fx, &v[2], &v[2]);
    assert!(r.pins.is_empty());
    assert_eq!(change(&r, R1), Some(ChangeKind::Kept));
}

#[test]
fn the_suggested_pin_is_the_earliest_default_branch_commit_with_every_fix() {
    let fx = fixture();
    let r = run_review(&fx, &fx.v[1], &fx.v[2]);
    assert_eq!(r.suggestions.len(), 1, "{:#?}", r.suggestions);
    let s = &r.suggestions[0];
    assert_eq!(s.component, "flash-attention");
    assert_eq!(s.commit.as_deref(), Some(fx.h.fix.as_str()), "{s:#?}");
    assert_eq!(s.git_tag, Some(format!("GIT_TAG {}", fx.h.fix)));
    assert_eq!(s.file, "cmake/external_projects/vllm_flash_attn.cmake");
    assert_eq!(s.branch.as_deref(), Some("main"));
    assert!(s.fixes.contains(&fx.h.fix));
    // R1's real fix commit is not in the synthetic clone: said, and left out.
    assert!(
        s.absent
            .iter()
            .any(|a| a == "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46"),
        "{s:#?}"
    );
    let text = std::fs::read_to_string(fx.vllm.join(&s.file)).expect("cmake");
    let line = text.lines().nth(s.line as usize - 1).expect("line");
    assert!(line.contains("GIT_TAG"), "{line}");

    // A pin on a side branch: no default-branch commit contains it, and it is unreachable.
    let r = run_review(&fx, &fx.v[5], &fx.v[6]);
    assert_eq!(
        change(&r, "hygiene/unreachable-pin"),
        Some(ChangeKind::Introduced)
    );
    let s = &r.suggestions[0];
    assert_eq!(s.commit, None);
    assert!(s.note.contains("no commit on main"), "{}", s.note);
}

fn pinprobe(dir: &Path, args: &[&str]) -> Run {
    Pinprobe::new(args)
        .dir(dir)
        .env("PINPROBE_TODAY", "2026-06-01")
        .run()
}

#[test]
fn exit_codes_count_only_what_the_bump_introduces() {
    let fx = fixture();
    let (v, rules, fa) = (
        &fx.v,
        fx.rules.to_str().expect("utf-8"),
        format!("flash-attention={}", fx.h.dir.display()),
    );
    let diff = |base: &str, head: &str, extra: &[&str]| {
        let mut args = vec!["diff", base, head, ".", "--rules", rules, "--repo", &fa];
        args.extend_from_slice(extra);
        pinprobe(&fx.vllm, &args)
    };
    let run = diff(&v[0], &v[1], &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("2 introduced"), "{}", run.stdout);
    assert_eq!(diff(&v[1], &v[2], &[]).code, 0, "kept does not fail");
    assert_eq!(diff(&v[2], &v[3], &[]).code, 0, "fixed does not fail");
    assert_eq!(diff(&v[0], &v[1], &["--fail-on", "never"]).code, 0);
    assert_eq!(diff(&v[0], &v[1], &["--fail-on", "critical"]).code, 0);

    // Markdown for a pull request: the pin change, the findings, the suggestion.
    let run = diff(&v[1], &v[2], &["--format", "markdown"]);
    assert!(
        run.stdout.starts_with("## pinprobe: pin bump"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("### Pins that changed"));
    assert!(run.stdout.contains("⚠️ kept"));
    // Kept findings are unchanged by the bump: folded below what it changes.
    let folded = run
        .stdout
        .split("<details>")
        .nth(1)
        .expect("folded section");
    assert!(folded.contains("⚠️ kept"), "{}", run.stdout);
    assert!(folded.contains("</details>"));
    assert!(run.stdout.contains(&format!("`GIT_TAG {}`", fx.h.fix)));
    assert!(run.stdout.contains("🔇"), "suppressed rows are shown");

    // JSON: versioned, counts, changes with rule and status, suppressed with the reason.
    let run = diff(&v[0], &v[1], &["--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(json["schema"], 1);
    assert_eq!(json["counts"]["introduced"], 2);
    let changes = json["changes"].as_array().expect("changes");
    assert!(changes.iter().any(|c| c["rule"] == R1
        && c["status"] == "affected"
        && c["base_status"] == "not_affected"
        && c["change"] == "introduced"));
    assert!(changes.iter().any(|c| c["suppressed"]["reason"]
        == "the synthetic history has none of its commits"
        && c["suppressed"]["expires"] == "2099-12-31"));

    // SARIF: every open finding at HEAD with its change; the suppressed ones are not results.
    let run = diff(&v[1], &v[2], &["--format", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(results.iter().all(|r| r["properties"]["change"] == "kept"));

    // Errors: a revision that does not exist, and a path that is not a repository.
    let run = diff("no-such-rev", &v[1], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("no-such-rev"), "{}", run.stderr);
}

#[test]
fn without_a_clone_an_undecided_new_pin_is_exit_3() {
    let fx = fixture();
    // No clone, no policy: c0 and introduce are unknown to every rule except by known pins.
    let run = pinprobe(
        &fx.vllm,
        &["diff", &fx.v[0], &fx.v[1], "--ignore", "/dev/null"],
    );
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}

// ---- self-approval: a change never suppresses or overrides its own findings (issue 20) ----

/// An ignore entry for `rule` on flash-attention, with optional extra YAML lines.
fn entry(rule: &str, extra: &str, expires: &str) -> String {
    format!(
        "  - rule: {rule}\n    component: flash-attention\n{extra}    reason: \"not built here\"\n    expires: {expires}\n"
    )
}

/// On a branch from `from`: write `files`, optionally bump the pin to `pin`, commit.
fn pr_commit(
    fx: &Fixture,
    from: &str,
    branch: &str,
    pin: Option<&str>,
    files: &[(&str, String)],
) -> String {
    git(&fx.vllm, &["checkout", "-q", "-B", branch, from]);
    for (rel, text) in files {
        write(&fx.vllm, rel, text);
    }
    if let Some(pin) = pin {
        vllm_tree(&fx.vllm, FA_REPO, pin);
    }
    commit(&fx.vllm, branch)
}

fn edit_kinds(r: &Review) -> Vec<(String, String, Option<usize>, bool)> {
    r.policy_edits
        .iter()
        .map(|e| {
            let v = serde_json::to_value(e).expect("json");
            (
                e.rule.clone(),
                format!(
                    "{}/{}",
                    v["kind"].as_str().unwrap_or(""),
                    v["edit"].as_str().unwrap_or("")
                ),
                e.matches,
                e.allowed,
            )
        })
        .collect()
}

#[test]
fn a_change_that_adds_an_ignore_entry_for_its_own_finding_does_not_suppress_it() {
    let fx = fixture();
    let base = fx.v[0].clone();
    let policy = format!(
        "{}{}{}",
        ignore_unrelated_builtins(),
        entry(R1, "", "2099-12-31"),
        entry(TEST_RULE, "", "2099-12-31")
    );
    let head = pr_commit(
        &fx,
        &base,
        "adds",
        Some(&fx.h.introduce),
        &[(".pinprobe.yaml", policy)],
    );

    let r = run_review(&fx, &base, &head);
    assert_eq!(change(&r, R1), Some(ChangeKind::Introduced));
    assert_eq!(
        r.counts.introduced, 2,
        "BASE's policy is used: {:#?}",
        r.changes
    );
    assert!(
        r.changes
            .iter()
            .filter(|c| c.change == ChangeKind::Introduced)
            .all(|c| c.suppressed.is_none())
    );
    assert_eq!(
        edit_kinds(&r),
        vec![
            (
                R1.to_string(),
                "ignore_entry/added".to_string(),
                Some(1),
                false
            ),
            (
                TEST_RULE.to_string(),
                "ignore_entry/added".to_string(),
                Some(1),
                false
            ),
        ]
    );
    assert_eq!(r.counts.policy_edits, 2);

    // Through the binary: the gate fails even with nothing else introduced at the threshold,
    // and the review says why.
    let rules = fx.rules.to_str().expect("utf-8");
    let fa = format!("flash-attention={}", fx.h.dir.display());
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", &base, &head, ".", "--rules", rules, "--repo", &fa];
        args.extend_from_slice(extra);
        pinprobe(&fx.vllm, &args)
    };
    let run = diff(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("2 introduced"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "review: this change adds an ignore entry for {R1} ("
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("fails the gate unless the workflow passes --allow-head-ignores")
    );
    let md = diff(&["--format", "markdown"]);
    assert!(
        md.stdout
            .contains("### Ignore entries and rules this change edits"),
        "{}",
        md.stdout
    );
    let json = diff(&["--format", "json"]).json();
    assert_eq!(json["counts"]["policy_edits"], 2);
    assert_eq!(json["policy_edits"][0]["kind"], "ignore_entry");
    assert_eq!(json["policy_edits"][0]["allowed"], false);

    // The workflow's explicit leave applies HEAD's policy; the items stay listed.
    let run = diff(&["--allow-head-ignores", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["counts"]["introduced"], 0);
    assert_eq!(json["policy_edits"][0]["allowed"], true);
    let r = run_review_with(&fx, &base, &head, true);
    assert!(
        r.changes
            .iter()
            .filter(|c| c.change == ChangeKind::Introduced)
            .all(|c| c.suppressed.is_some())
    );

    // --fail-on never turns the gate off altogether, as for findings.
    assert_eq!(diff(&["--fail-on", "never"]).code, 0);
}

#[test]
fn a_change_that_edits_or_widens_an_ignore_entry_does_not_suppress_its_own_finding() {
    let fx = fixture();
    // BASE: an entry for the test rule scoped to the old pin, and an expired one for R1.
    let narrow = format!("    pin: {}\n", &fx.h.c0[..12]);
    let base_policy = format!(
        "{}{}{}",
        ignore_unrelated_builtins(),
        entry(TEST_RULE, &narrow, "2099-12-31"),
        entry(R1, "", "2026-01-01")
    );
    let base = pr_commit(
        &fx,
        &fx.v[0],
        "base",
        None,
        &[(".pinprobe.yaml", base_policy)],
    );
    // HEAD: the bump, the scope dropped (widened) and the expiry pushed out.
    let head_policy = format!(
        "{}{}{}",
        ignore_unrelated_builtins(),
        entry(TEST_RULE, "", "2099-12-31"),
        entry(R1, "", "2099-12-31")
    );
    let head = pr_commit(
        &fx,
        &base,
        "widen",
        Some(&fx.h.introduce),
        &[(".pinprobe.yaml", head_policy)],
    );

    let r = run_review(&fx, &base, &head);
    assert_eq!(r.counts.introduced, 2, "{:#?}", r.changes);
    assert_eq!(
        edit_kinds(&r),
        vec![
            (
                TEST_RULE.to_string(),
                "ignore_entry/edited".to_string(),
                Some(1),
                false
            ),
            (
                R1.to_string(),
                "ignore_entry/edited".to_string(),
                Some(1),
                false
            ),
        ]
    );
    // BASE's own expired entry is warned about, and suppresses nothing.
    assert!(
        r.warnings.iter().any(|w| w.contains("expired")),
        "{:?}",
        r.warnings
    );

    // A HEAD policy identical to BASE's is no review item.
    let same = pr_commit(&fx, &base, "same", Some(&fx.h.introduce), &[]);
    let r = run_review(&fx, &base, &same);
    assert!(r.policy_edits.is_empty(), "{:#?}", r.policy_edits);
    let run = pinprobe(
        &fx.vllm,
        &[
            "diff",
            &base,
            &same,
            ".",
            "--rules",
            fx.rules.to_str().expect("utf-8"),
            "--repo",
            &format!("flash-attention={}", fx.h.dir.display()),
            "--fail-on",
            "critical",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = pinprobe(
        &fx.vllm,
        &[
            "diff",
            &base,
            &head,
            ".",
            "--rules",
            fx.rules.to_str().expect("utf-8"),
            "--repo",
            &format!("flash-attention={}", fx.h.dir.display()),
            "--fail-on",
            "critical",
        ],
    );
    assert_eq!(
        run.code, 1,
        "an edited entry fails the gate: {}{}",
        run.stdout, run.stderr
    );
}

#[test]
fn a_rules_directory_in_the_repository_is_read_at_base() {
    let fx = fixture();
    let rules_text = std::fs::read_to_string(fx.rules.join("test.yaml")).expect("test rule");
    let base = pr_commit(
        &fx,
        &fx.v[0],
        "rules-base",
        None,
        &[("pinprobe-rules/test.yaml", rules_text)],
    );
    // HEAD bumps into both bugs and, in the same change, overrides R1 and edits the test rule
    // so that neither range holds the new pin.
    let later = [("introduced", fx.h.c4.as_str())];
    let head = pr_commit(
        &fx,
        &base,
        "rules-head",
        Some(&fx.h.introduce),
        &[
            ("pinprobe-rules/r1.yaml", ancestry_rule(R1, &later)),
            ("pinprobe-rules/test.yaml", ancestry_rule(TEST_RULE, &later)),
        ],
    );
    let fa = format!("flash-attention={}", fx.h.dir.display());
    let diff = |extra: &[&str]| {
        let mut args = vec![
            "diff",
            &base,
            &head,
            ".",
            "--rules",
            "pinprobe-rules",
            "--repo",
            &fa,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        pinprobe(&fx.vllm, &args)
    };
    let run = diff(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["counts"]["introduced"], 2, "{}", run.stdout);
    let edits = json["policy_edits"].as_array().expect("policy_edits");
    let seen: Vec<(String, String, String)> = edits
        .iter()
        .map(|e| {
            (
                e["kind"].to_string(),
                e["edit"].to_string(),
                e["rule"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "\"rule_override\"".into(),
                "\"added\"".into(),
                format!("\"{R1}\"")
            ),
            (
                "\"rule_override\"".into(),
                "\"edited\"".into(),
                format!("\"{TEST_RULE}\"")
            ),
        ]
    );
    // The working tree holds HEAD's files: what is on disk is not what counts.
    assert!(fx.vllm.join("pinprobe-rules/r1.yaml").is_file());

    // With the workflow's leave, HEAD's rules apply: nothing introduced, the items listed.
    let run = diff(&["--allow-head-rules"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["counts"]["introduced"], 0, "{}", run.stdout);
    assert_eq!(json["policy_edits"][0]["allowed"], true);

    // A rules directory outside the tree is the workflow's: read from disk, no review items.
    let run = pinprobe(
        &fx.vllm,
        &[
            "diff",
            &base,
            &head,
            ".",
            "--rules",
            fx.rules.to_str().expect("utf-8"),
            "--repo",
            &fa,
            "--format",
            "json",
        ],
    );
    let json = run.json();
    assert!(json.get("policy_edits").is_none(), "{}", run.stdout);
}

/// A clone that lacks both pins (stale, shallow, another repository) still leaves the known
/// pins deciding: the bump from one known affected pin to another keeps the finding affected
/// on both sides (issue 15: v1 dropped it and exited 0), and a bump to the fix commit fixes it.
/// The evidence names the clone that was tried instead of saying "pass --repo".
#[test]
fn a_clone_lacking_both_pins_keeps_the_known_pins() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let stale = tmp.path().join("stale-clone");
    std::fs::create_dir_all(&stale).expect("mkdir");
    init(&stale);
    write(&stale, "README", "an unrelated history\n");
    commit(&stale, "unrelated");
    let vllm = tmp.path().join("vllm");
    std::fs::create_dir_all(&vllm).expect("mkdir");
    init(&vllm);
    let mut revs = Vec::new();
    for pin in [
        "506341a143fcabd4bb79052a7605ada727d6b3f5", // vLLM 0.30.0's (known affected)
        "9cd61de38763d712bb6ce56e2a02cc2bf718c89f", // vLLM main at the report (known affected)
        "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46", // the fix commit itself
    ] {
        vllm_tree(&vllm, FA_REPO, pin);
        revs.push(commit(&vllm, &format!("pin {pin}")));
    }
    let repo = format!("flash-attention={}", stale.display());
    let diff = |base: &str, head: &str| {
        let run = pinprobe(
            &vllm,
            &[
                "diff",
                base,
                head,
                ".",
                "--repo",
                &repo,
                "--format",
                "json",
                "--ignore",
                "/dev/null",
            ],
        );
        let json: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
        let r1 = json["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .find(|c| c["rule"] == R1)
            .cloned()
            .unwrap_or_else(|| panic!("R1 missing from the review: {}", run.stdout));
        (run.code, r1)
    };
    let (code, r1) = diff(&revs[0], &revs[1]);
    assert_eq!(r1["change"], "kept", "{r1:#}");
    assert_eq!(r1["status"], "affected", "{r1:#}");
    assert_eq!(r1["base_status"], "affected", "{r1:#}");
    assert_ne!(
        code, 0,
        "the other rules stay undecided on the new pin: fail closed"
    );
    let (_, r1) = diff(&revs[1], &revs[2]);
    assert_eq!(r1["change"], "fixed", "{r1:#}");

    let scan = pinprobe(
        &vllm,
        &[
            "scan",
            ".",
            "--rev",
            &revs[1],
            "--repo",
            &repo,
            "--format",
            "json",
            "--ignore",
            "/dev/null",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&scan.stdout).expect("json");
    let finding = json["targets"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == R1)
        .cloned()
        .expect("R1");
    assert_eq!(finding["status"], "affected", "{finding:#}");
    assert_eq!(finding["decided_by"], "known-pin", "{finding:#}");
    let details: Vec<&str> = finding["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["detail"].as_str())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("is not in the clone") && d.contains("would decide")),
        "{details:#?}"
    );
    assert!(
        !details.iter().any(|d| d.contains("pass --repo")),
        "a clone was passed: {details:#?}"
    );
}

/// An OpenVEX document with one `not_affected` statement per (rule, product).
fn vex_doc(statements: &[(&str, &str)]) -> String {
    let statements: Vec<serde_json::Value> = statements
        .iter()
        .map(|(rule, product)| {
            serde_json::json!({
                "vulnerability": {"name": rule},
                "products": [{"@id": product}],
                "status": "not_affected",
                "justification": "vulnerable_code_not_in_execute_path",
            })
        })
        .collect();
    serde_json::json!({
        "@context": "https://openvex.dev/ns/v0.2.0",
        "@id": "https://example.invalid/vex/1",
        "author": "test",
        "timestamp": "2026-06-01T00:00:00Z",
        "version": 1,
        "statements": statements,
    })
    .to_string()
}

#[test]
fn a_change_that_adds_or_widens_a_vex_statement_does_not_suppress_its_own_finding() {
    let fx = fixture();
    let base_rev = fx.v[0].clone();
    let product = "pkg:github/vllm-project/flash-attention".to_string();
    let at_c0 = format!("{product}@{}", fx.h.c0);
    // BASE holds a statement for R1 narrowed to the commit it pins (c0, not affected anyway).
    let base = pr_commit(
        &fx,
        &base_rev,
        "vex-base",
        None,
        &[("security/vex.json", vex_doc(&[(R1, &at_c0)]))],
    );
    // HEAD bumps to the introducing commit and widens R1's statement to every version and
    // adds one for the test rule.
    let head = pr_commit(
        &fx,
        &base,
        "vex-head",
        Some(&fx.h.introduce),
        &[(
            "security/vex.json",
            vex_doc(&[(R1, &product), (TEST_RULE, &product)]),
        )],
    );
    let rules = fx.rules.to_str().expect("utf-8");
    let repo = format!("flash-attention={}", fx.h.dir.display());
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", &base, &head, ".", "--rules", rules, "--repo", &repo];
        args.extend_from_slice(extra);
        pinprobe(&fx.vllm, &args)
    };

    // Without --vex the statements play no part.
    let plain = diff(&["--format", "json"]);
    assert_eq!(plain.code, 1, "{}{}", plain.stdout, plain.stderr);
    assert_eq!(
        plain.json()["counts"]["policy_edits"].as_u64().unwrap_or(0),
        0
    );

    // In the tree, BASE's document applies: the bump stays introduced and both statements
    // are review items that fail the gate.
    let run = diff(&["--vex", "security/vex.json", "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["counts"]["introduced"], 2, "{json:#}");
    assert_eq!(json["counts"]["policy_edits"], 2, "{json:#}");
    let edits: Vec<(String, String, u64, bool)> = json["policy_edits"]
        .as_array()
        .expect("edits")
        .iter()
        .map(|e| {
            (
                e["rule"].as_str().unwrap_or("").to_string(),
                format!(
                    "{}/{}",
                    e["kind"].as_str().unwrap_or(""),
                    e["edit"].as_str().unwrap_or("")
                ),
                e["matches"].as_u64().unwrap_or(99),
                e["allowed"].as_bool().unwrap_or(true),
            )
        })
        .collect();
    assert_eq!(
        edits,
        vec![
            (R1.to_string(), "vex_statement/edited".to_string(), 1, false),
            (
                TEST_RULE.to_string(),
                "vex_statement/added".to_string(),
                1,
                false
            ),
        ]
    );
    let table = diff(&["--vex", "security/vex.json"]);
    assert!(
        table.stdout.contains(&format!(
            "review: this change edits a VEX statement for {R1} ("
        )) && table
            .stdout
            .contains("fails the gate unless the workflow passes --allow-head-vex"),
        "{}",
        table.stdout
    );
    // An absolute path into the tree is the same document.
    let abs = fx.vllm.join("security/vex.json");
    let abs = abs.to_str().expect("utf-8");
    assert_eq!(diff(&["--vex", abs]).code, 1);

    // The workflow's explicit leave applies HEAD's statements; the items stay listed.
    let run = diff(&[
        "--vex",
        "security/vex.json",
        "--allow-head-vex",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(
        json["counts"]["introduced"].as_u64().unwrap_or(0),
        0,
        "{json:#}"
    );
    for rule in [R1, TEST_RULE] {
        let change = json["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .find(|c| c["rule"] == rule)
            .expect("the rule's change");
        assert!(
            change["suppressed"]["entry"]
                .as_str()
                .is_some_and(|e| e.contains("security/vex.json@") && e.contains("#statements[")),
            "{change:#}"
        );
    }
    assert_eq!(json["policy_edits"][0]["allowed"], true);

    // A document outside the tree is the workflow's: it applies as read, no review items.
    let outside = tempfile::tempdir().expect("tempdir");
    let doc = outside.path().join("vex.json");
    std::fs::write(&doc, vex_doc(&[(R1, &product), (TEST_RULE, &product)])).expect("write");
    let run = diff(&["--vex", doc.to_str().expect("utf-8"), "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.json()["counts"]["policy_edits"].as_u64().unwrap_or(0),
        0
    );

    // A HEAD document that is not OpenVEX is an error (exit 2), never a pass.
    let broken = pr_commit(
        &fx,
        &head,
        "vex-broken",
        None,
        &[("security/vex.json", "{\"statements\": []}".to_string())],
    );
    let mut args = vec![
        "diff", &base, &broken, ".", "--rules", rules, "--repo", &repo,
    ];
    args.extend_from_slice(&["--vex", "security/vex.json"]);
    let run = pinprobe(&fx.vllm, &args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("security/vex.json@"), "{}", run.stderr);
}

// ---- the same CMake evaluation on both revisions (issue 13) ----

/// On a branch from `from`: remove `remove`, write `files`, commit.
fn restructure(
    fx: &Fixture,
    from: &str,
    branch: &str,
    remove: &[&str],
    files: &[(&str, String)],
) -> String {
    git(&fx.vllm, &["checkout", "-q", "-B", branch, from]);
    for rel in remove {
        std::fs::remove_file(fx.vllm.join(rel)).expect("remove");
    }
    for (rel, text) in files {
        write(&fx.vllm, rel, text);
    }
    commit(&fx.vllm, branch)
}

fn top_including(files: &[&str]) -> String {
    let mut text = "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\n"
        .to_string();
    for f in files {
        text.push_str(&format!("include({f})\n"));
    }
    text
}

#[test]
fn moving_splitting_or_rerouting_the_declaration_is_judged_on_what_cmake_fetches() {
    let fx = fixture();
    let base = &fx.v[3]; // pins the fix
    let declared = "cmake/external_projects/vllm_flash_attn.cmake";
    // Moved to third_party/, at the introducing commit.
    let moved = restructure(
        &fx,
        base,
        "move",
        &[declared],
        &[
            (
                "third_party/x.cmake",
                fa_cmake(FA_REPO, &fx.h.introduce, None),
            ),
            ("CMakeLists.txt", top_including(&["third_party/x.cmake"])),
        ],
    );
    // Split: the tag set in third_party/, the declaration where it was.
    let split = restructure(
        &fx,
        base,
        "split",
        &[],
        &[
            (
                "third_party/fa_pin.cmake",
                format!("set(FA_PIN {})\n", fx.h.introduce),
            ),
            (declared, fa_cmake(FA_REPO, "${FA_PIN}", None)),
            (
                "CMakeLists.txt",
                top_including(&["third_party/fa_pin.cmake", declared]),
            ),
        ],
    );
    // Re-routed: the old file stays (still pinning the fix) but is no longer included; the
    // build fetches what third_party/x.cmake declares.
    let rerouted = restructure(
        &fx,
        base,
        "reroute",
        &[],
        &[
            (
                "third_party/x.cmake",
                fa_cmake(FA_REPO, &fx.h.introduce, None),
            ),
            ("CMakeLists.txt", top_including(&["third_party/x.cmake"])),
        ],
    );
    for (what, head) in [("move", &moved), ("split", &split), ("re-route", &rerouted)] {
        let r = run_review(&fx, base, head);
        assert_eq!(
            change(&r, TEST_RULE),
            Some(ChangeKind::Introduced),
            "{what}: {:#?}",
            r.changes
        );
        let pin = r
            .pins
            .iter()
            .find(|p| p.component == "flash-attention")
            .unwrap_or_else(|| panic!("{what}: the pin change is listed: {:#?}", r.pins));
        let head_side = pin.head.as_ref().expect("HEAD pins it");
        assert_eq!(
            head_side.commit.as_deref(),
            Some(fx.h.introduce.as_str()),
            "{what}"
        );
        let fa = format!("flash-attention={}", fx.h.dir.display());
        let rules = fx.rules.to_str().expect("utf-8");
        let run = pinprobe(
            &fx.vllm,
            &["diff", base, head, ".", "--rules", rules, "--repo", &fa],
        );
        assert_eq!(run.code, 1, "{what}: {}{}", run.stdout, run.stderr);
    }
    // The re-routed tree's old declaration is reached by no configuration: still reported,
    // unknown, with its file and line.
    let r = run_review(&fx, base, &rerouted);
    assert!(
        r.changes.iter().any(|c| c.rule == TEST_RULE
            && c.status == Status::Unknown
            && c.location.as_ref().is_some_and(|l| l.file == declared)),
        "{:#?}",
        r.changes
    );
}

// ---- the gate judges the head (issue 30): every cell of the change table on real histories ----

/// The README's pull-request workflow settings (`fail-on`, `fail-on-unknown` of the Action step
/// in examples/workflows/pull-request.yml, which the README shows), as diff flags.
fn readme_gate() -> Vec<String> {
    let workflow = common::documented_pull_request_workflow();
    let input = |name: &str| {
        workflow
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{name}:")))
            .and_then(|v| v.split('#').next())
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("the workflow sets {name}"))
    };
    vec![
        "--fail-on".into(),
        input("fail-on"),
        "--fail-on-unknown".into(),
        input("fail-on-unknown"),
    ]
}

#[test]
fn the_readme_workflow_settings_are_high_and_never() {
    // The cells below are judged under these; a workflow edit must be seen here.
    assert_eq!(
        readme_gate(),
        ["--fail-on", "high", "--fail-on-unknown", "never"]
    );
}

#[test]
fn every_cell_of_the_change_table_on_a_real_history() {
    let fx = fixture();
    let v = &fx.v;
    // Pins no clone has: undecided for every rule (offline, no known verdict).
    let undecided = "1111111111111111111111111111111111111111";
    let undecided2 = "2222222222222222222222222222222222222222";
    vllm_tree(&fx.vllm, FA_REPO, undecided);
    let u = commit(&fx.vllm, "pin a commit no clone has");
    vllm_tree(&fx.vllm, FA_REPO, undecided2);
    let u2 = commit(&fx.vllm, "pin another commit no clone has");
    // A BASE that pins nothing at all: undecided as a whole.
    std::fs::remove_file(
        fx.vllm
            .join("cmake/external_projects/vllm_flash_attn.cmake"),
    )
    .expect("remove");
    write(
        &fx.vllm,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\n",
    );
    let nothing = commit(&fx.vllm, "no FlashAttention yet");
    // A BASE (or HEAD) that is decided but has no FlashAttention: it pins QuTLASS alone (no
    // rule applies to it), so the test rule is absent there while the side is not undecided.
    write(
        &fx.vllm,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(FetchContent)\nFetchContent_Declare(qutlass\n  GIT_REPOSITORY https://github.com/IST-DASLab/qutlass.git\n  GIT_TAG 3333333333333333333333333333333333333333)\nFetchContent_MakeAvailable(qutlass)\n",
    );
    let other = commit(&fx.vllm, "QuTLASS only");
    // The undecided pin again, then a commit that moves no pin.
    vllm_tree(&fx.vllm, FA_REPO, undecided);
    let u_again = commit(&fx.vllm, "the undecided pin again");
    write(&fx.vllm, "NOTES.md", "no pin moves\n");
    let u_unmoved = commit(&fx.vllm, "a commit that moves no pin");

    let fa = format!("flash-attention={}", fx.h.dir.display());
    let rules = fx.rules.to_str().expect("utf-8");
    let readme = readme_gate();
    let run = |base: &str, head: &str, gate: &[String]| {
        let mut args = vec![
            "diff", base, head, ".", "--rules", rules, "--repo", &fa, "--format", "json",
        ];
        args.extend(gate.iter().map(String::as_str));
        pinprobe(&fx.vllm, &args)
    };
    let default_gate: Vec<String> = Vec::new();
    // (what, BASE, HEAD, the test rule's change and base_undecided (None: not listed), exit
    // under the default gate (low/low), exit under the README's (high/never)).
    type Cell<'a> = (&'a str, &'a str, &'a str, Option<(&'a str, bool)>, i32, i32);
    let cells: Vec<Cell> = vec![
        (
            "not affected -> affected",
            &v[0],
            &v[1],
            Some(("introduced", false)),
            1,
            1,
        ),
        (
            "affected -> affected",
            &v[1],
            &v[2],
            Some(("kept", false)),
            0,
            0,
        ),
        (
            "affected -> not affected",
            &v[2],
            &v[3],
            Some(("fixed", false)),
            0,
            0,
        ),
        ("not affected -> not affected", &v[3], &v[5], None, 0, 0),
        (
            "unknown -> affected",
            &u,
            &v[1],
            Some(("introduced", true)),
            1,
            1,
        ),
        (
            "unknown -> not affected",
            &u,
            &v[3],
            Some(("unknown", true)),
            0,
            0,
        ),
        (
            "unknown -> unknown, pin moved",
            &u,
            &u2,
            Some(("unknown", true)),
            3,
            0,
        ),
        (
            "affected -> unknown",
            &v[1],
            &u,
            Some(("unknown", false)),
            3,
            0,
        ),
        (
            "not affected -> unknown",
            &v[0],
            &u,
            Some(("unknown", false)),
            3,
            0,
        ),
        (
            "nothing -> affected",
            &nothing,
            &v[1],
            Some(("introduced", true)),
            1,
            1,
        ),
        (
            "nothing -> unknown",
            &nothing,
            &u,
            Some(("unknown", true)),
            3,
            0,
        ),
        ("nothing -> not affected", &nothing, &v[3], None, 0, 0),
        (
            "affected -> nothing",
            &v[1],
            &nothing,
            Some(("fixed", false)),
            3,
            0,
        ),
        (
            "unknown -> nothing",
            &u,
            &nothing,
            Some(("unknown", true)),
            3,
            0,
        ),
        (
            "unknown -> unknown, pin unmoved",
            &u_again,
            &u_unmoved,
            None,
            0,
            0,
        ),
        (
            "absent (decided) -> affected",
            &other,
            &v[1],
            Some(("introduced", false)),
            1,
            1,
        ),
        (
            "absent (decided) -> unknown",
            &other,
            &u,
            Some(("unknown", false)),
            3,
            0,
        ),
        (
            "absent (decided) -> not affected",
            &other,
            &v[3],
            None,
            0,
            0,
        ),
        (
            "affected -> absent (decided)",
            &v[1],
            &other,
            Some(("fixed", false)),
            0,
            0,
        ),
        (
            "unknown -> absent (decided)",
            &u,
            &other,
            Some(("unknown", true)),
            0,
            0,
        ),
        (
            "not affected -> absent (decided)",
            &v[3],
            &other,
            None,
            0,
            0,
        ),
    ];
    let (db, _) = pinprobe::rules::load(Some(&fx.rules)).expect("rules load");
    let repos = vec![("flash-attention".to_string(), fx.h.dir.clone())];
    let clones = Clones::open(&repos).expect("clone opens");
    let opts = Options {
        repos,
        ..Default::default()
    };
    for (what, base, head, want, default_code, readme_code) in cells {
        let r = run(base, head, &default_gate);
        let json = r.json();
        let got = json["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .find(|c| c["rule"] == TEST_RULE)
            .map(|c| {
                (
                    c["change"].as_str().unwrap_or_default().to_string(),
                    c["base_undecided"].as_bool().unwrap_or(false),
                )
            });
        assert_eq!(
            got,
            want.map(|(c, b)| (c.to_string(), b)),
            "{what}: {:#}",
            json["changes"]
        );
        assert_eq!(
            r.code, default_code,
            "{what}, default gate: {}{}",
            r.stdout, r.stderr
        );
        let r = run(base, head, &readme);
        assert_eq!(
            r.code, readme_code,
            "{what}, README gate: {}{}",
            r.stdout, r.stderr
        );
        // Every --fail-on x --fail-on-unknown on the same review: the exit code is the
        // documented exit table applied to each listed change.
        let req = review_request(&fx.vllm, base, head, &opts);
        let review = diff::review(&req, &db, &clones).expect("review succeeds");
        for a in FAIL_ON {
            for u in FAIL_ON {
                assert_eq!(
                    pinprobe::exit::for_diff(&review, Gate::new(a, Some(u))).code(),
                    documented_exit(&review, a, u),
                    "{what}, --fail-on {a:?} --fail-on-unknown {u:?}: {:#?}",
                    review.changes
                );
            }
        }
    }
}

use pinprobe::exit::{FailOn, Gate};

const FAIL_ON: [FailOn; 5] = [
    FailOn::Low,
    FailOn::Medium,
    FailOn::High,
    FailOn::Critical,
    FailOn::Never,
];

/// The exit code README.md's exit table gives a review, written out from the table (not from
/// the gate's code): 1 when an unallowed policy edit (unless `--fail-on never`) or an
/// unsuppressed `introduced` change at or above `--fail-on`; else 3 when an unsuppressed
/// `unknown` change, unknown at HEAD on a pin the change moved, is at or above
/// `--fail-on-unknown`, or HEAD pins nothing (unless `--fail-on-unknown never`); else 0.
fn documented_exit(r: &Review, a: FailOn, u: FailOn) -> i32 {
    let at_or_above = |s: pinprobe::model::Severity, t: FailOn| {
        let rank = |t: FailOn| match t {
            FailOn::Low => Some(0),
            FailOn::Medium => Some(1),
            FailOn::High => Some(2),
            FailOn::Critical => Some(3),
            FailOn::Never => None,
        };
        let sev = match s {
            pinprobe::model::Severity::Low => 0,
            pinprobe::model::Severity::Medium => 1,
            pinprobe::model::Severity::High => 2,
            pinprobe::model::Severity::Critical => 3,
        };
        rank(t).is_some_and(|t| sev >= t)
    };
    let open = r.changes.iter().filter(|c| c.suppressed.is_none());
    let fails = (a != FailOn::Never && r.policy_edits.iter().any(|e| !e.allowed))
        || open
            .clone()
            .any(|c| c.change == ChangeKind::Introduced && at_or_above(c.severity, a));
    let undecided = open.clone().any(|c| {
        c.change == ChangeKind::Unknown
            && c.status == Status::Unknown
            && c.pin_changed
            && at_or_above(c.severity, u)
    }) || (u != FailOn::Never && r.undecided.is_some());
    if fails {
        1
    } else if undecided {
        3
    } else {
        0
    }
}

/// The issue's scenario on a vLLM-shaped repository: BASE pins a commit nothing can decide
/// (offline, no clone); HEAD bumps FlashAttention to `506341a1` (vLLM 0.30.0's known-affected
/// pin). Under the README workflow's settings the gate fails and says the bump introduces
/// PINPROBE-2026-0001 over an undecided base.
#[test]
fn a_bump_to_a_known_affected_pin_over_an_undecided_base_fails_the_readme_gate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let vllm = tmp.path().join("vllm");
    init(&vllm);
    vllm_tree(&vllm, FA_REPO, "1111111111111111111111111111111111111111");
    commit(&vllm, "an undecided pin");
    vllm_tree(&vllm, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    commit(&vllm, "bump flash-attention to vLLM 0.30.0's pin");
    let mut args = vec!["diff", "HEAD~1", "HEAD"];
    let gate = readme_gate();
    args.extend(gate.iter().map(String::as_str));
    let run = Pinprobe::new(&args)
        .dir(&vllm)
        .env("PINPROBE_TODAY", "2026-06-01")
        .env("COLUMNS", "400")
        .run();
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(R1), "{}", run.stdout);
    assert!(run.stdout.contains("FAILS (exit 1)"), "{}", run.stdout);
    assert!(run.stdout.contains("base undecided"), "{}", run.stdout);
    args.extend(["--format", "json"]);
    let json = pinprobe(&vllm, &args).json();
    let c = json["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["rule"] == R1)
        .cloned()
        .expect("R1 listed");
    assert_eq!(c["change"], "introduced", "{c:#}");
    assert_eq!(c["status"], "affected");
    assert_eq!(c["base_status"], "unknown");
    assert_eq!(c["base_undecided"], true);
    // The Markdown lead says it as a sentence.
    args.truncate(args.len() - 2);
    args.extend(["--format", "markdown"]);
    let md = pinprobe(&vllm, &args).stdout;
    assert!(
        md.contains(&format!("introduces (affected; base undecided) `{R1}`")),
        "{md}"
    );
}

/// Opt-in, on the real vLLM 0.33.0 sdist (`PINPROBE_REAL_SDISTS=DIR` holding `vllm-0.33.0/`,
/// as for tests/cmake_real_sdists.rs): the tree committed as BASE, HEAD moving FlashAttention's
/// `GIT_TAG` to `506341a1`; the README's settings exit 1 and name PINPROBE-2026-0001.
#[test]
fn the_real_0_33_0_bump_to_the_0_30_0_pin_fails_the_readme_gate() {
    let dir = std::env::var_os("PINPROBE_REAL_SDISTS")
        .map(PathBuf::from)
        .filter(|d| d.join("vllm-0.33.0").is_dir());
    if !require::opt_in(
        dir.is_some(),
        "set PINPROBE_REAL_SDISTS=DIR (holding the unpacked vllm-0.33.0 sdist) to diff a bump on the real tree",
    ) {
        return;
    }
    let src = dir.expect("checked").join("vllm-0.33.0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let vllm = tmp.path().join("vllm");
    let out = std::process::Command::new("cp")
        .arg("-R")
        .arg(&src)
        .arg(&vllm)
        .output()
        .expect("cp");
    assert!(out.status.success());
    init(&vllm);
    commit(&vllm, "vLLM 0.33.0");
    let cmake = vllm.join("cmake/external_projects/vllm_flash_attn.cmake");
    let text = std::fs::read_to_string(&cmake).expect("the FA cmake file");
    let re = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    assert!(
        re.is_match(&text),
        "a full-SHA GIT_TAG in {}",
        cmake.display()
    );
    let bumped = re.replace(&text, "GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5");
    std::fs::write(&cmake, bumped.as_bytes()).expect("write");
    commit(&vllm, "bump flash-attention to vLLM 0.30.0's pin");
    let mut args = vec!["diff", "HEAD~1", "HEAD"];
    let gate = readme_gate();
    args.extend(gate.iter().map(String::as_str));
    let run = Pinprobe::new(&args).dir(&vllm).env("COLUMNS", "400").run();
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(R1), "{}", run.stdout);
    assert!(
        run.stdout.contains("unknown -> affected (base undecided)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("FAILS (exit 1)"), "{}", run.stdout);
}

/// The change table on a real-shaped tree: the bundled vLLM-shaped demo tree (FlashAttention
/// and FlashMLA pinned as vLLM pins them), offline and with no clone, so PINPROBE-2026-0001 is
/// decided by its known pins alone (the fix not affected, `506341a1` and `9cd61de3` affected)
/// and a pin nothing knows is undecided. Every cell's change for the rule, and the exit code
/// under every `--fail-on` x `--fail-on-unknown` against the documented exit table.
#[test]
fn every_cell_of_the_change_table_on_the_demo_tree() {
    const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    const AFFECTED2: &str = "9cd61de38763d712bb6ce56e2a02cc2bf718c89f";
    const U1: &str = "1111111111111111111111111111111111111111";
    const U2: &str = "2222222222222222222222222222222222222222";
    let tmp = tempfile::tempdir().expect("tempdir");
    let vllm = tmp.path().join("vllm");
    let copy = std::process::Command::new("cp")
        .arg("-R")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm"))
        .arg(&vllm)
        .status()
        .expect("cp");
    assert!(copy.success());
    init(&vllm);
    let fa_file = "cmake/external_projects/vllm_flash_attn.cmake";
    let top = std::fs::read_to_string(vllm.join("CMakeLists.txt")).expect("CMakeLists.txt");
    let fa_text = std::fs::read_to_string(vllm.join(fa_file)).expect("FA cmake");
    let tag = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    assert!(tag.is_match(&fa_text));
    let pin = |sha: &str, msg: &str| {
        write(&vllm, "CMakeLists.txt", &top);
        write(
            &vllm,
            fa_file,
            &tag.replace(&fa_text, format!("GIT_TAG {sha}").as_str()),
        );
        commit(&vllm, msg)
    };
    let n = pin(FIX, "the fix");
    let a = pin(AFFECTED, "vLLM 0.30.0's pin");
    let a2 = pin(AFFECTED2, "the other known affected pin");
    let n_again = pin(FIX, "the fix again");
    write(&vllm, "NOTES.md", "no pin moves\n");
    let n_unmoved = commit(&vllm, "moves no pin");
    let u = pin(U1, "a pin nothing decides");
    let u2 = pin(U2, "another pin nothing decides");
    let u_again = pin(U1, "the first undecided pin again");
    write(&vllm, "NOTES.md", "still no pin moves\n");
    let u_unmoved = commit(&vllm, "moves no pin");
    // FlashAttention gone, FlashMLA still pinned: decided, the rule absent.
    let without_fa: String = top
        .lines()
        .filter(|l| !l.contains("vllm_flash_attn.cmake"))
        .map(|l| format!("{l}\n"))
        .collect();
    write(&vllm, "CMakeLists.txt", &without_fa);
    // (The file goes too: a declaration left in the tree that no configuration reaches is
    // judged, undecided, as an unreached pin.)
    std::fs::remove_file(vllm.join(fa_file)).expect("remove");
    let other = commit(&vllm, "no FlashAttention");
    // Nothing pinned at all: undecided as a whole.
    let bare: String = top
        .lines()
        .filter(|l| !l.contains("external_projects/"))
        .map(|l| format!("{l}\n"))
        .collect();
    write(&vllm, "CMakeLists.txt", &bare);
    let _ = std::fs::remove_dir_all(vllm.join("cmake"));
    let nothing = commit(&vllm, "nothing pinned");

    type Cell<'a> = (&'a str, &'a str, &'a str, Option<(&'a str, bool)>);
    let cells: Vec<Cell> = vec![
        (
            "not affected -> affected",
            &n,
            &a,
            Some(("introduced", false)),
        ),
        ("affected -> affected", &a, &a2, Some(("kept", false))),
        (
            "affected -> not affected",
            &a2,
            &n_again,
            Some(("fixed", false)),
        ),
        ("not affected -> not affected", &n_again, &n_unmoved, None),
        ("unknown -> affected", &u, &a, Some(("introduced", true))),
        ("unknown -> not affected", &u, &n, Some(("unknown", true))),
        (
            "unknown -> unknown, pin moved",
            &u,
            &u2,
            Some(("unknown", true)),
        ),
        (
            "unknown -> unknown, pin unmoved",
            &u_again,
            &u_unmoved,
            None,
        ),
        ("affected -> unknown", &a, &u, Some(("unknown", false))),
        ("not affected -> unknown", &n, &u, Some(("unknown", false))),
        (
            "absent (decided) -> affected",
            &other,
            &a,
            Some(("introduced", false)),
        ),
        (
            "absent (decided) -> unknown",
            &other,
            &u,
            Some(("unknown", false)),
        ),
        ("absent (decided) -> not affected", &other, &n, None),
        (
            "affected -> absent (decided)",
            &a,
            &other,
            Some(("fixed", false)),
        ),
        (
            "unknown -> absent (decided)",
            &u,
            &other,
            Some(("unknown", true)),
        ),
        ("not affected -> absent (decided)", &n, &other, None),
        (
            "nothing -> affected",
            &nothing,
            &a,
            Some(("introduced", true)),
        ),
        ("nothing -> unknown", &nothing, &u, Some(("unknown", true))),
        ("nothing -> not affected", &nothing, &n, None),
        ("affected -> nothing", &a, &nothing, Some(("fixed", false))),
        ("unknown -> nothing", &u, &nothing, Some(("unknown", true))),
    ];
    let (db, _) = pinprobe::rules::load(None).expect("rules load");
    let clones = Clones::open(&[]).expect("no clones");
    let opts = Options::default();
    let readme = readme_gate();
    for (what, base, head, want) in cells {
        let req = review_request(&vllm, base, head, &opts);
        let review = diff::review(&req, &db, &clones).expect("review succeeds");
        let got = review
            .changes
            .iter()
            .find(|c| c.rule == R1)
            .map(|c| (c.change.to_string(), c.base_undecided));
        assert_eq!(
            got,
            want.map(|(c, b)| (c.to_string(), b)),
            "{what}: {:#?}",
            review.changes
        );
        for fail_on in FAIL_ON {
            for unknown in FAIL_ON {
                assert_eq!(
                    pinprobe::exit::for_diff(&review, Gate::new(fail_on, Some(unknown))).code(),
                    documented_exit(&review, fail_on, unknown),
                    "{what}, --fail-on {fail_on:?} --fail-on-unknown {unknown:?}: {:#?}",
                    review.changes
                );
            }
        }
        // The binary under the README's settings says the same, and only a bump that
        // introduces the rule fails them.
        let mut args = vec!["diff", base, head];
        args.extend(readme.iter().map(String::as_str));
        let run = Pinprobe::new(&args)
            .dir(&vllm)
            .env("PINPROBE_OFFLINE", "1")
            .env("PINPROBE_TODAY", "2026-06-01")
            .run();
        let introduced = want.is_some_and(|(c, _)| c == "introduced");
        assert_eq!(
            run.code,
            i32::from(introduced),
            "{what}, README gate: {}{}",
            run.stdout,
            run.stderr
        );
    }
}

// ---- HEAD's evaluation starts from BASE's runs (issue 30: a review costs about one scan) ----

/// A vLLM-shaped top-level file: settings and decisions on inputs, helper functions from an
/// included file, the kernel projects included last under a condition, FlashAttention last of
/// all (as vLLM 0.33.0 does).
const SHAPED_TOP: &str = r#"cmake_minimum_required(VERSION 3.26)
project(vllm_extensions LANGUAGES CXX)
set(VLLM_TARGET_DEVICE "cuda" CACHE STRING "Target device backend for vLLM")
include(${CMAKE_CURRENT_LIST_DIR}/cmake/utils.cmake)
if(NOT VLLM_TARGET_DEVICE STREQUAL "cuda" AND NOT VLLM_TARGET_DEVICE STREQUAL "rocm")
  if(VLLM_TARGET_DEVICE STREQUAL "cpu")
    include(${CMAKE_CURRENT_LIST_DIR}/cmake/cpu_extension.cmake)
  else()
    return()
  endif()
  return()
endif()
if(VLLM_TARGET_DEVICE STREQUAL "rocm")
  set(VLLM_GPU_LANG "HIP")
else()
  set(VLLM_GPU_LANG "CUDA")
endif()
vllm_set_arches(VLLM_GPU_ARCHES "8.0;9.0;10.0")
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/csrc/extra_kernels.cmake)
  set(VLLM_EXTRA ON)
endif()
include(FetchContent)
if(VLLM_GPU_LANG STREQUAL "CUDA")
  include(cmake/external_projects/flashmla.cmake)
  include(cmake/external_projects/vllm_flash_attn.cmake)
endif()
"#;

const SHAPED_UTILS: &str = r#"function(vllm_set_arches OUT LIST)
  set(_arches "")
  foreach(_a IN LISTS LIST)
    string(REPLACE "." "" _a "${_a}")
    list(APPEND _arches "${_a}")
  endforeach()
  set(${OUT} "${_arches}" PARENT_SCOPE)
endfunction()
macro(vllm_note MSG)
  message(STATUS "${MSG}")
endmacro()
"#;

/// HEAD's report in a review is HEAD's own scan, for a bump of FlashAttention, a bump of
/// the project included before it, a file added that the top-level file asks about, a
/// settings edit in the included helpers, a documentation edit and the way back: HEAD's
/// runs start from BASE's where everything they consulted is the same, and that must change
/// nothing. The bump is also checked to share (runs and included files taken from BASE's).
#[test]
fn heads_report_in_a_review_is_heads_own_scan() {
    const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
    const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    let tmp = tempfile::tempdir().expect("tempdir");
    let vllm = tmp.path().join("vllm");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm");
    init(&vllm);
    let fa_file = "cmake/external_projects/vllm_flash_attn.cmake";
    let mla_file = "cmake/external_projects/flashmla.cmake";
    let fa_text = std::fs::read_to_string(demo.join(fa_file)).expect("FA cmake");
    let mla_text = std::fs::read_to_string(demo.join(mla_file)).expect("FlashMLA cmake");
    let tag = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    assert!(tag.is_match(&fa_text));
    write(&vllm, "CMakeLists.txt", SHAPED_TOP);
    write(&vllm, "cmake/utils.cmake", SHAPED_UTILS);
    write(&vllm, "cmake/cpu_extension.cmake", "set(CPU_KERNELS ON)\n");
    write(&vllm, mla_file, &mla_text);
    let fa_at = |sha: &str| {
        tag.replace(&fa_text, format!("GIT_TAG {sha}").as_str())
            .into_owned()
    };
    write(&vllm, fa_file, &fa_at(FIX));
    write(&vllm, "README.md", "vLLM-shaped\n");
    let base = commit(&vllm, "base: the fix");
    write(&vllm, fa_file, &fa_at(AFFECTED));
    let bump = commit(&vllm, "bump FlashAttention to vLLM 0.30.0's pin");
    write(
        &vllm,
        mla_file,
        &mla_text.replace(
            "a6ec2ba7bd0a7dff98b3f4d3e6b52b159c48d78b",
            "1111111111111111111111111111111111111111",
        ),
    );
    let mla = commit(&vllm, "bump FlashMLA");
    write(&vllm, "csrc/extra_kernels.cmake", "set(EXTRA ON)\n");
    let added = commit(&vllm, "a file the top-level file asks about");
    write(
        &vllm,
        "cmake/utils.cmake",
        &SHAPED_UTILS.replace("string(REPLACE \".\" \"\"", "string(REPLACE \".\" \"_\""),
    );
    let utils = commit(&vllm, "the helpers compute the arches differently");
    write(&vllm, "README.md", "vLLM-shaped, documented\n");
    let docs = commit(&vllm, "docs");

    let (db, _) = pinprobe::rules::load(None).expect("rules load");
    let clones = Clones::open(&[]).expect("no clones");
    let opts = Options::default();
    let pairs = [
        (&base, &bump),
        (&bump, &base),
        (&bump, &mla),
        (&mla, &added),
        (&added, &utils),
        (&utils, &docs),
        (&base, &docs),
    ];
    for (b, h) in pairs {
        let req = review_request(&vllm, b, h, &opts);
        let review = diff::review(&req, &db, &clones).expect("review succeeds");
        let scan = scan_tree(&vllm, None, None, Some(h));
        let json = |r: &pinprobe::model::TargetReport| {
            serde_json::to_string_pretty(r).expect("a report serialises")
        };
        assert_eq!(
            json(&review.head_report),
            json(&scan),
            "{b}..{h}: HEAD's report in the review is not HEAD's scan"
        );
    }

    // The bump shares: HEAD's runs start from BASE's, and FlashMLA's file is taken as BASE
    // evaluated it.
    let base_view = pinprobe::view::open(&vllm, Some(&base)).expect("BASE opens");
    let head_view = pinprobe::view::open(&vllm, Some(&bump)).expect("HEAD opens");
    let sharing = pinprobe::pin::cmake::Sharing::record();
    pinprobe::pin::cmake::evaluate(base_view.as_ref()).expect("BASE evaluates");
    sharing.resume();
    let shared = pinprobe::pin::cmake::evaluate(head_view.as_ref()).expect("HEAD evaluates");
    let (runs, statements, files) = sharing.shared();
    drop(sharing);
    assert!(
        runs > 0 && statements > 0 && files > 0,
        "nothing shared: {runs} runs, {statements} statements, {files} included files"
    );
    let fresh = pinprobe::pin::cmake::evaluate(head_view.as_ref()).expect("HEAD evaluates");
    assert_eq!(
        serde_json::to_string(&shared).expect("serialises"),
        serde_json::to_string(&fresh).expect("serialises")
    );
}
