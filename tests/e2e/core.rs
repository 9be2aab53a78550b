//! The core commands end to end: link, selection and its reasons, prefix,
//! which, exec and env under real shells and the real dynamic loader, hostile
//! version files and hostile root paths.

use std::path::{Path, PathBuf};

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
    assert_eq!(
        versions,
        format!(
            "* system\n  local124 -> {} [CUDA 12.4.1, cuDNN 9.1.0]\n",
            std::fs::canonicalize(&tk).unwrap().display()
        )
    );
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
    let cupti = tk.join("extras/CUPTI/lib64");
    std::fs::create_dir_all(&cupti).unwrap();
    std::fs::write(cupti.join("libcupti.so.12"), b"").unwrap();
    env.link("redist", &tk);
    // lib64 and targets/… are the same directory: recorded once; CUPTI too.
    assert_eq!(
        list(&meta(&env, "redist"), "lib_dirs"),
        ["lib64", "extras/CUPTI/lib64"]
    );
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
    assert!(
        stderr(&out).contains("the name `12.4` looks like CUDA 12.4 but"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s(&meta(&env, "12.4"), "cuda").as_deref(), Some("12.6.0"));
    assert!(
        tk.join("lib64/libcudart.so.12").exists(),
        "the old tree is untouched"
    );

    // A leftover without the completion marker blocks the name until --force.
    std::fs::create_dir_all(env.root.join("versions/left/bin")).unwrap();
    let out = env.cmd().args(["link", "left"]).arg(&tk).output().unwrap();
    let err = assert_code(&out, 1, "link over a leftover");
    assert!(err.contains("is not a complete version"), "{err}");
    let out = env
        .cmd()
        .args(["link", "-f", "left"])
        .arg(&tk)
        .output()
        .unwrap();
    assert_success(&out, "link -f over a leftover");
    assert!(!env.root.join("versions/left/bin").exists());
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

#[test]
fn activation_drops_the_directories_of_other_linked_versions() {
    let env = TestEnv::new();
    let a = fake_toolkit(&env.path("a"), "12.4.1", None);
    let b = fake_toolkit(&env.path("b"), "12.6.0", None);
    env.link("a", &a);
    env.link("b", &b);
    // b was active before (its dirs are in the caller's variables); a user's
    // own directory stays where it was.
    let keep = env.path("mine");
    let out = env
        .cmd()
        .env(
            "LD_LIBRARY_PATH",
            format!("{}:{}", b.join("lib64").display(), keep.display()),
        )
        .env("CUDA_HOME", &b)
        .args([
            "exec",
            "--version",
            "a",
            "--",
            "sh",
            "-c",
            "printf '%s|%s' \"$LD_LIBRARY_PATH\" \"$CUDA_HOME\"",
        ])
        .output()
        .unwrap();
    assert_success(&out, "exec --version a");
    assert_eq!(
        stdout(&out),
        format!(
            "{}:{}|{}",
            a.join("lib64").display(),
            keep.display(),
            a.display()
        )
    );
}

// --- selection: precedence and reasons ---------------------------------------------

fn canon(p: &Path) -> String {
    std::fs::canonicalize(p).unwrap().display().to_string()
}

fn version_json(env: &TestEnv, cwd: &Path, vars: &[(&str, &str)]) -> serde_json::Value {
    let mut c = env.cmd();
    c.current_dir(cwd).args(["version", "--json"]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert_success(&out, "version --json");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn precedence_shell_over_local_over_global_over_system_in_nested_dirs() {
    let env = TestEnv::new();
    for (name, cuda) in [("a", "12.4.1"), ("b", "12.6.0"), ("c", "11.8.0")] {
        let tk = fake_toolkit(&env.path(&format!("tk-{name}")), cuda, None);
        env.link(name, &tk);
    }
    let project = env.path("work/project");
    let deeper = project.join("src/deeper");
    let other = project.join("src/other");
    std::fs::create_dir_all(&deeper).unwrap();
    std::fs::create_dir_all(&other).unwrap();

    // Nothing set: system, by default.
    let v = version_json(&env, &deeper, &[]);
    assert_eq!(v["name"], "system");
    assert_eq!(v["origin_kind"], "default");

    // Global.
    env.ok(&["global", "a"]);
    let v = version_json(&env, &deeper, &[]);
    assert_eq!(v["name"], "a");
    assert_eq!(v["origin_kind"], "global");
    let global_file = env.root.join("version");
    assert_eq!(v["origin_path"], global_file.display().to_string());
    let text = String::from_utf8(env.run_in(&deeper, &["version"]).stdout).unwrap();
    assert_eq!(
        text,
        format!("a (set by {} (global))\n", global_file.display())
    );

    // A local pin in the project applies to every directory below it.
    let out = env.run_in(&project, &["local", "b"]);
    assert_success(&out, "local b");
    assert_eq!(
        std::fs::read_to_string(project.join(".cuda-version")).unwrap(),
        "b\n"
    );
    for dir in [&project, &deeper] {
        let v = version_json(&env, dir, &[]);
        assert_eq!(v["name"], "b", "in {}", dir.display());
        assert_eq!(v["origin_kind"], "local");
        assert_eq!(
            v["origin_path"],
            project.join(".cuda-version").display().to_string()
        );
        assert_eq!(v["cuda"], "12.6.0");
        assert_eq!(v["prefix"], canon(&env.path("tk-b")));
    }
    // A nearer pin wins over the project's, by a version prefix.
    std::fs::write(other.join(".cuda-version"), "11\n").unwrap();
    let v = version_json(&env, &other, &[]);
    assert_eq!(v["name"], "c");
    assert_eq!(v["spec"], "11");
    assert_eq!(
        v["origin_path"],
        other.join(".cuda-version").display().to_string()
    );
    let text = String::from_utf8(env.run_in(&other, &["version"]).stdout).unwrap();
    assert_eq!(
        text,
        format!("c (set by {})\n", other.join(".cuda-version").display())
    );
    // CUDAENV_DIR moves the search start.
    let v = version_json(&env, &env.home, &[("CUDAENV_DIR", other.to_str().unwrap())]);
    assert_eq!(v["name"], "c");

    // The shell selection beats everything, and `cudaenv shell` sets it.
    let v = version_json(&env, &other, &[("CUDAENV_VERSION", "a")]);
    assert_eq!(v["name"], "a");
    assert_eq!(v["origin_kind"], "shell");
    let out = bash(
        &env,
        &other,
        &[],
        r#"eval "$("$CUDAENV" shell --shell bash 12.4)"; "$CUDAENV" version; "$CUDAENV" shell; eval "$("$CUDAENV" shell --shell bash --unset)"; "$CUDAENV" version --bare"#,
    );
    assert_eq!(
        out,
        "a (set by the CUDAENV_VERSION environment variable)\n12.4\nc\n"
    );

    // `versions` marks the active one with its origin.
    let out = String::from_utf8(env.run_in(&deeper, &["versions"]).stdout).unwrap();
    let active: Vec<&str> = out.lines().filter(|l| l.starts_with('*')).collect();
    assert_eq!(active.len(), 1, "{out}");
    assert!(active[0].starts_with("* b -> "), "{out}");
    assert!(
        active[0].ends_with(&format!(
            "(set by {})",
            project.join(".cuda-version").display()
        )),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&env.run_in(&deeper, &["versions", "--json"]).stdout).unwrap();
    assert_eq!(json["active"], "b");
    assert_eq!(json["versions"].as_array().unwrap().len(), 3);

    // Unsetting falls back level by level.
    assert_success(
        &env.run_in(&project, &["local", "--unset"]),
        "local --unset",
    );
    assert!(!project.join(".cuda-version").exists());
    assert_eq!(version_json(&env, &deeper, &[])["name"], "a");
    env.ok(&["global", "--unset"]);
    assert_eq!(version_json(&env, &deeper, &[])["name"], "system");
}

#[test]
fn pinned_version_not_installed_hints_install_and_downloads_nothing() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    env.link("a", &tk);
    let project = env.path("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "11.2+cudnn8.1\n").unwrap();
    let before = snapshot(env.tmp.path());
    for args in [
        &["version"][..],
        &["exec", "--", "true"],
        &["env"],
        &["prefix"],
        &["which", "nvcc"],
    ] {
        let out = env.run_in(&project, args);
        let err = assert_code(&out, 3, &format!("{args:?}"));
        assert!(err.contains("`11.2+cudnn8.1` is not installed"), "{err}");
        assert!(
            err.contains(&project.join(".cuda-version").display().to_string()),
            "{err}"
        );
        assert!(err.contains("cudaenv install 11.2+cudnn8.1"), "{err}");
        assert!(err.contains("installed: a"), "{err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(snapshot(env.tmp.path()), before);
}

// --- prefix, which, exec -----------------------------------------------------------------

#[test]
fn prefix_and_which() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    env.link("tk", &tk);
    let sp = env.path("venv/site-packages");
    fake_wheels(&sp, "12.6.77", None);
    env.link("wheels", &sp.join("nvidia"));
    env.ok(&["global", "tk"]);

    assert_eq!(env.ok(&["prefix"]), format!("{}\n", canon(&tk)));
    assert_eq!(
        env.ok(&["prefix", "wheels"]),
        format!("{}\n", canon(&sp.join("nvidia")))
    );
    let err = assert_code(&env.run(&["prefix", "system"]), 1, "prefix system");
    assert!(err.contains("system"), "{err}");

    assert_eq!(
        env.ok(&["which", "nvcc"]),
        format!("{}/bin/nvcc\n", canon(&tk))
    );
    // ptxas is only in the wheels: not found here, and the error says where it is.
    let out = env.run(&["which", "ptxas"]);
    let err = assert_code(&out, 127, "which ptxas");
    assert!(err.contains("`ptxas` not found in version `tk`"), "{err}");
    assert!(err.contains("it exists in: wheels"), "{err}");
    assert!(out.stdout.is_empty());
    let out = env
        .cmd()
        .env("CUDAENV_VERSION", "wheels")
        .args(["which", "ptxas"])
        .output()
        .unwrap();
    assert_success(&out, "which ptxas in wheels");
    assert_eq!(
        stdout(&out),
        format!("{}/cuda_nvcc/bin/ptxas\n", canon(&sp.join("nvidia")))
    );

    // Nothing anywhere has it.
    let err = assert_code(&env.run(&["which", "no-such-tool"]), 127, "which missing");
    assert!(!err.contains("it exists in"), "{err}");
    // A path is not a command name.
    assert_code(&env.run(&["which", "../bin/nvcc"]), 2, "which a path");

    // With system active, PATH is searched, skipping cudaenv's own entries.
    let out = env
        .cmd()
        .env("CUDAENV_VERSION", "system")
        .env("PATH", format!("{}/bin:/usr/bin:/bin", canon(&tk)))
        .args(["which", "sh"])
        .output()
        .unwrap();
    assert_success(&out, "which sh (system)");
    assert!(stdout(&out).ends_with("/sh\n"));
    let out = env
        .cmd()
        .env("CUDAENV_VERSION", "system")
        .env("PATH", format!("{}/bin:/usr/bin:/bin", canon(&tk)))
        .args(["which", "nvcc"])
        .output()
        .unwrap();
    let err = assert_code(&out, 127, "which nvcc (system)");
    assert!(err.contains("it exists in: tk"), "{err}");
}

#[test]
fn exec_activates_passes_status_and_reports_missing_commands() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", Some("9.1.0"));
    env.link("tk", &tk);
    env.ok(&["global", "tk"]);
    let out = env
        .cmd()
        .env("CUDA_HOME", "/opt/old-cuda")
        .args(["exec", "--", "sh", "-c", "printf '%s\\n' \"${PATH%%:*}\" \"$LD_LIBRARY_PATH\" \"$CUDA_HOME\" \"$CUDA_PATH\" \"$CUDNN_PATH\" \"$CUDAENV_ACTIVE\"; nvcc --version | tail -1"])
        .output()
        .unwrap();
    assert_success(&out, "exec sh");
    let p = canon(&tk);
    assert_eq!(
        stdout(&out),
        format!(
            "{p}/bin\n{p}/lib64\n{p}\n{p}\n{p}\ntk\nCuda compilation tools, release 12.4, V12.4.131\n"
        )
    );
    // The child's exit status is cudaenv's.
    let out = env.run(&["exec", "--", "sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    // Arguments that look like options belong to the command.
    let out = env.run(&["exec", "--", "printf", "%s|", "--version", "-V"]);
    assert_eq!(stdout(&out), "--version|-V|");
    let out = env.run(&["exec", "--", "no-such-command-here"]);
    let err = assert_code(&out, 127, "exec missing");
    assert!(err.contains("no-such-command-here"), "{err}");
}

// --- env in a real bash ----------------------------------------------------------------

#[test]
fn env_output_evaluated_by_bash_sets_exact_paths_and_switches_cleanly() {
    let env = TestEnv::new();
    let a = fake_toolkit(&env.path("a"), "12.4.1", Some("9.1.0"));
    let b = fake_toolkit(&env.path("b"), "12.6.0", None);
    env.link("a", &a);
    env.link("b", &b);
    let (pa, pb) = (canon(&a), canon(&b));
    let show = r#"printf 'PATH=%s\nLD=%s\nHOME=%s\nCUDA_PATH=%s\nCUDNN=%s\nACTIVE=%s\n' "$PATH" "${LD_LIBRARY_PATH-<unset>}" "${CUDA_HOME-<unset>}" "${CUDA_PATH-<unset>}" "${CUDNN_PATH-<unset>}" "${CUDAENV_ACTIVE-<unset>}""#;

    // No LD_LIBRARY_PATH before: exactly the version's directory after.
    let out = bash(
        &env,
        &env.home,
        &[],
        &format!(r#"eval "$("$CUDAENV" env --shell bash a)"; {show}"#),
    );
    assert_eq!(
        out,
        format!(
            "PATH={pa}/bin:/usr/local/bin:/usr/bin:/bin\nLD={pa}/lib64\nHOME={pa}\nCUDA_PATH={pa}\nCUDNN={pa}\nACTIVE=a\n"
        )
    );

    // Empty elements in the caller's LD_LIBRARY_PATH are dropped (an empty
    // element means the current directory), a foreign directory is kept after
    // ours, and switching from a to b removes every trace of a.
    let out = bash(
        &env,
        &env.home,
        &[("LD_LIBRARY_PATH", "::/opt/foreign/lib::")],
        &format!(
            r#"eval "$("$CUDAENV" env --shell bash a)"; eval "$("$CUDAENV" env --shell bash b)"; {show}"#
        ),
    );
    assert_eq!(
        out,
        format!(
            "PATH={pb}/bin:/usr/local/bin:/usr/bin:/bin\nLD={pb}/lib64:/opt/foreign/lib\nHOME={pb}\nCUDA_PATH={pb}\nCUDNN=<unset>\nACTIVE=b\n"
        )
    );
    assert!(!out.contains(&pa));

    // Back to system: cudaenv's entries and variables go, the user's own stay.
    let out = bash(
        &env,
        &env.home,
        &[("LD_LIBRARY_PATH", "/opt/foreign/lib")],
        &format!(
            r#"eval "$("$CUDAENV" env --shell bash a)"; eval "$("$CUDAENV" env --shell bash system)"; {show}"#
        ),
    );
    assert_eq!(
        out,
        "PATH=/usr/local/bin:/usr/bin:/bin\nLD=/opt/foreign/lib\nHOME=<unset>\nCUDA_PATH=<unset>\nCUDNN=<unset>\nACTIVE=<unset>\n"
    );
    let out = bash(
        &env,
        &env.home,
        &[("CUDA_HOME", "/opt/my-cuda")],
        &format!(r#"eval "$("$CUDAENV" env --shell bash system)"; {show}"#),
    );
    assert!(out.contains("HOME=/opt/my-cuda\n"), "{out}");
    assert!(
        out.contains("LD=<unset>\n"),
        "no empty LD_LIBRARY_PATH is produced: {out}"
    );

    // Under exec, the loader sees exactly what env computed.
    let out = env
        .cmd()
        .env("LD_LIBRARY_PATH", "::")
        .args([
            "exec",
            "--version",
            "a",
            "--",
            "sh",
            "-c",
            "printf %s \"$LD_LIBRARY_PATH\"",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), format!("{pa}/lib64"));
}

// --- uninstall ---------------------------------------------------------------------------

/// Runs `cudaenv ARGS` on a pseudo-terminal, answering `answer` to the prompt.
fn on_a_terminal(env: &TestEnv, args: &[&str], answer: &str) -> (i32, String) {
    let script = r#"
import os, pty, signal, sys
signal.alarm(30)
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:-1])
out = b''
while b'[y/N]' not in out:
    chunk = os.read(fd, 1024)
    if not chunk:
        break
    out += chunk
os.write(fd, sys.argv[-1].encode() + b'\n')
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let out = std::process::Command::new("python3")
        .env_clear()
        .env("HOME", &env.home)
        .env("CUDAENV_ROOT", &env.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .current_dir(&env.home)
        .arg("-c")
        .arg(script)
        .arg(bin())
        .args(args)
        .arg(answer)
        .output()
        .unwrap();
    (out.status.code().unwrap(), stdout(&out))
}

/// A version's lock held by another process (here `flock`, as a second
/// cudaenv would): uninstall waits for it, says once on stderr which lock it
/// waits for, and goes on when it is released; `--quiet` waits silently.
#[test]
fn a_lock_held_elsewhere_is_waited_for_and_announced_once() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", Some("9.1.0"));
    env.link("tk", &tk);
    env.link("tk2", &tk);
    let lock = env.root.join("versions/.locks/tk.lock");
    let hold = |secs: &str, lock: &Path| {
        let ready = env.path("held");
        let _ = std::fs::remove_file(&ready);
        let child = std::process::Command::new("flock")
            .arg(lock)
            .args(["sh", "-c"])
            .arg(format!("touch '{}'; sleep {secs}", ready.display()))
            .spawn()
            .unwrap();
        while !ready.exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child
    };
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let mut holder = hold("2", &lock);
    let out = env.cmd().args(["uninstall", "-y", "tk"]).output().unwrap();
    assert_success(&out, "uninstall under a held lock");
    let err = stderr(&out);
    holder.wait().unwrap();
    let notice = format!("waiting for another cudaenv holding {}…", lock.display());
    assert_eq!(err.matches(&notice).count(), 1, "{err}");
    assert!(!env.root.join("versions/tk").exists());

    let lock2 = env.root.join("versions/.locks/tk2.lock");
    let mut holder = hold("1", &lock2);
    let out = env
        .cmd()
        .args(["--quiet", "uninstall", "-y", "tk2"])
        .output()
        .unwrap();
    assert_success(&out, "uninstall --quiet under a held lock");
    let err = stderr(&out);
    holder.wait().unwrap();
    assert!(!err.contains("waiting for"), "{err}");
}

#[test]
fn uninstall_confirms_and_never_touches_a_linked_tree() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", Some("9.1.0"));
    env.link("tk", &tk);
    let inst = fake_installed(&env.root, "12.6.0", "12.6.0", None);
    env.ok(&["global", "tk"]);
    let tree = snapshot(&tk);

    // Not a terminal and no -y: refused, nothing removed.
    let out = env
        .cmd()
        .stdin(std::process::Stdio::null())
        .args(["uninstall", "tk"])
        .output()
        .unwrap();
    let err = assert_code(&out, 2, "uninstall without -y");
    assert!(err.contains("not a terminal"), "{err}");
    assert!(err.contains("-y"), "{err}");
    assert!(env.root.join("versions/tk").exists());

    // On a terminal: "n" keeps it, "y" removes it.
    let (code, screen) = on_a_terminal(&env, &["uninstall", "tk"], "n");
    assert_eq!(code, 1, "{screen}");
    assert!(screen.contains("is the active version"), "{screen}");
    assert!(screen.contains("left untouched"), "{screen}");
    assert!(env.root.join("versions/tk").exists());
    let (code, screen) = on_a_terminal(&env, &["uninstall", "tk"], "y");
    assert_eq!(code, 0, "{screen}");
    assert!(!env.root.join("versions/tk").exists());
    assert_eq!(snapshot(&tk), tree, "the linked tree must be untouched");

    // An installed version's files do go, with -y and no terminal.
    let out = env
        .cmd()
        .stdin(std::process::Stdio::null())
        .args(["uninstall", "-y", "12.6.0"])
        .output()
        .unwrap();
    assert_success(&out, "uninstall -y");
    assert!(!inst.exists());
    assert!(!stderr(&out).contains("active"), "not active: no warning");
    assert_eq!(env.ok(&["versions", "--bare"]), "");

    // Unknown and invalid names.
    let err = assert_code(&env.run(&["uninstall", "-y", "tk"]), 3, "uninstall twice");
    assert!(err.contains("no installed version is named `tk`"), "{err}");
    assert!(!err.contains("cudaenv install"), "{err}");
    assert_code(
        &env.run(&["uninstall", "-y", "../tk"]),
        2,
        "uninstall ../tk",
    );
    assert_eq!(snapshot(&tk), tree);
}

// --- hostile .cuda-version files ---------------------------------------------------------

enum Pin {
    Bytes(Vec<u8>),
    Fifo,
    SymlinkTo(&'static str),
    Directory,
    Unreadable,
}

fn hostile_pins() -> Vec<(&'static str, Pin)> {
    let b = |s: &[u8]| Pin::Bytes(s.to_vec());
    vec![
        ("parent traversal", b(b"../../x\n")),
        ("absolute path", b(b"/etc\n")),
        ("home path", b(b"~/x\n")),
        ("command substitution", b(b"$(touch sentinel)\n")),
        ("backticks", b(b"`touch sentinel`\n")),
        ("command after spec", b(b"12.4;rm -rf ~\n")),
        ("pipe", b(b"12.4|touch sentinel\n")),
        ("NUL byte", b(b"12.4\0\n")),
        ("NUL inside", b(b"12\x004\n")),
        ("1 MiB", Pin::Bytes(vec![b'1'; 1 << 20])),
        (
            "4 KiB + 1 line",
            Pin::Bytes([b"12.4 ".as_slice(), &[b' '; 4092]].concat()),
        ),
        ("non-UTF-8", b(b"12.4\xff\xfe\n")),
        ("UTF-16 with BOM", b(b"\xff\xfe1\x002\x00.\x004\x00")),
        ("FIFO", Pin::Fifo),
        ("symlink to /dev/zero", Pin::SymlinkTo("/dev/zero")),
        ("symlink to /etc/passwd", Pin::SymlinkTo("/etc/passwd")),
        ("dangling symlink", Pin::SymlinkTo("does/not/exist")),
        ("directory", Pin::Directory),
        ("unreadable", Pin::Unreadable),
        ("two lines", b(b"12.4\n11.8\n")),
        ("two specs on one line", b(b"12.4 11.8\n")),
        ("glob", b(b"12.*\n")),
        ("question-mark glob", b(b"12.?\n")),
        ("empty", b(b"")),
        ("blank lines", b(b"\n \r\n\t\n")),
        ("comments only", b(b"# 12.4\n# nothing else\n")),
        ("trailing dot", b(b"12.\n")),
        ("leading zero", b(b"012.4\n")),
        ("too many parts", b(b"12.4.1.2\n")),
        ("bad cudnn", b(b"12.4+cudnn\n")),
        ("lone CR line ends", b(b"12.4\r11.8\r")),
        ("escape sequence", b(b"\x1b[31m12.4\n")),
        ("dot-dot name", b(b"a..b\n")),
        ("slash in name", b(b"cuda/12.4\n")),
    ]
}

#[test]
fn hostile_version_files_are_refused_naming_the_file_and_change_nothing() {
    use std::time::{Duration, Instant};
    let cases = hostile_pins();
    assert!(cases.len() >= 20);
    let is_root = unsafe { libc::geteuid() } == 0;
    for (label, pin) in &cases {
        let env = TestEnv::new();
        let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
        env.link("a", &tk);
        env.ok(&["global", "a"]);
        let project = env.path("project");
        let cwd = project.join("sub");
        std::fs::create_dir_all(&cwd).unwrap();
        let file = project.join(".cuda-version");
        match pin {
            Pin::Bytes(b) => std::fs::write(&file, b).unwrap(),
            Pin::Fifo => {
                let c = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            Pin::SymlinkTo(t) => std::os::unix::fs::symlink(t, &file).unwrap(),
            Pin::Directory => std::fs::create_dir(&file).unwrap(),
            Pin::Unreadable => {
                std::fs::write(&file, "12.4\n").unwrap();
                std::fs::set_permissions(
                    &file,
                    std::os::unix::fs::PermissionsExt::from_mode(0o000),
                )
                .unwrap();
            }
        }
        let before = snapshot(env.tmp.path());
        for args in [
            &["version"][..],
            &["exec", "--", "true"],
            &["env", "--shell", "bash"],
            &["which", "nvcc"],
        ] {
            // Root reads any file whatever its mode: for "unreadable", drop the
            // capabilities that allow that, so the mode applies as to any user.
            let mut cmd = if is_root && matches!(pin, Pin::Unreadable) {
                let mut c = std::process::Command::new("setpriv");
                c.args([
                    "--bounding-set=-dac_override,-dac_read_search",
                    "--inh-caps=-all",
                    "--",
                ])
                .arg(bin());
                c
            } else {
                std::process::Command::new(bin())
            };
            cmd.env_clear()
                .env("HOME", &env.home)
                .env("CUDAENV_ROOT", &env.root)
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("NO_COLOR", "1")
                .current_dir(&cwd)
                .args(args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            // A FIFO must not hang the reader: give it a generous bound, then fail.
            let start = Instant::now();
            while child.try_wait().unwrap().is_none() {
                if start.elapsed() > Duration::from_secs(20) {
                    let _ = child.kill();
                    panic!("{label}: `cudaenv {}` hung", args.join(" "));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let out = child.wait_with_output().unwrap();
            let what = format!("{label}: cudaenv {}", args.join(" "));
            let err = assert_code(&out, 2, &what);
            assert!(
                err.contains(&file.display().to_string()),
                "{what}: the file is not named: {err}"
            );
            // A file this user may not read is a permission problem, and says so.
            assert!(
                err.starts_with("error: invalid version file")
                    || (*label == "unreadable"
                        && err.starts_with("error: cannot read")
                        && err.contains("permission denied")),
                "{what}: {err}"
            );
            assert!(out.stdout.is_empty(), "{what}: printed {:?}", stdout(&out));
            assert!(
                err.len() < 1000,
                "{what}: the message must not dump the file: {} bytes",
                err.len()
            );
        }
        assert_eq!(
            snapshot(env.tmp.path()),
            before,
            "{label}: something changed on disk"
        );
        assert!(!cwd.join("sentinel").exists() && !env.home.join("sentinel").exists());
    }
}

#[test]
fn tolerated_version_file_forms() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    env.link("a", &tk);
    let project = env.path("p");
    std::fs::create_dir_all(&project).unwrap();
    for content in [
        &b"12.4"[..],
        b"\xef\xbb\xbf12.4\n",
        b"12.4\r\n",
        b"\xef\xbb\xbf# pinned\r\n\r\n  12.4  \r\n",
        b"# for the model\n12.4\t\n# end\n",
    ] {
        std::fs::write(project.join(".cuda-version"), content).unwrap();
        let out = env.run_in(&project, &["version", "--bare"]);
        assert_success(&out, &format!("{content:?}"));
        assert_eq!(stdout(&out), "a\n", "{content:?}");
    }
}

// --- awkward roots ---------------------------------------------------------------------

#[test]
fn root_paths_with_shell_metacharacters_are_data_in_bash() {
    for name in [
        "with space",
        "it's",
        "say \"hi\"",
        "$(touch sentinel)",
        "`touch sentinel`",
        "all of it: no, that has a colon", // replaced below
    ]
    .iter()
    .map(|n| {
        if n.starts_with("all of it") {
            "x 'y' \"z\" $(touch sentinel) `touch sentinel` ;&|".to_string()
        } else {
            n.to_string()
        }
    }) {
        let env = TestEnv::with_root_name(&format!("{name}/root"));
        let inst = fake_installed(&env.root, "12.4.1", "12.4.1", Some("9.1.0"));
        // A linked tree under the same awkward name, too.
        let tk = fake_toolkit(&env.path(&format!("{name}/tk")), "12.6.0", None);
        env.link("linked", &tk);
        let cwd = env.path("cwd");
        std::fs::create_dir_all(&cwd).unwrap();
        for (sel, prefix) in [
            ("12.4", inst.clone()),
            ("linked", std::fs::canonicalize(&tk).unwrap()),
        ] {
            let out = bash(
                &env,
                &cwd,
                &[],
                &format!(
                    r#"eval "$("$CUDAENV" env --shell bash {sel})" || exit 9; printf '%s\0' "${{PATH%%:*}}" "$LD_LIBRARY_PATH" "$CUDA_HOME""#
                ),
            );
            let parts: Vec<&str> = out.split('\0').collect();
            let p = prefix.display().to_string();
            assert_eq!(
                parts[..3],
                [format!("{p}/bin"), format!("{p}/lib64"), p.clone()],
                "root {name:?}, {sel}"
            );
            // And exec hands the child the same, without a shell in between.
            let out = env
                .cmd()
                .current_dir(&cwd)
                .args([
                    "exec",
                    "--version",
                    sel,
                    "--",
                    "sh",
                    "-c",
                    r#"printf %s "${PATH%%:*}""#,
                ])
                .output()
                .unwrap();
            assert_eq!(stdout(&out), format!("{p}/bin"), "root {name:?}");
        }
        assert_eq!(
            std::fs::read_dir(&cwd).unwrap().count(),
            0,
            "root {name:?}: something ran"
        );
        assert!(!env.home.join("sentinel").exists());
    }
}

#[test]
fn root_with_a_colon_is_refused_clearly() {
    let env = TestEnv::with_root_name("a:b");
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    for args in [
        &["env", "--shell", "bash", "12.4"][..],
        &["exec", "--version", "12.4", "--", "true"],
    ] {
        let out = env.run(args);
        let err = assert_code(&out, 2, &format!("{args:?}"));
        assert!(err.contains("contains `:`"), "{err}");
        assert!(err.contains("a:b"), "{err}");
        assert!(err.contains("hint:"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // Linking a tree whose path has a colon is refused before anything is written.
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("cu:da"), "12.4.1", None);
    let out = env.cmd().args(["link", "x"]).arg(&tk).output().unwrap();
    let err = assert_code(&out, 2, "link a:b");
    assert!(err.contains("contains `:`"), "{err}");
    assert!(!env.root.join("versions/x").exists());
}

#[test]
fn versions_flags_a_linked_tree_that_disappeared() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    env.link("gone", &tk);
    assert!(!env.ok(&["versions"]).contains("(missing)"));
    std::fs::rename(&tk, env.path("moved")).unwrap();
    let out = env.ok(&["versions"]);
    assert!(
        out.contains("gone -> ") && out.contains("(missing)"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["versions", "--json"])).unwrap();
    assert_eq!(json["versions"][0]["missing"], true);
    // Removing the record works even though the tree is gone.
    assert_success(&env.run(&["uninstall", "-y", "gone"]), "uninstall gone");
}

#[test]
fn link_survives_hostile_trees_fifo_devices_and_a_hanging_nvcc() {
    let env = TestEnv::new();
    let tk = env.path("hostile");
    std::fs::create_dir_all(tk.join("lib64")).unwrap();
    std::fs::create_dir_all(tk.join("include")).unwrap();
    fake_cudart(&tk.join("lib64"), "libcudart.so.12", "12.4");
    // Data files that would hang or flood a naive reader.
    let fifo = std::ffi::CString::new(tk.join("version.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink("/dev/zero", tk.join("version.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", tk.join("include/cuda.h")).unwrap();
    // An nvcc that never answers and leaves a grandchild behind.
    let pidfile = env.path("grandchild.pid");
    write_executable(
        &tk.join("bin/nvcc"),
        &format!(
            "#!/bin/sh\nsleep 300 &\necho $! > '{}'\nwait\n",
            pidfile.display()
        ),
    );
    let out = env.cmd().args(["link", "h"]).arg(&tk).output().unwrap();
    assert_success(&out, "link a hostile tree");
    // Only the soname was usable: the major version.
    assert_eq!(s(&meta(&env, "h"), "cuda").as_deref(), Some("12"));
    // The hung nvcc and its child were killed, not left running.
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("gone");
    assert!(
        matches!(state, "gone" | "Z" | "X"),
        "nvcc's child still runs: {stat}"
    );
}

#[test]
fn a_missing_name_suggests_link_not_install() {
    let env = TestEnv::new();
    let project = env.path("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "cuda-sys\n").unwrap();
    let err = assert_code(&env.run_in(&project, &["version"]), 3, "missing name");
    assert!(err.contains("cudaenv link cuda-sys PATH"), "{err}");
    assert!(!err.contains("cudaenv install"), "{err}");
    // Pinning it anyway warns the same way.
    let out = env.run_in(&project, &["local", "other-name"]);
    assert_success(&out, "local other-name");
    assert!(
        stderr(&out).contains("cudaenv link other-name PATH"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn shell_unset_with_a_broken_pin_deactivates_to_system() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("tk"), "12.4.1", None);
    env.link("a", &tk);
    let project = env.path("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "11.2\n").unwrap();
    let out = bash(
        &env,
        &project,
        &[],
        r#"eval "$("$CUDAENV" shell --shell bash a)"; eval "$("$CUDAENV" shell --shell bash --unset 2>/dev/null)"; printf '%s|%s|%s' "$PATH" "${CUDAENV_VERSION-unset}" "${CUDA_HOME-unset}""#,
    );
    assert_eq!(out, "/usr/local/bin:/usr/bin:/bin|unset|unset");
}

#[test]
fn uninstall_removes_read_only_directories_it_owns() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let v = fake_installed(&env.root, "12.4.1", "12.4.1", None);
    // As an archive might leave it: read-only directories with files inside.
    let ro = v.join("include/crt");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::write(ro.join("host_defines.h"), "x").unwrap();
    for d in [&ro, &v.join("include"), &v.join("lib64")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    // Root ignores modes: drop the capabilities that let it, so this tests what a user sees.
    let mut cmd = if unsafe { libc::geteuid() } == 0 {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-all",
            "--",
        ])
        .arg(bin());
        c
    } else {
        std::process::Command::new(bin())
    };
    let out = cmd
        .env_clear()
        .env("HOME", &env.home)
        .env("CUDAENV_ROOT", &env.root)
        .env("PATH", "/usr/bin:/bin")
        .args(["uninstall", "-y", "12.4.1"])
        .output()
        .unwrap();
    assert_success(&out, "uninstall a version with read-only directories");
    assert!(!v.exists());
    let staging = env.root.join("versions/.staging");
    let left: Vec<_> = std::fs::read_dir(&staging)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "nothing may be left behind: {left:?}");
}

// --- scripts/install.sh ------------------------------------------------------------------

/// Runs scripts/install.sh with stand-ins for cargo and for the cudaenv it
/// installs, so the script's own logic (what it runs, how it reports each
/// outcome of verify) is tested without a release build or a download.
fn run_install_script(verify_rc: Option<i32>) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    let stubs = tmp.path().join("stubs");
    let verify = match verify_rc {
        Some(rc) => format!(
            "  verify) [ \"$2\" = --help ] && exit 0; echo \"verify $2\" >> \"$LOG\"; exit {rc} ;;\n"
        ),
        None => String::new(),
    };
    let fake_cudaenv = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'cudaenv 0.0.0-test' ;;\n  install) [ \"$2\" = --help ] && exit 0; echo \"install $2\" >> \"$LOG\" ;;\n{verify}  *) echo \"unknown command $1\" >&2; exit 2 ;;\nesac\n"
    );
    std::fs::create_dir_all(&stubs).unwrap();
    std::fs::write(stubs.join("cudaenv.stub"), fake_cudaenv).unwrap();
    write_executable(
        &stubs.join("cargo"),
        &format!(
            "#!/bin/sh\necho \"cargo $*\" >> \"$LOG\"\nmkdir -p \"$CARGO_INSTALL_ROOT/bin\"\ncp '{}' \"$CARGO_INSTALL_ROOT/bin/cudaenv\"\nchmod +x \"$CARGO_INSTALL_ROOT/bin/cudaenv\"\n",
            stubs.join("cudaenv.stub").display()
        ),
    );
    let log = tmp.path().join("log");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .env_clear()
        .env("HOME", tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", stubs.display()))
        .env("CARGO_INSTALL_ROOT", tmp.path().join("inst"))
        .env("LOG", &log)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let text = format!("{}{}---\n{calls}", stdout(&out), stderr(&out));
    (out.status.code().unwrap(), text)
}

#[test]
fn install_script_reports_every_verify_outcome() {
    let (rc, text) = run_install_script(Some(0));
    assert_eq!(rc, 0, "{text}");
    assert!(
        text.contains("cargo install --locked --profile dist --path . --force"),
        "{text}"
    );
    assert!(
        text.contains("install 12.4+cudnn9\nverify 12.4+cudnn9\n"),
        "{text}"
    );
    assert!(
        text.contains("installed and verified on this machine's GPU"),
        "{text}"
    );

    // No driver / no GPU: the stack is installed; the script says what it could not check.
    let (rc, text) = run_install_script(Some(10));
    assert_eq!(rc, 0, "{text}");
    assert!(
        text.contains("not verified on a GPU: no NVIDIA driver"),
        "{text}"
    );
    let (rc, text) = run_install_script(Some(13));
    assert_eq!(rc, 0, "{text}");
    assert!(
        text.contains("not verified on a GPU: no GPU is visible"),
        "{text}"
    );

    // A real verification failure fails the script, with the code.
    let (rc, text) = run_install_script(Some(15));
    assert_eq!(rc, 1, "{text}");
    assert!(text.contains("`cudaenv verify` failed (exit 15"), "{text}");

    // A cudaenv without verify: clear message, not a crash.
    let (rc, text) = run_install_script(None);
    assert_eq!(rc, 1, "{text}");
    assert!(text.contains("has no `verify` command"), "{text}");
}
