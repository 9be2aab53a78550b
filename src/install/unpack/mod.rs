//! Unpacking archives as hostile input.
//!
//! Every format (wheels and zips here, tarballs, runfile payloads and
//! NVIDIA's 7-Zip Windows installers in their own modules) goes through one
//! [`Extractor`], which owns the rules:
//!
//! - **Names**: member names are relative, UTF-8, without NUL or `\`, without a
//!   `..` component, and not absolute (a leading `/`, or a `C:`-style prefix).
//!   `.` components and repeated slashes are dropped.
//! - **Layout**: the sanitized name is mapped into the CUDA-style tree by the
//!   artifact's [`Layout`] (`map_path`); members the layout does not want are
//!   skipped, not written.
//! - **Duplicates**: two members that land on the same path, or a member below
//!   a path that is a file or link, reject the archive.
//! - **Kinds**: regular files, directories, symlinks and hard links only;
//!   device nodes, FIFOs and sockets reject the archive.
//! - **Modes**: only "executable or not" survives (0755 / 0644); setuid, setgid,
//!   sticky and world-writable bits never reach the disk.
//! - **Links**: symlink targets must be relative and, walked from the link's
//!   directory, stay inside the tree without passing *through* another link of
//!   the archive (so `a -> b/..` chains cannot be used to climb out). Hard links
//!   must name a regular file of the same archive. Links are created last
//!   (`finish`), so no file is ever written through one.
//! - **Expansion**: the total bytes written and the number of members are
//!   bounded ([`Limits`]); a file may not produce more bytes than it declared.
//!
//! The destination must be a fresh, empty directory that nothing else writes
//! to: the installer gives each artifact its own. Writing regular files only
//! needs `&self`, so formats that can (zip) write many files in parallel.

pub mod deb;
pub mod runfile;
pub(crate) mod sevenz;
pub mod tar;
pub mod zip;

use crate::error::{Error, InstallError, Result};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::install::sources::Layout;

/// Opens the archive at `path` to be read front to back (tarballs, `.deb`s),
/// buffered by the MiB: decompressors ask for a few KiB at a time, and a
/// system call per 8 KiB costs more than decoding them.
pub(crate) fn open_stream(path: &Path) -> Result<std::io::BufReader<std::fs::File>> {
    let file = std::fs::File::open(path).map_err(Error::io("cannot open", path))?;
    Ok(std::io::BufReader::with_capacity(1 << 20, file))
}

/// The error for a hostile or corrupt archive named `archive` (its file name
/// or URL), with the member to blame when there is one.
pub(crate) fn bad_archive(archive: &str, entry: Option<&str>, reason: impl Into<String>) -> Error {
    Error::Install(InstallError::BadArchive {
        archive: archive.into(),
        entry: entry.map(str::to_string),
        reason: reason.into(),
    })
}

/// Bounds on what one archive may expand to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Total bytes of all regular files.
    pub max_total_bytes: u64,
    /// Number of members (of any kind).
    pub max_entries: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // The largest real archives (a full CUDA runfile) expand to ~10 GB.
        Limits {
            max_total_bytes: 64 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// What kind of member an archive holds, as its format reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Hardlink,
    /// Anything else (device, FIFO, socket…): always rejected. The string
    /// says what it was, for the error.
    Other(&'static str),
}

/// Where an accepted member goes.
#[derive(Debug, Clone)]
pub struct Target {
    /// Relative to the destination, after sanitizing and layout mapping.
    pub rel: PathBuf,
    /// Absolute.
    pub path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    File,
    Dir,
    Link,
}

/// One archive being unpacked into one fresh directory.
#[derive(Debug)]
pub struct Extractor {
    archive: String,
    dest: PathBuf,
    layout: Layout,
    limits: Limits,
    entries: u64,
    written: AtomicU64,
    seen: HashMap<PathBuf, Seen>,
    symlinks: BTreeMap<PathBuf, String>,
    hardlinks: Vec<(PathBuf, PathBuf)>,
}

/// What was unpacked.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub links: u64,
    /// Files whose CRC-32 the format checked while writing them (zip members:
    /// the central directory's value, verified against the data): path,
    /// size, CRC-32. Formats without per-member checksums leave it empty.
    pub checked: Vec<(PathBuf, u64, u32)>,
}

