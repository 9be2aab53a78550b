//! The PyPI source: NVIDIA's CUDA wheels.
//!
//! A CUDA release (`12.4.1`) becomes component versions through the registry
//! (`registry/cuda-releases.toml`, from NVIDIA's manifests), then PyPI projects
//! through `registry/pypi.toml` (`nvidia-*-cu11` for 11.7/11.8, `-cu12` for
//! 12.x, suffix-less for 13.x, `nvidia-cudnn-cuXX` for cuDNN), then wheels
//! through the index's Simple API: PEP 691 JSON, or PEP 503 HTML from mirrors
//! that only speak that. The index is `CUDAENV_PYPI_INDEX`, else pip's own
//! setting (`PIP_INDEX_URL`, then pip's configuration files), else PyPI, so a
//! mirror configured for pip just works.
//!
//! PyPI's wheel versions usually equal the manifest's, but not always: some
//! releases are missing and some were re-uploaded with another last part or a
//! `.postN`. A component therefore takes the exact version, else the newest
//! wheel with the same first three parts, else (for components versioned like
//! the toolkit itself, e.g. cudart 11.7.60) the newest wheel of the same CUDA
//! minor release, with a note saying so.

pub use crate::spec::source::normalize;
use std::cmp::Ordering;
use std::path::PathBuf;

use serde::Deserialize;

use super::catalogue::Catalogue;
use super::{ArchiveFormat, Artifact, Layout, Plan, Platform, Profile, SourceKind};
use crate::error::{Error, Result};
use crate::install::fetch::timeouts::{self, Timeouts};
use crate::install::fetch::{Attempt, retrying};
use crate::registry::{self, Release};
use crate::spec::safe_url::DisplaySafeUrl;
use crate::spec::{Library, StackSpec, Version, VersionName};

/// NVIDIA's package index: the libraries whose wheels pypi.org does not
/// carry (TensorRT: pypi.org has only stubs that download from here).
pub const NVIDIA_INDEX: &str = "https://pypi.nvidia.com";

/// The largest project page read (PyPI's largest CUDA pages are a few MiB
/// of JSON): a hostile index cannot make us hold more.
const MAX_PAGE: usize = 64 << 20;

/// A PyPI release version: numeric parts and an optional `.postN`.
/// Pre-releases and dev releases are not represented (they are never picked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyVersion {
    pub nums: Vec<u32>,
    pub post: Option<u32>,
    pub text: String,
}

impl PyVersion {
    pub fn parse(s: &str) -> Option<PyVersion> {
        let (base, post) = match s.split_once(".post") {
            Some((b, p)) => (b, Some(p.parse().ok()?)),
            None => (s, None),
        };
        let nums: Option<Vec<u32>> = base.split('.').map(|p| p.parse().ok()).collect();
        let nums = nums?;
        if nums.is_empty() || nums.len() > 6 {
            return None;
        }
        Some(PyVersion {
            nums,
            post,
            text: s.to_string(),
        })
    }

    fn starts_with(&self, prefix: &[u32]) -> bool {
        self.nums.len() >= prefix.len() && self.nums[..prefix.len()] == *prefix
    }

    /// The numeric part as a cudaenv `Version` (at most four parts).
    pub fn version(&self) -> Version {
        Version::from_parts(&self.nums[..self.nums.len().min(4)])
    }
}

impl Ord for PyVersion {
    fn cmp(&self, o: &Self) -> Ordering {
        (&self.nums, self.post).cmp(&(&o.nums, o.post))
    }
}
impl PartialOrd for PyVersion {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// One downloadable file of a project.
#[derive(Debug, Clone)]
pub struct IndexFile {
    pub filename: String,
    /// With the index's credentials when it is on the index's origin.
    pub url: DisplaySafeUrl,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    pub yanked: bool,
    /// The index serves the file's core metadata at `<url>.metadata`
    /// (PEP 658 / 714), with this sha256 when it announced one.
    pub metadata: Option<Option<String>>,
}

/// A wheel for this machine, parsed from its file name.
#[derive(Debug, Clone)]
pub struct Wheel {
    pub version: PyVersion,
    pub file: IndexFile,
}

/// Parses `name-version(-build)?-py-abi-platform.whl` and keeps it when a
/// platform tag fits `platform` (manylinux for its architecture, or
/// `win_amd64`).
fn wheel_for(file: &IndexFile, platform: Platform) -> Option<Wheel> {
    let stem = file.filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return None;
    }
    let ok = parts[parts.len() - 1]
        .split('.')
        .any(|t| platform.wheel_tag_fits(t));
    if !ok {
        return None;
    }
    Some(Wheel {
        version: PyVersion::parse(parts[1])?,
        file: file.clone(),
    })
}

#[derive(Deserialize)]
struct JsonProject {
    files: Vec<JsonFile>,
}

#[derive(Deserialize)]
struct JsonFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    yanked: serde_json::Value,
    /// PEP 714's name, and PEP 658's original one.
    #[serde(default, rename = "core-metadata")]
    core_metadata: serde_json::Value,
    #[serde(default, rename = "dist-info-metadata")]
    dist_info_metadata: serde_json::Value,
}

