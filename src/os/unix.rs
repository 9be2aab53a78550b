//! The Unix side of the platform layer (Linux first: a few calls are
//! Linux's own, `sync_file_range`, `renameat2`, `PR_SET_PDEATHSIG`).
//! `os/mod.rs` and its submodules re-export or wrap what is here; nothing
//! outside `os/` names this module.

use std::ffi::{CStr, CString, OsStr, OsString, c_char};
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

// --- text -------------------------------------------------------------------------

pub const PATH_SEPARATOR: u8 = b':';

/// Unix builds read CUDA_HOME / CUDA_PATH only.
pub const VERSIONED_CUDA_PATH: bool = false;

/// The dynamic loader has a search path of its own (LD_LIBRARY_PATH).
pub const DLLS_ON_PATH: bool = false;

/// glibc's loader writes what it loads where LD_DEBUG asks (`trace` reads it).
pub const LOADER_LOGS: bool = true;

/// Linux frees a file's bytes in place (`punch_hole`).
pub const PUNCHES_HOLES: bool = cfg!(target_os = "linux");

/// C++ libraries here (NVIDIA's, built with GCC) follow the Itanium C++ ABI:
/// a virtual destructor takes two vtable entries, overloads keep their
/// declaration order, `this` is the first argument.
pub const ITANIUM_CXX_ABI: bool = true;

/// Any bytes are a Unix file name or variable.
/// Windows' System32; Unix has none (its loader searches
/// `LD_LIBRARY_PATH` and the ldconfig cache instead).
pub fn system_dll_dir(_system_root: Option<&OsStr>) -> Option<PathBuf> {
    None
}

/// Where `nvidia-smi` is when PATH does not name it: WSL2's copy of the
/// Windows driver's, then the usual package location.
pub fn nvidia_smi_dirs(
    _system_root: Option<&OsStr>,
    _program_files: Option<&OsStr>,
) -> Vec<PathBuf> {
    vec![PathBuf::from("/usr/lib/wsl/lib"), PathBuf::from("/usr/bin")]
}

pub fn os_string_from_bytes(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

pub fn env_names_equal(a: &OsStr, b: &OsStr) -> bool {
    a == b
}

pub fn env_key(name: &OsStr) -> OsString {
    name.to_owned()
}

/// The name a program was started under, as a shim sees it.
pub fn command_name(argv0: &Path) -> Option<&OsStr> {
    argv0.file_name()
}

/// `name` as it is found in a `bin` directory.
/// A shim is named as the tool.
pub fn shim_file_name(tool: &OsStr) -> OsString {
    tool.to_owned()
}

pub fn executable_candidates(name: &OsStr) -> Vec<OsString> {
    vec![name.to_owned()]
}

// --- files ------------------------------------------------------------------------

pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    std::fs::canonicalize(path)
}

pub fn mode(meta: &Metadata) -> Option<u32> {
    Some(meta.permissions().mode())
}

pub fn owner(meta: &Metadata) -> Option<u32> {
    Some(meta.uid())
}

pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

