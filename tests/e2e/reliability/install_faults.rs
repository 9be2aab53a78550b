//! Faults around `cudaenv install` (issue §2 integrity, §3 crash consistency,
//! §4 concurrency, §6 network), against the loopback PyPI index of the PyPI
//! tests. Every case ends with the same invariants: `versions` lists nothing
//! or a version whose every file has exactly the wheel's bytes, staging is
//! empty once no install runs, and a plain re-run installs correctly.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::zipbuild;
use crate::common::TestEnv;
use crate::pypi::{Mode, ONLY_CUDART, Server, good_wheel, install_from, sha256, versions};

/// The wheel's files as they must appear in the version's tree.
fn expected_files() -> Vec<(&'static str, Vec<u8>)> {
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    vec![
        ("lib64/libcudart.so.12", lib),
        ("include/cuda_runtime_api.h", b"/* api */\n".to_vec()),
    ]
}

fn code(o: &std::process::Output) -> Option<i32> {
    o.status.code()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn staging_entries(env: &TestEnv) -> Vec<PathBuf> {
    std::fs::read_dir(env.root.join("versions/.staging"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `Ok(false)`: nothing listed; `Ok(true)`: 12.4.1 listed and intact.
fn check_store(env: &TestEnv) -> Result<bool, String> {
    let listed = versions(env);
    match listed.trim() {
        "" => {
            if env.root.join("versions/12.4.1").exists()
                && env.root.join("versions/12.4.1/.cudaenv/complete").exists()
            {
                return Err("a complete tree exists but is not listed".into());
            }
            Ok(false)
        }
        "12.4.1" => {
            let check = env.run(&["versions", "--check"]);
            if check.status.code() != Some(0) {
                return Err(format!("versions --check failed: {}", text(&check)));
            }
            let dir = env.root.join("versions/12.4.1");
            for (rel, bytes) in expected_files() {
                match std::fs::read(dir.join(rel)) {
                    Ok(b) if b == bytes => {}
                    Ok(b) => {
                        return Err(format!("{rel}: {} bytes differ from the wheel's", b.len()));
                    }
                    Err(e) => return Err(format!("{rel}: {e}")),
                }
            }
            Ok(true)
        }
        other => Err(format!("unexpected versions listing {other:?}")),
    }
}

fn assert_nothing_installed(env: &TestEnv, what: &str) {
    assert_eq!(check_store(env), Ok(false), "{what}");
    assert!(
        staging_entries(env).is_empty(),
        "{what}: staging left: {:?}",
        staging_entries(env)
    );
    assert!(!env.root.join("versions/12.4.1").exists(), "{what}");
}

// --- §2 integrity -------------------------------------------------------------

/// Served bytes that differ from what the index announced, in every place a
/// corruption can sit: installs nothing, exits 4, and is not retried.
#[test]
fn corrupted_downloads_install_nothing_and_are_not_retried() {
    let good = good_wheel();
    let sha = sha256(&good);
    let flip = |i: usize| {
        let mut w = good.clone();
        w[i] ^= 0x01;
        w
    };
    let n = good.len();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("flip first byte", flip(0)),
        ("flip middle byte", flip(n / 2)),
        ("flip last byte", flip(n - 1)),
        ("truncated to half", good[..n / 2].to_vec()),
        ("last byte missing", good[..n - 1].to_vec()),
        ("one byte appended", [good.as_slice(), b"\0"].concat()),
        (
            "1 MiB appended",
            [good.as_slice(), &vec![7u8; 1 << 20]].concat(),
        ),
        ("empty body", Vec::new()),
    ];
    for (label, body) in cases {
        let srv = Server::start(body, sha.clone(), Mode::Normal);
        let env = TestEnv::new();
        let o = install_from(&env, &srv, &[]);
        assert_eq!(code(&o), Some(4), "{label}: {}", text(&o));
        assert!(
            text(&o).contains(&sha),
            "{label}: the expected hash is not shown: {}",
            text(&o)
        );
        assert_eq!(
            srv.downloads.load(Ordering::SeqCst),
            1,
            "{label}: a hash mismatch was retried"
        );
        assert_nothing_installed(&env, label);
        let cached: Vec<_> = std::fs::read_dir(env.root.join("cache/downloads"))
            .map(|r| r.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            cached.iter().all(|f| {
                let f = f.to_string_lossy();
                !(f.starts_with(&sha) && f.ends_with(".whl"))
            }),
            "{label}: bad bytes kept under the verified name: {cached:?}"
        );
    }
}

fn cache_files(env: &TestEnv, suffix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(env.root.join("cache/downloads"))
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default()
}

/// A cached archive whose bytes changed on disk after it was verified is not
/// trusted: the next install that needs it re-downloads it (or, offline,
/// refuses), and never installs the changed bytes.
#[test]
fn corrupt_cached_download_is_not_trusted() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    // Installs delete their archives once unpacked unless asked to keep them.
    std::fs::create_dir_all(&env.root).unwrap();
    std::fs::write(env.root.join("config.toml"), "keep-downloads = true\n").unwrap();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    let o = env
        .cmd()
        .args(["uninstall", "-y", "12.4.1"])
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    let cached = cache_files(&env, ".whl");
    assert_eq!(cached.len(), 1, "{cached:?}");
    // Corrupt the verified download and drop the unpacked package, so the
    // next install has to unpack the cached archive again.
    let mut bytes = std::fs::read(&cached[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&cached[0], &bytes).unwrap();
    let _ = std::fs::remove_dir_all(env.root.join("cache/pkgs"));

    let offline = install_from(&env, &srv, &["--offline"]);
    if code(&offline) == Some(0) {
        assert_eq!(
            check_store(&env),
            Ok(true),
            "offline install used corrupt bytes"
        );
    } else {
        assert!(matches!(code(&offline), Some(4 | 5)), "{}", text(&offline));
        assert_nothing_installed(&env, "offline with a corrupt cache");
    }
    let online = install_from(&env, &srv, &[]);
    assert_eq!(code(&online), Some(0), "{}", text(&online));
    assert_eq!(check_store(&env), Ok(true));
}

/// A `.part` left with wrong bytes (a previous run, a bad disk) must not end
/// up installed: the install succeeds with the right bytes or fails cleanly,
/// and the run after a failure succeeds.
#[test]
fn corrupt_partial_download_never_installs_bad_bytes() {
    let good = good_wheel();
    let sha = sha256(&good);
    let srv = Server::start(good.clone(), sha.clone(), Mode::Normal);
    let env = TestEnv::new();
    let downloads = env.root.join("cache/downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let name = crate::pypi::wheel_name();
    std::fs::write(
        downloads.join(format!("{sha}-{name}.part")),
        vec![0x5a; good.len() / 3],
    )
    .unwrap();
    let first = install_from(&env, &srv, &[]);
    if code(&first) == Some(0) {
        assert_eq!(check_store(&env), Ok(true));
    } else {
        assert_eq!(code(&first), Some(4), "{}", text(&first));
        assert_nothing_installed(&env, "corrupt .part");
        let again = install_from(&env, &srv, &[]);
        assert_eq!(code(&again), Some(0), "{}", text(&again));
        assert_eq!(check_store(&env), Ok(true));
    }
}

// --- §6 network ---------------------------------------------------------------

#[test]
fn offline_without_cache_names_the_file_and_with_cache_needs_no_network() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &["--offline"]);
    assert_eq!(code(&o), Some(5), "{}", text(&o));
    assert!(
        text(&o).contains(".whl") || text(&o).contains("nvidia"),
        "{}",
        text(&o)
    );
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 0);
    assert_nothing_installed(&env, "offline, cold cache");
    assert_eq!(code(&install_from(&env, &srv, &[])), Some(0));
    assert_eq!(
        env.cmd()
            .args(["uninstall", "-y", "12.4.1"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(0)
    );
    let before = srv.downloads.load(Ordering::SeqCst);
    let o = install_from(&env, &srv, &["--offline"]);
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    assert_eq!(
        srv.downloads.load(Ordering::SeqCst),
        before,
        "offline install downloaded"
    );
    assert_eq!(check_store(&env), Ok(true));
}

/// A server that keeps answering 500: a bounded number of attempts, then
/// exit 5 with the URL, and nothing installed.
#[test]
fn endless_server_errors_are_retried_a_bounded_number_of_times() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Fail500(1_000));
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), Some(5), "{}", text(&o));
    let attempts = srv.downloads.load(Ordering::SeqCst);
    assert!((2..=8).contains(&attempts), "{attempts} attempts");
    assert!(text(&o).contains("127.0.0.1"), "{}", text(&o));
    assert_nothing_installed(&env, "endless 500s");
}

