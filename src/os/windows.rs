//! The Windows side of the platform layer. What Unix does with a process
//! group, `PR_SET_PDEATHSIG` and `execve`, Windows does with a job object:
//! a child is assigned to a job that kills everything in it when its last
//! handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`), so a child dies with
//! the process that started it, and "kill the group" is `TerminateJobObject`.
//! There is no `exec`: a shim spawns the tool, waits, and exits with its
//! exit code (as uv's trampolines do), ignoring Ctrl-C itself while the tool,
//! which shares the console, gets it and decides.
//!
//! Text: `OsStr::as_encoded_bytes` is WTF-8 here, UTF-8 for every valid
//! name; bytes from elsewhere (files, archives) become names only when they
//! are UTF-8 (lossily otherwise). Variable names compare without case, as
//! Windows compares them (`Path` is `PATH`).

use std::ffi::{CStr, OsStr, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, HANDLE, HMODULE};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    GetDiskFreeSpaceExW, GetFileInformationByHandle, MOVEFILE_WRITE_THROUGH, MoveFileExW,
};
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::LibraryLoader::{
    GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
    GetModuleFileNameW, GetModuleHandleExW,
};
use windows_sys::Win32::System::Threading::{GetProcessTimes, INFINITE, WaitForSingleObject};

// --- text -------------------------------------------------------------------------

pub const PATH_SEPARATOR: u8 = b';';

/// Windows builds (Visual Studio's CUDA customisations) read
/// `CUDA_PATH_V<major>_<minor>` beside CUDA_PATH.
pub const VERSIONED_CUDA_PATH: bool = true;

/// System32 (`%SystemRoot%\System32`, `C:\Windows\System32` when
/// `SystemRoot` is unset): where the NVIDIA driver puts `nvcuda.dll` and
/// `nvidia-smi.exe`, and where Microsoft's Visual C++ runtime lives; Windows
/// searches it for a DLL before PATH.
pub fn system_dll_dir(system_root: Option<&OsStr>) -> Option<PathBuf> {
    let root = system_root
        .filter(|r| !r.is_empty())
        .unwrap_or(OsStr::new(r"C:\Windows"));
    Some(Path::new(root).join("System32"))
}

/// Where `nvidia-smi.exe` is when PATH does not name it: System32 (drivers
/// since the DCH packages, R418 on), then `%ProgramFiles%\NVIDIA
/// Corporation\NVSMI` (older drivers).
pub fn nvidia_smi_dirs(system_root: Option<&OsStr>, program_files: Option<&OsStr>) -> Vec<PathBuf> {
    let program_files = program_files
        .filter(|p| !p.is_empty())
        .unwrap_or(OsStr::new(r"C:\Program Files"));
    system_dll_dir(system_root)
        .into_iter()
        .chain([Path::new(program_files).join(r"NVIDIA Corporation\NVSMI")])
        .collect()
}

/// Windows finds DLLs on PATH: a stack's `bin` is all it needs, and no
/// loader variable (LD_LIBRARY_PATH) is set.
pub const DLLS_ON_PATH: bool = true;

/// Windows' loader keeps no log a program can ask for (only a debugger's
/// "loader snaps"), so `trace` has nothing to read.
pub const LOADER_LOGS: bool = false;

/// See `punch_hole`.
pub const PUNCHES_HOLES: bool = false;

/// C++ DLLs here (NVIDIA's, built with MSVC) follow MSVC's ABI, not the
/// Itanium one: one vtable entry per virtual destructor, overloads grouped,
/// class values returned through a hidden pointer.
pub const ITANIUM_CXX_ABI: bool = false;

pub fn os_string_from_bytes(bytes: Vec<u8>) -> OsString {
    match String::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned().into(),
    }
}

pub fn env_names_equal(a: &OsStr, b: &OsStr) -> bool {
    a.eq_ignore_ascii_case(b)
}

pub fn env_key(name: &OsStr) -> OsString {
    name.to_ascii_uppercase()
}

/// The extensions `CreateProcess` and cmd run, in PATHEXT's usual order.
const EXECUTABLE_EXTENSIONS: [&str; 4] = ["exe", "com", "bat", "cmd"];

