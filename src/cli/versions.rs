//! `cudaenv versions`: the installed versions, the active one marked.

use serde::Serialize;

use super::Env;
use crate::activation::select::{self, Active};
use crate::error::{ExitCode, Result};
use crate::store::{Kind, Location};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print names only, one per line (for scripts).
    #[arg(long)]
    pub bare: bool,
    /// Machine-readable output.
    #[arg(long, conflicts_with = "bare")]
    pub json: bool,
    /// Check every installed version's files against the list recorded when
    /// it was installed (sizes, CRC-32, link targets); exits 4 if any differs.
    #[arg(long, conflicts_with_all = ["bare", "json"])]
    pub check: bool,
}

#[derive(Serialize)]
struct Row {
    name: String,
    cuda: Option<String>,
    cudnn: Option<String>,
    kind: Kind,
    source: String,
    prefix: String,
    active: bool,
    /// A linked tree that no longer exists (moved or deleted outside cudaenv).
    missing: bool,
    /// The root it lives in.
    location: Location,
    /// A system version hidden by the user's version of the same name.
    shadowed: bool,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let store = crate::store::Store::configured(&env.ctx)?;
    let installed = store.list()?;
    if args.check {
        return check(env, &installed);
    }
    // A broken pin must not hide the list; it marks nothing active, and says why.
    let active = match select::active(&env.ctx) {
        Ok(a) => Some(a),
        Err(e) => {
            env.printer
                .warn(format_args!("{e}; no version is marked active"));
            None
        }
    };
    let active_name = active.as_ref().map(|(_, a)| a.name());
    let shadowed = store.shadowed()?;
    let rows: Vec<Row> = installed
        .iter()
        .map(|v| (v, false))
        .chain(shadowed.iter().map(|v| (v, true)))
        .map(|(v, shadowed)| Row {
            name: v.name.to_string(),
            cuda: v.cuda().map(|c| c.to_string()),
            cudnn: v.cudnn().map(|c| c.to_string()),
            kind: v.meta.kind,
            source: v.meta.source.clone(),
            prefix: v.prefix().display().to_string(),
            active: !shadowed && active_name.as_deref() == Some(v.name.as_str()),
            missing: v.meta.kind == Kind::Linked && !v.prefix().is_dir(),
            location: store.location(v),
            shadowed,
        })
        .collect();
    if args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            active: Option<String>,
            origin: Option<String>,
            versions: &'a [Row],
        }
        env.out_json(&Out {
            active: active_name.clone(),
            origin: active.as_ref().map(|(s, _)| s.origin.to_string()),
            versions: &rows,
        })?;
        return Ok(ExitCode::Success);
    }
    if args.bare {
        for r in rows.iter().filter(|r| !r.shadowed) {
            env.outln(&r.name)?;
        }
        return Ok(ExitCode::Success);
    }
    let system_active = matches!(active, Some((_, Active::System)));
    let mark = |on: bool| if on { "*" } else { " " };
    let mut text = format!("{} system\n", mark(system_active));
    for r in &rows {
        let mut line = format!("{} {}", mark(r.active), r.name);
        if r.kind == Kind::Linked {
            line.push_str(&format!(" -> {}", r.prefix));
            if r.missing {
                line.push_str(" (missing)");
            }
            // A link's name need not say what it holds; the detected versions do.
            let mut what = Vec::new();
            if let Some(c) = &r.cuda {
                what.push(format!("CUDA {c}"));
            }
            if let Some(c) = &r.cudnn {
                what.push(format!("cuDNN {c}"));
            }
            if !what.is_empty() {
                line.push_str(&format!(" [{}]", what.join(", ")));
            }
        }
        if let Some(system) = store
            .system_root()
            .filter(|_| r.location == Location::System)
        {
            line.push_str(&format!(" (in {}", system.display()));
            if r.shadowed {
                line.push_str(", hidden by yours of that name");
            }
            line.push(')');
        }
        if let (true, Some((sel, _))) = (r.active, &active) {
            line.push_str(&format!(" (set by {})", sel.origin));
        }
        text.push_str(&line);
        text.push('\n');
    }
    env.out(text.as_bytes())?;
    if rows.is_empty() {
        env.printer.hint("no versions installed yet; try `cudaenv install 12.4+cudnn9` or `cudaenv link NAME PATH`");
    }
    Ok(ExitCode::Success)
}

/// `--check`: one line per version on stdout (`NAME ok`, or `NAME FAILED`
/// and one indented line per difference). Linked versions are not checked:
/// their trees are not cudaenv's and may change legitimately.
fn check(env: &Env, installed: &[crate::store::Installed]) -> Result<ExitCode> {
    let mut failed = 0;
    let mut text = String::new();
    for v in installed.iter().filter(|v| v.meta.kind == Kind::Installed) {
        let problems = crate::store::files::check(&v.dir)?;
        if problems.is_empty() {
            text.push_str(&format!("{} ok\n", v.name));
        } else {
            failed += 1;
            text.push_str(&format!("{} FAILED\n", v.name));
            for p in problems {
                text.push_str(&format!("  {p}\n"));
            }
        }
    }
    env.out(text.as_bytes())?;
    if failed > 0 {
        env.printer.warn(format!(
            "{failed} version(s) differ from what was installed"
        ));
        env.printer
            .hint("reinstall each with `cudaenv install --force NAME`");
        return Ok(ExitCode::Integrity);
    }
    Ok(ExitCode::Success)
}
