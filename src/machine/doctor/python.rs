//! The current Python environment and the frameworks installed in it, found
//! WITHOUT importing them (importing torch takes seconds and can itself crash
//! on exactly the problems doctor is asked about).
//!
//! The interpreter is `CUDAENV_PYTHON`, else `$VIRTUAL_ENV/bin/python`, else
//! `$CONDA_PREFIX/bin/python`, else `python3`/`python` on PATH. It is asked
//! only for its package directories (`sysconfig`, `sys.path`), then the
//! `*.dist-info/METADATA` files there are read directly, as are the plain-text
//! build records frameworks ship (`torch/version.py`,
//! `tensorflow/python/platform/build_info.py`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::context::env_vars;
use crate::machine::compat::{ComputeCapability, Framework};

use crate::machine::facts::command;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonEnv {
    pub executable: String,
    pub version: Option<String>,
    pub site_dirs: Vec<String>,
    pub frameworks: Vec<InstalledFramework>,
    /// NVIDIA CUDA/cuDNN wheels present (`nvidia-cudnn-cu12 9.1.0.70`).
    pub nvidia_wheels: Vec<Package>,
    /// Library files that two installed distributions both claim (pip's RECORD):
    /// the one installed last overwrote the other's.
    #[serde(default)]
    pub wheel_overlaps: Vec<WheelOverlap>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WheelOverlap {
    /// Relative to the site-packages directory (`nvidia/cudnn/lib/libcudnn.so.9`).
    pub file: String,
    /// `name version` of each distribution listing it.
    pub packages: Vec<Package>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledFramework {
    pub framework: Framework,
    /// The distribution (`torch`, `tensorflow`, `jax-cuda12-plugin`).
    pub package: String,
    pub version: String,
    /// The CUDA it was built with, from its own build record (`12.1`), if any.
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    /// It brings its own CUDA libraries (NVIDIA wheels it depends on, or libraries inside it).
    pub bundles_cuda: bool,
    /// The GPU code in its own libraries (those with a `.nv_fatbin`, or
    /// that could not be read), by library.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<LibraryKernels>,
}

impl InstalledFramework {
    /// A framework as its distribution and build record say it, with no
    /// cuDNN of its own known and its kernels not read yet (`kernels_of`).
    fn of(framework: Framework, m: &Metadata, cuda: Option<String>, bundles_cuda: bool) -> Self {
        InstalledFramework {
            framework,
            package: m.name.clone(),
            version: m.version.clone(),
            cuda,
            cudnn: None,
            bundles_cuda,
            kernels: Vec::new(),
        }
    }

    /// One whose name or dependency says only its CUDA major: it brings
    /// CUDA when NVIDIA's wheels of that major are installed beside it.
    fn of_major(
        framework: Framework,
        m: &Metadata,
        major: Option<String>,
        wheels: &[Package],
    ) -> Self {
        let bundles = major
            .as_deref()
            .is_some_and(|mj| wheels_of_major(wheels, mj));
        Self::of(framework, m, major, bundles)
    }
}

/// The architectures one of a framework's libraries has code for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryKernels {
    /// Relative to its site-packages directory (`torch/lib/libtorch_cuda.so`).
    pub file: String,
    /// Machine code (SASS), by compute capability (`9.0` = sm_90).
    #[serde(default)]
    pub sass: BTreeSet<ComputeCapability>,
    /// PTX, by the compute capability it targets (`compute_90` in nvcc's terms).
    #[serde(default)]
    pub ptx: BTreeSet<ComputeCapability>,
    /// Why its code could not be read (a malformed or unreadable file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The most library files read per framework: a framework has a handful.
const MAX_KERNEL_FILES: usize = 256;

/// Where each framework keeps its own GPU code (not the NVIDIA wheels' libraries):
/// directories relative to site-packages, searched this deep, and which files count.
fn kernel_dirs(package: &str) -> Vec<(String, usize)> {
    match package {
        "torch" => vec![("torch/lib".into(), 0)],
        "cupy" => vec![("cupy".into(), 2), ("cupy_backends".into(), 2)],
        n if n.starts_with("cupy-cuda") => vec![("cupy".into(), 2), ("cupy_backends".into(), 2)],
        n if n.starts_with("jax-cuda") && n.ends_with("-plugin") => {
            vec![(n.replace('-', "_"), 1)]
        }
        n if n.starts_with("jax-cuda") && n.ends_with("-pjrt") => {
            let major = n.trim_start_matches("jax-cuda").trim_end_matches("-pjrt");
            vec![(format!("jax_plugins/xla_cuda{major}"), 1)]
        }
        _ => Vec::new(),
    }
}

/// A shared library of the framework's own: an ELF `.so` (Linux) or a PE
/// `.dll` / `.pyd` (Windows: torch's `torch_cuda.dll`, CuPy's extension
/// modules), whichever machine the environment was made on.
fn is_kernel_file(package: &str, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if !(lower.ends_with(".so")
        || lower.contains(".so.")
        || lower.ends_with(".dll")
        || lower.ends_with(".pyd"))
    {
        return false;
    }
    match package {
        // torch/lib also holds the CUDA libraries older wheels bundled; only torch's own.
        "torch" => ["libtorch_cuda", "libc10_cuda", "torch_cuda", "c10_cuda"]
            .iter()
            .any(|p| lower.starts_with(p)),
        _ => true,
    }
}

/// The GPU code of a framework's own libraries, read from their headers.
pub fn kernels_of(site: &Path, package: &str) -> Vec<LibraryKernels> {
    let mut files = Vec::new();
    for (dir, depth) in kernel_dirs(package) {
        collect_files(&site.join(&dir), depth, package, &mut files);
    }
    files.sort();
    files.truncate(MAX_KERNEL_FILES);
    files
        .into_iter()
        .filter_map(|path| {
            let file = path
                .strip_prefix(site)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            match crate::machine::fatbin::scan(&path) {
                Ok(None) => None,
                Ok(Some(k)) => Some(LibraryKernels {
                    file,
                    sass: k.sass,
                    ptx: k.ptx,
                    error: None,
                }),
                Err(e) => Some(LibraryKernels {
                    file,
                    error: Some(e.to_string()),
                    ..LibraryKernels::default()
                }),
            }
        })
        .collect()
}

fn collect_files(dir: &Path, depth: usize, package: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if out.len() >= MAX_KERNEL_FILES {
            return;
        }
        // Not followed: a link out of site-packages is not the framework's.
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if t.is_dir() && depth > 0 {
            collect_files(&e.path(), depth - 1, package, out);
        } else if t.is_file() && is_kernel_file(package, name) {
            out.push(e.path());
        }
    }
}

impl<'de> Deserialize<'de> for Framework {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        // `--json` writes the variant's name in lower case (`cudapython`),
        // which is no package name `parse` knows.
        let framework = match s.as_str() {
            "cudapython" | "cuda-python" => Some(Framework::CudaPython),
            "numbacuda" | "numba-cuda" => Some(Framework::NumbaCuda),
            _ => Framework::parse(&s),
        };
        framework.ok_or_else(|| serde::de::Error::custom(format!("unknown framework {s}")))
    }
}

