//! Downloads: concurrent, verified while they stream, resumable, cached by content.
//!
//! Every artifact is stored once in the download cache as
//! `downloads/<sha256>-<file name>`; a file only gets that name after its bytes
//! hashed to the expected value, so anything found there is good and a
//! reinstall needs no network. While downloading, bytes go to `….part`
//! (kept on failure, so the next attempt or the next run resumes with a
//! `Range` request; a server that answers `200` to a range gets a fresh start).
//!
//! Large files are fetched as several ranges at once (one connection is
//! rarely the fastest way to move a gigabyte); the hash is then computed by a
//! thread that follows the contiguous prefix of finished chunks, so verifying
//! costs no extra pass at the end. Each finished range is appended to a record
//! beside the part (`….part.ranges`), so that a download interrupted for good
//! (a kill, or out of retries) goes on from those ranges next time. Small
//! files, unknown sizes and servers that ignore ranges use one stream, hashed
//! as it arrives. All downloads share the connections, which go to the most
//! urgent bytes first (`slots`).
//!
//! A caller can also *follow* a fresh download (`fetch_following`): an
//! [`ArrivingFile`] handed to its own thread reads or maps the `.part` file
//! where the bytes have arrived, waiting for more, so that work on the bytes
//! (unpacking a wheel) overlaps the transfer. The follower can say which bytes
//! it wants first (the next ranges start there) and which it no longer needs
//! (once hashed, they are written out and dropped from the page cache). It
//! learns nothing is final: the hash is only known at the end, and a download
//! that restarts from zero or fails makes its reads fail.
//!
//! Every download has an upper bound: the size its index or manifest
//! announces (a `cudaenv mirror` read through `file://` announces its
//! record's sizes), else the most its kind of file has (`Artifact::max_size`:
//! a metapackage wheel), else, where nothing is known (a PEP 503 HTML page,
//! a `file://` source), a ceiling (`MAX_DOWNLOAD`, or
//! `CUDAENV_MAX_DOWNLOAD`): a server streaming without end is cut off there.
//! A `file://` artifact must be a regular file (a FIFO or a link to a device
//! is refused before a byte is read). The cache's file system must have
//! room (`room_for`): for the whole file before a download of known size
//! starts; for a server's `Content-Length`, and before each block, while
//! one of unknown size streams. A full disk is `Error::NoSpace` (exit 6),
//! and the part file is removed.
//!
//! Connection errors, truncated bodies and 5xx answers are retried with
//! exponential backoff; a server that stalls or trickles is given up on
//! after one retry, and then by the whole command (`timeouts`); a hash
//! mismatch is never retried (the `.part` is deleted and the error says what
//! was expected and what arrived). A per-file
//! lock (`….lock`, an OS advisory lock) makes concurrent installs of the same
//! artifact download it once: the second waits, then finds it in the cache.

use crate::os::lock::LockFile;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

mod dns;
mod slots;
pub mod timeouts;
pub mod usage;

use crate::error::{Error, Result};
use crate::install::sources::Artifact;
use crate::os::hash::{self, Hasher};
use slots::{Slots, Urgency};
use timeouts::{Breaker, Paced, STALL_ATTEMPTS, Timeouts};

/// The most bytes a download whose size nobody announced may have (the
/// largest CUDA files, runfiles, are about 5 GB).
pub const MAX_DOWNLOAD: u64 = 16 << 30;

/// Files at least this large are fetched as parallel ranges (default).
pub const PARALLEL_MIN: u64 = 48 << 20;
/// The largest range.
const CHUNK_MAX: u64 = 16 << 20;
/// The smallest range.
const CHUNK_MIN: u64 = 64 << 10;

/// The range size for a file: about an eighth of it, within bounds, in
/// whole 64 KiB (so that ranges start on page boundaries).
fn chunk_size(size: u64) -> u64 {
    (size / 8)
        .clamp(CHUNK_MIN, CHUNK_MAX)
        .next_multiple_of(CHUNK_MIN)
}

/// Downloaded bytes are written in blocks of this size, not as the network
/// hands them over: writes that start mid-page into a new part of the file
/// make the kernel zero the rest of the page first, which cost ~0.2 s of CPU
/// per GB (measured), and fewer, larger writes cost fewer system calls.
const WRITE_BLOCK: usize = 1 << 20;

/// The last bytes of a file, fetched as a range of their own: they hold a
/// zip's end record and (usually) its central directory, which a zip reader
/// looks for within the last 64 KiB + 22 bytes.
const TAIL: u64 = 128 << 10;

/// The ranges `[start, end)` a file of `size` bytes is fetched as when it
/// is fetched in parallel, in file order: a tail of its own, and the rest in
/// chunks.
pub fn spans(size: u64) -> Vec<(u64, u64)> {
    let tail = size.saturating_sub(TAIL) / 4096 * 4096;
    let chunk = chunk_size(tail.max(1));
    let mut out: Vec<(u64, u64)> = (0..tail.div_ceil(chunk))
        .map(|i| (i * chunk, ((i + 1) * chunk).min(tail)))
        .collect();
    out.push((tail, size));
    out
}

/// Attempts per request before giving up.
const ATTEMPTS: u32 = 5;

/// Ranges of one file in flight at most.
const RANGE_WORKERS: usize = 8;

/// How urgent a file's tail range is (see `slots`): more than any other
/// bytes, since nothing is unpacked before the central directory is read.
const TAIL_URGENCY: u64 = u64::MAX;

/// How urgent a one-stream download is: such files are small (under
/// `PARALLEL_MIN`) or come from servers without ranges; they go before the
/// ranges of large files, whose weights are member sizes.
const STREAM_URGENCY: u64 = u64::MAX - 1;

/// How long work reports itself. The library only knows this trait; the
/// terminal implementation lives in `ui`.
pub trait Progress: Send + Sync {
    /// A new line of work (an artifact) with its size when known.
    fn add(&self, label: &str, total: Option<u64>) -> usize;
    /// Bytes done on line `id`.
    fn advance(&self, id: usize, bytes: u64);
    /// Rewinds line `id` (a download restarted from zero).
    fn reset(&self, id: usize);
    /// What line `id` is doing now (`downloading`, `unpacking`, `cached`).
    fn status(&self, id: usize, status: &str);
    /// Line `id` is done.
    fn finish(&self, id: usize);
    /// A message for the user that belongs to no line (a lock that another
    /// process holds), shown without breaking the bars.
    fn note(&self, _message: &str) {}
}

/// Progress that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn add(&self, _: &str, _: Option<u64>) -> usize {
        0
    }
    fn advance(&self, _: usize, _: u64) {}
    fn reset(&self, _: usize) {}
    fn status(&self, _: usize, _: &str) {}
    fn finish(&self, _: usize) {}
}

