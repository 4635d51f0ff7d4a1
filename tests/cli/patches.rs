//! Declared patches (`PATCH_COMMAND git apply x.patch`, `patch -p1 < x.patch`): pinprobe's
//! application judged against real `git apply` and GNU `patch` on generated patches, and the
//! findings of pins whose patches touch a rule's fix, touch only other files, or do not apply.

use pinprobe::resolve::apply::{self, Tool};
use std::path::Path;
use std::process::Command;

/// A small deterministic generator (xorshift), so a failing case can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Lines from a small vocabulary, so contexts repeat and the tools must choose among matches.
fn line(rng: &mut Rng) -> String {
    const WORDS: [&str; 6] = ["a", "b", "c", "x = 1", "", "    return y"];
    if rng.chance(40) {
        format!("line {}\n", rng.below(1000))
    } else {
        format!("{}\n", WORDS[rng.below(WORDS.len())])
    }
}

fn text(lines: &[String], final_newline: bool) -> String {
    let mut t = lines.concat();
    if !final_newline && t.ends_with('\n') {
        t.pop();
    }
    t
}

/// Random edits of `lines`: replaced, inserted and deleted runs.
fn edit(rng: &mut Rng, lines: &[String], edits: usize) -> Vec<String> {
    let mut out = lines.to_vec();
    for _ in 0..edits {
        let at = rng.below(out.len() + 1);
        match rng.below(3) {
            0 if at < out.len() => {
                let n = 1 + rng.below(2);
                out.drain(at..(at + n).min(out.len()));
            }
            1 if at < out.len() => out[at] = line(rng),
            _ => {
                for _ in 0..1 + rng.below(3) {
                    out.insert(at, line(rng));
                }
            }
        }
    }
    out
}

/// Run `program ARGS` in `dir`; whether it succeeded, with its stderr.
fn run_tool(dir: &Path, program: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program} runs (a test prerequisite): {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What a real tool makes of `target` (`None`: absent) with the patch: the file after, or
/// `Err` when the tool fails.
fn real(tool: &[&str], patch: &str, target: Option<&str>) -> Result<Option<String>, String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("src")).expect("mkdir");
    if let Some(t) = target {
        std::fs::write(work.join("src/f.py"), t).expect("write");
    }
    let patch_file = tmp.path().join("x.patch");
    std::fs::write(&patch_file, patch).expect("write");
    let mut args: Vec<&str> = tool[1..].to_vec();
    let p = patch_file.to_string_lossy().into_owned();
    args.push(&p);
    let (ok, stderr) = run_tool(&work, tool[0], &args);
    if !ok {
        return Err(stderr);
    }
    Ok(std::fs::read_to_string(work.join("src/f.py")).ok())
}

fn ours(patch: &str, target: Option<&str>, tool: Tool) -> Result<Option<String>, String> {
    let parts = apply::parse("x.patch", patch)?;
    let mut file = target.map(str::to_string);
    for part in &parts {
        file = apply::apply(part, file.as_deref(), tool)?;
    }
    Ok(file)
}

const GIT_APPLY: &[&str] = &["git", "apply"];
const GNU_STRICT: &[&str] = &[
    "patch",
    "-p1",
    "--fuzz=0",
    "-f",
    "-s",
    "--no-backup-if-mismatch",
    "-r",
    "-",
    "-i",
];
const GNU_DEFAULT: &[&str] = &[
    "patch",
    "-p1",
    "-f",
    "-s",
    "--no-backup-if-mismatch",
    "-r",
    "-",
    "-i",
];

/// One generated case: a file, an edit of it as a unified diff (by `diff -U N`), and the file
/// the patch is applied to (the original, or one edited further: offsets, lost context).
fn case(seed: u64) -> (String, Option<String>) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = rng.below(24);
    let base: Vec<String> = (0..n).map(|_| line(&mut rng)).collect();
    let final_newline = !rng.chance(15);
    let creates = base.is_empty();
    let edits = 1 + rng.below(3);
    let changed = edit(&mut rng, &base, edits);
    let changed_newline = if rng.chance(10) {
        !final_newline
    } else {
        final_newline
    };
    let context = rng.below(4);
    let tmp = tempfile::tempdir().expect("tempdir");
    let old = tmp.path().join("old");
    let new = tmp.path().join("new");
    std::fs::write(&old, text(&base, final_newline)).expect("write");
    std::fs::write(&new, text(&changed, changed_newline)).expect("write");
    let old_label = if creates { "/dev/null" } else { "a/src/f.py" };
    let out = Command::new("diff")
        .arg(format!("-U{context}"))
        .args(["--label", old_label, "--label", "b/src/f.py"])
        .arg(&old)
        .arg(&new)
        .output()
        .expect("diff runs (a test prerequisite)");
    let mut patch = String::from_utf8_lossy(&out.stdout).into_owned();
    if rng.chance(30) {
        patch = uneven(&mut rng, &patch);
    }
    let target = if creates {
        None
    } else if rng.chance(50) {
        Some(text(&base, final_newline))
    } else {
        let edits = 1 + rng.below(3);
        let drifted = edit(&mut rng, &base, edits);
        Some(text(&drifted, final_newline))
    };
    (patch, target)
}

