//! The small reads every command makes besides its downloads (NVIDIA's
//! manifests and their listings for `update`, index pages, a dry run's look
//! at a wheel's last bytes) go through one HTTP layer, and so keep its
//! rules: a server error is tried again, an answer is bounded, a stalled
//! server is given up on within two windows, and a `file://` mirror is read
//! like a server. A loopback server that misbehaves on purpose stands in for
//! NVIDIA's.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::loopback::{Index, Wheel};
use super::support::run_with_deadline;
use crate::common::{TestEnv, text};
use crate::pypi::{ONLY_CUDART, good_wheel, wheel_name};

const REF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/inputs/manifests");
const REDIST: &str = "/compute/cuda/redist/";

/// What the server does with one request.
enum Reply {
    /// A status with an empty body.
    Status(&'static str),
    /// 200 with these bytes and their length.
    Bytes(Vec<u8>),
    /// 200 and zeros without a `Content-Length`, until the client hangs up.
    Endless,
    /// 200 announcing this `Content-Length`, then zeros until the client hangs up.
    Announced(u64),
    /// Reads the request and never answers.
    Stall,
}

/// A server on 127.0.0.1 answering each request with `answer(path, n)`,
/// `n` the requests for that path before this one. Returns its port and the
/// paths asked for, in order.
fn serve(answer: fn(&str, usize) -> Reply) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = asked.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let _ = reply(s, answer, &log);
            });
        }
    });
    (port, asked)
}

fn reply(
    mut s: TcpStream,
    answer: fn(&str, usize) -> Reply,
    log: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let (path, _) = crate::common::request(&s)?;
    let before = {
        let mut log = log.lock().unwrap();
        let n = log.iter().filter(|p| **p == path).count();
        log.push(path.clone());
        n
    };
    let zeros = |s: &mut TcpStream| -> std::io::Result<()> {
        let block = vec![0u8; 1 << 16];
        loop {
            s.write_all(&block)?;
        }
    };
    match answer(&path, before) {
        Reply::Status(status) => write!(
            s,
            "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
        Reply::Bytes(b) => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                b.len()
            )?;
            s.write_all(&b)
        }
        Reply::Endless => {
            write!(s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
            zeros(&mut s)
        }
        Reply::Announced(len) => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
            )?;
            zeros(&mut s)
        }
        Reply::Stall => {
            std::thread::sleep(Duration::from_secs(600));
            Ok(())
        }
    }
}

/// NVIDIA's 12.4.1 manifest, the one cudaenv pins.
fn pinned_manifest() -> Vec<u8> {
    std::fs::read(format!("{REF}/cuda/redistrib_12.4.1.json")).unwrap()
}

/// `update` against the server at `port`, with a PyPI index that has no
/// release list (so the outcome is NVIDIA's part alone).
fn update(env: &TestEnv, port: u16, timeout: &str) -> (std::process::Output, Duration) {
    let mut c = env.cmd();
    c.env("CUDAENV_NVIDIA_MIRROR", format!("http://127.0.0.1:{port}"))
        .env("CUDAENV_PYPI_INDEX", "file:///nonexistent/simple")
        .env("CUDAENV_HTTP_TIMEOUT", timeout)
        .arg("update");
    let started = Instant::now();
    let o = run_with_deadline(&mut c, Duration::from_secs(120));
    (o, started.elapsed())
}

/// The exit code and what `update` said, the port as `[PORT]`; a stall's
/// reason as `[NO ANSWER]`, since reqwest's read timeout and the window
/// (both 1 s here) race to say it.
fn shown(o: &std::process::Output, port: u16) -> String {
    let url = format!("http://127.0.0.1:{port}{REDIST}");
    format!(
        "[exit {}]\n{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr)
    )
    .replace(
        &format!("error sending request for url ({url}): operation timed out"),
        "[NO ANSWER]",
    )
    .replace("no answer within 1 s", "[NO ANSWER]")
    .replace(&port.to_string(), "[PORT]")
}

