//! Gathering the facts doctor reasons about — without requiring nvidia-smi.
//!
//! Every fact is plain data (`Facts`, serializable: `doctor --json` prints it
//! next to the findings), gathered here and only here. The driver and the
//! GPUs are the host's facts (`machine::facts`, the gatherer the install
//! guard, `compat` and `explain` use too), carried at the top level of
//! `Facts`; the rest — the active version, the libraries the loader would
//! find, Windows' DLL search, containers, Python — is doctor's own. A machine
//! without a driver is a normal case: the facts say so and gathering never
//! fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::activation::select;
use crate::context::Context;
use crate::context::env_vars;
use crate::machine::compat::target::Target;
use crate::machine::compat::{DriverOs, DriverVersion, Machine};
use crate::machine::facts::{self, Host, command};

use super::python::{self, PythonEnv};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// The driver and the GPUs: `platform`, `driver_versions`, `libcuda`,
    /// `gpus`, `nvidia_smi`.
    #[serde(flatten)]
    pub host: Host,
    pub active: Option<ActiveFacts>,
    /// Why there is no active version (a pin to something not installed, a bad file).
    pub active_error: Option<String>,
    pub env: EnvFacts,
    /// Directories holding CUDA/cuDNN libraries, by where the loader would find them.
    pub library_dirs: Vec<LibDir>,
    pub device_nodes: Vec<DeviceNode>,
    pub python: Option<PythonEnv>,
    pub python_error: Option<String>,
    /// The machine the compatibility checks plan for instead of this one
    /// (`--target-driver`, `--target-arch`); this machine's facts stay as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    #[serde(default)]
    pub container: super::container::ContainerFacts,
    /// The `bundled-cuda` setting (`stack` or `wheels`) activation applies.
    #[serde(default)]
    pub bundled_cuda: Option<String>,
    /// The host compiler the active version's nvcc would use (only for a
    /// version that has nvcc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_compiler: Option<HostCompilerFacts>,
    /// What only Windows has (gathered there only): the DLL search path,
    /// NVIDIA's installer's `CUDA_PATH_V*`, Microsoft's runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<WindowsFacts>,
}

