//! `cudaenv trace`: which CUDA, cuDNN and NCCL libraries a real command
//! loaded, from where, and by which rule of the dynamic loader.
//!
//! The mechanism is glibc's own reporting: the command runs with
//! `LD_DEBUG=libs,files` and `LD_DEBUG_OUTPUT=<scratch>/ld`, so every process
//! of the tree (children inherit the variables) writes `ld.<pid>` as it loads.
//! The loader says, for each library, the request (`needed by X`, `dynamically
//! loaded by X`), each directory list it searched and why (`RPATH from file
//! X`, `RUNPATH from file X`, `LD_LIBRARY_PATH`, the `ld.so.cache`, the system
//! directories), the file it tried last and the link map it created — which
//! is exactly the "why this copy" that users need, for any program.
//!
//! The alternatives were weighed and rejected:
//! - `LD_AUDIT` sees the same events through `la_objsearch`/`la_objopen`, but
//!   needs a shared object of our own on disk and in every process, and an
//!   auditor can change what it observes (glibc runs auditors in their own
//!   namespace, and several had bugs that crash the audited program).
//! - `/proc/PID/maps` shows the result without the reason, only while the
//!   process lives: short-lived children (a compiler driver, a `subprocess`)
//!   are gone before anyone reads it, and polling changes timing.
//!
//! What the loader cannot report, trace cannot either: set-uid programs run in
//! secure mode and ignore `LD_DEBUG_OUTPUT`, static binaries have no loader, a
//! program that clears its children's environment loses the variables for
//! them, and a library opened with `dlmopen` into another namespace is shown
//! like any other. A process image replaced by `exec` keeps its pid; its log is
//! appended to the same file and split here at the first request of the new
//! program.
//!
//! Parsing is a pure function over the log text (`parse`), unit-tested on
//! logs the real loader wrote. Classification (`classify`) reads only names:
//! symbolic links (for the real file and its version) and pip's RECORD files
//! (which wheel owns a file). The end-to-end tests run real programs built
//! with `cc`. A name searched for and mapped nowhere is reported as well,
//! once per process: frameworks probe names they do without, so it is a note
//! when the command succeeded.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::activation::select::Active;
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{Error, Result};
use crate::machine::compat::libraries::{self, Provider};
use crate::spec::{Libraries, Version};

/// How the loader found a library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Rule {
    /// A `DT_RPATH` of the requesting object (or of its loaders).
    Rpath {
        from: String,
    },
    /// A `DT_RUNPATH` of the requesting object.
    Runpath {
        from: String,
    },
    LdLibraryPath,
    /// `/etc/ld.so.cache` (what `ldconfig` indexed).
    Cache,
    /// The built-in system directories.
    SystemDirs,
    /// `dlopen` of a path, or a `DT_NEEDED` entry with a `/`: no search at all.
    Path {
        by: String,
    },
    /// The log did not say (a library loaded before logging started, or `LD_PRELOAD`).
    Unknown,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rule::Rpath { from } => write!(f, "RPATH of {from}"),
            Rule::Runpath { from } => write!(f, "RUNPATH of {from}"),
            Rule::LdLibraryPath => f.write_str("LD_LIBRARY_PATH"),
            Rule::Cache => f.write_str("ld.so.cache"),
            Rule::SystemDirs => f.write_str("system directories"),
            Rule::Path { by } => write!(f, "opened by path by {by}"),
            Rule::Unknown => f.write_str("unknown rule"),
        }
    }
}

/// One library as the loader reported it (before classification).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLoad {
    /// The name requested (`libcudart.so.13`, or a path).
    pub name: String,
    /// The file the loader mapped.
    pub path: String,
    pub rule: Rule,
    /// The object that asked for it.
    pub requested_by: String,
    pub dlopen: bool,
}

/// One process image: a pid, and the program it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawImage {
    pub pid: u32,
    pub program: Option<String>,
    pub loads: Vec<RawLoad>,
    /// Names searched for that no search found (a `dlopen` that failed, or
    /// the loader's "cannot open shared object file").
    pub searched: Vec<String>,
}

#[derive(Default)]
struct ImageState {
    image: Option<RawImage>,
    /// Pending requests by name: (requested by, dlopen).
    requests: HashMap<String, (String, bool)>,
    /// The search under way: the name and the rule of the list being searched.
    search_name: Option<String>,
    rule: Option<Rule>,
    /// Last file tried per name, with the rule that listed it.
    tried: HashMap<String, (String, Rule)>,
    /// `transferring control` seen: start-up of this image is over.
    started: bool,
}

impl ImageState {
    fn image(&mut self, pid: u32) -> &mut RawImage {
        self.image.get_or_insert_with(|| RawImage {
            pid,
            program: None,
            loads: Vec::new(),
            searched: Vec::new(),
        })
    }

    /// Is `who` this image's program or one of its loaded objects?
    fn knows(&self, who: &str) -> bool {
        let Some(img) = &self.image else {
            return false;
        };
        img.program.as_deref() == Some(who)
            || img.loads.iter().any(|l| {
                l.name == who
                    || l.path == who
                    || Path::new(&l.path).file_name() == Path::new(who).file_name()
            })
    }
}

