//! The libraries the loader would find besides the active version's: copies
//! on LD_LIBRARY_PATH that shadow it or add to it, a stub or foreign libcuda,
//! sonames only the ldconfig cache has, and CUDA_HOME/CUDA_PATH pointing
//! elsewhere.

use crate::machine::doctor::facts::{ActiveFacts, Facts, LibDir};
use crate::msg;

use super::{Out, list, listed_before};

fn norm(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() { p } else { t }
}

pub(super) fn library_findings(f: &Facts, o: &mut Out) {
    let active = f.active.as_ref().filter(|a| a.name != "system");
    let system_copies = ld_library_path_findings(f, active, o);
    if !system_copies.is_empty() {
        system_copies_findings(&system_copies, o);
    }
    // The ldconfig cache is searched after LD_LIBRARY_PATH: it only matters for
    // sonames the active version lacks (e.g. a system libcudnn.so.8).
    if let Some(a) = active {
        ldconfig_findings(f, a, o);
        cuda_home_findings(f, a, o);
    }
}

/// Is `d` one of the active version's library directories?
fn is_active_dir(active: Option<&ActiveFacts>, d: &str) -> bool {
    active.is_some_and(|a| a.lib_dirs.iter().any(|x| norm(x) == norm(d)))
}

/// Each LD_LIBRARY_PATH directory other than the active version's: a libcuda
/// there, and CUDA libraries that shadow the version's or add to them.
/// Without an active version, returns the directories with CUDA libraries.
fn ld_library_path_findings<'f>(
    f: &'f Facts,
    active: Option<&ActiveFacts>,
    o: &mut Out,
) -> Vec<&'f LibDir> {
    let first_active = f
        .env
        .ld_library_path
        .iter()
        .position(|d| is_active_dir(active, d));
    let driver_dir = f
        .host
        .libcuda
        .path
        .as_deref()
        .and_then(|p| p.rsplit_once('/'))
        .map(|(d, _)| d.to_string());
    let mut system_copies = Vec::new();
    for d in f
        .library_dirs
        .iter()
        .filter(|d| d.origin == "LD_LIBRARY_PATH")
    {
        if is_active_dir(active, &d.dir) {
            continue;
        }
        libcuda_copy_findings(f, d, driver_dir.as_deref(), o);
        let libs: Vec<&String> = d
            .libs
            .iter()
            .filter(|l| !l.starts_with("libcuda.so"))
            .collect();
        if libs.is_empty() {
            continue;
        }
        let Some(a) = active else {
            system_copies.push(d);
            continue;
        };
        shadow_findings(d, a, &libs, first_active, o);
    }
    system_copies
}

/// A libcuda on LD_LIBRARY_PATH: the toolkit's stub is an error, another
/// release's (a forward-compatibility package) a warning.
fn libcuda_copy_findings(f: &Facts, d: &LibDir, driver_dir: Option<&str>, o: &mut Out) {
    if d.libs
        .iter()
        .any(|l| l == "libcuda.so" || l.starts_with("libcuda.so."))
    {
        if d.dir.contains("/stubs") {
            o.error(
                "libcuda-stub",
                msg!("doctor-libcuda-stub", dir = d.dir),
                msg!("doctor-libcuda-stub-fix", dir = d.dir),
            );
        } else if is_foreign_libcuda(d, driver_dir, f.driver().as_ref()) {
            o.warn(
                "libcuda-compat",
                msg!("doctor-libcuda-compat", dir = d.dir),
                msg!("doctor-libcuda-compat-fix"),
            );
        }
    }
}

/// Another directory's `libs` against the active version's: one before it
/// on the path with the same names shadows it (an error); names the version
/// lacks are a warning.
fn shadow_findings(
    d: &LibDir,
    a: &ActiveFacts,
    libs: &[&String],
    first_active: Option<usize>,
    o: &mut Out,
) {
    let shadowed: Vec<&str> = libs
        .iter()
        .filter(|l| a.libs.contains(l))
        .map(|s| s.as_str())
        .collect();
    let extra: Vec<&str> = libs
        .iter()
        .filter(|l| !a.libs.contains(l) && l.contains(".so."))
        .map(|s| s.as_str())
        .collect();
    let before = listed_before(d.position, first_active);
    if before && !shadowed.is_empty() {
        o.error(
            "ld-shadow",
            msg!("doctor-ld-shadow", dir = d.dir, name = a.name, libs => list(&shadowed)),
            msg!("doctor-ld-shadow-fix", dir = d.dir),
        );
    } else if !extra.is_empty() {
        o.warn(
            "ld-extra",
            msg!("doctor-ld-extra", dir = d.dir, name = a.name, libs => list(&extra)),
            msg!("doctor-ld-extra-fix", dir = d.dir),
        );
    }
}

