//! The install planner: what an installing command asks for, as plain data
//! (`Request`, no command-line types in it), turned into a plan.
//!
//! `install`, `mirror` and `lock` all come through here, so a mirror holds
//! exactly what `install` will ask for and a lock is followed the one way.
//! The steps, each a function:
//! - `choose`: which stack (a lock, `--for` a framework, a spec, or the
//!   current selection), then the compatibility guard;
//! - `follow_lock`: which lock an install follows (`lockfile::follow`), said;
//! - `open`: the sources, with their notices said once;
//! - `resolve`: the installed-or-grow rule (an installed version of the
//!   release that holds what is asked is the answer; one with a smaller
//!   profile is grown), then the plan, from the lock or the sources.
//!
//! What the machine says and what its rules decide (`machine`) is passed in
//! by the caller (`MachineRules`), and so is where messages go (`Tell`): the
//! planner knows neither the terminal nor how the machine was asked.

use crate::activation::select;
use crate::context::Context;
use crate::error::{Error, InstallError, Result, SpecError};
use crate::install::lockfile::follow::{self, Ask, ForInstall, Found};
use crate::install::settings::Settings;
use crate::install::sources::pypi;
use crate::install::sources::remote::{self, Refresh, Remote};
use crate::install::sources::resolve::SourceChoice;
use crate::install::sources::{Plan, Profile};
use crate::machine::compat::FrameworkReq;
use crate::spec::{Spec, StackSpec};
use crate::store::Store;

/// Where the planner's messages go (the command's printer).
pub trait Tell: Sync {
    fn info(&self, msg: &str);
    fn warn(&self, msg: &str);
    fn hint(&self, msg: &str);
}

/// What the planner asks of the machine it plans for (this one or a
/// target): the caller gathered its facts and applies `machine`'s rules.
pub trait MachineRules {
    /// `--for`: the stack a framework release needs there, said with its reason.
    fn stack_for(&self, req: &FrameworkReq) -> Result<StackSpec>;
    /// The compatibility guard: warns when the stack cannot run there, or
    /// refuses (strict).
    fn guard(&self, stack: &StackSpec) -> Result<()>;
}

/// Which stack is asked for.
#[derive(Debug, Clone)]
pub enum Want {
    /// A spec (`12.4+cudnn9`).
    Spec(StackSpec),
    /// The stack a framework release needs (`--for torch==2.4`).
    Framework(FrameworkReq),
    /// Nothing named: a lock beside the selecting `.cuda-version`, else
    /// the current selection.
    Selected,
}

/// How an install uses `cuda.lock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Following {
    /// Followed when nothing says what to install and it matches the pin.
    #[default]
    WhenPinned,
    /// `--locked`: required, re-resolved and compared.
    Locked,
    /// `--frozen`: required, its files taken as it names them.
    Frozen,
}

/// An install request: what to install and how, once the command line (or
/// `mirror`) has said it.
#[derive(Debug, Clone)]
pub struct Request {
    pub stack: Want,
    pub lock: Following,
    pub profile: Profile,
    /// Component names, checked where they entered (clap).
    pub with: Vec<String>,
    pub without: Vec<String>,
    pub source: SourceChoice,
    /// Accept downloads that no pinned sha256 can verify.
    pub allow_unverified: bool,
    /// Only the download cache and the stored release list.
    pub offline: bool,
    pub refresh: Refresh,
    /// Resolve even what is installed, and reinstall it.
    pub force: bool,
    /// Only the plan is wanted: what is installed is not looked at.
    pub dry_run: bool,
    /// Concurrent connections.
    pub jobs: usize,
}

impl Request {
    /// Whether the request says what to install (a spec, `--for`, or
    /// components), so that no lock is followed by default.
    fn explicit(&self) -> bool {
        !matches!(self.stack, Want::Selected) || !self.with.is_empty() || !self.without.is_empty()
    }

    /// The sources' options (`choice`, a lock's, overrides the request's).
    pub fn sources(&self, choice: Option<SourceChoice>) -> remote::Options {
        remote::Options {
            choice: choice.unwrap_or(self.source),
            refresh: self.refresh,
            offline: self.offline,
            allow_unverified: self.allow_unverified,
        }
    }
}

