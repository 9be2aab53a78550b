//! `cudaenv verify`: prove on the GPU that a CUDA stack works.
//!
//! Design. The checks run in a child process — the cudaenv binary itself,
//! re-executed with the hidden `__verify-child` subcommand — whose environment
//! is exactly what `cudaenv exec` would give a program: the caller's
//! environment with the version's activation applied. The child loads the
//! libraries by soname, as frameworks do (`ffi`), so the dynamic loader makes
//! the same choices it would make for PyTorch, and reports what it found and
//! measured as JSON (`Probe`) on stdout; what it learned of the driver is
//! the host gatherer's `machine::facts::driver::Probe`, which verify writes
//! in its own shape (`DriverJson`). Doing this in a child has two more
//! reasons: the parent's own environment cannot influence what gets loaded,
//! and a library that crashes (it happens, with mismatched drivers) takes down
//! only the child, which the parent then reports with the stage it died in.
//!
//! The parent turns the facts into problems (`diagnose`): each is stated as
//! a `MachineError` with the values a user needs, a hint and a distinct exit
//! code, decided from the live results first and explained with the
//! compatibility tables (`crate::machine::compat`, shared with `doctor` and
//! the install guard), and reported as a `Finding` (`finding`); the first
//! one's exit code is the verdict (`exit_code`). `render` prints the human
//! report and `machine::finding::render` the problems after it (`LAYOUT`);
//! `--json` prints `Verification`, which carries the same facts and findings.
//!
//! Modules: `ffi` (dlopen'd tables of entry points), `probe` (the child),
//! `libraries` (the NCCL and TensorRT checks), `tensorrt` (TensorRT's
//! builder and engine, called through its C++ vtables),
//! `gemm` and `conv` (host-side data, references, error bounds, CPU GEMM),
//! `diagnose`, `render`.

pub(crate) mod diagnose;
pub(crate) mod ffi;
pub(crate) mod gemm;
pub(crate) mod libraries;
pub(crate) mod probe;
pub(crate) mod render;
pub(crate) mod tensorrt;

mod conv;

use crate::error::{Diagnostic, Error, ExitCode, MachineError, Result};
use std::ffi::OsString;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::i18n::Msg;
use crate::machine::facts::driver;
use crate::machine::finding::{Field, Finding, Layout, Level, Shape, Value};
use crate::spec::Version;

/// The name of the hidden subcommand that runs the checks.
pub const CHILD_COMMAND: &str = "__verify-child";

/// Matrix element types a GEMM check can run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Fp64,
}

impl Dtype {
    pub const ALL: [Dtype; 5] = [
        Dtype::Fp32,
        Dtype::Tf32,
        Dtype::Fp16,
        Dtype::Bf16,
        Dtype::Fp64,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Tf32 => "tf32",
            Dtype::Fp16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::Fp64 => "fp64",
        }
    }

    /// The oldest compute capability (×10) whose tensor or CUDA cores run it
    /// through `cublasGemmEx`.
    pub fn min_cc(self) -> u32 {
        match self {
            Dtype::Fp32 | Dtype::Fp64 => 0,
            Dtype::Fp16 => 53,
            Dtype::Tf32 | Dtype::Bf16 => 80,
        }
    }

    /// What runs when no `--dtype` is given: everything the GPU supports,
    /// except fp64 (slow on most GPUs, and rarely what a stack is used for).
    pub fn defaults_for(cc: u32) -> Vec<Dtype> {
        [Dtype::Fp32, Dtype::Tf32, Dtype::Fp16, Dtype::Bf16]
            .into_iter()
            .filter(|d| cc >= d.min_cc())
            .collect()
    }

    /// The largest acceptable error, as measured by `gemm::element_error`:
    /// |c - ref| / (|ref| + sqrt(sum_k (a_k b_k)^2)).
    ///
    /// Expected errors (random data, fp32 accumulation): fp64 ~1e-16, fp32
    /// ~1e-6, tf32 (10-bit inputs) ~5e-4, fp16 output rounding <= 4.9e-4,
    /// bf16 output rounding <= 3.9e-3. A wrong result is of order 1. Each bound
    /// sits well above the expected error and far below garbage.
    pub fn bound(self) -> f64 {
        match self {
            Dtype::Fp64 => 1e-12,
            Dtype::Fp32 => 1e-4,
            Dtype::Tf32 => 1e-2,
            Dtype::Fp16 => 1e-2,
            Dtype::Bf16 => 3e-2,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dtype {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown dtype `{s}` (expected fp32, tf32, fp16, bf16 or fp64)"))
    }
}

/// Which GPUs to run the GEMM and convolution checks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Devices {
    Index(u32),
    All,
}

