//! OSV `GIT` range semantics on random histories built here, with every event kind
//! (`introduced`, `introduced: "0"`, `fixed`, `last_affected`, `limit`), re-introduction
//! (several `introduced`), merges, and cherry-picks of fixes, in combination. The expected
//! status of every commit comes from how the history was built (each commit's parents and the
//! one file it adds), never from git's answers or the rules/ files:
//!
//! - `limit`: if any exists, v must be a strict ancestor of one, else `not_affected`;
//! - an introduction I (`None` for "0") is open at v when I <= v and nothing closes it:
//!   a `fixed` F <= v, a `last_affected` L < v, or a non-merge commit in v's history but not in
//!   I's that makes F's change (a cherry-pick; merges are not candidates, as in git); with several
//!   `introduced` events a fix or last-affected closes only the introductions it descends from;
//! - `affected` when some introduction is open, else `not_affected`.
//!
//! The library's evaluation is compared on every commit; a sample goes through the CLI, where
//! the exit code is asserted exactly. The seed is random per run, printed past the harness's
//! capture, and replayed with `PINPROBE_OSV_SEED=N`.

use crate::common;

use common::{Pinprobe, ancestry_rule, vllm_tree};
use pinprobe::model::{Finding, Status};
use pinprobe::resolve::Repo;
use pinprobe::rules::evaluate::{self, Subject};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const FORK: &str = "https://github.com/vllm-project/flash-attention.git";

