//! Reviewed release data, embedded in the binary.
//!
//! The files under `registry/` are data, reviewed like code: which component
//! versions each CUDA release shipped (`cuda-releases.toml`, generated from
//! NVIDIA's redist manifests by `scripts/gen-cuda-releases.py`) and which PyPI
//! projects carry each component per CUDA major (`pypi.toml`). They are parsed
//! once, on first use; a malformed file is a build defect caught by the tests
//! below, so parsing panics instead of returning an error to the user.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::spec::source::Profile;
use crate::spec::{Library, Version};

const CUDA_RELEASES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/registry/cuda-releases.toml"
));
const PYPI: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/registry/pypi.toml"));

/// One CUDA release: its full version and the component versions it shipped.
#[derive(Debug, Clone)]
pub struct Release {
    pub version: Version,
    pub date: Option<String>,
    /// Component name (`cudart`) → the version NVIDIA shipped (`12.4.127`).
    pub components: BTreeMap<String, String>,
}

impl Release {
    pub fn component(&self, name: &str) -> Option<&str> {
        self.components.get(name).map(String::as_str)
    }
}

/// A component as the registry knows it.
#[derive(Debug, Clone, Deserialize)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct ComponentInfo {
    /// Its key in NVIDIA's redist manifests (`cuda_cudart`).
    pub manifest: String,
    pub description: String,
}

#[derive(Debug)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct CudaReleases {
    pub source: String,
    /// Sorted oldest first.
    pub releases: Vec<Release>,
    pub components: BTreeMap<String, ComponentInfo>,
    runtime: Vec<String>,
    devel: Vec<String>,
}

#[derive(Deserialize)]
struct RawReleases {
    source: String,
    profiles: RawProfiles,
    components: BTreeMap<String, ComponentInfo>,
    releases: BTreeMap<String, RawRelease>,
}

#[derive(Deserialize)]
struct RawProfiles {
    runtime: Vec<String>,
    devel: Vec<String>,
}

#[derive(Deserialize)]
struct RawRelease {
    date: Option<String>,
    components: BTreeMap<String, String>,
}

impl CudaReleases {
    fn parse(text: &str) -> Result<CudaReleases, String> {
        let raw: RawReleases = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut releases = Vec::new();
        for (v, r) in raw.releases {
            let version = Version::parse_parts(&v, 3).map_err(|e| format!("release `{v}`: {e}"))?;
            for c in r.components.keys() {
                if !raw.components.contains_key(c) {
                    return Err(format!("release {v}: unknown component `{c}`"));
                }
            }
            releases.push(Release {
                version,
                date: r.date,
                components: r.components,
            });
        }
        releases.sort_by(|a, b| a.version.cmp(&b.version));
        Ok(CudaReleases {
            source: raw.source,
            releases,
            components: raw.components,
            runtime: raw.profiles.runtime,
            devel: raw.profiles.devel,
        })
    }

    /// The newest release matching a (possibly partial) CUDA version.
    #[cfg(test)]
    pub fn newest_matching(&self, cuda: &Version) -> Option<&Release> {
        self.releases.iter().rev().find(|r| r.version.matches(cuda))
    }

    #[cfg(test)]
    pub fn get(&self, cuda: &Version) -> Option<&Release> {
        self.releases.iter().find(|r| &r.version == cuda)
    }

    /// The component names a profile asks for, in a stable order. `Full` is
    /// every component the release has; sources drop what they cannot serve.
    pub fn profile_components(&self, profile: Profile, release: &Release) -> Vec<String> {
        match profile {
            Profile::Runtime => self.runtime.clone(),
            Profile::Devel => self.devel.clone(),
            Profile::Full => {
                let mut all = self.devel.clone();
                all.extend(
                    release
                        .components
                        .keys()
                        .filter(|c| !self.devel.contains(c))
                        .cloned(),
                );
                all
            }
        }
    }

    pub fn is_component(&self, name: &str) -> bool {
        self.components.contains_key(name)
    }
}

