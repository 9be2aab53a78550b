//! Zip archives and Python wheels, unpacked in parallel.
//!
//! The central directory is read once and every member is checked by the
//! [`Extractor`] before anything is written (names, kinds, duplicates, the
//! expansion bound from the declared sizes). Regular files are then
//! decompressed by a thread per core, each member in one call: its compressed
//! bytes are mapped from the archive, inflated (libdeflate) straight into the
//! new file's mapped pages at the size the central directory declares, and
//! its CRC-32 checked against the central directory's. A whole-buffer inflate
//! was 1.15-1.8x as fast as a streaming one on CUDA's libraries, and writing
//! through the mapping saves the copy through `write(2)`; a 1 GB wheel whose
//! time is spent in two or three huge libraries keeps every core busy.
//!
//! The cores are shared by every archive unpacked at the same time (an
//! install's wheels arrive together): each member of 1 MiB or more waits
//! for one of the install's core slots (`install::slots`), and a free core
//! goes to the largest member ready in any archive. Without that, two wheels
//! each unpacking on every core shared them evenly, and cuDNN's 570 MB
//! library, which bounds the install, took 2.6 s to inflate instead of 2.2 s
//! (docs/PERFORMANCE.md).
//!
//! The archive can also be one that is still downloading
//! ([`unpack_arriving`]): the ranged download fetches the central directory
//! first, then the bytes of the largest members (which the unpacker asks
//! for), and each worker takes the largest member whose bytes have all
//! arrived; local headers are checked as their members come, and bytes no
//! member still needs are let go of as it goes. Nothing read that way is
//! verified until the download's hash is, so the caller keeps the result
//! only if the download completes.

use crate::error::{Error, InstallError, Result};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use zip::ZipArchive;

use super::{EntryKind, Extractor, Limits, Summary, Target};
use crate::install::fetch::ArrivingFile;
use crate::install::slots::Slots;
use crate::install::sources::Layout;

/// The file-type bits of a member's Unix mode (`st_mode`, in the zip's
/// external attributes): the format's, whatever system reads the archive.
const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;
const S_IFBLK: u32 = 0o060000;
const S_IFIFO: u32 = 0o010000;

/// The longest symlink target a zip member may hold.
const MAX_LINK: u64 = 4096;

/// Where the bytes come from: a complete file, or one still arriving.
#[derive(Clone)]
enum Source {
    File(Arc<File>),
    Arriving(ArrivingFile),
}

impl Source {
    fn read_at(&self, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
        match self {
            Source::File(f) => crate::os::read_at(f, buf, pos),
            Source::Arriving(a) => a.read_at(buf, pos),
        }
    }

    fn read_exact_at(&self, buf: &mut [u8], pos: u64) -> std::io::Result<()> {
        match self {
            Source::File(f) => crate::os::read_exact_at(f, buf, pos),
            Source::Arriving(a) => a.read_exact_at(buf, pos),
        }
    }
}

