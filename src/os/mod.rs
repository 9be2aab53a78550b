//! The platform layer: every operation on the operating system that several
//! capabilities need, kept in one place so each exists once (as uv keeps them
//! in `uv-fs`) and so this is the only folder that knows which OS it runs on:
//!
//! - `process`: running a child with a deadline that nothing can outlast;
//! - `path_list`: `:`-separated lists (`PATH`, `LD_LIBRARY_PATH`) and
//!   looking programs up in them;
//! - `lock`: the exclusive lock file, which says when it waits;
//! - `dylib`: libraries opened at run time (the driver binding,
//!   `machine::libcuda`, is built on it);
//! - `hash`: sha256 of bytes, readers and files;
//! - `platform`: the operating system and CPU pair CUDA is built for;
//! - `fs`: reading files that come from elsewhere (bounded, regular files
//!   only), writing under a given directory without following links out
//!   of it, the umask, free space;
//! - here: atomic small-file writes, the executable-file check, symlinks,
//!   file identity, positioned reads and writes, names as bytes, the
//!   environment, replacing the process with a program (`exec`), signals.
//!
//! What differs between operating systems is in `unix.rs` and `windows.rs`,
//! one of which is compiled in; this is the only place in the crate that
//! chooses between them (`cfg`), and capability code calls the functions
//! here, never those files. docs/windows.md says what each difference means
//! for a user.
//!
//! Nothing here knows the terminal or the store: callers pass in how to
//! tell the user something (`lock::Waiting`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub(crate) mod dylib;
pub(crate) mod fs;
pub(crate) mod hash;
pub(crate) mod lock;
pub(crate) mod path_list;
pub(crate) mod platform;
pub(crate) mod process;

use std::ffi::{CStr, OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::Write;
use std::path::Path;

/// Whether the loader finds shared libraries on PATH (Windows) rather than
/// on a search path of its own.
pub use imp::DLLS_ON_PATH;
/// Whether the platform's C++ libraries use the Itanium C++ ABI (the
/// vtable layout `verify` calls TensorRT through).
pub use imp::ITANIUM_CXX_ABI;
/// Whether the dynamic loader can log what it loads (`trace`).
pub use imp::LOADER_LOGS;
/// Whether `punch_hole` can free bytes in place (Linux).
pub use imp::PUNCHES_HOLES;
/// Whether activation sets `CUDA_PATH_V<major>_<minor>` (Windows).
pub use imp::VERSIONED_CUDA_PATH;
pub use imp::{
    access_readable, access_writable, cache_hint, command_name, exec_command, exec_with_env,
    exit_signal, ignore_sigpipe, kill_self, nvidia_smi_dirs, os_string_from_bytes, punch_hole,
    rename_noreplace, reserve, self_exe_id, set_arg0, shim_file_name, signal_name, system_dll_dir,
};
/// What the `shim-probe` build's stage exec hands on.
#[cfg(all(unix, feature = "shim-probe"))]
pub use unix::{process_environ_c, process_environ_ptr};

use crate::error::{Error, Result};

/// How `remove_file_in_use` names a file it had to move aside (Windows);
/// `sweep_removed` deletes them.
pub const REMOVED_PREFIX: &str = ".cudaenv-trash-";

/// Removes `path`, also where it is a name of a running program (a shim,
/// on Windows: see `windows.rs`).
pub fn remove_file_in_use(path: &Path) -> std::io::Result<()> {
    imp::remove_file_in_use(path)
}

/// Deletes what `remove_file_in_use` moved aside in `dir` and nothing runs
/// any more; what is still running stays for a later sweep.
pub fn sweep_removed(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(REMOVED_PREFIX))
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// How `write_atomically` names its temporary files (a process killed
/// mid-write leaves one behind; cleaners recognise it by this).
pub const TEMP_PREFIX: &str = ".cudaenv-tmp.";

/// Writes `bytes` to `path` so that a reader sees the old file or the new one,
/// never half of one: a temporary file in the same directory (created if
/// needed), renamed over `path`. `mode` sets the new file's permissions
/// before it becomes visible; `None` gives what a plain new file gets under
/// the umask (the temporary file itself is created 0600), so project files
/// (`.cuda-version`, `cuda.lock`) are as readable as the user's others.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(Error::io("cannot create", dir))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(Error::io("cannot create a temporary file in", dir))?;
    tmp.write_all(bytes)
        .map_err(Error::io("cannot write", tmp.path().to_path_buf()))?;
    {
        let mode = mode.unwrap_or_else(fs::new_file_mode);
        imp::set_file_mode(tmp.as_file(), mode).map_err(Error::io(
            "cannot set the mode of",
            tmp.path().to_path_buf(),
        ))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::io("cannot write", path)(e.error))?;
    Ok(())
}

