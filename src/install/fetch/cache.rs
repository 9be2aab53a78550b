//! Where a download lives in the cache: `downloads/<key>-<file name>`,
//! keyed by the artifact's sha256, or for an unverified artifact by a hash
//! of its URL (found again, never trusted as content). The file name a
//! source gives is made one harmless path component first.

use std::path::{Path, PathBuf};

use crate::install::sources::Artifact;
use crate::os::hash;

/// The download cache: `<cache>/downloads` and the unpacked `<cache>/pkgs`.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn downloads(&self) -> PathBuf {
        self.dir.join("downloads")
    }

    pub fn pkgs(&self) -> PathBuf {
        self.dir.join("pkgs")
    }

    /// The cache key of an artifact: its sha256, or for an unverified one a
    /// hash of its URL (so it is still found again, never trusted as content).
    pub fn key(a: &Artifact) -> String {
        Self::key_of(a.sha256.as_deref(), &a.url.without_credentials())
    }

    /// The key from an artifact's sha256 and URL without credentials (as a
    /// version's metadata records its components).
    pub fn key_of(sha256: Option<&str>, url: &str) -> String {
        match sha256 {
            Some(h) => h.to_ascii_lowercase(),
            None => format!("url-{}", hash::sha256(url.as_bytes())),
        }
    }

    /// Where a verified download lives.
    pub fn file_for(&self, a: &Artifact) -> PathBuf {
        self.downloads()
            .join(format!("{}-{}", Self::key(a), safe_file_name(&a.file_name)))
    }
}

/// A file name as a single harmless path component.
fn safe_file_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_start_matches('.').chars().take(150).collect()
}
