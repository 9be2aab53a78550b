//! Running a child program with a deadline: the one way cudaenv runs the
//! tools it asks (nvidia-smi, python, ldconfig, nvcc) and its own
//! verification and driver-probe children.
//!
//! The hazards are all about waiting. A driver stuck in `cuInit` never
//! returns; a tool that starts a helper in the background exits, but the
//! helper keeps the output pipes open, so reading them to the end waits as
//! long as it lives; a child that fills a pipe nobody reads blocks. So:
//!
//! - the child runs in its own process group, with stdin closed, and dies
//!   with the thread that started it (`PR_SET_PDEATHSIG`: being in its own
//!   group it no longer gets the terminal's Ctrl-C); on Windows the group
//!   is a job object that kills what is in it when cudaenv ends;
//! - stdout and stderr are read on threads, while the caller waits on one
//!   channel for the child's exit, its output and the deadline;
//! - when the child exits, its whole group is killed, so whatever it left
//!   behind closes the pipes; the exit is noticed with `waitid(WNOWAIT)`,
//!   which leaves the child unreaped until then, so the group's id cannot
//!   have been reused by the time of the kill (on Windows, by waiting on a
//!   handle of the child's own, which keeps its id taken the same way);
//! - at the deadline the group is killed and the call returns, even when
//!   something outside the group (a grandchild that called `setsid`) still
//!   holds a pipe or the child cannot die yet (stuck in the kernel): the
//!   threads that would wait for them are left to finish on their own.
//!
//! Nothing here waits past the deadline, plus a moment for the kill to land.
//!
//! The other way is [`run_foreground`], for a command the user runs through
//! cudaenv and waits for (`trace`): no deadline, the terminal's stdio, and
//! signals handled as a shell handles a foreground job.

pub use super::imp::run_foreground;

use std::io::{BufRead, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a killed child gets to be reaped before the call returns
/// without it (a thread reaps it later).
const REAP_GRACE: Duration = Duration::from_secs(1);

/// What a run gave.
#[derive(Debug)]
pub struct Output {
    /// How the child ended; `None` when it had to be killed and had not
    /// died by the time the call returned.
    pub status: Option<ExitStatus>,
    /// The deadline passed before the child exited and closed its output
    /// (the group was killed then).
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    /// What stderr printed, less the lines `Options::on_stderr_line` dropped.
    pub stderr: Vec<u8>,
}

impl Output {
    /// Exited with status 0, in time.
    #[cfg(all(test, unix))]
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }
}

/// Sees a line of stderr; says whether to keep it.
pub type LineFilter<'a> = &'a mut dyn FnMut(&[u8]) -> bool;

/// What a caller may add to a plain run.
pub struct Options<'a> {
    /// The most bytes kept of each of stdout and stderr; the rest is read
    /// (so the child never blocks on a full pipe) and dropped.
    pub keep: usize,
    /// Each line of stderr as it arrives, on the calling thread; returns
    /// whether to keep the line in `Output::stderr`.
    pub on_stderr_line: Option<LineFilter<'a>>,
    /// Called once at the deadline, before the kill, with the child's pid:
    /// the moment to look at what it was doing.
    pub at_deadline: Option<&'a mut dyn FnMut(u32)>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            keep: 16 << 20,
            on_stderr_line: None,
            at_deadline: None,
        }
    }
}

/// Runs `cmd` (stdin closed, stdout and stderr captured) for at most `timeout`.
/// `Err` only when it cannot be started.
pub fn run(cmd: Command, timeout: Duration) -> std::io::Result<Output> {
    run_with(cmd, timeout, Options::default())
}

enum Event {
    Exited,
    StderrLine(Vec<u8>),
    StdoutClosed,
    StderrClosed,
}

