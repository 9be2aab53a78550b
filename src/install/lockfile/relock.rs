//! Making a lock (`cudaenv lock`), step by step: what is locked (`Subject`:
//! the SPEC given, or the `.cuda-version` that applies, and the installed
//! version that pin selects here), the choices a re-lock keeps from the
//! existing lock (`Choices`), one resolution per platform (`Fresh`), and how
//! a lock on disk differs from it (`--check`).
//!
//! The platforms are resolved in a fixed order; the first fixes the exact
//! CUDA and cuDNN releases and every other platform must resolve the same
//! ones, so one lock never mixes releases.

use std::path::{Path, PathBuf};

use super::{Lock, differences};
use crate::activation::{select, version_file};
use crate::context::Context;
use crate::error::{ActivationError, Error, InstallError, Result};
use crate::install::sources::pypi::Request;
use crate::install::sources::remote::Remote;
use crate::install::sources::resolve::SourceChoice;
use crate::install::sources::{Plan, Platform, Profile};
use crate::spec::{Spec, StackSpec};
use crate::store::{Installed, Kind, Store};

/// What a lock is made for.
pub struct Subject {
    /// The `.cuda-version` the lock goes beside.
    pub version_file: PathBuf,
    /// The spec as pinned there (or to be pinned): what the lock is for.
    pub spec: StackSpec,
    /// The spec was given, so it is pinned in `version_file`.
    pub pin: bool,
    /// The installed version the pin selects here (none for a given spec).
    pub selected: Option<Installed>,
    /// What is resolved: the selected version's exact releases, when it
    /// knows them, else `spec`.
    pub request: StackSpec,
}

impl Subject {
    /// The subject of `cudaenv lock [SPEC]` in the working directory.
    ///
    /// A lock describes what the project runs, so when the pin selects an
    /// installed version (`12.4` selecting 12.4.1+cudnn9.28.0.42), that
    /// version's exact releases are locked, its cuDNN and libraries
    /// included. A linked version has no source to resolve it: an error.
    pub fn find(ctx: &Context, given: Option<&StackSpec>) -> Result<Subject> {
        let cwd = ctx.cwd();
        let (version_file, spec, pin) = match given {
            Some(s) => (cwd.join(version_file::FILE_NAME), s.clone(), true),
            None => {
                let p = version_file::find(cwd)?.ok_or_else(|| {
                    Error::Install(InstallError::NoVersionFile {
                        dir: cwd.to_path_buf(),
                    })
                })?;
                let stack = match p.spec {
                    Spec::Stack(s) => s,
                    other => {
                        return Err(Error::Activation(ActivationError::InvalidVersionFile {
                            path: p.path,
                            line: 0,
                            reason: format!(
                                "`{other}` is not a CUDA version; a lock needs one such as `12.4` or `12.4+cudnn9.1`"
                            ),
                        }));
                    }
                };
                (p.path, stack, false)
            }
        };
        let store = Store::configured(ctx)?;
        let selected = match (given, select::resolve(&store, &Spec::Stack(spec.clone()))?) {
            (None, Some(select::Active::Version(v))) => Some(*v),
            _ => None,
        };
        let request = match &selected {
            Some(v) if v.meta.kind == Kind::Linked => {
                return Err(Error::Install(InstallError::NotAvailable {
                    what: format!(
                        "a lock of `{}`, which {spec} selects here: it is a linked tree, which no source resolves",
                        v.name
                    ),
                    source_name: None,
                    hint: Some(crate::msg!(
                        "hint-lock-linked",
                        spec = spec,
                        file = version_file.display()
                    )),
                }));
            }
            Some(v) => match v.cuda() {
                Some(cuda) => {
                    let mut exact = StackSpec::new(cuda.clone(), v.cudnn().cloned());
                    exact.libs = v.libs();
                    exact
                }
                None => spec.clone(),
            },
            None => spec.clone(),
        };
        Ok(Subject {
            version_file,
            spec,
            pin,
            selected,
            request,
        })
    }

    /// The installed version whose exact releases are locked, if any.
    pub fn locks_selected(&self) -> Option<&Installed> {
        self.selected.as_ref().filter(|v| v.cuda().is_some())
    }
}

/// The lock already beside the pin, if there is one: `Some(Err)` when it
/// cannot be read (re-locking is how a broken lock is repaired).
pub fn existing(path: &Path) -> Option<Result<Lock>> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|_| super::read(path))
}

/// What the command line says of the lock's choices.
#[derive(Default)]
pub struct Given {
    pub platforms: Vec<Platform>,
    pub profile: Option<Profile>,
    /// `--with` and `--without`, when either names a component.
    pub components: Option<(Vec<String>, Vec<String>)>,
    pub source: Option<SourceChoice>,
}

/// The lock's choices: each as given, else the existing lock's, else (the
/// profile) the selected version's, else the default (the platform: this
/// machine's).
pub struct Choices {
    /// Sorted, each once.
    pub platforms: Vec<Platform>,
    pub profile: Profile,
    pub with: Vec<String>,
    pub without: Vec<String>,
    pub choice: SourceChoice,
}

