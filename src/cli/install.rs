//! `cudaenv install [SPEC]`: the flags into an install request, the planner
//! (`crate::install::planner`) for the stack and its plan, then the plan to
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
//! the plan comes from the lock instead (`install::planner`, following
//! `lockfile::follow`): re-resolved and compared, or taken as the lock names it.

use std::sync::Arc;
use std::time::Instant;

use super::Env;
use super::resolution::{self, Resolution};
use crate::context::env_vars;
use crate::error::{Error, ExitCode, Result, StoreError};
use crate::install::engine::{self, Outcome};
use crate::install::fetch::{self, Fetcher, Progress};
use crate::install::planner::{self, Following, Request, Resolved, Want};
use crate::install::sources::Plan;
use crate::install::sources::measure::{PlanSize, human_bytes};
use crate::spec::StackSpec;
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

impl Args {
    /// The planner's request: what the flags say, checked by clap.
    fn request(&self) -> Request {
        let stack = match (&self.spec, &self.for_framework) {
            (_, Some(req)) => Want::Framework(req.clone()),
            (Some(s), None) => Want::Spec(s.clone()),
            (None, None) => Want::Selected,
        };
        Request {
            stack,
            lock: if self.frozen {
                Following::Frozen
            } else if self.locked {
                Following::Locked
            } else {
                Following::WhenPinned
            },
            profile: self.resolution.profile(),
            with: self.resolution.with_names(),
            without: self.resolution.without_names(),
            source: self.resolution.source(),
            allow_unverified: self.allow_unverified,
            offline: self.offline,
            refresh: resolution::refresh(self.refresh),
            force: self.force,
            dry_run: self.dry_run,
            jobs: self.jobs,
        }
    }
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
    let rules = super::compat::Rules {
        env,
        machine: &machine,
        strict: args.strict,
    };
    let req = args.request();
    let chosen = planner::choose(&env.ctx, &env.printer, &req, &rules)?;
    super::block_on(install_async(env, &args, &req, &chosen))
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

async fn install_async(
    env: &Env,
    args: &Args,
    req: &Request,
    chosen: &planner::Chosen,
) -> Result<ExitCode> {
    let started = Instant::now();
    let store = Store::new(env.ctx.root());
    let settings = env.settings()?;
    let (remote, resolved) = planner::plan(&env.ctx, &env.printer, &settings, req, chosen).await?;
    let (plan, grow) = match resolved {
        Resolved::Plan { plan, grow } => (plan, grow),
        Resolved::Installed(v) => {
            refresh_shims(env, &store);
            return report(env, args, &v, true, started);
        }
    };
    // One `Timeouts` for the whole command: a stall seen while resolving
    // also ends the downloads.
    let (http, cache) = match &remote {
        Some(r) => (r.http.clone(), r.cache.clone()),
        None => (
            fetch::Http::from_ctx(&env.ctx)?,
            fetch::Cache::new(env.ctx.cache_dir()),
        ),
    };
    if args.dry_run {
        let size = crate::install::sources::measure::measure(&plan, &cache, &http).await;
        return print_plan(env, args, &plan, &size);
    }
    let bars = Arc::new(Bars::new(
        env.bars_hidden() || args.json,
        env.printer.clone(),
    ));
    let progress: Arc<dyn Progress> = bars.clone();
    let fetcher = Fetcher::new(http, cache, req.offline, req.jobs, progress)
        .with_parallel_min(settings.parallel_download_min.value)
        .with_max_download(settings.max_download.value);
    if let Some(point) = env.ctx.var(env_vars::CUDAENV_CRASH_AT) {
        crate::context::failpoint::arm(crate::context::failpoint::Point::parse(point)?);
    }
    let opts = engine::Options {
        force: req.force || grow.is_some(),
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
