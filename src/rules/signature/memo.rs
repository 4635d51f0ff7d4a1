//! Signature outcomes remembered by what decides them: the tool's version, the signature, and
//! the exact text of every file it reads. Kept for the process (so a fleet run parses each
//! distinct file content once, whatever number of targets ship it) and, once [`use_store`] names
//! one, in the content-addressed cache on disk (so a re-scan parses nothing it has seen).
//!
//! The key holds the files' whole contents, not a hash a target declares (a wheel's RECORD can
//! lie): an outcome is reused only for the bytes it was computed on.

use super::{Outcome, Signature};
use crate::cache::{Flight, Key, Kind, Store};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

static SEEN: OnceLock<Mutex<HashMap<Key, Outcome>>> = OnceLock::new();
static STORE: OnceLock<Store> = OnceLock::new();
static COMPUTED: AtomicU64 = AtomicU64::new(0);
static REUSED: AtomicU64 = AtomicU64::new(0);

/// Outcomes of this process so far: (computed, reused from the process or the disk cache).
pub fn counts() -> (u64, u64) {
    (
        COMPUTED.load(Ordering::Relaxed),
        REUSED.load(Ordering::Relaxed),
    )
}

/// Remember outcomes in `store` too (the first store named in a process is kept).
pub fn use_store(store: Store) {
    let _ = STORE.set(store);
}

/// The key of `signature` on `texts` (every file it reads, in [`Signature::files`] order).
pub(super) fn key(signature: &Signature, texts: &[(&str, &str)]) -> Key {
    let shape = serde_json::to_vec(signature).unwrap_or_default();
    let mut parts: Vec<&[u8]> = vec![
        b"signature-outcome",
        env!("CARGO_PKG_VERSION").as_bytes(),
        &shape,
    ];
    for (file, text) in texts {
        parts.push(file.as_bytes());
        parts.push(text.as_bytes());
    }
    Key::of(&parts)
}

/// This thread's turn to compute the outcome `key` names: other threads of the process wanting
/// it wait until the guard is dropped, then [`get`] finds it.
pub(super) fn flight(key: &Key) -> Flight {
    Flight::begin(Kind::Signature, key)
}

pub(super) fn get(key: &Key) -> Option<Outcome> {
    let seen = SEEN.get_or_init(Default::default);
    if let Some(hit) = seen.lock().unwrap_or_else(PoisonError::into_inner).get(key) {
        REUSED.fetch_add(1, Ordering::Relaxed);
        return Some(hit.clone());
    }
    // A stored entry that passes its check but does not parse is a miss too.
    let stored: Outcome = serde_json::from_slice(&STORE.get()?.get(Kind::Signature, key)?).ok()?;
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(*key, stored.clone());
    REUSED.fetch_add(1, Ordering::Relaxed);
    Some(stored)
}

pub(super) fn put(key: Key, outcome: &Outcome) {
    COMPUTED.fetch_add(1, Ordering::Relaxed);
    if let Some(store) = STORE.get()
        && let Ok(bytes) = serde_json::to_vec(outcome)
    {
        // Best effort: a cache that cannot be written only costs the next run a parse.
        let _ = store.put(Kind::Signature, &key, &bytes);
    }
    SEEN.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, outcome.clone());
}
