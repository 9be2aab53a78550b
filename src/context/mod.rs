//! The one value through which library code sees the outside world.
//!
//! The environment, the working directory and the root directory are captured
//! once, at start-up, into a `Context`, and passed down. Library code never calls
//! `std::env::var` or `current_dir` itself, so tests can build a `Context` with
//! any environment they like and run in parallel without touching process state.
//!
//! Standard output and standard error are on the context too (`Stdio`), as
//! rustup's `Process` has them: commands write data and messages through it,
//! never through `println!`/`eprintln!`, so a test can run a command with
//! `Context::capturing` and read what it printed. The process's own streams
//! cost nothing to carry (no allocation), which matters on the shim path.

pub(crate) mod config;
pub(crate) mod env_vars;
pub(crate) mod error;
pub(crate) mod failpoint;
pub(crate) mod tool_config;

use crate::error::{ContextError, Error, Result};
use crate::os::OsStrBytes;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct Context {
    env: Vars,
    cwd: PathBuf,
    home: Option<PathBuf>,
    root: PathBuf,
    stdio: Stdio,
    /// Where the system's configuration lives (`/etc` when `None`): apt's
    /// sources and pip's global files are read from here. Tests give a
    /// directory of their own, so what they read is theirs.
    etc: Option<PathBuf>,
    /// `$CUDAENV_ROOT/config.toml`, read the first time something asks
    /// (`config`), shared by this context's clones: once per process.
    config: Arc<config::Loaded>,
}

impl Context {
    /// Captures the current process's environment and working directory.
    ///
    /// The environment's strings are borrowed, not copied: a shim hands most
    /// of them on to `execve` as they are (docs/PERFORMANCE.md).
    pub fn from_process() -> Result<Self> {
        let env = Vars::from_process();
        let cwd = match logical_cwd(&env) {
            Some(pwd) => pwd,
            None => std::env::current_dir()
                .map_err(Error::io("cannot read the working directory", "."))?,
        };
        Self::with_vars(env, cwd)
    }

    /// Builds a context from an explicit environment (for tests and child processes).
    pub fn new(env: impl IntoIterator<Item = (OsString, OsString)>, cwd: PathBuf) -> Result<Self> {
        let mut vars = Vars::default();
        for (name, value) in env {
            vars.set(&name, &value);
        }
        Self::with_vars(vars, cwd)
    }

    fn with_vars(env: Vars, cwd: PathBuf) -> Result<Self> {
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
            None => home
                .as_ref()
                .ok_or(Error::Context(ContextError::NoHome))?
                .join(".cudaenv"),
        };
        Ok(Context {
            env,
            cwd,
            home,
            root,
            stdio: Stdio::default(),
            etc: None,
            config: Arc::default(),
        })
    }

    /// This context reading the system's configuration from `etc` instead
    /// of `/etc` (for tests).
    pub fn with_etc(&self, etc: PathBuf) -> Context {
        let mut c = self.clone();
        c.etc = Some(etc);
        c
    }

    /// Where the system's configuration files are: `/etc`.
    pub fn etc(&self) -> &Path {
        self.etc.as_deref().unwrap_or(Path::new("/etc"))
    }

    /// This context with its output kept in memory (`Stdio::captured`).
    pub fn capturing(&self) -> Context {
        let mut c = self.clone();
        c.stdio = Stdio(Some(Arc::default()));
        c
    }

    /// Where output goes.
    pub fn stdio(&self) -> &Stdio {
        &self.stdio
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
        self.env.get(OsStr::new(name))
    }

    /// A variable's value if it is set, non-empty and valid UTF-8.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.var_os(name)
            .and_then(|v| v.to_str())
            .filter(|v| !v.is_empty())
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.env.get(OsStr::new(name)).is_some()
    }

    /// The whole environment, for spawning children with exactly what we saw.
    pub fn vars(&self) -> &Vars {
        &self.env
    }

    /// A copy of the whole environment, to change and hand to a child.
    pub fn vars_map(&self) -> BTreeMap<OsString, OsString> {
        self.env
            .iter()
            .map(|(n, v)| (crate::os::env_key(n), v.to_owned()))
            .collect()
    }

    /// Returns a copy of this context with one variable changed or removed.
    pub fn with_var(&self, name: &str, value: Option<&OsStr>) -> Context {
        let mut c = self.clone();
        match value {
            Some(v) => c.env.set(OsStr::new(name), v),
            None => c.env.remove(OsStr::new(name)),
        }
        c
    }

    /// This context with another `$CUDAENV_ROOT` (the variable too, so child
    /// processes see the same root). The download cache stays where it was.
    pub fn with_root(&self, root: PathBuf) -> Context {
        let cache = self.cache_dir();
        let mut c = self.with_var(env_vars::CUDAENV_ROOT, Some(root.as_os_str()));
        c.env
            .set(OsStr::new(env_vars::CUDAENV_CACHE_DIR), cache.as_os_str());
        c.root = root;
        // Another root, another config.toml.
        c.config = Arc::default();
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

    /// `$CUDAENV_ROOT/config.toml`, checked, or the defaults when there is
    /// none. Read and parsed the first time it is asked for, then kept: every
    /// setting that has a key in the file comes through here, so a command
    /// (or a shim) opens the file at most once, and one that needs no key
    /// never opens it. A bad file is the same error on every ask.
    pub fn config(&self) -> Result<&config::Config> {
        self.config.config(self)
    }

    /// The file's bytes as `config` read them (`None`: there is none), for a
    /// look before parsing (`config::system_root`).
    pub(crate) fn config_bytes(&self) -> Result<Option<&[u8]>> {
        self.config.bytes(self)
    }

    /// True when colour must not be used (`NO_COLOR` set to anything non-empty).
    pub fn no_color(&self) -> bool {
        self.var_os(env_vars::NO_COLOR)
            .is_some_and(|v| !v.is_empty())
    }
}

