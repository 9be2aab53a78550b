//! `cudaenv trace [--version SPEC] [--json] -- CMD [ARGS…]`: run a command
//! activated and report the CUDA libraries it loaded (see `crate::machine::trace`).
//!
//! The report goes to stderr, or with `--json` to stdout after the command's
//! own output. The exit status is the command's own: like `exec`, `trace` is
//! transparent to scripts; only a failure to start the command is its own (20,
//! or 127 for a command that does not exist).

use std::ffi::OsString;

use super::Env;
use crate::activation::select;
use crate::error::{ExitCode, Result};
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run with this version instead of the selected one.
    #[arg(long = "version", short = 'V', value_name = "SPEC")]
    pub spec: Option<Spec>,
    /// Print the report as JSON on stdout (after the command's own output).
    #[arg(long)]
    pub json: bool,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (_, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    let report = crate::machine::trace::run(&env.ctx, &active, &args.command)?;
    if args.json {
        env.out_json(&report)?;
    } else {
        // The report is the point of the command: `--quiet` does not hide it.
        env.printer.report(&crate::machine::trace::render(&report));
    }
    // The command's status, which no `ExitCode` variant can carry.
    std::process::exit(report.exit_code.clamp(0, 255));
}
