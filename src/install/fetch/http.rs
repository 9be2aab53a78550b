//! The HTTP layer: one client and one command's `Timeouts` ([`Http`]), and
//! the small reads every reader that is not a download into the cache makes
//! through it: index pages, metadata files and metapackage wheels (PyPI),
//! NVIDIA's manifests and the listings of their directories (`update`), the
//! last bytes of a wheel (`install --dry-run`). Downloads (`Fetcher`) use the
//! same client and `Timeouts`, with their own streaming on top.
//!
//! A small read is held in memory, so every one follows the same rules:
//!
//! - it is bounded: the caller says the most bytes the answer may have
//!   (`Get::max`); a `Content-Length` past it is refused before the body is
//!   read, and a body that grows past it is cut off there;
//! - it waits as `timeouts` says (a server that stalls or trickles is given
//!   up on), and is tried again as `retry` says: network trouble, 5xx and
//!   429 answers are worth another try, a stall one more, and a request that
//!   gives up on a stall ends the command's use of the network (the
//!   breaker);
//! - 404 and 410 mean "no such thing" (`Ok(None)`), which is not a failure;
//!   any other unsuccessful answer is final;
//! - a `file://` URL (a mirror on disk) is read as a static web server
//!   serves it: a file through `os::fs::read_bounded` (a FIFO never hangs, a
//!   device is never read) with the same bound, a directory as its
//!   `index.html` or, where it has none, as the names of its entries, one a
//!   line (a server's listing); what is not there is "no such thing";
//! - URLs are shown without their credentials (`DisplaySafeUrl`), in errors
//!   too.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::retry::{Attempt, retrying};
use super::timeouts::{self, Timeouts};
use crate::context::Context;
use crate::error::{Error, InstallError, Result};
use crate::os::fs::{ReadError, read_bounded};
use crate::spec::safe_url::DisplaySafeUrl;
use crate::spec::source::SourceKind;

/// Tries of one small read before it gives up, and the wait before the
/// second (doubled before each one after).
const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(300);

/// How cudaenv talks to servers: one client (rustls, HTTP/1.1, proxies from
/// HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY, each host looked up
/// once: `dns`) and one command's `Timeouts`. Clones share both, so a stall
/// seen by one reader stops every other of the command.
///
/// HTTP/1.1 only, on purpose: a ranged download's ranges then each have a
/// connection of their own, where HTTP/2 multiplexed every range of a host
/// over one connection and its flow-control window. Over HTTP/2 a cold
/// install of a 1 GB stack from PyPI took 4.9–6.0 s and 7.8–9.8 s of CPU;
/// over HTTP/1.1 3.8–4.2 s and 6.5–6.7 s (docs/PERFORMANCE.md). The small
/// reads (index pages, metadata) cost the same either way.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    timeouts: Timeouts,
}

impl Http {
    /// A client that waits as `timeouts` says: no connection or read waits
    /// longer than its window (see `timeouts` for the rest).
    pub fn new(timeouts: Timeouts) -> Result<Http> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("cudaenv/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(timeouts.window)
            .read_timeout(timeouts.window)
            .dns_resolver(Arc::new(super::dns::SharedLookups::default()))
            .build()
            .map_err(|e| {
                Error::Install(InstallError::HttpClient {
                    reason: e.to_string(),
                })
            })?;
        Ok(Http { client, timeouts })
    }

