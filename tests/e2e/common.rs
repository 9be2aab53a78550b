//! Shared test harness: an isolated HOME + CUDAENV_ROOT, a command builder for
//! the real binary, and builders of fake-but-real CUDA trees.
//!
//! The fake trees hold real ELF shared libraries compiled here with `cc`
//! (`libcudart.so.<major>` exporting `cudaRuntimeGetVersion`, `libcudnn.so.<major>`
//! exporting `cudnnGetVersion`), so the dynamic loader, `ctypes` and cudaenv's
//! inspection all see what they would see in a real toolkit, only tiny. The
//! version a library reports is chosen by the test, which is how a test tells
//! *which* library the loader picked.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub root: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let root = tmp.path().join("root");
        std::fs::create_dir_all(&home).unwrap();
        TestEnv { tmp, home, root }
    }

    /// Like `new`, but with `$CUDAENV_ROOT` at `tmp/<root_name>` (for quoting tests).
    pub fn with_root_name(root_name: &str) -> TestEnv {
        let mut t = TestEnv::new();
        t.root = t.tmp.path().join(root_name);
        t
    }

    /// The binary, with a clean, isolated environment (PATH kept minimal).
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(bin());
        c.env_clear()
            .env("HOME", &self.home)
            .env("CUDAENV_ROOT", &self.root)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&self.home);
        c
    }

    /// Runs `cudaenv ARGS…` in `cwd` (default HOME) and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        self.cmd().current_dir(cwd).args(args).output().unwrap()
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_success(&out, &format!("cudaenv {}", args.join(" ")));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `cudaenv link NAME PATH`, asserting success.
    pub fn link(&self, name: &str, path: &Path) {
        let out = self.cmd().args(["link", name]).arg(path).output().unwrap();
        assert_success(&out, &format!("cudaenv link {name} {}", path.display()));
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
}

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cudaenv"))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed with {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(out),
        stderr(out)
    );
}

/// Asserts a specific exit code and returns stderr.
pub fn assert_code(out: &Output, code: i32, what: &str) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
    stderr(out)
}

// --- fake CUDA trees ------------------------------------------------------------

/// Compiles `c_source` into a shared library at `out` with the given soname.
pub fn cc_shared(out: &Path, soname: &str, c_source: &str) {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let src = out.with_extension("fake.c");
    std::fs::write(&src, c_source).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(format!("-Wl,-soname,{soname}"))
        .arg(&src)
        .status()
        .expect("a C compiler (`cc`) is needed by the tests: run scripts/test.sh");
    assert!(status.success(), "cc failed for {}", out.display());
    std::fs::remove_file(&src).unwrap();
}

/// `12.4.1` → 12040, the integer `cudaRuntimeGetVersion` reports.
pub fn cuda_version_int(cuda: &str) -> i32 {
    let mut parts = cuda.split('.').map(|p| p.parse::<i32>().unwrap());
    let major = parts.next().unwrap();
    let minor = parts.next().unwrap_or(0);
    major * 1000 + minor * 10
}

/// `9.1.0` → 90100, what `cudnnGetVersion` reports for cuDNN ≥ 9.
pub fn cudnn_version_int(cudnn: &str) -> i64 {
    let p: Vec<i64> = cudnn.split('.').map(|p| p.parse().unwrap()).collect();
    p[0] * 10000 + p.get(1).copied().unwrap_or(0) * 100 + p.get(2).copied().unwrap_or(0)
}

/// A real `libcudart` in `dir`: the file `file_name`, soname `libcudart.so.<major>`
/// (and a link of that name), reporting `cuda`'s version.
pub fn fake_cudart(dir: &Path, file_name: &str, cuda: &str) {
    let major = cuda.split('.').next().unwrap();
    let soname = format!("libcudart.so.{major}");
    cc_shared(
        &dir.join(file_name),
        &soname,
        &format!(
            "int cudaRuntimeGetVersion(int *v) {{ *v = {}; return 0; }}\n",
            cuda_version_int(cuda)
        ),
    );
    if file_name != soname {
        std::os::unix::fs::symlink(file_name, dir.join(&soname)).unwrap();
    }
}

/// A real `libcudnn` in `dir` (soname `libcudnn.so.<major>`) reporting `cudnn`.
pub fn fake_cudnn_lib(dir: &Path, file_name: &str, cudnn: &str) {
    let major = cudnn.split('.').next().unwrap();
    let soname = format!("libcudnn.so.{major}");
    cc_shared(
        &dir.join(file_name),
        &soname,
        &format!(
            "#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {}; }}\n",
            cudnn_version_int(cudnn)
        ),
    );
    if file_name != soname {
        std::os::unix::fs::symlink(file_name, dir.join(&soname)).unwrap();
    }
}

