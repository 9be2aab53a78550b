//! Planning for another machine: the driver and GPU architectures of the
//! machine a stack is meant for, given instead of this one's.
//!
//! An image built on a CI runner or a laptop without a GPU runs later on a
//! cluster node with a known driver and GPU; `--target-driver 550.54.15
//! --target-arch sm_90` (or `CUDAENV_TARGET_DRIVER` / `CUDAENV_TARGET_ARCH`)
//! makes `install --for`, the install guard, `compat` and `doctor`'s
//! compatibility checks answer for that machine, as `CONDA_OVERRIDE_CUDA`
//! does for conda's solver. A target replaces the machine as a whole: a half
//! given (only the driver) leaves the other half unknown, never this
//! machine's, which is a different computer.

use serde::{Deserialize, Serialize};

use super::{ComputeCapability, DriverOs, DriverVersion, Machine, Whose};

/// The machine to plan for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The NVIDIA driver version, as given (`550.54.15`, `550`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Compute capabilities as `sm_XY`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arch: Vec<String>,
}

/// Which part of a target was malformed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTarget {
    pub input: String,
    pub reason: String,
}

impl Target {
    /// A target from a driver and a comma-separated architecture list;
    /// `None` when neither is given.
    pub fn parse(driver: Option<&str>, arch: Option<&str>) -> Result<Option<Target>, BadTarget> {
        if driver.is_none() && arch.is_none() {
            return Ok(None);
        }
        let driver = match driver {
            None => None,
            Some(d) => Some(
                DriverVersion::parse(d)
                    .filter(|v| v.major() >= 100)
                    .ok_or_else(|| BadTarget {
                        input: d.to_string(),
                        reason: "not an NVIDIA driver version such as `550.54.15` or `550`".into(),
                    })?
                    .to_string(),
            ),
        };
        let mut sms = Vec::new();
        for a in arch.into_iter().flat_map(|a| a.split(',')) {
            let a = a.trim();
            let cc: ComputeCapability = a.parse().map_err(|_| BadTarget {
                input: a.to_string(),
                reason: "not a GPU architecture such as `sm_90`, `sm_86` or `8.6`".into(),
            })?;
            if !sms.contains(&cc.sm()) {
                sms.push(cc.sm());
            }
        }
        if arch.is_some() && sms.is_empty() {
            return Err(BadTarget {
                input: String::new(),
                reason: "no architecture given".into(),
            });
        }
        Ok(Some(Target { driver, arch: sms }))
    }

    pub fn driver_version(&self) -> Option<DriverVersion> {
        self.driver.as_deref().and_then(DriverVersion::parse)
    }

    pub fn compute_capabilities(&self) -> Vec<ComputeCapability> {
        self.arch.iter().filter_map(|a| a.parse().ok()).collect()
    }

    /// The target as the compatibility rules see a machine (a Linux driver),
    /// marked as the target so that messages about it say so.
    pub fn machine(&self) -> Machine {
        Machine {
            driver: self.driver_version(),
            driver_os: DriverOs::Linux,
            gpus: self.compute_capabilities(),
            whose: Whose::Target,
        }
    }

    /// `driver 550.54.15, sm_90` for messages.
    #[cfg(test)]
    pub fn describe(&self) -> String {
        self.machine().describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_users_write_and_refuses_the_rest() {
        assert_eq!(Target::parse(None, None), Ok(None));
        let t = Target::parse(Some("550.54.15"), Some("sm_90, 8.6,sm_90"))
            .unwrap()
            .unwrap();
        assert_eq!(t.arch, ["sm_90", "sm_86"]);
        assert_eq!(t.describe(), "driver 550.54.15, sm_90, sm_86");
        let m = t.machine();
        assert_eq!(m.whose, Whose::Target);
        assert_eq!(m.name(), "the target machine");
        assert_eq!(
            m.title(),
            "the target machine (driver 550.54.15, sm_90, sm_86)"
        );
        assert_eq!(m.driver.as_ref().unwrap().major(), 550);
        assert_eq!(m.gpus.len(), 2);
        let only = Target::parse(Some("535"), None).unwrap().unwrap();
        assert!(only.machine().gpus.is_empty());
        assert_eq!(
            only.machine().title(),
            "the target machine (driver 535, GPU architecture unknown)"
        );
        for (d, a) in [
            (Some("12.4"), None),
            (Some("latest"), None),
            (None, Some("hopper")),
            (None, Some("")),
            (None, Some("sm_9")),
        ] {
            assert!(Target::parse(d, a).is_err(), "{d:?} {a:?}");
        }
    }
}

#[cfg(test)]
mod wording {
    //! What the compatibility messages say about a target, next to what they
    //! say about this machine (unchanged).

