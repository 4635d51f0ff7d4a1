//! Patch-id equivalence: find a commit that makes the same change as a fix (a cherry-pick), the
//! way `git patch-id` does: the changed lines of every file, whitespace and line numbers ignored.

use super::{Answer, Clone};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use sha2::{Digest, Sha256};

/// One changed file: its path and the blob before and after.
struct Change {
    path: String,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
}

pub(super) fn find_equivalent(
    clone: &Clone,
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
    let reachable = clone.ancestors(*tip);
    let excluded = base.map(|b| clone.ancestors(*b));
    let mut candidates: Vec<ObjectId> = reachable
        .set
        .iter()
        .filter(|c| *c != fix && excluded.as_ref().is_none_or(|e| !e.set.contains(*c)))
        .copied()
        .collect();
    candidates.sort();
    let paths: Vec<&str> = fix_changes.iter().map(|c| c.path.as_str()).collect();
    for candidate in candidates {
        // Cheap filter first: a cherry-pick touches every file the fix touches.
        if !touches_all(clone, &candidate, &paths) {
            continue;
        }
        let Some(changes) = changes_of(clone, &candidate) else {
            continue;
        };
        if patch_id(clone, &changes).as_ref() == Some(&fix_id) {
            return Answer::Known(Some(candidate));
        }
    }
    match &reachable.truncated {
        Some(why) => Answer::Unknown(why.clone()),
        None => Answer::Known(None),
    }
}

/// The single parent of a commit (`None` for a root; merges use the first parent, as git does
/// not give merges a patch-id we skip them in `touches_all`).
fn parents(clone: &Clone, commit: &ObjectId) -> Option<(ObjectId, Vec<ObjectId>)> {
    let commit = clone.repo.find_commit(*commit).ok()?;
    let tree = commit.tree_id().ok()?.detach();
    let parents = commit.parent_ids().map(|p| p.detach()).collect();
    Some((tree, parents))
}

fn tree_of(clone: &Clone, commit: &ObjectId) -> Option<ObjectId> {
    parents(clone, commit).map(|(tree, _)| tree)
}

fn entry_at(clone: &Clone, tree: ObjectId, path: &str) -> Option<ObjectId> {
    let tree = clone.repo.find_tree(tree).ok()?;
    let entry = tree.lookup_entry_by_path(path).ok()??;
    Some(entry.object_id())
}

fn touches_all(clone: &Clone, commit: &ObjectId, paths: &[&str]) -> bool {
    let Some((tree, parent_ids)) = parents(clone, commit) else {
        return false;
    };
    let [parent] = parent_ids.as_slice() else {
        return false;
    };
    let Some(parent_tree) = tree_of(clone, parent) else {
        return false;
    };
    paths
        .iter()
        .all(|p| entry_at(clone, tree, p) != entry_at(clone, parent_tree, p))
}

/// The files a commit changes against its first parent (or against nothing, for a root).
fn changes_of(clone: &Clone, commit: &ObjectId) -> Option<Vec<Change>> {
    let (tree, parent_ids) = parents(clone, commit)?;
    let parent_tree = match parent_ids.first() {
        Some(parent) => Some(tree_of(clone, parent)?),
        None => None,
    };
    let mut out = Vec::new();
    diff_trees(clone, parent_tree, Some(tree), "", &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Some(out)
}

/// Entries of a tree as (name, is_tree, id).
fn entries(clone: &Clone, tree: Option<ObjectId>) -> Option<Vec<(String, bool, ObjectId)>> {
    let Some(tree) = tree else {
        return Some(Vec::new());
    };
    let tree = clone.repo.find_tree(tree).ok()?;
    let mut out = Vec::new();
    for entry in tree.iter() {
        let entry = entry.ok()?;
        let name = entry.filename().to_str_lossy().into_owned();
        out.push((name, entry.mode().is_tree(), entry.oid().to_owned()));
    }
    Some(out)
}

fn diff_trees(
    clone: &Clone,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: &str,
    out: &mut Vec<Change>,
) -> Option<()> {
    if old == new {
        return Some(());
    }
    let old_entries = entries(clone, old)?;
    let new_entries = entries(clone, new)?;
    let mut names: Vec<&String> = old_entries
        .iter()
        .chain(new_entries.iter())
        .map(|(n, _, _)| n)
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let o = old_entries.iter().find(|(n, _, _)| n == name);
        let n = new_entries.iter().find(|(n2, _, _)| n2 == name);
        let (o_tree, o_blob) = split(o);
        let (n_tree, n_blob) = split(n);
        if o_tree.is_some() || n_tree.is_some() {
            diff_trees(clone, o_tree, n_tree, &path, out)?;
        }
        if o_blob != n_blob {
            out.push(Change {
                path,
                old: o_blob,
                new: n_blob,
            });
        }
    }
    Some(())
}

fn split(entry: Option<&(String, bool, ObjectId)>) -> (Option<ObjectId>, Option<ObjectId>) {
    match entry {
        Some((_, true, id)) => (Some(*id), None),
        Some((_, false, id)) => (None, Some(*id)),
        None => (None, None),
    }
}

fn blob_text(clone: &Clone, id: Option<ObjectId>) -> Option<String> {
    match id {
        None => Some(String::new()),
        Some(id) => {
            let blob = clone.repo.find_object(id).ok()?;
            Some(blob.data.to_str_lossy().into_owned())
        }
    }
}

/// A digest of the changed lines of every file, whitespace removed, line numbers ignored.
fn patch_id(clone: &Clone, changes: &[Change]) -> Option<[u8; 32]> {
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
