//! cudaenv: side-by-side CUDA toolkit + cuDNN stacks, pinned per project.
//!
//! Each folder is one capability. From the bottom up (a module imports only
//! from its own folder and the folders below it; `tests/e2e/suite.rs`
//! checks this, see `docs/layout.md`):
//! - `os`: the platform layer, the only code that knows the operating
//!   system (processes, locks, file operations, dynamic loading, hashing);
//! - `i18n`: messages in the user's language: the Fluent catalogues
//!   (English the source, Chinese), and the message type the capabilities
//!   build instead of finished text;
//! - `spec`: what users write, parsed once into types (specs, versions,
//!   URLs whose credentials never print);
//! - `context`: the one value through which code sees the outside world
//!   (environment, working directory, roots, standard streams), the
//!   environment variables, and the settings resolved with their origin;
//! - `registry`: the embedded release and compatibility data;
//! - `store`: `$CUDAENV_ROOT` on disk: versions, metadata, links to trees
//!   installed elsewhere, the trust check of the shared system root;
//! - `activation`: which version is active here and why, the environment it
//!   needs, and that environment as shell code, shims and modulefiles;
//! - `machine`: the compatibility rules and what this machine says: doctor,
//!   verify, trace, explain;
//! - `install`: sources, downloads, unpacking, the install engine, locks and
//!   mirrors;
//! - `ui`: the terminal (printer, progress, colours);
//! - `cli`: one file per subcommand: parse, call, print.
//!
//! Each capability keeps its errors in its own `error.rs` (with their exit
//! codes, kinds and hints); `error` wraps them into the one type every
//! function returns, printed once at the top.
//!
//! The capabilities are crate-private; what is public is the façade the
//! binary, the end-to-end tests and the fuzz targets use: `cli::main`, the
//! errors, specs, the store, and the install's sources, unpackers and lock
//! file. Everything else is reachable only from inside the crate, so the
//! compiler reports what nothing uses, and no other crate can reach past the
//! façade:
//!
//! ```compile_fail,E0603
//! // The GEMM's byte views are the verify child's own.
//! let mut v = [1.0f32];
//! cudaenv::machine::verify::gemm::bytes_mut(&mut v);
//! ```
//!
//! ```
//! // What the end-to-end tests and fuzz targets use stays public.
//! let spec = cudaenv::spec::Spec::parse("12.4+cudnn9").unwrap();
//! assert_eq!(spec.to_string(), "12.4+cudnn9");
//! ```
//!
//! The shim path (`activation::shims` → `activation::select` → `activation`
//! → `store`) touches no network or progress code, so it stays small and fast.

pub mod activation;
pub mod cli;
pub(crate) mod context;
pub mod error;
pub(crate) mod i18n;
pub mod install;
pub(crate) mod machine;
pub(crate) mod os;
pub(crate) mod registry;
pub mod spec;
pub mod store;
pub(crate) mod ui;

pub use context::Context;
pub use error::{Error, ExitCode, Result};
