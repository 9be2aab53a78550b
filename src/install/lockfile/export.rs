//! The Python side of a lock: the `nvidia-*` wheels (and the `cuda-toolkit`
//! metapackage) that carry the locked components, as pip constraints or as
//! uv's `constraint-dependencies`.
//!
//! A constraint only limits versions; it installs nothing. So `pip install
//! torch -c constraints.txt` resolves torch against exactly the CUDA
//! components the project's stack has, or fails saying which pin torch
//! cannot meet — instead of silently pulling a second, different CUDA.
//!
//! A component locked from PyPI is pinned to its wheel's own name and version
//! (read from the locked file name, so a `.post1` upload stays exact). One
//! locked from NVIDIA's redist is pinned through the registry's map of
//! components to PyPI projects, at the component's version (NVIDIA publishes
//! both from one build). Components with no PyPI project are listed as
//! comments. When platforms disagree on a version, each pin carries a
//! `platform_machine` marker.
//!
//! A library beside the toolkit locked from NVIDIA's redist (cuSPARSELt,
//! cuTENSOR) is pinned only where its version is exactly one PyPI can have:
//! the redist names four parts (`2.8.1.0`, `0.8.1.1`), the wheels three
//! (`cutensor-cu12 2.8.1`, `nvidia-cusparselt-cu12 0.8.1`). PEP 440 pads
//! with zeros, so `2.8.1.0` is `2.8.1` and is pinned as that; `0.8.1.1` is
//! no release PyPI has, and whether the wheel `0.8.1` holds build 1 is
//! nothing the lock records, so such a library is listed as a comment
//! rather than pinned to a version pip would never find, or to a guess.

use std::collections::BTreeMap;

use super::Lock;
use crate::install::sources::Platform;
use crate::install::sources::SourceKind;
use crate::install::sources::pypi::normalize;
use crate::spec::Library;

/// One pinned Python distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub package: String,
    pub version: String,
    /// The platforms it applies to; all of the lock's when `None`.
    pub only: Option<Vec<Platform>>,
}

impl Pin {
    /// `name==version`, with a marker when it applies to some platforms only.
    pub fn requirement(&self) -> String {
        match &self.only {
            None => format!("{}=={}", self.package, self.version),
            Some(ps) => format!(
                "{}=={} ; {}",
                self.package,
                self.version,
                ps.iter()
                    .map(|p| format!("platform_machine == '{}'", p.machine()))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        }
    }
}

/// Why a locked component has no pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unpinned {
    /// No PyPI project carries it.
    NoProject,
    /// Its project's releases cannot name its version exactly.
    NoExactVersion,
}

/// The pins of a lock, sorted by package, and the components without one
/// (`component version (source)`, with the reason).
pub fn pins(lock: &Lock) -> (Vec<Pin>, Vec<(Unpinned, String)>) {
    let major = lock.stack.cuda.major();
    let pypi = crate::registry::pypi();
    let platforms = lock.platforms();
    // package -> version -> platforms
    let mut by: BTreeMap<String, BTreeMap<String, Vec<Platform>>> = BTreeMap::new();
    let mut unpinned = Vec::new();
    if lock.stack.cuda.parts().len() == 3 {
        for p in &platforms {
            by.entry("cuda-toolkit".into())
                .or_default()
                .entry(lock.stack.cuda.to_string())
                .or_default()
                .push(*p);
        }
    }
    for a in &lock.artifacts {
        let pin = match (a.source, Library::from_component(&a.component)) {
            (SourceKind::Pypi, _) => Ok(wheel_name_version(&a.file)),
            (_, Some(lib)) => library_pin(lib, major, &a.version),
            _ => {
                let project = if a.component == "cudnn" {
                    pypi.cudnn_package(major)
                } else {
                    pypi.package(&a.component, major)
                };
                Ok(project.map(|p| (normalize(p), a.version.clone())))
            }
        };
        let why = match pin {
            Ok(Some((package, version))) => {
                by.entry(package)
                    .or_default()
                    .entry(version)
                    .or_default()
                    .push(a.platform);
                continue;
            }
            Ok(None) => Unpinned::NoProject,
            Err(u) => u,
        };
        let line = (
            why,
            format!("{} {} ({})", a.component, a.version, a.source.name()),
        );
        if !unpinned.contains(&line) {
            unpinned.push(line);
        }
    }
    let mut out = Vec::new();
    for (package, versions) in by {
        for (version, mut ps) in versions {
            ps.sort();
            ps.dedup();
            let only = (ps != platforms).then_some(ps);
            out.push(Pin {
                package: package.clone(),
                version,
                only,
            });
        }
    }
    (out, unpinned)
}

