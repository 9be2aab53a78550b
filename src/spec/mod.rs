//! Version specs: what a user writes to name a CUDA stack.
//!
//! Grammar (one parser, one type):
//!
//! ```text
//! spec    = "system" | stack | name
//! stack   = cuda { "+" lib lib_ver }                each lib at most once
//! lib     = "cudnn" | "nccl" | "trt" | "cusparselt" | "cutensor"
//! cuda    = num [ "." num [ "." num ] ]            12 | 12.4 | 12.4.1
//! lib_ver = num [ "." num [ "." num [ "." num ] ] ] 9 | 9.1 | 9.1.0 | 9.1.0.70
//! num     = "0" | [1-9][0-9]{0,5}
//! name    = [A-Za-z] [A-Za-z0-9._+-]{0,127}         (no "..", not "system")
//! ```
//!
//! Names start with a letter, so anything starting with a digit is a stack
//! spec or an error (`12.` or `012` never silently become names). Installed
//! stacks live in directories named by their full versions
//! (`12.4.1+cudnn9.1.0.70`), which `VersionName::for_stack` builds directly. After parsing, nothing re-checks strings: a
//! `VersionName` is known to be a safe single path component, so joining it
//! onto `versions/` can never escape that directory.

pub(crate) mod error;
pub(crate) mod library;
pub(crate) mod safe_url;
pub(crate) mod size;
pub(crate) mod source;

pub use library::{Libraries, Library};
pub use size::human_bytes;

use crate::error::{Error, Result, SpecError};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Room for a stack carrying every library at full versions
/// (`12.4.1+cudnn9.1.0.70+nccl2.21.5+trt10.0.1.6+cusparselt0.6.2+cutensor2.3.1`).
const MAX_NAME_LEN: usize = 128;
const MAX_NUM_DIGITS: usize = 6;

/// A dotted numeric version such as `12`, `12.4.1` or `9.1.0.70`.
///
/// Ordering is numeric, part by part; a prefix sorts before its extensions
/// (`12.4` < `12.4.0`), which is what "newest match" needs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version(Vec<u32>);

impl Version {
    /// Parses `1..=max_parts` dot-separated numbers.
    pub fn parse_parts(s: &str, max_parts: usize) -> std::result::Result<Version, String> {
        if s.is_empty() {
            return Err("empty version".into());
        }
        let mut parts = Vec::new();
        for p in s.split('.') {
            if p.is_empty() {
                return Err("empty part between dots".into());
            }
            if !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("`{p}` is not a number"));
            }
            if p.len() > 1 && p.starts_with('0') {
                return Err(format!("`{p}` has a leading zero"));
            }
            if p.len() > MAX_NUM_DIGITS {
                return Err(format!("`{p}` is too large"));
            }
            parts.push(p.parse::<u32>().map_err(|e| e.to_string())?);
        }
        if parts.len() > max_parts {
            return Err(format!("at most {max_parts} parts are allowed"));
        }
        Ok(Version(parts))
    }

    pub fn from_parts(parts: &[u32]) -> Version {
        Version(parts.to_vec())
    }

    pub fn parts(&self) -> &[u32] {
        &self.0
    }

    pub fn major(&self) -> u32 {
        self.0[0]
    }

    pub fn minor(&self) -> Option<u32> {
        self.0.get(1).copied()
    }

    /// True when `self` starts with every part of `prefix` (`12.4.1` matches `12.4`).
    pub fn matches(&self, prefix: &Version) -> bool {
        self.0.len() >= prefix.0.len() && self.0[..prefix.0.len()] == prefix.0[..]
    }

    /// The first `n` parts (or all of them when there are fewer).
    pub fn truncate(&self, n: usize) -> Version {
        Version(self.0[..n.min(self.0.len())].to_vec())
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl FromStr for Version {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Version::parse_parts(s, 4).map_err(|reason| {
            Error::Spec(SpecError::InvalidSpec {
                input: s.into(),
                reason,
            })
        })
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Version::parse_parts(&s, 4).map_err(serde::de::Error::custom)
    }
}

