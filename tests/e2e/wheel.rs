//! The Python wheel (pyproject.toml, maturin's `bin` bindings): built with
//! maturin from PyPI, installed into a fresh virtual environment with pip and
//! run from there (`cudaenv --version` and real commands), and installed as a
//! tool by `uv tool install` and `pipx install` (both from PyPI too).
//!
//! The wheel is built with the dev profile (the one `cargo test` has just
//! built, so nothing is compiled again) and `--strip false`, since stripping
//! would rewrite the binary the other tests are running. Release wheels use
//! pyproject.toml's settings: the `dist` profile, stripped.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// maturin, uv and pipx in a virtual environment kept between runs (they
/// come from PyPI); returns its `bin` directory.
fn tools() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wheel-tools-venv");
    let bin = venv.join("bin");
    if !["maturin", "uv", "pipx"]
        .iter()
        .all(|t| bin.join(t).is_file())
    {
        let o = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap();
        assert_success(&o, "python3 -m venv (python3-venv)");
        let o = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "maturin>=1.7,<2", "uv", "pipx"])
            .output()
            .unwrap();
        assert_success(&o, "pip install maturin uv pipx");
    }
    bin
}

#[test]
fn wheel_installs_a_working_cudaenv_with_pip() {
    let t = TestEnv::new();
    let wheels = t.tmp.path().join("wheels");
    let tools = tools();
    let o = Command::new(tools.join("maturin"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--profile", "dev", "--strip", "false", "--out"])
        .arg(&wheels)
        .output()
        .unwrap();
    assert_success(&o, "maturin build");
    let wheel: Vec<PathBuf> = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(wheel.len(), 1, "{wheel:?}");
    let name = wheel[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with(&format!("cudaenv-{}-py3-none-", env!("CARGO_PKG_VERSION"))),
        "{name}"
    );

    // The binary is a script of the wheel, so installers put it on PATH.
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wheel[0]).unwrap()).unwrap();
    let script = format!("cudaenv-{}.data/scripts/cudaenv", env!("CARGO_PKG_VERSION"));
    assert!(zip.by_name(&script).is_ok(), "{script} missing from {name}");

    let venv = t.tmp.path().join("venv");
    let o = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert_success(&o, "python3 -m venv");
    let o = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(&wheel[0])
        .output()
        .unwrap();
    assert_success(&o, "pip install the wheel");

    let installed = venv.join("bin/cudaenv");
    let run = |args: &[&str]| {
        let o = Command::new(&installed)
            .env_clear()
            .env("HOME", &t.home)
            .env("CUDAENV_ROOT", &t.root)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", venv.join("bin").display()),
            )
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap();
        assert_success(&o, &format!("{} {args:?}", installed.display()));
        stdout(&o)
    };
    assert_eq!(
        run(&["--version"]),
        format!("cudaenv {}\n", env!("CARGO_PKG_VERSION"))
    );
    // Real commands, with the tables and documentation built into the binary.
    let compat = run(&["compat", "tensorflow==2.10"]);
    assert!(
        compat.contains("11.2") && compat.contains("8.1"),
        "{compat}"
    );
    assert!(run(&["help", "exit-codes"]).starts_with("# Exit codes"));
    let prefix = fake_installed(&t.root, "12.4.1", "12.4.1", None);
    assert_eq!(run(&["versions", "--bare"]), "12.4.1\n");
    assert_eq!(run(&["prefix", "12.4"]), format!("{}\n", prefix.display()));

    // As a tool: each installer puts `cudaenv` in its bin directory.
    let version = format!("cudaenv {}\n", env!("CARGO_PKG_VERSION"));
    let dirs = t.tmp.path();
    let o = Command::new(tools.join("uv"))
        .args(["tool", "install"])
        .arg(&wheel[0])
        .env("UV_TOOL_DIR", dirs.join("uv-tools"))
        .env("UV_TOOL_BIN_DIR", dirs.join("uv-bin"))
        .env("UV_CACHE_DIR", dirs.join("uv-cache"))
        .output()
        .unwrap();
    assert_success(&o, "uv tool install");
    let o = Command::new(dirs.join("uv-bin/cudaenv"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), version);
    let o = Command::new(tools.join("pipx"))
        .arg("install")
        .arg(&wheel[0])
        .env("PIPX_HOME", dirs.join("pipx-home"))
        .env("PIPX_BIN_DIR", dirs.join("pipx-bin"))
        .env("PIPX_MAN_DIR", dirs.join("pipx-man"))
        .env("PATH", format!("{}:/usr/bin:/bin", tools.display()))
        .output()
        .unwrap();
    assert_success(&o, "pipx install");
    let o = Command::new(dirs.join("pipx-bin/cudaenv"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), version);
}
