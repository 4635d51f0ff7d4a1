//! A bounded ELF64 reader for one thing: a shared library's dynamic symbol table (what
//! `nm -D` / `readelf --dyn-syms` list), read from a forward-only stream (a wheel member is
//! inflated as it is read, and vLLM's FA2/FA3 libraries are 150-300 MB).
//!
//! One pass streams the whole file once: it hashes it (for RECORD), keeps its first
//! [`PREFIX_BYTES`] and the section header table (located by the ELF header). The table names
//! `.dynsym` (`SHT_DYNSYM`) and, through its `sh_link`, the string table; linkers put both near
//! the start of the file, inside the prefix. When they lie elsewhere a second pass keeps exactly
//! those two ranges. Every size is checked against the file and a bound before anything is
//! kept: a truncated file, a wrong class or byte order, a section table past the end, a symbol
//! name past its string table are errors, never a partial table.

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;

/// The most bytes one library may stream (larger: refused, never a partial table).
pub const MAX_LIBRARY_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The start of the file kept in memory during the first pass.
pub const PREFIX_BYTES: u64 = 16 * 1024 * 1024;
/// The largest `.dynsym` or dynamic string table kept.
pub const MAX_TABLE_BYTES: u64 = 64 * 1024 * 1024;

const SHT_STRTAB: u32 = 3;
const SHT_DYNSYM: u32 = 11;
const SHDR_SIZE: u64 = 64;
const SYM_SIZE: u64 = 24;

/// How a dynamic symbol binds, as far as loading is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SymbolKind {
    /// Defined in this library (`nm -D`: T, W, D, B, R, V, i, u, ...).
    Defined,
    /// Undefined with global binding: the loader must find it or the library fails to load
    /// (`nm -D`: U).
    Undefined,
    /// Undefined and weak: loading succeeds without it (`nm -D`: w, v).
    UndefinedWeak,
}

/// One entry of `.dynsym` (the null symbol at index 0 is left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DynamicSymbol {
    /// The raw (mangled) name.
    pub name: String,
    pub kind: SymbolKind,
}

/// A library's dynamic symbols, with the digest of the bytes they were read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Library {
    pub symbols: Vec<DynamicSymbol>,
    /// `sha256=<urlsafe base64, no padding>`, as RECORD writes it.
    pub sha256: String,
    pub size: u64,
}

/// Why a library's dynamic symbols could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ElfError {
    #[error("not an ELF file")]
    NotElf,
    #[error("ELF class {0}, not ELF64")]
    WrongClass(u8),
    #[error("ELF data encoding {0}, not little-endian")]
    WrongEndian(u8),
    #[error("truncated: {0}")]
    Truncated(String),
    #[error("over the bound: {0}")]
    TooLarge(String),
    #[error("malformed: {0}")]
    Malformed(String),
    #[error("no dynamic symbol table (no SHT_DYNSYM section)")]
    NoDynamicSymbols,
    #[error("read failed: {0}")]
    Io(String),
}

/// A source that can hand the library's bytes over as a stream, once per call (a second pass
/// calls it again).
pub type Open<'a> =
    dyn FnMut(&mut dyn FnMut(&mut dyn Read) -> Result<(), ElfError>) -> Result<(), ElfError> + 'a;

/// Read the dynamic symbol table of the library `open` streams.
pub fn dynamic_symbols(open: &mut Open) -> Result<Library, ElfError> {
    let mut first = None;
    open(&mut |r| {
        first = Some(first_pass(r)?);
        Ok(())
    })?;
    let first = first.ok_or_else(|| ElfError::Io("the library was not streamed".into()))?;
    let (dynsym, dynstr) = locate(&first)?;
    let sha256 = format!(
        "sha256={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(first.digest)
    );
    let in_prefix = |r: &Span| r.end() <= first.prefix.len() as u64;
    let symbols = if in_prefix(&dynsym) && in_prefix(&dynstr) {
        parse_symbols(&first.prefix[dynsym.range()], &first.prefix[dynstr.range()])?
    } else {
        let mut kept = None;
        open(&mut |r| {
            kept = Some(capture(r, &[dynsym, dynstr], first.size)?);
            Ok(())
        })?;
        let kept = kept.ok_or_else(|| ElfError::Io("the library was not streamed".into()))?;
        parse_symbols(&kept[0], &kept[1])?
    };
    Ok(Library {
        symbols,
        sha256,
        size: first.size,
    })
}

