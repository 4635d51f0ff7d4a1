//! A zip member's raw deflate stream (RFC 1951) inflated as a stream, with the checks the zip
//! reader makes: the CRC-32 of everything inflated against the central directory's, checked
//! when the stream ends, and no more bytes than declared.
//!
//! pinprobe's own decoder, table-driven in the manner of libdeflate: a 64-bit bit buffer
//! topped up a word at a time, one table lookup per code (two for a code longer than the root
//! table, [`table`]), up to three literals per top-up, the next code looked up while a match
//! is copied, and matches copied a word at a time ([`codes`]). On vLLM's 153 MB FA3 library it
//! inflates and CRC-checks in about 0.87x the time fdeflate took with the same checks, and
//! faster than zlib-rs (`benches/results/artifact-speed.md`, fourth round).
//!
//! It inflates into one buffer that holds the last 32 KiB made before each step (as far back
//! as a match reaches) and stops between two codes when that buffer is nearly full, so that
//! neither a code nor a match is split across steps. Which streams it refuses follows zlib
//! (judged against zlib-rs in the tests and the `inflate` fuzz target): a reserved block type,
//! a stored block whose length and its complement disagree, over-subscribed or incomplete code
//! lengths ([`table::build_table`]), a missing end-of-block code, a length repeat with nothing
//! to repeat or past the lengths, more than 286 length or 30 distance codes, an invalid code, a
//! distance before the start of the output, and a stream that ends early. Bytes after the end
//! of the stream are not read as part of it.

mod block;
mod codes;
mod table;
#[cfg(test)]
mod tests;

use std::io::{self, Read};

/// How far back a deflate back-reference reaches.
const WINDOW: usize = 32 * 1024;
/// What one step inflates at most.
const STEP: usize = 1 << 20;
/// The longest match.
const MAX_MATCH: usize = 258;
/// Room one round of the decoding loop needs after its start: two literals and the longest
/// match, which [`codes::copy_match`] copies in words that may write 15 bytes past it.
const ROUND_ROOM: usize = 2 + MAX_MATCH + 16;
/// The output buffer: the window, a step, a round's room.
const OUT: usize = WINDOW + STEP + ROUND_ROOM;
/// Compressed bytes read at a time.
const INPUT: usize = 256 * 1024;
/// Input left at hand below which more is read.
const LOW_INPUT: usize = 1024;
/// Zero bytes readable after the member's last byte once it is all read: a top-up reads 8
/// bytes; a stream that reaches further into them than a real end allows was cut short.
const PAD: usize = 64;
/// Input one round needs at hand: three top-ups, each reading 8 bytes and taking up to 7.
const ROUND_INPUT: usize = 8 + 3 * 7;

/// Where the stream is between steps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Block {
    /// Next: a block header.
    Header,
    /// Inside a stored block, this many bytes left to copy.
    Stored(usize),
    /// Inside a block coded with the tables at hand.
    Coded,
    /// The last block ended.
    Done,
}

pub struct Inflater<R> {
    raw: R,
    /// Compressed bytes; `input[pos..end]` not yet taken. Once the member is all read,
    /// [`PAD`] zero bytes follow `end`.
    input: Box<[u8; INPUT + PAD]>,
    pos: usize,
    end: usize,
    input_ended: bool,
    /// Bits not yet taken, least significant first; above the `bits` counted, the next input
    /// bits or zeros.
    bitbuf: u64,
    bits: u32,
    block: Block,
    last_block: bool,
    litlen: Box<[u32; table::LITLEN_ENOUGH]>,
    dist: Box<[u32; table::DIST_ENOUGH]>,
    /// The last [`WINDOW`] bytes made before this step, then what this step made:
    /// `out[served..made]` not yet handed out.
    out: Box<[u8; OUT]>,
    served: usize,
    made: usize,
    crc: crc32fast::Hasher,
    expected_crc: u32,
    size_limit: u64,
    inflated: u64,
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

fn ends_early() -> io::Error {
    invalid("the deflate stream ends early")
}

/// A zeroed fixed-size buffer on the heap.
fn zeroed<T: Copy + Default, const N: usize>() -> Box<[T; N]> {
    let buf: Box<[T]> = vec![T::default(); N].into_boxed_slice();
    match buf.try_into() {
        Ok(array) => array,
        // The slice has N elements: the conversion cannot fail.
        Err(_) => unreachable!("a boxed slice of N elements is an array of N"),
    }
}

impl<R: Read> Inflater<R> {
    /// Inflate the raw deflate stream `raw` (a member's compressed bytes), which must make at
    /// most `size_limit` bytes whose CRC-32 is `expected_crc`.
    pub fn new(raw: R, expected_crc: u32, size_limit: u64) -> Self {
        Inflater {
            raw,
            input: zeroed(),
            pos: 0,
            end: 0,
            input_ended: false,
            bitbuf: 0,
            bits: 0,
            block: Block::Header,
            last_block: false,
            litlen: zeroed(),
            dist: zeroed(),
            out: zeroed(),
            served: 0,
            made: 0,
            crc: crc32fast::Hasher::new(),
            expected_crc,
            size_limit,
            inflated: 0,
        }
    }