/// A cloneable reader over one source: each clone has its own position
/// and reads positionally, so threads never share a cursor.
#[derive(Clone)]
struct SharedFile {
    file: Source,
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
/// `name` identifies the archive in errors. Its members are inflated on
/// `cores`, shared with whatever else unpacks at the same time.
pub fn unpack(
    archive: &Path,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    cores: &Arc<Slots>,
) -> Result<Summary> {
    let file = File::open(archive).map_err(Error::io("cannot open", archive))?;
    let len = file
        .metadata()
        .map_err(Error::io("cannot read", archive))?
        .len();
    let reader = SharedFile {
        file: Source::File(Arc::new(file)),
        pos: 0,
        len,
    };
    unpack_from(reader, name, layout, dest, limits, cores)
}

/// `unpack` over a download in progress (see the module docs). Errors may
/// come from the download ending early rather than from the archive: the
/// caller judges them by how the download ended.
pub fn unpack_arriving(
    archive: ArrivingFile,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    cores: &Arc<Slots>,
) -> Result<Summary> {
    let len = archive.len();
    let reader = SharedFile {
        file: Source::Arriving(archive),
        pos: 0,
        len,
    };
    unpack_from(reader, name, layout, dest, limits, cores)
}

fn unpack_from(
    reader: SharedFile,
    name: &str,
    layout: Layout,
    dest: &Path,
    limits: Limits,
    cores: &Arc<Slots>,
) -> Result<Summary> {
    let mut ex = Extractor::new(name, dest, layout, limits);
    let raw_reader = reader.clone();
    let (mut zip, eocd) = open_zip(reader, &raw_reader, name)?;
    // Check everything the central directory says first; write nothing until
    // it all passed. The local headers are read only when their member is
    // unpacked (an archive still downloading has them later), and each must
    // agree with the central directory before its member counts.
    let Central {
        mut files,
        mut starts,
    } = read_central(&mut zip, name, &mut ex, limits)?;

    // Each member's limit: the next local header, or the central directory.
    starts.sort_unstable();
    let cd_start = central_start(&raw_reader, eocd);
    let mut limit = vec![cd_start; zip.len()];
    for w in starts.windows(2) {
        limit[w[0].1] = w[1].0;
    }
    let next_of: std::collections::HashMap<usize, usize> =
        starts.windows(2).map(|w| (w[0].1, w[1].1)).collect();
    let local = LocalCheck {
        reader: &raw_reader,
        zip: &zip,
        limit: &limit,
        next_of: &next_of,
        ex: &ex,
    };
    local.check_least(&starts)?;

    // Largest first, so the long ones start early and the tail is short.
    files.sort_by_key(|f| std::cmp::Reverse(f.size));
    let queue = Queue::new(&raw_reader.file, &zip, &files);
    queue.prefer();
    let unpacking = Unpacking {
        zip: &zip,
        reader: &raw_reader,
        ex: &ex,
        local: &local,
        checked: (0..zip.len()).map(|_| AtomicBool::new(false)).collect(),
        queue,
        cores,
        failed: AtomicBool::new(false),
        crcs: Mutex::new(Vec::with_capacity(files.len())),
    };
    unpacking.run(cores.count().clamp(1, files.len().max(1)))?;
    // The members no worker unpacked (directories, links, what the layout
    // skips) get the same check of their local headers.
    for (i, done) in unpacking.checked.iter().enumerate() {
        if !done.load(Ordering::Relaxed) {
            local.check(i).map(drop)?;
        }
    }
    let crcs = unpacking.crcs.into_inner().expect("poisoned");
    let mut summary = ex.finish()?;
    summary.checked = crcs;
    Ok(summary)
}

/// Opens the archive and returns it with where its end record lies:
/// refused unless it is a zip, ends at its end record, and names each
/// member once.
fn open_zip(
    reader: SharedFile,
    raw_reader: &SharedFile,
    name: &str,
) -> Result<(ZipArchive<SharedFile>, u64)> {
    let zip = ZipArchive::new(reader).map_err(|e| {
        Error::Install(InstallError::BadArchive {
            archive: name.into(),
            entry: None,
            reason: format!("not a valid zip archive: {e}"),
        })
    })?;
    let eocd = check_ends_at_end_record(raw_reader, name)?;
    if zip.has_duplicate_names() {
        // The zip crate keeps one entry per name: find the repeated one in
        // the central directory itself, to name it.
        let mut names = std::collections::HashSet::new();
        let dup = central_names(raw_reader, eocd)
            .into_iter()
            .find(|n| !names.insert(n.clone()))
            .map(|n| String::from_utf8_lossy(&n).into_owned());
        return Err(Error::Install(InstallError::BadArchive {
            archive: name.into(),
            entry: dup,
            reason: "duplicate member names in the central directory".into(),
        }));
    }
    Ok((zip, eocd))
}

/// A regular file of the archive, accepted by the `Extractor`, to unpack.
struct FileMember {
    /// Its index in the central directory.
    index: usize,
    /// Its name in the archive.
    raw: String,
    target: Target,
    exec: bool,
    /// Its size, as the central directory declares it.
    size: u64,
}

/// What the central directory says, once checked.
struct Central {
    /// The regular files to unpack.
    files: Vec<FileMember>,
    /// Where every member's local header starts, with its index.
    starts: Vec<(u64, usize)>,
}

/// Checks every member the central directory lists (its name, its kind,
/// the archive's expansion bound from the declared sizes) and makes the
/// directories and links among them. Returns the regular files to unpack,
/// and where every member's local header starts, with its index: where
/// every member's bytes may end is before the next member's local header
/// (or the central directory), so that no two members share bytes (one
/// compressed body behind many names). Checked exactly when a member's
/// local header is read (`LocalCheck::check`), and roughly right away from
/// the central directory alone (`LocalCheck::check_least`).
fn read_central(
    zip: &mut ZipArchive<SharedFile>,
    name: &str,
    ex: &mut Extractor,
    limits: Limits,
) -> Result<Central> {
    let mut starts: Vec<(u64, usize)> = Vec::with_capacity(zip.len());
    let mut files: Vec<FileMember> = Vec::new();
    let mut declared_total: u64 = 0;
    for i in 0..zip.len() {
        let entry = zip.by_index_data(i).map_err(|e| {
            Error::Install(InstallError::BadArchive {
                archive: name.into(),
                entry: zip
                    .name_for_index(i)
                    .and_then(|n| n.ok())
                    .map(|n| n.into_owned()),
                reason: format!("member #{i}: {e}"),
            })
        })?;
        let raw = std::str::from_utf8(entry.name_raw())
            .map_err(|_| {
                ex.bad(
                    String::from_utf8_lossy(entry.name_raw()),
                    "name is not UTF-8",
                )
            })?
            .to_string();
        starts.push((entry.header_start(), i));
        if entry.encrypted() {
            return Err(ex.bad(&raw, "encrypted members are not supported"));
        }
        let mode = entry.unix_mode().unwrap_or(0o644);
        let kind = kind_of(mode, entry.is_dir());
        let size = entry.size();
        drop(entry);
        match kind {
            EntryKind::Symlink => {
                if size > MAX_LINK {
                    return Err(ex.bad(&raw, "symlink target too long"));
                }
                let mut target = String::new();
                zip.by_index(i)
                    .map_err(|e| ex.bad(&raw, e.to_string()))?
                    .take(MAX_LINK)
                    .read_to_string(&mut target)
                    .map_err(|e| ex.bad(&raw, format!("unreadable link target: {e}")))?;
                ex.symlink(&raw, &target)?;
            }
            EntryKind::Dir => {
                if let Some(t) = ex.entry(&raw, &EntryKind::Dir)? {
                    ex.make_dir(&t)?;
                }
            }
            EntryKind::File => {
                let exec = mode & 0o111 != 0;
                if let Some(target) = ex.entry(&raw, &EntryKind::File)? {
                    declared_total = declared_total.saturating_add(size);
                    if declared_total > limits.max_total_bytes {
                        return Err(ex.bad(&raw, "archive expands beyond the size limit"));
                    }
                    files.push(FileMember {
                        index: i,
                        raw,
                        target,
                        exec,
                        size,
                    });
                }
            }
            other => {
                ex.entry(&raw, &other)?;
            }
        }
    }
    Ok(Central { files, starts })
}

/// What a member is, from the file-type bits of its Unix mode; without
/// them, a name ending in `/` is a directory.
fn kind_of(mode: u32, is_dir: bool) -> EntryKind {
    match mode & S_IFMT {
        0 => {
            if is_dir {
                EntryKind::Dir
            } else {
                EntryKind::File
            }
        }
        m if m == S_IFREG => EntryKind::File,
        m if m == S_IFDIR => EntryKind::Dir,
        m if m == S_IFLNK => EntryKind::Symlink,
        m if m == S_IFCHR || m == S_IFBLK => EntryKind::Other("device"),
        m if m == S_IFIFO => EntryKind::Other("FIFO"),
        _ => EntryKind::Other("special-file"),
    }
}

/// Where member `i`'s bytes lie (its local header's variable part is not
/// known yet: a generous bound, as this only guides the download and the
/// page cache).
fn span_of(zip: &ZipArchive<SharedFile>, i: usize) -> Option<(u64, u64)> {
    zip.by_index_data(i).ok().map(|e| {
        let start = e.header_start();
        (
            start,
            start
                .saturating_add(e.compressed_size())
                .saturating_add(1 << 16),
        )
    })
}

/// The regular files left to unpack, largest first, and the bytes of the
/// archive they still need.
struct Queue<'a> {
    source: &'a Source,
    zip: &'a ZipArchive<SharedFile>,
    files: &'a [FileMember],
    /// What is left to unpack (indices into `files`), largest first.
    left: Mutex<Vec<usize>>,
    /// The bytes still to be read, by member index: those of the members
    /// not yet unpacked, and the local headers of the members no worker
    /// unpacks (checked at the end). No other byte is needed again (see
    /// `ArrivingFile::release_except`).
    pending: Mutex<std::collections::BTreeSet<(u64, u64, usize)>>,
}

