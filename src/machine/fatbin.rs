//! The GPU code inside a CUDA library: which architectures its kernels were
//! built for, read from the library itself.
//!
//! nvcc puts a module's device code in the ELF section `.nv_fatbin`: one
//! fatbinary container per translation unit (`libtorch_cuda.so` holds
//! thousands), each a 16-byte header (magic `0xBA55ED50`, version 1, its
//! header size, the size of what follows) and then entries, each a header
//! (kind: 1 = PTX, 2 or 0x10 = ELF machine code, i.e. SASS; its header size;
//! the payload's padded size; at byte 28 the `sm` number, `90` for sm_90)
//! followed by its payload. The payloads are compressed machine code,
//! hundreds of megabytes in a framework; only the headers matter here.
//!
//! Windows DLLs (and `.pyd` extension modules) carry the same containers in
//! a PE section: PE section names have eight bytes, so it is `.nv_fatb`.
//!
//! So the library is never read whole, nor mapped: the ELF header, the
//! section headers and the section-name table (for a DLL: the DOS stub's
//! pointer, the COFF header and the section table) are read with bounded reads,
//! then each container and entry header with one seek and one small read,
//! skipping the payloads. Every size comes from the file and is checked
//! against the section before it is used; the number of reads and of
//! entries is bounded. A file that is neither ELF nor PE, or has no such
//! section, has no kernels (`Ok(None)`); anything malformed is a `Malformed`
//! naming the offset, for the caller to report — never a panic.
//!
//! The layout (reverse-engineered by several public tools, and checked
//! against real NVIDIA libraries in the tests, a Linux `.so` and a Windows
//! `.dll`) is stable from CUDA 9 to 13.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::machine::compat::ComputeCapability;

/// The magic of a fatbinary container (little endian in the file).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Entry kinds.
pub const KIND_PTX: u16 = 1;
pub const KIND_ELF: u16 = 2;
/// An ELF entry in a newer layout; cuobjdump lists it with the ELF ones.
pub const KIND_ELF_ALT: u16 = 0x10;

/// The section headers and their name table: real libraries have ~40
/// sections and a few hundred bytes of names.
const MAX_SECTION_TABLE: u64 = 1 << 20;
const MAX_NAMES: u64 = 1 << 20;
/// More entries than any real library (libcublasLt: ~6,000; libtorch_cuda:
/// tens of thousands) and still a bounded amount of work.
pub const MAX_ENTRIES: u64 = 1_000_000;
/// Reads of headers and padding, all told.
const MAX_READS: u64 = 4_000_000;
/// Zero padding between containers is skipped in chunks of this size.
const PAD_CHUNK: usize = 4096;

/// The architectures a library has code for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernels {
    /// Machine code (SASS), by architecture.
    pub sass: BTreeSet<ComputeCapability>,
    /// PTX, which the driver JIT-compiles for newer GPUs.
    pub ptx: BTreeSet<ComputeCapability>,
    /// Fatbinary containers and code entries read.
    pub containers: u64,
    pub entries: u64,
}

/// Why a library's kernels could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Byte offset in the file, where one applies.
    pub offset: Option<u64>,
    pub what: String,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} (at byte {o})", self.what),
            None => f.write_str(&self.what),
        }
    }
}

fn bad(offset: impl Into<Option<u64>>, what: impl Into<String>) -> Malformed {
    Malformed {
        offset: offset.into(),
        what: what.into(),
    }
}

/// The kernels of the library at `path`: `Ok(None)` when it is neither an
/// ELF nor a PE file, or has no fatbinary section (a CPU-only library).
pub fn scan(path: &Path) -> Result<Option<Kernels>, Malformed> {
    let (file, size) = crate::os::fs::open_regular(path).map_err(|e| bad(None, e.to_string()))?;
    let mut r = Reader {
        file,
        size,
        reads: 0,
    };
    let Some((start, len)) = fatbin_section(&mut r)? else {
        return Ok(None);
    };
    walk(&mut r, start, len).map(Some)
}

