//! The stack cudaenv picks for `--for FRAMEWORK==VERSION`, and the sentence
//! that says why.
//!
//! A local version tag (`torch==2.4+cu118`) names the build; a release with
//! one build gets it; among several, the newest stable build this machine
//! (or the target) runs is picked, and the reason names the others.

use crate::error::{Error, MachineError, Result};
use serde::Serialize;

use crate::spec::{Libraries, StackSpec, Version};

use super::super::Machine;
use super::super::arch::{self, ArchSupport};
use super::super::data::Channel;
use super::super::driver::{self, DriverFit};
use super::{Build, Framework, FrameworkReq, Requirement, requirement};

/// The stack cudaenv picks for a framework release, and why.
#[derive(Debug, Clone, Serialize)]
pub struct StackChoice {
    #[serde(serialize_with = "super::super::ser_display")]
    pub spec: StackSpec,
    pub reason: String,
    pub requirement: Requirement,
    /// The chosen build (index into `requirement.builds`).
    pub build: usize,
}

/// Picks the stack for `req` (its version must be set; the caller fills it from
/// the installed framework otherwise). `machine` narrows the choice to builds
/// this machine's driver and GPUs can run, when those are known.
pub fn stack_for(req: &FrameworkReq, machine: Option<&Machine>) -> Result<StackChoice> {
    stack_for_on(req, machine, "linux")
}

/// `stack_for` from the builds `framework` publishes for `platform`
/// (`linux` or `windows`: TensorFlow's tested configurations differ, and
/// end at 2.10 on Windows).
pub fn stack_for_on(
    req: &FrameworkReq,
    machine: Option<&Machine>,
    platform: &str,
) -> Result<StackChoice> {
    let version = req.version.as_ref().ok_or_else(|| {
        Error::Machine(MachineError::InvalidFramework {
            input: req.to_string(),
            reason: "a version is needed here (`torch==2.4`)".into(),
        })
    })?;
    let requirement = requirement(req.framework, version, platform)?;
    // A release read from its wheel is named exactly; a table row by major.minor.
    let from_wheel = requirement.builds.iter().any(|b| b.wheel.is_some());
    let shown = if from_wheel {
        requirement.version.clone()
    } else {
        requirement.version.truncate(2)
    };
    let name = format!("{} {shown}", req.framework);
    if let Some(tag) = &req.cuda_tag {
        return by_tag(&name, tag, requirement, machine);
    }
    if requirement.builds.len() == 1 {
        return only_build(req.framework, &name, requirement, machine);
    }
    among_builds(req.framework, &name, &shown, requirement, machine)
}

/// `CUDA 12.1 + cuDNN 9.1 + NCCL 2.20`, `CUDA ≥ 12.1, < 13.0 + cuDNN ≥ 9.0`.
fn describe(b: &Build) -> String {
    let mut d = match &b.cudnn {
        Some(c) if b.cudnn_minimum => format!("{} + cuDNN ≥ {c}", b.cuda_text()),
        Some(c) => format!("{} + cuDNN {c}", b.cuda_text()),
        None => b.cuda_text(),
    };
    for (lib, v) in b.libraries.iter() {
        d.push_str(&format!(" + {} {}", lib.title(), prefix_text(v)));
    }
    d
}

/// The build a local version tag names (`+cu118`, or a CUDA major from
/// CuPy's package name): an error listing the builds when none matches.
fn by_tag(
    name: &str,
    tag: &Version,
    requirement: Requirement,
    machine: Option<&Machine>,
) -> Result<StackChoice> {
    let major_only = tag.minor().is_none();
    let i = requirement
        .builds
        .iter()
        .position(|b| {
            if major_only {
                b.cuda.major() == tag.major()
            } else if let Some(r) = &b.cuda_range {
                r.allows(tag)
            } else {
                b.cuda.truncate(2) == *tag
            }
        })
        .ok_or_else(|| {
            Error::Machine(MachineError::UnknownFrameworkVersion {
                framework: format!("{name} built for"),
                version: format!("CUDA {tag}"),
                known: requirement
                    .builds
                    .iter()
                    .map(|b| format!("cu{}", b.cuda.to_string().replace('.', "")))
                    .collect(),
            })
        })?;
    let b = &requirement.builds[i];
    let mut spec = b.spec_on(machine);
    if b.cuda_range.is_some() && !major_only {
        spec.cuda = tag.clone();
    }
    Ok(StackChoice {
        spec,
        reason: format!(
            "{name}+cu{} is the {} build ({})",
            tag.to_string().replace('.', ""),
            channel_name(b.channel),
            describe(b)
        ),
        build: i,
        requirement,
    })
}

