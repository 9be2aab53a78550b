//! The live release catalogue (PyPI's `cuda-toolkit` metapackage): against a
//! loopback index for what PyPI cannot be made to do (a release whose
//! metadata is missing, markers for other platforms, a yanked release, a
//! stale stored list, an index that is down), and against live PyPI for the
//! releases it serves today (metadata of a few KB each, no component wheel).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{TestEnv, text};
use crate::pypi::{file, sha256, zip};

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The components 13.x's runtime profile has besides cudart and cublas.
const ONLY_CUDART_CUBLAS: &str = "--without=cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";

/// Path → (content type, body).
type Files = Arc<Mutex<BTreeMap<String, (String, Vec<u8>)>>>;

/// A PEP 691 index on 127.0.0.1 serving fixed files; `down` answers 503 to everything.
struct LoopIndex {
    port: u16,
    files: Files,
    hits: Arc<Mutex<Vec<String>>>,
    down: Arc<AtomicBool>,
}

impl LoopIndex {
    fn start() -> LoopIndex {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = server.server_addr().to_ip().unwrap().port();
        let files: Files = Arc::default();
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let down = Arc::new(AtomicBool::new(false));
        let (f, h, d) = (files.clone(), hits.clone(), down.clone());
        std::thread::spawn(move || {
            for req in server.incoming_requests() {
                let url = req.url().to_string();
                h.lock().unwrap().push(url.clone());
                let resp = if d.load(Ordering::SeqCst) {
                    tiny_http::Response::from_data(Vec::new()).with_status_code(503)
                } else {
                    match f.lock().unwrap().get(&url) {
                        Some((ctype, body)) => tiny_http::Response::from_data(body.clone())
                            .with_header(
                                tiny_http::Header::from_bytes("Content-Type", ctype.as_bytes())
                                    .unwrap(),
                            ),
                        None => tiny_http::Response::from_data(Vec::new()).with_status_code(404),
                    }
                };
                let _ = req.respond(resp);
            }
        });
        LoopIndex {
            port,
            files,
            hits,
            down,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/simple", self.port)
    }

    fn put(&self, path: &str, ctype: &str, body: Vec<u8>) {
        self.files
            .lock()
            .unwrap()
            .insert(path.to_string(), (ctype.to_string(), body));
    }

    fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| *h == path)
            .count()
    }
}

const JSON: &str = "application/vnd.pypi.simple.v1+json";

/// This machine's `platform_machine`, and another Linux one.
fn arches() -> (&'static str, &'static str) {
    match std::env::consts::ARCH {
        "aarch64" => ("aarch64", "x86_64"),
        _ => ("x86_64", "aarch64"),
    }
}

fn linux(machine: &str) -> String {
    format!("sys_platform == 'linux' and platform_machine == '{machine}'")
}

/// Core metadata naming these requirements (project, pin, marker).
fn metadata(version: &str, reqs: &[(&str, &str, String)]) -> String {
    let mut m = format!(
        "Metadata-Version: 2.5\nName: cuda-toolkit\nVersion: {version}\nProvides-Extra: all\n"
    );
    for (p, pin, marker) in reqs {
        m.push_str(&format!(
            "Requires-Dist: {p}=={pin}.*; ({marker}) and extra == 'all'\n"
        ));
    }
    m.push_str("\n# cuda-toolkit\n\nRequires-Dist: ignored-in-the-body==1\n");
    m
}

/// How a release's metadata is served.
enum Meta {
    /// A PEP 658 file, announced with its hash (and no usable wheel).
    File(String),
    /// Only inside the wheel.
    Wheel(String),
    /// Announced, but neither the file nor the wheel is there.
    Missing,
    Yanked(String),
}