/// The stack chosen, and the lock it comes from.
pub struct Chosen {
    pub stack: StackSpec,
    pub lock: Option<ForInstall>,
}

/// Chooses the stack as `install` does: the lock's, `--for`'s, the spec, or
/// the current selection's; then the compatibility guard.
pub fn choose(
    ctx: &Context,
    tell: &dyn Tell,
    req: &Request,
    machine: &dyn MachineRules,
) -> Result<Chosen> {
    let lock = follow_lock(ctx, tell, req)?;
    let stack = match &req.stack {
        _ if lock.is_some() => lock.as_ref().expect("checked").lock.exact(),
        Want::Framework(fw) => machine.stack_for(fw)?,
        Want::Spec(s) => s.clone(),
        Want::Selected => {
            let sel = select::select(ctx)?;
            let text = sel.spec.to_string();
            let origin = sel.origin.to_string();
            match sel.spec {
                Spec::Stack(s) => s,
                _ => {
                    return Err(Error::Spec(SpecError::InvalidSpec {
                        input: text,
                        reason: format!(
                            "selected by {origin}; `install` needs a CUDA version such as 12.4+cudnn9"
                        ),
                    }));
                }
            }
        }
    };
    machine.guard(&stack)?;
    Ok(Chosen { stack, lock })
}

