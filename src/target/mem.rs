//! An in-memory [`View`]: files collected from somewhere else (an image's layers, a test).

use super::{TargetError, View};
use std::collections::BTreeMap;

/// Files held in memory, by `/`-separated relative path.
#[derive(Debug, Clone, Default)]
pub struct MemView {
    describe: String,
    kind: &'static str,
    files: BTreeMap<String, Vec<u8>>,
}

impl MemView {
    pub fn new(describe: impl Into<String>, kind: &'static str) -> Self {
        MemView {
            describe: describe.into(),
            kind,
            files: BTreeMap::new(),
        }
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

    fn kind(&self) -> &'static str {
        self.kind
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let dir = dir.trim_end_matches('/');
        Ok(self
            .files
            .keys()
            .filter(|p| {
                dir.is_empty()
                    || p.strip_prefix(dir)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .cloned()
            .collect())
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        Ok(self.files.get(path).cloned())
    }
}
