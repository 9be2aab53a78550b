//! Settings from config.toml: read once per process, however many settings
//! a command or a shim asks of it.

use std::path::Path;
use std::process::Command;

use crate::common::{TestEnv, assert_success, fake_installed, write_executable};

/// How many times `strace`'s log (`-e trace=open,openat,openat2`) shows
/// `file` opened, successfully or not.
fn opens_of(log: &Path, file: &Path) -> usize {
    let needle = format!("\"{}\"", file.display());
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&needle))
        .count()
}

/// Regression: a shim running nvcc opened and parsed config.toml once for
/// the system root, again for bundled CUDA and again for the host
/// compiler (and `exec` as often); the file is read once per process.
#[test]
fn config_toml_is_opened_once_per_process() {
    let t = TestEnv::new();
    let version = fake_installed(&t.root, "12.4", "12.4.1", None);
    // An nvcc that says what activation handed it.
    write_executable(
        &version.join("bin/nvcc"),
        "#!/bin/sh\necho \"ccbin=$NVCC_CCBIN ld=$LD_LIBRARY_PATH\"\n",
    );
    // A virtual environment with CUDA 12's own runtime wheel beside it.
    let venv = t.path("venv");
    let wheel = venv.join("lib/python3.12/site-packages/nvidia/cuda_runtime/lib");
    std::fs::create_dir_all(&wheel).unwrap();
    std::fs::write(wheel.join("libcudart.so.12"), "").unwrap();
    let system = t.path("system");
    std::fs::create_dir_all(system.join("versions")).unwrap();
    std::fs::create_dir_all(&t.root).unwrap();
    let config = t.root.join("config.toml");
    // Every setting on the shim's path: the system root, bundled CUDA and the host compiler.
    std::fs::write(
        &config,
        format!(
            "system-root = '{}'\nbundled-cuda = \"wheels\"\nhost-compiler = \"/usr/bin/g++\"\n",
            system.display()
        ),
    )
    .unwrap();
    assert_success(&t.run(&["rehash"]), "cudaenv rehash");

    let shim = t.root.join("shims/nvcc");
    let exec = [
        t.cmd().get_program().to_owned(),
        "exec".into(),
        "--version".into(),
        "12.4".into(),
        "--".into(),
        "nvcc".into(),
    ];
    for (what, argv) in [
        ("the shim", vec![shim.into_os_string()]),
        ("exec", exec.to_vec()),
    ] {
        let log = t.path(&format!("strace-{}.log", what.replace(' ', "-")));
        let out = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
            .arg(&log)
            .args(&argv)
            .env_clear()
            .env("HOME", &t.home)
            .env("CUDAENV_ROOT", &t.root)
            .env("CUDAENV_VERSION", "12.4")
            .env("VIRTUAL_ENV", &venv)
            .env("PATH", "/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&t.home)
            .output()
            .expect("strace runs (scripts/test.sh installs it)");
        assert_success(&out, what);
        let said = String::from_utf8_lossy(&out.stdout);
        // The settings took effect: the compiler named, the wheels' copy alone.
        assert!(said.contains("ccbin=/usr/bin/g++ "), "{what}: {said}");
        assert!(
            !said.contains(&*version.to_string_lossy()),
            "{what}: {said}"
        );
        assert_eq!(opens_of(&log, &config), 1, "{what}: config.toml opened");
    }
}
