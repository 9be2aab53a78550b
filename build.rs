//! Link settings for start-up speed. Every shim is this binary, so its start-up
//! is the shim's overhead; docs/PERFORMANCE.md has the measurements behind
//! each setting. Only Linux with glibc is affected.
//!
//! - The unwinder (libgcc_eh.a) is linked in statically, so that the loader
//!   has one shared library fewer to map, relocate and initialise: libgcc_s's
//!   constructor probes the CPU, which is slow under virtualisation (~0.12 ms
//!   per start measured). Skipped when the C compiler has no libgcc_eh.a.
//! - The `cudaenv` executable is linked as a fixed-address (non-PIE) program:
//!   a position-independent one spends its start applying ~13,000 relocations
//!   and copying the pages they touch (~0.15 ms per start measured). Shared
//!   libraries, heap and stack keep their randomised addresses.
//! - `pow`, the only function the program took from libm, is defined in
//!   src/main.rs, so libm is not loaded at all (~0.1 ms per start measured);
//!   a version script keeps that definition private to the executable.
//! - `dist` builds are linked with `src/activation/shims/shim-path.ld`, which gathers the
//!   functions a shim runs into one section at the start of the code, so
//!   that a shim touches a few pages of code instead of ~25 scattered
//!   windows (160 -> 134 page faults per shim run measured). Its patterns name functions
//!   by their v0 symbols (.cargo/config.toml); scripts/shim-order.sh makes it.
//!   The file asserts that each pattern gathered a function, so once the
//!   code or a dependency changes under it the link fails with the pattern
//!   and what to run, instead of quietly producing a slower shim. To build
//!   the binary that scripts/shim-order.sh regenerates it from, set
//!   `CUDAENV_SHIM_ORDER=off` (a build-time variable: the link goes without
//!   the file). The file records the compiler it was made with; a build with
//!   another compiler, or another profile, links without it and says so in a
//!   warning, since its patterns describe what that compiler's `dist` build
//!   made of the code (scripts/test.sh builds `dist` with the recorded one, so
//!   a stale file fails the suite).
//!
//! Each of these settings is measured against the build without it, side by
//! side, in docs/PERFORMANCE.md (scripts/bench-shim.sh): each is worth
//! 0.05-0.13 ms of every shim run.
//!
//! It also embeds every page of docs/ as a topic of `cudaenv help TOPIC`
//! (`$OUT_DIR/help_topics.rs`, see src/cli/help.rs), so that someone holding
//! only the binary can read the documentation its messages point to, and a
//! page added to docs/ becomes a topic without a code change. A page of
//! docs/zh-CN/ is the Chinese version of the topic of the same name
//! (`$OUT_DIR/help_topics_zh.rs`), shown under a Chinese locale.
//!
//! For the tests, in debug builds only, it tells what this machine lacks, as
//! cfgs that mark the tests needing it ignored, with the reason, instead of
//! letting them return early and pass: `cudaenv_has_driver` (an NVIDIA driver
//! is installed, so the no-driver outcomes cannot be produced),
//! `cudaenv_system_cudart` (the loader's cache has a CUDA runtime, which
//! serves what a test expects to be missing) and `cudaenv_no_mount_ns` (not
//! root, or no mount namespaces).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    help_topics();
    test_environment();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    if let Some(dir) = static_unwinder_dir() {
        // Listed for the library, so it precedes the standard library's
        // `-lgcc_s` on the link line and satisfies its references first.
        println!("cargo::rustc-link-search=native={}", dir.display());
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    } else {
        println!(
            "cargo::warning=libgcc_eh.a not found: linking the unwinder dynamically (slower shims)"
        );
    }
    println!("cargo::rustc-link-arg-bins=-no-pie");
    if let Some(script) = shim_path_script() {
        println!("cargo::rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
    // `pow` is defined by the executable (src/main.rs) so that it needs no
    // libm; kept out of the dynamic symbol table, where it would take the
    // place of libm's for libraries loaded later (CUDA's, under `verify`).
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let script = out.join("executable.ver");
    std::fs::write(&script, "{ local: pow; };\n").expect("OUT_DIR is writable");
    println!(
        "cargo::rustc-link-arg-bins=-Wl,--version-script={}",
        script.display()
    );
}

/// The linker script that keeps the shim's code together, for optimised
/// builds with a linker that reads such scripts (GNU ld and lld do; mold
/// does not). Debug builds skip it: they have far more sections to match,
/// and nobody measures their shims.
fn shim_path_script() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?);
    let script = dir.join("src/activation/shims/shim-path.ld");
    println!("cargo::rerun-if-changed={}", script.display());
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo::rerun-if-env-changed=CUDAENV_SHIM_ORDER");
    let optimised = std::env::var("OPT_LEVEL").is_ok_and(|l| l != "0");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if std::env::var("CUDAENV_SHIM_ORDER").is_ok_and(|v| v == "off") {
        println!(
            "cargo::warning=CUDAENV_SHIM_ORDER=off: linking without src/activation/shims/shim-path.ld"
        );
        return None;
    }
    if !script.is_file() {
        // The file is part of the repository: its absence is a broken
        // checkout or a moved file, never a build to be quietly slower.
        println!(
            "cargo::warning={} is missing: linking without it (each shim starts ~0.1 ms slower)",
            script.display()
        );
        return None;
    }
    if !optimised || flags.contains("mold") {
        return None;
    }
    // The patterns name what the `dist` profile's whole-program optimisation
    // leaves of the shim's functions, as one compiler made them: another
    // profile inlines differently and another compiler names differently, so
    // the file's assertions would fail a build that is only slower without it.
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").ok()?);
    let profile = out_dir.ancestors().nth(3).and_then(|p| p.file_name());
    if profile.is_none_or(|p| p != "dist") {
        return None;
    }
    let text = std::fs::read_to_string(&script).ok()?;
    let recorded = text
        .lines()
        .find_map(|l| l.split(" with rustc ").nth(1))
        .and_then(|rest| rest.split(';').next())
        .map(|v| format!("rustc {v}"));
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let current = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_string());
    if recorded.is_none() || recorded != current {
        println!(
            "cargo::warning=src/activation/shims/shim-path.ld was generated with {}, this build uses {}: linking without it (each shim starts ~0.1 ms slower); scripts/shim-order.sh regenerates it",
            recorded.as_deref().unwrap_or("an unknown rustc"),
            current.as_deref().unwrap_or("an unknown rustc")
        );
        return None;
    }
    Some(script)
}

