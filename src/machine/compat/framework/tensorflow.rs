//! TensorFlow's requirement: one tested configuration per release and
//! platform (registry/compat/tensorflow.toml), and on Linux from 2.14 on the
//! pins of its wheel's `and-cuda` extra, which the tested configuration
//! narrows where the wheel names a range. Its native Windows GPU builds end
//! at 2.10, which gets an error of its own.

use crate::error::{Error, MachineError, Result};
use crate::spec::Version;

use super::super::data::{self, Channel, MetaRelease, TfBuild};
use super::{
    Build, DRIVER_SOURCE, Framework, Lookup, Requirement, build, meta_build, meta_notes,
    meta_source, platform_name, requirement as requirement_of, wheel_python,
};

pub(super) fn requirement(l: &Lookup) -> Result<Requirement> {
    let tested = data::tensorflow()
        .build
        .iter()
        .find(|b| b.platform == l.platform && b.version.truncate(2) == l.mm);
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    let (version, package, python, b) = match (
        l.pinned.and_then(|r| Some((r, meta_build(r)?))),
        tested,
    ) {
        (Some((r, b)), t) => from_wheel(r, b, t, &mut notes, &mut sources),
        (None, Some(t)) => {
            sources.push("CUDA, cuDNN, Python: TensorFlow's tested build configurations (registry/compat/tensorflow.toml)".into());
            if let Some(r) = l.meta.first() {
                sources.push(format!(
                    "{} names no NVIDIA wheel in its metadata",
                    r.wheel_named()
                ));
            }
            (
                t.version.clone(),
                t.package.clone(),
                t.python.join(", "),
                build(&t.cuda, Some(&t.cudnn), Channel::Stable, false),
            )
        }
        (None, None) => {
            return Err(no_native_windows_gpu(l.platform, l.version).unwrap_or_else(|| l.unknown()));
        }
    };
    if l.platform == "linux" && l.mm >= Version::from_parts(&[2, 14]) {
        notes.push(format!(
            "`pip install tensorflow[and-cuda]=={}` brings these as NVIDIA wheels; a cudaenv stack serves plain `tensorflow`",
            l.mm
        ));
    }
    sources.push(DRIVER_SOURCE.into());
    Ok(Requirement {
        framework: l.framework,
        version,
        package,
        platform: platform_name(l.platform),
        python,
        builds: vec![b],
        confirmed: true,
        notes,
        sources,
    })
}

/// A release whose wheel pins its CUDA (`b`, from the metadata of `r`), with
/// the tested configuration `t` where the table has one: the version,
/// package, Python range and build of the requirement.
fn from_wheel(
    r: &MetaRelease,
    mut b: Build,
    t: Option<&TfBuild>,
    notes: &mut Vec<String>,
    sources: &mut Vec<String>,
) -> (Version, String, String, Build) {
    sources.push(meta_source(r, &b));
    meta_notes(r, notes);
    // A range (2.20 on: `>=12.5.82, <13.0`) that holds the tested
    // configuration gets it: the metadata says what may work, the
    // table what was tested.
    if let (Some(range), Some(t)) = (b.cuda_range.clone(), t)
        && range.allows(&t.cuda)
        && r.cudnn.as_ref().is_none_or(|c| c.allows(&t.cudnn))
    {
        notes.push(format!(
            "{} {} allows CUDA {range}{}; the stack is its tested configuration, CUDA {} + cuDNN {}",
            r.project,
            r.version,
            r.cudnn
                .as_ref()
                .map(|c| format!(" + cuDNN {c}"))
                .unwrap_or_default(),
            t.cuda,
            t.cudnn
        ));
        let tested = build(&t.cuda, Some(&t.cudnn), Channel::Stable, false);
        b = Build {
            libraries: b.libraries,
            pins: b.pins,
            wheel: b.wheel,
            tested: true,
            ..tested
        };
    }
    if let Some(t) = t {
        let what = if b.wheel.is_some()
            && b.cuda_range.is_none()
            && r.cuda.as_ref().is_some_and(|c| c.eq.is_none())
        {
            "the stack's CUDA and cuDNN, Python"
        } else {
            "Python"
        };
        sources.push(format!(
            "{what}: TensorFlow's tested build configurations (registry/compat/tensorflow.toml)"
        ));
        if t.cuda.truncate(2) != b.cuda.truncate(2)
            || b.cudnn.as_ref().map(|c| c.truncate(2)) != Some(t.cudnn.truncate(2))
        {
            notes.push(format!(
                "TensorFlow's tested build configurations list CUDA {} + cuDNN {} for {}",
                t.cuda, t.cudnn, t.version
            ));
        }
    }
    let python = t
        .map(|t| t.python.join(", "))
        .or_else(|| wheel_python(r, sources))
        .unwrap_or_else(|| "unknown".into());
    (r.version.clone(), r.project.clone(), python, b)
}

