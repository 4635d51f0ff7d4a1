//! Shared libraries' dynamic symbol tables remembered by what names the library's bytes without
//! reading them: RECORD's SHA-256 and size for the file *and* the archive's own description of
//! the member (compression method, CRC-32, compressed and uncompressed size). Reading vLLM's
//! FA2/FA3 libraries means inflating and hashing 450 MB; with this a re-scan reads neither.
//!
//! Trust model (README "The content-addressed cache"):
//! - an entry is written only for a library that was streamed whole and whose SHA-256 and size
//!   matched its RECORD line: the entry says "the bytes RECORD names as H, stored in the
//!   archive as (method, CRC-32, sizes), hold these symbols"; a library that does not match
//!   RECORD (or cannot be read) is read again on every scan;
//! - a hit needs the same RECORD hash and size and the same central-directory CRC-32 and sizes,
//!   so a rebuilt or repacked library (any zip writer recomputes the CRC), an edited RECORD, or a
//!   member swapped for another is a miss and is read again;
//! - what a hit does not catch: bytes changed in place inside the archive while RECORD and the
//!   CRC-32 in the central directory are left as they were (CRC-32 is a checksum, not a
//!   cryptographic hash: a deliberate forger can match it). Scanning without a cache directory
//!   reads and hashes every library.
//!
//! Installed files (an environment on disk) are remembered by what says the file is unchanged
//! since it was read ([`installed`]): its [`FileStamp`] (device, inode, size, modification and
//! status-change times in nanoseconds, the key the wheel report cache trusts) and the SHA-256
//! of its ELF header and section header table. Any write moves the status-change time (which
//! no unprivileged process can set back, whatever it does to the other two), so a library
//! rewritten in place, or replaced, is read again; the entry holds the digest of the bytes
//! read, so RECORD is checked against it as against a fresh read. An entry is written only
//! when the stamp after the read is the stamp before it and the file last changed more than
//! two seconds before the read (a write in the same timestamp tick could leave the stamp as
//! it was). Hard links of one file share its entry; copies are other inodes, read once each.
//!
//! One reader per library per run: a thread that wants a key another thread of the process is
//! reading waits for it ([`crate::cache::Flight`]), then finds its table here.
//!
//! Image layers are never served from here (an image reads each library once, from its layer).

use super::elf::{DynamicSymbol, Library, SymbolKind};
use super::record::Entry;
use crate::cache::{Flight, Key, Kind, Store};
use crate::view::ArchiveEntry;
use crate::view::identity::FileStamp;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

static SEEN: OnceLock<Mutex<HashMap<Key, Library>>> = OnceLock::new();
static STORE: OnceLock<Store> = OnceLock::new();
static READ: AtomicU64 = AtomicU64::new(0);
static REUSED: AtomicU64 = AtomicU64::new(0);

/// Remember symbol tables in `store` too (the first store named in a process is kept).
pub fn use_store(store: Store) {
    let _ = STORE.set(store);
}

/// Libraries of this process so far: (read from the archive, reused from the process or the
/// disk cache).
pub fn counts() -> (u64, u64) {
    (READ.load(Ordering::Relaxed), REUSED.load(Ordering::Relaxed))
}

/// Count a library read from its bytes (cached or not).
pub fn count_read() {
    READ.fetch_add(1, Ordering::Relaxed);
}

/// The key of a library RECORD lists as `declared` and the archive stores as `entry`; `None`
/// when RECORD gives no hash or no size (then nothing names the bytes).
pub fn key(declared: &Entry, entry: &ArchiveEntry) -> Option<Key> {
    let hash = declared.hash.as_deref()?;
    let size = declared.size?;
    Some(Key::of(&[
        b"library-symbols",
        env!("CARGO_PKG_VERSION").as_bytes(),
        hash.as_bytes(),
        &size.to_le_bytes(),
        &entry.method.to_le_bytes(),
        &entry.crc32.to_le_bytes(),
        &entry.compressed.to_le_bytes(),
        &entry.size.to_le_bytes(),
    ]))
}

/// How long before a read an installed library must have last changed for its table to be
/// kept (as for wheel reports, `scan::reuse`).
const SETTLED: Duration = Duration::from_secs(2);

/// An installed library's key, and what tells whether a table read from it may be kept.
#[derive(Debug, Clone)]
pub struct Installed {
    pub key: Key,
    stamp: FileStamp,
    path: PathBuf,
    /// When the stamp was taken (before the read).
    since: SystemTime,
}

/// The key of the installed library at `path` (a regular file on this machine): its stamp and
/// ELF layout digest, the stamp the same after the layout was read. `None` when the file has
/// no stamp or no readable ELF layout (it is then read, and its error reported, every time).
pub fn installed(path: &Path) -> Option<Installed> {
    let since = SystemTime::now();
    let stamp = FileStamp::of(path)?;
    let file = crate::input::open_file(path).ok()?;
    let layout = super::elf::layout_digest(&file)?;
    if FileStamp::of(path)? != stamp {
        return None;
    }
    Some(Installed {
        key: Key::of(&[
            b"installed-library-symbols 1",
            env!("CARGO_PKG_VERSION").as_bytes(),
            &stamp.to_bytes(),
            &layout,
        ]),
        stamp,
        path: path.to_path_buf(),
        since,
    })
}