/// Parses the loader's log lines (`  PID:\tmessage`) into process images.
pub fn parse(text: &str) -> Vec<RawImage> {
    let mut states: BTreeMap<u32, ImageState> = BTreeMap::new();
    let mut done: Vec<RawImage> = Vec::new();
    for line in text.lines() {
        let Some((pid, msg)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let msg = msg.strip_prefix('\t').unwrap_or(msg);
        let st = states.entry(pid).or_default();
        let body = msg.trim_start();
        if let Some(rest) = body.strip_prefix("file=") {
            let Some((name, tail)) = rest.split_once(" [") else {
                continue;
            };
            let tail = tail.split_once("];").map(|(_, t)| t.trim()).unwrap_or("");
            if let Some(by) = tail.strip_prefix("needed by ") {
                let by = strip_ns(by);
                // A new program after `exec`: its first request names a
                // requester this image never loaded.
                if st.started && !st.knows(&by) {
                    if let Some(img) = st.image.take() {
                        done.push(img);
                    }
                    *st = ImageState::default();
                    st.image(pid).program = Some(by.clone());
                }
                if st.image.as_ref().is_some_and(|i| i.program.is_none()) || st.image.is_none() {
                    st.image(pid).program = Some(by.clone());
                }
                st.requests.insert(name.to_string(), (by, false));
            } else if let Some(by) = tail.strip_prefix("dynamically loaded by ") {
                st.requests.insert(name.to_string(), (strip_ns(by), true));
            } else if tail.starts_with("generating link map") {
                let (requested_by, dlopen) = st
                    .requests
                    .remove(name)
                    .unwrap_or_else(|| (String::new(), false));
                let (path, rule) = if name.contains('/') {
                    (
                        name.to_string(),
                        Rule::Path {
                            by: requested_by.clone(),
                        },
                    )
                } else {
                    st.tried
                        .remove(name)
                        .unwrap_or_else(|| (name.to_string(), Rule::Unknown))
                };
                st.image(pid).loads.push(RawLoad {
                    name: name.to_string(),
                    path,
                    rule,
                    requested_by,
                    dlopen,
                });
            }
        } else if let Some(rest) = body.strip_prefix("find library=") {
            st.search_name = rest.split_once(" [").map(|(n, _)| n.to_string());
            if let Some(n) = st.search_name.clone() {
                let img = st.image(pid);
                if !img.searched.contains(&n) {
                    img.searched.push(n);
                }
            }
            st.rule = None;
        } else if let Some(rest) = body.strip_prefix("search path=") {
            let why = rest.rsplit_once('(').map(|(_, w)| w.trim_end_matches(')'));
            st.rule = Some(match why {
                Some(w) if w.starts_with("RPATH from file ") => Rule::Rpath {
                    from: w["RPATH from file ".len()..].to_string(),
                },
                Some(w) if w.starts_with("RUNPATH from file ") => Rule::Runpath {
                    from: w["RUNPATH from file ".len()..].to_string(),
                },
                Some("LD_LIBRARY_PATH") => Rule::LdLibraryPath,
                Some("system search path") => Rule::SystemDirs,
                _ => Rule::Unknown,
            });
        } else if body.starts_with("search cache=") {
            st.rule = Some(Rule::Cache);
        } else if let Some(file) = body.strip_prefix("trying file=") {
            if let Some(name) = st.search_name.clone() {
                let rule = st.rule.clone().unwrap_or(Rule::Unknown);
                st.tried.insert(name, (file.to_string(), rule));
            }
        } else if let Some(prog) = body.strip_prefix("initialize program: ") {
            st.image(pid).program = Some(prog.to_string());
        } else if body.starts_with("transferring control") {
            st.started = true;
        }
    }
    done.extend(states.into_values().filter_map(|s| s.image));
    done.retain(|i| !i.loads.is_empty() || i.program.is_some());
    done.sort_by_key(|i| i.pid);
    done
}

/// `./main [0]` → `./main`.
fn strip_ns(s: &str) -> String {
    match s.rsplit_once(" [") {
        Some((n, _)) => n.to_string(),
        None => s.to_string(),
    }
}

/// Where a loaded file lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Location {
    /// Inside the active cudaenv version.
    Active { version: String },
    /// In a Python environment: an NVIDIA wheel (or a framework's own copy).
    PythonWheel {
        site_packages: String,
        /// The distribution whose RECORD lists the file (`nvidia-cudnn-cu13`).
        package: Option<String>,
        package_version: Option<String>,
    },
    /// The NVIDIA driver's own libraries (`libcuda`, `libnvidia-*`).
    Driver,
    /// Anywhere else: a system toolkit, a distribution package, a copy by hand.
    System,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Active { version } => write!(f, "active version {version}"),
            Location::PythonWheel {
                package: Some(p), ..
            } => write!(f, "Python wheel {p}"),
            Location::PythonWheel { .. } => f.write_str("Python environment"),
            Location::Driver => f.write_str("driver"),
            Location::System => f.write_str("system copy"),
        }
    }
}

