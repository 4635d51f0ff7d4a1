//! The decoding loop of a coded block: literals and matches until the block's end-of-block
//! code, the output buffer's room or the input at hand runs out.

use super::table::{self, END_OF_BLOCK, EXCEPTIONAL, LITERAL};
use super::{Block, INPUT, Inflater, MAX_MATCH, OUT, PAD, ROUND_INPUT, ROUND_ROOM, invalid};
use std::io::{self, Read};

impl<R: Read> Inflater<R> {
    /// Inflate codes into `out` until it is nearly full or the block ends.
    pub(super) fn coded(&mut self) -> io::Result<()> {
        let out_limit = OUT - ROUND_ROOM;
        while self.made < out_limit {
            self.ensure_input()?;
            // The input every round below may take without a check of its own.
            let in_limit = if self.input_ended {
                self.end + PAD - ROUND_INPUT
            } else {
                self.end - ROUND_INPUT
            };
            if self.rounds(out_limit, in_limit)? {
                self.block = if self.last_block {
                    Block::Done
                } else {
                    Block::Header
                };
                return Ok(());
            }
        }
        Ok(())
    }

    /// Rounds of up to three literals, or of literals and a match, while `out` has a round's
    /// room before `out_limit` and the input is before `in_limit`; `true` when the block's
    /// end-of-block code was read. Each round starts with at least 56 bits at hand: enough
    /// for three literals (15 bits each), or two and a length (15 + 5); a match tops up before
    /// its distance (15 + 13) and again before the next code, looked up while it is copied.
    fn rounds(&mut self, out_limit: usize, in_limit: usize) -> io::Result<bool> {
        let litlen: &[u32; table::LITLEN_ENOUGH] = &self.litlen;
        let dist: &[u32; table::DIST_ENOUGH] = &self.dist;
        let input: &[u8; INPUT + PAD] = &self.input;
        let out: &mut [u8; OUT] = &mut self.out;
        let mut bitbuf = self.bitbuf;
        let mut bits = self.bits;
        let mut pos = self.pos;
        let mut op = self.made;
        let mut outcome = Ok(false);
        macro_rules! top_up {
            () => {
                let mut word = [0u8; 8];
                word.copy_from_slice(&input[pos..pos + 8]);
                bitbuf |= u64::from_le_bytes(word) << bits;
                pos += ((63 - bits) >> 3) as usize;
                bits |= 56;
            };
        }
        macro_rules! take {
            ($entry:expr) => {
                let n = table::taken($entry);
                bitbuf >>= n;
                bits -= n;
            };
        }
        'round: while op < out_limit && pos < in_limit {
            top_up!();
            let mut entry = table::lookup(litlen, bitbuf, table::LITLEN_BITS);
            loop {
                if entry & LITERAL != 0 {
                    take!(entry);
                    out[op] = table::symbol(entry);
                    op += 1;
                    entry = table::lookup(litlen, bitbuf, table::LITLEN_BITS);
                    if entry & LITERAL != 0 {
                        take!(entry);
                        out[op] = table::symbol(entry);
                        op += 1;
                        entry = table::lookup(litlen, bitbuf, table::LITLEN_BITS);
                        if entry & LITERAL != 0 {
                            take!(entry);
                            out[op] = table::symbol(entry);
                            op += 1;
                            continue 'round;
                        }
                    }
                }
                if entry & EXCEPTIONAL != 0 {
                    outcome = if entry & END_OF_BLOCK == END_OF_BLOCK {
                        take!(entry);
                        Ok(true)
                    } else {
                        Err("invalid literal/length code")
                    };
                    break 'round;
                }
                let len = table::value(entry, bitbuf);
                take!(entry);
                top_up!();
                let entry_dist = table::lookup(dist, bitbuf, table::DIST_BITS);
                if entry_dist & EXCEPTIONAL != 0 {
                    outcome = Err("invalid distance code");
                    break 'round;
                }
                let distance = table::value(entry_dist, bitbuf);
                take!(entry_dist);
                // The next code's entry, looked up while the match is copied.
                top_up!();
                entry = table::lookup(litlen, bitbuf, table::LITLEN_BITS);
                if !copy_match(out, op, distance, len) {
                    outcome = Err("invalid distance too far back");
                    break 'round;
                }
                op += len;
                if op >= out_limit || pos >= in_limit {
                    break 'round;
                }
            }
        }
        self.bitbuf = bitbuf;
        self.bits = bits;
        self.pos = pos;
        self.made = op;
        outcome.map_err(invalid)
    }
}

/// Copy a match: the `len` bytes that start `distance` bytes before `op` in `out`, to `op`; a
/// match longer than its distance repeats itself. It may write up to 15 bytes past the match
/// (what comes next overwrites them). `false`, and nothing copied, unless the match starts in
/// `out` and has [`MAX_MATCH`] and 16 bytes of room after `op`.
#[inline(always)]
fn copy_match(out: &mut [u8], op: usize, distance: usize, len: usize) -> bool {
    let room = out.len().checked_sub(op);
    if distance == 0 || distance > op || len > MAX_MATCH || room.is_none_or(|r| r < MAX_MATCH + 16)
    {
        return false;
    }
    let base = out.as_mut_ptr();
    // SAFETY: every access lies in `out`: the reads start at `op - distance` (checked: not
    // before 0) and the writes at `op`, and neither reaches `op + len + 16 <= op + MAX_MATCH +
    // 16 <= out.len()` (checked above): the first two words write `op..op + 16`, the loops
    // stop at the first word starting at or past `op + len`. Reads never pass the writes they
    // feed. With `distance >= 8` each 8-byte read ends at or before the start of its write
    // (`from + 8 <= to`), so it reads bytes already written, as a repeating match requires;
    // shorter distances repeat one byte, or go byte by byte.
    unsafe {
        let mut from = base.add(op - distance);
        let mut to = base.add(op);
        let end = to.add(len);
        if distance >= 8 {
            to.cast::<u64>()
                .write_unaligned(from.cast::<u64>().read_unaligned());
            to.add(8)
                .cast::<u64>()
                .write_unaligned(from.add(8).cast::<u64>().read_unaligned());
            from = from.add(16);
            to = to.add(16);
            while to < end {
                to.cast::<u64>()
                    .write_unaligned(from.cast::<u64>().read_unaligned());
                from = from.add(8);
                to = to.add(8);
            }
        } else if distance == 1 {
            let word = u64::from(*from) * 0x0101_0101_0101_0101;
            to.cast::<u64>().write_unaligned(word);
            to.add(8).cast::<u64>().write_unaligned(word);
            to = to.add(16);
            while to < end {
                to.cast::<u64>().write_unaligned(word);
                to = to.add(8);
            }
        } else {
            while to < end {
                *to = *from;
                to = to.add(1);
                from = from.add(1);
            }
        }
    }
    true
}
