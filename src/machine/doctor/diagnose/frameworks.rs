//! The Python environment (and nvidia-smi's header line) and its frameworks
//! against the active version: where each framework loads CUDA from (its
//! NVIDIA wheels, the active stack, a system CUDA), whether that is the CUDA
//! and cuDNN it was built with, and wheels that overwrote each other's files.

use crate::i18n::Msg;
use crate::machine::compat::{self, Framework, FrameworkReq};
use crate::machine::doctor::facts::{ActiveFacts, Facts};
use crate::machine::doctor::python::{self, InstalledFramework, PythonEnv};
use crate::msg;
use crate::spec::Version;

use super::kernels::kernel_findings;
use super::{Out, v};

pub(super) fn framework_findings(f: &Facts, o: &mut Out) {
    // The nvidia-smi header's "CUDA Version" is the driver's maximum.
    if let Some(smi) = &f.host.nvidia_smi
        && let Some(cv) = &smi.cuda_version
    {
        let active = match f
            .active
            .as_ref()
            .and_then(|a| a.cuda.as_ref().map(|c| (a, c)))
        {
            Some((a, c)) => msg!("doctor-nvidia-smi-active", name = a.name, cuda = c),
            None => msg!("doctor-nvidia-smi-no-active"),
        };
        o.ok(
            "nvidia-smi",
            msg!("doctor-nvidia-smi", cuda = cv, active => active),
        );
    }
    let Some(py) = &f.python else {
        return;
    };
    let fws = if py.frameworks.is_empty() {
        msg!("doctor-python-no-frameworks")
    } else {
        Msg::verbatim(
            py.frameworks
                .iter()
                .map(|fw| format!("{} {}", fw.package, fw.version))
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    o.ok(
        "python",
        msg!(
            "doctor-python",
            version = py.version.as_deref().unwrap_or("?"),
            executable = py.executable,
            frameworks => fws
        ),
    );
    let active = f.active.as_ref().filter(|a| a.name != "system");
    let pathfinder = py
        .frameworks
        .iter()
        .any(|fw| fw.package == "cuda-pathfinder");
    for fw in &py.frameworks {
        // jax-cudaNN-pjrt is the half of jax-cudaNN-plugin: one finding for both.
        if fw.package.ends_with("-pjrt")
            && py
                .frameworks
                .iter()
                .any(|p| p.package == fw.package.replace("-pjrt", "-plugin"))
        {
            continue;
        }
        // cuda-pathfinder is what cupy and numba-cuda search with; said once, there.
        if fw.package == "cuda-pathfinder"
            && py
                .frameworks
                .iter()
                .any(|p| matches!(p.framework, Framework::Cupy | Framework::NumbaCuda))
        {
            continue;
        }
        framework_vs_active(fw, py, f, active, pathfinder, o);
    }
    let machine = f.planned_machine();
    for fw in &py.frameworks {
        kernel_findings(fw, &machine, o);
    }
    for ov in &py.wheel_overlaps {
        let names: Vec<String> = ov
            .packages
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect();
        let Some(last) = ov.packages.last() else {
            continue;
        };
        o.error(
            "wheel-overlap",
            msg!(
                "doctor-wheel-overlap",
                packages => Msg::And(names.into_iter().map(Msg::Verbatim).collect()),
                file = ov.file
            ),
            msg!(
                "doctor-wheel-overlap-fix",
                package = last.name,
                version = last.version
            ),
        );
    }
}

/// The `--for` argument that pins what this installed framework needs.
fn for_arg(fw: &InstalledFramework) -> String {
    let public = fw.version.split('+').next().unwrap_or(&fw.version);
    let mm: Vec<&str> = public.split('.').take(2).collect();
    let mm = mm.join(".");
    let major = fw.cuda.as_deref().and_then(|c| c.parse::<u32>().ok());
    match (fw.framework, major) {
        // The package name carries the CUDA major: `cupy-cuda12x==14.0`.
        (Framework::Cupy, Some(_)) => format!("{}=={mm}", fw.package),
        // A jax plugin names only its major: the table's build of that major.
        (Framework::Jax, Some(m)) => {
            let build = v(&mm)
                .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok())
                .and_then(|r| {
                    r.builds
                        .iter()
                        .find(|b| b.cuda.major() == m)
                        .map(|b| b.cuda.clone())
                });
            match build {
                Some(c) => format!("jax=={mm}+cu{}{}", c.major(), c.minor().unwrap_or(0)),
                None => format!("jax=={mm}"),
            }
        }
        _ => format!("{}=={mm}", fw.framework),
    }
}

/// Does cudaenv's table know this release (so `--for` works)?
fn has_table(fw: &InstalledFramework) -> bool {
    v(fw.version.split('+').next().unwrap_or(""))
        .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok())
        .is_some()
}