/// A release with one build: it, said as its source says it (tested with,
/// pins, asks for, built for).
fn only_build(
    framework: Framework,
    name: &str,
    requirement: Requirement,
    machine: Option<&Machine>,
) -> Result<StackChoice> {
    let b = &requirement.builds[0];
    let what = match (&b.wheel, &b.cuda_range) {
        _ if b.tested => "was tested with",
        (Some(_), Some(_)) => "asks for",
        (Some(_), None) => "pins",
        (None, _) if framework == Framework::Tensorflow => "was tested with",
        (None, _) => "is built for",
    };
    let spec = b.spec_on(machine);
    let mut reason = if b.tested {
        // The table tested CUDA and cuDNN; the libraries are the wheel's word.
        let bare = Build {
            libraries: Libraries::default(),
            ..b.clone()
        };
        let mut r = format!("{name} {what} {}", describe(&bare));
        let libs: Vec<String> = b
            .libraries
            .iter()
            .map(|(l, v)| format!("{} {}", l.title(), prefix_text(v)))
            .collect();
        if !libs.is_empty() {
            r.push_str(&format!("; its wheel asks for {}", libs.join(" + ")));
        }
        r
    } else {
        format!("{name} {what} {}", describe(b))
    };
    if b.cuda_range.is_some() {
        reason.push_str(&range_pick(&spec, machine));
    }
    Ok(StackChoice {
        spec,
        reason,
        build: 0,
        requirement,
    })
}

/// A release with several builds: the newest stable one the machine runs.
fn among_builds(
    framework: Framework,
    name: &str,
    shown: &Version,
    requirement: Requirement,
    machine: Option<&Machine>,
) -> Result<StackChoice> {
    let builds = &requirement.builds;
    let of_channel = |c: Channel| -> Vec<usize> {
        (0..builds.len())
            .filter(|&i| builds[i].channel == c)
            .collect()
    };
    let stable = of_channel(Channel::Stable);
    let experimental = of_channel(Channel::Experimental);
    let mut reason = format!(
        "{name} has stable builds for CUDA {}",
        listed(builds, &stable)
    );
    if !experimental.is_empty() {
        reason.push_str(&format!(
            " (experimental: {})",
            listed(builds, &experimental)
        ));
    }
    let (i, why) = newest_that_runs(builds, &stable, machine);
    reason.push_str("; ");
    reason.push_str(&why);
    let b = &builds[i];
    let spec = b.spec_on(machine);
    if b.cuda_range.is_some() {
        reason.push_str(&range_pick(&spec, machine));
    }
    if let Some(c) = &b.cudnn {
        let at_least = if b.cudnn_minimum { "≥ " } else { "" };
        reason.push_str(&format!(", with cuDNN {at_least}{c}"));
    }
    for (lib, v) in b.libraries.iter() {
        reason.push_str(&format!(", {} {}", lib.title(), prefix_text(v)));
    }
    if builds.len() > 1 {
        reason.push_str(&format!("; name another with `{framework}=={shown}+cuXY`"));
    }
    Ok(StackChoice {
        spec,
        reason,
        build: i,
        requirement,
    })
}