impl Installed {
    /// Whether a table read after [`installed`] may be kept: the file's stamp is still the one
    /// taken before the read, and its last change is older than the read by [`SETTLED`].
    pub fn keepable(&self) -> bool {
        self.stamp.settled(self.since, SETTLED) && FileStamp::of(&self.path) == Some(self.stamp)
    }
}

/// This thread's turn to read the library `key` names: other threads of the process wanting
/// it wait until the guard is dropped (then [`get`] finds what was read, if it was kept).
pub fn flight(key: &Key) -> Flight {
    Flight::begin(Kind::Library, key)
}

pub fn get(key: &Key) -> Option<Library> {
    let seen = SEEN.get_or_init(Default::default);
    if let Some(hit) = seen.lock().unwrap_or_else(PoisonError::into_inner).get(key) {
        REUSED.fetch_add(1, Ordering::Relaxed);
        return Some(hit.clone());
    }
    // A stored entry that passes its check but does not decode is a miss too.
    let stored = decode(&STORE.get()?.get(Kind::Library, key)?)?;
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(*key, stored.clone());
    REUSED.fetch_add(1, Ordering::Relaxed);
    Some(stored)
}

/// Remember `library` (only call this for one whose digest matched its RECORD line, or an
/// installed one that is [`Installed::keepable`]).
pub fn put(key: Key, library: &Library) {
    if let Some(store) = STORE.get() {
        // Best effort: a cache that cannot be written only costs the next run a read.
        let _ = store.put(Kind::Library, &key, &encode(library));
    }
    SEEN.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, library.clone());
}

/// `sha256=...\0SIZE\0` then, per symbol, its kind (`D`, `U`, `W`) and name, each ended by a
/// NUL (an ELF symbol name holds none).
fn encode(library: &Library) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(library.sha256.as_bytes());
    out.push(0);
    out.extend_from_slice(library.size.to_string().as_bytes());
    out.push(0);
    for symbol in &library.symbols {
        out.push(match symbol.kind {
            SymbolKind::Defined => b'D',
            SymbolKind::Undefined => b'U',
            SymbolKind::UndefinedWeak => b'W',
        });
        out.extend_from_slice(symbol.name.as_bytes());
        out.push(0);
    }
    out
}

fn decode(bytes: &[u8]) -> Option<Library> {
    let mut fields = bytes.strip_suffix(&[0])?.split(|b| *b == 0);
    let sha256 = std::str::from_utf8(fields.next()?).ok()?;
    if !sha256.starts_with("sha256=") {
        return None;
    }
    let size = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let mut symbols = Vec::new();
    for field in fields {
        let (kind, name) = field.split_first()?;
        let kind = match kind {
            b'D' => SymbolKind::Defined,
            b'U' => SymbolKind::Undefined,
            b'W' => SymbolKind::UndefinedWeak,
            _ => return None,
        };
        symbols.push(DynamicSymbol {
            name: String::from_utf8(name.to_vec()).ok()?,
            kind,
        });
    }
    Some(Library {
        symbols,
        sha256: sha256.to_string(),
        size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> Library {
        Library {
            symbols: vec![
                DynamicSymbol {
                    name: "run_mha_fwd".into(),
                    kind: SymbolKind::Defined,
                },
                DynamicSymbol {
                    name: "_Z12run_mha_fwd_ILi80E".into(),
                    kind: SymbolKind::Undefined,
                },
                DynamicSymbol {
                    name: "__gmon_start__".into(),
                    kind: SymbolKind::UndefinedWeak,
                },
            ],
            sha256: "sha256=abc".into(),
            size: 42,
        }
    }

    #[test]
    fn round_trips_and_refuses_damage() {
        let bytes = encode(&library());
        assert_eq!(decode(&bytes), Some(library()));
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        let mut kind = bytes.clone();
        let at = kind.iter().rposition(|b| *b == b'W').unwrap_or(0);
        kind[at] = b'X';
        assert_eq!(decode(&kind), None);
        assert_eq!(decode(b"md5=x\x0042\x00"), None);
        let empty = Library {
            symbols: Vec::new(),
            ..library()
        };
        assert_eq!(decode(&encode(&empty)), Some(empty));
    }

    #[test]
    fn key_names_record_and_archive_entry() {
        let declared = Entry {
            hash: Some("sha256=abc".into()),
            size: Some(42),
        };
        let entry = ArchiveEntry {
            method: 8,
            crc32: 1,
            compressed: 10,
            size: 42,
        };
        let base = key(&declared, &entry);
        assert!(base.is_some());
        for changed in [
            ArchiveEntry { crc32: 2, ..entry },
            ArchiveEntry {
                compressed: 11,
                ..entry
            },
            ArchiveEntry { size: 43, ..entry },
            ArchiveEntry { method: 0, ..entry },
        ] {
            assert_ne!(key(&declared, &changed), base);
        }
        let other = Entry {
            hash: Some("sha256=abd".into()),
            size: Some(42),
        };
        assert_ne!(key(&other, &entry), base);
        assert_eq!(
            key(
                &Entry {
                    hash: None,
                    size: Some(42)
                },
                &entry
            ),
            None
        );
        assert_eq!(
            key(
                &Entry {
                    hash: Some("sha256=abc".into()),
                    size: None
                },
                &entry
            ),
            None
        );
    }
}
