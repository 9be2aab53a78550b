//! `cudaenv shell [SPEC | --unset]`: select a version for the current shell.
//!
//! A program cannot change its parent shell, so this prints code; the shell
//! function installed by `cudaenv init` evaluates it. The code sets (or unsets)
//! `CUDAENV_VERSION` and applies the matching activation.

use super::Env;
use crate::activate;
use crate::env_vars;
use crate::error::{Error, ExitCode, Result};
use crate::select::{self, Active, Origin, Selection};
use crate::shell::Shell;
use crate::spec::Spec;
use crate::store::Store;
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The spec for this shell; without it, print the current shell selection.
    pub spec: Option<Spec>,
    /// Stop overriding: go back to .cuda-version / global selection.
    #[arg(long, conflicts_with = "spec")]
    pub unset: bool,
    /// The shell to print code for (default: from $SHELL).
    #[arg(long, value_enum)]
    pub shell: Option<Shell>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let shell = super::env::pick_shell(env, args.shell)?;
    let store = Store::new(env.ctx.root());
    if args.unset {
        let ctx = env.ctx.with_var(env_vars::CUDAENV_VERSION, None);
        let mut code = shell.assign(env_vars::CUDAENV_VERSION, None)?;
        // Fall back to what the directory selects. If that is broken (a bad
        // pin, a version not installed), still unset, and deactivate to
        // `system` rather than leave the old version's paths in place.
        let active = match select::active(&ctx) {
            Ok((_, active)) => active,
            Err(e) => {
                env.printer
                    .warn(format!("{e}; this shell falls back to the system toolkit"));
                Active::System
            }
        };
        code.extend(shell.render(&activate::plan(&ctx, &store, &active)?)?);
        ui::out(&code)?;
        return Ok(ExitCode::Success);
    }
    let Some(spec) = args.spec else {
        return match env.ctx.var(env_vars::CUDAENV_VERSION) {
            Some(v) => ui::outln(v).map(|_| ExitCode::Success),
            None => Err(Error::Other(format!(
                "no shell-specific version is set ({} is unset)",
                env_vars::CUDAENV_VERSION
            ))),
        };
    };
    let active = select::resolve_required(
        &store,
        &Selection {
            spec: spec.clone(),
            origin: Origin::Argument,
        },
    )?;
    let mut code = shell.assign(env_vars::CUDAENV_VERSION, Some(spec.to_string().as_ref()))?;
    code.extend(shell.render(&activate::plan(&env.ctx, &store, &active)?)?);
    ui::out(&code)?;
    Ok(ExitCode::Success)
}
