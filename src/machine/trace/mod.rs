//! `cudaenv trace`: which CUDA, cuDNN and NCCL libraries a real command
//! loaded, from where, and by which rule of the dynamic loader.
//!
//! The mechanism is glibc's own reporting: the command runs with
//! `LD_DEBUG=libs,files` and `LD_DEBUG_OUTPUT=<scratch>/ld`, so every process
//! of the tree (children inherit the variables) writes `ld.<pid>` as it loads.
//! The loader says, for each library, the request (`needed by X`, `dynamically
//! loaded by X`), each directory list it searched and why (`RPATH from file
//! X`, `RUNPATH from file X`, `LD_LIBRARY_PATH`, the `ld.so.cache`, the system
//! directories), the file it tried last and the link map it created — which
//! is exactly the "why this copy" that users need, for any program.
//!
//! The alternatives were weighed and rejected:
//! - `LD_AUDIT` sees the same events through `la_objsearch`/`la_objopen`, but
//!   needs a shared object of our own on disk and in every process, and an
//!   auditor can change what it observes (glibc runs auditors in their own
//!   namespace, and several had bugs that crash the audited program).
//! - `/proc/PID/maps` shows the result without the reason, only while the
//!   process lives: short-lived children (a compiler driver, a `subprocess`)
//!   are gone before anyone reads it, and polling changes timing.
//!
//! What the loader cannot report, trace cannot either: set-uid programs run in
//! secure mode and ignore `LD_DEBUG_OUTPUT`, static binaries have no loader, a
//! program that clears its children's environment loses the variables for
//! them, and a library opened with `dlmopen` into another namespace is shown
//! like any other. A process image replaced by `exec` keeps its pid; its log is
//! appended to the same file and split here at the first request of the new
//! program.
//!
//! Parsing is a pure function over the log text (`parse`), unit-tested on
//! logs the real loader wrote. Classification (`classify`) reads only names:
//! symbolic links (for the real file and its version) and pip's RECORD files
//! (which wheel owns a file). The end-to-end tests run real programs built
//! with `cc`. A name searched for and mapped nowhere is reported as well,
//! once per process: frameworks probe names they do without, so it is a note
//! when the command succeeded.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::activation::select::Active;
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ActivationError, Error, MachineError, Result};
use crate::i18n::{Lang, Msg};
use crate::machine::finding::{Field, Finding, Layout, Level, Shape, Value};

mod classify;
mod parse;

pub use classify::{ActiveDirs, classify};
pub use parse::{Rule, parse};

/// Where a loaded file lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Location {
    /// Inside the active cudaenv version.
    Active { version: String },
    /// In a Python environment: an NVIDIA wheel (or a framework's own copy).
    PythonWheel {
        site_packages: String,
        /// The distribution whose RECORD lists the file (`nvidia-cudnn-cu13`).
        package: Option<String>,
        package_version: Option<String>,
    },
    /// The NVIDIA driver's own libraries (`libcuda`, `libnvidia-*`).
    Driver,
    /// Anywhere else: a system toolkit, a distribution package, a copy by hand.
    System,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Active { version } => write!(f, "active version {version}"),
            Location::PythonWheel {
                package: Some(p), ..
            } => write!(f, "Python wheel {p}"),
            Location::PythonWheel { .. } => f.write_str("Python environment"),
            Location::Driver => f.write_str("driver"),
            Location::System => f.write_str("system copy"),
        }
    }
}

/// A CUDA-family library a process loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Library {
    /// The soname-style file name (`libcudart.so.13`).
    pub name: String,
    /// The component (`cudart`, `cudnn_cnn`, `nccl`, `cuda`).
    pub component: String,
    /// The path the loader mapped.
    pub path: String,
    /// The same after following symbolic links.
    pub real_path: String,
    /// From the real file name (`13.0.96`) or the wheel that holds it.
    pub version: Option<String>,
    pub location: Location,
    pub rule: Rule,
    pub requested_by: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Process {
    pub pid: u32,
    pub program: Option<String>,
    pub libraries: Vec<Library>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// Two files of one library in one process.
    Duplicate,
    /// A major version the active stack does not have.
    MajorMismatch,
    /// Loaded from outside the active version although it has that library.
    OutsideVersion,
    /// cuDNN's libraries at different versions in one process (they must match exactly).
    MixedCudnn,
    /// Searched for by name and found nowhere.
    NotFound,
}

impl ProblemKind {
    /// Its name in `--json` and the report.
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::Duplicate => "duplicate",
            ProblemKind::MajorMismatch => "major-mismatch",
            ProblemKind::OutsideVersion => "outside-version",
            ProblemKind::MixedCudnn => "mixed-cudnn",
            ProblemKind::NotFound => "not-found",
        }
    }
}