/// Defect: `update` gave up on NVIDIA's server at its first 503 (or reset
/// connection), where every other request of cudaenv tries again. Each
/// path answers 503 once: the listing and the manifest are read on the
/// second try, and the pinned manifest is verified.
#[test]
fn update_tries_again_where_nvidias_server_failed_once() {
    let (port, asked) = serve(|path, before| match (path, before) {
        (_, 0) => Reply::Status("503 Service Unavailable"),
        (REDIST, _) => {
            Reply::Bytes(b"<a href='redistrib_12.4.1.json'>redistrib_12.4.1.json</a>".to_vec())
        }
        ("/compute/cuda/redist/redistrib_12.4.1.json", _) => Reply::Bytes(pinned_manifest()),
        _ => Reply::Status("404 Not Found"),
    });
    let env = TestEnv::new();
    let (o, _) = update(&env, port, "30");
    insta::assert_snapshot!("update_after_a_server_error", shown(&o, port));
    let asked = asked.lock().unwrap();
    for path in [REDIST, "/compute/cuda/redist/redistrib_12.4.1.json"] {
        assert_eq!(asked.iter().filter(|p| *p == path).count(), 2, "{asked:?}");
    }
}

/// A manifest is read into memory, so it is bounded (16 MiB; NVIDIA's are
/// under 200 KB): one that never ends is cut off there, one whose
/// `Content-Length` is past it is refused before its body, and `update`
/// says which and stores neither.
#[test]
fn update_stops_reading_a_manifest_past_what_a_manifest_can_be() {
    let (port, _) = serve(|path, _| match path {
        REDIST => Reply::Bytes(
            b"<a href='redistrib_12.9.0.json'>x</a> <a href='redistrib_12.9.1.json'>y</a>".to_vec(),
        ),
        "/compute/cuda/redist/redistrib_12.9.0.json" => Reply::Endless,
        "/compute/cuda/redist/redistrib_12.9.1.json" => Reply::Announced(1 << 40),
        _ => Reply::Status("404 Not Found"),
    });
    let env = TestEnv::new();
    let (o, _) = update(&env, port, "30");
    insta::assert_snapshot!("update_manifest_past_its_bound", shown(&o, port));
    assert!(!env.root.join("cache/manifests/cuda").exists());
}

/// A listing that never comes ends `update` within two windows of
/// `CUDAENV_HTTP_TIMEOUT` and the backoff between them, naming the stall.
#[test]
fn update_gives_up_on_a_stalled_server_within_two_windows() {
    let (port, asked) = serve(|_, _| Reply::Stall);
    let env = TestEnv::new();
    let (o, took) = update(&env, port, "1");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(20),
        "took {took:?}"
    );
    insta::assert_snapshot!("update_from_a_stalled_server", shown(&o, port));
    assert_eq!(*asked.lock().unwrap(), vec![REDIST, REDIST]);
}

/// The unpacked size of every member of a zip, from its central directory.
fn unpacked_size(wheel: &[u8]) -> u64 {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(wheel)).unwrap();
    (0..z.len()).map(|i| z.by_index(i).unwrap().size()).sum()
}

/// Defect: a dry run from a mirror on disk (`file://`) could not say what
/// the version takes on disk: the wheel's central directory was asked of
/// the network only. It is read from the mirror's file like from a server.
#[test]
fn a_dry_run_from_a_mirror_on_disk_knows_the_unpacked_size() {
    let idx = Index::start(vec![Wheel::new(
        "nvidia-cuda-runtime-cu12",
        &wheel_name(),
        good_wheel(),
    )]);
    let env = TestEnv::new();
    let dir = env.path("air gap");
    let o = env
        .cmd()
        .env("CUDAENV_PYPI_INDEX", idx.url())
        .arg("mirror")
        .arg(&dir)
        .args(["12.4.1", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let site = TestEnv::new();
    let o = site
        .cmd()
        .env("CUDAENV_PYPI_INDEX", file_index(&dir))
        .args(["install", "12.4.1", ONLY_CUDART, "--dry-run", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["size"]["unpacked_unknown"], 0, "{plan}");
    assert_eq!(
        plan["size"]["unpacked_bytes"],
        unpacked_size(&good_wheel()),
        "{plan}"
    );
}

fn file_index(dir: &Path) -> String {
    format!("file://{}/pypi/simple", dir.display())
}
