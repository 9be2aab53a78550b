//! Shims: one entry in `$CUDAENV_ROOT/shims/` per executable of any version.
//!
//! A shim is the cudaenv binary itself under another name (a hard link, or a
//! symbolic link where the root is on another file system). When the binary
//! starts under a name that is not `cudaenv…`, `cli::main` hands control to
//! [`run`], which resolves the version exactly as `cudaenv exec` does and
//! replaces itself with the real program from that version's `bin` directories,
//! with the version's environment applied. There is no shell script in the
//! path, so a shim costs one extra `execve` and a few small file reads.
//!
//! [`rehash`] makes the directory match the installed versions: it adds missing
//! shims, replaces ones that no longer point at this binary (after an upgrade)
//! and removes stale ones. Every change is an atomic `rename` of a link made
//! under a temporary name, so a concurrent lookup sees either the old or the
//! new shim, never a missing one; and rehashes are serialized by an advisory
//! lock on `shims/.lock`, so any number of them may run at once (install,
//! uninstall and link all run one). The directory belongs to cudaenv: entries
//! that are not shims of an installed version are removed; dot-files hold its
//! own state (`.lock`, and `.generation`, rewritten by every rehash so that the
//! shell hook notices installs and removals without asking the binary).
//!
//! A shim must never find itself: a shim of the `system` selection looks the
//! command up on PATH while skipping every file that is this very binary
//! (compared by device and inode, so a shims directory reached through a
//! symlink or listed twice is still skipped), and `CUDAENV_SHIM_DEPTH` counts
//! nested shim invocations so that a loop through some other wrapper stops
//! with an error instead of forking forever.

pub mod probe;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::activation::select::{self, Active};
use crate::activation::{self, EnvDelta};
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ActivationError, Error, Result};
use crate::os::lock::{LockFile, Waiting};
use crate::store::{Installed, Store};

/// The file whose content changes with every rehash (read by the shell hook).
pub const GENERATION_FILE: &str = ".generation";
const LOCK_FILE: &str = ".lock";
/// Nested shim invocations allowed before we call it a loop.
pub const MAX_DEPTH: u32 = 16;

/// What a rehash changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rehash {
    /// Every shim now present, sorted.
    pub shims: Vec<OsString>,
    /// Shims created or replaced.
    pub added: Vec<OsString>,
    /// Stale entries removed.
    pub removed: Vec<OsString>,
}

/// Makes `$CUDAENV_ROOT/shims/` hold exactly one shim per executable name
/// found in any installed version, each a link to the running binary.
pub fn rehash(store: &Store, waiting: &dyn Waiting) -> Result<Rehash> {
    let exe = std::env::current_exe().map_err(Error::io(
        "cannot find the running executable",
        "/proc/self/exe",
    ))?;
    rehash_with(store, &exe, waiting)
}

/// [`rehash`] with the binary to link given explicitly.
pub fn rehash_with(store: &Store, exe: &Path, waiting: &dyn Waiting) -> Result<Rehash> {
    let dir = store.shims_dir();
    std::fs::create_dir_all(&dir).map_err(Error::io("cannot create", &dir))?;
    let lock = LockFile::acquire(&dir.join(LOCK_FILE), waiting)?;

    let exe_meta = std::fs::metadata(exe).map_err(Error::io("cannot read", exe))?;
    let wanted = executable_names(&store.list()?);
    let mut report = Rehash::default();

    for name in &wanted {
        let shim = dir.join(name);
        if is_link_to(&shim, exe, &exe_meta) {
            continue;
        }
        let tmp = dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            name.to_string_lossy()
        ));
        let _ = std::fs::remove_file(&tmp);
        if std::fs::hard_link(exe, &tmp).is_err() {
            crate::os::symlink(exe, &tmp).map_err(Error::io("cannot create shim", &tmp))?;
        }
        if let Err(e) = std::fs::rename(&tmp, &shim) {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io("cannot install shim", &shim)(e));
        }
        report.added.push(name.clone());
        crate::context::failpoint::hit(crate::context::failpoint::Point::MidRehash);
    }

    let entries = std::fs::read_dir(&dir).map_err(Error::io("cannot list", &dir))?;
    for entry in entries {
        let entry = entry.map_err(Error::io("cannot list", &dir))?;
        let name = entry.file_name();
        if crate::os::OsStrBytes::as_bytes(&name).starts_with(b".") || wanted.contains(&name) {
            continue;
        }
        let path = entry.path();
        // A directory here was not made by us; leave it rather than recurse.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        crate::os::remove_file_in_use(&path)
            .map_err(Error::io("cannot remove stale shim", &path))?;
        report.removed.push(name);
    }

    crate::os::sweep_removed(&dir);
    write_generation(&dir)?;
    report.shims = wanted.into_iter().collect();
    drop(lock);
    Ok(report)
}

