//! `cudaenv root`: print $CUDAENV_ROOT.

use super::Env;
use crate::error::{ExitCode, Result};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(env: &Env, _args: Args) -> Result<ExitCode> {
    env.outln(env.ctx.root().display())?;
    Ok(ExitCode::Success)
}
