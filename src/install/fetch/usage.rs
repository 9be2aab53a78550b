//! What the cache costs on disk, and pruning it to what installed versions use.
//!
//! A version's tree is hard-linked from the package store (`pkgs/<key>/`),
//! so a package file a version uses has two or more links and deleting the
//! cache's link frees nothing; a downloaded archive (`downloads/`) is only
//! ever the cache's. Sizes are therefore counted per inode: `bytes` is what
//! the files take, `freeable` what deleting them would give back (files no
//! installed tree links to). Counted in bytes of file data (`st_size`), the
//! figure `du --apparent-size` prints.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Cache;
use crate::error::{Error, Result};

/// Disk taken by a part of the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    pub bytes: u64,
    /// What deleting it would free (files with no other link).
    pub freeable: u64,
    pub files: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.bytes += o.bytes;
        self.freeable += o.freeable;
        self.files += o.files;
    }
}

/// Walks `dir` (not following links), each inode counted once.
pub fn usage(dir: &Path) -> Usage {
    let mut seen = BTreeSet::new();
    let mut u = Usage::default();
    walk(dir, &mut seen, &mut u);
    u
}

fn walk(dir: &Path, seen: &mut BTreeSet<(u64, u64)>, u: &mut Usage) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        if m.is_dir() {
            walk(&e.path(), seen, u);
        } else if m.is_file() && seen.insert((m.dev(), m.ino())) {
            u.files += 1;
            u.bytes += m.len();
            if m.nlink() == 1 {
                u.freeable += m.len();
            }
        }
    }
}

/// The cache's parts, as `cache` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheUsage {
    pub downloads: Usage,
    pub pkgs: Usage,
    pub index: Usage,
}

impl CacheUsage {
    pub fn of(cache: &Cache) -> CacheUsage {
        CacheUsage {
            downloads: usage(&cache.downloads()),
            pkgs: usage(&cache.pkgs()),
            index: usage(&cache.dir().join("index")),
        }
    }

    pub fn total(&self) -> Usage {
        let mut t = self.downloads;
        t += self.pkgs;
        t += self.index;
        t
    }
}

/// The downloads and unpacked packages whose key is not in `keep` (the keys
/// of what installed versions were installed from), with their sizes: what
/// `prune` deletes. Index pages and the release catalogue are not listed:
/// they are small and let `--offline` keep working. A package a tree still
/// links to is never listed, whatever its key, so no installed version can
/// lose a file.
pub fn prunable(cache: &Cache, keep: &BTreeSet<String>) -> Vec<(PathBuf, Usage)> {
    let mut out = Vec::new();
    for (dir, key_of) in [
        (cache.downloads(), download_key as fn(&str) -> Option<&str>),
        (cache.pkgs(), pkg_key),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(key) = name.to_str().and_then(key_of) else {
                continue;
            };
            if keep.contains(key) {
                continue;
            }
            let u = usage_of(&e.path());
            if u.freeable == u.bytes {
                out.push((e.path(), u));
            }
        }
    }
    out
}

/// Deletes what `prunable` lists; returns what that freed.
pub fn prune(cache: &Cache, keep: &BTreeSet<String>) -> Result<Usage> {
    let mut freed = Usage::default();
    for (p, u) in prunable(cache, keep) {
        let res = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        res.map_err(Error::io("cannot delete", &p))?;
        freed += u;
    }
    Ok(freed)
}

/// The keys of what installed versions were installed from.
pub fn installed_keys(store: &crate::store::Store) -> Result<BTreeSet<String>> {
    Ok(store
        .list()?
        .iter()
        .flat_map(|v| &v.meta.components)
        .filter_map(|c| Some(Cache::key_of(c.sha256.as_deref(), c.url.as_deref()?)))
        .collect())
}

fn usage_of(p: &Path) -> Usage {
    match p.symlink_metadata() {
        Ok(m) if m.is_dir() => usage(p),
        Ok(m) => Usage {
            bytes: m.len(),
            freeable: if m.nlink() == 1 { m.len() } else { 0 },
            files: 1,
        },
        Err(_) => Usage::default(),
    }
}

/// `downloads/<key>-<file name>` (and its `.part`, `.lock`).
fn download_key(name: &str) -> Option<&str> {
    name.split_once('-')
        .map(|(k, _)| k)
        .filter(|k| !k.is_empty())
}

/// `pkgs/<key>` and `pkgs/<key>.lock`.
fn pkg_key(name: &str) -> Option<&str> {
    Some(name.strip_suffix(".lock").unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_links_are_counted_once_and_never_freed() {
        let t = tempfile::tempdir().unwrap();
        let cache = Cache::new(t.path().join("cache"));
        let pkg = cache.pkgs().join("aaa");
        std::fs::create_dir_all(pkg.join("lib64")).unwrap();
        std::fs::write(pkg.join("lib64/libx.so.1"), vec![0u8; 1000]).unwrap();
        std::fs::create_dir_all(cache.pkgs().join("bbb")).unwrap();
        std::fs::write(cache.pkgs().join("bbb/liby.so.1"), vec![0u8; 300]).unwrap();
        std::fs::create_dir_all(cache.downloads()).unwrap();
        std::fs::write(cache.downloads().join("aaa-x.whl"), vec![0u8; 500]).unwrap();
        std::fs::write(cache.downloads().join("bbb-y.whl"), vec![0u8; 200]).unwrap();
        // An installed tree links libx.
        let tree = t.path().join("versions/1");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::hard_link(pkg.join("lib64/libx.so.1"), tree.join("libx.so.1")).unwrap();

        let u = CacheUsage::of(&cache);
        assert_eq!(
            u.pkgs,
            Usage {
                bytes: 1300,
                freeable: 300,
                files: 2
            }
        );
        assert_eq!(u.downloads.freeable, 700);

        // Keep what version 1 uses (aaa): bbb's package and download go.
        let freed = prune(&cache, &BTreeSet::from(["aaa".to_string()])).unwrap();
        assert_eq!(freed.bytes, 500);
        assert!(
            pkg.join("lib64/libx.so.1").exists() && cache.downloads().join("aaa-x.whl").exists()
        );
        assert!(!cache.pkgs().join("bbb").exists());
        // Keeping nothing still spares a package a tree links to.
        let freed = prune(&cache, &BTreeSet::new()).unwrap();
        assert_eq!(freed.bytes, 500, "only the download");
        assert!(pkg.join("lib64/libx.so.1").exists());
    }
}
