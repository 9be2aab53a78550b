//! The network as an adversary: an index that needs a login (whose
//! credentials must never be shown or written), and servers that accept a
//! connection and then never answer, or answer a byte at a time (which must
//! end the command in bounded time). Loopback servers (127.0.0.1) serve the
//! same wheel as the PyPI tests.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{TestEnv, request, text};
use crate::pypi::{ONLY_CUDART, good_wheel, sha256, wheel_name};

const USER: &str = "ci-reader";
const SECRET: &str = "s3cr3t-T0KEN-9f2c";

fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn respond(s: &mut TcpStream, status: &str, ctype: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)
}

/// How the index's project page links its wheel.
#[derive(Clone, Copy)]
enum Links {
    /// `../../files/NAME` (PEP 503 HTML).
    Relative,
    /// `http://127.0.0.1:PORT/files/NAME` (PEP 691 JSON), same origin.
    Absolute,
}

/// An index that answers 401 to every request without the Basic credentials.
fn start_authenticated(links: Links, wheel_status: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let wheel = good_wheel();
    let sha = sha256(&wheel);
    let name = wheel_name();
    let expected = format!("Basic {}", base64(format!("{USER}:{SECRET}").as_bytes()));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (wheel, sha, name, expected) =
                (wheel.clone(), sha.clone(), name.clone(), expected.clone());
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut s = stream;
                let (path, headers) = request(&s)?;
                let authorized = headers
                    .iter()
                    .any(|(k, v)| k == "authorization" && *v == expected);
                if !authorized {
                    return respond(&mut s, "401 Unauthorized", "text/plain", b"login");
                }
                if path == "/simple/nvidia-cuda-runtime-cu12/" {
                    return match links {
                        Links::Relative => {
                            let html = format!(
                                "<html><body><a href=\"../../files/{name}#sha256={sha}\">{name}</a></body></html>"
                            );
                            respond(&mut s, "200 OK", "text/html", html.as_bytes())
                        }
                        Links::Absolute => {
                            let json = serde_json::json!({
                                "meta": {"api-version": "1.1"},
                                "name": "nvidia-cuda-runtime-cu12",
                                "files": [{
                                    "filename": name,
                                    "url": format!("http://127.0.0.1:{port}/files/{name}"),
                                    "hashes": {"sha256": sha},
                                    "size": wheel.len(),
                                }],
                            })
                            .to_string();
                            respond(
                                &mut s,
                                "200 OK",
                                "application/vnd.pypi.simple.v1+json",
                                json.as_bytes(),
                            )
                        }
                    };
                }
                if path == format!("/files/{name}") {
                    return match wheel_status {
                        "200 OK" => respond(&mut s, "200 OK", "application/zip", &wheel),
                        other => respond(&mut s, other, "text/plain", b""),
                    };
                }
                respond(&mut s, "404 Not Found", "text/plain", b"")
            });
        }
    });
    port
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            files_containing(&p, needle, out);
        } else if ft.is_file()
            && let Ok(bytes) = std::fs::read(&p)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            out.push(p.display().to_string());
        }
    }
}

fn assert_secret_nowhere(env: &TestEnv, outputs: &[&std::process::Output]) {
    for o in outputs {
        assert!(
            !text(o).contains(SECRET),
            "the secret was printed:\n{}",
            text(o)
        );
    }
    let mut leaked = Vec::new();
    files_containing(&env.root, SECRET, &mut leaked);
    files_containing(&env.home, SECRET, &mut leaked);
    assert!(leaked.is_empty(), "the secret was written to {leaked:?}");
}

