//! `cudaenv ls-remote [SPEC]`: what the sources can install, which source
//! serves each version, and for which platforms PyPI has it.
//!
//! Everything comes from `sources::remote`: the embedded registries, the
//! manifests `cudaenv update` fetched, and PyPI's live catalogue (read again
//! when older than `catalogue-max-age`; `--refresh` reads it now, `--offline`
//! never). PyPI's cuDNN versions need its index, so they are listed only
//! with a SPEC (for the matching CUDA majors), and so are the builds of the
//! libraries beside the toolkit (NCCL, TensorRT, …) the SPEC or `--with`
//! names. What is listed is `sources::listing`'s; this file parses, calls
//! and prints.

use std::collections::BTreeMap;

use super::Env;
use crate::error::{ExitCode, Result};
use crate::install::sources::listing::{Listing, Query, Unreachable};
use crate::install::sources::remote::{self, CatalogueState, Remote};
use crate::install::sources::resolve::SourceChoice;
use crate::machine::compat::{Machine, Whose};
use crate::registry;
use crate::spec::Library;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only releases matching this spec (e.g. `12`, `12.4`).
    #[arg(value_parser = super::resolution::stack_spec("ls-remote"))]
    pub spec: Option<crate::spec::StackSpec>,
    /// Only what this source serves (`auto`: every source in the configured order).
    #[arg(long, value_enum, value_name = "S", default_value_t = SourceChoice::Auto)]
    pub source: SourceChoice,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Use the stored release list, however old, and contact no index.
    #[arg(long, conflicts_with = "refresh")]
    pub offline: bool,
    /// Read the release list from the package index now.
    #[arg(long)]
    pub refresh: bool,
    /// Also list the builds of these libraries beside the toolkit for the
    /// matching CUDA majors (needs a SPEC; a spec that names one, such as
    /// `12.4+nccl2.21`, lists it too, those of its version only).
    #[arg(
        long = "with",
        value_delimiter = ',',
        value_name = "LIB",
        requires = "spec",
        value_parser = clap::builder::PossibleValuesParser::new(Library::ALL.map(|l| l.component()))
    )]
    pub with: Vec<String>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let stack = args.spec.clone();
    // What this machine's driver and GPU can run (nothing is marked without a driver).
    let machine = super::compat::this_machine(env, &Default::default())?;
    super::block_on(list(env, &args, stack, machine))
}

/// The listing, on one runtime: the index answers the cuDNN questions too.
async fn list(
    env: &Env,
    args: &Args,
    stack: Option<crate::spec::StackSpec>,
    machine: Machine,
) -> Result<ExitCode> {
    let settings = env.settings()?;
    let remote = crate::install::planner::open(
        &env.ctx,
        &env.printer,
        &settings,
        remote::Options {
            choice: args.source,
            refresh: super::resolution::refresh(args.refresh),
            offline: args.offline,
            allow_unverified: false,
        },
    )
    .await?;
    let with: Vec<Library> = Library::ALL
        .into_iter()
        .filter(|l| args.with.iter().any(|w| w == l.component()))
        .collect();
    let query = Query {
        stack: stack.as_ref(),
        with: &with,
        offline: args.offline,
        choice: args.source,
    };
    let mut listing = Listing::stored(&remote, &query)?;
    if let Some(Unreachable { major, error }) = listing.add_pypi_cudnn(&remote, &query).await? {
        env.printer.warn(format!(
            "cannot list PyPI's cuDNN wheels for CUDA {major}: {error}"
        ));
        env.printer.hint(
            "the rest of this list comes from cudaenv's stored data; check the connection or CUDAENV_PYPI_INDEX",
        );
    }
    listing.add_libraries(&remote, &query).await?;
    if args.json {
        print_json(env, &remote, listing, &machine)?;
        return Ok(ExitCode::Success);
    }
    print_text(env, &listing, &machine)?;
    match &remote.state {
        CatalogueState::Fetched => env.printer.info(format!(
            "release list read from {} just now",
            remote.index_shown
        )),
        CatalogueState::Cached { age_secs } => env.printer.info(format!(
            "release list from {}, read {} ago (`--refresh` reads it again)",
            remote.index_shown,
            remote::human_age(*age_secs)
        )),
        // Stale and embedded lists were said above.
        CatalogueState::Stale { .. } | CatalogueState::Embedded | CatalogueState::Unused => {}
    }
    if listing.releases.is_empty() {
        env.printer.hint(
            "PyPI has CUDA 11.7-13.x, NVIDIA's redist manifests 11.4.2 and newer, the legacy runfiles 10.1-11.4.1; `cudaenv update` fetches newer manifests",
        );
    }
    Ok(ExitCode::Success)
}

