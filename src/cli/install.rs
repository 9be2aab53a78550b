//! `cudaenv install [SPEC]`: ask `sources::remote` for a plan, then hand it to
//! the install engine (`crate::install::engine`).
//!
//! Without SPEC it installs what the current selection pins (`.cuda-version`,
//! `CUDAENV_VERSION`, the global file). `--dry-run` prints the plan (URL, size,
//! sha256 of every file, then the download and disk totals) and changes
//! nothing. A version installed with a smaller profile than asked for is
//! reinstalled with what is missing. Ctrl-C stops the install, removes its
//! staging directory and exits 130.
//!
//! With `--locked` / `--frozen`, or without SPEC beside a matching `cuda.lock`,
//! the plan comes from the lock instead (`cli::lock`): re-resolved and
//! compared, or taken as the lock names it.

use std::sync::Arc;
use std::time::Instant;

use super::Env;
use super::resolution::{self, Resolution};
use crate::activation::select;
use crate::context::env_vars;
use crate::error::{Error, ExitCode, InstallError, Result, SpecError, StoreError};
use crate::install::engine::{self, Outcome};
use crate::install::fetch::{self, Fetcher, Progress};
use crate::install::settings::Settings;
use crate::install::sources::measure::{PlanSize, human_bytes};
use crate::install::sources::pypi::Request;
use crate::install::sources::remote::{self, Remote};
use crate::install::sources::resolve::SourceChoice;
use crate::install::sources::{Plan, Profile};
use crate::spec::{Spec, StackSpec};
use crate::store::Store;
use crate::ui::progress::Bars;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to install: `12.4`, `12.4.1`, `12.4+cudnn9.1`. Default: the selected version.
    #[arg(value_parser = resolution::stack_spec("install"))]
    pub spec: Option<StackSpec>,
    #[command(flatten)]
    pub resolution: Resolution,
    /// Accept downloads that no pinned sha256 can verify (registry entries without one).
    #[arg(long)]
    pub allow_unverified: bool,
    /// Print what would be fetched (URL, size, sha256) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Use only the download cache and the stored release list; fail, naming
    /// the file, when the cache lacks something.
    #[arg(long, conflicts_with = "refresh")]
    pub offline: bool,
    /// Read the release list from the package index now, however recent the stored one is.
    #[arg(long)]
    pub refresh: bool,
    /// Concurrent connections.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 8)]
    pub jobs: usize,
    /// Reinstall even if the version is already installed.
    #[arg(short, long)]
    pub force: bool,
    /// Install the stack a framework release needs (`tensorflow==2.10`,
    /// `torch==2.4`; a bare name uses the release in the current Python environment).
    #[arg(
        long = "for",
        value_name = "FRAMEWORK[==VERSION]",
        conflicts_with = "spec"
    )]
    pub for_framework: Option<crate::machine::compat::FrameworkReq>,
    /// Refuse to install a CUDA this machine's driver or GPU cannot run (default: warn).
    #[arg(long)]
    pub strict: bool,
    /// Install into the system root (CUDAENV_SYSTEM_ROOT / `system-root`), for
    /// everyone; needs write access to it. Default: your own root.
    #[arg(long)]
    pub system: bool,
    #[command(flatten)]
    pub target: super::compat::TargetArgs,
    /// Install exactly what cuda.lock (beside .cuda-version) pins, re-resolved
    /// through the configured sources; fail, naming the difference, when
    /// .cuda-version, the lock or the index disagree. Without a SPEC,
    /// `install` uses the lock anyway when it matches .cuda-version.
    #[arg(long, conflicts_with_all = ["spec", "for_framework", "with", "without", "source"])]
    pub locked: bool,
    /// Install cuda.lock's files as the lock names them, resolving nothing
    /// (no index request); only URLs on the configured sources are fetched.
    #[arg(long, conflicts_with_all = ["spec", "for_framework", "with", "without", "source", "refresh"])]
    pub frozen: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let system_env;
    let env = if args.system {
        system_env = system_root_env(env)?;
        &system_env
    } else {
        env
    };
    let machine = super::compat::this_machine(env, &args.target)?;
    let explicit =
        args.spec.is_some() || args.for_framework.is_some() || args.resolution.names_components();
    let lock = super::lock::for_install(env, args.locked, args.frozen, args.offline, explicit)?;
    let stack = match (&args.spec, &args.for_framework) {
        _ if lock.is_some() => lock.as_ref().expect("checked").lock.exact(),
        (_, Some(req)) => super::compat::stack_for_cli(env, req, &machine)?,
        (Some(s), None) => s.clone(),
        (None, None) => {
            let sel = select::select(&env.ctx)?;
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
    super::compat::guard_install(env, &machine, &stack, args.strict)?;
    resolution::block_on(install_async(env, &args, stack, lock.as_ref()))
}

/// `env` with the system root as its root, once it is known that this user
/// can write there (else exit 9, before anything is fetched).
fn system_root_env(env: &Env) -> Result<Env> {
    let root = crate::context::config::system_root(&env.ctx)?
        .ok_or(Error::Store(StoreError::NoSystemRoot))?;
    if !crate::store::trust::can_write(&root) {
        return Err(Error::Store(StoreError::SystemRootNotWritable {
            root,
            action: "install into it".into(),
        }));
    }
    Ok(Env {
        ctx: env.ctx.with_root(root),
        printer: env.printer.clone(),
    })
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

async fn install_async(
    env: &Env,
    args: &Args,
    stack: StackSpec,
    lock: Option<&super::lock::ForInstall>,
) -> Result<ExitCode> {
    let started = Instant::now();
    let store = Store::new(env.ctx.root());
    let settings = env.settings()?;
    // `--frozen` resolves nothing: no source is opened.
    let remote = match lock {
        Some(l) if l.frozen() => None,
        _ => Some(open_remote(env, &settings, args, lock.map(|l| l.lock.choice())).await?),
    };
    let (plan, grow) = match resolve(env, &settings, args, &stack, remote.as_ref(), lock).await? {
        Resolved::Plan { plan, grow } => (plan, grow),
        Resolved::Installed(v) => {
            refresh_shims(env, &store);
            return report(env, args, &v, true, started);
        }
    };
    // One `Timeouts` for the whole command: a stall seen while resolving
    // also ends the downloads.
    let (client, cache, timeouts) = match &remote {
        Some(r) => (r.client.clone(), r.cache.clone(), r.timeouts.clone()),
        None => {
            let timeouts = fetch::timeouts::Timeouts::from_ctx(&env.ctx)?;
            (
                fetch::client(&timeouts)?,
                fetch::Cache::new(env.ctx.cache_dir()),
                timeouts,
            )
        }
    };
    if args.dry_run {
        let size =
            crate::install::sources::measure::measure(&plan, &cache, &client, &timeouts).await;
        return print_plan(env, args, &plan, &size);
    }
    let bars = Arc::new(Bars::new(
        env.bars_hidden() || args.json,
        env.printer.clone(),
    ));
    let progress: Arc<dyn Progress> = bars.clone();
    let fetcher = Fetcher::new(client, cache, args.offline, args.jobs, progress)
        .with_parallel_min(settings.parallel_download_min.value)
        .with_max_download(settings.max_download.value)
        .with_timeouts(timeouts);
    if let Some(point) = env.ctx.var(env_vars::CUDAENV_CRASH_AT) {
        crate::context::failpoint::arm(crate::context::failpoint::Point::parse(point)?);
    }
    let opts = engine::Options {
        force: args.force || grow.is_some(),
        threads: 0,
        keep_downloads: settings.keep_downloads.value,
    };
    let outcome = engine::install(&store, &fetcher, &plan, &opts).await;
    bars.clear();
    let (v, left) = match outcome? {
        Outcome::Installed(v, left) => (v, Some(left)),
        Outcome::AlreadyInstalled(v) => (v, None),
    };
    refresh_shims(env, &store);
    report(env, args, &v, left.is_none(), started)?;
    if let Some(left) = left
        && !args.json
    {
        env.printer.info(cache_note(&left));
    }
    Ok(ExitCode::Success)
}

/// What the install left in the cache, in one line: the unpacked packages
/// cost nothing beside the version (they are its files), and the archives
/// are gone unless `keep-downloads` keeps them.
fn cache_note(left: &engine::Leftover) -> String {
    let packages = format!(
        "the cache keeps the unpacked packages ({}: the version's own files, hard-linked, no extra disk) for reinstalls",
        human_bytes(left.packages)
    );
    match (left.downloads_deleted, left.downloads_kept) {
        (0, 0) => format!("{packages}; nothing was downloaded"),
        (deleted, 0) => format!(
            "{packages}; the downloaded archives ({}) were deleted (`keep-downloads = true` keeps them)",
            human_bytes(deleted)
        ),
        (_, kept) => format!(
            "{packages} and, as keep-downloads asks, the downloaded archives ({}; `cudaenv cache clean` deletes them)",
            human_bytes(kept)
        ),
    }
}

/// The sources as `args` configure them (`choice`, a lock's, overrides
/// `--source`), with their notices printed.
pub(crate) async fn open_remote(
    env: &Env,
    settings: &Settings,
    args: &Args,
    choice: Option<SourceChoice>,
) -> Result<Remote> {
    resolution::open_remote(
        env,
        settings,
        remote::Options {
            choice: choice.unwrap_or(args.resolution.source()),
            refresh: resolution::refresh(args.refresh),
            offline: args.offline,
            allow_unverified: args.allow_unverified,
        },
    )
    .await
}

/// What resolving a request found.
pub(crate) enum Resolved {
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

/// Resolves a stack as `install` does, from `args`' profile and components
/// through `remote`; prints the plan's notes. `mirror` resolves through this
/// too, so a mirror holds exactly what `install` will ask for.
///
/// With a lock, its own profile and components decide (not the command
/// line's defaults), and the plan comes from the lock (`cli::lock`); only
/// `--frozen` resolves without `remote`.
pub(crate) async fn resolve(
    env: &Env,
    settings: &Settings,
    args: &Args,
    stack: &StackSpec,
    remote: Option<&Remote>,
    lock: Option<&super::lock::ForInstall>,
) -> Result<Resolved> {
    let (profile, with) = match lock {
        Some(l) => (l.lock.stack.profile, l.lock.stack.with.clone()),
        None => (args.resolution.profile(), args.resolution.with_names()),
    };
    // Already there (in the user's root or the system root)? Decided without
    // the network. Installed in the user's root with a smaller profile (or
    // without a component now asked for): reinstalled with what is missing,
    // the packages it has coming from the package store.
    let mut grow = None;
    if !args.force && !args.dry_run {
        let seen = crate::store::Store::configured(&env.ctx)?;
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
        if let Some(v) = found {
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
            if covers(&v, profile, &with) {
                return Ok(Resolved::Installed(v));
            }
            if v.dir.starts_with(env.ctx.root()) {
                grow = Some(v);
            }
        }
    }
    // Growing a version keeps its cuDNN and its other libraries.
    let mut libs = grow.as_ref().map(|v| v.libs()).unwrap_or_default();
    for (l, v) in stack.libs.iter() {
        libs.insert(l, v.clone());
    }
    let req = Request {
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
        without: args.resolution.without_names(),
    };
    let plan = match (lock, remote) {
        (Some(l), r) => super::lock::plan_for_install(env, settings, l, r).await?,
        (None, Some(remote)) => remote.plan(&req).await?,
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
            env.printer.info(format!(
                "no source has more of the {} profile for {} than it holds",
                profile.name(),
                v.name
            ));
            return Ok(Resolved::Installed(v.clone()));
        }
        env.printer.info(format!(
            "adding {} to {} (installed with the {} profile)",
            added.join(", "),
            v.name,
            v.meta.profile.as_deref().unwrap_or("runtime")
        ));
    }
    for n in &plan.notes {
        env.printer.warn(n);
    }
    for n in &plan.info {
        env.printer.info(n);
    }
    Ok(Resolved::Plan { plan, grow })
}

/// Rehashes after every install, also one that found its version already
/// there: an install killed between its commit and its rehash left the
/// version without shims, and the re-run is what repairs that.
fn refresh_shims(env: &Env, store: &Store) {
    if let Err(e) = crate::activation::shims::rehash(store, &env.printer) {
        env.printer.warn(format!("could not update the shims: {e}"));
    }
}

fn report(
    env: &Env,
    args: &Args,
    v: &crate::store::Installed,
    already: bool,
    started: Instant,
) -> Result<ExitCode> {
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            name: String,
            cuda: Option<String>,
            cudnn: Option<String>,
            prefix: String,
            already_installed: bool,
            components: &'a [crate::store::Component],
        }
        env.out_json(&Out {
            name: v.name.to_string(),
            cuda: v.cuda().map(|c| c.to_string()),
            cudnn: v.cudnn().map(|c| c.to_string()),
            prefix: v.prefix().display().to_string(),
            already_installed: already,
            components: &v.meta.components,
        })?;
    } else if already && !v.dir.starts_with(env.ctx.root()) {
        env.printer.info(format!(
            "{} is already installed in the system root, at {} (use -f for a copy of your own)",
            v.name,
            v.dir.display()
        ));
    } else if already {
        env.printer.info(format!(
            "{} is already installed (use -f to reinstall)",
            v.name
        ));
    } else {
        env.printer.success(format!(
            "installed {} ({} components) in {:.1}s at {}",
            v.name,
            v.meta.components.len(),
            started.elapsed().as_secs_f64(),
            v.prefix().display()
        ));
    }
    Ok(ExitCode::Success)
}

