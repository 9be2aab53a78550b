//! Rendering environment changes as code for each shell.
//!
//! Every value is quoted by a shell-quoting library for the target shell
//! (`shell-quote` for POSIX shells and fish; PowerShell's single-quote rule by
//! hand, the only quoting it has), so a path with spaces, quotes, `$(…)`,
//! backticks or newlines is data, never code. Output is bytes: paths need not
//! be UTF-8 (PowerShell, which needs text, refuses such paths).
//!
//! Submodules: `init` renders the rc-file code (hook, `cudaenv` function,
//! shims on PATH) from the scripts in the repository's `shims/` folder;
//! `session` computes what the hook and `cudaenv shell` change, and how to
//! undo it; `container` renders the same changes as a Dockerfile's `ENV`
//! lines and a GitHub Actions `$GITHUB_ENV` file.

use std::ffi::OsStr;
use std::fmt;
use std::str::FromStr;

use crate::activate::EnvDelta;
use crate::error::{Error, Result};

pub mod container;
pub mod init;
pub mod session;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Pwsh,
}

impl Shell {
    pub const ALL: [Shell; 4] = [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Pwsh];

    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::Pwsh => "pwsh",
        }
    }

    /// Guesses the user's shell from a `$SHELL`-style path.
    pub fn from_path(path: &OsStr) -> Option<Shell> {
        let base = std::path::Path::new(path).file_name()?.to_str()?;
        match base {
            "bash" | "sh" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            "pwsh" | "pwsh-preview" | "powershell" => Some(Shell::Pwsh),
            _ => None,
        }
    }

    /// Quotes one value as a single word of this shell.
    pub fn quote(self, value: &OsStr) -> Result<Vec<u8>> {
        Ok(match self {
            Shell::Bash | Shell::Zsh => shell_quote::Bash::quote_vec(value),
            Shell::Fish => shell_quote::Fish::quote_vec(value),
            Shell::Pwsh => {
                let s = value.to_str().ok_or_else(|| Error::NotUtf8ForShell {
                    shell: "PowerShell",
                    value: value.to_string_lossy().into_owned(),
                })?;
                format!("'{}'", s.replace('\'', "''")).into_bytes()
            }
        })
    }

    /// Code that sets (`Some`) or unsets (`None`) an exported variable.
    pub fn assign(self, name: &str, value: Option<&OsStr>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        match (self, value) {
            (Shell::Bash | Shell::Zsh, Some(v)) => {
                out.extend_from_slice(format!("export {name}=").as_bytes());
                out.extend(self.quote(v)?);
            }
            (Shell::Bash | Shell::Zsh, None) => {
                out.extend_from_slice(format!("unset {name}").as_bytes())
            }
            (Shell::Fish, Some(v)) => {
                out.extend_from_slice(format!("set -gx {name}").as_bytes());
                // fish treats *PATH variables as lists: give it the elements.
                if name.ends_with("PATH") {
                    for part in std::os::unix::ffi::OsStrExt::as_bytes(v).split(|&b| b == b':') {
                        out.push(b' ');
                        out.extend(self.quote(std::os::unix::ffi::OsStrExt::from_bytes(part))?);
                    }
                } else {
                    out.push(b' ');
                    out.extend(self.quote(v)?);
                }
            }
            (Shell::Fish, None) => out.extend_from_slice(format!("set -e {name}").as_bytes()),
            (Shell::Pwsh, Some(v)) => {
                out.extend_from_slice(format!("$env:{name} = ").as_bytes());
                out.extend(self.quote(v)?);
            }
            (Shell::Pwsh, None) => out.extend_from_slice(
                format!("Remove-Item -ErrorAction SilentlyContinue Env:{name}").as_bytes(),
            ),
        }
        out.push(b'\n');
        Ok(out)
    }

    /// Renders a whole delta.
    pub fn render(self, delta: &EnvDelta) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for (name, value) in &delta.changes {
            out.extend(self.assign(name, value.as_deref())?);
        }
        Ok(out)
    }
}

impl fmt::Display for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shell {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Shell::ALL
            .into_iter()
            .find(|sh| sh.name() == s)
            .ok_or_else(|| Error::UnknownShell {
                name: s.to_string(),
            })
    }
}