/// The interpreter to ask.
pub fn interpreter(ctx: &Context) -> Option<PathBuf> {
    if let Some(p) = ctx.var(env_vars::CUDAENV_PYTHON) {
        return Some(PathBuf::from(p));
    }
    for var in [env_vars::VIRTUAL_ENV, env_vars::CONDA_PREFIX] {
        if let Some(prefix) = ctx.var(var) {
            let p = Path::new(prefix).join("bin").join("python");
            if p.exists() {
                return Some(p);
            }
        }
    }
    command::which(ctx, "python3", &[]).or_else(|| command::which(ctx, "python", &[]))
}

/// Prints the version, then every directory packages may be imported from:
/// sysconfig's purelib/platlib first, then the rest of `sys.path` (the user
/// site, PYTHONPATH entries, Debian's dist-packages).
const PROBE: &str = "import os, sys, sysconfig\np = sysconfig.get_paths()\nprint(sys.version.split()[0])\nfor d in [p['purelib'], p['platlib']] + sys.path:\n    if d and os.path.isdir(d): print(d)";

/// Probes the environment; `Err` says why there is no answer (no interpreter, it failed).
pub fn probe(ctx: &Context) -> Result<PythonEnv, String> {
    let exe = interpreter(ctx).ok_or("no python3 or python on PATH")?;
    let mut cmd = Command::new(&exe);
    // Not isolated (-I): the user's programs see PYTHONPATH and the user site too.
    cmd.args(["-c", PROBE]).env_clear().envs(ctx.vars().iter());
    let out = command::run(cmd, Duration::from_secs(15))
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.ok() {
        return Err(format!("{} failed: {}", exe.display(), out.stderr.trim()));
    }
    let mut lines = out.stdout.lines();
    let version = lines.next().map(str::to_string);
    let mut site_dirs: Vec<String> = Vec::new();
    for l in lines.filter(|l| !l.is_empty()) {
        if !site_dirs.iter().any(|d| d == l) {
            site_dirs.push(l.to_string());
        }
    }
    let mut env = scan(&site_dirs.iter().map(PathBuf::from).collect::<Vec<_>>());
    env.executable = exe.display().to_string();
    env.version = version;
    env.site_dirs = site_dirs;
    Ok(env)
}

