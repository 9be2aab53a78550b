//! The NVIDIA sources end to end, against a loopback server laid out like
//! `developer.download.nvidia.com` (NVIDIA's servers are not reachable from
//! here or from CI):
//!
//! - `/compute/cuda/redist/redistrib_12.4.1.json` and
//!   `/compute/cudnn/redist/redistrib_9.1.1.json`: NVIDIA's REAL manifests,
//!   with every Linux archive replaced by a small synthetic one of the same
//!   name and directory layout, holding real ELF libraries built here with
//!   `cc` under the right sonames. Since the real sha256/size cannot match
//!   synthetic bytes, the served manifest is the real one rewritten with the
//!   synthetic archives' sha256 and size, and cudaenv takes it through
//!   `cudaenv update --trust-mirror` (its pins would otherwise reject it);
//! - `/compute/cuda/11.2.2/local_installers/cuda_11.2.2_460.32.03_linux.run`:
//!   a synthetic runfile in the makeself format (shell header + gzip tar
//!   payload) with the real `builds/<component>/targets/…` layout, and
//!   `/compute/redist/cudnn/v8.1.1/cudnn-11.2-linux-x64-v8.1.1.33.tgz` with
//!   `cuda/include` + `cuda/lib64`. Their sha256 are given to cudaenv as site
//!   pins (`$CUDAENV_ROOT/registry/*.toml`), replacing the embedded real ones.
//!
//! `CUDAENV_NVIDIA_MIRROR` (or the `nvidia-mirror` config key, for `file://`)
//! points cudaenv at it. Installed stacks are then run with `cudaenv exec`
//! and their libraries loaded by soname through the real dynamic loader.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::Digest;

use crate::common::*;

mod libraries;

/// NVIDIA's real manifests, byte-exact copies kept in the repository.
const REF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/inputs/manifests");

