//! `cudaenv verify [SPEC] [--json] [--dtype …] [--size N] [--device K|all] [--timeout SECS]`:
//! prove on the GPU that a version works.
//!
//! Resolves the version as `exec` does, applies its activation to a copy of
//! the environment, and runs the checks in a child (`__verify-child`, hidden)
//! with exactly that environment; see `crate::machine::verify` for why.

use std::time::Instant;

use super::Env;
use crate::activation;
use crate::activation::select::{self, Active};
use crate::error::{Error, ExitCode, MachineError, Result};
use crate::machine::finding;
use crate::machine::verify::{
    self, Devices, Dtype, Expected, Probe, Request, Verification, diagnose, render,
};
use crate::msg;
use crate::spec::Spec;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version to verify; default: the active one.
    pub spec: Option<Spec>,
    /// Print the facts, measurements and problems as JSON.
    #[arg(long)]
    pub json: bool,
    /// GEMM element types, comma-separated [default: fp32,tf32,fp16,bf16 where the GPU supports them]
    #[arg(long, value_delimiter = ',', value_name = "fp32,tf32,fp16,bf16,fp64")]
    pub dtype: Vec<Dtype>,
    /// Matrix size N of the N×N×N GEMMs.
    #[arg(long, value_name = "N", default_value_t = verify::DEFAULT_SIZE, value_parser = parse_size)]
    pub size: usize,
    /// The GPU to run the checks on: an index, or `all`.
    #[arg(long, value_name = "K|all", default_value = "0")]
    pub device: Devices,
    /// Stop the checks (and every process they started) after SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = verify::DEFAULT_TIMEOUT_SECS, value_parser = parse_timeout)]
    pub timeout: u64,
}

fn parse_timeout(s: &str) -> std::result::Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if (1..=MAX_TIMEOUT_SECS).contains(&n) => Ok(n),
        _ => Err(format!(
            "the timeout must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"
        )),
    }
}

/// A day: long enough for any real check, short enough to be a number.
const MAX_TIMEOUT_SECS: u64 = 86_400;

fn parse_size(s: &str) -> std::result::Result<usize, String> {
    let n: usize = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if !(verify::MIN_SIZE..=verify::MAX_SIZE).contains(&n) || !n.is_multiple_of(8) {
        return Err(format!(
            "the size must be a multiple of 8 from {} to {}",
            verify::MIN_SIZE,
            verify::MAX_SIZE
        ));
    }
    Ok(n)
}

/// The hidden child: `cudaenv __verify-child REQUEST_JSON`.
#[derive(Debug, clap::Args)]
pub struct ChildArgs {
    pub request: String,
}

pub fn run_child(env: &Env, args: ChildArgs) -> Result<ExitCode> {
    let request: Request = serde_json::from_str(&args.request).map_err(|e| {
        Error::Machine(MachineError::BadChildRequest {
            command: verify::CHILD_COMMAND,
            reason: e.to_string(),
        })
    })?;
    let probe = verify::probe::run(&env.ctx, &request);
    env.out(
        crate::machine::facts::child::encode(&probe)
            .map_err(Error::encode("the probe report"))?
            .as_bytes(),
    )?;
    Ok(ExitCode::Success)
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let started = Instant::now();
    let (selection, active) = select::active_or(&env.ctx, args.spec.as_ref())?;
    let store = crate::store::Store::configured(&env.ctx)?;
    let delta = activation::plan(&env.ctx, &store, &active)?;
    let mut vars = env.ctx.vars_map();
    delta.apply(&mut vars);

    let expected = match &active {
        Active::System => Expected {
            name: "system".into(),
            ..Expected::default()
        },
        Active::Version(v) => {
            let mut dirs = v.lib_dirs();
            dirs.push(v.prefix());
            dirs.extend(v.cudnn_home());
            Expected {
                name: v.name.to_string(),
                cuda: v.cuda().cloned(),
                cudnn: v.cudnn().cloned(),
                libs: v.libs(),
                dirs,
            }
        }
    };
    let request = Request {
        dtypes: (!args.dtype.is_empty()).then(|| {
            let mut d = args.dtype.clone();
            d.sort();
            d.dedup();
            d
        }),
        size: args.size,
        devices: args.device,
        expected: expected.clone(),
    };
    let exe = std::env::current_exe().map_err(Error::io(
        "cannot find the cudaenv executable",
        "/proc/self/exe",
    ))?;
    env.printer.info(
        env.printer
            .text(&msg!("verify-verifying", name = expected.name)),
    );

    let timeout = std::time::Duration::from_secs(args.timeout);
    // Said as soon as the child's facts show it, before the checks that may
    // take minutes because of it.
    let mut announced = false;
    let mut early = |p: &Probe| {
        if announced || p.devices.is_empty() {
            return;
        }
        for e in diagnose::architecture(&expected, p) {
            if let MachineError::StackPredatesGpu { .. } = e {
                env.printer
                    .warn_msg(&msg!("verify-running-anyway", problem = e));
                announced = true;
            }
        }
        // Once the runtime is known, the stack's CUDA is too: nothing more to wait for.
        announced |= !p.libraries.is_empty();
    };
    let report = verify::run_child(&exe, &vars, &request, timeout, &mut early)?;
    // Facts gathered before a crash or the deadline are judged like a whole
    // report; the stop itself comes after what explains it.
    let d = diagnose::diagnose(&expected, &report.probe);
    let (probe, warnings) = (report.probe, d.warnings);
    let mut problems = d.problems;
    problems.extend(report.stopped.as_ref().map(verify::finding));
    let exit = verify::exit_code(&problems);
    let report = Verification {
        version: expected.name.clone(),
        selected_by: selection.origin.to_string(),
        cuda: expected.cuda.clone(),
        cudnn: expected.cudnn.clone(),
        size: args.size,
        probe,
        passed: problems.is_empty(),
        problems,
        warnings: warnings.clone(),
        exit_code: exit.code(),
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    if args.json {
        env.out_json(&report)?;
    } else {
        env.out(render::render(&report).as_bytes())?;
    }
    for w in &warnings {
        env.printer.warn(w);
    }
    env.printer.report(&finding::render(
        &report.problems,
        &verify::LAYOUT,
        env.printer.lang(),
    ));
    if exit == ExitCode::Success {
        env.printer.success(env.printer.text(&msg!(
            "verify-works",
            name = report.version,
            seconds = format!("{:.2}", report.wall_seconds)
        )));
    }
    Ok(exit)
}
