//! From facts to findings: a pure function, table-tested over fact sets.
//!
//! Each finding has a level (`ok`, `warning`, `error`), a stable `code` for
//! scripts, a message that states what was found, and the command or action
//! that fixes it. Only errors make `doctor` exit non-zero; a machine without a
//! driver or GPU (CI, build hosts) gets warnings, never errors.

use serde::{Deserialize, Serialize};

use crate::i18n::Msg;
use crate::machine::compat::{
    self, ArchSupport, ComputeCapability, DriverFit, Framework, FrameworkReq, driver,
};
use crate::msg;
use crate::spec::Version;

use super::facts::{ActiveFacts, Facts, LibDir};
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
    /// What was found, in the user's language when shown (English in `--json`).
    pub message: Msg,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Msg>,
}

struct Out(Vec<Finding>);

impl Out {
    fn push(&mut self, level: Level, code: &str, message: Msg, fix: Option<Msg>) {
        self.0.push(Finding {
            level,
            code: code.into(),
            message,
            fix,
        });
    }
    fn ok(&mut self, code: &str, message: Msg) {
        self.push(Level::Ok, code, message, None);
    }
    fn warn(&mut self, code: &str, message: Msg, fix: Msg) {
        self.push(Level::Warning, code, message, Some(fix));
    }
    fn error(&mut self, code: &str, message: Msg, fix: Msg) {
        self.push(Level::Error, code, message, Some(fix));
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
    host_compiler_findings(f, &mut o);
    library_findings(f, &mut o);
    if let Some(w) = &f.windows {
        windows_findings(f, w, &mut o);
    }
    environment_findings(f, &mut o);
    // Containers' rules are Linux's (Apptainer, the NVIDIA container runtime).
    if f.windows.is_none() {
        o.0.extend(super::container::findings(f));
    }
    framework_findings(f, &mut o);
    o.0
}

/// The host compiler the active version's nvcc would use, against the
/// newest its release accepts (`registry/compat/host_compiler.toml`).
fn host_compiler_findings(f: &Facts, o: &mut Out) {
    use crate::activation::host_compiler as hc;
    let (Some(h), Some(a)) = (&f.host_compiler, &f.active) else {
        return;
    };
    let Some(cuda) = a.cuda.as_deref().and_then(|c| c.parse::<Version>().ok()) else {
        return;
    };
    let Some(limits) = hc::limits(&cuda) else {
        return;
    };
    let Some(c) = &h.compiler else {
        o.warn(
            "host-compiler",
            msg!("doctor-host-compiler-none", from = h.from),
            msg!("doctor-host-compiler-none-fix"),
        );
        return;
    };
    let setting = if h.by_setting {
        msg!("doctor-host-compiler-by-setting")
    } else {
        Msg::verbatim("")
    };
    if c.accepted_by(limits) {
        o.ok(
            "host-compiler",
            msg!(
                "doctor-host-compiler-ok",
                compiler = c.describe(),
                from = h.from,
                setting => setting,
                limits = limits.describe()
            ),
        );
        return;
    }
    let fix = match &h.accepted {
        Some(ok) => msg!("doctor-host-compiler-fix-switch", compiler = ok.describe()),
        None => msg!("doctor-host-compiler-fix-install", gcc = limits.gcc_max),
    };
    o.warn(
        "host-compiler",
        msg!(
            "doctor-host-compiler-refused",
            name = a.name,
            compiler = c.describe(),
            from = h.from,
            limits = limits.describe()
        ),
        fix,
    );
}

fn driver_findings(f: &Facts, o: &mut Out) {
    let driver = f.driver();
    let gpus = f.compute_capabilities();
    if f.platform.wsl {
        if !f.platform.wsl_libcuda {
            o.error(
                "wsl-libcuda",
                msg!("doctor-wsl-no-libcuda"),
                msg!("doctor-wsl-no-libcuda-fix"),
            );
        } else if let Some(p) = f
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
    match &driver {
        // On Windows, System32's nvcuda.dll is the driver even when nvidia-smi is not there.
        None if !f.libcuda.loaded && f.windows.as_ref().is_none_or(|w| w.nvcuda.is_none()) => {
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
            return;
        }
        None => o.ok("driver", msg!("doctor-driver-version-unknown")),
        Some(d) => {
            let src = &f.driver_versions[0].source;
            let max = f
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
            msg!("doctor-driver-mismatch", list = list),
            msg!("doctor-driver-mismatch-fix"),
        );
    }
    // Windows: the driver's CUDA DLL is System32's nvcuda.dll; its presence
    // is the fact (the probe's binding may look for the Linux name).
    if let Some(w) = &f.windows {
        if driver.is_some() && w.nvcuda.is_none() && !f.libcuda.loaded {
            o.error(
                "nvcuda-missing",
                msg!(
                    "doctor-win-nvcuda-missing",
                    dir = w.system_dir.as_deref().unwrap_or("System32")
                ),
                msg!("doctor-win-nvcuda-missing-fix"),
            );
        }
    } else if driver.is_some() && !f.libcuda.loaded && f.libcuda.load_error.is_some() {
        o.error(
            "libcuda-missing",
            msg!(
                "doctor-libcuda-missing",
                error = f.libcuda.load_error.as_deref().unwrap_or("")
            ),
            msg!("doctor-libcuda-missing-fix"),
        );
    }
    if let Some(err) = &f.libcuda.init_error {
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
    if f.gpus.is_empty() {
        if f.libcuda.init_error.is_none() && f.libcuda.loaded {
            o.error("no-gpu", msg!("doctor-no-gpu"), msg!("doctor-no-gpu-fix"));
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
    let _ = gpus;
}

/// Planning for another machine: its driver and GPUs stand in for this
/// one's in the checks of the active stack; this machine's driver is not judged.
fn target_findings(t: &crate::machine::compat::target::Target, o: &mut Out) {
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

fn active_findings(f: &Facts, o: &mut Out) {
    let Some(a) = &f.active else {
        if let Some(e) = &f.active_error {
            o.error(
                "active-missing",
                msg!("doctor-active-missing", error = e),
                msg!("doctor-active-missing-fix"),
            );
        }
        return;
    };
    if a.name == "system" {
        o.ok(
            "active",
            msg!("doctor-active-system", origin => origin_msg(a)),
        );
        return;
    }
    let what = match (&a.cuda, &a.cudnn) {
        (Some(c), Some(d)) => Msg::verbatim(format!("CUDA {c} + cuDNN {d}")),
        (Some(c), None) => msg!("doctor-active-no-cudnn", cuda = c),
        _ => msg!("doctor-active-versions-unknown"),
    };
    let libraries: String = a
        .libraries
        .iter()
        .map(|(component, version)| {
            let title = crate::spec::Library::from_component(component)
                .map_or(component.as_str(), |l| l.title());
            format!(" + {title} {version}")
        })
        .collect();
    let what = if libraries.is_empty() {
        what
    } else {
        msg!("doctor-active-with-libraries", what => what, libraries = libraries)
    };
    o.ok(
        "active",
        msg!("doctor-active", name = a.name, origin => origin_msg(a), what => what),
    );
    if f.env.cudaenv_active.as_deref() != Some(a.name.as_str()) {
        o.warn(
            "not-activated",
            match f.env.cudaenv_active.as_deref() {
                Some(other) => msg!("doctor-not-activated", name = a.name, active = other),
                None => msg!("doctor-not-activated-unset", name = a.name),
            },
            if f.windows.is_some() {
                msg!("doctor-win-not-activated-fix")
            } else {
                msg!("doctor-not-activated-fix")
            },
        );
    }
    let Some(cuda) = a.cuda.as_deref().and_then(v) else {
        return;
    };
    let m = f.planned_machine();
    if let Some(d) = &m.driver {
        let driver = match m.whose {
            compat::Whose::ThisMachine => msg!("doctor-driver-named", driver = d),
            compat::Whose::Target => msg!("doctor-target-driver-named", driver = d),
        };
        match driver::fit(d, &cuda, m.driver_os) {
            DriverFit::Full => o.ok(
                "driver-fit",
                msg!("doctor-driver-fit", driver => driver.clone(), cuda = cuda),
            ),
            DriverFit::MinorCompat { release_min } => o.warn(
                "driver-fit",
                msg!("doctor-driver-minor-compat", driver => driver.clone(), cuda = cuda),
                msg!("doctor-driver-minor-compat-fix", need = release_min),
            ),
            DriverFit::TooOld { need } => {
                o.error(
                    "driver-too-old",
                    msg!("doctor-driver-too-old", driver => driver.clone(), cuda = cuda, need = need),
                    match driver::max_cuda(d, m.driver_os) {
                        Some(max) => msg!("doctor-driver-too-old-fix-or-select", need = need, cuda = max),
                        None => msg!("doctor-driver-too-old-fix", need = need),
                    },
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
                match &rule {
                    Some(r) => msg!(
                        "doctor-cudnn-cuda-by-rule",
                        cudnn = cudnn,
                        cuda = cuda,
                        built_for = support.describe_cuda(),
                        rule => r.clone()
                    ),
                    None => msg!("doctor-cudnn-cuda", cudnn = cudnn, cuda = cuda),
                },
                msg!(
                    "doctor-cudnn-cuda-fix",
                    spec = format!("{}+cudnn{}", cuda.truncate(2), cudnn.truncate(2))
                ),
            ),
            (true, Some(r)) => o.ok(
                "cudnn-cuda",
                msg!(
                    "doctor-cudnn-cuda-ok-by-rule",
                    cudnn = cudnn,
                    cuda = cuda,
                    built_for = support.describe_cuda(),
                    rule => r.clone()
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
    let this_gpu = match machine.whose {
        compat::Whose::ThisMachine => msg!("doctor-this-gpu"),
        compat::Whose::Target => msg!("doctor-target-gpu"),
    };
    for &gpu in &machine.gpus {
        let sm = gpu.sm();
        let family = family_of(gpu);
        match compat::arch::support(cuda, gpu) {
            ArchSupport::Native => o.ok("arch", msg!("doctor-arch-native", cuda = cuda, sm = sm)),
            ArchSupport::Compatible { via } => o.ok(
                "arch",
                msg!("doctor-arch-compatible", cuda = cuda, sm = sm, via = via.sm()),
            ),
            ArchSupport::Deprecated { since } => o.warn(
                "arch-deprecated",
                msg!("doctor-arch-deprecated", sm = sm, since = since),
                match compat::arch::removed_in(gpu) {
                    Some(r) => msg!("doctor-arch-deprecated-fix", removed = r),
                    None => msg!("doctor-arch-deprecated-fix-unknown"),
                },
            ),
            ArchSupport::Removed { since } => o.error(
                "arch-unsupported",
                msg!("doctor-arch-removed", cuda = cuda, gpu => this_gpu.clone(), sm = sm, family => family, since = since),
                msg!("doctor-arch-removed-fix", since = since),
            ),
            ArchSupport::TooNew { first } => {
                let need = match &first {
                    Some(f) => msg!("doctor-arch-needs", sm = sm, first = f),
                    None => msg!("doctor-arch-newer-than-known", sm = sm),
                };
                let frameworks = compat::first_frameworks_for(gpu);
                o.error(
                    "arch-too-new",
                    msg!("doctor-arch-too-new", cuda = cuda, gpu => this_gpu.clone(), sm = sm, family => family, need => need),
                    match first {
                        Some(fv) if frameworks.is_empty() => msg!("doctor-arch-too-new-fix", first = fv),
                        Some(fv) => msg!(
                            "doctor-arch-too-new-fix-frameworks",
                            first = fv,
                            frameworks = frameworks.join(", ")
                        ),
                        None => msg!("doctor-arch-too-new-fix-newest"),
                    },
                );
            }
            ArchSupport::Unknown => {}
        }
    }
}

/// What selected the active version, as the facts record it (`origin_kind`
/// and its English text), in the reader's language: a path stays a path.
fn origin_msg(a: &ActiveFacts) -> Msg {
    match a.origin_kind.as_str() {
        "default" => msg!("doctor-origin-default"),
        "argument" => msg!("doctor-origin-argument"),
        "shell" => msg!(
            "doctor-origin-shell",
            variable = crate::context::env_vars::CUDAENV_VERSION
        ),
        "global" => msg!(
            "doctor-origin-global",
            path = a.origin.strip_suffix(" (global)").unwrap_or(&a.origin)
        ),
        _ => Msg::verbatim(a.origin.clone()),
    }
}

/// An architecture's family name (`Hopper`), or "unknown architecture".
fn family_of(gpu: ComputeCapability) -> Msg {
    match gpu.family() {
        Some(f) => Msg::verbatim(f),
        None => msg!("doctor-unknown-architecture"),
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
                    msg!("doctor-libcuda-stub", dir = d.dir),
                    msg!("doctor-libcuda-stub-fix", dir = d.dir),
                );
            } else if is_foreign_libcuda(d, driver_dir.as_deref(), f.driver().as_ref()) {
                o.warn(
                    "libcuda-compat",
                    msg!("doctor-libcuda-compat", dir = d.dir),
                    msg!("doctor-libcuda-compat-fix"),
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
                msg!("doctor-ld-shadow", dir = d.dir, name = a.name, libs => list(&shadowed)),
                msg!("doctor-ld-shadow-fix", dir = d.dir),
            );
        } else if !extra.is_empty() {
            o.warn(
                "ld-extra",
                msg!("doctor-ld-extra", dir = d.dir, name = a.name, libs => list(&extra)),
                msg!("doctor-ld-extra-fix", dir = d.dir),
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
                msg!("doctor-ld-copies", dirs = dirs.join(", ")),
                msg!("doctor-ld-copies-fix"),
            );
        } else {
            o.ok(
                "ld-copies",
                msg!("doctor-ld-system", dirs = dirs.join(", ")),
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
                    msg!("doctor-ldconfig", libs => list(&extra), dir = d.dir, name = a.name),
                    msg!("doctor-ldconfig-fix"),
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
                    match home {
                        Some(h) => msg!(
                            "doctor-cuda-home",
                            var = var,
                            value = val,
                            name = a.name,
                            home = h
                        ),
                        None => msg!(
                            "doctor-cuda-home-no-tree",
                            var = var,
                            value = val,
                            name = a.name
                        ),
                    },
                    if f.windows.is_some() {
                        msg!("doctor-win-cuda-home-fix", var = var, name = a.name)
                    } else {
                        msg!("doctor-cuda-home-fix", var = var, name = a.name)
                    },
                );
            }
        }
    }
}

/// A Windows path as Windows compares them: without case, `/` as `\`,
/// without a trailing separator.
fn win_norm(p: &str) -> String {
    let p = p.replace('/', "\\").to_ascii_lowercase();
    let t = p.trim_end_matches('\\');
    if t.is_empty() { p } else { t.to_string() }
}

/// `CUDA_PATH_V11_2` → 11.2.
fn versioned_cuda_path_release(name: &str) -> Option<Version> {
    let (major, minor) = name.strip_prefix("CUDA_PATH_V")?.split_once('_')?;
    Some(Version::from_parts(&[
        major.parse().ok()?,
        minor.parse().ok()?,
    ]))
}

/// What Windows adds to the checks: its DLL search path (PATH, where another
/// toolkit's `bin` shadows the active stack's DLLs: CUDA 11.x all name their
/// runtime `cudart64_110.dll`), the `CUDA_PATH_V*` variables NVIDIA's
/// installer leaves behind, and Microsoft's Visual C++ runtime that
/// TensorFlow's import needs.
fn windows_findings(f: &Facts, w: &super::facts::WindowsFacts, o: &mut Out) {
    let active = f.active.as_ref().filter(|a| a.name != "system");
    // --- PATH
    let active_dirs: Vec<String> = w.active_bin_dirs.iter().map(|d| win_norm(d)).collect();
    let is_active = |d: &str| active_dirs.contains(&win_norm(d));
    let first_active = w.path.iter().position(|d| is_active(d));
    let system = w.system_dir.as_deref().map(win_norm);
    let active_dlls: Vec<String> = w
        .active_dlls
        .iter()
        .map(|l| l.to_ascii_lowercase())
        .collect();
    let others: Vec<&LibDir> = w
        .dll_dirs
        .iter()
        .filter(|d| !is_active(&d.dir) && system.as_deref() != Some(win_norm(&d.dir).as_str()))
        .collect();
    match active.filter(|_| !w.active_bin_dirs.is_empty()) {
        Some(a) => {
            for d in &others {
                let (shadowed, extra): (Vec<&str>, Vec<&str>) = d
                    .libs
                    .iter()
                    .map(String::as_str)
                    .partition(|l| active_dlls.contains(&l.to_ascii_lowercase()));
                let before = match (d.position, first_active) {
                    (Some(p), Some(fa)) => p < fa,
                    (Some(_), None) => true,
                    _ => false,
                };
                if before && !shadowed.is_empty() {
                    o.error(
                        "path-shadow",
                        msg!("doctor-win-path-shadow", dir = d.dir, name = a.name, libs => list(&shadowed)),
                        msg!("doctor-win-path-shadow-fix", dir = d.dir),
                    );
                } else if !extra.is_empty() {
                    o.warn(
                        "path-extra",
                        msg!("doctor-win-path-extra", dir = d.dir, name = a.name, libs => list(&extra)),
                        msg!("doctor-win-path-extra-fix", dir = d.dir),
                    );
                }
            }
        }
        None => {
            let runtimes: Vec<&str> = others
                .iter()
                .filter(|d| {
                    d.libs
                        .iter()
                        .any(|l| l.to_ascii_lowercase().starts_with("cudart64_"))
                })
                .map(|d| d.dir.as_str())
                .collect();
            if runtimes.len() > 1 {
                o.warn(
                    "path-copies",
                    msg!("doctor-win-path-copies", dirs = runtimes.join(", ")),
                    msg!("doctor-win-path-copies-fix"),
                );
            }
        }
    }
    // --- CUDA_PATH_V<major>_<minor>
    let active_release = active
        .and_then(|a| a.cuda.as_deref())
        .and_then(v)
        .map(|c| c.truncate(2));
    let active_home = active.and_then(|a| a.cuda_home.as_deref());
    let mut fine = Vec::new();
    for p in &w.cuda_path_versions {
        let named = versioned_cuda_path_release(&p.name);
        let tree = p.cuda.as_deref().and_then(v).map(|c| c.truncate(2));
        let fix = || msg!("doctor-win-cuda-path-remove-fix", var = p.name);
        if !p.exists {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-missing",
                    var = p.name,
                    value = p.value
                ),
                fix(),
            );
        } else if let (Some(n), Some(t)) = (&named, &tree)
            && n != t
        {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-other-release",
                    var = p.name,
                    value = p.value,
                    named = n,
                    tree = t
                ),
                fix(),
            );
        } else if let (Some(n), Some(ar), Some(a)) = (&named, &active_release, active)
            && n == ar
            && active_home.map(win_norm) != Some(win_norm(&p.value))
        {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-not-active",
                    var = p.name,
                    value = p.value,
                    name = a.name
                ),
                msg!(
                    "doctor-win-cuda-path-not-active-fix",
                    var = p.name,
                    name = a.name
                ),
            );
        } else {
            fine.push(p.name.as_str());
        }
    }
    if !fine.is_empty() {
        o.ok(
            "cuda-path",
            msg!("doctor-win-cuda-path-ok", vars = fine.join(", ")),
        );
    }
    // --- TensorFlow after 2.10: no GPU on native Windows
    for fw in f.python.iter().flat_map(|p| &p.frameworks) {
        let Some(version) = (fw.framework == Framework::Tensorflow)
            .then(|| v(fw.version.split('+').next().unwrap_or(&fw.version)))
            .flatten()
        else {
            continue;
        };
        if let Err(e @ crate::Error::NoNativeWindowsGpu { .. }) =
            compat::framework::requirement(Framework::Tensorflow, &version, "windows")
            && let Some(fix) = e.hint_msg()
        {
            o.warn(
                "tensorflow-windows",
                msg!("doctor-win-tensorflow-no-gpu", version = fw.version),
                fix,
            );
        }
    }
    // --- the Visual C++ runtime
    let missing: Vec<&str> = w
        .vc_runtime
        .iter()
        .filter(|d| d.found.is_none())
        .map(|d| d.name.as_str())
        .collect();
    if w.vc_runtime.is_empty() {
        return;
    }
    if missing.is_empty() {
        let mut dirs: Vec<&str> = w
            .vc_runtime
            .iter()
            .filter_map(|d| d.found.as_deref())
            .collect();
        dirs.dedup();
        o.ok(
            "vc-runtime",
            msg!("doctor-win-vc-runtime-ok", dirs = dirs.join(", ")),
        );
        return;
    }
    let tensorflow = f.python.as_ref().is_some_and(|p| {
        p.frameworks
            .iter()
            .any(|fw| fw.framework == Framework::Tensorflow)
    });
    let message = msg!("doctor-win-vc-runtime-missing", dlls => list(&missing));
    let fix = msg!("doctor-win-vc-runtime-missing-fix");
    if tensorflow {
        o.error("vc-runtime", message, fix);
    } else {
        o.warn("vc-runtime", message, fix);
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

fn list(v: &[&str]) -> Msg {
    const MAX: usize = 4;
    if v.len() <= MAX {
        Msg::verbatim(v.join(", "))
    } else {
        msg!(
            "doctor-list-more",
            first = v[..MAX].join(", "),
            more = v.len() - MAX
        )
    }
}

fn environment_findings(f: &Facts, o: &mut Out) {
    if let Some(cvd) = &f.env.cuda_visible_devices {
        let t = cvd.trim();
        if t.is_empty() || t == "-1" {
            let msg = msg!("doctor-visible-devices-none", value = format!("{cvd:?}"));
            if f.gpus.is_empty() {
                o.warn(
                    "visible-devices",
                    msg,
                    msg!("doctor-visible-devices-none-fix-no-gpu"),
                );
            } else {
                o.error(
                    "visible-devices",
                    msg,
                    msg!("doctor-visible-devices-none-fix"),
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
                o.ok(
                    "visible-devices",
                    Msg::verbatim(format!("CUDA_VISIBLE_DEVICES={t}")),
                );
            } else {
                o.warn(
                    "visible-devices",
                    msg!("doctor-visible-devices-bad", bad = bad.join(", ")),
                    msg!("doctor-visible-devices-bad-fix", count = n),
                );
            }
        }
    }
    let has_driver = !f.driver_versions.is_empty();
    // Windows has no device nodes: the driver is reached through its DLLs.
    if f.windows.is_some() {
        return;
    }
    if f.platform.wsl {
        match f.device_nodes.iter().find(|d| d.path == "/dev/dxg") {
            Some(d) if !(d.readable && d.writable) => o.error(
                "device-nodes",
                msg!("doctor-dxg-denied"),
                msg!("doctor-dxg-denied-fix"),
            ),
            None if f.platform.wsl_libcuda => o.error(
                "device-nodes",
                msg!("doctor-dxg-missing"),
                msg!("doctor-dxg-missing-fix"),
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
            msg!("doctor-device-nodes-denied", nodes = denied.join(", ")),
            msg!("doctor-device-nodes-denied-fix"),
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
            msg!("doctor-device-nodes-missing"),
            msg!("doctor-device-nodes-missing-fix"),
        );
    } else if !has("/dev/nvidia-uvm") {
        o.warn(
            "device-nodes",
            msg!("doctor-uvm-missing"),
            msg!("doctor-uvm-missing-fix"),
        );
    } else if denied.is_empty() {
        o.ok(
            "device-nodes",
            msg!("doctor-device-nodes-ok", count = f.device_nodes.len()),
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
            Some((a, c)) => msg!("doctor-nvidia-smi-active", name = a.name, cuda = c),
            None => msg!("doctor-nvidia-smi-no-active"),
        };
        o.ok(
            "nvidia-smi",
            msg!("doctor-nvidia-smi", cuda = cv, active => active),
        );
    }
    let Some(py) = &f.python else {
        return;
    };
    let fws = if py.frameworks.is_empty() {
        msg!("doctor-python-no-frameworks")
    } else {
        Msg::verbatim(
            py.frameworks
                .iter()
                .map(|fw| format!("{} {}", fw.package, fw.version))
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    o.ok(
        "python",
        msg!(
            "doctor-python",
            version = py.version.as_deref().unwrap_or("?"),
            executable = py.executable,
            frameworks => fws
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
    let machine = f.planned_machine();
    for fw in &py.frameworks {
        kernel_findings(fw, &machine, o);
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
            msg!(
                "doctor-wheel-overlap",
                packages => Msg::And(names.into_iter().map(Msg::Verbatim).collect()),
                file = ov.file
            ),
            msg!(
                "doctor-wheel-overlap-fix",
                package = last.name,
                version = last.version
            ),
        );
    }
}

/// An installed framework's own GPU code (read from its libraries) against
/// each GPU of the machine planned for: machine code runs, PTX of an older
/// architecture runs after the driver JIT-compiles it, nothing else runs.
fn kernel_findings(fw: &InstalledFramework, machine: &compat::Machine, o: &mut Out) {
    use compat::kernels::{self, KernelFit, WhichRelease};
    for lib in fw.kernels.iter().filter(|l| l.error.is_some()) {
        o.warn(
            "framework-arch",
            msg!(
                "doctor-kernels-unreadable",
                package = fw.package,
                file = lib.file,
                error = lib.error.as_deref().unwrap_or("")
            ),
            msg!("doctor-kernels-unreadable-fix", package = fw.package),
        );
    }
    let libs: Vec<_> = fw
        .kernels
        .iter()
        .filter(|l| l.error.is_none() && !(l.sass.is_empty() && l.ptx.is_empty()))
        .collect();
    if libs.is_empty() {
        return;
    }
    let gpu_word = match machine.whose {
        compat::Whose::ThisMachine => msg!("doctor-this-gpu"),
        compat::Whose::Target => msg!("doctor-target-gpu"),
    };
    let mut gpus = machine.gpus.clone();
    gpus.sort();
    gpus.dedup();
    let sms = |set: &std::collections::BTreeSet<ComputeCapability>| -> Msg {
        if set.is_empty() {
            msg!("doctor-kernels-none")
        } else {
            Msg::verbatim(set.iter().map(|c| c.sm()).collect::<Vec<_>>().join(", "))
        }
    };
    for gpu in gpus {
        let rank = |k: &KernelFit| match k {
            KernelFit::Native { .. } => 0,
            KernelFit::Jit { .. } => 1,
            KernelFit::TooOld { .. } | KernelFit::Missing { .. } => 2,
        };
        let fits: Vec<_> = libs
            .iter()
            .filter_map(|l| Some((*l, kernels::fit(&l.sass, &l.ptx, gpu)?)))
            .collect();
        // The best-covered library decides whether the framework runs there;
        // one that fares worse is a warning of its own, since its operations
        // fail there. (torch 2.11+cu130's libtorch_cuda.so has sm_75 code,
        // its libtorch_cuda_linalg.so, loaded for linear algebra, has not.)
        let Some(&(lib, fit)) = fits.iter().min_by_key(|(_, k)| rank(k)) else {
            continue;
        };
        let worse: Vec<_> = fits.iter().filter(|(_, k)| rank(k) > rank(&fit)).collect();
        let sm = gpu.sm();
        let family = family_of(gpu);
        let version = fw.version.split('+').next().unwrap_or(&fw.version);
        let fix = || match v(version).and_then(|ver| kernels::release_for(fw.framework, &ver, gpu))
        {
            Some(r) if r.which == WhichRelease::Same => msg!(
                "doctor-kernels-fix-same",
                package = fw.package,
                release = r.release,
                cuda = r.cuda,
                sm = sm,
                command = install_command(fw, &r.release, &r.cuda)
            ),
            Some(r) if r.which == WhichRelease::Newer => msg!(
                "doctor-kernels-fix-newer",
                package = fw.package,
                release = r.release,
                cuda = r.cuda,
                sm = sm,
                command = install_command(fw, &r.release, &r.cuda)
            ),
            Some(r) => msg!(
                "doctor-kernels-fix-older",
                package = fw.package,
                release = r.release,
                cuda = r.cuda,
                sm = sm,
                command = install_command(fw, &r.release, &r.cuda)
            ),
            None => msg!("doctor-kernels-fix-none", package = fw.package, sm = sm),
        };
        match fit {
            KernelFit::Native { sass } => o.ok(
                "framework-arch",
                msg!(
                    "doctor-kernels-native",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    sass = sass.sm()
                ),
            ),
            KernelFit::Jit { ptx } => o.warn(
                "framework-arch",
                msg!(
                    "doctor-kernels-jit",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    file = lib.file,
                    sass => sms(&lib.sass),
                    ptx = ptx.sm()
                ),
                fix(),
            ),
            KernelFit::TooOld { .. } | KernelFit::Missing { .. } => o.error(
                "framework-arch",
                msg!(
                    "doctor-kernels-missing",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    file = lib.file,
                    sass => sms(&lib.sass),
                    ptx => sms(&lib.ptx)
                ),
                fix(),
            ),
        }
        for (part, k) in worse {
            let runs = if matches!(k, KernelFit::Jit { .. }) {
                "jit"
            } else {
                "no"
            };
            let text = msg!(
                "doctor-kernels-partial",
                package = fw.package,
                version = fw.version,
                gpu => gpu_word.clone(),
                sm = sm,
                file = part.file,
                sass => sms(&part.sass),
                ptx => sms(&part.ptx),
                runs = runs
            );
            o.warn("framework-arch", text, fix());
        }
    }
}

/// The pip command that installs `release` of this framework built for `cuda`.
fn install_command(fw: &InstalledFramework, release: &Version, cuda: &Version) -> String {
    let tag = format!("{}{}", cuda.major(), cuda.minor().unwrap_or(0));
    match fw.framework {
        Framework::Torch => format!(
            "pip install \"torch=={release}.*\" --index-url https://download.pytorch.org/whl/cu{tag}"
        ),
        Framework::Jax => format!("pip install \"jax[cuda{}]=={release}.*\"", cuda.major()),
        Framework::Cupy => format!("pip install \"cupy-cuda{}x=={release}.*\"", cuda.major()),
        _ => format!("pip install \"{}=={release}.*\"", fw.package),
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

    fn describe(&self, major: u32) -> Msg {
        let cuda = match &self.cudart {
            Some(c) => msg!("doctor-wheels-cuda-runtime", version = c),
            None => Msg::verbatim(format!("CUDA {major}")),
        };
        match &self.cudnn {
            Some(d) => msg!("doctor-wheels-with-cudnn", cuda => cuda, cudnn = d),
            None => cuda,
        }
    }
}

/// How a framework finds its NVIDIA wheels, and what to install to use a stack instead.
fn wheel_mechanism(fw: &InstalledFramework, major: u32, pathfinder: bool) -> (Msg, Msg) {
    let pathfinder_note = msg!("doctor-how-pathfinder");
    match fw.framework {
        Framework::Torch => (msg!("doctor-how-torch"), msg!("doctor-instead-torch")),
        Framework::Tensorflow => (
            msg!("doctor-how-tensorflow"),
            msg!(
                "doctor-instead-tensorflow",
                version = fw.version,
                major = major
            ),
        ),
        Framework::Jax => (
            msg!("doctor-how-jax"),
            msg!("doctor-instead-jax", major = major),
        ),
        Framework::Cupy => (
            if pathfinder {
                pathfinder_note
            } else {
                msg!("doctor-how-cupy")
            },
            msg!("doctor-instead-cupy", package = fw.package),
        ),
        Framework::CudaPython | Framework::NumbaCuda => (
            pathfinder_note,
            msg!(
                "doctor-instead-cuda-python",
                package = fw.package,
                major = major
            ),
        ),
    }
}

/// The setting that keeps a version off LD_LIBRARY_PATH next to same-major wheels.
fn keep_off_fix() -> Msg {
    msg!("doctor-keep-off-fix")
}

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
        o.warn(
            "framework-cpu",
            msg!("doctor-framework-cpu", name = name),
            msg!("doctor-framework-cpu-fix"),
        );
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
            o.ok(
                "framework-stack",
                if pathfinder {
                    msg!("doctor-framework-finds-cuda-pathfinder", name = name)
                } else {
                    msg!("doctor-framework-finds-cuda-path", name = name)
                },
            );
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
        let uses = msg!("doctor-framework-uses-wheels", name = name, what => w.describe(major), how => how);
        let Some(a) = active else {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-no-active", uses => uses, instead => instead),
            );
            return;
        };
        let a_cuda = a.cuda.as_deref().and_then(v);
        if a_cuda.as_ref().is_some_and(|c| c.major() != major) {
            o.ok(
                "framework-bundled",
                msg!(
                    "doctor-framework-bundled-other-major",
                    uses => uses,
                    name = a.name,
                    cuda = a_cuda.map(|c| c.to_string()).unwrap_or_default()
                ),
            );
            return;
        }
        if f.bundled_cuda.as_deref() == Some("wheels") {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-kept-off", uses => uses, name = a.name),
            );
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
            let mixed = msg!(
                "doctor-framework-cudnn-mixed",
                uses => uses,
                name = an,
                have = have,
                major = cm,
                want = want
            );
            if fw.framework == Framework::Jax {
                // Measured: jax loads the mix too, but its matmuls still ran.
                o.warn(
                    "framework-bundled",
                    msg!("doctor-framework-cudnn-mixed-jax", mixed => mixed),
                    keep_off_fix(),
                );
            } else {
                o.error(
                    "framework-bundled",
                    msg!("doctor-framework-cudnn-mixed-error", mixed => mixed),
                    keep_off_fix(),
                );
            }
            return;
        }
        if fw.framework == Framework::Jax {
            // Measured: jaxlib opens some wheels by path and others by soname,
            // so both copies of libcublasLt.so.13 were mapped.
            o.warn(
                "framework-bundled",
                msg!("doctor-framework-jax-two-copies", uses => uses, name = a.name, major = major),
                keep_off_fix(),
            );
        } else {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-not-stack", uses => uses, name = a.name, instead => instead),
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
    let fix_for = Msg::verbatim(if has_table(fw) {
        format!("cudaenv local --for {}", for_arg(fw))
    } else {
        format!("cudaenv install {major} && cudaenv local {major}")
    });
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
                msg!(
                    "doctor-framework-system-cuda",
                    name = name,
                    major = major,
                    soname = soname,
                    dir = d.dir,
                    origin = d.origin
                ),
            );
            return;
        }
        o.warn(
            "framework-stack",
            msg!(
                "doctor-framework-needs-cuda",
                name = name,
                stack = match &cudnn_want {
                    Some(d) => format!("CUDA {cuda_want} + cuDNN {d}"),
                    None => format!("CUDA {cuda_want}"),
                },
                soname = soname
            ),
            fix_for,
        );
        return;
    };
    let a_cuda = a.cuda.as_deref().and_then(v);
    let a_cudnn = a.cudnn.as_deref().and_then(v);
    let mut problems = Vec::new();
    match &a_cuda {
        Some(c) if c.major() != cuda_want.major() => problems.push(msg!(
            "doctor-framework-needs-major",
            major = cuda_want.major(),
            soname_major = if cuda_want.major() == 11 {
                "11.0".to_string()
            } else {
                cuda_want.major().to_string()
            },
            cuda = c
        )),
        Some(c) if c.truncate(2) < cuda_want.truncate(2) && cuda_want.parts().len() >= 2 => {
            problems.push(msg!(
                "doctor-framework-built-with-newer-cuda",
                want = cuda_want,
                cuda = c
            ))
        }
        None => problems.push(msg!("doctor-framework-active-cuda-unknown")),
        _ => {}
    }
    if let Some(want) = &cudnn_want {
        match &a_cudnn {
            None => problems.push(msg!("doctor-framework-needs-cudnn", want = want)),
            Some(have) if have.major() != want.major() => problems.push(msg!(
                "doctor-framework-needs-cudnn-major",
                major = want.major(),
                have = have
            )),
            Some(have) if have.truncate(2) < want.truncate(2) => problems.push(msg!(
                "doctor-framework-built-with-newer-cudnn",
                want = want,
                have = have
            )),
            _ => {}
        }
    }
    if problems.is_empty() {
        o.ok(
            "framework-stack",
            msg!("doctor-framework-matches", name = name, active = a.name),
        );
    } else {
        o.error(
            "framework-stack",
            msg!(
                "doctor-framework-mismatch",
                name = name,
                active = a.name,
                problems => Msg::Clauses(problems)
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
                libraries: Default::default(),
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
            host_compiler: None,
            windows: None,
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
            kernels: Vec::new(),
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

    /// A cu124 torch whose libtorch_cuda has machine code for sm_50 … sm_90
    /// and, when `ptx`, PTX for sm_90.
    fn torch_with_kernels(ptx: bool, error: Option<&str>) -> InstalledFramework {
        use crate::machine::doctor::python::LibraryKernels;
        let mut t = fw(Framework::Torch, "torch", "2.4.1+cu124", Some("12.4"), true);
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        t.kernels = vec![LibraryKernels {
            file: "torch/lib/libtorch_cuda.so".into(),
            sass: [
                "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
            ]
            .map(cc)
            .into(),
            ptx: if ptx {
                [cc("sm_90")].into()
            } else {
                Default::default()
            },
            error: None,
        }];
        if let Some(e) = error {
            t.kernels.push(LibraryKernels {
                file: "torch/lib/libc10_cuda.so".into(),
                error: Some(e.into()),
                ..LibraryKernels::default()
            });
        }
        t
    }

    /// torch 2.11.0+cu130's two kernel libraries as doctor read them on an
    /// H200 (docs/doctor.md): libtorch_cuda.so decides; libtorch_cuda_linalg.so,
    /// with fewer architectures, is a warning of its own where it lacks one.
    #[test]
    fn the_best_covered_library_decides_and_a_narrower_one_is_a_warning() {
        use crate::machine::doctor::python::LibraryKernels;
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let mut t = fw(
            Framework::Torch,
            "torch",
            "2.11.0+cu130",
            Some("13.0"),
            true,
        );
        t.kernels = vec![
            LibraryKernels {
                file: "torch/lib/libtorch_cuda.so".into(),
                sass: [
                    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120",
                    "sm_121",
                ]
                .map(cc)
                .into(),
                ..LibraryKernels::default()
            },
            LibraryKernels {
                file: "torch/lib/libtorch_cuda_linalg.so".into(),
                sass: ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
                    .map(cc)
                    .into(),
                ..LibraryKernels::default()
            },
        ];
        let with = |gpu: &str| {
            let mut f = healthy();
            f.gpus[0].compute_capability = Some(gpu.into());
            f.python = python(vec![t.clone()], &[]);
            diagnose(&f)
                .into_iter()
                .filter(|x| x.code == "framework-arch")
                .map(|x| (x.level, x.message.en()))
                .collect::<Vec<_>>()
        };
        let found = with("9.0");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Level::Ok);
        // A T4 (sm_75): torch runs; its linear algebra library cannot.
        let found = with("7.5");
        assert_eq!(
            found.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [Level::Ok, Level::Warning],
            "{found:?}"
        );
        assert!(
            found[1]
                .1
                .contains("but its torch/lib/libtorch_cuda_linalg.so has machine code for sm_80"),
            "{found:?}"
        );
        // Volta: neither has code; one error, naming the library that decides.
        let found = with("7.0");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Level::Error);
        assert!(
            found[0].1.contains("torch/lib/libtorch_cuda.so has"),
            "{found:?}"
        );
    }

    #[test]
    fn a_frameworks_kernels_against_the_gpu_machine_code_jit_or_none() {
        let with = |t: InstalledFramework, gpu: &str| {
            let mut f = healthy();
            f.gpus[0].compute_capability = Some(gpu.into());
            f.python = python(vec![t], &[]);
            diagnose(&f)
                .into_iter()
                .filter(|x| x.code == "framework-arch")
                .collect::<Vec<_>>()
        };
        // The H200: machine code for sm_90.
        let found = with(torch_with_kernels(false, None), "9.0");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].level, Level::Ok);
        assert!(
            found[0].message.en().contains("kernels for sm_90 run"),
            "{found:?}"
        );
        // sm_89 runs sm_86's machine code.
        let found = with(torch_with_kernels(false, None), "8.9");
        assert!(found[0].message.en().contains("for sm_86 run"), "{found:?}");
        // Blackwell without PTX: cannot run; the fix names torch 2.8 with CUDA 12.8.
        let found = with(torch_with_kernels(false, None), "12.0");
        assert_eq!(found[0].level, Level::Error);
        let msg = found[0].message.en();
        assert!(
            msg.contains("cannot run on this GPU (sm_120, Blackwell)"),
            "{msg}"
        );
        assert!(msg.contains("PTX for none"), "{msg}");
        let fix = found[0].fix.as_ref().unwrap().en();
        assert!(
            fix.contains("torch 2.8 built for CUDA 12.8: the first release after yours"),
            "{fix}"
        );
        assert!(fix.contains("download.pytorch.org/whl/cu128"), "{fix}");
        // With PTX for sm_90 it runs there after JIT: a warning, not an error.
        let found = with(torch_with_kernels(true, None), "12.0");
        assert_eq!(found[0].level, Level::Warning);
        assert!(
            found[0].message.en().contains("only PTX for sm_90"),
            "{found:?}"
        );
        // A cu130 torch 2.11 (machine code from sm_75) on a Volta: its own
        // release has a cu126 build with sm_70, so that is the fix.
        let mut t = torch_with_kernels(false, None);
        t.version = "2.11.0+cu130".into();
        t.kernels[0]
            .sass
            .retain(|c| c.sm() != "sm_50" && c.sm() != "sm_60" && c.sm() != "sm_70");
        let found = with(t, "7.0");
        assert_eq!(found[0].level, Level::Error);
        let fix = found[0].fix.as_ref().unwrap().en();
        assert!(
            fix.contains("the build of torch 2.11 for CUDA 12.6: that release also has"),
            "{fix}"
        );
        assert!(fix.contains("download.pytorch.org/whl/cu126"), "{fix}");
        // Older than everything: Kepler. The fix is an older release or none.
        let found = with(torch_with_kernels(true, None), "3.7");
        assert_eq!(found[0].level, Level::Error);
        // An unreadable library is a warning of its own; the readable one still counts.
        let found = with(
            torch_with_kernels(false, Some("not a fatbinary container")),
            "9.0",
        );
        assert_eq!(
            found.iter().map(|x| x.level).collect::<Vec<_>>(),
            [Level::Warning, Level::Ok]
        );
        // No GPU and no target: nothing to judge.
        let mut f = healthy();
        f.gpus.clear();
        f.python = python(vec![torch_with_kernels(false, None)], &[]);
        assert!(
            diagnose(&f)
                .into_iter()
                .find(|x| x.code == "framework-arch")
                .is_none()
        );
        // A target replaces this machine's GPU.
        let mut f = healthy();
        f.target = crate::machine::compat::target::Target::parse(None, Some("sm_120")).unwrap();
        f.python = python(vec![torch_with_kernels(false, None)], &[]);
        let e = diagnose(&f)
            .into_iter()
            .find(|x| x.code == "framework-arch")
            .unwrap();
        assert!(
            e.message.en().contains("the target machine's GPU (sm_120"),
            "{e:?}"
        );
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
            found[0].message.en().contains("580.159.04")
                && found[0].message.en().contains("CUDA ≤ 13.0")
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
            let text = format!(
                "{} {}",
                hit.message,
                hit.fix.as_ref().map(Msg::en).unwrap_or_default()
            );
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
            f.message.en().contains("sm_90 needs CUDA ≥ 11.8"),
            "{}",
            f.message
        );
        let fix = f.fix.as_ref().unwrap().en();
        assert!(
            fix.starts_with("use CUDA ≥ 11.8 (`cudaenv install 11.8`"),
            "{fix}"
        );
        assert!(fix.contains("TensorFlow 2.12 (CUDA 11.8)"), "{fix}");
    }
}

#[cfg(test)]
mod windows_tests {
    //! Windows' findings from a Windows fact set (tests/fixtures/doctor/
    //! windows-tf210.json: TensorFlow 2.10 pinned to 11.2+cudnn8.1, NVIDIA's
    //! CUDA 11.8 installer's bin first on PATH, a stale CUDA_PATH_V11_2,
    //! msvcp140_1.dll missing), each changed one way at a time.

    use super::*;
    use crate::machine::doctor::facts::{RuntimeDll, VersionedCudaPath, WindowsFacts};

    fn facts() -> Facts {
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/doctor/windows-tf210.json"
        )))
        .unwrap()
    }

