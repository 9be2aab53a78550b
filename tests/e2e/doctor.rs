//! `doctor`, `compat`, `explain` and `local --for`, run for real: on a machine
//! without an NVIDIA driver (CI) the report must say so cleanly, and broken
//! setups built in the temporary root must be diagnosed with their fix.

use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, json};

fn finding<'a>(report: &'a Value, code: &str) -> Option<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
}

/// A linked version `name` whose tree holds `lib64/<libs>` (empty files: doctor only reads names).
fn fake_version(t: &TestEnv, name: &str, cuda: &str, libs: &[&str]) -> std::path::PathBuf {
    let tree = t.path(&format!("trees/{name}"));
    std::fs::create_dir_all(tree.join("lib64")).unwrap();
    for l in libs {
        std::fs::write(tree.join("lib64").join(l), b"").unwrap();
    }
    let meta = t.root.join("versions").join(name).join(".cudaenv");
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(
        meta.join("meta.toml"),
        format!(
            "schema = 1\nkind = \"linked\"\ncuda = \"{cuda}\"\nprefix = \"{}\"\nbin_dirs = [\"bin\"]\nlib_dirs = [\"lib64\"]\nhome = \".\"\nsource = \"link\"\ncreated = 0\n",
            tree.display()
        ),
    )
    .unwrap();
    std::fs::write(meta.join("complete"), b"").unwrap();
    tree
}

#[test]
#[cfg_attr(
    not(cudaenv_has_driver),
    ignore = "this machine has no NVIDIA driver (libcuda.so.1): the test checks what doctor says of one"
)]
fn doctor_runs_for_real_and_finds_the_driver() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .output()
        .unwrap();
    let report = json(&out);
    // The driver's version may be unreadable (a container without /proc's
    // driver files); that libcuda.so.1 loads is what the cfg promises.
    assert_eq!(report["facts"]["libcuda"]["loaded"], true, "{report:#}");
    assert_eq!(finding(&report, "driver").unwrap()["level"], "ok");
}

