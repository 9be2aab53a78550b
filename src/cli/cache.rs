//! `cudaenv cache dir|size|prune|clean`: the download cache and package store.
//!
//! Installed versions hold hard links to the package store's files, so
//! cleaning the cache frees only what no version uses and never breaks one;
//! `prune` keeps what installed versions were installed from, `clean`
//! deletes everything. Each says how much it freed (`fetch::usage`).

use super::Env;
use crate::error::{Error, ExitCode, Result};
use crate::install::fetch::Cache;
use crate::install::fetch::usage::{self, CacheUsage, Usage};
use crate::install::sources::measure::human_bytes;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: CacheCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum CacheCommand {
    /// Print the cache directory.
    Dir,
    /// How much disk the cache takes, and how much of it deleting would free.
    Size {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Delete the downloads and unpacked packages no installed version was installed from.
    Prune,
    /// Delete downloads, unpacked packages and remembered index pages.
    Clean,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let dir = env.ctx.cache_dir();
    match args.command {
        CacheCommand::Dir => env.outln(dir.display())?,
        CacheCommand::Size { json } => {
            let u = CacheUsage::of(&Cache::new(&dir));
            if json {
                env.out_json(&u)?;
            } else {
                let line = |what: &str, u: &Usage| {
                    format!(
                        "{what:<10} {:>10}  ({} freeable: not linked from any installed version)\n",
                        human_bytes(u.bytes),
                        human_bytes(u.freeable)
                    )
                };
                let mut t = String::new();
                t.push_str(&line("downloads", &u.downloads));
                t.push_str(&line("packages", &u.pkgs));
                t.push_str(&line("index", &u.index));
                t.push_str(&line("total", &u.total()));
                env.out(t.as_bytes())?;
            }
        }
        CacheCommand::Prune => {
            let keep = usage::installed_keys(&Store::new(env.ctx.root()))?;
            let freed = usage::prune(&Cache::new(&dir), &keep)?;
            env.printer.success(format!(
                "freed {} ({} files); kept what the installed versions were installed from",
                human_bytes(freed.freeable),
                freed.files
            ));
        }
        CacheCommand::Clean => {
            let before = CacheUsage::of(&Cache::new(&dir)).total();
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
                env.printer.success(format!(
                    "cleaned {}: freed {} ({} more were hard links of installed versions)",
                    dir.display(),
                    human_bytes(before.freeable),
                    human_bytes(before.bytes - before.freeable)
                ));
            }
        }
    }
    Ok(ExitCode::Success)
}
