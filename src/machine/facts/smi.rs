//! What `nvidia-smi` says about the driver and its GPUs: the one reader of
//! its output, run through the deadline runner (`command`).
//!
//! Up to the 605 drivers the banner reads `Driver Version: 580.159.04   CUDA
//! Version: 13.0`; from the 610 drivers it reads `KMD Version: 610.57.04
//! CUDA UMD Version: 13.3` (the kernel-mode driver and the CUDA user-mode
//! driver, which may come from different packages). Both are understood.
//! The banner is a display, though: the gatherer prefers the driver's own file
//! (`/proc/driver/nvidia/version`) and `nvidia-smi
//! --query-gpu=driver_version`, whose CSV answer did not change, and reads the
//! banner for what only it says (the CUDA version the driver supports).

use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::context::env_vars;
use crate::machine::compat::ComputeCapability;

use super::command;
use super::driver::Gpu;

/// What nvidia-smi said, if it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvidiaSmi {
    pub path: String,
    /// The header's "CUDA Version": the driver's maximum, not a toolkit.
    pub cuda_version: Option<String>,
    pub driver_version: Option<String>,
    pub error: Option<String>,
}

/// How long each nvidia-smi call may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Runs nvidia-smi, if PATH (or the platform's usual places) has it: its
/// banner, its driver version and, when `want_gpus`, its GPU list
/// (with `CUDA_VISIBLE_DEVICES` removed, as the driver probe sees them).
pub fn read(ctx: &Context, want_gpus: bool) -> Option<(NvidiaSmi, Vec<Gpu>)> {
    let extra = crate::os::nvidia_smi_dirs(
        ctx.var_os(env_vars::SYSTEM_ROOT),
        ctx.var_os(env_vars::PROGRAM_FILES),
    );
    let smi = command::which_in(ctx, "nvidia-smi", &extra)?;
    let mut info = NvidiaSmi {
        path: smi.display().to_string(),
        cuda_version: None,
        driver_version: None,
        error: None,
    };
    let run = |args: &[&str], hide_nothing: bool| {
        let mut cmd = Command::new(&smi);
        cmd.args(args).env_clear().envs(ctx.vars().iter());
        if hide_nothing {
            cmd.env_remove(env_vars::CUDA_VISIBLE_DEVICES);
        }
        command::run(cmd, TIMEOUT)
    };
    match run(&[], false) {
        Ok(out) if out.ok() => {
            // Both banners; the query's answer is preferred below.
            let banner = parse_banner(&out.stdout);
            info.cuda_version = banner.cuda;
            info.driver_version = banner.driver;
        }
        Ok(out) => info.error = Some(format!("{}{}", out.stdout.trim(), out.stderr.trim())),
        Err(e) => info.error = Some(e),
    }
    if info.error.is_some() {
        return Some((info, Vec::new()));
    }
    if let Ok(out) = run(&QUERY_DRIVER, false)
        && out.ok()
        && let Some(v) = parse_query(&out.stdout)
    {
        info.driver_version = Some(v);
    }
    let mut gpus = Vec::new();
    if want_gpus
        && let Ok(out) = run(&QUERY_GPUS, true)
        && out.ok()
    {
        gpus = parse_gpus(&out.stdout);
    }
    Some((info, gpus))
}

/// The driver and CUDA versions a banner names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Banner {
    pub driver: Option<String>,
    pub cuda: Option<String>,
}

/// The arguments that ask for the driver version alone.
const QUERY_DRIVER: [&str; 2] = ["--query-gpu=driver_version", "--format=csv,noheader"];

/// The arguments that list the GPUs (`parse_gpus`).
const QUERY_GPUS: [&str; 2] = [
    "--query-gpu=index,name,compute_cap,memory.total",
    "--format=csv,noheader,nounits",
];

/// Reads either banner. Labels are matched whole (`CUDA UMD Version:` is not
/// `CUDA Version:`), and a value must look like a version.
pub fn parse_banner(text: &str) -> Banner {
    Banner {
        driver: value(text, "KMD Version:").or_else(|| value(text, "Driver Version:")),
        cuda: value(text, "CUDA UMD Version:").or_else(|| value(text, "CUDA Version:")),
    }
}

/// The first line of `--query-gpu=driver_version --format=csv,noheader`
/// (one line per GPU, all the same driver).
pub fn parse_query(text: &str) -> Option<String> {
    let v = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    is_version(v).then(|| v.to_string())
}

/// `0, NVIDIA H200, 9.0, 143771`: one GPU a line.
pub fn parse_gpus(text: &str) -> Vec<Gpu> {
    text.lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            if cols.len() < 4 {
                return None;
            }
            Some(Gpu {
                index: cols[0].parse().ok()?,
                name: cols[1].to_string(),
                compute_capability: cols[2]
                    .parse::<ComputeCapability>()
                    .ok()
                    .map(|c| c.to_string()),
                memory_mib: cols[3].parse().ok(),
                multiprocessors: None,
                source: "nvidia-smi".into(),
            })
        })
        .collect()
}

fn value(text: &str, label: &str) -> Option<String> {
    let mut rest = text;
    while let Some(i) = rest.find(label) {
        // `CUDA Version:` must not match inside `CUDA UMD Version:`'s tail.
        let whole = i == 0 || !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric());
        let after = &rest[i + label.len()..];
        if whole
            && let Some(v) = after.split_whitespace().next()
            && is_version(v)
        {
            return Some(v.to_string());
        }
        rest = after;
    }
    None
}

fn is_version(v: &str) -> bool {
    !v.is_empty()
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "Tue Dec  1 10:00:00 2026\n+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n";
    const NEW: &str = "Tue Dec  1 10:00:00 2026\n+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 610.57.04        KMD Version: 610.57.04        CUDA UMD Version: 13.3         |\n";

    #[test]
    fn both_banners() {
        assert_eq!(
            parse_banner(OLD),
            Banner {
                driver: Some("580.159.04".into()),
                cuda: Some("13.0".into())
            }
        );
        assert_eq!(
            parse_banner(NEW),
            Banner {
                driver: Some("610.57.04".into()),
                cuda: Some("13.3".into())
            }
        );
        assert_eq!(parse_banner("NVIDIA-SMI has failed"), Banner::default());
        // A label with no version after it is not a version.
        assert_eq!(
            parse_banner("KMD Version: N/A CUDA UMD Version: N/A").driver,
            None
        );
    }

    #[test]
    fn the_gpu_list() {
        let g = parse_gpus("0, NVIDIA H200, 9.0, 143771\n1, Tesla T4, 7.5, 15360\n");
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].compute_capability.as_deref(), Some("9.0"));
        assert_eq!(g[1].memory_mib, Some(15360));
        assert_eq!(parse_gpus("garbage\n"), []);
    }

    #[test]
    fn the_query_answer() {
        assert_eq!(
            parse_query("610.57.04\n610.57.04\n").as_deref(),
            Some("610.57.04")
        );
        assert_eq!(parse_query("\n580.65.06\n").as_deref(), Some("580.65.06"));
        assert_eq!(parse_query("[N/A]\n"), None);
        assert_eq!(parse_query(""), None);
    }
}
