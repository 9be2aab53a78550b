//! Terminal output: data on stdout, messages on stderr, colour only when
//! stderr is a terminal and `NO_COLOR` is unset (anstream strips styles
//! otherwise). Errors are printed here, once, as `error:` + causes + `hint:`.

pub mod progress;

use std::io::Write;

use anstyle::{AnsiColor, Style};

use crate::error::Error;

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARN: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();
const OK: Style = AnsiColor::Green.on_default().bold();

fn stderr() -> anstream::Stderr {
    anstream::stderr()
}

/// Prints an error with its chain of causes and its hint.
pub fn report_error(err: &Error) {
    report_errors([err]);
}

/// Prints several errors (`verify` reports every problem it found); a hint
/// that an earlier error already printed is not repeated.
pub fn report_errors<'a>(errs: impl IntoIterator<Item = &'a Error>) {
    let mut e = stderr().lock();
    let mut hints = Vec::new();
    for err in errs {
        let _ = writeln!(e, "{ERROR}error{ERROR:#}: {err}");
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            let _ = writeln!(e, "  {ERROR}caused by{ERROR:#}: {cause}");
            source = cause.source();
        }
        if let Some(hint) = err.hint()
            && !hints.contains(&hint)
        {
            let _ = writeln!(e, "{HINT}hint{HINT:#}: {hint}");
            hints.push(hint);
        }
    }
}

/// Messages to stderr, silenced by `--quiet` (warnings and errors still show).
#[derive(Debug, Clone, Copy, Default)]
pub struct Printer {
    pub quiet: bool,
}

impl Printer {
    pub fn new(quiet: bool) -> Printer {
        Printer { quiet }
    }

    pub fn info(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            let _ = writeln!(stderr(), "{msg}");
        }
    }

    pub fn success(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            let _ = writeln!(stderr(), "{OK}✓{OK:#} {msg}");
        }
    }

    pub fn warn(&self, msg: impl std::fmt::Display) {
        let _ = writeln!(stderr(), "{WARN}warning{WARN:#}: {msg}");
    }

    pub fn hint(&self, msg: impl std::fmt::Display) {
        let _ = writeln!(stderr(), "{HINT}hint{HINT:#}: {msg}");
    }
}

/// Writes data to stdout. A closed pipe (`cudaenv versions | head -1`) is
/// reported as `Error::Io` with kind `BrokenPipe`, which `cli::main` treats as
/// success.
pub fn out(bytes: &[u8]) -> crate::Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)
        .and_then(|_| o.flush())
        .map_err(crate::Error::io("cannot write to", "standard output"))
}

/// Writes a line of data to stdout.
pub fn outln(line: impl std::fmt::Display) -> crate::Result<()> {
    out(format!("{line}\n").as_bytes())
}

/// Pretty JSON to stdout.
pub fn out_json<T: serde::Serialize>(value: &T) -> crate::Result<()> {
    let mut s = serde_json::to_string_pretty(value).map_err(Error::encode("JSON output"))?;
    s.push('\n');
    out(s.as_bytes())
}
