//! nvcc's complaints: a host compiler newer than its release accepts, and
//! a GPU architecture it cannot build for.

use crate::i18n::Msg;
use crate::machine::compat;
use crate::msg;

use super::{Answer, Input, answer, has, sm_words};
use crate::machine::finding::Finding;

/// nvcc's "unsupported GNU version! gcc versions later than N are not
/// supported!" (or clang's): which CUDA releases have that limit, the setting
/// that points nvcc at an older compiler, and the releases that accept newer
/// ones (`registry/compat/host_compiler.toml`).
pub(super) fn host_compiler(input: &Input, t: &str, out: &mut Vec<Finding>) {
    use crate::activation::host_compiler as hc;
    let (family, marker) = if let Some(m) = has(t, &["gcc versions later than"]) {
        ("GCC", m)
    } else if let Some(m) = has(t, &["clang version must be less than"]) {
        ("Clang", m)
    } else {
        return;
    };
    let lower = t.to_ascii_lowercase();
    let Some(limit) = lower
        .find(&marker.to_ascii_lowercase())
        .map(|i| &t[i + marker.len()..])
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| {
            n.trim_matches(|c: char| !c.is_ascii_digit())
                .parse::<u32>()
                .ok()
        })
    else {
        return;
    };
    // Clang's message names the first refused major; GCC's the last accepted.
    let max = if family == "GCC" {
        limit
    } else {
        limit.saturating_sub(1)
    };
    let rows = &hc::table().release;
    let of = |l: &hc::Limits| {
        if family == "GCC" {
            l.gcc_max
        } else {
            l.clang_max
        }
    };
    let releases: Vec<String> = rows
        .iter()
        .filter(|l| of(l) == max)
        .map(|l| l.cuda.to_string())
        .collect();
    let newer: Vec<String> = rows
        .iter()
        .map(of)
        .filter(|m| *m > max)
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .filter_map(|m| {
            rows.iter()
                .find(|l| of(l) >= m)
                .map(|l| format!("{family} {m}: CUDA {}+", l.cuda))
        })
        .collect();
    let active = input
        .active
        .as_ref()
        .and_then(|a| a.cuda.as_ref())
        .map_or(Msg::verbatim(""), |c| {
            msg!("explain-gcc-refused-active", cuda = c)
        });
    let compiler = if family == "GCC" {
        format!("g++-{max}")
    } else {
        format!("clang++-{max}")
    };
    let package = if family == "GCC" {
        format!("g++-{max}")
    } else {
        format!("clang-{max}")
    };
    let variable = crate::context::env_vars::CUDAENV_HOST_COMPILER;
    let mut fix = vec![
        msg!("explain-gcc-refused-fix-auto", variable = variable),
        msg!(
            "explain-gcc-refused-fix-name",
            variable = variable,
            compiler = compiler,
            package = package
        ),
    ];
    if !newer.is_empty() {
        fix.push(msg!(
            "explain-gcc-refused-fix-newer",
            releases = newer.join(", ")
        ));
    }
    let releases = if releases.is_empty() {
        String::new()
    } else {
        format!(" (CUDA {})", releases.join(", "))
    };
    let meaning = msg!(
        "explain-gcc-refused",
        family = family,
        max = max,
        releases = releases,
        active => active
    );
    out.push(answer("gcc-unsupported", marker, meaning).fixes(fix));
}

pub(super) fn nvcc_arch(input: &Input, t: &str, out: &mut Vec<Finding>) {
    let Some(matched) = has(t, &["Unsupported gpu architecture", "nvcc fatal"]) else {
        return;
    };
    let Some(g) = sm_words(t).into_iter().next() else {
        return;
    };
    let first = compat::arch::first_cuda(g);
    let removed = compat::arch::removed_in(g);
    let found = input.providers(|s| {
        s.cuda
            .as_ref()
            .is_some_and(|c| compat::arch::support(c, g).runs())
    });
    let (text, switch) = input.installed_text(&found);
    let mut fix = Vec::new();
    match (switch, &first, &removed) {
        (Some(n), _, _) => fix.push(Msg::verbatim(format!("cudaenv local {n}"))),
        (None, Some(f), _) if found.is_empty() => fix.push(Msg::verbatim(format!(
            "cudaenv install {f} --profile devel && cudaenv local {f}"
        ))),
        (None, None, Some(r)) if found.is_empty() => fix.push(msg!(
            "explain-use-cuda-before",
            removed = r,
            last = format!("{}.9", r.major() - 1)
        )),
        _ => {}
    }
    fix.push(msg!("explain-stop-building-for", sm = g.sm()));
    let meaning = match g.family() {
        Some(family) => msg!("explain-nvcc-arch", sm = g.sm(), family = family),
        None => msg!("explain-nvcc-arch-unknown-family", sm = g.sm()),
    };
    let provided_by = match (first, removed) {
        (Some(f), Some(r)) => msg!("explain-cuda-range", first = f, removed = r),
        (Some(f), None) => Msg::verbatim(format!("CUDA ≥ {f}")),
        (None, Some(r)) => msg!("explain-cuda-before", removed = r),
        _ => msg!("explain-unknown"),
    };
    out.push(
        answer("nvcc-arch", matched, meaning)
            .provided_by(Some(provided_by))
            .installed(Some(text))
            .fixes(fix),
    );
}
