//! What TensorFlow and PyTorch releases need: the CUDA + cuDNN they were built
//! with, their Python range, and the driver that implies — and the stack
//! cudaenv picks for `--for FRAMEWORK==VERSION`.
//!
//! A release is matched by major.minor (`2.10`, `2.10.1` → the 2.10 row).
//! TensorFlow publishes one tested configuration per release and platform.
//! PyTorch publishes several builds; cudaenv picks the newest *stable* build
//! that runs on this machine (driver and GPU, when known), names the others,
//! and lets a local version tag (`torch==2.4+cu118`) choose one explicitly.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::spec::{StackSpec, Version};

use super::Machine;
use super::arch::{self, ArchSupport};
use super::data::{self, Channel};
use super::driver::{self, DriverFit, DriverRequirement};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    Tensorflow,
    Torch,
    Jax,
    Cupy,
    /// `cuda-python` / `cuda-bindings` / `cuda-pathfinder`: detected, no table.
    CudaPython,
    /// `numba-cuda`: detected, no table.
    NumbaCuda,
}

impl Framework {
    pub fn name(self) -> &'static str {
        match self {
            Framework::Tensorflow => "tensorflow",
            Framework::Torch => "torch",
            Framework::Jax => "jax",
            Framework::Cupy => "cupy",
            Framework::CudaPython => "cuda-python",
            Framework::NumbaCuda => "numba-cuda",
        }
    }

    /// Accepts the PyPI names and the usual nicknames.
    pub fn parse(s: &str) -> Option<Framework> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "tensorflow" | "tensorflow-gpu" | "tf" | "tensorflow-cpu" => {
                Some(Framework::Tensorflow)
            }
            "torch" | "pytorch" => Some(Framework::Torch),
            "jax" | "jaxlib" => Some(Framework::Jax),
            "cupy" | "cupy-cuda11x" | "cupy-cuda12x" | "cupy-cuda13x" => Some(Framework::Cupy),
            _ => None,
        }
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `torch==2.4`, `tensorflow==2.10.1`, `torch==2.4.1+cu118`, or a bare name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameworkReq {
    pub framework: Framework,
    pub version: Option<Version>,
    /// CUDA named by a local version tag (`+cu118` → 11.8).
    pub cuda_tag: Option<Version>,
}

impl FrameworkReq {
    pub fn new(framework: Framework, version: Option<Version>) -> Self {
        FrameworkReq {
            framework,
            version,
            cuda_tag: None,
        }
    }
}

impl fmt::Display for FrameworkReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A CUDA major alone comes from CuPy's package name (`cupy-cuda12x`).
        let major_only = self
            .cuda_tag
            .as_ref()
            .filter(|c| c.minor().is_none() && self.framework == Framework::Cupy);
        match major_only {
            Some(c) => write!(f, "{}-cuda{}x", self.framework, c.major())?,
            None => write!(f, "{}", self.framework)?,
        }
        if let Some(v) = &self.version {
            write!(f, "=={v}")?;
        }
        if let Some(c) = self.cuda_tag.as_ref().filter(|_| major_only.is_none()) {
            write!(f, "+cu{}{}", c.major(), c.minor().unwrap_or(0))?;
        }
        Ok(())
    }
}

impl FromStr for FrameworkReq {
    type Err = Error;
    fn from_str(input: &str) -> Result<Self> {
        let bad = |reason: &str| Error::InvalidFramework {
            input: input.escape_debug().to_string(),
            reason: reason.to_string(),
        };
        let (name, version) = match input.split_once("==").or_else(|| input.split_once('=')) {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (input.trim(), None),
        };
        let framework = Framework::parse(name)
            .ok_or_else(|| bad("the frameworks cudaenv knows are `tensorflow`, `torch`, `jax` and `cupy` (`cupy-cuda12x`, `cupy-cuda13x`)"))?;
        // `cupy-cuda12x`: the package name fixes the CUDA major.
        let package_major = name
            .to_ascii_lowercase()
            .strip_prefix("cupy-cuda")
            .and_then(|m| m.strip_suffix('x'))
            .and_then(|m| m.parse::<u32>().ok())
            .map(|m| Version::from_parts(&[m]));
        let Some(version) = version else {
            return Ok(FrameworkReq {
                cuda_tag: package_major,
                ..FrameworkReq::new(framework, None)
            });
        };
        let (public, local) = match version.split_once('+') {
            Some((p, l)) => (p, Some(l)),
            None => (version, None),
        };
        // Release candidates and post releases need the same stack as the release.
        let public = public
            .split(|c: char| c.is_ascii_alphabetic())
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        let version = Version::parse_parts(public, 4).map_err(|e| bad(&format!("version: {e}")))?;
        let cuda_tag = match local {
            None => package_major,
            Some(l) => Some(
                parse_cuda_tag(l).ok_or_else(|| bad("a local version tag looks like `+cu121`"))?,
            ),
        };
        Ok(FrameworkReq {
            framework,
            version: Some(version),
            cuda_tag,
        })
    }
}

