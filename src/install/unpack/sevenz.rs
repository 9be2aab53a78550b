//! NVIDIA's Windows local installers, read as archives and never executed.
//!
//! `cuda_11.2.2_461.33_win10.exe` is a 7-Zip self-extracting archive: a
//! Windows program (the stub) with a 7z archive appended. cudaenv finds the
//! archive by its signature (`7z\xBC\xAF\x27\x1C`) and reads it with
//! `sevenz-rust2` through a window that starts there; the stub is never
//! run, on Windows or anywhere else. A stub may carry the six signature bytes
//! itself (7-Zip's own stub does, to look for its archive), so a candidate
//! only counts when its start header's CRC-32 holds and the header it points
//! to lies inside the file; the first such one is the archive.
//!
//! The archive holds one directory per component (`cuda_cudart`,
//! `libcublas`, `cuda_nvcc`, …; the same names as the Linux runfile's
//! `builds/`), each with one or more packages (`cuda_cudart/cudart`,
//! `libcublas/cublas`, `libcublas/cublas_dev`) laid out as the installed
//! toolkit is: `bin/`, `include/`, `lib/x64/`, `extras/CUPTI/…`. That layout
//! is the one JuliaPackaging/Yggdrasil's `CUDA_full@11.0` and `@11.2`
//! recipes take apart with `7z x` (they merge `<component>/*/*` into one
//! toolkit root). Beside the components sit the display driver, Nsight, the
//! Visual Studio integration and the installer itself, which cudaenv skips.
//!
//! The usual rules hold (`unpack::Extractor`): names are sanitized (7-Zip
//! names made on Windows may use `\` as the separator, which is taken as one,
//! so `a\..\..\x` is refused like `a/../../x`), only files and directories
//! are accepted (a symbolic link or reparse point in a Windows installer is
//! refused), the entry count and the declared sizes are checked against the
//! limits before anything is decoded, every file is held to its declared
//! size and its CRC-32 (checked by the reader), and every `members`
//! directory must be present. The archive's headers and decoders are
//! bounded in memory (`MEMORY_LIMIT_KIB`).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{EntryKind, Extractor, Limits, Summary, bad_archive};
use crate::error::{Error, Result};
use crate::install::sources::Layout;

/// The 7z signature, the first six bytes of every 7z archive.
pub const SIGNATURE: [u8; 6] = *b"7z\xBC\xAF\x27\x1C";
/// Where the archive may start: stubs are a few hundred KiB; a file whose
/// first 64 MiB hold no archive is not a 7-Zip self-extractor.
const SCAN_LIMIT: u64 = 64 << 20;
/// Memory for the archive's headers and each decoder's dictionary. NVIDIA's
/// archives use LZMA dictionaries of tens of MiB; 1 GiB refuses a header
/// that asks for absurd amounts before any is allocated.
const MEMORY_LIMIT_KIB: usize = 1 << 20;
/// Windows attributes: the high 16 bits hold a Unix mode.
const ATTR_UNIX_EXTENSION: u32 = 0x8000;
const ATTR_REPARSE_POINT: u32 = 0x400;
const UNIX_TYPE_MASK: u32 = 0o170000;
const UNIX_SYMLINK: u32 = 0o120000;

/// Finds the 7z archive inside `file` (`len` bytes): the offset of its
/// signature.
pub fn find_archive(file: &mut File, name: &str, len: u64) -> Result<u64> {
    let io = |e: std::io::Error| bad_archive(name, None, format!("cannot read: {e}"));
    let scan = len.min(SCAN_LIMIT);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut head = Vec::with_capacity(scan as usize);
    file.by_ref()
        .take(scan)
        .read_to_end(&mut head)
        .map_err(io)?;
    let mut cut_short = false;
    let mut at = 0;
    while let Some(i) = find(&head[at..], &SIGNATURE) {
        let offset = (at + i) as u64;
        at += i + 1;
        match start_header(file, offset, len).map_err(io)? {
            Candidate::Archive => return Ok(offset),
            Candidate::CutShort => cut_short = true,
            Candidate::NotOne => {}
        }
    }
    Err(bad_archive(
        name,
        None,
        if cut_short {
            "the 7-Zip archive inside is cut short (an interrupted or truncated download)"
        } else {
            "no 7-Zip archive inside: not one of NVIDIA's Windows local installers"
        },
    ))
}

enum Candidate {
    Archive,
    /// A valid start header whose next header lies past the end of the file.
    CutShort,
    NotOne,
}

