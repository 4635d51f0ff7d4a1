//! The fingerprint index: for each commit of a FlashAttention clone, the git blob ids of its
//! `flash_attn/cute/*.py` files, so a wheel's shipped sources (which record no commit) can be
//! matched back to the commits they came from.
//!
//! Stored compactly in the cache directory (`<cache>/index/<component>.idx`, [`codec`]): raw
//! object ids, each file name once in a table, each distinct state of the `cute` directory
//! once as (name, blob) pairs, and every commit as (id, time, state), under a checksum.
//! Building is incremental: commits already indexed are not read again, and an index that
//! gains no commit is not written again. The JSON form earlier versions wrote
//! (`<component>.json`) is still read; the next `index build` converts it (and removes it).

pub mod codec;

use crate::model::Fingerprint;
use crate::pin::shipped::{self, ShippedCopy};
use crate::resolve::{Repo, ResolveError};
use crate::view::{TargetError, View};
use gix::ObjectId;
use gix::hash::Kind;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The directory indexed, relative to the project root.
pub const CUTE_DIR: &str = "flash_attn/cute";
/// How many of a copy's files may differ from a commit's and still name it (vLLM patches a few).
pub const TOLERATED_MISMATCHES: usize = 3;
/// The extension of a binary index; of a legacy JSON one.
pub const EXTENSION: &str = "idx";
pub const LEGACY_EXTENSION: &str = "json";

/// How an index is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `<component>.idx`, format 2: binary ids, a name table, a checksum.
    Binary,
    /// `<component>.json`, format 1, as earlier versions wrote it: read, not written.
    LegacyJson,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::Binary => "binary (format 2)",
            Format::LegacyJson => "JSON (format 1; the next `index build` converts it)",
        }
    }
}

/// One state of the indexed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub tree: ObjectId,
    /// (file name, as an index into [`Index::names`]; its blob id), by name.
    pub files: Vec<(u32, ObjectId)>,
}

impl State {
    /// The blob of the file named `name` (an index into [`Index::names`]).
    pub fn blob(&self, name: u32) -> Option<&ObjectId> {
        self.files
            .binary_search_by_key(&name, |(n, _)| *n)
            .ok()
            .map(|i| &self.files[i].1)
    }
}

/// One indexed commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: ObjectId,
    pub time: i64,
    /// Its state: an index into [`Index::states`].
    pub state: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub component: String,
    /// The clone it was built from.
    pub source: String,
    /// The clone's object hash.
    pub hash: Kind,
    /// Every file name (relative to [`CUTE_DIR`]) a state holds, sorted, each once.
    pub names: Vec<String>,
    pub states: Vec<State>,
    /// Oldest first.
    pub commits: Vec<Commit>,
    /// How it was read.
    pub format: Format,
    /// SHA-256 of what was read (the binary body; the whole JSON file): names its content.
    pub checksum: [u8; 32],
}

impl Index {
    fn empty(component: &str, hash: Kind) -> Index {
        Index {
            component: component.to_string(),
            source: String::new(),
            hash,
            names: Vec::new(),
            states: Vec::new(),
            commits: Vec::new(),
            format: Format::Binary,
            checksum: [0; 32],
        }
    }

    /// Put the name table in order (names added by a build come last), renumbering the states.
    fn sort_names(&mut self) {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|a, b| self.names[*a].cmp(&self.names[*b]));
        let mut renumber = vec![0u32; order.len()];
        for (new, old) in order.iter().enumerate() {
            renumber[*old] = new as u32;
        }
        let mut names: Vec<Option<String>> = std::mem::take(&mut self.names)
            .into_iter()
            .map(Some)
            .collect();
        self.names = order
            .iter()
            .map(|old| names[*old].take().unwrap_or_default())
            .collect();
        for state in &mut self.states {
            for (name, _) in &mut state.files {
                *name = renumber[*name as usize];
            }
            state.files.sort_by_key(|(name, _)| *name);
        }
    }
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
    #[error(
        "`{0}` cannot name an index: a component name is letters, digits, `.`, `_` and `-`, not starting with `.`"
    )]
    Name(String),
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

/// Where the index of `component` is written.
pub fn path_for(cache: &Path, component: &str) -> PathBuf {
    cache.join("index").join(format!("{component}.{EXTENSION}"))
}

