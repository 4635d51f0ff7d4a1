//! The content-addressed cache under the cache directory (`CACHE/cas/`): results that are
//! expensive to compute and are fully determined by a [`Key`] (a digest of everything they
//! depend on: the tool's version, the rule, the exact bytes they were computed from), shared
//! across targets, runs and processes.
//!
//! - Each entry is one file, `cas/KIND/AB/CDEF...`, written whole to a temporary file beside it
//!   and renamed into place, so a reader sees a complete entry or none, whatever other
//!   processes do at the same time.
//! - Each entry starts with a header carrying the payload's length and SHA-256. An entry that
//!   is truncated, padded or altered fails the check on read: it is deleted and reported as a
//!   miss (the caller recomputes and rewrites it); it is never trusted.
//! - Reading an entry marks it used (its modification time); [`Store::prune`] deletes
//!   unreadable entries, then the least recently used ones until the cache fits its bound.
//!
//! - [`Store::get_or_make`] makes a missing entry once: threads of one process wanting the
//!   same key wait for the first (in-process), and processes take an exclusive lock on the
//!   key's lock file (`cas/.locks/KIND/HEX`) before making it, so two workers never both
//!   download and read the same layer. A waiter then reads the entry like any other reader
//!   (checked).
//!
//! The cache only ever saves work: every failure to read or write it is a miss.

use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::SystemTime;

/// What an entry holds; each kind has its own directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A source signature's outcome on exact file contents (`rules::signature`).
    Signature,
    /// The files an image scan keeps from one layer, by the layer's digest
    /// (`view::image::extract`).
    Layer,
    /// A registry manifest or config by its digest (`view::image::registry`).
    Blob,
    /// A shipped library's dynamic symbol table, by its RECORD line and zip entry
    /// (`pin::shipped::library_cache`).
    Library,
    /// A wheel's whole report, by the file's stamp and end records, the rules, pinprobe and
    /// the settings (`scan::reuse`).
    Report,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Signature,
        Kind::Layer,
        Kind::Blob,
        Kind::Library,
        Kind::Report,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Signature => "signature",
            Kind::Layer => "layer",
            Kind::Blob => "blob",
            Kind::Library => "library",
            Kind::Report => "report",
        }
    }
}

/// The digest naming an entry: SHA-256 over its parts, each length-prefixed (so no two part
/// lists give the same key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    pub fn of(parts: &[&[u8]]) -> Key {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        Key(hasher.finalize().into())
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// The first line of every entry; the second is `SHA256HEX LENGTH`.
const MAGIC: &[u8] = b"pinprobe-cache 1\n";

/// Whether this process wrote an entry (a run that wrote none cannot have grown the cache).
static WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process has written any cache entry, in any store.
pub fn written() -> bool {
    WRITTEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// The default bound on the cache's entries (the `cas/` directory), in bytes.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// The content-addressed cache in one cache directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// What [`Store::info`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Info {
    /// Per kind: (name, entries, bytes).
    pub kinds: Vec<(&'static str, u64, u64)>,
    /// Entries that fail their check (truncated, altered), and stray temporary files.
    pub bad: u64,
}

/// What [`Store::prune`] removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// Unreadable entries removed.
    pub bad: u64,
    /// Entries removed as least recently used.
    pub evicted: u64,
    /// Bytes freed.
    pub freed: u64,
    /// Bytes left.
    pub left: u64,
}