/// `run`, with the extras of `opts`.
pub fn run_with(mut cmd: Command, timeout: Duration, opts: Options<'_>) -> std::io::Result<Output> {
    let Options {
        keep,
        on_stderr_line,
        mut at_deadline,
    } = opts;
    let deadline = Instant::now() + timeout;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, group) = super::imp::spawn_in_group(&mut cmd)?;
    let pid = child.id();
    let waiter = super::imp::ExitWaiter::of(&child)?;
    let (tx, rx) = mpsc::channel::<Event>();
    let stdout_buf = read_stdout(child.stdout.take().expect("piped"), keep, tx.clone());
    read_stderr_lines(child.stderr.take().expect("piped"), tx.clone());
    let exit_rx = notice_exit(waiter, tx);

    let mut stderr = Stderr {
        filter: on_stderr_line,
        keep,
        bytes: Vec::new(),
    };
    let Watched { exited, timed_out } = watch(&rx, deadline, &group, &mut stderr);
    if timed_out
        && !exited
        && let Some(f) = at_deadline.as_mut()
    {
        f(pid);
    }
    // In every case: nothing of the group outlives the call. A group with
    // nobody left answers ESRCH.
    group.kill();
    let status = if exited || exit_rx.recv_timeout(REAP_GRACE).is_ok() {
        child.wait().ok()
    } else {
        reap_later(child);
        None
    };
    // Lines that were already read when the loop ended.
    while let Ok(e) = rx.try_recv() {
        if let Event::StderrLine(line) = e {
            stderr.take(line);
        }
    }
    let stdout = std::mem::take(&mut *stdout_buf.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Output {
        status,
        timed_out,
        stdout,
        stderr: stderr.bytes,
    })
}

/// Reads stdout on a thread of its own into the buffer returned, keeping
/// the first `keep` bytes (the rest is read and dropped).
fn read_stdout(
    mut pipe: impl Read + Send + 'static,
    keep: usize,
    tx: mpsc::Sender<Event>,
) -> Arc<Mutex<Vec<u8>>> {
    let stdout_buf = Arc::new(Mutex::new(Vec::new()));
    let buf = Arc::clone(&stdout_buf);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    let mut b = buf.lock().unwrap_or_else(|e| e.into_inner());
                    let room = keep.saturating_sub(b.len()).min(n);
                    b.extend_from_slice(&chunk[..room]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(Event::StdoutClosed);
    });
    stdout_buf
}

/// Reads stderr on a thread of its own, sending each line as it arrives.
fn read_stderr_lines(pipe: impl Read + Send + 'static, tx: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        let mut r = std::io::BufReader::new(pipe);
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(Event::StderrLine(line)).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = tx.send(Event::StderrClosed);
    });
}

/// Waits for the exit without reaping: the child stays a zombie, its pid
/// and so its group id taken, until `child.wait()` in `run_with`. The
/// receiver returned hears of the exit too.
fn notice_exit(waiter: super::imp::ExitWaiter, tx: mpsc::Sender<Event>) -> mpsc::Receiver<()> {
    let (exit_tx, exit_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if waiter.wait() {
            let _ = tx.send(Event::Exited);
            let _ = exit_tx.send(());
        }
    });
    exit_rx
}

/// What stderr printed, as it is kept.
struct Stderr<'a> {
    filter: Option<LineFilter<'a>>,
    keep: usize,
    bytes: Vec<u8>,
}

impl Stderr<'_> {
    /// Keeps a line unless the filter drops it, within `keep` bytes.
    fn take(&mut self, line: Vec<u8>) {
        let kept = self.filter.as_mut().is_none_or(|f| f(&line));
        if kept {
            let room = self.keep.saturating_sub(self.bytes.len()).min(line.len());
            self.bytes.extend_from_slice(&line[..room]);
        }
    }
}

/// How the wait for a child ended.
struct Watched {
    exited: bool,
    timed_out: bool,
}

