//! The one protocol between cudaenv and the copies of itself it starts to
//! ask the driver: doctor's driver probe (`cudaenv doctor --probe-driver`)
//! and verify's checks (`cudaenv __verify-child`).
//!
//! Asking in a child has the same reasons for both: a broken driver can
//! crash or hang whoever loads it, and the child's environment is chosen
//! whole by the parent (doctor removes `CUDA_VISIBLE_DEVICES` to see every
//! GPU; verify applies the version's activation, so the loader makes the
//! choices a framework's would). The protocol:
//!
//! - the parent starts `exe ARGS…` with exactly the environment it gives,
//!   through the one runner (`os::process`: its own process group, stdin
//!   closed, killed with its group at the deadline, dying with the parent);
//! - the child prints one answer, JSON, on stdout (`encode`), and may say
//!   more on stderr as it goes (verify's stage markers and facts lines,
//!   which the parent sees line by line through `os::process::Options`);
//! - the parent reads the answer (`ask`), or learns why there is none
//!   (`Stop`): the child ran out of time, or it ended without an answer,
//!   killed by a signal, exiting with an error or printing something that
//!   is not one.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a child gave no answer.
#[derive(Debug)]
pub enum Stop {
    /// Still running at the deadline: killed with its whole group.
    TimedOut,
    /// Ended without an answer: killed, failed, or (`unreadable` says
    /// why) exited with 0 having printed something that is not one.
    Ended {
        status: ExitStatus,
        unreadable: Option<String>,
    },
}

impl Stop {
    /// How it ended, as a sentence's predicate: `was killed by signal 11
    /// (SIGSEGV)`, `exited with status 3 without a report`.
    pub fn how(&self, timeout: Duration) -> String {
        match self {
            Stop::TimedOut => format!("did not finish within {} s", timeout.as_secs()),
            Stop::Ended { status, unreadable } => {
                match (status.code(), crate::os::exit_signal(status), unreadable) {
                    (_, Some(sig), _) => format!(
                        "was killed by signal {sig} ({})",
                        crate::os::signal_name(sig)
                    ),
                    (Some(0), _, Some(e)) => format!("printed something unreadable: {e}"),
                    (Some(c), _, _) => format!("exited with status {c} without a report"),
                    _ => "ended without a report".into(),
                }
            }
        }
    }
}

/// What a child left: its answer or why there is none, and its stderr
/// (less the lines the caller's filter took).
#[derive(Debug)]
pub struct Ran<T> {
    pub answer: Result<T, Stop>,
    pub stderr: String,
}

/// The child `exe args…`, with `env` as its whole environment (the caller
/// may still remove a variable from it).
pub fn command(
    exe: &Path,
    args: &[&OsStr],
    env: impl IntoIterator<Item = (impl AsRef<OsStr>, impl AsRef<OsStr>)>,
) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args).env_clear().envs(env);
    cmd
}

/// Runs a child made by `command` and reads its answer; `Err` only when it
/// cannot be started.
pub fn ask<T: DeserializeOwned>(
    cmd: Command,
    timeout: Duration,
    opts: crate::os::process::Options<'_>,
) -> std::io::Result<Ran<T>> {
    let ran = crate::os::process::run_with(cmd, timeout, opts)?;
    let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
    let answer = match ran.status.filter(|_| !ran.timed_out) {
        None => Err(Stop::TimedOut),
        Some(status) if !status.success() => Err(Stop::Ended {
            status,
            unreadable: None,
        }),
        Some(status) => serde_json::from_slice::<T>(&ran.stdout).map_err(|e| Stop::Ended {
            status,
            unreadable: Some(e.to_string()),
        }),
    };
    Ok(Ran { answer, stderr })
}

/// The child's side: its answer as the one line `ask` reads.
pub fn encode<T: Serialize>(answer: &T) -> serde_json::Result<String> {
    serde_json::to_string(answer)
}
