//! The exit codes cudaenv's errors map to, and the one trait every
//! capability's error implements (exit code, `--json` kind, hint).
//!
//! Exit codes are deliberately few; each is documented in
//! `docs/exit-codes.md` and stable for scripts. This file is a leaf: the
//! capabilities' error files import it, and it imports only `i18n`.

use crate::i18n::Msg;

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

    /// The exit code whose number is `code`, as a report carries it.
    pub fn from_code(code: u8) -> Option<ExitCode> {
        ExitCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

/// What every capability's error says about itself beyond its message.
pub trait Diagnostic {
    /// The process exit code (documented in docs/exit-codes.md).
    fn exit_code(&self) -> ExitCode;

    /// What the user should do next, when there is something useful to say,
    /// as a message the printer shows in the user's language.
    fn hint_msg(&self) -> Option<Msg>;

    /// A short machine-readable name for the kind of problem (`--json`).
    fn kind(&self) -> &'static str;

    /// The hint in English: what `--json` and the tests read.
    fn hint(&self) -> Option<String> {
        self.hint_msg().map(|m| m.en())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// docs/exit-codes.md is the public contract: every code must be in its
    /// table, and in the Chinese version's (docs/zh-CN/exit-codes.md).
    #[test]
    fn every_exit_code_is_documented() {
        for (file, doc) in [
            (
                "the English page",
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/exit-codes.md")),
            ),
            (
                "the Chinese page",
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/docs/zh-CN/exit-codes.md"
                )),
            ),
        ] {
            for code in ExitCode::ALL {
                let row = format!("| `{}` |", code.code());
                assert!(doc.contains(&row), "{file} lacks {code:?} ({row})");
            }
            let rows = doc.lines().filter(|l| l.starts_with("| `")).count();
            assert_eq!(
                rows,
                ExitCode::ALL.len(),
                "{file}: a code it should not have"
            );
        }
    }
}
