//! Debian binary packages (`.deb`).
//!
//! A `.deb` is an `ar` archive of exactly three members, in this order:
//! `debian-binary` (the format version, `2.0\n`), `control.tar[.gz|.xz|.zst]`
//! (the package's metadata and maintainer scripts) and
//! `data.tar[.gz|.xz|.zst]` (the files). Only the data member is unpacked,
//! through the tar unpacker and so under every rule of [`super::Extractor`];
//! the control member is skipped unread, and its maintainer scripts are
//! never run (NVIDIA's library packages have none that matter to a
//! relocated tree). Anything else is refused: another format version, a
//! missing, repeated or unknown member, members out of order, bytes after
//! the compressed data, or data after the last member (a file that other
//! readers would see differently).
//!
//! The `ar` framing is read here (`Ar`): a `.deb` uses a small, fixed subset
//! of the format, and general `ar` readers follow extensions (long-name
//! tables) that hostile input turns into huge allocations or panics. xz is
//! decoded by `xz2`, zstd by `ruzstd` (pure Rust, decode only, with its
//! window-size limit against memory bombs), gzip by `flate2`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::{Limits, Summary, bad_archive};
use crate::error::{Error, Result};
use crate::install::sources::Layout;

/// `debian-binary` is a few bytes; more is not a real package.
const MAX_VERSION_MEMBER: u64 = 64;

/// How a tar member of the package is compressed, from its name's suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Xz,
    Zstd,
}

fn member_compression(name: &str, stem: &str) -> Option<Compression> {
    match name.strip_prefix(stem)? {
        "" => Some(Compression::None),
        ".gz" => Some(Compression::Gzip),
        ".xz" => Some(Compression::Xz),
        ".zst" => Some(Compression::Zstd),
        _ => None,
    }
}

/// Unpacks the data of the `.deb` at `archive` into the fresh directory `dest`.
pub fn unpack_file(
    archive: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    unpack(super::open_stream(archive)?, name, layout, dest, limits)
}

/// Unpacks a `.deb` read from `reader`.
pub fn unpack(
    reader: impl Read,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    let bad = |entry: Option<&str>, reason: String| bad_archive(name, entry, reason);
    let mut ar = Ar::new(reader, name)?;
    // 1. The format version.
    let Some((member, size)) = ar.next_member()? else {
        return Err(bad(None, "not a Debian package (empty ar archive)".into()));
    };
    if member != "debian-binary" {
        return Err(bad(
            Some(&member),
            "not a Debian package (the first member must be debian-binary)".into(),
        ));
    }
    if size > MAX_VERSION_MEMBER {
        return Err(bad(Some(&member), "debian-binary is too large".into()));
    }
    let mut version = Vec::new();
    ar.data(size).read_to_end(&mut version).map_err(|e| {
        bad(
            Some(&member),
            format!("cannot read the format version: {e}"),
        )
    })?;
    ar.finish_member(&member, size)?;
    let version = String::from_utf8_lossy(&version);
    if !version.starts_with("2.") || !version.ends_with('\n') {
        return Err(bad(
            Some(&member),
            format!(
                "unsupported package format `{}` (only 2.x is)",
                version.trim_end().escape_debug()
            ),
        ));
    }

    // 2. The control archive: skipped.
    let Some((member, size)) = ar.next_member()? else {
        return Err(bad(None, "the package has no control member".into()));
    };
    if member_compression(&member, "control.tar").is_none() {
        return Err(bad(
            Some(&member),
            "expected control.tar[.gz|.xz|.zst] as the second member".into(),
        ));
    }
    ar.finish_member(&member, size)?;

    // 3. The data archive.
    let Some((member, size)) = ar.next_member()? else {
        return Err(bad(None, "the package has no data member".into()));
    };
    let Some(compression) = member_compression(&member, "data.tar") else {
        return Err(bad(
            Some(&member),
            "expected data.tar[.gz|.xz|.zst] as the third member".into(),
        ));
    };
    let tar_name = format!("{name}:{member}");
    let summary = unpack_data(ar.data(size), compression, &tar_name, layout, dest, limits)?;
    ar.finish_member(&member, size)?;

    // 4. Nothing after it.
    if let Some((member, _)) = ar.next_member()? {
        return Err(bad(
            Some(&member),
            "unexpected member after data.tar".into(),
        ));
    }
    Ok(summary)
}

