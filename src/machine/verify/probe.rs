//! The child process: load the stack by soname, collect facts, run the checks.
//!
//! Runs under `cudaenv __verify-child REQUEST_JSON` with the activated
//! environment and prints one `Probe` as JSON on stdout. It never gives up
//! early on a missing piece: a machine without a driver still reports which
//! runtime and libraries the loader found, so the parent can say everything
//! at once. Before each step that calls into a library it writes a stage
//! marker to stderr; if a library crashes the process, the parent names the
//! last stage reached. After each part (the driver, the runtime and
//! libraries, each GPU's checks) it writes what it knows so far as one
//! `FACTS_PREFIX` line, so that what was learned before a library hangs or
//! crashes is not lost, and the parent can judge the stack against the GPU
//! before the first kernel runs.
//!
//! The GEMM protocol, per GPU and dtype: upload random inputs, fill C with
//! NaN bytes (an unwritten result can never pass), run `cublasGemmEx` once,
//! copy C back and check it (`gemm::check`); then two warm-up runs, one timed
//! run to size the repeats, and `repeats` runs each bracketed by CUDA events;
//! the median gives TFLOP/s. The test hook `CUDAENV_VERIFY_CORRUPT=<dtype|conv|all>`
//! overwrites the result on the GPU before it is checked, to prove that a
//! GEMM computing garbage fails.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};

use super::ffi::{self, Cublas, CublasLt, Cudnn, Driver, Nvml, Runtime};
use super::gemm::{self, HostMatrix};
use super::libraries::{Nccl, Tensorrt};
use super::{
    ApiError, CpuGemm, DeviceFacts, Devices, DriverFacts, Dtype, Expected, GemmResult,
    LibraryFacts, Origin, Outcome, Probe, Request,
};
use crate::context::Context;
use crate::context::env_vars;
use crate::spec::Library;
use crate::spec::Version;

pub const STAGE_PREFIX: &str = "cudaenv-verify-stage: ";
/// Prefixes a line holding the `Probe` so far, as JSON.
pub const FACTS_PREFIX: &str = "cudaenv-verify-facts: ";

/// Elements checked against an fp64 dot product, per GEMM.
const SAMPLES: usize = 256;
/// GPU time to spend on the timed repeats of one GEMM.
const TIMING_BUDGET_MS: f64 = 150.0;
const MIN_REPEATS: u32 = 5;
const MAX_REPEATS: u32 = 50;
const CPU_GEMM_SIZE: usize = 1024;

/// When the child started, for the stage markers' timestamps.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Announces a step on stderr: `<prefix><seconds since start> <what>`.
fn stage(what: impl std::fmt::Display) {
    let t = STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64();
    eprintln!("{STAGE_PREFIX}{t:.3} {what}");
}

/// Writes the facts gathered so far on stderr (one line; JSON has no raw
/// newlines).
fn report(probe: &mut Probe) {
    probe.seconds = STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64();
    if let Ok(json) = serde_json::to_string(probe) {
        eprintln!("{FACTS_PREFIX}{json}");
    }
}

/// The stage markers in a child's stderr, as (start time, what).
fn markers(stderr: &str) -> impl Iterator<Item = (f64, &str)> {
    stderr.lines().filter_map(|l| {
        let rest = l.strip_prefix(STAGE_PREFIX)?;
        let (t, what) = rest.split_once(' ')?;
        Some((t.parse().ok()?, what))
    })
}

/// The last stage marker in a child's stderr.
pub fn last_stage(stderr: &str) -> Option<String> {
    markers(stderr).last().map(|(_, w)| w.to_owned())
}

/// How long each stage took, from the markers and the child's total time.
pub fn timings(stderr: &str, total: f64) -> Vec<super::Timing> {
    let m: Vec<(f64, &str)> = markers(stderr).collect();
    m.iter()
        .enumerate()
        .map(|(i, &(t, what))| super::Timing {
            stage: what.to_owned(),
            seconds: m.get(i + 1).map_or(total, |n| n.0) - t,
        })
        .collect()
}

/// `12040` → `12.4`, the encoding of every CUDA version query.
pub fn api_version(v: c_int) -> Version {
    let v = v.max(0) as u32;
    Version::from_parts(&[v / 1000, (v % 1000) / 10])
}

/// cuDNN's `cudnnGetVersion`: major*1000+minor*100+patch up to 8.x,
/// major*10000+minor*100+patch from 9.0.
pub fn cudnn_version(v: usize) -> Version {
    let v = v as u32;
    if v >= 90000 {
        Version::from_parts(&[v / 10000, (v / 100) % 100, v % 100])
    } else {
        Version::from_parts(&[v / 1000, (v / 100) % 10, v % 100])
    }
}