/// Windows looks for a DLL in the program's directory, System32, then each
/// directory on PATH (there is no LD_LIBRARY_PATH and no ldconfig cache),
/// so these are the facts its findings are about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowsFacts {
    /// System32, searched before PATH.
    pub system_dir: Option<String>,
    /// `System32\nvcuda.dll`, the driver's CUDA DLL, when it is there.
    #[serde(default)]
    pub nvcuda: Option<String>,
    /// PATH, in order.
    #[serde(default)]
    pub path: Vec<String>,
    /// The entries of PATH that hold CUDA/cuDNN DLLs (origin `PATH`,
    /// position in `path`).
    #[serde(default)]
    pub dll_dirs: Vec<LibDir>,
    /// The active version's DLL directories (its `bin`), and their CUDA/cuDNN DLLs.
    #[serde(default)]
    pub active_bin_dirs: Vec<String>,
    #[serde(default)]
    pub active_dlls: Vec<String>,
    /// `CUDA_PATH_V<major>_<minor>` variables, as set.
    #[serde(default)]
    pub cuda_path_versions: Vec<VersionedCudaPath>,
    /// The Visual C++ runtime DLLs TensorFlow's import needs, and where each was found.
    #[serde(default)]
    pub vc_runtime: Vec<RuntimeDll>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionedCudaPath {
    /// `CUDA_PATH_V11_8`.
    pub name: String,
    pub value: String,
    /// The value is a directory.
    pub exists: bool,
    /// The CUDA release of the tree there (`version.json`, …), if it is one.
    pub cuda: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeDll {
    pub name: String,
    /// The directory it was found in (System32 first, then PATH).
    pub found: Option<String>,
}

/// Which host compiler nvcc would use under activation, and which installed
/// ones the active CUDA accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCompilerFacts {
    pub compiler: Option<crate::activation::host_compiler::Compiler>,
    /// `-ccbin in NVCC_PREPEND_FLAGS`, `NVCC_CCBIN` or `g++ on PATH`.
    pub from: String,
    /// Activation set it (the `host-compiler` setting).
    pub by_setting: bool,
    /// An installed compiler the active CUDA accepts, if any.
    pub accepted: Option<crate::activation::host_compiler::Compiler>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveFacts {
    pub name: String,
    pub spec: String,
    pub origin: String,
    pub origin_kind: String,
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    /// The libraries beside the toolkit it carries: `{"nccl": "2.21.5"}`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub libraries: std::collections::BTreeMap<String, String>,
    pub prefix: Option<String>,
    pub cuda_home: Option<String>,
    pub lib_dirs: Vec<String>,
    /// CUDA/cuDNN library files in those directories.
    pub libs: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvFacts {
    pub ld_library_path: Vec<String>,
    pub cuda_home: Option<String>,
    pub cuda_path: Option<String>,
    pub cuda_visible_devices: Option<String>,
    /// The version this environment was activated for (`CUDAENV_ACTIVE`).
    pub cudaenv_active: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibDir {
    pub dir: String,
    /// `LD_LIBRARY_PATH`, `ldconfig`, `CUDA_HOME` or `CUDA_PATH`.
    pub origin: String,
    /// Position on LD_LIBRARY_PATH (0 = searched first).
    pub position: Option<usize>,
    pub libs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceNode {
    pub path: String,
    pub readable: bool,
    pub writable: bool,
}

impl Facts {
    /// The driver version to reason with: the kernel module's, else libcuda's, else nvidia-smi's.
    pub fn driver(&self) -> Option<DriverVersion> {
        self.host.driver()
    }

    /// Whose driver this is: Windows' under WSL, on Windows, and in facts
    /// recorded there.
    pub fn driver_os(&self) -> DriverOs {
        if self.windows.is_some() {
            DriverOs::Windows
        } else {
            self.host.driver_os()
        }
    }

    /// The machine the active stack must fit: the target, else this one.
    pub fn planned_machine(&self) -> Machine {
        match &self.target {
            Some(t) => t.machine(),
            None => self.machine(),
        }
    }

    /// What the compatibility rules need.
    pub fn machine(&self) -> Machine {
        Machine {
            driver_os: self.driver_os(),
            ..self.host.machine()
        }
    }
}

/// Library file names that belong to CUDA, cuDNN or the driver.
const LIB_PREFIXES: &[&str] = &[
    "libcudart.so",
    "libcublas.so",
    "libcublasLt.so",
    "libcudnn.so",
    "libcudnn_",
    "libcufft.so",
    "libcurand.so",
    "libcusolver.so",
    "libcusparse.so",
    "libnvrtc.so",
    "libnvJitLink.so",
    "libcupti.so",
    "libcuda.so",
    "libnccl.so",
    "libnvinfer.so",
    "libcusparseLt.so",
    "libcutensor.so",
];

pub fn is_cuda_lib(file: &str) -> bool {
    LIB_PREFIXES.iter().any(|p| file.starts_with(p)) && file.contains(".so")
}

/// A DLL of CUDA, cuDNN or a library beside them (`cudart64_110.dll`,
/// `cudnn64_8.dll`, `nccl64_2.dll`), by the names `explain` knows; not the
/// driver's `nvcuda.dll`, not Microsoft's runtime.
pub fn is_cuda_dll(file: &str) -> bool {
    use crate::machine::compat::libraries::{Provider, identify};
    let lower = file.to_ascii_lowercase();
    lower.ends_with(".dll")
        && identify(file).is_some_and(|id| {
            matches!(
                id.provider,
                Provider::Cuda { .. } | Provider::Cudnn { .. } | Provider::Library { .. }
            )
        })
}

/// The CUDA/cuDNN DLLs in `dir`, sorted.
fn cuda_dlls_in(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_cuda_dll(n))
        .collect();
    v.sort();
    v
}

/// The Visual C++ runtime DLLs TensorFlow's Windows builds need (its
/// `self_check.py` checks msvcp140.dll and msvcp140_1.dll) and the
/// vcruntime DLLs they link.
pub const VC_RUNTIME_DLLS: [&str; 4] = [
    "msvcp140.dll",
    "msvcp140_1.dll",
    "vcruntime140.dll",
    "vcruntime140_1.dll",
];

pub(super) fn cuda_libs_in(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_cuda_lib(n))
        .collect();
    v.sort();
    v
}

/// Where and how to look: the host's facts (`machine::facts::Options`), and
/// whether to ask Python.
pub struct Options<'a> {
    pub host: facts::Options<'a>,
    pub python: bool,
}

/// Gathers everything. Never fails: what cannot be learned is recorded as absent.
pub fn gather(ctx: &Context, opts: &Options) -> Facts {
    let mut f = Facts {
        host: facts::gather(ctx, opts.host),
        ..Facts::default()
    };
    active(ctx, &mut f);
    f.windows = windows(ctx);
    f.host_compiler = host_compiler(ctx);
    f.env = EnvFacts {
        ld_library_path: split_path_var(ctx, env_vars::LD_LIBRARY_PATH),
        cuda_home: ctx.var(env_vars::CUDA_HOME).map(str::to_string),
        cuda_path: ctx.var(env_vars::CUDA_PATH).map(str::to_string),
        cuda_visible_devices: ctx
            .var_os(env_vars::CUDA_VISIBLE_DEVICES)
            .map(|v| v.to_string_lossy().into_owned()),
        cudaenv_active: ctx.var(env_vars::CUDAENV_ACTIVE).map(str::to_string),
    };
    library_dirs(ctx, &mut f);
    f.device_nodes = device_nodes();
    f.container = super::container::gather(ctx, Path::new("/"));
    if opts.python {
        match python::probe(ctx) {
            Ok(p) => f.python = Some(p),
            Err(e) => f.python_error = Some(e),
        }
        // An invalid setting is reported by the commands that activate.
        f.bundled_cuda = crate::context::config::BundledCuda::resolve(ctx)
            .ok()
            .map(|b| {
                match b {
                    crate::context::config::BundledCuda::Stack => "stack",
                    crate::context::config::BundledCuda::Wheels => "wheels",
                }
                .to_string()
            });
    }
    f
}

fn active(ctx: &Context, f: &mut Facts) {
    match select::active(ctx) {
        Ok((sel, act)) => {
            let v = act.installed();
            let lib_dirs: Vec<PathBuf> = v.map(|v| v.lib_dirs()).unwrap_or_default();
            let mut libs = BTreeSet::new();
            for d in &lib_dirs {
                libs.extend(cuda_libs_in(d));
            }
            f.active = Some(ActiveFacts {
                name: act.name(),
                spec: sel.spec.to_string(),
                origin: sel.origin.to_string(),
                origin_kind: sel.origin.kind().into(),
                cuda: v.and_then(|v| v.cuda()).map(|c| c.to_string()),
                cudnn: v.and_then(|v| v.cudnn()).map(|c| c.to_string()),
                libraries: v
                    .map(|v| {
                        v.libs()
                            .iter()
                            .map(|(l, lv)| (l.component().to_string(), lv.to_string()))
                            .collect()
                    })
                    .unwrap_or_default(),
                prefix: v.map(|v| v.prefix().display().to_string()),
                cuda_home: v
                    .and_then(|v| v.cuda_home())
                    .map(|p| p.display().to_string()),
                lib_dirs: lib_dirs.iter().map(|p| p.display().to_string()).collect(),
                libs: libs.into_iter().collect(),
            });
        }
        Err(e) => {
            let mut msg = e.to_string();
            if let Some(h) = e.hint() {
                msg.push_str(&format!(" ({h})"));
            }
            f.active_error = Some(msg);
        }
    }
}

/// What nvcc would take as its host compiler once the active version is
/// activated (`cudaenv exec` would run it so): the activation's
/// NVCC_PREPEND_FLAGS/NVCC_CCBIN if it sets them, else the environment's,
/// else `g++` on PATH.
fn host_compiler(ctx: &Context) -> Option<HostCompilerFacts> {
    use crate::activation::host_compiler as hc;
    let (_, active) = select::active(ctx).ok()?;
    let v = active.installed()?;
    if !v.bin_dirs().iter().any(|d| d.join("nvcc").is_file()) {
        return None;
    }
    let store = crate::store::Store::configured(ctx).ok()?;
    let delta = crate::activation::plan(ctx, &store, &active).ok()?;
    let set = |name: &str| {
        delta
            .changes
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_ref())
            .map(|v| v.to_string_lossy().into_owned())
    };
    let by_setting = set(env_vars::NVCC_CCBIN).is_some();
    let flags = set(env_vars::NVCC_PREPEND_FLAGS)
        .or_else(|| ctx.var(env_vars::NVCC_PREPEND_FLAGS).map(str::to_string))
        .unwrap_or_default();
    let ccbin =
        set(env_vars::NVCC_CCBIN).or_else(|| ctx.var(env_vars::NVCC_CCBIN).map(str::to_string));
    let path_dirs: Vec<PathBuf> =
        crate::os::path_list::dirs(ctx.var_os(env_vars::PATH).unwrap_or_default())
            .map(Path::to_path_buf)
            .collect();
    let lookup = |name: &str| {
        if name.contains('/') {
            Some(PathBuf::from(name))
        } else {
            crate::os::path_list::find(name.as_ref(), path_dirs.iter().map(PathBuf::as_path))
        }
    };
    let (path, from) = match (hc::ccbin_in(&flags), ccbin) {
        (Some(c), _) => (lookup(c), "-ccbin in NVCC_PREPEND_FLAGS"),
        (None, Some(c)) => (lookup(&c), "NVCC_CCBIN"),
        (None, None) => (lookup("g++"), "g++ on PATH"),
    };
    let accepted = v
        .cuda()
        .and_then(hc::limits)
        .and_then(|l| hc::choose(l, &path_dirs));
    Some(HostCompilerFacts {
        compiler: path.as_deref().and_then(hc::probe),
        from: from.into(),
        by_setting,
        accepted,
    })
}

