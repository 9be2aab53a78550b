//! Frameworks that bring their own CUDA: doctor's findings over fake Python
//! environments laid out as pip leaves them (dist-info METADATA and RECORD,
//! the wheels' real shared libraries), the fixes it prints run for real, and
//! activation next to such an environment (warning, `bundled-cuda = wheels`,
//! XLA_FLAGS and TRITON_PTXAS_PATH).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

struct Venv {
    prefix: PathBuf,
    site: PathBuf,
    python: PathBuf,
}

/// A virtualenv at `tmp/venv` whose `python3` answers doctor's probe with its site-packages.
fn venv(t: &TestEnv) -> Venv {
    let prefix = t.path("venv");
    let site = prefix.join("lib/python3.12/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    let python = prefix.join("bin/python3");
    write_executable(
        &python,
        &format!(
            "#!/bin/sh\necho 3.12.3\necho '{0}'\necho '{0}'\n",
            site.display()
        ),
    );
    Venv {
        prefix,
        site,
        python,
    }
}

/// A `*.dist-info` as pip writes it: METADATA (with `requires`) and a RECORD of `files`.
fn dist(site: &Path, name: &str, version: &str, requires: &[&str], files: &[&str]) {
    let d = site.join(format!("{}-{version}.dist-info", name.replace('-', "_")));
    std::fs::create_dir_all(&d).unwrap();
    let mut m = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    for r in requires {
        m.push_str(&format!("Requires-Dist: {r}\n"));
    }
    m.push('\n');
    std::fs::write(d.join("METADATA"), m).unwrap();
    let record: String = files.iter().map(|f| format!("{f},sha256=x,1\n")).collect();
    std::fs::write(d.join("RECORD"), record).unwrap();
}

/// What torch 2.11+cu130, jax[cuda13] 0.11.2, cupy-cuda13x[ctk] 14 and
/// numba-cuda[cu13] installed on the GPU machine, by their dist-info versions
/// (only a few of the wheels; real libraries where the loader would look).
fn frameworks_with_wheels(v: &Venv) {
    let site = &v.site;
    fake_wheels(site, "13.0.96", Some("9.19.0.56"));
    // `fake_wheels` creates the directories; pip's records and metadata:
    dist(
        site,
        "nvidia-cuda-runtime",
        "13.0.96",
        &[],
        &["nvidia/cu13/lib/libcudart.so.13"],
    );
    dist(
        site,
        "nvidia-cudnn-cu13",
        "9.19.0.56",
        &[],
        &["nvidia/cudnn/lib/libcudnn.so.9"],
    );
    dist(site, "nvidia-cublas", "13.1.0.3", &[], &[]);
    dist(
        site,
        "torch",
        "2.11.0",
        &[
            "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"",
            "nvidia-cuda-runtime==13.0.96; platform_system == \"Linux\"",
        ],
        &[],
    );
    std::fs::create_dir_all(site.join("torch")).unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        "from typing import Optional\n__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n",
    )
    .unwrap();
    dist(site, "jax", "0.11.2", &[], &[]);
    dist(
        site,
        "jax-cuda13-plugin",
        "0.11.2",
        &[
            "jax-cuda13-pjrt==0.11.2",
            "nvidia-cublas>=13.0; extra == \"with-cuda\"",
        ],
        &[],
    );
    dist(site, "jax-cuda13-pjrt", "0.11.2", &[], &[]);
    dist(
        site,
        "cupy-cuda13x",
        "14.0.1",
        &["cuda-pathfinder>=1.3"],
        &[],
    );
    dist(site, "cuda-pathfinder", "1.3.3", &[], &[]);
    dist(site, "cuda-bindings", "13.0.3", &[], &[]);
    dist(site, "numba-cuda", "0.20.0", &["cuda-bindings>=13"], &[]);
}