/// The NVIDIA wheels of one CUDA major in the environment, by the versions installed.
struct Wheels {
    cudart: Option<String>,
    cudnn: Option<String>,
}

impl Wheels {
    /// `known`: the framework is known to bring them (its own record), whichever are listed.
    fn of(py: &PythonEnv, major: u32, known: bool) -> Option<Wheels> {
        let m = major.to_string();
        if !known && !python::wheels_of_major(&py.nvidia_wheels, &m) {
            return None;
        }
        let suffix = format!("-cu{m}");
        let find = |base: &str| {
            py.nvidia_wheels
                .iter()
                .find(|w| {
                    let b = w.name.strip_suffix(&suffix).unwrap_or(&w.name);
                    b == base && (base == "nvidia-cudnn" || w.version.split('.').next() == Some(&m))
                })
                .map(|w| w.version.clone())
        };
        Some(Wheels {
            cudart: find("nvidia-cuda-runtime"),
            // cuDNN wheels carry the CUDA major only in their name.
            cudnn: py
                .nvidia_wheels
                .iter()
                .find(|w| w.name == format!("nvidia-cudnn{suffix}"))
                .map(|w| w.version.clone()),
        })
    }

    fn describe(&self, major: u32) -> Msg {
        let cuda = match &self.cudart {
            Some(c) => msg!("doctor-wheels-cuda-runtime", version = c),
            None => Msg::verbatim(format!("CUDA {major}")),
        };
        match &self.cudnn {
            Some(d) => msg!("doctor-wheels-with-cudnn", cuda => cuda, cudnn = d),
            None => cuda,
        }
    }
}

/// How a framework finds its NVIDIA wheels, and what to install to use a stack instead.
fn wheel_mechanism(fw: &InstalledFramework, major: u32, pathfinder: bool) -> (Msg, Msg) {
    let pathfinder_note = msg!("doctor-how-pathfinder");
    match fw.framework {
        Framework::Torch => (msg!("doctor-how-torch"), msg!("doctor-instead-torch")),
        Framework::Tensorflow => (
            msg!("doctor-how-tensorflow"),
            msg!(
                "doctor-instead-tensorflow",
                version = fw.version,
                major = major
            ),
        ),
        Framework::Jax => (
            msg!("doctor-how-jax"),
            msg!("doctor-instead-jax", major = major),
        ),
        Framework::Cupy => (
            if pathfinder {
                pathfinder_note
            } else {
                msg!("doctor-how-cupy")
            },
            msg!("doctor-instead-cupy", package = fw.package),
        ),
        Framework::CudaPython | Framework::NumbaCuda => (
            pathfinder_note,
            msg!(
                "doctor-instead-cuda-python",
                package = fw.package,
                major = major
            ),
        ),
    }
}

/// The setting that keeps a version off LD_LIBRARY_PATH next to same-major wheels.
fn keep_off_fix() -> Msg {
    msg!("doctor-keep-off-fix")
}

/// A framework being judged against the active version.
struct Judging<'a> {
    fw: &'a InstalledFramework,
    /// `torch 2.4.1+cu124`, as the findings name it.
    name: String,
    f: &'a Facts,
    active: Option<&'a ActiveFacts>,
    /// cuda-pathfinder is installed (what CuPy and numba-cuda search with).
    pathfinder: bool,
}

