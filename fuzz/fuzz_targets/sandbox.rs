//! Shared by the archive targets: a fresh sandbox per input and the check
//! that whatever an unpacker accepted stays inside its destination.

use std::path::{Path, PathBuf};

use cudaenv::install::unpack::Limits;

/// Small bounds, so a bomb is cut off quickly instead of filling the disk.
pub const LIMITS: Limits = Limits {
    max_total_bytes: 8 << 20,
    max_entries: 2000,
};

pub struct Sandbox {
    pub tmp: tempfile::TempDir,
    pub dest: PathBuf,
    pub outside: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("dest");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&dest).unwrap();
        std::fs::create_dir(&outside).unwrap();
        Sandbox { tmp, dest, outside }
    }

    /// Nothing appeared next to `dest`, nothing in it resolves outside it,
    /// no special files and no cudaenv metadata were written.
    pub fn check(&self) {
        let names: Vec<_> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            names.len() <= 3,
            "something was written beside dest: {names:?}"
        );
        assert_eq!(std::fs::read_dir(&self.outside).unwrap().count(), 0);
        let canon = self.dest.canonicalize().unwrap();
        assert!(!self.dest.join(".cudaenv").exists());
        walk(&self.dest, &mut |p| {
            let m = std::fs::symlink_metadata(p).unwrap();
            let ft = m.file_type();
            assert!(ft.is_file() || ft.is_dir() || ft.is_symlink(), "{p:?}");
            use std::os::unix::fs::PermissionsExt;
            // A symlink's own mode is always 0777 and means nothing.
            if !ft.is_symlink() {
                assert_eq!(
                    m.permissions().mode() & 0o7002,
                    0,
                    "{p:?}: setuid or world-writable"
                );
            }
            if let Ok(real) = p.canonicalize() {
                assert!(real.starts_with(&canon), "{p:?} resolves to {real:?}");
            }
        });
    }
}

fn walk(d: &Path, f: &mut dyn FnMut(&Path)) {
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        f(&p);
        if e.file_type().unwrap().is_dir() {
            walk(&p, f);
        }
    }
}
