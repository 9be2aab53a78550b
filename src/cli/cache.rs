//! `cudaenv cache dir|clean`: the download cache and package store.
//!
//! Installed versions hold hard links to the package store's files, so
//! cleaning the cache frees only what no version uses and never breaks one.

use super::Env;
use crate::error::{Error, ExitCode, Result};
use crate::ui;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: CacheCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum CacheCommand {
    /// Print the cache directory.
    Dir,
    /// Delete downloads, unpacked packages and remembered index pages.
    Clean,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let dir = env.ctx.cache_dir();
    match args.command {
        CacheCommand::Dir => ui::outln(dir.display())?,
        CacheCommand::Clean => {
            let mut removed = 0;
            for sub in ["downloads", "pkgs", "index"] {
                let p = dir.join(sub);
                match std::fs::remove_dir_all(&p) {
                    Ok(()) => removed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io("cannot delete", &p)(e)),
                }
            }
            if removed == 0 {
                env.printer
                    .info(format!("{} is already empty", dir.display()));
            } else {
                env.printer.success(format!("cleaned {}", dir.display()));
            }
        }
    }
    Ok(ExitCode::Success)
}
