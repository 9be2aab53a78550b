//! A library the loader did not find: which CUDA, cuDNN, NCCL, TensorRT or
//! driver provides it, whether an installed version has it, and the stack
//! to install or switch to.

use crate::i18n::Msg;
use crate::machine::compat;
use crate::machine::compat::libraries::{self, LibraryId, Provider};
use crate::msg;
use crate::spec::{Library, Version};

use super::windows::{is_dll, visual_cpp_runtime, windows_hook, windows_library};
use super::{Answer, Input, answer, has, words};
use crate::machine::finding::Finding;

pub(super) fn missing_library(input: &Input, t: &str, out: &mut Vec<Finding>) {
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

pub(super) fn explain_library(input: &Input, lib: &LibraryId, matched: &str) -> Finding {
    let windows = is_dll(&lib.file);
    let m = Missing {
        input,
        lib,
        win_note: if windows {
            msg!("explain-windows-dll-note")
        } else {
            Msg::verbatim("")
        },
        hook: if windows {
            windows_hook()
        } else {
            msg!("explain-run-with-hook")
        },
    };
    let mut e = missing_library_answer(lib, matched);
    match &lib.provider {
        Provider::Driver => {
            e.message =
                msg!("explain-missing-driver-library", file = lib.file, windows => m.win_note);
            e.fix.push(msg!("explain-missing-driver-library-fix"));
            e.fix.push(Msg::verbatim("cudaenv doctor"));
        }
        Provider::Library {
            library: Library::Tensorrt,
            major,
        } if *major < 10 => {
            e.message = msg!("explain-lib-tensorrt-old", file = lib.file, major = major);
            e.set_provided_by(msg!("explain-lib-tensorrt-old-provided-by", major = major));
            e.fix.push(msg!("explain-lib-tensorrt-old-fix-1"));
            e.fix.push(if *major == 8 {
                // pypi.org's `tensorrt` 8.5/8.6 wheels carry libnvinfer.so.8
                // in site-packages/tensorrt/ (`link` records it).
                msg!("explain-lib-tensorrt-8-fix")
            } else {
                msg!("explain-lib-tensorrt-old-fix-2", major = major)
            });
        }
        Provider::Library { library, major } => m.beside_the_toolkit(&mut e, *library, *major),
        Provider::Cuda { cuda } => m.of_cuda(&mut e, cuda),
        Provider::Cudnn { major } => m.of_cudnn(&mut e, *major),
        Provider::VisualCppRuntime => {
            return visual_cpp_runtime(std::slice::from_ref(&lib.file), matched);
        }
        Provider::Unknown => {
            e.message = msg!("explain-missing-unknown-library", file = lib.file);
            e.fix.push(Msg::verbatim("cudaenv doctor"));
        }
    }
    e
}

/// A library not found, and what every answer about it needs.
struct Missing<'a> {
    input: &'a Input,
    lib: &'a LibraryId,
    /// For a DLL: what differs in Windows' search.
    win_note: Msg,
    /// How a program started from here gets the active stack's environment.
    hook: Msg,
}

impl Missing<'_> {
    /// NCCL, TensorRT ≥ 10, cuSPARSELt or cuTENSOR: a stack that carries
    /// that major, or one to install with the active CUDA.
    fn beside_the_toolkit(&self, e: &mut Finding, library: Library, major: u32) {
        let (input, lib) = (self.input, self.lib);
        let role = match library {
            Library::Nccl => msg!("explain-lib-role-nccl"),
            Library::Tensorrt => msg!("explain-lib-role-tensorrt"),
            Library::Cusparselt => msg!("explain-lib-role-cusparselt"),
            Library::Cutensor => msg!("explain-lib-role-cutensor"),
        };
        e.message = msg!(
            "explain-lib-missing",
            file = lib.file,
            title = library.title(),
            major = major,
            role => role,
            windows => self.win_note.clone()
        );
        let found = input.providers(|s| s.libs.get(library).is_some_and(|v| v.major() == major));
        let (text, switch) = input.installed_text(&found);
        e.set_installed(text);
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
            None => e.fix.push(self.hook.clone()),
        }
    }

    /// A CUDA toolkit library, shipped by the releases `cuda`: a stack of
    /// one of them, else the one a framework here was built with, else the
    /// newest of them.
    fn of_cuda(&self, e: &mut Finding, cuda: &[Version]) {
        let (input, lib) = (self.input, self.lib);
        e.message = msg!(
            "explain-missing-cuda-library",
            file = lib.file,
            provider => lib.describe_provider(),
            windows => self.win_note.clone()
        );
        let found = input.providers(|s| {
            s.cuda
                .as_ref()
                .is_some_and(|c| cuda.iter().any(|p| c.truncate(2) == *p || c.matches(p)))
        });
        let (text, switch) = input.installed_text(&found);
        e.set_installed(text);
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
            None => e.fix.push(self.hook.clone()),
        }
    }

    /// A cuDNN library of `major` (its core or a sub-library): a stack with
    /// that major, else the one a framework here was built with, else one
    /// paired with a CUDA it supports.
    fn of_cudnn(&self, e: &mut Finding, major: u32) {
        let (input, lib) = (self.input, self.lib);
        let sub = lib.component != "cudnn";
        e.message = if sub {
            msg!("explain-missing-cudnn-sub-library", file = lib.file, major = major, windows => self.win_note.clone())
        } else {
            msg!("explain-missing-cudnn", file = lib.file, major = major, windows => self.win_note.clone())
        };
        let found = input.providers(|s| s.cudnn.as_ref().is_some_and(|c| c.major() == major));
        let (text, switch) = input.installed_text(&found);
        e.set_installed(text);
        match switch {
            Some(name) => e.fix.push(Msg::verbatim(format!("cudaenv local {name}"))),
            None if found.is_empty() => {
                let spec = input
                    .framework_choice(|c| c.spec.cudnn.as_ref().is_some_and(|d| d.major() == major))
                    .map(|(arg, _)| format!("--for {arg}"))
                    .unwrap_or_else(|| cudnn_stack_for(input, major));
                e.fix.push(Msg::verbatim(format!("cudaenv install {spec}")));
                e.fix.push(Msg::verbatim(format!("cudaenv local {spec}")));
            }
            None => e.fix.push(msg!("explain-run-with-active-cudnn")),
        }
        if sub {
            e.fix.push(msg!("explain-doctor-lists-cudnn-copies"));
        }
    }
}

/// The frame of a missing library's answer: what matched and who provides
/// the file; each provider's meaning and fixes fill it in.
pub(super) fn missing_library_answer(lib: &LibraryId, matched: &str) -> Finding {
    let matched = format!("{matched} … {}", lib.file);
    answer("missing-library", matched, Msg::verbatim("")).provided_by(Some(msg!(
        "ui-provider-file",
        provider => lib.describe_provider(),
        file = lib.file
    )))
}
