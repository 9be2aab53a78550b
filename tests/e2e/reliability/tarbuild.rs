//! A raw tar writer for hostile archives: 512-byte ustar headers written by
//! hand (plus PAX and GNU long-name records), so names, sizes, types and
//! link targets can be anything an attacker sends.

#![allow(dead_code)]

#[derive(Clone)]
pub struct TarEntry {
    pub name: Vec<u8>,
    pub kind: u8,
    pub data: Vec<u8>,
    pub link: Vec<u8>,
    pub mode: u32,
    /// Size written in the ustar header (default: the data's length).
    pub header_size: Option<u64>,
    /// PAX records to put before this entry.
    pub pax: Vec<(&'static str, Vec<u8>)>,
    /// Emit the name as a GNU long-name record.
    pub gnu_long_name: bool,
}

pub fn entry(kind: u8, name: &str) -> TarEntry {
    TarEntry {
        name: name.as_bytes().to_vec(),
        kind,
        data: Vec::new(),
        link: Vec::new(),
        mode: 0o644,
        header_size: None,
        pax: Vec::new(),
        gnu_long_name: false,
    }
}

pub fn file(name: &str, data: &[u8]) -> TarEntry {
    TarEntry {
        data: data.to_vec(),
        ..entry(b'0', name)
    }
}

pub fn dir(name: &str) -> TarEntry {
    TarEntry {
        mode: 0o755,
        ..entry(b'5', name)
    }
}

pub fn symlink(name: &str, target: &str) -> TarEntry {
    TarEntry {
        link: target.as_bytes().to_vec(),
        mode: 0o777,
        ..entry(b'2', name)
    }
}

pub fn hardlink(name: &str, target: &str) -> TarEntry {
    TarEntry {
        link: target.as_bytes().to_vec(),
        ..entry(b'1', name)
    }
}

fn octal(field: &mut [u8], v: u64) {
    let s = format!("{:0w$o}\0", v, w = field.len() - 1);
    field.copy_from_slice(&s.as_bytes()[s.len() - field.len()..]);
}

fn header(name: &[u8], kind: u8, size: u64, mode: u32, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    octal(&mut h[100..108], mode as u64);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], 0);
    h[156] = kind;
    let l = link.len().min(100);
    h[157..157 + l].copy_from_slice(&link[..l]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
    h
}

fn push_data(out: &mut Vec<u8>, data: &[u8]) {
    out.extend(data);
    let pad = (512 - data.len() % 512) % 512;
    out.extend(std::iter::repeat_n(0u8, pad));
}

/// Serialises the entries, the two zero blocks that end a tar, then `trailing`.
pub fn build(entries: &[TarEntry], trailing: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        if !e.pax.is_empty() {
            let mut body = Vec::new();
            for (k, v) in &e.pax {
                // "LEN key=value\n", LEN counting itself.
                let rest = k.len() + v.len() + 3;
                let mut len = rest + 1;
                while format!("{len}").len() + rest != len {
                    len += 1;
                }
                body.extend(format!("{len} {k}=").as_bytes());
                body.extend(v);
                body.push(b'\n');
            }
            out.extend(header(
                b"././@PaxHeader",
                b'x',
                body.len() as u64,
                0o644,
                b"",
            ));
            push_data(&mut out, &body);
        }
        if e.gnu_long_name {
            let mut n = e.name.clone();
            n.push(0);
            out.extend(header(b"././@LongLink", b'L', n.len() as u64, 0o644, b""));
            push_data(&mut out, &n);
        }
        let size = e.header_size.unwrap_or(e.data.len() as u64);
        out.extend(header(&e.name, e.kind, size, e.mode, &e.link));
        push_data(&mut out, &e.data);
    }
    out.extend([0u8; 1024]);
    out.extend(trailing);
    out
}

pub fn xz(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub fn gz(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
