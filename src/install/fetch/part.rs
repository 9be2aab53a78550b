//! A download's `.part` file and what lies beside it: the record of the
//! ranges a ranged download finished (`….part.ranges`), read strictly so
//! that a record cut short or meant for another file is no record, and the
//! room the cache's file system must have for the bytes still to come.

use crate::error::{Error, InstallError, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

use super::retry::Attempt;
use crate::install::sources::Artifact;

/// The preallocated file ranged downloads write into, with a fresh record
/// of finished ranges beside it (see `finished_ranges`). It must be readable
/// too: `hash_following` reads it back while the ranges arrive (a write-only
/// `File::create` made every fresh download of a large wheel fail with
/// "hashing failed").
pub(super) fn create_part(part: &Path, size: u64) -> std::io::Result<File> {
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
/// then one `start end` line per finished range, and `gone start end` for a
/// finished range whose bytes were let go since (see `arrival`): the last
/// line about a range says what it is.
const RECORD_HEADER: &str = "cudaenv-ranges-1";

/// The word that starts the line of a range whose bytes were let go.
pub(super) const GONE: &str = "gone";

/// Where a ranged download records the ranges it finished.
pub(super) fn ranges_file(part: &Path) -> PathBuf {
    PathBuf::from(format!("{}.ranges", part.display()))
}

/// Which ranges of an interrupted ranged download of `size` bytes are
/// finished, from its record; `None` when there is no usable record for a
/// part of that size (then the part is not a ranged download's).
pub(super) fn finished_ranges(part: &Path, size: u64) -> Option<Vec<bool>> {
    if std::fs::metadata(part).ok()?.len() != size {
        return None;
    }
    let text = crate::os::fs::read_bounded_text(&ranges_file(part), crate::os::fs::SMALL).ok()?;
    let mut lines = text.lines();
    if lines.next()? != format!("{RECORD_HEADER} {size}") {
        return None;
    }
    let spans = super::ranges::spans(size);
    let mut done = vec![false; spans.len()];
    for line in lines {
        // A line cut short by a crash, or not one of this file's ranges,
        // is ignored: that range is fetched again.
        let (there, range) = match line.strip_prefix(GONE).and_then(|l| l.strip_prefix(' ')) {
            Some(range) => (false, range),
            None => (true, line),
        };
        let Some((a, b)) = range.split_once(' ') else {
            continue;
        };
        if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>())
            && let Ok(i) = spans.binary_search(&(a, b))
        {
            done[i] = there;
        }
    }
    Some(done)
}

/// A failed flush of a stream: a part that ran out of room is removed
/// (nothing half-written stays) before the error goes up.
pub(super) fn no_room(f: Attempt, part: &Path) -> Attempt {
    if matches!(
        &f,
        Attempt::Fail(Error::Install(InstallError::NoSpace { .. }))
    ) {
        remove_part(part);
    }
    f
}

/// `NoSpace` unless the file system holding `part` has `needed` more bytes
/// free (`have`: what `part` holds already). Unknown free space passes: the
/// write itself then tells (`write_failed`).
pub(super) fn room_for(
    a: &Artifact,
    part: &Path,
    have: u64,
    needed: u64,
    announced: bool,
) -> Result<()> {
    let dir = part.parent().unwrap_or(part);
    match crate::os::fs::free_space(dir) {
        Some(free) if free < needed => Err(Error::Install(InstallError::NoSpace {
            dir: dir.to_path_buf(),
            file: a.file_name.clone(),
            needed: if announced { needed } else { have + needed },
            available: free,
            announced,
        })),
        _ => Ok(()),
    }
}

/// The error for a write into `part` that failed after `got` bytes: a full
/// file system is `NoSpace` (and the part is removed: nothing half-written
/// stays, and its space is given back), anything else an I/O error.
pub(super) fn write_failed(a: &Artifact, part: &Path, got: u64, e: std::io::Error) -> Error {
    if e.kind() != std::io::ErrorKind::StorageFull {
        return Error::io("cannot write", part)(e);
    }
    remove_part(part);
    let dir = part.parent().unwrap_or(part);
    Error::Install(InstallError::NoSpace {
        dir: dir.to_path_buf(),
        file: a.file_name.clone(),
        needed: a.size.unwrap_or(got),
        available: crate::os::fs::free_space(dir).unwrap_or(0),
        announced: a.size.is_some(),
    })
}

/// Removes a download's part file and its record of finished ranges.
pub(super) fn remove_part(part: &Path) {
    let _ = std::fs::remove_file(part);
    let _ = std::fs::remove_file(ranges_file(part));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::fetch::ranges::spans;

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
        // A range let go of is no longer there, unless fetched again after.
        let (c, d) = spans[3];
        let with = |extra: &str| {
            std::fs::write(&record, format!("{header}{a} {b}\n{c} {d}\n{extra}")).unwrap();
            finished_ranges(&part, size).unwrap()
        };
        let gone = with(&format!("{GONE} {a} {b}\n"));
        assert!(!gone[1] && gone[3], "{gone:?}");
        let again = with(&format!("{GONE} {a} {b}\n{a} {b}\n"));
        assert!(again[1] && again[3], "{again:?}");
        let garbled = with(&format!("{GONE}{a} {b}\n"));
        assert!(garbled[1] && garbled[3], "{garbled:?}");
        // A record for another size, or a part of another size, is no record.
        assert_eq!(finished_ranges(&part, size + 1), None);
        std::fs::write(&record, format!("{RECORD_HEADER} {}\n{a} {b}\n", size + 1)).unwrap();
        assert_eq!(finished_ranges(&part, size), None);
        std::fs::remove_file(&record).unwrap();
        assert_eq!(finished_ranges(&part, size), None);
    }
}
