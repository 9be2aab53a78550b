//! The libraries a stack may carry beside the toolkit and cuDNN: NCCL,
//! TensorRT, cuSPARSELt and cuTENSOR.
//!
//! Each is versioned on its own (NCCL 2.21.5 builds exist for several CUDA
//! releases), so a stack names it as it names cuDNN: `12.4+nccl2.21+trt10.0`,
//! a version prefix of which the newest build for the stack's CUDA major is
//! taken. `--with nccl` asks for the newest build. The set is closed: an enum,
//! one spelling in a spec each, so nothing below the parser compares strings.
//! Where each comes from (PyPI projects per CUDA major, the index that serves
//! them) is registry data (`registry/pypi.toml`, `[libraries]`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::Version;

/// A library a stack may carry; the order is the order in a stack's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Library {
    Nccl,
    Tensorrt,
    Cusparselt,
    Cutensor,
}

impl Library {
    pub const ALL: [Library; 4] = [
        Library::Nccl,
        Library::Tensorrt,
        Library::Cusparselt,
        Library::Cutensor,
    ];

    /// Its name as a component (`--with`, locks, a version's metadata).
    pub fn component(self) -> &'static str {
        match self {
            Library::Nccl => "nccl",
            Library::Tensorrt => "tensorrt",
            Library::Cusparselt => "cusparselt",
            Library::Cutensor => "cutensor",
        }
    }

    /// How a spec spells it: `+nccl2.21`, `+trt10.0`.
    pub fn spec_word(self) -> &'static str {
        match self {
            Library::Tensorrt => "trt",
            other => other.component(),
        }
    }

    /// As NVIDIA writes it.
    pub fn title(self) -> &'static str {
        match self {
            Library::Nccl => "NCCL",
            Library::Tensorrt => "TensorRT",
            Library::Cusparselt => "cuSPARSELt",
            Library::Cutensor => "cuTENSOR",
        }
    }

    pub fn from_component(name: &str) -> Option<Library> {
        Library::ALL.into_iter().find(|l| l.component() == name)
    }

    /// The file the loader is asked for, given the library's own version
    /// (TensorRT and cuTENSOR put their major in the soname).
    pub fn soname(self, version: &Version) -> String {
        match self {
            Library::Nccl => "libnccl.so.2".into(),
            Library::Tensorrt => format!("libnvinfer.so.{}", version.major()),
            Library::Cusparselt => "libcusparseLt.so.0".into(),
            Library::Cutensor => format!("libcutensor.so.{}", version.major()),
        }
    }

    /// The start of the file names of its shared library, whatever the version.
    pub fn soname_stem(self) -> &'static str {
        match self {
            Library::Nccl => "libnccl.so",
            Library::Tensorrt => "libnvinfer.so",
            Library::Cusparselt => "libcusparseLt.so",
            Library::Cutensor => "libcutensor.so",
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// Library versions (a spec's prefixes, or a plan's full versions), in the
/// canonical order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Libraries(BTreeMap<Library, Version>);

impl Libraries {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, lib: Library) -> Option<&Version> {
        self.0.get(&lib)
    }

    /// Sets one; returns the version it had.
    pub fn insert(&mut self, lib: Library, v: Version) -> Option<Version> {
        self.0.insert(lib, v)
    }

    pub fn remove(&mut self, lib: Library) -> Option<Version> {
        self.0.remove(&lib)
    }

    pub fn iter(&self) -> impl Iterator<Item = (Library, &Version)> {
        self.0.iter().map(|(l, v)| (*l, v))
    }

    /// Does a stack carrying `have` satisfy these prefixes? Every library
    /// named here must be there with a matching version; others may be.
    pub fn satisfied_by(&self, have: &Libraries) -> bool {
        self.0
            .iter()
            .all(|(l, want)| have.get(*l).is_some_and(|v| v.matches(want)))
    }

    /// `+nccl2.21.5+trt10.0.1.6`, as a stack's name ends.
    pub fn suffix(&self) -> String {
        self.iter()
            .map(|(l, v)| format!("+{}{v}", l.spec_word()))
            .collect()
    }
}

impl FromIterator<(Library, Version)> for Libraries {
    fn from_iter<I: IntoIterator<Item = (Library, Version)>>(iter: I) -> Self {
        Libraries(iter.into_iter().collect())
    }
}
