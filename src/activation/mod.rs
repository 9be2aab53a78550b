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
//! For JAX/XLA and Triton built against a local CUDA, activation also points
//! `XLA_FLAGS=--xla_gpu_cuda_data_dir=` at the toolkit when it has
//! `nvvm/libdevice`, and `TRITON_PTXAS_PATH` at its `ptxas` (other XLA flags
//! are kept; the flag and the variable are removed again when cudaenv's).
//!
//! Next to a Python environment (`VIRTUAL_ENV`, `CONDA_PREFIX`) that bundles
//! NVIDIA CUDA wheels of the version's major, the version's directories first
//! on LD_LIBRARY_PATH shadow the sonames the framework opens without a path,
//! while what it opens by path still comes from the wheels: two copies, or a
//! cuDNN split between versions. `plan` says so in `EnvDelta::notes` (callers
//! print it as a warning; shims stay silent), and with the opt-in setting
//! `bundled-cuda = "wheels"` it leaves LD_LIBRARY_PATH, XLA_FLAGS and
//! TRITON_PTXAS_PATH alone. The check costs nothing unless one of those
//! variables is set, and then a few `stat`s; it runs only when an activation
//! is computed, never on an idle prompt (the hook exits before that).
//!
//! The result is data (`EnvDelta`); `exec` applies it to a child's environment
//! and `shell` renders it as code for a shell.

pub(crate) mod error;
pub(crate) mod host_compiler;
pub(crate) mod modulefile;
pub(crate) mod select;
pub(crate) mod shell;
pub mod shims;
pub mod version_file;

use crate::error::{ActivationError, Error, Result};
use crate::os::OsStrBytes;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::activation::select::Active;
use crate::context::Context;
use crate::context::env_vars;
use crate::store::{Installed, Store};

/// Ordered changes: `Some(value)` sets, `None` unsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvDelta {
    pub changes: Vec<(&'static str, Option<OsString>)>,
    /// What the user should know about this activation (printed as warnings).
    pub notes: Vec<Note>,
}

