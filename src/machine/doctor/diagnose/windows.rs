//! What Windows adds to the checks: PATH as its DLL search path, the
//! `CUDA_PATH_V*` variables, TensorFlow's native builds, the Visual C++
//! runtime.

use crate::machine::compat::{self, Framework};
use crate::machine::doctor::facts::{ActiveFacts, Facts, LibDir, WindowsFacts};
use crate::msg;
use crate::spec::Version;

use super::{Out, list, listed_before, v};

/// A Windows path as Windows compares them: without case, `/` as `\`,
/// without a trailing separator.
fn win_norm(p: &str) -> String {
    let p = p.replace('/', "\\").to_ascii_lowercase();
    let t = p.trim_end_matches('\\');
    if t.is_empty() { p } else { t.to_string() }
}

/// `CUDA_PATH_V11_2` → 11.2.
fn versioned_cuda_path_release(name: &str) -> Option<Version> {
    let (major, minor) = name.strip_prefix("CUDA_PATH_V")?.split_once('_')?;
    Some(Version::from_parts(&[
        major.parse().ok()?,
        minor.parse().ok()?,
    ]))
}

/// What Windows adds to the checks: its DLL search path (PATH, where another
/// toolkit's `bin` shadows the active stack's DLLs: CUDA 11.x all name their
/// runtime `cudart64_110.dll`), the `CUDA_PATH_V*` variables NVIDIA's
/// installer leaves behind, and Microsoft's Visual C++ runtime that
/// TensorFlow's import needs.
pub(super) fn windows_findings(f: &Facts, w: &WindowsFacts, o: &mut Out) {
    let active = f.active.as_ref().filter(|a| a.name != "system");
    path_findings(w, active, o);
    cuda_path_findings(w, active, o);
    tensorflow_findings(f, o);
    vc_runtime_findings(f, w, o);
}

/// The DLL directories on PATH other than the active version's and
/// System32: with an active version, those that shadow its DLLs or add to
/// them; without one, several toolkits' CUDA runtimes.
fn path_findings(w: &WindowsFacts, active: Option<&ActiveFacts>, o: &mut Out) {
    let active_dirs: Vec<String> = w.active_bin_dirs.iter().map(|d| win_norm(d)).collect();
    let is_active = |d: &str| active_dirs.contains(&win_norm(d));
    let first_active = w.path.iter().position(|d| is_active(d));
    let system = w.system_dir.as_deref().map(win_norm);
    let active_dlls: Vec<String> = w
        .active_dlls
        .iter()
        .map(|l| l.to_ascii_lowercase())
        .collect();
    let others: Vec<&LibDir> = w
        .dll_dirs
        .iter()
        .filter(|d| !is_active(&d.dir) && system.as_deref() != Some(win_norm(&d.dir).as_str()))
        .collect();
    match active.filter(|_| !w.active_bin_dirs.is_empty()) {
        Some(a) => {
            for d in &others {
                path_shadow_findings(d, a, &active_dlls, first_active, o);
            }
        }
        None => {
            let runtimes: Vec<&str> = others
                .iter()
                .filter(|d| {
                    d.libs
                        .iter()
                        .any(|l| l.to_ascii_lowercase().starts_with("cudart64_"))
                })
                .map(|d| d.dir.as_str())
                .collect();
            if runtimes.len() > 1 {
                o.warn(
                    "path-copies",
                    msg!("doctor-win-path-copies", dirs = runtimes.join(", ")),
                    msg!("doctor-win-path-copies-fix"),
                );
            }
        }
    }
}

/// One DLL directory on PATH against the active version's DLLs: before it
/// with the same names, it shadows them (an error); names it lacks are a
/// warning.
fn path_shadow_findings(
    d: &LibDir,
    a: &ActiveFacts,
    active_dlls: &[String],
    first_active: Option<usize>,
    o: &mut Out,
) {
    let (shadowed, extra): (Vec<&str>, Vec<&str>) = d
        .libs
        .iter()
        .map(String::as_str)
        .partition(|l| active_dlls.contains(&l.to_ascii_lowercase()));
    let before = listed_before(d.position, first_active);
    if before && !shadowed.is_empty() {
        o.error(
            "path-shadow",
            msg!("doctor-win-path-shadow", dir = d.dir, name = a.name, libs => list(&shadowed)),
            msg!("doctor-win-path-shadow-fix", dir = d.dir),
        );
    } else if !extra.is_empty() {
        o.warn(
            "path-extra",
            msg!("doctor-win-path-extra", dir = d.dir, name = a.name, libs => list(&extra)),
            msg!("doctor-win-path-extra-fix", dir = d.dir),
        );
    }
}