    fn win(f: &mut Facts) -> &mut WindowsFacts {
        f.windows.as_mut().unwrap()
    }

    fn codes(f: &Facts) -> Vec<(Level, String)> {
        diagnose(f).into_iter().map(|x| (x.level, x.code)).collect()
    }

    fn find(f: &Facts, code: &str) -> Option<Finding> {
        diagnose(f).into_iter().find(|x| x.code == code)
    }

    #[test]
    fn the_windows_fact_set() {
        let f = facts();
        assert_eq!(f.driver_os(), compat::DriverOs::Windows);
        let found = diagnose(&f);
        let c = codes(&f);
        for want in [
            (Level::Ok, "driver"),
            (Level::Ok, "driver-fit"),
            (Level::Error, "path-shadow"),
            (Level::Warning, "cuda-path-stale"),
            (Level::Ok, "cuda-path"),
            (Level::Error, "vc-runtime"),
            (Level::Warning, "not-activated"),
        ] {
            assert!(
                c.contains(&(want.0, want.1.to_string())),
                "{want:?} in {found:#?}"
            );
        }
        // Windows has no /dev/nvidia*, and nvcuda.dll is in System32.
        for absent in ["device-nodes", "libcuda-missing", "nvcuda-missing"] {
            assert!(found.iter().all(|x| x.code != absent), "{found:#?}");
        }
        let driver = find(&f, "driver").unwrap();
        assert!(driver.message.en().contains("546.33 (from nvidia-smi)"));
        let shadow = find(&f, "path-shadow").unwrap();
        assert!(
            shadow.message.en().contains(r"CUDA\v11.8\bin on PATH"),
            "{shadow:?}"
        );
        assert!(
            shadow.message.en().contains("cudart64_110.dll"),
            "{shadow:?}"
        );
        let stale = find(&f, "cuda-path-stale").unwrap();
        assert!(
            stale.message.en().starts_with("CUDA_PATH_V11_2="),
            "{stale:?}"
        );
        assert!(
            stale
                .fix
                .unwrap()
                .en()
                .contains("SetEnvironmentVariable('CUDA_PATH_V11_2', $null, 'User')")
        );
        let vc = find(&f, "vc-runtime").unwrap();
        assert!(vc.message.en().contains("msvcp140_1.dll"), "{vc:?}");
        assert!(vc.message.en().contains("not about CUDA"), "{vc:?}");
        assert!(vc.fix.unwrap().en().contains("vc_redist.x64.exe"));
        // The fixes speak Windows.
        let not_activated = find(&f, "not-activated").unwrap().fix.unwrap().en();
        assert!(
            not_activated.contains("cudaenv init pwsh"),
            "{not_activated}"
        );
        assert!(!not_activated.contains("init bash"), "{not_activated}");
    }

