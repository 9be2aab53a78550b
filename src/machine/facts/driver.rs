//! Asking the driver itself: `libcuda.so.1` through the one driver binding
//! (`machine::libcuda`), in whichever child process asks it.
//!
//! `cuDriverGetVersion` works without initialisation; `cuInit` then lists the
//! GPUs with their compute capability, memory and multiprocessors (`ask`).
//! doctor, the install guard, `compat` and `explain` ask in the driver-probe
//! child (`cudaenv doctor --probe-driver`, started by `probe_in_child` with
//! `CUDA_VISIBLE_DEVICES` removed, to see every GPU even when the user's
//! environment hides them); verify's child asks the same way, in the
//! activated environment, and keeps the driver loaded for its checks.

use std::ffi::{CStr, OsStr, c_char, c_int};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::context::env_vars;
use crate::machine::libcuda::{
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as CC_MAJOR,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as CC_MINOR,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT as SMS, Driver,
};

/// The driver-probe child's arguments.
pub const PROBE_ARGS: [&str; 2] = ["doctor", "--probe-driver"];

/// How long the driver-probe child may take (a driver stuck in `cuInit`
/// never returns).
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The driver-probe child's answer.
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

/// One GPU, as the driver (or nvidia-smi) names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// `9.0`.
    pub compute_capability: Option<String>,
    pub memory_mib: Option<u64>,
    /// Streaming multiprocessors, where the driver said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiprocessors: Option<u32>,
    /// `libcuda` or `nvidia-smi`.
    pub source: String,
}

/// A driver call that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub call: &'static str,
    pub code: i32,
    /// By CUDA error name (`CUDA_ERROR_NO_DEVICE`).
    pub name: String,
}

/// What the bound driver says, asked in this process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// `cuDriverGetVersion` (`13000`).
    pub driver_api: Option<i32>,
    /// `cuInit` or `cuDeviceGetCount` failed: the GPUs are unknown.
    pub failed: Option<Failed>,
    pub gpus: Vec<Gpu>,
}

/// The loaded driver library: its table, and the file itself
/// (`libcuda.so.580.95.05`, not the soname's link).
pub struct Loaded {
    pub driver: Driver,
    pub file: Option<PathBuf>,
}

/// Loads the driver the loader finds and binds its table; `Err` says why not.
pub fn load() -> Result<Loaded, LoadError> {
    let lib = crate::machine::libcuda::open().map_err(LoadError::NotLoaded)?;
    let file = lib
        .path
        .as_ref()
        .map(|l| std::fs::canonicalize(l).unwrap_or_else(|_| l.clone()));
    match Driver::bind(lib) {
        Ok(driver) => Ok(Loaded { driver, file }),
        Err(error) => Err(LoadError::Incomplete { file, error }),
    }
}

/// Why the driver could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// No `libcuda.so.1` loads.
    NotLoaded(String),
    /// It loads (from `file`) but lacks a function of the table.
    Incomplete {
        file: Option<PathBuf>,
        error: String,
    },
}

/// A CUDA error code by its name (`CUDA_ERROR_NO_DEVICE`).
pub fn error_name(d: &Driver, code: c_int) -> String {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string or leaves NULL.
    unsafe {
        if (d.cuGetErrorName)(code, &mut s) == 0 && !s.is_null() {
            return CStr::from_ptr(s).to_string_lossy().into_owned();
        }
    }
    format!("CUDA error {code}")
}

/// The driver's version and its GPUs. Never panics on a bad driver.
pub fn ask(d: &Driver) -> Answer {
    let mut a = Answer::default();
    let failed = |call, code| Failed {
        call,
        code,
        name: error_name(d, code),
    };
    // SAFETY: the table's signatures are cuda.h's; only valid out-pointers
    // and buffers of the stated length are passed.
    unsafe {
        let mut v = 0;
        if (d.cuDriverGetVersion)(&mut v) == 0 {
            a.driver_api = Some(v);
        }
        let rc = (d.cuInit)(0);
        if rc != 0 {
            a.failed = Some(failed("cuInit", rc));
            return a;
        }
        let mut n = 0;
        let rc = (d.cuDeviceGetCount)(&mut n);
        if rc != 0 {
            a.failed = Some(failed("cuDeviceGetCount", rc));
            return a;
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
            let attr = |which| {
                let mut x = 0;
                ((d.cuDeviceGetAttribute)(&mut x, which, dev) == 0).then_some(x)
            };
            let cc = attr(CC_MAJOR)
                .zip(attr(CC_MINOR))
                .map(|(major, minor)| format!("{major}.{minor}"));
            let mut bytes = 0usize;
            let memory_mib = ((d.cuDeviceTotalMem_v2)(&mut bytes, dev) == 0)
                .then_some((bytes / (1024 * 1024)) as u64);
            a.gpus.push(Gpu {
                index: i as u32,
                name: gpu_name,
                compute_capability: cc,
                memory_mib,
                multiprocessors: attr(SMS).map(|s| s.max(0) as u32),
                source: "libcuda".into(),
            });
        }
    }
    a
}

/// The driver-probe child's work: load libcuda in this process and ask it.
pub fn probe() -> Probe {
    let mut p = Probe::default();
    let loaded = match load() {
        Ok(l) => l,
        Err(LoadError::NotLoaded(e)) => {
            p.load_error = Some(e);
            return p;
        }
        Err(LoadError::Incomplete { file, error }) => {
            p.loaded = true;
            p.path = file.map(|f| f.display().to_string());
            p.init_error = Some(format!("libcuda lacks a driver API function: {error}"));
            return p;
        }
    };
    p.loaded = true;
    p.path = loaded.file.as_ref().map(|f| f.display().to_string());
    let a = ask(&loaded.driver);
    p.driver_api = a.driver_api;
    p.init_error = a.failed.map(|f| f.name);
    p.gpus = a.gpus;
    p
}

/// Runs the driver-probe child (`exe doctor --probe-driver`) with the
/// context's environment less `CUDA_VISIBLE_DEVICES`; what went wrong is
/// said in its `load_error`.
pub fn probe_in_child(ctx: &Context, exe: &Path) -> Probe {
    let mut cmd = super::child::command(exe, &PROBE_ARGS.map(OsStr::new), ctx.vars().iter());
    cmd.env_remove(env_vars::CUDA_VISIBLE_DEVICES);
    let failed = |loaded, why: String| Probe {
        loaded,
        load_error: Some(format!("the driver probe {why}")),
        ..Probe::default()
    };
    use super::child::Stop;
    match super::child::ask::<Probe>(cmd, PROBE_TIMEOUT, Default::default()) {
        Ok(ran) => match ran.answer {
            Ok(p) => p,
            // It got as far as loading a driver, which then crashed it.
            Err(
                stop @ Stop::Ended {
                    unreadable: None, ..
                },
            ) => failed(
                true,
                format!("{}: {}", stop.how(PROBE_TIMEOUT), ran.stderr.trim()),
            ),
            Err(stop) => failed(false, stop.how(PROBE_TIMEOUT)),
        },
        Err(e) => failed(false, format!("cannot start: {e}")),
    }
}