/// A CUDA-family library a process loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Library {
    /// The soname-style file name (`libcudart.so.13`).
    pub name: String,
    /// The component (`cudart`, `cudnn_cnn`, `nccl`, `cuda`).
    pub component: String,
    /// The path the loader mapped.
    pub path: String,
    /// The same after following symbolic links.
    pub real_path: String,
    /// From the real file name (`13.0.96`) or the wheel that holds it.
    pub version: Option<String>,
    pub location: Location,
    pub rule: Rule,
    pub requested_by: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Process {
    pub pid: u32,
    pub program: Option<String>,
    pub libraries: Vec<Library>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// Two files of one library in one process.
    Duplicate,
    /// A major version the active stack does not have.
    MajorMismatch,
    /// Loaded from outside the active version although it has that library.
    OutsideVersion,
    /// cuDNN's libraries at different versions in one process (they must match exactly).
    MixedCudnn,
    /// Searched for by name and found nowhere.
    NotFound,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub pid: u32,
    pub library: String,
    pub message: String,
}

/// What `trace` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub command: Vec<String>,
    /// The command's exit status as a shell reports it (128 + signal when killed).
    pub exit_code: i32,
    /// The active version, `system` when none.
    pub active: String,
    pub active_cuda: Option<String>,
    pub active_cudnn: Option<String>,
    /// Processes that loaded at least one CUDA-family library.
    pub processes: Vec<Process>,
    /// Processes the loader logged in all (with or without CUDA).
    pub processes_seen: usize,
    pub problems: Vec<Problem>,
    /// What activation said (a Python environment with CUDA wheels next to the version).
    pub notes: Vec<String>,
}

/// Library names this report is about: CUDA toolkit, cuDNN, NCCL, the driver.
fn is_cuda_family(component: &str) -> bool {
    const EXACT: &[&str] = &[
        "cuda",
        "cudart",
        "cublas",
        "cublasLt",
        "cufft",
        "cufftw",
        "curand",
        "cusolver",
        "cusolverMg",
        "cusparse",
        "cusparseLt",
        "cupti",
        "nvrtc",
        "nvJitLink",
        "nvjpeg",
        "nvblas",
        "nvToolsExt",
        "nvfatbin",
        "nvptxcompiler",
        "cufile",
        "cudss",
        "nccl",
        "nvcuvid",
        "nvidia-encode",
    ];
    EXACT.contains(&component)
        || component.starts_with("cudnn")
        || component.starts_with("npp")
        || component.starts_with("nvrtc-builtins")
        || component.starts_with("nvidia-")
        || component.starts_with("nvshmem")
        || component.starts_with("cutensor")
        || component.starts_with("nvinfer")
        || component == "nvonnxparser"
}

/// The active version's directories, resolved, for classification.
#[derive(Debug, Clone, Default)]
pub struct ActiveDirs {
    pub name: String,
    /// `bundled-cuda = wheels` kept the version off LD_LIBRARY_PATH: taking
    /// libraries from the wheels is then the intent, not a problem.
    pub kept_off: bool,
    pub cuda: Option<Version>,
    pub cudnn: Option<Version>,
    /// NCCL, TensorRT, … the active version carries.
    pub libs: Libraries,
    pub dirs: Vec<PathBuf>,
    /// The components the version records (`cudart` → `12.4.127`): a
    /// library of the version whose file name says no more than its soname
    /// (`libcudart.so.12`) is reported with its component's version.
    pub components: Vec<(String, String)>,
}

impl ActiveDirs {
    pub fn of(active: &Active) -> ActiveDirs {
        let Some(v) = active.installed() else {
            return ActiveDirs {
                name: "system".into(),
                ..ActiveDirs::default()
            };
        };
        let mut dirs: Vec<PathBuf> = vec![v.prefix(), v.dir.clone()];
        dirs.extend(v.lib_dirs());
        dirs.extend(v.cudnn_home());
        let dirs = dirs
            .into_iter()
            .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
            .collect();
        ActiveDirs {
            name: v.name.to_string(),
            cuda: v.cuda().cloned(),
            cudnn: v.cudnn().cloned(),
            libs: v.libs(),
            dirs,
            kept_off: false,
            components: v
                .meta
                .components
                .iter()
                .map(|c| (c.name.clone(), c.version.clone()))
                .collect(),
        }
    }

    /// The version the stack records for the component a library belongs
    /// to: cuBLASLt comes with cuBLAS, cuDNN's sub-libraries with cuDNN,
    /// NVRTC's builtins with NVRTC. A legacy runfile's single `toolkit`
    /// component says nothing about one library, so it is not used.
    fn recorded_version(&self, library_component: &str) -> Option<String> {
        let lib = library_component.to_ascii_lowercase();
        let component = if lib.starts_with("cudnn") {
            "cudnn"
        } else if lib == "cublaslt" {
            "cublas"
        } else if lib.starts_with("nvrtc") {
            "nvrtc"
        } else if lib == "cufftw" {
            "cufft"
        } else {
            lib.as_str()
        };
        self.components
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(component))
            .map(|(_, v)| v.clone())
    }

    fn contains(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d))
    }
}

/// Reads `*.dist-info/RECORD` files once per site-packages directory.
#[derive(Default)]
struct Records {
    /// site-packages → (relative path → (distribution, version)).
    by_site: HashMap<PathBuf, HashMap<String, (String, String)>>,
}

impl Records {
    fn owner(&mut self, site: &Path, rel: &str) -> Option<(String, String)> {
        let map = self
            .by_site
            .entry(site.to_path_buf())
            .or_insert_with(|| read_records(site));
        map.get(rel).cloned()
    }
}