    #[test]
    fn activated_first_on_path_nothing_is_shadowed() {
        let mut f = facts();
        let active_bin = win(&mut f).active_bin_dirs[0].clone();
        let w = win(&mut f);
        w.path.insert(0, active_bin.to_uppercase() + "\\");
        for d in &mut w.dll_dirs {
            d.position = d.position.map(|p| p + 1);
        }
        let c = codes(&f);
        assert!(!c.iter().any(|(_, code)| code == "path-shadow"), "{c:?}");
        // Its DLLs that the active stack lacks (nvrtc) are still worth a word.
        let extra = find(&f, "path-extra").unwrap();
        assert_eq!(extra.level, Level::Warning);
        assert!(
            extra.message.en().contains("nvrtc64_112_0.dll"),
            "{extra:?}"
        );
    }

    #[test]
    fn without_an_active_version_several_toolkits_on_path_are_named() {
        let mut f = facts();
        f.active = None;
        let w = win(&mut f);
        w.active_bin_dirs.clear();
        w.active_dlls.clear();
        let mut second = w.dll_dirs[0].clone();
        second.dir = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2\bin".into();
        second.position = Some(1);
        w.dll_dirs.push(second);
        let copies = find(&f, "path-copies").unwrap();
        assert_eq!(copies.level, Level::Warning);
        assert!(
            copies.message.en().contains(r"v11.8\bin, C:\Program Files"),
            "{copies:?}"
        );
    }