/// The download cache: `<cache>/downloads` and the unpacked `<cache>/pkgs`.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn downloads(&self) -> PathBuf {
        self.dir.join("downloads")
    }

    pub fn pkgs(&self) -> PathBuf {
        self.dir.join("pkgs")
    }

    /// The cache key of an artifact: its sha256, or for an unverified one a
    /// hash of its URL (so it is still found again, never trusted as content).
    pub fn key(a: &Artifact) -> String {
        Self::key_of(a.sha256.as_deref(), &a.url.without_credentials())
    }

    /// The key from an artifact's sha256 and URL without credentials (as a
    /// version's metadata records its components).
    pub fn key_of(sha256: Option<&str>, url: &str) -> String {
        match sha256 {
            Some(h) => h.to_ascii_lowercase(),
            None => format!("url-{}", hash::sha256(url.as_bytes())),
        }
    }

    /// Where a verified download lives.
    pub fn file_for(&self, a: &Artifact) -> PathBuf {
        self.downloads()
            .join(format!("{}-{}", Self::key(a), safe_file_name(&a.file_name)))
    }
}

/// A file name as a single harmless path component.
fn safe_file_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_start_matches('.').chars().take(150).collect()
}

/// Downloads artifacts into the cache.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    cache: Cache,
    offline: bool,
    /// The connections all downloads share, granted by urgency.
    slots: Arc<Slots>,
    progress: Arc<dyn Progress>,
    /// Base delay between retries.
    backoff: Duration,
    /// Files at least this large are fetched as parallel ranges (0: never).
    parallel_min: u64,
    /// When a server counts as stalled.
    timeouts: Timeouts,
    /// The bound of a download whose size is not announced.
    max_unannounced: u64,
}

/// Builds the HTTP client every source uses: rustls, HTTP/2 when offered,
/// proxies from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY (reqwest's
/// default reads them from the process environment). No connection or read
/// waits longer than the timeouts' window (see `timeouts` for the rest).
pub fn client(timeouts: &Timeouts) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(concat!("cudaenv/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(timeouts.window)
        .read_timeout(timeouts.window)
        .dns_resolver(Arc::new(dns::SharedLookups::default()))
        .build()
        .map_err(|e| Error::HttpClient {
            reason: e.to_string(),
        })
}

/// The retry policy every HTTP request shares: up to `attempts` tries of `op`,
/// with exponential backoff from `first_delay`, retrying only what `op` marks
/// `Attempt::Retry` or `Attempt::Stalled` (at most `STALL_ATTEMPTS` of
/// those); the last reason is reported when it gives up. Nothing is tried
/// once a request made with the same `timeouts` gave up on a stall
/// (`timeouts::Breaker`).
pub(crate) async fn retrying<T, F, Fut>(
    url: &str,
    attempts: u32,
    first_delay: Duration,
    timeouts: &Timeouts,
    mut op: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, Attempt>>,
{
    let mut delay = first_delay;
    let mut last = String::new();
    let mut stalls = 0;
    for attempt in 0..attempts {
        if let Some(stalled) = timeouts.breaker.tripped() {
            return Err(Breaker::error(url, &stalled));
        }
        if attempt > 0 {
            tokio::time::sleep(delay).await;
            delay *= 2;
        }
        match op().await {
            Ok(v) => return Ok(v),
            Err(Attempt::Fail(e)) => return Err(e),
            Err(Attempt::Retry(why)) => last = why,
            Err(Attempt::Stalled(why)) => {
                stalls += 1;
                if stalls >= STALL_ATTEMPTS {
                    return Err(gave_up_stalled(url, &why, stalls, &timeouts.breaker));
                }
                last = why;
            }
        }
    }
    Err(Error::Network {
        url: url.into(),
        reason: format!("{last} (gave up after {attempts} attempts)"),
        from: None,
    })
}

/// Gives up on a stalled request, and with it on the network for the rest
/// of the command.
fn gave_up_stalled(url: &str, why: &str, stalls: u32, breaker: &Breaker) -> Error {
    breaker.trip(url);
    Error::NetworkStalled {
        url: url.into(),
        reason: format!("{why} (gave up after {stalls} attempts)"),
        default_secs: timeouts::DEFAULT_SECS,
    }
}

pub(crate) enum Attempt {
    /// Worth another try (network trouble, 5xx, truncated body).
    Retry(String),
    /// The server stopped answering or trickles (see `timeouts`): tried
    /// again at most once.
    Stalled(String),
    /// Final.
    Fail(Error),
}

/// Work that reads a download while it arrives: handed the [`ArrivingFile`]
/// when a download starts from its first byte.
pub type Follower = Box<dyn FnOnce(ArrivingFile) + Send>;

/// Which bytes of a `.part` file hold the download's final bytes.
#[derive(Default)]
struct Arrival {
    state: Mutex<Arrived>,
    cv: Condvar,
}

#[derive(Default)]
struct Arrived {
    /// The part file, readable, once it exists.
    file: Option<Arc<File>>,
    /// Bytes from the start that are there (one stream).
    prefix: u64,
    /// Bytes from the start that are hashed.
    hashed: u64,
    /// Which `RELEASE_BLOCK`s were dropped from the page cache (see
    /// `ArrivingFile::release_except`).
    released: Vec<bool>,
    /// Counts changes (see `ArrivingFile::generation`).
    generation: u64,
    /// Byte ranges the follower wants first, most wanted first, each with
    /// its weight (see `ArrivingFile::prefer`).
    preferred: Vec<(u64, u64, u64)>,
    /// For ranged downloads: every range (sorted by offset) and whether it
    /// is complete.
    ranges: Vec<(u64, u64, bool)>,
    end: ArrivalEnd,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum ArrivalEnd {
    #[default]
    Open,
    /// Every byte is there and matched the expected hash.
    Complete,
    /// The download failed or started over: what was read means nothing.
    Abandoned,
}

impl Arrived {
    /// How far from `pos` the bytes are there without a gap (`pos` itself
    /// when they are not).
    fn there_from(&self, pos: u64) -> u64 {
        let mut end = if self.prefix > pos { self.prefix } else { pos };
        if !self.ranges.is_empty() {
            let i = self.ranges.partition_point(|r| r.1 <= end);
            for &(start, stop, done) in &self.ranges[i..] {
                if !done || start > end {
                    break;
                }
                end = stop;
            }
        }
        end
    }
}

impl Arrival {
    fn update(&self, f: impl FnOnce(&mut Arrived)) {
        let mut a = self.state.lock().expect("poisoned");
        if a.end == ArrivalEnd::Open {
            f(&mut a);
        }
        a.generation += 1;
        self.cv.notify_all();
    }

    fn attach(&self, file: &File) {
        let clone = file.try_clone().ok().map(Arc::new);
        self.update(|a| match clone {
            Some(f) => a.file = Some(f),
            None => a.end = ArrivalEnd::Abandoned,
        });
    }

    fn finish(&self, end: ArrivalEnd) {
        self.update(|a| a.end = end);
    }
}

/// Abandons the arrival unless the download completed (every early return
/// of `fetch_following` goes through here).
struct ArrivalGuard(Arc<Arrival>);

impl Drop for ArrivalGuard {
    fn drop(&mut self) {
        self.0.finish(ArrivalEnd::Abandoned);
    }
}

/// A download in progress, read at any offset (see the module docs): a read
/// waits until its first byte has arrived, and fails once the download is
/// abandoned. Nothing read is verified until the download completes.
#[derive(Clone)]
pub struct ArrivingFile {
    arrival: Arc<Arrival>,
    len: u64,
}

impl ArrivingFile {
    /// The size the download will have.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads at `pos`, waiting for the bytes; 0 only at the end.
    pub fn read_at(&self, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
        if pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let (file, end) = {
            let mut a = self.arrival.state.lock().expect("poisoned");
            loop {
                if a.end == ArrivalEnd::Abandoned {
                    return Err(std::io::Error::other("the download was abandoned"));
                }
                let end = if a.end == ArrivalEnd::Complete {
                    self.len
                } else {
                    a.there_from(pos)
                };
                if end > pos && a.file.is_some() {
                    break (a.file.clone().expect("checked"), end);
                }
                a = self.arrival.cv.wait(a).expect("poisoned");
            }
        };
        let want = ((end - pos) as usize).min(buf.len());
        crate::os::read_at(&file, &mut buf[..want], pos)
    }

    /// Waits until every byte of `start..end` has arrived, and returns the
    /// file that holds them. Those bytes are not written again (a download
    /// only writes where nothing has arrived yet, and a fresh start goes to a
    /// new file), so they can be mapped; as for every read, they are only
    /// verified once the download completes.
    pub fn wait_for(&self, start: u64, end: u64) -> std::io::Result<Arc<File>> {
        let end = end.min(self.len);
        let mut a = self.arrival.state.lock().expect("poisoned");
        loop {
            if a.end == ArrivalEnd::Abandoned {
                return Err(std::io::Error::other("the download was abandoned"));
            }
            let there = a.end == ArrivalEnd::Complete || a.there_from(start) >= end;
            if let (true, Some(file)) = (there, &a.file) {
                return Ok(file.clone());
            }
            a = self.arrival.cv.wait(a).expect("poisoned");
        }
    }

    /// Whether every byte of `start..end` has arrived (not waiting).
    pub fn there(&self, start: u64, end: u64) -> bool {
        let a = self.arrival.state.lock().expect("poisoned");
        a.end == ArrivalEnd::Complete || (a.file.is_some() && a.there_from(start) >= end)
    }

    /// Whether the download was abandoned (every read fails).
    pub fn abandoned(&self) -> bool {
        self.arrival.state.lock().expect("poisoned").end == ArrivalEnd::Abandoned
    }

    /// A number that changes whenever more bytes arrive or the download ends.
    pub fn generation(&self) -> u64 {
        self.arrival.state.lock().expect("poisoned").generation
    }

    /// Waits until `generation` is no longer `seen`.
    pub fn wait_past(&self, seen: u64) {
        let mut a = self.arrival.state.lock().expect("poisoned");
        while a.generation == seen {
            a = self.arrival.cv.wait(a).expect("poisoned");
        }
    }

    /// Asks for these byte ranges `(start, end, weight)` first, most wanted
    /// first: a ranged download starts its next range where the first
    /// wanted range still lacks one (an unpacker that does the largest
    /// member first wants that member's bytes before the rest). The weight
    /// (a member's unpacked size) ranks the range against those of every
    /// other download running at the same time: connections go to the
    /// heaviest wanted bytes of all.
    pub fn prefer(&self, ranges: Vec<(u64, u64, u64)>) {
        self.arrival.update(|a| a.preferred = ranges);
    }

    /// Says that of the bytes read so far only `needed` (sorted by start)
    /// will be read again. The others, once hashed too, are written out and
    /// dropped from the page cache, so that the memory they held serves what
    /// comes next: a gigabyte wheel then does not also hold a gigabyte of
    /// memory while its members are being unpacked, and memory used again is
    /// cheaper than memory touched for the first time (much cheaper in
    /// virtual machines, see docs/PERFORMANCE.md). Only a hint: dropped
    /// bytes read again come from the disk.
    pub fn release_except(&self, needed: &[(u64, u64)]) {
        let (file, blocks) = {
            let mut a = self.arrival.state.lock().expect("poisoned");
            let Some(file) = a.file.clone() else {
                return;
            };
            let hashed = if a.end == ArrivalEnd::Complete {
                self.len
            } else {
                a.hashed
            };
            let count = hashed / RELEASE_BLOCK;
            if a.released.len() < count as usize {
                a.released.resize(count as usize, false);
            }
            let mut blocks = Vec::new();
            let mut k = 0;
            for b in 0..count {
                let (lo, hi) = (b * RELEASE_BLOCK, (b + 1) * RELEASE_BLOCK);
                while k < needed.len() && needed[k].1 <= lo {
                    k += 1;
                }
                let in_use = needed[k..]
                    .iter()
                    .take_while(|r| r.0 < hi)
                    .any(|r| r.1 > lo);
                if !in_use && !a.released[b as usize] {
                    a.released[b as usize] = true;
                    blocks.push((lo, hi));
                }
            }
            (file, blocks)
        };
        for (lo, hi) in blocks {
            drop_cached(&file, lo, hi);
        }
    }

    /// Fills `buf` from `pos`, waiting as needed.
    pub fn read_exact_at(&self, mut buf: &mut [u8], mut pos: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, pos)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    pos += n as u64;
                }
            }
        }
        Ok(())
    }
}

