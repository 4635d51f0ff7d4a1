//! Runs shared between two revisions (`pinprobe diff`, [`cmake::Sharing`]) against a fresh
//! evaluation: for generated programs (the generator above) and a random edit of one line of
//! the program, of one included file or of a file the program reads, or of the build scripts'
//! `-D` settings, the edited tree's evaluation that starts from the original's recorded runs is
//! the edited tree's fresh evaluation: every configuration (its fetches, the conditions it
//! took, how it failed, the files it could not read), the unreached declarations and the
//! undecided reason, or the same error; whether the recording knew what the edit changed (then
//! it keeps only the states a run of the edited tree can start from) or not. No CMake needed.
//!
//! `PINPROBE_SHARE_CASES=N` sets the number of cases (default 150: a few seconds).

use super::Gen;
use pinprobe::model::TargetKind;
use pinprobe::pin::cmake::{self, Changed, Sharing};
use pinprobe::view::MemView;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const TAGS: &[&str] = super::TAGS;

fn view(files: &BTreeMap<String, String>) -> MemView {
    let mut v = MemView::new("generated", TargetKind::SourceTree);
    for (p, t) in files {
        v.insert(p.clone(), t.as_bytes().to_vec());
    }
    v
}

/// The evaluation as JSON, or the error.
fn outcome(files: &BTreeMap<String, String>) -> String {
    match cmake::evaluate(&view(files)) {
        Ok(e) => serde_json::to_string_pretty(&e).expect("an evaluation serialises"),
        Err(e) => format!("error: {e}"),
    }
}

/// A tag in `line` swapped for another, if it holds one.
fn swap_tag(rng: &mut StdRng, line: &str) -> Option<String> {
    let found: Vec<&str> = TAGS.iter().copied().filter(|t| line.contains(t)).collect();
    let old = *found.get(rng.random_range(0..found.len().max(1)))?;
    let new = TAGS[rng.random_range(0..TAGS.len())];
    Some(line.replacen(old, new, 1))
}

/// The tree with one random edit, and what the edit was.
fn edit(
    rng: &mut StdRng,
    seed: u64,
    files: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, String) {
    let mut out = files.clone();
    let names: Vec<String> = files.keys().cloned().collect();
    let file = names[rng.random_range(0..names.len())].clone();
    let text = files[&file].clone();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = rng.random_range(0..lines.len().max(1));
    let what = match rng.random_range(0..8) {
        // A value changed (a pin bump, a setting).
        0 | 1 => match lines.get(at).and_then(|l| swap_tag(rng, l)) {
            Some(l) => {
                lines[at] = l;
                format!("{file}:{}: a tag changed", at + 1)
            }
            None => {
                lines.insert(at, format!("set(V{} {})", rng.random_range(0..4), TAGS[0]));
                format!("{file}:{}: a set() added", at + 1)
            }
        },
        // A statement added.
        2 => {
            let v = rng.random_range(0..4);
            let t = TAGS[rng.random_range(0..TAGS.len())];
            lines.insert(at, format!("set(V{v} {t})"));
            format!("{file}:{}: set(V{v} {t}) added", at + 1)
        }
        // A line removed (possibly leaving a block open: then both fail alike).
        3 => {
            if at < lines.len() {
                lines.remove(at);
            }
            format!("{file}:{}: a line removed", at + 1)
        }
        // A line replaced by a generated statement.
        4 => {
            let mut g = Gen::new(seed ^ 0x5eed, seed % 2 == 1);
            // Files of its own (an include of the file being edited recurses 200 deep).
            g.counter = 1_000;
            let mut stmt = Vec::new();
            g.stmt(2, &mut stmt);
            for (p, t) in std::mem::take(&mut g.files) {
                out.entry(p).or_insert(t);
            }
            if at < lines.len() {
                lines.splice(at..=at, stmt);
            } else {
                lines.extend(stmt);
            }
            format!(
                "{file}:{}: a line replaced by a generated statement",
                at + 1
            )
        }
        // A build script sets the cache (one more setup), or sets it differently.
        5 => {
            let v = rng.random_range(0..2);
            let t = TAGS[rng.random_range(0..TAGS.len())];
            out.insert(
                "setup.py".into(),
                format!("cmake_args = ['-DPP_C{v}={t}']\n"),
            );
            return (out, format!("setup.py: -DPP_C{v}={t}"));
        }
        // A file added (an included file asks whether it exists).
        7 => {
            out.insert("extra/flag.txt".into(), "1\n".into());
            return (out, "extra/flag.txt added".into());
        }
        // A file nothing reads.
        _ => {
            out.insert("README.md".into(), format!("edit {seed}\n"));
            return (out, "README.md changed".into());
        }
    };
    let mut joined = lines.join("\n");
    joined.push('\n');
    out.insert(file, joined);
    (out, what)
}

