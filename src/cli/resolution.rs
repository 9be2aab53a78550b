//! What `install`, `mirror` and `lock` share: the flags that say how a stack
//! is resolved (profile, components, source), parsed once by clap into the
//! typed values the install planner's request takes (`install::planner`).
//!
//! Components are checked at the boundary: `--with nvc` fails in clap with
//! the list of the names the registry knows, before anything is read or
//! fetched, so nothing below re-checks the strings.

use clap::builder::{PossibleValuesParser, TypedValueParser};

use crate::error::{Error, Result, SpecError};
use crate::install::sources::Profile;
use crate::install::sources::remote::Refresh;
use crate::install::sources::resolve::SourceChoice;
use crate::spec::{Spec, StackSpec};

/// How a stack is resolved: flattened into each command that resolves one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Resolution {
    /// Which part of the toolkit. Default: `runtime` (for `lock`, the existing lock's).
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Components to add to the profile (comma-separated), e.g. `--with nvcc,cccl`;
    /// `--with nccl` (or tensorrt, cusparselt, cutensor) adds the newest build of
    /// that library for the stack's CUDA.
    #[arg(long, value_delimiter = ',', value_name = "C1,C2", value_parser = component_parser())]
    pub with: Vec<Component>,
    /// Components to leave out (comma-separated), e.g. `--without cufft,curand`.
    #[arg(long, value_delimiter = ',', value_name = "C", value_parser = component_parser())]
    pub without: Vec<Component>,
    /// Where the bits come from: `auto` takes each component from the first
    /// source that has it, in the configured order (see docs/sources.md).
    /// Default: `auto` (for `lock`, the existing lock's).
    #[arg(long, value_enum, value_name = "S")]
    pub source: Option<SourceChoice>,
}

impl Resolution {
    pub fn profile(&self) -> Profile {
        self.profile.unwrap_or_default()
    }

    pub fn source(&self) -> SourceChoice {
        self.source.unwrap_or_default()
    }

    /// `--with`, as the resolver takes it.
    pub fn with_names(&self) -> Vec<String> {
        names(&self.with)
    }

    /// `--without`, as the resolver takes it.
    pub fn without_names(&self) -> Vec<String> {
        names(&self.without)
    }

    /// Whether any component was named.
    pub fn names_components(&self) -> bool {
        !self.with.is_empty() || !self.without.is_empty()
    }
}

/// A component the registry knows (`cudart`, `nvcc` …), `cudnn`, or a
/// library beside the toolkit (`nccl`, `tensorrt`, `cusparselt`, `cutensor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component(&'static str);

impl Component {
    pub fn name(&self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for Component {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

fn names(list: &[Component]) -> Vec<String> {
    list.iter().map(|c| c.0.to_string()).collect()
}

/// Every component name, `cudnn` and the libraries beside the toolkit
/// (`nccl`, `tensorrt`, …) included: the registry is embedded, so the names
/// live as long as the program.
fn component_names() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = crate::registry::cuda_releases()
        .components
        .keys()
        .map(String::as_str)
        .collect();
    all.push("cudnn");
    all.extend(crate::spec::Library::ALL.map(|l| l.component()));
    all.sort_unstable();
    all
}

fn component_parser() -> impl TypedValueParser<Value = Component> {
    let names = component_names();
    PossibleValuesParser::new(names.clone()).map(move |s: String| {
        Component(
            names
                .iter()
                .copied()
                .find(|n| *n == s)
                .expect("clap only passes possible values"),
        )
    })
}

/// A spec argument that must name a CUDA release (`install`, `mirror`,
/// `lock`): `system` or a linked name fails in clap, naming the command.
pub fn stack_spec(command: &'static str) -> impl Fn(&str) -> Result<StackSpec> + Clone {
    move |s: &str| match Spec::parse(s)? {
        Spec::Stack(st) => Ok(st),
        _ => Err(Error::Spec(SpecError::InvalidSpec {
            input: s.escape_debug().to_string(),
            reason: format!("`{command}` needs a CUDA version such as `12.4` or `12.4+cudnn9.1`"),
        })),
    }
}

/// How the release list is read: `--refresh`, `--offline`, or when stale.
pub fn refresh(refresh: bool) -> Refresh {
    if refresh {
        Refresh::Always
    } else {
        Refresh::WhenStale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_component_and_cudnn_is_a_component() {
        let names = component_names();
        assert!(names.contains(&"cudart") && names.contains(&"cudnn"));
        let p = component_parser();
        let cmd = clap::Command::new("t");
        let arg = clap::Arg::new("with");
        assert_eq!(
            p.parse_ref(&cmd, Some(&arg), std::ffi::OsStr::new("nvcc"))
                .unwrap()
                .name(),
            "nvcc"
        );
        assert!(
            p.parse_ref(&cmd, Some(&arg), std::ffi::OsStr::new("nvc"))
                .is_err()
        );
    }
}