/// The `ar` framing of a `.deb`, read as dpkg writes it and no further: the
/// global magic, then 60-byte member headers (16-byte name, `/`-terminated or
/// space-padded; a decimal size; the `` `\n `` terminator), each member's
/// data padded to an even length with `\n`. GNU and BSD long-name extensions
/// (`//`, `/123`, `#1/…`) are never in a package and are refused rather than
/// followed: they are how other `ar` readers come to allocate gigabytes or
/// index out of bounds on hostile input.
struct Ar<'n, R> {
    r: R,
    name: &'n str,
    /// Bytes of the current member's data consumed so far.
    read: u64,
}

const AR_MAGIC: &[u8; 8] = b"!<arch>\n";

impl<'n, R: Read> Ar<'n, R> {
    fn new(mut r: R, name: &'n str) -> Result<Self> {
        let mut magic = [0u8; 8];
        if read_full(&mut r, &mut magic).ok() != Some(8) || &magic != AR_MAGIC {
            return Err(bad_archive(
                name,
                None,
                "not a Debian package (no ar archive header)",
            ));
        }
        Ok(Ar { r, name, read: 0 })
    }

    fn bad(&self, entry: Option<&str>, reason: impl Into<String>) -> Error {
        bad_archive(self.name, entry, reason)
    }

    /// The next member's name and size; `None` at the end of the archive.
    fn next_member(&mut self) -> Result<Option<(String, u64)>> {
        let mut h = [0u8; 60];
        let n = read_full(&mut self.r, &mut h)
            .map_err(|e| self.bad(None, format!("not a Debian package (cannot read: {e})")))?;
        if n == 0 {
            return Ok(None);
        }
        if n < h.len() || &h[58..60] != b"`\n" {
            return Err(self.bad(
                None,
                "not a Debian package (a truncated or malformed ar member header)",
            ));
        }
        let raw = std::str::from_utf8(&h[..16])
            .map_err(|_| self.bad(None, "a member name is not ASCII"))?
            .trim_end_matches(' ');
        let member = raw.strip_suffix('/').unwrap_or(raw);
        if member.is_empty()
            || member.contains('/')
            || member.starts_with("#1")
            || !member.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(self.bad(
                Some(raw),
                "not a member name a Debian package has (ar extended names are not supported)",
            ));
        }
        let size_field = std::str::from_utf8(&h[48..58])
            .unwrap_or("")
            .trim_end_matches(' ');
        let size = (!size_field.is_empty() && size_field.bytes().all(|b| b.is_ascii_digit()))
            .then(|| size_field.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| {
                self.bad(
                    Some(member),
                    format!("bad member size `{}`", size_field.escape_debug()),
                )
            })?;
        self.read = 0;
        Ok(Some((member.to_string(), size)))
    }

    /// The current member's data (at most `size` bytes; counted).
    fn data(&mut self, size: u64) -> impl Read + '_ {
        Counting {
            inner: (&mut self.r).take(size.saturating_sub(self.read)),
            n: &mut self.read,
        }
    }

    /// Skips the rest of the member and its padding; a member that ends
    /// before its declared size is a truncated file.
    fn finish_member(&mut self, member: &str, size: u64) -> Result<()> {
        let rest = size - self.read.min(size);
        let skipped = std::io::copy(&mut (&mut self.r).take(rest), &mut std::io::sink())
            .map_err(|e| self.bad(Some(member), format!("cannot read: {e}")))?;
        self.read += skipped;
        if self.read != size {
            return Err(self.bad(
                Some(member),
                format!(
                    "truncated: {} of the {size} bytes the member declares",
                    self.read
                ),
            ));
        }
        if size % 2 == 1 {
            let mut pad = [0u8; 1];
            if read_full(&mut self.r, &mut pad).ok() != Some(1) || pad[0] != b'\n' {
                return Err(self.bad(Some(member), "missing the padding after the member"));
            }
        }
        Ok(())
    }
}

/// Counts what is read through it into `n`.
struct Counting<'a, R> {
    inner: R,
    n: &'a mut u64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        *self.n += k as u64;
        Ok(k)
    }
}

