//! Windows' messages: a DLL its loader did not find (where Windows looks,
//! the stack TensorFlow's Windows builds were tested with), Python's `DLL
//! load failed`, ctypes' search, and Microsoft's Visual C++ runtime.

use crate::i18n::Msg;
use crate::machine::compat;
use crate::machine::compat::libraries::{LibraryId, Provider};
use crate::msg;
use crate::spec::Version;

use super::libraries::{explain_library, missing_library_answer};
use super::{Answer, Input, answer, has, words};
use crate::machine::finding::Finding;

pub(super) fn is_dll(file: &str) -> bool {
    file.len() > 4
        && file.is_char_boundary(file.len() - 4)
        && file[file.len() - 4..].eq_ignore_ascii_case(".dll")
}

/// The fix that makes a program see the active stack on Windows: `cudaenv
/// exec` or the PowerShell hook (a program started before keeps its PATH).
pub(super) fn windows_hook() -> Msg {
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
pub(super) fn windows_library(input: &Input, lib: &LibraryId, matched: &str) -> Finding {
    let note = msg!("explain-windows-dll-note");
    let mut e = missing_library_answer(lib, matched);
    let (found, tested, sub) = match &lib.provider {
        Provider::Driver => {
            e.message = msg!("explain-win-missing-driver", file = lib.file);
            e.fix.push(msg!("explain-win-missing-driver-fix"));
            e.fix.push(Msg::verbatim("cudaenv doctor"));
            return e;
        }
        Provider::Cuda { cuda } => {
            e.message = msg!(
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
            e.message = if sub {
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
    e.set_installed(text);
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
pub(super) fn visual_cpp_runtime(files: &[String], matched: &str) -> Finding {
    let files = files.join(", ");
    let meaning = msg!("explain-vc-runtime", files = files);
    answer(
        "vc-runtime-missing",
        format!("{matched} … {files}"),
        meaning,
    )
    .provided_by(Some(msg!("explain-vc-runtime-provided-by")))
    .fixes(vec![
        msg!("explain-win-vc-redist"),
        msg!("explain-vc-runtime-fix-doctor"),
    ])
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
pub(super) fn dll_load_failed(t: &str, out: &mut Vec<Finding>) {
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
    out.push(answer(id, matched, meaning).fixes(fix));
}

/// ctypes on Python ≥ 3.8: `Could not find module 'X.dll' (or one of its
/// dependencies). Try using the full path with constructor syntax.` — PATH
/// is not searched (`winmode` defaults to the safe search).
pub(super) fn ctypes_dll_search(t: &str, out: &mut Vec<Finding>) {
    let Some(matched) = has(t, &["(or one of its dependencies)"]) else {
        return;
    };
    let Some(file) = words(t).filter(|w| is_dll(w)).map(base_name).next() else {
        return;
    };
    let meaning = msg!("explain-win-ctypes-dll-search", file = file);
    out.push(answer("ctypes-dll-search", matched, meaning).fixes(vec![
        msg!("explain-win-ctypes-full-path", file = file),
        msg!("explain-win-ctypes-winmode", file = file),
    ]));
}
