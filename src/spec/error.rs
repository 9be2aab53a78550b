//! What is wrong with a spec or a version name a user typed.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of a spec, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("invalid version spec `{input}`: {reason}")]
    InvalidSpec { input: String, reason: String },

    #[error("`{name}` is not a valid version name: {reason}")]
    InvalidName { name: String, reason: String },
}

impl Diagnostic for SpecError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::InvalidSpec { .. } | Self::InvalidName { .. } => ExitCode::Usage,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::InvalidSpec { .. } => msg!("hint-invalid-spec"),
            Self::InvalidName { .. } => return None,
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::InvalidSpec { .. } | Self::InvalidName { .. } => "usage",
        }
    }
}