#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn doctor_runs_for_real_and_a_machine_without_driver_is_not_an_error() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .output()
        .unwrap();
    let report = json(&out);
    assert!(
        report["facts"]["driver_versions"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{report:#}"
    );
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    let f = finding(&report, "no-driver").expect("the report says there is no driver");
    assert_eq!(f["level"], "warning");
    assert_eq!(report["summary"]["errors"], 0);
    assert_eq!(report["facts"]["libcuda"]["loaded"], false);
    assert!(
        report["facts"]["libcuda"]["load_error"]
            .as_str()
            .unwrap()
            .contains("libcuda.so.1")
    );
    assert!(
        finding(&report, "active").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("system")
    );

    let out = t.cmd().args(["doctor", "--no-python"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("no NVIDIA driver found"), "{text}");
    assert!(text.ends_with("0 errors, 1 warning\n"), "{text}");
    assert!(!text.contains('\u{1b}'), "NO_COLOR is set: no escape codes");
}

#[test]
fn doctor_finds_a_shadowing_library_dir_and_hidden_gpus() {
    let t = TestEnv::new();
    let tree = fake_version(
        &t,
        "12.4",
        "12.4.1",
        &["libcudart.so.12", "libcublas.so.12"],
    );
    let stray = t.path("stray dir/lib");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(stray.join("libcudart.so.12"), b"").unwrap();
    std::fs::write(stray.join("libcudnn.so.8"), b"").unwrap();
    let ld = format!("{}:{}", stray.display(), tree.join("lib64").display());
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .env("CUDAENV_VERSION", "12.4")
        .env("CUDAENV_ACTIVE", "12.4")
        .env("LD_LIBRARY_PATH", &ld)
        .env("CUDA_VISIBLE_DEVICES", "-1")
        .env("CUDA_HOME", "/usr/local/cuda-11.8")
        .output()
        .unwrap();
    let report = json(&out);
    assert_eq!(
        out.status.code(),
        Some(16),
        "doctor exits DoctorErrors: {report:#}"
    );
    let shadow = finding(&report, "ld-shadow").expect("ld-shadow");
    assert_eq!(shadow["level"], "error");
    assert!(
        shadow["message"]
            .as_str()
            .unwrap()
            .contains("stray dir/lib")
    );
    assert!(
        shadow["message"]
            .as_str()
            .unwrap()
            .contains("libcudart.so.12")
    );
    assert!(shadow["fix"].as_str().unwrap().contains("remove"));
    let cvd = finding(&report, "visible-devices").expect("visible-devices");
    assert!(cvd["message"].as_str().unwrap().contains("hides every GPU"));
    assert!(
        finding(&report, "cuda-home").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("/usr/local/cuda-11.8")
    );
    assert_eq!(report["facts"]["active"]["name"], "12.4");

    // Fixed: the stray directory gone, the GPUs visible again.
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .env("CUDAENV_VERSION", "12.4")
        .env("CUDAENV_ACTIVE", "12.4")
        .env("LD_LIBRARY_PATH", tree.join("lib64"))
        .output()
        .unwrap();
    let report = json(&out);
    assert!(finding(&report, "ld-shadow").is_none(), "{report:#}");
    assert!(finding(&report, "visible-devices").is_none());
}

#[test]
fn doctor_reports_a_pin_to_a_missing_version() {
    let t = TestEnv::new();
    std::fs::write(t.home.join(".cuda-version"), "12.4+cudnn9\n").unwrap();
    let out = t.cmd().args(["doctor", "--no-python"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(16), "{text}");
    assert!(text.contains("active-missing"), "{text}");
    assert!(text.contains("cudaenv install"), "{text}");
}

/// A stand-in interpreter: answers the sysconfig probe with a site-packages we build.
fn fake_python(t: &TestEnv, site: &Path) -> std::path::PathBuf {
    let py = t.path("bin/python3");
    std::fs::create_dir_all(py.parent().unwrap()).unwrap();
    std::fs::write(
        &py,
        format!(
            "#!/bin/sh\necho 3.11.7\necho '{0}'\necho '{0}'\n",
            site.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

fn install_dist(site: &Path, name: &str, version: &str) {
    let d = site.join(format!("{name}-{version}.dist-info"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"),
    )
    .unwrap();
}

#[test]
fn compat_and_local_for_use_the_installed_framework() {
    let t = TestEnv::new();
    let site = t.path("site-packages");
    install_dist(&site, "torch", "2.4.1+cu118");
    std::fs::create_dir_all(site.join("torch")).unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        "cuda: Optional[str] = '11.8'\n",
    )
    .unwrap();
    let py = fake_python(&t, &site);

    let out = t
        .cmd()
        .args(["compat", "torch", "--json"])
        .env("CUDAENV_PYTHON", &py)
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        r["version"], "2.4.1",
        "the release's own wheel metadata answers"
    );
    assert_eq!(r["installed"]["version"], "2.4.1+cu118");
    assert_eq!(
        r["choice"]["spec"], "11.8+cudnn9.1",
        "the installed build's CUDA decides: {r:#}"
    );

    let proj = t.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let out = t
        .cmd()
        .current_dir(&proj)
        .args(["local", "--for", "torch"])
        .env("CUDAENV_PYTHON", &py)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(proj.join(".cuda-version"))
            .unwrap()
            .trim(),
        "11.8+cudnn9.1"
    );

    // Without the framework installed, a bare name is an error that says what to do.
    let empty = t.path("empty-site");
    std::fs::create_dir_all(&empty).unwrap();
    let py2 = fake_python(&t, &empty);
    let out = t
        .cmd()
        .args(["compat", "tensorflow"])
        .env("CUDAENV_PYTHON", &py2)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tensorflow==VERSION"));
}

#[test]
fn compat_and_local_for_named_releases() {
    let t = TestEnv::new();
    for (req, spec) in [
        ("tensorflow==2.10", "11.2+cudnn8.1"),
        // From the wheels' metadata: the NCCL / cuSPARSELt they pin come along.
        ("tensorflow==2.16.1", "12.3+cudnn8.9+nccl2.19"),
        ("torch==2.4", "12.1+cudnn9.1+nccl2.20"),
        ("torch==2.7", "12.6+cudnn9.5+nccl2.26+cusparselt0.6"),
        ("torch==2.7+cu118", "11.8+cudnn9.1"),
        ("torch==2.0.1", "11.7+cudnn8.5+nccl2.14"),
        ("torch==1.12", "11.3+cudnn8.3"),
        ("jax==0.4.30", "12+cudnn9+nccl2"),
        ("jax==0.4.30+cu124", "12.4+cudnn9+nccl2"),
        ("cupy-cuda12x==12.2.0", "12"),
        ("tensorflow==2.14.0", "11.8+cudnn8.7+nccl2.16"),
    ] {
        let out = t.cmd().args(["compat", req, "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{req}");
        assert_eq!(json(&out)["choice"]["spec"], spec, "{req}");
        let dir = t.home.join(req.replace(['=', '+'], "_"));
        std::fs::create_dir_all(&dir).unwrap();
        let out = t
            .cmd()
            .current_dir(&dir)
            .args(["local", "--for", req])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{req}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(spec) && err.contains("not installed yet"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(".cuda-version"))
                .unwrap()
                .trim(),
            spec
        );
    }
    let out = t.cmd().args(["compat", "torch==2.13"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("unconfirmed"));
    let out = t
        .cmd()
        .args(["compat", "tensorflow==2.12", "--platform", "windows"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&out.stderr).contains("WSL2"));
    let out = t.cmd().args(["compat", "torch==0.1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    let out = t.cmd().args(["compat", "numpy==1.0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = t
        .cmd()
        .args(["local", "--for", "torch==2.4", "12.4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--for and a spec conflict");
}

#[test]
fn explain_answers_from_the_store() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .args(["explain", "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("provided by: CUDA 11.0–11.8"), "{text}");
    assert!(text.contains("no installed version provides it"), "{text}");
    assert!(text.contains("cudaenv install 11.8"), "{text}");

    fake_version(&t, "11.8.0", "11.8.0", &["libcudart.so.11.0"]);
    let mut child = t
        .cmd()
        .args(["explain", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"W dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let r = json(&out);
    assert_eq!(r[0]["id"], "missing-library");
    assert!(
        r[0]["installed"]
            .as_str()
            .unwrap()
            .starts_with("yes: 11.8.0"),
        "{r:#}"
    );
    assert_eq!(r[0]["fix"][0], "cudaenv local 11.8.0");

    let out = t.cmd().args(["explain", "my own bug"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not recognise"));
}

#[test]
fn install_for_plans_the_frameworks_stack() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .args([
            "install",
            "--for",
            "tensorflow==2.10",
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("tensorflow==2.10: 11.2+cudnn8.1"), "{err}");
    let plan = json(&out);
    assert!(
        plan["cuda"].as_str().unwrap().starts_with("11.2"),
        "{plan:#}"
    );
    assert!(
        plan["cudnn"].as_str().unwrap().starts_with("8.1"),
        "{plan:#}"
    );
    assert!(
        !t.root.join("versions").exists()
            || std::fs::read_dir(t.root.join("versions")).unwrap().count() == 0,
        "a dry run installs nothing"
    );

    let out = t
        .cmd()
        .args(["install", "--for", "numpy==1.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = t
        .cmd()
        .args(["install", "12.4", "--for", "torch==2.4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--for and a spec conflict");
}

/// The facts gathered on the GPU machine (one H200, driver 580.159.04, CUDA 13.0
/// linked), clean and broken on purpose, diagnosed again by today's rules.
#[test]
fn doctor_rediagnoses_the_facts_recorded_on_the_gpu_machine() {
    let t = TestEnv::new();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/doctor/");
    let out = t
        .cmd()
        .args(["doctor", "--json", "--facts"])
        .arg(format!("{fixtures}h200-clean.json"))
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(out.status.code(), Some(0), "{r:#}");
    assert_eq!(r["summary"]["errors"], 0);
    assert!(
        finding(&r, "gpus").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("sm_90, Hopper")
    );
    assert!(
        finding(&r, "libcuda-compat").is_none(),
        "the container's own libcuda is fine"
    );

    let out = t
        .cmd()
        .args(["doctor", "--facts"])
        .arg(format!("{fixtures}h200-broken.json"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(16), "{text}");
    assert!(
        text.contains("ld-shadow") && text.contains("/tmp/stray/lib"),
        "{text}"
    );
    assert!(text.contains("visible-devices"), "{text}");

    std::fs::write(t.path("bad.json"), "{\"facts\": 3}").unwrap();
    let out = t
        .cmd()
        .args(["doctor", "--facts"])
        .arg(t.path("bad.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json"));
}

/// A Windows fact set (made for the test, in the shape `doctor --json`
/// gathers on Windows): the Windows findings and exit 16 on this machine.
#[test]
fn doctor_diagnoses_a_windows_fact_set() {
    let t = TestEnv::new();
    let facts = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/doctor/windows-tf210.json"
    );
    let out = t
        .cmd()
        .args(["doctor", "--json", "--facts", facts])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(out.status.code(), Some(16), "{r:#}");
    assert_eq!(r["summary"]["errors"], 2, "{r:#}");
    for (code, level) in [
        ("path-shadow", "error"),
        ("vc-runtime", "error"),
        ("cuda-path-stale", "warning"),
        ("driver", "ok"),
    ] {
        let f = finding(&r, code).unwrap_or_else(|| panic!("no {code}: {r:#}"));
        assert_eq!(f["level"], level, "{f:#}");
    }
    assert!(finding(&r, "device-nodes").is_none(), "{r:#}");
    assert_eq!(
        r["facts"]["windows"]["cuda_path_versions"][0]["name"],
        "CUDA_PATH_V11_2"
    );
}

/// A stand-in `nvidia-smi` first on PATH: prints a banner, then runs `rest`.
fn fake_smi(t: &TestEnv, rest: &str) -> String {
    let bin = t.path("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\necho '| NVIDIA-SMI 580.95.05    Driver Version: 580.95.05    CUDA Version: 13.0 |'\n{rest}\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
}

/// Issue #19, defect 3: a tool that exits but leaves a helper holding its
/// output pipe (`sleep 600 &`) made doctor wait as long as the helper lived.
/// The helper dies with the tool's process group; doctor reads the banner.
#[test]
fn a_child_cannot_hang_doctor_through_a_grandchild() {
    let t = TestEnv::new();
    let path = fake_smi(&t, "sleep 600 &\nexit 0");
    let started = std::time::Instant::now();
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .env("PATH", path)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed.as_secs() < 15, "doctor took {elapsed:?}");
    let report = json(&out);
    let smi = &report["facts"]["nvidia_smi"];
    assert_eq!(smi["driver_version"], "580.95.05", "{smi:#}");
    assert_eq!(smi["cuda_version"], "13.0", "{smi:#}");
    assert!(smi["error"].is_null(), "{smi:#}");
}

/// Issue #19, defect 3, the other half: a helper outside the tool's process
/// group (it called `setsid`, so the group kill misses it) keeps the pipe
/// open. Doctor gives up at the tool's deadline (20 s) and reports it as
/// timed out instead of waiting for the helper's 600 s.
#[test]
fn a_child_cannot_hang_doctor_past_its_deadline() {
    let t = TestEnv::new();
    let pidfile = t.path("helper.pid");
    let path = fake_smi(
        &t,
        &format!(
            "setsid sh -c 'echo $$ > {p}; exec sleep 600' &\nwhile [ ! -s {p} ]; do sleep 0.01; done\nexit 0",
            p = pidfile.display()
        ),
    );
    let started = std::time::Instant::now();
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .env("PATH", path)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        // SAFETY: the helper this test's stand-in started.
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    }
    assert!(elapsed.as_secs() < 40, "doctor took {elapsed:?}");
    let report = json(&out);
    let smi = &report["facts"]["nvidia_smi"];
    assert_eq!(smi["error"], "did not finish within 20 s", "{smi:#}");
}

/// doctor's driver probe goes through the driver binding `verify` uses: a
/// stand-in `libcuda.so.1` with one H200 is read whole (version, name,
/// compute capability, memory) and its file is named.
#[test]
fn doctor_reads_the_driver_through_the_shared_binding() {
    let t = TestEnv::new();
    let lib = t.path("driver");
    std::fs::create_dir_all(&lib).unwrap();
    crate::common::cc_shared(
        &lib.join("libcuda.so.1"),
        "libcuda.so.1",
        "#include <string.h>\n#include <stddef.h>\n\
         int cuInit(unsigned f) { return 0; }\n\
         int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n\
         int cuDeviceGetCount(int *n) { *n = 1; return 0; }\n\
         int cuDeviceGet(int *d, int i) { *d = i; return 0; }\n\
         int cuDeviceGetName(char *s, int len, int d) { strncpy(s, \"NVIDIA H200\", len); return 0; }\n\
         int cuDeviceGetAttribute(int *v, int a, int d) { *v = a == 75 ? 9 : 0; return 0; }\n\
         int cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)143771 << 20; return 0; }\n\
         int cuGetErrorName(int e, const char **s) { *s = \"CUDA_ERROR_UNKNOWN\"; return 0; }\n",
    );
    let out = t
        .cmd()
        .args(["doctor", "--json", "--no-python"])
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let report = json(&out);
    let cuda = &report["facts"]["libcuda"];
    assert_eq!(cuda["loaded"], true, "{cuda:#}");
    assert_eq!(cuda["driver_api"], 13000, "{cuda:#}");
    assert_eq!(
        cuda["path"],
        lib.join("libcuda.so.1").display().to_string(),
        "{cuda:#}"
    );
    let gpu = &cuda["gpus"][0];
    assert_eq!(gpu["name"], "NVIDIA H200", "{cuda:#}");
    assert_eq!(gpu["compute_capability"], "9.0", "{cuda:#}");
    assert_eq!(gpu["memory_mib"], 143771, "{cuda:#}");
}

/// The stack `--for` takes from a release's wheel metadata, carried through:
/// `install --for jax==0.4.30` plans CUDA 12.4 (the newest the target
/// driver fully supports, in the plugin's `>=12.1` range), the newest cuDNN 9
/// and NCCL 2 (the plugin's `nvidia-nccl-cu12>=2.18.1`); `local --for` pins
/// the same, `lock` locks the NCCL wheel beside the toolkit's and cuDNN's, and
/// `export pip-constraints` pins it for pip. All against a loopback index
/// whose pages list the three projects (nothing is downloaded: the plan and
/// the lock need only the index).
#[test]
fn the_wheel_metadata_stack_is_planned_pinned_locked_and_exported() {
    let t = TestEnv::new();
    let index = crate::nvidia::Mirror::start(t.path("index"));
    let arch = std::env::consts::ARCH;
    for (project, file) in [
        (
            "nvidia-cuda-runtime-cu12",
            "nvidia_cuda_runtime_cu12-12.4.127",
        ),
        ("nvidia-cudnn-cu12", "nvidia_cudnn_cu12-9.1.0.70"),
        ("nvidia-nccl-cu12", "nvidia_nccl_cu12-2.18.1"),
        ("nvidia-nccl-cu12", "nvidia_nccl_cu12-2.21.5"),
    ] {
        let name = format!("{file}-py3-none-manylinux2014_{arch}.whl");
        let page = format!("simple/{project}/index.html");
        let mut html = std::fs::read_to_string(t.path("index").join(&page)).unwrap_or_default();
        html.push_str(&format!(
            "<a href=\"../../packages/{name}#sha256={}\">{name}</a><br/>\n",
            "ab".repeat(32)
        ));
        index.put(&page, html.as_bytes());
    }
    let only_cudart = crate::pypi::ONLY_CUDART;
    let vars = [
        ("CUDAENV_PYPI_INDEX", format!("{}/simple", index.url())),
        ("CUDAENV_TARGET_DRIVER", "550.54.15".to_string()),
    ];
    let run = |cwd: &Path, args: &[&str]| {
        t.cmd()
            .current_dir(cwd)
            .envs(vars.iter().map(|(k, v)| (k, v)))
            .args(args)
            .output()
            .unwrap()
    };

    let out = run(
        &t.home,
        &[
            "install",
            "--for",
            "jax==0.4.30",
            only_cudart,
            "--dry-run",
            "--json",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("jax==0.4.30: 12.4+cudnn9+nccl2 (jax 0.4.30 asks for CUDA ≥ 12.1, < 13.0"),
        "{err}"
    );
    let plan = json(&out);
    assert_eq!(plan["name"], "12.4.1+cudnn9.1.0.70+nccl2.21.5", "{plan:#}");
    let files: Vec<&str> = plan["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file_name"].as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        files[2].starts_with("nvidia_nccl_cu12-2.21.5-"),
        "{files:?}"
    );

    let proj = t.home.join("jax-project");
    std::fs::create_dir_all(&proj).unwrap();
    let out = run(&proj, &["local", "--for", "jax==0.4.30"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(proj.join(".cuda-version"))
            .unwrap()
            .trim(),
        "12.4+cudnn9+nccl2"
    );
    let out = run(&proj, &["lock", only_cudart]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&proj, &["export", "pip-constraints"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pins = String::from_utf8_lossy(&out.stdout).into_owned();
    for pin in [
        "nvidia-cuda-runtime-cu12==12.4.127\n",
        "nvidia-cudnn-cu12==9.1.0.70\n",
        "nvidia-nccl-cu12==2.21.5\n",
    ] {
        assert!(pins.contains(pin), "{pins}");
    }
}