/// The Windows facts, on Windows only (where the platform layer names a
/// System32): PATH and the DLLs on it, the active version's DLLs, the
/// `CUDA_PATH_V*` variables and the trees they name, Microsoft's runtime.
fn windows(ctx: &Context) -> Option<WindowsFacts> {
    let system = crate::os::system_dll_dir(ctx.var_os(env_vars::SYSTEM_ROOT))?;
    let path = split_path_var(ctx, env_vars::PATH);
    let dll_dirs = path
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_empty())
        .filter_map(|(i, d)| {
            let libs = cuda_dlls_in(Path::new(d));
            (!libs.is_empty()).then(|| LibDir {
                dir: d.clone(),
                origin: env_vars::PATH.into(),
                position: Some(i),
                libs,
            })
        })
        .collect();
    let active_bin_dirs: Vec<PathBuf> = select::active(ctx)
        .ok()
        .and_then(|(_, a)| a.installed().map(|v| v.bin_dirs()))
        .unwrap_or_default();
    let mut active_dlls = BTreeSet::new();
    for d in &active_bin_dirs {
        active_dlls.extend(cuda_dlls_in(d));
    }
    let mut cuda_path_versions: Vec<VersionedCudaPath> = ctx
        .vars()
        .iter()
        .filter_map(|(name, value)| {
            let name = name.to_str()?.to_ascii_uppercase();
            name.strip_prefix("CUDA_PATH_V")?;
            let value = value.to_string_lossy().into_owned();
            let exists = Path::new(&value).is_dir();
            let cuda = exists
                .then(|| crate::store::toolkit::inspect(Path::new(&value)).ok())
                .flatten()
                .and_then(|t| t.cuda)
                .map(|c| c.version.to_string());
            Some(VersionedCudaPath {
                name,
                value,
                exists,
                cuda,
            })
        })
        .collect();
    cuda_path_versions.sort_by(|a, b| a.name.cmp(&b.name));
    let search: Vec<PathBuf> = std::iter::once(system.clone())
        .chain(path.iter().filter(|d| !d.is_empty()).map(PathBuf::from))
        .collect();
    let vc_runtime = VC_RUNTIME_DLLS
        .iter()
        .map(|name| RuntimeDll {
            name: name.to_string(),
            found: search
                .iter()
                .find(|d| d.join(name).is_file())
                .map(|d| d.display().to_string()),
        })
        .collect();
    let nvcuda = system.join("nvcuda.dll");
    Some(WindowsFacts {
        nvcuda: nvcuda.is_file().then(|| nvcuda.display().to_string()),
        system_dir: Some(system.display().to_string()),
        path,
        dll_dirs,
        active_bin_dirs: active_bin_dirs
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        active_dlls: active_dlls.into_iter().collect(),
        cuda_path_versions,
        vc_runtime,
    })
}

