//! `cudaenv prefix [SPEC]`: where a version's tree is.

use super::Env;
use crate::activation::select::{self, Active};
use crate::error::{Error, ExitCode, Result, StoreError};
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A version spec; default: the active version.
    pub spec: Option<Spec>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (_, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    match active {
        Active::Version(v) => env.outln(v.prefix().display())?,
        Active::System => {
            return Err(Error::Store(StoreError::SystemHasNoPrefix));
        }
    }
    Ok(ExitCode::Success)
}
