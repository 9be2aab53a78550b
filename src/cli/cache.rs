//! `cudaenv cache dir|size|prune|clean`: the download cache and package store.
//!
//! Installed versions hold hard links to the package store's files, so
//! cleaning the cache frees only what no version uses and never breaks one;
//! `prune` keeps the unpacked packages installed versions use (and, with
//! `keep-downloads`, their archives), `clean` deletes everything. `size`
//! says what each would free, from the same rule (`fetch::usage`).

use super::Env;
use crate::context::config::{Setting, keep_downloads};
use crate::error::{Error, ExitCode, Result};
use crate::install::fetch::Cache;
use crate::install::fetch::usage::{self, CacheUsage, Keep};
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
    /// Delete the downloaded archives and the unpacked packages no installed version uses.
    Prune,
    /// Delete downloads, unpacked packages and remembered index pages.
    Clean,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let dir = env.ctx.cache_dir();
    let cache = Cache::new(&dir);
    // What `prune` keeps, which `size` reports against: one rule for both.
    let keep = || -> Result<(Keep, Setting<bool>)> {
        let setting = keep_downloads(&env.ctx, env.ctx.config()?)?;
        Ok((
            Keep::installed(&Store::new(env.ctx.root()), setting.value)?,
            setting,
        ))
    };
    match args.command {
        CacheCommand::Dir => env.outln(dir.display())?,
        CacheCommand::Size { json } => {
            let (keep, setting) = keep()?;
            let u = CacheUsage::of(&cache, &keep);
            if json {
                env.out_json(&u)?;
            } else {
                env.out(size_table(&u, &setting).as_bytes())?;
            }
        }
        CacheCommand::Prune => {
            let (keep, _) = keep()?;
            let freed = usage::prune(&cache, &keep)?;
            env.printer.success(format!(
                "freed {} ({} files): {}",
                human_bytes(freed.bytes),
                freed.files,
                if keep.downloads {
                    "the downloads and unpacked packages no installed version uses; kept those it uses (keep-downloads)"
                } else {
                    "the downloaded archives, and the unpacked packages no installed version uses; kept those it uses"
                }
            ));
        }
        CacheCommand::Clean => {
            let before = CacheUsage::of(&cache, &Keep::default()).total();
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

/// `cache size`: each part's size and what `prune` and `clean` would do
/// to it, in the words of those commands. Unpacked packages that installed
/// versions use are those versions' own files (hard links): they are
/// counted, but cost nothing beside the versions.
fn size_table(u: &CacheUsage, keep_downloads: &Setting<bool>) -> String {
    let b = human_bytes;
    let mut t = String::new();
    let mut line = |what: &str, bytes: u64, note: String| {
        t.push_str(&format!("{what:<10} {:>10}  ({note})\n", b(bytes)));
    };
    let d = &u.downloads;
    line(
        "downloads",
        d.bytes,
        if d.prunable < d.bytes {
            format!(
                "`cache prune` frees {}; keeps {} of installed versions, as keep-downloads asks",
                b(d.prunable),
                b(d.bytes - d.prunable)
            )
        } else if d.bytes > 0 {
            format!("`cache prune` frees {}", b(d.prunable))
        } else if keep_downloads.value {
            "installs keep their archives here (keep-downloads)".to_string()
        } else {
            "installs delete their archives once unpacked".to_string()
        },
    );
    let p = &u.pkgs;
    let shared = p.bytes - p.freeable;
    line(
        "packages",
        p.bytes,
        format!(
            "{} are installed versions' own files, hard-linked: no extra disk; `cache prune` frees {}",
            b(shared),
            b(p.prunable)
        ),
    );
    line(
        "index",
        u.index.bytes,
        "index pages and release lists, kept by `cache prune` for --offline".to_string(),
    );
    let total = u.total();
    line(
        "total",
        total.bytes,
        format!(
            "{} beside the installed versions; `cache prune` frees {}, `cache clean` {}",
            b(total.freeable),
            b(total.prunable),
            b(total.freeable)
        ),
    );
    t
}
