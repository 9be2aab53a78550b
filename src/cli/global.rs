//! `cudaenv global [SPEC]`: the version used where nothing else pins one.

use super::Env;
use crate::activation::version_file;
use crate::error::{Error, ExitCode, Result};
use crate::spec::Spec;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The spec to make global; without it, print the global version.
    pub spec: Option<Spec>,
    /// Remove the global version file (fall back to `system`).
    #[arg(long, conflicts_with = "spec")]
    pub unset: bool,
    /// Set it even if no installed version matches yet.
    #[arg(short, long)]
    pub force: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let path = Store::new(env.ctx.root()).global_version_file();
    if args.unset {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("cannot remove", &path)(e)),
        }
        env.printer.info("global version unset (system)");
        return Ok(ExitCode::Success);
    }
    match args.spec {
        Some(spec) => {
            super::local::warn_if_missing(
                env,
                &spec,
                super::local::IfMissing::from_force(args.force),
            );
            version_file::write(&path, &spec)?;
            env.printer.success(format!("global version is now {spec}"));
        }
        None => {
            let spec = if path.symlink_metadata().is_ok() {
                version_file::read(&path)?.spec
            } else {
                Spec::System
            };
            env.outln(spec)?;
        }
    }
    Ok(ExitCode::Success)
}
