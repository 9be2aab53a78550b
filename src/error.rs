//! The library's error type and the exit codes it maps to.
//!
//! Errors carry the values a user needs (the file, the URL, expected and actual
//! hashes) and know their own `hint`: the one thing to do next. They are printed
//! once, at the top of the binary (`ui::report_error`, called by `cli::main`), as `error:` + the chain
//! of causes + `hint:`. Exit codes are deliberately few; each is documented in
//! `docs/exit-codes.md` and stable for scripts.

use std::path::PathBuf;

use crate::spec::source::SourceKind;

/// Process exit codes. Values are part of the public interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitCode {
    Success = 0,
    /// Something failed that is not one of the more specific cases below.
    Failure = 1,
    /// The command line, a spec or a version file is malformed.
    Usage = 2,
    /// The selected or requested version is not installed.
    NotInstalled = 3,
    /// Downloaded or unpacked bytes failed verification, or an archive is hostile.
    Integrity = 4,
    /// A network or mirror problem (after retries), or `--offline` with a cold cache.
    Network = 5,
    /// The requested release or component does not exist in any source.
    NotAvailable = 7,
    /// A version of the system root, or the root itself, can be written by
    /// users other than its owner: it is not activated.
    UnsafeSystemRoot = 8,
    /// Writing to the system root was asked for by a user who cannot.
    SystemRootNotWritable = 9,
    /// `verify`: no NVIDIA driver could be loaded.
    NoDriver = 10,
    /// `verify`: the driver is older than the runtime needs.
    DriverTooOld = 11,
    /// `verify`: the GPU's architecture cannot run this toolkit.
    ArchUnsupported = 12,
    /// `verify`: no GPU is visible (CUDA_VISIBLE_DEVICES or none present).
    NoDevice = 13,
    /// `verify`: a library the stack should provide could not be loaded.
    LibraryMissing = 14,
    /// `verify`: a computation ran but produced wrong results.
    WrongResult = 15,
    /// `doctor` found at least one error-level problem.
    DoctorErrors = 16,
    /// `verify`: the checks did not finish within `--timeout` (a hanging driver).
    TimedOut = 17,
    /// `verify`: the stack's CUDA predates the GPU: no native code for it,
    /// only PTX the driver must JIT-compile.
    PtxJitOnly = 18,
    /// `trace`: the command could not be started or the loader's log not read.
    TraceFailed = 20,
    /// A `cuda.lock` was rejected as malformed, of an unknown schema, hostile,
    /// or naming a URL outside the configured sources.
    InvalidLock = 24,
    /// A `cuda.lock` disagrees with `.cuda-version`, with the index, or has
    /// nothing for this platform (or `lock --check` found it out of date).
    LockMismatch = 25,
    /// The command to run or look up does not exist in the active version
    /// (`which`, `exec`): 127, as shells report "command not found".
    CommandNotFound = 127,
    /// Interrupted by a signal (SIGINT): 128 + 2, as shells report it.
    Interrupted = 130,
}