impl FromStr for Devices {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(Devices::All);
        }
        s.parse::<u32>()
            .map(Devices::Index)
            .map_err(|_| format!("`{s}` is not a GPU index or `all`"))
    }
}

/// What the version under test claims to be, for judging what was loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    /// The version's name (`system` for no version).
    pub name: String,
    pub cuda: Option<Version>,
    pub cudnn: Option<Version>,
    /// NCCL, TensorRT, … it carries: their checks run when it does.
    #[serde(default)]
    pub libs: crate::spec::Libraries,
    /// Directories that belong to the version; a library loaded from anywhere
    /// else is flagged. Empty for `system`, where nothing can be judged.
    pub dirs: Vec<PathBuf>,
}

/// What the parent asks the child to do (passed as one JSON argument).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// `None`: the defaults for each GPU (`Dtype::defaults_for`).
    pub dtypes: Option<Vec<Dtype>>,
    pub size: usize,
    pub devices: Devices,
    pub expected: Expected,
}

/// 6144³ keeps a default run under 3 s on an H200 while each GEMM is long
/// enough (0.6–9 ms) for cuBLAS to reach the throughput of 8192³ (docs/verify.md).
pub const DEFAULT_SIZE: usize = 6144;
pub const MIN_SIZE: usize = 64;
pub const MAX_SIZE: usize = 32768;

pub use crate::machine::facts::driver::ApiError;

/// The driver as verify's JSON writes it (`driver`): `library`,
/// `load_error` (a library lacking a function of the table is one that
/// cannot be used), `version`, `cuda`, `init_error` with its call and code,
/// `gpus_present`. The GPUs are the report's `devices`, so the probe's own
/// list stays empty in verify and is not written.
#[derive(Serialize, Deserialize)]
struct DriverJson {
    /// The file `libcuda.so.1` resolved to.
    library: Option<PathBuf>,
    load_error: Option<String>,
    version: Option<String>,
    /// The newest CUDA this driver supports (`cuDriverGetVersion`).
    cuda: Option<Version>,
    init_error: Option<ApiError>,
    gpus_present: Option<u32>,
}

impl DriverJson {
    fn of(p: &driver::Probe) -> DriverJson {
        DriverJson {
            library: p.path.as_ref().map(PathBuf::from),
            load_error: p.unusable().map(str::to_string),
            version: p.version.clone(),
            cuda: p.driver_api.map(probe::api_version),
            init_error: p.init_error.clone(),
            gpus_present: p.gpus_present,
        }
    }

    /// The probe back, as `of` read it: a library that loaded and is still
    /// unusable lacks a function.
    fn probe(self) -> driver::Probe {
        let loaded = self.library.is_some();
        let (load_error, incomplete) = if loaded {
            (None, self.load_error)
        } else {
            (self.load_error, None)
        };
        driver::Probe {
            loaded,
            path: self.library.map(|l| l.display().to_string()),
            load_error,
            incomplete,
            driver_api: self
                .cuda
                .map(|c| (c.major() * 1000 + c.minor().unwrap_or(0) * 10) as i32),
            init_error: self.init_error,
            gpus: Vec::new(),
            version: self.version,
            gpus_present: self.gpus_present,
        }
    }
}

/// `Probe::driver` through `DriverJson`.
mod driver_json {
    use super::{DriverJson, driver};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(p: &driver::Probe, s: S) -> Result<S::Ok, S::Error> {
        DriverJson::of(p).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<driver::Probe, D::Error> {
        DriverJson::deserialize(d).map(DriverJson::probe)
    }
}

/// The CUDA runtime's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuntimeFacts {
    /// `cudaRuntimeGetVersion`.
    pub version: Option<Version>,
    /// `cudaGetDeviceCount`, when it succeeded.
    pub device_count: Option<u32>,
    pub error: Option<ApiError>,
}

/// Where a library came from, relative to the version under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// From one of the version's directories.
    Version,
    /// From somewhere else: shadowing, or the version lacks it.
    Outside,
    /// No version directories to judge by (`system`).
    Unjudged,
}

