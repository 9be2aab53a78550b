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

use serde::Serialize;

use crate::machine::compat::libraries::{self, LibraryId, Provider};
use crate::machine::compat::{self, ComputeCapability, Framework, FrameworkReq, Machine, driver};
use crate::machine::doctor::python::InstalledFramework;
use crate::spec::{Libraries, Library, Version};

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// Stable identifier of the rule (`missing-library`, `driver-insufficient`, …).
    pub id: &'static str,
    /// The part of the text that matched.
    pub matched: String,
    pub meaning: String,
    /// Which CUDA / cuDNN / driver provides what is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provided_by: Option<String>,
    /// Whether an installed version provides it (names), and which one is active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
    pub fix: Vec<String>,
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
    fn installed_text(&self, found: &[&Stack]) -> (String, Option<String>) {
        if found.is_empty() {
            return ("no installed version provides it".into(), None);
        }
        let names: Vec<String> = found.iter().map(|s| describe(s)).collect();
        let active = self.active.as_ref().map(|a| a.name.clone());
        let active_has = active.as_ref().is_some_and(|a| names.contains(a));
        let text = format!(
            "yes: {}{}",
            names.join(", "),
            match (&active, active_has) {
                (Some(a), true) => format!(
                    " ({a} is active: the library is there, so the program is not running with its environment)"
                ),
                (Some(a), false) => format!(" (the active version is {a})"),
                (None, _) => " (no version is active)".into(),
            }
        );
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

/// Every explanation that applies to the text (most specific first).
pub fn explain(input: &Input) -> Vec<Explanation> {
    // Logs wrap and pad messages; match on single-spaced text.
    let normalized = input.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = normalized.as_str();
    let mut out: Vec<Explanation> = Vec::new();
    cudnn_version_mismatch(input, t, &mut out);
    driver_insufficient(input, t, &mut out);
    no_kernel_image(input, t, &mut out);
    nvcc_arch(input, t, &mut out);
    torch_extension_mismatch(input, t, &mut out);
    missing_library(input, t, &mut out);
    host_compiler(input, t, &mut out);
    simple_rules(input, t, &mut out);
    out
}

/// nvcc's "unsupported GNU version! gcc versions later than N are not
/// supported!" (or clang's): which CUDA releases have that limit, the setting
/// that points nvcc at an older compiler, and the releases that accept newer
/// ones (`registry/compat/host_compiler.toml`).
fn host_compiler(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    use crate::activation::host_compiler as hc;
    let (family, marker) = if let Some(m) = has(t, &["gcc versions later than"]) {
        ("GCC", m)
    } else if let Some(m) = has(t, &["clang version must be less than"]) {
        ("Clang", m)
    } else {
        return;
    };
    let lower = t.to_ascii_lowercase();
    let Some(limit) = lower
        .find(&marker.to_ascii_lowercase())
        .map(|i| &t[i + marker.len()..])
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| {
            n.trim_matches(|c: char| !c.is_ascii_digit())
                .parse::<u32>()
                .ok()
        })
    else {
        return;
    };
    // Clang's message names the first refused major; GCC's the last accepted.
    let max = if family == "GCC" {
        limit
    } else {
        limit.saturating_sub(1)
    };
    let rows = &hc::table().release;
    let of = |l: &hc::Limits| {
        if family == "GCC" {
            l.gcc_max
        } else {
            l.clang_max
        }
    };
    let releases: Vec<String> = rows
        .iter()
        .filter(|l| of(l) == max)
        .map(|l| l.cuda.to_string())
        .collect();
    let newer: Vec<String> = rows
        .iter()
        .map(of)
        .filter(|m| *m > max)
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .filter_map(|m| {
            rows.iter()
                .find(|l| of(l) >= m)
                .map(|l| format!("{family} {m}: CUDA {}+", l.cuda))
        })
        .collect();
    let active = input
        .active
        .as_ref()
        .and_then(|a| a.cuda.as_ref())
        .map(|c| format!(" (the active version has CUDA {c})"))
        .unwrap_or_default();
    let compiler = if family == "GCC" {
        format!("g++-{max}")
    } else {
        format!("clang++-{max}")
    };
    let mut fix = vec![
        format!(
            "export {}=auto   # activation points nvcc at the newest installed g++ its CUDA accepts (NVCC_PREPEND_FLAGS=-ccbin …, NVCC_CCBIN, CUDAHOSTCXX)",
            crate::context::env_vars::CUDAENV_HOST_COMPILER
        ),
        format!(
            "or name one: export {}=/usr/bin/{compiler} (Debian/Ubuntu: apt install {}), or host-compiler in config.toml",
            crate::context::env_vars::CUDAENV_HOST_COMPILER,
            if family == "GCC" {
                format!("g++-{max}")
            } else {
                format!("clang-{max}")
            }
        ),
    ];
    if !newer.is_empty() {
        fix.push(format!(
            "or a CUDA release that accepts your compiler: {}",
            newer.join(", ")
        ));
    }
    out.push(Explanation {
        id: "gcc-unsupported",
        matched: marker,
        meaning: format!(
            "nvcc refuses the host compiler: this nvcc accepts {family} up to {max}{}{active}, and the compiler it found (g++ on PATH unless -ccbin names one) is newer",
            if releases.is_empty() { String::new() } else { format!(" (CUDA {})", releases.join(", ")) }
        ),
        provided_by: None,
        installed: None,
        fix,
    });
}

