//! Inspecting a CUDA tree on disk, for `cudaenv link NAME PATH`.
//!
//! Two shapes of tree exist in the wild and both are accepted:
//! - a **toolkit** (`/usr/local/cuda-12.4`, a redist or runfile extraction):
//!   `bin/`, `include/`, and the libraries in `lib64/`, `lib/` or
//!   `targets/<arch>-linux/lib/`;
//! - a Python environment's **NVIDIA wheels** (`…/site-packages/nvidia/`):
//!   one directory per wheel, libraries in `nvidia/<pkg>/lib` for CUDA ≤ 12,
//!   everything of CUDA 13 merged into `nvidia/cu13/{bin,include,lib}`, and
//!   cuDNN in `nvidia/cudnn/lib`. The site-packages directory, the `nvidia`
//!   directory itself, or a virtual environment's root may be given.
//!
//! A tree counts only when it holds the shared CUDA runtime (`libcudart.so*`);
//! anything else is refused with `StoreError::NoRuntimeAt`, so a typo can never
//! become a "version" that silently activates nothing.
//!
//! Versions are read from data files, most precise and most trustworthy
//! first, and never by loading a library (a library's constructors would run
//! inside cudaenv): `version.json` (CUDA ≥ 11.1), `version.txt` (older),
//! the wheels' `*.dist-info` directory names, `CUDART_VERSION`/`CUDA_VERSION`
//! in the headers, the runtime's file names, and only as a last resort, when
//! nothing better than a major version was found, `bin/nvcc --version` (run
//! with an empty environment, no stdin and a timeout, and nothing else is ever
//! executed). Component versions (`cudart 12.4.127`) say which CUDA minor
//! release they belong to but not its patch level, so they yield `12.4`.
//! cuDNN comes from the wheel's dist-info (`9.1.0.70`), `cudnn_version.h`
//! (`CUDNN_MAJOR`/`MINOR`/`PATCHLEVEL`; `cudnn.h` before cuDNN 8) or the
//! library's file name.
//!
//! All files are read with a size cap, only when they are regular files, so
//! a hostile tree (a FIFO named `version.json`, a huge header) cannot hang or
//! exhaust cudaenv. Nothing in the tree is ever written.

use crate::error::{Error, Result, StoreError};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::spec::{Library, Version};
use crate::store::{Kind, Metadata};

/// How long `nvcc --version` may take before it is killed.
const NVCC_TIMEOUT: Duration = Duration::from_secs(5);
/// `CUDART_VERSION` sits near the top of the headers; never read a whole 1 MB `cuda.h`.
const HEADER_CAP: u64 = 256 * 1024;
const SMALL_FILE_CAP: u64 = 1024 * 1024;

/// Architectures whose `targets/<arch>/lib` a toolkit may use.
const TARGET_ARCHES: [&str; 3] = ["x86_64-linux", "sbsa-linux", "aarch64-linux"];

/// The shape of an inspected tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Toolkit,
    Wheels,
}

/// A detected version and what it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub version: Version,
    /// A short description: `version.json`, `include/cudnn_version.h`, …
    pub from: String,
}

/// Everything `link` records about a tree. Directories are relative to `prefix`.
#[derive(Debug, Clone)]
#[allow(dead_code, reason = "what `link` found, asserted by the tests")]
pub struct Toolkit {
    /// Absolute and canonical.
    pub prefix: PathBuf,
    pub layout: Layout,
    pub cuda: Option<Found>,
    pub cudnn: Option<Found>,
    pub bin_dirs: Vec<PathBuf>,
    pub lib_dirs: Vec<PathBuf>,
    /// CUDA_HOME, when the tree is toolkit-shaped (`.` for the prefix itself).
    pub home: Option<PathBuf>,
    pub cudnn_home: Option<PathBuf>,
    /// The libraries beside the toolkit found in the tree (NCCL, TensorRT,
    /// cuSPARSELt, cuTENSOR), with their versions.
    pub libs: Vec<(Library, Found)>,
    /// The shared runtime that was found, relative to `prefix`.
    pub runtime: PathBuf,
    /// Inconsistencies worth telling the user (e.g. version.json says 12 but the library is .so.11).
    pub warnings: Vec<String>,
}

impl Toolkit {
    /// The metadata a linked version stores.
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new(Kind::Linked, "link");
        m.prefix = Some(self.prefix.clone());
        m.cuda = self.cuda.as_ref().map(|f| f.version.clone());
        m.cudnn = self.cudnn.as_ref().map(|f| f.version.clone());
        m.bin_dirs = self.bin_dirs.clone();
        m.lib_dirs = self.lib_dirs.clone();
        m.home = self.home.clone();
        m.cudnn_home = self.cudnn_home.clone();
        m.components = self
            .libs
            .iter()
            .map(|(lib, f)| crate::store::Component {
                name: lib.component().into(),
                version: f.version.to_string(),
                source: "link".into(),
                url: None,
                sha256: None,
            })
            .collect();
        m
    }
}

