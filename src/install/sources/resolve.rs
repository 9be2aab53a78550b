//! Choosing, per component, which source serves it, and building the plan.
//!
//! `--source auto` (the default) walks an order of sources for each component
//! and takes the first that has it for the chosen CUDA release; `--source X`
//! is the same walk over an order of X alone. The order is configurable
//! (`[sources]` in `$CUDAENV_ROOT/config.toml`, see `config`), globally and
//! per component:
//!
//! ```toml
//! [sources]
//! order = ["pypi", "nvidia", "legacy"]      # the default
//! [sources.component]
//! cudnn = ["nvidia", "legacy", "pypi"]
//! ```
//!
//! Every source answers the same questions through one trait, `Source`:
//! which CUDA releases it has, what it serves of a component, which cuDNN
//! and which libraries beside the toolkit. The resolver holds them as trait
//! objects, finds each by its `SourceKind`, and knows none of them by kind.
//! A source may claim components instead of answering with artifacts at
//! once (a legacy runfile serves many components with one file): the
//! resolver collects what each source claimed and asks it for the
//! artifacts once every component is placed, so a runfile is fetched and
//! parsed once.
//!
//! The CUDA release is the newest one matching the spec that any allowed
//! source has.

use crate::error::{Error, InstallError, Result};
use std::collections::{BTreeMap, BTreeSet};

use super::{Artifact, Plan, Platform, Profile, SourceKind};
pub use crate::spec::source::{SourceChoice, SourceOrder};
use crate::spec::{Library, StackSpec, Version, VersionName};

/// The components without which a profile's stack does not work: the
/// runtime always; for `devel`/`full` the compiler too (from CUDA 13 its
/// front end `crt` and `nvvm` are components of their own). Others (a
/// library, a tool) can be left out with a note.
pub fn required_for(profile: Profile, cuda: &Version) -> &'static [&'static str] {
    match (profile, cuda.major() >= 13) {
        (Profile::Runtime, _) => &["cudart"],
        (_, false) => &["cudart", "nvcc"],
        (_, true) => &["cudart", "nvcc", "crt", "nvvm"],
    }
}

/// What a source does with one component of a release.
pub enum Served {
    /// Serves it with these artifacts (one or more: Debian's cuBLAS is
    /// `libcublas` + `libcublasLt`).
    Artifacts(Vec<Artifact>),
    /// Serves it, with an artifact shared by every component it claims:
    /// `Source::claimed_artifacts` gives it once all are placed.
    Claimed,
    /// Does not have it.
    No,
}

/// One place stacks come from: PyPI's wheels, NVIDIA's redist manifests,
/// the legacy runfiles and cuDNN archives, Debian's packages.
pub trait Source {
    fn kind(&self) -> SourceKind;
    /// CUDA releases it can install (full versions).
    fn cuda_releases(&self) -> Result<Vec<Version>>;
    /// The newest release matching `spec` it can install.
    fn find_cuda(&self, spec: &Version) -> Result<Option<Version>> {
        Ok(self
            .cuda_releases()?
            .into_iter()
            .filter(|v| v.matches(spec))
            .max())
    }
    /// The releases `ls-remote` lists for it.
    fn listed_releases(&self) -> Vec<Version> {
        self.cuda_releases().unwrap_or_default()
    }
    /// The components a profile of `release` has, where this source
    /// describes the release itself (a manifest, a runfile's payload).
    fn profile_components(&self, _release: &Version, _profile: Profile) -> Option<Vec<String>> {
        None
    }
    /// The components it already planned for `release`, if it planned it
    /// (PyPI, whose index is read before resolution).
    fn planned(&self, _release: &Version) -> Option<Vec<String>> {
        None
    }
    /// What it does with component `name` of `release`.
    fn serve(&self, release: &Version, name: &str, profile: Profile) -> Result<Served>;
    /// The artifacts for the components of `release` it claimed
    /// (`Served::Claimed`), asked once when every component is placed.
    fn claimed_artifacts(
        &self,
        _release: &Version,
        _profile: Profile,
        _claimed: &[String],
    ) -> Result<Vec<Artifact>> {
        Ok(Vec::new())
    }
    /// The newest cuDNN matching `spec` for `cuda`.
    fn cudnn(&self, spec: &Version, cuda: &Version) -> Result<Option<(Version, Artifact)>>;
    /// Every cuDNN build it lists without the network: version and a
    /// compatibility label (`label_covers` reads it), one pair per label.
    fn cudnn_builds(&self) -> Vec<(Version, String)> {
        Vec::new()
    }
    /// Whether it carries `lib` at all (a library beside the toolkit).
    fn carries(&self, _lib: Library) -> bool {
        false
    }
    /// Whether its answer for `lib` is still to be asked (asynchronously,
    /// between the two halves of the library walk).
    fn awaits(&self, _lib: Library) -> bool {
        false
    }
    /// The newest build of `lib` matching `want` (any, without one) for
    /// `cuda`'s major. `Ok(None)`: it has none. A `NotAvailable` error: it
    /// has none and says what it has instead; the walk goes on and, when no
    /// later source has the library, that error stands.
    fn library(
        &self,
        _lib: Library,
        _want: Option<&Version>,
        _cuda: &Version,
    ) -> Result<Option<(Version, Artifact)>> {
        Ok(None)
    }
    /// Its own explanation for having no release matching `spec`, where it
    /// has a better one than "not available" (the releases there are).
    fn no_release(&self, _spec: &Version) -> Option<Error> {
        None
    }
}