impl Fetcher {
    pub fn new(
        client: reqwest::Client,
        cache: Cache,
        offline: bool,
        jobs: usize,
        progress: Arc<dyn Progress>,
    ) -> Fetcher {
        Fetcher {
            client,
            cache,
            offline,
            slots: Slots::new(jobs),
            progress,
            backoff: Duration::from_millis(500),
            parallel_min: PARALLEL_MIN,
            max_unannounced: MAX_DOWNLOAD,
            timeouts: Timeouts::default(),
        }
    }

    /// Sets when a server counts as stalled (`CUDAENV_HTTP_TIMEOUT`).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Fetcher {
        self.timeouts = timeouts;
        self
    }

    /// Sets the bound of a download whose size is not announced.
    pub fn with_max_download(mut self, bytes: u64) -> Fetcher {
        self.max_unannounced = bytes;
        self
    }

    /// The most bytes `a` may have: its announced size, else the most its
    /// kind of file has (`max_size`), else the ceiling.
    fn bound(&self, a: &Artifact) -> u64 {
        a.size
            .or(a.max_size.map(|m| m.min(self.max_unannounced)))
            .unwrap_or(self.max_unannounced)
    }

    /// The error for a download that passed its bound.
    fn past_bound(&self, a: &Artifact, what: &str) -> Error {
        Error::SizeMismatch {
            url: a.url.to_string(),
            reason: match (a.size, a.max_size) {
                (Some(s), _) => format!("{what} more than the {s} bytes the index announced"),
                (None, Some(m)) if m < self.max_unannounced => format!(
                    "no size was announced, and {what} more than the {} such a file has at most",
                    crate::spec::human_bytes(m)
                ),
                (None, _) => format!(
                    "no size was announced, and {what} more than the {} ceiling for such downloads ({} sets it)",
                    crate::spec::human_bytes(self.max_unannounced),
                    crate::context::env_vars::CUDAENV_MAX_DOWNLOAD
                ),
            },
            from: Some(a.source),
        }
    }

    /// Sets the size from which files are fetched as parallel ranges (0: never).
    pub fn with_parallel_min(mut self, bytes: u64) -> Fetcher {
        self.parallel_min = bytes;
        self
    }

    pub fn with_backoff(mut self, d: Duration) -> Fetcher {
        self.backoff = d;
        self
    }

    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    pub fn progress(&self) -> &Arc<dyn Progress> {
        &self.progress
    }

    /// Returns the verified file for `a`, downloading it unless cached.
    /// `line` is the artifact's progress line.
    pub async fn fetch(&self, a: &Artifact, line: usize) -> Result<PathBuf> {
        self.fetch_following(a, line, None).await
    }

    /// `fetch`, with `follower` run on its own thread over the bytes as they
    /// arrive when the file is downloaded from its first byte (not when it is
    /// cached, copied from a `file://` mirror or resumed: then it never runs).
    pub async fn fetch_following(
        &self,
        a: &Artifact,
        line: usize,
        follower: Option<Follower>,
    ) -> Result<PathBuf> {
        let dest = self.cache.file_for(a);
        if dest.is_file() {
            self.progress.status(line, "cached");
            return Ok(dest);
        }
        if self.offline {
            return Err(Error::Offline {
                file: a.file_name.clone(),
                url: a.url.to_string(),
            });
        }
        let dir = self.cache.downloads();
        std::fs::create_dir_all(&dir).map_err(Error::io("cannot create", &dir))?;
        let lock_path = dest.with_extension("lock");
        let lock = LockFile::acquire_async(&lock_path, &|n: &str| self.progress.note(n)).await?;
        if dest.is_file() {
            self.progress.status(line, "cached");
            drop(lock);
            return Ok(dest);
        }
        let part = PathBuf::from(format!("{}.part", dest.display()));
        // Room for the file before a byte is written: its announced size, or
        // at least one write block when none is announced (the stream then
        // checks again before each block: `room_for`).
        let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        let needed = match a.size {
            Some(size) => size.saturating_sub(have),
            None => WRITE_BLOCK as u64,
        };
        if let Err(e) = room_for(a, &part, have, needed, a.size.is_some()) {
            // A part that cannot grow is no start for a resume.
            remove_part(&part);
            return Err(e);
        }
        let mark = Arc::new(Arrival::default());
        let guard = ArrivalGuard(mark.clone());
        let fresh = !a.url.expose().starts_with("file://") && std::fs::metadata(&part).is_err();
        match (follower, a.size) {
            (Some(follow), Some(len)) if fresh => follow(ArrivingFile {
                arrival: mark.clone(),
                len,
            }),
            _ => mark.finish(ArrivalEnd::Abandoned),
        }
        let actual = self.download(a, &part, line, &mark).await?;
        if let Some(expected) = &a.sha256
            && !actual.eq_ignore_ascii_case(expected)
        {
            remove_part(&part);
            return Err(Error::HashMismatch {
                algorithm: "sha256",
                url: a.url.to_string(),
                expected: expected.clone(),
                actual,
            });
        }
        if a.sha256.is_none()
            && let Some(expected) = &a.md5
        {
            // Only NVIDIA's md5 pins this file: one more pass over it, in
            // the background, before it gets its name in the cache.
            self.progress.status(line, "checking md5");
            let (file, expected) = (part.clone(), expected.clone());
            let actual = tokio::task::spawn_blocking(move || hash::md5_file(&file))
                .await
                .map_err(Error::task("hashing"))??;
            if !actual.eq_ignore_ascii_case(&expected) {
                remove_part(&part);
                return Err(Error::HashMismatch {
                    algorithm: "md5",
                    url: a.url.to_string(),
                    expected,
                    actual,
                });
            }
        }
        mark.finish(ArrivalEnd::Complete);
        drop(guard);
        std::fs::rename(&part, &dest).map_err(Error::io("cannot move into the cache", &dest))?;
        let _ = std::fs::remove_file(ranges_file(&part));
        drop(lock);
        Ok(dest)
    }

    /// Downloads into `part` (resuming what is there) and returns the sha256.
    async fn download(
        &self,
        a: &Artifact,
        part: &Path,
        line: usize,
        mark: &Arc<Arrival>,
    ) -> Result<String> {
        // A mirror can be a local directory (`file:///srv/nvidia`), e.g. on an
        // air-gapped cluster: copied with the same hashing and size checks.
        if let Some(raw) = a.url.expose().strip_prefix("file://") {
            self.progress.status(line, "copying");
            // Index pages give percent-encoded URLs (`my%20mirror`); a base
            // typed by hand may hold the path as it is.
            let src = reqwest::Url::parse(a.url.expose())
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .filter(|p| p.exists())
                .unwrap_or_else(|| PathBuf::from(raw));
            return self.copy_local(a, &src, part, line);
        }
        let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
        let size = a.size;
        if let Some(s) = size
            && have > s
        {
            remove_part(part);
        }
        self.progress.status(line, "downloading");
        // A ranged download interrupted earlier (killed, or out of retries)
        // goes on from the ranges it finished.
        let finished = size.and_then(|s| finished_ranges(part, s));
        if let Some(s) = size
            && self.parallel_min > 0
            && s >= self.parallel_min
            && (have == 0 || finished.is_some())
        {
            match self.download_ranges(a, part, s, line, mark, finished).await {
                Ok(h) => return Ok(h),
                Err(RangeFallback::Ignored) => {
                    // Starts over as one stream: a follower cannot go on.
                    mark.finish(ArrivalEnd::Abandoned);
                    remove_part(part);
                    self.progress.reset(line);
                }
                Err(RangeFallback::Error(e)) => return Err(e),
            }
        }
        self.download_stream(a, part, line, mark).await
    }

    /// Copies a `file://` artifact into `part`, hashing as it goes.
    fn copy_local(&self, a: &Artifact, src: &Path, part: &Path, line: usize) -> Result<String> {
        let unreadable = |e: std::io::Error| Error::Network {
            url: a.url.to_string(),
            reason: format!("cannot read the mirror's file: {e}"),
            from: Some(a.source),
        };
        let mut from = match crate::os::fs::open_regular(src) {
            Ok((f, _)) => f,
            Err(crate::os::fs::ReadError::NotRegular(what)) => {
                return Err(Error::NotRegularArtifact {
                    url: a.url.to_string(),
                    what,
                });
            }
            Err(e) => return Err(unreadable(e.into())),
        };
        // The file's own size tells the room it needs, announced or not.
        let len = from.metadata().map(|m| m.len()).unwrap_or(0);
        if len > self.bound(a) {
            return Err(self.past_bound(a, "the file holds"));
        }
        room_for(a, part, 0, len, true)?;
        let mut to = File::create(part).map_err(|e| write_failed(a, part, 0, e))?;
        self.progress.reset(line);
        let mut hasher = Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut got: u64 = 0;
        loop {
            let n = from.read(&mut buf).map_err(unreadable)?;
            if n == 0 {
                break;
            }
            got += n as u64;
            if got > self.bound(a) {
                drop(to);
                remove_part(part);
                return Err(self.past_bound(a, "the file holds"));
            }
            hasher.update(&buf[..n]);
            if let Err(e) = std::io::Write::write_all(&mut to, &buf[..n]) {
                drop(to);
                return Err(write_failed(a, part, got, e));
            }
            self.progress.advance(line, n as u64);
        }
        if let Some(want) = a.size
            && got != want
        {
            drop(to);
            remove_part(part);
            return Err(Error::SizeMismatch {
                url: a.url.to_string(),
                reason: format!("got {got} bytes, the index announced {want}"),
                from: Some(a.source),
            });
        }
        Ok(hasher.finish())
    }

    /// One stream, appended to `part`, hashed as it arrives.
    async fn download_stream(
        &self,
        a: &Artifact,
        part: &Path,
        line: usize,
        mark: &Arc<Arrival>,
    ) -> Result<String> {
        retrying(
            &a.url.to_string(),
            ATTEMPTS,
            self.backoff,
            &self.timeouts,
            || self.stream_once(a, part, line, mark),
        )
        .await
        .map_err(|e| e.from_source(a.source))
    }

    async fn stream_once(
        &self,
        a: &Artifact,
        part: &Path,
        line: usize,
        mark: &Arc<Arrival>,
    ) -> Result<String, Attempt> {
        let io = |e: std::io::Error| Attempt::Fail(Error::io("cannot write", part)(e));
        let mut have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
        let _slot = self.slots.acquire(Box::new(|| STREAM_URGENCY)).await;
        let mut req = self.client.get(a.url.expose());
        if have > 0 {
            req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let (resp, started) = timeouts::send(req, &self.timeouts).await?;
        let status = resp.status();
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(Attempt::Retry(format!("server answered {status}")));
        }
        if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
            // What we have is not a prefix the server recognises: start over.
            mark.finish(ArrivalEnd::Abandoned);
            remove_part(part);
            return Err(Attempt::Retry("resume refused; restarting".into()));
        }
        if !status.is_success() {
            return Err(Attempt::Fail(Error::Network {
                url: a.url.to_string(),
                reason: format!("server answered {status}"),
                from: Some(a.source),
            }));
        }
        let resumed = have > 0 && status == reqwest::StatusCode::PARTIAL_CONTENT;
        // A size the index did not announce but the server does: bounded
        // and given room before a byte is written.
        if a.size.is_none()
            && let Some(len) = resp.content_length()
        {
            let before = if resumed { have } else { 0 };
            if before + len > self.bound(a) {
                remove_part(part);
                return Err(Attempt::Fail(self.past_bound(a, "the server announced")));
            }
            if let Err(e) = room_for(a, part, before, len, true) {
                remove_part(part);
                return Err(Attempt::Fail(e));
            }
        }
        let mut hasher = Hasher::new();
        let mut file = if resumed {
            // Hash what we already have, then append.
            hasher
                .read_from(File::open(part).map_err(io)?)
                .map_err(io)?;
            std::fs::OpenOptions::new()
                .append(true)
                .open(part)
                .map_err(io)?
        } else {
            // Fresh start (also when the server ignored our Range). A
            // follower that read earlier bytes cannot go on.
            if have > 0 {
                mark.finish(ArrivalEnd::Abandoned);
            }
            have = 0;
            self.progress.reset(line);
            // A new file, not the old one truncated: what a follower mapped
            // from the old one stays valid until it notices.
            remove_part(part);
            let f = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(part)
                .map_err(io)?;
            mark.attach(&f);
            f
        };
        self.progress.advance(line, have);
        let expected_len = resp.content_length().map(|l| l + have).or(a.size);
        let mut stream = Paced::new(resp.bytes_stream(), &self.timeouts, started);
        let mut got = have;
        // Written in blocks (see WRITE_BLOCK); what is held is flushed before
        // any return that keeps the part, so a resume starts after it.
        let mut block = Vec::with_capacity(WRITE_BLOCK);
        // Before each block, the room for it: a download of unknown size
        // stops, naming the space, before the disk is full.
        let flush = |block: &mut Vec<u8>, file: &mut File, upto: u64| {
            let len = block.len() as u64;
            if a.size.is_none() {
                room_for(a, part, upto - len, len, false)
                    .map_err(|e| Box::new(Attempt::Fail(e)))?;
            }
            std::io::Write::write_all(file, block)
                .map_err(|e| Box::new(Attempt::Fail(write_failed(a, part, upto - len, e))))?;
            block.clear();
            mark.update(|m| {
                m.prefix = upto;
                m.hashed = upto;
            });
            Ok::<(), Box<Attempt>>(())
        };
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    flush(&mut block, &mut file, got).map_err(|f| no_room(*f, part))?;
                    return Err(e);
                }
            };
            hasher.update(&chunk);
            block.extend_from_slice(&chunk);
            got += chunk.len() as u64;
            if block.len() >= WRITE_BLOCK {
                flush(&mut block, &mut file, got).map_err(|f| no_room(*f, part))?;
            }
            self.progress.advance(line, chunk.len() as u64);
            if got > self.bound(a) {
                remove_part(part);
                // More bytes than announced (or than any such file has) is
                // not a flaky connection but a different file: an
                // integrity failure, never retried.
                return Err(Attempt::Fail(self.past_bound(a, "the server sent")));
            }
        }
        flush(&mut block, &mut file, got).map_err(|f| no_room(*f, part))?;
        if let Some(want) = expected_len
            && got < want
        {
            return Err(Attempt::Retry(format!(
                "connection closed after {got} of {want} bytes"
            )));
        }
        if let Some(want) = a.size
            && got != want
        {
            return Err(Attempt::Retry(format!(
                "got {got} bytes, the index announced {want}"
            )));
        }
        Ok(hasher.finish())
    }

    /// Several ranges at once into a preallocated `part`; a thread hashes the
    /// contiguous prefix as chunks complete.
    async fn download_ranges(
        &self,
        a: &Artifact,
        part: &Path,
        size: u64,
        line: usize,
        mark: &Arc<Arrival>,
        finished: Option<Vec<bool>>,
    ) -> Result<String, RangeFallback> {
        let cannot_write = |e| RangeFallback::Error(Error::io("cannot write", part)(e));
        let spans = spans(size);
        let n = spans.len();
        let (file, finished) = match finished {
            Some(done) if done.len() == n => (
                File::options()
                    .read(true)
                    .write(true)
                    .open(part)
                    .map_err(cannot_write)?,
                done,
            ),
            _ => (
                create_part(part, size).map_err(cannot_write)?,
                vec![false; n],
            ),
        };
        let file = Arc::new(file);
        let record = Mutex::new(
            File::options()
                .append(true)
                .open(ranges_file(part))
                .map_err(cannot_write)?,
        );
        mark.attach(&file);
        mark.update(|m| {
            m.ranges = spans
                .iter()
                .zip(&finished)
                .map(|(&(a, b), &done)| (a, b, done))
                .collect()
        });
        let resumed: u64 = spans
            .iter()
            .zip(&finished)
            .filter(|(_, done)| **done)
            .map(|(s, _)| s.1 - s.0)
            .sum();
        self.progress.advance(line, resumed);
        let state = Arc::new(Chunks {
            done: Mutex::new((finished.clone(), false)),
            cv: Condvar::new(),
        });
        let hasher = {
            let file = file.clone();
            let state = state.clone();
            let spans = spans.clone();
            let mark = mark.clone();
            std::thread::spawn(move || {
                hash_following(&file, &spans, &state, &|upto| {
                    mark.update(|m| m.hashed = upto)
                })
            })
        };
        // Which range to fetch next, and how urgent that is: the tail first
        // (a zip's central directory is there, and whoever follows the
        // download needs it before anything else), then what the follower
        // prefers (the largest members: they take longest to unpack,
        // weighed against every other download's), then file order. Asked
        // again whenever a connection is free, as preferences change.
        let started = Arc::new(Mutex::new(finished));
        let next = {
            let (started, mark, spans) = (started.clone(), mark.clone(), spans.clone());
            move |take: bool| -> Option<(usize, u64)> {
                let mut started = started.lock().expect("poisoned");
                let pick = if started[n - 1] {
                    let m = mark.state.lock().expect("poisoned");
                    next_span(&spans, &started, &m.preferred)?
                } else {
                    (n - 1, TAIL_URGENCY)
                };
                if take {
                    started[pick.0] = true;
                }
                Some(pick)
            }
        };
        let (spans_ref, record) = (&spans, &record);
        let workers = (0..RANGE_WORKERS).map(|_| {
            let (file, state, next) = (file.clone(), state.clone(), next.clone());
            async move {
                loop {
                    if next(false).is_none() {
                        return Ok(());
                    }
                    let urgency: Urgency = {
                        let next = next.clone();
                        Box::new(move || next(false).map_or(0, |(_, u)| u))
                    };
                    let slot = self.slots.acquire(urgency).await;
                    let Some((i, _)) = next(true) else {
                        return Ok(());
                    };
                    let (start, end) = spans_ref[i];
                    let r = self.range_with_retries(a, &file, start, end, line).await;
                    drop(slot);
                    r?;
                    // Recorded once its bytes are written, for a later
                    // attempt to go on from (`finished_ranges`).
                    std::io::Write::write_all(
                        &mut *record.lock().expect("poisoned"),
                        format!("{start} {end}\n").as_bytes(),
                    )
                    .map_err(|e| RangeFallback::Error(Error::io("cannot write", part)(e)))?;
                    write_out(&file, start, end);
                    let mut g = state.done.lock().expect("poisoned");
                    g.0[i] = true;
                    state.cv.notify_all();
                    drop(g);
                    mark.update(|m| m.ranges[i].2 = true);
                }
            }
        });
        // The first failure ends the download (the other ranges are dropped).
        let failure = futures_util::future::try_join_all(workers).await.err();
        {
            let mut g = state.done.lock().expect("poisoned");
            g.1 = failure.is_some();
            state.cv.notify_all();
        }
        let digest = hasher.join().ok().flatten();
        if let Some(e) = failure {
            // The part and its record stay: the next attempt goes on from
            // the finished ranges (a server that ignores ranges gets the
            // part removed by the caller).
            return Err(e);
        }
        digest.ok_or_else(|| {
            RangeFallback::Error(Error::io("cannot read", part)(std::io::Error::other(
                "hashing failed",
            )))
        })
    }

    async fn range_with_retries(
        &self,
        a: &Artifact,
        file: &File,
        start: u64,
        end: u64,
        line: usize,
    ) -> Result<(), RangeFallback> {
        let mut delay = self.backoff;
        let mut last = String::new();
        let mut stalls = 0;
        let shown = a.url.to_string();
        for attempt in 0..ATTEMPTS {
            if let Some(stalled) = self.timeouts.breaker.tripped() {
                return Err(RangeFallback::Error(Breaker::error(&shown, &stalled)));
            }
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            let req = self
                .client
                .get(a.url.expose())
                .header(reqwest::header::RANGE, format!("bytes={start}-{}", end - 1));
            let (resp, started) = match timeouts::send(req, &self.timeouts).await {
                Ok(r) => r,
                Err(Attempt::Stalled(why)) => {
                    stalls += 1;
                    if stalls >= STALL_ATTEMPTS {
                        return Err(RangeFallback::Error(gave_up_stalled(
                            &shown,
                            &why,
                            stalls,
                            &self.timeouts.breaker,
                        )));
                    }
                    last = why;
                    continue;
                }
                Err(Attempt::Retry(why)) => {
                    last = why;
                    continue;
                }
                Err(Attempt::Fail(e)) => return Err(RangeFallback::Error(e)),
            };
            let status = resp.status();
            if status == reqwest::StatusCode::OK {
                return Err(RangeFallback::Ignored);
            }
            if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                last = format!("server answered {status}");
                continue;
            }
            if status != reqwest::StatusCode::PARTIAL_CONTENT {
                return Err(RangeFallback::Error(Error::Network {
                    url: a.url.to_string(),
                    reason: format!("server answered {status}"),
                    from: Some(a.source),
                }));
            }
            let mut pos = start;
            let mut stream = Paced::new(resp.bytes_stream(), &self.timeouts, started);
            let mut broken = None;
            // Written in blocks (see WRITE_BLOCK); a broken range starts over,
            // so what is held then is simply dropped.
            let mut block = Vec::with_capacity(WRITE_BLOCK);
            let write = |block: &mut Vec<u8>, at: u64| {
                let r = crate::os::write_all_at(file, block, at);
                block.clear();
                r.map_err(Error::io(
                    "cannot write the download",
                    self.cache.file_for(a),
                ))
            };
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(c) => {
                        if pos + c.len() as u64 > end {
                            return Err(RangeFallback::Ignored);
                        }
                        block.extend_from_slice(&c);
                        pos += c.len() as u64;
                        if block.len() >= WRITE_BLOCK {
                            let at = pos - block.len() as u64;
                            write(&mut block, at).map_err(RangeFallback::Error)?;
                        }
                        self.progress.advance(line, c.len() as u64);
                    }
                    Err(Attempt::Stalled(why)) => {
                        stalls += 1;
                        if stalls >= STALL_ATTEMPTS {
                            return Err(RangeFallback::Error(gave_up_stalled(
                                &shown,
                                &why,
                                stalls,
                                &self.timeouts.breaker,
                            )));
                        }
                        broken = Some(why);
                        break;
                    }
                    Err(Attempt::Retry(why)) => {
                        broken = Some(why);
                        break;
                    }
                    Err(Attempt::Fail(e)) => return Err(RangeFallback::Error(e)),
                }
            }
            if pos == end {
                let at = pos - block.len() as u64;
                write(&mut block, at).map_err(RangeFallback::Error)?;
                return Ok(());
            }
            // The chunk restarts from its beginning (progress may overcount a little).
            last = broken.unwrap_or_else(|| {
                format!("range ended after {} of {} bytes", pos - start, end - start)
            });
        }
        Err(RangeFallback::Error(Error::Network {
            url: a.url.to_string(),
            reason: format!("{last} (gave up after {ATTEMPTS} attempts)"),
            from: Some(a.source),
        }))
    }
}

