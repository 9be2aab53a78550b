//! cuSPARSELt and cuTENSOR from NVIDIA's redist server
//! (`/compute/{cusparselt,cutensor}/redist/redistrib_X.Y.Z.json`), against
//! the loopback server of the parent module: the real 0.8.1 manifest for what
//! a plan pins, and manifests of the same shape over small synthetic archives
//! (real ELF libraries under the real sonames) for what an install does.

use super::*;

/// The components of 12.4.1 left out so that cudart alone is the toolkit.
const CUDART_ONLY: &str = "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";

/// Serves 12.4.1 with a synthetic cudart, and cuSPARSELt 0.8.1 / cuTENSOR
/// 2.8.1 with synthetic CUDA 12 archives; `tamper` may then edit the served
/// library manifests. Takes them in with `update --trust-mirror`.
fn libraries_fixture(
    env: &TestEnv,
    mirror: &Mirror,
    tamper: impl Fn(&str, &mut serde_json::Value),
) {
    let tmp = env.tmp.path();
    let mut cuda: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{REF}/cuda/redistrib_12.4.1.json")).unwrap(),
    )
    .unwrap();
    rewrite_manifest(
        mirror,
        "compute/cuda/redist",
        &mut cuda,
        |key, version, _| {
            (key == "cuda_cudart").then(|| {
                lib_entries(
                    tmp,
                    "lib",
                    "libcudart",
                    "12",
                    version,
                    "cudaRuntimeGetVersion",
                    12040,
                )
            })
        },
    );
    mirror.put(
        "compute/cuda/redist/redistrib_12.4.1.json",
        serde_json::to_string_pretty(&cuda).unwrap().as_bytes(),
    );
    for (product, file, key, base, so, symbol, value) in [
        (
            "cusparselt",
            "redistrib_0.8.1.json",
            "libcusparse_lt",
            "libcusparseLt",
            "0",
            "cusparseLtGetVersion",
            801,
        ),
        (
            "cutensor",
            "redistrib_2.8.1.json",
            "libcutensor",
            "libcutensor",
            "2",
            "cutensorGetVersion",
            20801,
        ),
    ] {
        let mut m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{REF}/{product}/{file}")).unwrap(),
        )
        .unwrap();
        let redist = format!("compute/{product}/redist");
        rewrite_manifest(mirror, &redist, &mut m, |k, version, variant| {
            (k == key && variant == Some(12)).then(|| {
                let mut e = lib_entries(tmp, "lib", base, so, version, symbol, value);
                e.push((
                    format!("include/{base}.h"),
                    Entry::File(format!("/* {version} */\n").into_bytes(), 0o644),
                ));
                e
            })
        });
        tamper(product, &mut m);
        mirror.put(
            &format!("{redist}/{file}"),
            serde_json::to_string_pretty(&m).unwrap().as_bytes(),
        );
    }
    let o = cmd(env, mirror)
        .args(["update", "--trust-mirror"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
}

#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "the snapshot pins NVIDIA's linux-x86_64 archives"
)]
fn a_cusparselt_dry_run_pins_the_archive_of_nvidias_manifest() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    let real = std::fs::read(format!("{REF}/cusparselt/redistrib_0.8.1.json")).unwrap();
    mirror.put("compute/cusparselt/redist/redistrib_0.8.1.json", &real);
    // NVIDIA's own bytes match the pin: `update` verifies them, stores nothing.
    let o = cmd(&env, &mirror).args(["update"]).output().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(mirror.requested("compute/cusparselt/redist/redistrib_0.8.1.json"));
    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--dry-run",
            "12.8+cusparselt0.8",
            "--source",
            "nvidia",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = text(&o).replace(&mirror.url(), "http://127.0.0.1:PORT");
    for want in [
        "http://127.0.0.1:PORT/compute/cusparselt/redist/libcusparse_lt/linux-x86_64/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive.tar.xz",
        "b34272e683e9f798435af05dc124657d1444cd0e13802c3d2f3152e31cd898a3",
    ] {
        assert!(out.contains(want), "{out}");
    }
    insta::assert_snapshot!(format!("exit {}\n{out}", code(&o)));
    assert!(
        !env.root.join("versions").exists() || env.run(&["versions", "--bare"]).stdout.is_empty()
    );
}