fn has_executable_extension(p: &Path) -> bool {
    p.extension().is_some_and(|e| {
        EXECUTABLE_EXTENSIONS
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

/// `nvcc` for `C:\…\shims\nvcc.exe`: a shim's command is its name without
/// the extension it needs to be run.
pub fn command_name(argv0: &Path) -> Option<&OsStr> {
    if has_executable_extension(argv0) {
        argv0.file_stem()
    } else {
        argv0.file_name()
    }
}

/// A shim is a copy of cudaenv.exe, so it must be an `.exe` whatever the
/// tool is: `nvcc.exe` for `nvcc.exe`, `setup.exe` for `setup.bat` (the
/// shim runs the `.bat` by its command name, `setup`).
pub fn shim_file_name(tool: &OsStr) -> OsString {
    let stem = if has_executable_extension(Path::new(tool)) {
        Path::new(tool).file_stem().unwrap_or(tool)
    } else {
        tool
    };
    let mut name = stem.to_owned();
    name.push(".exe");
    name
}

/// `nvcc` is found as `nvcc.exe` (then `.com`, `.bat`, `.cmd`); a name with
/// one of those extensions is found as it is.
pub fn executable_candidates(name: &OsStr) -> Vec<OsString> {
    if has_executable_extension(Path::new(name)) {
        return vec![name.to_owned()];
    }
    EXECUTABLE_EXTENSIONS
        .iter()
        .map(|x| {
            let mut n = name.to_owned();
            n.push(".");
            n.push(x);
            n
        })
        .collect()
}

// --- files ------------------------------------------------------------------------

pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let p = std::fs::canonicalize(path)?;
    let s = p.as_os_str().as_encoded_bytes();
    // `\\?\C:\…` -> `C:\…`; a `\\?\UNC\…` path keeps its prefix.
    if s.len() > 6 && s.starts_with(br"\\?\") && s[5] == b':' && s[4].is_ascii_alphabetic() {
        // SAFETY: encoded bytes of an `OsStr`, split after ASCII.
        return Ok(PathBuf::from(unsafe {
            OsStr::from_encoded_bytes_unchecked(&s[4..])
        }));
    }
    Ok(p)
}

/// Windows has no mode bits: access is by ACL, which cudaenv leaves as the
/// directory gives it.
pub fn mode(_meta: &Metadata) -> Option<u32> {
    None
}

/// Owners are security identifiers, not user ids: none to compare.
pub fn owner(_meta: &Metadata) -> Option<u32> {
    None
}

/// Only "writable by the owner" has a meaning here (the read-only
/// attribute).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    let mut p = std::fs::metadata(path)?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(mode & 0o200 == 0);
    std::fs::set_permissions(path, p)
}

pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    let mut p = file.metadata()?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(mode & 0o200 == 0);
    file.set_permissions(p)
}

pub fn is_executable(path: &Path, meta: &Metadata) -> bool {
    meta.is_file() && has_executable_extension(path)
}

/// The file's handle information: (volume serial number, file index) and
/// its link count. Opening a directory needs backup semantics; a link is
/// looked at itself, as `symlink_metadata` does, when `meta` says it is one.
fn handle_info(path: &Path, meta: &Metadata) -> Option<BY_HANDLE_FILE_INFORMATION> {
    let mut flags = FILE_FLAG_BACKUP_SEMANTICS;
    if meta.file_type().is_symlink() {
        flags |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    let f = OpenOptions::new()
        .access_mode(0)
        .custom_flags(flags)
        .open(path)
        .ok()?;
    // SAFETY: a zeroed plain C struct, filled in by the call.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid open handle and a valid out-pointer.
    let ok = unsafe { GetFileInformationByHandle(f.as_raw_handle() as HANDLE, &mut info) };
    (ok != 0).then_some(info)
}

pub fn file_id(path: &Path, meta: &Metadata) -> Option<(u64, u64)> {
    let i = handle_info(path, meta)?;
    Some((
        u64::from(i.dwVolumeSerialNumber),
        (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow),
    ))
}

pub fn link_count(path: &Path, meta: &Metadata) -> u64 {
    handle_info(path, meta).map_or(1, |i| u64::from(i.nNumberOfLinks))
}

pub fn self_exe_id() -> Option<(u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let m = std::fs::metadata(&exe).ok()?;
    file_id(&exe, &m)
}

pub fn access_readable(p: &Path) -> bool {
    File::open(p).is_ok()
}

pub fn access_writable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.permissions().readonly())
}

