//! NVIDIA driver versions and what each CUDA toolkit needs of them.
//!
//! Two floors exist for every toolkit (CUDA release notes): the driver it was
//! released with (full support, Table 3), and, since 11.0, the lower floor of
//! *minor version compatibility* (Table 2): an older driver of the same major
//! family runs the newer toolkit's code, except PTX that must be JIT-compiled
//! by the driver. Under WSL2 the driver is the Windows one, so the Windows
//! column applies.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::spec::Version;

use super::data;

/// A driver version such as `580.65.06` (parts may have leading zeros, so the
/// original text is kept for display).
#[derive(Debug, Clone)]
pub struct DriverVersion {
    parts: Vec<u32>,
    text: String,
}

impl DriverVersion {
    pub fn parse(s: &str) -> Option<DriverVersion> {
        let s = s.trim();
        if s.is_empty() || s.len() > 32 {
            return None;
        }
        let parts: Option<Vec<u32>> = s.split('.').map(|p| p.parse().ok()).collect();
        let parts = parts?;
        (parts.len() <= 4).then(|| DriverVersion {
            parts,
            text: s.to_string(),
        })
    }

    pub fn major(&self) -> u32 {
        self.parts[0]
    }
}

impl PartialEq for DriverVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for DriverVersion {}
impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        // Missing parts count as zero: `580` == `580.0.0`.
        let n = self.parts.len().max(other.parts.len());
        let get = |v: &[u32], i: usize| v.get(i).copied().unwrap_or(0);
        (0..n)
            .map(|i| get(&self.parts, i).cmp(&get(&other.parts, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}
impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
impl Serialize for DriverVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}
impl<'de> Deserialize<'de> for DriverVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DriverVersion::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("bad driver version `{s}`")))
    }
}

/// Which column of NVIDIA's tables applies: WSL2 runs the Windows driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DriverOs {
    #[default]
    Linux,
    Windows,
}

/// What a CUDA version needs of the driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverRequirement {
    /// The table row used (`CUDA 12.4 Update 1`).
    pub release: String,
    /// The driver the release shipped with: full support from here on.
    pub release_min: Option<DriverVersion>,
    /// Minor-version-compatibility floor, where the family has one.
    pub compat_floor: Option<DriverVersion>,
    /// Set when the tables have no row for this release (newer than they
    /// are): the figure is the family's rule (`13.x`), not a published row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family_rule: Option<String>,
}

impl DriverRequirement {
    /// The lowest driver that runs this toolkit at all.
    pub fn absolute_min(&self) -> Option<&DriverVersion> {
        self.compat_floor.as_ref().or(self.release_min.as_ref())
    }

    /// `≥ 530.30.02 (≥ 525.60.13 with minor version compatibility)`.
    pub fn describe(&self) -> String {
        match (&self.release_min, &self.compat_floor) {
            (Some(r), Some(c)) if c < r => {
                format!("≥ {r} (≥ {c} with minor version compatibility)")
            }
            (Some(r), _) => format!("≥ {r}"),
            (None, Some(c)) => match &self.family_rule {
                Some(f) => format!("≥ {c} (the CUDA {f} family's rule; no table row yet)"),
                None => format!("≥ {c}"),
            },
            (None, None) => "unknown".into(),
        }
    }
}

/// The requirement for a CUDA version (`12.4`, `12.4.1`, `11.2`).
///
/// A version given as `major.minor` takes the first release of that minor
/// (its GA: the least any 12.4.x needs); a full version takes its own row, or
/// the newest row at or below it within the same minor.
pub fn requirement(cuda: &Version, os: DriverOs) -> Option<DriverRequirement> {
    let t = data::driver();
    let mm = cuda.truncate(2);
    let same_minor: Vec<_> = t
        .release
        .iter()
        .filter(|r| r.cuda.truncate(2) == mm)
        .collect();
    let row = if cuda.parts().len() <= 2 {
        same_minor
            .iter()
            .min_by(|a, b| a.cuda.cmp(&b.cuda))
            .copied()
    } else {
        same_minor
            .iter()
            .filter(|r| r.cuda <= *cuda)
            .max_by(|a, b| a.cuda.cmp(&b.cuda))
            .or_else(|| same_minor.iter().min_by(|a, b| a.cuda.cmp(&b.cuda)))
            .copied()
    };
    let compat = t
        .minor_compat
        .iter()
        .find(|m| m.cuda.iter().any(|p| mm.matches(p)));
    let pick = |lin: &DriverVersion, win: &Option<DriverVersion>| match os {
        DriverOs::Linux => Some(lin.clone()),
        DriverOs::Windows => win.clone(),
    };
    if row.is_none() && compat.is_none() {
        return None;
    }
    Some(DriverRequirement {
        release: row
            .map(|r| r.label.clone())
            .unwrap_or_else(|| format!("CUDA {mm}")),
        release_min: row.and_then(|r| pick(&r.linux, &r.windows)),
        compat_floor: compat.and_then(|m| pick(&m.linux, &m.windows)),
        family_rule: row
            .is_none()
            .then(|| compat.map(|m| m.family.clone()))
            .flatten(),
    })
}

