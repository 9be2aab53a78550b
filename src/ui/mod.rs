//! Terminal output: data on stdout, messages on stderr, colour only when
//! stderr is a terminal and `NO_COLOR` is unset (anstream strips styles
//! otherwise). Errors are printed here, once, as `error:` + causes + `hint:`.
//! Everything goes through the context's `Stdio` (`context.rs`), so a test
//! can capture a command's output; only the top of the binary, which may
//! have no context yet, reports on the process's stderr.

pub mod progress;

use anstyle::{AnsiColor, Style};

use crate::context::Stdio;
use crate::error::Error;

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARN: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();
const OK: Style = AnsiColor::Green.on_default().bold();

/// Prints an error with its chain of causes and its hint, on the process's
/// stderr (the top of the binary, where there may be no context yet).
pub fn report_error(err: &Error) {
    report_errors_to(&Stdio::default(), [err]);
}

/// Prints several errors (`verify` reports every problem it found); a hint
/// that an earlier error already printed is not repeated.
fn report_errors_to<'a>(stdio: &Stdio, errs: impl IntoIterator<Item = &'a Error>) {
    let mut e = String::new();
    let mut hints = Vec::new();
    for err in errs {
        e.push_str(&format!("{ERROR}error{ERROR:#}: {err}\n"));
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            e.push_str(&format!("  {ERROR}caused by{ERROR:#}: {cause}\n"));
            source = cause.source();
        }
        if let Some(hint) = err.hint()
            && !hints.contains(&hint)
        {
            e.push_str(&format!("{HINT}hint{HINT:#}: {hint}\n"));
            hints.push(hint);
        }
    }
    stdio.err(&e);
}

/// Messages to stderr, silenced by `--quiet` (warnings and errors still
/// show), written through the context's `Stdio`.
#[derive(Debug, Clone, Default)]
pub struct Printer {
    pub quiet: bool,
    stdio: Stdio,
}

impl Printer {
    pub fn new(quiet: bool, stdio: Stdio) -> Printer {
        Printer { quiet, stdio }
    }

    pub fn info(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            self.stdio.err(&format!("{msg}\n"));
        }
    }

    pub fn success(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            self.stdio.err(&format!("{OK}✓{OK:#} {msg}\n"));
        }
    }

    pub fn warn(&self, msg: impl std::fmt::Display) {
        self.stdio.err(&format!("{WARN}warning{WARN:#}: {msg}\n"));
    }

    pub fn hint(&self, msg: impl std::fmt::Display) {
        self.stdio.err(&format!("{HINT}hint{HINT:#}: {msg}\n"));
    }

    /// A report that is the point of its command (`trace`): not silenced.
    pub fn report(&self, text: &str) {
        self.stdio.err(text);
    }

    /// Errors that do not end the command (`verify`'s problems, a broken pin
    /// the hook falls back from), each with its causes and hint.
    pub fn errors<'a>(&self, errs: impl IntoIterator<Item = &'a Error>) {
        report_errors_to(&self.stdio, errs);
    }
}

/// Lock waits are told like any other message (`--quiet` silences them).
impl crate::os::lock::Waiting for Printer {
    fn waiting(&self, notice: &str) {
        self.info(notice);
    }
}

/// Writes data to stdout. A closed pipe (`cudaenv versions | head -1`) is
/// reported as `Error::Io` with kind `BrokenPipe`, which `cli::main` treats as
/// success.
pub fn out(stdio: &Stdio, bytes: &[u8]) -> crate::Result<()> {
    stdio
        .out(bytes)
        .map_err(crate::Error::io("cannot write to", "standard output"))
}

/// Writes styled text to stdout (colours only on a terminal).
pub fn out_styled(stdio: &Stdio, text: &str) -> crate::Result<()> {
    stdio
        .out_styled(text)
        .map_err(crate::Error::io("cannot write to", "standard output"))
}

/// Pretty JSON, as written to stdout.
pub fn json<T: serde::Serialize>(value: &T) -> crate::Result<String> {
    let mut s = serde_json::to_string_pretty(value).map_err(Error::encode("JSON output"))?;
    s.push('\n');
    Ok(s)
}
