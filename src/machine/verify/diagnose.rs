//! From facts to problems: what went wrong, in the user's terms.
//!
//! Live results decide (a status code, a wrong number, a library from the
//! wrong directory); the compatibility tables (`crate::machine::compat`, the same data
//! `doctor` and the install guard use) explain and name the fix.
//! Each rule states a problem as a `MachineError`, so each has its message,
//! hint and exit code in one place; the diagnosis is the findings made of
//! them (`super::finding`), sorted so that the most fundamental one comes
//! first and gives the exit code (no driver explains everything after it).

use super::ffi;
use super::{ApiError, Expected, LibraryFacts, Origin, Outcome, Probe};
use crate::error::{Diagnostic, MachineError};
use crate::i18n::Msg;
use crate::machine::compat::{
    self, Alternative, ComputeCapability, DriverOs, DriverVersion, GpuFit,
};
use crate::machine::finding::Finding;
use crate::msg;
use crate::spec::Version;

/// What the facts show: the problems, most fundamental first, and what is
/// only worth a warning.
#[derive(Debug, Default)]
pub struct Diagnosis {
    pub problems: Vec<Finding>,
    pub warnings: Vec<String>,
}

/// The problems as the rules state them, while they are being found.
#[derive(Debug, Default)]
struct Found {
    problems: Vec<MachineError>,
    warnings: Vec<String>,
}

impl Found {
    fn has(&self, kind: &str) -> bool {
        self.problems.iter().any(|p| p.kind() == kind)
    }
}

/// Order of importance: the first problem decides the exit code.
fn rank(e: &MachineError) -> u8 {
    match e {
        MachineError::NoDriver { .. } => 0,
        MachineError::DriverTooOld { .. } => 1,
        MachineError::NoDevice { .. } => 2,
        MachineError::ArchUnsupported { .. } | MachineError::StackPredatesGpu { .. } => 3,
        MachineError::LibraryMissing { .. } => 4,
        MachineError::LibraryShadowed { .. } | MachineError::LibraryMismatch { .. } => 5,
        MachineError::WrongResult { .. } => 6,
        _ => 7,
    }
}

pub fn diagnose(expected: &Expected, probe: &Probe) -> Diagnosis {
    let mut d = Found::default();
    driver_problems(&mut d, probe);
    if probe.driver.unusable().is_none() {
        runtime_problems(&mut d, probe);
    }
    if let Some(k) = probe.missing_device {
        d.problems.push(missing_device(probe, k));
    }
    d.problems.extend(architecture(expected, probe));
    for lib in &probe.libraries {
        library_problems(&mut d, expected, lib);
    }
    check_problems(&mut d, probe);
    d.problems.extend(super::libraries::problems(
        probe.nccl.as_ref(),
        probe.tensorrt.as_ref(),
    ));
    d.warnings
        .extend(super::libraries::warnings(probe.tensorrt.as_ref()));

    d.problems.sort_by_key(rank);
    Diagnosis {
        problems: d.problems.iter().map(super::finding).collect(),
        warnings: d.warnings,
    }
}

/// No driver, or one that does not initialise.
fn driver_problems(d: &mut Found, probe: &Probe) {
    let driver = &probe.driver;
    if let Some(err) = driver.unusable() {
        d.problems.push(MachineError::NoDriver {
            detail: format!(
                "{} could not be loaded ({err})",
                crate::machine::libcuda::file_name()
            ),
        });
    } else if let Some(e) = &driver.init_error {
        if e.code == ffi::CUDA_ERROR_NO_DEVICE {
            d.problems.push(no_device(probe, format!("{e}")));
        } else {
            d.problems.push(MachineError::CheckFailed {
                check: "driver initialisation".into(),
                detail: e.to_string(),
            });
        }
    }
}