/// The directory of the C compiler's libgcc_eh.a, if it has one.
fn static_unwinder_dir() -> Option<PathBuf> {
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let out = Command::new(linker)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // Without the file the compiler echoes the bare name back.
    (out.status.success() && path.is_absolute() && path.is_file())
        .then(|| path.parent().map(PathBuf::from))
        .flatten()
}

/// Writes `$OUT_DIR/help_topics.rs`: `(name, title, text)` for every
/// The Markdown pages of `dir`: each named by its file stem in lower case
/// and titled by its first `# ` heading (the name where it has none).
fn md_pages(dir: &Path) -> Vec<(String, String, PathBuf)> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the docs directory exists") {
        let path = entry.expect("the docs directory is readable").path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_lowercase();
        let text = std::fs::read_to_string(&path).expect("docs are UTF-8");
        let title = text
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .unwrap_or(&name)
            .trim()
            .to_string();
        pages.push((name, title, path));
    }
    pages
}

/// `docs/*.md`, named by its file stem in lower case (`exit-codes`), titled by
/// its first `# ` heading, sorted by name; and README.zh-CN.md as `zh-cn`.
fn help_topics() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("docs");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut topics = md_pages(&dir);
    // The Chinese quick start, for a reader with the binary and no clone.
    let zh = dir
        .parent()
        .expect("docs/ is in the repository")
        .join("README.zh-CN.md");
    println!("cargo::rerun-if-changed={}", zh.display());
    let zh_text = std::fs::read_to_string(&zh).expect("README.zh-CN.md is UTF-8");
    let zh_title = zh_text
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("zh-cn")
        .trim()
        .to_string();
    topics.push(("zh-cn".to_string(), zh_title, zh));
    topics.sort();
    // Chinese versions of topics (docs/zh-CN/<topic>.md), shown instead of
    // the English page under a Chinese locale; each must translate a topic.
    let zh_dir = dir.join("zh-CN");
    println!("cargo::rerun-if-changed={}", zh_dir.display());
    let mut translated = if zh_dir.is_dir() {
        md_pages(&zh_dir)
    } else {
        Vec::new()
    };
    for (name, _, _) in &translated {
        assert!(
            topics.iter().any(|(n, _, _)| n == name),
            "docs/zh-CN/{name}.md translates no page of docs/"
        );
    }
    translated.sort();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (file, list) in [
        ("help_topics.rs", &topics),
        ("help_topics_zh.rs", &translated),
    ] {
        let mut code = String::from("&[\n");
        for (name, title, path) in list {
            code.push_str(&format!(
                "    ({name:?}, {title:?}, include_str!({:?})),\n",
                path.display().to_string()
            ));
        }
        code.push_str("]\n");
        std::fs::write(out.join(file), code).expect("OUT_DIR is writable");
    }
}

/// Sets the cfgs described in the module comment.
fn test_environment() {
    println!("cargo::rustc-check-cfg=cfg(cudaenv_has_driver)");
    println!("cargo::rustc-check-cfg=cfg(cudaenv_no_mount_ns)");
    println!("cargo::rustc-check-cfg=cfg(cudaenv_system_cudart)");
    println!("cargo::rustc-check-cfg=cfg(cudaenv_not_root)");
    if std::env::var("PROFILE").is_ok_and(|p| p != "debug") {
        return;
    }
    // Installing or removing a driver or a toolkit updates the loader's cache.
    println!("cargo::rerun-if-changed=/etc/ld.so.cache");
    let sh = |script: &str| {
        Command::new("sh")
            .args(["-c", script])
            .status()
            .is_ok_and(|s| s.success())
    };
    if sh("ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '") {
        println!("cargo::rustc-cfg=cudaenv_has_driver");
    }
    if sh("ldconfig -p 2>/dev/null | grep -q 'libcudart\\.so'") {
        println!("cargo::rustc-cfg=cudaenv_system_cudart");
    }
    if !sh("[ \"$(id -u)\" = 0 ]") {
        println!("cargo::rustc-cfg=cudaenv_not_root");
    }
    if !sh("[ \"$(id -u)\" = 0 ] && unshare -m true 2>/dev/null") {
        println!("cargo::rustc-cfg=cudaenv_no_mount_ns");
    }
}
