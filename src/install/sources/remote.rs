//! The one front end to the sources: what `install`, `ls-remote` and `update`
//! call. It takes the settings the command resolved once (`config::Settings`:
//! index, mirrors, source order, how old a catalogue may be), checks the base
//! URLs of the sources the options allow, opens every source, and answers "which releases are
//! there" and "what exactly would installing this take" (a `Plan`).
//!
//! Sources plug in per component: the resolver (`resolve`) walks the
//! configured order for each component and takes the first source that has
//! it, every source behind the one trait `resolve::Source`; `--source X` is
//! only a restriction of that order. `Remote::with_resolver` builds NVIDIA's and
//! the legacy source, Debian's where the platform has it, and PyPI's answer
//! (`pypi::PypiAnswer`): PyPI's index is asynchronous, so its plan for the
//! release is read first (strictly under `--source pypi`, where its error
//! is the answer) and handed in, and so are its answers for the libraries
//! whose walk reached it, between the two halves of the libraries' walk. A
//! further source is one more `SourceKind`, one more `impl Source`, and one
//! more entry in `Remote::with_resolver`.
//!
//! The live catalogue (`catalogue`) decides which CUDA releases PyPI has:
//! a stored one younger than `catalogue-max-age` (a day) is used as is; an
//! older one is read again (only new releases cost a request); `--refresh`
//! always reads it; `--offline` uses the stored one whatever its age and
//! says how old it is. When the index cannot be read, the stored catalogue
//! (or, without one, the embedded registry) still answers, with a notice.
//! Notices are returned to the caller, which prints them: nothing below
//! `cli/` writes to the terminal.

use super::catalogue::{self, Catalogue};
use super::debian::DebianSource;
use super::legacy::{LegacyRegistry, LegacySource};
use super::nvidia::{self, Manifests, NvidiaSource};
use super::pypi::{Index, Known, PypiAnswer, PypiSource, Request};
use super::resolve::{Resolver, Source, SourceChoice};
use super::{Plan, Platform, SourceKind};
use crate::context::Context;
use crate::error::{Error, ExitCode, InstallError, Result};
use crate::install::fetch::{self, Cache};
use crate::install::settings::Settings;
use crate::registry;
use crate::spec::{Library, StackSpec, Version, VersionName};
use std::cell::RefCell;

/// When to read the catalogue from the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refresh {
    /// When the stored one is older than the configured age.
    #[default]
    WhenStale,
    /// Now (`--refresh`, `cudaenv update`).
    Always,
    /// Never (`--offline`): the stored one, whatever its age.
    Never,
}

/// How the catalogue in use was obtained.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum CatalogueState {
    /// Read from the index by this command.
    Fetched,
    /// The stored one, young enough.
    Cached { age_secs: u64 },
    /// The stored one, older than the configured age (offline, or the index
    /// could not be read).
    Stale { age_secs: u64 },
    /// None: the embedded registry alone says what PyPI has.
    Embedded,
    /// Not consulted (no source that uses it was allowed).
    Unused,
}

pub struct Options {
    pub choice: SourceChoice,
    pub refresh: Refresh,
    pub offline: bool,
    pub allow_unverified: bool,
}

/// Every source, opened once.
pub struct Remote {
    pub pypi: PypiSource,
    pub manifests: Manifests,
    pub legacy: LegacyRegistry,
    /// Debian's packages of NVIDIA's libraries, for this platform.
    pub debian: Option<DebianSource>,
    pub platform: Option<Platform>,
    /// The settings it was opened with.
    pub settings: Settings,
    pub cache: Cache,
    /// The client every source and download of the command shares, with
    /// its timeouts (`CUDAENV_HTTP_TIMEOUT`) and stall breaker.
    pub http: fetch::Http,
    pub state: CatalogueState,
    /// Said once to the user by the caller.
    pub notices: Vec<String>,
    /// The index, as shown (no credentials).
    pub index_shown: String,
    nvidia_base: String,
    opts: Options,
}