/// The SHA-256 of a library's ELF header and section header table, read in place (two
/// positioned reads, not the file): what a cache keyed by an installed file's stamp checks
/// besides it (`pin::shipped::library_cache`). `None` when the file is not an ELF64
/// little-endian object with a section header table that lies inside it.
pub fn layout_digest(file: &std::fs::File) -> Option<[u8; 32]> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 64];
    file.read_exact_at(&mut head, 0).ok()?;
    let span = header(&head).ok()??;
    // At most 65,535 headers of 64 bytes (e_shnum is 16 bits): 4 MiB.
    let mut table = vec![0u8; usize::try_from(span.len).ok()?];
    file.read_exact_at(&mut table, span.offset).ok()?;
    let mut hasher = Sha256::new();
    hasher.update(head);
    hasher.update(&table);
    Some(hasher.finalize().into())
}

/// A byte range of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    offset: u64,
    len: u64,
}

impl Span {
    fn end(&self) -> u64 {
        self.offset + self.len
    }
    fn range(&self) -> std::ops::Range<usize> {
        self.offset as usize..self.end() as usize
    }
}

struct FirstPass {
    prefix: Vec<u8>,
    /// The section header table, when the header names one.
    sections: Vec<u8>,
    shnum: u64,
    digest: [u8; 32],
    size: u64,
}

fn io(e: std::io::Error) -> ElfError {
    ElfError::Io(e.to_string())
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The section header table's place, from the 64-byte ELF header.
fn header(h: &[u8]) -> Result<Option<Span>, ElfError> {
    if h.len() < 4 || &h[..4] != b"\x7fELF" {
        return Err(ElfError::NotElf);
    }
    if h.len() < 64 {
        return Err(ElfError::Truncated(format!(
            "{} bytes, shorter than an ELF64 header",
            h.len()
        )));
    }
    if h[4] != 2 {
        return Err(ElfError::WrongClass(h[4]));
    }
    if h[5] != 1 {
        return Err(ElfError::WrongEndian(h[5]));
    }
    let shoff = le64(h, 0x28);
    let shentsize = u64::from(le16(h, 0x3a));
    let shnum = u64::from(le16(h, 0x3c));
    if shoff == 0 {
        return Ok(None);
    }
    if shnum == 0 {
        return Err(ElfError::Malformed(
            "extended section numbering (e_shnum 0) is not read".into(),
        ));
    }
    if shentsize != SHDR_SIZE {
        return Err(ElfError::Malformed(format!(
            "section header size {shentsize}, not {SHDR_SIZE}"
        )));
    }
    Ok(Some(Span {
        offset: shoff,
        len: shnum * SHDR_SIZE,
    }))
}

/// Copy the part of `chunk` (at file offset `pos`) that falls in `span` into `out`.
fn keep(out: &mut Vec<u8>, span: Span, pos: u64, chunk: &[u8]) {
    let start = span.offset.max(pos);
    let end = span.end().min(pos + chunk.len() as u64);
    if start < end {
        out.extend_from_slice(&chunk[(start - pos) as usize..(end - pos) as usize]);
    }
}

/// Buffers one first pass keeps in flight between the reader and the hashing thread.
const HASH_BUFFERS: usize = 4;
/// The size of one read.
const CHUNK_BYTES: usize = 1 << 20;

/// The first pass: the reading thread inflates (a wheel member) or reads and keeps what the
/// ELF header names, while a second thread hashes the chunks it hands over (SHA-256 of a
/// 150 MB library costs about half as much as inflating it: the two overlap).
fn first_pass(r: &mut dyn Read) -> Result<FirstPass, ElfError> {
    use std::sync::mpsc::sync_channel;
    std::thread::scope(|scope| {
        let (full, to_hash) = sync_channel::<(Vec<u8>, usize)>(HASH_BUFFERS);
        let (give_back, returned) = sync_channel::<Vec<u8>>(HASH_BUFFERS);
        let hasher = scope.spawn(move || {
            let mut hasher = Sha256::new();
            for (buf, n) in to_hash {
                hasher.update(&buf[..n]);
                // The reader may have stopped (an error): then the buffer is dropped.
                let _ = give_back.send(buf);
            }
            <[u8; 32]>::from(hasher.finalize())
        });
        let mut spare: Option<Vec<u8>> = None;
        let mut made = 0;
        let read = read_first_pass(r, &mut |fill| {
            let mut buf = match spare.take() {
                Some(buf) => buf,
                None if made < HASH_BUFFERS => {
                    made += 1;
                    vec![0u8; CHUNK_BYTES]
                }
                // Every buffer is with the hasher: wait for one back.
                None => returned.recv().unwrap_or_else(|_| vec![0u8; CHUNK_BYTES]),
            };
            let n = fill(&mut buf)?;
            if n > 0 {
                full.send((buf, n))
                    .map_err(|_| ElfError::Io("the hashing thread stopped".into()))?;
            } else {
                spare = Some(buf);
            }
            Ok(n)
        });
        drop(full);
        let digest = hasher
            .join()
            .map_err(|_| ElfError::Io("the hashing thread failed".into()))?;
        let mut first = read?;
        first.digest = digest;
        Ok(first)
    })
}

/// Read into `buf` until it is full or the stream ends; returns the bytes read. A decoder's
/// `read` hands back what one step of it made (a wheel member's inflater: about 128 KiB per
/// call); whole buffers make a tenth as many hand-overs to the hashing thread, each of which
/// wakes it.
fn fill(r: &mut dyn Read, buf: &mut [u8]) -> Result<usize, ElfError> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        }
    }
    Ok(filled)
}

