//! Every environment variable cudaenv reads or writes, named once.
//!
//! Code elsewhere refers to these constants instead of spelling the names, so a
//! reader can see here, in one place, the whole environment surface of the tool
//! (and `docs/environment.md` documents each of them).

// --- cudaenv's own configuration ---------------------------------------------

/// Where versions, shims, the cache and the global version file live (default `~/.cudaenv`).
pub const CUDAENV_ROOT: &str = "CUDAENV_ROOT";
/// The version selected for this shell; set by `cudaenv shell`, highest priority.
pub const CUDAENV_VERSION: &str = "CUDAENV_VERSION";
/// Directory to start the `.cuda-version` search from instead of the working directory.
pub const CUDAENV_DIR: &str = "CUDAENV_DIR";
/// A shared, read-only root of versions installed by an administrator (also
/// `system-root` in config.toml); set but empty: none, whatever the file says.
pub const CUDAENV_SYSTEM_ROOT: &str = "CUDAENV_SYSTEM_ROOT";
/// Download cache location (default `$CUDAENV_ROOT/cache`).
pub const CUDAENV_CACHE_DIR: &str = "CUDAENV_CACHE_DIR";
/// Python package index for the PyPI source (overrides pip's configuration).
pub const CUDAENV_PYPI_INDEX: &str = "CUDAENV_PYPI_INDEX";
/// The host compiler nvcc is pointed at: a path or name, or `auto` (the newest installed `g++-N` the active CUDA accepts).
pub const CUDAENV_HOST_COMPILER: &str = "CUDAENV_HOST_COMPILER";
/// nvcc's extra leading flags (nvcc 11+); activation puts `-ccbin` there for `CUDAENV_HOST_COMPILER`.
pub const NVCC_PREPEND_FLAGS: &str = "NVCC_PREPEND_FLAGS";
/// nvcc's default host compiler (nvcc 12+).
pub const NVCC_CCBIN: &str = "NVCC_CCBIN";
/// CMake's CUDA host compiler.
pub const CUDAHOSTCXX: &str = "CUDAHOSTCXX";
/// NVIDIA's package index, for the libraries only it serves (TensorRT's wheels; default `https://pypi.nvidia.com`).
pub const CUDAENV_PYPI_NVIDIA_INDEX: &str = "CUDAENV_PYPI_NVIDIA_INDEX";
/// Files at least this many bytes are downloaded as several parallel ranges (default 48 MiB; 0: never).
pub const CUDAENV_PARALLEL_DOWNLOAD_MIN: &str = "CUDAENV_PARALLEL_DOWNLOAD_MIN";
/// The most bytes a download whose size no index announces may have (default 16 GiB).
pub const CUDAENV_MAX_DOWNLOAD: &str = "CUDAENV_MAX_DOWNLOAD";
/// `1`: keep downloaded archives in the cache after an install (default `0`:
/// an install deletes them once unpacked; see `keep-downloads`).
pub const CUDAENV_KEEP_DOWNLOADS: &str = "CUDAENV_KEEP_DOWNLOADS";
/// Replaces `https://developer.download.nvidia.com` for every NVIDIA download.
pub const CUDAENV_NVIDIA_MIRROR: &str = "CUDAENV_NVIDIA_MIRROR";
/// Replaces `http://deb.debian.org/debian` for every download from the Debian source.
pub const CUDAENV_DEBIAN_MIRROR: &str = "CUDAENV_DEBIAN_MIRROR";
/// The Python interpreter whose environment `doctor`, `compat` and `explain` inspect
/// (default: `$VIRTUAL_ENV/bin/python`, `$CONDA_PREFIX/bin/python`, then `python3` on PATH).
pub const CUDAENV_PYTHON: &str = "CUDAENV_PYTHON";
/// Guards shims against finding themselves on PATH (recursion counter).
pub const CUDAENV_SHIM_DEPTH: &str = "CUDAENV_SHIM_DEPTH";
/// Test hook for `verify`: a comma-separated list of checks (`fp32`, `tf32`,
/// `fp16`, `bf16`, `fp64`, `conv`, or `all`) whose GPU result is overwritten
/// with garbage before it is checked, to prove that a wrong result fails.
pub const CUDAENV_VERIFY_CORRUPT: &str = "CUDAENV_VERIFY_CORRUPT";
/// Test hook for `install`: a named point (`after-download`, `mid-extract`,
/// `before-commit`, `after-commit`, `mid-rehash`) at which the process kills
/// itself with SIGKILL, to prove that a crash there leaves no partial version
/// (see `failpoint`). Not for normal use.
pub const CUDAENV_CRASH_AT: &str = "CUDAENV_CRASH_AT";
/// Benchmark hook, only in builds with the cargo feature `shim-probe`: the
/// stage (0-5) of a shim's path at which it execs `CUDAENV_PROBE_EXEC`
/// instead of going on (see `shims::probe`). Not for normal use.
#[cfg_attr(not(feature = "shim-probe"), allow(dead_code))]
pub const CUDAENV_PROBE_STAGE: &str = "CUDAENV_PROBE_STAGE";
/// The program a `shim-probe` build execs at `CUDAENV_PROBE_STAGE`.
#[cfg_attr(not(feature = "shim-probe"), allow(dead_code))]
pub const CUDAENV_PROBE_EXEC: &str = "CUDAENV_PROBE_EXEC";
/// Set by the script `cudaenv completions SHELL` prints, to the shell's name,
/// when it asks cudaenv to complete a command line (read by clap_complete).
pub const CUDAENV_COMPLETE: &str = "CUDAENV_COMPLETE";

