//! Small operations on the operating system that several modules need, kept
//! in one place so each exists once.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