/// Reads the distributions installed in `dirs` (pure file reading; testable on fixtures).
pub fn scan(dirs: &[PathBuf]) -> PythonEnv {
    let (packages, records) = read_distributions(dirs);
    let mut env = PythonEnv::default();
    for (_, m) in &packages {
        if m.name.starts_with("nvidia-") {
            env.nvidia_wheels.push(Package {
                name: m.name.clone(),
                version: m.version.clone(),
            });
        }
    }
    env.nvidia_wheels.sort_by(|a, b| a.name.cmp(&b.name));
    env.wheel_overlaps = overlaps(&records);
    for (dir, m) in &packages {
        if let Some(mut f) = framework_of(dir, m, &packages, &env.nvidia_wheels)
            && !env.frameworks.iter().any(|x| x.package == f.package)
        {
            f.kernels = kernels_of(dir, &f.package);
            env.frameworks.push(f);
        }
    }
    env.frameworks.sort_by(|a, b| a.package.cmp(&b.package));
    env
}

/// A distribution's metadata, with the directory it is installed in.
type Installed = (PathBuf, Metadata);

/// An NVIDIA distribution whose RECORD is read for overlaps: its site
/// directory, its `*.dist-info` directory, name and version.
type Record = (PathBuf, PathBuf, String, String);

/// Every distribution with a readable METADATA in `dirs`, and the NVIDIA ones' records.
fn read_distributions(dirs: &[PathBuf]) -> (Vec<Installed>, Vec<Record>) {
    let mut packages = Vec::new();
    let mut records = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.ends_with(".dist-info") {
                continue;
            }
            if let Some(meta) = read_metadata(&e.path().join("METADATA")) {
                if meta.name.starts_with("nvidia-") {
                    records.push((
                        dir.clone(),
                        e.path(),
                        meta.name.clone(),
                        meta.version.clone(),
                    ));
                }
                packages.push((dir.clone(), meta));
            }
        }
    }
    (packages, records)
}