/// `CUDA_PATH_V<major>_<minor>`: one naming a missing tree or a tree of
/// another release, or the active release's pointing elsewhere than the
/// active version, is stale; the rest are listed as fine.
fn cuda_path_findings(w: &WindowsFacts, active: Option<&ActiveFacts>, o: &mut Out) {
    let active_release = active
        .and_then(|a| a.cuda.as_deref())
        .and_then(v)
        .map(|c| c.truncate(2));
    let active_home = active.and_then(|a| a.cuda_home.as_deref());
    let mut fine = Vec::new();
    for p in &w.cuda_path_versions {
        let named = versioned_cuda_path_release(&p.name);
        let tree = p.cuda.as_deref().and_then(v).map(|c| c.truncate(2));
        let fix = || msg!("doctor-win-cuda-path-remove-fix", var = p.name);
        if !p.exists {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-missing",
                    var = p.name,
                    value = p.value
                ),
                fix(),
            );
        } else if let (Some(n), Some(t)) = (&named, &tree)
            && n != t
        {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-other-release",
                    var = p.name,
                    value = p.value,
                    named = n,
                    tree = t
                ),
                fix(),
            );
        } else if let (Some(n), Some(ar), Some(a)) = (&named, &active_release, active)
            && n == ar
            && active_home.map(win_norm) != Some(win_norm(&p.value))
        {
            o.warn(
                "cuda-path-stale",
                msg!(
                    "doctor-win-cuda-path-not-active",
                    var = p.name,
                    value = p.value,
                    name = a.name
                ),
                msg!(
                    "doctor-win-cuda-path-not-active-fix",
                    var = p.name,
                    name = a.name
                ),
            );
        } else {
            fine.push(p.name.as_str());
        }
    }
    if !fine.is_empty() {
        o.ok(
            "cuda-path",
            msg!("doctor-win-cuda-path-ok", vars = fine.join(", ")),
        );
    }
}

/// TensorFlow after 2.10: no GPU on native Windows.
fn tensorflow_findings(f: &Facts, o: &mut Out) {
    for fw in f.python.iter().flat_map(|p| &p.frameworks) {
        let Some(version) = (fw.framework == Framework::Tensorflow)
            .then(|| v(fw.version.split('+').next().unwrap_or(&fw.version)))
            .flatten()
        else {
            continue;
        };
        if let Err(e @ crate::Error::Machine(crate::error::MachineError::NoNativeWindowsGpu { .. })) =
            compat::framework::requirement(Framework::Tensorflow, &version, "windows")
            && let Some(fix) = e.hint_msg()
        {
            o.warn(
                "tensorflow-windows",
                msg!("doctor-win-tensorflow-no-gpu", version = fw.version),
                fix,
            );
        }
    }
}

/// The Visual C++ runtime's DLLs: missing ones are an error when TensorFlow,
/// whose import needs them, is installed, else a warning.
fn vc_runtime_findings(f: &Facts, w: &WindowsFacts, o: &mut Out) {
    let missing: Vec<&str> = w
        .vc_runtime
        .iter()
        .filter(|d| d.found.is_none())
        .map(|d| d.name.as_str())
        .collect();
    if w.vc_runtime.is_empty() {
        return;
    }
    if missing.is_empty() {
        let mut dirs: Vec<&str> = w
            .vc_runtime
            .iter()
            .filter_map(|d| d.found.as_deref())
            .collect();
        dirs.dedup();
        o.ok(
            "vc-runtime",
            msg!("doctor-win-vc-runtime-ok", dirs = dirs.join(", ")),
        );
        return;
    }
    let tensorflow = f.python.as_ref().is_some_and(|p| {
        p.frameworks
            .iter()
            .any(|fw| fw.framework == Framework::Tensorflow)
    });
    let message = msg!("doctor-win-vc-runtime-missing", dlls => list(&missing));
    let fix = msg!("doctor-win-vc-runtime-missing-fix");
    if tensorflow {
        o.error("vc-runtime", message, fix);
    } else {
        o.warn("vc-runtime", message, fix);
    }
}

#[cfg(test)]
mod tests {
    //! Windows' findings from a Windows fact set (tests/fixtures/doctor/
    //! windows-tf210.json: TensorFlow 2.10 pinned to 11.2+cudnn8.1, NVIDIA's
    //! CUDA 11.8 installer's bin first on PATH, a stale CUDA_PATH_V11_2,
    //! msvcp140_1.dll missing), each changed one way at a time.

    use super::super::{Finding, Level, diagnose};
    use super::*;
    use crate::machine::doctor::facts::{RuntimeDll, VersionedCudaPath};