/// The patch with some hunks' context cut unevenly (leading or trailing lines dropped, the
/// header's counts kept right): hunks no `diff` writes, where the tools anchor differently.
fn uneven(rng: &mut Rng, patch: &str) -> String {
    let mut out = String::new();
    let mut hunks: Vec<(String, Vec<String>)> = Vec::new();
    for l in patch.split_inclusive('\n') {
        if l.starts_with("@@ ") {
            hunks.push((l.to_string(), Vec::new()));
        } else if let Some((_, body)) = hunks.last_mut() {
            body.push(l.to_string());
        } else {
            out.push_str(l);
        }
    }
    for (header, mut body) in hunks {
        let ctx = |l: &String| l.starts_with(' ');
        let lead = body.iter().take_while(|l| ctx(l)).count();
        let trail = body.iter().rev().take_while(|l| ctx(l)).count();
        let (mut cut_lead, mut cut_trail) = (0, 0);
        if lead == body.len() || !rng.chance(60) {
        } else if rng.chance(50) {
            cut_lead = rng.below(lead + 1);
        } else {
            cut_trail = rng.below(trail + 1);
        }
        body.drain(..cut_lead);
        let keep = body.len() - cut_trail;
        // A `\ No newline` marker after a dropped line goes with it.
        body.truncate(keep);
        if cut_trail > 0 && body.last().is_some_and(|l| l.starts_with('\\')) {
            body.pop();
        }
        let old = body
            .iter()
            .filter(|l| !l.starts_with('+') && !l.starts_with('\\'))
            .count();
        let new = body
            .iter()
            .filter(|l| !l.starts_with('-') && !l.starts_with('\\'))
            .count();
        let ranges = header.trim_start_matches("@@ -");
        let ranges = ranges.split(" @@").next().unwrap_or("");
        let (old_range, new_range) = ranges.split_once(" +").unwrap_or((ranges, ""));
        let first = |r: &str| {
            r.split(',')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let (a, c): (usize, usize) = (first(old_range), first(new_range));
        let start = |n: usize| if n == 0 { 0 } else { n + cut_lead };
        out.push_str(&format!("@@ -{},{old} +{},{new} @@\n", start(a), start(c)));
        out.extend(body);
    }
    out
}

/// pinprobe's application against the real tools on generated cases: for `git apply` the same
/// answer (the same file, or both fail); for GNU `patch` with no fuzz the same answer, and with
/// its default fuzz never a different file where pinprobe gives one. A case pinprobe says it
/// does not model is counted, and must stay rare.
#[test]
fn application_agrees_with_git_apply_and_gnu_patch() {
    let (mut compared, mut not_modelled, mut applied) = (0, 0, 0);
    // More cases on demand: PINPROBE_PATCH_CASES=5000.
    let cases: u64 = std::env::var("PINPROBE_PATCH_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    for seed in 1..=cases {
        let (patch, target) = case(seed);
        if patch.is_empty() {
            continue;
        }
        compared += 1;
        let replay = format!("seed {seed}\npatch:\n{patch}\ntarget: {target:?}");
        for (tool, real_tool) in [(Tool::GitApply, GIT_APPLY), (Tool::GnuPatch, GNU_STRICT)] {
            let mine = ours(&patch, target.as_deref(), tool);
            if let Err(e) = &mine
                && e.contains("not modelled")
            {
                not_modelled += 1;
                continue;
            }
            let theirs = real(real_tool, &patch, target.as_deref());
            match (&mine, &theirs) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{tool}: different files\n{replay}");
                    applied += 1;
                }
                (Err(_), Err(_)) => {}
                _ => panic!("{tool}: pinprobe {mine:?}, the tool {theirs:?}\n{replay}"),
            }
            if tool == Tool::GnuPatch
                && let Ok(a) = &mine
            {
                let fuzzy = real(GNU_DEFAULT, &patch, target.as_deref());
                assert_eq!(fuzzy.as_ref().ok(), Some(a), "patch with fuzz\n{replay}");
            }
        }
    }
    eprintln!("{compared} cases, {applied} applied alike, {not_modelled} not modelled");
    assert!(compared * 10 > cases as usize * 9, "{compared} cases");
    assert!(applied > compared / 2, "{applied} applied of {compared}");
    assert!(
        not_modelled * 10 < compared,
        "{not_modelled} of {compared} not modelled"
    );
}

