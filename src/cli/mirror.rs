//! `cudaenv mirror DIR SPEC…`: write what installing SPEC… needs into DIR,
//! laid out as a PyPI simple index and an NVIDIA mirror (`crate::install::mirror`),
//! for machines without network; which files and how they get there is
//! `install::mirror::fill`'s.
//!
//! Each spec is resolved by `install`'s own planner (`install::planner`: same
//! sources, order, profile, `--with`/`--without`), so `CUDAENV_PYPI_INDEX=file://DIR/pypi/simple
//! CUDAENV_NVIDIA_MIRROR=file://DIR/nvidia cudaenv install SPEC` with the same
//! options asks for exactly the files the mirror holds. Every file is fetched
//! into the download cache first (verified against its index or manifest
//! sha256 like any download), hashed again, then linked or copied into DIR.
//! All specs are resolved before DIR is touched, so a bad spec changes nothing.

use std::path::PathBuf;
use std::sync::Arc;

use super::Env;
use super::resolution::{self, Resolution};
use crate::error::{ExitCode, Result};
use crate::install::fetch::{Fetcher, Progress};
use crate::install::mirror::{Mirror, fill};
use crate::install::planner::{self, Following, Request, Resolved, Want};
use crate::install::sources::remote::Refresh;
use crate::install::sources::{Plan, SourceKind};
use crate::spec::StackSpec;
use crate::ui::progress::Bars;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory to write (created if needed; a mirror written before is added to).
    pub dir: PathBuf,
    /// The stacks to mirror: `12.4`, `12.4.1+cudnn9.1`, `11.8` …
    #[arg(
        value_name = "SPEC",
        required_unless_present = "for_framework",
        value_parser = resolution::stack_spec("mirror")
    )]
    pub specs: Vec<StackSpec>,
    /// Also the stack each framework release needs (`torch==2.4`), chosen as
    /// `install --for` chooses it: for the target machine when one is given.
    #[arg(long = "for", value_name = "FRAMEWORK==VERSION")]
    pub for_framework: Vec<crate::machine::compat::FrameworkReq>,
    #[command(flatten)]
    pub resolution: Resolution,
    /// Accept downloads that no pinned sha256 can verify (their hash is then
    /// the one computed here, recorded in the mirror).
    #[arg(long)]
    pub allow_unverified: bool,
    /// Concurrent downloads.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 8)]
    pub jobs: usize,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub target: super::compat::TargetArgs,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    super::block_on(mirror_async(env, &args))
}

/// The install request for one stack of this mirror: forced and a dry run,
/// so it always resolves and never looks at what is installed; read from
/// the sources now, as `install` reads them by default.
fn request(args: &Args, stack: StackSpec) -> Request {
    Request {
        stack: Want::Spec(stack),
        lock: Following::WhenPinned,
        profile: args.resolution.profile(),
        with: args.resolution.with_names(),
        without: args.resolution.without_names(),
        source: args.resolution.source(),
        allow_unverified: args.allow_unverified,
        offline: false,
        refresh: Refresh::WhenStale,
        force: true,
        dry_run: true,
        jobs: args.jobs,
    }
}

