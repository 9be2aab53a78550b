//! PyTorch, JAX and CuPy: a release has several builds, one per CUDA, in a
//! hand-kept table (PyTorch's RELEASE.md matrix, the JAX and CuPy
//! installation guides), and wheels on PyPI whose metadata pins some of them.
//!
//! Each framework weighs the two differently: torch's PyPI wheel is one build
//! of its matrix row, and its pins win for that build; JAX's plugins say it
//! all where they exist, and the guide answers only for releases without
//! them; CuPy's guide gives the toolkits, narrowed to the CUDA majors a
//! release has packages for, and a package the guide has no toolkit for is
//! known from its name alone.

use crate::error::Result;

use super::super::data::{self, Channel, MetaRelease, PytorchTable, TorchRelease};
use super::{
    Build, DRIVER_SOURCE, Framework, Lookup, Requirement, build, meta_build, meta_notes,
    meta_source, platform_name, wheel_python,
};

/// A framework's hand-kept table of builds.
struct Table {
    rows: &'static PytorchTable,
    /// The PyPI package of every release.
    package: &'static str,
    /// Where the table comes from, for the requirement's `sources`.
    name: &'static str,
}

fn table(framework: Framework) -> Table {
    match framework {
        Framework::Jax => Table {
            rows: data::jax(),
            package: "jax",
            name: "the JAX installation guide (registry/compat/jax.toml)",
        },
        Framework::Cupy => Table {
            rows: data::cupy(),
            package: "cupy",
            name: "CuPy's installation guide (registry/compat/cupy.toml)",
        },
        _ => Table {
            rows: data::pytorch(),
            package: "torch",
            name: "PyTorch's RELEASE.md matrix (registry/compat/pytorch.toml)",
        },
    }
}

pub(super) fn requirement(l: &Lookup) -> Result<Requirement> {
    let framework = l.framework;
    let table = table(framework);
    // CuPy rows are per major release (`14`), the others per minor.
    let key = if framework == Framework::Cupy {
        l.version.truncate(1)
    } else {
        l.mm.clone()
    };
    let row = table
        .rows
        .release
        .iter()
        .find(|r| r.version.truncate(2) == key);
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    // JAX: the plugins' metadata says it all where there is some.
    // torch: the PyPI wheel's pins are one build of the matrix row.
    // CuPy: the guide's toolkits, where it has a row for the major release.
    let use_table = match framework {
        Framework::Jax => l.meta.is_empty(),
        Framework::Cupy => row.is_some(),
        _ => true,
    };
    let mut builds = match (use_table, row) {
        (true, Some(r)) => table_builds(r),
        _ => Vec::new(),
    };
    if framework == Framework::Cupy && use_table && !l.meta.is_empty() {
        // Only the CUDA majors this release has packages for.
        builds.retain(|b| l.meta.iter().any(|r| r.major == Some(b.cuda.major())));
    }
    let table_source = match row {
        Some(r) if use_table => Some(row_facts(l, table.name, r, &mut notes)),
        _ => None,
    };
    for r in wheels_to_merge(l, use_table, &builds) {
        merge_wheel(r, &mut builds, &mut notes, &mut sources);
    }
    sources.extend(table_source);
    pip_notes(l, use_table, &mut notes, &mut sources);
    if builds.is_empty() {
        return Err(l.unknown());
    }
    // Stable first, then newest CUDA first: the order `stack_for` prefers;
    // a build known only by its package's name (cupy-cuda13x 13.6) comes
    // after the ones a source states, so only its package name picks it.
    builds.sort_by(|a, b| {
        (b.channel, !b.name_only(), &b.cuda).cmp(&(a.channel, !a.name_only(), &a.cuda))
    });
    let from_wheel = match framework {
        Framework::Torch => l.pinned,
        _ if use_table => None,
        _ => l.meta.first().copied(),
    };
    let python = row
        .filter(|_| use_table || framework == Framework::Torch)
        .and_then(|r| r.python.clone())
        .or_else(|| wheel_python(from_wheel.or(l.meta.first().copied())?, &mut sources))
        .unwrap_or_else(|| "unknown".into());
    sources.push(DRIVER_SOURCE.into());
    let version = match (from_wheel, framework, l.meta.first(), row) {
        (Some(r), _, _, _) => r.version.clone(),
        (None, Framework::Cupy, Some(r), _) => r.version.clone(),
        (None, _, _, Some(r)) => r.version.clone(),
        _ => l.version.clone(),
    };
    Ok(Requirement {
        framework,
        version,
        package: table.package.into(),
        platform: platform_name(l.platform),
        python,
        builds,
        confirmed: match (row, from_wheel) {
            (Some(r), _) if use_table => r.confirmed,
            _ => true,
        },
        notes,
        sources,
    })
}

