//! NVIDIA's redist source: the JSON manifests under
//! `https://developer.download.nvidia.com/compute/{cuda,cudnn,cusparselt,cutensor}/redist/`.
//!
//! A manifest (`redistrib_X.Y.Z.json`) lists, per component (`cuda_cudart`,
//! `libcublas`, `cudnn`, …), a version and one archive per platform: a
//! `relative_path` under the redist directory, its `sha256` and its `size`
//! (a string). cuDNN manifests come in two shapes: the current one nests the
//! archives one level deeper, per CUDA major (`"cuda12": {…}`, listed in
//! `cuda_variant`); the older per-build one has a flat archive whose file
//! name says the CUDA major (`…_cuda12-archive.tar.xz`). Both parse into the
//! same `Release` model, as does the embedded registry
//! (`registry/nvidia-redist.toml`, generated from the same manifests), so
//! manifests fetched later by `cudaenv update` are used exactly like the
//! embedded ones. cuSPARSELt's and cuTENSOR's manifests have cuDNN's current
//! shape (one `libcusparse_lt` / `libcutensor` entry, archives per CUDA
//! major), so their builds are looked up the same way (`library_builds`).
//!
//! Manifests are untrusted input: a `relative_path` must be a plain relative
//! path (no `..`, no absolute path, no URL, no backslash), a hash must be 64
//! hex digits and a size a decimal number within bounds. The archive's own
//! bytes are then checked by the engine against that sha256 and size.
//!
//! Profiles are resolved per release from what its manifest contains, so
//! component renames (12.0 added `libnvjitlink`; 13.0 split out `cuda_crt`,
//! `libnvvm`, …) need no code change.

use crate::error::{Error, InstallError, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;

use super::resolve::{Served, Source};
use super::{ArchiveFormat, Artifact, Layout, Platform, Profile, SourceKind};
use crate::spec::{Library, Version};

pub(crate) mod update;

/// NVIDIA's download host; a mirror replaces exactly this prefix.
pub const DEFAULT_BASE: &str = "https://developer.download.nvidia.com";

const EMBEDDED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/registry/nvidia-redist.toml"
));

/// Largest archive size a manifest may claim (the biggest real one is ~3 GB).
const MAX_ARCHIVE_SIZE: u64 = 64 << 30;

/// Manifest keys that are not part of a toolkit: drivers, fabric manager, IDE
/// plug-ins, documentation, the forward-compat driver libraries (which would
/// shadow the real driver). Never installed. Same list as the generator's.
const EXCLUDED: &[&str] = &[
    "collectx_bringup",
    "cuda_compat",
    "cuda_demo_suite",
    "cuda_documentation",
    "cuda_nsight",
    "cuda_nvvp",
    "driver_assistant",
    "fabricmanager",
    "imex",
    "libnvidia_nscq",
    "libnvsdm",
    "mft",
    "mft_autocomplete",
    "mft_oem",
    "nsight_compute",
    "nsight_systems",
    "nsight_vse",
    "nvidia_driver",
    "nvidia_fs",
    "nvlsm",
    "visual_studio_integration",
    "libnvvm_samples",
    "cuda_sandbox_dev",
    "cudnn_samples",
];

/// Which manifest family a release belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Product {
    Cuda,
    Cudnn,
    Cusparselt,
    Cutensor,
}

impl Product {
    pub const ALL: [Product; 4] = [
        Product::Cuda,
        Product::Cudnn,
        Product::Cusparselt,
        Product::Cutensor,
    ];

    /// The redist directory under the base URL.
    pub fn redist_dir(self) -> &'static str {
        match self {
            Product::Cuda => "compute/cuda/redist",
            Product::Cudnn => "compute/cudnn/redist",
            Product::Cusparselt => "compute/cusparselt/redist",
            Product::Cutensor => "compute/cutensor/redist",
        }
    }

    /// Its directory name (the download cache's, a mirror's).
    pub fn dir_name(self) -> &'static str {
        match self {
            Product::Cuda => "cuda",
            Product::Cudnn => "cudnn",
            Product::Cusparselt => "cusparselt",
            Product::Cutensor => "cutensor",
        }
    }

    /// As NVIDIA writes it.
    pub fn title(self) -> &'static str {
        match self {
            Product::Cuda => "CUDA",
            Product::Cudnn => "cuDNN",
            Product::Cusparselt => "cuSPARSELt",
            Product::Cutensor => "cuTENSOR",
        }
    }

    /// The manifest key of the one component a library's manifest carries.
    fn build_key(self) -> Option<&'static str> {
        match self {
            Product::Cuda => None,
            Product::Cudnn => Some("cudnn"),
            Product::Cusparselt => Some("libcusparse_lt"),
            Product::Cutensor => Some("libcutensor"),
        }
    }

    /// The product that publishes a library beside the toolkit, if NVIDIA's
    /// redist server carries it (NCCL and TensorRT it does not).
    pub fn of_library(lib: Library) -> Option<Product> {
        match lib {
            Library::Cusparselt => Some(Product::Cusparselt),
            Library::Cutensor => Some(Product::Cutensor),
            Library::Nccl | Library::Tensorrt => None,
        }
    }
}

