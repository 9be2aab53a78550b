//! Zip archives and Python wheels, unpacked in parallel.
//!
//! The central directory is read once and every member is checked by the
//! [`Extractor`] before anything is written (names, kinds, duplicates, the
//! expansion bound from the declared sizes). Regular files are then
//! decompressed by a few threads, largest first, each with its own cursor on
//! the same open file (positional reads), so a 1 GB wheel whose time is spent
//! in two or three huge libraries keeps every core busy. The zip crate checks
//! each member's CRC-32 as it reaches the end of the data.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use zip::ZipArchive;

use super::{EntryKind, Extractor, Limits, Summary, Target};
use crate::error::{Error, Result};
use crate::sources::Layout;

/// The longest symlink target a zip member may hold.
const MAX_LINK: u64 = 4096;

/// A cloneable reader over one open file: each clone has its own position
/// and reads with `pread`, so threads never share a cursor.
#[derive(Clone)]
struct SharedFile {
    file: Arc<File>,
    pos: u64,
    len: u64,
}

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SharedFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let new = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = new.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before start")
        })?;
        Ok(self.pos)
    }
}

/// Unpacks the zip (or wheel) at `archive` into the fresh directory `dest`.
///
/// `name` identifies the archive in errors. `threads` bounds parallelism.
pub fn unpack(
    archive: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    threads: usize,
) -> Result<Summary> {
    let file = File::open(archive).map_err(Error::io("cannot open", archive))?;
    let len = file
        .metadata()
        .map_err(Error::io("cannot read", archive))?
        .len();
    let reader = SharedFile {
        file: Arc::new(file),
        pos: 0,
        len,
    };
    let mut ex = Extractor::new(name, dest, layout, limits);
    let mut zip = ZipArchive::new(reader).map_err(|e| Error::BadArchive {
        archive: name.into(),
        entry: None,
        reason: format!("not a valid zip archive: {e}"),
    })?;
    if zip.has_duplicate_names() {
        return Err(Error::BadArchive {
            archive: name.into(),
            entry: None,
            reason: "duplicate member names in the central directory".into(),
        });
    }

    // Check everything first; write nothing until the whole archive passed.
    let mut files: Vec<(usize, String, Target, bool, u64)> = Vec::new();
    let mut declared_total: u64 = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| Error::BadArchive {
            archive: name.into(),
            entry: None,
            reason: format!("member #{i}: {e}"),
        })?;
        let raw = std::str::from_utf8(entry.name_raw())
            .map_err(|_| {
                ex.bad(
                    String::from_utf8_lossy(entry.name_raw()),
                    "name is not UTF-8",
                )
            })?
            .to_string();
        if entry.encrypted() {
            return Err(ex.bad(&raw, "encrypted members are not supported"));
        }
        let mode = entry.unix_mode().unwrap_or(0o644);
        let kind = match mode & libc::S_IFMT {
            0 => {
                if entry.is_dir() {
                    EntryKind::Dir
                } else {
                    EntryKind::File
                }
            }
            m if m == libc::S_IFREG => EntryKind::File,
            m if m == libc::S_IFDIR => EntryKind::Dir,
            m if m == libc::S_IFLNK => EntryKind::Symlink,
            m if m == libc::S_IFCHR || m == libc::S_IFBLK => EntryKind::Other("device"),
            m if m == libc::S_IFIFO => EntryKind::Other("FIFO"),
            _ => EntryKind::Other("special-file"),
        };
        match kind {
            EntryKind::Symlink => {
                if entry.size() > MAX_LINK {
                    return Err(ex.bad(&raw, "symlink target too long"));
                }
                let mut target = String::new();
                (&mut entry)
                    .take(MAX_LINK)
                    .read_to_string(&mut target)
                    .map_err(|e| ex.bad(&raw, format!("unreadable link target: {e}")))?;
                drop(entry);
                ex.symlink(&raw, &target)?;
            }
            EntryKind::Dir => {
                drop(entry);
                if let Some(t) = ex.entry(&raw, &EntryKind::Dir)? {
                    ex.make_dir(&t)?;
                }
            }
            EntryKind::File => {
                let size = entry.size();
                let exec = mode & 0o111 != 0;
                drop(entry);
                if let Some(t) = ex.entry(&raw, &EntryKind::File)? {
                    declared_total = declared_total.saturating_add(size);
                    if declared_total > limits.max_total_bytes {
                        return Err(ex.bad(&raw, "archive expands beyond the size limit"));
                    }
                    files.push((i, raw, t, exec, size));
                }
            }
            other => {
                drop(entry);
                ex.entry(&raw, &other)?;
            }
        }
    }

    // Largest first, so the long ones start early and the tail is short.
    files.sort_by_key(|f| std::cmp::Reverse(f.4));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let threads = threads.clamp(1, files.len().max(1));
    let ex_ref = &ex;
    let files_ref = &files;
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let mut zip = zip.clone();
                let next = &next;
                let failed = &failed;
                s.spawn(move || -> Result<()> {
                    loop {
                        if failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some((i, raw, target, exec, size)) = files_ref.get(k) else {
                            return Ok(());
                        };
                        let r = zip
                            .by_index(*i)
                            .map_err(|e| ex_ref.bad(raw, e.to_string()))
                            .and_then(|mut entry| {
                                ex_ref.write_file(raw, target, *exec, Some(*size), &mut entry)
                            });
                        if r.is_err() {
                            failed.store(true, Ordering::Relaxed);
                            return r.map(|_| ());
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Other("an unpacking thread panicked".into())))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    ex.finish()
}
