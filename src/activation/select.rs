//! Which version is active here, and why.
//!
//! Priority, highest first:
//! 1. `CUDAENV_VERSION` (what `cudaenv shell` sets),
//! 2. the nearest pin walking up from `CUDAENV_DIR` or the working directory:
//!    in each directory `.cuda-version`, then a `cuda` line in `.tool-versions`,
//! 3. the global file `$CUDAENV_ROOT/version`,
//! 4. `system`.
//!
//! Selection (`select`) only reads those sources; resolution (`resolve`) maps
//! the spec to an installed version: an exact name first, then the newest
//! installed version whose recorded CUDA/cuDNN versions match the spec's
//! prefixes. Nothing here downloads: a pin that is not installed is an error
//! with a hint to run `cudaenv install`.

use std::fmt;
use std::path::PathBuf;

use crate::activation::version_file;
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ActivationError, ContextError, Error, Result};
use crate::spec::{Spec, VersionName};
use crate::store::{Installed, Location, Store};

/// Why a spec is selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Given on the command line (`exec --version`, `prefix SPEC`, …).
    Argument,
    /// The `CUDAENV_VERSION` variable.
    ShellVar,
    /// A `.cuda-version` file, or a `.tool-versions` file's `cuda` line.
    File(PathBuf),
    /// The global version file.
    Global(PathBuf),
    /// Nothing selected anything.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Argument => f.write_str("the command line"),
            Origin::ShellVar => write!(f, "the {} environment variable", env_vars::CUDAENV_VERSION),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Global(p) => write!(f, "{} (global)", p.display()),
            Origin::Default => f.write_str("default: no version is set"),
        }
    }
}

impl Origin {
    /// A short machine-readable tag, for `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Origin::Argument => "argument",
            Origin::ShellVar => "shell",
            Origin::File(_) => "local",
            Origin::Global(_) => "global",
            Origin::Default => "default",
        }
    }

    pub fn path(&self) -> Option<&PathBuf> {
        match self {
            Origin::File(p) | Origin::Global(p) => Some(p),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub spec: Spec,
    pub origin: Origin,
}

/// What the selection resolves to.
#[derive(Debug, Clone)]
pub enum Active {
    System,
    Version(Box<Installed>),
}

impl Active {
    pub fn name(&self) -> String {
        match self {
            Active::System => "system".into(),
            Active::Version(v) => v.name.to_string(),
        }
    }

    pub fn installed(&self) -> Option<&Installed> {
        match self {
            Active::System => None,
            Active::Version(v) => Some(v.as_ref()),
        }
    }
}

/// Finds the selected spec and its origin, without resolving it.
pub fn select(ctx: &Context) -> Result<Selection> {
    if let Some(v) = ctx
        .var_os(env_vars::CUDAENV_VERSION)
        .filter(|v| !v.is_empty())
    {
        let bad = |reason: String| {
            Error::Context(ContextError::BadVariable {
                variable: env_vars::CUDAENV_VERSION,
                value: v.to_string_lossy().escape_debug().to_string(),
                expected: format!(
                    "a spec such as `12.4`, `11.2+cudnn8.1`, `system` or a linked version's name ({reason})"
                ),
            })
        };
        let s = v
            .to_str()
            .ok_or_else(|| bad("it is not valid UTF-8".into()))?;
        let spec = Spec::parse_reason(s).map_err(bad)?;
        return Ok(Selection {
            spec,
            origin: Origin::ShellVar,
        });
    }
    let start = match ctx.var_os(env_vars::CUDAENV_DIR).filter(|v| !v.is_empty()) {
        Some(d) => crate::context::absolutize(std::path::Path::new(d), ctx.cwd()),
        None => ctx.cwd().to_path_buf(),
    };
    if let Some(pinned) = version_file::find(&start)? {
        return Ok(Selection {
            spec: pinned.spec,
            origin: Origin::File(pinned.path),
        });
    }
    let global = Store::new(ctx.root()).global_version_file();
    // symlink_metadata: a dangling link is an error to report, not "no file".
    if global.symlink_metadata().is_ok() {
        let pinned = version_file::read(&global)?;
        return Ok(Selection {
            spec: pinned.spec,
            origin: Origin::Global(global),
        });
    }
    Ok(Selection {
        spec: Spec::System,
        origin: Origin::Default,
    })
}

/// Resolves a spec against the store: `Ok(None)` when nothing installed matches.
///
/// Both roots are searched: an exact name is the user's version if there is
/// one, else the system root's; a stack spec takes the newest match of either,
/// the user's on a tie. A system version is only returned if it is safe to
/// activate (`store::trust`).
pub fn resolve(store: &Store, spec: &Spec) -> Result<Option<Active>> {
    let found = resolve_unchecked(store, spec)?;
    if let Some(Active::Version(v)) = &found
        && store.location(v) == Location::System
    {
        crate::store::trust::check_safe(store, v)?;
    }
    Ok(found)
}

fn resolve_unchecked(store: &Store, spec: &Spec) -> Result<Option<Active>> {
    match spec {
        Spec::System => Ok(Some(Active::System)),
        Spec::Name(name) => Ok(store.get(name)?.map(|v| Active::Version(Box::new(v)))),
        Spec::Stack(stack) => {
            // An exact directory name wins (a linked version may be named `13.0`).
            if let Ok(name) = VersionName::parse(&spec.to_string())
                && let Some(v) = store.get(&name)?
            {
                return Ok(Some(Active::Version(Box::new(v))));
            }
            Ok(store
                .list()?
                .into_iter()
                .filter(|v| v.satisfies(stack))
                // `max_by` keeps the last of equals: the user's come first in
                // `list`, so on a tie prefer them by ranking the system lower.
                .max_by(|a, b| {
                    let user = |v: &Installed| store.location(v) == Location::User;
                    (a.cuda(), a.cudnn(), user(a)).cmp(&(b.cuda(), b.cudnn(), user(b)))
                })
                .map(|v| Active::Version(Box::new(v))))
        }
    }
}

/// Resolves, turning "nothing matches" into a `NotInstalled` error with a hint.
pub fn resolve_required(store: &Store, selection: &Selection) -> Result<Active> {
    match resolve(store, &selection.spec)? {
        Some(a) => Ok(a),
        None => Err(Error::Activation(ActivationError::NotInstalled {
            spec: selection.spec.to_string(),
            named: matches!(selection.spec, Spec::Name(_)),
            origin: match selection.origin {
                Origin::Argument => None,
                ref o => Some(o.to_string()),
            },
            installed: store
                .list()?
                .into_iter()
                .map(|v| v.name.to_string())
                .collect(),
        })),
    }
}

/// The active version for this context: selection plus resolution.
pub fn active(ctx: &Context) -> Result<(Selection, Active)> {
    active_in(ctx, &crate::store::Store::configured(ctx)?)
}

/// `active`, against a store the caller already has.
pub fn active_in(ctx: &Context, store: &Store) -> Result<(Selection, Active)> {
    let selection = select(ctx)?;
    let active = resolve_required(store, &selection)?;
    Ok((selection, active))
}

/// Selection from an explicit argument if given, else from the context.
pub fn active_or(ctx: &Context, spec: Option<&Spec>) -> Result<(Selection, Active)> {
    match spec {
        Some(spec) => {
            let selection = Selection {
                spec: spec.clone(),
                origin: Origin::Argument,
            };
            let active = resolve_required(&crate::store::Store::configured(ctx)?, &selection)?;
            Ok((selection, active))
        }
        None => active(ctx),
    }
}
