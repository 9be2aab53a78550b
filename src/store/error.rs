//! What is wrong with the versions on disk: the store, the system root, a version's record.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of the store, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A command that takes an exact version name (`uninstall`) got one that does not exist.
    #[error("no installed version is named `{name}`")]
    NoSuchVersion {
        name: String,
        installed: Vec<String>,
    },

    #[error("no CUDA runtime (libcudart.so) found under {}", path.display())]
    NoRuntimeAt { path: PathBuf },

    #[error("a version named `{name}` already exists")]
    AlreadyExists { name: String },

    #[error("no version is installed in {}", root.display())]
    NothingInstalled { root: PathBuf },

    /// A path a system version would activate that other users control: it
    /// does not exist and they can create it, or another user owns it.
    #[error("refusing to activate `{version}` from the system root: {} {why}", path.display())]
    UntrustedSystemPath {
        path: PathBuf,
        why: String,
        version: String,
    },

    #[error("refusing to activate `{version}` from the system root: {} (mode {mode:04o}) can be written by users other than its owner", path.display())]
    UnsafeSystemRoot {
        path: PathBuf,
        mode: u32,
        version: String,
    },

    #[error("cannot {action}: the system root {} is not writable by this user", root.display())]
    SystemRootNotWritable { root: PathBuf, action: String },

    #[error("no system root is configured")]
    NoSystemRoot,

    /// `prefix` of `system`.
    #[error("the system toolkit is not managed by cudaenv, so it has no prefix")]
    SystemHasNoPrefix,

    /// `link --force` onto a version that was installed, not linked.
    #[error("`{name}` is an installed version, not a link")]
    NotALink { name: String },

    /// Something at a version's place that is not a complete version.
    #[error("{} exists but is not a complete version", path.display())]
    IncompleteVersion { path: PathBuf },

    /// A version's `.cudaenv/meta.toml` that cannot be read.
    #[error("invalid version metadata {}: {reason}", path.display())]
    BadMetadata { path: PathBuf, reason: String },
}

impl Diagnostic for StoreError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::NoRuntimeAt { .. } => ExitCode::Usage,
            Self::NoSuchVersion { .. } => ExitCode::NotInstalled,
            Self::AlreadyExists { .. } => ExitCode::Failure,
            Self::NothingInstalled { .. } => ExitCode::NotInstalled,
            Self::UnsafeSystemRoot { .. } | Self::UntrustedSystemPath { .. } => {
                ExitCode::UnsafeSystemRoot
            }
            Self::SystemRootNotWritable { .. } => ExitCode::SystemRootNotWritable,
            Self::NoSystemRoot => ExitCode::Usage,
            Self::SystemHasNoPrefix
            | Self::NotALink { .. }
            | Self::IncompleteVersion { .. }
            | Self::BadMetadata { .. } => ExitCode::Failure,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::UntrustedSystemPath { .. } => msg!("hint-untrusted-system-path"),
            Self::NoRuntimeAt { .. } => msg!("hint-no-runtime-at"),
            Self::AlreadyExists { name } => msg!("hint-already-exists", name = name),
            Self::NoSuchVersion { installed, .. } => {
                if installed.is_empty() {
                    msg!("hint-nothing-is-installed")
                } else {
                    msg!("hint-no-such-version", installed = installed.join(", "))
                }
            }
            Self::UnsafeSystemRoot { path, .. } => {
                msg!("hint-unsafe-system-root", path = path.display())
            }
            Self::SystemRootNotWritable { root, .. } => {
                msg!("hint-system-root-not-writable", root = root.display())
            }
            Self::NoSystemRoot => msg!(
                "hint-no-system-root",
                variable = crate::context::env_vars::CUDAENV_SYSTEM_ROOT
            ),
            Self::NothingInstalled { .. } => msg!("hint-nothing-installed"),
            Self::SystemHasNoPrefix => msg!("hint-system-has-no-prefix"),
            Self::NotALink { name } => msg!("hint-not-a-link", name = name),
            Self::IncompleteVersion { .. } => msg!("hint-incomplete-version"),
            Self::BadMetadata { path, .. } => msg!(
                "hint-bad-metadata",
                path = path
                    .parent()
                    .and_then(|p| p.parent())
                    .unwrap_or(path)
                    .display()
            ),
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::NoSuchVersion { .. }
            | Self::NoRuntimeAt { .. }
            | Self::AlreadyExists { .. }
            | Self::NothingInstalled { .. }
            | Self::UnsafeSystemRoot { .. }
            | Self::UntrustedSystemPath { .. }
            | Self::SystemRootNotWritable { .. }
            | Self::NoSystemRoot
            | Self::SystemHasNoPrefix
            | Self::NotALink { .. }
            | Self::IncompleteVersion { .. }
            | Self::BadMetadata { .. } => "failure",
        }
    }
}