/// A CUDA release, optionally with a cuDNN and other libraries:
/// `12.4`, `11.2+cudnn8.1`, `12.4+cudnn9.1+nccl2.21+trt10.0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StackSpec {
    pub cuda: Version,
    pub cudnn: Option<Version>,
    /// NCCL, TensorRT, cuSPARSELt, cuTENSOR (see `library`).
    pub libs: Libraries,
}

impl StackSpec {
    /// A CUDA release with a cuDNN or none, and no other library.
    pub fn new(cuda: Version, cudnn: Option<Version>) -> StackSpec {
        StackSpec {
            cuda,
            cudnn,
            libs: Libraries::default(),
        }
    }

    /// Does an installed stack with these full versions satisfy this spec?
    /// (Its other libraries are checked by `matches_libs`.)
    pub fn matches(&self, cuda: &Version, cudnn: Option<&Version>) -> bool {
        cuda.matches(&self.cuda)
            && match (&self.cudnn, cudnn) {
                (None, _) => true,
                (Some(want), Some(have)) => have.matches(want),
                (Some(_), None) => false,
            }
    }

    /// Like `matches`, and every library the spec names is there in a
    /// matching version.
    pub fn matches_libs(&self, cuda: &Version, cudnn: Option<&Version>, libs: &Libraries) -> bool {
        self.matches(cuda, cudnn) && self.libs.satisfied_by(libs)
    }
}

impl fmt::Display for StackSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cuda)?;
        if let Some(c) = &self.cudnn {
            write!(f, "+cudnn{c}")?;
        }
        f.write_str(&self.libs.suffix())
    }
}

/// The name of a directory under `versions/`: a single, safe path component.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VersionName(String);

impl VersionName {
    pub fn parse(s: &str) -> std::result::Result<VersionName, String> {
        if s.is_empty() {
            return Err("the name is empty".into());
        }
        if s.len() > MAX_NAME_LEN {
            return Err(format!("names are at most {MAX_NAME_LEN} characters"));
        }
        let first = s.as_bytes()[0];
        if !first.is_ascii_alphanumeric() {
            return Err("a name must start with a letter".into());
        }
        if let Some(bad) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-')))
        {
            return Err(format!(
                "{} is not allowed; use letters, digits, `.`, `_`, `+` and `-`",
                describe_char(bad)
            ));
        }
        if s.contains("..") {
            return Err("`..` is not allowed".into());
        }
        if s == "system" {
            return Err("`system` is reserved for the toolkit outside cudaenv".into());
        }
        Ok(VersionName(s.to_string()))
    }

    /// The canonical directory name for an installed stack.
    pub fn for_stack(cuda: &Version, cudnn: Option<&Version>) -> VersionName {
        VersionName::for_stack_with(cuda, cudnn, &Libraries::default())
    }

    /// The canonical directory name of a stack with other libraries:
    /// `12.4.1+cudnn9.1.0.70+nccl2.21.5`.
    pub fn for_stack_with(
        cuda: &Version,
        cudnn: Option<&Version>,
        libs: &Libraries,
    ) -> VersionName {
        VersionName(
            StackSpec {
                cuda: cuda.clone(),
                cudnn: cudnn.cloned(),
                libs: libs.clone(),
            }
            .to_string(),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for VersionName {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl fmt::Display for VersionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a user can select.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Spec {
    /// Whatever the machine has outside cudaenv; activation removes cudaenv's entries.
    System,
    Stack(StackSpec),
    Name(VersionName),
}

impl Spec {
    pub fn parse(input: &str) -> Result<Spec> {
        Spec::parse_reason(input).map_err(|reason| {
            Error::Spec(SpecError::InvalidSpec {
                input: input.escape_debug().to_string(),
                reason,
            })
        })
    }

    /// Like `parse`, but returns only the reason, for callers that wrap it
    /// into their own error (a version file names its path and line).
    pub fn parse_reason(input: &str) -> std::result::Result<Spec, String> {
        if input == "system" {
            return Ok(Spec::System);
        }
        if input.contains(char::is_whitespace) {
            return Err("a spec is one word, without spaces: `12.4` or `12.4+cudnn9.1`".into());
        }
        if input.starts_with(|c: char| c.is_ascii_digit()) {
            return parse_stack(input).map(Spec::Stack);
        }
        if !input.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(
                "a spec starts with a CUDA version (`12.4`) or a letter (a linked version's name)"
                    .into(),
            );
        }
        VersionName::parse(input).map(Spec::Name)
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::System => f.write_str("system"),
            Spec::Stack(s) => s.fmt(f),
            Spec::Name(n) => n.fmt(f),
        }
    }
}

impl FromStr for Spec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Spec::parse(s)
    }
}

