//! Choosing, per component, which source serves it, and building the plan.
//!
//! `--source auto` (the default) walks an order of sources for each component
//! and takes the first that has it for the chosen CUDA release; `--source X`
//! uses X alone. The order is configurable (`[sources]` in
//! `$CUDAENV_ROOT/config.toml`, see `config`), globally and per component:
//!
//! ```toml
//! [sources]
//! order = ["pypi", "nvidia", "legacy"]      # the default
//! [sources.component]
//! cudnn = ["nvidia", "legacy", "pypi"]
//! ```
//!
//! The CUDA release is the newest one matching the spec that any allowed
//! source has. Components that resolve to the same runfile share one artifact
//! (its `members` are merged), so a runfile is fetched and parsed once.
//!
//! The PyPI source plugs in through `Offerer`; this module knows only the
//! NVIDIA redist and legacy sources directly.

use crate::error::{Error, InstallError, Result};
use std::collections::{BTreeMap, BTreeSet};

use super::legacy::{LegacyRegistry, LegacySource, Runfile};
use super::nvidia::{self, Manifests, NvidiaSource};
use super::{Artifact, Layout, Plan, Platform, Profile, SourceKind};
pub use crate::spec::source::{SourceChoice, SourceOrder};
use crate::spec::{StackSpec, Version, VersionName};

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

/// A source that is not built into this module (PyPI) offers what it has.
pub trait Offerer {
    fn kind(&self) -> SourceKind;
    /// CUDA releases it can install (full versions).
    fn cuda_releases(&self) -> Result<Vec<Version>>;
    /// The artifact for one component of a release, if it has it.
    fn component(
        &self,
        release: &Version,
        name: &str,
        profile: Profile,
    ) -> Result<Option<Artifact>>;
    /// Every artifact of one component (a component may be several packages,
    /// as Debian's cuBLAS is `libcublas` + `libcublasLt`).
    fn artifacts(&self, release: &Version, name: &str, profile: Profile) -> Result<Vec<Artifact>> {
        Ok(self
            .component(release, name, profile)?
            .into_iter()
            .collect())
    }
    /// The newest cuDNN matching `spec` for `cuda`.
    fn cudnn(&self, spec: &Version, cuda: &Version) -> Result<Option<(Version, Artifact)>>;
    /// The components it already planned for `release`, if it planned it
    /// (what `full` means for a release no manifest describes).
    fn planned(&self, _release: &Version) -> Option<Vec<String>> {
        None
    }
}

/// A source whose answer for one release is already known as a plan (PyPI's
/// plans are built asynchronously from its index before resolution).
pub struct PlanOfferer {
    pub kind: SourceKind,
    /// Every release the source serves (no network needed to know them).
    pub releases: Vec<Version>,
    /// Its plan for the release being resolved, if it has one.
    pub plan: Option<Plan>,
}

impl Offerer for PlanOfferer {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn planned(&self, release: &Version) -> Option<Vec<String>> {
        let p = self.plan.as_ref().filter(|p| p.cuda == *release)?;
        Some(p.artifacts.iter().map(|a| a.component.clone()).collect())
    }

    fn cuda_releases(&self) -> Result<Vec<Version>> {
        Ok(self.releases.clone())
    }

    fn component(&self, release: &Version, name: &str, _: Profile) -> Result<Option<Artifact>> {
        Ok(self
            .plan
            .as_ref()
            .filter(|p| p.cuda == *release)
            .and_then(|p| p.artifacts.iter().find(|a| a.component == name).cloned()))
    }

    fn cudnn(&self, spec: &Version, cuda: &Version) -> Result<Option<(Version, Artifact)>> {
        Ok(self.plan.as_ref().and_then(|p| {
            let v = p
                .cudnn
                .as_ref()
                .filter(|v| v.matches(spec) && p.cuda == *cuda)?;
            let a = p.artifacts.iter().find(|a| a.component == "cudnn")?;
            Some((v.clone(), a.clone()))
        }))
    }
}

