//! What the user reads when something is missing or goes wrong: the real
//! binary's exit code and stderr, snapshotted, for the cases a new user hits
//! first (no pin, no name, no GPU, a mirror that does not resolve, an install
//! on a terminal), and an example in every subcommand's `--help`.

use std::process::Command;

use crate::common::*;
use crate::pypi::{Mode, ONLY_CUDART, Server, good_wheel, sha256};

/// `[exit N]` + stderr, with the test's temporary paths replaced.
fn outcome(t: &TestEnv, o: &std::process::Output) -> String {
    format!("[exit {}]\n{}", o.status.code().unwrap_or(-1), stderr(o))
        .replace(&t.root.display().to_string(), "[ROOT]")
        .replace(&t.home.display().to_string(), "[HOME]")
}

#[test]
fn local_without_a_pin_names_the_installed_versions() {
    let t = TestEnv::new();
    insta::assert_snapshot!(outcome(&t, &t.run(&["local"])), @r"
    [exit 1]
    error: no .cuda-version (nor a `cuda` line in .tool-versions) in [HOME] or any parent directory
    hint: pin one with `cudaenv local SPEC` once it is installed: `cudaenv install 12.4`, then `cudaenv local 12.4` (`cudaenv ls-remote` lists what can be installed)
    ");
    fake_installed(&t.root, "12.4.1", "12.4.1", None);
    fake_installed(&t.root, "11.8.0+cudnn8.9", "11.8.0", Some("8.9.7"));
    insta::assert_snapshot!(outcome(&t, &t.run(&["local"])), @r"
    [exit 1]
    error: no .cuda-version (nor a `cuda` line in .tool-versions) in [HOME] or any parent directory
    hint: pin one with `cudaenv local SPEC`; installed: 11.8.0+cudnn8.9, 12.4.1
    ");
}

#[test]
fn uninstall_without_a_name_names_the_installed_versions() {
    let t = TestEnv::new();
    insta::assert_snapshot!(outcome(&t, &t.run(&["uninstall"])), @r"
    [exit 2]
    error: `cudaenv uninstall` needs the name of a version
    hint: nothing is installed (`cudaenv versions` lists what is)
    ");
    fake_installed(&t.root, "12.4.1", "12.4.1", None);
    fake_installed(&t.root, "11.8.0+cudnn8.9", "11.8.0", Some("8.9.7"));
    insta::assert_snapshot!(outcome(&t, &t.run(&["uninstall", "-y"])), @r"
    [exit 2]
    error: `cudaenv uninstall` needs the name of a version
    hint: `cudaenv uninstall NAME`; installed: 11.8.0+cudnn8.9, 12.4.1
    ");
    assert_eq!(t.ok(&["versions", "--bare"]), "11.8.0+cudnn8.9\n12.4.1\n");
}

/// Outside any project, with no driver: each problem is reported, each hint
/// once, and none speaks of "this GPU".
#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn verify_without_a_driver_or_a_version_says_each_thing_once() {
    let t = TestEnv::new();
    let o = t.run(&["verify"]);
    insta::assert_snapshot!(outcome(&t, &o), @r"
    [exit 10]
    verifying `system` …
    error: no NVIDIA driver: libcuda.so.1 could not be loaded (libcuda.so.1: cannot open shared object file: No such file or directory)
    hint: on a machine with an NVIDIA GPU, install NVIDIA's driver (`nvidia-smi` then lists the GPU); in a container, start it with the GPU exposed (e.g. `docker run --gpus all`). On a machine without one, nothing can be verified. cudaenv installs toolkits, never the driver
    error: cudart could not be loaded for version `system` (tried libcudart.so.13, libcudart.so.12, libcudart.so.11.0): libcudart.so.13: cannot open shared object file: No such file or directory; libcudart.so.12: cannot open shared object file: No such file or directory; libcudart.so.11.0: cannot open shared object file: No such file or directory
    hint: no version is selected and the loader finds no copy: select one (`cudaenv local 12.4`, `cudaenv verify 12.4`) or put a toolkit's lib64 on LD_LIBRARY_PATH
    error: cublasLt could not be loaded for version `system` (tried libcublasLt.so.13, libcublasLt.so.12, libcublasLt.so.11): libcublasLt.so.13: cannot open shared object file: No such file or directory; libcublasLt.so.12: cannot open shared object file: No such file or directory; libcublasLt.so.11: cannot open shared object file: No such file or directory
    error: cublas could not be loaded for version `system` (tried libcublas.so.13, libcublas.so.12, libcublas.so.11): libcublas.so.13: cannot open shared object file: No such file or directory; libcublas.so.12: cannot open shared object file: No such file or directory; libcublas.so.11: cannot open shared object file: No such file or directory
    ");
}

#[test]
fn update_from_a_mirror_that_does_not_resolve_says_so() {
    // PyPI's release list alone makes a successful update (exit 0); the
    // mirror that did not resolve is a warning that names the cause and the fix.
    let t = TestEnv::new();
    let o = t
        .cmd()
        .env("CUDAENV_NVIDIA_MIRROR", "http://no-such-mirror.invalid")
        .arg("update")
        .output()
        .unwrap();
    let text = outcome(&t, &o);
    assert!(text.starts_with("[exit 0]\n"), "{text}");
    assert!(
        text.contains(
            "warning: cannot reach NVIDIA's manifests: cannot reach http://no-such-mirror.invalid/compute/cuda/redist/: "
        ),
        "{text}"
    );
    assert!(text.contains("dns error"), "the cause is shown: {text}");
    assert!(
        text.contains("hint: the host name `no-such-mirror.invalid` did not resolve: check its spelling (CUDAENV_NVIDIA_MIRROR, `nvidia-mirror` in config.toml), the DNS settings, or the proxy (HTTPS_PROXY); nothing was changed: cudaenv keeps using the manifests it has\n"),
        "{text}"
    );
    assert!(!text.contains("resume"), "{text}");
    // No NVIDIA manifest was stored.
    assert!(
        !t.root.join("cache/manifests").exists()
            || snapshot(&t.root.join("cache/manifests")).is_empty()
    );
}

#[test]
fn init_points_to_the_built_in_documentation() {
    let t = TestEnv::new();
    let o = t
        .cmd()
        .env("SHELL", "/bin/bash")
        .arg("init")
        .output()
        .unwrap();
    let err = assert_code(&o, 0, "init");
    assert!(err.contains("More: `cudaenv help shell`."), "{err}");
    assert!(!err.contains("docs/"), "{err}");
}

/// No message points into a repository the user does not have.
#[test]
fn messages_never_name_a_path_of_the_repository() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let out = Command::new("grep")
        .args(["-rnE", "\"[^\"]*docs/[a-z-]+\\.md", src])
        .output()
        .unwrap();
    let hits: Vec<&str> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("include_str!") && !l.contains("//"))
        .filter(|l| !l.contains("does not document") && !l.contains("lacks {code"))
        .collect();
    assert!(
        hits.is_empty(),
        "point to `cudaenv help TOPIC` instead:\n{}",
        hits.join("\n")
    );
}

#[test]
fn every_subcommand_help_has_an_example() {
    let t = TestEnv::new();
    let top = t.ok(&["--help"]);
    let commands: Vec<&str> = top
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A description that wraps goes on in a line indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(commands.len() > 20, "{commands:?}");
    for c in commands {
        let help = t.ok(&[c, "--help"]);
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("`cudaenv {c} --help` has no example:\n{help}"));
        assert!(examples.contains("cudaenv"), "{c}: {examples}");
    }
}

/// On a terminal the bars are gone once the summary is printed: nothing is
/// drawn after the `✓ installed` line.
#[test]
fn progress_bars_are_not_redrawn_below_the_summary() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let t = TestEnv::new();
    let cmd = format!("{} install 12.4.1 {ONLY_CUDART}", bin().display());
    let o = Command::new("script")
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("PATH", "/usr/bin:/bin")
        .env("TERM", "xterm")
        .env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["-qefc", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert_success(&o, "install on a pty");
    let screen = stdout(&o);
    let after = screen
        .rsplit_once("installed 12.4.1")
        .unwrap_or_else(|| panic!("no summary:\n{screen:?}"))
        .1;
    // Below the summary only the line on what stays in the cache.
    let tail: String = after
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("the cache keeps the unpacked packages ("))
        .collect();
    assert!(tail.trim().is_empty(), "drawn after the summary: {after:?}");
}
