//! What the machine checks found: the driver, the GPUs, the stack's libraries, frameworks, traces.
//!
//! Each variant carries the values its message and hint need; `Diagnostic`
//! gives its exit code, its `--json` kind and its hint.

use std::path::PathBuf;

use crate::error::exit::{Diagnostic, ExitCode};
use crate::i18n::Msg;
use crate::msg;

/// The errors of the machine checks, each with its exit code, kind and hint (`Diagnostic`).
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
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
        /// What to use instead, e.g. `CUDA 11.8 or newer`, in the user's language.
        /// Boxed: the error stays small enough to return by value.
        instead: Box<Msg>,
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
        why: Option<Msg>,
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
        framework: &'static str,
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
        frameworks: Box<[String]>,
    },

    /// `explain` with nothing to explain.
    #[error("no error text given")]
    NoErrorText,

    /// The request handed to `verify`'s child process is malformed.
    #[error("invalid request for {command}: {reason}")]
    BadChildRequest {
        command: &'static str,
        reason: String,
    },
}

impl Diagnostic for MachineError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::NoDriver { .. } => ExitCode::NoDriver,
            Self::DriverTooOld { .. } => ExitCode::DriverTooOld,
            Self::ArchUnsupported { .. } => ExitCode::ArchUnsupported,
            Self::NoDevice { .. } => ExitCode::NoDevice,
            Self::LibraryMissing { .. }
            | Self::LibraryShadowed { .. }
            | Self::LibraryMismatch { .. } => ExitCode::LibraryMissing,
            Self::WrongResult { .. } => ExitCode::WrongResult,
            Self::CheckFailed { .. } | Self::VerifyCrashed { .. } => ExitCode::Failure,
            Self::VerifyTimedOut { .. } => ExitCode::TimedOut,
            Self::StackPredatesGpu { .. } => ExitCode::PtxJitOnly,
            Self::InvalidFramework { .. } | Self::InvalidFacts { .. } => ExitCode::Usage,
            Self::UnknownFrameworkVersion { .. } | Self::NoNativeWindowsGpu { .. } => {
                ExitCode::NotAvailable
            }
            Self::FrameworkNotInstalled { .. } => ExitCode::NotInstalled,
            Self::WouldNotRun {
                driver_too_old: true,
                ..
            } => ExitCode::DriverTooOld,
            Self::WouldNotRun { .. } => ExitCode::ArchUnsupported,
            Self::TraceFailed { .. } | Self::TraceUnsupported { .. } => ExitCode::TraceFailed,
            Self::NoErrorText | Self::BadChildRequest { .. } => ExitCode::Failure,
        }
    }

    fn hint_msg(&self) -> Option<Msg> {
        Some(match self {
            Self::InvalidFacts { .. } => msg!("hint-invalid-facts"),
            Self::InvalidFramework { .. } => msg!("hint-invalid-framework"),
            Self::UnknownFrameworkVersion { known, .. } if !known.is_empty() => {
                msg!("hint-known", known = known.join(", "))
            }
            Self::FrameworkNotInstalled { framework, .. } => {
                msg!("hint-framework-not-installed", framework = framework)
            }
            Self::NoNativeWindowsGpu {
                framework,
                version,
                linux_spec,
                last,
                last_spec,
            } => windows_gpu_hint(framework, version, linux_spec.as_deref(), last, last_spec),
            Self::WouldNotRun {
                driver_too_old,
                target,
                ..
            } => match (*driver_too_old, target) {
                (true, None) => msg!("hint-would-not-run-driver"),
                (true, Some(_)) => msg!("hint-would-not-run-target-driver"),
                (false, None) => msg!("hint-would-not-run-gpu"),
                (false, Some(_)) => msg!("hint-would-not-run-target-gpu"),
            },
            Self::NoDriver { .. } => msg!("hint-no-driver"),
            Self::DriverTooOld {
                driver_cuda,
                min_driver,
                ..
            } => msg!(
                "hint-driver-too-old",
                driver = min_driver,
                cuda = driver_cuda
            ),
            Self::ArchUnsupported { instead, .. } => {
                msg!("hint-arch-unsupported", instead => (**instead).clone())
            }
            Self::NoDevice {
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
            Self::NoDevice { .. } => msg!("hint-no-device"),
            Self::LibraryMissing { version, .. } if version == "system" => {
                msg!("hint-library-missing-system")
            }
            Self::LibraryMissing { version, .. } => {
                msg!("hint-library-missing", version = version)
            }
            Self::LibraryShadowed { path, .. } => msg!(
                "hint-library-shadowed",
                dir = path.parent().unwrap_or(path).display()
            ),
            Self::LibraryMismatch { .. } => msg!("hint-library-mismatch"),
            Self::WrongResult { .. } => msg!("hint-wrong-result"),
            Self::VerifyTimedOut {
                stage, output, why, ..
            } => timed_out_hint(stage, output, why.as_ref()),
            Self::StackPredatesGpu {
                sm,
                cuda,
                first,
                frameworks,
                ..
            } => predates_gpu_hint(sm, cuda, first.as_deref(), frameworks),
            Self::VerifyCrashed { output, .. } if !output.is_empty() => {
                msg!("hint-only-last-output", output = output)
            }
            Self::TraceFailed { .. } => msg!("hint-trace-failed"),
            Self::TraceUnsupported { .. } => msg!("hint-trace-unsupported"),
            Self::NoErrorText => msg!("hint-no-error-text"),
            Self::BadChildRequest { .. } => msg!("hint-bad-child-request"),
            Self::UnknownFrameworkVersion { .. }
            | Self::VerifyCrashed { .. }
            | Self::CheckFailed { .. } => return None,
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::NoDriver { .. } => "no_driver",
            Self::DriverTooOld { .. } => "driver_too_old",
            Self::ArchUnsupported { .. } => "arch_unsupported",
            Self::NoDevice { .. } => "no_device",
            Self::LibraryMissing { .. } => "library_missing",
            Self::LibraryShadowed { .. } => "library_shadowed",
            Self::LibraryMismatch { .. } => "library_mismatch",
            Self::WrongResult { .. } => "wrong_result",
            Self::CheckFailed { .. } => "check_failed",
            Self::VerifyCrashed { .. } => "verify_crashed",
            Self::VerifyTimedOut { .. } => "timed_out",
            Self::StackPredatesGpu { .. } => "ptx_jit_only",
            Self::InvalidFacts { .. }
            | Self::InvalidFramework { .. }
            | Self::UnknownFrameworkVersion { .. }
            | Self::NoNativeWindowsGpu { .. }
            | Self::FrameworkNotInstalled { .. }
            | Self::WouldNotRun { .. }
            | Self::TraceFailed { .. }
            | Self::TraceUnsupported { .. }
            | Self::NoErrorText
            | Self::BadChildRequest { .. } => "failure",
        }
    }
}

/// Where a framework without native Windows GPU builds still runs: WSL2
/// (with its Linux build's stack when known), or its last Windows release.
fn windows_gpu_hint(
    framework: &str,
    version: &str,
    linux_spec: Option<&str>,
    last: &str,
    last_spec: &str,
) -> Msg {
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

/// Why `verify` may have hung (what was measured, else the stage), with the
/// end of what its child printed.
fn timed_out_hint(stage: &str, output: &str, why: Option<&Msg>) -> Msg {
    let hint = match why {
        Some(why) => why.clone(),
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

/// The CUDA (and the framework releases built with it) that has native code
/// for a GPU the stack predates.
fn predates_gpu_hint(sm: &str, cuda: &str, first: Option<&str>, frameworks: &[String]) -> Msg {
    let instead = match first {
        Some(f) if frameworks.is_empty() => msg!("hint-predates-gpu-use", first = f, sm = sm),
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
