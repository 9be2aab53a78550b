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
//! The `ar` framing is read by the `ar` crate, xz by `xz2`, zstd by `ruzstd`
//! (pure Rust, decode only, with its window-size limit against memory
//! bombs), gzip by `flate2`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::{Limits, Summary};
use crate::error::{Error, Result};
use crate::sources::Layout;

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
    let file = std::fs::File::open(archive).map_err(Error::io("cannot open", archive))?;
    unpack(
        BufReader::with_capacity(1 << 20, file),
        name,
        layout,
        dest,
        limits,
    )
}

/// Unpacks a `.deb` read from `reader`.
pub fn unpack(
    reader: impl Read,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    let bad = |entry: Option<&str>, reason: String| Error::BadArchive {
        archive: name.into(),
        entry: entry.map(str::to_string),
        reason,
    };
    let mut ar = ar::Archive::new(reader);
    // 1. The format version.
    let Some((member, mut entry)) = next_member(&mut ar, name, "its first member")? else {
        return Err(bad(None, "not a Debian package (empty ar archive)".into()));
    };
    if member != "debian-binary" {
        return Err(bad(
            Some(&member),
            "not a Debian package (the first member must be debian-binary)".into(),
        ));
    }
    if entry.header().size() > MAX_VERSION_MEMBER {
        return Err(bad(Some(&member), "debian-binary is too large".into()));
    }
    let mut version = String::new();
    entry.read_to_string(&mut version).map_err(|e| {
        bad(
            Some(&member),
            format!("cannot read the format version: {e}"),
        )
    })?;
    if !version.starts_with("2.") || !version.ends_with('\n') {
        return Err(bad(
            Some(&member),
            format!(
                "unsupported package format `{}` (only 2.x is)",
                version.trim_end().escape_debug()
            ),
        ));
    }
    drop(entry);

    // 2. The control archive: skipped.
    let Some((member, entry)) = next_member(&mut ar, name, "its control member")? else {
        return Err(bad(None, "the package has no control member".into()));
    };
    if member_compression(&member, "control.tar").is_none() {
        return Err(bad(
            Some(&member),
            "expected control.tar[.gz|.xz|.zst] as the second member".into(),
        ));
    }
    drop(entry);

    // 3. The data archive.
    let Some((member, entry)) = next_member(&mut ar, name, "its data member")? else {
        return Err(bad(None, "the package has no data member".into()));
    };
    let Some(compression) = member_compression(&member, "data.tar") else {
        return Err(bad(
            Some(&member),
            "expected data.tar[.gz|.xz|.zst] as the third member".into(),
        ));
    };
    let tar_name = format!("{name}:{member}");
    let declared = entry.header().size();
    let mut counted = Counted { inner: entry, n: 0 };
    let summary = unpack_data(&mut counted, compression, &tar_name, layout, dest, limits)?;
    // The member ended before its declared size: the file is truncated.
    if counted.n != declared {
        return Err(bad(
            Some(&member),
            format!(
                "truncated: {} of the {declared} bytes the member declares",
                counted.n
            ),
        ));
    }
    drop(counted);

    // 4. Nothing after it.
    if let Some((member, _)) = next_member(&mut ar, name, "after its data member")? {
        return Err(bad(
            Some(&member),
            "unexpected member after data.tar".into(),
        ));
    }
    Ok(summary)
}

/// The next member of the `ar` archive and its name.
fn next_member<'a, R: Read>(
    ar: &'a mut ar::Archive<R>,
    name: &str,
    what: &str,
) -> Result<Option<(String, ar::Entry<'a, R>)>> {
    let bad = |reason: String| Error::BadArchive {
        archive: name.into(),
        entry: None,
        reason,
    };
    match ar.next_entry() {
        None => Ok(None),
        Some(Err(e)) => Err(bad(format!("not a Debian package ({what}: {e})"))),
        Some(Ok(entry)) => {
            let id = entry.header().identifier();
            // GNU ar ends names with `/`; dpkg accepts both spellings.
            let id = id.strip_suffix(b"/").unwrap_or(id);
            let member = std::str::from_utf8(id)
                .map_err(|_| bad("a member name is not UTF-8".into()))?
                .to_string();
            Ok(Some((member, entry)))
        }
    }
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
    let trailing = || Error::BadArchive {
        archive: name.into(),
        entry: None,
        reason: "data after the end of the compressed stream".into(),
    };
    match compression {
        Compression::None => super::tar::unpack(entry, name, layout, dest, limits, no_seen),
        Compression::Gzip => {
            let mut d = flate2::read::GzDecoder::new(entry);
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

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
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
        let d = ruzstd::decoding::StreamingDecoder::new(source).map_err(|e| Error::BadArchive {
            archive: name.into(),
            entry: None,
            reason: format!("not a zstd stream: {e}"),
        })?;
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

    /// An ar archive (GNU-style names) of `members`.
    pub fn ar_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = ar::Builder::new(Vec::new());
        for (name, data) in members {
            b.append(
                &ar::Header::new(name.as_bytes().to_vec(), data.len() as u64),
                *data,
            )
            .unwrap();
        }
        b.into_inner().unwrap()
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
        assert!(matches!(run(&deb).1, Err(Error::BadArchive { .. })));
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
            assert!(matches!(r, Err(Error::BadArchive { .. })), "{what}: {r:?}");
            let _ = d;
        }
    }
}
