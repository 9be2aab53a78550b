//! `cudaenv install [SPEC]`: resolve a stack with a source, then hand the plan
//! to the install engine (`crate::install`).
//!
//! Without SPEC it installs what the current selection pins (`.cuda-version`,
//! `CUDAENV_VERSION`, the global file). `--dry-run` prints the plan (URL, size,
//! sha256 of every file) and changes nothing. Ctrl-C stops the install, removes
//! its staging directory and exits 130.

use std::sync::Arc;
use std::time::Instant;

use super::Env;
use crate::config::Config;
use crate::env_vars;
use crate::error::{Error, ExitCode, Result};
use crate::fetch::{self, Cache, Fetcher, Progress};
use crate::install::{self, Outcome};
use crate::registry;
use crate::select;
use crate::sources::debian::DebianSource;
use crate::sources::legacy::LegacyRegistry;
use crate::sources::nvidia::Catalog;
use crate::sources::pypi::{Index, PypiSource, Request};
use crate::sources::resolve::{PlanOfferer, Resolver, SourceChoice};
use crate::sources::{Plan, Platform, Profile, SourceKind};
use crate::spec::{Spec, StackSpec};
use crate::store::Store;
use crate::ui::{self, progress::Bars};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to install: `12.4`, `12.4.1`, `12.4+cudnn9.1`. Default: the selected version.
    pub spec: Option<String>,
    /// Which part of the toolkit to install.
    #[arg(long, value_enum, default_value_t = Profile::Runtime)]
    pub profile: Profile,
    /// Components to add to the profile (comma-separated), e.g. `--with nvcc,cccl`.
    #[arg(long, value_delimiter = ',', value_name = "C1,C2")]
    pub with: Vec<String>,
    /// Components to leave out (comma-separated), e.g. `--without cufft,curand`.
    #[arg(long, value_delimiter = ',', value_name = "C")]
    pub without: Vec<String>,
    /// Where the bits come from: `auto` takes each component from the first
    /// source that has it, in the configured order (see docs/sources.md).
    #[arg(long, value_enum, value_name = "S", default_value_t = SourceChoice::Auto)]
    pub source: SourceChoice,
    /// Accept downloads that no pinned sha256 can verify (registry entries without one).
    #[arg(long)]
    pub allow_unverified: bool,
    /// Print what would be fetched (URL, size, sha256) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Use only the download cache; fail, naming the file, when it lacks something.
    #[arg(long)]
    pub offline: bool,
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
    pub for_framework: Option<crate::compat::FrameworkReq>,
    /// Refuse to install a CUDA this machine's driver or GPU cannot run (default: warn).
    #[arg(long)]
    pub strict: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let machine = super::compat::this_machine(&env.ctx);
    let stack = match (&args.spec, &args.for_framework) {
        (_, Some(req)) => super::compat::stack_for_cli(env, req, &machine)?,
        (Some(s), None) => stack_of(Spec::parse(s)?, s)?,
        (None, None) => {
            let sel = select::select(&env.ctx)?;
            let text = sel.spec.to_string();
            let origin = sel.origin.to_string();
            stack_of(sel.spec, &text).map_err(|_| Error::InvalidSpec {
                input: text.clone(),
                reason: format!(
                    "selected by {origin}; `install` needs a CUDA version such as 12.4+cudnn9"
                ),
            })?
        }
    };
    super::compat::guard_install(env, &machine, &stack, args.strict)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Other(format!("cannot start the async runtime: {e}")))?;
    let result = runtime.block_on(async {
        tokio::select! {
            r = install_async(env, &args, stack) => r,
            // Dropping the install future drops its staging directory (deleted).
            _ = tokio::signal::ctrl_c() => Err(Error::Interrupted),
        }
    });
    // Do not wait for blocking work still running (an interrupted unpack).
    runtime.shutdown_background();
    result
}

/// The resolver, with the sources it does not know itself: PyPI's offer and
/// the Debian archive.
fn with_offer<'a>(
    mut r: Resolver<'a>,
    pypi: &'a PlanOfferer,
    debian: &'a DebianSource,
) -> Resolver<'a> {
    r.others = vec![pypi, debian];
    r
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