pub fn is_executable(_path: &Path, meta: &Metadata) -> bool {
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

pub fn file_id(_path: &Path, meta: &Metadata) -> Option<(u64, u64)> {
    Some((meta.dev(), meta.ino()))
}

pub fn link_count(_path: &Path, meta: &Metadata) -> u64 {
    meta.nlink()
}

pub fn self_exe_id() -> Option<(u64, u64)> {
    let m = std::fs::metadata("/proc/self/exe").ok()?;
    Some((m.dev(), m.ino()))
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

pub fn access_readable(p: &Path) -> bool {
    access(p, libc::R_OK)
}

pub fn access_writable(p: &Path) -> bool {
    access(p, libc::W_OK)
}

fn access(p: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = c_path(p) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access(2) only reads it.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// Non-blocking (a FIFO cannot stall the open) and never the controlling
/// terminal.
pub fn open_untrusted(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// What a file is when it is not a regular one (`None` for a regular file).
pub fn not_regular(meta: &Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// Back to blocking reads after `open_untrusted`.
pub fn set_blocking(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor the caller owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// Read from `/proc/self/status`, which does not change it; where that is
/// missing, set and restored at once.
pub fn umask() -> u32 {
    if let Ok(status) = super::fs::read_bounded_text(Path::new("/proc/self/status"), 1 << 16)
        && let Some(m) = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
    {
        return m;
    }
    // SAFETY: umask(2) cannot fail; the old mask is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// Bytes free for this user on the file system holding `existing`.
pub fn free_space(existing: &Path) -> Option<u64> {
    let c = c_path(existing).ok()?;
    // SAFETY: a valid NUL-terminated path and a statvfs to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

pub fn create_new_nofollow(path: &Path, mode: u32, readable: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(readable)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

pub fn reserve(f: &File, size: u64) -> io::Result<bool> {
    let len = libc::off_t::try_from(size).map_err(|_| io::ErrorKind::FileTooLarge)?;
    // SAFETY: a valid descriptor owned by `f`; no memory is passed.
    match unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len) } {
        0 => Ok(true),
        _ => {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => Ok(false),
                _ => Err(e),
            }
        }
    }
}

pub fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    f.read_at(buf, at)
}

pub fn read_exact_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    f.read_exact_at(buf, at)
}

pub fn write_all_at(f: &File, buf: &[u8], at: u64) -> io::Result<()> {
    f.write_all_at(buf, at)
}

pub fn cache_hint(file: &File, start: u64, end: u64, drop: bool) {
    let (Ok(at), Ok(len)) = (
        libc::off64_t::try_from(start),
        libc::off64_t::try_from(end.saturating_sub(start)),
    ) else {
        return;
    };
    let fd = file.as_raw_fd();
    let wait = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    let flags = libc::SYNC_FILE_RANGE_WRITE | if drop { wait } else { 0 };
    // SAFETY: a valid descriptor; no memory is passed.
    unsafe {
        libc::sync_file_range(fd, at, len, flags);
        if drop {
            libc::posix_fadvise(fd, at, len, libc::POSIX_FADV_DONTNEED);
        }
    }
}

/// Frees bytes `start..end` of `file` (they read as zeros after), with
/// their page-cache pages and disk blocks, without writing them anywhere;
/// false where the file system or the kernel cannot (nothing changed then).
pub fn punch_hole(file: &File, start: u64, end: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        let (Ok(at), Ok(len)) = (
            libc::off64_t::try_from(start),
            libc::off64_t::try_from(end.saturating_sub(start)),
        ) else {
            return false;
        };
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: a valid descriptor; no memory is passed.
        unsafe { libc::fallocate64(file.as_raw_fd(), mode, at, len) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, start, end);
        false
    }
}

pub fn advise_written_whole(map: &memmap2::MmapMut) {
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::PopulateWrite);
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// A running program's file can be removed on Unix like any other.
pub fn remove_file_in_use(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)
}

pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (f, t) = (c_path(from)?, c_path(to)?);
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them like rename(2).
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) => {
            if to.symlink_metadata().is_ok() {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            std::fs::rename(from, to)
        }
        _ => Err(err),
    }
}

// --- the loader -------------------------------------------------------------------

/// `dladdr` on one of the library's symbols.
pub fn loaded_path(lib: &libloading::Library, symbol: &str) -> Option<PathBuf> {
    let name = CString::new(symbol).ok()?;
    // SAFETY: we only take the symbol's address, never call it.
    let sym = unsafe { lib.get::<*const std::ffi::c_void>(name.as_bytes_with_nul()) }.ok()?;
    let addr = *sym;
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads loader state; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname points at a NUL-terminated string owned by the loader.
    let fname = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(OsStr::from_bytes(fname.to_bytes())))
}

// --- the environment --------------------------------------------------------------

unsafe extern "C" {
    static environ: *const *const c_char;
}

/// The process's environment as the C library holds it: the array handed
/// to `execve` to pass it on unchanged.
pub fn process_environ_ptr() -> *const *const c_char {
    // SAFETY: reading the pointer itself; see `process_environ`.
    unsafe { environ }
}

/// The strings of the process's environment, without copying them.
pub fn process_environ() -> impl Iterator<Item = super::EnvText> {
    process_environ_c().map(super::EnvText::Process)
}

/// The same, as C strings.
pub fn process_environ_c() -> impl Iterator<Item = &'static CStr> {
    let mut p = process_environ_ptr();
    std::iter::from_fn(move || {
        // SAFETY: `environ` is a NULL-terminated array of NUL-terminated
        // strings. cudaenv reads it at start-up, before it starts any thread,
        // and never changes its environment; Rust's `set_var` requires that no
        // other thread reads the environment while it runs, which covers this
        // read as well. The C library never frees the original strings.
        unsafe {
            if p.is_null() || (*p).is_null() {
                return None;
            }
            let text = CStr::from_ptr(*p);
            p = p.add(1);
            Some(text)
        }
    })
}

// --- processes --------------------------------------------------------------------

/// A child in a process group of its own, which dies with the thread that
/// started it (`PR_SET_PDEATHSIG`).
pub struct Group {
    pid: u32,
}

pub fn spawn_in_group(cmd: &mut Command) -> io::Result<(Child, Group)> {
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = child.id();
    Ok((child, Group { pid }))
}

/// Waits for a child's exit without reaping it (`waitid(WNOWAIT)`): the
/// child stays a zombie, its pid and so its group id taken, until
/// `Child::wait`.
pub struct ExitWaiter {
    pid: u32,
}

impl ExitWaiter {
    pub fn of(child: &Child) -> io::Result<ExitWaiter> {
        Ok(ExitWaiter { pid: child.id() })
    }

    /// Blocks until the child has exited; false if it cannot be waited for.
    pub fn wait(self) -> bool {
        loop {
            // SAFETY: `info` is a valid out-pointer; WNOWAIT leaves the child
            // to be reaped by `Child::wait`.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let rc = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if rc == 0 {
                return true;
            }
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return false;
            }
        }
    }
}

