//! The fingerprint index: for each commit of a FlashAttention clone, the git blob ids of its
//! `flash_attn/cute/*.py` files, so a wheel's shipped sources (which record no commit) can be
//! matched back to the commits they came from.
//!
//! Stored compactly in the cache directory (`<cache>/index/<component>.json`): each distinct
//! state of the `cute` directory once, and every commit as (id, time, state). Building is
//! incremental: commits already indexed are not read again.

use crate::model::Fingerprint;
use crate::pin::shipped::{self, ShippedCopy};
use crate::resolve::{Repo, ResolveError};
use crate::target::{TargetError, View};
use gix::ObjectId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub const FORMAT: u32 = 1;
/// The directory indexed, relative to the project root.
pub const CUTE_DIR: &str = "flash_attn/cute";
/// How many of a copy's files may differ from a commit's and still name it (vLLM patches a few).
pub const TOLERATED_MISMATCHES: usize = 3;

/// One state of the indexed directory: file (relative to it) -> blob id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub tree: String,
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    pub format: u32,
    pub component: String,
    /// The clone it was built from.
    pub source: String,
    pub states: Vec<State>,
    /// (commit, commit time, index into `states`), oldest first.
    pub commits: Vec<(String, i64, u32)>,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a pinprobe index: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

/// The cache directory: `--cache`, else `$PINPROBE_CACHE`, `$XDG_CACHE_HOME/pinprobe`,
/// `$HOME/.cache/pinprobe`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("PINPROBE_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("pinprobe")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/pinprobe")))
}

pub fn path_for(cache: &Path, component: &str) -> PathBuf {
    cache.join("index").join(format!("{component}.json"))
}

/// Every index in the cache (none when the cache does not exist).
pub fn load_all(cache: &Path) -> Result<Vec<Index>, IndexError> {
    let dir = cache.join("index");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(IndexError::Io { path: dir, source }),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| IndexError::Io {
                path: dir.clone(),
                source,
            })?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            out.push(load(&path)?);
        }
    }
    out.sort_by(|a, b| a.component.cmp(&b.component));
    Ok(out)
}

/// A fingerprint index larger than this is refused (a full FlashAttention history is a few MB).
pub const MAX_INDEX_BYTES: u64 = 256 << 20;

pub fn load(path: &Path) -> Result<Index, IndexError> {
    let text = crate::input::read_file(path, MAX_INDEX_BYTES).map_err(|source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let index: Index = serde_json::from_slice(&text).map_err(|e| IndexError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if index.format != FORMAT
        || index
            .commits
            .iter()
            .any(|c| c.2 as usize >= index.states.len())
    {
        return Err(IndexError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "format {} or state references do not match this pinprobe",
                index.format
            ),
        });
    }
    Ok(index)
}

/// What building did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub path: PathBuf,
    pub commits: usize,
    pub new_commits: usize,
    pub states: usize,
}

/// Build (or extend) the index of `component` from `clone`, written under `cache`.
pub fn build(clone: &Repo, component: &str, cache: &Path) -> Result<Built, IndexError> {
    let path = path_for(cache, component);
    let mut index = match load(&path) {
        Ok(existing) if existing.component == component => existing,
        Ok(_) | Err(IndexError::Io { .. }) => Index {
            format: FORMAT,
            component: component.to_string(),
            source: String::new(),
            states: Vec::new(),
            commits: Vec::new(),
        },
        Err(e) => return Err(e),
    };
    let source = clone.path().display().to_string();
    // An index read back whole, from the same clone: written again only if a commit is new.
    let stored = !index.commits.is_empty() && index.source == source;
    index.source = source;
    let known: std::collections::HashSet<String> =
        index.commits.iter().map(|c| c.0.clone()).collect();
    let mut by_tree: HashMap<String, u32> = index
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.tree.clone(), i as u32))
        .collect();
    let mut new_commits = 0;
    for (commit, time) in clone.all_commits()? {
        let hex = commit.to_string();
        if known.contains(&hex) {
            continue;
        }
        let Some(tree) = clone.tree_entry(&commit, CUTE_DIR)? else {
            continue;
        };
        let tree_hex = tree.to_string();
        let state = match by_tree.get(&tree_hex) {
            Some(s) => *s,
            None => {
                let files = clone
                    .blobs_under(&tree)?
                    .into_iter()
                    .filter(|(name, _)| name.ends_with(".py"))
                    .map(|(name, id)| (name, id.to_string()))
                    .collect();
                index.states.push(State {
                    tree: tree_hex.clone(),
                    files,
                });
                let s = (index.states.len() - 1) as u32;
                by_tree.insert(tree_hex, s);
                s
            }
        };
        index.commits.push((hex, time, state));
        new_commits += 1;
    }
    index
        .commits
        .sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let io = |source| IndexError::Io {
        path: path.clone(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    if stored && new_commits == 0 {
        return Ok(Built {
            path,
            commits: index.commits.len(),
            new_commits,
            states: index.states.len(),
        });
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&index).unwrap_or_default()).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(Built {
        path,
        commits: index.commits.len(),
        new_commits,
        states: index.states.len(),
    })
}