enum RangeFallback {
    /// The server does not honour ranges: use one stream instead.
    Ignored,
    Error(Error),
}

struct Chunks {
    /// (finished chunks, aborted)
    done: Mutex<(Vec<bool>, bool)>,
    cv: Condvar,
}

/// The preallocated file ranged downloads write into, with a fresh record
/// of finished ranges beside it (see `finished_ranges`). It must be readable
/// too: `hash_following` reads it back while the ranges arrive (a write-only
/// `File::create` made every fresh download of a large wheel fail with
/// "hashing failed").
fn create_part(part: &Path, size: u64) -> std::io::Result<File> {
    // A new file, never an old one truncated (see `ArrivingFile::wait_for`).
    match std::fs::remove_file(part) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // The record first: a part without one is resumed as one stream from
    // its length, which for a preallocated file would be its end.
    std::fs::write(ranges_file(part), format!("{RECORD_HEADER} {size}\n"))?;
    let f = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(part)?;
    f.set_len(size)?;
    Ok(f)
}

/// The first line of a ranged download's record, followed by the file size;
/// then one `start end` line per finished range.
const RECORD_HEADER: &str = "cudaenv-ranges-1";

/// Where a ranged download records the ranges it finished.
fn ranges_file(part: &Path) -> PathBuf {
    PathBuf::from(format!("{}.ranges", part.display()))
}

