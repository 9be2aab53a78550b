//! `cudaenv explain "ERROR TEXT"` (or the text on stdin): what a CUDA error
//! message means, what provides the missing piece, whether it is installed,
//! and the command that fixes it.

use std::io::Read;

use super::Env;

use crate::error::{Error, ExitCode, MachineError, Result};
use crate::machine::explain::{self, Input};
use crate::machine::finding::{self, Finding};
use crate::msg;
use crate::{activation::select, machine::doctor};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The error text; without it (or with `-`), read it from standard input.
    #[arg(value_name = "ERROR TEXT", num_args = 0..)]
    pub text: Vec<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Logs can be long; only their tail is explained beyond this size.
const MAX_INPUT: usize = 1 << 20;

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let text = if args.text.is_empty() || args.text == ["-"] {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(MAX_INPUT as u64)
            .read_to_end(&mut buf)
            .map_err(Error::io("cannot read", "standard input"))?;
        String::from_utf8_lossy(&buf).into_owned()
    } else {
        args.text.join(" ")
    };
    if text.trim().is_empty() {
        return Err(Error::Machine(MachineError::NoErrorText));
    }
    let store = crate::store::Store::configured(&env.ctx)?;
    let installed = store
        .list()
        .unwrap_or_default()
        .iter()
        .map(|v| explain::stack_of(v.name.as_str(), v.cuda(), v.cudnn(), v.libs()))
        .collect();
    let active = select::active(&env.ctx).ok().and_then(|(_, a)| {
        a.installed()
            .map(|v| explain::stack_of(v.name.as_str(), v.cuda(), v.cudnn(), v.libs()))
    });
    let exe = std::env::current_exe().ok();
    let input = Input {
        text,
        installed,
        active,
        machine: crate::machine::facts::machine(&env.ctx, exe.as_deref()),
        frameworks: doctor::python::probe(&env.ctx)
            .map(|p| p.frameworks)
            .unwrap_or_default(),
    };
    let found: Vec<Finding> = explain::explain(&input);
    if args.json {
        let shaped: Vec<_> = found.iter().map(|f| f.shaped(&explain::JSON)).collect();
        env.out_json(&shaped)?;
    } else {
        let text = finding::render(&found, &explain::layout(), env.printer.lang());
        env.out(text.as_bytes())?;
    }
    if found.is_empty() {
        env.printer.warn_msg(&msg!("explain-not-recognised"));
        env.printer.hint_msg(&msg!("explain-not-recognised-hint"));
        return Ok(ExitCode::Failure);
    }
    Ok(ExitCode::Success)
}