impl ExitCode {
    /// Every code, for documentation checks.
    pub const ALL: [ExitCode; 23] = [
        ExitCode::Success,
        ExitCode::Failure,
        ExitCode::Usage,
        ExitCode::NotInstalled,
        ExitCode::Integrity,
        ExitCode::Network,
        ExitCode::NotAvailable,
        ExitCode::UnsafeSystemRoot,
        ExitCode::SystemRootNotWritable,
        ExitCode::NoDriver,
        ExitCode::DriverTooOld,
        ExitCode::ArchUnsupported,
        ExitCode::NoDevice,
        ExitCode::LibraryMissing,
        ExitCode::WrongResult,
        ExitCode::DoctorErrors,
        ExitCode::TimedOut,
        ExitCode::TraceFailed,
        ExitCode::CommandNotFound,
        ExitCode::Interrupted,
        ExitCode::PtxJitOnly,
        ExitCode::InvalidLock,
        ExitCode::LockMismatch,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid version spec `{input}`: {reason}")]
    InvalidSpec { input: String, reason: String },

    /// `line` is 1-based; 0 means the problem is the file as a whole.
    #[error("invalid version file {}{}: {reason}", path.display(), if *line > 0 { format!(", line {line}") } else { String::new() })]
    InvalidVersionFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    #[error("version `{spec}` is not installed{}", origin.as_ref().map(|o| format!(" (selected by {o})")).unwrap_or_default())]
    NotInstalled {
        spec: String,
        origin: Option<String>,
        installed: Vec<String>,
    },

    /// A command that takes an exact version name (`uninstall`) got one that does not exist.
    #[error("no installed version is named `{name}`")]
    NoSuchVersion {
        name: String,
        installed: Vec<String>,
    },

    #[error("no CUDA runtime (libcudart.so) found under {}", path.display())]
    NoRuntimeAt { path: PathBuf },

    #[error("{} does not exist", path.display())]
    PathNotFound { path: PathBuf },

    #[error("refusing to {action} without confirmation: standard input is not a terminal")]
    ConfirmationRequired { action: String },

    #[error("a version named `{name}` already exists")]
    AlreadyExists { name: String },

    #[error("`{name}` is not a valid version name: {reason}")]
    InvalidName { name: String, reason: String },

    #[error("the path {} cannot be used in {variable}: {reason}", path.display())]
    UnrepresentablePath {
        path: PathBuf,
        variable: &'static str,
        reason: &'static str,
    },

    #[error("command `{command}` not found in version `{version}`")]
    CommandNotFound {
        command: String,
        version: String,
        available_in: Vec<String>,
    },

    #[error("shim `{command}` called itself {depth} times in a row")]
    ShimRecursion { command: String, depth: u32 },

    #[error("cannot determine the home directory; set HOME or CUDAENV_ROOT")]
    NoHome,

    #[error("{archive}{}: {reason}", entry.as_ref().map(|e| format!(", member `{e}`")).unwrap_or_default())]
    BadArchive {
        archive: String,
        entry: Option<String>,
        reason: String,
    },

    #[error("sha256 mismatch for {url}: expected {expected}, got {actual}")]
    HashMismatch {
        url: String,
        expected: String,
        actual: String,
    },

    /// `from`: the source the file was asked of, when known (for the hint).
    #[error("size mismatch for {url}: {reason}")]
    SizeMismatch {
        url: String,
        reason: String,
        from: Option<SourceKind>,
    },

    /// `from`: the source the URL belongs to, when known (for the hint).
    #[error("download failed: {url}: {reason}")]
    Network {
        url: String,
        reason: String,
        from: Option<SourceKind>,
    },

    #[error("--offline: {file} is not in the download cache")]
    Offline { file: String, url: String },

    #[error("{what} is not available{}", source_name.as_ref().map(|s| format!(" from {s}")).unwrap_or_default())]
    NotAvailable {
        what: String,
        source_name: Option<String>,
        hint: Option<String>,
    },

    #[error("aborted: {0}")]
    Aborted(String),

    #[error("interrupted")]
    Interrupted,

    #[error("{context}: {}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid manifest {what}: {reason}")]
    BadManifest { what: String, reason: String },

    #[error("{url} has no pinned sha256, so its download cannot be verified")]
    Unverified { url: String },

    #[error("invalid runfile {}: {reason}", path.display())]
    BadRunfile { path: PathBuf, reason: String },

    #[error("invalid configuration {}: {reason}", path.display())]
    Config { path: PathBuf, reason: String },
    #[error("no NVIDIA driver: {detail}")]
    NoDriver { detail: String },

    #[error(
        "the NVIDIA driver{} (supports CUDA up to {driver_cuda}) is too old for the CUDA {runtime} runtime, which needs driver {min_driver} or newer",
        driver.as_ref().map(|d| format!(" {d}")).unwrap_or_default()
    )]
    DriverTooOld {
        driver: Option<String>,
        driver_cuda: String,
        runtime: String,
        min_driver: String,
    },

    #[error("GPU {index} ({name}, compute capability {cc}) cannot run CUDA {cuda}: {reason}")]
    ArchUnsupported {
        index: u32,
        name: String,
        cc: String,
        cuda: String,
        reason: String,
        /// What to use instead, e.g. `CUDA 11.8 or newer`.
        instead: String,
    },

    #[error("no GPU is visible: {detail}")]
    NoDevice {
        detail: String,
        /// CUDA_VISIBLE_DEVICES as the check saw it.
        visible_devices: Option<String>,
        /// GPUs the driver has, ignoring CUDA_VISIBLE_DEVICES.
        present: Option<u32>,
    },

    #[error("{library} could not be loaded for version `{version}` (tried {tried}): {detail}")]
    LibraryMissing {
        library: String,
        version: String,
        tried: String,
        detail: String,
    },

    #[error("{library} was loaded from {}, outside version `{version}`", path.display())]
    LibraryShadowed {
        library: String,
        version: String,
        path: PathBuf,
    },

    #[error("{library} {loaded} was loaded, but version `{version}` records {recorded}")]
    LibraryMismatch {
        library: String,
        version: String,
        loaded: String,
        recorded: String,
    },

    #[error("{check} computed wrong results: {detail}")]
    WrongResult { check: String, detail: String },

    #[error("{check} failed: {detail}")]
    CheckFailed { check: String, detail: String },

    #[error("the verification process {how} while {stage}")]
    VerifyCrashed {
        how: String,
        stage: String,
        /// The end of its stderr.
        output: String,
    },

    #[error(
        "the verification process did not finish within {seconds} s; it was stopped while {stage}"
    )]
    VerifyTimedOut {
        seconds: u64,
        stage: String,
        /// The end of its stderr.
        output: String,
        /// What is known about why, from what was measured before the stop
        /// (`verify::explain_timeout`); `None`: nothing beyond the stage.
        why: Option<String>,
    },

    #[error("invalid doctor facts {}: {reason}", path.display())]
    InvalidFacts { path: PathBuf, reason: String },

    #[error("invalid framework `{input}`: {reason}")]
    InvalidFramework { input: String, reason: String },

    #[error("cudaenv has no compatibility data for {framework} {version}")]
    UnknownFrameworkVersion {
        framework: String,
        version: String,
        known: Vec<String>,
    },

    #[error("{framework} is not installed in the Python environment{}", python.as_ref().map(|p| format!(" of {p}")).unwrap_or_default())]
    FrameworkNotInstalled {
        framework: String,
        python: Option<String>,
    },

    #[error("{spec} would not run on {machine}: {}", problems.join("; "))]
    WouldNotRun {
        spec: String,
        problems: Vec<String>,
        driver_too_old: bool,
        /// This machine, or the target planned for, as a title.
        machine: String,
        /// The target's name when planning for one; `None` for this machine.
        target: Option<&'static str>,
        /// The GPU, named as the guard names it.
        gpu: String,
    },

    #[error("`{name}` is neither a help topic nor a command")]
    UnknownHelpTopic { name: String, topics: Vec<String> },

    #[error("`{name}` is not a cudaenv command")]
    UnknownCommand { name: String },

    #[error("no {file} (nor a `cuda` line in {tool_versions}) in {} or any parent directory", dir.display())]
    NoPin {
        file: &'static str,
        tool_versions: &'static str,
        dir: PathBuf,
        installed: Vec<String>,
    },

    #[error("`cudaenv {command}` needs the name of a version")]
    VersionNameRequired {
        command: &'static str,
        installed: Vec<String>,
    },

    #[error("cannot reach {url}: {reason}")]
    ManifestsUnreachable { url: String, reason: String },
    #[error("{} exists and was not written by cudaenv; not replacing it", path.display())]
    ModulefileNotOurs { path: PathBuf },

    #[error("no version is installed in {}", root.display())]
    NothingInstalled { root: PathBuf },

    #[error("refusing to activate `{version}` from the system root: {} (mode {mode:04o}) can be written by users other than its owner", path.display())]
    UnsafeSystemRoot {
        path: PathBuf,
        mode: u32,
        version: String,
    },

    #[error("cannot {action}: the system root {} is not writable by this user", root.display())]
    SystemRootNotWritable { root: PathBuf, action: String },

    #[error("no system root is configured")]
    NoSystemRoot,

    /// `mirror` into a directory that holds files but no mirror record.
    #[error("{} is not empty and is not a cudaenv mirror (it has no {record})", dir.display())]
    NotAMirror { dir: PathBuf, record: &'static str },

    /// A mirror's record (`mirror.json`) that cannot be read or is not one.
    #[error("invalid mirror record {}: {reason}", path.display())]
    BadMirror { path: PathBuf, reason: String },

    /// `--target-driver`/`--target-arch` (or their variables) malformed.
    #[error("invalid {setting} `{input}`: {reason}")]
    InvalidTarget {
        setting: String,
        input: String,
        reason: String,
    },
    /// `trace` could not run the command (not a missing command: that is `CommandNotFound`).
    #[error("cannot trace `{command}`: {reason}")]
    TraceFailed { command: String, reason: String },

    #[error(
        "GPU {index} ({name}, {sm}) is newer than CUDA {cuda}: the stack has no native code for it, \
         only PTX that the driver must JIT-compile (if the libraries carry PTX at all)"
    )]
    StackPredatesGpu {
        index: u32,
        name: String,
        /// `sm_90`.
        sm: String,
        /// The stack's CUDA, major.minor.
        cuda: String,
        /// The oldest CUDA with native code for the GPU, when known.
        first: Option<String>,
        /// The oldest framework releases built with such a CUDA
        /// (`TensorFlow 2.12 (CUDA 11.8)`).
        frameworks: Vec<String>,
    },
    /// A `cuda.lock` that cannot be used as it is (untrusted input).
    #[error("invalid lock file {}: {reason}", path.display())]
    InvalidLock { path: PathBuf, reason: String },

    /// A lock's artifact whose URL is on no configured source (`--frozen`).
    #[error("{} names {url}, which is not on a configured source ({})", path.display(), allowed.join(", "))]
    LockForeignUrl {
        path: PathBuf,
        url: String,
        allowed: Vec<String>,
    },

    /// A lock that disagrees with what it is checked against.
    #[error("{} does not match {against}: {}", path.display(), differences.join("; "))]
    LockMismatch {
        path: PathBuf,
        against: String,
        differences: Vec<String>,
    },

    /// A lock made for other platforms only.
    #[error("{} has no artifacts for {platform} (it is locked for {})", path.display(), locked.join(", "))]
    LockPlatform {
        path: PathBuf,
        platform: String,
        locked: Vec<String>,
    },

    /// `--locked` / `--frozen` / `export` without a lock to use.
    #[error("no {file} {where_}")]
    NoLock { file: String, where_: String },

    /// `lock` without a SPEC where no `.cuda-version` applies.
    #[error("no .cuda-version in {} or its parents", dir.display())]
    NoVersionFile { dir: PathBuf },

    /// A server accepted the request but sent nothing, or less than the
    /// minimum rate, for the HTTP timeout (after the retries, or because an
    /// earlier request of this command already gave up on a stall).
    #[error("download stalled: {url}: {reason}")]
    NetworkStalled {
        url: String,
        reason: String,
        /// The timeout's default, for the hint.
        default_secs: u64,
    },

    /// `CUDAENV_HTTP_TIMEOUT` is not a number of seconds.
    #[error("{variable}=`{value}` is not a number of seconds (1 or more)")]
    InvalidHttpTimeout {
        variable: &'static str,
        value: String,
        default_secs: u64,
    },
    /// An environment variable whose value cannot be used.
    #[error("invalid {variable}=`{value}`: expected {expected}")]
    BadVariable {
        variable: &'static str,
        value: String,
        expected: String,
    },

    /// Encoding a value cudaenv built itself (JSON, TOML) failed.
    #[error("cannot encode {what}: {reason}")]
    Encode { what: &'static str, reason: String },

    /// A task run on another thread panicked or was cancelled.
    #[error("the {task} task failed: {reason}")]
    TaskFailed { task: &'static str, reason: String },

    #[error("cannot start the async runtime")]
    AsyncRuntime {
        #[source]
        source: std::io::Error,
    },

    #[error("cannot set up the HTTP client: {reason}")]
    HttpClient { reason: String },

    /// `exec`: the command exists but could not be started.
    #[error("cannot run `{command}`")]
    CannotRun {
        command: String,
        #[source]
        source: std::io::Error,
    },

    /// `explain` with nothing to explain.
    #[error("no error text given")]
    NoErrorText,

    /// `shell` without SPEC when no shell-specific version is set.
    #[error("no shell-specific version is set ({variable} is unset)")]
    NoShellVersion { variable: &'static str },

    /// `prefix` of `system`.
    #[error("the system toolkit is not managed by cudaenv, so it has no prefix")]
    SystemHasNoPrefix,

    /// `link --force` onto a version that was installed, not linked.
    #[error("`{name}` is an installed version, not a link")]
    NotALink { name: String },

    /// Something at a version's place that is not a complete version.
    #[error("{} exists but is not a complete version", path.display())]
    IncompleteVersion { path: PathBuf },

    /// The request handed to `verify`'s child process is malformed.
    #[error("invalid request for {command}: {reason}")]
    BadChildRequest {
        command: &'static str,
        reason: String,
    },

    /// A stored index page in the download cache that cannot be read back.
    #[error("corrupt index cache {}: {reason}", path.display())]
    CorruptCache { path: PathBuf, reason: String },

    /// A version's `.cudaenv/meta.toml` that cannot be read.
    #[error("invalid version metadata {}: {reason}", path.display())]
    BadMetadata { path: PathBuf, reason: String },

    /// A value a shell's code cannot carry.
    #[error("cannot pass the non-UTF-8 value {value} to {shell}")]
    NotUtf8ForShell { shell: &'static str, value: String },

    #[error("unknown shell `{name}`")]
    UnknownShell { name: String },
}

impl Error {
    /// Wraps an I/O error with what was being done and to which path.
    pub fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            context,
            path,
            source,
        }
    }

    /// Wraps the failure of a task run on another thread (a join error, a panic).
    pub fn task<E: std::fmt::Display>(task: &'static str) -> impl FnOnce(E) -> Error {
        move |e| Error::TaskFailed {
            task,
            reason: e.to_string(),
        }
    }

    /// Wraps a failure to encode a value cudaenv built itself.
    pub fn encode<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> Error {
        move |e| Error::Encode {
            what,
            reason: e.to_string(),
        }
    }

    /// Says which source a network or size failure came from, when the code
    /// that failed (a shared retry loop) did not know it.
    pub fn from_source(self, kind: SourceKind) -> Error {
        match self {
            Error::Network {
                url,
                reason,
                from: None,
            } => Error::Network {
                url,
                reason,
                from: Some(kind),
            },
            Error::SizeMismatch {
                url,
                reason,
                from: None,
            } => Error::SizeMismatch {
                url,
                reason,
                from: Some(kind),
            },
            other => other,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::InvalidSpec { .. }
            | Error::InvalidVersionFile { .. }
            | Error::InvalidName { .. }
            | Error::UnrepresentablePath { .. }
            | Error::NoRuntimeAt { .. }
            | Error::PathNotFound { .. }
            | Error::ConfirmationRequired { .. }
            | Error::Config { .. } => ExitCode::Usage,
            Error::BadManifest { .. } | Error::Unverified { .. } | Error::BadRunfile { .. } => {
                ExitCode::Integrity
            }
            Error::NotInstalled { .. } | Error::NoSuchVersion { .. } => ExitCode::NotInstalled,
            Error::CommandNotFound { .. } => ExitCode::CommandNotFound,
            Error::Interrupted => ExitCode::Interrupted,
            Error::NoDriver { .. } => ExitCode::NoDriver,
            Error::DriverTooOld { .. } => ExitCode::DriverTooOld,
            Error::ArchUnsupported { .. } => ExitCode::ArchUnsupported,
            Error::NoDevice { .. } => ExitCode::NoDevice,
            Error::LibraryMissing { .. }
            | Error::LibraryShadowed { .. }
            | Error::LibraryMismatch { .. } => ExitCode::LibraryMissing,
            Error::WrongResult { .. } => ExitCode::WrongResult,
            Error::CheckFailed { .. } | Error::VerifyCrashed { .. } => ExitCode::Failure,
            Error::VerifyTimedOut { .. } => ExitCode::TimedOut,
            Error::StackPredatesGpu { .. } => ExitCode::PtxJitOnly,
            Error::BadArchive { .. } | Error::HashMismatch { .. } | Error::SizeMismatch { .. } => {
                ExitCode::Integrity
            }
            Error::Network { .. } | Error::Offline { .. } => ExitCode::Network,
            Error::NotAvailable { .. } => ExitCode::NotAvailable,
            Error::InvalidFramework { .. } | Error::InvalidFacts { .. } => ExitCode::Usage,
            Error::UnknownFrameworkVersion { .. } => ExitCode::NotAvailable,
            Error::FrameworkNotInstalled { .. } => ExitCode::NotInstalled,
            Error::WouldNotRun {
                driver_too_old: true,
                ..
            } => ExitCode::DriverTooOld,
            Error::WouldNotRun { .. } => ExitCode::ArchUnsupported,
            Error::AlreadyExists { .. }
            | Error::NoHome
            | Error::ShimRecursion { .. }
            | Error::Aborted(_)
            | Error::Io { .. } => ExitCode::Failure,
            Error::UnknownHelpTopic { .. } | Error::UnknownCommand { .. } => ExitCode::Usage,
            Error::NoPin { .. } => ExitCode::Failure,
            Error::VersionNameRequired { .. } => ExitCode::Usage,
            Error::ManifestsUnreachable { .. } => ExitCode::Network,
            Error::ModulefileNotOurs { .. } => ExitCode::Failure,
            Error::NothingInstalled { .. } => ExitCode::NotInstalled,
            Error::UnsafeSystemRoot { .. } => ExitCode::UnsafeSystemRoot,
            Error::SystemRootNotWritable { .. } => ExitCode::SystemRootNotWritable,
            Error::NoSystemRoot => ExitCode::Usage,
            Error::NotAMirror { .. } => ExitCode::Usage,
            Error::BadMirror { .. } => ExitCode::Integrity,
            Error::InvalidTarget { .. } => ExitCode::Usage,
            Error::TraceFailed { .. } => ExitCode::TraceFailed,
            Error::InvalidLock { .. } | Error::LockForeignUrl { .. } => ExitCode::InvalidLock,
            Error::LockMismatch { .. } | Error::LockPlatform { .. } => ExitCode::LockMismatch,
            Error::NoLock { .. } | Error::NoVersionFile { .. } => ExitCode::Usage,
            Error::NetworkStalled { .. } => ExitCode::Network,
            Error::InvalidHttpTimeout { .. } => ExitCode::Usage,
            Error::BadVariable { .. } => ExitCode::Usage,
            Error::Encode { .. }
            | Error::TaskFailed { .. }
            | Error::AsyncRuntime { .. }
            | Error::HttpClient { .. }
            | Error::CannotRun { .. }
            | Error::NoErrorText
            | Error::NoShellVersion { .. }
            | Error::SystemHasNoPrefix
            | Error::NotALink { .. }
            | Error::IncompleteVersion { .. }
            | Error::BadChildRequest { .. }
            | Error::CorruptCache { .. }
            | Error::BadMetadata { .. }
            | Error::NotUtf8ForShell { .. }
            | Error::UnknownShell { .. } => ExitCode::Failure,
        }
    }

    /// What the user should do next, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::InvalidSpec { .. } => Some(
                "a spec looks like `12.4`, `12.4.1`, `11.2+cudnn8.1`, `system`, or the name of a linked version"
                    .into(),
            ),
            Error::InvalidVersionFile { path, .. } => Some(format!(
                "the file should hold one spec such as `12.4+cudnn9.1`; fix or remove {}",
                path.display()
            )),
            Error::NotInstalled { spec, installed, .. } => {
                let mut h = how_to_get(spec);
                if !installed.is_empty() {
                    h.push_str(&format!("; installed: {}", installed.join(", ")));
                }
                Some(h)
            }
            Error::NoRuntimeAt { .. } => Some(
                "point `cudaenv link` at a CUDA toolkit (e.g. /usr/local/cuda-12.4) or a Python environment's site-packages/nvidia directory"
                    .into(),
            ),
            Error::AlreadyExists { name } => Some(format!(
                "pick another name, or remove it first with `cudaenv uninstall {name}`"
            )),
            Error::NoSuchVersion { installed, .. } => Some(if installed.is_empty() {
                "nothing is installed".into()
            } else {
                format!(
                    "give the exact name as `cudaenv versions` prints it; installed: {}",
                    installed.join(", ")
                )
            }),
            Error::ConfirmationRequired { .. } => {
                Some("pass `-y` (`--yes`) to confirm from a script".into())
            }
            Error::CommandNotFound { available_in, .. } if !available_in.is_empty() => Some(format!(
                "it exists in: {}; select one of those with `cudaenv local` or `cudaenv shell`",
                available_in.join(", ")
            )),
            Error::ShimRecursion { command, .. } => Some(format!(
                "something between the shim and the real `{command}` runs `{command}` again \
                 (a wrapper script, or a PATH that leads back to the shims); {} counts the nesting",
                crate::context::env_vars::CUDAENV_SHIM_DEPTH
            )),
            Error::CommandNotFound { command, .. } => Some(format!(
                "no installed version provides `{command}`; if it is a toolkit tool (nvcc, ptxas, cuobjdump …), it comes with a `devel` or `full` install"
            )),
            Error::UnrepresentablePath { .. } => {
                Some("use a directory whose path has no `:` (for CUDAENV_ROOT, or the path given to `link`)".into())
            }
            Error::BadArchive { .. } => Some(
                "the archive was rejected as unsafe or corrupt and nothing was installed; if it comes from a mirror, check the mirror"
                    .into(),
            ),
            Error::HashMismatch { .. } => Some(
                "the download does not match the index's sha256 and was discarded; nothing was installed. A mirror or proxy may be serving altered files"
                    .into(),
            ),
            Error::SizeMismatch { from, .. } => Some(format!(
                "the file is not the one the {} announced and was discarded; nothing was installed. A mirror or proxy may be serving a different file{}",
                match from {
                    Some(SourceKind::Nvidia | SourceKind::Legacy) => "manifest",
                    _ => "index",
                },
                match from {
                    Some(k) => format!(" (check {})", where_configured(*k)),
                    None => String::new(),
                }
            )),
            Error::Network {
                url,
                reason,
                from: Some(SourceKind::Nvidia | SourceKind::Legacy),
            } => Some(format!(
                "{}; run again to resume{}",
                network_advice(url, reason),
                other_sources(url)
            )),
            Error::Network {
                from: Some(k @ (SourceKind::Pypi | SourceKind::Debian)),
                ..
            } => Some(format!(
                "check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the {} ({}); run again to resume",
                match k {
                    SourceKind::Debian => "Debian mirror",
                    _ => "package index",
                },
                where_configured(*k)
            )),
            Error::Network { from: None, .. } => Some(
                "check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the source's mirror (CUDAENV_PYPI_INDEX, CUDAENV_NVIDIA_MIRROR, CUDAENV_DEBIAN_MIRROR, config.toml); run again to resume"
                    .into(),
            ),
            Error::Offline { url, .. } => Some(format!(
                "run once without --offline to download it ({url})"
            )),
            Error::NotAvailable { hint, .. } => hint.clone(),
            Error::Unverified { .. } => Some(
                "pass --allow-unverified to accept a download that no pinned hash can check".into(),
            ),
            Error::BadRunfile { .. } | Error::BadManifest { .. } => Some(
                "nothing was installed; the file may be corrupt or tampered with: check the mirror (CUDAENV_NVIDIA_MIRROR) that served it"
                    .into(),
            ),
            Error::Config { .. } => Some("`cudaenv help configuration` lists the keys config.toml accepts".into()),
            Error::InvalidFacts { .. } => {
                Some("pass the output of `cudaenv doctor --json` (or its `facts` object)".into())
            }
            Error::InvalidLock { path, .. } => Some(format!(
                "nothing was downloaded or installed; regenerate it with `cudaenv lock` (or restore {} from version control)",
                path.display()
            )),
            Error::LockForeignUrl { .. } => Some(
                "a lock pins versions and hashes; the bytes come from your own sources (CUDAENV_PYPI_INDEX, CUDAENV_NVIDIA_MIRROR, CUDAENV_DEBIAN_MIRROR, config.toml). Use `--locked` to fetch the pinned files from them, or `cudaenv lock` to re-lock against them"
                    .into(),
            ),
            Error::LockMismatch { .. } => Some(
                "nothing was installed; run `cudaenv lock` to re-resolve, review the change and commit cuda.lock"
                    .into(),
            ),
            Error::LockPlatform { platform, locked, .. } => Some(format!(
                "nothing was installed; add this platform with `cudaenv lock --platform {},{platform}` and commit cuda.lock",
                locked.join(",")
            )),
            Error::NoLock { .. } => Some(
                "create one with `cudaenv lock` (next to .cuda-version) and commit it".into(),
            ),
            Error::NoVersionFile { .. } => Some(
                "pass a SPEC: `cudaenv lock 12.4+cudnn9` pins it in ./.cuda-version and locks it".into(),
            ),
            Error::InvalidFramework { .. } => Some(
                "write FRAMEWORK==VERSION, e.g. `tensorflow==2.10` or `torch==2.4` (`torch==2.4+cu118` picks a build)"
                    .into(),
            ),
            Error::UnknownFrameworkVersion { known, .. } if !known.is_empty() => {
                Some(format!("known: {}", known.join(", ")))
            }
            Error::FrameworkNotInstalled { framework, .. } => Some(format!(
                "name a version (`cudaenv compat {framework}==VERSION`), or point CUDAENV_PYTHON at the interpreter whose environment has it"
            )),
            Error::WouldNotRun {
                driver_too_old,
                target,
                gpu,
                ..
            } => Some(match (*driver_too_old, target) {
                (true, None) => "upgrade the NVIDIA driver, pick an older CUDA (`cudaenv compat` shows what each needs), or drop --strict to install anyway".into(),
                (true, Some(name)) => format!("upgrade {name}'s NVIDIA driver, pick an older CUDA (`cudaenv compat` with the same target shows what each needs), or drop --strict to install anyway"),
                (false, _) => format!("pick a CUDA release that supports {gpu}, or drop --strict to install anyway"),
            }),
            Error::NoDriver { .. } => Some(
                "on a machine with an NVIDIA GPU, install NVIDIA's driver (`nvidia-smi` then lists the GPU); \
                 in a container, start it with the GPU exposed (e.g. `docker run --gpus all`). On a machine \
                 without one, nothing can be verified. cudaenv installs toolkits, never the driver"
                    .into(),
            ),
            Error::DriverTooOld {
                driver_cuda,
                min_driver,
                ..
            } => Some(format!(
                "upgrade the NVIDIA driver to {min_driver} or newer, or select a CUDA this driver runs \
                 (`cudaenv install {driver_cuda}`, then `cudaenv local {driver_cuda}`)"
            )),
            Error::ArchUnsupported { instead, .. } => Some(format!(
                "select a CUDA that supports this GPU: {instead}"
            )),
            Error::NoDevice {
                visible_devices: Some(v),
                present,
                ..
            } => Some(format!(
                "CUDA_VISIBLE_DEVICES={v:?} hides {}; unset it or list a GPU index (e.g. CUDA_VISIBLE_DEVICES=0)",
                match present {
                    Some(1) => "the driver's only GPU".to_string(),
                    Some(n) => format!("the driver's {n} GPUs"),
                    None => "the GPUs".to_string(),
                }
            )),
            Error::NoDevice { .. } => Some(
                "check `nvidia-smi`; in a container, start it with the GPU exposed (e.g. `docker run --gpus all`)"
                    .into(),
            ),
            Error::LibraryMissing { version, .. } if version == "system" => Some(
                "no version is selected and the loader finds no copy: select one \
                 (`cudaenv local 12.4`, `cudaenv verify 12.4`) or put a toolkit's lib64 on LD_LIBRARY_PATH"
                    .into(),
            ),
            Error::LibraryMissing { version, .. } => Some(format!(
                "version `{version}` lacks it: reinstall it, or link a tree that has it; \
                 `cudaenv verify --json` lists every soname tried"
            )),
            Error::LibraryShadowed { path, .. } => Some(format!(
                "another copy is found first: remove {} from LD_LIBRARY_PATH (and LD_PRELOAD), \
                 or install the library into the version",
                path.parent().unwrap_or(path).display()
            )),
            Error::LibraryMismatch { .. } => Some(
                "the files changed since the version was recorded, or another copy shadows them; \
                 reinstall the version"
                    .into(),
            ),
            Error::WrongResult { .. } => Some(
                "a GPU, driver or library that computes wrong numbers: check `nvidia-smi -q -d ECC,CLOCK` \
                 for memory errors or overclocking, try another driver; NVIDIA_TF32_OVERRIDE=1 also makes \
                 fp32 products inexact"
                    .into(),
            ),
            Error::VerifyTimedOut {
                stage, output, why, ..
            } => {
                let mut hint = match why {
                    Some(why) => why.clone(),
                    None if stage.starts_with("cuInit") || stage.contains("libcuda") => {
                        "the driver hangs in its initialisation (cuInit): every CUDA program on this \
                         machine will hang the same way. Check `nvidia-smi` (if it hangs too, the driver \
                         or GPU is stuck: reload the kernel module or reboot; look for Xid errors in \
                         `dmesg`). If the checks are only slow (a large --size), raise the limit with \
                         --timeout SECS"
                            .to_string()
                    }
                    None => format!(
                        "`{stage}` did not return. Run another CUDA program (`nvidia-smi`, a framework's \
                         first GPU call) to see whether it waits too: if so the driver or GPU is stuck \
                         (look for Xid errors in `dmesg`); if not, the call is only slow here (a large \
                         --size, code being compiled): raise the limit with --timeout SECS"
                    ),
                };
                if !output.is_empty() {
                    hint.push_str(&format!("\nthe libraries' last output was:\n{output}"));
                }
                Some(hint)
            }
            Error::StackPredatesGpu {
                sm,
                cuda,
                first,
                frameworks,
                ..
            } => {
                let instead = match first {
                    Some(f) => format!(
                        "use CUDA {f} or newer, the first with native {sm} code (`cudaenv install {f}`){}",
                        if frameworks.is_empty() {
                            String::new()
                        } else {
                            format!(", and a framework built for it: {}", frameworks.join(", "))
                        }
                    ),
                    None => "use the newest CUDA release".to_string(),
                };
                Some(format!(
                    "{instead}. With CUDA {cuda} every library kernel this GPU needs is JIT-compiled \
                     by the driver at its first use (minutes for cuBLAS; again whenever the compute \
                     cache, CUDA_CACHE_MAXSIZE, is too small to keep it), and libraries that ship no \
                     PTX fail with \"no kernel image is available\""
                ))
            }
            Error::VerifyCrashed { output, .. } if !output.is_empty() => Some(format!(
                "the libraries' last output was:\n{output}"
            )),
            Error::UnknownHelpTopic { topics, .. } => Some(format!(
                "topics: {}; `cudaenv help` lists the commands too",
                topics.join(", ")
            )),
            Error::UnknownCommand { .. } => Some("`cudaenv --help` lists the commands".into()),
            Error::NoPin { installed, .. } => Some(match installed.as_slice() {
                [] => "pin one with `cudaenv local SPEC` once it is installed: `cudaenv install 12.4`, \
                       then `cudaenv local 12.4` (`cudaenv ls-remote` lists what can be installed)"
                    .into(),
                _ => format!(
                    "pin one with `cudaenv local SPEC`; installed: {}",
                    installed.join(", ")
                ),
            }),
            Error::VersionNameRequired { command, installed } => Some(match installed.as_slice() {
                [] => "nothing is installed (`cudaenv versions` lists what is)".into(),
                _ => format!(
                    "`cudaenv {command} NAME`; installed: {}",
                    installed.join(", ")
                ),
            }),
            Error::ManifestsUnreachable { url, reason } => Some(format!(
                "{}; nothing was changed: cudaenv keeps using the manifests it has",
                network_advice(url, reason)
            )),
            Error::UnsafeSystemRoot { path, .. } => Some(format!(
                "anyone who can write there can plant libraries in every user's processes; \
                 the administrator should run `chmod go-w {}` (or remove the version); \
                 meanwhile use a version of your own root",
                path.display()
            )),
            Error::SystemRootNotWritable { root, .. } => Some(format!(
                "use your own root (leave out --system); or, as the system root's owner, run it with \
                 `cudaenv install --system` or CUDAENV_ROOT={}",
                root.display()
            )),
            Error::NoSystemRoot => Some(format!(
                "set {} or `system-root` in $CUDAENV_ROOT/config.toml",
                crate::context::env_vars::CUDAENV_SYSTEM_ROOT
            )),
            Error::NothingInstalled { .. } => Some(
                "install one first (`cudaenv install 12.4`) or adopt one (`cudaenv link NAME PATH`)"
                    .into(),
            ),
            Error::ModulefileNotOurs { .. } => Some(
                "export into a directory of its own (`module use` it), or move that file away".into(),
            ),
            Error::NotAMirror { .. } => Some(
                "give a new or empty directory, or one that `cudaenv mirror` wrote before (it adds to it)"
                    .into(),
            ),
            Error::BadMirror { .. } => Some(
                "the record was changed or damaged; nothing was written. Write the mirror anew into an empty directory"
                    .into(),
            ),
            Error::InvalidTarget { .. } => Some(
                "describe the machine to plan for as `--target-driver 550.54.15 --target-arch sm_90` (`nvidia-smi --query-gpu=driver_version,compute_cap --format=csv` there prints both)"
                    .into(),
            ),
            Error::TraceFailed { .. } => Some(
                "check that the command runs with `cudaenv exec -- COMMAND`, and that the temporary directory ($TMPDIR) is writable"
                    .into(),
            ),
            Error::NetworkStalled { default_secs, .. } => Some(format!(
                "the server (or a proxy on the way) accepted the connection but stopped sending; try again later, or allow slower servers more time with {}=SECONDS (default {default_secs})",
                crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
            )),
            Error::InvalidHttpTimeout { default_secs, .. } => Some(format!(
                "set it to whole seconds, e.g. {}=60, or unset it for the default ({default_secs} s)",
                crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
            )),
            Error::BadVariable { variable, .. } => Some(format!(
                "set {variable} to such a value, or unset it (`cudaenv help environment` lists the variables)"
            )),
            Error::Encode { .. } | Error::TaskFailed { .. } => Some(
                "this is a bug in cudaenv; nothing was committed half-way. Please report it with the command that failed"
                    .into(),
            ),
            Error::AsyncRuntime { .. } | Error::HttpClient { .. } => Some(
                "the system refused a resource cudaenv needs (threads, file descriptors, TLS roots): check `ulimit -a`"
                    .into(),
            ),
            Error::CannotRun { .. } => Some(
                "check that the file is executable and built for this machine (`file`, `ldd`)".into(),
            ),
            Error::NoErrorText => Some(
                "pass the message as an argument or on standard input: `cudaenv explain \"libcudart.so.11.0: cannot open…\"`"
                    .into(),
            ),
            Error::NoShellVersion { .. } => Some(
                "`cudaenv shell SPEC` sets one for this shell; `cudaenv version` shows what is active and why".into(),
            ),
            Error::SystemHasNoPrefix => Some(
                "select a cudaenv version (`cudaenv prefix 12.4`, `cudaenv local 12.4`); `cudaenv versions` lists them"
                    .into(),
            ),
            Error::NotALink { name } => Some(format!(
                "`--force` only replaces links: run `cudaenv uninstall {name}` first, or pick another name"
            )),
            Error::IncompleteVersion { .. } => Some("pass --force to replace it".into()),
            Error::BadChildRequest { .. } => Some(
                "this process is started by `cudaenv verify`; run that instead".into(),
            ),
            Error::CorruptCache { path, .. } => Some(format!(
                "remove {} (or run once without --offline to read the index again)",
                path.display()
            )),
            Error::BadMetadata { path, .. } => Some(format!(
                "the version's record was changed or damaged: reinstall it, or remove {} with `cudaenv uninstall`",
                path.parent()
                    .and_then(|p| p.parent())
                    .unwrap_or(path)
                    .display()
            )),
            Error::NotUtf8ForShell { .. } => Some(
                "use a path or value that is valid UTF-8, or another shell (bash, zsh, fish)".into(),
            ),
            Error::UnknownShell { .. } => Some("expected bash, zsh, fish or pwsh".into()),
            Error::UnknownFrameworkVersion { .. }
            | Error::VerifyCrashed { .. }
            | Error::PathNotFound { .. }
            | Error::InvalidName { .. }
            | Error::NoHome
            | Error::Aborted(_)
            | Error::Interrupted
            | Error::Io { .. }
            | Error::CheckFailed { .. } => None,
        }
    }

    /// A short machine-readable name for the kind of problem (`--json`).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::NoDriver { .. } => "no_driver",
            Error::DriverTooOld { .. } => "driver_too_old",
            Error::ArchUnsupported { .. } => "arch_unsupported",
            Error::NoDevice { .. } => "no_device",
            Error::LibraryMissing { .. } => "library_missing",
            Error::LibraryShadowed { .. } => "library_shadowed",
            Error::LibraryMismatch { .. } => "library_mismatch",
            Error::WrongResult { .. } => "wrong_result",
            Error::CheckFailed { .. } => "check_failed",
            Error::VerifyCrashed { .. } => "verify_crashed",
            Error::VerifyTimedOut { .. } => "timed_out",
            Error::StackPredatesGpu { .. } => "ptx_jit_only",
            Error::NotInstalled { .. } | Error::CommandNotFound { .. } => "not_installed",
            Error::InvalidSpec { .. }
            | Error::InvalidVersionFile { .. }
            | Error::InvalidName { .. }
            | Error::UnrepresentablePath { .. }
            | Error::BadVariable { .. }
            | Error::InvalidHttpTimeout { .. } => "usage",
            Error::NoSuchVersion { .. }
            | Error::NoRuntimeAt { .. }
            | Error::PathNotFound { .. }
            | Error::ConfirmationRequired { .. }
            | Error::AlreadyExists { .. }
            | Error::ShimRecursion { .. }
            | Error::NoHome
            | Error::BadArchive { .. }
            | Error::HashMismatch { .. }
            | Error::SizeMismatch { .. }
            | Error::Network { .. }
            | Error::NetworkStalled { .. }
            | Error::Offline { .. }
            | Error::NotAvailable { .. }
            | Error::Aborted(_)
            | Error::Interrupted
            | Error::Io { .. }
            | Error::BadManifest { .. }
            | Error::Unverified { .. }
            | Error::BadRunfile { .. }
            | Error::Config { .. }
            | Error::InvalidFacts { .. }
            | Error::InvalidFramework { .. }
            | Error::UnknownFrameworkVersion { .. }
            | Error::FrameworkNotInstalled { .. }
            | Error::WouldNotRun { .. }
            | Error::UnknownHelpTopic { .. }
            | Error::UnknownCommand { .. }
            | Error::NoPin { .. }
            | Error::VersionNameRequired { .. }
            | Error::ManifestsUnreachable { .. }
            | Error::ModulefileNotOurs { .. }
            | Error::NothingInstalled { .. }
            | Error::UnsafeSystemRoot { .. }
            | Error::SystemRootNotWritable { .. }
            | Error::NoSystemRoot
            | Error::NotAMirror { .. }
            | Error::BadMirror { .. }
            | Error::InvalidTarget { .. }
            | Error::TraceFailed { .. }
            | Error::InvalidLock { .. }
            | Error::LockForeignUrl { .. }
            | Error::LockMismatch { .. }
            | Error::LockPlatform { .. }
            | Error::NoLock { .. }
            | Error::NoVersionFile { .. }
            | Error::Encode { .. }
            | Error::TaskFailed { .. }
            | Error::AsyncRuntime { .. }
            | Error::HttpClient { .. }
            | Error::CannotRun { .. }
            | Error::NoErrorText
            | Error::NoShellVersion { .. }
            | Error::SystemHasNoPrefix
            | Error::NotALink { .. }
            | Error::IncompleteVersion { .. }
            | Error::BadChildRequest { .. }
            | Error::CorruptCache { .. }
            | Error::BadMetadata { .. }
            | Error::NotUtf8ForShell { .. }
            | Error::UnknownShell { .. } => "failure",
        }
    }
}

