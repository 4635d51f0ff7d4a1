//! Targets: each input kind becomes a read-only [`View`] of files, never extracted to disk.
//!
//! A view lists paths relative to its root (always `/`-separated) and reads one file at a time.
//! `open` picks the input kind from the target string and the file system.

mod dir;
pub mod elf;
mod git_tree;
pub mod identity;
pub mod image;
mod inflate;
mod mem;
pub mod recording;
mod wheel;

pub use dir::DirView;
pub use git_tree::{BlobChange, GitTreeView, blob_at, diff_trees};
pub use mem::MemView;
pub use recording::{Answer, digest_bytes, digest_names};
pub use wheel::{WheelView, end_records_digest};

use crate::model::TargetKind;
use std::path::{Path, PathBuf};

/// What kind of input a target string names, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetInput {
    /// A vLLM source tree (plain directory or git work tree).
    SourceTree(PathBuf),
    /// A wheel file.
    Wheel(PathBuf),
    /// A site-packages directory or a virtual environment.
    Installed(PathBuf),
    /// A container image: `docker://REF` (`registry:REF`), `oci:DIR[:TAG]`,
    /// `oci-archive:PATH[:TAG]`, `docker-archive:PATH[:REF]`, `docker-daemon:NAME`,
    /// `podman:NAME`, or a `docker save` tarball.
    Image(String),
}

/// Classify a target string: image references by prefix, files by extension, directories by
/// what they hold (`CMakeLists.txt` or `cmake/`: a source tree; `site-packages`, a `pyvenv.cfg`,
/// `conda-meta/`, `*.dist-info`, or an environment at any depth below: an installed
/// environment, or a prefix or filesystem holding them).
pub fn classify(target: &str) -> TargetInput {
    if image::reference::has_prefix(target) {
        return TargetInput::Image(target.to_string());
    }
    let path = PathBuf::from(target);
    let lower = target.to_ascii_lowercase();
    if lower.ends_with(".whl") {
        return TargetInput::Wheel(path);
    }
    if lower.ends_with(".tar") || lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        return TargetInput::Image(target.to_string());
    }
    if path.join("CMakeLists.txt").is_file() || path.join("cmake").is_dir() {
        return TargetInput::SourceTree(path);
    }
    let installed = path.join("pyvenv.cfg").is_file()
        || path
            .file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages")
        || path.join("conda-meta").is_dir()
        || std::fs::read_dir(&path).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        })
        || holds_environment(&DirView::installed(&path));
    if installed {
        TargetInput::Installed(path)
    } else {
        TargetInput::SourceTree(path)
    }
}

/// Whether a `site-packages` / `dist-packages` directory or a `*.dist-info` lies anywhere
/// below the view's root (`/opt/conda`, `/usr/lib/python3/dist-packages`, a `uv tool`
/// environment ten levels down). Symbolic links are walked once (by directory identity).
fn holds_environment(view: &dyn View) -> bool {
    let mut stack = vec![String::new()];
    let mut visited = std::collections::HashSet::new();
    while let Some(dir) = stack.pop() {
        if let Some(id) = view.dir_identity(&dir)
            && !visited.insert(id)
        {
            continue;
        }
        let Ok(children) = view.children(&dir) else {
            continue;
        };
        for child in children {
            let Some(name) = child.strip_suffix('/') else {
                continue;
            };
            if matches!(name, "site-packages" | "dist-packages") || name.ends_with(".dist-info") {
                return true;
            }
            if !matches!(
                name,
                "proc" | "sys" | "dev" | ".git" | "node_modules" | "__pycache__"
            ) {
                stack.push(if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                });
            }
        }
    }
    false
}

/// Whether a path (relative to a filesystem or archive root) can matter to an artifact scan:
/// package metadata (`*.dist-info/METADATA`, `RECORD`), `vllm/_version.py`, the Python
/// sources of bundled or standalone FlashAttention copies, and what decides where Python
/// imports them from (`.pth` files, `sitecustomize.py` / `usercustomize.py` anywhere, a
/// venv's `pyvenv.cfg`, the packages' `__init__.py`). Image scanners keep only these.
pub fn is_interesting(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_dist_info = path
        .rsplit('/')
        .nth(1)
        .is_some_and(|dir| dir.ends_with(".dist-info"));
    let parent = path.rsplit('/').nth(1).unwrap_or("");
    (in_dist_info && matches!(name, "METADATA" | "RECORD" | "direct_url.json"))
        // Editable installs: `.pth` path files of an environment.
        || (name.ends_with(".pth") && matches!(parent, "site-packages" | "dist-packages"))
        || path.ends_with("vllm/_version.py")
        // Python's import path: startup modules (Debian links the interpreter's to /etc),
        // venv settings, and the packages themselves wherever a path entry puts them.
        || matches!(name, "sitecustomize.py" | "usercustomize.py" | "pyvenv.cfg")
        || (name == "__init__.py" && matches!(parent, "vllm" | "flash_attn"))
        || (name.ends_with(".py")
            && (path.contains("vllm/vllm_flash_attn/")
                || path.contains("flash_attn/cute/")
                || path.contains("vllm/third_party/")
                // A copy anywhere (`/opt/fa/cute`), reached through a link.
                || path.contains("/cute/")
                || path.starts_with("cute/")))
}

