//! The GPU architectures of an installed framework, read from a real NVIDIA
//! library: `libnvjpeg.so.12` from PyPI's `nvidia-nvjpeg-cu12` 12.0.0.28
//! (the smallest wheel found with a `.nv_fatbin`: 2,559,326 bytes, the
//! library 5,440,280; machine code for sm_50 … sm_90, PTX for sm_90), put
//! where torch keeps its kernels (`torch/lib/libtorch_cuda.so`) in a
//! virtual environment's layout. `doctor --target-arch` then answers for a
//! GPU it has machine code for, one it runs only by JIT-compiling the PTX,
//! and one it cannot run; a truncated copy is reported, not a crash.
//!
//! The same for Windows: `nvjpeg64_12.dll` from the same release's
//! `win_amd64` wheel (1,976,213 bytes; the DLL 3,682,816, its fatbinaries in
//! the PE section `.nv_fatb`), put where torch's Windows wheels keep theirs
//! (`torch/lib/torch_cuda.dll`).

use std::path::{Path, PathBuf};

use crate::common::*;

const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/dc/37/7959e889a712f31dc33ab5f26199f0a3db060a4ec606314fd179fb42e84f/nvidia_nvjpeg_cu12-12.0.0.28-py3-none-manylinux1_x86_64.whl";
const WHEEL_SHA256: &str = "1b750fc5b1e28811d6433dfcaf4138a34ed937c72646373991d091372bd15dcd";
const MEMBER: &str = "nvidia/nvjpeg/lib/libnvjpeg.so.12";

const WIN_WHEEL_URL: &str = "https://files.pythonhosted.org/packages/3f/e6/e405ae6e9db5ed89d21dd037c05c973073d572160d46e3aafbd3e72f95ea/nvidia_nvjpeg_cu12-12.0.0.28-py3-none-win_amd64.whl";
const WIN_WHEEL_SHA256: &str = "039c3a0c07cb6e8c08188b70f03fef510754beb47c1610fb43a6901c92e8f0f3";
const WIN_MEMBER: &str = "nvidia/nvjpeg/bin/nvjpeg64_12.dll";

/// A member of a real wheel, downloaded and checked against PyPI's sha256.
fn wheel_member(dir: &Path, url: &str, sha256: &str, member: &str, size: usize) -> Vec<u8> {
    let wheel = dir.join(url.rsplit('/').next().unwrap());
    let ok = std::process::Command::new("curl")
        .args(["-sSfL", "--retry", "3", "-o"])
        .arg(&wheel)
        .arg(url)
        .status()
        .unwrap();
    assert!(ok.success(), "downloading {url}");
    let bytes = std::fs::read(&wheel).unwrap();
    assert_eq!(crate::pypi::sha256(&bytes), sha256);
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut z.by_name(member).unwrap(), &mut out).unwrap();
    assert_eq!(out.len(), size);
    out
}

/// The real Linux library's bytes.
fn libnvjpeg(dir: &Path) -> Vec<u8> {
    wheel_member(dir, WHEEL_URL, WHEEL_SHA256, MEMBER, 5_440_280)
}

/// A venv whose `python3` answers doctor's probe, with torch 2.4.1+cu124
/// whose `libtorch_cuda.so` is `lib`.
fn venv_with_torch(t: &TestEnv, name: &str, lib: &[u8]) -> PathBuf {
    venv_with_torch_file(t, name, "libtorch_cuda.so", lib)
}

/// The same, with `lib` as `torch/lib/<file>`.
fn venv_with_torch_file(t: &TestEnv, name: &str, file: &str, lib: &[u8]) -> PathBuf {
    let prefix = t.path(name);
    let site = prefix.join("lib/python3.12/site-packages");
    let d = site.join("torch-2.4.1+cu124.dist-info");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("METADATA"),
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1+cu124\n\n",
    )
    .unwrap();
    std::fs::create_dir_all(site.join("torch/lib")).unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        "__version__ = '2.4.1+cu124'\ncuda: Optional[str] = '12.4'\n",
    )
    .unwrap();
    std::fs::write(site.join("torch/lib").join(file), lib).unwrap();
    let python = prefix.join("bin/python3");
    write_executable(
        &python,
        &format!("#!/bin/sh\necho 3.12.3\necho '{}'\n", site.display()),
    );
    python
}

