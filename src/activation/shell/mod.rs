//! Rendering environment changes as code for each shell.
//!
//! Each shell's knowledge sits in its own module (`bash`, `zsh`, `fish`,
//! `pwsh`): how it quotes a value, how it sets and unsets an exported
//! variable, its rc-file code and its prompt hook (the scripts in the
//! repository's `shims/` folder, embedded by that module). Each implements
//! [`Dialect`], so a shell cannot lack a piece, and each snapshot-tests its own
//! output. [`Shell`] is the user's choice of one (`--shell`, `$SHELL`).
//!
//! Every value is quoted by a shell-quoting library for the target shell
//! (`shell-quote` for POSIX shells and fish; PowerShell's single-quote rule by
//! hand, the only quoting it has), so a path with spaces, quotes, `$(…)`,
//! backticks or newlines is data, never code. Output is bytes: paths need not
//! be UTF-8 (PowerShell, which needs text, refuses such paths).
//!
//! The other submodules are shared by all shells: `init` fills the rc-file
//! code in (the binary's path, the shims directory); `session` computes what
//! the hook and `cudaenv shell` change, and how to undo it; `container`
//! renders the same changes as a Dockerfile's `ENV` lines and a GitHub Actions
//! `$GITHUB_ENV` file.

use std::ffi::OsStr;
use std::fmt;
use std::str::FromStr;

use crate::activation::EnvDelta;
use crate::error::{ActivationError, Error, Result};

mod bash;
mod cmd;
pub(crate) mod container;
mod fish;
pub(crate) mod init;
mod pwsh;
pub(crate) mod session;
mod zsh;

/// What cudaenv must know of a shell to integrate with it.
trait Dialect {
    /// The names its executable goes by (`$SHELL`'s last component).
    fn names(&self) -> &'static [&'static str];
    /// The rc file and the line users add to it.
    fn rc_file(&self) -> (&'static str, &'static str);
    /// The rc-file code: shims on PATH and the `cudaenv` function, with the
    /// placeholders `@CUDAENV@` (the binary) and `@SHIMS@` (the shims
    /// directory) for quoted words.
    fn init(&self) -> &'static str;
    /// The prompt / directory-change hook, with the same placeholders.
    fn hook(&self) -> &'static str;
    /// `value` as one word of this shell; `None` if the shell cannot hold it.
    fn quote(&self, value: &OsStr) -> Option<Vec<u8>>;
    /// Code that exports `name` with `value` (no line break).
    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>>;
    /// Code that unsets the exported `name` (no line break).
    fn unset(&self, name: &str) -> Vec<u8>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Pwsh,
    Cmd,
}

impl Shell {
    pub const ALL: [Shell; 5] = [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Pwsh,
        Shell::Cmd,
    ];

    fn dialect(self) -> &'static dyn Dialect {
        match self {
            Shell::Bash => &bash::Bash,
            Shell::Zsh => &zsh::Zsh,
            Shell::Fish => &fish::Fish,
            Shell::Pwsh => &pwsh::Pwsh,
            Shell::Cmd => &cmd::Cmd,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::Pwsh => "pwsh",
            Shell::Cmd => "cmd",
        }
    }

    /// Guesses the user's shell from a `$SHELL`-style path.
    pub fn from_path(path: &OsStr) -> Option<Shell> {
        let base = std::path::Path::new(path).file_name()?.to_str()?;
        Shell::ALL
            .into_iter()
            .find(|sh| sh.dialect().names().contains(&base))
    }

    /// The rc file this shell reads, and the line that sets cudaenv up in it.
    pub fn rc_file(self) -> (&'static str, &'static str) {
        self.dialect().rc_file()
    }

    /// The rc-file code and the hook, placeholders unfilled (see `init`).
    pub(crate) fn templates(self) -> (&'static str, &'static str) {
        (self.dialect().init(), self.dialect().hook())
    }

    /// Quotes one value as a single word of this shell.
    pub fn quote(self, value: &OsStr) -> Result<Vec<u8>> {
        self.dialect()
            .quote(value)
            .ok_or_else(|| self.unrepresentable(value))
    }

    fn unrepresentable(self, value: &OsStr) -> Error {
        Error::Activation(ActivationError::NotUtf8ForShell {
            shell: match self {
                Shell::Cmd => "cmd",
                _ => "PowerShell",
            },
            value: value.to_string_lossy().into_owned(),
        })
    }

    /// Code that sets (`Some`) or unsets (`None`) an exported variable.
    pub fn assign(self, name: &str, value: Option<&OsStr>) -> Result<Vec<u8>> {
        let d = self.dialect();
        let mut out = match value {
            Some(v) => d.set(name, v).ok_or_else(|| self.unrepresentable(v))?,
            None => d.unset(name),
        };
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
            .ok_or_else(|| {
                Error::Activation(ActivationError::UnknownShell {
                    name: s.to_string(),
                })
            })
    }
}

