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
    let raw_reader = reader.clone();
    let mut zip = ZipArchive::new(reader).map_err(|e| Error::BadArchive {
        archive: name.into(),
        entry: None,
        reason: format!("not a valid zip archive: {e}"),
    })?;
    let eocd = check_ends_at_end_record(&raw_reader, name)?;
    if zip.has_duplicate_names() {
        // The zip crate keeps one entry per name: find the repeated one in
        // the central directory itself, to name it.
        let mut names = std::collections::HashSet::new();
        let dup = central_names(&raw_reader, eocd)
            .into_iter()
            .find(|n| !names.insert(n.clone()))
            .map(|n| String::from_utf8_lossy(&n).into_owned());
        return Err(Error::BadArchive {
            archive: name.into(),
            entry: dup,
            reason: "duplicate member names in the central directory".into(),
        });
    }
    // Byte ranges [local header, end of data) of every member, to refuse
    // members that share bytes (one compressed body behind many names).
    let mut spans: Vec<(u64, u64, usize)> = Vec::new();

    // Check everything first; write nothing until the whole archive passed.
    let mut files: Vec<(usize, String, Target, bool, u64)> = Vec::new();
    let mut declared_total: u64 = 0;
    for i in 0..zip.len() {
        let member_name = zip
            .name_for_index(i)
            .and_then(|n| n.ok())
            .map(|n| n.into_owned());
        let mut entry = zip.by_index(i).map_err(|e| Error::BadArchive {
            archive: name.into(),
            entry: member_name.clone(),
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
        // The name in the local header is what streaming readers (and
        // pip) use; the central directory's is what we use. They must agree.
        let start = entry.header_start();
        if local_name(&raw_reader, start).as_deref() != Some(entry.name_raw()) {
            return Err(ex.bad(
                &raw,
                "the local header names a different file than the central directory",
            ));
        }
        let end = entry
            .data_start()
            .unwrap_or(start)
            .saturating_add(entry.compressed_size());
        spans.push((start, end, i));
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

    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            let other = zip.name_for_index(w[1].2).and_then(|n| n.ok());
            return Err(ex.bad(
                other.as_deref().unwrap_or("?"),
                "members overlap (their data shares bytes)",
            ));
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

/// The file name stored in the local header at `offset`, if it can be read.
fn local_name(file: &SharedFile, offset: u64) -> Option<Vec<u8>> {
    let mut head = [0u8; 30];
    file.file.read_exact_at(&mut head, offset).ok()?;
    if head[..4] != 0x04034b50u32.to_le_bytes() {
        return None;
    }
    let len = u16::from_le_bytes([head[26], head[27]]) as usize;
    let mut name = vec![0u8; len];
    file.file.read_exact_at(&mut name, offset + 30).ok()?;
    Some(name)
}

/// Refuses bytes after the end-of-central-directory record (and its
/// comment): readers disagree on such files, and nothing legitimate has them.
fn check_ends_at_end_record(file: &SharedFile, name: &str) -> Result<u64> {
    const EOCD: [u8; 4] = 0x06054b50u32.to_le_bytes();
    let tail_len = file.len.min(22 + 65535);
    let mut tail = vec![0u8; tail_len as usize];
    file.file
        .read_exact_at(&mut tail, file.len - tail_len)
        .map_err(|e| Error::BadArchive {
            archive: name.into(),
            entry: None,
            reason: format!("cannot read the end of the archive: {e}"),
        })?;
    let found = (0..tail.len().saturating_sub(21)).rev().find(|&p| {
        tail[p..p + 4] == EOCD
            && p + 22 + u16::from_le_bytes([tail[p + 20], tail[p + 21]]) as usize == tail.len()
    });
    if let Some(p) = found {
        Ok(file.len - tail_len + p as u64)
    } else {
        Err(Error::BadArchive {
            archive: name.into(),
            entry: None,
            reason: "trailing data after the end of the zip archive".into(),
        })
    }
}

/// Every name in the central directory, in order, duplicates included (the
/// end record at `eocd` gives its place; zip64 archives yield nothing).
fn central_names(file: &SharedFile, eocd: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut end = [0u8; 22];
    if file.file.read_exact_at(&mut end, eocd).is_err() {
        return out;
    }
    let size = u32::from_le_bytes([end[12], end[13], end[14], end[15]]) as u64;
    let mut pos = u32::from_le_bytes([end[16], end[17], end[18], end[19]]) as u64;
    let stop = pos.saturating_add(size).min(eocd);
    let mut head = [0u8; 46];
    while pos + 46 <= stop && file.file.read_exact_at(&mut head, pos).is_ok() {
        if head[..4] != 0x02014b50u32.to_le_bytes() {
            break;
        }
        let field = |i: usize| u16::from_le_bytes([head[i], head[i + 1]]) as u64;
        let mut name = vec![0u8; field(28) as usize];
        if file.file.read_exact_at(&mut name, pos + 46).is_err() {
            break;
        }
        out.push(name);
        pos += 46 + field(28) + field(30) + field(32);
    }
    out
}
