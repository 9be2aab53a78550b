//! `cudaenv init [SHELL] [--no-hook]`: shell integration.
//!
//! With a shell, prints the code for its rc file (see `shell::init`). Without
//! one, explains the setup for the shell named by `$SHELL`, on stderr, so that
//! a mistaken `eval "$(cudaenv init)"` evaluates nothing.

use super::Env;
use crate::activation::shell::Shell;
use crate::activation::shell::init::{self, Hook};
use crate::context::env_vars;
use crate::error::{Error, ExitCode, Result};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to print code for; without it, explain the setup.
    #[arg(value_enum)]
    pub shell: Option<Shell>,
    /// Only put the shims on PATH and define the `cudaenv` function; no prompt hook.
    #[arg(long)]
    pub no_hook: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let store = Store::new(env.ctx.root());
    let Some(shell) = args.shell else {
        explain(env);
        return Ok(ExitCode::Success);
    };
    let exe = std::env::current_exe().map_err(Error::io(
        "cannot find the running executable",
        "/proc/self/exe",
    ))?;
    let hook = if args.no_hook {
        Hook::Omit
    } else {
        Hook::Install
    };
    env.out(&init::render(shell, &exe, &store.shims_dir(), hook)?)?;
    Ok(ExitCode::Success)
}

fn explain(env: &Env) {
    let detected = env.ctx.var_os(env_vars::SHELL).and_then(Shell::from_path);
    let shell = detected.unwrap_or(Shell::Bash);
    let (file, line) = shell.rc_file();
    let p = &env.printer;
    match detected {
        Some(s) => p.info(format!("Detected shell: {s} (from $SHELL).")),
        None => p.info("Could not tell the shell from $SHELL; showing bash."),
    }
    p.info(format!(
        "\nAdd this line at the end of {file}, then open a new shell:\n\n    {line}\n"
    ));
    p.info(
        "It puts the shims on PATH, makes `cudaenv shell VERSION` change the current shell, \
         and activates the version pinned by .cuda-version whenever you change directory \
         (PATH, LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH, CUDNN_PATH); leaving restores what you had.",
    );
    p.info(format!(
        "For shims only (no prompt hook), use `cudaenv init {shell} --no-hook`. \
         Other shells: `cudaenv init bash|zsh|fish|pwsh`. More: `cudaenv help shell`."
    ));
    p.info(format!(
        "Tab completion of commands and installed versions: `cudaenv completions {shell}` \
         (`cudaenv completions --help` says where it goes)."
    ));
}
