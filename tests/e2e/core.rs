//! The core commands end to end: link, selection and its reasons, prefix,
//! which, exec and env under real shells and the real dynamic loader, hostile
//! version files and hostile root paths.

use std::path::PathBuf;

use crate::common::*;

fn meta(env: &TestEnv, name: &str) -> toml::Value {
    let text = std::fs::read_to_string(
        env.root
            .join("versions")
            .join(name)
            .join(".cudaenv/meta.toml"),
    )
    .unwrap();
    toml::from_str(&text).unwrap()
}

fn s(v: &toml::Value, key: &str) -> Option<String> {
    v.get(key).and_then(|x| x.as_str()).map(str::to_owned)
}

fn list(v: &toml::Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(|x| x.as_array())
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

// --- link ---------------------------------------------------------------------------

#[test]
fn link_toolkit_records_versions_and_dirs_and_leaves_tree_untouched() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("cuda-12.4"), "12.4.1", Some("9.1.0"));
    let before = snapshot(&tk);
    env.link("local124", &tk);
    let m = meta(&env, "local124");
    assert_eq!(s(&m, "kind").as_deref(), Some("linked"));
    assert_eq!(s(&m, "source").as_deref(), Some("link"));
    assert_eq!(s(&m, "cuda").as_deref(), Some("12.4.1"));
    assert_eq!(s(&m, "cudnn").as_deref(), Some("9.1.0"));
    assert_eq!(
        s(&m, "prefix").map(PathBuf::from),
        Some(std::fs::canonicalize(&tk).unwrap())
    );
    assert_eq!(list(&m, "bin_dirs"), ["bin"]);
    assert_eq!(list(&m, "lib_dirs"), ["lib64"]);
    assert_eq!(s(&m, "home").as_deref(), Some("."));
    assert_eq!(s(&m, "cudnn_home").as_deref(), Some("."));
    assert_eq!(
        snapshot(&tk),
        before,
        "link must not modify the linked tree"
    );

    let versions = env.ok(&["versions"]);
    assert!(versions.contains("local124 -> "), "{versions}");
    // A version prefix selects it by its recorded CUDA version.
    assert_eq!(
        env.ok(&["prefix", "12.4"]).trim(),
        std::fs::canonicalize(&tk).unwrap().to_str().unwrap()
    );
    assert_eq!(
        env.ok(&["prefix", "12+cudnn9.1"]).trim(),
        env.ok(&["prefix", "local124"]).trim()
    );
}

#[test]
fn link_detects_versions_without_version_json() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("t"), "12.6.0", None);
    std::fs::remove_file(tk.join("version.json")).unwrap();
    env.link("nojson", &tk);
    // From include/cuda.h: major.minor only.
    assert_eq!(s(&meta(&env, "nojson"), "cuda").as_deref(), Some("12.6"));

    // Headers gone too: the library's full file name still gives 12.6.
    let tk2 = fake_toolkit(&env.path("t2"), "12.6.0", None);
    std::fs::remove_file(tk2.join("version.json")).unwrap();
    std::fs::remove_file(tk2.join("include/cuda.h")).unwrap();
    env.link("libname", &tk2);
    assert_eq!(s(&meta(&env, "libname"), "cuda").as_deref(), Some("12.6"));

    // Only the soname is left: nvcc --version is the last resort.
    let tk3 = env.path("t3");
    std::fs::create_dir_all(tk3.join("lib64")).unwrap();
    fake_cudart(&tk3.join("lib64"), "libcudart.so.12", "12.2");
    write_executable(
        &tk3.join("bin/nvcc"),
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.2, V12.2.140'\n",
    );
    env.link("bynvcc", &tk3);
    assert_eq!(s(&meta(&env, "bynvcc"), "cuda").as_deref(), Some("12.2"));

    // An old toolkit with version.txt.
    let tk4 = env.path("t4");
    std::fs::create_dir_all(tk4.join("lib64")).unwrap();
    fake_cudart(&tk4.join("lib64"), "libcudart.so.10.2.89", "10.2");
    std::fs::write(tk4.join("version.txt"), "CUDA Version 10.2.89\n").unwrap();
    env.link("old", &tk4);
    assert_eq!(s(&meta(&env, "old"), "cuda").as_deref(), Some("10.2.89"));
}

