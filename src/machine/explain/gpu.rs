//! The driver and the GPU: a driver too old for the CUDA loaded, and a GPU
//! that no code in the program was built for.

use crate::i18n::Msg;
use crate::machine::compat::{self, driver};
use crate::msg;
use crate::spec::Version;

use super::{Answer, Input, Stack, answer, has, sm_words, version_after};
use crate::machine::finding::Finding;

pub(super) fn driver_insufficient(input: &Input, t: &str, out: &mut Vec<Finding>) {
    let Some(matched) = has(
        t,
        &[
            "driver version is insufficient",
            "CUDA_ERROR_INSUFFICIENT_DRIVER",
            "cudaErrorInsufficientDriver",
            "NVIDIA driver on your system is too old",
        ],
    ) else {
        return;
    };
    let os = input.machine.driver_os;
    let driver = input.machine.driver.clone();
    // PyTorch says `(found version 11040)`: the driver's maximum CUDA.
    let reported_max = version_after(t, "found version").and_then(|v| {
        let n: i32 = v.to_string().parse().ok()?;
        driver::cuda_from_api(n)
    });
    let max = driver
        .as_ref()
        .and_then(|d| driver::max_cuda(d, os))
        .or(reported_max);
    let active_cuda = input.active.as_ref().and_then(|a| a.cuda.clone());
    let provided_by = active_cuda.as_ref().and_then(|c| {
        driver::requirement(c, os)
            .map(|r| msg!("explain-cuda-needs-driver", cuda = c, driver = r.describe()))
    });
    let mut fix = Vec::new();
    if let Some(c) = &active_cuda
        && let Some(r) = driver::requirement(c, os)
        && let Some(m) = r.absolute_min()
    {
        fix.push(msg!("explain-upgrade-driver-to", driver = m));
    } else {
        fix.push(msg!("explain-upgrade-driver"));
    }
    // The driver runs the active CUDA: what was loaded is not the active runtime.
    if let (Some(d), Some(c)) = (&driver, &active_cuda)
        && matches!(
            driver::fit(d, c, os),
            compat::DriverFit::Full | compat::DriverFit::MinorCompat { .. }
        )
    {
        let meaning = msg!("explain-driver-runs-active-cuda", driver = d, cuda = c);
        out.push(
            answer("driver-insufficient", matched, meaning)
                .provided_by(provided_by)
                .fixes(vec![
                    msg!("explain-doctor-finds-stray-cudart"),
                    msg!("explain-run-with-active-environment"),
                ]),
        );
        return;
    }
    let installed_text = match &max {
        Some(m) => {
            let ok: Vec<&Stack> =
                input.providers(|s| s.cuda.as_ref().is_some_and(|c| c.truncate(2) <= *m));
            if let Some(best) = ok.last() {
                fix.push(msg!(
                    "explain-use-cuda-driver-runs-installed",
                    name = best.name
                ));
            } else {
                fix.push(msg!("explain-use-cuda-driver-runs", cuda = m));
            }
            let fits = if ok.is_empty() {
                msg!("explain-driver-no-installed-fits")
            } else {
                msg!(
                    "explain-driver-installed-fit",
                    names = ok
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Some(match &driver {
                Some(d) => {
                    msg!("explain-driver-runs-up-to-named", driver = d, cuda = m, fits => fits)
                }
                None => msg!("explain-driver-runs-up-to", cuda = m, fits => fits),
            })
        }
        None => None,
    };
    fix.push(msg!("explain-check-stub-libcuda"));
    out.push(
        answer(
            "driver-insufficient",
            matched,
            msg!("explain-driver-insufficient"),
        )
        .provided_by(provided_by)
        .installed(installed_text)
        .fixes(fix),
    );
}

pub(super) fn no_kernel_image(input: &Input, t: &str, out: &mut Vec<Finding>) {
    let Some(matched) = has(
        t,
        &[
            "no kernel image is available",
            "cudaErrorNoKernelImageForDevice",
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "is not compatible with the current PyTorch installation",
        ],
    ) else {
        return;
    };
    let mut gpus = sm_words(t).into_iter().take(1).collect::<Vec<_>>();
    if gpus.is_empty() || matched.contains("PyTorch") && gpus.len() > 1 {
        gpus = input.machine.gpus.clone();
    }
    if matched.contains("PyTorch") {
        // "NVIDIA H100 with CUDA capability sm_90 is not compatible…": the first sm_ is the GPU's.
        gpus = sm_words(t).into_iter().take(1).collect();
    }
    gpus.dedup();
    let mut provided = Vec::new();
    let mut fix = Vec::new();
    for g in &gpus {
        let sm = g.sm();
        match (compat::arch::first_cuda(*g), compat::arch::removed_in(*g)) {
            (Some(first), Some(rem)) => provided.push(msg!(
                "explain-arch-cuda-range",
                sm = sm,
                first = first,
                removed = rem
            )),
            (Some(first), None) => {
                provided.push(msg!("explain-arch-cuda-from", sm = sm, first = first))
            }
            (None, Some(rem)) => {
                provided.push(msg!("explain-arch-cuda-before", sm = sm, removed = rem))
            }
            (None, None) => provided.push(msg!("explain-arch-unknown", sm = sm)),
        }
        if let Some(a) = input
            .active
            .as_ref()
            .and_then(|a| a.cuda.as_ref().map(|c| (a, c)))
        {
            let s = compat::arch::support(a.1, *g);
            if !s.runs() {
                let target = compat::arch::first_cuda(*g)
                    .filter(|f| f > a.1)
                    .or_else(|| {
                        compat::arch::removed_in(*g).map(|r| Version::from_parts(&[r.major() - 1]))
                    });
                if let Some(tv) = target {
                    fix.push(msg!(
                        "explain-active-cannot-build-for",
                        name = a.0.name,
                        cuda = a.1,
                        sm = sm,
                        target = tv
                    ));
                }
            }
        }
        if let Some(first) = compat::arch::first_cuda(*g) {
            fix.push(msg!(
                "explain-framework-build-for",
                first = first,
                tag = first.to_string().replace('.', "")
            ));
        }
    }
    if gpus.is_empty() {
        fix.push(msg!("explain-doctor-shows-architecture"));
    }
    out.push(
        answer("no-kernel-image", matched, msg!("explain-no-kernel-image"))
            .provided_by((!provided.is_empty()).then_some(Msg::Clauses(provided)))
            .fixes(fix),
    );
}