/// Which ranges of an interrupted ranged download of `size` bytes are
/// finished, from its record; `None` when there is no usable record for a
/// part of that size (then the part is not a ranged download's).
fn finished_ranges(part: &Path, size: u64) -> Option<Vec<bool>> {
    if std::fs::metadata(part).ok()?.len() != size {
        return None;
    }
    let text = crate::os::fs::read_bounded_text(&ranges_file(part), crate::os::fs::SMALL).ok()?;
    let mut lines = text.lines();
    if lines.next()? != format!("{RECORD_HEADER} {size}") {
        return None;
    }
    let spans = spans(size);
    let mut done = vec![false; spans.len()];
    for line in lines {
        // A line cut short by a crash, or not one of this file's ranges,
        // is ignored: that range is fetched again.
        let Some((a, b)) = line.split_once(' ') else {
            continue;
        };
        if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>())
            && let Ok(i) = spans.binary_search(&(a, b))
        {
            done[i] = true;
        }
    }
    Some(done)
}

/// Removes a download's part file and its record of finished ranges.
/// A failed flush of a stream: a part that ran out of room is removed
/// (nothing half-written stays) before the error goes up.
fn no_room(f: Attempt, part: &Path) -> Attempt {
    if matches!(&f, Attempt::Fail(Error::NoSpace { .. })) {
        remove_part(part);
    }
    f
}

