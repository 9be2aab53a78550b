//! The file list a version records when it is committed, and the check of a
//! tree against it.
//!
//! `Staging::commit` walks the finished tree (everything but `.cudaenv/`)
//! and writes `.cudaenv/files.json` before the completeness marker: every
//! regular file with its size and CRC-32, every symlink with its target.
//! `check` walks the tree again and reports each difference, so "listed"
//! can be strengthened to "listed and what was committed"
//! (`cudaenv versions --check`).
//!
//! Why CRC-32 and not sha256: the bytes were already verified against the
//! index's or manifest's sha256 when they were downloaded; this list guards
//! against accidental damage afterwards (a crash, a disk, a stray edit), which
//! a CRC detects, and it is computed on every commit, reinstalls from the cache
//! included. sha256 of a 1.5 GB stack cost ~1.7 s per commit on a 2-core
//! machine — more than the whole reinstall budget (< 1 s); CRC-32 (hardware
//! carry-less multiply) costs a fraction of that. Files are hashed on several
//! threads, largest first, so one 500 MB library does not serialise the rest.
//!
//! Packages in the package store record the same list of their own tree when
//! they are unpacked (while their bytes are still in memory). A version built
//! from them takes the CRC-32 of every file hard-linked from a package from
//! that list (matched by device and inode), so a reinstall, or a second stack
//! sharing cuBLAS, reads none of those bytes again: after a reboot that was
//! ~3.5 s of reading 1.5 GB from disk for one reinstall.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::META_DIR;
use crate::error::{Error, Result};

pub const FILES_FILE: &str = "files.json";

/// One member of a version's tree, by its path relative to the version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Entry {
    File { size: u64, crc32: String },
    Symlink { target: String },
}

/// What `files.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileList {
    pub files: BTreeMap<String, Entry>,
}

/// CRC-32s known without reading: the file list of a package whose files
/// are hard-linked into a version, keyed by (device, inode) so that only the
/// very same files take them (a copied file is read as usual).
pub type Known = HashMap<(u64, u64), (u64, String)>;

/// Lists the tree at `root` (without its `.cudaenv/`).
pub fn record(root: &Path) -> Result<FileList> {
    record_with(root, &Known::new())
}

/// `record`, taking the CRC-32 of files in `known` instead of reading them.
pub fn record_with(root: &Path, known: &Known) -> Result<FileList> {
    let mut files = Vec::new();
    let mut links = BTreeMap::new();
    walk(root, root, &mut files, &mut links)?;
    // Largest first, pulled from a shared index: balanced by bytes, not by count.
    let mut list = FileList { files: links };
    let mut sized: Vec<(u64, String, PathBuf)> = Vec::with_capacity(files.len());
    for (rel, path) in files {
        let meta = std::fs::symlink_metadata(&path).ok();
        let len = meta.as_ref().map(|m| m.len()).unwrap_or(0);
        match meta
            .and_then(|m| crate::os::file_id(&path, &m))
            .and_then(|id| known.get(&id))
        {
            Some((size, crc32)) if *size == len => {
                list.files.insert(
                    rel,
                    Entry::File {
                        size: len,
                        crc32: crc32.clone(),
                    },
                );
            }
            _ => sized.push((len, rel, path)),
        }
    }
    sized.sort_by_key(|e| std::cmp::Reverse(e.0));
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(sized.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let hashed: Vec<Result<Vec<(String, Entry)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((_, rel, path)) = sized.get(i) else {
                            return Ok(out);
                        };
                        let (size, crc32) = hash(path)?;
                        out.push((rel.clone(), Entry::File { size, crc32 }));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::task("hashing")("a thread panicked")))
            })
            .collect()
    });
    for part in hashed {
        list.files.extend(part?);
    }
    Ok(list)
}

/// Writes `root`'s list into `root/.cudaenv/files.json`.
#[cfg(test)]
pub fn write(root: &Path) -> Result<()> {
    write_with(root, &Known::new())
}

/// `write`, with CRC-32s known without reading (see `Known`).
pub fn write_with(root: &Path, known: &Known) -> Result<()> {
    let list = record_with(root, known)?;
    let dir = root.join(META_DIR);
    std::fs::create_dir_all(&dir).map_err(Error::io("cannot create", &dir))?;
    let path = root.join(META_DIR).join(FILES_FILE);
    let text = serde_json::to_vec(&list).map_err(Error::encode("the file list"))?;
    std::fs::write(&path, text).map_err(Error::io("cannot write", &path))
}

/// CRC-32s that an unpacker already checked while writing the files (path,
/// size, CRC-32), keyed like `known_in`; files that cannot be looked at are
/// left out (and read as usual).
pub fn known_from(checked: &[(PathBuf, u64, u32)]) -> Known {
    checked
        .iter()
        .filter_map(|(path, size, crc)| {
            let m = std::fs::symlink_metadata(path).ok()?;
            m.is_file()
                .then(|| crate::os::file_id(path, &m))
                .flatten()
                .map(|id| (id, (*size, format!("{crc:08x}"))))
        })
        .collect()
}

/// What the list recorded in `root` (a package of the package store) says
/// about its files, keyed by their (device, inode) now. Nothing when no list
/// was recorded or it cannot be read.
pub fn known_in(root: &Path) -> Known {
    let mut out = Known::new();
    let Ok(bytes) =
        crate::os::fs::read_bounded(&root.join(META_DIR).join(FILES_FILE), crate::os::fs::LARGE)
    else {
        return out;
    };
    let Ok(list) = serde_json::from_slice::<FileList>(&bytes) else {
        return out;
    };
    for (rel, entry) in list.files {
        if let Entry::File { size, crc32 } = entry
            && let Ok(m) = std::fs::symlink_metadata(root.join(&rel))
            && m.is_file()
            && let Some(id) = crate::os::file_id(&root.join(&rel), &m)
        {
            out.insert(id, (size, crc32));
        }
    }
    out
}