fn platform() -> &'static str {
    cudaenv::install::sources::Platform::current()
        .expect("tests run on Linux x86_64 or aarch64")
        .manifest_key()
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(o: &std::process::Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn sha256_hex(b: &[u8]) -> String {
    format!("{:x}", sha2::Sha256::digest(b))
}

// --- archives -------------------------------------------------------------------

enum Entry {
    File(Vec<u8>, u32),
    Link(String),
    Dir,
}

fn tar(entries: &[(String, Entry)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, e) in entries {
        let mut h = tar::Header::new_gnu();
        match e {
            Entry::File(data, mode) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(data.len() as u64);
                h.set_mode(*mode);
                b.append_data(&mut h, path, &data[..]).unwrap();
            }
            Entry::Link(target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                h.set_mode(0o777);
                b.append_link(&mut h, path, target).unwrap();
            }
            Entry::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                h.set_mode(0o755);
                b.append_data(&mut h, path, &[][..]).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A real shared library (built with `cc`) whose soname is `soname`,
/// exporting `symbol` that returns `value`.
fn shared_lib(tmp: &Path, soname: &str, symbol: &str, value: i64) -> Vec<u8> {
    let out = tmp.join(format!("{soname}.built"));
    cc_shared(
        &out,
        soname,
        &format!("long {symbol}(long *v) {{ if (v) *v = {value}; return 0; }}\n"),
    );
    std::fs::read(out).unwrap()
}

/// `lib/libX.so.<full>` (soname `libX.so.<so>`) + the soname link, as NVIDIA ships them.
fn lib_entries(
    tmp: &Path,
    dir: &str,
    base: &str,
    so: &str,
    full: &str,
    symbol: &str,
    value: i64,
) -> Vec<(String, Entry)> {
    let soname = format!("{base}.so.{so}");
    let file = format!("{base}.so.{full}");
    let mut v = vec![(
        format!("{dir}/{file}"),
        Entry::File(shared_lib(tmp, &soname, symbol, value), 0o755),
    )];
    if file != soname {
        v.push((format!("{dir}/{soname}"), Entry::Link(file.clone())));
    }
    v.push((format!("{dir}/{base}.so"), Entry::Link(soname)));
    v
}

// --- the mirror -----------------------------------------------------------------

/// A directory laid out like NVIDIA's download server, and an HTTP server for
/// it: one thread per connection, one request per connection
/// (`Connection: close`), so no client can hold up another.
pub(crate) struct Mirror {
    dir: PathBuf,
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Mirror {
    pub(crate) fn start(dir: PathBuf) -> Mirror {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (r, d) = (requests.clone(), dir.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (r, d) = (r.clone(), d.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &d, &r);
                });
            }
        });
        Mirror {
            dir,
            port,
            requests,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub(crate) fn requested(&self, rel: &str) -> bool {
        let want = format!("/{rel}");
        self.requests.lock().unwrap().contains(&want)
    }
}

fn serve(
    mut s: std::net::TcpStream,
    dir: &Path,
    requests: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let (url, _) = request(&s)?;
    requests.lock().unwrap().push(url.clone());
    let rel = url.trim_start_matches('/');
    let path = dir.join(rel);
    let (status, body) = if rel.split('/').any(|p| p == "..") {
        ("400 Bad Request", Vec::new())
    } else if path.is_dir() && path.join("index.html").is_file() {
        // A directory's page, as a PyPI mirror's Simple API serves one.
        ("200 OK", std::fs::read(path.join("index.html"))?)
    } else if path.is_dir() {
        // An Apache-style listing, as NVIDIA's redist directories have.
        let mut names: Vec<String> = std::fs::read_dir(&path)?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let html: String = names
            .iter()
            .map(|n| format!("<a href='{n}'>{n}</a><br>\n"))
            .collect();
        ("200 OK", html.into_bytes())
    } else if let Ok(b) = std::fs::read(&path) {
        ("200 OK", b)
    } else {
        ("404 Not Found", Vec::new())
    };
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(&body)?;
    s.flush()
}

/// cudaenv's environment, pointed at the mirror.
fn cmd(env: &TestEnv, mirror: &Mirror) -> std::process::Command {
    let mut c = env.cmd();
    c.env("CUDAENV_NVIDIA_MIRROR", mirror.url());
    c
}

// --- the redist fixture -----------------------------------------------------------

/// Shared libraries of the CUDA redist components: manifest key → (base, soname suffix, symbol).
const REDIST_LIBS: &[(&str, &str, &str, &str)] = &[
    ("cuda_cudart", "libcudart", "12", "cudaRuntimeGetVersion"),
    ("libcublas", "libcublas", "12", "cublasGetVersion_v2"),
    ("libcublas", "libcublasLt", "12", "cublasLtGetVersion"),
    ("libcufft", "libcufft", "11", "cufftGetVersion"),
    ("libcurand", "libcurand", "10", "curandGetVersion"),
    ("libcusolver", "libcusolver", "11", "cusolverGetVersion"),
    ("libcusparse", "libcusparse", "12", "cusparseGetVersion"),
    ("cuda_nvrtc", "libnvrtc", "12", "nvrtcVersion"),
    ("libnvjitlink", "libnvJitLink", "12", "nvJitLinkVersion"),
    ("cuda_cupti", "libcupti", "12", "cuptiGetVersion"),
];

/// Rewrites a real manifest: every archive of `platform` is replaced by a
/// synthetic one (same relative_path, same single top directory) whose
/// sha256/size go into the manifest. `make` builds the archive's entries
/// (below the top directory) for a component key and version; `None` keeps
/// the component's entry untouched.
fn rewrite_manifest(
    mirror: &Mirror,
    redist: &str,
    manifest: &mut serde_json::Value,
    mut make: impl FnMut(&str, &str, Option<u64>) -> Option<Vec<(String, Entry)>>,
) {
    let obj = manifest.as_object_mut().unwrap();
    for (key, comp) in obj.iter_mut() {
        let Some(comp) = comp.as_object_mut() else {
            continue;
        };
        let version = comp["version"].as_str().unwrap().to_string();
        let Some(entry) = comp.get_mut(platform()) else {
            continue;
        };
        let mut slots: Vec<(Option<u64>, &mut serde_json::Value)> = Vec::new();
        if entry.get("relative_path").is_some() {
            slots.push((None, entry));
        } else {
            for (var, e) in entry.as_object_mut().unwrap().iter_mut() {
                let major = var.strip_prefix("cuda").and_then(|m| m.parse().ok());
                slots.push((major, e));
            }
        }
        for (variant, e) in slots {
            let Some(inner) = make(key, &version, variant) else {
                continue;
            };
            let rel = e["relative_path"].as_str().unwrap().to_string();
            let file = rel.rsplit('/').next().unwrap();
            let top = file.trim_end_matches(".tar.xz");
            let mut entries = vec![(format!("{top}/"), Entry::Dir)];
            entries.push((
                format!("{top}/LICENSE"),
                Entry::File(b"synthetic test archive\n".to_vec(), 0o644),
            ));
            entries.extend(inner.into_iter().map(|(p, e)| (format!("{top}/{p}"), e)));
            let bytes = xz(&tar(&entries));
            mirror.put(&format!("{redist}/{rel}"), &bytes);
            e["sha256"] = sha256_hex(&bytes).into();
            e["size"] = bytes.len().to_string().into();
        }
    }
}

/// Serves 12.4.1 and cuDNN 9.1.1 on `mirror`, with synthetic archives.
fn redist_fixture(mirror: &Mirror, tmp: &Path) {
    let mut cuda: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{REF}/cuda/redistrib_12.4.1.json")).unwrap(),
    )
    .unwrap();
    rewrite_manifest(
        mirror,
        "compute/cuda/redist",
        &mut cuda,
        |key, version, _| {
            let mut e = Vec::new();
            for (k, base, so, sym) in REDIST_LIBS {
                if *k == key {
                    e.extend(lib_entries(tmp, "lib", base, so, version, sym, 12040));
                }
            }
            match key {
                "cuda_cudart" => e.push((
                    "include/cuda_runtime_api.h".into(),
                    Entry::File(b"#define CUDART_VERSION 12040\n".to_vec(), 0o644),
                )),
                "cuda_nvcc" => {
                    e.push((
                        "bin/nvcc".into(),
                        Entry::File(
                            b"#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n"
                                .to_vec(),
                            0o755,
                        ),
                    ));
                    e.extend(lib_entries(
                        tmp,
                        "nvvm/lib64",
                        "libnvvm",
                        "4",
                        "4.0.0",
                        "nvvmVersion",
                        2,
                    ));
                }
                "cuda_cccl" => e.push((
                    "include/thrust/version.h".into(),
                    Entry::File(b"#define THRUST_VERSION 200300\n".to_vec(), 0o644),
                )),
                _ => {}
            }
            Some(e)
        },
    );
    mirror.put(
        "compute/cuda/redist/redistrib_12.4.1.json",
        serde_json::to_string_pretty(&cuda).unwrap().as_bytes(),
    );

    let mut cudnn: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{REF}/cudnn/redistrib_9.1.1.json")).unwrap(),
    )
    .unwrap();
    rewrite_manifest(
        mirror,
        "compute/cudnn/redist",
        &mut cudnn,
        |key, version, variant| {
            (key == "cudnn" && variant == Some(12)).then(|| {
                let mut e = lib_entries(tmp, "lib", "libcudnn", "9", "9.1.1", "cudnnGetVersion", 90101);
                e.push((
                    "include/cudnn_version.h".into(),
                    Entry::File(
                        format!("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 1\n/* {version} */\n")
                            .into_bytes(),
                        0o644,
                    ),
                ));
                e
            })
        },
    );
    mirror.put(
        "compute/cudnn/redist/redistrib_9.1.1.json",
        serde_json::to_string_pretty(&cudnn).unwrap().as_bytes(),
    );
}

