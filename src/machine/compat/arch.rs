//! GPU architectures (compute capabilities) and which CUDA releases build for them.
//!
//! A toolkit supports an architecture from the release that added it until the
//! one that removed it. A GPU newer than the toolkit can still run code that
//! was shipped as PTX (the driver JIT-compiles it), but libraries built
//! without PTX for it fail with "no kernel image is available", so cudaenv
//! treats that case as a warning and removal as an error.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::spec::Version;

use super::data;

/// A compute capability such as 9.0 (`sm_90`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    pub fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }

    /// `sm_90`.
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }

    /// NVIDIA's family name (`Hopper`), when the table knows the architecture.
    pub fn family(&self) -> Option<&'static str> {
        row(&self.sm()).map(|r| r.family.as_str())
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for ComputeCapability {
    type Err = String;
    /// `9.0`, `sm_90`, `sm_120`, `compute_86`.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some((a, b)) = s.split_once('.') {
            return match (a.parse(), b.parse()) {
                (Ok(major), Ok(minor)) if minor < 10 => Ok(ComputeCapability { major, minor }),
                _ => Err(format!("`{s}` is not a compute capability")),
            };
        }
        let digits = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .ok_or_else(|| format!("`{s}` is not a compute capability"))?;
        let digits = digits.trim_end_matches(['a', 'f']);
        if digits.len() < 2 || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("`{s}` is not a compute capability"));
        }
        let (maj, min) = digits.split_at(digits.len() - 1);
        Ok(ComputeCapability {
            major: maj.parse().map_err(|_| format!("`{s}`"))?,
            minor: min.parse().map_err(|_| format!("`{s}`"))?,
        })
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ComputeCapability {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

fn row(sm: &str) -> Option<&'static data::ArchRow> {
    data::arch().arch.iter().find(|a| a.sm == sm)
}

/// Whether a CUDA release can build and run code for an architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchSupport {
    Native,
    /// Still built, but NVIDIA announced its removal.
    Deprecated {
        since: Version,
    },
    /// The release no longer builds for it (nor do its libraries).
    Removed {
        since: Version,
    },
    /// The release does not build for this architecture itself, but for an
    /// older one of the same major (`sm_86` for an `sm_89` GPU), whose machine
    /// code the GPU runs unchanged.
    Compatible {
        via: ComputeCapability,
    },
    /// The GPU is newer than the toolkit: only PTX JIT can run on it.
    TooNew {
        first: Option<Version>,
    },
    /// Outside the table (toolkits before 9.0, unknown architectures).
    Unknown,
}

impl ArchSupport {
    pub fn runs(&self) -> bool {
        matches!(
            self,
            ArchSupport::Native | ArchSupport::Deprecated { .. } | ArchSupport::Compatible { .. }
        )
    }

    /// True when the release builds machine code for this very architecture.
    pub fn builds_for(&self) -> bool {
        matches!(self, ArchSupport::Native | ArchSupport::Deprecated { .. })
    }
}

/// Does the release (major.minor `mm`) build for this table row?
fn builds(mm: &Version, r: &data::ArchRow) -> bool {
    r.added.as_ref().is_some_and(|a| mm >= a) && r.removed.as_ref().is_none_or(|rem| mm < rem)
}

pub fn support(cuda: &Version, cc: ComputeCapability) -> ArchSupport {
    let mm = cuda.truncate(2);
    let Some(r) = row(&cc.sm()) else {
        // Newer than anything in the table: treat as too new for every toolkit we know.
        let newest = data::arch()
            .arch
            .iter()
            .filter_map(|a| a.sm.parse::<ComputeCapability>().ok())
            .max();
        return match newest {
            Some(n) if cc > n => ArchSupport::TooNew { first: None },
            _ => ArchSupport::Unknown,
        };
    };
    if let Some(rem) = &r.removed
        && mm >= *rem
    {
        return ArchSupport::Removed { since: rem.clone() };
    }
    match &r.added {
        Some(add) if mm < *add => {
            // Machine code for an older minor of the same major runs unchanged.
            let via = data::arch()
                .arch
                .iter()
                .filter(|r| builds(&mm, r))
                .filter_map(|r| r.sm.parse::<ComputeCapability>().ok())
                .filter(|a| a.major == cc.major && a.minor < cc.minor)
                .max();
            return match via {
                Some(via) => ArchSupport::Compatible { via },
                None => ArchSupport::TooNew {
                    first: Some(add.clone()),
                },
            };
        }
        None if mm < Version::from_parts(&[9, 0]) => return ArchSupport::Unknown,
        _ => {}
    }
    match &r.deprecated {
        Some(dep) if mm >= *dep => ArchSupport::Deprecated { since: dep.clone() },
        _ => ArchSupport::Native,
    }
}