fn read_records(site: &Path) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    let Ok(rd) = std::fs::read_dir(site) else {
        return out;
    };
    for e in rd.flatten() {
        let Some(dir) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(stem) = dir.strip_suffix(".dist-info") else {
            continue;
        };
        // Only distributions that can hold CUDA libraries are worth reading.
        let lower = stem.to_ascii_lowercase();
        if !(lower.starts_with("nvidia")
            || lower.starts_with("torch")
            || lower.starts_with("jax")
            || lower.starts_with("cupy")
            || lower.starts_with("tensorflow")
            || lower.starts_with("cuda"))
        {
            continue;
        }
        let (name, version) = match crate::machine::doctor::python::read_name_version(&e.path()) {
            Some(nv) => nv,
            None => continue,
        };
        let Ok(text) =
            crate::os::fs::read_bounded_text(&e.path().join("RECORD"), crate::os::fs::LARGE)
        else {
            continue;
        };
        for line in text.lines() {
            let path = line.split(',').next().unwrap_or("");
            if path.contains(".so") {
                out.insert(path.to_string(), (name.clone(), version.clone()));
            }
        }
    }
    out
}

/// The site-packages (or dist-packages) directory above `p`, and `p` relative to it.
fn site_of(p: &Path) -> Option<(PathBuf, String)> {
    let mut cur = p.parent();
    while let Some(d) = cur {
        if matches!(
            d.file_name().and_then(|n| n.to_str()),
            Some("site-packages" | "dist-packages")
        ) {
            let rel = p.strip_prefix(d).ok()?.to_str()?.to_string();
            return Some((d.to_path_buf(), rel));
        }
        cur = d.parent();
    }
    None
}

/// `libcudart.so.13.0.96` → `13.0.96` (only when it says more than the soname).
fn version_from_file(real: &Path, soname_version: &str) -> Option<String> {
    let name = real.file_name()?.to_str()?;
    let (_, ver) = name.split_once(".so.")?;
    if ver.chars().all(|c| c.is_ascii_digit() || c == '.') && ver != soname_version {
        Some(ver.to_string())
    } else {
        None
    }
}

/// Classifies the CUDA-family libraries of parsed images and finds the problems.
pub fn classify(images: &[RawImage], active: &ActiveDirs) -> (Vec<Process>, Vec<Problem>) {
    let mut records = Records::default();
    let mut processes = Vec::new();
    let mut problems = Vec::new();
    for img in images {
        let mut libs = Vec::new();
        let mut outside: Vec<String> = Vec::new();
        for l in &img.loads {
            let Some(id) = identify_loaded(Path::new(&l.path)) else {
                continue;
            };
            let path = Path::new(&l.path);
            let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            let mut version = version_from_file(&real, &id.soversion);
            let location = if matches!(id.provider, Provider::Driver)
                || id.component.starts_with("nvidia-")
                || id.component == "nvcuvid"
            {
                Location::Driver
            } else if !active.dirs.is_empty() && (active.contains(&real) || active.contains(path)) {
                if version.is_none() {
                    version = active.recorded_version(&id.component);
                }
                Location::Active {
                    version: active.name.clone(),
                }
            } else if let Some((site, rel)) = site_of(path) {
                let owner = records
                    .owner(&site, &rel)
                    .or_else(|| site_of(&real).and_then(|(s, r)| records.owner(&s, &r)));
                if version.is_none() {
                    version = owner.as_ref().map(|o| o.1.clone());
                }
                Location::PythonWheel {
                    site_packages: site.display().to_string(),
                    package_version: owner.as_ref().map(|o| o.1.clone()),
                    package: owner.map(|o| o.0),
                }
            } else {
                Location::System
            };
            libs.push(Library {
                name: id.file.clone(),
                component: id.component.clone(),
                path: l.path.clone(),
                real_path: real.display().to_string(),
                version,
                location,
                rule: l.rule.clone(),
                requested_by: l.requested_by.clone(),
            });
            let lib = libs.last().expect("just pushed");
            if let Some(m) = major_mismatch(&id, active) {
                problems.push(Problem {
                    kind: ProblemKind::MajorMismatch,
                    pid: img.pid,
                    library: lib.name.clone(),
                    message: format!("{} ({}) is {m}", lib.name, lib.path),
                });
            }
            if !matches!(lib.location, Location::Active { .. } | Location::Driver)
                && !active.dirs.is_empty()
                && !active.kept_off
                && active_has(active, &lib.name)
            {
                outside.push(format!("{} ({}; {})", lib.name, lib.location, lib.rule));
            }
        }
        // One line per process: a framework with its own wheels bypasses many.
        if let Some(first) = outside.first() {
            problems.push(Problem {
                kind: ProblemKind::OutsideVersion,
                pid: img.pid,
                library: first.split(' ').next().unwrap_or("").to_string(),
                message: format!(
                    "{} librar{} came from outside the active {}, which has {}: {}",
                    outside.len(),
                    if outside.len() == 1 { "y" } else { "ies" },
                    active.name,
                    if outside.len() == 1 { "it" } else { "them" },
                    outside.join(", ")
                ),
            });
        }
        // Two files of one component in one process.
        let mut by_component: BTreeMap<&str, Vec<&Library>> = BTreeMap::new();
        for l in &libs {
            by_component.entry(&l.component).or_default().push(l);
        }
        for (component, copies) in by_component {
            if copies.len() > 1 {
                let list: Vec<String> = copies
                    .iter()
                    .map(|c| format!("{} ({})", c.path, c.location))
                    .collect();
                problems.push(Problem {
                    kind: ProblemKind::Duplicate,
                    pid: img.pid,
                    library: copies[0].name.clone(),
                    message: format!(
                        "{} copies of lib{component} in one process: {}",
                        copies.len(),
                        list.join(", ")
                    ),
                });
            }
        }
        // cuDNN ≥ 8 is split into sub-libraries that check each other's version.
        let mut cudnn: Vec<&Library> = libs
            .iter()
            .filter(|l| l.component.starts_with("cudnn") && l.version.is_some())
            .collect();
        cudnn.dedup_by(|a, b| a.real_path == b.real_path);
        if let Some(first) = cudnn.first()
            && cudnn.iter().any(|l| l.version != first.version)
        {
            let list: Vec<String> = cudnn
                .iter()
                .map(|l| {
                    format!(
                        "{} {} ({})",
                        l.name,
                        l.version.as_deref().unwrap_or("?"),
                        l.location
                    )
                })
                .collect();
            problems.push(Problem {
                kind: ProblemKind::MixedCudnn,
                pid: img.pid,
                library: first.name.clone(),
                message: format!(
                    "cuDNN libraries of different versions in one process (\"cuDNN version incompatibility\"): {}",
                    list.join(", ")
                ),
            });
        }
        // Searched for, never mapped (not even later by path): not found. A
        // longer name of a library whose soname was then loaded (cuDNN 9 tries
        // `libcudnn_graph.so.9.3.0` and `.9.3` before `.so.9`) is a probe that
        // succeeded, not a missing library.
        let missing: Vec<&String> = img
            .searched
            .iter()
            .filter(|n| {
                libraries::identify(n).is_some_and(|id| is_cuda_family(&id.component))
                    && !img.loads.iter().any(|l| {
                        let loaded = Path::new(&l.path).file_name().and_then(|f| f.to_str());
                        l.name == **n
                            || loaded == Path::new(n.as_str()).file_name().and_then(|f| f.to_str())
                            || loaded.is_some_and(|f| {
                                n.strip_prefix(f).is_some_and(|rest| rest.starts_with('.'))
                            })
                    })
            })
            .collect();
        // Frameworks probe several names (cuda-pathfinder tries CUDA 12's
        // sonames, cuDNN its versioned file names): one line per process.
        if let Some(first) = missing.first() {
            let names: Vec<&str> = missing.iter().map(|n| n.as_str()).collect();
            problems.push(Problem {
                kind: ProblemKind::NotFound,
                pid: img.pid,
                library: first.to_string(),
                message: format!(
                    "searched for and found nowhere (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, system directories): {}",
                    names.join(", ")
                ),
            });
        }
        if !libs.is_empty() || !missing.is_empty() {
            processes.push(Process {
                pid: img.pid,
                program: img.program.clone(),
                libraries: libs,
            });
        }
    }
    (processes, problems)
}

