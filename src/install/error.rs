//! What stops an install, a lock or a mirror: sources, downloads, archives, manifests, locks.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;
use crate::spec::source::SourceKind;

/// The errors of installing, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{archive}{}: {reason}", entry.as_ref().map(|e| format!(", member `{e}`")).unwrap_or_default())]
    BadArchive {
        archive: String,
        entry: Option<String>,
        reason: String,
    },

    #[error("{algorithm} mismatch for {url}: expected {expected}, got {actual}")]
    HashMismatch {
        /// `sha256`, or `md5` for the files only NVIDIA's md5 pins.
        algorithm: &'static str,
        url: String,
        expected: String,
        actual: String,
    },

    /// A `file://` artifact that is a FIFO, a device or a directory.
    #[error("refusing {url}: it is {what}, not a regular file")]
    NotRegularArtifact { url: String, what: &'static str },

    /// The download cache's file system has no room for a download: before
    /// it starts (`needed` is its announced size, or one write block when
    /// none is announced), or while it streams (`needed` is what it had
    /// plus the next block; `announced: false`).
    #[error("not enough free space for {file} in {}: it needs {}{}, {} are free", dir.display(), if *announced { "" } else { "more than " }, crate::spec::size::human_bytes(*needed), crate::spec::size::human_bytes(*available))]
    NoSpace {
        dir: PathBuf,
        file: String,
        needed: u64,
        available: u64,
        /// Whether `needed` is the file's announced size (else a lower bound).
        announced: bool,
    },

    /// `from`: the source the file was asked of, when known (for the hint).
    #[error("size mismatch for {url}: {reason}")]
    SizeMismatch {
        url: String,
        reason: String,
        from: Option<SourceKind>,
    },

    /// `from`: the source the URL belongs to, when known (for the hint).
    #[error("download failed: {url}: {reason}")]
    Network {
        url: String,
        reason: String,
        from: Option<SourceKind>,
    },

    #[error("--offline: {file} is not in the download cache")]
    Offline { file: String, url: String },

    #[error("{what} is not available{}", source_name.as_ref().map(|s| format!(" from {s}")).unwrap_or_default())]
    NotAvailable {
        what: String,
        source_name: Option<String>,
        /// What the source knows to do instead, in the user's language.
        hint: Option<Msg>,
    },

    #[error("invalid manifest {what}: {reason}")]
    BadManifest { what: String, reason: String },

    #[error("{url} has no pinned sha256, so its download cannot be verified")]
    Unverified { url: String },

    #[error("invalid runfile {}: {reason}", path.display())]
    BadRunfile { path: PathBuf, reason: String },

    #[error("cannot reach {url}: {reason}")]
    ManifestsUnreachable { url: String, reason: String },

    /// `mirror` into a directory that holds files but no mirror record.
    #[error("{} is not empty and is not a cudaenv mirror (it has no {record})", dir.display())]
    NotAMirror { dir: PathBuf, record: &'static str },

    /// A mirror's record (`mirror.json`) that cannot be read or is not one.
    #[error("invalid mirror record {}: {reason}", path.display())]
    BadMirror { path: PathBuf, reason: String },
    /// A `cuda.lock` that cannot be used as it is (untrusted input).
    #[error("invalid lock file {}: {reason}", path.display())]
    InvalidLock { path: PathBuf, reason: String },

    /// A lock's artifact whose URL is on no configured source (`--frozen`).
    #[error("{} names {url}, which is not on a configured source ({})", path.display(), allowed.join(", "))]
    LockForeignUrl {
        path: PathBuf,
        url: String,
        allowed: Vec<String>,
    },

    /// A lock that disagrees with what it is checked against.
    #[error("{} does not match {against}: {}", path.display(), differences.join("; "))]
    LockMismatch {
        path: PathBuf,
        against: String,
        differences: Vec<String>,
    },

    /// An installed version of the locked name whose files are not the
    /// locked ones (`install --locked` compares them, not just the name).
    #[error("the installed {version} is not what {} locks: {}", path.display(), differences.join("; "))]
    InstalledDiffersFromLock {
        path: PathBuf,
        version: String,
        differences: Vec<String>,
    },

    /// A lock made for other platforms only.
    #[error("{} has no artifacts for {platform} (it is locked for {})", path.display(), locked.join(", "))]
    LockPlatform {
        path: PathBuf,
        platform: String,
        locked: Vec<String>,
    },

    /// `--locked` / `--frozen` / `export` without a lock to use.
    #[error("no {file} {where_}")]
    NoLock { file: String, where_: String },

    /// `lock` without a SPEC where no `.cuda-version` applies.
    #[error("no .cuda-version in {} or its parents", dir.display())]
    NoVersionFile { dir: PathBuf },

    /// A server accepted the request but sent nothing, or less than the
    /// minimum rate, for the HTTP timeout (after the retries, or because an
    /// earlier request of this command already gave up on a stall).
    #[error("download stalled: {url}: {reason}")]
    NetworkStalled {
        url: String,
        reason: String,
        /// The timeout's default, for the hint.
        default_secs: u64,
    },

    #[error("cannot start the async runtime")]
    AsyncRuntime {
        #[source]
        source: std::io::Error,
    },

    #[error("cannot set up the HTTP client: {reason}")]
    HttpClient { reason: String },

    /// A stored index page in the download cache that cannot be read back.
    #[error("corrupt index cache {}: {reason}", path.display())]
    CorruptCache { path: PathBuf, reason: String },
}

impl Diagnostic for InstallError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::BadManifest { .. } | Self::Unverified { .. } | Self::BadRunfile { .. } => {
                ExitCode::Integrity
            }
            Self::NoSpace { .. } => ExitCode::NoSpace,
            Self::BadArchive { .. }
            | Self::HashMismatch { .. }
            | Self::SizeMismatch { .. }
            | Self::NotRegularArtifact { .. } => ExitCode::Integrity,
            Self::Network { .. } | Self::Offline { .. } => ExitCode::Network,
            Self::NotAvailable { .. } => ExitCode::NotAvailable,
            Self::ManifestsUnreachable { .. } => ExitCode::Network,
            Self::NotAMirror { .. } => ExitCode::Usage,
            Self::BadMirror { .. } => ExitCode::Integrity,
            Self::InvalidLock { .. } | Self::LockForeignUrl { .. } => ExitCode::InvalidLock,
            Self::LockMismatch { .. }
            | Self::LockPlatform { .. }
            | Self::InstalledDiffersFromLock { .. } => ExitCode::LockMismatch,
            Self::NoLock { .. } | Self::NoVersionFile { .. } => ExitCode::Usage,
            Self::NetworkStalled { .. } => ExitCode::Network,
            Self::AsyncRuntime { .. } | Self::HttpClient { .. } | Self::CorruptCache { .. } => {
                ExitCode::Failure
            }
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::NoSpace { .. } => msg!("hint-no-space"),
            Self::NotRegularArtifact { .. } => msg!("hint-not-regular-artifact"),
            Self::InstalledDiffersFromLock { .. } => msg!("hint-installed-differs-from-lock"),
            Self::BadArchive { .. } => msg!("hint-bad-archive"),
            Self::HashMismatch {
                algorithm: "md5", ..
            } => msg!("hint-md5-mismatch"),
            Self::HashMismatch { .. } => msg!("hint-hash-mismatch"),
            Self::SizeMismatch { from, .. } => {
                let h = match from {
                    Some(SourceKind::Nvidia | SourceKind::Legacy) => {
                        msg!("hint-size-mismatch-manifest")
                    }
                    _ => msg!("hint-size-mismatch-index"),
                };
                match from {
                    Some(k) => msg!("hint-check-where", hint => h, place = where_configured(*k)),
                    None => h,
                }
            }
            Self::Network {
                url,
                reason,
                from: Some(SourceKind::Nvidia | SourceKind::Legacy),
            } => msg!(
                "hint-run-again-to-resume",
                advice => network_advice(url, reason),
                others => other_sources(url)
            ),
            Self::Network {
                from: Some(k @ (SourceKind::Pypi | SourceKind::Debian)),
                ..
            } => match k {
                SourceKind::Debian => {
                    msg!("hint-network-debian-mirror", place = where_configured(*k))
                }
                _ => msg!("hint-network-package-index", place = where_configured(*k)),
            },
            Self::Network { from: None, .. } => msg!("hint-network-any"),
            Self::Offline { url, .. } => msg!("hint-offline", url = url),
            Self::NotAvailable { hint, .. } => return hint.clone(),
            Self::Unverified { .. } => msg!("hint-unverified"),
            Self::BadRunfile { .. } | Self::BadManifest { .. } => msg!("hint-bad-nvidia-file"),
            Self::InvalidLock { path, .. } => msg!("hint-invalid-lock", path = path.display()),
            Self::LockForeignUrl { .. } => msg!("hint-lock-foreign-url"),
            Self::LockMismatch { .. } => msg!("hint-lock-mismatch"),
            Self::LockPlatform {
                platform, locked, ..
            } => msg!(
                "hint-lock-platform",
                platforms = format!("{},{platform}", locked.join(","))
            ),
            Self::NoLock { .. } => msg!("hint-no-lock"),
            Self::NoVersionFile { .. } => msg!("hint-no-version-file"),
            Self::ManifestsUnreachable { url, reason } => {
                msg!("hint-manifests-unreachable", advice => network_advice(url, reason))
            }
            Self::NotAMirror { .. } => msg!("hint-not-a-mirror"),
            Self::BadMirror { .. } => msg!("hint-bad-mirror"),
            Self::NetworkStalled { default_secs, .. } => msg!(
                "hint-network-stalled",
                variable = crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
                default = default_secs
            ),
            Self::AsyncRuntime { .. } | Self::HttpClient { .. } => msg!("hint-resources"),
            Self::CorruptCache { path, .. } => msg!("hint-corrupt-cache", path = path.display()),
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::BadArchive { .. }
            | Self::HashMismatch { .. }
            | Self::SizeMismatch { .. }
            | Self::NotRegularArtifact { .. }
            | Self::NoSpace { .. }
            | Self::Network { .. }
            | Self::NetworkStalled { .. }
            | Self::Offline { .. }
            | Self::NotAvailable { .. }
            | Self::BadManifest { .. }
            | Self::Unverified { .. }
            | Self::BadRunfile { .. }
            | Self::ManifestsUnreachable { .. }
            | Self::NotAMirror { .. }
            | Self::BadMirror { .. }
            | Self::InvalidLock { .. }
            | Self::LockForeignUrl { .. }
            | Self::LockMismatch { .. }
            | Self::InstalledDiffersFromLock { .. }
            | Self::LockPlatform { .. }
            | Self::NoLock { .. }
            | Self::NoVersionFile { .. }
            | Self::AsyncRuntime { .. }
            | Self::HttpClient { .. }
            | Self::CorruptCache { .. } => "failure",
        }
    }
}

