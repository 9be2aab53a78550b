//! The active version against the machine it runs on (or the target
//! planned for): what it is and whether it is activated, the driver's fit,
//! the GPUs' architectures, the cuDNN it pairs with its CUDA, and the host
//! compiler its nvcc would use.

use crate::i18n::Msg;
use crate::machine::compat::{self, ArchSupport, DriverFit, driver};
use crate::machine::doctor::facts::{ActiveFacts, Facts};
use crate::msg;
use crate::spec::Version;

use super::{Out, family_of, v};

/// The host compiler the active version's nvcc would use, against the
/// newest its release accepts (`registry/compat/host_compiler.toml`).
pub(super) fn host_compiler_findings(f: &Facts, o: &mut Out) {
    use crate::activation::host_compiler as hc;
    let (Some(h), Some(a)) = (&f.host_compiler, &f.active) else {
        return;
    };
    let Some(cuda) = a.cuda.as_deref().and_then(|c| c.parse::<Version>().ok()) else {
        return;
    };
    let Some(limits) = hc::limits(&cuda) else {
        return;
    };
    let Some(c) = &h.compiler else {
        o.warn(
            "host-compiler",
            msg!("doctor-host-compiler-none", from = h.from),
            msg!("doctor-host-compiler-none-fix"),
        );
        return;
    };
    let setting = if h.by_setting {
        msg!("doctor-host-compiler-by-setting")
    } else {
        Msg::verbatim("")
    };
    if c.accepted_by(limits) {
        o.ok(
            "host-compiler",
            msg!(
                "doctor-host-compiler-ok",
                compiler = c.describe(),
                from = h.from,
                setting => setting,
                limits = limits.describe()
            ),
        );
        return;
    }
    let fix = match &h.accepted {
        Some(ok) => msg!("doctor-host-compiler-fix-switch", compiler = ok.describe()),
        None => msg!("doctor-host-compiler-fix-install", gcc = limits.gcc_max),
    };
    o.warn(
        "host-compiler",
        msg!(
            "doctor-host-compiler-refused",
            name = a.name,
            compiler = c.describe(),
            from = h.from,
            limits = limits.describe()
        ),
        fix,
    );
}

pub(super) fn active_findings(f: &Facts, o: &mut Out) {
    let Some(a) = &f.active else {
        if let Some(e) = &f.active_error {
            o.error(
                "active-missing",
                msg!("doctor-active-missing", error = e),
                msg!("doctor-active-missing-fix"),
            );
        }
        return;
    };
    if a.name == "system" {
        o.ok(
            "active",
            msg!("doctor-active-system", origin => origin_msg(a)),
        );
        return;
    }
    active_version_findings(f, a, o);
    let Some(cuda) = a.cuda.as_deref().and_then(v) else {
        return;
    };
    let m = f.planned_machine();
    driver_fit_findings(&cuda, &m, o);
    arch_findings(&cuda, &m, o);
    cudnn_cuda_findings(a, &cuda, o);
}

/// Which version is active, what it holds and what selected it; and whether
/// this shell has it activated.
fn active_version_findings(f: &Facts, a: &ActiveFacts, o: &mut Out) {
    let what = match (&a.cuda, &a.cudnn) {
        (Some(c), Some(d)) => Msg::verbatim(format!("CUDA {c} + cuDNN {d}")),
        (Some(c), None) => msg!("doctor-active-no-cudnn", cuda = c),
        _ => msg!("doctor-active-versions-unknown"),
    };
    let libraries: String = a
        .libraries
        .iter()
        .map(|(component, version)| {
            let title = crate::spec::Library::from_component(component)
                .map_or(component.as_str(), |l| l.title());
            format!(" + {title} {version}")
        })
        .collect();
    let what = if libraries.is_empty() {
        what
    } else {
        msg!("doctor-active-with-libraries", what => what, libraries = libraries)
    };
    o.ok(
        "active",
        msg!("doctor-active", name = a.name, origin => origin_msg(a), what => what),
    );
    if f.env.cudaenv_active.as_deref() != Some(a.name.as_str()) {
        o.warn(
            "not-activated",
            match f.env.cudaenv_active.as_deref() {
                Some(other) => msg!("doctor-not-activated", name = a.name, active = other),
                None => msg!("doctor-not-activated-unset", name = a.name),
            },
            if f.windows.is_some() {
                msg!("doctor-win-not-activated-fix")
            } else {
                msg!("doctor-not-activated-fix")
            },
        );
    }
}

