//! The `cudaenv` binary, which is also every shim (see `cli::main`).
//!
//! A shim's overhead is this binary's start-up, so the binary brings its own C
//! `main` instead of Rust's runtime start-up. That start-up reads
//! /proc/self/maps to place a stack guard and installs signal handlers before
//! `main`, about 0.1 ms per start on the benchmark machine
//! (docs/PERFORMANCE.md). The parts of it cudaenv relies on are done
//! elsewhere: `cli::main` ignores SIGPIPE for cudaenv's own commands, a panic is
//! caught here and exits with 101 as Rust's runtime would, and
//! `std::process::exit` flushes stdout.
// Under `cargo test` the test harness brings the `main`.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::ffi::{c_char, c_int};

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, argv: *const *const c_char) -> c_int {
    cudaenv::activation::shims::probe::start(argv);
    // std reads the arguments itself (glibc passes them to its initialisers).
    let code = std::panic::catch_unwind(cudaenv::cli::main).map_or(101, i32::from);
    std::process::exit(code)
}

/// `pow` for the dependencies that call it (tokio's and indicatif's
/// arithmetic), from the `libm` crate: nothing else in cudaenv needs the C
/// math library, so the executable does not load libm.so at every start, that
/// is at every shim (docs/PERFORMANCE.md). Defined in the executable, it
/// satisfies the references at link time; libraries loaded later (CUDA's,
/// under `verify`) still get the C library's own from libm.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
