//! What the cache costs on disk, and pruning it to what installed versions use.
//!
//! A version's tree is hard-linked from the package store (`pkgs/<key>/`),
//! so a package file a version uses has two or more links and deleting the
//! cache's link frees nothing; a downloaded archive (`downloads/`) is only
//! ever the cache's. Sizes are therefore counted per inode: `bytes` is what
//! the files take, `freeable` what deleting them would give back (files no
//! installed tree links to: what `cache clean` frees), `prunable` what
//! `cache prune` frees. Both commands and `cache size` compute from the same
//! `prunable` list, so what one says the other does. Counted in bytes of
//! file data (`st_size`), the figure `du --apparent-size` prints.
//!
//! Downloads are archives that were unpacked into the package store; an
//! install deletes its own once the version is committed, and `prune`
//! deletes any that are left, unless `keep-downloads` asks to keep those of
//! installed versions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Cache;
use crate::error::{Error, Result};

/// Disk taken by a part of the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    pub bytes: u64,
    /// What deleting it would free (files with no other link): what
    /// `cache clean` frees.
    pub freeable: u64,
    pub files: u64,
    /// What `cache prune` frees.
    pub prunable: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.bytes += o.bytes;
        self.freeable += o.freeable;
        self.files += o.files;
        self.prunable += o.prunable;
    }
}

/// What `cache prune` keeps: the packages installed versions were installed
/// from and, with `keep-downloads`, their downloads.
#[derive(Debug, Clone, Default)]
pub struct Keep {
    pub keys: BTreeSet<String>,
    pub downloads: bool,
}

impl Keep {
    /// What the installed versions of `store` use; `downloads`: the
    /// `keep-downloads` setting.
    pub fn installed(store: &crate::store::Store, downloads: bool) -> Result<Keep> {
        Ok(Keep {
            keys: installed_keys(store)?,
            downloads,
        })
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
        } else if m.is_file() && seen.insert(crate::os::file_id(&e.path(), &m).unwrap_or_default())
        {
            u.files += 1;
            u.bytes += m.len();
            if crate::os::link_count(&e.path(), &m) == 1 {
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
    /// The cache's parts, with what `prune` would free of each under `keep`.
    pub fn of(cache: &Cache, keep: &Keep) -> CacheUsage {
        let mut u = CacheUsage {
            downloads: usage(&cache.downloads()),
            pkgs: usage(&cache.pkgs()),
            index: usage(&cache.dir().join("index")),
        };
        for (p, pu) in prunable(cache, keep) {
            if p.starts_with(cache.downloads()) {
                u.downloads.prunable += pu.bytes;
            } else {
                u.pkgs.prunable += pu.bytes;
            }
        }
        u
    }

    pub fn total(&self) -> Usage {
        let mut t = self.downloads;
        t += self.pkgs;
        t += self.index;
        t
    }
}

/// What `prune` deletes, with sizes: every download (they are unpacked in
/// the package store) but, with `keep.downloads`, those of installed
/// versions; and the unpacked packages whose key is not in `keep.keys` (the
/// keys of what installed versions were installed from). Index pages and
/// the release catalogue are not listed: they are small and let `--offline`
/// keep working. A package a tree still links to is never listed, whatever
/// its key, so no installed version can lose a file.
pub fn prunable(cache: &Cache, keep: &Keep) -> Vec<(PathBuf, Usage)> {
    let mut out = Vec::new();
    for (dir, key_of, keep_keys) in [
        (
            cache.downloads(),
            download_key as fn(&str) -> Option<&str>,
            keep.downloads,
        ),
        (cache.pkgs(), pkg_key, true),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(key) = name.to_str().and_then(key_of) else {
                continue;
            };
            if keep_keys && keep.keys.contains(key) {
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
pub fn prune(cache: &Cache, keep: &Keep) -> Result<Usage> {
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
            freeable: if crate::os::link_count(p, &m) == 1 {
                m.len()
            } else {
                0
            },
            files: 1,
            prunable: 0,
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

        // Keep what version 1 uses (aaa), and its download.
        let keep = Keep {
            keys: BTreeSet::from(["aaa".to_string()]),
            downloads: true,
        };
        let u = CacheUsage::of(&cache, &keep);
        assert_eq!(
            u.pkgs,
            Usage {
                bytes: 1300,
                freeable: 300,
                files: 2,
                prunable: 300,
            }
        );
        assert_eq!((u.downloads.freeable, u.downloads.prunable), (700, 200));

        // bbb's package and download go; what `of` said is what was freed.
        let freed = prune(&cache, &keep).unwrap();
        assert_eq!(freed.bytes, u.total().prunable);
        assert_eq!(freed.bytes, 500);
        assert!(
            pkg.join("lib64/libx.so.1").exists() && cache.downloads().join("aaa-x.whl").exists()
        );
        assert!(!cache.pkgs().join("bbb").exists());
        // Without keep-downloads, the kept version's download goes too, but
        // never its package.
        let keep = Keep {
            downloads: false,
            ..keep
        };
        assert_eq!(CacheUsage::of(&cache, &keep).total().prunable, 500);
        assert_eq!(prune(&cache, &keep).unwrap().bytes, 500);
        assert!(pkg.join("lib64/libx.so.1").exists());
        assert!(!cache.downloads().join("aaa-x.whl").exists());
        // Keeping nothing still spares a package a tree links to.
        let freed = prune(&cache, &Keep::default()).unwrap();
        assert_eq!(freed.bytes, 0);
        assert!(pkg.join("lib64/libx.so.1").exists());
    }
}