/// `NoSpace` unless the file system holding `part` has `needed` more bytes
/// free (`have`: what `part` holds already). Unknown free space passes: the
/// write itself then tells (`write_failed`).
fn room_for(a: &Artifact, part: &Path, have: u64, needed: u64, announced: bool) -> Result<()> {
    let dir = part.parent().unwrap_or(part);
    match crate::os::fs::free_space(dir) {
        Some(free) if free < needed => Err(Error::NoSpace {
            dir: dir.to_path_buf(),
            file: a.file_name.clone(),
            needed: if announced { needed } else { have + needed },
            available: free,
            announced,
        }),
        _ => Ok(()),
    }
}

/// The error for a write into `part` that failed after `got` bytes: a full
/// file system is `NoSpace` (and the part is removed: nothing half-written
/// stays, and its space is given back), anything else an I/O error.
fn write_failed(a: &Artifact, part: &Path, got: u64, e: std::io::Error) -> Error {
    if e.kind() != std::io::ErrorKind::StorageFull {
        return Error::io("cannot write", part)(e);
    }
    remove_part(part);
    let dir = part.parent().unwrap_or(part);
    Error::NoSpace {
        dir: dir.to_path_buf(),
        file: a.file_name.clone(),
        needed: a.size.unwrap_or(got),
        available: crate::os::fs::free_space(dir).unwrap_or(0),
        announced: a.size.is_some(),
    }
}

