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
//! urgent bytes first (`install::slots`).
//!
//! A caller can also *follow* a fresh download (`fetch_following`): an
//! [`ArrivingFile`] handed to its own thread reads or maps the `.part` file
//! where the bytes have arrived, waiting for more, so that work on the bytes
//! (unpacking a wheel) overlaps the transfer. The follower can say which bytes
//! it wants first (the next ranges start there) and which it no longer needs
//! (once hashed, they are written out and dropped from the page cache; a
//! ranged download that is not kept punches them out instead, and is removed
//! rather than cached once verified: see `arrival`). It learns nothing is
//! final: the hash is only known at the end, and a download that restarts
//! from zero or fails makes its reads fail.
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
//! one of unknown size streams. A full disk is `InstallError::NoSpace` (exit 6),
//! and the part file is removed.
//!
//! Connection errors, truncated bodies and 5xx answers are retried with
//! exponential backoff; a server that stalls or trickles is given up on
//! after one retry, and then by the whole command (`timeouts`); a hash
//! mismatch is never retried (the `.part` is deleted and the error says what
//! was expected and what arrived). A per-file
//! lock (`….lock`, an OS advisory lock) makes concurrent installs of the same
//! artifact download it once: the second waits, then finds it in the cache.
//!
//! The parts, one per concern: `http` (the client every reader shares, and
//! the small reads: pages, manifests, metadata, all bounded, with
//! `file://` read the same way), `cache` (where a verified file lives),
//! `part` (the `.part` file, its record of finished ranges, the room it
//! needs), `stream` (one stream, or a `file://` copy), `ranges` (parallel
//! ranges and the thread that hashes behind them), `retry` (the retry
//! policy every request shares), `arrival` (what a follower sees of a
//! download under way), `timeouts`
//! (stalls), `dns`, and `usage` (what the cache holds, and what may go).

use crate::error::{Error, InstallError, Result};
use crate::os::lock::LockFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod arrival;
mod cache;
mod dns;
mod http;
mod part;
mod ranges;
mod retry;
mod stream;
mod timeouts;
pub(crate) mod usage;

pub use arrival::{ArrivingFile, Follower};
pub use cache::Cache;
pub use http::Http;
pub(crate) use http::{Body, Get, Target, describe, local_path};
pub use ranges::spans;
use retry::Attempt;

use crate::install::slots::Slots;
use crate::install::sources::Artifact;
use crate::os::{WRITE_BLOCK, hash};
use arrival::{Arrival, ArrivalEnd, ArrivalGuard};
use part::{finished_ranges, ranges_file, remove_part, room_for};
use ranges::RangeFallback;
use timeouts::Timeouts;

/// The most bytes a download whose size nobody announced may have (the
/// largest CUDA files, runfiles, are about 5 GB).
pub const MAX_DOWNLOAD: u64 = 16 << 30;

/// Files at least this large are fetched as parallel ranges (default).
pub const PARALLEL_MIN: u64 = 48 << 20;

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

impl Fetcher {
    /// A fetcher whose requests go through `http` (its client, and its
    /// command's timeouts).
    pub fn new(
        http: Http,
        cache: Cache,
        offline: bool,
        jobs: usize,
        progress: Arc<dyn Progress>,
    ) -> Fetcher {
        Fetcher {
            client: http.client().clone(),
            timeouts: http.timeouts().clone(),
            cache,
            offline,
            slots: Slots::new(jobs),
            progress,
            backoff: Duration::from_millis(500),
            parallel_min: PARALLEL_MIN,
            max_unannounced: MAX_DOWNLOAD,
        }
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
        Error::Install(InstallError::SizeMismatch {
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
        })
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
        self.fetch_following(a, line, None, true).await
    }

    /// `fetch`, with `follower` run on its own thread over the bytes as they
    /// arrive when the file is downloaded from its first byte (not when it is
    /// cached, copied from a `file://` mirror or resumed: then it never runs).
    /// Unless `keep`, a ranged download that the follower follows lets go of
    /// the bytes it is done with (see `arrival`): then, once verified, it is
    /// removed instead of moved into the cache, and the path returned does
    /// not exist (the follower has all it needed).
    pub async fn fetch_following(
        &self,
        a: &Artifact,
        line: usize,
        follower: Option<Follower>,
        keep: bool,
    ) -> Result<PathBuf> {
        let dest = self.cache.file_for(a);
        if dest.is_file() {
            self.progress.status(line, "cached");
            return Ok(dest);
        }
        if self.offline {
            return Err(Error::Install(InstallError::Offline {
                file: a.file_name.clone(),
                url: a.url.to_string(),
            }));
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
        let fresh = local_path(a.url.expose()).is_none() && std::fs::metadata(&part).is_err();
        let followed = match (follower, a.size) {
            (Some(follow), Some(len)) if fresh => {
                follow(ArrivingFile {
                    arrival: mark.clone(),
                    len,
                });
                true
            }
            _ => {
                mark.finish(ArrivalEnd::Abandoned);
                false
            }
        };
        // Only a sha256 is checked as the bytes arrive: an md5 takes a pass
        // over the whole file at the end. Where bytes cannot be freed in
        // place, they are written out and dropped as for a kept download.
        let let_go = followed && !keep && a.sha256.is_some() && crate::os::PUNCHES_HOLES;
        let actual = self.download(a, &part, line, &mark, let_go).await?;
        if let Some(expected) = &a.sha256
            && !actual.eq_ignore_ascii_case(expected)
        {
            remove_part(&part);
            return Err(Error::Install(InstallError::HashMismatch {
                algorithm: "sha256",
                url: a.url.to_string(),
                expected: expected.clone(),
                actual,
            }));
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
                return Err(Error::Install(InstallError::HashMismatch {
                    algorithm: "md5",
                    url: a.url.to_string(),
                    expected,
                    actual,
                }));
            }
        }
        let whole = !mark.letting_go();
        mark.finish(ArrivalEnd::Complete);
        drop(guard);
        if whole {
            std::fs::rename(&part, &dest)
                .map_err(Error::io("cannot move into the cache", &dest))?;
            let _ = std::fs::remove_file(ranges_file(&part));
        } else {
            // Its follower holds it open; no one else may take it as whole.
            remove_part(&part);
        }
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
        let_go: bool,
    ) -> Result<String> {
        // A mirror can be a local directory (`file:///srv/nvidia`), e.g. on an
        // air-gapped cluster: copied with the same hashing and size checks.
        if let Some(src) = local_path(a.url.expose()) {
            self.progress.status(line, "copying");
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
            let ranged = self.download_ranges(a, part, s, line, mark, finished, let_go);
            match ranged.await {
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
}
