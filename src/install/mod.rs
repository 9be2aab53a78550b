//! How a stack gets onto disk: from a request to a committed version.
//!
//! - `sources`: where stacks come from (PyPI's NVIDIA wheels, NVIDIA's redist
//!   manifests, Debian's packages, legacy runfiles), the release catalogue and
//!   the resolver that turns a spec into a plan of artifacts;
//! - `fetch`: the HTTP layer and the download cache (streaming, hashing as
//!   bytes arrive, ranges, retries, the stall breaker);
//! - `unpack`: archives (wheels, tarballs, `.deb`s, runfiles) into a tree,
//!   refusing hostile entries;
//! - `engine`: a plan in, a committed version out (locks, scratch directory,
//!   one atomic rename);
//! - `lockfile`: `cuda.lock`, the exact files of a stack per platform;
//! - `mirror`: the files a plan needs written into a directory for sites
//!   without network;
//! - `settings`: every setting an installing command uses, resolved once;
//! - `slots`: connections and cores, granted to the most urgent work first;
//! - `planner`: an install request (plain data, no command line in it) into
//!   a plan: which stack, installed or grown, the lock followed, the sources
//!   opened; `install`, `mirror` and `lock` all build their requests for it.
//!
//! Everything here hands finished trees to `store`; nothing below this folder
//! knows a source or a download exists.

pub(crate) mod engine;
pub(crate) mod error;
pub mod fetch;
pub mod lockfile;
pub(crate) mod mirror;
pub(crate) mod planner;
pub(crate) mod settings;
pub mod slots;
pub mod sources;
pub mod unpack;