/// One release's components on their way into its plan.
struct Serving<'r> {
    cuda: &'r Version,
    profile: Profile,
    artifacts: Vec<Artifact>,
    /// Per source, the components it claimed (one artifact for all).
    claimed: BTreeMap<SourceKind, Vec<String>>,
    /// The components no source has.
    missing: Vec<String>,
}

/// A library whose walk stopped at a source that answers later: the walk
/// goes on from there (`Resolver::finish_libraries`) once it has answered.
pub struct Awaiting {
    pub lib: Library,
    pub want: Option<Version>,
    /// The rest of its walk, the awaited source first.
    walk: Vec<SourceKind>,
}

/// Everything resolution needs.
pub struct Resolver<'a> {
    /// Every source, in the order that describes a release's components:
    /// the first whose `profile_components` knows the release names them.
    pub sources: Vec<&'a dyn Source>,
    pub platform: Platform,
    pub order: SourceOrder,
    pub choice: SourceChoice,
}

impl Resolver<'_> {
    fn source(&self, kind: SourceKind) -> Option<&dyn Source> {
        self.sources.iter().copied().find(|s| s.kind() == kind)
    }

    /// The newest CUDA release matching `spec` that an allowed source has.
    pub fn find_cuda(&self, spec: &Version) -> Result<Option<Version>> {
        let mut best: Option<Version> = None;
        for kind in self.order.all(self.choice) {
            let found = match self.source(kind) {
                Some(s) => s.find_cuda(spec)?,
                None => None,
            };
            if let Some(v) = found
                && best.as_ref().is_none_or(|b| v > *b)
            {
                best = Some(v);
            }
        }
        Ok(best)
    }

    /// The chosen source's own explanation for having no release matching
    /// `spec`, under `--source X`.
    pub fn no_release(&self, spec: &Version) -> Option<Error> {
        self.source(self.choice.only()?)?.no_release(spec)
    }

    /// The components a profile wants for `release`: under `--source X`,
    /// what X planned for it if it planned it (PyPI's own plan); else from
    /// the first source that describes the release (its NVIDIA manifest,
    /// else its legacy runfile).
    fn wanted(&self, release: &Version, profile: Profile) -> Vec<String> {
        if let Some(planned) = self
            .choice
            .only()
            .and_then(|k| self.source(k))
            .and_then(|s| s.planned(release))
        {
            return planned
                .into_iter()
                .filter(|c| super::pypi::is_toolkit_component(c))
                .collect();
        }
        if let Some(names) = self
            .sources
            .iter()
            .find_map(|s| s.profile_components(release, profile))
        {
            return names;
        }
        // A release only PyPI has (newer than every manifest cudaenv holds):
        // the registry's profile, as PyPI's plan names it.
        let mut names = crate::registry::cuda_releases().profile_components(
            profile,
            &crate::registry::Release {
                version: release.clone(),
                date: None,
                components: Default::default(),
            },
        );
        for s in &self.sources {
            if let Some(p) = s.planned(release) {
                for c in p {
                    if super::pypi::is_toolkit_component(&c) && !names.contains(&c) {
                        names.push(c);
                    }
                }
            }
        }
        names
    }

    /// Resolves a stack spec into a plan.
    #[cfg(test)]
    pub fn plan(&self, spec: &StackSpec, profile: Profile) -> Result<Plan> {
        self.plan_with(spec, profile, &[], &[])
    }

    /// Like `plan`, with components added to (`with`) or removed from
    /// (`without`) the profile. `cudnn` in `without` drops the cuDNN.
    pub fn plan_with(
        &self,
        spec: &StackSpec,
        profile: Profile,
        with: &[String],
        without: &[String],
    ) -> Result<Plan> {
        let cuda = self.find_cuda(&spec.cuda)?.ok_or_else(|| {
            self.no_release(&spec.cuda).unwrap_or_else(|| {
                Error::Install(InstallError::NotAvailable {
                    what: format!("CUDA {} for {}", spec.cuda, self.platform.manifest_key()),
                    source_name: Some(self.choice.title().into()),
                    hint: Some(crate::msg!("hint-ls-remote")),
                })
            })
        })?;
        let mut wanted = self.wanted(&cuda, profile);
        for c in with {
            if super::pypi::is_toolkit_component(c) && !wanted.contains(c) {
                wanted.push(c.clone());
            }
        }
        wanted.retain(|c| !without.contains(c));
        let mut serving = Serving {
            cuda: &cuda,
            profile,
            artifacts: Vec::new(),
            claimed: BTreeMap::new(),
            missing: Vec::new(),
        };
        for name in &wanted {
            self.serve(&mut serving, name)?;
        }
        let Serving {
            mut artifacts,
            claimed,
            missing,
            ..
        } = serving;
        for (kind, names) in &claimed {
            if let Some(s) = self.source(*kind) {
                artifacts.extend(s.claimed_artifacts(&cuda, profile, names)?);
            }
        }
        self.check_missing(&cuda, profile, with, &missing, artifacts.is_empty())?;
        let mut notes = Vec::new();
        if !missing.is_empty() {
            notes.push(format!(
                "not available from the chosen sources, left out: {}",
                missing.join(", ")
            ));
        }
        let cudnn = match &spec.cudnn {
            None => None,
            Some(_) if without.iter().any(|c| c == "cudnn") => None,
            Some(want) => {
                let (v, a) = self.cudnn_for(want, &cuda)?;
                artifacts.push(a);
                Some(v)
            }
        };
        Ok(Plan {
            name: VersionName::for_stack(&cuda, cudnn.as_ref()),
            cuda,
            cudnn,
            libs: Default::default(),
            profile,
            artifacts,
            notes,
            info: Vec::new(),
        })
    }

    /// Serves component `name` from the first source in its order that has
    /// it, or counts it missing.
    fn serve(&self, s: &mut Serving<'_>, name: &str) -> Result<()> {
        for kind in self.order.for_component(name, self.choice) {
            let Some(source) = self.source(kind) else {
                continue;
            };
            match source.serve(s.cuda, name, s.profile)? {
                Served::Artifacts(a) if !a.is_empty() => {
                    s.artifacts.extend(a);
                    return Ok(());
                }
                Served::Claimed => {
                    s.claimed.entry(kind).or_default().push(name.to_string());
                    return Ok(());
                }
                Served::Artifacts(_) | Served::No => {}
            }
        }
        s.missing.push(name.to_string());
        Ok(())
    }

    /// Fails the plan for a component asked for by name (`with`) that no
    /// source has, and for what the profile cannot do without (or when
    /// nothing at all was found); the rest is left out with one line.
    fn check_missing(
        &self,
        cuda: &Version,
        profile: Profile,
        with: &[String],
        missing: &[String],
        nothing_found: bool,
    ) -> Result<()> {
        let explicit_missing: Vec<&String> = missing.iter().filter(|m| with.contains(m)).collect();
        if !explicit_missing.is_empty() {
            return Err(Error::Install(InstallError::NotAvailable {
                what: format!(
                    "{} for CUDA {cuda}",
                    explicit_missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                source_name: Some(self.choice.title().into()),
                hint: Some(crate::msg!("hint-ls-remote")),
            }));
        }
        // What the profile cannot do without fails the plan before anything
        // is downloaded; the rest is left out with one line.
        let required: Vec<&String> = missing
            .iter()
            .filter(|m| required_for(profile, cuda).contains(&m.as_str()))
            .collect();
        if !required.is_empty() || nothing_found {
            let names: Vec<&str> = if required.is_empty() {
                missing.iter().map(String::as_str).collect()
            } else {
                required.iter().map(|s| s.as_str()).collect()
            };
            return Err(Error::Install(InstallError::NotAvailable {
                what: format!(
                    "CUDA {cuda} ({} profile needs {})",
                    profile.name(),
                    names.join(", ")
                ),
                source_name: Some(self.choice.title().into()),
                hint: Some(crate::msg!(
                    "hint-ls-remote-without",
                    components = names.join(",")
                )),
            }));
        }
        Ok(())
    }

    /// The cuDNN matching `want` for `cuda`, from the first source in the
    /// cuDNN's order that has one.
    fn cudnn_for(&self, want: &Version, cuda: &Version) -> Result<(Version, Artifact)> {
        let mut found = None;
        for kind in self.order.for_component("cudnn", self.choice) {
            found = match self.source(kind) {
                Some(s) => s.cudnn(want, cuda)?,
                None => None,
            };
            if found.is_some() {
                break;
            }
        }
        found.ok_or_else(|| {
            Error::Install(InstallError::NotAvailable {
                what: format!(
                    "cuDNN {want} for CUDA {cuda} on {}",
                    self.platform.manifest_key()
                ),
                source_name: Some(self.choice.title().into()),
                hint: Some(crate::msg!("hint-ls-remote")),
            })
        })
    }

    /// The sources in `lib`'s order that carry it.
    fn carriers(&self, lib: Library) -> Vec<SourceKind> {
        self.order
            .for_component(lib.component(), self.choice)
            .into_iter()
            .filter(|k| self.source(*k).is_some_and(|s| s.carries(lib)))
            .collect()
    }

    /// The first half of the libraries' walk (NCCL, TensorRT, …): each
    /// comes from the first source in its order that carries it, whatever
    /// served the toolkit (their builds are per CUDA major). A library no
    /// allowed source carries is refused before anything is looked up. A
    /// walk that reaches a source whose answer is still to be asked
    /// (`Source::awaits`) stops there; those are returned, for
    /// `finish_libraries` once the source has answered.
    pub fn start_libraries(
        &self,
        plan: &mut Plan,
        wanted: &[(Library, Option<Version>)],
    ) -> Result<Vec<Awaiting>> {
        let refused: Vec<Library> = wanted
            .iter()
            .map(|(l, _)| *l)
            .filter(|l| self.carriers(*l).is_empty())
            .collect();
        if !refused.is_empty() {
            return Err(self.libraries_refused(&refused));
        }
        let mut awaiting = Vec::new();
        for (lib, want) in wanted {
            let walk = self.carriers(*lib);
            let before = walk
                .iter()
                .take_while(|k| !self.source(**k).is_some_and(|s| s.awaits(*lib)))
                .count();
            if self.walk_library(plan, *lib, want.as_ref(), &walk[..before])? {
                continue;
            }
            match walk.get(before) {
                Some(_) => awaiting.push(Awaiting {
                    lib: *lib,
                    want: want.clone(),
                    walk: walk[before..].to_vec(),
                }),
                None => return Err(self.lacks_library(*lib, want.as_ref(), &plan.cuda, &walk)),
            }
        }
        Ok(awaiting)
    }

    /// The second half of the libraries' walk: each awaiting library from
    /// the source it stopped at on.
    pub fn finish_libraries(&self, plan: &mut Plan, awaiting: Vec<Awaiting>) -> Result<()> {
        for a in awaiting {
            if !self.walk_library(plan, a.lib, a.want.as_ref(), &a.walk)? {
                return Err(self.lacks_library(a.lib, a.want.as_ref(), &plan.cuda, &a.walk));
            }
        }
        Ok(())
    }

    /// Serves `lib` from the first of `walk` that has it; whether one did.
    /// A source's `NotAvailable` (it says what it has instead) lets the
    /// walk go on, with a note where a later source serves the library,
    /// and stands where none does. Other errors (an index unreachable) end
    /// the plan: a network failure is not an absence.
    fn walk_library(
        &self,
        plan: &mut Plan,
        lib: Library,
        want: Option<&Version>,
        walk: &[SourceKind],
    ) -> Result<bool> {
        let mut lacking: Option<(SourceKind, Error)> = None;
        for kind in walk {
            let Some(s) = self.source(*kind) else {
                continue;
            };
            match s.library(lib, want, &plan.cuda) {
                Ok(Some((version, artifact))) => {
                    if let Some((lk, e)) = lacking {
                        plan.notes.push(format!(
                            "{}: {e}; {} {version} comes from {}",
                            lk.title(),
                            lib.title(),
                            kind.server()
                        ));
                    }
                    plan.libs.insert(lib, version);
                    plan.artifacts.push(artifact);
                    return Ok(true);
                }
                Ok(None) => {}
                Err(e @ Error::Install(InstallError::NotAvailable { .. })) => {
                    lacking.get_or_insert((*kind, e));
                }
                Err(e) => return Err(e),
            }
        }
        match lacking {
            Some((_, e)) => Err(e),
            None => Ok(false),
        }
    }

    /// The error for a library that no source of its walk has a build of
    /// for this CUDA major, named after the last it tried.
    fn lacks_library(
        &self,
        lib: Library,
        want: Option<&Version>,
        cuda: &Version,
        walk: &[SourceKind],
    ) -> Error {
        Error::Install(InstallError::NotAvailable {
            what: format!(
                "{}{} for CUDA {} on {}",
                lib.title(),
                want.map(|v| format!(" {v}")).unwrap_or_default(),
                cuda.major(),
                self.platform.manifest_key()
            ),
            source_name: walk.last().map(|k| k.title().into()),
            hint: Some(crate::msg!("hint-ls-remote")),
        })
    }

    /// The error for libraries none of the allowed sources carries.
    fn libraries_refused(&self, refused: &[Library]) -> Error {
        let names: Vec<&str> = refused.iter().map(|l| l.title()).collect();
        // A library only one source carries (PyPI: NCCL, TensorRT) needs
        // that one; the others need either.
        let only_one = refused
            .iter()
            .any(|l| self.sources.iter().filter(|s| s.carries(*l)).count() == 1);
        Error::Install(InstallError::NotAvailable {
            what: names.join(", "),
            source_name: Some(self.choice.restriction(only_one)),
            hint: Some(if only_one {
                crate::msg!("hint-libraries-need-pypi")
            } else {
                crate::msg!("hint-libraries-need-pypi-or-nvidia")
            }),
        })
    }

    /// Every CUDA release and which sources serve it, oldest first.
    pub fn remote_cuda(&self) -> Vec<(Version, Vec<SourceKind>)> {
        let mut map: BTreeMap<Version, Vec<SourceKind>> = BTreeMap::new();
        let allowed = self.order.all(self.choice);
        for s in self.sources.iter().filter(|s| allowed.contains(&s.kind())) {
            for v in s.listed_releases() {
                map.entry(v).or_default().push(s.kind());
            }
        }
        // Listed in the order `auto` would try them.
        let rank = |k: &SourceKind| {
            self.order
                .default
                .iter()
                .position(|d| d == k)
                .unwrap_or(usize::MAX)
        };
        map.into_iter()
            .map(|(v, mut kinds)| {
                kinds.sort_by_key(rank);
                (v, kinds)
            })
            .collect()
    }

    /// Every cuDNN build the sources list without the network: version,
    /// source, compatibility labels.
    pub fn remote_cudnn(&self) -> Vec<(Version, SourceKind, Vec<String>)> {
        let allowed = self.order.all(self.choice);
        let mut out: BTreeMap<(Version, &'static str), (SourceKind, BTreeSet<String>)> =
            BTreeMap::new();
        for s in self.sources.iter().filter(|s| allowed.contains(&s.kind())) {
            for (v, label) in s.cudnn_builds() {
                out.entry((v, s.kind().name()))
                    .or_insert((s.kind(), BTreeSet::new()))
                    .1
                    .insert(label);
            }
        }
        out.into_iter()
            .map(|((v, _), (k, set))| (v, k, set.into_iter().collect()))
            .collect()
    }
}

/// Does a compatibility label of `remote_cudnn` cover this CUDA release?
pub fn label_covers(label: &str, cuda: &Version) -> bool {
    let Some(l) = label.strip_prefix("cuda") else {
        return false;
    };
    let mm = cuda.truncate(2);
    let parse = |s: &str| Version::parse_parts(s, 2).ok();
    if let Some(major) = l.strip_suffix(".x") {
        return major.parse() == Ok(cuda.major());
    }
    match l.split_once('-') {
        Some((lo, hi)) => match (parse(lo), parse(hi)) {
            (Some(lo), Some(hi)) => lo <= mm && mm <= hi,
            _ => false,
        },
        None => match parse(l) {
            Some(v) if v.parts().len() == 1 => v.major() == cuda.major(),
            Some(v) => v == mm,
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::sources::Layout;
    use crate::install::sources::legacy::{LegacyRegistry, LegacySource};
    use crate::install::sources::nvidia::{self, Manifests, NvidiaSource};
    use crate::spec::Spec;

    fn stack(s: &str) -> StackSpec {
        match Spec::parse(s).unwrap() {
            Spec::Stack(s) => s,
            _ => unreachable!(),
        }
    }

    /// NVIDIA's and the legacy source, for one platform.
    struct Sources<'m> {
        nvidia: NvidiaSource<'m>,
        legacy: LegacySource,
    }

    fn sources(manifests: &Manifests, platform: Platform) -> Sources<'_> {
        Sources {
            nvidia: NvidiaSource {
                manifests,
                base: "http://mirror".into(),
                platform,
            },
            legacy: LegacySource {
                registry: LegacyRegistry::default(),
                base: "http://mirror".into(),
                platform,
                allow_unverified: false,
            },
        }
    }

    fn resolver<'a>(s: &'a Sources<'_>, choice: SourceChoice) -> Resolver<'a> {
        Resolver {
            sources: vec![&s.nvidia, &s.legacy],
            platform: s.nvidia.platform,
            order: SourceOrder::default(),
            choice,
        }
    }

    #[test]
    fn tensorflow_stack_on_windows_is_the_local_installer_and_the_cudnn_zip() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let s = sources(&manifests, Platform::WindowsX86_64);
        let r = resolver(&s, SourceChoice::Auto);
        let without = ["cufft".to_string(), "curand".to_string()];
        let plan = r
            .plan_with(&stack("11.2+cudnn8.1"), Profile::Runtime, &[], &without)
            .unwrap();
        assert_eq!(plan.name.as_str(), "11.2.2+cudnn8.1.0.77");
        let files: Vec<&str> = plan
            .artifacts
            .iter()
            .map(|a| a.file_name.as_str())
            .collect();
        assert_eq!(
            files,
            [
                "cuda_11.2.2_461.33_win10.exe",
                "cudnn-11.2-windows-x64-v8.1.0.77.zip"
            ]
        );
        let Layout::WindowsInstaller { members, .. } = &plan.artifacts[0].layout else {
            panic!("{:?}", plan.artifacts[0].layout)
        };
        // `--without` takes the component's directory out of the installer's.
        assert!(members.contains(&"cuda_cudart".to_string()));
        assert!(members.contains(&"libcublas".to_string()));
        assert!(!members.contains(&"libcufft".to_string()));
        assert!(!members.contains(&"libcurand".to_string()));
        assert!(
            plan.artifacts
                .iter()
                .all(|a| a.source == SourceKind::Legacy)
        );
    }

    #[test]
    fn tensorflow_stack_comes_from_the_legacy_source() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let s = sources(&manifests, Platform::LinuxX86_64);
        let plan = resolver(&s, SourceChoice::Auto)
            .plan(&stack("11.2+cudnn8.1"), Profile::Runtime)
            .unwrap();
        assert_eq!(plan.name.as_str(), "11.2.2+cudnn8.1.1.33");
        assert_eq!(plan.artifacts.len(), 2);
        assert!(
            plan.artifacts
                .iter()
                .all(|a| a.source == SourceKind::Legacy)
        );
        let Layout::Runfile { members, .. } = &plan.artifacts[0].layout else {
            panic!()
        };
        assert_eq!(members.len(), 8, "{members:?}");
    }

    #[test]
    fn redist_stack_and_forced_sources() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let s = sources(&manifests, Platform::LinuxX86_64);
        let plan = resolver(&s, SourceChoice::Auto)
            .plan(&stack("12.4.1+cudnn9.1"), Profile::Devel)
            .unwrap();
        assert_eq!(plan.name.as_str(), "12.4.1+cudnn9.1.1.17");
        assert!(
            plan.artifacts
                .iter()
                .all(|a| a.source == SourceKind::Nvidia)
        );
        assert!(plan.artifacts.iter().any(|a| a.component == "nvcc"));
        assert!(plan.artifacts.iter().any(|a| a.component == "cudnn"));
        // Forcing legacy for a redist-only release fails clearly.
        let err = resolver(&s, SourceChoice::Legacy)
            .plan(&stack("12.4"), Profile::Runtime)
            .unwrap_err();
        assert!(
            matches!(err, Error::Install(InstallError::NotAvailable { .. })),
            "{err}"
        );
        // Forcing nvidia for 11.2 fails; the legacy source alone serves it.
        assert!(
            resolver(&s, SourceChoice::Nvidia)
                .plan(&stack("11.2"), Profile::Runtime)
                .is_err()
        );
        assert!(
            resolver(&s, SourceChoice::Legacy)
                .plan(&stack("11.2"), Profile::Runtime)
                .is_ok()
        );
    }

    #[test]
    fn per_component_order_is_honoured() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let s = sources(&manifests, Platform::LinuxX86_64);
        let mut r = resolver(&s, SourceChoice::Auto);
        // 11.4.1 is runfile-only; 11.4.2+ is in both, but cuDNN 8.2 only in legacy.
        r.order
            .per_component
            .insert("cudnn".into(), vec![SourceKind::Legacy, SourceKind::Nvidia]);
        let plan = r.plan(&stack("11.4+cudnn8"), Profile::Runtime).unwrap();
        let cudnn = plan
            .artifacts
            .iter()
            .find(|a| a.component == "cudnn")
            .unwrap();
        assert_eq!(cudnn.source, SourceKind::Legacy);
        r.order
            .per_component
            .insert("cudnn".into(), vec![SourceKind::Nvidia, SourceKind::Legacy]);
        let plan = r.plan(&stack("11.4+cudnn8"), Profile::Runtime).unwrap();
        let cudnn = plan
            .artifacts
            .iter()
            .find(|a| a.component == "cudnn")
            .unwrap();
        assert_eq!(cudnn.source, SourceKind::Nvidia);
    }

    #[test]
    fn listing_names_the_sources() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let s = sources(&manifests, Platform::LinuxX86_64);
        let r = resolver(&s, SourceChoice::Auto);
        let list = r.remote_cuda();
        let find = |s: &str| {
            list.iter()
                .find(|(v, _)| v.to_string() == s)
                .map(|(_, k)| k.clone())
        };
        assert_eq!(find("11.2.2"), Some(vec![SourceKind::Legacy]));
        assert_eq!(find("12.4.1"), Some(vec![SourceKind::Nvidia]));
        assert_eq!(find("10.0.130"), Some(vec![SourceKind::Legacy]));
        let cudnn = r.remote_cudnn();
        assert!(
            cudnn
                .iter()
                .any(|(v, k, _)| v.to_string() == "8.1.1.33" && *k == SourceKind::Legacy)
        );
        assert!(
            cudnn
                .iter()
                .any(|(v, k, _)| v.to_string() == "9.1.0.70" && *k == SourceKind::Nvidia)
        );
    }
}
