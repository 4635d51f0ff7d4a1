//! The inflater judged against zlib-rs (flate2), the zip reader's inflater, on streams flate2
//! writes and on streams built or damaged here.
use super::*;
use std::io::Write;

fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).expect("write");
    e.finish().expect("finish")
}

/// A small xorshift generator: the same cases on every run.
struct Cases(u64);

impl Cases {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Bytes with long and short repeats at every distance up to the window, and runs.
fn sample(len: usize) -> Vec<u8> {
    let mut cases = Cases(0x2545_f491);
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let state = cases.next();
        match state % 4 {
            0 if out.len() > WINDOW => {
                let back = (state >> 8) as usize % WINDOW + 1;
                let n = (state >> 32) as usize % 300;
                for _ in 0..n {
                    out.push(out[out.len() - back]);
                }
            }
            1 => out.extend(std::iter::repeat_n(
                (state >> 8) as u8,
                (state >> 16) as usize % 64,
            )),
            _ => out.push((state >> 24) as u8 % 16 + b'a'),
        }
    }
    out.truncate(len);
    out
}

fn inflate(raw: &[u8], crc: u32, limit: u64, read_size: usize) -> io::Result<Vec<u8>> {
    let mut inflater = Inflater::new(raw, crc, limit);
    let mut out = Vec::new();
    let mut buf = vec![0u8; read_size];
    loop {
        let n = inflater.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn inflates_what_zlib_rs_inflates_at_every_level_and_read_size() {
    for len in [0, 1, 1000, WINDOW + 7, 3 * STEP + 12_345] {
        let data = sample(len);
        let crc = crc32fast::hash(&data);
        for level in [0, 1, 6, 9] {
            let raw = deflate(&data, level);
            let mut expected = Vec::new();
            flate2::read::DeflateDecoder::new(&raw[..])
                .read_to_end(&mut expected)
                .expect("zlib-rs inflates");
            assert_eq!(expected, data);
            for read_size in [1 << 20, 4096, 7] {
                let got = inflate(&raw, crc, len as u64, read_size).expect("inflates");
                assert!(got == data, "len {len} level {level} reads of {read_size}");
            }
            // Bytes after the stream's end are not read as part of it.
            let mut trailing = raw.clone();
            trailing.extend_from_slice(b"after the end");
            assert!(inflate(&trailing, crc, len as u64, 1 << 20).expect("inflates") == data);
        }
    }
}

#[test]
fn refuses_a_wrong_crc_an_overlong_member_and_a_cut_or_corrupt_stream() {
    let data = sample(200_000);
    let crc = crc32fast::hash(&data);
    let raw = deflate(&data, 6);
    let err = inflate(&raw, crc ^ 1, 200_000, 1 << 16).expect_err("wrong CRC");
    assert_eq!(err.to_string(), "Invalid checksum");
    let err = inflate(&raw, crc, 199_999, 1 << 16).expect_err("over the declared size");
    assert!(err.to_string().contains("larger than"), "{err}");
    for cut in [0, 1, raw.len() / 2, raw.len() - 1] {
        assert!(
            inflate(&raw[..cut], crc, 200_000, 1 << 16).is_err(),
            "cut at {cut}"
        );
    }
    // A block type 3 (reserved) at the start.
    assert!(inflate(&[0x07, 0, 0, 0], 0, 10, 16).is_err());
}

/// What zlib-rs makes of `raw`: the bytes, or that it refuses the stream (an error, or a
/// stream that ends before its last block). Bytes after the stream's end are not read.
fn zlib_rs(raw: &[u8]) -> Option<Vec<u8>> {
    let mut d = flate2::Decompress::new(false);
    let mut out = Vec::with_capacity(1 << 16);
    loop {
        if out.len() == out.capacity() {
            out.reserve(1 << 16);
        }
        let taken = d.total_in() as usize;
        let made = out.len();
        let status = d
            .decompress_vec(&raw[taken..], &mut out, flate2::FlushDecompress::Finish)
            .ok()?;
        if status == flate2::Status::StreamEnd {
            return Some(out);
        }
        if d.total_in() as usize == taken && out.len() == made {
            return None;
        }
    }
}

/// What the inflater makes of `raw`, its CRC not checked (it is not known): the bytes, or
/// `None` when it refuses the stream.
fn ours(raw: &[u8]) -> Option<Vec<u8>> {
    let mut inflater = Inflater::new(raw, 0, u64::MAX);
    let mut out = Vec::new();
    loop {
        match inflater.chunk(usize::MAX) {
            Ok([]) => return Some(out),
            Ok(chunk) => out.extend_from_slice(chunk),
            Err(e) if e.to_string() == "Invalid checksum" => return Some(out),
            Err(_) => return None,
        }
    }
}

/// Deflate streams written by flate2 (every level) from generated data, then damaged (bits
/// flipped, bytes replaced, cut short, junk after the end) in two of three cases: the
/// inflater makes what zlib-rs makes, and refuses what it refuses.
#[test]
fn agrees_with_zlib_rs_on_written_and_damaged_streams() {
    let mut cases = Cases(0x9e37_79b9_7f4a_7c15);
    let (mut inflated, mut refused) = (0, 0);
    for case in 0..600 {
        let len = cases.below(40_000) as usize;
        let alphabet = 1 + cases.below(255);
        let mut data = Vec::with_capacity(len);
        while data.len() < len {
            match cases.below(4) {
                0 if data.len() > 8 => {
                    // A repeat at any distance, the short ones (1..8) most of all.
                    let reach = if cases.below(2) == 0 { 8 } else { WINDOW };
                    let back = 1 + cases.below(data.len().min(reach) as u64) as usize;
                    for _ in 0..cases.below(300) {
                        data.push(data[data.len() - back]);
                    }
                }
                1 => data.extend(std::iter::repeat_n(
                    cases.next() as u8,
                    cases.below(100) as usize,
                )),
                _ => data.push(cases.below(alphabet) as u8),
            }
        }
        data.truncate(len);
        let mut raw = deflate(&data, cases.below(10) as u32);
        if cases.below(3) != 0 {
            for _ in 0..1 + cases.below(3) {
                if raw.is_empty() {
                    break;
                }
                let at = cases.below(raw.len() as u64) as usize;
                match cases.below(4) {
                    0 => raw[at] ^= 1 << cases.below(8),
                    1 => raw[at] = cases.next() as u8,
                    2 => raw.truncate(at),
                    _ => raw.extend_from_slice(b"junk"),
                }
            }
        }
        let expected = zlib_rs(&raw);
        assert!(ours(&raw) == expected, "case {case}: {} bytes", raw.len());
        match expected {
            Some(_) => inflated += 1,
            None => refused += 1,
        }
    }
    // Both kinds of outcome were judged.
    assert!(inflated > 200 && refused > 100, "{inflated} {refused}");
}

/// Bits written least significant first, as deflate packs them.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    used: u32,
}

impl Bits {
    fn put(&mut self, value: u32, n: u32) {
        for i in 0..n {
            if self.used == 0 {
                self.bytes.push(0);
            }
            let last = self.bytes.len() - 1;
            self.bytes[last] |= (((value >> i) & 1) as u8) << self.used;
            self.used = (self.used + 1) % 8;
        }
    }
    /// A Huffman code: its bits from the most significant.
    fn code(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.put(code >> i, 1);
        }
    }
}

