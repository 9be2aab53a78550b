//! The user's side of `fetch::Progress`. On a terminal: one indicatif line
//! per artifact plus a total, redrawn in place. Off a terminal (a log, CI,
//! `install.sh` piped to a file): plain lines, as pip and uv write in logs,
//! one per artifact when it is done and a total every few seconds while
//! bytes arrive, so a long install is never silent. `--quiet` (and
//! `--json`) show neither.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::install::fetch::Progress;
use crate::install::sources::measure::human_bytes;

pub struct Bars {
    /// Where messages go while no bar is drawn (`note`, and the log lines).
    printer: crate::ui::Printer,
    multi: MultiProgress,
    total: ProgressBar,
    lines: Mutex<Vec<ProgressBar>>,
    /// The plain lines written instead of bars off a terminal.
    log: Option<Mutex<Log>>,
}

/// How often a log gets a line about the bytes so far.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// Progress as lines of text: what each artifact did, and totals now and
/// then. Pure bookkeeping (the caller prints what it returns), so it is
/// tested without a clock.
#[derive(Debug)]
struct Log {
    items: Vec<LogItem>,
    started: Instant,
    last: Instant,
}

#[derive(Debug, Default)]
struct LogItem {
    label: String,
    total: Option<u64>,
    done: u64,
    status: String,
}

impl Log {
    fn new(now: Instant) -> Log {
        Log {
            items: Vec::new(),
            started: now,
            last: now,
        }
    }

    fn add(&mut self, label: &str, total: Option<u64>) -> usize {
        self.items.push(LogItem {
            label: label.to_string(),
            total,
            ..LogItem::default()
        });
        self.items.len() - 1
    }

    /// Bytes arrived; a line of totals when the last one is `LOG_EVERY` old.
    fn advance(&mut self, id: usize, bytes: u64, now: Instant) -> Option<String> {
        if let Some(i) = self.items.get_mut(id) {
            i.done += bytes;
        }
        if now.duration_since(self.last) < LOG_EVERY {
            return None;
        }
        self.last = now;
        let done: u64 = self.items.iter().map(|i| i.done).sum();
        let total: u64 = self.items.iter().filter_map(|i| i.total).sum();
        let secs = now.duration_since(self.started).as_secs_f64().max(0.001);
        let rate = human_bytes((done as f64 / secs) as u64);
        let left = self.items.iter().filter(|i| i.status != "done").count();
        Some(if total > 0 {
            format!(
                "downloading: {} of {} ({}%, {rate}/s), {left} of {} files to go",
                human_bytes(done),
                human_bytes(total),
                done * 100 / total.max(1),
                self.items.len()
            )
        } else {
            format!("downloading: {} ({rate}/s)", human_bytes(done))
        })
    }

    fn reset(&mut self, id: usize) {
        if let Some(i) = self.items.get_mut(id) {
            i.done = 0;
        }
    }

    fn status(&mut self, id: usize, status: &str) {
        if let Some(i) = self.items.get_mut(id) {
            i.status = status.to_string();
        }
    }

    /// The artifact's line: where it came from and what was done to it.
    fn finish(&mut self, id: usize) -> Option<String> {
        let i = self.items.get_mut(id)?;
        let how = match i.status.as_str() {
            "cached" => "already in the cache".to_string(),
            "copying" => "copied from the mirror directory and unpacked".to_string(),
            _ => match i.total {
                Some(t) => format!("downloaded ({}) and unpacked", human_bytes(t)),
                None => format!("downloaded ({}) and unpacked", human_bytes(i.done)),
            },
        };
        i.status = "done".into();
        Some(format!("{}: {how}", i.label))
    }
}

impl Bars {
    /// Bars on stderr when it is a terminal, plain lines through `printer`
    /// when it is not, nothing when `hidden`; messages go through `printer`
    /// while no bar is drawn.
    pub fn new(hidden: bool, printer: crate::ui::Printer) -> Bars {
        let terminal = std::io::stderr().is_terminal();
        let log = (!hidden && !terminal).then(|| Mutex::new(Log::new(Instant::now())));
        let target = if hidden || !terminal {
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
            log,
        }
    }

    /// Runs `f` on the log, when there is one, and prints what it says.
    fn log(&self, f: impl FnOnce(&mut Log) -> Option<String>) {
        if let Some(log) = &self.log
            && let Some(line) = f(&mut log.lock().expect("poisoned"))
        {
            self.printer.info(line);
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
        if let Some(log) = &self.log {
            log.lock().expect("poisoned").add(label, total);
        }
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
        self.log(|l| l.advance(id, bytes, Instant::now()));
    }

    fn reset(&self, id: usize) {
        self.log(|l| {
            l.reset(id);
            None
        });
        if let Some(pb) = self.line(id) {
            let done = pb.position();
            pb.set_position(0);
            self.total
                .set_position(self.total.position().saturating_sub(done));
        }
    }

    fn status(&self, id: usize, status: &str) {
        self.log(|l| {
            l.status(id, status);
            None
        });
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
        self.log(|l| l.finish(id));
        if let Some(pb) = self.line(id) {
            pb.set_prefix("done");
            pb.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_gets_a_line_per_artifact_and_totals_every_few_seconds() {
        let t0 = Instant::now();
        let mut log = Log::new(t0);
        let a = log.add("cudart 12.4.127", Some(1_000_000));
        let b = log.add("cudnn 9.1.0.70", Some(3_000_000));
        let c = log.add("cublas 12.4.5.8", Some(500));
        log.status(a, "downloading");
        assert_eq!(log.advance(a, 1_000_000, t0 + Duration::from_secs(1)), None);
        assert_eq!(
            log.finish(a).unwrap(),
            "cudart 12.4.127: downloaded (1.0 MB) and unpacked"
        );
        assert_eq!(log.advance(b, 500_000, t0 + Duration::from_secs(4)), None);
        assert_eq!(
            log.advance(b, 500_000, t0 + Duration::from_secs(5))
                .unwrap(),
            "downloading: 2.0 MB of 4.0 MB (49%, 400 KB/s), 2 of 3 files to go"
        );
        // Not again before another LOG_EVERY.
        assert_eq!(log.advance(b, 1, t0 + Duration::from_secs(9)), None);
        assert!(log.advance(b, 1, t0 + Duration::from_secs(10)).is_some());
        log.status(c, "cached");
        assert_eq!(
            log.finish(c).unwrap(),
            "cublas 12.4.5.8: already in the cache"
        );
        assert_eq!(log.finish(99), None);
    }
}
