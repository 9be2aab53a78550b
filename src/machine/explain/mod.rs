//! `cudaenv explain`: error text from CUDA programs → what it means, which
//! CUDA or cuDNN provides the missing piece, whether an installed version has
//! it, and the command that fixes it.
//!
//! The knowledge is a list of rules, each recognising one family of messages
//! from the usual troubleshooting guides (TensorFlow's dlopen warnings,
//! PyTorch's RuntimeErrors, CUDA runtime and driver error names, nvcc's
//! complaints). A rule reads the values in the message (library names,
//! versions, `sm_XX`) and answers against the installed versions, the active
//! one, the machine (driver, GPUs) and the frameworks in the Python
//! environment — all handed in as plain data (`Input`), so `explain` is a pure
//! function and tested as one.
//!
//! Each answer is a `Finding` (`machine::finding`), built by the rule itself:
//! its code is the rule's id, its message what the text means, its details
//! what matched, what provides the missing piece and whether an installed
//! version has it (`answer` and `Answer`), its fix lines the commands.
//!
//! The rules stand in modules by what the message is about: `libraries`
//! (a library not found), `windows` (DLLs, Python's and ctypes' searches),
//! `frameworks` (TensorFlow's, PyTorch's and cuDNN's version complaints),
//! `gpu` (the driver, the GPU's architecture), `nvcc` (the host compiler,
//! `-arch`) and `fixed` (answers of fixed text).

use crate::i18n::Msg;
use crate::machine::compat::{self, ComputeCapability, Framework, FrameworkReq, Machine};
use crate::machine::doctor::python::InstalledFramework;
use crate::machine::finding::{Field, Finding, Layout, Level, Shape, Value};
use crate::msg;
use crate::spec::{Libraries, Version};

mod fixed;
mod frameworks;
mod gpu;
mod libraries;
mod nvcc;
mod windows;

use fixed::simple_rules;
use frameworks::{cudnn_version_mismatch, tensorflow_runtime_stub, torch_extension_mismatch};
use gpu::{driver_insufficient, no_kernel_image};
use libraries::missing_library;
use nvcc::{host_compiler, nvcc_arch};
use windows::{ctypes_dll_search, dll_load_failed};

/// An installed version, as far as explain cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    pub name: String,
    pub cuda: Option<Version>,
    pub cudnn: Option<Version>,
    /// NCCL, TensorRT, … it carries.
    pub libs: Libraries,
}

#[derive(Debug, Clone, Default)]
pub struct Input {
    pub text: String,
    pub installed: Vec<Stack>,
    pub active: Option<Stack>,
    pub machine: Machine,
    pub frameworks: Vec<InstalledFramework>,
}

/// How `explain --json` writes an answer (docs: `id`, `matched`, `meaning`,
/// `provided_by`, `installed`, `fix`).
pub const JSON: Shape = Shape(&[
    Field::Code("id"),
    Field::Detail("matched"),
    Field::Message("meaning"),
    Field::Detail("provided_by"),
    Field::Detail("installed"),
    Field::Fixes("fix"),
]);

/// How the text shows an answer: `[id] matched`, then the labelled lines.
pub fn layout() -> Layout {
    Layout::Labelled {
        heading: "matched",
        message: msg!("explain-label-meaning"),
        labels: vec![
            msg!("explain-label-provided-by"),
            msg!("explain-label-installed"),
        ],
    }
}

/// An answer of the rule `id` (`missing-library`, `driver-insufficient`, …)
/// to the part of the text that `matched`: what it means; the rule adds
/// what provides the missing piece, whether an installed version has it,
/// and the fix (`Answer`).
fn answer(id: &'static str, matched: impl Into<String>, meaning: Msg) -> Finding {
    Finding::new(Level::Error, id, meaning).detail(
        "matched",
        None,
        Value::Text(Msg::verbatim(matched.into())),
    )
}

/// What an answer says beside its meaning, in the order the text shows it:
/// which CUDA / cuDNN / driver provides what is missing, then whether an
/// installed version provides it (and which one is active).
trait Answer {
    fn set_provided_by(&mut self, m: Msg);
    fn set_installed(&mut self, m: Msg);
    fn provided_by(self, m: Option<Msg>) -> Self;
    fn installed(self, m: Option<Msg>) -> Self;
    fn fixes(self, fix: Vec<Msg>) -> Self;
}