/// The largest file any view reads (a RECORD of a big wheel is a few MB; sources less).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// One member as an archive's central directory describes it (see [`View::archive_entry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveEntry {
    /// The compression method (0 stored, 8 deflate).
    pub method: u16,
    pub crc32: u32,
    pub compressed: u64,
    pub size: u64,
}

/// What a target's processes start with, as a container image's config says (`config.Env`,
/// `config.Volumes`, `config.WorkingDir`): Python reads `PYTHONPATH` and friends from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runtime {
    /// `KEY=VALUE` pairs, in the config's order (a later duplicate wins, as in a process).
    pub env: Vec<(String, String)>,
    /// Mount points (absolute) whose contents come from outside the image at run time.
    pub volumes: Vec<String>,
    pub working_dir: Option<String>,
    /// Why the config's process settings could not be read (an `Env` that is not a list of
    /// strings): nothing that depends on them can be decided.
    pub malformed: Option<String>,
}

impl Runtime {
    /// The value of `key`, the last one set.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A read-only view of a target's files.
pub trait View {
    /// What this view shows, for reports: a path, plus `@rev` for a git tree.
    fn describe(&self) -> String;
    /// The kind of target, as reports name it.
    fn kind(&self) -> TargetKind;
    /// Every file below `dir` (relative, `/`-separated, `""` for the root), recursively, sorted.
    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError>;
    /// The bytes of one file, or `None` when it does not exist.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError>;
    /// Whether `path`, climbing above the view's root (`../x.cmake`, normalised), still lies in
    /// the larger tree this view is a part of (a CMake project's directory seen as a view of
    /// its own), so that `read` reads it there. `false` for a view that is a whole tree:
    /// nothing above its root is read.
    fn reaches_above(&self, _path: &str) -> bool {
        false
    }
    /// An identity for directory `dir` that is equal for two paths reaching the same directory
    /// (through symbolic links), for walkers that must not loop; `None` where paths are the
    /// identity (archives, memory).
    fn dir_identity(&self, _dir: &str) -> Option<(u64, u64)> {
        None
    }
    /// The view path of an absolute path as the target's own filesystem names it (an editable
    /// install's `.pth` line or `direct_url.json` URL), when it lies inside the view; `None`
    /// when it does not, or when the view has no such filesystem (a wheel).
    fn resolve_absolute(&self, _abs: &str) -> Option<String> {
        None
    }
    /// The name `path` has in the underlying archive when it differs (a wheel member installed
    /// from `NAME.data/purelib/`, or a name pip normalises): what the archive's RECORD lists.
    fn origin(&self, _path: &str) -> Option<String> {
        None
    }
    /// What the archive's own directory says of `path` (a wheel member's CRC-32 and sizes), for
    /// caches that must tell two different members apart without reading them; `None` where
    /// the view is not an archive with such a directory.
    fn archive_entry(&self, _path: &str) -> Option<ArchiveEntry> {
        None
    }
    /// Hand one file's bytes to `consume` as a stream, for files too large to hold (a shared
    /// library read for its dynamic symbols; the reader bounds what it reads). `Ok(false)` when
    /// the file does not exist. The default streams what [`View::read`] returns (so the
    /// per-file cap applies); views that can stream (a wheel member, a directory) override it.
    fn read_stream(
        &self,
        path: &str,
        consume: &mut dyn FnMut(&mut dyn std::io::Read),
    ) -> Result<bool, TargetError> {
        match self.read(path)? {
            Some(bytes) => {
                consume(&mut bytes.as_slice());
                Ok(true)
            }
            None => Ok(false),
        }
    }
    /// The file `path` is on this machine's file system, for caches keyed by a file's stamp
    /// (an installed library): a directory view's regular file inside its root, links
    /// followed. `None` for archives, images and memory, and for a path that is not such a
    /// file.
    fn local_file(&self, _path: &str) -> Option<PathBuf> {
        None
    }
    /// The dynamic symbols of a shared library that the view read while it was built, with
    /// the digest and size of the bytes they came from (an image streams each library a symbol
    /// signature needs once, from its layer, and keeps nothing else of it); `Err` when it
    /// could not be read. `None` when the view holds no such reading of `path` (then
    /// [`View::read_stream`] hands over the bytes).
    fn library_symbols(&self, _path: &str) -> Option<Result<elf::Library, elf::ElfError>> {
        None
    }
    /// What the target's processes start with, where the target says (a container image's
    /// config: `Env`, `Volumes`, `WorkingDir`); `None` for targets that say nothing of it.
    fn runtime(&self) -> Option<&Runtime> {
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

/// Where the signature reads files from (a view, a commit's tree, a patched tree).
/// Paths are relative to the kernel project's root, e.g. `flash_attn/cute/block_info.py`.
pub trait SourceFiles {
    /// The file's text, `Ok(None)` when it does not exist, `Err` when it could not be read.
    fn read(&self, path: &str) -> Result<Option<String>, String>;
    /// Whether these are the files an artifact ships (a wheel, an environment, an image), as
    /// opposed to a pinned commit's tree: some signatures describe only what is shipped.
    fn shipped(&self) -> bool {
        false
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
    /// A path that exists in the view but cannot be read (an image link whose target the
    /// merged view does not hold): a verdict that needs it is undecidable, not an error.
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
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