    #[test]
    fn cuda_path_variables() {
        let tree = |name: &str, value: &str, cuda: Option<&str>| VersionedCudaPath {
            name: name.into(),
            value: value.into(),
            exists: true,
            cuda: cuda.map(str::to_string),
        };
        let mut f = facts();
        // A CUDA_PATH_V11_2 that names an 11.8 tree.
        win(&mut f).cuda_path_versions =
            vec![tree("CUDA_PATH_V11_2", r"C:\CUDA\v11.8", Some("11.8.89"))];
        let x = find(&f, "cuda-path-stale").unwrap();
        assert!(
            x.message
                .en()
                .contains("a CUDA 11.8 tree: builds that ask for CUDA 11.2 get 11.8"),
            "{x:?}"
        );
        // The active release's variable elsewhere than the active version.
        win(&mut f).cuda_path_versions =
            vec![tree("CUDA_PATH_V11_2", r"C:\CUDA\v11.2", Some("11.2.2"))];
        let x = find(&f, "cuda-path-stale").unwrap();
        assert!(
            x.message
                .en()
                .contains("the active version of that release is 11.2.2+cudnn8.1.1.33"),
            "{x:?}"
        );
        assert!(x.fix.unwrap().en().contains("cudaenv exec"));
        // Pointing at the active version (activation set it): fine.
        let home = f.active.as_ref().unwrap().cuda_home.clone().unwrap();
        win(&mut f).cuda_path_versions = vec![tree(
            "CUDA_PATH_V11_2",
            &home.to_lowercase(),
            Some("11.2.2"),
        )];
        assert!(find(&f, "cuda-path-stale").is_none());
        assert_eq!(find(&f, "cuda-path").unwrap().level, Level::Ok);
    }

