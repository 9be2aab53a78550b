//! What TensorFlow and PyTorch releases need: the CUDA + cuDNN they were built
//! with, their Python range, and the driver that implies — and the stack
//! cudaenv picks for `--for FRAMEWORK==VERSION`.
//!
//! A release is matched by major.minor (`2.10`, `2.10.1` → the 2.10 row).
//! TensorFlow publishes one tested configuration per release and platform.
//! PyTorch publishes several builds; cudaenv picks the newest *stable* build
//! that runs on this machine (driver and GPU, when known), names the others,
//! and lets a local version tag (`torch==2.4+cu118`) choose one explicitly.
//!
//! This file holds the types and the wheel-metadata facts every framework
//! shares; `tensorflow` and `matrix` (PyTorch, JAX, CuPy: several builds per
//! release) weigh them against their tables, and `choice` picks the stack.

use crate::error::{Error, MachineError, Result};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::spec::{Libraries, Library, StackSpec, Version};

use super::Machine;
use super::data::{self, Bound, Channel, MetaRelease};
use super::driver::{self, DriverRequirement};
use super::metadata;

mod choice;
mod matrix;
mod tensorflow;

pub use choice::{StackChoice, stack_for, stack_for_on};

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
        let bad = |reason: &str| {
            Error::Machine(MachineError::InvalidFramework {
                input: input.escape_debug().to_string(),
                reason: reason.to_string(),
            })
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
    /// The CUDA of the build; for a range (`cuda_range`), its lowest.
    pub cuda: Version,
    /// The CUDA major.minor range a wheel's metadata allows (`≥ 12.1, < 13.0`),
    /// when it names a range rather than one release.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_opt_display"
    )]
    pub cuda_range: Option<Bound>,
    pub cudnn: Option<Version>,
    pub channel: Channel,
    /// The matrix states one cuDNN for several CUDA builds of the row.
    pub cudnn_shared: bool,
    /// `cudnn` is the oldest that works; any later one of that major does too.
    pub cudnn_minimum: bool,
    pub driver_linux: Option<DriverRequirement>,
    pub driver_windows: Option<DriverRequirement>,
    /// NCCL, cuSPARSELt, TensorRT a stack for this build carries (spec prefixes).
    #[serde(skip_serializing_if = "Libraries::is_empty")]
    pub libraries: Libraries,
    /// The requirements of the wheel's metadata this build was read from, as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
    /// The wheel whose metadata the build comes from (`None`: a hand-kept table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wheel: Option<String>,
    /// CUDA and cuDNN are the tested configuration, inside the wheel's wider range.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tested: bool,
}

fn ser_opt_display<S: serde::Serializer>(
    v: &Option<Bound>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(b) => s.collect_str(b),
        None => s.serialize_none(),
    }
}

impl Build {
    /// The stack spec for this build: CUDA major.minor + cuDNN major.minor
    /// (only the cuDNN major when the table gives a minimum: the newest then),
    /// and the libraries the wheel pins. A CUDA range asks for the newest CUDA
    /// it allows (`Bound::cuda_spec`).
    pub fn spec(&self) -> StackSpec {
        let digits = if self.cudnn_minimum { 1 } else { 2 };
        let cuda = self
            .cuda_range
            .as_ref()
            .and_then(Bound::cuda_spec)
            .unwrap_or_else(|| self.cuda.truncate(2));
        StackSpec {
            libs: self.libraries.clone(),
            ..StackSpec::new(cuda, self.cudnn.as_ref().map(|c| c.truncate(digits)))
        }
    }

    /// `spec`, with a CUDA range narrowed to the newest CUDA whose release
    /// driver `machine` has (what its driver fully supports), when that lies in
    /// the range.
    pub fn spec_on(&self, machine: Option<&Machine>) -> StackSpec {
        let mut spec = self.spec();
        if let (Some(range), Some(m)) = (&self.cuda_range, machine)
            && let Some(d) = &m.driver
            && let Some(max) = driver::max_cuda(d, m.driver_os)
            && range.allows(&max)
            && spec.cuda.minor().is_none_or(|_| max <= spec.cuda)
        {
            spec.cuda = max;
        }
        spec
    }

