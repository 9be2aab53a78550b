//! The command line: one file per subcommand (its clap `Args` and its `run`).
//!
//! `main` decides between the two roles of the binary — `cudaenv` itself, or a
//! shim named after a CUDA tool (dispatching on `argv[0]`, as rustup's proxies
//! do) — runs the command, and maps errors to exit codes in one place.

use clap::{Parser, Subcommand};

use crate::context::Context;
use crate::error::{Error, ExitCode, Result};
use crate::ui::{self, Printer};

mod cache;
mod compat;
mod completions;
mod direnv;
mod doctor;
mod env;
pub(crate) mod error;
mod examples;
mod exec;
mod explain;
mod export;
mod global;
mod help;
mod hook_env;
mod init;
mod install;
mod link;
mod local;
mod lock;
mod ls_remote;
mod man;
mod mirror;
mod module;
mod prefix;
mod rehash;
mod resolution;
mod root;
mod shell;
mod trace;
mod uninstall;
mod update;
mod verify;
mod version;
mod versions;
mod which;

#[derive(Debug, Parser)]
#[command(
    name = "cudaenv",
    version,
    about = "Side-by-side CUDA toolkit + cuDNN stacks, pinned per project",
    long_about = "cudaenv keeps CUDA toolkit + cuDNN stacks side by side under $CUDAENV_ROOT (default ~/.cudaenv), \
                  pins one per project in a .cuda-version file, and activates it through shims, `cudaenv exec`, \
                  generated activation code and a shell hook.",
    max_term_width = 100,
    // `cudaenv help` shows documentation topics as well as commands (cli/help.rs).
    disable_help_subcommand = true,
    after_help = help::topic_list(),
)]
pub struct Cli {
    /// Print less: no progress bars and no informational messages.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List installed versions; `*` marks the active one.
    Versions(versions::Args),
    /// Show the active version and what selected it.
    Version(version::Args),
    /// Pin a version for this directory (writes .cuda-version).
    Local(local::Args),
    /// Set or show the global version ($CUDAENV_ROOT/version).
    Global(global::Args),
    /// Print code that selects a version for the current shell only.
    Shell(shell::Args),
    /// Print the directory of the active (or given) version.
    Prefix(prefix::Args),
    /// Print $CUDAENV_ROOT.
    Root(root::Args),
    /// Run a command with a version activated.
    // `exec --version SPEC` is the interface; clap's propagated `--version`
    // flag would clash with it (a debug assertion panics on every `exec`).
    #[command(disable_version_flag = true)]
    Exec(exec::Args),
    /// Print the activation code for a version.
    Env(env::Args),
    /// Print shell integration code for an rc file (shims, hook, `cudaenv shell`).
    Init(init::Args),
    /// Internal: what the prompt hook evaluates when something changed.
    #[command(hide = true)]
    HookEnv(hook_env::Args),
    /// Rebuild the shims (one per executable of every installed version).
    Rehash(rehash::Args),
    /// Adopt an existing CUDA toolkit or Python NVIDIA-wheel tree without copying it.
    Link(link::Args),
    /// Remove a version (for a link: only cudaenv's record of it).
    Uninstall(uninstall::Args),
    /// Print the full path of a command in the active version.
    Which(which::Args),
    /// Install a CUDA stack (default: the selected version).
    Install(install::Args),
    /// List the CUDA releases and cuDNN versions the sources can install, and where from.
    LsRemote(ls_remote::Args),
    /// Show or clean the download cache.
    Cache(cache::Args),
    /// Refresh the release list from PyPI and fetch NVIDIA's newest redist manifests.
    Update(update::Args),
    /// Check the machine and the active stack: driver, GPUs, library paths, frameworks.
    Doctor(doctor::Args),
    /// Show the CUDA, cuDNN, Python and driver a framework release needs.
    Compat(compat::Args),
    /// Explain a CUDA error message and print the command that fixes it.
    Explain(explain::Args),
    /// Prove on the GPU that a version works: driver, runtime, cuBLAS GEMMs, cuDNN.
    Verify(verify::Args),
    /// Runs verify's checks in the activated environment (internal).
    #[command(name = "__verify-child", hide = true)]
    VerifyChild(verify::ChildArgs),
    /// Print the shell code that makes TAB complete commands, options and installed versions.
    Completions(completions::Args),
    /// Print cudaenv's manual page (roff), or write every command's page into a directory.
    Man(man::Args),
    /// Show a documentation topic, or a command's options.
    Help(help::Args),
    /// Print direnv's `use cudaenv [SPEC]` for ~/.config/direnv/lib/.
    Direnv(direnv::Args),
    /// Write Lmod / Environment Modules modulefiles for installed versions.
    Module(module::Args),
    /// Write what installing some stacks needs into a directory, for machines without network.
    Mirror(mirror::Args),
    /// Run a command and report which CUDA libraries it loaded, from where and why.
    #[command(disable_version_flag = true)]
    Trace(trace::Args),
    /// Resolve the pinned stack to exact files and write cuda.lock beside .cuda-version.
    Lock(lock::Args),
    /// Print the locked stack's Python pins (pip constraints, uv constraint-dependencies).
    Export(export::Args),
}