    /// Keep the bytes not yet taken (and the 8 before them, the whole bytes the bit buffer may
    /// hold, which a stored block gives back) and read more after them, until the buffer is
    /// full or the member ends; then [`PAD`] zero bytes follow its last byte.
    fn read_input(&mut self) -> io::Result<()> {
        let from = self.pos.saturating_sub(8).min(self.end);
        self.input.copy_within(from..self.end, 0);
        self.end -= from;
        self.pos -= from;
        while self.end < INPUT && !self.input_ended {
            match self.raw.read(&mut self.input[self.end..INPUT]) {
                Ok(0) => {
                    self.input_ended = true;
                    self.input[self.end..self.end + PAD].fill(0);
                }
                Ok(n) => self.end += n.min(INPUT - self.end),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Make sure a round's input is at hand: read more when it runs low. Past the member's
    /// end, further into the zero padding than a real stream can reach, the stream was cut.
    fn ensure_input(&mut self) -> io::Result<()> {
        if self.end.saturating_sub(self.pos) < LOW_INPUT && !self.input_ended {
            self.read_input()?;
        }
        if self.input_ended && self.pos + ROUND_INPUT >= self.end + PAD {
            return Err(ends_early());
        }
        Ok(())
    }

    /// Top the bit buffer up to at least 56 bits (after [`Self::ensure_input`]).
    fn top_up(&mut self) {
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.input[self.pos..self.pos + 8]);
        self.bitbuf |= u64::from_le_bytes(word) << self.bits;
        self.pos += ((63 - self.bits) >> 3) as usize;
        self.bits |= 56;
    }

    /// Take `n` bits (at most 32), reading input as needed.
    fn take(&mut self, n: u32) -> io::Result<u32> {
        if self.bits < n {
            self.ensure_input()?;
            self.top_up();
        }
        let value = (self.bitbuf & ((1u64 << n) - 1)) as u32;
        self.bitbuf >>= n;
        self.bits -= n;
        Ok(value)
    }

    /// Inflate one step into `out` after the window; `false` when the stream has ended.
    fn step(&mut self) -> io::Result<bool> {
        if self.block == Block::Done {
            return Ok(false);
        }
        if self.made >= OUT - ROUND_ROOM {
            self.out.copy_within(self.made - WINDOW..self.made, 0);
            self.made = WINDOW;
            self.served = WINDOW;
        }
        let started = self.made;
        while self.made == started && self.block != Block::Done {
            match self.block {
                Block::Header => self.block_header()?,
                Block::Stored(left) => self.stored(left)?,
                Block::Coded => self.coded()?,
                Block::Done => {}
            }
        }
        // Every bit taken lies before the member's end, not in the padding after it.
        if self.block == Block::Done && self.pos - (self.bits >> 3) as usize > self.end {
            return Err(ends_early());
        }
        Ok(true)
    }

    /// The next bytes inflated, at most `max`; empty at the end of the stream, once the CRC-32
    /// of all of them matched.
    fn chunk(&mut self, max: usize) -> io::Result<&[u8]> {
        while self.served == self.made {
            if !self.step()? {
                // The zip reader's check, in its words.
                if self.crc.clone().finalize() != self.expected_crc {
                    return Err(invalid("Invalid checksum"));
                }
                return Ok(&[]);
            }
        }
        let n = max.min(self.made - self.served);
        self.inflated += n as u64;
        if self.inflated > self.size_limit {
            return Err(invalid(
                "File is larger than its declared uncompressed size",
            ));
        }
        let chunk = &self.out[self.served..self.served + n];
        self.crc.update(chunk);
        self.served += n;
        Ok(chunk)
    }
}

impl<R: Read> Read for Inflater<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let chunk = self.chunk(buf.len())?;
        let n = chunk.len();
        buf[..n].copy_from_slice(chunk);
        Ok(n)
    }
}