#[test]
fn link_targets_layout() {
    let env = TestEnv::new();
    let tk = env.path("cuda-redist");
    let lib = tk.join("targets/x86_64-linux/lib");
    std::fs::create_dir_all(&lib).unwrap();
    fake_cudart(&lib, "libcudart.so.12.8.57", "12.8");
    std::os::unix::fs::symlink("targets/x86_64-linux/lib", tk.join("lib64")).unwrap();
    env.link("redist", &tk);
    // lib64 and targets/… are the same directory: recorded once.
    assert_eq!(list(&meta(&env, "redist"), "lib_dirs"), ["lib64"]);
    assert_eq!(s(&meta(&env, "redist"), "cuda").as_deref(), Some("12.8"));
}

#[test]
fn link_python_wheels_cu12() {
    let env = TestEnv::new();
    let sp = env.path("venv/lib/python3.11/site-packages");
    let nvidia = fake_wheels(&sp, "12.4.127", Some("9.1.0.70"));
    let before = snapshot(&env.path("venv"));
    env.link("torchenv", &nvidia);
    let m = meta(&env, "torchenv");
    assert_eq!(s(&m, "cuda").as_deref(), Some("12.4"));
    assert_eq!(s(&m, "cudnn").as_deref(), Some("9.1.0.70"));
    assert_eq!(list(&m, "lib_dirs"), ["cuda_runtime/lib", "cudnn/lib"]);
    assert_eq!(list(&m, "bin_dirs"), ["cuda_nvcc/bin"]);
    assert_eq!(s(&m, "home"), None, "cu12 wheels are not toolkit-shaped");
    assert_eq!(s(&m, "cudnn_home").as_deref(), Some("cudnn"));
    assert_eq!(snapshot(&env.path("venv")), before);

    // The venv root works as well, and finds the same tree.
    env.link("venvroot", &env.path("venv"));
    let m2 = meta(&env, "venvroot");
    assert_eq!(s(&m2, "cuda").as_deref(), Some("12.4"));
    assert_eq!(
        list(&m2, "lib_dirs"),
        [
            "lib/python3.11/site-packages/nvidia/cuda_runtime/lib",
            "lib/python3.11/site-packages/nvidia/cudnn/lib"
        ]
    );

    // env: CUDNN_PATH set, CUDA_HOME not.
    let out = env.ok(&["env", "--shell", "bash", "torchenv"]);
    assert!(out.contains("export CUDNN_PATH="), "{out}");
    assert!(!out.contains("CUDA_HOME="), "{out}");
}

#[test]
fn link_python_wheels_cu13_is_toolkit_shaped() {
    let env = TestEnv::new();
    let sp = env.path("sp");
    fake_wheels(&sp, "13.0.96", Some("9.12.0.46"));
    // site-packages itself may be given.
    env.link("cu13env", &sp);
    let m = meta(&env, "cu13env");
    assert_eq!(s(&m, "cuda").as_deref(), Some("13.0"));
    assert_eq!(s(&m, "cudnn").as_deref(), Some("9.12.0.46"));
    assert_eq!(s(&m, "home").as_deref(), Some("nvidia/cu13"));
    assert_eq!(
        list(&m, "lib_dirs"),
        ["nvidia/cu13/lib", "nvidia/cudnn/lib"]
    );
    assert_eq!(list(&m, "bin_dirs"), ["nvidia/cu13/bin"]);
    let home = env.ok(&["prefix", "cu13env"]);
    let canon = std::fs::canonicalize(&sp).unwrap();
    assert_eq!(home.trim(), canon.to_str().unwrap());
}