/// The framework a distribution is, with the CUDA it was built with and
/// whether it brings its own; `None` for any other distribution.
fn framework_of(
    dir: &Path,
    m: &Metadata,
    packages: &[Installed],
    wheels: &[Package],
) -> Option<InstalledFramework> {
    match m.name.as_str() {
        "torch" => Some(torch(dir, m)),
        "tensorflow" | "tensorflow-gpu" | "tensorflow-cpu" | "tf-nightly" => {
            Some(tensorflow(dir, m, wheels))
        }
        n if n.starts_with("jax-cuda") && (n.ends_with("-plugin") || n.ends_with("-pjrt")) => {
            Some(jax_plugin(n, m, wheels))
        }
        n if n == "cupy" || (n.starts_with("cupy-cuda") && n.ends_with('x')) => {
            Some(cupy(n, m, wheels))
        }
        "cuda-bindings" | "cuda-python" | "cuda-pathfinder" | "numba-cuda" => {
            Some(cuda_python(m, packages, wheels))
        }
        _ => None,
    }
}

/// torch: its CUDA from `torch/version.py`; it brings CUDA through NVIDIA
/// wheels it requires or libraries inside `torch/lib`.
fn torch(dir: &Path, m: &Metadata) -> InstalledFramework {
    let cuda = read_assignment(&dir.join("torch/version.py"), "cuda");
    let bundled = m.requires.iter().any(|r| r.starts_with("nvidia-"))
        || has_lib(&dir.join("torch/lib"), "libcudart")
        || has_lib(&dir.join("torch/lib"), "libcudnn");
    let bundles = bundled && cuda.is_some();
    InstalledFramework::of(Framework::Torch, m, cuda, bundles)
}

/// TensorFlow: its CUDA and cuDNN from its `build_info.py`.
fn tensorflow(dir: &Path, m: &Metadata, wheels: &[Package]) -> InstalledFramework {
    let info = dir.join("tensorflow/python/platform/build_info.py");
    let cuda = read_dict_entry(&info, "cuda_version");
    let cudnn = read_dict_entry(&info, "cudnn_version");
    let has_nvidia = |suffix: &str| wheels.iter().any(|p| p.name.ends_with(suffix));
    // The `and-cuda` extra installs NVIDIA wheels that TF ≥ 2.14 loads from site-packages.
    let bundles = cuda.is_some()
        && has_nvidia("-cu12")
        && wheels.iter().any(|p| p.name.starts_with("nvidia-cudnn"));
    InstalledFramework {
        cudnn,
        ..InstalledFramework::of(Framework::Tensorflow, m, cuda, bundles)
    }
}

/// A jax CUDA plugin (`jax-cuda12-plugin`, `jax-cuda12-pjrt`): its name says the CUDA major.
fn jax_plugin(n: &str, m: &Metadata, wheels: &[Package]) -> InstalledFramework {
    let major = n
        .trim_start_matches("jax-cuda")
        .split('-')
        .next()
        .unwrap_or("");
    // `jax[cudaNN]` installs the wheels, `jax[cudaNN-local]` does not;
    // the requirement lists them either way (under an extra).
    let major = (!major.is_empty()).then(|| major.to_string());
    InstalledFramework::of_major(Framework::Jax, m, major, wheels)
}

/// CuPy: `cupy-cuda12x` says its CUDA major, the source package `cupy` none.
fn cupy(n: &str, m: &Metadata, wheels: &[Package]) -> InstalledFramework {
    let major = n.trim_start_matches("cupy-cuda").trim_end_matches('x');
    let major =
        (major.len() >= 2 && major.bytes().all(|b| b.is_ascii_digit())).then(|| major.to_string());
    InstalledFramework::of_major(Framework::Cupy, m, major, wheels)
}

