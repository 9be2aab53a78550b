//! What is wrong with a command as typed, or with what it was asked to do.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of the command line, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{} does not exist", path.display())]
    PathNotFound { path: PathBuf },

    #[error("refusing to {action} without confirmation: standard input is not a terminal")]
    ConfirmationRequired { action: String },

    #[error("aborted: {0}")]
    Aborted(String),

    #[error("`{name}` is neither a help topic nor a command")]
    UnknownHelpTopic { name: String, topics: Vec<String> },

    #[error("`{name}` is not a cudaenv command")]
    UnknownCommand { name: String },

    /// `exec`: the command exists but could not be started.
    #[error("cannot run `{command}`")]
    CannotRun {
        command: String,
        #[source]
        source: std::io::Error,
    },
}

impl Diagnostic for CliError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::PathNotFound { .. } | Self::ConfirmationRequired { .. } => ExitCode::Usage,
            Self::Aborted(_) => ExitCode::Failure,
            Self::UnknownHelpTopic { .. } | Self::UnknownCommand { .. } => ExitCode::Usage,
            Self::CannotRun { .. } => ExitCode::Failure,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::ConfirmationRequired { .. } => msg!("hint-confirmation-required"),
            Self::UnknownHelpTopic { topics, .. } => {
                msg!("hint-unknown-help-topic", topics = topics.join(", "))
            }
            Self::UnknownCommand { .. } => msg!("hint-unknown-command"),
            Self::CannotRun { .. } => msg!("hint-cannot-run"),
            Self::PathNotFound { .. } | Self::Aborted(_) => return None,
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::PathNotFound { .. }
            | Self::ConfirmationRequired { .. }
            | Self::Aborted(_)
            | Self::UnknownHelpTopic { .. }
            | Self::UnknownCommand { .. }
            | Self::CannotRun { .. } => "failure",
        }
    }
}
