//! Large files as several ranges at once, into a part preallocated at the
//! file's size: one connection is rarely the fastest way to move a
//! gigabyte. A file's ranges are its tail (a zip's central directory, which
//! an unpacker following the download needs first) and chunks of the rest
//! (`spans`); a thread hashes the contiguous prefix of finished ranges as
//! they complete (`hash_following`), so verifying costs no pass at the end.
//! Each finished range is appended to the part's record (`part`), so that
//! an interrupted download goes on from it. Which range goes next, and how
//! urgent it is against every other download (`install::slots`), follows what the
//! follower wants first (`next_span`). A server that answers a range with
//! the whole file (`RangeFallback::Ignored`) gets one stream instead.

use crate::error::{Error, InstallError, Result};
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use super::Fetcher;
use super::arrival::{Arrival, LetGo, write_out};
use super::part::{create_part, ranges_file};
use super::retry::{ATTEMPTS, Tries};
use super::timeouts::{self, Paced};
use crate::install::slots::Urgency;
use crate::install::sources::Artifact;
use crate::os::WRITE_BLOCK;
use crate::os::hash::Hasher;

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

/// Ranges of one file in flight at most.
const RANGE_WORKERS: usize = 8;

/// How urgent a file's tail range is (see `install::slots`): more than any other
/// bytes, since nothing is unpacked before the central directory is read.
const TAIL_URGENCY: u64 = u64::MAX;