fn missing_library(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(
        t,
        &[
            "could not load",
            "cannot open shared object",
            "not found",
            "unable to load",
            "could not find",
            "no such file",
            "failed to load",
            "cannot load",
            "dlopen",
            "dlerror",
        ],
    ) else {
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    for lib in words(t).filter_map(libraries::identify) {
        if seen.contains(&lib.file) {
            continue;
        }
        seen.push(lib.file.clone());
        out.push(explain_library(input, &lib, &matched));
    }
}

fn cudnn_stack_for(input: &Input, major: u32) -> String {
    // Pair the cuDNN major with a CUDA it supports: the active CUDA if it can, else a common one.
    let newest_of_major = compat::data::cudnn()
        .release
        .iter()
        .filter(|r| r.cudnn.major() == major)
        .map(|r| r.cudnn.clone())
        .max();
    let cudnn = newest_of_major.unwrap_or_else(|| Version::from_parts(&[major]));
    let cuda = input
        .active
        .as_ref()
        .and_then(|a| a.cuda.clone())
        .filter(|c| compat::cudnn_supports(&cudnn, c) == Some(true))
        .map(|c| c.truncate(2))
        .unwrap_or_else(|| match major {
            8 => Version::from_parts(&[11, 8]),
            _ => Version::from_parts(&[12, 6]),
        });
    format!("{cuda}+cudnn{cudnn}")
}

fn explain_library(input: &Input, lib: &LibraryId, matched: &str) -> Explanation {
    let windows = lib.file.ends_with(".dll");
    let win_note = if windows {
        " (a Windows DLL name: native Windows GPU support ends with TensorFlow 2.10; under WSL2 the Linux libraries are used)"
    } else {
        ""
    };
    let mut e = Explanation {
        id: "missing-library",
        matched: format!("{matched} … {}", lib.file),
        meaning: String::new(),
        provided_by: Some(format!("{} ({})", lib.describe_provider(), lib.file)),
        installed: None,
        fix: Vec::new(),
    };
    match &lib.provider {
        Provider::Driver => {
            e.meaning = format!(
                "{} is the NVIDIA driver's own library: the program found no driver{win_note}",
                lib.file
            );
            e.fix.push("install the NVIDIA driver (containers: run with --gpus all; WSL2: install the Windows driver, and make sure /usr/lib/wsl/lib is in the ldconfig cache)".into());
            e.fix.push("cudaenv doctor".into());
        }
        Provider::Library {
            library: Library::Tensorrt,
            major,
        } if *major < 10 => {
            e.meaning = format!(
                "{} is TensorRT {major}, an optional inference library TensorFlow 2.x probes for at start-up (TF-TRT; releases built with TensorRT 7 ask for libnvinfer.so.7, later ones for libnvinfer.so.8); without it TensorFlow still uses the GPU",
                lib.file
            );
            e.provided_by = Some(format!(
                "TensorRT {major}.x (NVIDIA's TensorRT {major} packages; the tensorrt-cu*-libs wheels cudaenv installs start at TensorRT 10, which TensorFlow 2.x does not load)"
            ));
            e.fix.push(
                "nothing, unless you use TF-TRT: the warning is harmless (TF_CPP_MIN_LOG_LEVEL=2 hides it)".into(),
            );
            e.fix.push(format!(
                "for TF-TRT: NVIDIA's TensorRT {major} packages for your CUDA, or a TensorFlow container that ships them"
            ));
        }
        Provider::Library { library, major } => {
            e.meaning = format!(
                "{} is {} {major}.x, {}; the dynamic loader found it in no directory it searched{win_note}",
                lib.file,
                library.title(),
                match library {
                    Library::Nccl =>
                        "the collective-communication library multi-GPU training loads (torch.distributed, JAX, Horovod)",
                    Library::Tensorrt => "NVIDIA's inference library",
                    Library::Cusparselt =>
                        "the structured-sparsity matrix library PyTorch's sparse kernels load",
                    Library::Cutensor => "the tensor-contraction library CuPy and others load",
                }
            );
            let found =
                input.providers(|s| s.libs.get(*library).is_some_and(|v| v.major() == *major));
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(format!("cudaenv local {name}")),
                None if found.is_empty() => {
                    let cuda = input
                        .active
                        .as_ref()
                        .and_then(|a| a.cuda.clone())
                        .map(|c| c.truncate(2))
                        .unwrap_or_else(|| Version::from_parts(&[12, 6]));
                    let spec = format!("{cuda}+{}{major}", library.spec_word());
                    e.fix.push(format!("cudaenv install {spec} && cudaenv local {spec}"));
                }
                None => e.fix.push("run the program from a shell with the hook enabled (`eval \"$(cudaenv init bash)\"`) or through `cudaenv exec`".into()),
            }
        }
        Provider::Cuda { cuda } => {
            e.meaning = format!(
                "the program asked the dynamic loader for {} by name and no directory on LD_LIBRARY_PATH, in the ldconfig cache or in its RUNPATH has it: it needs the {} runtime libraries{win_note}",
                lib.file,
                lib.describe_provider()
            );
            let found = input.providers(|s| {
                s.cuda
                    .as_ref()
                    .is_some_and(|c| cuda.iter().any(|p| c.truncate(2) == *p || c.matches(p)))
            });
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(format!("cudaenv local {name}")),
                None if found.is_empty() => {
                    let by_fw = input.framework_choice(|c| cuda.iter().any(|p| c.spec.cuda.matches(p) || p.matches(&c.spec.cuda)));
                    match by_fw {
                        Some((arg, _)) => e.fix.push(format!("cudaenv install --for {arg} && cudaenv local --for {arg}")),
                        None => {
                            let newest = cuda.iter().max().cloned().unwrap_or_else(|| Version::from_parts(&[0]));
                            e.fix.push(format!("cudaenv install {newest} && cudaenv local {newest}"));
                        }
                    }
                }
                None => e.fix.push("run the program from a shell with the hook enabled (`eval \"$(cudaenv init bash)\"`) or through `cudaenv exec`".into()),
            }
        }
        Provider::Cudnn { major } => {
            let sub = lib.component != "cudnn";
            e.meaning = if sub {
                format!(
                    "{} is one of cuDNN {major}'s sub-libraries: libcudnn.so.{major} itself was found but this part of it was not — typically a partial cuDNN copy, or PyTorch's bundled cuDNN mixed with another on LD_LIBRARY_PATH{win_note}",
                    lib.file
                )
            } else {
                format!(
                    "the program needs cuDNN {major} ({}) and the dynamic loader found none{win_note}",
                    lib.file
                )
            };
            let found = input.providers(|s| s.cudnn.as_ref().is_some_and(|c| c.major() == *major));
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(format!("cudaenv local {name}")),
                None if found.is_empty() => {
                    let spec = input
                        .framework_choice(|c| c.spec.cudnn.as_ref().is_some_and(|d| d.major() == *major))
                        .map(|(arg, _)| format!("--for {arg}"))
                        .unwrap_or_else(|| cudnn_stack_for(input, *major));
                    e.fix.push(format!("cudaenv install {spec}"));
                    e.fix.push(format!("cudaenv local {spec}"));
                }
                None => e.fix.push("run it with the active environment (`cudaenv exec -- CMD`), and check `cudaenv doctor` for other cuDNN copies on LD_LIBRARY_PATH".into()),
            }
            if sub {
                e.fix
                    .push("cudaenv doctor   # lists every cuDNN copy the loader can see".into());
            }
        }
        Provider::Unknown => {
            e.meaning = format!(
                "{} was not found by the dynamic loader; cudaenv does not know which package provides it",
                lib.file
            );
            e.fix.push("cudaenv doctor".into());
        }
    }
    e
}

