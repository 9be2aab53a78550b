//! `cudaenv install` from PyPI: live against pypi.org with the small cudart
//! wheel, and against a loopback index (127.0.0.1) for what PyPI cannot show:
//! corrupt and truncated downloads, flaky servers, servers that ignore Range,
//! hostile wheels, concurrent installs and an install killed mid-download.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{TestEnv, text};

/// Leaves only cudart in the runtime profile (one ~1 MB wheel).
pub(crate) const ONLY_CUDART: &str =
    "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";
const WHEEL: &str = "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_ARCH.whl";

pub(crate) fn wheel_name() -> String {
    WHEEL.replace("ARCH", std::env::consts::ARCH)
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub(crate) fn versions(env: &TestEnv) -> String {
    env.ok(&["versions", "--bare"])
}

// ---------------------------------------------------------------------------
// Live PyPI

#[test]
fn live_pypi_install_layout_load_and_offline_reinstall() {
    let env = TestEnv::new();
    let o = env.run(&["install", "12.4.1", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v = env.root.join("versions/12.4.1");
    assert!(v.join("lib64/libcudart.so.12").is_file());
    assert_eq!(
        std::fs::read_link(v.join("lib64/libcudart.so")).unwrap(),
        Path::new("libcudart.so.12")
    );
    assert_eq!(
        std::fs::read_link(v.join("lib")).unwrap(),
        Path::new("lib64")
    );
    assert!(v.join("include/cuda_runtime_api.h").is_file());
    assert!(!v.join("lib64/__init__.py").exists());
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    assert!(
        meta.contains("name = \"cudart\"") && meta.contains("12.4.127"),
        "{meta}"
    );
    assert_eq!(versions(&env).trim(), "12.4.1");

    // The real loader finds it by soname under `exec`; no GPU is needed for this call.
    let o = env.run(&[
        "exec",
        "--version",
        "12.4.1",
        "--",
        "python3",
        "-c",
        "import ctypes; l = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); \
         r = l.cudaRuntimeGetVersion(ctypes.byref(v)); print(r, v.value)",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0 12040");

    // Installing again is a no-op.
    let o = env.run(&["install", "12.4.1", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already installed"));

    // Reinstall from the cache alone.
    env.ok(&["uninstall", "12.4.1", "-y"]);
    let o = env.run(&["install", "12.4.1", ONLY_CUDART, "--offline"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(v.join("lib64/libcudart.so.12").is_file());

    // A cold cache with --offline names what is missing, exit 5.
    let cold = TestEnv::new();
    let o = cold.run(&["install", "12.4.1", ONLY_CUDART, "--offline"]);
    assert_eq!(code(&o), 5, "{}", text(&o));
    assert!(
        text(&o).contains("nvidia-cuda-runtime-cu12"),
        "{}",
        text(&o)
    );
    assert_eq!(versions(&cold).trim(), "");
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let env = TestEnv::new();
    let o = env.run(&["install", "12.4.1", ONLY_CUDART, "--dry-run", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["name"], "12.4.1");
    let a = &plan["artifacts"][0];
    assert_eq!(a["component"], "cudart");
    assert_eq!(a["version"], "12.4.127");
    assert_eq!(a["sha256"].as_str().unwrap().len(), 64);
    assert!(!env.root.join("versions").exists());
}

#[test]
fn nvcc_12_from_pypi_is_explained() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "12.4.1",
        ONLY_CUDART,
        "--with",
        "nvcc",
        "--source",
        "pypi",
        "--dry-run",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("only ptxas and NVVM"), "{}", text(&o));
}

#[test]
fn releases_pypi_lacks_are_refused_clearly() {
    let env = TestEnv::new();
    let o = env.run(&["install", "11.2", "--source", "pypi", "--dry-run"]);
    assert_eq!(code(&o), 7, "{}", text(&o));
    assert!(
        text(&o).contains("11.7, 11.8, 12.x and 13.x"),
        "{}",
        text(&o)
    );
    let o = env.run(&["ls-remote", "--source", "pypi"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("12.4.1") && out.contains("11.8.0") && !out.contains("11.2"));
}

// ---------------------------------------------------------------------------
// Loopback index

/// How the file server misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Normal,
    /// Answers 500 this many times, then serves.
    Fail500(usize),
    /// Always closes the connection halfway through the body.
    Truncate,
    /// Closes halfway the first time; ignores Range afterwards (200, full body).
    TruncateThenIgnoreRange,
    /// Sends half the body, then stalls forever.
    Stall,
    /// Always answers 200 with the whole body.
    IgnoreRange,
    /// Sends half the body, waits this many seconds, then sends the rest.
    Pause(u64),
    /// Holds back the answer to a range that covers this offset until
    /// `GATE` opens.
    Gate(usize),
    /// Never answers a range that covers this offset (the headers, then
    /// nothing, for an hour).
    Hold(usize),
}

/// Opened by the test that uses `Mode::Gate`.
static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) struct Server {
    pub(crate) port: u16,
    /// GETs of the wheel file.
    pub(crate) downloads: Arc<AtomicUsize>,
    pub(crate) mode: Arc<Mutex<Mode>>,
    /// Ranges requested, as sent.
    pub(crate) ranges: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Serves a PEP 691 index with one project whose wheel is `body`;
    /// `index_sha` is the hash the index announces.
    pub(crate) fn start(body: Vec<u8>, index_sha: String, mode: Mode) -> Server {
        Server::start_wheels(vec![(wheel_name(), body, index_sha)], mode)
    }

    /// Serves several wheels of the runtime project (file name, bytes, the
    /// sha256 the index announces), e.g. one per CUDA release.
    pub(crate) fn start_wheels(wheels: Vec<(String, Vec<u8>, String)>, mode: Mode) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let downloads = Arc::new(AtomicUsize::new(0));
        let mode = Arc::new(Mutex::new(mode));
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let wheels = Arc::new(wheels);
        let (d, m, r) = (downloads.clone(), mode.clone(), ranges.clone());
        std::thread::spawn(move || {
            let served = Arc::new(AtomicUsize::new(0));
            for stream in listener.incoming().flatten() {
                let (wheels, d, m, r, served) = (
                    wheels.clone(),
                    d.clone(),
                    m.clone(),
                    r.clone(),
                    served.clone(),
                );
                std::thread::spawn(move || {
                    let _ = handle(stream, port, &wheels, &d, &m, &r, &served);
                });
            }
        });
        Server {
            port,
            downloads,
            mode,
            ranges,
        }
    }

    pub(crate) fn index(&self) -> String {
        format!("http://127.0.0.1:{}/simple", self.port)
    }
}

#[allow(clippy::too_many_arguments)]
fn handle(
    mut s: TcpStream,
    port: u16,
    wheels: &[(String, Vec<u8>, String)],
    downloads: &AtomicUsize,
    mode: &Mutex<Mode>,
    ranges: &Mutex<Vec<String>>,
    served: &AtomicUsize,
) -> std::io::Result<()> {
    let (path, headers) = crate::common::request(&s)?;
    let range = headers
        .into_iter()
        .find(|(k, _)| k == "range")
        .map(|(_, v)| v.to_ascii_lowercase());
    // A project's page lists the wheels whose names start with its
    // normalized name (`nvidia_cudnn_cu12-…` for `nvidia-cudnn-cu12`).
    if let Some(project) = path
        .strip_prefix("/simple/")
        .and_then(|p| p.strip_suffix('/'))
        .filter(|p| !p.is_empty() && !p.contains('/'))
    {
        let prefix = format!("{}-", project.replace('-', "_"));
        let files: Vec<_> = wheels
            .iter()
            .filter(|(name, _, _)| name.starts_with(&prefix))
            .map(|(name, body, sha)| {
                serde_json::json!({
                    "filename": name,
                    "url": format!("http://127.0.0.1:{port}/files/{name}"),
                    "hashes": {"sha256": sha},
                    "size": body.len(),
                })
            })
            .collect();
        if files.is_empty() {
            write!(
                s,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )?;
            return Ok(());
        }
        let json = serde_json::json!({
            "meta": {"api-version": "1.1"},
            "name": project,
            "files": files,
        })
        .to_string();
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
            json.len()
        )?;
        return Ok(());
    }
    let Some((_, body, _)) = wheels
        .iter()
        .find(|(name, _, _)| path == format!("/files/{name}"))
    else {
        write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    };
    downloads.fetch_add(1, Ordering::SeqCst);
    if let Some(rg) = &range {
        ranges.lock().unwrap().push(rg.clone());
    }
    let n = served.fetch_add(1, Ordering::SeqCst);
    let m = *mode.lock().unwrap();
    if let Mode::Fail500(k) = m
        && n < k
    {
        write!(
            s,
            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    }
    let (start, end) = match (&range, m) {
        (_, Mode::TruncateThenIgnoreRange | Mode::IgnoreRange) => (0, body.len()),
        (Some(rg), _) => {
            let spec = rg.strip_prefix("bytes=").unwrap_or("");
            let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
            let a = a.parse::<usize>().unwrap_or(0);
            let b = b.parse::<usize>().map(|b| b + 1).unwrap_or(body.len());
            (a, b.min(body.len()))
        }
        (None, _) => (0, body.len()),
    };
    let ranged = range.is_some() && !matches!(m, Mode::TruncateThenIgnoreRange | Mode::IgnoreRange);
    let part = &body[start..end];
    let status = if ranged {
        "206 Partial Content"
    } else {
        "200 OK"
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n",
        part.len()
    );
    if ranged {
        head.push_str(&format!(
            "Content-Range: bytes {start}-{}/{}\r\n",
            end - 1,
            body.len()
        ));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    let half = part.len() / 2;
    match m {
        Mode::Truncate => s.write_all(&part[..half])?,
        Mode::TruncateThenIgnoreRange if n == 0 => s.write_all(&part[..half])?,
        Mode::Gate(held) if (start..end).contains(&held) => {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !GATE.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            s.write_all(part)?;
        }
        Mode::Hold(held) if (start..end).contains(&held) => {
            s.flush()?;
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        Mode::Stall => {
            s.write_all(&part[..half])?;
            s.flush()?;
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        Mode::Pause(secs) => {
            s.write_all(&part[..half])?;
            s.flush()?;
            std::thread::sleep(std::time::Duration::from_secs(secs));
            s.write_all(&part[half..])?;
        }
        _ => s.write_all(part)?,
    }
    Ok(())
}

// A minimal zip writer (stored members), so tests can build what no
// well-behaved writer would: duplicate names, escaping paths, links out.
pub(crate) struct Member {
    name: String,
    data: Vec<u8>,
    mode: u32,
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

pub(crate) fn zip(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for m in members {
        let off = out.len() as u32;
        let crc = crc32(&m.data);
        let n = m.name.as_bytes();
        let mut local = Vec::new();
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes()); // version needed
        local.extend_from_slice(&0u16.to_le_bytes()); // flags
        local.extend_from_slice(&0u16.to_le_bytes()); // stored
        local.extend_from_slice(&0u32.to_le_bytes()); // time/date
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&(m.data.len() as u32).to_le_bytes());
        local.extend_from_slice(&(m.data.len() as u32).to_le_bytes());
        local.extend_from_slice(&(n.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(n);
        out.extend_from_slice(&local);
        out.extend_from_slice(&m.data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&(0x0300u16 | 20).to_le_bytes()); // made by unix
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u32.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(m.data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(m.data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(n.len() as u16).to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes()); // extra
        central.extend_from_slice(&0u16.to_le_bytes()); // comment
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attrs
        central.extend_from_slice(&(m.mode << 16).to_le_bytes());
        central.extend_from_slice(&off.to_le_bytes());
        central.extend_from_slice(n);
    }
    let cd_off = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_off.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

pub(crate) fn file(name: &str, data: &[u8]) -> Member {
    Member {
        name: name.into(),
        data: data.to_vec(),
        mode: 0o100644,
    }
}

pub(crate) fn good_wheel() -> Vec<u8> {
    // Big enough to stream in several reads.
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    zip(&[
        file("nvidia/__init__.py", b""),
        file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib),
        file(
            "nvidia/cuda_runtime/include/cuda_runtime_api.h",
            b"/* api */\n",
        ),
        file("nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", b""),
    ])
}

pub(crate) fn sha256(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn install_from(env: &TestEnv, server: &Server, extra: &[&str]) -> std::process::Output {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", server.index())
        .args(["install", "12.4.1", ONLY_CUDART])
        .args(extra);
    c.output().unwrap()
}

/// Everything under `dir` (files and links), relative.
/// Every path under the download cache.
fn downloads(env: &TestEnv) -> Vec<String> {
    let mut all = Vec::new();
    walk(&env.root.join("cache/downloads"), &mut all);
    all
}

fn walk(dir: &Path, out: &mut Vec<String>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.display().to_string());
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                walk(&p, out);
            }
        }
    }
}

/// Asserts a failed install left no version and nothing outside the cache,
/// versions' staging area (empty) and lock files.
fn assert_nothing_installed(env: &TestEnv) {
    assert_eq!(versions(env).trim(), "", "a version is listed");
    let mut all = Vec::new();
    walk(env.tmp.path(), &mut all);
    for p in &all {
        assert!(!p.contains("evil"), "hostile file written: {p}");
    }
    let staging = env.root.join("versions/.staging");
    let left: Vec<_> = std::fs::read_dir(&staging)
        .map(|r| r.flatten().collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "staging not cleaned: {left:?}");
    assert!(!env.root.join("versions/12.4.1").exists());
}

#[test]
fn loopback_install_works_and_reuses_the_cache() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        env.root
            .join("versions/12.4.1/lib64/libcudart.so.12")
            .is_file()
    );
    env.ok(&["uninstall", "12.4.1", "-y"]);
    let o = install_from(&env, &srv, &["--offline"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 1);

    // The version shares its bytes with the package store (one inode), and
    // survives `cache clean`.
    use std::os::unix::fs::MetadataExt;
    let lib = env.root.join("versions/12.4.1/lib64/libcudart.so.12");
    let m = std::fs::metadata(&lib).unwrap();
    assert!(m.nlink() >= 2, "not hard-linked");
    let mut store = Vec::new();
    walk(&env.root.join("cache/pkgs"), &mut store);
    let shared = store
        .iter()
        .filter(|p| p.ends_with("lib64/libcudart.so.12"))
        .any(|p| {
            std::fs::metadata(p)
                .map(|s| s.ino() == m.ino())
                .unwrap_or(false)
        });
    assert!(shared, "{store:?}");
    env.ok(&["cache", "clean"]);
    assert!(!env.root.join("cache/pkgs").exists());
    assert_eq!(std::fs::read(&lib).unwrap().len(), 300_000);
}

/// Off a terminal (a log, CI, a pipe) an install is not silent: a line for
/// each artifact when it is done, and the bytes so far every few seconds
/// while a download is under way (here one that pauses for 6 s halfway).
/// `--quiet` prints neither.
#[test]
fn installs_print_progress_lines_off_a_terminal() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Pause(6));
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let progress: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("downloading: ") || l.starts_with("cudart "))
        .collect();
    assert!(progress.len() >= 2, "{err}");
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\(\d+%, [\d.]+ [KMG]?B/s\)", "([PCT]%, [RATE]/s)");
    settings.add_filter(r"[\d.]+ [KMG]?B of", "[BYTES] of");
    settings.bind(|| {
        insta::assert_snapshot!(progress.join("\n"), @r"
        downloading: [BYTES] of 301 KB ([PCT]%, [RATE]/s), 1 of 1 files to go
        cudart 12.4.127: downloaded (301 KB) and unpacked
        ");
    });

    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let quiet = TestEnv::new();
    let o = install_from(&quiet, &srv, &["--quiet"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("downloading: ") && !err.contains("and unpacked"),
        "{err}"
    );
}

/// `install` without a spec installs what `.cuda-version` pins.
#[test]
fn install_without_spec_uses_the_selection() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    std::fs::write(env.home.join(".cuda-version"), "12.4.1\n").unwrap();
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", ONLY_CUDART]);
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(versions(&env).trim(), "12.4.1");
}

/// Large files come as parallel ranges (the threshold lowered so a small
/// wheel takes that path), hashed as the chunks land; a server that ignores
/// Range makes it fall back to one stream.
#[test]
fn parallel_ranges_download_verify_and_fall_back() {
    let w = good_wheel();
    for (mode, ranged) in [(Mode::Normal, true), (Mode::IgnoreRange, false)] {
        let srv = Server::start(w.clone(), sha256(&w), mode);
        let env = TestEnv::new();
        let mut c = env.cmd();
        c.env("CUDAENV_PYPI_INDEX", srv.index())
            .env("CUDAENV_PARALLEL_DOWNLOAD_MIN", "1000")
            .args(["install", "12.4.1", ONLY_CUDART]);
        let o = c.output().unwrap();
        assert_eq!(code(&o), 0, "{mode:?}: {}", text(&o));
        let lib = std::fs::read(env.root.join("versions/12.4.1/lib64/libcudart.so.12")).unwrap();
        assert_eq!(lib.len(), 300_000);
        let n = srv.ranges.lock().unwrap().len();
        if ranged {
            assert!(n >= 4, "{n} ranges: {}", text(&o));
        } else {
            // Range requests were answered with the whole file; then one plain GET.
            assert!(srv.downloads.load(Ordering::SeqCst) > n);
        }
    }
    // A corrupt body is caught on this path too.
    let srv = Server::start(w.clone(), "1".repeat(64), Mode::Normal);
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .env("CUDAENV_PARALLEL_DOWNLOAD_MIN", "1000")
        .args(["install", "12.4.1", ONLY_CUDART]);
    let o = c.output().unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert_nothing_installed(&env);
}

#[test]
fn hash_mismatch_installs_nothing_and_is_not_retried() {
    let w = good_wheel();
    let srv = Server::start(w, "0".repeat(64), Mode::Normal);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("sha256 mismatch"), "{}", text(&o));
    assert_eq!(
        srv.downloads.load(Ordering::SeqCst),
        1,
        "retried a hash mismatch"
    );
    assert_nothing_installed(&env);
    // And the bad bytes are not kept in the cache.
    let all = downloads(&env);
    assert!(all.iter().all(|p| !p.ends_with(".whl")), "{all:?}");
}

#[test]
fn truncated_body_fails_as_network_error() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Truncate);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 5, "{}", text(&o));
    assert!(text(&o).contains("gave up"), "{}", text(&o));
    assert_nothing_installed(&env);
    // It resumed with Range requests rather than starting over each time.
    assert!(!srv.ranges.lock().unwrap().is_empty());
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Fail500(2));
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 3);
}

