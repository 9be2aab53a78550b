//! Compatibility knowledge: which driver, GPU, cuDNN and framework go with
//! which CUDA — the tables users otherwise look up in release notes.
//!
//! The data lives in `registry/compat/*.toml` (generated from public tables by
//! `scripts/gen-compat-registry.py`, and from the frameworks' own wheel
//! metadata by `scripts/gen-framework-compat.py`; each with a `source =` line) and is embedded
//! in the binary (`data`). This module answers questions over it and knows
//! nothing about the machine it runs on: callers describe the machine with a
//! plain `Machine` value (filled by `machine::facts`, the one gatherer), so every answer
//! is a pure function that tests can table-drive.

pub(crate) mod arch;
pub(crate) mod data;
pub(crate) mod driver;
pub(crate) mod framework;
pub(crate) mod kernels;
pub(crate) mod libraries;
pub(crate) mod metadata;
pub(crate) mod target;

use serde::Serialize;

pub use arch::{Alternative, ArchSupport, ComputeCapability, GpuFit};
pub use driver::{DriverFit, DriverOs, DriverVersion};
pub use framework::{Framework, FrameworkReq, StackChoice, stack_for, stack_for_on};

use crate::i18n::Msg;
use crate::msg;
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
    /// Whether this is the machine cudaenv runs on or a target given for it;
    /// every message about the machine names it accordingly.
    pub whose: Whose,
}

/// Whose driver and GPUs a [`Machine`] describes. `Target` is set only by
/// `target::Target::machine`, where a target replaces this machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Whose {
    /// The machine cudaenv runs on.
    #[default]
    ThisMachine,
    /// The machine given with `--target-driver` / `--target-arch`.
    Target,
}

impl Machine {
    pub fn is_known(&self) -> bool {
        self.driver.is_some() || !self.gpus.is_empty()
    }

    /// How messages name the machine: `this machine`, `the target machine`.
    pub fn name(&self) -> &'static str {
        match self.whose {
            Whose::ThisMachine => "this machine",
            Whose::Target => "the target machine",
        }
    }

    /// The name with what is known of a target, for a message that names it
    /// once: `the target machine (driver 550.54.15, sm_90)`. This machine
    /// needs no description.
    pub fn title(&self) -> String {
        match self.whose {
            Whose::ThisMachine => self.name().into(),
            Whose::Target => format!("{} ({})", self.name(), self.describe()),
        }
    }

    /// `driver 550.54.15, sm_90`, with `unknown` for a part not known.
    pub fn describe(&self) -> String {
        let driver = match &self.driver {
            Some(d) => format!("driver {d}"),
            None => "driver unknown".into(),
        };
        let gpus = if self.gpus.is_empty() {
            "GPU architecture unknown".into()
        } else {
            self.gpus
                .iter()
                .map(|g| g.sm())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("{driver}, {gpus}")
    }

    /// How messages name the machine's driver `d`: `driver 550.54.15`, or
    /// `the target machine's driver 550.54.15`.
    pub fn driver_named(&self, d: &DriverVersion) -> String {
        match self.whose {
            Whose::ThisMachine => format!("driver {d}"),
            Whose::Target => format!("{}'s driver {d}", self.name()),
        }
    }

    /// How messages name one of the machine's GPUs: `this GPU`, `the target
    /// machine's GPU`.
    #[cfg(test)]
    pub fn gpu_named(&self) -> String {
        match self.whose {
            Whose::ThisMachine => "this GPU".into(),
            Whose::Target => format!("{}'s GPU", self.name()),
        }
    }
}

/// The CUDA releases a cuDNN release is built for, by the cuDNN table
/// (`registry/compat/cudnn.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CudnnSupport {
    /// The table row the answer comes from (`9.28`).
    #[serde(serialize_with = "ser_display")]
    pub row: Version,
    /// CUDA prefixes it is built for (`12`, `13`; `11.2` for one minor).
    pub cuda: Vec<Version>,
    /// Set when the release is newer than every row of its major (a cuDNN
    /// 9.40 wheel from PyPI while the table stops at 9.28): the answer is the
    /// rule of its family (`9.x`), the newest row of that major, not a
    /// published row of its own.
    pub family_rule: Option<String>,
}

impl CudnnSupport {
    /// Does this cuDNN support this CUDA release?
    pub fn supports(&self, cuda: &Version) -> bool {
        self.cuda.iter().any(|p| cuda.matches(p))
    }

