//! What this machine and its GPU say about a stack.
//!
//! - `compat`: the rules — which driver each CUDA needs, which GPU
//!   architectures each CUDA builds for, which stack each framework release
//!   was built against — and the machine they are checked against;
//! - `libcuda`: the driver API, bound at run time from `libcuda.so.1`;
//! - `facts`: the one gatherer of the host's driver and GPUs (the kernel
//!   module, libcuda asked in a child, nvidia-smi), and the protocol of the
//!   children that ask the driver;
//! - `doctor`: the rest of what it gathers about the host (the active
//!   version, libraries on the loader's path, Python packages) and the
//!   diagnoses drawn from all of it;
//! - `verify`: the proof on the GPU, in a child process (load by soname, run
//!   GEMMs and a convolution, check the results);
//! - `trace`: which CUDA libraries a real command loaded, and from where;
//! - `fatbin`: the GPU architectures a CUDA library has kernels for, read
//!   from its `.nv_fatbin` section (headers only);
//! - `finding`: the one finding type of doctor, verify, trace and explain,
//!   with its text renderer and its `--json` writer;
//! - `explain`: an error message from a CUDA program turned into its cause
//!   and the command that fixes it.

pub(crate) mod compat;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod explain;
pub(crate) mod facts;
pub(crate) mod fatbin;
pub(crate) mod finding;
pub(crate) mod libcuda;
pub(crate) mod trace;
pub(crate) mod verify;