fn split_path_var(ctx: &Context, name: &str) -> Vec<String> {
    ctx.var(name)
        .map(|v| {
            crate::os::path_list::entries(v.as_ref())
                .map(|e| e.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn library_dirs(ctx: &Context, f: &mut Facts) {
    let mut out: Vec<LibDir> = Vec::new();
    for (i, d) in f.env.ld_library_path.iter().enumerate() {
        // An empty element means the working directory to the loader.
        let dir = if d.is_empty() {
            ctx.cwd().to_path_buf()
        } else {
            PathBuf::from(d)
        };
        let libs = cuda_libs_in(&dir);
        if !libs.is_empty() {
            out.push(LibDir {
                dir: d.clone(),
                origin: env_vars::LD_LIBRARY_PATH.into(),
                position: Some(i),
                libs,
            });
        }
    }
    for (var, val) in [
        (env_vars::CUDA_HOME, &f.env.cuda_home),
        (env_vars::CUDA_PATH, &f.env.cuda_path),
    ] {
        let Some(home) = val else { continue };
        for sub in ["lib64", "lib"] {
            let dir = Path::new(home).join(sub);
            let libs = cuda_libs_in(&dir);
            if !libs.is_empty() {
                out.push(LibDir {
                    dir: dir.display().to_string(),
                    origin: var.into(),
                    position: None,
                    libs,
                });
                break;
            }
        }
    }
    let ldconfig = command::which(ctx, "ldconfig", &["/sbin", "/usr/sbin"]);
    if let Some(ldc) = ldconfig {
        let mut cmd = Command::new(ldc);
        cmd.arg("-p").env_clear().env("LC_ALL", "C");
        if let Ok(o) = command::run(cmd, Duration::from_secs(10))
            && o.ok()
        {
            for (dir, libs) in parse_ldconfig(&o.stdout) {
                out.push(LibDir {
                    dir,
                    origin: "ldconfig".into(),
                    position: None,
                    libs,
                });
            }
        }
    }
    f.library_dirs = out;
}

/// `\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12` → dirs and their CUDA libs.
pub fn parse_ldconfig(text: &str) -> Vec<(String, Vec<String>)> {
    let mut dirs: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        let Some((name, target)) = line.trim().split_once(" => ") else {
            continue;
        };
        let file = name.split_whitespace().next().unwrap_or("");
        if !is_cuda_lib(file) {
            continue;
        }
        let dir = Path::new(target.trim())
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match dirs.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, libs)) => {
                if !libs.iter().any(|l| l == file) {
                    libs.push(file.to_string());
                }
            }
            None => dirs.push((dir, vec![file.to_string()])),
        }
    }
    for (_, libs) in &mut dirs {
        libs.sort();
    }
    dirs
}