/// The file, with every read counted and checked against its size.
struct Reader<F> {
    file: F,
    size: u64,
    reads: u64,
}

impl<F: Read + Seek> Reader<F> {
    /// Exactly `len` bytes at `offset`, or a `Malformed` saying what was cut short.
    fn read(&mut self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>, Malformed> {
        self.reads += 1;
        if self.reads > MAX_READS {
            return Err(bad(offset, format!("more than {MAX_READS} reads")));
        }
        offset
            .checked_add(len)
            .filter(|e| *e <= self.size)
            .ok_or_else(|| bad(offset, format!("{what} runs past the end of the file")))?;
        let n = usize::try_from(len).map_err(|_| bad(offset, format!("{what} is too large")))?;
        let mut buf = vec![0u8; n];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut buf))
            .map_err(|e| bad(offset, format!("reading {what}: {e}")))?;
        Ok(buf)
    }
}

/// The file range of the fatbinary section, if the file is ELF or PE and
/// has one.
fn fatbin_section<F: Read + Seek>(r: &mut Reader<F>) -> Result<Option<(u64, u64)>, Malformed> {
    let head = r.read(0, r.size.min(64), "the file's header")?;
    if head.starts_with(b"\x7fELF") {
        elf_section(r, &head)
    } else if head.starts_with(b"MZ") {
        pe_section(r, &head)
    } else {
        Ok(None)
    }
}

/// PE: the signature's offset (in the DOS header, at 0x3c), the COFF
/// header after it, the section table after the optional header.
const PE_LFANEW: usize = 0x3c;
const COFF_HEADER: u64 = 20;
const PE_SECTION: u64 = 40;
/// The PE format allows 96 sections; a bound with room to spare.
const MAX_PE_SECTIONS: u16 = 1024;

/// `.nv_fatb` of a PE file (a DLL, a `.pyd`); `None` for an MZ file that
/// is not PE (a DOS program) or has no such section.
fn pe_section<F: Read + Seek>(
    r: &mut Reader<F>,
    head: &[u8],
) -> Result<Option<(u64, u64)>, Malformed> {
    if head.len() < 64 {
        return Err(bad(0, "the DOS header is cut short"));
    }
    let pe = u64::from(u32_at(head, PE_LFANEW));
    let coff = r.read(pe, 4 + COFF_HEADER, "the PE header")?;
    if !coff.starts_with(b"PE\0\0") {
        return Ok(None);
    }
    let sections = u16_at(&coff, 4 + 2);
    let optional = u64::from(u16_at(&coff, 4 + 16));
    if sections > MAX_PE_SECTIONS {
        return Err(bad(pe, format!("{sections} sections")));
    }
    let table_at = pe + 4 + COFF_HEADER + optional;
    let table = r.read(
        table_at,
        u64::from(sections) * PE_SECTION,
        "the section table",
    )?;
    let Some(sh) = table
        .chunks_exact(PE_SECTION as usize)
        .find(|sh| sh[..8] == *b".nv_fatb")
    else {
        return Ok(None);
    };
    // The raw data is padded to the file alignment; the virtual size is the
    // section's own, where the linker wrote one.
    let virtual_size = u64::from(u32_at(sh, 8));
    let raw_size = u64::from(u32_at(sh, 16));
    let raw_at = u64::from(u32_at(sh, 20));
    let len = match virtual_size {
        0 => raw_size,
        v => v.min(raw_size),
    };
    if raw_at == 0 || len == 0 {
        return Ok(None);
    }
    if raw_at + len > r.size {
        return Err(bad(
            raw_at,
            "the .nv_fatb section runs past the end of the file",
        ));
    }
    Ok(Some((raw_at, len)))
}

