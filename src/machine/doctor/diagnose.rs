//! From facts to findings: a pure function, table-tested over fact sets.
//!
//! Each finding has a level (`ok`, `warning`, `error`), a stable `code` for
//! scripts, a message that states what was found, and the command or action
//! that fixes it. Only errors make `doctor` exit non-zero; a machine without a
//! driver or GPU (CI, build hosts) gets warnings, never errors.

use serde::{Deserialize, Serialize};

use crate::machine::compat::{
    self, ArchSupport, ComputeCapability, DriverFit, Framework, FrameworkReq, driver,
};
use crate::spec::Version;

use super::facts::{Facts, LibDir};
use super::python::InstalledFramework;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub level: Level,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

struct Out(Vec<Finding>);

impl Out {
    fn push(&mut self, level: Level, code: &str, message: impl Into<String>, fix: Option<String>) {
        self.0.push(Finding {
            level,
            code: code.into(),
            message: message.into(),
            fix,
        });
    }
    fn ok(&mut self, code: &str, message: impl Into<String>) {
        self.push(Level::Ok, code, message, None);
    }
    fn warn(&mut self, code: &str, message: impl Into<String>, fix: impl Into<String>) {
        self.push(Level::Warning, code, message, Some(fix.into()));
    }
    fn error(&mut self, code: &str, message: impl Into<String>, fix: impl Into<String>) {
        self.push(Level::Error, code, message, Some(fix.into()));
    }
}

fn v(s: &str) -> Option<Version> {
    s.parse().ok()
}

/// Every finding for a set of facts, in reading order.
pub fn diagnose(f: &Facts) -> Vec<Finding> {
    let mut o = Out(Vec::new());
    match &f.target {
        Some(t) => target_findings(t, &mut o),
        None => driver_findings(f, &mut o),
    }
    active_findings(f, &mut o);
    library_findings(f, &mut o);
    environment_findings(f, &mut o);
    o.0.extend(super::container::findings(f));
    framework_findings(f, &mut o);
    o.0
}

fn driver_findings(f: &Facts, o: &mut Out) {
    let driver = f.driver();
    let gpus = f.compute_capabilities();
    if f.platform.wsl {
        if !f.platform.wsl_libcuda {
            o.error(
                "wsl-libcuda",
                "WSL2 without /usr/lib/wsl/lib/libcuda.so.1: the Windows NVIDIA driver does not expose the GPU to Linux",
                "install or update the NVIDIA driver on Windows (never a Linux driver inside WSL), then `wsl --shutdown`",
            );
        } else if let Some(p) = f
            .libcuda
            .path
            .as_deref()
            .filter(|p| !p.starts_with("/usr/lib/wsl/"))
        {
            o.error(
                "wsl-libcuda",
                format!("WSL2 loads libcuda from {p}, not the Windows driver's /usr/lib/wsl/lib"),
                format!("remove the Linux driver package that installed {p}; WSL2 must use /usr/lib/wsl/lib"),
            );
        } else {
            o.ok(
                "wsl",
                "WSL2: libcuda comes from the Windows driver (/usr/lib/wsl/lib)",
            );
        }
    }
    match &driver {
        None if !f.libcuda.loaded => {
            o.warn(
                "no-driver",
                "no NVIDIA driver found (no /proc/driver/nvidia/version, /sys/module/nvidia/version or loadable libcuda.so.1): CUDA programs can be built here but not run",
                "nothing to do on CI or build machines; elsewhere install the NVIDIA driver (in containers: run with --gpus all)",
            );
            return;
        }
        None => o.ok(
            "driver",
            "libcuda.so.1 loads, but its driver version could not be read",
        ),
        Some(d) => {
            let src = &f.driver_versions[0].source;
            let max = f
                .libcuda
                .driver_api
                .and_then(driver::cuda_from_api)
                .or_else(|| driver::max_cuda(d, f.driver_os()));
            let max = max
                .map(|m| format!(", supports CUDA ≤ {m}"))
                .unwrap_or_default();
            o.ok("driver", format!("NVIDIA driver {d} (from {src}){max}"));
        }
    }
    // The kernel module and the user-space library must be the same release.
    let distinct: Vec<&str> = {
        let mut seen: Vec<&str> = Vec::new();
        for s in &f.driver_versions {
            if s.source != "nvidia-smi" && !seen.contains(&s.version.as_str()) {
                seen.push(&s.version);
            }
        }
        seen
    };
    if distinct.len() > 1 {
        let list = f
            .driver_versions
            .iter()
            .map(|s| format!("{} = {}", s.source, s.version))
            .collect::<Vec<_>>()
            .join(", ");
        o.error(
            "driver-mismatch",
            format!("the kernel module and libcuda are different driver releases ({list}): CUDA fails with \"system has unsupported display driver / cuda driver combination\" or NVML \"Driver/library version mismatch\""),
            "reboot (or reload the nvidia kernel modules) after a driver upgrade",
        );
    }
    if driver.is_some() && !f.libcuda.loaded && f.libcuda.load_error.is_some() {
        o.error(
            "libcuda-missing",
            format!(
                "the kernel driver is loaded but libcuda.so.1 cannot be: {}",
                f.libcuda.load_error.as_deref().unwrap_or("")
            ),
            "install the driver's user-space libraries (same version as the kernel module); in containers use the NVIDIA container toolkit",
        );
    }
    if let Some(err) = &f.libcuda.init_error {
        let fix = match err.as_str() {
            "CUDA_ERROR_NO_DEVICE" => {
                "check that the GPU is present and bound to the nvidia driver (lspci -k)"
            }
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" => {
                "reboot after the driver upgrade, or remove a CUDA forward-compatibility libcuda from LD_LIBRARY_PATH"
            }
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" => {
                "remove the cuda-compat directory from LD_LIBRARY_PATH: forward compatibility only works on data-center GPUs"
            }
            _ => {
                "check /dev/nvidia-uvm (`sudo nvidia-modprobe -u -c=0`), dmesg for NVRM errors, or reboot"
            }
        };
        o.error("cuinit-failed", format!("cuInit failed: {err}"), fix);
    }
    if f.gpus.is_empty() {
        if f.libcuda.init_error.is_none() && f.libcuda.loaded {
            o.error(
                "no-gpu",
                "the driver is loaded but reports no GPU",
                "check that the GPU is visible to this machine or container",
            );
        }
    } else {
        let list = f
            .gpus
            .iter()
            .map(|g| {
                let cc = g
                    .compute_capability
                    .as_deref()
                    .and_then(|c| c.parse::<ComputeCapability>().ok());
                let arch = cc
                    .map(|c| {
                        format!(
                            "{}, {}",
                            c.sm(),
                            c.family().unwrap_or("unknown architecture")
                        )
                    })
                    .unwrap_or_else(|| "compute capability unknown".into());
                let mem = g
                    .memory_mib
                    .map(|m| format!(", {} GiB", (m + 512) / 1024))
                    .unwrap_or_default();
                format!("GPU {}: {} ({arch}{mem})", g.index, g.name)
            })
            .collect::<Vec<_>>()
            .join("; ");
        o.ok("gpus", list);
    }
    let _ = gpus;
}

/// Planning for another machine: its driver and GPUs stand in for this
/// one's in the checks of the active stack; this machine's driver is not judged.
fn target_findings(t: &crate::machine::compat::target::Target, o: &mut Out) {
    let m = t.machine();
    let max = m
        .driver
        .as_ref()
        .and_then(|d| driver::max_cuda(d, m.driver_os))
        .map(|m| format!(" (supports CUDA ≤ {m})"))
        .unwrap_or_default();
    let families: Vec<String> = t
        .compute_capabilities()
        .iter()
        .map(|c| {
            format!(
                "{} ({})",
                c.sm(),
                c.family().unwrap_or("unknown architecture")
            )
        })
        .collect();
    o.ok(
        "target",
        format!(
            "planning for a target machine: {}{max}{}; the checks of the active version are for it, this machine's own driver and GPUs are not judged",
            t.driver.as_deref().map(|d| format!("driver {d}")).unwrap_or_else(|| "driver unknown".into()),
            if families.is_empty() { ", GPU architecture unknown".to_string() } else { format!(", {}", families.join(", ")) }
        ),
    );
}

