//! `cudaenv env [--shell S] [SPEC]`: print activation code for a version.

use super::Env;
use crate::activate;
use crate::env_vars;
use crate::error::{ExitCode, Result};
use crate::select;
use crate::shell::Shell;
use crate::spec::Spec;
use crate::store::Store;
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to print code for (default: from $SHELL, else bash).
    #[arg(long, value_enum)]
    pub shell: Option<Shell>,
    /// A version spec; default: the active version.
    pub spec: Option<Spec>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let shell = pick_shell(env, args.shell)?;
    let (_, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    let delta = activate::plan(&env.ctx, &Store::new(env.ctx.root()), &active)?;
    for note in &delta.notes {
        env.printer.warn(note);
    }
    ui::out(&shell.render(&delta)?)?;
    Ok(ExitCode::Success)
}

/// The explicit choice, else the shell named by `$SHELL`, else bash.
pub(super) fn pick_shell(env: &Env, explicit: Option<Shell>) -> Result<Shell> {
    Ok(explicit
        .or_else(|| env.ctx.var_os(env_vars::SHELL).and_then(Shell::from_path))
        .unwrap_or(Shell::Bash))
}