/// Every executable name in any version's bin directories that can be a shim.
fn executable_names(versions: &[Installed]) -> BTreeSet<OsString> {
    let mut names = BTreeSet::new();
    for v in versions {
        for bin in v.bin_dirs() {
            let Ok(entries) = std::fs::read_dir(&bin) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if shimmable(&name) && crate::os::is_executable_file(&entry.path()) {
                    names.insert(crate::os::shim_file_name(&name));
                }
            }
        }
    }
    names
}

/// Dot-files are our state, and a name starting with `cudaenv` would make the
/// shim run as cudaenv itself.
fn shimmable(name: &OsStr) -> bool {
    let b = crate::os::OsStrBytes::as_bytes(name);
    !b.is_empty() && !b.starts_with(b".") && !b.starts_with(b"cudaenv")
}

/// Is `shim` already a hard link to `exe`, or a symlink naming it?
fn is_link_to(shim: &Path, exe: &Path, exe_meta: &std::fs::Metadata) -> bool {
    match std::fs::symlink_metadata(shim) {
        Ok(m) if m.file_type().is_symlink() => std::fs::read_link(shim).is_ok_and(|t| t == exe),
        Ok(m) => {
            let id = crate::os::file_id(shim, &m);
            id.is_some() && id == crate::os::file_id(exe, exe_meta)
        }
        Err(_) => false,
    }
}

fn write_generation(dir: &Path) -> Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = format!(
        "{}.{:09}-{}\n",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id()
    );
    let path = dir.join(GENERATION_FILE);
    let mut tmp = tempfile::Builder::new()
        .prefix(".generation.")
        .tempfile_in(dir)
        .map_err(Error::io("cannot create a temporary file in", dir))?;
    std::io::Write::write_all(&mut tmp, stamp.as_bytes())
        .map_err(Error::io("cannot write", tmp.path().to_path_buf()))?;
    let _ = crate::os::set_mode(tmp.path(), 0o644);
    tmp.persist(&path)
        .map_err(|e| Error::io("cannot write", &path)(e.error))?;
    Ok(())
}

/// Runs as the shim for `command`: never returns unless something failed.
pub fn run(ctx: &Context, command: &OsStr, args: &[OsString]) -> Result<std::convert::Infallible> {
    let depth = ctx
        .var(env_vars::CUDAENV_SHIM_DEPTH)
        .and_then(|d| d.parse::<u32>().ok())
        .unwrap_or(0);
    if depth >= MAX_DEPTH {
        return Err(Error::Activation(ActivationError::ShimRecursion {
            command: command.to_string_lossy().into_owned(),
            depth,
        }));
    }
    probe::at(2);
    let store = crate::store::Store::configured(ctx)?;
    let (_, active) = select::active_in(ctx, &store)?;
    probe::at(3);
    let delta = activation::plan(ctx, &store, &active)?;
    probe::at(4);

    let program = match &active {
        Active::Version(v) => v
            .bin_dirs()
            .iter()
            .find_map(|d| crate::os::executable_in(d, command)),
        Active::System => find_not_self(command, ctx.var_os(env_vars::PATH)),
    };
    let Some(program) = program else {
        return Err(Error::Activation(ActivationError::CommandNotFound {
            command: command.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: store
                .list()?
                .iter()
                .filter(|v| {
                    v.bin_dirs()
                        .iter()
                        .any(|d| crate::os::executable_in(d, command).is_some())
                })
                .map(|v| v.name.to_string())
                .collect(),
        }));
    };
    probe::at(5);
    let depth = (depth + 1).to_string();
    let err = match environment(ctx, &delta, (env_vars::CUDAENV_SHIM_DEPTH, depth.as_ref())) {
        Ok(env) => exec(&program, command, args, &env),
        Err(e) => e,
    };
    Err(Error::Io {
        context: "cannot run",
        path: program,
        source: err,
    })
}