/// `cudnn_version.h` as cuDNN ≥ 8 ships it.
pub fn cudnn_version_h(include: &Path, cudnn: &str) {
    let p: Vec<&str> = cudnn.split('.').collect();
    std::fs::create_dir_all(include).unwrap();
    std::fs::write(
        include.join("cudnn_version.h"),
        format!(
            "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n#define CUDNN_MAJOR {}\n#define CUDNN_MINOR {}\n#define CUDNN_PATCHLEVEL {}\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n",
            p[0],
            p.get(1).unwrap_or(&"0"),
            p.get(2).unwrap_or(&"0")
        ),
    )
    .unwrap();
}

pub fn write_executable(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A toolkit-shaped tree at `dir` (like `/usr/local/cuda-12.4`):
/// `bin/nvcc` (a script printing `release X.Y`), `include/cuda.h`
/// (`CUDA_VERSION`), `version.json`, `lib64/libcudart.so.<X.Y>.<build>` with
/// soname `libcudart.so.<X>`, and with `cudnn`, `lib64/libcudnn.so.<V>`
/// (soname `libcudnn.so.<major>`) plus `include/cudnn_version.h`.
/// Returns `dir`.
pub fn fake_toolkit(dir: &Path, cuda: &str, cudnn: Option<&str>) -> PathBuf {
    let lib = dir.join("lib64");
    let include = dir.join("include");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&include).unwrap();
    let mm: Vec<&str> = cuda.split('.').collect();
    let (major, minor) = (mm[0], mm.get(1).unwrap_or(&"0"));
    write_executable(
        &dir.join("bin/nvcc"),
        &format!(
            "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release {major}.{minor}, V{major}.{minor}.131'\n"
        ),
    );
    std::fs::write(
        include.join("cuda.h"),
        format!(
            "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION {}\n#endif\n",
            cuda_version_int(cuda)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("version.json"),
        format!(
            "{{\n   \"cuda\" : {{\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"{cuda}\"\n   }},\n   \"cuda_cudart\" : {{\n      \"name\" : \"CUDA Runtime (cudart)\",\n      \"version\" : \"{major}.{minor}.127\"\n   }}\n}}\n"
        ),
    )
    .unwrap();
    fake_cudart(&lib, &format!("libcudart.so.{major}.{minor}.127"), cuda);
    std::os::unix::fs::symlink(format!("libcudart.so.{major}"), lib.join("libcudart.so")).unwrap();
    if let Some(cudnn) = cudnn {
        fake_cudnn_lib(&lib, &format!("libcudnn.so.{cudnn}"), cudnn);
        cudnn_version_h(&include, cudnn);
    }
    dir.to_path_buf()
}

/// A Python environment's NVIDIA wheels under `site_packages`, laid out as the
/// real wheels are (see `tests/fixtures/pypi/listings/`): for CUDA ≤ 12
/// `nvidia/cuda_runtime/{include,lib}` + `nvidia/cuda_nvcc/bin/ptxas`, for 13
/// `nvidia/cu13/{bin,include,lib}`; cuDNN in `nvidia/cudnn/{include,lib}`; and
/// the `*.dist-info` directories pip writes. Returns `site_packages/nvidia`.
pub fn fake_wheels(site_packages: &Path, cuda_component: &str, cudnn: Option<&str>) -> PathBuf {
    let nvidia = site_packages.join("nvidia");
    let major: u32 = cuda_component.split('.').next().unwrap().parse().unwrap();
    let (pkg, project) = if major >= 13 {
        (format!("cu{major}"), "nvidia_cuda_runtime".to_string())
    } else {
        (
            "cuda_runtime".to_string(),
            format!("nvidia_cuda_runtime_cu{major}"),
        )
    };
    let lib = nvidia.join(&pkg).join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let soname = format!("libcudart.so.{major}");
    fake_cudart(&lib, &soname, cuda_component);
    std::fs::create_dir_all(nvidia.join(&pkg).join("include")).unwrap();
    std::fs::write(
        nvidia.join(&pkg).join("include/cuda_runtime_api.h"),
        format!(
            "#define CUDART_VERSION {}\n",
            cuda_version_int(cuda_component)
        ),
    )
    .unwrap();
    if major >= 13 {
        write_executable(
            &nvidia.join(&pkg).join("bin/ptxas"),
            "#!/bin/sh\necho ptxas\n",
        );
    } else {
        write_executable(
            &nvidia.join("cuda_nvcc/bin/ptxas"),
            "#!/bin/sh\necho ptxas\n",
        );
    }
    std::fs::create_dir_all(site_packages.join(format!("{project}-{cuda_component}.dist-info")))
        .unwrap();
    if let Some(cudnn) = cudnn {
        let cl = nvidia.join("cudnn/lib");
        std::fs::create_dir_all(&cl).unwrap();
        let cmajor = cudnn.split('.').next().unwrap();
        fake_cudnn_lib(&cl, &format!("libcudnn.so.{cmajor}"), cudnn);
        cudnn_version_h(&nvidia.join("cudnn/include"), cudnn);
        std::fs::create_dir_all(
            site_packages.join(format!("nvidia_cudnn_cu{major}-{cudnn}.dist-info")),
        )
        .unwrap();
    }
    nvidia
}

/// Every path under `dir` with its type, size, mode and link target: two
/// equal snapshots mean nothing was created, removed or changed.
pub fn snapshot(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&p).unwrap();
            use std::os::unix::fs::MetadataExt;
            let content = if m.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_file() && m.len() <= 64 * 1024 {
                format!("{:x?}", std::fs::read(&p).unwrap_or_default())
            } else {
                String::new()
            };
            out.push(format!(
                "{rel} {:o} {} {} {content}",
                m.mode(),
                m.len(),
                m.mtime_nsec() + m.mtime() * 1_000_000_000
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

/// A complete *installed* version `versions/<name>` in the store at `root`,
/// as an install would leave it: a `fake_toolkit` tree plus metadata and the
/// completion marker. For tests that need versions inside `$CUDAENV_ROOT`
/// without running an install. Returns the version directory.
pub fn fake_installed(root: &Path, name: &str, cuda: &str, cudnn: Option<&str>) -> PathBuf {
    let dir = root.join("versions").join(name);
    fake_toolkit(&dir, cuda, cudnn);
    std::fs::create_dir_all(dir.join(".cudaenv")).unwrap();
    let mut meta = format!(
        "schema = 1\nkind = \"installed\"\ncuda = \"{cuda}\"\nbin_dirs = [\"bin\"]\nlib_dirs = [\"lib64\"]\nhome = \".\"\nsource = \"test\"\ncreated = 0\n"
    );
    if let Some(c) = cudnn {
        meta.push_str(&format!("cudnn = \"{c}\"\ncudnn_home = \".\"\n"));
    }
    std::fs::write(dir.join(".cudaenv/meta.toml"), meta).unwrap();
    std::fs::write(dir.join(".cudaenv/complete"), "").unwrap();
    dir
}

/// Runs `script` in a real bash (`bash --noprofile --norc -c`) with the
/// environment of `env.cmd()` plus `vars`, in `cwd`; `cudaenv` is on PATH
/// as `$CUDAENV`. Returns stdout, asserting success.
pub fn bash(env: &TestEnv, cwd: &Path, vars: &[(&str, &str)], script: &str) -> String {
    let mut c = Command::new("bash");
    c.env_clear()
        .env("HOME", &env.home)
        .env("CUDAENV_ROOT", &env.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env("CUDAENV", bin())
        .current_dir(cwd)
        .args(["--noprofile", "--norc", "-c", script]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert_success(&out, &format!("bash -c {script:?}"));
    stdout(&out)
}

/// Checks that `bytes` is one JSON document in which no object has a key
/// twice (serde_json keeps the last value, so a script reading the first
/// copy and one reading the second disagree).
pub fn json_without_duplicate_keys(bytes: &[u8]) -> Result<(), String> {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};

    struct Strict;
    struct StrictVisitor;

    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(StrictVisitor)
        }
    }

    impl<'de> Visitor<'de> for StrictVisitor {
        type Value = Strict;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_str<E>(self, _: &str) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_unit<E>(self) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
            while seq.next_element::<Strict>()?.is_some() {}
            Ok(Strict)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key.clone()) {
                    return Err(A::Error::custom(format!(
                        "the key `{key}` appears twice in one object"
                    )));
                }
                map.next_value::<Strict>()?;
            }
            Ok(Strict)
        }
    }

    serde_json::from_slice::<Strict>(bytes)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// `out`'s stdout as JSON, checked for keys written twice in one object.
pub fn json(out: &Output) -> serde_json::Value {
    let what = || format!("stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
    json_without_duplicate_keys(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON, or a key twice ({e}):\n{}", what()));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A finished command's status, stdout and stderr, for assertion messages.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Reads an HTTP request of a loopback test server: its path and headers
/// (lower-cased names).
pub fn request(s: &std::net::TcpStream) -> std::io::Result<(String, Vec<(String, String)>)> {
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(s.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    Ok((path, headers))
}
