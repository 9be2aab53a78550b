//! NVIDIA's `.run` installers, taken apart without ever being executed.
//!
//! A runfile is a makeself archive: a shell script of a known number of
//! lines, followed by a compressed tar payload. The script says where the
//! payload starts (`offset=`head -n N "$0" | wc -c`` — the byte length of
//! its first N lines, N given literally or through a `skip=` variable) and
//! how long it is (`filesizes="…"`). cudaenv reads those two numbers as
//! data, checks that the payload lies inside the file, recognises the
//! compression by its magic bytes (gzip or xz), and streams the payload
//! through the same tar unpacker as every other archive, keeping only the
//! component directories the plan names (`Layout::Runfile`). Every
//! `members` directory must be present in the payload; a runfile lacking one
//! is rejected rather than installed half.
//!
//! The payload layout (learned from how distributions unpack these files):
//! since CUDA 11.0 one directory per component under `builds/`
//! (`builds/cuda_cudart`, `builds/libcublas`, `builds/cuda_cupti/extras/CUPTI`,
//! …, each with `bin/` and `targets/<triple>/{lib,include}`); CUDA 10.1 and
//! 10.2 have a single `builds/cuda-toolkit` tree. CUDA 10.0's payload holds a
//! second runfile, `run_files/cuda-linux.<ver>-<build>.run`, whose payload is
//! the toolkit tree itself (`Layout::NestedRunfile`): that inner runfile is
//! copied out of the stream into a temporary file (bounded like any member),
//! parsed the same way, and its payload taken whole.

use crate::error::{Error, InstallError, Result};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{Limits, Summary};
use crate::install::sources::Layout;

/// The script part is small (CUDA's is ~20 KB); a "header" larger than this is not one.
const MAX_HEADER: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Xz,
}

/// Where the payload is, as the script declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Byte offset of the payload.
    pub offset: u64,
    /// Payload length (sum of `filesizes`).
    pub length: u64,
    pub compression: Compression,
    /// makeself's `label=` (e.g. "CUDA 11.2.2 …"), for messages.
    pub label: Option<String>,
}

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    Error::Install(InstallError::BadRunfile {
        path: path.to_path_buf(),
        reason: reason.into(),
    })
}

/// The value of a shell assignment `name="value"` or `name=value` at the start of a line.
fn assignment<'a>(script: &'a str, name: &str) -> Option<&'a str> {
    script.lines().find_map(|l| {
        let v = l.trim_start().strip_prefix(name)?.strip_prefix('=')?;
        let v = v.trim();
        Some(
            v.strip_prefix('"')
                .and_then(|v| v.split_once('"').map(|(a, _)| a))
                .unwrap_or_else(|| v.split_whitespace().next().unwrap_or("")),
        )
    })
}