/// The environment the real program gets, as `NAME=value` C strings: the
/// shim's own with `delta` applied and `extra` set. The entries it keeps are
/// the process's own strings, not copies.
fn environment<'a>(
    ctx: &'a Context,
    delta: &EnvDelta,
    extra: (&str, &OsStr),
) -> std::io::Result<Vec<Cow<'a, CStr>>> {
    let same = crate::os::env_names_equal;
    let changed = |name: &OsStr| {
        same(name, OsStr::new(extra.0))
            || delta.changes.iter().any(|(n, _)| same(OsStr::new(n), name))
    };
    let entry = |name: &OsStr, value: &OsStr| {
        // One allocation each, with room for the NUL that `CString` adds.
        let mut e = Vec::with_capacity(name.len() + value.len() + 2);
        e.extend_from_slice(name.as_encoded_bytes());
        e.push(b'=');
        e.extend_from_slice(value.as_encoded_bytes());
        CString::new(e)
            .map(Cow::Owned)
            .map_err(|_| crate::os::nul_error())
    };
    let mut env = Vec::with_capacity(ctx.vars().len() + delta.changes.len() + 1);
    for var in ctx.vars().entries() {
        if !changed(var.name()) {
            env.push(var.to_c_str().ok_or_else(crate::os::nul_error)?);
        }
    }
    for (name, value) in &delta.changes {
        if let Some(value) = value {
            env.push(entry(OsStr::new(name), value)?);
        }
    }
    env.push(entry(OsStr::new(extra.0), extra.1)?);
    Ok(env)
}

