//! Files that come from elsewhere, and directories cudaenv was given.
//!
//! Every file cudaenv reads is one someone else may have put there: a
//! `.cuda-version` in a clone, a mirror's record, an index page on disk, a
//! loader log the traced program could replace, a `pip.conf`. So reading
//! goes through one function, [`read_bounded`]: opened without blocking (a
//! FIFO never hangs) and without becoming a controlling terminal, checked to
//! be a regular file (not a device such as `/dev/zero`, not a directory),
//! then read up to a cap that the caller states, and refused past it.
//! [`open_regular`] is the same check for a file that is then streamed (a
//! `file://` artifact), where the caller bounds what it reads.
//!
//! Writing under a directory cudaenv was given (a mirror, a modulefile
//! tree) goes through [`create_dirs_within`]: every directory on the way
//! from the given one must be a real directory, not a link, so that a link
//! someone left inside (`DIR/pypi -> elsewhere`) never carries a write out.
//!
//! Files meant to be committed or shared follow the umask (as `git` and
//! `pip` write theirs): [`new_file_mode`].

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Opening failed (missing, permission denied, a loop of links).
    Open(std::io::Error),
    /// It is not a regular file: `a directory`, `a FIFO`, `a device`, `a socket`.
    NotRegular(&'static str),
    /// Larger than the cap (its size, when the file says).
    TooBig { size: u64, max: u64 },
    /// Reading failed part-way.
    Read(std::io::Error),
}

impl ReadError {
    /// Whether the file is simply not there (callers that treat a missing
    /// file as "none" use this).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Open(e) if e.kind() == std::io::ErrorKind::NotFound)
    }

    /// Whether this user may not read it.
    pub fn is_permission_denied(&self) -> bool {
        matches!(self, ReadError::Open(e) | ReadError::Read(e) if e.kind() == std::io::ErrorKind::PermissionDenied)
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Open(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                f.write_str("permission denied: this user may not read it")
            }
            ReadError::Open(e) => write!(f, "cannot open it: {e}"),
            ReadError::NotRegular(what) => write!(f, "it is {what}, not a regular file"),
            ReadError::TooBig { size, max } => {
                write!(
                    f,
                    "it is {size} bytes, more than the {max} such a file may have"
                )
            }
            ReadError::Read(e) => write!(f, "cannot read it: {e}"),
        }
    }
}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> std::io::Error {
        match e {
            ReadError::Open(e) | ReadError::Read(e) => e,
            e => std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        }
    }
}

/// Caps for what cudaenv reads: configuration, metadata, records and index
/// pages are small; loader logs and pip's RECORD files of large wheels are
/// the largest text it reads.
pub const SMALL: u64 = 4 << 20;
pub const LARGE: u64 = 256 << 20;

/// Opens `path` (links followed) for reading if it is a regular file,
/// without blocking on a FIFO and without becoming a controlling terminal;
/// the file is switched back to blocking reads. Returns it with its size.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let file = super::imp::open_untrusted(path).map_err(ReadError::Open)?;
    let meta = file.metadata().map_err(ReadError::Open)?;
    if let Some(what) = super::imp::not_regular(&meta) {
        return Err(ReadError::NotRegular(what));
    }
    // A regular file never blocks, but clear the flag all the same.
    super::imp::set_blocking(&file);
    Ok((file, meta.len()))
}

