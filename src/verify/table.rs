//! The embedded table `registry/cuda_runtime.toml`: the oldest driver each
//! CUDA runtime runs on, and the GPU architectures each CUDA targets.
//!
//! `verify` uses it only to explain: the live checks decide pass or fail, the
//! table turns "cudaGetDeviceCount returned 35" into "driver 470.82 is older
//! than the 525.60.13 that CUDA 12 needs".

use serde::Deserialize;

use crate::spec::Version;

const TABLE: &str = include_str!("../../registry/cuda_runtime.toml");

#[derive(Debug, Deserialize)]
struct Table {
    driver: DriverSection,
    arch: ArchSection,
}

#[derive(Debug, Deserialize)]
struct DriverSection {
    #[allow(dead_code)]
    source: String,
    floor: Vec<Floor>,
}

#[derive(Debug, Deserialize)]
struct Floor {
    cuda: Version,
    min_driver: DriverVersion,
}

#[derive(Debug, Deserialize)]
struct ArchSection {
    #[allow(dead_code)]
    source: String,
    range: Vec<ArchRow>,
}

/// Compute capabilities a CUDA release targets, written ×10 (`90` = sm_90).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub struct ArchRange {
    pub min: u32,
    pub max: u32,
}

#[derive(Debug, Deserialize)]
struct ArchRow {
    cuda: Version,
    #[serde(flatten)]
    range: ArchRange,
}

/// A Linux driver version such as `580.159.04`, compared part by part.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DriverVersion(Vec<u32>);

impl DriverVersion {
    pub fn parse(s: &str) -> Option<DriverVersion> {
        let parts: Option<Vec<u32>> = s.trim().split('.').map(|p| p.parse().ok()).collect();
        parts
            .filter(|p| !p.is_empty() && p.len() <= 4)
            .map(DriverVersion)
    }
}

impl std::fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            // Driver minor versions are written with two digits (`580.65.06`).
            if i > 1 {
                write!(f, "{p:02}")?;
            } else {
                write!(f, "{p}")?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for DriverVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DriverVersion::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("bad driver version `{s}`")))
    }
}

pub struct Requirements {
    floors: Vec<Floor>,
    arch: Vec<ArchRow>,
}

impl Requirements {
    /// The embedded table. It is part of the binary and covered by tests, so
    /// a parse failure is a build defect, not a user error.
    pub fn embedded() -> Requirements {
        let mut t: Table = toml::from_str(TABLE).expect("registry/cuda_runtime.toml is valid");
        t.driver.floor.sort_by(|a, b| a.cuda.cmp(&b.cuda));
        let mut arch: Vec<ArchRow> = t.arch.range;
        arch.sort_by(|a, b| a.cuda.cmp(&b.cuda));
        Requirements {
            floors: t.driver.floor,
            arch,
        }
    }

    /// The oldest Linux driver that runs a runtime of CUDA `cuda` (major.minor).
    pub fn min_driver(&self, cuda: &Version) -> Option<&DriverVersion> {
        let key = cuda.truncate(2);
        self.floors
            .iter()
            .rev()
            .find(|f| f.cuda <= key && f.cuda.major() == key.major())
            .map(|f| &f.min_driver)
    }

    /// The compute capabilities CUDA `cuda` targets.
    pub fn arch_range(&self, cuda: &Version) -> Option<ArchRange> {
        let key = cuda.truncate(2);
        self.arch
            .iter()
            .rev()
            .find(|r| r.cuda <= key)
            .map(|r| r.range)
    }
}

impl Requirements {
    /// What to use instead for a GPU of compute capability `cc` (×10) that
    /// `cuda` cannot run: the oldest CUDA that can, or the newest that still does.
    pub fn instead(&self, cuda: &Version, cc: u32) -> String {
        let fits = |r: &&ArchRow| arch_problem(r.range, cc).is_none();
        let newer = self
            .arch
            .iter()
            .find(|r| r.cuda > cuda.truncate(2) && fits(r));
        if let Some(r) = newer {
            return format!("CUDA {} or newer", r.cuda);
        }
        match self.arch.iter().rev().find(fits) {
            Some(r) => {
                // The newest row that fits holds up to the next row (exclusive).
                let next = self.arch.iter().find(|n| n.cuda > r.cuda);
                match next {
                    Some(n) => format!("a CUDA older than {}", n.cuda),
                    None => format!("CUDA {} or newer", r.cuda),
                }
            }
            None => "none known to cudaenv".into(),
        }
    }
}

/// Why a GPU of compute capability `cc` (×10) cannot run code built for `range`.
pub fn arch_problem(range: ArchRange, cc: u32) -> Option<String> {
    if cc < range.min {
        Some(format!(
            "its oldest supported architecture is sm_{}",
            range.min
        ))
    } else if cc / 10 > range.max / 10 {
        Some(format!(
            "its newest supported architecture is sm_{}",
            range.max
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn driver_floors_follow_minor_version_compatibility() {
        let r = Requirements::embedded();
        let min = |c: &str| r.min_driver(&v(c)).map(|d| d.to_string());
        assert_eq!(min("12.4").as_deref(), Some("525.60.13"));
        assert_eq!(min("12.9.1").as_deref(), Some("525.60.13"));
        assert_eq!(min("11.8").as_deref(), Some("450.80.02"));
        assert_eq!(min("11.0").as_deref(), Some("450.36.06"));
        assert_eq!(min("13.0").as_deref(), Some("580.65.06"));
        assert_eq!(min("10.2").as_deref(), Some("440.33"));
        assert_eq!(min("9.2"), None);
    }

    #[test]
    fn driver_versions_compare_numerically() {
        let d = |s| DriverVersion::parse(s).unwrap();
        assert!(d("580.159.04") > d("580.65.06"));
        assert!(d("470.82.01") < d("525.60.13"));
        assert!(d("525.60.13") >= d("525.60.13"));
        assert_eq!(d("580.65.06").to_string(), "580.65.06");
        assert!(DriverVersion::parse("580.x").is_none());
        assert!(DriverVersion::parse("").is_none());
    }

    #[test]
    fn architectures() {
        let r = Requirements::embedded();
        let problem = |c: &str, cc: u32| arch_problem(r.arch_range(&v(c)).unwrap(), cc);
        // The example: CUDA 11.2 predates Hopper.
        assert!(problem("11.2", 90).unwrap().contains("sm_86"));
        assert_eq!(problem("11.8", 90), None);
        assert_eq!(problem("12.4", 90), None);
        // Same major, newer minor: binary compatible.
        assert_eq!(problem("11.1", 89), None);
        // CUDA 13 dropped Volta; CUDA 12.4 predates Blackwell.
        assert!(problem("13.0", 70).unwrap().contains("sm_75"));
        assert!(problem("12.4", 100).is_some());
        assert_eq!(problem("12.8", 100), None);
        assert_eq!(problem("13.0", 120), None);
        assert_eq!(r.instead(&v("11.2"), 90), "CUDA 11.8 or newer");
        assert_eq!(r.instead(&v("13.0"), 70), "a CUDA older than 13.0");
        assert_eq!(r.instead(&v("12.4"), 100), "CUDA 12.8 or newer");
    }
}
