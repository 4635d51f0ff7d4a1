//! One layer, streamed: the stored bytes are hashed and counted as they arrive, decompressed by
//! what their first bytes say (gzip `1f 8b`, zstd `28 b5 2f fd`, anything else read as a plain
//! tar), and walked entry by entry with the `tar` crate; the data of entries the [`Sink`] does
//! not read is streamed past, never stored. After the last entry the stream is drained so the
//! digest covers every byte, then checked: a short, corrupt or substituted layer is an error.
//!
//! Extended headers (GNU long names and long link names, PAX records) are read here, not by the
//! `tar` crate, which buffers their bodies whole whatever their size (a 7 MB layer of huge
//! headers drove a scan to 4.7 GB): a GNU long name over [`MAX_LONG_NAME`] bytes or a PAX header
//! over [`MAX_PAX`] makes the layer an error, as does a PAX `size` record the header disagrees
//! with (the entries after it could not be found).

use super::Fault;
use flate2::read::MultiGzDecoder;
use indicatif::ProgressBar;
use sha2::{Digest as _, Sha256};
use std::io::{self, BufRead, BufReader, Read};

/// The largest GNU long name or long link name body read (paths are at most 4 KiB on Linux).
pub const MAX_LONG_NAME: u64 = 64 << 10;
/// The largest PAX extended header body read.
pub const MAX_PAX: u64 = 1 << 20;