/// Where earlier versions wrote it.
pub fn legacy_path_for(cache: &Path, component: &str) -> PathBuf {
    cache
        .join("index")
        .join(format!("{component}.{LEGACY_EXTENSION}"))
}

/// A component name is a file name in the index directory: nothing that leaves it.
fn check_name(component: &str) -> Result<(), IndexError> {
    let ok = !component.is_empty()
        && !component.starts_with('.')
        && component
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(IndexError::Name(component.to_string()))
    }
}

/// Every index in the cache (none when the cache does not exist), one per component: the
/// binary one, else a legacy JSON one. A file holding another component's index than its name
/// says is refused.
pub fn load_all(cache: &Path) -> Result<Vec<Index>, IndexError> {
    let dir = cache.join("index");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(IndexError::Io { path: dir, source }),
    };
    // component -> (binary, legacy)
    let mut found: BTreeMap<String, (Option<PathBuf>, Option<PathBuf>)> = BTreeMap::new();
    for entry in entries {
        let path = entry
            .map_err(|source| IndexError::Io {
                path: dir.clone(),
                source,
            })?
            .path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if name.starts_with('.') {
            continue; // a temporary file of a build in progress
        }
        if let Some(stem) = name.strip_suffix(&format!(".{EXTENSION}")) {
            found.entry(stem.to_string()).or_default().0 = Some(path);
        } else if let Some(stem) = name.strip_suffix(&format!(".{LEGACY_EXTENSION}")) {
            found.entry(stem.to_string()).or_default().1 = Some(path);
        }
    }
    let mut out = Vec::new();
    for (component, (binary, legacy)) in found {
        let Some(path) = binary.or(legacy) else {
            continue;
        };
        let index = load(&path)?;
        if index.component != component {
            return Err(IndexError::Corrupt {
                message: format!(
                    "it holds the index of `{}`, not of `{component}`",
                    crate::model::text::printable(&index.component)
                ),
                path,
            });
        }
        out.push(index);
    }
    Ok(out)
}

/// A fingerprint index larger than this is refused (a full FlashAttention history is a few
/// hundred KB in the binary format).
pub const MAX_INDEX_BYTES: u64 = 256 << 20;

/// The index in `path`: legacy JSON when its name ends in `.json`, else binary.
pub fn load(path: &Path) -> Result<Index, IndexError> {
    let bytes =
        crate::input::read_file(path, MAX_INDEX_BYTES).map_err(|source| IndexError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let legacy = path.extension().is_some_and(|e| e == LEGACY_EXTENSION);
    let decoded = if legacy {
        codec::decode_legacy(&bytes)
    } else {
        codec::decode(&bytes)
    };
    decoded.map_err(|message| IndexError::Corrupt {
        path: path.to_path_buf(),
        message,
    })
}

/// What building did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub path: PathBuf,
    pub commits: usize,
    pub new_commits: usize,
    pub states: usize,
    /// Whether the file was written (not when it gained nothing).
    pub written: bool,
    /// The legacy JSON index it converted (and removed).
    pub converted: Option<PathBuf>,
    /// Why a stored index was not usable and was rebuilt from the clone instead.
    pub discarded: Option<String>,
}

/// The stored index of `component` a build extends: the binary one, else a legacy one; a
/// damaged one is reported and left out (the build starts again from the clone).
fn stored(cache: &Path, component: &str) -> Result<(Option<Index>, Option<String>), IndexError> {
    for path in [
        path_for(cache, component),
        legacy_path_for(cache, component),
    ] {
        match load(&path) {
            Ok(index) => return Ok((Some(index), None)),
            Err(IndexError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                continue;
            }
            Err(e @ IndexError::Corrupt { .. }) => return Ok((None, Some(e.to_string()))),
            Err(e) => return Err(e),
        }
    }
    Ok((None, None))
}

