//! A wheel (a zip file) as a [`View`]: the central directory is read once, and only the
//! members asked for are inflated, each within a size cap. Nothing is extracted to disk.
//!
//! A wheel whose member names could not have come from a real build (path traversal, absolute
//! or backslashed paths, duplicates, names that are not UTF-8) is refused whole: its contents
//! cannot be trusted to mean what they say.

use super::{TargetError, View};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The largest member pinprobe inflates.
pub const MAX_MEMBER_BYTES: u64 = super::MAX_FILE_BYTES;
/// A member whose declared size is more than this many times its compressed size is a bomb.
const MAX_RATIO: u64 = 1000;

/// A file reader that counts the bytes it hands out (for the "bytes read" figure).
struct Counting {
    file: File,
    read: Rc<Cell<u64>>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl Seek for Counting {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

/// One member's place in the archive.
#[derive(Debug, Clone, Copy)]
struct Member {
    index: usize,
    size: u64,
}

pub struct WheelView {
    path: PathBuf,
    archive: RefCell<zip::ZipArchive<Counting>>,
    members: BTreeMap<String, Member>,
    bytes_read: Rc<Cell<u64>>,
}

fn bad(path: &Path, message: String) -> TargetError {
    TargetError::Malformed {
        path: path.to_path_buf(),
        message,
    }
}

/// Whether a member name is a plain relative path.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains('\0')
        && name.as_bytes().get(1) != Some(&b':')
        && name.split('/').all(|part| part != ".." && part != ".")
}

/// The member count in the end-of-central-directory record (`None` for zip64, where the
/// 16-bit field is saturated, or when the record is not found: the zip reader reports that).
fn declared_entries(path: &Path, counter: &Cell<u64>) -> Result<Option<u64>, TargetError> {
    let io = |source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = crate::input::open_file(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let tail = len.min(65_535 + 22);
    file.seek(SeekFrom::Start(len - tail)).map_err(io)?;
    let mut buf = Vec::with_capacity(tail as usize);
    file.take(tail).read_to_end(&mut buf).map_err(io)?;
    counter.set(counter.get() + buf.len() as u64);
    let Some(at) = buf.windows(4).rposition(|w| w == b"PK\x05\x06") else {
        return Ok(None);
    };
    let count = buf
        .get(at + 10..at + 12)
        .map(|b| u16::from_le_bytes([b[0], b[1]]));
    Ok(count.filter(|c| *c != u16::MAX).map(u64::from))
}

impl WheelView {
    pub fn open(path: &Path) -> Result<Self, TargetError> {
        let file = crate::input::open_file(path).map_err(|source| TargetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let bytes_read = Rc::new(Cell::new(0));
        let reader = Counting {
            file,
            read: Rc::clone(&bytes_read),
        };
        let declared = declared_entries(path, &bytes_read)?;
        let mut archive = zip::ZipArchive::new(reader)
            .map_err(|e| bad(path, format!("not a readable zip archive: {e}")))?;
        // The zip reader indexes members by name, so a repeated name would vanish silently:
        // compare with the count the end-of-central-directory record declares.
        if let Some(declared) = declared
            && declared != archive.len() as u64
        {
            return Err(bad(
                path,
                format!(
                    "the central directory declares {declared} members but {} distinct names: a member name appears twice",
                    archive.len()
                ),
            ));
        }
        let mut members = BTreeMap::new();
        let mut seen = HashSet::new();
        for index in 0..archive.len() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| bad(path, format!("central directory entry {index}: {e}")))?;
            let raw = entry.name_raw().to_vec();
            let Ok(name) = String::from_utf8(raw) else {
                return Err(bad(
                    path,
                    format!("member {index} has a name that is not UTF-8"),
                ));
            };
            if !safe_name(&name) {
                return Err(bad(
                    path,
                    format!("member `{name}` is not a plain relative path (path traversal?)"),
                ));
            }
            if !seen.insert(name.clone()) {
                return Err(bad(path, format!("member `{name}` appears twice")));
            }
            if entry.is_dir() {
                continue;
            }
            let (size, compressed) = (entry.size(), entry.compressed_size());
            if size > MAX_MEMBER_BYTES.saturating_mul(16)
                || size > compressed.saturating_mul(MAX_RATIO).max(1 << 20)
            {
                return Err(bad(
                    path,
                    format!(
                        "member `{name}` declares {size} bytes from {compressed} compressed (a zip bomb?)"
                    ),
                ));
            }
            members.insert(name, Member { index, size });
        }
        Ok(WheelView {
            path: path.to_path_buf(),
            archive: RefCell::new(archive),
            members,
            bytes_read,
        })
    }

    /// Bytes read from the file so far (central directory and inflated members).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.get()
    }
}

impl WheelView {
    /// Member names below `dir`, in order, found by a range query on the sorted index.
    fn under<'a>(&'a self, dir: &str) -> impl Iterator<Item = &'a String> + 'a {
        let dir = dir.trim_end_matches('/');
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.members
            .range(prefix.clone()..)
            .map(|(k, _)| k)
            .take_while(move |k| k.starts_with(&prefix))
    }
}

impl View for WheelView {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn kind(&self) -> &'static str {
        "wheel"
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        Ok(self.under(dir).cloned().collect())
    }

    fn children(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        let dir = dir.trim_end_matches('/');
        let skip = if dir.is_empty() { 0 } else { dir.len() + 1 };
        let mut out: Vec<String> = Vec::new();
        for path in self.under(dir) {
            let rest = &path[skip..];
            let child = match rest.split_once('/') {
                Some((first, _)) => format!("{first}/"),
                None => rest.to_string(),
            };
            if out.last() != Some(&child) {
                out.push(child);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        let Some(member) = self.members.get(path).copied() else {
            return Ok(None);
        };
        if member.size > MAX_MEMBER_BYTES {
            return Err(bad(
                &self.path,
                format!(
                    "member `{path}` is {} bytes, over the {MAX_MEMBER_BYTES}-byte cap",
                    member.size
                ),
            ));
        }
        let mut archive = self.archive.borrow_mut();
        let entry = archive
            .by_index(member.index)
            .map_err(|e| bad(&self.path, format!("member `{path}`: {e}")))?;
        let mut out = Vec::with_capacity(member.size as usize);
        // Read one byte past the declared size to catch members that inflate to more.
        entry
            .take(member.size + 1)
            .read_to_end(&mut out)
            .map_err(|e| bad(&self.path, format!("member `{path}`: {e}")))?;
        if out.len() as u64 != member.size {
            return Err(bad(
                &self.path,
                format!(
                    "member `{path}` inflates to {} bytes, not the {} declared",
                    out.len(),
                    member.size
                ),
            ));
        }
        Ok(Some(out))
    }
}