    use super::*;
    use crate::machine::compat::{self, DriverVersion};
    use crate::spec::Version;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn both(driver: &str, arch: &str) -> (Machine, Machine) {
        let target = Target::parse(Some(driver), Some(arch))
            .unwrap()
            .unwrap()
            .machine();
        let here = Machine {
            whose: Whose::ThisMachine,
            ..target.clone()
        };
        (here, target)
    }

    fn guard_text(m: &Machine, cuda: &str) -> Vec<String> {
        compat::guard(m, &v(cuda))
            .iter()
            .map(|i| i.message(&v(cuda), m))
            .collect()
    }

    #[test]
    fn guard_messages_name_the_target() {
        let (here, target) = both("470.57.02", "sm_90");
        insta::assert_snapshot!(guard_text(&here, "12.4").join("\n"), @r#"CUDA 12.4 needs NVIDIA driver ≥ 525.60.13; this machine has 470.57.02 (programs fail with "CUDA driver version is insufficient")"#);
        insta::assert_snapshot!(guard_text(&target, "12.4").join("\n"), @r#"CUDA 12.4 needs NVIDIA driver ≥ 525.60.13; the target machine has 470.57.02 (programs fail with "CUDA driver version is insufficient")"#);
        let (here, target) = both("535.104.05", "sm_90");
        insta::assert_snapshot!(guard_text(&here, "12.4").join("\n"), @"driver 535.104.05 runs CUDA 12.4 through minor version compatibility only; PTX JIT of code built for it needs ≥ 550.54.14");
        insta::assert_snapshot!(guard_text(&target, "12.4").join("\n"), @"the target machine's driver 535.104.05 runs CUDA 12.4 through minor version compatibility only; PTX JIT of code built for it needs ≥ 550.54.14");
        let (here, target) = both("580.95.05", "sm_60");
        insta::assert_snapshot!(guard_text(&here, "13.0").join("\n"), @r#"CUDA 13.0 and later do not support this machine's GPU (sm_60); CUDA 13.0 cannot run on it ("no kernel image is available")"#);
        insta::assert_snapshot!(guard_text(&target, "13.0").join("\n"), @r#"CUDA 13.0 and later do not support the target machine's GPU (sm_60); CUDA 13.0 cannot run on it ("no kernel image is available")"#);
        let (here, target) = both("580.95.05", "sm_90");
        insta::assert_snapshot!(guard_text(&here, "11.2").join("\n"), @"this machine's GPU (sm_90) needs CUDA ≥ 11.8; CUDA 11.2 has no native code for it (PTX JIT only; libraries without PTX fail)");
        insta::assert_snapshot!(guard_text(&target, "11.2").join("\n"), @"the target machine's GPU (sm_90) needs CUDA ≥ 11.8; CUDA 11.2 has no native code for it (PTX JIT only; libraries without PTX fail)");
    }

    #[test]
    fn can_run_names_the_target() {
        let (here, target) = both("470.57.02", "sm_90");
        assert_eq!(
            here.can_run(&v("12.4")),
            Err("needs driver ≥ 525.60.13, this machine has 470.57.02".into())
        );
        assert_eq!(
            target.can_run(&v("12.4")),
            Err("needs driver ≥ 525.60.13, the target machine has 470.57.02".into())
        );
        assert_eq!(
            target.driver_named(&DriverVersion::parse("470.57.02").unwrap()),
            "the target machine's driver 470.57.02"
        );
        assert_eq!(here.gpu_named(), "this GPU");
        assert_eq!(target.gpu_named(), "the target machine's GPU");
        assert_eq!(here.title(), "this machine");
    }
}
