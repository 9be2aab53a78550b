//! The library's error type: a thin wrapper over each capability's own.
//!
//! Each capability keeps its errors next to the data they describe
//! (`install/error.rs`, `machine/error.rs`, …): the values a user needs (the
//! file, the URL, expected and actual hashes) and, through the `Diagnostic`
//! trait, the exit code, the `--json` kind and the hint, the one thing to do
//! next. `Error` wraps them, with the few failures every capability shares
//! (I/O, a write outside, an interruption, an encoding or a task that
//! failed). Errors are printed once, at the top of the binary
//! (`ui::report_error`, called by `cli::main`), as `error:` + the chain of
//! causes + `hint:`. Exit codes are in `exit` and docs/exit-codes.md.

use std::path::PathBuf;

pub mod exit;

pub use crate::activation::error::ActivationError;
pub use crate::cli::error::CliError;
pub use crate::context::error::ContextError;
pub use crate::install::error::InstallError;
pub use crate::machine::error::MachineError;
pub use crate::spec::error::SpecError;
pub use crate::store::error::StoreError;
pub use exit::{Diagnostic, ExitCode};

use crate::i18n::Msg;
use crate::msg;
use crate::spec::source::SourceKind;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Activation(#[from] ActivationError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error(transparent)]
    Cli(#[from] CliError),

    /// A write under a directory cudaenv was given would go through a link
    /// (or a non-directory) inside it (`os::fs::create_dirs_within`).
    #[error("refusing to write under {}: {} is a symbolic link or not a directory, and cudaenv never writes through a link inside a directory it was given", dir.display(), path.display())]
    WriteOutside { dir: PathBuf, path: PathBuf },

    #[error("interrupted")]
    Interrupted,

    #[error("{context}: {}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Encoding a value cudaenv built itself (JSON, TOML) failed.
    #[error("cannot encode {what}: {reason}")]
    Encode { what: &'static str, reason: String },

    /// A task run on another thread panicked or was cancelled.
    #[error("the {task} task failed: {reason}")]
    TaskFailed { task: &'static str, reason: String },
}

impl Error {
    /// Wraps an I/O error with what was being done and to which path.
    pub fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            context,
            path,
            source,
        }
    }

    /// Wraps the failure of a task run on another thread (a join error, a panic).
    pub fn task<E: std::fmt::Display>(task: &'static str) -> impl FnOnce(E) -> Error {
        move |e| Error::TaskFailed {
            task,
            reason: e.to_string(),
        }
    }

    /// Wraps a failure to encode a value cudaenv built itself.
    pub fn encode<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> Error {
        move |e| Error::Encode {
            what,
            reason: e.to_string(),
        }
    }

    /// Says which source a network or size failure came from, when the code
    /// that failed (a shared retry loop) did not know it.
    pub fn from_source(self, kind: SourceKind) -> Error {
        match self {
            Error::Install(e) => Error::Install(e.from_source(kind)),
            other => other,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Spec(e) => e.exit_code(),
            Error::Context(e) => e.exit_code(),
            Error::Store(e) => e.exit_code(),
            Error::Activation(e) => e.exit_code(),
            Error::Machine(e) => e.exit_code(),
            Error::Install(e) => e.exit_code(),
            Error::Cli(e) => e.exit_code(),
            // A disk that fills up while a version is unpacked or written.
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull => {
                ExitCode::NoSpace
            }
            Error::WriteOutside { .. } => ExitCode::Usage,
            Error::Interrupted => ExitCode::Interrupted,
            Error::Io { .. } | Error::Encode { .. } | Error::TaskFailed { .. } => ExitCode::Failure,
        }
    }

    /// What the user should do next, when there is something useful to say
    /// (in English: what `--json` and the tests read).
    pub fn hint(&self) -> Option<String> {
        self.hint_msg().map(|m| m.en())
    }

    /// The hint as a message, shown in the user's language by the printer.
    pub fn hint_msg(&self) -> Option<Msg> {
        match self {
            Error::Spec(e) => e.hint_msg(),
            Error::Context(e) => e.hint_msg(),
            Error::Store(e) => e.hint_msg(),
            Error::Activation(e) => e.hint_msg(),
            Error::Machine(e) => e.hint_msg(),
            Error::Install(e) => e.hint_msg(),
            Error::Cli(e) => e.hint_msg(),
            Error::WriteOutside { path, .. } => {
                Some(msg!("hint-write-outside", path = path.display()))
            }
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull => {
                Some(msg!("hint-no-space"))
            }
            Error::Encode { .. } | Error::TaskFailed { .. } => Some(msg!("hint-bug")),
            Error::Interrupted | Error::Io { .. } => None,
        }
    }

    /// A short machine-readable name for the kind of problem (`--json`).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Spec(e) => e.kind(),
            Error::Context(e) => e.kind(),
            Error::Store(e) => e.kind(),
            Error::Activation(e) => e.kind(),
            Error::Machine(e) => e.kind(),
            Error::Install(e) => e.kind(),
            Error::Cli(e) => e.kind(),
            Error::WriteOutside { .. }
            | Error::Interrupted
            | Error::Io { .. }
            | Error::Encode { .. }
            | Error::TaskFailed { .. } => "failure",
        }
    }
}
