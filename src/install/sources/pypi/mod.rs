//! The PyPI source: NVIDIA's CUDA wheels.
//!
//! A CUDA release (`12.4.1`) becomes component versions through the registry
//! (`registry/cuda-releases.toml`, from NVIDIA's manifests), then PyPI projects
//! through `registry/pypi.toml` (`nvidia-*-cu11` for 11.7/11.8, `-cu12` for
//! 12.x, suffix-less for 13.x, `nvidia-cudnn-cuXX` for cuDNN), then wheels
//! through the index's Simple API (`index`): PEP 691 JSON, or PEP 503 HTML from mirrors
//! that only speak that. The index is `CUDAENV_PYPI_INDEX`, else pip's own
//! setting (`PIP_INDEX_URL`, then pip's configuration files), else PyPI, so a
//! mirror configured for pip just works.
//!
//! PyPI's wheel versions usually equal the manifest's, but not always: some
//! releases are missing and some were re-uploaded with another last part or a
//! `.postN`. A component therefore takes the exact version, else the newest
//! wheel with the same first three parts, else (for components versioned like
//! the toolkit itself, e.g. cudart 11.7.60) the newest wheel of the same CUDA
//! minor release, with a note saying so.

use crate::error::{Error, InstallError, Result};
pub use crate::spec::source::normalize;
use std::cell::RefCell;
use std::cmp::Ordering;

mod index;

pub use index::{Index, IndexFile};

use super::catalogue::Catalogue;
use super::resolve::{Served, Source};
use super::{ArchiveFormat, Artifact, Layout, Plan, Platform, Profile, SourceKind};
use crate::registry::{self, Release};
use crate::spec::{Library, StackSpec, Version, VersionName};

/// NVIDIA's package index: the libraries whose wheels pypi.org does not
/// carry (TensorRT: pypi.org has only stubs that download from here).
pub const NVIDIA_INDEX: &str = "https://pypi.nvidia.com";

/// A PyPI release version: numeric parts and an optional `.postN`.
/// Pre-releases and dev releases are not represented (they are never picked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyVersion {
    pub nums: Vec<u32>,
    pub post: Option<u32>,
    pub text: String,
}

impl PyVersion {
    pub fn parse(s: &str) -> Option<PyVersion> {
        let (base, post) = match s.split_once(".post") {
            Some((b, p)) => (b, Some(p.parse().ok()?)),
            None => (s, None),
        };
        let nums: Option<Vec<u32>> = base.split('.').map(|p| p.parse().ok()).collect();
        let nums = nums?;
        if nums.is_empty() || nums.len() > 6 {
            return None;
        }
        Some(PyVersion {
            nums,
            post,
            text: s.to_string(),
        })
    }

    fn starts_with(&self, prefix: &[u32]) -> bool {
        self.nums.len() >= prefix.len() && self.nums[..prefix.len()] == *prefix
    }

    /// The numeric part as a cudaenv `Version` (at most four parts).
    pub fn version(&self) -> Version {
        Version::from_parts(&self.nums[..self.nums.len().min(4)])
    }
}

impl Ord for PyVersion {
    fn cmp(&self, o: &Self) -> Ordering {
        (&self.nums, self.post).cmp(&(&o.nums, o.post))
    }
}
impl PartialOrd for PyVersion {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A wheel for this machine, parsed from its file name.
#[derive(Debug, Clone)]
pub struct Wheel {
    pub version: PyVersion,
    pub file: IndexFile,
}

/// Parses `name-version(-build)?-py-abi-platform.whl` and keeps it when a
/// platform tag fits `platform` (manylinux for its architecture, or
/// `win_amd64`).
fn wheel_for(file: &IndexFile, platform: Platform) -> Option<Wheel> {
    let stem = file.filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return None;
    }
    let ok = parts[parts.len() - 1]
        .split('.')
        .any(|t| platform.wheel_tag_fits(t));
    if !ok {
        return None;
    }
    Some(Wheel {
        version: PyVersion::parse(parts[1])?,
        file: file.clone(),
    })
}

/// What to install.
#[derive(Debug, Clone)]
pub struct Request {
    pub spec: StackSpec,
    pub profile: Profile,
    /// Component names, checked where they entered (clap, a lock's reader).
    pub with: Vec<String>,
    pub without: Vec<String>,
}