/// The metadata of `p` (symlinks followed) if it is a regular file that
/// can be run: with an execute bit on Unix (what `execvp` would run), with
/// an extension of PATHEXT's (`.exe`, `.com`, `.bat`, `.cmd`) on Windows.
pub fn executable_file(p: &Path) -> Option<std::fs::Metadata> {
    std::fs::metadata(p)
        .ok()
        .filter(|m| imp::is_executable(p, m))
}

/// The first of `dir/name`'s forms that is an executable file: `name` on
/// Unix; `name.exe`, `.com`, `.bat`, `.cmd` on Windows (or `name`, if it
/// has one of those extensions).
pub fn executable_in(dir: &Path, name: &OsStr) -> Option<std::path::PathBuf> {
    imp::executable_candidates(name)
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| is_executable_file(p))
}

/// A file's identity, (device, inode) or (volume, file index): equal for
/// two names of one file (hard links, or one path reached two ways).
/// `meta` is `path`'s metadata (followed or not, as the caller needs).
pub type FileId = (u64, u64);

pub fn file_id(path: &Path, meta: &Metadata) -> Option<FileId> {
    imp::file_id(path, meta)
}

/// How many names (hard links) the file has.
pub fn link_count(path: &Path, meta: &Metadata) -> u64 {
    imp::link_count(path, meta)
}

/// The mode bits, where the OS has them (not on Windows).
pub fn mode(meta: &Metadata) -> Option<u32> {
    imp::mode(meta)
}

/// The permission bits alone (`0o7777` of the mode), where the OS has them.
pub fn permission_bits(meta: &Metadata) -> Option<u32> {
    imp::mode(meta).map(|m| m & 0o7777)
}

/// The owner's user id, where the OS has one (not on Windows).
pub fn owner(meta: &Metadata) -> Option<u32> {
    imp::owner(meta)
}

/// Sets the mode bits (on Windows: the read-only attribute from the
/// owner's write bit).
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::set_mode(path, mode)
}

/// `std::fs::canonicalize`, without Windows' `\\?\` prefix on a drive path
/// (`C:\\…`), which PATH entries and messages should not carry.
pub fn canonicalize(path: &Path) -> std::io::Result<std::path::PathBuf> {
    imp::canonicalize(path)
}

/// Opens a file that arrived from elsewhere (a pin in a cloned
/// repository) for reading: never blocking on a FIFO, never becoming a
/// controlling terminal.
pub fn open_untrusted(path: &Path) -> std::io::Result<File> {
    imp::open_untrusted(path)
}

/// Creates a new file (never following or replacing anything) with `mode`;
/// `readable` too when it is to be mapped.
pub fn create_new_nofollow(path: &Path, mode: u32, readable: bool) -> std::io::Result<File> {
    imp::create_new_nofollow(path, mode, readable)
}

/// The size of the writes that fill new files (downloads, and the pages of
/// files unpacked through a mapping). Downloads go in these blocks, not as
/// the network hands the bytes over: writes that start mid-page into a new
/// part of a file make the kernel zero the rest of the page first (~0.2 s
/// of CPU per GB, measured). On memory not touched recently, the
/// page cache takes 64 KiB writes into a new file much faster than larger
/// ones, which make the kernel allocate large folios from memory it has to
/// fault in afresh (Linux 6.18 in a virtual machine: writing 1 GB took
/// 0.17-0.21 s in 64 KiB writes, 0.36-0.95 s in 1 MiB writes and 1.2-1.4 s
/// in 4 MiB writes); on warm memory 1 MiB writes save ~0.1 s per GB at most
/// (docs/PERFORMANCE.md, the page-cache benchmark). A multiple of every page
/// size in use, so that writes which start on a block start on a page.
pub const WRITE_BLOCK: usize = 64 << 10;