/// Where the user configures the server of a source, for hints.
fn where_configured(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Pypi => "CUDAENV_PYPI_INDEX, PIP_INDEX_URL",
        SourceKind::Nvidia | SourceKind::Legacy => "CUDAENV_NVIDIA_MIRROR",
        SourceKind::Debian => "CUDAENV_DEBIAN_MIRROR",
    }
}

/// What to check when `url` could not be fetched: a host name that did not
/// resolve is said as such (reqwest's message alone hides it).
fn network_advice(url: &str, reason: &str) -> String {
    let host = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', ':', '?']).next().unwrap_or(rest))
        .unwrap_or(url);
    if reason.contains("dns error") || reason.contains("failed to lookup address") {
        format!(
            "the host name `{host}` did not resolve: check its spelling (CUDAENV_NVIDIA_MIRROR, \
             `nvidia-mirror` in config.toml), the DNS settings, or the proxy (HTTPS_PROXY)"
        )
    } else {
        "check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the NVIDIA mirror \
         (CUDAENV_NVIDIA_MIRROR, `nvidia-mirror` in config.toml)"
            .into()
    }
}

/// For a download from NVIDIA's redist server that failed: which other
/// source serves the same thing, so that a machine that cannot reach NVIDIA
/// (a firewall, a region) knows its way round. The developer tools of a
/// 12.x devel profile have none among cudaenv's sources (PyPI's 12.x nvcc
/// wheels are ptxas and NVVM only; the Debian source has the runtime
/// libraries): PyPI's from CUDA 13, or Debian's own toolkit package.
fn other_sources(url: &str) -> String {
    // `…/redist/<component>/<platform>/<component>-<platform>-<version>-archive.tar.xz`
    let mut parts = url.rsplit('/');
    let (Some(file), Some(_platform), Some(component)) = (parts.next(), parts.next(), parts.next())
    else {
        return String::new();
    };
    let Some(version) = file
        .strip_suffix("-archive.tar.xz")
        .and_then(|f| f.rsplit('-').next())
    else {
        return String::new();
    };
    let major = version.split('.').next().unwrap_or("");
    let tool = matches!(
        component,
        "cuda_nvcc" | "cuda_cuobjdump" | "cuda_nvdisasm" | "cuda_nvprune" | "cuda_cuxxfilt"
    );
    if tool && major == "12" {
        format!(
            ". Without NVIDIA's server, no other source of cudaenv has CUDA {version}'s `{}` (PyPI's 12.x nvcc is ptxas and NVVM only; Debian's packages give the runtime libraries): PyPI has a complete nvcc from CUDA 13 (`cudaenv install 13 --profile devel`), Debian's own `nvidia-cuda-toolkit` package has nvcc 12.4 system-wide (apt, as root), and `--without nvcc,cuobjdump,nvdisasm,nvprune` installs the rest of 12.x from PyPI",
            component.trim_start_matches("cuda_")
        )
    } else if !tool && ["11", "12", "13"].contains(&major) {
        ". Without NVIDIA's server: PyPI has the CUDA libraries of 11.7 and later (`--source pypi`), Debian's packages those of 11.2.2, 11.8.0 and 12.4.1 (`--source debian`)".to_string()
    } else {
        String::new()
    }
}