/// Inspects the tree at `path` (which must exist) and describes it.
pub fn inspect(path: &Path) -> Result<Toolkit> {
    let prefix = crate::os::canonicalize(path).map_err(Error::io("cannot open", path))?;
    if !prefix.is_dir() {
        return Err(Error::Store(StoreError::NoRuntimeAt { path: prefix }));
    }
    if let Some(t) = inspect_toolkit(&prefix).or_else(|| inspect_windows_toolkit(&prefix)) {
        return Ok(t);
    }
    // A wheel tree: the nvidia directory itself, site-packages, or a venv root.
    let mut candidates = vec![PathBuf::new(), PathBuf::from("nvidia")];
    for lib in ["lib", "lib64"] {
        if let Ok(entries) = std::fs::read_dir(prefix.join(lib)) {
            let mut pythons: Vec<_> = entries
                .flatten()
                .map(|e| e.file_name())
                .filter(|n| n.to_str().is_some_and(|n| n.starts_with("python3")))
                .collect();
            pythons.sort();
            for py in pythons {
                candidates.push(Path::new(lib).join(py).join("site-packages/nvidia"));
            }
        }
    }
    for rel in candidates {
        if let Some(t) = inspect_wheels(&prefix, &rel) {
            return Ok(t);
        }
    }
    Err(Error::Store(StoreError::NoRuntimeAt { path: prefix }))
}

// --- toolkit layout -------------------------------------------------------------

fn inspect_toolkit(prefix: &Path) -> Option<Toolkit> {
    let mut lib_candidates: Vec<PathBuf> = vec!["lib64".into(), "lib".into()];
    for arch in TARGET_ARCHES {
        lib_candidates.push(Path::new("targets").join(arch).join("lib"));
    }
    // CUPTI ships outside lib64 in a full toolkit; profilers (PyTorch's among
    // them) find libcupti only through the loader path.
    lib_candidates.push("extras/CUPTI/lib64".into());
    let lib_dirs = dedup_dirs(
        prefix,
        lib_candidates
            .into_iter()
            .filter(|d| has_shared_libs(&prefix.join(d))),
    );
    let (runtime_dir, runtime_files) = lib_dirs.iter().find_map(|d| {
        let files = lib_files(&prefix.join(d), "libcudart");
        (!files.is_empty()).then(|| (d.clone(), files))
    })?;
    let mut warnings = Vec::new();

    let bin_dirs: Vec<PathBuf> = ["bin"]
        .into_iter()
        .map(PathBuf::from)
        .filter(|d| prefix.join(d).is_dir())
        .collect();
    let mut include_dirs: Vec<PathBuf> = vec!["include".into()];
    for arch in TARGET_ARCHES {
        include_dirs.push(Path::new("targets").join(arch).join("include"));
    }
    let include_dirs: Vec<PathBuf> = include_dirs
        .into_iter()
        .filter(|d| prefix.join(d).is_dir())
        .collect();

    // CUDA: version.json > version.txt > headers > library file names > nvcc.
    let mut cuda = cuda_from_version_json(&prefix.join("version.json"))
        .or_else(|| cuda_from_version_txt(&prefix.join("version.txt")))
        .or_else(|| {
            include_dirs
                .iter()
                .find_map(|inc| cuda_from_headers(prefix, inc))
        });
    let from_lib = version_from_lib_names(&runtime_files, "libcudart", &runtime_dir);
    cuda = merge_with_lib(cuda, from_lib, "CUDA", &mut warnings);
    if cuda.as_ref().is_none_or(|f| f.version.parts().len() < 2)
        && let Some(f) = cuda_from_nvcc(&prefix.join("bin/nvcc"))
    {
        cuda = Some(f);
    }

    // cuDNN in the same tree (a toolkit with cuDNN copied in, or a redist merge).
    let cudnn_files: Vec<(PathBuf, Vec<String>)> = lib_dirs
        .iter()
        .map(|d| (d.clone(), lib_files(&prefix.join(d), "libcudnn")))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    let cudnn = if let Some((dir, files)) = cudnn_files.first() {
        let from_header = include_dirs
            .iter()
            .find_map(|inc| cudnn_from_headers(prefix, inc));
        merge_with_lib(
            from_header,
            version_from_lib_names(files, "libcudnn", dir),
            "cuDNN",
            &mut warnings,
        )
    } else {
        None
    };
    let cudnn_home = (!cudnn_files.is_empty()).then(|| PathBuf::from("."));
    Some(Toolkit {
        prefix: prefix.to_path_buf(),
        layout: Layout::Toolkit,
        runtime: runtime_dir.join(&runtime_files[0]),
        cuda,
        cudnn,
        bin_dirs,
        lib_dirs,
        home: Some(PathBuf::from(".")),
        cudnn_home,
        libs: Vec::new(),
        warnings,
    })
}