/// Without an active version: CUDA libraries on LD_LIBRARY_PATH are the
/// system's, and more than one CUDA runtime among them is a warning.
fn system_copies_findings(system_copies: &[&LibDir], o: &mut Out) {
    let dirs: Vec<&str> = system_copies.iter().map(|d| d.dir.as_str()).collect();
    let with_cudart: Vec<&&LibDir> = system_copies
        .iter()
        .filter(|d| d.libs.iter().any(|l| l.starts_with("libcudart.so.")))
        .collect();
    if with_cudart.len() > 1 {
        o.warn(
            "ld-copies",
            msg!("doctor-ld-copies", dirs = dirs.join(", ")),
            msg!("doctor-ld-copies-fix"),
        );
    } else {
        o.ok(
            "ld-copies",
            msg!("doctor-ld-system", dirs = dirs.join(", ")),
        );
    }
}

/// Sonames in the ldconfig cache that the active version lacks.
fn ldconfig_findings(f: &Facts, a: &ActiveFacts, o: &mut Out) {
    for d in f.library_dirs.iter().filter(|d| d.origin == "ldconfig") {
        if is_active_dir(Some(a), &d.dir) {
            continue;
        }
        let extra: Vec<&str> = d
            .libs
            .iter()
            .filter(|l| !l.starts_with("libcuda.so") && l.contains(".so.") && !a.libs.contains(l))
            .map(|s| s.as_str())
            .collect();
        if !extra.is_empty() {
            o.warn(
                "ldconfig",
                msg!("doctor-ldconfig", libs => list(&extra), dir = d.dir, name = a.name),
                msg!("doctor-ldconfig-fix"),
            );
        }
    }
}

/// CUDA_HOME and CUDA_PATH set to anything but the active version's tree.
fn cuda_home_findings(f: &Facts, a: &ActiveFacts, o: &mut Out) {
    let home = a.cuda_home.as_deref();
    for (var, val) in [
        ("CUDA_HOME", &f.env.cuda_home),
        ("CUDA_PATH", &f.env.cuda_path),
    ] {
        if let Some(val) = val
            && home.map(norm) != Some(norm(val))
        {
            o.warn(
                "cuda-home",
                match home {
                    Some(h) => msg!(
                        "doctor-cuda-home",
                        var = var,
                        value = val,
                        name = a.name,
                        home = h
                    ),
                    None => msg!(
                        "doctor-cuda-home-no-tree",
                        var = var,
                        value = val,
                        name = a.name
                    ),
                },
                if f.windows.is_some() {
                    msg!("doctor-win-cuda-home-fix", var = var, name = a.name)
                } else {
                    msg!("doctor-cuda-home-fix", var = var, name = a.name)
                },
            );
        }
    }
}

/// A libcuda on LD_LIBRARY_PATH that is not the running driver's: a `compat`
/// directory, or a versioned `libcuda.so.X.Y.Z` of another release. Containers
/// mount the driver's own libcuda in several directories (`/usr/local/nvidia/lib`
/// and `lib64`); those carry the driver's version and are fine.
fn is_foreign_libcuda(
    d: &LibDir,
    driver_dir: Option<&str>,
    driver: Option<&crate::machine::compat::DriverVersion>,
) -> bool {
    if driver_dir == Some(norm(&d.dir)) {
        return false;
    }
    if d.dir.split('/').any(|c| c == "compat") {
        return true;
    }
    let versions: Vec<crate::machine::compat::DriverVersion> = d
        .libs
        .iter()
        .filter_map(|l| l.strip_prefix("libcuda.so."))
        .filter_map(crate::machine::compat::DriverVersion::parse)
        .filter(|v| v.major() >= 100)
        .collect();
    match driver {
        Some(drv) => versions.iter().any(|v| v != drv),
        None => false,
    }
}