/// One release as `ls-remote` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RemoteRelease {
    pub version: Version,
    pub sources: Vec<SourceKind>,
    /// Manifest keys of the platforms PyPI has it for (from the catalogue).
    pub pypi_platforms: Vec<String>,
    /// Where PyPI's component list came from.
    pub pypi_known: Option<Known>,
}

impl Remote {
    /// Opens the sources, reading the catalogue when the options say so.
    pub async fn open(ctx: &Context, settings: Settings, opts: Options) -> Result<Remote> {
        let cache = Cache::new(ctx.cache_dir());
        let http = fetch::Http::from_ctx(ctx)?;
        let order = settings.source_order();
        let pypi_allowed = order.allows(SourceKind::Pypi, opts.choice);
        let index_url = if pypi_allowed {
            settings.pypi_base()?
        } else {
            settings.pypi_index.value.clone()
        };
        let index_shown = shown(&index_url);
        let index = Index::new(&index_url, http.clone()).with_cache(cache.dir(), opts.offline);
        let mut notices = Vec::new();
        let (cat, state) = if pypi_allowed {
            let max_age = settings.catalogue_max_age.value;
            let refresh = if opts.offline {
                Refresh::Never
            } else {
                opts.refresh
            };
            read_catalogue(&index, &index_shown, max_age, refresh, &mut notices).await?
        } else {
            (None, CatalogueState::Unused)
        };
        // A bad mirror is an error for every command that may use it, the
        // same for `install` and `ls-remote`.
        let nvidia_base = if order.allows(SourceKind::Nvidia, opts.choice)
            || order.allows(SourceKind::Legacy, opts.choice)
        {
            settings.nvidia_base()?
        } else {
            String::new()
        };
        let debian_mirror = if order.allows(SourceKind::Debian, opts.choice) {
            settings.debian_base()?
        } else {
            String::new()
        };
        let platform = Platform::current();
        // NVIDIA's index (TensorRT's wheels) is read only for a library it has.
        let nvidia_index = Index::new(
            &if pypi_allowed {
                settings.pypi_nvidia_base()?
            } else {
                settings.pypi_nvidia_index.value.clone()
            },
            http.clone(),
        )
        .with_cache(cache.dir(), opts.offline);
        Ok(Remote {
            pypi: PypiSource::new(index)
                .with_catalogue(cat)
                .with_nvidia_index(nvidia_index),
            manifests: Manifests::load(cache.dir()),
            legacy: LegacyRegistry::load(ctx.root())?,
            debian: platform.map(|platform| DebianSource {
                mirror: debian_mirror,
                platform,
            }),
            platform,
            settings,
            cache,
            http,
            state,
            notices,
            index_shown,
            nvidia_base,
            opts,
        })
    }

    /// Plans for another platform than this machine's (`cudaenv lock`).
    pub fn set_platform(&mut self, platform: Platform) {
        self.platform = Some(platform);
        self.pypi.set_platform(platform);
    }

