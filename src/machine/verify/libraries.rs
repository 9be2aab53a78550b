//! The checks of the libraries beside the toolkit: NCCL and TensorRT.
//!
//! They run when the version under test carries the library (its recorded
//! components say so), in the same child as the GEMMs, and load it by soname
//! as frameworks do. Without a GPU each answers its version call
//! (`ncclGetVersion`, `getInferLibVersion`), which proves the loader found a
//! working build. With GPUs:
//!
//! - NCCL runs one all-reduce (sum, fp32) over the GPUs `--device` selected:
//!   one GPU (a communicator of one, which still launches NCCL's kernels) or
//!   all of them in one process (`ncclCommInitAll`, the single-process
//!   multi-GPU mode NCCL's own tests use). Rank r contributes
//!   `(r + 1) · (i mod 7 + 1)` at element i, small integers whose sums are
//!   exact in fp32, so the result is compared for equality.
//! - TensorRT creates a builder on the first GPU, then builds a small
//!   engine, runs it there and compares its output with the host's
//!   (`tensorrt`, which calls TensorRT's C++ classes through their vtables).
//!
//! What each found is a plain record in the probe (`NcclResult`,
//! `TensorrtResult`) that `diagnose` judges through `problems` and
//! `warnings`.

#![allow(non_snake_case)]

use crate::error::MachineError;
use std::ffi::{c_char, c_int, c_void};

use serde::{Deserialize, Serialize};

use super::ffi::{self, Runtime};
pub use super::tensorrt::{Tensorrt, TensorrtResult, run_tensorrt};
use crate::os::dylib::api;
use crate::spec::{Libraries, Library};

pub type NcclComm = *mut c_void;

api! {
    /// NCCL (`libnccl.so.2`).
    Nccl {
        ncclGetVersion: fn(*mut c_int) -> c_int;
        ncclGetErrorString: fn(c_int) -> *const c_char;
        ncclCommInitAll: fn(*mut NcclComm, c_int, *const c_int) -> c_int;
        ncclCommDestroy: fn(NcclComm) -> c_int;
        ncclGroupStart: fn() -> c_int;
        ncclGroupEnd: fn() -> c_int;
        ncclAllReduce: fn(*const c_void, *mut c_void, usize, c_int, c_int, NcclComm, ffi::CudaStream) -> c_int;
    }
}

const NCCL_FLOAT32: c_int = 7;
const NCCL_SUM: c_int = 0;

/// Elements per GPU of the all-reduce: 4 MiB of fp32, enough to take
/// NCCL's ring/tree paths rather than only its smallest-message one.
pub const NCCL_COUNT: usize = 1 << 20;

/// What the NCCL check does, decided from the stack and the GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NcclPlan {
    /// The stack carries no NCCL.
    Skip,
    /// Load it and ask its version (no GPU to run on).
    VersionOnly,
    /// And all-reduce over these devices.
    AllReduce { devices: Vec<u32>, count: usize },
}

pub fn nccl_plan(libs: &Libraries, selected: &[u32]) -> NcclPlan {
    if libs.get(Library::Nccl).is_none() {
        NcclPlan::Skip
    } else if selected.is_empty() {
        NcclPlan::VersionOnly
    } else {
        NcclPlan::AllReduce {
            devices: selected.to_vec(),
            count: NCCL_COUNT,
        }
    }
}

/// What the NCCL check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NcclResult {
    /// `2.21.5`, from `ncclGetVersion`.
    pub version: Option<String>,
    /// The GPUs the all-reduce ran over (empty: none ran).
    #[serde(default)]
    pub devices: Vec<u32>,
    /// Elements that came back wrong, of `checked`.
    #[serde(default)]
    pub wrong: usize,
    #[serde(default)]
    pub checked: usize,
    /// The first failing call and its message.
    pub error: Option<String>,
    pub milliseconds: Option<f64>,
}

/// Rank `rank`'s contribution at element `i`.
pub fn contribution(rank: usize, i: usize) -> f32 {
    ((rank + 1) * (i % 7 + 1)) as f32
}

/// The all-reduced value at element `i` over `ranks` GPUs.
pub fn expected_sum(ranks: usize, i: usize) -> f32 {
    (ranks * (ranks + 1) / 2 * (i % 7 + 1)) as f32
}

/// How many elements of each rank's result differ from the exact sum.
pub fn count_wrong(results: &[Vec<f32>]) -> (usize, usize) {
    let ranks = results.len();
    let mut wrong = 0;
    let mut checked = 0;
    for r in results {
        for (i, x) in r.iter().enumerate() {
            checked += 1;
            if *x != expected_sum(ranks, i) {
                wrong += 1;
            }
        }
    }
    (wrong, checked)
}

/// `ncclGetVersion`'s integer (`21905`, or `2905` before 2.9) as text.
pub fn nccl_version(code: c_int) -> String {
    let c = code.max(0);
    if c >= 10000 {
        format!("{}.{}.{}", c / 10000, c / 100 % 100, c % 100)
    } else {
        format!("{}.{}.{}", c / 1000, c / 100 % 10, c % 100)
    }
}