/// The first CUDA release that builds for this architecture, if known.
pub fn first_cuda(cc: ComputeCapability) -> Option<Version> {
    row(&cc.sm()).and_then(|r| r.added.clone())
}

/// The last CUDA (major.minor) before the one that removed this architecture.
pub fn removed_in(cc: ComputeCapability) -> Option<Version> {
    row(&cc.sm()).and_then(|r| r.removed.clone())
}

/// Whether a GPU can run the machine code a CUDA release ships, counting
/// binary compatibility: code built for `sm_86` runs on an `sm_89` GPU (same
/// major, newer minor), so only a newer major is out of reach. `support`
/// answers the narrower question "does this release build natively for it".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuFit {
    Runs,
    /// The GPU predates every architecture the release still builds for.
    TooOld {
        oldest: ComputeCapability,
    },
    /// The GPU's major architecture is newer than anything the release builds for.
    TooNew {
        newest: ComputeCapability,
    },
    /// The table does not cover this release (before CUDA 9.0).
    Unknown,
}

/// The architectures a release builds for (natively or deprecated), oldest first.
pub fn targets(cuda: &Version) -> Vec<ComputeCapability> {
    let mut out: Vec<ComputeCapability> = data::arch()
        .arch
        .iter()
        .filter_map(|a| a.sm.parse::<ComputeCapability>().ok())
        .filter(|cc| support(cuda, *cc).builds_for())
        .collect();
    out.sort();
    out.dedup();
    out
}

pub fn runs_on(cuda: &Version, gpu: ComputeCapability) -> GpuFit {
    let t = targets(cuda);
    let (Some(&oldest), Some(&newest)) = (t.first(), t.last()) else {
        return GpuFit::Unknown;
    };
    if t.iter()
        .any(|a| a.major == gpu.major && a.minor <= gpu.minor)
    {
        GpuFit::Runs
    } else if gpu < oldest {
        GpuFit::TooOld { oldest }
    } else {
        GpuFit::TooNew { newest }
    }
}

/// A CUDA to use instead for a GPU that a release cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Alternative {
    /// This release or any newer one (the GPU is too new for the one asked about).
    FromOn(Version),
    /// Any release older than this one (it dropped the GPU).
    Before(Version),
}