/// The runtime against the driver that loaded: too old a driver, a runtime
/// that failed, no GPU visible.
fn runtime_problems(d: &mut Found, probe: &Probe) {
    let driver = &probe.driver;
    let driver_cuda = driver.driver_api.map(super::probe::api_version);
    let runtime = probe.runtime.version.as_ref();
    // The Linux column: WSL2 drivers report Windows numbering, which runs
    // ahead of the Linux floors, and the live checks below decide anyway.
    let floor = runtime.and_then(|r| compat::driver::min_driver(r, DriverOs::Linux));
    let installed = driver.version.as_deref().and_then(DriverVersion::parse);
    let too_old_by_table = matches!((&installed, &floor), (Some(i), Some(f)) if i < f);
    let too_old_by_api =
        matches!((&driver_cuda, runtime), (Some(dc), Some(r)) if dc.major() < r.major());
    let insufficient = probe
        .runtime
        .error
        .as_ref()
        .is_some_and(|e| e.code == ffi::CUDA_ERROR_INSUFFICIENT_DRIVER);
    if let Some(r) = runtime
        && (insufficient || too_old_by_table || too_old_by_api)
    {
        d.problems.push(MachineError::DriverTooOld {
            driver: driver.version.clone(),
            driver_cuda: driver_cuda
                .as_ref()
                .map_or_else(|| "an unknown version".into(), Version::to_string),
            runtime: r.to_string(),
            min_driver: floor
                .as_ref()
                .map_or_else(|| "a newer one".into(), DriverVersion::to_string),
        });
    } else if let (Some(dc), Some(r)) = (&driver_cuda, runtime)
        && dc < &r.truncate(2)
    {
        d.warnings.push(format!(
            "the driver supports CUDA {dc}, older than the CUDA {r} runtime: it runs through \
             minor-version compatibility, but code that needs newer PTX JIT compilation will fail"
        ));
    }
    if let Some(e) = &probe.runtime.error
        && e.code != ffi::CUDA_ERROR_INSUFFICIENT_DRIVER
    {
        if e.code == ffi::CUDA_ERROR_NO_DEVICE {
            if !d.has("no_device") {
                d.problems.push(no_device(probe, e.to_string()));
            }
        } else if driver.init_error.is_none() {
            d.problems.push(MachineError::CheckFailed {
                check: "the CUDA runtime".into(),
                detail: e.to_string(),
            });
        }
    }
    if probe.runtime.device_count == Some(0) && !d.has("no_device") {
        d.problems
            .push(no_device(probe, "cudaGetDeviceCount found 0 GPUs".into()));
    }
}

/// `--device K` named a GPU that is not there.
fn missing_device(probe: &Probe, k: u32) -> MachineError {
    let driver = &probe.driver;
    MachineError::NoDevice {
        detail: format!(
            "GPU {k} was asked for, but {} visible",
            match probe.runtime.device_count.unwrap_or(0) {
                1 => "only GPU 0 is".to_string(),
                n => format!("{n} GPUs are"),
            }
        ),
        visible_devices: None,
        present: driver.gpus_present,
    }
}

/// One library: missing, unusable, loaded from outside the version, or of
/// another version than the one recorded.
fn library_problems(d: &mut Found, expected: &Expected, lib: &LibraryFacts) {
    let part_of_version = lib.name != "cudnn" || expected.cudnn.is_some();
    let Some(soname) = &lib.soname else {
        if part_of_version {
            d.problems.push(MachineError::LibraryMissing {
                library: lib.name.clone(),
                version: expected.name.clone(),
                tried: lib.tried.join(", "),
                detail: lib.error.clone().unwrap_or_default(),
            });
        }
        return;
    };
    if let Some(err) = &lib.error {
        // It loaded, but lacks entry points every release has: not a real copy.
        d.problems.push(MachineError::LibraryMissing {
            library: lib.name.clone(),
            version: expected.name.clone(),
            tried: soname.clone(),
            detail: format!("{soname} loads but is unusable: {err}"),
        });
        return;
    }
    if lib.origin == Some(Origin::Outside) {
        let path = lib.path.clone().unwrap_or_else(|| soname.into());
        if part_of_version {
            d.problems.push(MachineError::LibraryShadowed {
                library: lib.name.clone(),
                version: expected.name.clone(),
                path,
            });
        } else {
            d.warnings.push(format!(
                "{soname} loads from {} although version `{}` has no cuDNN; \
                 frameworks will pick up that copy",
                path.display(),
                expected.name
            ));
        }
    }
    let recorded = match lib.name.as_str() {
        "cudart" => expected.cuda.as_ref().map(|v| v.truncate(2)),
        "cudnn" => expected.cudnn.as_ref().map(|v| v.truncate(3)),
        other => crate::spec::Library::from_component(other)
            .and_then(|l| expected.libs.get(l))
            .map(|v| v.truncate(3)),
    };
    if let (Some(recorded), Some(loaded)) = (
        recorded,
        lib.version
            .as_deref()
            .and_then(|v| v.parse::<Version>().ok()),
    ) && !loaded.matches(&recorded)
        && !recorded.matches(&loaded)
    {
        d.problems.push(MachineError::LibraryMismatch {
            library: lib.name.clone(),
            version: expected.name.clone(),
            loaded: loaded.to_string(),
            recorded: recorded.to_string(),
        });
    }
}

