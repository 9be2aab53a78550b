//! Reading and writing `.cuda-version` files (and the global version file),
//! and reading the `cuda` line of asdf/mise `.tool-versions` files.
//!
//! These files arrive from cloned repositories, so they are untrusted input.
//! The reader is deliberately narrow:
//! - only regular files are read (a FIFO, a device such as `/dev/zero` behind a
//!   symlink, or a directory is an error, never a hang); the file is opened
//!   non-blocking and checked with `fstat` on the open descriptor;
//! - at most `MAX_BYTES` are read;
//! - the content must be UTF-8 (a leading BOM, CRLF line ends and surrounding
//!   whitespace are tolerated), comments start with `#`;
//! - exactly one spec, parsed by `Spec::parse`; the value is never used as a
//!   path, so `../../x`, `/etc` or `$(…)` are simply invalid specs.
//!
//! Errors name the file and the line.
//!
//! `.tool-versions` (asdf's format, also read by mise) holds one `TOOL VERSION…`
//! line per tool. Only the `cuda` line matters here: its first version is the
//! pin (asdf's later versions are fallbacks, which cudaenv does not try), read
//! by the same parser. A file without a `cuda` line pins nothing and the search
//! goes on upwards; a file cudaenv cannot read, or whose `cuda` line is broken,
//! is an error, as a broken `.cuda-version` is, since it might pin a version.
//! In one directory `.cuda-version` is looked at first.

use std::path::{Path, PathBuf};

use crate::error::{ActivationError, Error, Result};
use crate::spec::Spec;

/// The per-project file name.
pub const FILE_NAME: &str = ".cuda-version";
/// Larger files are refused: a real one is a single short line.
pub const MAX_BYTES: u64 = 4096;
/// asdf's and mise's per-project file; its `cuda` line is a pin.
pub const TOOL_VERSIONS: &str = ".tool-versions";
/// The tool name of cudaenv's line in `.tool-versions`.
pub const TOOL_NAME: &str = "cuda";
/// Larger `.tool-versions` files are refused: one line per tool is short.
pub const TOOL_VERSIONS_MAX_BYTES: u64 = 64 * 1024;

/// A spec read from a file, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub spec: Spec,
    pub path: PathBuf,
    pub line: usize,
}

fn invalid(path: &Path, line: usize, reason: impl Into<String>) -> Error {
    Error::Activation(ActivationError::InvalidVersionFile {
        path: path.to_path_buf(),
        line,
        reason: reason.into(),
    })
}

/// Reads and parses a version file.
pub fn read(path: &Path) -> Result<Pinned> {
    let bytes = read_small_regular(
        path,
        MAX_BYTES,
        |n| {
            format!(
                "it is {n} bytes; a version file holds one short line (at most {MAX_BYTES} bytes)"
            )
        },
        |reason| invalid(path, 0, reason),
    )?;
    parse(&bytes, path)
}

/// Reads a `.tool-versions` file: its `cuda` pin, or `None` when it has no
/// `cuda` line.
pub fn read_tool_versions(path: &Path) -> Result<Option<Pinned>> {
    let bytes = read_small_regular(
        path,
        TOOL_VERSIONS_MAX_BYTES,
        |n| {
            format!(
                "it is {n} bytes; a .tool-versions file holds one short line per tool (at most {TOOL_VERSIONS_MAX_BYTES} bytes)"
            )
        },
        |reason| invalid(path, 0, reason),
    )?;
    parse_tool_versions(&bytes, path)
}