/// One library loaded by soname.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryFacts {
    /// `cudart`, `cublas`, `cublasLt` or `cudnn`.
    pub name: String,
    /// The sonames tried, in order.
    pub tried: Vec<String>,
    /// The soname that loaded.
    pub soname: Option<String>,
    /// The file, with symlinks resolved.
    pub path: Option<PathBuf>,
    pub origin: Option<Origin>,
    /// The version the library reports about itself.
    pub version: Option<String>,
    /// Why none of the sonames loaded (one line per attempt).
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    pub index: u32,
    pub name: String,
    /// Compute capability ×10 (`90` for 9.0).
    pub cc: u32,
    pub memory_bytes: u64,
    pub multiprocessors: u32,
}

impl DeviceFacts {
    pub fn cc_string(&self) -> String {
        format!("{}.{}", self.cc / 10, self.cc % 10)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    WrongResult,
    Error,
    Skipped,
}

/// One GEMM check: correctness, then throughput.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GemmResult {
    pub device: u32,
    pub dtype: Dtype,
    /// m = n = k.
    pub size: usize,
    pub outcome: Outcome,
    /// Largest error over the sampled elements (`None` if any was NaN/inf).
    pub max_error: Option<f64>,
    /// Largest error over the column checksums.
    pub checksum_error: Option<f64>,
    pub bound: f64,
    pub samples: usize,
    /// A result element was NaN or infinite.
    pub non_finite: bool,
    pub tflops: Option<f64>,
    pub median_ms: Option<f64>,
    pub repeats: u32,
    pub error: Option<ApiError>,
    pub note: Option<String>,
}

/// The cuDNN convolution check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvResult {
    pub device: u32,
    pub outcome: Outcome,
    /// `NCHW` input, `KCRS` filter, e.g. `4x16x16x16 * 32x16x3x3`.
    pub shape: String,
    pub algo: Option<i32>,
    pub max_error: Option<f64>,
    pub bound: f64,
    pub error: Option<ApiError>,
    pub note: Option<String>,
}

/// The CPU GEMM, for the speed-up figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuGemm {
    pub size: usize,
    pub threads: usize,
    /// The instruction set the kernel ran with (`avx2+fma` or `baseline`).
    pub isa: String,
    pub gflops: f64,
    pub median_ms: f64,
}

/// Everything the child found and measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// What libcuda said (with NVML's version and GPU count), as every
    /// driver probe records it; written as `DriverJson`.
    #[serde(with = "driver_json")]
    pub driver: driver::Probe,
    pub runtime: RuntimeFacts,
    pub libraries: Vec<LibraryFacts>,
    pub devices: Vec<DeviceFacts>,
    pub gemm: Vec<GemmResult>,
    pub cudnn_conv: Vec<ConvResult>,
    /// NCCL's version and all-reduce, when the version carries NCCL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl: Option<libraries::NcclResult>,
    /// TensorRT's version and builder, when the version carries TensorRT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensorrt: Option<libraries::TensorrtResult>,
    pub cpu_gemm: Option<CpuGemm>,
    /// `--device K` named a GPU that is not there.
    pub missing_device: Option<u32>,
    /// The value of CUDA_VISIBLE_DEVICES the child ran with.
    pub cuda_visible_devices: Option<String>,
    /// Seconds the child spent.
    pub seconds: f64,
    /// Where those seconds went, stage by stage.
    #[serde(default)]
    pub timings: Vec<Timing>,
}

/// One stage of the child's work and its duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub stage: String,
    pub seconds: f64,
}

impl Probe {
    pub fn library(&self, name: &str) -> Option<&LibraryFacts> {
        self.libraries.iter().find(|l| l.name == name)
    }
}

/// How `verify --json` writes a problem: `kind`, `exit_code`, `message`, `hint`.
const PROBLEM_JSON: Shape = Shape(&[
    Field::Code("kind"),
    Field::Detail("exit_code"),
    Field::Message("message"),
    Field::FirstFixOrNull("hint"),
]);

/// A problem verify found (or the stop of its child) as a finding: its
/// kind, exit code, message and hint (in the user's language when shown).
pub fn finding(e: &MachineError) -> Finding {
    let f = Finding::new(Level::Error, e.kind(), Msg::verbatim(e.to_string())).detail(
        "exit_code",
        None,
        Value::Number(e.exit_code().code().into()),
    );
    match e.hint_msg() {
        Some(h) => f.fix(h),
        None => f,
    }
}

