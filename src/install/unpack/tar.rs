//! Tarballs (`.tar.xz`, `.tar.gz`/`.tgz`) and the tar payload of runfiles.
//!
//! A tar is read front to back, once: every member goes through the shared
//! [`Extractor`] rules (names, kinds, duplicates, links, expansion bounds)
//! before a byte of it is written, and files are streamed straight from the
//! decompressor to disk. Nothing is ever extracted by the `tar` crate itself
//! (its `unpack` would follow its own, different rules).
//!
//! Runfile payloads need one extra rule: each component directory holds
//! `lib64` and `include` as links into `targets/<triple>/…`, whose contents
//! the layout already flattens into `lib64/` and `include/`; those top-level
//! links are skipped instead of colliding with the real directories.

use std::io::Read;
use std::path::Path;

use super::{EntryKind, Extractor, Limits, Summary, bad_archive, map_path, sanitize};
use crate::error::Result;
use crate::install::sources::{ArchiveFormat, Layout};

/// The longest link target accepted (tar allows more via PAX; nothing real needs it).
const MAX_LINK: usize = 4096;

/// Zero padding accepted after the end of a tar (writers pad to their
/// record size, 10 KiB by default; anything this long is not padding).
const MAX_PADDING: u64 = 1 << 20;

/// Unpacks the tarball at `archive` (xz or gzip, per `format`) into the fresh directory `dest`.
pub fn unpack_file(
    archive: &Path,
    name: &str,
    format: ArchiveFormat,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    let file = super::open_stream(archive)?;
    match format {
        ArchiveFormat::TarXz => unpack(
            xz2::read::XzDecoder::new_multi_decoder(file),
            name,
            layout,
            dest,
            limits,
            &mut |_| {},
        ),
        ArchiveFormat::TarGz => unpack(
            flate2::read::MultiGzDecoder::new(file),
            name,
            layout,
            dest,
            limits,
            &mut |_| {},
        ),
        other => Err(bad_archive(
            name,
            None,
            format!("{other:?} is not a tarball format"),
        )),
    }
}