/// The canonical codes of `lens` (RFC 1951 section 3.2.2), `None` for unused symbols.
fn canonical(lens: &[u8]) -> Vec<Option<(u32, u32)>> {
    let mut count = [0u32; 16];
    for &l in lens {
        count[usize::from(l)] += 1;
    }
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for len in 1..16 {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    lens.iter()
        .map(|&l| {
            (l > 0).then(|| {
                let c = next[usize::from(l)];
                next[usize::from(l)] += 1;
                (c, u32::from(l))
            })
        })
        .collect()
}

/// Code lengths of a complete code over `n` symbols (a random binary tree, no deeper than 15),
/// spread over `symbols` of them at random; the others unused.
fn complete_lengths(cases: &mut Cases, n: usize, symbols: usize) -> Vec<u8> {
    let mut depths = vec![0u8];
    while depths.len() < n {
        let splittable: Vec<usize> = (0..depths.len()).filter(|&i| depths[i] < 15).collect();
        let at = splittable[cases.below(splittable.len() as u64) as usize];
        depths[at] += 1;
        depths.push(depths[at]);
    }
    let mut lens = vec![0u8; symbols];
    let mut free: Vec<usize> = (0..symbols).collect();
    for depth in depths {
        let i = free.swap_remove(cases.below(free.len() as u64) as usize);
        lens[i] = depth.max(1);
    }
    lens
}

/// A dynamic block with code lengths `litlen` and `dist` (each written as itself by a fixed
/// complete code length code; `precode` overrides that code's 19 lengths), then `codes`:
/// literal/length symbols, and distance symbols after lengths (extra bits as zeros).
fn dynamic_block(
    out: &mut Bits,
    last: bool,
    litlen: &[u8],
    dist: &[u8],
    precode: Option<[u8; 19]>,
    codes: &[u32],
) {
    const ORDER: [usize; 19] = [
        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
    ];
    // 13 symbols of 4 bits and 6 of 5: a complete code.
    let precode = precode.unwrap_or(std::array::from_fn(|s| if s < 13 { 4 } else { 5 }));
    out.put(u32::from(last), 1);
    out.put(2, 2);
    out.put(litlen.len() as u32 - 257, 5);
    out.put(dist.len() as u32 - 1, 5);
    out.put(19 - 4, 4);
    for &s in &ORDER {
        out.put(u32::from(precode[s]), 3);
    }
    let pre = canonical(&precode);
    for &len in litlen.iter().chain(dist) {
        let (c, l) = pre[usize::from(len)].unwrap_or((0, 1));
        out.code(c, l);
    }
    let (lit, dis) = (canonical(litlen), canonical(dist));
    let mut after_length = false;
    for &symbol in codes {
        let table = if after_length { &dis } else { &lit };
        let (c, l) = table
            .get(symbol as usize)
            .copied()
            .flatten()
            .unwrap_or((0, 1));
        out.code(c, l);
        let extra = if after_length {
            [
                0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11,
                12, 12, 13, 13,
            ]
            .get(symbol as usize)
            .copied()
            .unwrap_or(0)
        } else {
            match symbol {
                265..=268 => 1,
                269..=272 => 2,
                273..=276 => 3,
                277..=280 => 4,
                281..=284 => 5,
                _ => 0,
            }
        };
        out.put(0, extra);
        after_length = !after_length && symbol > 256;
    }
}

/// Dynamic blocks with generated codes (complete, or with one length changed: incomplete or
/// over-subscribed) and generated symbols, some with no distance codes or a single one, some
/// with a repeat before any length: the inflater accepts and refuses what zlib-rs does.
#[test]
fn agrees_with_zlib_rs_on_generated_dynamic_blocks() {
    let mut cases = Cases(0x2545_f491_4f6c_dd1d);
    let (mut inflated, mut refused) = (0, 0);
    for case in 0..1500 {
        let nlen = 257 + cases.below(32) as usize;
        let ndist = 1 + cases.below(32) as usize;
        let n = 2 + cases.below(nlen as u64 - 1) as usize;
        let mut litlen = complete_lengths(&mut cases, n, nlen);
        if litlen[256] == 0 && cases.below(8) != 0 {
            // Usually an end-of-block code: swap one in.
            let used = (0..nlen).find(|&i| litlen[i] > 0).unwrap_or(0);
            litlen.swap(used, 256);
        }
        let mut dist = match cases.below(6) {
            0 => vec![0u8; ndist],
            1 => {
                let mut d = vec![0u8; ndist];
                d[cases.below(ndist as u64) as usize] = 1;
                d
            }
            _ => {
                let n = 2 + cases.below(ndist.max(2) as u64 - 1) as usize;
                complete_lengths(&mut cases, n, ndist.max(2))
            }
        };
        dist.truncate(ndist);
        if cases.below(5) == 0 {
            // Incomplete or over-subscribed.
            let table = if cases.below(2) == 0 {
                &mut litlen
            } else {
                &mut dist
            };
            let i = cases.below(table.len() as u64) as usize;
            table[i] = (table[i] + 1 + cases.below(2) as u8) % 16;
        }
        let used_lit: Vec<u32> = (0..nlen as u32)
            .filter(|&s| litlen[s as usize] > 0)
            .collect();
        let used_dist: Vec<u32> = (0..ndist as u32)
            .filter(|&s| dist[s as usize] > 0)
            .collect();
        let mut codes = Vec::new();
        for _ in 0..cases.below(400) {
            if used_lit.is_empty() {
                break;
            }
            let s = used_lit[cases.below(used_lit.len() as u64) as usize];
            if s == 256 {
                continue;
            }
            codes.push(s);
            if s > 256 {
                codes.push(match used_dist.is_empty() {
                    true => 0,
                    false => used_dist[cases.below(used_dist.len() as u64) as usize],
                });
            }
        }
        codes.push(256);
        let mut bits = Bits::default();
        // A few literals first (in a fixed block) give most matches something to reach.
        if cases.below(2) == 0 {
            bits.put(0, 1);
            bits.put(1, 2);
            for _ in 0..40 {
                bits.code(0x30 + cases.below(0x90) as u32, 8);
            }
            bits.code(0, 7);
        }
        let precode = (cases.below(10) == 0).then(|| {
            let mut p: [u8; 19] = std::array::from_fn(|s| if s < 13 { 4 } else { 5 });
            p[cases.below(19) as usize] = cases.below(8) as u8;
            p
        });
        dynamic_block(&mut bits, true, &litlen, &dist, precode, &codes);
        let expected = zlib_rs(&bits.bytes);
        assert!(
            ours(&bits.bytes) == expected,
            "case {case}: litlen {litlen:?} dist {dist:?} codes {codes:?}"
        );
        match expected {
            Some(_) => inflated += 1,
            None => refused += 1,
        }
    }
    assert!(inflated > 300 && refused > 300, "{inflated} {refused}");
}

/// Streams built to reach each refusal (and the acceptances next to them), judged against
/// zlib-rs and against what deflate says of them.
#[test]
fn refuses_and_accepts_the_edge_cases_zlib_does() {
    let complete_dist: Vec<u8> = vec![1, 1];
    let mut lit: Vec<u8> = vec![0; 286];
    lit[b'a' as usize] = 1;
    lit[256] = 2;
    lit[257] = 2;
    let check = |name: &str, bytes: &[u8], accepted: bool| {
        let expected = zlib_rs(bytes);
        assert_eq!(expected.is_some(), accepted, "{name}: zlib-rs");
        assert!(ours(bytes) == expected, "{name}");
    };
    let block = |litlen: &[u8], dist: &[u8], codes: &[u32]| {
        let mut b = Bits::default();
        dynamic_block(&mut b, true, litlen, dist, None, codes);
        b.bytes
    };
    check(
        "literal then a match",
        &block(&lit, &complete_dist, &[97, 257, 0, 256]),
        true,
    );
    check(
        "no distance codes, literals only",
        &block(&lit, &[0], &[97, 97, 256]),
        true,
    );
    check(
        "no distance codes, a length",
        &block(&lit, &[0], &[97, 257, 0, 256]),
        false,
    );
    check(
        "a single one-bit distance code",
        &block(&lit, &[1], &[97, 257, 0, 256]),
        true,
    );
    let mut two = vec![0u8; 2];
    two[1] = 1;
    check(
        "the unused half of a one-bit distance code",
        &block(&lit, &two, &[97, 257, 0, 256]),
        false,
    );
    check(
        "a match before the output starts",
        &block(&lit, &complete_dist, &[257, 0, 256]),
        false,
    );
    let mut over = lit.clone();
    over[b'b' as usize] = 1;
    check(
        "over-subscribed literal/length code",
        &block(&over, &complete_dist, &[256]),
        false,
    );
    let mut incomplete = lit.clone();
    incomplete[257] = 3;
    check(
        "incomplete literal/length code",
        &block(&incomplete, &complete_dist, &[256]),
        false,
    );
    let mut no_end = vec![0u8; 286];
    no_end[b'a' as usize] = 1;
    no_end[b'b' as usize] = 1;
    check(
        "no end-of-block code",
        &block(&no_end, &complete_dist, &[97]),
        false,
    );
    let mut only_end = vec![0u8; 257];
    only_end[256] = 1;
    check(
        "a single one-bit end-of-block code",
        &block(&only_end, &[0], &[256]),
        true,
    );
    // Too many length codes (HLIT 30 and 31 name 287 and 288).
    let mut many = lit.clone();
    many.extend([0, 0]);
    check(
        "288 length codes",
        &block(&many, &complete_dist, &[256]),
        false,
    );
    // A repeat (16) first in the code lengths.
    let mut b = Bits::default();
    b.put(1, 1);
    b.put(2, 2);
    b.put(0, 5);
    b.put(0, 5);
    b.put(15, 4);
    let precode: [u8; 19] = std::array::from_fn(|s| if s < 13 { 4 } else { 5 });
    for &s in &[
        16usize, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
    ] {
        b.put(u32::from(precode[s]), 3);
    }
    let (c, l) = canonical(&precode)[16].unwrap_or_default();
    b.code(c, l);
    b.put(0, 2);
    b.put(0, 16);
    check("a repeat with nothing before it", &b.bytes, false);
    // Fixed blocks: length symbol 286 and distance symbol 30 are invalid.
    let fixed = |codes: &[(u32, u32)]| {
        let mut b = Bits::default();
        b.put(1, 1);
        b.put(1, 2);
        for &(c, l) in codes {
            b.code(c, l);
        }
        b.code(0, 7);
        b.bytes
    };
    // 'a' is 0x30 + 97 (8 bits); 257 is 0b0000001 (7 bits); 286 is 0xC0 + 6 (8 bits).
    check(
        "a fixed block",
        &fixed(&[(0x30 + 97, 8), (1, 7), (0, 5)]),
        true,
    );
    check(
        "fixed length symbol 286",
        &fixed(&[(0x30 + 97, 8), (0xC6, 8), (0, 5)]),
        false,
    );
    check(
        "fixed distance symbol 30",
        &fixed(&[(0x30 + 97, 8), (1, 7), (30, 5)]),
        false,
    );
    // Stored blocks: a length and its complement that disagree; one cut short; one longer
    // than a step, split over several (its bytes copied as they are).
    check(
        "stored, lengths disagree",
        &[1, 3, 0, 0xFC, 0xFE, b'a', b'b', b'c'],
        false,
    );
    check(
        "stored, cut short",
        &[1, 3, 0, 0xFC, 0xFF, b'a', b'b'],
        false,
    );
    check(
        "stored, whole",
        &[1, 3, 0, 0xFC, 0xFF, b'a', b'b', b'c'],
        true,
    );
    let data = sample(3 * STEP / 2);
    let mut stored = Vec::new();
    for (i, piece) in data.chunks(65_535).enumerate() {
        let last = (i + 1) * 65_535 >= data.len();
        stored.push(u8::from(last));
        stored.extend_from_slice(&(piece.len() as u16).to_le_bytes());
        stored.extend_from_slice(&(!(piece.len() as u16)).to_le_bytes());
        stored.extend_from_slice(piece);
    }
    check("stored blocks over several steps", &stored, true);
    assert!(ours(&stored).is_some_and(|out| out == data));
    check("reserved block type", &[0x07, 0, 0, 0], false);
    check("nothing", &[], false);
}

/// A reader of `bytes` that is interrupted before every other read, and fails for good after
/// `fail_after` bytes when that is set.
struct Flaky<'a> {
    bytes: &'a [u8],
    interrupt: bool,
    fail_after: Option<usize>,
    given: usize,
}