/// The verdict on the problems, most fundamental first: the first one's
/// exit code, success without any.
pub fn exit_code(problems: &[Finding]) -> ExitCode {
    let Some(first) = problems.first() else {
        return ExitCode::Success;
    };
    match first.get("exit_code") {
        Some(&Value::Number(n)) => u8::try_from(n)
            .ok()
            .and_then(ExitCode::from_code)
            .unwrap_or(ExitCode::Failure),
        _ => ExitCode::Failure,
    }
}

/// How the text shows the problems (on stderr, after the report).
pub const LAYOUT: Layout = Layout::Hints;

fn problems_json<S: serde::Serializer>(
    p: &[Finding],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::machine::finding::serialize_all(p, &PROBLEM_JSON, s)
}

/// The whole result: what `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    pub version: String,
    /// What selected it (`the command line`, a `.cuda-version` path, …).
    pub selected_by: String,
    pub cuda: Option<Version>,
    pub cudnn: Option<Version>,
    pub size: usize,
    #[serde(flatten)]
    pub probe: Probe,
    #[serde(serialize_with = "problems_json")]
    pub problems: Vec<Finding>,
    pub warnings: Vec<String>,
    pub passed: bool,
    pub exit_code: u8,
    pub wall_seconds: f64,
}

/// How long the checks may take by default: a default run takes seconds and
/// the largest `--size` GEMMs well under a minute on current GPUs, so this only
/// ever stops a hang.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// What the child left behind: its facts — complete, or as far as it got —
/// and, when it did not finish, why (`MachineError::VerifyTimedOut`,
/// `MachineError::VerifyCrashed`).
#[derive(Debug)]
pub struct ChildReport {
    pub probe: Probe,
    pub stopped: Option<MachineError>,
}

/// Runs the child with `env` as its whole environment and returns its facts
/// (through the child protocol doctor's driver probe uses too,
/// `machine::facts::child`).
///
/// The child streams what it has learned (`probe::FACTS_PREFIX` lines on
/// stderr) as it goes; `on_facts` sees each snapshot as it arrives, so the
/// caller can say what the facts already show (a GPU newer than the stack)
/// before the slow part, and the last snapshot survives a crash or a
/// timeout. A child that dies (a library crashed) or prints something that
/// is not a report stops with `MachineError::VerifyCrashed`, naming the last stage
/// it reached. A child still running after `timeout` (a driver stuck in
/// `cuInit` never returns) is killed with its whole process group and stops
/// with `MachineError::VerifyTimedOut`, which says what is known about why: the CPU
/// time the child used (a hang sleeps, a compiler does not) and how much the
/// driver's compute cache grew meanwhile.
pub fn run_child(
    exe: &std::path::Path,
    env: &std::collections::BTreeMap<OsString, OsString>,
    request: &Request,
    timeout: std::time::Duration,
    on_facts: &mut dyn FnMut(&Probe),
) -> Result<ChildReport> {
    let started = std::time::Instant::now();
    let cache = ComputeCache::of(env);
    let cache_before = cache.as_ref().map(ComputeCache::size);
    let arg = serde_json::to_string(request).map_err(Error::encode("the verify request"))?;
    let cmd =
        crate::machine::facts::child::command(exe, &[CHILD_COMMAND.as_ref(), arg.as_ref()], env);
    // The one child protocol (`machine::facts::child`): its own process
    // group (whatever the libraries start dies with it), dies with us,
    // never waits past the deadline. Facts lines on stderr are passed on as
    // they come; everything else is kept for the stage markers and the tail.
    let mut last: Option<Probe> = None;
    let mut on_line = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        match text.strip_prefix(probe::FACTS_PREFIX) {
            Some(json) => {
                if let Ok(p) = serde_json::from_str::<Probe>(json.trim_end()) {
                    on_facts(&p);
                    last = Some(p);
                }
                false
            }
            None => true,
        }
    };
    // Measured before the kill: what the child was doing when time ran out.
    let mut cpu_seconds = None;
    let mut cache_after = None;
    let mut at_deadline = |pid: u32| {
        cpu_seconds = crate::os::process::cpu_seconds(pid);
        cache_after = cache.as_ref().map(ComputeCache::size);
    };
    let ran = crate::machine::facts::child::ask::<Probe>(
        cmd,
        timeout,
        crate::os::process::Options {
            on_stderr_line: Some(&mut on_line),
            at_deadline: Some(&mut at_deadline),
            ..Default::default()
        },
    )
    .map_err(Error::io("cannot start the verification process", exe))?;
    let stderr = ran.stderr;
    let stage = || probe::last_stage(&stderr).unwrap_or_else(|| "starting".into());
    let partial = |last: Option<Probe>| {
        let mut p = last.unwrap_or_default();
        p.seconds = started.elapsed().as_secs_f64();
        p.timings = probe::timings(&stderr, p.seconds);
        p
    };
    match ran.answer {
        Ok(mut p) => {
            p.timings = probe::timings(&stderr, p.seconds);
            Ok(ChildReport {
                probe: p,
                stopped: None,
            })
        }
        Err(crate::machine::facts::child::Stop::TimedOut) => {
            let probe = partial(last);
            let stopped = Stopped {
                stage: stage(),
                seconds: timeout.as_secs_f64(),
                cpu_seconds,
                cache: match (cache, cache_before, cache_after) {
                    (Some(c), Some(before), Some(after)) => Some(CacheGrowth {
                        dir: c.dir,
                        before,
                        after,
                        max_size: c.max_size,
                    }),
                    _ => None,
                },
            };
            let why = diagnose::explain_timeout(&request.expected, &probe, &stopped);
            Ok(ChildReport {
                probe,
                stopped: Some(MachineError::VerifyTimedOut {
                    seconds: timeout.as_secs(),
                    stage: stopped.stage,
                    output: tail(&stderr, 20),
                    why,
                }),
            })
        }
        Err(stop) => Ok(ChildReport {
            probe: partial(last),
            stopped: Some(MachineError::VerifyCrashed {
                how: stop.how(timeout),
                stage: stage(),
                output: tail(&stderr, 20),
            }),
        }),
    }
}

