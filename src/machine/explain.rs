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

use crate::i18n::Msg;
use crate::machine::compat::libraries::{self, LibraryId, Provider};
use crate::machine::compat::{self, ComputeCapability, Framework, FrameworkReq, Machine, driver};
use crate::machine::doctor::python::InstalledFramework;
use crate::msg;
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
    pub meaning: Msg,
    /// Which CUDA / cuDNN / driver provides what is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provided_by: Option<Msg>,
    /// Whether an installed version provides it (names), and which one is active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed: Option<Msg>,
    pub fix: Vec<Msg>,
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
    dll_load_failed(t, &mut out);
    ctypes_dll_search(t, &mut out);
    missing_library(input, t, &mut out);
    tensorflow_runtime_stub(input, t, &mut out);
    host_compiler(input, t, &mut out);
    simple_rules(input, t, &mut out);
    out
}

/// TensorFlow's CUDA stub says "Could not find cuda drivers on your machine"
/// (and "Failed call to cudaGetRuntimeVersion: Error loading CUDA libraries")
/// when it cannot load the CUDA runtime it was built against, whether a driver
/// is there or not; from 2.14 on TensorFlow names the libraries it could not
/// load only at `TF_CPP_VMODULE=dso_loader=1` (both seen with TensorFlow 2.21
/// on a machine with driver 580: docs/frameworks.md).
fn tensorflow_runtime_stub(input: &Input, t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(
        t,
        &[
            "Could not find cuda drivers on your machine",
            "Failed call to cudaGetRuntimeVersion",
        ],
    ) else {
        return;
    };
    let meaning = match &input.machine.driver {
        Some(d) => msg!(
            "explain-tensorflow-cudart-stub-driver",
            driver = d.to_string()
        ),
        None => msg!("explain-tensorflow-cudart-stub"),
    };
    let mut e = Explanation {
        id: "tensorflow-cuda-runtime",
        matched,
        meaning,
        provided_by: None,
        installed: None,
        fix: Vec::new(),
    };
    let tested = input
        .frameworks
        .iter()
        .filter(|f| f.framework == Framework::Tensorflow)
        .find_map(|f| {
            let mm: Vec<&str> = f.version.split('+').next()?.split('.').take(2).collect();
            let arg = format!("tensorflow=={}", mm.join("."));
            let c = compat::stack_for(&arg.parse().ok()?, Some(&input.machine)).ok()?;
            Some((arg, c))
        });
    match tested {
        Some((arg, c)) => {
            // What was tested is CUDA + cuDNN; the NCCL a wheel asks for is not.
            let tested = crate::spec::StackSpec::new(c.spec.cuda.clone(), c.spec.cudnn.clone());
            e.provided_by = Some(msg!(
                "explain-tensorflow-cudart-stub-tested",
                framework = arg.as_str(),
                stack = tested.to_string()
            ));
            let found = input.providers(|s| {
                s.cuda
                    .as_ref()
                    .is_some_and(|v| v.truncate(2) == c.spec.cuda.truncate(2))
                    && s.cudnn.as_ref().map(|d| d.major())
                        == c.spec.cudnn.as_ref().map(|d| d.major())
            });
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            e.fix.push(Msg::verbatim(match switch {
                Some(name) => format!("cudaenv local {name}"),
                None if found.is_empty() => {
                    format!("cudaenv install --for {arg} && cudaenv local --for {arg}")
                }
                None => "cudaenv exec -- python …".to_string(),
            }));
        }
        None => e.fix.push(msg!("explain-tensorflow-no-gpu-fix-2")),
    }
    e.fix.push(msg!("explain-tensorflow-cudart-stub-names"));
    out.push(e);
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
        .map_or(Msg::verbatim(""), |c| {
            msg!("explain-gcc-refused-active", cuda = c)
        });
    let compiler = if family == "GCC" {
        format!("g++-{max}")
    } else {
        format!("clang++-{max}")
    };
    let package = if family == "GCC" {
        format!("g++-{max}")
    } else {
        format!("clang-{max}")
    };
    let variable = crate::context::env_vars::CUDAENV_HOST_COMPILER;
    let mut fix = vec![
        msg!("explain-gcc-refused-fix-auto", variable = variable),
        msg!(
            "explain-gcc-refused-fix-name",
            variable = variable,
            compiler = compiler,
            package = package
        ),
    ];
    if !newer.is_empty() {
        fix.push(msg!(
            "explain-gcc-refused-fix-newer",
            releases = newer.join(", ")
        ));
    }
    let releases = if releases.is_empty() {
        String::new()
    } else {
        format!(" (CUDA {})", releases.join(", "))
    };
    out.push(Explanation {
        id: "gcc-unsupported",
        matched: marker,
        meaning: msg!(
            "explain-gcc-refused",
            family = family,
            max = max,
            releases = releases,
            active => active
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
            "is missing",
        ],
    ) else {
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    let mut runtime: Vec<String> = Vec::new();
    for lib in words(t).filter_map(libraries::identify) {
        let key = lib.file.to_ascii_lowercase();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if lib.provider == Provider::VisualCppRuntime {
            runtime.push(lib.file);
        } else if is_dll(&lib.file) {
            out.push(windows_library(input, &lib, &matched));
        } else {
            out.push(explain_library(input, &lib, &matched));
        }
    }
    if !runtime.is_empty() {
        out.push(visual_cpp_runtime(&runtime, &matched));
    }
}

fn is_dll(file: &str) -> bool {
    file.len() > 4
        && file.is_char_boundary(file.len() - 4)
        && file[file.len() - 4..].eq_ignore_ascii_case(".dll")
}

/// The fix that makes a program see the active stack on Windows: `cudaenv
/// exec` or the PowerShell hook (a program started before keeps its PATH).
fn windows_hook() -> Msg {
    msg!("explain-win-run-with-hook")
}

/// The configuration TensorFlow's native Windows builds were tested with
/// (`registry/compat/tensorflow.toml`, platform `windows`) that satisfies
/// `fits`: the newest such build's `CUDA+cudnnX.Y` and the releases that
/// share it (`2.5–2.10`).
fn windows_tested(fits: impl Fn(&compat::data::TfBuild) -> bool) -> Option<(String, String)> {
    let builds: Vec<&compat::data::TfBuild> = compat::data::tensorflow()
        .build
        .iter()
        .filter(|b| b.platform == "windows")
        .collect();
    let newest = builds
        .iter()
        .filter(|b| fits(b))
        .max_by(|a, b| a.version.cmp(&b.version))?;
    let same: Vec<Version> = builds
        .iter()
        .filter(|b| b.cuda == newest.cuda && b.cudnn == newest.cudnn)
        .map(|b| b.version.truncate(2))
        .collect();
    let (first, last) = (same.iter().min()?, same.iter().max()?);
    let releases = if first == last {
        first.to_string()
    } else {
        format!("{first}–{last}")
    };
    Some((format!("{}+cudnn{}", newest.cuda, newest.cudnn), releases))
}

/// A DLL Windows' loader did not find. The DLL names map to releases as
/// sonames do (`libraries::identify`); what differs is where Windows looks
/// (the program's directory, System32, PATH), the stack to install (the one
/// TensorFlow's Windows builds were tested with, when it provides the DLL:
/// the guides' `cudart64_110.dll` → `11.2+cudnn8.1`), and how a program gets
/// the stack's environment (`cudaenv exec`, the PowerShell hook).
fn windows_library(input: &Input, lib: &LibraryId, matched: &str) -> Explanation {
    let note = msg!("explain-windows-dll-note");
    let mut e = Explanation {
        id: "missing-library",
        matched: format!("{matched} … {}", lib.file),
        meaning: Msg::verbatim(""),
        provided_by: Some(msg!(
            "ui-provider-file",
            provider => lib.describe_provider(),
            file = lib.file
        )),
        installed: None,
        fix: Vec::new(),
    };
    let (found, tested, sub) = match &lib.provider {
        Provider::Driver => {
            e.meaning = msg!("explain-win-missing-driver", file = lib.file);
            e.fix.push(msg!("explain-win-missing-driver-fix"));
            e.fix.push(Msg::verbatim("cudaenv doctor"));
            return e;
        }
        Provider::Cuda { cuda } => {
            e.meaning = msg!(
                "explain-win-missing-cuda-dll",
                file = lib.file,
                provider => lib.describe_provider(),
                windows => note
            );
            let in_range = |c: &Version| cuda.iter().any(|p| c.matches(p) || p.matches(c));
            let found = input.providers(move |s| s.cuda.as_ref().is_some_and(in_range));
            // The releases that ship it, else its CUDA major: TensorFlow 2.10's
            // 11.2 loads cufft64_10.dll, which the table knows from 11.4 on.
            let tested = windows_tested(|b| in_range(&b.cuda))
                .or_else(|| windows_tested(|b| cuda.iter().any(|p| p.major() == b.cuda.major())));
            (found, tested, false)
        }
        Provider::Cudnn { major } => {
            let sub = lib.component != "cudnn";
            e.meaning = if sub {
                msg!("explain-win-missing-cudnn-sub-dll", file = lib.file, major = major, windows => note)
            } else {
                msg!("explain-win-missing-cudnn-dll", file = lib.file, major = major, windows => note)
            };
            let found = input.providers(|s| s.cudnn.as_ref().is_some_and(|c| c.major() == *major));
            (found, windows_tested(|b| b.cudnn.major() == *major), sub)
        }
        _ => return explain_library(input, lib, matched),
    };
    let (text, switch) = input.installed_text(&found);
    e.installed = Some(text);
    match (switch, tested) {
        (Some(name), _) => e.fix.push(Msg::verbatim(format!("cudaenv local {name}"))),
        (None, Some((spec, releases))) if found.is_empty() => {
            e.fix.push(Msg::verbatim(format!(
                "cudaenv install {spec} && cudaenv local {spec}"
            )));
            e.fix.push(msg!(
                "explain-win-tensorflow-tested",
                spec = spec,
                releases = releases
            ));
            // The guides installed NVIDIA's toolkit and copied cuDNN into it:
            // that tree can be linked as it is.
            let cuda = spec.split('+').next().unwrap_or(&spec);
            e.fix.push(msg!("explain-win-link-existing", cuda = cuda));
        }
        // No TensorFlow Windows build used it (CUDA 12's DLLs): the same
        // choice as for the soname.
        (None, None) if found.is_empty() => {
            e.fix = explain_library(input, lib, matched)
                .fix
                .into_iter()
                .filter(|f| *f != msg!("explain-doctor-lists-cudnn-copies"))
                .collect();
        }
        (None, _) => {}
    }
    e.fix.push(windows_hook());
    if sub {
        e.fix.push(msg!("explain-doctor-lists-cudnn-copies"));
    }
    e
}

/// `msvcp140_1.dll`, `VCRUNTIME140.dll` …: Microsoft's runtime, not CUDA's;
/// one explanation for all of them, as one redistributable provides them.
fn visual_cpp_runtime(files: &[String], matched: &str) -> Explanation {
    Explanation {
        id: "vc-runtime-missing",
        matched: format!("{matched} … {}", files.join(", ")),
        meaning: msg!("explain-vc-runtime", files = files.join(", ")),
        provided_by: Some(msg!("explain-vc-runtime-provided-by")),
        installed: None,
        fix: vec![
            msg!("explain-win-vc-redist"),
            msg!("explain-vc-runtime-fix-doctor"),
        ],
    }
}

/// The word after `marker` in `t`, without quotes and a trailing colon.
fn word_after<'t>(t: &'t str, marker: &str) -> Option<&'t str> {
    let i = t.to_ascii_lowercase().find(&marker.to_ascii_lowercase())?;
    words(&t[i + marker.len()..]).next()
}