/// A PEP 658/714 metadata announcement: `true`, or a map of hashes.
fn metadata_ref(v: &serde_json::Value) -> Option<Option<String>> {
    match v {
        serde_json::Value::Bool(true) => Some(None),
        serde_json::Value::Object(h) => Some(
            h.get("sha256")
                .and_then(|s| s.as_str())
                .map(|s| s.to_ascii_lowercase()),
        ),
        _ => None,
    }
}

/// A client for one package index.
///
/// Every project page read is remembered under `cache/index/<hash of the
/// index URL>/<project>.json`, so `--offline` can resolve what was resolved
/// before (and a reinstall from the cache needs no network at all).
#[derive(Clone)]
pub struct Index {
    /// With its credentials, if it has any (shown without them).
    base: DisplaySafeUrl,
    client: reqwest::Client,
    cache: Option<PathBuf>,
    offline: bool,
    timeouts: Timeouts,
}

#[derive(serde::Serialize, Deserialize)]
struct CachedFile {
    filename: String,
    url: String,
    sha256: Option<String>,
    size: Option<u64>,
    yanked: bool,
    #[serde(default)]
    metadata: Option<Option<String>>,
}

impl Index {
    pub fn new(base: &str, client: reqwest::Client) -> Index {
        Index {
            base: DisplaySafeUrl::new(base.trim_end_matches('/')),
            client,
            cache: None,
            offline: false,
            timeouts: Timeouts::default(),
        }
    }

