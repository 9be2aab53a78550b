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
//!
//! Modules: `facts` (versions, origins, the driver's versions and GPUs,
//! recorded in `machine::facts::driver::Probe`), `cuda` (errors,
//! device memory and events), `blas` (the GEMMs); this one runs the steps in
//! order (`Child`) and writes the markers and facts lines.

mod blas;
mod cuda;
mod facts;

use std::ffi::c_int;

use self::blas::{cpu_gemm, failed_gemm, gemm_checks};
use self::cuda::cuda_error;
pub use self::cuda::{DevBuf, synchronize};
pub use self::facts::{api_version, cudnn_version, sonames};
use self::facts::{cublaslt_version, driver_facts, library_facts, runtime_cc};
use super::ffi::{self, Cublas, CublasLt, Cudnn, Driver, Nvml, Runtime};
use super::gemm::{self, HostMatrix};
use super::libraries::{Nccl, Tensorrt};
use super::{Devices, Dtype, Expected, LibraryFacts, Outcome, Probe, Request};
use crate::context::Context;
use crate::context::env_vars;
use crate::spec::Library;

pub const STAGE_PREFIX: &str = "cudaenv-verify-stage: ";
/// Prefixes a line holding the `Probe` so far, as JSON.
pub const FACTS_PREFIX: &str = "cudaenv-verify-facts: ";

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
    let mut child = Child::new(ctx, req);
    child.load_driver();
    report(&mut child.probe);
    child.load_runtime();
    child.load_blas();
    child.load_cudnn();
    child.load_beside_toolkit();
    report(&mut child.probe);
    child.check_gpus(ctx);
    // NCCL and TensorRT: their version calls always, the GPU steps on the
    // GPUs the GEMMs ran on.
    child.check_nccl();
    child.check_tensorrt();
    child.probe.seconds = started.elapsed().as_secs_f64();
    child.into_probe()
}

/// The child between its steps: the facts so far, and the tables bound so
/// far. Every table stays loaded until the end, and they are unloaded in the
/// reverse order of loading (fields drop in the order declared).
struct Child<'a> {
    req: &'a Request,
    probe: Probe,
    /// The GPUs the GEMMs ran on (where NCCL and TensorRT run too).
    ran_on: Vec<u32>,
    /// `None` when the version carries no TensorRT, `Some(None)` when it does
    /// but the library did not load.
    tensorrt: Option<Option<Tensorrt>>,
    /// As `tensorrt`, for NCCL.
    nccl: Option<Option<Nccl>>,
    dnn: Option<Cudnn>,
    blas: Option<Cublas>,
    /// Only its version is read; held so that it stays loaded.
    _lt: Option<CublasLt>,
    runtime: Option<Runtime>,
    /// Shut down already; held so that it stays loaded.
    _nvml: Option<Nvml>,
    /// Held so that it stays loaded.
    _driver: Option<Driver>,
}