impl Read for Flaky<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "signal"));
        }
        if self.fail_after.is_some_and(|at| self.given >= at) {
            return Err(io::Error::other("the disk went away"));
        }
        let n = buf.len().min(self.bytes.len()).min(100_000);
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.given += n;
        Ok(n)
    }
}

/// An interrupted read is tried again; a failed read fails the stream, with its error.
#[test]
fn an_interrupted_read_is_retried_and_a_failed_one_is_the_error() {
    let data = sample(600_000);
    let raw = deflate(&data, 6);
    let read_all = |fail_after| {
        let flaky = Flaky {
            bytes: &raw,
            interrupt: false,
            fail_after,
            given: 0,
        };
        let mut inflater = Inflater::new(flaky, crc32fast::hash(&data), data.len() as u64);
        // Not read_to_end, which retries an interrupted read itself.
        let (mut out, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
        loop {
            match inflater.read(&mut buf)? {
                0 => return Ok::<_, io::Error>(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    };
    assert!(read_all(None).is_ok_and(|out| out == data));
    match read_all(Some(raw.len() / 2)) {
        Ok(_) => panic!("a stream whose reader failed halfway inflated"),
        Err(err) => assert_eq!(err.to_string(), "the disk went away"),
    }
}

/// Dense short matches compressed fast: many input buffers (256 KiB each) end in the middle
/// of a match's codes, where a round must not read past the bytes at hand.
#[test]
fn codes_that_straddle_input_buffers_inflate_as_zlib_rs_inflates_them() {
    let mut cases = Cases(0x51f1_5eed_d00d_f00d);
    let mut data: Vec<u8> = (0..64).map(|_| cases.next() as u8).collect();
    while data.len() < 6 << 20 {
        if cases.below(3) == 0 {
            data.push(cases.next() as u8);
        } else {
            let back = 8 + cases.below(400) as usize;
            for _ in 0..3 + cases.below(8) {
                data.push(data[data.len() - back.min(data.len())]);
            }
        }
    }
    let raw = deflate(&data, 1);
    assert!(raw.len() > 8 * INPUT, "{} compressed bytes", raw.len());
    let got = inflate(&raw, crc32fast::hash(&data), data.len() as u64, 1 << 20).expect("inflates");
    assert!(got == data);
}
