//! Terminal output: data on stdout, messages on stderr, colour only when
//! stderr is a terminal and `NO_COLOR` is unset (anstream strips styles
//! otherwise). Errors are printed here, once, as `error:` + causes + `hint:`.
//! Everything goes through the context's `Stdio` (`context.rs`), so a test
//! can capture a command's output; only the top of the binary, which may
//! have no context yet, reports on the process's stderr.
//!
//! The printer knows the language of messages (`i18n::Lang`), resolved the
//! first time a message needs it (so a command that prints nothing reads no
//! setting for it): the hint of an error, a `Msg` given to `*_msg`, and the
//! words `error`, `warning`, `hint` themselves are shown in it.

pub(crate) mod progress;

use std::sync::{Arc, OnceLock};

use anstyle::{AnsiColor, Style};

use crate::context::Stdio;
use crate::error::Error;
use crate::i18n::{Lang, Msg};
use crate::msg;

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARN: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();
const OK: Style = AnsiColor::Green.on_default().bold();

/// Prints an error with its chain of causes and its hint, on the process's
/// stderr (the top of the binary, where there may be no context yet).
pub fn report_error(err: &Error) {
    report_errors_to(&Stdio::default(), Lang::En, [err]);
}

/// Prints several errors; a hint that an earlier error already printed is
/// not repeated.
fn report_errors_to<'a>(stdio: &Stdio, lang: Lang, errs: impl IntoIterator<Item = &'a Error>) {
    let mut e = String::new();
    let mut hints = Vec::new();
    let (error, caused_by, hint_word) = (
        msg!("ui-error").render(lang),
        msg!("ui-caused-by").render(lang),
        msg!("ui-hint").render(lang),
    );
    for err in errs {
        e.push_str(&format!("{ERROR}{error}{ERROR:#}: {err}\n"));
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            e.push_str(&format!("  {ERROR}{caused_by}{ERROR:#}: {cause}\n"));
            source = cause.source();
        }
        if let Some(hint) = err.hint_msg().map(|h| h.render(lang))
            && !hints.contains(&hint)
        {
            e.push_str(&format!("{HINT}{hint_word}{HINT:#}: {hint}\n"));
            hints.push(hint);
        }
    }
    stdio.err(&masked(&e));
}

/// Every message, with the user information of anything shaped like a URL
/// masked (`spec::safe_url`): the last guard, for a URL that reached a
/// message as plain text.
fn masked(text: &str) -> std::borrow::Cow<'_, str> {
    crate::spec::safe_url::mask_credentials(text)
}

/// The language of messages, resolved once, on first use, by the function
/// the printer was given (English without one).
#[derive(Clone, Default)]
struct Language {
    cell: Arc<OnceLock<Lang>>,
    resolve: Option<Arc<dyn Fn() -> Lang + Send + Sync>>,
}

impl Language {
    fn get(&self) -> Lang {
        *self
            .cell
            .get_or_init(|| self.resolve.as_ref().map_or(Lang::En, |f| f()))
    }
}

impl std::fmt::Debug for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Language").field(&self.cell.get()).finish()
    }
}

/// Messages to stderr, silenced by `--quiet` (warnings and errors still
/// show), written through the context's `Stdio`.
#[derive(Debug, Clone, Default)]
pub struct Printer {
    pub quiet: bool,
    stdio: Stdio,
    language: Language,
}

impl Printer {
    pub fn new(quiet: bool, stdio: Stdio) -> Printer {
        Printer {
            quiet,
            stdio,
            language: Language::default(),
        }
    }

    /// The printer, showing messages in the language `resolve` names when
    /// one is first shown.
    pub fn with_language(mut self, resolve: impl Fn() -> Lang + Send + Sync + 'static) -> Printer {
        self.language = Language {
            cell: Arc::new(OnceLock::new()),
            resolve: Some(Arc::new(resolve)),
        };
        self
    }

    /// The language messages are shown in.
    pub fn lang(&self) -> Lang {
        self.language.get()
    }

    /// A message's text in the printer's language.
    pub fn text(&self, m: &Msg) -> String {
        m.render(self.lang())
    }

    pub fn info(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            self.stdio.err(&masked(&format!("{msg}\n")));
        }
    }

    pub fn success(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            self.stdio.err(&masked(&format!("{OK}✓{OK:#} {msg}\n")));
        }
    }

    pub fn warn(&self, msg: impl std::fmt::Display) {
        let word = msg!("ui-warning").render(self.lang());
        self.stdio
            .err(&masked(&format!("{WARN}{word}{WARN:#}: {msg}\n")));
    }

    pub fn hint(&self, msg: impl std::fmt::Display) {
        let word = msg!("ui-hint").render(self.lang());
        self.stdio
            .err(&masked(&format!("{HINT}{word}{HINT:#}: {msg}\n")));
    }

    /// `warn` of a message, in the printer's language.
    pub fn warn_msg(&self, m: &Msg) {
        self.warn(self.text(m));
    }

    /// `hint` of a message, in the printer's language.
    pub fn hint_msg(&self, m: &Msg) {
        self.hint(self.text(m));
    }

    /// A report that is the point of its command (`trace`'s, `verify`'s
    /// problems): not silenced.
    pub fn report(&self, text: &str) {
        self.stdio.err(&masked(text));
    }

    /// Errors that do not end the command (a broken pin the hook falls back
    /// from), each with its causes and hint.
    pub fn errors<'a>(&self, errs: impl IntoIterator<Item = &'a Error>) {
        report_errors_to(&self.stdio, self.lang(), errs);
    }
}

/// Lock waits are told like any other message (`--quiet` silences them).
impl crate::os::lock::Waiting for Printer {
    fn waiting(&self, notice: &str) {
        self.info(notice);
    }
}

/// The install planner's messages are told like any other.
impl crate::install::planner::Tell for Printer {
    fn info(&self, msg: &str) {
        Printer::info(self, msg);
    }
    fn warn(&self, msg: &str) {
        Printer::warn(self, msg);
    }
    fn hint(&self, msg: &str) {
        Printer::hint(self, msg);
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
    s = masked(&s).into_owned();
    s.push('\n');
    Ok(s)
}