/// The active CUDA against the driver of the machine planned for.
fn driver_fit_findings(cuda: &Version, m: &compat::Machine, o: &mut Out) {
    let Some(d) = &m.driver else {
        return;
    };
    let driver = match m.whose {
        compat::Whose::ThisMachine => msg!("doctor-driver-named", driver = d),
        compat::Whose::Target => msg!("doctor-target-driver-named", driver = d),
    };
    match driver::fit(d, cuda, m.driver_os) {
        DriverFit::Full => o.ok(
            "driver-fit",
            msg!("doctor-driver-fit", driver => driver.clone(), cuda = cuda),
        ),
        DriverFit::MinorCompat { release_min } => o.warn(
            "driver-fit",
            msg!("doctor-driver-minor-compat", driver => driver.clone(), cuda = cuda),
            msg!("doctor-driver-minor-compat-fix", need = release_min),
        ),
        DriverFit::TooOld { need } => {
            o.error(
                "driver-too-old",
                msg!("doctor-driver-too-old", driver => driver.clone(), cuda = cuda, need = need),
                match driver::max_cuda(d, m.driver_os) {
                    Some(max) => msg!(
                        "doctor-driver-too-old-fix-or-select",
                        need = need,
                        cuda = max
                    ),
                    None => msg!("doctor-driver-too-old-fix", need = need),
                },
            );
        }
        DriverFit::Unknown => {}
    }
}

/// The active cuDNN against the active CUDA.
fn cudnn_cuda_findings(a: &ActiveFacts, cuda: &Version, o: &mut Out) {
    if let Some(cudnn) = a.cudnn.as_deref().and_then(v)
        && let Some(support) = compat::cudnn_support(&cudnn)
    {
        // A release newer than the cuDNN table is judged by its family's
        // rule, and the line says so; a listed one speaks only when wrong.
        let rule = support.rule_note();
        match (support.supports(cuda), &rule) {
            (false, _) => o.error(
                "cudnn-cuda",
                match &rule {
                    Some(r) => msg!(
                        "doctor-cudnn-cuda-by-rule",
                        cudnn = cudnn,
                        cuda = cuda,
                        built_for = support.describe_cuda(),
                        rule => r.clone()
                    ),
                    None => msg!("doctor-cudnn-cuda", cudnn = cudnn, cuda = cuda),
                },
                msg!(
                    "doctor-cudnn-cuda-fix",
                    spec = format!("{}+cudnn{}", cuda.truncate(2), cudnn.truncate(2))
                ),
            ),
            (true, Some(r)) => o.ok(
                "cudnn-cuda",
                msg!(
                    "doctor-cudnn-cuda-ok-by-rule",
                    cudnn = cudnn,
                    cuda = cuda,
                    built_for = support.describe_cuda(),
                    rule => r.clone()
                ),
            ),
            (true, None) => {}
        }
    }
}

