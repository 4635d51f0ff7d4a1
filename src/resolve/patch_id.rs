//! Patch-id equivalence: find a commit that makes the same change as a fix (a cherry-pick), the
//! way `git patch-id` does: the changed lines of every file, whitespace and line numbers ignored.

use super::{Answer, Repo};
use crate::view::{BlobChange as Change, diff_trees};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// How far a cherry-pick's commit time may precede the fix's author time (skewed clocks).
const CLOCK_SLACK_SECONDS: i64 = 24 * 3600;

pub(super) fn find_equivalent(
    clone: &Repo,
    fix: &ObjectId,
    tip: &ObjectId,
    base: Option<&ObjectId>,
) -> Answer<Option<ObjectId>> {
    if !clone.has_commit(fix) {
        return Answer::Unknown(format!("fix {fix} is not in the clone"));
    }
    if !clone.has_commit(tip) {
        return Answer::Unknown(format!("commit {tip} is not in the clone"));
    }
    let Some(fix_changes) = changes_of(clone, fix) else {
        return Answer::Unknown(format!("could not read the change made by {fix}"));
    };
    if fix_changes.is_empty() {
        return Answer::Known(None);
    }
    let Some(fix_id) = patch_id(clone, &fix_changes) else {
        return Answer::Unknown(format!("could not diff {fix}"));
    };
    let paths: Vec<&str> = fix_changes.iter().map(|c| c.path.as_str()).collect();
    let mut lookups = EntryCache::default();
    // A cherry-pick is committed after the fix it copies was authored: walk the pin's history
    // newest first and stop at commits older than that, less a day of clock slack. Skewed
    // clocks can only make the search miss a pick, and the answer then errs to "affected".
    let cutoff = clone
        .repo
        .find_commit(*fix)
        .ok()
        .and_then(|c| c.author().ok().and_then(|a| a.time().ok()))
        .map_or(i64::MIN, |t| t.seconds - CLOCK_SLACK_SECONDS);
    let (candidates, truncated) = clone.graph.walk_since(&clone.repo, *tip, cutoff);
    for candidate in candidates.iter().filter(|c| *c != fix) {
        // Cheap filter first: a cherry-pick touches every file the fix touches.
        if !touches_all(clone, &mut lookups, candidate, &paths) {
            continue;
        }
        let Some(changes) = changes_of(clone, candidate) else {
            continue;
        };
        if patch_id(clone, &changes).as_ref() != Some(&fix_id) {
            continue;
        }
        // The same change made before the bug was introduced does not fix it.
        match base.map(|b| clone.is_ancestor(candidate, b)) {
            None | Some(Answer::Known(false)) => return Answer::Known(Some(*candidate)),
            Some(Answer::Known(true)) => {}
            Some(Answer::Unknown(why)) => return Answer::Unknown(why),
        }
    }
    match truncated {
        Some(why) => Answer::Unknown(why),
        None => Answer::Known(None),
    }
}

/// Whether `tip`'s combined change since `merge-base(commit, tip)` has `commit`'s patch-id.
/// Bounded: one merge-base walk, one pruned tree diff, and blob reads only when both changes
/// touch the same paths.
pub(super) fn squash_equivalent(clone: &Repo, commit: &ObjectId, tip: &ObjectId) -> Answer<bool> {
    for id in [commit, tip] {
        if !clone.has_commit(id) {
            return Answer::Unknown(clone.missing(id));
        }
    }
    if clone.graph.is_shallow() {
        return Answer::Unknown(format!(
            "the clone {} is shallow: no merge-base for squash-merge equivalence",
            clone.path.display()
        ));
    }
    let base = match clone.repo.merge_base(*commit, *tip) {
        Ok(Some(id)) => id.detach(),
        Ok(None) => return Answer::Known(false),
        Err(e) => return Answer::Unknown(format!("merge-base of {commit} and {tip}: {e}")),
    };
    // `tip` is an ancestor of `commit` (no change of its own), or the reverse (a descendant
    // is decided by ancestry, not here).
    if base == *tip || base == *commit {
        return Answer::Known(false);
    }
    let Some(own) = changes_of(clone, commit) else {
        return Answer::Unknown(format!("could not read the change made by {commit}"));
    };
    if own.is_empty() {
        return Answer::Known(false);
    }
    let (Some(base_info), Some(tip_info)) = (
        clone.graph.commit(&clone.repo, &base),
        clone.graph.commit(&clone.repo, tip),
    ) else {
        return Answer::Unknown(format!("could not read {base} or {tip}"));
    };
    let Some(mut combined) = diff_trees(&clone.repo, Some(base_info.tree), Some(tip_info.tree))
    else {
        return Answer::Unknown(format!("could not diff {base}..{tip}"));
    };
    combined.sort_by(|a, b| a.path.cmp(&b.path));
    let same_paths =
        combined.len() == own.len() && combined.iter().zip(&own).all(|(a, b)| a.path == b.path);
    if !same_paths {
        return Answer::Known(false);
    }
    match (patch_id(clone, &own), patch_id(clone, &combined)) {
        (Some(a), Some(b)) => Answer::Known(a == b),
        _ => Answer::Unknown(format!(
            "could not compute the patch-id of {commit} or {tip}"
        )),
    }
}