/// The GEMMs and convolutions that computed a wrong result or failed.
fn check_problems(d: &mut Found, probe: &Probe) {
    for g in &probe.gemm {
        let check = format!(
            "GEMM {} {n}x{n}x{n} on GPU {}",
            g.dtype,
            g.device,
            n = g.size
        );
        match g.outcome {
            Outcome::WrongResult => d.problems.push(MachineError::WrongResult {
                check,
                detail: describe_error(g.non_finite, g.max_error, g.checksum_error, g.bound),
            }),
            Outcome::Error => {
                if let Some(e) = &g.error {
                    push_call_failure(d, probe, check, e);
                }
            }
            Outcome::Passed | Outcome::Skipped => {}
        }
    }
    for c in &probe.cudnn_conv {
        let check = format!("cuDNN convolution ({}) on GPU {}", c.shape, c.device);
        match c.outcome {
            Outcome::WrongResult => d.problems.push(MachineError::WrongResult {
                check,
                detail: describe_error(c.max_error.is_none(), c.max_error, None, c.bound),
            }),
            Outcome::Error => {
                if let Some(e) = &c.error {
                    push_call_failure(d, probe, check, e);
                }
            }
            Outcome::Passed | Outcome::Skipped => {}
        }
    }
}

/// The stack's CUDA (the runtime's, else the version's record) against each
/// GPU, before any kernel runs: a GPU the release dropped cannot run it
/// (`ArchUnsupported`); a GPU newer than the release gets no machine code
/// from it, only PTX for the driver to JIT-compile (`StackPredatesGpu`),
/// which is the slow path of every first library call.
pub fn architecture(expected: &Expected, probe: &Probe) -> Vec<MachineError> {
    let Some(cuda) = probe.runtime.version.as_ref().or(expected.cuda.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dev in &probe.devices {
        let gpu = ComputeCapability::new(dev.cc / 10, dev.cc % 10);
        match compat::arch::runs_on(cuda, gpu) {
            GpuFit::TooOld { oldest } => out.push(MachineError::ArchUnsupported {
                index: dev.index,
                name: dev.name.clone(),
                cc: dev.cc_string(),
                cuda: cuda.truncate(2).to_string(),
                reason: format!("its oldest supported architecture is {}", oldest.sm()),
                instead: Box::new(match compat::arch::alternative(cuda, gpu) {
                    Some(Alternative::FromOn(v)) => msg!("hint-arch-cuda-from", cuda = v),
                    Some(Alternative::Before(v)) => msg!("hint-arch-cuda-before", cuda = v),
                    None => msg!("hint-arch-none-known"),
                }),
            }),
            GpuFit::TooNew { .. } => out.push(MachineError::StackPredatesGpu {
                index: dev.index,
                name: dev.name.clone(),
                sm: gpu.sm(),
                cuda: cuda.truncate(2).to_string(),
                first: match compat::arch::alternative(cuda, gpu) {
                    Some(Alternative::FromOn(v)) => Some(v.to_string()),
                    _ => None,
                },
                frameworks: compat::first_frameworks_for(gpu).into(),
            }),
            GpuFit::Runs | GpuFit::Unknown => {}
        }
    }
    out
}

/// What the facts and measurements say about a check stopped at its
/// deadline; `None` when they say nothing beyond the stage (a driver idle in
/// `cuInit` is the classic hang, which the error's own hint describes).
///
/// A hung call sleeps; a call that compiles or computes burns CPU, and a
/// driver JIT-compiling PTX writes its compute cache. With the GPU newer
/// than the stack, that is the driver compiling the libraries' PTX, and it
/// says what that means for a framework on this stack.
pub fn explain_timeout(expected: &Expected, probe: &Probe, s: &super::Stopped) -> Option<Msg> {
    let busy = s.cpu_seconds.is_some_and(|c| c >= 0.5 * s.seconds);
    let grew = s.cache.as_ref().is_some_and(|c| c.after > c.before);
    let mut evidence = Vec::new();
    if let Some(cpu) = s.cpu_seconds {
        evidence.push(msg!(
            "hint-timeout-cpu",
            cpu = format!("{cpu:.0}"),
            seconds = format!("{:.0}", s.seconds)
        ));
    }
    if let Some(c) = &s.cache
        && c.after != c.before
    {
        evidence.push(msg!(
            "hint-timeout-cache-grew",
            dir = c.dir.display(),
            before = megabytes(c.before),
            after = megabytes(c.after)
        ));
    }
    let evidence_note = match evidence.is_empty() {
        true => Msg::verbatim(""),
        false => msg!("hint-timeout-evidence", evidence => Msg::And(evidence.clone())),
    };
    let evidence = Msg::And(evidence);
    let stage = &s.stage;
    let in_driver_init = stage.starts_with("cuInit") || stage.contains("libcuda");
    let jit = architecture(expected, probe)
        .into_iter()
        .find_map(|e| match e {
            MachineError::StackPredatesGpu {
                sm, cuda, first, ..
            } => Some((sm, cuda, first)),
            _ => None,
        });
    let cache_limit = match s.cache.as_ref().and_then(|c| c.max_size.as_deref()) {
        Some(v) => msg!("hint-timeout-cache-limit", bytes = v),
        None => msg!("hint-timeout-cache-limit-default"),
    };
    if let Some((sm, cuda, first)) = jit
        && !in_driver_init
        && (busy || grew || s.cpu_seconds.is_none())
    {
        let library = ["cublas", "cudnn", "cublasLt"]
            .into_iter()
            .filter(|n| stage.to_ascii_lowercase().contains(&n.to_ascii_lowercase()))
            .find_map(|n| probe.library(n))
            .map(|l| {
                let name = match l.name.as_str() {
                    "cublas" => "cuBLAS",
                    "cublasLt" => "cuBLASLt",
                    "cudnn" => "cuDNN",
                    other => other,
                };
                match l.version.as_deref() {
                    Some(v) if !v.is_empty() => {
                        msg!(
                            "hint-timeout-jit-library-version",
                            library = name,
                            version = v
                        )
                    }
                    _ => msg!("hint-timeout-jit-library", library = name),
                }
            })
            .unwrap_or_else(|| msg!("hint-timeout-jit-libraries"));
        let fix = match first {
            Some(f) => msg!("hint-timeout-jit-fix-first", first = f, sm = sm),
            None => msg!("hint-timeout-jit-fix", sm = sm),
        };
        return Some(msg!(
            "hint-timeout-jit",
            stage = stage,
            evidence => evidence_note,
            cuda = cuda,
            sm = sm,
            library => library,
            limit => cache_limit,
            fix => fix
        ));
    }
    if busy || grew {
        return Some(if grew {
            msg!("hint-timeout-busy-cached", stage = stage, evidence => evidence, limit => cache_limit)
        } else {
            msg!("hint-timeout-busy", stage = stage, evidence => evidence)
        });
    }
    if in_driver_init {
        return None;
    }
    s.cpu_seconds
        .map(|_| msg!("hint-timeout-idle", stage = stage, evidence => evidence))
}

/// `232 MB` (decimal, as `du -h --si` prints).
fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb >= 10.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

fn no_device(probe: &Probe, detail: String) -> MachineError {
    let visible = probe.cuda_visible_devices.clone();
    MachineError::NoDevice {
        detail: match (&visible, probe.driver.gpus_present) {
            (Some(v), Some(n)) if n > 0 => {
                format!("CUDA_VISIBLE_DEVICES={v:?} hides every GPU the driver has ({n}); {detail}")
            }
            (Some(v), _) => format!("CUDA_VISIBLE_DEVICES={v:?}; {detail}"),
            _ => detail,
        },
        visible_devices: visible,
        present: probe.driver.gpus_present,
    }
}

/// A failed call: an architecture problem when the status says so (and no
/// table-based diagnosis already covers it), a plain failure otherwise.
fn push_call_failure(d: &mut Found, probe: &Probe, check: String, e: &ApiError) {
    let arch = (e.call.starts_with("cublas") && e.code == ffi::CUBLAS_STATUS_ARCH_MISMATCH)
        || (!e.call.starts_with("cublas")
            && !e.call.starts_with("cudnn")
            && (e.code == ffi::CUDA_ERROR_NO_KERNEL_IMAGE
                || e.code == ffi::CUDA_ERROR_UNSUPPORTED_PTX));
    if arch && !d.has("arch_unsupported") && !d.has("ptx_jit_only") {
        let dev = probe.devices.first();
        d.problems.push(MachineError::ArchUnsupported {
            index: dev.map_or(0, |x| x.index),
            name: dev.map_or_else(|| "?".into(), |x| x.name.clone()),
            cc: dev.map_or_else(|| "?".into(), |x| x.cc_string()),
            cuda: probe
                .runtime
                .version
                .as_ref()
                .map_or_else(|| "?".into(), Version::to_string),
            reason: format!("{check}: {e}"),
            instead: Box::new(msg!("hint-arch-newer-cuda")),
        });
    } else if !arch {
        d.problems.push(MachineError::CheckFailed {
            check,
            detail: e.to_string(),
        });
    }
}

fn describe_error(non_finite: bool, max: Option<f64>, checksum: Option<f64>, bound: f64) -> String {
    if non_finite {
        return "the result holds NaN or infinity".into();
    }
    let worst = max.into_iter().chain(checksum).fold(0.0f64, f64::max);
    format!("relative error {worst:.2e} exceeds the bound {bound:.0e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ExitCode;
    use crate::machine::facts::driver;
    use crate::machine::verify::{DeviceFacts, Dtype, GemmResult, LibraryFacts, RuntimeFacts};

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn lib(name: &str, version: &str, origin: Origin) -> LibraryFacts {
        LibraryFacts {
            name: name.into(),
            tried: vec![format!("lib{name}.so.13")],
            soname: Some(format!("lib{name}.so.13")),
            path: Some(format!("/opt/cuda/lib64/lib{name}.so.13").into()),
            origin: Some(origin),
            version: Some(version.into()),
            error: None,
        }
    }

    fn missing(name: &str) -> LibraryFacts {
        LibraryFacts {
            name: name.into(),
            tried: vec![format!("lib{name}.so.13")],
            soname: None,
            path: None,
            origin: None,
            version: None,
            error: Some(format!(
                "lib{name}.so.13: cannot open shared object file: No such file or directory"
            )),
        }
    }

    fn expected() -> Expected {
        Expected {
            name: "sys13".into(),
            cuda: Some(v("13.0.2")),
            cudnn: Some(v("9.13.0.50")),
            libs: Default::default(),
            dirs: vec!["/opt/cuda/lib64".into()],
        }
    }

    fn h200() -> DeviceFacts {
        DeviceFacts {
            index: 0,
            name: "NVIDIA H200".into(),
            cc: 90,
            memory_bytes: 150_000_000_000,
            multiprocessors: 132,
        }
    }

    fn healthy() -> Probe {
        Probe {
            driver: driver::Probe {
                loaded: true,
                path: Some("/usr/lib/libcuda.so.580.159.04".into()),
                driver_api: Some(13000),
                version: Some("580.159.04".into()),
                gpus_present: Some(1),
                ..driver::Probe::default()
            },
            runtime: RuntimeFacts {
                version: Some(v("13.0")),
                device_count: Some(1),
                error: None,
            },
            libraries: vec![
                lib("cudart", "13.0", Origin::Version),
                lib("cublasLt", "13.1.0", Origin::Version),
                lib("cublas", "13.1.0", Origin::Version),
                lib("cudnn", "9.13.0", Origin::Version),
            ],
            devices: vec![h200()],
            gemm: vec![GemmResult {
                device: 0,
                dtype: Dtype::Fp16,
                size: 8192,
                outcome: Outcome::Passed,
                max_error: Some(2e-4),
                checksum_error: Some(1e-5),
                bound: Dtype::Fp16.bound(),
                samples: 256,
                non_finite: false,
                tflops: Some(700.0),
                median_ms: Some(1.57),
                repeats: 50,
                error: None,
                note: None,
            }],
            ..Probe::default()
        }
    }

    fn exit(d: &Diagnosis) -> ExitCode {
        super::super::exit_code(&d.problems)
    }

    fn has(d: &Diagnosis, kind: &str) -> bool {
        d.problems.iter().any(|p| p.code == kind)
    }

    /// A problem's hint, in English.
    fn hint(p: &Finding) -> Option<String> {
        p.fix.first().map(Msg::en)
    }

    #[test]
    fn a_healthy_stack_has_no_problems() {
        let d = diagnose(&expected(), &healthy());
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn no_driver_wins_over_what_follows_from_it() {
        let mut p = Probe {
            libraries: vec![
                lib("cudart", "12.2", Origin::Version),
                missing("cublasLt"),
                missing("cublas"),
                missing("cudnn"),
            ],
            ..Probe::default()
        };
        p.driver.load_error =
            Some("libcuda.so.1: cannot open shared object file: No such file or directory".into());
        p.runtime = RuntimeFacts {
            version: Some(v("12.2")),
            device_count: None,
            error: Some(ApiError {
                call: "cudaGetDeviceCount".into(),
                code: 35,
                name: "cudaErrorInsufficientDriver".into(),
                message: String::new(),
            }),
        };
        let e = Expected {
            name: "12.2".into(),
            cuda: Some(v("12.2.140")),
            cudnn: None,
            libs: Default::default(),
            dirs: vec!["/opt/cuda/lib64".into()],
        };
        let d = diagnose(&e, &p);
        assert_eq!(exit(&d), ExitCode::NoDriver);
        assert!(!has(&d, "driver_too_old"), "{:?}", d.problems);
        // The missing cuBLAS is still reported; cuDNN is not part of this version.
        assert!(has(&d, "library_missing"));
        assert_eq!(d.problems.len(), 3, "{:?}", d.problems);
    }

    /// A libcuda that loads but lacks a function is no usable driver (exit
    /// 10), not a failed initialisation.
    #[test]
    fn a_libcuda_lacking_a_function_is_no_driver() {
        let mut p = healthy();
        p.driver = driver::Probe {
            loaded: true,
            path: Some("/usr/lib/libcuda.so.1".into()),
            incomplete: Some("undefined symbol: cuDeviceTotalMem_v2".into()),
            ..driver::Probe::default()
        };
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::NoDriver, "{:?}", d.problems);
        assert!(
            d.problems[0]
                .message
                .to_string()
                .contains("undefined symbol: cuDeviceTotalMem_v2")
        );
    }

    #[test]
    fn driver_too_old_names_both_versions_and_the_floor() {
        let mut p = healthy();
        p.driver.version = Some("470.82.01".into());
        p.driver.driver_api = Some(11040);
        p.runtime.version = Some(v("12.4"));
        p.runtime.device_count = None;
        p.runtime.error = Some(ApiError {
            call: "cudaGetDeviceCount".into(),
            code: 35,
            name: "cudaErrorInsufficientDriver".into(),
            message: "CUDA driver version is insufficient for CUDA runtime version".into(),
        });
        p.gemm.clear();
        let mut e = expected();
        e.cuda = Some(v("12.4.1"));
        e.cudnn = None;
        p.libraries[0].version = Some("12.4".into());
        p.libraries.pop();
        let d = diagnose(&e, &p);
        assert_eq!(exit(&d), ExitCode::DriverTooOld);
        let msg = d.problems[0].message.to_string();
        assert!(
            msg.contains("470.82.01") && msg.contains("11.4") && msg.contains("12.4"),
            "{msg}"
        );
        assert!(msg.contains("525.60.13"), "{msg}");
        assert!(
            hint(&d.problems[0])
                .unwrap()
                .contains("cudaenv install 11.4")
        );
    }

    #[test]
    fn newer_minor_runtime_is_a_warning_not_an_error() {
        let mut p = healthy();
        p.runtime.version = Some(v("13.1"));
        p.libraries[0].version = Some("13.1".into());
        let mut e = expected();
        e.cuda = Some(v("13.1"));
        let d = diagnose(&e, &p);
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn cuda_visible_devices_hiding_everything() {
        let mut p = healthy();
        p.cuda_visible_devices = Some("-1".into());
        p.driver.init_error = Some(ApiError {
            call: "cuInit".into(),
            code: 100,
            name: "CUDA_ERROR_NO_DEVICE".into(),
            message: String::new(),
        });
        p.devices.clear();
        p.gemm.clear();
        p.runtime.device_count = None;
        p.runtime.error = Some(ApiError {
            call: "cudaGetDeviceCount".into(),
            code: 100,
            name: "cudaErrorNoDevice".into(),
            message: String::new(),
        });
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::NoDevice);
        assert_eq!(d.problems.len(), 1, "{:?}", d.problems);
        assert!(
            d.problems[0]
                .message
                .to_string()
                .contains("CUDA_VISIBLE_DEVICES=\"-1\"")
        );
        assert!(hint(&d.problems[0]).unwrap().contains("only GPU"));
    }

    #[test]
    fn old_toolkit_on_a_new_gpu() {
        let mut p = healthy();
        p.runtime.version = Some(v("11.2"));
        p.libraries[0].version = Some("11.2".into());
        p.gemm[0].outcome = Outcome::Error;
        p.gemm[0].error = Some(ApiError {
            call: "cublasGemmEx".into(),
            code: 8,
            name: "CUBLAS_STATUS_ARCH_MISMATCH".into(),
            message: String::new(),
        });
        let mut e = expected();
        e.cuda = Some(v("11.2.2"));
        e.cudnn = None;
        p.libraries.pop();
        let d = diagnose(&e, &p);
        assert_eq!(exit(&d), ExitCode::PtxJitOnly);
        // One problem: the failing GEMM is explained by the table's diagnosis.
        assert_eq!(d.problems.len(), 1, "{:?}", d.problems);
        let hint = hint(&d.problems[0]).unwrap();
        assert!(hint.contains("use CUDA 11.8 or newer"), "{hint}");
        assert!(hint.contains("TensorFlow 2.12 (CUDA 11.8)"), "{hint}");

        // A GPU the release dropped is the other architecture problem.
        let mut p = healthy();
        p.devices[0].cc = 61;
        p.devices[0].name = "Tesla P4".into();
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::ArchUnsupported, "{:?}", d.problems);
        // Its hint, what to use instead included, in each language.
        let hint = d.problems[0].fix.first().cloned().unwrap();
        assert!(
            hint.en()
                .starts_with("select a CUDA that supports this GPU: "),
            "{hint}"
        );
        let zh = hint.render(crate::i18n::Lang::ZhCn);
        assert!(zh.starts_with("请选一个支持这块 GPU 的 CUDA："), "{zh}");
        assert!(!zh.contains("newer") && !zh.contains("older"), "{zh}");
    }

    /// CUDA 11.2 (cuBLAS 11.4.1) on an H200, stopped in cublasCreate after
    /// 118 s of CPU time while the driver's compute cache grew: the driver's JIT.
    fn cuda_11_2_stopped_in_cublas_create() -> (Expected, Probe, super::super::Stopped) {
        let mut p = healthy();
        p.runtime.version = Some(v("11.2"));
        p.gemm.clear();
        p.libraries[2].version = Some("11.4.1".into());
        let mut e = expected();
        e.cuda = Some(v("11.2.2"));
        let s = stopped(
            "cublasCreate on GPU 0",
            Some(118.0),
            Some((19_000_000, 232_000_000)),
        );
        (e, p, s)
    }

    /// What the measurements before a timeout say, in Chinese too: no English
    /// fragment (the evidence, the library, the fix) inside the Chinese text.
    #[test]
    fn a_timeouts_explanation_reads_in_chinese() {
        let (e, p, s) = cuda_11_2_stopped_in_cublas_create();
        let why = explain_timeout(&e, &p, &s).unwrap();
        let zh = why.render(crate::i18n::Lang::ZhCn);
        assert!(
            zh.starts_with(
                "`cublasCreate on GPU 0` 只是慢，并没有卡死：进程在 120 秒内用了 118 秒 CPU 时间 和 \
                 驱动的计算缓存（/home/u/.nv/ComputeCache）从 19 MB 增长到 232 MB。CUDA 11.2 没有 sm_90 代码"
            ),
            "{zh}"
        );
        assert!(zh.contains("cuBLAS 11.4.1 的 PTX"), "{zh}");
        assert!(zh.contains("改用 CUDA 11.8 或更新的版本"), "{zh}");
        for english in ["the process", "the driver", "use CUDA", "libraries'"] {
            assert!(!zh.contains(english), "{english}: {zh}");
        }
    }

    fn stopped(
        stage: &str,
        cpu: Option<f64>,
        cache: Option<(u64, u64)>,
    ) -> crate::machine::verify::Stopped {
        crate::machine::verify::Stopped {
            stage: stage.into(),
            seconds: 120.0,
            cpu_seconds: cpu,
            cache: cache.map(|(before, after)| crate::machine::verify::CacheGrowth {
                dir: "/home/u/.nv/ComputeCache".into(),
                before,
                after,
                max_size: None,
            }),
        }
    }

    /// What a user of CUDA 11.2 on an H200 reads, problem by problem.
    #[test]
    fn cuda_11_2_on_an_h200_reads_like_this() {
        let mut p = healthy();
        p.runtime.version = Some(v("11.2"));
        p.libraries[0].version = Some("11.2".into());
        p.gemm.clear();
        p.libraries[2].version = Some("11.4.1".into());
        let mut e = expected();
        e.cuda = Some(v("11.2.2"));
        e.cudnn = None;
        p.libraries.pop();
        let mut problems = diagnose(&e, &p).problems;
        problems.push(super::super::finding(&MachineError::VerifyTimedOut {
            seconds: 120,
            stage: "cublasCreate on GPU 0".into(),
            output: String::new(),
            why: explain_timeout(
                &e,
                &p,
                &stopped(
                    "cublasCreate on GPU 0",
                    Some(119.6),
                    Some((19_000_000, 232_000_000)),
                ),
            ),
        }));
        let text: String = problems
            .iter()
            .map(|e| {
                format!(
                    "error: {}\nhint: {}\n",
                    e.message,
                    hint(e).unwrap_or_default()
                )
            })
            .collect();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_timeout_is_explained_by_what_was_measured() {
        // CUDA 11.2 on an H200, stopped in cublasCreate: the driver's JIT.
        let (e, p, s) = cuda_11_2_stopped_in_cublas_create();
        let why = explain_timeout(&e, &p, &s).unwrap().en();
        assert!(
            why.starts_with(
                "`cublasCreate on GPU 0` was slow, not stuck: the process used 118 s of CPU \
                 time in 120 s and the driver's compute cache (/home/u/.nv/ComputeCache) grew \
                 from 19 MB to 232 MB. CUDA 11.2 has no sm_90 code, so the driver JIT-compiles \
                 cuBLAS 11.4.1's PTX"
            ),
            "{why}"
        );
        assert!(why.contains("use CUDA 11.8 or newer"), "{why}");
        // The same stack, but an idle process in cuInit: the classic hang.
        assert_eq!(
            explain_timeout(&e, &p, &stopped("cuInit", Some(0.0), None)),
            None
        );
        // A current stack whose GEMM is busy: slow, not hung.
        let why = explain_timeout(
            &expected(),
            &healthy(),
            &stopped("GEMM fp64 32768x32768x32768 on GPU 0", Some(119.0), None),
        )
        .unwrap()
        .en();
        assert!(why.contains("was busy, not stuck"), "{why}");
        // Idle outside cuInit: waiting on the driver or GPU.
        let why = explain_timeout(
            &expected(),
            &healthy(),
            &stopped("cudaSetDevice(0)", Some(0.1), Some((5, 5))),
        )
        .unwrap()
        .en();
        assert!(why.contains("the process was idle"), "{why}");
        // Nothing measured: nothing to add.
        assert_eq!(
            explain_timeout(
                &expected(),
                &healthy(),
                &stopped("cudaSetDevice(0)", None, None)
            ),
            None
        );
    }

    #[test]
    fn shadowed_and_mismatched_libraries() {
        let mut p = healthy();
        p.libraries[0].origin = Some(Origin::Outside);
        p.libraries[0].path = Some("/home/u/stale/libcudart.so.13.0.48".into());
        p.libraries[3].version = Some("9.1.0".into());
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::LibraryMissing);
        assert!(has(&d, "library_shadowed") && has(&d, "library_mismatch"));
        assert!(hint(&d.problems[0]).unwrap().contains("/home/u/stale"));
    }

    #[test]
    fn a_cudnn_outside_a_version_without_one_is_only_a_warning() {
        let mut p = healthy();
        p.libraries[3].origin = Some(Origin::Outside);
        let mut e = expected();
        e.cudnn = None;
        let d = diagnose(&e, &p);
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn wrong_results_and_nan() {
        let mut p = healthy();
        p.gemm[0].outcome = Outcome::WrongResult;
        p.gemm[0].non_finite = true;
        p.gemm[0].max_error = None;
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::WrongResult);
        assert!(d.problems[0].message.to_string().contains("NaN"));
        p.gemm[0].non_finite = false;
        p.gemm[0].max_error = Some(0.7);
        let d = diagnose(&expected(), &p);
        assert!(
            d.problems[0].message.to_string().contains("7.00e-1"),
            "{}",
            d.problems[0].message
        );
    }

    #[test]
    fn a_missing_gpu_index() {
        let mut p = healthy();
        p.gemm.clear();
        p.missing_device = Some(3);
        let d = diagnose(&expected(), &p);
        assert_eq!(exit(&d), ExitCode::NoDevice);
        assert!(d.problems[0].message.to_string().contains("GPU 3"));
    }
}
