//! `cudaenv local [SPEC] [--unset]`: the per-directory pin (.cuda-version).

use super::Env;
use crate::activation::select;
use crate::activation::version_file;
use crate::error::{ActivationError, Error, ExitCode, Result};
use crate::machine::compat::FrameworkReq;
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The spec to pin; without it, print the pin that applies here.
    pub spec: Option<Spec>,
    /// Remove .cuda-version from the current directory.
    #[arg(long, conflicts_with = "spec")]
    pub unset: bool,
    /// Pin even if no installed version matches yet.
    #[arg(short, long)]
    pub force: bool,
    /// Pin the stack a framework release needs (`torch==2.4`, `tensorflow==2.10`;
    /// a bare name uses the release installed in the current Python environment).
    #[arg(long = "for", value_name = "FRAMEWORK[==VERSION]", conflicts_with_all = ["spec", "unset"])]
    pub for_framework: Option<FrameworkReq>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let path = env.ctx.cwd().join(version_file::FILE_NAME);
    if args.unset {
        match std::fs::remove_file(&path) {
            Ok(()) => env.printer.info(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => env
                .printer
                .info(format!("no {} here", version_file::FILE_NAME)),
            Err(e) => return Err(Error::io("cannot remove", &path)(e)),
        }
        return Ok(ExitCode::Success);
    }
    let spec = match &args.for_framework {
        Some(req) => Some(spec_for(env, req)?),
        None => args.spec,
    };
    match spec {
        Some(spec) => {
            warn_if_missing(env, &spec, IfMissing::from_force(args.force));
            version_file::write(&path, &spec)?;
            env.printer
                .success(format!("pinned {spec} in {}", path.display()));
        }
        None => match version_file::find(env.ctx.cwd())? {
            Some(p) => env.outln(&p.spec)?,
            None => {
                return Err(Error::Activation(ActivationError::NoPin {
                    tool_versions: crate::activation::version_file::TOOL_VERSIONS,
                    file: version_file::FILE_NAME,
                    dir: env.ctx.cwd().to_path_buf(),
                    installed: crate::store::Store::configured(&env.ctx)?
                        .list()?
                        .into_iter()
                        .map(|v| v.name.to_string())
                        .collect(),
                }));
            }
        },
    }
    Ok(ExitCode::Success)
}

/// The stack a framework needs, chosen for this machine, with the reason said.
pub(super) fn spec_for(env: &Env, req: &FrameworkReq) -> Result<Spec> {
    let machine = super::compat::this_machine(env, &Default::default())?;
    super::compat::stack_for_cli(env, req, &machine).map(Spec::Stack)
}

/// Whether pinning a spec that matches no installed version is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IfMissing {
    /// Warn, with the command that installs it.
    Warn,
    /// Say nothing: `--force` asked for the pin as it is.
    Pin,
}

impl IfMissing {
    pub(super) fn from_force(force: bool) -> IfMissing {
        if force {
            IfMissing::Pin
        } else {
            IfMissing::Warn
        }
    }
}

/// A pin to something not installed is allowed (a project may be pinned before
/// the install), but the user hears about it unless `--force` was given.
pub(super) fn warn_if_missing(env: &Env, spec: &Spec, if_missing: IfMissing) {
    if if_missing == IfMissing::Pin {
        return;
    }
    let Ok(store) = crate::store::Store::configured(&env.ctx) else {
        return;
    };
    if let Ok(None) = select::resolve(&store, spec) {
        env.printer.warn(format!("`{spec}` is not installed yet"));
        env.printer
            .hint_msg(&crate::activation::error::how_to_get_msg(
                &spec.to_string(),
                matches!(spec, crate::spec::Spec::Name(_)),
            ));
    }
}
