//! The store: `$CUDAENV_ROOT` on disk.
//!
//! ```text
//! $CUDAENV_ROOT/
//!   version                 global version file (one spec)
//!   versions/<name>/        one CUDA stack per directory
//!     .cudaenv/meta.toml    what it is (CUDA, cuDNN, components, origin)
//!     .cudaenv/files.json   every file's size and CRC-32, every link's target
//!     .cudaenv/complete     marker, written last: only then does it count
//!     .cudaenv/linked       marker of a linked version (found without parsing)
//!     bin/ lib64/ include/  the tree (installed) — absent for linked versions
//!   versions/.staging/      installs in progress (never listed)
//!   versions/.locks/        one lock file per version name
//!   shims/                  one shim per executable of any version
//!   cache/                  downloads, content-addressed
//! ```
//!
//! A version becomes visible in one `rename` of a finished staging directory
//! whose marker is already written, so a reader never sees half an install and a
//! crash leaves at most an orphan under `.staging/` (removed by the next install).
//! Linked versions hold only metadata pointing at a tree outside the root;
//! removing one removes that metadata, never the linked tree.
//!
//! The store knows nothing of sources: installers hand it finished trees.
//!
//! A store may also see a **system root** (`with_system`): a second tree of
//! the same layout that an administrator installed into (`/opt/cudaenv`),
//! read-only to everyone else. Its versions are found next to the user's
//! (`get`, `list`, `linked`); everything the store writes — staging, locks,
//! removals, shims, the global version — goes to the user's root only. A name
//! in both roots is the user's (the system one is `shadowed`). Before a system
//! version is used, `check_safe` makes sure that no one but the owners of the
//! root and of the version can change what it puts on PATH and
//! LD_LIBRARY_PATH: otherwise anyone could plant a library there for every
//! other user's processes.

pub(crate) mod error;
pub(crate) mod toolkit;

pub(crate) mod files;
mod meta;
pub(crate) mod trust;

pub use meta::{Component, Kind, Metadata};

use crate::error::{Error, Result, StoreError};
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::os::lock::{LockFile, Waiting};
use crate::spec::{Libraries, Library, StackSpec, Version, VersionName};

pub const META_DIR: &str = ".cudaenv";
pub const META_FILE: &str = "meta.toml";
pub const COMPLETE_MARKER: &str = "complete";
/// Present in linked versions only, so that finding them (every activation
/// does, see `activate`) costs a `stat` per version, not a parse.
pub const LINKED_MARKER: &str = "linked";

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    /// The administrator's read-only root, if one is configured.
    system: Option<PathBuf>,
}

/// Which root a version lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// `$CUDAENV_ROOT`, the user's own.
    User,
    /// The shared system root.
    System,
}

/// A complete version found in the store.
#[derive(Debug, Clone)]
pub struct Installed {
    pub name: VersionName,
    /// `versions/<name>`.
    pub dir: PathBuf,
    pub meta: Metadata,
}

impl Installed {
    /// The top of the tree: the version directory itself, or the linked path.
    pub fn prefix(&self) -> PathBuf {
        match &self.meta.prefix {
            Some(p) => p.clone(),
            None => self.dir.clone(),
        }
    }

    fn under_prefix(&self, rel: &[PathBuf]) -> Vec<PathBuf> {
        let prefix = self.prefix();
        rel.iter()
            .map(|d| {
                if d.is_absolute() {
                    return d.clone();
                }
                // `.` (or empty) is the prefix itself: no trailing `/.` in PATH or CUDA_HOME.
                let mut p = prefix.clone();
                for c in d.components() {
                    match c {
                        std::path::Component::CurDir => {}
                        other => p.push(other),
                    }
                }
                p
            })
            .collect()
    }

    /// Directories to put first on PATH.
    pub fn bin_dirs(&self) -> Vec<PathBuf> {
        self.under_prefix(&self.meta.bin_dirs)
    }

    /// Directories to put first on LD_LIBRARY_PATH.
    pub fn lib_dirs(&self) -> Vec<PathBuf> {
        self.under_prefix(&self.meta.lib_dirs)
    }

    /// What CUDA_HOME should point at, when the tree has a toolkit layout.
    pub fn cuda_home(&self) -> Option<PathBuf> {
        self.meta
            .home
            .as_ref()
            .map(|h| self.under_prefix(std::slice::from_ref(h)).remove(0))
    }

    /// What CUDNN_PATH should point at, when a cuDNN is present.
    pub fn cudnn_home(&self) -> Option<PathBuf> {
        self.meta
            .cudnn_home
            .as_ref()
            .map(|h| self.under_prefix(std::slice::from_ref(h)).remove(0))
    }