/// Parses the makeself script at the start of `file` (`len` bytes long).
pub fn parse_header(file: &mut File, path: &Path, len: u64) -> Result<Header> {
    let mut head = Vec::with_capacity(64 * 1024);
    file.seek(SeekFrom::Start(0))
        .map_err(Error::io("cannot read", path))?;
    file.by_ref()
        .take(MAX_HEADER as u64)
        .read_to_end(&mut head)
        .map_err(Error::io("cannot read", path))?;
    if !head.starts_with(b"#!") {
        return Err(bad(path, "it does not start with a shell script"));
    }
    // The script is text; the payload after it is not. Only look at the
    // valid UTF-8 prefix (the script ends well before the first binary byte).
    let text = match std::str::from_utf8(&head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).expect("valid prefix"),
    };
    // `offset=`head -n 657 "$0" | wc -c | tr -d " "`` (or `head -n "$skip" …`).
    let lines: u64 = {
        let after = text
            .lines()
            .filter(|l| l.trim_start().starts_with("offset="))
            .find_map(|l| {
                l.split_once("head -n")
                    .map(|(_, r)| r.trim_start().to_string())
            })
            .ok_or_else(|| bad(path, "no `offset=` line: not a makeself archive"))?;
        let token: String = after
            .trim_start_matches('"')
            .chars()
            .take_while(|c| {
                c.is_ascii_alphanumeric() || *c == '$' || *c == '_' || *c == '{' || *c == '}'
            })
            .collect();
        let literal = if let Some(var) = token.strip_prefix('$') {
            let var = var.trim_start_matches('{').trim_end_matches('}');
            assignment(text, var)
                .ok_or_else(|| bad(path, format!("`{var}` is not set in the script")))?
        } else {
            token.as_str()
        };
        literal.parse().map_err(|_| {
            bad(
                path,
                format!("the script's line count `{literal}` is not a number"),
            )
        })?
    };
    if lines == 0 {
        return Err(bad(path, "the script declares no header lines"));
    }
    // The byte length of the first `lines` lines.
    let mut offset: u64 = 0;
    let mut count = 0;
    for (i, b) in head.iter().enumerate() {
        if *b == b'\n' {
            count += 1;
            if count == lines {
                offset = i as u64 + 1;
                break;
            }
        }
    }
    if count < lines {
        return Err(bad(
            path,
            format!("the header claims {lines} lines, which run past the end of the script"),
        ));
    }
    let sizes = assignment(text, "filesizes")
        .ok_or_else(|| bad(path, "no `filesizes=` line: not a makeself archive"))?;
    let mut length: u64 = 0;
    for s in sizes.split_whitespace() {
        let n: u64 = s
            .parse()
            .map_err(|_| bad(path, format!("payload size `{s}` is not a number")))?;
        length = length
            .checked_add(n)
            .ok_or_else(|| bad(path, "payload sizes overflow"))?;
    }
    if length == 0 {
        return Err(bad(path, "the header declares an empty payload"));
    }
    match offset.checked_add(length) {
        Some(end) if end <= len => {}
        _ => {
            return Err(bad(
                path,
                format!(
                    "the header points past the end of the file (payload at {offset} + {length} bytes, file is {len} bytes)"
                ),
            ));
        }
    }
    let mut magic = [0u8; 6];
    file.seek(SeekFrom::Start(offset))
        .map_err(Error::io("cannot read", path))?;
    file.read_exact(&mut magic)
        .map_err(|_| bad(path, "the payload is truncated"))?;
    let compression = if magic[..2] == [0x1f, 0x8b] {
        Compression::Gzip
    } else if magic == [0xfd, b'7', b'z', b'X', b'Z', 0] {
        Compression::Xz
    } else {
        return Err(bad(path, "the payload is neither gzip nor xz compressed"));
    };
    Ok(Header {
        offset,
        length,
        compression,
        label: assignment(text, "label").map(String::from),
    })
}

/// Unpacks the directories `layout` names from the runfile at `path` into the fresh `dest`.
pub fn unpack(
    path: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
) -> Result<Summary> {
    match &layout {
        Layout::NestedRunfile { installer } => {
            let inner = extract_nested(path, installer, dest, limits)?;
            unpack_payload(inner.path(), name, layout.clone(), dest, limits, &[])
        }
        Layout::Runfile { members, .. } => {
            let members: Vec<PathBuf> = members.iter().map(PathBuf::from).collect();
            unpack_payload(path, name, layout.clone(), dest, limits, &members)
        }
        _ => Err(bad(path, "a runfile needs a runfile layout")),
    }
}

/// Opens a runfile's payload as a decompressed stream.
fn payload(path: &Path) -> Result<Box<dyn Read>> {
    let mut file = File::open(path).map_err(Error::io("cannot open", path))?;
    let len = file
        .metadata()
        .map_err(Error::io("cannot read", path))?
        .len();
    let header = parse_header(&mut file, path, len)?;
    file.seek(SeekFrom::Start(header.offset))
        .map_err(Error::io("cannot read", path))?;
    let raw = BufReader::with_capacity(1 << 20, file.take(header.length));
    Ok(match header.compression {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(raw)),
    })
}