impl Fingerprint {
    fn new(
        component: &str,
        commits: Vec<String>,
        matched: usize,
        total: usize,
        mismatched: Vec<String>,
    ) -> Fingerprint {
        let mut m = Fingerprint {
            component: component.to_string(),
            commits,
            matched,
            total,
            mismatched,
            summary: String::new(),
        };
        m.summary = m.describe();
        m
    }

    /// The commit, when exactly one matches every file.
    pub fn exact_commit(&self) -> Option<ObjectId> {
        match (self.commits.as_slice(), self.mismatched.is_empty()) {
            ([one], true) => ObjectId::from_hex(one.as_bytes()).ok(),
            _ => None,
        }
    }

    fn describe(&self) -> String {
        let short = |c: &String| c.get(..12).unwrap_or(c).to_string();
        let which = match self.commits.as_slice() {
            [] => "no commit".to_string(),
            [one] => format!("commit {one}"),
            [first, .., last] => format!(
                "a window of {} commits, {} .. {}",
                self.commits.len(),
                short(first),
                short(last)
            ),
        };
        let mut out = format!(
            "fingerprint: {}/{} files match {which} of the {} index",
            self.matched, self.total, self.component
        );
        if !self.mismatched.is_empty() {
            out.push_str(&format!(
                "; differing (patched?): {}",
                self.mismatched.join(", ")
            ));
        }
        out
    }
}

/// Fingerprint a copy's files against the indexes of its component.
pub fn match_copy(
    view: &dyn View,
    copy: &ShippedCopy,
    indexes: &[&Index],
) -> Result<Option<Fingerprint>, TargetError> {
    let Some(index) = indexes.iter().find(|i| i.component == copy.component) else {
        return Ok(None);
    };
    let mut shipped: BTreeMap<String, String> = BTreeMap::new();
    for path in view.files_under(&copy.dir)? {
        let Some(rel) = path
            .strip_prefix(&copy.dir)
            .and_then(|r| r.strip_prefix('/'))
        else {
            continue;
        };
        if !rel.ends_with(".py") {
            continue;
        }
        let Some(bytes) = view.read(&path)? else {
            continue;
        };
        let text = shipped::normalise(&String::from_utf8_lossy(&bytes), &copy.module);
        let id = gix::objs::compute_hash(
            gix::hash::Kind::Sha1,
            gix::object::Kind::Blob,
            text.as_bytes(),
        )
        .map(|id| id.to_string())
        .unwrap_or_default();
        shipped.insert(rel.to_string(), id);
    }
    let total = shipped.len();
    if total == 0 {
        return Ok(None);
    }
    let score = |state: &State| {
        shipped
            .iter()
            .filter(|(p, id)| state.files.get(*p) == Some(id))
            .count()
    };
    let scores: Vec<usize> = index.states.iter().map(score).collect();
    let best = scores.iter().copied().max().unwrap_or(0);
    // A few patched files are tolerated; most files must match.
    if best + TOLERATED_MISMATCHES < total || best * 2 <= total {
        return Ok(Some(Fingerprint::new(
            &index.component,
            Vec::new(),
            best,
            total,
            Vec::new(),
        )));
    }
    let best_states: Vec<usize> = (0..index.states.len())
        .filter(|i| scores[*i] == best)
        .collect();
    let commits: Vec<String> = index
        .commits
        .iter()
        .filter(|c| best_states.contains(&(c.2 as usize)))
        .map(|c| c.0.clone())
        .collect();
    let mut mismatched: Vec<String> = shipped
        .iter()
        .filter(|(p, id)| {
            best_states
                .iter()
                .any(|s| index.states[*s].files.get(*p) != Some(*id))
        })
        .map(|(p, _)| p.clone())
        .collect();
    // Files the commits have and the copy lacks count as differences too.
    for s in &best_states {
        for p in index.states[*s].files.keys() {
            if !shipped.contains_key(p) && !mismatched.contains(p) {
                mismatched.push(p.clone());
            }
        }
    }
    mismatched.sort();
    Ok(Some(Fingerprint::new(
        &index.component,
        commits,
        best,
        total,
        mismatched,
    )))
}