/// `cu121` → 12.1, `cu118` → 11.8, `cu92` → 9.2, `cu130` → 13.0.
pub fn parse_cuda_tag(tag: &str) -> Option<Version> {
    let digits = tag.strip_prefix("cu")?;
    if digits.len() < 2 || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (maj, min) = digits.split_at(digits.len() - 1);
    Some(Version::from_parts(&[maj.parse().ok()?, min.parse().ok()?]))
}

/// One way to run a framework release: a CUDA (+ cuDNN) build.
#[derive(Debug, Clone, Serialize)]
pub struct Build {
    pub cuda: Version,
    pub cudnn: Option<Version>,
    pub channel: Channel,
    /// The matrix states one cuDNN for several CUDA builds of the row.
    pub cudnn_shared: bool,
    /// `cudnn` is the oldest that works; any later one of that major does too.
    pub cudnn_minimum: bool,
    pub driver_linux: Option<DriverRequirement>,
    pub driver_windows: Option<DriverRequirement>,
}

impl Build {
    /// The stack spec for this build: CUDA major.minor + cuDNN major.minor
    /// (only the cuDNN major when the table gives a minimum: the newest then).
    pub fn spec(&self) -> StackSpec {
        let digits = if self.cudnn_minimum { 1 } else { 2 };
        StackSpec::new(
            self.cuda.truncate(2),
            self.cudnn.as_ref().map(|c| c.truncate(digits)),
        )
    }
}

/// What a framework release needs.
#[derive(Debug, Clone, Serialize)]
pub struct Requirement {
    pub framework: Framework,
    /// The table row's version (`2.10.0`, `2.4`).
    pub version: Version,
    /// The PyPI package of that release (`tensorflow`, `tensorflow_gpu`, `torch`).
    pub package: String,
    pub platform: &'static str,
    pub python: String,
    pub builds: Vec<Build>,
    /// False for rows the source itself calls unconfirmed.
    pub confirmed: bool,
    pub notes: Vec<String>,
}

fn build(cuda: &Version, cudnn: Option<&Version>, channel: Channel, shared: bool) -> Build {
    Build {
        cuda: cuda.clone(),
        cudnn: cudnn.cloned(),
        channel,
        cudnn_shared: shared,
        cudnn_minimum: false,
        driver_linux: driver::requirement(cuda, driver::DriverOs::Linux),
        driver_windows: driver::requirement(cuda, driver::DriverOs::Windows),
    }
}

/// Every release a framework's table knows, newest first (for listings and tests).
pub fn releases(framework: Framework, platform: &str) -> Vec<Version> {
    match framework {
        Framework::Tensorflow => data::tensorflow()
            .build
            .iter()
            .filter(|b| b.platform == platform)
            .map(|b| b.version.clone())
            .collect(),
        Framework::Torch => data::pytorch()
            .release
            .iter()
            .map(|r| r.version.clone())
            .collect(),
        Framework::Jax => data::jax()
            .release
            .iter()
            .map(|r| r.version.clone())
            .collect(),
        Framework::Cupy => data::cupy()
            .release
            .iter()
            .map(|r| r.version.clone())
            .collect(),
        Framework::CudaPython | Framework::NumbaCuda => Vec::new(),
    }
}

