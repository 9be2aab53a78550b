//! `cudaenv compat FRAMEWORK[==VERSION]`: the CUDA, cuDNN, Python and driver a
//! framework release needs, and the stack cudaenv would pick for it.

use std::path::Path;

use serde::Serialize;

use super::Env;
use crate::context::Context;
use crate::error::{Error, ExitCode, MachineError, Result};
use crate::machine::compat::framework::{Build, Requirement};
use crate::machine::compat::target::Target;
use crate::machine::compat::{self, FrameworkReq, Machine};
use crate::machine::doctor::{self, python::InstalledFramework};

/// The operating system whose framework builds `compat` shows (`--platform`):
/// frameworks publish per OS, so only the OS matters here, not the
/// architecture of `sys::platform::Platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FrameworkOs {
    Linux,
    /// Native Windows (TensorFlow GPU builds end at 2.10 there).
    Windows,
}

impl FrameworkOs {
    /// The OS cudaenv runs on: Windows builds on Windows, Linux builds
    /// elsewhere (WSL2 is Linux).
    pub fn host() -> FrameworkOs {
        match crate::os::platform::Platform::current() {
            Some(crate::os::platform::Platform::WindowsX86_64) => FrameworkOs::Windows,
            _ => FrameworkOs::Linux,
        }
    }

    /// The name the framework tables use.
    pub fn name(self) -> &'static str {
        match self {
            FrameworkOs::Linux => "linux",
            FrameworkOs::Windows => "windows",
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `tensorflow==2.10`, `torch==2.4`, `torch==2.4+cu118`; without a version,
    /// the release installed in the current Python environment.
    #[arg(value_name = "FRAMEWORK[==VERSION]")]
    pub framework: FrameworkReq,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Whose builds to show (default: the OS cudaenv runs on; WSL2 is linux).
    #[arg(long, value_enum)]
    pub platform: Option<FrameworkOs>,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Fills in the version from the current Python environment when none was given.
pub(super) fn resolve_request(
    ctx: &Context,
    req: &FrameworkReq,
) -> Result<(FrameworkReq, Option<InstalledFramework>)> {
    if req.version.is_some() {
        return Ok((req.clone(), None));
    }
    let py = doctor::python::probe(ctx).ok();
    let found = py
        .as_ref()
        .and_then(|p| {
            p.frameworks
                .iter()
                .find(|f| f.framework == req.framework && !f.package.ends_with("-pjrt"))
        })
        .cloned();
    let Some(fw) = found else {
        return Err(Error::Machine(MachineError::FrameworkNotInstalled {
            framework: req.framework.name().into(),
            python: py.map(|p| p.executable),
        }));
    };
    let mut full: FrameworkReq = format!(
        "{}=={}",
        req.framework,
        fw.version.split('+').next().unwrap_or(&fw.version)
    )
    .parse()?;
    // The installed build's own CUDA decides among a release's builds: a
    // major for the jax plugins and CuPy packages, major.minor for torch.
    if matches!(
        req.framework,
        compat::Framework::Jax | compat::Framework::Cupy
    ) {
        full.cuda_tag = fw
            .cuda
            .as_deref()
            .and_then(|c| c.parse::<u32>().ok())
            .map(|m| crate::spec::Version::from_parts(&[m]));
    }
    if req.framework == compat::Framework::Torch {
        full.cuda_tag = fw
            .cuda
            .as_deref()
            .and_then(|c| c.parse().ok())
            .map(|c: crate::spec::Version| c.truncate(2));
    }
    Ok((full, Some(fw)))
}

/// `--target-driver` / `--target-arch`: plan for another machine (`compat::target`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TargetArgs {
    /// Plan for a machine with this NVIDIA driver instead of this one
    /// (`550.54.15`, `550`; default: $CUDAENV_TARGET_DRIVER), e.g. for an image
    /// built on a host without a GPU.
    #[arg(long, value_name = "VER")]
    pub target_driver: Option<String>,
    /// Plan for GPUs of these architectures instead of this machine's
    /// (`sm_90`, `8.6`, comma-separated; default: $CUDAENV_TARGET_ARCH).
    #[arg(long, value_name = "sm_XY")]
    pub target_arch: Option<String>,
}

impl TargetArgs {
    /// The target from the flags, else from the variables (`config::target`,
    /// where each part's origin is known); `None` for this machine.
    pub(super) fn resolve(&self, ctx: &Context) -> Result<Option<Target>> {
        let t = crate::install::settings::target(
            ctx,
            self.target_driver.as_deref(),
            self.target_arch.as_deref(),
        )?;
        Ok(t.map(|s| s.value))
    }
}

/// What the machine to plan for can run, for choosing among builds: the
/// target when one is given, else this machine (empty without a driver).
/// A target is marked as one (`Machine::whose`), so every message about it
/// names it; this says so once more, up front.
pub(super) fn this_machine(env: &Env, target: &TargetArgs) -> Result<Machine> {
    if let Some(t) = target.resolve(&env.ctx)? {
        let machine = t.machine();
        env.printer
            .info(format!("planning for {}, not this one", machine.title()));
        return Ok(machine);
    }
    let exe = std::env::current_exe().ok();
    Ok(crate::machine::facts::machine(
        &env.ctx,
        exe.as_deref().map(Path::new),
    ))
}

/// `--for`: the stack a framework release needs on this machine, said with its reason.
pub(super) fn stack_for_cli(
    env: &Env,
    req: &FrameworkReq,
    machine: &Machine,
) -> Result<crate::spec::StackSpec> {
    let (req, _) = resolve_request(&env.ctx, req)?;
    let choice = compat::stack_for_on(&req, Some(machine), FrameworkOs::host().name())?;
    env.printer
        .info(format!("{req}: {} ({})", choice.spec, choice.reason));
    for n in &choice.requirement.notes {
        env.printer.info(format!("note: {n}"));
    }
    Ok(choice.spec)
}

/// The install-time guard: warn when the machine's (this one's or the
/// target's) driver or GPU cannot run the stack; refuse with `--strict`. Says
/// nothing on machines without a driver.
pub(super) fn guard_install(
    env: &Env,
    machine: &Machine,
    stack: &crate::spec::StackSpec,
    strict: bool,
) -> Result<()> {
    let issues = compat::guard(machine, &stack.cuda);
    let blocking: Vec<String> = issues
        .iter()
        .filter(|i| i.is_blocking())
        .map(|i| i.message(&stack.cuda, machine))
        .collect();
    if strict && !blocking.is_empty() {
        return Err(Error::Machine(MachineError::WouldNotRun {
            spec: stack.to_string(),
            problems: blocking,
            driver_too_old: issues
                .iter()
                .any(|i| matches!(i, compat::GuardIssue::DriverTooOld { .. })),
            machine: machine.title(),
            target: match machine.whose {
                compat::Whose::ThisMachine => None,
                compat::Whose::Target => Some(machine.name()),
            },
        }));
    }
    for i in &issues {
        env.printer.warn(i.message(&stack.cuda, machine));
    }
    if !blocking.is_empty() {
        env.printer.hint(match machine.whose {
            compat::Whose::ThisMachine => {
                "installing anyway; `--strict` refuses, `cudaenv doctor` shows the machine"
            }
            compat::Whose::Target => "installing anyway; `--strict` refuses",
        });
    }
    Ok(())
}

/// The machine an install plans for, as the planner asks of it: `--for`'s
/// choice and the guard (`--strict` refuses), said through the printer.
pub(super) struct Rules<'a> {
    pub env: &'a Env,
    pub machine: &'a Machine,
    pub strict: bool,
}

