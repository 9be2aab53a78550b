//! `cudaenv uninstall NAME [-y]`: remove a version.
//!
//! Installed versions are deleted; for linked ones only cudaenv's metadata
//! goes, never the linked tree. The name must be exact (no prefix matching:
//! deleting is not the place to guess). Asks first on a terminal; from a
//! script `-y` is required, so a pipe can never answer "yes" by accident.

use std::io::{BufRead, IsTerminal};

use super::Env;
use crate::activation::select;
use crate::error::{ActivationError, CliError, Error, ExitCode, Result, SpecError, StoreError};
use crate::spec::VersionName;
use crate::store::{Kind, Store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exact name of the version (as `cudaenv versions` prints it).
    // Optional for clap, so that a missing name is answered with the list of
    // installed versions (`ActivationError::VersionNameRequired`).
    pub name: Option<String>,
    /// Do not ask for confirmation.
    #[arg(short, long)]
    pub yes: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let store = Store::new(env.ctx.root());
    let Some(arg) = args.name else {
        return Err(Error::Activation(ActivationError::VersionNameRequired {
            command: "uninstall",
            installed: store
                .list()?
                .into_iter()
                .map(|v| v.name.to_string())
                .collect(),
        }));
    };
    let name = VersionName::parse(&arg).map_err(|reason| {
        Error::Spec(SpecError::InvalidName {
            name: arg.escape_debug().to_string(),
            reason,
        })
    })?;
    let not_installed = |store: &Store| -> Result<Error> {
        Ok(Error::Store(StoreError::NoSuchVersion {
            name: name.to_string(),
            installed: store
                .list()?
                .into_iter()
                .map(|v| v.name.to_string())
                .collect(),
        }))
    };
    let Some(version) = store.get(&name)? else {
        // Only the user's own versions are removed here; a system one says so.
        let configured = crate::store::Store::configured(&env.ctx)?;
        if let (Some(root), Some(_)) = (configured.system_root(), configured.get(&name)?) {
            return Err(Error::Store(StoreError::SystemRootNotWritable {
                root: root.to_path_buf(),
                action: format!("uninstall `{name}`, which lives there"),
            }));
        }
        return Err(not_installed(&store)?);
    };

    let what = match version.meta.kind {
        Kind::Linked => format!(
            "the link `{name}` (only cudaenv's record; {} is left untouched)",
            version.prefix().display()
        ),
        Kind::Installed => format!("`{name}` and its files in {}", version.dir.display()),
    };
    if let Ok((selection, active)) = select::active(&env.ctx)
        && active.name() == name.as_str()
    {
        env.printer.warn(format!(
            "`{name}` is the active version here (set by {})",
            selection.origin
        ));
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Error::Cli(CliError::ConfirmationRequired {
                action: format!("remove {what}"),
            }));
        }
        if !confirm(env, &format!("Remove {what}?"))? {
            return Err(Error::Cli(CliError::Aborted("nothing was removed".into())));
        }
    }

    let _lock = store.lock(&name, &env.printer)?;
    // Someone may have removed it while we asked.
    if store.get(&name)?.is_none() {
        return Err(not_installed(&store)?);
    }
    store.remove(&name)?;
    super::rehash_after_change(env, &store);
    env.printer.success(format!("removed {what}"));
    // The cache still holds what it was installed from: say how much.
    let cache = crate::install::fetch::Cache::new(env.ctx.cache_dir());
    let keep_downloads = crate::context::config::keep_downloads(&env.ctx, env.ctx.config()?)?.value;
    let keep = crate::install::fetch::usage::Keep::installed(&store, keep_downloads)?;
    let bytes: u64 = crate::install::fetch::usage::prunable(&cache, &keep)
        .iter()
        .map(|(_, u)| u.bytes)
        .sum();
    if bytes > 0 {
        env.printer.info(format!(
            "the cache holds {} that no installed version uses; `cudaenv cache prune` frees it",
            crate::install::sources::measure::human_bytes(bytes)
        ));
    }
    Ok(ExitCode::Success)
}

fn confirm(env: &Env, question: &str) -> Result<bool> {
    env.printer.report(&format!("{question} [y/N] "));
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(Error::io("cannot read the answer from", "standard input"))?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}
