//! `cudaenv update`: refresh the release list from PyPI and fetch NVIDIA's
//! newest redist manifests.
//!
//! First the live catalogue (`sources::catalogue`: PyPI's `cuda-toolkit`
//! metapackage, through the configured index) is read and stored; it alone
//! makes new CUDA releases installable from PyPI. Then NVIDIA's manifests:
//! where NVIDIA's server (or the mirror) cannot be reached, that is a
//! warning as long as the catalogue was refreshed; exit 5 only when
//! neither could be read.
//!
//! The binary embeds every manifest known when it was built
//! (`registry/nvidia-redist.toml`), so installs work offline. `update` lists
//! the redist directories of the NVIDIA base URL (or the mirror:
//! `CUDAENV_NVIDIA_MIRROR`, the `nvidia-mirror` config key; `file://`
//! directories work the same) through the command's `fetch::Http` (retried,
//! bounded at `MAX_BODY`, given up on when the server stalls), and:
//!
//! - a manifest the binary already knows is downloaded and checked against
//!   its pinned sha256; a mismatch means the server serves altered data and
//!   is reported (exit 4), never used — unless `--trust-mirror` says the
//!   mirror legitimately serves its own manifests (it repackaged the
//!   archives), in which case its copy is stored and used instead;
//! - a new one is parsed with the same rules as any manifest (hostile paths,
//!   size lies) and stored under `$CUDAENV_ROOT/cache/manifests/{cuda,cudnn,cusparselt,cutensor}/`,
//!   written to a temporary file and renamed, so a reader never sees half a
//!   file. Installs then see it as one more release.
//!
//! Nothing is deleted: a manifest that disappears from the server stays usable.

use std::path::Path;

use futures_util::StreamExt;

use super::Env;
use crate::error::{Error, ExitCode, InstallError, Result};
use crate::install::fetch::{Get, Http, Target};
use crate::install::sources::SourceKind;
use crate::install::sources::nvidia::{self, Product};
use crate::install::sources::remote::{self, CatalogueUpdate};
use crate::spec::safe_url::DisplaySafeUrl;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Use the mirror's manifests even where they differ from the ones pinned
    /// in cudaenv (for mirrors that repackage NVIDIA's archives).
    #[arg(long)]
    pub trust_mirror: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
enum Status {
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
struct Row {
    product: Product,
    manifest: String,
    url: DisplaySafeUrl,
    #[serde(flatten)]
    status: Status,
}

/// What `update --json` prints.
#[derive(serde::Serialize)]
struct Report<'a> {
    /// The PyPI release list, or why it could not be read.
    catalogue: std::result::Result<&'a CatalogueUpdate, String>,
    /// Why NVIDIA's manifest directories could not be listed, if they could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    nvidia_error: Option<String>,
    manifests: &'a [Row],
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let settings = env.settings()?;
    let base = settings.nvidia_base()?;
    let http = Http::from_ctx(&env.ctx)?;
    let cache = env.ctx.cache_dir();
    let (catalogue, nvidia) = super::block_on(async {
        Ok(tokio::join!(
            remote::update_catalogue(&env.ctx, &settings, &http),
            update(&base, &cache, args.trust_mirror, &http)
        ))
    })?;
    let (rows, nvidia_error) = match nvidia {
        Ok(rows) => (rows, None),
        Err(e) if e.exit_code() == ExitCode::Network => (Vec::new(), Some(e)),
        Err(e) => return Err(e),
    };
    let new = rows
        .iter()
        .filter(|r| matches!(r.status, Status::New))
        .count();
    let bad: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                Status::Mismatch { .. } | Status::Invalid { .. } | Status::Failed { .. }
            )
        })
        .collect();
    if args.json {
        env.out_json(&Report {
            catalogue: catalogue.as_ref().map_err(|e| e.to_string()),
            nvidia_error: nvidia_error.as_ref().map(|e| e.to_string()),
            manifests: &rows,
        })?;
    } else {
        match &catalogue {
            Ok(c) => {
                for s in c.skipped.iter().filter(|s| !s.reason.starts_with("yanked")) {
                    env.printer
                        .warn(format!("cuda-toolkit {} left out: {}", s.version, s.reason));
                }
                env.printer.info(format!(
                    "{} CUDA releases on {} (newest {}){}",
                    c.releases,
                    c.index,
                    c.newest.as_deref().unwrap_or("none"),
                    if c.new.is_empty() {
                        String::new()
                    } else {
                        format!(", new: {}", c.new.join(" "))
                    }
                ));
            }
            Err(e) => env
                .printer
                .warn(format!("cannot refresh the release list from PyPI: {e}")),
        }
        if let Some(e) = &nvidia_error {
            env.printer.warn(format!(
                "cannot reach NVIDIA's manifests: {e}{}",
                if catalogue.is_ok() {
                    "; the release list from PyPI is up to date"
                } else {
                    ""
                }
            ));
            if let Some(h) = e.hint_msg() {
                env.printer.hint_msg(&h);
            }
        }
        for r in &rows {
            match &r.status {
                Status::New => env.printer.success(format!("new: {} {}", name(r.product), r.manifest)),
                Status::Mismatch { expected, actual } => env.printer.warn(format!(
                    "{} does not match its pinned sha256 (expected {expected}, got {actual}); ignored",
                    r.url
                )),
                Status::Invalid { reason } => {
                    env.printer.warn(format!("{} is not a valid manifest ({reason}); ignored", r.url))
                }
                Status::Failed { reason } => env.printer.warn(format!("{}: {reason}", r.url)),
                Status::Trusted { .. } => env.printer.warn(format!(
                    "{} differs from the manifest pinned in cudaenv; using the mirror's copy (--trust-mirror)",
                    r.url
                )),
                Status::Cached | Status::Verified => {}
            }
        }
        if nvidia_error.is_none() {
            env.printer.info(format!(
                "{} manifests at {}: {new} new, {} problems",
                rows.len(),
                DisplaySafeUrl::new(base.as_str()),
                bad.len()
            ));
        }
    }
    if bad
        .iter()
        .any(|r| matches!(r.status, Status::Mismatch { .. } | Status::Invalid { .. }))
    {
        return Ok(ExitCode::Integrity);
    }
    // PyPI alone suffices: NVIDIA's trouble fails the update only when the
    // release list could not be refreshed either.
    match catalogue {
        Ok(_) => Ok(ExitCode::Success),
        Err(e) if nvidia_error.is_some() || !bad.is_empty() => Err(e),
        Err(_) => Ok(ExitCode::Success),
    }
}

fn name(p: Product) -> &'static str {
    p.title()
}

async fn update(base: &str, cache: &Path, trust_mirror: bool, http: &Http) -> Result<Vec<Row>> {
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
        for file in nvidia::manifest_names(&listing) {
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

async fn one(
    http: &Http,
    cache: &Path,
    product: Product,
    url: &DisplaySafeUrl,
    file: &str,
    trust_mirror: bool,
) -> Status {
    let dest = nvidia::cache_dir(cache, product).join(file);
    let pin = nvidia::pinned_manifest_sha256(product, file);
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
    if let Err(reason) = nvidia::parse_manifest(file, text, product) {
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
