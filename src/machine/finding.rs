//! One finding type for every rule set over the machine's facts — doctor's
//! findings, `explain`'s answers, `trace`'s problems, `verify`'s
//! diagnoses — with one text renderer and one JSON writer. Each rule set
//! builds its findings itself; none has a type of its own to convert.
//!
//! A finding has a level, a stable code for scripts (doctor's `code`,
//! explain's rule `id`, trace's and verify's `kind`), a message that states
//! what was found, the lines that fix it, and details: labelled facts beside
//! the message (what text matched, which stack provides a library, the pid
//! of a process). The commands show findings in the layout their reports
//! have always had (`Layout`), and each command's `--json` keeps the field
//! names its documentation lists: a `Shape` names, in order, the fields a
//! finding is written with, so one writer serves them all.

use std::borrow::Cow;

use anstyle::{AnsiColor, Style};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use unicode_width::UnicodeWidthStr;

use crate::i18n::{Lang, Msg};
use crate::msg;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    /// Worth knowing, nothing to fix (a library a program probed and did without).
    Note,
    Warning,
    Error,
}

impl Level {
    /// The word for it, in `lang`.
    pub fn word(self, lang: Lang) -> String {
        match self {
            Level::Ok => msg!("finding-level-ok"),
            Level::Note => msg!("finding-level-note"),
            Level::Warning => msg!("finding-level-warning"),
            Level::Error => msg!("finding-level-error"),
        }
        .render(lang)
    }

    fn style(self) -> Style {
        match self {
            Level::Ok => AnsiColor::Green.on_default().bold(),
            Level::Note => AnsiColor::Cyan.on_default().bold(),
            Level::Warning => AnsiColor::Yellow.on_default().bold(),
            Level::Error => AnsiColor::Red.on_default().bold(),
        }
    }
}

/// A fact beside a finding's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// Its `--json` field name (`provided_by`, `pid`).
    pub key: &'static str,
    /// How the text shows it: with a label, or not at all (`None`: it is
    /// part of the heading, or for scripts only).
    pub label: Option<Msg>,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Text(Msg),
    Number(u64),
}