/// What differs between two trees, as a review reads it from git.
fn changes(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Changed {
    let mut changed = Changed::default();
    for p in a.keys().chain(b.keys()) {
        if a.get(p) != b.get(p) {
            changed.paths.insert(p.clone());
            changed.listing |= a.get(p).is_none() || b.get(p).is_none();
        }
    }
    changed
}

#[test]
fn a_revision_evaluated_from_anothers_runs_is_its_fresh_evaluation() {
    let (mut resumed, mut skipped, mut calls, mut cases_sharing) = (0, 0, 0, 0);
    let n = super::share_cases();
    for i in 0..n {
        let seed = 41_000_000 + i as u64;
        let mut base = Gen::new(seed, i % 2 == 1).program().files;
        let mut rng = StdRng::seed_from_u64(seed);
        if rng.random_bool(0.3) {
            // Some bases have a build-script setup of their own.
            base.insert("setup.py".into(), "args = ['-DPP_C0=t1']\n".into());
        }
        if rng.random_bool(0.5) {
            // Some include a file that asks whether another exists, before anything else.
            base.insert(
                "inc/probe.cmake".into(),
                "if(EXISTS ${CMAKE_SOURCE_DIR}/extra/flag.txt)\n  set(V0 t2)\nendif()\n".into(),
            );
            let root = base.get("CMakeLists.txt").cloned().unwrap_or_default();
            let root = root.replacen(
                "include(ExternalProject)\n",
                "include(ExternalProject)\ninclude(${CMAKE_SOURCE_DIR}/inc/probe.cmake)\n",
                1,
            );
            base.insert("CMakeLists.txt".into(), root);
        }
        let (head, what) = edit(&mut rng, seed, &base);
        let fresh = outcome(&head);
        let base_fresh = outcome(&base);
        // Half the cases record knowing what differs (as a review does: only the states HEAD
        // can start from are kept), half not.
        let changed = (i % 2 == 0).then(|| changes(&base, &head));
        let sharing = Sharing::record_for(changed);
        let base_recorded = outcome(&base);
        sharing.resume();
        let shared = outcome(&head);
        let (r, s, c) = sharing.shared();
        drop(sharing);
        assert_eq!(
            base_recorded, base_fresh,
            "seed {seed}: recording changed the first revision's evaluation"
        );
        if shared != fresh {
            let files: String = head.iter().map(|(p, t)| format!("--- {p}\n{t}")).collect();
            panic!(
                "seed {seed} ({what}): the shared evaluation differs from the fresh one\n{files}\n\
                 fresh:\n{fresh}\nshared:\n{shared}"
            );
        }
        resumed += r;
        skipped += s;
        calls += c;
        cases_sharing += usize::from(r > 0);
    }
    println!(
        "{n} edited programs: {cases_sharing} took runs from the original ({resumed} runs, {skipped} top-level statements skipped, {calls} included files taken as evaluated)"
    );
    // The comparison means something only where runs were shared (an edit of the top-level
    // file itself shares nothing: its parse is what each run reads first).
    assert!(
        cases_sharing * 4 > n && calls > 0,
        "only {cases_sharing} of {n} cases shared a run, {calls} included files"
    );
}
