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

use super::{ComputeCapability, DriverOs, DriverVersion, Machine};

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

    /// The target as the compatibility rules see a machine (a Linux driver).
    pub fn machine(&self) -> Machine {
        Machine {
            driver: self.driver_version(),
            driver_os: DriverOs::Linux,
            gpus: self.compute_capabilities(),
        }
    }

    /// `driver 550.54.15, sm_90` for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match &self.driver {
            Some(d) => format!("driver {d}"),
            None => "driver unknown".into(),
        });
        parts.push(if self.arch.is_empty() {
            "GPU architecture unknown".into()
        } else {
            self.arch.join(", ")
        });
        parts.join(", ")
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
        assert_eq!(m.driver.unwrap().major(), 550);
        assert_eq!(m.gpus.len(), 2);
        let only = Target::parse(Some("535"), None).unwrap().unwrap();
        assert!(only.machine().gpus.is_empty());
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
