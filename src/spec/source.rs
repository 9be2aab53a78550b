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

    /// The source as a message names it ("not available from PyPI").
    pub fn title(self) -> &'static str {
        match self {
            SourceKind::Pypi => "PyPI",
            SourceKind::Nvidia => "NVIDIA's redist manifests",
            SourceKind::Legacy => "the legacy source (runfiles, old cuDNN archives)",
            SourceKind::Debian => "the Debian archive",
        }
    }

    /// Where a library it serves comes from, as a note says it ("comes from
    /// NVIDIA's redist server").
    pub fn server(self) -> &'static str {
        match self {
            SourceKind::Pypi => "PyPI",
            SourceKind::Nvidia => "NVIDIA's redist server",
            SourceKind::Legacy => "NVIDIA's legacy downloads",
            SourceKind::Debian => "the Debian archive",
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

impl SourceChoice {
    /// The one source `--source X` restricts every component to; `None`
    /// for `auto`.
    pub fn only(self) -> Option<SourceKind> {
        match self {
            SourceChoice::Auto => None,
            SourceChoice::Pypi => Some(SourceKind::Pypi),
            SourceChoice::Nvidia => Some(SourceKind::Nvidia),
            SourceChoice::Legacy => Some(SourceKind::Legacy),
            SourceChoice::Debian => Some(SourceKind::Debian),
        }
    }

    /// The sources it allows, as a message names them ("not available from
    /// any configured source").
    pub fn title(self) -> &'static str {
        self.only()
            .map_or("any configured source", SourceKind::title)
    }

    /// What keeps a library out under this choice: `--source X`, or for
    /// `auto` the configured order, which lacks `pypi` (the one source
    /// of some library) or both sources that carry libraries.
    pub fn restriction(self, only_pypi_carries: bool) -> String {
        match self.only() {
            Some(kind) => format!("--source {}", kind.name()),
            None if only_pypi_carries => "the configured source order (it has no `pypi`)".into(),
            None => "the configured source order (it has neither `pypi` nor `nvidia`)".into(),
        }
    }
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
            // `--source X` restricts every component to X.
            other => other.only().into_iter().collect(),
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