#[test]
fn link_refuses_trees_without_a_runtime() {
    let env = TestEnv::new();
    // Headers and nvcc but no libcudart.
    let tk = env.path("headers-only");
    std::fs::create_dir_all(tk.join("include")).unwrap();
    std::fs::write(tk.join("include/cuda.h"), "#define CUDA_VERSION 12040\n").unwrap();
    write_executable(&tk.join("bin/nvcc"), "#!/bin/sh\ntouch \"$0.ran\"\n");
    std::fs::create_dir_all(tk.join("lib64")).unwrap();
    std::fs::write(tk.join("lib64/libcudart_static.a"), "x").unwrap();
    let out = env.cmd().args(["link", "x"]).arg(&tk).output().unwrap();
    let err = assert_code(&out, 2, "link without runtime");
    assert!(err.contains("no CUDA runtime"), "{err}");
    assert!(err.contains("headers-only"), "{err}");
    assert!(
        !tk.join("bin/nvcc.ran").exists(),
        "nothing may run for a refused tree"
    );
    assert!(!env.root.join("versions/x").exists());

    let out = env
        .cmd()
        .args(["link", "x"])
        .arg(env.path("missing"))
        .output()
        .unwrap();
    let err = assert_code(&out, 2, "link missing path");
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn link_names_are_validated_and_not_overwritten() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    for bad in [
        "../x",
        "a/b",
        "system",
        "12.4-local",
        "-x",
        "",
        "a b",
        "$(id)",
    ] {
        let out = env.cmd().args(["link", bad]).arg(&tk).output().unwrap();
        assert_code(&out, 2, &format!("link name {bad:?}"));
    }
    assert!(
        snapshot(&env.root)
            .iter()
            .all(|p| !p.contains("versions/.."))
    );
    env.link("12.4", &tk); // a version-shaped name is selectable, so allowed
    let out = env.cmd().args(["link", "12.4"]).arg(&tk).output().unwrap();
    let err = assert_code(&out, 1, "link over an existing name");
    assert!(err.contains("already exists"), "{err}");
    let tk2 = fake_toolkit(&env.path("tk2"), "12.6.0", None);
    let out = env
        .cmd()
        .args(["link", "--force", "12.4"])
        .arg(&tk2)
        .output()
        .unwrap();
    assert_success(&out, "link --force");
    assert_eq!(s(&meta(&env, "12.4"), "cuda").as_deref(), Some("12.6.0"));
    assert!(
        tk.join("lib64/libcudart.so.12").exists(),
        "the old tree is untouched"
    );
}

// --- the real loader ----------------------------------------------------------------

const LOAD_CUDART: &str = "import ctypes\nlib = ctypes.CDLL('libcudart.so.12')\nv = ctypes.c_int(0)\nassert lib.cudaRuntimeGetVersion(ctypes.byref(v)) == 0\nprint(v.value)\n";

#[test]
fn exec_loads_the_selected_runtime_by_soname() {
    let env = TestEnv::new();
    let a = fake_toolkit(&env.path("a"), "12.4.1", None);
    let b = fake_toolkit(&env.path("b"), "12.6.0", None);
    let foreign = fake_toolkit(&env.path("foreign"), "12.1.0", None);
    env.link("a", &a);
    env.link("b", &b);
    for (sel, want) in [
        ("a", "12040"),
        ("b", "12060"),
        ("12.4", "12040"),
        ("12", "12060"),
    ] {
        // The other linked version is on the caller's LD_LIBRARY_PATH, and so is
        // a tree cudaenv does not know: the selected one still wins.
        let other = if want == "12040" { &b } else { &a };
        let ld = format!(
            "{}:{}",
            other.join("lib64").display(),
            foreign.join("lib64").display()
        );
        let out = env
            .cmd()
            .env("LD_LIBRARY_PATH", &ld)
            .args(["exec", "--version", sel, "--", "python3", "-c", LOAD_CUDART])
            .output()
            .unwrap();
        assert_success(&out, &format!("exec --version {sel}"));
        assert_eq!(stdout(&out).trim(), want, "selected {sel}");
    }
    // Without cudaenv the foreign one would have been found: the test can fail.
    let out = std::process::Command::new("python3")
        .env("LD_LIBRARY_PATH", foreign.join("lib64"))
        .args(["-c", LOAD_CUDART])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "12010");
}