/// Judges the signature at `offset`: its 32-byte start header (signature,
/// version, CRC-32 of the next 20 bytes, next header offset, size, CRC-32).
fn start_header(file: &mut File, offset: u64, len: u64) -> std::io::Result<Candidate> {
    if len - offset < 32 {
        return Ok(Candidate::NotOne);
    }
    let mut h = [0u8; 32];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut h)?;
    let crc = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
    if h[6] != 0 || crc != crc32fast::hash(&h[12..32]) {
        return Ok(Candidate::NotOne);
    }
    let next_offset = u64::from_le_bytes(h[12..20].try_into().expect("8 bytes"));
    let next_size = u64::from_le_bytes(h[20..28].try_into().expect("8 bytes"));
    if next_size == 0 {
        return Ok(Candidate::NotOne);
    }
    let end = offset
        .checked_add(32)
        .and_then(|e| e.checked_add(next_offset))
        .and_then(|e| e.checked_add(next_size));
    Ok(match end {
        Some(end) if end <= len => Candidate::Archive,
        _ => Candidate::CutShort,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A file seen from `base` on: what the 7z reader takes for the whole archive.
struct Window<R> {
    inner: R,
    base: u64,
}

impl<R: Read> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: Seek> Seek for Window<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(p) => SeekFrom::Start(self.base.checked_add(p).ok_or_else(past)?),
            other => other,
        };
        let at = self.inner.seek(to)?;
        at.checked_sub(self.base).ok_or_else(past)
    }
}

fn past() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "seek outside the 7-Zip archive",
    )
}

