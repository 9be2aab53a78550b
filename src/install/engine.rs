//! The install engine: a `Plan` in, a committed version out.
//!
//! 1. Take the version's lock (a concurrent install of the same version
//!    waits, then finds it installed and does nothing) and clear leftovers of
//!    interrupted installs.
//! 2. Fetch every artifact concurrently into the download cache (verified
//!    while streaming, see `fetch`), and unpack each once into the package
//!    store `cache/pkgs/<sha256>/`, already mapped to the CUDA layout. That
//!    store is content-addressed and shared: two versions with the same
//!    cuBLAS share its bytes. A wheel that is downloaded is unpacked *while*
//!    it downloads (its central directory is fetched first, and every read
//!    waits for its bytes); the result is kept only if the download then
//!    completes and matches its hash, and is redone from the finished file
//!    if that unpack failed for any reason.
//! 3. Build the version in a staging directory by hard-linking the packages'
//!    files (copying only across file systems), then add what consumers of a
//!    CUDA_HOME expect: `lib -> lib64` and the development links
//!    (`libcudart.so -> libcudart.so.12`).
//! 4. Write the metadata and the completeness marker, and rename the staging
//!    directory into `versions/` (`Store::commit`). Until that rename nothing
//!    is visible; a crash leaves only staging leftovers that the next install
//!    removes.
//!
//! Nothing here knows which source made the plan, and nothing touches the
//! terminal: progress goes through `fetch::Progress`.

use crate::error::{Error, InstallError, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::context::failpoint::{self, Point};
use crate::install::fetch::{self, Cache, Fetcher};
use crate::install::slots::Slots;
use crate::install::sources::{ArchiveFormat, Artifact, Plan};
use crate::install::unpack::{self, Limits};
use crate::os::lock::LockFile;
use crate::store::{Component, Installed, Kind, Metadata, Store};

#[derive(Debug, Clone)]
pub struct Options {
    /// Reinstall even when the version exists.
    pub force: bool,
    /// Threads for unpacking (0: one per core).
    pub threads: usize,
    /// Keep the downloaded archives after the commit (`keep-downloads`);
    /// otherwise they are deleted, since the package store has them unpacked.
    pub keep_downloads: bool,
}

/// What `install` did.
#[derive(Debug)]
pub enum Outcome {
    Installed(Installed, Leftover),
    /// It was there already (and `force` was not given).
    AlreadyInstalled(Installed),
}

/// What an install left in the cache, for `install` to say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leftover {
    /// The unpacked packages the version was built from: its own files
    /// (hard links), so they cost no disk of their own.
    pub packages: u64,
    /// Downloaded archives deleted: after the commit, or as they were
    /// unpacked (a ranged download that was not kept lets go of its bytes).
    pub downloads_deleted: u64,
    /// Downloaded archives kept (`keep-downloads`).
    pub downloads_kept: u64,
}

