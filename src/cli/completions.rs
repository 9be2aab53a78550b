//! `cudaenv completions bash|zsh|fish|pwsh`: tab completion for the shell.
//!
//! The script it prints only registers a completer; at each TAB the shell runs
//! `CUDAENV_COMPLETE=<shell> cudaenv -- WORDS…`, and cudaenv answers from the
//! same clap definition that parses its command line (clap_complete's dynamic
//! engine, driven from `cli::main` before parsing). So every subcommand and
//! flag completes without a change here, and arguments that name a version
//! complete the versions installed *now*, not when the script was written:
//! every argument with the id `spec` (except `install`'s, which names a
//! release to download) offers the installed versions and `system`,
//! `uninstall`'s `name` the installed versions, and `help` the documentation
//! topics and commands.
//!
//! The registration names this executable by its absolute path, as `init`
//! does, so completion works before PATH is set up and for a copy that is not
//! first on PATH.

use std::ffi::OsString;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use clap_complete::env::{Bash, CompleteEnv, EnvCompleter, Fish, Powershell, Zsh};

use super::Env;
use crate::activation::shell::Shell;
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ActivationError, Error, ExitCode, Result, SpecError};
use crate::store::Store;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    eval \"$(cudaenv completions bash)\"                       # in ~/.bashrc\n  \
    eval \"$(cudaenv completions zsh)\"                        # in ~/.zshrc, after compinit\n  \
    cudaenv completions fish > ~/.config/fish/completions/cudaenv.fish\n  \
    cudaenv completions pwsh | Out-String | Invoke-Expression  # in $PROFILE")]
pub struct Args {
    /// The shell to print the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let exe = std::env::current_exe().map_err(Error::io(
        "cannot find the running executable",
        "/proc/self/exe",
    ))?;
    let completer = exe.to_str().ok_or_else(|| {
        Error::Activation(ActivationError::UnrepresentablePath {
            path: exe.clone(),
            variable: "the completion script",
            reason: "it is not valid UTF-8",
        })
    })?;
    let shell: &dyn EnvCompleter = match args.shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Pwsh => &Powershell,
        Shell::Cmd => {
            return Err(Error::Spec(SpecError::InvalidName {
                name: "cmd".into(),
                reason: "cmd.exe has no programmable completion; in PowerShell, use `cudaenv completions pwsh`".into(),
            }));
        }
    };
    let mut script = Vec::new();
    shell
        .write_registration(
            env_vars::CUDAENV_COMPLETE,
            "cudaenv",
            "cudaenv",
            completer,
            &mut script,
        )
        .map_err(Error::io("cannot write to", "standard output"))?;
    env.out(&script)?;
    Ok(ExitCode::Success)
}

/// Answers a completion request (`CUDAENV_COMPLETE` set by the registered
/// script) and returns its exit code; `None` for an ordinary run.
pub fn answer_if_requested(args: Vec<OsString>) -> Option<ExitCode> {
    std::env::var_os(env_vars::CUDAENV_COMPLETE)?;
    let cwd = std::env::current_dir().ok();
    match CompleteEnv::with_factory(command)
        .var(env_vars::CUDAENV_COMPLETE)
        .try_complete(args, cwd.as_deref())
    {
        Ok(true) => Some(ExitCode::Success),
        Ok(false) => None,
        Err(e) => {
            let _ = e.print();
            Some(ExitCode::Usage)
        }
    }
}

/// The command line definition, with the arguments that name a version
/// completing the installed ones.
fn command() -> clap::Command {
    with_version_candidates(super::Cli::command())
}

fn with_version_candidates(mut cmd: clap::Command) -> clap::Command {
    let name = cmd.get_name().to_string();
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let candidates = match (name.as_str(), id.as_str()) {
            ("install", _) => continue,
            (_, "spec") => ArgValueCandidates::new(|| installed(true)),
            ("uninstall", "name") => ArgValueCandidates::new(|| installed(false)),
            ("help", "name") => ArgValueCandidates::new(help_names),
            _ => continue,
        };
        cmd = cmd.mut_arg(id, |a| a.add(candidates));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subs {
        cmd = cmd.mut_subcommand(sub, with_version_candidates);
    }
    cmd
}

/// What `cudaenv help` takes: the documentation topics, then the commands.
fn help_names() -> Vec<CompletionCandidate> {
    let mut out: Vec<CompletionCandidate> = super::help::TOPICS
        .iter()
        .map(|(name, title, _)| {
            CompletionCandidate::new(*name).help(Some(title.replace('`', "").into()))
        })
        .collect();
    for sub in super::Cli::command().get_subcommands() {
        if !sub.is_hide_set() && super::help::topic(sub.get_name()).is_none() {
            out.push(CompletionCandidate::new(sub.get_name()).help(sub.get_about().cloned()));
        }
    }
    out
}

/// The installed versions (and `system`), each described by its CUDA and
/// cuDNN; nothing when the root cannot be read (completion never errors).
fn installed(with_system: bool) -> Vec<CompletionCandidate> {
    let Ok(ctx) = Context::from_process() else {
        return Vec::new();
    };
    let mut out: Vec<CompletionCandidate> = Store::new(ctx.root())
        .list()
        .unwrap_or_default()
        .iter()
        .map(|v| {
            let mut about = match v.cuda() {
                Some(c) => format!("CUDA {c}"),
                None => "no CUDA runtime".to_string(),
            };
            if let Some(d) = v.cudnn() {
                about.push_str(&format!(" + cuDNN {d}"));
            }
            CompletionCandidate::new(v.name.as_str()).help(Some(about.into()))
        })
        .collect();
    if with_system {
        out.push(
            CompletionCandidate::new("system")
                .help(Some("whatever CUDA is on PATH, no cudaenv version".into())),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The completion definition adds candidates to arguments by id; it must
    /// still be a valid definition, and find the arguments it names.
    #[test]
    fn version_arguments_complete_installed_versions() {
        let cmd = command();
        cmd.clone().debug_assert();
        let has_candidates = |sub: &str, id: &str| {
            cmd.find_subcommand(sub)
                .unwrap()
                .get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap()
                .get::<ArgValueCandidates>()
                .is_some()
        };
        for sub in [
            "local", "global", "shell", "prefix", "env", "exec", "verify",
        ] {
            assert!(has_candidates(sub, "spec"), "{sub}");
        }
        assert!(has_candidates("uninstall", "name"));
        assert!(has_candidates("help", "name"));
        assert!(!has_candidates("install", "spec"));
    }
}