/// Defect 1: with the credentials in the index URL, relative and absolute
/// same-origin links download with them, and the secret reaches no output
/// (human, `--json`, errors) and no file (meta.toml, cuda.lock, caches).
#[test]
fn credentials_never_reach_output() {
    for links in [Links::Relative, Links::Absolute] {
        let port = start_authenticated(links, "200 OK");
        let index = format!("http://{USER}:{SECRET}@127.0.0.1:{port}/simple");
        let env = TestEnv::new();
        let project = env.home.join("proj");
        std::fs::create_dir_all(&project).unwrap();
        let run = |args: &[&str]| {
            let mut c = env.cmd();
            c.current_dir(&project)
                .env("CUDAENV_PYPI_INDEX", &index)
                .args(args);
            c.output().unwrap()
        };
        let dry = run(&["install", "12.4.1", ONLY_CUDART, "--dry-run", "--json"]);
        assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
        let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
        let url = plan["artifacts"][0]["url"].as_str().unwrap().to_string();
        assert!(
            url.starts_with(&format!("http://{USER}:****@127.0.0.1:{port}/")),
            "{url}"
        );
        let human = run(&["install", "12.4.1", ONLY_CUDART, "--dry-run"]);
        assert_eq!(human.status.code(), Some(0), "{}", text(&human));
        let install = run(&["install", "12.4.1", ONLY_CUDART]);
        assert_eq!(install.status.code(), Some(0), "{}", text(&install));
        assert!(
            env.root
                .join("versions/12.4.1/lib64/libcudart.so.12")
                .is_file()
        );
        let meta =
            std::fs::read_to_string(env.root.join("versions/12.4.1/.cudaenv/meta.toml")).unwrap();
        assert!(
            meta.contains(&format!("url = \"http://127.0.0.1:{port}/files/")),
            "{meta}"
        );

        // A lock records no credentials; a frozen install from it, with a
        // cold cache, gets them from the configured index.
        std::fs::write(project.join(".cuda-version"), "12.4.1\n").unwrap();
        let lock = run(&["lock", ONLY_CUDART]);
        assert_eq!(lock.status.code(), Some(0), "{}", text(&lock));
        let locked = std::fs::read_to_string(project.join("cuda.lock")).unwrap();
        assert!(
            locked.contains(&format!("http://127.0.0.1:{port}/files/")),
            "{locked}"
        );
        std::fs::remove_dir_all(env.root.join("cache")).unwrap();
        let uninstall = run(&["uninstall", "12.4.1", "-y"]);
        assert_eq!(uninstall.status.code(), Some(0), "{}", text(&uninstall));
        let frozen = run(&["install", "--frozen"]);
        assert_eq!(frozen.status.code(), Some(0), "{}", text(&frozen));
        assert!(
            env.root
                .join("versions/12.4.1/lib64/libcudart.so.12")
                .is_file()
        );
        assert_secret_nowhere(&env, &[&dry, &human, &install, &lock, &frozen, &uninstall]);
    }
}

/// Defect 1, the error path: a failing download names the URL with its
/// credentials masked.
#[test]
fn credentials_never_reach_error_messages() {
    let port = start_authenticated(Links::Relative, "403 Forbidden");
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env(
        "CUDAENV_PYPI_INDEX",
        format!("http://{USER}:{SECRET}@127.0.0.1:{port}/simple"),
    )
    .args(["install", "12.4.1", ONLY_CUDART]);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("http://{USER}:****@127.0.0.1:{port}/files/")),
        "{}",
        text(&o)
    );
    assert_secret_nowhere(&env, &[&o]);
}

/// A server that accepts connections; `serve` runs for each on its thread.
fn start(serve: fn(TcpStream, u16)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || serve(s, port));
        }
    });
    port
}

/// Accepts, reads the request, and never answers.
fn stall(s: TcpStream, _: u16) {
    let _ = request(&s);
    std::thread::sleep(Duration::from_secs(600));
    drop(s);
}

/// Answers with headers, then one byte every 200 ms (5 bytes per second).
fn trickle(mut s: TcpStream, _: u16) {
    let _ = request(&s);
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n"
    );
    for _ in 0..3000 {
        if s.write_all(b" ").and_then(|_| s.flush()).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The index answers; the wheel trickles.
fn trickle_wheel(mut s: TcpStream, port: u16) {
    let Ok((path, _)) = request(&s) else { return };
    let wheel = good_wheel();
    let name = wheel_name();
    if path == "/simple/nvidia-cuda-runtime-cu12/" {
        let html = format!(
            "<a href=\"http://127.0.0.1:{port}/files/{name}#sha256={}\">{name}</a>",
            sha256(&wheel)
        );
        let _ = respond(&mut s, "200 OK", "text/html", html.as_bytes());
        return;
    }
    if path != format!("/files/{name}") {
        let _ = respond(&mut s, "404 Not Found", "text/plain", b"");
        return;
    }
    trickle(s, port);
}

/// Runs `install` against the index at `port` with a 2 s timeout and
/// returns its output and how long it took.
fn install_with_timeout(port: u16) -> (std::process::Output, Duration) {
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env(
        "CUDAENV_PYPI_INDEX",
        format!("http://127.0.0.1:{port}/simple"),
    )
    .env("CUDAENV_HTTP_TIMEOUT", "2")
    .args(["install", "12.4.1", ONLY_CUDART]);
    let started = Instant::now();
    let o = crate::reliability::support::run_with_deadline(&mut c, Duration::from_secs(120));
    (o, started.elapsed())
}

/// Defect 4: a stalled index, a trickling index and a trickling download
/// each end `install` within two timeouts and the backoff (the first
/// request to give up stops the command), exit 5, naming the URL.
#[test]
fn network_faults_end_in_bounded_time() {
    for (what, serve, url_part) in [
        ("stalled index", stall as fn(TcpStream, u16), "/simple/"),
        ("trickling index", trickle, "/simple/"),
        ("trickling download", trickle_wheel, "/files/"),
    ] {
        let port = start(serve);
        let (o, took) = install_with_timeout(port);
        assert_eq!(o.status.code(), Some(5), "{what}: {}", text(&o));
        // Two windows of 2 s (and 0.5 s of backoff) at most, with room for a
        // loaded machine; at least one window.
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(20),
            "{what}: took {took:?}"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("stalled"), "{what}: {err}");
        assert!(
            err.contains(&format!("http://127.0.0.1:{port}")) && err.contains(url_part),
            "{what}: {err}"
        );
        assert!(err.contains("CUDAENV_HTTP_TIMEOUT"), "{what}: {err}");
    }
}

