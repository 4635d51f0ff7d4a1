//! A view that notes what it is asked and what it answered: how an evaluation is shared
//! between two revisions (`scan::shared` takes a whole CMake evaluation over when every access
//! answers the same; `pin::cmake::interp::share` resumes runs from a recorded prefix). An
//! access other than `read`, `files_under` and `children`, or one that failed, is noted as
//! one that cannot be replayed.

use super::{ArchiveEntry, Runtime, TargetError, View, elf};
use crate::model::TargetKind;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// What a view access answered, as the views that record an evaluation's accesses keep it
/// (`scan::shared`, `pin::cmake::interp::share`): the SHA-256 of the bytes (or of the names,
/// each ended by a NUL), with a leading byte telling a missing file from an empty one.
pub type Answer = [u8; 32];

/// The [`Answer`] of a read: `None` for a file that is not there.
pub fn digest_bytes(bytes: Option<&[u8]>) -> Answer {
    let mut h = Sha256::new();
    match bytes {
        Some(b) => {
            h.update([1u8]);
            h.update(b);
        }
        None => h.update([0u8]),
    }
    h.finalize().into()
}

/// The [`Answer`] of a listing.
pub fn digest_names(names: &[String]) -> Answer {
    let mut h = Sha256::new();
    for n in names {
        h.update(n.as_bytes());
        h.update([0u8]);
    }
    h.finalize().into()
}

/// One access a recording view can ask again of another view.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    Read(String),
    FilesUnder(String),
    Children(String),
}

impl Access {
    /// What `view` answers to it now; `None` when it fails.
    pub fn answer(&self, view: &dyn View) -> Option<Answer> {
        match self {
            Access::Read(p) => view.read(p).ok().map(|b| digest_bytes(b.as_deref())),
            Access::FilesUnder(d) => view.files_under(d).ok().map(|n| digest_names(&n)),
            Access::Children(d) => view.children(d).ok().map(|n| digest_names(&n)),
        }
    }
}

/// Where a [`Recording`] notes each access: `Some` one it can replay, with its answer; `None`
/// anything else (another method of the view, an access that failed).
pub trait Notes {
    fn note(&self, noted: Option<(Access, Answer)>);
}

/// A view that answers as `inner` does and notes every access in `notes`.
pub struct Recording<'a, N: Notes> {
    inner: &'a dyn View,
    pub notes: N,
}

impl<'a, N: Notes> Recording<'a, N> {
    pub fn new(inner: &'a dyn View, notes: N) -> Self {
        Recording { inner, notes }
    }

    fn unreplayable(&self) {
        self.notes.note(None);
    }
}

impl<N: Notes> View for Recording<'_, N> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn kind(&self) -> TargetKind {
        self.inner.kind()
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let out = self.inner.files_under(dir);
        let answer = out.as_ref().ok().map(|n| digest_names(n));
        self.notes
            .note(answer.map(|a| (Access::FilesUnder(dir.to_string()), a)));
        out
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        let out = self.inner.read(path);
        let answer = out.as_ref().ok().map(|b| digest_bytes(b.as_deref()));
        self.notes
            .note(answer.map(|a| (Access::Read(path.to_string()), a)));
        out
    }

    fn children(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let out = self.inner.children(dir);
        let answer = out.as_ref().ok().map(|n| digest_names(n));
        self.notes
            .note(answer.map(|a| (Access::Children(dir.to_string()), a)));
        out
    }

    fn reaches_above(&self, path: &str) -> bool {
        self.unreplayable();
        self.inner.reaches_above(path)
    }

    fn dir_identity(&self, dir: &str) -> Option<(u64, u64)> {
        self.unreplayable();
        self.inner.dir_identity(dir)
    }

    fn resolve_absolute(&self, abs: &str) -> Option<String> {
        self.unreplayable();
        self.inner.resolve_absolute(abs)
    }

    fn origin(&self, path: &str) -> Option<String> {
        self.unreplayable();
        self.inner.origin(path)
    }

    fn archive_entry(&self, path: &str) -> Option<ArchiveEntry> {
        self.unreplayable();
        self.inner.archive_entry(path)
    }

    fn read_stream(
        &self,
        path: &str,
        consume: &mut dyn FnMut(&mut dyn std::io::Read),
    ) -> Result<bool, TargetError> {
        self.unreplayable();
        self.inner.read_stream(path, consume)
    }

    fn local_file(&self, path: &str) -> Option<PathBuf> {
        self.unreplayable();
        self.inner.local_file(path)
    }

    fn library_symbols(&self, path: &str) -> Option<Result<elf::Library, elf::ElfError>> {
        self.unreplayable();
        self.inner.library_symbols(path)
    }

    fn runtime(&self) -> Option<&Runtime> {
        self.unreplayable();
        self.inner.runtime()
    }
}