impl<'a> Queue<'a> {
    fn new(
        source: &'a Source,
        zip: &'a ZipArchive<SharedFile>,
        files: &'a [FileMember],
    ) -> Queue<'a> {
        let mut pending: std::collections::BTreeSet<_> = files
            .iter()
            .filter_map(|f| span_of(zip, f.index).map(|(lo, hi)| (lo, hi, f.index)))
            .collect();
        let by_workers: std::collections::HashSet<usize> = files.iter().map(|f| f.index).collect();
        for i in (0..zip.len()).filter(|i| !by_workers.contains(i)) {
            // What `LocalCheck::check` reads of a header that matches.
            if let Ok(e) = zip.by_index_data(i) {
                let lo = e.header_start();
                pending.insert((lo, lo.saturating_add(30 + e.name_raw().len() as u64), i));
            }
        }
        Queue {
            source,
            zip,
            files,
            left: Mutex::new((0..files.len()).collect()),
            pending: Mutex::new(pending),
        }
    }

    fn span_of(&self, i: usize) -> Option<(u64, u64)> {
        span_of(self.zip, i)
    }

    /// Asks an archive still arriving for the bytes of the largest members
    /// first.
    fn prefer(&self) {
        if let Source::Arriving(a) = self.source {
            a.prefer(
                self.files
                    .iter()
                    .filter_map(|f| self.span_of(f.index).map(|(lo, hi)| (lo, hi, f.size)))
                    .collect(),
            );
        }
    }

    /// The next member to unpack, by index into `files`: the largest left,
    /// or for an archive still arriving, the largest whose bytes are all
    /// there (waiting until one is).
    fn take(&self) -> Option<usize> {
        let Source::Arriving(a) = self.source else {
            let mut l = self.left.lock().expect("poisoned");
            return (!l.is_empty()).then(|| l.remove(0));
        };
        loop {
            let seen = a.generation();
            let mut l = self.left.lock().expect("poisoned");
            if l.is_empty() {
                return None;
            }
            let ready = l.iter().position(|&k| {
                self.span_of(self.files[k].index)
                    .is_none_or(|(lo, hi)| a.there(lo, hi.min(a.len())))
            });
            if let Some(p) = ready.or_else(|| a.abandoned().then_some(0)) {
                return Some(l.remove(p));
            }
            drop(l);
            a.wait_past(seen);
        }
    }

    /// Member `i` (a central directory index) is unpacked: an archive still
    /// arriving lets go of the bytes no member left needs.
    fn unpacked(&self, i: usize) {
        if let Source::Arriving(a) = self.source {
            let mut p = self.pending.lock().expect("poisoned");
            p.retain(|m| m.2 != i);
            let needed: Vec<(u64, u64)> = p.iter().map(|m| (m.0, m.1)).collect();
            drop(p);
            a.release_except(&needed);
        }
    }
}