fn doctor_json(t: &TestEnv, v: &Venv, extra: &[(&str, &str)]) -> (Option<i32>, Value) {
    let mut c = t.cmd();
    c.args(["doctor", "--json"])
        .env("CUDAENV_PYTHON", &v.python)
        .env("VIRTUAL_ENV", &v.prefix);
    for (k, val) in extra {
        c.env(k, val);
    }
    let out = c.output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), json)
}

/// Framework findings (`framework-*`, `wheel-*`) at warning or error level.
fn framework_problems(r: &Value) -> Vec<&Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let code = f["code"].as_str().unwrap();
            (code.starts_with("framework") || code.starts_with("wheel")) && f["level"] != "ok"
        })
        .collect()
}

fn messages(r: &Value, code: &str) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

/// The false warning: with nothing active, frameworks working from
/// their wheels got "needs CUDA 13 on the library path" and a fix that failed.
#[test]
fn frameworks_working_from_their_wheels_get_no_warning() {
    let t = TestEnv::new();
    let v = venv(&t);
    frameworks_with_wheels(&v);
    let (_, r) = doctor_json(&t, &v, &[]);
    assert!(framework_problems(&r).is_empty(), "{r:#}");
    let bundled = messages(&r, "framework-bundled").join("\n");
    for needle in [
        "torch 2.11.0 loads CUDA runtime 13.0.96 + cuDNN 9.19.0.56 from its NVIDIA wheels",
        "jax-cuda13-plugin 0.11.2 loads",
        "jax[cuda13-local]",
        "cupy-cuda13x 14.0.1 loads",
        "cuda-pathfinder searches site-packages before LD_LIBRARY_PATH",
        "numba-cuda 0.20.0 loads",
    ] {
        assert!(bundled.contains(needle), "{needle:?} not in:\n{bundled}");
    }
    assert!(
        !bundled.contains("jax-cuda13-pjrt"),
        "the pjrt half is not a second framework: {bundled}"
    );
}

/// The torch failure: a linked stack with cuDNN 9.14 active under torch
/// whose wheel is 9.19.0.56. Doctor names the installed wheel's version, and
/// the fix it prints works: with it, activation keeps the stack off
/// LD_LIBRARY_PATH and doctor is satisfied.
#[test]
fn an_older_stack_cudnn_under_torch_is_an_error_and_its_fix_works() {
    let t = TestEnv::new();
    let v = venv(&t);
    frameworks_with_wheels(&v);
    let tk = fake_toolkit(&t.path("cuda-13.0"), "13.0", Some("9.14.0"));
    t.link("sys13", &tk);
    t.ok(&["global", "sys13"]);

    let (code, r) = doctor_json(&t, &v, &[]);
    let errors: Vec<&Value> = framework_problems(&r)
        .into_iter()
        .filter(|f| f["level"] == "error")
        .collect();
    // torch fails on the mix (measured); jax loads it too but its matmuls ran
    // (a warning); cupy, numba-cuda and cuda-bindings do not load cuDNN.
    let who: Vec<&str> = errors
        .iter()
        .map(|e| e["message"].as_str().unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(who, ["torch"], "{r:#}");
    assert!(
        framework_problems(&r)
            .iter()
            .any(|f| f["level"] == "warning"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("jax-cuda13-plugin")),
        "{r:#}"
    );
    let e = errors[0];
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("9.19.0.56") && msg.contains("9.14.0"), "{msg}");
    assert_eq!(code, Some(16));
    let fix = e["fix"].as_str().unwrap();
    assert!(fix.contains("CUDAENV_BUNDLED_CUDA=wheels"), "{fix}");

    // Activation says so, and puts the stack first.
    let lib64 = tk.join("lib64");
    let exec = |setting: Option<&str>| {
        let mut c = t.cmd();
        c.args(["exec", "--", "sh", "-c", "echo \"$LD_LIBRARY_PATH\""])
            .env("VIRTUAL_ENV", &v.prefix);
        if let Some(s) = setting {
            c.env("CUDAENV_BUNDLED_CUDA", s);
        }
        let out = c.output().unwrap();
        assert_success(&out, "cudaenv exec");
        (stdout(&out), stderr(&out))
    };
    let (ld, warn) = exec(None);
    assert!(ld.contains(lib64.to_str().unwrap()), "{ld}");
    assert!(warn.contains("holds CUDA 13 wheels"), "{warn}");

    // The fix, run: the environment variable, then the config key.
    let (ld, warn) = exec(Some("wheels"));
    assert!(!ld.contains(lib64.to_str().unwrap()), "kept off: {ld}");
    assert!(warn.contains("kept off LD_LIBRARY_PATH"), "{warn}");
    let (code, r) = doctor_json(&t, &v, &[("CUDAENV_BUNDLED_CUDA", "wheels")]);
    assert!(framework_problems(&r).is_empty(), "{r:#}");
    assert_eq!(code, Some(0), "{r:#}");
    std::fs::write(t.root.join("config.toml"), "bundled-cuda = \"wheels\"\n").unwrap();
    let (ld, _) = exec(None);
    assert!(!ld.contains(lib64.to_str().unwrap()), "config key: {ld}");
    let (_, r) = doctor_json(&t, &v, &[]);
    assert!(framework_problems(&r).is_empty(), "{r:#}");

    // A bad value is refused, naming the variable.
    let out = t
        .cmd()
        .args(["exec", "--", "true"])
        .env("VIRTUAL_ENV", &v.prefix)
        .env("CUDAENV_BUNDLED_CUDA", "sometimes")
        .output()
        .unwrap();
    let err = assert_code(&out, 2, "a bad CUDAENV_BUNDLED_CUDA");
    assert!(err.contains("CUDAENV_BUNDLED_CUDA"), "{err}");
}

