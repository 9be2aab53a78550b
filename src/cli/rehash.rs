//! `cudaenv rehash`: rebuild the shims directory.
//!
//! Install, uninstall and link run this themselves; the command is for a store
//! changed by hand, or shims left pointing at an older cudaenv binary.

use super::Env;
use crate::activation::shims;
use crate::error::{ExitCode, Result};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(env: &Env, _args: Args) -> Result<ExitCode> {
    let store = crate::store::Store::configured(&env.ctx)?;
    let r = shims::rehash(&store, &env.printer)?;
    env.printer.success(format!(
        "{} shims in {} ({} added, {} removed)",
        r.shims.len(),
        store.shims_dir().display(),
        r.added.len(),
        r.removed.len()
    ));
    Ok(ExitCode::Success)
}
