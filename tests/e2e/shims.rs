//! Shims: the real binary under a tool's name, in a temporary root.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::TestEnv;
use crate::shell::fake_version;

fn rehash(t: &TestEnv) -> Output {
    let out = t.cmd().arg("rehash").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    out
}

/// Runs `program` (a path or a name looked up on `path`) in `dir`, with the
/// same isolated environment as `TestEnv::cmd`.
fn run_in(t: &TestEnv, dir: &Path, path: &str, program: &str, args: &[&str]) -> Output {
    Command::new("/bin/sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\"")
        .arg(program)
        .args(args)
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn shim_names(t: &TestEnv) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(t.root.join("shims"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

fn projects(t: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let a = t.path("proj a");
    let b = t.path("proj a/inner b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(a.join(".cuda-version"), "alpha\n").unwrap();
    std::fs::write(b.join(".cuda-version"), "beta\n").unwrap();
    (a, b)
}

#[test]
fn shims_resolve_per_directory() {
    let t = TestEnv::new();
    let a_dir = fake_version(&t.root, "alpha", &["nvcc"]);
    fake_version(&t.root, "beta", &["nvcc"]);
    rehash(&t);
    assert_eq!(shim_names(&t), ["nvcc"]);
    let (a, b) = projects(&t);
    let path = format!("{}:/usr/bin:/bin", t.root.join("shims").display());

    let out = run_in(&t, &a, &path, "nvcc", &["--version"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        format!(
            "nvcc from alpha CUDA_HOME={} depth=1 args=--version",
            a_dir.join("cuda").display()
        )
    );
    let out = run_in(&t, &b, &path, "nvcc", &[]);
    assert!(stdout(&out).starts_with("nvcc from beta "), "{out:?}");
    // CUDAENV_VERSION wins over the directory, as for `exec`.
    let out = Command::new(t.root.join("shims/nvcc"))
        .env_clear()
        .env("CUDAENV_ROOT", &t.root)
        .env("HOME", &t.home)
        .env("CUDAENV_VERSION", "beta")
        .current_dir(&a)
        .output()
        .unwrap();
    assert!(stdout(&out).starts_with("nvcc from beta "), "{out:?}");
}

#[test]
fn shim_through_a_symlinked_path_entry() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc"]);
    rehash(&t);
    let (a, _) = projects(&t);
    let link = t.path("linked shims");
    std::os::unix::fs::symlink(t.root.join("shims"), &link).unwrap();
    let path = format!("{}:/usr/bin:/bin", link.display());
    let out = run_in(&t, &a, &path, "nvcc", &[]);
    assert!(stdout(&out).starts_with("nvcc from alpha "), "{out:?}");

    // With `system` selected, the shim must find the next nvcc on PATH and
    // never itself, even when it is reached through the link (and twice).
    let sys = t.path("system cuda/bin");
    std::fs::create_dir_all(&sys).unwrap();
    std::fs::write(sys.join("nvcc"), "#!/bin/sh\necho system nvcc\n").unwrap();
    std::fs::set_permissions(sys.join("nvcc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{}:/usr/bin:/bin",
        link.display(),
        t.root.join("shims").display(),
        sys.display()
    );
    let out = run_in(&t, &t.home, &path, "nvcc", &[]);
    assert_eq!(stdout(&out), "system nvcc\n", "{}", stderr(&out));
}

#[test]
fn missing_command_names_the_versions_that_have_it() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc"]);
    fake_version(&t.root, "beta", &["nvcc", "ncu"]);
    fake_version(&t.root, "gamma", &["ncu"]);
    rehash(&t);
    let (a, _) = projects(&t);
    let path = format!("{}:/usr/bin:/bin", t.root.join("shims").display());
    let out = run_in(&t, &a, &path, "ncu", &[]);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("error: command `ncu` not found in version `alpha`"),
        "{err}"
    );
    assert!(err.contains("it exists in: beta, gamma"), "{err}");
}

#[test]
fn recursion_is_stopped() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc"]);
    rehash(&t);
    // `system` is selected; the next nvcc on PATH is a wrapper that runs
    // `nvcc` again, which finds the shim first: a loop through the shim.
    let wrap = t.path("wrap");
    std::fs::create_dir_all(&wrap).unwrap();
    std::fs::write(wrap.join("nvcc"), "#!/bin/sh\nexec nvcc \"$@\"\n").unwrap();
    std::fs::set_permissions(wrap.join("nvcc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        t.root.join("shims").display(),
        wrap.display()
    );
    let out = run_in(&t, &t.home, &path, "nvcc", &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("shim `nvcc` called itself 16 times in a row"),
        "{err}"
    );
    assert!(err.contains("CUDAENV_SHIM_DEPTH"), "{err}");
}

#[test]
fn rehash_removes_stale_shims() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc", "ptxas"]);
    let beta = fake_version(&t.root, "beta", &["nvcc", "ncu", "compute-sanitizer"]);
    rehash(&t);
    assert_eq!(
        shim_names(&t),
        ["compute-sanitizer", "ncu", "nvcc", "ptxas"]
    );
    // A tool disappears from one version, another version goes away.
    std::fs::remove_file(t.root.join("versions/alpha/cuda/bin/ptxas")).unwrap();
    std::fs::remove_dir_all(&beta).unwrap();
    let out = rehash(&t);
    assert_eq!(shim_names(&t), ["nvcc"]);
    assert!(
        stderr(&out).contains("1 shims in") && stderr(&out).contains("3 removed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_hundred_parallel_rehashes() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc", "ptxas", "cuobjdump"]);
    fake_version(&t.root, "beta", &["nvcc", "ncu"]);
    let children: Vec<_> = (0..100)
        .map(|_| t.cmd().args(["--quiet", "rehash"]).spawn().unwrap())
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(shim_names(&t), ["cuobjdump", "ncu", "nvcc", "ptxas"]);
    let leftovers: Vec<_> = std::fs::read_dir(t.root.join("shims"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".tmp") || n.starts_with(".generation."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Every shim works.
    let (a, _) = projects(&t);
    let path = format!("{}:/usr/bin:/bin", t.root.join("shims").display());
    let out = run_in(&t, &a, &path, "cuobjdump", &[]);
    assert!(stdout(&out).starts_with("cuobjdump from alpha"), "{out:?}");
}

/// The benchmark probe (only in a build with the `shim-probe` feature): at
/// each stage of its path the shim execs the probe's program with its own
/// arguments, and a stage it never reaches does nothing.
#[cfg(feature = "shim-probe")]
#[test]
fn the_benchmark_probe_execs_at_each_stage() {
    let t = TestEnv::new();
    fake_version(&t.root, "alpha", &["nvcc"]);
    rehash(&t);
    let (a, _) = projects(&t);
    let probe = t.path("probe program");
    std::fs::write(&probe, "#!/bin/sh\necho \"probe $*\"\n").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shim = |dir: &Path, stage: &str| {
        Command::new(t.root.join("shims/nvcc"))
            .arg("--version")
            .env_clear()
            .env("HOME", &t.home)
            .env("CUDAENV_ROOT", &t.root)
            .env("CUDAENV_PROBE_STAGE", stage)
            .env("CUDAENV_PROBE_EXEC", &probe)
            .current_dir(dir)
            .output()
            .unwrap()
    };
    for stage in ["0", "1", "2", "3", "4", "5"] {
        let out = shim(&a, stage);
        assert_eq!(stdout(&out), "probe --version\n", "stage {stage}: {out:?}");
    }
    // Not a stage: the shim runs the real program.
    let out = shim(&a, "6");
    assert!(stdout(&out).starts_with("nvcc from alpha "), "{out:?}");
    // A pin to a version that is not installed fails in stage 3.
    let ghost = t.path("ghost");
    std::fs::create_dir_all(&ghost).unwrap();
    std::fs::write(ghost.join(".cuda-version"), "ghost\n").unwrap();
    assert_eq!(stdout(&shim(&ghost, "2")), "probe --version\n");
    let out = shim(&ghost, "3");
    assert!(!out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(stderr(&out).contains("ghost"), "{out:?}");
}