    pub fn cuda(&self) -> Option<&Version> {
        self.meta.cuda.as_ref()
    }

    pub fn cudnn(&self) -> Option<&Version> {
        self.meta.cudnn.as_ref()
    }

    /// The libraries beside the toolkit it carries (NCCL, TensorRT, …), by
    /// the versions its components record (`10.6.0.post1` counts as 10.6.0).
    pub fn libs(&self) -> Libraries {
        self.meta
            .components
            .iter()
            .filter_map(|c| {
                let lib = Library::from_component(&c.name)?;
                let nums: Vec<u32> = c
                    .version
                    .split('.')
                    .map_while(|p| p.parse().ok())
                    .take(4)
                    .collect();
                (!nums.is_empty()).then(|| (lib, Version::from_parts(&nums)))
            })
            .collect()
    }

    /// Does this version satisfy a stack spec, by its recorded versions?
    pub fn satisfies(&self, spec: &StackSpec) -> bool {
        self.cuda()
            .is_some_and(|c| spec.matches_libs(c, self.cudnn(), &self.libs()))
    }
}

impl Store {
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store {
            root: root.into(),
            system: None,
        }
    }

    /// A store that also sees the versions of a system root. A system root
    /// equal to the user's root is no second root.
    pub fn with_system(root: impl Into<PathBuf>, system: Option<PathBuf>) -> Store {
        let root = root.into();
        let system = system.filter(|s| *s != root);
        Store { root, system }
    }

    /// The store as configured: the user's root and the system root
    /// (`CUDAENV_SYSTEM_ROOT`, else `system-root` in config.toml), if any.
    pub fn configured(ctx: &crate::context::Context) -> Result<Store> {
        Ok(Store::with_system(
            ctx.root(),
            crate::context::config::system_root(ctx)?,
        ))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The system root, if one is configured.
    pub fn system_root(&self) -> Option<&Path> {
        self.system.as_deref()
    }

    pub fn versions_dir(&self) -> PathBuf {
        self.root.join("versions")
    }

    /// Every `versions/` directory whose entries belong to cudaenv: the
    /// user's, then the system root's.
    pub fn all_versions_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.versions_dir()];
        dirs.extend(self.system.iter().map(|s| s.join("versions")));
        dirs
    }

    /// Where `v` lives.
    pub fn location(&self, v: &Installed) -> Location {
        match &self.system {
            Some(s) if v.dir.starts_with(s.join("versions")) => Location::System,
            _ => Location::User,
        }
    }

    pub fn shims_dir(&self) -> PathBuf {
        self.root.join("shims")
    }

    pub fn global_version_file(&self) -> PathBuf {
        self.root.join("version")
    }

    pub fn version_dir(&self, name: &VersionName) -> PathBuf {
        self.versions_dir().join(name.as_str())
    }

    fn staging_dir(&self) -> PathBuf {
        self.versions_dir().join(".staging")
    }

    fn locks_dir(&self) -> PathBuf {
        self.versions_dir().join(".locks")
    }

    /// A complete version by exact name, or `None`: the user's, else the
    /// system root's.
    pub fn get(&self, name: &VersionName) -> Result<Option<Installed>> {
        if let Some(v) = Self::get_in(&self.versions_dir(), name)? {
            return Ok(Some(v));
        }
        match &self.system {
            Some(s) => Self::get_in(&s.join("versions"), name),
            None => Ok(None),
        }
    }

    /// A complete version by exact name in one `versions/` directory.
    fn get_in(versions: &Path, name: &VersionName) -> Result<Option<Installed>> {
        let dir = versions.join(name.as_str());
        let marker = dir.join(META_DIR).join(COMPLETE_MARKER);
        if !marker.is_file() {
            return Ok(None);
        }
        let meta = Metadata::read(&dir.join(META_DIR).join(META_FILE))?;
        Ok(Some(Installed {
            name: name.clone(),
            dir,
            meta,
        }))
    }

    /// Every complete version, sorted by CUDA then cuDNN version, then name.
    ///
    /// Entries that are not valid names, lack the marker or have unreadable
    /// metadata are skipped: they are not versions (a crash leftover, or
    /// something a user put there by hand).
    pub fn list(&self) -> Result<Vec<Installed>> {
        let mut out = self.complete_where(|_| true)?;
        out.sort_by(|a, b| (a.cuda(), a.cudnn(), &a.name).cmp(&(b.cuda(), b.cudnn(), &b.name)));
        Ok(out)
    }

    /// Every complete linked version, in no particular order. Reads only the
    /// metadata of versions that carry the linked marker.
    pub fn linked(&self) -> Result<Vec<Installed>> {
        let mut out =
            self.complete_where(|dir| dir.join(META_DIR).join(LINKED_MARKER).is_file())?;
        out.retain(|v| v.meta.prefix.is_some());
        Ok(out)
    }

    /// The system root's versions hidden by a user's version of the same name.
    pub fn shadowed(&self) -> Result<Vec<Installed>> {
        let Some(system) = &self.system else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        Self::complete_in(&system.join("versions"), &|_| true, &mut out)?;
        out.retain(|v| {
            self.versions_dir()
                .join(v.name.as_str())
                .join(META_DIR)
                .join(COMPLETE_MARKER)
                .is_file()
        });
        Ok(out)
    }

    /// The complete versions whose directory `keep` accepts (asked before
    /// their metadata is read), unsorted, the user's hiding the system root's
    /// of the same name; entries that are not versions are skipped as `list`
    /// says.
    fn complete_where(&self, keep: impl Fn(&Path) -> bool) -> Result<Vec<Installed>> {
        let mut out = Vec::new();
        Self::complete_in(&self.versions_dir(), &keep, &mut out)?;
        if let Some(system) = &self.system {
            let mut theirs = Vec::new();
            Self::complete_in(&system.join("versions"), &keep, &mut theirs)?;
            theirs.retain(|v| !out.iter().any(|o| o.name == v.name));
            out.extend(theirs);
        }
        Ok(out)
    }

    fn complete_in(
        dir: &Path,
        keep: &dyn Fn(&Path) -> bool,
        out: &mut Vec<Installed>,
    ) -> Result<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("cannot list versions in", dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(Error::io("cannot list versions in", dir))?;
            let Some(name) = entry
                .file_name()
                .to_str()
                .and_then(|n| VersionName::parse(n).ok())
            else {
                continue;
            };
            if !keep(&entry.path()) {
                continue;
            }
            if let Ok(Some(v)) = Self::get_in(dir, &name) {
                out.push(v);
            }
        }
        Ok(())
    }

    /// Starts building a new version. Nothing is visible until `commit`.
    ///
    /// The caller must hold the version's lock (`lock`) until the commit, or
    /// `clean_staging` in another process may take the staging directory for
    /// an orphan.
    pub fn stage(&self, name: &VersionName) -> Result<Staging> {
        let staging = self.staging_dir();
        std::fs::create_dir_all(&staging).map_err(Error::io("cannot create", &staging))?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{name}.."))
            .tempdir_in(&staging)
            .map_err(Error::io("cannot create a staging directory in", &staging))?;
        Ok(Staging {
            tmp,
            target: self.version_dir(name),
            name: name.clone(),
        })
    }

    /// Takes the exclusive per-version lock, waiting for another holder.
    ///
    /// Uses the OS's advisory lock on an open file, so a holder killed with
    /// SIGKILL releases it immediately (the kernel closes the descriptor).
    pub fn lock(&self, name: &VersionName, waiting: &dyn Waiting) -> Result<VersionLock> {
        Ok(VersionLock {
            _lock: LockFile::acquire(&self.lock_path(name)?, waiting)?,
        })
    }

    /// `lock` for async code.
    pub async fn lock_async(
        &self,
        name: &VersionName,
        waiting: &dyn Waiting,
    ) -> Result<VersionLock> {
        Ok(VersionLock {
            _lock: LockFile::acquire_async(&self.lock_path(name)?, waiting).await?,
        })
    }

    /// Takes the per-version lock if nobody holds it; `None` when someone does.
    pub fn try_lock(&self, name: &VersionName) -> Result<Option<VersionLock>> {
        Ok(LockFile::try_acquire(&self.lock_path(name)?)?.map(|l| VersionLock { _lock: l }))
    }

    fn lock_path(&self, name: &VersionName) -> Result<PathBuf> {
        let dir = self.locks_dir();
        std::fs::create_dir_all(&dir).map_err(Error::io("cannot create", &dir))?;
        Ok(dir.join(format!("{name}.lock")))
    }

    /// Removes a version (for a linked one: only cudaenv's metadata).
    ///
    /// The directory is first renamed out of `versions/` so the version
    /// disappears atomically; the bytes are deleted after. Symlinks inside are
    /// removed as links, never followed.
    pub fn remove(&self, name: &VersionName) -> Result<()> {
        let dir = self.version_dir(name);
        let staging = self.staging_dir();
        std::fs::create_dir_all(&staging).map_err(Error::io("cannot create", &staging))?;
        let trash = staging.join(format!("{name}..removing-{}", std::process::id()));
        std::fs::rename(&dir, &trash).map_err(Error::io("cannot remove", &dir))?;
        remove_tree(&trash).map_err(Error::io("cannot delete", &trash))?;
        Ok(())
    }

    /// Deletes leftovers of interrupted installs and removals.
    ///
    /// Staging directories are named `<name>..<random>` (a name never contains
    /// `..`); one is only deleted when that version's lock can be taken without
    /// waiting, i.e. no live process is still working on it.
    pub fn clean_staging(&self) -> Result<()> {
        let staging = self.staging_dir();
        let Ok(entries) = std::fs::read_dir(&staging) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(name) = file_name
                .to_str()
                .and_then(|n| n.split_once(".."))
                .and_then(|(n, _)| VersionName::parse(n).ok())
            else {
                continue;
            };
            if let Some(_lock) = self.try_lock(&name)? {
                let _ = remove_tree(&entry.path());
            }
        }
        Ok(())
    }
}

