//! Compatibility knowledge: which driver, GPU, cuDNN and framework go with
//! which CUDA — the tables users otherwise look up in release notes.
//!
//! The data lives in `registry/compat/*.toml` (generated from public tables by
//! `scripts/gen-compat-registry.py`, each with a `source =` line) and is embedded
//! in the binary (`data`). This module answers questions over it and knows
//! nothing about the machine it runs on: callers describe the machine with a
//! plain `Machine` value (filled by `doctor`'s fact gathering), so every answer
//! is a pure function that tests can table-drive.

pub mod arch;
pub mod data;
pub mod driver;
pub mod framework;
pub mod libraries;
pub mod smi;

use serde::Serialize;

pub use arch::{Alternative, ArchSupport, ComputeCapability, GpuFit};
pub use driver::{DriverFit, DriverOs, DriverRequirement, DriverVersion};
pub use framework::{Framework, FrameworkReq, Requirement, StackChoice, stack_for};

use crate::spec::Version;

/// Serializes a value by its `Display` form (specs are written as users write them).
pub fn ser_display<T: std::fmt::Display, S: serde::Serializer>(
    v: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// What the compatibility rules need to know about a machine. Empty (no driver,
/// no GPUs) on CI and build machines, which is a normal case: nothing is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Machine {
    pub driver: Option<DriverVersion>,
    pub driver_os: DriverOs,
    pub gpus: Vec<ComputeCapability>,
}

impl Machine {
    pub fn is_known(&self) -> bool {
        self.driver.is_some() || !self.gpus.is_empty()
    }
}

/// Does this cuDNN release support this CUDA release? `None` when the tables
/// do not say (cuDNN before 8.1, or a different major than any row).
pub fn cudnn_supports(cudnn: &Version, cuda: &Version) -> Option<bool> {
    let mm = cudnn.truncate(2);
    let row = data::cudnn()
        .release
        .iter()
        .filter(|r| r.cudnn.major() == cudnn.major() && r.cudnn <= mm)
        .max_by(|a, b| a.cudnn.cmp(&b.cudnn))?;
    Some(row.cuda.iter().any(|p| cuda.matches(p)))
}

/// A problem the install-time guard found: the stack would not run here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GuardIssue {
    DriverTooOld {
        driver: DriverVersion,
        need: DriverVersion,
    },
    /// Runs through minor version compatibility only (no PTX JIT of newer code).
    MinorCompatOnly {
        driver: DriverVersion,
        release_min: DriverVersion,
    },
    ArchRemoved {
        sm: String,
        since: Version,
    },
    ArchTooNew {
        sm: String,
        first: Option<Version>,
    },
}

impl GuardIssue {
    /// True for problems that stop programs from running (refused with `--strict`).
    pub fn is_blocking(&self) -> bool {
        !matches!(self, GuardIssue::MinorCompatOnly { .. })
    }

    pub fn message(&self, cuda: &Version) -> String {
        match self {
            GuardIssue::DriverTooOld { driver, need } => format!(
                "CUDA {cuda} needs NVIDIA driver ≥ {need}; this machine has {driver} (programs fail with \"CUDA driver version is insufficient\")"
            ),
            GuardIssue::MinorCompatOnly {
                driver,
                release_min,
            } => format!(
                "driver {driver} runs CUDA {cuda} through minor version compatibility only; PTX JIT of code built for it needs ≥ {release_min}"
            ),
            GuardIssue::ArchRemoved { sm, since } => format!(
                "CUDA {since} and later do not support this machine's GPU ({sm}); CUDA {cuda} cannot run on it (\"no kernel image is available\")"
            ),
            GuardIssue::ArchTooNew { sm, first } => match first {
                Some(f) => format!(
                    "this machine's GPU ({sm}) needs CUDA ≥ {f}; CUDA {cuda} has no native code for it (PTX JIT only; libraries without PTX fail)"
                ),
                None => format!(
                    "this machine's GPU ({sm}) is newer than every CUDA release cudaenv knows"
                ),
            },
        }
    }
}