/// Reads a small file that arrived with a repository (`.cuda-version`,
/// `.tool-versions`, `cuda.lock`) through the one bounded reader
/// (`os::fs::read_bounded`: a FIFO never hangs, a device is refused). A
/// file this user may not read is reported as that (`UnreadableFile`, with
/// its mode and owner), not as a malformed file; every other refusal is
/// `invalid(reason)`, with `too_big` wording the size limit.
pub fn read_small_regular(
    path: &Path,
    max: u64,
    too_big: impl Fn(u64) -> String,
    invalid: impl Fn(String) -> Error,
) -> Result<Vec<u8>> {
    use crate::os::fs::ReadError;
    crate::os::fs::read_bounded(path, max).map_err(|e| match e {
        e if e.is_permission_denied() => {
            let meta = std::fs::metadata(path).ok();
            Error::Activation(ActivationError::UnreadableFile {
                path: path.to_path_buf(),
                mode: meta.as_ref().and_then(crate::os::permission_bits),
                owner: meta.as_ref().and_then(crate::os::owner),
            })
        }
        ReadError::TooBig { size, .. } => invalid(too_big(size)),
        e => invalid(e.to_string()),
    })
}

/// Parses the content of a version file; `path` is only used in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Pinned> {
    let text = decode(bytes, path)?;
    let mut found: Option<Pinned> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.contains('\0') {
            return Err(invalid(path, lineno, "it contains a NUL byte"));
        }
        if let Some(first) = &found {
            return Err(invalid(
                path,
                lineno,
                format!(
                    "a second version `{}` follows `{}` on line {}; a version file holds exactly one",
                    excerpt(line),
                    first.spec,
                    first.line
                ),
            ));
        }
        let spec = Spec::parse_reason(line).map_err(|reason| {
            invalid(
                path,
                lineno,
                format!("`{}` is not a version spec: {reason}", excerpt(line)),
            )
        })?;
        found = Some(Pinned {
            spec,
            path: path.to_path_buf(),
            line: lineno,
        });
    }
    found.ok_or_else(|| {
        invalid(
            path,
            1,
            "it names no version (it is empty or holds only comments)",
        )
    })
}

/// The text of a version file, without a leading BOM.
fn decode<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        invalid(path, line, "it is not valid UTF-8")
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Parses a `.tool-versions` file's `cuda` line; `path` is only used in
/// messages. Other tools' lines are not looked at beyond their first word, so
/// a line cudaenv does not understand cannot break a pin it does not hold.
pub fn parse_tool_versions(bytes: &[u8], path: &Path) -> Result<Option<Pinned>> {
    let text = decode(bytes, path)?;
    let mut found: Option<Pinned> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        // asdf allows a comment after the versions.
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let line = line.split_once('#').map_or(line, |(l, _)| l);
        let mut words = line.split_ascii_whitespace();
        if words.next() != Some(TOOL_NAME) {
            continue;
        }
        if line.contains('\0') {
            return Err(invalid(path, lineno, "its cuda line contains a NUL byte"));
        }
        if let Some(first) = &found {
            return Err(invalid(
                path,
                lineno,
                format!(
                    "a second `{TOOL_NAME}` line follows the one on line {}; a .tool-versions file holds one line per tool",
                    first.line
                ),
            ));
        }
        let Some(version) = words.next() else {
            return Err(invalid(
                path,
                lineno,
                format!("its `{TOOL_NAME}` line names no version"),
            ));
        };
        let spec = Spec::parse_reason(version).map_err(|reason| {
            invalid(
                path,
                lineno,
                format!("`{}` is not a version spec: {reason}", excerpt(version)),
            )
        })?;
        found = Some(Pinned {
            spec,
            path: path.to_path_buf(),
            line: lineno,
        });
    }
    Ok(found)
}

/// The start of an offending line, escaped, for messages: a version file may
/// be any file a repository links there, and an error must not dump it.
fn excerpt(line: &str) -> String {
    const MAX_CHARS: usize = 48;
    let mut out: String = line
        .chars()
        .take(MAX_CHARS)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if line.chars().count() > MAX_CHARS {
        out.push('…');
    }
    out
}

