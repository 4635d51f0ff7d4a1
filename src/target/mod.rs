//! Targets: each input kind becomes a read-only [`View`] of files, never extracted to disk.
//!
//! A view lists paths relative to its root (always `/`-separated) and reads one file at a time.
//! `open` picks the input kind from the target string and the file system.

mod dir;
mod git_tree;
mod mem;
mod wheel;

pub use dir::DirView;
pub use git_tree::GitTreeView;
pub use mem::MemView;
pub use wheel::WheelView;

use std::path::{Path, PathBuf};

/// The largest file any view reads (a RECORD of a big wheel is a few MB; sources less).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A read-only view of a target's files.
pub trait View {
    /// What this view shows, for reports: a path, plus `@rev` for a git tree.
    fn describe(&self) -> String;
    /// The kind of target, as reported in JSON (`source-tree`, `git-tree`, ...).
    fn kind(&self) -> &'static str;
    /// Every file below `dir` (relative, `/`-separated, `""` for the root), recursively, sorted.
    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError>;
    /// The bytes of one file, or `None` when it does not exist.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError>;
    /// An identity for directory `dir` that is equal for two paths reaching the same directory
    /// (through symbolic links), for walkers that must not loop; `None` where paths are the
    /// identity (archives, memory).
    fn dir_identity(&self, _dir: &str) -> Option<(u64, u64)> {
        None
    }
    /// The name `path` has in the underlying archive when it differs (a wheel member installed
    /// from `NAME.data/purelib/`, or a name pip normalises): what the archive's RECORD lists.
    fn origin(&self, _path: &str) -> Option<String> {
        None
    }
    /// The immediate children of `dir` (names; directories end in `/`), sorted.
    fn children(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let dir = dir.trim_end_matches('/');
        let mut out: Vec<String> = self
            .files_under(dir)?
            .iter()
            .filter_map(|p| {
                let rest = if dir.is_empty() {
                    p.as_str()
                } else {
                    p.strip_prefix(dir)?.strip_prefix('/')?
                };
                Some(match rest.split_once('/') {
                    Some((first, _)) => format!("{first}/"),
                    None => rest.to_string(),
                })
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// Why a target could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a directory, wheel or image that pinprobe can scan")]
    Unsupported { path: PathBuf },
    #[error("{path}: --rev needs a git repository: {message}")]
    NotGit { path: PathBuf, message: String },
    #[error("{path}: revision `{rev}` not found: {message}")]
    BadRevision {
        path: PathBuf,
        rev: String,
        message: String,
    },
    #[error("{path}: git object store: {message}")]
    Git { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Malformed { path: PathBuf, message: String },
}

/// Open `path` as a view: a directory (optionally a git tree at `rev`).
pub fn open(path: &Path, rev: Option<&str>) -> Result<Box<dyn View>, TargetError> {
    let meta = std::fs::metadata(path).map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    match rev {
        Some(rev) => Ok(Box::new(GitTreeView::open(path, rev)?)),
        None if meta.is_dir() => Ok(Box::new(DirView::new(path))),
        None => Err(TargetError::Unsupported {
            path: path.to_path_buf(),
        }),
    }
}
