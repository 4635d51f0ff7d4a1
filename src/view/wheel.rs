//! A wheel (a zip file) as a [`View`] of what `pip install` puts in site-packages: the central
//! directory is read once, and only the members asked for are inflated, each within a size
//! cap. Nothing is extracted to disk.
//!
//! What the view shows follows pip (`pip/_internal/operations/install/wheel.py`):
//! - member names are normalised as `os.path.normpath` does (`a//b`, `./a`, `a/x/../b`); a name
//!   that leaves the install directory is refused, as pip refuses it;
//! - `NAME.data/purelib/P` and `NAME.data/platlib/P` are installed at `P`, over a root member of
//!   the same path (pip writes root members first, then `.data` ones, in archive order); a
//!   `.data` member outside a scheme directory or under a scheme pip does not know is refused,
//!   as pip refuses it; `headers`, `scripts` and `data` members are not in site-packages.
//!
//! The archive is refused whole where pip (Python's `zipfile`) would fail, or where installers
//! could disagree about what it holds. The central directory is walked entry by entry whatever
//! the end record declares; a count or size that disagrees with the walk, a name that appears
//! twice (before or after normalisation), a local header whose name or sizes disagree with its
//! central-directory entry, and bytes between members or before the central directory that no
//! entry accounts for (a streaming installer would find a member there that the central
//! directory hides) are refused. So are names that are absolute, hold `\`, NUL or a drive
//! letter, or are not UTF-8.

use super::{TargetError, View};
use crate::model::TargetKind;
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