/// What every shell module's snapshot tests render.
#[cfg(test)]
mod fixture {
    use std::ffi::OsString;
    use std::path::Path;

    use super::Shell;
    use super::init::{self, Hook};
    use crate::activation::EnvDelta;

    /// The rc-file code with the hook, for a binary whose path has a space
    /// and a quote.
    pub fn init(shell: Shell) -> String {
        let out = init::render(
            shell,
            Path::new("/opt/it's cudaenv/bin/cudaenv"),
            Path::new("/home/u/.cudaenv/shims"),
            Hook::Install,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A transition as the hook gets it: lists prepended to, values set and
    /// one unset.
    pub fn delta(shell: Shell) -> String {
        let delta = EnvDelta {
            changes: vec![
                (
                    "PATH",
                    Some("/r/versions/12.4/bin:/usr/local/bin:/usr/bin".into()),
                ),
                ("LD_LIBRARY_PATH", Some("/r/versions/12.4/lib64".into())),
                ("CUDA_HOME", Some("/r/versions/12.4".into())),
                ("CUDAENV_ACTIVE", Some("12.4".into())),
                ("CUDNN_PATH", None),
            ],
            notes: Vec::new(),
        };
        String::from_utf8(shell.render(&delta).unwrap()).unwrap()
    }

    /// Values that would be code if they were not quoted.
    const TRICKY: [&str; 6] = [
        "/with space/bin",
        "/it's/\"double\"/bin",
        "/$HOME/${PATH}/$(rm -rf ~)/`id`",
        "/line\nbreak;echo pwned",
        "/back\\slash/*?[x]/~/#hash/!bang/%pct",
        "",
    ];

    /// One assignment of each tricky value.
    pub fn tricky(shell: Shell) -> String {
        let mut out = String::new();
        for v in TRICKY {
            let code = shell.assign("CUDA_HOME", Some(v.as_ref())).unwrap();
            out.push_str(std::str::from_utf8(&code).unwrap());
        }
        out
    }

    /// Runs each tricky assignment in the real shell (`program`) and checks
    /// that the variable then holds exactly the value, byte for byte.
    pub fn round_trip(shell: Shell, program: &str) {
        for v in TRICKY {
            let mut code = shell.assign("CUDA_HOME", Some(v.as_ref())).unwrap();
            code.extend_from_slice(b"printf %s \"$CUDA_HOME\"\n");
            let out = std::process::Command::new(program)
                .args(["-c", std::str::from_utf8(&code).unwrap()])
                .env_remove("CUDA_HOME")
                .output()
                .unwrap_or_else(|e| {
                    panic!("cannot run {program} (scripts/test.sh installs it): {e}")
                });
            assert!(out.status.success(), "{program}: {out:?}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), v, "{program}");
        }
    }

    /// A value that is not UTF-8.
    pub fn non_utf8() -> OsString {
        crate::os::testing::non_utf8("/opt/cuda-", "/bin")
    }
}
