//! `cudaenv link NAME PATH [--force]`: adopt a CUDA tree that lives elsewhere.
//!
//! The tree is inspected (`toolkit::inspect`) and only metadata is written
//! under `versions/NAME/`, through the same staging + commit as an install, so
//! a linked version appears atomically and complete. The linked tree itself is
//! never copied, written or executed (except `nvcc --version` as a last resort
//! for the version; see `toolkit`).

use std::path::PathBuf;

use super::Env;
use crate::activation;
use crate::context::env_vars;
use crate::error::{CliError, Error, ExitCode, Result, SpecError, StoreError};
use crate::spec::{Spec, VersionName};
use crate::store::toolkit;
use crate::store::{Kind, Store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The name to select it by (`cuda-12.4-local`, or a version such as `12.4`).
    pub name: String,
    /// A CUDA toolkit (`/usr/local/cuda-12.4`) or a Python environment's
    /// `site-packages/nvidia` directory (its site-packages or the venv also work).
    pub path: PathBuf,
    /// Replace an existing linked version of that name (an installed one is never replaced).
    #[arg(short, long)]
    pub force: bool,
}

/// A link name must be a safe directory name *and* something a spec can
/// select: `12.4-local` is a fine directory name but no spec could ever name
/// it, so it is refused here rather than becoming unreachable.
pub(super) fn parse_link_name(name: &str) -> Result<VersionName> {
    let invalid = |reason: String| {
        Error::Spec(SpecError::InvalidName {
            name: name.escape_debug().to_string(),
            reason,
        })
    };
    let parsed = VersionName::parse(name).map_err(invalid)?;
    match Spec::parse_reason(name) {
        Ok(Spec::Name(_)) | Ok(Spec::Stack(_)) => Ok(parsed),
        Ok(Spec::System) => Err(invalid("`system` is reserved".into())),
        Err(reason) => Err(invalid(format!(
            "{reason}; a name starts with a letter (`cuda-12.4-local`) or is a version spec (`12.4`)"
        ))),
    }
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let name = parse_link_name(&args.name)?;
    let path = crate::context::absolutize(&args.path, env.ctx.cwd());
    if path.symlink_metadata().is_err() {
        return Err(Error::Cli(CliError::PathNotFound { path }));
    }
    let tk = toolkit::inspect(&path)?;
    // Refuse now what activation could never express.
    for d in tk.bin_dirs.iter().chain(&tk.lib_dirs) {
        activation::check_representable(&tk.prefix.join(d), env_vars::PATH)?;
    }
    for w in &tk.warnings {
        env.printer.warn(w);
    }
    // A version-shaped name that contradicts the tree would select the wrong stack.
    if let (Ok(Spec::Stack(named)), Some(found)) = (Spec::parse(name.as_str()), &tk.cuda)
        && !(found.version.matches(&named.cuda) || named.cuda.matches(&found.version))
    {
        env.printer.warn(format!(
            "the name `{name}` looks like CUDA {} but {} is CUDA {} (from {})",
            named.cuda,
            tk.prefix.display(),
            found.version,
            found.from
        ));
    }

    let store = Store::new(env.ctx.root());
    let _lock = store.lock(&name, &env.printer)?;
    if let Some(existing) = store.get(&name)? {
        if !args.force {
            return Err(Error::Store(StoreError::AlreadyExists {
                name: name.to_string(),
            }));
        }
        if existing.meta.kind != Kind::Linked {
            return Err(Error::Store(StoreError::NotALink {
                name: name.to_string(),
            }));
        }
    } else if store.version_dir(&name).symlink_metadata().is_ok() {
        // Something without the completion marker sits at that name: not a
        // version (installs only ever rename complete trees into place), but
        // possibly put there by hand, so it is only replaced when asked.
        if args.force {
            store.remove(&name)?;
        } else {
            return Err(Error::Store(StoreError::IncompleteVersion {
                path: store.version_dir(&name),
            }));
        }
    }
    let staging = store.stage(&name)?;
    if store.get(&name)?.is_some() {
        // Only reached with --force on a link: drop the old metadata, then commit.
        store.remove(&name)?;
    }
    let installed = staging.commit(&tk.metadata())?;
    super::rehash_after_change(env, &store);

    let describe = |f: &Option<toolkit::Found>, what: &str| match f {
        Some(f) => format!("{what} {} (from {})", f.version, f.from),
        None => format!("{what} version unknown"),
    };
    env.printer.success(format!(
        "linked {} -> {}",
        installed.name,
        tk.prefix.display()
    ));
    env.printer
        .info(format!("  {}", describe(&tk.cuda, "CUDA")));
    if tk.cudnn.is_some() {
        env.printer
            .info(format!("  {}", describe(&tk.cudnn, "cuDNN")));
    }
    for (lib, found) in &tk.libs {
        env.printer
            .info(format!("  {}", describe(&Some(found.clone()), lib.title())));
    }
    if tk.cuda.is_none() {
        env.printer.hint(format!(
            "select it by its name: `cudaenv local {name}` (version prefixes cannot match it)"
        ));
    }
    Ok(ExitCode::Success)
}