/// A problem `classify` found in process `pid` about `library`: a warning,
/// or a note (`level`) for a name a program that succeeded probed and did
/// without.
pub fn problem(
    level: Level,
    kind: ProblemKind,
    pid: u32,
    library: String,
    message: String,
) -> Finding {
    Finding::new(level, kind.code(), Msg::verbatim(message))
        .detail("pid", Some(Msg::verbatim("pid")), Value::Number(pid.into()))
        .detail("library", None, Value::Text(Msg::verbatim(library)))
}

/// How `trace --json` writes a problem: `kind`, `pid`, `library`, `message`.
const PROBLEM_JSON: Shape = Shape(&[
    Field::Code("kind"),
    Field::Detail("pid"),
    Field::Detail("library"),
    Field::Message("message"),
]);

fn problems_json<S: serde::Serializer>(
    p: &[Finding],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::machine::finding::serialize_all(p, &PROBLEM_JSON, s)
}

/// What `trace` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub command: Vec<String>,
    /// The command's exit status as a shell reports it (128 + signal when killed).
    pub exit_code: i32,
    /// The active version, `system` when none.
    pub active: String,
    pub active_cuda: Option<String>,
    pub active_cudnn: Option<String>,
    /// Processes that loaded at least one CUDA-family library.
    pub processes: Vec<Process>,
    /// Processes the loader logged in all (with or without CUDA).
    pub processes_seen: usize,
    #[serde(serialize_with = "problems_json")]
    pub problems: Vec<Finding>,
    /// What activation said (a Python environment with CUDA wheels next to the version).
    pub notes: Vec<String>,
}

/// Adds the loader's variables to an activated environment.
pub fn instrument(vars: &mut BTreeMap<OsString, OsString>, log_prefix: &Path) {
    vars.insert(env_vars::LD_DEBUG.into(), "libs,files".into());
    vars.insert(
        env_vars::LD_DEBUG_OUTPUT.into(),
        log_prefix.as_os_str().to_owned(),
    );
}

/// Reads every `<prefix>.<pid>` log the loader wrote, and says which files
/// of that name were skipped: the traced program knows `LD_DEBUG_OUTPUT`, so
/// it can put a FIFO, a link to a device or a huge file there; each log is
/// read by the bounded reader (`os::fs`), never followed into a device.
pub fn read_logs(log_prefix: &Path) -> Result<(String, Vec<String>)> {
    let dir = log_prefix.parent().unwrap_or(Path::new("."));
    let stem = log_prefix
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("ld")
        .to_string();
    let mut text = String::new();
    let rd = std::fs::read_dir(dir).map_err(Error::io("cannot read", dir))?;
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&stem))
                .and_then(|n| n.strip_prefix('.'))
                .is_some_and(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    let mut skipped = Vec::new();
    for f in files {
        // No link is followed: the loader writes plain files.
        let is_link = std::fs::symlink_metadata(&f).is_ok_and(|m| m.file_type().is_symlink());
        let read = if is_link {
            Err("it is a symbolic link, which the loader never writes".to_string())
        } else {
            crate::os::fs::read_bounded(&f, LOG_MAX).map_err(|e| e.to_string())
        };
        match read {
            Ok(bytes) => {
                text.push_str(&String::from_utf8_lossy(&bytes));
                text.push('\n');
            }
            Err(why) => skipped.push(format!("the loader log {} was skipped: {why}", f.display())),
        }
    }
    Ok((text, skipped))
}

/// The most one process's loader log is read to (a real one is a few MB).
const LOG_MAX: u64 = crate::os::fs::LARGE;

/// Builds the report from the loader's logs.
pub fn report(command: &[OsString], exit_code: i32, active: &ActiveDirs, log_text: &str) -> Report {
    let images = parse(log_text);
    let (processes, problems) = classify(&images, active, exit_code == 0);
    Report {
        command: command
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect(),
        exit_code,
        active: active.name.clone(),
        active_cuda: active.cuda.as_ref().map(|v| v.to_string()),
        active_cudnn: active.cudnn.as_ref().map(|v| v.to_string()),
        processes,
        processes_seen: images.len(),
        problems,
        notes: Vec::new(),
    }
}