/// Installs `plan` into `store`.
pub async fn install(
    store: &Store,
    fetcher: &Fetcher,
    plan: &Plan,
    opts: &Options,
) -> Result<Outcome> {
    // Before taking our own lock: leftovers are only removed when their
    // version's lock is free, and we would count as a holder.
    store.clean_staging()?;
    let lock = store
        .lock_async(&plan.name, &|n: &str| fetcher.progress().note(n))
        .await?;
    if let Some(existing) = store.get(&plan.name)?
        && !opts.force
    {
        return Ok(Outcome::AlreadyInstalled(existing));
    }
    let staging = store.stage(&plan.name)?;
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    } else {
        opts.threads
    };
    // The cores every archive unpacking at the same time shares.
    let cores = Slots::new(threads);

    // Fetch and unpack every artifact; each unpacks as soon as it arrives.
    let jobs = plan.artifacts.iter().map(|a| {
        let line = fetcher.progress().add(&label(a), a.size);
        let cores = &cores;
        async move {
            // Unpacked already (an earlier install, or another version with
            // the same package): nothing to fetch, whether its archive is
            // still in the download cache or not.
            let unpacked = fetcher.cache().pkgs().join(package_key(a));
            let from_store = || {
                fetcher.progress().status(line, "cached");
                fetcher.progress().finish(line);
                Ok::<(PathBuf, u64), Error>((unpacked.clone(), 0))
            };
            if unpacked.is_dir() {
                return from_store();
            }
            // A file already in the download cache was verified when it was
            // stored, but disks and people change files: it is hashed again
            // before it is unpacked, and fetched anew if it changed.
            let was_cached = fetcher.cache().file_for(a).is_file();
            if !was_cached && matches!(a.format, ArchiveFormat::Wheel | ArchiveFormat::Zip) {
                match fetch_and_unpack(fetcher, a, line, cores, opts.keep_downloads).await? {
                    Some(done) => {
                        fetcher.progress().finish(line);
                        return Ok(done);
                    }
                    // Another install unpacked it meanwhile.
                    None if unpacked.is_dir() => return from_store(),
                    None => {}
                }
            }
            let file = fetcher.fetch(a, line).await?;
            failpoint::hit(Point::AfterDownload);
            fetcher.progress().status(line, "unpacking");
            let pkg = match ensure_unpacked(fetcher, a, &file, cores, was_cached).await {
                Err(Error::Install(InstallError::HashMismatch { .. })) if was_cached => {
                    let file = fetcher.fetch(a, line).await?;
                    ensure_unpacked(fetcher, a, &file, cores, false).await?
                }
                r => r?,
            };
            fetcher.progress().finish(line);
            Ok::<(PathBuf, u64), Error>((pkg, 0))
        }
    });
    let (pkgs, let_go): (Vec<PathBuf>, Vec<u64>) = futures_util::future::try_join_all(jobs)
        .await?
        .into_iter()
        .unzip();

    // Assemble the tree from the packages.
    let root = staging.path().to_path_buf();
    let pkgs_for_tree = pkgs.clone();
    let known = tokio::task::spawn_blocking(move || -> Result<crate::store::files::Known> {
        let mut known = crate::store::files::Known::new();
        for p in &pkgs_for_tree {
            link_tree(p, &root)?;
            known.extend(crate::store::files::known_in(p));
        }
        finish_tree(&root)?;
        Ok(known)
    })
    .await
    .map_err(Error::task("assembling"))??;

    let meta = metadata(plan, staging.path());
    if opts.force && store.get(&plan.name)?.is_some() {
        store.remove(&plan.name)?;
    }
    let installed = staging.commit_with(&meta, &known)?;
    failpoint::hit(Point::AfterCommit);
    drop(lock);
    let mut left = leave_cache(fetcher.cache(), plan, &pkgs, opts.keep_downloads);
    left.downloads_deleted += let_go.iter().sum::<u64>();
    Ok(Outcome::Installed(installed, left))
}

/// After the commit: deletes the plan's downloaded archives unless they are
/// to be kept (each is unpacked in the package store, which is what a
/// reinstall uses), and measures what stays. A download is deleted only
/// once its package exists, so another install that still needs the file
/// finds the package instead; one that fails to delete stays, as a cache
/// file that `cache prune` frees.
fn leave_cache(cache: &Cache, plan: &Plan, pkgs: &[PathBuf], keep: bool) -> Leftover {
    let mut left = Leftover {
        packages: pkgs
            .iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|p| fetch::usage::usage(p).bytes)
            .sum(),
        ..Leftover::default()
    };
    let mut seen = BTreeSet::new();
    for a in &plan.artifacts {
        let file = cache.file_for(a);
        if !seen.insert(file.clone()) {
            continue;
        }
        let Ok(m) = std::fs::metadata(&file) else {
            continue;
        };
        if keep {
            left.downloads_kept += m.len();
        } else if cache.pkgs().join(package_key(a)).is_dir() && std::fs::remove_file(&file).is_ok()
        {
            left.downloads_deleted += m.len();
        } else {
            left.downloads_kept += m.len();
        }
    }
    left
}

fn label(a: &Artifact) -> String {
    format!("{} {}", a.component, a.version)
}

/// The package store's name for an unpacked artifact: its download's key,
/// plus, for a runfile, which of its directories were taken (one runfile
/// unpacked for `runtime` is not the same package as for `devel`).
fn package_key(a: &Artifact) -> String {
    match &a.layout {
        crate::install::sources::Layout::Runfile { members, optional }
        | crate::install::sources::Layout::WindowsInstaller { members, optional } => {
            let mut h = crate::os::hash::Hasher::new();
            for m in members {
                h.update(m.as_bytes());
                h.update(b"\0");
            }
            h.update(b"\x01");
            for m in optional {
                h.update(m.as_bytes());
                h.update(b"\0");
            }
            format!("{}-{}", Cache::key(a), &h.finish()[..16])
        }
        _ => Cache::key(a),
    }
}