fn framework_vs_active(
    fw: &InstalledFramework,
    py: &PythonEnv,
    f: &Facts,
    active: Option<&ActiveFacts>,
    pathfinder: bool,
    o: &mut Out,
) {
    let j = Judging {
        fw,
        name: format!("{} {}", fw.package, fw.version),
        f,
        active,
        pathfinder,
    };
    if fw.framework == Framework::Torch && fw.cuda.is_none() {
        o.warn(
            "framework-cpu",
            msg!("doctor-framework-cpu", name = j.name),
            msg!("doctor-framework-cpu-fix"),
        );
        return;
    }
    // What it was built with: its own record, else the table.
    let table = FrameworkReq::new(fw.framework, v(fw.version.split('+').next().unwrap_or("")))
        .version
        .clone()
        .and_then(|ver| compat::framework::requirement(fw.framework, &ver, "linux").ok());
    let cuda_want = fw
        .cuda
        .as_deref()
        .and_then(|c| {
            // TF on Windows writes `64_112`; Linux `11.2`; jax plugins only the major.
            v(c).or_else(|| {
                c.strip_prefix("64_")
                    .and_then(|d| compat::framework::parse_cuda_tag(&format!("cu{d}")))
            })
        })
        .or_else(|| table.as_ref().map(|r| r.builds[0].cuda.clone()));
    let Some(cuda_want) = cuda_want else {
        if fw.framework == Framework::CudaPython || fw.framework == Framework::Cupy {
            o.ok(
                "framework-stack",
                if pathfinder {
                    msg!("doctor-framework-finds-cuda-pathfinder", name = j.name)
                } else {
                    msg!("doctor-framework-finds-cuda-path", name = j.name)
                },
            );
        }
        return;
    };
    let major = cuda_want.major();
    // Loading from the wheels: every Python client of CUDA 12/13 does when they are
    // installed, except TensorFlow before 2.14 (which predates its `and-cuda` extra).
    let tf_old = fw.framework == Framework::Tensorflow
        && v(&fw.version).is_some_and(|x| x.truncate(2) < Version::from_parts(&[2, 14]));
    let wheels = if tf_old {
        None
    } else {
        Wheels::of(py, major, fw.bundles_cuda)
    };
    // Only these load cuDNN (CuPy 14, numba-cuda and cuda-python do not).
    let uses_cudnn = matches!(
        fw.framework,
        Framework::Torch | Framework::Tensorflow | Framework::Jax
    );
    if let Some(mut w) = wheels.filter(|_| fw.bundles_cuda || fw.framework != Framework::Tensorflow)
    {
        if !uses_cudnn {
            w.cudnn = None;
        }
        j.wheel_findings(&w, major, o);
        return;
    }
    // Not from wheels: it needs a CUDA on the loader path.
    let cudnn_want = table.as_ref().and_then(|r| {
        r.builds
            .iter()
            .find(|b| b.cuda.truncate(2) == cuda_want.truncate(2))
            .and_then(|b| b.cudnn.clone())
    });
    let fix_for = Msg::verbatim(if has_table(fw) {
        format!("cudaenv local --for {}", for_arg(fw))
    } else {
        format!("cudaenv install {major} && cudaenv local {major}")
    });
    match active {
        None => j.system_cuda_findings(&cuda_want, cudnn_want.as_ref(), fix_for, o),
        Some(a) => j.stack_findings(a, &cuda_want, cudnn_want.as_ref(), fix_for, o),
    }
}

