//! Asking the driver itself: `libcuda.so.1` through the driver binding
//! `verify` uses too (`sys::libcuda`).
//!
//! `cuDriverGetVersion` works without initialisation; `cuInit` then lists the
//! GPUs with their compute capability and memory. This runs in a child process
//! (`cudaenv doctor --probe-driver`, started by `facts::gather`) with
//! `CUDA_VISIBLE_DEVICES` removed, for two reasons: a broken driver can crash
//! or hang the caller, and doctor wants to see every GPU even when the user's
//! environment hides them (it reports the hiding separately).

use std::ffi::{CStr, c_char, c_int};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// `libcuda.so.1` could be loaded.
    pub loaded: bool,
    /// The file the loader picked.
    pub path: Option<String>,
    /// Why it could not be loaded.
    pub load_error: Option<String>,
    /// `cuDriverGetVersion`: the newest CUDA this driver supports (`13000`).
    pub driver_api: Option<i32>,
    /// `cuInit` failure, by CUDA error name (`CUDA_ERROR_NO_DEVICE`).
    pub init_error: Option<String>,
    pub gpus: Vec<Gpu>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// `9.0`.
    pub compute_capability: Option<String>,
    pub memory_mib: Option<u64>,
    /// `libcuda` or `nvidia-smi`.
    pub source: String,
}

/// Loads libcuda and asks it everything doctor needs, through the one
/// driver binding (`sys::libcuda`). Never panics on a bad driver.
pub fn probe() -> Probe {
    use crate::machine::libcuda::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as CC_MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as CC_MINOR, Driver,
    };
    let mut p = Probe::default();
    let loaded = match crate::machine::libcuda::open() {
        Ok(l) => l,
        Err(e) => {
            p.load_error = Some(e);
            return p;
        }
    };
    p.loaded = true;
    // The file itself (`libcuda.so.580.95.05`), not the soname's link.
    p.path = loaded
        .path
        .as_ref()
        .map(|l| std::fs::canonicalize(l).unwrap_or_else(|_| l.clone()))
        .map(|l| l.display().to_string());
    let d = match Driver::bind(loaded) {
        Ok(d) => d,
        Err(e) => {
            p.init_error = Some(format!("libcuda lacks a driver API function: {e}"));
            return p;
        }
    };
    // SAFETY: the table's signatures are cuda.h's; only valid out-pointers
    // and buffers of the stated length are passed.
    unsafe {
        let err_name = |code: c_int| -> String {
            let mut s: *const c_char = std::ptr::null();
            if (d.cuGetErrorName)(code, &mut s) == 0 && !s.is_null() {
                return CStr::from_ptr(s).to_string_lossy().into_owned();
            }
            format!("CUDA error {code}")
        };
        let mut v = 0;
        if (d.cuDriverGetVersion)(&mut v) == 0 {
            p.driver_api = Some(v);
        }
        let rc = (d.cuInit)(0);
        if rc != 0 {
            p.init_error = Some(err_name(rc));
            return p;
        }
        let mut n = 0;
        let rc = (d.cuDeviceGetCount)(&mut n);
        if rc != 0 {
            p.init_error = Some(err_name(rc));
            return p;
        }
        for i in 0..n.clamp(0, 64) {
            let mut dev = 0;
            if (d.cuDeviceGet)(&mut dev, i) != 0 {
                continue;
            }
            let mut buf = [0 as c_char; 256];
            let gpu_name =
                if (d.cuDeviceGetName)(buf.as_mut_ptr(), buf.len() as c_int - 1, dev) == 0 {
                    CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
                } else {
                    "unknown".into()
                };
            let (mut major, mut minor) = (0, 0);
            let cc = ((d.cuDeviceGetAttribute)(&mut major, CC_MAJOR, dev) == 0
                && (d.cuDeviceGetAttribute)(&mut minor, CC_MINOR, dev) == 0)
                .then(|| format!("{major}.{minor}"));
            let mut bytes = 0usize;
            let memory_mib = ((d.cuDeviceTotalMem_v2)(&mut bytes, dev) == 0)
                .then_some((bytes / (1024 * 1024)) as u64);
            p.gpus.push(Gpu {
                index: i as u32,
                name: gpu_name,
                compute_capability: cc,
                memory_mib,
                source: "libcuda".into(),
            });
        }
    }
    p
}