fn nccl_error(n: &Nccl, call: &str, r: c_int) -> String {
    // SAFETY: NCCL returns a static string for every result code.
    let msg = unsafe { ffi::cstr((n.ncclGetErrorString)(r)) };
    format!("{call} returned {r} ({msg})")
}

/// The version call, then the all-reduce the plan asks for.
pub fn run_nccl(rt: Option<&Runtime>, n: &Nccl, plan: &NcclPlan) -> NcclResult {
    let mut out = NcclResult::default();
    let mut v = 0;
    // SAFETY: out-pointer to a local.
    let r = unsafe { (n.ncclGetVersion)(&mut v) };
    if r != 0 {
        out.error = Some(nccl_error(n, "ncclGetVersion", r));
        return out;
    }
    out.version = Some(nccl_version(v));
    let (NcclPlan::AllReduce { devices, count }, Some(rt)) = (plan, rt) else {
        return out;
    };
    if let Err(e) = all_reduce(rt, n, devices, *count, &mut out) {
        out.error = Some(e);
    }
    out
}

fn all_reduce(
    rt: &Runtime,
    n: &Nccl,
    devices: &[u32],
    count: usize,
    out: &mut NcclResult,
) -> Result<(), String> {
    let ranks = devices.len();
    let devs: Vec<c_int> = devices.iter().map(|d| *d as c_int).collect();
    let mut comms: Vec<NcclComm> = vec![std::ptr::null_mut(); ranks];
    // SAFETY: one communicator slot per device listed.
    let r = unsafe { (n.ncclCommInitAll)(comms.as_mut_ptr(), ranks as c_int, devs.as_ptr()) };
    if r != 0 {
        return Err(nccl_error(n, "ncclCommInitAll", r));
    }
    let bytes = count * std::mem::size_of::<f32>();
    let mut buffers: Vec<(c_int, *mut c_void)> = Vec::new();
    let result = (|| {
        for (rank, d) in devs.iter().enumerate() {
            // SAFETY: a device NCCL just opened a communicator on.
            let r = unsafe { (rt.cudaSetDevice)(*d) };
            if r != 0 {
                return Err(rt.error("cudaSetDevice", r));
            }
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: out-pointer to a local; freed below.
            let r = unsafe { (rt.cudaMalloc)(&mut p, bytes) };
            if r != 0 {
                return Err(rt.error("cudaMalloc", r));
            }
            buffers.push((*d, p));
            let host: Vec<f32> = (0..count).map(|i| contribution(rank, i)).collect();
            // SAFETY: `p` holds `bytes`, as does `host`.
            let r = unsafe {
                (rt.cudaMemcpy)(
                    p,
                    host.as_ptr().cast(),
                    bytes,
                    ffi::CUDA_MEMCPY_HOST_TO_DEVICE,
                )
            };
            if r != 0 {
                return Err(rt.error("cudaMemcpy", r));
            }
        }
        let started = std::time::Instant::now();
        // SAFETY: a group around one in-place all-reduce per communicator,
        // each on its own device's buffer, on the default stream.
        unsafe {
            let r = (n.ncclGroupStart)();
            if r != 0 {
                return Err(nccl_error(n, "ncclGroupStart", r));
            }
            for (rank, (_, p)) in buffers.iter().enumerate() {
                let r = (n.ncclAllReduce)(
                    *p,
                    *p,
                    count,
                    NCCL_FLOAT32,
                    NCCL_SUM,
                    comms[rank],
                    std::ptr::null_mut(),
                );
                if r != 0 {
                    (n.ncclGroupEnd)();
                    return Err(nccl_error(n, "ncclAllReduce", r));
                }
            }
            let r = (n.ncclGroupEnd)();
            if r != 0 {
                return Err(nccl_error(n, "ncclGroupEnd", r));
            }
        }
        let mut results = Vec::new();
        for (d, p) in &buffers {
            let mut host = vec![0f32; count];
            // SAFETY: device `d` owns `p`; the copy waits for its stream.
            let r = unsafe {
                (rt.cudaSetDevice)(*d);
                (rt.cudaMemcpy)(
                    host.as_mut_ptr().cast(),
                    *p,
                    bytes,
                    ffi::CUDA_MEMCPY_DEVICE_TO_HOST,
                )
            };
            if r != 0 {
                return Err(rt.error("cudaMemcpy", r));
            }
            results.push(host);
        }
        out.milliseconds = Some(started.elapsed().as_secs_f64() * 1e3);
        out.devices = devices.to_vec();
        (out.wrong, out.checked) = count_wrong(&results);
        Ok(())
    })();
    for (d, p) in buffers {
        // SAFETY: allocated above on device `d`.
        unsafe {
            (rt.cudaSetDevice)(d);
            (rt.cudaFree)(p);
        }
    }
    for c in comms {
        // SAFETY: each was initialised by ncclCommInitAll.
        unsafe { (n.ncclCommDestroy)(c) };
    }
    result
}