/// cuda-python's distributions and numba-cuda.
fn cuda_python(m: &Metadata, packages: &[Installed], wheels: &[Package]) -> InstalledFramework {
    // cuda-bindings' major is the CUDA major it binds (13.0.x → CUDA 13).
    let major = if m.name == "cuda-pathfinder" || m.name == "numba-cuda" {
        packages
            .iter()
            .find(|(_, p)| p.name == "cuda-bindings")
            .and_then(|(_, p)| p.version.split('.').next().map(str::to_string))
    } else {
        m.version.split('.').next().map(str::to_string)
    };
    let framework = if m.name == "numba-cuda" {
        Framework::NumbaCuda
    } else {
        Framework::CudaPython
    };
    InstalledFramework::of_major(framework, m, major, wheels)
}

/// The name (normalised) and version in a `*.dist-info` directory's METADATA.
pub fn read_name_version(dist_info: &Path) -> Option<(String, String)> {
    read_metadata(&dist_info.join("METADATA")).map(|m| (m.name, m.version))
}

/// Are NVIDIA's CUDA runtime or cuBLAS wheels for CUDA `major` installed?
/// (`nvidia-cuda-runtime-cu12 12.x`, or CUDA 13's unsuffixed `nvidia-cuda-runtime 13.x`.)
pub fn wheels_of_major(wheels: &[Package], major: &str) -> bool {
    let suffix = format!("-cu{major}");
    wheels.iter().any(|w| {
        let base = w.name.strip_suffix(&suffix).unwrap_or(&w.name);
        matches!(
            base,
            "nvidia-cuda-runtime" | "nvidia-cublas" | "nvidia-cuda-nvrtc"
        ) && w.version.split('.').next() == Some(major)
    })
}

/// Library files listed in the RECORD of more than one NVIDIA distribution.
fn overlaps(records: &[Record]) -> Vec<WheelOverlap> {
    let mut by_file: std::collections::BTreeMap<(PathBuf, String), Vec<Package>> =
        std::collections::BTreeMap::new();
    for (site, dist_info, name, version) in records {
        let Ok(text) =
            crate::os::fs::read_bounded_text(&dist_info.join("RECORD"), crate::os::fs::LARGE)
        else {
            continue;
        };
        for line in text.lines() {
            let file = line.split(',').next().unwrap_or("");
            if file.contains(".so") && !file.starts_with("..") {
                by_file
                    .entry((site.clone(), file.to_string()))
                    .or_default()
                    .push(Package {
                        name: name.clone(),
                        version: version.clone(),
                    });
            }
        }
    }
    by_file
        .into_iter()
        .filter(|(_, p)| p.len() > 1)
        .map(|((_, file), packages)| WheelOverlap { file, packages })
        .collect()
}

struct Metadata {
    name: String,
    version: String,
    requires: Vec<String>,
}

fn read_metadata(path: &Path) -> Option<Metadata> {
    // METADATA headers end at the first blank line; never read a whole long description.
    let text = crate::os::fs::read_bounded_text(path, crate::os::fs::SMALL).ok()?;
    let mut name = None;
    let mut version = None;
    let mut requires = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Name:") {
            name = Some(normalize(v.trim()));
        } else if let Some(v) = line.strip_prefix("Version:") {
            version = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("Requires-Dist:") {
            requires.push(normalize(v.trim()));
        }
    }
    Some(Metadata {
        name: name?,
        version: version?,
        requires,
    })
}

/// PEP 503 normalisation: lower case, runs of `-_.` become `-`.
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn has_lib(dir: &Path, prefix: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix))
        })
    })
}

fn quoted(s: &str) -> Option<String> {
    let s = s.trim().trim_end_matches(',');
    let q = s.chars().next()?;
    if q != '\'' && q != '"' {
        return None;
    }
    let inner = &s[1..];
    let end = inner.find(q)?;
    Some(inner[..end].to_string())
}

/// `cuda = '12.1'` or `cuda: Optional[str] = '12.1'` (None → None).
fn read_assignment(path: &Path, name: &str) -> Option<String> {
    let text = crate::os::fs::read_bounded_text(path, crate::os::fs::SMALL).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?;
        if !rest.starts_with([' ', ':', '=']) {
            return None;
        }
        let (_, value) = rest.split_once('=')?;
        quoted(value)
    })
}