/// Waits until the child has exited and both pipes are closed, or the
/// deadline; keeps stderr's lines meanwhile. When the child exits, its
/// group is killed.
fn watch(
    rx: &mpsc::Receiver<Event>,
    deadline: Instant,
    group: &super::imp::Group,
    stderr: &mut Stderr<'_>,
) -> Watched {
    let (mut exited, mut stdout_open, mut stderr_open) = (false, true, true);
    let mut timed_out = false;
    while !exited || stdout_open || stderr_open {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Event::Exited) => {
                exited = true;
                // Whatever it left behind in its group goes with it, and
                // with them the pipes they hold.
                group.kill();
            }
            Ok(Event::StderrLine(line)) => stderr.take(line),
            Ok(Event::StdoutClosed) => stdout_open = false,
            Ok(Event::StderrClosed) => stderr_open = false,
            Err(RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Watched { exited, timed_out }
}

/// A killed child that has not died yet (stuck in the kernel) is reaped by
/// a thread whenever it does, so that it leaves no zombie.
fn reap_later(mut child: Child) {
    std::thread::spawn(move || {
        let _ = child.wait();
    });
}

/// CPU time (user + system) a process has used so far (`/proc` on Linux,
/// `GetProcessTimes` on Windows).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    super::imp::cpu_seconds(pid)
}

// The tests drive /bin/sh and read /proc.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    /// Exists and is not a zombie (whoever inherits a killed orphan may
    /// take a while to reap it).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| !r.starts_with('Z')))
    }

    #[test]
    fn captures_output_and_status() {
        let o = run(
            sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(o.stdout, b"out\n");
        assert_eq!(o.stderr, b"err\n");
        assert_eq!(o.status.unwrap().code(), Some(3));
        assert!(!o.timed_out && !o.success());
    }

    #[test]
    fn a_grandchild_holding_the_pipes_is_killed_with_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("echo hi; sleep 600 & echo $! > '{}'", pidfile.display());
        let t = Instant::now();
        let o = run(sh(&script), Duration::from_secs(60)).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(o.success() && o.stdout == b"hi\n", "{o:?}");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(&pid), "the background sleep outlived the call");
    }

    #[test]
    fn a_hung_child_is_killed_at_the_deadline_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "echo started; sleep 600 & echo $! > '{}'; wait",
            pidfile.display()
        );
        let mut seen = None;
        let mut at = |pid| seen = Some(pid);
        let t = Instant::now();
        let o = run_with(
            sh(&script),
            Duration::from_millis(500),
            Options {
                at_deadline: Some(&mut at),
                ..Options::default()
            },
        )
        .unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(o.timed_out && !o.success());
        assert_eq!(o.stdout, b"started\n");
        assert!(seen.is_some());
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(&std::fs::read_to_string(&pidfile).unwrap()));
    }

    #[test]
    fn a_grandchild_outside_the_group_cannot_hold_the_call_past_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // `setsid` puts the sleep in a session (and group) of its own, out
        // of reach of the group kill; it keeps stdout open.
        let script = format!(
            "echo hi; setsid sh -c 'echo $$ > {p}; exec sleep 600' & \
             while [ ! -s {p} ]; do sleep 0.01; done; exit 0",
            p = pidfile.display()
        );
        let t = Instant::now();
        let o = run(sh(&script), Duration::from_millis(1500)).unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(o.timed_out, "{o:?}");
        assert_eq!(o.stdout, b"hi\n");
        assert!(o.status.unwrap().success());
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(alive(&pid));
        // SAFETY: the sleep this test started.
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    }

    #[test]
    fn stderr_lines_reach_the_caller_and_output_is_capped() {
        let mut lines = Vec::new();
        let mut on = |l: &[u8]| {
            lines.push(String::from_utf8_lossy(l).into_owned());
            !l.starts_with(b"drop")
        };
        let o = run_with(
            sh("echo drop me >&2; echo keep >&2; head -c 100000 /dev/zero"),
            Duration::from_secs(10),
            Options {
                keep: 1000,
                on_stderr_line: Some(&mut on),
                ..Options::default()
            },
        )
        .unwrap();
        assert!(o.success());
        assert_eq!(o.stdout.len(), 1000);
        assert_eq!(o.stderr, b"keep\n");
        assert_eq!(lines, ["drop me\n", "keep\n"]);
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error() {
        assert!(run(Command::new("/nonexistent/tool"), Duration::from_secs(1)).is_err());
    }

    #[test]
    fn reads_own_cpu_time() {
        assert!(cpu_seconds(std::process::id()).is_some());
    }
}