fn stack_of(spec: Spec, text: &str) -> Result<StackSpec> {
    match spec {
        Spec::Stack(s) => Ok(s),
        _ => Err(Error::InvalidSpec {
            input: text.escape_debug().to_string(),
            reason: "`install` needs a CUDA version such as `12.4` or `12.4+cudnn9.1`".into(),
        }),
    }
}

async fn install_async(env: &Env, args: &Args, stack: StackSpec) -> Result<ExitCode> {
    let started = Instant::now();
    let store = Store::new(env.ctx.root());
    let cache = Cache::new(env.ctx.cache_dir());
    let config = Config::load(&env.ctx)?;
    let (index_url, _why) = config.pypi_index(&env.ctx);
    let client = fetch::client()?;
    let source = PypiSource::new(
        Index::new(&index_url, client.clone()).with_cache(cache.dir(), args.offline),
    );
    let req = Request {
        spec: stack.clone(),
        profile: args.profile,
        with: args.with.clone(),
        without: args.without.clone(),
    };

    let plan = if args.source == SourceChoice::Pypi {
        // Already there? Decided from the registry alone, so no network is needed.
        if !args.force && !args.dry_run {
            let release = source.release(&stack)?;
            if let Some(v) = installed_release(&store, &stack, &release.version)? {
                refresh_shims(env, &store);
                return report(env, args, &v, true, started);
            }
        }
        source.plan(&req).await?
    } else {
        let catalog = Catalog::load(cache.dir());
        let legacy = LegacyRegistry::load(env.ctx.root())?;
        for (path, why) in &catalog.skipped {
            env.printer.warn(format!(
                "ignoring the cached manifest {}: {why}",
                path.display()
            ));
        }
        let platform = Platform::current().ok_or_else(|| Error::NotAvailable {
            what: format!(
                "CUDA for {}-{}",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
            source_name: None,
            hint: Some("NVIDIA ships CUDA for Linux x86_64 and aarch64 (sbsa)".into()),
        })?;
        let mut pypi_offer = PlanOfferer {
            kind: SourceKind::Pypi,
            releases: pypi_releases().iter().map(|r| r.version.clone()).collect(),
            plan: None,
        };
        let base = config.nvidia_base(&env.ctx)?;
        let debian = DebianSource {
            mirror: config.debian_mirror(&env.ctx)?,
            platform,
        };
        let order = config.source_order();
        // PyPI's offer changes as its plan arrives, so it is attached per use
        // (`with_offer`) rather than captured here.
        let resolver = |_: &PlanOfferer| -> Result<Resolver<'_>> {
            Ok(Resolver {
                catalog: &catalog,
                legacy: legacy.clone(),
                base: base.clone(),
                platform,
                order: order.clone(),
                choice: args.source,
                allow_unverified: args.allow_unverified,
                others: vec![],
            })
        };
        let release = with_offer(resolver(&pypi_offer)?, &pypi_offer, &debian)
            .find_cuda(&stack.cuda)?
            .ok_or_else(|| Error::NotAvailable {
                what: format!("CUDA {}", stack.cuda),
                source_name: None,
                hint: Some(
                    "run `cudaenv ls-remote` to see what each source offers, or `cudaenv update` to fetch NVIDIA's newest manifests"
                        .into(),
                ),
            })?;
        if !args.force
            && !args.dry_run
            && let Some(v) = installed_release(&store, &stack, &release)?
        {
            refresh_shims(env, &store);
            return report(env, args, &v, true, started);
        }
        let exact = StackSpec {
            cuda: release.clone(),
            cudnn: stack.cudnn.clone(),
        };
        // PyPI's plan needs its index (network or cache): only asked for when
        // PyPI may serve something of this release.
        if resolver(&pypi_offer)?.allows(SourceKind::Pypi) && pypi_offer.releases.contains(&release)
        {
            let mut pypi_req = Request {
                spec: exact.clone(),
                ..req.clone()
            };
            let mut answer = source.plan(&pypi_req).await;
            if answer.is_err() && exact.cudnn.is_some() {
                // PyPI may lack that cuDNN; its toolkit parts can still serve.
                pypi_req.spec.cudnn = None;
                answer = source.plan(&pypi_req).await;
            }
            match answer {
                Ok(p) => pypi_offer.plan = Some(p),
                Err(e) => env
                    .printer
                    .info(format!("PyPI: {e}; using the other sources")),
            }
        }
        let plan = with_offer(resolver(&pypi_offer)?, &pypi_offer, &debian).plan_with(
            &exact,
            args.profile,
            &args.with,
            &args.without,
        )?;
        // PyPI's notes matter only for what PyPI serves: its "no nvcc binary"
        // limitation is moot when nvcc came from NVIDIA.
        let mut plan = plan;
        if let Some(p) = &pypi_offer.plan
            && plan.artifacts.iter().any(|a| a.source == SourceKind::Pypi)
        {
            let major = plan.cuda.major();
            let moot: Vec<&str> = p
                .artifacts
                .iter()
                .filter(|pa| {
                    !plan
                        .artifacts
                        .iter()
                        .any(|a| a.source == SourceKind::Pypi && a.component == pa.component)
                })
                .filter_map(|pa| registry::pypi().limitation(&pa.component, major))
                .map(|l| l.message.as_str())
                .collect();
            plan.notes.extend(
                p.notes
                    .iter()
                    .filter(|n| !moot.contains(&n.as_str()))
                    .cloned(),
            );
        }
        plan
    };
    for n in &plan.notes {
        env.printer.warn(n);
    }
    if args.dry_run {
        return print_plan(args, &plan);
    }
    let bars = Arc::new(Bars::new(env.printer.quiet || args.json));
    let progress: Arc<dyn Progress> = bars.clone();
    let parallel_min = match env.ctx.var(env_vars::CUDAENV_PARALLEL_DOWNLOAD_MIN) {
        None => fetch::PARALLEL_MIN,
        Some(v) => v.parse().map_err(|_| Error::InvalidSpec {
            input: v.to_string(),
            reason: format!(
                "{} must be a number of bytes",
                env_vars::CUDAENV_PARALLEL_DOWNLOAD_MIN
            ),
        })?,
    };
    let fetcher = Fetcher::new(client, cache, args.offline, args.jobs, progress)
        .with_parallel_min(parallel_min);
    if let Some(point) = env.ctx.var(env_vars::CUDAENV_CRASH_AT) {
        crate::failpoint::arm(crate::failpoint::Point::parse(point)?);
    }
    let opts = install::Options {
        force: args.force,
        threads: 0,
    };
    let outcome = install::install(&store, &fetcher, &plan, &opts).await;
    bars.clear();
    let (v, already) = match outcome? {
        Outcome::Installed(v) => (v, false),
        Outcome::AlreadyInstalled(v) => (v, true),
    };
    refresh_shims(env, &store);
    report(env, args, &v, already, started)
}

