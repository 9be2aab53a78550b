//! CUDA and cuDNN library file names → the release that provides them.
//!
//! Frameworks load libraries by soname (`libcudart.so.11.0`, `libcudnn.so.8`)
//! on Linux and by versioned DLL name (`cudart64_110.dll`, `cudnn64_8.dll`) on
//! Windows; their error messages name that file. Mapping the name back to a
//! CUDA or cuDNN release is what `explain` needs to say what to install. Most
//! sonames carry the component's major version, which the redist manifests
//! relate to CUDA releases (`registry/compat/libraries.toml`); cudart and nvrtc
//! keep `11.0` / `11.2` across CUDA 11.x, and CUDA 10 named files by minor.

use serde::Serialize;

use crate::i18n::Msg;
use crate::msg;
use crate::os::platform::Platform;
use crate::spec::{Library, Version};

use super::data;

/// What a library file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LibraryId {
    /// The name as found (`libcudart.so.11.0`).
    pub file: String,
    /// Component (`cudart`, `cublas`, `cudnn`, `cudnn_cnn_infer`, `nvinfer`).
    pub component: String,
    /// The version in the name (`11.0`, `8`).
    pub soversion: String,
    pub provider: Provider,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Provider {
    /// A CUDA toolkit library; `cuda` lists the releases (major.minor) that ship it.
    Cuda {
        cuda: Vec<Version>,
    },
    /// A cuDNN library of this major version.
    Cudnn {
        major: u32,
    },
    /// The driver's own library (`libcuda.so.1`, `nvcuda.dll`).
    Driver,
    /// Microsoft's Visual C++ runtime (`msvcp140.dll`, `vcruntime140_1.dll`):
    /// what Windows builds of the frameworks link, from no CUDA release.
    VisualCppRuntime,
    /// A library beside the toolkit (NCCL, TensorRT, cuSPARSELt, cuTENSOR)
    /// of this major version.
    Library {
        library: Library,
        major: u32,
    },
    Unknown,
}

const CUDA_LIBS: &[&str] = &[
    "cudart",
    "cublasLt",
    "cublas",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "nvrtc",
    "nvJitLink",
    "cupti",
    "nppc",
    "nvjpeg",
];

/// Recognises `libX.so.N[.M…]`, `X64_NNN.dll`, `X64_N.dll`, `X64_NNN_0.dll`
/// (nvrtc), `libX.so` (no version), `nvcuda.dll` and the Visual C++
/// runtime's DLLs (`MSVCP140.dll`, `vcruntime140_1.dll`), a path before
/// the name (`/` or `\\`) aside.
pub fn identify(file: &str) -> Option<LibraryId> {
    let file = file.trim_matches(|c: char| c == '\'' || c == '"' || c == '`');
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let dll_stem = base
        .len()
        .checked_sub(4)
        .filter(|&i| base.is_char_boundary(i) && base[i..].eq_ignore_ascii_case(".dll"))
        .map(|i| &base[..i]);
    if let Some(stem) = dll_stem
        && let Some(id) = windows_system_dll(base, stem)
    {
        return Some(id);
    }
    let (component, soversion, windows) = if let Some(stem) = dll_stem {
        // `cudart64_110`, `cudnn_ops_infer64_8`, `nvrtc64_112_0`; `nvinfer_10` has no `64`.
        let (name, ver) = match stem.rfind("64_") {
            Some(i) => (&stem[..i], stem[i + 3..].split('_').next().unwrap_or("")),
            None => stem.rsplit_once('_')?,
        };
        // Windows names compare without case: `CUBLASLT64_11.DLL` is `cublasLt`.
        let canonical = CUDA_LIBS
            .iter()
            .chain(&["cusparseLt", "cutensorMg"])
            .find(|c| c.eq_ignore_ascii_case(name))
            .map_or_else(|| name.to_ascii_lowercase(), |c| c.to_string());
        (canonical, ver.to_string(), true)
    } else {
        let rest = base.strip_prefix("lib")?;
        let (name, ver) = rest.split_once(".so")?;
        (
            name.to_string(),
            ver.trim_start_matches('.').to_string(),
            false,
        )
    };
    if component.is_empty() || !soversion.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let provider = if component == "cuda" || component == "nvcuda" {
        Provider::Driver
    } else if let Some(library) = beside_the_toolkit(&component) {
        match soversion.split('.').next().and_then(|m| m.parse().ok()) {
            Some(major) => Provider::Library { library, major },
            None => Provider::Unknown,
        }
    } else if component == "cudnn" || component.starts_with("cudnn_") {
        match soversion.split('.').next().and_then(|m| m.parse().ok()) {
            Some(major) => Provider::Cudnn { major },
            None => Provider::Unknown,
        }
    } else if CUDA_LIBS.contains(&component.as_str()) {
        cuda_provider(&component, &soversion, windows)
    } else {
        Provider::Unknown
    };
    Some(LibraryId {
        file: base.to_string(),
        component,
        soversion,
        provider,
    })
}