/// Downloads a zip or wheel and unpacks it into the package store at the
/// same time; returns the package and the bytes of its download that were
/// let go of meanwhile (unless `keep`: see `Fetcher::fetch_following`).
/// `None` when the package turns out to be there already; the caller then
/// takes the ordinary path (which finds it).
async fn fetch_and_unpack(
    fetcher: &Fetcher,
    a: &Artifact,
    line: usize,
    cores: &Arc<Slots>,
    keep: bool,
) -> Result<Option<(PathBuf, u64)>> {
    let cache = fetcher.cache();
    let pkgs = cache.pkgs();
    let key = package_key(a);
    let dest = pkgs.join(&key);
    if dest.is_dir() {
        return Ok(None);
    }
    std::fs::create_dir_all(&pkgs).map_err(Error::io("cannot create", &pkgs))?;
    // Held from the first byte to the rename, so that no one else unpacks
    // this package meanwhile (or takes our directory for a leftover).
    let lock = LockFile::acquire_async(&pkgs.join(format!("{key}.lock")), &|n: &str| {
        fetcher.progress().note(n)
    })
    .await?;
    if dest.is_dir() {
        return Ok(None);
    }
    let tmp = package_tmp(&pkgs, &key)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let follower: fetch::Follower = Box::new(move |arriving| {
        let _ = tx.send(arriving);
    });
    let unpacking = {
        let (a, dir, cores) = (a.clone(), tmp.path().to_path_buf(), cores.clone());
        async move {
            // No download from the first byte (resumed, or copied from a
            // mirror directory): nothing to unpack early.
            let Ok(arriving) = rx.await else {
                return Ok(None);
            };
            tokio::task::spawn_blocking(move || {
                unpack::zip::unpack_arriving(
                    arriving,
                    &a.file_name,
                    a.layout.clone(),
                    &dir,
                    Limits::default(),
                    &cores,
                )
                .map(Some)
            })
            .await
            .map_err(Error::task("unpacking"))?
        }
    };
    let fetching = fetcher.fetch_following(a, line, Some(follower), keep);
    let (file, early) = tokio::join!(fetching, unpacking);
    // A failed download is the error, whatever the unpack saw meanwhile.
    let file = file?;
    failpoint::hit(Point::AfterDownload);
    // The download let go of the bytes the unpack had used (it is not kept):
    // it was verified, and is gone already.
    let let_go = !file.exists();
    let (tmp, summary) = match early {
        Ok(Some(summary)) => (tmp, summary),
        // The bytes the unpack read were the verified ones: what it found
        // is the answer.
        Err(e) if let_go => return Err(e),
        // The unpack could not run or failed: do it again from the verified
        // file, so that a real problem of the archive is reported as such.
        _ => {
            drop(tmp);
            fetcher.progress().status(line, "unpacking");
            let tmp = package_tmp(&pkgs, &key)?;
            let (a, file, dir) = (a.clone(), file.clone(), tmp.path().to_path_buf());
            let cores = cores.clone();
            let summary =
                tokio::task::spawn_blocking(move || unpack_artifact(&a, &file, &dir, &cores))
                    .await
                    .map_err(Error::task("unpacking"))??;
            (tmp, summary)
        }
    };
    store_package(tmp, &summary, &dest)?;
    drop(lock);
    let let_go = if let_go { a.size.unwrap_or(0) } else { 0 };
    Ok(Some((dest, let_go)))
}

/// Records a freshly unpacked package's file list, then moves it to its
/// place in the package store (a half-unpacked package is never there).
fn store_package(tmp: tempfile::TempDir, summary: &unpack::Summary, dest: &Path) -> Result<()> {
    record_package(tmp.path(), summary)?;
    let kept = tmp.keep();
    std::fs::rename(&kept, dest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        Error::io("cannot move into the package store", dest)(e)
    })
}

