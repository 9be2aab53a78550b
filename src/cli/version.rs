//! `cudaenv version`: the active version and the reason it is active.

use serde::Serialize;

use super::Env;
use crate::activation::select;
use crate::error::{ExitCode, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Print only the name.
    #[arg(long, conflicts_with = "json")]
    pub bare: bool,
}

#[derive(Serialize)]
struct Out {
    name: String,
    spec: String,
    origin: String,
    origin_kind: &'static str,
    origin_path: Option<String>,
    prefix: Option<String>,
    /// `user` or `system`: the root the version lives in (none for `system`).
    location: Option<crate::store::Location>,
    cuda: Option<String>,
    cudnn: Option<String>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let store = crate::store::Store::configured(&env.ctx)?;
    let (selection, active) = select::active_in(&env.ctx, &store)?;
    if args.bare {
        env.outln(active.name())?;
    } else if args.json {
        let v = active.installed();
        env.out_json(&Out {
            name: active.name(),
            spec: selection.spec.to_string(),
            origin: selection.origin.to_string(),
            origin_kind: selection.origin.kind(),
            origin_path: selection.origin.path().map(|p| p.display().to_string()),
            prefix: v.map(|v| v.prefix().display().to_string()),
            location: v.map(|v| store.location(v)),
            cuda: v.and_then(|v| v.cuda()).map(|c| c.to_string()),
            cudnn: v.and_then(|v| v.cudnn()).map(|c| c.to_string()),
        })?;
    } else {
        env.outln(format!("{} (set by {})", active.name(), selection.origin))?;
    }
    Ok(ExitCode::Success)
}
