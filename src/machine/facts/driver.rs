//! Asking the driver itself: `libcuda.so.1` through the one driver binding
//! (`machine::libcuda`), in whichever child process asks it.
//!
//! `load` opens and binds the library, `ask` asks it: `cuDriverGetVersion`
//! works without initialisation; `cuInit` then lists the GPUs with their
//! compute capability, memory and multiprocessors. What they say is one
//! `Probe`, whoever asks: doctor, the install guard, `compat` and `explain`
//! ask in the driver-probe child (`cudaenv doctor --probe-driver`, started
//! by `probe_in_child` with `CUDA_VISIBLE_DEVICES` removed, to see every GPU
//! even when the user's environment hides them); verify's child asks the
//! same way, in the activated environment, keeps the driver loaded for its
//! checks and adds NVML's version and GPU count.
//!
//! A failure is kept whole (`ApiError`: the call, its status code and name),
//! and a library lacking a function of the table is told apart from one
//! that does not load (`incomplete`). Each reader writes the JSON it always
//! wrote: doctor's `libcuda` object and the probe child's answer are
//! `Probe`'s serde form (`LibcudaJson`, the failure by its name), verify's
//! `driver` object is `verify::DriverJson`; what each says about a library
//! lacking a function (doctor: an initialisation error; verify: no usable
//! driver) is decided from the same fields.

use std::ffi::{CStr, OsStr, c_char, c_int};
use std::path::Path;
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

/// What `libcuda` says, asked in whichever process loads it: the one type
/// of the driver's facts, in two views. Its own serde form is the
/// driver-probe child's answer and doctor's `libcuda` object (`loaded`,
/// `path`, `load_error`, `driver_api`, `init_error` by name, `gpus`:
/// `LibcudaJson`); verify writes its `driver` object from the same value
/// (`verify::DriverJson`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "LibcudaJson", into = "LibcudaJson")]
pub struct Probe {
    /// `libcuda.so.1` could be loaded.
    pub loaded: bool,
    /// The file the loader picked.
    pub path: Option<String>,
    /// Why it could not be loaded.
    pub load_error: Option<String>,
    /// It loaded but lacks a function of the table: which, as binding said.
    pub incomplete: Option<String>,
    /// `cuDriverGetVersion`: the newest CUDA this driver supports (`13000`).
    pub driver_api: Option<i32>,
    /// `cuInit` or `cuDeviceGetCount` failed: the GPUs are unknown.
    pub init_error: Option<ApiError>,
    /// The GPUs the driver listed (verify reports them as its `devices`
    /// instead, and leaves this empty).
    pub gpus: Vec<Gpu>,
    /// The driver's version (`580.159.04`), where the asker read it (verify:
    /// the kernel module's, else NVML's); doctor reads the versions itself.
    pub version: Option<String>,
    /// GPUs the driver has whatever `CUDA_VISIBLE_DEVICES` hides (NVML or
    /// the kernel module), where the asker counted them (verify).
    pub gpus_present: Option<u32>,
}

impl Probe {
    /// Why the driver cannot be used: it does not load, or lacks a function.
    pub fn unusable(&self) -> Option<&str> {
        self.load_error.as_deref().or(self.incomplete.as_deref())
    }

    /// What went wrong once the library loaded, as doctor says it: the
    /// function it lacks, else the name of the error `cuInit` returned.
    pub fn init_failure(&self) -> Option<String> {
        match (&self.incomplete, &self.init_error) {
            (Some(lacks), _) => Some(format!("{LACKS}{lacks}")),
            (None, Some(e)) => Some(e.name.clone()),
            (None, None) => None,
        }
    }
}

/// How doctor's `init_error` introduces a function the library lacks.
const LACKS: &str = "libcuda lacks a driver API function: ";

/// `Probe` as doctor's JSON and the probe child write it: only these
/// fields, in this order, the failure by its name alone.
#[derive(Serialize, Deserialize)]
struct LibcudaJson {
    loaded: bool,
    path: Option<String>,
    load_error: Option<String>,
    driver_api: Option<i32>,
    init_error: Option<String>,
    gpus: Vec<Gpu>,
}

impl From<Probe> for LibcudaJson {
    fn from(p: Probe) -> LibcudaJson {
        LibcudaJson {
            init_error: p.init_failure(),
            loaded: p.loaded,
            path: p.path,
            load_error: p.load_error,
            driver_api: p.driver_api,
            gpus: p.gpus,
        }
    }
}

