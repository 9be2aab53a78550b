//! Libraries opened at run time by soname (`dlopen` through `libloading`),
//! the way frameworks open the NVIDIA libraries, and tables of typed
//! function pointers bound from them (`api!`).
//!
//! Each table keeps its library loaded for as long as it lives. A missing
//! symbol is an error when the table is bound, never a null pointer later.
//! Nothing bound here is safe to call without a loaded, matching library,
//! so every call site is `unsafe` and checks the returned status.

use std::ffi::{CStr, c_char, c_void};
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
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(errors)
}

/// The file a library was loaded from: `dladdr` on one of its symbols.
fn loaded_path(lib: &Library, symbol: &str) -> Option<PathBuf> {
    let name = std::ffi::CString::new(symbol).ok()?;
    // SAFETY: we only take the symbol's address, never call it.
    let sym = unsafe { lib.get::<*const c_void>(name.as_bytes_with_nul()) }.ok()?;
    let addr = *sym;
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads loader state; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname points at a NUL-terminated string owned by the loader.
    let fname = unsafe { CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(fname.to_bytes())))
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

#[cfg(test)]
mod tests {
    use super::*;

    api! {
        /// Two libc functions, to bind a table against a library every
        /// machine has.
        Libc {
            getpid: fn() -> std::ffi::c_int;
            abs: fn(std::ffi::c_int) -> std::ffi::c_int;
        }
    }

    #[test]
    fn opens_the_first_soname_that_loads_and_says_where_it_is() {
        let l = open_first(&["libnot-there.so.7".into(), "libc.so.6".into()], "getpid").unwrap();
        assert_eq!(l.soname, "libc.so.6");
        let path = l.path.clone().unwrap();
        assert!(path.to_string_lossy().contains("libc.so"), "{path:?}");
        let libc = Libc::bind(l).unwrap();
        assert_eq!(libc.loaded.soname, "libc.so.6");
        // SAFETY: libc's getpid and abs, with their C signatures.
        unsafe {
            assert_eq!((libc.getpid)() as u32, std::process::id());
            assert_eq!((libc.abs)(-3), 3);
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
        let l = open_first(&["libc.so.6".into()], "getpid").unwrap();
        let e = NoSuch::bind(l).err().unwrap();
        assert!(e.starts_with("libc.so.6: "), "{e}");
    }
}