/// The CUDAs (or ranges) of some builds, lowest first: `11.8, 12.1`.
fn listed(builds: &[Build], idx: &[usize]) -> String {
    let mut v: Vec<&Build> = idx.iter().map(|&i| &builds[i]).collect();
    v.sort_by(|a, b| a.cuda.cmp(&b.cuda));
    v.iter()
        .map(|b| match &b.cuda_range {
            Some(r) => r.to_string(),
            None => b.cuda.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first of the `stable` builds (sorted newest first) that `machine`
/// runs, or the newest when none does, with the words that say so.
fn newest_that_runs(
    builds: &[Build],
    stable: &[usize],
    machine: Option<&Machine>,
) -> (usize, String) {
    let runs_here = |b: &Build| machine.is_none_or(|m| m.can_run(&b.cuda).is_ok());
    let fitting: Vec<usize> = stable
        .iter()
        .copied()
        .filter(|&i| runs_here(&builds[i]))
        .collect();
    match (fitting.first(), machine) {
        (Some(&i), Some(m)) if i != stable[0] => {
            let newest = &builds[stable[0]];
            let problem = m.can_run(&newest.cuda).err().unwrap_or_default();
            (
                i,
                format!(
                    "picked CUDA {}, the newest one {} runs (CUDA {}: {problem})",
                    builds[i].cuda,
                    m.name(),
                    newest.cuda
                ),
            )
        }
        (Some(&i), Some(m)) if m.is_known() => (
            i,
            format!(
                "picked the newest, CUDA {}, which {}'s driver and GPU run",
                builds[i].cuda,
                m.name()
            ),
        ),
        (Some(&i), _) => (i, format!("picked the newest, CUDA {}", builds[i].cuda)),
        (None, m) => (
            stable[0],
            format!(
                "none of them runs on {} as it is (driver or GPU); picked the newest, CUDA {}",
                m.map_or("this machine", Machine::name),
                builds[stable[0]].cuda
            ),
        ),
    }
}

/// A spec prefix as people read it: `2.20`, or `2.x` for a major (its newest).
fn prefix_text(v: &Version) -> String {
    if v.parts().len() == 1 {
        format!("{v}.x")
    } else {
        v.to_string()
    }
}

/// How a CUDA range became one stack: the newest CUDA the driver fully
/// supports, or the newest of the range (as pip picks the newest wheels).
fn range_pick(spec: &StackSpec, machine: Option<&Machine>) -> String {
    match (
        spec.cuda.minor(),
        machine.and_then(|m| m.driver.as_ref().map(|d| (m, d))),
    ) {
        (Some(_), Some((m, d)))
            if driver::max_cuda(d, m.driver_os).as_ref() == Some(&spec.cuda) =>
        {
            format!(
                " ({}, the newest CUDA {}'s driver {d} fully supports)",
                spec.cuda,
                m.name()
            )
        }
        (Some(_), _) => format!(" ({}, the newest the range allows)", spec.cuda),
        (None, _) => format!(
            " ({}: the newest CUDA {}.x, as pip would pick)",
            spec.cuda, spec.cuda
        ),
    }
}

fn channel_name(c: Channel) -> &'static str {
    match c {
        Channel::Stable => "stable",
        Channel::Experimental => "experimental",
    }
}

impl Machine {
    /// Whether the machine runs a CUDA release: `Err` says why not.
    pub fn can_run(&self, cuda: &Version) -> std::result::Result<(), String> {
        if let Some(d) = &self.driver
            && let DriverFit::TooOld { need } = driver::fit(d, cuda, self.driver_os)
        {
            return Err(format!("needs driver ≥ {need}, {} has {d}", self.name()));
        }
        for gpu in &self.gpus {
            match arch::support(cuda, *gpu) {
                ArchSupport::Removed { since } => {
                    return Err(format!(
                        "CUDA {since} dropped {} ({})",
                        gpu.sm(),
                        gpu.family().unwrap_or("this GPU")
                    ));
                }
                ArchSupport::TooNew { first } => {
                    return Err(match first {
                        Some(f) => format!("{} needs CUDA ≥ {f}", gpu.sm()),
                        None => format!("{} is newer than any CUDA cudaenv knows", gpu.sm()),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::compat::arch::ComputeCapability;
    use crate::machine::compat::driver::{DriverOs, DriverVersion};

    fn req(s: &str) -> FrameworkReq {
        s.parse().unwrap()
    }

    #[test]
    fn the_documented_examples() {
        let c = stack_for(&req("tensorflow==2.10"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11.2+cudnn8.1");
        // The PyPI wheel of torch 2.4.1 (the CUDA 12.1 build) pins NCCL 2.20.5.
        let c = stack_for(&req("torch==2.4"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.1+cudnn9.1+nccl2.20");
        assert!(c.reason.contains("11.8, 12.1"), "{}", c.reason);
        assert!(c.reason.contains("experimental: 12.4"), "{}", c.reason);
        let c = stack_for(&req("torch==2.4+cu118"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11.8+cudnn9.1");
        let c = stack_for(&req("torch==2.4+cu124"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.4+cudnn9.1");
        assert!(stack_for(&req("torch==2.4+cu102"), None).is_err());
    }

    #[test]
    fn the_machine_narrows_the_choice() {
        let old_driver = Machine {
            driver: DriverVersion::parse("520.61.05"),
            driver_os: DriverOs::Linux,
            gpus: vec![ComputeCapability::new(8, 6)],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.4"), Some(&old_driver)).unwrap();
        assert_eq!(c.spec.to_string(), "11.8+cudnn9.1");
        assert!(
            c.reason.contains(
                "the newest one this machine runs (CUDA 12.1: needs driver ≥ 525.60.13, this machine has 520.61.05)"
            ),
            "{}",
            c.reason
        );
        let target = Machine {
            whose: crate::machine::compat::Whose::Target,
            ..old_driver.clone()
        };
        let c = stack_for(&req("torch==2.4"), Some(&target)).unwrap();
        assert!(
            c.reason.contains(
                "the newest one the target machine runs (CUDA 12.1: needs driver ≥ 525.60.13, the target machine has 520.61.05)"
            ),
            "{}",
            c.reason
        );

        let pascal = Machine {
            driver: DriverVersion::parse("580.65.06"),
            driver_os: DriverOs::Linux,
            gpus: vec![ComputeCapability::new(6, 1)],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.11"), Some(&pascal)).unwrap();
        assert_eq!(c.spec.cuda.to_string(), "12.8");
        assert!(c.reason.contains("dropped sm_61"), "{}", c.reason);

        let none_fit = Machine {
            driver: DriverVersion::parse("400.1"),
            driver_os: DriverOs::Linux,
            gpus: vec![],
            ..Default::default()
        };
        let c = stack_for(&req("torch==2.4"), Some(&none_fit)).unwrap();
        assert_eq!(c.spec.cuda.to_string(), "12.1");
        assert!(
            c.reason
                .contains("none of them runs on this machine as it is"),
            "{}",
            c.reason
        );
        let target = Machine {
            whose: crate::machine::compat::Whose::Target,
            ..none_fit
        };
        let c = stack_for(&req("torch==2.4"), Some(&target)).unwrap();
        assert!(
            c.reason
                .contains("none of them runs on the target machine as it is"),
            "{}",
            c.reason
        );
    }
}