/// A path relative to a redist directory, known to be harmless.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RelPath(String);

impl RelPath {
    pub fn parse(s: &str) -> std::result::Result<RelPath, String> {
        if s.is_empty() {
            return Err("the path is empty".into());
        }
        if s.contains("://") || s.starts_with("//") {
            return Err(format!("`{s}` is a URL, not a relative path"));
        }
        if s.starts_with('/') || s.contains('\\') || s.contains(':') {
            return Err(format!("`{s}` is not a relative path"));
        }
        if s.chars()
            .any(|c| c.is_control() || c == '?' || c == '#' || c == '%')
        {
            return Err(format!(
                "`{}` has characters a path may not have",
                s.escape_debug()
            ));
        }
        for seg in s.split('/') {
            if seg.is_empty() || seg == "." || seg == ".." {
                return Err(format!("`{s}` has a `{seg}` segment"));
            }
        }
        Ok(RelPath(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment: the archive's file name.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        RelPath::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// A lower-case hex sha256.
pub fn parse_sha256(s: &str) -> std::result::Result<String, String> {
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(format!(
            "`{}` is not a sha256 (64 hex digits)",
            s.escape_debug()
        ))
    }
}

fn de_sha256<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    parse_sha256(&String::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn check_size(n: u64) -> std::result::Result<u64, String> {
    if n == 0 || n > MAX_ARCHIVE_SIZE {
        Err(format!("size {n} is out of bounds"))
    } else {
        Ok(n)
    }
}

/// One archive of one component for one platform.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Archive {
    pub platform: String,
    /// cuDNN, cuSPARSELt, cuTENSOR: the CUDA major it was built for.
    #[serde(default)]
    pub cuda_variant: Option<u32>,
    pub relative_path: RelPath,
    #[serde(deserialize_with = "de_sha256")]
    pub sha256: String,
    pub size: u64,
}

/// One component of a release (`cuda_cudart` 12.4.127).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Component {
    /// The manifest's key (`cuda_cudart`, `libcublas`, `cudnn`).
    pub key: String,
    pub version: String,
    #[serde(rename = "archive", default)]
    pub archives: Vec<Archive>,
}

impl Component {
    /// cudaenv's name for it: the key without `cuda_` / `lib` (`cudart`, `cublas`).
    pub fn name(&self) -> &str {
        component_name(&self.key)
    }
}

pub fn component_name(key: &str) -> &str {
    key.strip_prefix("cuda_")
        .or_else(|| key.strip_prefix("lib"))
        .unwrap_or(key)
}

/// One manifest: a CUDA release, or a cuDNN, cuSPARSELt or cuTENSOR release.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Release {
    pub product: Product,
    /// `12.4.1` (CUDA) or `9.1.0` / `8.9.7.29` (cuDNN).
    pub label: String,
    /// The manifest's file name (`redistrib_12.4.1.json`).
    pub manifest: String,
    /// sha256 of the manifest file as published, when known.
    #[serde(default)]
    pub manifest_sha256: Option<String>,
    #[serde(default)]
    pub date: Option<String>,
    #[serde(rename = "component", default)]
    pub components: Vec<Component>,
}

impl Release {
    pub fn version(&self) -> Option<Version> {
        Version::parse_parts(&self.label, 4).ok()
    }

    pub fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name() == name)
    }
}