/// The kind of a tar entry, as the merge needs it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// A shared-library entry whose dynamic symbols were already read (an extract replayed):
    /// by default refused, since a sink that reads no libraries never asked for one.
    fn library(
        &mut self,
        entry: &Entry<'_>,
        _read: Result<crate::view::elf::Library, crate::view::elf::ElfError>,
    ) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: a library record this reader does not take", entry.path),
        ))
    }
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
        let mut extended = Extended::default();
        // Raw: extended headers come through as entries, read under a cap below.
        for entry in archive.entries()?.raw(true) {
            let mut entry = entry?;
            if extended.take(&mut entry)? {
                continue;
            }
            let header = entry.header();
            let (path_bytes, link_bytes) = extended.names(header)?;
            let path = super::layout::normalize(&String::from_utf8_lossy(&path_bytes));
            if path.is_empty() {
                continue;
            }
            let kind = match header.entry_type() {
                tar::EntryType::Regular | tar::EntryType::Continuous => EntryKind::File,
                tar::EntryType::Directory => EntryKind::Dir,
                tar::EntryType::Symlink => EntryKind::Symlink(
                    String::from_utf8_lossy(&link_bytes.unwrap_or_default()).into_owned(),
                ),
                tar::EntryType::Link => EntryKind::Hardlink(super::layout::normalize(
                    &String::from_utf8_lossy(&link_bytes.unwrap_or_default()),
                )),
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

/// The extended headers seen since the last real entry, each body read under its cap.
#[derive(Default)]
struct Extended {
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    pax: Option<Vec<u8>>,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Extended {
    /// Read `entry` if it is an extended header (then `true`: it is no file of its own).
    fn take(&mut self, entry: &mut tar::Entry<'_, impl Read>) -> io::Result<bool> {
        let kind = entry.header().entry_type();
        let (what, cap) = if kind.is_gnu_longname() || kind.is_gnu_longlink() {
            ("GNU long-name", MAX_LONG_NAME)
        } else if kind.is_pax_local_extensions() || kind.is_pax_global_extensions() {
            ("PAX", MAX_PAX)
        } else {
            return Ok(false);
        };
        let size = entry.header().entry_size()?;
        if size > cap {
            return Err(invalid(format!(
                "a {what} extended header of {size} bytes, over the {cap}-byte cap"
            )));
        }
        let mut body = Vec::with_capacity(size as usize);
        entry.take(cap).read_to_end(&mut body)?;
        if kind.is_gnu_longname() {
            self.long_name = Some(body);
        } else if kind.is_gnu_longlink() {
            self.long_link = Some(body);
        } else if kind.is_pax_local_extensions() {
            self.pax = Some(body);
        }
        // A global PAX header's records are ignored (as the `tar` crate does), its size capped.
        Ok(true)
    }

    /// The path and link name of the real entry `header` (GNU long names first, then PAX
    /// `path` / `linkpath`, then the header's own fields), clearing what was pending.
    fn names(&mut self, header: &tar::Header) -> io::Result<(Vec<u8>, Option<Vec<u8>>)> {
        let strip = |mut b: Vec<u8>| {
            while b.last() == Some(&0) {
                b.pop();
            }
            b
        };
        let mut pax_path = None;
        let mut pax_link = None;
        if let Some(pax) = self.pax.take() {
            for record in tar::PaxExtensions::new(&pax) {
                let record = record?;
                match record.key_bytes() {
                    b"path" => pax_path = Some(record.value_bytes().to_vec()),
                    b"linkpath" => pax_link = Some(record.value_bytes().to_vec()),
                    b"size" => {
                        let declared = std::str::from_utf8(record.value_bytes())
                            .ok()
                            .and_then(|s| s.trim().parse::<u64>().ok());
                        if declared != Some(header.entry_size()?) {
                            return Err(invalid(
                                "a PAX size record that the tar header disagrees with".into(),
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        let path = self
            .long_name
            .take()
            .map(strip)
            .or(pax_path)
            .unwrap_or_else(|| header.path_bytes().into_owned());
        let link = self
            .long_link
            .take()
            .map(strip)
            .or(pax_link)
            .or_else(|| header.link_name_bytes().map(|b| b.into_owned()));
        Ok((path, link))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Names(Vec<(String, EntryKind)>);

    impl Sink for Names {
        fn entry(&mut self, entry: &Entry<'_>, _body: &mut dyn Read) -> io::Result<()> {
            self.0.push((entry.path.to_string(), entry.kind.clone()));
            Ok(())
        }
    }

    fn walk_tar(tar: &[u8]) -> io::Result<Vec<(String, EntryKind)>> {
        let mut names = Names::default();
        walk(&mut &tar[..], false, &mut names)?;
        Ok(names.0)
    }

    fn file(b: &mut tar::Builder<Vec<u8>>, path: &str) {
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, path, &b"x"[..]).unwrap();
    }

    #[test]
    fn long_names_and_pax_paths_under_the_caps_are_read() {
        let long = format!("usr/{}/a.py", "d".repeat(300));
        let mut b = tar::Builder::new(Vec::new());
        file(&mut b, &long); // a GNU long-name header
        b.append_pax_extensions([("path", format!("opt/{}/b.py", "p".repeat(200)).as_bytes())])
            .unwrap();
        file(&mut b, "placeholder");
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Link);
        b.append_link(&mut h, "hard", format!("usr/{}/a.py", "d".repeat(300)))
            .unwrap();
        let names = walk_tar(&b.into_inner().unwrap()).unwrap();
        assert_eq!(names[0], (long.clone(), EntryKind::File));
        assert_eq!(
            names[1],
            (format!("opt/{}/b.py", "p".repeat(200)), EntryKind::File)
        );
        assert_eq!(names[2], ("hard".to_string(), EntryKind::Hardlink(long)));
    }

    fn with_extended(kind: tar::EntryType, body: &[u8]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_entry_type(kind);
        b.append_data(&mut h, "././@LongLink", body).unwrap();
        file(&mut b, "etc/hostname");
        b.into_inner().unwrap()
    }

    #[test]
    fn extended_headers_over_their_caps_are_errors() {
        let big = vec![b'a'; MAX_LONG_NAME as usize + 1];
        let e = walk_tar(&with_extended(tar::EntryType::GNULongName, &big)).unwrap_err();
        assert!(e.to_string().contains("over the 65536-byte cap"), "{e}");
        let big = vec![b'a'; MAX_PAX as usize + 1];
        let e = walk_tar(&with_extended(tar::EntryType::XHeader, &big)).unwrap_err();
        assert!(e.to_string().contains("over the 1048576-byte cap"), "{e}");
        // At the cap: read.
        let name = vec![b'n'; MAX_LONG_NAME as usize];
        let names = walk_tar(&with_extended(tar::EntryType::GNULongName, &name)).unwrap();
        assert_eq!(names[0].0.len(), MAX_LONG_NAME as usize);
        // A PAX size the header disagrees with.
        let e = walk_tar(&with_extended(tar::EntryType::XHeader, b"12 size=999\n")).unwrap_err();
        assert!(e.to_string().contains("PAX size record"), "{e}");
    }
}