/// NVIDIA's Windows layout (the installer's `CUDA\v11.2`, the Windows redist
/// zips): DLLs in `bin\` (`cudart64_110.dll`, `cudnn64_8.dll`), headers in
/// `include\`, import libraries in `lib\x64\`. Windows finds DLLs on PATH,
/// so `bin` is the only directory activation needs.
fn inspect_windows_toolkit(prefix: &Path) -> Option<Toolkit> {
    let dlls = |stem: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(prefix.join("bin"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|n| {
                n.strip_prefix(stem)
                    .and_then(|r| r.strip_suffix(".dll"))
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        v.sort();
        v
    };
    // `cudart64_110.dll` is CUDA 11 (its `0` means nothing), `cudart64_12.dll` 12.
    let major_of = |name: &str, stem: &str| -> Option<Found> {
        let d = name.strip_prefix(stem)?.strip_suffix(".dll")?;
        let major = if d.len() == 3 && d.ends_with('0') {
            &d[..2]
        } else {
            d
        };
        Some(Found {
            version: parse_detected(major)?,
            from: format!("bin/{name}"),
        })
    };
    let runtime = dlls("cudart64_").into_iter().next()?;
    let mut warnings = Vec::new();
    let include = Path::new("include");
    let cuda = cuda_from_version_json(&prefix.join("version.json"))
        .or_else(|| cuda_from_version_txt(&prefix.join("version.txt")))
        .or_else(|| cuda_from_headers(prefix, include));
    let cuda = merge_with_lib(cuda, major_of(&runtime, "cudart64_"), "CUDA", &mut warnings);
    let cudnn_dll = dlls("cudnn64_").into_iter().next();
    let cudnn = cudnn_dll.as_ref().and_then(|dll| {
        merge_with_lib(
            cudnn_from_headers(prefix, include),
            major_of(dll, "cudnn64_"),
            "cuDNN",
            &mut warnings,
        )
    });
    Some(Toolkit {
        prefix: prefix.to_path_buf(),
        layout: Layout::Toolkit,
        runtime: Path::new("bin").join(&runtime),
        cuda,
        cudnn,
        bin_dirs: vec![PathBuf::from("bin")],
        lib_dirs: Vec::new(),
        home: Some(PathBuf::from(".")),
        cudnn_home: cudnn_dll.map(|_| PathBuf::from(".")),
        libs: Vec::new(),
        warnings,
    })
}

// --- wheel layout ---------------------------------------------------------------

/// `nvidia` is the wheels' directory relative to `prefix` (empty: the prefix itself).
fn inspect_wheels(prefix: &Path, nvidia: &Path) -> Option<Toolkit> {
    let root = prefix.join(nvidia);
    let mut packages: Vec<String> = std::fs::read_dir(&root)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    packages.sort();
    // The runtime: `cuda_runtime` for ≤ 12, `cu13` (or later `cuNN`) for 13+.
    let runtime_pkg = packages
        .iter()
        .filter(|p| *p == "cuda_runtime" || is_cu_merged(p))
        .find(|p| !lib_files(&root.join(p).join("lib"), "libcudart").is_empty())?
        .clone();
    let mut warnings = Vec::new();
    let rel = |p: &str, sub: &str| nvidia.join(p).join(sub);
    let lib_dirs: Vec<PathBuf> = packages
        .iter()
        .map(|p| rel(p, "lib"))
        .filter(|d| has_shared_libs(&prefix.join(d)))
        .collect();
    let bin_dirs: Vec<PathBuf> = packages
        .iter()
        .map(|p| rel(p, "bin"))
        .filter(|d| prefix.join(d).is_dir())
        .collect();
    let runtime_dir = rel(&runtime_pkg, "lib");
    let runtime_files = lib_files(&prefix.join(&runtime_dir), "libcudart");
    let site_packages = root.parent();
    let lib_cuda = version_from_lib_names(&runtime_files, "libcudart", &runtime_dir);
    let cuda_major = lib_cuda.as_ref().map(|f| f.version.major());

    let mut cuda = site_packages
        .and_then(|sp| {
            dist_info_version(
                sp,
                &["nvidia_cuda_runtime_cu", "nvidia_cuda_runtime-"],
                cuda_major,
            )
        })
        .map(|(v, from)| Found {
            version: v.truncate(2),
            from,
        })
        .or_else(|| cuda_from_headers(prefix, &rel(&runtime_pkg, "include")));
    cuda = merge_with_lib(cuda, lib_cuda, "CUDA", &mut warnings);
    // A merged cu13 tree is toolkit-shaped (bin, include, lib): it is a CUDA_HOME.
    let home = is_cu_merged(&runtime_pkg).then(|| nvidia.join(&runtime_pkg));
    if cuda.as_ref().is_none_or(|f| f.version.parts().len() < 2)
        && let Some(h) = &home
        && let Some(f) = cuda_from_nvcc(&prefix.join(h).join("bin/nvcc"))
    {
        cuda = Some(f);
    }

    let cudnn_dir = rel("cudnn", "lib");
    let cudnn_files = lib_files(&prefix.join(&cudnn_dir), "libcudnn");
    let (cudnn, cudnn_home) = if cudnn_files.is_empty() {
        (None, None)
    } else {
        let lib_cudnn = version_from_lib_names(&cudnn_files, "libcudnn", &cudnn_dir);
        let cudnn_major = lib_cudnn.as_ref().map(|f| f.version.major());
        let found = site_packages
            .and_then(|sp| {
                dist_info_version(sp, &["nvidia_cudnn_cu", "nvidia_cudnn-"], cudnn_major)
            })
            .map(|(version, from)| Found { version, from })
            .or_else(|| cudnn_from_headers(prefix, &rel("cudnn", "include")));
        let found = merge_with_lib(found, lib_cudnn, "cuDNN", &mut warnings);
        (found, Some(nvidia.join("cudnn")))
    };
    let mut lib_dirs = lib_dirs;
    let libs = site_packages
        .map(|sp| libraries_beside(prefix, sp, &mut lib_dirs))
        .unwrap_or_default();
    Some(Toolkit {
        prefix: prefix.to_path_buf(),
        layout: Layout::Wheels,
        runtime: runtime_dir.join(&runtime_files[0]),
        cuda,
        cudnn,
        bin_dirs,
        lib_dirs,
        home,
        cudnn_home,
        libs,
        warnings,
    })
}

/// Where the libraries beside the toolkit sit in site-packages as their
/// wheels install them (`nvidia/nccl/lib`, `tensorrt_libs`, …), the start
/// of their library files' names, and of their projects' `.dist-info`
/// directories, which give the versions.
const BESIDE_THE_TOOLKIT: &[(Library, &str, &str, &[&str])] = &[
    (
        Library::Nccl,
        "nvidia/nccl/lib",
        "libnccl",
        &["nvidia_nccl_cu"],
    ),
    (
        Library::Tensorrt,
        "tensorrt_libs",
        "libnvinfer",
        &["tensorrt_cu", "tensorrt_libs"],
    ),
    // TensorRT 8.x on pypi.org: one `tensorrt` wheel holding the libraries
    // beside its Python bindings (`tensorrt/libnvinfer.so.8`); from 10.x that
    // project holds the bindings alone, and its libraries come as above.
    (Library::Tensorrt, "tensorrt", "libnvinfer", &["tensorrt-"]),
    (
        Library::Cusparselt,
        "nvidia/cusparselt/lib",
        "libcusparseLt",
        &["nvidia_cusparselt_cu"],
    ),
    (
        Library::Cusparselt,
        "cusparselt/lib",
        "libcusparseLt",
        &["nvidia_cusparselt_cu"],
    ),
    (
        Library::Cutensor,
        "cutensor/lib",
        "libcutensor",
        &["cutensor_cu"],
    ),
];

/// The libraries beside the toolkit in `site_packages` that lie inside the
/// linked `prefix`; their directories join `lib_dirs` (relative to `prefix`).
/// A library whose project's version cannot be read is left out: a stack
/// names each of them by version.
fn libraries_beside(
    prefix: &Path,
    site_packages: &Path,
    lib_dirs: &mut Vec<PathBuf>,
) -> Vec<(Library, Found)> {
    let mut found: Vec<(Library, Found)> = Vec::new();
    for (lib, dir, stem, projects) in BESIDE_THE_TOOLKIT {
        let abs = site_packages.join(dir);
        let Ok(rel) = abs.strip_prefix(prefix) else {
            continue;
        };
        if found.iter().any(|(l, _)| l == lib) || lib_files(&abs, stem).is_empty() {
            continue;
        }
        let Some((version, from)) = dist_info_version(site_packages, projects, None) else {
            continue;
        };
        if !lib_dirs.iter().any(|d| d == rel) {
            lib_dirs.push(rel.to_path_buf());
        }
        found.push((*lib, Found { version, from }));
    }
    found
}

/// `cu13`, `cu14`, …: the merged directory CUDA 13+ wheels share.
fn is_cu_merged(pkg: &str) -> bool {
    pkg.strip_prefix("cu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The version in the newest `<prefix><anything>-<version>.dist-info` directory
/// of site-packages (`nvidia_cudnn_cu12-9.1.0.70.dist-info`), of the given
/// major version when the library's soname told it.
fn dist_info_version(
    site_packages: &Path,
    prefixes: &[&str],
    major: Option<u32>,
) -> Option<(Version, String)> {
    let entries = std::fs::read_dir(site_packages).ok()?;
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let stem = name.strip_suffix(".dist-info")?;
            let (project, version) = stem.rsplit_once('-')?;
            let project_dash = format!("{project}-");
            if !prefixes
                .iter()
                .any(|p| project.starts_with(p) || project_dash == *p)
            {
                return None;
            }
            let v = parse_detected(version)?;
            if major.is_some_and(|m| m != v.major()) {
                return None;
            }
            Some((v, name))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(v, name)| (v, site_packages.join(name).display().to_string()))
}

// --- readers ----------------------------------------------------------------------

/// Reads at most `cap` bytes of a regular file; anything else (missing, a
/// FIFO, a device, a directory) is `None`. Opened non-blocking so a FIFO
/// cannot stall the open.
fn read_capped(path: &Path, cap: u64) -> Option<String> {
    let file = crate::os::open_untrusted(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// A version string found in a file: dotted numbers, at most four parts.
/// Leading zeros are tolerated in data files (`11.02` would be odd, but is not
/// ours to reject) by re-parsing each part as a number.
fn parse_detected(s: &str) -> Option<Version> {
    let s = s.trim();
    let parts: Vec<u32> = s
        .split('.')
        .map(|p| {
            if p.is_empty() || p.len() > 6 || !p.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    (1..=4)
        .contains(&parts.len())
        .then(|| Version::from_parts(&parts))
}

/// `version.json` (CUDA ≥ 11.1): `{"cuda": {"version": "12.4.1"}, "cuda_cudart": {...}}`.
fn cuda_from_version_json(path: &Path) -> Option<Found> {
    let text = read_capped(path, SMALL_FILE_CAP)?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let field = |key: &str| {
        json.get(key)
            .and_then(|c| c.get("version"))
            .and_then(|v| v.as_str())
            .and_then(parse_detected)
    };
    if let Some(v) = field("cuda") {
        return Some(Found {
            version: v.truncate(3),
            from: "version.json".into(),
        });
    }
    field("cuda_cudart").map(|v| Found {
        version: v.truncate(2),
        from: "version.json (cuda_cudart)".into(),
    })
}

/// `version.txt` (CUDA ≤ 11.0): `CUDA Version 10.2.89`.
fn cuda_from_version_txt(path: &Path) -> Option<Found> {
    let text = read_capped(path, 4096)?;
    let rest = text.split("CUDA Version").nth(1)?;
    let token = rest.split_whitespace().next()?;
    Some(Found {
        version: parse_detected(token)?,
        from: "version.txt".into(),
    })
}

/// The integer value of `#define NAME <n>` in C source text.
fn define(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        let mut words = line.trim_start().strip_prefix('#')?.split_whitespace();
        (words.next()? == "define" && words.next()? == name)
            .then(|| {
                words
                    .next()?
                    .trim_end_matches(['u', 'U', 'l', 'L'])
                    .parse()
                    .ok()
            })
            .flatten()
    })
}

/// `CUDART_VERSION` (cuda_runtime_api.h) or `CUDA_VERSION` (cuda.h): 12040 → 12.4.
fn cuda_from_headers(prefix: &Path, include: &Path) -> Option<Found> {
    for (file, name) in [
        ("cuda_runtime_api.h", "CUDART_VERSION"),
        ("cuda.h", "CUDA_VERSION"),
    ] {
        let rel = include.join(file);
        if let Some(n) = read_capped(&prefix.join(&rel), HEADER_CAP).and_then(|t| define(&t, name))
            && n >= 1000
        {
            return Some(Found {
                version: Version::from_parts(&[n / 1000, (n % 1000) / 10]),
                from: rel.display().to_string(),
            });
        }
    }
    None
}

/// `cudnn_version.h` (cuDNN ≥ 8) or `cudnn.h` (older): MAJOR.MINOR.PATCHLEVEL.
fn cudnn_from_headers(prefix: &Path, include: &Path) -> Option<Found> {
    for file in ["cudnn_version.h", "cudnn.h"] {
        let rel = include.join(file);
        let Some(text) = read_capped(&prefix.join(&rel), HEADER_CAP) else {
            continue;
        };
        if let (Some(major), Some(minor), Some(patch)) = (
            define(&text, "CUDNN_MAJOR"),
            define(&text, "CUDNN_MINOR"),
            define(&text, "CUDNN_PATCHLEVEL"),
        ) {
            return Some(Found {
                version: Version::from_parts(&[major, minor, patch]),
                from: rel.display().to_string(),
            });
        }
    }
    None
}

/// Runs `nvcc --version` with an empty environment, no stdin and a timeout
/// (through `sys::process`, so nothing it starts outlives the call), and
/// reads `release X.Y`.
fn cuda_from_nvcc(nvcc: &Path) -> Option<Found> {
    if !crate::os::is_executable_file(nvcc) {
        return None;
    }
    let mut cmd = std::process::Command::new(nvcc);
    cmd.arg("--version")
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    let opts = crate::os::process::Options {
        keep: 64 * 1024,
        ..Default::default()
    };
    let out = crate::os::process::run_with(cmd, NVCC_TIMEOUT, opts).ok()?;
    if out.timed_out {
        return None;
    }
    let output = Some(out.stdout);
    let text = String::from_utf8_lossy(&output?).into_owned();
    let rest = text.split("release ").nth(1)?;
    let token = rest.split(|c: char| c == ',' || c.is_whitespace()).next()?;
    Some(Found {
        version: parse_detected(token)?.truncate(2),
        from: "bin/nvcc --version".into(),
    })
}

// --- libraries ---------------------------------------------------------------------

fn is_shared_lib_name(name: &str) -> bool {
    name.starts_with("lib") && (name.ends_with(".so") || name.contains(".so."))
}

fn has_shared_libs(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_str().is_some_and(is_shared_lib_name))
    })
}

/// File names in `dir` that are `<stem>.so` or `<stem>.so.<version>`, sorted.
fn lib_files(dir: &Path, stem: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| {
            n.strip_prefix(stem).is_some_and(|rest| {
                rest == ".so"
                    || rest
                        .strip_prefix(".so.")
                        .is_some_and(|v| parse_detected(v).is_some())
            })
        })
        .filter(|n| dir.join(n).is_file())
        .collect();
    out.sort();
    out
}

/// The most precise version in library file names. A three-part name
/// (`libcudart.so.12.4.127`, `libcudnn.so.9.1.0`) gives `12.4`/`9.1.0`; a
/// shorter one only its major (CUDA 11's soname is `libcudart.so.11.0` for
/// every 11.x, so its `.0` means nothing).
fn version_from_lib_names(files: &[String], stem: &str, dir: &Path) -> Option<Found> {
    let (name, v) = files
        .iter()
        .filter_map(|n| {
            let v = parse_detected(n.strip_prefix(stem)?.strip_prefix(".so.")?)?;
            Some((n, v))
        })
        .max_by_key(|(_, v)| v.parts().len())?;
    let version = match (stem, v.parts().len()) {
        ("libcudart", n) if n >= 3 => v.truncate(2),
        ("libcudnn", n) if n >= 3 => v.truncate(4),
        _ => v.truncate(1),
    };
    Some(Found {
        version,
        from: dir.join(name).display().to_string(),
    })
}

/// Keeps the data-file version when there is one, and the library-name one
/// otherwise; warns when they disagree on the major version (the library is
/// what actually gets loaded, so a disagreement is worth knowing about).
fn merge_with_lib(
    data: Option<Found>,
    lib: Option<Found>,
    what: &str,
    warnings: &mut Vec<String>,
) -> Option<Found> {
    match (data, lib) {
        (Some(d), Some(l)) => {
            if d.version.major() != l.version.major() {
                warnings.push(format!(
                    "{what}: {} says {} but {} is version {}",
                    d.from, d.version, l.from, l.version
                ));
            }
            Some(d)
        }
        (d, l) => d.or(l),
    }
}

/// Keeps the first of several relative directories that resolve to the same
/// place (`lib64` is usually a link to `targets/x86_64-linux/lib`).
fn dedup_dirs(prefix: &Path, dirs: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let canon = std::fs::canonicalize(prefix.join(&d)).unwrap_or_else(|_| prefix.join(&d));
        if !seen.contains(&canon) {
            seen.push(canon);
            out.push(d);
        }
    }
    out
}