impl crate::install::planner::MachineRules for Rules<'_> {
    fn stack_for(&self, req: &FrameworkReq) -> Result<crate::spec::StackSpec> {
        stack_for_cli(self.env, req, self.machine)
    }

    fn guard(&self, stack: &crate::spec::StackSpec) -> Result<()> {
        guard_install(self.env, self.machine, stack, self.strict)
    }
}

#[derive(Serialize)]
struct BuildOut<'a> {
    #[serde(flatten)]
    build: &'a Build,
    /// Whether it runs on the machine planned for (this one or the target):
    /// `null` when the machine has no driver to ask.
    runs_here: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why_not: Option<String>,
}

/// `Requirement`'s fields, with each build's verdict for the machine: a
/// flattened `Requirement` would write `builds` twice.
#[derive(Serialize)]
struct Out<'a> {
    framework: compat::framework::Framework,
    version: &'a crate::spec::Version,
    package: &'a str,
    platform: &'static str,
    python: &'a str,
    builds: Vec<BuildOut<'a>>,
    confirmed: bool,
    notes: &'a [String],
    /// Where each fact comes from.
    sources: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    installed: Option<&'a InstalledFramework>,
    /// The machine planned for, when it is not this one (`runs_here` is about it).
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a Target>,
}

#[derive(Serialize)]
struct Choice<'a> {
    spec: String,
    reason: &'a str,
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let (req, installed) = resolve_request(&env.ctx, &args.framework)?;
    let version = req.version.clone().expect("resolved");
    let platform = args.platform.unwrap_or_else(FrameworkOs::host).name();
    let requirement = compat::framework::requirement(req.framework, &version, platform)?;
    let target = args.target.resolve(&env.ctx)?;
    let machine = this_machine(env, &args.target)?;
    let choice = compat::stack_for_on(&req, Some(&machine), platform)?;
    let builds = verdicts(&requirement, &machine);
    if args.json {
        env.out_json(&Out {
            framework: requirement.framework,
            version: &requirement.version,
            package: &requirement.package,
            platform: requirement.platform,
            python: &requirement.python,
            builds,
            confirmed: requirement.confirmed,
            notes: &requirement.notes,
            sources: &requirement.sources,
            choice: Some(Choice {
                spec: choice.spec.to_string(),
                reason: &choice.reason,
            }),
            installed: installed.as_ref(),
            target: target.as_ref(),
        })?;
        return Ok(ExitCode::Success);
    }
    let mut t = String::new();
    let name = format!("{} {}", requirement.package, requirement.version);
    t.push_str(&format!(
        "{name} ({platform}) — Python {}\n",
        requirement.python
    ));
    if let Some(fw) = &installed {
        t.push_str(&format!(
            "installed here: {} {}{}\n",
            fw.package,
            fw.version,
            fw.cuda
                .as_ref()
                .map(|c| format!(" (built with CUDA {c})"))
                .unwrap_or_default()
        ));
    }
    t.push_str(&build_table(&builds, platform, &machine));
    for n in &requirement.notes {
        t.push_str(&format!("note: {n}\n"));
    }
    for f in &requirement.sources {
        t.push_str(&format!("from: {f}\n"));
    }
    t.push_str(&format!(
        "stack: {}\nwhy:   {}\n",
        choice.spec, choice.reason
    ));
    let arg = FrameworkReq {
        version: Some(version.clone()),
        ..req.clone()
    }
    .to_string();
    t.push_str(&format!(
        "use:   cudaenv install --for {arg}   or   cudaenv local --for {arg}\n"
    ));
    env.out(t.as_bytes())?;
    Ok(ExitCode::Success)
}