use crate::common::*;
use pinprobe::model::{EvidenceKind, Finding, Status, TargetReport};

const R1: &str = "PINPROBE-2026-0001";
const TEST_RULE: &str = "TEST-SPLITKV-ANCESTRY";
const PATCH_DIR: &str = "cmake/external_projects/patches";

fn fixture() -> AncestryFixture {
    AncestryFixture::new(TEST_RULE)
}

/// A vLLM-shaped tree pinning `tag` whose patch step applies `patch` (name, text; `None`: the
/// file is declared but not in the tree).
fn patched_tree(
    fx: &AncestryFixture,
    name: &str,
    tag: &str,
    patch: (&str, Option<&str>),
) -> std::path::PathBuf {
    let tree = fx.root.join(name);
    vllm_tree(&tree, FA_REPO, tag);
    write(
        &tree,
        "cmake/external_projects/vllm_flash_attn.cmake",
        &fa_cmake(FA_REPO, tag, Some(patch.0)),
    );
    if let Some(text) = patch.1 {
        write(&tree, &format!("{PATCH_DIR}/{}", patch.0), text);
    }
    tree
}

fn scan_with(fx: &AncestryFixture, tree: &Path, with_clone: bool) -> TargetReport {
    let clone = with_clone.then_some(fx.history.dir.as_path());
    scan_tree(tree, clone, Some(&fx.rules), None)
}