/// One chunk of the stream: `fill` reads into the buffer it is handed, and the chunk is kept
/// (and hashed) before the next is read; returns the bytes read (0 at the end).
type NextChunk<'a> =
    dyn FnMut(&mut dyn FnMut(&mut [u8]) -> Result<usize, ElfError>) -> Result<usize, ElfError> + 'a;

/// The first pass without the hash: streams the file, keeps its prefix and section header
/// table, bounds its size. `next` reads each chunk (and hands it on to be hashed).
fn read_first_pass(r: &mut dyn Read, next: &mut NextChunk) -> Result<FirstPass, ElfError> {
    // Reserved whole (pages are only touched as it fills): growing it by doubling copied it
    // four times over on a 150 MB library.
    let mut prefix = Vec::with_capacity(PREFIX_BYTES as usize);
    let mut sections = Vec::new();
    let mut table: Option<Option<Span>> = None;
    let mut pos: u64 = 0;
    loop {
        let mut kept = Ok(());
        let n = next(&mut |buf: &mut [u8]| {
            let n = fill(r, buf)?;
            if n == 0 {
                return Ok(0);
            }
            let chunk = &buf[..n];
            if pos + n as u64 > MAX_LIBRARY_BYTES {
                return Err(ElfError::TooLarge(format!(
                    "more than {MAX_LIBRARY_BYTES} bytes"
                )));
            }
            keep(
                &mut prefix,
                Span {
                    offset: 0,
                    len: PREFIX_BYTES,
                },
                pos,
                chunk,
            );
            if table.is_none() && prefix.len() >= 64 {
                // Everything streamed so far is in the prefix (chunks are far smaller than it).
                match header(&prefix) {
                    Ok(span) => {
                        if let Some(span) = span {
                            keep(&mut sections, span, 0, &prefix);
                        }
                        table = Some(span);
                    }
                    Err(e) => kept = Err(e),
                }
            } else if let Some(Some(span)) = table {
                keep(&mut sections, span, pos, chunk);
            }
            pos += n as u64;
            Ok(n)
        })?;
        kept?;
        if n == 0 {
            break;
        }
    }
    let span = match table {
        Some(span) => span,
        None => {
            header(&prefix)?;
            return Err(ElfError::Truncated(format!("{pos} bytes")));
        }
    };
    let Some(span) = span else {
        return Err(ElfError::NoDynamicSymbols);
    };
    if span.end() > pos || sections.len() as u64 != span.len {
        return Err(ElfError::Truncated(format!(
            "the section header table ends at {} but the file has {pos} bytes",
            span.end()
        )));
    }
    Ok(FirstPass {
        prefix,
        sections,
        shnum: span.len / SHDR_SIZE,
        digest: [0; 32],
        size: pos,
    })
}