fn cudnn_version_mismatch(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let (loaded, compiled, matched) = if let (Some(l), Some(c)) = (
        version_after(t, "Loaded runtime CuDNN library:"),
        version_after(t, "compiled with:"),
    ) {
        (
            l,
            c,
            "Loaded runtime CuDNN library: … but source was compiled with: …",
        )
    } else if let (Some(c), Some(l)) = (
        version_after(t, "compiled against"),
        version_after(t, "found runtime version"),
    ) {
        (l, c, "cuDNN version incompatibility")
    } else {
        return;
    };
    let need = compiled.truncate(2);
    let found = input.providers(|s| {
        s.cudnn
            .as_ref()
            .is_some_and(|d| d.major() == compiled.major() && d.truncate(2) >= need)
    });
    let (text, switch) = input.installed_text(&found);
    let mut fix = Vec::new();
    match switch {
        Some(n) => fix.push(format!("cudaenv local {n}")),
        None if found.is_empty() => {
            let cuda = input
                .active
                .as_ref()
                .and_then(|a| a.cuda.clone())
                .filter(|c| compat::cudnn_supports(&need, c) == Some(true))
                .map(|c| c.truncate(2).to_string());
            match cuda {
                Some(c) => fix.push(format!("cudaenv install {c}+cudnn{need}")),
                None => match newest_cuda_for_cudnn(&need) {
                    Some((c, None)) => fix.push(format!("cudaenv install {c}+cudnn{need}   (or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)")),
                    Some((c, Some(rule))) => fix.push(format!("cudaenv install {c}+cudnn{need}   (CUDA {c}: {rule} — or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)")),
                    None => fix.push(format!("cudaenv install CUDA+cudnn{need}   (CUDA: the release your framework needs; `cudaenv compat FRAMEWORK` tells)")),
                },
            }
        }
        None => {}
    }
    fix.push("cudaenv doctor   # finds the older cuDNN copy that was loaded".into());
    out.push(Explanation {
        id: "cudnn-version-mismatch",
        matched: matched.into(),
        meaning: format!(
            "the program was built against cuDNN {compiled} but loaded cuDNN {loaded}; cuDNN must have the same major version and at least the same minor ({}.{} or newer)",
            compiled.major(),
            compiled.minor().unwrap_or(0)
        ),
        provided_by: Some(format!("cuDNN ≥ {need}, < {}", compiled.major() + 1)),
        installed: Some(text),
        fix,
    });
}

