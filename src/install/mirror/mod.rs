//! An offline mirror: the files `install` needs for some stacks, in a
//! directory that a machine without network installs from.
//!
//! `cudaenv mirror DIR SPEC…` resolves each spec exactly as `install` does
//! and puts every artifact of the plans where the two sources look for it:
//!
//! ```text
//! DIR/mirror.json                      what cudaenv wrote here (files, hashes, stacks)
//! DIR/SHA256SUMS                       every file, for `sha256sum -c` after a transfer
//! DIR/pypi/simple/index.html           a PEP 503 simple index: CUDAENV_PYPI_INDEX=file://DIR/pypi/simple
//! DIR/pypi/simple/<project>/index.html   links with `#sha256=` to ../../files/<wheel>
//! DIR/pypi/files/<wheel>
//! DIR/nvidia/compute/…                 NVIDIA's own paths: CUDAENV_NVIDIA_MIRROR=file://DIR/nvidia
//! ```
//!
//! The NVIDIA part mirrors the host's paths (`compute/cuda/redist/…`,
//! `compute/cuda/<ver>/local_installers/…`), so the same directory also
//! works served over HTTP as a mirror of NVIDIA's host; the PyPI part is the
//! layout pip itself reads from a `file://` index, so pip can use it too.
//!
//! The directory is owned through its record: a new or empty directory gets
//! one at once, a directory with one is added to (the project pages and the
//! checksum list are rewritten from the record, so a later run for other
//! stacks keeps the earlier ones), and any other non-empty directory is
//! refused, so a mistyped path never gets files sprinkled into it. Every
//! file is written under a temporary name and renamed, so a reader (or a
//! crash) never sees half a file; a crash between files leaves files the
//! record does not list yet, which the next run writes again, and perhaps
//! a temporary file, which the next run removes under its lock.
//!
//! `fill` fetches the files into the mirror: each one into the download
//! cache first, verified, then linked or copied in.

use crate::error::{Error, InstallError, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::install::sources::pypi::normalize;
use crate::install::sources::{Artifact, SourceKind};
use crate::spec::safe_url::DisplaySafeUrl;

pub(crate) mod fill;

/// The mirror's record, at the top of the directory.
pub const RECORD: &str = "mirror.json";
/// Every file with its sha256, as `sha256sum` prints and checks them.
pub const SUMS: &str = "SHA256SUMS";
/// The lock that keeps two `mirror` runs on one directory apart.
pub const LOCK: &str = ".mirror.lock";

const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    schema: u32,
    /// By path relative to the mirror (`pypi/files/…`, `nvidia/compute/…`).
    files: BTreeMap<String, FileEntry>,
    /// The version names of the stacks mirrored (`12.4.1+cudnn9.1.1.17`).
    stacks: BTreeSet<String>,
}

/// One file of the mirror.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub sha256: String,
    pub size: u64,
    /// The PyPI project a wheel belongs to (normalized); none for NVIDIA files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A mirror directory, opened for writing.
pub struct Mirror {
    dir: PathBuf,
    record: Record,
}

/// The record of the mirror in `dir`, checked: `None` when it has none; a
/// record that is not a regular file, too large, or damaged is `BadMirror`.
fn read_record(dir: &Path) -> Result<Option<Record>> {
    let record_path = dir.join(RECORD);
    let bad = |reason: String| {
        Error::Install(InstallError::BadMirror {
            path: record_path.clone(),
            reason,
        })
    };
    let bytes = match crate::os::fs::read_bounded(&record_path, crate::os::fs::LARGE) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(bad(e.to_string())),
    };
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if record.schema != SCHEMA {
        return Err(bad(format!(
            "schema {} (this cudaenv writes {SCHEMA})",
            record.schema
        )));
    }
    for (path, f) in &record.files {
        check_relative(path).map_err(|r| bad(format!("file `{path}`: {r}")))?;
        if !is_sha256(&f.sha256) {
            return Err(bad(format!(
                "file `{path}`: `{}` is not a sha256",
                f.sha256
            )));
        }
        // Names that go into the index pages' paths and HTML.
        if let Some(p) = &f.project {
            let name = path.strip_prefix("pypi/files/").unwrap_or("");
            check_wheel_name(name).map_err(|r| bad(format!("file `{path}`: {r}")))?;
            let plain = p
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if p.is_empty() || !plain {
                return Err(bad(format!(
                    "file `{path}`: `{}` is not a project name",
                    p.escape_debug()
                )));
            }
        }
    }
    Ok(Some(record))
}