    /// Runs `f` over a resolver holding every source: NVIDIA's, the legacy
    /// one, PyPI's answer as read so far, and Debian's where this platform
    /// has it.
    fn with_resolver<T>(
        &self,
        platform: Platform,
        pypi: &PypiAnswer<'_>,
        f: impl FnOnce(&Resolver<'_>) -> Result<T>,
    ) -> Result<T> {
        let nvidia = NvidiaSource {
            manifests: &self.manifests,
            base: self.nvidia_base.clone(),
            platform,
        };
        let legacy = LegacySource {
            registry: self.legacy.clone(),
            base: self.nvidia_base.clone(),
            platform,
            allow_unverified: self.opts.allow_unverified,
        };
        let mut sources: Vec<&dyn Source> = vec![&nvidia, &legacy, pypi];
        if let Some(d) = &self.debian {
            sources.push(d);
        }
        f(&Resolver {
            sources,
            platform,
            order: self.settings.source_order(),
            choice: self.opts.choice,
        })
    }

    /// The platform to plan for: this machine's. Where NVIDIA ships no CUDA
    /// for it, `--source pypi` still plans Linux x86_64's wheels, as
    /// `PypiSource` picks them; every other choice needs the platform.
    fn plan_platform(&self) -> Result<Platform> {
        match self.platform {
            None if self.opts.choice.only() == Some(SourceKind::Pypi) => Ok(Platform::host()),
            _ => self.platform(),
        }
    }

    fn platform(&self) -> Result<Platform> {
        self.platform.ok_or_else(|| {
            Error::Install(InstallError::NotAvailable {
                what: format!(
                    "CUDA for {}-{}",
                    std::env::consts::OS,
                    std::env::consts::ARCH
                ),
                source_name: None,
                hint: Some(crate::msg!("hint-nvidia-platforms")),
            })
        })
    }

    /// The exact CUDA release a spec means (no network).
    pub fn release_for(&self, stack: &StackSpec) -> Result<Version> {
        let pypi = PypiAnswer::new(&self.pypi);
        self.with_resolver(self.plan_platform()?, &pypi, |r| {
            r.find_cuda(&stack.cuda)?.ok_or_else(|| {
                r.no_release(&stack.cuda).unwrap_or_else(|| {
                    Error::Install(InstallError::NotAvailable {
                        what: format!("CUDA {}", stack.cuda),
                        source_name: None,
                        hint: Some(crate::msg!("hint-ls-remote")),
                    })
                })
            })
        })
    }

    /// Everything installing `req` takes, per component from the first
    /// source that has it.
    pub async fn plan(&self, req: &Request) -> Result<Plan> {
        let mut plan = self.plan_sources(req).await?;
        self.add_libraries(&mut plan, req).await?;
        // A name from an index or manifest becomes part of a path (the
        // download cache, a mirror, a lock): a plain file name or nothing.
        if let Some(a) = plan
            .artifacts
            .iter()
            .find(|a| !super::is_plain_file_name(&a.file_name))
        {
            return Err(Error::Install(InstallError::BadManifest {
                what: a.url.to_string(),
                reason: format!(
                    "its file name {:?} is not a plain file name (no paths, at most 200 characters)",
                    a.file_name
                ),
            }));
        }
        // A release newer than the driver tables: say which rule applies.
        if let Some(r) = crate::machine::compat::driver::requirement(
            &plan.cuda,
            crate::machine::compat::driver::DriverOs::Linux,
        ) && r.family_rule.is_some()
        {
            plan.notes.push(format!(
                "CUDA {} is newer than cudaenv's driver table; it needs an NVIDIA driver {}",
                plan.cuda,
                r.describe()
            ));
        }
        // A cuDNN newer than the cuDNN table: its CUDA support is its
        // family's rule. Said only when that rule disagrees with the source
        // (which offered the build for this CUDA): where they agree, there
        // is nothing to doubt.
        if let Some(cudnn) = &plan.cudnn
            && let Some(s) = crate::machine::compat::cudnn_support(cudnn)
            && let Some(rule) = s.rule_note()
            && !s.supports(&plan.cuda)
        {
            plan.notes.push(format!(
                "cuDNN {cudnn} is taken as built for {}, not CUDA {} ({rule}); the source offers it for this CUDA",
                s.describe_cuda(),
                plan.cuda
            ));
        }
        if req.spec.cudnn.is_none() && !req.without.iter().any(|c| c == "cudnn") {
            let major = plan.cuda.major();
            plan.info.push(format!(
                "{} installs no cuDNN; `cudaenv install {}+cudnn{}` installs it with one (`cudaenv ls-remote {}` lists the cuDNN builds)",
                plan.cuda,
                plan.cuda,
                if major >= 12 { "9" } else { "8" },
                plan.cuda.truncate(2)
            ));
        }
        Ok(plan)
    }

    /// The libraries beside the toolkit (NCCL, TensorRT, …), whatever served
    /// the toolkit: their builds are per CUDA major, so a CUDA 11.2 stack from
    /// the legacy runfiles takes NCCL's cu11 wheel. Each comes from the first
    /// source in its order that carries it (`Resolver::start_libraries`):
    /// PyPI carries all four, NVIDIA's redist server cuSPARSELt and cuTENSOR.
    ///
    /// PyPI is asked once, between the two halves of the walk, for every
    /// library whose walk reaches it. What it lacks (no project for the
    /// CUDA major, no matching build: `NotAvailable`) goes on to the sources
    /// after it, as a toolkit component does, with a note; when none of
    /// them has it either, PyPI's error stands, since it names the builds
    /// there are. PyPI's other errors (the index unreachable, say) end the
    /// plan: a network failure is not an absence.
    async fn add_libraries(&self, plan: &mut Plan, req: &Request) -> Result<()> {
        let wanted = req.libraries();
        if wanted.is_empty() {
            return Ok(());
        }
        let platform = self.plan_platform()?;
        let mut pypi = PypiAnswer::new(&self.pypi);
        let awaiting = self.with_resolver(platform, &pypi, |r| r.start_libraries(plan, &wanted))?;
        if !awaiting.is_empty() {
            let asked: Vec<(Library, Option<Version>)> =
                awaiting.iter().map(|a| (a.lib, a.want.clone())).collect();
            let answers = self.pypi.libraries(&plan.cuda, &asked).await;
            pypi.libraries = Some(RefCell::new(answers));
            self.with_resolver(platform, &pypi, |r| r.finish_libraries(plan, awaiting))?;
        }
        plan.name = VersionName::for_stack_with(&plan.cuda, plan.cudnn.as_ref(), &plan.libs);
        Ok(())
    }

    async fn plan_sources(&self, req: &Request) -> Result<Plan> {
        let platform = self.plan_platform()?;
        let release = self.release_for(&req.spec)?;
        // The toolkit and cuDNN; the other libraries are `add_libraries`'.
        let exact = StackSpec::new(release.clone(), req.spec.cudnn.clone());
        let mut offer = PypiAnswer::new(&self.pypi);
        let mut notes = Vec::new();
        // PyPI's plan needs its index (network or cache): only asked for when
        // PyPI may serve something of this release.
        if self.allows(SourceKind::Pypi) && offer.releases.contains(&release) {
            let pypi_req = Request {
                spec: exact.clone(),
                ..req.clone()
            };
            if self.opts.choice.only() == Some(SourceKind::Pypi) {
                // PyPI alone serves the stack: its plan is asked strictly,
                // and where it fails, its error (which names the builds
                // there are) is the answer.
                offer.plan = Some(self.pypi.plan(&pypi_req).await?);
            } else {
                // Per component: what PyPI lacks comes from the next
                // source, the rest stays on PyPI.
                match self.pypi.offer(&pypi_req).await {
                    Ok(p) => offer.plan = Some(p),
                    Err(e) => notes.push(format!("PyPI: {e}; using the other sources")),
                }
            }
        }
        let mut plan = self.with_resolver(platform, &offer, |r| {
            r.plan_with(&exact, req.profile, &req.with, &req.without)
        })?;
        // PyPI's notes matter only for what PyPI serves: its "no nvcc binary"
        // limitation is moot when nvcc came from NVIDIA.
        if let Some(p) = &offer.plan
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
        notes.append(&mut plan.notes);
        plan.notes = notes;
        Ok(plan)
    }

    /// Every CUDA release some allowed source has, oldest first.
    pub fn releases(&self) -> Result<Vec<RemoteRelease>> {
        let Some(platform) = self.platform else {
            return Ok(Vec::new());
        };
        let offer = PypiAnswer::new(&self.pypi);
        let pypi: std::collections::BTreeMap<Version, Known> = self
            .pypi
            .releases()
            .into_iter()
            .map(|(r, k)| (r.version, k))
            .collect();
        let cat = self.pypi.catalogue();
        Ok(self
            .with_resolver(platform, &offer, |r| Ok(r.remote_cuda()))?
            .into_iter()
            .map(|(version, sources)| {
                let on_pypi = sources.contains(&SourceKind::Pypi);
                let pypi_platforms = cat
                    .filter(|_| on_pypi)
                    .and_then(|c| c.get(&version))
                    .map(|r| r.platforms().into_iter().map(String::from).collect())
                    .unwrap_or_default();
                RemoteRelease {
                    pypi_known: on_pypi.then(|| pypi.get(&version).copied()).flatten(),
                    version,
                    sources,
                    pypi_platforms,
                }
            })
            .collect())
    }

    /// The cuDNN builds of the NVIDIA and legacy sources.
    pub fn builtin_cudnn(&self) -> Vec<(Version, SourceKind, Vec<String>)> {
        let Some(platform) = self.platform else {
            return Vec::new();
        };
        let offer = PypiAnswer::new(&self.pypi);
        self.with_resolver(platform, &offer, |r| Ok(r.remote_cudnn()))
            .unwrap_or_default()
    }

    /// The builds of `lib` on NVIDIA's redist server (cuSPARSELt, cuTENSOR),
    /// with the CUDA majors each is for, oldest first; none when the NVIDIA
    /// source is not allowed or does not carry the library.
    pub fn nvidia_library_builds(&self, lib: Library) -> Vec<(Version, Vec<String>)> {
        let (Some(platform), Some(product)) = (self.platform, nvidia::Product::of_library(lib))
        else {
            return Vec::new();
        };
        if !self.allows(SourceKind::Nvidia) {
            return Vec::new();
        }
        let mut out: std::collections::BTreeMap<Version, Vec<String>> = Default::default();
        for major in 10..=13 {
            for (v, _, _) in self.manifests.library_builds(product, major, platform) {
                out.entry(v).or_default().push(format!("cuda{major}"));
            }
        }
        out.into_iter().collect()
    }

    /// May any component come from `kind`?
    pub fn allows(&self, kind: SourceKind) -> bool {
        self.settings.source_order().allows(kind, self.opts.choice)
    }
}

/// What `cudaenv update` did to the catalogue.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CatalogueUpdate {
    pub index: String,
    pub releases: usize,
    pub newest: Option<String>,
    /// Releases this read added to the stored list.
    pub new: Vec<String>,
    pub skipped: Vec<catalogue::Skipped>,
}

