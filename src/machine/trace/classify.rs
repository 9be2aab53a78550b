//! The loaded files of parsed images, told apart: which are CUDA-family
//! libraries, where each lives (the active version, a Python wheel, the
//! driver, the system), and the problems among them. Reads only names:
//! symbolic links (for the real file and its version) and pip's RECORD files
//! (which wheel owns a file).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::activation::select::Active;
use crate::machine::compat::libraries::{self, Provider};
use crate::spec::{Libraries, Version};

use super::parse::{RawImage, RawLoad};
use super::{Library, Location, ProblemKind, Process, problem};
use crate::machine::finding::{Finding, Level};

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

/// Classifies the CUDA-family libraries of parsed images and finds the
/// problems, in a report of a command that `succeeded` or not (a name it
/// probed and did without is then a note).
pub fn classify(
    images: &[RawImage],
    active: &ActiveDirs,
    succeeded: bool,
) -> (Vec<Process>, Vec<Finding>) {
    let mut records = Records::default();
    let mut processes = Vec::new();
    let mut problems = Vec::new();
    for img in images {
        let libs = loaded_libraries(img, active, &mut records, &mut problems);
        duplicate_problems(img.pid, &libs, &mut problems);
        mixed_cudnn_problem(img.pid, &libs, &mut problems);
        let missing = not_found(img);
        // Frameworks probe several names (cuda-pathfinder tries CUDA 12's
        // sonames, cuDNN its versioned file names): one line per process.
        if let Some(first) = missing.first() {
            let names: Vec<&str> = missing.iter().map(|n| n.as_str()).collect();
            let level = if succeeded {
                Level::Note
            } else {
                Level::Warning
            };
            problems.push(problem(
                level,
                ProblemKind::NotFound,
                img.pid,
                first.to_string(),
                format!(
                    "searched for and found nowhere (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, system directories): {}",
                    names.join(", ")
                ),
            ));
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

/// The CUDA-family libraries an image loaded, each located. A major the
/// active version does not have is a problem of each library; libraries
/// taken from outside the active version although it has them are one
/// problem of the process.
fn loaded_libraries(
    img: &RawImage,
    active: &ActiveDirs,
    records: &mut Records,
    problems: &mut Vec<Finding>,
) -> Vec<Library> {
    let mut libs = Vec::new();
    let mut outside: Vec<String> = Vec::new();
    for l in &img.loads {
        let Some(id) = identify_loaded(Path::new(&l.path)) else {
            continue;
        };
        let lib = located(l, &id, active, records);
        if let Some(m) = major_mismatch(&id, active) {
            problems.push(problem(
                Level::Warning,
                ProblemKind::MajorMismatch,
                img.pid,
                lib.name.clone(),
                format!("{} ({}) is {m}", lib.name, lib.path),
            ));
        }
        if !matches!(lib.location, Location::Active { .. } | Location::Driver)
            && !active.dirs.is_empty()
            && !active.kept_off
            && active_has(active, &lib.name)
        {
            outside.push(format!("{} ({}; {})", lib.name, lib.location, lib.rule));
        }
        libs.push(lib);
    }
    // One line per process: a framework with its own wheels bypasses many.
    if let Some(first) = outside.first() {
        problems.push(problem(
            Level::Warning,
            ProblemKind::OutsideVersion,
            img.pid,
            first.split(' ').next().unwrap_or("").to_string(),
            format!(
                "{} librar{} came from outside the active {}, which has {}: {}",
                outside.len(),
                if outside.len() == 1 { "y" } else { "ies" },
                active.name,
                if outside.len() == 1 { "it" } else { "them" },
                outside.join(", ")
            ),
        ));
    }
    libs
}

/// Where a loaded library lives, and its version: from its real file's
/// name, else what the active version records for it or the wheel that
/// holds it.
fn located(
    l: &RawLoad,
    id: &libraries::LibraryId,
    active: &ActiveDirs,
    records: &mut Records,
) -> Library {
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
    Library {
        name: id.file.clone(),
        component: id.component.clone(),
        path: l.path.clone(),
        real_path: real.display().to_string(),
        version,
        location,
        rule: l.rule.clone(),
        requested_by: l.requested_by.clone(),
    }
}

/// Two files of one component in one process.
fn duplicate_problems(pid: u32, libs: &[Library], problems: &mut Vec<Finding>) {
    let mut by_component: BTreeMap<&str, Vec<&Library>> = BTreeMap::new();
    for l in libs {
        by_component.entry(&l.component).or_default().push(l);
    }
    for (component, copies) in by_component {
        if copies.len() > 1 {
            let list: Vec<String> = copies
                .iter()
                .map(|c| format!("{} ({})", c.path, c.location))
                .collect();
            problems.push(problem(
                Level::Warning,
                ProblemKind::Duplicate,
                pid,
                copies[0].name.clone(),
                format!(
                    "{} copies of lib{component} in one process: {}",
                    copies.len(),
                    list.join(", ")
                ),
            ));
        }
    }
}

/// cuDNN ≥ 8 is split into sub-libraries that check each other's version.
fn mixed_cudnn_problem(pid: u32, libs: &[Library], problems: &mut Vec<Finding>) {
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
        problems.push(problem(
            Level::Warning,
            ProblemKind::MixedCudnn,
            pid,
            first.name.clone(),
            format!(
                "cuDNN libraries of different versions in one process (\"cuDNN version incompatibility\"): {}",
                list.join(", ")
            ),
        ));
    }
}

/// Searched for, never mapped (not even later by path): not found. A
/// longer name of a library whose soname was then loaded (cuDNN 9 tries
/// `libcudnn_graph.so.9.3.0` and `.9.3` before `.so.9`) is a probe that
/// succeeded, not a missing library.
fn not_found(img: &RawImage) -> Vec<&String> {
    img.searched
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
        .collect()
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

#[cfg(test)]
mod tests {
    use super::super::parse::Rule;
    use super::*;
    use crate::i18n::Msg;
    use crate::machine::finding::Value;

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
        let (procs, problems) = classify(&images, &active, false);
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
        let kinds: Vec<&str> = problems.iter().map(|p| p.code.as_ref()).collect();
        assert_eq!(
            kinds,
            [
                ProblemKind::MajorMismatch.code(),
                ProblemKind::Duplicate.code(),
                ProblemKind::NotFound.code()
            ],
            "{problems:#?}"
        );
        assert_eq!(
            problems[2].get("library"),
            Some(&Value::Text(Msg::verbatim("libcudnn_cnn.so.9"))),
            "libcublasLt was found"
        );
        assert!(
            problems[2]
                .message
                .en()
                .ends_with(": libcudnn_cnn.so.9, libcudart.so.125"),
            "longer names of a loaded soname are probes that succeeded: {}",
            problems[2].message
        );
    }
}