/// Build (or extend) the index of `component` from `clone`, written under `cache`.
pub fn build(clone: &Repo, component: &str, cache: &Path) -> Result<Built, IndexError> {
    check_name(component)?;
    let path = path_for(cache, component);
    let legacy = legacy_path_for(cache, component);
    let hash = clone.object_hash();
    let (existing, discarded) = stored(cache, component)?;
    let mut index = match existing {
        Some(existing) if existing.component == component && existing.hash == hash => existing,
        _ => Index::empty(component, hash),
    };
    let source = clone.path().display().to_string();
    // A binary index read back whole, from the same clone: written again only if a commit is new.
    let current =
        index.format == Format::Binary && !index.commits.is_empty() && index.source == source;
    index.source = source;
    let known: HashSet<ObjectId> = index.commits.iter().map(|c| c.id).collect();
    let mut by_tree: HashMap<ObjectId, u32> = index
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.tree, i as u32))
        .collect();
    let mut names: HashMap<String, u32> = index
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i as u32))
        .collect();
    let mut new_commits = 0;
    for (commit, time) in clone.all_commits()? {
        if known.contains(&commit) {
            continue;
        }
        let Some(tree) = clone.tree_entry(&commit, CUTE_DIR)? else {
            continue;
        };
        let state = match by_tree.get(&tree) {
            Some(s) => *s,
            None => {
                let mut files = Vec::new();
                for (name, id) in clone.blobs_under(&tree)? {
                    if !name.ends_with(".py") {
                        continue;
                    }
                    let next = index.names.len() as u32;
                    let n = *names.entry(name.clone()).or_insert_with(|| {
                        index.names.push(name);
                        next
                    });
                    files.push((n, id));
                }
                files.sort_by_key(|(n, _)| *n);
                index.states.push(State { tree, files });
                let s = (index.states.len() - 1) as u32;
                by_tree.insert(tree, s);
                s
            }
        };
        index.commits.push(Commit {
            id: commit,
            time,
            state,
        });
        new_commits += 1;
    }
    index.sort_names();
    index
        .commits
        .sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.id.cmp(&b.id)));
    let mut built = Built {
        path: path.clone(),
        commits: index.commits.len(),
        new_commits,
        states: index.states.len(),
        written: false,
        converted: None,
        discarded,
    };
    if current && new_commits == 0 {
        return Ok(built);
    }
    let io = |source| IndexError::Io {
        path: path.clone(),
        source,
    };
    let dir = path.parent().unwrap_or(cache);
    std::fs::create_dir_all(dir).map_err(io)?;
    // Written whole beside it, then renamed over it: a reader sees the old index or the new.
    let (bytes, _) = codec::encode(&index);
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(&bytes).map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    built.written = true;
    // A JSON index beside it is stale now (the one converted, or one an earlier version wrote).
    if std::fs::remove_file(&legacy).is_ok() && index.format == Format::LegacyJson {
        built.converted = Some(legacy);
    }
    Ok(built)
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
    // Each shipped file: its name's number in the index (none: no state has it) and its blob
    // id (none: it could not be hashed, so it matches nothing).
    let mut shipped: BTreeMap<String, (Option<u32>, Option<ObjectId>)> = BTreeMap::new();
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
        let id = gix::objs::compute_hash(index.hash, gix::object::Kind::Blob, text.as_bytes()).ok();
        let name = index
            .names
            .binary_search_by(|n| n.as_str().cmp(rel))
            .ok()
            .map(|n| n as u32);
        shipped.insert(rel.to_string(), (name, id));
    }
    let total = shipped.len();
    if total == 0 {
        return Ok(None);
    }
    let same = |state: &State, (name, id): &(Option<u32>, Option<ObjectId>)| match (name, id) {
        (Some(name), Some(id)) => state.blob(*name) == Some(id),
        _ => false,
    };
    let scores: Vec<usize> = index
        .states
        .iter()
        .map(|state| shipped.values().filter(|f| same(state, f)).count())
        .collect();
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
    let best_states: Vec<&State> = index
        .states
        .iter()
        .zip(&scores)
        .filter(|(_, score)| **score == best)
        .map(|(state, _)| state)
        .collect();
    let is_best: Vec<bool> = scores.iter().map(|score| *score == best).collect();
    let commits: Vec<String> = index
        .commits
        .iter()
        .filter(|c| is_best.get(c.state as usize) == Some(&true))
        .map(|c| c.id.to_string())
        .collect();
    let mut mismatched: Vec<String> = shipped
        .iter()
        .filter(|(_, f)| best_states.iter().any(|state| !same(state, f)))
        .map(|(p, _)| p.clone())
        .collect();
    // Files the commits have and the copy lacks count as differences too.
    for state in &best_states {
        for (name, _) in &state.files {
            let Some(p) = index.names.get(*name as usize) else {
                continue;
            };
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
