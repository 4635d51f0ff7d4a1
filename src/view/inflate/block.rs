//! Block headers (RFC 1951 section 3.2.3): a stored block's lengths, the fixed code, a
//! dynamic block's code lengths; and the copying of a stored block.

use super::table::{self, Alphabet};
use super::{Block, Inflater, OUT, ROUND_ROOM, ends_early, invalid};
use std::io::{self, Read};

/// The order a dynamic block lists its code length code lengths in.
const PRECODE_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

impl<R: Read> Inflater<R> {
    /// Read a block header: set up a stored block, or the tables of a coded one.
    pub(super) fn block_header(&mut self) -> io::Result<()> {
        self.last_block = self.take(1)? == 1;
        match self.take(2)? {
            0 => {
                // To the byte boundary, then give back the whole bytes the bit buffer holds.
                let skip = self.bits & 7;
                self.bitbuf >>= skip;
                self.bits -= skip;
                self.pos = self
                    .pos
                    .checked_sub((self.bits >> 3) as usize)
                    .ok_or_else(ends_early)?;
                self.bitbuf = 0;
                self.bits = 0;
                self.ensure_input()?;
                if self.pos + 4 > self.end {
                    return Err(ends_early());
                }
                let field = |at: usize| u16::from_le_bytes([self.input[at], self.input[at + 1]]);
                let (len, nlen) = (field(self.pos), field(self.pos + 2));
                if len != !nlen {
                    return Err(invalid("invalid stored block lengths"));
                }
                self.pos += 4;
                self.block = Block::Stored(usize::from(len));
            }
            1 => {
                let mut lens = [0u8; 288 + 32];
                lens[..144].fill(8);
                lens[144..256].fill(9);
                lens[256..280].fill(7);
                lens[280..288].fill(8);
                lens[288..].fill(5);
                self.tables(&lens[..288], &lens[288..])?;
                self.block = Block::Coded;
            }
            2 => {
                self.dynamic_header()?;
                self.block = Block::Coded;
            }
            _ => return Err(invalid("invalid block type")),
        }
        Ok(())
    }

    fn tables(&mut self, litlen: &[u8], dist: &[u8]) -> io::Result<()> {
        table::build_table(
            litlen,
            &mut self.litlen[..],
            table::LITLEN_BITS,
            Alphabet::LiteralLength,
        )
        .map_err(|e| invalid(format!("invalid literal/length code: {e}")))?;
        table::build_table(
            dist,
            &mut self.dist[..],
            table::DIST_BITS,
            Alphabet::Distance,
        )
        .map_err(|e| invalid(format!("invalid distance code: {e}")))
    }

    /// A dynamic block's code lengths (coded by the code length code), then its tables.
    fn dynamic_header(&mut self) -> io::Result<()> {
        let nlen = self.take(5)? as usize + 257;
        let ndist = self.take(5)? as usize + 1;
        let ncode = self.take(4)? as usize + 4;
        if nlen > 286 || ndist > 30 {
            return Err(invalid("too many length or distance symbols"));
        }
        let mut precode_lens = [0u8; 19];
        for &symbol in &PRECODE_ORDER[..ncode] {
            precode_lens[symbol] = self.take(3)? as u8;
        }
        let mut precode = [table::INVALID; table::PRECODE_ENOUGH];
        table::build_table(
            &precode_lens,
            &mut precode,
            table::PRECODE_BITS,
            Alphabet::CodeLength,
        )
        .map_err(|e| invalid(format!("invalid code lengths set: {e}")))?;
        let mut lens = [0u8; 286 + 30];
        let mut i = 0;
        while i < nlen + ndist {
            if self.bits < table::PRECODE_BITS {
                self.ensure_input()?;
                self.top_up();
            }
            let entry = table::lookup(&precode, self.bitbuf, table::PRECODE_BITS);
            if entry & table::LITERAL == 0 {
                return Err(invalid("invalid code lengths set"));
            }
            self.bitbuf >>= table::taken(entry);
            self.bits -= table::taken(entry);
            let symbol = table::symbol(entry);
            let (value, repeat) = match symbol {
                0..=15 => (symbol, 1),
                16 => {
                    let Some(&previous) = i.checked_sub(1).and_then(|p| lens.get(p)) else {
                        return Err(invalid("invalid bit length repeat"));
                    };
                    (previous, 3 + self.take(2)? as usize)
                }
                17 => (0, 3 + self.take(3)? as usize),
                _ => (0, 11 + self.take(7)? as usize),
            };
            if i + repeat > nlen + ndist {
                return Err(invalid("invalid bit length repeat"));
            }
            lens[i..i + repeat].fill(value);
            i += repeat;
        }
        if lens[256] == 0 {
            return Err(invalid("invalid code -- missing end-of-block"));
        }
        self.tables(&lens[..nlen], &lens[nlen..nlen + ndist])
    }

    /// Copy a stored block's bytes into `out` until it is full or the block ends.
    pub(super) fn stored(&mut self, mut left: usize) -> io::Result<()> {
        let limit = OUT - ROUND_ROOM;
        while left > 0 && self.made < limit {
            if self.pos >= self.end {
                if self.input_ended {
                    return Err(ends_early());
                }
                self.read_input()?;
                continue;
            }
            let n = left.min(limit - self.made).min(self.end - self.pos);
            self.out[self.made..self.made + n].copy_from_slice(&self.input[self.pos..self.pos + n]);
            self.made += n;
            self.pos += n;
            left -= n;
        }
        self.block = if left > 0 {
            Block::Stored(left)
        } else if self.last_block {
            Block::Done
        } else {
            Block::Header
        };
        Ok(())
    }
}