// --- Read from the user's environment ----------------------------------------

pub const HOME: &str = "HOME";
pub const PATH: &str = "PATH";
/// The shell's logical working directory; used when it names the real one.
pub const PWD: &str = "PWD";
pub const NO_COLOR: &str = "NO_COLOR";
pub const SHELL: &str = "SHELL";
/// pip's index setting, honoured so that mirrors configured for pip just work.
pub const PIP_INDEX_URL: &str = "PIP_INDEX_URL";
/// pip's configuration file, read for `[global] index-url` before the usual locations.
pub const PIP_CONFIG_FILE: &str = "PIP_CONFIG_FILE";
/// apt's configuration file, read first, as apt reads it: its `Dir::Etc…`
/// say where apt's sources are (`tool_config::apt_debian_mirror`).
pub const APT_CONFIG: &str = "APT_CONFIG";
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";
/// The driver's JIT compute cache: its directory (default `~/.nv/ComputeCache`),
/// its size limit in bytes, and the switch that disables it. `verify` reads
/// them to explain a slow first library call.
pub const CUDA_CACHE_PATH: &str = "CUDA_CACHE_PATH";
pub const CUDA_CACHE_MAXSIZE: &str = "CUDA_CACHE_MAXSIZE";
pub const CUDA_CACHE_DISABLE: &str = "CUDA_CACHE_DISABLE";
/// The active Python virtual environment (its interpreter is the one inspected).
pub const VIRTUAL_ENV: &str = "VIRTUAL_ENV";
/// The active conda environment (its interpreter is inspected when no virtualenv is active).
pub const CONDA_PREFIX: &str = "CONDA_PREFIX";
/// Windows: the Windows directory (`C:\Windows`), whose System32 doctor
/// searches for the driver's DLL, nvidia-smi.exe and the Visual C++ runtime.
pub const SYSTEM_ROOT: &str = "SystemRoot";
/// Windows: `C:\Program Files`, where older drivers put nvidia-smi.exe (`NVIDIA Corporation\NVSMI`).
pub const PROGRAM_FILES: &str = "ProgramFiles";

// --- Written by activation -----------------------------------------------------

