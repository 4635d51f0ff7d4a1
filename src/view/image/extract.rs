//! One layer's extract: the entries of the layer that the merge reads
//! ([`super::overlay::relevance`]: whiteouts, links, paths that may hide an environment, and the
//! interesting files with their data), in tar order, and nothing else. It depends on the
//! layer's bytes alone (not on the other layers), so it is computed once per layer digest and
//! kept in the content-addressed cache (`CACHE/cas/layer/`): a layer shared by 50 images is
//! downloaded and read once, and a re-scan of an unchanged image reads no layer. The merge
//! replays an extract exactly as it would have streamed the layer.
//!
//! An entry's key holds the layer's checked digests (the stored blob's, and the uncompressed
//! diff id where the source checks it), pinprobe's version and [`FORMAT`] (bump it whenever
//! what an extract holds, or which entries the merge reads, changes). An extract is cached only
//! once the layer was read whole and matched its digests. Every entry read is checked twice:
//! its own checksum (the store), then the digests it says it was read from, which must be the
//! ones asked for; an entry failing either is deleted and the layer read again, never trusted.
//! The extract is stored whole (serde), so fields added to it come along.

use super::layer::{self, Entry, EntryKind, Expect, Sink};
use super::overlay::{self, MAX_KEPT, MAX_LIBRARIES, Relevance, relevance};
use super::{Fault, LayerRef, Source};
use crate::cache::{Key, Kind};
use crate::view::elf::{ElfError, Library};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use std::io::{self, Read};

/// The extract format's version: part of every key.
// 3: the merge keeps `sitecustomize.py`, `usercustomize.py`, `pyvenv.cfg` and the packages'
// `__init__.py` (Python's import path).
pub const FORMAT: &str = "3";

/// The entries of one layer the merge reads, and what the layer was read from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Extract {
    /// The stored blob's digest it was checked against, when there was one.
    pub digest: Option<String>,
    /// The uncompressed diff id it was checked against, when there was one.
    pub diff_id: Option<String>,
    /// Stored bytes of the layer.
    pub stored: u64,
    pub entries: Vec<Record>,
}

/// One entry of the layer, as the merge sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub path: String,
    pub kind: EntryKind,
    pub size: u64,
    /// The data, for [`Relevance::Body`] entries.
    #[serde(
        default,
        with = "base64_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub body: Option<Vec<u8>>,
    /// The dynamic symbols (or why they could not be read), for [`Relevance::Library`] entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<Result<Library, ElfError>>,
}

impl Extract {
    /// Feed the entries to `sink` in the layer's order, as streaming the layer would.
    pub fn replay(&self, sink: &mut dyn Sink) -> io::Result<()> {
        for record in &self.entries {
            let entry = Entry {
                path: &record.path,
                kind: record.kind.clone(),
                size: record.size,
            };
            match &record.library {
                Some(read) => sink.library(&entry, read.clone())?,
                None => sink.entry(&entry, &mut record.body.as_deref().unwrap_or_default())?,
            }
        }
        Ok(())
    }
}

/// Records the entries the merge reads, data under [`MAX_KEPT`] in all.
struct Recorder {
    extract: Extract,
    kept: u64,
    /// File-name patterns of the libraries read for their symbols.
    libraries: Vec<String>,
    /// Libraries streamed from this layer, under [`MAX_LIBRARIES`].
    libraries_read: usize,
}

impl Recorder {
    fn keep(&mut self, bytes: u64) -> io::Result<()> {
        self.kept += bytes;
        if self.kept > MAX_KEPT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the layer's files of interest pass the {MAX_KEPT}-byte total cap"),
            ));
        }
        Ok(())
    }
}

impl Sink for Recorder {
    fn entry(&mut self, entry: &Entry<'_>, body: &mut dyn Read) -> io::Result<()> {
        let (body, library) = match relevance(entry, &self.libraries) {
            Relevance::Skip => return Ok(()),
            Relevance::Meta => (None, None),
            Relevance::Body => {
                let mut bytes = Vec::with_capacity(entry.size as usize);
                body.take(entry.size).read_to_end(&mut bytes)?;
                self.keep(bytes.len() as u64)?;
                (Some(bytes), None)
            }
            Relevance::Library => {
                let read = if self.libraries_read >= MAX_LIBRARIES {
                    Err(overlay::too_many_libraries())
                } else {
                    self.libraries_read += 1;
                    overlay::stream_library(body)?
                };
                if let Ok(library) = &read {
                    self.keep(overlay::library_bytes(library) as u64)?;
                }
                (None, Some(read))
            }
        };
        self.extract.entries.push(Record {
            path: entry.path.to_string(),
            kind: entry.kind.clone(),
            size: entry.size,
            body,
            library,
        });
        Ok(())
    }
}