/// The PyPI project and version a library from NVIDIA's redist is pinned
/// at: its version while all parts past the third are zeros (the module's
/// first paragraphs say why), in the three parts PyPI spells it with.
fn library_pin(
    lib: Library,
    major: u32,
    version: &str,
) -> Result<Option<(String, String)>, Unpinned> {
    let Some(project) = crate::registry::pypi().library_project(lib, major) else {
        return Ok(None);
    };
    let parts: Vec<&str> = version.split('.').collect();
    let exact = parts.len() >= 3
        && parts.iter().all(|p| p.parse::<u64>().is_ok())
        && parts[3..].iter().all(|p| p.parse::<u64>() == Ok(0));
    if !exact {
        return Err(Unpinned::NoExactVersion);
    }
    Ok(Some((normalize(project), parts[..3].join("."))))
}

/// A wheel's distribution (normalized) and version: the first two fields
/// of `name-version-…whl`.
fn wheel_name_version(file: &str) -> Option<(String, String)> {
    let mut parts = file.strip_suffix(".whl")?.split('-');
    let name = parts.next()?;
    let version = parts.next()?;
    Some((normalize(name), version.to_string()))
}

/// PyPI-hosted PyTorch builds for the locked CUDA minor, from the
/// compatibility table: `(index tag, torch releases)`.
pub fn torch_builds(lock: &Lock) -> Option<(String, Vec<String>)> {
    use crate::machine::compat::framework::{self, Framework};
    let mm = lock.stack.cuda.truncate(2);
    let mut releases = Vec::new();
    for v in framework::releases(Framework::Torch, "linux") {
        if let Ok(req) = framework::requirement(Framework::Torch, &v, "linux")
            && req.builds.iter().any(|b| b.cuda.truncate(2) == mm)
        {
            releases.push(v.to_string());
        }
    }
    if releases.is_empty() {
        return None;
    }
    releases.reverse();
    Some((
        format!("cu{}{}", mm.major(), mm.minor().unwrap_or(0)),
        releases,
    ))
}

/// Comment lines both formats open with.
fn header(lock: &Lock, unpinned: &[(Unpinned, String)]) -> String {
    let mut h = format!(
        "# The Python side of {} (cuda.lock, spec {}): constraints, they install nothing.\n",
        lock.name(),
        lock.spec
    );
    match torch_builds(lock) {
        Some((tag, releases)) => h.push_str(&format!(
            "# PyTorch {} publish builds for CUDA {}: --index-url https://download.pytorch.org/whl/{tag} (uv: --torch-backend {tag})\n",
            releases.join(", "),
            lock.stack.cuda.truncate(2)
        )),
        None => h.push_str(&format!(
            "# No PyTorch release in cudaenv's table is built for CUDA {}.\n",
            lock.stack.cuda.truncate(2)
        )),
    }
    for (why, u) in unpinned {
        h.push_str(&match why {
            Unpinned::NoProject => format!("# not on PyPI: {u}\n"),
            Unpinned::NoExactVersion => {
                format!("# not pinned, PyPI's releases have three parts: {u}\n")
            }
        });
    }
    h
}

/// A constraints file for `pip install -c` (and `uv pip install -c`).
pub fn pip_constraints(lock: &Lock) -> String {
    let (pins, unpinned) = pins(lock);
    let mut s = header(lock, &unpinned);
    for p in pins {
        s.push_str(&p.requirement());
        s.push('\n');
    }
    s
}