/// Parses a manifest as NVIDIA publishes it. `file_name` supplies the label
/// when the manifest has no `release_label` (CUDA manifests before 12.2).
pub fn parse_manifest(
    file_name: &str,
    text: &str,
    product: Product,
) -> std::result::Result<Release, String> {
    let root: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = root
        .as_object()
        .ok_or("the manifest is not a JSON object")?;
    let from_name = file_name
        .strip_prefix("redistrib_")
        .and_then(|s| s.strip_suffix(".json"));
    let label = obj
        .get("release_label")
        .and_then(|v| v.as_str())
        .or(from_name)
        .ok_or("the manifest has no release_label")?
        .to_string();
    Version::parse_parts(&label, 4).map_err(|e| format!("release label `{label}`: {e}"))?;
    let release_product = obj
        .get("release_product")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let mut components = Vec::new();
    for (key, val) in obj {
        let Some(c) = val.as_object() else { continue };
        if EXCLUDED.contains(&key.as_str()) {
            continue;
        }
        let version = c
            .get("version")
            .and_then(|v| v.as_str())
            .ok_or_else(|| format!("component `{key}` has no version"))?
            .to_string();
        let mut archives = Vec::new();
        for platform in Platform::ALL.iter().map(|p| p.manifest_key()) {
            let entry = c.get(platform).or_else(|| {
                // 12.8+ lists architecture-independent archives under `linux-all`.
                platform
                    .starts_with("linux-")
                    .then(|| c.get("linux-all"))
                    .flatten()
            });
            let Some(entry) = entry.and_then(|e| e.as_object()) else {
                continue;
            };
            if entry.contains_key("relative_path") {
                let a = parse_archive(key, platform, None, entry)?;
                let variant = variant_from_path(a.relative_path.as_str())
                    .or_else(|| variant_from_product(release_product));
                archives.push(Archive {
                    cuda_variant: variant,
                    ..a
                });
            } else {
                for (var, e) in entry {
                    let Some(major) = var.strip_prefix("cuda").and_then(|m| m.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    let e = e
                        .as_object()
                        .ok_or_else(|| format!("`{key}`.`{platform}`.`{var}` is not an object"))?;
                    archives.push(parse_archive(key, platform, Some(major), e)?);
                }
            }
        }
        if !archives.is_empty() {
            components.push(Component {
                key: key.clone(),
                version,
                archives,
            });
        }
    }
    Ok(Release {
        product,
        label,
        manifest: file_name.to_string(),
        manifest_sha256: None,
        date: obj
            .get("release_date")
            .and_then(|v| v.as_str())
            .map(String::from),
        components,
    })
}

fn parse_archive(
    key: &str,
    platform: &str,
    variant: Option<u32>,
    e: &serde_json::Map<String, serde_json::Value>,
) -> std::result::Result<Archive, String> {
    let at = |what: &str| format!("`{key}` ({platform}): {what}");
    let path = e
        .get("relative_path")
        .and_then(|v| v.as_str())
        .ok_or_else(|| at("no relative_path"))?;
    let relative_path = RelPath::parse(path).map_err(|r| at(&format!("relative_path: {r}")))?;
    let sha = e
        .get("sha256")
        .and_then(|v| v.as_str())
        .ok_or_else(|| at("no sha256"))?;
    let sha256 = parse_sha256(sha).map_err(|r| at(&r))?;
    // NVIDIA writes the size as a string; accept a number too, nothing else.
    let size = match e.get("size") {
        Some(serde_json::Value::String(s))
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) =>
        {
            s.parse::<u64>()
                .map_err(|_| at(&format!("size `{s}` is too large")))?
        }
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| at(&format!("size {n} is not a byte count")))?,
        Some(other) => return Err(at(&format!("size {other} is not a byte count"))),
        None => return Err(at("no size")),
    };
    let size = check_size(size).map_err(|r| at(&r))?;
    Ok(Archive {
        platform: platform.to_string(),
        cuda_variant: variant,
        relative_path,
        sha256,
        size,
    })
}

fn variant_from_path(path: &str) -> Option<u32> {
    let i = path.rfind("_cuda")?;
    let rest = &path[i + "_cuda".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    rest[digits.len()..]
        .starts_with("-archive")
        .then(|| digits.parse().ok())
        .flatten()
}

fn variant_from_product(product: &str) -> Option<u32> {
    product
        .rsplit_once("cuda-")
        .and_then(|(_, m)| m.parse().ok())
}

#[derive(Debug, Deserialize)]
struct RegistryFile {
    #[allow(dead_code)]
    source: String,
    #[serde(rename = "release")]
    releases: Vec<Release>,
}

/// The embedded releases, parsed once.
pub fn embedded() -> &'static [Release] {
    static CELL: OnceLock<Vec<Release>> = OnceLock::new();
    CELL.get_or_init(|| {
        toml::from_str::<RegistryFile>(EMBEDDED)
            .expect("registry/nvidia-redist.toml is valid (checked by a unit test)")
            .releases
    })
}

/// The pinned sha256 of a manifest file NVIDIA published, by product and file name.
pub fn pinned_manifest_sha256(product: Product, file_name: &str) -> Option<&'static str> {
    embedded()
        .iter()
        .find(|r| r.product == product && r.manifest == file_name)
        .and_then(|r| r.manifest_sha256.as_deref())
}