#[test]
fn cusparselt_and_cutensor_install_from_nvidias_server_and_load() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    libraries_fixture(&env, &mirror, |_, _| {});
    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "nvidia",
            "12.4.1+cusparselt0.8+cutensor2",
            CUDART_ONLY,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let name = "12.4.1+cusparselt0.8.1.1+cutensor2.8.1.0";
    let v = env.root.join("versions").join(name);
    for f in [
        "lib64/libcusparseLt.so.0",
        "lib64/libcutensor.so.2",
        "include/libcusparseLt.h",
        "include/libcutensor.h",
    ] {
        assert!(v.join(f).exists(), "{f} missing in {}", v.display());
    }
    let p = platform();
    assert!(mirror.requested(&format!(
        "compute/cutensor/redist/libcutensor/{p}/libcutensor-{p}-2.8.1.0_cuda12-archive.tar.xz"
    )));
    let out = load_by_soname(
        &env,
        name,
        &[
            "libcusparseLt.so.0:cusparseLtGetVersion",
            "libcutensor.so.2:cutensorGetVersion",
        ],
    );
    assert!(out.contains("libcusparseLt.so.0 801"), "{out}");
    assert!(out.contains("libcutensor.so.2 20801"), "{out}");
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    assert!(meta.contains("cusparselt"), "{meta}");

    // ls-remote lists the builds beside NVIDIA's cuDNN builds.
    let o = cmd(&env, &mirror)
        .args(["ls-remote", "12.4+cusparselt0.8", "--source", "nvidia"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(
        listed.lines().any(|l| l.starts_with("cusparselt 0.8.1.1")
            && l.contains("nvidia")
            && l.contains("cuda12")),
        "{listed}"
    );

    // A mirror takes the archives and the manifests `update` stored.
    let dir = env.path("air gap");
    let o = cmd(&env, &mirror)
        .arg("mirror")
        .arg(&dir)
        .args([
            "12.4.1+cusparselt0.8+cutensor2",
            "--source",
            "nvidia",
            CUDART_ONLY,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    for rel in [
        format!(
            "nvidia/compute/cusparselt/redist/libcusparse_lt/{p}/libcusparse_lt-{p}-0.8.1.1_cuda12-archive.tar.xz"
        ),
        "nvidia/compute/cusparselt/redist/redistrib_0.8.1.json".to_string(),
        "nvidia/compute/cutensor/redist/redistrib_2.8.1.json".to_string(),
    ] {
        assert!(dir.join(&rel).is_file(), "{rel} missing");
    }
}

#[test]
fn a_cutensor_archive_whose_sha256_lies_is_rejected_and_nothing_is_installed() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    libraries_fixture(&env, &mirror, |product, m| {
        if product == "cutensor" {
            m["libcutensor"][platform()]["cuda12"]["sha256"] = "ab".repeat(32).into();
        }
    });
    let o = cmd(&env, &mirror)
        .args([
            "install",
            "--source",
            "nvidia",
            "12.4.1+cusparselt0.8+cutensor2",
            CUDART_ONLY,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("sha256"), "{}", text(&o));
    assert_nothing_installed(&env);
    let left: Vec<String> = std::fs::read_dir(env.root.join("versions"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.iter().all(|n| n.starts_with('.')), "{left:?}");
}

#[test]
fn nccl_is_still_refused_from_nvidias_server_while_cutensor_is_not() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "12.8+cutensor2",
        "--source",
        "nvidia",
        "--dry-run",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("cutensor"),
        "{}",
        text(&o)
    );
    let o = env.run(&[
        "install",
        "12.8+cutensor2+trt10",
        "--source",
        "nvidia",
        "--dry-run",
    ]);
    assert_eq!(code(&o), 7, "{}", text(&o));
    assert!(
        text(&o).contains("TensorRT is not available from --source nvidia"),
        "{}",
        text(&o)
    );
    // cuDNN's variant rule holds: 0.10 is built for CUDA 13 alone.
    let o = env.run(&[
        "install",
        "12.8+cusparselt0.10",
        "--source",
        "nvidia",
        "--dry-run",
    ]);
    assert_eq!(code(&o), 7, "{}", text(&o));
    assert!(
        text(&o).contains("cuSPARSELt 0.10 for CUDA 12"),
        "{}",
        text(&o)
    );
}

/// A package index whose `cutensor-cu12` stops at 2.2.0 (a site's mirror
/// that is behind, say), on the same loopback server as NVIDIA's redist.
fn behind_index(mirror: &Mirror) -> String {
    let arch = std::env::consts::ARCH;
    let old = format!("cutensor_cu12-2.2.0-py3-none-manylinux2014_{arch}.whl");
    mirror.put(
        "simple/cutensor-cu12/index.html",
        format!(
            "<html><body><a href=\"../../files/{old}#sha256={}\">{old}</a></body></html>\n",
            "ab".repeat(32)
        )
        .as_bytes(),
    );
    format!("{}/simple", mirror.url())
}

#[test]
fn under_auto_a_cutensor_build_pypi_lacks_comes_from_nvidias_server() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    libraries_fixture(&env, &mirror, |_, _| {});
    let index = behind_index(&mirror);
    let o = cmd(&env, &mirror)
        .env("CUDAENV_PYPI_INDEX", &index)
        .args(["install", "12.4.1+cutensor2.8", CUDART_ONLY])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(mirror.requested("simple/cutensor-cu12/"), "{}", text(&o));
    assert!(
        text(&o).contains("cuTENSOR 2.8.1.0 comes from NVIDIA's redist server"),
        "{}",
        text(&o)
    );
    let name = "12.4.1+cutensor2.8.1.0";
    let v = env.root.join("versions").join(name);
    let meta = std::fs::read_to_string(v.join(".cudaenv/meta.toml")).unwrap();
    let meta: toml::Value = toml::from_str(&meta).unwrap();
    let cutensor = meta["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"].as_str() == Some("cutensor"))
        .unwrap_or_else(|| panic!("{meta:?}"));
    assert_eq!(cutensor["source"].as_str(), Some("nvidia"), "{meta:?}");
    let out = load_by_soname(&env, name, &["libcutensor.so.2:cutensorGetVersion"]);
    assert!(out.contains("libcutensor.so.2 20801"), "{out}");
}