    /// Sets when the index counts as stalled (`CUDAENV_HTTP_TIMEOUT`).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Index {
        self.timeouts = timeouts;
        self
    }

    /// Remembers pages under `cache_dir`; with `offline`, only reads them.
    /// The pages are the index's whatever its credentials (they name none:
    /// see `files`).
    pub fn with_cache(mut self, cache_dir: &std::path::Path, offline: bool) -> Index {
        let h = crate::os::hash::sha256(self.base.without_credentials().as_bytes());
        self.cache = Some(cache_dir.join("index").join(&h[..16]));
        self.offline = offline;
        self
    }

    fn cached_page(&self, project: &str) -> Option<PathBuf> {
        self.cache
            .as_ref()
            .map(|d| d.join(format!("{}.json", normalize(project))))
    }

    /// Every file of a project; `None` when the index has no such project.
    pub async fn files(&self, project: &str) -> Result<Option<Vec<IndexFile>>> {
        let page = self.cached_page(project);
        if self.offline {
            let p = page.ok_or_else(|| Error::Offline {
                file: format!("the index page of {project}"),
                url: self.base.to_string(),
            })?;
            let text = crate::os::fs::read_bounded(&p, crate::os::fs::SMALL).map_err(|_| {
                Error::Offline {
                    file: format!("the index page of {project} ({})", p.display()),
                    url: format!("{}/{}/", self.base, normalize(project)),
                }
            })?;
            let files: Vec<CachedFile> =
                serde_json::from_slice(&text).map_err(|e| Error::CorruptCache {
                    path: p.clone(),
                    reason: e.to_string(),
                })?;
            return Ok(Some(
                files
                    .into_iter()
                    .map(|f| IndexFile {
                        filename: f.filename,
                        url: DisplaySafeUrl::new(f.url).with_credentials_of(&self.base),
                        sha256: f.sha256,
                        size: f.size,
                        yanked: f.yanked,
                        metadata: f.metadata,
                    })
                    .collect(),
            ));
        }
        let files = self.fetch_files(project).await?;
        if let (Some(p), Some(files)) = (page, &files) {
            let list: Vec<CachedFile> = files
                .iter()
                .map(|f| CachedFile {
                    filename: f.filename.clone(),
                    url: f.url.without_credentials(),
                    sha256: f.sha256.clone(),
                    size: f.size,
                    yanked: f.yanked,
                    metadata: f.metadata.clone(),
                })
                .collect();
            // Best effort: the cache only ever helps.
            if let (Some(dir), Ok(text)) = (p.parent(), serde_json::to_vec(&list)) {
                let _ = std::fs::create_dir_all(dir);
                let tmp = p.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, &p);
                }
            }
        }
        Ok(files)
    }

    pub fn base(&self) -> &DisplaySafeUrl {
        &self.base
    }

    /// GETs a small file the index links to (a metadata file, a metapackage
    /// wheel): `None` when the server has no such file. Bodies larger than
    /// `max` bytes are refused, so a hostile index cannot make us hold more.
    pub async fn small_file(&self, url: &DisplaySafeUrl, max: usize) -> Result<Option<Vec<u8>>> {
        let parsed = reqwest::Url::parse(url.expose()).map_err(|e| Error::Network {
            url: url.to_string(),
            reason: format!("invalid URL: {e}"),
            from: Some(SourceKind::Pypi),
        })?;
        let shown = url.to_string();
        if parsed.scheme() == "file" {
            return read_local_file(&parsed, &shown, max);
        }
        retrying(
            &shown,
            4,
            std::time::Duration::from_millis(300),
            &self.timeouts,
            || async {
                let (resp, started) =
                    timeouts::send(self.client.get(parsed.clone()), &self.timeouts).await?;
                if resp.status() == reqwest::StatusCode::NOT_FOUND {
                    return Ok(None);
                }
                if let Some(why) = refused(resp.status(), &shown) {
                    return Err(why);
                }
                if resp.content_length().is_some_and(|n| n > max as u64) {
                    return Err(Attempt::Fail(Error::Network {
                        url: shown.clone(),
                        reason: format!("larger than the {max} bytes such a file may have"),
                        from: Some(SourceKind::Pypi),
                    }));
                }
                let Some(body) = timeouts::body(resp, started, &self.timeouts, max).await? else {
                    return Err(Attempt::Fail(Error::Network {
                        url: shown.clone(),
                        reason: format!("larger than the {max} bytes such a file may have"),
                        from: Some(SourceKind::Pypi),
                    }));
                };
                Ok(Some(body))
            },
        )
        .await
        .map_err(|e| e.from_source(SourceKind::Pypi))
    }

    /// Is this index configured not to be contacted?
    pub fn is_offline(&self) -> bool {
        self.offline
    }

    /// Where this index's pages are remembered, if anywhere.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache.as_deref()
    }

    async fn fetch_files(&self, project: &str) -> Result<Option<Vec<IndexFile>>> {
        let page = format!("{}/{}/", self.base.expose(), normalize(project));
        // Only ever shown (the request goes to `page`, credentials and all).
        let url = format!("{}/{}/", self.base, normalize(project));
        let page = reqwest::Url::parse(&page).map_err(|e| Error::Network {
            url: url.clone(),
            reason: format!("invalid index URL: {e}"),
            from: Some(SourceKind::Pypi),
        })?;
        if page.scheme() == "file" {
            return read_local_page(&page, &url);
        }
        retrying(
            &url,
            4,
            std::time::Duration::from_millis(300),
            &self.timeouts,
            || self.fetch_files_once(&page, &url),
        )
        .await
        .map_err(|e| e.from_source(SourceKind::Pypi))
    }

    /// One request for a project page: `Retry` for network trouble and 5xx.
    async fn fetch_files_once(
        &self,
        page: &reqwest::Url,
        url: &str,
    ) -> std::result::Result<Option<Vec<IndexFile>>, Attempt> {
        let req = self.client.get(page.clone()).header(
            reqwest::header::ACCEPT,
            "application/vnd.pypi.simple.v1+json, text/html;q=0.1",
        );
        let (resp, started) = timeouts::send(req, &self.timeouts).await?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if let Some(why) = refused(resp.status(), url) {
            return Err(why);
        }
        let ctype = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let final_url = resp.url().clone();
        let body = timeouts::body(resp, started, &self.timeouts, MAX_PAGE)
            .await?
            .ok_or_else(|| {
                Attempt::Fail(Error::Network {
                    url: url.into(),
                    reason: format!("the page is larger than {} MiB", MAX_PAGE >> 20),
                    from: Some(SourceKind::Pypi),
                })
            })?;
        let files = if ctype.contains("json") {
            let p: JsonProject = serde_json::from_slice(&body).map_err(|e| {
                Attempt::Fail(Error::Network {
                    url: url.into(),
                    reason: format!("invalid PEP 691 JSON: {e}"),
                    from: Some(SourceKind::Pypi),
                })
            })?;
            p.files
                .into_iter()
                .filter_map(|f| {
                    Some(IndexFile {
                        url: final_url.join(&f.url).ok()?.to_string().into(),
                        sha256: f.hashes.get("sha256").map(|h| h.to_ascii_lowercase()),
                        size: f.size,
                        yanked: !matches!(
                            f.yanked,
                            serde_json::Value::Bool(false) | serde_json::Value::Null
                        ),
                        metadata: metadata_ref(&f.core_metadata)
                            .or_else(|| metadata_ref(&f.dist_info_metadata)),
                        filename: f.filename,
                    })
                })
                .collect()
        } else {
            parse_html(&String::from_utf8_lossy(&body), &final_url)
        };
        // The response's URL has no credentials (they went in a header):
        // links on the index's own origin get them back, relative or not,
        // as pip and uv do; links to other hosts never do.
        let files = files
            .into_iter()
            .map(|f| IndexFile {
                url: f.url.with_credentials_of(&self.base),
                ..f
            })
            .collect();
        Ok(Some(files))
    }
}

/// Why an index's answer (other than 404, "no such thing") has no body to
/// read, if it has none: a server error is worth another attempt, any other
/// unsuccessful status is final.
fn refused(status: reqwest::StatusCode, url: &str) -> Option<Attempt> {
    if status.is_server_error() {
        Some(Attempt::Retry(format!("server answered {status}")))
    } else if !status.is_success() {
        Some(Attempt::Fail(Error::Network {
            url: url.into(),
            reason: format!("server answered {status}"),
            from: Some(SourceKind::Pypi),
        }))
    } else {
        None
    }
}

/// A small file of an index on disk (a metadata file, a metapackage wheel),
/// at most `max` bytes. No such file means none.
fn read_local_file(file: &reqwest::Url, url: &str, max: usize) -> Result<Option<Vec<u8>>> {
    let unreadable = |reason: String| Error::Network {
        url: url.to_string(),
        reason,
        from: Some(SourceKind::Pypi),
    };
    let path = file
        .to_file_path()
        .map_err(|()| unreadable("not a local path".into()))?;
    match crate::os::fs::read_bounded(&path, max as u64) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(unreadable(format!("cannot read {}: {e}", path.display()))),
    }
}

