//! An in-memory [`View`]: files collected from somewhere else (an image's layers, a test).

use super::{Runtime, TargetError, View, elf};
use crate::model::TargetKind;
use std::collections::BTreeMap;

/// Files held in memory, by `/`-separated relative path.
#[derive(Debug, Clone, Default)]
pub struct MemView {
    describe: String,
    kind: TargetKind,
    files: BTreeMap<String, Vec<u8>>,
    /// Paths that exist but cannot be read, and why (a link whose target is not held).
    unreadable: BTreeMap<String, String>,
    /// Shared libraries held only as their dynamic symbols (or why they could not be read).
    libraries: BTreeMap<String, Result<elf::Library, elf::ElfError>>,
    /// What the image's processes start with (its config's `Env`, `Volumes`, `WorkingDir`).
    runtime: Option<Runtime>,
}

impl MemView {
    pub fn new(describe: impl Into<String>, kind: TargetKind) -> Self {
        MemView {
            describe: describe.into(),
            kind,
            files: BTreeMap::new(),
            unreadable: BTreeMap::new(),
            libraries: BTreeMap::new(),
            runtime: None,
        }
    }

    /// What the target's processes start with (an image config's `Env`, `Volumes`, ...).
    pub fn set_runtime(&mut self, runtime: Runtime) {
        self.runtime = Some(runtime);
    }

    /// A shared library held as its dynamic symbols only: listed, [`View::library_symbols`]
    /// answers for it, and `read` fails (its bytes are not held), so a reader that needs the
    /// bytes is undecidable rather than clean.
    pub fn insert_library(
        &mut self,
        path: impl Into<String>,
        symbols: Result<elf::Library, elf::ElfError>,
    ) {
        let path = path.into();
        if !self.files.contains_key(&path) {
            self.unreadable.remove(&path);
            self.libraries.insert(path, symbols);
        }
    }

    /// A path that exists but cannot be read: listed, and `read` fails with `reason`, so a
    /// verdict that needs it is undecidable rather than clean.
    pub fn insert_unreadable(&mut self, path: impl Into<String>, reason: impl Into<String>) {
        let path = path.into();
        if !self.files.contains_key(&path) && !self.libraries.contains_key(&path) {
            self.unreadable.insert(path, reason.into());
        }
    }

    /// The kept files, by path.
    pub fn files(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.files
    }

    /// The paths that exist but cannot be read, and why.
    pub fn unreadable(&self) -> &BTreeMap<String, String> {
        &self.unreadable
    }

    pub fn insert(&mut self, path: impl Into<String>, bytes: Vec<u8>) {
        self.files.insert(path.into(), bytes);
    }

    pub fn remove(&mut self, path: &str) -> Option<Vec<u8>> {
        self.files.remove(path)
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

impl View for MemView {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn kind(&self) -> TargetKind {
        self.kind
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let dir = dir.trim_end_matches('/');
        let under = |p: &&String| {
            dir.is_empty()
                || p.strip_prefix(dir)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        let mut out: Vec<String> = self
            .files
            .keys()
            .chain(self.unreadable.keys())
            .chain(self.libraries.keys())
            .filter(under)
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn runtime(&self) -> Option<&Runtime> {
        self.runtime.as_ref()
    }

    fn resolve_absolute(&self, abs: &str) -> Option<String> {
        // An image's merged files are named from its root.
        if self.kind != TargetKind::Image || !abs.starts_with('/') {
            return None;
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in abs.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        Some(parts.join("/"))
    }

    fn library_symbols(&self, path: &str) -> Option<Result<elf::Library, elf::ElfError>> {
        self.libraries.get(path).cloned()
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        if let Some(bytes) = self.files.get(path) {
            return Ok(Some(bytes.clone()));
        }
        if self.libraries.contains_key(path) {
            return Err(TargetError::Unreadable {
                path: format!("{}: {path}", self.describe).into(),
                message: "a shared library held only as its dynamic symbols (its bytes were streamed past)".into(),
            });
        }
        match self.unreadable.get(path) {
            Some(reason) => Err(TargetError::Unreadable {
                path: format!("{}: {path}", self.describe).into(),
                message: reason.clone(),
            }),
            None => Ok(None),
        }
    }
}