/// Unpacks the components `layout` names from the installer at `path`
/// into `dest` (a fresh, empty directory).
pub fn unpack(
    path: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    let Layout::WindowsInstaller { members, .. } = &layout else {
        return Err(bad_archive(
            name,
            None,
            "a Windows installer needs the installer's layout",
        ));
    };
    let members = members.clone();
    let mut file = File::open(path).map_err(Error::io("cannot open", path))?;
    let len = file
        .metadata()
        .map_err(Error::io("cannot read", path))?
        .len();
    let base = find_archive(&mut file, name, len)?;
    let bad = |e: sevenz_rust2::Error| bad_archive(name, None, format!("7-Zip archive: {e}"));
    let window = Window {
        inner: BufReader::with_capacity(1 << 20, file),
        base,
    };
    let mut reader = sevenz_rust2::ArchiveReader::new_with_memory_limit(
        window,
        sevenz_rust2::Password::empty(),
        MEMORY_LIMIT_KIB,
    )
    .map_err(bad)?;
    check_bounds(reader.archive(), name, &limits)?;

    let mut ex = Extractor::new(name, dest, layout, limits);
    let mut found = vec![false; members.len()];
    // The reader's callback can only return its own error type: ours waits
    // here and replaces the reader's when it stops the walk.
    let mut failure: Option<Error> = None;
    let walked = reader.for_each_entries(|entry, data| {
        match take(&mut ex, entry, data, &members, &mut found) {
            Ok(()) => Ok(true),
            Err(e) => {
                failure = Some(e);
                Err(sevenz_rust2::Error::Other("stopped".into()))
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    walked.map_err(bad)?;
    let missing: Vec<&str> = members
        .iter()
        .zip(&found)
        .filter(|(_, f)| !**f)
        .map(|(m, _)| m.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(bad_archive(
            name,
            None,
            format!(
                "the installer lacks {} (not the CUDA installer this release names)",
                missing.join(", ")
            ),
        ));
    }
    ex.finish()
}

/// Refuses, before decoding anything, an archive that declares more members
/// or bytes than the limits allow.
fn check_bounds(archive: &sevenz_rust2::Archive, name: &str, limits: &Limits) -> Result<()> {
    let files = &archive.files;
    if files.len() as u64 > limits.max_entries {
        return Err(bad_archive(
            name,
            None,
            format!(
                "{} members (expansion limit {})",
                files.len(),
                limits.max_entries
            ),
        ));
    }
    let total = files
        .iter()
        .try_fold(0u64, |t, f| t.checked_add(f.size))
        .unwrap_or(u64::MAX);
    if total > limits.max_total_bytes {
        return Err(bad_archive(
            name,
            None,
            "archive expands beyond the size limit",
        ));
    }
    Ok(())
}

/// One member: checked, mapped, and written when the layout wants it.
fn take(
    ex: &mut Extractor,
    entry: &sevenz_rust2::ArchiveEntry,
    data: &mut dyn Read,
    members: &[String],
    found: &mut [bool],
) -> Result<()> {
    // On Windows `\` separates; no real member has one in its name.
    let raw = entry.name.replace('\\', "/");
    let kind = kind_of(entry);
    let Some(target) = ex.entry(&raw, &kind)? else {
        return Ok(());
    };
    let top = raw.split('/').find(|p| !p.is_empty() && *p != ".");
    if let Some(i) = members.iter().position(|m| Some(m.as_str()) == top) {
        found[i] = true;
    }
    if kind == EntryKind::File {
        let lower = raw.to_ascii_lowercase();
        let executable = [".exe", ".dll", ".bat"].iter().any(|x| lower.ends_with(x));
        ex.write_file(&raw, &target, executable, Some(entry.size), data)?;
    }
    Ok(())
}

fn kind_of(entry: &sevenz_rust2::ArchiveEntry) -> EntryKind {
    if entry.is_anti_item {
        return EntryKind::Other("deletion (anti-item)");
    }
    if entry.has_windows_attributes {
        let attrs = entry.windows_attributes;
        if attrs & ATTR_REPARSE_POINT != 0 {
            return EntryKind::Other("reparse point (link)");
        }
        if attrs & ATTR_UNIX_EXTENSION != 0 {
            let mode = attrs >> 16;
            match mode & UNIX_TYPE_MASK {
                UNIX_SYMLINK => return EntryKind::Other("symbolic link"),
                0 | 0o100000 | 0o040000 => {}
                _ => return EntryKind::Other("special file"),
            }
        }
    }
    if entry.is_directory {
        EntryKind::Dir
    } else {
        EntryKind::File
    }
}

/// Builds a self-extracting installer the way NVIDIA's are built, for tests:
/// a stub that holds a decoy signature (as 7-Zip's own stub does), then a 7z
/// archive of `files` (name, bytes; a name ending in `/` is a directory),
/// LZMA2-compressed in one solid block.
#[cfg(test)]
pub(crate) fn build(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut archive = std::io::Cursor::new(Vec::new());
    {
        let mut w = sevenz_rust2::ArchiveWriter::new(&mut archive).expect("a 7z writer");
        let mut entries = Vec::new();
        let mut readers: Vec<sevenz_rust2::SourceReader<&[u8]>> = Vec::new();
        for (n, data) in files {
            if let Some(dir) = n.strip_suffix('/') {
                w.push_archive_entry::<&[u8]>(sevenz_rust2::ArchiveEntry::new_directory(dir), None)
                    .expect("a directory entry");
            } else {
                entries.push(sevenz_rust2::ArchiveEntry::new_file(n));
                readers.push((*data).into());
            }
        }
        w.push_archive_entries(entries, readers)
            .expect("the file entries");
        w.finish().expect("the archive");
    }
    stub_with(&archive.into_inner())
}

/// `archive` behind a stub with a decoy signature.
#[cfg(test)]
pub(crate) fn stub_with(archive: &[u8]) -> Vec<u8> {
    let mut out = b"MZ\x90\x00 a stub: This program cannot be run in DOS mode.\0".to_vec();
    out.extend_from_slice(&SIGNATURE);
    out.extend_from_slice(&[0u8; 26]);
    out.resize(4096, 0xCC);
    out.extend_from_slice(archive);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::InstallError;

    fn layout(members: &[&str]) -> Layout {
        Layout::WindowsInstaller {
            members: members.iter().map(|s| s.to_string()).collect(),
            optional: vec!["cuda_cupti".into()],
        }
    }

    fn installer() -> Vec<u8> {
        build(&[
            ("setup.exe", b"MZ setup"),
            ("cuda_cudart/", b""),
            ("cuda_cudart/cudart/cudart.nvi", b"<manifest/>"),
            ("cuda_cudart/cudart/bin/cudart64_110.dll", b"MZ cudart"),
            (
                "cuda_cudart/cudart/include/cuda_runtime.h",
                b"#define CUDART_VERSION 11020\n",
            ),
            ("cuda_cudart/cudart/lib/x64/cudart.lib", b"!<arch>\n"),
            ("cuda_cudart/cudart/lib/Win32/cudart.lib", b"!<arch>\n"),
            ("libcublas/cublas/bin/cublas64_11.dll", b"MZ cublas"),
            ("libcublas/cublas/bin/cublasLt64_11.dll", b"MZ cublasLt"),
            ("libcublas/cublas_dev/include/cublas_api.h", b"/* cublas */"),
            ("libcublas/cublas_dev/lib/x64/cublas.lib", b"!<arch>\n"),
            ("cuda_nvcc/nvcc/bin/nvcc.exe", b"MZ nvcc"),
            ("Display.Driver/nvlddmkm.sys", b"driver"),
        ])
    }

    fn write(dir: &Path, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join("cuda_11.2.2_461.33_win10.exe");
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn the_archive_is_found_past_a_decoy_signature() {
        let d = tempfile::tempdir().unwrap();
        let bytes = installer();
        let p = write(d.path(), &bytes);
        let mut f = File::open(&p).unwrap();
        let at = find_archive(&mut f, "x.exe", bytes.len() as u64).unwrap();
        assert_eq!(at, 4096, "the decoy in the stub is not the archive");
        assert_eq!(bytes[at as usize..at as usize + 6], SIGNATURE);
    }

    #[test]
    fn components_merge_into_the_windows_tree() {
        let d = tempfile::tempdir().unwrap();
        // A signed installer carries its Authenticode certificate after the
        // archive, at the end of the file.
        let mut bytes = installer();
        bytes.extend_from_slice(&[0x30; 1024]);
        let p = write(d.path(), &bytes);
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let s = unpack(
            &p,
            "x.exe",
            layout(&["cuda_cudart", "libcublas"]),
            &dest,
            Limits::default(),
        )
        .unwrap();
        let mut got: Vec<String> = Vec::new();
        for e in walk(&dest) {
            got.push(e);
        }
        got.sort();
        assert_eq!(
            got,
            [
                "bin/cublas64_11.dll",
                "bin/cublasLt64_11.dll",
                "bin/cudart64_110.dll",
                "include/cublas_api.h",
                "include/cuda_runtime.h",
                "lib/x64/cublas.lib",
                "lib/x64/cudart.lib",
            ]
        );
        assert_eq!(s.files, 7);
        assert_eq!(
            std::fs::read(dest.join("bin/cudart64_110.dll")).unwrap(),
            b"MZ cudart"
        );
    }

    fn walk(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        out
    }

    fn refused(bytes: &[u8], members: &[&str], limits: Limits) -> String {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), bytes);
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let e = unpack(&p, "x.exe", layout(members), &dest, limits).unwrap_err();
        assert!(
            matches!(e, Error::Install(InstallError::BadArchive { .. })),
            "{e:?}"
        );
        e.to_string()
    }

    #[test]
    fn a_missing_component_is_refused() {
        let e = refused(
            &installer(),
            &["cuda_cudart", "libcufft"],
            Limits::default(),
        );
        assert!(e.contains("lacks libcufft"), "{e}");
    }

    #[test]
    fn escapes_are_refused() {
        for name in [
            "cuda_cudart/cudart/../../../evil.dll",
            "cuda_cudart\\cudart\\..\\..\\..\\evil.dll",
            "/cuda_cudart/cudart/bin/x.dll",
            "C:/Windows/System32/x.dll",
        ] {
            let e = refused(
                &build(&[(name, b"MZ")]),
                &["cuda_cudart"],
                Limits::default(),
            );
            assert!(e.contains("..") || e.contains("absolute"), "{name}: {e}");
        }
    }

    #[test]
    fn oversize_archives_are_refused_before_decoding() {
        let big = vec![0u8; 1 << 16];
        let bytes = build(&[("cuda_cudart/cudart/bin/cudart64_110.dll", &big)]);
        let e = refused(
            &bytes,
            &["cuda_cudart"],
            Limits {
                max_total_bytes: 1 << 10,
                max_entries: 100,
            },
        );
        assert!(e.contains("size limit"), "{e}");
        let e = refused(
            &bytes,
            &["cuda_cudart"],
            Limits {
                max_total_bytes: 1 << 30,
                max_entries: 0,
            },
        );
        assert!(e.contains("expansion limit"), "{e}");
    }

    #[test]
    fn truncated_and_corrupt_installers_are_refused() {
        let bytes = installer();
        // Cut inside the archive: its start header now points past the end.
        let e = refused(
            &bytes[..bytes.len() - 40],
            &["cuda_cudart"],
            Limits::default(),
        );
        assert!(e.contains("cut short"), "{e}");
        // No archive at all: a plain program.
        let e = refused(
            b"MZ\x90\x00 just a program",
            &["cuda_cudart"],
            Limits::default(),
        );
        assert!(e.contains("no 7-Zip archive"), "{e}");
        // A flipped byte in the compressed data: the decoder or the CRC-32 says so.
        let mut flipped = bytes.clone();
        flipped[4096 + 40] ^= 0xFF;
        refused(&flipped, &["cuda_cudart"], Limits::default());
    }

    #[test]
    fn colliding_members_are_refused() {
        // Two packages that put different things at one path.
        let e = refused(
            &build(&[
                ("cuda_cudart/cudart/bin/cudart64_110.dll", b"MZ"),
                ("cuda_cudart/cudart_dev/bin/cudart64_110.dll/x", b"MZ"),
            ]),
            &["cuda_cudart"],
            Limits::default(),
        );
        assert!(e.contains("is a file or link"), "{e}");
    }
}
