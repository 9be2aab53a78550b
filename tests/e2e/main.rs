//! End-to-end tests: the real `cudaenv` binary, a temporary HOME and
//! CUDAENV_ROOT, real shells, the real dynamic loader, and loopback servers.
//!
//! One test binary (modules below) keeps link time down on small machines.

mod catalogue;
mod common;
mod core;
mod devel;
mod disk;
mod doctor;
mod lock;
mod nvidia;
mod pypi;
mod reliability;
mod shell;
mod shims;
mod verify;