/// Each build with whether the machine planned for runs it (nothing said
/// when it has no driver to ask).
fn verdicts<'a>(requirement: &'a Requirement, machine: &Machine) -> Vec<BuildOut<'a>> {
    requirement
        .builds
        .iter()
        .map(|b| {
            let verdict = machine.is_known().then(|| machine.can_run(&b.cuda));
            BuildOut {
                build: b,
                runs_here: verdict.as_ref().map(|v| v.is_ok()),
                why_not: verdict.and_then(|v| v.err()),
            }
        })
        .collect()
}

/// A CUDA range from a wheel's metadata (`≥ 12.1, < 13.0`), or its one CUDA.
fn cuda_text(b: &Build) -> String {
    match &b.cuda_range {
        Some(r) => r.to_string(),
        None => b.cuda.to_string(),
    }
}

/// The builds as a table: CUDA, cuDNN, channel, driver floor, and whether
/// the machine planned for runs each.
fn build_table(builds: &[BuildOut], platform: &str, machine: &Machine) -> String {
    let mut t = String::new();
    // A CUDA range widens the column.
    let w = builds
        .iter()
        .map(|b| cuda_text(b.build).chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let header = format!(
        "  {:<w$} {:<11} {:<13} {:<64} {}",
        "CUDA",
        "cuDNN",
        "build",
        format!("driver ({platform})"),
        match (machine.whose, machine.is_known()) {
            (compat::Whose::Target, _) => "target",
            (compat::Whose::ThisMachine, true) => "this machine",
            (compat::Whose::ThisMachine, false) => "",
        }
    );
    t.push_str(header.trim_end());
    t.push('\n');
    for b in builds {
        t.push_str(build_line(b, w, platform).trim_end());
        t.push('\n');
    }
    t
}

/// One row of `build_table`, its CUDA column `w` wide.
fn build_line(b: &BuildOut, w: usize, platform: &str) -> String {
    let drv = if platform == "windows" {
        &b.build.driver_windows
    } else {
        &b.build.driver_linux
    };
    let here = match (&b.runs_here, &b.why_not) {
        (Some(true), _) => "runs".to_string(),
        (Some(false), Some(w)) => format!("no: {w}"),
        _ => String::new(),
    };
    let channel = match (b.build.channel, &b.build.wheel) {
        (compat::data::Channel::Stable, None) => "stable",
        (compat::data::Channel::Stable, Some(_)) => "stable (PyPI)",
        (compat::data::Channel::Experimental, _) => "experimental",
    };
    format!(
        "  {:<w$} {:<11} {:<13} {:<64} {}",
        cuda_text(b.build),
        b.build
            .cudnn
            .as_ref()
            .map(|c| if b.build.cudnn_minimum {
                format!("≥ {c}")
            } else {
                c.to_string()
            })
            .unwrap_or_else(|| "-".into()),
        channel,
        drv.as_ref()
            .map(|d| d.describe())
            .unwrap_or_else(|| "unknown".into()),
        here
    )
}
