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
use crate::error::{Error, ExitCode, Result};
use crate::fetch::{self, Cache, Fetcher, Progress};
use crate::install::{self, Outcome};
use crate::registry;
use crate::select;
use crate::sources::pypi::{self, Index, PypiSource, Request};
use crate::sources::{Plan, Profile, SourceKind};
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
    /// Where the bits come from.
    #[arg(long, value_enum, value_name = "S")]
    pub source: Option<SourceKind>,
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
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let stack = match &args.spec {
        Some(s) => stack_of(Spec::parse(s)?, s)?,
        None => {
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
    match args.source {
        None | Some(SourceKind::Pypi) => {}
        Some(other) => {
            return Err(Error::NotAvailable {
                what: format!("the `{}` source", other.name()),
                source_name: None,
                hint: Some("use `--source pypi`".into()),
            });
        }
    }
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
    let (index_url, _why) = pypi::index_url(&env.ctx);
    let client = fetch::client()?;
    let source = PypiSource::new(
        Index::new(&index_url, client.clone()).with_cache(cache.dir(), args.offline),
    );

    // Already there? Decided from the registry alone, so no network is needed.
    if !args.force && !args.dry_run {
        let release = source.release(&stack)?;
        if let Some(v) = store.list()?.into_iter().find(|v| {
            v.satisfies(&stack)
                && v.cuda() == Some(&release.version)
                && v.meta.kind == crate::store::Kind::Installed
        }) {
            return report(env, args, &v, true, started);
        }
    }

    let req = Request {
        spec: stack,
        profile: args.profile,
        with: args.with.clone(),
        without: args.without.clone(),
    };
    let plan = source.plan(&req).await?;
    for n in &plan.notes {
        env.printer.warn(n);
    }
    if args.dry_run {
        return print_plan(args, &plan);
    }
    let bars = Arc::new(Bars::new(env.printer.quiet || args.json));
    let progress: Arc<dyn Progress> = bars.clone();
    let fetcher = Fetcher::new(client, cache, args.offline, args.jobs, progress);
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
    if let Err(e) = crate::shims::rehash(&store) {
        env.printer.warn(format!("could not update the shims: {e}"));
    }
    report(env, args, &v, already, started)
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
        text.push_str(&format!(
            "  {} {}\n    {}\n    size {}  sha256 {}\n",
            a.component,
            a.version,
            a.url,
            a.size
                .map(|s| s.to_string())
                .unwrap_or_else(|| "unknown".into()),
            a.sha256.as_deref().unwrap_or("none")
        ));
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