/// The requirement of `framework` `version` on `platform` (`linux` or `windows`).
pub fn requirement(framework: Framework, version: &Version, platform: &str) -> Result<Requirement> {
    let mm = version.truncate(2);
    let unknown = || Error::UnknownFrameworkVersion {
        framework: framework.name().into(),
        version: version.to_string(),
        known: releases(framework, platform)
            .iter()
            .map(|v| v.truncate(2).to_string())
            .collect(),
    };
    match framework {
        Framework::Tensorflow => {
            let b = data::tensorflow()
                .build
                .iter()
                .find(|b| b.platform == platform && b.version.truncate(2) == mm)
                .ok_or_else(|| no_native_windows_gpu(platform, version).unwrap_or_else(unknown))?;
            let mut notes = Vec::new();
            if platform == "linux" && mm >= Version::from_parts(&[2, 14]) {
                notes.push(format!(
                    "`pip install tensorflow[and-cuda]=={}` brings these as NVIDIA wheels; a cudaenv stack serves plain `tensorflow`",
                    mm
                ));
            }
            Ok(Requirement {
                framework,
                version: b.version.clone(),
                package: b.package.clone(),
                platform: if platform == "windows" {
                    "windows"
                } else {
                    "linux"
                },
                python: b.python.join(", "),
                builds: vec![build(&b.cuda, Some(&b.cudnn), Channel::Stable, false)],
                confirmed: true,
                notes,
            })
        }
        Framework::Torch | Framework::Jax | Framework::Cupy => {
            let (table, package) = match framework {
                Framework::Jax => (data::jax(), "jax"),
                Framework::Cupy => (data::cupy(), "cupy"),
                _ => (data::pytorch(), "torch"),
            };
            // CuPy rows are per major release (`14`), the others per minor.
            let key = if framework == Framework::Cupy {
                version.truncate(1)
            } else {
                mm.clone()
            };
            let r = table
                .release
                .iter()
                .find(|r| r.version.truncate(2) == key)
                .ok_or_else(unknown)?;
            let mut builds: Vec<Build> = r
                .build
                .iter()
                .map(|b| Build {
                    cudnn_minimum: b.cudnn_minimum,
                    ..build(&b.cuda, b.cudnn.as_ref(), b.channel, b.cudnn_shared)
                })
                .collect();
            // Stable first, then newest CUDA first: the order `stack_for` prefers.
            builds.sort_by(|a, b| (b.channel, &b.cuda).cmp(&(a.channel, &a.cuda)));
            let mut notes = Vec::new();
            if !r.confirmed && framework == Framework::Torch {
                notes.push(
                    "unconfirmed: the copies of PyTorch's RELEASE.md disagree for this release"
                        .into(),
                );
            } else if !r.confirmed {
                notes.push(format!("unconfirmed: {framework}'s guide states its current requirements, not since which release"));
            }
            if let Some(n) = &r.note {
                notes.push(n.clone());
            }
            Ok(Requirement {
                framework,
                version: r.version.clone(),
                package: package.into(),
                platform: if platform == "windows" {
                    "windows"
                } else {
                    "linux"
                },
                python: r.python.clone().unwrap_or_else(|| "unknown".into()),
                builds,
                confirmed: r.confirmed,
                notes,
            })
        }
        Framework::CudaPython | Framework::NumbaCuda => Err(Error::UnknownFrameworkVersion {
            framework: framework.name().into(),
            version: version.to_string(),
            known: vec![format!(
                "none: cudaenv has no table for {framework} (doctor still detects its CUDA wheels)"
            )],
        }),
    }
}

/// TensorFlow's native Windows GPU builds end at 2.10 (its install guide:
/// "TensorFlow 2.10 was the last TensorFlow release that supported GPU on
/// native Windows"): a later release asked for Windows gets the error that
/// says where it has the GPU (WSL2, with its Linux build's stack) and the
/// last release that has it on Windows, from the table itself.
fn no_native_windows_gpu(platform: &str, version: &Version) -> Option<Error> {
    if platform != "windows" {
        return None;
    }
    let builds = &data::tensorflow().build;
    let last = builds
        .iter()
        .filter(|b| b.platform == "windows")
        .max_by(|a, b| a.version.cmp(&b.version))?;
    if version.truncate(2) <= last.version.truncate(2) {
        return None;
    }
    let linux_spec = builds
        .iter()
        .find(|b| b.platform == "linux" && b.version.truncate(2) == version.truncate(2))
        .map(|b| format!("{}+cudnn{}", b.cuda, b.cudnn));
    Some(Error::NoNativeWindowsGpu {
        framework: "tensorflow".into(),
        version: version.truncate(2).to_string(),
        linux_spec,
        last: last.version.truncate(2).to_string(),
        last_spec: format!("{}+cudnn{}", last.cuda, last.cudnn),
    })
}