impl Store {
    /// The store in `cache_dir` (created on the first write).
    pub fn new(cache_dir: &Path) -> Store {
        Store {
            root: cache_dir.join("cas"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, kind: Kind, key: &Key) -> PathBuf {
        let hex = key.hex();
        self.root.join(kind.name()).join(&hex[..2]).join(&hex[2..])
    }

    /// The payload stored under `key`, checked; `None` when there is none or it fails its check
    /// (then it is deleted). A hit marks the entry used.
    pub fn get(&self, kind: Kind, key: &Key) -> Option<Vec<u8>> {
        let path = self.path(kind, key);
        let bytes = std::fs::read(&path).ok()?;
        match payload(&bytes) {
            Some(payload) => {
                if let Ok(file) = std::fs::File::options().write(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                Some(payload.to_vec())
            }
            None => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Delete the entry under `key` (one that passed its check but is not what its key names).
    pub fn remove(&self, kind: Kind, key: &Key) {
        let _ = std::fs::remove_file(self.path(kind, key));
    }

    /// The entry under `key` that `decode` accepts, else the one `make` makes (then stored),
    /// and whether it came from the cache. An entry `decode` refuses (it passed its checksum
    /// but is not what the key names) is deleted and made again. Only one maker at a time per
    /// key: other threads of this process wait for it, and other processes wait on the key's
    /// lock file; each then reads the entry made (checked), or makes it itself when there is
    /// none (the maker failed, or the cache is not writable).
    pub fn get_or_make<T, E>(
        &self,
        kind: Kind,
        key: &Key,
        decode: impl Fn(&[u8]) -> Option<T>,
        make: impl FnOnce() -> Result<(T, Vec<u8>), E>,
    ) -> Result<(T, bool), E> {
        let checked = || {
            let payload = self.get(kind, key)?;
            let value = decode(&payload);
            if value.is_none() {
                self.remove(kind, key);
            }
            value
        };
        if let Some(hit) = checked() {
            return Ok((hit, true));
        }
        let _flight = Flight::begin(kind, key);
        let _lock = self.lock(kind, key);
        if let Some(hit) = checked() {
            return Ok((hit, true));
        }
        let (value, payload) = make()?;
        let _ = self.put(kind, key, &payload);
        Ok((value, false))
    }

    /// An exclusive lock on `key`'s lock file, held until the file is dropped (`None` when
    /// the lock file cannot be made: then there is no cross-process exclusion, only the cost
    /// of making an entry twice).
    fn lock(&self, kind: Kind, key: &Key) -> Option<std::fs::File> {
        let dir = self.root.join(".locks").join(kind.name());
        std::fs::create_dir_all(&dir).ok()?;
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(key.hex()))
            .ok()?;
        file.lock().ok()?;
        Some(file)
    }

    /// Store `payload` under `key`: written to a temporary file in the entry's directory, then
    /// renamed over the entry (atomic: concurrent readers see the old entry, the new one, or
    /// none).
    pub fn put(&self, kind: Kind, key: &Key, payload: &[u8]) -> io::Result<()> {
        let path = self.path(kind, key);
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
        tmp.write_all(&entry(payload))?;
        WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Every entry file with its kind, size and last use; stray temporary files count as bad.
    fn entries(&self) -> Vec<(Kind, PathBuf, u64, SystemTime)> {
        let mut out = Vec::new();
        for kind in Kind::ALL {
            let Ok(fans) = std::fs::read_dir(self.root.join(kind.name())) else {
                continue;
            };
            for fan in fans.filter_map(Result::ok) {
                let Ok(files) = std::fs::read_dir(fan.path()) else {
                    continue;
                };
                for file in files.filter_map(Result::ok) {
                    let Ok(meta) = file.metadata() else {
                        continue;
                    };
                    if meta.is_file() {
                        let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        out.push((kind, file.path(), meta.len(), used));
                    }
                }
            }
        }
        out
    }

    /// Entries and bytes per kind, and how many entries fail their check (each is read).
    pub fn info(&self) -> Info {
        let mut info = Info {
            kinds: Kind::ALL.iter().map(|k| (k.name(), 0, 0)).collect(),
            bad: 0,
        };
        for (kind, path, len, _) in self.entries() {
            if !is_good(&path) {
                info.bad += 1;
                continue;
            }
            if let Some(row) = info.kinds.iter_mut().find(|r| r.0 == kind.name()) {
                row.1 += 1;
                row.2 += len;
            }
        }
        info
    }

    /// [`Store::prune`] to `max_bytes` when the entries' sizes add up to more (the common case,
    /// a cache within its bound, reads no entry).
    pub fn fit(&self, max_bytes: u64) -> Option<Pruned> {
        let total: u64 = self.entries().iter().map(|e| e.2).sum();
        (total > max_bytes).then(|| self.prune(max_bytes))
    }

    /// Delete entries that fail their check (and stray temporary files), then the least
    /// recently used entries until at most `max_bytes` remain.
    pub fn prune(&self, max_bytes: u64) -> Pruned {
        let mut pruned = Pruned::default();
        let mut good = Vec::new();
        for (_, path, len, used) in self.entries() {
            if is_good(&path) {
                good.push((used, len, path));
            } else if std::fs::remove_file(&path).is_ok() {
                pruned.bad += 1;
                pruned.freed += len;
            }
        }
        let mut total: u64 = good.iter().map(|(_, len, _)| len).sum();
        // Oldest use first.
        good.sort();
        for (_, len, path) in good {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                pruned.evicted += 1;
                pruned.freed += len;
                total -= len;
            }
        }
        pruned.left = total;
        self.drop_idle_locks();
        pruned
    }

    /// Delete the lock files of entries that are gone and that no one holds.
    fn drop_idle_locks(&self) {
        for kind in Kind::ALL {
            let dir = self.root.join(".locks").join(kind.name());
            for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                let entry = self
                    .root
                    .join(kind.name())
                    .join(name.get(..2).unwrap_or(""));
                if entry.join(name.get(2..).unwrap_or("")).exists() {
                    continue;
                }
                if let Ok(lock) = std::fs::File::open(file.path())
                    && lock.try_lock().is_ok()
                {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
    }
}

/// Entries being made by a thread of this process (by kind and key, whatever the store).
static FLIGHTS: Mutex<Option<HashSet<(&'static str, Key)>>> = Mutex::new(None);
static LANDED: Condvar = Condvar::new();

/// This thread's turn to make one entry: other threads of the process wanting the same kind
/// and key wait until it is dropped. Also for work whose result is kept only in the process
/// (no store named): one thread makes it, the others then find it where it keeps it.
pub struct Flight((&'static str, Key));

impl Flight {
    pub fn begin(kind: Kind, key: &Key) -> Flight {
        let id = (kind.name(), *key);
        let mut flights = FLIGHTS.lock().unwrap_or_else(PoisonError::into_inner);
        while flights.get_or_insert_default().contains(&id) {
            flights = LANDED.wait(flights).unwrap_or_else(PoisonError::into_inner);
        }
        flights.get_or_insert_default().insert(id);
        Flight(id)
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        let mut flights = FLIGHTS.lock().unwrap_or_else(PoisonError::into_inner);
        flights.get_or_insert_default().remove(&self.0);
        LANDED.notify_all();
    }
}

/// Whether the entry file at `path` passes its check (a temporary file never does).
fn is_good(path: &Path) -> bool {
    let stray = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"));
    !stray && std::fs::read(path).is_ok_and(|b| payload(&b).is_some())
}

/// An entry's bytes: the header, then `payload`.
fn entry(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 100);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(
        format!(
            "{} {}\n",
            hex::encode(Sha256::digest(payload)),
            payload.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(payload);
    out
}

/// The payload of an entry's bytes, if the header is intact and the payload has exactly the
/// length and digest it names.
fn payload(bytes: &[u8]) -> Option<&[u8]> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..end]).ok()?;
    let (digest, len) = header.split_once(' ')?;
    let len: usize = len.parse().ok()?;
    let payload = &rest[end + 1..];
    (payload.len() == len && hex::encode(Sha256::digest(payload)) == digest).then_some(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(dir.path());
        (dir, store)
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(Key::of(&[b"ab", b"c"]), Key::of(&[b"a", b"bc"]));
        assert_eq!(Key::of(&[b"a", b"b"]), Key::of(&[b"a", b"b"]));
    }

    #[test]
    fn an_entry_round_trips() {
        let (_dir, store) = store();
        let key = Key::of(&[b"k"]);
        assert_eq!(store.get(Kind::Signature, &key), None);
        store.put(Kind::Signature, &key, b"payload").expect("put");
        assert_eq!(
            store.get(Kind::Signature, &key).as_deref(),
            Some(&b"payload"[..])
        );
        let size = entry(b"payload").len() as u64;
        assert_eq!(
            store.info().kinds,
            vec![
                ("signature", 1, size),
                ("layer", 0, 0),
                ("blob", 0, 0),
                ("library", 0, 0),
                ("report", 0, 0)
            ]
        );
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_is_removed() {
        let (_dir, store) = store();
        let key = Key::of(&[b"k"]);
        let payload = b"{\"outcome\":\"absent\",\"reason\":\"x\"}".to_vec();
        let good = entry(&payload);
        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        let damaged: Vec<Vec<u8>> = vec![
            good[..good.len() - 1].to_vec(),        // truncated payload
            good[..10].to_vec(),                    // truncated header
            [good.clone(), b"x".to_vec()].concat(), // trailing garbage
            flipped,                                // one bit
            b"garbage".to_vec(),
            Vec::new(),
        ];
        for bytes in damaged {
            let path = store.path(Kind::Signature, &key);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &bytes).expect("write");
            assert_eq!(store.info().bad, 1);
            assert_eq!(store.get(Kind::Signature, &key), None, "{bytes:?}");
            assert!(!path.exists(), "a damaged entry is deleted");
            // Rebuilt by the next put.
            store.put(Kind::Signature, &key, &payload).expect("put");
            assert_eq!(store.get(Kind::Signature, &key), Some(payload.clone()));
            std::fs::remove_file(&path).expect("rm");
        }
    }

    #[test]
    fn an_entry_is_made_once_by_concurrent_askers_and_a_refused_one_is_remade() {
        let (_dir, store) = store();
        let key = Key::of(&[b"layer"]);
        let made = std::sync::atomic::AtomicU32::new(0);
        let got: Vec<(Vec<u8>, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        store.get_or_make(
                            Kind::Layer,
                            &key,
                            |p| Some(p.to_vec()),
                            || {
                                made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                std::thread::sleep(std::time::Duration::from_millis(50));
                                Ok::<_, ()>((b"x".to_vec(), b"x".to_vec()))
                            },
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread").expect("made"))
                .collect()
        });
        assert_eq!(made.into_inner(), 1, "made once");
        assert_eq!(got.iter().filter(|(_, hit)| !hit).count(), 1);
        assert!(got.iter().all(|(v, _)| v == b"x"));
        // An entry that passes its checksum but that `decode` refuses is deleted and remade.
        let (v, hit) = store
            .get_or_make(
                Kind::Layer,
                &key,
                |p| (p == b"y").then(|| p.to_vec()),
                || Ok::<_, ()>((b"y".to_vec(), b"y".to_vec())),
            )
            .expect("made");
        assert_eq!((v, hit), (b"y".to_vec(), false));
        assert_eq!(store.get(Kind::Layer, &key), Some(b"y".to_vec()));
        // A failed maker stores nothing.
        let other = Key::of(&[b"other"]);
        assert!(
            store
                .get_or_make(
                    Kind::Layer,
                    &other,
                    |p| Some(p.to_vec()),
                    || Err::<(Vec<u8>, Vec<u8>), _>(())
                )
                .is_err()
        );
        assert_eq!(store.get(Kind::Layer, &other), None);
        assert_eq!(store.info().bad, 0, "lock files are not entries");
    }

    #[test]
    fn prune_drops_damaged_then_least_recently_used_entries() {
        let (_dir, store) = store();
        let keys: Vec<Key> = (0..5u8).map(|i| Key::of(&[&[i]])).collect();
        for (i, key) in keys.iter().enumerate() {
            store.put(Kind::Signature, key, &[b'x'; 100]).expect("put");
            // Distinct last-use times, oldest first.
            let file = std::fs::File::options()
                .write(true)
                .open(store.path(Kind::Signature, key))
                .expect("open");
            file.set_modified(
                SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64),
            )
            .expect("mtime");
        }
        // Using the oldest makes it the newest.
        assert!(store.get(Kind::Signature, &keys[0]).is_some());
        std::fs::write(store.path(Kind::Signature, &keys[4]), b"junk").expect("damage");
        let size = entry(&[b'x'; 100]).len() as u64;
        let pruned = store.prune(2 * size);
        assert_eq!((pruned.bad, pruned.evicted, pruned.left), (1, 2, 2 * size));
        let kept: Vec<bool> = keys
            .iter()
            .map(|k| store.path(Kind::Signature, k).exists())
            .collect();
        assert_eq!(kept, vec![true, false, false, true, false]);
    }
}
