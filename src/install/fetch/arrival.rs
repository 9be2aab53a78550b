//! What a follower sees of a download under way (see the module docs of
//! `fetch`): which bytes of the `.part` file are there, hashed, wanted
//! first or no longer needed, and whether the download completed or was
//! abandoned. The downloading side updates an [`Arrival`]; the follower
//! reads through an [`ArrivingFile`], whose reads wait for the bytes and
//! fail once the download is abandoned (it restarted from zero, or failed).
//!
//! A download that is not kept (`keep-downloads` off) *lets go* of what its
//! follower no longer needs: those bytes are punched out of the `.part`
//! (`os::punch_hole`), so they are never written to disk and their memory
//! serves what comes next, and the file is removed when it completes instead
//! of being moved into the cache (it is no longer whole). Before bytes go, the
//! ranges they belong to are recorded as gone (`part::GONE`), so that a
//! download killed meanwhile fetches them again when it resumes.

use std::fs::File;
use std::sync::{Arc, Condvar, Mutex};

/// Work that reads a download while it arrives: handed the [`ArrivingFile`]
/// when a download starts from its first byte.
pub type Follower = Box<dyn FnOnce(ArrivingFile) + Send>;

/// Which bytes of a `.part` file hold the download's final bytes.
#[derive(Default)]
pub(super) struct Arrival {
    pub(super) state: Mutex<Arrived>,
    cv: Condvar,
}

#[derive(Default)]
pub(super) struct Arrived {
    /// The part file, readable, once it exists.
    file: Option<Arc<File>>,
    /// Bytes from the start that are there (one stream).
    pub(super) prefix: u64,
    /// Bytes from the start that are hashed.
    pub(super) hashed: u64,
    /// Which `RELEASE_BLOCK`s were dropped from the page cache (see
    /// `ArrivingFile::release_except`).
    released: Vec<bool>,
    /// Counts changes (see `ArrivingFile::generation`).
    generation: u64,
    /// For a download that lets go of used bytes (see the module docs).
    let_go: Option<LetGo>,
    /// Byte ranges the follower wants first, most wanted first, each with
    /// its weight (see `ArrivingFile::prefer`).
    pub(super) preferred: Vec<(u64, u64, u64)>,
    /// For ranged downloads: every range (sorted by offset) and whether it
    /// is complete.
    pub(super) ranges: Vec<(u64, u64, bool)>,
    end: ArrivalEnd,
}