/// The stack cudaenv picks for a framework release, and why.
#[derive(Debug, Clone, Serialize)]
pub struct StackChoice {
    #[serde(serialize_with = "super::ser_display")]
    pub spec: StackSpec,
    pub reason: String,
    pub requirement: Requirement,
    /// The chosen build (index into `requirement.builds`).
    pub build: usize,
}

/// Picks the stack for `req` (its version must be set; the caller fills it from
/// the installed framework otherwise). `machine` narrows the choice to builds
/// this machine's driver and GPUs can run, when those are known.
pub fn stack_for(req: &FrameworkReq, machine: Option<&Machine>) -> Result<StackChoice> {
    stack_for_on(req, machine, "linux")
}

/// `stack_for` from the builds `framework` publishes for `platform`
/// (`linux` or `windows`: TensorFlow's tested configurations differ, and
/// end at 2.10 on Windows).
pub fn stack_for_on(
    req: &FrameworkReq,
    machine: Option<&Machine>,
    platform: &str,
) -> Result<StackChoice> {
    let version = req
        .version
        .as_ref()
        .ok_or_else(|| Error::InvalidFramework {
            input: req.to_string(),
            reason: "a version is needed here (`torch==2.4`)".into(),
        })?;
    let requirement = requirement(req.framework, version, platform)?;
    let name = format!("{} {}", req.framework, requirement.version.truncate(2));
    let describe = |b: &Build| match &b.cudnn {
        Some(c) if b.cudnn_minimum => format!("CUDA {} + cuDNN ≥ {c}", b.cuda),
        Some(c) => format!("CUDA {} + cuDNN {c}", b.cuda),
        None => format!("CUDA {}", b.cuda),
    };

    if let Some(tag) = &req.cuda_tag {
        let major_only = tag.minor().is_none();
        let i = requirement
            .builds
            .iter()
            .position(|b| {
                if major_only {
                    b.cuda.major() == tag.major()
                } else {
                    b.cuda.truncate(2) == *tag
                }
            })
            .ok_or_else(|| Error::UnknownFrameworkVersion {
                framework: format!("{name} built for"),
                version: format!("CUDA {tag}"),
                known: requirement
                    .builds
                    .iter()
                    .map(|b| format!("cu{}", b.cuda.to_string().replace('.', "")))
                    .collect(),
            })?;
        let b = &requirement.builds[i];
        return Ok(StackChoice {
            spec: b.spec(),
            reason: format!(
                "{name}+cu{} is the {} build ({})",
                tag.to_string().replace('.', ""),
                channel_name(b.channel),
                describe(b)
            ),
            build: i,
            requirement,
        });
    }

    if requirement.builds.len() == 1 {
        let b = &requirement.builds[0];
        let what = if req.framework == Framework::Tensorflow {
            "was tested with"
        } else {
            "is built for"
        };
        return Ok(StackChoice {
            spec: b.spec(),
            reason: format!("{name} {what} {}", describe(b)),
            build: 0,
            requirement,
        });
    }

    let stable: Vec<usize> = (0..requirement.builds.len())
        .filter(|&i| requirement.builds[i].channel == Channel::Stable)
        .collect();
    let listed = |idx: &[usize]| {
        let mut v: Vec<&Version> = idx.iter().map(|&i| &requirement.builds[i].cuda).collect();
        v.sort();
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let experimental: Vec<usize> = (0..requirement.builds.len())
        .filter(|&i| requirement.builds[i].channel == Channel::Experimental)
        .collect();
    let mut reason = format!("{name} has stable builds for CUDA {}", listed(&stable));
    if !experimental.is_empty() {
        reason.push_str(&format!(" (experimental: {})", listed(&experimental)));
    }
    // `builds` is sorted stable-first, newest-first; keep the ones this machine runs.
    let runs_here = |b: &Build| machine.is_none_or(|m| m.can_run(&b.cuda).is_ok());
    let fitting: Vec<usize> = stable
        .iter()
        .copied()
        .filter(|&i| runs_here(&requirement.builds[i]))
        .collect();
    let (i, why) = match (fitting.first(), machine) {
        (Some(&i), Some(m)) if i != stable[0] => {
            let newest = &requirement.builds[stable[0]];
            let problem = m.can_run(&newest.cuda).err().unwrap_or_default();
            (
                i,
                format!(
                    "picked CUDA {}, the newest one {} runs (CUDA {}: {problem})",
                    requirement.builds[i].cuda,
                    m.name(),
                    newest.cuda
                ),
            )
        }
        (Some(&i), Some(m)) if m.is_known() => (
            i,
            format!(
                "picked the newest, CUDA {}, which {}'s driver and GPU run",
                requirement.builds[i].cuda,
                m.name()
            ),
        ),
        (Some(&i), _) => (
            i,
            format!("picked the newest, CUDA {}", requirement.builds[i].cuda),
        ),
        (None, m) => (
            stable[0],
            format!(
                "none of them runs on {} as it is (driver or GPU); picked the newest, CUDA {}",
                m.map_or("this machine", Machine::name),
                requirement.builds[stable[0]].cuda
            ),
        ),
    };
    reason.push_str("; ");
    reason.push_str(&why);
    let b = &requirement.builds[i];
    if let Some(c) = &b.cudnn {
        reason.push_str(&format!(", with cuDNN {c}"));
    }
    if requirement.builds.len() > 1 {
        reason.push_str(&format!(
            "; name another with `{}=={}+cuXY`",
            req.framework,
            requirement.version.truncate(2)
        ));
    }
    Ok(StackChoice {
        spec: b.spec(),
        reason,
        build: i,
        requirement,
    })
}

fn channel_name(c: Channel) -> &'static str {
    match c {
        Channel::Stable => "stable",
        Channel::Experimental => "experimental",
    }
}

