//! `cudaenv env [--shell S | --format dockerfile|github] [SPEC]`: print
//! activation code for a version, for a shell, a Dockerfile or a CI step
//! (`shell::container`).

use super::Env;
use crate::activation;
use crate::activation::select::{self, Active};
use crate::activation::shell::{Shell, container};
use crate::context::env_vars;
use crate::error::{Error, ExitCode, Result, SpecError};
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to print code for (default: from $SHELL, else bash).
    #[arg(long, value_enum)]
    pub shell: Option<Shell>,
    /// Print for a Dockerfile (`ENV` lines) or a GitHub Actions step (lines
    /// for `$GITHUB_ENV`) instead of a shell; both include NVIDIA_REQUIRE_CUDA.
    #[arg(long, value_enum, conflicts_with = "shell")]
    pub format: Option<Format>,
    /// A version spec; default: the active version.
    pub spec: Option<Spec>,
}

/// Where the activation goes, other than a shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `ENV` lines for a Dockerfile, prepending to the image's own PATH.
    Dockerfile,
    /// `NAME=value` lines to append to `$GITHUB_ENV`, for the steps that follow.
    Github,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (_, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    let store = crate::store::Store::configured(&env.ctx)?;
    let Some(format) = args.format else {
        let shell = pick_shell(env, args.shell)?;
        let delta = activation::plan(&env.ctx, &store, &active)?;
        for note in &delta.notes {
            env.printer.warn(note);
        }
        env.out(&shell.render(&delta)?)?;
        return Ok(ExitCode::Success);
    };
    let Active::Version(v) = &active else {
        return Err(Error::Spec(SpecError::InvalidSpec {
            input: "system".into(),
            reason: "`env --format` prints what a version needs; `system` needs nothing".into(),
        }));
    };
    let out = match format {
        Format::Dockerfile => {
            // The image's PATH, not this machine's, is what the version is put in front of.
            let bare = env
                .ctx
                .with_var(env_vars::PATH, None)
                .with_var(env_vars::LD_LIBRARY_PATH, None);
            let delta = activation::plan(&bare, &store, &active)?;
            container::dockerfile(v.name.as_str(), &delta, v.cuda())?
        }
        Format::Github => {
            let delta = activation::plan(&env.ctx, &store, &active)?;
            container::github(&delta, v.cuda())?
        }
    };
    env.out(&out)?;
    Ok(ExitCode::Success)
}

/// The explicit choice, else the shell named by `$SHELL`, else bash.
pub(super) fn pick_shell(env: &Env, explicit: Option<Shell>) -> Result<Shell> {
    Ok(explicit
        .or_else(|| env.ctx.var_os(env_vars::SHELL).and_then(Shell::from_path))
        .unwrap_or(Shell::Bash))
}
