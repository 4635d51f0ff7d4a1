//! A plain directory (a source checkout's work tree) as a [`View`].

use super::{MAX_FILE_BYTES, TargetError, View};
use crate::model::TargetKind;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files of a directory on disk. Symbolic links are not followed out of the root, and only
/// regular files are read (a FIFO would block, a device never end), each within
/// [`MAX_FILE_BYTES`].
pub struct DirView {
    root: PathBuf,
    kind: TargetKind,
}

impl DirView {
    /// A source tree.
    pub fn new(root: &Path) -> Self {
        DirView {
            root: root.to_path_buf(),
            kind: TargetKind::SourceTree,
        }
    }

    /// An installed environment (a site-packages directory or a virtual environment).
    pub fn installed(root: &Path) -> Self {
        DirView {
            root: root.to_path_buf(),
            kind: TargetKind::Installed,
        }
    }

    fn io(&self, path: PathBuf, source: std::io::Error) -> TargetError {
        TargetError::Io { path, source }
    }
}

impl View for DirView {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn kind(&self) -> TargetKind {
        self.kind
    }

    /// Every regular file under `dir`, following symbolic links that stay inside the root (a
    /// linked `cmake/` folder or `.cmake` file is part of the tree CMake sees; a directory seen
    /// twice, as in a link loop, is walked once). A file whose name is not UTF-8 and could be
    /// one pinprobe reads (CMake or Python, by its ending) is an error, not a silent skip.
    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        use std::os::unix::fs::MetadataExt;
        let start = if dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(dir)
        };
        let root = match self.root.canonicalize() {
            Ok(root) => root,
            Err(e) => return Err(self.io(self.root.clone(), e)),
        };
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![(start, dir.trim_end_matches('/').to_string())];
        while let Some((abs, rel)) = stack.pop() {
            // Nothing is under a path that is missing or crosses a file.
            let absent = |e: &std::io::Error| {
                matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                )
            };
            let meta = match std::fs::metadata(&abs) {
                Ok(meta) => meta,
                Err(e) if absent(&e) => continue,
                Err(e) => return Err(self.io(abs, e)),
            };
            if !seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            let entries = match std::fs::read_dir(&abs) {
                Ok(entries) => entries,
                Err(e) if absent(&e) => continue,
                Err(e) => return Err(self.io(abs, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| self.io(abs.clone(), e))?;
                let os_name = entry.file_name();
                let Some(name) = os_name.to_str() else {
                    let lossy = os_name.to_string_lossy();
                    if read_by_name(&lossy) {
                        return Err(TargetError::Malformed {
                            path: entry.path(),
                            message: "a CMake or Python file whose name is not valid UTF-8".into(),
                        });
                    }
                    continue;
                };
                if name == ".git" {
                    continue;
                }
                let child_rel = if rel.is_empty() {
                    name.to_string()
                } else {
                    format!("{rel}/{name}")
                };
                let mut ft = entry.file_type().map_err(|e| self.io(entry.path(), e))?;
                if ft.is_symlink() {
                    // Followed only where it stays inside the root; a dangling link or one
                    // leading out is not part of the tree.
                    let inside = entry
                        .path()
                        .canonicalize()
                        .is_ok_and(|real| real.starts_with(&root));
                    match std::fs::metadata(entry.path()) {
                        Ok(meta) if inside => ft = meta.file_type(),
                        _ => continue,
                    }
                }
                if ft.is_dir() {
                    stack.push((entry.path(), child_rel));
                } else if ft.is_file() {
                    out.push(child_rel);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn children(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let abs = self.root.join(dir);
        let entries = match std::fs::read_dir(&abs) {
            Ok(entries) => entries,
            // A path that is not there, or is a file (a `.pth` entry naming one), has no
            // children.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Vec::new());
            }
            Err(e) => return Err(self.io(abs, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.io(abs.clone(), e))?;
            let Some(name) = entry.file_name().to_str().map(String::from) else {
                continue;
            };
            // Follows symbolic links to directories (a venv's lib64 -> lib), but the walkers
            // that use this bound their depth.
            if entry.path().is_dir() {
                out.push(format!("{name}/"));
            } else {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    fn resolve_absolute(&self, abs: &str) -> Option<String> {
        let root = std::fs::canonicalize(&self.root).ok()?;
        let abs = std::fs::canonicalize(abs).ok()?;
        let rel = abs.strip_prefix(&root).ok()?;
        rel.to_str().map(|r| r.trim_end_matches('/').to_string())
    }

    fn dir_identity(&self, dir: &str) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(self.root.join(dir)).ok()?;
        Some((meta.dev(), meta.ino()))
    }

    fn read_stream(
        &self,
        path: &str,
        consume: &mut dyn FnMut(&mut dyn Read),
    ) -> Result<bool, TargetError> {
        let Some((abs, _)) = self.checked(path)? else {
            return Ok(false);
        };
        let mut file = crate::input::open_file(&abs).map_err(|e| self.io(abs.clone(), e))?;
        consume(&mut file);
        Ok(true)
    }

    fn local_file(&self, path: &str) -> Option<PathBuf> {
        self.checked(path).ok().flatten().map(|(abs, _)| abs)
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        let Some((abs, meta)) = self.checked(path)? else {
            return Ok(None);
        };
        let malformed = |message: String| TargetError::Malformed {
            path: abs.clone(),
            message,
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(malformed(format!(
                "{} bytes, over the {MAX_FILE_BYTES}-byte cap for one file",
                meta.len()
            )));
        }
        let file = crate::input::open_file(&abs).map_err(|e| self.io(abs.clone(), e))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(abs.clone(), e))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(malformed(format!(
                "grew past the {MAX_FILE_BYTES}-byte cap for one file while being read"
            )));
        }
        Ok(Some(bytes))
    }
}

impl DirView {
    /// `path` as an absolute path with its metadata: a regular file (links followed) that
    /// lies inside the root; `None` when it does not exist.
    fn checked(&self, path: &str) -> Result<Option<(PathBuf, std::fs::Metadata)>, TargetError> {
        let abs = self.root.join(path);
        // Follows links (a venv's lib64 -> lib), then checks where they led.
        let meta = match std::fs::metadata(&abs) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(abs, e)),
        };
        let malformed = |message: String| TargetError::Malformed {
            path: abs.clone(),
            message,
        };
        if !meta.is_file() {
            return Err(malformed("not a regular file".into()));
        }
        let real = abs.canonicalize().map_err(|e| self.io(abs.clone(), e))?;
        let root = self
            .root
            .canonicalize()
            .map_err(|e| self.io(self.root.clone(), e))?;
        if !real.starts_with(&root) {
            return Err(malformed(format!(
                "a symbolic link leads outside the target (to {})",
                real.display()
            )));
        }
        Ok(Some((abs, meta)))
    }
}

