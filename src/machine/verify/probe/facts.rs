//! Facts about what the loader found: version numbers decoded, where a
//! library came from, the driver's own version and its GPUs.
//!
//! Everything here reads; nothing launches work on a GPU.

use std::ffi::c_int;
use std::path::{Path, PathBuf};

use super::stage;
use crate::machine::facts::driver::{self as host_driver, Gpu};
use crate::machine::verify::ffi::{self, Driver, Nvml, Runtime};
use crate::machine::verify::{DeviceFacts, Expected, LibraryFacts, Origin};
use crate::spec::Version;

/// `12040` → `12.4`, the encoding of every CUDA version query.
pub fn api_version(v: c_int) -> Version {
    let v = v.max(0) as u32;
    Version::from_parts(&[v / 1000, (v % 1000) / 10])
}

/// cuDNN's `cudnnGetVersion`: major*1000+minor*100+patch up to 8.x,
/// major*10000+minor*100+patch from 9.0.
pub fn cudnn_version(v: usize) -> Version {
    let v = v as u32;
    if v >= 90000 {
        Version::from_parts(&[v / 10000, (v / 100) % 100, v % 100])
    } else {
        Version::from_parts(&[v / 1000, (v / 100) % 10, v % 100])
    }
}

/// `cublasLtGetVersion`: major*10000+minor*100+patch from cuBLAS 12;
/// major*1000+minor*100+patch in cuBLAS 11 (11.4.1 reports 11401).
pub(super) fn cublaslt_version(v: usize) -> String {
    let v = v as u32;
    if v < 100_000 {
        format!("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100)
    } else {
        format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
    }
}

/// The files the loader is asked for, for a library family on this
/// platform, the expected major first (`compat::libraries::file_names`).
pub fn sonames(component: &str, majors: &[u32]) -> Vec<String> {
    crate::machine::compat::libraries::file_names(
        component,
        majors,
        crate::os::platform::Platform::host(),
    )
}

/// Is `path` in one of `dirs`? Both sides are compared with symlinks resolved,
/// so a version that links `/usr/local/cuda-13.0` still owns what its
/// `lib64 -> targets/x86_64-linux/lib` resolves to.
pub fn origin_of(loaded: Option<&Path>, resolved: Option<&Path>, dirs: &[PathBuf]) -> Origin {
    if dirs.is_empty() {
        return Origin::Unjudged;
    }
    let canon: Vec<PathBuf> = dirs
        .iter()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
        .collect();
    let inside = |p: &Path| {
        let parent = p.parent().unwrap_or(p);
        dirs.iter().chain(canon.iter()).any(|d| parent == d)
            || canon.iter().any(|d| p.starts_with(d))
    };
    if loaded.is_some_and(inside) || resolved.is_some_and(inside) {
        Origin::Version
    } else {
        Origin::Outside
    }
}

pub(super) fn library_facts(
    name: &str,
    tried: Vec<String>,
    result: &Result<ffi::Loaded, Vec<String>>,
    expected: &Expected,
) -> LibraryFacts {
    match result {
        Ok(l) => {
            let resolved = l.path.as_ref().and_then(|p| std::fs::canonicalize(p).ok());
            LibraryFacts {
                name: name.into(),
                tried,
                soname: Some(l.soname.clone()),
                origin: Some(origin_of(
                    l.path.as_deref(),
                    resolved.as_deref(),
                    &expected.dirs,
                )),
                path: resolved.or_else(|| l.path.clone()),
                version: None,
                error: None,
            }
        }
        Err(errors) => LibraryFacts {
            name: name.into(),
            tried,
            soname: None,
            path: None,
            origin: None,
            version: None,
            error: Some(errors.join("; ")),
        },
    }
}

/// The driver's version string: the kernel module's, else NVML's.
fn driver_version_string(nvml: Option<&Nvml>) -> Option<String> {
    if let Some(v) = crate::machine::facts::kernel_module().into_iter().next() {
        return Some(v.version);
    }
    let nvml = nvml?;
    let mut buf = [0 as std::ffi::c_char; 96];
    // SAFETY: NVML was initialised; the buffer is larger than NVML's 80-byte limit.
    let r = unsafe { (nvml.nvmlSystemGetDriverVersion)(buf.as_mut_ptr(), buf.len() as u32) };
    // SAFETY: NVML wrote a NUL-terminated string into the buffer.
    (r == 0).then(|| unsafe { ffi::cstr(buf.as_ptr()) })
}

/// The driver's versions and GPUs, asked as every driver probe asks
/// (`machine::facts::driver::ask`) and recorded in its `Probe`; NVML (else
/// the kernel module) for the version and the GPUs `CUDA_VISIBLE_DEVICES`
/// hides. The GPUs go to verify's `devices` only.
pub(super) fn driver_facts(
    d: &Driver,
    nvml: Option<&Nvml>,
    driver: &mut host_driver::Probe,
    devices: &mut Vec<DeviceFacts>,
) {
    driver.version = driver_version_string(nvml);
    driver.gpus_present = nvml
        .and_then(|n| {
            let mut c = 0;
            // SAFETY: NVML is initialised.
            (unsafe { (n.nvmlDeviceGetCount_v2)(&mut c) } == 0).then_some(c)
        })
        .or_else(crate::machine::facts::gpus_present);
    stage("cuInit");
    let asked = host_driver::ask(d);
    driver.driver_api = asked.driver_api;
    driver.init_error = asked.failed;
    devices.extend(asked.gpus.iter().map(device_facts));
}

/// A GPU the driver listed, as verify reports it.
fn device_facts(g: &Gpu) -> DeviceFacts {
    let cc = g
        .compute_capability
        .as_deref()
        .and_then(|c| c.parse::<crate::machine::compat::ComputeCapability>().ok())
        .map_or(0, |c| c.major * 10 + c.minor);
    DeviceFacts {
        index: g.index,
        name: g.name.clone(),
        cc,
        memory_bytes: g.memory_mib.unwrap_or(0) << 20,
        multiprocessors: g.multiprocessors.unwrap_or(0),
    }
}

/// Compute capability through the runtime, when the driver API gave none.
pub(super) fn runtime_cc(rt: &Runtime, dev: u32) -> u32 {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: attribute ids 75/76 are the compute capability; out-pointers to locals.
    unsafe {
        (rt.cudaDeviceGetAttribute)(&mut major, 75, dev as c_int);
        (rt.cudaDeviceGetAttribute)(&mut minor, 76, dev as c_int);
    }
    (major.max(0) * 10 + minor.max(0)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_versions() {
        assert_eq!(api_version(12040).to_string(), "12.4");
        assert_eq!(api_version(13000).to_string(), "13.0");
        assert_eq!(api_version(11080).to_string(), "11.8");
        assert_eq!(cudnn_version(8906).to_string(), "8.9.6");
        assert_eq!(cudnn_version(90100).to_string(), "9.1.0");
        assert_eq!(cudnn_version(91300).to_string(), "9.13.0");
        assert_eq!(cublaslt_version(130100), "13.1.0");
        // cuBLAS 11.4.1 from Debian bullseye's libcublaslt11 reports 11401.
        assert_eq!(cublaslt_version(11401), "11.4.1");
    }

    #[test]
    fn judges_library_origin_through_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("cuda-13.0/targets/x86_64-linux/lib");
        std::fs::create_dir_all(&real).unwrap();
        crate::os::symlink(
            Path::new("targets/x86_64-linux/lib"),
            &t.path().join("cuda-13.0/lib64"),
        )
        .unwrap();
        let lib = real.join("libcudart.so.13.0.96");
        std::fs::write(&lib, b"").unwrap();
        let other = t.path().join("stale");
        std::fs::create_dir_all(&other).unwrap();
        let dirs = vec![t.path().join("cuda-13.0/lib64")];
        assert_eq!(origin_of(Some(&lib), Some(&lib), &dirs), Origin::Version);
        let via_link = t.path().join("cuda-13.0/lib64/libcudart.so.13");
        assert_eq!(origin_of(Some(&via_link), None, &dirs), Origin::Version);
        assert_eq!(
            origin_of(Some(&other.join("libcudart.so.13")), None, &dirs),
            Origin::Outside
        );
        assert_eq!(origin_of(Some(&lib), Some(&lib), &[]), Origin::Unjudged);
    }
}
