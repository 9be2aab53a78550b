//! `cuda.lock`: `cudaenv lock`, `install --locked` / `--frozen` / by
//! default, and `export`. Against a loopback index that counts every request
//! (what a hostile or outdated lock may make cudaenv fetch), and against live
//! PyPI with the ~1 MB cudart wheel (two roots from one lock, and pip
//! resolving against the exported constraints).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use crate::common::TestEnv;
use crate::pypi::{ONLY_CUDART, file, good_wheel, sha256, zip};

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// This machine's wheel architecture, and the other Linux one.
fn arches() -> (&'static str, &'static str) {
    match std::env::consts::ARCH {
        "aarch64" => ("aarch64", "x86_64"),
        _ => ("x86_64", "aarch64"),
    }
}

fn lock_platform(arch: &str) -> &'static str {
    if arch == "aarch64" {
        "linux-aarch64"
    } else {
        "linux-x86_64"
    }
}

fn wheel(arch: &str) -> String {
    format!("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_{arch}.whl")
}

type Wheels = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A PEP 691 index on 127.0.0.1 for the projects of its wheels (named by
/// their file names), with the files under `/files/`; every request path is
/// recorded.
struct Index {
    port: u16,
    wheels: Wheels,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Index {
    fn start(wheels: Vec<(String, Vec<u8>)>) -> Index {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = server.server_addr().to_ip().unwrap().port();
        let wheels: Wheels = Arc::new(Mutex::new(wheels));
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let (w, h) = (wheels.clone(), hits.clone());
        std::thread::spawn(move || {
            for req in server.incoming_requests() {
                let url = req.url().to_string();
                h.lock().unwrap().push(url.clone());
                let wheels = w.lock().unwrap().clone();
                let project = url
                    .strip_prefix("/simple/")
                    .and_then(|p| p.strip_suffix('/'))
                    .map(str::to_string);
                let of = |name: &str| name.split('-').next().unwrap().replace('_', "-");
                let resp = if let Some(project) =
                    project.filter(|p| wheels.iter().any(|(n, _)| of(n) == *p))
                {
                    let files: Vec<_> = wheels
                        .iter()
                        .filter(|(name, _)| of(name) == project)
                        .map(|(name, body)| {
                            serde_json::json!({
                                "filename": name,
                                "url": format!("http://127.0.0.1:{port}/files/{name}"),
                                "hashes": {"sha256": sha256(body)},
                                "size": body.len(),
                            })
                        })
                        .collect();
                    let json = serde_json::json!({
                        "meta": {"api-version": "1.1"},
                        "name": project,
                        "files": files,
                    });
                    tiny_http::Response::from_data(json.to_string().into_bytes()).with_header(
                        tiny_http::Header::from_bytes(
                            "Content-Type",
                            "application/vnd.pypi.simple.v1+json",
                        )
                        .unwrap(),
                    )
                } else {
                    match wheels
                        .iter()
                        .find(|(name, _)| url == format!("/files/{name}"))
                    {
                        Some((_, body)) => tiny_http::Response::from_data(body.clone()),
                        None => tiny_http::Response::from_data(Vec::new()).with_status_code(404),
                    }
                };
                // One request per connection: a kept-alive socket never
                // holds up the next client of this single-threaded server.
                let resp =
                    resp.with_header(tiny_http::Header::from_bytes("Connection", "close").unwrap());
                let _ = req.respond(resp);
            }
        });
        Index { port, wheels, hits }
    }

    /// The cudart wheel for both Linux architectures.
    fn both() -> Index {
        let (this, other) = arches();
        let w = good_wheel();
        Index::start(vec![(wheel(this), w.clone()), (wheel(other), w)])
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/simple", self.port)
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }

    fn clear(&self) {
        self.hits.lock().unwrap().clear();
    }

    fn downloads(&self) -> usize {
        self.hits()
            .iter()
            .filter(|h| h.starts_with("/files/"))
            .count()
    }
}

/// A project directory pinning 12.4.1.
fn project(env: &TestEnv) -> PathBuf {
    let p = env.home.join("proj");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join(".cuda-version"), "12.4.1\n").unwrap();
    p
}

fn run(env: &TestEnv, idx: &Index, cwd: &Path, args: &[&str]) -> Output {
    env.cmd()
        .current_dir(cwd)
        .env("CUDAENV_PYPI_INDEX", idx.url())
        .args(args)
        .output()
        .unwrap()
}

/// Exit code and both streams, with this run's paths, port and architecture
/// replaced by placeholders.
fn shown(o: &Output, env: &TestEnv, ports: &[u16]) -> String {
    let mut s = format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        code(o),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    s = s.replace(&env.tmp.path().display().to_string(), "[TMP]");
    for (i, p) in ports.iter().enumerate() {
        s = s.replace(&format!("127.0.0.1:{p}"), &format!("[HOST{i}]"));
    }
    let (this, other) = arches();
    s.replace(lock_platform(this), "[PLATFORM]")
        .replace(lock_platform(other), "[OTHER-PLATFORM]")
        .replace(&format!("manylinux2014_{this}"), "manylinux2014_[ARCH]")
        .replace(&format!("manylinux2014_{other}"), "manylinux2014_[OTHER]")
}

fn files_json(root: &Path) -> String {
    std::fs::read_to_string(root.join("versions/12.4.1/.cudaenv/files.json")).unwrap()
}

fn assert_nothing_installed(env: &TestEnv) {
    assert!(
        !env.root.join("versions/12.4.1").exists(),
        "a version was installed"
    );
    assert_eq!(env.ok(&["versions", "--bare"]).trim(), "");
}

#[test]
fn lock_is_byte_identical_and_frozen_installs_ask_no_index() {
    let idx = Index::both();
    let env = TestEnv::new();
    let proj = project(&env);
    let o = run(&env, &idx, &proj, &["lock", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let first = std::fs::read(proj.join("cuda.lock")).unwrap();
    insta::assert_snapshot!("lock_loopback", shown(&o, &env, &[idx.port]));
    insta::assert_snapshot!(
        "lock_file_loopback",
        shown(
            &Output {
                stdout: first.clone(),
                stderr: Vec::new(),
                status: o.status
            },
            &env,
            &[idx.port]
        )
    );
    // The same catalogue gives the same bytes, and `--check` agrees.
    let o = run(&env, &idx, &proj, &["lock"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(std::fs::read(proj.join("cuda.lock")).unwrap(), first);
    let o = run(&env, &idx, &proj, &["lock", "--check"]);
    assert_eq!(code(&o), 0, "{}", text(&o));

    // By default, `install` follows the lock.
    let o = run(&env, &idx, &proj, &["install"]);
    assert_eq!(code(&o), 0, "{}", text(&o));

    // A second machine: `--frozen` fetches the locked file and asks the
    // index nothing.
    let other = TestEnv::new();
    idx.clear();
    let o = run(&other, &idx, &proj, &["install", "--frozen"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let hits = idx.hits();
    assert_eq!(
        hits,
        vec![format!("/files/{}", wheel(arches().0))],
        "{}",
        text(&o)
    );
    assert_eq!(files_json(&env.root), files_json(&other.root));
    for e in [&env, &other] {
        let o = e.run(&["versions", "--check"]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }

    // CI: a restored cache and `--locked --offline` / `--frozen --offline`
    // make no request at all.
    for mode in ["--locked", "--frozen"] {
        let ci = TestEnv::new();
        std::fs::create_dir_all(&ci.root).unwrap();
        let cp = std::process::Command::new("cp")
            .arg("-a")
            .arg(other.root.join("cache"))
            .arg(ci.root.join("cache"))
            .status()
            .unwrap();
        assert!(cp.success());
        idx.clear();
        let o = run(&ci, &idx, &proj, &["install", mode, "--offline"]);
        assert_eq!(code(&o), 0, "{mode}: {}", text(&o));
        assert_eq!(idx.hits(), Vec::<String>::new(), "{mode}");
        assert_eq!(files_json(&ci.root), files_json(&env.root));
    }
}

#[test]
fn a_lock_whose_hash_the_index_no_longer_has_is_refused() {
    let idx = Index::both();
    let env = TestEnv::new();
    let proj = project(&env);
    let o = run(&env, &idx, &proj, &["lock", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // The index now serves other bytes under the same name.
    let changed = zip(&[
        file("nvidia/__init__.py", b""),
        file(
            "nvidia/cuda_runtime/lib/libcudart.so.12",
            b"a rebuilt library",
        ),
        file("nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", b""),
    ]);
    for (_, body) in idx.wheels.lock().unwrap().iter_mut() {
        *body = changed.clone();
    }
    idx.clear();
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    insta::assert_snapshot!("locked_hash_changed", shown(&o, &env, &[idx.port]));
    assert_eq!(idx.downloads(), 0);
    // `lock --check` sees the same difference and writes nothing.
    let before = std::fs::read(proj.join("cuda.lock")).unwrap();
    let o = run(&env, &idx, &proj, &["lock", "--check"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the locked sha256"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(proj.join("cuda.lock")).unwrap(), before);
    idx.clear();
    // The default install follows the lock and refuses the same way.
    let o = run(&env, &idx, &proj, &["install"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    assert_eq!(idx.downloads(), 0);
    assert_nothing_installed(&env);
    // `--frozen` fetches the locked URL, whose bytes no longer match: refused
    // (this shorter file reads as a truncated download, 5; other bytes of the
    // locked size fail the sha256, 4).
    let o = run(&env, &idx, &proj, &["install", "--frozen"]);
    assert!(matches!(code(&o), 4 | 5), "{}", text(&o));
    assert_nothing_installed(&env);
    // Re-locking takes the new file and says what changed; the new lock installs.
    let o = run(&env, &idx, &proj, &["lock"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the locked sha256"),
        "{}",
        text(&o)
    );
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
}

#[test]
fn hostile_locks_download_nothing_and_install_nothing() {
    let idx = Index::both();
    let evil = Index::both();
    let env = TestEnv::new();
    let proj = project(&env);
    let o = run(&env, &idx, &proj, &["lock", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let good = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    let foreign = good.replace(
        &format!("127.0.0.1:{}/files/", idx.port),
        &format!("127.0.0.1:{}/files/", evil.port),
    );
    assert_ne!(foreign, good);
    let (this, _) = arches();
    let cases: Vec<(&str, String, &[&str], i32)> = vec![
        (
            "a URL on another host, --frozen",
            foreign.clone(),
            &["install", "--frozen"],
            24,
        ),
        (
            "malformed TOML",
            good.replace("[stack]", "[stack"),
            &["install"],
            24,
        ),
        (
            "an unknown schema",
            good.replace("version = 1", "version = 7"),
            &["install", "--locked"],
            24,
        ),
        (
            "a path-like file name",
            good.replace(
                &format!("file = \"{}\"", wheel(this)),
                "file = \"../../../.bashrc\"",
            ),
            &["install", "--frozen"],
            24,
        ),
        (
            "an absurd size",
            good.replace(
                &format!("size = {}", good_wheel().len()),
                "size = 999999999999999",
            ),
            &["install", "--frozen"],
            24,
        ),
        (
            "an unknown component",
            good.replace("component = \"cudart\"", "component = \"../evil\""),
            &["install", "--frozen"],
            24,
        ),
    ];
    let mut all = String::new();
    for (what, lock, args, want) in cases {
        assert_ne!(lock, good, "{what}: the edit changed nothing");
        std::fs::write(proj.join("cuda.lock"), &lock).unwrap();
        idx.clear();
        evil.clear();
        let o = run(&env, &idx, &proj, args);
        assert_eq!(code(&o), want, "{what}: {}", text(&o));
        assert_eq!(evil.hits(), Vec::<String>::new(), "{what}");
        assert_eq!(idx.hits(), Vec::<String>::new(), "{what}");
        assert_nothing_installed(&env);
        all.push_str(&format!(
            "## {what}: cudaenv {}\n{}\n",
            args.join(" "),
            shown(&o, &env, &[idx.port, evil.port])
        ));
    }
    insta::assert_snapshot!("hostile_locks", all);

    // Not a regular file: a FIFO (which would block a plain open), a directory,
    // a symlink to a device. Refused at once, nothing requested.
    let lock = proj.join("cuda.lock");
    for (what, make) in [
        ("a FIFO", "mkfifo"),
        ("a directory", "mkdir"),
        ("a link to /dev/zero", "ln"),
    ] {
        let _ = std::fs::remove_file(&lock);
        let _ = std::fs::remove_dir(&lock);
        let mut c = std::process::Command::new(make);
        if make == "ln" {
            c.args(["-s", "/dev/zero"]);
        }
        assert!(c.arg(&lock).status().unwrap().success(), "{what}");
        idx.clear();
        let mut cmd = env.cmd();
        cmd.current_dir(&proj)
            .env("CUDAENV_PYPI_INDEX", idx.url())
            .args(["install", "--frozen"]);
        let o = crate::reliability::support::run_with_deadline(
            &mut cmd,
            std::time::Duration::from_secs(20),
        );
        assert_eq!(code(&o), 24, "{what}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cuda.lock"),
            "{what}: {}",
            text(&o)
        );
        assert_eq!(idx.hits(), Vec::<String>::new(), "{what}");
        assert_nothing_installed(&env);
    }
    let _ = std::fs::remove_file(&lock);
    let _ = std::fs::remove_dir(&lock);

    // `--locked` never uses the lock's URLs: the pinned file comes from the
    // configured index, the other host hears nothing.
    std::fs::write(proj.join("cuda.lock"), &foreign).unwrap();
    idx.clear();
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("they are not used"),
        "{}",
        text(&o)
    );
    assert_eq!(evil.hits(), Vec::<String>::new());
    assert_eq!(idx.downloads(), 1);
}

#[test]
fn a_lock_for_another_platform_installs_nothing_here() {
    let idx = Index::both();
    let env = TestEnv::new();
    let proj = project(&env);
    let (this, other) = arches();
    let o = run(
        &env,
        &idx,
        &proj,
        &["lock", ONLY_CUDART, "--platform", lock_platform(other)],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains(&wheel(other)) && !lock.contains(&wheel(this)),
        "{lock}"
    );
    idx.clear();
    for args in [
        &["install"][..],
        &["install", "--frozen"],
        &["install", "--locked"],
    ] {
        let o = run(&env, &idx, &proj, args);
        assert_eq!(code(&o), 25, "{}", text(&o));
        assert_nothing_installed(&env);
    }
    assert_eq!(idx.downloads(), 0);
    let o = run(&env, &idx, &proj, &["install", "--frozen"]);
    insta::assert_snapshot!("other_platform", shown(&o, &env, &[idx.port]));

    // Both platforms in one lock, one release.
    let both = format!("{},{}", lock_platform(this), lock_platform(other));
    let o = run(&env, &idx, &proj, &["lock", "--platform", &both]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains(&wheel(other)) && lock.contains(&wheel(this)),
        "{lock}"
    );
    let o = run(&env, &idx, &proj, &["install", "--frozen"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
}

#[test]
fn a_lock_that_disagrees_with_cuda_version_is_refused_by_locked() {
    let idx = Index::both();
    let env = TestEnv::new();
    let proj = project(&env);
    let o = run(&env, &idx, &proj, &["lock", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    std::fs::write(proj.join(".cuda-version"), "12.6\n").unwrap();
    idx.clear();
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    insta::assert_snapshot!("disagrees_with_cuda_version", shown(&o, &env, &[idx.port]));
    assert_eq!(idx.hits(), Vec::<String>::new());
    let o = run(&env, &idx, &proj, &["lock", "--check"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    // No lock at all: `--locked` says so (usage); `lock --check` finds it out of date.
    std::fs::remove_file(proj.join("cuda.lock")).unwrap();
    std::fs::write(proj.join(".cuda-version"), "12.4.1\n").unwrap();
    let o = run(&env, &idx, &proj, &["lock", ONLY_CUDART, "--check"]);
    assert_eq!(code(&o), 25, "{}", text(&o));
    assert!(!proj.join("cuda.lock").exists());
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert_nothing_installed(&env);
}

/// A cuDNN 9.1.0.70 wheel for CUDA 12, as NVIDIA lays it out.
fn cudnn_wheel() -> Vec<u8> {
    let lib: Vec<u8> = (0..50_000u32).map(|i| (i * 13 % 251) as u8).collect();
    zip(&[
        file("nvidia/cudnn/lib/libcudnn.so.9", &lib),
        file(
            "nvidia/cudnn/include/cudnn_version.h",
            b"#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n",
        ),
        file("nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD", b""),
    ])
}

#[test]
fn a_stack_with_cudnn_locks_both_releases_and_exports_both_pins() {
    let (this, _) = arches();
    let mut wheels = vec![(wheel(this), good_wheel())];
    wheels.push((
        format!("nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_{this}.whl"),
        cudnn_wheel(),
    ));
    let idx = Index::start(wheels);
    let env = TestEnv::new();
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let o = run(&env, &idx, &proj, &["lock", "12.4.1+cudnn9", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains("spec = \"12.4.1+cudnn9\"")
            && lock.contains("cudnn = \"9.1.0.70\"")
            && lock.contains("component = \"cudnn\""),
        "{lock}"
    );
    // Re-resolved through the index (the exact cuDNN upload), then installed.
    let o = run(&env, &idx, &proj, &["install", "--locked"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        env.root
            .join("versions/12.4.1+cudnn9.1.0.70/lib64/libcudnn.so.9")
            .is_file()
    );
    let o = run(&env, &idx, &proj, &["export", "pip-constraints"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let pins: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(String::from)
        .collect();
    assert_eq!(
        pins,
        [
            "cuda-toolkit==12.4.1",
            "nvidia-cuda-runtime-cu12==12.4.127",
            "nvidia-cudnn-cu12==9.1.0.70"
        ]
    );
}

// ---------------------------------------------------------------------------
// Live PyPI

/// A virtual environment's `pip` resolving `requirement` with optional
/// constraints, without installing: the versions it picked.
fn pip_picks(dir: &Path, requirement: &str, constraints: Option<&Path>) -> Vec<(String, String)> {
    let venv = dir.join("venv");
    if !venv.exists() {
        let ok = std::process::Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status()
            .unwrap();
        assert!(ok.success(), "python3 -m venv failed");
    }
    let report = dir.join("report.json");
    let mut c = std::process::Command::new(venv.join("bin/python"));
    c.args(["-m", "pip", "install", "--dry-run", "--quiet", "--no-deps"])
        .args(["--only-binary", ":all:", "--disable-pip-version-check"])
        .arg("--report")
        .arg(&report)
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env_remove("PIP_INDEX_URL");
    if let Some(c2) = constraints {
        c.arg("-c").arg(c2);
    }
    let o = c.arg(requirement).output().unwrap();
    assert!(o.status.success(), "pip: {}", text(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    r["install"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_string(),
                i["metadata"]["version"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn live_pypi_lock_two_roots_identical_and_pip_and_uv_take_the_locked_versions() {
    let env = TestEnv::new();
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let o = env.run_in(&proj, &["lock", "12.4", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(proj.join(".cuda-version")).unwrap(),
        "12.4\n"
    );
    let lock = std::fs::read_to_string(proj.join("cuda.lock")).unwrap();
    assert!(
        lock.contains("cuda = \"12.4.1\"") && lock.contains("12.4.127"),
        "{lock}"
    );

    let o = env.run_in(&proj, &["install"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let other = TestEnv::new();
    let o = other.run_in(&proj, &["install", "--locked"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(files_json(&env.root), files_json(&other.root));
    for e in [&env, &other] {
        let o = e.run(&["versions", "--check"]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("12.4.1 ok"));
    }

    let o = env.run_in(&proj, &["export", "pip-constraints"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    insta::assert_snapshot!("export_pip_constraints_live", shown(&o, &env, &[]));
    let constraints = env.tmp.path().join("constraints.txt");
    std::fs::write(&constraints, &o.stdout).unwrap();
    let o = env.run_in(&proj, &["export", "uv"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    insta::assert_snapshot!("export_uv_live", shown(&o, &env, &[]));

    let free = pip_picks(env.tmp.path(), "nvidia-cuda-runtime-cu12", None);
    let pinned = pip_picks(
        env.tmp.path(),
        "nvidia-cuda-runtime-cu12",
        Some(&constraints),
    );
    assert_eq!(
        pinned,
        vec![(
            "nvidia-cuda-runtime-cu12".to_string(),
            "12.4.127".to_string()
        )]
    );
    // Without the constraints pip takes a newer build: the pin is what decided.
    assert_ne!(free, pinned);

    // uv (from PyPI, into the same virtual environment): `uv pip compile`
    // with the constraints file, and `uv lock` of a project whose
    // pyproject.toml carries the exported `[tool.uv]` table.
    let venv = env.tmp.path().join("venv");
    let o = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "uv",
        ])
        .env("PIP_CONFIG_FILE", "/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success(), "pip install uv: {}", text(&o));
    let uv = |dir: &Path, args: &[&str]| {
        let o = std::process::Command::new(venv.join("bin/uv"))
            .current_dir(dir)
            .env("UV_CACHE_DIR", env.tmp.path().join("uv-cache"))
            .env_remove("UV_INDEX_URL")
            .env_remove("UV_CONSTRAINT")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "uv {args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let req = env.tmp.path().join("req.in");
    std::fs::write(&req, "nvidia-cuda-runtime-cu12\n").unwrap();
    let compiled = uv(
        env.tmp.path(),
        &[
            "pip",
            "compile",
            "req.in",
            "-c",
            constraints.to_str().unwrap(),
            "--python",
            venv.join("bin/python").to_str().unwrap(),
            "--no-header",
            "--no-annotate",
            "--quiet",
        ],
    );
    assert_eq!(compiled.trim(), "nvidia-cuda-runtime-cu12==12.4.127");
    let uv_project = env.tmp.path().join("uvproj");
    std::fs::create_dir_all(&uv_project).unwrap();
    let o = env.run_in(&proj, &["export", "uv"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    std::fs::write(
        uv_project.join("pyproject.toml"),
        format!(
            "[project]\nname = \"demo\"\nversion = \"0\"\nrequires-python = \">=3.9\"\ndependencies = [\"nvidia-cuda-runtime-cu12\"]\n\n{table}"
        ),
    )
    .unwrap();
    uv(&uv_project, &["lock", "--quiet"]);
    let uv_lock = std::fs::read_to_string(uv_project.join("uv.lock")).unwrap();
    assert!(
        uv_lock
            .contains("[[package]]\nname = \"nvidia-cuda-runtime-cu12\"\nversion = \"12.4.127\"\n"),
        "{uv_lock}"
    );

    // Both Linux platforms from pypi.org's own index pages and markers (no
    // download), one release, byte-identical when locked again.
    let multi = env.home.join("multi");
    std::fs::create_dir_all(&multi).unwrap();
    let args = [
        "lock",
        "12.4",
        ONLY_CUDART,
        "--platform",
        "linux-x86_64,linux-aarch64",
    ];
    let o = env.run_in(&multi, &args);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lock = std::fs::read_to_string(multi.join("cuda.lock")).unwrap();
    for arch in ["x86_64", "aarch64"] {
        assert!(lock.contains(&wheel(arch)), "{lock}");
    }
    let o = env.run_in(&multi, &["lock", "--check"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
}
