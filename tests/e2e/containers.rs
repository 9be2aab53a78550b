//! Containers and CI: `env --format dockerfile|github`, doctor inside
//! Apptainer/Singularity and under the NVIDIA container runtime's variables,
//! and planning for another machine (`--target-driver`, `--target-arch`).
//!
//! There is no container runtime on the test machines. A Dockerfile's `ENV`
//! lines are therefore checked by what they mean: they are evaluated with the
//! POSIX-shell rules Docker's `ENV` substitution follows (`${VAR}`,
//! `${VAR:+word}`, `\`-escapes in double quotes) and the resulting
//! environment must make the real loader find the version's libcudart. A
//! GitHub step's lines are applied to a child's environment as the runner
//! applies `$GITHUB_ENV` (`NAME=value`, `NAME<<DELIMITER`).

use std::collections::BTreeMap;

use crate::common::*;

const LOAD_CUDART: &str = "import ctypes; l = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); \
     l.cudaRuntimeGetVersion(ctypes.byref(v)); print(v.value)";

/// `ENV NAME=value` lines as bash `export`s (comments dropped).
pub(crate) fn dockerfile_as_shell(lines: &str) -> String {
    lines
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let rest = l
                .strip_prefix("ENV ")
                .unwrap_or_else(|| panic!("not ENV: {l}"));
            format!("export {rest}\n")
        })
        .collect()
}

/// Applies `$GITHUB_ENV` lines as the runner does.
pub(crate) fn github_env(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some((name, delim)) = l.split_once("<<") {
            let mut value = Vec::new();
            for v in lines.by_ref() {
                if v == delim {
                    break;
                }
                value.push(v);
            }
            out.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = l.split_once('=') {
            out.insert(name.to_string(), value.to_string());
        }
    }
    out
}