/// The oldest driver that starts a runtime of this CUDA version at all
/// (through minor version compatibility where the family has it).
pub fn min_driver(cuda: &Version, os: DriverOs) -> Option<DriverVersion> {
    requirement(cuda, os)?.absolute_min().cloned()
}

/// How a driver relates to a toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverFit {
    /// At or above the release driver.
    Full,
    /// Below the release driver, above the minor-compatibility floor.
    MinorCompat { release_min: DriverVersion },
    /// Below every floor: the runtime refuses to start.
    TooOld { need: DriverVersion },
    /// The tables do not know this CUDA version.
    Unknown,
}

pub fn fit(driver: &DriverVersion, cuda: &Version, os: DriverOs) -> DriverFit {
    let Some(req) = requirement(cuda, os) else {
        return DriverFit::Unknown;
    };
    match (&req.release_min, &req.compat_floor) {
        (Some(r), _) if driver >= r => DriverFit::Full,
        (Some(r), Some(c)) if driver >= c => DriverFit::MinorCompat {
            release_min: r.clone(),
        },
        (None, Some(c)) if driver >= c => DriverFit::Full,
        _ => match req.absolute_min() {
            Some(need) => DriverFit::TooOld { need: need.clone() },
            None => DriverFit::Unknown,
        },
    }
}

/// The newest CUDA (major.minor) whose release driver is at or below `driver`:
/// what nvidia-smi prints as "CUDA Version".
pub fn max_cuda(driver: &DriverVersion, os: DriverOs) -> Option<Version> {
    data::driver()
        .release
        .iter()
        .filter(|r| match os {
            DriverOs::Linux => &r.linux <= driver,
            DriverOs::Windows => r.windows.as_ref().is_some_and(|w| w <= driver),
        })
        .map(|r| r.cuda.truncate(2))
        .max()
}