/// The manifests a redist directory's listing names: `redistrib_X.Y.Z.json`
/// in an HTML page or in plain text (a `file://` directory's names),
/// deduplicated and sorted.
pub fn manifest_names(listing: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(listing);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(i) = rest.find("redistrib_") {
        let tail = &rest[i + "redistrib_".len()..];
        let ver: String = tail
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let ver = ver.trim_end_matches('.');
        if !ver.is_empty()
            && tail[ver.len()..].starts_with(".json")
            && Version::parse_parts(ver, 4).is_ok()
        {
            out.push(format!("redistrib_{ver}.json"));
        }
        rest = tail;
    }
    out.sort();
    out.dedup();
    out
}

/// Where `cudaenv update` keeps manifests it fetched.
pub fn cache_dir(cache: &Path, product: Product) -> std::path::PathBuf {
    cache.join("manifests").join(product.dir_name())
}

/// Every release known: the embedded ones plus what `update` cached. A
/// cached manifest replaces the embedded one of the same name: `update`
/// only writes one that differs from its pin when the user said
/// `--trust-mirror` (a mirror that repackages archives). A cached manifest
/// that does not parse is skipped with its reason returned, so one bad file
/// never breaks installs.
#[derive(Debug, Clone, Default)]
pub struct Manifests {
    pub releases: Vec<Release>,
    pub skipped: Vec<(std::path::PathBuf, String)>,
}

impl Manifests {
    pub fn load(cache: &Path) -> Manifests {
        let mut releases = embedded().to_vec();
        let mut skipped = Vec::new();
        for product in Product::ALL {
            let dir = cache_dir(cache, product);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
            names.sort();
            for name in names {
                let Some(name) = name.to_str().map(String::from) else {
                    continue;
                };
                if !(name.starts_with("redistrib_") && name.ends_with(".json")) {
                    continue;
                }
                let path = dir.join(&name);
                match crate::os::fs::read_bounded_text(&path, crate::os::fs::SMALL)
                    .map_err(|e| e.to_string())
                    .and_then(|t| parse_manifest(&name, &t, product))
                {
                    Ok(r) => {
                        releases.retain(|e| !(e.product == product && e.manifest == name));
                        releases.push(r);
                    }
                    Err(reason) => skipped.push((path, reason)),
                }
            }
        }
        Manifests { releases, skipped }
    }