pub const LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
pub const CUDA_HOME: &str = "CUDA_HOME";
pub const CUDA_PATH: &str = "CUDA_PATH";
/// `CUDA_PATH_V<major>_<minor>`: what NVIDIA's Windows installer sets beside
/// `CUDA_PATH` for each toolkit, and what Visual Studio's CUDA build
/// customisations read. Set on Windows for the active version; the others
/// are cleared when they point into a cudaenv version.
pub const CUDA_PATH_VERSIONED: [&str; 32] = [
    "CUDA_PATH_V10_0",
    "CUDA_PATH_V10_1",
    "CUDA_PATH_V10_2",
    "CUDA_PATH_V11_0",
    "CUDA_PATH_V11_1",
    "CUDA_PATH_V11_2",
    "CUDA_PATH_V11_3",
    "CUDA_PATH_V11_4",
    "CUDA_PATH_V11_5",
    "CUDA_PATH_V11_6",
    "CUDA_PATH_V11_7",
    "CUDA_PATH_V11_8",
    "CUDA_PATH_V12_0",
    "CUDA_PATH_V12_1",
    "CUDA_PATH_V12_2",
    "CUDA_PATH_V12_3",
    "CUDA_PATH_V12_4",
    "CUDA_PATH_V12_5",
    "CUDA_PATH_V12_6",
    "CUDA_PATH_V12_7",
    "CUDA_PATH_V12_8",
    "CUDA_PATH_V12_9",
    "CUDA_PATH_V13_0",
    "CUDA_PATH_V13_1",
    "CUDA_PATH_V13_2",
    "CUDA_PATH_V13_3",
    "CUDA_PATH_V13_4",
    "CUDA_PATH_V13_5",
    "CUDA_PATH_V13_6",
    "CUDA_PATH_V13_7",
    "CUDA_PATH_V13_8",
    "CUDA_PATH_V13_9",
];
pub const CUDA_ROOT: &str = "CUDA_ROOT";
pub const CUDNN_PATH: &str = "CUDNN_PATH";
pub const CUDNN_HOME: &str = "CUDNN_HOME";
/// What the shell hook (or `cudaenv shell`) changed, so the next transition can
/// undo exactly that (internal; percent-encoded records, see `shell::session`).
pub const CUDAENV_STATE: &str = "__CUDAENV_STATE";
/// Name of the version cudaenv activated in this environment (for prompts and for undoing it).
pub const CUDAENV_ACTIVE: &str = "CUDAENV_ACTIVE";
/// How long the PyPI release catalogue is reused before it is read again
/// (seconds, or with a unit: `90m`, `12h`, `1d`; `0` reads it every time).
pub const CUDAENV_CATALOGUE_MAX_AGE: &str = "CUDAENV_CATALOGUE_MAX_AGE";

// --- Containers, CI and planning for another machine ------------------------

/// Plan for a machine with this NVIDIA driver (`550.54.15`, `550`) instead of
/// this one's: `install --for`, `compat`, `doctor` (as `--target-driver`).
pub const CUDAENV_TARGET_DRIVER: &str = "CUDAENV_TARGET_DRIVER";
/// Plan for GPUs of these architectures (`sm_90`, `8.6`, comma-separated)
/// instead of this machine's (as `--target-arch`).
pub const CUDAENV_TARGET_ARCH: &str = "CUDAENV_TARGET_ARCH";
/// The NVIDIA container runtime's driver constraint (`cuda>=12.4`); written by
/// `env --format dockerfile|github`, read by `doctor`.
pub const NVIDIA_REQUIRE_CUDA: &str = "NVIDIA_REQUIRE_CUDA";
/// The GPUs the NVIDIA container runtime exposes (`all`, `0,1`, `none`, `void`).
pub const NVIDIA_VISIBLE_DEVICES: &str = "NVIDIA_VISIBLE_DEVICES";
/// The driver libraries the NVIDIA container runtime mounts (`compute,utility`, `all`).
pub const NVIDIA_DRIVER_CAPABILITIES: &str = "NVIDIA_DRIVER_CAPABILITIES";
/// Set: the NVIDIA container runtime ignores `NVIDIA_REQUIRE_CUDA`.
pub const NVIDIA_DISABLE_REQUIRE: &str = "NVIDIA_DISABLE_REQUIRE";
/// Set by Apptainer inside a container (the image's path).
pub const APPTAINER_CONTAINER: &str = "APPTAINER_CONTAINER";
/// Set by Singularity (and Apptainer, for compatibility) inside a container.
pub const SINGULARITY_CONTAINER: &str = "SINGULARITY_CONTAINER";

