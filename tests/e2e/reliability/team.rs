//! What a team relies on: the README's everyday flow run as written (install
//! with cuDNN, pin, lock, a teammate's fresh root installing from the lock),
//! a lock that describes what the project runs, `--locked` comparing the
//! installed stack with the lock, and project files others can read.
//!
//! The index is a loopback one serving a small wheel for every component of
//! the runtime profile of CUDA 12.4.1 and for cuDNN 9.28.0.42 (NVIDIA's
//! layout, a few KB each): the real wheels of that stack are gigabytes.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use super::loopback::{Index, Wheel};
use crate::common::{TestEnv, bin, text};
use crate::pypi::{file, zip};

const CUDNN: &str = "9.28.0.42";

fn arch() -> &'static str {
    std::env::consts::ARCH
}

/// (project, version, wheel directory, library) of the 12.4.1 runtime profile.
const RUNTIME: &[(&str, &str, &str, &str)] = &[
    (
        "nvidia-cuda-runtime-cu12",
        "12.4.127",
        "cuda_runtime",
        "libcudart.so.12",
    ),
    (
        "nvidia-cublas-cu12",
        "12.4.5.8",
        "cublas",
        "libcublas.so.12",
    ),
    ("nvidia-cufft-cu12", "11.2.1.3", "cufft", "libcufft.so.11"),
    (
        "nvidia-curand-cu12",
        "10.3.5.147",
        "curand",
        "libcurand.so.10",
    ),
    (
        "nvidia-cusolver-cu12",
        "11.6.1.9",
        "cusolver",
        "libcusolver.so.11",
    ),
    (
        "nvidia-cusparse-cu12",
        "12.3.1.170",
        "cusparse",
        "libcusparse.so.12",
    ),
    (
        "nvidia-cuda-nvrtc-cu12",
        "12.4.127",
        "cuda_nvrtc",
        "libnvrtc.so.12",
    ),
    (
        "nvidia-nvjitlink-cu12",
        "12.4.127",
        "nvjitlink",
        "libnvJitLink.so.12",
    ),
    (
        "nvidia-cuda-cupti-cu12",
        "12.4.127",
        "cuda_cupti",
        "libcupti.so.12",
    ),
];

fn wheel_file(project: &str, version: &str) -> String {
    format!(
        "{}-{version}-py3-none-manylinux2014_{}.whl",
        project.replace('-', "_"),
        arch()
    )
}

/// A wheel of `project` holding `nvidia/<dir>/lib/<lib>` (distinct bytes per
/// project) and its dist-info.
fn component_wheel(project: &str, version: &str, dir: &str, lib: &str) -> Vec<u8> {
    let seed = project.len() as u32;
    let body: Vec<u8> = (0..20_000u32)
        .map(|i| ((i * (seed + 3)) % 251) as u8)
        .collect();
    zip(&[
        file(&format!("nvidia/{dir}/lib/{lib}"), &body),
        file(
            &format!("nvidia/{dir}/include/{}.h", dir),
            format!("/* {project} {version} */\n").as_bytes(),
        ),
        file(
            &format!("{}-{version}.dist-info/RECORD", project.replace('-', "_")),
            b"",
        ),
    ])
}

fn cudnn_wheel() -> Vec<u8> {
    let lib: Vec<u8> = (0..30_000u32).map(|i| (i * 11 % 251) as u8).collect();
    zip(&[
        file("nvidia/cudnn/lib/libcudnn.so.9", &lib),
        file(
            "nvidia/cudnn/include/cudnn_version.h",
            b"#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 28\n#define CUDNN_PATCHLEVEL 0\n",
        ),
        file(&format!("nvidia_cudnn_cu12-{CUDNN}.dist-info/RECORD"), b""),
    ])
}

/// Every wheel of `12.4+cudnn9`'s runtime profile.
pub fn stack_wheels() -> Vec<Wheel> {
    let mut w: Vec<Wheel> = RUNTIME
        .iter()
        .map(|(p, v, d, l)| Wheel::new(p, &wheel_file(p, v), component_wheel(p, v, d, l)))
        .collect();
    w.push(Wheel::new(
        "nvidia-cudnn-cu12",
        &wheel_file("nvidia-cudnn-cu12", CUDNN),
        cudnn_wheel(),
    ));
    w
}

fn run(env: &TestEnv, idx: &Index, cwd: &Path, args: &[&str]) -> Output {
    env.cmd()
        .current_dir(cwd)
        .env("CUDAENV_PYPI_INDEX", idx.url())
        .args(args)
        .output()
        .unwrap()
}