#[test]
fn dockerfile_lines_activate_the_version_in_front_of_the_image_environment() {
    let env = TestEnv::with_root_name("cuda root");
    fake_installed(&env.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    let o = env
        .cmd()
        .env("LD_LIBRARY_PATH", "/host/only")
        .args(["env", "--format", "dockerfile", "12.4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = String::from_utf8(o.stdout).unwrap();
    insta::assert_snapshot!(lines.replace(env.root.to_str().unwrap(), "[ROOT]"), @r#"
    # cudaenv: 12.4.1+cudnn9.1.0
    ENV PATH="[ROOT]/versions/12.4.1+cudnn9.1.0/bin:${PATH}"
    ENV LD_LIBRARY_PATH="[ROOT]/versions/12.4.1+cudnn9.1.0/lib64${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
    ENV CUDA_HOME="[ROOT]/versions/12.4.1+cudnn9.1.0"
    ENV CUDA_PATH="[ROOT]/versions/12.4.1+cudnn9.1.0"
    ENV CUDNN_PATH="[ROOT]/versions/12.4.1+cudnn9.1.0"
    ENV CUDAENV_ACTIVE="12.4.1+cudnn9.1.0"
    ENV NVIDIA_REQUIRE_CUDA="cuda>=12.4"
    ENV NVIDIA_VISIBLE_DEVICES=all
    ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
    "#);
    let lib64 = format!("{}/versions/12.4.1+cudnn9.1.0/lib64", env.root.display());
    // An image without LD_LIBRARY_PATH, and one with it.
    for (image_ld, want_ld) in [
        (None, lib64.clone()),
        (
            Some("/usr/local/nvidia/lib64"),
            format!("{lib64}:/usr/local/nvidia/lib64"),
        ),
    ] {
        let script = format!(
            "{}{}\nprintf '%s\\n' \"$LD_LIBRARY_PATH\" \"$PATH\"\npython3 -c \"{LOAD_CUDART}\"\n",
            image_ld
                .map(|l| format!("export LD_LIBRARY_PATH={l}\n"))
                .unwrap_or_else(|| "unset LD_LIBRARY_PATH\n".into()),
            dockerfile_as_shell(&lines)
        );
        let out = bash(&env, &env.home, &[], &script);
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got[0], want_ld, "{out}");
        assert!(
            got[1].ends_with(":/usr/local/bin:/usr/bin:/bin") && got[1].contains("/bin:"),
            "{out}"
        );
        assert_eq!(got[2], "12040", "{out}");
    }
}

#[test]
fn github_env_lines_carry_the_activation_to_later_steps() {
    let env = TestEnv::new();
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    // As a workflow step writes it.
    let file = env.path("github_env");
    bash(
        &env,
        &env.home,
        &[("GITHUB_ENV", file.to_str().unwrap())],
        "\"$CUDAENV\" env --format github 12.4.1 >> \"$GITHUB_ENV\"",
    );
    let vars = github_env(&std::fs::read_to_string(&file).unwrap());
    let v = format!("{}/versions/12.4.1", env.root.display());
    assert_eq!(vars["CUDA_HOME"], v);
    assert_eq!(vars["NVIDIA_REQUIRE_CUDA"], "cuda>=12.4");
    assert_eq!(
        vars["PATH"],
        format!("{v}/bin:/usr/local/bin:/usr/bin:/bin")
    );
    // The next step: the runner's environment plus the file.
    let o = std::process::Command::new("python3")
        .env_clear()
        .envs(&vars)
        .args(["-c", LOAD_CUDART])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "12040",
        "{}",
        text(&o)
    );

    let o = env.run(&["env", "--format", "github", "system"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = env.run(&["env", "--format", "dockerfile", "--shell", "bash", "12.4.1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `doctor --json`'s findings as `(level, code)`.
fn findings(out: &std::process::Output) -> Vec<(String, String)> {
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["level"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(f: &[(String, String)], level: &str, code: &str) -> bool {
    f.iter().any(|(l, c)| l == level && c == code)
}

#[test]
fn doctor_recognises_apptainer_and_the_nvidia_container_variables() {
    let env = TestEnv::new();
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    env.ok(&["global", "12.4.1"]);
    // Apptainer says so in the environment of every process it starts; no
    // `--nv` means no /.singularity.d/libs with the host's libcuda.
    let o = env
        .cmd()
        .env("APPTAINER_CONTAINER", "/images/train.sif")
        .env("NVIDIA_DRIVER_CAPABILITIES", "utility")
        .env("NVIDIA_REQUIRE_CUDA", "cuda>=12.0")
        .args(["doctor", "--json", "--no-python"])
        .output()
        .unwrap();
    let f = findings(&o);
    assert!(has(&f, "warning", "container"), "{f:?}");
    assert!(has(&f, "warning", "nvidia-capabilities"), "{f:?}");
    assert!(has(&f, "warning", "nvidia-require-cuda"), "{f:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["container"]["kind"], "apptainer");
    assert!(text(&o).contains("apptainer exec --nv"), "{}", text(&o));

    // With --nv the driver's libraries are in /.singularity.d/libs; an
    // environment that dropped it from LD_LIBRARY_PATH cannot load libcuda.
    let mut facts = v["facts"].clone();
    facts["container"]["singularity_libs"] = serde_json::json!(["libcuda.so.1"]);
    facts["env"]["ld_library_path"] = serde_json::json!(["/opt/app/lib"]);
    let file = env.path("facts.json");
    std::fs::write(&file, facts.to_string()).unwrap();
    let o = env
        .cmd()
        .args(["doctor", "--json", "--facts"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(16), "{}", text(&o));
    let f = findings(&o);
    assert!(
        has(&f, "ok", "container") && has(&f, "error", "container-libs"),
        "{f:?}"
    );
    facts["env"]["ld_library_path"] = serde_json::json!(["/.singularity.d/libs"]);
    std::fs::write(&file, facts.to_string()).unwrap();
    let o = env
        .cmd()
        .args(["doctor", "--json", "--facts"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        !has(&findings(&o), "error", "container-libs"),
        "{}",
        text(&o)
    );
}

/// `doctor --json`'s findings about the machine planned for, as
/// `level code: message`.
fn planned_messages(out: &std::process::Output) -> String {
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let code = f["code"].as_str().unwrap();
            code == "target" || code.starts_with("driver-") || code.starts_with("arch")
        })
        .map(|f| {
            format!(
                "{} {}: {}",
                f["level"].as_str().unwrap(),
                f["code"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn target_driver_and_arch_plan_for_another_machine() {
    let env = TestEnv::new();
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    env.ok(&["global", "12.4.1"]);
    // doctor: the active 12.4.1 judged for a node with driver 470 and a Hopper GPU.
    let o = env
        .cmd()
        .args([
            "doctor",
            "--json",
            "--no-python",
            "--target-driver",
            "470.57.02",
            "--target-arch",
            "sm_90",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(16), "{}", text(&o));
    let f = findings(&o);
    assert!(
        has(&f, "ok", "target") && has(&f, "error", "driver-too-old"),
        "{f:?}"
    );
    assert!(has(&f, "ok", "arch"), "{f:?}");
    assert!(!has(&f, "warning", "no-driver"), "{f:?}");
    insta::assert_snapshot!(planned_messages(&o), @r#"
    ok target: planning for a target machine: driver 470.57.02 (supports CUDA ≤ 11.4), sm_90 (Hopper); the checks of the active version are for it, this machine's own driver and GPUs are not judged
    error driver-too-old: the target machine's driver 470.57.02 is too old for CUDA 12.4.1 (needs ≥ 525.60.13): programs fail with "CUDA driver version is insufficient for CUDA runtime version"
    ok arch: CUDA 12.4.1 supports sm_90
    "#);
    // The same through the variables: the driver runs CUDA 13.0, the Pascal GPU does not.
    fake_installed(&env.root, "13.0.0", "13.0.0", None);
    let o = env
        .cmd()
        .env("CUDAENV_TARGET_DRIVER", "580.95.05")
        .env("CUDAENV_TARGET_ARCH", "6.0")
        .env("CUDAENV_VERSION", "13.0.0")
        .args(["doctor", "--json", "--no-python"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(16), "{}", text(&o));
    let f = findings(&o);
    assert!(has(&f, "ok", "driver-fit"), "{f:?}");
    assert!(has(&f, "error", "arch-unsupported"), "{f:?}");
    insta::assert_snapshot!(planned_messages(&o), @r#"
    ok target: planning for a target machine: driver 580.95.05 (supports CUDA ≤ 13.0), sm_60 (Pascal); the checks of the active version are for it, this machine's own driver and GPUs are not judged
    ok driver-fit: the target machine's driver 580.95.05 runs CUDA 13.0.0
    error arch-unsupported: CUDA 13.0.0 does not support the target machine's GPU (sm_60, Pascal): support ended in CUDA 13.0; expect "no kernel image is available for execution on the device"
    "#);

    // compat and install --for pick what the target runs.
    let o = env.run(&[
        "compat",
        "torch==2.4",
        "--json",
        "--target-driver",
        "470.57.02",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["choice"]["spec"], "11.8+cudnn9.1");
    assert_eq!(v["target"]["driver"], "470.57.02");
    // The table and the reason name the target, never "this machine".
    let o = env.run(&[
        "compat",
        "torch==2.4",
        "--target-driver",
        "470.57.02",
        "--target-arch",
        "sm_80",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "planning for the target machine (driver 470.57.02, sm_80), not this one\n"
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stdout), @r#"
    torch 2.4.1 (linux) — Python >=3.8, <=3.12
      CUDA   cuDNN       build         driver (linux)                                                   target
      12.1   9.1.0.70    stable (PyPI) ≥ 530.30.02 (≥ 525.60.13 with minor version compatibility)       no: needs driver ≥ 525.60.13, the target machine has 470.57.02
      11.8   9.1.0.70    stable        ≥ 520.61.05 (≥ 450.80.02 with minor version compatibility)       runs
      12.4   9.1.0.70    experimental  ≥ 550.54.14 (≥ 525.60.13 with minor version compatibility)       no: needs driver ≥ 525.60.13, the target machine has 470.57.02
    from: CUDA 12.1, cuDNN == 9.1.0.70, NCCL == 2.20.5: Requires-Dist of torch 2.4.1's wheel (torch-2.4.1-cp39-cp39-manylinux1_x86_64.whl) (registry/compat/frameworks.toml)
    from: the other builds, Python: PyTorch's RELEASE.md matrix (registry/compat/pytorch.toml)
    from: driver floors: CUDA release notes, Tables 2 and 3 (registry/compat/cuda_driver.toml)
    stack: 11.8+cudnn9.1
    why:   torch 2.4.1 has stable builds for CUDA 11.8, 12.1 (experimental: 12.4); picked CUDA 11.8, the newest one the target machine runs (CUDA 12.1: needs driver ≥ 525.60.13, the target machine has 470.57.02), with cuDNN 9.1.0.70; name another with `torch==2.4.1+cuXY`
    use:   cudaenv install --for torch==2.4   or   cudaenv local --for torch==2.4
    "#);
    let o = env
        .cmd()
        .env("CUDAENV_TARGET_DRIVER", "470.57.02")
        .args([
            "install",
            "--for",
            "torch==2.4",
            "--source",
            "nvidia",
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["cuda"], "11.8.0");
    assert!(
        text(&o).contains("planning for the target machine (driver 470.57.02"),
        "{}",
        text(&o)
    );
    // The guard's warnings are about the target.
    let o = env.run(&[
        "install",
        "11.8",
        "--source",
        "nvidia",
        "--dry-run",
        "--json",
        "--target-driver",
        "470.57.02",
        "--target-arch",
        "sm_100",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stderr), @r#"
    planning for the target machine (driver 470.57.02, sm_100), not this one
    warning: the target machine's driver 470.57.02 runs CUDA 11.8 through minor version compatibility only; PTX JIT of code built for it needs ≥ 520.61.05
    warning: the target machine's GPU (sm_100) needs CUDA ≥ 12.8; CUDA 11.8 has no native code for it (PTX JIT only; libraries without PTX fail)
    hint: installing anyway; `--strict` refuses
    11.8.0 installs no cuDNN; `cudaenv install 11.8.0+cudnn8` installs it with one (`cudaenv ls-remote 11.8` lists the cuDNN builds)
    "#);
    // --strict refuses what the target cannot run, before anything is fetched.
    let o = env.run(&[
        "install",
        "12.4",
        "--target-driver",
        "470.57.02",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(11), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stderr), @r#"
    planning for the target machine (driver 470.57.02, GPU architecture unknown), not this one
    error: 12.4 would not run on the target machine (driver 470.57.02, GPU architecture unknown): CUDA 12.4 needs NVIDIA driver ≥ 525.60.13; the target machine has 470.57.02 (programs fail with "CUDA driver version is insufficient")
    hint: upgrade the target machine's NVIDIA driver, pick an older CUDA (`cudaenv compat` with the same target shows what each needs), or drop --strict to install anyway
    "#);
    let o = env.run(&["install", "11.2", "--target-arch", "sm_90", "--strict"]);
    assert_eq!(o.status.code(), Some(12), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stderr), @r#"
    planning for the target machine (driver unknown, sm_90), not this one
    error: 11.2 would not run on the target machine (driver unknown, sm_90): the target machine's GPU (sm_90) needs CUDA ≥ 11.8; CUDA 11.2 has no native code for it (PTX JIT only; libraries without PTX fail)
    hint: pick a CUDA release that supports the target machine's GPU, or drop --strict to install anyway
    "#);
    assert_eq!(
        env.ok(&["versions", "--bare"]).split_whitespace().count(),
        2,
        "nothing was installed"
    );

    // ls-remote (through the variables only) marks what the target cannot run.
    let o = env
        .cmd()
        .env("CUDAENV_TARGET_ARCH", "sm_90")
        .args(["ls-remote", "11.4", "--source", "nvidia", "--offline"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines().next().is_some_and(
            |l| l.ends_with("won't run on the target machine: sm_90 needs CUDA ≥ 11.8")
        ),
        "{}",
        text(&o)
    );
    assert!(!out.contains("here"), "{}", text(&o));

    let o = env.run(&["compat", "torch==2.4", "--target-arch", "hopper"]);
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stderr), @r"
    error: invalid --target-arch `hopper`: not a GPU architecture such as `sm_90`, `sm_86` or `8.6`
    hint: describe the machine to plan for as `--target-driver 550.54.15 --target-arch sm_90` (`nvidia-smi --query-gpu=driver_version,compute_cap --format=csv` there prints both)
    ");
}

/// The fenced blocks of a section of `docs/clusters.md`: (info string, body).
fn doc_blocks(section: &str) -> Vec<(String, String)> {
    let doc = include_str!("../../docs/clusters.md");
    let body = doc
        .split("\n## ")
        .find(|s| s.starts_with(section))
        .unwrap_or_else(|| panic!("docs/clusters.md has no `{section}` section"));
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in body.lines() {
        match (current.take(), line.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.to_string(), String::new())),
            (Some(b), Some(_)) => blocks.push(b),
            (Some((info, mut text)), None) => {
                text.push_str(line);
                text.push('\n');
                current = Some((info, text));
            }
            (None, None) => {}
        }
    }
    blocks
}

fn doc_block(section: &str, info: &str) -> String {
    doc_blocks(section)
        .into_iter()
        .find(|(i, _)| i == info)
        .unwrap_or_else(|| panic!("no ```{info} block in `{section}`"))
        .1
}

/// The value of `name` after `export name=value` in bash, with `vars` set.
fn shell_value(
    env: &TestEnv,
    vars: &BTreeMap<String, String>,
    assignment: &str,
    name: &str,
) -> String {
    let mut c = std::process::Command::new("bash");
    c.env_clear()
        .envs(vars)
        .args(["--noprofile", "--norc", "-c"])
        .arg(format!("export {assignment}\nprintf '%s' \"${name}\""))
        .current_dir(&env.home);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{assignment}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn docs_dockerfile_example_builds_and_runs() {
    let env = TestEnv::new();
    let image = env.path("image");
    let dockerfile = doc_block("Containers and CI", "dockerfile");
    let inside = |s: &str| {
        s.replace("/opt/cudaenv", &format!("{}/opt/cudaenv", image.display()))
            .replace(
                "/usr/local/bin/",
                &format!("{}/usr/local/bin/", image.display()),
            )
    };
    // The image's environment, as a base image has it.
    let mut vars: BTreeMap<String, String> = [
        ("HOME", env.home.display().to_string()),
        (
            "PATH",
            format!(
                "{}/usr/local/bin:/usr/local/bin:/usr/bin:/bin",
                image.display()
            ),
        ),
        ("NO_COLOR", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut env_lines = String::new();
    let mut after_run = false;
    for line in dockerfile.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "FROM" => {}
            "COPY" => {
                let (src, dst) = rest.split_once(' ').unwrap();
                assert_eq!(src, "cudaenv");
                let dst = inside(dst);
                std::fs::create_dir_all(std::path::Path::new(&dst).parent().unwrap()).unwrap();
                std::fs::copy(bin(), &dst).unwrap();
            }
            "ENV" => {
                let name = rest.split('=').next().unwrap();
                let value = shell_value(&env, &vars, &inside(rest), name);
                vars.insert(name.to_string(), value);
                if after_run {
                    env_lines.push_str(line);
                    env_lines.push('\n');
                }
            }
            "RUN" => {
                let o = std::process::Command::new("bash")
                    .env_clear()
                    .envs(&vars)
                    .args(["--noprofile", "--norc", "-c", rest])
                    .current_dir(&env.home)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "RUN {rest}: {}", text(&o));
                after_run = true;
            }
            "#" => {
                if after_run {
                    env_lines.push_str(line);
                    env_lines.push('\n');
                }
            }
            _ => panic!("unexpected Dockerfile line: {line}"),
        }
    }
    // The ENV lines on the page are what cudaenv prints for that root.
    let o = std::process::Command::new(bin())
        .env_clear()
        .envs(&vars)
        .args(["env", "--format", "dockerfile", "12.4.1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let printed = String::from_utf8(o.stdout)
        .unwrap()
        .replace(&format!("{}/opt/cudaenv", image.display()), "/opt/cudaenv");
    assert_eq!(env_lines, printed);
    // The container's process finds the stack's runtime.
    let o = std::process::Command::new("python3")
        .env_clear()
        .envs(&vars)
        .args(["-c", LOAD_CUDART])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "12040",
        "{}",
        text(&o)
    );
    assert_eq!(vars["NVIDIA_REQUIRE_CUDA"], "cuda>=12.4");
}

#[test]
fn docs_github_steps_run_as_the_runner_runs_them() {
    let env = TestEnv::new();
    let steps: Vec<String> = doc_block("Containers and CI", "yaml")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- run: ").map(str::to_string))
        .collect();
    assert_eq!(steps.len(), 3, "{steps:?}");
    let file = env.path("github_env");
    std::fs::write(&file, "").unwrap();
    let runner: BTreeMap<String, String> = [
        ("HOME", env.home.display().to_string()),
        ("CUDAENV_ROOT", env.root.display().to_string()),
        (
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                bin().parent().unwrap().display()
            ),
        ),
        ("NO_COLOR", "1".into()),
        ("GITHUB_ENV", file.display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for step in &steps {
        let mut vars = runner.clone();
        vars.extend(github_env(&std::fs::read_to_string(&file).unwrap()));
        let o = std::process::Command::new("bash")
            .env_clear()
            .envs(&vars)
            .args(["--noprofile", "--norc", "-e", "-c", step])
            .current_dir(&env.home)
            .output()
            .unwrap();
        assert!(o.status.success(), "step `{step}`: {}", text(&o));
    }
    let vars = github_env(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(vars["CUDAENV_ACTIVE"], "12.4.1");
    assert_eq!(vars["NVIDIA_REQUIRE_CUDA"], "cuda>=12.4");
}

#[test]
fn docs_target_examples_run_as_written() {
    let env = TestEnv::new();
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    env.ok(&["global", "12.4.1"]);
    let script = doc_block("Containers and CI", "sh");
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        bin().parent().unwrap().display()
    );
    let out = bash(
        &env,
        &env.home,
        &[("PATH", &path)],
        &format!("exec 2>&1\n{script}"),
    );
    assert!(out.contains("stack: 11.8+cudnn9.1"), "{out}");
    assert!(out.contains("refused: exit 11"), "{out}");
    assert!(
        out.contains("planning for a target machine: driver 550.54.15"),
        "{out}"
    );
    assert!(
        out.contains("the target machine's driver 550.54.15 runs CUDA 12.4.1"),
        "{out}"
    );
    // Every verdict is said of the target, none of this machine.
    assert!(
        out.contains("the newest one the target machine runs")
            && out.contains("12.4 would not run on the target machine (driver 470.57.02"),
        "{out}"
    );
    assert!(
        !out.contains("this machine has") && !out.contains("on this machine"),
        "{out}"
    );
    assert_eq!(env.ok(&["versions", "--bare"]).trim(), "12.4.1");
}