/// `stack` (default) or `wheels`: what activation does next to a Python
/// environment that bundles CUDA wheels of the version's major (see `config::BundledCuda`).
pub const CUDAENV_BUNDLED_CUDA: &str = "CUDAENV_BUNDLED_CUDA";
/// Set by activation for JAX/XLA (`--xla_gpu_cuda_data_dir=`) and Triton (ptxas).
pub const XLA_FLAGS: &str = "XLA_FLAGS";
pub const TRITON_PTXAS_PATH: &str = "TRITON_PTXAS_PATH";
/// Set by `trace` in the command it runs: the glibc loader's report of each
/// library search (`libs,files`), one file per process at `LD_DEBUG_OUTPUT.<pid>`.
pub const LD_DEBUG: &str = "LD_DEBUG";
pub const LD_DEBUG_OUTPUT: &str = "LD_DEBUG_OUTPUT";

/// The language of cudaenv's messages (`en`, `zh-CN`), over the locale and
/// over `lang` in config.toml; `--json` is English whatever it says.
pub const CUDAENV_LANG: &str = "CUDAENV_LANG";
/// The POSIX locale variables, in the order they decide the language of
/// messages (the first one set and non-empty wins, as in gettext).
pub const LC_ALL: &str = "LC_ALL";
pub const LC_MESSAGES: &str = "LC_MESSAGES";
pub const LANG: &str = "LANG";
/// pip's configuration directories (XDG): the user's (`~/.config` when
/// unset) and the system's (`/etc/xdg` when unset), read for pip.conf.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
pub const XDG_CONFIG_DIRS: &str = "XDG_CONFIG_DIRS";
/// Windows: the user's roaming application data (`%APPDATA%\pip\pip.ini`).
pub const APPDATA: &str = "APPDATA";
/// Windows: data for all users (`%ProgramData%\pip\pip.ini`, pip's global file).
pub const PROGRAMDATA: &str = "ProgramData";

/// Seconds a server may go without answering, or below the minimum rate,
/// before a request counts as stalled (default 30; see `fetch::timeouts`).
pub const CUDAENV_HTTP_TIMEOUT: &str = "CUDAENV_HTTP_TIMEOUT";

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The names users set and see: the string values of the constants
    /// above, not the constants' Rust names (`CUDAENV_STATE` is
    /// `__CUDAENV_STATE` in the environment).
    fn names_in_source() -> BTreeSet<String> {
        include_str!("env_vars.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("pub const "))
            .map(|l| {
                // The one family of names, documented as a pattern.
                if l.starts_with("CUDA_PATH_VERSIONED: [&str;") {
                    return "CUDA_PATH_V<major>_<minor>".to_string();
                }
                let value = l
                    .split_once(": &str = \"")
                    .and_then(|(_, v)| v.strip_suffix("\";"))
                    .unwrap_or_else(|| panic!("not a `NAME: &str = \"VALUE\";` line: {l}"));
                value.to_string()
            })
            .collect()
    }

    /// The names in the first column of docs/environment.md's tables (a
    /// cell may list several: `` `A`, `B` ``). A variable may appear in
    /// several tables (read, and written by activation), once in each.
    fn names_in_docs() -> BTreeSet<String> {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/environment.md"));
        let mut names = BTreeSet::new();
        let mut in_table = BTreeSet::new();
        for line in doc.lines() {
            let Some(row) = line.strip_prefix("| ") else {
                in_table.clear();
                continue;
            };
            let first = row.split(" | ").next().unwrap_or("");
            for cell in first.split('`').skip(1).step_by(2) {
                if cell == "variable" || cell.contains(' ') {
                    continue;
                }
                assert!(
                    in_table.insert(cell.to_string()),
                    "environment.md lists {cell} twice in one table"
                );
                names.insert(cell.to_string());
            }
        }
        names
    }

    /// docs/environment.md documents every variable a user can set or see,
    /// by the name they use, and documents nothing else.
    #[test]
    fn every_variable_is_documented_by_the_name_users_see() {
        let source = names_in_source();
        let docs = names_in_docs();
        assert!(source.len() > 10 && docs.len() > 10, "{source:?} {docs:?}");
        let undocumented: Vec<_> = source.difference(&docs).collect();
        assert!(
            undocumented.is_empty(),
            "env_vars.rs defines variables environment.md does not document: {undocumented:?}"
        );
        let unknown: Vec<_> = docs.difference(&source).collect();
        assert!(
            unknown.is_empty(),
            "environment.md documents variables env_vars.rs does not define: {unknown:?}"
        );
    }
}