/// Whether a file of this name is one pinprobe could read from a tree (CMake or Python).
fn read_by_name(name: &str) -> bool {
    name.ends_with(".cmake")
        || name.ends_with("CMakeLists.txt")
        || name.ends_with(".py")
        || name.ends_with("CMakePresets.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, DirView) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/ok.txt"), "ok").unwrap();
        let view = DirView::new(&root);
        (tmp, view)
    }

    fn message(r: Result<Option<Vec<u8>>, TargetError>) -> String {
        match r {
            Err(e) => e.to_string(),
            Ok(v) => panic!("read succeeded: {:?}", v.map(|b| b.len())),
        }
    }

    #[test]
    fn the_walk_follows_links_inside_the_root_once_and_refuses_unreadable_names() {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::symlink;
        let (tmp, view) = setup();
        let root = view.root.clone();
        std::fs::create_dir_all(root.join("cmake")).unwrap();
        std::fs::create_dir_all(root.join("third_party")).unwrap();
        std::fs::write(root.join("cmake/real.cmake"), "set(A 1)").unwrap();
        symlink("../cmake/real.cmake", root.join("third_party/x.cmake")).unwrap();
        symlink("cmake", root.join("ext")).unwrap();
        symlink("..", root.join("cmake/loop")).unwrap();
        std::fs::write(tmp.path().join("outside.cmake"), "set(B 1)").unwrap();
        symlink(tmp.path().join("outside.cmake"), root.join("out.cmake")).unwrap();
        symlink(tmp.path(), root.join("up")).unwrap();
        symlink("missing", root.join("dangling.cmake")).unwrap();
        let name = std::ffi::OsStr::from_bytes(b"data\xff.bin");
        std::fs::write(root.join(name), "x").unwrap();
        let files = view.files_under("").unwrap();
        assert!(
            files.contains(&"third_party/x.cmake".to_string()),
            "{files:?}"
        );
        assert!(files.contains(&"sub/ok.txt".to_string()), "{files:?}");
        assert!(
            files.iter().any(|f| f.ends_with("real.cmake")),
            "the linked folder or the real one: {files:?}"
        );
        assert_eq!(
            files.iter().filter(|f| f.ends_with("real.cmake")).count(),
            1,
            "a folder reached twice is walked once: {files:?}"
        );
        assert!(
            !files
                .iter()
                .any(|f| f.contains("out.cmake") || f.starts_with("up/") || f.contains("dangling")),
            "{files:?}"
        );
        let bad = std::ffi::OsStr::from_bytes(b"cmake/flash\xff.cmake");
        std::fs::write(root.join(bad), "x").unwrap();
        let err = view.files_under("").unwrap_err().to_string();
        assert!(err.contains("not valid UTF-8"), "{err}");
    }

    #[test]
    fn reads_regular_files_and_links_inside_the_root() {
        let (_tmp, view) = setup();
        std::os::unix::fs::symlink("sub/ok.txt", view.root.join("link")).unwrap();
        assert_eq!(view.read("sub/ok.txt").unwrap(), Some(b"ok".to_vec()));
        assert_eq!(view.read("link").unwrap(), Some(b"ok".to_vec()));
        assert_eq!(view.read("missing").unwrap(), None);
    }

    // The bad-input corpus found these: a FIFO blocked forever, /dev/zero read until memory ran
    // out, and a link led outside the target.
    #[test]
    fn refuses_devices_fifos_links_outside_and_huge_files() {
        let (tmp, view) = setup();
        std::os::unix::fs::symlink("/dev/zero", view.root.join("zero")).unwrap();
        assert!(message(view.read("zero")).contains("not a regular file"));
        let fifo = view.root.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(message(view.read("fifo")).contains("not a regular file"));
        std::fs::write(tmp.path().join("outside"), "secret").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside"), view.root.join("out")).unwrap();
        assert!(message(view.read("out")).contains("outside the target"));
        let big = std::fs::File::create(view.root.join("big")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(message(view.read("big")).contains("cap for one file"));
    }
}