    /// Known only from a package's name: a wheel whose metadata pins nothing.
    pub fn name_only(&self) -> bool {
        self.wheel.is_some() && self.pins.is_empty()
    }

    /// `CUDA ≥ 12.1, < 13.0` or `CUDA 12.1`.
    pub fn cuda_text(&self) -> String {
        match &self.cuda_range {
            Some(r) => format!("CUDA {r}"),
            None => format!("CUDA {}", self.cuda),
        }
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
    /// Where each fact comes from: the wheel metadata, a hand-kept table, the CUDA tables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
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
        cuda_range: None,
        libraries: Libraries::default(),
        pins: Vec::new(),
        wheel: None,
        tested: false,
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

/// Where driver floors come from, for every requirement's `sources`.
const DRIVER_SOURCE: &str =
    "driver floors: CUDA release notes, Tables 2 and 3 (registry/compat/cuda_driver.toml)";

/// The build a release's wheel metadata describes: its CUDA (one release or a
/// range), cuDNN, and the NCCL / cuSPARSELt / TensorRT pins. A wheel that
/// names a CUDA major only (by its project's name) gets that major's range.
fn meta_build(r: &MetaRelease) -> Option<Build> {
    let (cuda, range) = match &r.cuda {
        Some(b) if b.eq.is_some() => (b.eq.clone()?, None),
        Some(b) => (
            match &b.ge {
                Some(g) => g.clone(),
                None => Version::from_parts(&[r.major?, 0]),
            },
            Some(b.clone()),
        ),
        None => {
            let m = r.major?;
            (
                Version::from_parts(&[m, 0]),
                Some(Bound {
                    ge: Some(Version::from_parts(&[m, 0])),
                    lt: Some(Version::from_parts(&[m + 1, 0])),
                    ..Bound::default()
                }),
            )
        }
    };
    let mut b = build(
        &cuda,
        r.cudnn.as_ref().and_then(Bound::floor),
        Channel::Stable,
        false,
    );
    b.cuda_range = range;
    b.cudnn_minimum = r.cudnn.as_ref().is_some_and(|c| c.eq.is_none());
    b.pins = r.cuda_from.clone();
    if let Some(from) = r.cudnn.as_ref().and_then(|c| c.from.clone()) {
        b.pins.push(from);
    }
    for (lib, bound) in r.libraries() {
        b.pins.extend(bound.from.clone());
        // TensorRT comes from its -libs wheels, 10 and later; an older pin
        // (TensorFlow 2.14's 8.5) is shown, not installed.
        let installable =
            lib != Library::Tensorrt || bound.floor().is_some_and(|v| v.major() >= 10);
        if let (true, Some(prefix)) = (installable, bound.spec_prefix()) {
            b.libraries.insert(lib, prefix);
        }
    }
    b.wheel = Some(r.wheel.clone());
    Some(b)
}

/// The Python a release can be installed on, from its wheels on PyPI
/// (`MetaRelease::python`), for a release whose hand-kept table says none;
/// adds where it comes from to `sources`.
fn wheel_python(r: &MetaRelease, sources: &mut Vec<String>) -> Option<String> {
    let python = r.python()?;
    sources.push(format!(
        "Python: Requires-Python and the wheel tags of {} {} on PyPI (registry/compat/frameworks.toml)",
        r.project, r.version
    ));
    Some(python)
}

/// `CUDA, cuDNN, NCCL: Requires-Dist (extra `and-cuda`) of tensorflow 2.14.0's wheel (…)`.
fn meta_source(r: &MetaRelease, b: &Build) -> String {
    if r.cuda.is_none() {
        return format!(
            "{}: the package's name, {} (its wheel's metadata names no NVIDIA wheel; registry/compat/frameworks.toml)",
            b.cuda_text(),
            r.project
        );
    }
    let mut what = vec![b.cuda_text()];
    if let Some(c) = &r.cudnn {
        what.push(format!("cuDNN {c}"));
    }
    for (lib, bound) in r.libraries() {
        what.push(format!("{} {bound}", lib.title()));
    }
    let extra = r
        .extra
        .as_ref()
        .map(|e| format!(" (extra `{e}`)"))
        .unwrap_or_default();
    format!(
        "{}: Requires-Dist{extra} of {} (registry/compat/frameworks.toml)",
        what.join(", "),
        r.wheel_named()
    )
}

/// Notes for pins that do not become part of the stack.
fn meta_notes(r: &MetaRelease, notes: &mut Vec<String>) {
    if let Some(t) = &r.tensorrt
        && t.floor().is_some_and(|v| v.major() < 10)
    {
        notes.push(format!(
            "{} pins TensorRT {t}{}: not part of the stack (cudaenv installs TensorRT 10 and later, from the tensorrt-cuNN-libs wheels); TF-TRT is optional",
            r.project,
            r.extra.as_ref().map(|e| format!(" in its `{e}` extra")).unwrap_or_default()
        ));
    }
}

/// The releases a framework's data knows, as major.minor (for the error's list).
fn known(framework: Framework, platform: &str) -> Vec<String> {
    let mut v: Vec<Version> = releases(framework, platform)
        .iter()
        .map(|v| v.truncate(2))
        .collect();
    if platform == "linux" {
        v.extend(
            metadata::releases(framework)
                .filter(|r| r.nvidia || framework == Framework::Cupy)
                .map(|r| r.version.truncate(2)),
        );
    }
    v.sort();
    v.dedup();
    v.reverse();
    v.iter().map(|v| v.to_string()).collect()
}

fn platform_name(platform: &str) -> &'static str {
    if platform == "windows" {
        "windows"
    } else {
        "linux"
    }
}

/// What `requirement` knows of the release asked for before it reads a
/// framework's table: the same for every framework.
struct Lookup<'a> {
    framework: Framework,
    version: &'a Version,
    platform: &'a str,
    /// `version` as major.minor, the key of most table rows.
    mm: Version,
    /// The release's wheels on PyPI (read on Linux only).
    meta: Vec<&'static MetaRelease>,
    /// The first of them whose metadata names a CUDA.
    pinned: Option<&'static MetaRelease>,
}