/// A fresh directory beside the package's final place, after removing the
/// leftovers of killed unpacks of it (the caller holds the package's lock,
/// so whoever made them is gone).
fn package_tmp(pkgs: &Path, key: &str) -> Result<tempfile::TempDir> {
    let prefix = format!(".tmp-{key}-");
    if let Ok(rd) = std::fs::read_dir(pkgs) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(pkgs)
        .map_err(Error::io("cannot create a directory in", pkgs))
}

/// Unpacks an artifact into `cache/pkgs/<key>/` unless it is there already.
///
/// With `verify`, the file's sha256 is checked first; on a mismatch the file
/// is removed from the cache and `HashMismatch` returned.
async fn ensure_unpacked(
    fetcher: &Fetcher,
    a: &Artifact,
    file: &Path,
    cores: &Arc<Slots>,
    verify: bool,
) -> Result<PathBuf> {
    let cache = fetcher.cache();
    let pkgs = cache.pkgs();
    let key = package_key(a);
    let dest = pkgs.join(&key);
    if dest.is_dir() {
        return Ok(dest);
    }
    std::fs::create_dir_all(&pkgs).map_err(Error::io("cannot create", &pkgs))?;
    let lock = LockFile::acquire_async(&pkgs.join(format!("{key}.lock")), &|n: &str| {
        fetcher.progress().note(n)
    })
    .await?;
    if dest.is_dir() {
        return Ok(dest);
    }
    let a = a.clone();
    let file = file.to_path_buf();
    let dest2 = dest.clone();
    let key = key.clone();
    let cores = cores.clone();
    tokio::task::spawn_blocking(move || -> Result<()> {
        // Unpack beside the final name, then rename: a half-unpacked package
        // is never mistaken for a whole one.
        let pinned = match (&a.sha256, &a.md5) {
            (Some(s), _) => Some(("sha256", s)),
            (None, Some(m)) => Some(("md5", m)),
            (None, None) => None,
        };
        if verify && let Some((algorithm, expected)) = pinned {
            let actual = match algorithm {
                "md5" => crate::os::hash::md5_file(&file)?,
                _ => crate::os::hash::sha256_file(&file)?,
            };
            if !actual.eq_ignore_ascii_case(expected) {
                let _ = std::fs::remove_file(&file);
                return Err(Error::Install(InstallError::HashMismatch {
                    algorithm,
                    url: file.display().to_string(),
                    expected: expected.clone(),
                    actual,
                }));
            }
        }
        let tmp = package_tmp(dest2.parent().expect("pkgs dir"), &key)?;
        let summary = unpack_artifact(&a, &file, tmp.path(), &cores)?;
        store_package(tmp, &summary, &dest2)
    })
    .await
    .map_err(Error::task("unpacking"))??;
    drop(lock);
    Ok(dest)
}

/// Unpacks one artifact by its format, each with its own unpacker (all of
/// them under the shared rules of `unpack::Extractor`).
pub fn unpack_artifact(
    a: &Artifact,
    file: &Path,
    dest: &Path,
    cores: &Arc<Slots>,
) -> Result<unpack::Summary> {
    match a.format {
        ArchiveFormat::Wheel | ArchiveFormat::Zip => unpack::zip::unpack(
            file,
            &a.file_name,
            a.layout.clone(),
            dest,
            Limits::default(),
            cores,
        ),
        ArchiveFormat::TarXz | ArchiveFormat::TarGz => unpack::tar::unpack_file(
            file,
            &a.file_name,
            a.format,
            a.layout.clone(),
            dest,
            Limits::default(),
        ),
        ArchiveFormat::Deb => unpack::deb::unpack_file(
            file,
            &a.file_name,
            a.layout.clone(),
            dest,
            Limits::default(),
        ),
        ArchiveFormat::Runfile => unpack::runfile::unpack(
            file,
            &a.file_name,
            a.layout.clone(),
            dest,
            Limits::default(),
        ),
        ArchiveFormat::WindowsInstaller => unpack::sevenz::unpack(
            file,
            &a.file_name,
            a.layout.clone(),
            dest,
            Limits::default(),
        ),
    }
}

/// Records a freshly unpacked package's own file list (versions built from
/// it take their CRC-32s from there instead of reading its bytes again),
/// taking the CRC-32s the unpacker already checked (zip members).
fn record_package(dir: &Path, summary: &unpack::Summary) -> Result<()> {
    let known = crate::store::files::known_from(&summary.checked);
    crate::store::files::write_with(dir, &known)
}