/// TensorFlow's native Windows GPU builds end at 2.10 (its install guide:
/// "TensorFlow 2.10 was the last TensorFlow release that supported GPU on
/// native Windows"): a later release asked for Windows gets the error that
/// says where it has the GPU (WSL2, with its Linux build's stack) and the
/// last release that has it on Windows, from the table itself.
fn no_native_windows_gpu(platform: &str, version: &Version) -> Option<Error> {
    if platform != "windows" {
        return None;
    }
    let builds = &data::tensorflow().build;
    let last = builds
        .iter()
        .filter(|b| b.platform == "windows")
        .max_by(|a, b| a.version.cmp(&b.version))?;
    if version.truncate(2) <= last.version.truncate(2) {
        return None;
    }
    // What `--for` picks under WSL2: the Linux requirement's build.
    let linux_spec = requirement_of(Framework::Tensorflow, version, "linux")
        .ok()
        .and_then(|r| r.builds.first().map(|b| b.spec().to_string()));
    Some(Error::Machine(MachineError::NoNativeWindowsGpu {
        framework: "tensorflow",
        version: version.truncate(2).to_string(),
        linux_spec,
        last: last.version.truncate(2).to_string(),
        last_spec: format!("{}+cudnn{}", last.cuda, last.cudnn),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{FrameworkReq, requirement, stack_for, stack_for_on};
    use super::*;
    use crate::error::MachineError;
    use crate::spec::{Library, StackSpec};

    /// Every TensorFlow row, on both platforms, maps to exactly its CUDA + cuDNN.
    #[test]
    fn every_tensorflow_row() {
        for b in &data::tensorflow().build {
            let r = requirement(Framework::Tensorflow, &b.version, &b.platform).unwrap();
            assert_eq!(r.builds.len(), 1);
            // From 2.14 on Linux the wheel's `and-cuda` pins answer; they agree
            // with the tested configuration at major.minor, for every release.
            let from_wheel = r.builds[0].wheel.is_some();
            assert_eq!(
                from_wheel,
                b.platform == "linux" && b.version >= "2.14".parse().unwrap(),
                "{}",
                b.version
            );
            assert_eq!(
                r.builds[0].cuda.truncate(2),
                b.cuda.truncate(2),
                "{}",
                b.version
            );
            assert_eq!(
                r.builds[0].cudnn.as_ref().map(|c| c.truncate(2)),
                Some(b.cudnn.truncate(2)),
                "{}",
                b.version
            );
            assert!(
                !r.notes
                    .iter()
                    .any(|n| n.contains("tested build configurations list")),
                "{}",
                b.version
            );
            assert_eq!(r.package, b.package);
            assert!(r.builds[0].driver_linux.is_some(), "{}", b.version);
            if b.platform == "linux" {
                let c = stack_for(
                    &FrameworkReq::new(Framework::Tensorflow, Some(b.version.clone())),
                    None,
                )
                .unwrap();
                assert_eq!(
                    StackSpec::new(c.spec.cuda.clone(), c.spec.cudnn.clone()),
                    StackSpec::new(b.cuda.truncate(2), Some(b.cudnn.truncate(2)))
                );
                // The wheel's NCCL pin comes along.
                assert_eq!(
                    c.spec.libs.get(Library::Nccl).is_some(),
                    from_wheel,
                    "{}",
                    b.version
                );
                assert!(
                    c.reason.contains(&format!("CUDA {}", b.cuda)),
                    "{}",
                    c.reason
                );
            }
        }
        assert!(requirement(Framework::Tensorflow, &"2.11".parse().unwrap(), "windows").is_err());
        assert!(requirement(Framework::Tensorflow, &"2.11".parse().unwrap(), "linux").is_ok());
    }

    /// TensorFlow after 2.10 on native Windows: no GPU build; the error says
    /// WSL2 (with the Linux build's stack) or 2.10 with 11.2+cudnn8.1. Up to
    /// 2.10 the Windows table's own configuration is the pick.
    #[test]
    fn tensorflow_after_2_10_has_no_gpu_on_native_windows() {
        let tf = |v: &str| FrameworkReq::new(Framework::Tensorflow, Some(v.parse().unwrap()));
        for v in ["2.11", "2.15", "2.21.0"] {
            let e = stack_for_on(&tf(v), None, "windows").unwrap_err();
            let Error::Machine(MachineError::NoNativeWindowsGpu {
                linux_spec,
                last,
                last_spec,
                ..
            }) = &e
            else {
                panic!("{v}: {e:?}");
            };
            assert_eq!(
                (last.as_str(), last_spec.as_str()),
                ("2.10", "11.2+cudnn8.1")
            );
            let linux = stack_for(&tf(v), None).unwrap().spec;
            assert_eq!(
                linux_spec.as_deref(),
                Some(linux.to_string().as_str()),
                "{v}"
            );
            assert_eq!(e.exit_code(), crate::error::ExitCode::NotAvailable);
            let hint = e.hint().unwrap();
            assert!(hint.starts_with("use WSL2"), "{hint}");
            assert!(hint.contains("cudaenv install 11.2+cudnn8.1"), "{hint}");
        }
        let c = stack_for_on(&tf("2.10"), None, "windows").unwrap();
        assert_eq!(c.spec.to_string(), "11.2+cudnn8.1");
        assert_eq!(c.requirement.package, "tensorflow_gpu");
        let c = stack_for_on(&tf("2.4"), None, "windows").unwrap();
        assert_eq!(c.spec.to_string(), "11.0+cudnn8.0");
        // Linux is unchanged by the Windows rule.
        assert!(stack_for_on(&tf("2.15"), None, "linux").is_ok());
    }
}