/// The regular files being unpacked by a few threads: what they share.
struct Unpacking<'a> {
    zip: &'a ZipArchive<SharedFile>,
    reader: &'a SharedFile,
    ex: &'a Extractor,
    local: &'a LocalCheck<'a>,
    /// Whose local header was checked, by central directory index.
    checked: Vec<AtomicBool>,
    queue: Queue<'a>,
    /// The cores every archive unpacking now shares.
    cores: &'a Arc<Slots>,
    /// Set by the first thread that fails: the others stop.
    failed: AtomicBool,
    /// The path, size and CRC-32 of each file written.
    crcs: Mutex<Vec<(std::path::PathBuf, u64, u32)>>,
}

impl Unpacking<'_> {
    /// Unpacks every file on `threads` threads; the first failure (in
    /// thread order) is the error.
    fn run(&self, threads: usize) -> Result<()> {
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| self.worker())).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::task("unpacking")("a thread panicked")))
                })
                .collect()
        });
        for r in results {
            r?;
        }
        Ok(())
    }

    /// One thread: unpacks the next member until none is left or one
    /// failed anywhere.
    fn worker(&self) -> Result<()> {
        let mut inflater = libdeflater::Decompressor::new();
        loop {
            if self.failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            let Some(member) = self.queue.take().map(|k| &self.queue.files[k]) else {
                return Ok(());
            };
            // The largest member ready anywhere gets the next free core;
            // small ones go by (they take less time than the wait).
            let core = (member.size >= CORE_MIN).then(|| {
                let size = member.size;
                self.cores.acquire_blocking(Box::new(move || size))
            });
            let unpacked = self.unpack(member, &mut inflater);
            drop(core);
            match unpacked {
                Ok((n, crc)) => {
                    self.crcs
                        .lock()
                        .expect("poisoned")
                        .push((member.target.path.clone(), n, crc));
                }
                Err(e) => {
                    self.failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    }

    /// Checks a member's local header, then inflates its mapped bytes
    /// straight into its new file; returns the size written and the CRC-32.
    fn unpack(
        &self,
        member: &FileMember,
        inflater: &mut libdeflater::Decompressor,
    ) -> Result<(u64, u32)> {
        let FileMember {
            index: i,
            raw,
            target,
            exec,
            size,
        } = member;
        let data = self.local.check(*i)?;
        self.checked[*i].store(true, Ordering::Relaxed);
        let entry = self
            .zip
            .by_index_data(*i)
            .map_err(|e| self.ex.bad(raw, e.to_string()))?;
        let (method, crc) = (entry.compression(), entry.crc32());
        let end = data.saturating_add(entry.compressed_size());
        let input = Member::map(&self.reader.file, data, end)
            .map_err(|e| self.ex.bad(raw, format!("cannot read: {e}")))?;
        let n = self
            .ex
            .write_file_with(raw, target, *exec, *size, &mut |out| {
                decode(method, input.bytes(), out, crc, inflater)
            })?;
        drop(input);
        self.queue.unpacked(*i);
        Ok((n, crc))
    }
}

/// Members at least this large wait for a core (see the module docs).
const CORE_MIN: u64 = 1 << 20;

/// One member's compressed bytes, mapped from the archive.
struct Member {
    map: Option<memmap2::Mmap>,
    skip: usize,
}

impl Member {
    /// Maps `start..end` of the archive, waiting for the bytes of one that
    /// is still arriving.
    fn map(source: &Source, start: u64, end: u64) -> std::io::Result<Member> {
        if end <= start {
            return Ok(Member { map: None, skip: 0 });
        }
        let file = match source {
            Source::File(f) => f.clone(),
            Source::Arriving(a) => a.wait_for(start, end)?,
        };
        if end > file.metadata()?.len() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let at = start / PAGE * PAGE;
        let len = usize::try_from(end - at).map_err(|_| std::io::ErrorKind::FileTooLarge)?;
        // SAFETY: read-only, within the file's length, over bytes that are
        // never written again: a complete archive is a cached download
        // (immutable, named by its hash), and an arriving one only has bytes
        // written where none arrived yet (`ArrivingFile::wait_for`). A file
        // that is replaced is unlinked and recreated, never truncated.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(at)
                .len(len)
                .map(&*file)?
        };
        Ok(Member {
            map: Some(map),
            skip: (start - at) as usize,
        })
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_ref().map_or(&[], |m| &m[self.skip..])
    }
}

/// Mapping offsets are multiples of this (the largest page size in use).
const PAGE: u64 = 64 << 10;

/// Decodes a member's data into `out`, which has its declared size, and
/// checks the CRC-32 the central directory gives.
fn decode(
    method: zip::CompressionMethod,
    input: &[u8],
    out: &mut [u8],
    crc: u32,
    inflater: &mut libdeflater::Decompressor,
) -> std::result::Result<(), String> {
    use libdeflater::DecompressionError;
    match method {
        zip::CompressionMethod::Stored => {
            if input.len() != out.len() {
                return Err("a stored member's sizes disagree".into());
            }
            out.copy_from_slice(input);
        }
        zip::CompressionMethod::Deflated => match inflater.deflate_decompress(input, out) {
            Ok(n) if n == out.len() => {}
            Ok(_) => return Err("less data than the archive declared".into()),
            Err(DecompressionError::InsufficientSpace) => {
                return Err("more data than the archive declared".into());
            }
            Err(DecompressionError::BadData) => {
                return Err("cannot decompress: invalid deflate data".into());
            }
        },
        other => return Err(format!("unsupported compression method {other}")),
    }
    let got = crc32fast::hash(out);
    if got != crc {
        return Err(format!(
            "CRC-32 mismatch (the archive declares {crc:08x}, the data gives {got:08x})"
        ));
    }
    Ok(())
}

/// Checks a member's local header against the central directory: the
/// streaming readers (and pip) go by the local header, cudaenv by the central
/// directory, so they must name the same file, and the member's bytes must
/// end before the next member begins.
struct LocalCheck<'a> {
    reader: &'a SharedFile,
    zip: &'a ZipArchive<SharedFile>,
    /// Where each member's bytes must end, by index.
    limit: &'a [u64],
    /// The member that follows each one in the file, by index.
    next_of: &'a std::collections::HashMap<usize, usize>,
    ex: &'a Extractor,
}