/// The problems the NCCL and TensorRT results show: a failed call, or an
/// all-reduce whose sums are not exact.
pub fn problems(nccl: Option<&NcclResult>, trt: Option<&TensorrtResult>) -> Vec<MachineError> {
    let mut out = Vec::new();
    if let Some(n) = nccl {
        let check = if n.devices.is_empty() {
            "NCCL".to_string()
        } else {
            format!("NCCL all-reduce over GPUs {:?}", n.devices)
        };
        if let Some(e) = &n.error {
            out.push(MachineError::CheckFailed {
                check,
                detail: e.clone(),
            });
        } else if n.wrong > 0 {
            out.push(MachineError::WrongResult {
                check,
                detail: format!(
                    "{} of {} summed elements differ from the exact sum",
                    n.wrong, n.checked
                ),
            });
        }
    }
    if let Some(t) = trt {
        out.extend(super::tensorrt::problems(t));
    }
    out
}

/// The checks that did not run for want of knowledge, as warnings.
pub fn warnings(trt: Option<&TensorrtResult>) -> Vec<String> {
    trt.map(super::tensorrt::warnings).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diagnostic;
    use crate::machine::verify::tensorrt::tensorrt_version;

    #[test]
    fn results_become_problems_only_when_something_failed() {
        let ok = NcclResult {
            version: Some("2.21.5".into()),
            devices: vec![0, 1],
            checked: 2 << 20,
            milliseconds: Some(1.0),
            ..NcclResult::default()
        };
        assert!(problems(Some(&ok), None).is_empty());
        let wrong = NcclResult {
            wrong: 3,
            ..ok.clone()
        };
        let p = problems(Some(&wrong), None);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].exit_code(), crate::error::ExitCode::WrongResult);
        assert!(p[0].to_string().contains("GPUs [0, 1]"), "{}", p[0]);
        let failed = NcclResult {
            error: Some("ncclCommInitAll returned 1 (unhandled cuda error)".into()),
            devices: vec![],
            ..ok
        };
        assert_eq!(
            problems(Some(&failed), None)[0].exit_code(),
            crate::error::ExitCode::Failure
        );
        let trt = TensorrtResult {
            version: Some("10.1.0".into()),
            device: Some(0),
            builder: Some(false),
            error: Some("createInferBuilder returned no builder".into()),
            ..TensorrtResult::default()
        };
        assert!(
            problems(None, Some(&trt))[0]
                .to_string()
                .contains("TensorRT builder on GPU 0")
        );
        let trt_ok = TensorrtResult {
            builder: Some(true),
            error: None,
            ..trt
        };
        assert!(problems(None, Some(&trt_ok)).is_empty());
    }

    fn with_nccl() -> Libraries {
        [(Library::Nccl, "2.21.5".parse().unwrap())]
            .into_iter()
            .collect()
    }

    #[test]
    fn the_nccl_check_runs_only_for_a_stack_with_nccl_over_the_selected_gpus() {
        assert_eq!(nccl_plan(&Libraries::default(), &[0, 1]), NcclPlan::Skip);
        assert_eq!(nccl_plan(&with_nccl(), &[]), NcclPlan::VersionOnly);
        assert_eq!(
            nccl_plan(&with_nccl(), &[3]),
            NcclPlan::AllReduce {
                devices: vec![3],
                count: NCCL_COUNT
            }
        );
        assert_eq!(
            nccl_plan(&with_nccl(), &[0, 1, 2, 3, 4, 5, 6, 7]),
            NcclPlan::AllReduce {
                devices: (0..8).collect(),
                count: NCCL_COUNT
            }
        );
    }

    #[test]
    fn all_reduce_results_are_exact_and_any_wrong_element_counts() {
        for ranks in [1usize, 2, 8] {
            let good: Vec<Vec<f32>> = (0..ranks)
                .map(|_| (0..1000).map(|i| expected_sum(ranks, i)).collect())
                .collect();
            assert_eq!(count_wrong(&good), (0, 1000 * ranks));
            // The sum of the contributions is what the check expects.
            let i = 12;
            let sum: f32 = (0..ranks).map(|r| contribution(r, i)).sum();
            assert_eq!(sum, expected_sum(ranks, i));
            let mut bad = good.clone();
            bad[ranks - 1][999] += 1.0;
            bad[0][0] = 0.0;
            assert_eq!(count_wrong(&bad), (2, 1000 * ranks));
        }
        // Sums at full size stay exact in fp32 (below 2^24).
        assert!(expected_sum(8, 6) < (1u32 << 24) as f32);
    }

    #[test]
    fn version_integers_read_as_their_libraries_write_them() {
        assert_eq!(nccl_version(21903), "2.19.3");
        assert_eq!(nccl_version(23203), "2.32.3");
        assert_eq!(nccl_version(2804), "2.8.4");
        assert_eq!(tensorrt_version(100100), "10.1.0");
        assert_eq!(tensorrt_version(110400), "11.4.0");
        assert_eq!(tensorrt_version(8601), "8.6.1");
    }
}