#[test]
fn a_server_ignoring_range_gets_a_fresh_download() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::TruncateThenIgnoreRange);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        srv.ranges.lock().unwrap().len(),
        1,
        "the retry asked for a range"
    );
    let lib = std::fs::read(env.root.join("versions/12.4.1/lib64/libcudart.so.12")).unwrap();
    assert_eq!(lib.len(), 300_000);
}

fn hostile(members: Vec<Member>, what: &str) {
    let w = zip(&members);
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 4, "{what}: {}", text(&o));
    assert!(text(&o).contains("member"), "{what}: {}", text(&o));
    assert_nothing_installed(&env);
}

#[test]
fn hostile_wheels_are_rejected() {
    let abs = format!("/tmp/cudaenv-evil-{}", std::process::id());
    hostile(
        vec![
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"x"),
            file("../evil", b"x"),
        ],
        "zip-slip",
    );
    hostile(
        vec![
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"x"),
            file("nvidia/cuda_runtime/lib/../../../../evil", b"x"),
        ],
        "zip-slip inside the layout",
    );
    hostile(
        vec![
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"x"),
            file(&abs, b"x"),
        ],
        "absolute path",
    );
    assert!(!Path::new(&abs).exists());
    hostile(
        vec![
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"x"),
            Member {
                name: "nvidia/cuda_runtime/lib/evil".into(),
                data: b"../../../../../../../../tmp".to_vec(),
                mode: 0o120777,
            },
        ],
        "symlink out of the tree",
    );
    hostile(
        vec![
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"x"),
            file("nvidia/cuda_runtime/lib/libcudart.so.12", b"evil"),
        ],
        "duplicate members",
    );
    hostile(
        vec![Member {
            name: "nvidia/cuda_runtime/lib/evil".into(),
            data: Vec::new(),
            mode: 0o020644,
        }],
        "device node",
    );
}

