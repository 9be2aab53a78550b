//! The libraries beside the toolkit (NCCL, TensorRT, cuSPARSELt, cuTENSOR)
//! end to end.
//!
//! Live against pypi.org: one CUDA 12.4 stack with the smallest NCCL,
//! cuSPARSELt and cuTENSOR wheels (nvidia-nccl-cu12 2.19.3, 166 MB;
//! nvidia-cusparselt-cu12 0.6.2, 150 MB; cutensor-cu12 1.6.2, 143 MB) and
//! only cudart of the toolkit; the real loader resolves each library by
//! soname into the stack; NCCL and cuSPARSELt answer their version calls
//! without a GPU (cuTENSOR links the driver's libcuda.so.1 and cuBLASLt, so
//! without them the loader's answer is the dependency it stops at).
//! The same stack is then locked, exported as pip constraints and mirrored,
//! and installed again from the mirror with no network.
//!
//! TensorRT's wheels are on NVIDIA's package index (pypi.org carries only
//! stubs that download them at install time), which this machine cannot
//! reach: its test serves a wheel of the same layout (`tensorrt_libs/…`,
//! holding a `libnvinfer.so.10` compiled here that exports
//! `getInferLibVersion`) from a loopback index.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;

use crate::common::{TestEnv, cc_shared, text};
use crate::pypi::{ONLY_CUDART, file, good_wheel, sha256, wheel_name, zip};

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Loads each soname under `exec`, prints where the loader found it and what
/// its version call answered.
const LOAD: &str = r#"
import ctypes, os, sys
def where(name):
    return os.path.realpath(next(l.split()[-1] for l in open("/proc/self/maps") if name in l))
nccl = ctypes.CDLL("libnccl.so.2")
v = ctypes.c_int(0)
print("nccl", nccl.ncclGetVersion(ctypes.byref(v)), v.value, where("libnccl.so"))
lt = ctypes.CDLL("libcusparseLt.so.0")
v = ctypes.c_int(0)
# cusparseLtGetProperty(MINOR_VERSION = 1, &value): no handle, no GPU.
print("cusparselt", lt.cusparseLtGetProperty(1, ctypes.byref(v)), v.value, where("libcusparseLt.so"))
# cuTENSOR 1.x needs cuBLASLt (left out of this stack) and the driver's
# libcuda.so.1: the loader finds libcutensor.so.1 and stops at its first
# missing dependency, which its error names.
try:
    ctypes.CDLL("libcutensor.so.1")
    print("cutensor loaded")
except OSError as e:
    print("cutensor", str(e).split(":")[0])
"#;

const SPEC: &str = "12.4+nccl2.19+cusparselt0.6.2+cutensor1.6";
const NAME: &str = "12.4.1+nccl2.19.3+cusparselt0.6.2+cutensor1.6.2";

