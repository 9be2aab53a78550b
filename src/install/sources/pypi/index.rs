//! A client for one package index (the Simple API): a project's files from
//! PEP 691 JSON, or PEP 503 HTML from mirrors that only speak that, or a
//! `file://` index on disk (`cudaenv mirror` writes one). Every page read
//! is remembered in the cache, so `--offline` can resolve what was resolved
//! before. Pages and small files are read through `fetch::Http`, bounded
//! (`MAX_PAGE`, the caller's `max`) so that a hostile index cannot make us
//! hold more, over HTTP and from disk alike; credentials go only to the
//! index's own origin.

use crate::error::{Error, InstallError, Result};
use std::path::PathBuf;

use serde::Deserialize;

use super::normalize;
use crate::install::fetch::{Body, Get, Http, Target, local_path};
use crate::install::sources::SourceKind;
use crate::spec::safe_url::DisplaySafeUrl;

/// The largest project page read (PyPI's largest CUDA pages are a few MiB
/// of JSON): a hostile index cannot make us hold more.
const MAX_PAGE: usize = 64 << 20;

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
    http: Http,
    cache: Option<PathBuf>,
    offline: bool,
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
    /// The index at `base`, read through `http` (the command's client and
    /// timeouts).
    pub fn new(base: &str, http: Http) -> Index {
        Index {
            base: DisplaySafeUrl::new(base.trim_end_matches('/')),
            http,
            cache: None,
            offline: false,
        }
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
            let p = page.ok_or_else(|| {
                Error::Install(InstallError::Offline {
                    file: format!("the index page of {project}"),
                    url: self.base.to_string(),
                })
            })?;
            let text = crate::os::fs::read_bounded(&p, crate::os::fs::SMALL).map_err(|_| {
                Error::Install(InstallError::Offline {
                    file: format!("the index page of {project} ({})", p.display()),
                    url: format!("{}/{}/", self.base, normalize(project)),
                })
            })?;
            let files: Vec<CachedFile> = serde_json::from_slice(&text).map_err(|e| {
                Error::Install(InstallError::CorruptCache {
                    path: p.clone(),
                    reason: e.to_string(),
                })
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
        let target =
            Target::parse(url).map_err(|e| self.failed(url, format!("invalid URL: {e}")))?;
        let got = self
            .http
            .get(Get {
                target: &target,
                max,
                too_large: format!("larger than the {max} bytes such a file may have"),
                accept: None,
                from: Some(SourceKind::Pypi),
            })
            .await?;
        Ok(got.map(|b| b.bytes))
    }

    /// The error for `url` that `reason` says.
    fn failed(&self, url: impl std::fmt::Display, reason: String) -> Error {
        Error::Install(InstallError::Network {
            url: url.to_string(),
            reason,
            from: Some(SourceKind::Pypi),
        })
    }

    /// Where this index's pages are remembered, if anywhere.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache.as_deref()
    }

    async fn fetch_files(&self, project: &str) -> Result<Option<Vec<IndexFile>>> {
        let page = DisplaySafeUrl::new(format!("{}/{}/", self.base.expose(), normalize(project)));
        let target = Target::parse(&page)
            .map_err(|e| self.failed(&page, format!("invalid index URL: {e}")))?;
        let Some(body) = self
            .http
            .get(Get {
                target: &target,
                max: MAX_PAGE,
                too_large: format!("the page is larger than {} MiB", MAX_PAGE >> 20),
                accept: Some("application/vnd.pypi.simple.v1+json, text/html;q=0.1"),
                from: Some(SourceKind::Pypi),
            })
            .await?
        else {
            return Ok(None);
        };
        let mut files = self.parse_page(&body, &page)?;
        if let Some(dir) = local_path(page.expose()) {
            self.sizes_from_mirror_record(&dir, &mut files)?;
        }
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

    /// A project page's files: PEP 691 JSON when the server says it sent
    /// JSON, else PEP 503 HTML (what a mirror on disk holds too).
    fn parse_page(&self, body: &Body, page: &DisplaySafeUrl) -> Result<Vec<IndexFile>> {
        if !body.content_type.contains("json") {
            return Ok(parse_html(&String::from_utf8_lossy(&body.bytes), &body.url));
        }
        let p: JsonProject = serde_json::from_slice(&body.bytes)
            .map_err(|e| self.failed(page, format!("invalid PEP 691 JSON: {e}")))?;
        Ok(p.files
            .into_iter()
            .filter_map(|f| {
                Some(IndexFile {
                    url: body.url.join(&f.url).ok()?.to_string().into(),
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
            .collect())
    }

    /// A project page of an index on disk that `cudaenv mirror` wrote
    /// (`DIR/pypi/simple/<project>/`): its record knows every file's size,
    /// which the page does not say.
    fn sizes_from_mirror_record(
        &self,
        dir: &std::path::Path,
        files: &mut [IndexFile],
    ) -> Result<()> {
        let Some(sizes) = dir
            .parent()
            .map(crate::install::mirror::RecordedSizes::of_pypi_index)
            .transpose()?
            .flatten()
        else {
            return Ok(());
        };
        for f in files.iter_mut().filter(|f| f.size.is_none()) {
            f.size = local_path(f.url.expose()).and_then(|p| sizes.size_of(&p));
        }
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
