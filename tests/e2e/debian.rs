//! The Debian source end to end: live against deb.debian.org with the
//! smallest package of CUDA 11.2 (`libcudart11.0`, 157 KB), and against a
//! loopback mirror for what the archive cannot show (a mirror serving other
//! bytes than the registry pins, a missing package, a `file://` mirror).

use std::path::Path;

use crate::common::*;
use crate::nvidia::Mirror;

/// Leaves only cudart in 11.2's runtime profile.
pub(crate) const ONLY_CUDART: &str = "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,cupti";

/// The pool path of bullseye's libcudart11.0 for this machine.
pub(crate) fn cudart_pool_path() -> String {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "amd64",
    };
    format!(
        "pool/non-free/n/nvidia-cuda-toolkit/libcudart11.0_11.2.152~11.2.2-3+deb11u3_{arch}.deb"
    )
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Loads `libcudart.so.11.0` by soname under `exec` and prints where the
/// loader found it, `cudaRuntimeGetVersion`'s status and value, and the
/// status's name as the library spells it.
const LOAD: &str = r#"
import ctypes, os
lib = ctypes.CDLL("libcudart.so.11.0")
path = next(l.split()[-1] for l in open("/proc/self/maps") if "libcudart.so" in l)
v = ctypes.c_int(0)
r = lib.cudaRuntimeGetVersion(ctypes.byref(v))
lib.cudaGetErrorName.restype = ctypes.c_char_p
print(os.path.realpath(path))
print(r, v.value, lib.cudaGetErrorName(r).decode())
"#;

/// Is there an NVIDIA driver for NVIDIA's runtime to talk to?
fn has_driver() -> bool {
    // SAFETY: dlopen of a library by name; the handle is never used.
    let h = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_LAZY) };
    !h.is_null()
}

