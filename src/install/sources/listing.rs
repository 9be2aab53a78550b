//! What the sources can install, as `cudaenv ls-remote` lists it: the CUDA
//! releases with the sources that serve each, the cuDNN builds of NVIDIA's
//! redist and the legacy runfiles, PyPI's cuDNN wheels per CUDA major, and
//! the builds of the libraries beside the toolkit that a SPEC or `--with`
//! names (PyPI's per CUDA major; cuSPARSELt's and cuTENSOR's on NVIDIA's
//! redist server, listed like its cuDNN builds).
//!
//! The listing is built in steps because they need different things: the
//! first comes from stored data alone (the embedded registries, the stored
//! manifests and catalogue), the later ones read the index. Without the
//! index PyPI's cuDNN wheels are left out rather than failing the listing,
//! and the caller is told (`Unreachable`) so that it can say what is missing.

use super::SourceKind;
use super::remote::{Remote, RemoteRelease};
use super::resolve::{self, SourceChoice};
use crate::error::{Error, ExitCode, Result};
use crate::registry;
use crate::spec::{Library, StackSpec, Version};

/// What to list.
pub struct Query<'a> {
    /// Only releases matching this spec; without one, every release, and no
    /// library builds.
    pub stack: Option<&'a StackSpec>,
    /// The libraries whose builds to list beside those the spec names.
    pub with: &'a [Library],
    /// `--offline`: stored index pages only.
    pub offline: bool,
    /// The source asked for (`--source`).
    pub choice: SourceChoice,
}

/// The listing.
pub struct Listing {
    /// The CUDA releases, oldest first.
    pub releases: Vec<RemoteRelease>,
    /// The cuDNN builds of the NVIDIA and legacy sources, with the CUDA
    /// labels each is for.
    pub builtin_cudnn: Vec<(Version, SourceKind, Vec<String>)>,
    /// PyPI's cuDNN versions per CUDA major listed.
    pub cudnn: Vec<(u32, Vec<String>)>,
    /// PyPI's builds of the libraries asked for, per CUDA major.
    pub libraries: Vec<(Library, u32, Vec<String>)>,
    /// NVIDIA's redist builds of the libraries asked for, with the CUDA
    /// labels each is for.
    pub library_builds: Vec<(Library, Version, SourceKind, Vec<String>)>,
}

/// PyPI's index could not be read for a CUDA major's cuDNN wheels: the
/// listing has no PyPI cuDNN from that major on.
pub struct Unreachable {
    pub major: u32,
    pub error: Error,
}

impl Listing {
    /// The releases and the NVIDIA and legacy cuDNN builds (with a SPEC,
    /// only those for its releases): what stored data says.
    pub fn stored(remote: &Remote, q: &Query) -> Result<Listing> {
        let stack = q.stack;
        let releases: Vec<RemoteRelease> = remote
            .releases()?
            .into_iter()
            .filter(|r| stack.is_none_or(|s| r.version.matches(&s.cuda)))
            .collect();
        let builtin_cudnn = remote
            .builtin_cudnn()
            .into_iter()
            .filter(|(v, _, _)| {
                stack
                    .and_then(|s| s.cudnn.as_ref())
                    .is_none_or(|c| v.matches(c))
            })
            // With a SPEC, only builds for the matching CUDA releases.
            .filter(|(_, _, labels)| {
                stack.is_none()
                    || releases
                        .iter()
                        .any(|r| labels.iter().any(|l| resolve::label_covers(l, &r.version)))
            })
            .collect();
        Ok(Listing {
            releases,
            builtin_cudnn,
            cudnn: Vec::new(),
            libraries: Vec::new(),
            library_builds: Vec::new(),
        })
    }

    /// PyPI's cuDNN wheels, per CUDA major listed: what a default
    /// `install X+cudnn9` takes, so they are listed with or without a SPEC.
    /// An unreachable index stops here and says so, unless `--source pypi`
    /// asked for it.
    pub async fn add_pypi_cudnn(
        &mut self,
        remote: &Remote,
        q: &Query<'_>,
    ) -> Result<Option<Unreachable>> {
        if !remote.allows(SourceKind::Pypi) {
            return Ok(None);
        }
        let mut majors: Vec<u32> = self
            .releases
            .iter()
            .filter(|r| r.sources.contains(&SourceKind::Pypi))
            .map(|r| r.version.major())
            .collect();
        majors.dedup();
        for m in majors {
            match remote.pypi.cudnn_versions(m).await {
                Ok(v) => self.cudnn.push((m, v)),
                // Without a SPEC nobody asked for this major's cuDNN: an
                // index without the project, or `--offline` without its
                // page, leaves it out rather than failing the listing.
                Err(e)
                    if q.stack.is_none() && (q.offline || e.exit_code() != ExitCode::Network) =>
                {
                    continue;
                }
                // Without the index (air-gapped, offline laptop) the releases and the
                // NVIDIA/legacy cuDNN builds above still come from stored data: list
                // those and say what is missing rather than failing the whole listing.
                // An explicit `--source pypi` asked for the index, so that still fails.
                Err(e) if e.exit_code() == ExitCode::Network && q.choice != SourceChoice::Pypi => {
                    return Ok(Some(Unreachable { major: m, error: e }));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// The libraries beside the toolkit that the SPEC names (those of its
    /// version only) or `q.with` asks for: NVIDIA's redist builds for the
    /// CUDA majors listed, and PyPI's builds per CUDA major.
    pub async fn add_libraries(&mut self, remote: &Remote, q: &Query<'_>) -> Result<()> {
        let Some(s) = q.stack else {
            return Ok(());
        };
        let wanted: Vec<(Library, Option<&Version>)> = Library::ALL
            .into_iter()
            .filter_map(|l| match s.libs.get(l) {
                Some(v) => Some((l, Some(v))),
                None => q.with.contains(&l).then_some((l, None)),
            })
            .collect();
        let mut majors: Vec<u32> = self.releases.iter().map(|r| r.version.major()).collect();
        majors.dedup();
        for &(lib, prefix) in &wanted {
            for (v, labels) in remote.nvidia_library_builds(lib) {
                let labels: Vec<String> = labels
                    .into_iter()
                    .filter(|l| majors.iter().any(|m| *l == format!("cuda{m}")))
                    .collect();
                if !labels.is_empty() && prefix.is_none_or(|p| v.matches(p)) {
                    self.library_builds
                        .push((lib, v, SourceKind::Nvidia, labels));
                }
            }
        }
        for (lib, prefix) in wanted {
            for &m in &majors {
                if registry::pypi().library_project(lib, m).is_none() {
                    continue;
                }
                let all = remote.pypi.library_versions(lib, m).await?;
                let v = all
                    .into_iter()
                    .filter(|v| {
                        prefix.is_none_or(|p| v.parse::<Version>().is_ok_and(|v| v.matches(p)))
                    })
                    .collect();
                self.libraries.push((lib, m, v));
            }
        }
        Ok(())
    }
}
