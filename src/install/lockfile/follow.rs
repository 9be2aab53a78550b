//! Following a lock (`install --locked`, `--frozen`, and by default in a
//! directory that has one): which lock applies, and the plan it gives.
//!
//! `--locked` and `--frozen` ask for the lock beside the `.cuda-version` that
//! applies, and its absence or disagreement with that pin is an error.
//! Without them, the lock is followed only when nothing on the command line
//! says what to install and it was made for the selecting pin; a lock made
//! for another pin is set aside (`Found::MadeForAnother`), not followed.

use crate::error::{Error, InstallError, Result};
use std::path::PathBuf;

use super::{Lock, Origins, beside, differences, frozen_plan, read};
use crate::activation::{select, version_file};
use crate::context::Context;
use crate::install::settings::Settings;
use crate::install::sources::pypi::Request;
use crate::install::sources::{Plan, Platform};
use crate::spec::Spec;

/// The `.cuda-version` that applies in the working directory, the lock beside
/// it and its content; `to` words what the lock was wanted for in the error.
pub fn pinned_lock(ctx: &Context, to: &str) -> Result<(version_file::Pinned, PathBuf, Lock)> {
    let cwd = ctx.cwd();
    let pinned = version_file::find(cwd)?.ok_or_else(|| {
        Error::Install(InstallError::NoLock {
            file: super::FILE_NAME.into(),
            where_: format!(
                "to {to}: no {} in {} or its parents",
                version_file::FILE_NAME,
                cwd.display()
            ),
        })
    })?;
    let path = beside(&pinned.path);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(Error::Install(InstallError::NoLock {
            file: super::FILE_NAME.into(),
            where_: format!("beside {}", pinned.path.display()),
        }));
    }
    let lock = read(&path)?;
    Ok((pinned, path, lock))
}

/// How an install uses a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--frozen`: the lock's files, nothing resolved.
    Frozen,
    /// `--locked`, or by default: re-resolved, and every difference refused.
    Locked,
}

/// The lock an install follows.
pub struct ForInstall {
    pub path: PathBuf,
    pub lock: Lock,
    pub mode: Mode,
    pub platform: Platform,
}

/// What an install finds of a lock.
pub enum Found {
    /// None applies.
    Nothing,
    /// The lock beside the selecting `.cuda-version` was made for another
    /// pin: the install goes ahead without it.
    MadeForAnother {
        path: PathBuf,
        lock: Lock,
        version_file: PathBuf,
        pinned: Spec,
    },
    /// The lock to follow.
    Follow(ForInstall),
}

/// What is asked of a lock: `--locked`, `--frozen`, `--offline`, and
/// whether the command line says what to install.
pub struct Ask {
    pub locked: bool,
    pub frozen: bool,
    pub offline: bool,
    pub explicit: bool,
}

/// The lock `install` follows, if any: the one beside `.cuda-version` when
/// `--locked`/`--frozen` ask for it (an error when it is missing or
/// disagrees), or by default when nothing on the command line says what to
/// install and the lock matches the selecting `.cuda-version`.
pub fn for_install(ctx: &Context, ask: &Ask) -> Result<Found> {
    // Offline there is no index to re-resolve against: the lock's files come
    // from the cache, checked against its sha256s, as with `--frozen`.
    let follow = if ask.frozen || ask.offline {
        Mode::Frozen
    } else {
        Mode::Locked
    };
    let (path, lock, mode) = if ask.locked || ask.frozen {
        let (pinned, path, lock) = pinned_lock(ctx, "follow")?;
        if Spec::Stack(lock.spec()).to_string() != pinned.spec.to_string() {
            return Err(Error::Install(InstallError::LockMismatch {
                path,
                against: pinned.path.display().to_string(),
                differences: vec![format!(
                    "it pins {}, the lock was made for {}",
                    pinned.spec, lock.spec
                )],
            }));
        }
        (path, lock, follow)
    } else {
        if ask.explicit {
            return Ok(Found::Nothing);
        }
        let sel = select::select(ctx)?;
        let select::Origin::File(vf) = &sel.origin else {
            return Ok(Found::Nothing);
        };
        let path = beside(vf);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(Found::Nothing);
        }
        let lock = read(&path)?;
        if Spec::Stack(lock.spec()).to_string() != sel.spec.to_string() {
            return Ok(Found::MadeForAnother {
                path,
                lock,
                version_file: vf.clone(),
                pinned: sel.spec,
            });
        }
        (path, lock, follow)
    };
    let platform = Platform::current().ok_or_else(|| {
        Error::Install(InstallError::LockPlatform {
            path: path.clone(),
            platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
            locked: lock
                .platforms()
                .iter()
                .map(|p| p.name().to_string())
                .collect(),
        })
    })?;
    if lock.for_platform(platform).next().is_none() {
        return Err(Error::Install(InstallError::LockPlatform {
            path,
            platform: platform.name().into(),
            locked: lock
                .platforms()
                .iter()
                .map(|p| p.name().to_string())
                .collect(),
        }));
    }
    Ok(Found::Follow(ForInstall {
        path,
        lock,
        mode,
        platform,
    }))
}

impl ForInstall {
    pub fn frozen(&self) -> bool {
        self.mode == Mode::Frozen
    }

    /// `--frozen`'s plan: the lock's own files, only from configured sources.
    pub fn frozen_plan(&self, settings: &Settings) -> Result<Plan> {
        let origins = Origins::from_settings(settings)?;
        frozen_plan(&self.lock, &self.path, self.platform, &origins)
    }

    /// The components whose locked URLs lie outside the configured sources
    /// (a re-resolution does not use them), and those sources as shown.
    pub fn foreign(&self, settings: &Settings) -> Result<(Vec<&str>, Vec<String>)> {
        let origins = Origins::from_settings(settings)?;
        let foreign = self
            .lock
            .for_platform(self.platform)
            .filter(|a| !origins.allows(a.source, &a.url))
            .map(|a| a.component.as_str())
            .collect();
        Ok((foreign, origins.shown()))
    }

    /// What to re-resolve: the locked releases, profile and components.
    pub fn request(&self) -> Request {
        Request {
            spec: self.lock.exact(),
            profile: self.lock.stack.profile,
            with: self.lock.stack.with.clone(),
            without: self.lock.stack.without.clone(),
        }
    }

    /// A fresh resolution must agree with the lock in every version, size,
    /// hash and source; `index` names where it came from in the error.
    pub fn agrees(&self, plan: Plan, index: &str) -> Result<Plan> {
        let differences = differences(&self.lock, self.platform, &plan);
        if !differences.is_empty() {
            return Err(Error::Install(InstallError::LockMismatch {
                path: self.path.clone(),
                against: format!("what the sources serve now ({index})"),
                differences,
            }));
        }
        Ok(plan)
    }
}