impl Answer for Finding {
    fn set_provided_by(&mut self, m: Msg) {
        let label = Some(msg!("explain-label-provided-by"));
        self.set("provided_by", label, Value::Text(m));
    }

    fn set_installed(&mut self, m: Msg) {
        let label = Some(msg!("explain-label-installed"));
        self.set("installed", label, Value::Text(m));
    }

    fn provided_by(mut self, m: Option<Msg>) -> Finding {
        if let Some(m) = m {
            self.set_provided_by(m);
        }
        self
    }

    fn installed(mut self, m: Option<Msg>) -> Finding {
        if let Some(m) = m {
            self.set_installed(m);
        }
        self
    }

    fn fixes(mut self, fix: Vec<Msg>) -> Finding {
        self.fix = fix;
        self
    }
}

fn has(text: &str, needles: &[&str]) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    needles
        .iter()
        .find(|n| lower.contains(&n.to_ascii_lowercase()))
        .map(|n| n.to_string())
}

/// Words of the text with quoting and punctuation trimmed.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ',' | ';' | '(' | ')' | '[' | ']')
    })
    .map(|w| w.trim_end_matches([':', '.', '!']))
    .filter(|w| !w.is_empty())
}

/// The version after `marker` in the text (`Loaded runtime CuDNN library: 8.0.5`).
fn version_after(text: &str, marker: &str) -> Option<Version> {
    let lower = text.to_ascii_lowercase();
    let i = lower.find(&marker.to_ascii_lowercase())?;
    let rest = &text[i + marker.len()..];
    let token = rest
        .trim_start_matches([' ', ':', '('])
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',' || c == ' '))
        .next()?;
    // PyTorch writes tuples: `(8, 9, 2)`.
    let cleaned: String = token
        .replace(", ", ".")
        .replace(',', ".")
        .trim()
        .trim_end_matches('.')
        .to_string();
    let cleaned = cleaned.split_whitespace().next()?.to_string();
    Version::parse_parts(&cleaned, 4).ok()
}

fn sm_words(text: &str) -> Vec<ComputeCapability> {
    let mut v: Vec<ComputeCapability> = words(text)
        .filter(|w| w.starts_with("sm_") || w.starts_with("compute_"))
        .filter_map(|w| w.parse().ok())
        .collect();
    v.dedup();
    v
}

fn describe(s: &Stack) -> String {
    s.name.clone()
}

impl Input {
    fn providers<'a>(&'a self, want: impl Fn(&Stack) -> bool + 'a) -> Vec<&'a Stack> {
        self.installed.iter().filter(|s| want(s)).collect()
    }

    /// "yes: A, B (A is active)" / "no" text and the matching stack to switch to.
    fn installed_text(&self, found: &[&Stack]) -> (Msg, Option<String>) {
        if found.is_empty() {
            return (msg!("explain-installed-none"), None);
        }
        let names: Vec<String> = found.iter().map(|s| describe(s)).collect();
        let active = self.active.as_ref().map(|a| a.name.clone());
        let active_has = active.as_ref().is_some_and(|a| names.contains(a));
        let names = names.join(", ");
        let text = match (&active, active_has) {
            (Some(a), true) => msg!(
                "explain-installed-yes-active-has-it",
                names = names,
                active = a
            ),
            (Some(a), false) => msg!(
                "explain-installed-yes-active-other",
                names = names,
                active = a
            ),
            (None, _) => msg!("explain-installed-yes-none-active", names = names),
        };
        let best = found.last().map(|s| s.name.clone());
        (text, if active_has { None } else { best })
    }

    fn framework_choice(
        &self,
        pred: impl Fn(&compat::StackChoice) -> bool,
    ) -> Option<(String, compat::StackChoice)> {
        self.frameworks
            .iter()
            .filter(|f| matches!(f.framework, Framework::Torch | Framework::Tensorflow))
            .find_map(|f| {
                let public = f.version.split('+').next()?;
                let mm: Vec<&str> = public.split('.').take(2).collect();
                let arg = format!("{}=={}", f.framework, mm.join("."));
                let req: FrameworkReq = arg.parse().ok()?;
                let c = compat::stack_for(&req, Some(&self.machine)).ok()?;
                pred(&c).then_some((arg, c))
            })
    }
}

