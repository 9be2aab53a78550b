//! What is wrong with the settings: `config.toml`, environment variables, the home directory.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of the settings, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("cannot determine the home directory; set HOME or CUDAENV_ROOT")]
    NoHome,

    #[error("invalid configuration {}: {reason}", path.display())]
    Config { path: PathBuf, reason: String },

    /// `--target-driver`/`--target-arch` (or their variables) malformed.
    #[error("invalid {setting} `{input}`: {reason}")]
    InvalidTarget {
        setting: String,
        input: String,
        reason: String,
    },

    /// `CUDAENV_HTTP_TIMEOUT` is not a number of seconds.
    #[error("{variable}=`{value}` is not a number of seconds (1 or more)")]
    InvalidHttpTimeout {
        variable: &'static str,
        value: String,
        default_secs: u64,
    },
    /// An environment variable whose value cannot be used.
    #[error("invalid {variable}=`{value}`: expected {expected}")]
    BadVariable {
        variable: &'static str,
        value: String,
        expected: String,
    },
}

impl Diagnostic for ContextError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::Config { .. } => ExitCode::Usage,
            Self::NoHome => ExitCode::Failure,
            Self::InvalidTarget { .. } => ExitCode::Usage,
            Self::InvalidHttpTimeout { .. } => ExitCode::Usage,
            Self::BadVariable { .. } => ExitCode::Usage,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::Config { .. } => msg!("hint-config"),
            Self::InvalidTarget { .. } => msg!("hint-invalid-target"),
            Self::InvalidHttpTimeout { default_secs, .. } => msg!(
                "hint-invalid-http-timeout",
                variable = crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
                default = default_secs
            ),
            Self::BadVariable { variable, .. } => {
                msg!("hint-bad-variable", variable = variable)
            }
            Self::NoHome => return None,
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::BadVariable { .. } | Self::InvalidHttpTimeout { .. } => "usage",
            Self::NoHome | Self::Config { .. } | Self::InvalidTarget { .. } => "failure",
        }
    }
}
