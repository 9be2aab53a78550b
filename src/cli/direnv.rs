//! `cudaenv direnv`: the direnv library that gives `.envrc` files
//! `use cudaenv [SPEC]`.
//!
//! direnv evaluates `.envrc` in bash and restores the environment itself on
//! leaving, so the function only has to print what `cudaenv env` prints and
//! tell direnv which files to watch: every `.cuda-version` and `.tool-versions`
//! from the directory up, the global version file and the shims' generation
//! file (rewritten by every install, uninstall and link). The code is
//! `src/activation/shell/scripts/direnvrc.bash`, with this binary's absolute path written in.

use super::Env;
use crate::activation::shell::init;
use crate::error::{Error, ExitCode, Result};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(env: &Env, _args: Args) -> Result<ExitCode> {
    let exe = std::env::current_exe().map_err(Error::io(
        "cannot find the running executable",
        "/proc/self/exe",
    ))?;
    env.out(&init::render_direnvrc(&exe)?)?;
    Ok(ExitCode::Success)
}