/// Every answer that applies to the text (most specific first).
pub fn explain(input: &Input) -> Vec<Finding> {
    // Logs wrap and pad messages; match on single-spaced text.
    let normalized = input.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = normalized.as_str();
    let mut out: Vec<Finding> = Vec::new();
    cudnn_version_mismatch(input, t, &mut out);
    driver_insufficient(input, t, &mut out);
    no_kernel_image(input, t, &mut out);
    nvcc_arch(input, t, &mut out);
    torch_extension_mismatch(input, t, &mut out);
    dll_load_failed(t, &mut out);
    ctypes_dll_search(t, &mut out);
    missing_library(input, t, &mut out);
    tensorflow_runtime_stub(input, t, &mut out);
    host_compiler(input, t, &mut out);
    simple_rules(input, t, &mut out);
    out
}

/// For callers building `Input` from the store.
pub fn stack_of(
    name: &str,
    cuda: Option<&Version>,
    cudnn: Option<&Version>,
    libs: Libraries,
) -> Stack {
    Stack {
        name: name.into(),
        cuda: cuda.cloned(),
        cudnn: cudnn.cloned(),
        libs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::compat::{DriverOs, DriverVersion};

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }
    fn stack(name: &str, cuda: &str, cudnn: Option<&str>) -> Stack {
        Stack {
            name: name.into(),
            cuda: Some(v(cuda)),
            cudnn: cudnn.map(v),
            libs: Libraries::default(),
        }
    }
    fn input(text: &str) -> Input {
        Input {
            text: text.into(),
            installed: vec![stack("12.4.1+cudnn9.1.0.70", "12.4.1", Some("9.1.0.70"))],
            active: Some(stack("12.4.1+cudnn9.1.0.70", "12.4.1", Some("9.1.0.70"))),
            machine: Machine {
                driver: DriverVersion::parse("520.61.05"),
                driver_os: DriverOs::Linux,
                gpus: vec![ComputeCapability::new(8, 6)],
                ..Default::default()
            },
            frameworks: vec![],
        }
    }
    fn one(i: &Input, id: &str) -> Finding {
        let all = explain(i);
        all.iter()
            .find(|e| e.code == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id} for {:?}: {all:#?}", i.text))
    }
    /// An answer's detail `key`, in English.
    fn detail(e: &Finding, key: &str) -> Option<String> {
        match e.get(key)? {
            Value::Text(m) => Some(m.en()),
            Value::Number(n) => Some(n.to_string()),
        }
    }
    fn text(e: &Finding) -> String {
        format!(
            "{} | {} | {} | {}",
            e.message,
            detail(e, "provided_by").unwrap_or_default(),
            detail(e, "installed").unwrap_or_default(),
            e.fix.iter().map(Msg::en).collect::<Vec<_>>().join(" ; ")
        )
    }

    /// The messages from the guides, each with what the answer must say.
    #[test]
    fn the_guides_messages() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "2021-01-01 W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
                "missing-library",
                &[
                    "CUDA 11.0–11.8",
                    "no installed version",
                    "cudaenv install 11.8",
                ],
            ),
            (
                "Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found",
                "missing-library",
                &[
                    "CUDA 11.0–11.8",
                    "Windows DLL",
                    "System32, then each directory on PATH",
                    "cudaenv install 11.2+cudnn8.1 && cudaenv local 11.2+cudnn8.1",
                    "TensorFlow 2.5–2.10 was tested with on native Windows",
                    r#"cudaenv link 11.2 "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2" && cudaenv local 11.2"#,
                    "cudaenv exec",
                    "cudaenv init pwsh",
                ],
            ),
            (
                "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory",
                "missing-library",
                &[
                    "cuDNN 8.x",
                    "sub-libraries",
                    "cudaenv install 12.4+cudnn8.9",
                ],
            ),
            (
                "CUDA driver version is insufficient for CUDA runtime version",
                "driver-insufficient",
                &[
                    "driver ≥ 550.54.15",
                    "runs CUDA ≤ 11.8",
                    "≥ 525.60.13",
                    "no installed version fits",
                ],
            ),
            (
                "E tensorflow/stream_executor/cuda/cuda_dnn.cc:361] Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
                "cudnn-version-mismatch",
                &[
                    "cuDNN 8.1.0",
                    "loaded cuDNN 8.0.5",
                    "cuDNN ≥ 8.1, < 9",
                    "cudaenv install 11.2+cudnn8.1",
                ],
            ),
            (
                "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize ... CUDNN_STATUS_INTERNAL_ERROR",
                "cudnn-internal-error",
                &["TF_FORCE_GPU_ALLOW_GROWTH"],
            ),
            (
                "RuntimeError: CUDA error: no kernel image is available for execution on the device",
                "no-kernel-image",
                &["sm_86: CUDA ≥ 11.1"],
            ),
            (
                "NVIDIA H100 PCIe with CUDA capability sm_90 is not compatible with the current PyTorch installation. The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.",
                "no-kernel-image",
                &["sm_90: CUDA ≥ 11.8", "cu118"],
            ),
            (
                "RuntimeError: No CUDA GPUs are available / cudaErrorNoDevice: no CUDA-capable device is detected",
                "no-device",
                &["CUDA_VISIBLE_DEVICES"],
            ),
            (
                "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
                "driver-insufficient",
                &["runs CUDA ≤ 11.8"],
            ),
            (
                "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
                "ptx-toolchain",
                &["minor version compatibility"],
            ),
            (
                "cudaErrorCompatNotSupportedOnDevice: forward compatibility was attempted on non supported HW",
                "compat-not-supported",
                &["compat"],
            ),
            (
                "Failed to initialize NVML: Driver/library version mismatch",
                "driver-library-mismatch",
                &["reboot"],
            ),
            (
                "failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error",
                "cuinit-unknown",
                &["nvidia-modprobe"],
            ),
            (
                "nvcc fatal   : Unsupported gpu architecture 'compute_90'",
                "nvcc-arch",
                &["CUDA ≥ 11.8", "yes: 12.4.1+cudnn9.1.0.70"],
            ),
            (
                "The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.1). Please make sure to use the same CUDA versions.",
                "torch-extension-cuda",
                &[
                    "CUDA 11.8",
                    "CUDA 12.1",
                    "cudaenv install 12.1 --profile devel",
                ],
            ),
            (
                "#error -- unsupported GNU version! gcc versions later than 12 are not supported!",
                "gcc-unsupported",
                &[
                    "GCC up to 12 (CUDA 12.0, 12.1, 12.2, 12.3)",
                    "CUDAENV_HOST_COMPILER=auto",
                    "apt install g++-12",
                    "GCC 13: CUDA 12.4+",
                    "GCC 16: CUDA 13.4+",
                ],
            ),
            (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
                "out-of-memory",
                &["batch size"],
            ),
            (
                "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
                "cublas-not-initialized",
                &["doctor"],
            ),
            (
                "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly",
                "tensorflow-no-gpu",
                &["WSL2"],
            ),
            (
                "AssertionError: Torch not compiled with CUDA enabled",
                "torch-cpu-build",
                &["CPU-only"],
            ),
            (
                "ImportError: libcudnn_ops_infer.so.8: undefined symbol: _ZN5cudnn3cnn5infer22queryClusterPropertiesERPhS3_, version libcudnn_cnn_infer.so.8",
                "undefined-symbol",
                &["two CUDA or cuDNN copies"],
            ),
            (
                "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime version (8, 5, 0).",
                "cudnn-version-mismatch",
                &["built against cuDNN 8.9.2", "loaded cuDNN 8.5.0"],
            ),
            (
                "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file",
                "missing-library",
                &["TensorRT", "still uses the GPU"],
            ),
            (
                "Could not load dynamic library 'libnvinfer.so.8'; dlerror: libnvinfer.so.8: cannot open shared object file",
                "missing-library",
                &[
                    "TensorRT 8",
                    "still uses the GPU",
                    "tensorrt==8.6.*",
                    "cudaenv link",
                ],
            ),
            (
                "libcuda.so.1: cannot open shared object file: No such file or directory",
                "missing-library",
                &["NVIDIA driver's own library"],
            ),
            (
                "W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer_plugin.so.8'; dlerror: libnvinfer_plugin.so.8: cannot open shared object file",
                "missing-library",
                &["TensorRT 8", "start at TensorRT 10", "harmless"],
            ),
            (
                "error -- unsupported clang version! clang version must be less than 15 and greater than 3.2 .",
                "gcc-unsupported",
                &["Clang up to 14 (CUDA 11.8, 12.0)", "Clang 15: CUDA 12.1+"],
            ),
            (
                "NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
                "nccl-net-plugin",
                &["not an error"],
            ),
            (
                "ImportError: /usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
                "nccl-undefined-symbol",
                &["newer NCCL"],
            ),
            (
                "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda error",
                "nccl-error",
                &["NCCL_DEBUG=INFO"],
            ),
            (
                "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
                "missing-library",
                &["NCCL 2.x", "cudaenv install 12.4+nccl2"],
            ),
            (
                "ImportError: libnvinfer.so.10: cannot open shared object file: No such file or directory",
                "missing-library",
                &["TensorRT 10.x", "cudaenv install 12.4+trt10"],
            ),
            (
                "Could not load dynamic library 'libcublas.so.12'",
                "missing-library",
                &["12.4.1+cudnn9.1.0.70 is active", "cudaenv exec"],
            ),
            (
                "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc] DNN library is not found.",
                "dnn-not-found",
                &["cuDNN"],
            ),
            (
                "nvcc fatal   : Unsupported gpu architecture 'compute_35'",
                "nvcc-arch",
                &["CUDA before 12.0"],
            ),
        ];
        for (msg, id, needles) in cases {
            let e = one(&input(msg), id);
            let t = text(&e);
            for n in *needles {
                assert!(t.contains(n), "{id}: {t:?} lacks {n:?}");
            }
            assert!(!e.fix.is_empty(), "{id}: no fix");
        }
    }

    /// The Windows guides' messages: the Windows search order and fix, never
    /// LD_LIBRARY_PATH; what is not about CUDA says so.
    #[test]
    fn the_windows_guides_messages() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found",
                "missing-library",
                &[
                    "cuDNN 8",
                    "a download of its own",
                    "cudaenv install 11.2+cudnn8.1",
                    "TensorFlow 2.5–2.10",
                ],
            ),
            (
                "Could not load dynamic library 'cublas64_11.dll'; dlerror: cublas64_11.dll not found",
                "missing-library",
                &["CUDA 11.0–11.8", "cudaenv install 11.2+cudnn8.1"],
            ),
            (
                "Could not load dynamic library 'cusolver64_11.dll'; dlerror: cusolver64_11.dll not found",
                "missing-library",
                // cuSOLVER 11 is in CUDA 12 too: the active 12.4 has it.
                &[
                    "CUDA 11.4–12.9",
                    "12.4.1+cudnn9.1.0.70 is active",
                    "cudaenv exec",
                ],
            ),
            (
                "Could not load dynamic library 'cufft64_10.dll'; dlerror: cufft64_10.dll not found",
                "missing-library",
                &["cudaenv install 11.2+cudnn8.1"],
            ),
            (
                "Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found",
                "missing-library",
                &[
                    "CUDA 10.1",
                    "cudaenv install 10.1+cudnn7.6",
                    "TensorFlow 2.1–2.3",
                ],
            ),
            (
                "Could not load dynamic library 'cudnn_cnn_infer64_8.dll'",
                "missing-library",
                &[
                    "sub-libraries",
                    "cudnn64_8.dll itself",
                    "lists every cuDNN copy",
                ],
            ),
            (
                "ImportError: Could not find 'nvcuda.dll'. TensorFlow requires that this DLL be installed in a directory that is named in your %PATH% environment variable.",
                "missing-library",
                &["NVIDIA driver's own DLL", "System32", "nvidia-smi"],
            ),
            (
                "ImportError: Could not find the DLL(s) 'msvcp140_1.dll'. TensorFlow requires that these DLLs be installed in a directory that is named in your %PATH% environment variable. You may install these DLLs by downloading \"Microsoft C++ Redistributable for Visual Studio 2015, 2017 and 2019\" for your platform from this URL: https://support.microsoft.com/help/2977003/the-latest-supported-visual-c-downloads",
                "vc-runtime-missing",
                &[
                    "msvcp140_1.dll: Microsoft's Visual C++ runtime",
                    "not about CUDA",
                    "vc_redist.x64.exe",
                    "cudaenv doctor",
                ],
            ),
            (
                "The code execution cannot proceed because VCRUNTIME140_1.dll was not found. Reinstalling the program may fix this problem.",
                "vc-runtime-missing",
                &["VCRUNTIME140_1.dll", "Redistributable"],
            ),
            (
                "ImportError: DLL load failed while importing _pywrap_tensorflow_internal: The specified module could not be found.",
                "tensorflow-import-failed",
                &[
                    "_pywrap_tensorflow_internal",
                    "not about CUDA",
                    "AVX",
                    "vc_redist.x64.exe",
                    "must print 64",
                ],
            ),
            (
                "ImportError: DLL load failed while importing cuda: The specified module could not be found.",
                "dll-load-failed",
                &[
                    "Python 3.8",
                    "PATH is not searched",
                    "os.add_dll_directory(os.path.join(os.environ[\"CUDA_PATH\"], \"bin\"))",
                ],
            ),
            (
                "FileNotFoundError: Could not find module 'C:\\tools\\cudart64_12.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
                "ctypes-dll-search",
                &[
                    "does not search PATH",
                    "winmode=0",
                    "\"bin\", \"cudart64_12.dll\"",
                ],
            ),
        ];
        for (msg, id, needles) in cases {
            let e = one(&input(msg), id);
            let t = text(&e);
            for n in *needles {
                assert!(t.contains(n), "{id}: {t:?} lacks {n:?}");
            }
            for linux in ["LD_LIBRARY_PATH", "ldconfig", "init bash"] {
                assert!(!t.contains(linux), "{id}: {t:?} names {linux}");
            }
            assert!(!e.fix.is_empty(), "{id}: no fix");
        }
        // One explanation for the runtime's DLLs, none claiming they are CUDA's.
        let all = explain(&input(
            "Could not find the DLL(s) 'msvcp140.dll or msvcp140_1.dll'",
        ));
        assert_eq!(all.len(), 1, "{all:#?}");
        assert!(
            detail(&all[0], "matched")
                .unwrap()
                .ends_with("msvcp140.dll, msvcp140_1.dll"),
            "{all:#?}"
        );
        // ctypes' message also says which stack has the DLL.
        let all = explain(&input(
            "FileNotFoundError: Could not find module 'cudart64_12.dll' (or one of its dependencies).",
        ));
        let ids: Vec<&str> = all.iter().map(|e| e.code.as_ref()).collect();
        assert_eq!(ids, ["ctypes-dll-search", "missing-library"]);
    }

    /// An installed stack with the DLL: switch to it, then run activated.
    #[test]
    fn a_windows_dll_an_installed_stack_has() {
        let mut i = input("Could not load dynamic library 'cudart64_110.dll'");
        i.installed
            .push(stack("11.2.2+cudnn8.1.1.33", "11.2.2", Some("8.1.1.33")));
        let e = one(&i, "missing-library");
        assert_eq!(e.fix[0], "cudaenv local 11.2.2+cudnn8.1.1.33");
        assert!(e.fix[1].en().contains("cudaenv exec"), "{e:?}");
        // The active stack has it: only the environment is missing.
        i.active = i.installed.last().cloned();
        let e = one(&i, "missing-library");
        assert!(detail(&e, "installed").unwrap().contains("is active"));
        assert_eq!(e.fix.len(), 1, "{e:?}");
        assert!(e.fix[0].en().contains("cudaenv init pwsh"), "{e:?}");
        // CUDA 12's DLLs: no TensorFlow Windows build; the same choice as the soname's.
        let mut i = input("Could not load dynamic library 'cublas64_12.dll'");
        i.installed.clear();
        let e = one(&i, "missing-library");
        assert!(e.fix[0].en().starts_with("cudaenv install 12."), "{e:?}");
    }

    #[test]
    fn uses_what_is_installed_and_the_frameworks() {
        let mut i = input("Could not load dynamic library 'libcudart.so.11.0'");
        i.installed
            .push(stack("11.2.2+cudnn8.1.1.33", "11.2.2", Some("8.1.1.33")));
        let e = one(&i, "missing-library");
        assert!(
            detail(&e, "installed")
                .unwrap()
                .starts_with("yes: 11.2.2+cudnn8.1.1.33"),
            "{e:?}"
        );
        assert_eq!(e.fix, vec!["cudaenv local 11.2.2+cudnn8.1.1.33"]);

        let mut i = input("Could not load dynamic library 'libcudnn.so.8'");
        i.frameworks.push(InstalledFramework {
            framework: Framework::Tensorflow,
            package: "tensorflow".into(),
            version: "2.10.1".into(),
            cuda: Some("11.2".into()),
            cudnn: Some("8".into()),
            bundles_cuda: false,
            kernels: Vec::new(),
        });
        let e = one(&i, "missing-library");
        assert!(e.fix[0].en().contains("--for tensorflow==2.10"), "{e:?}");
    }

    /// TensorFlow 2.21's own lines with no stack active, as printed on a machine
    /// with driver 580 (docs/frameworks.md): the stub's "no drivers" is the CUDA
    /// runtime missing, and the stack it was tested with is named when TensorFlow
    /// is in the environment.
    #[test]
    fn tensorflows_cuda_stub_is_the_runtime_missing_not_the_driver() {
        for line in [
            "I0000 00:00:1796190644.625155    2058 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.",
            "E0000 00:00:1796190652.974090    2058 cuda_executor.cc:1737] INTERNAL: CUDA Runtime error: Failed call to cudaGetRuntimeVersion: Error loading CUDA libraries. GPU will not be used.: Error loading CUDA libraries. GPU will not be used.",
        ] {
            let mut i = input(line);
            i.active = None;
            let e = one(&i, "tensorflow-cuda-runtime");
            let t = text(&e);
            assert!(t.contains("the driver is there (520.61.05)"), "{t}");
            assert!(t.contains("libcudart.so.12"), "{t}");
            assert!(t.contains("TF_CPP_VMODULE=dso_loader=1"), "{t}");
            assert!(e.fix[0].en().contains("--for tensorflow==VERSION"), "{t}");

            i.frameworks.push(InstalledFramework {
                framework: Framework::Tensorflow,
                package: "tensorflow".into(),
                version: "2.21.0".into(),
                cuda: Some("12.5.1".into()),
                cudnn: Some("9".into()),
                bundles_cuda: false,
                kernels: Vec::new(),
            });
            i.machine.driver = DriverVersion::parse("580.159.04");
            let e = one(&i, "tensorflow-cuda-runtime");
            assert_eq!(
                detail(&e, "provided_by").as_deref(),
                Some("tensorflow==2.21 was tested with 12.5+cudnn9.3")
            );
            assert_eq!(
                e.fix[0].en(),
                "cudaenv install --for tensorflow==2.21 && cudaenv local --for tensorflow==2.21"
            );
            i.installed
                .push(stack("12.5.1+cudnn9.3.0.75", "12.5.1", Some("9.3.0.75")));
            let e = one(&i, "tensorflow-cuda-runtime");
            assert_eq!(e.fix[0].en(), "cudaenv local 12.5.1+cudnn9.3.0.75");
        }
    }

    /// A cuDNN newer than the cuDNN table: the CUDA offered with it is the
    /// family's rule, and the fix says so.
    #[test]
    fn a_cudnn_newer_than_the_table_is_paired_by_its_family_rule() {
        let mut i = input(
            "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.40.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
        );
        i.active = Some(stack("11.8.0+cudnn9.1.0.70", "11.8.0", Some("9.1.0.70")));
        let e = one(&i, "cudnn-version-mismatch");
        assert_eq!(
            e.fix[0],
            "cudaenv install 13+cudnn9.40   (CUDA 13: the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28 — or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)",
            "{e:?}"
        );
        // A cuDNN the table has (from PyPI's cuDNN projects): no rule to explain.
        let mut i = input(
            "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.28.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
        );
        i.active = Some(stack("11.8.0+cudnn9.1.0.70", "11.8.0", Some("9.1.0.70")));
        let e = one(&i, "cudnn-version-mismatch");
        assert!(
            e.fix[0]
                .en()
                .starts_with("cudaenv install 13+cudnn9.28   (or the CUDA"),
            "{e:?}"
        );
    }

    #[test]
    fn a_driver_that_fits_points_at_stray_runtimes() {
        let mut i = input("CUDA driver version is insufficient for CUDA runtime version");
        i.machine.driver = DriverVersion::parse("580.65.06");
        let e = one(&i, "driver-insufficient");
        assert!(
            e.message.en().contains("does run the active CUDA 12.4.1"),
            "{e:?}"
        );
        assert!(e.fix[0].en().contains("doctor"));
    }

    #[test]
    fn unknown_text_explains_nothing() {
        assert!(explain(&input("segmentation fault in my own code")).is_empty());
    }
}
