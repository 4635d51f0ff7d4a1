//! What a target's content is, as one digest ([`of`]): what a resumable fleet run
//! (`scan --state`) compares to decide that a target it finished before is the same target.
//!
//! - a wheel or a `docker save` archive: the SHA-256 of the file;
//! - a registry image: the digest of the manifest (or index) the reference names now;
//! - an OCI layout: the SHA-256 of its `index.json` (blobs are content-addressed, and every
//!   one read is checked against its digest);
//! - a source tree read at `--rev`: the commit the revision resolves to;
//! - a directory (a source tree's work tree, an installed environment): the SHA-256 over every
//!   path, file content and link target under it (`.git` aside), and the work tree's `HEAD`
//!   commit (vLLM's own revision is evidence for rules that require one).
//!
//! [`Identity::unchanged`] says, after the scan, that the content is still what was digested
//! before it (a file's [`FileStamp`], else the digest again), so a target that
//! changed while it was scanned is never recorded under the digest of what it was.

use super::image::{self, reference};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A target's content digest, and how to tell it is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `sha256:HEX`, `git:COMMIT`, or a registry's `sha256:` manifest digest.
    pub digest: String,
    /// For a file: its stamp when digested.
    stamp: Option<FileStamp>,
}

/// The identity of `target` (read at `rev` for a source tree), or `None` when it cannot be
/// computed (the scan then reports what is wrong with the target, and nothing is reused).
pub fn of(target: &str, rev: Option<&str>, images: &image::Options) -> Option<Identity> {
    if let Some(rev) = rev {
        return commit_at(Path::new(target), rev).map(|c| Identity {
            digest: format!("git:{c}"),
            stamp: None,
        });
    }
    match super::classify(target) {
        super::TargetInput::Wheel(path) => file(&path),
        super::TargetInput::SourceTree(path) | super::TargetInput::Installed(path) => tree(&path)
            .map(|digest| Identity {
                digest,
                stamp: None,
            }),
        super::TargetInput::Image(image) => match reference::parse(&image).ok()? {
            reference::ImageRef::Archive(path) | reference::ImageRef::ArchiveImage { path, .. } => {
                file(&path)
            }
            // What the engine holds can change under the same name: scanned every run.
            reference::ImageRef::Daemon { .. } => None,
            reference::ImageRef::OciDir { dir, .. } => {
                let index = crate::input::read_file(&dir.join("index.json"), 64 << 20).ok()?;
                Some(Identity {
                    digest: sha256_of(&index),
                    stamp: None,
                })
            }
            reference::ImageRef::Registry(r) => {
                let mut registry = image::registry::Registry::new(r, images).ok()?;
                let (_, digest) = registry.pull_manifest(None).ok()?;
                Some(Identity {
                    digest,
                    stamp: None,
                })
            }
        },
    }
}

impl Identity {
    /// Whether `target` still has this identity (after it was scanned).
    pub fn unchanged(&self, target: &str, rev: Option<&str>, images: &image::Options) -> bool {
        match (self.stamp, file_target(target, rev)) {
            (Some(stamp), Some(path)) => FileStamp::of(&path) == Some(stamp),
            _ => of(target, rev, images).is_some_and(|now| now.digest == self.digest),
        }
    }
}