impl Extractor {
    /// `archive` names the archive in errors (its file name or URL).
    pub fn new(archive: impl Into<String>, dest: &Path, layout: Layout, limits: Limits) -> Self {
        Extractor {
            archive: archive.into(),
            dest: dest.to_path_buf(),
            layout,
            limits,
            entries: 0,
            written: AtomicU64::new(0),
            seen: HashMap::new(),
            symlinks: BTreeMap::new(),
            hardlinks: Vec::new(),
        }
    }

    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// The error for a hostile or corrupt archive.
    pub fn bad(&self, entry: impl Into<String>, reason: impl Into<String>) -> Error {
        bad_archive(&self.archive, Some(&entry.into()), reason)
    }

    /// Checks one member and decides where it goes (`None`: the layout skips
    /// it). Call once per member, in archive order, before writing it.
    /// Symlinks and hard links are recorded by `symlink`/`hardlink` instead.
    pub fn entry(&mut self, raw: &str, kind: &EntryKind) -> Result<Option<Target>> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.bad(raw, "too many members (expansion limit)"));
        }
        let seen_kind = match kind {
            EntryKind::File => Seen::File,
            EntryKind::Dir => Seen::Dir,
            EntryKind::Symlink | EntryKind::Hardlink => Seen::Link,
            EntryKind::Other(what) => {
                return Err(self.bad(raw, format!("{what} members are not allowed")));
            }
        };
        let clean = sanitize(raw).map_err(|r| self.bad(raw, r))?;
        let Some(rel) = map_path(&self.layout, &clean) else {
            return Ok(None);
        };
        // `.cudaenv/` holds the version's metadata and completeness marker:
        // an archive that ships them could make a tree look installed.
        if rel.starts_with(crate::store::META_DIR) {
            return Err(self.bad(
                raw,
                "archives may not write cudaenv's own metadata (.cudaenv/)",
            ));
        }
        self.claim(raw, &rel, seen_kind)?;
        Ok(Some(Target {
            path: self.dest.join(&rel),
            rel,
        }))
    }

    fn claim(&mut self, raw: &str, rel: &Path, kind: Seen) -> Result<()> {
        // Every ancestor must be (or become) a directory.
        let mut anc = rel.parent();
        while let Some(a) = anc.filter(|a| !a.as_os_str().is_empty()) {
            match self.seen.get(a) {
                Some(Seen::Dir) => break,
                Some(_) => {
                    return Err(self.bad(raw, format!("{} is a file or link", a.display())));
                }
                None => {
                    self.seen.insert(a.to_path_buf(), Seen::Dir);
                }
            }
            anc = a.parent();
        }
        match (self.seen.get(rel), kind) {
            (None, _) => {
                self.seen.insert(rel.to_path_buf(), kind);
                Ok(())
            }
            // Directories may be listed again (or implied first).
            (Some(Seen::Dir), Seen::Dir) => Ok(()),
            (Some(_), _) => Err(self.bad(raw, "duplicate member")),
        }
    }

    /// Writes a regular file accepted by `entry`. Thread-safe: the bytes
    /// budget is shared. `declared` is the size the archive announced; more
    /// bytes than that is corruption (or a decompression bomb).
    pub fn write_file(
        &self,
        raw: &str,
        target: &Target,
        executable: bool,
        declared: Option<u64>,
        reader: &mut dyn Read,
    ) -> Result<u64> {
        if let Some(parent) = target.path.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io("cannot create", parent))?;
        }
        let mode = if executable { 0o755 } else { 0o644 };
        let mut f = open_new(&target.path, mode, false)?;
        let mut buf = vec![0u8; 256 * 1024];
        let mut n: u64 = 0;
        loop {
            let k = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.bad(raw, format!("cannot decompress: {e}"))),
            };
            n += k as u64;
            if declared.is_some_and(|d| n > d) {
                return Err(self.bad(raw, "more data than the archive declared"));
            }
            let total = self.written.fetch_add(k as u64, Ordering::Relaxed) + k as u64;
            if total > self.limits.max_total_bytes {
                return Err(self.bad(raw, "archive expands beyond the size limit"));
            }
            f.write_all(&buf[..k])
                .map_err(Error::io("cannot write", &target.path))?;
        }
        if declared.is_some_and(|d| n != d) {
            return Err(self.bad(raw, "less data than the archive declared"));
        }
        crate::context::failpoint::hit(crate::context::failpoint::Point::MidExtract);
        Ok(n)
    }

    /// Writes a file of exactly `size` bytes that `fill` produces into a
    /// buffer of that size (a whole member decompressed in one call). Large
    /// files are mapped: their blocks are reserved first (so a full disk is
    /// an error here, not a fault while writing), then `fill` writes straight
    /// into the file's pages, with no copy through `write(2)`. Where the file
    /// system cannot reserve blocks, the buffer is memory, written after.
    /// `fill` returns why the bytes are bad, if they are.
    pub fn write_file_with(
        &self,
        raw: &str,
        target: &Target,
        executable: bool,
        size: u64,
        fill: &mut dyn FnMut(&mut [u8]) -> std::result::Result<(), String>,
    ) -> Result<u64> {
        let total = self
            .written
            .fetch_add(size, Ordering::Relaxed)
            .saturating_add(size);
        if total > self.limits.max_total_bytes {
            return Err(self.bad(raw, "archive expands beyond the size limit"));
        }
        let len = usize::try_from(size).map_err(|_| self.bad(raw, "member too large"))?;
        if let Some(parent) = target.path.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io("cannot create", parent))?;
        }
        let mode = if executable { 0o755 } else { 0o644 };
        let path = &target.path;
        if size >= MAP_MIN {
            let f = open_new(path, mode, true)?;
            if reserve(&f, size).map_err(Error::io("cannot write", path))? {
                page_in(&f, size).map_err(Error::io("cannot write", path))?;
                // SAFETY: the file was created by this call (O_EXCL, not
                // reachable through a link) inside a staging directory that
                // only this process writes, and it is not resized while
                // mapped: nothing else changes the mapped bytes.
                let mut map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&f) }
                    .map_err(Error::io("cannot map", path))?;
                // Map every page with one call rather than one trap per page
                // (Linux 5.14+; elsewhere they are mapped as written).
                crate::os::advise_written_whole(&map);
                fill(&mut map).map_err(|r| self.bad(raw, r))?;
                drop(map);
                crate::context::failpoint::hit(crate::context::failpoint::Point::MidExtract);
                return Ok(size);
            }
            let mut buf = vec![0u8; len];
            fill(&mut buf).map_err(|r| self.bad(raw, r))?;
            (&f).write_all(&buf)
                .map_err(Error::io("cannot write", path))?;
        } else {
            let mut buf = vec![0u8; len];
            fill(&mut buf).map_err(|r| self.bad(raw, r))?;
            open_new(path, mode, false)?
                .write_all(&buf)
                .map_err(Error::io("cannot write", path))?;
        }
        crate::context::failpoint::hit(crate::context::failpoint::Point::MidExtract);
        Ok(size)
    }

    /// Creates a directory accepted by `entry`.
    pub fn make_dir(&self, target: &Target) -> Result<()> {
        std::fs::create_dir_all(&target.path).map_err(Error::io("cannot create", &target.path))
    }

    /// Records a symlink (created by `finish`, after every file).
    pub fn symlink(&mut self, raw: &str, link_target: &str) -> Result<()> {
        let Some(t) = self.entry(raw, &EntryKind::Symlink)? else {
            return Ok(());
        };
        if link_target.is_empty() || link_target.contains('\0') {
            return Err(self.bad(raw, "empty or invalid link target"));
        }
        if link_target.starts_with('/') {
            return Err(self.bad(
                raw,
                format!("link to an absolute path ({link_target}) is not allowed"),
            ));
        }
        self.symlinks.insert(t.rel, link_target.to_string());
        Ok(())
    }

    /// Records a hard link to another member (created by `finish`).
    pub fn hardlink(&mut self, raw: &str, to_raw: &str) -> Result<()> {
        let Some(t) = self.entry(raw, &EntryKind::Hardlink)? else {
            return Ok(());
        };
        let to = sanitize(to_raw)
            .ok()
            .and_then(|c| map_path(&self.layout, &c))
            .ok_or_else(|| self.bad(raw, format!("hard link to `{to_raw}` outside the tree")))?;
        self.hardlinks.push((t.rel, to));
        Ok(())
    }

    /// Creates the recorded links, after checking each stays in the tree.
    pub fn finish(self) -> Result<Summary> {
        for (rel, target) in &self.symlinks {
            self.check_symlink(rel, target)?;
        }
        for (rel, target) in &self.symlinks {
            let path = self.dest.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(Error::io("cannot create", parent))?;
            }
            crate::os::symlink(Path::new(target), &path)
                .map_err(Error::io("cannot create link", &path))?;
        }
        for (rel, to) in &self.hardlinks {
            if self.seen.get(to) != Some(&Seen::File) {
                return Err(self.bad(
                    rel.display().to_string(),
                    format!(
                        "hard link to {}, which is not a file of this archive",
                        to.display()
                    ),
                ));
            }
            let path = self.dest.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(Error::io("cannot create", parent))?;
            }
            std::fs::hard_link(self.dest.join(to), &path)
                .map_err(Error::io("cannot create link", &path))?;
        }
        Ok(Summary {
            files: self.seen.values().filter(|s| **s == Seen::File).count() as u64,
            bytes: self.written.load(Ordering::Relaxed),
            links: (self.symlinks.len() + self.hardlinks.len()) as u64,
            checked: Vec::new(),
        })
    }

    /// Walks `target` from the link's directory: it may not climb above the
    /// tree, nor continue through another link of the archive.
    fn check_symlink(&self, rel: &Path, target: &str) -> Result<()> {
        let bad = |why: &str| {
            self.bad(
                rel.display().to_string(),
                format!("link to `{target}` {why}"),
            )
        };
        let mut at: Vec<&std::ffi::OsStr> =
            rel.parent().map(|p| p.iter().collect()).unwrap_or_default();
        let parts: Vec<Component> = Path::new(target).components().collect();
        for (i, c) in parts.iter().enumerate() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if at.pop().is_none() {
                        return Err(bad("points outside the tree"));
                    }
                }
                Component::Normal(n) => {
                    at.push(n);
                    let here: PathBuf = at.iter().collect();
                    if i + 1 < parts.len() && self.symlinks.contains_key(&here) {
                        return Err(bad("passes through another link"));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad("is absolute"));
                }
            }
        }
        Ok(())
    }
}

