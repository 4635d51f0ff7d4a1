//! A zip member's raw deflate stream inflated as a stream by fdeflate (about 1.2x as fast as
//! zlib-rs on vLLM's 153 MB FA3 library, `benches/results/artifact-speed.md`), with the checks
//! the zip reader makes: the CRC-32 of everything inflated against the central directory's,
//! checked when the stream ends, and no more bytes than declared.
//!
//! fdeflate reads zlib streams: a two-byte zlib header is fed before the member's bytes and
//! four bytes after them stand for the Adler-32 checksum, which is not checked (the CRC-32 is).
//! Its back-references reach into the bytes it made before, so each step inflates into one
//! buffer holding the last 32 KiB made before it.

use std::io::{self, Read};

/// How far back a deflate back-reference reaches.
const WINDOW: usize = 32 * 1024;
/// What one step inflates at most.
const STEP: usize = 1 << 20;
/// Compressed bytes read at a time.
const INPUT: usize = 256 * 1024;
/// A zlib header (deflate, 32 KiB window, no dictionary) fdeflate reads before the stream.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];

pub struct Inflater<R> {
    raw: R,
    decoder: fdeflate::Decompressor,
    /// Compressed bytes, `input[start..end]` not yet taken by the decoder.
    input: Vec<u8>,
    start: usize,
    end: usize,
    /// The member's bytes are all read and the stand-in checksum follows them in `input`.
    input_ended: bool,
    /// The last [`WINDOW`] bytes made before this step, then what this step made.
    out: Vec<u8>,
    served: usize,
    made: usize,
    crc: crc32fast::Hasher,
    expected_crc: u32,
    size_limit: u64,
    inflated: u64,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl<R: Read> Inflater<R> {
    /// Inflate the raw deflate stream `raw` (a member's compressed bytes), which must make at
    /// most `size_limit` bytes whose CRC-32 is `expected_crc`.
    pub fn new(raw: R, expected_crc: u32, size_limit: u64) -> Self {
        let mut input = vec![0u8; INPUT];
        input[..ZLIB_HEADER.len()].copy_from_slice(&ZLIB_HEADER);
        let mut decoder = fdeflate::Decompressor::new();
        decoder.ignore_adler32();
        Inflater {
            raw,
            decoder,
            input,
            start: 0,
            end: ZLIB_HEADER.len(),
            input_ended: false,
            out: vec![0u8; WINDOW + STEP],
            served: 0,
            made: 0,
            crc: crc32fast::Hasher::new(),
            expected_crc,
            size_limit,
            inflated: 0,
        }
    }

    /// Top the compressed bytes up (keeping those not yet taken), and after the last of them
    /// put the four bytes that stand for the zlib checksum.
    fn refill(&mut self) -> io::Result<()> {
        self.input.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        while self.end < self.input.len() - 4 && !self.input_ended {
            match self.raw.read(&mut self.input[self.end..]) {
                Ok(0) => {
                    self.input[self.end..self.end + 4].fill(0);
                    self.end += 4;
                    self.input_ended = true;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Inflate one step into `out` after the window; `false` when the stream has ended.
    fn step(&mut self) -> io::Result<bool> {
        if self.decoder.is_done() {
            return Ok(false);
        }
        if self.made == self.out.len() {
            self.out.copy_within(self.made - WINDOW..self.made, 0);
            self.made = WINDOW;
            self.served = WINDOW;
        }
        if self.end - self.start < INPUT / 2 && !self.input_ended {
            self.refill()?;
        }
        let (taken, made) = self
            .decoder
            .read(
                &self.input[self.start..self.end],
                &mut self.out,
                self.made,
                self.input_ended,
            )
            .map_err(|e| invalid(format!("corrupt deflate stream ({e:?})")))?;
        self.start += taken;
        self.made += made;
        if taken == 0 && made == 0 && !self.decoder.is_done() {
            if self.input_ended {
                return Err(invalid("the deflate stream ends early".into()));
            }
            // Not enough compressed bytes at hand for the next code: read more.
            if self.end - self.start >= self.input.len() - 4 {
                return Err(invalid("the deflate stream makes no progress".into()));
            }
            self.refill()?;
        }
        Ok(true)
    }
}

impl<R: Read> Read for Inflater<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.served == self.made {
            if !self.step()? {
                // The zip reader's check, in its words.
                if self.crc.clone().finalize() != self.expected_crc {
                    return Err(invalid("Invalid checksum".into()));
                }
                return Ok(0);
            }
        }
        let n = buf.len().min(self.made - self.served);
        let chunk = &self.out[self.served..self.served + n];
        self.inflated += n as u64;
        if self.inflated > self.size_limit {
            return Err(invalid(
                "File is larger than its declared uncompressed size".into(),
            ));
        }
        self.crc.update(chunk);
        buf[..n].copy_from_slice(chunk);
        self.served += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    /// Bytes with long and short repeats at every distance up to the window, and runs.
    fn sample(len: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_u64;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
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
}