/// A timeout that is not a number of seconds is refused, naming the variable.
#[test]
fn a_bad_http_timeout_is_refused() {
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env("CUDAENV_HTTP_TIMEOUT", "soon")
        .env("CUDAENV_PYPI_INDEX", "http://127.0.0.1:9/simple")
        .args(["install", "12.4.1", ONLY_CUDART]);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("CUDAENV_HTTP_TIMEOUT"), "{}", text(&o));
}

/// Defect 1 for mirrors: the NVIDIA mirror's credentials are masked in the
/// plan (`--json`) and in the error of a download that fails.
#[test]
fn mirror_credentials_never_reach_output() {
    let env = TestEnv::new();
    let mirror = format!("http://{USER}:{SECRET}@127.0.0.1:9/nv");
    let run = |args: &[&str]| {
        let mut c = env.cmd();
        c.env("CUDAENV_NVIDIA_MIRROR", &mirror)
            .args(["install", "12.4.1", "--source", "nvidia", ONLY_CUDART])
            .args(args);
        c.output().unwrap()
    };
    let dry = run(&["--dry-run", "--json"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    let url = plan["artifacts"][0]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{USER}:****@127.0.0.1:9/nv/")),
        "{url}"
    );
    // Nothing listens on port 9: the download fails, naming the masked URL.
    let failed = run(&[]);
    assert_eq!(failed.status.code(), Some(5), "{}", text(&failed));
    assert!(
        text(&failed).contains(&format!("http://{USER}:****@127.0.0.1:9/nv/")),
        "{}",
        text(&failed)
    );
    assert_secret_nowhere(&env, &[&dry, &failed]);
}

/// A 12.x devel install on a machine that cannot reach NVIDIA's server
/// (here: a mirror whose name never resolves) names what would serve the
/// tools instead: PyPI's nvcc from CUDA 13, Debian's own toolkit package,
/// or the rest of 12.x from PyPI without them. cudart comes from the live
/// PyPI (~1 MB); nothing is installed.
#[test]
fn a_devel_install_without_nvidia_names_the_sources_that_would_serve_it() {
    let env = TestEnv::new();
    let o = env
        .cmd()
        .env("CUDAENV_NVIDIA_MIRROR", "https://nvidia.invalid")
        .args([
            "install",
            "12.4.1",
            crate::pypi::ONLY_CUDART,
            "--with",
            "nvcc",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let hint = err
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("{err}"));
    insta::assert_snapshot!(hint, @"hint: the host name `nvidia.invalid` did not resolve: check its spelling (CUDAENV_NVIDIA_MIRROR, `nvidia-mirror` in config.toml), the DNS settings, or the proxy (HTTPS_PROXY); run again to resume. Without NVIDIA's server, no other source of cudaenv has CUDA 12.4.131's `nvcc` (PyPI's 12.x nvcc is ptxas and NVVM only; Debian's packages give the runtime libraries): PyPI has a complete nvcc from CUDA 13 (`cudaenv install 13 --profile devel`), Debian's own `nvidia-cuda-toolkit` package has nvcc 12.4 system-wide (apt, as root), and `--without nvcc,cuobjdump,nvdisasm,nvprune` installs the rest of 12.x from PyPI");
    assert!(!env.root.join("versions/12.4.1").exists());
}