/// Tree entries by (tree, name), shared across the commits of one search: most commits share
/// most subtrees, so a path lookup usually decodes only the root tree.
#[derive(Default)]
struct EntryCache {
    entries: HashMap<(ObjectId, String), Option<(ObjectId, bool)>>,
}

impl EntryCache {
    fn child(&mut self, clone: &Repo, tree: ObjectId, name: &str) -> Option<(ObjectId, bool)> {
        if let Some(found) = self.entries.get(&(tree, name.to_string())) {
            return *found;
        }
        let found = clone.repo.find_tree(tree).ok().and_then(|t| {
            t.iter().filter_map(Result::ok).find_map(|e| {
                (e.filename() == name.as_bytes()).then(|| (e.oid().to_owned(), e.mode().is_tree()))
            })
        });
        self.entries.insert((tree, name.to_string()), found);
        found
    }

    /// The object at `path` under `tree`.
    fn at(&mut self, clone: &Repo, tree: ObjectId, path: &str) -> Option<ObjectId> {
        let mut current = (tree, true);
        for part in path.split('/') {
            if !current.1 {
                return None;
            }
            current = self.child(clone, current.0, part)?;
        }
        Some(current.0)
    }
}

/// Whether a single-parent commit changes every one of `paths` (merges have no patch-id).
fn touches_all(clone: &Repo, lookups: &mut EntryCache, commit: &ObjectId, paths: &[&str]) -> bool {
    let Some(info) = clone.graph.commit(&clone.repo, commit) else {
        return false;
    };
    let [parent] = info.parents.as_slice() else {
        return false;
    };
    let Some(parent) = clone.graph.commit(&clone.repo, parent) else {
        return false;
    };
    paths
        .iter()
        .all(|p| lookups.at(clone, info.tree, p) != lookups.at(clone, parent.tree, p))
}

/// The paths [`changes_of`] gives.
pub(super) fn files_changed(clone: &Repo, commit: &ObjectId) -> Option<Vec<String>> {
    Some(
        changes_of(clone, commit)?
            .into_iter()
            .map(|c| c.path)
            .collect(),
    )
}

/// The files a commit changes against its first parent (or against nothing, for a root).
fn changes_of(clone: &Repo, commit: &ObjectId) -> Option<Vec<Change>> {
    let info = clone.graph.commit(&clone.repo, commit)?;
    let parent_tree = match info.parents.first() {
        Some(parent) => Some(clone.graph.commit(&clone.repo, parent)?.tree),
        None => None,
    };
    let tree = info.tree;
    let mut out = diff_trees(&clone.repo, parent_tree, Some(tree))?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Some(out)
}

fn blob_text(clone: &Repo, id: Option<ObjectId>) -> Option<String> {
    match id {
        None => Some(String::new()),
        Some(id) => {
            let blob = clone.repo.find_object(id).ok()?;
            Some(blob.data.to_str_lossy().into_owned())
        }
    }
}

/// A digest of the changed lines of every file, whitespace removed, line numbers ignored.
fn patch_id(clone: &Repo, changes: &[Change]) -> Option<[u8; 32]> {
    let mut hasher = Sha256::new();
    for change in changes {
        let old = blob_text(clone, change.old)?;
        let new = blob_text(clone, change.new)?;
        hasher.update(change.path.as_bytes());
        hasher.update(b"\0");
        let patch = diffy::create_patch(&old, &new);
        for hunk in patch.hunks() {
            for line in hunk.lines() {
                let (sign, text) = match line {
                    diffy::Line::Insert(t) => (b'+', t),
                    diffy::Line::Delete(t) => (b'-', t),
                    diffy::Line::Context(_) => continue,
                };
                hasher.update([sign]);
                let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                hasher.update(squeezed.as_bytes());
                hasher.update(b"\n");
            }
        }
    }
    Some(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_tree_nested_thirty_thousand_deep_diffs_without_recursion() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "a"]);
        let deep = format!("{}deep.txt", "d/".repeat(30_000));
        let script = format!(
            "commit refs/heads/main\ncommitter T <t@example.invalid> 1767225600 +0000\ndata 4\ndeep\nfrom refs/heads/main^0\nM 100644 inline {deep}\ndata 2\nx\n\n"
        );
        let mut child = Command::new("git")
            .args(["fast-import", "--quiet"])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        let head = git(dir, &["rev-parse", "main"]);
        let clone = Repo::open(dir).unwrap();
        let head = ObjectId::from_hex(head.as_bytes()).unwrap();
        let changes = changes_of(&clone, &head).expect("diffed");
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path, deep);
    }
}
