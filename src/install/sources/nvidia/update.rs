//! `cudaenv update`'s NVIDIA half: NVIDIA's newest redist manifests, fetched
//! into the cache beside the ones the binary embeds.
//!
//! The redist directories of the NVIDIA base URL (or the mirror:
//! `CUDAENV_NVIDIA_MIRROR`, the `nvidia-mirror` config key; `file://`
//! directories work the same) are listed through the command's `fetch::Http`
//! (retried, bounded at `MAX_BODY`, given up on when the server stalls), and:
//!
//! - a manifest the binary already knows is downloaded and checked against
//!   its pinned sha256; a mismatch means the server serves altered data and
//!   is reported, never used — unless `--trust-mirror` says the mirror
//!   legitimately serves its own manifests (it repackaged the archives), in
//!   which case its copy is stored and used instead;
//! - a new one is parsed with the same rules as any manifest (hostile paths,
//!   size lies) and stored under `$CUDAENV_ROOT/cache/manifests/{cuda,cudnn,cusparselt,cutensor}/`,
//!   written to a temporary file and renamed, so a reader never sees half a
//!   file. Installs then see it as one more release.
//!
//! Nothing is deleted: a manifest that disappears from the server stays usable.
//! What each manifest became is a `Row`; the command prints them.

use std::path::Path;

use futures_util::StreamExt;

use super::Product;
use crate::error::{Error, InstallError, Result};
use crate::install::fetch::{Get, Http, Target};
use crate::install::sources::SourceKind;
use crate::spec::safe_url::DisplaySafeUrl;

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub(crate) enum Status {
    /// New, valid, stored.
    New,
    /// Stored by an earlier update already.
    Cached,
    /// Known to this binary and identical to the pinned copy.
    Verified,
    /// Known, but the bytes differ from the pin: not used.
    Mismatch { expected: String, actual: String },
    /// Known, differs from the pin, stored anyway (`--trust-mirror`).
    Trusted { expected: String, actual: String },
    /// Not a valid manifest: not used.
    Invalid { reason: String },
    /// Could not be fetched.
    Failed { reason: String },
}

#[derive(Debug, serde::Serialize)]
/// One manifest of the listing, and what became of it.
pub(crate) struct Row {
    pub(crate) product: Product,
    pub(crate) manifest: String,
    pub(crate) url: DisplaySafeUrl,
    #[serde(flatten)]
    pub(crate) status: Status,
}

/// Lists the redist directories of `base` (NVIDIA's server or a mirror) and
/// fetches, checks and stores every manifest there, eight at a time; one row
/// per manifest, sorted. The listing unreachable is
/// `InstallError::ManifestsUnreachable`; a manifest that fails is a row.
pub(crate) async fn refresh(
    base: &str,
    cache: &Path,
    trust_mirror: bool,
    http: &Http,
) -> Result<Vec<Row>> {
    let mut jobs = Vec::new();
    for product in Product::ALL {
        let dir_url = format!("{base}/{}/", product.redist_dir());
        let listing = match get(http, &DisplaySafeUrl::new(dir_url.as_str())).await {
            Ok(Some(l)) => l,
            // A mirror may carry only some products (e.g. CUDA, no cuDNN).
            Ok(None) => continue,
            Err(reason) => {
                return Err(Error::Install(InstallError::ManifestsUnreachable {
                    url: DisplaySafeUrl::new(dir_url.as_str()).to_string(),
                    reason,
                }));
            }
        };
        for file in super::manifest_names(&listing) {
            jobs.push((
                product,
                DisplaySafeUrl::new(format!("{dir_url}{file}")),
                file,
            ));
        }
    }
    let rows = futures_util::stream::iter(jobs)
        .map(|(product, url, file)| async move {
            let status = one(http, cache, product, &url, &file, trust_mirror).await;
            Row {
                product,
                manifest: file,
                url,
                status,
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    let mut rows = rows;
    rows.sort_by(|a, b| (a.product, &a.manifest).cmp(&(b.product, &b.manifest)));
    Ok(rows)
}

/// Fetches one manifest and decides what it is (see the module docs).
async fn one(
    http: &Http,
    cache: &Path,
    product: Product,
    url: &DisplaySafeUrl,
    file: &str,
    trust_mirror: bool,
) -> Status {
    let dest = super::cache_dir(cache, product).join(file);
    let pin = super::pinned_manifest_sha256(product, file);
    if pin.is_none() && dest.is_file() && !trust_mirror {
        return Status::Cached;
    }
    let bytes = match get(http, url).await {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Status::Failed {
                reason: "not found".into(),
            };
        }
        Err(reason) => return Status::Failed { reason },
    };
    let actual = crate::os::hash::sha256(&bytes);
    let mut status = Status::New;
    if let Some(expected) = pin {
        if actual == expected {
            // The embedded copy is this one; a stale trusted override goes.
            let _ = std::fs::remove_file(&dest);
            return Status::Verified;
        }
        if !trust_mirror {
            return Status::Mismatch {
                expected: expected.to_string(),
                actual,
            };
        }
        status = Status::Trusted {
            expected: expected.to_string(),
            actual,
        };
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(_) => {
            return Status::Invalid {
                reason: "not UTF-8".into(),
            };
        }
    };
    if let Err(reason) = super::parse_manifest(file, text, product) {
        return Status::Invalid { reason };
    }
    match store(&dest, &bytes) {
        Ok(()) => status,
        Err(e) => Status::Failed {
            reason: e.to_string(),
        },
    }
}

fn store(dest: &Path, bytes: &[u8]) -> Result<()> {
    crate::os::write_atomically(dest, bytes, None)
}

/// Limits what a server can make us hold in memory (manifests are < 200 KB).
const MAX_BODY: usize = 16 << 20;

/// Reads a listing or a manifest (`http(s)://`, or `file://`: a directory
/// reads as its file names) through the command's HTTP layer: `None` when
/// there is no such thing, else why it could not be read.
async fn get(http: &Http, url: &DisplaySafeUrl) -> std::result::Result<Option<Vec<u8>>, String> {
    let target = Target::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    let got = http
        .get(Get {
            target: &target,
            max: MAX_BODY,
            too_large: "larger than any manifest".into(),
            accept: None,
            from: Some(SourceKind::Nvidia),
        })
        .await;
    match got {
        Ok(body) => Ok(body.map(|b| b.bytes)),
        // The reason alone: the caller names the URL.
        Err(Error::Install(
            InstallError::Network { reason, .. } | InstallError::NetworkStalled { reason, .. },
        )) => Err(reason),
        Err(e) => Err(e.to_string()),
    }
}