// --- §3 crash consistency -----------------------------------------------------

fn spawn_install(env: &TestEnv, srv: &Server) -> Child {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", "12.4.1", ONLY_CUDART])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c.spawn().unwrap()
}

/// Where an install was when it was killed, judged from the disk.
fn phase(env: &TestEnv) -> &'static str {
    let has = |p: &Path| p.exists();
    if has(&env.root.join("versions/12.4.1/.cudaenv/complete")) {
        return "after the final rename";
    }
    let staged_complete = staging_entries(env)
        .iter()
        .any(|s| s.join(".cudaenv/complete").exists());
    if staged_complete {
        return "before the final rename";
    }
    if env
        .root
        .join("cache/pkgs")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())
    {
        return "during or after extraction";
    }
    if !cache_files(env, ".whl").is_empty() {
        return "after download";
    }
    "before or during download"
}

/// A small deterministic generator (xorshift), so a failing iteration can be
/// replayed from the seed printed with it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Kills installs at random moments with SIGKILL, SIGTERM or SIGINT. The
/// number of kills is `CUDAENV_CRASH_ITERATIONS` (default 16 in the normal
/// suite; `scripts/reliability.sh` runs 240). After each kill: the store
/// invariants hold, staging is cleaned by the next install, and that install
/// succeeds with the right bytes. Half the iterations start from a cold cache.
#[test]
fn installs_killed_at_random_moments_leave_no_partial_version() {
    let iterations: usize = std::env::var("CUDAENV_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let seed: u64 = std::env::var("CUDAENV_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e3779b97f4a7c15);
    let mut rng = Rng(seed);
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    // Calibrate: how long does one cold install take here?
    let t = Instant::now();
    assert_eq!(code(&install_from(&env, &srv, &[])), Some(0));
    let cold = t.elapsed();
    let mut phases: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut signals: std::collections::BTreeMap<&str, usize> = Default::default();
    for i in 0..iterations {
        let o = env
            .cmd()
            .args(["uninstall", "-y", "12.4.1"])
            .output()
            .unwrap();
        assert!(matches!(code(&o), Some(0)), "iteration {i}: {}", text(&o));
        if i % 2 == 0 {
            let _ = std::fs::remove_dir_all(env.root.join("cache"));
        }
        let mut child = spawn_install(&env, &srv);
        // A moment anywhere in [0, 1.3 x a cold install).
        let limit = (cold.as_micros() as u64 * 13 / 10).max(1);
        let at = Duration::from_micros(rng.next() % limit);
        let start = Instant::now();
        while start.elapsed() < at {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let (sig, name) = match rng.next() % 3 {
            0 => (libc::SIGKILL, "SIGKILL"),
            1 => (libc::SIGTERM, "SIGTERM"),
            _ => (libc::SIGINT, "SIGINT"),
        };
        let finished_first = child.try_wait().unwrap().is_some();
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let status = child.wait().unwrap();
        let where_ = if finished_first {
            "finished before the signal"
        } else {
            phase(&env)
        };
        *phases.entry(where_).or_default() += 1;
        *signals.entry(name).or_default() += 1;
        if sig == libc::SIGINT && !finished_first {
            use std::os::unix::process::ExitStatusExt;
            assert!(
                status.code() == Some(130)
                    || status.signal() == Some(libc::SIGINT)
                    || status.code() == Some(0),
                "iteration {i} (seed {seed}): SIGINT gave {status:?}"
            );
        }
        if let Err(e) = check_store(&env) {
            panic!("iteration {i} (seed {seed}, {name} {where_}): {e}");
        }
        let again = install_from(&env, &srv, &[]);
        assert_eq!(
            code(&again),
            Some(0),
            "iteration {i} (seed {seed}): {}",
            text(&again)
        );
        assert_eq!(check_store(&env), Ok(true), "iteration {i} (seed {seed})");
        assert!(
            staging_entries(&env).is_empty(),
            "iteration {i}: {:?}",
            staging_entries(&env)
        );
    }
    eprintln!(
        "crash-consistency: {iterations} kills (seed {seed}, cold install {cold:?}); by phase {phases:?}; by signal {signals:?}"
    );
}

// --- §4 concurrency -----------------------------------------------------------

fn tree_listing(dir: &Path) -> Vec<(String, u64)> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, u64)>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            out.push((
                p.strip_prefix(base).unwrap().display().to_string(),
                if m.is_file() { m.len() } else { 0 },
            ));
            if m.is_dir() {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// 16 installs of the same version at once: one download, 16 successes, one
/// clean tree.
#[test]
fn sixteen_simultaneous_installs_of_one_version() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    let children: Vec<Child> = (0..16)
        .map(|_| {
            let mut c = env.cmd();
            c.env("CUDAENV_PYPI_INDEX", srv.index())
                .args(["install", "12.4.1", ONLY_CUDART])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(code(&o), Some(0), "{}", text(&o));
    }
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 1);
    assert_eq!(check_store(&env), Ok(true));
    assert!(staging_entries(&env).is_empty());
    // The same tree as a lone install builds.
    let lone = TestEnv::new();
    assert_eq!(code(&install_from(&lone, &srv, &[])), Some(0));
    let strip_meta = |v: Vec<(String, u64)>| -> Vec<(String, u64)> {
        v.into_iter()
            .filter(|(p, _)| !p.starts_with(".cudaenv/meta"))
            .collect()
    };
    assert_eq!(
        strip_meta(tree_listing(&env.root.join("versions/12.4.1"))),
        strip_meta(tree_listing(&lone.root.join("versions/12.4.1")))
    );
}