/// `'cuda_version': '12.3',` inside a dict literal.
fn read_dict_entry(path: &Path, key: &str) -> Option<String> {
    let text = crate::os::fs::read_bounded_text(path, crate::os::fs::SMALL).ok()?;
    let needle_sq = format!("'{key}'");
    let needle_dq = format!("\"{key}\"");
    text.lines().find_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_prefix(&needle_sq)
            .or_else(|| l.strip_prefix(&needle_dq))?;
        let (_, value) = rest.split_once(':')?;
        quoted(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `doctor --json` writes for every framework, `doctor --facts`
    /// reads back (cuda-python and numba-cuda were refused).
    #[test]
    fn a_frameworks_own_libraries_are_so_dll_or_pyd_files() {
        for (package, name) in [
            ("torch", "libtorch_cuda.so"),
            ("torch", "libc10_cuda.so"),
            ("torch", "torch_cuda.dll"),
            ("torch", "c10_cuda.DLL"),
            ("cupy", "_cub.cpython-312-x86_64-linux-gnu.so"),
            ("cupy", "_cub.cp312-win_amd64.pyd"),
            ("jax-cuda12-plugin", "libcudnn.so.9"),
        ] {
            assert!(is_kernel_file(package, name), "{package} {name}");
        }
        for (package, name) in [
            ("torch", "cudnn64_9.dll"),
            ("torch", "libcudnn.so.9"),
            ("cupy", "_cub.pxd"),
            ("cupy", "README.txt"),
        ] {
            assert!(!is_kernel_file(package, name), "{package} {name}");
        }
    }

    #[test]
    fn every_framework_round_trips_through_the_facts_file() {
        for f in [
            Framework::Tensorflow,
            Framework::Torch,
            Framework::Jax,
            Framework::Cupy,
            Framework::CudaPython,
            Framework::NumbaCuda,
        ] {
            let json = serde_json::to_string(&f).unwrap();
            let back: Framework = serde_json::from_str(&json).unwrap();
            assert_eq!(back, f, "{json}");
        }
    }

    fn dist(site: &Path, name: &str, version: &str, requires: &[&str]) {
        let d = site.join(format!("{}-{version}.dist-info", name.replace('-', "_")));
        std::fs::create_dir_all(&d).unwrap();
        let mut m = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
        for r in requires {
            m.push_str(&format!("Requires-Dist: {r}\n"));
        }
        m.push_str("\nName: not-a-header\n");
        std::fs::write(d.join("METADATA"), m).unwrap();
    }

    #[test]
    fn finds_frameworks_without_importing() {
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path();
        dist(
            site,
            "torch",
            "2.4.1",
            &["nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\""],
        );
        std::fs::create_dir_all(site.join("torch")).unwrap();
        std::fs::write(
            site.join("torch/version.py"),
            "from typing import Optional\n__version__ = '2.4.1'\ncuda: Optional[str] = '12.1'\ngit_version = 'x'\n",
        )
        .unwrap();
        dist(site, "nvidia-cudnn-cu12", "9.1.0.70", &[]);
        dist(site, "tensorflow", "2.10.1", &[]);
        std::fs::create_dir_all(site.join("tensorflow/python/platform")).unwrap();
        std::fs::write(
            site.join("tensorflow/python/platform/build_info.py"),
            "build_info = collections.OrderedDict([\n  'cuda_version': '64_112',\n]) \n",
        )
        .unwrap();
        dist(
            site,
            "jax-cuda12-plugin",
            "0.4.30",
            &["nvidia-cublas-cu12>=12.1; extra == \"with-cuda\""],
        );
        dist(site, "numpy", "2.0.0", &[]);
        let env = scan(&[site.to_path_buf()]);
        let names: Vec<_> = env.frameworks.iter().map(|f| f.package.as_str()).collect();
        assert_eq!(names, ["jax-cuda12-plugin", "tensorflow", "torch"]);
        let torch = env
            .frameworks
            .iter()
            .find(|f| f.package == "torch")
            .unwrap();
        assert_eq!(torch.cuda.as_deref(), Some("12.1"));
        assert!(torch.bundles_cuda);
        let jax = &env.frameworks[0];
        assert_eq!(jax.cuda.as_deref(), Some("12"));
        assert_eq!(env.nvidia_wheels.len(), 1);
    }

    #[test]
    fn reads_the_kernels_of_each_frameworks_own_libraries_only() {
        use crate::machine::fatbin::tests::{container, elf, entry};
        use crate::machine::fatbin::{KIND_ELF, KIND_PTX};
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path();
        let lib = |rel: &str, bytes: &[u8]| {
            let p = site.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        };
        let torch_code = elf(&container(&[
            entry(KIND_ELF, 80, 8),
            entry(KIND_PTX, 80, 8),
        ]));
        lib("torch/lib/libtorch_cuda.so", &torch_code);
        // A CUDA library older wheels bundled beside torch's own: not torch's code.
        lib(
            "torch/lib/libcudnn_ops_infer.so.8",
            &elf(&container(&[entry(KIND_ELF, 120, 8)])),
        );
        lib("torch/lib/libc10_cuda.so", b"not ELF at all");
        lib(
            "torch/lib/libtorch_cuda_linalg.so",
            b"\x7fELF\x02\x01\x01 truncated",
        );
        lib(
            "jax_cuda12_plugin/_linalg.so",
            &elf(&container(&[entry(KIND_ELF, 90, 8)])),
        );
        lib(
            "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            &elf(&container(&[entry(KIND_PTX, 90, 8)])),
        );
        dist(site, "torch", "2.4.1", &[]);
        dist(site, "jax-cuda12-plugin", "0.4.30", &[]);
        dist(site, "jax-cuda12-pjrt", "0.4.30", &[]);
        let env = scan(&[site.to_path_buf()]);
        let of = |p: &str| {
            let f = env.frameworks.iter().find(|f| f.package == p).unwrap();
            f.kernels
                .iter()
                .map(|k| {
                    let sms = |s: &BTreeSet<ComputeCapability>| {
                        s.iter().map(|c| c.sm()).collect::<Vec<_>>().join(",")
                    };
                    format!(
                        "{} sass={} ptx={} {}",
                        k.file,
                        sms(&k.sass),
                        sms(&k.ptx),
                        k.error.is_some()
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            of("torch"),
            [
                "torch/lib/libtorch_cuda.so sass=sm_80 ptx=sm_80 false",
                "torch/lib/libtorch_cuda_linalg.so sass= ptx= true",
            ]
        );
        assert_eq!(
            of("jax-cuda12-plugin"),
            ["jax_cuda12_plugin/_linalg.so sass=sm_90 ptx= false"]
        );
        assert_eq!(
            of("jax-cuda12-pjrt"),
            ["jax_plugins/xla_cuda12/xla_cuda_plugin.so sass= ptx=sm_90 false"]
        );
    }

    #[test]
    fn cpu_torch_has_no_cuda() {
        let tmp = tempfile::tempdir().unwrap();
        dist(tmp.path(), "torch", "2.4.1+cpu", &[]);
        std::fs::create_dir_all(tmp.path().join("torch")).unwrap();
        std::fs::write(
            tmp.path().join("torch/version.py"),
            "cuda: Optional[str] = None\n",
        )
        .unwrap();
        let env = scan(&[tmp.path().to_path_buf()]);
        assert_eq!(env.frameworks[0].cuda, None);
        assert!(!env.frameworks[0].bundles_cuda);
        assert_eq!(normalize("Foo_Bar.baz"), "foo-bar-baz");
    }
}