fn active_findings(f: &Facts, o: &mut Out) {
    let Some(a) = &f.active else {
        if let Some(e) = &f.active_error {
            o.error(
                "active-missing",
                format!("no usable active version: {e}"),
                "install it (`cudaenv install SPEC`) or select another (`cudaenv local SPEC`)",
            );
        }
        return;
    };
    if a.name == "system" {
        o.ok(
            "active",
            format!(
                "active: system (set by {}); cudaenv adds nothing to the environment",
                a.origin
            ),
        );
        return;
    }
    let what = match (&a.cuda, &a.cudnn) {
        (Some(c), Some(d)) => format!("CUDA {c} + cuDNN {d}"),
        (Some(c), None) => format!("CUDA {c}, no cuDNN"),
        _ => "versions unknown".into(),
    };
    o.ok(
        "active",
        format!("active: {} ({what}), set by {}", a.name, a.origin),
    );
    if f.env.cudaenv_active.as_deref() != Some(a.name.as_str()) {
        o.warn(
            "not-activated",
            format!(
                "this environment is not activated for {} (CUDAENV_ACTIVE={}): programs started from here do not get its libraries",
                a.name,
                f.env.cudaenv_active.as_deref().unwrap_or("unset")
            ),
            "enable the shell hook (`eval \"$(cudaenv init bash)\"`), or run programs through `cudaenv exec`",
        );
    }
    let Some(cuda) = a.cuda.as_deref().and_then(v) else {
        return;
    };
    let m = f.planned_machine();
    if let Some(d) = &m.driver {
        let driver = m.driver_named(d);
        match driver::fit(d, &cuda, m.driver_os) {
            DriverFit::Full => o.ok("driver-fit", format!("{driver} runs CUDA {cuda}")),
            DriverFit::MinorCompat { release_min } => o.warn(
                "driver-fit",
                format!("{driver} runs CUDA {cuda} only through minor version compatibility: code that needs PTX JIT for this toolkit fails (\"the provided PTX was compiled with an unsupported toolchain\")"),
                format!("upgrade the driver to ≥ {release_min}, or use the CUDA release the driver shipped with"),
            ),
            DriverFit::TooOld { need } => {
                let alt = driver::max_cuda(d, m.driver_os).map(|m| format!(", or select CUDA ≤ {m} (`cudaenv local {m}`)")).unwrap_or_default();
                o.error(
                    "driver-too-old",
                    format!("{driver} is too old for CUDA {cuda} (needs ≥ {need}): programs fail with \"CUDA driver version is insufficient for CUDA runtime version\""),
                    format!("upgrade the NVIDIA driver to ≥ {need}{alt}"),
                );
            }
            DriverFit::Unknown => {}
        }
    }
    arch_findings(&cuda, &m, o);
    if let Some(cudnn) = a.cudnn.as_deref().and_then(v)
        && let Some(support) = compat::cudnn_support(&cudnn)
    {
        // A release newer than the cuDNN table is judged by its family's
        // rule, and the line says so; a listed one speaks only when wrong.
        let rule = support.rule_note();
        match (support.supports(&cuda), &rule) {
            (false, _) => o.error(
                "cudnn-cuda",
                format!(
                    "cuDNN {cudnn} is not built for CUDA {cuda}{}",
                    rule.as_ref()
                        .map(|r| format!(", only for {} ({r})", support.describe_cuda()))
                        .unwrap_or_default()
                ),
                format!(
                    "install a matching pair, e.g. `cudaenv install {}+cudnn{}`",
                    cuda.truncate(2),
                    cudnn.truncate(2)
                ),
            ),
            (true, Some(r)) => o.ok(
                "cudnn-cuda",
                format!(
                    "cuDNN {cudnn} goes with CUDA {cuda}: built for {} ({r})",
                    support.describe_cuda()
                ),
            ),
            (true, None) => {}
        }
    }
}

/// The active CUDA against each of `machine`'s GPUs, with the same verdicts
/// as `compat`'s "this machine" column (`compat::Machine::can_run`) and
/// `verify`: a GPU the release dropped, or one newer than every architecture
/// it builds for, is an error. The second is the guides' case today (CUDA
/// 11.2 on an sm_89/sm_90/Blackwell GPU): no native code, only PTX that the
/// driver JIT-compiles at each library's first use, if the library has PTX.
fn arch_findings(cuda: &Version, machine: &compat::Machine, o: &mut Out) {
    let this_gpu = machine.gpu_named();
    for &gpu in &machine.gpus {
        let sm = gpu.sm();
        let family = gpu.family().unwrap_or("unknown architecture");
        match compat::arch::support(cuda, gpu) {
            ArchSupport::Native => o.ok("arch", format!("CUDA {cuda} supports {sm}")),
            ArchSupport::Compatible { via } => o.ok(
                "arch",
                format!("CUDA {cuda} runs on {sm} through its {} machine code (same architecture family)", via.sm()),
            ),
            ArchSupport::Deprecated { since } => o.warn(
                "arch-deprecated",
                format!("{sm} is deprecated since CUDA {since}; a future release drops it"),
                format!("stay on CUDA < {} for this GPU", compat::arch::removed_in(gpu).map(|r| r.to_string()).unwrap_or_else(|| "the release that removes it".into())),
            ),
            ArchSupport::Removed { since } => o.error(
                "arch-unsupported",
                format!("CUDA {cuda} does not support {this_gpu} ({sm}, {family}): support ended in CUDA {since}; expect \"no kernel image is available for execution on the device\""),
                format!("select a CUDA release before {since} (e.g. `cudaenv local 12.9`)"),
            ),
            ArchSupport::TooNew { first } => {
                let need = first
                    .as_ref()
                    .map(|f| format!("{sm} needs CUDA ≥ {f}"))
                    .unwrap_or_else(|| format!("{sm} is newer than any CUDA cudaenv knows"));
                let frameworks = compat::first_frameworks_for(gpu);
                o.error(
                    "arch-too-new",
                    format!("CUDA {cuda} predates {this_gpu} ({sm}, {family}): {need}. The stack has no native code for it, only PTX that the driver JIT-compiles at each library's first use (minutes for cuBLAS, again whenever the compute cache, CUDA_CACHE_MAXSIZE, overflows); libraries without PTX fail with \"no kernel image is available\""),
                    match first {
                        Some(fv) => format!(
                            "use CUDA ≥ {fv} (`cudaenv install {fv}`, then `cudaenv local {fv}`){}",
                            if frameworks.is_empty() {
                                String::new()
                            } else {
                                format!(" with a framework built for it: {}", frameworks.join(", "))
                            }
                        ),
                        None => "use the newest CUDA release".into(),
                    },
                );
            }
            ArchSupport::Unknown => {}
        }
    }
}

fn norm(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() { p } else { t }
}

