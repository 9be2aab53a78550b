//! `cudaenv man [COMMAND…] [--dir DIR]`: manual pages in roff, generated from
//! the same clap definition as `--help` (clap_mangen), so they cannot drift
//! from the options the binary accepts.
//!
//! On stdout it prints one page (cudaenv(1), or `cudaenv-install(1)` for
//! `cudaenv man install`); `--dir` writes every page, one per command, the way
//! `man` finds them under a `man1` directory (install.sh does that).

use std::path::PathBuf;

use super::Env;
use crate::error::{CliError, Error, ExitCode, Result};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    cudaenv man | man -l -                          # read cudaenv(1)\n  \
    cudaenv man install | man -l -                  # read cudaenv-install(1)\n  \
    cudaenv man --dir ~/.local/share/man/man1       # install every page for `man cudaenv-install`")]
pub struct Args {
    /// The command (and subcommand) whose page to print; default: cudaenv(1).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,
    /// Write every page (cudaenv.1, cudaenv-install.1, …) into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let cli = super::examples::command().bin_name("cudaenv");
    if let Some(dir) = args.dir {
        std::fs::create_dir_all(&dir).map_err(Error::io("cannot create", &dir))?;
        clap_mangen::generate_to(cli, &dir)
            .map_err(Error::io("cannot write the pages to", &dir))?;
        env.printer
            .info(format!("wrote the manual pages to {}", dir.display()));
        return Ok(ExitCode::Success);
    }
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    for name in &args.command {
        cmd = match cmd.find_subcommand(name) {
            Some(sub) if !sub.is_hide_set() => sub.clone(),
            _ => {
                return Err(Error::Cli(CliError::UnknownCommand {
                    name: args.command.join(" "),
                }));
            }
        };
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .map_err(Error::io("cannot write to", "standard output"))?;
    env.out(&page)?;
    Ok(ExitCode::Success)
}
