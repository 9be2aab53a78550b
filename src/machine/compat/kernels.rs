//! Can a framework's compiled GPU code run on a GPU, and which release can.
//!
//! A library carries machine code (SASS) for some architectures and PTX for
//! some others (`machine::fatbin` reads which). NVIDIA's rules:
//! - SASS built for `sm_XY` runs on GPUs of the same major `X` with a minor
//!   of `Y` or newer (sm_86 code runs on an sm_89 GPU), never across majors;
//! - PTX for `compute_XY` is compiled by the driver for any GPU of `X.Y` or
//!   newer when a kernel is first loaded (slow first start: minutes for a
//!   large framework; the driver caches the result);
//! - nothing else runs: "no kernel image is available for execution on the
//!   device".
//!
//! The release named as the fix comes from the framework tables (a release's
//! builds and the CUDA of each, `registry/compat/{pytorch,jax,cupy}.toml`)
//! and the CUDA architecture table, narrowed by the hand-kept facts of
//! `registry/compat/framework_arch.toml` where a framework's builds leave out
//! architectures their CUDA still supports.

use std::collections::BTreeSet;

use crate::spec::Version;

use super::arch::{self, ComputeCapability, GpuFit};
use super::data::{self, Channel};
use super::framework::Framework;

/// What a GPU can run of a library's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFit {
    /// Machine code for the GPU's architecture, or an older minor of its major.
    Native { sass: ComputeCapability },
    /// No machine code, but PTX for an older architecture: runs after the
    /// driver JIT-compiles it.
    Jit { ptx: ComputeCapability },
    /// No code it can run, and the GPU is older than all of it.
    TooOld { oldest: ComputeCapability },
    /// No code it can run; the library has code only for other (or older) majors.
    Missing { newest: ComputeCapability },
}

impl KernelFit {
    #[cfg(test)]
    pub fn runs(&self) -> bool {
        matches!(self, KernelFit::Native { .. } | KernelFit::Jit { .. })
    }
}

/// `None` when the library has no GPU code at all.
pub fn fit(
    sass: &BTreeSet<ComputeCapability>,
    ptx: &BTreeSet<ComputeCapability>,
    gpu: ComputeCapability,
) -> Option<KernelFit> {
    if let Some(&s) = sass
        .iter()
        .filter(|s| s.major == gpu.major && s.minor <= gpu.minor)
        .max()
    {
        return Some(KernelFit::Native { sass: s });
    }
    if let Some(&p) = ptx.iter().filter(|p| **p <= gpu).max() {
        return Some(KernelFit::Jit { ptx: p });
    }
    let oldest = sass.iter().chain(ptx).min()?;
    let newest = sass.iter().chain(ptx).max()?;
    Some(if gpu < *oldest {
        KernelFit::TooOld { oldest: *oldest }
    } else {
        KernelFit::Missing { newest: *newest }
    })
}

/// A release of a framework and the CUDA of the build to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFor {
    pub release: Version,
    pub cuda: Version,
    pub which: WhichRelease,
}

/// How the release named for a GPU stands to the installed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhichRelease {
    /// The installed release itself: another of its builds has the GPU.
    Same,
    /// The first release after the installed one with such a build.
    Newer,
    /// The newest release with such a build (later ones dropped the GPU).
    Newest,
}

/// The oldest architecture `framework`'s builds for `cuda` carry, where the
/// hand-kept table says it is newer than what the CUDA builds for.
fn floor(framework: Framework, cuda: &Version) -> Option<ComputeCapability> {
    data::framework_arch()
        .floor
        .iter()
        .filter(|f| f.framework == framework.name() && cuda.truncate(2) >= f.cuda_min)
        .max_by(|a, b| a.cuda_min.cmp(&b.cuda_min))
        .and_then(|f| f.oldest.parse().ok())
}

/// Does a stable build of `framework` for `cuda` have machine code for `gpu`?
fn build_runs(framework: Framework, cuda: &Version, gpu: ComputeCapability) -> bool {
    arch::runs_on(cuda, gpu) == GpuFit::Runs && floor(framework, cuda).is_none_or(|f| gpu >= f)
}