    /// `Http::new` with the timeouts the command's environment sets
    /// (`CUDAENV_HTTP_TIMEOUT`).
    pub fn from_ctx(ctx: &Context) -> Result<Http> {
        Http::new(Timeouts::from_ctx(ctx)?)
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    pub(crate) fn timeouts(&self) -> &Timeouts {
        &self.timeouts
    }

    /// Reads `get.target` whole: `None` when there is no such thing (404,
    /// 410, no such file). See the module docs for the rules.
    pub(crate) async fn get(&self, get: Get<'_>) -> Result<Option<Body>> {
        let t = get.target;
        if let Some(path) = &t.path {
            return read_local(&get, path);
        }
        retrying(&t.shown, ATTEMPTS, FIRST_BACKOFF, &self.timeouts, || {
            self.get_once(&get)
        })
        .await
        .map_err(|e| from_source(e, get.from))
    }

    async fn get_once(&self, get: &Get<'_>) -> std::result::Result<Option<Body>, Attempt> {
        let mut req = self.client.get(get.target.url.clone());
        if let Some(accept) = get.accept {
            req = req.header(reqwest::header::ACCEPT, accept);
        }
        let (resp, started) = timeouts::send(req, &self.timeouts).await?;
        if answered(resp.status(), get.target, get.from)? == Answer::NotFound {
            return Ok(None);
        }
        if resp.content_length().is_some_and(|n| n > get.max as u64) {
            return Err(Attempt::Fail(get.too_large()));
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let url = resp.url().clone();
        let bytes = timeouts::body(resp, started, &self.timeouts, get.max)
            .await?
            .ok_or_else(|| Attempt::Fail(get.too_large()))?;
        Ok(Some(Body {
            bytes,
            url,
            content_type,
        }))
    }

    /// Bytes `start..end` of `target` (a `Range` request, or a seek in a
    /// `file://` file): `None` when there is no such file or the server
    /// ignores ranges (it would send the whole file: not read). Fewer bytes
    /// come back when the file ends first.
    pub(crate) async fn range(
        &self,
        target: &Target,
        start: u64,
        end: u64,
    ) -> Result<Option<Vec<u8>>> {
        let len = end.saturating_sub(start);
        if len == 0 {
            return Ok(Some(Vec::new()));
        }
        if let Some(path) = &target.path {
            return read_local_range(target, path, start, len);
        }
        retrying(
            &target.shown,
            ATTEMPTS,
            FIRST_BACKOFF,
            &self.timeouts,
            || async move {
                let req = self
                    .client
                    .get(target.url.clone())
                    .header(reqwest::header::RANGE, format!("bytes={start}-{}", end - 1));
                let (resp, started) = timeouts::send(req, &self.timeouts).await?;
                if answered(resp.status(), target, None)? == Answer::NotFound
                    || resp.status() != reqwest::StatusCode::PARTIAL_CONTENT
                {
                    return Ok(None);
                }
                let max = usize::try_from(len).unwrap_or(usize::MAX);
                timeouts::body(resp, started, &self.timeouts, max).await
            },
        )
        .await
    }
}

/// A URL to read: parsed once, with the text it is shown as (no
/// credentials) and, for a `file://` URL, the path it names.
pub(crate) struct Target {
    url: reqwest::Url,
    shown: String,
    path: Option<PathBuf>,
}

impl Target {
    /// `Err`: why the text is not a URL (the parser's words).
    pub(crate) fn parse(url: &DisplaySafeUrl) -> std::result::Result<Target, String> {
        let parsed = reqwest::Url::parse(url.expose()).map_err(|e| e.to_string())?;
        Ok(Target {
            path: local_path(url.expose()),
            url: parsed,
            shown: url.to_string(),
        })
    }
}

/// One small read (see the module docs).
pub(crate) struct Get<'a> {
    pub target: &'a Target,
    /// The most bytes the answer may have.
    pub max: usize,
    /// Why an answer past `max` is refused, as the error says it
    /// (`larger than any manifest`).
    pub too_large: String,
    /// The `Accept` header, if the server is to be asked for a format.
    pub accept: Option<&'static str>,
    /// The source the URL belongs to, for the error's hint.
    pub from: Option<SourceKind>,
}

impl Get<'_> {
    fn failed(&self, reason: String) -> Error {
        Error::Install(InstallError::Network {
            url: self.target.shown.clone(),
            reason,
            from: self.from,
        })
    }

    fn too_large(&self) -> Error {
        self.failed(self.too_large.clone())
    }
}

