//! Filling a mirror with what some plans need: which files (every artifact
//! once, and the `cuda-toolkit` metapackage of each release taken from
//! PyPI), each fetched into the download cache, hashed again and linked or
//! copied in, and the NVIDIA manifests `cudaenv update` stored here.
//!
//! What the mirror already holds with the announced hash is not fetched
//! again; a cached file that no longer matches its announced sha256 is.

use crate::error::{Error, InstallError, Result};
use std::path::{Path, PathBuf};

use futures_util::StreamExt;

use super::{FileEntry, LOCK, Mirror, wheel_project};
use crate::install::fetch::Fetcher;
use crate::install::sources::catalogue;
use crate::install::sources::nvidia::{self, Product};
use crate::install::sources::remote::Remote;
use crate::install::sources::{Artifact, Plan, SourceKind};
use crate::os::lock::{LockFile, Waiting};

/// The files mirroring `plans` takes, each once (several stacks share
/// files), by their place in the mirror.
pub async fn wanted(
    remote: &Remote,
    plans: &[Plan],
    nvidia_base: &str,
    debian_base: &str,
) -> Result<Vec<(String, Artifact)>> {
    // The `cuda-toolkit` metapackage of each release taken from PyPI, so that
    // a machine reading the mirror knows the release from its own catalogue
    // (a release newer than cudaenv's embedded list is unknown without it).
    let mut metapackages = Vec::new();
    if remote.pypi.catalogue().is_some() {
        for p in plans {
            if p.artifacts.iter().any(|a| a.source == SourceKind::Pypi)
                && let Some(a) = catalogue::metapackage(remote.pypi.index(), &p.cuda).await?
            {
                metapackages.push(a);
            }
        }
    }
    let mut wanted: Vec<(String, Artifact)> = Vec::new();
    for a in plans.iter().flat_map(|p| &p.artifacts).chain(&metapackages) {
        let rel = Mirror::place(a, nvidia_base, debian_base)?;
        if !wanted.iter().any(|(r, _)| *r == rel) {
            wanted.push((rel, a.clone()));
        }
    }
    Ok(wanted)
}

impl Mirror {
    /// The mirror in `dir`, under its lock (held while the guard lives),
    /// with what an interrupted run left removed.
    pub async fn open_locked(dir: &Path, waiting: &dyn Waiting) -> Result<(Mirror, LockFile)> {
        // Opened once before the lock (a directory that is not a mirror gets no
        // lock file) and again under it (another run may have added to it).
        Mirror::open(dir)?;
        let lock = LockFile::acquire_async(&dir.join(LOCK), waiting).await?;
        let mirror = Mirror::open(dir)?;
        mirror.remove_leftovers()?;
        Ok((mirror, lock))
    }

    /// Fetches the `wanted` files the mirror does not hold yet, `jobs` at a
    /// time, and adds them: how many were added.
    pub async fn fetch_into(
        &mut self,
        fetcher: &Fetcher,
        mut wanted: Vec<(String, Artifact)>,
        jobs: usize,
    ) -> Result<usize> {
        // What the mirror already holds with the announced hash is not fetched again.
        wanted.retain(|(rel, a)| !a.sha256.as_ref().is_some_and(|h| self.has(rel, h)));
        let mut added = 0usize;
        let mut downloads =
            futures_util::stream::iter(wanted.into_iter().map(|(rel, a)| async move {
                let line = fetcher.progress().add(&rel, a.size);
                let r = fetch_verified(fetcher, &a, line).await;
                // A line says what was done with its file: nothing, when it failed.
                if r.is_ok() {
                    fetcher.progress().finish(line);
                }
                r.map(|(file, sha256, size)| (rel, a, file, sha256, size))
            }))
            .buffer_unordered(jobs.max(1));
        while let Some(r) = downloads.next().await {
            let (rel, a, file, sha256, size) = r?;
            if self.has(&rel, &sha256) {
                continue;
            }
            let project = (a.source == SourceKind::Pypi).then(|| wheel_project(&a.file_name));
            self.add(
                &rel,
                &file,
                FileEntry {
                    sha256,
                    size,
                    project,
                },
            )?;
            added += 1;
        }
        Ok(added)
    }

    /// Adds the NVIDIA manifests `cudaenv update` stored in the download
    /// cache `cache`: how many were added, and whether there were any.
    pub fn add_manifests(&mut self, cache: &Path) -> Result<(usize, bool)> {
        let manifests = cached_manifests(cache);
        let mut added = 0usize;
        for (rel, path) in &manifests {
            let sha256 = crate::os::hash::sha256_file(path)?;
            if !self.has(rel, &sha256) {
                let size = std::fs::metadata(path)
                    .map_err(Error::io("cannot read", path))?
                    .len();
                let entry = FileEntry {
                    sha256,
                    size,
                    project: None,
                };
                self.add(rel, path, entry)?;
                added += 1;
            }
        }
        Ok((added, !manifests.is_empty()))
    }
}

/// The NVIDIA manifests `cudaenv update` stored here (valid ones only),
/// with their place in the mirror: a machine without network reads them with
/// `cudaenv update` from the mirror and then knows the same releases.
fn cached_manifests(cache: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for product in Product::ALL {
        let dir = nvidia::cache_dir(cache, product);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(String::from) else {
                continue;
            };
            let valid = name.starts_with("redistrib_")
                && name.ends_with(".json")
                && crate::os::fs::read_bounded_text(&e.path(), crate::os::fs::SMALL)
                    .is_ok_and(|t| nvidia::parse_manifest(&name, &t, product).is_ok());
            if valid {
                out.push((format!("nvidia/{}/{name}", product.redist_dir()), e.path()));
            }
        }
    }
    out.sort();
    out
}

/// The artifact's file in the download cache, hashed: a cached copy that no
/// longer matches its announced sha256 is fetched again.
async fn fetch_verified(
    fetcher: &Fetcher,
    a: &Artifact,
    line: usize,
) -> Result<(PathBuf, String, u64)> {
    let mut refetched = false;
    loop {
        let file = fetcher.fetch(a, line).await?;
        fetcher.progress().status(line, "hashing");
        let sha256 = tokio::task::block_in_place(|| crate::os::hash::sha256_file(&file))?;
        match &a.sha256 {
            Some(want) if !want.eq_ignore_ascii_case(&sha256) => {
                if refetched {
                    return Err(Error::Install(InstallError::HashMismatch {
                        algorithm: "sha256",
                        url: a.url.to_string(),
                        expected: want.clone(),
                        actual: sha256,
                    }));
                }
                let _ = std::fs::remove_file(&file);
                refetched = true;
            }
            _ => {
                let size = std::fs::metadata(&file)
                    .map_err(Error::io("cannot read", &file))?
                    .len();
                return Ok((file, sha256, size));
            }
        }
    }
}