/// Reads the catalogue from the index now and stores it (`cudaenv update`).
/// Unlike installs, a failure is returned: reading it is what was asked.
pub async fn update_catalogue(
    ctx: &Context,
    settings: &Settings,
    http: &fetch::Http,
) -> Result<CatalogueUpdate> {
    let cache = Cache::new(ctx.cache_dir());
    let index_url = settings.pypi_base()?;
    let index_shown = shown(&index_url);
    let index = Index::new(&index_url, http.clone()).with_cache(cache.dir(), false);
    let dir = index
        .cache_dir()
        .expect("an index with a cache")
        .to_path_buf();
    let path = catalogue::path(&dir);
    let before: Vec<String> = Catalogue::load(&path)
        .map(|c| c.releases.into_iter().map(|r| r.version).collect())
        .unwrap_or_default();
    let c = catalogue::fetch(&index, &dir, registry::pypi(), &index_shown).await?;
    c.save(&path)?;
    Ok(CatalogueUpdate {
        index: index_shown,
        releases: c.releases.len(),
        newest: c.releases.last().map(|r| r.version.clone()),
        new: c
            .releases
            .iter()
            .filter(|r| !before.contains(&r.version))
            .map(|r| r.version.clone())
            .collect(),
        skipped: c.skipped,
    })
}