/// The fixture: releases 13.6.0 … 13.9.0 of the metapackage, a cudart wheel
/// for 13.9, and an empty cuDNN project.
fn fixture(idx: &LoopIndex) {
    let (this, other) = arches();
    let both = format!("{} or {}", linux(this), linux(other));
    let releases: Vec<(&str, Meta)> = vec![
        (
            "13.9.0",
            Meta::File(metadata(
                "13.9.0",
                &[
                    ("nvidia-cuda-runtime", "13.9.10", both.clone()),
                    // Only for the other architecture: left out here.
                    ("nvidia-cublas", "13.12.0.1", linux(other)),
                    ("nvidia-cuda-nvcc", "13.9.10", both.clone()),
                ],
            )),
        ),
        (
            "13.8.0",
            Meta::Wheel(metadata(
                "13.8.0",
                &[(
                    "nvidia-cuda-runtime",
                    "13.8.5",
                    format!("{both} or sys_platform == 'win32' and platform_machine == 'AMD64'"),
                )],
            )),
        ),
        (
            "13.7.0",
            Meta::Yanked(metadata(
                "13.7.0",
                &[("nvidia-cuda-runtime", "13.7.1", both.clone())],
            )),
        ),
        // Only for Windows: nothing for this machine.
        (
            "13.6.0",
            Meta::File(metadata(
                "13.6.0",
                &[(
                    "nvidia-cuda-runtime",
                    "13.6.1",
                    "sys_platform == 'win32' and platform_machine == 'AMD64'".into(),
                )],
            )),
        ),
        ("13.6.1", Meta::Missing),
    ];
    let mut files = Vec::new();
    for (v, meta) in releases {
        let name = format!("cuda_toolkit-{v}-py2.py3-none-any.whl");
        let path = format!("/files/{name}");
        let wheel = |m: &str| {
            zip(&[
                file(
                    &format!("cuda_toolkit-{v}.dist-info/METADATA"),
                    m.as_bytes(),
                ),
                file(&format!("cuda_toolkit-{v}.dist-info/RECORD"), b""),
            ])
        };
        let mut entry = serde_json::json!({"filename": name, "url": path});
        match meta {
            Meta::File(m) => {
                entry["core-metadata"] = serde_json::json!({"sha256": sha256(m.as_bytes())});
                // The wheel itself is not served: the metadata file must be used.
                entry["hashes"] = serde_json::json!({"sha256": sha256(v.as_bytes())});
                idx.put(&format!("{path}.metadata"), "text/plain", m.into_bytes());
            }
            Meta::Wheel(m) => {
                let w = wheel(&m);
                entry["hashes"] = serde_json::json!({"sha256": sha256(&w)});
                entry["size"] = w.len().into();
                idx.put(&path, "application/zip", w);
            }
            Meta::Missing => {
                entry["core-metadata"] = true.into();
            }
            Meta::Yanked(m) => {
                let w = wheel(&m);
                entry["hashes"] = serde_json::json!({"sha256": sha256(&w)});
                entry["yanked"] = "broken".into();
                idx.put(&path, "application/zip", w);
            }
        }
        files.push(entry);
    }
    // A pre-release is never offered.
    files.push(serde_json::json!({
        "filename": "cuda_toolkit-13.9.1rc1-py2.py3-none-any.whl",
        "url": "/files/cuda_toolkit-13.9.1rc1-py2.py3-none-any.whl",
    }));
    idx.put(
        "/simple/cuda-toolkit/",
        JSON,
        serde_json::to_vec(&serde_json::json!({"meta": {"api-version": "1.1"}, "name": "cuda-toolkit", "files": files})).unwrap(),
    );
    let cudart = format!("nvidia_cuda_runtime-13.9.10-py3-none-manylinux_2_27_{this}.whl");
    idx.put(
        "/simple/nvidia-cuda-runtime/",
        JSON,
        serde_json::to_vec(&serde_json::json!({"files": [{
            "filename": cudart,
            "url": format!("/files/{cudart}"),
            "hashes": {"sha256": "ab".repeat(32)},
            "size": 1234,
        }]}))
        .unwrap(),
    );
    idx.put(
        "/simple/nvidia-cudnn-cu13/",
        JSON,
        br#"{"files": []}"#.to_vec(),
    );
}

fn cmd(env: &TestEnv, idx: &LoopIndex) -> std::process::Command {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", idx.url());
    c
}

fn catalogue_file(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.root.join("cache/index");
    let sub = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
    sub.path().join("catalogue.json")
}

