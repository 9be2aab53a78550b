//! `cudaenv mirror` and installing from its directory without network: live
//! against pypi.org with the small cudart wheels (the NVIDIA half of a mirror
//! is tested in `nvidia.rs`, against the loopback server).
//!
//! "Without network" is made real for the installing side: every proxy
//! variable points at a closed port on 127.0.0.1, so any request that leaves
//! the process fails, and the install must come from the `file://` mirror.

use std::path::Path;

use crate::common::*;
use crate::pypi::ONLY_CUDART;

/// Proxy settings under which no request reaches the network.
pub(crate) const NO_NETWORK: &[(&str, &str)] = &[
    ("HTTPS_PROXY", "http://127.0.0.1:9"),
    ("HTTP_PROXY", "http://127.0.0.1:9"),
    ("ALL_PROXY", "http://127.0.0.1:9"),
    ("https_proxy", "http://127.0.0.1:9"),
    ("http_proxy", "http://127.0.0.1:9"),
];

/// A second machine: its own HOME and root (a cold cache), no network, and
/// the mirror as its package index and NVIDIA host.
fn offline(env: &TestEnv, mirror: &Path) -> std::process::Command {
    let mut c = env.cmd();
    c.envs(NO_NETWORK.iter().copied())
        .env(
            "CUDAENV_PYPI_INDEX",
            format!("file://{}", mirror.join("pypi/simple").display()),
        )
        .env(
            "CUDAENV_NVIDIA_MIRROR",
            format!("file://{}", mirror.join("nvidia").display()),
        );
    c
}

