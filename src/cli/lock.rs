//! `cudaenv lock [SPEC]`: resolve a stack for every platform asked for and
//! write `cuda.lock` beside `.cuda-version` (schema: docs/lock.md); and the
//! lock's part in `install` (`--locked`, `--frozen`, and by default in a
//! directory that has one).
//!
//! What is locked and how (the pin, the version it selects, the choices a
//! re-lock keeps, one resolution per platform) is `lockfile::relock`'s, and
//! which lock an install follows is `lockfile::follow`'s; re-locking keeps
//! the existing lock's platforms, profile and component choices unless they
//! are given.

use std::path::{Path, PathBuf};

use super::Env;
use super::resolution::{self, Resolution};
use crate::activation::version_file;
use crate::error::{ExitCode, Result};
pub(super) use crate::install::lockfile::follow::ForInstall;
use crate::install::lockfile::follow::{self, Ask, Found};
use crate::install::lockfile::relock::{self, Choices, Fresh, Given, Subject};
use crate::install::lockfile::{self, Lock};
use crate::install::settings::Settings;
use crate::install::sources::measure::human_bytes;
use crate::install::sources::remote::{self, Remote};
use crate::install::sources::{Plan, Platform};
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
    let fresh = resolution::block_on(async {
        let remote = resolution::open_remote(env, &settings, opts).await?;
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

/// The lock `install` follows, if any (`lockfile::follow::for_install`),
/// said: followed, or set aside when it was made for another pin.
pub(super) fn for_install(
    env: &Env,
    locked: bool,
    frozen: bool,
    offline: bool,
    explicit: bool,
) -> Result<Option<ForInstall>> {
    let ask = Ask {
        locked,
        frozen,
        offline,
        explicit,
    };
    let l = match follow::for_install(&env.ctx, &ask)? {
        Found::Nothing => return Ok(None),
        Found::MadeForAnother {
            path,
            lock,
            version_file,
            pinned,
        } => {
            env.printer.warn(format!(
                "{} was made for {}, but {} pins {}: installing {} without the lock",
                path.display(),
                lock.spec,
                version_file.display(),
                pinned,
                pinned
            ));
            env.printer
                .hint("run `cudaenv lock` to lock the new pin, and commit cuda.lock");
            return Ok(None);
        }
        Found::Follow(l) => l,
    };
    env.printer.info(format!(
        "following {} ({}{})",
        l.path.display(),
        l.lock.name(),
        if l.frozen() {
            ", as locked"
        } else {
            ", checked against the sources"
        }
    ));
    Ok(Some(l))
}

/// The plan of a locked install: for `--frozen` the lock's own files (only
/// from configured sources); otherwise a fresh resolution through the
/// configured sources that must agree with the lock in every version, size,
/// hash and source.
pub(super) async fn plan_for_install(
    env: &Env,
    settings: &Settings,
    l: &ForInstall,
    remote: Option<&Remote>,
) -> Result<Plan> {
    let Some(remote) = remote else {
        return l.frozen_plan(settings);
    };
    let (foreign, sources) = l.foreign(settings)?;
    if !foreign.is_empty() {
        env.printer.warn(format!(
            "{} names URLs outside the configured sources for {}; they are not used: the pinned files come from {}",
            l.path.display(),
            foreign.join(", "),
            sources.join(", ")
        ));
    }
    let plan = remote.plan(&l.request()).await?;
    l.agrees(plan, &remote.index_shown)
}
