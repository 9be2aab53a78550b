//! What stops a version from being selected or activated: pins, version files, shells, shims, modulefiles.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of activation, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    /// A project file (`.cuda-version`, `cuda.lock`) this user may not read:
    /// a permission problem, not a malformed file.
    #[error("cannot read {}: permission denied{}", path.display(), match (mode, owner) {
        (Some(m), Some(u)) => format!(" (mode {m:04o}, owned by uid {u})"),
        _ => String::new(),
    })]
    UnreadableFile {
        path: PathBuf,
        mode: Option<u32>,
        owner: Option<u32>,
    },

    /// `line` is 1-based; 0 means the problem is the file as a whole.
    #[error("invalid version file {}{}: {reason}", path.display(), if *line > 0 { format!(", line {line}") } else { String::new() })]
    InvalidVersionFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    #[error("version `{spec}` is not installed{}", origin.as_ref().map(|o| format!(" (selected by {o})")).unwrap_or_default())]
    NotInstalled {
        spec: String,
        origin: Option<String>,
        installed: Vec<String>,
        /// Whether `spec` is a version name, which only `link` creates.
        named: bool,
    },

    #[error("the path {} cannot be used in {variable}: {reason}", shown_path(path))]
    UnrepresentablePath {
        path: PathBuf,
        variable: &'static str,
        reason: &'static str,
    },

    #[error("command `{command}` not found in version `{version}`")]
    CommandNotFound {
        command: String,
        version: String,
        available_in: Vec<String>,
    },

    #[error("shim `{command}` called itself {depth} times in a row")]
    ShimRecursion { command: String, depth: u32 },

    #[error("no {file} (nor a `cuda` line in {tool_versions}) in {} or any parent directory", dir.display())]
    NoPin {
        file: &'static str,
        tool_versions: &'static str,
        dir: PathBuf,
        installed: Vec<String>,
    },

    #[error("`cudaenv {command}` needs the name of a version")]
    VersionNameRequired {
        command: &'static str,
        installed: Vec<String>,
    },
    #[error("{} exists and was not written by cudaenv; not replacing it", path.display())]
    ModulefileNotOurs { path: PathBuf },

    /// `shell` without SPEC when no shell-specific version is set.
    #[error("no shell-specific version is set ({variable} is unset)")]
    NoShellVersion { variable: &'static str },

    /// A value a shell's code cannot carry.
    #[error(
        "cannot pass the value {value} to {shell}: it is non-UTF-8 text (or, for cmd, holds a quote or a line break)"
    )]
    NotUtf8ForShell { shell: &'static str, value: String },

    #[error("unknown shell `{name}`")]
    UnknownShell { name: String },
}

impl Diagnostic for ActivationError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::InvalidVersionFile { .. }
            | Self::UnreadableFile { .. }
            | Self::UnrepresentablePath { .. } => ExitCode::Usage,
            Self::NotInstalled { .. } => ExitCode::NotInstalled,
            Self::CommandNotFound { .. } => ExitCode::CommandNotFound,
            Self::ShimRecursion { .. } => ExitCode::Failure,
            Self::NoPin { .. } => ExitCode::Failure,
            Self::VersionNameRequired { .. } => ExitCode::Usage,
            Self::ModulefileNotOurs { .. } => ExitCode::Failure,
            Self::NoShellVersion { .. }
            | Self::NotUtf8ForShell { .. }
            | Self::UnknownShell { .. } => ExitCode::Failure,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::InvalidVersionFile { path, .. } => {
                msg!("hint-invalid-version-file", path = path.display())
            }
            Self::UnreadableFile { path, .. } => {
                msg!("hint-unreadable-file", path = path.display())
            }
            Self::UnrepresentablePath { path, .. }
                if path
                    .as_os_str()
                    .as_encoded_bytes()
                    .iter()
                    .any(|b| matches!(b, b'\n' | b'\r')) =>
            {
                msg!("hint-path-with-line-break")
            }
            Self::NotInstalled {
                spec,
                installed,
                named,
                ..
            } => {
                let h = how_to_get_msg(spec, *named);
                if installed.is_empty() {
                    h
                } else {
                    msg!("hint-installed-list", hint => h, installed = installed.join(", "))
                }
            }
            Self::CommandNotFound { available_in, .. } if !available_in.is_empty() => {
                msg!(
                    "hint-command-in-other-versions",
                    versions = available_in.join(", ")
                )
            }
            Self::ShimRecursion { command, .. } => msg!(
                "hint-shim-recursion",
                command = command,
                variable = crate::context::env_vars::CUDAENV_SHIM_DEPTH
            ),
            Self::CommandNotFound { command, .. } => {
                msg!("hint-command-not-found", command = command)
            }
            Self::UnrepresentablePath { .. } => msg!("hint-unrepresentable-path"),
            Self::NoPin { installed, .. } => match installed.as_slice() {
                [] => msg!("hint-no-pin-nothing-installed"),
                _ => msg!("hint-no-pin", installed = installed.join(", ")),
            },
            Self::VersionNameRequired { command, installed } => match installed.as_slice() {
                [] => msg!("hint-version-name-required-none"),
                _ => msg!(
                    "hint-version-name-required",
                    command = command,
                    installed = installed.join(", ")
                ),
            },
            Self::ModulefileNotOurs { .. } => msg!("hint-modulefile-not-ours"),
            Self::NoShellVersion { .. } => msg!("hint-no-shell-version"),
            Self::NotUtf8ForShell { .. } => msg!("hint-not-utf8-for-shell"),
            Self::UnknownShell { .. } => msg!("hint-unknown-shell"),
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::NotInstalled { .. } | Self::CommandNotFound { .. } => "not_installed",
            Self::InvalidVersionFile { .. }
            | Self::UnreadableFile { .. }
            | Self::UnrepresentablePath { .. } => "usage",
            Self::ShimRecursion { .. }
            | Self::NoPin { .. }
            | Self::VersionNameRequired { .. }
            | Self::ModulefileNotOurs { .. }
            | Self::NoShellVersion { .. }
            | Self::NotUtf8ForShell { .. }
            | Self::UnknownShell { .. } => "failure",
        }
    }
}

/// What to run to make `spec` available: `install` for a CUDA version; for a
/// name (`named`: which only `link` creates) installing makes no sense.
pub fn how_to_get_msg(spec: &str, named: bool) -> Msg {
    if named {
        msg!("hint-link-a-name", spec = spec)
    } else {
        msg!("hint-install-spec", spec = spec)
    }
}

/// A path in a message, its control characters escaped (`\n`), so that a
/// path holding a line break cannot forge a line of output.
fn shown_path(p: &std::path::Path) -> String {
    let s = p.display().to_string();
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        s
    }
}