/// Copies `run_files/<installer>*.run` out of the runfile's payload into a
/// temporary file beside `dest` (never executed: it is parsed next).
fn extract_nested(
    path: &Path,
    installer: &str,
    dest: &Path,
    limits: Limits,
) -> Result<tempfile::NamedTempFile> {
    let corrupt =
        |e: std::io::Error| bad(path, format!("its payload is not a valid tar stream: {e}"));
    let mut ar = tar::Archive::new(payload(path)?);
    for entry in ar.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let raw = entry.path_bytes().into_owned();
        let Ok(clean) = super::sanitize(&String::from_utf8_lossy(&raw)) else {
            continue;
        };
        let wanted = clean.parent() == Some(Path::new("run_files"))
            && clean
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(installer) && n.ends_with(".run"));
        if !wanted {
            continue;
        }
        let size = entry.header().size().map_err(corrupt)?;
        if size > limits.max_total_bytes {
            return Err(bad(path, "the nested installer exceeds the size limit"));
        }
        let dir = dest.parent().unwrap_or(dest);
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(Error::io("cannot create a temporary file in", dir))?;
        let copied = std::io::copy(&mut (&mut entry).take(size), tmp.as_file_mut())
            .map_err(|e| bad(path, format!("cannot read the nested installer: {e}")))?;
        if copied != size {
            return Err(bad(path, "the nested installer is truncated"));
        }
        return Ok(tmp);
    }
    Err(bad(
        path,
        format!("its payload lacks run_files/{installer}*.run"),
    ))
}

/// Streams a runfile's payload through the tar unpacker; every `members`
/// directory must have been seen.
fn unpack_payload(
    path: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    members: &[PathBuf],
) -> Result<Summary> {
    let stream = payload(path)?;
    let mut found = vec![false; members.len()];
    let mut seen = |p: &Path| {
        for (i, m) in members.iter().enumerate() {
            if !found[i] && p.starts_with(m) {
                found[i] = true;
            }
        }
    };
    let summary = super::tar::unpack(stream, name, layout, dest, limits, &mut seen)?;
    let missing: Vec<String> = members
        .iter()
        .zip(&found)
        .filter(|(_, f)| !**f)
        .map(|(m, _)| m.display().to_string())
        .collect();
    if !missing.is_empty() {
        return Err(bad(
            path,
            format!("its payload lacks {}", missing.join(", ")),
        ));
    }
    Ok(summary)
}