/// Everything a command needs: the outside world and how to talk to the user.
/// Data goes to the context's stdout through `out*`, messages through the
/// printer to its stderr: a command never prints to the process directly.
pub struct Env {
    pub ctx: Context,
    pub printer: Printer,
}

impl Env {
    /// The context's own printer: messages go where its output goes.
    pub fn new(ctx: Context, quiet: bool) -> Env {
        let language_ctx = ctx.clone();
        let printer = Printer::new(quiet, ctx.stdio().clone()).with_language(move || {
            crate::context::config::language(&language_ctx)
                .map(|s| s.value)
                .unwrap_or_else(|_| crate::context::config::locale_language(&language_ctx).value)
        });
        Env { ctx, printer }
    }

    /// Every setting an installing command uses, with a warning for each
    /// configuration file of another tool that is there but was not read.
    pub fn settings(&self) -> Result<crate::install::settings::Settings> {
        let settings = crate::install::settings::Settings::resolve(&self.ctx)?;
        for p in &settings.passed_over {
            self.printer.warn(p);
        }
        Ok(settings)
    }

    /// Whether progress bars may be drawn: not with `--quiet`, not when
    /// output is captured (a bar draws on the terminal, not through `Stdio`).
    pub fn bars_hidden(&self) -> bool {
        self.printer.quiet || self.ctx.stdio().is_captured()
    }

    /// Data to stdout.
    pub fn out(&self, bytes: &[u8]) -> Result<()> {
        ui::out(self.ctx.stdio(), bytes)
    }

    /// A line of data to stdout.
    pub fn outln(&self, line: impl std::fmt::Display) -> Result<()> {
        self.out(format!("{line}\n").as_bytes())
    }

    /// Pretty JSON to stdout.
    pub fn out_json<T: serde::Serialize>(&self, value: &T) -> Result<()> {
        self.out(ui::json(value)?.as_bytes())
    }

    /// Styled text (colours on a terminal only) to stdout.
    pub fn out_styled(&self, text: &str) -> Result<()> {
        ui::out_styled(self.ctx.stdio(), text)
    }
}

/// Runs a command's asynchronous part on a runtime of its own. Ctrl-C ends
/// it with `Interrupted` (dropping the future drops what it holds: a staging
/// directory is deleted); blocking work still running, such as an
/// interrupted unpack, is not waited for.
fn block_on<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Install(crate::error::InstallError::AsyncRuntime { source }))?;
    let result = runtime.block_on(async {
        tokio::select! {
            r = f => r,
            _ = tokio::signal::ctrl_c() => Err(Error::Interrupted),
        }
    });
    runtime.shutdown_background();
    result
}

/// Runs the binary in whichever role `argv[0]` names; returns the exit status.
pub fn main() -> u8 {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    // `nvcc` for a shim started as `nvcc` or, on Windows, `nvcc.exe`.
    let name = crate::os::command_name(std::path::Path::new(&argv0))
        .unwrap_or_default()
        .to_owned();
    let result = if is_cudaenv(&name) {
        ignore_sigpipe();
        run_cli()
    } else {
        // Playing a CUDA tool: no argument parsing, no terminal setup.
        let rest: Vec<_> = args.collect();
        crate::activation::shims::probe::at(1);
        Context::from_process().and_then(|ctx| {
            crate::activation::shims::run(&ctx, &name, &rest).map(|never| match never {})
        })
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                ExitCode::Success
            } else {
                ui::report_error(&err);
                err.exit_code()
            }
        }
    };
    code.code()
}

/// As Rust's runtime start-up does (the binary skips it, see src/main.rs): a
/// closed stdout becomes a `BrokenPipe` error that ends the command quietly,
/// not a signal that kills it. Shims leave SIGPIPE alone; the tool they start
/// gets the default disposition either way.
fn ignore_sigpipe() {
    crate::os::ignore_sigpipe();
}

fn run_cli() -> Result<ExitCode> {
    if let Some(code) = completions::answer_if_requested(std::env::args_os().collect()) {
        return Ok(code);
    }
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return Ok(match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::Success
                }
                _ => ExitCode::Usage,
            });
        }
    };
    let env = Env::new(Context::from_process()?, cli.quiet);
    // A language named wrongly is said before anything is shown in it.
    crate::context::config::check_language_variable(&env.ctx)?;
    // The error is printed here, where the printer knows the language of its hint.
    match dispatch(&env, cli.command) {
        Err(err) if !is_broken_pipe(&err) => {
            env.printer.errors([&err]);
            Ok(err.exit_code())
        }
        other => other,
    }
}