impl Judging<'_> {
    /// It loads CUDA from its NVIDIA wheels `w` (of CUDA `major`): what the
    /// active version then adds, if anything, and whether the two mix.
    fn wheel_findings(&self, w: &Wheels, major: u32, o: &mut Out) {
        let (fw, name) = (self.fw, &self.name);
        let (how, instead) = wheel_mechanism(fw, major, self.pathfinder);
        let uses = msg!("doctor-framework-uses-wheels", name = name, what => w.describe(major), how => how);
        let Some(a) = self.active else {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-no-active", uses => uses, instead => instead),
            );
            return;
        };
        let a_cuda = a.cuda.as_deref().and_then(v);
        if a_cuda.as_ref().is_some_and(|c| c.major() != major) {
            o.ok(
                "framework-bundled",
                msg!(
                    "doctor-framework-bundled-other-major",
                    uses => uses,
                    name = a.name,
                    cuda = a_cuda.map(|c| c.to_string()).unwrap_or_default()
                ),
            );
            return;
        }
        if self.f.bundled_cuda.as_deref() == Some("wheels") {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-kept-off", uses => uses, name = a.name),
            );
            return;
        }
        // Same major, stack first on LD_LIBRARY_PATH: whatever the framework opens by
        // soname from a library without an RPATH comes from the stack.
        let a_cudnn = a.cudnn.as_deref().and_then(v);
        let w_cudnn = w.cudnn.as_deref().and_then(v);
        if let (Some(have), Some(want)) = (&a_cudnn, &w_cudnn)
            && have.major() == want.major()
            && have.truncate(3) != want.truncate(3)
        {
            let (an, cm) = (&a.name, have.major());
            let mixed = msg!(
                "doctor-framework-cudnn-mixed",
                uses => uses,
                name = an,
                have = have,
                major = cm,
                want = want
            );
            if fw.framework == Framework::Jax {
                // Measured: jax loads the mix too, but its matmuls still ran.
                o.warn(
                    "framework-bundled",
                    msg!("doctor-framework-cudnn-mixed-jax", mixed => mixed),
                    keep_off_fix(),
                );
            } else {
                o.error(
                    "framework-bundled",
                    msg!("doctor-framework-cudnn-mixed-error", mixed => mixed),
                    keep_off_fix(),
                );
            }
            return;
        }
        if fw.framework == Framework::Jax {
            // Measured: jaxlib opens some wheels by path and others by soname,
            // so both copies of libcublasLt.so.13 were mapped.
            o.warn(
                "framework-bundled",
                msg!("doctor-framework-jax-two-copies", uses => uses, name = a.name, major = major),
                keep_off_fix(),
            );
        } else {
            o.ok(
                "framework-bundled",
                msg!("doctor-framework-bundled-not-stack", uses => uses, name = a.name, instead => instead),
            );
        }
    }

    /// No active version: a system CUDA in the loader's cache serves it just
    /// as well; without one, it needs a stack.
    fn system_cuda_findings(
        &self,
        cuda_want: &Version,
        cudnn_want: Option<&Version>,
        fix_for: Msg,
        o: &mut Out,
    ) {
        let major = cuda_want.major();
        let soname = if major == 11 {
            "libcudart.so.11.0".to_string()
        } else {
            format!("libcudart.so.{major}")
        };
        if let Some(d) = self
            .f
            .library_dirs
            .iter()
            .find(|d| d.libs.iter().any(|l| l == &soname))
        {
            o.ok(
                "framework-stack",
                msg!(
                    "doctor-framework-system-cuda",
                    name = self.name,
                    major = major,
                    soname = soname,
                    dir = d.dir,
                    origin = d.origin
                ),
            );
            return;
        }
        o.warn(
            "framework-stack",
            msg!(
                "doctor-framework-needs-cuda",
                name = self.name,
                stack = match cudnn_want {
                    Some(d) => format!("CUDA {cuda_want} + cuDNN {d}"),
                    None => format!("CUDA {cuda_want}"),
                },
                soname = soname
            ),
            fix_for,
        );
    }

    /// The active version's CUDA and cuDNN against what it was built with.
    fn stack_findings(
        &self,
        a: &ActiveFacts,
        cuda_want: &Version,
        cudnn_want: Option<&Version>,
        fix_for: Msg,
        o: &mut Out,
    ) {
        let problems = stack_problems(a, cuda_want, cudnn_want);
        if problems.is_empty() {
            o.ok(
                "framework-stack",
                msg!(
                    "doctor-framework-matches",
                    name = self.name,
                    active = a.name
                ),
            );
        } else {
            o.error(
                "framework-stack",
                msg!(
                    "doctor-framework-mismatch",
                    name = self.name,
                    active = a.name,
                    problems => Msg::Clauses(problems)
                ),
                fix_for,
            );
        }
    }
}

/// How the active version's CUDA and cuDNN differ from what a framework was
/// built with (another major, or an older release than its build's).
fn stack_problems(a: &ActiveFacts, cuda_want: &Version, cudnn_want: Option<&Version>) -> Vec<Msg> {
    let a_cuda = a.cuda.as_deref().and_then(v);
    let a_cudnn = a.cudnn.as_deref().and_then(v);
    let mut problems = Vec::new();
    match &a_cuda {
        Some(c) if c.major() != cuda_want.major() => problems.push(msg!(
            "doctor-framework-needs-major",
            major = cuda_want.major(),
            soname_major = if cuda_want.major() == 11 {
                "11.0".to_string()
            } else {
                cuda_want.major().to_string()
            },
            cuda = c
        )),
        Some(c) if c.truncate(2) < cuda_want.truncate(2) && cuda_want.parts().len() >= 2 => {
            problems.push(msg!(
                "doctor-framework-built-with-newer-cuda",
                want = cuda_want,
                cuda = c
            ))
        }
        None => problems.push(msg!("doctor-framework-active-cuda-unknown")),
        _ => {}
    }
    if let Some(want) = cudnn_want {
        match &a_cudnn {
            None => problems.push(msg!("doctor-framework-needs-cudnn", want = want)),
            Some(have) if have.major() != want.major() => problems.push(msg!(
                "doctor-framework-needs-cudnn-major",
                major = want.major(),
                have = have
            )),
            Some(have) if have.truncate(2) < want.truncate(2) => problems.push(msg!(
                "doctor-framework-built-with-newer-cudnn",
                want = want,
                have = have
            )),
            _ => {}
        }
    }
    problems
}
