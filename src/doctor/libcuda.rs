//! Asking the driver itself: `libcuda.so.1` through `libloading`.
//!
//! `cuDriverGetVersion` works without initialisation; `cuInit` then lists the
//! GPUs with their compute capability and memory. This runs in a child process
//! (`cudaenv doctor --probe-driver`, started by `facts::gather`) with
//! `CUDA_VISIBLE_DEVICES` removed, for two reasons: a broken driver can crash
//! or hang the caller, and doctor wants to see every GPU even when the user's
//! environment hides them (it reports the hiding separately).

use std::ffi::{CStr, c_char, c_int, c_uint};

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

type CuInit = unsafe extern "C" fn(c_uint) -> c_int;
type CuIntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
type CuDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type CuDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
type CuDeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> c_int;
type CuGetErrorName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;

const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;

/// Loads libcuda and asks it everything doctor needs. Never panics on a bad driver.
pub fn probe() -> Probe {
    let mut p = Probe::default();
    // SAFETY: loading the NVIDIA driver library runs its initialisers, which is
    // what every CUDA program does; the symbols below have the documented
    // driver-API signatures (cuda.h), and we pass valid out-pointers only.
    let lib = match unsafe { libloading::Library::new("libcuda.so.1") } {
        Ok(l) => l,
        Err(e) => {
            p.load_error = Some(e.to_string());
            return p;
        }
    };
    p.loaded = true;
    p.path = loaded_path("libcuda.so");
    unsafe {
        let err_name = |code: c_int| -> String {
            if let Ok(f) = lib.get::<CuGetErrorName>(b"cuGetErrorName\0") {
                let mut s: *const c_char = std::ptr::null();
                if f(code, &mut s) == 0 && !s.is_null() {
                    return CStr::from_ptr(s).to_string_lossy().into_owned();
                }
            }
            format!("CUDA error {code}")
        };
        if let Ok(f) = lib.get::<CuIntOut>(b"cuDriverGetVersion\0") {
            let mut v = 0;
            if f(&mut v) == 0 {
                p.driver_api = Some(v);
            }
        }
        let Ok(init) = lib.get::<CuInit>(b"cuInit\0") else {
            p.init_error = Some("cuInit not found in libcuda".into());
            return p;
        };
        let rc = init(0);
        if rc != 0 {
            p.init_error = Some(err_name(rc));
            return p;
        }
        let (Ok(count), Ok(get), Ok(name), Ok(attr)) = (
            lib.get::<CuIntOut>(b"cuDeviceGetCount\0"),
            lib.get::<CuDeviceGet>(b"cuDeviceGet\0"),
            lib.get::<CuDeviceGetName>(b"cuDeviceGetName\0"),
            lib.get::<CuDeviceGetAttribute>(b"cuDeviceGetAttribute\0"),
        ) else {
            p.init_error = Some("libcuda lacks the device query functions".into());
            return p;
        };
        let mem = lib.get::<CuDeviceTotalMem>(b"cuDeviceTotalMem_v2\0").ok();
        let mut n = 0;
        let rc = count(&mut n);
        if rc != 0 {
            p.init_error = Some(err_name(rc));
            return p;
        }
        for i in 0..n.clamp(0, 64) {
            let mut dev = 0;
            if get(&mut dev, i) != 0 {
                continue;
            }
            let mut buf = [0 as c_char; 256];
            let gpu_name = if name(buf.as_mut_ptr(), buf.len() as c_int - 1, dev) == 0 {
                CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
            } else {
                "unknown".into()
            };
            let (mut major, mut minor) = (0, 0);
            let cc = (attr(&mut major, ATTR_CC_MAJOR, dev) == 0
                && attr(&mut minor, ATTR_CC_MINOR, dev) == 0)
                .then(|| format!("{major}.{minor}"));
            let memory_mib = mem.as_ref().and_then(|f| {
                let mut bytes = 0usize;
                (f(&mut bytes, dev) == 0).then_some((bytes / (1024 * 1024)) as u64)
            });
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

/// The path of a loaded library, from this process's memory map.
fn loaded_path(needle: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.rsplit('/').next().is_some_and(|f| f.starts_with(needle)))
        .map(str::to_string)
}
