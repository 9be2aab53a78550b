//! `cudaenv lock [SPEC]`: resolve a stack for every platform asked for and
//! write `cuda.lock` beside `.cuda-version` (schema: docs/lock.md).
//!
//! What is locked and how (the pin, the version it selects, the choices a
//! re-lock keeps, one resolution per platform) is `lockfile::relock`'s;
//! which lock an install follows, and the plan it gives, is the install
//! planner's (`install::planner`, with `lockfile::follow`); re-locking keeps
//! the existing lock's platforms, profile and component choices unless they
//! are given.

use std::path::{Path, PathBuf};

use super::Env;
use super::resolution::{self, Resolution};
use crate::activation::version_file;
use crate::error::{ExitCode, Result};
use crate::install::lockfile::follow;
use crate::install::lockfile::relock::{self, Choices, Fresh, Given, Subject};
use crate::install::lockfile::{self, Lock};
use crate::install::planner;
use crate::install::sources::Platform;
use crate::install::sources::measure::human_bytes;
use crate::install::sources::remote;
use crate::spec::{Spec, StackSpec};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stack to lock (`12.4+cudnn9`); it is also pinned in ./.cuda-version.
    /// Default: the .cuda-version that applies here.
    #[arg(value_parser = resolution::stack_spec("lock"))]
    pub spec: Option<StackSpec>,
    /// Platforms to lock, comma-separated. Default: the existing lock's, else this machine's.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "P1,P2")]
    pub platform: Vec<Platform>,
    #[command(flatten)]
    pub resolution: Resolution,
    /// Read the release list from the package index now.
    #[arg(long)]
    pub refresh: bool,
    /// Use only the stored release list and cached index pages.
    #[arg(long, conflicts_with = "refresh")]
    pub offline: bool,
    /// Write nothing; exit 25 when cuda.lock is missing or differs from a
    /// fresh resolution (for CI).
    #[arg(long)]
    pub check: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let subject = Subject::find(&env.ctx, args.spec.as_ref())?;
    if let Some(v) = subject.locks_selected() {
        env.printer.info(format!(
            "locking {}, which {} selects here ({})",
            v.name,
            subject.spec,
            subject.version_file.display()
        ));
    }
    let path = lockfile::beside(&subject.version_file);
    let existing = match relock::existing(&path) {
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => {
            // Re-locking is how a broken lock is repaired.
            env.printer.warn(format!("replacing it: {e}"));
            None
        }
        None => None,
    };
    let given = Given {
        platforms: args.platform.clone(),
        profile: args.resolution.profile,
        components: args.resolution.names_components().then(|| {
            (
                args.resolution.with_names(),
                args.resolution.without_names(),
            )
        }),
        source: args.resolution.source,
    };
    let choices = Choices::decide(given, existing.as_ref(), subject.selected.as_ref())?;
    let opts = remote::Options {
        choice: choices.choice,
        refresh: resolution::refresh(args.refresh),
        offline: args.offline,
        allow_unverified: false,
    };
    let settings = env.settings()?;
    let fresh = super::block_on(async {
        let remote = planner::open(&env.ctx, &env.printer, &settings, opts).await?;
        let mut warn = |p: Platform, n: &str| env.printer.warn(format!("{}: {n}", p.name()));
        Fresh::resolve(remote, &subject, &choices, &mut warn).await
    })?;
    if args.check {
        fresh.check(&path, existing.as_ref(), &choices)?;
        env.printer
            .success(format!("{} is up to date", path.display()));
        return Ok(ExitCode::Success);
    }
    write(env, &subject, &path, existing.as_ref(), &fresh, &choices)
}

/// Pins the spec when it was given, writes the lock, and says what changed
/// (for the review of the commit) and what was locked.
fn write(
    env: &Env,
    subject: &Subject,
    path: &Path,
    existing: Option<&Lock>,
    fresh: &Fresh,
    choices: &Choices,
) -> Result<ExitCode> {
    let spec = &subject.spec;
    if subject.pin {
        version_file::write(&subject.version_file, &Spec::Stack(spec.clone()))?;
        env.printer.info(format!(
            "pinned {spec} in {}",
            subject.version_file.display()
        ));
    }
    if let Some(old) = existing {
        for d in fresh.changes(old) {
            env.printer.info(d);
        }
    }
    crate::os::write_atomically(path, fresh.text.as_bytes(), None)?;
    let lock = &fresh.lock;
    let files = lock.artifacts.len();
    let bytes: u64 = lock.artifacts.iter().filter_map(|a| a.size).sum();
    env.printer.success(format!(
        "locked {} for {} ({files} file{}, {}) in {}",
        lock.name(),
        choices
            .platforms
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", "),
        if files == 1 { "" } else { "s" },
        human_bytes(bytes),
        path.display()
    ));
    Ok(ExitCode::Success)
}

/// The `.cuda-version` that applies in the working directory, the lock beside
/// it and its content; `to` words what the lock was wanted for in the error.
pub(super) fn pinned_lock(env: &Env, to: &str) -> Result<(version_file::Pinned, PathBuf, Lock)> {
    follow::pinned_lock(&env.ctx, to)
}
