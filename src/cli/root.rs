//! `cudaenv root`: print $CUDAENV_ROOT.

use super::Env;
use crate::error::{ExitCode, Result};
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(env: &Env, _args: Args) -> Result<ExitCode> {
    ui::outln(env.ctx.root().display())?;
    Ok(ExitCode::Success)
}
