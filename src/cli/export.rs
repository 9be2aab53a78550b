//! `cudaenv export pip-constraints|uv`: the Python pins of the locked stack
//! (`lockfile::export`), printed on stdout for `pip install -c` or
//! pyproject.toml's `[tool.uv]`.

use super::Env;
use crate::error::{ExitCode, Result};
use crate::install::lockfile::export;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// `name==version` lines for `pip install -c FILE` / `uv pip install -c FILE`.
    PipConstraints,
    /// A `[tool.uv]` table with `constraint-dependencies` for pyproject.toml.
    Uv,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to print.
    #[arg(value_enum)]
    pub format: Format,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (pinned, path, lock) = super::lock::pinned_lock(env, "export")?;
    if crate::spec::Spec::Stack(lock.spec()).to_string() != pinned.spec.to_string() {
        env.printer.warn(format!(
            "{} was made for {}, but {} pins {}; run `cudaenv lock`",
            path.display(),
            lock.spec,
            pinned.path.display(),
            pinned.spec
        ));
    }
    let text = match args.format {
        Format::PipConstraints => export::pip_constraints(&lock),
        Format::Uv => export::uv(&lock),
    };
    env.out(text.as_bytes())?;
    Ok(ExitCode::Success)
}
