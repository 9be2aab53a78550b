//! sha256, the one way cudaenv hashes: bytes in memory, a reader, a file, or
//! bytes fed as they arrive ([`Hasher`]), always written as lower-case hex
//! (the form indexes, manifests and locks use). md5 exists only to check the
//! few files NVIDIA pins by nothing else (its Windows local installers):
//! [`md5_file`], never a cache key or a lock's pin.
//!
//! Downloads are hashed while they stream (`fetch`), so a file is read again
//! only where nothing else hashed it: a cached download checked before it is
//! unpacked, a mirror's file.

use std::io::Read;
use std::path::Path;

use sha2::Digest;

use crate::error::{Error, Result};

/// A sha256 being computed over bytes fed in order.
#[derive(Clone, Default)]
pub struct Hasher(sha2::Sha256);

impl Hasher {
    pub fn new() -> Hasher {
        Hasher::default()
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Feeds everything `r` holds; returns how many bytes that was.
    pub fn read_from(&mut self, mut r: impl Read) -> std::io::Result<u64> {
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0;
        loop {
            match r.read(&mut buf) {
                Ok(0) => return Ok(total),
                Ok(n) => {
                    self.0.update(&buf[..n]);
                    total += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The digest, as lower-case hex.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// The sha256 of `bytes`, as lower-case hex.
pub fn sha256(bytes: &[u8]) -> String {
    let mut h = Hasher::new();
    h.update(bytes);
    h.finish()
}

/// The sha256 of a file, as lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    let f = std::fs::File::open(path).map_err(Error::io("cannot read", path))?;
    let mut h = Hasher::new();
    h.read_from(f).map_err(Error::io("cannot read", path))?;
    Ok(h.finish())
}

/// The md5 of a file, as lower-case hex (see the module's note).
pub fn md5_file(path: &Path) -> Result<String> {
    use md5::Digest as _;
    let mut f = std::fs::File::open(path).map_err(Error::io("cannot read", path))?;
    let mut h = md5::Md5::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(hex(&h.finalize())),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("cannot read", path)(e)),
        }
    }
}

/// Bytes as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_hashing_agrees() {
        // sha256("abc"), FIPS 180-2 appendix B.1.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256(b"abc"), abc);
        let mut h = Hasher::new();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.finish(), abc);
        let mut h = Hasher::new();
        assert_eq!(h.read_from(&b"abc"[..]).unwrap(), 3);
        assert_eq!(h.finish(), abc);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("abc");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(sha256_file(&f).unwrap(), abc);
        assert!(sha256_file(&dir.path().join("none")).is_err());
        // md5("abc"), RFC 1321 appendix A.5.
        assert_eq!(md5_file(&f).unwrap(), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