#[test]
fn concurrent_installs_of_one_spec_all_succeed_with_one_download() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            let mut c = env.cmd();
            c.env("CUDAENV_PYPI_INDEX", srv.index())
                .args(["install", "12.4.1", ONLY_CUDART])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    assert_eq!(srv.downloads.load(Ordering::SeqCst), 1);
    assert_eq!(versions(&env).trim(), "12.4.1");
    let staging: Vec<_> = std::fs::read_dir(env.root.join("versions/.staging"))
        .map(|r| r.flatten().collect())
        .unwrap_or_default();
    assert!(staging.is_empty());
}

/// `cudaenv install` of the runtime from `srv`, with every file fetched as
/// parallel ranges however small.
fn ranged_install(env: &TestEnv, srv: &Server) -> std::process::Command {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .env("CUDAENV_PARALLEL_DOWNLOAD_MIN", "1")
        .args(["install", "12.4.1", ONLY_CUDART]);
    c
}

/// `ranged_install` in the background, its output dropped.
fn ranged_install_in_background(env: &TestEnv, srv: &Server) -> std::process::Child {
    ranged_install(env, srv)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The record of finished ranges beside a ranged download's part file
/// (empty while there is none).
fn part_record(env: &TestEnv) -> String {
    let all = downloads(env);
    all.iter()
        .find(|p| p.ends_with(".part.ranges"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// A wheel large enough to be fetched as several ranges (with
/// `CUDAENV_PARALLEL_DOWNLOAD_MIN=1`): the runtime library (300 kB) and a
/// header (400 kB), stored. Returns the wheel, the library and the header.
fn library_and_filler_wheel() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let filler: Vec<u8> = (0..400_000u32).map(|i| (i * 13 % 241) as u8).collect();
    let w = zip(&[
        file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib),
        file("nvidia/cuda_runtime/include/filler.h", &filler),
        file("nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", b""),
    ]);
    (w, lib, filler)
}

/// A wheel is unpacked while it downloads: with one range of it held back by
/// the server, the library (whose bytes are all there) is already written in
/// the package being unpacked; the install then finishes with the same bytes.
#[test]
fn wheel_members_are_unpacked_while_the_download_is_incomplete() {
    let (w, lib, filler) = library_and_filler_wheel();
    // A byte in the middle of the filler's data: its range waits.
    let filler_data = 30
        + "nvidia/cuda_runtime/lib/libcudart.so.12".len()
        + lib.len()
        + 30
        + "nvidia/cuda_runtime/include/filler.h".len();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Gate(filler_data + 200_000));
    let env = TestEnv::new();
    let mut child = ranged_install(&env, &srv)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pkgs = env.root.join("cache/pkgs");
    let unpacked_early = || {
        let mut all = Vec::new();
        walk(&pkgs, &mut all);
        all.iter().map(Path::new).any(|p| {
            p.to_string_lossy().contains("/.tmp-")
                && p.ends_with("lib64/libcudart.so.12")
                && std::fs::read(p).is_ok_and(|b| b == lib)
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = false;
    while std::time::Instant::now() < deadline {
        if unpacked_early() {
            seen = true;
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "install ended before the held range was sent"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    GATE.store(true, Ordering::SeqCst);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        seen,
        "the library was not unpacked before the download ended"
    );
    assert_eq!(
        std::fs::read(env.root.join("versions/12.4.1/lib64/libcudart.so.12")).unwrap(),
        lib
    );
    assert_eq!(
        std::fs::read(env.root.join("versions/12.4.1/include/filler.h")).unwrap(),
        filler
    );
    let check = env.run(&["versions", "--check"]);
    assert_eq!(code(&check), 0, "{}", text(&check));
}

/// A ranged download cut short (the install killed while one range is held
/// back by the server) goes on from where it was: the next install asks only
/// for the range it lacked, and installs the same bytes.
#[test]
fn an_interrupted_ranged_download_resumes_from_its_finished_ranges() {
    let (w, lib, _) = library_and_filler_wheel();
    let spans = cudaenv::install::fetch::spans(w.len() as u64);
    assert!(spans.len() > 3, "{spans:?}");
    let held = spans[spans.len() / 2];
    let srv = Server::start(w.clone(), sha256(&w), Mode::Hold(held.0 as usize));
    let env = TestEnv::new();
    let mut child = ranged_install_in_background(&env, &srv);
    // The download's record of finished ranges: every range but the held one.
    let finished = || part_record(&env).lines().count().saturating_sub(1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while finished() < spans.len() - 1 {
        assert!(child.try_wait().unwrap().is_none(), "install ended early");
        assert!(
            std::time::Instant::now() < deadline,
            "the other ranges never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    assert_eq!(versions(&env).trim(), "");

    srv.ranges.lock().unwrap().clear();
    *srv.mode.lock().unwrap() = Mode::Normal;
    let out = ranged_install(&env, &srv).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(
        *srv.ranges.lock().unwrap(),
        [format!("bytes={}-{}", held.0, held.1 - 1)],
        "asked again for ranges it had"
    );
    assert_eq!(
        std::fs::read(env.root.join("versions/12.4.1/lib64/libcudart.so.12")).unwrap(),
        lib
    );
    // Nothing of the interrupted download is left behind.
    let all = downloads(&env);
    assert!(
        all.iter()
            .all(|p| !p.ends_with(".part") && !p.ends_with(".ranges")),
        "{all:?}"
    );
}

/// What a ranged download's record says is there, range by range: the
/// last line about a range wins (`gone a b` after `a b`: its bytes were let
/// go of).
fn recorded_ranges(record: &str) -> std::collections::BTreeMap<String, bool> {
    let mut there = std::collections::BTreeMap::new();
    for line in record.lines().skip(1) {
        match line.strip_prefix("gone ") {
            Some(range) => there.insert(range.to_string(), false),
            None => there.insert(line.to_string(), true),
        };
    }
    there
}

/// A download that is not kept lets go of what the unpack is done with:
/// killed with one range held back, its record says which ranges are gone,
/// and the next install asks for exactly those and the held one, and
/// installs the same bytes. Nothing of it is left in the cache after.
#[test]
fn a_killed_install_fetches_again_what_it_had_let_go_of_and_what_it_lacked() {
    let first: Vec<u8> = (0..5_500_000u32).map(|i| (i * 31 % 253) as u8).collect();
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let last: Vec<u8> = (0..6_000_000u32).map(|i| (i * 17 % 239) as u8).collect();
    let w = zip(&[
        file("nvidia/cuda_runtime/include/first.h", &first),
        file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib),
        file("nvidia/cuda_runtime/include/last.h", &last),
        file("nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", b""),
    ]);
    let spans = cudaenv::install::fetch::spans(w.len() as u64);
    // The last range before the tail: inside last.h, which then waits, while
    // first.h is unpacked and its bytes let go of.
    let held = spans[spans.len() - 2];
    let srv = Server::start(w.clone(), sha256(&w), Mode::Hold(held.0 as usize));
    let env = TestEnv::new();
    let mut child = ranged_install_in_background(&env, &srv);
    let record = || part_record(&env);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let there = recorded_ranges(&record());
        if there.len() == spans.len() - 1 && there.values().any(|t| !t) {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "install ended early");
        assert!(
            std::time::Instant::now() < deadline,
            "no range was let go of: {}",
            record()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    let there = recorded_ranges(&record());
    let mut lacking: Vec<String> = spans
        .iter()
        .map(|(a, b)| format!("{a} {b}"))
        .filter(|r| there.get(r) != Some(&true))
        .map(|r| {
            let (a, b) = r.split_once(' ').unwrap();
            format!("bytes={a}-{}", b.parse::<u64>().unwrap() - 1)
        })
        .collect();
    assert!(
        lacking.len() >= 2 && lacking.len() < spans.len() - 1,
        "some ranges gone, some kept: {lacking:?}"
    );

    srv.ranges.lock().unwrap().clear();
    *srv.mode.lock().unwrap() = Mode::Normal;
    let out = ranged_install(&env, &srv).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut asked = srv.ranges.lock().unwrap().clone();
    asked.sort();
    lacking.sort();
    assert_eq!(
        asked, lacking,
        "asked for what was gone or missing, nothing else"
    );
    let tree = env.root.join("versions/12.4.1");
    assert_eq!(
        std::fs::read(tree.join("lib64/libcudart.so.12")).unwrap(),
        lib
    );
    assert_eq!(std::fs::read(tree.join("include/first.h")).unwrap(), first);
    assert_eq!(std::fs::read(tree.join("include/last.h")).unwrap(), last);
    let all = downloads(&env);
    assert!(all.iter().all(|p| !p.ends_with(".whl")), "{all:?}");
}

/// Bytes are let go of only once nothing will read them: the local header of
/// a member the layout skips (checked at the end) keeps its bytes, even when
/// the member around it was unpacked long before.
#[test]
fn letting_go_keeps_the_local_headers_still_to_be_checked() {
    let first: Vec<u8> = (0..9_000_000u32).map(|i| (i * 31 % 253) as u8).collect();
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let w = zip(&[
        file("nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", b""),
        file("nvidia/cuda_runtime/include/first.h", &first),
        file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib),
    ]);
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let out = ranged_install(&env, &srv).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let tree = env.root.join("versions/12.4.1");
    assert_eq!(std::fs::read(tree.join("include/first.h")).unwrap(), first);
    let all = downloads(&env);
    assert!(
        all.iter()
            .all(|p| !p.ends_with(".whl") && !p.ends_with(".part")),
        "{all:?}"
    );
}

/// The same ranged download with `keep-downloads`: nothing is let go of,
/// and the cache keeps the whole wheel, verified.
#[test]
fn a_kept_ranged_download_is_cached_whole() {
    let big: Vec<u8> = (0..9_000_000u32).map(|i| (i * 31 % 253) as u8).collect();
    let lib: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let w = zip(&[
        file("nvidia/cuda_runtime/include/big.h", &big),
        file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib),
    ]);
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let out = ranged_install(&env, &srv)
        .env("CUDAENV_KEEP_DOWNLOADS", "1")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let all = downloads(&env);
    let kept: Vec<_> = all.iter().filter(|p| p.ends_with(".whl")).collect();
    assert_eq!(kept.len(), 1, "{all:?}");
    assert_eq!(
        std::fs::read(kept[0]).unwrap(),
        w,
        "the cached wheel is whole"
    );
}

/// A reinstall takes its file list's CRC-32s from the package store's list
/// instead of reading the files again: damage done to a stored package after
/// it was unpacked then shows in `versions --check` (had the files been read,
/// the damaged bytes would have been recorded as the truth).
#[test]
fn reinstall_takes_file_crcs_from_the_package_list_not_the_bytes() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    let out = install_from(&env, &srv, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let check = env.run(&["versions", "--check"]);
    assert_eq!(code(&check), 0, "{}", text(&check));
    // Same size, other bytes, same inode (what a stray tool or a bad disk does).
    let mut all = Vec::new();
    walk(&env.root.join("cache/pkgs"), &mut all);
    let lib = all
        .iter()
        .find(|p| p.ends_with("lib64/libcudart.so.12"))
        .expect("the package holds the library");
    let mut bytes = std::fs::read(lib).unwrap();
    bytes[1000] ^= 0xff;
    std::fs::OpenOptions::new()
        .write(true)
        .open(lib)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .unwrap();
    let out = env.run(&["uninstall", "-y", "12.4.1"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = install_from(&env, &srv, &["--offline"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let check = env.run(&["versions", "--check"]);
    assert_eq!(code(&check), 4, "{}", text(&check));
    assert!(text(&check).contains("libcudart.so.12"), "{}", text(&check));
}

fn start_stalled_install(env: &TestEnv, srv: &Server) -> std::process::Child {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", "12.4.1", ONLY_CUDART])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let part_exists = || {
        let all = downloads(env);
        all.iter().any(|p| p.ends_with(".part"))
    };
    while srv.downloads.load(Ordering::SeqCst) == 0 || !part_exists() {
        assert!(child.try_wait().unwrap().is_none(), "install ended early");
        std::thread::yield_now();
    }
    child
}

#[test]
fn ctrl_c_exits_130_and_removes_staging() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Stall);
    let env = TestEnv::new();
    let mut child = start_stalled_install(&env, &srv);
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_nothing_installed(&env);
}

#[test]
fn killed_install_leaves_nothing_and_the_next_one_succeeds() {
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Stall);
    let env = TestEnv::new();
    // Returns once the download is under way (the server is stalling it).
    let mut child = start_stalled_install(&env, &srv);
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    assert_eq!(versions(&env).trim(), "");

    *srv.mode.lock().unwrap() = Mode::Normal;
    let o = install_from(&env, &srv, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(versions(&env).trim(), "12.4.1");
    let staging: Vec<_> = std::fs::read_dir(env.root.join("versions/.staging"))
        .map(|r| r.flatten().collect())
        .unwrap_or_default();
    assert!(staging.is_empty(), "{staging:?}");
}

/// Without the package index (an offline laptop, an air-gapped node), `ls-remote`
/// still lists what cudaenv's embedded data knows and says what is missing; an
/// explicit `--source pypi` asked for the index, so it fails with the network code.
#[test]
fn ls_remote_without_the_index_lists_embedded_data() {
    let env = TestEnv::new();
    // A port that refuses connections: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let index = format!("http://127.0.0.1:{port}/simple");
    let o = env
        .cmd()
        .env("CUDAENV_PYPI_INDEX", &index)
        .args(["ls-remote", "11"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("11.8.0"), "{stdout}");
    assert!(stdout.contains("11.2.2"), "{stdout}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("cuDNN"),
        "{stderr}"
    );

    let o = env
        .cmd()
        .env("CUDAENV_PYPI_INDEX", &index)
        .args(["ls-remote", "11", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 5, "{}", text(&o));
}