/// Builds a runfile in makeself's format around a tar payload (for tests and
/// fixtures): the script is inert text, the payload gzip- or xz-compressed.
pub fn build(tar: &[u8], compression: Compression, label: &str) -> Vec<u8> {
    use std::io::Write;
    let payload = match compression {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(tar).expect("in memory");
            e.finish().expect("in memory")
        }
        Compression::Xz => {
            let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(tar).expect("in memory");
            e.finish().expect("in memory")
        }
    };
    let decompress = match compression {
        Compression::Gzip => "gzip -cd",
        Compression::Xz => "xz -d",
    };
    // The script mirrors makeself's: a fixed number of lines, the offset
    // computed from them, the sizes of the payload.
    let mut lines = vec![
        "#!/bin/sh".to_string(),
        "# This script was generated using Makeself 2.1.5".to_string(),
        String::new(),
        "CRCsum=\"0000000000\"".to_string(),
        "MD5=\"00000000000000000000000000000000\"".to_string(),
        "TMPROOT=${TMPDIR:=/tmp}".to_string(),
        String::new(),
        format!("label=\"{label}\""),
        "script=\"./cuda-installer\"".to_string(),
        "targetdir=\"pkg\"".to_string(),
        format!("filesizes=\"{}\"", payload.len()),
        "keep=\"n\"".to_string(),
    ];
    let skip_line = lines.len();
    lines.push(String::new());
    lines.push(format!(
        "MS_dd \"$0\" $offset $s | eval \"{decompress}\" | ( cd \"$tmpdir\"; tar xf - )"
    ));
    lines.push("exit 0".to_string());
    let total = lines.len();
    lines[skip_line] = format!("offset=`head -n {total} \"$0\" | wc -c | tr -d \" \"`");
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out.extend_from_slice(&payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::unpack::tar::tests::tar_bytes;
    use tar::EntryType as T;

    fn payload() -> Vec<u8> {
        tar_bytes(&[
            (
                "./builds/cuda_cudart/lib64",
                T::Symlink,
                b"",
                Some("targets/x86_64-linux/lib"),
            ),
            (
                "./builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0",
                T::Regular,
                b"ELF",
                None,
            ),
            (
                "./builds/libcublas/targets/x86_64-linux/lib/libcublas.so.11",
                T::Regular,
                b"ELF",
                None,
            ),
            ("./builds/cuda_nvcc/bin/nvcc", T::Regular, b"#!", None),
        ])
    }

    fn write(dir: &Path, bytes: &[u8]) -> PathBuf {
        let p = dir.join("x.run");
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn layout(members: &[&str]) -> Layout {
        Layout::Runfile {
            members: members.iter().map(|s| s.to_string()).collect(),
            optional: vec![],
        }
    }

    #[test]
    fn parses_and_unpacks_both_compressions() {
        for c in [Compression::Gzip, Compression::Xz] {
            let d = tempfile::tempdir().unwrap();
            let run = write(d.path(), &build(&payload(), c, "CUDA 11.2.2"));
            let mut f = File::open(&run).unwrap();
            let len = f.metadata().unwrap().len();
            let h = parse_header(&mut f, &run, len).unwrap();
            assert_eq!(h.compression, c);
            assert_eq!(h.offset + h.length, len);
            assert_eq!(h.label.as_deref(), Some("CUDA 11.2.2"));
            let dest = d.path().join("out");
            std::fs::create_dir(&dest).unwrap();
            unpack(
                &run,
                "x.run",
                layout(&["builds/cuda_cudart", "builds/libcublas"]),
                &dest,
                Limits::default(),
            )
            .unwrap();
            assert!(dest.join("lib64/libcudart.so.11.0").is_file());
            assert!(dest.join("lib64/libcublas.so.11").is_file());
            assert!(!dest.join("bin/nvcc").exists());
        }
    }

    #[test]
    fn skip_variable_form_is_understood() {
        // makeself 2.4 writes `head -n "$skip"` with `skip="N"` set earlier.
        let d = tempfile::tempdir().unwrap();
        let whole = build(&payload(), Compression::Gzip, "x");
        let mut f = File::open(write(d.path(), &whole)).unwrap();
        let h = parse_header(&mut f, &d.path().join("x.run"), whole.len() as u64).unwrap();
        let gz = &whole[h.offset as usize..];
        let script = format!(
            "#!/bin/sh\nskip=\"5\"\nfilesizes=\"{}\"\noffset=`head -n \"$skip\" \"$0\" | wc -c | tr -d \" \"`\nexit 0\n",
            gz.len()
        );
        let mut b = script.into_bytes();
        b.extend_from_slice(gz);
        let run = write(d.path(), &b);
        let mut f = File::open(&run).unwrap();
        let h2 = parse_header(&mut f, &run, b.len() as u64).unwrap();
        assert_eq!(h2.length, gz.len() as u64);
        assert_eq!(h2.offset as usize + gz.len(), b.len());
    }

    #[test]
    fn rejects_hostile_headers() {
        let good = build(&payload(), Compression::Gzip, "x");
        let d = tempfile::tempdir().unwrap();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            // The payload claims more bytes than the file has.
            ("past the end", {
                let s = String::from_utf8_lossy(&good).into_owned();
                let n: String = s
                    .split("filesizes=\"")
                    .nth(1)
                    .unwrap()
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let big = format!("{}", n.parse::<u64>().unwrap() * 1000);
                let mut b = good.clone();
                let from = format!("filesizes=\"{n}\"");
                let i = b
                    .windows(from.len())
                    .position(|w| w == from.as_bytes())
                    .unwrap();
                b.splice(
                    i..i + from.len(),
                    format!("filesizes=\"{big}\"").into_bytes(),
                );
                b
            }),
            // More header lines than the file has.
            ("lines past the end", {
                let mut b = good.clone();
                let from = b"head -n 15 ";
                let i = b.windows(from.len()).position(|w| w == from).unwrap();
                b.splice(i..i + from.len(), b"head -n 99999999 ".to_vec());
                b
            }),
            ("truncated", good[..good.len() - 10].to_vec()),
            ("not a script", b"\x7fELF".to_vec()),
            ("no offset", b"#!/bin/sh\necho hi\n".to_vec()),
        ];
        for (what, bytes) in cases {
            let run = write(d.path(), &bytes);
            let dest = d.path().join(format!("out-{}", what.replace(' ', "_")));
            std::fs::create_dir(&dest).unwrap();
            let r = unpack(
                &run,
                "x.run",
                layout(&["builds/cuda_cudart"]),
                &dest,
                Limits::default(),
            );
            assert!(
                matches!(r, Err(Error::Install(InstallError::BadRunfile { .. }))),
                "{what}: {r:?}"
            );
            assert_eq!(
                std::fs::read_dir(&dest).unwrap().count(),
                0,
                "{what}: nothing written"
            );
        }
    }

    #[test]
    fn nested_runfiles_are_taken_whole() {
        // CUDA 10.0: run_files/cuda-linux…run inside, the toolkit tree inside that.
        let inner_tar = tar_bytes(&[
            ("./lib64/libcudart.so.10.0.130", T::Regular, b"ELF", None),
            (
                "./lib64/libcudart.so.10.0",
                T::Symlink,
                b"",
                Some("libcudart.so.10.0.130"),
            ),
            ("./include/cuda_runtime.h", T::Regular, b"//", None),
            ("./bin/nvcc", T::Regular, b"#!", None),
        ]);
        let inner = build(&inner_tar, Compression::Gzip, "cuda-linux");
        let outer_tar = tar_bytes(&[
            (
                "./run_files/cuda-samples.10.0.130-24817639.run",
                T::Regular,
                b"x",
                None,
            ),
            (
                "./run_files/cuda-linux.10.0.130-24817639.run",
                T::Regular,
                &inner,
                None,
            ),
            ("./cuda-installer.pl", T::Regular, b"#!", None),
        ]);
        let d = tempfile::tempdir().unwrap();
        let run = write(d.path(), &build(&outer_tar, Compression::Gzip, "CUDA 10.0"));
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let layout = Layout::NestedRunfile {
            installer: "cuda-linux".into(),
        };
        unpack(&run, "x.run", layout.clone(), &dest, Limits::default()).unwrap();
        assert!(dest.join("lib64/libcudart.so.10.0.130").is_file());
        assert!(dest.join("lib64/libcudart.so.10.0").is_symlink());
        assert!(dest.join("bin/nvcc").is_file());
        assert!(!dest.join("cuda-installer.pl").exists());
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            names.len(),
            2,
            "the temporary inner runfile is gone: {names:?}"
        );

        // Without the inner installer: an error naming it.
        let outer_tar = tar_bytes(&[("./run_files/other.run", T::Regular, b"x", None)]);
        let run = write(d.path(), &build(&outer_tar, Compression::Xz, "CUDA 10.0"));
        let dest = d.path().join("out2");
        std::fs::create_dir(&dest).unwrap();
        let r = unpack(&run, "x.run", layout, &dest, Limits::default());
        let Err(Error::Install(InstallError::BadRunfile { reason, .. })) = r else {
            panic!("{r:?}")
        };
        assert!(reason.contains("run_files/cuda-linux"), "{reason}");
    }

    #[test]
    fn missing_members_are_an_error() {
        let d = tempfile::tempdir().unwrap();
        let run = write(d.path(), &build(&payload(), Compression::Xz, "x"));
        let dest = d.path().join("out");
        std::fs::create_dir(&dest).unwrap();
        let r = unpack(
            &run,
            "x.run",
            layout(&["builds/cuda_cudart", "builds/libcufft"]),
            &dest,
            Limits::default(),
        );
        let Err(Error::Install(InstallError::BadRunfile { reason, .. })) = r else {
            panic!("{r:?}")
        };
        assert!(reason.contains("builds/libcufft"), "{reason}");
    }
}
