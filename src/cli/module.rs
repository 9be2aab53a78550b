//! `cudaenv module export [SPEC…] --format lmod|tcl DIR`: modulefiles for
//! Lmod and Environment Modules (see `modulefile`).

use super::Env;
use crate::activation;
use crate::activation::modulefile::{self, Format, Written};
use crate::activation::select::{self, Active, Origin, Selection};
use crate::error::{Error, ExitCode, Result, SpecError, StoreError};
use crate::spec::Spec;
use crate::store::{Installed, Store};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ModuleCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ModuleCommand {
    /// Write a modulefile `cuda/<version>` for each installed version (or each SPEC).
    #[command(
        after_help = "Then: `module use DIR` and `module load cuda/12.4.1-cudnn9.1.0.70`. \
        Each file sets what `cudaenv env` sets; unloading gives back what was there; \
        two cuda modules cannot be loaded at once. Existing files cudaenv did not write are never replaced."
    )]
    #[command(override_usage = "cudaenv module export [--format lmod|tcl] [SPEC]... DIR")]
    Export(ExportArgs),
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The modulefile language: Lua for Lmod, or Tcl (Environment Modules and Lmod).
    #[arg(long, value_enum, default_value = "lmod")]
    pub format: Format,
    /// Versions to export (the newest match of each; default: every installed
    /// version), then the directory to write into: the modulefiles go in
    /// DIR/cuda/, and `module use DIR` makes them visible.
    #[arg(value_name = "SPEC|DIR", required = true, num_args = 1..)]
    pub operands: Vec<std::ffi::OsString>,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    match args.command {
        ModuleCommand::Export(a) => export(env, a),
    }
}

fn export(env: &Env, args: ExportArgs) -> Result<ExitCode> {
    let store = crate::store::Store::configured(&env.ctx)?;
    // clap cannot put a required positional after a variadic one: the last
    // operand is DIR, the others are specs.
    let (dir, specs) = args
        .operands
        .split_last()
        .expect("clap requires at least one operand");
    let specs = specs
        .iter()
        .map(|s| {
            let s = s.to_str().ok_or_else(|| {
                Error::Spec(SpecError::InvalidSpec {
                    input: s.to_string_lossy().into_owned(),
                    reason: "it is not valid UTF-8".into(),
                })
            })?;
            s.parse::<Spec>()
        })
        .collect::<Result<Vec<_>>>()?;
    let versions = chosen(&store, &specs)?;
    let dir = crate::context::absolutize(std::path::Path::new(dir), env.ctx.cwd());
    // Everything is rendered and checked before the first file is written,
    // so a version that cannot be exported leaves the directory as it was.
    let mut files = Vec::new();
    for v in versions {
        let activation = activation::activation(&Active::Version(Box::new(v.clone())))?;
        let text = modulefile::render(args.format, &v, &activation)?;
        let path = modulefile::file_path(&dir, args.format, &v)?;
        modulefile::check_replaceable(&path)?;
        let module = format!(
            "{}/{}",
            modulefile::MODULE_NAME,
            modulefile::module_version(&v)
        );
        files.push((Written { module, path }, text));
    }
    let mut written: Vec<Written> = Vec::new();
    for (w, text) in files {
        modulefile::write(&w.path, &text)?;
        written.push(w);
    }
    for w in &written {
        env.outln(format!("{}\t{}", w.module, w.path.display()))?;
    }
    env.printer.success(format!(
        "wrote {} modulefile{} in {}",
        written.len(),
        if written.len() == 1 { "" } else { "s" },
        dir.join(modulefile::MODULE_NAME).display()
    ));
    env.printer.hint(format!("module use {}", dir.display()));
    Ok(ExitCode::Success)
}

/// The versions the specs name (each spec's newest match), or all of them.
fn chosen(store: &Store, specs: &[Spec]) -> Result<Vec<Installed>> {
    if specs.is_empty() {
        let all = store.list()?;
        if all.is_empty() {
            return Err(Error::Store(StoreError::NothingInstalled {
                root: store.root().to_path_buf(),
            }));
        }
        return Ok(all);
    }
    let mut out: Vec<Installed> = Vec::new();
    for spec in specs {
        if *spec == Spec::System {
            return Err(Error::Spec(SpecError::InvalidSpec {
                input: spec.to_string(),
                reason: "`system` is not a cudaenv version; a module needs one".into(),
            }));
        }
        let selection = Selection {
            spec: spec.clone(),
            origin: Origin::Argument,
        };
        if let Active::Version(v) = select::resolve_required(store, &selection)?
            && !out.iter().any(|o| o.name == v.name)
        {
            out.push(*v);
        }
    }
    Ok(out)
}