/// The sizes a mirror's record gives its files. A `file://` index reading
/// the mirror (its PEP 503 pages announce no sizes) takes them as the
/// files' sizes, so that a file replaced by a larger one is refused at the
/// size it had when mirrored, not at the general ceiling.
pub struct RecordedSizes {
    dir: PathBuf,
    files: BTreeMap<String, u64>,
}

impl RecordedSizes {
    /// The record of the mirror whose PyPI index is `index` (`DIR/pypi/simple`):
    /// `None` when `index` is not laid out so or `DIR` has no record.
    pub fn of_pypi_index(index: &Path) -> Result<Option<RecordedSizes>> {
        let Some(dir) = index
            .parent()
            .filter(|_| index.file_name().is_some_and(|n| n == "simple"))
            .filter(|pypi| pypi.file_name().is_some_and(|n| n == "pypi"))
            .and_then(Path::parent)
        else {
            return Ok(None);
        };
        Ok(read_record(dir)?.map(|r| RecordedSizes {
            dir: dir.to_path_buf(),
            files: r.files.into_iter().map(|(k, f)| (k, f.size)).collect(),
        }))
    }

    /// The record of the mirror whose NVIDIA part is `base` (`DIR/nvidia`):
    /// `None` when `base` is not laid out so or `DIR` has no record.
    pub fn of_nvidia_mirror(base: &Path) -> Result<Option<RecordedSizes>> {
        let Some(dir) = base
            .parent()
            .filter(|_| base.file_name().is_some_and(|n| n == "nvidia"))
        else {
            return Ok(None);
        };
        Ok(read_record(dir)?.map(|r| RecordedSizes {
            dir: dir.to_path_buf(),
            files: r.files.into_iter().map(|(k, f)| (k, f.size)).collect(),
        }))
    }

    /// The recorded size of `file` (a path under the mirror), if it is one.
    pub fn size_of(&self, file: &Path) -> Option<u64> {
        let rel = file.strip_prefix(&self.dir).ok()?;
        let key: Vec<&str> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        self.files.get(&key.join("/")).copied()
    }
}