/// The stdout lines of the releases listing, with the index's port hidden.
fn listing(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn loopback_catalogue_lists_releases_only_pypi_knows() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13.6", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    // 13.6.0 has a runtime only for Windows, 13.6.1 no metadata: neither is listed.
    assert_eq!(listing(&o), "", "{}", text(&o));
    assert!(
        text(&o).contains("cuda-toolkit 13.6.1 left out: its metadata is missing on the index"),
        "{}",
        text(&o)
    );
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    // Both Linux platforms read the same on either architecture.
    insta::assert_snapshot!(
        "ls_remote_13_loopback",
        listing(&o)
            .replace("linux-x86_64", "LINUX")
            .replace("linux-sbsa", "LINUX")
    );
    // Stored: the second listing asked the index for nothing.
    let page = "/simple/cuda-toolkit/";
    assert_eq!(idx.hits(page), 1);
    assert!(
        text(&o).contains("read 0 s ago") || text(&o).contains("s ago"),
        "{}",
        text(&o)
    );

    let o = cmd(&env, &idx)
        .args(["ls-remote", "13", "--json", "--source", "pypi"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["catalogue"]["state"], "cached", "{j}");
    let rel = |v: &str| {
        j["cuda"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["version"] == v)
            .cloned()
    };
    let r = rel("13.9.0").unwrap();
    assert_eq!(r["sources"], serde_json::json!(["pypi"]));
    assert_eq!(r["pypi_known"], "catalogue");
    assert_eq!(r["platforms"].as_array().unwrap().len(), 2);
    let r = rel("13.8.0").unwrap();
    assert_eq!(r["platforms"].as_array().unwrap().len(), 3, "{r}");
    assert!(rel("13.7.0").is_none(), "a yanked release is not offered");
    assert!(rel("13.9.1").is_none() && rel("13.6.0").is_none());
    assert_eq!(rel("13.0.0").unwrap()["pypi_known"], "registry");

    // --refresh reads the page again; a release's metadata is never read twice.
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13", "--refresh", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(idx.hits(page), 2);
    assert_eq!(
        idx.hits("/files/cuda_toolkit-13.9.0-py2.py3-none-any.whl.metadata"),
        1
    );
    assert_eq!(
        idx.hits("/files/cuda_toolkit-13.8.0-py2.py3-none-any.whl"),
        1
    );
}

#[test]
fn a_release_only_the_catalogue_knows_is_planned_from_pypi() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    let o = cmd(&env, &idx)
        .args(["install", "13.9", ONLY_CUDART_CUBLAS, "--dry-run", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["cuda"], "13.9.0");
    let a = &plan["artifacts"].as_array().unwrap();
    assert_eq!(a.len(), 1, "{plan}");
    assert_eq!(a[0]["component"], "cudart");
    assert_eq!(a[0]["version"], "13.9.10");
    assert_eq!(a[0]["source"], "pypi");
    // cuBLAS has a wheel only for the other architecture: said, not guessed.
    assert!(text(&o).contains("left out: cublas"), "{}", text(&o));
    // The totals: the index gave the size; the unpacked size needs the wheel's
    // central directory, which this index does not serve.
    assert_eq!(plan["size"]["download_bytes"], 1234, "{plan}");
    assert_eq!(plan["size"]["unpacked_unknown"], 1, "{plan}");
    // A bare CUDA spec says it installs no cuDNN, and how to get one.
    assert!(
        text(&o).contains("13.9.0 installs no cuDNN; `cudaenv install 13.9.0+cudnn9`"),
        "{}",
        text(&o)
    );
    let o = cmd(&env, &idx)
        .args(["install", "13.9", ONLY_CUDART_CUBLAS, "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        listing(&o)
            .contains("\ndownload 1 KB\ndisk unknown (1 archive whose unpacked size is known only once downloaded)\n"),
        "{}",
        text(&o)
    );

    // The devel profile needs the compiler: 13.9 names nvcc but the index has
    // no wheel of it, and crt/nvvm not at all. Refused before any download.
    let wheel_hits = || {
        idx.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.starts_with("/files/nvidia_"))
            .count()
    };
    // (The dry runs above asked for the wheel's last bytes.)
    let before = wheel_hits();
    let o = cmd(&env, &idx)
        .args(["install", "13.9", "--profile", "devel", ONLY_CUDART_CUBLAS])
        .output()
        .unwrap();
    assert_eq!(code(&o), 7, "{}", text(&o));
    assert!(
        text(&o).contains("devel profile needs crt, nvcc, nvvm"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("`--without crt,nvcc,nvvm` installs the rest"),
        "{}",
        text(&o)
    );
    assert_eq!(wheel_hits(), before);
    assert!(!env.root.join("versions").exists());
    // A release the catalogue left out is not installable.
    let o = cmd(&env, &idx)
        .args(["install", "13.7", "--dry-run", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 7, "{}", text(&o));
}

/// A component PyPI lacks comes from the next source; the rest stays on
/// PyPI (the whole stack used to move to NVIDIA's archives).
#[test]
fn one_component_missing_from_pypi_moves_only_that_component() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    let (this, _) = arches();
    let cudart = format!("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_{this}.whl");
    idx.put(
        "/simple/nvidia-cuda-runtime-cu12/",
        JSON,
        serde_json::to_vec(&serde_json::json!({"files": [{
            "filename": cudart,
            "url": format!("/files/{cudart}"),
            "hashes": {"sha256": "cd".repeat(32)},
            "size": 1000,
        }]}))
        .unwrap(),
    );
    // cuBLAS: the project exists, without the 12.4 build.
    idx.put(
        "/simple/nvidia-cublas-cu12/",
        JSON,
        serde_json::to_vec(&serde_json::json!({"files": [{
            "filename": format!("nvidia_cublas_cu12-12.1.3.1-py3-none-manylinux1_{this}.whl"),
            "url": "/files/old.whl",
            "hashes": {"sha256": "ef".repeat(32)},
        }]}))
        .unwrap(),
    );
    let o = cmd(&env, &idx)
        .args([
            "install",
            "12.4.1",
            ONLY_CUDART_CUBLAS,
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let from: BTreeMap<String, String> = plan["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["component"].as_str().unwrap().to_string(),
                a["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(from["cudart"], "pypi", "{plan}");
    assert_eq!(from["cublas"], "nvidia", "{plan}");
    // The index lacks the metapackage: the embedded list, said once.
    assert!(text(&o).contains("embedded list"), "{}", text(&o));
}

#[test]
fn a_stale_list_is_used_and_said_when_the_index_is_down() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13.9", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    idx.down.store(true, Ordering::SeqCst);

    // Too old to reuse, and the index is down: the stored list, said so.
    let o = cmd(&env, &idx)
        .env("CUDAENV_CATALOGUE_MAX_AGE", "0")
        .args(["install", "13.9", ONLY_CUDART_CUBLAS, "--dry-run"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(t.contains("cannot read the release list"), "{t}");
    assert!(t.contains("`cudaenv update` refreshes it"), "{t}");
    // The plan still resolves 13.9.0 from the list; the cudart page is down too.
    assert!(t.contains("13.9"), "{t}");

    // Offline, days later: used, with its age, and nothing is asked of the index.
    let path = catalogue_file(&env);
    let mut c: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    c["fetched_at"] = (c["fetched_at"].as_u64().unwrap() - 3 * 86400).into();
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    let before = idx.hits.lock().unwrap().len();
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13.9", "--offline", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(listing(&o).starts_with("13.9.0 "), "{}", text(&o));
    assert!(text(&o).contains("is 3 days old"), "{}", text(&o));
    assert_eq!(idx.hits.lock().unwrap().len(), before);

    // A corrupt stored list is not trusted: without the index, the embedded list.
    std::fs::write(&path, b"{not json").unwrap();
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13", "--offline", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!listing(&o).contains("13.9.0"), "{}", text(&o));
    assert!(text(&o).contains("embedded list"), "{}", text(&o));
}

#[test]
fn an_index_that_is_down_leaves_the_embedded_list_and_fails_update() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    idx.down.store(true, Ordering::SeqCst);
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13.0", "--source", "nvidia"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        idx.hits.lock().unwrap().len(),
        0,
        "--source nvidia needs no index"
    );
    let o = cmd(&env, &idx).args(["ls-remote", "13"]).output().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(listing(&o).contains("13.0.0"), "{}", text(&o));
    assert!(!listing(&o).contains("13.9.0"), "{}", text(&o));
    assert!(
        text(&o).contains("using cudaenv's embedded list"),
        "{}",
        text(&o)
    );

    // update: neither PyPI nor NVIDIA reachable is a network failure (exit 5).
    let o = cmd(&env, &idx)
        .env("CUDAENV_NVIDIA_MIRROR", "http://127.0.0.1:1")
        .args(["update"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 5, "{}", text(&o));
    // PyPI alone suffices: NVIDIA unreachable is a warning.
    idx.down.store(false, Ordering::SeqCst);
    let o = cmd(&env, &idx)
        .env("CUDAENV_NVIDIA_MIRROR", "http://127.0.0.1:1")
        .args(["update"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("cannot reach NVIDIA's manifests"), "{t}");
    assert!(t.contains("newest 13.9.0"), "{t}");
    let o = cmd(&env, &idx)
        .args(["ls-remote", "13.9", "--offline"])
        .output()
        .unwrap();
    assert!(listing(&o).starts_with("13.9.0 "), "{}", text(&o));
}

// ---------------------------------------------------------------------------
// Live PyPI

#[test]
fn live_catalogue_knows_releases_newer_than_the_registry() {
    let env = TestEnv::new();
    let o = env.run(&["ls-remote", "13", "--json", "--source", "pypi"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let versions: Vec<&str> = j["cuda"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    // The registry stops at 13.0.0; PyPI served 13.5.0 in December 2026.
    assert!(versions.contains(&"13.5.0"), "{versions:?}");
    let r = j["cuda"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == "13.2.0")
        .unwrap();
    assert!(
        r["platforms"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "linux-x86_64"),
        "{r}"
    );
    let o = env.run(&[
        "install",
        "13.2",
        ONLY_CUDART_CUBLAS,
        "--without=cublas",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        plan["cuda"].as_str().unwrap().starts_with("13.2."),
        "{plan}"
    );
    let a = &plan["artifacts"][0];
    assert_eq!(a["component"], "cudart");
    assert_eq!(a["source"], "pypi");
    assert!(
        a["version"].as_str().unwrap().starts_with("13.2."),
        "{plan}"
    );
    assert!(
        a["url"]
            .as_str()
            .unwrap()
            .contains("nvidia_cuda_runtime-13.2."),
        "{plan}"
    );
}

/// `install` and `ls-remote` build their sources in one place: a malformed
/// mirror is the same error (exit 2) for both, and no error when only PyPI
/// is asked for.
#[test]
fn a_bad_mirror_means_the_same_to_install_and_ls_remote() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    for args in [
        &["ls-remote", "13"][..],
        &["install", "13.9", "--dry-run"][..],
    ] {
        let o = cmd(&env, &idx)
            .env("CUDAENV_NVIDIA_MIRROR", "ftp://mirror.example")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}", text(&o));
        assert!(text(&o).contains("CUDAENV_NVIDIA_MIRROR"), "{}", text(&o));
    }
    let o = cmd(&env, &idx)
        .env("CUDAENV_NVIDIA_MIRROR", "ftp://mirror.example")
        .args(["ls-remote", "13.9", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
}

/// A cuDNN wheel newer than cudaenv's cuDNN table (it stops at 9.28, the
/// newest on PyPI) is planned with its family's rule, which agrees with the
/// source here, so nothing is said about it; a release the table has
/// reads the same.
#[test]
fn a_cudnn_newer_than_the_table_is_planned_by_its_family_rule() {
    let env = TestEnv::new();
    let idx = LoopIndex::start();
    fixture(&idx);
    let (this, _) = arches();
    let files: Vec<serde_json::Value> = ["9.12.0.46", "9.40.0.1"]
        .iter()
        .map(|v| {
            let name = format!("nvidia_cudnn_cu13-{v}-py3-none-manylinux_2_27_{this}.whl");
            serde_json::json!({
                "filename": name,
                "url": format!("/files/{name}"),
                "hashes": {"sha256": "cd".repeat(32)},
                "size": 4096,
            })
        })
        .collect();
    idx.put(
        "/simple/nvidia-cudnn-cu13/",
        JSON,
        serde_json::to_vec(&serde_json::json!({ "files": files })).unwrap(),
    );
    let dry_run = |spec: &str| {
        let o = cmd(&env, &idx)
            .args(["install", spec, ONLY_CUDART_CUBLAS, "--dry-run"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", text(&o));
        o
    };
    let o = dry_run("13.9+cudnn9.40");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let rule: Vec<&str> = stderr.lines().filter(|l| l.contains("cuDNN")).collect();
    assert!(rule.is_empty(), "nothing to say about cuDNN: {}", text(&o));
    assert!(listing(&o).contains("9.40.0.1"), "{}", text(&o));

    // `ls-remote` without a SPEC lists PyPI's cuDNN builds too: what a
    // default install takes, not only NVIDIA's redist list.
    let o = cmd(&env, &idx)
        .args(["ls-remote", "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let cudnn: Vec<String> = crate::common::stdout(&o)
        .lines()
        .filter(|l| l.starts_with("cudnn "))
        .map(str::to_string)
        .collect();
    insta::assert_snapshot!(cudnn.join("\n"), @"cudnn for CUDA 13 (pypi): 9.12.0.46 9.40.0.1");

    let o = dry_run("13.9+cudnn9.12");
    assert!(listing(&o).contains("9.12.0.46"), "{}", text(&o));
    assert!(
        !text(&o).contains("cuDNN table") && !text(&o).contains("rule of cuDNN"),
        "a release the table has is its own row: {}",
        text(&o)
    );
}