async fn mirror_async(env: &Env, args: &Args) -> Result<ExitCode> {
    let settings = env.settings()?;
    let nvidia_base = settings.nvidia_base()?;
    let debian_base = settings.debian_base()?;

    let mut stacks = args.specs.clone();
    if !args.for_framework.is_empty() {
        let machine = super::compat::this_machine(env, &args.target)?;
        for req in &args.for_framework {
            stacks.push(super::compat::stack_for_cli(env, req, &machine)?);
        }
    }
    let requests: Vec<(StackSpec, Request)> = stacks
        .into_iter()
        .map(|s| (s.clone(), request(args, s)))
        .collect();
    let Some((_, first)) = requests.first() else {
        unreachable!("clap asks for a SPEC or --for");
    };
    // One set of sources for every spec (the options are the same for all).
    let remote = planner::open(&env.ctx, &env.printer, &settings, first.sources(None)).await?;
    let mut plans: Vec<Plan> = Vec::new();
    for (stack, req) in &requests {
        let Resolved::Plan { plan, .. } = planner::resolve(
            &env.ctx,
            &env.printer,
            &settings,
            req,
            stack,
            Some(&remote),
            None,
        )
        .await?
        else {
            unreachable!("--force resolves even what is installed");
        };
        plans.push(plan);
    }
    let wanted = fill::wanted(&remote, &plans, &nvidia_base, &debian_base).await?;

    let dir = crate::context::absolutize(&args.dir, env.ctx.cwd());
    let (mut mirror, _lock) = Mirror::open_locked(&dir, &env.printer).await?;
    let bars = Arc::new(Bars::new(
        env.bars_hidden() || args.json,
        env.printer.clone(),
    ));
    let progress: Arc<dyn Progress> = bars.clone();
    let fetcher = Fetcher::new(
        remote.http.clone(),
        remote.cache.clone(),
        false,
        args.jobs,
        progress,
    )
    .with_max_download(settings.max_download.value);
    let mut added = mirror.fetch_into(&fetcher, wanted, args.jobs).await?;
    bars.clear();
    let (manifests, has_manifests) = mirror.add_manifests(fetcher.cache().dir())?;
    added += manifests;
    for p in &plans {
        mirror.add_stack(p.name.as_str());
    }
    mirror.commit()?;
    report(env, args, &mirror, &plans, added, has_manifests)
}

fn report(
    env: &Env,
    args: &Args,
    mirror: &Mirror,
    plans: &[Plan],
    added: usize,
    has_manifests: bool,
) -> Result<ExitCode> {
    if args.json {
        #[derive(serde::Serialize)]
        struct File<'a> {
            path: &'a str,
            sha256: &'a str,
            size: u64,
        }
        #[derive(serde::Serialize)]
        struct Out<'a> {
            dir: String,
            pypi_index: String,
            nvidia_mirror: String,
            debian_mirror: String,
            /// What this run resolved.
            resolved: Vec<&'a str>,
            /// Every stack the mirror holds, from this run and earlier ones.
            stacks: Vec<&'a str>,
            added: usize,
            files: Vec<File<'a>>,
        }
        return env
            .out_json(&Out {
                dir: mirror.dir().display().to_string(),
                pypi_index: mirror.pypi_index_url(),
                nvidia_mirror: mirror.nvidia_url(),
                debian_mirror: mirror.debian_url(),
                resolved: plans.iter().map(|p| p.name.as_str()).collect(),
                stacks: mirror.stacks().collect(),
                added,
                files: mirror
                    .files()
                    .map(|(path, f)| File {
                        path,
                        sha256: &f.sha256,
                        size: f.size,
                    })
                    .collect(),
            })
            .map(|()| ExitCode::Success);
    }
    let (count, bytes) = mirror
        .files()
        .fold((0, 0u64), |(n, b), (_, f)| (n + 1, b + f.size));
    env.printer.success(format!(
        "mirrored {} into {} ({added} new files; {count} files, {:.1} MB in all)",
        plans
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        mirror.dir().display(),
        bytes as f64 / 1e6
    ));
    let has_debian = plans
        .iter()
        .flat_map(|p| &p.artifacts)
        .any(|a| a.source == SourceKind::Debian);
    let debian = if has_debian {
        format!(
            " CUDAENV_DEBIAN_MIRROR={}",
            mirror.debian_url().trim_end_matches('/')
        )
    } else {
        String::new()
    };
    env.printer.hint(format!(
        "install from it without network: CUDAENV_PYPI_INDEX={} CUDAENV_NVIDIA_MIRROR={}{debian} cudaenv install SPEC (with the same --profile/--with/--without/--source)",
        mirror.pypi_index_url().trim_end_matches('/'),
        mirror.nvidia_url().trim_end_matches('/'),
    ));
    if has_manifests {
        env.printer.hint(
            "it holds NVIDIA manifests fetched by `cudaenv update`: run `cudaenv update` there first, with the same CUDAENV_NVIDIA_MIRROR (and --trust-mirror if they were trusted here)",
        );
    }
    Ok(ExitCode::Success)
}