#[test]
fn live_pypi_libraries_install_load_lock_export_and_mirror() {
    let env = TestEnv::new();
    let o = env.run(&["install", SPEC, ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v = env.root.join("versions").join(NAME);
    for lib in [
        "lib64/libnccl.so.2",
        "lib64/libcusparseLt.so.0",
        "lib64/libcutensor.so.1",
        "include/nccl.h",
        "include/cusparseLt.h",
        "include/cutensor.h",
    ] {
        assert!(v.join(lib).is_file(), "{lib} missing");
    }
    assert!(!v.join("lib64/__init__.py").exists());
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    for c in [
        "name = \"nccl\"",
        "name = \"cusparselt\"",
        "name = \"cutensor\"",
    ] {
        assert!(meta.contains(c), "{meta}");
    }

    // The real loader, by soname, under `exec`: each library is the stack's
    // and answers without a GPU.
    let o = env.run(&["exec", "--version", NAME, "--", "python3", "-c", LOAD]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let lib64 = std::fs::canonicalize(v.join("lib64")).unwrap();
    let mut lines = out.lines();
    for (name, want) in [("nccl", "21903"), ("cusparselt", "6")] {
        let line = lines.next().unwrap_or_default();
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 4, "{out}");
        assert_eq!((f[0], f[1], f[2]), (name, "0", want), "{out}");
        assert!(Path::new(f[3]).starts_with(&lib64), "{out}");
    }
    assert_eq!(lines.next(), Some("cutensor libcublasLt.so.12"), "{out}");

    // verify runs the NCCL check: the child loads the stack's libnccl.so.2
    // by soname and reads its version, with or without a GPU (without a
    // driver, as on the machines that run the tests, it exits NoDriver).
    let o = env.run(&["verify", NAME, "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["nccl"]["version"], "2.19.3", "{j}");
    let lib = j["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "nccl")
        .unwrap();
    assert_eq!(lib["origin"], "version", "{lib}");
    let o = env.run(&["verify", NAME]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("NCCL 2.19.3: "),
        "{}",
        text(&o)
    );

    // ls-remote lists PyPI's builds of the libraries a spec names.
    let o = env.run(&["ls-remote", "12.4+nccl2.19", "--with", "cutensor", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["libraries"]["nccl"]["cuda12"],
        serde_json::json!(["2.19.3"])
    );
    let cutensor = j["libraries"]["cutensor"]["cuda12"].as_array().unwrap();
    assert!(cutensor.iter().any(|v| v == "1.6.2") && cutensor.iter().any(|v| v == "2.8.1"));

    // A pin satisfied by the installed stack; its lock carries the libraries.
    let project = env.home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), format!("{SPEC}\n")).unwrap();
    let o = env.run_in(&project, &["lock", ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let lock = std::fs::read_to_string(project.join("cuda.lock")).unwrap();
    for want in [
        "component = \"nccl\"",
        "nvidia_nccl_cu12-2.19.3-",
        "component = \"cusparselt\"",
        "component = \"cutensor\"",
        "[stack.libraries]",
        "nccl = \"2.19.3\"",
    ] {
        assert!(lock.contains(want), "{want} not in\n{lock}");
    }
    let o = env.run_in(&project, &["install", "--locked"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("already installed"), "{}", text(&o));

    // pip's constraints name the same wheels.
    let o = env.run_in(&project, &["export", "pip-constraints"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let c = String::from_utf8_lossy(&o.stdout);
    for want in [
        "nvidia-nccl-cu12==2.19.3",
        "nvidia-cusparselt-cu12==0.6.2",
        "cutensor-cu12==1.6.2",
        "nvidia-cuda-runtime-cu12==12.4.127",
    ] {
        assert!(c.contains(want), "{want} not in\n{c}");
    }

    // A mirror of the stack serves it again without the network.
    let mirror = env.tmp.path().join("mirror");
    let o = env.run(&["mirror", mirror.to_str().unwrap(), SPEC, ONLY_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    for p in [
        "nvidia-nccl-cu12",
        "nvidia-cusparselt-cu12",
        "cutensor-cu12",
    ] {
        assert!(
            mirror
                .join("pypi/simple")
                .join(p)
                .join("index.html")
                .is_file(),
            "{p} not mirrored"
        );
    }
    let other = TestEnv::new();
    let o = other
        .cmd()
        .env(
            "CUDAENV_PYPI_INDEX",
            format!("file://{}", mirror.join("pypi/simple").display()),
        )
        .args(["install", SPEC, ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        other
            .root
            .join("versions")
            .join(NAME)
            .join("lib64/libnccl.so.2")
            .is_file()
    );
}

/// A loopback index serving several projects: `(project, file name, bytes)`.
struct Index {
    port: u16,
}

impl Index {
    fn start(files: Vec<(String, String, Vec<u8>)>) -> Index {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let files = Arc::new(files);
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let files = files.clone();
                std::thread::spawn(move || {
                    let _ = serve(s, port, &files);
                });
            }
        });
        Index { port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/simple", self.port)
    }
}

fn serve(
    mut s: std::net::TcpStream,
    port: u16,
    files: &[(String, String, Vec<u8>)],
) -> std::io::Result<()> {
    let (path, _) = crate::common::request(&s)?;
    if let Some(project) = path
        .strip_prefix("/simple/")
        .and_then(|p| p.strip_suffix('/'))
    {
        let list: Vec<_> = files
            .iter()
            .filter(|(p, _, _)| p == project)
            .map(|(_, name, body)| {
                serde_json::json!({
                    "filename": name,
                    "url": format!("http://127.0.0.1:{port}/files/{name}"),
                    "hashes": {"sha256": sha256(body)},
                    "size": body.len(),
                })
            })
            .collect();
        if list.is_empty() {
            return write!(
                s,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        let json =
            serde_json::json!({"meta": {"api-version": "1.1"}, "name": project, "files": list})
                .to_string();
        return write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
            json.len()
        );
    }
    match files
        .iter()
        .find(|(_, name, _)| path == format!("/files/{name}"))
    {
        Some((_, _, body)) => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            s.write_all(body)
        }
        None => write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    }
}

/// A TensorRT libraries wheel laid out as NVIDIA's are (`tensorrt_libs/`,
/// flat), holding a real ELF `libnvinfer.so.10` whose `getInferLibVersion`
/// answers `version`.
fn tensorrt_wheel(tmp: &Path, version: i32) -> Vec<u8> {
    let so = tmp.join("libnvinfer.so.10");
    cc_shared(
        &so,
        "libnvinfer.so.10",
        &format!("int getInferLibVersion(void) {{ return {version}; }}\n"),
    );
    let lib = std::fs::read(&so).unwrap();
    zip(&[
        file("tensorrt_libs/__init__.py", b""),
        file("tensorrt_libs/libnvinfer.so.10", &lib),
        file("tensorrt_cu12_libs-10.1.0.dist-info/RECORD", b""),
    ])
}

#[test]
fn tensorrt_comes_from_nvidias_index_and_loads_by_soname() {
    let env = TestEnv::new();
    let trt = tensorrt_wheel(env.tmp.path(), 100100);
    let arch = std::env::consts::ARCH;
    let idx = Index::start(vec![
        (
            "nvidia-cuda-runtime-cu12".into(),
            wheel_name(),
            good_wheel(),
        ),
        (
            "tensorrt-cu12-libs".into(),
            format!("tensorrt_cu12_libs-10.1.0-py2.py3-none-manylinux_2_17_{arch}.whl"),
            trt,
        ),
    ]);
    let o = env
        .cmd()
        .env("CUDAENV_PYPI_INDEX", idx.url())
        .env("CUDAENV_PYPI_NVIDIA_INDEX", idx.url())
        .args(["install", "12.4.1+trt10", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let name = "12.4.1+trt10.1.0";
    let v = env.root.join("versions").join(name);
    assert!(v.join("lib64/libnvinfer.so.10").is_file());
    assert!(!v.join("lib64/__init__.py").exists());
    let o = env.run(&[
        "exec",
        "--version",
        name,
        "--",
        "python3",
        "-c",
        "import ctypes, os; l = ctypes.CDLL('libnvinfer.so.10'); \
         p = next(x.split()[-1] for x in open('/proc/self/maps') if 'libnvinfer' in x); \
         print(l.getInferLibVersion(), os.path.realpath(p))",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let (ver, path) = out.trim().split_once(' ').unwrap();
    assert_eq!(ver, "100100");
    assert!(
        Path::new(path).starts_with(std::fs::canonicalize(v.join("lib64")).unwrap()),
        "{out}"
    );
}

#[test]
fn a_library_from_a_source_without_it_is_refused_before_any_download() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "12.4+nccl2.21",
        "--source",
        "nvidia",
        "--dry-run",
    ]);
    insta::assert_snapshot!(format!("exit {}\n{}", code(&o), text(&o)));
    assert!(!env.root.join("versions").exists());
}

#[test]
fn bad_library_specs_are_refused_by_the_parser() {
    let env = TestEnv::new();
    for (spec, why) in [
        ("12.4+nccl", "NCCL version"),
        ("12.4+nccl2.21+nccl2.20", "twice"),
        ("12.4+trt10+cudnn9+cudnn8", "at most one `+cudnn"),
        ("12.4+mkl2024", "expected `+cudnn`"),
    ] {
        let o = env.run(&["install", spec, "--dry-run"]);
        assert_eq!(code(&o), 2, "{spec}: {}", text(&o));
        assert!(text(&o).contains(why), "{spec}: {}", text(&o));
    }
}