    /// The CUDA releases, as a reader would write them (`CUDA 12.x, 13.x`).
    pub fn describe_cuda(&self) -> String {
        let list: Vec<String> = self
            .cuda
            .iter()
            .map(|c| match c.minor() {
                Some(_) => c.to_string(),
                None => format!("{c}.x"),
            })
            .collect();
        format!("CUDA {}", list.join(", "))
    }

    /// Where the figure comes from, for a release the table lacks:
    /// `the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28`.
    pub fn rule_note(&self) -> Option<Msg> {
        self.family_rule
            .as_ref()
            .map(|f| msg!("ui-cudnn-rule-note", family = f, row = self.row))
    }
}

/// What the cuDNN table says about this cuDNN release. A release between two
/// rows has the support of the older row (the table lists the releases whose
/// support changed); one newer than every row of its major gets the rule of
/// its family, marked in `family_rule`. `None` when the table has no row of
/// its major at or below it (cuDNN before 8.1, or an unknown major).
pub fn cudnn_support(cudnn: &Version) -> Option<CudnnSupport> {
    let mm = cudnn.truncate(2);
    let of_major = || {
        data::cudnn()
            .release
            .iter()
            .filter(|r| r.cudnn.major() == cudnn.major())
    };
    let row = of_major()
        .filter(|r| r.cudnn <= mm)
        .max_by(|a, b| a.cudnn.cmp(&b.cudnn))?;
    let newest = of_major().all(|r| r.cudnn < mm);
    Some(CudnnSupport {
        row: row.cudnn.clone(),
        cuda: row.cuda.clone(),
        family_rule: newest.then(|| format!("{}.x", cudnn.major())),
    })
}

