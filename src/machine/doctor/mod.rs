//! `cudaenv doctor`: gather facts about the machine and the active stack, then
//! turn them into findings.
//!
//! The split is deliberate: `facts::gather` is the only code that touches the
//! system (files under /proc and /sys, libcuda in a child process, `ldconfig
//! -p`, nvidia-smi if present, the Python environment), and `diagnose` is a
//! pure function from `Facts` to `Finding`s, so every finding is covered by a
//! table test over fact sets rather than by whatever machine the tests run on.

pub(crate) mod command;
pub(crate) mod container;
pub(crate) mod diagnose;
pub(crate) mod facts;
pub(crate) mod libcuda;
pub(crate) mod python;

pub use diagnose::{Finding, Level, diagnose};
pub use facts::{Facts, Options, gather};