/// The file name at the end of a Windows or Unix path.
fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Python's `ImportError: DLL load failed while importing X` (3.8 and
/// later; `DLL load failed:` before) and `[WinError 126]`: an extension
/// module or a DLL it links was not found. For TensorFlow's core module that
/// is not CUDA (TensorFlow ≥ 2.1 loads CUDA at run time and only warns);
/// for other extensions, Python ≥ 3.8 no longer searching PATH is the usual
/// reason, and `os.add_dll_directory` the fix.
fn dll_load_failed(t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(t, &["DLL load failed", "WinError 126"]) else {
        return;
    };
    let module = word_after(t, "while importing")
        .or_else(|| word_after(t, "Error loading"))
        .map(|m| base_name(m).to_string());
    let tensorflow = module
        .as_deref()
        .is_some_and(|m| m.contains("pywrap_tensorflow"))
        || has(t, &["tensorflow"]).is_some();
    let named = match &module {
        Some(m) => Msg::verbatim(m.clone()),
        None => msg!("explain-win-unnamed-module"),
    };
    let (id, meaning, first_fix) = if tensorflow {
        (
            "tensorflow-import-failed",
            msg!("explain-win-tf-import-failed", module => named),
            msg!("explain-win-tf-import-failed-fix-python"),
        )
    } else {
        (
            "dll-load-failed",
            msg!("explain-win-dll-load-failed", module => named),
            msg!("explain-win-add-dll-directory"),
        )
    };
    let fix = if tensorflow {
        vec![
            msg!("explain-win-vc-redist"),
            first_fix,
            msg!("explain-vc-runtime-fix-doctor"),
        ]
    } else {
        vec![
            first_fix,
            msg!("explain-win-vc-redist"),
            msg!("explain-vc-runtime-fix-doctor"),
        ]
    };
    out.push(Explanation {
        id,
        matched,
        meaning,
        provided_by: None,
        installed: None,
        fix,
    });
}

