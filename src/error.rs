//! The library's error type and the exit codes it maps to.
//!
//! Errors carry the values a user needs (the file, the URL, expected and actual
//! hashes) and know their own `hint`: the one thing to do next. They are printed
//! once, at the top of the binary (`ui::report_error`, called by `cli::main`), as `error:` + the chain
//! of causes + `hint:`. Exit codes are deliberately few; each is documented in
//! `docs/exit-codes.md` and stable for scripts.

use std::path::PathBuf;

use crate::i18n::Msg;
use crate::msg;
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
    /// The file system a download or an install writes to has no room for
    /// it (checked before a download, and while one of unknown size
    /// streams; a disk that fills up while unpacking is this too).
    NoSpace = 6,
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
    pub const ALL: [ExitCode; 24] = [
        ExitCode::Success,
        ExitCode::Failure,
        ExitCode::Usage,
        ExitCode::NotInstalled,
        ExitCode::Integrity,
        ExitCode::Network,
        ExitCode::NoSpace,
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

    /// A project file (`.cuda-version`, `cuda.lock`) this user may not read:
    /// a permission problem, not a malformed file.
    #[error("cannot read {}: permission denied{}", path.display(), match (mode, owner) {
        (Some(m), Some(u)) => format!(" (mode {m:04o}, owned by uid {u})"),
        _ => String::new(),
    })]
    UnreadableFile {
        path: PathBuf,
        mode: Option<u32>,
        owner: Option<u32>,
    },

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

    #[error("the path {} cannot be used in {variable}: {reason}", shown_path(path))]
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

    #[error("{algorithm} mismatch for {url}: expected {expected}, got {actual}")]
    HashMismatch {
        /// `sha256`, or `md5` for the files only NVIDIA's md5 pins.
        algorithm: &'static str,
        url: String,
        expected: String,
        actual: String,
    },

    /// A write under a directory cudaenv was given would go through a link
    /// (or a non-directory) inside it (`os::fs::create_dirs_within`).
    #[error("refusing to write under {}: {} is a symbolic link or not a directory, and cudaenv never writes through a link inside a directory it was given", dir.display(), path.display())]
    WriteOutside { dir: PathBuf, path: PathBuf },

    /// A `file://` artifact that is a FIFO, a device or a directory.
    #[error("refusing {url}: it is {what}, not a regular file")]
    NotRegularArtifact { url: String, what: &'static str },

    /// The download cache's file system has no room for a download: before
    /// it starts (`needed` is its announced size, or one write block when
    /// none is announced), or while it streams (`needed` is what it had
    /// plus the next block; `announced: false`).
    #[error("not enough free space for {file} in {}: it needs {}{}, {} are free", dir.display(), if *announced { "" } else { "more than " }, crate::spec::human_bytes(*needed), crate::spec::human_bytes(*available))]
    NoSpace {
        dir: PathBuf,
        file: String,
        needed: u64,
        available: u64,
        /// Whether `needed` is the file's announced size (else a lower bound).
        announced: bool,
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

    /// A framework release without GPU builds for native Windows
    /// (TensorFlow ≥ 2.11): where it does have them, and the last release
    /// that has them on Windows.
    #[error(
        "{framework} {version} has no GPU support on native Windows: its Windows GPU builds end with {last}"
    )]
    NoNativeWindowsGpu {
        framework: String,
        version: String,
        /// The stack of its Linux build (what it uses under WSL2).
        linux_spec: Option<String>,
        /// The last release with a native Windows GPU build, and its stack.
        last: String,
        last_spec: String,
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

    /// A path a system version would activate that other users control: it
    /// does not exist and they can create it, or another user owns it.
    #[error("refusing to activate `{version}` from the system root: {} {why}", path.display())]
    UntrustedSystemPath {
        path: PathBuf,
        why: String,
        version: String,
    },

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
    /// `trace` on a platform whose loader has no debug output to read (Windows).
    #[error(
        "trace is not available on {platform}: it reads the Linux loader's own log of what it loads (LD_DEBUG), and {platform}'s loader keeps none"
    )]
    TraceUnsupported { platform: String },

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

    /// An installed version of the locked name whose files are not the
    /// locked ones (`install --locked` compares them, not just the name).
    #[error("the installed {version} is not what {} locks: {}", path.display(), differences.join("; "))]
    InstalledDiffersFromLock {
        path: PathBuf,
        version: String,
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
    #[error(
        "cannot pass the value {value} to {shell}: it is non-UTF-8 text (or, for cmd, holds a quote or a line break)"
    )]
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
            | Error::UnreadableFile { .. }
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
            Error::NoSpace { .. } => ExitCode::NoSpace,
            // A disk that fills up while a version is unpacked or written.
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull => {
                ExitCode::NoSpace
            }
            Error::WriteOutside { .. } => ExitCode::Usage,
            Error::BadArchive { .. }
            | Error::HashMismatch { .. }
            | Error::SizeMismatch { .. }
            | Error::NotRegularArtifact { .. } => ExitCode::Integrity,
            Error::Network { .. } | Error::Offline { .. } => ExitCode::Network,
            Error::NotAvailable { .. } => ExitCode::NotAvailable,
            Error::InvalidFramework { .. } | Error::InvalidFacts { .. } => ExitCode::Usage,
            Error::UnknownFrameworkVersion { .. } | Error::NoNativeWindowsGpu { .. } => {
                ExitCode::NotAvailable
            }
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
            Error::UnsafeSystemRoot { .. } | Error::UntrustedSystemPath { .. } => {
                ExitCode::UnsafeSystemRoot
            }
            Error::SystemRootNotWritable { .. } => ExitCode::SystemRootNotWritable,
            Error::NoSystemRoot => ExitCode::Usage,
            Error::NotAMirror { .. } => ExitCode::Usage,
            Error::BadMirror { .. } => ExitCode::Integrity,
            Error::InvalidTarget { .. } => ExitCode::Usage,
            Error::TraceFailed { .. } | Error::TraceUnsupported { .. } => ExitCode::TraceFailed,
            Error::InvalidLock { .. } | Error::LockForeignUrl { .. } => ExitCode::InvalidLock,
            Error::LockMismatch { .. }
            | Error::LockPlatform { .. }
            | Error::InstalledDiffersFromLock { .. } => ExitCode::LockMismatch,
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

    /// What the user should do next, when there is something useful to say
    /// (in English: what `--json` and the tests read).
    pub fn hint(&self) -> Option<String> {
        self.hint_msg().map(|m| m.en())
    }

    /// The hint as a message, shown in the user's language by the printer.
    pub fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Error::InvalidSpec { .. } => msg!("hint-invalid-spec"),
            Error::InvalidVersionFile { path, .. } => {
                msg!("hint-invalid-version-file", path = path.display())
            }
            Error::UnreadableFile { path, .. } => {
                msg!("hint-unreadable-file", path = path.display())
            }
            Error::UnrepresentablePath { path, .. }
                if path
                    .as_os_str()
                    .as_encoded_bytes()
                    .iter()
                    .any(|b| matches!(b, b'\n' | b'\r')) =>
            {
                msg!("hint-path-with-line-break")
            }
            Error::WriteOutside { path, .. } => {
                msg!("hint-write-outside", path = path.display())
            }
            Error::NoSpace { .. } => msg!("hint-no-space"),
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull => {
                msg!("hint-no-space")
            }
            Error::NotRegularArtifact { .. } => msg!("hint-not-regular-artifact"),
            Error::InstalledDiffersFromLock { .. } => msg!("hint-installed-differs-from-lock"),
            Error::UntrustedSystemPath { .. } => msg!("hint-untrusted-system-path"),
            Error::NotInstalled {
                spec, installed, ..
            } => {
                let h = how_to_get_msg(spec);
                if installed.is_empty() {
                    h
                } else {
                    msg!("hint-installed-list", hint => h, installed = installed.join(", "))
                }
            }
            Error::NoRuntimeAt { .. } => msg!("hint-no-runtime-at"),
            Error::AlreadyExists { name } => msg!("hint-already-exists", name = name),
            Error::NoSuchVersion { installed, .. } => {
                if installed.is_empty() {
                    msg!("hint-nothing-is-installed")
                } else {
                    msg!("hint-no-such-version", installed = installed.join(", "))
                }
            }
            Error::ConfirmationRequired { .. } => msg!("hint-confirmation-required"),
            Error::CommandNotFound { available_in, .. } if !available_in.is_empty() => {
                msg!(
                    "hint-command-in-other-versions",
                    versions = available_in.join(", ")
                )
            }
            Error::ShimRecursion { command, .. } => msg!(
                "hint-shim-recursion",
                command = command,
                variable = crate::context::env_vars::CUDAENV_SHIM_DEPTH
            ),
            Error::CommandNotFound { command, .. } => {
                msg!("hint-command-not-found", command = command)
            }
            Error::UnrepresentablePath { .. } => msg!("hint-unrepresentable-path"),
            Error::BadArchive { .. } => msg!("hint-bad-archive"),
            Error::HashMismatch {
                algorithm: "md5", ..
            } => msg!("hint-md5-mismatch"),
            Error::HashMismatch { .. } => msg!("hint-hash-mismatch"),
            Error::SizeMismatch { from, .. } => {
                let h = match from {
                    Some(SourceKind::Nvidia | SourceKind::Legacy) => {
                        msg!("hint-size-mismatch-manifest")
                    }
                    _ => msg!("hint-size-mismatch-index"),
                };
                match from {
                    Some(k) => msg!("hint-check-where", hint => h, place = where_configured(*k)),
                    None => h,
                }
            }
            Error::Network {
                url,
                reason,
                from: Some(SourceKind::Nvidia | SourceKind::Legacy),
            } => msg!(
                "hint-run-again-to-resume",
                advice => network_advice(url, reason),
                others = other_sources(url)
            ),
            Error::Network {
                from: Some(k @ (SourceKind::Pypi | SourceKind::Debian)),
                ..
            } => match k {
                SourceKind::Debian => {
                    msg!("hint-network-debian-mirror", place = where_configured(*k))
                }
                _ => msg!("hint-network-package-index", place = where_configured(*k)),
            },
            Error::Network { from: None, .. } => msg!("hint-network-any"),
            Error::Offline { url, .. } => msg!("hint-offline", url = url),
            Error::NotAvailable { hint, .. } => return hint.clone().map(Msg::Verbatim),
            Error::Unverified { .. } => msg!("hint-unverified"),
            Error::BadRunfile { .. } | Error::BadManifest { .. } => msg!("hint-bad-nvidia-file"),
            Error::Config { .. } => msg!("hint-config"),
            Error::InvalidFacts { .. } => msg!("hint-invalid-facts"),
            Error::InvalidLock { path, .. } => msg!("hint-invalid-lock", path = path.display()),
            Error::LockForeignUrl { .. } => msg!("hint-lock-foreign-url"),
            Error::LockMismatch { .. } => msg!("hint-lock-mismatch"),
            Error::LockPlatform {
                platform, locked, ..
            } => msg!(
                "hint-lock-platform",
                platforms = format!("{},{platform}", locked.join(","))
            ),
            Error::NoLock { .. } => msg!("hint-no-lock"),
            Error::NoVersionFile { .. } => msg!("hint-no-version-file"),
            Error::InvalidFramework { .. } => msg!("hint-invalid-framework"),
            Error::UnknownFrameworkVersion { known, .. } if !known.is_empty() => {
                msg!("hint-known", known = known.join(", "))
            }
            Error::FrameworkNotInstalled { framework, .. } => {
                msg!("hint-framework-not-installed", framework = framework)
            }
            Error::NoNativeWindowsGpu {
                framework,
                version,
                linux_spec,
                last,
                last_spec,
            } => {
                let wsl = match linux_spec {
                    Some(spec) => msg!(
                        "hint-no-native-windows-gpu-wsl-spec",
                        framework = framework,
                        version = version,
                        spec = spec
                    ),
                    None => msg!("hint-no-native-windows-gpu-wsl"),
                };
                msg!(
                    "hint-no-native-windows-gpu",
                    wsl => wsl,
                    framework = framework,
                    last = last,
                    spec = last_spec
                )
            }
            Error::WouldNotRun {
                driver_too_old,
                target,
                gpu,
                ..
            } => match (*driver_too_old, target) {
                (true, None) => msg!("hint-would-not-run-driver"),
                (true, Some(name)) => msg!("hint-would-not-run-target-driver", machine = name),
                (false, _) => msg!("hint-would-not-run-gpu", gpu = gpu),
            },
            Error::NoDriver { .. } => msg!("hint-no-driver"),
            Error::DriverTooOld {
                driver_cuda,
                min_driver,
                ..
            } => msg!(
                "hint-driver-too-old",
                driver = min_driver,
                cuda = driver_cuda
            ),
            Error::ArchUnsupported { instead, .. } => {
                msg!("hint-arch-unsupported", instead = instead)
            }
            Error::NoDevice {
                visible_devices: Some(v),
                present,
                ..
            } => {
                let value = format!("{v:?}");
                match present {
                    Some(1) => msg!("hint-no-device-hidden-one", value = value),
                    Some(n) => msg!("hint-no-device-hidden-many", value = value, count = n),
                    None => msg!("hint-no-device-hidden", value = value),
                }
            }
            Error::NoDevice { .. } => msg!("hint-no-device"),
            Error::LibraryMissing { version, .. } if version == "system" => {
                msg!("hint-library-missing-system")
            }
            Error::LibraryMissing { version, .. } => {
                msg!("hint-library-missing", version = version)
            }
            Error::LibraryShadowed { path, .. } => msg!(
                "hint-library-shadowed",
                dir = path.parent().unwrap_or(path).display()
            ),
            Error::LibraryMismatch { .. } => msg!("hint-library-mismatch"),
            Error::WrongResult { .. } => msg!("hint-wrong-result"),
            Error::VerifyTimedOut {
                stage, output, why, ..
            } => {
                let hint = match why {
                    Some(why) => Msg::Verbatim(why.clone()),
                    None if stage.starts_with("cuInit") || stage.contains("libcuda") => {
                        msg!("hint-timed-out-cuinit")
                    }
                    None => msg!("hint-timed-out", stage = stage),
                };
                if output.is_empty() {
                    hint
                } else {
                    msg!("hint-last-output", hint => hint, output = output)
                }
            }
            Error::StackPredatesGpu {
                sm,
                cuda,
                first,
                frameworks,
                ..
            } => {
                let instead = match first {
                    Some(f) if frameworks.is_empty() => {
                        msg!("hint-predates-gpu-use", first = f, sm = sm)
                    }
                    Some(f) => msg!(
                        "hint-predates-gpu-use-frameworks",
                        first = f,
                        sm = sm,
                        frameworks = frameworks.join(", ")
                    ),
                    None => msg!("hint-predates-gpu-newest"),
                };
                msg!("hint-predates-gpu", instead => instead, cuda = cuda)
            }
            Error::VerifyCrashed { output, .. } if !output.is_empty() => {
                msg!("hint-only-last-output", output = output)
            }
            Error::UnknownHelpTopic { topics, .. } => {
                msg!("hint-unknown-help-topic", topics = topics.join(", "))
            }
            Error::UnknownCommand { .. } => msg!("hint-unknown-command"),
            Error::NoPin { installed, .. } => match installed.as_slice() {
                [] => msg!("hint-no-pin-nothing-installed"),
                _ => msg!("hint-no-pin", installed = installed.join(", ")),
            },
            Error::VersionNameRequired { command, installed } => match installed.as_slice() {
                [] => msg!("hint-version-name-required-none"),
                _ => msg!(
                    "hint-version-name-required",
                    command = command,
                    installed = installed.join(", ")
                ),
            },
            Error::ManifestsUnreachable { url, reason } => {
                msg!("hint-manifests-unreachable", advice => network_advice(url, reason))
            }
            Error::UnsafeSystemRoot { path, .. } => {
                msg!("hint-unsafe-system-root", path = path.display())
            }
            Error::SystemRootNotWritable { root, .. } => {
                msg!("hint-system-root-not-writable", root = root.display())
            }
            Error::NoSystemRoot => msg!(
                "hint-no-system-root",
                variable = crate::context::env_vars::CUDAENV_SYSTEM_ROOT
            ),
            Error::NothingInstalled { .. } => msg!("hint-nothing-installed"),
            Error::ModulefileNotOurs { .. } => msg!("hint-modulefile-not-ours"),
            Error::NotAMirror { .. } => msg!("hint-not-a-mirror"),
            Error::BadMirror { .. } => msg!("hint-bad-mirror"),
            Error::InvalidTarget { .. } => msg!("hint-invalid-target"),
            Error::TraceFailed { .. } => msg!("hint-trace-failed"),
            Error::TraceUnsupported { .. } => msg!("hint-trace-unsupported"),
            Error::NetworkStalled { default_secs, .. } => msg!(
                "hint-network-stalled",
                variable = crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
                default = default_secs
            ),
            Error::InvalidHttpTimeout { default_secs, .. } => msg!(
                "hint-invalid-http-timeout",
                variable = crate::context::env_vars::CUDAENV_HTTP_TIMEOUT,
                default = default_secs
            ),
            Error::BadVariable { variable, .. } => {
                msg!("hint-bad-variable", variable = variable)
            }
            Error::Encode { .. } | Error::TaskFailed { .. } => msg!("hint-bug"),
            Error::AsyncRuntime { .. } | Error::HttpClient { .. } => msg!("hint-resources"),
            Error::CannotRun { .. } => msg!("hint-cannot-run"),
            Error::NoErrorText => msg!("hint-no-error-text"),
            Error::NoShellVersion { .. } => msg!("hint-no-shell-version"),
            Error::SystemHasNoPrefix => msg!("hint-system-has-no-prefix"),
            Error::NotALink { name } => msg!("hint-not-a-link", name = name),
            Error::IncompleteVersion { .. } => msg!("hint-incomplete-version"),
            Error::BadChildRequest { .. } => msg!("hint-bad-child-request"),
            Error::CorruptCache { path, .. } => msg!("hint-corrupt-cache", path = path.display()),
            Error::BadMetadata { path, .. } => msg!(
                "hint-bad-metadata",
                path = path
                    .parent()
                    .and_then(|p| p.parent())
                    .unwrap_or(path)
                    .display()
            ),
            Error::NotUtf8ForShell { .. } => msg!("hint-not-utf8-for-shell"),
            Error::UnknownShell { .. } => msg!("hint-unknown-shell"),
            Error::UnknownFrameworkVersion { .. }
            | Error::VerifyCrashed { .. }
            | Error::PathNotFound { .. }
            | Error::InvalidName { .. }
            | Error::NoHome
            | Error::Aborted(_)
            | Error::Interrupted
            | Error::Io { .. }
            | Error::CheckFailed { .. } => return None,
        })
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
            | Error::UnreadableFile { .. }
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
            | Error::NotRegularArtifact { .. }
            | Error::NoSpace { .. }
            | Error::WriteOutside { .. }
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
            | Error::NoNativeWindowsGpu { .. }
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
            | Error::UntrustedSystemPath { .. }
            | Error::SystemRootNotWritable { .. }
            | Error::NoSystemRoot
            | Error::NotAMirror { .. }
            | Error::BadMirror { .. }
            | Error::InvalidTarget { .. }
            | Error::TraceFailed { .. }
            | Error::TraceUnsupported { .. }
            | Error::InvalidLock { .. }
            | Error::LockForeignUrl { .. }
            | Error::LockMismatch { .. }
            | Error::InstalledDiffersFromLock { .. }
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
fn network_advice(url: &str, reason: &str) -> Msg {
    let host = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', ':', '?']).next().unwrap_or(rest))
        .unwrap_or(url);
    if reason.contains("dns error") || reason.contains("failed to lookup address") {
        msg!("hint-network-dns", host = host)
    } else {
        msg!("hint-network-nvidia")
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
pub fn how_to_get_msg(spec: &str) -> Msg {
    match crate::spec::Spec::parse(spec) {
        Ok(crate::spec::Spec::Name(_)) => msg!("hint-link-a-name", spec = spec),
        _ => msg!("hint-install-spec", spec = spec),
    }
}

/// A path in a message, its control characters escaped (`\n`), so that a
/// path holding a line break cannot forge a line of output.
fn shown_path(p: &std::path::Path) -> String {
    let s = p.display().to_string();
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        s
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
            | ExitCode::NoSpace
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