/// What says a file is the same file, unchanged since it was looked at: its device, inode and
/// size, and its modification and status-change times to the nanosecond. Any write moves the
/// status-change time, which no unprivileged process can set back (`touch` sets only the
/// other two), and a replaced file is another inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of the file at `path` (its target, through links), `None` when it cannot be
    /// read or is not a regular file.
    pub fn of(path: &Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        meta.is_file().then(|| FileStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// The stamp as bytes, for a cache key.
    pub fn to_bytes(self) -> Vec<u8> {
        [
            self.dev.to_le_bytes(),
            self.ino.to_le_bytes(),
            self.size.to_le_bytes(),
            self.mtime.0.to_le_bytes(),
            self.mtime.1.to_le_bytes(),
            self.ctime.0.to_le_bytes(),
            self.ctime.1.to_le_bytes(),
        ]
        .concat()
    }

    /// Whether the file's last change is older than `margin` before `when`: then any later
    /// change carries a later time, whatever the file system's timestamp granularity (up to
    /// `margin`), and so a different stamp. A file written just before `when` may be written
    /// again within the same tick without its stamp changing (git's "racy" entries).
    pub fn settled(&self, when: SystemTime, margin: Duration) -> bool {
        let Ok(since) = when.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let Some(bound) = since.checked_sub(margin) else {
            return false;
        };
        let bound = (bound.as_secs() as i64, i64::from(bound.subsec_nanos()));
        self.mtime < bound && self.ctime < bound
    }
}

/// The file a wheel or archive target names.
fn file_target(target: &str, rev: Option<&str>) -> Option<PathBuf> {
    if rev.is_some() {
        return None;
    }
    match super::classify(target) {
        super::TargetInput::Wheel(path) => Some(path),
        super::TargetInput::Image(image) => match reference::parse(&image).ok()? {
            reference::ImageRef::Archive(path) => Some(path),
            _ => None,
        },
        _ => None,
    }
}

fn file(path: &Path) -> Option<Identity> {
    let stamp = FileStamp::of(path)?;
    let mut f = crate::input::open_file(path).ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Some(Identity {
        digest: format!("sha256:{}", hex::encode(hasher.finalize())),
        stamp: Some(stamp),
    })
}

fn sha256_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The commit `rev` resolves to in the repository at `path`.
fn commit_at(path: &Path, rev: &str) -> Option<String> {
    let repo = gix::open(path).ok()?;
    let id = repo.rev_parse_single(rev).ok()?;
    let commit = id.object().ok()?.peel_to_commit().ok()?;
    Some(commit.id.to_string())
}

/// Every path, file content and link target under `root` (sorted, `.git` aside), and the work
/// tree's HEAD commit, hashed.
fn tree(root: &Path) -> Option<String> {
    let mut hasher = Sha256::new();
    if let Some(head) = gix::open(root)
        .ok()
        .and_then(|r| r.head_id().ok().map(|id| id.detach()))
    {
        hasher.update(format!("HEAD {head}\0"));
    }
    let mut pending = vec![PathBuf::new()];
    let mut buf = vec![0u8; 1 << 20];
    while let Some(rel) = pending.pop() {
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> =
            std::fs::read_dir(root.join(&rel))
                .ok()?
                .map(|e| {
                    e.ok()
                        .and_then(|e| Some((e.file_name(), e.file_type().ok()?)))
                })
                .collect::<Option<_>>()?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        // Directories are walked after this one's files, in reverse so the stack pops them in
        // order: the hash follows a fixed order of the paths.
        let mut dirs = Vec::new();
        for (name, kind) in entries {
            let path = rel.join(&name);
            let shown = path.to_string_lossy().into_owned();
            if kind.is_dir() {
                if name != ".git" {
                    hasher.update(format!("D {shown}\0"));
                    dirs.push(path);
                }
            } else if kind.is_symlink() {
                let to = std::fs::read_link(root.join(&path)).ok()?;
                hasher.update(format!("L {shown}\0{}\0", to.to_string_lossy()));
            } else if kind.is_file() {
                if name == ".git" {
                    continue;
                }
                hasher.update(format!("F {shown}\0"));
                let mut f = crate::input::open_file(&root.join(&path)).ok()?;
                let mut len = 0u64;
                loop {
                    let n = f.read(&mut buf).ok()?;
                    if n == 0 {
                        break;
                    }
                    len += n as u64;
                    hasher.update(&buf[..n]);
                }
                hasher.update(format!("\0{len}\0"));
            } else {
                // A FIFO, socket or device: nothing a scan reads, but not nothing.
                hasher.update(format!("O {shown}\0"));
            }
        }
        pending.extend(dirs.into_iter().rev());
    }
    Some(format!("sha256:{}", hex::encode(hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(dir: &Path) -> String {
        of(&dir.display().to_string(), None, &image::Options::default())
            .expect("a digest")
            .digest
    }

    #[test]
    fn a_tree_digest_changes_with_any_content_path_or_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("cmake")).expect("mkdir");
        std::fs::write(root.join("CMakeLists.txt"), "project(x)\n").expect("write");
        std::fs::write(root.join("cmake/a.cmake"), "set(A 1)\n").expect("write");
        let first = digest(root);
        assert_eq!(digest(root), first, "stable");
        std::fs::write(root.join("cmake/a.cmake"), "set(A 2)\n").expect("write");
        let edited = digest(root);
        assert_ne!(edited, first);
        std::fs::rename(root.join("cmake/a.cmake"), root.join("cmake/b.cmake")).expect("mv");
        let moved = digest(root);
        assert_ne!(moved, edited);
        std::os::unix::fs::symlink("b.cmake", root.join("cmake/c.cmake")).expect("link");
        assert_ne!(digest(root), moved);
        // `.git` is not content.
        let linked = digest(root);
        std::fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        std::fs::write(root.join(".git/objects/x"), "y").expect("write");
        assert_eq!(digest(root), linked);
    }

    #[test]
    fn a_file_stamp_changes_with_any_write_or_replacement() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x-1.0-py3-none-any.whl");
        std::fs::write(&path, b"PK one").expect("write");
        let first = FileStamp::of(&path).expect("a stamp");
        assert_eq!(FileStamp::of(&path), Some(first), "stable");
        // The same size, the modification time set back: the status-change time still moves.
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime");
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, b"PK two").expect("write");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(mtime))
            .expect("set mtime");
        let rewritten = FileStamp::of(&path).expect("a stamp");
        assert_ne!(rewritten, first);
        // Replaced by a copy of itself: another inode.
        let copy = dir.path().join("copy.whl");
        std::fs::copy(&path, &copy).expect("copy");
        std::fs::rename(&copy, &path).expect("rename");
        assert_ne!(FileStamp::of(&path), Some(rewritten));
        // Just written: not settled; long before a later moment: settled.
        let now = SystemTime::now();
        let stamp = FileStamp::of(&path).expect("a stamp");
        assert!(!stamp.settled(now, Duration::from_secs(2)));
        assert!(stamp.settled(now + Duration::from_secs(3), Duration::from_secs(2)));
        assert!(
            FileStamp::of(dir.path()).is_none(),
            "a directory has no file stamp"
        );
        assert!(FileStamp::of(&dir.path().join("absent")).is_none());
    }

    #[test]
    fn a_file_is_unchanged_until_it_is_rewritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wheel = dir.path().join("x-1.0-py3-none-any.whl");
        std::fs::write(&wheel, b"PK one").expect("write");
        let target = wheel.display().to_string();
        let opts = image::Options::default();
        let id = of(&target, None, &opts).expect("a digest");
        assert_eq!(id.digest, sha256_of(b"PK one"));
        assert!(id.unchanged(&target, None, &opts));
        std::fs::write(&wheel, b"PK two, longer").expect("write");
        assert!(!id.unchanged(&target, None, &opts));
        assert!(of("/nonexistent/y.whl", None, &opts).is_none());
    }
}