/// ctypes on Python ≥ 3.8: `Could not find module 'X.dll' (or one of its
/// dependencies). Try using the full path with constructor syntax.` — PATH
/// is not searched (`winmode` defaults to the safe search).
fn ctypes_dll_search(t: &str, out: &mut Vec<Explanation>) {
    let Some(matched) = has(t, &["(or one of its dependencies)"]) else {
        return;
    };
    let Some(file) = words(t).filter(|w| is_dll(w)).map(base_name).next() else {
        return;
    };
    out.push(Explanation {
        id: "ctypes-dll-search",
        matched,
        meaning: msg!("explain-win-ctypes-dll-search", file = file),
        provided_by: None,
        installed: None,
        fix: vec![
            msg!("explain-win-ctypes-full-path", file = file),
            msg!("explain-win-ctypes-winmode", file = file),
        ],
    });
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
    let windows = is_dll(&lib.file);
    let win_note = if windows {
        msg!("explain-windows-dll-note")
    } else {
        Msg::verbatim("")
    };
    let hook = if windows {
        windows_hook()
    } else {
        msg!("explain-run-with-hook")
    };
    let mut e = Explanation {
        id: "missing-library",
        matched: format!("{matched} … {}", lib.file),
        meaning: Msg::verbatim(""),
        provided_by: Some(msg!(
            "ui-provider-file",
            provider => lib.describe_provider(),
            file = lib.file
        )),
        installed: None,
        fix: Vec::new(),
    };
    match &lib.provider {
        Provider::Driver => {
            e.meaning =
                msg!("explain-missing-driver-library", file = lib.file, windows => win_note);
            e.fix.push(msg!("explain-missing-driver-library-fix"));
            e.fix.push(Msg::verbatim("cudaenv doctor"));
        }
        Provider::Library {
            library: Library::Tensorrt,
            major,
        } if *major < 10 => {
            e.meaning = msg!("explain-lib-tensorrt-old", file = lib.file, major = major);
            e.provided_by = Some(msg!("explain-lib-tensorrt-old-provided-by", major = major));
            e.fix.push(msg!("explain-lib-tensorrt-old-fix-1"));
            e.fix.push(if *major == 8 {
                // pypi.org's `tensorrt` 8.5/8.6 wheels carry libnvinfer.so.8
                // in site-packages/tensorrt/ (`link` records it).
                msg!("explain-lib-tensorrt-8-fix")
            } else {
                msg!("explain-lib-tensorrt-old-fix-2", major = major)
            });
        }
        Provider::Library { library, major } => {
            let role = match library {
                Library::Nccl => msg!("explain-lib-role-nccl"),
                Library::Tensorrt => msg!("explain-lib-role-tensorrt"),
                Library::Cusparselt => msg!("explain-lib-role-cusparselt"),
                Library::Cutensor => msg!("explain-lib-role-cutensor"),
            };
            e.meaning = msg!(
                "explain-lib-missing",
                file = lib.file,
                title = library.title(),
                major = major,
                role => role,
                windows => win_note
            );
            let found =
                input.providers(|s| s.libs.get(*library).is_some_and(|v| v.major() == *major));
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(Msg::verbatim(format!("cudaenv local {name}"))),
                None if found.is_empty() => {
                    let cuda = input
                        .active
                        .as_ref()
                        .and_then(|a| a.cuda.clone())
                        .map(|c| c.truncate(2))
                        .unwrap_or_else(|| Version::from_parts(&[12, 6]));
                    let spec = format!("{cuda}+{}{major}", library.spec_word());
                    e.fix.push(Msg::verbatim(format!(
                        "cudaenv install {spec} && cudaenv local {spec}"
                    )));
                }
                None => e.fix.push(hook.clone()),
            }
        }
        Provider::Cuda { cuda } => {
            e.meaning = msg!(
                "explain-missing-cuda-library",
                file = lib.file,
                provider => lib.describe_provider(),
                windows => win_note
            );
            let found = input.providers(|s| {
                s.cuda
                    .as_ref()
                    .is_some_and(|c| cuda.iter().any(|p| c.truncate(2) == *p || c.matches(p)))
            });
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(Msg::verbatim(format!("cudaenv local {name}"))),
                None if found.is_empty() => {
                    let by_fw = input.framework_choice(|c| {
                        cuda.iter()
                            .any(|p| c.spec.cuda.matches(p) || p.matches(&c.spec.cuda))
                    });
                    match by_fw {
                        Some((arg, _)) => e.fix.push(Msg::verbatim(format!(
                            "cudaenv install --for {arg} && cudaenv local --for {arg}"
                        ))),
                        None => {
                            let newest = cuda
                                .iter()
                                .max()
                                .cloned()
                                .unwrap_or_else(|| Version::from_parts(&[0]));
                            e.fix.push(Msg::verbatim(format!(
                                "cudaenv install {newest} && cudaenv local {newest}"
                            )));
                        }
                    }
                }
                None => e.fix.push(hook.clone()),
            }
        }
        Provider::Cudnn { major } => {
            let sub = lib.component != "cudnn";
            e.meaning = if sub {
                msg!("explain-missing-cudnn-sub-library", file = lib.file, major = major, windows => win_note)
            } else {
                msg!("explain-missing-cudnn", file = lib.file, major = major, windows => win_note)
            };
            let found = input.providers(|s| s.cudnn.as_ref().is_some_and(|c| c.major() == *major));
            let (text, switch) = input.installed_text(&found);
            e.installed = Some(text);
            match switch {
                Some(name) => e.fix.push(Msg::verbatim(format!("cudaenv local {name}"))),
                None if found.is_empty() => {
                    let spec = input
                        .framework_choice(|c| {
                            c.spec.cudnn.as_ref().is_some_and(|d| d.major() == *major)
                        })
                        .map(|(arg, _)| format!("--for {arg}"))
                        .unwrap_or_else(|| cudnn_stack_for(input, *major));
                    e.fix.push(Msg::verbatim(format!("cudaenv install {spec}")));
                    e.fix.push(Msg::verbatim(format!("cudaenv local {spec}")));
                }
                None => e.fix.push(msg!("explain-run-with-active-cudnn")),
            }
            if sub {
                e.fix.push(msg!("explain-doctor-lists-cudnn-copies"));
            }
        }
        Provider::VisualCppRuntime => {
            return visual_cpp_runtime(std::slice::from_ref(&lib.file), matched);
        }
        Provider::Unknown => {
            e.meaning = msg!("explain-missing-unknown-library", file = lib.file);
            e.fix.push(Msg::verbatim("cudaenv doctor"));
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
        Some(n) => fix.push(Msg::verbatim(format!("cudaenv local {n}"))),
        None if found.is_empty() => {
            let cuda = input
                .active
                .as_ref()
                .and_then(|a| a.cuda.clone())
                .filter(|c| compat::cudnn_supports(&need, c) == Some(true))
                .map(|c| c.truncate(2).to_string());
            match cuda {
                Some(c) => fix.push(Msg::verbatim(format!("cudaenv install {c}+cudnn{need}"))),
                None => match newest_cuda_for_cudnn(&need) {
                    Some((c, None)) => fix.push(msg!(
                        "explain-cudnn-install-or-framework",
                        cuda = c,
                        cudnn = need
                    )),
                    Some((c, Some(rule))) => fix.push(msg!(
                        "explain-cudnn-install-by-rule",
                        cuda = c,
                        cudnn = need,
                        rule => rule
                    )),
                    None => fix.push(msg!("explain-cudnn-install-any-cuda", cudnn = need)),
                },
            }
        }
        None => {}
    }
    fix.push(msg!("explain-doctor-finds-older-cudnn"));
    out.push(Explanation {
        id: "cudnn-version-mismatch",
        matched: matched.into(),
        meaning: msg!(
            "explain-cudnn-version-mismatch",
            compiled = compiled,
            loaded = loaded,
            floor = format!("{}.{}", compiled.major(), compiled.minor().unwrap_or(0))
        ),
        provided_by: Some(Msg::verbatim(format!(
            "cuDNN ≥ {need}, < {}",
            compiled.major() + 1
        ))),
        installed: Some(text),
        fix,
    });
}

