//! Resolution against a local clone, through gix: a reference (full or short SHA, tag, branch)
//! to a full commit, ancestry, files at a commit, and cherry-picked fixes by patch-id.
//!
//! Fail closed: a commit, or an ancestor, missing from the clone (a shallow clone, a partial
//! fetch) answers [`Answer::Unknown`], never "not an ancestor".

pub mod apply;
pub mod fetch;
mod graph;
mod patch_id;
mod patched;
pub mod provenance;
#[cfg(test)]
pub(crate) mod test_git;

pub use patched::{PatchSet, PatchedTree};

use gix::ObjectId;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// A tri-state answer: known, or unknown with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<T> {
    Known(T),
    Unknown(String),
}

/// Why a clone could not be used or a reference not resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("{path}: not a git repository: {message}")]
    Open { path: PathBuf, message: String },
    #[error("{path}: `{reference}` is ambiguous: {candidates}")]
    Ambiguous {
        path: PathBuf,
        reference: String,
        candidates: String,
    },
    #[error("{path}: git object store: {message}")]
    Git { path: PathBuf, message: String },
    #[error("--repo {name}={path}: {message}")]
    RepoArg {
        name: String,
        path: PathBuf,
        message: String,
    },
}

/// What a pin's reference resolved to in a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A full commit id.
    Commit(ObjectId),
    /// The clone has no commit, tag or branch of that name (shallow clone, other repository).
    Missing,
}

/// A local clone of a pinned kernel project.
pub struct Repo {
    path: PathBuf,
    repo: gix::Repository,
    graph: graph::Graph,
}

/// The clones given with `--repo NAME=PATH`, opened once per run, by component name.
#[derive(Default)]
pub struct Clones {
    by_name: BTreeMap<String, Repo>,
}

impl Clones {
    pub fn open(repos: &[(String, PathBuf)]) -> Result<Self, ResolveError> {
        let mut by_name = BTreeMap::new();
        for (name, path) in repos {
            let clone = Repo::open(path).map_err(|e| ResolveError::RepoArg {
                name: name.clone(),
                path: path.clone(),
                message: e.to_string(),
            })?;
            by_name.insert(name.clone(), clone);
        }
        Ok(Clones { by_name })
    }

    pub fn get(&self, name: &str) -> Option<&Repo> {
        self.by_name.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Every clone with its component name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Repo)> {
        self.by_name.iter().map(|(n, c)| (n.as_str(), c))
    }
}

