//! What a plan costs before it runs: the bytes to download and the disk the
//! version will take (`install --dry-run`).
//!
//! The download is the sum of the artifacts' sizes (the index or manifest
//! gives them). The disk is the unpacked size: a wheel is a zip, whose
//! central directory at its end lists every member's uncompressed size, so
//! one or two range requests for the last bytes of each wheel answer it
//! without downloading the wheel (the same trick pip and uv use for
//! metadata; from a `file://` mirror, reads of the file's last bytes).
//! Those reads go through `fetch::Http`, so they wait, retry and stop on a
//! stalled server as every request of the command does. Archives of other formats (`.tar.xz`, runfiles) cannot say
//! without being read; their unpacked size is reported as unknown. An
//! artifact already unpacked in the package store costs no new disk: the
//! version's tree is hard-linked from there.

use futures_util::StreamExt;

use super::{ArchiveFormat, Plan};
use crate::install::fetch::{Cache, Http, Target};
use crate::spec::safe_url::DisplaySafeUrl;

/// The totals `--dry-run` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlanSize {
    /// Bytes still to download (artifacts not in the download cache).
    pub download_bytes: u64,
    /// Artifacts whose size neither the index nor the manifest gave.
    pub download_unknown: usize,
    /// Artifacts already in the download cache.
    pub cached: usize,
    /// New disk the version takes: unpacked sizes of the artifacts not yet in
    /// the package store.
    pub unpacked_bytes: u64,
    /// Artifacts whose unpacked size could not be learned.
    pub unpacked_unknown: usize,
    /// Artifacts already unpacked in the package store (hard-linked, free).
    pub in_package_store: usize,
}

/// Measures a plan (network: a range request or two per wheel).
pub async fn measure(plan: &Plan, cache: &Cache, http: &Http) -> PlanSize {
    let mut size = PlanSize::default();
    let mut to_probe = Vec::new();
    for a in &plan.artifacts {
        if cache.file_for(a).is_file() {
            size.cached += 1;
        } else {
            match a.size {
                Some(s) => size.download_bytes += s,
                None => size.download_unknown += 1,
            }
        }
        if cache.pkgs().join(Cache::key(a)).is_dir() {
            size.in_package_store += 1;
        } else if a.format == ArchiveFormat::Wheel {
            to_probe.push(a);
        } else {
            size.unpacked_unknown += 1;
        }
    }
    let found = futures_util::stream::iter(to_probe)
        .map(|a| async move {
            match cache.file_for(a) {
                p if p.is_file() => std::fs::read(&p).ok().and_then(|b| unpacked(&b, 0)),
                _ => remote_unpacked(http, &a.url, a.size?).await,
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    for f in found {
        match f {
            Some(n) => size.unpacked_bytes += n,
            None => size.unpacked_unknown += 1,
        }
    }
    size
}

/// The last bytes of a zip hold its central directory; fetch them. Any
/// failure leaves the size unknown: a dry run only reports it.
async fn remote_unpacked(http: &Http, url: &DisplaySafeUrl, len: u64) -> Option<u64> {
    const TAIL: u64 = 256 << 10;
    let target = Target::parse(url).ok()?;
    let range = |start: u64, end: u64| {
        let target = &target;
        async move {
            let bytes = http.range(target, start, end).await.ok()??;
            (bytes.len() as u64 == end - start).then_some(bytes)
        }
    };
    let start = len.saturating_sub(TAIL);
    let tail = range(start, len).await?;
    if let Some(n) = unpacked(&tail, start) {
        return Some(n);
    }
    // A central directory larger than the tail: fetch exactly it.
    let (cd_off, cd_len) = central_directory(&tail)?;
    let cd = range(cd_off, cd_off + cd_len).await?;
    sum_entries(&cd)
}

const EOCD: u32 = 0x0605_4b50;
const CENTRAL: u32 = 0x0201_4b50;

fn u16_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?) as u64)
}

/// The central directory's offset and length, from the end-of-central-
/// directory record in `tail` (the file's last bytes). Zip64 archives
/// (offsets past 4 GiB) are not read: `None`.
fn central_directory(tail: &[u8]) -> Option<(u64, u64)> {
    let at = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(tail, i) == Some(EOCD as u64))?;
    let cd_len = u32_at(tail, at + 12)?;
    let cd_off = u32_at(tail, at + 16)?;
    if cd_len == 0xFFFF_FFFF || cd_off == 0xFFFF_FFFF {
        return None;
    }
    Some((cd_off, cd_len))
}

/// The sum of the members' uncompressed sizes, when `buf` (starting at file
/// offset `buf_start`) holds the whole central directory.
fn unpacked(buf: &[u8], buf_start: u64) -> Option<u64> {
    let (off, len) = central_directory(buf)?;
    let from = usize::try_from(off.checked_sub(buf_start)?).ok()?;
    sum_entries(buf.get(from..from + usize::try_from(len).ok()?)?)
}

fn sum_entries(cd: &[u8]) -> Option<u64> {
    let mut i = 0;
    let mut total = 0u64;
    while i + 46 <= cd.len() {
        if u32_at(cd, i)? != CENTRAL as u64 {
            return None;
        }
        let size = u32_at(cd, i + 24)?;
        if size == 0xFFFF_FFFF {
            return None;
        }
        total += size;
        i += 46 + (u16_at(cd, i + 28)? + u16_at(cd, i + 30)? + u16_at(cd, i + 32)?) as usize;
    }
    (i == cd.len()).then_some(total)
}

pub use crate::spec::human_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip written by the zip crate: members of 10 and 2000 bytes.
    fn sample() -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut out);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            w.start_file("a/x", opts).unwrap();
            std::io::Write::write_all(&mut w, &[1u8; 10]).unwrap();
            w.start_file("a/y", opts).unwrap();
            std::io::Write::write_all(&mut w, &[2u8; 2000]).unwrap();
            w.finish().unwrap();
        }
        out.into_inner()
    }

    #[test]
    fn unpacked_size_from_the_central_directory() {
        let z = sample();
        assert_eq!(unpacked(&z, 0), Some(2010));
        // Only the tail: enough when it holds the central directory.
        let start = z.len() - 120;
        assert_eq!(unpacked(&z[start..], start as u64), Some(2010));
        // Too short a tail: the directory's place is still known.
        let start = z.len() - 30;
        assert_eq!(unpacked(&z[start..], start as u64), None);
        assert!(central_directory(&z[start..]).is_some());
        assert_eq!(unpacked(b"not a zip at all, not at all", 0), None);
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_bytes(439_349_182), "439.3 MB");
        assert_eq!(human_bytes(2_500_000_000), "2.50 GB");
        assert_eq!(human_bytes(999), "999 B");
    }
}