/// A project page of an index on disk (`file:///srv/mirror/pypi/simple`, as
/// `cudaenv mirror` writes one): `<project>/index.html`, the layout pip reads
/// from a `file://` index too. No such directory means no such project.
fn read_local_page(page: &reqwest::Url, url: &str) -> Result<Option<Vec<IndexFile>>> {
    let unreadable = |reason: String| Error::Network {
        url: url.to_string(),
        reason,
        from: Some(SourceKind::Pypi),
    };
    let dir = page
        .to_file_path()
        .map_err(|()| unreadable("not a local path".into()))?;
    let file = dir.join("index.html");
    let mut files = match crate::os::fs::read_bounded(&file, crate::os::fs::SMALL) {
        Ok(bytes) => parse_html(&String::from_utf8_lossy(&bytes), page),
        Err(e) if e.is_not_found() && !dir.exists() => return Ok(None),
        Err(e) => return Err(unreadable(format!("cannot read {}: {e}", file.display()))),
    };
    // A mirror `cudaenv mirror` wrote: its record knows every file's size.
    if let Some(sizes) = dir
        .parent()
        .map(crate::install::mirror::RecordedSizes::of_pypi_index)
        .transpose()?
        .flatten()
    {
        for f in files.iter_mut().filter(|f| f.size.is_none()) {
            f.size = reqwest::Url::parse(f.url.expose())
                .ok()
                .filter(|u| u.scheme() == "file")
                .and_then(|u| u.to_file_path().ok())
                .and_then(|p| sizes.size_of(&p));
        }
    }
    Ok(Some(files))
}

/// PEP 503: `<a href="URL#sha256=…" data-yanked…>file name</a>`.
fn parse_html(html: &str, base: &reqwest::Url) -> Vec<IndexFile> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<a ").or_else(|| rest.find("<A ")) {
        rest = &rest[i + 3..];
        let Some(end) = rest.find('>') else { break };
        let attrs = &rest[..end];
        let Some(close) = rest[end..]
            .find("</a>")
            .or_else(|| rest[end..].find("</A>"))
        else {
            break;
        };
        let text = rest[end + 1..end + close].trim().to_string();
        rest = &rest[end + close..];
        let Some(href) = attr(attrs, "href") else {
            continue;
        };
        let href = href.replace("&amp;", "&");
        let (u, frag) = match href.split_once('#') {
            Some((u, f)) => (u.to_string(), Some(f.to_string())),
            None => (href.clone(), None),
        };
        let sha256 = frag
            .as_deref()
            .and_then(|f| f.strip_prefix("sha256="))
            .map(|h| h.to_ascii_lowercase());
        let Ok(url) = base.join(&u) else { continue };
        let filename = if text.is_empty() {
            url.path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or("")
                .to_string()
        } else {
            text
        };
        out.push(IndexFile {
            filename,
            url: url.to_string().into(),
            sha256,
            size: None,
            yanked: attrs.contains("data-yanked"),
            metadata: attr(attrs, "data-core-metadata")
                .or_else(|| attr(attrs, "data-dist-info-metadata"))
                .filter(|v| v != "false")
                .map(|v| v.strip_prefix("sha256=").map(|h| h.to_ascii_lowercase())),
        });
    }
    out
}

fn attr(attrs: &str, name: &str) -> Option<String> {
    let i = attrs.find(&format!("{name}="))?;
    let v = &attrs[i + name.len() + 1..];
    let q = v.chars().next()?;
    if q == '"' || q == '\'' {
        let v = &v[1..];
        Some(v[..v.find(q)?].to_string())
    } else {
        Some(v.split_whitespace().next()?.to_string())
    }
}

/// What to install.
#[derive(Debug, Clone)]
pub struct Request {
    pub spec: StackSpec,
    pub profile: Profile,
    /// Component names, checked where they entered (clap, a lock's reader).
    pub with: Vec<String>,
    pub without: Vec<String>,
}

impl Request {
    /// The libraries beside the toolkit it asks for, with the spec's version
    /// prefix (`None`: `--with nccl`, the newest): the spec's and `--with`'s,
    /// less `--without`'s.
    pub fn libraries(&self) -> Vec<(Library, Option<Version>)> {
        Library::ALL
            .into_iter()
            .filter(|l| !self.without.iter().any(|c| c == l.component()))
            .filter_map(|l| match self.spec.libs.get(l) {
                Some(v) => Some((l, Some(v.clone()))),
                None => self
                    .with
                    .iter()
                    .any(|c| c == l.component())
                    .then_some((l, None)),
            })
            .collect()
    }
}

/// Is this component one of the toolkit's (not cuDNN, not a library beside
/// it), the kind a CUDA release names a version of?
pub fn is_toolkit_component(name: &str) -> bool {
    name != "cudnn" && Library::from_component(name).is_none()
}

/// What a component without a wheel does to a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    Fail,
    Skip,
}

/// How a component's wheel version was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exact,
    /// Same first three parts (a re-upload or `.postN`).
    SamePatch,
    /// Same CUDA minor release, another build: worth a note.
    SameMinor,
}