/// `.nv_fatbin` of an ELF file whose first (up to) 64 bytes are `head`.
fn elf_section<F: Read + Seek>(
    r: &mut Reader<F>,
    head: &[u8],
) -> Result<Option<(u64, u64)>, Malformed> {
    use goblin::container::Ctx;
    use goblin::elf::{SectionHeader, section_header::SHT_NOBITS};

    if head.len() < 64 {
        return Err(bad(0, "the ELF header is cut short"));
    }
    let h = goblin::elf::Elf::parse_header(head).map_err(|e| bad(0, format!("ELF header: {e}")))?;
    let container = h.container().map_err(|e| bad(0, e.to_string()))?;
    let le = h.endianness().map_err(|e| bad(0, e.to_string()))?;
    let ctx = Ctx::new(container, le);
    let entsize = SectionHeader::size(ctx) as u64;
    if h.e_shoff == 0 || h.e_shnum == 0 {
        return Ok(None);
    }
    if u64::from(h.e_shentsize) != entsize {
        return Err(bad(
            0,
            format!("section header size {} (expected {entsize})", h.e_shentsize),
        ));
    }
    let table_len = u64::from(h.e_shnum) * entsize;
    if table_len > MAX_SECTION_TABLE {
        return Err(bad(h.e_shoff, "section header table larger than 1 MiB"));
    }
    let table = r.read(h.e_shoff, table_len, "the section header table")?;
    let sections = SectionHeader::parse_from(&table, 0, usize::from(h.e_shnum), ctx)
        .map_err(|e| bad(h.e_shoff, format!("section headers: {e}")))?;
    let names_sh = sections
        .get(usize::from(h.e_shstrndx))
        .ok_or_else(|| bad(h.e_shoff, "no section-name table"))?;
    if names_sh.sh_size > MAX_NAMES {
        return Err(bad(
            names_sh.sh_offset,
            "section-name table larger than 1 MiB",
        ));
    }
    let names = r.read(
        names_sh.sh_offset,
        names_sh.sh_size,
        "the section-name table",
    )?;
    let name_of = |sh: &SectionHeader| -> Option<&[u8]> {
        let at = sh.sh_name;
        let rest = names.get(at..)?;
        let end = rest.iter().position(|b| *b == 0)?;
        Some(&rest[..end])
    };
    match sections
        .iter()
        .find(|sh| name_of(sh) == Some(b".nv_fatbin".as_slice()))
    {
        None => Ok(None),
        Some(sh) if sh.sh_type == SHT_NOBITS || sh.sh_size == 0 => Ok(None),
        Some(sh) => {
            if sh
                .sh_offset
                .checked_add(sh.sh_size)
                .is_none_or(|e| e > r.size)
            {
                return Err(bad(
                    sh.sh_offset,
                    "the .nv_fatbin section runs past the end of the file",
                ));
            }
            Ok(Some((sh.sh_offset, sh.sh_size)))
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Every container in `[start, start + len)`, headers only.
fn walk<F: Read + Seek>(r: &mut Reader<F>, start: u64, len: u64) -> Result<Kernels, Malformed> {
    let end = start + len;
    let mut k = Kernels::default();
    let mut at = start;
    while end - at >= 16 {
        let head = r.read(at, 16, "a fatbinary header")?;
        let magic = u32_at(&head, 0);
        if magic != FATBIN_MAGIC {
            if head[..8].iter().all(|b| *b == 0) {
                // Alignment padding between containers: 8 bytes or more
                // (MSVC-linked DLLs align containers to 16).
                at = skip_zeros(r, at, end)?;
                continue;
            }
            return Err(bad(
                at,
                format!("not a fatbinary container (magic {magic:#010x})"),
            ));
        }
        let version = u16_at(&head, 4);
        let header_size = u64::from(u16_at(&head, 6));
        let body = u64_at(&head, 8);
        if version != 1 || header_size < 16 {
            return Err(bad(
                at,
                format!("fatbinary version {version}, header size {header_size}"),
            ));
        }
        let body_start = at + header_size;
        let body_end = body_start
            .checked_add(body)
            .filter(|e| *e <= end)
            .ok_or_else(|| bad(at, "a fatbinary container runs past its section"))?;
        k.containers += 1;
        let mut e = body_start;
        while body_end - e >= 32 {
            let n = (body_end - e).min(64);
            let h = r.read(e, n, "a fatbinary entry header")?;
            let kind = u16_at(&h, 0);
            let hsize = u64::from(u32_at(&h, 4));
            let payload = u64_at(&h, 8);
            if hsize < 32 {
                return Err(bad(e, format!("entry header size {hsize}")));
            }
            let next = e
                .checked_add(hsize)
                .and_then(|x| x.checked_add(payload))
                .filter(|x| *x <= body_end)
                .ok_or_else(|| bad(e, "a fatbinary entry runs past its container"))?;
            if matches!(kind, KIND_PTX | KIND_ELF | KIND_ELF_ALT) {
                let sm = u32_at(&h, 28);
                let cc =
                    capability(sm).ok_or_else(|| bad(e, format!("architecture number {sm}")))?;
                if kind == KIND_PTX {
                    k.ptx.insert(cc);
                } else {
                    k.sass.insert(cc);
                }
                k.entries += 1;
                if k.entries > MAX_ENTRIES {
                    return Err(bad(e, format!("more than {MAX_ENTRIES} entries")));
                }
            }
            e = next;
        }
        at = body_end;
    }
    Ok(k)
}

/// The first offset after `at` (8-aligned from the section start) that is
/// not zero, reading in chunks; `end` when the rest is zeros.
fn skip_zeros<F: Read + Seek>(r: &mut Reader<F>, at: u64, end: u64) -> Result<u64, Malformed> {
    let mut pos = at;
    while pos < end {
        let n = (end - pos).min(PAD_CHUNK as u64);
        let chunk = r.read(pos, n, "padding")?;
        match chunk.iter().position(|b| *b != 0) {
            Some(i) => return Ok(pos + (i as u64 & !7)),
            None => pos += n,
        }
    }
    Ok(end)
}

/// `90` → 9.0, `120` → 12.0; `None` for numbers no GPU has.
fn capability(sm: u32) -> Option<ComputeCapability> {
    (10..1000)
        .contains(&sm)
        .then(|| ComputeCapability::new(sm / 10, sm % 10))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fatbinary entry: `kind`, `sm`, and a payload of `payload` bytes.
    pub fn entry(kind: u16, sm: u32, payload: usize) -> Vec<u8> {
        let padded = payload.div_ceil(8) * 8;
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        h[20..24].copy_from_slice(&(payload as u32).to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        h.extend(std::iter::repeat_n(0xAB, payload));
        h.extend(std::iter::repeat_n(0, padded - payload));
        h
    }

    /// A container of `entries`.
    pub fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut c = Vec::new();
        c.extend(FATBIN_MAGIC.to_le_bytes());
        c.extend(1u16.to_le_bytes());
        c.extend(16u16.to_le_bytes());
        c.extend((body.len() as u64).to_le_bytes());
        c.extend(body);
        c
    }

    /// A little-endian ELF64 shared object whose only sections are the null
    /// one, `.text`, `.nv_fatbin` (holding `fatbin`) and `.shstrtab`.
    pub fn elf(fatbin: &[u8]) -> Vec<u8> {
        let names = b"\0.text\0.nv_fatbin\0.shstrtab\0";
        let mut out = vec![0u8; 64];
        let text_off = out.len() as u64;
        out.extend(b"\x90\x90\x90\x90\x90\x90\x90\x90");
        let fat_off = out.len() as u64;
        out.extend(fatbin);
        let names_off = out.len() as u64;
        out.extend(names);
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        let shoff = out.len() as u64;
        let sh = |name: u32, ty: u32, off: u64, size: u64| {
            let mut s = vec![0u8; 64];
            s[0..4].copy_from_slice(&name.to_le_bytes());
            s[4..8].copy_from_slice(&ty.to_le_bytes());
            s[24..32].copy_from_slice(&off.to_le_bytes());
            s[32..40].copy_from_slice(&size.to_le_bytes());
            s[48..56].copy_from_slice(&8u64.to_le_bytes());
            s
        };
        out.extend(sh(0, 0, 0, 0));
        out.extend(sh(1, 1, text_off, 8));
        out.extend(sh(7, 1, fat_off, fatbin.len() as u64));
        out.extend(sh(18, 3, names_off, names.len() as u64));
        let h = &mut out[0..64];
        h[0..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // 64-bit
        h[5] = 1; // little endian
        h[6] = 1;
        h[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        h[18..20].copy_from_slice(&62u16.to_le_bytes()); // x86-64
        h[20..24].copy_from_slice(&1u32.to_le_bytes());
        h[40..48].copy_from_slice(&shoff.to_le_bytes());
        h[52..54].copy_from_slice(&64u16.to_le_bytes());
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[58..60].copy_from_slice(&64u16.to_le_bytes());
        h[60..62].copy_from_slice(&4u16.to_le_bytes());
        h[62..64].copy_from_slice(&3u16.to_le_bytes());
        out
    }

    /// A PE32+ DLL as MSVC's linker lays one out: the DOS header pointing at
    /// the signature, the COFF header, an optional header of 240 bytes, and
    /// sections `.text`, `.nv_fatb` (holding `fatbin`, its raw data padded to
    /// 512 bytes) and `.reloc`.
    pub fn pe(fatbin: &[u8]) -> Vec<u8> {
        let lfanew = 0x80usize;
        let optional = 240usize;
        let sections: [(&[u8; 8], Vec<u8>); 3] = [
            (b".text\0\0\0", vec![0xC3; 16]),
            (b".nv_fatb", fatbin.to_vec()),
            (b".reloc\0\0", vec![0; 8]),
        ];
        let mut out = vec![0u8; lfanew];
        out[0..2].copy_from_slice(b"MZ");
        out[PE_LFANEW..PE_LFANEW + 4].copy_from_slice(&(lfanew as u32).to_le_bytes());
        out.extend(b"PE\0\0");
        let mut coff = vec![0u8; 20];
        coff[0..2].copy_from_slice(&0x8664u16.to_le_bytes());
        coff[2..4].copy_from_slice(&(sections.len() as u16).to_le_bytes());
        coff[16..18].copy_from_slice(&(optional as u16).to_le_bytes());
        coff[18..20].copy_from_slice(&0x2022u16.to_le_bytes()); // a DLL
        out.extend(coff);
        let mut opt = vec![0u8; optional];
        opt[0..2].copy_from_slice(&0x20bu16.to_le_bytes()); // PE32+
        out.extend(opt);
        let table_at = out.len();
        out.extend(vec![0u8; sections.len() * 40]);
        let mut raw_at = (out.len()).div_ceil(512) * 512;
        for (i, (name, data)) in sections.iter().enumerate() {
            let raw = data.len().div_ceil(512) * 512;
            let sh = &mut out[table_at + i * 40..table_at + (i + 1) * 40];
            sh[0..8].copy_from_slice(*name);
            sh[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
            sh[12..16].copy_from_slice(&(0x1000 * (i as u32 + 1)).to_le_bytes());
            sh[16..20].copy_from_slice(&(raw as u32).to_le_bytes());
            sh[20..24].copy_from_slice(&(raw_at as u32).to_le_bytes());
            out.resize(raw_at, 0);
            out.extend(data);
            raw_at += raw;
        }
        out.resize(raw_at, 0);
        out
    }

    fn scan_bytes(bytes: &[u8]) -> Result<Option<Kernels>, Malformed> {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), bytes).unwrap();
        scan(tmp.path())
    }

    fn sms(set: &BTreeSet<ComputeCapability>) -> Vec<String> {
        set.iter().map(|c| c.sm()).collect()
    }

    #[test]
    fn reads_sass_and_ptx_architectures_from_every_container() {
        let fat = [
            container(&[
                entry(KIND_ELF, 80, 100),
                entry(KIND_ELF, 90, 3),
                entry(KIND_PTX, 90, 17),
            ]),
            vec![0; 16], // padding between containers
            container(&[entry(KIND_ELF_ALT, 120, 8), entry(0x40, 75, 5)]),
            vec![0; 8], // as little as 8 bytes of it
            container(&[entry(KIND_ELF, 86, 8)]),
        ]
        .concat();
        let k = scan_bytes(&elf(&fat)).unwrap().unwrap();
        assert_eq!(sms(&k.sass), ["sm_80", "sm_86", "sm_90", "sm_120"]);
        assert_eq!(sms(&k.ptx), ["sm_90"]);
        assert_eq!((k.containers, k.entries), (3, 5));
    }

    #[test]
    fn a_library_without_kernels_or_not_elf_has_none() {
        assert_eq!(scan_bytes(&elf(&[])).unwrap(), None);
        assert_eq!(
            scan_bytes(b"#!/bin/sh\necho not a library\n").unwrap(),
            None
        );
        assert_eq!(scan_bytes(&[0u8; 10]).unwrap(), None);
        assert_eq!(scan_bytes(&[]).unwrap(), None);
        // ELF's magic and then nothing is not a library without kernels.
        assert!(
            scan_bytes(b"\x7fELF\x02\x01")
                .unwrap_err()
                .what
                .contains("cut short")
        );
        // /bin/sh on this machine: a real ELF file with no .nv_fatbin.
        let sh = Path::new("/bin/sh");
        if sh.exists() {
            assert_eq!(scan(sh).unwrap(), None);
        }
    }

    #[test]
    fn hostile_files_give_errors_not_panics() {
        let good = container(&[entry(KIND_ELF, 86, 40)]);
        // A container claiming more bytes than its section.
        let mut huge = good.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = scan_bytes(&elf(&huge)).unwrap_err();
        assert!(e.what.contains("runs past its section"), "{e}");
        // An entry whose payload size wraps around.
        let mut wrap = good.clone();
        wrap[16 + 8..16 + 16].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
        let e = scan_bytes(&elf(&wrap)).unwrap_err();
        assert!(e.what.contains("runs past its container"), "{e}");
        // A zero header size would never advance.
        let mut stuck = good.clone();
        stuck[16 + 4..16 + 8].copy_from_slice(&0u32.to_le_bytes());
        let e = scan_bytes(&elf(&stuck)).unwrap_err();
        assert!(e.what.contains("entry header size 0"), "{e}");
        // An architecture number no GPU has.
        let mut sm = good.clone();
        sm[16 + 28..16 + 32].copy_from_slice(&7u32.to_le_bytes());
        assert!(
            scan_bytes(&elf(&sm))
                .unwrap_err()
                .what
                .contains("architecture")
        );
        // Garbage where a container should start.
        let e = scan_bytes(&elf(b"garbage!garbage!garbage!")).unwrap_err();
        assert!(e.what.contains("not a fatbinary container"), "{e}");
        assert_eq!(e.offset, Some(72));
        // Eight bytes of padding and then garbage: the garbage is named.
        let e = scan_bytes(&elf(&[vec![0; 8], b"garbage!garbage!".to_vec()].concat())).unwrap_err();
        assert!(e.what.contains("not a fatbinary container"), "{e}");
        assert_eq!(e.offset, Some(80));
        // A wrong version.
        let mut ver = good.clone();
        ver[4] = 9;
        assert!(
            scan_bytes(&elf(&ver))
                .unwrap_err()
                .what
                .contains("version 9")
        );
        // A section that points past the end of the file.
        let mut past = elf(&good);
        let shoff = u64_at(&past, 40) as usize;
        past[shoff + 2 * 64 + 32..shoff + 2 * 64 + 40].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(scan_bytes(&past).unwrap_err().what.contains("past the end"));
        // A section header table that claims to be larger than the file.
        let mut table = elf(&good);
        table[60..62].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(scan_bytes(&table).is_err());
        // A wrong section header size.
        let mut ent = elf(&good);
        ent[58..60].copy_from_slice(&40u16.to_le_bytes());
        assert!(
            scan_bytes(&ent)
                .unwrap_err()
                .what
                .contains("section header size")
        );
        // A name-table index out of range.
        let mut strndx = elf(&good);
        strndx[62..64].copy_from_slice(&77u16.to_le_bytes());
        assert!(
            scan_bytes(&strndx)
                .unwrap_err()
                .what
                .contains("section-name")
        );
        // Every truncation of a good file: an answer or an error, never a panic.
        let whole = elf(&[good.clone(), good].concat());
        for cut in 0..whole.len() {
            let _ = scan_bytes(&whole[..cut]);
        }
    }

    #[test]
    fn a_windows_dll_is_read_from_its_nv_fatb_section() {
        let fat = [
            container(&[entry(KIND_ELF, 75, 30), entry(KIND_PTX, 86, 9)]),
            container(&[entry(KIND_ELF, 89, 12)]),
        ]
        .concat();
        let k = scan_bytes(&pe(&fat)).unwrap().unwrap();
        assert_eq!(sms(&k.sass), ["sm_75", "sm_89"]);
        assert_eq!(sms(&k.ptx), ["sm_86"]);
        assert_eq!((k.containers, k.entries), (2, 3));
        // The raw data's padding to the file alignment is not read as a container.
        let mut no_virtual = pe(&fat);
        let sh = 0x80 + 4 + 20 + 240 + 40;
        no_virtual[sh + 8..sh + 12].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(scan_bytes(&no_virtual).unwrap().unwrap(), k);
        // A DLL without the section, and an MZ file that is not PE.
        assert_eq!(scan_bytes(&pe(&[])).unwrap(), None);
        let mut renamed = pe(&fat);
        renamed[sh..sh + 8].copy_from_slice(b".rdata\0\0");
        assert_eq!(scan_bytes(&renamed).unwrap(), None);
        let mut dos = vec![0u8; 128];
        dos[0..2].copy_from_slice(b"MZ");
        assert_eq!(scan_bytes(&dos).unwrap(), None);
    }

    #[test]
    fn hostile_dlls_give_errors_not_panics() {
        let good = container(&[entry(KIND_ELF, 86, 40)]);
        let sh = 0x80 + 4 + 20 + 240 + 40;
        // The signature's offset past the end of the file.
        let mut far = pe(&good);
        far[PE_LFANEW..PE_LFANEW + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(scan_bytes(&far).unwrap_err().what.contains("PE header"));
        // More sections than the format allows, and a table past the end.
        let mut many = pe(&good);
        many[0x80 + 6..0x80 + 8].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(scan_bytes(&many).unwrap_err().what.contains("sections"));
        let mut opt = pe(&good);
        opt[0x80 + 20..0x80 + 22].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(scan_bytes(&opt).unwrap_err().what.contains("section table"));
        // A section whose raw data lies past the end of the file.
        let mut past = pe(&good);
        past[sh + 20..sh + 24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(scan_bytes(&past).unwrap_err().what.contains("past the end"));
        // A container claiming more than its section.
        let mut huge = good.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            scan_bytes(&pe(&huge))
                .unwrap_err()
                .what
                .contains("runs past its section")
        );
        // An MZ header cut short.
        assert!(
            scan_bytes(b"MZ\x90\0")
                .unwrap_err()
                .what
                .contains("cut short")
        );
        // Every truncation of a good DLL: an answer or an error, never a panic.
        let whole = pe(&[good.clone(), good].concat());
        for cut in 0..whole.len() {
            let _ = scan_bytes(&whole[..cut]);
        }
    }

    #[test]
    fn payloads_are_skipped_not_read() {
        // Two 32 MiB payloads: the reads stay a handful (headers only).
        let payload = 32 << 20;
        let fat = container(&[entry(KIND_ELF, 90, payload), entry(KIND_PTX, 90, payload)]);
        let bytes = elf(&fat);
        let mut r = Reader {
            size: bytes.len() as u64,
            file: std::io::Cursor::new(bytes),
            reads: 0,
        };
        let (start, len) = fatbin_section(&mut r).unwrap().unwrap();
        let k = walk(&mut r, start, len).unwrap();
        assert_eq!(sms(&k.sass), ["sm_90"]);
        assert_eq!(sms(&k.ptx), ["sm_90"]);
        assert!(r.reads <= 7, "{} reads", r.reads);
    }
}