/// What a small read brought.
#[derive(Debug)]
pub(crate) struct Body {
    pub bytes: Vec<u8>,
    /// Where it came from, after redirects (relative links join onto it);
    /// the URL asked for when it is a `file://` one.
    pub url: reqwest::Url,
    /// The `Content-Type`, lower-cased (empty when none was sent, and for
    /// files).
    pub content_type: String,
}

/// A server's answer, as far as its status says.
#[derive(PartialEq)]
enum Answer {
    /// There is a body to read.
    Found,
    /// 404 or 410: no such thing.
    NotFound,
}

/// What `status` means for a read of `target`: a server error or "too many
/// requests" is worth another try, any other unsuccessful status but
/// "no such thing" is final.
fn answered(
    status: reqwest::StatusCode,
    target: &Target,
    from: Option<SourceKind>,
) -> std::result::Result<Answer, Attempt> {
    use reqwest::StatusCode;
    if matches!(status, StatusCode::NOT_FOUND | StatusCode::GONE) {
        Ok(Answer::NotFound)
    } else if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
        Err(Attempt::Retry(format!("server answered {status}")))
    } else if !status.is_success() {
        Err(Attempt::Fail(Error::Install(InstallError::Network {
            url: target.shown.clone(),
            reason: format!("server answered {status}"),
            from,
        })))
    } else {
        Ok(Answer::Found)
    }
}

/// Names the source of a failure the retry loop could not know.
fn from_source(e: Error, from: Option<SourceKind>) -> Error {
    match from {
        Some(kind) => e.from_source(kind),
        None => e,
    }
}

/// A `file://` read (see the module docs): no such file or directory is
/// `None`; anything else that stops the read is an error naming the path.
fn read_local(get: &Get<'_>, path: &Path) -> Result<Option<Body>> {
    let read = if path.is_dir() {
        read_dir_page(path, get.max as u64)
    } else {
        read_bounded(path, get.max as u64).map_err(|e| (path.to_path_buf(), e))
    };
    match read {
        Ok(bytes) => Ok(Some(Body {
            bytes,
            url: get.target.url.clone(),
            content_type: String::new(),
        })),
        Err((_, e)) if e.is_not_found() => Ok(None),
        Err((file, e)) => Err(get.failed(format!("cannot read {}: {e}", file.display()))),
    }
}

/// A directory as a static web server serves it: its `index.html`, else
/// the names of its entries (sorted), one a line, at most `max` bytes.
/// `Err` names the file or directory that could not be read.
fn read_dir_page(dir: &Path, max: u64) -> std::result::Result<Vec<u8>, (PathBuf, ReadError)> {
    let index = dir.join("index.html");
    match read_bounded(&index, max) {
        Err(e) if e.is_not_found() => {}
        page => return page.map_err(|e| (index, e)),
    }
    let failed = |e: ReadError| (dir.to_path_buf(), e);
    let mut names = Vec::new();
    let mut size = 0u64;
    for entry in std::fs::read_dir(dir).map_err(|e| failed(ReadError::Open(e)))? {
        let entry = entry.map_err(|e| failed(ReadError::Read(e)))?;
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        size += name.len() as u64 + 1;
        if size > max + 1 {
            return Err(failed(ReadError::TooBig { size, max }));
        }
        names.push(name);
    }
    names.sort();
    Ok(names.join("\n").into_bytes())
}

/// `len` bytes of a `file://` file from `start`, or fewer where it ends.
fn read_local_range(target: &Target, path: &Path, start: u64, len: u64) -> Result<Option<Vec<u8>>> {
    let failed = |e: ReadError| {
        Error::Install(InstallError::Network {
            url: target.shown.clone(),
            reason: format!("cannot read {}: {e}", path.display()),
            from: None,
        })
    };
    let mut file = match crate::os::fs::open_regular(path) {
        Ok((f, _)) => f,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(failed(e)),
    };
    file.seek(std::io::SeekFrom::Start(start))
        .map_err(|e| failed(ReadError::Read(e)))?;
    let mut bytes = Vec::new();
    file.take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(ReadError::Read(e)))?;
    Ok(Some(bytes))
}