fn detail(f: &Finding, kind: EvidenceKind) -> String {
    f.evidence
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.detail.clone())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A pin that contains the fix, with a patch that reverts it (the revert commit's own patch, as
/// `git format-patch` writes it): the signature reads the patched source and finds the bug;
/// the ancestry-only rule cannot call the pinned commit clean any more. Never not_affected.
#[test]
fn a_patch_that_reverts_the_fix_is_never_not_affected() {
    let fx = fixture();
    let h = &fx.history;
    let revert = git(&h.dir, &["format-patch", "-1", "--stdout", &h.revert]);
    let tree = patched_tree(&fx, "reverted", &h.c4, ("revert-fix.patch", Some(&revert)));
    let report = scan_with(&fx, &tree, true);
    let r1 = finding(&report, R1);
    assert_eq!(r1.status, Status::Affected, "{r1:#?}");
    assert_eq!(r1.decided_by, Some(EvidenceKind::Signature));
    assert!(
        detail(r1, EvidenceKind::Signature)
            .contains("with cmake/external_projects/patches/revert-fix.patch applied"),
        "{r1:#?}"
    );
    let t = finding(&report, TEST_RULE);
    assert_eq!(t.status, Status::Unknown, "{t:#?}");
    let why = detail(t, EvidenceKind::Ancestry);
    assert!(
        why.contains(
            "revert-fix.patch changes flash_attn/cute/flash_fwd_sm90.py, which the rule's fix"
        ),
        "{why}"
    );
    // The unpatched pin is clean by both.
    let clean = fx.root.join("clean");
    vllm_tree(&clean, FA_REPO, &h.c4);
    let report = scan_with(&fx, &clean, true);
    assert_eq!(finding(&report, R1).status, Status::NotAffected);
    assert_eq!(finding(&report, TEST_RULE).status, Status::NotAffected);
    // Without a clone, the pin that is the fix commit itself is clean only unpatched: which
    // files the fix changed is not known, so the patch leaves it undecided.
    let at_fix = patched_tree(&fx, "at-fix", &h.fix, ("revert-fix.patch", Some(&revert)));
    let report = scan_with(&fx, &at_fix, false);
    let t = finding(&report, TEST_RULE);
    assert_eq!(t.status, Status::Unknown, "{t:#?}");
    assert!(
        detail(t, EvidenceKind::KnownPin)
            .contains("no clone tells which files the rule's fix changed"),
        "{t:#?}"
    );
    let bare = fx.root.join("bare-fix");
    vllm_tree(&bare, FA_REPO, &h.fix);
    assert_eq!(
        finding(&scan_with(&fx, &bare, false), TEST_RULE).status,
        Status::NotAffected
    );
}

/// A patch that touches only files neither the fix nor the introduction changed leaves ancestry
/// to decide, and the signature reads the patched files.
#[test]
fn a_patch_of_unrelated_files_leaves_ancestry_to_decide() {
    let fx = fixture();
    let h = &fx.history;
    let unrelated = "--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n@@ -1 +1,2 @@\n fixed split-kv\n+patched for this build\n";
    let tree = patched_tree(
        &fx,
        "unrelated",
        &h.c4,
        ("changelog.patch", Some(unrelated)),
    );
    let report = scan_with(&fx, &tree, true);
    let t = finding(&report, TEST_RULE);
    assert_eq!(
        (t.status, t.decided_by),
        (Status::NotAffected, Some(EvidenceKind::Ancestry)),
        "{t:#?}"
    );
    assert_eq!(finding(&report, R1).status, Status::NotAffected);
}

/// A patch that does not apply (its context is not in the pinned file), and one declared but
/// missing from the tree: the build's patch step fails, so nothing about the pinned commit is
/// clean; the finding is unknown and names the patch.
#[test]
fn a_patch_that_does_not_apply_is_unknown_and_named() {
    let fx = fixture();
    let h = &fx.history;
    let stale = "--- a/flash_attn/cute/flash_fwd_sm90.py\n+++ b/flash_attn/cute/flash_fwd_sm90.py\n@@ -1,3 +1,3 @@\n-from flash_attn.cute.block_info import Missing\n+from flash_attn.cute.block_info import BlockInfo\n \n \n";
    for (name, text, why) in [
        (
            "stale.patch",
            Some(stale),
            "stale.patch: hunk 1 does not apply to flash_attn/cute/flash_fwd_sm90.py",
        ),
        (
            "gone.patch",
            None,
            "gone.patch is declared by the patch step but is not in the tree",
        ),
    ] {
        let tree = patched_tree(&fx, name, &h.c4, (name, text));
        let report = scan_with(&fx, &tree, true);
        for rule in [R1, TEST_RULE] {
            let f = finding(&report, rule);
            assert_eq!(f.status, Status::Unknown, "{rule}: {f:#?}");
            let all = detail(f, EvidenceKind::Signature) + &detail(f, EvidenceKind::Ancestry);
            assert!(all.contains(why), "{rule}: {all}");
        }
    }
}

/// `pinprobe diff`: a pull request that adds a patch reverting the fix to a clean pin does not
/// pass the gate.
#[test]
fn a_pull_request_adding_a_reverting_patch_does_not_pass() {
    let fx = fixture();
    let h = &fx.history;
    let vllm = fx.root.join("vllm");
    init(&vllm);
    vllm_tree(&vllm, FA_REPO, &h.c4);
    let base = commit(&vllm, "pin the fix");
    let revert = git(&h.dir, &["format-patch", "-1", "--stdout", &h.revert]);
    write(
        &vllm,
        "cmake/external_projects/vllm_flash_attn.cmake",
        &fa_cmake(FA_REPO, &h.c4, Some("local.patch")),
    );
    write(&vllm, &format!("{PATCH_DIR}/local.patch"), &revert);
    let head = commit(&vllm, "a local patch");
    let rules = fx.rules.to_str().expect("utf-8");
    let fa = format!("flash-attention={}", h.dir.display());
    let run = Pinprobe::new(&[
        "diff", &base, &head, ".", "--rules", rules, "--repo", &fa, "--format", "json",
    ])
    .dir(&vllm)
    .env("PINPROBE_TODAY", "2026-06-01")
    .run();
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let changes = json["changes"].as_array().expect("changes");
    assert!(
        changes.iter().any(|c| c["rule"] == R1
            && c["status"] == "affected"
            && c["base_status"] == "not_affected"),
        "{changes:#?}"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["rule"] == TEST_RULE && c["status"] == "unknown"),
        "{changes:#?}"
    );
}