/// The lock `install` follows, if any (`lockfile::follow::for_install`),
/// said: followed, or set aside when it was made for another pin.
pub fn follow_lock(ctx: &Context, tell: &dyn Tell, req: &Request) -> Result<Option<ForInstall>> {
    let ask = Ask {
        locked: req.lock == Following::Locked,
        frozen: req.lock == Following::Frozen,
        offline: req.offline,
        explicit: req.explicit(),
    };
    let l = match follow::for_install(ctx, &ask)? {
        Found::Nothing => return Ok(None),
        Found::MadeForAnother {
            path,
            lock,
            version_file,
            pinned,
        } => {
            tell.warn(&format!(
                "{} was made for {}, but {} pins {}: installing {} without the lock",
                path.display(),
                lock.spec,
                version_file.display(),
                pinned,
                pinned
            ));
            tell.hint("run `cudaenv lock` to lock the new pin, and commit cuda.lock");
            return Ok(None);
        }
        Found::Follow(l) => l,
    };
    tell.info(&format!(
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

/// Opens the sources with the settings the command resolved, and says
/// their notices (a stale catalogue, a cached manifest that was skipped) once.
pub async fn open(
    ctx: &Context,
    tell: &dyn Tell,
    settings: &Settings,
    opts: remote::Options,
) -> Result<Remote> {
    let remote = Remote::open(ctx, settings.clone(), opts).await?;
    for n in &remote.notices {
        tell.warn(n);
    }
    for (path, why) in &remote.manifests.skipped {
        tell.warn(&format!(
            "ignoring the cached manifest {}: {why}",
            path.display()
        ));
    }
    Ok(remote)
}

/// What resolving a request found.
pub enum Resolved {
    /// What to fetch and unpack; `grow` is the installed version of that
    /// release that the plan completes (a smaller profile than asked for).
    Plan {
        plan: Plan,
        grow: Option<crate::store::Installed>,
    },
    /// An installed version of that exact release already satisfies it
    /// (never with `--force` or `--dry-run`).
    Installed(crate::store::Installed),
}

/// The chosen stack resolved: the sources opened as the request and the lock
/// say (none for `--frozen`, which resolves nothing), then `resolve`. The
/// sources come back too: their client, cache and timeouts serve the
/// downloads.
pub async fn plan(
    ctx: &Context,
    tell: &dyn Tell,
    settings: &Settings,
    req: &Request,
    chosen: &Chosen,
) -> Result<(Option<Remote>, Resolved)> {
    let lock = chosen.lock.as_ref();
    // `--frozen` resolves nothing: no source is opened.
    let remote = match lock {
        Some(l) if l.frozen() => None,
        _ => Some(
            open(
                ctx,
                tell,
                settings,
                req.sources(lock.map(|l| l.lock.choice())),
            )
            .await?,
        ),
    };
    let resolved = resolve(
        ctx,
        tell,
        settings,
        req,
        &chosen.stack,
        remote.as_ref(),
        lock,
    )
    .await?;
    Ok((remote, resolved))
}

/// Resolves a stack as `install` does, from the request's profile and
/// components through `remote`; says the plan's notes. `mirror` resolves
/// through this too, so a mirror holds exactly what `install` will ask for.
///
/// With a lock, its own profile and components decide (not the request's
/// defaults), and the plan comes from the lock (`locked_plan`); only
/// `--frozen` resolves without `remote`.
pub async fn resolve(
    ctx: &Context,
    tell: &dyn Tell,
    settings: &Settings,
    req: &Request,
    stack: &StackSpec,
    remote: Option<&Remote>,
    lock: Option<&ForInstall>,
) -> Result<Resolved> {
    let (profile, with) = match lock {
        Some(l) => (l.lock.stack.profile, l.lock.stack.with.clone()),
        None => (req.profile, req.with.clone()),
    };
    let grow = match installed_or_grown(ctx, req, stack, profile, &with, remote, lock)? {
        Installed::Satisfies(v) => return Ok(Resolved::Installed(v)),
        Installed::Grows(v) => Some(v),
        Installed::Nothing => None,
    };
    // Growing a version keeps its cuDNN and its other libraries.
    let mut libs = grow.as_ref().map(|v| v.libs()).unwrap_or_default();
    for (l, v) in stack.libs.iter() {
        libs.insert(l, v.clone());
    }
    let request = pypi::Request {
        spec: StackSpec {
            cuda: stack.cuda.clone(),
            cudnn: stack
                .cudnn
                .clone()
                .or_else(|| grow.as_ref().and_then(|v| v.cudnn().cloned())),
            libs,
        },
        profile,
        with,
        without: req.without.clone(),
    };
    let plan = match (lock, remote) {
        (Some(l), r) => locked_plan(tell, settings, l, r).await?,
        (None, Some(remote)) => remote.plan(&request).await?,
        (None, None) => unreachable!("only --frozen opens no source, and it has a lock"),
    };
    if let Some(v) = &grow {
        let added: Vec<&str> = plan
            .artifacts
            .iter()
            .map(|a| a.component.as_str())
            .filter(|c| !v.meta.components.iter().any(|h| h.name == *c))
            .collect();
        if added.is_empty() {
            tell.info(&format!(
                "no source has more of the {} profile for {} than it holds",
                profile.name(),
                v.name
            ));
            return Ok(Resolved::Installed(v.clone()));
        }
        tell.info(&format!(
            "adding {} to {} (installed with the {} profile)",
            added.join(", "),
            v.name,
            v.meta.profile.as_deref().unwrap_or("runtime")
        ));
    }
    for n in &plan.notes {
        tell.warn(n);
    }
    for n in &plan.info {
        tell.info(n);
    }
    Ok(Resolved::Plan { plan, grow })
}

/// What is installed of the release a request resolves to.
enum Installed {
    /// Nothing that counts (or the request looks at nothing installed).
    Nothing,
    /// A version that holds what is asked: the answer.
    Satisfies(crate::store::Installed),
    /// A version in the user's root with less than is asked: grown.
    Grows(crate::store::Installed),
}

/// Already there (in the user's root or the system root)? Decided without
/// the network. Installed in the user's root with a smaller profile (or
/// without a component now asked for): reinstalled with what is missing,
/// the packages it has coming from the package store. `--force` and
/// `--dry-run` look at nothing installed.
fn installed_or_grown(
    ctx: &Context,
    req: &Request,
    stack: &StackSpec,
    profile: Profile,
    with: &[String],
    remote: Option<&Remote>,
    lock: Option<&ForInstall>,
) -> Result<Installed> {
    if req.force || req.dry_run {
        return Ok(Installed::Nothing);
    }
    let seen = crate::store::Store::configured(ctx)?;
    let release = match (lock, remote) {
        (Some(l), _) => l.lock.stack.cuda.clone(),
        (None, Some(r)) => r.release_for(stack)?,
        (None, None) => unreachable!("only --frozen opens no source, and it has a lock"),
    };
    // With a lock, only the version of exactly the locked name counts
    // (12.4.1+cudnn9.28.0.42 is not the 12.4.1 a lock without cuDNN
    // describes), and only if it holds the locked files.
    let found = installed_release(&seen, stack, &release)?
        .filter(|v| lock.is_none_or(|l| v.name == l.lock.name()));
    let Some(v) = found else {
        return Ok(Installed::Nothing);
    };
    if let Some(l) = lock {
        let differences = crate::install::lockfile::differences_installed(
            &l.lock,
            l.platform,
            &v.meta.components,
        );
        if !differences.is_empty() {
            return Err(Error::Install(InstallError::InstalledDiffersFromLock {
                path: l.path.clone(),
                version: v.name.to_string(),
                differences,
            }));
        }
    }
    if covers(&v, profile, with) {
        return Ok(Installed::Satisfies(v));
    }
    if v.dir.starts_with(ctx.root()) {
        return Ok(Installed::Grows(v));
    }
    Ok(Installed::Nothing)
}

/// An installed version of exactly this release that satisfies the spec.
fn installed_release(
    store: &Store,
    stack: &StackSpec,
    release: &crate::spec::Version,
) -> Result<Option<crate::store::Installed>> {
    Ok(store.list()?.into_iter().find(|v| {
        v.satisfies(stack)
            && v.cuda() == Some(release)
            && v.meta.kind == crate::store::Kind::Installed
    }))
}

/// Does an installed version hold what this profile (and `--with`) asks for?
fn covers(v: &crate::store::Installed, profile: Profile, with: &[String]) -> bool {
    let rank = |p: Profile| match p {
        Profile::Runtime => 0,
        Profile::Devel => 1,
        Profile::Full => 2,
    };
    let had = match v.meta.profile.as_deref() {
        Some("full") => Profile::Full,
        Some("devel") => Profile::Devel,
        _ => Profile::Runtime,
    };
    rank(had) >= rank(profile)
        && with
            .iter()
            .all(|c| c == "cudnn" || v.meta.components.iter().any(|h| h.name == *c))
}

/// The plan of a locked install: for `--frozen` the lock's own files (only
/// from configured sources); otherwise a fresh resolution through the
/// configured sources that must agree with the lock in every version, size,
/// hash and source.
async fn locked_plan(
    tell: &dyn Tell,
    settings: &Settings,
    l: &ForInstall,
    remote: Option<&Remote>,
) -> Result<Plan> {
    let Some(remote) = remote else {
        return l.frozen_plan(settings);
    };
    let (foreign, sources) = l.foreign(settings)?;
    if !foreign.is_empty() {
        tell.warn(&format!(
            "{} names URLs outside the configured sources for {}; they are not used: the pinned files come from {}",
            l.path.display(),
            foreign.join(", "),
            sources.join(", ")
        ));
    }
    let plan = remote.plan(&l.request()).await?;
    l.agrees(plan, &remote.index_shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(stack: Want) -> Request {
        Request {
            stack,
            lock: Following::WhenPinned,
            profile: Profile::Runtime,
            with: Vec::new(),
            without: Vec::new(),
            source: SourceChoice::default(),
            allow_unverified: false,
            offline: false,
            refresh: Refresh::WhenStale,
            force: false,
            dry_run: false,
            jobs: 8,
        }
    }

    fn stack(s: &str) -> StackSpec {
        match Spec::parse(s).unwrap() {
            Spec::Stack(s) => s,
            other => panic!("{other} is no stack"),
        }
    }

    #[test]
    fn only_a_request_that_names_nothing_follows_a_lock_by_default() {
        assert!(!request(Want::Selected).explicit());
        assert!(request(Want::Spec(stack("12.4"))).explicit());
        let mut with = request(Want::Selected);
        with.with = vec!["nvcc".into()];
        assert!(with.explicit());
        let mut without = request(Want::Selected);
        without.without = vec!["cufft".into()];
        assert!(without.explicit());
    }

    #[test]
    fn a_locks_source_choice_overrides_the_requests() {
        let mut req = request(Want::Selected);
        req.offline = true;
        req.allow_unverified = true;
        let opts = req.sources(None);
        assert_eq!(opts.choice, req.source);
        assert!(opts.offline && opts.allow_unverified);
        assert_eq!(opts.refresh, Refresh::WhenStale);
        let other = SourceChoice::Pypi;
        assert_eq!(req.sources(Some(other)).choice, other);
    }
}