    #[test]
    fn the_visual_cpp_runtime() {
        let mut f = facts();
        for d in &mut win(&mut f).vc_runtime {
            d.found = Some(r"C:\Windows\System32".into());
        }
        let ok = find(&f, "vc-runtime").unwrap();
        assert_eq!(ok.level, Level::Ok);
        assert!(
            ok.message.en().contains(r"(in C:\Windows\System32)"),
            "{ok:?}"
        );
        // Missing without TensorFlow: a warning, not an error.
        let mut f = facts();
        f.python = None;
        win(&mut f).vc_runtime.push(RuntimeDll {
            name: "vcruntime140_1.dll".into(),
            found: None,
        });
        assert_eq!(find(&f, "vc-runtime").unwrap().level, Level::Warning);
    }

    #[test]
    fn tensorflow_after_2_10_on_native_windows() {
        let mut f = facts();
        let tf = &mut f.python.as_mut().unwrap().frameworks[0];
        tf.version = "2.15.1".into();
        tf.cuda = Some("12.2".into());
        let x = find(&f, "tensorflow-windows").unwrap();
        assert_eq!(x.level, Level::Warning);
        assert!(x.message.en().contains("tensorflow 2.15.1"), "{x:?}");
        let fix = x.fix.unwrap().en();
        assert!(
            fix.contains("WSL2") && fix.contains("cudaenv install 11.2+cudnn8.1"),
            "{fix}"
        );
        // 2.10 has its Windows build: nothing to say.
        assert!(find(&facts(), "tensorflow-windows").is_none());
    }

