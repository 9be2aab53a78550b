//! `cudaenv hook-env --shell S` (hidden): what the prompt hook evaluates.
//!
//! Runs only when the shell's own check saw a change, and does the minimum:
//! the selection (`CUDAENV_VERSION`, `.cuda-version` and `.tool-versions` files up the tree, the
//! global file), the matching store entries, and the transition from the
//! previous activation. A broken selection is reported on stderr and the
//! previous activation is still undone, so a bad pin never leaves a stale
//! toolkit active. It always exits 0: its output must be evaluated.

use super::Env;
use crate::activation::select;
use crate::activation::shell::Shell;
use crate::activation::shell::session;
use crate::error::{ExitCode, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, value_enum)]
    pub shell: Shell,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    // A broken config.toml is reported like a broken pin: the previous
    // activation is still undone.
    let (store, target) = match crate::store::Store::configured(&env.ctx) {
        Ok(store) => {
            let target = select::active_in(&env.ctx, &store).map(|(_, active)| active);
            (store, target)
        }
        Err(e) => (crate::store::Store::new(env.ctx.root()), Err(e)),
    };
    let t = session::transition(&env.ctx, &store, target)?;
    if let Some(problem) = &t.problem {
        env.printer.errors([problem]);
    }
    for note in &t.delta.notes {
        env.printer.warn(note);
    }
    env.out(&args.shell.render(&t.delta)?)?;
    Ok(ExitCode::Success)
}
