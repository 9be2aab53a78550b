//! Libraries opened at run time by soname (`dlopen` through `libloading`),
//! the way frameworks open the NVIDIA libraries, and tables of typed
//! function pointers bound from them (`api!`).
//!
//! Each table keeps its library loaded for as long as it lives. A missing
//! symbol is an error when the table is bound, never a null pointer later.
//! Nothing bound here is safe to call without a loaded, matching library,
//! so every call site is `unsafe` and checks the returned status.

use std::ffi::{CStr, c_char};
use std::path::PathBuf;

use libloading::Library;

/// A library opened by soname, with the file the loader resolved it to.
pub struct Loaded {
    pub lib: Library,
    pub soname: String,
    /// The path the loader used, as `dladdr` reports it (may be a symlink).
    pub path: Option<PathBuf>,
}

/// Opens the first soname that loads; the errors of every attempt otherwise.
pub fn open_first(sonames: &[String], probe_symbol: &str) -> Result<Loaded, Vec<String>> {
    let mut errors = Vec::new();
    for soname in sonames {
        // SAFETY: loading a library runs its initialisers; these are NVIDIA's
        // own libraries, loaded exactly as a framework would load them.
        match unsafe { Library::new(soname) } {
            Ok(lib) => {
                let path = loaded_path(&lib, probe_symbol);
                return Ok(Loaded {
                    lib,
                    soname: soname.clone(),
                    path,
                });
            }
            Err(e) => errors.push(describe(soname, &e)),
        }
    }
    Err(errors)
}

/// One failed load, naming the file: the Linux loader's message does
/// (`libx.so.1: cannot open shared object file: …`); Windows' is only
/// `LoadLibraryExW failed`, with the reason as its source.
fn describe(name: &str, e: &libloading::Error) -> String {
    let mut text = e.to_string();
    if let Some(source) = std::error::Error::source(e) {
        let source = source.to_string();
        if !text.contains(&source) {
            text = format!("{text}: {source}");
        }
    }
    if text.contains(name) {
        text
    } else {
        format!("{name}: {text}")
    }
}

/// The file a library was loaded from: `dladdr` on one of its symbols
/// (on Windows, the module holding that symbol).
fn loaded_path(lib: &Library, symbol: &str) -> Option<PathBuf> {
    super::imp::loaded_path(lib, symbol)
}

/// Copies a C string out, tolerating NULL.
///
/// # Safety
/// `p` is NULL or points at a NUL-terminated string (the libraries return
/// static ones).
pub unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Declares a table of function pointers and a loader that fills it.
macro_rules! api {
    ($(#[$doc:meta])* $name:ident { $( $f:ident : fn( $($a:ty),* ) -> $r:ty ; )* }) => {
        $(#[$doc])*
        #[allow(
            dead_code,
            reason = "a table binds every symbol it declares, some called by the tests only; `loaded` keeps the library mapped while its pointers live"
        )]
        pub struct $name {
            $( pub $f: unsafe extern "C" fn($($a),*) -> $r, )*
            pub loaded: $crate::os::dylib::Loaded,
        }

        impl $name {
            pub fn bind(loaded: $crate::os::dylib::Loaded) -> Result<Self, String> {
                // SAFETY: the signatures below are those of the C headers;
                // a missing symbol is an error, never a null pointer.
                unsafe {
                    $(
                        let $f = *loaded
                            .lib
                            .get::<unsafe extern "C" fn($($a),*) -> $r>(concat!(stringify!($f), "\0").as_bytes())
                            .map_err(|e| format!("{}: {e}", loaded.soname))?;
                    )*
                    Ok($name { $( $f, )* loaded })
                }
            }
        }
    };
}
pub(crate) use api;

/// The `DT_SONAME` of the ELF shared object at `path`: the name it was
/// linked as, which survives renamed copies of it (`None`: not a regular
/// ELF file, or one without a soname). The file is mapped, not read: only
/// its headers and dynamic section are touched.
pub fn soname(path: &std::path::Path) -> Option<String> {
    let (file, size) = crate::os::fs::open_regular(path).ok()?;
    if size < 64 {
        return None;
    }
    // SAFETY: a read-only private mapping; a file truncated meanwhile makes
    // reads past its end fault, which `goblin` cannot cause here because
    // it reads only within the headers it has checked against `size`.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    if !map.starts_with(b"\x7fELF") {
        return None;
    }
    let elf = goblin::elf::Elf::parse(&map).ok()?;
    elf.soname.map(str::to_string)
}

#[cfg(test)]
// kernel32's exports are CamelCase, and a table's fields are named as the exports.
#[cfg_attr(windows, allow(non_snake_case))]
mod tests {
    use super::*;

    /// A library every machine has, its name as the loader reports it, and a
    /// function in it that returns this process's id.
    #[cfg(unix)]
    const SYSTEM: (&str, &str, &str) = ("libc.so.6", "libc.so", "getpid");
    #[cfg(windows)]
    const SYSTEM: (&str, &str, &str) = ("kernel32.dll", "kernel32", "GetCurrentProcessId");

    #[cfg(unix)]
    api! {
        /// The process id, bound from the system library.
        System {
            getpid: fn() -> std::ffi::c_int;
        }
    }
    #[cfg(windows)]
    api! {
        /// The process id, bound from the system library.
        System {
            GetCurrentProcessId: fn() -> std::ffi::c_int;
        }
    }

    #[test]
    fn opens_the_first_soname_that_loads_and_says_where_it_is() {
        let (name, file, symbol) = SYSTEM;
        let l = open_first(&["libnot-there.so.7".into(), name.into()], symbol).unwrap();
        assert_eq!(l.soname, name);
        let path = l.path.clone().unwrap();
        assert!(
            path.to_string_lossy().to_ascii_lowercase().contains(file),
            "{path:?}"
        );
        let lib = System::bind(l).unwrap();
        assert_eq!(lib.loaded.soname, name);
        #[cfg(unix)]
        let pid = lib.getpid;
        #[cfg(windows)]
        let pid = lib.GetCurrentProcessId;
        // SAFETY: the system's own process-id function, with its C signature.
        unsafe {
            assert_eq!(pid() as u32, std::process::id());
        }
    }

    #[test]
    fn every_failed_attempt_is_reported() {
        let e = open_first(
            &["libnot-there.so.7".into(), "libnor-this.so.1".into()],
            "x",
        )
        .err()
        .unwrap();
        assert_eq!(e.len(), 2);
        assert!(e[0].contains("libnot-there.so.7"), "{e:?}");
    }

    #[test]
    fn a_missing_symbol_fails_the_binding() {
        api! {
            #[allow(dead_code)]
            NoSuch {
                cudaenv_no_such_function: fn() -> std::ffi::c_int;
            }
        }
        let (name, _, symbol) = SYSTEM;
        let l = open_first(&[name.into()], symbol).unwrap();
        let e = NoSuch::bind(l).err().unwrap();
        assert!(e.starts_with(&format!("{name}: ")), "{e}");
    }
}
