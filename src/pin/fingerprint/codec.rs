//! The fingerprint index as stored: the binary format pinprobe writes, and the JSON format it
//! wrote before (still read, never written).
//!
//! Binary (`<component>.idx`, format 2). Integers are little-endian; a string is a `u32` byte
//! length and UTF-8; an id is the clone's raw object id (20 bytes for SHA-1, 32 for SHA-256).
//!
//! ```text
//! header (64 bytes)
//!   0  16  magic "pinprobe-index\n\0"
//!  16   4  format (2)
//!  20   1  id length in bytes (20 or 32)
//!  21   3  zero
//!  24   8  body length (the rest of the file, exactly)
//!  32  32  SHA-256 of the body
//! body
//!   component, source                           strings
//!   u32 count, file names                       strings, strictly increasing
//!   u32 count, states: tree id,
//!       u32 count, files: (u32 name, blob id)   name ids strictly increasing
//!   u32 count, commits: (id, i64 time, u32 state)
//! ```
//!
//! Reading checks the header, the body length and the checksum before parsing (a truncated,
//! padded or damaged file is refused as a whole), then parses with every count checked
//! against the bytes left before anything is allocated for it, every reference checked
//! against what it refers to and no byte left over: a hostile file that carries a correct
//! checksum is refused too, never trusted in part.

use super::{Commit, Format, Index, State};
use gix::ObjectId;
use gix::hash::Kind;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

pub const MAGIC: &[u8; 16] = b"pinprobe-index\n\0";
/// The binary format's number.
pub const BINARY: u32 = 2;
/// The legacy JSON format's number.
pub const LEGACY_JSON: u32 = 1;
pub const HEADER_LEN: usize = 64;
/// The longest string stored (a component, a clone's path, a file name).
const MAX_STRING: usize = 64 << 10;

/// The file's bytes, and the checksum of its body.
pub fn encode(index: &Index) -> (Vec<u8>, [u8; 32]) {
    let mut body = Vec::new();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    let count = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
    string(&mut body, &index.component);
    string(&mut body, &index.source);
    count(&mut body, index.names.len());
    for name in &index.names {
        string(&mut body, name);
    }
    count(&mut body, index.states.len());
    for state in &index.states {
        body.extend_from_slice(state.tree.as_slice());
        count(&mut body, state.files.len());
        for (name, blob) in &state.files {
            body.extend_from_slice(&name.to_le_bytes());
            body.extend_from_slice(blob.as_slice());
        }
    }
    count(&mut body, index.commits.len());
    for commit in &index.commits {
        body.extend_from_slice(commit.id.as_slice());
        body.extend_from_slice(&commit.time.to_le_bytes());
        body.extend_from_slice(&commit.state.to_le_bytes());
    }
    let checksum: [u8; 32] = Sha256::digest(&body).into();
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&BINARY.to_le_bytes());
    out.push(index.hash.len_in_bytes() as u8);
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum);
    out.extend_from_slice(&body);
    (out, checksum)
}