/// The install-time guard: what would keep `cuda` from running on `machine`.
/// An unknown machine (no driver, no GPU) yields nothing.
pub fn guard(machine: &Machine, cuda: &Version) -> Vec<GuardIssue> {
    let mut out = Vec::new();
    if let Some(d) = &machine.driver {
        match driver::fit(d, cuda, machine.driver_os) {
            DriverFit::TooOld { need } => out.push(GuardIssue::DriverTooOld {
                driver: d.clone(),
                need,
            }),
            DriverFit::MinorCompat { release_min } => out.push(GuardIssue::MinorCompatOnly {
                driver: d.clone(),
                release_min,
            }),
            DriverFit::Full | DriverFit::Unknown => {}
        }
    }
    let mut seen = Vec::new();
    for gpu in &machine.gpus {
        if seen.contains(gpu) {
            continue;
        }
        seen.push(*gpu);
        match arch::support(cuda, *gpu) {
            ArchSupport::Removed { since } => out.push(GuardIssue::ArchRemoved {
                sm: gpu.sm(),
                since,
            }),
            ArchSupport::TooNew { first } => out.push(GuardIssue::ArchTooNew {
                sm: gpu.sm(),
                first,
            }),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn cudnn_cuda_pairs() {
        let cases = [
            ("8.1", "11.2", Some(true)),
            ("8.1", "11.8", Some(false)),
            ("8.1.0.77", "10.2", Some(true)),
            ("8.9", "12.4", Some(true)),
            ("8.9.7.29", "11.8", Some(true)),
            ("8.7", "12.1", Some(false)),
            ("9.1", "12.4", Some(true)),
            ("9.1", "13.0", Some(false)),
            ("9.10.2.21", "12.6", Some(true)),
            ("9.12", "13.0", Some(true)),
            ("9.17.1.4", "13.0", Some(true)),
            ("9.12", "11.8", Some(false)),
            ("8.0", "11.0", None),
            ("7.6", "10.1", None),
        ];
        for (cudnn, cuda, want) in cases {
            assert_eq!(
                cudnn_supports(&v(cudnn), &v(cuda)),
                want,
                "cuDNN {cudnn} on CUDA {cuda}"
            );
        }
    }

    #[test]
    fn guard_cases() {
        let m = |driver: &str, gpus: &[(u32, u32)]| Machine {
            driver: DriverVersion::parse(driver),
            driver_os: DriverOs::Linux,
            gpus: gpus
                .iter()
                .map(|&(a, b)| ComputeCapability::new(a, b))
                .collect(),
        };
        assert!(
            guard(&Machine::default(), &v("13.0")).is_empty(),
            "no GPU, no driver: nothing to say"
        );
        assert!(guard(&m("580.159.04", &[(9, 0)]), &v("13.0")).is_empty());
        let g = guard(&m("570.26", &[(9, 0)]), &v("13.0"));
        assert!(matches!(&g[..], [GuardIssue::DriverTooOld { .. }]), "{g:?}");
        assert!(g[0].is_blocking());
        assert!(g[0].message(&v("13.0")).contains("≥ 580"));
        let g = guard(&m("535.104.05", &[(8, 0)]), &v("12.4"));
        assert!(
            matches!(&g[..], [GuardIssue::MinorCompatOnly { .. }]),
            "{g:?}"
        );
        assert!(!g[0].is_blocking());
        let g = guard(&m("580.159.04", &[(6, 1), (6, 1)]), &v("13.0"));
        assert!(matches!(&g[..], [GuardIssue::ArchRemoved { .. }]), "{g:?}");
        let g = guard(&m("580.159.04", &[(9, 0)]), &v("11.2"));
        assert!(matches!(&g[..], [GuardIssue::ArchTooNew { .. }]), "{g:?}");
        assert!(g[0].message(&v("11.2")).contains("≥ 11.8"));
        assert!(
            guard(&m("580.159.04", &[(8, 9)]), &v("11.1")).is_empty(),
            "an sm_89 GPU runs 11.1's sm_86 machine code"
        );
    }
}
