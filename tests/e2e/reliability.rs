//! The reliability and security battery (see `docs/RELIABILITY.md`).
//!
//! Each submodule pins one class of failure that installers and version
//! managers have historically shipped bugs in: hostile `.cuda-version` files,
//! awkward root paths turned into shell code, and so on. The helpers here are
//! what every case needs to prove "nothing changed": a snapshot of a directory
//! tree taken before and after, and a way to run the binary with a deadline so a
//! hang is a failure rather than a stuck suite.

mod bad_tool_versions;
mod bad_version_file;
mod bounds;
mod crash_points;
mod disk;
mod hook;
pub mod hostile_deb;
mod hostile_tar;
mod hostile_zip;
mod install_faults;
mod install_hostile;
mod loopback;
mod quoting;
mod regressions;
mod small_reads;
pub mod support;
mod tarbuild;
mod team;
mod trace_faults;
mod trust;
mod zipbuild;