/// A binary index, checked whole; the error says what is wrong (the caller names the file).
pub fn decode(bytes: &[u8]) -> Result<Index, String> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC[..] {
        return Err("no pinprobe-index magic at its start".to_string());
    }
    let Some((header, body)) = bytes.split_at_checked(HEADER_LEN) else {
        return Err(format!(
            "{} bytes, shorter than the {HEADER_LEN}-byte header (truncated)",
            bytes.len()
        ));
    };
    let word = |at: usize| {
        u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let format = word(16);
    if format != BINARY {
        return Err(format!(
            "format {format}; this pinprobe reads format {BINARY} (and JSON format {LEGACY_JSON})"
        ));
    }
    let id_len = usize::from(header[20]);
    let hash = Kind::from_hex_len(id_len * 2)
        .filter(|k| k.len_in_bytes() == id_len)
        .ok_or_else(|| {
            format!("object ids of {id_len} bytes, which this pinprobe cannot read (SHA-1: 20)")
        })?;
    if header[21..24] != [0; 3] {
        return Err("reserved header bytes are not zero".to_string());
    }
    let mut len = [0; 8];
    len.copy_from_slice(&header[24..32]);
    let declared = u64::from_le_bytes(len);
    if declared != body.len() as u64 {
        return Err(format!(
            "the header declares a {declared}-byte body, the file holds {} (truncated or padded)",
            body.len()
        ));
    }
    let checksum: [u8; 32] = Sha256::digest(body).into();
    if checksum[..] != header[32..64] {
        return Err("its checksum does not match its contents (damaged)".to_string());
    }
    let mut r = Reader {
        bytes: body,
        at: 0,
        hash,
    };
    let component = r.string("the component")?;
    let source = r.string("the source")?;
    let n = r.count("file names", 4)?;
    let mut names: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let name = r.string("a file name")?;
        if names.last().is_some_and(|last| *last >= name) {
            return Err(format!("file name {i} is out of order or repeated"));
        }
        names.push(name);
    }
    let n = r.count("states", id_len + 4)?;
    let mut states = Vec::with_capacity(n);
    for i in 0..n {
        let tree = r.id("a state's tree")?;
        let m = r.count("a state's files", 4 + id_len)?;
        let mut files: Vec<(u32, ObjectId)> = Vec::with_capacity(m);
        for _ in 0..m {
            let name = r.u32("a file's name")?;
            if name as usize >= names.len() {
                return Err(format!("state {i} names file {name} of {}", names.len()));
            }
            if files.last().is_some_and(|(last, _)| *last >= name) {
                return Err(format!("state {i}: files out of order or repeated"));
            }
            files.push((name, r.id("a file's blob")?));
        }
        states.push(State { tree, files });
    }
    let n = r.count("commits", id_len + 12)?;
    let mut commits = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.id("a commit")?;
        let time = i64::from_le_bytes(r.array("a commit time")?);
        let state = r.u32("a commit's state")?;
        if state as usize >= states.len() {
            return Err(format!(
                "commit {id} names state {state} of {}",
                states.len()
            ));
        }
        commits.push(Commit { id, time, state });
    }
    if r.at != body.len() {
        return Err(format!("{} bytes after the last commit", body.len() - r.at));
    }
    Ok(Index {
        component,
        source,
        hash,
        names,
        states,
        commits,
        format: Format::Binary,
        checksum,
    })
}

/// The body, read front to back; every read is checked against what is left.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    hash: Kind,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!(
                "{what} at byte {} runs past the end",
                HEADER_LEN + self.at
            ));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A count of items of at least `each` bytes: refused when they cannot fit in what is left.
    fn count(&mut self, what: &str, each: usize) -> Result<usize, String> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(each) > self.left() {
            return Err(format!(
                "{n} {what} declared, but only {} bytes are left",
                self.left()
            ));
        }
        Ok(n)
    }

    fn string(&mut self, what: &str) -> Result<String, String> {
        let n = self.u32(what)? as usize;
        if n > MAX_STRING {
            return Err(format!("{what} of {n} bytes (at most {MAX_STRING})"));
        }
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
    }

    fn id(&mut self, what: &str) -> Result<ObjectId, String> {
        let bytes = self.take(self.hash.len_in_bytes(), what)?;
        ObjectId::try_from(bytes).map_err(|e| format!("{what}: {e}"))
    }
}

/// The JSON format pinprobe wrote before the binary one.
#[derive(Deserialize)]
struct Legacy {
    format: u32,
    component: String,
    source: String,
    states: Vec<LegacyState>,
    commits: Vec<(String, i64, u32)>,
}

#[derive(Deserialize)]
struct LegacyState {
    tree: String,
    files: BTreeMap<String, String>,
}