/// `cuda { "+" lib version }`: the one parser of a stack spec.
fn parse_stack(input: &str) -> std::result::Result<StackSpec, String> {
    let mut parts = input.split('+');
    let cuda = Version::parse_parts(parts.next().unwrap_or(""), 3)?;
    let mut stack = StackSpec::new(cuda, None);
    for part in parts {
        let word_len = part
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(part.len());
        let (word, version) = part.split_at(word_len);
        if word == "cudnn" {
            if stack.cudnn.is_some() {
                return Err("a spec has at most one `+cudnn…` part: `12.4+cudnn9.1`".into());
            }
            if version.is_empty() {
                // `12.4+cudnn`: say what to write, with the cuDNN major that
                // goes with this CUDA.
                let cuda = &stack.cuda;
                let major = if cuda.major() >= 12 { 9 } else { 8 };
                return Err(format!(
                    "`+cudnn` needs a cuDNN version: `{cuda}+cudnn{major}` takes the newest cuDNN {major} (`cudaenv ls-remote {cuda}` lists the builds)"
                ));
            }
            stack.cudnn =
                Some(Version::parse_parts(version, 4).map_err(|e| format!("cuDNN version: {e}"))?);
            continue;
        }
        let Some(lib) = Library::ALL.into_iter().find(|l| l.spec_word() == word) else {
            return Err(
                "expected `+cudnn`, `+nccl`, `+trt`, `+cusparselt` or `+cutensor` followed by a version: `12.4+cudnn9.1+nccl2.21`"
                    .into(),
            );
        };
        let v = Version::parse_parts(version, 4)
            .map_err(|e| format!("{} version: {e}", lib.title()))?;
        if stack.libs.insert(lib, v).is_some() {
            return Err(format!("`+{}…` appears twice", lib.spec_word()));
        }
    }
    Ok(stack)
}