/// The path a `file://` URL names (`None` for any other URL). Index pages
/// give percent-encoded URLs (`my%20mirror`), a base typed by hand may hold
/// the path as it is (`my mirror`, or a name with a `%` in it): the decoded
/// path, unless only the text after `file://` names something that exists.
pub(crate) fn local_path(url: &str) -> Option<PathBuf> {
    let raw = PathBuf::from(url.strip_prefix("file://")?);
    match reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
    {
        Some(decoded) if decoded.exists() || !raw.exists() => Some(decoded),
        _ => Some(raw),
    }
}

/// A short reason for a reqwest error, with its cause (reqwest's own message
/// alone is often just "error sending request").
/// The URL reqwest may name is shown without credentials.
pub fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(u) = e.url() {
        s = s.replace(u.as_str(), &DisplaySafeUrl::new(u.as_str()).to_string());
    }
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: reqwest::Url) -> Target {
        Target::parse(&DisplaySafeUrl::new(url.to_string())).unwrap()
    }

    fn dir_url(p: &Path) -> reqwest::Url {
        reqwest::Url::from_directory_path(p).unwrap()
    }

    fn file_url(p: &Path) -> reqwest::Url {
        reqwest::Url::from_file_path(p).unwrap()
    }

    fn get(t: &Target, max: usize) -> Get<'_> {
        Get {
            target: t,
            max,
            too_large: "too large".into(),
            accept: None,
            from: None,
        }
    }

    /// A directory on disk reads as a static web server serves it: its
    /// `index.html`, else its names; what is not there is no such thing.
    #[test]
    fn a_file_url_reads_as_a_static_server_serves_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("b.json"), "{}").unwrap();
        std::fs::write(d.join("a.json"), "[]").unwrap();
        let listing = target(dir_url(d));
        let body = read_local(&get(&listing, 1 << 20), listing.path.as_ref().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(body.bytes, b"a.json\nb.json");
        // Past the bound, the listing is refused like a file.
        let err = read_local(&get(&listing, 5), listing.path.as_ref().unwrap()).unwrap_err();
        assert!(err.to_string().contains("more than the 5"), "{err}");
        std::fs::write(d.join("index.html"), "<a href=x>x</a>").unwrap();
        let body = read_local(&get(&listing, 1 << 20), listing.path.as_ref().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(body.bytes, b"<a href=x>x</a>");
        let file = target(file_url(&d.join("a.json")));
        let body = read_local(&get(&file, 2), file.path.as_ref().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(body.bytes, b"[]");
        let err = read_local(&get(&file, 1), file.path.as_ref().unwrap()).unwrap_err();
        assert!(err.to_string().contains("a.json"), "{err}");
        let gone = target(dir_url(&d.join("nothing")));
        assert!(
            read_local(&get(&gone, 10), gone.path.as_ref().unwrap())
                .unwrap()
                .is_none()
        );
        let part = read_local_range(&file, file.path.as_ref().unwrap(), 1, 10).unwrap();
        assert_eq!(part.as_deref(), Some(&b"]"[..]));
    }

    #[test]
    fn file_urls_name_their_paths_decoded_or_as_typed() {
        let dir = tempfile::tempdir().unwrap();
        let spaced = dir.path().join("my mirror");
        std::fs::create_dir(&spaced).unwrap();
        let encoded = file_url(&spaced).to_string();
        assert!(encoded.ends_with("/my%20mirror"), "{encoded}");
        assert_eq!(local_path(&encoded), Some(spaced.clone()));
        let typed = format!("file://{}", spaced.display());
        assert_eq!(local_path(&typed), Some(spaced));
        assert_eq!(local_path("https://example.org/x"), None);
    }
}