fn seed() -> u64 {
    let seed = std::env::var("PINPROBE_OSV_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand::random);
    common::require::announce(&format!(
        "osv_semantics: seed {seed} (PINPROBE_OSV_SEED={seed} replays this run)"
    ));
    seed
}

/// A history as built: parents, the files each commit's tree holds, which commit each adds.
struct History {
    shas: Vec<String>,
    parents: Vec<Vec<usize>>,
    /// Every commit's tree: the set of `f<j>` files (file `f<j>` always holds `change j`).
    trees: Vec<BTreeSet<usize>>,
    /// Commit k is a cherry-pick of commit j.
    pick_of: Vec<Option<usize>>,
    /// Commit k is a merge.
    merge: Vec<bool>,
}

impl History {
    /// Ancestors of `v`, `v` included.
    fn ancestors(&self, v: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![v];
        while let Some(c) = stack.pop() {
            if seen.insert(c) {
                stack.extend(&self.parents[c]);
            }
        }
        seen
    }

    /// The files commit `c` adds relative to its first parent.
    fn change(&self, c: usize) -> BTreeSet<usize> {
        match self.parents[c].first() {
            Some(&p) => self.trees[c].difference(&self.trees[p]).copied().collect(),
            None => self.trees[c].clone(),
        }
    }
}

/// Build a random history of `n` commits with `git fast-import` in `dir`.
fn build(rng: &mut StdRng, dir: &Path, n: usize) -> History {
    common::init(dir);
    let mut h = History {
        shas: Vec::new(),
        parents: Vec::new(),
        trees: Vec::new(),
        pick_of: Vec::new(),
        merge: Vec::new(),
    };
    let mut stream = String::new();
    for k in 0..n {
        let mut parents = Vec::new();
        if k > 0 {
            parents.push(rng.random_range(0..k));
            if k >= 2 && rng.random_bool(0.25) {
                let p2 = rng.random_range(0..k);
                if p2 != parents[0] {
                    parents.push(p2);
                }
            }
        }
        let mut tree: BTreeSet<usize> = parents
            .iter()
            .flat_map(|p| h.trees[*p].iter().copied())
            .collect();
        let is_merge = parents.len() == 2;
        let mut pick = None;
        if !is_merge {
            // A cherry-pick of an earlier non-pick commit whose file this tree lacks.
            let candidates: Vec<usize> = (0..k)
                .filter(|j| h.pick_of[*j].is_none() && !h.merge[*j] && !tree.contains(j))
                .collect();
            if !candidates.is_empty() && rng.random_bool(0.25) {
                pick = Some(candidates[rng.random_range(0..candidates.len())]);
            }
            tree.insert(pick.unwrap_or(k));
        }
        let ts = 1_767_225_600 + 60 * k as u64;
        stream.push_str(&format!(
            "commit refs/heads/c{k}\nmark :{}\nauthor T <t@example.invalid> {ts} +0000\ncommitter T <t@example.invalid> {ts} +0000\n",
            k + 1
        ));
        let msg = format!("commit {k}\n");
        stream.push_str(&format!("data {}\n{msg}", msg.len()));
        if let Some(p) = parents.first() {
            stream.push_str(&format!("from :{}\n", p + 1));
        }
        if let Some(p) = parents.get(1) {
            stream.push_str(&format!("merge :{}\n", p + 1));
        }
        let base: BTreeSet<usize> = parents
            .first()
            .map(|p| h.trees[*p].clone())
            .unwrap_or_default();
        for f in tree.difference(&base) {
            let content = format!("change {f}\n");
            stream.push_str(&format!(
                "M 100644 inline f{f}\ndata {}\n{content}",
                content.len()
            ));
        }
        stream.push('\n');
        h.parents.push(parents);
        h.trees.push(tree);
        h.pick_of.push(pick);
        h.merge.push(is_merge);
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stream.as_bytes())
        .expect("stream written");
    assert!(child.wait().expect("fast-import").success());
    for k in 0..n {
        h.shas.push(common::git(
            dir,
            &["rev-parse", &format!("refs/heads/c{k}")],
        ));
    }
    common::git(dir, &["update-ref", "refs/heads/main", &h.shas[n - 1]]);
    h
}

/// One range's events, by commit index (`None` in `introduced` is "0").
#[derive(Debug, Default, Clone)]
struct Events {
    introduced: Vec<Option<usize>>,
    fixed: Vec<usize>,
    last_affected: Vec<usize>,
    limit: Vec<usize>,
}

fn random_events(rng: &mut StdRng, h: &History) -> Events {
    let n = h.shas.len();
    let picked: BTreeSet<usize> = h.pick_of.iter().flatten().copied().collect();
    // Events sit on plain commits; fixes prefer commits that were cherry-picked.
    let plain: Vec<usize> = (0..n)
        .filter(|k| h.pick_of[*k].is_none() && !h.merge[*k])
        .collect();
    let mut free: Vec<usize> = plain
        .iter()
        .copied()
        .filter(|k| !picked.contains(k))
        .collect();
    let mut fixable: Vec<usize> = plain.clone();
    let take = |pool: &mut Vec<usize>, rng: &mut StdRng| -> Option<usize> {
        if pool.is_empty() {
            None
        } else {
            Some(pool.swap_remove(rng.random_range(0..pool.len())))
        }
    };
    let mut e = Events::default();
    let intros = if rng.random_bool(0.35) { 2 } else { 1 };
    for i in 0..intros {
        if i == 0 && rng.random_bool(0.3) {
            e.introduced.push(None);
        } else if let Some(c) = take(&mut free, rng) {
            fixable.retain(|x| *x != c);
            e.introduced.push(Some(c));
        }
    }
    if e.introduced.is_empty() {
        e.introduced.push(None);
    }
    for _ in 0..rng.random_range(0..3) {
        let pool_picked: Vec<usize> = fixable
            .iter()
            .copied()
            .filter(|k| picked.contains(k))
            .collect();
        let c = if !pool_picked.is_empty() && rng.random_bool(0.6) {
            Some(pool_picked[rng.random_range(0..pool_picked.len())])
        } else {
            take(&mut fixable, rng)
        };
        if let Some(c) = c {
            fixable.retain(|x| *x != c);
            free.retain(|x| *x != c);
            if !e.fixed.contains(&c) {
                e.fixed.push(c);
            }
        }
    }
    if rng.random_bool(0.35)
        && let Some(c) = take(&mut free, rng)
    {
        e.last_affected.push(c);
    }
    if rng.random_bool(0.3)
        && let Some(c) = take(&mut free, rng)
    {
        e.limit.push(c);
    }
    e
}

/// The oracle: OSV GIT semantics over the history as built.
fn expected(h: &History, e: &Events, v: usize) -> Status {
    expected_with(h, e, v, true)
}

/// The oracle, with or without cherry-pick detection (to tell when a pick decided).
fn expected_with(h: &History, e: &Events, v: usize, picks: bool) -> Status {
    let anc_v = h.ancestors(v);
    if !e.limit.is_empty()
        && !e
            .limit
            .iter()
            .any(|l| *l != v && h.ancestors(*l).contains(&v))
    {
        return Status::NotAffected;
    }
    let several = e.introduced.len() > 1;
    let open = |intro: Option<usize>| -> bool {
        let anc_i = intro.map(|i| h.ancestors(i)).unwrap_or_default();
        let follows = |x: usize| match intro {
            Some(i) if several => h.ancestors(x).contains(&i),
            _ => true,
        };
        if e.fixed.iter().any(|f| anc_v.contains(f) && follows(*f)) {
            return false;
        }
        if e.last_affected
            .iter()
            .any(|l| *l != v && anc_v.contains(l) && follows(*l))
        {
            return false;
        }
        if let Some(i) = intro
            && !anc_v.contains(&i)
        {
            return false;
        }
        // A commit in v's history (not in I's) making a fix's change: a cherry-pick. Merges
        // are not candidates, as for `git patch-id` / `git cherry`: a merge has no one diff.
        let picked = e.fixed.iter().any(|f| {
            anc_v.iter().any(|c| {
                c != f && !h.merge[*c] && !anc_i.contains(c) && h.change(*c) == BTreeSet::from([*f])
            })
        });
        !(picks && picked)
    };
    if e.introduced.iter().any(|i| open(*i)) {
        Status::Affected
    } else {
        Status::NotAffected
    }
}

fn rule_yaml(id: &str, h: &History, e: &Events) -> String {
    let mut events: Vec<(&str, String)> = Vec::new();
    for i in &e.introduced {
        events.push((
            "introduced",
            i.map_or_else(|| "0".to_string(), |c| h.shas[c].clone()),
        ));
    }
    for f in &e.fixed {
        events.push(("fixed", h.shas[*f].clone()));
    }
    for l in &e.last_affected {
        events.push(("last_affected", h.shas[*l].clone()));
    }
    for l in &e.limit {
        events.push(("limit", h.shas[*l].clone()));
    }
    let refs: Vec<(&str, &str)> = events.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ancestry_rule(id, &refs)
}

fn evaluate(db: &pinprobe::rules::Database, id: &str, pin: &str, clone: &Repo) -> Finding {
    let rule = &db.get(id).expect("rule loaded").rule;
    let subject = Subject {
        component: "flash-attention",
        commit: gix::ObjectId::from_hex(pin.as_bytes()).ok(),
        commit_unknown: None,
        no_clone: None,
        recorded: Vec::new(),
        patches: None,
        clone: Some(clone),
        sources: None,
        sources_label: String::new(),
        binaries: None,
        packages: Vec::new(),
        package_pins: Vec::new(),
        location: None,
    };
    evaluate::evaluate(rule, &subject, &db.registry)
}

fn describe(h: &History, e: &Events) -> String {
    let mut s = String::new();
    for (k, p) in h.parents.iter().enumerate() {
        s.push_str(&format!("  c{k} parents {p:?}"));
        if let Some(j) = h.pick_of[k] {
            s.push_str(&format!(" (cherry-pick of c{j})"));
        }
        s.push('\n');
    }
    format!("{s}  events {e:?}")
}

#[test]
fn osv_git_ranges_on_random_histories_match_their_construction() {
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().expect("tempdir");
    // Which event kinds were exercised, and with which outcomes: the test fails if the random
    // cases missed one (it would then prove nothing about it).
    let mut seen: BTreeMap<&str, BTreeSet<bool>> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut cli_checked = 0;
    for hist in 0..20 {
        let dir = tmp.path().join(format!("h{hist}"));
        let n = rng.random_range(6..16);
        let h = build(&mut rng, &dir, n);
        let clone = Repo::open(&dir).expect("clone opens");
        for case in 0..6 {
            let e = random_events(&mut rng, &h);
            let id = format!("TEST-OSV-{hist}-{case}");
            let rules = tmp.path().join(format!("rules-{hist}-{case}"));
            common::write(&rules, "r.yaml", &rule_yaml(&id, &h, &e));
            let db = pinprobe::rules::load(Some(&rules)).expect("rules load").0;
            for v in 0..n {
                let want = expected(&h, &e, v);
                let got = evaluate(&db, &id, &h.shas[v], &clone);
                let affected = want == Status::Affected;
                let kinds = [
                    ("introduced", e.introduced.iter().any(Option::is_some)),
                    ("introduced: 0", e.introduced.contains(&None)),
                    ("re-introduction", e.introduced.len() > 1),
                    ("fixed", !e.fixed.is_empty()),
                    ("last_affected", !e.last_affected.is_empty()),
                    ("limit", !e.limit.is_empty()),
                    (
                        "cherry-pick decides",
                        want != expected_with(&h, &e, v, false),
                    ),
                    (
                        "merge in history",
                        h.ancestors(v).iter().any(|c| h.merge[*c]),
                    ),
                ];
                for (kind, present) in kinds {
                    if present {
                        seen.entry(kind).or_default().insert(affected);
                    }
                }
                if got.status != want {
                    failures.push(format!(
                        "history {hist} case {case} pin c{v}: expected {want:?}, got {:?} ({:?})\n{}",
                        got.status,
                        got.evidence.iter().map(|e| &e.detail).collect::<Vec<_>>(),
                        describe(&h, &e)
                    ));
                }
            }
            // Through the CLI, exit code exact: a vLLM tree pinning a random commit.
            if case == 0 {
                let v = rng.random_range(0..n);
                let want = expected(&h, &e, v);
                let tree = tmp.path().join(format!("tree-{hist}"));
                vllm_tree(&tree, FORK, &h.shas[v]);
                let run = Pinprobe::new(&[
                    "scan".to_string(),
                    tree.display().to_string(),
                    "--rules".to_string(),
                    rules.display().to_string(),
                    "--repo".to_string(),
                    format!("flash-attention={}", dir.display()),
                    "--format".to_string(),
                    "json".to_string(),
                ])
                .run();
                let report = run.json();
                let findings = report["targets"][0]["findings"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let status_of = |rule: &str| {
                    findings
                        .iter()
                        .find(|f| f["rule"] == rule)
                        .and_then(|f| f["status"].as_str())
                        .map(str::to_string)
                };
                let ours = status_of(&id);
                // Hygiene findings report but never set the exit code (without --fail-on-hygiene).
                let other = |f: &&serde_json::Value| {
                    f["rule"] != id.as_str()
                        && !f["rule"].as_str().unwrap_or("").starts_with("hygiene/")
                };
                let others_unknown = findings
                    .iter()
                    .filter(other)
                    .any(|f| f["status"] == "unknown");
                let others_affected = findings
                    .iter()
                    .filter(other)
                    .any(|f| f["status"] == "affected");
                let want_code = match want {
                    Status::Affected => 1,
                    _ if others_affected => 1,
                    _ if others_unknown => 3,
                    _ => 0,
                };
                let want_status = match want {
                    Status::Affected => "affected",
                    _ => "not_affected",
                };
                if ours.as_deref() != Some(want_status) || run.code != want_code {
                    failures.push(format!(
                        "CLI history {hist} pin c{v}: expected {want_status} and exit {want_code}, got {ours:?} and exit {}\n{}",
                        run.code,
                        describe(&h, &e)
                    ));
                }
                cli_checked += 1;
            }
        }
    }
    common::require::announce(&format!(
        "osv_semantics: event kinds seen (with outcomes affected?): {seen:?}; {cli_checked} CLI runs"
    ));
    assert!(
        failures.is_empty(),
        "PINPROBE_OSV_SEED={seed}: {} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        seen.contains_key("cherry-pick decides"),
        "PINPROBE_OSV_SEED={seed}: no case where a cherry-pick decided: {seen:?}"
    );
    for kind in [
        "introduced",
        "introduced: 0",
        "re-introduction",
        "fixed",
        "last_affected",
        "limit",
        "merge in history",
    ] {
        assert_eq!(
            seen.get(kind).map(BTreeSet::len),
            Some(2),
            "PINPROBE_OSV_SEED={seed}: `{kind}` was not exercised with both outcomes: {seen:?}"
        );
    }
}