#[test]
fn under_auto_a_build_neither_source_has_is_refused_with_pypis_builds() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    libraries_fixture(&env, &mirror, |_, _| {});
    let index = behind_index(&mirror);
    let o = cmd(&env, &mirror)
        .env("CUDAENV_PYPI_INDEX", &index)
        .args(["install", "12.4.1+cutensor2.9", CUDART_ONLY, "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 7, "{}", text(&o));
    for want in ["cuTENSOR 2.9 for CUDA 12", "cutensor-cu12", "2.2.0"] {
        assert!(text(&o).contains(want), "{want}: {}", text(&o));
    }
    assert_nothing_installed(&env);
}

#[test]
fn a_lock_from_nvidias_server_pins_cutensor_and_leaves_cusparselts_build_as_a_comment() {
    let env = TestEnv::new();
    let mirror = Mirror::start(env.path("srv"));
    libraries_fixture(&env, &mirror, |_, _| {});
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let o = cmd(&env, &mirror)
        .current_dir(&proj)
        .args([
            "lock",
            "12.4.1+cusparselt0.8+cutensor2",
            "--source",
            "nvidia",
            CUDART_ONLY,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = cmd(&env, &mirror)
        .current_dir(&proj)
        .args(["export", "pip-constraints"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let pins: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    // cuTENSOR 2.8.1.0 is PyPI's 2.8.1; cuSPARSELt 0.8.1.1 is no PyPI release.
    assert_eq!(
        pins,
        [
            "cuda-toolkit==12.4.1",
            "cutensor-cu12==2.8.1",
            "nvidia-cuda-runtime-cu12==12.4.127",
        ],
        "{out}"
    );
    assert!(
        out.contains("# not pinned, PyPI's releases have three parts: cusparselt 0.8.1.1 (nvidia)"),
        "{out}"
    );
}