/// Windows has no FIFOs in the file system to stall an open. A directory
/// opens too (`FILE_FLAG_BACKUP_SEMANTICS`; a plain open of one is "access
/// denied"), so the caller's type check names it as a directory.
pub fn open_untrusted(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

/// What a file is when it is not a regular one (`None` for a regular file).
pub fn not_regular(meta: &Metadata) -> Option<&'static str> {
    if meta.is_file() {
        None
    } else if meta.is_dir() {
        Some("a directory")
    } else {
        Some("not a regular file")
    }
}

/// Files are opened blocking on Windows already.
pub fn set_blocking(_file: &File) {}

/// Windows has no umask: new files get the directory's ACL.
pub fn umask() -> u32 {
    0
}

/// Bytes free for this user on the volume holding `existing`
/// (`GetDiskFreeSpaceExW`, which honours quotas).
pub fn free_space(existing: &Path) -> Option<u64> {
    let path = wide(existing);
    let mut free: u64 = 0;
    // SAFETY: a NUL-terminated wide path and an out-pointer; the other two
    // outputs may be NULL.
    let ok = unsafe {
        GetDiskFreeSpaceExW(
            path.as_ptr(),
            &mut free,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(free)
}

/// `create_new` never follows a link or replaces anything; the reparse
/// flag keeps it from following one that appears in between.
pub fn create_new_nofollow(path: &Path, _mode: u32, readable: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(readable)
        .write(true)
        .create_new(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// NTFS allocates on `set_len`; nothing to reserve apart from that.
pub fn reserve(_f: &File, _size: u64) -> io::Result<bool> {
    Ok(false)
}

/// `seek_read` moves the handle's position, which nothing here relies on:
/// every read and write of a shared file states its offset.
pub fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    f.seek_read(buf, at)
}

pub fn read_exact_at(f: &File, mut buf: &mut [u8], mut at: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match f.seek_read(buf, at) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub fn write_all_at(f: &File, mut buf: &[u8], mut at: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match f.seek_write(buf, at) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Page-cache hints are Linux's; Windows' cache manager decides alone.
pub fn cache_hint(_file: &File, _start: u64, _end: u64, _drop: bool) {}

/// Holes are Linux's here: on Windows the bytes stay until the file goes.
pub fn punch_hole(_file: &File, _start: u64, _end: u64) -> bool {
    false
}

pub fn advise_written_whole(_map: &memmap2::MmapMut) {}

fn wide(p: &Path) -> Vec<u16> {
    p.as_os_str()
        .encode_wide()
        .chain(std::iter::once(0))
        .collect()
}

/// Windows will not delete a name of a program that is running, and every
/// shim is a hard link of cudaenv.exe, which is running whenever shims are
/// updated. Such a file can still be renamed: it is moved aside under a
/// dot-name (`.cudaenv-trash-…`, which `sweep_removed` deletes later, once
/// nothing runs it) and so leaves its place at once.
pub fn remove_file_in_use(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let aside = path.with_file_name(format!(
                "{}{}-{nanos}-{name}",
                super::REMOVED_PREFIX,
                std::process::id()
            ));
            std::fs::rename(path, &aside)?;
            let _ = std::fs::remove_file(&aside);
            Ok(())
        }
        other => other,
    }
}

/// `MoveFileExW` without `MOVEFILE_REPLACE_EXISTING` fails when the target
/// exists, a directory included.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (f, t) = (wide(from), wide(to));
    // SAFETY: two valid NUL-terminated wide strings.
    if unsafe { MoveFileExW(f.as_ptr(), t.as_ptr(), MOVEFILE_WRITE_THROUGH) } != 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    // ERROR_ALREADY_EXISTS (183) / ERROR_FILE_EXISTS (80).
    if matches!(e.raw_os_error(), Some(80 | 183)) {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    Err(e)
}

// --- the loader -------------------------------------------------------------------

/// The module that holds one of the library's symbols, and its file.
pub fn loaded_path(lib: &libloading::Library, symbol: &str) -> Option<PathBuf> {
    let name = std::ffi::CString::new(symbol).ok()?;
    // SAFETY: we only take the symbol's address, never call it.
    let sym = unsafe { lib.get::<*const std::ffi::c_void>(name.as_bytes_with_nul()) }.ok()?;
    let addr = *sym;
    let mut module: HMODULE = std::ptr::null_mut();
    // SAFETY: an address inside a loaded module; the reference count is left
    // unchanged, and the module stays loaded while `lib` lives.
    let ok = unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
            addr.cast(),
            &mut module,
        )
    };
    if ok == 0 {
        return None;
    }
    let mut buf = vec![0u16; 32768];
    // SAFETY: a valid module handle and a buffer of the length given.
    let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n == 0 || n >= buf.len() {
        return None;
    }
    use std::os::windows::ffi::OsStringExt;
    Some(PathBuf::from(OsString::from_wide(&buf[..n])))
}

// --- the environment --------------------------------------------------------------

/// Windows keeps its environment as UTF-16: read through std, as `NAME=value`
/// texts of encoded bytes (what `context::Vars` holds).
pub fn process_environ() -> impl Iterator<Item = super::EnvText> {
    std::env::vars_os().map(|(n, v)| {
        let mut t = Vec::with_capacity(n.len() + v.len() + 1);
        t.extend_from_slice(n.as_encoded_bytes());
        t.push(b'=');
        t.extend_from_slice(v.as_encoded_bytes());
        super::EnvText::Owned(t.into())
    })
}

// --- processes --------------------------------------------------------------------

/// A job object that kills every process in it when its handle closes.
pub struct Group {
    job: HANDLE,
}

// SAFETY: a job handle may be used from any thread.
unsafe impl Send for Group {}
unsafe impl Sync for Group {}

impl Group {
    fn new() -> io::Result<Group> {
        // SAFETY: no attributes, no name: a new anonymous job.
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return Err(io::Error::last_os_error());
        }
        let group = Group { job };
        // SAFETY: a zeroed plain C struct with one flag set, passed with its size.
        let ok = unsafe {
            let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                group.job,
                JobObjectExtendedLimitInformation,
                (&raw const info).cast(),
                std::mem::size_of_val(&info) as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(group)
    }

    fn assign(&self, child: &Child) -> io::Result<()> {
        // SAFETY: two valid handles.
        if unsafe { AssignProcessToJobObject(self.job, child.as_raw_handle() as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Kills every process in the job.
    pub fn kill(&self) {
        // SAFETY: a valid job handle.
        unsafe { TerminateJobObject(self.job, 1) };
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: the handle `new` created; closing it kills what is left.
        unsafe { CloseHandle(self.job) };
    }
}

/// Spawns `cmd` and puts it in a job of its own. A child could start a
/// process of its own before it is assigned; nothing cudaenv runs does
/// that in its first instant, and the job still takes the child down.
pub fn spawn_in_group(cmd: &mut Command) -> io::Result<(Child, Group)> {
    let group = Group::new()?;
    let mut child = cmd.spawn()?;
    if let Err(e) = group.assign(&child) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, group))
}

/// Waits on a handle of its own to the child's process, so that it stays
/// valid whatever becomes of the `Child`.
pub struct ExitWaiter {
    process: OwnedHandle,
}

impl ExitWaiter {
    pub fn of(child: &Child) -> io::Result<ExitWaiter> {
        use std::os::windows::io::AsHandle;
        Ok(ExitWaiter {
            process: child.as_handle().try_clone_to_owned()?,
        })
    }

    pub fn wait(self) -> bool {
        // SAFETY: a valid process handle owned by `self`.
        unsafe { WaitForSingleObject(self.process.as_raw_handle() as HANDLE, INFINITE) == 0 }
    }
}

/// CPU time (user + kernel) of a process, from `GetProcessTimes`.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    // SAFETY: plain query; the handle is closed below.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if h.is_null() {
        return None;
    }
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: a valid handle and four valid out-pointers.
    let ok = unsafe { GetProcessTimes(h, &mut c, &mut e, &mut k, &mut u) };
    // SAFETY: the handle opened above.
    unsafe { CloseHandle(h) };
    let t = |f: FILETIME| (u64::from(f.dwHighDateTime) << 32) | u64::from(f.dwLowDateTime);
    // FILETIME counts 100 ns.
    (ok != 0).then(|| (t(k) + t(u)) as f64 / 1e7)
}