/// Does this cuDNN release support this CUDA release? `None` when the tables
/// do not say (cuDNN before 8.1, or a different major than any row).
pub fn cudnn_supports(cudnn: &Version, cuda: &Version) -> Option<bool> {
    cudnn_support(cudnn).map(|s| s.supports(cuda))
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

    /// The problem as a sentence about `machine` (the one `guard` was asked about).
    pub fn message(&self, cuda: &Version, machine: &Machine) -> String {
        let name = machine.name();
        match self {
            GuardIssue::DriverTooOld { driver, need } => format!(
                "CUDA {cuda} needs NVIDIA driver ≥ {need}; {name} has {driver} (programs fail with \"CUDA driver version is insufficient\")"
            ),
            GuardIssue::MinorCompatOnly {
                driver,
                release_min,
            } => format!(
                "{} runs CUDA {cuda} through minor version compatibility only; PTX JIT of code built for it needs ≥ {release_min}",
                machine.driver_named(driver)
            ),
            GuardIssue::ArchRemoved { sm, since } => format!(
                "CUDA {since} and later do not support {name}'s GPU ({sm}); CUDA {cuda} cannot run on it (\"no kernel image is available\")"
            ),
            GuardIssue::ArchTooNew { sm, first } => match first {
                Some(f) => format!(
                    "{name}'s GPU ({sm}) needs CUDA ≥ {f}; CUDA {cuda} has no native code for it (PTX JIT only; libraries without PTX fail)"
                ),
                None => {
                    format!("{name}'s GPU ({sm}) is newer than every CUDA release cudaenv knows")
                }
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

/// The oldest TensorFlow (Linux) and PyTorch (stable) releases built with a
/// CUDA that has machine code for `gpu`, as `TensorFlow 2.12 (CUDA 11.8)`:
/// what to move to when a stack predates the GPU.
pub fn first_frameworks_for(gpu: ComputeCapability) -> Vec<String> {
    let native = |cuda: &Version| arch::runs_on(cuda, gpu) == GpuFit::Runs;
    let mut out = Vec::new();
    if let Some(b) = data::tensorflow()
        .build
        .iter()
        .filter(|b| b.platform == "linux" && native(&b.cuda))
        .min_by(|a, b| a.version.cmp(&b.version))
    {
        out.push(format!(
            "TensorFlow {} (CUDA {})",
            b.version.truncate(2),
            b.cuda
        ));
    }
    if let Some((r, cuda)) = data::pytorch()
        .release
        .iter()
        .filter_map(|r| {
            let cuda = r
                .build
                .iter()
                .filter(|b| b.channel == data::Channel::Stable && native(&b.cuda))
                .map(|b| &b.cuda)
                .min()?;
            Some((r, cuda))
        })
        .min_by(|a, b| a.0.version.cmp(&b.0.version))
    {
        out.push(format!("PyTorch {} (CUDA {cuda})", r.version));
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

    /// A cuDNN the table has is its own row (or the older row it sits
    /// between); one newer than every row of its major takes the newest row
    /// of that major and says it is the family's rule.
    #[test]
    fn cudnn_releases_newer_than_the_table_get_the_family_rule() {
        let newest_9 = data::cudnn()
            .release
            .iter()
            .filter(|r| r.cudnn.major() == 9)
            .map(|r| r.cudnn.clone())
            .max()
            .unwrap();
        assert_eq!(newest_9.to_string(), "9.28", "the table's newest 9.x row");

        for listed in ["9.12", "9.12.0.46", "9.28.0.42", "9.1.0.70", "8.9.7.29"] {
            let s = cudnn_support(&v(listed)).unwrap();
            assert_eq!(s.family_rule, None, "{listed} is in the table");
            assert_eq!(s.rule_note(), None);
        }
        // Rows from PyPI's cuDNN projects: 9.10 still had CUDA 11 builds, 9.11 not.
        let s = cudnn_support(&v("9.10.2.21")).unwrap();
        assert_eq!(s.row, v("9.10"));
        assert!(s.supports(&v("11.8")));
        assert!(!cudnn_support(&v("9.11.0.98")).unwrap().supports(&v("11.8")));
        let s = cudnn_support(&v("9.28.0.42")).unwrap();
        assert_eq!(s.describe_cuda(), "CUDA 12.x, 13.x");

        let s = cudnn_support(&v("9.40.0.1")).unwrap();
        assert_eq!(s.row, newest_9);
        assert_eq!(s.family_rule.as_deref(), Some("9.x"));
        assert_eq!(s.describe_cuda(), "CUDA 12.x, 13.x");
        assert_eq!(
            s.rule_note().unwrap(),
            "the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28"
        );
        assert!(s.supports(&v("13.5.0")) && s.supports(&v("12.9")));
        assert!(!s.supports(&v("11.8")));
        assert_eq!(cudnn_supports(&v("9.40"), &v("13.0")), Some(true));
        assert_eq!(cudnn_supports(&v("9.40"), &v("11.8")), Some(false));
        // The newest 8.x row is 8.9: a later 8.x is the 8.x family's rule.
        let s = cudnn_support(&v("8.10")).unwrap();
        assert_eq!(
            (s.row.to_string(), s.family_rule.as_deref()),
            ("8.9".into(), Some("8.x"))
        );
        // A major the table has no row of: no answer, no rule.
        assert_eq!(cudnn_support(&v("10.0")), None);
        assert_eq!(cudnn_support(&v("7.6")), None);
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
            whose: Whose::ThisMachine,
        };
        assert!(
            guard(&Machine::default(), &v("13.0")).is_empty(),
            "no GPU, no driver: nothing to say"
        );
        assert!(guard(&m("580.159.04", &[(9, 0)]), &v("13.0")).is_empty());
        let g = guard(&m("570.26", &[(9, 0)]), &v("13.0"));
        assert!(matches!(&g[..], [GuardIssue::DriverTooOld { .. }]), "{g:?}");
        assert!(g[0].is_blocking());
        assert!(
            g[0].message(&v("13.0"), &m("570.26", &[]))
                .contains("≥ 580")
        );
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
        assert!(
            g[0].message(&v("11.2"), &m("580.159.04", &[(9, 0)]))
                .contains("≥ 11.8")
        );
        assert!(
            guard(&m("580.159.04", &[(8, 9)]), &v("11.1")).is_empty(),
            "an sm_89 GPU runs 11.1's sm_86 machine code"
        );
    }

    #[test]
    fn first_frameworks_for_hopper() {
        let f = first_frameworks_for(ComputeCapability::new(9, 0));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].starts_with("TensorFlow 2.") && f[0].ends_with("(CUDA 11.8)"),
            "{f:?}"
        );
        assert!(
            f[1].starts_with("PyTorch ") && f[1].ends_with("(CUDA 11.8)"),
            "{f:?}"
        );
    }
}