const LOAD: &str = r#"import ctypes, sys
for name, sym in [a.split(':') for a in sys.argv[1:]]:
    lib = ctypes.CDLL(name)
    v = ctypes.c_long(0)
    getattr(lib, sym)(ctypes.byref(v))
    print(name, v.value)
"#;

/// `cudaenv exec --version NAME -- python3 -c LOAD soname:symbol…`: loads each by soname.
fn load_by_soname(env: &TestEnv, version: &str, libs: &[&str]) -> String {
    let o = env
        .cmd()
        .args(["exec", "--version", version, "--", "python3", "-c", LOAD])
        .args(libs)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn redist_devel_stack_installs_from_a_mirror_and_loads() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    redist_fixture(&mirror, env.tmp.path());

    // Without --trust-mirror the rewritten manifests do not match cudaenv's pins.
    let o = cmd(&env, &mirror).args(["update"]).output().unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(
        text(&o).contains("does not match its pinned sha256"),
        "{}",
        text(&o)
    );
    let o = cmd(&env, &mirror)
        .args(["update", "--trust-mirror"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));

    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "nvidia",
            "--profile",
            "devel",
            "12.4.1+cudnn9.1",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let name = "12.4.1+cudnn9.1.1.17";
    let v = env.root.join("versions").join(name);
    for f in [
        "lib64/libcudart.so.12",
        "lib64/libcublasLt.so.12",
        "lib64/libnvJitLink.so.12",
        "lib64/libcudnn.so.9",
        "include/cudnn_version.h",
        "include/thrust/version.h",
        "nvvm/lib64/libnvvm.so.4",
        "bin/nvcc",
    ] {
        assert!(v.join(f).exists(), "{f} missing in {}", v.display());
    }
    assert!(!v.join("LICENSE").exists() || v.join("LICENSE").is_file());
    assert!(
        mirror.requested("compute/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz")
            || platform() != "linux-x86_64"
    );

    let out = load_by_soname(
        &env,
        name,
        &[
            "libcudart.so.12:cudaRuntimeGetVersion",
            "libcublasLt.so.12:cublasLtGetVersion",
            "libnvJitLink.so.12:nvJitLinkVersion",
            "libcudnn.so.9:cudnnGetVersion",
        ],
    );
    assert!(out.contains("libcudart.so.12 12040"), "{out}");
    assert!(out.contains("libcudnn.so.9 90101"), "{out}");
    let o = env
        .cmd()
        .args(["exec", "--version", name, "--", "nvcc", "--version"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("release 12.4"));

    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    assert!(meta.contains("source = \"nvidia\""), "{meta}");
}

// --- the legacy fixture ------------------------------------------------------------

/// The synthetic 11.2.2 runfile and cuDNN 8.1.1 archive, served at NVIDIA's
/// paths, with site pins for their sha256. Returns the runfile's path.
fn legacy_fixture(env: &TestEnv, mirror: &Mirror, runfile: Option<Vec<u8>>) -> String {
    let tmp = env.tmp.path();
    let t = "./builds";
    let x = "targets/x86_64-linux";
    let mut e: Vec<(String, Entry)> = vec![
        (
            "./cuda-installer".into(),
            Entry::File(b"\x7fELF not really".to_vec(), 0o755),
        ),
        ("./EULA.txt".into(), Entry::File(b"eula".to_vec(), 0o644)),
        (
            format!("{t}/cuda_cudart/lib64"),
            Entry::Link(format!("{x}/lib")),
        ),
        (
            format!("{t}/cuda_cudart/include"),
            Entry::Link(format!("{x}/include")),
        ),
        (
            format!("{t}/cuda_cudart/{x}/include/cuda_runtime_api.h"),
            Entry::File(b"#define CUDART_VERSION 11020\n".to_vec(), 0o644),
        ),
        (
            format!("{t}/cuda_nvcc/bin/nvcc"),
            Entry::File(b"#!/bin/sh\n".to_vec(), 0o755),
        ),
        (
            format!("{t}/nsight_systems/bin/nsys"),
            Entry::File(b"#!/bin/sh\n".to_vec(), 0o755),
        ),
    ];
    for (comp, base, so, full, sym, val) in [
        (
            "cuda_cudart",
            "libcudart",
            "11.0",
            "11.2.152",
            "cudaRuntimeGetVersion",
            11020,
        ),
        (
            "libcublas",
            "libcublas",
            "11",
            "11.4.1.1043",
            "cublasGetVersion_v2",
            11401,
        ),
        (
            "libcublas",
            "libcublasLt",
            "11",
            "11.4.1.1043",
            "cublasLtGetVersion",
            11401,
        ),
        (
            "libcufft",
            "libcufft",
            "10",
            "10.4.1.152",
            "cufftGetVersion",
            10401,
        ),
        (
            "libcurand",
            "libcurand",
            "10",
            "10.2.3.152",
            "curandGetVersion",
            10203,
        ),
        (
            "libcusolver",
            "libcusolver",
            "11",
            "11.1.0.152",
            "cusolverGetVersion",
            11100,
        ),
        (
            "libcusparse",
            "libcusparse",
            "11",
            "11.4.1.1152",
            "cusparseGetVersion",
            11401,
        ),
        (
            "cuda_nvrtc",
            "libnvrtc",
            "11.2",
            "11.2.152",
            "nvrtcVersion",
            11020,
        ),
    ] {
        e.extend(lib_entries(
            tmp,
            &format!("{t}/{comp}/{x}/lib"),
            base,
            so,
            full,
            sym,
            val,
        ));
    }
    e.extend(lib_entries(
        tmp,
        &format!("{t}/cuda_cupti/extras/CUPTI/lib64"),
        "libcupti",
        "11.2",
        "2020.3.1",
        "cuptiGetVersion",
        14,
    ));
    let run = runfile.unwrap_or_else(|| {
        cudaenv::install::unpack::runfile::build(
            &tar(&e),
            cudaenv::install::unpack::runfile::Compression::Gzip,
            "CUDA Toolkit 11.2.2 (synthetic)",
        )
    });
    let pinned = cudaenv::install::sources::legacy::runfiles()
        .iter()
        .find(|r| r.cuda.to_string() == "11.2.2" && r.platform == platform())
        .expect("11.2.2 is in the registry");
    mirror.put(&pinned.path, &run);

    let mut c = vec![
        ("cuda/".to_string(), Entry::Dir),
        (
            "cuda/NVIDIA_SLA_cuDNN_Support.txt".into(),
            Entry::File(b"sla".to_vec(), 0o644),
        ),
        (
            "cuda/include/cudnn_version.h".into(),
            Entry::File(
                b"#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 1\n"
                    .to_vec(),
                0o644,
            ),
        ),
    ];
    c.extend(lib_entries(
        tmp,
        "cuda/lib64",
        "libcudnn",
        "8",
        "8.1.1",
        "cudnnGetVersion",
        8101,
    ));
    let tgz = gz(&tar(&c));
    let cudnn_path = "compute/redist/cudnn/v8.1.1/cudnn-11.2-linux-x64-v8.1.1.33.tgz";
    mirror.put(cudnn_path, &tgz);

    let reg = env.root.join("registry");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(
        reg.join("runfiles.toml"),
        format!(
            "source = \"test fixture\"\n[[runfile]]\ncuda = \"11.2.2\"\nplatform = \"{}\"\npath = \"{}\"\nsha256 = \"{}\"\n",
            platform(),
            pinned.path,
            sha256_hex(&run)
        ),
    )
    .unwrap();
    std::fs::write(
        reg.join("cudnn-legacy.toml"),
        format!(
            "[[archive]]\nversion = \"8.1.1.33\"\ncuda_min = \"11.0\"\ncuda_max = \"11.2\"\nplatform = \"{}\"\npath = \"{cudnn_path}\"\nsha256 = \"{}\"\nsource = \"test fixture\"\n",
            platform(),
            sha256_hex(&tgz)
        ),
    )
    .unwrap();
    pinned.path.clone()
}

#[test]
fn tensorflow_stack_installs_from_a_runfile_and_a_legacy_cudnn() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let runfile_path = legacy_fixture(&env, &mirror, None);

    let o = cmd(&env, &mirror)
        .args(["install", "--source", "legacy", "11.2+cudnn8.1"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(mirror.requested(&runfile_path));
    assert!(mirror.requested("compute/redist/cudnn/v8.1.1/cudnn-11.2-linux-x64-v8.1.1.33.tgz"));
    let name = "11.2.2+cudnn8.1.1.33";
    let v = env.root.join("versions").join(name);
    assert!(v.join("lib64/libcudart.so.11.0").is_file());
    assert!(v.join("include/cuda_runtime_api.h").is_file());
    assert!(v.join("include/cudnn_version.h").is_file());
    // Runtime profile: no compiler, and nothing outside the chosen components.
    assert!(!v.join("bin/nvcc").exists());
    assert!(!v.join("bin/nsys").exists());
    assert!(!v.join("cuda-installer").exists());

    let out = load_by_soname(
        &env,
        name,
        &[
            "libcudart.so.11.0:cudaRuntimeGetVersion",
            "libcublas.so.11:cublasGetVersion_v2",
            "libcublasLt.so.11:cublasLtGetVersion",
            "libcufft.so.10:cufftGetVersion",
            "libcusolver.so.11:cusolverGetVersion",
            "libnvrtc.so.11.2:nvrtcVersion",
            "libcupti.so.11.2:cuptiGetVersion",
            "libcudnn.so.8:cudnnGetVersion",
        ],
    );
    assert!(out.contains("libcudart.so.11.0 11020"), "{out}");
    assert!(out.contains("libcudnn.so.8 8101"), "{out}");

    let o = env.run(&["versions", "--json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(name));
}

#[test]
fn dry_run_shows_the_pinned_runfile_and_cudnn_archive() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "--source",
        "legacy",
        "--dry-run",
        "11.2+cudnn8.1",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    if platform() == "linux-x86_64" {
        assert!(
            out.contains("https://developer.download.nvidia.com/compute/cuda/11.2.2/local_installers/cuda_11.2.2_460.32.03_linux.run"),
            "{out}"
        );
        assert!(
            out.contains("0a2e477224af7f6003b49edfd2bfee07667a8148fe3627cfd2765f6ad72fa19d"),
            "{out}"
        );
        assert!(
            out.contains("https://developer.download.nvidia.com/compute/redist/cudnn/v8.1.1/cudnn-11.2-linux-x64-v8.1.1.33.tgz"),
            "{out}"
        );
        assert!(
            out.contains("98a8784e92862f20018d20c281b30d4a0cd951f93694f6433ccf4ae9c502ba6a"),
            "{out}"
        );
        assert!(out.contains("takes builds/cuda_cudart"), "{out}");
    }
    assert!(
        !env.root.join("versions").exists()
            || std::fs::read_dir(env.root.join("versions"))
                .unwrap()
                .count()
                == 0
    );

    // The mirror replaces the host in every URL; --json carries the same plan.
    let o = env
        .cmd()
        .env("CUDAENV_NVIDIA_MIRROR", "file:///srv/nvidia/")
        .args([
            "install",
            "--source",
            "legacy",
            "--dry-run",
            "--json",
            "11.2+cudnn8.1",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for a in plan["artifacts"].as_array().unwrap() {
        assert!(
            a["url"]
                .as_str()
                .unwrap()
                .starts_with("file:///srv/nvidia/compute/"),
            "{a}"
        );
        assert_eq!(a["source"], "legacy");
        assert_eq!(a["sha256"].as_str().unwrap().len(), 64);
    }

    // A bad mirror setting is a usage error naming it.
    let o = env
        .cmd()
        .env("CUDAENV_NVIDIA_MIRROR", "mirror.local")
        .args(["install", "--source", "legacy", "--dry-run", "11.2"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("CUDAENV_NVIDIA_MIRROR"), "{}", text(&o));
}

#[test]
fn ls_remote_names_the_source_of_each_version() {
    let env = TestEnv::new();
    let o = env.run(&["ls-remote", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sources = |ver: &str| -> Vec<String> {
        v["cuda"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["version"] == ver)
            .map(|r| {
                r["sources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    if platform() == "linux-x86_64" {
        assert_eq!(sources("11.2.2"), ["debian", "legacy"]);
        assert_eq!(sources("10.2.89"), ["legacy"]);
    }
    assert_eq!(sources("11.4.4"), ["nvidia"]);
    let s = sources("12.4.1");
    assert!(
        s.contains(&"nvidia".to_string()) && s.contains(&"pypi".to_string()),
        "{s:?}"
    );
    let builds = v["cudnn_builds"].as_array().unwrap();
    assert!(
        builds
            .iter()
            .any(|b| b["version"] == "9.1.0.70" && b["source"] == "nvidia")
    );
    if platform() == "linux-x86_64" {
        assert!(
            builds
                .iter()
                .any(|b| b["version"] == "8.1.1.33" && b["source"] == "legacy")
        );
    }
    let o = env.run(&["ls-remote", "--source", "legacy", "11.2"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("12.4") && !out.contains("nvidia"), "{out}");
}

// --- update and hostile inputs --------------------------------------------------------

#[test]
fn update_verifies_pinned_manifests_and_stores_new_ones() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    // Byte-exact copies verify; a tampered pinned one is reported and not used.
    for f in ["redistrib_12.4.0.json", "redistrib_12.4.1.json"] {
        mirror.put(
            &format!("compute/cuda/redist/{f}"),
            &std::fs::read(format!("{REF}/cuda/{f}")).unwrap(),
        );
    }
    let mut tampered = std::fs::read(format!("{REF}/cudnn/redistrib_9.1.0.json")).unwrap();
    tampered.extend_from_slice(b"\n");
    mirror.put("compute/cudnn/redist/redistrib_9.1.0.json", &tampered);
    // A release this binary has never heard of: the 12.4.1 manifest relabelled.
    let new = std::fs::read_to_string(format!("{REF}/cuda/redistrib_12.4.1.json"))
        .unwrap()
        .replace(
            "\"release_label\": \"12.4.1\"",
            "\"release_label\": \"12.4.9\"",
        );
    mirror.put("compute/cuda/redist/redistrib_12.4.9.json", new.as_bytes());

    let o = cmd(&env, &mirror)
        .args(["update", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = report["manifests"].as_array().unwrap();
    let status = |m: &str| {
        rows.iter()
            .find(|r| r["manifest"] == m)
            .map(|r| r["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status("redistrib_12.4.1.json").as_deref(), Some("verified"));
    assert_eq!(status("redistrib_9.1.0.json").as_deref(), Some("mismatch"));
    assert_eq!(status("redistrib_12.4.9.json").as_deref(), Some("new"));
    let cached = env.root.join("cache/manifests/cuda/redistrib_12.4.9.json");
    assert!(cached.is_file());
    assert!(
        !env.root
            .join("cache/manifests/cudnn/redistrib_9.1.0.json")
            .exists()
    );

    // The new release is installable without a new binary.
    let o = env.run(&["ls-remote", "12.4.9", "--source", "nvidia"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("12.4.9"),
        "{}",
        text(&o)
    );
    let o = env.run(&["install", "--dry-run", "--source", "nvidia", "12.4.9"]);
    assert_eq!(code(&o), 0, "{}", text(&o));

    // A file:// mirror from the config file works the same (nothing new: exit 0).
    std::fs::write(
        env.root.join("config.toml"),
        format!("nvidia-mirror = \"file://{}\"\n", mirror.dir.display()),
    )
    .unwrap();
    std::fs::remove_file(mirror.dir.join("compute/cudnn/redist/redistrib_9.1.0.json")).unwrap();
    let o = env.run(&["update", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = report["manifests"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["manifest"] == "redistrib_12.4.9.json" && r["status"] == "cached")
    );
}

#[test]
fn hostile_manifests_are_rejected_and_change_nothing() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let real = std::fs::read_to_string(format!("{REF}/cuda/redistrib_12.4.1.json")).unwrap();
    let good_path = format!(
        "cuda_cudart/{p}/cuda_cudart-{p}-12.4.127-archive.tar.xz",
        p = platform()
    );
    for (i, evil) in [
        "../../../etc/passwd".to_string(),
        format!("../{good_path}"),
        "https://evil.example/cuda_cudart.tar.xz".to_string(),
        "/etc/passwd".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let m = real.replace(&good_path, evil).replace(
            "\"release_label\": \"12.4.1\"",
            &format!("\"release_label\": \"12.4.{}\"", 50 + i),
        );
        let file = format!("redistrib_12.4.{}.json", 50 + i);
        mirror.put(&format!("compute/cuda/redist/{file}"), m.as_bytes());
    }
    let o = cmd(&env, &mirror)
        .args(["update", "--trust-mirror"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("is not a valid manifest"), "{}", text(&o));
    assert!(
        !env.root.join("cache/manifests/cuda").exists()
            || std::fs::read_dir(env.root.join("cache/manifests/cuda"))
                .unwrap()
                .count()
                == 0
    );
    let o = env.run(&["ls-remote", "12.4", "--source", "nvidia"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("12.4.5"),
        "{}",
        text(&o)
    );
}

/// Serves a (trusted) 12.4.1 manifest whose cudart archive is `archive` and
/// whose size field says `size` (None: the archive's real size).
fn serve_cudart(env: &TestEnv, mirror: &Mirror, archive: Vec<u8>, size: Option<u64>) {
    let mut m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{REF}/cuda/redistrib_12.4.1.json")).unwrap(),
    )
    .unwrap();
    let e = &mut m["cuda_cudart"][platform()];
    let rel = e["relative_path"].as_str().unwrap().to_string();
    mirror.put(&format!("compute/cuda/redist/{rel}"), &archive);
    e["sha256"] = sha256_hex(&archive).into();
    e["size"] = size.unwrap_or(archive.len() as u64).to_string().into();
    mirror.put(
        "compute/cuda/redist/redistrib_12.4.1.json",
        serde_json::to_string(&m).unwrap().as_bytes(),
    );
    let o = cmd(env, mirror)
        .args(["update", "--trust-mirror"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
}

fn install_cudart_only(env: &TestEnv, mirror: &Mirror) -> std::process::Output {
    cmd(env, mirror)
        .args([
            "install",
            "--source",
            "nvidia",
            "12.4.1",
            "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti",
        ])
        .output()
        .unwrap()
}

fn assert_nothing_installed(env: &TestEnv) {
    let o = env.run(&["versions", "--bare"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "",
        "{}",
        text(&o)
    );
    assert!(!env.root.join("versions/12.4.1").exists());
}

#[test]
fn a_tar_entry_escaping_the_tree_is_rejected() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let top = format!("cuda_cudart-{}-12.4.127-archive", platform());
    let archive = xz(&tar(&[
        (
            format!("{top}/lib/libcudart.so.12"),
            Entry::File(b"ELF".to_vec(), 0o755),
        ),
        (
            format!("{top}/lib/evil"),
            Entry::Link("../../../../../../tmp/cudaenv-evil".into()),
        ),
    ]));
    serve_cudart(&env, &mirror, archive, None);
    let o = install_cudart_only(&env, &mirror);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("points outside the tree"), "{}", text(&o));
    assert_nothing_installed(&env);

    // The same with a `../` member name (written raw: the tar crate refuses to).
    let mut raw = tar(&[(format!("{top}/lib/x"), Entry::File(b"x".to_vec(), 0o644))]);
    let name = format!("{top}/../../escaped");
    raw[..100].fill(0);
    raw[..name.len()].copy_from_slice(name.as_bytes());
    let mut h = tar::Header::from_byte_slice(&raw[..512]).clone();
    h.set_cksum();
    raw[..512].copy_from_slice(h.as_bytes());
    serve_cudart(&env, &mirror, xz(&raw), None);
    let o = install_cudart_only(&env, &mirror);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains(".."), "{}", text(&o));
    assert!(!env.path("escaped").exists() && !env.root.join("escaped").exists());
    assert_nothing_installed(&env);
}

#[test]
fn a_size_lie_is_rejected() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let top = format!("cuda_cudart-{}-12.4.127-archive", platform());
    let archive = xz(&tar(&[(
        format!("{top}/lib/libcudart.so.12"),
        Entry::File(vec![7u8; 4096], 0o755),
    )]));
    let real = archive.len() as u64;
    serve_cudart(&env, &mirror, archive, Some(real / 2));
    let o = install_cudart_only(&env, &mirror);
    assert_eq!(
        code(&o),
        4,
        "a size lie is an integrity failure: {}",
        text(&o)
    );
    assert!(text(&o).contains("bytes"), "{}", text(&o));
    assert!(text(&o).contains("CUDAENV_NVIDIA_MIRROR"), "{}", text(&o));
    assert_nothing_installed(&env);
}

#[test]
fn a_runfile_header_pointing_past_the_end_is_rejected() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    // A valid runfile, then cut short: its header now promises more than is there.
    let good = {
        let e = tar(&[(
            "./builds/cuda_cudart/x".to_string(),
            Entry::File(vec![1; 100], 0o644),
        )]);
        cudaenv::install::unpack::runfile::build(
            &e,
            cudaenv::install::unpack::runfile::Compression::Xz,
            "x",
        )
    };
    let cut = good[..good.len() - 20].to_vec();
    legacy_fixture(&env, &mirror, Some(cut.clone()));
    let o = cmd(&env, &mirror)
        .args(["install", "--source", "legacy", "11.2"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("points past the end"), "{}", text(&o));
    let o = env.run(&["versions", "--bare"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "");

    // And a download that does not match the pinned sha256 is never unpacked.
    let reg = env.root.join("registry/runfiles.toml");
    let pins = std::fs::read_to_string(&reg).unwrap();
    let sha = sha256_hex(&cut);
    std::fs::write(&reg, pins.replace(&sha, &"0".repeat(64))).unwrap();
    let o = cmd(&env, &mirror)
        .args(["install", "--source", "legacy", "11.2"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("sha256 mismatch"), "{}", text(&o));
}

/// A file:// mirror (the air-gapped case) set in the config file serves installs.
#[test]
fn a_file_mirror_from_the_config_serves_installs() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    legacy_fixture(&env, &mirror, None);
    std::fs::write(
        env.root.join("config.toml"),
        format!(
            "nvidia-mirror = \"file://{}\"\n[sources]\norder = [\"legacy\", \"nvidia\"]\n",
            mirror.dir.display()
        ),
    )
    .unwrap();
    let before = mirror.requests.lock().unwrap().len();
    let o = env.run(&["install", "--source", "legacy", "11.2+cudnn8.1"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        mirror.requests.lock().unwrap().len(),
        before,
        "nothing went over HTTP"
    );
    let m: BTreeMap<String, toml::Value> = toml::from_str(
        &std::fs::read_to_string(
            env.root
                .join("versions/11.2.2+cudnn8.1.1.33/.cudaenv/meta.toml"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(m["source"].as_str(), Some("legacy"));
}

/// An entry without a pinned sha256 is refused unless the user accepts it explicitly.
#[test]
fn unpinned_runfiles_need_allow_unverified() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    legacy_fixture(&env, &mirror, None);
    let reg = env.root.join("registry/runfiles.toml");
    let pins: String = std::fs::read_to_string(&reg)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("sha256"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&reg, pins).unwrap();

    let o = cmd(&env, &mirror)
        .args(["install", "--source", "legacy", "11.2"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("--allow-unverified"), "{}", text(&o));
    assert!(
        !mirror
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.ends_with(".run"))
    );

    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "legacy",
            "--dry-run",
            "11.2",
            "--allow-unverified",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("sha256 none"),
        "{}",
        text(&o)
    );
    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "legacy",
            "11.2",
            "--allow-unverified",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = load_by_soname(&env, "11.2.2", &["libcudart.so.11.0:cudaRuntimeGetVersion"]);
    assert!(out.contains("11020"), "{out}");
}

/// `devel` takes the compiler's directory from the runfile too; `full` more.
#[test]
fn runfile_profiles_take_more_directories() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    legacy_fixture(&env, &mirror, None);
    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "legacy",
            "--profile",
            "devel",
            "11.2",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v = env.root.join("versions/11.2.2");
    assert!(v.join("bin/nvcc").is_file());
    assert!(v.join("lib64/libcudart.so.11.0").exists());
    // Not a toolkit component cudaenv installs.
    assert!(!v.join("bin/nsys").exists());
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    assert!(meta.contains("profile = \"devel\""), "{meta}");
}

/// CUDA 10.0: the runfile's payload holds a second runfile with the toolkit.
#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "NVIDIA published CUDA 10.0 for x86_64 only"
)]
fn cuda_10_0_installs_from_its_nested_runfile() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let tmp = env.tmp.path();
    let mut inner: Vec<(String, Entry)> = lib_entries(
        tmp,
        "./lib64",
        "libcudart",
        "10.0",
        "10.0.130",
        "cudaRuntimeGetVersion",
        10000,
    );
    inner.extend(lib_entries(
        tmp,
        "./lib64",
        "libcublas",
        "10.0",
        "10.0.130",
        "cublasGetVersion_v2",
        10000,
    ));
    inner.push((
        "./include/cuda_runtime_api.h".into(),
        Entry::File(b"#define CUDART_VERSION 10000\n".to_vec(), 0o644),
    ));
    inner.push((
        "./bin/nvcc".into(),
        Entry::File(b"#!/bin/sh\necho 'release 10.0'\n".to_vec(), 0o755),
    ));
    use cudaenv::install::unpack::runfile::{Compression, build};
    let inner_run = build(&tar(&inner), Compression::Gzip, "cuda-linux 10.0.130");
    let outer = build(
        &tar(&[
            (
                "./run_files/cuda-linux.10.0.130-24817639.run".into(),
                Entry::File(inner_run, 0o755),
            ),
            (
                "./run_files/cuda-samples.10.0.130-24817639.run".into(),
                Entry::File(b"#!/bin/sh\n".to_vec(), 0o755),
            ),
            (
                "./cuda-installer.pl".into(),
                Entry::File(b"#!/usr/bin/perl\n".to_vec(), 0o755),
            ),
        ]),
        Compression::Gzip,
        "CUDA 10.0.130 (synthetic)",
    );
    let path = "compute/cuda/10.0/Prod/local_installers/cuda_10.0.130_410.48_linux.run";
    mirror.put(path, &outer);
    let reg = env.root.join("registry");
    std::fs::create_dir_all(&reg).unwrap();
    std::fs::write(
        reg.join("runfiles.toml"),
        format!(
            "[[runfile]]\ncuda = \"10.0.130\"\nplatform = \"linux-x86_64\"\npath = \"{path}\"\nsha256 = \"{}\"\n",
            sha256_hex(&outer)
        ),
    )
    .unwrap();
    let o = cmd(&env, &mirror)
        .args(["install", "10.0"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(mirror.requested(path));
    let v = env.root.join("versions/10.0.130");
    assert!(v.join("include/cuda_runtime_api.h").is_file());
    assert!(!v.join("cuda-installer.pl").exists());
    let out = load_by_soname(
        &env,
        "10.0.130",
        &[
            "libcudart.so.10.0:cudaRuntimeGetVersion",
            "libcublas.so.10.0:cublasGetVersion_v2",
        ],
    );
    assert!(out.contains("libcudart.so.10.0 10000"), "{out}");
}

// --- mirror ------------------------------------------------------------------------

/// `cudaenv mirror` of a redist stack: the archives at NVIDIA's paths and the
/// manifests `update` stored, so a machine without network first runs
/// `update` from the directory, then installs; the server sees no request
/// from it.
#[test]
fn a_redist_stack_is_mirrored_and_installed_from_the_directory_alone() {
    let online = TestEnv::new();
    let server = Mirror::start(online.path("srv"));
    redist_fixture(&server, online.tmp.path());
    let o = cmd(&online, &server)
        .args(["update", "--trust-mirror"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let dir = online.path("air gap");
    let o = cmd(&online, &server)
        .arg("mirror")
        .arg(&dir)
        .args([
            "12.4.1+cudnn9.1",
            "--source",
            "nvidia",
            "--profile",
            "devel",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("run `cudaenv update` there first"),
        "{}",
        text(&o)
    );
    let p = platform();
    for rel in [
        format!(
            "nvidia/compute/cuda/redist/cuda_cudart/{p}/cuda_cudart-{p}-12.4.127-archive.tar.xz"
        ),
        "nvidia/compute/cuda/redist/redistrib_12.4.1.json".to_string(),
        "nvidia/compute/cudnn/redist/redistrib_9.1.1.json".to_string(),
    ] {
        assert!(dir.join(&rel).is_file(), "{rel} missing");
    }
    let o = std::process::Command::new("sha256sum")
        .args(["-c", "--strict", "--quiet", "SHA256SUMS"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));

    let site = TestEnv::new();
    let before = server.requests.lock().unwrap().len();
    let offline = |args: &[&str]| {
        let o = site
            .cmd()
            .envs(crate::mirror::NO_NETWORK.iter().copied())
            .env(
                "CUDAENV_NVIDIA_MIRROR",
                format!("file://{}", dir.join("nvidia").display()),
            )
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{args:?}: {}", text(&o));
    };
    offline(&["update", "--trust-mirror"]);
    offline(&[
        "install",
        "12.4.1+cudnn9.1",
        "--source",
        "nvidia",
        "--profile",
        "devel",
    ]);
    assert_eq!(
        server.requests.lock().unwrap().len(),
        before,
        "nothing went over HTTP"
    );
    let out = load_by_soname(
        &site,
        "12.4.1+cudnn9.1.1.17",
        &[
            "libcudart.so.12:cudaRuntimeGetVersion",
            "libcudnn.so.9:cudnnGetVersion",
        ],
    );
    assert!(out.contains("libcudart.so.12 12040"), "{out}");
    assert!(out.contains("libcudnn.so.9 90101"), "{out}");
}