/// Looks for a pin in `start` and each parent directory: in each, first
/// `.cuda-version`, then the `cuda` line of `.tool-versions`.
///
/// Returns the first one found. Anything at either name that is not a
/// readable, valid file is an error rather than being skipped, so a broken
/// pin is never silently replaced by a parent's; a `.tool-versions` without a
/// `cuda` line is no pin, and the search goes on.
pub fn find(start: &Path) -> Result<Option<Pinned>> {
    for dir in start.ancestors() {
        let candidate = dir.join(FILE_NAME);
        if exists(&candidate)? {
            return read(&candidate).map(Some);
        }
        let tools = dir.join(TOOL_VERSIONS);
        if exists(&tools)?
            && let Some(pinned) = read_tool_versions(&tools)?
        {
            return Ok(Some(pinned));
        }
    }
    Ok(None)
}

/// Is there anything at `path` (a dangling link counts: it is an error to
/// report, not "no file")?
fn exists(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(invalid(path, 0, format!("cannot look at it: {e}")))
        }
        Err(_) => Ok(false),
    }
}

/// Writes `spec` to `path` atomically (temporary file + rename), so a reader
/// never sees a half-written file.
pub fn write(path: &Path, spec: &Spec) -> Result<()> {
    crate::os::write_atomically(path, format!("{spec}\n").as_bytes(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[u8]) -> Result<Pinned> {
        parse(s, Path::new("/x/.cuda-version"))
    }

    #[test]
    fn accepts_tolerated_forms() {
        for ok in [
            &b"12.4\n"[..],
            b"12.4",
            b"\xef\xbb\xbf12.4\r\n",
            b"# pinned for tf\n\n  12.4  \n",
            b"12.4\r\n# trailing comment\r\n",
        ] {
            assert_eq!(p(ok).unwrap().spec.to_string(), "12.4", "{ok:?}");
        }
    }

    fn t(s: &[u8]) -> Result<Option<Pinned>> {
        parse_tool_versions(s, Path::new("/x/.tool-versions"))
    }

    #[test]
    fn tool_versions_cuda_line() {
        let pin = |s: &[u8]| t(s).unwrap().map(|p| (p.spec.to_string(), p.line));
        assert_eq!(pin(b"cuda 12.4\n"), Some(("12.4".into(), 1)));
        assert_eq!(
            pin(b"# tools\npython 3.11.9 system\n\tcuda   12.4+cudnn9  11.8 # fallback\r\nnodejs lts\n"),
            Some(("12.4+cudnn9".into(), 3))
        );
        assert_eq!(pin(b"\xef\xbb\xbfcuda system"), Some(("system".into(), 1)));
        assert_eq!(pin(b"python 3.12\ncudatoolkit 12\n# cuda 11.8\n"), None);
        assert_eq!(pin(b""), None);
        assert_eq!(
            pin(b"nodejs \x1b]0;x\x07\n"),
            None,
            "other tools are not parsed"
        );
        for bad in [
            &b"cuda\n"[..],
            b"cuda   # none\n",
            b"cuda 12.4\ncuda 11.8\n",
            b"cuda ../../x\n",
            b"cuda path:/opt/cuda\n",
            b"cuda ref:main\n",
            b"cuda $(id)\n",
            b"cuda 12.4\0\n",
            b"cuda 12.4\xff\n",
        ] {
            let e = t(bad).unwrap_err();
            assert!(e.to_string().contains("/x/.tool-versions"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn rejects_hostile_forms_with_line() {
        let e = p(b"# c\n../../x\n").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Activation(ActivationError::InvalidVersionFile { line: 2, .. })
            ),
            "{e}"
        );
        for bad in [
            &b""[..],
            b"   \n",
            b"# only\n",
            b"12.4\n11.8\n",
            b"12.4\0",
            b"\xff\xfe",
            b"$(id)",
            b"`id`",
            b"12.4;rm -rf ~",
            b"/etc",
            b"~/x",
            b"12.*",
            b"..",
        ] {
            let e = p(bad).unwrap_err();
            assert!(e.to_string().contains("/x/.cuda-version"), "{e}");
        }
    }
}
