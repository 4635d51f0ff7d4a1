//! One layer, streamed: the stored bytes are hashed and counted as they arrive, decompressed by
//! what their first bytes say (gzip `1f 8b`, zstd `28 b5 2f fd`, anything else read as a plain
//! tar), and walked entry by entry with the `tar` crate; the data of entries the [`Sink`] does
//! not read is streamed past, never stored. After the last entry the stream is drained so the
//! digest covers every byte, then checked: a short, corrupt or substituted layer is an error.

use super::Fault;
use flate2::read::MultiGzDecoder;
use indicatif::ProgressBar;
use sha2::{Digest as _, Sha256};
use std::io::{self, BufRead, BufReader, Read};

/// The kind of a tar entry, as the merge needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    /// A symbolic link and its target as stored (relative to the link's directory, or
    /// absolute within the image).
    Symlink(String),
    /// A hard link to another path in the same layer.
    Hardlink(String),
    /// Devices, FIFOs and the like.
    Other,
}

/// One entry of a layer: a normalized relative path (no leading `/` or `./`).
#[derive(Debug)]
pub struct Entry<'a> {
    pub path: &'a str,
    pub kind: EntryKind,
    pub size: u64,
}

/// Receives a layer's entries in order; reads `body` only for the entries it keeps.
pub trait Sink {
    fn entry(&mut self, entry: &Entry<'_>, body: &mut dyn Read) -> io::Result<()>;
}

/// What a layer's bytes must match.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// Label for messages: the digest or the location.
    pub name: String,
    /// `sha256:` digest of the stored bytes.
    pub digest: Option<String>,
    /// `sha256:` digest of the uncompressed tar.
    pub diff_id: Option<String>,
    /// Number of stored bytes.
    pub size: Option<u64>,
}

/// Stream one layer into `sink`; returns the number of stored bytes read.
pub fn stream(
    raw: &mut dyn Read,
    expect: &Expect,
    progress: &ProgressBar,
    sink: &mut dyn Sink,
) -> Result<u64, Fault> {
    let mut stored = Hashing::new(raw, progress);
    let outcome = walk(&mut stored, expect.diff_id.is_some(), sink);
    let fail = |message: String| Fault::Layer {
        digest: expect.name.clone(),
        message,
    };
    if let Some(kind) = stored.error
        && matches!(kind, io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
    {
        return Err(Fault::Timeout(format!(
            "layer {}: transfer stalled (no data within the timeout) after {} bytes",
            expect.name, stored.count
        )));
    }
    if outcome.is_err() && stored.error.is_none() {
        // Corrupt data: read the rest so the digest can say whether the bytes were substituted.
        let _ = io::copy(&mut stored, &mut io::sink());
    }
    if let Some(expected) = expect.size
        && stored.count < expected
    {
        return Err(Fault::Truncated {
            what: "layer",
            digest: expect.name.clone(),
            got: stored.count,
            expected,
        });
    }
    let actual = format!("sha256:{}", hex::encode(stored.hasher.finalize_reset()));
    if let Some(digest) = &expect.digest
        && *digest != actual
    {
        return Err(Fault::Digest {
            what: "layer",
            digest: digest.clone(),
            actual,
        });
    }
    let diff_id = outcome.map_err(|e| fail(describe(&e)))?;
    if let Some(expected) = expect.size
        && stored.count != expected
    {
        return Err(fail(format!(
            "{} bytes, but the manifest says {expected}",
            stored.count
        )));
    }
    if let (Some(want), Some(got)) = (&expect.diff_id, diff_id)
        && *want != got
    {
        return Err(Fault::Digest {
            what: "layer (uncompressed)",
            digest: want.clone(),
            actual: got,
        });
    }
    Ok(stored.count)
}

fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    if text.is_empty() {
        format!("{:?}", e.kind())
    } else {
        format!("not a readable gzip, zstd or tar layer: {text}")
    }
}

/// Decompress and walk the entries; returns the uncompressed digest when asked for.
fn walk(
    stored: &mut dyn Read,
    want_diff_id: bool,
    sink: &mut dyn Sink,
) -> io::Result<Option<String>> {
    let mut buffered = BufReader::with_capacity(256 << 10, stored);
    let magic = buffered.fill_buf()?.to_vec();
    let mut decoded: Box<dyn Read + '_> = if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(MultiGzDecoder::new(&mut buffered))
    } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(
            ruzstd::decoding::StreamingDecoder::new(&mut buffered)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?,
        )
    } else {
        Box::new(&mut buffered)
    };
    let mut tar_bytes = DiffHash {
        inner: &mut decoded,
        hasher: want_diff_id.then(Sha256::new),
    };
    {
        let mut archive = tar::Archive::new(&mut tar_bytes);
        for entry in archive.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.to_string_lossy().into_owned();
            let path = super::layout::normalize(&path);
            if path.is_empty() {
                continue;
            }
            let header = entry.header();
            let kind = match header.entry_type() {
                tar::EntryType::Regular | tar::EntryType::Continuous => EntryKind::File,
                tar::EntryType::Directory => EntryKind::Dir,
                tar::EntryType::Symlink => EntryKind::Symlink(
                    entry
                        .link_name()?
                        .map(|l| l.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                ),
                tar::EntryType::Link => EntryKind::Hardlink(
                    entry
                        .link_name()?
                        .map(|l| super::layout::normalize(&l.to_string_lossy()))
                        .unwrap_or_default(),
                ),
                _ => EntryKind::Other,
            };
            let size = entry.size();
            sink.entry(
                &Entry {
                    path: &path,
                    kind,
                    size,
                },
                &mut entry,
            )?;
        }
    }
    // Drain what follows the end-of-archive marker so every byte is hashed.
    io::copy(&mut tar_bytes, &mut io::sink())?;
    let diff_id = tar_bytes
        .hasher
        .take()
        .map(|h| format!("sha256:{}", hex::encode(h.finalize())));
    drop(decoded);
    io::copy(&mut buffered, &mut io::sink())?;
    Ok(diff_id)
}

/// Hashes and counts the stored bytes; remembers the first I/O error's kind (decoders and the
/// tar reader rewrap errors, so a stall is told from corruption here, at the source).
struct Hashing<'a> {
    inner: &'a mut dyn Read,
    hasher: Sha256,
    count: u64,
    error: Option<io::ErrorKind>,
    progress: &'a ProgressBar,
}

impl<'a> Hashing<'a> {
    fn new(inner: &'a mut dyn Read, progress: &'a ProgressBar) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            count: 0,
            error: None,
            progress,
        }
    }
}

impl Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.hasher.update(&buf[..n]);
                self.count += n as u64;
                self.progress.inc(n as u64);
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.error.get_or_insert(e.kind());
                Err(e)
            }
        }
    }
}

struct DiffHash<'a, 'b> {
    inner: &'a mut Box<dyn Read + 'b>,
    hasher: Option<Sha256>,
}

impl Read for DiffHash<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}