/// Rehashes after every install, also one that found its version already
/// there: an install killed between its commit and its rehash left the
/// version without shims, and the re-run is what repairs that.
fn refresh_shims(env: &Env, store: &Store) {
    if let Err(e) = crate::shims::rehash(store) {
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
        ui::out_json(&Out {
            name: v.name.to_string(),
            cuda: v.cuda().map(|c| c.to_string()),
            cudnn: v.cudnn().map(|c| c.to_string()),
            prefix: v.prefix().display().to_string(),
            already_installed: already,
            components: &v.meta.components,
        })?;
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

fn print_plan(args: &Args, plan: &Plan) -> Result<ExitCode> {
    if args.json {
        ui::out_json(plan)?;
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
            crate::sources::Layout::Runfile { members, optional } => format!(
                "    takes {}{}\n",
                members.join(", "),
                if optional.is_empty() {
                    String::new()
                } else {
                    format!(" (and if present: {})", optional.join(", "))
                }
            ),
            crate::sources::Layout::NestedRunfile { installer } => {
                format!("    takes the toolkit inside run_files/{installer}*.run\n")
            }
            _ => String::new(),
        };
        text.push_str(&format!(
            "  {} {} ({})\n    {}\n    size {}  sha256 {}\n",
            a.component,
            a.version,
            a.source.name(),
            a.url,
            a.size
                .map(|s| s.to_string())
                .unwrap_or_else(|| "unknown".into()),
            a.sha256.as_deref().unwrap_or("none")
        ));
        text.push_str(&takes);
    }
    ui::out(text.as_bytes())?;
    Ok(ExitCode::Success)
}

/// The CUDA releases the registry knows that PyPI serves.
pub fn pypi_releases() -> Vec<&'static registry::Release> {
    let p = registry::pypi();
    registry::cuda_releases()
        .releases
        .iter()
        .filter(|r| p.serves(&r.version))
        .collect()
}