/// The release to name for a GPU the installed build cannot run: the
/// installed release itself when another of its builds has machine code for
/// it (a cu128 torch on a Volta, whose cu126 build still has sm_70), else
/// the oldest newer release with such a build (the GPU is newer than the
/// build), or else the newest release with one (the build dropped the GPU);
/// that release's oldest such build.
pub fn release_for(
    framework: Framework,
    installed: &Version,
    gpu: ComputeCapability,
) -> Option<ReleaseFor> {
    let table = match framework {
        Framework::Torch => data::pytorch(),
        Framework::Jax => data::jax(),
        Framework::Cupy => data::cupy(),
        _ => return None,
    };
    // Each release with such a build, oldest first, and that build's CUDA.
    let mut fits: Vec<(&Version, Version)> = table
        .release
        .iter()
        .filter_map(|r| {
            let cuda = r
                .build
                .iter()
                .filter(|b| b.channel == Channel::Stable && build_runs(framework, &b.cuda, gpu))
                .map(|b| b.cuda.clone())
                .min()?;
            Some((&r.version, cuda))
        })
        .collect();
    fits.sort_by(|a, b| a.0.cmp(b.0));
    let mm = installed.truncate(2);
    let (which, (release, cuda)) = if let Some(f) = fits.iter().find(|f| *f.0 == mm) {
        (WhichRelease::Same, f)
    } else if let Some(f) = fits.iter().find(|f| *f.0 > mm) {
        (WhichRelease::Newer, f)
    } else {
        (WhichRelease::Newest, fits.last()?)
    };
    Some(ReleaseFor {
        release: (*release).clone(),
        cuda: cuda.clone(),
        which,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        s.parse().unwrap()
    }
    fn set(v: &[&str]) -> BTreeSet<ComputeCapability> {
        v.iter().map(|s| cc(s)).collect()
    }
    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn sass_runs_within_its_major_ptx_runs_on_newer_gpus_by_jit() {
        // libnvjpeg 12.0.0.28's code: SASS sm_50 … sm_90, PTX compute_90.
        let sass = set(&[
            "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89",
            "sm_90",
        ]);
        let ptx = set(&["sm_90"]);
        let f = |g| fit(&sass, &ptx, cc(g)).unwrap();
        assert_eq!(f("sm_90"), KernelFit::Native { sass: cc("sm_90") });
        assert_eq!(f("sm_87"), KernelFit::Native { sass: cc("sm_86") });
        assert_eq!(f("sm_120"), KernelFit::Jit { ptx: cc("sm_90") });
        assert_eq!(f("sm_100"), KernelFit::Jit { ptx: cc("sm_90") });
        assert_eq!(
            f("sm_37"),
            KernelFit::TooOld {
                oldest: cc("sm_50")
            }
        );
        assert!(!f("sm_37").runs() && f("sm_120").runs());
        // Without the PTX, a Blackwell GPU cannot run it at all.
        assert_eq!(
            fit(&sass, &BTreeSet::new(), cc("sm_120")),
            Some(KernelFit::Missing {
                newest: cc("sm_90")
            })
        );
        // SASS never crosses majors: sm_90 code does not run on sm_100.
        assert!(
            !fit(&set(&["sm_90"]), &BTreeSet::new(), cc("sm_100"))
                .unwrap()
                .runs()
        );
        // PTX for a newer architecture does not run on an older GPU.
        assert_eq!(
            fit(&set(&["sm_100", "sm_120"]), &set(&["sm_121"]), cc("sm_110")),
            Some(KernelFit::Missing {
                newest: cc("sm_121")
            })
        );
        assert_eq!(fit(&BTreeSet::new(), &BTreeSet::new(), cc("sm_90")), None);
    }

    #[test]
    fn names_the_release_that_has_code_for_the_gpu() {
        // A cu124 torch on Blackwell: the first release with a stable CUDA
        // 12.8 build (RELEASE.md calls 2.7's 12.8 build experimental).
        let r = release_for(Framework::Torch, &v("2.4.1"), cc("sm_120")).unwrap();
        assert_eq!(
            (r.release.to_string(), r.cuda.to_string(), r.which),
            ("2.8".into(), "12.8".into(), WhichRelease::Newer)
        );
        // Pascal and a torch whose builds all left it out: the newest release
        // with a CUDA 12.6 (or older) build, not one built with 12.8.
        let r = release_for(Framework::Torch, &v("2.99"), cc("sm_60")).unwrap();
        assert!(r.cuda < v("12.8"), "{r:?}");
        assert_eq!(r.which, WhichRelease::Newest);
        // A cu130 torch 2.11 on a Volta: 2.11's own cu126 build has sm_70,
        // so the answer is that build, not a newer release.
        let r = release_for(Framework::Torch, &v("2.11.0"), cc("sm_70")).unwrap();
        assert_eq!(
            (r.release.to_string(), r.cuda.to_string(), r.which),
            ("2.11".into(), "12.6".into(), WhichRelease::Same)
        );
        assert!(!build_runs(Framework::Torch, &v("12.8"), cc("sm_60")));
        assert!(build_runs(Framework::Torch, &v("12.6"), cc("sm_60")));
        assert!(!build_runs(Framework::Torch, &v("13.0"), cc("sm_70")));
        assert!(build_runs(Framework::Torch, &v("12.9"), cc("sm_70")));
        // CUDA's own rule without a hand-kept floor (CuPy).
        assert!(release_for(Framework::Cupy, &v("13"), cc("sm_120")).is_some());
        assert_eq!(
            release_for(Framework::Tensorflow, &v("2.10"), cc("sm_90")),
            None
        );
    }

    #[test]
    fn the_hand_kept_floors_name_known_frameworks_and_architectures() {
        let t = data::framework_arch();
        assert!(t.source.contains("pytorch/pytorch") && t.source.contains("00c7a380"));
        for f in &t.floor {
            assert!(Framework::parse(&f.framework).is_some(), "{}", f.framework);
            let oldest: ComputeCapability = f.oldest.parse().unwrap();
            assert!(oldest.family().is_some(), "{}", f.oldest);
            // The evidence quotes the arch list that starts at `oldest`.
            let quoted = format!("\"{}.{}", oldest.major, oldest.minor);
            assert!(f.evidence.contains(&quoted), "{}: {}", f.oldest, f.evidence);
        }
    }
}