/// Reads until `buf` is full or the input ends; how many bytes it got.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn unpack_data(
    entry: impl Read,
    compression: Compression,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    let no_seen = &mut |_: &Path| {};
    let trailing = || bad_archive(name, None, "data after the end of the compressed stream");
    match compression {
        Compression::None => super::tar::unpack(entry, name, layout, dest, limits, no_seen),
        Compression::Gzip => {
            // The buffered decoder hands back its buffer with the input, so
            // bytes it read ahead past the stream are still seen below.
            let mut d = flate2::bufread::GzDecoder::new(BufReader::new(entry));
            let s = super::tar::unpack(&mut d, name, layout, dest, limits, no_seen)?;
            if !at_end(d.into_inner())? {
                return Err(trailing());
            }
            Ok(s)
        }
        Compression::Xz => {
            let mut d = xz2::read::XzDecoder::new(BufReader::new(entry));
            let s = super::tar::unpack(&mut d, name, layout, dest, limits, no_seen)?;
            if !at_end(d.into_inner())? {
                return Err(trailing());
            }
            Ok(s)
        }
        Compression::Zstd => {
            let mut d = ZstdFrames::new(BufReader::new(entry), name)?;
            super::tar::unpack(&mut d, name, layout, dest, limits, no_seen)
        }
    }
}

/// Is `r` exhausted? (A stream decoder stops at its end marker: whatever
/// follows is invisible to it but not to other readers.)
fn at_end(mut r: impl Read) -> Result<bool> {
    let mut b = [0u8; 1];
    loop {
        match r.read(&mut b) {
            Ok(n) => return Ok(n == 0),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A read error here is a truncated or broken member.
            Err(_) => return Ok(false),
        }
    }
}