/// Stream one layer's stored bytes into its extract (digests checked, see [`layer::stream`]).
pub fn of_layer(
    raw: &mut dyn Read,
    expect: &Expect,
    progress: &ProgressBar,
    libraries: &[String],
) -> Result<Extract, Fault> {
    let mut recorder = Recorder {
        extract: Extract {
            digest: expect.digest.clone(),
            diff_id: expect.diff_id.clone(),
            ..Extract::default()
        },
        kept: 0,
        libraries: libraries.to_vec(),
        libraries_read: 0,
    };
    recorder.extract.stored = layer::stream(raw, expect, progress, &mut recorder)?;
    Ok(recorder.extract)
}

/// One layer's extract and where it came from.
pub struct Extracted {
    pub extract: Extract,
    /// Stored bytes read for it (0 from the cache).
    pub bytes_read: u64,
    pub cached: bool,
}

/// The cache key of a layer's extract; `None` when the source checks no digest of the layer.
/// The library patterns are part of it: they decide which entries are read for symbols.
fn key(expect: &Expect, libraries: &[String]) -> Option<Key> {
    if expect.digest.is_none() && expect.diff_id.is_none() {
        return None;
    }
    let patterns = libraries.join("\n");
    Some(Key::of(&[
        b"layer-extract",
        env!("CARGO_PKG_VERSION").as_bytes(),
        FORMAT.as_bytes(),
        expect.digest.as_deref().unwrap_or("").as_bytes(),
        expect.diff_id.as_deref().unwrap_or("").as_bytes(),
        patterns.as_bytes(),
    ]))
}

/// A cached extract's payload, if it is an extract of the layer `expect` names.
fn decode(payload: &[u8], expect: &Expect) -> Option<Extract> {
    let extract: Extract = serde_json::from_slice(payload).ok()?;
    (extract.digest == expect.digest && extract.diff_id == expect.diff_id).then_some(extract)
}

/// The extract of `layer`: from the cache when it holds one for the layer's digests (and the
/// size the manifest gives, when it does, is the size read then), else read with `open` and
/// stored. Only one thread or process reads a given layer at a time; the others wait and take
/// its extract.
pub fn read(
    source: &mut dyn Source,
    layer: &LayerRef,
    expect: &Expect,
    progress: &ProgressBar,
    libraries: &[String],
) -> Result<Extracted, Fault> {
    let mut stream = || -> Result<Extract, Fault> {
        let mut raw = source.open_layer(layer)?;
        of_layer(&mut raw, expect, progress, libraries)
    };
    let (Some(store), Some(key)) = (super::cache(), key(expect, libraries)) else {
        let extract = stream()?;
        return Ok(Extracted {
            bytes_read: extract.stored,
            extract,
            cached: false,
        });
    };
    let (extract, cached) = store.get_or_make(
        Kind::Layer,
        &key,
        |payload| decode(payload, expect),
        || {
            let extract = stream()?;
            let payload = serde_json::to_vec(&extract).unwrap_or_default();
            Ok::<_, Fault>((extract, payload))
        },
    )?;
    if cached && expect.size.is_some_and(|size| size != extract.stored) {
        // The manifest disagrees with the layer's size: reading it says how (an error).
        let extract = stream()?;
        return Ok(Extracted {
            bytes_read: extract.stored,
            extract,
            cached: false,
        });
    }
    if cached {
        progress.inc(extract.stored);
    }
    Ok(Extracted {
        bytes_read: if cached { 0 } else { extract.stored },
        extract,
        cached,
    })
}

/// `Option<Vec<u8>>` as a base64 string (JSON arrays of numbers would triple the entry).
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| {
            base64::engine::general_purpose::STANDARD
                .decode(t)
                .map_err(serde::de::Error::custom)
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extract_round_trips_through_json() {
        let extract = Extract {
            digest: Some("sha256:00".into()),
            diff_id: None,
            stored: 7,
            entries: vec![
                Record {
                    path: "a/vllm/_version.py".into(),
                    kind: EntryKind::File,
                    size: 3,
                    body: Some(vec![0, 255, 10]),
                    library: None,
                },
                Record {
                    path: "opt/venv".into(),
                    kind: EntryKind::Symlink("/srv/venv".into()),
                    size: 0,
                    body: None,
                    library: None,
                },
            ],
        };
        let json = serde_json::to_vec(&extract).expect("json");
        let expect = Expect {
            digest: Some("sha256:00".into()),
            ..Expect::default()
        };
        let back = decode(&json, &expect).expect("decodes");
        assert_eq!(back.entries[0].body, Some(vec![0, 255, 10]));
        assert_eq!(back.entries[1].kind, EntryKind::Symlink("/srv/venv".into()));
        // The extract of another layer is refused.
        let other = Expect {
            digest: Some("sha256:01".into()),
            ..Expect::default()
        };
        assert!(decode(&json, &other).is_none());
    }
}
