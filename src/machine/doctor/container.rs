//! Containers: whether doctor runs in one, what the container runtime passed
//! in, and what that means for CUDA.
//!
//! Apptainer and Singularity keep their runtime files in `/.singularity.d`;
//! with `--nv` they bind the host driver's user-space libraries
//! (`libcuda.so.1`, `libnvidia-ml.so.1`, …) into `/.singularity.d/libs` and put
//! that directory on `LD_LIBRARY_PATH`: without `--nv` the container has no
//! driver, and an environment that lost the directory from its
//! `LD_LIBRARY_PATH` does not find it. Docker and Podman mark their
//! containers with `/.dockerenv` and `/run/.containerenv`. The NVIDIA
//! container runtime is steered by variables the image or the command sets:
//! `NVIDIA_VISIBLE_DEVICES` (which GPUs), `NVIDIA_DRIVER_CAPABILITIES` (which
//! driver libraries: without `compute` there is no libcuda) and
//! `NVIDIA_REQUIRE_CUDA` (`cuda>=12.4`: hosts whose driver is older are
//! refused at start, unless `NVIDIA_DISABLE_REQUIRE` is set). Gathering reads
//! the file system from a given root so tests can give a container-shaped one;
//! the findings are a pure function of the facts, like the rest of doctor's.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::diagnose::{Finding, Level};
use super::facts::{Facts, cuda_libs_in};
use crate::context::Context;
use crate::context::env_vars;
use crate::i18n::Msg;
use crate::msg;
use crate::spec::Version;

/// What says this process runs in a container, and what the container
/// runtime passed in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerFacts {
    /// `apptainer` (Apptainer or Singularity), `docker`, `podman`; none outside one.
    pub kind: Option<String>,
    /// Apptainer/Singularity: the CUDA and driver libraries in
    /// `/.singularity.d/libs`, where `--nv` binds the host driver's (`None`
    /// when the directory is absent).
    pub singularity_libs: Option<Vec<String>>,
    /// The NVIDIA container runtime's variables that are set.
    pub nvidia: BTreeMap<String, String>,
}

/// Where Apptainer and Singularity keep a container's runtime files.
pub const SINGULARITY_DIR: &str = "/.singularity.d";
/// Where `--nv` binds the host driver's libraries.
pub const SINGULARITY_LIBS: &str = "/.singularity.d/libs";

/// The container facts, with the file system's root at `root` (`/`, or a
/// directory a test shaped like a container's).
pub fn gather(ctx: &Context, root: &Path) -> ContainerFacts {
    let at = |p: &str| root.join(p.trim_start_matches('/'));
    let apptainer = at(SINGULARITY_DIR).is_dir()
        || ctx.is_set(env_vars::APPTAINER_CONTAINER)
        || ctx.is_set(env_vars::SINGULARITY_CONTAINER);
    let kind = if apptainer {
        Some("apptainer")
    } else if at("/.dockerenv").exists() {
        Some("docker")
    } else if at("/run/.containerenv").exists() {
        Some("podman")
    } else {
        None
    };
    let libs = at(SINGULARITY_LIBS);
    ContainerFacts {
        kind: kind.map(str::to_string),
        singularity_libs: libs.is_dir().then(|| cuda_libs_in(&libs)),
        nvidia: [
            env_vars::NVIDIA_VISIBLE_DEVICES,
            env_vars::NVIDIA_DRIVER_CAPABILITIES,
            env_vars::NVIDIA_REQUIRE_CUDA,
            env_vars::NVIDIA_DISABLE_REQUIRE,
        ]
        .into_iter()
        .filter_map(|v| Some((v.to_string(), ctx.var(v)?.to_string())))
        .collect(),
    }
}

fn finding(level: Level, code: &str, message: Msg, fix: Option<Msg>) -> Finding {
    Finding {
        level,
        code: code.to_string().into(),
        message,
        fix: fix.into_iter().collect(),
        details: Vec::new(),
    }
}

/// `NVIDIA_REQUIRE_CUDA` as a finding shows it: NVIDIA's images append dozens
/// of `brand=…,driver…` constraints, which are counted, not listed.
fn require_shown(v: &str) -> Msg {
    let mut words = v.split_whitespace();
    let first = words.next().unwrap_or("");
    match words.count() {
        0 => Msg::verbatim(first),
        n => msg!("doctor-require-more", first = first, more = n),
    }
}