/// `cublasLtGetVersion`: major*10000+minor*100+patch from cuBLAS 12;
/// major*1000+minor*100+patch in cuBLAS 11 (11.4.1 reports 11401).
fn cublaslt_version(v: usize) -> String {
    let v = v as u32;
    if v < 100_000 {
        format!("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100)
    } else {
        format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
    }
}

/// The files the loader is asked for, for a library family on this
/// platform, the expected major first (`compat::libraries::file_names`).
pub fn sonames(component: &str, majors: &[u32]) -> Vec<String> {
    crate::machine::compat::libraries::file_names(
        component,
        majors,
        crate::os::platform::Platform::host(),
    )
}

/// Is `path` in one of `dirs`? Both sides are compared with symlinks resolved,
/// so a version that links `/usr/local/cuda-13.0` still owns what its
/// `lib64 -> targets/x86_64-linux/lib` resolves to.
pub fn origin_of(loaded: Option<&Path>, resolved: Option<&Path>, dirs: &[PathBuf]) -> Origin {
    if dirs.is_empty() {
        return Origin::Unjudged;
    }
    let canon: Vec<PathBuf> = dirs
        .iter()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
        .collect();
    let inside = |p: &Path| {
        let parent = p.parent().unwrap_or(p);
        dirs.iter().chain(canon.iter()).any(|d| parent == d)
            || canon.iter().any(|d| p.starts_with(d))
    };
    if loaded.is_some_and(inside) || resolved.is_some_and(inside) {
        Origin::Version
    } else {
        Origin::Outside
    }
}

fn library_facts(
    name: &str,
    tried: Vec<String>,
    result: &Result<ffi::Loaded, Vec<String>>,
    expected: &Expected,
) -> LibraryFacts {
    match result {
        Ok(l) => {
            let resolved = l.path.as_ref().and_then(|p| std::fs::canonicalize(p).ok());
            LibraryFacts {
                name: name.into(),
                tried,
                soname: Some(l.soname.clone()),
                origin: Some(origin_of(
                    l.path.as_deref(),
                    resolved.as_deref(),
                    &expected.dirs,
                )),
                path: resolved.or_else(|| l.path.clone()),
                version: None,
                error: None,
            }
        }
        Err(errors) => LibraryFacts {
            name: name.into(),
            tried,
            soname: None,
            path: None,
            origin: None,
            version: None,
            error: Some(errors.join("; ")),
        },
    }
}

/// The driver's version string: the kernel module's, else NVML's.
fn driver_version_string(nvml: Option<&Nvml>) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string("/proc/driver/nvidia/version")
        && let Some(v) = parse_proc_version(&text)
    {
        return Some(v);
    }
    let nvml = nvml?;
    let mut buf = [0 as std::ffi::c_char; 96];
    // SAFETY: NVML was initialised; the buffer is larger than NVML's 80-byte limit.
    let r = unsafe { (nvml.nvmlSystemGetDriverVersion)(buf.as_mut_ptr(), buf.len() as u32) };
    // SAFETY: NVML wrote a NUL-terminated string into the buffer.
    (r == 0).then(|| unsafe { ffi::cstr(buf.as_ptr()) })
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu …` → `580.159.04`.
pub fn parse_proc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    let rest = line.split("Kernel Module").nth(1)?;
    rest.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
}

fn cu_error(d: &Driver, call: &str, code: c_int) -> ApiError {
    let mut p = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string.
    unsafe { (d.cuGetErrorName)(code, &mut p) };
    ApiError {
        call: call.into(),
        code,
        // SAFETY: NULL or a static string from cuGetErrorName.
        name: unsafe { ffi::cstr(p) },
        message: String::new(),
    }
}

fn cuda_error(rt: &Runtime, call: &str, code: c_int) -> ApiError {
    // SAFETY: both return static strings for any code.
    let (name, message) = unsafe {
        (
            ffi::cstr((rt.cudaGetErrorName)(code)),
            ffi::cstr((rt.cudaGetErrorString)(code)),
        )
    };
    ApiError {
        call: call.into(),
        code,
        name,
        message,
    }
}

fn cublas_error(call: &str, code: c_int) -> ApiError {
    ApiError {
        call: call.into(),
        code,
        name: ffi::cublas_status_name(code).into(),
        message: String::new(),
    }
}

/// What the test hook asks to corrupt.
struct Corrupt(Vec<String>);

impl Corrupt {
    fn from(ctx: &Context) -> Corrupt {
        Corrupt(
            ctx.var(env_vars::CUDAENV_VERIFY_CORRUPT)
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_ascii_lowercase())
                        .collect()
                })
                .unwrap_or_default(),
        )
    }

    fn wants(&self, what: &str) -> bool {
        self.0.iter().any(|w| w == what || w == "all")
    }
}

/// Collects every fact and runs every check the request asks for.
pub fn run(ctx: &Context, req: &Request) -> Probe {
    let started = *STARTED.get_or_init(std::time::Instant::now);
    let mut probe = Probe {
        cuda_visible_devices: ctx
            .var_os(env_vars::CUDA_VISIBLE_DEVICES)
            .map(|v| v.to_string_lossy().into_owned()),
        ..Probe::default()
    };
    let expected = &req.expected;

    // --- driver ---------------------------------------------------------------
    stage(format_args!(
        "loading {}",
        crate::machine::libcuda::file_name()
    ));
    let driver = match crate::machine::libcuda::open() {
        Ok(l) => {
            probe.driver.library = l.path.as_ref().and_then(|p| std::fs::canonicalize(p).ok());
            match Driver::bind(l) {
                Ok(d) => Some(d),
                Err(e) => {
                    probe.driver.load_error = Some(e);
                    None
                }
            }
        }
        Err(e) => {
            probe.driver.load_error = Some(e);
            None
        }
    };
    let nvml = driver.as_ref().and_then(|_| {
        stage("loading libnvidia-ml.so.1");
        let n =
            Nvml::bind(ffi::open_first(&sonames("nvidia-ml", &[]), "nvmlInit_v2").ok()?).ok()?;
        // SAFETY: plain initialisation call.
        (unsafe { (n.nvmlInit_v2)() } == 0).then_some(n)
    });
    if let Some(d) = &driver {
        probe.driver = driver_facts(
            d,
            nvml.as_ref(),
            std::mem::take(&mut probe.driver),
            &mut probe.devices,
        );
    }
    if let Some(n) = &nvml {
        // SAFETY: balanced with the successful nvmlInit above.
        unsafe { (n.nvmlShutdown)() };
    }
    report(&mut probe);

    // --- runtime and libraries -------------------------------------------------
    let cuda_majors: Vec<u32> = match &expected.cuda {
        Some(v) => vec![v.major()],
        None => vec![13, 12, 11],
    };
    stage("loading libcudart");
    let tried = sonames("cudart", &cuda_majors);
    let cudart = ffi::open_first(&tried, "cudaRuntimeGetVersion");
    let mut facts = library_facts("cudart", tried, &cudart, expected);
    let runtime = cudart.ok().and_then(|l| match Runtime::bind(l) {
        Ok(rt) => Some(rt),
        Err(e) => {
            facts.error = Some(e);
            None
        }
    });
    if let Some(rt) = &runtime {
        stage("cudaRuntimeGetVersion");
        let mut v = 0;
        // SAFETY: out-pointer to a local.
        if unsafe { (rt.cudaRuntimeGetVersion)(&mut v) } == 0 {
            let version = api_version(v);
            facts.version = Some(version.to_string());
            probe.runtime.version = Some(version);
        }
        stage("cudaGetDeviceCount");
        let mut n = 0;
        // SAFETY: out-pointer to a local.
        let r = unsafe { (rt.cudaGetDeviceCount)(&mut n) };
        if r == 0 {
            probe.runtime.device_count = Some(n.max(0) as u32);
        } else {
            probe.runtime.error = Some(cuda_error(rt, "cudaGetDeviceCount", r));
        }
    }
    probe.libraries.push(facts);

    // cuBLAS of the runtime's major (what a framework built for it would load).
    let blas_majors = match &probe.runtime.version {
        Some(v) => vec![v.major()],
        None => cuda_majors.clone(),
    };
    stage("loading libcublasLt");
    let tried = sonames("cublasLt", &blas_majors);
    let lt = ffi::open_first(&tried, "cublasLtGetVersion");
    let mut facts = library_facts("cublasLt", tried, &lt, expected);
    let lt = lt.ok().and_then(|l| CublasLt::bind(l).ok());
    if let Some(lt) = &lt {
        // SAFETY: no arguments.
        facts.version = Some(cublaslt_version(unsafe { (lt.cublasLtGetVersion)() }));
    }
    probe.libraries.push(facts);

    stage("loading libcublas");
    let tried = sonames("cublas", &blas_majors);
    let blas = ffi::open_first(&tried, "cublasCreate_v2");
    let mut facts = library_facts("cublas", tried, &blas, expected);
    let blas = blas.ok().and_then(|l| match Cublas::bind(l) {
        Ok(b) => Some(b),
        Err(e) => {
            facts.error = Some(e);
            None
        }
    });
    if let Some(b) = &blas {
        let mut parts = [0; 3];
        for (i, p) in parts.iter_mut().enumerate() {
            // SAFETY: property ids 0..=2 are MAJOR, MINOR, PATCH.
            unsafe { (b.cublasGetProperty)(i as c_int, p) };
        }
        facts.version = Some(format!("{}.{}.{}", parts[0], parts[1], parts[2]));
    }
    probe.libraries.push(facts);

    let dnn_majors: Vec<u32> = match &expected.cudnn {
        Some(v) => vec![v.major()],
        None => vec![9, 8],
    };
    stage("loading libcudnn");
    let tried = sonames("cudnn", &dnn_majors);
    let dnn = ffi::open_first(&tried, "cudnnGetVersion");
    let mut facts = library_facts("cudnn", tried, &dnn, expected);
    let dnn = dnn.ok().and_then(|l| match Cudnn::bind(l) {
        Ok(d) => Some(d),
        Err(e) => {
            facts.error = Some(e);
            None
        }
    });
    if let Some(d) = &dnn {
        // SAFETY: no arguments.
        facts.version = Some(cudnn_version(unsafe { (d.cudnnGetVersion)() }).to_string());
    }
    probe.libraries.push(facts);

    // The libraries beside the toolkit the version carries.
    let nccl = expected.libs.get(Library::Nccl).map(|_| {
        let tried = sonames("nccl", &[2]);
        stage(format_args!("loading {}", tried.join(", ")));
        let l = ffi::open_first(&tried, "ncclGetVersion");
        let mut facts = library_facts("nccl", tried, &l, expected);
        let n = l.ok().and_then(|l| match Nccl::bind(l) {
            Ok(n) => Some(n),
            Err(e) => {
                facts.error = Some(e);
                None
            }
        });
        probe.libraries.push(facts);
        n
    });
    let tensorrt = expected.libs.get(Library::Tensorrt).map(|v| {
        stage("loading libnvinfer");
        let tried = sonames("nvinfer", &[v.major()]);
        let l = ffi::open_first(&tried, "getInferLibVersion");
        let mut facts = library_facts("tensorrt", tried, &l, expected);
        let t = l.ok().and_then(|l| match Tensorrt::bind(l) {
            Ok(t) => Some(t),
            Err(e) => {
                facts.error = Some(e);
                None
            }
        });
        probe.libraries.push(facts);
        t
    });
    report(&mut probe);
    let mut ran_on: Vec<u32> = Vec::new();

    // --- checks on the GPU -------------------------------------------------------
    let count = probe.runtime.device_count.unwrap_or(0);
    if let (Some(rt), true) = (&runtime, count > 0) {
        let selected: Vec<u32> = match req.devices {
            Devices::All => (0..count).collect(),
            Devices::Index(k) if k < count => vec![k],
            Devices::Index(k) => {
                probe.missing_device = Some(k);
                Vec::new()
            }
        };
        let corrupt = Corrupt::from(ctx);
        let mut inputs: Option<(HostMatrix, HostMatrix)> = None;
        ran_on = selected.clone();
        for dev in selected {
            let cc = probe
                .devices
                .iter()
                .find(|d| d.index == dev)
                .map(|d| d.cc)
                .unwrap_or_else(|| runtime_cc(rt, dev));
            stage(format!("cudaSetDevice({dev})"));
            // SAFETY: dev < device count.
            let r = unsafe { (rt.cudaSetDevice)(dev as c_int) };
            if r != 0 {
                probe.gemm.push(failed_gemm(
                    dev,
                    Dtype::Fp32,
                    req.size,
                    cuda_error(rt, "cudaSetDevice", r),
                ));
                continue;
            }
            if let Some(b) = &blas {
                let dtypes = req
                    .dtypes
                    .clone()
                    .unwrap_or_else(|| Dtype::defaults_for(cc));
                let (a, bm) = inputs.get_or_insert_with(|| {
                    stage("generating inputs");
                    let n = req.size;
                    let mut a = vec![0.0f32; n * n];
                    let mut bv = vec![0.0f32; n * n];
                    gemm::fill_uniform(&mut a, 1);
                    gemm::fill_uniform(&mut bv, 2);
                    (HostMatrix::F32(a), HostMatrix::F32(bv))
                });
                gemm_checks(
                    rt,
                    b,
                    dev,
                    cc,
                    &dtypes,
                    req.size,
                    (a, bm),
                    &corrupt,
                    &mut probe,
                );
            }
            if let Some(d) = &dnn {
                stage(format!("cuDNN convolution on GPU {dev}"));
                probe
                    .cudnn_conv
                    .push(super::conv::run(rt, d, dev, corrupt.wants("conv")));
            }
            report(&mut probe);
        }
        if probe.gemm.iter().any(|g| g.outcome == Outcome::Passed) {
            stage("CPU GEMM");
            probe.cpu_gemm = Some(cpu_gemm());
        }
    }
    // NCCL and TensorRT: their version calls always, the GPU steps on the
    // GPUs the GEMMs ran on.
    if let Some(Some(n)) = &nccl {
        let plan = super::libraries::nccl_plan(&expected.libs, &ran_on);
        stage(match &plan {
            super::libraries::NcclPlan::AllReduce { devices, .. } => {
                format!("NCCL all-reduce over GPUs {devices:?}")
            }
            _ => "ncclGetVersion".into(),
        });
        let result = super::libraries::run_nccl(runtime.as_ref(), n, &plan);
        library_version(&mut probe, "nccl", result.version.as_ref());
        probe.nccl = Some(result);
        report(&mut probe);
    }
    if let Some(Some(t)) = &tensorrt {
        stage("TensorRT builder");
        let result = super::libraries::run_tensorrt(
            runtime.as_ref(),
            t,
            ran_on.first().copied(),
            &mut |s| stage(s),
        );
        library_version(&mut probe, "tensorrt", result.version.as_ref());
        probe.tensorrt = Some(result);
        report(&mut probe);
    }
    probe.seconds = started.elapsed().as_secs_f64();
    probe
}

/// The version a library reported, in its row of the libraries table.
fn library_version(probe: &mut Probe, name: &str, version: Option<&String>) {
    if let Some(l) = probe.libraries.iter_mut().find(|l| l.name == name) {
        l.version = version.cloned();
    }
}

fn cpu_gemm() -> CpuGemm {
    gemm::cpu_benchmark(CPU_GEMM_SIZE, 3)
}

fn driver_facts(
    d: &Driver,
    nvml: Option<&Nvml>,
    mut facts: DriverFacts,
    devices: &mut Vec<DeviceFacts>,
) -> DriverFacts {
    let mut v = 0;
    // SAFETY: out-pointer to a local; valid before cuInit.
    if unsafe { (d.cuDriverGetVersion)(&mut v) } == 0 {
        facts.cuda = Some(api_version(v));
    }
    facts.version = driver_version_string(nvml);
    facts.gpus_present = nvml
        .and_then(|n| {
            let mut c = 0;
            // SAFETY: NVML is initialised.
            (unsafe { (n.nvmlDeviceGetCount_v2)(&mut c) } == 0).then_some(c)
        })
        .or_else(|| {
            std::fs::read_dir("/proc/driver/nvidia/gpus")
                .ok()
                .map(|e| e.count() as u32)
        });
    stage("cuInit");
    // SAFETY: flags must be 0.
    let r = unsafe { (d.cuInit)(0) };
    if r != 0 {
        facts.init_error = Some(cu_error(d, "cuInit", r));
        return facts;
    }
    let mut count = 0;
    // SAFETY: out-pointer to a local, after a successful cuInit.
    unsafe { (d.cuDeviceGetCount)(&mut count) };
    for i in 0..count.max(0) {
        let mut dev = 0;
        // SAFETY: i < count; each call writes into locals of the right size.
        unsafe {
            if (d.cuDeviceGet)(&mut dev, i) != 0 {
                continue;
            }
            let mut name = [0 as std::ffi::c_char; 256];
            (d.cuDeviceGetName)(name.as_mut_ptr(), name.len() as c_int, dev);
            let (mut major, mut minor, mut sms) = (0, 0, 0);
            (d.cuDeviceGetAttribute)(
                &mut major,
                ffi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev,
            );
            (d.cuDeviceGetAttribute)(
                &mut minor,
                ffi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                dev,
            );
            (d.cuDeviceGetAttribute)(&mut sms, ffi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
            let mut mem = 0usize;
            (d.cuDeviceTotalMem_v2)(&mut mem, dev);
            devices.push(DeviceFacts {
                index: i as u32,
                name: ffi::cstr(name.as_ptr()),
                cc: (major.max(0) * 10 + minor.max(0)) as u32,
                memory_bytes: mem as u64,
                multiprocessors: sms.max(0) as u32,
            });
        }
    }
    facts
}

/// Compute capability through the runtime, when the driver API gave none.
fn runtime_cc(rt: &Runtime, dev: u32) -> u32 {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: attribute ids 75/76 are the compute capability; out-pointers to locals.
    unsafe {
        (rt.cudaDeviceGetAttribute)(&mut major, 75, dev as c_int);
        (rt.cudaDeviceGetAttribute)(&mut minor, 76, dev as c_int);
    }
    (major.max(0) * 10 + minor.max(0)) as u32
}

fn failed_gemm(device: u32, dtype: Dtype, size: usize, error: ApiError) -> GemmResult {
    GemmResult {
        device,
        dtype,
        size,
        outcome: Outcome::Error,
        max_error: None,
        checksum_error: None,
        bound: dtype.bound(),
        samples: 0,
        non_finite: false,
        tflops: None,
        median_ms: None,
        repeats: 0,
        error: Some(error),
        note: None,
    }
}

/// Device memory, freed on drop.
pub struct DevBuf<'a> {
    rt: &'a Runtime,
    pub ptr: *mut c_void,
    bytes: usize,
}

impl<'a> DevBuf<'a> {
    pub fn new(rt: &'a Runtime, bytes: usize) -> Result<DevBuf<'a>, ApiError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        let r = unsafe { (rt.cudaMalloc)(&mut ptr, bytes) };
        if r != 0 {
            return Err(cuda_error(rt, "cudaMalloc", r));
        }
        Ok(DevBuf { rt, ptr, bytes })
    }

    pub fn upload(&self, src: &[u8]) -> Result<(), ApiError> {
        assert!(src.len() <= self.bytes, "upload larger than the buffer");
        // SAFETY: `src` is readable for its length, which fits the allocation.
        let r = unsafe {
            (self.rt.cudaMemcpy)(
                self.ptr,
                src.as_ptr().cast(),
                src.len(),
                ffi::CUDA_MEMCPY_HOST_TO_DEVICE,
            )
        };
        check_cuda(self.rt, "cudaMemcpy", r)
    }

    pub fn download(&self, dst: &mut [u8]) -> Result<(), ApiError> {
        assert!(dst.len() <= self.bytes, "download larger than the buffer");
        // SAFETY: `dst` is writable for its length, which fits the allocation.
        let r = unsafe {
            (self.rt.cudaMemcpy)(
                dst.as_mut_ptr().cast(),
                self.ptr,
                dst.len(),
                ffi::CUDA_MEMCPY_DEVICE_TO_HOST,
            )
        };
        check_cuda(self.rt, "cudaMemcpy", r)
    }

    pub fn fill(&self, byte: u8, bytes: usize) -> Result<(), ApiError> {
        assert!(bytes <= self.bytes, "fill larger than the buffer");
        // SAFETY: within the allocation.
        let r = unsafe { (self.rt.cudaMemset)(self.ptr, byte as c_int, bytes) };
        check_cuda(self.rt, "cudaMemset", r)
    }
}

impl Drop for DevBuf<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc, freed once.
        unsafe { (self.rt.cudaFree)(self.ptr) };
    }
}

pub fn check_cuda(rt: &Runtime, call: &str, r: c_int) -> Result<(), ApiError> {
    if r == 0 {
        Ok(())
    } else {
        Err(cuda_error(rt, call, r))
    }
}

pub fn synchronize(rt: &Runtime, after: &str) -> Result<(), ApiError> {
    // SAFETY: no arguments.
    let r = unsafe { (rt.cudaDeviceSynchronize)() };
    check_cuda(rt, &format!("cudaDeviceSynchronize (after {after})"), r)
}

#[allow(clippy::too_many_arguments)]
fn gemm_checks(
    rt: &Runtime,
    blas: &Cublas,
    dev: u32,
    cc: u32,
    dtypes: &[Dtype],
    n: usize,
    inputs: (&HostMatrix, &HostMatrix),
    corrupt: &Corrupt,
    probe: &mut Probe,
) {
    // Each result is reported as soon as it is known: a later GEMM that
    // hangs or crashes does not take the earlier ones with it.
    let out = |g: GemmResult, probe: &mut Probe| {
        probe.gemm.push(g);
        report(probe);
    };
    stage(format!("cublasCreate on GPU {dev}"));
    let mut handle = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    let r = unsafe { (blas.cublasCreate_v2)(&mut handle) };
    if r != ffi::CUBLAS_STATUS_SUCCESS {
        for &d in dtypes {
            out(
                failed_gemm(dev, d, n, cublas_error("cublasCreate", r)),
                probe,
            );
        }
        return;
    }
    let mut prepared: Option<Prepared> = None;
    for &dtype in dtypes {
        if cc < dtype.min_cc() {
            let mut g = failed_gemm(dev, dtype, n, cublas_error("-", 0));
            g.error = None;
            g.outcome = Outcome::Skipped;
            g.note = Some(format!(
                "{dtype} needs compute capability {}.{} or newer",
                dtype.min_cc() / 10,
                dtype.min_cc() % 10
            ));
            out(g, probe);
            continue;
        }
        // fp32 and tf32 share inputs and outputs: upload once.
        if prepared.as_ref().map(|p| p.storage) != Some(storage(dtype)) {
            prepared = None; // frees the previous buffers first
            stage(format!("preparing {dtype} inputs on GPU {dev}"));
            match Prepared::new(rt, dtype, n, inputs) {
                Ok(p) => prepared = Some(p),
                Err(e) => {
                    out(failed_gemm(dev, dtype, n, e), probe);
                    continue;
                }
            }
        }
        let p = prepared.as_mut().expect("prepared above");
        stage(format!("GEMM {dtype} {n}x{n}x{n} on GPU {dev}"));
        let result = one_gemm(
            rt,
            blas,
            handle,
            dev,
            dtype,
            n,
            inputs,
            p,
            corrupt.wants(dtype.as_str()),
        );
        out(
            result.unwrap_or_else(|e| failed_gemm(dev, dtype, n, e)),
            probe,
        );
    }
    drop(prepared);
    // SAFETY: created above, destroyed once.
    unsafe { (blas.cublasDestroy_v2)(handle) };
}

/// The cuBLAS types of one dtype: (data type, compute type, fp64 scalars?).
fn gemm_types(dtype: Dtype) -> (c_int, c_int, bool) {
    match dtype {
        Dtype::Fp32 => (ffi::CUDA_R_32F, ffi::CUBLAS_COMPUTE_32F, false),
        Dtype::Tf32 => (ffi::CUDA_R_32F, ffi::CUBLAS_COMPUTE_32F_FAST_TF32, false),
        Dtype::Fp16 => (ffi::CUDA_R_16F, ffi::CUBLAS_COMPUTE_32F, false),
        Dtype::Bf16 => (ffi::CUDA_R_16BF, ffi::CUBLAS_COMPUTE_32F, false),
        Dtype::Fp64 => (ffi::CUDA_R_64F, ffi::CUBLAS_COMPUTE_64F, true),
    }
}

/// The element type a dtype stores (tf32 reads and writes fp32).
fn storage(dtype: Dtype) -> Dtype {
    match dtype {
        Dtype::Tf32 => Dtype::Fp32,
        d => d,
    }
}

/// Inputs converted and uploaded, and an output buffer on both sides.
struct Prepared<'a> {
    storage: Dtype,
    /// The inputs rounded to a narrower type (`None` for fp32 and tf32).
    converted: Option<(HostMatrix, HostMatrix)>,
    hc: HostMatrix,
    da: DevBuf<'a>,
    db: DevBuf<'a>,
    dc: DevBuf<'a>,
}

impl<'a> Prepared<'a> {
    fn new(
        rt: &'a Runtime,
        dtype: Dtype,
        n: usize,
        (a32, b32): (&HostMatrix, &HostMatrix),
    ) -> Result<Prepared<'a>, ApiError> {
        let converted = match storage(dtype) {
            Dtype::Fp32 => None,
            _ => {
                let (HostMatrix::F32(a), HostMatrix::F32(b)) = (a32, b32) else {
                    unreachable!("inputs are generated as f32")
                };
                Some((HostMatrix::input(dtype, a), HostMatrix::input(dtype, b)))
            }
        };
        let (ha, hb) = converted.as_ref().map_or((a32, b32), |(a, b)| (a, b));
        let hc = HostMatrix::output(dtype, n * n);
        let da = DevBuf::new(rt, ha.bytes())?;
        let db = DevBuf::new(rt, hb.bytes())?;
        let dc = DevBuf::new(rt, hc.bytes())?;
        da.upload(ha.as_bytes())?;
        db.upload(hb.as_bytes())?;
        Ok(Prepared {
            storage: storage(dtype),
            converted,
            hc,
            da,
            db,
            dc,
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn one_gemm(
    rt: &Runtime,
    blas: &Cublas,
    handle: ffi::CublasHandle,
    dev: u32,
    dtype: Dtype,
    n: usize,
    (a32, b32): (&HostMatrix, &HostMatrix),
    p: &mut Prepared<'_>,
    corrupt: bool,
) -> Result<GemmResult, ApiError> {
    let (ha, hb) = p.converted.as_ref().map_or((a32, b32), |(a, b)| (a, b));
    let (da, db, dc, hc) = (&p.da, &p.db, &p.dc, &mut p.hc);
    // All-ones bytes are NaN in every float format: a result that is never
    // written cannot pass.
    dc.fill(0xFF, hc.bytes())?;

    let (dt, compute, wide) = gemm_types(dtype);
    let (one32, zero32, one64, zero64) = (1.0f32, 0.0f32, 1.0f64, 0.0f64);
    let (alpha, beta): (*const c_void, *const c_void) = if wide {
        (
            (&one64 as *const f64).cast(),
            (&zero64 as *const f64).cast(),
        )
    } else {
        (
            (&one32 as *const f32).cast(),
            (&zero32 as *const f32).cast(),
        )
    };
    let ni = n as c_int;
    // SAFETY: cublasSetMathMode takes a live handle.
    unsafe { (blas.cublasSetMathMode)(handle, ffi::CUBLAS_DEFAULT_MATH) };
    let run = || -> Result<(), ApiError> {
        // SAFETY: all three buffers hold n*n elements of `dt`; scalars match `compute`.
        let r = unsafe {
            (blas.cublasGemmEx)(
                handle,
                ffi::CUBLAS_OP_N,
                ffi::CUBLAS_OP_N,
                ni,
                ni,
                ni,
                alpha,
                da.ptr,
                dt,
                ni,
                db.ptr,
                dt,
                ni,
                beta,
                dc.ptr,
                dt,
                ni,
                compute,
                ffi::CUBLAS_GEMM_DEFAULT,
            )
        };
        if r == ffi::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(cublas_error("cublasGemmEx", r))
        }
    };
    run()?;
    synchronize(rt, "cublasGemmEx")?;
    if corrupt {
        // The test hook: what a GEMM that runs but computes garbage looks like.
        dc.fill(0x3C, hc.bytes())?;
    }
    dc.download(hc.as_bytes_mut())?;
    stage(format!("checking GEMM {dtype} on GPU {dev}"));
    let check = gemm::check(ha, hb, hc, n, SAMPLES);
    let passed = check.passes(dtype.bound());
    let mut result = GemmResult {
        device: dev,
        dtype,
        size: n,
        outcome: if passed {
            Outcome::Passed
        } else {
            Outcome::WrongResult
        },
        max_error: check.max_error,
        checksum_error: check.checksum_error,
        bound: dtype.bound(),
        samples: check.samples,
        non_finite: check.non_finite,
        tflops: None,
        median_ms: None,
        repeats: 0,
        error: None,
        note: None,
    };
    if !passed {
        return Ok(result);
    }

    stage(format!("timing GEMM {dtype} on GPU {dev}"));
    run()?;
    run()?;
    let events = Events::new(rt, MAX_REPEATS as usize + 1)?;
    events.record(0)?;
    run()?;
    events.record(1)?;
    let estimate = events.elapsed(0, 1)?;
    let repeats =
        ((TIMING_BUDGET_MS / estimate.max(1e-3)).ceil() as u32).clamp(MIN_REPEATS, MAX_REPEATS);
    events.record(0)?;
    for i in 0..repeats as usize {
        run()?;
        events.record(i + 1)?;
    }
    let mut times = (0..repeats as usize)
        .map(|i| events.elapsed(i, i + 1))
        .collect::<Result<Vec<f64>, _>>()?;
    let ms = gemm::median(&mut times);
    result.median_ms = Some(ms);
    result.repeats = repeats;
    result.tflops = Some(gemm::flops(n) / (ms * 1e-3) / 1e12);
    Ok(result)
}

/// A set of CUDA events on the default stream.
struct Events<'a> {
    rt: &'a Runtime,
    ev: Vec<ffi::CudaEvent>,
}

impl<'a> Events<'a> {
    fn new(rt: &'a Runtime, n: usize) -> Result<Events<'a>, ApiError> {
        // Built up inside the value, so the ones created so far are
        // destroyed by `Drop` if a later creation fails.
        let mut events = Events {
            rt,
            ev: Vec::with_capacity(n),
        };
        for _ in 0..n {
            let mut e = std::ptr::null_mut();
            // SAFETY: out-pointer to a local.
            let r = unsafe { (rt.cudaEventCreate)(&mut e) };
            check_cuda(rt, "cudaEventCreate", r)?;
            events.ev.push(e);
        }
        Ok(events)
    }

    fn record(&self, i: usize) -> Result<(), ApiError> {
        // SAFETY: a live event on the default stream.
        let r = unsafe { (self.rt.cudaEventRecord)(self.ev[i], std::ptr::null_mut()) };
        check_cuda(self.rt, "cudaEventRecord", r)
    }

    /// Milliseconds between two recorded events (waits for the later one).
    fn elapsed(&self, from: usize, to: usize) -> Result<f64, ApiError> {
        // SAFETY: live events, recorded above.
        let r = unsafe { (self.rt.cudaEventSynchronize)(self.ev[to]) };
        check_cuda(self.rt, "cudaEventSynchronize", r)?;
        let mut ms = 0.0f32;
        // SAFETY: out-pointer to a local.
        let r = unsafe { (self.rt.cudaEventElapsedTime)(&mut ms, self.ev[from], self.ev[to]) };
        check_cuda(self.rt, "cudaEventElapsedTime", r)?;
        Ok(ms as f64)
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        for &e in &self.ev {
            // SAFETY: each event is destroyed once.
            unsafe { (self.rt.cudaEventDestroy)(e) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_versions() {
        assert_eq!(api_version(12040).to_string(), "12.4");
        assert_eq!(api_version(13000).to_string(), "13.0");
        assert_eq!(api_version(11080).to_string(), "11.8");
        assert_eq!(cudnn_version(8906).to_string(), "8.9.6");
        assert_eq!(cudnn_version(90100).to_string(), "9.1.0");
        assert_eq!(cudnn_version(91300).to_string(), "9.13.0");
        assert_eq!(cublaslt_version(130100), "13.1.0");
        // cuBLAS 11.4.1 from Debian bullseye's libcublaslt11 reports 11401.
        assert_eq!(cublaslt_version(11401), "11.4.1");
    }

    #[test]
    fn parses_the_kernel_module_version() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 2025\nGCC version:  gcc 12\n";
        assert_eq!(parse_proc_version(text).as_deref(), Some("580.159.04"));
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build\n";
        assert_eq!(parse_proc_version(open).as_deref(), Some("550.54.14"));
        assert_eq!(parse_proc_version("garbage"), None);
    }

    #[test]
    fn judges_library_origin_through_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("cuda-13.0/targets/x86_64-linux/lib");
        std::fs::create_dir_all(&real).unwrap();
        crate::os::symlink(
            Path::new("targets/x86_64-linux/lib"),
            &t.path().join("cuda-13.0/lib64"),
        )
        .unwrap();
        let lib = real.join("libcudart.so.13.0.96");
        std::fs::write(&lib, b"").unwrap();
        let other = t.path().join("stale");
        std::fs::create_dir_all(&other).unwrap();
        let dirs = vec![t.path().join("cuda-13.0/lib64")];
        assert_eq!(origin_of(Some(&lib), Some(&lib), &dirs), Origin::Version);
        let via_link = t.path().join("cuda-13.0/lib64/libcudart.so.13");
        assert_eq!(origin_of(Some(&via_link), None, &dirs), Origin::Version);
        assert_eq!(
            origin_of(Some(&other.join("libcudart.so.13")), None, &dirs),
            Origin::Outside
        );
        assert_eq!(origin_of(Some(&lib), Some(&lib), &[]), Origin::Unjudged);
    }

    #[test]
    fn finds_the_last_stage() {
        let err = format!(
            "{STAGE_PREFIX}0.001 loading libcudart\nsome library noise\n{STAGE_PREFIX}0.250 GEMM fp16 on GPU 0\n"
        );
        assert_eq!(last_stage(&err).as_deref(), Some("GEMM fp16 on GPU 0"));
        assert_eq!(last_stage("nothing"), None);
        let t = timings(&err, 1.0);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].stage, "loading libcudart");
        assert!((t[0].seconds - 0.249).abs() < 1e-9 && (t[1].seconds - 0.75).abs() < 1e-9);
    }
}