impl Fetcher {
    /// Several ranges at once into a preallocated `part`; a thread hashes the
    /// contiguous prefix as chunks complete. With `let_go`, bytes its
    /// follower is done with are punched out (see `arrival`).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn download_ranges(
        &self,
        a: &Artifact,
        part: &Path,
        size: u64,
        line: usize,
        mark: &Arc<Arrival>,
        finished: Option<Vec<bool>>,
        let_go: bool,
    ) -> Result<String, RangeFallback> {
        let spans: Arc<[(u64, u64)]> = spans(size).into();
        let (file, finished, record) =
            open_ranged_part(part, size, spans.len(), finished).map_err(RangeFallback::Error)?;
        let file = Arc::new(file);
        let record = Arc::new(Mutex::new(record));
        mark.attach(&file);
        if let_go {
            mark.let_go(LetGo {
                record: record.clone(),
                gone: vec![false; spans.len()],
            });
        }
        let to_disk = !mark.letting_go();
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
        let chunks = Arc::new(Chunks {
            done: Mutex::new((finished.clone(), false)),
            cv: Condvar::new(),
        });
        let hasher = {
            let (file, chunks, spans, mark) =
                (file.clone(), chunks.clone(), spans.clone(), mark.clone());
            std::thread::spawn(move || {
                hash_following(&file, &spans, &chunks, &|upto| {
                    mark.update(|m| m.hashed = upto)
                })
            })
        };
        let picker = Picker {
            started: Arc::new(Mutex::new(finished)),
            mark: mark.clone(),
            spans: spans.clone(),
        };
        let ranged = Ranged {
            a,
            part,
            line,
            spans,
            file,
            chunks,
            record,
            mark,
            to_disk,
        };
        let workers = (0..RANGE_WORKERS).map(|_| self.range_worker(&ranged, &picker));
        // The first failure ends the download (the other ranges are dropped).
        let failure = futures_util::future::try_join_all(workers).await.err();
        {
            let mut g = ranged.chunks.done.lock().expect("poisoned");
            g.1 = failure.is_some();
            ranged.chunks.cv.notify_all();
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

    /// One connection of a ranged download: fetches the next range while
    /// there is one, holding on to its slot from one range to the next
    /// unless someone waits with more urgent bytes.
    async fn range_worker(
        &self,
        ranged: &Ranged<'_>,
        picker: &Picker,
    ) -> Result<(), RangeFallback> {
        let mut held = None;
        loop {
            if picker.peek().is_none() {
                return Ok(());
            }
            let slot = match held.take() {
                Some(slot) => self.slots.renew(slot, picker.urgency()).await,
                None => self.slots.acquire(picker.urgency()).await,
            };
            let Some((i, _)) = picker.take() else {
                return Ok(());
            };
            let (start, end) = ranged.spans[i];
            let job = RangeJob {
                a: ranged.a,
                file: &ranged.file,
                start,
                end,
                line: ranged.line,
            };
            self.range_with_retries(job).await?;
            ranged.finished(i).map_err(RangeFallback::Error)?;
            held = Some(slot);
        }
    }

    async fn range_with_retries(&self, job: RangeJob<'_>) -> Result<(), RangeFallback> {
        let a = job.a;
        let shown = a.url.to_string();
        let mut tries = Tries::new(&shown, self.backoff, &self.timeouts);
        for attempt in 0..ATTEMPTS {
            tries.start(attempt).await.map_err(RangeFallback::Error)?;
            if self.range_once(job, &mut tries).await? == RangeTry::Written {
                return Ok(());
            }
        }
        Err(RangeFallback::Error(Error::Install(
            InstallError::Network {
                url: a.url.to_string(),
                reason: tries.gave_up(ATTEMPTS),
                from: Some(a.source),
            },
        )))
    }

    /// One try at a range: its request, and the answer's body when the
    /// server sends the range.
    async fn range_once(
        &self,
        job: RangeJob<'_>,
        tries: &mut Tries<'_>,
    ) -> Result<RangeTry, RangeFallback> {
        let RangeJob { a, start, end, .. } = job;
        let req = self
            .client
            .get(a.url.expose())
            .header(reqwest::header::RANGE, format!("bytes={start}-{}", end - 1));
        let (resp, started) = match timeouts::send(req, &self.timeouts).await {
            Ok(r) => r,
            Err(failed) => {
                tries.failed(failed).map_err(RangeFallback::Error)?;
                return Ok(RangeTry::Again);
            }
        };
        let status = resp.status();
        if status == reqwest::StatusCode::OK {
            return Err(RangeFallback::Ignored);
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            tries.retry(format!("server answered {status}"));
            return Ok(RangeTry::Again);
        }
        if status != reqwest::StatusCode::PARTIAL_CONTENT {
            return Err(RangeFallback::Error(Error::Install(
                InstallError::Network {
                    url: a.url.to_string(),
                    reason: format!("server answered {status}"),
                    from: Some(a.source),
                },
            )));
        }
        self.receive_range(job, resp, started, tries).await
    }

    /// Writes a range's body at its offset; a body that breaks off leaves
    /// its reason in `tries`, and the range starts over from its beginning
    /// (progress may overcount a little).
    async fn receive_range(
        &self,
        job: RangeJob<'_>,
        resp: reqwest::Response,
        started: tokio::time::Instant,
        tries: &mut Tries<'_>,
    ) -> Result<RangeTry, RangeFallback> {
        let RangeJob {
            a,
            file,
            start,
            end,
            line,
        } = job;
        let mut pos = start;
        let mut stream = Paced::new(resp.bytes_stream(), &self.timeouts, started);
        let mut broken = false;
        // Written in blocks (see os::WRITE_BLOCK); a broken range starts over,
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
                Err(failed) => {
                    // A stall past the allowed ones, or a final failure,
                    // ends here; anything else breaks the range.
                    tries.failed(failed).map_err(RangeFallback::Error)?;
                    broken = true;
                    break;
                }
            }
        }
        if pos == end {
            let at = pos - block.len() as u64;
            write(&mut block, at).map_err(RangeFallback::Error)?;
            return Ok(RangeTry::Written);
        }
        if !broken {
            tries.retry(format!(
                "range ended after {} of {} bytes",
                pos - start,
                end - start
            ));
        }
        Ok(RangeTry::Again)
    }
}

/// The part a ranged download of `size` bytes in `n` ranges writes into,
/// with which ranges are finished and its record (opened to append): the
/// part there when its record says which of those ranges it holds, else a
/// new one.
fn open_ranged_part(
    part: &Path,
    size: u64,
    n: usize,
    finished: Option<Vec<bool>>,
) -> Result<(File, Vec<bool>, File)> {
    let cannot_write = |e| Error::io("cannot write", part)(e);
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
    let record = File::options()
        .append(true)
        .open(ranges_file(part))
        .map_err(cannot_write)?;
    Ok((file, finished, record))
}

