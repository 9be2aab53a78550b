//! The driver and the GPUs: which driver runs (and whether its kernel module
//! and user-space library agree), whether libcuda loads and `cuInit`
//! succeeds, the GPUs it reports; or, when planning for another machine, the
//! target's driver and GPUs in their place.

use crate::i18n::Msg;
use crate::machine::compat::target::Target;
use crate::machine::compat::{ComputeCapability, DriverVersion, driver};
use crate::machine::doctor::facts::Facts;
use crate::msg;

use super::{Out, family_of};

pub(super) fn driver_findings(f: &Facts, o: &mut Out) {
    let driver = f.driver();
    if f.host.platform.wsl {
        wsl_findings(f, o);
    }
    if !driver_version_findings(f, driver.as_ref(), o) {
        return;
    }
    driver_mismatch_findings(f, o);
    libcuda_findings(f, driver.is_some(), o);
    cuinit_findings(f, o);
    gpu_findings(f, o);
}

/// WSL's libcuda is the Windows driver's, in /usr/lib/wsl/lib: a missing one,
/// or another found first, is an error.
fn wsl_findings(f: &Facts, o: &mut Out) {
    if !f.host.platform.wsl_libcuda {
        o.error(
            "wsl-libcuda",
            msg!("doctor-wsl-no-libcuda"),
            msg!("doctor-wsl-no-libcuda-fix"),
        );
    } else if let Some(p) = f
        .host
        .libcuda
        .path
        .as_deref()
        .filter(|p| !p.starts_with("/usr/lib/wsl/"))
    {
        o.error(
            "wsl-libcuda",
            msg!("doctor-wsl-foreign-libcuda", path = p),
            msg!("doctor-wsl-foreign-libcuda-fix", path = p),
        );
    } else {
        o.ok("wsl", msg!("doctor-wsl-ok"));
    }
}

/// The driver's version and the newest CUDA it runs; `false` when there is
/// no driver at all, which ends the driver's checks.
fn driver_version_findings(f: &Facts, driver: Option<&DriverVersion>, o: &mut Out) -> bool {
    match driver {
        // On Windows, System32's nvcuda.dll is the driver even when nvidia-smi is not there.
        None if !f.host.libcuda.loaded && f.windows.as_ref().is_none_or(|w| w.nvcuda.is_none()) => {
            o.warn(
                "no-driver",
                if f.windows.is_some() {
                    msg!("doctor-win-no-driver")
                } else {
                    msg!("doctor-no-driver")
                },
                if f.windows.is_some() {
                    msg!("doctor-win-no-driver-fix")
                } else {
                    msg!("doctor-no-driver-fix")
                },
            );
            return false;
        }
        None => o.ok("driver", msg!("doctor-driver-version-unknown")),
        Some(d) => {
            let src = &f.host.driver_versions[0].source;
            let max = f
                .host
                .libcuda
                .driver_api
                .and_then(driver::cuda_from_api)
                .or_else(|| driver::max_cuda(d, f.driver_os()));
            o.ok(
                "driver",
                match max {
                    Some(m) => msg!("doctor-driver-max", driver = d, source = src, cuda = m),
                    None => msg!("doctor-driver", driver = d, source = src),
                },
            );
        }
    }
    true
}

/// The kernel module and the user-space library must be the same release.
fn driver_mismatch_findings(f: &Facts, o: &mut Out) {
    let distinct: Vec<&str> = {
        let mut seen: Vec<&str> = Vec::new();
        for s in &f.host.driver_versions {
            if s.source != "nvidia-smi" && !seen.contains(&s.version.as_str()) {
                seen.push(&s.version);
            }
        }
        seen
    };
    if distinct.len() > 1 {
        let list = f
            .host
            .driver_versions
            .iter()
            .map(|s| format!("{} = {}", s.source, s.version))
            .collect::<Vec<_>>()
            .join(", ");
        o.error(
            "driver-mismatch",
            msg!("doctor-driver-mismatch", list = list),
            msg!("doctor-driver-mismatch-fix"),
        );
    }
}