/// The oldest newer release that runs `gpu`, or else the newest older one;
/// `None` when no release in the table runs it.
pub fn alternative(cuda: &Version, gpu: ComputeCapability) -> Option<Alternative> {
    // Support only changes at the releases the table names.
    let mut marks: Vec<Version> = data::arch()
        .arch
        .iter()
        .flat_map(|a| [&a.added, &a.deprecated, &a.removed])
        .flatten()
        .cloned()
        .collect();
    marks.sort();
    marks.dedup();
    let fits = |v: &Version| runs_on(v, gpu) == GpuFit::Runs;
    let mm = cuda.truncate(2);
    if let Some(v) = marks.iter().find(|v| **v > mm && fits(v)) {
        return Some(Alternative::FromOn(v.clone()));
    }
    let last = marks.iter().rposition(fits)?;
    Some(match marks.get(last + 1) {
        Some(next) => Alternative::Before(next.clone()),
        None => Alternative::FromOn(marks[last].clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        s.parse().unwrap()
    }
    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn parses_capabilities() {
        assert_eq!(cc("9.0"), ComputeCapability::new(9, 0));
        assert_eq!(cc("sm_86"), ComputeCapability::new(8, 6));
        assert_eq!(cc("sm_120"), ComputeCapability::new(12, 0));
        assert_eq!(cc("compute_90a"), ComputeCapability::new(9, 0));
        assert_eq!(cc("12.1").sm(), "sm_121");
        for bad in ["", "9", "sm_", "sm_x0", "9.x", "sm_1234"] {
            assert!(bad.parse::<ComputeCapability>().is_err(), "{bad}");
        }
    }

    #[test]
    fn support_table() {
        use ArchSupport::*;
        let cases: &[(&str, &str, ArchSupport)] = &[
            ("12.4", "9.0", Native),
            ("11.8", "9.0", Native),
            (
                "11.2",
                "9.0",
                TooNew {
                    first: Some(v("11.8")),
                },
            ),
            // sm_80 machine code runs on sm_86: 11.0 works there without building for it.
            ("11.0", "8.6", Compatible { via: cc("8.0") }),
            ("11.1", "8.9", Compatible { via: cc("8.6") }),
            ("12.8", "12.1", Compatible { via: cc("12.0") }),
            ("11.1", "8.6", Native),
            ("13.0", "6.1", Removed { since: v("13.0") }),
            ("13.0", "7.0", Removed { since: v("13.0") }),
            ("12.9", "7.0", Deprecated { since: v("12.8") }),
            ("12.4", "7.0", Native),
            ("13.0", "7.5", Native),
            ("12.0", "3.5", Removed { since: v("12.0") }),
            ("11.8", "3.5", Deprecated { since: v("11.0") }),
            (
                "12.6",
                "12.0",
                TooNew {
                    first: Some(v("12.8")),
                },
            ),
            ("12.8", "12.0", Native),
            ("13.0", "10.1", Removed { since: v("13.0") }),
            ("13.0", "11.0", Native),
            (
                "12.9",
                "11.0",
                TooNew {
                    first: Some(v("13.0")),
                },
            ),
            ("13.0", "15.0", TooNew { first: None }),
            ("8.0", "6.1", Unknown),
        ];
        for (cuda, c, want) in cases {
            assert_eq!(&support(&v(cuda), cc(c)), want, "CUDA {cuda} on {c}");
        }
        assert_eq!(cc("9.0").family(), Some("Hopper"));
        assert_eq!(first_cuda(cc("8.9")), Some(v("11.8")));
    }

    #[test]
    fn gpus_run_code_of_the_same_major() {
        let fit = |c: &str, g: &str| runs_on(&v(c), cc(g));
        // CUDA 11.2 predates Hopper; its newest target names the gap.
        assert_eq!(fit("11.2", "9.0"), GpuFit::TooNew { newest: cc("8.6") });
        assert_eq!(fit("11.8", "9.0"), GpuFit::Runs);
        assert_eq!(fit("12.4", "9.0"), GpuFit::Runs);
        // sm_86 machine code runs on sm_89, though 11.1 does not build for it.
        assert_eq!(fit("11.1", "8.9"), GpuFit::Runs);
        assert_eq!(fit("13.0", "7.0"), GpuFit::TooOld { oldest: cc("7.5") });
        assert!(matches!(fit("12.4", "10.0"), GpuFit::TooNew { .. }));
        assert_eq!(fit("12.8", "10.0"), GpuFit::Runs);
        assert_eq!(fit("13.0", "12.0"), GpuFit::Runs);
        assert_eq!(fit("12.9", "12.1"), GpuFit::Runs);
        assert!(matches!(fit("12.8", "12.1"), GpuFit::Runs));
        assert_eq!(fit("8.0", "6.1"), GpuFit::Unknown);
        assert_eq!(targets(&v("13.0")).first(), Some(&cc("7.5")));
        assert_eq!(targets(&v("13.0")).last(), Some(&cc("12.1")));

        let alt = |c: &str, g: &str| alternative(&v(c), cc(g));
        assert_eq!(alt("11.2", "9.0"), Some(Alternative::FromOn(v("11.8"))));
        assert_eq!(alt("13.0", "7.0"), Some(Alternative::Before(v("13.0"))));
        assert_eq!(alt("12.4", "10.0"), Some(Alternative::FromOn(v("12.8"))));
        assert_eq!(alt("13.0", "15.0"), None);
    }
}
