//! `cudaenv ls-remote [SPEC]`: what the sources can install, and which source
//! serves each version.
//!
//! CUDA releases come from the embedded registries and the manifests
//! `cudaenv update` fetched (no network): PyPI's, NVIDIA's redist manifests,
//! the legacy runfiles. cuDNN builds of the NVIDIA and legacy sources are
//! listed the same way; PyPI's cuDNN versions need its index, so they are
//! listed only with a SPEC (for the matching CUDA majors).

use super::Env;
use crate::config::Config;
use crate::error::{Error, ExitCode, Result};
use crate::fetch::{self, Cache};
use crate::registry;
use crate::sources::legacy::LegacyRegistry;
use crate::sources::nvidia::Catalog;
use crate::sources::pypi::{Index, PypiSource};
use crate::sources::resolve::{PlanOfferer, Resolver, SourceChoice};
use crate::sources::{Platform, SourceKind};
use crate::spec::{Spec, Version};
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only releases matching this spec (e.g. `12`, `12.4`).
    pub spec: Option<String>,
    /// Only what this source serves (`auto`: every source in the configured order).
    #[arg(long, value_enum, value_name = "S", default_value_t = SourceChoice::Auto)]
    pub source: SourceChoice,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let stack = match &args.spec {
        None => None,
        Some(s) => match Spec::parse(s)? {
            Spec::Stack(st) => Some(st),
            _ => {
                return Err(Error::InvalidSpec {
                    input: s.escape_debug().to_string(),
                    reason: "expected a CUDA version such as `12` or `12.4`".into(),
                });
            }
        },
    };
    let config = Config::load(&env.ctx)?;
    // What this machine's driver and GPU can run (nothing is marked without a driver).
    let machine = super::compat::this_machine(&env.ctx);
    let catalog = Catalog::load(Cache::new(env.ctx.cache_dir()).dir());
    let legacy = LegacyRegistry::load(env.ctx.root())?;
    let platform = Platform::current();
    let pypi_offer = PlanOfferer {
        kind: SourceKind::Pypi,
        releases: super::install::pypi_releases()
            .iter()
            .map(|r| r.version.clone())
            .collect(),
        plan: None,
    };
    let debian = platform.map(|platform| crate::sources::debian::DebianSource {
        mirror: config.debian_mirror(&env.ctx).unwrap_or_default(),
        platform,
    });
    let resolver = platform.map(|platform| Resolver {
        catalog: &catalog,
        legacy: legacy.clone(),
        base: config.nvidia_base(&env.ctx).unwrap_or_default(),
        platform,
        order: config.source_order(),
        choice: args.source,
        allow_unverified: false,
        others: match &debian {
            Some(d) => vec![&pypi_offer, d],
            None => vec![&pypi_offer],
        },
    });
    let dates: std::collections::BTreeMap<String, String> = registry::cuda_releases()
        .releases
        .iter()
        .filter_map(|r| Some((r.version.to_string(), r.date.clone()?)))
        .collect();
    let releases: Vec<(Version, Vec<SourceKind>)> = resolver
        .as_ref()
        .map(|r| r.remote_cuda())
        .unwrap_or_default()
        .into_iter()
        .filter(|(v, _)| stack.as_ref().is_none_or(|s| v.matches(&s.cuda)))
        .collect();
    let builtin_cudnn: Vec<(Version, SourceKind, Vec<String>)> = resolver
        .as_ref()
        .map(|r| r.remote_cudnn())
        .unwrap_or_default()
        .into_iter()
        .filter(|(v, _, _)| {
            stack
                .as_ref()
                .and_then(|s| s.cudnn.as_ref())
                .is_none_or(|c| v.matches(c))
        })
        // With a SPEC, only builds for the matching CUDA releases.
        .filter(|(_, _, labels)| {
            stack.is_none()
                || releases.iter().any(|(r, _)| {
                    labels
                        .iter()
                        .any(|l| crate::sources::resolve::label_covers(l, r))
                })
        })
        .collect();
    let pypi_allowed = resolver
        .as_ref()
        .is_some_and(|r| r.allows(SourceKind::Pypi));
    let mut cudnn: Vec<(u32, Vec<String>)> = Vec::new();
    if stack.is_some() && pypi_allowed {
        let mut majors: Vec<u32> = releases
            .iter()
            .filter(|(_, k)| k.contains(&SourceKind::Pypi))
            .map(|(v, _)| v.major())
            .collect();
        majors.dedup();
        let (index_url, _) = config.pypi_index(&env.ctx);
        let source = PypiSource::new(
            Index::new(&index_url, fetch::client()?)
                .with_cache(Cache::new(env.ctx.cache_dir()).dir(), false),
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Other(format!("cannot start the async runtime: {e}")))?;
        for m in majors {
            match rt.block_on(source.cudnn_versions(m)) {
                Ok(v) => cudnn.push((m, v)),
                // Without the index (air-gapped, offline laptop) the releases and the
                // NVIDIA/legacy cuDNN builds above still come from embedded data: list
                // those and say what is missing rather than failing the whole listing.
                // An explicit `--source pypi` asked for the index, so that still fails.
                Err(e)
                    if e.exit_code() == ExitCode::Network && args.source != SourceChoice::Pypi =>
                {
                    env.printer
                        .warn(format!("cannot list PyPI's cuDNN wheels for CUDA {m}: {e}"));
                    env.printer.hint(
                        "the rest of this list comes from cudaenv's embedded data; check the connection or CUDAENV_PYPI_INDEX",
                    );
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    if args.json {
        #[derive(serde::Serialize)]
        struct Rel {
            version: String,
            date: Option<String>,
            sources: Vec<&'static str>,
            /// Whether this machine's driver and GPU run it (`null`: no driver to ask).
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
            cuda: Vec<Rel>,
            /// PyPI's cuDNN versions per CUDA major (with a SPEC only).
            cudnn: std::collections::BTreeMap<String, Vec<String>>,
            /// cuDNN builds of the NVIDIA redist and legacy sources.
            cudnn_builds: Vec<Cudnn>,
        }
        ui::out_json(&Out {
            cuda: releases
                .iter()
                .map(|(v, k)| Rel {
                    version: v.to_string(),
                    date: dates.get(&v.to_string()).cloned(),
                    sources: k.iter().map(|k| k.name()).collect(),
                    runs_here: machine.is_known().then(|| machine.can_run(v).is_ok()),
                    why_not: machine.can_run(v).err(),
                })
                .collect(),
            cudnn: cudnn
                .into_iter()
                .map(|(m, v)| (format!("cuda{m}"), v))
                .collect(),
            cudnn_builds: builtin_cudnn
                .iter()
                .map(|(v, k, c)| Cudnn {
                    version: v.to_string(),
                    source: k.name(),
                    cuda: c.clone(),
                })
                .collect(),
        })?;
        return Ok(ExitCode::Success);
    }
    let mut text = String::new();
    for (v, k) in &releases {
        let names: Vec<&str> = k.iter().map(|k| k.name()).collect();
        let line = format!("{:<10} {:<20}", v.to_string(), names.join(" "));
        match machine.can_run(v) {
            // Marked, not hidden: a build machine may install for another.
            Err(why) => text.push_str(&format!("{line} won't run here: {why}\n")),
            Ok(()) => text.push_str(&format!("{}\n", line.trim_end())),
        }
    }
    for (v, k, c) in &builtin_cudnn {
        text.push_str(&format!(
            "cudnn {:<12} {:<7} {}\n",
            v.to_string(),
            k.name(),
            c.join(" ")
        ));
    }
    for (m, v) in &cudnn {
        text.push_str(&format!("cudnn for CUDA {m} (pypi): {}\n", v.join(" ")));
    }
    ui::out(text.as_bytes())?;
    if releases.is_empty() {
        env.printer.hint(
            "PyPI has CUDA 11.7-13.x, NVIDIA's redist manifests 11.4.2 and newer, the legacy runfiles 10.1-11.4.1; `cudaenv update` fetches newer manifests",
        );
    }
    Ok(ExitCode::Success)
}
