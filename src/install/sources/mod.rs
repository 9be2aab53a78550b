//! Sources of CUDA bits, and the plan they hand to the install engine.
//!
//! The sources (PyPI wheels, NVIDIA's redist manifests, NVIDIA's legacy
//! runfiles and cuDNN archives, Debian's packages) each implement one trait,
//! `resolve::Source`, and the resolver walks them per component to turn a
//! `StackSpec` + profile into a `Plan`: the exact artifacts to fetch, each
//! with its URL, expected sha256 and size, archive format and the layout to
//! map into the version's tree. `remote` opens them and is what commands
//! call. The engine (`install`) fetches, verifies, unpacks and commits a
//! plan without knowing which source produced it. Sources never touch the
//! store.

pub(crate) mod pypi;

use crate::spec::safe_url::DisplaySafeUrl;
pub use crate::spec::source::{Profile, SourceKind};
use crate::spec::{Libraries, Version, VersionName};

/// One path component, as sources name their files: no separators, no
/// `..`, no hidden or control characters (Debian's `~` and `%3a` are file
/// name characters). Every artifact a resolution
/// returns has such a name (`remote::Remote::plan`), and so has every file a
/// lock names: the name becomes part of a path in the download cache and in
/// a mirror.
pub fn is_plain_file_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '~' | '%'))
}

pub(crate) mod catalogue;
pub(crate) mod debian;
pub mod legacy;
pub(crate) mod listing;
pub(crate) mod measure;
pub mod nvidia;
pub(crate) mod remote;
pub(crate) mod resolve;

/// The platform an artifact is built for (the one platform type, in the OS layer).
pub use crate::os::platform::Platform;

/// How an artifact's bytes are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArchiveFormat {
    /// A Python wheel (zip).
    Wheel,
    TarXz,
    TarGz,
    Zip,
    /// NVIDIA's self-extracting `.run` installer (never executed: parsed).
    Runfile,
    /// A Debian binary package: an `ar` archive around `data.tar.{xz,zst,gz}`.
    Deb,
    /// NVIDIA's Windows local installer (`cuda_11.2.2_461.33_win10.exe`): a
    /// 7-Zip self-extracting archive, read as an archive, never executed.
    WindowsInstaller,
}

/// Where an archive's files go in the version's tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Layout {
    /// A wheel: `nvidia/<pkg>/{bin,lib,include,…}` (≤ 12) or `nvidia/cu13/…`
    /// (13) and `nvidia/cudnn/…`, merged into `bin/`, `lib64/`, `include/`.
    Wheel,
    /// A redist archive: strip the single top directory, merge the rest.
    StripTop,
    /// A legacy cuDNN archive: `cuda/include` → `include`, `cuda/lib64` → `lib64`.
    LegacyCudnn,
    /// A runfile payload: take these directories (relative to the payload
    /// root), each merged into the tree as a toolkit component
    /// (`targets/<triple>/{lib,include}` → `lib64/`, `include/`). Every
    /// `members` entry must exist in the payload; `optional` ones are taken
    /// when present (directory names changed between releases).
    Runfile {
        members: Vec<String>,
        optional: Vec<String>,
    },
    /// A runfile whose payload holds a second runfile,
    /// `run_files/<installer>….run` (CUDA 10.0), whose own payload is the
    /// toolkit tree itself (`bin/`, `lib64/`, `include/`, `nvvm/`, …): the
    /// inner payload is taken whole, as 10.1/10.2's `builds/cuda-toolkit` is.
    NestedRunfile { installer: String },
    /// NVIDIA's Windows local installer: one directory per component at the
    /// top of its 7-Zip archive (`cuda_cudart`, `libcublas`, …), each holding
    /// one or more packages (`libcublas/cublas`, `libcublas/cublas_dev`)
    /// whose `bin/`, `include/`, `lib/x64/` merge into the tree. Every
    /// `members` directory must be in the archive; `optional` ones are
    /// taken when present.
    WindowsInstaller {
        members: Vec<String>,
        optional: Vec<String>,
    },
    /// A Debian package's data: `usr/lib/<triplet>/…` → `lib64/…`,
    /// `usr/include/…` → `include/…`, `usr/bin/…` → `bin/…`; the rest
    /// (`usr/share/doc`, lintian overrides) is skipped.
    Debian { triplet: String },
}

/// One file to fetch and unpack.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Artifact {
    /// Component name as cudaenv knows it (`cudart`, `cublas`, `cudnn`, …).
    pub component: String,
    /// The component's own version (`12.4.127`).
    pub version: String,
    /// Credentials, when the index or mirror has them, included (only
    /// `expose` gives them; see `safe_url`).
    pub url: DisplaySafeUrl,
    /// Lower-case hex. `None` when no sha256 is pinned: then the file is
    /// verified by `md5`, or the user accepted unverified downloads.
    pub sha256: Option<String>,
    /// NVIDIA's published md5 (lower-case hex), for the files it is the only
    /// pinned checksum of (its Windows local installers); checked when
    /// `sha256` is `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md5: Option<String>,
    pub size: Option<u64>,
    /// The most bytes it can have where its exact size is not announced
    /// (a metapackage wheel: a few KB); the download stops there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
    pub format: ArchiveFormat,
    pub layout: Layout,
    pub source: SourceKind,
    /// The file name to cache it under (the URL's last segment).
    pub file_name: String,
}

/// Everything needed to install one version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Plan {
    pub name: VersionName,
    pub cuda: Version,
    pub cudnn: Option<Version>,
    /// The libraries beside the toolkit it carries (NCCL, TensorRT, …), at
    /// full versions.
    #[serde(skip_serializing_if = "Libraries::is_empty", default)]
    pub libs: Libraries,
    pub profile: Profile,
    pub artifacts: Vec<Artifact>,
    /// Things the user should know (e.g. "PyPI has no nvcc for 12.x").
    pub notes: Vec<String>,
    /// Things worth a line that are not a concern (no cuDNN asked for).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub info: Vec<String>,
}
