//! `cudaenv explain "ERROR TEXT"` (or the text on stdin): what a CUDA error
//! message means, what provides the missing piece, whether it is installed,
//! and the command that fixes it.

use std::io::Read;

use super::Env;
use unicode_width::UnicodeWidthStr;

use crate::error::{Error, ExitCode, MachineError, Result};
use crate::i18n::Lang;
use crate::machine::explain::{self, Explanation, Input};
use crate::msg;
use crate::{activation::select, machine::doctor};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The error text; without it (or with `-`), read it from standard input.
    #[arg(value_name = "ERROR TEXT", num_args = 0..)]
    pub text: Vec<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Logs can be long; only their tail is explained beyond this size.
const MAX_INPUT: usize = 1 << 20;

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let text = if args.text.is_empty() || args.text == ["-"] {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(MAX_INPUT as u64)
            .read_to_end(&mut buf)
            .map_err(Error::io("cannot read", "standard input"))?;
        String::from_utf8_lossy(&buf).into_owned()
    } else {
        args.text.join(" ")
    };
    if text.trim().is_empty() {
        return Err(Error::Machine(MachineError::NoErrorText));
    }
    let store = crate::store::Store::configured(&env.ctx)?;
    let installed = store
        .list()
        .unwrap_or_default()
        .iter()
        .map(|v| explain::stack_of(v.name.as_str(), v.cuda(), v.cudnn(), v.libs()))
        .collect();
    let active = select::active(&env.ctx).ok().and_then(|(_, a)| {
        a.installed()
            .map(|v| explain::stack_of(v.name.as_str(), v.cuda(), v.cudnn(), v.libs()))
    });
    let exe = std::env::current_exe().ok();
    let input = Input {
        text,
        installed,
        active,
        machine: crate::machine::facts::machine(&env.ctx, exe.as_deref()),
        frameworks: doctor::python::probe(&env.ctx)
            .map(|p| p.frameworks)
            .unwrap_or_default(),
    };
    let found = explain::explain(&input);
    if args.json {
        env.out_json(&found)?;
    } else {
        env.out(render(&found, env.printer.lang()).as_bytes())?;
    }
    if found.is_empty() {
        env.printer.warn_msg(&msg!("explain-not-recognised"));
        env.printer.hint_msg(&msg!("explain-not-recognised-hint"));
        return Ok(ExitCode::Failure);
    }
    Ok(ExitCode::Success)
}

/// The report in `lang`: each explanation's id and matched text, then its
/// labelled lines, the labels padded to one column (by display width, so
/// that Chinese labels line up too).
fn render(found: &[Explanation], lang: Lang) -> String {
    let labels = [
        msg!("explain-label-meaning"),
        msg!("explain-label-provided-by"),
        msg!("explain-label-installed"),
        msg!("explain-label-fix"),
    ]
    .map(|m| m.render(lang));
    let column = labels.iter().map(|l| l.width()).max().unwrap_or(0) + 1;
    let pad = |label: &str| format!("{label}{}", " ".repeat(column - label.width()));
    let [meaning, provided_by, installed, fix] = labels.each_ref().map(|l| pad(l));
    let blank = " ".repeat(column);
    let mut t = String::new();
    for (i, e) in found.iter().enumerate() {
        if i > 0 {
            t.push('\n');
        }
        t.push_str(&format!("[{}] {}\n", e.id, e.matched));
        t.push_str(&format!("  {meaning}{}\n", e.meaning.render(lang)));
        if let Some(p) = &e.provided_by {
            t.push_str(&format!("  {provided_by}{}\n", p.render(lang)));
        }
        if let Some(p) = &e.installed {
            t.push_str(&format!("  {installed}{}\n", p.render(lang)));
        }
        for (j, f) in e.fix.iter().enumerate() {
            let label = if j == 0 { &fix } else { &blank };
            t.push_str(&format!("  {label}{}\n", f.render(lang)));
        }
    }
    t
}