/// How a check that ran out of time was doing, for `diagnose::explain_timeout`.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The stage it was in (`cublasCreate on GPU 0`).
    pub stage: String,
    /// The time it had.
    pub seconds: f64,
    /// CPU time the child used (user + system), when /proc tells.
    pub cpu_seconds: Option<f64>,
    pub cache: Option<CacheGrowth>,
}

/// The driver's compute cache before and after the check.
#[derive(Debug, Clone)]
pub struct CacheGrowth {
    pub dir: PathBuf,
    pub before: u64,
    pub after: u64,
    /// `CUDA_CACHE_MAXSIZE` as the child had it.
    pub max_size: Option<String>,
}

/// Where the driver keeps the PTX it has JIT-compiled, as the child's
/// environment sets it (`None`: caching is disabled, or no home).
struct ComputeCache {
    dir: PathBuf,
    max_size: Option<String>,
}

impl ComputeCache {
    fn of(env: &std::collections::BTreeMap<OsString, OsString>) -> Option<ComputeCache> {
        use crate::context::env_vars::{
            CUDA_CACHE_DISABLE, CUDA_CACHE_MAXSIZE, CUDA_CACHE_PATH, HOME,
        };
        let get = |k: &str| env.get(std::ffi::OsStr::new(k)).filter(|v| !v.is_empty());
        if get(CUDA_CACHE_DISABLE).is_some_and(|v| v == "1") {
            return None;
        }
        let dir = match get(CUDA_CACHE_PATH) {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(get(HOME)?).join(".nv/ComputeCache"),
        };
        Some(ComputeCache {
            dir,
            max_size: get(CUDA_CACHE_MAXSIZE).map(|v| v.to_string_lossy().into_owned()),
        })
    }

    /// Bytes of the files under it (0 when it does not exist); bounded, as
    /// it only has to show growth.
    fn size(&self) -> u64 {
        let mut total = 0;
        let mut left = 100_000u32;
        let mut stack = vec![self.dir.clone()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                left = left.saturating_sub(1);
                if left == 0 {
                    return total;
                }
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                    _ => {}
                }
            }
        }
        total
    }
}

/// The last `n` lines of a text, without the child's stage markers (facts
/// lines never reach it).
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s
        .lines()
        .filter(|l| !l.starts_with(probe::STAGE_PREFIX))
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
