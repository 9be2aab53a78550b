//! `versions/<name>/.cudaenv/meta.toml`: what a version is and where it came from.

use crate::error::{Error, Result, StoreError};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::spec::Version;

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A tree cudaenv built under `versions/<name>/` and owns.
    Installed,
    /// A tree elsewhere that cudaenv only points at and never modifies.
    Linked,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Component {
    pub name: String,
    pub version: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    pub schema: u32,
    pub kind: Kind,
    /// Full CUDA release (e.g. `12.4.1`) or, for a linked tree, as precise as detection got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<Version>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn: Option<Version>,
    /// Linked versions: the absolute path of the tree. Installed: none (the version dir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<PathBuf>,
    /// Relative to the prefix (or absolute).
    #[serde(default)]
    pub bin_dirs: Vec<PathBuf>,
    #[serde(default)]
    pub lib_dirs: Vec<PathBuf>,
    /// CUDA_HOME, relative to the prefix; none when the tree is not toolkit-shaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<PathBuf>,
    /// CUDNN_PATH, relative to the prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn_home: Option<PathBuf>,
    /// `pypi`, `nvidia`, `legacy`, `link`, or a mix (`pypi+nvidia`).
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Seconds since the Unix epoch.
    pub created: u64,
    #[serde(default)]
    pub components: Vec<Component>,
}

impl Metadata {
    pub fn new(kind: Kind, source: impl Into<String>) -> Metadata {
        Metadata {
            schema: SCHEMA,
            kind,
            cuda: None,
            cudnn: None,
            prefix: None,
            bin_dirs: Vec::new(),
            lib_dirs: Vec::new(),
            home: None,
            cudnn_home: None,
            source: source.into(),
            profile: None,
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            components: Vec::new(),
        }
    }

    pub fn read(path: &Path) -> Result<Metadata> {
        let text = crate::os::fs::read_bounded_text(path, crate::os::fs::SMALL)
            .map_err(|e| Error::io("cannot read version metadata", path)(e.into()))?;
        toml::from_str(&text).map_err(|e| {
            Error::Store(StoreError::BadMetadata {
                path: path.to_path_buf(),
                reason: e.message().to_string(),
            })
        })
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(self).map_err(Error::encode("version metadata"))?;
        std::fs::write(path, text).map_err(Error::io("cannot write", path))
    }
}