/// Runs `command` activated and instrumented, waits, and reports.
///
/// The command inherits stdio and runs as a foreground job
/// (`os::process::run_foreground`): Ctrl-C stops the command, not trace,
/// so the report is still written; a SIGTERM to trace is passed on.
pub fn run(ctx: &Context, active: &Active, command: &[OsString]) -> Result<Report> {
    if !crate::os::LOADER_LOGS {
        return Err(Error::Machine(MachineError::TraceUnsupported {
            platform: crate::os::platform::Platform::current()
                .map_or(std::env::consts::OS, |p| p.name())
                .into(),
        }));
    }
    let store = crate::store::Store::new(ctx.root());
    let delta = crate::activation::plan(ctx, &store, active)?;
    let mut vars = ctx.vars_map();
    delta.apply(&mut vars);
    let scratch = tempfile::Builder::new()
        .prefix("cudaenv-trace-")
        .tempdir()
        .map_err(Error::io(
            "cannot create a scratch directory in",
            std::env::temp_dir(),
        ))?;
    let log_prefix = scratch.path().join("ld");
    instrument(&mut vars, &log_prefix);
    let (program, rest) = command.split_first().ok_or_else(|| {
        Error::Machine(MachineError::TraceFailed {
            command: String::new(),
            reason: "no command given".into(),
        })
    })?;
    let path = vars.get(std::ffi::OsStr::new(env_vars::PATH));
    let resolved = crate::activation::find_in_path(program, path).ok_or_else(|| {
        Error::Activation(ActivationError::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: Vec::new(),
        })
    })?;
    let mut cmd = std::process::Command::new(&resolved);
    crate::os::set_arg0(&mut cmd, program);
    cmd.args(rest)
        .env_clear()
        .envs(&vars)
        .current_dir(ctx.cwd());
    // Ctrl-C stops the program (not trace, which reports); a SIGTERM to
    // trace is passed on to it; either way the scratch directory goes.
    let status = crate::os::process::run_foreground(cmd).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Activation(ActivationError::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
            version: active.name(),
            available_in: Vec::new(),
        }),
        _ => Error::Machine(MachineError::TraceFailed {
            command: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        }),
    })?;
    let exit_code = status
        .code()
        .or_else(|| crate::os::exit_signal(&status).map(|s| 128 + s))
        .unwrap_or(1);
    let (text, skipped) = read_logs(&log_prefix)?;
    let mut dirs = ActiveDirs::of(active);
    dirs.kept_off = delta.notes.iter().any(|n| {
        matches!(
            n,
            crate::activation::Note::BundledWheels { kept_off: true, .. }
        )
    });
    let mut r = report(command, exit_code, &dirs, &text);
    r.notes = delta.notes.iter().map(|n| n.to_string()).collect();
    r.notes.extend(skipped);
    Ok(r)
}

/// The command as a shell would read it back: each argument quoted where
/// it needs to be (`python -c 'import torch; …'`), so it can be copied and
/// run again.
fn shown_command(args: &[String]) -> String {
    // As Python's `shlex.quote`: a word of plain characters as it is, any
    // other in single quotes (shell-quote's own output mixes quoting styles
    // within a word, which is exact but hard to read back).
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(plain) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The human-readable report (for stderr).
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let stack = match (&r.active_cuda, &r.active_cudnn) {
        (Some(c), Some(d)) => format!("{} (CUDA {c} + cuDNN {d})", r.active),
        (Some(c), None) => format!("{} (CUDA {c})", r.active),
        _ => r.active.clone(),
    };
    let n: usize = r.processes.iter().map(|p| p.libraries.len()).sum();
    s.push_str(&format!(
        "trace: `{}` exited {}; active: {stack}; {n} CUDA librar{} in {} of {} process{}\n",
        shown_command(&r.command),
        r.exit_code,
        if n == 1 { "y" } else { "ies" },
        r.processes.len(),
        r.processes_seen,
        if r.processes_seen == 1 { "" } else { "es" },
    ));
    if r.processes_seen == 0 {
        s.push_str("  the loader logged nothing: a static or set-uid program, or one that cleared LD_DEBUG for its children\n");
    }
    for p in &r.processes {
        s.push_str(&format!(
            "pid {} {}\n",
            p.pid,
            p.program.as_deref().unwrap_or("?")
        ));
        let w = p.libraries.iter().map(|l| l.name.len()).max().unwrap_or(0);
        let vw = p
            .libraries
            .iter()
            .map(|l| l.version.as_deref().unwrap_or("-").len())
            .max()
            .unwrap_or(0);
        for l in &p.libraries {
            s.push_str(&format!(
                "  {:w$}  {:vw$}  {}  [{}]\n      {}\n",
                l.name,
                l.version.as_deref().unwrap_or("-"),
                l.location,
                l.rule,
                l.path,
            ));
        }
    }
    // The report is English, like the loader's words it quotes.
    s.push_str(&crate::machine::finding::render(
        &r.problems,
        &Layout::Lines,
        Lang::En,
    ));
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