/// `jax[cuda13-local]` with no CUDA anywhere: a warning whose fix pins a
/// stack from the JAX table — and running the printed fix does that.
#[test]
#[cfg_attr(
    cudaenv_system_cudart,
    ignore = "the loader's cache has a CUDA runtime (ldconfig -p), which serves the framework: the test checks the fix for a machine without one"
)]
fn jax_local_without_a_stack_gets_a_fix_that_runs() {
    let t = TestEnv::new();
    let v = venv(&t);
    dist(&v.site, "jax", "0.11.2", &[], &[]);
    dist(
        &v.site,
        "jax-cuda13-plugin",
        "0.11.2",
        &["nvidia-cublas>=13.0; extra == \"with-cuda\""],
        &[],
    );
    let (_, r) = doctor_json(&t, &v, &[]);
    let problems = framework_problems(&r);
    assert_eq!(problems.len(), 1, "{r:#}");
    let fix = problems[0]["fix"].as_str().unwrap().to_string();
    assert_eq!(fix, "cudaenv local --for jax==0.11+cu130");
    let project = t.path("project");
    std::fs::create_dir_all(&project).unwrap();
    let args: Vec<&str> = fix.split_whitespace().skip(1).collect();
    let out = t.run_in(&project, &args);
    assert_success(&out, &fix);
    // The jax-cuda13-plugin 0.11.2 wheel asks for cuDNN 9 and NCCL 2 beside CUDA 13.
    assert_eq!(
        std::fs::read_to_string(project.join(".cuda-version"))
            .unwrap()
            .trim(),
        "13.0+cudnn9+nccl2"
    );
}