/// The framework-arch lines of doctor's text output (with their fix lines).
fn arch_lines(out: &str) -> String {
    let mut keep = false;
    let mut s = String::new();
    for l in out.lines() {
        if !l.starts_with(' ') {
            keep = l.split_whitespace().nth(1) == Some("framework-arch");
        }
        if keep {
            s.push_str(l.trim_end());
            s.push('\n');
        }
    }
    s
}

#[test]
fn a_real_nvidia_librarys_architectures_against_target_gpus() {
    let t = TestEnv::new();
    let lib = libnvjpeg(t.tmp.path());
    let python = venv_with_torch(&t, "venv", &lib);
    let py = python.to_str().unwrap();
    let doctor = |arch: &str, lang: &str, json: bool| {
        let mut c = t.cmd();
        c.env("CUDAENV_PYTHON", py)
            .env("LANG", lang)
            .args(["doctor", "--target-arch", arch]);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let mut text = String::new();
    for (arch, level) in [
        ("sm_90", "ok"),
        ("sm_89", "ok"),
        ("sm_87", "ok"),
        ("sm_120", "warning"),
        ("sm_37", "error"),
    ] {
        for lang in ["C", "zh_CN.UTF-8"] {
            let o = doctor(arch, lang, false);
            let lines = arch_lines(&stdout(&o));
            assert!(!lines.is_empty(), "{}", text_of(&o));
            if lang == "C" {
                assert!(lines.starts_with(level), "{arch}: {lines}");
            }
            text.push_str(&format!(
                "$ LANG={lang} cudaenv doctor --target-arch {arch}\n{lines}"
            ));
        }
    }
    insta::assert_snapshot!("kernels_doctor_target_archs", text);

    // --json: the finding, and the facts it was drawn from.
    let o = doctor("sm_120", "C", true);
    let v = json(&o);
    let findings: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "framework-arch")
        .cloned()
        .collect();
    let torch = v["facts"]["python"]["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["package"] == "torch")
        .unwrap()
        .clone();
    assert_eq!(
        torch["kernels"][0]["sass"],
        serde_json::json!([
            "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0"
        ])
    );
    assert_eq!(torch["kernels"][0]["ptx"], serde_json::json!(["9.0"]));
    insta::assert_json_snapshot!(
        "kernels_doctor_json",
        serde_json::json!({"findings": findings, "kernels": torch["kernels"]})
    );

    // The same library cut short: a finding naming it, and doctor carries on.
    let cut = venv_with_torch(&t, "venv-cut", &lib[..lib.len() / 2]);
    let o = t
        .cmd()
        .env("CUDAENV_PYTHON", &cut)
        .env("LANG", "C")
        .args(["doctor", "--target-arch", "sm_90"])
        .output()
        .unwrap();
    let lines = arch_lines(&stdout(&o));
    insta::assert_snapshot!("kernels_doctor_truncated", lines);
    assert!(lines.starts_with("warning  framework-arch"), "{lines}");
    assert!(stdout(&o).contains("python "), "{}", text_of(&o));
}

fn text_of(o: &std::process::Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

#[test]
fn a_real_windows_dlls_architectures_are_read_from_its_pe_section() {
    let t = TestEnv::new();
    let dll = wheel_member(
        t.tmp.path(),
        WIN_WHEEL_URL,
        WIN_WHEEL_SHA256,
        WIN_MEMBER,
        3_682_816,
    );
    assert_eq!(&dll[..2], b"MZ");
    let python = venv_with_torch_file(&t, "venv", "torch_cuda.dll", &dll);
    let doctor = |arch: &str| {
        t.cmd()
            .env("CUDAENV_PYTHON", &python)
            .env("LANG", "C")
            .args(["doctor", "--target-arch", arch, "--json"])
            .output()
            .unwrap()
    };
    let v = json(&doctor("sm_90"));
    let torch = v["facts"]["python"]["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["package"] == "torch")
        .unwrap()
        .clone();
    insta::assert_json_snapshot!("kernels_windows_dll", torch["kernels"]);
    assert_eq!(torch["kernels"][0]["file"], "torch/lib/torch_cuda.dll");
    assert!(torch["kernels"][0].get("error").is_none(), "{torch}");
    let levels = |o: &std::process::Output| -> Vec<String> {
        json(o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "framework-arch")
            .map(|f| f["level"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(levels(&doctor("sm_90")), ["ok"]);
    assert_eq!(levels(&doctor("sm_37")), ["error"]);
}