#[derive(serde::Serialize)]
struct Rel {
    version: String,
    date: Option<String>,
    sources: Vec<&'static str>,
    /// Platforms PyPI has it for (from the catalogue; empty: not known).
    platforms: Vec<String>,
    /// Where PyPI's component list comes from (`registry`, `catalogue`, `both`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pypi_known: Option<crate::install::sources::pypi::Known>,
    /// Whether the machine's (this one's or the target's) driver and
    /// GPU run it (`null`: no driver to ask).
    runs_here: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why_not: Option<String>,
}

#[derive(serde::Serialize)]
struct Cudnn {
    version: String,
    source: &'static str,
    cuda: Vec<String>,
}

#[derive(serde::Serialize)]
struct Out {
    /// How the PyPI release list was obtained.
    catalogue: CatalogueState,
    cuda: Vec<Rel>,
    /// PyPI's cuDNN versions per CUDA major listed.
    cudnn: BTreeMap<String, Vec<String>>,
    /// cuDNN builds of the NVIDIA redist and legacy sources.
    cudnn_builds: Vec<Cudnn>,
    /// PyPI's builds of the libraries asked for, per CUDA major
    /// (`{"nccl": {"cuda12": [...]}}`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    libraries: BTreeMap<&'static str, BTreeMap<String, Vec<String>>>,
    /// NVIDIA's redist builds of the libraries asked for (cuSPARSELt, cuTENSOR).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    library_builds: Vec<LibraryBuild>,
}

#[derive(serde::Serialize)]
struct LibraryBuild {
    library: &'static str,
    version: String,
    source: &'static str,
    cuda: Vec<String>,
}

fn print_json(env: &Env, remote: &Remote, listing: Listing, machine: &Machine) -> Result<()> {
    let dates: BTreeMap<String, String> = registry::cuda_releases()
        .releases
        .iter()
        .filter_map(|r| Some((r.version.to_string(), r.date.clone()?)))
        .collect();
    let mut libraries: BTreeMap<_, BTreeMap<_, _>> = Default::default();
    for (lib, major, v) in &listing.libraries {
        libraries
            .entry(lib.component())
            .or_default()
            .insert(format!("cuda{major}"), v.clone());
    }
    env.out_json(&Out {
        catalogue: remote.state.clone(),
        cuda: listing
            .releases
            .iter()
            .map(|r| Rel {
                version: r.version.to_string(),
                date: dates.get(&r.version.to_string()).cloned(),
                sources: r.sources.iter().map(|k| k.name()).collect(),
                platforms: r.pypi_platforms.clone(),
                pypi_known: r.pypi_known,
                runs_here: machine
                    .is_known()
                    .then(|| machine.can_run(&r.version).is_ok()),
                why_not: machine.can_run(&r.version).err(),
            })
            .collect(),
        cudnn: listing
            .cudnn
            .into_iter()
            .map(|(m, v)| (format!("cuda{m}"), v))
            .collect(),
        cudnn_builds: listing
            .builtin_cudnn
            .iter()
            .map(|(v, k, c)| Cudnn {
                version: v.to_string(),
                source: k.name(),
                cuda: c.clone(),
            })
            .collect(),
        libraries,
        library_builds: listing
            .library_builds
            .iter()
            .map(|(l, v, k, c)| LibraryBuild {
                library: l.component(),
                version: v.to_string(),
                source: k.name(),
                cuda: c.clone(),
            })
            .collect(),
    })
}

fn print_text(env: &Env, listing: &Listing, machine: &Machine) -> Result<()> {
    let place = match machine.whose {
        Whose::ThisMachine => "here".to_string(),
        Whose::Target => format!("on {}", machine.name()),
    };
    let mut text = String::new();
    for r in &listing.releases {
        let names: Vec<&str> = r.sources.iter().map(|k| k.name()).collect();
        let line = format!(
            "{:<10} {:<20} {:<42}",
            r.version.to_string(),
            names.join(" "),
            r.pypi_platforms.join(" ")
        );
        match machine.can_run(&r.version) {
            // Marked, not hidden: a build machine may install for another.
            Err(why) => text.push_str(&format!("{line} won't run {place}: {why}\n")),
            Ok(()) => text.push_str(&format!("{}\n", line.trim_end())),
        }
    }
    for (v, k, c) in &listing.builtin_cudnn {
        text.push_str(&format!(
            "cudnn {:<12} {:<7} {}\n",
            v.to_string(),
            k.name(),
            c.join(" ")
        ));
    }
    for (l, v, k, c) in &listing.library_builds {
        text.push_str(&format!(
            "{} {:<12} {:<7} {}\n",
            l.component(),
            v.to_string(),
            k.name(),
            c.join(" ")
        ));
    }
    let or_none = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(" ")
        }
    };
    for (m, v) in &listing.cudnn {
        text.push_str(&format!("cudnn for CUDA {m} (pypi): {}\n", or_none(v)));
    }
    for (lib, m, v) in &listing.libraries {
        text.push_str(&format!(
            "{} for CUDA {m} (pypi): {}\n",
            lib.component(),
            or_none(v)
        ));
    }
    env.out(text.as_bytes())
}