/// The archive as the zip reader sees it: the central directory and what follows it served
/// from the buffer the walk already read (so the zip crate's field-by-field parse makes no
/// system call: it was ~15,000 reads and seeks on a real vLLM wheel), the members read with
/// positioned reads, the position kept here (a seek is no system call). Counts the bytes read
/// from the file (for the "bytes read" figure).
struct Source {
    file: File,
    pos: u64,
    len: u64,
    /// The file from `tail_start` to its end.
    tail_start: u64,
    tail: Vec<u8>,
    read: Rc<Cell<u64>>,
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = if self.pos >= self.tail_start {
            let at = usize::try_from(self.pos - self.tail_start).unwrap_or(usize::MAX);
            let rest = self.tail.get(at..).unwrap_or_default();
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            n
        } else {
            let before = usize::try_from(self.tail_start - self.pos).unwrap_or(usize::MAX);
            let want = buf.len().min(before);
            let n = self.file.read_at(&mut buf[..want], self.pos)?;
            self.read.set(self.read.get() + n as u64);
            n
        };
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Source {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let target = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// One member's place in the archive.
#[derive(Debug, Clone)]
struct Member {
    index: usize,
    size: u64,
    entry: super::ArchiveEntry,
    /// The archive name when it differs from the installed path (normalised, or `.data`).
    origin: Option<String>,
}

pub struct WheelView {
    path: PathBuf,
    archive: RefCell<zip::ZipArchive<Source>>,
    members: BTreeMap<String, Member>,
    bytes_read: Rc<Cell<u64>>,
}

fn bad(path: &Path, message: String) -> TargetError {
    TargetError::Malformed {
        path: path.to_path_buf(),
        message,
    }
}

/// A member name normalised as pip does (`os.path.normpath` on POSIX): empty and `.` parts
/// dropped, `..` removing the part before it. `None` for a name pip would refuse (absolute,
/// leaving the install directory) or that no build writes (`\`, NUL, a drive letter).
fn normalise_name(name: &str) -> Option<String> {
    if name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.as_bytes().get(1) == Some(&b':')
    {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Where pip installs a (normalised) member: `Ok(Some(path))` in site-packages, `Ok(None)`
/// outside it (a `.data` scheme other than purelib/platlib), `Err` where pip refuses.
fn install_path(name: &str) -> Result<Option<String>, String> {
    let mut parts = name.splitn(3, '/');
    let first = parts.next().unwrap_or(name);
    if !first.ends_with(".data") {
        return Ok(Some(name.to_string()));
    }
    match (parts.next(), parts.next()) {
        (Some("purelib" | "platlib"), Some(rest)) => Ok(Some(rest.to_string())),
        (Some("headers" | "scripts" | "data"), Some(_)) => Ok(None),
        (Some(scheme), Some(_)) => Err(format!(
            "member `{name}`: unknown .data scheme `{scheme}` (pip refuses this wheel)"
        )),
        _ => Err(format!(
            "member `{name}`: a .data member outside a scheme directory (pip refuses this wheel)"
        )),
    }
}

/// One central-directory entry as walked by [`walk_central_directory`].
#[derive(Debug, Clone)]
struct CdEntry {
    name: Vec<u8>,
    flags: u16,
    method: u16,
    crc32: u32,
    compressed: u64,
    size: u64,
    offset: u64,
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Where the end records put the central directory, as read from the file's last bytes.
struct EndRecords {
    len: u64,
    /// The file's last bytes (up to 64 KiB + the end record), from `tail_start`.
    tail_start: u64,
    tail: Vec<u8>,
    declared_count: u64,
    declared_size: u64,
    cd_offset: u64,
    /// Where the central directory ends: the end record, or the zip64 end record.
    cd_end: u64,
}

/// `len` bytes of `file` at `offset`, counted in `counter`.
fn read_counted(
    path: &Path,
    file: &File,
    counter: &Cell<u64>,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, TargetError> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
    file.read_exact_at(&mut buf, offset)
        .map_err(|source| TargetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    counter.set(counter.get() + len);
    Ok(buf)
}

/// Read the end-of-central-directory record (and the zip64 one it points at) from `file`.
fn end_records(path: &Path, file: &File, counter: &Cell<u64>) -> Result<EndRecords, TargetError> {
    let bad = |p: &Path, m: String| self::bad(p, format!("zip archive: {m}"));
    let io = |source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let read_at = |offset: u64, len: u64| read_counted(path, file, counter, offset, len);
    let len = file.metadata().map_err(io)?.len();
    let tail_len = len.min(65_535 + 22);
    let tail_start = len - tail_len;
    let tail = read_at(tail_start, tail_len)?;
    let Some(at) = tail.windows(4).rposition(|w| w == b"PK\x05\x06") else {
        return Err(bad(
            path,
            "not a readable zip archive (no end-of-central-directory record)".into(),
        ));
    };
    let eocd_pos = tail_start + at as u64;
    let short = || bad(path, "truncated end-of-central-directory record".into());
    let mut declared_count = u64::from(le16(&tail, at + 10).ok_or_else(short)?);
    let mut declared_size = u64::from(le32(&tail, at + 12).ok_or_else(short)?);
    let mut cd_offset = u64::from(le32(&tail, at + 16).ok_or_else(short)?);
    let mut cd_end = eocd_pos;
    // zip64: a locator just before the end record points at the zip64 end record.
    if at >= 20 && tail.get(at - 20..at - 16) == Some(b"PK\x06\x07") {
        let z64 = le64(&tail, at - 12).ok_or_else(short)?;
        if z64 >= eocd_pos {
            return Err(bad(path, "zip64 end record points past the end".into()));
        }
        let rec = read_at(z64, 56.min(eocd_pos - z64))?;
        if rec.get(..4) != Some(b"PK\x06\x06") {
            return Err(bad(
                path,
                "zip64 end record not where its locator says".into(),
            ));
        }
        declared_count = le64(&rec, 32).ok_or_else(short)?;
        declared_size = le64(&rec, 40).ok_or_else(short)?;
        cd_offset = le64(&rec, 48).ok_or_else(short)?;
        cd_end = z64;
    }
    if cd_offset > cd_end || cd_end - cd_offset > super::MAX_FILE_BYTES {
        return Err(bad(
            path,
            format!(
                "central directory offset {cd_offset} is not before its end record at {cd_end}"
            ),
        ));
    }
    Ok(EndRecords {
        len,
        tail_start,
        tail,
        declared_count,
        declared_size,
        cd_offset,
        cd_end,
    })
}

/// The SHA-256 of the wheel's end records: its last bytes (up to 64 KiB, holding the end of
/// the central directory), the member count and the central directory's place and size, and
/// the file's length; one read. What a reused report of an unchanged file checks besides the
/// file's stamp (`scan::reuse`): a rewrite that a file system's times missed still has to
/// leave all of these as they were.
pub fn end_records_digest(path: &Path) -> Result<[u8; 32], TargetError> {
    use sha2::{Digest, Sha256};
    let file = crate::input::open_file(path).map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let end = end_records(path, &file, &Cell::new(0))?;
    let mut hasher = Sha256::new();
    for n in [
        end.len,
        end.tail_start,
        end.declared_count,
        end.declared_size,
        end.cd_offset,
        end.cd_end,
    ] {
        hasher.update(n.to_le_bytes());
    }
    hasher.update(&end.tail);
    Ok(hasher.finalize().into())
}

/// The central directory, walked entry by entry from its start to the end record, and checked
/// against the end record and every local header (see the module doc). Returns the entries in
/// archive order, and the file from the central directory's start to its end (read once, in
/// one buffer: the zip reader is handed it rather than reading it again).
fn walk_central_directory(
    path: &Path,
    file: &File,
    counter: &Cell<u64>,
) -> Result<(Vec<CdEntry>, Tail), TargetError> {
    let bad = |p: &Path, m: String| self::bad(p, format!("zip archive: {m}"));
    let read_at = |offset: u64, len: u64| read_counted(path, file, counter, offset, len);
    let EndRecords {
        len,
        tail_start,
        tail,
        declared_count,
        declared_size,
        cd_offset,
        cd_end,
    } = end_records(path, file, counter)?;
    let mut cd = read_at(cd_offset, cd_end - cd_offset)?;
    let mut entries = Vec::new();
    let mut pos = 0usize;
    while cd.get(pos..pos + 4) == Some(b"PK\x01\x02") {
        let n = entries.len();
        let truncated = || bad(path, format!("central directory entry {n} is truncated"));
        let flags = le16(&cd, pos + 8).ok_or_else(truncated)?;
        let method = le16(&cd, pos + 10).ok_or_else(truncated)?;
        let crc32 = le32(&cd, pos + 16).ok_or_else(truncated)?;
        let mut compressed = u64::from(le32(&cd, pos + 20).ok_or_else(truncated)?);
        let mut size = u64::from(le32(&cd, pos + 24).ok_or_else(truncated)?);
        let name_len = usize::from(le16(&cd, pos + 28).ok_or_else(truncated)?);
        let extra_len = usize::from(le16(&cd, pos + 30).ok_or_else(truncated)?);
        let comment_len = usize::from(le16(&cd, pos + 32).ok_or_else(truncated)?);
        let mut offset = u64::from(le32(&cd, pos + 42).ok_or_else(truncated)?);
        let name_at = pos + 46;
        let name = cd
            .get(name_at..name_at + name_len)
            .ok_or_else(truncated)?
            .to_vec();
        let extra = cd
            .get(name_at + name_len..name_at + name_len + extra_len)
            .ok_or_else(truncated)?;
        // zip64 extended information: the saturated fields, in this order.
        let mut e = 0usize;
        while e + 4 <= extra.len() {
            let id = le16(extra, e).unwrap_or(0);
            let field_len = usize::from(le16(extra, e + 2).unwrap_or(0));
            if id == 1 {
                let mut f = e + 4;
                for value in [&mut size, &mut compressed, &mut offset] {
                    if *value == u64::from(u32::MAX) {
                        *value = le64(extra, f).ok_or_else(truncated)?;
                        f += 8;
                    }
                }
            }
            e += 4 + field_len;
        }
        entries.push(CdEntry {
            name,
            flags,
            method,
            crc32,
            compressed,
            size,
            offset,
        });
        pos = name_at + name_len + extra_len + comment_len;
    }
    if pos != cd.len() {
        return Err(bad(
            path,
            format!(
                "{} bytes between the central directory's last entry and the end record",
                cd.len().saturating_sub(pos)
            ),
        ));
    }
    if entries.len() as u64 != declared_count || pos as u64 != declared_size {
        return Err(bad(
            path,
            format!(
                "the end-of-central-directory record declares {declared_count} members in {declared_size} bytes, but the central directory holds {} in {pos}: readers disagree on what the wheel holds",
                entries.len()
            ),
        ));
    }
    // A declared size far beyond the compressed one is a bomb, whatever the local header says.
    for entry in &entries {
        if entry.size > MAX_MEMBER_BYTES.saturating_mul(16)
            || entry.size > entry.compressed.saturating_mul(MAX_RATIO).max(1 << 20)
        {
            return Err(bad(
                path,
                format!(
                    "member `{}` declares {} bytes from {} compressed (a zip bomb?)",
                    String::from_utf8_lossy(&entry.name),
                    entry.size,
                    entry.compressed
                ),
            ));
        }
    }
    // Every local header agrees with its entry, and members tile the file up to the central
    // directory with nothing between them.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i].offset);
    let mut expected_offset = 0u64;
    for &i in &order {
        let entry = &entries[i];
        let shown = String::from_utf8_lossy(&entry.name).into_owned();
        if entry.offset != expected_offset {
            return Err(bad(
                path,
                format!(
                    "member `{shown}` starts at byte {} but the previous member ends at {expected_offset}: data outside the central directory",
                    entry.offset
                ),
            ));
        }
        if entry.offset.saturating_add(30) > cd_offset {
            return Err(bad(
                path,
                format!("member `{shown}`: local header past the central directory"),
            ));
        }
        // The fixed header and, in the same read, as many bytes as the entry's name: one read
        // per member.
        let want = (30 + entry.name.len() as u64).min(cd_offset - entry.offset);
        let header = read_at(entry.offset, want)?;
        if header.get(..4) != Some(b"PK\x03\x04") {
            return Err(bad(
                path,
                format!("member `{shown}`: no local header at byte {}", entry.offset),
            ));
        }
        let name_len = u64::from(le16(&header, 26).unwrap_or(0));
        let extra_len = u64::from(le16(&header, 28).unwrap_or(0));
        let local_name = if name_len == entry.name.len() as u64 {
            header.get(30..).unwrap_or_default().to_vec()
        } else {
            read_at(
                entry.offset + 30,
                name_len.min(cd_offset.saturating_sub(entry.offset + 30)),
            )?
        };
        if local_name != entry.name {
            return Err(bad(
                path,
                format!(
                    "member `{shown}`: its local header names `{}` (pip refuses: the names differ)",
                    String::from_utf8_lossy(&local_name)
                ),
            ));
        }
        let (lc, ls) = (
            u64::from(le32(&header, 18).unwrap_or(0)),
            u64::from(le32(&header, 22).unwrap_or(0)),
        );
        let descriptor = entry.flags & 0x8 != 0;
        // (A member over the read cap is refused when read, with that reason.)
        if !descriptor
            && lc != u64::from(u32::MAX)
            && entry.size <= MAX_MEMBER_BYTES
            && (lc != entry.compressed || ls != entry.size)
        {
            return Err(bad(
                path,
                format!(
                    "member `{shown}`: local header sizes {lc}/{ls} disagree with the central directory's {}/{}",
                    entry.compressed, entry.size
                ),
            ));
        }
        let mut end = entry.offset + 30 + name_len + extra_len + entry.compressed;
        if descriptor {
            // An optional signature, the CRC, then 4- or 8-byte sizes.
            let sig = read_at(end, 4.min(cd_offset.saturating_sub(end)))?;
            let signed = if sig == b"PK\x07\x08" { 4 } else { 0 };
            let zip64 =
                entry.size >= u64::from(u32::MAX) || entry.compressed >= u64::from(u32::MAX);
            end += signed + if zip64 { 20 } else { 12 };
        }
        expected_offset = end;
    }
    if expected_offset != cd_offset {
        return Err(bad(
            path,
            format!(
                "{} bytes between the last member and the central directory: data outside the central directory",
                cd_offset.abs_diff(expected_offset)
            ),
        ));
    }
    // The end records after the central directory, from the tail already read.
    let after = match cd_end.checked_sub(tail_start) {
        Some(at) => tail.get(at as usize..).unwrap_or_default().to_vec(),
        None => read_at(cd_end, len - cd_end)?,
    };
    cd.extend_from_slice(&after);
    Ok((
        entries,
        Tail {
            start: cd_offset,
            len,
            bytes: cd,
        },
    ))
}

/// The file from `start` (the central directory) to its end, `len`.
struct Tail {
    start: u64,
    len: u64,
    bytes: Vec<u8>,
}

impl WheelView {
    pub fn open(path: &Path) -> Result<Self, TargetError> {
        let file = crate::input::open_file(path).map_err(|source| TargetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let bytes_read = Rc::new(Cell::new(0));
        let (entries, tail) = walk_central_directory(path, &file, &bytes_read)?;
        let reader = Source {
            file,
            pos: 0,
            len: tail.len,
            tail_start: tail.start,
            tail: tail.bytes,
            read: Rc::clone(&bytes_read),
        };
        let mut archive = zip::ZipArchive::new(reader)
            .map_err(|e| bad(path, format!("not a readable zip archive: {e}")))?;
        if archive.len() != entries.len() {
            return Err(bad(
                path,
                format!(
                    "the central directory holds {} entries but {} distinct names: a member name appears twice",
                    entries.len(),
                    archive.len()
                ),
            ));
        }
        let mut members = BTreeMap::new();
        let mut data = Vec::new();
        let mut seen = HashSet::new();
        for (index, walked) in entries.iter().enumerate() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| bad(path, format!("central directory entry {index}: {e}")))?;
            if entry.name_raw() != walked.name.as_slice() {
                return Err(bad(
                    path,
                    format!("central directory entry {index} is not where the walk found it"),
                ));
            }
            let Ok(raw) = String::from_utf8(walked.name.clone()) else {
                return Err(bad(
                    path,
                    format!("member {index} has a name that is not UTF-8"),
                ));
            };
            let Some(name) = normalise_name(&raw) else {
                return Err(bad(
                    path,
                    format!("member `{raw}` is not a plain relative path (path traversal?)"),
                ));
            };
            if !seen.insert(name.clone()) {
                return Err(bad(
                    path,
                    format!("member `{name}` appears twice (names normalised as pip does)"),
                ));
            }
            if raw.ends_with('/') {
                continue;
            }
            let (size, compressed) = (entry.size(), entry.compressed_size());
            let described = super::ArchiveEntry {
                method: walked.method,
                crc32: walked.crc32,
                compressed,
                size,
            };
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
            match install_path(&name).map_err(|m| bad(path, m))? {
                Some(installed) if installed != name => data.push((
                    installed,
                    Member {
                        index,
                        size,
                        entry: described,
                        origin: Some(raw.clone()),
                    },
                )),
                _ => {
                    let origin = (name != raw).then(|| raw.clone());
                    members.insert(
                        name,
                        Member {
                            index,
                            size,
                            entry: described,
                            origin,
                        },
                    );
                }
            }
        }
        // pip writes the root members first, then the `.data` ones in archive order: the last
        // write of a path is what is installed.
        for (installed, member) in data {
            members.insert(installed, member);
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

    fn kind(&self) -> TargetKind {
        TargetKind::Wheel
    }

    fn files_under(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        Ok(self.under(dir).cloned().collect())
    }

    fn origin(&self, path: &str) -> Option<String> {
        self.members.get(path).and_then(|m| m.origin.clone())
    }

    fn archive_entry(&self, path: &str) -> Option<super::ArchiveEntry> {
        self.members.get(path).map(|m| m.entry)
    }

    fn children(&self, dir: &str) -> Result<Vec<String>, TargetError> {
        use std::ops::Bound;
        let dir = dir.trim_end_matches('/');
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        // One range query per child, not a walk over every member below `dir`: after a
        // directory `D/` the next child is the first name from `D0` on (`0` follows `/`), after
        // a file `F` the first name past it. The wheel's root holds 5,800 members in a dozen
        // children.
        let mut out: Vec<String> = Vec::new();
        let mut from = prefix.clone();
        while let Some((path, _)) = self
            .members
            .range::<str, _>((Bound::Included(from.as_str()), Bound::Unbounded))
            .next()
        {
            let Some(rest) = path.strip_prefix(&prefix) else {
                break;
            };
            match rest.split_once('/') {
                Some((first, _)) => {
                    out.push(format!("{first}/"));
                    from = format!("{prefix}{first}0");
                }
                None => {
                    out.push(rest.to_string());
                    from = format!("{path}\0");
                }
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn read_stream(
        &self,
        path: &str,
        consume: &mut dyn FnMut(&mut dyn Read),
    ) -> Result<bool, TargetError> {
        let Some(member) = self.members.get(path).cloned() else {
            return Ok(false);
        };
        let mut archive = self.archive.borrow_mut();
        // A deflated member is inflated by pinprobe's own decoder (`view::inflate`: faster than
        // the zip reader's zlib-rs, with the same CRC-32 and size checks); others by the zip
        // reader.
        if member.entry.method == 8 {
            let raw = archive
                .by_index_raw(member.index)
                .map_err(|e| bad(&self.path, format!("member `{path}`: {e}")))?;
            if !raw.encrypted() && raw.compression() == zip::CompressionMethod::Deflated {
                let mut inflater =
                    super::inflate::Inflater::new(raw, member.entry.crc32, member.size);
                return self.stream_checked(path, member.size, &mut inflater, consume);
            }
        }
        let mut entry = archive
            .by_index(member.index)
            .map_err(|e| bad(&self.path, format!("member `{path}`: {e}")))?;
        self.stream_checked(path, member.size, &mut entry, consume)
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, TargetError> {
        let Some(member) = self.members.get(path).cloned() else {
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

impl WheelView {
    /// Hand `consume` the member `path` (`size` bytes declared) from `entry`, its inflating
    /// and checking reader. The consumer bounds what it reads and sees at most the declared
    /// size. The reader checks the CRC only when a read past the end returns nothing, which a
    /// reader stopping at the declared size never makes: when the consumer read the whole
    /// member, one more read checks the CRC and that the member inflates to no more than
    /// declared (a consumer that stopped early is left as it was: checking would inflate the
    /// rest).
    fn stream_checked(
        &self,
        path: &str,
        size: u64,
        entry: &mut dyn Read,
        consume: &mut dyn FnMut(&mut dyn Read),
    ) -> Result<bool, TargetError> {
        let mut limited = Counted {
            inner: (&mut *entry).take(size),
            read: 0,
        };
        consume(&mut limited);
        if limited.read == size {
            let mut past = [0u8; 1];
            match entry.read(&mut past) {
                Ok(0) => {}
                Ok(_) => {
                    return Err(bad(
                        &self.path,
                        format!("member `{path}` inflates to more than the {size} bytes declared"),
                    ));
                }
                Err(e) => return Err(bad(&self.path, format!("member `{path}`: {e}"))),
            }
        }
        Ok(true)
    }
}

/// A reader that counts the bytes it gave out.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_with(path: &Path, body: &[u8]) {
        let file = File::create(path).expect("create");
        let mut zip = zip::ZipWriter::new(file);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("demo/__init__.py", stored).expect("member");
        zip.write_all(body).expect("write");
        zip.finish().expect("finish");
    }

    #[test]
    fn a_streamed_member_read_whole_has_its_crc_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("demo-1.0-py3-none-any.whl");
        let body = b"a library body that the consumer reads to its end\n".repeat(64);
        zip_with(&path, &body);
        let read_all = |view: &WheelView| {
            let mut seen = Vec::new();
            let streamed = view.read_stream("demo/__init__.py", &mut |r: &mut dyn Read| {
                let _ = r.read_to_end(&mut seen);
            });
            (streamed, seen)
        };
        let (intact, seen) = read_all(&WheelView::open(&path).expect("opens"));
        assert!(intact.expect("intact member streams"));
        assert_eq!(seen, body);
        // One byte of the stored data changed: same size, wrong CRC.
        let mut bytes = std::fs::read(&path).expect("read");
        let at = bytes
            .windows(body.len())
            .position(|w| w == &body[..])
            .expect("stored data");
        bytes[at + 100] ^= 0x20;
        std::fs::write(&path, &bytes).expect("write");
        let (damaged, _) = read_all(&WheelView::open(&path).expect("opens"));
        let err = damaged.expect_err("a CRC mismatch is an error").to_string();
        assert!(err.contains("demo/__init__.py"), "{err}");
        // A consumer that stops early is not made to inflate the rest.
        let view = WheelView::open(&path).expect("opens");
        let early = view.read_stream("demo/__init__.py", &mut |r: &mut dyn Read| {
            let mut head = [0u8; 16];
            let _ = r.read_exact(&mut head);
        });
        assert!(early.expect("an early stop is not checked"));
    }

    #[test]
    fn a_deflated_member_streams_as_the_zip_reader_inflates_it_crc_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("demo-1.0-py3-none-any.whl");
        // Several MiB, repetitive enough to deflate and long enough for several steps.
        let body: Vec<u8> = (0..3_000_000u32)
            .flat_map(|i| (i % 7919).to_le_bytes())
            .collect();
        let file = File::create(&path).expect("create");
        let mut zip = zip::ZipWriter::new(file);
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("demo/lib.so", deflated).expect("member");
        zip.write_all(&body).expect("write");
        zip.finish().expect("finish");
        let stream = |view: &WheelView| {
            let mut seen = Vec::new();
            let streamed = view.read_stream("demo/lib.so", &mut |r: &mut dyn Read| {
                let _ = r.read_to_end(&mut seen);
            });
            (streamed, seen)
        };
        let view = WheelView::open(&path).expect("opens");
        assert_eq!(view.archive_entry("demo/lib.so").expect("entry").method, 8);
        let (intact, seen) = stream(&view);
        assert!(intact.expect("streams"));
        assert!(seen == body, "the inflater's bytes are the member's");
        // The central directory's CRC-32 changed: the stream is refused as the zip reader
        // refuses it, in its words.
        let mut bytes = std::fs::read(&path).expect("read");
        let cd = bytes
            .windows(4)
            .rposition(|w| w == b"PK\x01\x02")
            .expect("a central directory entry");
        bytes[cd + 16] ^= 1;
        std::fs::write(&path, &bytes).expect("write");
        let view = WheelView::open(&path).expect("opens");
        let (damaged, _) = stream(&view);
        let err = damaged.expect_err("a CRC mismatch").to_string();
        assert!(
            err.contains("member `demo/lib.so`: Invalid checksum"),
            "{err}"
        );
    }

    #[test]
    fn children_skip_whole_directories_and_list_what_a_walk_lists() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("demo-1.0-py3-none-any.whl");
        let file = File::create(&path).expect("create");
        let mut zip = zip::ZipWriter::new(file);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        // Names around `/` in byte order: `-` and `.` sort before it, `0` right after it.
        let names = [
            "a",
            "a-b/z.py",
            "a.py",
            "a/x.py",
            "a/b/y.py",
            "a/b/c/d.py",
            "a/b0",
            "a0",
            "a0/q.py",
            "b/\u{e9}.py",
            "b/\u{e9}/r.py",
            "z.py",
        ];
        for name in names {
            zip.start_file(name, stored).expect("member");
            zip.write_all(b"x = 1\n").expect("write");
        }
        zip.finish().expect("finish");
        let view = WheelView::open(&path).expect("opens");
        // What a walk over every member below the directory lists.
        let walked = |dir: &str| {
            let dir = dir.trim_end_matches('/');
            let skip = if dir.is_empty() { 0 } else { dir.len() + 1 };
            let mut out: Vec<String> = view
                .under(dir)
                .map(|p| match p[skip..].split_once('/') {
                    Some((first, _)) => format!("{first}/"),
                    None => p[skip..].to_string(),
                })
                .collect();
            out.sort();
            out.dedup();
            out
        };
        for dir in [
            "", "a", "a/", "a/b", "a0", "b", "b/\u{e9}", "none", "a/x.py",
        ] {
            assert_eq!(view.children(dir).expect("lists"), walked(dir), "{dir}");
        }
        assert_eq!(
            view.children("").expect("lists"),
            ["a", "a-b/", "a.py", "a/", "a0", "a0/", "b/", "z.py"]
        );
    }

    #[test]
    fn the_end_records_digest_follows_the_members_and_refuses_a_non_zip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (dir.path().join("a.whl"), dir.path().join("b.whl"));
        // The same length and names; only the member's bytes (so its CRC-32) differ.
        zip_with(&a, b"x = 1\n");
        zip_with(&b, b"x = 2\n");
        assert_eq!(
            std::fs::metadata(&a).expect("meta").len(),
            std::fs::metadata(&b).expect("meta").len()
        );
        let da = end_records_digest(&a).expect("a digest");
        assert_eq!(end_records_digest(&a).expect("a digest"), da, "stable");
        assert_ne!(end_records_digest(&b).expect("a digest"), da);
        std::fs::write(&a, b"not a zip").expect("write");
        assert!(matches!(
            end_records_digest(&a),
            Err(TargetError::Malformed { .. })
        ));
        assert!(end_records_digest(&dir.path().join("absent.whl")).is_err());
    }
}
