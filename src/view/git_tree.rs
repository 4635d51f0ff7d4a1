//! A git tree at any revision as a [`View`], read through gix without a checkout.

use super::{TargetError, View};
use crate::model::TargetKind;
use gix::bstr::ByteSlice;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The most bytes of blobs one view keeps after reading them ([`GitTreeView::read`]), and the
/// largest blob it keeps: a scan reads the same CMake files, requirement files and build
/// scripts several times (the variable names, the evaluation, the subprojects, the Python
/// requirements), and a review reads them once more to check what it shares.
const KEPT_BYTES: usize = 64 << 20;
const KEPT_BLOB: usize = 1 << 20;

/// Tree entries one listing visits at most (vLLM's tree has a few thousand).
pub const MAX_TREE_ENTRIES: usize = 1_000_000;

/// Blobs read, by path (`None`: not there).
type Kept = HashMap<String, Option<Vec<u8>>>;

/// The files of one revision of a git repository.
pub struct GitTreeView {
    path: PathBuf,
    repo: gix::Repository,
    rev: String,
    commit: gix::ObjectId,
    tree: gix::ObjectId,
    /// The whole tree's listing, once made (the tree never changes under the view).
    listing: RefCell<Option<Vec<String>>>,
    /// Blobs read so far (small ones, up to [`KEPT_BYTES`] in all), and their total size.
    kept: RefCell<(Kept, usize)>,
}

