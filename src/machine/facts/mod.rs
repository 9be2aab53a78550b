//! The one gatherer of what the host says about its NVIDIA driver and GPUs.
//!
//! doctor (whose other facts — the active version, libraries on the
//! loader's path, Python — are its own), the install guard, `compat`,
//! `ls-remote`, `--for` and `explain` all read the machine here, once per
//! command; verify's child asks the driver through the same `driver::load`
//! and `driver::ask`, records it in the same `driver::Probe`, and answers
//! through the same child protocol. A machine without a driver is a normal case: the
//! facts say so and gathering never fails.
//!
//! Where each fact comes from, in the order it is believed:
//! - the driver version: the kernel module (`/proc/driver/nvidia/version`,
//!   `/sys/module/nvidia/version`), else the file libcuda resolves to, else
//!   nvidia-smi;
//! - the GPUs: libcuda, asked in a child (`driver`, `child`), else
//!   nvidia-smi's list;
//! - the newest CUDA the driver supports: libcuda's `cuDriverGetVersion`,
//!   and nvidia-smi's banner (`smi`, the one reader of nvidia-smi).
//!
//! `command` is how the small tools are run (a deadline, PATH lookups).

pub(crate) mod child;
pub(crate) mod command;
pub(crate) mod driver;
pub(crate) mod smi;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::machine::compat::{ComputeCapability, DriverOs, DriverVersion, Machine, Whose};

pub use driver::{Gpu, Probe};
pub use smi::NvidiaSmi;

/// The host's driver and GPUs, as `doctor --json` prints them (its `facts`
/// carry these fields at their top level).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    pub platform: HostFacts,
    /// Driver versions by where they were read (`/proc/driver/nvidia/version`, …).
    pub driver_versions: Vec<Sourced>,
    pub libcuda: Probe,
    pub gpus: Vec<Gpu>,
    pub nvidia_smi: Option<NvidiaSmi>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
/// The OS and architecture as the system names them, and WSL: facts to
/// report, not a platform cudaenv plans for (`os::platform::Platform`).
pub struct HostFacts {
    pub os: String,
    pub arch: String,
    pub wsl: bool,
    /// WSL2: `/usr/lib/wsl/lib/libcuda.so.1` exists (the Windows driver's bridge).
    pub wsl_libcuda: bool,
}

/// A value and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sourced {
    pub source: String,
    pub version: String,
}

/// What to ask.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// This binary, to run the driver probe in a child; `None` skips libcuda.
    pub exe: Option<&'a Path>,
    pub nvidia_smi: bool,
}

impl Host {
    /// The driver version to reason with: the kernel module's, else libcuda's, else nvidia-smi's.
    pub fn driver(&self) -> Option<DriverVersion> {
        self.driver_versions
            .iter()
            .find_map(|s| DriverVersion::parse(&s.version))
    }

    /// Whose driver this is: Windows' under WSL and on Windows.
    pub fn driver_os(&self) -> DriverOs {
        if self.platform.wsl || self.platform.os == "windows" {
            DriverOs::Windows
        } else {
            DriverOs::Linux
        }
    }

    pub fn compute_capabilities(&self) -> Vec<ComputeCapability> {
        self.gpus
            .iter()
            .filter_map(|g| g.compute_capability.as_deref()?.parse().ok())
            .collect()
    }

    /// What the compatibility rules need.
    pub fn machine(&self) -> Machine {
        Machine {
            driver: self.driver(),
            driver_os: self.driver_os(),
            gpus: self.compute_capabilities(),
            whose: Whose::ThisMachine,
        }
    }
}