fn dispatch(env: &Env, command: Command) -> Result<ExitCode> {
    match command {
        Command::Versions(a) => versions::run(env, a),
        Command::Version(a) => version::run(env, a),
        Command::Local(a) => local::run(env, a),
        Command::Global(a) => global::run(env, a),
        Command::Shell(a) => shell::run(env, a),
        Command::Prefix(a) => prefix::run(env, a),
        Command::Root(a) => root::run(env, a),
        Command::Exec(a) => exec::run(env, a),
        Command::Env(a) => env::run(env, a),
        Command::Install(a) => install::run(env, a),
        Command::LsRemote(a) => ls_remote::run(env, a),
        Command::Cache(a) => cache::run(env, a),
        Command::Rehash(a) => rehash::run(env, a),
        Command::Link(a) => link::run(env, a),
        Command::Uninstall(a) => uninstall::run(env, a),
        Command::Which(a) => which::run(env, a),
        Command::Init(a) => init::run(env, a),
        Command::HookEnv(a) => hook_env::run(env, a),
        Command::Update(a) => update::run(env, a),
        Command::Doctor(a) => doctor::run(env, a),
        Command::Compat(a) => compat::run(env, a),
        Command::Explain(a) => explain::run(env, a),
        Command::Verify(a) => verify::run(env, a),
        Command::VerifyChild(a) => verify::run_child(env, a),
        Command::Completions(a) => completions::run(env, a),
        Command::Man(a) => man::run(env, a),
        Command::Help(a) => help::run(env, a),
        Command::Direnv(a) => direnv::run(env, a),
        Command::Module(a) => module::run(env, a),
        Command::Mirror(a) => mirror::run(env, a),
        Command::Trace(a) => trace::run(env, a),
        Command::Lock(a) => lock::run(env, a),
        Command::Export(a) => export::run(env, a),
    }
}

/// Parses the command line with the definition `--help` shows (examples included).
fn parse() -> std::result::Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let mut cmd = examples::command();
    let mut matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

/// `cudaenv`, or a renamed copy of it (`cudaenv-x86_64-linux`); anything else
/// is the name of a shim.
fn is_cudaenv(name: &std::ffi::OsStr) -> bool {
    name.is_empty() || crate::os::OsStrBytes::as_bytes(name).starts_with(b"cudaenv")
}

/// Brings the shims up to date after the set of versions changed. The change
/// itself has already succeeded, so a failure here is a warning with the fix,
/// not an error that would suggest the link or removal did not happen.
pub(crate) fn rehash_after_change(env: &Env, store: &crate::store::Store) {
    // The shims cover the system root's versions too, whatever `store` sees.
    let system = crate::context::config::system_root(&env.ctx).ok().flatten();
    let store = crate::store::Store::with_system(store.root(), system);
    if let Err(e) = crate::activation::shims::rehash(&store, &env.printer) {
        env.printer
            .warn(format!("the shims could not be updated: {e}"));
        env.printer.hint("run `cudaenv rehash`");
    }
}

fn is_broken_pipe(err: &Error) -> bool {
    matches!(err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MachineError;

    /// clap checks its definition only when a command is parsed; this checks
    /// every subcommand at once (a duplicate `--version` once slipped through).
    #[test]
    fn command_line_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// Commands write through the context: a capturing one gets their data
    /// and their messages, the test process's own streams get nothing.
    #[test]
    fn commands_write_through_the_context() {
        let tmp = tempfile::tempdir().unwrap();
        let vars = [
            ("HOME".into(), tmp.path().as_os_str().to_owned()),
            ("CUDAENV_ROOT".into(), tmp.path().join("r").into_os_string()),
        ];
        let ctx = Context::new(vars, tmp.path().to_path_buf())
            .unwrap()
            .capturing();
        let env = Env::new(ctx, false);
        root::run(&env, root::Args {}).unwrap();
        local::run(
            &env,
            local::Args {
                spec: None,
                unset: true,
                force: false,
                for_framework: None,
            },
        )
        .unwrap();
        let err = versions::run(
            &env,
            versions::Args {
                bare: true,
                json: false,
                check: false,
            },
        );
        assert!(err.is_ok(), "{err:?}");
        let got = env.ctx.stdio().captured();
        assert_eq!(
            String::from_utf8(got.stdout).unwrap(),
            format!("{}\n", tmp.path().join("r").display())
        );
        assert_eq!(
            String::from_utf8(got.stderr).unwrap(),
            "no .cuda-version here\n"
        );
        env.printer
            .errors([&Error::Machine(MachineError::NoErrorText)]);
        let err = String::from_utf8(env.ctx.stdio().captured().stderr).unwrap();
        assert!(err.ends_with("error: no error text given\nhint: pass the message as an argument or on standard input: `cudaenv explain \"libcudart.so.11.0: cannot open…\"`\n"), "{err}");
    }
}