/// The newest CUDA (as a spec prefix) the tables pair with this cuDNN, and
/// the family rule it comes from when the tables lack this release.
fn newest_cuda_for_cudnn(cudnn: &Version) -> Option<(Version, Option<String>)> {
    let s = compat::cudnn_support(cudnn)?;
    let cuda = s.cuda.iter().max().cloned()?;
    Some((cuda, s.rule_note()))
}

fn driver_insufficient(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(
        t,
        &[
            "driver version is insufficient",
            "CUDA_ERROR_INSUFFICIENT_DRIVER",
            "cudaErrorInsufficientDriver",
            "NVIDIA driver on your system is too old",
        ],
    ) else {
        return;
    };
    let os = input.machine.driver_os;
    let driver = input.machine.driver.clone();
    // PyTorch says `(found version 11040)`: the driver's maximum CUDA.
    let reported_max = version_after(t, "found version").and_then(|v| {
        let n: i32 = v.to_string().parse().ok()?;
        driver::cuda_from_api(n)
    });
    let max = driver
        .as_ref()
        .and_then(|d| driver::max_cuda(d, os))
        .or(reported_max);
    let active_cuda = input.active.as_ref().and_then(|a| a.cuda.clone());
    let provided_by = active_cuda.as_ref().and_then(|c| {
        driver::requirement(c, os).map(|r| format!("CUDA {c} needs driver {}", r.describe()))
    });
    let mut fix = Vec::new();
    if let Some(c) = &active_cuda
        && let Some(r) = driver::requirement(c, os)
        && let Some(m) = r.absolute_min()
    {
        fix.push(format!("upgrade the NVIDIA driver to ≥ {m}"));
    } else {
        fix.push("upgrade the NVIDIA driver".into());
    }
    // The driver runs the active CUDA: what was loaded is not the active runtime.
    if let (Some(d), Some(c)) = (&driver, &active_cuda)
        && matches!(
            driver::fit(d, c, os),
            compat::DriverFit::Full | compat::DriverFit::MinorCompat { .. }
        )
    {
        out.push(Explanation {
            id: "driver-insufficient",
            matched,
            meaning: format!(
                "driver {d} does run the active CUDA {c}, so the program loaded some other, newer CUDA runtime, or a link-time stub libcuda.so instead of the driver"
            ),
            provided_by,
            installed: None,
            fix: vec![
                "cudaenv doctor   # finds stray libcudart copies and stub libcuda.so on LD_LIBRARY_PATH".into(),
                "run the program with the active environment: cudaenv exec -- CMD".into(),
            ],
        });
        return;
    }
    let installed_text = match &max {
        Some(m) => {
            let ok: Vec<&Stack> =
                input.providers(|s| s.cuda.as_ref().is_some_and(|c| c.truncate(2) <= *m));
            if let Some(best) = ok.last() {
                fix.push(format!(
                    "or use a CUDA this driver runs: cudaenv local {}",
                    best.name
                ));
            } else {
                fix.push(format!("or use a CUDA this driver runs (≤ {m}): cudaenv install {m} && cudaenv local {m}"));
            }
            Some(format!(
                "this driver{} runs CUDA ≤ {m}; {}",
                driver
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default(),
                if ok.is_empty() {
                    "no installed version fits".to_string()
                } else {
                    format!(
                        "installed versions that fit: {}",
                        ok.iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ))
        }
        None => None,
    };
    fix.push(
        "check for a stub libcuda.so on LD_LIBRARY_PATH (…/lib64/stubs): `cudaenv doctor`".into(),
    );
    out.push(Explanation {
        id: "driver-insufficient",
        matched,
        meaning: "the CUDA runtime the program loaded is newer than what the installed NVIDIA driver supports (or a link-time stub libcuda was loaded instead of the driver)".into(),
        provided_by,
        installed: installed_text,
        fix,
    });
}

fn no_kernel_image(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(
        t,
        &[
            "no kernel image is available",
            "cudaErrorNoKernelImageForDevice",
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "is not compatible with the current PyTorch installation",
        ],
    ) else {
        return;
    };
    let mut gpus = sm_words(t).into_iter().take(1).collect::<Vec<_>>();
    if gpus.is_empty() || matched.contains("PyTorch") && gpus.len() > 1 {
        gpus = input.machine.gpus.clone();
    }
    if matched.contains("PyTorch") {
        // "NVIDIA H100 with CUDA capability sm_90 is not compatible…": the first sm_ is the GPU's.
        gpus = sm_words(t).into_iter().take(1).collect();
    }
    gpus.dedup();
    let mut provided = Vec::new();
    let mut fix = Vec::new();
    for g in &gpus {
        let sm = g.sm();
        match (compat::arch::first_cuda(*g), compat::arch::removed_in(*g)) {
            (Some(first), Some(rem)) => {
                provided.push(format!("{sm}: CUDA {first} up to (not including) {rem}"))
            }
            (Some(first), None) => provided.push(format!("{sm}: CUDA ≥ {first}")),
            (None, Some(rem)) => provided.push(format!("{sm}: CUDA before {rem}")),
            (None, None) => provided.push(format!("{sm}: unknown to cudaenv")),
        }
        if let Some(a) = input
            .active
            .as_ref()
            .and_then(|a| a.cuda.as_ref().map(|c| (a, c)))
        {
            let s = compat::arch::support(a.1, *g);
            if !s.runs() {
                let target = compat::arch::first_cuda(*g)
                    .filter(|f| f > a.1)
                    .or_else(|| {
                        compat::arch::removed_in(*g).map(|r| Version::from_parts(&[r.major() - 1]))
                    });
                if let Some(tv) = target {
                    fix.push(format!("the active {} (CUDA {}) cannot build for {sm}: cudaenv install {tv} && cudaenv local {tv}", a.0.name, a.1));
                }
            }
        }
        if let Some(first) = compat::arch::first_cuda(*g) {
            fix.push(format!("frameworks: install a build made with CUDA ≥ {first} (e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu{}`)", first.to_string().replace('.', "")));
        }
    }
    if gpus.is_empty() {
        fix.push(
            "cudaenv doctor   # shows the GPU's architecture and what the active CUDA supports"
                .into(),
        );
    }
    out.push(Explanation {
        id: "no-kernel-image",
        matched,
        meaning: "the binary (a framework wheel, an extension, or a CUDA library) contains no machine code for this GPU's architecture and no PTX the driver could compile for it".into(),
        provided_by: (!provided.is_empty()).then(|| provided.join("; ")),
        installed: None,
        fix,
    });
}

fn nvcc_arch(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(t, &["Unsupported gpu architecture", "nvcc fatal"]) else {
        return;
    };
    let Some(g) = sm_words(t).into_iter().next() else {
        return;
    };
    let first = compat::arch::first_cuda(g);
    let removed = compat::arch::removed_in(g);
    let found = input.providers(|s| {
        s.cuda
            .as_ref()
            .is_some_and(|c| compat::arch::support(c, g).runs())
    });
    let (text, switch) = input.installed_text(&found);
    let mut fix = Vec::new();
    match (switch, &first, &removed) {
        (Some(n), _, _) => fix.push(format!("cudaenv local {n}")),
        (None, Some(f), _) if found.is_empty() => fix.push(format!(
            "cudaenv install {f} --profile devel && cudaenv local {f}"
        )),
        (None, None, Some(r)) if found.is_empty() => fix.push(format!(
            "use a CUDA before {r} (e.g. `cudaenv install {}.9 --profile devel`)",
            r.major() - 1
        )),
        _ => {}
    }
    fix.push(format!(
        "or stop building for {} (TORCH_CUDA_ARCH_LIST / CMAKE_CUDA_ARCHITECTURES)",
        g.sm()
    ));
    out.push(Explanation {
        id: "nvcc-arch",
        matched,
        meaning: format!(
            "this nvcc cannot compile for {} ({})",
            g.sm(),
            g.family().unwrap_or("unknown architecture")
        ),
        provided_by: Some(match (first, removed) {
            (Some(f), Some(r)) => format!("CUDA {f} up to (not including) {r}"),
            (Some(f), None) => format!("CUDA ≥ {f}"),
            (None, Some(r)) => format!("CUDA before {r}"),
            _ => "unknown".into(),
        }),
        installed: Some(text),
        fix,
    });
}

fn torch_extension_mismatch(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(
        t,
        &["mismatches the version that was used to compile PyTorch"],
    ) else {
        return;
    };
    let detected = version_after(t, "detected CUDA version");
    let Some(torch) = version_after(t, "compile PyTorch") else {
        return;
    };
    let found = input.providers(|s| {
        s.cuda
            .as_ref()
            .is_some_and(|c| c.truncate(2) == torch.truncate(2))
    });
    let (text, switch) = input.installed_text(&found);
    let mut fix = Vec::new();
    match switch {
        Some(n) => fix.push(format!("cudaenv local {n}")),
        None if found.is_empty() => fix.push(format!(
            "cudaenv install {torch} --profile devel && cudaenv local {torch}"
        )),
        None => {}
    }
    out.push(Explanation {
        id: "torch-extension-cuda",
        matched,
        meaning: format!(
            "building a PyTorch C++/CUDA extension: nvcc/CUDA_HOME is CUDA {}, but this PyTorch was built with CUDA {torch}; extensions must be compiled with the same major.minor",
            detected.map(|d| d.to_string()).unwrap_or_else(|| "?".into())
        ),
        provided_by: Some(format!("CUDA {torch} (with nvcc: --profile devel)")),
        installed: Some(text),
        fix,
    });
}

struct Rule {
    id: &'static str,
    needles: &'static [&'static str],
    meaning: &'static str,
    fix: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        id: "cudnn-internal-error",
        needles: &[
            "CUDNN_STATUS_INTERNAL_ERROR",
            "CUDNN_STATUS_EXECUTION_FAILED",
            "CUDNN_STATUS_NOT_INITIALIZED",
            "CUDNN_STATUS_ARCH_MISMATCH",
        ],
        meaning: "cuDNN failed inside a call. The usual causes, in order: the GPU ran out of memory (TensorFlow reserves nearly all of it up front), a cuDNN too old for this GPU's architecture, or two different cuDNN copies loaded into one process",
        fix: &[
            "TensorFlow: export TF_FORCE_GPU_ALLOW_GROWTH=true",
            "cudaenv doctor   # checks the GPU architecture against the active CUDA/cuDNN and finds stray cuDNN copies",
        ],
    },
    Rule {
        id: "no-device",
        needles: &[
            "no CUDA-capable device is detected",
            "CUDA_ERROR_NO_DEVICE",
            "cudaErrorNoDevice",
            "Found no NVIDIA driver on your system",
        ],
        meaning: "CUDA sees no GPU: CUDA_VISIBLE_DEVICES hides them (empty or -1), the driver is not loaded, the device nodes /dev/nvidia* are missing or not accessible, or (containers) no GPU was passed in",
        fix: &[
            "unset CUDA_VISIBLE_DEVICES",
            "cudaenv doctor   # checks the driver, device nodes and CUDA_VISIBLE_DEVICES",
        ],
    },
    Rule {
        id: "ptx-toolchain",
        needles: &[
            "provided PTX was compiled with an unsupported toolchain",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "cudaErrorUnsupportedPtxVersion",
        ],
        meaning: "the program carries PTX produced by a newer CUDA than the driver's JIT compiler understands: the driver runs this CUDA only through minor version compatibility, which excludes PTX JIT",
        fix: &[
            "upgrade the NVIDIA driver to the one the toolkit shipped with (`cudaenv compat` shows it per release)",
            "or use the CUDA release matching the driver (`cudaenv doctor` says which)",
        ],
    },
    Rule {
        id: "compat-not-supported",
        needles: &[
            "forward compatibility was attempted on non supported HW",
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "error 804",
        ],
        meaning: "a CUDA forward-compatibility libcuda (cuda-compat package, often …/cuda-X/compat on LD_LIBRARY_PATH) was loaded on a GPU that does not support it (forward compatibility is for data-center GPUs)",
        fix: &[
            "remove the cuda-X/compat directory from LD_LIBRARY_PATH",
            "cudaenv doctor",
        ],
    },
    Rule {
        id: "driver-library-mismatch",
        needles: &[
            "Driver/library version mismatch",
            "unsupported display driver / cuda driver combination",
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "error 803",
        ],
        meaning: "the loaded libcuda and the running kernel module are different driver releases — usually after a driver upgrade without a reboot, or a forward-compatibility libcuda that does not match the driver branch",
        fix: &[
            "reboot (or reload the nvidia kernel modules)",
            "remove any cuda-X/compat directory from LD_LIBRARY_PATH",
            "cudaenv doctor   # shows the driver version from each source",
        ],
    },
    Rule {
        id: "cuinit-unknown",
        needles: &[
            "CUDA_ERROR_UNKNOWN",
            "cuInit: UNKNOWN ERROR",
            "failed call to cuInit",
            "CUDA unknown error",
        ],
        meaning: "cuInit failed without a specific reason. Common causes: /dev/nvidia-uvm missing (the nvidia_uvm module not loaded, often after suspend/resume), or a driver upgrade without a reboot",
        fix: &[
            "sudo nvidia-modprobe -u -c=0   (or: sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm)",
            "reboot if that does not help",
            "cudaenv doctor",
        ],
    },
    Rule {
        id: "gcc-unsupported",
        needles: &[
            "unsupported GNU version",
            "gcc versions later than",
            "unsupported clang version",
        ],
        meaning: "nvcc refuses the host compiler: each CUDA release supports host compilers up to a certain version",
        fix: &[
            "point nvcc at a compiler its CUDA accepts: export CUDAENV_HOST_COMPILER=auto (or a path such as /usr/bin/g++-12); activation sets NVCC_PREPEND_FLAGS=-ccbin …, NVCC_CCBIN and CUDAHOSTCXX",
            "or a newer CUDA release: cudaenv install VERSION --profile devel",
        ],
    },
    Rule {
        id: "nccl-net-plugin",
        needles: &[
            "libnccl-net.so",
            "NET/Plugin: Could not find",
            "NET/Plugin : No plugin found",
        ],
        meaning: "NCCL looked for an optional network plugin (libnccl-net.so, for InfiniBand/EFA fabrics through a vendor plugin) and uses its built-in sockets and IB transports without it: an INFO line, not an error",
        fix: &[
            "nothing on a single node or plain Ethernet; on a fabric that needs a plugin (AWS EFA: aws-ofi-nccl), put its directory on LD_LIBRARY_PATH",
        ],
    },
    Rule {
        id: "nccl-undefined-symbol",
        needles: &["undefined symbol: nccl"],
        meaning: "the program was built against a newer NCCL than the libnccl.so.2 the loader found (NCCL adds functions in minor releases; the soname stays libnccl.so.2), so an older NCCL earlier on the search path shadows the one it needs",
        fix: &[
            "cudaenv trace -- python -c 'import torch'   # shows which libnccl.so.2 was loaded and from where",
            "install the NCCL the framework names (`pip show nvidia-nccl-cu12`, or its Requires-Dist) in the stack: cudaenv install CUDA+ncclVERSION",
        ],
    },
    Rule {
        id: "nccl-error",
        needles: &[
            "ncclUnhandledCudaError",
            "unhandled cuda error",
            "ncclSystemError",
            "ncclInternalError",
            "NCCL error",
        ],
        meaning: "an NCCL collective failed. The usual causes: a CUDA error underneath (a driver too old for the NCCL build, a GPU fault), peer-to-peer or shared-memory limits (containers with a small /dev/shm), or a network interface NCCL cannot use between nodes",
        fix: &[
            "rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET) to see which step failed",
            "containers: docker run --shm-size=1g (or --ipc=host)",
            "cudaenv verify   # runs NCCL's all-reduce on the stack when it carries NCCL",
        ],
    },
    Rule {
        id: "out-of-memory",
        needles: &[
            "CUDA out of memory",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "cudaErrorMemoryAllocation",
            "CUBLAS_STATUS_ALLOC_FAILED",
            "OOM when allocating",
        ],
        meaning: "the GPU has no free memory for the allocation (another process may be holding it; TensorFlow reserves nearly all of it by default)",
        fix: &[
            "reduce the batch size or model size",
            "TensorFlow: export TF_FORCE_GPU_ALLOW_GROWTH=true; PyTorch: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "check other processes with nvidia-smi",
        ],
    },
    Rule {
        id: "cublas-not-initialized",
        needles: &[
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "CUBLAS_STATUS_ARCH_MISMATCH",
        ],
        meaning: "cuBLAS could not create its handle: usually the GPU is out of memory, or the cuBLAS loaded belongs to a different CUDA than the runtime (two CUDA copies on the library path)",
        fix: &[
            "cudaenv doctor   # finds stray CUDA copies on LD_LIBRARY_PATH",
            "free GPU memory (see out-of-memory)",
        ],
    },
    Rule {
        id: "tensorflow-no-gpu",
        needles: &[
            "Cannot dlopen some GPU libraries",
            "Could not find cuda drivers on your machine",
            "Skipping registering GPU devices",
        ],
        meaning: "TensorFlow did not register the GPU because a library failed to load (the lines before this one name it) or no driver was found. On native Windows, TensorFlow ≥ 2.11 has no GPU support at all (use WSL2)",
        fix: &[
            "paste the `Could not load dynamic library …` lines into `cudaenv explain`",
            "cudaenv local --for tensorflow==VERSION   # pins the CUDA + cuDNN it was tested with",
        ],
    },
    Rule {
        id: "dnn-not-found",
        needles: &[
            "DNN library is not found",
            "Unable to load cuDNN",
            "Could not load cudnn",
        ],
        meaning: "the framework could not load cuDNN (or loaded an incompatible one)",
        fix: &[
            "cudaenv compat FRAMEWORK   # says which cuDNN it needs",
            "cudaenv install --for FRAMEWORK==VERSION",
        ],
    },
    Rule {
        id: "torch-cpu-build",
        needles: &["Torch not compiled with CUDA enabled"],
        meaning: "this PyTorch is a CPU-only build: no CUDA stack can make it use the GPU",
        fix: &[
            "reinstall a CUDA build: pip install torch --index-url https://download.pytorch.org/whl/cu126 (pick the cuXYZ `cudaenv compat torch` suggests)",
        ],
    },
    Rule {
        id: "undefined-symbol",
        needles: &[
            "undefined symbol",
            "version `libcublasLt.so",
            "not defined in file",
        ],
        meaning: "a library was loaded together with a different release of one it depends on (e.g. libcublas from one CUDA and libcublasLt from another): two CUDA or cuDNN copies are mixed in one process",
        fix: &[
            "cudaenv doctor   # lists every CUDA/cuDNN copy on LD_LIBRARY_PATH and in the ldconfig cache",
        ],
    },
];

