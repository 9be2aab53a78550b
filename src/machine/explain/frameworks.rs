//! A framework's complaints about the CUDA it loaded: TensorFlow's CUDA
//! stub, a cuDNN older than the one it was compiled with, a PyTorch
//! extension built with another CUDA.

use crate::i18n::Msg;
use crate::machine::compat::{self, Framework};
use crate::msg;
use crate::spec::Version;

use super::{Answer, Input, answer, has, version_after};
use crate::machine::finding::Finding;

/// TensorFlow's CUDA stub says "Could not find cuda drivers on your machine"
/// (and "Failed call to cudaGetRuntimeVersion: Error loading CUDA libraries")
/// when it cannot load the CUDA runtime it was built against, whether a driver
/// is there or not; from 2.14 on TensorFlow names the libraries it could not
/// load only at `TF_CPP_VMODULE=dso_loader=1` (both seen with TensorFlow 2.21
/// on a machine with driver 580: docs/frameworks.md).
pub(super) fn tensorflow_runtime_stub(input: &Input, t: &str, out: &mut Vec<Finding>) {
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
    let mut e = answer("tensorflow-cuda-runtime", matched, meaning);
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
            e.set_provided_by(msg!(
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
            e.set_installed(text);
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

pub(super) fn cudnn_version_mismatch(input: &Input, t: &str, out: &mut Vec<Finding>) {
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
    let meaning = msg!(
        "explain-cudnn-version-mismatch",
        compiled = compiled,
        loaded = loaded,
        floor = format!("{}.{}", compiled.major(), compiled.minor().unwrap_or(0))
    );
    let provided_by = format!("cuDNN ≥ {need}, < {}", compiled.major() + 1);
    out.push(
        answer("cudnn-version-mismatch", matched, meaning)
            .provided_by(Some(Msg::verbatim(provided_by)))
            .installed(Some(text))
            .fixes(fix),
    );
}

/// The newest CUDA (as a spec prefix) the tables pair with this cuDNN, and
/// the family rule it comes from when the tables lack this release.
fn newest_cuda_for_cudnn(cudnn: &Version) -> Option<(Version, Option<Msg>)> {
    let s = compat::cudnn_support(cudnn)?;
    let cuda = s.cuda.iter().max().cloned()?;
    Some((cuda, s.rule_note()))
}

pub(super) fn torch_extension_mismatch(input: &Input, t: &str, out: &mut Vec<Finding>) {
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
    let meaning = msg!(
        "explain-torch-extension-cuda",
        detected = detected
            .map(|d| d.to_string())
            .unwrap_or_else(|| "?".into()),
        torch = torch
    );
    out.push(
        answer("torch-extension-cuda", matched, meaning)
            .provided_by(Some(msg!(
                "explain-torch-extension-provided-by",
                torch = torch
            )))
            .installed(Some(text))
            .fixes(fix),
    );
}