    /// No driver on Windows: said in Windows' terms (no /proc, no libcuda.so.1).
    #[test]
    fn no_driver_on_windows() {
        let mut f = facts();
        f.driver_versions.clear();
        f.nvidia_smi = None;
        win(&mut f).nvcuda = None;
        let x = find(&f, "no-driver").unwrap();
        assert_eq!(x.level, Level::Warning);
        assert!(x.message.en().contains("nvcuda.dll"), "{x:?}");
        assert!(!x.message.en().contains("/proc"), "{x:?}");
        assert!(!x.fix.unwrap().en().contains("--gpus"));
        // nvcuda.dll without nvidia-smi: a driver of unknown version, not none.
        win(&mut f).nvcuda = Some(r"C:\Windows\System32\nvcuda.dll".into());
        assert!(find(&f, "no-driver").is_none());
        assert_eq!(find(&f, "driver").unwrap().level, Level::Ok);
    }

    /// The driver from nvidia-smi.exe and nvcuda.dll: the DLL missing while
    /// nvidia-smi answers is an error; a Linux fact set has no Windows findings.
    #[test]
    fn the_drivers_dll() {
        let mut f = facts();
        win(&mut f).nvcuda = None;
        assert_eq!(find(&f, "nvcuda-missing").unwrap().level, Level::Error);
        let mut f = facts();
        f.windows = None;
        f.platform.os = "linux".into();
        for code in ["path-shadow", "cuda-path-stale", "vc-runtime"] {
            assert!(find(&f, code).is_none(), "{code}");
        }
    }
}