/// The newest CUDA (as a spec prefix) the tables pair with this cuDNN, and
/// the family rule it comes from when the tables lack this release.
fn newest_cuda_for_cudnn(cudnn: &Version) -> Option<(Version, Option<Msg>)> {
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
        driver::requirement(c, os)
            .map(|r| msg!("explain-cuda-needs-driver", cuda = c, driver = r.describe()))
    });
    let mut fix = Vec::new();
    if let Some(c) = &active_cuda
        && let Some(r) = driver::requirement(c, os)
        && let Some(m) = r.absolute_min()
    {
        fix.push(msg!("explain-upgrade-driver-to", driver = m));
    } else {
        fix.push(msg!("explain-upgrade-driver"));
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
            meaning: msg!("explain-driver-runs-active-cuda", driver = d, cuda = c),
            provided_by,
            installed: None,
            fix: vec![
                msg!("explain-doctor-finds-stray-cudart"),
                msg!("explain-run-with-active-environment"),
            ],
        });
        return;
    }
    let installed_text = match &max {
        Some(m) => {
            let ok: Vec<&Stack> =
                input.providers(|s| s.cuda.as_ref().is_some_and(|c| c.truncate(2) <= *m));
            if let Some(best) = ok.last() {
                fix.push(msg!(
                    "explain-use-cuda-driver-runs-installed",
                    name = best.name
                ));
            } else {
                fix.push(msg!("explain-use-cuda-driver-runs", cuda = m));
            }
            let fits = if ok.is_empty() {
                msg!("explain-driver-no-installed-fits")
            } else {
                msg!(
                    "explain-driver-installed-fit",
                    names = ok
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Some(match &driver {
                Some(d) => {
                    msg!("explain-driver-runs-up-to-named", driver = d, cuda = m, fits => fits)
                }
                None => msg!("explain-driver-runs-up-to", cuda = m, fits => fits),
            })
        }
        None => None,
    };
    fix.push(msg!("explain-check-stub-libcuda"));
    out.push(Explanation {
        id: "driver-insufficient",
        matched,
        meaning: msg!("explain-driver-insufficient"),
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
            (Some(first), Some(rem)) => provided.push(msg!(
                "explain-arch-cuda-range",
                sm = sm,
                first = first,
                removed = rem
            )),
            (Some(first), None) => {
                provided.push(msg!("explain-arch-cuda-from", sm = sm, first = first))
            }
            (None, Some(rem)) => {
                provided.push(msg!("explain-arch-cuda-before", sm = sm, removed = rem))
            }
            (None, None) => provided.push(msg!("explain-arch-unknown", sm = sm)),
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
                    fix.push(msg!(
                        "explain-active-cannot-build-for",
                        name = a.0.name,
                        cuda = a.1,
                        sm = sm,
                        target = tv
                    ));
                }
            }
        }
        if let Some(first) = compat::arch::first_cuda(*g) {
            fix.push(msg!(
                "explain-framework-build-for",
                first = first,
                tag = first.to_string().replace('.', "")
            ));
        }
    }
    if gpus.is_empty() {
        fix.push(msg!("explain-doctor-shows-architecture"));
    }
    out.push(Explanation {
        id: "no-kernel-image",
        matched,
        meaning: msg!("explain-no-kernel-image"),
        provided_by: (!provided.is_empty()).then_some(Msg::Clauses(provided)),
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
        (Some(n), _, _) => fix.push(Msg::verbatim(format!("cudaenv local {n}"))),
        (None, Some(f), _) if found.is_empty() => fix.push(Msg::verbatim(format!(
            "cudaenv install {f} --profile devel && cudaenv local {f}"
        ))),
        (None, None, Some(r)) if found.is_empty() => fix.push(msg!(
            "explain-use-cuda-before",
            removed = r,
            last = format!("{}.9", r.major() - 1)
        )),
        _ => {}
    }
    fix.push(msg!("explain-stop-building-for", sm = g.sm()));
    out.push(Explanation {
        id: "nvcc-arch",
        matched,
        meaning: match g.family() {
            Some(family) => msg!("explain-nvcc-arch", sm = g.sm(), family = family),
            None => msg!("explain-nvcc-arch-unknown-family", sm = g.sm()),
        },
        provided_by: Some(match (first, removed) {
            (Some(f), Some(r)) => msg!("explain-cuda-range", first = f, removed = r),
            (Some(f), None) => Msg::verbatim(format!("CUDA ≥ {f}")),
            (None, Some(r)) => msg!("explain-cuda-before", removed = r),
            _ => msg!("explain-unknown"),
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
        Some(n) => fix.push(Msg::verbatim(format!("cudaenv local {n}"))),
        None if found.is_empty() => fix.push(Msg::verbatim(format!(
            "cudaenv install {torch} --profile devel && cudaenv local {torch}"
        ))),
        None => {}
    }
    out.push(Explanation {
        id: "torch-extension-cuda",
        matched,
        meaning: msg!(
            "explain-torch-extension-cuda",
            detected = detected
                .map(|d| d.to_string())
                .unwrap_or_else(|| "?".into()),
            torch = torch
        ),
        provided_by: Some(msg!("explain-torch-extension-provided-by", torch = torch)),
        installed: Some(text),
        fix,
    });
}

/// A rule whose answer is fixed text: its meaning and fixes are catalogue keys.
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
        meaning: "explain-cudnn-internal-error",
        fix: &[
            "explain-cudnn-internal-error-fix-1",
            "explain-cudnn-internal-error-fix-2",
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
        meaning: "explain-no-device",
        fix: &["explain-no-device-fix-1", "explain-no-device-fix-2"],
    },
    Rule {
        id: "ptx-toolchain",
        needles: &[
            "provided PTX was compiled with an unsupported toolchain",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "cudaErrorUnsupportedPtxVersion",
        ],
        meaning: "explain-ptx-toolchain",
        fix: &["explain-ptx-toolchain-fix-1", "explain-ptx-toolchain-fix-2"],
    },
    Rule {
        id: "compat-not-supported",
        needles: &[
            "forward compatibility was attempted on non supported HW",
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "error 804",
        ],
        meaning: "explain-compat-not-supported",
        fix: &[
            "explain-compat-not-supported-fix-1",
            "explain-compat-not-supported-fix-2",
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
        meaning: "explain-driver-library-mismatch",
        fix: &[
            "explain-driver-library-mismatch-fix-1",
            "explain-driver-library-mismatch-fix-2",
            "explain-driver-library-mismatch-fix-3",
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
        meaning: "explain-cuinit-unknown",
        fix: &[
            "explain-cuinit-unknown-fix-1",
            "explain-cuinit-unknown-fix-2",
            "explain-cuinit-unknown-fix-3",
        ],
    },
    Rule {
        id: "gcc-unsupported",
        needles: &[
            "unsupported GNU version",
            "gcc versions later than",
            "unsupported clang version",
        ],
        meaning: "explain-gcc-unsupported",
        fix: &[
            "explain-gcc-unsupported-fix-1",
            "explain-gcc-unsupported-fix-2",
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
        meaning: "explain-out-of-memory",
        fix: &[
            "explain-out-of-memory-fix-1",
            "explain-out-of-memory-fix-2",
            "explain-out-of-memory-fix-3",
        ],
    },
    Rule {
        id: "cublas-not-initialized",
        needles: &[
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "CUBLAS_STATUS_ARCH_MISMATCH",
        ],
        meaning: "explain-cublas-not-initialized",
        fix: &[
            "explain-cublas-not-initialized-fix-1",
            "explain-cublas-not-initialized-fix-2",
        ],
    },
    Rule {
        id: "tensorflow-no-gpu",
        needles: &[
            "Cannot dlopen some GPU libraries",
            "Skipping registering GPU devices",
        ],
        meaning: "explain-tensorflow-no-gpu",
        fix: &[
            "explain-tensorflow-no-gpu-fix-1",
            "explain-tensorflow-no-gpu-fix-2",
        ],
    },
    Rule {
        id: "dnn-not-found",
        needles: &[
            "DNN library is not found",
            "Unable to load cuDNN",
            "Could not load cudnn",
        ],
        meaning: "explain-dnn-not-found",
        fix: &["explain-dnn-not-found-fix-1", "explain-dnn-not-found-fix-2"],
    },
    Rule {
        id: "torch-cpu-build",
        needles: &["Torch not compiled with CUDA enabled"],
        meaning: "explain-torch-cpu-build",
        fix: &["explain-torch-cpu-build-fix-1"],
    },
    Rule {
        id: "undefined-symbol",
        needles: &[
            "undefined symbol",
            "version `libcublasLt.so",
            "not defined in file",
        ],
        meaning: "explain-undefined-symbol",
        fix: &["explain-undefined-symbol-fix-1"],
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
                meaning: Msg::key(r.meaning),
                provided_by: None,
                installed: None,
                fix: r.fix.iter().map(|k| Msg::key(k)).collect(),
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
            e.provided_by.as_ref().map(Msg::en).unwrap_or_default(),
            e.installed.as_ref().map(Msg::en).unwrap_or_default(),
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
            all[0].matched.ends_with("msvcp140.dll, msvcp140_1.dll"),
            "{all:#?}"
        );
        // ctypes' message also says which stack has the DLL.
        let all = explain(&input(
            "FileNotFoundError: Could not find module 'cudart64_12.dll' (or one of its dependencies).",
        ));
        let ids: Vec<&str> = all.iter().map(|e| e.id).collect();
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
        assert!(e.installed.as_ref().unwrap().en().contains("is active"));
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
            e.installed
                .as_ref()
                .map(Msg::en)
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
                e.provided_by.as_ref().map(Msg::en).as_deref(),
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
            e.meaning.en().contains("does run the active CUDA 12.4.1"),
            "{e:?}"
        );
        assert!(e.fix[0].en().contains("doctor"));
    }

    #[test]
    fn unknown_text_explains_nothing() {
        assert!(explain(&input("segmentation fault in my own code")).is_empty());
    }
}