/// What PyPI carries.
#[derive(Debug, Deserialize)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct Pypi {
    pub source: String,
    majors: BTreeMap<String, PypiMajor>,
    packages: BTreeMap<String, BTreeMap<String, String>>,
    cudnn: BTreeMap<String, String>,
    #[serde(default)]
    pub limitations: Vec<Limitation>,
    pub libraries_source: String,
    libraries: BTreeMap<Library, PypiLibrary>,
}

/// Where a library beside the toolkit (NCCL, TensorRT, …) is on PyPI.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PypiLibrary {
    /// CUDA major -> project.
    projects: BTreeMap<String, String>,
    /// The index that has the wheels, when it is not the configured one.
    #[serde(default)]
    index: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PypiMajor {
    #[allow(dead_code)]
    suffix: String,
    /// When set, only these minor releases have wheels.
    #[serde(default)]
    minors: Option<Vec<u32>>,
}

/// Something a PyPI wheel lacks compared with NVIDIA's own archive.
#[derive(Debug, Clone, Deserialize)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct Limitation {
    pub component: String,
    pub major: u32,
    pub missing: Vec<String>,
    pub message: String,
}

impl Pypi {
    /// Does PyPI have wheels for this CUDA release's major.minor?
    pub fn serves(&self, cuda: &Version) -> bool {
        match self.majors.get(&cuda.major().to_string()) {
            None => false,
            Some(m) => match (&m.minors, cuda.minor()) {
                (None, _) => true,
                (Some(minors), Some(minor)) => minors.contains(&minor),
                (Some(_), None) => true,
            },
        }
    }

    /// The PyPI project for a component on a CUDA major, if there is one.
    pub fn package(&self, component: &str, major: u32) -> Option<&str> {
        self.packages
            .get(component)?
            .get(&major.to_string())
            .map(String::as_str)
    }

    /// The component a PyPI project carries on a CUDA major (the reverse of
    /// `package`), given the project's normalized name.
    pub fn component_of(&self, project: &str, major: u32) -> Option<&str> {
        let m = major.to_string();
        self.packages
            .iter()
            .find(|(_, by_major)| {
                by_major
                    .get(&m)
                    .is_some_and(|p| crate::spec::source::normalize(p) == project)
            })
            .map(|(c, _)| c.as_str())
    }

    pub fn cudnn_package(&self, major: u32) -> Option<&str> {
        self.cudnn.get(&major.to_string()).map(String::as_str)
    }

    pub fn limitation(&self, component: &str, major: u32) -> Option<&Limitation> {
        self.limitations
            .iter()
            .find(|l| l.component == component && l.major == major)
    }

    /// The project of a library for a CUDA major, if PyPI has one.
    pub fn library_project(&self, lib: Library, major: u32) -> Option<&str> {
        self.libraries
            .get(&lib)?
            .projects
            .get(&major.to_string())
            .map(String::as_str)
    }

    /// The CUDA majors a library has projects for.
    pub fn library_majors(&self, lib: Library) -> Vec<u32> {
        self.libraries
            .get(&lib)
            .map(|l| l.projects.keys().filter_map(|m| m.parse().ok()).collect())
            .unwrap_or_default()
    }

    /// The index a library's wheels are on when it is not the configured one.
    pub fn library_index(&self, lib: Library) -> Option<&str> {
        self.libraries.get(&lib)?.index.as_deref()
    }

    /// The library a PyPI project (normalized name) carries, if any.
    #[cfg(test)]
    pub fn library_of(&self, project: &str) -> Option<Library> {
        self.libraries
            .iter()
            .find(|(_, l)| {
                l.projects
                    .values()
                    .any(|p| crate::spec::source::normalize(p) == project)
            })
            .map(|(lib, _)| *lib)
    }
}

/// Can a stack have a component of this name: the toolkit's (the release
/// table), `cudnn`, or a library beside them (`nccl`, `tensorrt`, …)?
pub fn is_stack_component(name: &str) -> bool {
    cuda_releases().is_component(name) || name == "cudnn" || Library::from_component(name).is_some()
}

/// The CUDA release table.
pub fn cuda_releases() -> &'static CudaReleases {
    static R: OnceLock<CudaReleases> = OnceLock::new();
    R.get_or_init(|| {
        CudaReleases::parse(CUDA_RELEASES)
            .unwrap_or_else(|e| panic!("registry/cuda-releases.toml is invalid: {e}"))
    })
}