/// Creates a new file (never follows or replaces anything) with `mode`;
/// `readable` too when it is to be mapped (a shared writable mapping needs
/// both).
fn open_new(path: &Path, mode: u32, readable: bool) -> Result<std::fs::File> {
    crate::os::create_new_nofollow(path, mode, readable).map_err(Error::io("cannot create", path))
}

/// Files at least this large are written through a mapping (see
/// `Extractor::write_file_with`); smaller ones through one `write`.
const MAP_MIN: u64 = 1 << 20;

/// Reserves `size` bytes of blocks for `f` and sets its length: `false`
/// when the file system cannot reserve (then the length is unchanged).
fn reserve(f: &std::fs::File, size: u64) -> std::io::Result<bool> {
    crate::os::reserve(f, size)
}

/// Writes zeros over the first `size` bytes of the new file `f`, in
/// `os::WRITE_BLOCK`s, so that its pages are in the page cache before it is
/// mapped. Faulting the pages of a reserved file in through the mapping
/// instead reads each one as a hole and zeroes it page by page, which cost
/// up to three times the CPU of these writes (for 1 GB, 1.0-1.4 s against
/// 0.3-0.8 s on a fresh machine, 0.4-1.0 s against 0.3-0.4 s later;
/// docs/PERFORMANCE.md): most of the kernel's share of unpacking cuDNN.
fn page_in(mut f: &std::fs::File, size: u64) -> std::io::Result<()> {
    static ZEROS: [u8; crate::os::WRITE_BLOCK] = [0; crate::os::WRITE_BLOCK];
    let mut left = size;
    while left > 0 {
        let n = left.min(ZEROS.len() as u64) as usize;
        f.write_all(&ZEROS[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Longest member name accepted (real toolkits stay under ~250 bytes).
const MAX_NAME_BYTES: usize = 1024;
/// Longest single path component (the usual file-system limit).
const MAX_COMPONENT_BYTES: usize = 255;

/// Validates an archive member name and returns it as a clean relative path.
pub fn sanitize(raw: &str) -> std::result::Result<PathBuf, String> {
    if raw.contains('\0') {
        return Err("name contains a NUL byte".into());
    }
    if raw.contains('\\') {
        return Err("name contains a backslash".into());
    }
    if raw.starts_with('/') {
        return Err("absolute path".into());
    }
    let b = raw.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return Err("absolute (drive-letter) path".into());
    }
    // A newline or escape in a file name is never part of a real toolkit, and
    // would corrupt one-path-per-line listings and terminals.
    if raw.chars().any(char::is_control) {
        return Err("name contains a control character (newline, escape, …)".into());
    }
    // Past these, creating the file fails with an I/O error that would not
    // say the archive is at fault.
    if raw.len() > MAX_NAME_BYTES {
        return Err(format!("name longer than {MAX_NAME_BYTES} bytes"));
    }
    let mut out = PathBuf::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("name contains `..`".into()),
            p if p.len() > MAX_COMPONENT_BYTES => {
                return Err(format!(
                    "a path component is longer than {MAX_COMPONENT_BYTES} bytes"
                ));
            }
            p => out.push(p),
        }
    }
    if out.as_os_str().is_empty() {
        return Err("empty name".into());
    }
    Ok(out)
}

/// Maps a sanitized member path into the CUDA-style tree, or `None` to skip it.
///
/// Every layout renames a leading `lib/` to `lib64/` (the tree keeps `lib` as
/// an alias to `lib64`, as NVIDIA's installers do).
pub fn map_path(layout: &Layout, clean: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = clean.iter().map(|p| p.to_str().unwrap_or("")).collect();
    let rest: &[&str] = match layout {
        Layout::Wheel => {
            // nvidia/<package>/<rest…> (NVIDIA's CUDA, cuDNN, NCCL wheels);
            // <package>/{lib,include,bin}/… (cuTENSOR, early cuSPARSELt);
            // tensorrt_libs/<library> (TensorRT, flat). Metadata and Python
            // glue are skipped.
            let last = *parts.last()?;
            if last == "__init__.py" || last.ends_with(".pyc") || parts.contains(&"__pycache__") {
                return None;
            }
            match parts.as_slice() {
                ["nvidia", _, rest @ ..] if !rest.is_empty() => rest,
                ["tensorrt_libs", file] if file.starts_with("lib") && file.contains(".so") => {
                    return Some(Path::new("lib64").join(file));
                }
                [top, dir, _, ..]
                    if *top != "nvidia"
                        && !top.ends_with(".dist-info")
                        && !top.ends_with(".data")
                        && matches!(*dir, "lib" | "include" | "bin") =>
                {
                    &parts[1..]
                }
                _ => return None,
            }
        }
        Layout::StripTop => {
            if parts.len() < 2 {
                return None;
            }
            &parts[1..]
        }
        Layout::LegacyCudnn => {
            if parts.len() < 3 || parts[0] != "cuda" {
                return None;
            }
            &parts[1..]
        }
        Layout::NestedRunfile { .. } => &parts[..],
        Layout::WindowsInstaller { members, optional } => {
            // <component>/<package>/<rest…>: the installer's own files at a
            // package's top (`cudart.nvi`, its manifest) and 32-bit import
            // libraries (`lib/Win32`) have no place in a 64-bit tree.
            match parts.as_slice() {
                [component, _, rest @ ..]
                    if rest.len() >= 2
                        && members.iter().chain(optional).any(|m| m == component)
                        && rest[..2] != ["lib", "Win32"] =>
                {
                    rest
                }
                _ => return None,
            }
        }
        Layout::Debian { triplet } => {
            // Debian installs into the system's paths; only the library,
            // header and program directories have a place in the tree.
            let (top, rest) = match parts.as_slice() {
                ["usr", "lib", t, rest @ ..] if t == triplet => ("lib64", rest),
                ["usr", "include", rest @ ..] => ("include", rest),
                ["usr", "bin", rest @ ..] => ("bin", rest),
                _ => return None,
            };
            if rest.is_empty() || rest.iter().any(|p| p.is_empty()) {
                return None;
            }
            return Some(std::iter::once(top).chain(rest.iter().copied()).collect());
        }
        Layout::Runfile { members, optional } => {
            let m = members.iter().chain(optional).find_map(|m| {
                let mp: Vec<&str> = m.split('/').filter(|s| !s.is_empty()).collect();
                (parts.len() > mp.len() && parts[..mp.len()] == mp[..]).then_some(mp.len())
            })?;
            let rest = &parts[m..];
            // A runfile component keeps its libraries and headers under
            // `targets/<triple>/{lib,include}` (with `lib64`/`include` links
            // to them, which the runfile unpacker skips): flatten to the tree.
            if rest.len() > 3 && rest[0] == "targets" && matches!(rest[2], "lib" | "include") {
                &rest[2..]
            } else {
                rest
            }
        }
    };
    if rest.is_empty() || rest.iter().any(|p| p.is_empty()) {
        return None;
    }
    // Windows archives and wheels keep DLLs in `bin/` (CUDA 13's wheels in
    // `bin/x86_64/`) and import libraries in `lib/x64/`: the tree keeps
    // them where CMake, MSBuild and TensorFlow look under CUDA_PATH,
    // `bin\` and `lib\x64\`.
    let mut rest = rest.to_vec();
    if rest.len() > 2 && rest[0] == "bin" && rest[1] == "x86_64" {
        rest.remove(1);
    }
    let windows_libs = rest.len() > 2 && rest[0] == "lib" && rest[1] == "x64";
    let mut out = PathBuf::new();
    for (i, p) in rest.iter().enumerate() {
        if i == 0 && *p == "lib" && !windows_libs {
            out.push("lib64");
        } else {
            out.push(p);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_rejects_escapes() {
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "C:/x",
            "a\\..\\x",
            "",
            "./",
            "a\0b",
        ] {
            assert!(sanitize(bad).is_err(), "{bad:?}");
        }
        assert_eq!(sanitize("./a//b/./c").unwrap(), PathBuf::from("a/b/c"));
    }

    #[test]
    fn wheel_layout() {
        let m = |s: &str| map_path(&Layout::Wheel, Path::new(s));
        // Windows wheels: DLLs into bin/, import libraries kept in lib/x64/.
        assert_eq!(
            m("nvidia/cu13/bin/x86_64/cudart64_13.dll"),
            Some(PathBuf::from("bin/cudart64_13.dll"))
        );
        assert_eq!(
            m("nvidia/cuda_runtime/bin/cudart64_12.dll"),
            Some(PathBuf::from("bin/cudart64_12.dll"))
        );
        assert_eq!(
            m("nvidia/cudnn/lib/x64/cudnn.lib"),
            Some(PathBuf::from("lib/x64/cudnn.lib"))
        );
        assert_eq!(
            m("nvidia/cu13/lib/x64/cudart.lib"),
            Some(PathBuf::from("lib/x64/cudart.lib"))
        );
        assert_eq!(
            m("nvidia/cuda_runtime/lib/libcudart.so.12"),
            Some("lib64/libcudart.so.12".into())
        );
        assert_eq!(m("nvidia/cu13/bin/nvcc"), Some("bin/nvcc".into()));
        assert_eq!(
            m("nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so"),
            Some("nvvm/lib64/libnvvm.so".into())
        );
        assert_eq!(
            m("nvidia/cudnn/include/cudnn.h"),
            Some("include/cudnn.h".into())
        );
        assert_eq!(m("nvidia/__init__.py"), None);
        // The libraries beside the toolkit, as their wheels lay them out.
        assert_eq!(
            m("nvidia/nccl/lib/libnccl.so.2"),
            Some("lib64/libnccl.so.2".into())
        );
        assert_eq!(
            m("cutensor/lib/libcutensor.so.2"),
            Some("lib64/libcutensor.so.2".into())
        );
        assert_eq!(
            m("cutensor/include/cutensor/types.h"),
            Some("include/cutensor/types.h".into())
        );
        assert_eq!(
            m("cusparselt/lib/libcusparseLt.so.0"),
            Some("lib64/libcusparseLt.so.0".into())
        );
        assert_eq!(m("cusparselt/LICENSE.txt"), None);
        assert_eq!(
            m("tensorrt_libs/libnvinfer.so.10"),
            Some("lib64/libnvinfer.so.10".into())
        );
        assert_eq!(m("tensorrt_libs/__init__.py"), None);
        assert_eq!(m("tensorrt_libs/README"), None);
        assert_eq!(m("x-1.0.dist-info/lib/RECORD"), None);
        assert_eq!(m("nvidia/cudnn/lib/__init__.py"), None);
        assert_eq!(m("nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD"), None);
        assert_eq!(m("nvidia/cudnn"), None);
    }

    #[test]
    fn other_layouts() {
        assert_eq!(
            map_path(
                &Layout::StripTop,
                Path::new("cuda_cudart-linux-x86_64-12.4.127-archive/lib/libcudart.so.12")
            ),
            Some("lib64/libcudart.so.12".into())
        );
        assert_eq!(
            map_path(&Layout::LegacyCudnn, Path::new("cuda/lib64/libcudnn.so.8")),
            Some("lib64/libcudnn.so.8".into())
        );
        assert_eq!(
            map_path(&Layout::LegacyCudnn, Path::new("NVIDIA_SLA.txt")),
            None
        );
        let rf = Layout::Runfile {
            members: vec!["builds/cuda_cudart".into()],
            optional: vec!["builds/cuda_cccl".into()],
        };
        assert_eq!(
            map_path(
                &rf,
                Path::new("builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0")
            ),
            Some("lib64/libcudart.so.11.0".into())
        );
        assert_eq!(
            map_path(
                &rf,
                Path::new("builds/cuda_cccl/targets/x86_64-linux/include/thrust/x.h")
            ),
            Some("include/thrust/x.h".into())
        );
        assert_eq!(
            map_path(&rf, Path::new("builds/cuda_cudart/lib64/libcudart.so.11.0")),
            Some("lib64/libcudart.so.11.0".into())
        );
        assert_eq!(map_path(&rf, Path::new("builds/cuda_nvcc/bin/nvcc")), None);
        let win = Layout::WindowsInstaller {
            members: vec!["cuda_cudart".into(), "libcublas".into()],
            optional: vec!["cuda_cupti".into()],
        };
        let w = |s: &str| map_path(&win, Path::new(s));
        assert_eq!(
            w("cuda_cudart/cudart/bin/cudart64_110.dll"),
            Some("bin/cudart64_110.dll".into())
        );
        assert_eq!(
            w("libcublas/cublas_dev/lib/x64/cublas.lib"),
            Some("lib/x64/cublas.lib".into())
        );
        assert_eq!(
            w("libcublas/cublas_dev/include/cublas_api.h"),
            Some("include/cublas_api.h".into())
        );
        assert_eq!(
            w("cuda_cupti/cupti/extras/CUPTI/lib64/cupti64_2020.3.0.dll"),
            Some("extras/CUPTI/lib64/cupti64_2020.3.0.dll".into())
        );
        assert_eq!(w("cuda_cudart/cudart/cudart.nvi"), None);
        assert_eq!(w("cuda_cudart/cudart/lib/Win32/cudart.lib"), None);
        assert_eq!(w("cuda_nvcc/nvcc/bin/nvcc.exe"), None);
        assert_eq!(w("setup.exe"), None);
        assert_eq!(w("Display.Driver/nvlddmkm.sys"), None);
        let deb = Layout::Debian {
            triplet: "x86_64-linux-gnu".into(),
        };
        let d = |s: &str| map_path(&deb, Path::new(s));
        assert_eq!(
            d("usr/lib/x86_64-linux-gnu/libcudart.so.11.0"),
            Some("lib64/libcudart.so.11.0".into())
        );
        assert_eq!(d("usr/include/cublas.h"), Some("include/cublas.h".into()));
        assert_eq!(d("usr/lib/aarch64-linux-gnu/libcudart.so.11.0"), None);
        assert_eq!(d("usr/lib/x86_64-linux-gnu"), None);
        assert_eq!(d("usr/share/doc/libcudart11.0/copyright"), None);
        assert_eq!(d("lib/x86_64-linux-gnu/libc.so.6"), None);
    }

    fn ex(dir: &Path) -> Extractor {
        Extractor::new("test.zip", dir, Layout::StripTop, Limits::default())
    }

    #[test]
    fn duplicates_and_kinds_are_rejected() {
        let d = tempfile::tempdir().unwrap();
        let mut e = ex(d.path());
        e.entry("t/a/b", &EntryKind::File).unwrap().unwrap();
        assert!(e.entry("t/a/b", &EntryKind::File).is_err());
        assert!(e.entry("t/a/b/c", &EntryKind::File).is_err());
        assert!(e.entry("t/a", &EntryKind::File).is_err());
        e.entry("t/a", &EntryKind::Dir).unwrap();
        assert!(e.entry("t/dev", &EntryKind::Other("device")).is_err());
    }

    #[test]
    fn symlinks_must_stay_inside_and_not_chain() {
        let d = tempfile::tempdir().unwrap();
        let mut e = ex(d.path());
        e.symlink("t/lib/libx.so", "libx.so.1").unwrap();
        e.symlink("t/up", "../..").unwrap();
        assert!(e.finish().is_err());

        let d = tempfile::tempdir().unwrap();
        let mut e = ex(d.path());
        assert!(e.symlink("t/abs", "/etc").is_err());

        let d = tempfile::tempdir().unwrap();
        let mut e = ex(d.path());
        e.symlink("t/q", ".").unwrap();
        e.symlink("t/p", "q/r/../..").unwrap();
        assert!(e.finish().is_err(), "a link walking through another link");

        let d = tempfile::tempdir().unwrap();
        let mut e = ex(d.path());
        e.symlink("t/lib/libx.so", "libx.so.1").unwrap();
        e.symlink("t/inc", "lib/../include").unwrap();
        e.finish().unwrap();
        assert_eq!(
            std::fs::read_link(d.path().join("lib64/libx.so")).unwrap(),
            PathBuf::from("libx.so.1")
        );
    }

    #[test]
    fn sizes_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let e = Extractor::new(
            "t",
            d.path(),
            Layout::StripTop,
            Limits {
                max_total_bytes: 10,
                max_entries: 10,
            },
        );
        let t = Target {
            rel: "a".into(),
            path: d.path().join("a"),
        };
        assert!(
            e.write_file("a", &t, false, Some(5), &mut &b"123456"[..])
                .is_err()
        );
        let t = Target {
            rel: "b".into(),
            path: d.path().join("b"),
        };
        assert!(
            e.write_file("b", &t, false, None, &mut &[0u8; 11][..])
                .is_err()
        );
    }
}