/// A ranged download under way: what its connections share.
struct Ranged<'r> {
    a: &'r Artifact,
    part: &'r Path,
    line: usize,
    spans: Arc<[(u64, u64)]>,
    file: Arc<File>,
    /// The finished ranges, for the thread that hashes them.
    chunks: Arc<Chunks>,
    /// The record of finished ranges (see `part::finished_ranges`).
    record: Arc<Mutex<File>>,
    mark: &'r Arc<Arrival>,
    /// Whether finished ranges start on their way to the disk: not when
    /// the download lets go of used bytes (they would be written only to
    /// be freed).
    to_disk: bool,
}

impl Ranged<'_> {
    /// Range `i` is written: recorded, started on its way to the disk
    /// (unless let go of later), and told to the hashing thread and the
    /// follower.
    fn finished(&self, i: usize) -> Result<()> {
        let (start, end) = self.spans[i];
        // Recorded once its bytes are written, for a later
        // attempt to go on from (`finished_ranges`).
        std::io::Write::write_all(
            &mut *self.record.lock().expect("poisoned"),
            format!("{start} {end}\n").as_bytes(),
        )
        .map_err(Error::io("cannot write", self.part))?;
        if self.to_disk {
            write_out(&self.file, start, end);
        }
        let mut g = self.chunks.done.lock().expect("poisoned");
        g.0[i] = true;
        self.chunks.cv.notify_all();
        drop(g);
        self.mark.update(|m| m.ranges[i].2 = true);
        Ok(())
    }
}

/// Which range to fetch next, and how urgent that is: the tail first
/// (a zip's central directory is there, and whoever follows the
/// download needs it before anything else), then what the follower
/// prefers (the largest members: they take longest to unpack,
/// weighed against every other download's), then file order. Asked
/// again whenever a connection is free, as preferences change.
#[derive(Clone)]
struct Picker {
    /// The ranges started (or finished before).
    started: Arc<Mutex<Vec<bool>>>,
    mark: Arc<Arrival>,
    spans: Arc<[(u64, u64)]>,
}

impl Picker {
    /// The range that would go next, and its urgency.
    fn peek(&self) -> Option<(usize, u64)> {
        self.pick(false)
    }

    /// The range that goes next, now started.
    fn take(&self) -> Option<(usize, u64)> {
        self.pick(true)
    }

    fn pick(&self, take: bool) -> Option<(usize, u64)> {
        let n = self.spans.len();
        let mut started = self.started.lock().expect("poisoned");
        let pick = if started[n - 1] {
            let m = self.mark.state.lock().expect("poisoned");
            next_span(&self.spans, &started, &m.preferred)?
        } else {
            (n - 1, TAIL_URGENCY)
        };
        if take {
            started[pick.0] = true;
        }
        Some(pick)
    }

    /// The urgency of a connection waiting for a slot: that of the range
    /// it would fetch, asked when a slot is free.
    fn urgency(&self) -> Urgency {
        let picker = self.clone();
        Box::new(move || picker.peek().map_or(0, |(_, u)| u))
    }
}

/// One range to fetch: bytes `start..end` of `a`, written into `file` at
/// their offset, shown on progress line `line`.
#[derive(Clone, Copy)]
struct RangeJob<'r> {
    a: &'r Artifact,
    file: &'r File,
    start: u64,
    end: u64,
    line: usize,
}

/// How one try at a range ended, when it did not end the download.
#[derive(PartialEq, Eq)]
enum RangeTry {
    Written,
    /// Worth another try (the reason is in the `Tries`).
    Again,
}

pub(super) enum RangeFallback {
    /// The server does not honour ranges: use one stream instead.
    Ignored,
    Error(Error),
}

struct Chunks {
    /// (finished chunks, aborted)
    done: Mutex<(Vec<bool>, bool)>,
    cv: Condvar,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::fetch::part::create_part;
    use crate::os::hash;

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
            // Every range starts on a page boundary (see os::WRITE_BLOCK).
            assert!(s.iter().all(|(a, _)| a % 4096 == 0), "{size}: {s:?}");
            assert!(s.iter().all(|(a, b)| b - a <= CHUNK_MAX), "{size}");
        }
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