fn device_nodes() -> Vec<DeviceNode> {
    let mut v: Vec<DeviceNode> = std::fs::read_dir("/dev")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_str()?.to_string();
                    (n.starts_with("nvidia") || n == "dxg").then(|| e.path())
                })
                .filter(|p| !p.is_dir())
                .map(|p| DeviceNode {
                    readable: crate::os::access_readable(&p),
                    writable: crate::os::access_writable(&p),
                    path: p.display().to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Windows facts from a made-up Windows: System32 under `SystemRoot`,
    /// a toolkit's bin on PATH, a CUDA_PATH_V* to nowhere. Only Windows
    /// gathers them (under Wine in `scripts/windows-test.sh unit`); elsewhere
    /// there are none.
    #[test]
    fn gathers_the_windows_facts_on_windows_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("Windows");
        let system = root.join("System32");
        let toolkit = dir.path().join("v11.8").join("bin");
        std::fs::create_dir_all(&system).unwrap();
        std::fs::create_dir_all(&toolkit).unwrap();
        for f in [
            "nvcuda.dll",
            "msvcp140.dll",
            "vcruntime140.dll",
            "kernel32.dll",
        ] {
            std::fs::write(system.join(f), "").unwrap();
        }
        for f in [
            "cudart64_110.dll",
            "cublas64_11.dll",
            "vcruntime140_1.dll",
            "nvcc.exe",
        ] {
            std::fs::write(toolkit.join(f), "").unwrap();
        }
        let path = crate::os::path_list::join([toolkit.as_os_str(), system.as_os_str()]);
        let ctx = Context::new(
            [
                ("HOME".into(), dir.path().as_os_str().to_owned()),
                (env_vars::PATH.into(), path),
                (env_vars::SYSTEM_ROOT.into(), root.as_os_str().to_owned()),
                (
                    env_vars::CUDAENV_ROOT.into(),
                    dir.path().join("root").into_os_string(),
                ),
                (
                    "CUDA_PATH_V11_2".into(),
                    dir.path().join("v11.2").into_os_string(),
                ),
            ],
            dir.path().to_path_buf(),
        )
        .unwrap();
        let w = windows(&ctx);
        // On Linux there are no Windows facts, and no System32 to find.
        assert_eq!(
            w.is_none(),
            crate::os::system_dll_dir(Some(root.as_os_str())).is_none()
        );
        if let Some(w) = w {
            assert_eq!(
                w.system_dir.as_deref(),
                Some(system.display().to_string().as_str())
            );
            assert!(w.nvcuda.is_some());
            assert_eq!(w.dll_dirs.len(), 1, "{w:#?}");
            assert_eq!(w.dll_dirs[0].position, Some(0));
            assert_eq!(w.dll_dirs[0].libs, ["cublas64_11.dll", "cudart64_110.dll"]);
            assert_eq!(w.cuda_path_versions.len(), 1);
            assert_eq!(w.cuda_path_versions[0].name, "CUDA_PATH_V11_2");
            assert!(!w.cuda_path_versions[0].exists);
            let found: Vec<(&str, bool)> = w
                .vc_runtime
                .iter()
                .map(|d| (d.name.as_str(), d.found.is_some()))
                .collect();
            assert_eq!(
                found,
                [
                    ("msvcp140.dll", true),
                    ("msvcp140_1.dll", false),
                    ("vcruntime140.dll", true),
                    ("vcruntime140_1.dll", true),
                ]
            );
        }
    }

    #[test]
    fn parses_ldconfig() {
        let text = "1234 libs found in cache `/etc/ld.so.cache'\n\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda-12.4/lib64/libcudart.so.12\n\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n\tlibcublas.so.12 (libc6,x86-64) => /usr/local/cuda-12.4/lib64/libcublas.so.12\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n";
        let d = parse_ldconfig(text);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].0, "/usr/local/cuda-12.4/lib64");
        assert_eq!(d[0].1, vec!["libcublas.so.12", "libcudart.so.12"]);
        assert_eq!(d[1].1, vec!["libcuda.so.1", "libcudnn.so.9"]);
    }
}