fn is_hex_prefix(s: &str) -> bool {
    (4..=40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Repo {
    /// Open the repository at `path` (a work tree or a bare repository).
    pub fn open(path: &Path) -> Result<Self, ResolveError> {
        let mut repo = gix::open(path).map_err(|e| ResolveError::Open {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        // Trees in real packs are delta chains; without a delta-base cache every tree read
        // re-inflates its whole chain. Object cache: decoded commits and trees are re-read
        // across the questions of one scan.
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::StaticLinkedList::<64>::new(
                32 * 1024 * 1024,
            ))
        });
        repo.object_cache_size_if_unset(8 * 1024 * 1024);
        let shallow = repo
            .shallow_commits()
            .map_err(|e| ResolveError::Git {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?
            .map(|commits| commits.iter().copied().collect())
            .unwrap_or_default();
        Ok(Repo {
            path: path.to_path_buf(),
            graph: graph::Graph::new(&repo, shallow),
            repo,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The hash its object ids are made with (SHA-1, or SHA-256 for a repository made so).
    pub fn object_hash(&self) -> gix::hash::Kind {
        self.repo.object_hash()
    }

    fn git_err(&self, e: impl std::fmt::Display) -> ResolveError {
        ResolveError::Git {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The commit `HEAD` points at, if any.
    pub fn head(&self) -> Option<ObjectId> {
        self.repo.head_id().ok().map(|id| id.detach())
    }

    /// Whether the clone has this commit.
    pub fn has_commit(&self, id: &ObjectId) -> bool {
        self.repo
            .find_object(*id)
            .is_ok_and(|o| o.kind == gix::object::Kind::Commit)
    }

    /// Resolve a full SHA, a unique short SHA, a tag or a branch to a full commit.
    /// Ambiguous short SHAs are errors.
    pub fn resolve(&self, reference: &str) -> Result<Resolved, ResolveError> {
        let reference = reference.trim();
        if is_hex_prefix(reference) {
            if reference.len() == 40 {
                let id = ObjectId::from_hex(reference.as_bytes()).map_err(|e| self.git_err(e))?;
                return Ok(if self.has_commit(&id) {
                    Resolved::Commit(id)
                } else {
                    Resolved::Missing
                });
            }
            if let Some(found) = self.lookup_short(reference)? {
                return Ok(Resolved::Commit(found));
            }
        }
        for spec in [
            format!("refs/tags/{reference}"),
            format!("refs/heads/{reference}"),
            format!("refs/remotes/origin/{reference}"),
        ] {
            if let Ok(id) = self.repo.rev_parse_single(spec.as_str())
                && let Some(commit) = id.object().ok().and_then(|o| o.peel_to_commit().ok())
            {
                return Ok(Resolved::Commit(commit.id));
            }
        }
        Ok(Resolved::Missing)
    }

    /// Any revision git understands (`HEAD`, `HEAD~2`, `main@{1}`, a tag), peeled to a commit;
    /// `None` when it names none. For a target's own `--rev`, not for pins (see [`Repo::resolve`]).
    pub fn rev_parse(&self, rev: &str) -> Option<ObjectId> {
        let id = self.repo.rev_parse_single(rev.trim()).ok()?;
        let commit = id.object().ok()?.peel_to_commit().ok()?;
        Some(commit.id)
    }

    /// A short SHA that names exactly one commit; `Ok(None)` when none does.
    fn lookup_short(&self, prefix: &str) -> Result<Option<ObjectId>, ResolveError> {
        let prefix = gix::hash::Prefix::from_hex(prefix).map_err(|e| self.git_err(e))?;
        let mut candidates = HashSet::new();
        self.repo
            .objects
            .lookup_prefix(prefix, Some(&mut candidates))
            .map_err(|e| self.git_err(e))?;
        let mut commits: Vec<ObjectId> = candidates
            .into_iter()
            .filter(|id| self.has_commit(id))
            .collect();
        commits.sort();
        match commits.len() {
            0 => Ok(None),
            1 => Ok(commits.pop()),
            _ => Err(ResolveError::Ambiguous {
                path: self.path.clone(),
                reference: prefix.to_string(),
                candidates: commits
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Why a commit is missing, naming a shallow clone as the likely cause.
    fn missing(&self, id: &ObjectId) -> String {
        if !self.graph.is_shallow() {
            format!("commit {id} is not in the clone {}", self.path.display())
        } else {
            format!(
                "commit {id} is not in the clone {} (a shallow clone: its history is cut)",
                self.path.display()
            )
        }
    }

    /// Whether `ancestor` is an ancestor of, or equal to, `descendant`.
    pub fn is_ancestor(&self, ancestor: &ObjectId, descendant: &ObjectId) -> Answer<bool> {
        if ancestor == descendant {
            return Answer::Known(true);
        }
        for id in [descendant, ancestor] {
            if !self.has_commit(id) {
                return Answer::Unknown(self.missing(id));
            }
        }
        let (reached, truncated) =
            self.graph
                .paint(&self.repo, &[*ancestor], *descendant, ancestor);
        if reached {
            Answer::Known(true)
        } else if let Some(why) = truncated {
            Answer::Unknown(why)
        } else {
            Answer::Known(false)
        }
    }

    /// The first-parent chain from `tip` back to the root (or the shallow boundary), `tip`
    /// first: the commits a branch pointed at over time, in merge order.
    pub fn first_parents(&self, tip: &ObjectId) -> Vec<ObjectId> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut next = Some(*tip);
        while let Some(id) = next {
            if !seen.insert(id) {
                break;
            }
            let Some(info) = self.graph.commit(&self.repo, &id) else {
                break;
            };
            out.push(id);
            next = info.parents.first().copied();
        }
        out
    }

    /// Every commit reachable from any reference (branches, tags, remotes, HEAD), with its
    /// commit time.
    pub fn all_commits(&self) -> Result<Vec<(ObjectId, i64)>, ResolveError> {
        let mut tips = Vec::new();
        if let Ok(head) = self.repo.head_id() {
            tips.push(head.detach());
        }
        let refs = self.repo.references().map_err(|e| self.git_err(e))?;
        for reference in refs.all().map_err(|e| self.git_err(e))? {
            let Ok(mut reference) = reference else {
                continue;
            };
            if let Ok(id) = reference.peel_to_id() {
                tips.push(id.detach());
            }
        }
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        while let Some(id) = tips.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(info) = self.graph.commit(&self.repo, &id) else {
                continue;
            };
            out.push((id, info.time));
            tips.extend(info.parents.iter().copied());
        }
        Ok(out)
    }

    /// The id of the object at `path` in `commit`'s tree.
    pub fn tree_entry(
        &self,
        commit: &ObjectId,
        path: &str,
    ) -> Result<Option<ObjectId>, ResolveError> {
        let Some(info) = self.graph.commit(&self.repo, commit) else {
            return Ok(None);
        };
        let tree = self
            .repo
            .find_tree(info.tree)
            .map_err(|e| self.git_err(e))?;
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(|e| self.git_err(e))?
            .map(|e| e.object_id()))
    }

    /// The commit the gitlink (submodule entry) at `path` records: in `commit`'s tree, or,
    /// with no commit, in the work tree's index (a staged bump counts). `None` when there is no
    /// gitlink at `path` (absent, or a directory or file instead).
    pub fn gitlink(
        &self,
        commit: Option<&ObjectId>,
        path: &str,
    ) -> Result<Option<ObjectId>, ResolveError> {
        use gix::bstr::ByteSlice;
        let Some(commit) = commit else {
            let index = self.repo.index_or_empty().map_err(|e| self.git_err(e))?;
            return Ok(index
                .entry_by_path(path.as_bytes().as_bstr())
                .filter(|e| e.mode == gix::index::entry::Mode::COMMIT)
                .map(|e| e.id));
        };
        let commit = self
            .repo
            .find_commit(*commit)
            .map_err(|e| self.git_err(e))?;
        let tree = commit.tree().map_err(|e| self.git_err(e))?;
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(|e| self.git_err(e))?
            .filter(|e| e.mode().is_commit())
            .map(|e| e.object_id()))
    }

    /// The repository of the submodule `name` checked out at `path`: the work tree's checkout
    /// (a `.git` file or directory at `path`), else this repository's `modules/<name>` git
    /// directory. `None` when neither is here (not initialised, a bare clone), or when the
    /// name or path could leave the repository (`..`, an absolute path), as git refuses too.
    pub fn submodule(&self, name: &str, path: &str) -> Option<Repo> {
        let safe = |s: &str| {
            !s.is_empty()
                && !s.starts_with('/')
                && !s.contains('\\')
                && s.split('/')
                    .all(|part| !part.is_empty() && part != "." && part != "..")
        };
        if !safe(name) || !safe(path) {
            return None;
        }
        if let Some(workdir) = self.repo.workdir() {
            let checkout = workdir.join(path);
            if checkout.join(".git").exists()
                && let Ok(repo) = Repo::open(&checkout)
            {
                return Some(repo);
            }
        }
        let modules = self.repo.git_dir().join("modules").join(name);
        modules
            .is_dir()
            .then(|| Repo::open(&modules).ok())
            .flatten()
    }

    /// Whether the repository has a work tree (else it is bare).
    pub fn has_work_tree(&self) -> bool {
        self.repo.workdir().is_some()
    }

    /// Every blob under a tree: (path relative to it, blob id).
    pub fn blobs_under(&self, tree: &ObjectId) -> Result<Vec<(String, ObjectId)>, ResolveError> {
        let mut out = Vec::new();
        let mut stack = vec![(*tree, String::new())];
        while let Some((id, prefix)) = stack.pop() {
            let tree = self.repo.find_tree(id).map_err(|e| self.git_err(e))?;
            for entry in tree.iter() {
                let entry = entry.map_err(|e| self.git_err(e))?;
                let name = entry.filename().to_string();
                let path = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                if entry.mode().is_tree() {
                    stack.push((entry.oid().to_owned(), path));
                } else if entry.mode().is_blob() {
                    out.push((path, entry.oid().to_owned()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The bytes of `path` in `commit`'s tree, or `None` when the file does not exist there.
    pub fn file_at(&self, commit: &ObjectId, path: &str) -> Result<Option<Vec<u8>>, ResolveError> {
        let commit = self
            .repo
            .find_commit(*commit)
            .map_err(|e| self.git_err(e))?;
        let tree = commit.tree_id().map_err(|e| self.git_err(e))?.detach();
        crate::view::blob_at(&self.repo, tree, path).map_err(|e| self.git_err(e))
    }

    /// The files `commit` changes against its first parent (every file, for a root commit),
    /// sorted; `Unknown` when the commit or a tree is not in the clone.
    pub fn files_changed(&self, commit: &ObjectId) -> Answer<Vec<String>> {
        match patch_id::files_changed(self, commit) {
            Some(files) => Answer::Known(files),
            None => Answer::Unknown(self.missing(commit)),
        }
    }

    /// A commit reachable from `tip` (and not from `base`, when given) whose change is the same
    /// patch as `fix` (git patch-id semantics: whitespace and line numbers ignored): a
    /// cherry-picked fix. `Unknown` when `fix` is not in the clone.
    pub fn find_cherry_pick(
        &self,
        fix: &ObjectId,
        tip: &ObjectId,
        base: Option<&ObjectId>,
    ) -> Answer<Option<ObjectId>> {
        patch_id::find_equivalent(self, fix, tip, base)
    }

    /// Whether `tip`'s own change since its merge-base with `commit` is the same patch as
    /// `commit` (patch-id of the combined diff `merge-base..tip`): `tip` is the head of the
    /// pull request that was squash-merged as `commit`, so it carries `commit`'s change without
    /// being its descendant. `Unknown` when a commit is missing or the clone is shallow.
    pub fn squash_equivalent(&self, commit: &ObjectId, tip: &ObjectId) -> Answer<bool> {
        patch_id::squash_equivalent(self, commit, tip)
    }

    /// The default branch and its tip: `origin/HEAD`, else `main`, else `master` (remote
    /// branches first, then local ones).
    pub fn default_branch(&self) -> Option<(String, ObjectId)> {
        let peel = |spec: &str| {
            self.repo
                .rev_parse_single(spec)
                .ok()
                .and_then(|id| id.object().ok())
                .and_then(|o| o.peel_to_commit().ok())
                .map(|c| c.id)
        };
        if let Ok(Some(reference)) = self.repo.try_find_reference("refs/remotes/origin/HEAD") {
            let name = match reference.target() {
                gix::refs::TargetRef::Symbolic(target) => target
                    .as_bstr()
                    .to_string()
                    .trim_start_matches("refs/remotes/")
                    .to_string(),
                gix::refs::TargetRef::Object(_) => "origin/HEAD".to_string(),
            };
            if let Some(id) = peel("refs/remotes/origin/HEAD") {
                return Some((name, id));
            }
        }
        for (spec, name) in [
            ("refs/remotes/origin/main", "origin/main"),
            ("refs/remotes/origin/master", "origin/master"),
            ("refs/heads/main", "main"),
            ("refs/heads/master", "master"),
        ] {
            if let Some(id) = peel(spec) {
                return Some((name.to_string(), id));
            }
        }
        None
    }
}