/// Windows processes end with a code, never a signal.
pub fn exit_signal(_status: &ExitStatus) -> Option<i32> {
    None
}

pub fn signal_name(_sig: i32) -> &'static str {
    "signal"
}

/// Windows passes no separate program name: the child sees the path it was
/// started from.
pub fn set_arg0(_cmd: &mut Command, _arg0: &OsStr) {}

/// Ctrl-C and Ctrl-Break reach every process of the console: this one
/// ignores them while the child runs, so the child decides what they mean
/// and this process reports how it ended.
fn ignore_console_interrupts(ignore: bool) {
    // SAFETY: a NULL routine with TRUE/FALSE sets or clears "ignore Ctrl-C".
    unsafe { SetConsoleCtrlHandler(None, i32::from(ignore)) };
}

/// Windows has no `exec`: starts `cmd` in a job (so it dies with this
/// process), waits, and exits with its exit code. Returns only when it
/// cannot be started.
pub fn exec_command(mut cmd: Command) -> io::Error {
    let (mut child, group) = match spawn_in_group(&mut cmd) {
        Ok(c) => c,
        Err(e) => return e,
    };
    ignore_console_interrupts(true);
    let status = child.wait();
    drop(group);
    match status {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => e,
    }
}

/// `exec_command` of `program` with `args` and exactly the environment
/// `env` (`NAME=value` texts, as `context::Var::to_c_str` gives them).
pub fn exec_with_env(
    program: &Path,
    _argv0: &OsStr,
    args: &[OsString],
    env: &[std::borrow::Cow<'_, CStr>],
) -> io::Error {
    let mut cmd = Command::new(program);
    cmd.args(args).env_clear();
    for entry in env {
        let b = entry.to_bytes();
        let Some(eq) = b.iter().skip(1).position(|&c| c == b'=').map(|i| i + 1) else {
            continue;
        };
        // SAFETY: every entry was made of `as_encoded_bytes` of names and
        // values joined by an ASCII `=` (context::Vars), so each side is
        // such bytes, split at an ASCII boundary.
        let (name, value) = unsafe {
            (
                OsStr::from_encoded_bytes_unchecked(&b[..eq]),
                OsStr::from_encoded_bytes_unchecked(&b[eq + 1..]),
            )
        };
        cmd.env(name, value);
    }
    exec_command(cmd)
}

/// Broken pipes are errors on Windows already.
pub fn ignore_sigpipe() {}

pub fn kill_self() {
    // Exit code 137, what a shell reports for SIGKILL.
    // SAFETY: ends this process at once, as SIGKILL would.
    unsafe {
        windows_sys::Win32::System::Threading::TerminateProcess(
            windows_sys::Win32::System::Threading::GetCurrentProcess(),
            137,
        )
    };
}

/// Runs `cmd` as the foreground job of this process and returns how it
/// ended: in a job object, so that it dies with this process, and with
/// Ctrl-C and Ctrl-Break ignored here while it runs (the child, attached to
/// the same console, gets them and decides), so the caller always gets to
/// clean up and report.
pub fn run_foreground(mut cmd: Command) -> io::Result<ExitStatus> {
    let (mut child, group) = spawn_in_group(&mut cmd)?;
    ignore_console_interrupts(true);
    let status = child.wait();
    ignore_console_interrupts(false);
    drop(group);
    status
}