impl Machine {
    /// Whether the machine runs a CUDA release: `Err` says why not.
    pub fn can_run(&self, cuda: &Version) -> std::result::Result<(), String> {
        if let Some(d) = &self.driver
            && let DriverFit::TooOld { need } = driver::fit(d, cuda, self.driver_os)
        {
            return Err(format!("needs driver ≥ {need}, {} has {d}", self.name()));
        }
        for gpu in &self.gpus {
            match arch::support(cuda, *gpu) {
                ArchSupport::Removed { since } => {
                    return Err(format!(
                        "CUDA {since} dropped {} ({})",
                        gpu.sm(),
                        gpu.family().unwrap_or("this GPU")
                    ));
                }
                ArchSupport::TooNew { first } => {
                    return Err(match first {
                        Some(f) => format!("{} needs CUDA ≥ {f}", gpu.sm()),
                        None => format!("{} is newer than any CUDA cudaenv knows", gpu.sm()),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::compat::arch::ComputeCapability;
    use crate::machine::compat::driver::{DriverOs, DriverVersion};

    fn req(s: &str) -> FrameworkReq {
        s.parse().unwrap()
    }

    #[test]
    fn parses_framework_requests() {
        let r = req("tensorflow==2.10");
        assert_eq!(r.framework, Framework::Tensorflow);
        assert_eq!(r.version.unwrap().to_string(), "2.10");
        let r = req("torch==2.4.1+cu118");
        assert_eq!(r.cuda_tag.unwrap().to_string(), "11.8");
        assert_eq!(req("pytorch=2.4").framework, Framework::Torch);
        assert_eq!(
            req("tensorflow-gpu==1.15.0").version.unwrap().to_string(),
            "1.15.0"
        );
        assert_eq!(
            req("tensorflow==2.16.0rc0").version.unwrap().to_string(),
            "2.16.0"
        );
        assert!(req("torch").version.is_none());
        for bad in [
            "numpy==1.0",
            "torch==",
            "torch==x",
            "torch==2.4+rocm6",
            "",
            "torch==2.4;rm",
        ] {
            assert!(bad.parse::<FrameworkReq>().is_err(), "{bad}");
        }
        assert_eq!(parse_cuda_tag("cu92").unwrap().to_string(), "9.2");
        assert_eq!(parse_cuda_tag("cu130").unwrap().to_string(), "13.0");
    }

    #[test]
    fn the_documented_examples() {
        let c = stack_for(&req("tensorflow==2.10"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11.2+cudnn8.1");
        let c = stack_for(&req("torch==2.4"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.1+cudnn9.1");
        assert!(c.reason.contains("11.8, 12.1"), "{}", c.reason);
        assert!(c.reason.contains("experimental: 12.4"), "{}", c.reason);
        let c = stack_for(&req("torch==2.4+cu118"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11.8+cudnn9.1");
        let c = stack_for(&req("torch==2.4+cu124"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.4+cudnn9.1");
        assert!(stack_for(&req("torch==2.4+cu102"), None).is_err());
    }

    /// JAX names a cuDNN minimum (the newest 9.x is installed), CuPy's package
    /// name fixes the CUDA major, and both print back as users write them.
    #[test]
    fn jax_and_cupy_requests() {
        let c = stack_for(&req("jax==0.11"), None).unwrap();
        assert_eq!(c.spec.to_string(), "13.0+cudnn9");
        let c = stack_for(&req("jax==0.11.2+cu123"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.3+cudnn9");
        let r = req("cupy-cuda12x==14.0.1");
        assert_eq!(r.framework, Framework::Cupy);
        assert_eq!(r.to_string(), "cupy-cuda12x==14.0.1");
        assert_eq!(stack_for(&r, None).unwrap().spec.to_string(), "12.9");
        assert_eq!(
            stack_for(&req("cupy-cuda13x==14"), None)
                .unwrap()
                .spec
                .to_string(),
            "13.1"
        );
        assert_eq!(
            stack_for(&req("cupy==13.6"), None)
                .unwrap()
                .spec
                .to_string(),
            "12.4"
        );
        assert!(
            stack_for(&req("cupy-cuda11x==14.0"), None).is_err(),
            "CuPy 14 has no CUDA 11 build"
        );
        assert!(stack_for(&req("jax==0.4"), None).is_err());
        assert!("numba-cuda==0.30".parse::<FrameworkReq>().is_err());
    }

    /// Every TensorFlow row, on both platforms, maps to exactly its CUDA + cuDNN.
    #[test]
    fn every_tensorflow_row() {
        for b in &data::tensorflow().build {
            let r = requirement(Framework::Tensorflow, &b.version, &b.platform).unwrap();
            assert_eq!(r.builds.len(), 1);
            assert_eq!(r.builds[0].cuda, b.cuda);
            assert_eq!(r.builds[0].cudnn.as_ref(), Some(&b.cudnn));
            assert_eq!(r.package, b.package);
            assert!(r.builds[0].driver_linux.is_some(), "{}", b.version);
            if b.platform == "linux" {
                let c = stack_for(
                    &FrameworkReq::new(Framework::Tensorflow, Some(b.version.clone())),
                    None,
                )
                .unwrap();
                assert_eq!(
                    c.spec,
                    StackSpec::new(b.cuda.truncate(2), Some(b.cudnn.truncate(2)))
                );
                assert!(
                    c.reason.contains(&format!("CUDA {}", b.cuda)),
                    "{}",
                    c.reason
                );
            }
        }
        assert!(requirement(Framework::Tensorflow, &"2.11".parse().unwrap(), "windows").is_err());
        assert!(requirement(Framework::Tensorflow, &"2.11".parse().unwrap(), "linux").is_ok());
    }

    /// TensorFlow after 2.10 on native Windows: no GPU build; the error says
    /// WSL2 (with the Linux build's stack) or 2.10 with 11.2+cudnn8.1. Up to
    /// 2.10 the Windows table's own configuration is the pick.
    #[test]
    fn tensorflow_after_2_10_has_no_gpu_on_native_windows() {
        let tf = |v: &str| FrameworkReq::new(Framework::Tensorflow, Some(v.parse().unwrap()));
        for v in ["2.11", "2.15", "2.21.0"] {
            let e = stack_for_on(&tf(v), None, "windows").unwrap_err();
            let Error::NoNativeWindowsGpu {
                linux_spec,
                last,
                last_spec,
                ..
            } = &e
            else {
                panic!("{v}: {e:?}");
            };
            assert_eq!(
                (last.as_str(), last_spec.as_str()),
                ("2.10", "11.2+cudnn8.1")
            );
            let linux = stack_for(&tf(v), None).unwrap().spec;
            assert_eq!(
                linux_spec.as_deref(),
                Some(linux.to_string().as_str()),
                "{v}"
            );
            assert_eq!(e.exit_code(), crate::error::ExitCode::NotAvailable);
            let hint = e.hint().unwrap();
            assert!(hint.starts_with("use WSL2"), "{hint}");
            assert!(hint.contains("cudaenv install 11.2+cudnn8.1"), "{hint}");
        }
        let c = stack_for_on(&tf("2.10"), None, "windows").unwrap();
        assert_eq!(c.spec.to_string(), "11.2+cudnn8.1");
        assert_eq!(c.requirement.package, "tensorflow_gpu");
        let c = stack_for_on(&tf("2.4"), None, "windows").unwrap();
        assert_eq!(c.spec.to_string(), "11.0+cudnn8.0");
        // Linux is unchanged by the Windows rule.
        assert!(stack_for_on(&tf("2.15"), None, "linux").is_ok());
    }

    /// Every PyTorch row: the pick is the newest stable build, and each build is selectable by tag.
    #[test]
    fn every_pytorch_row() {
        for r in &data::pytorch().release {
            let choice = stack_for(
                &FrameworkReq::new(Framework::Torch, Some(r.version.clone())),
                None,
            )
            .unwrap();
            let newest = r
                .build
                .iter()
                .filter(|b| b.channel == Channel::Stable)
                .map(|b| &b.cuda)
                .max()
                .unwrap();
            assert_eq!(&choice.spec.cuda, newest, "{}", r.version);
            assert_eq!(choice.requirement.confirmed, r.confirmed);
            if !r.confirmed {
                assert!(
                    choice
                        .requirement
                        .notes
                        .iter()
                        .any(|n| n.contains("unconfirmed"))
                );
            }
            for b in &r.build {
                let mut q = FrameworkReq::new(Framework::Torch, Some(r.version.clone()));
                q.cuda_tag = Some(b.cuda.clone());
                let c = stack_for(&q, None).unwrap();
                assert_eq!(c.spec.cuda, b.cuda, "{} {}", r.version, b.cuda);
                assert_eq!(c.spec.cudnn, b.cudnn.as_ref().map(|c| c.truncate(2)));
            }
        }
    }

    #[test]
    fn the_machine_narrows_the_choice() {
        let old_driver = Machine {
            driver: DriverVersion::parse("520.61.05"),
            driver_os: DriverOs::Linux,
            gpus: vec![ComputeCapability::new(8, 6)],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.4"), Some(&old_driver)).unwrap();
        assert_eq!(c.spec.to_string(), "11.8+cudnn9.1");
        assert!(
            c.reason.contains(
                "the newest one this machine runs (CUDA 12.1: needs driver ≥ 525.60.13, this machine has 520.61.05)"
            ),
            "{}",
            c.reason
        );
        let target = Machine {
            whose: crate::machine::compat::Whose::Target,
            ..old_driver.clone()
        };
        let c = stack_for(&req("torch==2.4"), Some(&target)).unwrap();
        assert!(
            c.reason.contains(
                "the newest one the target machine runs (CUDA 12.1: needs driver ≥ 525.60.13, the target machine has 520.61.05)"
            ),
            "{}",
            c.reason
        );

        let pascal = Machine {
            driver: DriverVersion::parse("580.65.06"),
            driver_os: DriverOs::Linux,
            gpus: vec![ComputeCapability::new(6, 1)],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.11"), Some(&pascal)).unwrap();
        assert_eq!(c.spec.cuda.to_string(), "12.8");
        assert!(c.reason.contains("dropped sm_61"), "{}", c.reason);

        let none_fit = Machine {
            driver: DriverVersion::parse("400.1"),
            driver_os: DriverOs::Linux,
            gpus: vec![],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.4"), Some(&none_fit)).unwrap();
        assert_eq!(c.spec.cuda.to_string(), "12.1");
        assert!(
            c.reason
                .contains("none of them runs on this machine as it is"),
            "{}",
            c.reason
        );
        let target = Machine {
            whose: crate::machine::compat::Whose::Target,
            ..none_fit
        };
        let c = stack_for(&req("torch==2.4"), Some(&target)).unwrap();
        assert!(
            c.reason
                .contains("none of them runs on the target machine as it is"),
            "{}",
            c.reason
        );
    }
}