/// Reads `path` whole if it is a regular file of at most `max` bytes (see
/// the module docs). A file that grows past `max` while read is refused too.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(path)?;
    if size > max {
        return Err(ReadError::TooBig { size, max });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Read)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooBig {
            size: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// `read_bounded` as text (invalid UTF-8 replaced): for configuration and
/// logs, where a stray byte must not make the whole file unreadable.
pub fn read_bounded_text(path: &Path, max: u64) -> Result<String, ReadError> {
    read_bounded(path, max).map(|b| match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The process's umask (0 where the OS has none: Windows).
pub fn umask() -> u32 {
    super::imp::umask()
}

/// The mode a new regular file gets under the umask (`0666 & !umask`).
pub fn new_file_mode() -> u32 {
    0o666 & !umask()
}

/// Why a write under a given directory was refused.
#[derive(Debug)]
pub enum Confined {
    /// A component on the way is a symbolic link (or not a directory).
    Link(PathBuf),
    /// `rel` is not a plain relative path.
    NotRelative(String),
    Io(PathBuf, std::io::Error),
}

/// Creates the directories of `rel` (relative, no `..`) under `base`, each
/// a real directory, and returns `base/rel`. A component that exists as a
/// symbolic link or as anything but a directory is refused, so nothing is
/// ever written through a link left inside `base`. The last component of
/// `rel` is not created; when it exists it must not be a link either.
pub fn create_dirs_within(base: &Path, rel: &Path) -> Result<PathBuf, Confined> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            _ => return Err(Confined::NotRelative(rel.display().to_string())),
        }
    }
    let Some((last, dirs)) = parts.split_last() else {
        return Err(Confined::NotRelative(rel.display().to_string()));
    };
    let mut at = base.to_path_buf();
    for d in dirs {
        at.push(d);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => return Err(Confined::Link(at)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::create_dir(&at) {
                    Ok(()) => {}
                    // Another run created it meanwhile: check it again.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_dir()) {
                            return Err(Confined::Link(at));
                        }
                    }
                    Err(e) => return Err(Confined::Io(at, e)),
                }
            }
            Err(e) => return Err(Confined::Io(at, e)),
        }
    }
    at.push(last);
    if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Confined::Link(at));
    }
    Ok(at)
}

/// `create_dirs_within` with its refusals as cudaenv's errors; `base`
/// itself (the directory given) is created when it is new.
pub fn within(base: &Path, rel: &Path) -> crate::error::Result<PathBuf> {
    use crate::error::Error;
    std::fs::create_dir_all(base).map_err(Error::io("cannot create", base))?;
    create_dirs_within(base, rel).map_err(|e| match e {
        Confined::Link(path) => Error::WriteOutside {
            dir: base.to_path_buf(),
            path,
        },
        Confined::NotRelative(rel) => Error::WriteOutside {
            dir: base.to_path_buf(),
            path: PathBuf::from(rel),
        },
        Confined::Io(path, e) => Error::io("cannot create", path)(e),
    })
}

/// Bytes free for this user on the file system holding `path` (or the
/// nearest existing directory above it); `None` when it cannot be told.
pub fn free_space(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    super::imp::free_space(existing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn only_regular_files_under_the_cap_are_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(read_bounded(&f, 5).unwrap(), b"hello");
        assert!(matches!(
            read_bounded(&f, 4),
            Err(ReadError::TooBig { size: 5, max: 4 })
        ));
        assert!(matches!(
            read_bounded(d.path(), 10),
            Err(ReadError::NotRegular("a directory"))
        ));
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 10),
            Err(ReadError::NotRegular("a device"))
        ));
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_bounded(&fifo, 10),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        assert!(
            read_bounded(&d.path().join("missing"), 10)
                .unwrap_err()
                .is_not_found()
        );
    }

    #[test]
    #[cfg(unix)]
    fn directories_are_created_within_and_links_refused() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("base");
        std::fs::create_dir(&base).unwrap();
        let p = create_dirs_within(&base, Path::new("a/b/f")).unwrap();
        assert_eq!(p, base.join("a/b/f"));
        assert!(base.join("a/b").is_dir());
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("l")).unwrap();
        assert!(matches!(
            create_dirs_within(&base, Path::new("l/x/f")),
            Err(Confined::Link(p)) if p == base.join("l")
        ));
        std::os::unix::fs::symlink(outside.join("v"), base.join("a/b/v")).unwrap();
        assert!(matches!(
            create_dirs_within(&base, Path::new("a/b/v")),
            Err(Confined::Link(_))
        ));
        assert!(matches!(
            create_dirs_within(&base, Path::new("../x")),
            Err(Confined::NotRelative(_))
        ));
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn new_files_follow_the_umask() {
        assert_eq!(new_file_mode() & !0o666, 0);
        assert_eq!(new_file_mode(), 0o666 & !umask());
    }
}
