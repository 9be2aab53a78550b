//! `cudaenv doctor`: gather facts about the machine and the active stack, then
//! turn them into findings.
//!
//! The split is deliberate: `facts::gather` is the only code that touches the
//! system (the host's driver and GPUs through `machine::facts`, files under
//! /proc and /sys, `ldconfig -p`, the Python environment), and `diagnose` is a
//! pure function from `Facts` to `Finding`s, so every finding is covered by a
//! table test over fact sets rather than by whatever machine the tests run on.

pub(crate) mod container;
pub(crate) mod diagnose;
pub(crate) mod facts;
pub(crate) mod python;

pub use diagnose::{Finding, Level, diagnose};
pub use facts::{Facts, Options, gather};