/// The builds a table row lists.
fn table_builds(r: &TorchRelease) -> Vec<Build> {
    r.build
        .iter()
        .map(|b| Build {
            cudnn_minimum: b.cudnn_minimum,
            ..build(&b.cuda, b.cudnn.as_ref(), b.channel, b.cudnn_shared)
        })
        .collect()
}

/// The notes a table row carries (unconfirmed, its own note), and what the
/// row is the source of, for `sources`.
fn row_facts(l: &Lookup, table_name: &str, r: &TorchRelease, notes: &mut Vec<String>) -> String {
    let framework = l.framework;
    let source = match framework {
        Framework::Torch if l.pinned.is_some() => {
            format!("the other builds, Python: {table_name}")
        }
        _ => format!("CUDA, cuDNN, Python: {table_name}"),
    };
    if !r.confirmed && framework == Framework::Torch {
        notes.push(
            "unconfirmed: the copies of PyTorch's RELEASE.md disagree for this release".into(),
        );
    } else if !r.confirmed {
        notes.push(format!(
            "unconfirmed: {framework}'s guide states its current requirements, not since which release"
        ));
    }
    if let Some(n) = &r.note {
        notes.push(n.clone());
    }
    source
}

/// The wheels whose metadata becomes a build, or corrects one of the table's.
fn wheels_to_merge(l: &Lookup, use_table: bool, builds: &[Build]) -> Vec<&'static MetaRelease> {
    match l.framework {
        Framework::Torch => l.pinned.into_iter().collect(),
        // A package the guide's row has no toolkit for (cupy-cuda13x 13.6).
        Framework::Cupy if use_table => l
            .meta
            .iter()
            .copied()
            .filter(|r| !builds.iter().any(|b| Some(b.cuda.major()) == r.major))
            .collect(),
        _ if use_table => Vec::new(),
        _ => l.meta.clone(),
    }
}

/// The build of wheel `r`'s metadata: its pins replace those of the table's
/// build of the same CUDA, or it is one build more.
fn merge_wheel(
    r: &MetaRelease,
    builds: &mut Vec<Build>,
    notes: &mut Vec<String>,
    sources: &mut Vec<String>,
) {
    let Some(mb) = meta_build(r) else { return };
    sources.push(meta_source(r, &mb));
    meta_notes(r, notes);
    if r.cuda.is_none() {
        notes.push(format!(
            "{} {}'s metadata names no NVIDIA wheel: cudaenv knows its CUDA major from the package's name, not which minor or cuDNN it needs",
            r.project, r.version
        ));
    }
    match builds
        .iter_mut()
        .find(|b| b.cuda.truncate(2) == mb.cuda.truncate(2))
    {
        Some(b) => {
            // `pip install torch` gets this build: stable, whatever the matrix says.
            if b.channel == Channel::Experimental {
                b.channel = Channel::Stable;
                notes.push(format!(
                    "the CUDA {} build is the one on PyPI (`pip install {}=={}`), so it counts as stable here; RELEASE.md calls it experimental",
                    b.cuda, r.project, r.version
                ));
            }
            b.cudnn = mb.cudnn;
            b.cudnn_shared = false;
            b.cudnn_minimum = mb.cudnn_minimum;
            b.libraries = mb.libraries;
            b.pins = mb.pins;
            b.wheel = mb.wheel;
        }
        None => builds.push(mb),
    }
}