fn remove_part(part: &Path) {
    let _ = std::fs::remove_file(part);
    let _ = std::fs::remove_file(ranges_file(part));
}

/// Hashes `file` span by span as the contiguous prefix becomes available,
/// through a mapping of the whole file (the bytes are in the page cache,
/// just written: mapping them costs no copy).
fn hash_following(
    file: &File,
    spans: &[(u64, u64)],
    state: &Chunks,
    hashed: &dyn Fn(u64),
) -> Option<String> {
    let size = spans.last().map_or(0, |s| s.1);
    // SAFETY: read-only over the part file this download created at its full
    // size (`create_part`); its ranges are written only until they are
    // complete, and each is read here only after that. It is removed, never
    // truncated, and only after this thread has been joined.
    let map = match size {
        0 => None,
        n => Some(unsafe {
            memmap2::MmapOptions::new()
                .len(usize::try_from(n).ok()?)
                .map(file)
                .ok()?
        }),
    };
    let bytes: &[u8] = map.as_deref().unwrap_or(&[]);
    let mut hasher = Hasher::new();
    for (i, &(start, end)) in spans.iter().enumerate() {
        {
            let mut g = state.done.lock().ok()?;
            while !g.0[i] {
                if g.1 {
                    return None;
                }
                g = state.cv.wait(g).ok()?;
            }
        }
        hasher.update(bytes.get(start as usize..end as usize)?);
        hashed(end);
    }
    Some(hasher.finish())
}

/// The next range to start and its urgency: the first not started that
/// overlaps the first `wanted` range that still has one (urgency: that
/// range's weight), else the first not started (urgency 0).
fn next_span(
    spans: &[(u64, u64)],
    started: &[bool],
    wanted: &[(u64, u64, u64)],
) -> Option<(usize, u64)> {
    let open = |i: &usize| !started[*i];
    wanted
        .iter()
        .find_map(|&(lo, hi, weight)| {
            let first = spans.partition_point(|s| s.1 <= lo);
            (first..spans.len())
                .take_while(|&i| spans[i].0 < hi)
                .find(open)
                .map(|i| (i, weight))
        })
        .or_else(|| (0..spans.len()).find(open).map(|i| (i, 0)))
}

/// Downloads are dropped from the page cache in blocks of this size.
const RELEASE_BLOCK: u64 = 4 << 20;

/// Starts writing bytes `start..end` of `file` to disk, without waiting:
/// by the time they are released (`drop_cached`) they are clean.
fn write_out(file: &File, start: u64, end: u64) {
    cache_hint(file, start, end, false);
}

/// Writes bytes `start..end` of `file` out (waiting) and drops them from
/// the page cache.
fn drop_cached(file: &File, start: u64, end: u64) {
    cache_hint(file, start, end, true);
}

/// Starts writeback of `start..end`; with `drop`, waits for it and drops
/// those bytes from the page cache. Hints only: a failure leaves the bytes
/// cached or written later, nothing else.
fn cache_hint(file: &File, start: u64, end: u64, drop: bool) {
    crate::os::cache_hint(file, start, end, drop);
}

/// A short reason for a reqwest error, with its cause (reqwest's own message
/// alone is often just "error sending request").
/// The URL reqwest may name is shown without credentials.
pub fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(u) = e.url() {
        s = s.replace(
            u.as_str(),
            &crate::spec::safe_url::DisplaySafeUrl::new(u.as_str()).to_string(),
        );
    }
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

#[cfg(test)]
mod part_file_tests {
    use super::*;