/// Gathers the host's driver facts. Never fails: what cannot be learned is
/// recorded as absent.
pub fn gather(ctx: &Context, opts: Options) -> Host {
    let mut h = Host {
        platform: platform(),
        driver_versions: kernel_module(),
        ..Host::default()
    };
    if let Some(exe) = opts.exe {
        h.libcuda = driver::probe_in_child(ctx, exe);
        h.gpus = h.libcuda.gpus.clone();
    }
    if let Some(p) = &h.libcuda.path
        && let Some(v) = version_from_libcuda_path(Path::new(p))
    {
        h.driver_versions.push(Sourced {
            source: format!("libcuda ({p})"),
            version: v,
        });
    }
    if opts.nvidia_smi
        && let Some((info, gpus)) = smi::read(ctx, h.gpus.is_empty())
    {
        if h.gpus.is_empty() {
            h.gpus = gpus;
        }
        if let Some(d) = &info.driver_version
            && h.driver_versions.is_empty()
        {
            h.driver_versions.push(Sourced {
                source: "nvidia-smi".into(),
                version: d.clone(),
            });
        }
        h.nvidia_smi = Some(info);
    }
    h
}

/// The cheap subset the install guard, `compat`, `ls-remote`, `--for` and
/// `explain` need: the driver and the GPUs' architectures, nvidia-smi left out.
pub fn machine(ctx: &Context, exe: Option<&Path>) -> Machine {
    gather(
        ctx,
        Options {
            exe,
            nvidia_smi: false,
        },
    )
    .machine()
}

fn platform() -> HostFacts {
    let osrelease = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .to_ascii_lowercase();
    HostFacts {
        os: std::env::consts::OS.into(),
        arch: std::env::consts::ARCH.into(),
        wsl: osrelease.contains("microsoft") || osrelease.contains("wsl"),
        wsl_libcuda: Path::new("/usr/lib/wsl/lib/libcuda.so.1").exists(),
    }
}

/// The kernel module's version, from each file that names it.
pub fn kernel_module() -> Vec<Sourced> {
    let mut v = Vec::new();
    if let Ok(text) = std::fs::read_to_string("/proc/driver/nvidia/version")
        && let Some(version) = parse_proc_version(&text)
    {
        v.push(Sourced {
            source: "/proc/driver/nvidia/version".into(),
            version,
        });
    }
    if let Ok(text) = std::fs::read_to_string("/sys/module/nvidia/version") {
        let version = text.trim();
        if DriverVersion::parse(version).is_some() {
            v.push(Sourced {
                source: "/sys/module/nvidia/version".into(),
                version: version.into(),
            });
        }
    }
    v
}

/// How many GPUs the kernel module has (`/proc/driver/nvidia/gpus`),
/// whatever `CUDA_VISIBLE_DEVICES` hides.
pub fn gpus_present() -> Option<u32> {
    std::fs::read_dir("/proc/driver/nvidia/gpus")
        .ok()
        .map(|e| e.count() as u32)
}

/// `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build …`
pub fn parse_proc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM"))?;
    line.split_whitespace()
        .find(|t| t.contains('.') && DriverVersion::parse(t).is_some_and(|v| v.major() >= 100))
        .map(str::to_string)
}

/// `/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04` → `580.159.04` (after resolving `libcuda.so.1`).
pub fn version_from_libcuda_path(p: &Path) -> Option<String> {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let name = real.file_name()?.to_str()?;
    let v = name.strip_prefix("libcuda.so.")?;
    DriverVersion::parse(v)
        .filter(|d| d.major() >= 100)
        .map(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_driver_sources() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)  Thu Oct  9 2025\nGCC version:  gcc version 12.3.0\n";
        assert_eq!(parse_proc_version(open).as_deref(), Some("580.159.04"));
        let prop = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n";
        assert_eq!(parse_proc_version(prop).as_deref(), Some("535.104.05"));
        let older = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 2025\nGCC version:  gcc 12\n";
        assert_eq!(parse_proc_version(older).as_deref(), Some("580.159.04"));
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build\n";
        assert_eq!(parse_proc_version(open).as_deref(), Some("550.54.14"));
        assert_eq!(parse_proc_version("garbage"), None);
        assert_eq!(
            version_from_libcuda_path(Path::new("/nonexistent/libcuda.so.580.159.04")).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(
            version_from_libcuda_path(Path::new("/usr/lib/wsl/lib/libcuda.so.1.1")),
            None
        );
    }
}
