//! From facts to findings: a pure function, table-tested over fact sets.
//!
//! Each finding has a level (`ok`, `warning`, `error`), a stable `code` for
//! scripts, a message that states what was found, and the command or action
//! that fixes it. Only errors make `doctor` exit non-zero; a machine without a
//! driver or GPU (CI, build hosts) gets warnings, never errors.
//!
//! The rules stand in one module per concern, each adding its findings to
//! `Out` in the order `diagnose` calls them: `driver` (the driver, libcuda,
//! the GPUs, or a target's), `active` (the active version against them),
//! `libraries` (other copies the loader would find), `windows`, `devices`
//! (`CUDA_VISIBLE_DEVICES`, device nodes), `frameworks` (the Python
//! environment against the active version) and `kernels` (a framework's own
//! GPU code against the GPUs).

use crate::i18n::Msg;
use crate::machine::compat::ComputeCapability;
use crate::machine::finding::{Field, Shape};
pub use crate::machine::finding::{Finding, Level};
use crate::msg;
use crate::spec::Version;

use super::facts::Facts;

mod active;
mod devices;
mod driver;
mod frameworks;
mod kernels;
mod libraries;
mod windows;

use active::{active_findings, host_compiler_findings};
use devices::environment_findings;
use driver::{driver_findings, target_findings};
use frameworks::framework_findings;
use libraries::library_findings;
use windows::windows_findings;

/// How doctor's `--json` writes a finding (docs/doctor.md).
pub const JSON: Shape = Shape(&[
    Field::Level("level"),
    Field::Code("code"),
    Field::Message("message"),
    Field::FirstFix("fix"),
]);

struct Out(Vec<Finding>);

impl Out {
    fn push(&mut self, level: Level, code: &str, message: Msg, fix: Option<Msg>) {
        self.0.push(Finding {
            level,
            code: code.to_string().into(),
            message,
            fix: fix.into_iter().collect(),
            details: Vec::new(),
        });
    }
    fn ok(&mut self, code: &str, message: Msg) {
        self.push(Level::Ok, code, message, None);
    }
    fn warn(&mut self, code: &str, message: Msg, fix: Msg) {
        self.push(Level::Warning, code, message, Some(fix));
    }
    fn error(&mut self, code: &str, message: Msg, fix: Msg) {
        self.push(Level::Error, code, message, Some(fix));
    }
}

fn v(s: &str) -> Option<Version> {
    s.parse().ok()
}

/// Every finding for a set of facts, in reading order.
pub fn diagnose(f: &Facts) -> Vec<Finding> {
    let mut o = Out(Vec::new());
    match &f.target {
        Some(t) => target_findings(t, &mut o),
        None => driver_findings(f, &mut o),
    }
    active_findings(f, &mut o);
    host_compiler_findings(f, &mut o);
    library_findings(f, &mut o);
    if let Some(w) = &f.windows {
        windows_findings(f, w, &mut o);
    }
    environment_findings(f, &mut o);
    // Containers' rules are Linux's (Apptainer, the NVIDIA container runtime).
    if f.windows.is_none() {
        o.0.extend(super::container::findings(f));
    }
    framework_findings(f, &mut o);
    o.0
}

/// An architecture's family name (`Hopper`), or "unknown architecture".
fn family_of(gpu: ComputeCapability) -> Msg {
    match gpu.family() {
        Some(f) => Msg::verbatim(f),
        None => msg!("doctor-unknown-architecture"),
    }
}

/// Whether a directory at `position` of a search path comes before the
/// active version's first one (any listed directory does when none is active).
fn listed_before(position: Option<usize>, first_active: Option<usize>) -> bool {
    match (position, first_active) {
        (Some(p), Some(fa)) => p < fa,
        (Some(_), None) => true,
        _ => false,
    }
}