/// A zstd stream of one or more frames (`zstd -T` writes several), decoded
/// as one byte stream.
struct ZstdFrames<R: BufRead> {
    decoder: Option<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>>,
    name: String,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R, name: &str) -> Result<Self> {
        let d = ruzstd::decoding::StreamingDecoder::new(source)
            .map_err(|e| bad_archive(name, None, format!("not a zstd stream: {e}")))?;
        Ok(ZstdFrames {
            decoder: Some(d),
            name: name.into(),
        })
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(d) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = d.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The frame ended: another may follow.
            let mut source = self.decoder.take().expect("decoder").into_inner();
            if source.fill_buf()?.is_empty() {
                return Ok(0);
            }
            let d = ruzstd::decoding::StreamingDecoder::new(source).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: data after a zstd frame is not a frame: {e}", self.name),
                )
            })?;
            self.decoder = Some(d);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::InstallError;

    /// An ar archive of `members`, as dpkg-deb writes one.
    pub fn ar_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = AR_MAGIC.to_vec();
        for (name, data) in members {
            out.extend(
                format!(
                    "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                    name,
                    0,
                    0,
                    0,
                    100644,
                    data.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(data);
            if data.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        out
    }

    fn data_tar() -> Vec<u8> {
        super::super::tar::tests::tar_bytes(&[
            ("./", tar::EntryType::Directory, b"", None),
            (
                "./usr/lib/x86_64-linux-gnu/libcudart.so.11.2.152",
                tar::EntryType::Regular,
                b"ELF",
                None,
            ),
            (
                "./usr/lib/x86_64-linux-gnu/libcudart.so.11.0",
                tar::EntryType::Symlink,
                b"",
                Some("libcudart.so.11.2.152"),
            ),
            (
                "./usr/share/doc/libcudart11.0/copyright",
                tar::EntryType::Regular,
                b"c",
                None,
            ),
        ])
    }

    fn xz(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = xz2::read::XzEncoder::new(data, 1);
        e.read_to_end(&mut out).unwrap();
        out
    }

    fn layout() -> Layout {
        Layout::Debian {
            triplet: "x86_64-linux-gnu".into(),
        }
    }

    fn run(bytes: &[u8]) -> (tempfile::TempDir, Result<Summary>) {
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let r = unpack(bytes, "t.deb", layout(), &dest, Limits::default());
        (d, r)
    }

    #[test]
    fn unpacks_the_libraries_into_lib64() {
        let deb = ar_bytes(&[
            ("debian-binary", b"2.0\n"),
            ("control.tar.xz", &xz(b"")),
            ("data.tar.xz", &xz(&data_tar())),
        ]);
        let (d, r) = run(&deb);
        let s = r.unwrap();
        assert_eq!(s.files, 1);
        let out = d.path().join("out");
        assert_eq!(
            std::fs::read_link(out.join("lib64/libcudart.so.11.0")).unwrap(),
            Path::new("libcudart.so.11.2.152")
        );
        assert!(!out.join("usr").exists() && !out.join("share").exists());
    }

    #[test]
    fn bytes_after_a_gzip_stream_are_refused() {
        let mut gz = Vec::new();
        {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
            e.write_all(&data_tar()).unwrap();
            e.finish().unwrap();
        }
        gz.extend_from_slice(b"hidden");
        let deb = ar_bytes(&[
            ("debian-binary", b"2.0\n"),
            ("control.tar.gz", b""),
            ("data.tar.gz", &gz),
        ]);
        assert!(matches!(
            run(&deb).1,
            Err(Error::Install(InstallError::BadArchive { .. }))
        ));
    }

    #[test]
    fn uncompressed_and_gzip_data_work() {
        let mut gz = Vec::new();
        {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
            e.write_all(&data_tar()).unwrap();
            e.finish().unwrap();
        }
        for (member, data) in [("data.tar", data_tar()), ("data.tar.gz", gz)] {
            let deb = ar_bytes(&[
                ("debian-binary", b"2.0\n"),
                ("control.tar.gz", b""),
                (member, &data),
            ]);
            run(&deb).1.unwrap();
        }
    }

    #[test]
    fn zstd_data_of_one_or_two_frames_works() {
        use ruzstd::encoding::{CompressionLevel, compress_to_vec};
        let tar = data_tar();
        let one = compress_to_vec(&tar[..], CompressionLevel::Fastest);
        let (a, b) = tar.split_at(1000);
        let two = [
            compress_to_vec(a, CompressionLevel::Fastest),
            compress_to_vec(b, CompressionLevel::Fastest),
        ]
        .concat();
        for data in [one.clone(), two] {
            let deb = ar_bytes(&[
                ("debian-binary", b"2.0\n"),
                ("control.tar.zst", b""),
                ("data.tar.zst", &data),
            ]);
            let (d, r) = run(&deb);
            r.unwrap();
            assert!(d.path().join("out/lib64/libcudart.so.11.2.152").is_file());
        }
        let deb = ar_bytes(&[
            ("debian-binary", b"2.0\n"),
            ("control.tar.zst", b""),
            ("data.tar.zst", &[one, b"junk".to_vec()].concat()),
        ]);
        assert!(matches!(
            run(&deb).1,
            Err(Error::Install(InstallError::BadArchive { .. }))
        ));
    }

    #[test]
    fn malformed_packages_are_refused() {
        let tar_xz = xz(&data_tar());
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("not ar", b"hello world, not a package".to_vec()),
            ("empty ar", ar_bytes(&[])),
            (
                "version 3",
                ar_bytes(&[
                    ("debian-binary", b"3.0\n"),
                    ("control.tar.xz", b""),
                    ("data.tar.xz", &tar_xz),
                ]),
            ),
            (
                "data first",
                ar_bytes(&[("data.tar.xz", &tar_xz), ("debian-binary", b"2.0\n")]),
            ),
            (
                "no data",
                ar_bytes(&[("debian-binary", b"2.0\n"), ("control.tar.xz", b"")]),
            ),
            (
                "unknown compression",
                ar_bytes(&[
                    ("debian-binary", b"2.0\n"),
                    ("control.tar.xz", b""),
                    ("data.tar.bz2", &tar_xz),
                ]),
            ),
            (
                "two data members",
                ar_bytes(&[
                    ("debian-binary", b"2.0\n"),
                    ("control.tar.xz", b""),
                    ("data.tar.xz", &tar_xz),
                    ("data.tar.xz", &tar_xz),
                ]),
            ),
            (
                "bytes after the xz stream",
                ar_bytes(&[
                    ("debian-binary", b"2.0\n"),
                    ("control.tar.xz", b""),
                    ("data.tar.xz", &[tar_xz.clone(), b"extra".to_vec()].concat()),
                ]),
            ),
            (
                "corrupt xz",
                ar_bytes(&[
                    ("debian-binary", b"2.0\n"),
                    ("control.tar.xz", b""),
                    ("data.tar.xz", &tar_xz[..tar_xz.len() / 2]),
                ]),
            ),
        ];
        for (what, bytes) in cases {
            let (d, r) = run(&bytes);
            assert!(
                matches!(r, Err(Error::Install(InstallError::BadArchive { .. }))),
                "{what}: {r:?}"
            );
            let _ = d;
        }
    }
}