fn library_findings(f: &Facts, o: &mut Out) {
    let active = f.active.as_ref().filter(|a| a.name != "system");
    let is_active_dir =
        |d: &str| active.is_some_and(|a| a.lib_dirs.iter().any(|x| norm(x) == norm(d)));
    let first_active = f.env.ld_library_path.iter().position(|d| is_active_dir(d));
    let driver_dir = f
        .libcuda
        .path
        .as_deref()
        .and_then(|p| p.rsplit_once('/'))
        .map(|(d, _)| d.to_string());
    let mut system_copies = Vec::new();
    for d in f
        .library_dirs
        .iter()
        .filter(|d| d.origin == "LD_LIBRARY_PATH")
    {
        if is_active_dir(&d.dir) {
            continue;
        }
        if d.libs
            .iter()
            .any(|l| l == "libcuda.so" || l.starts_with("libcuda.so."))
        {
            if d.dir.contains("/stubs") {
                o.error(
                    "libcuda-stub",
                    format!("{} on LD_LIBRARY_PATH holds the link-time stub libcuda.so: programs load it instead of the driver and fail with \"CUDA driver version is insufficient\"", d.dir),
                    format!("remove {} from LD_LIBRARY_PATH (stubs are for linking only: use -L, not the loader path)", d.dir),
                );
            } else if is_foreign_libcuda(d, driver_dir.as_deref(), f.driver().as_ref()) {
                o.warn(
                    "libcuda-compat",
                    format!("{} on LD_LIBRARY_PATH holds its own libcuda (a CUDA forward-compatibility package?): it replaces the installed driver's", d.dir),
                    "keep it only on data-center GPUs with a supported driver branch; otherwise remove it from LD_LIBRARY_PATH",
                );
            }
        }
        let libs: Vec<&String> = d
            .libs
            .iter()
            .filter(|l| !l.starts_with("libcuda.so"))
            .collect();
        if libs.is_empty() {
            continue;
        }
        let Some(a) = active else {
            system_copies.push(d);
            continue;
        };
        let shadowed: Vec<&str> = libs
            .iter()
            .filter(|l| a.libs.contains(l))
            .map(|s| s.as_str())
            .collect();
        let extra: Vec<&str> = libs
            .iter()
            .filter(|l| !a.libs.contains(l) && l.contains(".so."))
            .map(|s| s.as_str())
            .collect();
        let before = match (d.position, first_active) {
            (Some(p), Some(fa)) => p < fa,
            (Some(_), None) => true,
            _ => false,
        };
        if before && !shadowed.is_empty() {
            o.error(
                "ld-shadow",
                format!("{} on LD_LIBRARY_PATH comes before {}'s libraries and shadows them ({})", d.dir, a.name, list(&shadowed)),
                format!("remove {} from LD_LIBRARY_PATH (e.g. in ~/.bashrc); cudaenv puts the active version's directories there itself", d.dir),
            );
        } else if !extra.is_empty() {
            o.warn(
                "ld-extra",
                format!("{} on LD_LIBRARY_PATH provides libraries {} lacks ({}); programs asking for them mix two CUDA installs", d.dir, a.name, list(&extra)),
                format!("remove {} from LD_LIBRARY_PATH, or install a version that has them", d.dir),
            );
        }
    }
    if !system_copies.is_empty() {
        let dirs: Vec<&str> = system_copies.iter().map(|d| d.dir.as_str()).collect();
        let with_cudart: Vec<&&LibDir> = system_copies
            .iter()
            .filter(|d| d.libs.iter().any(|l| l.starts_with("libcudart.so.")))
            .collect();
        if with_cudart.len() > 1 {
            o.warn(
                "ld-copies",
                format!("LD_LIBRARY_PATH holds several CUDA runtimes ({}); the first one wins for each library", dirs.join(", ")),
                "keep one CUDA on LD_LIBRARY_PATH, or let cudaenv manage it (`cudaenv local VERSION`)",
            );
        } else {
            o.ok(
                "ld-copies",
                format!(
                    "LD_LIBRARY_PATH provides CUDA libraries from {}",
                    dirs.join(", ")
                ),
            );
        }
    }
    // The ldconfig cache is searched after LD_LIBRARY_PATH: it only matters for
    // sonames the active version lacks (e.g. a system libcudnn.so.8).
    if let Some(a) = active {
        for d in f.library_dirs.iter().filter(|d| d.origin == "ldconfig") {
            if is_active_dir(&d.dir) {
                continue;
            }
            let extra: Vec<&str> = d
                .libs
                .iter()
                .filter(|l| {
                    !l.starts_with("libcuda.so") && l.contains(".so.") && !a.libs.contains(l)
                })
                .map(|s| s.as_str())
                .collect();
            if !extra.is_empty() {
                o.warn(
                    "ldconfig",
                    format!("the system library cache provides {} from {}, which {} lacks: programs asking for them load the system copy", list(&extra), d.dir, a.name),
                    "install a version with those libraries (e.g. add cuDNN: `cudaenv install CUDA+cudnnX`), or ignore this if nothing uses them",
                );
            }
        }
        let home = a.cuda_home.as_deref();
        for (var, val) in [
            ("CUDA_HOME", &f.env.cuda_home),
            ("CUDA_PATH", &f.env.cuda_path),
        ] {
            if let Some(val) = val
                && home.map(norm) != Some(norm(val))
            {
                o.warn(
                    "cuda-home",
                    format!("{var}={val}, but the active version is {} ({}): build tools (nvcc, CMake, torch extensions) use {val}", a.name, home.unwrap_or("no toolkit tree")),
                    format!("unset {var} or activate {} (`eval \"$(cudaenv env)\"`)", a.name),
                );
            }
        }
    }
}

/// A libcuda on LD_LIBRARY_PATH that is not the running driver's: a `compat`
/// directory, or a versioned `libcuda.so.X.Y.Z` of another release. Containers
/// mount the driver's own libcuda in several directories (`/usr/local/nvidia/lib`
/// and `lib64`); those carry the driver's version and are fine.
fn is_foreign_libcuda(
    d: &LibDir,
    driver_dir: Option<&str>,
    driver: Option<&crate::machine::compat::DriverVersion>,
) -> bool {
    if driver_dir == Some(norm(&d.dir)) {
        return false;
    }
    if d.dir.split('/').any(|c| c == "compat") {
        return true;
    }
    let versions: Vec<crate::machine::compat::DriverVersion> = d
        .libs
        .iter()
        .filter_map(|l| l.strip_prefix("libcuda.so."))
        .filter_map(crate::machine::compat::DriverVersion::parse)
        .filter(|v| v.major() >= 100)
        .collect();
    match driver {
        Some(drv) => versions.iter().any(|v| v != drv),
        None => false,
    }
}

fn list(v: &[&str]) -> String {
    const MAX: usize = 4;
    if v.len() <= MAX {
        v.join(", ")
    } else {
        format!("{}, … {} more", v[..MAX].join(", "), v.len() - MAX)
    }
}

fn environment_findings(f: &Facts, o: &mut Out) {
    if let Some(cvd) = &f.env.cuda_visible_devices {
        let t = cvd.trim();
        if t.is_empty() || t == "-1" {
            let msg = format!(
                "CUDA_VISIBLE_DEVICES={cvd:?} hides every GPU: CUDA reports \"no CUDA-capable device is detected\""
            );
            if f.gpus.is_empty() {
                o.warn(
                    "visible-devices",
                    msg,
                    "unset CUDA_VISIBLE_DEVICES to use a GPU",
                );
            } else {
                o.error(
                    "visible-devices",
                    msg,
                    "unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. 0)",
                );
            }
        } else {
            let n = f.gpus.len();
            let bad: Vec<&str> = t
                .split(',')
                .map(str::trim)
                .filter(|x| x.parse::<usize>().is_ok_and(|i| n > 0 && i >= n))
                .collect();
            if bad.is_empty() {
                o.ok("visible-devices", format!("CUDA_VISIBLE_DEVICES={t}"));
            } else {
                o.warn("visible-devices", format!("CUDA_VISIBLE_DEVICES names GPUs that do not exist ({}); CUDA ignores everything after the first invalid entry", bad.join(", ")), format!("use indices below {n}"));
            }
        }
    }
    let has_driver = !f.driver_versions.is_empty();
    if f.platform.wsl {
        match f.device_nodes.iter().find(|d| d.path == "/dev/dxg") {
            Some(d) if !(d.readable && d.writable) => o.error(
                "device-nodes",
                "/dev/dxg is not readable and writable by this user",
                "check the WSL distribution's permissions on /dev/dxg",
            ),
            None if f.platform.wsl_libcuda => o.error(
                "device-nodes",
                "/dev/dxg is missing: WSL2 GPU paravirtualisation is off",
                "update WSL (`wsl --update`) and the Windows driver",
            ),
            _ => {}
        }
        return;
    }
    if !has_driver {
        return;
    }
    let denied: Vec<&str> = f
        .device_nodes
        .iter()
        .filter(|d| !(d.readable && d.writable))
        .map(|d| d.path.as_str())
        .collect();
    if !denied.is_empty() {
        o.error(
            "device-nodes",
            format!("no read/write access to {}", denied.join(", ")),
            "add the user to the group owning them (often `video`: `sudo usermod -aG video $USER`, then log in again), or fix the container's device mapping",
        );
    }
    let has = |p: &str| f.device_nodes.iter().any(|d| d.path == p);
    let has_gpu_node = f.device_nodes.iter().any(|d| {
        d.path
            .strip_prefix("/dev/nvidia")
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    });
    if !has("/dev/nvidiactl") || !has_gpu_node {
        o.error(
            "device-nodes",
            "the driver is loaded but /dev/nvidiactl or /dev/nvidiaN is missing",
            "run `sudo nvidia-modprobe -c=0` (or `nvidia-smi` once as root); in containers pass the devices (--gpus all)",
        );
    } else if !has("/dev/nvidia-uvm") {
        o.warn(
            "device-nodes",
            "/dev/nvidia-uvm is missing: CUDA creates it on first use only where nvidia-modprobe may; otherwise cuInit fails with CUDA_ERROR_UNKNOWN",
            "run `sudo nvidia-modprobe -u -c=0`",
        );
    } else if denied.is_empty() {
        o.ok(
            "device-nodes",
            format!(
                "{} device nodes, all readable and writable",
                f.device_nodes.len()
            ),
        );
    }
}

