//! `cudaenv exec [--version SPEC] -- CMD [ARGS…]`: run a command activated.
//!
//! The child gets the caller's environment with the activation applied, and
//! replaces this process (`execvp`), so signals and exit status are the
//! command's own. On Windows, which has no `exec`, cudaenv starts it, waits
//! and exits with its exit code (`os::exec_command`).

use std::ffi::OsString;

use super::Env;
use crate::activation;
use crate::activation::select;
use crate::context::env_vars;
use crate::error::{ActivationError, CliError, Error, ExitCode, Result};
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run with this version instead of the selected one.
    #[arg(long = "version", short = 'V', value_name = "SPEC")]
    pub spec: Option<Spec>,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (_, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    let delta = activation::plan(
        &env.ctx,
        &crate::store::Store::configured(&env.ctx)?,
        &active,
    )?;
    for note in &delta.notes {
        env.printer.warn(note);
    }
    let mut vars = env.ctx.vars_map();
    delta.apply(&mut vars);
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    // PATH lookup must use the activated PATH, not ours: resolve it explicitly.
    let path = vars.get(std::ffi::OsStr::new(env_vars::PATH));
    let resolved = activation::find_in_path(program, path).unwrap_or_else(|| program.into());
    let mut cmd = std::process::Command::new(resolved);
    crate::os::set_arg0(&mut cmd, program);
    cmd.args(rest).env_clear().envs(&vars);
    let err = crate::os::exec_command(cmd);
    Err(match err.kind() {
        std::io::ErrorKind::NotFound => Error::Activation(ActivationError::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: super::which::available_in(
                &crate::store::Store::configured(&env.ctx)?,
                program,
            )
            .unwrap_or_default(),
        }),
        _ => Error::Cli(CliError::CannotRun {
            command: program.to_string_lossy().into_owned(),
            source: err,
        }),
    })
}