fn ok(env: &TestEnv, idx: &Index, cwd: &Path, args: &[&str]) -> String {
    let o = run(env, idx, cwd, args);
    assert_eq!(o.status.code(), Some(0), "cudaenv {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The fenced block of the README's "Everyday use".
fn everyday_block() -> String {
    let readme = include_str!("../../../README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Everyday use"))
        .expect("README.md has an `Everyday use` section");
    let start = section.find("```sh\n").expect("a sh block") + 6;
    let len = section[start..].find("```").expect("the block ends");
    section[start..start + len].to_string()
}

/// Every file of a version's tree with its type, mode, content or link
/// target, relative to the version (the metadata's creation time left out:
/// it is when, not what).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let mode = m.permissions().mode() & 0o7777;
            if m.file_type().is_symlink() {
                out.push(format!(
                    "{rel} -> {}",
                    std::fs::read_link(&p).unwrap().display()
                ));
            } else if m.is_dir() {
                out.push(format!("{rel}/ {mode:o}"));
                walk(base, &p, out);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                if rel == ".cudaenv/meta.toml" {
                    // Line by line, so that a difference reads as one.
                    let t = String::from_utf8(bytes).unwrap();
                    out.push(format!("{rel} {mode:o}"));
                    out.extend(
                        t.lines()
                            .filter(|l| !l.starts_with("created"))
                            .map(|l| format!("{rel}: {l}")),
                    );
                    continue;
                }
                out.push(format!(
                    "{rel} {mode:o} {} {}",
                    bytes.len(),
                    crate::pypi::sha256(&bytes)
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// The README's block, run line by line in bash as written, with a
/// loopback index for PyPI, a toolkit tree where it says
/// `/usr/local/cuda-12.4`, and a `python` that prints what it was given;
/// then a teammate's fresh root, in a clone of the project, installs from
/// the lock alone: both roots hold the same stack, file for file.
#[test]
fn readme_everyday_flow_gives_a_teammate_the_same_stack() {
    let idx = Index::start(stack_wheels());
    let author = TestEnv::new();
    let toolkit = crate::common::fake_toolkit(&author.path("usr-local-cuda-12.4"), "12.4", None);
    let tools = author.path("tools");
    crate::common::write_executable(
        &tools.join("python"),
        "#!/bin/sh\necho \"python $* CUDA_HOME=$CUDA_HOME CUDNN_PATH=$CUDNN_PATH\"\n",
    );
    let block = everyday_block();
    assert!(
        block.contains("cudaenv install 12.4+cudnn9") && block.contains("cudaenv lock"),
        "{block}"
    );
    let script = block
        .replace("/usr/local/cuda-12.4", toolkit.to_str().unwrap())
        .replace("cd myproject", "mkdir -p myproject && cd myproject");
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        bin().parent().unwrap().display(),
        tools.display()
    );
    let out = crate::common::bash(
        &author,
        &author.home,
        &[
            ("PATH", &path),
            ("CUDAENV_PYPI_INDEX", &idx.url()),
            ("SHELLOPTS", ""),
        ],
        &format!("set -e\n{script}"),
    );
    let proj = author.home.join("myproject");
    let name = format!("12.4.1+cudnn{CUDNN}");
    // What `cudaenv version` printed, as the README says.
    assert!(
        out.contains(&format!("{name} (set by {}/.cuda-version)", proj.display())),
        "{out}"
    );
    assert!(
        out.contains("python train.py CUDA_HOME=") && out.contains("CUDNN_PATH=/"),
        "{out}"
    );
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains(&format!("cudnn = \"{CUDNN}\"")) && lock.contains("component = \"cudnn\""),
        "the lock does not hold the cuDNN the project runs:\n{lock}"
    );

    // A teammate clones the project (the two committed files) and installs,
    // each of the three ways a lock is installed from, into a fresh root.
    let a = tree(&author.root.join("versions").join(&name));
    assert!(
        a.iter().any(|l| l.starts_with("lib64/libcudnn.so.9 ")),
        "{a:#?}"
    );
    for how in [
        &["install"][..],
        &["install", "--locked"],
        &["install", "--frozen"],
    ] {
        let mate = TestEnv::new();
        let clone = mate.home.join("myproject");
        std::fs::create_dir_all(&clone).unwrap();
        for f in [".cuda-version", "cuda.lock"] {
            std::fs::copy(proj.join(f), clone.join(f)).unwrap();
        }
        let err = ok(&mate, &idx, &clone, how);
        if how.len() == 1 {
            assert!(err.contains("following"), "{err}");
        }
        let o = run(&mate, &idx, &clone, &["version"]);
        assert!(
            String::from_utf8_lossy(&o.stdout).starts_with(&name),
            "{how:?}: {}",
            text(&o)
        );
        let b = tree(&mate.root.join("versions").join(&name));
        assert_eq!(
            a,
            b,
            "`cudaenv {}`: the two roots' stacks differ",
            how.join(" ")
        );
    }
    // And the author's `install --locked` checks what is installed against
    // the lock (it is the same stack: nothing to do).
    let err = ok(&author, &idx, &proj, &["install", "--locked"]);
    assert!(err.contains("already installed"), "{err}");
}

/// Defect: `install 12.4+cudnn9`, `local 12.4`, `lock` wrote a lock without
/// cuDNN although the pin selects the version with cuDNN; `install --locked`
/// then said "already installed" on the author's machine, and a teammate
/// got no cuDNN. The lock holds what the pin selects here.
#[test]
fn a_lock_holds_the_cudnn_of_the_version_the_pin_selects() {
    let idx = Index::start(stack_wheels());
    let env = TestEnv::new();
    let proj = env.home.join("p");
    std::fs::create_dir_all(&proj).unwrap();
    ok(&env, &idx, &env.home, &["install", "12.4+cudnn9"]);
    ok(&env, &idx, &proj, &["local", "12.4"]);
    let err = ok(&env, &idx, &proj, &["lock"]);
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains("component = \"cudnn\"") && lock.contains(&format!("cudnn = \"{CUDNN}\"")),
        "{err}\n{lock}"
    );
    // The pin is unchanged: the lock says which stack it selected.
    assert_eq!(
        std::fs::read_to_string(proj.join(".cuda-version")).unwrap(),
        "12.4\n"
    );
    insta::assert_snapshot!(
        "lock_follows_the_selected_version",
        err.replace(&env.tmp.path().display().to_string(), "[TMP]")
            .replace(&idx.port.to_string(), "[PORT]")
    );
}

/// Defect: `install --locked` compared only the version's name with the
/// lock. An installed version of the locked name whose files are not the
/// locked ones (a component of another build) is refused, naming the
/// difference, and `--force` reinstalls it from the lock.
#[test]
fn locked_compares_the_installed_stack_with_the_lock() {
    let idx = Index::start(stack_wheels());
    let env = TestEnv::new();
    let proj = env.home.join("p");
    std::fs::create_dir_all(&proj).unwrap();
    ok(&env, &idx, &proj, &["lock", "12.4+cudnn9"]);
    ok(&env, &idx, &proj, &["install", "--locked"]);
    let name = format!("12.4.1+cudnn{CUDNN}");
    let meta = env
        .root
        .join("versions")
        .join(&name)
        .join(".cudaenv/meta.toml");
    let text0 = std::fs::read_to_string(&meta).unwrap();
    // Another build of cuBLAS, as an install from another index would record.
    let changed = text0.replacen("version = \"12.4.5.8\"", "version = \"12.4.2.65\"", 1);
    assert_ne!(changed, text0, "{text0}");
    std::fs::write(&meta, changed).unwrap();
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(o.status.code(), Some(25), "{}", text(&o));
    let shown = String::from_utf8_lossy(&o.stderr)
        .replace(&env.tmp.path().display().to_string(), "[TMP]")
        .replace(&idx.port.to_string(), "[PORT]");
    assert!(shown.contains("cublas"), "{shown}");
    insta::assert_snapshot!("locked_installed_differs", shown);
    let o = run(&env, &idx, &proj, &["install", "--locked", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Defect: `.cuda-version`, `cuda.lock` and `$CUDAENV_ROOT/version` were
/// created 0600 whatever the umask, so a second user of a shared checkout
/// could not read them. They follow the umask, as git's and pip's files do;
/// and a file the user cannot read is reported as a permission problem.
#[test]
fn project_files_follow_the_umask() {
    let idx = Index::start(stack_wheels());
    let env = TestEnv::new();
    let proj = env.home.join("p");
    std::fs::create_dir_all(&proj).unwrap();
    let script = format!(
        "set -e\numask 022\n\"$CUDAENV\" lock 12.4+cudnn9 >/dev/null 2>&1\n\"$CUDAENV\" local 12.4 2>/dev/null\n\
         \"$CUDAENV\" global system 2>/dev/null\numask 027\n\"$CUDAENV\" local 12.4.1 2>/dev/null\n\
         stat -c '%n %a' .cuda-version cuda.lock '{}/version'\n",
        env.root.display()
    );
    let out = crate::common::bash(&env, &proj, &[("CUDAENV_PYPI_INDEX", &idx.url())], &script);
    // The lock and the global file were written under umask 022, the pin
    // rewritten under 027.
    let modes: Vec<&str> = out.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
    assert_eq!(modes, ["640", "644", "644"], "{out}");
}

/// A pin this user cannot read (another user's 0600 file in a shared
/// checkout) is reported as a permission problem, not as a malformed file.
#[test]
#[cfg_attr(
    cudaenv_not_root,
    ignore = "needs root: it reads the file as another user (setpriv to nobody)"
)]
fn an_unreadable_pin_is_reported_as_a_permission_problem() {
    let env = TestEnv::new();
    std::fs::set_permissions(env.tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&env.home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let theirs = env.home.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join(".cuda-version"), "12.4\n").unwrap();
    std::fs::set_permissions(
        theirs.join(".cuda-version"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .args(["version"])
        .current_dir(&theirs)
        .env_clear()
        .env("HOME", env.path("nobody-home"))
        .env("CUDAENV_ROOT", env.path("nobody-root"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err =
        String::from_utf8_lossy(&o.stderr).replace(&env.tmp.path().display().to_string(), "[TMP]");
    assert_eq!(o.status.code(), Some(2), "{err}");
    insta::assert_snapshot!("unreadable_pin_is_a_permission_problem", err);
}
