//! `cudaenv doctor [--json]`: what is wrong with this machine's CUDA setup, and the fix.

use serde::Serialize;

use super::Env;
use crate::error::{ExitCode, Result};
use crate::i18n::Lang;
use crate::machine::doctor::{self, Finding, Level};
use crate::machine::finding::{self, Layout, Shaped};
use crate::msg;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the facts and findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Do not inspect the Python environment.
    #[arg(long)]
    pub no_python: bool,
    /// Diagnose the facts recorded by `doctor --json` (on another machine, say)
    /// instead of gathering this machine's.
    #[arg(long, value_name = "FILE", conflicts_with = "no_python")]
    pub facts: Option<std::path::PathBuf>,
    /// Internal: load libcuda in this process and print what it reports (JSON).
    #[arg(long, hide = true)]
    pub probe_driver: bool,
    #[command(flatten)]
    pub target: super::compat::TargetArgs,
}

#[derive(Serialize)]
struct Report<'a> {
    summary: Summary,
    findings: Vec<Shaped<'a>>,
    facts: &'a doctor::Facts,
}

#[derive(Serialize)]
struct Summary {
    errors: usize,
    warnings: usize,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    if args.probe_driver {
        env.out(
            crate::machine::facts::child::encode(&crate::machine::facts::driver::probe())
                .map_err(crate::Error::encode("the driver probe"))?
                .as_bytes(),
        )?;
        return Ok(ExitCode::Success);
    }
    let target = args.target.resolve(&env.ctx)?;
    let mut facts = match &args.facts {
        Some(path) => read_facts(&crate::context::absolutize(path, env.ctx.cwd()))?,
        None => {
            let exe = std::env::current_exe().ok();
            doctor::gather(
                &env.ctx,
                &doctor::Options {
                    host: crate::machine::facts::Options {
                        exe: exe.as_deref(),
                        nvidia_smi: true,
                    },
                    python: !args.no_python,
                },
            )
        }
    };
    if target.is_some() {
        facts.target = target;
    }
    let findings = doctor::diagnose(&facts);
    let summary = Summary {
        errors: findings.iter().filter(|f| f.level == Level::Error).count(),
        warnings: findings
            .iter()
            .filter(|f| f.level == Level::Warning)
            .count(),
    };
    if args.json {
        env.out_json(&Report {
            summary: Summary { ..summary },
            findings: findings
                .iter()
                .map(|f| f.shaped(&doctor::diagnose::JSON))
                .collect(),
            facts: &facts,
        })?;
    } else {
        let text = render(&findings, env.printer.quiet, &summary, env.printer.lang());
        env.out_styled(&text)?;
    }
    Ok(if summary.errors > 0 {
        ExitCode::DoctorErrors
    } else {
        ExitCode::Success
    })
}

/// A `doctor --json` report (its `facts`) or bare facts.
fn read_facts(path: &std::path::Path) -> Result<doctor::Facts> {
    let text = crate::os::fs::read_bounded_text(path, crate::os::fs::SMALL)
        .map_err(|e| crate::Error::io("cannot read", path)(e.into()))?;
    let bad = |reason: String| {
        crate::Error::Machine(crate::error::MachineError::InvalidFacts {
            path: path.to_path_buf(),
            reason,
        })
    };
    let mut value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if let Some(f) = value.get_mut("facts") {
        value = f.take();
    }
    serde_json::from_value(value).map_err(|e| bad(e.to_string()))
}

/// One line per finding (its level, code and message) with its fix below
/// (`machine::finding`'s table), then the counts; the words in `lang`, the
/// codes as they are.
fn render(findings: &[Finding], quiet: bool, s: &Summary, lang: Lang) -> String {
    let mut out = finding::render(findings, &Layout::Table { quiet }, lang);
    out.push_str(&msg!("doctor-summary", errors = s.errors, warnings = s.warnings).render(lang));
    out.push('\n');
    out
}