/// `.dynsym` and its string table, checked against the file and the bounds.
fn locate(first: &FirstPass) -> Result<(Span, Span), ElfError> {
    let section = |i: u64| -> (u32, u64, u64, u32, u64) {
        let b = &first.sections[(i * SHDR_SIZE) as usize..((i + 1) * SHDR_SIZE) as usize];
        // sh_type, sh_offset, sh_size, sh_link, sh_entsize
        (
            le32(b, 4),
            le64(b, 0x18),
            le64(b, 0x20),
            le32(b, 0x28),
            le64(b, 0x38),
        )
    };
    let mut found = None;
    for i in 0..first.shnum {
        if section(i).0 == SHT_DYNSYM {
            if found.is_some() {
                return Err(ElfError::Malformed("two SHT_DYNSYM sections".into()));
            }
            found = Some(i);
        }
    }
    let Some(index) = found else {
        return Err(ElfError::NoDynamicSymbols);
    };
    let (_, offset, len, link, entsize) = section(index);
    if entsize != SYM_SIZE || !len.is_multiple_of(SYM_SIZE) {
        return Err(ElfError::Malformed(format!(
            ".dynsym entry size {entsize} and size {len}: not whole {SYM_SIZE}-byte symbols"
        )));
    }
    if u64::from(link) >= first.shnum || link == 0 {
        return Err(ElfError::Malformed(format!(
            ".dynsym links to section {link} of {}",
            first.shnum
        )));
    }
    let (strtype, stroff, strlen, _, _) = section(u64::from(link));
    if strtype != SHT_STRTAB {
        return Err(ElfError::Malformed(format!(
            ".dynsym's string table is of type {strtype}, not SHT_STRTAB"
        )));
    }
    let checked = |what: &str, offset: u64, len: u64| -> Result<Span, ElfError> {
        if len > MAX_TABLE_BYTES {
            return Err(ElfError::TooLarge(format!(
                "{what} is {len} bytes, over {MAX_TABLE_BYTES}"
            )));
        }
        match offset.checked_add(len) {
            Some(end) if end <= first.size => Ok(Span { offset, len }),
            _ => Err(ElfError::Truncated(format!(
                "{what} at {offset}+{len} lies past the end of the {}-byte file",
                first.size
            ))),
        }
    };
    Ok((
        checked(".dynsym", offset, len)?,
        checked("the dynamic string table", stroff, strlen)?,
    ))
}

/// Second pass: keep `spans` (each at most [`MAX_TABLE_BYTES`]) of a file of `size` bytes.
fn capture(r: &mut dyn Read, spans: &[Span], size: u64) -> Result<Vec<Vec<u8>>, ElfError> {
    let mut out: Vec<Vec<u8>> = spans.iter().map(|_| Vec::new()).collect();
    let last = spans.iter().map(Span::end).max().unwrap_or(0);
    let mut buf = vec![0u8; 1 << 20];
    let mut pos: u64 = 0;
    while pos < last {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        for (span, kept) in spans.iter().zip(out.iter_mut()) {
            keep(kept, *span, pos, &buf[..n]);
        }
        pos += n as u64;
        if pos > size {
            return Err(ElfError::Malformed(
                "the library changed between two reads".into(),
            ));
        }
    }
    if spans.iter().zip(&out).any(|(s, k)| k.len() as u64 != s.len) {
        return Err(ElfError::Truncated(
            "the library ended early on its second read".into(),
        ));
    }
    Ok(out)
}