/// What to run to make `spec` available: `install` for a CUDA version; for a
/// name (which only `link` creates) installing makes no sense.
pub fn how_to_get(spec: &str) -> String {
    match crate::spec::Spec::parse(spec) {
        Ok(crate::spec::Spec::Name(_)) => format!(
            "`{spec}` is a name, not a CUDA version: create it with `cudaenv link {spec} PATH`"
        ),
        _ => format!("run `cudaenv install {spec}` to install it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_nvidia_names_the_sources_that_would_serve_it() {
        let nvcc = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz";
        let s = other_sources(nvcc);
        assert!(s.contains("`cudaenv install 13 --profile devel`"), "{s}");
        assert!(s.contains("nvidia-cuda-toolkit"), "{s}");
        let lib = "https://developer.download.nvidia.com/compute/cuda/redist/libcublas/linux-x86_64/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz";
        assert!(other_sources(lib).contains("`--source debian`"));
        assert_eq!(other_sources("https://example.org/x.run"), "");
    }

    /// Fails to compile when a code is added: add it to `ExitCode::ALL` and the docs.
    fn _all_is_exhaustive(c: ExitCode) {
        match c {
            ExitCode::Success
            | ExitCode::Failure
            | ExitCode::Usage
            | ExitCode::NotInstalled
            | ExitCode::Integrity
            | ExitCode::Network
            | ExitCode::NotAvailable
            | ExitCode::UnsafeSystemRoot
            | ExitCode::SystemRootNotWritable
            | ExitCode::NoDriver
            | ExitCode::DriverTooOld
            | ExitCode::ArchUnsupported
            | ExitCode::NoDevice
            | ExitCode::LibraryMissing
            | ExitCode::WrongResult
            | ExitCode::DoctorErrors
            | ExitCode::TimedOut
            | ExitCode::TraceFailed
            | ExitCode::CommandNotFound
            | ExitCode::Interrupted
            | ExitCode::PtxJitOnly
            | ExitCode::InvalidLock
            | ExitCode::LockMismatch => {}
        }
    }

    /// Defect: hints guessed the source from `/compute/` in the URL, so a
    /// PyPI mirror under such a path was sent to CUDAENV_NVIDIA_MIRROR. The
    /// hint follows the source the error carries.
    #[test]
    fn a_hint_names_the_source_the_error_carries_not_a_url_guess() {
        let url = "https://mirror.example/compute/pypi/simple/nvidia-cuda-runtime/";
        let hint = |from| {
            Error::Network {
                url: url.into(),
                reason: "server answered 503".into(),
                from,
            }
            .hint()
            .unwrap()
        };
        let pypi = hint(Some(SourceKind::Pypi));
        assert!(pypi.contains("CUDAENV_PYPI_INDEX"), "{pypi}");
        assert!(!pypi.contains("NVIDIA"), "{pypi}");
        let nvidia = hint(Some(SourceKind::Nvidia));
        assert!(nvidia.contains("CUDAENV_NVIDIA_MIRROR"), "{nvidia}");
        assert!(!nvidia.contains("CUDAENV_PYPI_INDEX"), "{nvidia}");
        let debian = hint(Some(SourceKind::Debian));
        assert!(debian.contains("CUDAENV_DEBIAN_MIRROR"), "{debian}");
        let size = Error::SizeMismatch {
            url: "https://h/pkgs/libcudart.deb".into(),
            reason: "got 1 bytes".into(),
            from: Some(SourceKind::Debian),
        }
        .hint()
        .unwrap();
        assert!(size.contains("CUDAENV_DEBIAN_MIRROR"), "{size}");
        // A failure that no source was named for is filled in by its caller.
        let e = Error::Network {
            url: url.into(),
            reason: "x".into(),
            from: None,
        }
        .from_source(SourceKind::Pypi);
        assert!(matches!(
            e,
            Error::Network {
                from: Some(SourceKind::Pypi),
                ..
            }
        ));
    }

    /// docs/exit-codes.md is the public contract: every code must be in its table.
    #[test]
    fn every_exit_code_is_documented() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/exit-codes.md"));
        for code in ExitCode::ALL {
            let row = format!("| `{}` |", code.code());
            assert!(
                doc.contains(&row),
                "docs/exit-codes.md lacks {code:?} ({row})"
            );
        }
    }
}
