//! `cudaenv which CMD`: the full path of CMD in the active version.
//!
//! When the active version lacks it, the error names the installed versions
//! that have it, so "nvcc: not found" turns into something to do.

use std::ffi::{OsStr, OsString};

use super::Env;
use crate::activation;
use crate::activation::select::{self, Active};
use crate::context::env_vars;
use crate::error::{ActivationError, Error, ExitCode, Result, SpecError};
use crate::os::path_list;
use crate::store::Store;
use crate::store::toolkit;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A command name such as `nvcc` or `ptxas`.
    pub command: OsString,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let cmd = args.command.as_os_str();
    if cmd.is_empty()
        || crate::os::OsStrBytes::as_bytes(cmd)
            .iter()
            .any(|&b| b == b'/' || b == b'\\')
    {
        return Err(Error::Spec(SpecError::InvalidName {
            name: cmd.to_string_lossy().into_owned(),
            reason: "give a command name, not a path".into(),
        }));
    }
    let store = crate::store::Store::configured(&env.ctx)?;
    let (_, active) = select::active(&env.ctx)?;
    let found = match &active {
        Active::Version(v) => toolkit::find_command(&v.bin_dirs(), cmd),
        Active::System => system_which(env, &store, cmd)?,
    };
    if let Some(path) = found {
        env.outln(path.display())?;
        return Ok(ExitCode::Success);
    }
    Err(Error::Activation(ActivationError::CommandNotFound {
        command: cmd.to_string_lossy().into_owned(),
        version: active.name(),
        available_in: available_in(&store, cmd)?,
    }))
}

/// The installed versions whose bin directories hold `cmd`.
pub(super) fn available_in(store: &Store, cmd: &OsStr) -> Result<Vec<String>> {
    Ok(store
        .list()?
        .into_iter()
        .filter(|v| toolkit::find_command(&v.bin_dirs(), cmd).is_some())
        .map(|v| v.name.to_string())
        .collect())
}

/// With `system` active: search PATH without cudaenv's versions and shims
/// (a shim would only lead back to cudaenv).
fn system_which(env: &Env, store: &Store, cmd: &OsStr) -> Result<Option<std::path::PathBuf>> {
    let delta = activation::plan(&env.ctx, store, &Active::System)?;
    let mut vars = env.ctx.vars_map();
    delta.apply(&mut vars);
    let shims = store.shims_dir();
    let path: Option<OsString> = vars.get(OsStr::new(env_vars::PATH)).map(|p| {
        path_list::join(path_list::entries(p).filter(|d| std::path::Path::new(d) != shims))
    });
    Ok(activation::find_in_path(cmd, path.as_ref()))
}