impl From<LibcudaJson> for Probe {
    fn from(j: LibcudaJson) -> Probe {
        let (incomplete, init_error) = match j.init_error {
            Some(e) => match e.strip_prefix(LACKS) {
                Some(lacks) => (Some(lacks.to_string()), None),
                None => (None, Some(ApiError::named(e))),
            },
            None => (None, None),
        };
        Probe {
            loaded: j.loaded,
            path: j.path,
            load_error: j.load_error,
            incomplete,
            driver_api: j.driver_api,
            init_error,
            gpus: j.gpus,
            version: None,
            gpus_present: None,
        }
    }
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

/// A failed call into a CUDA library (the driver's here; verify's runtime
/// and libraries too), by its status code and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The function that failed.
    pub call: String,
    pub code: i32,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl ApiError {
    /// A failure known by its name only, as doctor's JSON records it: no
    /// call, and code 0.
    pub fn named(name: impl Into<String>) -> ApiError {
        ApiError {
            call: String::new(),
            code: 0,
            name: name.into(),
            message: String::new(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} returned {} ({})", self.call, self.name, self.code)?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// What the bound driver says, asked in this process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// `cuDriverGetVersion` (`13000`).
    pub driver_api: Option<i32>,
    /// `cuInit` or `cuDeviceGetCount` failed: the GPUs are unknown.
    pub failed: Option<ApiError>,
    pub gpus: Vec<Gpu>,
}

/// Loads the driver the loader finds and binds its table, recording in `p`
/// the file (`libcuda.so.580.95.05`, not the soname's link), or why it
/// cannot be used; `None` then.
pub fn load(p: &mut Probe) -> Option<Driver> {
    let lib = match crate::machine::libcuda::open() {
        Ok(lib) => lib,
        Err(e) => {
            p.load_error = Some(e);
            return None;
        }
    };
    p.loaded = true;
    p.path = lib
        .path
        .as_ref()
        .map(|l| std::fs::canonicalize(l).unwrap_or_else(|_| l.clone()))
        .map(|f| f.display().to_string());
    match Driver::bind(lib) {
        Ok(driver) => Some(driver),
        Err(lacks) => {
            p.incomplete = Some(lacks);
            None
        }
    }
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
    let failed = |call: &str, code| ApiError {
        call: call.into(),
        code,
        name: error_name(d, code),
        message: String::new(),
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
    if let Some(driver) = load(&mut p) {
        let a = ask(&driver);
        p.driver_api = a.driver_api;
        p.init_error = a.failed;
        p.gpus = a.gpus;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// doctor's JSON, which is also the probe child's answer: its fields in
    /// its order, the failure by name, verify's additions left out; read
    /// back, it says the same.
    #[test]
    fn doctor_writes_its_fields_only() {
        let p = Probe {
            loaded: true,
            path: Some("/usr/lib/libcuda.so.580.159.04".into()),
            driver_api: Some(13000),
            init_error: Some(ApiError {
                call: "cuInit".into(),
                code: 100,
                name: "CUDA_ERROR_NO_DEVICE".into(),
                message: String::new(),
            }),
            version: Some("580.159.04".into()),
            gpus_present: Some(2),
            ..Probe::default()
        };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"loaded":true,"path":"/usr/lib/libcuda.so.580.159.04","load_error":null,"driver_api":13000,"init_error":"CUDA_ERROR_NO_DEVICE","gpus":[]}"#
        );
        let back: Probe = serde_json::from_str(&json).unwrap();
        assert_eq!(back.init_failure().as_deref(), Some("CUDA_ERROR_NO_DEVICE"));
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    /// A library lacking a function: unusable, an initialisation error to
    /// doctor, and read back whole.
    #[test]
    fn a_library_lacking_a_function_is_told_apart() {
        let p = Probe {
            loaded: true,
            path: Some("/usr/lib/libcuda.so.1".into()),
            incomplete: Some("undefined symbol: cuDeviceTotalMem_v2".into()),
            ..Probe::default()
        };
        assert_eq!(p.unusable(), Some("undefined symbol: cuDeviceTotalMem_v2"));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["init_error"],
            "libcuda lacks a driver API function: undefined symbol: cuDeviceTotalMem_v2"
        );
        assert_eq!(json["load_error"], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<Probe>(json).unwrap(), p);
    }
}