/// Positioned I/O on a file shared between threads: no call depends on
/// the file's current position.
pub fn read_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    imp::read_at(f, buf, at)
}

pub fn read_exact_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    imp::read_exact_at(f, buf, at)
}

pub fn write_all_at(f: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    imp::write_all_at(f, buf, at)
}

/// A mapping about to be written whole: its pages faulted in with one call
/// where the kernel can (Linux 5.14+).
pub fn advise_written_whole(map: &memmap2::MmapMut) {
    imp::advise_written_whole(map)
}

/// A name's bytes: any bytes on Unix, WTF-8 (UTF-8 for every valid name)
/// on Windows: what portable code that looks for ASCII in a name, or
/// writes it out, reads. Bytes become a name again through
/// `os_string_from_bytes`.
pub trait OsStrBytes {
    fn as_bytes(&self) -> &[u8];
}

impl OsStrBytes for OsStr {
    fn as_bytes(&self) -> &[u8] {
        self.as_encoded_bytes()
    }
}

impl OsStrBytes for OsString {
    fn as_bytes(&self) -> &[u8] {
        self.as_encoded_bytes()
    }
}

/// Two environment variable names are the same variable: exactly equal
/// on Unix, equal but for ASCII case on Windows (`Path` is `PATH`).
pub fn env_names_equal(a: &OsStr, b: &OsStr) -> bool {
    imp::env_names_equal(a, b)
}

/// The key a map of variables keeps `name` under, so that one variable is
/// one key: `name` itself on Unix, upper-cased on Windows.
pub fn env_key(name: &OsStr) -> OsString {
    imp::env_key(name)
}

/// One `NAME=value` entry of the environment: one of the strings the
/// process was started with, borrowed (Unix keeps them for the whole run),
/// or bytes of its own.
#[derive(Debug, Clone)]
pub enum EnvText {
    #[cfg_attr(
        windows,
        allow(
            dead_code,
            reason = "Windows keeps its environment as UTF-16: every entry is owned"
        )
    )]
    Process(&'static CStr),
    Owned(Box<[u8]>),
}

/// The process's environment, in order.
pub fn process_environ() -> impl Iterator<Item = EnvText> {
    imp::process_environ()
}

/// The `IoError` of a string that holds a NUL byte.
pub fn nul_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "an argument or variable contains a NUL byte",
    )
}

/// Creates the symbolic link `link` naming `target` (as given: a relative
/// target is relative to the link's directory). Every link cudaenv makes
/// goes through here and the `symlink` crate, whose file/directory
/// distinction is what Windows needs: the kind is that of what `target`
/// names now, a file when it names nothing (yet).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let resolved = link.parent().unwrap_or(Path::new(".")).join(target);
    if resolved.is_dir() {
        ::symlink::symlink_dir(target, link)
    } else {
        ::symlink::symlink_file(target, link)
    }
}

/// Is `p` a regular file (symlinks followed) with an execute bit?
pub fn is_executable_file(p: &Path) -> bool {
    executable_file(p).is_some()
}

/// What tests need to build that differs by OS.
#[cfg(test)]
pub mod testing {
    use std::ffi::OsString;