/// Held for as long as a version is being installed or removed.
#[derive(Debug)]
pub struct VersionLock {
    _lock: LockFile,
}

/// A version under construction in `versions/.staging/`.
///
/// Dropping it without `commit` deletes everything it holds.
#[derive(Debug)]
pub struct Staging {
    tmp: tempfile::TempDir,
    target: PathBuf,
    name: VersionName,
}

impl Staging {
    /// Where the tree goes (`bin/`, `lib64/`, …).
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    pub fn name(&self) -> &VersionName {
        &self.name
    }

    /// Writes the metadata, then the marker, syncs, and renames the tree into
    /// place. Fails if a version of that name already exists.
    pub fn commit(self, meta: &Metadata) -> Result<Installed> {
        self.commit_with(meta, &files::Known::new())
    }

    /// `commit`, with the CRC-32s of files hard-linked from packages whose
    /// lists are known (so that a reinstall reads none of their bytes).
    pub fn commit_with(self, meta: &Metadata, known: &files::Known) -> Result<Installed> {
        let meta_dir = self.path().join(META_DIR);
        std::fs::create_dir_all(&meta_dir).map_err(Error::io("cannot create", &meta_dir))?;
        meta.write(&meta_dir.join(META_FILE))?;
        if meta.prefix.is_some() {
            let linked = meta_dir.join(LINKED_MARKER);
            File::create(&linked).map_err(Error::io("cannot write", &linked))?;
        }
        files::write_with(self.path(), known)?;
        // The staging directory is private (0700); a version is readable by
        // all, as installed software is (a system root serves every user).
        crate::os::set_mode(self.path(), 0o755).map_err(Error::io(
            "cannot set the mode of",
            self.path().to_path_buf(),
        ))?;
        let marker = meta_dir.join(COMPLETE_MARKER);
        let f = File::create(&marker).map_err(Error::io("cannot write", &marker))?;
        f.sync_all().map_err(Error::io("cannot sync", &marker))?;
        crate::context::failpoint::hit(crate::context::failpoint::Point::BeforeCommit);
        if self.target.symlink_metadata().is_ok() {
            return Err(Error::Store(StoreError::AlreadyExists {
                name: self.name.to_string(),
            }));
        }
        let staged = self.tmp.keep();
        // rename(2) would silently replace an empty directory that appeared
        // meanwhile; RENAME_NOREPLACE makes "already exists" an error instead.
        if let Err(e) = rename_noreplace(&staged, &self.target) {
            let _ = std::fs::remove_dir_all(&staged);
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                return Err(Error::Store(StoreError::AlreadyExists {
                    name: self.name.to_string(),
                }));
            }
            return Err(Error::io(
                "cannot move the new version into place at",
                &self.target,
            )(e));
        }
        if let Some(parent) = self.target.parent()
            && let Ok(d) = File::open(parent)
        {
            let _ = d.sync_all();
        }
        Ok(Installed {
            name: self.name,
            dir: self.target,
            meta: meta.clone(),
        })
    }
}

/// Deletes a tree cudaenv owns. Archives can carry read-only directories
/// (mode 0555), which `remove_dir_all` cannot empty as a normal user: on
/// "permission denied" the owner's write and search bits are added to every
/// directory (symlinks are never followed) and the removal is retried.
fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            make_dirs_writable(path);
            std::fs::remove_dir_all(path)
        }
        other => other,
    }
}

fn make_dirs_writable(dir: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let mode = crate::os::mode(&meta).unwrap_or(0);
    if mode & 0o700 != 0o700 {
        let _ = crate::os::set_mode(dir, mode | 0o700);
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            make_dirs_writable(&e.path());
        }
    }
}

/// `rename` that fails with `AlreadyExists` instead of replacing the target.
/// Falls back to a checked plain rename where the file system lacks
/// `RENAME_NOREPLACE` (the caller holds the version lock, so the check is not racy
/// against other cudaenv processes).
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    crate::os::rename_noreplace(from, to)
}