/// A legacy JSON index, converted (ids parsed, names gathered into the table).
pub fn decode_legacy(bytes: &[u8]) -> Result<Index, String> {
    let legacy: Legacy = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if legacy.format != LEGACY_JSON {
        return Err(format!(
            "JSON format {}; this pinprobe reads JSON format {LEGACY_JSON} (and binary format {BINARY})",
            legacy.format
        ));
    }
    let mut hash: Option<Kind> = None;
    let mut id = |hex: &str, what: &dyn Fn() -> String| -> Result<ObjectId, String> {
        let id = ObjectId::from_hex(hex.as_bytes())
            .map_err(|_| format!("{}: `{hex}` is not an object id", what()))?;
        match hash {
            Some(kind) if kind != id.kind() => Err(format!(
                "{}: `{hex}` is of another hash than the rest",
                what()
            )),
            _ => {
                hash = Some(id.kind());
                Ok(id)
            }
        }
    };
    let mut names: Vec<String> = legacy
        .states
        .iter()
        .flat_map(|s| s.files.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    let mut states = Vec::with_capacity(legacy.states.len());
    for (i, state) in legacy.states.iter().enumerate() {
        let tree = id(&state.tree, &|| format!("state {i}"))?;
        let mut files = Vec::with_capacity(state.files.len());
        // A BTreeMap's keys come in order, so the name ids do too.
        for (name, blob) in &state.files {
            let n = names.binary_search(name).unwrap_or_default() as u32;
            files.push((n, id(blob, &|| format!("state {i}, {name}"))?));
        }
        states.push(State { tree, files });
    }
    let mut commits = Vec::with_capacity(legacy.commits.len());
    for (hex, time, state) in &legacy.commits {
        if *state as usize >= states.len() {
            return Err(format!(
                "commit {hex} names state {state} of {}",
                states.len()
            ));
        }
        commits.push(Commit {
            id: id(hex, &|| "a commit".to_string())?,
            time: *time,
            state: *state,
        });
    }
    Ok(Index {
        component: legacy.component,
        source: legacy.source,
        hash: hash.unwrap_or(Kind::Sha1),
        names,
        states,
        commits,
        format: Format::LegacyJson,
        checksum: Sha256::digest(bytes).into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::try_from(&[n; 20][..]).unwrap()
    }

    /// Two states over three names, three commits: every part of the format present.
    fn small() -> Index {
        Index {
            component: "flash-attention".into(),
            source: "/src/flash-attention".into(),
            hash: Kind::Sha1,
            names: vec!["a.py".into(), "b.py".into(), "sub/c.py".into()],
            states: vec![
                State {
                    tree: id(1),
                    files: vec![(0, id(10)), (1, id(11))],
                },
                State {
                    tree: id(2),
                    files: vec![(0, id(10)), (2, id(12))],
                },
            ],
            commits: vec![
                Commit {
                    id: id(20),
                    time: -5,
                    state: 0,
                },
                Commit {
                    id: id(21),
                    time: 1_700_000_000,
                    state: 1,
                },
                Commit {
                    id: id(22),
                    time: i64::MAX,
                    state: 1,
                },
            ],
            format: Format::Binary,
            checksum: [0; 32],
        }
    }

    /// `body` under a correct header (so the parser, not the checksum, judges it).
    fn with_header(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&BINARY.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0]);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(body));
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn round_trips_and_names_its_body() {
        let index = small();
        let (bytes, checksum) = encode(&index);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.checksum, checksum);
        assert_eq!(back, Index { checksum, ..index });
        // Deterministic: the same index, the same bytes.
        assert_eq!(encode(&back).0, bytes);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_refused() {
        let (bytes, _) = encode(&small());
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut to {len}");
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(decode(&padded).is_err());
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                assert!(decode(&flipped).is_err(), "bit {bit} of byte {at}");
            }
        }
    }

    #[test]
    fn header_faults_say_what_they_are() {
        let (bytes, _) = encode(&small());
        let err = |b: &[u8]| decode(b).unwrap_err();
        assert!(err(b"{\"format\": 1}").contains("magic"));
        assert!(err(&bytes[..40]).contains("shorter than the 64-byte header"));
        assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
        let mut other = bytes.clone();
        other[16] = 3;
        assert!(err(&other).contains("format 3"));
        let mut sha256 = bytes.clone();
        sha256[20] = 32;
        assert!(err(&sha256).contains("ids of 32 bytes"));
        let mut damaged = bytes.clone();
        *damaged.last_mut().unwrap() ^= 1;
        assert!(err(&damaged).contains("checksum"));
    }

    /// Counts and lengths far beyond the file (under a correct checksum) are refused before
    /// anything is allocated for them.
    #[test]
    fn absurd_lengths_are_refused_before_allocating() {
        let string = |s: &str| [&(s.len() as u32).to_le_bytes()[..], s.as_bytes()].concat();
        let head = [string("flash-attention"), string("/src")].concat();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                [&head[..], &u32::MAX.to_le_bytes()].concat(),
                "file names declared",
            ),
            (
                [&string("x")[..], &u32::MAX.to_le_bytes()].concat(),
                "the source of 4294967295 bytes",
            ),
            (
                [&head[..], &0u32.to_le_bytes(), &u32::MAX.to_le_bytes()].concat(),
                "states declared",
            ),
            (
                [
                    &head[..],
                    &0u32.to_le_bytes(),
                    &1u32.to_le_bytes(),
                    &[7; 20],
                    &(u32::MAX / 2).to_le_bytes(),
                ]
                .concat(),
                "a state's files declared",
            ),
            (
                [
                    &head[..],
                    &0u32.to_le_bytes(),
                    &0u32.to_le_bytes(),
                    &u32::MAX.to_le_bytes(),
                ]
                .concat(),
                "commits declared",
            ),
            (head.clone(), "runs past the end"),
        ];
        for (body, needle) in cases {
            let e = decode(&with_header(&body)).unwrap_err();
            assert!(e.contains(needle), "`{needle}` in {e}");
        }
    }

    #[test]
    fn references_order_and_leftovers_are_checked() {
        let (bytes, _) = encode(&small());
        let body = &bytes[HEADER_LEN..];
        let mut dangling = small();
        dangling.commits[0].state = 2;
        let e = decode(&encode(&dangling).0).unwrap_err();
        assert!(e.contains("names state 2 of 2"), "{e}");
        let mut unknown_name = small();
        unknown_name.states[0].files[1].0 = 3;
        let e = decode(&encode(&unknown_name).0).unwrap_err();
        assert!(e.contains("names file 3 of 3"), "{e}");
        let mut unsorted = small();
        unsorted.states[1].files.reverse();
        let e = decode(&encode(&unsorted).0).unwrap_err();
        assert!(e.contains("out of order"), "{e}");
        let mut twice = small();
        twice.names[1] = "a.py".into();
        let e = decode(&encode(&twice).0).unwrap_err();
        assert!(e.contains("file name 1 is out of order or repeated"), "{e}");
        let e = decode(&with_header(&[body, &[0]].concat())).unwrap_err();
        assert!(e.contains("1 bytes after the last commit"), "{e}");
    }

    /// Property: any byte of the body changed (and the checksum made to fit, as a forger
    /// would) decodes to an error or to an index whose references all hold; never a panic.
    #[test]
    fn rechecksummed_mutations_never_break_the_invariants() {
        let (bytes, _) = encode(&small());
        let body = bytes[HEADER_LEN..].to_vec();
        for at in 0..body.len() {
            for value in [0u8, 1, 2, 0x7f, 0x80, 0xff, body[at] ^ 0x40] {
                let mut mutated = body.clone();
                mutated[at] = value;
                let Ok(index) = decode(&with_header(&mutated)) else {
                    continue;
                };
                assert!(index.names.windows(2).all(|w| w[0] < w[1]));
                for state in &index.states {
                    assert!(state.files.windows(2).all(|w| w[0].0 < w[1].0));
                    assert!(
                        state
                            .files
                            .iter()
                            .all(|(n, _)| (*n as usize) < index.names.len())
                    );
                }
                assert!(
                    index
                        .commits
                        .iter()
                        .all(|c| (c.state as usize) < index.states.len())
                );
            }
        }
    }

    #[test]
    fn legacy_json_converts_to_the_same_index() {
        let index = small();
        let hex = |n: u8| id(n).to_string();
        let json = serde_json::json!({
            "format": 1,
            "component": "flash-attention",
            "source": "/src/flash-attention",
            "states": [
                {"tree": hex(1), "files": {"a.py": hex(10), "b.py": hex(11)}},
                {"tree": hex(2), "files": {"a.py": hex(10), "sub/c.py": hex(12)}},
            ],
            "commits": [[hex(20), -5, 0], [hex(21), 1_700_000_000, 1], [hex(22), i64::MAX, 1]],
        });
        let bytes = serde_json::to_vec(&json).unwrap();
        let legacy = decode_legacy(&bytes).unwrap();
        assert_eq!(legacy.format, Format::LegacyJson);
        assert_eq!(legacy.checksum, <[u8; 32]>::from(Sha256::digest(&bytes)));
        assert_eq!(
            Index {
                format: Format::Binary,
                checksum: [0; 32],
                ..legacy
            },
            index
        );
        let mut bad = json.clone();
        bad["states"][0]["tree"] = "zz".into();
        let e = decode_legacy(&serde_json::to_vec(&bad).unwrap()).unwrap_err();
        assert!(e.contains("`zz` is not an object id"), "{e}");
        let mut dangling = json.clone();
        dangling["commits"][0][2] = 9.into();
        let e = decode_legacy(&serde_json::to_vec(&dangling).unwrap()).unwrap_err();
        assert!(e.contains("names state 9 of 2"), "{e}");
        let mut other = json;
        other["format"] = 2.into();
        assert!(decode_legacy(&serde_json::to_vec(&other).unwrap()).is_err());
    }
}