pub(crate) fn assert_real_cudart_11_2(env: &TestEnv, version: &str) {
    let o = env.run(&["exec", "--version", version, "--", "python3", "-c", LOAD]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut lines = out.lines();
    let path = lines.next().unwrap_or_default();
    let want = std::fs::canonicalize(
        env.root
            .join("versions")
            .join(version)
            .join("lib64/libcudart.so.11.2.152"),
    )
    .unwrap();
    assert_eq!(Path::new(path), want, "{out}");
    // CUDA 11.2's runtime asks the driver even for its own version (12.x's
    // does not): with a driver it says 11020, without one it fails with
    // the status only NVIDIA's real library gives here.
    let status = lines.next().unwrap_or_default();
    if has_driver() {
        assert_eq!(status, "0 11020 cudaSuccess", "{out}");
    } else {
        assert_eq!(status, "35 0 cudaErrorInsufficientDriver", "{out}");
    }
}

#[test]
fn live_debian_install_of_cuda_11_2_loads_nvidias_cudart() {
    let env = TestEnv::new();
    // The downloaded .deb is served again below: keep it in the cache.
    let o = env
        .cmd()
        .env("CUDAENV_KEEP_DOWNLOADS", "1")
        .args(["install", "11.2", "--source", "debian", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v = env.root.join("versions/11.2.2");
    let lib = v.join("lib64");
    assert_eq!(
        std::fs::read_link(lib.join("libcudart.so.11.0")).unwrap(),
        Path::new("libcudart.so.11.2.152")
    );
    assert!(lib.join("libcudart.so.11.2.152").is_file());
    // Only the library directories of the package reach the tree.
    let mut top: Vec<String> = std::fs::read_dir(&v)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, [".cudaenv", "lib", "lib64"]);
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    assert!(meta.contains("source = \"debian\""), "{meta}");
    assert!(meta.contains("version = \"11.2.152\""), "{meta}");
    assert!(meta.contains(&cudart_pool_path()), "{meta}");
    assert_real_cudart_11_2(&env, "11.2.2");

    // The same package from a loopback mirror (CUDAENV_DEBIAN_MIRROR), into
    // a second root: the pool path is the mirror's, the bytes the pinned ones.
    let deb = find_file(&env.root.join("cache/downloads"), |n| {
        n.contains("-libcudart11.0_11.2.152") && n.ends_with(".deb")
    })
    .expect("the downloaded .deb is in the cache");
    let other = TestEnv::new();
    let mirror = Mirror::start(other.path("mirror"));
    mirror.put(&cudart_pool_path(), &std::fs::read(&deb).unwrap());
    let o = other
        .cmd()
        .env("CUDAENV_DEBIAN_MIRROR", format!("{}/debian/", mirror.url()))
        .args(["install", "11.2", "--source", "debian", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(
        code(&o),
        5,
        "the mirror has no debian/ prefix: {}",
        text(&o)
    );
    mirror.put(
        &format!("debian/{}", cudart_pool_path()),
        &std::fs::read(&deb).unwrap(),
    );
    let o = other
        .cmd()
        .env("CUDAENV_DEBIAN_MIRROR", format!("{}/debian/", mirror.url()))
        .args(["install", "11.2", "--source", "debian", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_real_cudart_11_2(&other, "11.2.2");
}

/// Bookworm's 11.8 and trixie's 12.4 lay their packages out the same way;
/// 12.x's runtime answers `cudaRuntimeGetVersion` without a driver.
#[test]
fn live_debian_installs_of_11_8_and_12_4_resolve_their_sonames() {
    let env = TestEnv::new();
    let without = "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";
    for (spec, version, soname, file) in [
        (
            "11.8",
            "11.8.0",
            "libcudart.so.11.0",
            "libcudart.so.11.8.89",
        ),
        ("12.4", "12.4.1", "libcudart.so.12", "libcudart.so.12.4.127"),
    ] {
        let o = env.run(&["install", spec, "--source", "debian", without]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        let lib = env.root.join("versions").join(version).join("lib64");
        assert_eq!(
            std::fs::read_link(lib.join(soname)).unwrap(),
            Path::new(file)
        );
        assert!(lib.join(file).is_file());
    }
    let o = env.run(&[
        "exec",
        "--version",
        "12.4.1",
        "--",
        "python3",
        "-c",
        "import ctypes; l = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); \
         print(l.cudaRuntimeGetVersion(ctypes.byref(v)), v.value)",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0 12040");
}

/// The first file under `dir` whose name `want`s.
fn find_file(dir: &Path, want: impl Fn(&str) -> bool + Copy) -> Option<std::path::PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    for e in rd.flatten() {
        let p = e.path();
        let ft = e.file_type().ok()?;
        if ft.is_dir() {
            if let Some(f) = find_file(&p, want) {
                return Some(f);
            }
        } else if ft.is_file() && want(&e.file_name().to_string_lossy()) {
            return Some(p);
        }
    }
    None
}

#[test]
fn the_default_order_takes_11_2_from_debian_and_cudnn_from_legacy() {
    let env = TestEnv::new();
    let o = env.run(&["install", "11.2+cudnn8.1", "--dry-run", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let arts = plan["artifacts"].as_array().expect("artifacts");
    let source_of = |c: &str| -> Vec<String> {
        arts.iter()
            .filter(|a| a["component"] == c)
            .map(|a| a["source"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(source_of("cudart"), ["debian"]);
    assert_eq!(
        source_of("cublas"),
        ["debian", "debian"],
        "libcublas + libcublasLt"
    );
    assert_eq!(source_of("cudnn"), ["legacy"]);
    assert!(
        arts.iter()
            .filter(|a| a["source"] == "debian")
            .all(|a| a["url"]
                .as_str()
                .unwrap()
                .starts_with("http://deb.debian.org/debian/pool/non-free/")
                && a["sha256"].as_str().unwrap().len() == 64),
        "{plan}"
    );
}

#[test]
fn a_mirror_serving_other_bytes_or_nothing_installs_nothing() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("mirror"));
    let run = || {
        env.cmd()
            .env("CUDAENV_DEBIAN_MIRROR", mirror.url())
            .args(["install", "11.2", "--source", "debian", ONLY_CUDART])
            .output()
            .unwrap()
    };
    // Nothing at the pinned path.
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 5, "{}", text(&o));
    assert!(err.contains("libcudart11.0_11.2.152"), "{err}");
    assert!(!env.root.join("versions/11.2.2").exists());
    // A well-formed package, but not the one the registry pins.
    let tampered = crate::reliability::hostile_deb::deb(&[
        ("debian-binary", b"2.0\n".to_vec()),
        ("control.tar.xz", Vec::new()),
        ("data.tar", vec![0u8; 1024]),
    ]);
    let mut padded = tampered.clone();
    padded.resize(156756, b'\n');
    mirror.put(&cudart_pool_path(), &padded);
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(err.contains("sha256"), "{err}");
    assert!(
        err.contains("7d4904886b6bc32ab07a18a7372505ff12ac7053e06e4a6880d64312f85de2d1")
            || !cfg!(target_arch = "x86_64"),
        "names the pinned hash: {err}"
    );
    assert!(!env.root.join("versions/11.2.2").exists());
    assert_eq!(env.ok(&["versions", "--bare"]).trim(), "");
}

#[test]
fn a_bad_debian_mirror_setting_is_a_usage_error() {
    let env = TestEnv::new();
    let o = env
        .cmd()
        .env("CUDAENV_DEBIAN_MIRROR", "deb.debian.org/debian")
        .args(["install", "11.2", "--source", "debian", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("CUDAENV_DEBIAN_MIRROR"),
        "{}",
        text(&o)
    );
    std::fs::create_dir_all(&env.root).unwrap();
    std::fs::write(
        env.root.join("config.toml"),
        "debian-mirror = \"file:///srv/debian\"\n",
    )
    .unwrap();
    let o = env.run(&[
        "install",
        "11.2",
        "--source",
        "debian",
        "--dry-run",
        ONLY_CUDART,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("file:///srv/debian/pool/non-free/"),
        "{}",
        text(&o)
    );
}

/// What docs/install.md says `install 11.2+cudnn8.1` takes is what the plan
/// takes: CUDA 11.2.2 from Debian's packages and cuDNN 8.1.1 from NVIDIA's
/// legacy archive (`--source legacy`: the runfile); and the dry run says
/// which of cublas's two packages is cuBLAS and which cuBLASLt (live
/// Debian archive; the legacy archive is planned from cudaenv's pins,
/// nothing is fetched from NVIDIA).
#[test]
fn the_11_2_plan_is_what_the_docs_say_and_names_cublas_parts() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/install.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        docs.contains("`install 11.2+cudnn8.1` installs CUDA 11.2.2 from Debian's packages and cuDNN 8.1.1 from NVIDIA's legacy archive (`--source legacy` takes CUDA 11.2.2 from its runfile instead)"),
        "docs/install.md no longer says what the plan below checks"
    );
    let env = TestEnv::new();
    let lines = |extra: &[&str]| -> String {
        let o = env
            .cmd()
            .args(["install", "11.2+cudnn8.1", "--dry-run"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", text(&o));
        stdout(&o)
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if cfg!(target_arch = "x86_64") {
        insta::assert_snapshot!(lines(&[]), @r"
          cudart 11.2.152 (debian)
          cublas 11.4.1.1043 (debian, libcublas11: cuBLAS)
          cublas 11.4.1.1043 (debian, libcublaslt11: cuBLASLt)
          cufft 10.4.1.152 (debian)
          curand 10.2.3.152 (debian)
          cusolver 11.1.0.152 (debian)
          cusparse 11.4.1.1152 (debian)
          nvrtc 11.2.152 (debian)
          cupti 11.2.152 (debian)
          cudnn 8.1.1.33 (legacy)
        ");
    }
    let legacy = lines(&["--source", "legacy"]);
    assert!(
        legacy.starts_with("  toolkit 11.2.2 (legacy)")
            && legacy.contains("cudnn 8.1.1.33 (legacy)"),
        "{legacy}"
    );
}
