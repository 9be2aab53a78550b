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
//!   nobody can rename or remove what they do not own in it;
//! - each of them belongs to root or to the system root's owner (another
//!   user could change what they own at any time).
//!
//! A path that does not exist yet is no safer than the place it would be
//! created in: someone could create it later and plant a library there. So
//! a missing directory (or a link whose target is missing) is followed to
//! the nearest directory that exists, which must let nobody else create
//! entries in it — the sticky bit does not help there, it only protects
//! entries that exist — and whose chain passes the rules above.
//!
//! A user's own root is not checked: it is theirs to keep.

use crate::error::{Error, Result, StoreError};
use std::path::{Path, PathBuf};

use super::{COMPLETE_MARKER, Installed, META_DIR, META_FILE, Store};

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
    let owners = Owners::of(root);
    for leaf in &leaves {
        match std::fs::canonicalize(leaf) {
            Ok(real) => check_chain(&real, v, &owners)?,
            Err(_) => check_missing(leaf, v, &owners)?,
        }
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

/// Who may own what a system version activates: root and the owner of the
/// system root.
struct Owners {
    root_owner: Option<u32>,
}

impl Owners {
    fn of(root: &Path) -> Owners {
        Owners {
            root_owner: std::fs::metadata(root)
                .ok()
                .and_then(|m| crate::os::owner(&m)),
        }
    }

    /// Whether what `meta` describes has a trusted owner (Windows has no
    /// user ids: ownership is by ACL, which is not judged here).
    fn trusted(&self, meta: &std::fs::Metadata) -> Result<(), u32> {
        match crate::os::owner(meta) {
            Some(uid) if uid != 0 && Some(uid) != self.root_owner => Err(uid),
            _ => Ok(()),
        }
    }
}

/// `dir` (resolved) and its ancestors, by the rules above.
fn check_chain(dir: &Path, v: &Installed, owners: &Owners) -> Result<()> {
    for (i, p) in dir.ancestors().enumerate() {
        let Ok(meta) = std::fs::metadata(p) else {
            continue;
        };
        // No mode bits (Windows): access is by ACL, which is not judged here.
        if let Some(mode) = crate::os::mode(&meta) {
            let writable = mode & GROUP_OR_OTHER_WRITE != 0;
            let sticky_ancestor = i > 0 && mode & STICKY != 0;
            if writable && !sticky_ancestor {
                return Err(unsafe_path(p, mode, v));
            }
        }
        if let Err(uid) = owners.trusted(&meta) {
            return Err(Error::Store(StoreError::UntrustedSystemPath {
                path: p.to_path_buf(),
                why: format!("belongs to uid {uid}, neither root nor the system root's owner"),
                version: v.name.to_string(),
            }));
        }
    }
    Ok(())
}

/// A leaf that does not resolve: the nearest existing directory it would be
/// created in (following links whose targets are missing) must let no one
/// else create it, and its chain must pass `check_chain`.
fn check_missing(leaf: &Path, v: &Installed, owners: &Owners) -> Result<()> {
    let untrusted = |path: &Path, why: String| {
        Error::Store(StoreError::UntrustedSystemPath {
            path: path.to_path_buf(),
            why,
            version: v.name.to_string(),
        })
    };
    let mut p = leaf.to_path_buf();
    // As many links as the kernel follows before ELOOP.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let Ok(target) = std::fs::read_link(&p) else {
                    break;
                };
                p = p.parent().unwrap_or(Path::new("/")).join(target);
            }
            Ok(_) => {
                // Exists after all (through links that now resolve).
                return match std::fs::canonicalize(&p) {
                    Ok(real) => check_chain(&real, v, owners),
                    Err(_) => Err(untrusted(&p, "cannot be resolved".into())),
                };
            }
            Err(_) => {
                let Some(parent) = p.parent().filter(|q| !q.as_os_str().is_empty()) else {
                    break;
                };
                match std::fs::canonicalize(parent) {
                    Ok(dir) => {
                        let meta = std::fs::metadata(&dir)
                            .map_err(|_| untrusted(&dir, "cannot be examined".into()))?;
                        let mode = crate::os::mode(&meta).unwrap_or(0);
                        if mode & GROUP_OR_OTHER_WRITE != 0 {
                            return Err(untrusted(
                                &dir,
                                format!(
                                    "(mode {:04o}) lets other users create {}, which does not exist yet",
                                    mode & 0o7777,
                                    leaf.display()
                                ),
                            ));
                        }
                        if let Err(uid) = owners.trusted(&meta) {
                            return Err(untrusted(
                                &dir,
                                format!(
                                    "belongs to uid {uid}, who could create {} (it does not exist yet)",
                                    leaf.display()
                                ),
                            ));
                        }
                        return check_chain(&dir, v, owners);
                    }
                    // The parent is missing too, or a dangling link: go on from it.
                    Err(_) => p = parent.to_path_buf(),
                }
            }
        }
    }
    Err(untrusted(
        leaf,
        "cannot be resolved (a loop of links)".into(),
    ))
}

/// Can this user create versions in `root`? (`root`, or the nearest
/// existing directory above it, is writable by them.)
pub fn can_write(root: &Path) -> bool {
    root.ancestors()
        .find(|p| p.exists())
        .is_some_and(crate::os::access_writable)
}

fn unsafe_path(path: &Path, mode: u32, v: &Installed) -> Error {
    Error::Store(StoreError::UnsafeSystemRoot {
        path: path.to_path_buf(),
        mode: mode & 0o7777,
        version: v.name.to_string(),
    })
}
