//! A benchmark probe for the shim's path, compiled in only with the cargo
//! feature `shim-probe` (a normal build has empty inline functions here).
//!
//! With `CUDAENV_PROBE_STAGE=N` and `CUDAENV_PROBE_EXEC=PROGRAM` set, a shim
//! stops at stage `N` of its path and execs `PROGRAM` with the arguments and
//! environment it was started with, instead of going on:
//!
//! | stage | the shim has |
//! | --- | --- |
//! | 0 | done nothing: the top of `main` |
//! | 1 | read its arguments |
//! | 2 | captured its environment and working directory |
//! | 3 | selected and resolved the version (pin files, `meta.toml`) |
//! | 4 | planned the version's environment (listing linked versions) |
//! | 5 | found the program to run |
//!
//! Timing each stage against a direct run of the program
//! (`scripts/bench-shim-stages.sh`) shows what each part of the path costs,
//! and how much any change to it could still save (docs/PERFORMANCE.md).
//! The variables are read from `environ` without allocating, so that stage 0
//! costs no more than the binary's own start.

#[cfg(feature = "shim-probe")]
mod imp {
    use std::ffi::{CStr, c_char};
    use std::sync::atomic::{AtomicPtr, Ordering};

    use crate::context::env_vars;
    use crate::context::{process_environ, process_environ_ptr};

    static ARGV: AtomicPtr<*const c_char> = AtomicPtr::new(std::ptr::null_mut());

    /// The value of `name` in the environment the process started with.
    fn var(name: &str) -> Option<&'static CStr> {
        process_environ().find_map(|entry| {
            let value = entry.to_bytes_with_nul().strip_prefix(name.as_bytes())?;
            CStr::from_bytes_with_nul(value.strip_prefix(b"=")?).ok()
        })
    }

    pub fn start(argv: *const *const c_char) {
        ARGV.store(argv.cast_mut(), Ordering::Relaxed);
        at(0);
    }

    pub fn at(stage: u8) {
        let Some(want) = var(env_vars::CUDAENV_PROBE_STAGE) else {
            return;
        };
        if want.to_bytes() != [b'0' + stage] {
            return;
        }
        let Some(program) = var(env_vars::CUDAENV_PROBE_EXEC) else {
            return;
        };
        let argv = ARGV.load(Ordering::Relaxed);
        if argv.is_null() {
            return;
        }
        // SAFETY: `program` is a C string, `argv` is what `main` got and the
        // environment is the process's own; execve returns only on failure,
        // and then the shim goes on as if there were no probe.
        unsafe { libc::execve(program.as_ptr(), argv.cast_const(), process_environ_ptr()) };
    }
}

#[cfg(feature = "shim-probe")]
pub use imp::{at, start};

/// Records `main`'s arguments and passes stage 0.
#[cfg(not(feature = "shim-probe"))]
#[inline(always)]
pub fn start(_argv: *const *const std::ffi::c_char) {}

/// Passes stage `stage` of the shim's path.
#[cfg(not(feature = "shim-probe"))]
#[inline(always)]
pub fn at(_stage: u8) {}