/// For a component that comes in several files (Debian and NVIDIA ship
/// cuBLAS and cuBLASLt as two packages of `cublas`): which file this is, by
/// its package name, and the library it carries.
fn which_part(plan: &Plan, a: &crate::install::sources::Artifact) -> String {
    if plan
        .artifacts
        .iter()
        .filter(|o| o.component == a.component)
        .count()
        < 2
    {
        return String::new();
    }
    let package = a.file_name.split(['_', '-']).next().unwrap_or(&a.file_name);
    let lower = a.file_name.to_ascii_lowercase();
    let library = match a.component.as_str() {
        "cublas" if lower.contains("cublaslt") => ": cuBLASLt",
        "cublas" => ": cuBLAS",
        _ => "",
    };
    format!(", {package}{library}")
}

fn print_plan(env: &Env, args: &Args, plan: &Plan, size: &PlanSize) -> Result<ExitCode> {
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            plan: &'a Plan,
            size: &'a PlanSize,
        }
        env.out_json(&Out { plan, size })?;
        return Ok(ExitCode::Success);
    }
    let mut text = format!(
        "{} (CUDA {}{}, profile {})\n",
        plan.name,
        plan.cuda,
        plan.cudnn
            .as_ref()
            .map(|c| format!(", cuDNN {c}"))
            .unwrap_or_default(),
        plan.profile.name()
    );
    for a in &plan.artifacts {
        let takes = match &a.layout {
            crate::install::sources::Layout::Runfile { members, optional } => format!(
                "    takes {}{}\n",
                members.join(", "),
                if optional.is_empty() {
                    String::new()
                } else {
                    format!(" (and if present: {})", optional.join(", "))
                }
            ),
            crate::install::sources::Layout::NestedRunfile { installer } => {
                format!("    takes the toolkit inside run_files/{installer}*.run\n")
            }
            _ => String::new(),
        };
        text.push_str(&format!(
            "  {} {} ({}{})\n    {}\n    size {}  sha256 {}\n",
            a.component,
            a.version,
            a.source.name(),
            which_part(plan, a),
            a.url,
            a.size
                .map(|s| s.to_string())
                .unwrap_or_else(|| "unknown".into()),
            a.sha256.as_deref().unwrap_or("none")
        ));
        text.push_str(&takes);
    }
    let disk = if size.unpacked_bytes == 0 && size.unpacked_unknown > 0 {
        "unknown".to_string()
    } else {
        human_bytes(size.unpacked_bytes)
    };
    text.push_str(&format!(
        "download {}{}{}\ndisk {}{}{}\n",
        human_bytes(size.download_bytes),
        if size.download_unknown > 0 {
            format!(" + {} files of unknown size", size.download_unknown)
        } else {
            String::new()
        },
        if size.cached > 0 {
            format!(" ({} files already in the download cache)", size.cached)
        } else {
            String::new()
        },
        disk,
        if size.unpacked_bytes == 0 && size.unpacked_unknown > 0 {
            format!(
                " ({} {} whose unpacked size is known only once downloaded)",
                size.unpacked_unknown,
                if size.unpacked_unknown == 1 {
                    "archive"
                } else {
                    "archives"
                }
            )
        } else if size.unpacked_unknown > 0 {
            format!(
                " + {} archives whose unpacked size is unknown",
                size.unpacked_unknown
            )
        } else {
            String::new()
        },
        if size.in_package_store > 0 {
            format!(
                " ({} packages already unpacked, shared by hard links)",
                size.in_package_store
            )
        } else {
            String::new()
        },
    ));
    env.out(text.as_bytes())?;
    Ok(ExitCode::Success)
}