/// CUDA releases with distinct cudart wheels, for installs of different
/// versions at once.
const EIGHT_RELEASES: [(&str, &str); 8] = [
    ("12.0.1", "12.0.146"),
    ("12.1.1", "12.1.105"),
    ("12.2.2", "12.2.140"),
    ("12.3.2", "12.3.101"),
    ("12.4.1", "12.4.127"),
    ("12.5.1", "12.5.82"),
    ("12.6.3", "12.6.77"),
    ("12.8.1", "12.8.90"),
];

/// A cudart library whose bytes say which wheel they came from, so a tree
/// assembled from another version's package would be caught.
fn versioned_lib(wheel_version: &str) -> Vec<u8> {
    let mut b = format!("cudart {wheel_version}\n").into_bytes();
    b.extend((0..100_000u32).map(|i| (i * 11 % 251) as u8));
    b
}

/// 8 different versions installed at once into one root (sharing its cache,
/// package store, staging and shims): 8 successes, each downloaded once, and
/// each tree holds exactly its own wheel's bytes.
#[test]
fn eight_different_versions_at_once() {
    let wheels: Vec<(String, Vec<u8>, String)> = EIGHT_RELEASES
        .iter()
        .map(|(_, wv)| {
            let body = zipbuild::build(
                &[
                    zipbuild::file(
                        "nvidia/cuda_runtime/lib/libcudart.so.12",
                        &versioned_lib(wv),
                    ),
                    zipbuild::file(
                        "nvidia/cuda_runtime/include/cuda_runtime_api.h",
                        wv.as_bytes(),
                    ),
                    zipbuild::file(
                        &format!("nvidia_cuda_runtime_cu12-{wv}.dist-info/RECORD"),
                        b"",
                    ),
                ],
                b"",
            );
            let name = format!(
                "nvidia_cuda_runtime_cu12-{wv}-py3-none-manylinux2014_{}.whl",
                std::env::consts::ARCH
            );
            let sha = sha256(&body);
            (name, body, sha)
        })
        .collect();
    let srv = Server::start_wheels(wheels, Mode::Normal);
    let env = TestEnv::new();
    let children: Vec<(&str, Child)> = EIGHT_RELEASES
        .iter()
        .map(|(cuda, _)| {
            let mut c = env.cmd();
            c.env("CUDAENV_PYPI_INDEX", srv.index())
                .args(["install", cuda, ONLY_CUDART])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            (*cuda, c.spawn().unwrap())
        })
        .collect();
    for (cuda, c) in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(code(&o), Some(0), "{cuda}: {}", text(&o));
    }
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 8);
    let mut want: Vec<&str> = EIGHT_RELEASES.iter().map(|(c, _)| *c).collect();
    want.sort();
    let mut listed: Vec<String> = versions(&env).lines().map(str::to_string).collect();
    listed.sort();
    assert_eq!(listed, want);
    for (cuda, wv) in EIGHT_RELEASES {
        let dir = env.root.join("versions").join(cuda);
        assert!(dir.join(".cudaenv/complete").is_file(), "{cuda}");
        assert_eq!(
            std::fs::read(dir.join("lib64/libcudart.so.12")).ok(),
            Some(versioned_lib(wv)),
            "{cuda}: libcudart is not its own wheel's"
        );
        assert_eq!(
            std::fs::read(dir.join("include/cuda_runtime_api.h")).ok(),
            Some(wv.as_bytes().to_vec()),
            "{cuda}"
        );
        let files: Vec<String> = tree_listing(&dir)
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| !p.starts_with(".cudaenv"))
            .collect();
        assert_eq!(
            files,
            [
                "include",
                "include/cuda_runtime_api.h",
                "lib",
                "lib64",
                "lib64/libcudart.so",
                "lib64/libcudart.so.12",
            ],
            "{cuda}"
        );
    }
    assert!(staging_entries(&env).is_empty());
    let check = env.run(&["versions", "--check"]);
    assert_eq!(code(&check), Some(0), "{}", text(&check));
    assert_eq!(String::from_utf8_lossy(&check.stdout).lines().count(), 8);
}