/// Unpacks a tar stream. `seen` is called with every member's sanitized
/// name (before layout mapping), so callers can check that what they needed
/// was there.
pub fn unpack(
    reader: impl Read,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    seen: &mut dyn FnMut(&Path),
) -> Result<Summary> {
    let is_runfile = matches!(
        layout,
        Layout::Runfile { .. } | Layout::NestedRunfile { .. }
    );
    let mut ex = Extractor::new(name, dest, layout.clone(), limits);
    let corrupt =
        |e: std::io::Error| bad_archive(name, None, format!("not a valid tar stream: {e}"));
    let mut ar = tar::Archive::new(reader);
    for entry in ar.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let header_kind = entry.header().entry_type();
        let raw_bytes = entry.path_bytes().into_owned();
        let raw = std::str::from_utf8(&raw_bytes)
            .map_err(|_| ex.bad(String::from_utf8_lossy(&raw_bytes), "name is not UTF-8"))?
            .to_string();
        use tar::EntryType as T;
        let kind = match header_kind {
            T::Regular | T::Continuous => EntryKind::File,
            T::Directory => EntryKind::Dir,
            T::Symlink => EntryKind::Symlink,
            T::Link => EntryKind::Hardlink,
            // Metadata records, not members.
            T::XGlobalHeader | T::XHeader | T::GNULongName | T::GNULongLink => continue,
            T::Char => EntryKind::Other("character device"),
            T::Block => EntryKind::Other("block device"),
            T::Fifo => EntryKind::Other("FIFO"),
            T::GNUSparse => EntryKind::Other("sparse file"),
            _ => EntryKind::Other("unknown"),
        };
        // `./`, the archive's own root (every Debian data.tar starts with
        // it): the destination itself, nothing to create.
        if kind == EntryKind::Dir
            && raw.split('/').all(|p| p.is_empty() || p == ".")
            && !raw.is_empty()
        {
            continue;
        }
        if let Ok(clean) = sanitize(&raw) {
            seen(&clean);
        }
        match kind {
            EntryKind::Symlink | EntryKind::Hardlink => {
                let target = entry
                    .link_name_bytes()
                    .ok_or_else(|| ex.bad(&raw, "link without a target"))?
                    .into_owned();
                if target.len() > MAX_LINK {
                    return Err(ex.bad(&raw, "link target too long"));
                }
                let target = std::str::from_utf8(&target)
                    .map_err(|_| ex.bad(&raw, "link target is not UTF-8"))?
                    .to_string();
                if is_runfile
                    && kind == EntryKind::Symlink
                    && let Ok(clean) = sanitize(&raw)
                    && let Some(rel) = map_path(&layout, &clean)
                    && rel.components().count() == 1
                    && matches!(rel.to_str(), Some("lib64" | "include" | "lib"))
                {
                    continue;
                }
                if kind == EntryKind::Symlink {
                    ex.symlink(&raw, &target)?;
                } else {
                    ex.hardlink(&raw, &target)?;
                }
            }
            _ => {
                let Some(t) = ex.entry(&raw, &kind)? else {
                    continue;
                };
                if kind == EntryKind::Dir {
                    ex.make_dir(&t)?;
                } else {
                    let size = entry.header().size().map_err(corrupt)?;
                    let exec = entry
                        .header()
                        .mode()
                        .map(|m| m & 0o111 != 0)
                        .unwrap_or(false);
                    ex.write_file(&raw, &t, exec, Some(size), &mut entry)?;
                }
            }
        }
    }
    // After the end-of-archive blocks only zero padding may follow: bytes
    // there are invisible to this reader but not to others (a polyglot).
    let mut rest = ar.into_inner().take(MAX_PADDING + 1);
    let mut buf = [0u8; 8192];
    let mut seen_rest: u64 = 0;
    loop {
        let n = match rest.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(corrupt(e)),
        };
        seen_rest += n as u64;
        if seen_rest > MAX_PADDING || buf[..n].iter().any(|&b| b != 0) {
            return Err(bad_archive(
                name,
                None,
                "trailing data after the end of the tar archive",
            ));
        }
    }
    ex.finish()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::{Error, InstallError};

    /// A tar with raw header control, so hostile names can be written.
    pub fn tar_bytes(entries: &[(&str, tar::EntryType, &[u8], Option<&str>)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data, link) in entries {
            let mut h = tar::Header::new_gnu();
            {
                let name = path.as_bytes();
                let gnu = h.as_gnu_mut().unwrap();
                gnu.name[..name.len()].copy_from_slice(name);
            }
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o755);
            if let Some(l) = link {
                h.set_link_name_literal(l).unwrap();
            }
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    fn run(bytes: &[u8], layout: Layout) -> (tempfile::TempDir, Result<Summary>) {
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let r = unpack(
            bytes,
            "t.tar",
            layout,
            &dest,
            Limits::default(),
            &mut |_| {},
        );
        (d, r)
    }

    #[test]
    fn strips_the_top_directory_and_keeps_links() {
        use tar::EntryType as T;
        let t = tar_bytes(&[
            ("cudart-archive/", T::Directory, b"", None),
            (
                "cudart-archive/lib/libcudart.so.12",
                T::Regular,
                b"ELF",
                None,
            ),
            (
                "cudart-archive/lib/libcudart.so",
                T::Symlink,
                b"",
                Some("libcudart.so.12"),
            ),
            ("cudart-archive/include/cuda.h", T::Regular, b"//", None),
        ]);
        let (d, r) = run(&t, Layout::StripTop);
        r.unwrap();
        let out = d.path().join("out");
        assert_eq!(
            std::fs::read(out.join("lib64/libcudart.so.12")).unwrap(),
            b"ELF"
        );
        assert_eq!(
            std::fs::read_link(out.join("lib64/libcudart.so")).unwrap(),
            Path::new("libcudart.so.12")
        );
        assert!(out.join("include/cuda.h").is_file());
    }

    #[test]
    fn rejects_escaping_entries() {
        use tar::EntryType as T;
        for entries in [
            vec![("top/../../evil", T::Regular, &b"x"[..], None)],
            vec![("/etc/evil", T::Regular, &b"x"[..], None)],
            vec![(
                "top/lib/link",
                T::Symlink,
                &b""[..],
                Some("../../../etc/passwd"),
            )],
            vec![("top/lib/link", T::Symlink, &b""[..], Some("/etc/passwd"))],
            vec![("top/lib/hard", T::Link, &b""[..], Some("../../etc/passwd"))],
            vec![("top/dev/null", T::Char, &b""[..], None)],
            vec![
                ("top/a", T::Regular, &b"1"[..], None),
                ("top/a", T::Regular, &b"2"[..], None),
            ],
        ] {
            let t = tar_bytes(&entries);
            let (d, r) = run(&t, Layout::StripTop);
            assert!(
                matches!(r, Err(Error::Install(InstallError::BadArchive { .. }))),
                "{entries:?}: {r:?}"
            );
            assert!(!d.path().join("evil").exists());
        }
    }

    #[test]
    fn runfile_layout_flattens_targets_and_skips_dir_links() {
        use tar::EntryType as T;
        let t = tar_bytes(&[
            (
                "./builds/cuda_cudart/lib64",
                T::Symlink,
                b"",
                Some("targets/x86_64-linux/lib"),
            ),
            (
                "./builds/cuda_cudart/include",
                T::Symlink,
                b"",
                Some("targets/x86_64-linux/include"),
            ),
            (
                "./builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0",
                T::Regular,
                b"ELF",
                None,
            ),
            (
                "./builds/cuda_cudart/targets/x86_64-linux/include/cuda_runtime.h",
                T::Regular,
                b"//",
                None,
            ),
            ("./builds/cuda_nvcc/bin/nvcc", T::Regular, b"#!", None),
            ("./cuda-installer", T::Regular, b"#!", None),
        ]);
        let layout = Layout::Runfile {
            members: vec!["builds/cuda_cudart".into()],
            optional: vec![],
        };
        let (d, r) = run(&t, layout);
        r.unwrap();
        let out = d.path().join("out");
        assert!(out.join("lib64/libcudart.so.11.0").is_file());
        assert!(out.join("include/cuda_runtime.h").is_file());
        assert!(!out.join("bin").exists());
        assert!(!out.join("cuda-installer").exists());
    }
}
