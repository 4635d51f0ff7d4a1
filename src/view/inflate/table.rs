//! Huffman decoding tables (RFC 1951 section 3.2.2), one `u32` entry per index: a code of up
//! to [`root`](build_table) bits is looked up by the next bits of the stream (least significant
//! first, as deflate packs codes reversed), a longer one through a subtable the root entry
//! points to. Which codes a table refuses follows zlib's `inflate_table`: over-subscribed
//! lengths always, incomplete ones but for a single code of one bit (and no codes at all).

/// Root bits of the literal/length table, the distance table and the code length table.
pub(super) const LITLEN_BITS: u32 = 11;
pub(super) const DIST_BITS: u32 = 8;
pub(super) const PRECODE_BITS: u32 = 7;
/// Root table plus the largest set of subtables a complete code can need (zlib's `enough`:
/// 288 symbols, 11 root bits, 15 bits at most: 2342; 32 symbols, 8 root bits: 402).
pub(super) const LITLEN_ENOUGH: usize = 2342;
pub(super) const DIST_ENOUGH: usize = 402;
pub(super) const PRECODE_ENOUGH: usize = 1 << PRECODE_BITS;

// An entry: bits 0..8 the bits its code and extra bits take (a subtable pointer: the root
// bits), bits 8..12 the bits of its code alone (a subtable pointer: the subtable's bits), bit
// 31 a literal, bit 15 anything but a literal, length or distance (with bit 14 a subtable
// pointer, with bit 13 the end of the block, with neither an invalid code), bits 16.. its
// value (a literal or code length symbol, a length or distance base, a subtable's start).
pub(super) const LITERAL: u32 = 1 << 31;
pub(super) const EXCEPTIONAL: u32 = 1 << 15;
const SUBTABLE: u32 = EXCEPTIONAL | 1 << 14;
pub(super) const END_OF_BLOCK: u32 = EXCEPTIONAL | 1 << 13;
pub(super) const INVALID: u32 = EXCEPTIONAL;

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// Which alphabet a table decodes: what each symbol's entry says.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Alphabet {
    /// Literals 0..=255, end of block 256, lengths 257..=285 (286 and 287 are invalid).
    LiteralLength,
    /// Distances 0..=29 (30 and 31 are invalid).
    Distance,
    /// The code lengths of a dynamic block's header (0..=18).
    CodeLength,
}

impl Alphabet {
    fn entry(self, symbol: usize, len: u32) -> u32 {
        let coded =
            |base: u16, extra: u8| u32::from(base) << 16 | len << 8 | (len + u32::from(extra));
        match self {
            Alphabet::LiteralLength => match symbol {
                0..=255 => LITERAL | (symbol as u32) << 16 | len << 8 | len,
                256 => END_OF_BLOCK | len << 8 | len,
                257..=285 => coded(LENGTH_BASE[symbol - 257], LENGTH_EXTRA[symbol - 257]),
                _ => INVALID,
            },
            Alphabet::Distance => match symbol {
                0..=29 => coded(DIST_BASE[symbol], DIST_EXTRA[symbol]),
                _ => INVALID,
            },
            Alphabet::CodeLength => LITERAL | (symbol as u32) << 16 | len << 8 | len,
        }
    }
}

