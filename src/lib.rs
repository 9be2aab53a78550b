//! cudaenv: side-by-side CUDA toolkit + cuDNN stacks, pinned per project.
//!
//! Layers, from the bottom up (lower layers never import higher ones):
//! - `spec`, `version_file`: what users write, parsed once into types;
//! - `store`: `$CUDAENV_ROOT` on disk — versions, metadata, locks, atomic commits;
//! - `config`: the settings (config.toml, variables), resolved once, each
//!   with where it came from;
//! - `select`: which version is active here and why;
//! - `activate`: the environment a version needs, as data;
//! - `shell`: that data rendered as code for bash, zsh, fish and pwsh;
//! - `modulefile`: the same data as Lmod / Environment Modules modulefiles;
//! - `shims`: the binary playing each CUDA tool, and `rehash`, which makes them;
//! - `verify`: proving on the GPU that a version works (a child process that
//!   loads the libraries by soname and runs GEMMs and a convolution);
//! - `cli`: one file per subcommand, the only layer that talks to the terminal
//!   (through `ui` and the context's `Stdio`).
//!
//! The shim path (`shims` → `select` → `activate` → `store`) touches no network
//! or progress code, so it stays small and fast.

pub mod activate;
pub mod cli;
pub mod compat;
pub mod config;
pub mod context;
pub mod doctor;
pub mod env_vars;
pub mod error;
pub mod explain;
pub mod failpoint;
pub mod fetch;
pub mod hash;
pub mod install;
pub mod lockfile;
pub mod mirror;
pub mod modulefile;
pub mod registry;
pub mod safe_url;
pub mod select;
pub mod shell;
pub mod shims;
pub mod sources;
pub mod spec;
pub mod store;
pub mod sys;
pub mod toolkit;
pub mod trace;
pub mod ui;
pub mod unpack;
pub mod verify;
pub mod version_file;

pub use context::Context;
pub use error::{Error, ExitCode, Result};