/// The CUDA-family library a loaded file is, by its ELF soname first (a
/// renamed copy keeps it), then by its file name; either with auditwheel's
/// `-<8 hex digits>` suffix of repaired wheels' copies taken off
/// (`libcudart-d0da41ae.so.12` is a libcudart.so.12).
fn identify_loaded(path: &Path) -> Option<libraries::LibraryId> {
    let file = path.file_name().and_then(|n| n.to_str());
    let soname = crate::os::dylib::soname(path);
    [soname.as_deref(), file]
        .into_iter()
        .flatten()
        .flat_map(|n| [Some(n.to_string()), without_auditwheel_hash(n)])
        .flatten()
        .filter_map(|n| libraries::identify(&n))
        .find(|id| is_cuda_family(&id.component))
}

/// `libcudart-d0da41ae.so.12` → `libcudart.so.12`; `None` without such a suffix.
fn without_auditwheel_hash(name: &str) -> Option<String> {
    let (stem, rest) = name.split_once(".so")?;
    let (base, hash) = stem.rsplit_once('-')?;
    (hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("{base}.so{rest}"))
}

/// Does the active version have a file of this name in its directories?
fn active_has(active: &ActiveDirs, name: &str) -> bool {
    active.dirs.iter().any(|d| d.join(name).exists())
}

/// "a CUDA 12 library, the active version has CUDA 13" — or nothing.
fn major_mismatch(id: &libraries::LibraryId, active: &ActiveDirs) -> Option<String> {
    match &id.provider {
        Provider::Cuda { cuda } => {
            let have = active.cuda.as_ref()?;
            if cuda.is_empty() || cuda.iter().any(|c| c.major() == have.major()) {
                return None;
            }
            let majors: Vec<String> = {
                let mut m: Vec<u32> = cuda.iter().map(|c| c.major()).collect();
                m.dedup();
                m.iter().map(|m| m.to_string()).collect()
            };
            Some(format!(
                "a CUDA {} library; the active {} has CUDA {have}",
                majors.join("/"),
                active.name
            ))
        }
        Provider::Cudnn { major } => {
            let have = active.cudnn.as_ref()?;
            (have.major() != *major).then(|| {
                format!(
                    "a cuDNN {major} library; the active {} has cuDNN {have}",
                    active.name
                )
            })
        }
        Provider::Library { library, major } => {
            let have = active.libs.get(*library)?;
            (have.major() != *major).then(|| {
                format!(
                    "a {} {major} library; the active {} has {} {have}",
                    library.title(),
                    active.name,
                    library.title()
                )
            })
        }
        _ => None,
    }
}

