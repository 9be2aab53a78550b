//! Whether a version of the system root may be activated.
//!
//! Activating a version puts its directories first on PATH and
//! LD_LIBRARY_PATH of the user's processes. A directory on the way to them
//! that someone else can write to lets that someone plant a `libcudart.so.12`
//! or an `nvcc` for every user of the root. So before a system version is
//! used, every directory that decides what it provides — the root, its
//! `versions/`, the version's own directory and metadata, each `bin` and
//! library directory, for a linked version the linked tree — is resolved
//! (symlinks followed) and checked with each of its ancestors:
//! - the directory itself, and the metadata file, must not be writable by
//!   group or others;
//! - an ancestor may be, if it has the sticky bit (as `/tmp` does): then
//!   nobody can rename or remove what they do not own in it.
//!
//! A user's own root is not checked: it is theirs to keep.

use std::path::{Path, PathBuf};

use super::{COMPLETE_MARKER, Installed, META_DIR, META_FILE, Store};
use crate::error::{Error, Result};

const GROUP_OR_OTHER_WRITE: u32 = 0o022;
const STICKY: u32 = 0o1000;

/// Fails with `UnsafeSystemRoot` naming the first path others can write to.
pub fn check_safe(store: &Store, v: &Installed) -> Result<()> {
    let Some(root) = store.system_root() else {
        return Ok(());
    };
    let mut leaves: Vec<PathBuf> = vec![
        root.to_path_buf(),
        root.join("versions"),
        v.dir.clone(),
        v.dir.join(META_DIR),
    ];
    leaves.push(v.prefix());
    leaves.extend(v.bin_dirs());
    leaves.extend(v.lib_dirs());
    for leaf in &leaves {
        // A directory that does not exist provides nothing (and PATH skips it).
        let Ok(real) = std::fs::canonicalize(leaf) else {
            continue;
        };
        check_chain(&real, v)?;
    }
    for file in [META_FILE, COMPLETE_MARKER] {
        let path = v.dir.join(META_DIR).join(file);
        if let Ok(meta) = std::fs::metadata(&path)
            && let Some(mode) = crate::os::mode(&meta)
            && mode & GROUP_OR_OTHER_WRITE != 0
        {
            return Err(unsafe_path(&path, mode, v));
        }
    }
    Ok(())
}

/// `dir` (resolved) and its ancestors, by the rules above.
fn check_chain(dir: &Path, v: &Installed) -> Result<()> {
    for (i, p) in dir.ancestors().enumerate() {
        // No mode bits (Windows): access is by ACL, which is not judged here.
        let Some(mode) = std::fs::metadata(p).ok().and_then(|m| crate::os::mode(&m)) else {
            continue;
        };
        let writable = mode & GROUP_OR_OTHER_WRITE != 0;
        let sticky_ancestor = i > 0 && mode & STICKY != 0;
        if writable && !sticky_ancestor {
            return Err(unsafe_path(p, mode, v));
        }
    }
    Ok(())
}

/// Can this user create versions in `root`? (`root`, or the nearest
/// existing directory above it, is writable by them.)
pub fn can_write(root: &Path) -> bool {
    root.ancestors()
        .find(|p| p.exists())
        .is_some_and(crate::os::access_writable)
}

fn unsafe_path(path: &Path, mode: u32, v: &Installed) -> Error {
    Error::UnsafeSystemRoot {
        path: path.to_path_buf(),
        mode: mode & 0o7777,
        version: v.name.to_string(),
    }
}
