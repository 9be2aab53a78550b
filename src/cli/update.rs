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
//! (`registry/nvidia-redist.toml`), so installs work offline; what `update`
//! fetches beside them, and how each is checked, is
//! `sources::nvidia::update`'s. A manifest that differs from its pin or does
//! not parse exits 4; one that could not be fetched is a warning.

use super::Env;
use crate::error::{ExitCode, Result};
use crate::install::fetch::Http;
use crate::install::sources::nvidia::update::{self, Row, Status};
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
            update::refresh(&base, &cache, args.trust_mirror, &http)
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
                Status::New => env.printer.success(format!("new: {} {}", r.product.title(), r.manifest)),
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