/// A command's standard output and standard error: the process's, or (for
/// tests) two buffers. Clones share the same buffers.
#[derive(Debug, Clone, Default)]
pub struct Stdio(Option<Arc<Mutex<Captured>>>);

/// What a capturing context's commands wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub stdout: Vec<u8>,
    /// Styles (colours) removed, as on a stream that is not a terminal.
    pub stderr: Vec<u8>,
}

impl Stdio {
    /// Data, as it is (shell code, JSON, paths): never restyled.
    pub fn out(&self, bytes: &[u8]) -> std::io::Result<()> {
        match &self.0 {
            None => {
                let mut o = std::io::stdout().lock();
                o.write_all(bytes).and_then(|_| o.flush())
            }
            Some(c) => {
                lock(c).stdout.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Styled text for stdout (a table with colours): the styles are dropped
    /// when stdout is not a terminal or `NO_COLOR` is set.
    pub fn out_styled(&self, text: &str) -> std::io::Result<()> {
        match &self.0 {
            None => {
                let mut o = anstream::stdout().lock();
                o.write_all(text.as_bytes()).and_then(|_| o.flush())
            }
            Some(c) => {
                lock(c)
                    .stdout
                    .extend(anstream::adapter::strip_str(text).to_string().bytes());
                Ok(())
            }
        }
    }

    /// Messages for stderr, styles dropped as for `out_styled`.
    pub fn err(&self, text: &str) {
        match &self.0 {
            None => {
                let _ = anstream::stderr().lock().write_all(text.as_bytes());
            }
            Some(c) => lock(c)
                .stderr
                .extend(anstream::adapter::strip_str(text).to_string().bytes()),
        }
    }

    /// Whether output is kept in memory (progress bars, which draw on the
    /// terminal, stay hidden then).
    pub fn is_captured(&self) -> bool {
        self.0.is_some()
    }

    /// What was written so far (empty for the process's own streams).
    pub fn captured(&self) -> Captured {
        self.0.as_ref().map(|c| lock(c).clone()).unwrap_or_default()
    }
}

fn lock(c: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    c.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The shell's `$PWD` when it names the working directory (the path the user
/// sees, through symlinks), so `.cuda-version` files are looked up along the
/// same path by the binary and by the shell hook, as `pwd -L` would.
fn logical_cwd(env: &Vars) -> Option<PathBuf> {
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
    let same = crate::os::file_id(pwd, &a)? == crate::os::file_id(Path::new("."), &b)?;
    same.then(|| pwd.to_path_buf())
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

/// An environment: `NAME=value` entries in their original order. A name's
/// first entry is its value, as for `getenv` (a well-formed environment has
/// one entry per name).
#[derive(Debug, Clone, Default)]
pub struct Vars(Vec<Var>);

/// One `NAME=value` entry and where its `=` is.
#[derive(Debug, Clone)]
pub struct Var {
    text: Text,
    eq: usize,
}

/// One of the strings the process was started with (on Unix they stay
/// valid for the whole run: the C library never frees them, `setenv` and
/// `unsetenv` leave the original strings in place, and cudaenv never
/// changes its own environment), or bytes of its own.
use crate::os::EnvText as Text;

impl Vars {
    /// The process's environment, as the C library holds it (`environ`).
    /// Entries without `=` are skipped, as `std::env::vars_os` does.
    fn from_process() -> Vars {
        Vars(
            crate::os::process_environ()
                .filter_map(|text| {
                    let eq = find_eq(match &text {
                        Text::Process(c) => c.to_bytes(),
                        Text::Owned(b) => b,
                    })?;
                    Some(Var { text, eq })
                })
                .collect(),
        )
    }

    pub fn get(&self, name: &OsStr) -> Option<&OsStr> {
        self.0
            .iter()
            .find(|v| crate::os::env_names_equal(v.name(), name))
            .map(Var::value)
    }

    /// Sets `name`, replacing every entry it had (the first in place).
    pub fn set(&mut self, name: &OsStr, value: &OsStr) {
        let mut text = Vec::with_capacity(name.len() + value.len() + 1);
        text.extend_from_slice(name.as_bytes());
        text.push(b'=');
        text.extend_from_slice(value.as_bytes());
        let var = Var {
            text: Text::Owned(text.into()),
            eq: name.len(),
        };
        let same = |v: &Var| crate::os::env_names_equal(v.name(), name);
        match self.0.iter().position(same) {
            Some(i) => {
                self.0[i] = var;
                let rest = self.0.split_off(i + 1);
                self.0.extend(rest.into_iter().filter(|v| !same(v)));
            }
            None => self.0.push(var),
        }
    }

    pub fn remove(&mut self, name: &OsStr) {
        self.0
            .retain(|v| !crate::os::env_names_equal(v.name(), name));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in order.
    pub fn entries(&self) -> impl Iterator<Item = &Var> {
        self.0.iter()
    }

    /// `(name, value)` pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.0.iter().map(|v| (v.name(), v.value()))
    }
}

impl Var {
    fn bytes(&self) -> &[u8] {
        match &self.text {
            Text::Process(c) => c.to_bytes(),
            Text::Owned(b) => b,
        }
    }

    pub fn name(&self) -> &OsStr {
        // SAFETY: every entry is the process's own (any bytes on Unix) or
        // made of encoded bytes of a name and a value joined by an ASCII
        // `=` (`Vars::set`, `os::process_environ`): split at that `=`.
        unsafe { OsStr::from_encoded_bytes_unchecked(&self.bytes()[..self.eq]) }
    }

    pub fn value(&self) -> &OsStr {
        // SAFETY: as for `name`.
        unsafe { OsStr::from_encoded_bytes_unchecked(&self.bytes()[self.eq + 1..]) }
    }

    /// The entry as `execve` wants it: the process's own string as it is,
    /// others copied with a NUL added (`None` if the entry holds a NUL).
    pub fn to_c_str(&self) -> Option<Cow<'_, CStr>> {
        match &self.text {
            Text::Process(c) => Some(Cow::Borrowed(c)),
            Text::Owned(b) => CString::new(b.to_vec()).ok().map(Cow::Owned),
        }
    }
}

/// Where the name ends: the first `=` after the first byte (a name may
/// start with `=`, as `std::env::vars_os` reads it).
fn find_eq(entry: &[u8]) -> Option<usize> {
    entry.iter().skip(1).position(|&b| b == b'=').map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(entries: &[&str]) -> Vars {
        let mut v = Vars::default();
        for e in entries {
            let (n, val) = e.split_once('=').unwrap();
            v.set(OsStr::new(n), OsStr::new(val));
        }
        v
    }

    #[test]
    fn the_process_environment_is_read_as_std_reads_it() {
        let ours = Vars::from_process();
        let std: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let mine: Vec<(OsString, OsString)> = ours
            .iter()
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(mine, std);
        assert!(ours.get(OsStr::new("PATH")).is_some());
    }

    #[test]
    fn set_replaces_every_entry_of_a_name_in_place() {
        let mut v = vars(&["A=1", "B=2", "C=3"]);
        // A second entry for B, as a hand-made environment could have.
        v.0.push(Var {
            text: Text::Owned(b"B=9".to_vec().into()),
            eq: 1,
        });
        assert_eq!(v.get(OsStr::new("B")), Some(OsStr::new("2")));
        v.set(OsStr::new("B"), OsStr::new("x=y"));
        let all: Vec<_> = v.iter().collect();
        assert_eq!(
            all,
            [
                (OsStr::new("A"), OsStr::new("1")),
                (OsStr::new("B"), OsStr::new("x=y")),
                (OsStr::new("C"), OsStr::new("3")),
            ]
        );
        v.remove(OsStr::new("A"));
        assert_eq!(v.get(OsStr::new("A")), None);
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn entries_become_c_strings_unless_they_hold_a_nul() {
        let v = vars(&["A=b=c", "EMPTY="]);
        let c: Vec<_> = v.entries().map(|e| e.to_c_str().unwrap()).collect();
        assert_eq!(c[0].to_bytes(), b"A=b=c");
        assert_eq!(c[1].to_bytes(), b"EMPTY=");
        assert_eq!(v.get(OsStr::new("EMPTY")), Some(OsStr::new("")));
        let bad = vars(&["A=x\0y"]);
        assert!(bad.entries().next().unwrap().to_c_str().is_none());
    }

    #[test]
    fn a_name_may_start_with_an_equals_sign() {
        assert_eq!(find_eq(b"=C:=C:\\x"), Some(3));
        assert_eq!(find_eq(b"NAME=v"), Some(4));
        assert_eq!(find_eq(b"NOEQ"), None);
        assert_eq!(find_eq(b"="), None);
    }
}