/// nvidia-cudnn-cu12 and -cu13 both own nvidia/cudnn/lib/libcudnn.so.9.
#[test]
fn two_wheels_owning_one_file_is_an_error() {
    let t = TestEnv::new();
    let v = venv(&t);
    dist(
        &v.site,
        "nvidia-cudnn-cu12",
        "9.10.2.21",
        &[],
        &["nvidia/cudnn/lib/libcudnn.so.9"],
    );
    dist(
        &v.site,
        "nvidia-cudnn-cu13",
        "9.19.0.56",
        &[],
        &["nvidia/cudnn/lib/libcudnn.so.9"],
    );
    let (code, r) = doctor_json(&t, &v, &[]);
    let p = framework_problems(&r);
    assert_eq!(p.len(), 1, "{r:#}");
    assert_eq!(p[0]["code"], "wheel-overlap");
    assert!(
        p[0]["message"]
            .as_str()
            .unwrap()
            .contains("nvidia/cudnn/lib/libcudnn.so.9")
    );
    assert_eq!(code, Some(16));
}

/// XLA and Triton get the toolkit's libdevice and ptxas; the user's other XLA
/// flags stay, and cudaenv's are removed again with `system`.
#[test]
fn activation_points_xla_and_triton_at_the_toolkit() {
    let t = TestEnv::new();
    let tk = fake_toolkit(&t.path("cuda-13.0"), "13.0", None);
    std::fs::create_dir_all(tk.join("nvvm/libdevice")).unwrap();
    std::fs::write(tk.join("nvvm/libdevice/libdevice.10.bc"), b"").unwrap();
    write_executable(&tk.join("bin/ptxas"), "#!/bin/sh\necho ptxas\n");
    t.link("sys13", &tk);
    let show = "echo \"$XLA_FLAGS|$TRITON_PTXAS_PATH\"";
    let out = t
        .cmd()
        .args(["exec", "--version", "sys13", "--", "sh", "-c", show])
        .env("XLA_FLAGS", "--xla_dump_to=/tmp/dump")
        .output()
        .unwrap();
    assert_success(&out, "exec");
    let tk = std::fs::canonicalize(&tk).unwrap_or(tk);
    let expected = format!(
        "--xla_dump_to=/tmp/dump --xla_gpu_cuda_data_dir={0}|{0}/bin/ptxas\n",
        tk.display()
    );
    let got = stdout(&out);
    assert!(
        got == expected
            || got.replace(&t.tmp.path().display().to_string(), "")
                == expected.replace(&t.tmp.path().display().to_string(), ""),
        "{got} != {expected}"
    );
    // Leaving: `system` removes cudaenv's flag and variable, keeps the user's flag.
    let ours = got.trim_end().split('|').collect::<Vec<_>>();
    let out = t
        .cmd()
        .args(["exec", "--version", "system", "--", "sh", "-c", show])
        .env("XLA_FLAGS", ours[0])
        .env("TRITON_PTXAS_PATH", ours[1])
        .output()
        .unwrap();
    assert_success(&out, "exec system");
    assert_eq!(stdout(&out), "--xla_dump_to=/tmp/dump|\n");
}