/// Adds the loader's variables to an activated environment.
pub fn instrument(vars: &mut BTreeMap<OsString, OsString>, log_prefix: &Path) {
    vars.insert(env_vars::LD_DEBUG.into(), "libs,files".into());
    vars.insert(
        env_vars::LD_DEBUG_OUTPUT.into(),
        log_prefix.as_os_str().to_owned(),
    );
}

/// Reads every `<prefix>.<pid>` log the loader wrote, and says which files
/// of that name were skipped: the traced program knows `LD_DEBUG_OUTPUT`, so
/// it can put a FIFO, a link to a device or a huge file there; each log is
/// read by the bounded reader (`os::fs`), never followed into a device.
pub fn read_logs(log_prefix: &Path) -> Result<(String, Vec<String>)> {
    let dir = log_prefix.parent().unwrap_or(Path::new("."));
    let stem = log_prefix
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("ld")
        .to_string();
    let mut text = String::new();
    let rd = std::fs::read_dir(dir).map_err(Error::io("cannot read", dir))?;
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&stem))
                .and_then(|n| n.strip_prefix('.'))
                .is_some_and(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    let mut skipped = Vec::new();
    for f in files {
        // No link is followed: the loader writes plain files.
        let is_link = std::fs::symlink_metadata(&f).is_ok_and(|m| m.file_type().is_symlink());
        let read = if is_link {
            Err("it is a symbolic link, which the loader never writes".to_string())
        } else {
            crate::os::fs::read_bounded(&f, LOG_MAX).map_err(|e| e.to_string())
        };
        match read {
            Ok(bytes) => {
                text.push_str(&String::from_utf8_lossy(&bytes));
                text.push('\n');
            }
            Err(why) => skipped.push(format!("the loader log {} was skipped: {why}", f.display())),
        }
    }
    Ok((text, skipped))
}

/// The most one process's loader log is read to (a real one is a few MB).
const LOG_MAX: u64 = crate::os::fs::LARGE;

/// Builds the report from the loader's logs.
pub fn report(command: &[OsString], exit_code: i32, active: &ActiveDirs, log_text: &str) -> Report {
    let images = parse(log_text);
    let (processes, problems) = classify(&images, active);
    Report {
        command: command
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect(),
        exit_code,
        active: active.name.clone(),
        active_cuda: active.cuda.as_ref().map(|v| v.to_string()),
        active_cudnn: active.cudnn.as_ref().map(|v| v.to_string()),
        processes,
        processes_seen: images.len(),
        problems,
        notes: Vec::new(),
    }
}

/// Runs `command` activated and instrumented, waits, and reports.
///
/// The command inherits stdio and runs as a foreground job
/// (`os::process::run_foreground`): Ctrl-C stops the command, not trace,
/// so the report is still written; a SIGTERM to trace is passed on.
pub fn run(ctx: &Context, active: &Active, command: &[OsString]) -> Result<Report> {
    if !crate::os::LOADER_LOGS {
        return Err(Error::TraceUnsupported {
            platform: crate::os::platform::Platform::current()
                .map_or(std::env::consts::OS, |p| p.name())
                .into(),
        });
    }
    let store = crate::store::Store::new(ctx.root());
    let delta = crate::activation::plan(ctx, &store, active)?;
    let mut vars = ctx.vars_map();
    delta.apply(&mut vars);
    let scratch = tempfile::Builder::new()
        .prefix("cudaenv-trace-")
        .tempdir()
        .map_err(Error::io(
            "cannot create a scratch directory in",
            std::env::temp_dir(),
        ))?;
    let log_prefix = scratch.path().join("ld");
    instrument(&mut vars, &log_prefix);
    let (program, rest) = command.split_first().ok_or_else(|| Error::TraceFailed {
        command: String::new(),
        reason: "no command given".into(),
    })?;
    let path = vars.get(std::ffi::OsStr::new(env_vars::PATH));
    let resolved =
        crate::activation::find_in_path(program, path).ok_or_else(|| Error::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: Vec::new(),
        })?;
    let mut cmd = std::process::Command::new(&resolved);
    crate::os::set_arg0(&mut cmd, program);
    cmd.args(rest)
        .env_clear()
        .envs(&vars)
        .current_dir(ctx.cwd());
    // Ctrl-C stops the program (not trace, which reports); a SIGTERM to
    // trace is passed on to it; either way the scratch directory goes.
    let status = crate::os::process::run_foreground(cmd).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: Vec::new(),
        },
        _ => Error::TraceFailed {
            command: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        },
    })?;
    let exit_code = status
        .code()
        .or_else(|| crate::os::exit_signal(&status).map(|s| 128 + s))
        .unwrap_or(1);
    let (text, skipped) = read_logs(&log_prefix)?;
    let mut dirs = ActiveDirs::of(active);
    dirs.kept_off = delta.notes.iter().any(|n| {
        matches!(
            n,
            crate::activation::Note::BundledWheels { kept_off: true, .. }
        )
    });
    let mut r = report(command, exit_code, &dirs, &text);
    r.notes = delta.notes.iter().map(|n| n.to_string()).collect();
    r.notes.extend(skipped);
    Ok(r)
}