/// The first `cuda>=X.Y` of an `NVIDIA_REQUIRE_CUDA` value (its other
/// alternatives, `brand=…,driver>=…`, are about forward-compatibility drivers).
pub fn required_cuda(value: &str) -> Option<Version> {
    value
        .split_whitespace()
        .find_map(|c| c.strip_prefix("cuda>="))
        .and_then(|v| v.parse().ok())
}

/// Findings about the container and the NVIDIA runtime's variables.
pub fn findings(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let c = &f.container;
    match c.kind.as_deref() {
        Some("apptainer") => {
            let bound = c
                .singularity_libs
                .as_ref()
                .is_some_and(|l| l.iter().any(|n| n.starts_with("libcuda.so")));
            if bound {
                out.push(finding(
                    Level::Ok,
                    "container",
                    msg!("doctor-apptainer-nv", libs = SINGULARITY_LIBS),
                    None,
                ));
                let on_path = f
                    .env
                    .ld_library_path
                    .iter()
                    .any(|d| d.trim_end_matches('/') == SINGULARITY_LIBS);
                if !on_path && !f.host.libcuda.loaded {
                    out.push(finding(
                        Level::Error,
                        "container-libs",
                        msg!("doctor-apptainer-libs-off-path", libs = SINGULARITY_LIBS),
                        Some(msg!(
                            "doctor-apptainer-libs-off-path-fix",
                            libs = SINGULARITY_LIBS
                        )),
                    ));
                }
            } else if !f.host.libcuda.loaded {
                out.push(finding(
                    Level::Warning,
                    "container",
                    msg!("doctor-apptainer-no-nv", libs = SINGULARITY_LIBS),
                    Some(msg!("doctor-apptainer-no-nv-fix")),
                ));
            }
        }
        Some(kind) => out.push(finding(
            Level::Ok,
            "container",
            msg!("doctor-container", kind = kind),
            None,
        )),
        None => {}
    }
    let var = |n: &str| c.nvidia.get(n).map(String::as_str);
    if let Some(v) = var(env_vars::NVIDIA_VISIBLE_DEVICES)
        && matches!(v.trim(), "" | "none" | "void")
    {
        out.push(finding(
            Level::Warning,
            "nvidia-visible-devices",
            msg!("doctor-nvidia-visible-devices", value = format!("{v:?}")),
            Some(msg!("doctor-nvidia-visible-devices-fix")),
        ));
    }
    if let Some(v) = var(env_vars::NVIDIA_DRIVER_CAPABILITIES) {
        let caps: Vec<&str> = v.split(',').map(str::trim).collect();
        if !caps.iter().any(|c| *c == "compute" || *c == "all") {
            out.push(finding(
                Level::Warning,
                "nvidia-capabilities",
                msg!("doctor-nvidia-capabilities", value = v),
                Some(msg!("doctor-nvidia-capabilities-fix")),
            ));
        }
    }
    if let Some(v) = var(env_vars::NVIDIA_REQUIRE_CUDA) {
        let active = f
            .active
            .as_ref()
            .filter(|a| a.name != "system")
            .and_then(|a| Some((a.name.as_str(), a.cuda.as_deref()?.parse::<Version>().ok()?)));
        let disabled = var(env_vars::NVIDIA_DISABLE_REQUIRE).is_some_and(|d| !d.is_empty());
        let shown = require_shown(v);
        match (required_cuda(v), active) {
            (Some(req), Some((name, cuda))) if cuda.truncate(2) > req.truncate(2) => {
                out.push(finding(
                    Level::Warning,
                    "nvidia-require-cuda",
                    msg!("doctor-require-cuda-low", shown => shown, name = name, cuda = cuda),
                    Some(msg!(
                        "doctor-require-cuda-low-fix",
                        cuda = format!("{}.{}", cuda.major(), cuda.minor().unwrap_or(0)),
                        name = name
                    )),
                ));
            }
            (Some(_), Some((name, _))) => out.push(finding(
                Level::Ok,
                "nvidia-require-cuda",
                msg!("doctor-require-cuda-ok", shown => shown, name = name),
                None,
            )),
            _ => {}
        }
        if disabled {
            out.push(finding(
                Level::Warning,
                "nvidia-require-cuda",
                msg!("doctor-disable-require"),
                Some(msg!("doctor-disable-require-fix")),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::doctor::facts::ActiveFacts;

    #[test]
    fn nvidia_images_brand_constraints_are_counted_not_listed() {
        assert_eq!(require_shown("cuda>=12.4"), "cuda>=12.4");
        assert_eq!(
            require_shown(
                "cuda>=13.0 brand=tesla,driver>=535,driver<536 brand=grid,driver>=535,driver<536"
            ),
            "cuda>=13.0 (and 2 more constraints)"
        );
    }

    fn ctx(vars: &[(&str, &str)]) -> Context {
        let mut env: BTreeMap<std::ffi::OsString, std::ffi::OsString> =
            [("HOME".into(), "/h".into())].into();
        for (k, v) in vars {
            env.insert((*k).into(), (*v).into());
        }
        Context::new(env, "/".into()).unwrap()
    }

    fn codes(f: &Facts) -> Vec<(Level, String)> {
        findings(f)
            .into_iter()
            .map(|x| (x.level, x.code.into_owned()))
            .collect()
    }

    #[test]
    fn apptainer_is_recognised_by_its_directory_and_its_libs() {
        let tmp = tempfile::tempdir().unwrap();
        let c = gather(&ctx(&[]), tmp.path());
        assert_eq!(c, ContainerFacts::default());
        let libs = tmp.path().join(".singularity.d/libs");
        std::fs::create_dir_all(&libs).unwrap();
        std::fs::write(libs.join("libcuda.so.1"), "").unwrap();
        std::fs::write(libs.join("libnvidia-ml.so.1"), "").unwrap();
        let c = gather(
            &ctx(&[("NVIDIA_VISIBLE_DEVICES", "all"), ("OTHER", "x")]),
            tmp.path(),
        );
        assert_eq!(c.kind.as_deref(), Some("apptainer"));
        assert_eq!(c.singularity_libs, Some(vec!["libcuda.so.1".to_string()]));
        assert_eq!(c.nvidia.len(), 1);
        let docker = tempfile::tempdir().unwrap();
        std::fs::write(docker.path().join(".dockerenv"), "").unwrap();
        assert_eq!(
            gather(&ctx(&[]), docker.path()).kind.as_deref(),
            Some("docker")
        );
        assert_eq!(
            gather(&ctx(&[("APPTAINER_CONTAINER", "/i.sif")]), docker.path())
                .kind
                .as_deref(),
            Some("apptainer")
        );
    }

    #[test]
    fn findings_for_containers_and_the_nvidia_variables() {
        let mut f = Facts::default();
        assert!(findings(&f).is_empty());
        f.container.kind = Some("apptainer".into());
        f.container.singularity_libs = Some(vec![]);
        assert_eq!(codes(&f), [(Level::Warning, "container".into())]);
        f.container.singularity_libs = Some(vec!["libcuda.so.1".into()]);
        assert_eq!(
            codes(&f),
            [
                (Level::Ok, "container".into()),
                (Level::Error, "container-libs".into())
            ]
        );
        f.env.ld_library_path = vec!["/x".into(), "/.singularity.d/libs/".into()];
        assert_eq!(codes(&f), [(Level::Ok, "container".into())]);

        let mut f = Facts {
            active: Some(ActiveFacts {
                name: "12.4.1".into(),
                cuda: Some("12.4.1".into()),
                ..Default::default()
            }),
            ..Facts::default()
        };
        for (k, v) in [
            ("NVIDIA_VISIBLE_DEVICES", "void"),
            ("NVIDIA_DRIVER_CAPABILITIES", "utility"),
            (
                "NVIDIA_REQUIRE_CUDA",
                "cuda>=12.0 brand=tesla,driver>=470,driver<471",
            ),
        ] {
            f.container.nvidia.insert(k.into(), v.into());
        }
        assert_eq!(
            codes(&f),
            [
                (Level::Warning, "nvidia-visible-devices".into()),
                (Level::Warning, "nvidia-capabilities".into()),
                (Level::Warning, "nvidia-require-cuda".into())
            ]
        );
        f.container.nvidia.clear();
        f.container
            .nvidia
            .insert("NVIDIA_REQUIRE_CUDA".into(), "cuda>=12.4".into());
        assert_eq!(codes(&f), [(Level::Ok, "nvidia-require-cuda".into())]);
        f.container
            .nvidia
            .insert("NVIDIA_DISABLE_REQUIRE".into(), "true".into());
        assert_eq!(
            codes(&f),
            [
                (Level::Ok, "nvidia-require-cuda".into()),
                (Level::Warning, "nvidia-require-cuda".into())
            ]
        );
        assert_eq!(required_cuda("cuda>=13.0"), "13.0".parse().ok());
        assert_eq!(required_cuda("brand=tesla,driver>=470"), None);
    }
}