fn parse_symbols(dynsym: &[u8], dynstr: &[u8]) -> Result<Vec<DynamicSymbol>, ElfError> {
    let mut out = Vec::with_capacity(dynsym.len() / SYM_SIZE as usize);
    for (i, sym) in dynsym.chunks_exact(SYM_SIZE as usize).enumerate().skip(1) {
        let name_at = le32(sym, 0) as usize;
        let info = sym[4];
        let shndx = le16(sym, 6);
        let Some(tail) = dynstr.get(name_at..) else {
            return Err(ElfError::Malformed(format!(
                "symbol {i}'s name at {name_at} lies past the {}-byte string table",
                dynstr.len()
            )));
        };
        let Some(end) = tail.iter().position(|&b| b == 0) else {
            return Err(ElfError::Malformed(format!(
                "symbol {i}'s name is not terminated in the string table"
            )));
        };
        let bind = info >> 4;
        let kind = match (shndx, bind) {
            (0, 2) => SymbolKind::UndefinedWeak,
            (0, _) => SymbolKind::Undefined,
            _ => SymbolKind::Defined,
        };
        out.push(DynamicSymbol {
            name: String::from_utf8_lossy(&tail[..end]).into_owned(),
            kind,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 shared object: header, `.dynsym`, `.dynstr`, section headers at `shoff`.
    fn build(symbols: &[(&str, u16, u8)], pad: usize) -> Vec<u8> {
        let mut dynstr = vec![0u8];
        let mut dynsym = vec![0u8; 24];
        for (name, shndx, bind) in symbols {
            let at = dynstr.len() as u32;
            dynstr.extend_from_slice(name.as_bytes());
            dynstr.push(0);
            let mut s = vec![0u8; 24];
            s[0..4].copy_from_slice(&at.to_le_bytes());
            s[4] = (bind << 4) | 2;
            s[6..8].copy_from_slice(&shndx.to_le_bytes());
            dynsym.extend_from_slice(&s);
        }
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        let sym_off = f.len() as u64;
        f.extend_from_slice(&dynsym);
        let str_off = f.len() as u64;
        f.extend_from_slice(&dynstr);
        f.extend(std::iter::repeat_n(0u8, pad));
        let shoff = f.len() as u64;
        let shdr = |kind: u32, off: u64, size: u64, link: u32, ent: u64| {
            let mut h = vec![0u8; 64];
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&ent.to_le_bytes());
            h
        };
        f.extend(shdr(0, 0, 0, 0, 0));
        f.extend(shdr(SHT_DYNSYM, sym_off, dynsym.len() as u64, 2, 24));
        f.extend(shdr(SHT_STRTAB, str_off, dynstr.len() as u64, 0, 0));
        f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        f
    }

    fn read(bytes: &[u8]) -> Result<Library, ElfError> {
        dynamic_symbols(&mut |f| f(&mut &bytes[..]))
    }

    #[test]
    fn reads_defined_undefined_and_weak_symbols() {
        let lib = read(&build(
            &[("defined", 5, 1), ("missing", 0, 1), ("optional", 0, 2)],
            100,
        ))
        .unwrap();
        let kinds: Vec<_> = lib
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("defined", SymbolKind::Defined),
                ("missing", SymbolKind::Undefined),
                ("optional", SymbolKind::UndefinedWeak)
            ]
        );
        assert!(lib.sha256.starts_with("sha256="));
    }

    #[test]
    fn refuses_truncated_wrong_class_and_bad_tables() {
        let good = build(&[("a", 0, 1)], 10);
        for cut in [3, 40, 70, good.len() - 1] {
            assert!(read(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut class32 = good.clone();
        class32[4] = 1;
        assert_eq!(read(&class32), Err(ElfError::WrongClass(1)));
        let mut big = good.clone();
        big[5] = 2;
        assert_eq!(read(&big), Err(ElfError::WrongEndian(2)));
        let mut huge = good.clone();
        huge[0x3c..0x3e].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(matches!(read(&huge), Err(ElfError::Truncated(_))));
        let mut name = good.clone();
        name[64 + 24..64 + 28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(read(&name), Err(ElfError::Malformed(_))));
        assert_eq!(read(b"not elf at all"), Err(ElfError::NotElf));
    }

    #[test]
    fn the_layout_digest_covers_the_header_and_section_table_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.so");
        let digest = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            layout_digest(&std::fs::File::open(&path).unwrap())
        };
        let base = build(&[("a", 0, 1)], 100);
        let first = digest(&base).expect("a digest");
        // A byte between the tables and the section headers (padding): the same layout.
        let mut padded = base.clone();
        padded[64 + 24 * 2 + 8] = 7;
        assert_eq!(digest(&padded), Some(first));
        // A section header's size, or the header's flags: another layout.
        let mut table = base.clone();
        let shoff = le64(&base, 0x28) as usize;
        table[shoff + 64 + 0x20] ^= 1;
        assert_ne!(digest(&table), Some(first));
        let mut head = base.clone();
        head[0x30] ^= 1;
        assert_ne!(digest(&head), Some(first));
        assert_eq!(digest(b"not elf"), None);
        assert_eq!(digest(&base[..base.len() - 1]), None, "table past the end");
    }

    #[test]
    fn tables_past_the_prefix_take_a_second_pass() {
        // Put the tables after PREFIX_BYTES of padding: move them by rebuilding at the end.
        let base = build(&[("late", 0, 1)], 0);
        let mut f = base[..64].to_vec();
        f.extend(std::iter::repeat_n(0u8, PREFIX_BYTES as usize));
        let moved = f.len() as u64 - 64;
        f.extend_from_slice(&base[64..]);
        let shoff = le64(&f, 0x28) + moved;
        f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        for i in 1..3u64 {
            let at = (shoff + i * 64 + 0x18) as usize;
            let off = le64(&f, at) + moved;
            f[at..at + 8].copy_from_slice(&off.to_le_bytes());
        }
        let mut passes = 0;
        let lib = dynamic_symbols(&mut |g| {
            passes += 1;
            g(&mut &f[..])
        })
        .unwrap();
        assert_eq!(passes, 2);
        assert_eq!(lib.symbols[0].name, "late");
        assert_eq!(lib.symbols[0].kind, SymbolKind::Undefined);
    }
}