/// What the packages on PyPI bring themselves (CuPy's extra that brings the
/// toolkit as NVIDIA wheels, JAX's plugins that bring them), beside the stack.
fn pip_notes(l: &Lookup, use_table: bool, notes: &mut Vec<String>, sources: &mut Vec<String>) {
    if l.framework == Framework::Cupy && use_table && !l.meta.is_empty() {
        let names: Vec<String> = l
            .meta
            .iter()
            .map(|r| format!("{} {}", r.project, r.version))
            .collect();
        sources.push(format!(
            "release and packages: {} on PyPI (registry/compat/frameworks.toml)",
            names.join(", ")
        ));
        for r in l
            .meta
            .iter()
            .filter(|r| r.extra.is_some() && r.cuda.is_some())
        {
            notes.push(format!(
                "`pip install {}[{}]=={}` brings CUDA {} as NVIDIA wheels (cuda-toolkit); without it, CuPy uses the stack",
                r.project,
                r.extra.as_deref().unwrap_or_default(),
                r.version,
                r.cuda.as_ref().map(|c| c.to_string()).unwrap_or_default()
            ));
        }
    }
    if l.framework == Framework::Jax && !l.meta.is_empty() {
        for r in &l.meta {
            let m = r.major.unwrap_or(0);
            notes.push(format!(
                "`jax[cuda{m}-local]=={}` uses the stack; `jax[cuda{m}]` brings NVIDIA wheels",
                r.version
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::Machine;
    use super::super::super::data::Bound;
    use super::super::super::driver::{DriverOs, DriverVersion};
    use super::super::super::metadata;
    use super::super::{FrameworkReq, stack_for};
    use super::*;
    use crate::spec::Library;

    fn req(s: &str) -> FrameworkReq {
        s.parse().unwrap()
    }

    /// JAX names a cuDNN minimum (the newest 9.x is installed), CuPy's package
    /// name fixes the CUDA major, and both print back as users write them.
    #[test]
    fn jax_and_cupy_requests() {
        // JAX from its plugins' metadata: ranges, so the newest CUDA of the
        // major unless the machine's driver says less, or a tag names one.
        let c = stack_for(&req("jax==0.11"), None).unwrap();
        assert_eq!(c.spec.to_string(), "13+cudnn9+nccl2");
        let c = stack_for(&req("jax==0.11.2+cu126"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.6+cudnn9+nccl2");
        assert!(
            stack_for(&req("jax==0.11.2+cu123"), None).is_err(),
            "its nvcc pin asks for CUDA >= 12.6"
        );
        let c = stack_for(&req("jax==0.4.30"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12+cudnn9+nccl2");
        assert!(
            c.reason
                .starts_with("jax 0.4.30 asks for CUDA ≥ 12.1, < 13.0 + cuDNN ≥ 9.0 + NCCL 2.x"),
            "{}",
            c.reason
        );
        let m = Machine {
            driver: DriverVersion::parse("550.54.15"),
            driver_os: DriverOs::Linux,
            ..Default::default()
        };
        let c = stack_for(&req("jax==0.4.30"), Some(&m)).unwrap();
        assert_eq!(c.spec.to_string(), "12.4+cudnn9+nccl2");
        assert!(
            c.reason.contains("driver 550.54.15 fully supports"),
            "{}",
            c.reason
        );
        // cuBLAS `<12.9` in jax 0.6.1's metadata caps the stack at 12.8.
        let c = stack_for(&req("jax==0.6.1"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12.8+cudnn9+nccl2");
        // Before 0.4.30 the plugin pins only jax-cuda12-pjrt; jax's own
        // wheel pins the NVIDIA wheels in its `cuda12` extra: cuDNN 8.9.
        let c = stack_for(&req("jax==0.4.26"), None).unwrap();
        assert_eq!(c.spec.to_string(), "12+cudnn8+nccl2");
        assert!(
            c.requirement.sources.iter().any(|s| s.contains(
                "Requires-Dist (extra `cuda12`) of jax 0.4.26's wheel (jax-0.4.26-py3-none-any.whl), for jax-cuda12-plugin"
            )),
            "{:?}",
            c.requirement.sources
        );
        assert!(
            !c.requirement
                .notes
                .iter()
                .any(|n| n.contains("names no NVIDIA wheel"))
        );
        let r = req("cupy-cuda12x==14.0.1");
        assert_eq!(r.framework, Framework::Cupy);
        assert_eq!(r.to_string(), "cupy-cuda12x==14.0.1");
        assert_eq!(stack_for(&r, None).unwrap().spec.to_string(), "12.9");
        assert_eq!(
            stack_for(&req("cupy-cuda13x==14"), None)
                .unwrap()
                .spec
                .to_string(),
            "13.1"
        );
        assert_eq!(
            stack_for(&req("cupy==13.6"), None)
                .unwrap()
                .spec
                .to_string(),
            "12.4"
        );
        assert!(
            stack_for(&req("cupy-cuda11x==14.0"), None).is_err(),
            "CuPy 14 has no CUDA 11 build"
        );
        assert!(
            stack_for(&req("jax==0.4.20"), None).is_err(),
            "no plugin on PyPI"
        );
        // An old CuPy: known from PyPI, its CUDA major from the package's name.
        // cupy-cuda13x 13.6.0 is on PyPI though CuPy 13's guide row stops at
        // 12.4: its package's name gives the major, and only the name picks it.
        let c = stack_for(&req("cupy-cuda13x==13.6.0"), None).unwrap();
        assert_eq!(c.spec.to_string(), "13");
        let c = stack_for(&req("cupy-cuda11x==12.0.0"), None).unwrap();
        assert_eq!(c.spec.to_string(), "11");
        assert_eq!(c.requirement.version.to_string(), "12.0.0");
        assert!("numba-cuda==0.30".parse::<FrameworkReq>().is_err());
    }

    /// Every PyTorch row: the pick is the newest stable build, and each build is selectable by tag.
    #[test]
    fn every_pytorch_row() {
        for r in &data::pytorch().release {
            let choice = stack_for(
                &FrameworkReq::new(Framework::Torch, Some(r.version.clone())),
                None,
            )
            .unwrap();
            // The PyPI wheel's build counts as stable (`pip install torch` gets it).
            let wheel = metadata::find(Framework::Torch, &r.version, None)
                .into_iter()
                .find_map(|m| m.cuda.as_ref().and_then(|c| c.eq.clone()).map(|c| (m, c)));
            let newest = r
                .build
                .iter()
                .filter(|b| {
                    b.channel == Channel::Stable
                        || wheel
                            .as_ref()
                            .is_some_and(|(_, c)| *c == b.cuda.truncate(2))
                })
                .map(|b| &b.cuda)
                .max()
                .unwrap();
            assert_eq!(&choice.spec.cuda, newest, "{}", r.version);
            assert_eq!(choice.requirement.confirmed, r.confirmed);
            if !r.confirmed {
                assert!(
                    choice
                        .requirement
                        .notes
                        .iter()
                        .any(|n| n.contains("unconfirmed"))
                );
            }
            for b in &r.build {
                let mut q = FrameworkReq::new(Framework::Torch, Some(r.version.clone()));
                q.cuda_tag = Some(b.cuda.clone());
                let c = stack_for(&q, None).unwrap();
                assert_eq!(c.spec.cuda, b.cuda, "{} {}", r.version, b.cuda);
                // The wheel's own pins win for its build, NCCL included.
                match wheel.as_ref().filter(|(_, c)| *c == b.cuda.truncate(2)) {
                    Some((m, _)) => {
                        let pin = m.cudnn.as_ref().and_then(|c| c.eq.as_ref()).unwrap();
                        assert_eq!(c.spec.cudnn, Some(pin.truncate(2)), "{}", r.version);
                        assert_eq!(
                            c.spec.libs.get(Library::Nccl),
                            m.nccl.as_ref().and_then(Bound::spec_prefix).as_ref(),
                            "{}",
                            r.version
                        );
                        assert_eq!(c.requirement.builds[c.build].wheel.as_ref(), Some(&m.wheel));
                    }
                    None => {
                        assert_eq!(c.spec.cudnn, b.cudnn.as_ref().map(|c| c.truncate(2)));
                        assert!(c.spec.libs.is_empty(), "{} {}", r.version, b.cuda);
                    }
                }
            }
        }
    }
}