/// The active CUDA against each of `machine`'s GPUs, with the same verdicts
/// as `compat`'s "this machine" column (`compat::Machine::can_run`) and
/// `verify`: a GPU the release dropped, or one newer than every architecture
/// it builds for, is an error. The second is the guides' case today (CUDA
/// 11.2 on an sm_89/sm_90/Blackwell GPU): no native code, only PTX that the
/// driver JIT-compiles at each library's first use, if the library has PTX.
fn arch_findings(cuda: &Version, machine: &compat::Machine, o: &mut Out) {
    let this_gpu = match machine.whose {
        compat::Whose::ThisMachine => msg!("doctor-this-gpu"),
        compat::Whose::Target => msg!("doctor-target-gpu"),
    };
    for &gpu in &machine.gpus {
        let sm = gpu.sm();
        let family = family_of(gpu);
        match compat::arch::support(cuda, gpu) {
            ArchSupport::Native => o.ok("arch", msg!("doctor-arch-native", cuda = cuda, sm = sm)),
            ArchSupport::Compatible { via } => o.ok(
                "arch",
                msg!("doctor-arch-compatible", cuda = cuda, sm = sm, via = via.sm()),
            ),
            ArchSupport::Deprecated { since } => o.warn(
                "arch-deprecated",
                msg!("doctor-arch-deprecated", sm = sm, since = since),
                match compat::arch::removed_in(gpu) {
                    Some(r) => msg!("doctor-arch-deprecated-fix", removed = r),
                    None => msg!("doctor-arch-deprecated-fix-unknown"),
                },
            ),
            ArchSupport::Removed { since } => o.error(
                "arch-unsupported",
                msg!("doctor-arch-removed", cuda = cuda, gpu => this_gpu.clone(), sm = sm, family => family, since = since),
                msg!("doctor-arch-removed-fix", since = since),
            ),
            ArchSupport::TooNew { first } => {
                let need = match &first {
                    Some(f) => msg!("doctor-arch-needs", sm = sm, first = f),
                    None => msg!("doctor-arch-newer-than-known", sm = sm),
                };
                let frameworks = compat::first_frameworks_for(gpu);
                o.error(
                    "arch-too-new",
                    msg!("doctor-arch-too-new", cuda = cuda, gpu => this_gpu.clone(), sm = sm, family => family, need => need),
                    match first {
                        Some(fv) if frameworks.is_empty() => msg!("doctor-arch-too-new-fix", first = fv),
                        Some(fv) => msg!(
                            "doctor-arch-too-new-fix-frameworks",
                            first = fv,
                            frameworks = frameworks.join(", ")
                        ),
                        None => msg!("doctor-arch-too-new-fix-newest"),
                    },
                );
            }
            ArchSupport::Unknown => {}
        }
    }
}

/// What selected the active version, as the facts record it (`origin_kind`
/// and its English text), in the reader's language: a path stays a path.
fn origin_msg(a: &ActiveFacts) -> Msg {
    match a.origin_kind.as_str() {
        "default" => msg!("doctor-origin-default"),
        "argument" => msg!("doctor-origin-argument"),
        "shell" => msg!(
            "doctor-origin-shell",
            variable = crate::context::env_vars::CUDAENV_VERSION
        ),
        "global" => msg!(
            "doctor-origin-global",
            path = a.origin.strip_suffix(" (global)").unwrap_or(&a.origin)
        ),
        _ => Msg::verbatim(a.origin.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Level;
    use super::*;
    use crate::machine::compat::ComputeCapability;

    /// doctor's architecture verdict is compat's "this machine" verdict, for
    /// every CUDA release in the tables on every GPU they name.
    #[test]
    fn arch_check_agrees_with_compat_this_machine() {
        let gpus: Vec<ComputeCapability> = compat::data::arch()
            .arch
            .iter()
            .filter_map(|a| a.sm.parse().ok())
            .collect();
        let releases: Vec<Version> = (9..=13)
            .flat_map(|major| (0..=9).map(move |minor| Version::from_parts(&[major, minor])))
            .collect();
        let mut compared = 0;
        for cuda in &releases {
            for &gpu in &gpus {
                let machine = compat::Machine {
                    gpus: vec![gpu],
                    ..Default::default()
                };
                let mut o = Out(Vec::new());
                arch_findings(cuda, &machine, &mut o);
                let doctor_error = o.0.iter().any(|f| f.level == Level::Error);
                let compat_no = machine.can_run(cuda).is_err();
                assert_eq!(
                    doctor_error,
                    compat_no,
                    "CUDA {cuda} on {}: {:?}",
                    gpu.sm(),
                    o.0
                );
                compared += 1;
            }
        }
        assert!(compared > 300, "{compared}");
        // The guides' stack on an H200: an error naming the fix.
        let mut o = Out(Vec::new());
        arch_findings(
            &Version::from_parts(&[11, 2, 2]),
            &compat::Machine {
                gpus: vec![ComputeCapability::new(9, 0)],
                ..Default::default()
            },
            &mut o,
        );
        let f = &o.0[0];
        assert_eq!((f.level, &*f.code), (Level::Error, "arch-too-new"));
        assert!(
            f.message.en().contains("sm_90 needs CUDA ≥ 11.8"),
            "{}",
            f.message
        );
        let fix = f.fix.first().unwrap().en();
        assert!(
            fix.starts_with("use CUDA ≥ 11.8 (`cudaenv install 11.8`"),
            "{fix}"
        );
        assert!(fix.contains("TensorFlow 2.12 (CUDA 11.8)"), "{fix}");
    }
}
