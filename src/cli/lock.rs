//! `cudaenv lock [SPEC]`: resolve a stack for every platform asked for and
//! write `cuda.lock` beside `.cuda-version` (schema: docs/lock.md); and the
//! lock's part in `install` (`--locked`, `--frozen`, and by default in a
//! directory that has one).
//!
//! What is locked and how (the pin, the version it selects, the choices a
//! re-lock keeps, one resolution per platform) is `lockfile::relock`'s;
//! re-locking keeps the existing lock's platforms, profile and component
//! choices unless they are given.

use std::path::{Path, PathBuf};

use super::Env;
use super::resolution::{self, Resolution};
use crate::activation::select;
use crate::activation::version_file;
use crate::error::{Error, ExitCode, Result};
use crate::install::lockfile::relock::{self, Choices, Fresh, Given, Subject};
use crate::install::lockfile::{self, Lock, Origins};
use crate::install::settings::Settings;
use crate::install::sources::measure::human_bytes;
use crate::install::sources::pypi::Request;
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
    let cwd = env.ctx.cwd();
    let pinned = version_file::find(cwd)?.ok_or_else(|| Error::NoLock {
        file: lockfile::FILE_NAME.into(),
        where_: format!(
            "to {to}: no {} in {} or its parents",
            version_file::FILE_NAME,
            cwd.display()
        ),
    })?;
    let path = lockfile::beside(&pinned.path);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(Error::NoLock {
            file: lockfile::FILE_NAME.into(),
            where_: format!("beside {}", pinned.path.display()),
        });
    }
    let lock = lockfile::read(&path)?;
    Ok((pinned, path, lock))
}

/// How an install uses a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `--frozen`: the lock's files, nothing resolved.
    Frozen,
    /// `--locked`, or by default: re-resolved, and every difference refused.
    Locked,
}

/// The lock an install follows.
pub(super) struct ForInstall {
    pub path: PathBuf,
    pub lock: Lock,
    pub mode: Mode,
    pub platform: Platform,
}

impl ForInstall {
    pub fn frozen(&self) -> bool {
        self.mode == Mode::Frozen
    }
}

/// The lock `install` follows, if any: the one beside `.cuda-version` when
/// `--locked`/`--frozen` ask for it (an error when it is missing or
/// disagrees), or by default when nothing on the command line says what to
/// install and the lock matches the selecting `.cuda-version`.
pub(super) fn for_install(
    env: &Env,
    locked: bool,
    frozen: bool,
    offline: bool,
    explicit: bool,
) -> Result<Option<ForInstall>> {
    // Offline there is no index to re-resolve against: the lock's files come
    // from the cache, checked against its sha256s, as with `--frozen`.
    let follow = if frozen || offline {
        Mode::Frozen
    } else {
        Mode::Locked
    };
    let (path, lock, mode) = if locked || frozen {
        let (pinned, path, lock) = pinned_lock(env, "follow")?;
        if Spec::Stack(lock.spec()).to_string() != pinned.spec.to_string() {
            return Err(Error::LockMismatch {
                path,
                against: pinned.path.display().to_string(),
                differences: vec![format!(
                    "it pins {}, the lock was made for {}",
                    pinned.spec, lock.spec
                )],
            });
        }
        (path, lock, follow)
    } else {
        if explicit {
            return Ok(None);
        }
        let sel = select::select(&env.ctx)?;
        let select::Origin::File(vf) = &sel.origin else {
            return Ok(None);
        };
        let path = lockfile::beside(vf);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(None);
        }
        let lock = lockfile::read(&path)?;
        if Spec::Stack(lock.spec()).to_string() != sel.spec.to_string() {
            env.printer.warn(format!(
                "{} was made for {}, but {} pins {}: installing {} without the lock",
                path.display(),
                lock.spec,
                vf.display(),
                sel.spec,
                sel.spec
            ));
            env.printer
                .hint("run `cudaenv lock` to lock the new pin, and commit cuda.lock");
            return Ok(None);
        }
        (path, lock, follow)
    };
    let platform = Platform::current().ok_or_else(|| Error::LockPlatform {
        path: path.clone(),
        platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        locked: lock
            .platforms()
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
    })?;
    if lock.for_platform(platform).next().is_none() {
        return Err(Error::LockPlatform {
            path,
            platform: platform.name().into(),
            locked: lock
                .platforms()
                .iter()
                .map(|p| p.name().to_string())
                .collect(),
        });
    }
    env.printer.info(format!(
        "following {} ({}{})",
        path.display(),
        lock.name(),
        if mode == Mode::Frozen {
            ", as locked"
        } else {
            ", checked against the sources"
        }
    ));
    Ok(Some(ForInstall {
        path,
        lock,
        mode,
        platform,
    }))
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
    let origins = Origins::from_settings(settings)?;
    let Some(remote) = remote else {
        return lockfile::frozen_plan(&l.lock, &l.path, l.platform, &origins);
    };
    let foreign: Vec<&str> = l
        .lock
        .for_platform(l.platform)
        .filter(|a| !origins.allows(a.source, &a.url))
        .map(|a| a.component.as_str())
        .collect();
    if !foreign.is_empty() {
        env.printer.warn(format!(
            "{} names URLs outside the configured sources for {}; they are not used: the pinned files come from {}",
            l.path.display(),
            foreign.join(", "),
            origins.shown().join(", ")
        ));
    }
    let plan = remote
        .plan(&Request {
            spec: l.lock.exact(),
            profile: l.lock.stack.profile,
            with: l.lock.stack.with.clone(),
            without: l.lock.stack.without.clone(),
        })
        .await?;
    let differences = lockfile::differences(&l.lock, l.platform, &plan);
    if !differences.is_empty() {
        return Err(Error::LockMismatch {
            path: l.path.clone(),
            against: format!("what the sources serve now ({})", remote.index_shown),
            differences,
        });
    }
    Ok(plan)
}