impl Choices {
    pub fn decide(
        given: Given,
        existing: Option<&Lock>,
        selected: Option<&Installed>,
    ) -> Result<Choices> {
        let mut platforms = match (given.platforms, existing) {
            (p, _) if !p.is_empty() => p,
            (_, Some(l)) => l.platforms(),
            _ => vec![this_platform()?],
        };
        platforms.sort();
        platforms.dedup();
        let installed_profile = selected
            .and_then(|v| v.meta.profile.as_deref())
            .and_then(|p| <Profile as clap::ValueEnum>::from_str(p, false).ok());
        let profile = given
            .profile
            .or(existing.map(|l| l.stack.profile))
            .or(installed_profile)
            .unwrap_or_default();
        let (with, without) = match (given.components, existing) {
            (Some(c), _) => c,
            (None, Some(l)) => (l.stack.with.clone(), l.stack.without.clone()),
            (None, None) => (Vec::new(), Vec::new()),
        };
        let choice = given
            .source
            .or(existing.map(|l| l.choice()))
            .unwrap_or_default();
        Ok(Choices {
            platforms,
            profile,
            with,
            without,
            choice,
        })
    }
}

fn this_platform() -> Result<Platform> {
    Platform::current().ok_or_else(|| {
        Error::Install(InstallError::NotAvailable {
            what: format!(
                "a lock for {}-{}",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
            source_name: None,
            hint: Some(crate::msg!("hint-lock-pass-platform")),
        })
    })
}

/// A fresh resolution: one plan per platform, and the lock they make.
pub struct Fresh {
    pub plans: Vec<(Platform, Plan)>,
    pub lock: Lock,
    /// The lock's text, as written.
    pub text: String,
}

impl Fresh {
    /// Resolves `subject` for every platform of `choices`, all to the same
    /// exact releases; `on_note` is told each plan's notes as it is made.
    pub async fn resolve(
        mut remote: Remote,
        subject: &Subject,
        choices: &Choices,
        on_note: &mut dyn FnMut(Platform, &str),
    ) -> Result<Fresh> {
        let mut exact = subject.request.clone();
        let mut plans: Vec<(Platform, Plan)> = Vec::new();
        for p in &choices.platforms {
            remote.set_platform(*p);
            let plan = remote
                .plan(&Request {
                    spec: exact.clone(),
                    profile: choices.profile,
                    with: choices.with.clone(),
                    without: choices.without.clone(),
                })
                .await?;
            for n in &plan.notes {
                on_note(*p, n);
            }
            if plans.is_empty() {
                exact = StackSpec {
                    cuda: plan.cuda.clone(),
                    cudnn: plan.cudnn.clone(),
                    libs: plan.libs.clone(),
                };
            } else if plan.cuda != exact.cuda
                || plan.cudnn != exact.cudnn
                || plan.libs != exact.libs
            {
                return Err(Error::Install(InstallError::NotAvailable {
                    what: format!("{exact} for {}", p.name()),
                    source_name: None,
                    hint: Some(crate::msg!(
                        "hint-lock-platforms-differ",
                        platform = p.name(),
                        name = plan.name
                    )),
                }));
            }
            plans.push((*p, plan));
        }
        let lock = Lock::from_plans(
            &subject.spec,
            choices.choice,
            &choices.with,
            &choices.without,
            &plans,
        )?;
        let text = lock.render();
        Ok(Fresh { plans, lock, text })
    }

    /// What differs in each platform's plan from `old`, as `PLATFORM: …`.
    pub fn changes(&self, old: &Lock) -> Vec<String> {
        self.plans
            .iter()
            .flat_map(|(p, plan)| {
                differences(old, *p, plan)
                    .into_iter()
                    .map(|d| format!("{}: {d}", p.name()))
            })
            .collect()
    }

    /// `cudaenv lock --check`: `Ok` when the lock at `path` is exactly what
    /// this resolution writes, else `LockMismatch` with how it differs.
    pub fn check(&self, path: &Path, existing: Option<&Lock>, choices: &Choices) -> Result<()> {
        let on_disk = crate::os::fs::read_bounded(path, crate::os::fs::SMALL).ok();
        if on_disk.as_deref() == Some(self.text.as_bytes()) {
            return Ok(());
        }
        let Some(old) = existing else {
            return Err(Error::Install(InstallError::LockMismatch {
                path: path.to_path_buf(),
                against: "a fresh resolution".into(),
                differences: vec!["it is missing or unreadable".into()],
            }));
        };
        let lock = &self.lock;
        let mut differences = Vec::new();
        if old.spec != lock.spec {
            differences.push(format!(
                "locked for {}, the spec is {}",
                old.spec, lock.spec
            ));
        }
        differences.extend(self.changes(old));
        if old.platforms() != choices.platforms {
            differences.push("another set of platforms".into());
        }
        if old.stack != lock.stack && differences.is_empty() {
            differences.push("other profile or component choices".into());
        }
        if differences.is_empty() {
            differences.push("its text is not what `cudaenv lock` writes".into());
        }
        Err(Error::Install(InstallError::LockMismatch {
            path: path.to_path_buf(),
            against: "a fresh resolution".into(),
            differences,
        }))
    }
}