impl Lookup<'_> {
    /// The release is in no table and no wheel's metadata.
    fn unknown(&self) -> Error {
        Error::Machine(MachineError::UnknownFrameworkVersion {
            framework: self.framework.name().into(),
            version: self.version.to_string(),
            known: known(self.framework, self.platform),
        })
    }
}

/// The requirement of `framework` `version` on `platform` (`linux` or `windows`).
///
/// The wheels' own metadata (`metadata`, Linux x86_64) is read first for the
/// release asked for; the hand-kept tables add what it does not say (PyTorch's
/// other builds, TensorFlow's tested builds and Python ranges, CuPy's supported
/// toolkits) and answer alone where a wheel names no NVIDIA wheel.
pub fn requirement(framework: Framework, version: &Version, platform: &str) -> Result<Requirement> {
    let meta = if platform == "linux" {
        metadata::find(framework, version, None)
    } else {
        Vec::new()
    };
    let lookup = Lookup {
        framework,
        version,
        platform,
        mm: version.truncate(2),
        pinned: meta.iter().copied().find(|r| r.cuda.is_some()),
        meta,
    };
    match framework {
        Framework::Tensorflow => tensorflow::requirement(&lookup),
        Framework::Torch | Framework::Jax | Framework::Cupy => matrix::requirement(&lookup),
        Framework::CudaPython | Framework::NumbaCuda => {
            Err(Error::Machine(MachineError::UnknownFrameworkVersion {
                framework: framework.name().into(),
                version: version.to_string(),
                known: vec![format!(
                    "none: cudaenv has no table for {framework} (doctor still detects its CUDA wheels)"
                )],
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