/// A driver whose CUDA library does not load.
fn libcuda_findings(f: &Facts, has_driver: bool, o: &mut Out) {
    // Windows: the driver's CUDA DLL is System32's nvcuda.dll; its presence
    // is the fact (the probe's binding may look for the Linux name).
    if let Some(w) = &f.windows {
        if has_driver && w.nvcuda.is_none() && !f.host.libcuda.loaded {
            o.error(
                "nvcuda-missing",
                msg!(
                    "doctor-win-nvcuda-missing",
                    dir = w.system_dir.as_deref().unwrap_or("System32")
                ),
                msg!("doctor-win-nvcuda-missing-fix"),
            );
        }
    } else if has_driver && !f.host.libcuda.loaded && f.host.libcuda.load_error.is_some() {
        o.error(
            "libcuda-missing",
            msg!(
                "doctor-libcuda-missing",
                error = f.host.libcuda.load_error.as_deref().unwrap_or("")
            ),
            msg!("doctor-libcuda-missing-fix"),
        );
    }
}

/// `cuInit` failed: the fix depends on the error it returned.
fn cuinit_findings(f: &Facts, o: &mut Out) {
    if let Some(err) = f.host.libcuda.init_failure() {
        let fix = match err.as_str() {
            "CUDA_ERROR_NO_DEVICE" => msg!("doctor-cuinit-no-device-fix"),
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" => msg!("doctor-cuinit-driver-mismatch-fix"),
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" => msg!("doctor-cuinit-compat-fix"),
            _ => msg!("doctor-cuinit-failed-fix"),
        };
        o.error(
            "cuinit-failed",
            msg!("doctor-cuinit-failed", error = err),
            fix,
        );
    }
}

/// The GPUs the driver reports, with their architectures and memory; none
/// although libcuda initialised is an error.
fn gpu_findings(f: &Facts, o: &mut Out) {
    if f.host.gpus.is_empty() {
        if f.host.libcuda.init_failure().is_none() && f.host.libcuda.loaded {
            o.error("no-gpu", msg!("doctor-no-gpu"), msg!("doctor-no-gpu-fix"));
        }
        return;
    }
    let list = f
        .host
        .gpus
        .iter()
        .map(|g| {
            let cc = g
                .compute_capability
                .as_deref()
                .and_then(|c| c.parse::<ComputeCapability>().ok());
            let arch = match cc {
                Some(c) => match c.family() {
                    Some(family) => msg!("doctor-gpu-arch", sm = c.sm(), family = family),
                    None => msg!("doctor-gpu-arch-unknown-family", sm = c.sm()),
                },
                None => msg!("doctor-gpu-cc-unknown"),
            };
            match g.memory_mib {
                Some(m) => msg!(
                    "doctor-gpu-memory",
                    index = g.index,
                    name = g.name,
                    gib = (m + 512) / 1024,
                    arch => arch
                ),
                None => msg!("doctor-gpu", index = g.index, name = g.name, arch => arch),
            }
        })
        .collect::<Vec<_>>();
    o.ok("gpus", Msg::Clauses(list));
}

/// Planning for another machine: its driver and GPUs stand in for this
/// one's in the checks of the active stack; this machine's driver is not judged.
pub(super) fn target_findings(t: &Target, o: &mut Out) {
    let m = t.machine();
    let max = m
        .driver
        .as_ref()
        .and_then(|d| driver::max_cuda(d, m.driver_os));
    let driver = match (t.driver.as_deref(), max) {
        (Some(d), Some(max)) => msg!("doctor-target-driver-max", driver = d, cuda = max),
        (Some(d), None) => msg!("doctor-target-driver", driver = d),
        (None, _) => msg!("doctor-target-driver-unknown"),
    };
    let families: Vec<Msg> = t
        .compute_capabilities()
        .iter()
        .map(|c| msg!("doctor-sm-family", sm = c.sm(), family => family_of(*c)))
        .collect();
    o.ok(
        "target",
        if families.is_empty() {
            msg!("doctor-target-arch-unknown", driver => driver)
        } else {
            msg!("doctor-target", driver => driver, gpus => Msg::List(families))
        },
    );
}