impl Group {
    /// SIGKILL to the group; a group with nobody left answers ESRCH.
    pub fn kill(&self) {
        // SAFETY: plain syscall; a negative pid addresses that group only.
        unsafe { libc::kill(-(self.pid as libc::pid_t), libc::SIGKILL) };
    }
}

/// CPU time (user + system) a process has used so far, from `/proc`.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state …`: comm may hold spaces, so count after the last `)`.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: plain query.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}

pub fn set_arg0(cmd: &mut Command, arg0: &OsStr) {
    cmd.arg0(arg0);
}

/// `execvp` of `cmd`: returns only on failure.
pub fn exec_command(mut cmd: Command) -> io::Error {
    cmd.exec()
}

pub fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

pub fn kill_self() {
    // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

/// Replaces this process with `program`, named `argv0`, with exactly the
/// environment `env`; returns only on failure. A plain `execve`: unlike
/// `std::process::Command`, it leaves the signal mask and dispositions as
/// the shim got them, as running the program directly would.
pub fn exec_with_env(
    program: &Path,
    argv0: &OsStr,
    args: &[OsString],
    env: &[std::borrow::Cow<'_, CStr>],
) -> io::Error {
    let c = |s: &OsStr| CString::new(s.as_bytes()).map_err(|_| super::nul_error());
    let strings = || -> io::Result<(CString, Vec<CString>)> {
        let path = c(program.as_os_str())?;
        let argv = std::iter::once(argv0)
            .chain(args.iter().map(OsString::as_os_str))
            .map(c)
            .collect::<io::Result<_>>()?;
        Ok((path, argv))
    };
    let (path, argv) = match strings() {
        Ok(s) => s,
        Err(e) => return e,
    };
    fn pointers<S: AsRef<CStr>>(v: &[S]) -> Vec<*const c_char> {
        v.iter()
            .map(|s| s.as_ref().as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    }
    let (argv, envp) = (pointers(&argv), pointers(env));
    // SAFETY: NUL-terminated strings and NULL-terminated arrays of them, all
    // alive across the call; execve only returns on failure.
    unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    io::Error::last_os_error()
}

/// The child `run_foreground` waits for (0: none yet), and a forwardable
/// signal that arrived before it existed.
static FOREGROUND: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static EARLY_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Signals passed on to the foreground child (a `kill` aimed at this
/// process, a closed terminal); Ctrl-C and Ctrl-\ reach it from the
/// terminal directly, as it is in this process's group.
const FORWARDED: [libc::c_int; 2] = [libc::SIGTERM, libc::SIGHUP];
/// Signals this process ignores while the child runs (as shells and `time`
/// do), so that it outlives the child and reports on it.
const IGNORED_WHILE_WAITING: [libc::c_int; 2] = [libc::SIGINT, libc::SIGQUIT];

extern "C" fn forward(sig: libc::c_int) {
    use std::sync::atomic::Ordering;
    let pid = FOREGROUND.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    } else {
        EARLY_SIGNAL.store(sig, Ordering::SeqCst);
    }
}

/// Runs `cmd` as the foreground job of this process and returns how it
/// ended. The child starts with the default disposition of every signal
/// this process handles (an ignored SIGINT would otherwise be inherited,
/// and Ctrl-C would not stop it); while it runs this process ignores
/// SIGINT and SIGQUIT and passes SIGTERM and SIGHUP on to it, so that the
/// caller always gets to clean up and report. The dispositions are
/// restored before returning. One foreground child at a time.
pub fn run_foreground(mut cmd: Command) -> io::Result<ExitStatus> {
    use std::sync::atomic::Ordering;
    // SAFETY: a handler that only calls kill(2) and stores an atomic.
    let saved: Vec<(libc::c_int, libc::sighandler_t)> = unsafe {
        FORWARDED
            .iter()
            .map(|&s| {
                (
                    s,
                    libc::signal(s, forward as *const () as libc::sighandler_t),
                )
            })
            .chain(
                IGNORED_WHILE_WAITING
                    .iter()
                    .map(|&s| (s, libc::signal(s, libc::SIG_IGN))),
            )
            .collect()
    };
    let restore = || {
        FOREGROUND.store(0, Ordering::SeqCst);
        for (s, h) in &saved {
            // SAFETY: puts back the dispositions saved above.
            unsafe { libc::signal(*s, *h) };
        }
    };
    // SAFETY: between fork and exec only async-signal-safe calls (signal).
    unsafe {
        cmd.pre_exec(|| {
            for s in FORWARDED.iter().chain(&IGNORED_WHILE_WAITING) {
                libc::signal(*s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            restore();
            return Err(e);
        }
    };
    FOREGROUND.store(child.id() as i32, Ordering::SeqCst);
    let early = EARLY_SIGNAL.swap(0, Ordering::SeqCst);
    if early != 0 {
        // SAFETY: signalling the child just started.
        unsafe { libc::kill(child.id() as i32, early) };
    }
    let status = child.wait();
    restore();
    status
}