/// Fill `table` (root bits `root`, at most 11) with the canonical code whose lengths (0..=15,
/// 0 for an unused symbol) are `lens`, one per symbol of `alphabet`.
pub(super) fn build_table(
    lens: &[u8],
    table: &mut [u32],
    root: u32,
    alphabet: Alphabet,
) -> Result<(), &'static str> {
    let mut count = [0u16; 16];
    for &len in lens {
        count[usize::from(len & 15)] += 1;
    }
    count[0] = 0;
    let max = (1..16).rev().find(|&l| count[l] != 0).unwrap_or(0) as u32;
    let root_size = 1usize << root;
    if max == 0 {
        // No codes at all: every lookup is invalid (zlib accepts such a table).
        table[..root_size].fill(INVALID);
        return Ok(());
    }
    let mut left: i32 = 1;
    for &c in &count[1..] {
        left = (left << 1) - i32::from(c);
        if left < 0 {
            return Err("over-subscribed code lengths");
        }
    }
    if left > 0 {
        if alphabet == Alphabet::CodeLength || max != 1 {
            return Err("incomplete code lengths");
        }
        // A single code of one bit: the other bit pattern is invalid. (A complete code fills
        // every root entry below.)
        table[..root_size].fill(INVALID);
    }
    // The first canonical code of each length.
    let mut next = [0u32; 16];
    let mut code = 0u32;
    for len in 1..16 {
        code = (code + u32::from(count[len - 1])) << 1;
        next[len] = code;
    }
    let reversed = |code: u32, len: u32| (code.reverse_bits() >> (32 - len)) as usize;
    if max > root {
        // The longest code under each root prefix sizes that prefix's subtable.
        let mut longest = [0u8; 1 << LITLEN_BITS];
        let mut codes = next;
        for &len in lens {
            let len = u32::from(len);
            if len > root {
                let prefix = reversed(codes[len as usize], len) & (root_size - 1);
                longest[prefix] = longest[prefix].max(len as u8);
            }
            codes[len as usize] += 1;
        }
        let mut free = root_size;
        for (prefix, &len) in longest[..root_size].iter().enumerate() {
            if len == 0 {
                continue;
            }
            let bits = u32::from(len) - root;
            let size = 1usize << bits;
            if free + size > table.len() {
                return Err("code lengths need too large a table");
            }
            table[prefix] = SUBTABLE | (free as u32) << 16 | bits << 8 | root;
            table[free..free + size].fill(INVALID);
            free += size;
        }
    }
    for (symbol, &len) in lens.iter().enumerate() {
        let len = u32::from(len);
        if len == 0 {
            continue;
        }
        let rev = reversed(next[len as usize], len);
        next[len as usize] += 1;
        let entry = alphabet.entry(symbol, len);
        if len <= root {
            for i in (rev..root_size).step_by(1 << len) {
                table[i] = entry;
            }
        } else {
            let pointer = table[rev & (root_size - 1)];
            let start = (pointer >> 16) as usize;
            let size = 1usize << ((pointer >> 8) & 0xF);
            for i in ((rev >> root)..size).step_by(1 << (len - root)) {
                if let Some(slot) = table.get_mut(start + i) {
                    *slot = entry;
                }
            }
        }
    }
    Ok(())
}

/// The entry for the code at the bottom of `bitbuf` (root bits `root`), through its subtable
/// when the code is longer than the root.
#[inline(always)]
pub(super) fn lookup<const N: usize>(table: &[u32; N], bitbuf: u64, root: u32) -> u32 {
    let entry = table[(bitbuf as usize) & ((1 << root) - 1)];
    if entry & SUBTABLE != SUBTABLE {
        return entry;
    }
    let bits = (entry >> 8) & 0xF;
    let start = (entry >> 16) as usize;
    let index = start + ((bitbuf >> root) as usize & ((1 << bits) - 1));
    table.get(index).copied().unwrap_or(INVALID)
}

/// The bits an entry's code (and extra bits) take.
#[inline(always)]
pub(super) fn taken(entry: u32) -> u32 {
    entry & 0xFF
}

/// A literal or code length entry's symbol.
#[inline(always)]
pub(super) fn symbol(entry: u32) -> u8 {
    (entry >> 16) as u8
}

/// A length or distance entry's value: its base plus its extra bits (which follow its code
/// at the bottom of `bitbuf`).
#[inline(always)]
pub(super) fn value(entry: u32, bitbuf: u64) -> usize {
    let bits = bitbuf & ((1u64 << taken(entry)) - 1);
    (entry >> 16) as usize + (bits >> ((entry >> 8) & 0xF)) as usize
}
