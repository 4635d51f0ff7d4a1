//! A plain directory (a source checkout's work tree) as a [`View`].

use super::{TargetError, View};
use std::path::{Path, PathBuf};

/// Files of a directory on disk. Symbolic links are not followed out of the root.
pub struct DirView {
    root: PathBuf,
    kind: &'static str,
}

impl DirView {
    /// A source tree.
    pub fn new(root: &Path) -> Self {
        DirView {
            root: root.to_path_buf(),
            kind: "source-tree",
        }
    }

    /// An installed environment (a site-packages directory or a virtual environment).
    pub fn installed(root: &Path) -> Self {
        DirView {
            root: root.to_path_buf(),
            kind: "installed",
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

    fn kind(&self) -> &'static str {
        self.kind
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let start = if dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(dir)
        };
        let mut out = Vec::new();
        let mut stack = vec![(start, dir.trim_end_matches('/').to_string())];
        while let Some((abs, rel)) = stack.pop() {
            let entries = match std::fs::read_dir(&abs) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(self.io(abs, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| self.io(abs.clone(), e))?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    // A name that is not UTF-8 cannot be a CMake or Python file we match on;
                    // it is skipped rather than misreported.
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
                let ft = entry.file_type().map_err(|e| self.io(entry.path(), e))?;
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
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
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

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        let abs = self.root.join(path);
        match std::fs::read(&abs) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io(abs, e)),
        }
    }
}