/// The install holding the version's lock is killed with SIGKILL while it
/// downloads: a waiting install takes the lock at once and finishes.
#[test]
fn lock_holder_killed_with_sigkill_frees_the_lock() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Stall);
    let env = TestEnv::new();
    let mut holder = spawn_install(&env, &srv);
    while srv.downloads.load(Ordering::SeqCst) == 0 {
        assert!(holder.try_wait().unwrap().is_none(), "install ended early");
        std::thread::yield_now();
    }
    let mut waiter = env.cmd();
    waiter
        .env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", "12.4.1", ONLY_CUDART])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let waiter = waiter.spawn().unwrap();
    *srv.mode.lock().unwrap() = Mode::Normal;
    unsafe {
        libc::kill(holder.id() as i32, libc::SIGKILL);
    }
    holder.wait().unwrap();
    let o = waiter.wait_with_output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", text(&o));
    assert_eq!(check_store(&env), Ok(true));
}

/// 100 `cudaenv rehash` at once over a store with a version: all succeed and
/// leave exactly one shim per executable.
#[test]
fn a_hundred_parallel_rehashes() {
    let env = TestEnv::new();
    let v = crate::common::fake_installed(&env.root, "12.4.1", "12.4.1", None);
    for tool in ["nvcc", "ptxas", "cuobjdump"] {
        crate::common::write_executable(&v.join("bin").join(tool), "#!/bin/sh\necho ok\n");
    }
    let children: Vec<Child> = (0..100)
        .map(|_| {
            env.cmd()
                .arg("rehash")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut failed = Vec::new();
    for c in children {
        let o = c.wait_with_output().unwrap();
        if !o.status.success() {
            failed.push(String::from_utf8_lossy(&o.stderr).into_owned());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of 100 failed: {:?}",
        failed.len(),
        failed.first()
    );
    let mut shims: Vec<String> = std::fs::read_dir(env.root.join("shims"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    shims.sort();
    let tools: Vec<&String> = shims.iter().filter(|s| !s.starts_with('.')).collect();
    assert!(tools.iter().any(|s| *s == "nvcc"), "{shims:?}");
    assert!(
        tools
            .iter()
            .all(|s| ["nvcc", "ptxas", "cuobjdump"].contains(&s.as_str())
                || v.join("bin").join(s).exists()),
        "{shims:?}"
    );
    let o = env
        .cmd()
        .args(["exec", "--version", "12.4.1", "--", "nvcc"])
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", text(&o));
}

/// An install and an uninstall of the same version racing, 8 times: each
/// time the store ends consistent (listed and intact, or absent), staging is
/// empty, and a final install succeeds.
#[test]
fn install_racing_uninstall_keeps_the_store_consistent() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    assert_eq!(code(&install_from(&env, &srv, &[])), Some(0));
    for i in 0..8 {
        let uninstall = env
            .cmd()
            .args(["uninstall", "-y", "12.4.1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let install = spawn_install(&env, &srv);
        let u = uninstall.wait_with_output().unwrap();
        let mut install = install;
        let s = install.wait().unwrap();
        assert!(
            s.success(),
            "iteration {i}: install failed during an uninstall"
        );
        assert!(
            u.status.success() || u.status.code() == Some(3),
            "iteration {i}: uninstall: {}",
            String::from_utf8_lossy(&u.stderr)
        );
        assert!(
            check_store(&env).is_ok(),
            "iteration {i}: {:?}",
            check_store(&env)
        );
        assert!(staging_entries(&env).is_empty(), "iteration {i}");
        if check_store(&env) == Ok(false) {
            assert_eq!(code(&install_from(&env, &srv, &[])), Some(0));
        }
    }
    assert_eq!(check_store(&env), Ok(true));
}

/// Shims keep answering while their version is uninstalled under them:
/// every run either works or fails with cudaenv's own error (never a crash
/// or a half-deleted program).
#[test]
fn shims_running_during_uninstall_succeed_or_fail_cleanly() {
    let env = TestEnv::new();
    let v = crate::common::fake_installed(&env.root, "12.4.1", "12.4.1", None);
    crate::common::write_executable(&v.join("bin/nvcc"), "#!/bin/sh\necho nvcc-ok\n");
    assert!(env.cmd().arg("rehash").status().unwrap().success());
    let shim = env.root.join("shims/nvcc");
    assert!(shim.exists());
    let spawn_shim = || {
        Command::new(&shim)
            .env_clear()
            .env("HOME", &env.home)
            .env("CUDAENV_ROOT", &env.root)
            .env("CUDAENV_VERSION", "12.4.1")
            .env("PATH", "/usr/bin:/bin")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()
    };
    // `None`: the shim itself was already gone (rehash after the removal).
    let mut runs: Vec<Option<Child>> = (0..8).map(|_| spawn_shim()).collect();
    let mut uninstall = env
        .cmd()
        .args(["uninstall", "-y", "12.4.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Keep starting shims until the uninstall is over.
    while uninstall.try_wait().unwrap().is_none() && runs.len() < 400 {
        runs.push(spawn_shim());
    }
    assert!(uninstall.wait().unwrap().success());
    runs.extend((0..8).map(|_| spawn_shim()));
    let total = runs.len();
    let mut worked = 0;
    let mut vanished = 0;
    for r in runs {
        let Some(r) = r else { continue };
        let o = r.wait_with_output().unwrap();
        if o.status.success() {
            assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "nvcc-ok");
            worked += 1;
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            // cudaenv's own error (the version is gone), or the interpreter
            // of a script whose file vanished between exec and open: a
            // window removal cannot close for scripts, named by its path.
            let clean = err.contains("error:") || err.contains("12.4.1/bin/nvcc");
            assert!(clean, "unexplained failure: {:?} {err}", o.status);
            if !err.contains("error:") {
                vanished += 1;
            }
        }
    }
    assert!(worked < total, "no shim ran after the version was removed");
    eprintln!(
        "shims during uninstall: {total} started, {worked} ran the program, {vanished} lost the script file mid-exec, the rest got cudaenv's error or found the shim gone"
    );
}
