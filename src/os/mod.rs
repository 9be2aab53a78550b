//! The platform layer: every operation on the operating system that several
//! capabilities need, kept in one place so each exists once (as uv keeps them
//! in `uv-fs`) and so this is the only folder that knows which OS it runs on:
//!
//! - `process`: running a child with a deadline that nothing can outlast;
//! - `path_list`: `:`-separated lists (`PATH`, `LD_LIBRARY_PATH`) and
//!   looking programs up in them;
//! - `lock`: the exclusive lock file, which says when it waits;
//! - `dylib`: libraries opened at run time (the driver binding,
//!   `machine::libcuda`, is built on it);
//! - `hash`: sha256 of bytes, readers and files;
//! - `platform`: the operating system and CPU pair CUDA is built for;
//! - here: atomic small-file writes, the executable-file check, symlinks.
//!
//! Nothing here knows the terminal or the store: callers pass in how to
//! tell the user something (`lock::Waiting`).

pub mod dylib;
pub mod hash;
pub mod lock;
pub mod path_list;
pub mod platform;
pub mod process;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// How `write_atomically` names its temporary files (a process killed
/// mid-write leaves one behind; cleaners recognise it by this).
pub const TEMP_PREFIX: &str = ".cudaenv-tmp.";

/// Writes `bytes` to `path` so that a reader sees the old file or the new one,
/// never half of one: a temporary file in the same directory (created if
/// needed), renamed over `path`. `mode` sets the new file's permissions (the
/// temporary file's are 0600) before it becomes visible.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(Error::io("cannot create", dir))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(Error::io("cannot create a temporary file in", dir))?;
    tmp.write_all(bytes)
        .map_err(Error::io("cannot write", tmp.path().to_path_buf()))?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(Error::io(
                "cannot set the mode of",
                tmp.path().to_path_buf(),
            ))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::io("cannot write", path)(e.error))?;
    Ok(())
}

/// The metadata of `p` (symlinks followed) if it is a regular file with an
/// execute bit: what `execvp` would run.
pub fn executable_file(p: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Creates the symbolic link `link` naming `target` (as given: a relative
/// target is relative to the link's directory). Every link cudaenv makes
/// goes through here and the `symlink` crate, whose file/directory
/// distinction is what Windows needs: the kind is that of what `target`
/// names now, a file when it names nothing (yet).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let resolved = link.parent().unwrap_or(Path::new(".")).join(target);
    if resolved.is_dir() {
        ::symlink::symlink_dir(target, link)
    } else {
        ::symlink::symlink_file(target, link)
    }
}

/// Is `p` a regular file (symlinks followed) with an execute bit?
pub fn is_executable_file(p: &Path) -> bool {
    executable_file(p).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_name_their_target_as_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lib64")).unwrap();
        std::fs::write(dir.path().join("lib64/a.so.1"), "x").unwrap();
        symlink(Path::new("lib64"), &dir.path().join("lib")).unwrap();
        symlink(Path::new("a.so.1"), &dir.path().join("lib64/a.so")).unwrap();
        symlink(Path::new("missing"), &dir.path().join("dangling")).unwrap();
        assert_eq!(
            std::fs::read_link(dir.path().join("lib")).unwrap(),
            Path::new("lib64")
        );
        assert_eq!(std::fs::read(dir.path().join("lib/a.so")).unwrap(), b"x");
        assert!(dir.path().join("dangling").is_symlink());
        assert!(symlink(Path::new("x"), &dir.path().join("lib")).is_err());
    }

    #[test]
    fn replaces_the_file_whole_with_the_mode_asked_for() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/f");
        write_atomically(&p, b"one", None).unwrap();
        write_atomically(&p, b"two", Some(0o644)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        // No temporary file is left behind.
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
    }

    #[test]
    fn an_executable_file_is_a_regular_file_with_an_execute_bit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tool");
        std::fs::write(&f, "").unwrap();
        assert!(!is_executable_file(&f));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(is_executable_file(&f));
        symlink(Path::new("tool"), &dir.path().join("link")).unwrap();
        assert!(is_executable_file(&dir.path().join("link")));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_executable_file(dir.path()));
        assert!(!is_executable_file(&dir.path().join("missing")));
    }
}