impl InstallError {
    /// Says which source a network or size failure came from, when the code
    /// that failed (a shared retry loop) did not know it.
    pub fn from_source(self, kind: SourceKind) -> InstallError {
        match self {
            InstallError::Network {
                url,
                reason,
                from: None,
            } => InstallError::Network {
                url,
                reason,
                from: Some(kind),
            },
            InstallError::SizeMismatch {
                url,
                reason,
                from: None,
            } => InstallError::SizeMismatch {
                url,
                reason,
                from: Some(kind),
            },
            other => other,
        }
    }
}

/// Where the user configures the server of a source, for hints.
fn where_configured(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Pypi => "CUDAENV_PYPI_INDEX, PIP_INDEX_URL",
        SourceKind::Nvidia | SourceKind::Legacy => "CUDAENV_NVIDIA_MIRROR",
        SourceKind::Debian => "CUDAENV_DEBIAN_MIRROR",
    }
}

/// What to check when `url` could not be fetched: a host name that did not
/// resolve is said as such (reqwest's message alone hides it).
fn network_advice(url: &str, reason: &str) -> Msg {
    let host = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', ':', '?']).next().unwrap_or(rest))
        .unwrap_or(url);
    if reason.contains("dns error") || reason.contains("failed to lookup address") {
        msg!("hint-network-dns", host = host)
    } else {
        msg!("hint-network-nvidia")
    }
}