impl Request {
    /// The libraries beside the toolkit it asks for, with the spec's version
    /// prefix (`None`: `--with nccl`, the newest): the spec's and `--with`'s,
    /// less `--without`'s.
    pub fn libraries(&self) -> Vec<(Library, Option<Version>)> {
        Library::ALL
            .into_iter()
            .filter(|l| !self.without.iter().any(|c| c == l.component()))
            .filter_map(|l| match self.spec.libs.get(l) {
                Some(v) => Some((l, Some(v.clone()))),
                None => self
                    .with
                    .iter()
                    .any(|c| c == l.component())
                    .then_some((l, None)),
            })
            .collect()
    }
}

/// Is this component one of the toolkit's (not cuDNN, not a library beside
/// it), the kind a CUDA release names a version of?
pub fn is_toolkit_component(name: &str) -> bool {
    name != "cudnn" && Library::from_component(name).is_none()
}

/// What a component without a wheel does to a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    Fail,
    Skip,
}

/// How a component's wheel version was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exact,
    /// Same first three parts (a re-upload or `.postN`).
    SamePatch,
    /// Same CUDA minor release, another build: worth a note.
    SameMinor,
}

/// Picks the wheel for a component version the manifest names.
pub fn pick_component<'a>(
    wheels: &'a [Wheel],
    wanted: &str,
    cuda: &Version,
) -> Option<(&'a Wheel, Match)> {
    let want = PyVersion::parse(wanted)?;
    let live = || wheels.iter().filter(|w| !w.file.yanked);
    if let Some(w) = live()
        .filter(|w| w.version.nums == want.nums)
        .min_by_key(|w| w.version.post)
    {
        return Some((w, Match::Exact));
    }
    let n3 = &want.nums[..want.nums.len().min(3)];
    if let Some(w) = live()
        .filter(|w| w.version.starts_with(n3))
        .max_by(|a, b| a.version.cmp(&b.version))
    {
        return Some((w, Match::SamePatch));
    }
    // Toolkit-versioned components (cudart 11.7.60 in CUDA 11.7.0) may take
    // another build of the same CUDA minor; library-versioned ones may not.
    let minor = [cuda.major(), cuda.minor().unwrap_or(0)];
    if want.starts_with(&minor)
        && let Some(w) = live()
            .filter(|w| w.version.starts_with(&minor))
            .max_by(|a, b| a.version.cmp(&b.version))
    {
        return Some((w, Match::SameMinor));
    }
    None
}

/// Picks the newest wheel matching a version prefix (cuDNN, NCCL, …); a
/// full four-part prefix prefers the exact upload over its `.postN`.
pub fn pick_prefix<'a>(wheels: &'a [Wheel], spec: &Version) -> Option<&'a Wheel> {
    let live = || {
        wheels
            .iter()
            .filter(|w| !w.file.yanked && w.version.starts_with(spec.parts()))
    };
    if spec.parts().len() >= 4
        && let Some(w) = live().find(|w| w.version.post.is_none() && w.version.nums == spec.parts())
    {
        return Some(w);
    }
    live().max_by(|a, b| a.version.cmp(&b.version))
}

/// The PyPI source.
pub struct PypiSource {
    index: Index,
    /// Whose wheels are taken (the machine's, or `--platform`'s).
    wheels_for: Platform,
    /// NVIDIA's package index, for the libraries only it has (TensorRT).
    nvidia_index: Option<Index>,
    /// The live catalogue (`cuda-toolkit`'s releases), when one was read.
    catalogue: Option<Catalogue>,
    platform: Option<Platform>,
}

/// Where a release's component versions came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Known {
    /// The embedded registry (NVIDIA's manifests, reviewed).
    Registry,
    /// PyPI's `cuda-toolkit` metapackage (the live catalogue).
    Catalogue,
    /// Both.
    Both,
}

impl PypiSource {
    pub fn new(index: Index) -> PypiSource {
        PypiSource {
            index,
            wheels_for: Platform::host(),
            nvidia_index: None,
            catalogue: None,
            platform: super::Platform::current(),
        }
    }

    /// Adds what the live catalogue knows (releases newer than the registry,
    /// components the registry lacks).
    pub fn with_catalogue(mut self, catalogue: Option<Catalogue>) -> PypiSource {
        self.catalogue = catalogue;
        self
    }

    /// Where the libraries whose registry entry names NVIDIA's index are read.
    pub fn with_nvidia_index(mut self, index: Index) -> PypiSource {
        self.nvidia_index = Some(index);
        self
    }