/// The prompt hook warns once, when it activates next to the wheels — not on
/// every prompt after that (the idle prompt exits before any activation).
#[test]
fn the_hook_warns_once_when_it_activates_next_to_wheels() {
    use std::io::Write;
    let t = TestEnv::new();
    let v = venv(&t);
    frameworks_with_wheels(&v);
    let tk = fake_toolkit(&t.path("cuda-13.0"), "13.0", None);
    std::fs::create_dir_all(tk.join("nvvm/libdevice")).unwrap();
    write_executable(&tk.join("bin/ptxas"), "#!/bin/sh\n");
    t.link("sys13", &tk);
    let project = t.path("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "sys13\n").unwrap();
    let mut child = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-i"])
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("VIRTUAL_ENV", &v.prefix)
        .env("XLA_FLAGS", "--xla_dump_to=/tmp/dump")
        .current_dir(&t.home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let script = format!(
        "eval \"$('{}' init bash)\"\ncd '{}'\n:\n:\n:\necho \"LD=$LD_LIBRARY_PATH\"\necho \"IN=$XLA_FLAGS|$TRITON_PTXAS_PATH\"\ncd ..\n:\necho \"OUT=$XLA_FLAGS|$TRITON_PTXAS_PATH\"\nexit\n",
        bin().display(),
        project.display()
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(
        err.matches("holds CUDA 13 wheels").count(),
        1,
        "one warning, at activation:\n{err}"
    );
    assert!(
        stdout(&out).contains(tk.join("lib64").to_str().unwrap()),
        "{}",
        stdout(&out)
    );
}

/// Runs every `cudaenv …` fix doctor printed (each in a fresh project) and
/// returns them; a fix that fails fails the test.
fn run_printed_fixes(t: &TestEnv, r: &Value) -> Vec<String> {
    let mut ran = Vec::new();
    for f in framework_problems(r) {
        let Some(fix) = f["fix"].as_str() else {
            continue;
        };
        let Some(cmd) = fix.strip_prefix("cudaenv ") else {
            continue;
        };
        let project = t.path(&format!("project-{}", ran.len()));
        std::fs::create_dir_all(&project).unwrap();
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = t.run_in(&project, &args);
        assert_success(&out, fix);
        assert!(
            project.join(".cuda-version").exists(),
            "{fix} pinned nothing"
        );
        ran.push(fix.to_string());
    }
    ran
}

/// Frameworks that need a CUDA on the loader path, with none: each gets a
/// warning whose printed fix runs; TensorFlow with its `and-cuda` wheels
/// does not need one.
#[test]
#[cfg_attr(
    cudaenv_system_cudart,
    ignore = "the loader's cache has a CUDA runtime (ldconfig -p), which serves the framework: the test checks the fix for a machine without one"
)]
fn frameworks_needing_a_stack_get_fixes_that_run() {
    let t = TestEnv::new();
    let v = venv(&t);
    // plain tensorflow 2.15 (its build record says CUDA 12.2), and cupy-cuda13x without [ctk].
    dist(&v.site, "tensorflow", "2.15.1", &[], &[]);
    std::fs::create_dir_all(v.site.join("tensorflow/python/platform")).unwrap();
    std::fs::write(
        v.site.join("tensorflow/python/platform/build_info.py"),
        "build_info = collections.OrderedDict([\n  'cuda_version': '12.2',\n  'cudnn_version': '8',\n])\n",
    )
    .unwrap();
    dist(&v.site, "cupy-cuda13x", "14.2.0", &[], &[]);
    let (_, r) = doctor_json(&t, &v, &[]);
    let mut ran = run_printed_fixes(&t, &r);
    ran.sort();
    assert_eq!(
        ran,
        [
            "cudaenv local --for cupy-cuda13x==14.2",
            "cudaenv local --for tensorflow==2.15"
        ],
        "{r:#}"
    );
    assert!(
        !std::fs::read_to_string(t.path("project-0/.cuda-version"))
            .unwrap()
            .trim()
            .is_empty()
    );

    // tensorflow[and-cuda]: the same release with NVIDIA's CUDA 12 wheels installed.
    let t = TestEnv::new();
    let v = venv(&t);
    dist(&v.site, "tensorflow", "2.15.1", &[], &[]);
    std::fs::create_dir_all(v.site.join("tensorflow/python/platform")).unwrap();
    std::fs::write(
        v.site.join("tensorflow/python/platform/build_info.py"),
        "build_info = collections.OrderedDict([\n  'cuda_version': '12.2',\n])\n",
    )
    .unwrap();
    dist(&v.site, "nvidia-cuda-runtime-cu12", "12.2.140", &[], &[]);
    dist(&v.site, "nvidia-cudnn-cu12", "8.9.4.25", &[], &[]);
    let (_, r) = doctor_json(&t, &v, &[]);
    assert!(framework_problems(&r).is_empty(), "{r:#}");
    let bundled = messages(&r, "framework-bundled").join("\n");
    assert!(
        bundled.contains("tensorflow 2.15.1 loads CUDA runtime 12.2.140 + cuDNN 8.9.4.25"),
        "{bundled}"
    );
}