impl Value {
    fn render(&self, lang: Lang) -> String {
        match self {
            Value::Text(m) => m.render(lang),
            Value::Number(n) => n.to_string(),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Text(m) => m.serialize(s),
            Value::Number(n) => s.serialize_u64(*n),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    pub code: Cow<'static, str>,
    /// What was found, in the user's language when shown (English in `--json`).
    pub message: Msg,
    /// What fixes it, a line each (none for an `ok`).
    pub fix: Vec<Msg>,
    pub details: Vec<Detail>,
}

impl Finding {
    pub fn new(level: Level, code: impl Into<Cow<'static, str>>, message: Msg) -> Finding {
        Finding {
            level,
            code: code.into(),
            message,
            fix: Vec::new(),
            details: Vec::new(),
        }
    }

    /// With one more fix line.
    pub fn fix(mut self, line: Msg) -> Finding {
        self.fix.push(line);
        self
    }

    /// With one more detail.
    pub fn detail(mut self, key: &'static str, label: Option<Msg>, value: Value) -> Finding {
        self.details.push(Detail { key, label, value });
        self
    }

    /// Sets the detail `key`: in its place when the finding has it, else
    /// after the others (the text shows details in their order).
    pub fn set(&mut self, key: &'static str, label: Option<Msg>, value: Value) {
        match self.details.iter_mut().find(|d| d.key == key) {
            Some(d) => (d.label, d.value) = (label, value),
            None => self.details.push(Detail { key, label, value }),
        }
    }

    /// The detail written as `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.details.iter().find(|d| d.key == key).map(|d| &d.value)
    }

    /// The detail `key`'s text (empty when absent).
    fn text_of(&self, key: &str, lang: Lang) -> String {
        self.get(key).map(|v| v.render(lang)).unwrap_or_default()
    }

    /// The finding as `shape` writes it.
    pub fn shaped<'a>(&'a self, shape: &'a Shape) -> Shaped<'a> {
        Shaped {
            finding: self,
            shape,
        }
    }
}

/// One field of a finding's JSON.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    Level(&'static str),
    Code(&'static str),
    Message(&'static str),
    /// The first fix line, left out when there is none.
    FirstFix(&'static str),
    /// The first fix line, `null` when there is none.
    FirstFixOrNull(&'static str),
    /// Every fix line, as a list.
    Fixes(&'static str),
    /// A detail, by its key; left out when the finding has none.
    Detail(&'static str),
}

/// The fields a command's `--json` writes for each finding, in order.
#[derive(Debug, Clone, Copy)]
pub struct Shape(pub &'static [Field]);

/// A finding and the shape it is written in: what `--json` serialises.
pub struct Shaped<'a> {
    finding: &'a Finding,
    shape: &'a Shape,
}

impl Serialize for Shaped<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.finding;
        let mut m = s.serialize_map(None)?;
        for field in self.shape.0 {
            match *field {
                Field::Level(k) => m.serialize_entry(k, &f.level)?,
                Field::Code(k) => m.serialize_entry(k, &f.code)?,
                Field::Message(k) => m.serialize_entry(k, &f.message)?,
                Field::FirstFix(k) => {
                    if let Some(fix) = f.fix.first() {
                        m.serialize_entry(k, fix)?;
                    }
                }
                Field::FirstFixOrNull(k) => m.serialize_entry(k, &f.fix.first())?,
                Field::Fixes(k) => m.serialize_entry(k, &f.fix)?,
                Field::Detail(k) => {
                    if let Some(v) = f.get(k) {
                        m.serialize_entry(k, v)?;
                    }
                }
            }
        }
        m.end()
    }
}

/// Findings as a JSON list in `shape`: for a report's field
/// (`#[serde(serialize_with)]`).
pub fn serialize_all<S: serde::Serializer>(
    findings: &[Finding],
    shape: &Shape,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(findings.iter().map(|f| f.shaped(shape)))
}

/// How a command lays its findings out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// doctor's table: the level, the code and the message on one line,
    /// the fix below them (`quiet` leaves out the `ok`s).
    Table { quiet: bool },
    /// explain's answers: `[code] heading` with the detail `heading` names,
    /// then the message and each labelled detail and fix, labels in one
    /// column (`message` is the message's label; the column is as wide as
    /// the widest of it, the fix's and `labels`, every label the command
    /// may show, so that the reports of one command line up alike).
    Labelled {
        heading: &'static str,
        message: Msg,
        labels: Vec<Msg>,
    },
    /// trace's problems: `level: prefix: message` a line, `prefix` the
    /// details' labels and values (`pid 4711`).
    Lines,
    /// verify's problems, as the printer writes errors: `level: message`,
    /// then `hint: fix`, leaving out a hint an earlier finding showed.
    Hints,
}

/// The findings as text in `lang`, laid out by `layout`. Styles are ANSI
/// escapes, which the printer strips where colour is off.
pub fn render(findings: &[Finding], layout: &Layout, lang: Lang) -> String {
    match layout {
        Layout::Table { quiet } => table(findings, *quiet, lang),
        Layout::Labelled {
            heading,
            message,
            labels,
        } => labelled(findings, heading, message, labels, lang),
        Layout::Lines => lines(findings, lang),
        Layout::Hints => hints(findings, lang),
    }
}

/// `fix: `, but `解决办法：`: a full-width colon carries its own space.
fn fix_label(lang: Lang) -> String {
    let mut label = msg!("finding-label-fix").render(lang);
    if !label.ends_with('：') {
        label.push(' ');
    }
    label
}

fn table(findings: &[Finding], quiet: bool, lang: Lang) -> String {
    const DIM: Style = Style::new().dimmed();
    let levels = [Level::Ok, Level::Warning, Level::Error];
    let level_width = levels
        .iter()
        .map(|l| l.word(lang).width())
        .max()
        .unwrap_or(0)
        .max(7);
    let fix_label = fix_label(lang);
    let indent = " ".repeat(level_width + 22);
    let mut out = String::new();
    for f in findings {
        if quiet && f.level == Level::Ok {
            continue;
        }
        let (style, word) = (f.level.style(), f.level.word(lang));
        let pad = " ".repeat(level_width.saturating_sub(word.width()));
        out.push_str(&format!(
            "{style}{word}{style:#}{pad}  {DIM}{:<18}{DIM:#} {}\n",
            f.code,
            f.message.render(lang)
        ));
        for fix in &f.fix {
            out.push_str(&format!("{indent}{fix_label}{}\n", fix.render(lang)));
        }
    }
    out
}

fn labelled(
    findings: &[Finding],
    heading: &str,
    message: &Msg,
    others: &[Msg],
    lang: Lang,
) -> String {
    let mut labels: Vec<String> = vec![message.render(lang), fix_label(lang).trim_end().into()];
    labels.extend(others.iter().map(|l| l.render(lang)));
    for f in findings {
        for d in &f.details {
            if let Some(l) = &d.label {
                labels.push(l.render(lang));
            }
        }
    }
    let column = labels.iter().map(|l| l.width()).max().unwrap_or(0) + 1;
    let pad = |label: &str| format!("{label}{}", " ".repeat(column - label.width()));
    let blank = " ".repeat(column);
    let (message, fix) = (pad(&labels[0]), pad(&labels[1]));
    let mut t = String::new();
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            t.push('\n');
        }
        t.push_str(&format!("[{}] {}\n", f.code, f.text_of(heading, lang)));
        t.push_str(&format!("  {message}{}\n", f.message.render(lang)));
        for d in &f.details {
            if let Some(l) = &d.label {
                t.push_str(&format!(
                    "  {}{}\n",
                    pad(&l.render(lang)),
                    d.value.render(lang)
                ));
            }
        }
        for (j, line) in f.fix.iter().enumerate() {
            let label = if j == 0 { &fix } else { &blank };
            t.push_str(&format!("  {label}{}\n", line.render(lang)));
        }
    }
    t
}

fn lines(findings: &[Finding], lang: Lang) -> String {
    let mut t = String::new();
    for f in findings {
        t.push_str(&f.level.word(lang));
        t.push(':');
        for d in &f.details {
            if let Some(l) = &d.label {
                t.push_str(&format!(" {} {}:", l.render(lang), d.value.render(lang)));
            }
        }
        t.push_str(&format!(" {}\n", f.message.render(lang)));
        for fix in &f.fix {
            t.push_str(&format!("  {}{}\n", fix_label(lang), fix.render(lang)));
        }
    }
    t
}

fn hints(findings: &[Finding], lang: Lang) -> String {
    const HINT: Style = AnsiColor::Cyan.on_default().bold();
    let word = msg!("ui-hint").render(lang);
    let mut shown: Vec<String> = Vec::new();
    let mut t = String::new();
    for f in findings {
        let style = f.level.style();
        t.push_str(&format!(
            "{style}{}{style:#}: {}\n",
            f.level.word(lang),
            f.message.render(lang)
        ));
        for fix in &f.fix {
            let hint = fix.render(lang);
            if !shown.contains(&hint) {
                t.push_str(&format!("{HINT}{word}{HINT:#}: {hint}\n"));
                shown.push(hint);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Finding {
        Finding::new(
            Level::Warning,
            "no-driver",
            Msg::verbatim("no NVIDIA driver found"),
        )
        .fix(Msg::verbatim("install the NVIDIA driver"))
        .detail("pid", Some(Msg::verbatim("pid")), Value::Number(7))
    }

    /// A shape writes its fields in its order, leaves out what is absent
    /// when told to, and keeps numbers numbers.
    #[test]
    fn a_shape_names_and_orders_the_fields() {
        const SHAPE: Shape = Shape(&[
            Field::Code("kind"),
            Field::Detail("pid"),
            Field::Detail("library"),
            Field::Message("message"),
            Field::FirstFixOrNull("hint"),
        ]);
        let json = serde_json::to_string(&sample().shaped(&SHAPE)).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"no-driver","pid":7,"message":"no NVIDIA driver found","hint":"install the NVIDIA driver"}"#
        );
        let mut bare = sample();
        bare.fix.clear();
        let json = serde_json::to_string(&bare.shaped(&SHAPE)).unwrap();
        assert!(json.ends_with(r#""hint":null}"#), "{json}");
    }

    #[test]
    fn each_layout_shows_the_message_and_the_fix() {
        let f = [sample()];
        let table = render(&f, &Layout::Table { quiet: false }, Lang::En);
        assert!(table.contains("no-driver"), "{table}");
        assert!(table.contains("fix: install the NVIDIA driver"), "{table}");
        let lines = render(&f, &Layout::Lines, Lang::En);
        assert_eq!(
            lines,
            "warning: pid 7: no NVIDIA driver found\n  fix: install the NVIDIA driver\n"
        );
        let hints = render(&[sample(), sample()], &Layout::Hints, Lang::En);
        assert_eq!(
            anstream::adapter::strip_str(&hints).to_string(),
            "warning: no NVIDIA driver found\nhint: install the NVIDIA driver\n\
             warning: no NVIDIA driver found\n",
            "a hint shown once"
        );
        let labelled = render(
            &f,
            &Layout::Labelled {
                heading: "matched",
                message: Msg::verbatim("meaning:"),
                labels: Vec::new(),
            },
            Lang::En,
        );
        assert!(
            labelled.starts_with("[no-driver] \n  meaning: no NVIDIA"),
            "{labelled}"
        );
        assert!(labelled.contains("  pid      7\n"), "{labelled}");
    }
}
