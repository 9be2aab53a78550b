//! `cudaenv ls-remote [SPEC]`: what a source can install.
//!
//! Without SPEC: the CUDA releases PyPI serves (from the embedded registry; no
//! network). With SPEC: the matching releases and the cuDNN versions PyPI has
//! for their CUDA major (reads the index).

use super::Env;
use crate::error::{Error, ExitCode, Result};
use crate::fetch::{self, Cache};
use crate::sources::pypi::{self, Index, PypiSource};
use crate::spec::Spec;
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only releases matching this spec (e.g. `12`, `12.4`).
    pub spec: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let stack = match &args.spec {
        None => None,
        Some(s) => match Spec::parse(s)? {
            Spec::Stack(st) => Some(st),
            _ => {
                return Err(Error::InvalidSpec {
                    input: s.escape_debug().to_string(),
                    reason: "expected a CUDA version such as `12` or `12.4`".into(),
                });
            }
        },
    };
    let releases: Vec<_> = super::install::pypi_releases()
        .into_iter()
        .filter(|r| stack.as_ref().is_none_or(|s| r.version.matches(&s.cuda)))
        .collect();
    let mut cudnn: Vec<(u32, Vec<String>)> = Vec::new();
    if stack.is_some() {
        let mut majors: Vec<u32> = releases.iter().map(|r| r.version.major()).collect();
        majors.dedup();
        let (index_url, _) = pypi::index_url(&env.ctx);
        let source = PypiSource::new(
            Index::new(&index_url, fetch::client()?)
                .with_cache(Cache::new(env.ctx.cache_dir()).dir(), false),
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Other(format!("cannot start the async runtime: {e}")))?;
        for m in majors {
            cudnn.push((m, rt.block_on(source.cudnn_versions(m))?));
        }
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Rel {
            version: String,
            date: Option<String>,
            source: &'static str,
        }
        #[derive(serde::Serialize)]
        struct Out {
            cuda: Vec<Rel>,
            cudnn: std::collections::BTreeMap<String, Vec<String>>,
        }
        ui::out_json(&Out {
            cuda: releases
                .iter()
                .map(|r| Rel {
                    version: r.version.to_string(),
                    date: r.date.clone(),
                    source: "pypi",
                })
                .collect(),
            cudnn: cudnn
                .into_iter()
                .map(|(m, v)| (format!("cuda{m}"), v))
                .collect(),
        })?;
        return Ok(ExitCode::Success);
    }
    let mut text = String::new();
    for r in &releases {
        text.push_str(&format!("{}  pypi\n", r.version));
    }
    for (m, v) in &cudnn {
        text.push_str(&format!("cudnn for CUDA {m} (pypi): {}\n", v.join(" ")));
    }
    ui::out(text.as_bytes())?;
    if releases.is_empty() {
        env.printer
            .hint("PyPI has NVIDIA wheels for CUDA 11.7, 11.8, 12.x and 13.x");
    }
    Ok(ExitCode::Success)
}
