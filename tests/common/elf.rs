//! A tiny ELF64 writer for tests that need a shared library without a compiler: an ELF header,
//! `.dynsym`, `.dynstr` and three section headers (what `nm -D` and pinprobe's reader use),
//! and the FA3-shaped symbol names the symbol signatures look for.

/// FA3's dispatch, defined in every FA3 library (the signatures' anchor).
pub const DISPATCH: &str = "_Z11run_mha_fwdR16Flash_fwd_paramsP11CUstream_st";
/// An SM80 instantiation `run_mha_fwd_<80, bf16, 128, 128, false, false, false, true>`.
pub const SM80: &str = "_Z12run_mha_fwd_ILi80EN7cutlass10bfloat16_tELi128ELi128ELb0ELb0ELb0ELb1EEvR16Flash_fwd_paramsP11CUstream_st";
/// A non-packed-GQA SM90 instantiation (last template argument `false`).
pub const SM90_UNPACKED: &str = "_Z12run_mha_fwd_ILi90EN7cutlass10bfloat16_tELi128ELi128ELb0ELb0ELb0ELb0EEvR16Flash_fwd_paramsP11CUstream_st";

/// How a symbol appears in `.dynsym`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sym {
    Defined,
    Undefined,
    Weak,
}

/// Byte offsets a bad-input case may overwrite.
pub const CLASS: usize = 4;
pub const SHNUM: usize = 0x3c;

/// An ELF64 little-endian shared object holding `symbols` (`.dynsym`, `.dynstr`, `.shstrtab`
/// and a one-instruction `.text` that defined symbols point into): enough for `nm -D`.
pub fn shared_object(symbols: &[(&str, Sym)]) -> Vec<u8> {
    const TEXT: u16 = 4;
    let mut dynstr = vec![0u8];
    let mut dynsym = vec![0u8; 24];
    for (name, kind) in symbols {
        let at = dynstr.len() as u32;
        dynstr.extend_from_slice(name.as_bytes());
        dynstr.push(0);
        let mut s = vec![0u8; 24];
        s[0..4].copy_from_slice(&at.to_le_bytes());
        let (bind, shndx): (u8, u16) = match kind {
            Sym::Defined => (1, TEXT),
            Sym::Undefined => (1, 0),
            Sym::Weak => (2, 0),
        };
        s[4] = (bind << 4) | 2;
        s[6..8].copy_from_slice(&shndx.to_le_bytes());
        dynsym.extend_from_slice(&s);
    }
    let shstr = b"\0.dynsym\0.dynstr\0.shstrtab\0.text\0";
    let mut f = vec![0u8; 64];
    f[..4].copy_from_slice(b"\x7fELF");
    f[4] = 2; // ELFCLASS64
    f[5] = 1; // little-endian
    f[6] = 1;
    f[0x10] = 3; // ET_DYN
    f[0x12] = 62; // x86-64
    f[0x14] = 1;
    f[0x34] = 64; // e_ehsize
    let sym_off = f.len() as u64;
    f.extend_from_slice(&dynsym);
    let str_off = f.len() as u64;
    f.extend_from_slice(&dynstr);
    let shstr_off = f.len() as u64;
    f.extend_from_slice(shstr);
    while !f.len().is_multiple_of(16) {
        f.push(0);
    }
    let text_off = f.len() as u64;
    f.extend_from_slice(&[0xc3; 16]);
    for sym in dynsym.chunks_exact_mut(24).skip(1) {
        if u16::from_le_bytes([sym[6], sym[7]]) == TEXT {
            sym[8..16].copy_from_slice(&text_off.to_le_bytes());
        }
    }
    f[sym_off as usize..sym_off as usize + dynsym.len()].copy_from_slice(&dynsym);
    let shoff = f.len() as u64;
    #[allow(clippy::too_many_arguments)]
    let shdr =
        |name: u32, kind: u32, flags: u64, off: u64, size: u64, link: u32, info: u32, ent: u64| {
            let mut h = vec![0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[8..16].copy_from_slice(&flags.to_le_bytes());
            let addr = if flags & 2 != 0 { off } else { 0 };
            h[0x10..0x18].copy_from_slice(&addr.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x2c..0x30].copy_from_slice(&info.to_le_bytes());
            h[0x30..0x38].copy_from_slice(&8u64.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&ent.to_le_bytes());
            h
        };
    f.extend(shdr(0, 0, 0, 0, 0, 0, 0, 0));
    f.extend(shdr(1, 11, 2, sym_off, dynsym.len() as u64, 2, 1, 24));
    f.extend(shdr(9, 3, 2, str_off, dynstr.len() as u64, 0, 0, 0));
    f.extend(shdr(17, 3, 0, shstr_off, shstr.len() as u64, 0, 0, 0));
    f.extend(shdr(27, 1, 6, text_off, 16, 0, 0, 0));
    f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    f[SHNUM..SHNUM + 2].copy_from_slice(&5u16.to_le_bytes());
    f[0x3e..0x40].copy_from_slice(&3u16.to_le_bytes()); // e_shstrndx
    f
}

/// The FA3 library of a build whose dispatch references `kernel` as `how`.
pub fn fa3_library(kernel: &str, how: Sym) -> Vec<u8> {
    shared_object(&[(DISPATCH, Sym::Defined), (kernel, how)])
}
