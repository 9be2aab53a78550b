//! A raw zip writer for hostile archives.
//!
//! The zip crate's writer refuses or normalises most of what an attacker
//! would send, so the battery writes the format by hand: every field of the
//! local header and the central directory can disagree with the data and
//! with each other.

#![allow(dead_code)]

use std::io::Write;

#[derive(Clone)]
pub struct Member {
    /// Name in the central directory.
    pub name: Vec<u8>,
    /// Name in the local header (default: the same).
    pub local_name: Option<Vec<u8>>,
    /// Uncompressed bytes.
    pub data: Vec<u8>,
    pub deflate: bool,
    /// Unix mode (type and permission bits), stored in the external attributes.
    pub mode: u32,
    pub crc: Option<u32>,
    /// The member's stored bytes as written (default: `data`, deflated
    /// when `deflate`).
    pub body: Option<Vec<u8>>,
    /// Declared uncompressed size (default: the real one).
    pub size: Option<u32>,
    pub flags: u16,
    /// Make this entry's central record point at an earlier member's local
    /// header (overlapping entries: the "better zip bomb" trick).
    pub reuse_local_of: Option<usize>,
}

pub fn file(name: &str, data: &[u8]) -> Member {
    Member {
        name: name.as_bytes().to_vec(),
        local_name: None,
        data: data.to_vec(),
        deflate: false,
        mode: 0o100644,
        crc: None,
        body: None,
        size: None,
        flags: 0,
        reuse_local_of: None,
    }
}

pub fn raw_file(name: &[u8], data: &[u8]) -> Member {
    Member {
        name: name.to_vec(),
        ..file("x", data)
    }
}

pub fn dir(name: &str) -> Member {
    Member {
        mode: 0o040755,
        ..file(name, b"")
    }
}

pub fn symlink(name: &str, target: &str) -> Member {
    Member {
        mode: 0o120777,
        ..file(name, target.as_bytes())
    }
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

pub fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Serialises `members`, then appends `trailing` after the end record.
pub fn build(members: &[Member], trailing: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut offsets = Vec::new();
    for m in members {
        let body = match &m.body {
            Some(b) => b.clone(),
            None if m.deflate => deflate(&m.data),
            None => m.data.clone(),
        };
        let crc = m.crc.unwrap_or_else(|| crc32(&m.data));
        let size = m.size.unwrap_or(m.data.len() as u32);
        let method: u16 = if m.deflate { 8 } else { 0 };
        let offset = match m.reuse_local_of {
            Some(i) => offsets[i],
            None => {
                let off = out.len() as u32;
                let lname = m.local_name.as_ref().unwrap_or(&m.name);
                out.extend(0x04034b50u32.to_le_bytes());
                out.extend(20u16.to_le_bytes());
                out.extend(m.flags.to_le_bytes());
                out.extend(method.to_le_bytes());
                out.extend([0u8; 4]); // time, date
                out.extend(crc.to_le_bytes());
                out.extend((body.len() as u32).to_le_bytes());
                out.extend(size.to_le_bytes());
                out.extend((lname.len() as u16).to_le_bytes());
                out.extend(0u16.to_le_bytes());
                out.extend(lname);
                out.extend(&body);
                off
            }
        };
        offsets.push(offset);
        let csize = match m.reuse_local_of {
            Some(i) => {
                let first = &members[i];
                if first.deflate {
                    deflate(&first.data).len() as u32
                } else {
                    first.data.len() as u32
                }
            }
            None => body.len() as u32,
        };
        central.extend(0x02014b50u32.to_le_bytes());
        central.extend(((3u16 << 8) | 20).to_le_bytes());
        central.extend(20u16.to_le_bytes());
        central.extend(m.flags.to_le_bytes());
        central.extend(method.to_le_bytes());
        central.extend([0u8; 4]);
        central.extend(crc.to_le_bytes());
        central.extend(csize.to_le_bytes());
        central.extend(size.to_le_bytes());
        central.extend((m.name.len() as u16).to_le_bytes());
        central.extend(0u16.to_le_bytes()); // extra
        central.extend(0u16.to_le_bytes()); // comment
        central.extend(0u16.to_le_bytes()); // disk
        central.extend(0u16.to_le_bytes()); // internal attributes
        central.extend((m.mode << 16).to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(&m.name);
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x06054b50u32.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend(trailing);
    out
}