    fn facts() -> Facts {
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/doctor/windows-tf210.json"
        )))
        .unwrap()
    }

    fn win(f: &mut Facts) -> &mut WindowsFacts {
        f.windows.as_mut().unwrap()
    }

    fn codes(f: &Facts) -> Vec<(Level, String)> {
        diagnose(f)
            .into_iter()
            .map(|x| (x.level, x.code.into_owned()))
            .collect()
    }

    fn find(f: &Facts, code: &str) -> Option<Finding> {
        diagnose(f).into_iter().find(|x| x.code == code)
    }

    #[test]
    fn the_windows_fact_set() {
        let f = facts();
        assert_eq!(f.driver_os(), compat::DriverOs::Windows);
        let found = diagnose(&f);
        let c = codes(&f);
        for want in [
            (Level::Ok, "driver"),
            (Level::Ok, "driver-fit"),
            (Level::Error, "path-shadow"),
            (Level::Warning, "cuda-path-stale"),
            (Level::Ok, "cuda-path"),
            (Level::Error, "vc-runtime"),
            (Level::Warning, "not-activated"),
        ] {
            assert!(
                c.contains(&(want.0, want.1.to_string())),
                "{want:?} in {found:#?}"
            );
        }
        // Windows has no /dev/nvidia*, and nvcuda.dll is in System32.
        for absent in ["device-nodes", "libcuda-missing", "nvcuda-missing"] {
            assert!(found.iter().all(|x| x.code != absent), "{found:#?}");
        }
        let driver = find(&f, "driver").unwrap();
        assert!(driver.message.en().contains("546.33 (from nvidia-smi)"));
        let shadow = find(&f, "path-shadow").unwrap();
        assert!(
            shadow.message.en().contains(r"CUDA\v11.8\bin on PATH"),
            "{shadow:?}"
        );
        assert!(
            shadow.message.en().contains("cudart64_110.dll"),
            "{shadow:?}"
        );
        let stale = find(&f, "cuda-path-stale").unwrap();
        assert!(
            stale.message.en().starts_with("CUDA_PATH_V11_2="),
            "{stale:?}"
        );
        assert!(
            stale.fix[0]
                .en()
                .contains("SetEnvironmentVariable('CUDA_PATH_V11_2', $null, 'User')")
        );
        let vc = find(&f, "vc-runtime").unwrap();
        assert!(vc.message.en().contains("msvcp140_1.dll"), "{vc:?}");
        assert!(vc.message.en().contains("not about CUDA"), "{vc:?}");
        assert!(vc.fix[0].en().contains("vc_redist.x64.exe"));
        // The fixes speak Windows.
        let not_activated = find(&f, "not-activated").unwrap().fix[0].en();
        assert!(
            not_activated.contains("cudaenv init pwsh"),
            "{not_activated}"
        );
        assert!(!not_activated.contains("init bash"), "{not_activated}");
    }

    #[test]
    fn activated_first_on_path_nothing_is_shadowed() {
        let mut f = facts();
        let active_bin = win(&mut f).active_bin_dirs[0].clone();
        let w = win(&mut f);
        w.path.insert(0, active_bin.to_uppercase() + "\\");
        for d in &mut w.dll_dirs {
            d.position = d.position.map(|p| p + 1);
        }
        let c = codes(&f);
        assert!(!c.iter().any(|(_, code)| code == "path-shadow"), "{c:?}");
        // Its DLLs that the active stack lacks (nvrtc) are still worth a word.
        let extra = find(&f, "path-extra").unwrap();
        assert_eq!(extra.level, Level::Warning);
        assert!(
            extra.message.en().contains("nvrtc64_112_0.dll"),
            "{extra:?}"
        );
    }

    #[test]
    fn without_an_active_version_several_toolkits_on_path_are_named() {
        let mut f = facts();
        f.active = None;
        let w = win(&mut f);
        w.active_bin_dirs.clear();
        w.active_dlls.clear();
        let mut second = w.dll_dirs[0].clone();
        second.dir = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2\bin".into();
        second.position = Some(1);
        w.dll_dirs.push(second);
        let copies = find(&f, "path-copies").unwrap();
        assert_eq!(copies.level, Level::Warning);
        assert!(
            copies.message.en().contains(r"v11.8\bin, C:\Program Files"),
            "{copies:?}"
        );
    }

    #[test]
    fn cuda_path_variables() {
        let tree = |name: &str, value: &str, cuda: Option<&str>| VersionedCudaPath {
            name: name.into(),
            value: value.into(),
            exists: true,
            cuda: cuda.map(str::to_string),
        };
        let mut f = facts();
        // A CUDA_PATH_V11_2 that names an 11.8 tree.
        win(&mut f).cuda_path_versions =
            vec![tree("CUDA_PATH_V11_2", r"C:\CUDA\v11.8", Some("11.8.89"))];
        let x = find(&f, "cuda-path-stale").unwrap();
        assert!(
            x.message
                .en()
                .contains("a CUDA 11.8 tree: builds that ask for CUDA 11.2 get 11.8"),
            "{x:?}"
        );
        // The active release's variable elsewhere than the active version.
        win(&mut f).cuda_path_versions =
            vec![tree("CUDA_PATH_V11_2", r"C:\CUDA\v11.2", Some("11.2.2"))];
        let x = find(&f, "cuda-path-stale").unwrap();
        assert!(
            x.message
                .en()
                .contains("the active version of that release is 11.2.2+cudnn8.1.1.33"),
            "{x:?}"
        );
        assert!(x.fix[0].en().contains("cudaenv exec"));
        // Pointing at the active version (activation set it): fine.
        let home = f.active.as_ref().unwrap().cuda_home.clone().unwrap();
        win(&mut f).cuda_path_versions = vec![tree(
            "CUDA_PATH_V11_2",
            &home.to_lowercase(),
            Some("11.2.2"),
        )];
        assert!(find(&f, "cuda-path-stale").is_none());
        assert_eq!(find(&f, "cuda-path").unwrap().level, Level::Ok);
    }

    #[test]
    fn the_visual_cpp_runtime() {
        let mut f = facts();
        for d in &mut win(&mut f).vc_runtime {
            d.found = Some(r"C:\Windows\System32".into());
        }
        let ok = find(&f, "vc-runtime").unwrap();
        assert_eq!(ok.level, Level::Ok);
        assert!(
            ok.message.en().contains(r"(in C:\Windows\System32)"),
            "{ok:?}"
        );
        // Missing without TensorFlow: a warning, not an error.
        let mut f = facts();
        f.python = None;
        win(&mut f).vc_runtime.push(RuntimeDll {
            name: "vcruntime140_1.dll".into(),
            found: None,
        });
        assert_eq!(find(&f, "vc-runtime").unwrap().level, Level::Warning);
    }

    #[test]
    fn tensorflow_after_2_10_on_native_windows() {
        let mut f = facts();
        let tf = &mut f.python.as_mut().unwrap().frameworks[0];
        tf.version = "2.15.1".into();
        tf.cuda = Some("12.2".into());
        let x = find(&f, "tensorflow-windows").unwrap();
        assert_eq!(x.level, Level::Warning);
        assert!(x.message.en().contains("tensorflow 2.15.1"), "{x:?}");
        let fix = x.fix[0].en();
        assert!(
            fix.contains("WSL2") && fix.contains("cudaenv install 11.2+cudnn8.1"),
            "{fix}"
        );
        // 2.10 has its Windows build: nothing to say.
        assert!(find(&facts(), "tensorflow-windows").is_none());
    }

    /// No driver on Windows: said in Windows' terms (no /proc, no libcuda.so.1).
    #[test]
    fn no_driver_on_windows() {
        let mut f = facts();
        f.host.driver_versions.clear();
        f.host.nvidia_smi = None;
        win(&mut f).nvcuda = None;
        let x = find(&f, "no-driver").unwrap();
        assert_eq!(x.level, Level::Warning);
        assert!(x.message.en().contains("nvcuda.dll"), "{x:?}");
        assert!(!x.message.en().contains("/proc"), "{x:?}");
        assert!(!x.fix[0].en().contains("--gpus"));
        // nvcuda.dll without nvidia-smi: a driver of unknown version, not none.
        win(&mut f).nvcuda = Some(r"C:\Windows\System32\nvcuda.dll".into());
        assert!(find(&f, "no-driver").is_none());
        assert_eq!(find(&f, "driver").unwrap().level, Level::Ok);
    }

    /// The driver from nvidia-smi.exe and nvcuda.dll: the DLL missing while
    /// nvidia-smi answers is an error; a Linux fact set has no Windows findings.
    #[test]
    fn the_drivers_dll() {
        let mut f = facts();
        win(&mut f).nvcuda = None;
        assert_eq!(find(&f, "nvcuda-missing").unwrap().level, Level::Error);
        let mut f = facts();
        f.windows = None;
        f.host.platform.os = "linux".into();
        for code in ["path-shadow", "cuda-path-stale", "vc-runtime"] {
            assert!(find(&f, code).is_none(), "{code}");
        }
    }
}