fn framework_findings(f: &Facts, o: &mut Out) {
    // The nvidia-smi header's "CUDA Version" is the driver's maximum.
    if let Some(smi) = &f.nvidia_smi
        && let Some(cv) = &smi.cuda_version
    {
        let active = match f
            .active
            .as_ref()
            .and_then(|a| a.cuda.as_ref().map(|c| (a, c)))
        {
            Some((a, c)) => format!("the active toolkit is {} (CUDA {c})", a.name),
            None => "it says nothing about which toolkit is installed or active".into(),
        };
        o.ok("nvidia-smi", format!("nvidia-smi's \"CUDA Version: {cv}\" is the newest CUDA this driver supports, not an installed toolkit; {active}"));
    }
    let Some(py) = &f.python else {
        return;
    };
    let fws = if py.frameworks.is_empty() {
        "no torch, tensorflow, jax, cupy, cuda-python or numba-cuda".to_string()
    } else {
        py.frameworks
            .iter()
            .map(|fw| format!("{} {}", fw.package, fw.version))
            .collect::<Vec<_>>()
            .join(", ")
    };
    o.ok(
        "python",
        format!(
            "Python {} at {}: {fws}",
            py.version.as_deref().unwrap_or("?"),
            py.executable
        ),
    );
    let active = f.active.as_ref().filter(|a| a.name != "system");
    let pathfinder = py
        .frameworks
        .iter()
        .any(|fw| fw.package == "cuda-pathfinder");
    for fw in &py.frameworks {
        // jax-cudaNN-pjrt is the half of jax-cudaNN-plugin: one finding for both.
        if fw.package.ends_with("-pjrt")
            && py
                .frameworks
                .iter()
                .any(|p| p.package == fw.package.replace("-pjrt", "-plugin"))
        {
            continue;
        }
        // cuda-pathfinder is what cupy and numba-cuda search with; said once, there.
        if fw.package == "cuda-pathfinder"
            && py
                .frameworks
                .iter()
                .any(|p| matches!(p.framework, Framework::Cupy | Framework::NumbaCuda))
        {
            continue;
        }
        framework_vs_active(fw, py, f, active, pathfinder, o);
    }
    for ov in &py.wheel_overlaps {
        let names: Vec<String> = ov
            .packages
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect();
        let Some(last) = ov.packages.last() else {
            continue;
        };
        o.error(
            "wheel-overlap",
            format!(
                "{} are installed together and both own {}: the one installed last overwrote the other's file, so a framework that needs the other gets the wrong library",
                names.join(" and "),
                ov.file
            ),
            format!(
                "keep one CUDA major per Python environment (a second venv for the other framework); to restore this file: `pip install --force-reinstall --no-deps {}=={}`",
                last.name, last.version
            ),
        );
    }
}

/// The `--for` argument that pins what this installed framework needs.
fn for_arg(fw: &InstalledFramework) -> String {
    let public = fw.version.split('+').next().unwrap_or(&fw.version);
    let mm: Vec<&str> = public.split('.').take(2).collect();
    let mm = mm.join(".");
    let major = fw.cuda.as_deref().and_then(|c| c.parse::<u32>().ok());
    match (fw.framework, major) {
        // The package name carries the CUDA major: `cupy-cuda12x==14.0`.
        (Framework::Cupy, Some(_)) => format!("{}=={mm}", fw.package),
        // A jax plugin names only its major: the table's build of that major.
        (Framework::Jax, Some(m)) => {
            let build = v(&mm)
                .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok())
                .and_then(|r| {
                    r.builds
                        .iter()
                        .find(|b| b.cuda.major() == m)
                        .map(|b| b.cuda.clone())
                });
            match build {
                Some(c) => format!("jax=={mm}+cu{}{}", c.major(), c.minor().unwrap_or(0)),
                None => format!("jax=={mm}"),
            }
        }
        _ => format!("{}=={mm}", fw.framework),
    }
}

/// Does cudaenv's table know this release (so `--for` works)?
fn has_table(fw: &InstalledFramework) -> bool {
    v(fw.version.split('+').next().unwrap_or(""))
        .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok())
        .is_some()
}

/// The NVIDIA wheels of one CUDA major in the environment, by the versions installed.
struct Wheels {
    cudart: Option<String>,
    cudnn: Option<String>,
}

impl Wheels {
    /// `known`: the framework is known to bring them (its own record), whichever are listed.
    fn of(py: &super::python::PythonEnv, major: u32, known: bool) -> Option<Wheels> {
        let m = major.to_string();
        if !known && !super::python::wheels_of_major(&py.nvidia_wheels, &m) {
            return None;
        }
        let suffix = format!("-cu{m}");
        let find = |base: &str| {
            py.nvidia_wheels
                .iter()
                .find(|w| {
                    let b = w.name.strip_suffix(&suffix).unwrap_or(&w.name);
                    b == base && (base == "nvidia-cudnn" || w.version.split('.').next() == Some(&m))
                })
                .map(|w| w.version.clone())
        };
        Some(Wheels {
            cudart: find("nvidia-cuda-runtime"),
            // cuDNN wheels carry the CUDA major only in their name.
            cudnn: py
                .nvidia_wheels
                .iter()
                .find(|w| w.name == format!("nvidia-cudnn{suffix}"))
                .map(|w| w.version.clone()),
        })
    }

    fn describe(&self, major: u32) -> String {
        let mut parts = vec![match &self.cudart {
            Some(c) => format!("CUDA runtime {c}"),
            None => format!("CUDA {major}"),
        }];
        if let Some(d) = &self.cudnn {
            parts.push(format!("cuDNN {d}"));
        }
        parts.join(" + ")
    }
}

/// How a framework finds its NVIDIA wheels, and what to install to use a stack instead.
fn wheel_mechanism(
    fw: &InstalledFramework,
    major: u32,
    pathfinder: bool,
) -> (&'static str, String) {
    let pathfinder_note = "cuda-pathfinder searches site-packages before LD_LIBRARY_PATH and before CUDA_PATH/CUDA_HOME";
    match fw.framework {
        Framework::Torch => (
            "torch preloads them by path and its libraries carry an RPATH into site-packages/nvidia",
            "PyPI's CUDA builds of torch always use their wheels; a stack serves extensions you compile against it (`CUDA_HOME`, nvcc)".into(),
        ),
        Framework::Tensorflow => (
            "TensorFlow's libraries carry an RPATH into site-packages/nvidia",
            format!(
                "install plain `tensorflow=={}` (not `[and-cuda]`) and remove the nvidia-*-cu{major} wheels",
                fw.version
            ),
        ),
        Framework::Jax => (
            "the plugin opens the wheels' libraries by path from site-packages",
            format!(
                "install `jax[cuda{major}-local]` (the plugin without NVIDIA's wheels) and remove the nvidia-* wheels"
            ),
        ),
        Framework::Cupy => (
            if pathfinder {
                pathfinder_note
            } else {
                "CuPy looks in site-packages/nvidia before CUDA_PATH"
            },
            format!(
                "install `{}` without its `[ctk]` extra and remove the nvidia-* wheels (and `cuda-toolkit`)",
                fw.package
            ),
        ),
        Framework::CudaPython | Framework::NumbaCuda => (
            pathfinder_note,
            format!(
                "install `{}` without its `cu{major}` extra and remove the nvidia-* wheels",
                fw.package
            ),
        ),
    }
}

/// The setting that keeps a version off LD_LIBRARY_PATH next to same-major wheels.
const KEEP_OFF_FIX: &str = "set `CUDAENV_BUNDLED_CUDA=wheels` (or `bundled-cuda = \"wheels\"` in $CUDAENV_ROOT/config.toml): activation then leaves the version's libraries off LD_LIBRARY_PATH next to these wheels";