#[test]
fn live_pypi_stacks_are_mirrored_and_installed_offline_from_the_directory() {
    let online = TestEnv::new();
    // A path with a space, as mirrors on shared file systems often have.
    let dir = online.path("site mirror");
    let o = online
        .cmd()
        .args(["mirror"])
        .arg(&dir)
        .args(["12.4.1", "12.6", ONLY_CUDART, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["resolved"], serde_json::json!(["12.4.1", "12.6.3"]));
    // Each stack's cudart wheel, and the `cuda-toolkit` metapackage of each
    // release, so that the site's own catalogue knows both releases.
    assert_eq!(out["added"], 4);
    let files = out["files"].as_array().unwrap();
    assert_eq!(files.len(), 4, "{out}");
    let metapackages = files
        .iter()
        .filter(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .starts_with("pypi/files/cuda_toolkit-12.")
        })
        .count();
    assert_eq!(metapackages, 2, "{out}");
    for f in files {
        let path = f["path"].as_str().unwrap();
        assert!(
            path.starts_with("pypi/files/nvidia_cuda_runtime_cu12-12.")
                || path.starts_with("pypi/files/cuda_toolkit-12."),
            "{path}"
        );
        assert_eq!(
            std::fs::metadata(dir.join(path)).unwrap().len(),
            f["size"].as_u64().unwrap()
        );
    }
    // The checksum list is what `sha256sum -c` checks after a transfer.
    let o = std::process::Command::new("sha256sum")
        .args(["-c", "--strict", "SHA256SUMS"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).matches(": OK").count(),
        4
    );
    let page = std::fs::read_to_string(dir.join("pypi/simple/nvidia-cuda-runtime-cu12/index.html"))
        .unwrap();
    assert_eq!(page.matches("#sha256=").count(), 2, "{page}");

    // Mirroring again adds nothing, downloads nothing and keeps both stacks.
    online.ok(&["cache", "clean"]);
    let o = online
        .cmd()
        .args(["mirror"])
        .arg(&dir)
        .args(["12.4.1", ONLY_CUDART, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(again["added"], 0);
    assert_eq!(again["stacks"], serde_json::json!(["12.4.1", "12.6.3"]));
    let downloads = online.root.join("cache/downloads");
    assert!(
        std::fs::read_dir(&downloads).map_or(true, |d| d.count() == 0),
        "{:?}",
        std::fs::read_dir(&downloads).map(|d| d.count())
    );

    // The air-gapped machine: both stacks install from the directory alone.
    let site = TestEnv::new();
    for spec in ["12.4.1", "12.6"] {
        let o = offline(&site, &dir)
            .args(["install", spec, ONLY_CUDART])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", text(&o));
    }
    assert_eq!(
        site.ok(&["versions", "--bare"])
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["12.4.1", "12.6.3"]
    );
    for (version, want) in [("12.4.1", "0 12040"), ("12.6.3", "0 12060")] {
        let o = site.run(&[
            "exec",
            "--version",
            version,
            "--",
            "python3",
            "-c",
            "import ctypes; l = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); \
             r = l.cudaRuntimeGetVersion(ctypes.byref(v)); print(r, v.value)",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), want);
    }

    // What the mirror lacks fails there, naming the index, and installs nothing.
    let o = offline(&site, &dir)
        .args(["install", "12.8", ONLY_CUDART, "--source", "pypi"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    assert!(text(&o).contains("site mirror/pypi/simple"), "{}", text(&o));
    assert_eq!(site.ok(&["versions", "--bare"]).lines().count(), 2);

    // A tampered file is caught by the install, not only by `sha256sum -c`.
    let cudart = files
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .find(|p| p.starts_with("pypi/files/nvidia_cuda_runtime_cu12-12.4."))
        .unwrap();
    let wheel = dir.join(cudart);
    let mut bytes = std::fs::read(&wheel).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::remove_file(&wheel).unwrap(); // a hard link into the online cache
    std::fs::write(&wheel, bytes).unwrap();
    let cold = TestEnv::new();
    let o = offline(&cold, &dir)
        .args(["install", "12.4.1", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("sha256 mismatch"), "{}", text(&o));
    assert_eq!(cold.ok(&["versions", "--bare"]).trim(), "");
}

/// pip reads the same directory as an index (`--index-url file://…`).
#[test]
fn pip_installs_from_the_mirror_index() {
    let online = TestEnv::new();
    let dir = online.path("mirror");
    online.ok(&["mirror", dir.to_str().unwrap(), "12.4.1", ONLY_CUDART]);
    let venv = online.path("venv");
    let o = std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = std::process::Command::new(venv.join("bin/pip"))
        .envs(NO_NETWORK.iter().copied())
        .args([
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--index-url",
        ])
        .arg(format!("file://{}", dir.join("pypi/simple").display()))
        .args(["-d"])
        .arg(online.path("got"))
        .arg("nvidia-cuda-runtime-cu12==12.4.127")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(online.path("got").join(crate::pypi::wheel_name()).is_file());
}

#[test]
fn a_directory_that_is_not_a_mirror_is_refused_and_left_alone() {
    let env = TestEnv::new();
    let dir = env.path("notes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("todo.txt"), "mine\n").unwrap();
    let before = snapshot(&dir);
    let o = env.run(&["mirror", dir.to_str().unwrap(), "12.4.1", ONLY_CUDART]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    insta::assert_snapshot!(
        String::from_utf8_lossy(&o.stderr).replace(&dir.display().to_string(), "[DIR]"),
        @r"
    12.4.1 installs no cuDNN; `cudaenv install 12.4.1+cudnn9` installs it with one (`cudaenv ls-remote 12.4` lists the cuDNN builds)
    error: [DIR] is not empty and is not a cudaenv mirror (it has no mirror.json)
    hint: give a new or empty directory, or one that `cudaenv mirror` wrote before (it adds to it)
    "
    );
    assert_eq!(snapshot(&dir), before);

    // A bad spec is refused before the directory is created.
    let new = env.path("new");
    let o = env.run(&["mirror", new.to_str().unwrap(), "12.4.1", "cuda-twelve"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!new.exists());

    // A damaged record is refused, and nothing is written.
    let m = env.path("m");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("mirror.json"), "{\"schema\": 1, \"files\": 3}").unwrap();
    let before = snapshot(&m);
    let o = env.run(&["mirror", m.to_str().unwrap(), "12.4.1", ONLY_CUDART]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("invalid mirror record"), "{}", text(&o));
    assert_eq!(snapshot(&m), before);
}

/// The fenced blocks of `docs/clusters.md`'s "Air-gapped sites", in order.
fn air_gapped_blocks() -> Vec<String> {
    let doc = include_str!("../../docs/clusters.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Air-gapped sites"))
        .expect("docs/clusters.md has an `Air-gapped sites` section");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        match (&mut current, line.starts_with("```")) {
            (None, true) => current = Some(String::new()),
            (Some(b), true) => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), false) => {
                b.push_str(line);
                b.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

#[test]
fn docs_air_gapped_examples_run_as_written() {
    let blocks = air_gapped_blocks();
    assert_eq!(blocks.len(), 3, "{blocks:?}");
    let online = TestEnv::new();
    let dir = online.path("srv/cuda-mirror");
    let here = |b: &str| b.replace("/srv/cuda-mirror", dir.to_str().unwrap());
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        bin().parent().unwrap().display()
    );
    // The machine with network.
    bash(&online, &online.home, &[("PATH", &path)], &here(&blocks[0]));
    assert!(dir.join("SHA256SUMS").is_file());

    // The air-gapped machine, with the variables.
    let site = TestEnv::new();
    let mut vars: Vec<(&str, &str)> = NO_NETWORK.to_vec();
    vars.push(("PATH", &path));
    bash(
        &site,
        &site.home,
        &vars,
        &format!("set -e\n{}", here(&blocks[1])),
    );
    assert_eq!(site.ok(&["versions", "--bare"]).trim(), "12.4.1");

    // And with config.toml; a stack the mirror lacks fails without the network.
    let other = TestEnv::new();
    std::fs::create_dir_all(&other.root).unwrap();
    std::fs::write(other.root.join("config.toml"), here(&blocks[2])).unwrap();
    let o = other
        .cmd()
        .envs(NO_NETWORK.iter().copied())
        .args(["install", "12.6", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(other.ok(&["versions", "--bare"]).trim(), "12.6.3");
    let o = other
        .cmd()
        .envs(NO_NETWORK.iter().copied())
        .args(["install", "12.8", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{}/nvidia/compute/", dir.display())),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("127.0.0.1:9"), "{}", text(&o));
}

/// Kills the static server when the test ends, however it ends.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The directory is a plain static site too: served by Python's own HTTP
/// server, it is an index and an NVIDIA mirror over http://.
#[test]
fn the_mirror_directory_served_by_a_static_web_server_is_an_index_too() {
    use std::io::BufRead;
    let online = TestEnv::new();
    let dir = online.path("mirror");
    online.ok(&["mirror", dir.to_str().unwrap(), "12.4.1", ONLY_CUDART]);
    let mut child = std::process::Command::new("python3")
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Served(child);
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let port = line
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .unwrap_or_else(|| panic!("no port in {line:?}"))
        .to_string();
    let site = TestEnv::new();
    let o = site
        .cmd()
        .envs(NO_NETWORK.iter().copied())
        .env("NO_PROXY", "127.0.0.1")
        .env(
            "CUDAENV_PYPI_INDEX",
            format!("http://127.0.0.1:{port}/pypi/simple"),
        )
        .env(
            "CUDAENV_NVIDIA_MIRROR",
            format!("http://127.0.0.1:{port}/nvidia"),
        )
        .args(["install", "12.4.1", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        site.root
            .join("versions/12.4.1/lib64/libcudart.so.12")
            .is_file()
    );
}

/// `--for` mirrors what `install --for` will pick on the target machine, so
/// the same `install --for` there finds it (cuDNN left out: its wheel is large).
#[test]
fn a_framework_release_is_mirrored_for_the_target_machine_and_installed_from_it() {
    let online = TestEnv::new();
    let dir = online.path("mirror");
    let without = "--without=cudnn,cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";
    let for_node = [
        "--for",
        "torch==2.4",
        "--target-driver",
        "470.57.02",
        without,
    ];
    let o = online
        .cmd()
        .arg("mirror")
        .arg(&dir)
        .args(for_node)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Driver 470 runs no CUDA 12 build of torch 2.4: its CUDA 11.8 build is the one.
    assert_eq!(out["resolved"], serde_json::json!(["11.8.0"]));
    assert!(
        out["files"].as_array().unwrap().iter().any(|f| f["path"]
            .as_str()
            .unwrap()
            .starts_with("pypi/files/nvidia_cuda_runtime_cu11-11.8.")),
        "{out}"
    );
    let site = TestEnv::new();
    let o = offline(&site, &dir)
        .arg("install")
        .args(for_node)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(site.ok(&["versions", "--bare"]).trim(), "11.8.0");
}

/// A release only PyPI's live catalogue knows (newer than cudaenv's embedded
/// list) installs on the air-gapped machine: the mirror carries its
/// `cuda-toolkit` metapackage, which that machine's catalogue reads from the
/// `file://` index.
#[test]
fn a_release_known_only_to_the_live_catalogue_installs_from_the_mirror() {
    let online = TestEnv::new();
    let dir = online.path("mirror");
    let o = online
        .cmd()
        .args(["mirror"])
        .arg(&dir)
        .args(["13.5.0", ONLY_CUDART, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        dir.join("pypi/simple/cuda-toolkit/index.html").is_file(),
        "{}",
        text(&o)
    );

    let site = TestEnv::new();
    let o = offline(&site, &dir)
        .args(["install", "13.5", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("embedded list"), "{stderr}");
    assert!(
        site.root
            .join("versions/13.5.0/lib64/libcudart.so.13")
            .exists()
    );
}