/// A `[tool.uv]` table for pyproject.toml.
pub fn uv(lock: &Lock) -> String {
    let (pins, unpinned) = pins(lock);
    let mut s = header(lock, &unpinned);
    s.push_str("[tool.uv]\nconstraint-dependencies = [\n");
    for p in pins {
        s.push_str(&format!("    {},\n", toml_string(&p.requirement())));
    }
    s.push_str("]\n");
    s
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::super::{Locked, Stack};
    use super::*;

    fn artifact(platform: Platform, file: &str, source: SourceKind, version: &str) -> Locked {
        Locked {
            platform,
            component: "cudart".into(),
            version: version.into(),
            source,
            file: file.into(),
            url: format!("https://files.pythonhosted.org/{file}"),
            size: Some(1),
            sha256: "0".repeat(64),
        }
    }

    #[test]
    fn pins_follow_the_locked_wheels_and_mark_platforms_that_differ() {
        let mut lock = Lock {
            version: 1,
            spec: "12.4".into(),
            stack: Stack {
                cuda: "12.4.1".parse().unwrap(),
                cudnn: None,
                profile: crate::install::sources::Profile::Runtime,
                libraries: Default::default(),
                with: vec![],
                without: vec![],
                source: "auto".into(),
            },
            artifacts: vec![
                artifact(
                    Platform::LinuxX86_64,
                    "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
                    SourceKind::Pypi,
                    "12.4.127",
                ),
                artifact(
                    Platform::LinuxSbsa,
                    "nvidia_cuda_runtime_cu12-12.4.127.post1-py3-none-manylinux2014_aarch64.whl",
                    SourceKind::Pypi,
                    "12.4.127.post1",
                ),
            ],
        };
        assert_eq!(
            pip_constraints(&lock)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>(),
            [
                "cuda-toolkit==12.4.1",
                "nvidia-cuda-runtime-cu12==12.4.127 ; platform_machine == 'x86_64'",
                "nvidia-cuda-runtime-cu12==12.4.127.post1 ; platform_machine == 'aarch64'",
            ]
        );
        // From NVIDIA's redist: the registry's project at the component's version.
        lock.artifacts = vec![artifact(
            Platform::LinuxX86_64,
            "cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz",
            SourceKind::Nvidia,
            "12.4.127",
        )];
        assert!(pip_constraints(&lock).contains("\nnvidia-cuda-runtime-cu12==12.4.127\n"));

        // A library from NVIDIA's redist: pinned where its four parts are
        // PyPI's three (PEP 440's zero padding), a comment where they are not.
        let library = |component: &str, file: &str, version: &str| Locked {
            component: component.into(),
            ..artifact(Platform::LinuxX86_64, file, SourceKind::Nvidia, version)
        };
        lock.artifacts = vec![
            library(
                "cutensor",
                "libcutensor-linux-x86_64-2.8.1.0_cuda12-archive.tar.xz",
                "2.8.1.0",
            ),
            library(
                "cusparselt",
                "libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive.tar.xz",
                "0.8.1.1",
            ),
        ];
        let text = pip_constraints(&lock);
        assert!(text.contains("\ncutensor-cu12==2.8.1\n"), "{text}");
        assert!(
            text.contains(
                "# not pinned, PyPI's releases have three parts: cusparselt 0.8.1.1 (nvidia)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("cusparselt-cu12=="), "{text}");
        // CUDA 11 has no cuSPARSELt project: the comment says so.
        lock.stack.cuda = "11.8.0".parse().unwrap();
        lock.artifacts.truncate(0);
        lock.artifacts
            .push(library("cusparselt", "x.tar.xz", "0.8.0.0"));
        assert!(pip_constraints(&lock).contains("# not on PyPI: cusparselt 0.8.0.0 (nvidia)\n"));
    }

    #[test]
    fn a_redist_library_version_is_pinned_only_when_pypi_can_spell_it() {
        let pin = |v: &str| library_pin(Library::Cutensor, 12, v);
        assert_eq!(
            pin("2.8.1.0"),
            Ok(Some(("cutensor-cu12".into(), "2.8.1".into())))
        );
        assert_eq!(
            pin("2.8.1"),
            Ok(Some(("cutensor-cu12".into(), "2.8.1".into())))
        );
        for v in ["0.8.1.1", "2.8", "2.8.1.x", "2.8.1.0.3"] {
            assert_eq!(pin(v), Err(Unpinned::NoExactVersion), "{v}");
        }
        assert_eq!(library_pin(Library::Cusparselt, 11, "0.8.1.0"), Ok(None));
    }

    #[test]
    fn wheel_names_give_the_distribution_and_its_exact_version() {
        assert_eq!(
            wheel_name_version("nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl"),
            Some(("nvidia-cudnn-cu12".into(), "9.1.0.70".into()))
        );
        assert_eq!(wheel_name_version("x.tar.xz"), None);
    }
}
