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
use crate::spec::{Libraries, Library, StackSpec, Version};

use super::Machine;
use super::arch::{self, ArchSupport};
use super::data::{self, Bound, Channel, MetaRelease};
use super::driver::{self, DriverFit, DriverRequirement};
use super::metadata;

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

/// The requirement of `framework` `version` on `platform` (`linux` or `windows`).
///
/// The wheels' own metadata (`metadata`, Linux x86_64) is read first for the
/// release asked for; the hand-kept tables add what it does not say (PyTorch's
/// other builds, TensorFlow's tested builds and Python ranges, CuPy's supported
/// toolkits) and answer alone where a wheel names no NVIDIA wheel.
pub fn requirement(framework: Framework, version: &Version, platform: &str) -> Result<Requirement> {
    let mm = version.truncate(2);
    let unknown = || Error::UnknownFrameworkVersion {
        framework: framework.name().into(),
        version: version.to_string(),
        known: known(framework, platform),
    };
    let meta = if platform == "linux" {
        metadata::find(framework, version, None)
    } else {
        Vec::new()
    };
    let pinned = meta.iter().copied().find(|r| r.cuda.is_some());
    match framework {
        Framework::Tensorflow => {
            let tested = data::tensorflow()
                .build
                .iter()
                .find(|b| b.platform == platform && b.version.truncate(2) == mm);
            let mut notes = Vec::new();
            let mut sources = Vec::new();
            let (version, package, python, b) = match (
                pinned.and_then(|r| Some((r, meta_build(r)?))),
                tested,
            ) {
                (Some((r, mut b)), t) => {
                    sources.push(meta_source(r, &b));
                    meta_notes(r, &mut notes);
                    // A range (2.20 on: `>=12.5.82, <13.0`) that holds the tested
                    // configuration gets it: the metadata says what may work, the
                    // table what was tested.
                    if let (Some(range), Some(t)) = (b.cuda_range.clone(), t)
                        && range.allows(&t.cuda)
                        && r.cudnn.as_ref().is_none_or(|c| c.allows(&t.cudnn))
                    {
                        notes.push(format!(
                            "{} {} allows CUDA {range}{}; the stack is its tested configuration, CUDA {} + cuDNN {}",
                            r.project,
                            r.version,
                            r.cudnn.as_ref().map(|c| format!(" + cuDNN {c}")).unwrap_or_default(),
                            t.cuda,
                            t.cudnn
                        ));
                        let tested = build(&t.cuda, Some(&t.cudnn), Channel::Stable, false);
                        b = Build {
                            libraries: b.libraries,
                            pins: b.pins,
                            wheel: b.wheel,
                            tested: true,
                            ..tested
                        };
                    }
                    if let Some(t) = t {
                        let what = if b.wheel.is_some()
                            && b.cuda_range.is_none()
                            && r.cuda.as_ref().is_some_and(|c| c.eq.is_none())
                        {
                            "the stack's CUDA and cuDNN, Python"
                        } else {
                            "Python"
                        };
                        sources.push(format!("{what}: TensorFlow's tested build configurations (registry/compat/tensorflow.toml)"));
                        if t.cuda.truncate(2) != b.cuda.truncate(2)
                            || b.cudnn.as_ref().map(|c| c.truncate(2)) != Some(t.cudnn.truncate(2))
                        {
                            notes.push(format!(
                                "TensorFlow's tested build configurations list CUDA {} + cuDNN {} for {}",
                                t.cuda, t.cudnn, t.version
                            ));
                        }
                    }
                    let python = t
                        .map(|t| t.python.join(", "))
                        .unwrap_or_else(|| "unknown".into());
                    (r.version.clone(), r.project.clone(), python, b)
                }
                (None, Some(t)) => {
                    sources.push("CUDA, cuDNN, Python: TensorFlow's tested build configurations (registry/compat/tensorflow.toml)".into());
                    if let Some(r) = meta.first() {
                        sources.push(format!(
                            "{} names no NVIDIA wheel in its metadata",
                            r.wheel_named()
                        ));
                    }
                    (
                        t.version.clone(),
                        t.package.clone(),
                        t.python.join(", "),
                        build(&t.cuda, Some(&t.cudnn), Channel::Stable, false),
                    )
                }
                (None, None) => {
                    return Err(no_native_windows_gpu(platform, version).unwrap_or_else(unknown));
                }
            };
            if platform == "linux" && mm >= Version::from_parts(&[2, 14]) {
                notes.push(format!(
                    "`pip install tensorflow[and-cuda]=={}` brings these as NVIDIA wheels; a cudaenv stack serves plain `tensorflow`",
                    mm
                ));
            }
            sources.push(DRIVER_SOURCE.into());
            Ok(Requirement {
                framework,
                version,
                package,
                platform: platform_name(platform),
                python,
                builds: vec![b],
                confirmed: true,
                notes,
                sources,
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
            let row = table.release.iter().find(|r| r.version.truncate(2) == key);
            let mut notes = Vec::new();
            let mut sources = Vec::new();
            let table_name = match framework {
                Framework::Jax => "the JAX installation guide (registry/compat/jax.toml)",
                Framework::Cupy => "CuPy's installation guide (registry/compat/cupy.toml)",
                _ => "PyTorch's RELEASE.md matrix (registry/compat/pytorch.toml)",
            };
            let from_table = |r: &data::TorchRelease| -> Vec<Build> {
                r.build
                    .iter()
                    .map(|b| Build {
                        cudnn_minimum: b.cudnn_minimum,
                        ..build(&b.cuda, b.cudnn.as_ref(), b.channel, b.cudnn_shared)
                    })
                    .collect()
            };
            // JAX: the plugins' metadata says it all where there is some.
            // torch: the PyPI wheel's pins are one build of the matrix row.
            // CuPy: the guide's toolkits, where it has a row for the major release.
            let use_table = match framework {
                Framework::Jax => meta.is_empty(),
                Framework::Cupy => row.is_some(),
                _ => true,
            };
            let mut builds = match (use_table, row) {
                (true, Some(r)) => from_table(r),
                _ => Vec::new(),
            };
            if framework == Framework::Cupy && use_table && !meta.is_empty() {
                // Only the CUDA majors this release has packages for.
                builds.retain(|b| meta.iter().any(|r| r.major == Some(b.cuda.major())));
            }
            let mut table_source = None;
            if use_table && let Some(r) = row {
                table_source = Some(match framework {
                    Framework::Torch if pinned.is_some() => {
                        format!("the other builds, Python: {table_name}")
                    }
                    _ => format!("CUDA, cuDNN, Python: {table_name}"),
                });
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
            }
            let from_meta: Vec<&MetaRelease> = match framework {
                Framework::Torch => pinned.into_iter().collect(),
                // A package the guide's row has no toolkit for (cupy-cuda13x 13.6).
                Framework::Cupy if use_table => meta
                    .iter()
                    .copied()
                    .filter(|r| !builds.iter().any(|b| Some(b.cuda.major()) == r.major))
                    .collect(),
                _ if use_table => Vec::new(),
                _ => meta.clone(),
            };
            for r in from_meta {
                let Some(mb) = meta_build(r) else { continue };
                sources.push(meta_source(r, &mb));
                meta_notes(r, &mut notes);
                if r.cuda.is_none() {
                    notes.push(format!(
                        "{} {}'s metadata names no NVIDIA wheel: cudaenv knows its CUDA major from the package's name, not which minor or cuDNN it needs",
                        r.project, r.version
                    ));
                }
                match builds
                    .iter_mut()
                    .find(|b| b.cuda.truncate(2) == mb.cuda.truncate(2))
                {
                    Some(b) => {
                        // `pip install torch` gets this build: stable, whatever the matrix says.
                        if b.channel == Channel::Experimental {
                            b.channel = Channel::Stable;
                            notes.push(format!(
                                "the CUDA {} build is the one on PyPI (`pip install {}=={}`), so it counts as stable here; RELEASE.md calls it experimental",
                                b.cuda, r.project, r.version
                            ));
                        }
                        b.cudnn = mb.cudnn;
                        b.cudnn_shared = false;
                        b.cudnn_minimum = mb.cudnn_minimum;
                        b.libraries = mb.libraries;
                        b.pins = mb.pins;
                        b.wheel = mb.wheel;
                    }
                    None => builds.push(mb),
                }
            }
            sources.extend(table_source);
            if framework == Framework::Cupy && use_table && !meta.is_empty() {
                let names: Vec<String> = meta
                    .iter()
                    .map(|r| format!("{} {}", r.project, r.version))
                    .collect();
                sources.push(format!(
                    "release and packages: {} on PyPI (registry/compat/frameworks.toml)",
                    names.join(", ")
                ));
                for r in meta
                    .iter()
                    .filter(|r| r.extra.is_some() && r.cuda.is_some())
                {
                    notes.push(format!(
                        "`pip install {}[{}]=={}` brings CUDA {} as NVIDIA wheels (cuda-toolkit); without it, CuPy uses the stack",
                        r.project,
                        r.extra.as_deref().unwrap_or_default(),
                        r.version,
                        r.cuda.as_ref().map(|c| c.to_string()).unwrap_or_default()
                    ));
                }
            }
            if framework == Framework::Jax && !meta.is_empty() {
                for r in &meta {
                    let m = r.major.unwrap_or(0);
                    notes.push(format!(
                        "`jax[cuda{m}-local]=={}` uses the stack; `jax[cuda{m}]` brings NVIDIA wheels",
                        r.version
                    ));
                }
            }
            if builds.is_empty() {
                return Err(unknown());
            }
            // Stable first, then newest CUDA first: the order `stack_for` prefers;
            // a build known only by its package's name (cupy-cuda13x 13.6) comes
            // after the ones a source states, so only its package name picks it.
            builds.sort_by(|a, b| {
                (b.channel, !b.name_only(), &b.cuda).cmp(&(a.channel, !a.name_only(), &a.cuda))
            });
            sources.push(DRIVER_SOURCE.into());
            let from_wheel = match framework {
                Framework::Torch => pinned,
                _ if use_table => None,
                _ => meta.first().copied(),
            };
            let version = match (from_wheel, framework, meta.first(), row) {
                (Some(r), _, _, _) => r.version.clone(),
                (None, Framework::Cupy, Some(r), _) => r.version.clone(),
                (None, _, _, Some(r)) => r.version.clone(),
                _ => version.clone(),
            };
            Ok(Requirement {
                framework,
                version,
                package: package.into(),
                platform: platform_name(platform),
                python: row
                    .filter(|_| use_table || framework == Framework::Torch)
                    .and_then(|r| r.python.clone())
                    .unwrap_or_else(|| "unknown".into()),
                builds,
                confirmed: match (row, from_wheel) {
                    (Some(r), _) if use_table => r.confirmed,
                    _ => true,
                },
                notes,
                sources,
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
    // What `--for` picks under WSL2: the Linux requirement's build.
    let linux_spec = requirement(Framework::Tensorflow, version, "linux")
        .ok()
        .and_then(|r| r.builds.first().map(|b| b.spec().to_string()));
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
    // A release read from its wheel is named exactly; a table row by major.minor.
    let from_wheel = requirement.builds.iter().any(|b| b.wheel.is_some());
    let shown = if from_wheel {
        requirement.version.clone()
    } else {
        requirement.version.truncate(2)
    };
    let name = format!("{} {shown}", req.framework);
    let describe = |b: &Build| {
        let mut d = match &b.cudnn {
            Some(c) if b.cudnn_minimum => format!("{} + cuDNN ≥ {c}", b.cuda_text()),
            Some(c) => format!("{} + cuDNN {c}", b.cuda_text()),
            None => b.cuda_text(),
        };
        for (lib, v) in b.libraries.iter() {
            d.push_str(&format!(" + {} {}", lib.title(), prefix_text(v)));
        }
        d
    };

    if let Some(tag) = &req.cuda_tag {
        let major_only = tag.minor().is_none();
        let i = requirement
            .builds
            .iter()
            .position(|b| {
                if major_only {
                    b.cuda.major() == tag.major()
                } else if let Some(r) = &b.cuda_range {
                    r.allows(tag)
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
        let mut spec = b.spec_on(machine);
        if b.cuda_range.is_some() && !major_only {
            spec.cuda = tag.clone();
        }
        return Ok(StackChoice {
            spec,
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
        let what = match (&b.wheel, &b.cuda_range) {
            _ if b.tested => "was tested with",
            (Some(_), Some(_)) => "asks for",
            (Some(_), None) => "pins",
            (None, _) if req.framework == Framework::Tensorflow => "was tested with",
            (None, _) => "is built for",
        };
        let spec = b.spec_on(machine);
        let mut reason = if b.tested {
            // The table tested CUDA and cuDNN; the libraries are the wheel's word.
            let bare = Build {
                libraries: Libraries::default(),
                ..b.clone()
            };
            let mut r = format!("{name} {what} {}", describe(&bare));
            let libs: Vec<String> = b
                .libraries
                .iter()
                .map(|(l, v)| format!("{} {}", l.title(), prefix_text(v)))
                .collect();
            if !libs.is_empty() {
                r.push_str(&format!("; its wheel asks for {}", libs.join(" + ")));
            }
            r
        } else {
            format!("{name} {what} {}", describe(b))
        };
        if b.cuda_range.is_some() {
            reason.push_str(&range_pick(&spec, machine));
        }
        return Ok(StackChoice {
            spec,
            reason,
            build: 0,
            requirement,
        });
    }

    let stable: Vec<usize> = (0..requirement.builds.len())
        .filter(|&i| requirement.builds[i].channel == Channel::Stable)
        .collect();
    let listed = |idx: &[usize]| {
        let mut v: Vec<&Build> = idx.iter().map(|&i| &requirement.builds[i]).collect();
        v.sort_by(|a, b| a.cuda.cmp(&b.cuda));
        v.iter()
            .map(|b| match &b.cuda_range {
                Some(r) => r.to_string(),
                None => b.cuda.to_string(),
            })
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
    let spec = b.spec_on(machine);
    if b.cuda_range.is_some() {
        reason.push_str(&range_pick(&spec, machine));
    }
    if let Some(c) = &b.cudnn {
        let at_least = if b.cudnn_minimum { "≥ " } else { "" };
        reason.push_str(&format!(", with cuDNN {at_least}{c}"));
    }
    for (lib, v) in b.libraries.iter() {
        reason.push_str(&format!(", {} {}", lib.title(), prefix_text(v)));
    }
    if requirement.builds.len() > 1 {
        reason.push_str(&format!(
            "; name another with `{}=={shown}+cuXY`",
            req.framework,
        ));
    }
    Ok(StackChoice {
        spec,
        reason,
        build: i,
        requirement,
    })
}

/// A spec prefix as people read it: `2.20`, or `2.x` for a major (its newest).
fn prefix_text(v: &Version) -> String {
    if v.parts().len() == 1 {
        format!("{v}.x")
    } else {
        v.to_string()
    }
}

/// How a CUDA range became one stack: the newest CUDA the driver fully
/// supports, or the newest of the range (as pip picks the newest wheels).
fn range_pick(spec: &StackSpec, machine: Option<&Machine>) -> String {
    match (
        spec.cuda.minor(),
        machine.and_then(|m| m.driver.as_ref().map(|d| (m, d))),
    ) {
        (Some(_), Some((m, d)))
            if driver::max_cuda(d, m.driver_os).as_ref() == Some(&spec.cuda) =>
        {
            format!(
                " ({}, the newest CUDA {}'s driver {d} fully supports)",
                spec.cuda,
                m.name()
            )
        }
        (Some(_), _) => format!(" ({}, the newest the range allows)", spec.cuda),
        (None, _) => format!(
            " ({}: the newest CUDA {}.x, as pip would pick)",
            spec.cuda, spec.cuda
        ),
    }
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
        // The PyPI wheel of torch 2.4.1 (the CUDA 12.1 build) pins NCCL 2.20.5.
        let c = stack_for(&req("torch==2.4"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.1+cudnn9.1+nccl2.20");
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
        // JAX from its plugins' metadata: ranges, so the newest CUDA of the
        // major unless the machine's driver says less, or a tag names one.
        let c = stack_for(&req("jax==0.11"), None).unwrap();
        assert_eq!(c.spec.to_string(), "13+cudnn9+nccl2");
        let c = stack_for(&req("jax==0.11.2+cu126"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.6+cudnn9+nccl2");
        assert!(
            stack_for(&req("jax==0.11.2+cu123"), None).is_err(),
            "its nvcc pin asks for CUDA >= 12.6"
        );
        let c = stack_for(&req("jax==0.4.30"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12+cudnn9+nccl2");
        assert!(
            c.reason
                .starts_with("jax 0.4.30 asks for CUDA ≥ 12.1, < 13.0 + cuDNN ≥ 9.0 + NCCL 2.x"),
            "{}",
            c.reason
        );
        let m = Machine {
            driver: DriverVersion::parse("550.54.15"),
            driver_os: DriverOs::Linux,
            ..Default::default()
        };
        let c = stack_for(&req("jax==0.4.30"), Some(&m)).unwrap();
        assert_eq!(c.spec.to_string(), "12.4+cudnn9+nccl2");
        assert!(
            c.reason.contains("driver 550.54.15 fully supports"),
            "{}",
            c.reason
        );
        // cuBLAS `<12.9` in jax 0.6.1's metadata caps the stack at 12.8.
        let c = stack_for(&req("jax==0.6.1"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.8+cudnn9+nccl2");
        // Before 0.4.30 the plugin pins only jax-cuda12-pjrt: CUDA 12, nothing more.
        let c = stack_for(&req("jax==0.4.26"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12");
        assert!(
            c.requirement
                .notes
                .iter()
                .any(|n| n.contains("names no NVIDIA wheel"))
        );
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
        assert!(
            stack_for(&req("jax==0.4.20"), None).is_err(),
            "no plugin on PyPI"
        );
        // An old CuPy: known from PyPI, its CUDA major from the package's name.
        // cupy-cuda13x 13.6.0 is on PyPI though CuPy 13's guide row stops at
        // 12.4: its package's name gives the major, and only the name picks it.
        let c = stack_for(&req("cupy-cuda13x==13.6.0"), None).unwrap();
        assert_eq!(c.spec.to_string(), "13");
        let c = stack_for(&req("cupy-cuda11x==12.0.0"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11");
        assert_eq!(c.requirement.version.to_string(), "12.0.0");
        assert!("numba-cuda==0.30".parse::<FrameworkReq>().is_err());
    }

    /// Every TensorFlow row, on both platforms, maps to exactly its CUDA + cuDNN.
    #[test]
    fn every_tensorflow_row() {
        for b in &data::tensorflow().build {
            let r = requirement(Framework::Tensorflow, &b.version, &b.platform).unwrap();
            assert_eq!(r.builds.len(), 1);
            // From 2.14 on Linux the wheel's `and-cuda` pins answer; they agree
            // with the tested configuration at major.minor, for every release.
            let from_wheel = r.builds[0].wheel.is_some();
            assert_eq!(
                from_wheel,
                b.platform == "linux" && b.version >= "2.14".parse().unwrap(),
                "{}",
                b.version
            );
            assert_eq!(
                r.builds[0].cuda.truncate(2),
                b.cuda.truncate(2),
                "{}",
                b.version
            );
            assert_eq!(
                r.builds[0].cudnn.as_ref().map(|c| c.truncate(2)),
                Some(b.cudnn.truncate(2)),
                "{}",
                b.version
            );
            assert!(
                !r.notes
                    .iter()
                    .any(|n| n.contains("tested build configurations list")),
                "{}",
                b.version
            );
            assert_eq!(r.package, b.package);
            assert!(r.builds[0].driver_linux.is_some(), "{}", b.version);
            if b.platform == "linux" {
                let c = stack_for(
                    &FrameworkReq::new(Framework::Tensorflow, Some(b.version.clone())),
                    None,
                )
                .unwrap();
                assert_eq!(
                    StackSpec::new(c.spec.cuda.clone(), c.spec.cudnn.clone()),
                    StackSpec::new(b.cuda.truncate(2), Some(b.cudnn.truncate(2)))
                );
                // The wheel's NCCL pin comes along.
                assert_eq!(
                    c.spec.libs.get(Library::Nccl).is_some(),
                    from_wheel,
                    "{}",
                    b.version
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
            // The PyPI wheel's build counts as stable (`pip install torch` gets it).
            let wheel = metadata::find(Framework::Torch, &r.version, None)
                .into_iter()
                .find_map(|m| m.cuda.as_ref().and_then(|c| c.eq.clone()).map(|c| (m, c)));
            let newest = r
                .build
                .iter()
                .filter(|b| {
                    b.channel == Channel::Stable
                        || wheel
                            .as_ref()
                            .is_some_and(|(_, c)| *c == b.cuda.truncate(2))
                })
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
                // The wheel's own pins win for its build, NCCL included.
                match wheel.as_ref().filter(|(_, c)| *c == b.cuda.truncate(2)) {
                    Some((m, _)) => {
                        let pin = m.cudnn.as_ref().and_then(|c| c.eq.as_ref()).unwrap();
                        assert_eq!(c.spec.cudnn, Some(pin.truncate(2)), "{}", r.version);
                        assert_eq!(
                            c.spec.libs.get(Library::Nccl),
                            m.nccl.as_ref().and_then(Bound::spec_prefix).as_ref(),
                            "{}",
                            r.version
                        );
                        assert_eq!(c.requirement.builds[c.build].wheel.as_ref(), Some(&m.wheel));
                    }
                    None => {
                        assert_eq!(c.spec.cudnn, b.cudnn.as_ref().map(|c| c.truncate(2)));
                        assert!(c.spec.libs.is_empty(), "{} {}", r.version, b.cuda);
                    }
                }
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