/// Replaces this process with `program`, named `argv0`, with exactly the
/// environment `env`; returns only on failure (on Windows: runs it, waits,
/// and exits with its code, see `os::exec_with_env`).
fn exec(program: &Path, argv0: &OsStr, args: &[OsString], env: &[Cow<'_, CStr>]) -> std::io::Error {
    crate::os::exec_with_env(program, argv0, args, env)
}

/// The first executable `command` on `path` that is not this binary.
fn find_not_self(command: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let me = crate::os::self_exe_id();
    crate::os::path_list::find_where(command, crate::os::path_list::dirs(path?), |p, m| {
        me.is_none() || crate::os::file_id(p, m) != me
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::lock::Silently;
    use crate::spec::VersionName;
    use crate::store::{Kind, Metadata};

    fn version(store: &Store, name: &str, tools: &[&str]) {
        let st = store.stage(&VersionName::parse(name).unwrap()).unwrap();
        let bin = st.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for t in tools {
            // An executable by this platform's rule (`nvcc.exe` on Windows).
            let p = bin.join(crate::os::shim_file_name(OsStr::new(t)));
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            crate::os::set_mode(&p, 0o755).unwrap();
        }
        std::fs::write(bin.join("README"), "not executable").unwrap();
        let mut meta = Metadata::new(Kind::Installed, "test");
        meta.bin_dirs = vec!["bin".into()];
        st.commit(&meta).unwrap();
    }

    /// Shims by their command names (`nvcc` for `nvcc.exe` on Windows).
    fn names(v: &[OsString]) -> Vec<&str> {
        v.iter().map(|s| command(s.to_str().unwrap())).collect()
    }

    fn command(file: &str) -> &str {
        crate::os::command_name(Path::new(file))
            .and_then(OsStr::to_str)
            .unwrap()
    }

    /// The shim file of a command.
    fn shim(store: &Store, name: &str) -> PathBuf {
        store
            .shims_dir()
            .join(crate::os::shim_file_name(OsStr::new(name)))
    }

    #[test]
    fn rehash_adds_keeps_and_removes() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().join("root"));
        let exe = tmp.path().join("cudaenv");
        std::fs::write(&exe, "binary").unwrap();
        version(&store, "a", &["nvcc", "ptxas", "cudaenv-evil"]);
        version(&store, "b", &["nvcc", "ncu"]);

        let r = rehash_with(&store, &exe, &Silently).unwrap();
        assert_eq!(names(&r.shims), ["ncu", "nvcc", "ptxas"]);
        assert_eq!(names(&r.added), ["ncu", "nvcc", "ptxas"]);
        let gen1 = std::fs::read(store.shims_dir().join(GENERATION_FILE)).unwrap();

        // Nothing changed: nothing rewritten.
        let r = rehash_with(&store, &exe, &Silently).unwrap();
        assert!(r.added.is_empty() && r.removed.is_empty(), "{r:?}");
        assert_ne!(
            gen1,
            std::fs::read(store.shims_dir().join(GENERATION_FILE)).unwrap()
        );

        store.remove(&VersionName::parse("b").unwrap()).unwrap();
        std::fs::write(shim(&store, "leftover"), "x").unwrap();
        let r = rehash_with(&store, &exe, &Silently).unwrap();
        assert_eq!(names(&r.removed).len(), 2);
        assert!(names(&r.removed).contains(&"ncu") && names(&r.removed).contains(&"leftover"));
        let mut left: Vec<_> = std::fs::read_dir(store.shims_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .map(|n| command(&n).to_string())
            .collect();
        left.sort();
        assert_eq!(left, ["nvcc", "ptxas"]);
        let id = |p: &Path| crate::os::file_id(p, &std::fs::metadata(p).unwrap());
        assert_eq!(id(&shim(&store, "nvcc")), id(&exe));
    }

    #[test]
    fn rehash_replaces_shims_of_an_old_binary() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().join("root"));
        let exe = tmp.path().join("cudaenv");
        std::fs::write(&exe, "old").unwrap();
        version(&store, "a", &["nvcc"]);
        rehash_with(&store, &exe, &Silently).unwrap();
        // An upgrade writes a new file at the same path (a new inode).
        std::fs::remove_file(&exe).unwrap();
        std::fs::write(&exe, "new").unwrap();
        let r = rehash_with(&store, &exe, &Silently).unwrap();
        assert_eq!(names(&r.added), ["nvcc"]);
        assert_eq!(std::fs::read(shim(&store, "nvcc")).unwrap(), b"new");
    }

    /// The linker script that keeps the shim's code together must fail the
    /// link when it goes stale (see build.rs): every pattern is followed by
    /// its own symbol and asserted to have gathered a function.
    #[test]
    fn shim_path_script_asserts_every_pattern() {
        let script = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/activation/shims/shim-path.ld"
        ))
        .unwrap();
        let patterns = script
            .lines()
            .filter(|l| l.trim_start().starts_with("*("))
            .count();
        assert!(patterns > 50, "{patterns} patterns");
        let mut lines = script.lines().map(str::trim);
        assert!(lines.any(|l| l == "__cudaenv_shim_0 = .;"));
        for n in 1..=patterns {
            let body = lines.next().unwrap();
            assert!(body.starts_with("*(.text."), "pattern {n}: {body}");
            assert_eq!(
                lines.next(),
                Some(format!("__cudaenv_shim_{n} = .;").as_str())
            );
        }
        for n in 1..=patterns {
            let assert = format!("ASSERT(__cudaenv_shim_{n} > __cudaenv_shim_{}, ", n - 1);
            assert!(
                script
                    .lines()
                    .any(|l| l.starts_with(&assert) && l.contains("is stale")),
                "no {assert}"
            );
        }
    }

    #[test]
    fn parallel_rehashes_agree() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().join("root"));
        let exe = tmp.path().join("cudaenv");
        std::fs::write(&exe, "binary").unwrap();
        version(&store, "a", &["nvcc", "ptxas", "cuobjdump"]);
        std::thread::scope(|s| {
            for _ in 0..32 {
                s.spawn(|| rehash_with(&store, &exe, &Silently).unwrap());
            }
        });
        let r = rehash_with(&store, &exe, &Silently).unwrap();
        assert!(r.added.is_empty() && r.removed.is_empty(), "{r:?}");
        assert_eq!(names(&r.shims), ["cuobjdump", "nvcc", "ptxas"]);
    }
}