/// The Windows DLLs that carry no `_N` version: the driver's `nvcuda.dll`,
/// and Microsoft's Visual C++ runtime (`msvcp140.dll`, `msvcp140_1.dll`,
/// `vcruntime140.dll`, `vcruntime140_1.dll`, `concrt140.dll`, and the older
/// `msvcr120.dll`), which TensorFlow's and PyTorch's Windows builds link.
fn windows_system_dll(base: &str, stem: &str) -> Option<LibraryId> {
    let lower = stem.to_ascii_lowercase();
    let id = |component: &str, soversion: &str, provider| LibraryId {
        file: base.to_string(),
        component: component.to_string(),
        soversion: soversion.to_string(),
        provider,
    };
    if lower == "nvcuda" {
        return Some(id("nvcuda", "", Provider::Driver));
    }
    let (name, rest) = ["msvcp", "vcruntime", "msvcr", "concrt", "vccorlib"]
        .iter()
        .find_map(|p| lower.strip_prefix(p).map(|r| (*p, r)))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let tail = &rest[digits.len()..];
    let tail_ok = tail.is_empty()
        || tail.strip_prefix('_').is_some_and(|t| {
            !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    (digits.len() >= 2 && tail_ok).then(|| id(name, &digits, Provider::VisualCppRuntime))
}

/// The library a file of a library beside the toolkit belongs to:
/// TensorRT's `libnvinfer*`, `libnvonnxparser`, `libnvparsers`; NCCL's
/// `libnccl`; `libcusparseLt`; cuTENSOR's `libcutensor`, `libcutensorMg`.
fn beside_the_toolkit(component: &str) -> Option<Library> {
    match component {
        c if c.starts_with("nvinfer") || c == "nvonnxparser" || c == "nvparsers" => {
            Some(Library::Tensorrt)
        }
        "nccl" => Some(Library::Nccl),
        "cusparseLt" => Some(Library::Cusparselt),
        "cutensor" | "cutensorMg" => Some(Library::Cutensor),
        _ => None,
    }
}

fn cuda_provider(component: &str, soversion: &str, windows: bool) -> Provider {
    // Windows writes `110` for `11.0` and `12` for `12`; CUDA 10 DLLs carry
    // the minor (`101`, `100`), CUDA 9 and 8 theirs in two digits (`90`, `80`).
    let digits = soversion.bytes().all(|b| b.is_ascii_digit());
    let names_release = windows
        && digits
        && (soversion.len() == 3 || (soversion.len() == 2 && soversion.as_bytes()[0] >= b'7'));
    let ver: Option<Version> = if names_release {
        let (a, b) = soversion.split_at(soversion.len() - 1);
        Some(Version::from_parts(&[
            a.parse().unwrap_or(0),
            b.parse().unwrap_or(0),
        ]))
    } else {
        Version::parse_parts(soversion, 4).ok()
    };
    let Some(ver) = ver else {
        return Provider::Unknown;
    };
    // Before CUDA 11 every library's DLL was named by the CUDA release
    // (`cufft64_100.dll` is CUDA 10.0's, not cuFFT 10's).
    if names_release && ver.major() <= 10 {
        return Provider::Cuda {
            cuda: vec![ver.truncate(2)],
        };
    }
    let name = if component == "cublasLt" {
        "cublas"
    } else {
        component
    };
    let major = ver.major();
    // cudart/nvrtc/cupti: 11.x kept `11.0`/`11.2`-style names; CUDA 10 named by minor.
    let from_table: Vec<Version> = data::libraries()
        .library
        .iter()
        .filter(|l| l.name == name && l.major == major.to_string())
        .flat_map(|l| l.cuda.iter().cloned())
        .collect();
    let same_as_cuda = matches!(
        name,
        "cudart" | "cublas" | "nvrtc" | "cupti" | "nvJitLink" | "nppc" | "nvjpeg"
    );
    if major <= 10 && same_as_cuda {
        // libcudart.so.10.1 / cudart64_101.dll: exactly that release.
        return Provider::Cuda {
            cuda: vec![ver.truncate(2)],
        };
    }
    if !from_table.is_empty() {
        let mut cuda = from_table;
        // The table starts at 11.4; 11.0-11.3 shipped the same 11.x names.
        if same_as_cuda && major == 11 {
            for m in 0..4 {
                let v = Version::from_parts(&[11, m]);
                if !cuda.contains(&v) {
                    cuda.push(v);
                }
            }
        }
        cuda.sort();
        return Provider::Cuda { cuda };
    }
    if same_as_cuda {
        return Provider::Cuda {
            cuda: vec![Version::from_parts(&[major])],
        };
    }
    Provider::Unknown
}

/// The files the loader is asked for, on `platform`, for a component of
/// these majors (the first major first): the reverse of [`identify`].
///
/// `component` is `cuda` (the driver), `nvidia-ml` (NVML), a toolkit
/// library (`cudart`, `cublasLt`, `cublas`), `cudnn`, or a library beside the
/// toolkit (`nccl`, `nvinfer`). On Linux that is the soname
/// (`libcudart.so.12`; CUDA 11's runtime kept `libcudart.so.11.0`); on
/// Windows the versioned DLL (`cudart64_12.dll`, `cudart64_110.dll`,
/// `cudnn64_9.dll`, `nvinfer_10.dll`; the driver is `nvcuda.dll`, NVML
/// `nvml.dll`). A library with no build for the platform (NCCL on Windows)
/// has no names.
pub fn file_names(component: &str, majors: &[u32], platform: Platform) -> Vec<String> {
    let windows = platform == Platform::WindowsX86_64;
    match (component, windows) {
        ("cuda", false) => vec!["libcuda.so.1".into()],
        ("cuda", true) => vec!["nvcuda.dll".into()],
        ("nvidia-ml", false) => vec!["libnvidia-ml.so.1".into()],
        ("nvidia-ml", true) => vec!["nvml.dll".into()],
        ("nccl", false) => vec!["libnccl.so.2".into()],
        ("nccl", true) => Vec::new(),
        _ => majors
            .iter()
            .map(|&m| match (component, windows) {
                ("cudart", false) if m == 11 => "libcudart.so.11.0".into(),
                (c, false) => format!("lib{c}.so.{m}"),
                // TensorRT 8 named its DLL without a version.
                ("nvinfer", true) if m < 10 => "nvinfer.dll".into(),
                ("nvinfer", true) => format!("nvinfer_{m}.dll"),
                ("cudart", true) if m == 11 => "cudart64_110.dll".into(),
                (c, true) => format!("{c}64_{m}.dll"),
            })
            .collect(),
    }
}

impl LibraryId {
    /// A stack spec that provides this library: the newest CUDA release that
    /// ships it (`11.8` for `libcudart.so.11.0`), or a cuDNN major.
    pub fn describe_provider(&self) -> Msg {
        Msg::verbatim(match &self.provider {
            Provider::Cuda { cuda } => match (cuda.first(), cuda.last()) {
                (Some(a), Some(b)) if a != b => format!("CUDA {a}–{b}"),
                (Some(a), _) => format!("CUDA {a}"),
                _ => "CUDA".into(),
            },
            Provider::Cudnn { major } => format!("cuDNN {major}.x"),
            Provider::Driver => return msg!("ui-provider-driver"),
            Provider::VisualCppRuntime => return msg!("ui-provider-vc-runtime"),
            Provider::Library { library, major } => format!("{} {major}.x", library.title()),
            Provider::Unknown => return msg!("ui-provider-unknown"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda_of(file: &str) -> Vec<String> {
        match identify(file).unwrap().provider {
            Provider::Cuda { cuda } => cuda.iter().map(|v| v.to_string()).collect(),
            p => panic!("{file}: {p:?}"),
        }
    }

    #[test]
    fn sonames_and_dlls() {
        let c = cuda_of("libcudart.so.11.0");
        assert_eq!(c.first().unwrap(), "11.0");
        assert_eq!(c.last().unwrap(), "11.8");
        assert_eq!(cuda_of("'libcudart.so.12'").last().unwrap(), "12.9");
        assert_eq!(cuda_of("libcudart.so.10.1"), vec!["10.1"]);
        assert_eq!(cuda_of("cudart64_110.dll").last().unwrap(), "11.8");
        assert_eq!(cuda_of("cudart64_101.dll"), vec!["10.1"]);
        assert_eq!(cuda_of("libcufft.so.10").last().unwrap(), "11.8");
        assert_eq!(cuda_of("libcufft.so.11").first().unwrap(), "12.0");
        assert_eq!(cuda_of("libcusparse.so.12").first().unwrap(), "12.0");
        assert_eq!(cuda_of("libcublasLt.so.13"), vec!["13.0"]);
        assert_eq!(cuda_of("cublas64_11.dll").last().unwrap(), "11.8");
        let d = identify("libcudnn_cnn_infer.so.8").unwrap();
        assert_eq!(d.provider, Provider::Cudnn { major: 8 });
        assert_eq!(d.component, "cudnn_cnn_infer");
        assert_eq!(
            identify("cudnn64_8.dll").unwrap().provider,
            Provider::Cudnn { major: 8 }
        );
        assert_eq!(identify("libcuda.so.1").unwrap().provider, Provider::Driver);
        let trt = |major| Provider::Library {
            library: Library::Tensorrt,
            major,
        };
        assert_eq!(identify("libnvinfer.so.7").unwrap().provider, trt(7));
        assert_eq!(identify("libnvinfer_plugin.so.8").unwrap().provider, trt(8));
        assert_eq!(identify("nvinfer_10.dll").unwrap().provider, trt(10));
        assert_eq!(
            identify("libnccl.so.2").unwrap().provider,
            Provider::Library {
                library: Library::Nccl,
                major: 2
            }
        );
        assert_eq!(
            identify("libcutensor.so.2").unwrap().describe_provider(),
            "cuTENSOR 2.x"
        );
        assert!(identify("libfoo").is_none());
        assert!(identify("kernel32.dll").is_none());
        assert!(identify("libcudart.so.x").is_none());
    }

    /// The DLLs TensorFlow's Windows builds ask for, and the Windows-only names.
    #[test]
    fn windows_dlls() {
        for dll in [
            "cudart64_110.dll",
            "cublas64_11.dll",
            "cublasLt64_11.dll",
            "nvrtc64_112_0.dll",
            "cufft64_10.dll",
            "cusparse64_11.dll",
        ] {
            let c = cuda_of(dll);
            assert!(c.iter().all(|v| v.starts_with("11.")), "{dll}: {c:?}");
            assert_eq!(c.last().unwrap(), "11.8", "{dll}");
        }
        // cuSOLVER 11 spans CUDA 11 and 12, cuRAND 10 CUDA 11 to 13.
        assert!(cuda_of("cusolver64_11.dll").contains(&"12.4".to_string()));
        assert!(cuda_of("curand64_10.dll").contains(&"12.4".to_string()));
        // Named like the release across 11.x: 11.0-11.3 too (the table starts at 11.4).
        assert!(cuda_of("cublas64_11.dll").contains(&"11.2".to_string()));
        assert_eq!(cuda_of("cudart64_100.dll"), vec!["10.0"]);
        assert_eq!(cuda_of("cufft64_100.dll"), vec!["10.0"]);
        assert_eq!(cuda_of("cudart64_90.dll"), vec!["9.0"]);
        assert_eq!(cuda_of("cudart64_12.dll").first().unwrap(), "12.0");
        assert_eq!(
            cuda_of(r"C:\CUDA\v11.2\bin\CUDART64_110.DLL")
                .last()
                .unwrap(),
            "11.8"
        );
        let sub = identify("cudnn_ops_infer64_8.dll").unwrap();
        assert_eq!(
            (sub.component.as_str(), &sub.provider),
            ("cudnn_ops_infer", &Provider::Cudnn { major: 8 })
        );
        assert_eq!(
            identify("cudnn64_7.dll").unwrap().provider,
            Provider::Cudnn { major: 7 }
        );
        assert_eq!(identify("nvcuda.dll").unwrap().provider, Provider::Driver);
        for vc in [
            "MSVCP140.dll",
            "msvcp140_1.dll",
            "VCRUNTIME140.dll",
            "vcruntime140_1.dll",
            "msvcr120.dll",
        ] {
            let id = identify(vc).unwrap_or_else(|| panic!("{vc}"));
            assert_eq!(id.provider, Provider::VisualCppRuntime, "{vc}");
            assert_eq!(id.describe_provider(), "the Microsoft Visual C++ runtime");
        }
        assert!(identify("msvcp.dll").is_none());
    }

    /// Every name `file_names` gives is one `identify` reads back as the
    /// same component and major, on both platforms.
    #[test]
    fn file_names_are_what_identify_reads() {
        let linux = Platform::LinuxX86_64;
        let win = Platform::WindowsX86_64;
        assert_eq!(
            file_names("cudart", &[13, 12, 11], linux),
            ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
        );
        assert_eq!(
            file_names("cudart", &[13, 12, 11], win),
            ["cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"]
        );
        assert_eq!(file_names("cublasLt", &[11], win), ["cublasLt64_11.dll"]);
        assert_eq!(
            file_names("cudnn", &[9, 8], win),
            ["cudnn64_9.dll", "cudnn64_8.dll"]
        );
        assert_eq!(file_names("cuda", &[], win), ["nvcuda.dll"]);
        assert_eq!(file_names("nvidia-ml", &[], linux), ["libnvidia-ml.so.1"]);
        assert_eq!(file_names("nvinfer", &[10], win), ["nvinfer_10.dll"]);
        assert_eq!(file_names("nvinfer", &[8], win), ["nvinfer.dll"]);
        assert_eq!(file_names("nvinfer", &[10], linux), ["libnvinfer.so.10"]);
        assert!(file_names("nccl", &[2], win).is_empty());
        for platform in [linux, win] {
            for (c, m) in [("cudart", 12), ("cudart", 11), ("cublas", 12), ("cudnn", 8)] {
                for f in file_names(c, &[m], platform) {
                    let id = identify(&f).unwrap();
                    assert_eq!(id.component, c, "{f}");
                    let major: u32 = match id.soversion.as_str() {
                        "110" => 11,
                        v => v.split('.').next().unwrap().parse().unwrap(),
                    };
                    assert_eq!(major, m, "{f}");
                }
            }
        }
    }
}