impl LocalCheck<'_> {
    /// Returns where the member's data starts.
    fn check(&self, i: usize) -> Result<u64> {
        let entry = self
            .zip
            .by_index_data(i)
            .map_err(|e| self.ex.bad(format!("#{i}"), e.to_string()))?;
        let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let start = entry.header_start();
        let mut head = [0u8; 30];
        let read = self.reader.file.read_exact_at(&mut head, start);
        let name_len = u16::from_le_bytes([head[26], head[27]]) as usize;
        let extra_len = u16::from_le_bytes([head[28], head[29]]) as u64;
        let mut local = vec![0u8; name_len];
        let same = read.is_ok()
            && head[..4] == 0x04034b50u32.to_le_bytes()
            && self
                .reader
                .file
                .read_exact_at(&mut local, start + 30)
                .is_ok()
            && local == entry.name_raw();
        if !same {
            return Err(self.ex.bad(
                &raw,
                "the local header names a different file than the central directory",
            ));
        }
        let data = start + 30 + name_len as u64 + extra_len;
        if data.saturating_add(entry.compressed_size()) > self.limit[i] {
            return Err(self.overlap(i));
        }
        Ok(data)
    }

    /// The least a member occupies (a header and its data) must fit before
    /// the next one: checked for every member (`starts`: where its local
    /// header starts, with its index) now, without reading.
    fn check_least(&self, starts: &[(u64, usize)]) -> Result<()> {
        for &(start, i) in starts {
            let entry = self
                .zip
                .by_index_data(i)
                .map_err(|e| self.ex.bad(format!("#{i}"), e.to_string()))?;
            let least = start
                .saturating_add(30)
                .saturating_add(entry.compressed_size());
            if least > self.limit[i] {
                return Err(self.overlap(i));
            }
        }
        Ok(())
    }

    /// The error for member `i` running into the next one.
    fn overlap(&self, i: usize) -> Error {
        let other = self
            .next_of
            .get(&i)
            .and_then(|&j| self.zip.name_for_index(j))
            .or_else(|| self.zip.name_for_index(i))
            .and_then(|n| n.ok())
            .map(|n| n.into_owned());
        self.ex.bad(
            other.as_deref().unwrap_or("?"),
            "members overlap (their data shares bytes)",
        )
    }
}