/// The PyPI project table.
pub fn pypi() -> &'static Pypi {
    static P: OnceLock<Pypi> = OnceLock::new();
    P.get_or_init(|| {
        toml::from_str(PYPI).unwrap_or_else(|e| panic!("registry/pypi.toml is invalid: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse_parts(s, 4).unwrap()
    }

    #[test]
    fn releases_parse_and_have_provenance() {
        let r = cuda_releases();
        assert!(r.source.contains("redistrib"));
        assert!(r.releases.len() >= 35);
        assert!(r.releases.windows(2).all(|w| w[0].version < w[1].version));
    }

    #[test]
    fn known_release_versions() {
        let r = cuda_releases().get(&v("12.4.1")).unwrap();
        assert_eq!(r.component("cudart"), Some("12.4.127"));
        assert_eq!(r.component("cublas"), Some("12.4.5.8"));
        assert_eq!(r.component("nvcc"), Some("12.4.131"));
        let r = cuda_releases().get(&v("11.8.0")).unwrap();
        assert_eq!(r.component("cudart"), Some("11.8.89"));
        assert!(r.component("nvjitlink").is_none());
    }

    #[test]
    fn newest_matching_takes_the_last_patch() {
        let r = cuda_releases();
        assert_eq!(r.newest_matching(&v("12.4")).unwrap().version, v("12.4.1"));
        assert_eq!(r.newest_matching(&v("12")).unwrap().version.major(), 12);
        assert!(r.newest_matching(&v("12.7")).is_none());
    }

    /// The table must be exactly what the generator makes of the reference
    /// manifests, so nobody edits it by hand by mistake.
    #[test]
    fn matches_the_reference_manifests() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/registry/inputs/manifests/cuda"
        );
        let entries = std::fs::read_dir(dir).unwrap();
        let releases = cuda_releases();
        let mut n = 0;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(ver) = name
                .strip_prefix("redistrib_")
                .and_then(|s| s.strip_suffix(".json"))
            else {
                continue;
            };
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            let rel = releases
                .get(&v(ver))
                .unwrap_or_else(|| panic!("{ver} missing"));
            for (comp, info) in &releases.components {
                let want = json
                    .get(&info.manifest)
                    .and_then(|c| c.get("version"))
                    .and_then(|v| v.as_str());
                assert_eq!(rel.component(comp), want, "{ver} {comp}");
            }
            n += 1;
        }
        assert_eq!(n, releases.releases.len());
    }

    #[test]
    fn every_library_has_projects_and_a_sane_index() {
        let p = pypi();
        for lib in Library::ALL {
            assert!(!p.library_majors(lib).is_empty(), "{lib:?}");
            for m in p.library_majors(lib) {
                let project = p.library_project(lib, m).unwrap();
                assert_eq!(p.library_of(project), Some(lib));
                assert!(
                    project.ends_with(&format!("cu{m}"))
                        || project.ends_with(&format!("cu{m}-libs"))
                );
            }
        }
        assert_eq!(
            p.library_index(Library::Tensorrt),
            Some("https://pypi.nvidia.com")
        );
        assert_eq!(p.library_index(Library::Nccl), None);
        assert!(p.libraries_source.contains("2026-12-01"));
    }

    #[test]
    fn pypi_names() {
        let p = pypi();
        assert_eq!(p.package("cudart", 12), Some("nvidia-cuda-runtime-cu12"));
        assert_eq!(p.package("cudart", 13), Some("nvidia-cuda-runtime"));
        assert_eq!(p.package("nvjitlink", 11), None);
        assert_eq!(p.cudnn_package(13), Some("nvidia-cudnn-cu13"));
        assert!(p.serves(&v("11.8.0")));
        assert!(!p.serves(&v("11.6.2")));
        assert!(p.serves(&v("12.0.1")));
        assert!(!p.serves(&v("10.2")));
        assert!(p.limitation("nvcc", 12).is_some());
        // Every PyPI component is a registry component.
        for c in p.packages.keys() {
            assert!(cuda_releases().is_component(c), "{c}");
        }
    }
}