    /// CUDA releases installable on `platform` (they have a cudart there), oldest first.
    pub fn cuda_releases(&self, platform: Platform) -> Vec<(Version, &Release)> {
        let mut v: Vec<_> = self
            .releases
            .iter()
            .filter(|r| r.product == Product::Cuda)
            .filter(|r| {
                r.component("cudart").is_some_and(|c| {
                    c.archives
                        .iter()
                        .any(|a| a.platform == platform.manifest_key())
                })
            })
            .filter_map(|r| r.version().map(|v| (v, r)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        v
    }

    /// The newest CUDA release matching `spec`.
    pub fn find_cuda(&self, spec: &Version, platform: Platform) -> Option<(Version, &Release)> {
        self.cuda_releases(platform)
            .into_iter()
            .rev()
            .find(|(v, _)| v.matches(spec))
    }

    /// cuDNN builds for a CUDA major on `platform`: (full version, release, archive), oldest first.
    pub fn cudnn_builds(
        &self,
        cuda_major: u32,
        platform: Platform,
    ) -> Vec<(Version, &Release, &Archive)> {
        self.library_builds(Product::Cudnn, cuda_major, platform)
    }

    /// Builds of a library product (cuDNN, cuSPARSELt, cuTENSOR) for a CUDA
    /// major on `platform`: (full version, release, archive), oldest first.
    pub fn library_builds(
        &self,
        product: Product,
        cuda_major: u32,
        platform: Platform,
    ) -> Vec<(Version, &Release, &Archive)> {
        let Some(key) = product.build_key() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for r in self.releases.iter().filter(|r| r.product == product) {
            let Some(c) = r.components.iter().find(|c| c.key == key) else {
                continue;
            };
            let Ok(v) = Version::parse_parts(&c.version, 4) else {
                continue;
            };
            if let Some(a) = c.archives.iter().find(|a| {
                a.platform == platform.manifest_key() && a.cuda_variant == Some(cuda_major)
            }) {
                out.push((v, r, a));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }
}

/// The component names a profile asks for, given what the release has on
/// `platform`. The runtime and devel lists are the registry's
/// (`registry/cuda-releases.toml`), shared with every source.
pub fn profile_components(release: &Release, profile: Profile, platform: Platform) -> Vec<String> {
    let has = |name: &str| {
        release.component(name).is_some_and(|c| {
            c.archives
                .iter()
                .any(|a| a.platform == platform.manifest_key())
        })
    };
    let listed = |p: Profile| {
        let empty = crate::registry::Release {
            version: Version::from_parts(&[0]),
            date: None,
            components: BTreeMap::new(),
        };
        crate::registry::cuda_releases().profile_components(p, &empty)
    };
    let mut names: Vec<String> = match profile {
        Profile::Runtime | Profile::Devel => listed(profile),
        Profile::Full => listed(Profile::Devel)
            .into_iter()
            .chain(release.components.iter().map(|c| c.name().to_string()))
            .collect(),
    };
    let mut seen = std::collections::BTreeSet::new();
    names.retain(|n| has(n) && seen.insert(n.clone()));
    names
}

fn format_of(path: &RelPath) -> Option<ArchiveFormat> {
    let p = path.as_str();
    if p.ends_with(".tar.xz") {
        Some(ArchiveFormat::TarXz)
    } else if p.ends_with(".zip") {
        Some(ArchiveFormat::Zip)
    } else if p.ends_with(".tar.gz") || p.ends_with(".tgz") {
        Some(ArchiveFormat::TarGz)
    } else {
        None
    }
}

/// The artifact for one archive of a manifest, downloaded from `base`.
pub fn artifact(
    base: &str,
    product: Product,
    component: &str,
    version: &str,
    a: &Archive,
) -> Result<Artifact> {
    let format = format_of(&a.relative_path).ok_or_else(|| {
        Error::Install(InstallError::BadManifest {
            what: format!(
                "{} archive {}",
                product.redist_dir(),
                a.relative_path.as_str()
            ),
            reason: "not a .tar.xz, .tar.gz or .zip archive".into(),
        })
    })?;
    Ok(Artifact {
        component: component.to_string(),
        version: version.to_string(),
        url: format!(
            "{}/{}/{}",
            base.trim_end_matches('/'),
            product.redist_dir(),
            a.relative_path.as_str()
        )
        .into(),
        sha256: Some(a.sha256.clone()),
        md5: None,
        size: Some(a.size),
        max_size: None,
        format,
        layout: Layout::StripTop,
        source: SourceKind::Nvidia,
        file_name: a.relative_path.file_name().to_string(),
    })
}

/// The NVIDIA redist source over its manifests and a base URL.
pub struct NvidiaSource<'a> {
    pub manifests: &'a Manifests,
    pub base: String,
    pub platform: Platform,
}

impl NvidiaSource<'_> {
    /// Artifacts for `names` of a CUDA release; names this release lacks are skipped.
    pub fn cuda_artifacts(
        &self,
        release: &Release,
        names: &[String],
    ) -> Result<BTreeMap<String, Artifact>> {
        let mut out = BTreeMap::new();
        for name in names {
            let Some(c) = release.component(name) else {
                continue;
            };
            let Some(a) = c
                .archives
                .iter()
                .find(|a| a.platform == self.platform.manifest_key())
            else {
                continue;
            };
            out.insert(
                name.clone(),
                artifact(&self.base, Product::Cuda, name, &c.version, a)?,
            );
        }
        Ok(out)
    }

    /// The newest cuDNN matching `spec` built for `cuda`'s major.
    pub fn cudnn_artifact(
        &self,
        spec: &Version,
        cuda: &Version,
    ) -> Result<Option<(Version, Artifact)>> {
        let Some((v, _, a)) = self
            .manifests
            .cudnn_builds(cuda.major(), self.platform)
            .into_iter()
            .rev()
            .find(|(v, _, _)| v.matches(spec))
        else {
            return Ok(None);
        };
        let art = artifact(&self.base, Product::Cudnn, "cudnn", &v.to_string(), a)?;
        Ok(Some((v, art)))
    }

    /// The newest build of `lib` matching `spec` (any, without one) built
    /// for `cuda`'s major, if NVIDIA's redist server carries the library.
    /// Its archive has cuDNN's layout (`lib/`, `include/` under one top
    /// directory), so it unpacks into the version the same way.
    pub fn library_artifact(
        &self,
        lib: Library,
        spec: Option<&Version>,
        cuda: &Version,
    ) -> Result<Option<(Version, Artifact)>> {
        let Some(product) = Product::of_library(lib) else {
            return Ok(None);
        };
        let Some((v, _, a)) = self
            .manifests
            .library_builds(product, cuda.major(), self.platform)
            .into_iter()
            .rev()
            .find(|(v, _, _)| spec.is_none_or(|s| v.matches(s)))
        else {
            return Ok(None);
        };
        let art = artifact(&self.base, product, lib.component(), &v.to_string(), a)?;
        Ok(Some((v, art)))
    }
}

impl NvidiaSource<'_> {
    /// The manifest of exactly `release`, if there is one.
    fn release(&self, release: &Version) -> Option<&Release> {
        self.manifests
            .cuda_releases(self.platform)
            .into_iter()
            .find(|(v, _)| v == release)
            .map(|(_, r)| r)
    }
}

impl Source for NvidiaSource<'_> {
    fn kind(&self) -> SourceKind {
        SourceKind::Nvidia
    }

