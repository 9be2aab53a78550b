//! `cudaenv lock [SPEC]`: resolve a stack for every platform asked for and
//! write `cuda.lock` beside `.cuda-version` (schema: docs/lock.md); and the
//! lock's part in `install` (`--locked`, `--frozen`, and by default in a
//! directory that has one).
//!
//! The platforms are resolved in a fixed order; the first fixes the exact
//! CUDA and cuDNN releases and every other platform must resolve the same
//! ones, so one lock never mixes releases. Re-locking keeps the existing
//! lock's platforms, profile and component choices unless they are given.

use std::path::PathBuf;

use super::Env;
use super::resolution::{self, Resolution};
use crate::activation::select;
use crate::activation::version_file;
use crate::error::{Error, ExitCode, Result};
use crate::install::lockfile::{self, Lock, Origins};
use crate::install::settings::Settings;
use crate::install::sources::measure::human_bytes;
use crate::install::sources::pypi::Request;
use crate::install::sources::remote::{self, Remote};
use crate::install::sources::{Plan, Platform, Profile};
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
    let cwd = env.ctx.cwd();
    let (version_file, spec, pin) = match &args.spec {
        Some(s) => (cwd.join(version_file::FILE_NAME), s.clone(), true),
        None => {
            let p = version_file::find(cwd)?.ok_or_else(|| Error::NoVersionFile {
                dir: cwd.to_path_buf(),
            })?;
            let stack = match p.spec {
                Spec::Stack(s) => s,
                other => {
                    return Err(Error::InvalidVersionFile {
                        path: p.path,
                        line: 0,
                        reason: format!(
                            "`{other}` is not a CUDA version; a lock needs one such as `12.4` or `12.4+cudnn9.1`"
                        ),
                    });
                }
            };
            (p.path, stack, false)
        }
    };
    // The pin as it selects here: a lock describes what the project runs,
    // so when the pin selects an installed version (`12.4` selecting
    // 12.4.1+cudnn9.28.0.42), that version's exact releases are locked,
    // its cuDNN included, and its profile unless one is given.
    let store = crate::store::Store::configured(&env.ctx)?;
    let selected = match (
        &args.spec,
        select::resolve(&store, &Spec::Stack(spec.clone()))?,
    ) {
        (None, Some(select::Active::Version(v))) => Some(*v),
        _ => None,
    };
    let request = match &selected {
        Some(v) if v.meta.kind == crate::store::Kind::Linked => {
            return Err(Error::NotAvailable {
                what: format!(
                    "a lock of `{}`, which {spec} selects here: it is a linked tree, which no source resolves",
                    v.name
                ),
                source_name: None,
                hint: Some(format!(
                    "lock a version the sources install: `cudaenv lock {spec}` after `cudaenv install {spec}`, or pin the installed one you mean in {}",
                    version_file.display()
                )),
            });
        }
        Some(v) => match v.cuda() {
            Some(cuda) => {
                let mut exact = StackSpec::new(cuda.clone(), v.cudnn().cloned());
                exact.libs = v.libs();
                env.printer.info(format!(
                    "locking {}, which {spec} selects here ({})",
                    v.name,
                    version_file.display()
                ));
                exact
            }
            None => spec.clone(),
        },
        None => spec.clone(),
    };
    let path = lockfile::beside(&version_file);
    let existing = match std::fs::symlink_metadata(&path) {
        Ok(_) => match lockfile::read(&path) {
            Ok(l) => Some(l),
            Err(e) => {
                // Re-locking is how a broken lock is repaired.
                env.printer.warn(format!("replacing it: {e}"));
                None
            }
        },
        Err(_) => None,
    };
    let mut platforms = match (&args.platform, &existing) {
        (p, _) if !p.is_empty() => p.clone(),
        (_, Some(l)) => l.platforms(),
        _ => vec![this_platform()?],
    };
    platforms.sort();
    platforms.dedup();
    let installed_profile = selected
        .as_ref()
        .and_then(|v| v.meta.profile.as_deref())
        .and_then(|p| <Profile as clap::ValueEnum>::from_str(p, false).ok());
    let profile = args
        .resolution
        .profile
        .or(existing.as_ref().map(|l| l.stack.profile))
        .or(installed_profile)
        .unwrap_or_default();
    let (with, without) = match &existing {
        Some(l) if !args.resolution.names_components() => {
            (l.stack.with.clone(), l.stack.without.clone())
        }
        _ => (
            args.resolution.with_names(),
            args.resolution.without_names(),
        ),
    };
    let choice = args
        .resolution
        .source
        .or(existing.as_ref().map(|l| l.choice()))
        .unwrap_or_default();
    let opts = remote::Options {
        choice,
        refresh: resolution::refresh(args.refresh),
        offline: args.offline,
        allow_unverified: false,
    };
    let settings = env.settings()?;
    let plans = resolution::block_on(async {
        let remote = resolution::open_remote(env, &settings, opts).await?;
        resolve(env, remote, &request, &platforms, profile, &with, &without).await
    })?;
    let lock = Lock::from_plans(&spec, choice, &with, &without, &plans)?;
    let text = lock.render();

    if args.check {
        let on_disk = crate::os::fs::read_bounded(&path, crate::os::fs::SMALL).ok();
        if on_disk.as_deref() == Some(text.as_bytes()) {
            env.printer
                .success(format!("{} is up to date", path.display()));
            return Ok(ExitCode::Success);
        }
        let Some(old) = existing else {
            return Err(Error::LockMismatch {
                path,
                against: "a fresh resolution".into(),
                differences: vec!["it is missing or unreadable".into()],
            });
        };
        let mut differences = Vec::new();
        if old.spec != lock.spec {
            differences.push(format!(
                "locked for {}, the spec is {}",
                old.spec, lock.spec
            ));
        }
        for (p, plan) in &plans {
            differences.extend(
                lockfile::differences(&old, *p, plan)
                    .into_iter()
                    .map(|d| format!("{}: {d}", p.name())),
            );
        }
        if old.platforms() != platforms {
            differences.push("another set of platforms".into());
        }
        if old.stack != lock.stack && differences.is_empty() {
            differences.push("other profile or component choices".into());
        }
        if differences.is_empty() {
            differences.push("its text is not what `cudaenv lock` writes".into());
        }
        return Err(Error::LockMismatch {
            path,
            against: "a fresh resolution".into(),
            differences,
        });
    }

    if pin {
        version_file::write(&version_file, &Spec::Stack(spec.clone()))?;
        env.printer
            .info(format!("pinned {spec} in {}", version_file.display()));
    }
    // Re-locking: say what changed, for the review of the commit.
    if let Some(old) = &existing {
        for (p, plan) in &plans {
            for d in lockfile::differences(old, *p, plan) {
                env.printer.info(format!("{}: {d}", p.name()));
            }
        }
    }
    crate::os::write_atomically(&path, text.as_bytes(), None)?;
    let files = lock.artifacts.len();
    let bytes: u64 = lock.artifacts.iter().filter_map(|a| a.size).sum();
    env.printer.success(format!(
        "locked {} for {} ({files} file{}, {}) in {}",
        lock.name(),
        platforms
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

/// One plan per platform, all of the same exact releases.
async fn resolve(
    env: &Env,
    mut remote: Remote,
    spec: &StackSpec,
    platforms: &[Platform],
    profile: Profile,
    with: &[String],
    without: &[String],
) -> Result<Vec<(Platform, Plan)>> {
    let mut exact = spec.clone();
    let mut plans: Vec<(Platform, Plan)> = Vec::new();
    for p in platforms {
        remote.set_platform(*p);
        let plan = remote
            .plan(&Request {
                spec: exact.clone(),
                profile,
                with: with.to_vec(),
                without: without.to_vec(),
            })
            .await?;
        for n in &plan.notes {
            env.printer.warn(format!("{}: {n}", p.name()));
        }
        if plans.is_empty() {
            exact = StackSpec {
                cuda: plan.cuda.clone(),
                cudnn: plan.cudnn.clone(),
                libs: plan.libs.clone(),
            };
        } else if plan.cuda != exact.cuda || plan.cudnn != exact.cudnn || plan.libs != exact.libs {
            return Err(Error::NotAvailable {
                what: format!("{exact} for {}", p.name()),
                source_name: None,
                hint: Some(format!(
                    "{} resolves {}; lock the platforms separately or name an exact release available on all of them",
                    p.name(),
                    plan.name
                )),
            });
        }
        plans.push((*p, plan));
    }
    Ok(plans)
}

fn this_platform() -> Result<Platform> {
    Platform::current().ok_or_else(|| Error::NotAvailable {
        what: format!(
            "a lock for {}-{}",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        source_name: None,
        hint: Some(
            "pass `--platform linux-x86_64`, `--platform linux-aarch64` or `--platform windows-x86_64`"
                .into(),
        ),
    })
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