    pub fn catalogue(&self) -> Option<&Catalogue> {
        self.catalogue.as_ref()
    }

    /// Resolves for another Linux machine than this one (`cudaenv lock
    /// --platform`): its wheels' architecture and its catalogue markers.
    pub fn set_platform(&mut self, platform: Platform) {
        self.platform = Some(platform);
        self.wheels_for = platform;
    }

    /// Every CUDA release PyPI serves for this machine, oldest first: the
    /// registry's (PyPI-served majors) merged with the catalogue's. For a
    /// release both know, the registry's component versions win (they are
    /// NVIDIA's manifests, reviewed) and the catalogue adds what it lacks.
    pub fn releases(&self) -> Vec<(Release, Known)> {
        let pypi = registry::pypi();
        let mut out: std::collections::BTreeMap<Version, (Release, Known)> =
            registry::cuda_releases()
                .releases
                .iter()
                .filter(|r| pypi.serves(&r.version))
                .map(|r| (r.version.clone(), (r.clone(), Known::Registry)))
                .collect();
        if let (Some(cat), Some(platform)) = (&self.catalogue, self.platform) {
            for cr in &cat.releases {
                let Some(v) = cr.cuda() else { continue };
                let comps: std::collections::BTreeMap<String, String> = cr
                    .components_for(platform)
                    .map(|(c, cc)| (c.clone(), cc.version.clone()))
                    .collect();
                if !comps.contains_key("cudart") {
                    continue;
                }
                match out.get_mut(&v) {
                    Some((r, known)) => {
                        *known = Known::Both;
                        for (c, ver) in comps {
                            r.components.entry(c).or_insert(ver);
                        }
                    }
                    None => {
                        out.insert(
                            v.clone(),
                            (
                                Release {
                                    version: v,
                                    date: None,
                                    components: comps,
                                },
                                Known::Catalogue,
                            ),
                        );
                    }
                }
            }
        }
        out.into_values().collect()
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    async fn wheels(&self, project: &str) -> Result<Vec<Wheel>> {
        self.wheels_in(&self.index, project).await
    }

    /// The index that serves a library's wheels: NVIDIA's for those the
    /// registry puts there, else the configured one.
    fn index_for(&self, lib: Library) -> &Index {
        match (registry::pypi().library_index(lib), &self.nvidia_index) {
            (Some(_), Some(nv)) => nv,
            _ => &self.index,
        }
    }

    /// The builds of a library PyPI has for a CUDA major, oldest first.
    pub async fn library_versions(&self, lib: Library, major: u32) -> Result<Vec<String>> {
        let Some(project) = registry::pypi().library_project(lib, major) else {
            return Ok(Vec::new());
        };
        let wheels = self.wheels_in(self.index_for(lib), project).await?;
        Ok(release_versions(wheels))
    }

    /// The wheels of the libraries beside the toolkit a request names, for
    /// a CUDA release: per library the newest build matching its prefix
    /// (any build for `None`), or the error saying what PyPI has instead
    /// (no project for this CUDA major, no matching build). The answer is
    /// per library, in `wanted`'s order, so that the caller may take what
    /// PyPI lacks from the next source.
    pub async fn libraries(
        &self,
        cuda: &Version,
        wanted: &[(Library, Option<Version>)],
    ) -> Vec<(Library, Result<(Version, Artifact)>)> {
        let pages = futures_util::future::join_all(
            wanted
                .iter()
                .map(|(lib, want)| self.library(*lib, want.as_ref(), cuda.major())),
        )
        .await;
        wanted.iter().map(|(lib, _)| *lib).zip(pages).collect()
    }

    /// One library's wheel for a CUDA major (`libraries`).
    async fn library(
        &self,
        lib: Library,
        want: Option<&Version>,
        major: u32,
    ) -> Result<(Version, Artifact)> {
        let pypi = registry::pypi();
        let project = pypi.library_project(lib, major).ok_or_else(|| {
            let majors: Vec<String> = pypi
                .library_majors(lib)
                .iter()
                .map(|m| format!("CUDA {m}"))
                .collect();
            Error::Install(InstallError::NotAvailable {
                what: format!("{} for CUDA {major}", lib.title()),
                source_name: Some("PyPI".into()),
                hint: Some(crate::msg!(
                    "hint-library-majors",
                    library = lib.title(),
                    majors = majors.join(", "),
                    component = lib.component()
                )),
            })
        })?;
        let index = self.index_for(lib);
        let wheels = self.wheels_in(index, project).await?;
        let any = Version::from_parts(&[]);
        let w = pick_prefix(&wheels, want.unwrap_or(&any)).ok_or_else(|| {
            let mut have: Vec<&PyVersion> = wheels
                .iter()
                .filter(|w| !w.file.yanked)
                .map(|w| &w.version)
                .collect();
            have.sort();
            have.dedup_by(|a, b| a.nums == b.nums);
            Error::Install(InstallError::NotAvailable {
                what: format!(
                    "{}{} for CUDA {major} on {}",
                    lib.title(),
                    want.map(|v| format!(" {v}")).unwrap_or_default(),
                    self.wheels_for.name()
                ),
                source_name: Some(format!("{project} on {}", index.base())),
                hint: Some(if have.is_empty() {
                    crate::msg!("hint-no-wheel-for", platform = self.wheels_for.name())
                } else {
                    crate::msg!(
                        "hint-available",
                        versions = have
                            .iter()
                            .map(|v| v.text.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
            })
        })?;
        Ok((w.version.version(), artifact(lib.component(), w)))
    }

    async fn wheels_in(&self, index: &Index, project: &str) -> Result<Vec<Wheel>> {
        let files = index.files(project).await?.ok_or_else(|| {
            Error::Install(InstallError::NotAvailable {
                what: format!("the project `{project}`"),
                source_name: Some(index.base().to_string()),
                hint: Some(if std::ptr::eq(index, &self.index) {
                    crate::msg!("hint-check-package-index")
                } else {
                    crate::msg!("hint-check-nvidia-index")
                }),
            })
        })?;
        Ok(files
            .iter()
            .filter_map(|f| wheel_for(f, self.wheels_for))
            .collect())
    }

    /// The CUDA release a spec means on PyPI.
    pub fn release(&self, spec: &StackSpec) -> Result<Release> {
        let all = self.releases();
        let served: Vec<String> = all.iter().map(|(r, _)| r.version.to_string()).collect();
        all.into_iter()
            .rev()
            .map(|(r, _)| r)
            .find(|r| r.version.matches(&spec.cuda))
            .ok_or_else(|| {
                Error::Install(InstallError::NotAvailable {
                    what: format!("CUDA {}", spec.cuda),
                    source_name: Some("PyPI".into()),
                    hint: Some(crate::msg!(
                        "hint-pypi-releases",
                        releases = served.join(", ")
                    )),
                })
            })
    }

    /// Resolves a request to exact wheels; a component without a wheel is
    /// an error (`--source pypi`: PyPI alone must serve the stack).
    pub async fn plan(&self, req: &Request) -> Result<Plan> {
        self.plan_with(req, Missing::Fail).await
    }

    /// What PyPI can serve of a request, per component: a component (or the
    /// cuDNN) without a wheel is left out of the plan rather than failing
    /// it, so `--source auto` takes only that component from elsewhere.
    /// Network trouble still fails.
    pub async fn offer(&self, req: &Request) -> Result<Plan> {
        self.plan_with(req, Missing::Skip).await
    }

    async fn plan_with(&self, req: &Request, missing: Missing) -> Result<Plan> {
        let release = &self.release(&req.spec)?;
        let major = release.version.major();
        let mut notes = Vec::new();
        let wanted = wanted_components(req, release, missing, &mut notes)?;
        let cudnn_project = match &req.spec.cudnn {
            Some(_) if req.without.iter().any(|c| c == "cudnn") => None,
            Some(_) => Some(registry::pypi().cudnn_package(major).ok_or_else(|| {
                Error::Install(InstallError::NotAvailable {
                    what: format!("cuDNN for CUDA {major}"),
                    source_name: Some("PyPI".into()),
                    hint: None,
                })
            })?),
            None => None,
        };

        // All index pages at once.
        let mut pages = futures_util::future::join_all(
            wanted
                .iter()
                .map(|w| self.wheels(&w.project))
                .chain(cudnn_project.map(|p| self.wheels(p))),
        )
        .await;
        let cudnn_page = cudnn_project.map(|_| pages.pop().expect("cudnn page"));
        let mut artifacts = Vec::new();
        for (want, page) in wanted.iter().zip(pages) {
            if let Some(a) =
                self.component_artifact(want, page, &release.version, missing, &mut notes)?
            {
                artifacts.push(a);
            }
        }
        let mut cudnn_version = None;
        if let (Some(spec), Some(project), Some(page)) =
            (&req.spec.cudnn, cudnn_project, cudnn_page)
        {
            let wheels = match page {
                Err(e)
                    if missing == Missing::Skip
                        && e.exit_code() == crate::error::ExitCode::NotAvailable =>
                {
                    Vec::new()
                }
                other => other?,
            };
            if let Some(w) = cudnn_wheel(&wheels, spec, project, major, missing)? {
                cudnn_version = Some(w.version.version());
                artifacts.push(artifact("cudnn", w));
            }
        }
        Ok(Plan {
            name: VersionName::for_stack(&release.version, cudnn_version.as_ref()),
            cuda: release.version.clone(),
            cudnn: cudnn_version,
            libs: Default::default(),
            profile: req.profile,
            artifacts,
            notes,
            info: Vec::new(),
        })
    }

    /// A toolkit component's artifact from its project's page: the wheel
    /// its version picks (`pick_component`). `None` when PyPI cannot serve
    /// it and such components are skipped.
    fn component_artifact(
        &self,
        want: &Wanted,
        page: Result<Vec<Wheel>>,
        cuda: &Version,
        missing: Missing,
        notes: &mut Vec<String>,
    ) -> Result<Option<Artifact>> {
        let skip = missing == Missing::Skip;
        let Wanted {
            component: c,
            version,
            project,
        } = want;
        let wheels = match page {
            Err(e) if skip && e.exit_code() == crate::error::ExitCode::NotAvailable => {
                return Ok(None);
            }
            other => other?,
        };
        let picked = pick_component(&wheels, version, cuda);
        if picked.is_none() && skip {
            return Ok(None);
        }
        let (w, how) = picked.ok_or_else(|| {
            Error::Install(InstallError::NotAvailable {
                what: format!(
                    "{project} {version} (CUDA {}) for {}",
                    cuda,
                    self.wheels_for.name()
                ),
                source_name: Some(self.index.base().to_string()),
                hint: Some(crate::msg!("hint-pypi-lacks-build", component = c)),
            })
        })?;
        if how == Match::SameMinor {
            notes.push(format!(
                "PyPI has no {project} {version}; using {}, the newest build for CUDA {}.{}",
                w.version.text,
                cuda.major(),
                cuda.minor().unwrap_or(0)
            ));
        }
        Ok(Some(artifact(c, w)))
    }

    /// cuDNN versions PyPI has for a CUDA major, oldest first.
    pub async fn cudnn_versions(&self, major: u32) -> Result<Vec<String>> {
        let Some(project) = registry::pypi().cudnn_package(major) else {
            return Ok(Vec::new());
        };
        let wheels = self.wheels(project).await?;
        Ok(release_versions(wheels))
    }
}

/// PyPI as the resolver asks it. Its index is asynchronous, so what it has
/// is read before resolution and handed in: its plan for the release being
/// resolved, and its answers for the libraries whose walk reached it.
pub struct PypiAnswer<'a> {
    pub source: &'a PypiSource,
    /// Every release it serves (no network needed to know them).
    pub releases: Vec<Version>,
    /// Its plan for the release being resolved, if it has one.
    pub plan: Option<Plan>,
    /// Its answer per library, once asked (`PypiSource::libraries`); each
    /// is taken by the one walk that reaches it.
    pub libraries: Option<RefCell<Vec<(Library, LibraryAnswer)>>>,
}

/// PyPI's answer for one library: its build, or why it has none.
pub type LibraryAnswer = Result<(Version, Artifact)>;

impl<'a> PypiAnswer<'a> {
    /// Before anything was read from the index.
    pub fn new(source: &'a PypiSource) -> PypiAnswer<'a> {
        PypiAnswer {
            source,
            releases: source
                .releases()
                .into_iter()
                .map(|(r, _)| r.version)
                .collect(),
            plan: None,
            libraries: None,
        }
    }

    fn plan_for(&self, release: &Version) -> Option<&Plan> {
        self.plan.as_ref().filter(|p| p.cuda == *release)
    }
}

impl Source for PypiAnswer<'_> {
    fn kind(&self) -> SourceKind {
        SourceKind::Pypi
    }

    fn cuda_releases(&self) -> Result<Vec<Version>> {
        Ok(self.releases.clone())
    }

    fn planned(&self, release: &Version) -> Option<Vec<String>> {
        let p = self.plan_for(release)?;
        Some(p.artifacts.iter().map(|a| a.component.clone()).collect())
    }

    fn serve(&self, release: &Version, name: &str, _: Profile) -> Result<Served> {
        Ok(self
            .plan_for(release)
            .and_then(|p| p.artifacts.iter().find(|a| a.component == name))
            .map_or(Served::No, |a| Served::Artifacts(vec![a.clone()])))
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

    /// All of them (TensorRT from NVIDIA's index).
    fn carries(&self, _: Library) -> bool {
        true
    }

    fn awaits(&self, _: Library) -> bool {
        self.libraries.is_none()
    }

    fn library(
        &self,
        lib: Library,
        _: Option<&Version>,
        _: &Version,
    ) -> Result<Option<(Version, Artifact)>> {
        let Some(answers) = &self.libraries else {
            return Ok(None);
        };
        let mut answers = answers.borrow_mut();
        match answers.iter().position(|(l, _)| *l == lib) {
            Some(i) => answers.remove(i).1.map(Some),
            None => Ok(None),
        }
    }

    /// The releases PyPI serves.
    fn no_release(&self, spec: &Version) -> Option<Error> {
        self.source
            .release(&StackSpec::new(spec.clone(), None))
            .err()
    }
}

/// A toolkit component to find a wheel for: its version in the release,
/// and the PyPI project that has its wheels.
struct Wanted {
    component: String,
    version: String,
    project: String,
}

/// The toolkit components of a request that PyPI has a project for: the
/// profile's, with `--with`'s, less `--without`'s. One PyPI has no project
/// (or the release no version) for is left out, or fails the plan when
/// asked for by name and not skipped. What PyPI's wheels of a component
/// cannot do goes into `notes`.
fn wanted_components(
    req: &Request,
    release: &Release,
    missing: Missing,
    notes: &mut Vec<String>,
) -> Result<Vec<Wanted>> {
    let skip = missing == Missing::Skip;
    let pypi = registry::pypi();
    let major = release.version.major();
    let mut names = registry::cuda_releases().profile_components(req.profile, release);
    for c in &req.with {
        if !names.contains(c) && is_toolkit_component(c) {
            names.push(c.clone());
        }
    }
    names.retain(|c| !req.without.contains(c));
    let mut wanted = Vec::new();
    for c in &names {
        let explicit = req.with.contains(c);
        let (Some(version), Some(project)) = (release.component(c), pypi.package(c, major)) else {
            if explicit && !skip {
                return Err(Error::Install(InstallError::NotAvailable {
                    what: format!("{c} for CUDA {}", release.version),
                    source_name: Some("PyPI".into()),
                    hint: Some(crate::msg!("hint-try-source-nvidia")),
                }));
            }
            continue;
        };
        if let Some(l) = pypi.limitation(c, major) {
            notes.push(l.message.clone());
        }
        wanted.push(Wanted {
            component: c.clone(),
            version: version.to_string(),
            project: project.to_string(),
        });
    }
    Ok(wanted)
}

/// The cuDNN wheel matching `spec` among a project's `wheels`; none at all
/// fails the plan naming the versions there are, unless skipped (`None`).
fn cudnn_wheel<'w>(
    wheels: &'w [Wheel],
    spec: &Version,
    project: &str,
    major: u32,
    missing: Missing,
) -> Result<Option<&'w Wheel>> {
    match pick_prefix(wheels, spec) {
        Some(w) => Ok(Some(w)),
        None if missing == Missing::Skip => Ok(None),
        None => {
            let mut have: Vec<&PyVersion> = wheels
                .iter()
                .filter(|w| !w.file.yanked)
                .map(|w| &w.version)
                .collect();
            have.sort();
            have.dedup();
            Err(Error::Install(InstallError::NotAvailable {
                what: format!("cuDNN {spec} for CUDA {major}"),
                source_name: Some(project.to_string()),
                hint: Some(crate::msg!(
                    "hint-available",
                    versions = have
                        .iter()
                        .map(|v| v.text.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }))
        }
    }
}

fn artifact(component: &str, w: &Wheel) -> Artifact {
    Artifact {
        component: component.to_string(),
        version: w.version.text.clone(),
        url: w.file.url.clone(),
        sha256: w.file.sha256.clone(),
        md5: None,
        size: w.file.size,
        max_size: None,
        format: ArchiveFormat::Wheel,
        layout: Layout::Wheel,
        source: SourceKind::Pypi,
        file_name: w.file.filename.clone(),
    }
}

/// The releases among `wheels` that are not yanked, oldest first, each once.
fn release_versions(wheels: Vec<Wheel>) -> Vec<String> {
    let mut v: Vec<PyVersion> = wheels
        .into_iter()
        .filter(|w| !w.file.yanked)
        .map(|w| w.version)
        .collect();
    v.sort();
    v.dedup_by(|a, b| a.nums == b.nums);
    v.into_iter().map(|v| v.version().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions() {
        assert_eq!(
            normalize("Nvidia_CUDA.runtime--cu12"),
            "nvidia-cuda-runtime-cu12"
        );
        let v = PyVersion::parse("12.3.101.post1").unwrap();
        assert_eq!(v.nums, vec![12, 3, 101]);
        assert_eq!(v.post, Some(1));
        assert!(PyVersion::parse("12.4.0.16rc1").is_none());
        assert!(PyVersion::parse("0.0.1.dev5").is_none());
        assert!(PyVersion::parse("12.3.101").unwrap() < v);
    }

    /// Reads the copies of PyPI's JSON for a project kept in
    /// `tests/fixtures/pypi/` (None for projects not copied there).
    fn reference(project: &str) -> Option<Vec<Wheel>> {
        let path = format!(
            "{}/tests/fixtures/pypi/{project}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        let mut out = Vec::new();
        for (_, files) in json["releases"].as_object()? {
            for f in files.as_array()? {
                let file = IndexFile {
                    filename: f["filename"].as_str()?.into(),
                    url: f["url"].as_str()?.into(),
                    sha256: f["digests"]["sha256"].as_str().map(Into::into),
                    size: f["size"].as_u64(),
                    yanked: f["yanked"].as_bool().unwrap_or(false),
                    metadata: None,
                };
                if let Some(w) = wheel_for(&file, Platform::LinuxX86_64) {
                    out.push(w);
                }
            }
        }
        Some(out)
    }

    /// Every release PyPI serves maps to a wheel for the components whose
    /// PyPI data is in the reference set, exactly where PyPI has the version.
    #[test]
    fn every_manifest_release_maps_to_reference_wheels() {
        let releases = registry::cuda_releases();
        let pypi = registry::pypi();
        let mut checked = 0;
        for r in releases.releases.iter().filter(|r| pypi.serves(&r.version)) {
            for c in ["cudart", "cublas", "nvrtc", "nvcc"] {
                let Some(project) = pypi.package(c, r.version.major()) else {
                    continue;
                };
                let Some(wheels) = reference(project) else {
                    continue;
                };
                let want = r.component(c).unwrap();
                let (w, how) = pick_component(&wheels, want, &r.version)
                    .unwrap_or_else(|| panic!("{} {c} {want}", r.version));
                if how == Match::Exact {
                    assert_eq!(w.version.text, want);
                } else {
                    assert!(
                        w.version
                            .starts_with(&[r.version.major(), r.version.minor().unwrap()])
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 60, "{checked}");
        // The known gap: CUDA 11.7.0's cudart 11.7.60 was never uploaded.
        let w = reference("nvidia-cuda-runtime-cu11").unwrap();
        let (pick, how) = pick_component(&w, "11.7.60", &"11.7.0".parse().unwrap()).unwrap();
        assert_eq!(
            (pick.version.text.as_str(), how),
            ("11.7.99", Match::SameMinor)
        );
    }

    #[test]
    fn benchmark_stack_resolves_exactly() {
        let rt = reference("nvidia-cuda-runtime-cu12").unwrap();
        let v: Version = "12.4.1".parse().unwrap();
        assert_eq!(
            pick_component(&rt, "12.4.127", &v).unwrap().0.version.text,
            "12.4.127"
        );
        let cudnn = reference("nvidia-cudnn-cu12").unwrap();
        assert_eq!(
            pick_prefix(&cudnn, &"9.1.0.70".parse().unwrap())
                .unwrap()
                .version
                .text,
            "9.1.0.70"
        );
        assert_eq!(
            pick_prefix(&cudnn, &"9.1".parse().unwrap())
                .unwrap()
                .version
                .text,
            "9.1.1.17"
        );
        assert!(pick_prefix(&cudnn, &"7".parse().unwrap()).is_none());
    }
}