impl GitTreeView {
    /// Open the repository at (or above) `path` and resolve `rev` to a tree.
    pub fn open(path: &Path, rev: &str) -> Result<Self, TargetError> {
        // gix's upward search asserts on a relative path that climbs out (`../bare.git`):
        // search from the absolute path.
        let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let repo = gix::discover(&absolute).map_err(|e| TargetError::NotGit {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let bad_rev = |message: String| TargetError::BadRevision {
            path: path.to_path_buf(),
            rev: rev.to_string(),
            message,
        };
        let (commit, tree) = {
            let id = repo
                .rev_parse_single(rev)
                .map_err(|e| bad_rev(e.to_string()))?;
            let object = id.object().map_err(|e| bad_rev(e.to_string()))?;
            let commit = object
                .peel_to_commit()
                .map_err(|e| bad_rev(e.to_string()))?;
            let tree = commit
                .tree_id()
                .map_err(|e| bad_rev(e.to_string()))?
                .detach();
            (commit.id, tree)
        };
        Ok(GitTreeView {
            path: path.to_path_buf(),
            repo,
            rev: rev.to_string(),
            commit,
            tree,
            listing: RefCell::new(None),
            kept: RefCell::new((HashMap::new(), 0)),
        })
    }

    /// The full commit the revision resolved to.
    pub fn commit(&self) -> gix::ObjectId {
        self.commit
    }

    /// The paths whose blobs differ between this revision's tree and `rev`'s (changed, added
    /// or removed), and whether any was added or removed; `None` when `rev` or a tree cannot be
    /// read, or the diff is too large ([`diff_trees`]).
    pub fn changes_to(&self, rev: &str) -> Option<(std::collections::HashSet<String>, bool)> {
        let other = self
            .repo
            .rev_parse_single(rev)
            .ok()?
            .object()
            .ok()?
            .peel_to_commit()
            .ok()?
            .tree_id()
            .ok()?
            .detach();
        let changes = diff_trees(&self.repo, Some(self.tree), Some(other))?;
        let listing = changes.iter().any(|c| c.old.is_none() || c.new.is_none());
        Some((changes.into_iter().map(|c| c.path).collect(), listing))
    }

    fn git_err(&self, e: impl std::fmt::Display) -> TargetError {
        TargetError::Git {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// Every blob under `tree`, as paths under `prefix` (unsorted). Iterative: a tree nested
    /// thousands of directories deep cannot overflow the stack; and bounded: a tree that reuses
    /// one subtree many times over (exponentially many paths) is an error past
    /// [`MAX_TREE_ENTRIES`].
    fn collect(
        &self,
        tree: gix::ObjectId,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<(), TargetError> {
        let mut pending = vec![(tree, prefix.to_string())];
        let mut visited = 0usize;
        while let Some((tree, prefix)) = pending.pop() {
            let tree = self.repo.find_tree(tree).map_err(|e| self.git_err(e))?;
            for entry in tree.iter() {
                let entry = entry.map_err(|e| self.git_err(e))?;
                visited += 1;
                if visited > MAX_TREE_ENTRIES {
                    return Err(TargetError::Malformed {
                        path: self.path.clone(),
                        message: format!(
                            "the tree at {} has more than {MAX_TREE_ENTRIES} entries",
                            self.rev
                        ),
                    });
                }
                let Ok(name) = entry.filename().to_str() else {
                    continue;
                };
                let rel = if prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{prefix}/{name}")
                };
                let mode = entry.mode();
                if mode.is_tree() {
                    pending.push((entry.oid().to_owned(), rel));
                } else if mode.is_blob() {
                    out.push(rel);
                }
            }
        }
        Ok(())
    }
}

impl View for GitTreeView {
    fn describe(&self) -> String {
        format!("{}@{}", self.path.display(), self.rev)
    }

    fn kind(&self) -> TargetKind {
        TargetKind::GitTree
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let dir = dir.trim_end_matches('/');
        if dir.is_empty()
            && let Some(all) = self.listing.borrow().as_ref()
        {
            return Ok(all.clone());
        }
        let start = if dir.is_empty() {
            Some(self.tree)
        } else {
            let tree = self
                .repo
                .find_tree(self.tree)
                .map_err(|e| self.git_err(e))?;
            match tree
                .lookup_entry_by_path(dir)
                .map_err(|e| self.git_err(e))?
            {
                Some(entry) if entry.mode().is_tree() => Some(entry.object_id()),
                _ => None,
            }
        };
        let mut out = Vec::new();
        if let Some(start) = start {
            self.collect(start, dir, &mut out)?;
        }
        out.sort();
        if dir.is_empty() {
            *self.listing.borrow_mut() = Some(out.clone());
        }
        Ok(out)
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        if let Some(bytes) = self.kept.borrow().0.get(path) {
            return Ok(bytes.clone());
        }
        let bytes = blob_at(&self.repo, self.tree, path).map_err(|e| self.git_err(e))?;
        let size = bytes.as_ref().map_or(0, Vec::len);
        let mut kept = self.kept.borrow_mut();
        if size <= KEPT_BLOB && kept.1 + size <= KEPT_BYTES {
            kept.1 += size;
            kept.0.insert(path.to_string(), bytes.clone());
        }
        Ok(bytes)
    }
}

/// The bytes of the blob at `path` under `tree`, `None` when there is none (or it is a tree).
pub fn blob_at(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    path: &str,
) -> Result<Option<Vec<u8>>, String> {
    let tree = repo.find_tree(tree).map_err(|e| e.to_string())?;
    let Some(entry) = tree.lookup_entry_by_path(path).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    if !entry.mode().is_blob() {
        return Ok(None);
    }
    // A blob compresses well: check its size before inflating it.
    let size = repo
        .find_header(entry.object_id())
        .map_err(|e| e.to_string())?
        .size();
    if size > super::MAX_FILE_BYTES {
        return Err(format!(
            "`{path}` is {size} bytes, over the {}-byte cap for one file",
            super::MAX_FILE_BYTES
        ));
    }
    let blob = entry.object().map_err(|e| e.to_string())?;
    Ok(Some(blob.detach().data))
}

/// A blob that differs between two trees: its path, and its id on each side (`None`: not there).
pub struct BlobChange {
    pub path: String,
    pub old: Option<gix::ObjectId>,
    pub new: Option<gix::ObjectId>,
}

/// The blobs that differ between two trees (`None`: the empty tree), in no particular order.
/// Only subtrees that differ are read; iterative, so a tree nested thousands of directories
/// deep cannot overflow the stack. `None` when an object cannot be read or the diff visits
/// more than [`MAX_TREE_ENTRIES`] entries (a tree reusing one subtree many times over lists
/// exponentially many paths).
pub fn diff_trees(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
) -> Option<Vec<BlobChange>> {
    type Entry = (String, bool, gix::ObjectId);
    let entries = |tree: Option<gix::ObjectId>| -> Option<Vec<Entry>> {
        let Some(tree) = tree else {
            return Some(Vec::new());
        };
        let tree = repo.find_tree(tree).ok()?;
        let mut out = Vec::new();
        for entry in tree.iter() {
            let entry = entry.ok()?;
            let name = entry.filename().to_str_lossy().into_owned();
            out.push((name, entry.mode().is_tree(), entry.oid().to_owned()));
        }
        Some(out)
    };
    // (subtree, blob) of an entry.
    let split = |e: Option<&Entry>| match e {
        Some((_, true, id)) => (Some(*id), None),
        Some((_, false, id)) => (None, Some(*id)),
        None => (None, None),
    };
    let mut out = Vec::new();
    let mut pending = vec![(old, new, String::new())];
    let mut visited = 0usize;
    while let Some((old, new, prefix)) = pending.pop() {
        if old == new {
            continue;
        }
        let (old_entries, new_entries) = (entries(old)?, entries(new)?);
        visited += old_entries.len() + new_entries.len();
        if visited > MAX_TREE_ENTRIES {
            return None;
        }
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
            let (o_tree, o_blob) = split(old_entries.iter().find(|(n, _, _)| n == name));
            let (n_tree, n_blob) = split(new_entries.iter().find(|(n, _, _)| n == name));
            if o_tree.is_some() || n_tree.is_some() {
                pending.push((o_tree, n_tree, path.clone()));
            }
            if o_blob != n_blob {
                out.push(BlobChange {
                    path,
                    old: o_blob,
                    new: n_blob,
                });
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    }

    fn write(dir: &Path, path: &str, text: &str) {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn changes_between_revisions_are_the_paths_that_differ() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        write(dir, "a.txt", "a");
        write(dir, "d/b.txt", "b");
        write(dir, "d/e/c.txt", "c");
        write(dir, "f/g.txt", "g");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        // Contents only: no listing changes.
        write(dir, "d/e/c.txt", "c2");
        git(dir, &["commit", "-q", "-a", "-m", "two"]);
        // A file removed, one added, a directory replaced by a file.
        std::fs::remove_file(dir.join("a.txt")).expect("rm");
        write(dir, "d/new.txt", "n");
        std::fs::remove_dir_all(dir.join("f")).expect("rm");
        write(dir, "f", "now a file");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "three"]);
        let one = GitTreeView::open(dir, "HEAD~2").expect("opens");
        let (paths, listing) = one.changes_to("HEAD~1").expect("reads");
        assert_eq!(paths, ["d/e/c.txt".to_string()].into());
        assert!(!listing);
        let two = GitTreeView::open(dir, "HEAD~1").expect("opens");
        let (paths, listing) = two.changes_to("HEAD").expect("reads");
        let want: std::collections::HashSet<String> = ["a.txt", "d/new.txt", "f", "f/g.txt"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(paths, want);
        assert!(listing);
        assert_eq!(two.changes_to("HEAD~1").expect("reads").0.len(), 0);
        assert!(two.changes_to("no-such-rev").is_none());
        // What the view keeps answers as a fresh read does.
        for _ in 0..2 {
            assert_eq!(
                two.files_under("").expect("lists"),
                ["a.txt", "d/b.txt", "d/e/c.txt", "f/g.txt"]
            );
            assert_eq!(two.read("d/e/c.txt").expect("reads"), Some(b"c2".to_vec()));
            assert_eq!(two.read("missing").expect("reads"), None);
        }
        assert_eq!(
            two.files_under("d").expect("lists"),
            ["d/b.txt", "d/e/c.txt"]
        );
    }
}