/// Compares the tree at `root` with its recorded list; each difference is
/// one line naming the path. A version committed before lists were
/// recorded, or whose list is unreadable, fails the check too: nothing can
/// vouch for it.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let path = root.join(META_DIR).join(FILES_FILE);
    let recorded: FileList = match crate::os::fs::read_bounded(&path, crate::os::fs::LARGE) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(l) => l,
            Err(e) => return Ok(vec![format!("{}: unreadable: {e}", path.display())]),
        },
        Err(e) if e.is_not_found() => {
            return Ok(vec![format!("no file list recorded ({})", path.display())]);
        }
        Err(e) => return Ok(vec![format!("{}: unreadable: {e}", path.display())]),
    };
    let now = record(root)?;
    let mut problems = Vec::new();
    for (rel, want) in &recorded.files {
        match now.files.get(rel) {
            None => problems.push(format!("{rel}: missing")),
            Some(got) if got != want => problems.push(match (want, got) {
                (Entry::File { size: a, .. }, Entry::File { size: b, .. }) if a != b => {
                    format!("{rel}: size {b}, recorded {a}")
                }
                (Entry::File { .. }, Entry::File { .. }) => format!("{rel}: content changed"),
                _ => format!("{rel}: changed type or link target"),
            }),
            Some(_) => {}
        }
    }
    for rel in now.files.keys() {
        if !recorded.files.contains_key(rel) {
            problems.push(format!("{rel}: not in the recorded list"));
        }
    }
    Ok(problems)
}

fn walk(
    root: &Path,
    dir: &Path,
    files: &mut Vec<(String, PathBuf)>,
    links: &mut BTreeMap<String, Entry>,
) -> Result<()> {
    for e in std::fs::read_dir(dir).map_err(Error::io("cannot read", dir))? {
        let e = e.map_err(Error::io("cannot read", dir))?;
        let path = e.path();
        if dir == root && e.file_name() == META_DIR {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .expect("under root")
            .to_string_lossy()
            .into_owned();
        let ft = e.file_type().map_err(Error::io("cannot read", &path))?;
        if ft.is_dir() {
            walk(root, &path, files, links)?;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(&path).map_err(Error::io("cannot read", &path))?;
            links.insert(
                rel,
                Entry::Symlink {
                    target: target.to_string_lossy().into_owned(),
                },
            );
        } else {
            files.push((rel, path));
        }
    }
    Ok(())
}

fn hash(path: &Path) -> Result<(u64, String)> {
    let mut f = std::fs::File::open(path).map_err(Error::io("cannot read", path))?;
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(Error::io("cannot read", path))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((size, format!("{:08x}", h.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known CRC-32s are taken as they are (the file is not read), only for
    /// the very file (same inode) and size they were known for.
    #[test]
    fn known_crcs_are_used_without_reading_and_only_for_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.so");
        let b = dir.path().join("b.so");
        std::fs::write(&a, b"aaaa").unwrap();
        std::fs::write(&b, b"bbbb").unwrap();
        // Deliberately wrong CRCs: whatever is read would differ.
        let mut known = known_from(&[(a.clone(), 4, 0x1234_5678), (b.clone(), 5, 0x9abc_def0)]);
        known.extend(known_from(&[(dir.path().join("gone"), 1, 1)]));
        let list = record_with(dir.path(), &known).unwrap();
        assert_eq!(
            list.files["a.so"],
            Entry::File {
                size: 4,
                crc32: "12345678".into()
            }
        );
        let (_, real_b) = hash(&b).unwrap();
        assert_eq!(
            list.files["b.so"],
            Entry::File {
                size: 4,
                crc32: real_b
            },
            "a size that differs means the file is read"
        );
    }

    #[test]
    fn check_finds_every_kind_of_change() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join(META_DIR)).unwrap();
        std::fs::create_dir_all(r.join("lib64")).unwrap();
        std::fs::write(r.join("lib64/a.so.1"), b"aaaa").unwrap();
        std::fs::write(r.join("lib64/b"), b"bbbb").unwrap();
        std::fs::write(r.join("gone"), b"x").unwrap();
        crate::os::symlink(Path::new("a.so.1"), &r.join("lib64/a.so")).unwrap();
        assert_eq!(check(r).unwrap().len(), 1, "no list yet");
        write(r).unwrap();
        assert_eq!(check(r).unwrap(), Vec::<String>::new());

        std::fs::write(r.join("lib64/a.so.1"), b"aaab").unwrap();
        std::fs::write(r.join("lib64/b"), b"bbbbb").unwrap();
        std::fs::remove_file(r.join("gone")).unwrap();
        std::fs::write(r.join("new"), b"").unwrap();
        std::fs::remove_file(r.join("lib64/a.so")).unwrap();
        crate::os::symlink(Path::new("b"), &r.join("lib64/a.so")).unwrap();
        let p = check(r).unwrap();
        assert_eq!(
            p,
            [
                "gone: missing",
                "lib64/a.so: changed type or link target",
                "lib64/a.so.1: content changed",
                "lib64/b: size 5, recorded 4",
                "new: not in the recorded list",
            ]
        );
    }
}