/// How a ranged download that is not kept lets go of bytes: the record of
/// finished ranges, where a range is marked gone before its bytes go, and
/// which of its ranges (`Arrived::ranges`, in the same order) are.
pub(super) struct LetGo {
    pub(super) record: Arc<Mutex<File>>,
    pub(super) gone: Vec<bool>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum ArrivalEnd {
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
    pub(super) fn update(&self, f: impl FnOnce(&mut Arrived)) {
        let mut a = self.state.lock().expect("poisoned");
        if a.end == ArrivalEnd::Open {
            f(&mut a);
        }
        a.generation += 1;
        self.cv.notify_all();
    }

    pub(super) fn attach(&self, file: &File) {
        let clone = file.try_clone().ok().map(Arc::new);
        self.update(|a| match clone {
            Some(f) => a.file = Some(f),
            None => a.end = ArrivalEnd::Abandoned,
        });
    }

    pub(super) fn finish(&self, end: ArrivalEnd) {
        self.update(|a| a.end = end);
    }

    /// From now on, bytes the follower no longer needs are punched out of
    /// the file (see the module docs); set before the first range starts.
    pub(super) fn let_go(&self, let_go: LetGo) {
        self.update(|a| a.let_go = Some(let_go));
    }

    /// Whether this download lets go of used bytes: then its file is never
    /// whole once complete, and never goes into the cache. A download that
    /// started over (from zero, in a new file) lets go of nothing.
    pub(super) fn letting_go(&self) -> bool {
        let a = self.state.lock().expect("poisoned");
        a.let_go.is_some() && a.end != ArrivalEnd::Abandoned
    }
}

/// Abandons the arrival unless the download completed (every early return
/// of `fetch_following` goes through here).
pub(super) struct ArrivalGuard(pub(super) Arc<Arrival>);

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
    pub(super) arrival: Arc<Arrival>,
    pub(super) len: u64,
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
    /// will be read again. The others, once hashed too, leave the page
    /// cache, so that the memory they held serves what comes next: a
    /// gigabyte wheel then does not also hold a gigabyte of memory while its
    /// members are being unpacked, and memory used again is cheaper than
    /// memory touched for the first time (much cheaper in virtual machines,
    /// see docs/PERFORMANCE.md). A download that lets go of used bytes
    /// punches them out: they are gone, so `needed` must name every byte
    /// still to be read. Any other is written out and dropped, and bytes read
    /// again come from the disk.
    pub fn release_except(&self, needed: &[(u64, u64)]) {
        let (file, blocks, gone) = {
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
            let a = &mut *a;
            let gone = a.let_go.as_mut().map(|l| l.mark_gone(&a.ranges, &blocks));
            (file, blocks, gone)
        };
        // The ranges are recorded as gone before their bytes go; a record
        // that cannot be written keeps the bytes.
        let punch = gone.is_some_and(|(record, lines)| {
            lines.is_empty()
                || std::io::Write::write_all(
                    &mut *record.lock().expect("poisoned"),
                    lines.as_bytes(),
                )
                .is_ok()
        });
        for (lo, hi) in blocks {
            if !(punch && crate::os::punch_hole(&file, lo, hi)) {
                drop_cached(&file, lo, hi);
            }
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

impl LetGo {
    /// Marks the ranges (of `ranges`, sorted) that `blocks` overlap as
    /// gone, and returns the record with the lines that say so (empty when
    /// they were already).
    fn mark_gone(
        &mut self,
        ranges: &[(u64, u64, bool)],
        blocks: &[(u64, u64)],
    ) -> (Arc<Mutex<File>>, String) {
        let mut lines = String::new();
        for &(lo, hi) in blocks {
            let first = ranges.partition_point(|r| r.1 <= lo);
            for i in (first..ranges.len()).take_while(|&i| ranges[i].0 < hi) {
                if !self.gone[i] {
                    self.gone[i] = true;
                    let (a, b, _) = ranges[i];
                    lines.push_str(&format!("{} {a} {b}\n", super::part::GONE));
                }
            }
        }
        (self.record.clone(), lines)
    }
}

/// Downloads leave the page cache in blocks of this size.
const RELEASE_BLOCK: u64 = 4 << 20;

/// Starts writing bytes `start..end` of `file` to disk, without waiting:
/// by the time they are released (`drop_cached`) they are clean.
pub(super) fn write_out(file: &File, start: u64, end: u64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::fetch::part::create_part;

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

    /// A download that lets go of used bytes records their ranges as gone,
    /// then punches them out; what is still needed stays.
    #[test]
    fn letting_go_records_the_ranges_gone_then_frees_their_bytes() {
        use crate::install::fetch::part::{finished_ranges, ranges_file};
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("x.part");
        let len = 3 * RELEASE_BLOCK;
        let f = create_part(&part, len).unwrap();
        crate::os::write_all_at(&f, &vec![7u8; len as usize], 0).unwrap();
        let spans: Arc<[(u64, u64)]> = crate::install::fetch::spans(len).into();
        let mut record = File::options()
            .append(true)
            .open(ranges_file(&part))
            .unwrap();
        for (a, b) in spans.iter() {
            std::io::Write::write_all(&mut record, format!("{a} {b}\n").as_bytes()).unwrap();
        }
        let arrival = Arc::new(Arrival::default());
        arrival.attach(&f);
        assert!(!arrival.letting_go());
        arrival.let_go(LetGo {
            record: Arc::new(Mutex::new(record)),
            gone: vec![false; spans.len()],
        });
        assert!(arrival.letting_go());
        arrival.update(|m| {
            m.ranges = spans.iter().map(|&(a, b)| (a, b, true)).collect();
            m.hashed = len;
        });
        let file = ArrivingFile {
            arrival: arrival.clone(),
            len,
        };
        let byte = |at: u64| {
            let mut b = [0u8; 1];
            crate::os::read_exact_at(&f, &mut b, at).unwrap();
            b[0]
        };
        let freed = if crate::os::PUNCHES_HOLES { 0 } else { 7 };

        // The second block is still needed: only the ranges wholly inside
        // it are still there.
        file.release_except(&[(RELEASE_BLOCK + 10, RELEASE_BLOCK + 20)]);
        let inside = |&(a, b): &(u64, u64)| a >= RELEASE_BLOCK && b <= 2 * RELEASE_BLOCK;
        let expected: Vec<bool> = spans.iter().map(inside).collect();
        assert!(expected.contains(&true) && expected.contains(&false));
        assert_eq!(finished_ranges(&part, len), Some(expected));
        assert_eq!((byte(5), byte(RELEASE_BLOCK + 5)), (freed, 7));

        file.release_except(&[]);
        assert_eq!(finished_ranges(&part, len), Some(vec![false; spans.len()]));
        assert_eq!(byte(RELEASE_BLOCK + 5), freed, "freed where the system can");
        let record = std::fs::read_to_string(ranges_file(&part)).unwrap();
        let gone = record.lines().filter(|l| l.starts_with("gone ")).count();
        assert_eq!(gone, spans.len(), "each range is recorded gone once");
    }
}
