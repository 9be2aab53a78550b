//! The words that name where a stack comes from and how much of it to take:
//! `--source pypi|nvidia|debian|legacy|auto`, `--profile runtime|devel|full`,
//! and the per-component order `config.toml`'s `[sources]` sets.
//!
//! They are vocabulary, not machinery: settings, errors and locks name them,
//! so they live here, below every capability that does, and the sources
//! themselves (`install::sources`) re-export them.

use std::collections::{BTreeMap, BTreeSet};

/// Which source an artifact comes from.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Pypi,
    Nvidia,
    Legacy,
    /// NVIDIA's runtime libraries as the Debian archive packages them.
    Debian,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Pypi => "pypi",
            SourceKind::Nvidia => "nvidia",
            SourceKind::Legacy => "legacy",
            SourceKind::Debian => "debian",
        }
    }
}

/// What part of a toolkit to install.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The libraries frameworks load at run time (the default).
    #[default]
    Runtime,
    /// Runtime plus headers and the compiler pieces the source has.
    Devel,
    /// Everything the source offers.
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Runtime => "runtime",
            Profile::Devel => "devel",
            Profile::Full => "full",
        }
    }
}

/// What the user asked for with `--source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SourceChoice {
    /// Per component, the first source in the configured order that has it.
    #[default]
    Auto,
    Pypi,
    Nvidia,
    Legacy,
    Debian,
}

/// The per-component source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceOrder {
    pub default: Vec<SourceKind>,
    pub per_component: BTreeMap<String, Vec<SourceKind>>,
}

impl Default for SourceOrder {
    /// PyPI first (fast, reachable almost everywhere), then NVIDIA's redist,
    /// then Debian's packages (runtime libraries of 11.2, 11.8 and 12.4, on
    /// every Debian mirror), then the legacy runfiles. Except `nvcc`: PyPI's CUDA 12 `nvcc` wheel has
    /// `ptxas` and NVVM but no `nvcc` binary, so the compiler comes from
    /// NVIDIA's redist first.
    fn default() -> Self {
        SourceOrder {
            default: vec![
                SourceKind::Pypi,
                SourceKind::Nvidia,
                SourceKind::Debian,
                SourceKind::Legacy,
            ],
            per_component: BTreeMap::from([(
                "nvcc".to_string(),
                vec![SourceKind::Nvidia, SourceKind::Legacy, SourceKind::Pypi],
            )]),
        }
    }
}

impl SourceOrder {
    pub fn for_component(&self, name: &str, choice: SourceChoice) -> Vec<SourceKind> {
        match choice {
            SourceChoice::Auto => self
                .per_component
                .get(name)
                .unwrap_or(&self.default)
                .clone(),
            SourceChoice::Pypi => vec![SourceKind::Pypi],
            SourceChoice::Nvidia => vec![SourceKind::Nvidia],
            SourceChoice::Legacy => vec![SourceKind::Legacy],
            SourceChoice::Debian => vec![SourceKind::Debian],
        }
    }

    /// May any component come from `kind` under this choice?
    pub fn allows(&self, kind: SourceKind, choice: SourceChoice) -> bool {
        self.all(choice).contains(&kind)
    }

    /// Every source any component may use.
    pub(crate) fn all(&self, choice: SourceChoice) -> BTreeSet<SourceKind> {
        match choice {
            SourceChoice::Auto => self
                .default
                .iter()
                .chain(self.per_component.values().flatten())
                .copied()
                .collect(),
            other => self.for_component("", other).into_iter().collect(),
        }
    }
}

/// PEP 503 project names: lower case, runs of `-_.` as one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
        } else {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}