/// Recreates `src`'s tree under `dst`: directories made, files hard-linked
/// (copied when linking fails, e.g. across file systems), symlinks copied.
/// A path that exists already (the same header shipped by two wheels) keeps
/// the first copy.
pub fn link_tree(src: &Path, dst: &Path) -> Result<()> {
    link_dir(src, dst, true)
}

/// `link_tree` of one directory; at the top, the package's own `.cudaenv/`
/// (its file list) is not part of the tree.
fn link_dir(src: &Path, dst: &Path, top: bool) -> Result<()> {
    let rd = std::fs::read_dir(src).map_err(Error::io("cannot read", src))?;
    for entry in rd {
        let entry = entry.map_err(Error::io("cannot read", src))?;
        if top && entry.file_name() == crate::store::META_DIR {
            continue;
        }
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let ft = entry.file_type().map_err(Error::io("cannot read", &from))?;
        if ft.is_dir() {
            match std::fs::create_dir(&to) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && to.is_dir() => {}
                Err(e) => return Err(Error::io("cannot create", &to)(e)),
            }
            link_dir(&from, &to, false)?;
        } else if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(&from).map_err(Error::io("cannot read", &from))?;
            crate::os::symlink(&target, &to).map_err(Error::io("cannot create", &to))?;
        } else if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(Error::io("cannot copy to", &to))?;
        }
    }
    Ok(())
}

/// Adds the `lib` alias and the unversioned development links.
pub fn finish_tree(root: &Path) -> Result<()> {
    let lib64 = root.join("lib64");
    if lib64.is_dir() {
        let lib = root.join("lib");
        if std::fs::symlink_metadata(&lib).is_err() {
            crate::os::symlink(Path::new("lib64"), &lib)
                .map_err(Error::io("cannot create", &lib))?;
        }
        dev_links(&lib64)?;
    }
    Ok(())
}

/// For every `libX.so.N…` without a `libX.so`, links `libX.so` to the
/// shortest versioned name (the soname, e.g. `libcudart.so.12`).
fn dev_links(dir: &Path) -> Result<()> {
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(dir)
        .map_err(Error::io("cannot read", dir))?
        .flatten()
    {
        if let Some(n) = e.file_name().to_str() {
            names.insert(n.to_string());
        }
    }
    let mut best: std::collections::BTreeMap<String, String> = Default::default();
    for n in &names {
        if let Some(i) = n.find(".so.") {
            let base = format!("{}.so", &n[..i]);
            if names.contains(&base) {
                continue;
            }
            let e = best.entry(base).or_insert_with(|| n.clone());
            if n.len() < e.len() {
                *e = n.clone();
            }
        }
    }
    for (base, target) in best {
        let p = dir.join(&base);
        crate::os::symlink(Path::new(&target), &p).map_err(Error::io("cannot create", &p))?;
    }
    Ok(())
}

fn metadata(plan: &Plan, tree: &Path) -> Metadata {
    let mut m = Metadata::new(Kind::Installed, source_names(plan));
    m.cuda = Some(plan.cuda.clone());
    m.cudnn = plan.cudnn.clone();
    if tree.join("bin").is_dir() {
        m.bin_dirs.push("bin".into());
    }
    if !crate::os::DLLS_ON_PATH {
        m.lib_dirs.push("lib64".into());
    }
    m.home = Some(".".into());
    if plan.cudnn.is_some() {
        m.cudnn_home = Some(".".into());
    }
    m.profile = Some(plan.profile.name().to_string());
    m.components = plan
        .artifacts
        .iter()
        .map(|a| Component {
            name: a.component.clone(),
            version: a.version.clone(),
            source: a.source.name().to_string(),
            url: Some(a.url.without_credentials()),
            sha256: a.sha256.clone(),
        })
        .collect();
    // In one order whatever the plan's (a resolution's, or a lock's for
    // `--frozen`): the same stack has the same metadata however installed.
    m.components.sort_by(|a, b| a.name.cmp(&b.name));
    m
}

fn source_names(plan: &Plan) -> String {
    let mut s: Vec<&str> = plan.artifacts.iter().map(|a| a.source.name()).collect();
    s.sort();
    s.dedup();
    if s.is_empty() {
        "pypi".into()
    } else {
        s.join("+")
    }
}