fn framework_vs_active(
    fw: &InstalledFramework,
    py: &super::python::PythonEnv,
    f: &Facts,
    active: Option<&super::facts::ActiveFacts>,
    pathfinder: bool,
    o: &mut Out,
) {
    let name = format!("{} {}", fw.package, fw.version);
    if fw.framework == Framework::Torch && fw.cuda.is_none() {
        o.warn("framework-cpu", format!("{name} is a CPU-only build: it never uses a GPU, whatever the CUDA stack"), "reinstall a CUDA build: `pip install torch --index-url https://download.pytorch.org/whl/cu121` (pick the cuXYZ `cudaenv compat torch` suggests)");
        return;
    }
    // What it was built with: its own record, else the table.
    let table = FrameworkReq::new(fw.framework, v(fw.version.split('+').next().unwrap_or("")))
        .version
        .clone()
        .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok());
    let cuda_want = fw
        .cuda
        .as_deref()
        .and_then(|c| {
            // TF on Windows writes `64_112`; Linux `11.2`; jax plugins only the major.
            v(c).or_else(|| {
                c.strip_prefix("64_")
                    .and_then(|d| compat::framework::parse_cuda_tag(&format!("cu{d}")))
            })
        })
        .or_else(|| table.as_ref().map(|r| r.builds[0].cuda.clone()));
    let Some(cuda_want) = cuda_want else {
        if fw.framework == Framework::CudaPython || fw.framework == Framework::Cupy {
            o.ok("framework-stack", format!("{name} finds CUDA at run time ({}, then the loader path); it has no CUDA major of its own", if pathfinder { "cuda-pathfinder: site-packages first" } else { "CUDA_PATH" }));
        }
        return;
    };
    let major = cuda_want.major();
    // Loading from the wheels: every Python client of CUDA 12/13 does when they are
    // installed, except TensorFlow before 2.14 (which predates its `and-cuda` extra).
    let tf_old = fw.framework == Framework::Tensorflow
        && v(&fw.version).is_some_and(|x| x.truncate(2) < Version::from_parts(&[2, 14]));
    let wheels = if tf_old {
        None
    } else {
        Wheels::of(py, major, fw.bundles_cuda)
    };
    // Only these load cuDNN (CuPy 14, numba-cuda and cuda-python do not).
    let uses_cudnn = matches!(
        fw.framework,
        Framework::Torch | Framework::Tensorflow | Framework::Jax
    );
    if let Some(mut w) = wheels.filter(|_| fw.bundles_cuda || fw.framework != Framework::Tensorflow)
    {
        if !uses_cudnn {
            w.cudnn = None;
        }
        let (how, instead) = wheel_mechanism(fw, major, pathfinder);
        let uses = format!(
            "{name} loads {} from its NVIDIA wheels ({how})",
            w.describe(major)
        );
        let Some(a) = active else {
            o.ok(
                "framework-bundled",
                format!(
                    "{uses}; it needs no cudaenv version. To use a cudaenv stack instead: {instead}"
                ),
            );
            return;
        };
        let a_cuda = a.cuda.as_deref().and_then(v);
        if a_cuda.as_ref().is_some_and(|c| c.major() != major) {
            o.ok(
                "framework-bundled",
                format!(
                    "{uses}; the active {} (CUDA {}) has other sonames and does not interfere",
                    a.name,
                    a_cuda.map(|c| c.to_string()).unwrap_or_default()
                ),
            );
            return;
        }
        if f.bundled_cuda.as_deref() == Some("wheels") {
            o.ok("framework-bundled", format!("{uses}; activation keeps the active {} off LD_LIBRARY_PATH next to these wheels (bundled-cuda = wheels)", a.name));
            return;
        }
        // Same major, stack first on LD_LIBRARY_PATH: whatever the framework opens by
        // soname from a library without an RPATH comes from the stack.
        let a_cudnn = a.cudnn.as_deref().and_then(v);
        let w_cudnn = w.cudnn.as_deref().and_then(v);
        if let (Some(have), Some(want)) = (&a_cudnn, &w_cudnn)
            && have.major() == want.major()
            && have.truncate(3) != want.truncate(3)
        {
            let (an, cm) = (&a.name, have.major());
            let msg = format!(
                "{uses}, but the active {an} puts cuDNN {have} first on LD_LIBRARY_PATH: cuDNN's sub-libraries (libcudnn_graph.so.{cm}, libcudnn_cnn.so.{cm} …), opened by soname, come from there and do not match the wheel's {want}"
            );
            if fw.framework == Framework::Jax {
                // Measured: jax loads the mix too, but its matmuls still ran.
                o.warn(
                    "framework-bundled",
                    format!("{msg}; its cuDNN operations (convolutions) may fail"),
                    KEEP_OFF_FIX,
                );
            } else {
                o.error(
                    "framework-bundled",
                    format!("{msg} (\"cuDNN version incompatibility\")"),
                    KEEP_OFF_FIX,
                );
            }
            return;
        }
        if fw.framework == Framework::Jax {
            // Measured: jaxlib opens some wheels by path and others by soname,
            // so both copies of libcublasLt.so.13 were mapped.
            o.warn(
                "framework-bundled",
                format!("{uses}, and the active {} puts CUDA {major} libraries with the same sonames first on LD_LIBRARY_PATH: what it opens by soname comes from the stack, what it opens by path from the wheels, so two copies of one library load into one process (`cudaenv trace -- python …` lists them)", a.name),
                KEEP_OFF_FIX,
            );
        } else {
            o.ok(
                "framework-bundled",
                format!("{uses}, not from the active {}: the stack serves what you compile, not this framework. To use the stack instead: {instead}", a.name),
            );
        }
        return;
    }
    // Not from wheels: it needs a CUDA on the loader path.
    let cudnn_want = table.as_ref().and_then(|r| {
        r.builds
            .iter()
            .find(|b| b.cuda.truncate(2) == cuda_want.truncate(2))
            .and_then(|b| b.cudnn.clone())
    });
    let fix_for = if has_table(fw) {
        format!("cudaenv local --for {}", for_arg(fw))
    } else {
        format!("cudaenv install {major} && cudaenv local {major}")
    };
    let Some(a) = active else {
        // A system CUDA in the loader's cache serves it just as well.
        let soname = if major == 11 {
            "libcudart.so.11.0".to_string()
        } else {
            format!("libcudart.so.{major}")
        };
        if let Some(d) = f
            .library_dirs
            .iter()
            .find(|d| d.libs.iter().any(|l| l == &soname))
        {
            o.ok(
                "framework-stack",
                format!("{name} loads CUDA {major} from the loader path: {soname} in {} ({}); no cudaenv version is active", d.dir, d.origin),
            );
            return;
        }
        o.warn(
            "framework-stack",
            format!("{name} needs CUDA {cuda_want}{} on the library path, and no cudaenv version is active nor a {soname} on the loader path", cudnn_want.as_ref().map(|d| format!(" + cuDNN {d}")).unwrap_or_default()),
            fix_for,
        );
        return;
    };
    let a_cuda = a.cuda.as_deref().and_then(v);
    let a_cudnn = a.cudnn.as_deref().and_then(v);
    let mut problems = Vec::new();
    match &a_cuda {
        Some(c) if c.major() != cuda_want.major() => problems.push(format!(
            "it needs CUDA {}.x (libcudart.so.{}), the active version has CUDA {c}",
            cuda_want.major(),
            if cuda_want.major() == 11 {
                "11.0".to_string()
            } else {
                cuda_want.major().to_string()
            }
        )),
        Some(c) if c.truncate(2) < cuda_want.truncate(2) && cuda_want.parts().len() >= 2 => {
            problems.push(format!(
                "it was built with CUDA {cuda_want}, newer than the active {c}"
            ))
        }
        None => problems.push("the active version's CUDA is unknown".into()),
        _ => {}
    }
    if let Some(want) = &cudnn_want {
        match &a_cudnn {
            None => problems.push(format!("it needs cuDNN {want}, the active version has none")),
            Some(have) if have.major() != want.major() => problems.push(format!("it needs cuDNN {}.x, the active version has {have}", want.major())),
            Some(have) if have.truncate(2) < want.truncate(2) => problems.push(format!("it was built with cuDNN {want}, newer than the active {have} (\"Loaded runtime CuDNN library … but source was compiled with …\")")),
            _ => {}
        }
    }
    if problems.is_empty() {
        o.ok(
            "framework-stack",
            format!(
                "{name} loads CUDA from the active {}, which matches it",
                a.name
            ),
        );
    } else {
        o.error(
            "framework-stack",
            format!(
                "{name} does not match the active {}: {}",
                a.name,
                problems.join("; ")
            ),
            fix_for,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::doctor::facts::{
        ActiveFacts, DeviceNode, EnvFacts, HostFacts, NvidiaSmi, Sourced,
    };
    use crate::machine::doctor::libcuda::{Gpu, Probe};
    use crate::machine::doctor::python::{Package, PythonEnv};

    const CUDA13: &str = "/usr/local/cuda-13.0/targets/x86_64-linux/lib";

    fn libs(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// A healthy GPU machine: driver 580, one H200, CUDA 13.0 active and activated.
    fn healthy() -> Facts {
        Facts {
            platform: HostFacts {
                os: "linux".into(),
                arch: "x86_64".into(),
                wsl: false,
                wsl_libcuda: false,
            },
            driver_versions: vec![
                Sourced {
                    source: "/proc/driver/nvidia/version".into(),
                    version: "580.159.04".into(),
                },
                Sourced {
                    source: "libcuda".into(),
                    version: "580.159.04".into(),
                },
            ],
            libcuda: Probe {
                loaded: true,
                path: Some("/usr/lib/x86_64-linux-gnu/libcuda.so.1".into()),
                driver_api: Some(13000),
                ..Default::default()
            },
            gpus: vec![Gpu {
                index: 0,
                name: "NVIDIA H200".into(),
                compute_capability: Some("9.0".into()),
                memory_mib: Some(143771),
                source: "libcuda".into(),
            }],
            nvidia_smi: None,
            active: Some(ActiveFacts {
                name: "13.0".into(),
                spec: "13.0".into(),
                origin: "/work/.cuda-version".into(),
                origin_kind: "local".into(),
                cuda: Some("13.0.0".into()),
                cudnn: None,
                prefix: Some("/usr/local/cuda-13.0".into()),
                cuda_home: Some("/usr/local/cuda-13.0".into()),
                lib_dirs: vec![CUDA13.into()],
                libs: libs(&[
                    "libcudart.so",
                    "libcudart.so.13",
                    "libcudart.so.13.0.48",
                    "libcublas.so.13",
                ]),
            }),
            active_error: None,
            env: EnvFacts {
                ld_library_path: vec![CUDA13.into()],
                cuda_home: Some("/usr/local/cuda-13.0".into()),
                cuda_path: None,
                cuda_visible_devices: None,
                cudaenv_active: Some("13.0".into()),
            },
            library_dirs: vec![LibDir {
                dir: CUDA13.into(),
                origin: "LD_LIBRARY_PATH".into(),
                position: Some(0),
                libs: libs(&["libcudart.so.13"]),
            }],
            device_nodes: ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]
                .iter()
                .map(|p| DeviceNode {
                    path: p.to_string(),
                    readable: true,
                    writable: true,
                })
                .collect(),
            python: None,
            python_error: None,
            target: None,
            container: Default::default(),
            bundled_cuda: None,
        }
    }

    /// What torch 2.11+cu130 installed on the GPU machine (its dist-info versions).
    const CU13_WHEELS: [(&str, &str); 3] = [
        ("nvidia-cublas", "13.1.0.3"),
        ("nvidia-cuda-runtime", "13.0.96"),
        ("nvidia-cudnn-cu13", "9.19.0.56"),
    ];

    fn python(frameworks: Vec<InstalledFramework>, wheels: &[(&str, &str)]) -> Option<PythonEnv> {
        Some(PythonEnv {
            executable: "/venv/bin/python".into(),
            version: Some("3.11.7".into()),
            site_dirs: vec!["/venv/lib/python3.11/site-packages".into()],
            frameworks,
            nvidia_wheels: wheels
                .iter()
                .map(|(n, v)| Package {
                    name: n.to_string(),
                    version: v.to_string(),
                })
                .collect(),
            wheel_overlaps: Vec::new(),
        })
    }

    fn fw(
        framework: Framework,
        package: &str,
        version: &str,
        cuda: Option<&str>,
        bundles: bool,
    ) -> InstalledFramework {
        InstalledFramework {
            framework,
            package: package.into(),
            version: version.into(),
            cuda: cuda.map(str::to_string),
            cudnn: None,
            bundles_cuda: bundles,
        }
    }

    fn active_stack(
        f: &mut Facts,
        name: &str,
        cuda: &str,
        cudnn: Option<&str>,
        dir: &str,
        l: &[&str],
    ) {
        let a = f.active.as_mut().unwrap();
        a.name = name.into();
        a.cuda = Some(cuda.into());
        a.cudnn = cudnn.map(str::to_string);
        a.lib_dirs = vec![dir.into()];
        a.libs = libs(l);
        a.cuda_home = Some(dir.trim_end_matches("/lib64").into());
        f.env.ld_library_path = vec![dir.into()];
        f.env.cudaenv_active = Some(name.into());
        f.env.cuda_home = a.cuda_home.clone();
    }

    #[test]
    fn a_healthy_machine_has_no_problems() {
        let found = diagnose(&healthy());
        let bad: Vec<_> = found.iter().filter(|f| f.level != Level::Ok).collect();
        assert!(bad.is_empty(), "{bad:#?}");
        for code in [
            "driver",
            "gpus",
            "active",
            "driver-fit",
            "arch",
            "device-nodes",
        ] {
            assert!(
                found.iter().any(|f| f.code == code),
                "missing {code}: {found:#?}"
            );
        }
        assert!(
            found[0].message.contains("580.159.04") && found[0].message.contains("CUDA ≤ 13.0")
        );
    }

    type Case = (
        &'static str,
        fn(&mut Facts),
        &'static str,
        Level,
        &'static str,
    );

    /// Every finding doctor can report, each from a minimal change to the healthy machine.
    const CASES: &[Case] = &[
        (
            "no driver at all (CI)",
            |f| {
                f.driver_versions.clear();
                f.libcuda = Probe {
                    load_error: Some("libcuda.so.1: cannot open shared object file".into()),
                    ..Default::default()
                };
                f.gpus.clear();
                f.device_nodes.clear();
            },
            "no-driver",
            Level::Warning,
            "can be built here but not run",
        ),
        (
            "kernel module and libcuda differ",
            |f| f.driver_versions[1].version = "575.51.03".into(),
            "driver-mismatch",
            Level::Error,
            "reboot",
        ),
        (
            "kernel driver without libcuda",
            |f| {
                f.libcuda = Probe {
                    load_error: Some("not found".into()),
                    ..Default::default()
                };
                f.driver_versions.truncate(1);
                f.gpus.clear();
            },
            "libcuda-missing",
            Level::Error,
            "user-space",
        ),
        (
            "cuInit fails",
            |f| {
                f.libcuda.init_error = Some("CUDA_ERROR_UNKNOWN".into());
                f.gpus.clear();
            },
            "cuinit-failed",
            Level::Error,
            "nvidia-modprobe",
        ),
        (
            "driver without GPUs",
            |f| f.gpus.clear(),
            "no-gpu",
            Level::Error,
            "reports no GPU",
        ),
        (
            "selected version not installed",
            |f| {
                f.active = None;
                f.active_error = Some("version `12.4` is not installed".into());
            },
            "active-missing",
            Level::Error,
            "12.4",
        ),
        (
            "shell not activated",
            |f| f.env.cudaenv_active = None,
            "not-activated",
            Level::Warning,
            "cudaenv exec",
        ),
        (
            "driver too old",
            |f| {
                f.driver_versions
                    .iter_mut()
                    .for_each(|s| s.version = "570.26".into());
                f.libcuda.driver_api = Some(12080);
            },
            "driver-too-old",
            Level::Error,
            "≥ 580",
        ),
        (
            "driver only minor-compatible",
            |f| {
                active_stack(
                    f,
                    "12.4",
                    "12.4.1",
                    None,
                    "/c/12.4/lib64",
                    &["libcudart.so.12"],
                );
                f.driver_versions
                    .iter_mut()
                    .for_each(|s| s.version = "535.104.05".into());
            },
            "driver-fit",
            Level::Warning,
            "minor version compatibility",
        ),
        (
            "GPU dropped by the toolkit",
            |f| f.gpus[0].compute_capability = Some("6.1".into()),
            "arch-unsupported",
            Level::Error,
            "sm_61",
        ),
        (
            "GPU newer than the toolkit",
            |f| {
                active_stack(
                    f,
                    "11.2",
                    "11.2.2",
                    Some("8.1.1"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0"],
                )
            },
            "arch-too-new",
            Level::Error,
            "sm_90 needs CUDA ≥ 11.8",
        ),
        (
            "GPU deprecated",
            |f| {
                active_stack(
                    f,
                    "12.9",
                    "12.9.1",
                    None,
                    "/c/12.9/lib64",
                    &["libcudart.so.12"],
                );
                f.gpus[0].compute_capability = Some("7.0".into());
            },
            "arch-deprecated",
            Level::Warning,
            "sm_70",
        ),
        (
            "cuDNN built for another CUDA",
            |f| {
                active_stack(
                    f,
                    "x",
                    "13.0.0",
                    Some("9.1.0.70"),
                    CUDA13,
                    &["libcudart.so.13"],
                )
            },
            "cudnn-cuda",
            Level::Error,
            "cuDNN 9.1.0.70",
        ),
        (
            "cuDNN newer than the table, on its family's CUDA",
            |f| {
                active_stack(
                    f,
                    "x",
                    "13.0.0",
                    Some("9.40.0.1"),
                    CUDA13,
                    &["libcudart.so.13"],
                )
            },
            "cudnn-cuda",
            Level::Ok,
            "cuDNN 9.40.0.1 goes with CUDA 13.0.0: built for CUDA 12.x, 13.x (the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28)",
        ),
        (
            "cuDNN newer than the table, on a CUDA its family does not support",
            |f| {
                active_stack(
                    f,
                    "x",
                    "11.8.0",
                    Some("9.40.0.1"),
                    CUDA13,
                    &["libcudart.so.11.0"],
                )
            },
            "cudnn-cuda",
            Level::Error,
            "cuDNN 9.40.0.1 is not built for CUDA 11.8.0, only for CUDA 12.x, 13.x (the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28)",
        ),
        (
            "stray CUDA before the active one",
            |f| {
                f.env.ld_library_path.insert(0, "/opt/stray/lib".into());
                f.library_dirs.insert(
                    0,
                    LibDir {
                        dir: "/opt/stray/lib".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(0),
                        libs: libs(&["libcudart.so.13"]),
                    },
                );
                f.library_dirs[1].position = Some(1);
            },
            "ld-shadow",
            Level::Error,
            "/opt/stray/lib",
        ),
        (
            "stray CUDA and no activation",
            |f| {
                f.env.ld_library_path = vec!["/opt/stray/lib".into()];
                f.library_dirs = vec![LibDir {
                    dir: "/opt/stray/lib".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(0),
                    libs: libs(&["libcudart.so.13"]),
                }];
            },
            "ld-shadow",
            Level::Error,
            "shadows",
        ),
        (
            "extra libraries after the active one",
            |f| {
                f.env
                    .ld_library_path
                    .push("/usr/local/cuda-11.8/lib64".into());
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda-11.8/lib64".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcudart.so.11.0", "libcudnn.so.8"]),
                });
            },
            "ld-extra",
            Level::Warning,
            "libcudnn.so.8",
        ),
        (
            "several CUDAs with system active",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.library_dirs = vec![
                    LibDir {
                        dir: "/a".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(0),
                        libs: libs(&["libcudart.so.12"]),
                    },
                    LibDir {
                        dir: "/b".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(1),
                        libs: libs(&["libcudart.so.11.0"]),
                    },
                ];
            },
            "ld-copies",
            Level::Warning,
            "several CUDA runtimes",
        ),
        (
            "one system CUDA",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.library_dirs = vec![LibDir {
                    dir: "/usr/local/cuda/lib64".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(0),
                    libs: libs(&["libcudart.so.12"]),
                }];
            },
            "ld-copies",
            Level::Ok,
            "/usr/local/cuda/lib64",
        ),
        (
            "libcuda stub on the loader path",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda/lib64/stubs".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so"]),
                })
            },
            "libcuda-stub",
            Level::Error,
            "stub",
        ),
        (
            "forward-compat libcuda",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda-13.0/compat".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so.1"]),
                })
            },
            "libcuda-compat",
            Level::Warning,
            "forward-compatibility",
        ),
        (
            "another release's libcuda",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/opt/old-driver/lib".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so.1", "libcuda.so.535.104.05"]),
                })
            },
            "libcuda-compat",
            Level::Warning,
            "replaces the installed driver's",
        ),
        (
            "system cuDNN in ldconfig",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/lib/x86_64-linux-gnu".into(),
                    origin: "ldconfig".into(),
                    position: None,
                    libs: libs(&["libcuda.so.1", "libcudnn.so.9"]),
                })
            },
            "ldconfig",
            Level::Warning,
            "libcudnn.so.9",
        ),
        (
            "CUDA_HOME elsewhere",
            |f| f.env.cuda_home = Some("/usr/local/cuda-11.8".into()),
            "cuda-home",
            Level::Warning,
            "CUDA_HOME=/usr/local/cuda-11.8",
        ),
        (
            "CUDA_PATH elsewhere",
            |f| f.env.cuda_path = Some("/opt/cuda".into()),
            "cuda-home",
            Level::Warning,
            "CUDA_PATH=/opt/cuda",
        ),
        (
            "CUDA_VISIBLE_DEVICES=-1",
            |f| f.env.cuda_visible_devices = Some("-1".into()),
            "visible-devices",
            Level::Error,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES empty",
            |f| f.env.cuda_visible_devices = Some("".into()),
            "visible-devices",
            Level::Error,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES=-1 without GPUs",
            |f| {
                f.env.cuda_visible_devices = Some("-1".into());
                f.gpus.clear();
                f.libcuda.init_error = Some("CUDA_ERROR_NO_DEVICE".into());
            },
            "visible-devices",
            Level::Warning,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES past the last GPU",
            |f| f.env.cuda_visible_devices = Some("0,3".into()),
            "visible-devices",
            Level::Warning,
            "do not exist (3)",
        ),
        (
            "device nodes not accessible",
            |f| f.device_nodes[0].writable = false,
            "device-nodes",
            Level::Error,
            "usermod",
        ),
        (
            "device nodes missing",
            |f| f.device_nodes.retain(|d| d.path == "/dev/nvidia-uvm"),
            "device-nodes",
            Level::Error,
            "nvidia-modprobe",
        ),
        (
            "nvidia-uvm missing",
            |f| f.device_nodes.retain(|d| d.path != "/dev/nvidia-uvm"),
            "device-nodes",
            Level::Warning,
            "nvidia-uvm",
        ),
        (
            "WSL2 healthy",
            |f| {
                f.platform.wsl = true;
                f.platform.wsl_libcuda = true;
                f.libcuda.path = Some("/usr/lib/wsl/lib/libcuda.so.1".into());
                f.device_nodes = vec![DeviceNode {
                    path: "/dev/dxg".into(),
                    readable: true,
                    writable: true,
                }];
                f.driver_versions = vec![Sourced {
                    source: "nvidia-smi".into(),
                    version: "581.42".into(),
                }];
            },
            "wsl",
            Level::Ok,
            "Windows driver",
        ),
        (
            "WSL2 without the bridge",
            |f| {
                f.platform.wsl = true;
                f.platform.wsl_libcuda = false;
            },
            "wsl-libcuda",
            Level::Error,
            "Windows",
        ),
        (
            "WSL2 with a Linux libcuda",
            |f| {
                f.platform.wsl = true;
                f.platform.wsl_libcuda = true;
            },
            "wsl-libcuda",
            Level::Error,
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        ),
        (
            "WSL2 without /dev/dxg",
            |f| {
                f.platform.wsl = true;
                f.platform.wsl_libcuda = true;
                f.libcuda.path = Some("/usr/lib/wsl/lib/libcuda.so.1".into());
                f.device_nodes.clear();
            },
            "device-nodes",
            Level::Error,
            "/dev/dxg",
        ),
        (
            "nvidia-smi's CUDA Version",
            |f| {
                f.nvidia_smi = Some(NvidiaSmi {
                    path: "/usr/bin/nvidia-smi".into(),
                    cuda_version: Some("13.0".into()),
                    driver_version: Some("580.159.04".into()),
                    error: None,
                })
            },
            "nvidia-smi",
            Level::Ok,
            "not an installed toolkit",
        ),
        (
            "python env listed",
            |f| f.python = python(vec![], &[]),
            "python",
            Level::Ok,
            "no torch",
        ),
        (
            "CPU-only torch",
            |f| {
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.4.1+cpu", None, false)],
                    &[],
                )
            },
            "framework-cpu",
            Level::Warning,
            "CPU-only",
        ),
        (
            "torch bundles newer cuDNN than the active",
            |f| {
                active_stack(
                    f,
                    "12.4+cudnn9.1",
                    "12.4.1",
                    Some("9.1.0.70"),
                    "/c/12.4/lib64",
                    &["libcudart.so.12", "libcudnn.so.9"],
                );
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.7.0", Some("12.6"), true)],
                    &[("nvidia-cudnn-cu12", "9.5.1.17")],
                );
            },
            "framework-bundled",
            Level::Error,
            "cuDNN version incompatibility",
        ),
        (
            "torch bundles, no clash",
            |f| {
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.4.1", Some("12.1"), true)],
                    &[("nvidia-cudnn-cu12", "9.1.0.70")],
                )
            },
            "framework-bundled",
            Level::Ok,
            "does not interfere",
        ),
        (
            "jax bundles, system active",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda12-plugin",
                        "0.4.30",
                        Some("12"),
                        true,
                    )],
                    &[],
                );
            },
            "framework-bundled",
            Level::Ok,
            "needs no cudaenv version",
        ),
        (
            "tensorflow 2.10 on CUDA 13",
            |f| {
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                )
            },
            "framework-stack",
            Level::Error,
            "cudaenv local --for tensorflow==2.10",
        ),
        (
            "tensorflow 2.10 on 11.2+cudnn8.0",
            |f| {
                active_stack(
                    f,
                    "11.2+cudnn8.0",
                    "11.2.2",
                    Some("8.0.5"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0", "libcudnn.so.8"],
                );
                f.gpus[0].compute_capability = Some("8.6".into());
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Error,
            "newer than the active 8.0.5",
        ),
        (
            "tensorflow 2.10 matches",
            |f| {
                active_stack(
                    f,
                    "11.2+cudnn8.1",
                    "11.2.2",
                    Some("8.1.1.33"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0", "libcudnn.so.8"],
                );
                f.gpus[0].compute_capability = Some("8.6".into());
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Ok,
            "matches",
        ),
        (
            "tensorflow with no active version",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.15.0",
                        Some("12.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Warning,
            "cuDNN 8.9",
        ),
        (
            "torch 2.11 with cuDNN 9.19 wheels under a stack with cuDNN 9.14",
            |f| {
                active_stack(
                    f,
                    "sys13",
                    "13.0.2",
                    Some("9.14.0"),
                    "/usr/local/cuda-13.0/lib64",
                    &["libcudart.so.13", "libcudnn.so.9", "libcudnn_cnn.so.9"],
                );
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.11.0", Some("13.0"), true)],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Error,
            "do not match the wheel's 9.19.0.56",
        ),
        (
            "the same with bundled-cuda = wheels",
            |f| {
                active_stack(
                    f,
                    "sys13",
                    "13.0.2",
                    Some("9.14.0"),
                    "/usr/local/cuda-13.0/lib64",
                    &["libcudart.so.13", "libcudnn.so.9"],
                );
                f.bundled_cuda = Some("wheels".into());
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.11.0", Some("13.0"), true)],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Ok,
            "keeps the active sys13 off LD_LIBRARY_PATH",
        ),
        (
            "jax plugin with wheels under a CUDA 13 stack without cuDNN",
            |f| {
                f.python = python(
                    vec![
                        fw(
                            Framework::Jax,
                            "jax-cuda13-pjrt",
                            "0.11.2",
                            Some("13"),
                            false,
                        ),
                        fw(
                            Framework::Jax,
                            "jax-cuda13-plugin",
                            "0.11.2",
                            Some("13"),
                            true,
                        ),
                    ],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Warning,
            "two copies of one library",
        ),
        (
            "jax[cuda13-local] with nothing on the loader path",
            |f| {
                f.active = None;
                f.library_dirs.clear();
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda13-plugin",
                        "0.11.2",
                        Some("13"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Warning,
            "no cudaenv version is active",
        ),
        (
            "jax[cuda13-local] with the system's CUDA 13 in ld.so.cache",
            |f| {
                f.active = None;
                f.library_dirs = vec![LibDir {
                    dir: "/usr/local/cuda-13.0/targets/x86_64-linux/lib".into(),
                    origin: "ldconfig".into(),
                    position: None,
                    libs: libs(&["libcudart.so.13"]),
                }];
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda13-plugin",
                        "0.11.2",
                        Some("13"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Ok,
            "loads CUDA 13 from the loader path",
        ),
        (
            "cupy-cuda13x with its wheels and cuda-pathfinder",
            |f| {
                f.active = None;
                f.python = python(
                    vec![
                        fw(
                            Framework::CudaPython,
                            "cuda-pathfinder",
                            "1.3.3",
                            None,
                            false,
                        ),
                        fw(Framework::Cupy, "cupy-cuda13x", "14.0.1", Some("13"), true),
                    ],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Ok,
            "cuda-pathfinder searches site-packages before LD_LIBRARY_PATH",
        ),
        (
            "cuDNN wheels of two CUDA majors overwrite each other",
            |f| {
                let mut py = python(vec![], &[]).unwrap();
                py.wheel_overlaps = vec![crate::machine::doctor::python::WheelOverlap {
                    file: "nvidia/cudnn/lib/libcudnn.so.9".into(),
                    packages: vec![
                        Package {
                            name: "nvidia-cudnn-cu12".into(),
                            version: "9.10.2.21".into(),
                        },
                        Package {
                            name: "nvidia-cudnn-cu13".into(),
                            version: "9.19.0.56".into(),
                        },
                    ],
                }];
                f.python = Some(py);
            },
            "wheel-overlap",
            Level::Error,
            "--force-reinstall --no-deps nvidia-cudnn-cu13==9.19.0.56",
        ),
    ];

    #[test]
    fn every_finding_from_a_fact_set() {
        for (name, change, code, level, needle) in CASES {
            let mut f = healthy();
            change(&mut f);
            let found = diagnose(&f);
            let hit = found.iter().find(|x| x.code == *code && x.level == *level);
            let Some(hit) = hit else {
                panic!("{name}: no {level:?} {code} in {found:#?}");
            };
            let text = format!("{} {}", hit.message, hit.fix.as_deref().unwrap_or(""));
            assert!(text.contains(needle), "{name}: {text:?} lacks {needle:?}");
            if *level != Level::Ok {
                assert!(hit.fix.is_some(), "{name}: a problem needs a fix");
            }
        }
    }

    /// A container mounts the driver's libcuda in /usr/local/nvidia/lib and lib64
    /// (seen on the GPU machine): not a forward-compatibility library.
    #[test]
    fn the_drivers_own_libcuda_in_a_second_directory_is_fine() {
        let mut f = healthy();
        f.libcuda.path = Some("/usr/local/nvidia/lib64/libcuda.so.580.159.04".into());
        for dir in ["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"] {
            f.library_dirs.push(LibDir {
                dir: dir.into(),
                origin: "LD_LIBRARY_PATH".into(),
                position: Some(1),
                libs: libs(&["libcuda.so", "libcuda.so.1", "libcuda.so.580.159.04"]),
            });
        }
        let found = diagnose(&f);
        assert!(
            found.iter().all(|x| x.code != "libcuda-compat"),
            "{found:#?}"
        );
    }

    #[test]
    fn no_driver_is_not_an_error() {
        let mut f = healthy();
        (CASES[0].1)(&mut f);
        f.active = Some(ActiveFacts {
            name: "system".into(),
            ..Default::default()
        });
        let found = diagnose(&f);
        assert!(found.iter().all(|x| x.level != Level::Error), "{found:#?}");
    }

    #[test]
    fn facts_and_findings_round_trip_as_json() {
        let f = healthy();
        let json = serde_json::to_string(&f).unwrap();
        let back: Facts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        let j = serde_json::to_value(diagnose(&f)).unwrap();
        assert_eq!(j[0]["level"], "ok");
    }

    /// doctor's architecture verdict is compat's "this machine" verdict, for
    /// every CUDA release in the tables on every GPU they name.
    #[test]
    fn arch_check_agrees_with_compat_this_machine() {
        let gpus: Vec<ComputeCapability> = compat::data::arch()
            .arch
            .iter()
            .filter_map(|a| a.sm.parse().ok())
            .collect();
        let releases: Vec<Version> = (9..=13)
            .flat_map(|major| (0..=9).map(move |minor| Version::from_parts(&[major, minor])))
            .collect();
        let mut compared = 0;
        for cuda in &releases {
            for &gpu in &gpus {
                let machine = compat::Machine {
                    gpus: vec![gpu],
                    ..Default::default()
                };
                let mut o = Out(Vec::new());
                arch_findings(cuda, &machine, &mut o);
                let doctor_error = o.0.iter().any(|f| f.level == Level::Error);
                let compat_no = machine.can_run(cuda).is_err();
                assert_eq!(
                    doctor_error,
                    compat_no,
                    "CUDA {cuda} on {}: {:?}",
                    gpu.sm(),
                    o.0
                );
                compared += 1;
            }
        }
        assert!(compared > 300, "{compared}");
        // The guides' stack on an H200: an error naming the fix.
        let mut o = Out(Vec::new());
        arch_findings(
            &Version::from_parts(&[11, 2, 2]),
            &compat::Machine {
                gpus: vec![ComputeCapability::new(9, 0)],
                ..Default::default()
            },
            &mut o,
        );
        let f = &o.0[0];
        assert_eq!((f.level, f.code.as_str()), (Level::Error, "arch-too-new"));
        assert!(
            f.message.contains("sm_90 needs CUDA ≥ 11.8"),
            "{}",
            f.message
        );
        let fix = f.fix.as_deref().unwrap();
        assert!(
            fix.starts_with("use CUDA ≥ 11.8 (`cudaenv install 11.8`"),
            "{fix}"
        );
        assert!(fix.contains("TensorFlow 2.12 (CUDA 11.8)"), "{fix}");
    }
}