/// Is `name` an executable in one of `dirs` (under `prefix`)? Used by `which`.
pub fn find_command(dirs: &[PathBuf], name: &OsStr) -> Option<PathBuf> {
    crate::os::path_list::find(name, dirs.iter().map(PathBuf::as_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        parse_detected(s).unwrap()
    }

    #[test]
    fn reads_defines() {
        let t = "#ifndef X\n#define CUDNN_MAJOR 9\n#  define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n#define CUDART_VERSION 12040\n";
        assert_eq!(define(t, "CUDNN_MAJOR"), Some(9));
        assert_eq!(define(t, "CUDNN_MINOR"), Some(1));
        assert_eq!(define(t, "CUDART_VERSION"), Some(12040));
        assert_eq!(define(t, "CUDNN_VERSION"), None);
    }

    #[test]
    fn lib_names() {
        let d = Path::new("lib64");
        let f = |names: &[&str], stem| {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            version_from_lib_names(&names, stem, d).map(|f| f.version)
        };
        assert_eq!(
            f(
                &["libcudart.so", "libcudart.so.12", "libcudart.so.12.4.127"],
                "libcudart"
            ),
            Some(v("12.4"))
        );
        assert_eq!(f(&["libcudart.so.11.0"], "libcudart"), Some(v("11")));
        assert_eq!(
            f(&["libcudnn.so.9", "libcudnn.so.9.1.0"], "libcudnn"),
            Some(v("9.1.0"))
        );
        assert_eq!(f(&["libcudart.so"], "libcudart"), None);
    }

    #[test]
    fn parses_detected_versions() {
        assert_eq!(parse_detected("12.4.127"), Some(v("12.4.127")));
        assert_eq!(parse_detected(" 9.1.0.70\n"), Some(v("9.1.0.70")));
        assert_eq!(parse_detected("1.2.3.4.5"), None);
        assert_eq!(parse_detected("12.x"), None);
        assert_eq!(parse_detected(""), None);
    }

    /// Empty files at these paths under `root`, their directories made.
    fn touch<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) {
        for path in paths {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"").unwrap();
        }
    }

    /// Lays out empty files exactly as the real wheels' listings name them
    /// (`tests/fixtures/pypi/listings/`), as pip would in site-packages.
    fn site_packages_from_listings(listings: &[&str]) -> tempfile::TempDir {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pypi/listings/");
        let sp = tempfile::tempdir().unwrap();
        for name in listings {
            let text = std::fs::read_to_string(format!("{dir}{name}")).unwrap();
            touch(
                sp.path(),
                text.lines().filter_map(|l| l.split_whitespace().nth(1)),
            );
        }
        sp
    }

    /// NCCL and TensorRT installed beside CUDA's wheels in a venv (their
    /// wheels' own layouts) are found, with the versions of their projects,
    /// and recorded as components: what `verify` runs its checks by.
    /// Linking `site-packages/nvidia` sees NCCL (under it) but not
    /// TensorRT (beside it, outside what was linked).
    #[test]
    fn libraries_beside_the_toolkit_in_a_venv() {
        let sp = site_packages_from_listings(&[
            "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl.txt",
        ]);
        let files = [
            "nvidia/nccl/lib/libnccl.so.2",
            "nvidia_nccl_cu12-2.21.5.dist-info/METADATA",
            "tensorrt_libs/libnvinfer.so.10",
            "tensorrt_libs/libnvinfer_plugin.so.10",
            "tensorrt_cu12_libs-10.0.1.dist-info/METADATA",
            // No dist-info: no version to name it by, so not recorded.
            "cutensor/lib/libcutensor.so.2",
        ];
        touch(sp.path(), files);
        let t = inspect(sp.path()).unwrap();
        let libs: Vec<(Library, String)> = t
            .libs
            .iter()
            .map(|(l, f)| (*l, f.version.to_string()))
            .collect();
        assert_eq!(
            libs,
            [
                (Library::Nccl, "2.21.5".to_string()),
                (Library::Tensorrt, "10.0.1".to_string())
            ]
        );
        let dirs: Vec<PathBuf> = t
            .lib_dirs
            .iter()
            .map(|d| d.components().collect())
            .collect();
        assert!(dirs.contains(&PathBuf::from("nvidia/nccl/lib")), "{dirs:?}");
        assert!(dirs.contains(&PathBuf::from("tensorrt_libs")), "{dirs:?}");
        let m = t.metadata();
        let names: Vec<(&str, &str)> = m
            .components
            .iter()
            .map(|c| (c.name.as_str(), c.version.as_str()))
            .collect();
        assert_eq!(names, [("nccl", "2.21.5"), ("tensorrt", "10.0.1")]);

        let t = inspect(&sp.path().join("nvidia")).unwrap();
        let libs: Vec<Library> = t.libs.iter().map(|(l, _)| *l).collect();
        assert_eq!(libs, [Library::Nccl]);
    }

    /// TensorRT 8.6 as pypi.org's `tensorrt` wheel lays it out (libraries
    /// beside the bindings, in `tensorrt/`); TensorRT 10's `tensorrt` wheel,
    /// bindings alone, is no library.
    #[test]
    fn tensorrt_8_from_its_monolithic_wheel() {
        let sp = site_packages_from_listings(&[
            "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl.txt",
        ]);
        let files = [
            "tensorrt/__init__.py",
            "tensorrt/tensorrt.so",
            "tensorrt/libnvinfer.so.8",
            "tensorrt/libnvinfer_builder_resource.so.8.6.0",
            "tensorrt-8.6.0.dist-info/METADATA",
        ];
        touch(sp.path(), files);
        let t = inspect(sp.path()).unwrap();
        let libs: Vec<(Library, String)> = t
            .libs
            .iter()
            .map(|(l, f)| (*l, f.version.to_string()))
            .collect();
        assert_eq!(libs, [(Library::Tensorrt, "8.6.0".to_string())]);
        assert!(
            t.lib_dirs.iter().any(|d| d == Path::new("tensorrt")),
            "{:?}",
            t.lib_dirs
        );

        std::fs::remove_file(sp.path().join("tensorrt/libnvinfer.so.8")).unwrap();
        std::fs::remove_file(
            sp.path()
                .join("tensorrt/libnvinfer_builder_resource.so.8.6.0"),
        )
        .unwrap();
        let t = inspect(sp.path()).unwrap();
        assert!(t.libs.is_empty(), "{:?}", t.libs);
    }

    #[test]
    fn real_cu12_wheel_layout() {
        let sp = site_packages_from_listings(&[
            "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl.txt",
            "nvidia_cublas_cu12-12.4.5.8-py3-none-manylinux2014_x86_64.whl.txt",
            "nvidia_cuda_nvcc_cu12-12.4.131-py3-none-manylinux2014_x86_64.whl.txt",
            "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl.txt",
        ]);
        let t = inspect(&sp.path().join("nvidia")).unwrap();
        assert_eq!(t.layout, Layout::Wheels);
        assert_eq!(t.cuda.unwrap().version, v("12.4"));
        assert_eq!(t.cudnn.unwrap().version, v("9.1.0.70"));
        // Compared as paths, so `cublas\\lib` on Windows is `cublas/lib`.
        let rel = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.components().collect::<PathBuf>())
                .collect::<Vec<_>>()
        };
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            rel(&t.lib_dirs),
            paths(&["cublas/lib", "cuda_runtime/lib", "cudnn/lib"])
        );
        assert_eq!(rel(&t.bin_dirs), paths(&["cuda_nvcc/bin"]));
        assert_eq!(t.home, None);
        assert_eq!(t.cudnn_home, Some(PathBuf::from("cudnn")));
        assert_eq!(t.runtime, Path::new("cuda_runtime/lib/libcudart.so.12"));
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn real_cu13_wheel_layout() {
        let sp = site_packages_from_listings(&[
            "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl.txt",
            "nvidia_cublas-13.0.0.19-py3-none-manylinux_2_27_x86_64.whl.txt",
            "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl.txt",
            "nvidia_cudnn_cu13-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl.txt",
        ]);
        // Given site-packages this time.
        let t = inspect(sp.path()).unwrap();
        assert_eq!(t.cuda.unwrap().version, v("13.0"));
        assert_eq!(t.cudnn.unwrap().version, v("9.12.0.46"));
        // Compared as paths, so `cublas\\lib` on Windows is `cublas/lib`.
        let rel = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.components().collect::<PathBuf>())
                .collect::<Vec<_>>()
        };
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            rel(&t.lib_dirs),
            paths(&["nvidia/cu13/lib", "nvidia/cudnn/lib"])
        );
        assert_eq!(rel(&t.bin_dirs), paths(&["nvidia/cu13/bin"]));
        assert_eq!(t.home, Some(PathBuf::from("nvidia/cu13")));
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn real_cu11_wheel_layout_uses_dist_info_not_the_soname() {
        // libcudart.so.11.0 is the file name for every CUDA 11.x.
        let sp = site_packages_from_listings(&[
            "nvidia_cuda_runtime_cu11-11.8.89-py3-none-manylinux2014_x86_64.whl.txt",
            "nvidia_cudnn_cu11-8.6.0.163-py3-none-manylinux1_x86_64.whl.txt",
        ]);
        let t = inspect(&sp.path().join("nvidia")).unwrap();
        assert_eq!(t.cuda.unwrap().version, v("11.8"));
        assert_eq!(t.cudnn.unwrap().version, v("8.6.0.163"));
        std::fs::remove_dir_all(sp.path().join("nvidia_cuda_runtime_cu11-11.8.89.dist-info"))
            .unwrap();
        let t = inspect(&sp.path().join("nvidia")).unwrap();
        assert_eq!(
            t.cuda.unwrap().version,
            v("11"),
            "without dist-info only the major is known"
        );
    }

    #[test]
    fn cudnn_alone_is_not_a_cuda_tree() {
        let sp = site_packages_from_listings(&[
            "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl.txt",
        ]);
        assert!(matches!(
            inspect(sp.path()),
            Err(Error::Store(StoreError::NoRuntimeAt { .. }))
        ));
    }

    #[test]
    fn cu_merged_names() {
        assert!(is_cu_merged("cu13"));
        assert!(!is_cu_merged("cublas"));
        assert!(!is_cu_merged("cu"));
    }

    /// NVIDIA's Windows toolkit layout (`CUDA\v11.2` with cuDNN 8.1 copied
    /// in), named as the Windows installer and cuDNN zip name its files.
    #[test]
    fn a_windows_toolkit_tree_is_found_by_its_dlls() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path();
        for d in ["bin", "include", "lib/x64"] {
            std::fs::create_dir_all(p.join(d)).unwrap();
        }
        for f in [
            "bin/cudart64_110.dll",
            "bin/cublas64_11.dll",
            "bin/cudnn64_8.dll",
            "lib/x64/cudart.lib",
        ] {
            std::fs::write(p.join(f), "").unwrap();
        }
        std::fs::write(p.join("include/cuda.h"), "#define CUDA_VERSION 11020\n").unwrap();
        std::fs::write(
            p.join("include/cudnn_version.h"),
            "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 1\n",
        )
        .unwrap();
        let k = inspect(p).unwrap();
        assert_eq!(k.cuda.unwrap().version.to_string(), "11.2");
        assert_eq!(k.cudnn.unwrap().version.to_string(), "8.1.1");
        assert_eq!(k.runtime, Path::new("bin/cudart64_110.dll"));
        assert_eq!(k.bin_dirs, [PathBuf::from("bin")]);
        assert!(
            k.lib_dirs.is_empty() && k.warnings.is_empty(),
            "{:?}",
            k.warnings
        );
        assert_eq!(k.home, Some(PathBuf::from(".")));
    }
}