fn describe_char(c: char) -> String {
    match c {
        '\0' => "a NUL byte".into(),
        '\n' => "a newline".into(),
        c if c.is_control() => format!("the control character {:?}", c),
        c => format!("`{c}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(s: &str) -> StackSpec {
        match Spec::parse(s).unwrap() {
            Spec::Stack(st) => st,
            other => panic!("{s} parsed as {other:?}"),
        }
    }

    #[test]
    fn a_cudnn_without_version_is_told_what_to_write() {
        let e = Spec::parse_reason("12.4+cudnn").unwrap_err();
        assert!(e.contains("`12.4+cudnn9` takes the newest cuDNN 9"), "{e}");
        let e = Spec::parse_reason("11.8+cudnn").unwrap_err();
        assert!(e.contains("`11.8+cudnn8`"), "{e}");
    }

    #[test]
    fn parses_stacks() {
        assert_eq!(stack("12").cuda.parts(), &[12]);
        assert_eq!(stack("12.4.1").cuda.parts(), &[12, 4, 1]);
        let s = stack("11.2+cudnn8.1");
        assert_eq!(s.cuda.parts(), &[11, 2]);
        assert_eq!(s.cudnn.unwrap().parts(), &[8, 1]);
        assert_eq!(
            stack("12.4+cudnn9.1.0.70").to_string(),
            "12.4+cudnn9.1.0.70"
        );
    }

    #[test]
    fn a_spec_with_two_versions_says_so() {
        let reason = |s| Spec::parse_reason(s).unwrap_err();
        assert!(
            reason("12.4 11.8").contains("one word"),
            "{}",
            reason("12.4 11.8")
        );
        assert!(
            reason("12.4+cudnn9.1+cudnn8").contains("at most one `+cudnn"),
            "{}",
            reason("12.4+cudnn9.1+cudnn8")
        );
    }

    #[test]
    fn parses_libraries_in_any_order_and_prints_them_in_one() {
        let s = stack("12.4+trt10.0+cudnn9.1+nccl2.21");
        assert_eq!(s.cudnn.as_ref().unwrap().parts(), &[9, 1]);
        assert_eq!(s.libs.get(Library::Nccl).unwrap().parts(), &[2, 21]);
        assert_eq!(s.libs.get(Library::Tensorrt).unwrap().parts(), &[10, 0]);
        assert_eq!(s.to_string(), "12.4+cudnn9.1+nccl2.21+trt10.0");
        let s = stack("12.4+cutensor2+cusparselt0.6.2");
        assert_eq!(s.to_string(), "12.4+cusparselt0.6.2+cutensor2");
        let name = VersionName::for_stack_with(
            &"12.4.1".parse().unwrap(),
            Some(&"9.1.0.70".parse().unwrap()),
            &s.libs,
        );
        assert_eq!(
            name.as_str(),
            "12.4.1+cudnn9.1.0.70+cusparselt0.6.2+cutensor2"
        );
        assert_eq!(
            Spec::parse(name.as_str()).unwrap().to_string(),
            name.as_str()
        );
        let reason = |s| Spec::parse_reason(s).unwrap_err();
        assert!(
            reason("12.4+nccl").contains("NCCL version"),
            "{}",
            reason("12.4+nccl")
        );
        assert!(reason("12.4+nccl2+nccl2.1").contains("appears twice"));
        assert!(reason("12.4+mkl1").contains("expected `+cudnn`"));
        assert!(reason("12.4+trt1.2.3.4.5").contains("TensorRT version"));
        // Full versions of every library fit a name.
        assert!(
            VersionName::parse(
                "12.4.1+cudnn9.1.0.70+nccl2.21.5+trt10.0.1.6+cusparselt0.6.2+cutensor2.3.1"
            )
            .is_ok()
        );
    }

    #[test]
    fn libraries_match_as_prefixes_and_only_when_named() {
        let v = |s: &str| Version::parse_parts(s, 4).unwrap();
        let have = stack("12.4.1+nccl2.21.5+trt10.0.1.6").libs;
        assert!(stack("12.4+nccl2.21").matches_libs(&v("12.4.1"), None, &have));
        assert!(stack("12.4").matches_libs(&v("12.4.1"), None, &have));
        assert!(!stack("12.4+nccl2.20").matches_libs(&v("12.4.1"), None, &have));
        assert!(!stack("12.4+cutensor2").matches_libs(&v("12.4.1"), None, &have));
    }

    #[test]
    fn parses_system_and_names() {
        assert_eq!(Spec::parse("system").unwrap(), Spec::System);
        assert!(matches!(Spec::parse("sys-cuda_13").unwrap(), Spec::Name(_)));
        assert!(matches!(
            Spec::parse("cuda-12.4-local").unwrap(),
            Spec::Name(_)
        ));
        assert!(Spec::parse("12.4-local").is_err());
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "",
            " ",
            "12.",
            ".12",
            "12..4",
            "12.4.1.2",
            "12+cudnn",
            "12+cudnn9.1.0.70.1",
            "12+cuda9",
            "012",
            "../../x",
            "/etc",
            "~/x",
            "$(id)",
            "`id`",
            "12.4;rm -rf ~",
            "a\0b",
            "a b",
            "..",
            "-12",
            "x/y",
            "a..b",
            "*",
            "12.4\n",
            "1234567.1",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn numeric_order_and_prefix_match() {
        let v = |s: &str| Version::parse_parts(s, 4).unwrap();
        assert!(v("12.10") > v("12.9"));
        assert!(v("12.4.1").matches(&v("12.4")));
        assert!(!v("12.40").matches(&v("12.4")));
        let s = stack("12.4+cudnn9");
        assert!(s.matches(&v("12.4.1"), Some(&v("9.1.0.70"))));
        assert!(!s.matches(&v("12.4.1"), None));
        assert!(!s.matches(&v("12.5.0"), Some(&v("9.1"))));
    }

    #[test]
    fn names_for_stacks_round_trip() {
        let n = VersionName::for_stack(
            &"12.4.1".parse().unwrap(),
            Some(&"9.1.0.70".parse().unwrap()),
        );
        assert_eq!(n.as_str(), "12.4.1+cudnn9.1.0.70");
        assert_eq!(Spec::parse(n.as_str()).unwrap().to_string(), n.as_str());
        assert!(VersionName::parse(n.as_str()).is_ok());
    }
}