    fn cuda_releases(&self) -> Result<Vec<Version>> {
        Ok(self
            .manifests
            .cuda_releases(self.platform)
            .into_iter()
            .map(|(v, _)| v)
            .collect())
    }

    fn find_cuda(&self, spec: &Version) -> Result<Option<Version>> {
        Ok(self
            .manifests
            .find_cuda(spec, self.platform)
            .map(|(v, _)| v))
    }

    fn profile_components(&self, release: &Version, profile: Profile) -> Option<Vec<String>> {
        self.release(release)
            .map(|r| profile_components(r, profile, self.platform))
    }

    fn serve(&self, release: &Version, name: &str, _: Profile) -> Result<Served> {
        let Some(r) = self.release(release) else {
            return Ok(Served::No);
        };
        let mut a = self.cuda_artifacts(r, &[name.to_string()])?;
        Ok(match a.remove(name) {
            Some(a) => Served::Artifacts(vec![a]),
            None => Served::No,
        })
    }

    fn cudnn(&self, spec: &Version, cuda: &Version) -> Result<Option<(Version, Artifact)>> {
        self.cudnn_artifact(spec, cuda)
    }

    fn cudnn_builds(&self) -> Vec<(Version, String)> {
        (10..=13)
            .flat_map(|major| {
                self.manifests
                    .cudnn_builds(major, self.platform)
                    .into_iter()
                    .map(move |(v, _, _)| (v, format!("cuda{major}")))
            })
            .collect()
    }

    /// cuSPARSELt and cuTENSOR.
    fn carries(&self, lib: Library) -> bool {
        Product::of_library(lib).is_some()
    }

    fn library(
        &self,
        lib: Library,
        want: Option<&Version>,
        cuda: &Version,
    ) -> Result<Option<(Version, Artifact)>> {
        self.library_artifact(lib, want, cuda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_manifest_names_in_listings() {
        let html = br#"<a href='redistrib_12.4.1.json'>redistrib_12.4.1.json</a>
            <a href="redistrib_9.1.0.json">x</a> redistrib_../x.json redistrib_1..2.json
            redistrib_12.4.1.json.sig"#;
        assert_eq!(
            manifest_names(html),
            vec!["redistrib_12.4.1.json", "redistrib_9.1.0.json"]
        );
    }

    const REF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/inputs/manifests");

    fn all_reference_manifests() -> Vec<(Product, std::path::PathBuf)> {
        let mut out = Vec::new();
        for (dir, product) in [
            ("cuda", Product::Cuda),
            ("cudnn", Product::Cudnn),
            ("cudnn_legacy", Product::Cudnn),
            ("cusparselt", Product::Cusparselt),
            ("cutensor", Product::Cutensor),
        ] {
            for e in std::fs::read_dir(Path::new(REF).join(dir)).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "json") {
                    out.push((product, p));
                }
            }
        }
        out.sort();
        out
    }

