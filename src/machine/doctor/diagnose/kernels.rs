//! A framework's own GPU code (read from its libraries) against the GPUs of
//! the machine planned for.

use crate::i18n::Msg;
use crate::machine::compat::{self, ComputeCapability, Framework};
use crate::msg;
use crate::spec::Version;

use crate::machine::doctor::python::InstalledFramework;
use super::{Out, family_of, v};

/// An installed framework's own GPU code (read from its libraries) against
/// each GPU of the machine planned for: machine code runs, PTX of an older
/// architecture runs after the driver JIT-compiles it, nothing else runs.
pub(super) fn kernel_findings(fw: &InstalledFramework, machine: &compat::Machine, o: &mut Out) {
    use compat::kernels::{self, KernelFit};
    for lib in fw.kernels.iter().filter(|l| l.error.is_some()) {
        o.warn(
            "framework-arch",
            msg!(
                "doctor-kernels-unreadable",
                package = fw.package,
                file = lib.file,
                error = lib.error.as_deref().unwrap_or("")
            ),
            msg!("doctor-kernels-unreadable-fix", package = fw.package),
        );
    }
    let libs: Vec<_> = fw
        .kernels
        .iter()
        .filter(|l| l.error.is_none() && !(l.sass.is_empty() && l.ptx.is_empty()))
        .collect();
    if libs.is_empty() {
        return;
    }
    let gpu_word = match machine.whose {
        compat::Whose::ThisMachine => msg!("doctor-this-gpu"),
        compat::Whose::Target => msg!("doctor-target-gpu"),
    };
    let mut gpus = machine.gpus.clone();
    gpus.sort();
    gpus.dedup();
    let sms = |set: &std::collections::BTreeSet<ComputeCapability>| -> Msg {
        if set.is_empty() {
            msg!("doctor-kernels-none")
        } else {
            Msg::verbatim(set.iter().map(|c| c.sm()).collect::<Vec<_>>().join(", "))
        }
    };
    for gpu in gpus {
        let rank = |k: &KernelFit| match k {
            KernelFit::Native { .. } => 0,
            KernelFit::Jit { .. } => 1,
            KernelFit::TooOld { .. } | KernelFit::Missing { .. } => 2,
        };
        let fits: Vec<_> = libs
            .iter()
            .filter_map(|l| Some((*l, kernels::fit(&l.sass, &l.ptx, gpu)?)))
            .collect();
        // The best-covered library decides whether the framework runs there;
        // one that fares worse is a warning of its own, since its operations
        // fail there. (torch 2.11+cu130's libtorch_cuda.so has sm_75 code,
        // its libtorch_cuda_linalg.so, loaded for linear algebra, has not.)
        let Some(&(lib, fit)) = fits.iter().min_by_key(|(_, k)| rank(k)) else {
            continue;
        };
        let worse: Vec<_> = fits.iter().filter(|(_, k)| rank(k) > rank(&fit)).collect();
        let sm = gpu.sm();
        let family = family_of(gpu);
        let version = fw.version.split('+').next().unwrap_or(&fw.version);
        let fix = || match v(version).and_then(|ver| kernels::release_for(fw.framework, &ver, gpu))
        {
            Some(r) if r.newer => msg!(
                "doctor-kernels-fix-newer",
                package = fw.package,
                release = r.release,
                cuda = r.cuda,
                sm = sm,
                command = install_command(fw, &r.release, &r.cuda)
            ),
            Some(r) => msg!(
                "doctor-kernels-fix-older",
                package = fw.package,
                release = r.release,
                cuda = r.cuda,
                sm = sm,
                command = install_command(fw, &r.release, &r.cuda)
            ),
            None => msg!("doctor-kernels-fix-none", package = fw.package, sm = sm),
        };
        match fit {
            KernelFit::Native { sass } => o.ok(
                "framework-arch",
                msg!(
                    "doctor-kernels-native",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    sass = sass.sm()
                ),
            ),
            KernelFit::Jit { ptx } => o.warn(
                "framework-arch",
                msg!(
                    "doctor-kernels-jit",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    file = lib.file,
                    sass => sms(&lib.sass),
                    ptx = ptx.sm()
                ),
                fix(),
            ),
            KernelFit::TooOld { .. } | KernelFit::Missing { .. } => o.error(
                "framework-arch",
                msg!(
                    "doctor-kernels-missing",
                    package = fw.package,
                    version = fw.version,
                    gpu => gpu_word.clone(),
                    sm = sm,
                    family => family.clone(),
                    file = lib.file,
                    sass => sms(&lib.sass),
                    ptx => sms(&lib.ptx)
                ),
                fix(),
            ),
        }
        for (part, k) in worse {
            let runs = if matches!(k, KernelFit::Jit { .. }) {
                "jit"
            } else {
                "no"
            };
            let text = msg!(
                "doctor-kernels-partial",
                package = fw.package,
                version = fw.version,
                gpu => gpu_word.clone(),
                sm = sm,
                file = part.file,
                sass => sms(&part.sass),
                ptx => sms(&part.ptx),
                runs = runs
            );
            o.warn("framework-arch", text, fix());
        }
    }
}

/// The pip command that installs `release` of this framework built for `cuda`.
fn install_command(fw: &InstalledFramework, release: &Version, cuda: &Version) -> String {
    let tag = format!("{}{}", cuda.major(), cuda.minor().unwrap_or(0));
    match fw.framework {
        Framework::Torch => format!(
            "pip install \"torch=={release}.*\" --index-url https://download.pytorch.org/whl/cu{tag}"
        ),
        Framework::Jax => format!("pip install \"jax[cuda{}]=={release}.*\"", cuda.major()),
        Framework::Cupy => format!("pip install \"cupy-cuda{}x=={release}.*\"", cuda.major()),
        _ => format!("pip install \"{}=={release}.*\"", fw.package),
    }
}