/// For a download from NVIDIA's redist server that failed: which other
/// source serves the same thing, so that a machine that cannot reach NVIDIA
/// (a firewall, a region) knows its way round. The developer tools of a
/// 12.x devel profile have none among cudaenv's sources (PyPI's 12.x nvcc
/// wheels are ptxas and NVVM only; the Debian source has the runtime
/// libraries): PyPI's from CUDA 13, or Debian's own toolkit package.
fn other_sources(url: &str) -> Msg {
    let none = Msg::verbatim("");
    // `…/redist/<component>/<platform>/<component>-<platform>-<version>-archive.tar.xz`
    let mut parts = url.rsplit('/');
    let (Some(file), Some(_platform), Some(component)) = (parts.next(), parts.next(), parts.next())
    else {
        return none;
    };
    let Some(version) = file
        .strip_suffix("-archive.tar.xz")
        .and_then(|f| f.rsplit('-').next())
    else {
        return none;
    };
    let major = version.split('.').next().unwrap_or("");
    let tool = matches!(
        component,
        "cuda_nvcc" | "cuda_cuobjdump" | "cuda_nvdisasm" | "cuda_nvprune" | "cuda_cuxxfilt"
    );
    if tool && major == "12" {
        msg!(
            "hint-other-sources-tool",
            version = version,
            tool = component.trim_start_matches("cuda_")
        )
    } else if !tool && ["11", "12", "13"].contains(&major) {
        msg!("hint-other-sources-libraries")
    } else {
        none
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_nvidia_names_the_sources_that_would_serve_it() {
        let nvcc = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz";
        let s = other_sources(nvcc).en();
        assert!(s.starts_with(". Without NVIDIA's server"), "{s}");
        assert!(s.contains("`cudaenv install 13 --profile devel`"), "{s}");
        assert!(s.contains("nvidia-cuda-toolkit"), "{s}");
        let zh = other_sources(nvcc).render(crate::i18n::Lang::ZhCn);
        assert!(zh.contains("`cudaenv install 13 --profile devel`"), "{zh}");
        assert!(!zh.contains("Without"), "{zh}");
        let lib = "https://developer.download.nvidia.com/compute/cuda/redist/libcublas/linux-x86_64/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz";
        assert!(other_sources(lib).en().contains("`--source debian`"));
        assert_eq!(other_sources("https://example.org/x.run"), "");
    }

    /// Defect: hints guessed the source from `/compute/` in the URL, so a
    /// PyPI mirror under such a path was sent to CUDAENV_NVIDIA_MIRROR. The
    /// hint follows the source the error carries.
    #[test]
    fn a_hint_names_the_source_the_error_carries_not_a_url_guess() {
        let url = "https://mirror.example/compute/pypi/simple/nvidia-cuda-runtime/";
        let hint = |from| {
            InstallError::Network {
                url: url.into(),
                reason: "server answered 503".into(),
                from,
            }
            .hint()
            .unwrap()
        };
        let pypi = hint(Some(SourceKind::Pypi));
        assert!(pypi.contains("CUDAENV_PYPI_INDEX"), "{pypi}");
        assert!(!pypi.contains("NVIDIA"), "{pypi}");
        let nvidia = hint(Some(SourceKind::Nvidia));
        assert!(nvidia.contains("CUDAENV_NVIDIA_MIRROR"), "{nvidia}");
        assert!(!nvidia.contains("CUDAENV_PYPI_INDEX"), "{nvidia}");
        let debian = hint(Some(SourceKind::Debian));
        assert!(debian.contains("CUDAENV_DEBIAN_MIRROR"), "{debian}");
        let size = InstallError::SizeMismatch {
            url: "https://h/pkgs/libcudart.deb".into(),
            reason: "got 1 bytes".into(),
            from: Some(SourceKind::Debian),
        }
        .hint()
        .unwrap();
        assert!(size.contains("CUDAENV_DEBIAN_MIRROR"), "{size}");
        // A failure that no source was named for is filled in by its caller.
        let e = InstallError::Network {
            url: url.into(),
            reason: "x".into(),
            from: None,
        }
        .from_source(SourceKind::Pypi);
        assert!(matches!(
            e,
            InstallError::Network {
                from: Some(SourceKind::Pypi),
                ..
            }
        ));
    }
}