/// The catalogue to use, and how it was obtained.
async fn read_catalogue(
    index: &Index,
    shown_index: &str,
    max_age: u64,
    refresh: Refresh,
    notices: &mut Vec<String>,
) -> Result<(Option<Catalogue>, CatalogueState)> {
    let Some(dir) = index.cache_dir().map(|d| d.to_path_buf()) else {
        return Ok((None, CatalogueState::Embedded));
    };
    let path = catalogue::path(&dir);
    let stored = Catalogue::load(&path);
    let now = catalogue::now();
    let age = stored.as_ref().map(|c| c.age_secs(now));
    let stale_note = |age: u64| {
        format!(
            "the release list from {shown_index} is {} old; `cudaenv update` refreshes it",
            human_age(age)
        )
    };
    let young = |a: u64| {
        if a < max_age {
            CatalogueState::Cached { age_secs: a }
        } else {
            CatalogueState::Stale { age_secs: a }
        }
    };
    let (stored, age) = match (refresh, stored, age) {
        (Refresh::WhenStale, Some(c), Some(a)) if a < max_age => {
            return Ok((Some(c), young(a)));
        }
        (Refresh::Never, Some(c), Some(a)) => {
            if a >= max_age {
                notices.push(stale_note(a));
            }
            return Ok((Some(c), young(a)));
        }
        (Refresh::Never, _, _) => {
            notices.push(format!(
                "no release list from {shown_index} is stored; using cudaenv's embedded list (run `cudaenv update` while online)"
            ));
            return Ok((None, CatalogueState::Embedded));
        }
        (_, stored, age) => (stored, age),
    };
    match catalogue::fetch(index, &dir, registry::pypi(), shown_index).await {
        Ok(c) => {
            for s in &c.skipped {
                if !s.reason.starts_with("yanked") {
                    notices.push(format!("cuda-toolkit {} left out: {}", s.version, s.reason));
                }
            }
            // Best effort: a read-only cache still lets this command use it.
            if let Err(e) = c.save(&path) {
                notices.push(format!("cannot store the release list: {e}"));
            }
            Ok((Some(c), CatalogueState::Fetched))
        }
        // An index that is down or lacks the metapackage: the stored list,
        // else the embedded one, and say so.
        Err(e) if matches!(e.exit_code(), ExitCode::Network | ExitCode::NotAvailable) => {
            match (stored, age) {
                (Some(c), Some(a)) => {
                    notices.push(format!("cannot read the release list: {e}"));
                    if a >= max_age {
                        notices.push(stale_note(a));
                    }
                    Ok((Some(c), young(a)))
                }
                _ => {
                    notices.push(format!(
                        "cannot read the release list: {e}; using cudaenv's embedded list"
                    ));
                    Ok((None, CatalogueState::Embedded))
                }
            }
        }
        Err(e) => Err(e),
    }
}

/// `3 h`, `2 days`.
pub fn human_age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", s / 60),
        s if s < 2 * 86400 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86400),
    }
}

/// An index URL without its credentials (`https://user:pass@host/…` →
/// `https://host/…`), for messages and stored files.
pub fn shown(url: &str) -> String {
    let u = crate::spec::safe_url::DisplaySafeUrl::new(url);
    match u.has_credentials() {
        true => u.without_credentials().trim_end_matches('/').to_string(),
        false => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_not_shown() {
        assert_eq!(
            shown("https://me:secret@mirror.example/simple"),
            "https://mirror.example/simple"
        );
        assert_eq!(shown("https://pypi.org/simple"), "https://pypi.org/simple");
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(human_age(30), "30 s");
        assert_eq!(human_age(600), "10 min");
        assert_eq!(human_age(5 * 3600), "5 h");
        assert_eq!(human_age(3 * 86400), "3 days");
    }
}
