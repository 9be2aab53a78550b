//! The cuBLAS checks on one GPU: a GEMM per dtype, checked, then timed.
//!
//! The protocol is in the module above (`probe`); each result is reported
//! as soon as it is known.

use std::ffi::{c_int, c_void};

use super::cuda::{DevBuf, Events, synchronize};
use super::{Corrupt, report, stage};
use crate::machine::verify::ffi::{self, Cublas, Runtime};
use crate::machine::verify::gemm::{self, HostMatrix};
use crate::machine::verify::{ApiError, CpuGemm, Dtype, GemmResult, Outcome, Probe};

/// Elements checked against an fp64 dot product, per GEMM.
const SAMPLES: usize = 256;
/// GPU time to spend on the timed repeats of one GEMM.
const TIMING_BUDGET_MS: f64 = 150.0;
const MIN_REPEATS: u32 = 5;
const MAX_REPEATS: u32 = 50;
const CPU_GEMM_SIZE: usize = 1024;

pub(super) fn cpu_gemm() -> CpuGemm {
    gemm::cpu_benchmark(CPU_GEMM_SIZE, 3)
}

pub(super) fn failed_gemm(device: u32, dtype: Dtype, size: usize, error: ApiError) -> GemmResult {
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

fn cublas_error(call: &str, code: c_int) -> ApiError {
    ApiError {
        call: call.into(),
        code,
        name: ffi::cublas_status_name(code).into(),
        message: String::new(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_checks(
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
    let (repeats, ms) = time(rt, run)?;
    result.median_ms = Some(ms);
    result.repeats = repeats;
    result.tflops = Some(gemm::flops(n) / (ms * 1e-3) / 1e12);
    Ok(result)
}

/// Times a GEMM that has passed: two warm-up runs, one timed run to size the
/// repeats to `TIMING_BUDGET_MS`, then the repeats, each between two events.
/// Returns the repeats and their median in milliseconds.
fn time(rt: &Runtime, run: impl Fn() -> Result<(), ApiError>) -> Result<(u32, f64), ApiError> {
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
    Ok((repeats, gemm::median(&mut times)))
}
