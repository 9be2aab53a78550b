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
/// come from PyPI); returns its `bin` directory. Made once per run: tests
/// that ask at the same time wait for the first (two making one venv at
/// once see each other's half-made directory).
fn tools() -> PathBuf {
    static TOOLS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TOOLS.get_or_init(make_tools).clone()
}

fn make_tools() -> PathBuf {
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

/// The README's ways to run maturin (pipx, uvx, a virtual environment) each
/// work on a Debian whose pip refuses to install system-wide, and each asks
/// cargo for the `dist` profile pyproject.toml names (not `release`, which
/// `--release` would force). cargo is replaced by a recorder that fails
/// the build, so nothing is compiled; maturin itself comes from PyPI.
#[test]
fn readme_wheel_commands_build_the_pyproject_profile() {
    let t = TestEnv::new();
    let tools = tools();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let block = readme
        .split_once("<!-- wheel-commands:")
        .and_then(|(_, rest)| rest.split_once("```sh\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("README has the wheel-commands block");
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 3, "{block}");

    // A clone's top directory, by links (maturin reads the manifests and
    // asks cargo for metadata; the build itself goes to the recorder).
    let clone = t.tmp.path().join("clone");
    std::fs::create_dir(&clone).unwrap();
    for name in [
        "Cargo.toml",
        "Cargo.lock",
        "pyproject.toml",
        "README.md",
        "build.rs",
        "src",
        "shims",
        "registry",
    ] {
        std::os::unix::fs::symlink(repo.join(name), clone.join(name)).unwrap();
    }
    let fake = t.tmp.path().join("fake-cargo");
    std::fs::create_dir(&fake).unwrap();
    let log = t.tmp.path().join("cargo.log");
    // cargo test names the toolchain's own cargo, whose directory has rustc
    // (maturin checks for it); the real HOME's cargo and rustup homes stay.
    let real_cargo = PathBuf::from(std::env::var("CARGO").expect("run by cargo"));
    let toolchain = real_cargo.parent().unwrap().to_path_buf();
    let real_home = PathBuf::from(std::env::var("HOME").unwrap());
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".cargo"));
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".rustup"));
    write_executable(
        &fake.join("cargo"),
        &format!(
            "#!/bin/sh\ncase \"$1\" in metadata|locate-project|-V|--version|version) exec '{}' \"$@\";; esac\n\
             echo \"$*\" >> '{}'\nexit 3\n",
            real_cargo.display(),
            log.display()
        ),
    );
    for line in lines {
        let command = line.split(" #").next().unwrap().trim();
        let _ = std::fs::remove_file(&log);
        // cargo test's own `CARGO` (which maturin would run) is replaced by
        // the recorder; the rest of the environment stays (a CA bundle
        // named by SSL_CERT_FILE, a proxy).
        let o = Command::new("bash")
            .args(["-c", command])
            .current_dir(&clone)
            .env("CARGO", fake.join("cargo"))
            .env(
                "PATH",
                format!(
                    "{}:{}:{}:/usr/bin:/bin",
                    fake.display(),
                    tools.display(),
                    toolchain.display()
                ),
            )
            .env("HOME", &t.home)
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .env("PIPX_HOME", t.tmp.path().join("pipx-home"))
            .env("UV_CACHE_DIR", t.tmp.path().join("uv-cache"))
            .env("UV_TOOL_DIR", t.tmp.path().join("uv-tools"))
            .env("CARGO_TARGET_DIR", t.tmp.path().join("target"))
            .output()
            .unwrap();
        let asked = std::fs::read_to_string(&log)
            .unwrap_or_else(|_| panic!("`{command}` never asked cargo to build: {}", text(&o)));
        assert!(
            asked.contains("rustc --profile dist ") && !asked.contains("release"),
            "`{command}` asked cargo for: {asked}"
        );
    }
    // What the README warns about: `--release` replaces the profile.
    let _ = std::fs::remove_file(&log);
    Command::new(tools.join("maturin"))
        .args(["build", "--release"])
        .current_dir(&clone)
        .env("HOME", &t.home)
        .env("CARGO", fake.join("cargo"))
        .env(
            "PATH",
            format!("{}:{}:/usr/bin:/bin", fake.display(), toolchain.display()),
        )
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", &rustup_home)
        .env("CARGO_TARGET_DIR", t.tmp.path().join("target"))
        .output()
        .unwrap();
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("rustc --profile release ")
    );
}
