//! A framework's own GPU code (read from its libraries) against the GPUs of
//! the machine planned for.

use std::collections::BTreeSet;

use crate::i18n::Msg;
use crate::machine::compat::kernels::{self, KernelFit, WhichRelease};
use crate::machine::compat::{self, ComputeCapability, Framework};
use crate::machine::doctor::python::{InstalledFramework, LibraryKernels};
use crate::msg;
use crate::spec::Version;

use super::{Out, family_of, v};

/// An installed framework's own GPU code (read from its libraries) against
/// each GPU of the machine planned for: machine code runs, PTX of an older
/// architecture runs after the driver JIT-compiles it, nothing else runs.
pub(super) fn kernel_findings(fw: &InstalledFramework, machine: &compat::Machine, o: &mut Out) {
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
    for gpu in gpus {
        gpu_kernel_findings(fw, &libs, gpu, &gpu_word, o);
    }
}

/// How well a fit runs: machine code, then JIT-compiled PTX, then not at all.
fn rank(k: &KernelFit) -> u8 {
    match k {
        KernelFit::Native { .. } => 0,
        KernelFit::Jit { .. } => 1,
        KernelFit::TooOld { .. } | KernelFit::Missing { .. } => 2,
    }
}

/// A set of architectures as `sm_80, sm_90`, or "none".
fn sms(set: &BTreeSet<ComputeCapability>) -> Msg {
    if set.is_empty() {
        msg!("doctor-kernels-none")
    } else {
        Msg::verbatim(set.iter().map(|c| c.sm()).collect::<Vec<_>>().join(", "))
    }
}

/// The framework's libraries against one GPU.
fn gpu_kernel_findings(
    fw: &InstalledFramework,
    libs: &[&LibraryKernels],
    gpu: ComputeCapability,
    gpu_word: &Msg,
    o: &mut Out,
) {
    let fits: Vec<_> = libs
        .iter()
        .filter_map(|l| Some((*l, kernels::fit(&l.sass, &l.ptx, gpu)?)))
        .collect();
    // The best-covered library decides whether the framework runs there;
    // one that fares worse is a warning of its own, since its operations
    // fail there. (torch 2.11+cu130's libtorch_cuda.so has sm_75 code,
    // its libtorch_cuda_linalg.so, loaded for linear algebra, has not.)
    let Some(&(lib, fit)) = fits.iter().min_by_key(|(_, k)| rank(k)) else {
        return;
    };
    let worse: Vec<_> = fits.iter().filter(|(_, k)| rank(k) > rank(&fit)).collect();
    let sm = gpu.sm();
    let family = family_of(gpu);
    let fix = || kernel_fix(fw, gpu);
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

/// The fix for a GPU the framework's code does not cover: the release to
/// install (`kernels::release_for`) with its pip command, or none.
fn kernel_fix(fw: &InstalledFramework, gpu: ComputeCapability) -> Msg {
    let sm = gpu.sm();
    let version = fw.version.split('+').next().unwrap_or(&fw.version);
    match v(version).and_then(|ver| kernels::release_for(fw.framework, &ver, gpu)) {
        Some(r) => msg!(
            "doctor-kernels-fix",
            which = match r.which {
                WhichRelease::Same => "same",
                WhichRelease::Newer => "newer",
                WhichRelease::Newest => "newest",
            },
            package = fw.package,
            release = r.release,
            cuda = r.cuda,
            sm = sm,
            command = install_command(fw, &r.release, &r.cuda)
        ),
        None => msg!("doctor-kernels-fix-none", package = fw.package, sm = sm),
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