fn simple_rules(_input: &Input, t: &str, out: &mut Vec<Explanation>) {
    for r in RULES {
        if out.iter().any(|e| e.id == r.id) {
            continue;
        }
        if let Some(m) = has(t, r.needles) {
            // "not found" rules above already cover library names; the generic ones add context.
            out.push(Explanation {
                id: r.id,
                matched: m,
                meaning: r.meaning.into(),
                provided_by: None,
                installed: None,
                fix: r.fix.iter().map(|s| s.to_string()).collect(),
            });
        }
    }
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
    fn one(i: &Input, id: &str) -> Explanation {
        let all = explain(i);
        all.iter()
            .find(|e| e.id == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id} for {:?}: {all:#?}", i.text))
    }
    fn text(e: &Explanation) -> String {
        format!(
            "{} | {} | {} | {}",
            e.meaning,
            e.provided_by.as_deref().unwrap_or(""),
            e.installed.as_deref().unwrap_or(""),
            e.fix.join(" ; ")
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
                &["CUDA 11.0–11.8", "Windows DLL", "cudaenv install 11.8"],
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

    #[test]
    fn uses_what_is_installed_and_the_frameworks() {
        let mut i = input("Could not load dynamic library 'libcudart.so.11.0'");
        i.installed
            .push(stack("11.2.2+cudnn8.1.1.33", "11.2.2", Some("8.1.1.33")));
        let e = one(&i, "missing-library");
        assert!(
            e.installed
                .as_deref()
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
        });
        let e = one(&i, "missing-library");
        assert!(e.fix[0].contains("--for tensorflow==2.10"), "{e:?}");
    }

    /// A cuDNN newer than the cuDNN table: the CUDA offered with it is the
    /// family's rule, and the fix says so.
    #[test]
    fn a_cudnn_newer_than_the_table_is_paired_by_its_family_rule() {
        let mut i = input(
            "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.28.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
        );
        i.active = Some(stack("11.8.0+cudnn9.1.0.70", "11.8.0", Some("9.1.0.70")));
        let e = one(&i, "cudnn-version-mismatch");
        assert_eq!(
            e.fix[0],
            "cudaenv install 13+cudnn9.28   (CUDA 13: the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.12 — or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)",
            "{e:?}"
        );
    }

    #[test]
    fn a_driver_that_fits_points_at_stray_runtimes() {
        let mut i = input("CUDA driver version is insufficient for CUDA runtime version");
        i.machine.driver = DriverVersion::parse("580.65.06");
        let e = one(&i, "driver-insufficient");
        assert!(
            e.meaning.contains("does run the active CUDA 12.4.1"),
            "{e:?}"
        );
        assert!(e.fix[0].contains("doctor"));
    }

    #[test]
    fn unknown_text_explains_nothing() {
        assert!(explain(&input("segmentation fault in my own code")).is_empty());
    }
}