    #[test]
    fn spans_cover_the_file_with_a_tail_of_their_own() {
        for size in [1, 1000, TAIL, TAIL + 1, 3 * TAIL, 700 << 20] {
            let s = spans(size);
            assert_eq!(s[0].0, 0, "{size}");
            assert_eq!(s.last().unwrap().1, size, "{size}");
            assert!(
                s.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1),
                "{size}: {s:?}"
            );
            assert!(
                s.last().unwrap().1 - s.last().unwrap().0 < TAIL + 4096,
                "{size}"
            );
            // Every range starts on a page boundary (see WRITE_BLOCK).
            assert!(s.iter().all(|(a, _)| a % 4096 == 0), "{size}: {s:?}");
            assert!(s.iter().all(|(a, b)| b - a <= CHUNK_MAX), "{size}");
        }
    }

    #[test]
    fn arrived_bytes_are_found_across_finished_ranges_and_stop_at_a_gap() {
        let mut a = Arrived {
            ranges: vec![
                (0, 10, true),
                (10, 20, false),
                (20, 30, true),
                (30, 40, true),
            ],
            ..Arrived::default()
        };
        assert_eq!(a.there_from(0), 10);
        assert_eq!(a.there_from(5), 10);
        assert_eq!(a.there_from(10), 10, "a gap: nothing there");
        assert_eq!(a.there_from(25), 40);
        a.ranges[1].2 = true;
        assert_eq!(a.there_from(0), 40);
        let b = Arrived {
            prefix: 7,
            ..Arrived::default()
        };
        assert_eq!(b.there_from(3), 7);
        assert_eq!(b.there_from(7), 7);
    }

    /// A reader waits for bytes that are not there yet, and fails once the
    /// download is abandoned.
    #[test]
    fn arriving_reads_wait_and_fail_when_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let f = create_part(&dir.path().join("x.part"), 20).unwrap();
        crate::os::write_all_at(&f, &[7u8; 20], 0).unwrap();
        let arrival = Arc::new(Arrival::default());
        arrival.attach(&f);
        arrival.update(|m| m.ranges = vec![(0, 10, true), (10, 20, false)]);
        let file = ArrivingFile {
            arrival: arrival.clone(),
            len: 20,
        };
        let mut buf = [0u8; 20];
        assert_eq!(file.read_at(&mut buf, 0).unwrap(), 10);
        let waiting = {
            let file = file.clone();
            std::thread::spawn(move || {
                let mut b = [0u8; 4];
                file.read_at(&mut b, 12).map(|n| (n, b))
            })
        };
        arrival.update(|m| m.ranges[1].2 = true);
        assert_eq!(waiting.join().unwrap().unwrap(), (4, [7u8; 4]));
        arrival.finish(ArrivalEnd::Abandoned);
        assert!(file.read_at(&mut buf, 0).is_err());
    }

    #[test]
    fn a_record_of_finished_ranges_is_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("x.whl.part");
        let size = 1 << 20;
        create_part(&part, size).unwrap();
        let spans = spans(size);
        assert_eq!(finished_ranges(&part, size), Some(vec![false; spans.len()]));
        let (a, b) = spans[1];
        let record = ranges_file(&part);
        let header = std::fs::read_to_string(&record).unwrap();
        // One finished range, one that is not this file's, and a line cut short.
        std::fs::write(
            &record,
            format!("{header}{a} {b}\n5 17\n{} {}", spans[2].0, spans[2].1 / 10),
        )
        .unwrap();
        let done = finished_ranges(&part, size).unwrap();
        assert_eq!(done.iter().filter(|d| **d).count(), 1);
        assert!(done[1]);
        // A record for another size, or a part of another size, is no record.
        assert_eq!(finished_ranges(&part, size + 1), None);
        std::fs::write(&record, format!("{RECORD_HEADER} {}\n{a} {b}\n", size + 1)).unwrap();
        assert_eq!(finished_ranges(&part, size), None);
        std::fs::remove_file(&record).unwrap();
        assert_eq!(finished_ranges(&part, size), None);
    }

    #[test]
    fn ranges_the_follower_prefers_start_first_then_file_order() {
        let spans = [(0, 10), (10, 20), (20, 30), (30, 40)];
        let mut started = [false, false, false, true];
        let wanted = [(22, 35, 900), (5, 8, 50)];
        let mut order = Vec::new();
        while let Some((i, urgency)) = next_span(&spans, &started, &wanted) {
            started[i] = true;
            order.push((i, urgency));
        }
        // Each range carries the weight of the wanted bytes it serves.
        assert_eq!(order, [(2, 900), (0, 50), (1, 0)]);
        assert_eq!(next_span(&spans, &[false; 4], &[]), Some((0, 0)));
    }

    /// A member is ready when all its bytes are; waiting for it returns the
    /// file, and bytes no longer needed are released only once hashed.
    #[test]
    fn members_wait_for_their_bytes_and_release_what_is_hashed_and_unused() {
        let dir = tempfile::tempdir().unwrap();
        let len = 4 * RELEASE_BLOCK;
        let f = create_part(&dir.path().join("x.part"), len).unwrap();
        let arrival = Arc::new(Arrival::default());
        arrival.attach(&f);
        let blocks: Vec<_> = (0..4)
            .map(|b| (b * RELEASE_BLOCK, (b + 1) * RELEASE_BLOCK, b != 2))
            .collect();
        arrival.update(|m| m.ranges = blocks);
        let file = ArrivingFile {
            arrival: arrival.clone(),
            len,
        };
        assert!(file.there(10, RELEASE_BLOCK));
        assert!(!file.there(10, 3 * RELEASE_BLOCK));
        let seen = file.generation();
        let waiting = {
            let file = file.clone();
            std::thread::spawn(move || file.wait_for(RELEASE_BLOCK, 3 * RELEASE_BLOCK).is_ok())
        };
        arrival.update(|m| m.ranges[2].2 = true);
        assert!(waiting.join().unwrap());
        file.wait_past(seen);
        assert!(file.there(0, len));

        // Hashed up to three blocks; the second is still needed.
        arrival.update(|m| m.hashed = 3 * RELEASE_BLOCK);
        file.release_except(&[(RELEASE_BLOCK + 10, RELEASE_BLOCK + 20)]);
        let released = arrival.state.lock().unwrap().released.clone();
        assert_eq!(released, [true, false, true]);
        file.release_except(&[]);
        let released = arrival.state.lock().unwrap().released.clone();
        assert_eq!(released, [true, true, true], "never past the hashed bytes");
        arrival.finish(ArrivalEnd::Abandoned);
        assert!(file.wait_for(0, 1).is_err());
    }

    /// Regression: ranged downloads hashed a write-only file and always failed.
    #[test]
    fn ranged_part_file_can_be_hashed_while_written() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("x.whl.part");
        let size = CHUNK_MAX + 5;
        let file = create_part(&part, size).unwrap();
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        crate::os::write_all_at(&file, &data, 0).unwrap();
        let state = Chunks {
            done: Mutex::new((vec![true; 2], false)),
            cv: Condvar::new(),
        };
        let got = hash_following(&file, &[(0, CHUNK_MAX), (CHUNK_MAX, size)], &state, &|_| {});
        assert_eq!(got, Some(hash::sha256(&data)));
    }
}