/// Something about an activation worth a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The host-compiler setting pointed nvcc at a compiler.
    HostCompiler {
        /// The compiler, as it describes itself (`/usr/bin/g++-11 (GCC 11.3.0)`).
        compiler: String,
        /// Why: the setting and the limits (`CUDAENV_HOST_COMPILER=auto; CUDA 11.8 accepts GCC up to 11 …`).
        why: String,
    },
    /// The host-compiler setting found no compiler to point nvcc at.
    NoHostCompiler { why: String },
    /// The active Python environment holds NVIDIA CUDA wheels of the version's major.
    BundledWheels {
        /// Its `site-packages/nvidia` directory.
        nvidia: PathBuf,
        major: u32,
        /// `bundled-cuda = "wheels"`: the version was kept off LD_LIBRARY_PATH.
        kept_off: bool,
    },
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::HostCompiler { compiler, why } => write!(
                f,
                "nvcc uses {compiler} ({why}): NVCC_PREPEND_FLAGS has -ccbin, NVCC_CCBIN and CUDAHOSTCXX name it"
            ),
            Note::NoHostCompiler { why } => {
                write!(f, "nvcc's host compiler is left as it is: {why}")
            }
            Note::BundledWheels {
                nvidia,
                major,
                kept_off: false,
            } => write!(
                f,
                "{} holds CUDA {major} wheels: with this version first on LD_LIBRARY_PATH, a framework there can load two copies of a library (or a mismatched cuDNN); `cudaenv doctor` says which, `cudaenv trace` shows it, and `{}=wheels` keeps the version off LD_LIBRARY_PATH here",
                nvidia.display(),
                env_vars::CUDAENV_BUNDLED_CUDA
            ),
            Note::BundledWheels {
                nvidia,
                major,
                kept_off: true,
            } => write!(
                f,
                "{} holds CUDA {major} wheels: the version's libraries are kept off LD_LIBRARY_PATH (bundled-cuda = wheels)",
                nvidia.display()
            ),
        }
    }
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
                Some(v) => env.insert(crate::os::env_key(OsStr::new(name)), v.clone()),
                None => env.remove(&crate::os::env_key(OsStr::new(name))),
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
    pub lists: Vec<(&'static str, Vec<PathBuf>)>,
    /// Single-valued variables, in order: `Some` sets; `None` (the version has
    /// no such directory, or `system`) clears what cudaenv had set.
    pub values: Vec<(&'static str, Option<OsString>)>,
}

/// Refuses a value with a line break for an output format that cannot carry
/// one (`reason` says why); the shells and `$GITHUB_ENV` can, and quote it.
/// Every such format checks through here.
pub fn single_line(
    variable: &'static str,
    value: &std::ffi::OsStr,
    reason: &'static str,
) -> Result<()> {
    if value
        .as_encoded_bytes()
        .iter()
        .any(|b| matches!(b, b'\n' | b'\r'))
    {
        return Err(Error::Activation(ActivationError::UnrepresentablePath {
            path: PathBuf::from(value),
            variable,
            reason,
        }));
    }
    Ok(())
}

impl Activation {
    /// `single_line` for every directory and value.
    pub fn single_line(&self, reason: &'static str) -> Result<()> {
        for (name, dirs) in &self.lists {
            for d in dirs {
                single_line(name, d.as_os_str(), reason)?;
            }
        }
        for (name, value) in &self.values {
            if let Some(v) = value {
                single_line(name, v, reason)?;
            }
        }
        Ok(())
    }
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
    if crate::os::VERSIONED_CUDA_PATH {
        // The active version's `CUDA_PATH_V<major>_<minor>`, as NVIDIA's
        // installer sets it; every other one is cleared where it points into
        // a cudaenv version (so switching versions undoes the last one).
        let wanted = version
            .and_then(Installed::cuda)
            .map(|c| format!("CUDA_PATH_V{}_{}", c.major(), c.minor().unwrap_or(0)));
        values.extend(env_vars::CUDA_PATH_VERSIONED.iter().map(|&n| {
            let mine = wanted.as_deref() == Some(n);
            (n, home.clone().filter(|_| mine))
        }));
    }
    values.push((
        env_vars::CUDAENV_ACTIVE,
        version.map(|v| v.name.as_str().into()),
    ));
    Ok(Activation {
        lists: if crate::os::DLLS_ON_PATH {
            vec![(env_vars::PATH, bins)]
        } else {
            vec![(env_vars::PATH, bins), (env_vars::LD_LIBRARY_PATH, libs)]
        },
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
    let mut activation = activation(active)?;
    let owned = Owned::new(store)?;
    let mut delta = EnvDelta::default();
    let mut kept_off = false;
    if let Some(v) = active.installed()
        && let Some(major) = v.cuda().map(|c| c.major())
        && let Some(nvidia) = bundled_wheels(ctx, major)
    {
        kept_off = crate::context::config::BundledCuda::resolve(ctx)?
            == crate::context::config::BundledCuda::Wheels;
        if kept_off {
            for (name, dirs) in activation.lists.iter_mut() {
                if *name == env_vars::LD_LIBRARY_PATH {
                    dirs.clear();
                }
            }
        }
        delta.notes.push(Note::BundledWheels {
            nvidia,
            major,
            kept_off,
        });
    }
    for (name, dirs) in &activation.lists {
        match prepend(dirs, ctx.var_os(name), &owned) {
            Some(p) => delta.set(name, p),
            None => delta.unset(name),
        }
    }
    host_compiler(&mut delta, ctx, active.installed())?;
    for (name, value) in activation.values {
        if name == env_vars::CUDAENV_ACTIVE {
            // Computed from the environment (the user's other XLA flags stay),
            // so not part of `Activation`.
            xla_and_triton(
                &mut delta,
                ctx,
                &owned,
                active.installed().filter(|_| !kept_off),
            );
        }
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

/// With the host-compiler setting and a version of a known CUDA: nvcc's
/// compiler (`-ccbin` first in NVCC_PREPEND_FLAGS, NVCC_CCBIN) and CMake's
/// (CUDAHOSTCXX), and a note saying which and why. Without the setting,
/// nothing is touched: nvcc keeps its own choice.
fn host_compiler(delta: &mut EnvDelta, ctx: &Context, version: Option<&Installed>) -> Result<()> {
    use crate::activation::host_compiler::{self as hc};
    let Some(setting) = crate::context::config::HostCompiler::resolve(ctx)? else {
        return Ok(());
    };
    let Some(cuda) = version.and_then(Installed::cuda) else {
        return Ok(());
    };
    let origin = setting.origin.to_string();
    let path_dirs: Vec<PathBuf> =
        crate::os::path_list::dirs(ctx.var_os(env_vars::PATH).unwrap_or_default())
            .map(Path::to_path_buf)
            .collect();
    let limits = hc::limits(cuda);
    let chosen = match (&setting.value, limits) {
        (crate::context::config::HostCompiler::Auto, Some(l)) => match hc::choose(l, &path_dirs) {
            Some(c) => Ok((c, format!("{origin}=auto; {}", l.describe()))),
            None => Err(format!(
                "{origin}=auto found no installed g++ that CUDA {} accepts (GCC up to {}); install one (Debian: apt install g++-{})",
                l.cuda, l.gcc_max, l.gcc_max
            )),
        },
        (crate::context::config::HostCompiler::Auto, None) => Err(format!(
            "{origin}=auto: cudaenv does not know which compilers CUDA {cuda} accepts"
        )),
        (crate::context::config::HostCompiler::Named(p), l) => {
            let path = if p.components().count() > 1 {
                Some(p.clone())
            } else {
                crate::os::path_list::find(p.as_os_str(), path_dirs.iter().map(PathBuf::as_path))
            };
            match path.as_deref().and_then(hc::probe) {
                Some(c) => {
                    let why = match l {
                        Some(l) if c.accepted_by(l) => format!("{origin}; {}", l.describe()),
                        Some(l) => {
                            format!("{origin}; note: {}, so nvcc will refuse it", l.describe())
                        }
                        None => origin.clone(),
                    };
                    Ok((c, why))
                }
                None => Err(format!(
                    "{origin} names {}, which is not a compiler that answers --version",
                    p.display()
                )),
            }
        }
    };
    match chosen {
        Ok((c, why)) => {
            let current = ctx.var(env_vars::NVCC_PREPEND_FLAGS).unwrap_or("");
            delta.set(
                env_vars::NVCC_PREPEND_FLAGS,
                hc::with_ccbin(current, &c.path).into(),
            );
            delta.set(env_vars::NVCC_CCBIN, c.path.clone().into_os_string());
            delta.set(env_vars::CUDAHOSTCXX, c.path.clone().into_os_string());
            delta.notes.push(Note::HostCompiler {
                compiler: c.describe(),
                why,
            });
        }
        Err(why) => delta.notes.push(Note::NoHostCompiler { why }),
    }
    Ok(())
}

const XLA_DATA_DIR: &str = "--xla_gpu_cuda_data_dir=";

/// `XLA_FLAGS` and `TRITON_PTXAS_PATH` for `version` (when it has libdevice /
/// ptxas), or without one, cudaenv's own values removed.
fn xla_and_triton(delta: &mut EnvDelta, ctx: &Context, owned: &Owned, version: Option<&Installed>) {
    let home = version
        .and_then(Installed::cuda_home)
        .filter(|h| h.join("nvvm/libdevice").is_dir());
    let current = ctx.var(env_vars::XLA_FLAGS).unwrap_or("");
    // Other flags are the user's; a data dir is replaced when we set one, and
    // dropped without one only when it points into a cudaenv version.
    let mut flags: Vec<String> = current
        .split_whitespace()
        .filter(|f| match f.strip_prefix(XLA_DATA_DIR) {
            Some(dir) => home.is_none() && !owned.contains(Path::new(dir)),
            None => true,
        })
        .map(str::to_string)
        .collect();
    if let Some(h) = &home {
        flags.push(format!("{XLA_DATA_DIR}{}", h.display()));
    }
    let new = flags.join(" ");
    if new != current {
        if new.is_empty() {
            delta.unset(env_vars::XLA_FLAGS);
        } else {
            delta.set(env_vars::XLA_FLAGS, new.into());
        }
    }
    let ptxas = version.and_then(|v| {
        v.bin_dirs()
            .into_iter()
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    });
    match ptxas {
        Some(p) => delta.set(env_vars::TRITON_PTXAS_PATH, p.into_os_string()),
        None => {
            if ctx
                .var_os(env_vars::TRITON_PTXAS_PATH)
                .and_then(|p| Path::new(p).parent())
                .is_some_and(|d| owned.contains(d))
            {
                delta.unset(env_vars::TRITON_PTXAS_PATH);
            }
        }
    }
}

/// The active Python environment's `site-packages/nvidia` when it holds the
/// CUDA runtime or cuBLAS of `major` (the wheels' layouts: `cu13/lib` for CUDA
/// 13, `cuda_runtime/lib` and `cublas/lib` before). Nothing is read unless
/// `VIRTUAL_ENV` or `CONDA_PREFIX` is set.
pub fn bundled_wheels(ctx: &Context, major: u32) -> Option<PathBuf> {
    let cudart = if major == 11 {
        "libcudart.so.11.0".to_string()
    } else {
        format!("libcudart.so.{major}")
    };
    let candidates = [
        format!("cu{major}/lib/{cudart}"),
        format!("cuda_runtime/lib/{cudart}"),
        format!("cublas/lib/libcublas.so.{major}"),
    ];
    for var in [env_vars::VIRTUAL_ENV, env_vars::CONDA_PREFIX] {
        let Some(prefix) = ctx.var_os(var) else {
            continue;
        };
        let lib = Path::new(prefix).join("lib");
        let Ok(rd) = std::fs::read_dir(&lib) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.file_name().as_bytes().starts_with(b"python") {
                continue;
            }
            let nvidia = e.path().join("site-packages/nvidia");
            if candidates.iter().any(|c| nvidia.join(c).exists()) {
                return Some(nvidia);
            }
        }
    }
    None
}

/// `dirs` followed by the current list minus cudaenv's entries and empty ones.
/// `None` when the result would be empty (unset rather than set to "").
fn prepend(dirs: &[PathBuf], current: Option<&OsStr>, owned: &Owned) -> Option<OsString> {
    crate::os::path_list::prepend(dirs, current, |p| owned.contains(p))
}

/// A directory can only go into a `:`-separated list if it has no `:`.
pub fn check_representable(p: &Path, variable: &'static str) -> Result<()> {
    if !crate::os::path_list::can_hold(p) {
        return Err(Error::Activation(ActivationError::UnrepresentablePath {
            path: p.to_path_buf(),
            variable,
            reason: "it contains `:`, the list separator",
        }));
    }
    Ok(())
}

/// Finds `program` the way `execvp` would, but in the given PATH.
/// A name with a `/` is returned as is.
pub fn find_in_path(program: &OsStr, path: Option<&OsString>) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    crate::os::path_list::find(program, crate::os::path_list::dirs(path?))
}