impl<'a> Child<'a> {
    fn new(ctx: &Context, req: &'a Request) -> Child<'a> {
        Child {
            req,
            probe: Probe {
                cuda_visible_devices: ctx
                    .var_os(env_vars::CUDA_VISIBLE_DEVICES)
                    .map(|v| v.to_string_lossy().into_owned()),
                ..Probe::default()
            },
            ran_on: Vec::new(),
            tensorrt: None,
            nccl: None,
            dnn: None,
            blas: None,
            _lt: None,
            runtime: None,
            _nvml: None,
            _driver: None,
        }
    }

    /// The facts, once every step has run (the tables unload here).
    fn into_probe(self) -> Probe {
        let Child { probe, .. } = self;
        probe
    }

    /// libcuda and NVML: the driver's versions and the GPUs it sees.
    fn load_driver(&mut self) {
        let probe = &mut self.probe;
        stage(format_args!(
            "loading {}",
            crate::machine::libcuda::file_name()
        ));
        let driver = crate::machine::facts::driver::load(&mut probe.driver);
        let nvml = driver.as_ref().and_then(|_| {
            stage("loading libnvidia-ml.so.1");
            let n = Nvml::bind(ffi::open_first(&sonames("nvidia-ml", &[]), "nvmlInit_v2").ok()?)
                .ok()?;
            // SAFETY: plain initialisation call.
            (unsafe { (n.nvmlInit_v2)() } == 0).then_some(n)
        });
        if let Some(d) = &driver {
            driver_facts(d, nvml.as_ref(), &mut probe.driver, &mut probe.devices);
        }
        if let Some(n) = &nvml {
            // SAFETY: balanced with the successful nvmlInit above.
            unsafe { (n.nvmlShutdown)() };
        }
        self._driver = driver;
        self._nvml = nvml;
    }

    /// libcudart of the version's CUDA major: its version and device count.
    fn load_runtime(&mut self) {
        let probe = &mut self.probe;
        stage("loading libcudart");
        let tried = sonames("cudart", &cuda_majors(&self.req.expected));
        let (runtime, mut facts) = load(
            "cudart",
            tried,
            "cudaRuntimeGetVersion",
            &self.req.expected,
            Runtime::bind,
        );
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
        self.runtime = runtime;
    }

    /// cuBLASLt and cuBLAS of the runtime's major (what a framework built
    /// for it would load), else of the version's.
    fn load_blas(&mut self) {
        let probe = &mut self.probe;
        let expected = &self.req.expected;
        let blas_majors = match &probe.runtime.version {
            Some(v) => vec![v.major()],
            None => cuda_majors(expected),
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
        self._lt = lt;

        stage("loading libcublas");
        let tried = sonames("cublas", &blas_majors);
        let (blas, mut facts) = load("cublas", tried, "cublasCreate_v2", expected, Cublas::bind);
        if let Some(b) = &blas {
            let mut parts = [0; 3];
            for (i, p) in parts.iter_mut().enumerate() {
                // SAFETY: property ids 0..=2 are MAJOR, MINOR, PATCH.
                unsafe { (b.cublasGetProperty)(i as c_int, p) };
            }
            facts.version = Some(format!("{}.{}.{}", parts[0], parts[1], parts[2]));
        }
        probe.libraries.push(facts);
        self.blas = blas;
    }

    /// cuDNN of the version's major, else 9 or 8.
    fn load_cudnn(&mut self) {
        let expected = &self.req.expected;
        let dnn_majors: Vec<u32> = match &expected.cudnn {
            Some(v) => vec![v.major()],
            None => vec![9, 8],
        };
        stage("loading libcudnn");
        let tried = sonames("cudnn", &dnn_majors);
        let (dnn, mut facts) = load("cudnn", tried, "cudnnGetVersion", expected, Cudnn::bind);
        if let Some(d) = &dnn {
            // SAFETY: no arguments.
            facts.version = Some(cudnn_version(unsafe { (d.cudnnGetVersion)() }).to_string());
        }
        self.probe.libraries.push(facts);
        self.dnn = dnn;
    }

    /// The libraries beside the toolkit the version carries (NCCL,
    /// TensorRT): loaded here, their versions read when they run.
    fn load_beside_toolkit(&mut self) {
        let expected = &self.req.expected;
        let probe = &mut self.probe;
        self.nccl = expected.libs.get(Library::Nccl).map(|_| {
            let tried = sonames("nccl", &[2]);
            stage(format_args!("loading {}", tried.join(", ")));
            let (n, facts) = load("nccl", tried, "ncclGetVersion", expected, Nccl::bind);
            probe.libraries.push(facts);
            n
        });
        self.tensorrt = expected.libs.get(Library::Tensorrt).map(|v| {
            stage("loading libnvinfer");
            let tried = sonames("nvinfer", &[v.major()]);
            let (t, facts) = load(
                "tensorrt",
                tried,
                "getInferLibVersion",
                expected,
                Tensorrt::bind,
            );
            probe.libraries.push(facts);
            t
        });
    }

    /// The GEMMs and the convolution on each selected GPU, then the CPU
    /// GEMM to compare with when one passed.
    fn check_gpus(&mut self, ctx: &Context) {
        let probe = &mut self.probe;
        let count = probe.runtime.device_count.unwrap_or(0);
        let (Some(rt), true) = (&self.runtime, count > 0) else {
            return;
        };
        let selected: Vec<u32> = match self.req.devices {
            Devices::All => (0..count).collect(),
            Devices::Index(k) if k < count => vec![k],
            Devices::Index(k) => {
                probe.missing_device = Some(k);
                Vec::new()
            }
        };
        let mut gpu = GpuChecks {
            rt,
            blas: self.blas.as_ref(),
            dnn: self.dnn.as_ref(),
            req: self.req,
            corrupt: Corrupt::from(ctx),
            inputs: None,
        };
        self.ran_on = selected.clone();
        for dev in selected {
            gpu.check(dev, probe);
        }
        if probe.gemm.iter().any(|g| g.outcome == Outcome::Passed) {
            stage("CPU GEMM");
            probe.cpu_gemm = Some(cpu_gemm());
        }
    }

    /// NCCL's version, and its all-reduce over the GPUs the GEMMs ran on.
    fn check_nccl(&mut self) {
        let Some(Some(n)) = &self.nccl else {
            return;
        };
        let plan = super::libraries::nccl_plan(&self.req.expected.libs, &self.ran_on);
        stage(match &plan {
            super::libraries::NcclPlan::AllReduce { devices, .. } => {
                format!("NCCL all-reduce over GPUs {devices:?}")
            }
            _ => "ncclGetVersion".into(),
        });
        let result = super::libraries::run_nccl(self.runtime.as_ref(), n, &plan);
        library_version(&mut self.probe, "nccl", result.version.as_ref());
        self.probe.nccl = Some(result);
        report(&mut self.probe);
    }

    /// TensorRT's version, and a builder on the first GPU the GEMMs ran on.
    fn check_tensorrt(&mut self) {
        let Some(Some(t)) = &self.tensorrt else {
            return;
        };
        stage("TensorRT builder");
        let result = super::libraries::run_tensorrt(
            self.runtime.as_ref(),
            t,
            self.ran_on.first().copied(),
            &mut |s| stage(s),
        );
        library_version(&mut self.probe, "tensorrt", result.version.as_ref());
        self.probe.tensorrt = Some(result);
        report(&mut self.probe);
    }
}

/// The CUDA majors to ask the loader for: the version's, else 13, 12, 11.
fn cuda_majors(expected: &Expected) -> Vec<u32> {
    match &expected.cuda {
        Some(v) => vec![v.major()],
        None => vec![13, 12, 11],
    }
}

/// Opens the first of `tried` that has `symbol` and binds its table; the
/// facts say what loaded, and why the table did not bind when it did not.
fn load<T>(
    name: &str,
    tried: Vec<String>,
    symbol: &str,
    expected: &Expected,
    bind: impl FnOnce(ffi::Loaded) -> Result<T, String>,
) -> (Option<T>, LibraryFacts) {
    let l = ffi::open_first(&tried, symbol);
    let mut facts = library_facts(name, tried, &l, expected);
    let table = l.ok().and_then(|l| match bind(l) {
        Ok(t) => Some(t),
        Err(e) => {
            facts.error = Some(e);
            None
        }
    });
    (table, facts)
}

/// What the checks on every GPU share.
struct GpuChecks<'a> {
    rt: &'a Runtime,
    blas: Option<&'a Cublas>,
    dnn: Option<&'a Cudnn>,
    req: &'a Request,
    corrupt: Corrupt,
    /// The GEMM inputs, generated for the first GPU and reused on the others.
    inputs: Option<(HostMatrix, HostMatrix)>,
}

impl GpuChecks<'_> {
    /// The GEMMs and the convolution on GPU `dev`; reports what it found.
    fn check(&mut self, dev: u32, probe: &mut Probe) {
        let (rt, req) = (self.rt, self.req);
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
            return;
        }
        if let Some(b) = self.blas {
            let dtypes = req
                .dtypes
                .clone()
                .unwrap_or_else(|| Dtype::defaults_for(cc));
            let (a, bm) = self.inputs.get_or_insert_with(|| {
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
                &self.corrupt,
                probe,
            );
        }
        if let Some(d) = self.dnn {
            stage(format!("cuDNN convolution on GPU {dev}"));
            probe
                .cudnn_conv
                .push(super::conv::run(rt, d, dev, self.corrupt.wants("conv")));
        }
        report(probe);
    }
}

/// The version a library reported, in its row of the libraries table.
fn library_version(probe: &mut Probe, name: &str, version: Option<&String>) {
    if let Some(l) = probe.libraries.iter_mut().find(|l| l.name == name) {
        l.version = version.cloned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