impl Mirror {
    /// Opens `dir` (absolute): creates it with an empty record when it is
    /// new or empty, reads its record when it has one, refuses otherwise.
    pub fn open(dir: &Path) -> Result<Mirror> {
        std::fs::create_dir_all(dir).map_err(Error::io("cannot create", dir))?;
        match read_record(dir) {
            Ok(Some(record)) => Ok(Mirror {
                dir: dir.to_path_buf(),
                record,
            }),
            Err(e) => Err(e),
            Ok(None) => {
                let entries = std::fs::read_dir(dir).map_err(Error::io("cannot read", dir))?;
                // A lock left by a run that died before writing the record is ours.
                if entries.flatten().any(|e| e.file_name() != LOCK) {
                    return Err(Error::Install(InstallError::NotAMirror {
                        record: RECORD,
                        dir: dir.to_path_buf(),
                    }));
                }
                let m = Mirror {
                    dir: dir.to_path_buf(),
                    record: Record {
                        schema: SCHEMA,
                        ..Record::default()
                    },
                };
                m.write_record()?;
                Ok(m)
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes what a run that died mid-write left (`NAME.tmpPID` files and
    /// `write_atomically`'s temporary files).
    /// Only under the mirror's lock: then no other run is writing.
    pub fn remove_leftovers(&self) -> Result<usize> {
        fn walk(dir: &Path, removed: &mut usize) -> Result<()> {
            let entries = std::fs::read_dir(dir).map_err(Error::io("cannot read", dir))?;
            for e in entries.flatten() {
                let p = e.path();
                let Ok(t) = e.file_type() else { continue };
                if t.is_dir() {
                    walk(&p, removed)?;
                } else if t.is_file() && is_temporary(&e.file_name().to_string_lossy()) {
                    std::fs::remove_file(&p).map_err(Error::io("cannot delete", &p))?;
                    *removed += 1;
                }
            }
            Ok(())
        }
        let mut removed = 0;
        walk(&self.dir, &mut removed)?;
        Ok(removed)
    }

    /// The `file://` URL to give `CUDAENV_PYPI_INDEX` (or pip's `--index-url`).
    pub fn pypi_index_url(&self) -> String {
        file_url(&self.dir.join("pypi/simple"))
    }

    /// The `file://` URL to give `CUDAENV_NVIDIA_MIRROR`.
    pub fn nvidia_url(&self) -> String {
        file_url(&self.dir.join("nvidia"))
    }

    /// The `file://` URL to give `CUDAENV_DEBIAN_MIRROR`.
    pub fn debian_url(&self) -> String {
        file_url(&self.dir.join("debian"))
    }

    /// Where `a` goes in the mirror, relative to it. `nvidia_base` and
    /// `debian_base` are the bases its NVIDIA or Debian URL was built on (the
    /// host or the configured mirror).
    pub fn place(a: &Artifact, nvidia_base: &str, debian_base: &str) -> Result<String> {
        let bad = |reason: String| {
            Error::Install(InstallError::BadManifest {
                what: a.url.to_string(),
                reason,
            })
        };
        let rel = match a.source {
            SourceKind::Pypi => {
                check_wheel_name(&a.file_name).map_err(bad)?;
                format!("pypi/files/{}", a.file_name)
            }
            SourceKind::Nvidia | SourceKind::Legacy => {
                let path = path_under(a, nvidia_base, "the NVIDIA base").map_err(bad)?;
                format!("nvidia/{path}")
            }
            SourceKind::Debian => {
                let path = path_under(a, debian_base, "the Debian mirror").map_err(bad)?;
                format!("debian/{path}")
            }
        };
        check_relative(&rel).map_err(bad)?;
        Ok(rel)
    }

    /// Is `rel` already in the mirror with this content?
    pub fn has(&self, rel: &str, sha256: &str) -> bool {
        self.record.files.get(rel).is_some_and(|f| {
            f.sha256.eq_ignore_ascii_case(sha256)
                && std::fs::metadata(self.dir.join(rel)).is_ok_and(|m| m.len() == f.size)
        })
    }

    /// Puts the verified file `from` (in the download cache) at `rel`: a hard
    /// link when the cache is on the same file system, else a copy.
    pub fn add(&mut self, rel: &str, from: &Path, entry: FileEntry) -> Result<()> {
        let dest = crate::os::fs::within(&self.dir, Path::new(rel))?;
        let tmp = temporary(&dest);
        let _ = std::fs::remove_file(&tmp);
        if std::fs::hard_link(from, &tmp).is_err() {
            std::fs::copy(from, &tmp).map_err(Error::io("cannot write", &tmp))?;
        }
        std::fs::rename(&tmp, &dest).map_err(Error::io("cannot write", &dest))?;
        self.record.files.insert(rel.to_string(), entry);
        Ok(())
    }

    /// Records that a stack is complete in the mirror.
    pub fn add_stack(&mut self, name: &str) {
        self.record.stacks.insert(name.to_string());
    }

    pub fn stacks(&self) -> impl Iterator<Item = &str> {
        self.record.stacks.iter().map(String::as_str)
    }

    pub fn files(&self) -> impl Iterator<Item = (&str, &FileEntry)> {
        self.record.files.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Writes the simple index, the checksum list and the record.
    pub fn commit(&self) -> Result<()> {
        let mut projects: BTreeMap<&str, Vec<(&str, &FileEntry)>> = BTreeMap::new();
        for (rel, f) in &self.record.files {
            if let (Some(p), Some(name)) = (&f.project, rel.strip_prefix("pypi/files/")) {
                projects.entry(p.as_str()).or_default().push((name, f));
            }
        }
        if !projects.is_empty() {
            let mut root = page_head("Simple index");
            for (project, files) in &projects {
                root.push_str(&format!("<a href=\"{project}/\">{project}</a><br>\n"));
                let mut page = page_head(&format!("Links for {project}"));
                for (name, f) in files {
                    page.push_str(&format!(
                        "<a href=\"../../files/{name}#sha256={}\">{name}</a><br>\n",
                        f.sha256
                    ));
                }
                page.push_str("</body>\n</html>\n");
                self.write_shared(
                    &format!("pypi/simple/{project}/index.html"),
                    page.as_bytes(),
                )?;
            }
            root.push_str("</body>\n</html>\n");
            self.write_shared("pypi/simple/index.html", root.as_bytes())?;
        }
        let sums: String = self
            .record
            .files
            .iter()
            .map(|(rel, f)| format!("{}  {rel}\n", f.sha256))
            .collect();
        self.write_shared(SUMS, sums.as_bytes())?;
        self.write_record()
    }

    fn write_record(&self) -> Result<()> {
        let mut text =
            serde_json::to_vec_pretty(&self.record).expect("maps of strings always encode");
        text.push(b'\n');
        self.write_shared(RECORD, &text)
    }

    /// Mirror files are read by whoever installs from the mirror (mode
    /// 0644, as the files linked in from the download cache), and written
    /// only inside the directory: never through a link left in it.
    fn write_shared(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        let path = crate::os::fs::within(&self.dir, Path::new(rel))?;
        crate::os::write_atomically(&path, bytes, Some(0o644))
    }
}

/// The PyPI project of a wheel, from its file name (`nvidia_cuda_runtime_cu12-…`).
pub fn wheel_project(file_name: &str) -> String {
    normalize(file_name.split('-').next().unwrap_or(file_name))
}

fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.0\">\n<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
}

/// A `file://` URL for an absolute path, the path as it is (every reader
/// of a `file://` base takes it so; a percent-encoded one works as well).
fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A wheel's file name goes into HTML and a path unescaped: only the
/// characters wheel names are made of.
fn check_wheel_name(name: &str) -> std::result::Result<(), String> {
    let ok = name.ends_with(".whl")
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a wheel file name",
            name.escape_debug()
        ))
    }
}

/// A plain relative path: no `..`, `.`, empty or absolute parts, no backslash.
fn check_relative(rel: &str) -> std::result::Result<(), String> {
    let ok = !rel.is_empty()
        && !rel.contains('\\')
        && !rel.contains('\0')
        && rel
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a plain relative path",
            rel.escape_debug()
        ))
    }
}