/// Where the central directory starts, from the end record at `eocd` (the
/// end record itself for zip64 archives, whose offset lives elsewhere).
fn central_start(file: &SharedFile, eocd: u64) -> u64 {
    let mut end = [0u8; 22];
    if file.file.read_exact_at(&mut end, eocd).is_err() {
        return eocd;
    }
    match u32::from_le_bytes([end[16], end[17], end[18], end[19]]) {
        u32::MAX => eocd,
        at => (at as u64).min(eocd),
    }
}

/// Refuses bytes after the end-of-central-directory record (and its
/// comment): readers disagree on such files, and nothing legitimate has them.
fn check_ends_at_end_record(file: &SharedFile, name: &str) -> Result<u64> {
    const EOCD: [u8; 4] = 0x06054b50u32.to_le_bytes();
    let tail_len = file.len.min(22 + 65535);
    let mut tail = vec![0u8; tail_len as usize];
    file.file
        .read_exact_at(&mut tail, file.len - tail_len)
        .map_err(|e| {
            Error::Install(InstallError::BadArchive {
                archive: name.into(),
                entry: None,
                reason: format!("cannot read the end of the archive: {e}"),
            })
        })?;
    let found = (0..tail.len().saturating_sub(21)).rev().find(|&p| {
        tail[p..p + 4] == EOCD
            && p + 22 + u16::from_le_bytes([tail[p + 20], tail[p + 21]]) as usize == tail.len()
    });
    if let Some(p) = found {
        Ok(file.len - tail_len + p as u64)
    } else {
        Err(Error::Install(InstallError::BadArchive {
            archive: name.into(),
            entry: None,
            reason: "trailing data after the end of the zip archive".into(),
        }))
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