    fn parse_file(product: Product, p: &Path) -> Release {
        let name = p.file_name().unwrap().to_str().unwrap();
        parse_manifest(name, &std::fs::read_to_string(p).unwrap(), product)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// Every reference manifest parses, and every CUDA release resolves a
    /// runtime and a devel profile on Linux x86_64 (and sbsa where published).
    #[test]
    fn parses_every_reference_manifest_and_resolves_profiles() {
        let files = all_reference_manifests();
        // 35 CUDA, 26 cuDNN (cuda_variant format), 1 per-build cuDNN
        // manifest, 2 cuSPARSELt and 2 cuTENSOR.
        assert_eq!(files.len(), 66, "the reference set changed");
        for (product, p) in &files {
            let r = parse_file(*product, p);
            assert!(!r.components.is_empty(), "{}", p.display());
            if *product == Product::Cuda {
                let rt = profile_components(&r, Profile::Runtime, Platform::LinuxX86_64);
                for must in [
                    "cudart", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvrtc", "cupti",
                ] {
                    assert!(
                        rt.iter().any(|n| n == must),
                        "{} runtime lacks {must}",
                        r.label
                    );
                }
                let v = r.version().unwrap();
                assert_eq!(
                    rt.iter().any(|n| n == "nvjitlink"),
                    v >= Version::from_parts(&[12]),
                    "{}",
                    r.label
                );
                let dev = profile_components(&r, Profile::Devel, Platform::LinuxX86_64);
                for must in ["nvcc", "cccl"] {
                    assert!(
                        dev.iter().any(|n| n == must),
                        "{} devel lacks {must}",
                        r.label
                    );
                }
                if v >= Version::from_parts(&[13]) {
                    for must in ["crt", "nvvm"] {
                        assert!(
                            dev.iter().any(|n| n == must),
                            "{} devel lacks {must}",
                            r.label
                        );
                    }
                }
                let manifests = Manifests {
                    releases: vec![r.clone()],
                    skipped: vec![],
                };
                let src = NvidiaSource {
                    manifests: &manifests,
                    base: DEFAULT_BASE.into(),
                    platform: Platform::LinuxX86_64,
                };
                let arts = src.cuda_artifacts(&r, &dev).unwrap();
                assert_eq!(arts.len(), dev.len());
                for a in arts.values() {
                    assert_eq!(a.format, ArchiveFormat::TarXz, "{}", a.url);
                    assert!(
                        a.url.expose().starts_with(
                            "https://developer.download.nvidia.com/compute/cuda/redist/"
                        )
                    );
                }
                let win = profile_components(&r, Profile::Runtime, Platform::WindowsX86_64);
                assert!(
                    win.iter().any(|n| n == "cudart"),
                    "{} has a Windows cudart",
                    r.label
                );
            } else {
                let key = product.build_key().unwrap();
                let c = r
                    .components
                    .iter()
                    .find(|c| c.key == key)
                    .unwrap_or_else(|| panic!("{}: a {key} component", p.display()));
                assert!(
                    c.archives.iter().all(|a| a.cuda_variant.is_some()),
                    "{}",
                    r.label
                );
                for a in &c.archives {
                    let want = if a.platform.starts_with("windows") {
                        ".zip"
                    } else {
                        ".tar.xz"
                    };
                    assert!(
                        a.relative_path.as_str().ends_with(want),
                        "{}",
                        a.relative_path.as_str()
                    );
                }
            }
        }
    }

    /// The embedded registry is exactly what the reference manifests say.
    #[test]
    fn embedded_registry_matches_reference_manifests() {
        let files = all_reference_manifests();
        assert_eq!(embedded().len(), files.len());
        for (product, p) in &files {
            let parsed = parse_file(*product, p);
            let name = p.file_name().unwrap().to_str().unwrap();
            let emb = embedded()
                .iter()
                .find(|r| r.product == *product && r.manifest == name)
                .unwrap_or_else(|| panic!("{name} is not embedded"));
            let bytes = std::fs::read(p).unwrap();
            let sha = crate::os::hash::sha256(&bytes);
            assert_eq!(emb.manifest_sha256.as_deref(), Some(sha.as_str()), "{name}");
            assert_eq!(emb.label, parsed.label);
            let mut a = emb.components.clone();
            let mut b = parsed.components.clone();
            a.sort_by(|x, y| x.key.cmp(&y.key));
            b.sort_by(|x, y| x.key.cmp(&y.key));
            for c in a.iter_mut().chain(b.iter_mut()) {
                c.archives.sort_by(|x, y| {
                    (&x.platform, x.cuda_variant).cmp(&(&y.platform, y.cuda_variant))
                });
            }
            assert_eq!(a, b, "{name}");
        }
    }

    #[test]
    fn resolves_releases_and_cudnn_builds() {
        let manifests = Manifests {
            releases: embedded().to_vec(),
            skipped: vec![],
        };
        let (v, _) = manifests
            .find_cuda(&"12.4".parse().unwrap(), Platform::LinuxX86_64)
            .unwrap();
        assert_eq!(v.to_string(), "12.4.1");
        assert!(
            manifests
                .find_cuda(&"11.2".parse().unwrap(), Platform::LinuxX86_64)
                .is_none()
        );
        let src = NvidiaSource {
            manifests: &manifests,
            base: "file:///srv/nv/".into(),
            platform: Platform::LinuxX86_64,
        };
        let (cv, a) = src
            .cudnn_artifact(&"9.1".parse().unwrap(), &"12.4.1".parse().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(cv.to_string(), "9.1.1.17");
        assert_eq!(
            a.url,
            "file:///srv/nv/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.1.17_cuda12-archive.tar.xz"
        );
        let (cv, _) = src
            .cudnn_artifact(&"9.1.0".parse().unwrap(), &"12.4.1".parse().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(cv.to_string(), "9.1.0.70");
        // 8.9.7.29 exists for CUDA 11 and 12 (the per-build manifest adds nothing new).
        let (cv, a) = src
            .cudnn_artifact(&"8.9".parse().unwrap(), &"11.8.0".parse().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(cv.to_string(), "8.9.7.29");
        assert!(a.url.expose().ends_with("_cuda11-archive.tar.xz"));
        // cuDNN 9.12 has no CUDA 11 build.
        assert!(
            src.cudnn_artifact(&"9.12".parse().unwrap(), &"11.8.0".parse().unwrap())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn resolves_cusparselt_and_cutensor_builds_per_cuda_major() {
        let manifests = Manifests {
            releases: embedded().to_vec(),
            skipped: vec![],
        };
        let src = NvidiaSource {
            manifests: &manifests,
            base: "http://mirror".into(),
            platform: Platform::LinuxX86_64,
        };
        let cuda12: Version = "12.8.1".parse().unwrap();
        let cuda13: Version = "13.0.0".parse().unwrap();
        let (v, a) = src
            .library_artifact(Library::Cusparselt, Some(&"0.8".parse().unwrap()), &cuda12)
            .unwrap()
            .unwrap();
        assert_eq!(v.to_string(), "0.8.1.1");
        assert_eq!(a.component, "cusparselt");
        assert_eq!(
            a.url,
            "http://mirror/compute/cusparselt/redist/libcusparse_lt/linux-x86_64/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive.tar.xz"
        );
        assert_eq!(a.size, Some(311599728));
        assert_eq!(a.layout, Layout::StripTop);
        // 0.10 is built for CUDA 13 alone: the newest for 12 stays 0.8.
        let (v, _) = src
            .library_artifact(Library::Cusparselt, None, &cuda12)
            .unwrap()
            .unwrap();
        assert_eq!(v.to_string(), "0.8.1.1");
        let (v, _) = src
            .library_artifact(Library::Cusparselt, None, &cuda13)
            .unwrap()
            .unwrap();
        assert_eq!(v.to_string(), "0.10.0.12");
        assert!(
            src.library_artifact(Library::Cusparselt, Some(&"0.10".parse().unwrap()), &cuda12)
                .unwrap()
                .is_none()
        );
        let (v, a) = src
            .library_artifact(Library::Cutensor, Some(&"2".parse().unwrap()), &cuda13)
            .unwrap()
            .unwrap();
        assert_eq!(v.to_string(), "2.8.1.0");
        assert!(
            a.url.expose().ends_with("_cuda13-archive.tar.xz"),
            "{}",
            a.url
        );
        // NVIDIA's redist server has no NCCL, no TensorRT, nothing for CUDA 11.
        for lib in [Library::Nccl, Library::Tensorrt] {
            assert!(src.library_artifact(lib, None, &cuda12).unwrap().is_none());
        }
        assert!(
            src.library_artifact(Library::Cutensor, None, &"11.8.0".parse().unwrap())
                .unwrap()
                .is_none()
        );
    }

    fn one_archive_manifest(path: &str, size: &str) -> String {
        format!(
            r#"{{"release_label":"12.4.1","cuda_cudart":{{"version":"12.4.127",
            "linux-x86_64":{{"relative_path":{path},"sha256":"{}","size":{size}}}}}}}"#,
            "ab".repeat(32)
        )
    }

    #[test]
    fn rejects_hostile_manifests() {
        for (path, size) in [
            (r#""../../etc/passwd""#, r#""10""#),
            (r#""cuda_cudart/../../x.tar.xz""#, r#""10""#),
            (r#""/etc/passwd""#, r#""10""#),
            (r#""https://evil.example/x.tar.xz""#, r#""10""#),
            (r#""//evil.example/x.tar.xz""#, r#""10""#),
            (r#""a\\b.tar.xz""#, r#""10""#),
            (r#""a//b.tar.xz""#, r#""10""#),
            (r#""ok/x.tar.xz""#, r#""-1""#),
            (r#""ok/x.tar.xz""#, r#""""#),
            (r#""ok/x.tar.xz""#, r#""0""#),
            (r#""ok/x.tar.xz""#, r#""99999999999999999999999""#),
            (r#""ok/x.tar.xz""#, r#""1e9""#),
            (r#""ok/x.tar.xz""#, "null"),
        ] {
            let m = one_archive_manifest(path, size);
            assert!(
                parse_manifest("redistrib_12.4.1.json", &m, Product::Cuda).is_err(),
                "{path} {size} should be rejected"
            );
        }
        let ok = one_archive_manifest(r#""cuda_cudart/linux-x86_64/x.tar.xz""#, r#""10""#);
        let r = parse_manifest("redistrib_12.4.1.json", &ok, Product::Cuda).unwrap();
        assert_eq!(r.components[0].archives[0].size, 10);
        let bad_sha = ok.replace(&"ab".repeat(32), "xyz");
        assert!(parse_manifest("redistrib_12.4.1.json", &bad_sha, Product::Cuda).is_err());
    }
}
