//! The one value through which library code sees the outside world.
//!
//! The environment, the working directory and the root directory are captured
//! once, at start-up, into a `Context`, and passed down. Library code never calls
//! `std::env::var` or `current_dir` itself, so tests can build a `Context` with
//! any environment they like and run in parallel without touching process state.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::env_vars;
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Context {
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    home: Option<PathBuf>,
    root: PathBuf,
}

impl Context {
    /// Captures the current process's environment and working directory.
    pub fn from_process() -> Result<Self> {
        let env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        let cwd = match logical_cwd(&env) {
            Some(pwd) => pwd,
            None => std::env::current_dir()
                .map_err(Error::io("cannot read the working directory", "."))?,
        };
        Self::new(env, cwd)
    }

    /// Builds a context from an explicit environment (for tests and child processes).
    pub fn new(env: BTreeMap<OsString, OsString>, cwd: PathBuf) -> Result<Self> {
        let home = env
            .get(OsStr::new(env_vars::HOME))
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(dirs::home_dir);
        let root = match env
            .get(OsStr::new(env_vars::CUDAENV_ROOT))
            .filter(|r| !r.is_empty())
        {
            Some(r) => absolutize(Path::new(r), &cwd),
            None => home.as_ref().ok_or(Error::NoHome)?.join(".cudaenv"),
        };
        Ok(Context {
            env,
            cwd,
            home,
            root,
        })
    }

    /// `$CUDAENV_ROOT`, absolute.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.env.get(OsStr::new(name)).map(|v| v.as_os_str())
    }

    /// A variable's value if it is set, non-empty and valid UTF-8.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.var_os(name)
            .and_then(|v| v.to_str())
            .filter(|v| !v.is_empty())
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.env.contains_key(OsStr::new(name))
    }

    /// The whole environment, for spawning children with exactly what we saw.
    pub fn vars(&self) -> &BTreeMap<OsString, OsString> {
        &self.env
    }

    /// Returns a copy of this context with one variable changed or removed.
    pub fn with_var(&self, name: &str, value: Option<&OsStr>) -> Context {
        let mut c = self.clone();
        match value {
            Some(v) => c.env.insert(name.into(), v.into()),
            None => c.env.remove(OsStr::new(name)),
        };
        c
    }

    pub fn with_cwd(&self, cwd: PathBuf) -> Context {
        let mut c = self.clone();
        c.cwd = cwd;
        c
    }

    /// Where downloads are cached (`$CUDAENV_CACHE_DIR`, default `$CUDAENV_ROOT/cache`).
    pub fn cache_dir(&self) -> PathBuf {
        match self
            .var_os(env_vars::CUDAENV_CACHE_DIR)
            .filter(|v| !v.is_empty())
        {
            Some(d) => absolutize(Path::new(d), &self.cwd),
            None => self.root.join("cache"),
        }
    }

    /// True when colour must not be used (`NO_COLOR` set to anything non-empty).
    pub fn no_color(&self) -> bool {
        self.var_os(env_vars::NO_COLOR)
            .is_some_and(|v| !v.is_empty())
    }
}

/// The shell's `$PWD` when it names the working directory (the path the user
/// sees, through symlinks), so `.cuda-version` files are looked up along the
/// same path by the binary and by the shell hook, as `pwd -L` would.
fn logical_cwd(env: &BTreeMap<OsString, OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let pwd = Path::new(env.get(OsStr::new(env_vars::PWD))?);
    if !pwd.is_absolute()
        || pwd.components().any(|c| {
            matches!(
                c,
                std::path::Component::ParentDir | std::path::Component::CurDir
            )
        })
    {
        return None;
    }
    let (a, b) = (std::fs::metadata(pwd).ok()?, std::fs::metadata(".").ok()?);
    (a.dev() == b.dev() && a.ino() == b.ino()).then(|| pwd.to_path_buf())
}

/// Makes `p` absolute against `base` without touching the file system
/// (no symlink resolution, so a root reached through a link keeps its name).
pub fn absolutize(p: &Path, base: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