/// Picks the wheel for a component version the manifest names.
pub fn pick_component<'a>(
    wheels: &'a [Wheel],
    wanted: &str,
    cuda: &Version,
) -> Option<(&'a Wheel, Match)> {
    let want = PyVersion::parse(wanted)?;
    let live = || wheels.iter().filter(|w| !w.file.yanked);
    if let Some(w) = live()
        .filter(|w| w.version.nums == want.nums)
        .min_by_key(|w| w.version.post)
    {
        return Some((w, Match::Exact));
    }
    let n3 = &want.nums[..want.nums.len().min(3)];
    if let Some(w) = live()
        .filter(|w| w.version.starts_with(n3))
        .max_by(|a, b| a.version.cmp(&b.version))
    {
        return Some((w, Match::SamePatch));
    }
    // Toolkit-versioned components (cudart 11.7.60 in CUDA 11.7.0) may take
    // another build of the same CUDA minor; library-versioned ones may not.
    let minor = [cuda.major(), cuda.minor().unwrap_or(0)];
    if want.starts_with(&minor)
        && let Some(w) = live()
            .filter(|w| w.version.starts_with(&minor))
            .max_by(|a, b| a.version.cmp(&b.version))
    {
        return Some((w, Match::SameMinor));
    }
    None
}

/// Picks the newest wheel matching a version prefix (cuDNN, NCCL, …); a
/// full four-part prefix prefers the exact upload over its `.postN`.
pub fn pick_prefix<'a>(wheels: &'a [Wheel], spec: &Version) -> Option<&'a Wheel> {
    let live = || {
        wheels
            .iter()
            .filter(|w| !w.file.yanked && w.version.starts_with(spec.parts()))
    };
    if spec.parts().len() >= 4
        && let Some(w) = live().find(|w| w.version.post.is_none() && w.version.nums == spec.parts())
    {
        return Some(w);
    }
    live().max_by(|a, b| a.version.cmp(&b.version))
}

/// The PyPI source.
pub struct PypiSource {
    index: Index,
    /// Whose wheels are taken (the machine's, or `--platform`'s).
    wheels_for: Platform,
    /// NVIDIA's package index, for the libraries only it has (TensorRT).
    nvidia_index: Option<Index>,
    /// The live catalogue (`cuda-toolkit`'s releases), when one was read.
    catalogue: Option<Catalogue>,
    platform: Option<Platform>,
}

/// Where a release's component versions came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Known {
    /// The embedded registry (NVIDIA's manifests, reviewed).
    Registry,
    /// PyPI's `cuda-toolkit` metapackage (the live catalogue).
    Catalogue,
    /// Both.
    Both,
}

impl PypiSource {
    pub fn new(index: Index) -> PypiSource {
        PypiSource {
            index,
            wheels_for: Platform::host(),
            nvidia_index: None,
            catalogue: None,
            platform: super::Platform::current(),
        }
    }

    /// Adds what the live catalogue knows (releases newer than the registry,
    /// components the registry lacks).
    pub fn with_catalogue(mut self, catalogue: Option<Catalogue>) -> PypiSource {
        self.catalogue = catalogue;
        self
    }

    /// Where the libraries whose registry entry names NVIDIA's index are read.
    pub fn with_nvidia_index(mut self, index: Index) -> PypiSource {
        self.nvidia_index = Some(index);
        self
    }

    pub fn catalogue(&self) -> Option<&Catalogue> {
        self.catalogue.as_ref()
    }

    /// Resolves for another Linux machine than this one (`cudaenv lock
    /// --platform`): its wheels' architecture and its catalogue markers.
    pub fn set_platform(&mut self, platform: Platform) {
        self.platform = Some(platform);
        self.wheels_for = platform;
    }