/// The command as a shell would read it back: each argument quoted where
/// it needs to be (`python -c 'import torch; …'`), so it can be copied and
/// run again.
fn shown_command(args: &[String]) -> String {
    // As Python's `shlex.quote`: a word of plain characters as it is, any
    // other in single quotes (shell-quote's own output mixes quoting styles
    // within a word, which is exact but hard to read back).
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(plain) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The human-readable report (for stderr).
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let stack = match (&r.active_cuda, &r.active_cudnn) {
        (Some(c), Some(d)) => format!("{} (CUDA {c} + cuDNN {d})", r.active),
        (Some(c), None) => format!("{} (CUDA {c})", r.active),
        _ => r.active.clone(),
    };
    let n: usize = r.processes.iter().map(|p| p.libraries.len()).sum();
    s.push_str(&format!(
        "trace: `{}` exited {}; active: {stack}; {n} CUDA librar{} in {} of {} process{}\n",
        shown_command(&r.command),
        r.exit_code,
        if n == 1 { "y" } else { "ies" },
        r.processes.len(),
        r.processes_seen,
        if r.processes_seen == 1 { "" } else { "es" },
    ));
    if r.processes_seen == 0 {
        s.push_str("  the loader logged nothing: a static or set-uid program, or one that cleared LD_DEBUG for its children\n");
    }
    for p in &r.processes {
        s.push_str(&format!(
            "pid {} {}\n",
            p.pid,
            p.program.as_deref().unwrap_or("?")
        ));
        let w = p.libraries.iter().map(|l| l.name.len()).max().unwrap_or(0);
        let vw = p
            .libraries
            .iter()
            .map(|l| l.version.as_deref().unwrap_or("-").len())
            .max()
            .unwrap_or(0);
        for l in &p.libraries {
            s.push_str(&format!(
                "  {:w$}  {:vw$}  {}  [{}]\n      {}\n",
                l.name,
                l.version.as_deref().unwrap_or("-"),
                l.location,
                l.rule,
                l.path,
            ));
        }
    }
    for p in &r.problems {
        // A name the program probed and did without is not a problem when it succeeded.
        let level = if p.kind == ProblemKind::NotFound && r.exit_code == 0 {
            "note"
        } else {
            "warning"
        };
        s.push_str(&format!("{level}: pid {}: {}\n", p.pid, p.message));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by glibc 2.36's loader for a program with a RUNPATH that links
    /// libcudart.so.13, dlopens another copy by path, then forks and execs
    /// /bin/true (trimmed of the hwcaps subdirectories it also tries).
    const LOG: &str = "     13805:\t
     13805:\tfile=libcudart.so.13 [0];  needed by ./main [0]
     13805:\tfind library=libcudart.so.13 [0]; searching
     13805:\t search path=/tmp/ldt/a/x86_64:/tmp/ldt/a\t\t(RUNPATH from file ./main)
     13805:\t  trying file=/tmp/ldt/a/x86_64/libcudart.so.13
     13805:\t  trying file=/tmp/ldt/a/libcudart.so.13
     13805:\t
     13805:\tfile=libcudart.so.13 [0];  generating link map
     13805:\tfile=libc.so.6 [0];  needed by ./main [0]
     13805:\tfind library=libc.so.6 [0]; searching
     13805:\t search path=/tmp/ldt/a\t\t(RUNPATH from file ./main)
     13805:\t  trying file=/tmp/ldt/a/libc.so.6
     13805:\t search cache=/etc/ld.so.cache
     13805:\t  trying file=/lib/x86_64-linux-gnu/libc.so.6
     13805:\t
     13805:\tfile=libc.so.6 [0];  generating link map
     13805:\tcalling init: /tmp/ldt/a/libcudart.so.13
     13805:\tinitialize program: ./main
     13805:\ttransferring control: ./main
     13805:\tfile=/tmp/ldt/b/libcudart.so.13 [0];  dynamically loaded by ./main [0]
     13805:\tfile=/tmp/ldt/b/libcudart.so.13 [0];  generating link map
     13806:\tfile=libc.so.6 [0];  needed by true [0]
     13806:\tfind library=libc.so.6 [0]; searching
     13806:\t search cache=/etc/ld.so.cache
     13806:\t  trying file=/lib/x86_64-linux-gnu/libc.so.6
     13806:\tfile=libc.so.6 [0];  generating link map
     13806:\tinitialize program: true
     13806:\ttransferring control: true
";

    #[test]
    fn auditwheel_copies_are_known_by_their_library() {
        assert_eq!(
            without_auditwheel_hash("libcudart-d0da41ae.so.11.0").as_deref(),
            Some("libcudart.so.11.0")
        );
        assert_eq!(without_auditwheel_hash("libcudart.so.12"), None);
        assert_eq!(without_auditwheel_hash("libnv-tool.so.1"), None);
    }

    #[test]
    fn parses_rules_paths_and_children() {
        let images = parse(LOG);
        assert_eq!(images.len(), 2);
        let main = &images[0];
        assert_eq!(main.program.as_deref(), Some("./main"));
        let paths: Vec<(&str, &Rule)> = main
            .loads
            .iter()
            .map(|l| (l.path.as_str(), &l.rule))
            .collect();
        assert_eq!(
            paths,
            [
                (
                    "/tmp/ldt/a/libcudart.so.13",
                    &Rule::Runpath {
                        from: "./main".into()
                    }
                ),
                ("/lib/x86_64-linux-gnu/libc.so.6", &Rule::Cache),
                (
                    "/tmp/ldt/b/libcudart.so.13",
                    &Rule::Path {
                        by: "./main".into()
                    }
                ),
            ]
        );
        assert!(main.loads[2].dlopen);
        assert_eq!(images[1].pid, 13806);
        assert_eq!(images[1].program.as_deref(), Some("true"));
    }

    #[test]
    fn an_exec_in_the_same_pid_starts_a_new_image() {
        let log = "  7:\tfile=libc.so.6 [0];  needed by sh [0]
  7:\tfind library=libc.so.6 [0]; searching
  7:\t search cache=/etc/ld.so.cache
  7:\t  trying file=/lib/libc.so.6
  7:\tfile=libc.so.6 [0];  generating link map
  7:\ttransferring control: sh
  7:\tfile=libcudnn.so.9 [0];  needed by ./prog [0]
  7:\tfind library=libcudnn.so.9 [0]; searching
  7:\t search path=/opt/x\t\t(LD_LIBRARY_PATH)
  7:\t  trying file=/opt/x/libcudnn.so.9
  7:\tfile=libcudnn.so.9 [0];  generating link map
  7:\tfile=libcudnn_cnn.so.9 [0];  dynamically loaded by /opt/x/libcudnn.so.9 [0]
  7:\tfind library=libcudnn_cnn.so.9 [0]; searching
  7:\t search path=/lib:/usr/lib\t\t(system search path)
  7:\t  trying file=/usr/lib/libcudnn_cnn.so.9
  7:\tfile=libcudnn_cnn.so.9 [0];  generating link map
";
        let images = parse(log);
        assert_eq!(images.len(), 2, "{images:#?}");
        assert_eq!(images[0].program.as_deref(), Some("sh"));
        let prog = &images[1];
        assert_eq!(prog.program.as_deref(), Some("./prog"));
        assert_eq!(prog.loads[0].rule, Rule::LdLibraryPath);
        assert_eq!(prog.loads[1].rule, Rule::SystemDirs);
        assert!(prog.loads[1].dlopen);
        assert_eq!(prog.loads[1].requested_by, "/opt/x/libcudnn.so.9");
    }

    #[test]
    fn finds_duplicates_and_mixed_majors() {
        let images = vec![RawImage {
            pid: 1,
            program: Some("p".into()),
            searched: vec![
                "libcudnn_cnn.so.9".into(),
                "libcublasLt.so.13.0.2".into(),
                "libcublasLt.so.13".into(),
                "libcudart.so.12.5".into(),
                "libcudart.so.125".into(),
            ],
            loads: vec![
                RawLoad {
                    name: "libcublasLt.so.13".into(),
                    path: "/nonexistent/a/libcublasLt.so.13".into(),
                    rule: Rule::LdLibraryPath,
                    requested_by: "p".into(),
                    dlopen: false,
                },
                RawLoad {
                    name: "/nonexistent/site-packages/nvidia/cu13/lib/libcublasLt.so.13".into(),
                    path: "/nonexistent/site-packages/nvidia/cu13/lib/libcublasLt.so.13".into(),
                    rule: Rule::Path { by: "p".into() },
                    requested_by: "p".into(),
                    dlopen: true,
                },
                RawLoad {
                    name: "libcudart.so.12".into(),
                    path: "/nonexistent/b/libcudart.so.12".into(),
                    rule: Rule::Cache,
                    requested_by: "p".into(),
                    dlopen: false,
                },
                RawLoad {
                    name: "libc.so.6".into(),
                    path: "/lib/libc.so.6".into(),
                    rule: Rule::Cache,
                    requested_by: "p".into(),
                    dlopen: false,
                },
            ],
        }];
        let active = ActiveDirs {
            name: "sys13".into(),
            cuda: Some(Version::from_parts(&[13, 0])),
            cudnn: None,
            libs: Libraries::default(),
            dirs: vec![PathBuf::from("/nonexistent/a")],
            kept_off: false,
            components: Vec::new(),
        };
        let (procs, problems) = classify(&images, &active);
        assert_eq!(procs[0].libraries.len(), 3, "libc is not a CUDA library");
        assert!(matches!(
            procs[0].libraries[0].location,
            Location::Active { .. }
        ));
        assert!(matches!(
            procs[0].libraries[1].location,
            Location::PythonWheel { .. }
        ));
        assert_eq!(procs[0].libraries[2].location, Location::System);
        let kinds: Vec<&ProblemKind> = problems.iter().map(|p| &p.kind).collect();
        assert_eq!(
            kinds,
            [
                &ProblemKind::MajorMismatch,
                &ProblemKind::Duplicate,
                &ProblemKind::NotFound
            ],
            "{problems:#?}"
        );
        assert_eq!(
            problems[2].library, "libcudnn_cnn.so.9",
            "libcublasLt was found"
        );
        assert!(
            problems[2]
                .message
                .ends_with(": libcudnn_cnn.so.9, libcudart.so.125"),
            "longer names of a loaded soname are probes that succeeded: {}",
            problems[2].message
        );
    }
}
