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
fn real(
    tool: &[&str],
    patch: &str,
    target: Option<&str>,
) -> Result<Option<String>, String> {
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
    let patch = String::from_utf8_lossy(&out.stdout).into_owned();
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

/// pinprobe's application against the real tools on generated cases: for `git apply` the same
/// answer (the same file, or both fail); for GNU `patch` with no fuzz the same answer, and with
/// its default fuzz never a different file where pinprobe gives one. A case pinprobe says it
/// does not model is counted, and must stay rare.
#[test]
fn application_agrees_with_git_apply_and_gnu_patch() {
    let (mut compared, mut not_modelled, mut applied) = (0, 0, 0);
    for seed in 1..=400u64 {
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
    assert!(compared > 300, "{compared} cases");
    assert!(applied > compared / 2, "{applied} applied of {compared}");
    assert!(
        not_modelled * 10 < compared,
        "{not_modelled} of {compared} not modelled"
    );
}