    /// Every CUDA release PyPI serves for this machine, oldest first: the
    /// registry's (PyPI-served majors) merged with the catalogue's. For a
    /// release both know, the registry's component versions win (they are
    /// NVIDIA's manifests, reviewed) and the catalogue adds what it lacks.
    pub fn releases(&self) -> Vec<(Release, Known)> {
        let pypi = registry::pypi();
        let mut out: std::collections::BTreeMap<Version, (Release, Known)> =
            registry::cuda_releases()
                .releases
                .iter()
                .filter(|r| pypi.serves(&r.version))
                .map(|r| (r.version.clone(), (r.clone(), Known::Registry)))
                .collect();
        if let (Some(cat), Some(platform)) = (&self.catalogue, self.platform) {
            for cr in &cat.releases {
                let Some(v) = cr.cuda() else { continue };
                let comps: std::collections::BTreeMap<String, String> = cr
                    .components_for(platform)
                    .map(|(c, cc)| (c.clone(), cc.version.clone()))
                    .collect();
                if !comps.contains_key("cudart") {
                    continue;
                }
                match out.get_mut(&v) {
                    Some((r, known)) => {
                        *known = Known::Both;
                        for (c, ver) in comps {
                            r.components.entry(c).or_insert(ver);
                        }
                    }
                    None => {
                        out.insert(
                            v.clone(),
                            (
                                Release {
                                    version: v,
                                    date: None,
                                    components: comps,
                                },
                                Known::Catalogue,
                            ),
                        );
                    }
                }
            }
        }
        out.into_values().collect()
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    async fn wheels(&self, project: &str) -> Result<Vec<Wheel>> {
        self.wheels_in(&self.index, project).await
    }

    /// The index that serves a library's wheels: NVIDIA's for those the
    /// registry puts there, else the configured one.
    fn index_for(&self, lib: Library) -> &Index {
        match (registry::pypi().library_index(lib), &self.nvidia_index) {
            (Some(_), Some(nv)) => nv,
            _ => &self.index,
        }
    }

    /// The builds of a library PyPI has for a CUDA major, oldest first.
    pub async fn library_versions(&self, lib: Library, major: u32) -> Result<Vec<String>> {
        let Some(project) = registry::pypi().library_project(lib, major) else {
            return Ok(Vec::new());
        };
        let wheels = self.wheels_in(self.index_for(lib), project).await?;
        let mut v: Vec<PyVersion> = wheels
            .into_iter()
            .filter(|w| !w.file.yanked)
            .map(|w| w.version)
            .collect();
        v.sort();
        v.dedup_by(|a, b| a.nums == b.nums);
        Ok(v.into_iter().map(|v| v.version().to_string()).collect())
    }

    /// The wheels of the libraries beside the toolkit a request names, for
    /// a CUDA release: per library the newest build matching its prefix
    /// (any build for `None`). A library PyPI has no project or no matching
    /// build of for this CUDA major is an error naming what there is.
    pub async fn libraries(
        &self,
        cuda: &Version,
        wanted: &[(Library, Option<Version>)],
    ) -> Result<Vec<(Library, Version, Artifact)>> {
        let pypi = registry::pypi();
        let major = cuda.major();
        let mut projects = Vec::new();
        for (lib, _) in wanted {
            let project = pypi.library_project(*lib, major).ok_or_else(|| {
                let majors: Vec<String> = pypi
                    .library_majors(*lib)
                    .iter()
                    .map(|m| format!("CUDA {m}"))
                    .collect();
                Error::NotAvailable {
                    what: format!("{} for CUDA {major}", lib.title()),
                    source_name: Some("PyPI".into()),
                    hint: Some(crate::msg!(
                        "hint-library-majors",
                        library = lib.title(),
                        majors = majors.join(", "),
                        component = lib.component()
                    )),
                }
            })?;
            projects.push((*lib, project, self.index_for(*lib)));
        }
        let pages = futures_util::future::join_all(
            projects
                .iter()
                .map(|(_, project, index)| self.wheels_in(index, project)),
        )
        .await;
        let mut out = Vec::new();
        for (((lib, want), (_, project, index)), page) in wanted.iter().zip(&projects).zip(pages) {
            let wheels = page?;
            let any = Version::from_parts(&[]);
            let prefix = want.as_ref().unwrap_or(&any);
            let w = pick_prefix(&wheels, prefix).ok_or_else(|| {
                let mut have: Vec<&PyVersion> = wheels
                    .iter()
                    .filter(|w| !w.file.yanked)
                    .map(|w| &w.version)
                    .collect();
                have.sort();
                have.dedup_by(|a, b| a.nums == b.nums);
                Error::NotAvailable {
                    what: match want {
                        Some(v) => format!(
                            "{} {v} for CUDA {major} on {}",
                            lib.title(),
                            self.wheels_for.name()
                        ),
                        None => format!(
                            "{} for CUDA {major} on {}",
                            lib.title(),
                            self.wheels_for.name()
                        ),
                    },
                    source_name: Some(format!("{project} on {}", index.base())),
                    hint: Some(if have.is_empty() {
                        crate::msg!("hint-no-wheel-for", platform = self.wheels_for.name())
                    } else {
                        crate::msg!(
                            "hint-available",
                            versions = have
                                .iter()
                                .map(|v| v.text.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }),
                }
            })?;
            out.push((*lib, w.version.version(), artifact(lib.component(), w)));
        }
        Ok(out)
    }

    async fn wheels_in(&self, index: &Index, project: &str) -> Result<Vec<Wheel>> {
        let files = index
            .files(project)
            .await?
            .ok_or_else(|| Error::NotAvailable {
                what: format!("the project `{project}`"),
                source_name: Some(index.base().to_string()),
                hint: Some(if std::ptr::eq(index, &self.index) {
                    crate::msg!("hint-check-package-index")
                } else {
                    crate::msg!("hint-check-nvidia-index")
                }),
            })?;
        Ok(files
            .iter()
            .filter_map(|f| wheel_for(f, self.wheels_for))
            .collect())
    }

    /// The CUDA release a spec means on PyPI.
    pub fn release(&self, spec: &StackSpec) -> Result<Release> {
        let all = self.releases();
        let served: Vec<String> = all.iter().map(|(r, _)| r.version.to_string()).collect();
        all.into_iter()
            .rev()
            .map(|(r, _)| r)
            .find(|r| r.version.matches(&spec.cuda))
            .ok_or_else(|| Error::NotAvailable {
                what: format!("CUDA {}", spec.cuda),
                source_name: Some("PyPI".into()),
                hint: Some(crate::msg!(
                    "hint-pypi-releases",
                    releases = served.join(", ")
                )),
            })
    }

    /// Resolves a request to exact wheels; a component without a wheel is
    /// an error (`--source pypi`: PyPI alone must serve the stack).
    pub async fn plan(&self, req: &Request) -> Result<Plan> {
        self.plan_with(req, Missing::Fail).await
    }

    /// What PyPI can serve of a request, per component: a component (or the
    /// cuDNN) without a wheel is left out of the plan rather than failing
    /// it, so `--source auto` takes only that component from elsewhere.
    /// Network trouble still fails.
    pub async fn offer(&self, req: &Request) -> Result<Plan> {
        self.plan_with(req, Missing::Skip).await
    }

    async fn plan_with(&self, req: &Request, missing: Missing) -> Result<Plan> {
        let skip = missing == Missing::Skip;
        let releases = registry::cuda_releases();
        let pypi = registry::pypi();
        let release = &self.release(&req.spec)?;
        let major = release.version.major();
        let mut names = releases.profile_components(req.profile, release);
        for c in &req.with {
            if !names.contains(c) && is_toolkit_component(c) {
                names.push(c.clone());
            }
        }
        names.retain(|c| !req.without.contains(c));
        let mut notes = Vec::new();
        let mut wanted: Vec<(String, String, String)> = Vec::new(); // component, version, project
        for c in &names {
            let explicit = req.with.contains(c);
            let (Some(version), Some(project)) = (release.component(c), pypi.package(c, major))
            else {
                if explicit && !skip {
                    return Err(Error::NotAvailable {
                        what: format!("{c} for CUDA {}", release.version),
                        source_name: Some("PyPI".into()),
                        hint: Some(crate::msg!("hint-try-source-nvidia")),
                    });
                }
                continue;
            };
            if let Some(l) = pypi.limitation(c, major) {
                notes.push(l.message.clone());
            }
            wanted.push((c.clone(), version.to_string(), project.to_string()));
        }
        let cudnn_project = match &req.spec.cudnn {
            Some(_) if req.without.iter().any(|c| c == "cudnn") => None,
            Some(_) => Some(
                pypi.cudnn_package(major)
                    .ok_or_else(|| Error::NotAvailable {
                        what: format!("cuDNN for CUDA {major}"),
                        source_name: Some("PyPI".into()),
                        hint: None,
                    })?,
            ),
            None => None,
        };

        // All index pages at once.
        let pages = futures_util::future::join_all(
            wanted
                .iter()
                .map(|(_, _, p)| self.wheels(p))
                .chain(cudnn_project.map(|p| self.wheels(p))),
        )
        .await;
        let mut pages = pages.into_iter();
        let mut artifacts = Vec::new();
        for (c, version, project) in &wanted {
            let wheels = match pages.next().expect("one page per project") {
                Err(e) if skip && e.exit_code() == crate::error::ExitCode::NotAvailable => continue,
                other => other?,
            };
            let picked = pick_component(&wheels, version, &release.version);
            if picked.is_none() && skip {
                continue;
            }
            let (w, how) = picked.ok_or_else(|| Error::NotAvailable {
                what: format!(
                    "{project} {version} (CUDA {}) for {}",
                    release.version,
                    self.wheels_for.name()
                ),
                source_name: Some(self.index.base().to_string()),
                hint: Some(crate::msg!("hint-pypi-lacks-build", component = c)),
            })?;
            if how == Match::SameMinor {
                notes.push(format!(
                    "PyPI has no {project} {version}; using {}, the newest build for CUDA {}.{}",
                    w.version.text,
                    release.version.major(),
                    release.version.minor().unwrap_or(0)
                ));
            }
            artifacts.push(artifact(c, w));
        }
        let mut cudnn_version = None;
        if let (Some(spec), Some(project)) = (&req.spec.cudnn, cudnn_project) {
            let wheels = match pages.next().expect("cudnn page") {
                Err(e) if skip && e.exit_code() == crate::error::ExitCode::NotAvailable => {
                    Vec::new()
                }
                other => other?,
            };
            let picked = pick_prefix(&wheels, spec);
            let w = match picked {
                None if skip => {
                    return Ok(Plan {
                        name: VersionName::for_stack(&release.version, None),
                        cuda: release.version.clone(),
                        cudnn: None,
                        libs: Default::default(),
                        profile: req.profile,
                        artifacts,
                        notes,
                        info: Vec::new(),
                    });
                }
                other => other,
            };
            let w = w.ok_or_else(|| {
                let mut have: Vec<&PyVersion> = wheels
                    .iter()
                    .filter(|w| !w.file.yanked)
                    .map(|w| &w.version)
                    .collect();
                have.sort();
                have.dedup();
                Error::NotAvailable {
                    what: format!("cuDNN {spec} for CUDA {major}"),
                    source_name: Some(project.to_string()),
                    hint: Some(crate::msg!(
                        "hint-available",
                        versions = have
                            .iter()
                            .map(|v| v.text.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            })?;
            cudnn_version = Some(w.version.version());
            artifacts.push(artifact("cudnn", w));
        }
        Ok(Plan {
            name: VersionName::for_stack(&release.version, cudnn_version.as_ref()),
            cuda: release.version.clone(),
            cudnn: cudnn_version,
            libs: Default::default(),
            profile: req.profile,
            artifacts,
            notes,
            info: Vec::new(),
        })
    }

    /// cuDNN versions PyPI has for a CUDA major, oldest first.
    pub async fn cudnn_versions(&self, major: u32) -> Result<Vec<String>> {
        let Some(project) = registry::pypi().cudnn_package(major) else {
            return Ok(Vec::new());
        };
        let wheels = self.wheels(project).await?;
        let mut v: Vec<PyVersion> = wheels
            .into_iter()
            .filter(|w| !w.file.yanked)
            .map(|w| w.version)
            .collect();
        v.sort();
        v.dedup_by(|a, b| a.nums == b.nums);
        Ok(v.into_iter().map(|v| v.version().to_string()).collect())
    }
}

fn artifact(component: &str, w: &Wheel) -> Artifact {
    Artifact {
        component: component.to_string(),
        version: w.version.text.clone(),
        url: w.file.url.clone(),
        sha256: w.file.sha256.clone(),
        md5: None,
        size: w.file.size,
        max_size: None,
        format: ArchiveFormat::Wheel,
        layout: Layout::Wheel,
        source: SourceKind::Pypi,
        file_name: w.file.filename.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions() {
        assert_eq!(
            normalize("Nvidia_CUDA.runtime--cu12"),
            "nvidia-cuda-runtime-cu12"
        );
        let v = PyVersion::parse("12.3.101.post1").unwrap();
        assert_eq!(v.nums, vec![12, 3, 101]);
        assert_eq!(v.post, Some(1));
        assert!(PyVersion::parse("12.4.0.16rc1").is_none());
        assert!(PyVersion::parse("0.0.1.dev5").is_none());
        assert!(PyVersion::parse("12.3.101").unwrap() < v);
    }

    #[test]
    fn html_index() {
        let base = reqwest::Url::parse("https://m.example/simple/x/").unwrap();
        let f = parse_html(
            r#"<html><a href="../../f/x-1.0-py3-none-manylinux2014_x86_64.whl#sha256=ABC">x-1.0-py3-none-manylinux2014_x86_64.whl</a>
            <a href="x-0.9.whl" data-yanked="">x-0.9.whl</a></html>"#,
            &base,
        );
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0].url,
            "https://m.example/f/x-1.0-py3-none-manylinux2014_x86_64.whl"
        );
        assert_eq!(f[0].sha256.as_deref(), Some("abc"));
        assert!(f[1].yanked);
    }

    /// Reads the copies of PyPI's JSON for a project kept in
    /// `tests/fixtures/pypi/` (None for projects not copied there).
    fn reference(project: &str) -> Option<Vec<Wheel>> {
        let path = format!(
            "{}/tests/fixtures/pypi/{project}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        let mut out = Vec::new();
        for (_, files) in json["releases"].as_object()? {
            for f in files.as_array()? {
                let file = IndexFile {
                    filename: f["filename"].as_str()?.into(),
                    url: f["url"].as_str()?.into(),
                    sha256: f["digests"]["sha256"].as_str().map(Into::into),
                    size: f["size"].as_u64(),
                    yanked: f["yanked"].as_bool().unwrap_or(false),
                    metadata: None,
                };
                if let Some(w) = wheel_for(&file, Platform::LinuxX86_64) {
                    out.push(w);
                }
            }
        }
        Some(out)
    }

    /// Every release PyPI serves maps to a wheel for the components whose
    /// PyPI data is in the reference set, exactly where PyPI has the version.
    #[test]
    fn every_manifest_release_maps_to_reference_wheels() {
        let releases = registry::cuda_releases();
        let pypi = registry::pypi();
        let mut checked = 0;
        for r in releases.releases.iter().filter(|r| pypi.serves(&r.version)) {
            for c in ["cudart", "cublas", "nvrtc", "nvcc"] {
                let Some(project) = pypi.package(c, r.version.major()) else {
                    continue;
                };
                let Some(wheels) = reference(project) else {
                    continue;
                };
                let want = r.component(c).unwrap();
                let (w, how) = pick_component(&wheels, want, &r.version)
                    .unwrap_or_else(|| panic!("{} {c} {want}", r.version));
                if how == Match::Exact {
                    assert_eq!(w.version.text, want);
                } else {
                    assert!(
                        w.version
                            .starts_with(&[r.version.major(), r.version.minor().unwrap()])
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 60, "{checked}");
        // The known gap: CUDA 11.7.0's cudart 11.7.60 was never uploaded.
        let w = reference("nvidia-cuda-runtime-cu11").unwrap();
        let (pick, how) = pick_component(&w, "11.7.60", &"11.7.0".parse().unwrap()).unwrap();
        assert_eq!(
            (pick.version.text.as_str(), how),
            ("11.7.99", Match::SameMinor)
        );
    }

    #[test]
    fn benchmark_stack_resolves_exactly() {
        let rt = reference("nvidia-cuda-runtime-cu12").unwrap();
        let v: Version = "12.4.1".parse().unwrap();
        assert_eq!(
            pick_component(&rt, "12.4.127", &v).unwrap().0.version.text,
            "12.4.127"
        );
        let cudnn = reference("nvidia-cudnn-cu12").unwrap();
        assert_eq!(
            pick_prefix(&cudnn, &"9.1.0.70".parse().unwrap())
                .unwrap()
                .version
                .text,
            "9.1.0.70"
        );
        assert_eq!(
            pick_prefix(&cudnn, &"9.1".parse().unwrap())
                .unwrap()
                .version
                .text,
            "9.1.1.17"
        );
        assert!(pick_prefix(&cudnn, &"7".parse().unwrap()).is_none());
    }
}