/// One release's components on their way into its plan: where each can
/// come from, and what was found so far.
struct Serving<'r> {
    cuda: &'r Version,
    profile: Profile,
    /// The release's NVIDIA manifest, if there is one.
    nv_release: Option<&'r nvidia::Release>,
    /// The release's legacy runfile, if there is one.
    runfile: Option<Runfile>,
    artifacts: Vec<Artifact>,
    /// The components the runfile serves (one artifact for all of them).
    legacy_names: Vec<String>,
    /// The components no source has.
    missing: Vec<String>,
}

/// Everything resolution needs.
pub struct Resolver<'a> {
    pub manifests: &'a Manifests,
    pub legacy: LegacyRegistry,
    pub base: String,
    pub platform: Platform,
    pub order: SourceOrder,
    pub choice: SourceChoice,
    pub allow_unverified: bool,
    pub others: Vec<&'a dyn Offerer>,
}

impl Resolver<'_> {
    fn nvidia(&self) -> NvidiaSource<'_> {
        NvidiaSource {
            manifests: self.manifests,
            base: self.base.clone(),
            platform: self.platform,
        }
    }

    fn legacy(&self) -> LegacySource {
        LegacySource {
            registry: self.legacy.clone(),
            base: self.base.clone(),
            platform: self.platform,
            allow_unverified: self.allow_unverified,
        }
    }

    /// May any component come from `kind` under this choice and order?
    pub fn allows(&self, kind: SourceKind) -> bool {
        self.order.all(self.choice).contains(&kind)
    }

    fn other(&self, kind: SourceKind) -> Option<&dyn Offerer> {
        self.others.iter().copied().find(|o| o.kind() == kind)
    }

    /// The newest CUDA release matching `spec` that an allowed source has.
    pub fn find_cuda(&self, spec: &Version) -> Result<Option<Version>> {
        let mut best: Option<Version> = None;
        for kind in self.order.all(self.choice) {
            let found = match kind {
                SourceKind::Nvidia => self
                    .manifests
                    .find_cuda(spec, self.platform)
                    .map(|(v, _)| v),
                SourceKind::Legacy => self.legacy().find_cuda(spec).map(|r| r.cuda.clone()),
                SourceKind::Pypi | SourceKind::Debian => match self.other(kind) {
                    Some(o) => o
                        .cuda_releases()?
                        .into_iter()
                        .filter(|v| v.matches(spec))
                        .max(),
                    None => None,
                },
            };
            if let Some(v) = found
                && best.as_ref().is_none_or(|b| v > *b)
            {
                best = Some(v);
            }
        }
        Ok(best)
    }

    /// The components a profile wants for `release`: from its NVIDIA manifest
    /// when there is one, else the legacy runfile's list.
    fn wanted(&self, release: &Version, profile: Profile) -> Vec<String> {
        if let Some((_, r)) = self
            .manifests
            .cuda_releases(self.platform)
            .into_iter()
            .find(|(v, _)| v == release)
        {
            return nvidia::profile_components(r, profile, self.platform);
        }
        if self
            .legacy()
            .find_cuda(release)
            .is_some_and(|r| r.cuda == *release)
        {
            return LegacySource::members(release, profile).2;
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
        for o in &self.others {
            if let Some(p) = o.planned(release) {
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
            Error::Install(InstallError::NotAvailable {
                what: format!("CUDA {} for {}", spec.cuda, self.platform.manifest_key()),
                source_name: Some(self.choice_name().into()),
                hint: Some(crate::msg!("hint-ls-remote")),
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
            nv_release: self
                .manifests
                .cuda_releases(self.platform)
                .into_iter()
                .find(|(v, _)| *v == cuda)
                .map(|(_, r)| r),
            runfile: self.legacy().find_cuda(&cuda).filter(|r| r.cuda == cuda),
            artifacts: Vec::new(),
            legacy_names: Vec::new(),
            missing: Vec::new(),
        };
        for name in &wanted {
            self.serve(&mut serving, name)?;
        }
        let Serving {
            runfile,
            mut artifacts,
            legacy_names,
            missing,
            ..
        } = serving;
        if let Some(r) = runfile
            && !legacy_names.is_empty()
        {
            artifacts.push(self.runfile_artifact(&r, &cuda, profile, &legacy_names)?);
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
    fn serve(&self, s: &mut Serving<'_>, name: &String) -> Result<()> {
        for kind in self.order.for_component(name, self.choice) {
            if self.serve_from(s, kind, name)? {
                return Ok(());
            }
        }
        s.missing.push(name.clone());
        Ok(())
    }

    /// Whether `kind` serves component `name` (then its artifacts are in
    /// `s`, or for the legacy source its name, for the one runfile).
    fn serve_from(&self, s: &mut Serving<'_>, kind: SourceKind, name: &String) -> Result<bool> {
        match kind {
            SourceKind::Nvidia => {
                if let Some(r) = s.nv_release {
                    let mut a = self
                        .nvidia()
                        .cuda_artifacts(r, std::slice::from_ref(name))?;
                    if let Some(a) = a.remove(name) {
                        s.artifacts.push(a);
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            SourceKind::Legacy => {
                if s.runfile.is_some()
                    && LegacySource::members(s.cuda, Profile::Full)
                        .2
                        .contains(name)
                {
                    s.legacy_names.push(name.clone());
                    return Ok(true);
                }
                Ok(false)
            }
            SourceKind::Pypi | SourceKind::Debian => {
                let Some(o) = self.other(kind) else {
                    return Ok(false);
                };
                let a = o.artifacts(s.cuda, name, s.profile)?;
                let served = !a.is_empty();
                s.artifacts.extend(a);
                Ok(served)
            }
        }
    }

    /// The runfile's artifact, unpacking only the members that serve
    /// `legacy_names`.
    fn runfile_artifact(
        &self,
        r: &Runfile,
        cuda: &Version,
        profile: Profile,
        legacy_names: &[String],
    ) -> Result<Artifact> {
        let mut a = self.legacy().cuda_artifact(r, profile)?;
        let (_, _, all_names) = LegacySource::members(cuda, Profile::Full);
        let keep: BTreeSet<String> = legacy_names.iter().filter_map(|n| legacy_dir(n)).collect();
        match &mut a.layout {
            // 10.x runfiles have one directory for everything: keep it whole.
            Layout::Runfile { members, optional } if all_names != ["toolkit"] => {
                members.retain(|m| keep.contains(m));
                optional.retain(|m| keep.contains(m));
            }
            Layout::WindowsInstaller { members, optional } => {
                let keep: BTreeSet<String> =
                    keep.iter().map(|m| super::legacy::windows_dir(m)).collect();
                members.retain(|m| keep.contains(m));
                optional.retain(|m| keep.contains(m));
            }
            _ => {}
        }
        Ok(a)
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
                source_name: Some(self.choice_name().into()),
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
                source_name: Some(self.choice_name().into()),
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
            found = match kind {
                SourceKind::Nvidia => self.nvidia().cudnn_artifact(want, cuda)?,
                SourceKind::Legacy => self.legacy().cudnn_artifact(want, cuda)?,
                SourceKind::Pypi | SourceKind::Debian => match self.other(kind) {
                    Some(o) => o.cudnn(want, cuda)?,
                    None => None,
                },
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
                source_name: Some(self.choice_name().into()),
                hint: Some(crate::msg!("hint-ls-remote")),
            })
        })
    }

    fn choice_name(&self) -> &'static str {
        match self.choice {
            SourceChoice::Auto => "any configured source",
            SourceChoice::Pypi => "PyPI",
            SourceChoice::Nvidia => "NVIDIA's redist manifests",
            SourceChoice::Legacy => "the legacy source (runfiles, old cuDNN archives)",
            SourceChoice::Debian => "the Debian archive",
        }
    }

    /// Every CUDA release and which built-in sources serve it, oldest first.
    pub fn remote_cuda(&self) -> Vec<(Version, Vec<SourceKind>)> {
        let mut map: BTreeMap<Version, Vec<SourceKind>> = BTreeMap::new();
        let allowed = self.order.all(self.choice);
        if allowed.contains(&SourceKind::Nvidia) {
            for (v, _) in self.manifests.cuda_releases(self.platform) {
                map.entry(v).or_default().push(SourceKind::Nvidia);
            }
        }
        if allowed.contains(&SourceKind::Legacy) {
            for r in self.legacy.cuda_releases(self.platform) {
                if r.cuda >= Version::from_parts(&[10]) {
                    map.entry(r.cuda.clone())
                        .or_default()
                        .push(SourceKind::Legacy);
                }
            }
        }
        for kind in [SourceKind::Pypi, SourceKind::Debian] {
            if let Some(o) = self.other(kind)
                && allowed.contains(&kind)
                && let Ok(vs) = o.cuda_releases()
            {
                for v in vs {
                    map.entry(v).or_default().push(kind);
                }
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

    /// Every cuDNN build in the built-in sources: version, source, CUDA majors.
    pub fn remote_cudnn(&self) -> Vec<(Version, SourceKind, Vec<String>)> {
        let allowed = self.order.all(self.choice);
        let mut out: BTreeMap<(Version, &'static str), (SourceKind, BTreeSet<String>)> =
            BTreeMap::new();
        if allowed.contains(&SourceKind::Nvidia) {
            for major in 10..=13 {
                for (v, _, _) in self.manifests.cudnn_builds(major, self.platform) {
                    out.entry((v, "nvidia"))
                        .or_insert((SourceKind::Nvidia, BTreeSet::new()))
                        .1
                        .insert(format!("cuda{major}"));
                }
            }
        }
        if allowed.contains(&SourceKind::Legacy) {
            for a in self.legacy.cudnn_releases(self.platform) {
                out.entry((a.version.clone(), "legacy"))
                    .or_insert((SourceKind::Legacy, BTreeSet::new()))
                    .1
                    .insert(legacy_range(&a.cuda_min, &a.cuda_max));
            }
        }
        out.into_iter()
            .map(|((v, _), (k, set))| (v, k, set.into_iter().collect()))
            .collect()
    }
}

/// `cuda11.0-11.2`, `cuda10.2`, `cuda11.x` (a maximum minor of 99 means "any").
fn legacy_range(min: &Version, max: &Version) -> String {
    if min == max {
        format!("cuda{min}")
    } else if max.minor() == Some(99) && min.minor() == Some(0) && min.major() == max.major() {
        format!("cuda{}.x", min.major())
    } else {
        format!("cuda{min}-{max}")
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

fn legacy_dir(name: &str) -> Option<String> {
    let (req, opt, names) = LegacySource::members(&Version::from_parts(&[11]), Profile::Full);
    let dirs: Vec<String> = req.into_iter().chain(opt).collect();
    names
        .iter()
        .position(|n| n == name)
        .map(|i| dirs[i].clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    fn stack(s: &str) -> StackSpec {
        match Spec::parse(s).unwrap() {
            Spec::Stack(s) => s,
            _ => unreachable!(),
        }
    }

    fn resolver(manifests: &Manifests, choice: SourceChoice) -> Resolver<'_> {
        Resolver {
            manifests,
            legacy: LegacyRegistry::default(),
            base: "http://mirror".into(),
            platform: Platform::LinuxX86_64,
            order: SourceOrder::default(),
            choice,
            allow_unverified: false,
            others: vec![],
        }
    }

    #[test]
    fn tensorflow_stack_on_windows_is_the_local_installer_and_the_cudnn_zip() {
        let manifests = Manifests {
            releases: nvidia::embedded().to_vec(),
            skipped: vec![],
        };
        let mut r = resolver(&manifests, SourceChoice::Auto);
        r.platform = Platform::WindowsX86_64;
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
        let plan = resolver(&manifests, SourceChoice::Auto)
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
        let plan = resolver(&manifests, SourceChoice::Auto)
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
        let err = resolver(&manifests, SourceChoice::Legacy)
            .plan(&stack("12.4"), Profile::Runtime)
            .unwrap_err();
        assert!(
            matches!(err, Error::Install(InstallError::NotAvailable { .. })),
            "{err}"
        );
        // Forcing nvidia for 11.2 fails; the legacy source alone serves it.
        assert!(
            resolver(&manifests, SourceChoice::Nvidia)
                .plan(&stack("11.2"), Profile::Runtime)
                .is_err()
        );
        assert!(
            resolver(&manifests, SourceChoice::Legacy)
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
        let mut r = resolver(&manifests, SourceChoice::Auto);
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
        let r = resolver(&manifests, SourceChoice::Auto);
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
