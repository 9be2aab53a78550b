//! End-to-end tests: the real `cudaenv` binary, a temporary HOME and
//! CUDAENV_ROOT, real shells, the real dynamic loader, and loopback servers.
//!
//! One test binary (modules below) keeps link time down on small machines.
//!
//! This suite drives Unix shells and the Linux loader, so it is built for
//! Unix only; the Windows build's end-to-end tests are
//! `tests/windows/e2e.sh`, run under Wine by `scripts/windows-test.sh`.
#![cfg(unix)]

mod catalogue;
mod clusters;
mod common;
mod completions;
mod containers;
mod core;
mod debian;
mod devel;
mod disk;
mod doctor;
mod domestic;
mod errors;
mod frameworks;
mod host_compiler;
mod i18n;
mod install_script;
mod kernels;
mod layout;
mod lock;
mod messages;
mod mirror;
mod net;
mod nvidia;
mod output;
mod pypi;
mod reliability;
mod settings;
mod shell;
mod shims;
mod slurm;
mod stack;
mod suite;
mod system_root;
mod trace;
mod verify;
mod wheel;