    /// `before`, a character that is no valid Unicode (the byte 0xFF on
    /// Unix, an unpaired surrogate on Windows), then `after`.
    pub fn non_utf8(before: &str, after: &str) -> OsString {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let mut b = before.as_bytes().to_vec();
            b.push(0xff);
            b.extend_from_slice(after.as_bytes());
            OsString::from_vec(b)
        }
        #[cfg(windows)]
        {
            use std::os::windows::ffi::OsStringExt;
            let mut w: Vec<u16> = before.encode_utf16().collect();
            w.push(0xd800);
            w.extend(after.encode_utf16());
            OsString::from_wide(&w)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_name_their_target_as_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lib64")).unwrap();
        std::fs::write(dir.path().join("lib64/a.so.1"), "x").unwrap();
        symlink(Path::new("lib64"), &dir.path().join("lib")).unwrap();
        symlink(Path::new("a.so.1"), &dir.path().join("lib64/a.so")).unwrap();
        symlink(Path::new("missing"), &dir.path().join("dangling")).unwrap();
        assert_eq!(
            std::fs::read_link(dir.path().join("lib")).unwrap(),
            Path::new("lib64")
        );
        assert_eq!(std::fs::read(dir.path().join("lib/a.so")).unwrap(), b"x");
        assert!(dir.path().join("dangling").is_symlink());
        assert!(symlink(Path::new("x"), &dir.path().join("lib")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn replaces_the_file_whole_with_the_mode_asked_for() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/f");
        write_atomically(&p, b"one", None).unwrap();
        write_atomically(&p, b"two", Some(0o644)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        // No temporary file is left behind.
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_executable_file_is_a_regular_file_with_an_execute_bit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tool");
        std::fs::write(&f, "").unwrap();
        assert!(!is_executable_file(&f));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(is_executable_file(&f));
        symlink(Path::new("tool"), &dir.path().join("link")).unwrap();
        assert!(is_executable_file(&dir.path().join("link")));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_executable_file(dir.path()));
        assert!(!is_executable_file(&dir.path().join("missing")));
    }

    #[cfg(windows)]
    #[test]
    fn an_executable_file_is_a_regular_file_with_a_pathext_extension() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["tool", "tool.EXE", "run.cmd", "lib.dll"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert!(!is_executable_file(&dir.path().join("tool")));
        assert!(is_executable_file(&dir.path().join("tool.EXE")));
        assert!(is_executable_file(&dir.path().join("run.cmd")));
        assert!(!is_executable_file(&dir.path().join("lib.dll")));
        assert_eq!(
            executable_in(dir.path(), OsStr::new("tool")),
            Some(dir.path().join("tool.exe"))
        );
        assert_eq!(
            command_name(Path::new(r"C:\x\shims\nvcc.exe")),
            Some(OsStr::new("nvcc"))
        );
        assert!(env_names_equal(OsStr::new("Path"), OsStr::new("PATH")));
    }

    /// Where doctor looks for the driver's files: System32 and NVSMI on
    /// Windows (from `SystemRoot` and `ProgramFiles`), WSL2's and the package
    /// directory elsewhere.
    #[test]
    fn where_the_drivers_files_are() {
        let root = OsStr::new(r"D:\Win");
        match system_dll_dir(Some(root)) {
            Some(system) => {
                assert_eq!(system, Path::new(r"D:\Win\System32"));
                assert_eq!(
                    system_dll_dir(None).unwrap(),
                    Path::new(r"C:\Windows\System32")
                );
                assert_eq!(
                    nvidia_smi_dirs(Some(root), Some(OsStr::new(r"E:\PF"))),
                    [
                        system,
                        Path::new(r"E:\PF\NVIDIA Corporation\NVSMI").to_path_buf()
                    ]
                );
            }
            None => assert_eq!(
                nvidia_smi_dirs(Some(root), None),
                [Path::new("/usr/lib/wsl/lib"), Path::new("/usr/bin")]
            ),
        }
    }

    #[test]
    fn two_names_of_one_file_have_one_identity() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, "x").unwrap();
        std::fs::write(&c, "x").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        let id = |p: &Path| file_id(p, &std::fs::metadata(p).unwrap()).unwrap();
        assert_eq!(id(&a), id(&b));
        assert_ne!(id(&a), id(&c));
        assert_eq!(link_count(&a, &std::fs::metadata(&a).unwrap()), 2);
        assert_eq!(link_count(&c, &std::fs::metadata(&c).unwrap()), 1);
    }
}
