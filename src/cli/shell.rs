//! `cudaenv shell [SPEC | --unset]`: select a version for the current shell.
//!
//! A program cannot change its parent shell, so this prints code; the shell
//! function installed by `cudaenv init` evaluates it. The code sets (or unsets)
//! `CUDAENV_VERSION` and makes the same transition the prompt hook would
//! (`shell::session`): the previous activation is undone exactly, then the new
//! one applied, so `--unset` gives back precisely what was there before.

use super::Env;
use crate::activation::select::{self, Origin, Selection};
use crate::activation::shell::Shell;
use crate::activation::shell::session;
use crate::context::env_vars;
use crate::error::{ActivationError, Error, ExitCode, Result};
use crate::spec::Spec;

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
    /// Set by the shell function `cudaenv init` defines, which evaluates the
    /// code; without it, the code is printed for the user to evaluate, with
    /// a word on how to enable the integration.
    #[arg(long, hide = true)]
    pub integrated: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let shell = super::env::pick_shell(env, args.shell)?;
    let store = crate::store::Store::configured(&env.ctx)?;
    if args.unset {
        let ctx = env.ctx.with_var(env_vars::CUDAENV_VERSION, None);
        let mut code = shell.assign(env_vars::CUDAENV_VERSION, None)?;
        // Fall back to what the directory selects. If that is broken (a bad
        // pin, a version not installed), still unset, and undo the old
        // version rather than leave its paths in place.
        let t = session::transition(&ctx, &store, select::active(&ctx).map(|(_, a)| a))?;
        if let Some(e) = &t.problem {
            env.printer
                .warn(format!("{e}; this shell falls back to the system toolkit"));
        }
        code.extend(shell.render(&t.delta)?);
        env.out(&code)?;
        if !args.integrated {
            not_integrated(env, shell, "--unset");
        }
        return Ok(ExitCode::Success);
    }
    let Some(spec) = args.spec else {
        return match env.ctx.var(env_vars::CUDAENV_VERSION) {
            Some(v) => env.outln(v).map(|_| ExitCode::Success),
            None => Err(Error::Activation(ActivationError::NoShellVersion {
                variable: env_vars::CUDAENV_VERSION,
            })),
        };
    };
    let active = select::resolve_required(
        &store,
        &Selection {
            spec: spec.clone(),
            origin: Origin::Argument,
        },
    )?;
    let value = spec.to_string();
    let ctx = env
        .ctx
        .with_var(env_vars::CUDAENV_VERSION, Some(value.as_ref()));
    let mut code = shell.assign(env_vars::CUDAENV_VERSION, Some(value.as_ref()))?;
    let t = session::transition(&ctx, &store, Ok(active))?;
    for note in &t.delta.notes {
        env.printer.warn(note);
    }
    code.extend(shell.render(&t.delta)?);
    env.out(&code)?;
    if !args.integrated {
        not_integrated(env, shell, &value);
    }
    Ok(ExitCode::Success)
}

/// Run without the shell function, `cudaenv shell` can only print code (a
/// program cannot change its parent shell): say so, and how to enable the
/// function, as pyenv does; the code still goes to stdout for `eval`.
fn not_integrated(env: &Env, shell: Shell, spec: &str) {
    let (rc, line) = shell.rc_file();
    let run = match shell {
        Shell::Bash | Shell::Zsh => format!("eval \"$(cudaenv shell {spec})\""),
        Shell::Fish => format!("cudaenv shell {spec} | source"),
        Shell::Pwsh => format!("cudaenv shell {spec} | Out-String | Invoke-Expression"),
        Shell::Cmd => format!(r#"for /f "delims=" %i in ('cudaenv shell {spec}') do @%i"#),
    };
    env.printer.warn(format!(
        "shell integration is not enabled, so this shell is unchanged: the code printed is for your shell to run (`{run}`)"
    ));
    env.printer.hint(format!(
        "to enable it, add `{line}` to {rc} and open a new shell"
    ));
}