/// `cuDriverGetVersion`'s number (`13000`, `12040`) as a CUDA version.
pub fn cuda_from_api(v: i32) -> Option<Version> {
    (v > 0).then(|| Version::from_parts(&[(v / 1000) as u32, ((v % 1000) / 10) as u32]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> DriverVersion {
        DriverVersion::parse(s).unwrap()
    }
    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn driver_versions_order_numerically() {
        assert!(d("580.65.06") > d("580.9"));
        assert!(d("455.23") < d("455.32"));
        assert_eq!(d("580"), d("580.0.0"));
        assert_eq!(d("580.65.06").to_string(), "580.65.06");
        for bad in ["", "x", "1..2", "580.65.06.1.2", "-1"] {
            assert!(DriverVersion::parse(bad).is_none(), "{bad}");
        }
    }

    /// The floor `verify` names when a runtime refuses to start: minor version
    /// compatibility from 11.0 on (Table 2), the release driver before it (Table 3).
    #[test]
    fn oldest_driver_that_starts_a_runtime() {
        let min = |c: &str| min_driver(&v(c), DriverOs::Linux).map(|d| d.to_string());
        assert_eq!(min("12.4").as_deref(), Some("525.60.13"));
        assert_eq!(min("12.9.1").as_deref(), Some("525.60.13"));
        assert_eq!(min("11.8").as_deref(), Some("450.80.02"));
        assert_eq!(min("11.0").as_deref(), Some("450.36.06"));
        assert_eq!(min("13.0").as_deref(), Some("580"));
        assert_eq!(min("13.2").as_deref(), Some("580"));
        assert_eq!(min("10.2").as_deref(), Some("440.33"));
        assert_eq!(min("9.2").as_deref(), Some("396.26"));
        assert_eq!(min("6.5"), None);
        assert_eq!(min("14.0"), None);
        assert!(d("575.57.08") < d(min("13.0").as_deref().unwrap()));
    }

    /// A release newer than the tables (13.5 while they stop at 13.2) gets
    /// its family's minor-version-compatibility rule, and says so.
    #[test]
    fn releases_newer_than_the_tables_get_the_family_rule() {
        let r = requirement(&v("13.5.0"), DriverOs::Linux).unwrap();
        assert_eq!(r.release_min, None);
        assert_eq!(r.compat_floor, Some(d("580")));
        assert_eq!(r.family_rule.as_deref(), Some("13.x"));
        assert!(
            r.describe().contains("13.x family's rule"),
            "{}",
            r.describe()
        );
        assert_eq!(
            fit(&d("580.65.06"), &v("13.5.0"), DriverOs::Linux),
            DriverFit::Full
        );
        assert!(matches!(
            fit(&d("575.57.08"), &v("13.5.0"), DriverOs::Linux),
            DriverFit::TooOld { .. }
        ));
        // A release the tables list is its own row, not the family's.
        assert_eq!(
            requirement(&v("13.0.2"), DriverOs::Linux)
                .unwrap()
                .family_rule,
            None
        );
    }

    #[test]
    fn requirements_per_release() {
        let cases = [
            ("13.0", "580.65.06", Some("580")),
            ("12.4", "550.54.14", Some("525.60.13")),
            ("12.4.1", "550.54.15", Some("525.60.13")),
            ("11.2", "460.27.03", Some("450.80.02")),
            ("11.2.2", "460.32.03", Some("450.80.02")),
            ("11.0", "450.36.06", Some("450.36.06")),
            ("10.2", "440.33", None),
            ("9.2", "396.26", None),
        ];
        for (cuda, release, floor) in cases {
            let r = requirement(&v(cuda), DriverOs::Linux).unwrap();
            assert_eq!(r.release_min, Some(d(release)), "{cuda}");
            assert_eq!(r.compat_floor, floor.map(d), "{cuda}");
        }
        let w = requirement(&v("13.0"), DriverOs::Windows).unwrap();
        assert_eq!(w.release_min, None);
        assert_eq!(
            requirement(&v("12.4"), DriverOs::Windows)
                .unwrap()
                .release_min,
            Some(d("551.61"))
        );
        assert!(requirement(&v("6.5"), DriverOs::Linux).is_none());
    }

    #[test]
    fn fits() {
        let l = DriverOs::Linux;
        assert_eq!(fit(&d("580.159.04"), &v("13.0"), l), DriverFit::Full);
        assert_eq!(fit(&d("580.159.04"), &v("12.4"), l), DriverFit::Full);
        assert_eq!(
            fit(&d("535.104.05"), &v("12.4"), l),
            DriverFit::MinorCompat {
                release_min: d("550.54.14")
            }
        );
        assert_eq!(
            fit(&d("470.82.01"), &v("12.4"), l),
            DriverFit::TooOld {
                need: d("525.60.13")
            }
        );
        assert_eq!(
            fit(&d("570.26"), &v("13.0"), l),
            DriverFit::TooOld { need: d("580") }
        );
        assert_eq!(
            fit(&d("430.1"), &v("10.2"), l),
            DriverFit::TooOld { need: d("440.33") }
        );
        assert_eq!(fit(&d("430.1"), &v("99.0"), l), DriverFit::Unknown);
    }

    /// The 590–610 driver series: 590 runs 13.1, 595 13.2, 610 13.3 (from
    /// NVIDIA's 13.3.0 manifest); 13.4 and 13.5 have no row yet and take the
    /// family's rule.
    #[test]
    fn the_590_to_610_series() {
        assert_eq!(max_cuda(&d("590.48.01"), DriverOs::Linux), Some(v("13.1")));
        assert_eq!(max_cuda(&d("595.45.04"), DriverOs::Linux), Some(v("13.2")));
        assert_eq!(max_cuda(&d("610.57.04"), DriverOs::Linux), Some(v("13.3")));
        let r = requirement(&v("13.3"), DriverOs::Linux).unwrap();
        assert_eq!(r.release_min, Some(d("610.43.02")));
        assert_eq!(r.family_rule, None);
        assert_eq!(
            fit(&d("610.57.04"), &v("13.3.0"), DriverOs::Linux),
            DriverFit::Full
        );
        assert!(matches!(
            fit(&d("595.45.04"), &v("13.3.0"), DriverOs::Linux),
            DriverFit::MinorCompat { .. }
        ));
        assert!(
            requirement(&v("13.4.1"), DriverOs::Linux)
                .unwrap()
                .family_rule
                .is_some()
        );
    }

    #[test]
    fn max_cuda_and_api_numbers() {
        assert_eq!(max_cuda(&d("580.159.04"), DriverOs::Linux), Some(v("13.0")));
        assert_eq!(max_cuda(&d("550.54.15"), DriverOs::Linux), Some(v("12.4")));
        assert_eq!(max_cuda(&d("470.82.01"), DriverOs::Linux), Some(v("11.4")));
        assert_eq!(max_cuda(&d("566.36"), DriverOs::Windows), Some(v("12.6")));
        assert_eq!(max_cuda(&d("300"), DriverOs::Linux), None);
        assert_eq!(cuda_from_api(13000), Some(v("13.0")));
        assert_eq!(cuda_from_api(12040), Some(v("12.4")));
        assert_eq!(cuda_from_api(0), None);
    }
}
