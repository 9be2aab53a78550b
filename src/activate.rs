//! Activation: the environment a version needs, as a list of changes.
//!
//! Given the current environment and the active version, `plan` computes the
//! new PATH, LD_LIBRARY_PATH, CUDA_HOME/CUDA_PATH, CUDNN_PATH and
//! CUDAENV_ACTIVE. Entries belonging to any cudaenv version (anything under
//! `$CUDAENV_ROOT/versions/` or the system root's `versions/`, and the
//! directories of linked versions) are removed
//! before the selected ones are prepended, so switching never stacks versions.
//! Empty elements are dropped and never produced: an empty LD_LIBRARY_PATH
//! element means "the current directory" to the dynamic loader.
//!
//! What a version sets, before any environment is looked at, is
//! `Activation` (`activation`): the directories to put first on each list
//! variable and the values of the others. `plan` applies it to an environment;
//! `module export` writes the same data as modulefiles, so a module sets
//! exactly what `cudaenv env` does.
//!
//! The result is data (`EnvDelta`); `exec` applies it to a child's environment
//! and `shell` renders it as code for a shell.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::env_vars;
use crate::error::{Error, Result};
use crate::select::Active;
use crate::store::{Installed, Store};

/// Ordered changes: `Some(value)` sets, `None` unsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvDelta {
    pub changes: Vec<(&'static str, Option<OsString>)>,
}

impl EnvDelta {
    fn set(&mut self, name: &'static str, value: OsString) {
        self.changes.push((name, Some(value)));
    }

    fn unset(&mut self, name: &'static str) {
        self.changes.push((name, None));
    }

    pub fn get(&self, name: &str) -> Option<&Option<OsString>> {
        self.changes
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Applies the changes to an environment map (for spawning a child).
    pub fn apply(&self, env: &mut std::collections::BTreeMap<OsString, OsString>) {
        for (name, value) in &self.changes {
            match value {
                Some(v) => env.insert((*name).into(), v.clone()),
                None => env.remove(OsStr::new(name)),
            };
        }
    }
}

/// The variables that point at a toolkit; cudaenv owns them while a version is active.
const HOME_VARS: [&str; 2] = [env_vars::CUDA_HOME, env_vars::CUDA_PATH];
const CUDNN_VARS: [&str; 1] = [env_vars::CUDNN_PATH];

/// What activating a version sets, independent of the current environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// `:`-separated variables and the directories that go first, in order.
    pub lists: [(&'static str, Vec<PathBuf>); 2],
    /// Single-valued variables, in order: `Some` sets; `None` (the version has
    /// no such directory, or `system`) clears what cudaenv had set.
    pub values: Vec<(&'static str, Option<OsString>)>,
}

/// The activation data of `active`. Every directory is checked to be
/// representable in a `:`-separated list.
pub fn activation(active: &Active) -> Result<Activation> {
    let version = active.installed();
    let (bins, libs) = match version {
        None => (Vec::new(), Vec::new()),
        Some(v) => (v.bin_dirs(), v.lib_dirs()),
    };
    for p in bins.iter().chain(libs.iter()) {
        check_representable(p, env_vars::PATH)?;
    }
    let home = version
        .and_then(Installed::cuda_home)
        .map(PathBuf::into_os_string);
    let cudnn = version
        .and_then(Installed::cudnn_home)
        .map(PathBuf::into_os_string);
    let mut values = Vec::with_capacity(HOME_VARS.len() + CUDNN_VARS.len() + 1);
    values.extend(HOME_VARS.iter().map(|&n| (n, home.clone())));
    values.extend(CUDNN_VARS.iter().map(|&n| (n, cudnn.clone())));
    values.push((
        env_vars::CUDAENV_ACTIVE,
        version.map(|v| v.name.as_str().into()),
    ));
    Ok(Activation {
        lists: [(env_vars::PATH, bins), (env_vars::LD_LIBRARY_PATH, libs)],
        values,
    })
}

/// Decides whether a directory belongs to some cudaenv version.
struct Owned {
    versions_dirs: Vec<PathBuf>,
    linked: Vec<PathBuf>,
}

impl Owned {
    fn new(store: &Store) -> Result<Owned> {
        let mut linked = Vec::new();
        for v in store.linked()? {
            linked.extend(v.bin_dirs());
            linked.extend(v.lib_dirs());
            linked.extend(v.cuda_home());
            linked.extend(v.cudnn_home());
        }
        Ok(Owned {
            versions_dirs: store.all_versions_dirs(),
            linked,
        })
    }

    fn contains(&self, p: &Path) -> bool {
        self.versions_dirs.iter().any(|d| p.starts_with(d)) || self.linked.iter().any(|l| l == p)
    }
}

/// Computes the changes that activate `active` on top of `ctx`'s environment.
pub fn plan(ctx: &Context, store: &Store, active: &Active) -> Result<EnvDelta> {
    let activation = activation(active)?;
    let owned = Owned::new(store)?;
    let mut delta = EnvDelta::default();
    for (name, dirs) in &activation.lists {
        match prepend(dirs, ctx.var_os(name), &owned) {
            Some(p) => delta.set(name, p),
            None => delta.unset(name),
        }
    }
    for (name, value) in activation.values {
        match value {
            Some(v) => delta.set(name, v),
            // The marker is always ours; a directory variable only when it
            // points into a cudaenv version (a user's own CUDA_HOME survives).
            None if name == env_vars::CUDAENV_ACTIVE => delta.unset(name),
            None => {
                if ctx
                    .var_os(name)
                    .is_some_and(|cur| owned.contains(Path::new(cur)))
                {
                    delta.unset(name);
                }
            }
        }
    }
    Ok(delta)
}

/// `dirs` followed by the current list minus cudaenv's entries and empty ones.
/// `None` when the result would be empty (unset rather than set to "").
fn prepend(dirs: &[PathBuf], current: Option<&OsStr>, owned: &Owned) -> Option<OsString> {
    let mut parts: Vec<&OsStr> = dirs.iter().map(|d| d.as_os_str()).collect();
    if let Some(cur) = current {
        for entry in cur.as_bytes().split(|&b| b == b':') {
            let entry = OsStr::from_bytes(entry);
            if entry.is_empty()
                || owned.contains(Path::new(entry))
                || dirs.iter().any(|d| d.as_os_str() == entry)
            {
                continue;
            }
            parts.push(entry);
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut out = OsString::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(":");
        }
        out.push(p);
    }
    Some(out)
}

/// A directory can only go into a `:`-separated list if it has no `:`.
pub fn check_representable(p: &Path, variable: &'static str) -> Result<()> {
    if p.as_os_str().as_bytes().contains(&b':') {
        return Err(Error::UnrepresentablePath {
            path: p.to_path_buf(),
            variable,
            reason: "it contains `:`, the list separator",
        });
    }
    Ok(())
}

/// Finds `program` the way `execvp` would, but in the given PATH.
/// A name with a `/` is returned as is.
pub fn find_in_path(program: &OsStr, path: Option<&OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let path = path?;
    path.as_bytes()
        .split(|&b| b == b':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(OsStr::from_bytes(d)).join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
