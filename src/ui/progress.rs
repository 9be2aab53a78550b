//! The terminal side of `fetch::Progress`: one indicatif line per artifact
//! plus a total. Drawn only when stderr is a terminal and `--quiet` is off.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::install::fetch::Progress;

pub struct Bars {
    /// Where messages go while no bar is drawn (`note`).
    printer: crate::ui::Printer,
    multi: MultiProgress,
    total: ProgressBar,
    lines: Mutex<Vec<ProgressBar>>,
}

impl Bars {
    /// Bars on stderr, or nothing when `hidden` or stderr is not a
    /// terminal; messages then go through `printer`.
    pub fn new(hidden: bool, printer: crate::ui::Printer) -> Bars {
        let target = if hidden || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let total = multi.add(ProgressBar::new(0));
        total.set_style(
            ProgressStyle::with_template(
                "{prefix:>12.bold} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        total.set_prefix("total");
        Bars {
            printer,
            multi,
            total,
            lines: Mutex::new(Vec::new()),
        }
    }

    fn line(&self, id: usize) -> Option<ProgressBar> {
        self.lines.lock().ok()?.get(id).cloned()
    }

    /// Removes every bar (before printing the summary), for good: a bar that
    /// is updated or dropped later (an unfinished one draws itself once more
    /// when dropped) must not appear again below the summary.
    pub fn clear(&self) {
        let _ = self.multi.clear();
        self.multi.set_draw_target(ProgressDrawTarget::hidden());
    }
}

impl Progress for Bars {
    fn note(&self, message: &str) {
        if self.multi.is_hidden() {
            self.printer.info(message);
        } else if !self.printer.quiet {
            let _ = self.multi.println(message);
        }
    }

    fn add(&self, label: &str, total: Option<u64>) -> usize {
        let pb = self
            .multi
            .insert_before(&self.total, ProgressBar::new(total.unwrap_or(0)));
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix:>12.dim} {msg:<28} {bytes:>10}/{total_bytes:<10}",
            )
            .expect("valid template"),
        );
        pb.set_prefix("waiting");
        pb.set_message(label.to_string());
        if let Some(t) = total {
            self.total.inc_length(t);
        }
        let mut lines = self.lines.lock().expect("poisoned");
        lines.push(pb);
        lines.len() - 1
    }

    fn advance(&self, id: usize, bytes: u64) {
        if let Some(pb) = self.line(id) {
            pb.inc(bytes);
        }
        self.total.inc(bytes);
    }

    fn reset(&self, id: usize) {
        if let Some(pb) = self.line(id) {
            let done = pb.position();
            pb.set_position(0);
            self.total
                .set_position(self.total.position().saturating_sub(done));
        }
    }

    fn status(&self, id: usize, status: &str) {
        if let Some(pb) = self.line(id) {
            if status == "cached" {
                let len = pb.length().unwrap_or(0);
                let left = len.saturating_sub(pb.position());
                pb.set_position(len);
                self.total.inc(left);
            }
            pb.set_prefix(status.to_string());
        }
    }

    fn finish(&self, id: usize) {
        if let Some(pb) = self.line(id) {
            pb.set_prefix("done");
            pb.finish();
        }
    }
}
