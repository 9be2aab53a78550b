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

fn text(o: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

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