fn list(v: &[&str]) -> Msg {
    const MAX: usize = 4;
    if v.len() <= MAX {
        Msg::verbatim(v.join(", "))
    } else {
        msg!(
            "doctor-list-more",
            first = v[..MAX].join(", "),
            more = v.len() - MAX
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::compat::Framework;
    use crate::machine::doctor::facts::{ActiveFacts, DeviceNode, EnvFacts, LibDir};
    use crate::machine::doctor::python::{InstalledFramework, Package, PythonEnv};
    use crate::machine::facts::driver::ApiError;
    use crate::machine::facts::{Gpu, Host, HostFacts, NvidiaSmi, Probe, Sourced};

    const CUDA13: &str = "/usr/local/cuda-13.0/targets/x86_64-linux/lib";

    fn libs(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// A healthy GPU machine: driver 580, one H200, CUDA 13.0 active and activated.
    fn healthy() -> Facts {
        Facts {
            host: Host {
                platform: HostFacts {
                    os: "linux".into(),
                    arch: "x86_64".into(),
                    wsl: false,
                    wsl_libcuda: false,
                },
                driver_versions: vec![
                    Sourced {
                        source: "/proc/driver/nvidia/version".into(),
                        version: "580.159.04".into(),
                    },
                    Sourced {
                        source: "libcuda".into(),
                        version: "580.159.04".into(),
                    },
                ],
                libcuda: Probe {
                    loaded: true,
                    path: Some("/usr/lib/x86_64-linux-gnu/libcuda.so.1".into()),
                    driver_api: Some(13000),
                    ..Default::default()
                },
                gpus: vec![Gpu {
                    index: 0,
                    name: "NVIDIA H200".into(),
                    compute_capability: Some("9.0".into()),
                    memory_mib: Some(143771),
                    multiprocessors: None,
                    source: "libcuda".into(),
                }],
                nvidia_smi: None,
            },
            active: Some(ActiveFacts {
                name: "13.0".into(),
                spec: "13.0".into(),
                origin: "/work/.cuda-version".into(),
                origin_kind: "local".into(),
                cuda: Some("13.0.0".into()),
                cudnn: None,
                libraries: Default::default(),
                prefix: Some("/usr/local/cuda-13.0".into()),
                cuda_home: Some("/usr/local/cuda-13.0".into()),
                lib_dirs: vec![CUDA13.into()],
                libs: libs(&[
                    "libcudart.so",
                    "libcudart.so.13",
                    "libcudart.so.13.0.48",
                    "libcublas.so.13",
                ]),
            }),
            active_error: None,
            env: EnvFacts {
                ld_library_path: vec![CUDA13.into()],
                cuda_home: Some("/usr/local/cuda-13.0".into()),
                cuda_path: None,
                cuda_visible_devices: None,
                cudaenv_active: Some("13.0".into()),
            },
            library_dirs: vec![LibDir {
                dir: CUDA13.into(),
                origin: "LD_LIBRARY_PATH".into(),
                position: Some(0),
                libs: libs(&["libcudart.so.13"]),
            }],
            device_nodes: ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]
                .iter()
                .map(|p| DeviceNode {
                    path: p.to_string(),
                    readable: true,
                    writable: true,
                })
                .collect(),
            python: None,
            python_error: None,
            target: None,
            container: Default::default(),
            bundled_cuda: None,
            host_compiler: None,
            windows: None,
        }
    }

    /// What torch 2.11+cu130 installed on the GPU machine (its dist-info versions).
    const CU13_WHEELS: [(&str, &str); 3] = [
        ("nvidia-cublas", "13.1.0.3"),
        ("nvidia-cuda-runtime", "13.0.96"),
        ("nvidia-cudnn-cu13", "9.19.0.56"),
    ];

    fn python(frameworks: Vec<InstalledFramework>, wheels: &[(&str, &str)]) -> Option<PythonEnv> {
        Some(PythonEnv {
            executable: "/venv/bin/python".into(),
            version: Some("3.11.7".into()),
            site_dirs: vec!["/venv/lib/python3.11/site-packages".into()],
            frameworks,
            nvidia_wheels: wheels
                .iter()
                .map(|(n, v)| Package {
                    name: n.to_string(),
                    version: v.to_string(),
                })
                .collect(),
            wheel_overlaps: Vec::new(),
        })
    }

    fn fw(
        framework: Framework,
        package: &str,
        version: &str,
        cuda: Option<&str>,
        bundles: bool,
    ) -> InstalledFramework {
        InstalledFramework {
            framework,
            package: package.into(),
            version: version.into(),
            cuda: cuda.map(str::to_string),
            cudnn: None,
            bundles_cuda: bundles,
            kernels: Vec::new(),
        }
    }

    fn active_stack(
        f: &mut Facts,
        name: &str,
        cuda: &str,
        cudnn: Option<&str>,
        dir: &str,
        l: &[&str],
    ) {
        let a = f.active.as_mut().unwrap();
        a.name = name.into();
        a.cuda = Some(cuda.into());
        a.cudnn = cudnn.map(str::to_string);
        a.lib_dirs = vec![dir.into()];
        a.libs = libs(l);
        a.cuda_home = Some(dir.trim_end_matches("/lib64").into());
        f.env.ld_library_path = vec![dir.into()];
        f.env.cudaenv_active = Some(name.into());
        f.env.cuda_home = a.cuda_home.clone();
    }

    /// A cu124 torch whose libtorch_cuda has machine code for sm_50 … sm_90
    /// and, when `ptx`, PTX for sm_90.
    fn torch_with_kernels(ptx: bool, error: Option<&str>) -> InstalledFramework {
        use crate::machine::doctor::python::LibraryKernels;
        let mut t = fw(Framework::Torch, "torch", "2.4.1+cu124", Some("12.4"), true);
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        t.kernels = vec![LibraryKernels {
            file: "torch/lib/libtorch_cuda.so".into(),
            sass: [
                "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
            ]
            .map(cc)
            .into(),
            ptx: if ptx {
                [cc("sm_90")].into()
            } else {
                Default::default()
            },
            error: None,
        }];
        if let Some(e) = error {
            t.kernels.push(LibraryKernels {
                file: "torch/lib/libc10_cuda.so".into(),
                error: Some(e.into()),
                ..LibraryKernels::default()
            });
        }
        t
    }

    /// torch 2.11.0+cu130's two kernel libraries as doctor read them on an
    /// H200 (docs/doctor.md): libtorch_cuda.so decides; libtorch_cuda_linalg.so,
    /// with fewer architectures, is a warning of its own where it lacks one.
    #[test]
    fn the_best_covered_library_decides_and_a_narrower_one_is_a_warning() {
        use crate::machine::doctor::python::LibraryKernels;
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let mut t = fw(
            Framework::Torch,
            "torch",
            "2.11.0+cu130",
            Some("13.0"),
            true,
        );
        t.kernels = vec![
            LibraryKernels {
                file: "torch/lib/libtorch_cuda.so".into(),
                sass: [
                    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120",
                    "sm_121",
                ]
                .map(cc)
                .into(),
                ..LibraryKernels::default()
            },
            LibraryKernels {
                file: "torch/lib/libtorch_cuda_linalg.so".into(),
                sass: ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
                    .map(cc)
                    .into(),
                ..LibraryKernels::default()
            },
        ];
        let with = |gpu: &str| {
            let mut f = healthy();
            f.host.gpus[0].compute_capability = Some(gpu.into());
            f.python = python(vec![t.clone()], &[]);
            diagnose(&f)
                .into_iter()
                .filter(|x| x.code == "framework-arch")
                .map(|x| (x.level, x.message.en()))
                .collect::<Vec<_>>()
        };
        let found = with("9.0");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Level::Ok);
        // A T4 (sm_75): torch runs; its linear algebra library cannot.
        let found = with("7.5");
        assert_eq!(
            found.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [Level::Ok, Level::Warning],
            "{found:?}"
        );
        assert!(
            found[1]
                .1
                .contains("but its torch/lib/libtorch_cuda_linalg.so has machine code for sm_80"),
            "{found:?}"
        );
        // Volta: neither has code; one error, naming the library that decides.
        let found = with("7.0");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Level::Error);
        assert!(
            found[0].1.contains("torch/lib/libtorch_cuda.so has"),
            "{found:?}"
        );
    }

    #[test]
    fn a_frameworks_kernels_against_the_gpu_machine_code_jit_or_none() {
        let with = |t: InstalledFramework, gpu: &str| {
            let mut f = healthy();
            f.host.gpus[0].compute_capability = Some(gpu.into());
            f.python = python(vec![t], &[]);
            diagnose(&f)
                .into_iter()
                .filter(|x| x.code == "framework-arch")
                .collect::<Vec<_>>()
        };
        // The H200: machine code for sm_90.
        let found = with(torch_with_kernels(false, None), "9.0");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].level, Level::Ok);
        assert!(
            found[0].message.en().contains("kernels for sm_90 run"),
            "{found:?}"
        );
        // sm_89 runs sm_86's machine code.
        let found = with(torch_with_kernels(false, None), "8.9");
        assert!(found[0].message.en().contains("for sm_86 run"), "{found:?}");
        // Blackwell without PTX: cannot run; the fix names torch 2.8 with CUDA 12.8.
        let found = with(torch_with_kernels(false, None), "12.0");
        assert_eq!(found[0].level, Level::Error);
        let msg = found[0].message.en();
        assert!(
            msg.contains("cannot run on this GPU (sm_120, Blackwell)"),
            "{msg}"
        );
        assert!(msg.contains("PTX for none"), "{msg}");
        let fix = found[0].fix.first().unwrap().en();
        assert!(
            fix.contains("torch 2.8 built for CUDA 12.8: the first release after yours"),
            "{fix}"
        );
        assert!(fix.contains("download.pytorch.org/whl/cu128"), "{fix}");
        // With PTX for sm_90 it runs there after JIT: a warning, not an error.
        let found = with(torch_with_kernels(true, None), "12.0");
        assert_eq!(found[0].level, Level::Warning);
        assert!(
            found[0].message.en().contains("only PTX for sm_90"),
            "{found:?}"
        );
        // A cu130 torch 2.11 (machine code from sm_75) on a Volta: its own
        // release has a cu126 build with sm_70, so that is the fix.
        let mut t = torch_with_kernels(false, None);
        t.version = "2.11.0+cu130".into();
        t.kernels[0]
            .sass
            .retain(|c| c.sm() != "sm_50" && c.sm() != "sm_60" && c.sm() != "sm_70");
        let found = with(t, "7.0");
        assert_eq!(found[0].level, Level::Error);
        let fix = found[0].fix.first().unwrap().en();
        assert!(
            fix.contains("the build of torch 2.11 for CUDA 12.6: that release also has"),
            "{fix}"
        );
        assert!(fix.contains("download.pytorch.org/whl/cu126"), "{fix}");
        // Older than everything: Kepler. The fix is an older release or none.
        let found = with(torch_with_kernels(true, None), "3.7");
        assert_eq!(found[0].level, Level::Error);
        // An unreadable library is a warning of its own; the readable one still counts.
        let found = with(
            torch_with_kernels(false, Some("not a fatbinary container")),
            "9.0",
        );
        assert_eq!(
            found.iter().map(|x| x.level).collect::<Vec<_>>(),
            [Level::Warning, Level::Ok]
        );
        // No GPU and no target: nothing to judge.
        let mut f = healthy();
        f.host.gpus.clear();
        f.python = python(vec![torch_with_kernels(false, None)], &[]);
        assert!(
            diagnose(&f)
                .into_iter()
                .find(|x| x.code == "framework-arch")
                .is_none()
        );
        // A target replaces this machine's GPU.
        let mut f = healthy();
        f.target = crate::machine::compat::target::Target::parse(None, Some("sm_120")).unwrap();
        f.python = python(vec![torch_with_kernels(false, None)], &[]);
        let e = diagnose(&f)
            .into_iter()
            .find(|x| x.code == "framework-arch")
            .unwrap();
        assert!(
            e.message.en().contains("the target machine's GPU (sm_120"),
            "{e:?}"
        );
    }

    #[test]
    fn a_healthy_machine_has_no_problems() {
        let found = diagnose(&healthy());
        let bad: Vec<_> = found.iter().filter(|f| f.level != Level::Ok).collect();
        assert!(bad.is_empty(), "{bad:#?}");
        for code in [
            "driver",
            "gpus",
            "active",
            "driver-fit",
            "arch",
            "device-nodes",
        ] {
            assert!(
                found.iter().any(|f| f.code == code),
                "missing {code}: {found:#?}"
            );
        }
        assert!(
            found[0].message.en().contains("580.159.04")
                && found[0].message.en().contains("CUDA ≤ 13.0")
        );
    }

    type Case = (
        &'static str,
        fn(&mut Facts),
        &'static str,
        Level,
        &'static str,
    );

    /// Every finding doctor can report, each from a minimal change to the healthy machine.
    const CASES: &[Case] = &[
        (
            "no driver at all (CI)",
            |f| {
                f.host.driver_versions.clear();
                f.host.libcuda = Probe {
                    load_error: Some("libcuda.so.1: cannot open shared object file".into()),
                    ..Default::default()
                };
                f.host.gpus.clear();
                f.device_nodes.clear();
            },
            "no-driver",
            Level::Warning,
            "can be built here but not run",
        ),
        (
            "kernel module and libcuda differ",
            |f| f.host.driver_versions[1].version = "575.51.03".into(),
            "driver-mismatch",
            Level::Error,
            "reboot",
        ),
        (
            "kernel driver without libcuda",
            |f| {
                f.host.libcuda = Probe {
                    load_error: Some("not found".into()),
                    ..Default::default()
                };
                f.host.driver_versions.truncate(1);
                f.host.gpus.clear();
            },
            "libcuda-missing",
            Level::Error,
            "user-space",
        ),
        (
            "cuInit fails",
            |f| {
                f.host.libcuda.init_error = Some(ApiError::named("CUDA_ERROR_UNKNOWN"));
                f.host.gpus.clear();
            },
            "cuinit-failed",
            Level::Error,
            "nvidia-modprobe",
        ),
        (
            "driver without GPUs",
            |f| f.host.gpus.clear(),
            "no-gpu",
            Level::Error,
            "reports no GPU",
        ),
        (
            "selected version not installed",
            |f| {
                f.active = None;
                f.active_error = Some("version `12.4` is not installed".into());
            },
            "active-missing",
            Level::Error,
            "12.4",
        ),
        (
            "shell not activated",
            |f| f.env.cudaenv_active = None,
            "not-activated",
            Level::Warning,
            "cudaenv exec",
        ),
        (
            "driver too old",
            |f| {
                f.host
                    .driver_versions
                    .iter_mut()
                    .for_each(|s| s.version = "570.26".into());
                f.host.libcuda.driver_api = Some(12080);
            },
            "driver-too-old",
            Level::Error,
            "≥ 580",
        ),
        (
            "driver only minor-compatible",
            |f| {
                active_stack(
                    f,
                    "12.4",
                    "12.4.1",
                    None,
                    "/c/12.4/lib64",
                    &["libcudart.so.12"],
                );
                f.host
                    .driver_versions
                    .iter_mut()
                    .for_each(|s| s.version = "535.104.05".into());
            },
            "driver-fit",
            Level::Warning,
            "minor version compatibility",
        ),
        (
            "GPU dropped by the toolkit",
            |f| f.host.gpus[0].compute_capability = Some("6.1".into()),
            "arch-unsupported",
            Level::Error,
            "sm_61",
        ),
        (
            "GPU newer than the toolkit",
            |f| {
                active_stack(
                    f,
                    "11.2",
                    "11.2.2",
                    Some("8.1.1"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0"],
                )
            },
            "arch-too-new",
            Level::Error,
            "sm_90 needs CUDA ≥ 11.8",
        ),
        (
            "GPU deprecated",
            |f| {
                active_stack(
                    f,
                    "12.9",
                    "12.9.1",
                    None,
                    "/c/12.9/lib64",
                    &["libcudart.so.12"],
                );
                f.host.gpus[0].compute_capability = Some("7.0".into());
            },
            "arch-deprecated",
            Level::Warning,
            "sm_70",
        ),
        (
            "cuDNN built for another CUDA",
            |f| {
                active_stack(
                    f,
                    "x",
                    "13.0.0",
                    Some("9.1.0.70"),
                    CUDA13,
                    &["libcudart.so.13"],
                )
            },
            "cudnn-cuda",
            Level::Error,
            "cuDNN 9.1.0.70",
        ),
        (
            "cuDNN newer than the table, on its family's CUDA",
            |f| {
                active_stack(
                    f,
                    "x",
                    "13.0.0",
                    Some("9.40.0.1"),
                    CUDA13,
                    &["libcudart.so.13"],
                )
            },
            "cudnn-cuda",
            Level::Ok,
            "cuDNN 9.40.0.1 goes with CUDA 13.0.0: built for CUDA 12.x, 13.x (the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28)",
        ),
        (
            "cuDNN newer than the table, on a CUDA its family does not support",
            |f| {
                active_stack(
                    f,
                    "x",
                    "11.8.0",
                    Some("9.40.0.1"),
                    CUDA13,
                    &["libcudart.so.11.0"],
                )
            },
            "cudnn-cuda",
            Level::Error,
            "cuDNN 9.40.0.1 is not built for CUDA 11.8.0, only for CUDA 12.x, 13.x (the rule of cuDNN 9.x; cudaenv's cuDNN table stops at 9.28)",
        ),
        (
            "stray CUDA before the active one",
            |f| {
                f.env.ld_library_path.insert(0, "/opt/stray/lib".into());
                f.library_dirs.insert(
                    0,
                    LibDir {
                        dir: "/opt/stray/lib".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(0),
                        libs: libs(&["libcudart.so.13"]),
                    },
                );
                f.library_dirs[1].position = Some(1);
            },
            "ld-shadow",
            Level::Error,
            "/opt/stray/lib",
        ),
        (
            "stray CUDA and no activation",
            |f| {
                f.env.ld_library_path = vec!["/opt/stray/lib".into()];
                f.library_dirs = vec![LibDir {
                    dir: "/opt/stray/lib".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(0),
                    libs: libs(&["libcudart.so.13"]),
                }];
            },
            "ld-shadow",
            Level::Error,
            "shadows",
        ),
        (
            "extra libraries after the active one",
            |f| {
                f.env
                    .ld_library_path
                    .push("/usr/local/cuda-11.8/lib64".into());
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda-11.8/lib64".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcudart.so.11.0", "libcudnn.so.8"]),
                });
            },
            "ld-extra",
            Level::Warning,
            "libcudnn.so.8",
        ),
        (
            "several CUDAs with system active",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.library_dirs = vec![
                    LibDir {
                        dir: "/a".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(0),
                        libs: libs(&["libcudart.so.12"]),
                    },
                    LibDir {
                        dir: "/b".into(),
                        origin: "LD_LIBRARY_PATH".into(),
                        position: Some(1),
                        libs: libs(&["libcudart.so.11.0"]),
                    },
                ];
            },
            "ld-copies",
            Level::Warning,
            "several CUDA runtimes",
        ),
        (
            "one system CUDA",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.library_dirs = vec![LibDir {
                    dir: "/usr/local/cuda/lib64".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(0),
                    libs: libs(&["libcudart.so.12"]),
                }];
            },
            "ld-copies",
            Level::Ok,
            "/usr/local/cuda/lib64",
        ),
        (
            "libcuda stub on the loader path",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda/lib64/stubs".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so"]),
                })
            },
            "libcuda-stub",
            Level::Error,
            "stub",
        ),
        (
            "forward-compat libcuda",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/local/cuda-13.0/compat".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so.1"]),
                })
            },
            "libcuda-compat",
            Level::Warning,
            "forward-compatibility",
        ),
        (
            "another release's libcuda",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/opt/old-driver/lib".into(),
                    origin: "LD_LIBRARY_PATH".into(),
                    position: Some(1),
                    libs: libs(&["libcuda.so.1", "libcuda.so.535.104.05"]),
                })
            },
            "libcuda-compat",
            Level::Warning,
            "replaces the installed driver's",
        ),
        (
            "system cuDNN in ldconfig",
            |f| {
                f.library_dirs.push(LibDir {
                    dir: "/usr/lib/x86_64-linux-gnu".into(),
                    origin: "ldconfig".into(),
                    position: None,
                    libs: libs(&["libcuda.so.1", "libcudnn.so.9"]),
                })
            },
            "ldconfig",
            Level::Warning,
            "libcudnn.so.9",
        ),
        (
            "CUDA_HOME elsewhere",
            |f| f.env.cuda_home = Some("/usr/local/cuda-11.8".into()),
            "cuda-home",
            Level::Warning,
            "CUDA_HOME=/usr/local/cuda-11.8",
        ),
        (
            "CUDA_PATH elsewhere",
            |f| f.env.cuda_path = Some("/opt/cuda".into()),
            "cuda-home",
            Level::Warning,
            "CUDA_PATH=/opt/cuda",
        ),
        (
            "CUDA_VISIBLE_DEVICES=-1",
            |f| f.env.cuda_visible_devices = Some("-1".into()),
            "visible-devices",
            Level::Error,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES empty",
            |f| f.env.cuda_visible_devices = Some("".into()),
            "visible-devices",
            Level::Error,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES=-1 without GPUs",
            |f| {
                f.env.cuda_visible_devices = Some("-1".into());
                f.host.gpus.clear();
                f.host.libcuda.init_error = Some(ApiError::named("CUDA_ERROR_NO_DEVICE"));
            },
            "visible-devices",
            Level::Warning,
            "hides every GPU",
        ),
        (
            "CUDA_VISIBLE_DEVICES past the last GPU",
            |f| f.env.cuda_visible_devices = Some("0,3".into()),
            "visible-devices",
            Level::Warning,
            "do not exist (3)",
        ),
        (
            "device nodes not accessible",
            |f| f.device_nodes[0].writable = false,
            "device-nodes",
            Level::Error,
            "usermod",
        ),
        (
            "device nodes missing",
            |f| f.device_nodes.retain(|d| d.path == "/dev/nvidia-uvm"),
            "device-nodes",
            Level::Error,
            "nvidia-modprobe",
        ),
        (
            "nvidia-uvm missing",
            |f| f.device_nodes.retain(|d| d.path != "/dev/nvidia-uvm"),
            "device-nodes",
            Level::Warning,
            "nvidia-uvm",
        ),
        (
            "WSL2 healthy",
            |f| {
                f.host.platform.wsl = true;
                f.host.platform.wsl_libcuda = true;
                f.host.libcuda.path = Some("/usr/lib/wsl/lib/libcuda.so.1".into());
                f.device_nodes = vec![DeviceNode {
                    path: "/dev/dxg".into(),
                    readable: true,
                    writable: true,
                }];
                f.host.driver_versions = vec![Sourced {
                    source: "nvidia-smi".into(),
                    version: "581.42".into(),
                }];
            },
            "wsl",
            Level::Ok,
            "Windows driver",
        ),
        (
            "WSL2 without the bridge",
            |f| {
                f.host.platform.wsl = true;
                f.host.platform.wsl_libcuda = false;
            },
            "wsl-libcuda",
            Level::Error,
            "Windows",
        ),
        (
            "WSL2 with a Linux libcuda",
            |f| {
                f.host.platform.wsl = true;
                f.host.platform.wsl_libcuda = true;
            },
            "wsl-libcuda",
            Level::Error,
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        ),
        (
            "WSL2 without /dev/dxg",
            |f| {
                f.host.platform.wsl = true;
                f.host.platform.wsl_libcuda = true;
                f.host.libcuda.path = Some("/usr/lib/wsl/lib/libcuda.so.1".into());
                f.device_nodes.clear();
            },
            "device-nodes",
            Level::Error,
            "/dev/dxg",
        ),
        (
            "nvidia-smi's CUDA Version",
            |f| {
                f.host.nvidia_smi = Some(NvidiaSmi {
                    path: "/usr/bin/nvidia-smi".into(),
                    cuda_version: Some("13.0".into()),
                    driver_version: Some("580.159.04".into()),
                    error: None,
                })
            },
            "nvidia-smi",
            Level::Ok,
            "not an installed toolkit",
        ),
        (
            "python env listed",
            |f| f.python = python(vec![], &[]),
            "python",
            Level::Ok,
            "no torch",
        ),
        (
            "CPU-only torch",
            |f| {
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.4.1+cpu", None, false)],
                    &[],
                )
            },
            "framework-cpu",
            Level::Warning,
            "CPU-only",
        ),
        (
            "torch bundles newer cuDNN than the active",
            |f| {
                active_stack(
                    f,
                    "12.4+cudnn9.1",
                    "12.4.1",
                    Some("9.1.0.70"),
                    "/c/12.4/lib64",
                    &["libcudart.so.12", "libcudnn.so.9"],
                );
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.7.0", Some("12.6"), true)],
                    &[("nvidia-cudnn-cu12", "9.5.1.17")],
                );
            },
            "framework-bundled",
            Level::Error,
            "cuDNN version incompatibility",
        ),
        (
            "torch bundles, no clash",
            |f| {
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.4.1", Some("12.1"), true)],
                    &[("nvidia-cudnn-cu12", "9.1.0.70")],
                )
            },
            "framework-bundled",
            Level::Ok,
            "does not interfere",
        ),
        (
            "jax bundles, system active",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda12-plugin",
                        "0.4.30",
                        Some("12"),
                        true,
                    )],
                    &[],
                );
            },
            "framework-bundled",
            Level::Ok,
            "needs no cudaenv version",
        ),
        (
            "tensorflow 2.10 on CUDA 13",
            |f| {
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                )
            },
            "framework-stack",
            Level::Error,
            "cudaenv local --for tensorflow==2.10",
        ),
        (
            "tensorflow 2.10 on 11.2+cudnn8.0",
            |f| {
                active_stack(
                    f,
                    "11.2+cudnn8.0",
                    "11.2.2",
                    Some("8.0.5"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0", "libcudnn.so.8"],
                );
                f.host.gpus[0].compute_capability = Some("8.6".into());
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Error,
            "newer than the active 8.0.5",
        ),
        (
            "tensorflow 2.10 matches",
            |f| {
                active_stack(
                    f,
                    "11.2+cudnn8.1",
                    "11.2.2",
                    Some("8.1.1.33"),
                    "/c/11.2/lib64",
                    &["libcudart.so.11.0", "libcudnn.so.8"],
                );
                f.host.gpus[0].compute_capability = Some("8.6".into());
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.10.1",
                        Some("11.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Ok,
            "matches",
        ),
        (
            "tensorflow with no active version",
            |f| {
                f.active = Some(ActiveFacts {
                    name: "system".into(),
                    ..Default::default()
                });
                f.python = python(
                    vec![fw(
                        Framework::Tensorflow,
                        "tensorflow",
                        "2.15.0",
                        Some("12.2"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Warning,
            "cuDNN 8.9",
        ),
        (
            "torch 2.11 with cuDNN 9.19 wheels under a stack with cuDNN 9.14",
            |f| {
                active_stack(
                    f,
                    "sys13",
                    "13.0.2",
                    Some("9.14.0"),
                    "/usr/local/cuda-13.0/lib64",
                    &["libcudart.so.13", "libcudnn.so.9", "libcudnn_cnn.so.9"],
                );
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.11.0", Some("13.0"), true)],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Error,
            "do not match the wheel's 9.19.0.56",
        ),
        (
            "the same with bundled-cuda = wheels",
            |f| {
                active_stack(
                    f,
                    "sys13",
                    "13.0.2",
                    Some("9.14.0"),
                    "/usr/local/cuda-13.0/lib64",
                    &["libcudart.so.13", "libcudnn.so.9"],
                );
                f.bundled_cuda = Some("wheels".into());
                f.python = python(
                    vec![fw(Framework::Torch, "torch", "2.11.0", Some("13.0"), true)],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Ok,
            "keeps the active sys13 off LD_LIBRARY_PATH",
        ),
        (
            "jax plugin with wheels under a CUDA 13 stack without cuDNN",
            |f| {
                f.python = python(
                    vec![
                        fw(
                            Framework::Jax,
                            "jax-cuda13-pjrt",
                            "0.11.2",
                            Some("13"),
                            false,
                        ),
                        fw(
                            Framework::Jax,
                            "jax-cuda13-plugin",
                            "0.11.2",
                            Some("13"),
                            true,
                        ),
                    ],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Warning,
            "two copies of one library",
        ),
        (
            "jax[cuda13-local] with nothing on the loader path",
            |f| {
                f.active = None;
                f.library_dirs.clear();
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda13-plugin",
                        "0.11.2",
                        Some("13"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Warning,
            "no cudaenv version is active",
        ),
        (
            "jax[cuda13-local] with the system's CUDA 13 in ld.so.cache",
            |f| {
                f.active = None;
                f.library_dirs = vec![LibDir {
                    dir: "/usr/local/cuda-13.0/targets/x86_64-linux/lib".into(),
                    origin: "ldconfig".into(),
                    position: None,
                    libs: libs(&["libcudart.so.13"]),
                }];
                f.python = python(
                    vec![fw(
                        Framework::Jax,
                        "jax-cuda13-plugin",
                        "0.11.2",
                        Some("13"),
                        false,
                    )],
                    &[],
                );
            },
            "framework-stack",
            Level::Ok,
            "loads CUDA 13 from the loader path",
        ),
        (
            "cupy-cuda13x with its wheels and cuda-pathfinder",
            |f| {
                f.active = None;
                f.python = python(
                    vec![
                        fw(
                            Framework::CudaPython,
                            "cuda-pathfinder",
                            "1.3.3",
                            None,
                            false,
                        ),
                        fw(Framework::Cupy, "cupy-cuda13x", "14.0.1", Some("13"), true),
                    ],
                    &CU13_WHEELS,
                );
            },
            "framework-bundled",
            Level::Ok,
            "cuda-pathfinder searches site-packages before LD_LIBRARY_PATH",
        ),
        (
            "cuDNN wheels of two CUDA majors overwrite each other",
            |f| {
                let mut py = python(vec![], &[]).unwrap();
                py.wheel_overlaps = vec![crate::machine::doctor::python::WheelOverlap {
                    file: "nvidia/cudnn/lib/libcudnn.so.9".into(),
                    packages: vec![
                        Package {
                            name: "nvidia-cudnn-cu12".into(),
                            version: "9.10.2.21".into(),
                        },
                        Package {
                            name: "nvidia-cudnn-cu13".into(),
                            version: "9.19.0.56".into(),
                        },
                    ],
                }];
                f.python = Some(py);
            },
            "wheel-overlap",
            Level::Error,
            "--force-reinstall --no-deps nvidia-cudnn-cu13==9.19.0.56",
        ),
    ];

    #[test]
    fn every_finding_from_a_fact_set() {
        for (name, change, code, level, needle) in CASES {
            let mut f = healthy();
            change(&mut f);
            let found = diagnose(&f);
            let hit = found.iter().find(|x| x.code == *code && x.level == *level);
            let Some(hit) = hit else {
                panic!("{name}: no {level:?} {code} in {found:#?}");
            };
            let text = format!(
                "{} {}",
                hit.message,
                hit.fix.first().map(Msg::en).unwrap_or_default()
            );
            assert!(text.contains(needle), "{name}: {text:?} lacks {needle:?}");
            if *level != Level::Ok {
                assert!(!hit.fix.is_empty(), "{name}: a problem needs a fix");
            }
        }
    }

    /// A container mounts the driver's libcuda in /usr/local/nvidia/lib and lib64
    /// (seen on the GPU machine): not a forward-compatibility library.
    #[test]
    fn the_drivers_own_libcuda_in_a_second_directory_is_fine() {
        let mut f = healthy();
        f.host.libcuda.path = Some("/usr/local/nvidia/lib64/libcuda.so.580.159.04".into());
        for dir in ["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"] {
            f.library_dirs.push(LibDir {
                dir: dir.into(),
                origin: "LD_LIBRARY_PATH".into(),
                position: Some(1),
                libs: libs(&["libcuda.so", "libcuda.so.1", "libcuda.so.580.159.04"]),
            });
        }
        let found = diagnose(&f);
        assert!(
            found.iter().all(|x| x.code != "libcuda-compat"),
            "{found:#?}"
        );
    }

    #[test]
    fn no_driver_is_not_an_error() {
        let mut f = healthy();
        (CASES[0].1)(&mut f);
        f.active = Some(ActiveFacts {
            name: "system".into(),
            ..Default::default()
        });
        let found = diagnose(&f);
        assert!(found.iter().all(|x| x.level != Level::Error), "{found:#?}");
    }

    #[test]
    fn facts_and_findings_round_trip_as_json() {
        let f = healthy();
        let json = serde_json::to_string(&f).unwrap();
        let back: Facts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        let found = diagnose(&f);
        let shaped: Vec<_> = found.iter().map(|x| x.shaped(&JSON)).collect();
        let j = serde_json::to_value(shaped).unwrap();
        assert_eq!(j[0]["level"], "ok");
    }
}
