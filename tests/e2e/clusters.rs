//! The tools people already use on shared machines (docs/clusters.md):
//! direnv's `use cudaenv`, driven by Debian's real `direnv` in a real
//! interactive bash.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{TestEnv, assert_success, fake_installed};
use crate::shell::{BASE_PATH, Sh, run_script};

/// Prints `CUDART=<version>` as the glibc loader's `libcudart.so.<major>`
/// reports it (after a `@step`, it lands in that step's variables).
fn cudart_probe(major: u32) -> String {
    format!(
        "python3 -c 'import ctypes; v = ctypes.c_int(); ctypes.CDLL(\"libcudart.so.{major}\").cudaRuntimeGetVersion(ctypes.byref(v)); print(\"CUDART=%d\" % v.value)'"
    )
}

/// The variables a step saw, without the ones that change with every `cd`.
fn steady(vars: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut v = vars.clone();
    for k in ["PWD", "OLDPWD", "_", "CUDART"] {
        v.remove(k);
    }
    v
}

/// Sets a file's modification time a few seconds ahead: direnv compares
/// watched files' times in whole seconds.
fn touch_ahead(file: &str, secs: u32) -> String {
    format!("touch -d \"@$(( $(date +%s) + {secs} ))\" {file}")
}

#[test]
fn direnv_use_cudaenv_activates_follows_the_pin_and_gives_everything_back() {
    let t = TestEnv::new();
    let v12 = fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let v11 = fake_installed(&t.root, "11.8.0", "11.8.0", None);
    let lib = t.home.join(".config/direnv/lib");
    std::fs::create_dir_all(&lib).unwrap();
    let out = t.run(&["direnv"]);
    assert_success(&out, "cudaenv direnv");
    std::fs::write(lib.join("cudaenv.sh"), &out.stdout).unwrap();

    let proj = t.home.join("my proj");
    let fixed = t.home.join("fixed");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::create_dir_all(&fixed).unwrap();
    std::fs::write(proj.join(".envrc"), "use cudaenv\n").unwrap();
    std::fs::write(proj.join(".cuda-version"), "12.4\n").unwrap();
    std::fs::write(fixed.join(".envrc"), "use cudaenv 11.8\n").unwrap();
    for dir in [&proj, &fixed] {
        let out = std::process::Command::new("direnv")
            .arg("allow")
            .arg(dir)
            .env_clear()
            .env("HOME", &t.home)
            .env("PATH", BASE_PATH)
            .output()
            .expect("direnv is needed by the tests: run scripts/test.sh");
        assert_success(&out, "direnv allow");
    }

    let lines: Vec<String> = vec![
        "eval \"$(direnv hook bash)\"".into(),
        "@step start".into(),
        "cd \"$PROJ\"".into(),
        "@step proj".into(),
        cudart_probe(12),
        // The pin changes in place: direnv reloads (a watched file).
        "printf '11.8\\n' > .cuda-version".into(),
        touch_ahead(".cuda-version", 2),
        "@step repinned".into(),
        cudart_probe(11),
        // A .tool-versions beside it cannot win, one in sub/ does (nearest).
        "printf 'cuda 12.4\\n' > sub/.tool-versions".into(),
        "cd sub".into(),
        "@step sub".into(),
        "cd \"$FIXED\"".into(),
        "@step fixed".into(),
        "cd ~".into(),
        "@step out".into(),
    ];
    let run = run_script(
        Sh::Bash,
        &t,
        &[
            ("PROJ", proj.to_str().unwrap()),
            ("FIXED", fixed.to_str().unwrap()),
        ],
        &lines,
    );
    let shown = |dir: &Path| dir.to_str().unwrap().to_owned();
    let expect = |step: &str, version: &Path, name: &str, cudart: Option<&str>| {
        let got = run.step(step);
        let want = [
            (
                "PATH",
                Some(format!("{}:{BASE_PATH}", shown(&version.join("bin")))),
            ),
            ("LD_LIBRARY_PATH", Some(shown(&version.join("lib64")))),
            ("CUDA_HOME", Some(shown(version))),
            ("CUDA_PATH", Some(shown(version))),
            ("CUDAENV_ACTIVE", Some(name.to_owned())),
            ("CUDART", cudart.map(str::to_owned)),
        ];
        for (k, v) in want {
            assert_eq!(got.get(k), v.as_ref(), "step {step}: {k}\n{}", run.stderr);
        }
    };
    expect("proj", &v12, "12.4.1", Some("12040"));
    expect("repinned", &v11, "11.8.0", Some("11080"));
    // sub/ has no .envrc: direnv keeps the parent's, which re-selects from
    // proj (11.8); cudaenv itself would pick sub/.tool-versions there.
    expect("sub", &v11, "11.8.0", None);
    expect("fixed", &v11, "11.8.0", None);
    let (start, out) = (run.step("start"), run.step("out"));
    assert_eq!(steady(start), steady(out), "{}", run.stderr);
    assert!(!out.contains_key("CUDAENV_ACTIVE") && !out.contains_key("LD_LIBRARY_PATH"));
}