/// `NAME.tmp1234`, as `temporary` names them, or a `write_atomically` leftover.
fn is_temporary(name: &str) -> bool {
    name.starts_with(crate::os::TEMP_PREFIX)
        || name
            .rsplit_once(".tmp")
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

fn temporary(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    dest.with_file_name(name)
}

/// Where `a`'s URL lies under `base` (the server it was planned from), as a
/// path relative to it; `what` names the base in the error.
fn path_under<'a>(a: &'a Artifact, base: &str, what: &str) -> std::result::Result<&'a str, String> {
    let base = base.trim_end_matches('/');
    a.url
        .expose()
        .strip_prefix(base)
        .and_then(|p| p.strip_prefix('/'))
        .ok_or_else(|| format!("not under {what} {}", DisplaySafeUrl::new(base)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::sources::{ArchiveFormat, Layout};

    fn artifact(source: SourceKind, url: &str, file_name: &str) -> Artifact {
        Artifact {
            component: "cudart".into(),
            version: "12.4.127".into(),
            url: url.into(),
            sha256: Some("ab".repeat(32)),
            md5: None,
            size: Some(3),
            max_size: None,
            format: ArchiveFormat::Wheel,
            layout: Layout::Wheel,
            source,
            file_name: file_name.into(),
        }
    }

    #[test]
    fn artifacts_go_where_each_source_looks() {
        let w = "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl";
        let a = artifact(SourceKind::Pypi, "https://files.example/x/y.whl", w);
        assert_eq!(
            Mirror::place(&a, "", "").unwrap(),
            format!("pypi/files/{w}")
        );
        assert_eq!(wheel_project(w), "nvidia-cuda-runtime-cu12");
        let n = artifact(
            SourceKind::Nvidia,
            "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cudart/linux-x86_64/a.tar.xz",
            "a.tar.xz",
        );
        assert_eq!(
            Mirror::place(&n, "https://developer.download.nvidia.com", "").unwrap(),
            "nvidia/compute/cuda/redist/cuda_cudart/linux-x86_64/a.tar.xz"
        );
        // Not under the base, or escaping the mirror: refused.
        assert!(Mirror::place(&n, "https://other.example", "").is_err());
        let evil = artifact(SourceKind::Nvidia, "https://h/compute/../../x", "x");
        assert!(Mirror::place(&evil, "https://h", "").is_err());
        let evil = artifact(SourceKind::Pypi, "https://h/x", "<script>.whl");
        assert!(Mirror::place(&evil, "", "").is_err());
    }

    #[test]
    fn the_record_gives_the_sizes_of_the_files_its_indexes_reach() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let sha = "ab".repeat(32);
        let run = "nvidia/compute/cuda/11.0.2/local_installers/cuda_11.0.2_450.51.05_linux.run";
        std::fs::write(
            dir.join(RECORD),
            format!(
                "{{\"schema\": 1, \"files\": {{\"pypi/files/x-1-py3-none-any.whl\": {{\"sha256\": \"{sha}\", \"size\": 3, \"project\": \"x\"}}, \"{run}\": {{\"sha256\": \"{sha}\", \"size\": 5}}}}, \"stacks\": []}}"
            ),
        )
        .unwrap();
        let pypi = RecordedSizes::of_pypi_index(&dir.join("pypi/simple"))
            .unwrap()
            .unwrap();
        assert_eq!(
            pypi.size_of(&dir.join("pypi/files/x-1-py3-none-any.whl")),
            Some(3)
        );
        assert_eq!(pypi.size_of(&dir.join("pypi/files/other.whl")), None);
        assert_eq!(
            pypi.size_of(&dir.join("pypi/files/../files/x-1-py3-none-any.whl")),
            None
        );
        let nvidia = RecordedSizes::of_nvidia_mirror(&dir.join("nvidia"))
            .unwrap()
            .unwrap();
        assert_eq!(nvidia.size_of(&dir.join(run)), Some(5));
        // Another layout is no mirror of cudaenv's: no record is looked for.
        assert!(
            RecordedSizes::of_pypi_index(&dir.join("simple"))
                .unwrap()
                .is_none()
        );
        assert!(RecordedSizes::of_nvidia_mirror(dir).unwrap().is_none());
        // A record that is there but no regular file is an error naming it.
        std::fs::remove_file(dir.join(RECORD)).unwrap();
        std::fs::create_dir(dir.join(RECORD)).unwrap();
        let e = RecordedSizes::of_pypi_index(&dir.join("pypi/simple"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("mirror.json") && e.contains("directory"), "{e}");
    }

    #[test]
    fn a_directory_is_taken_only_when_new_empty_or_a_mirror() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        Mirror::open(&dir).unwrap();
        assert!(dir.join(RECORD).is_file());
        Mirror::open(&dir).unwrap();
        let other = tmp.path().join("home");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "mine").unwrap();
        assert!(matches!(
            Mirror::open(&other),
            Err(Error::Install(InstallError::NotAMirror { .. }))
        ));
        assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
        std::fs::write(dir.join(RECORD), "{\"schema\": 1, \"files\": {\"../x\": {\"sha256\": \"\", \"size\": 1}}, \"stacks\": []}").unwrap();
        assert!(matches!(
            Mirror::open(&dir),
            Err(Error::Install(InstallError::BadMirror { .. }))
        ));
        // A project name becomes a directory of the index: no `..` there either.
        let sha = "a".repeat(64);
        let record = format!(
            "{{\"schema\": 1, \"files\": {{\"pypi/files/x-1-py3-none-any.whl\": {{\"sha256\": \"{sha}\", \"size\": 1, \"project\": \"../../etc\"}}}}, \"stacks\": []}}"
        );
        std::fs::write(dir.join(RECORD), &record).unwrap();
        assert!(matches!(
            Mirror::open(&dir),
            Err(Error::Install(InstallError::BadMirror { .. }))
        ));
        std::fs::write(dir.join(RECORD), record.replace("../../etc", "x")).unwrap();
        Mirror::open(&dir).unwrap();
    }

    #[test]
    fn leftovers_of_a_dead_run_are_removed_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let m = Mirror::open(tmp.path()).unwrap();
        let files = tmp.path().join("pypi/files");
        std::fs::create_dir_all(&files).unwrap();
        for name in ["a.whl.tmp4242", "a.whl", "b.tmpx", "index.html.tmp7"] {
            std::fs::write(files.join(name), "x").unwrap();
        }
        assert_eq!(m.remove_leftovers().unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(&files)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.whl", "b.tmpx"]);
    }
}
