//! Errors say the right thing: a bad environment variable is named as the
//! variable (its value, what it takes), a bad config-file value as the file
//! and key, a bad argument fails in clap with the valid choices, and each
//! failure has its own message and hint. Exit code + stderr of the real
//! binary, snapshotted.

use std::process::{Output, Stdio};

use crate::common::*;

/// `[exit N]` + stderr, with the test's temporary paths replaced.
fn outcome(t: &TestEnv, o: &Output) -> String {
    format!("[exit {}]\n{}", o.status.code().unwrap_or(-1), stderr(o))
        .replace(&t.root.display().to_string(), "[ROOT]")
        .replace(&t.home.display().to_string(), "[HOME]")
}

fn with_var(t: &TestEnv, var: &str, value: &str, args: &[&str]) -> String {
    let o = t
        .cmd()
        .env(var, value)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    outcome(t, &o)
}

/// Defect: bad variables were reported as "invalid version spec" with a
/// spec hint (CUDAENV_CATALOGUE_MAX_AGE, CUDAENV_PARALLEL_DOWNLOAD_MIN, …).
#[test]
fn a_bad_variable_is_named_as_a_variable() {
    let t = TestEnv::new();
    let all = [
        with_var(&t, "CUDAENV_VERSION", "12.x", &["version"]),
        with_var(&t, "CUDAENV_CATALOGUE_MAX_AGE", "soon", &["ls-remote"]),
        with_var(
            &t,
            "CUDAENV_PARALLEL_DOWNLOAD_MIN",
            "lots",
            &["install", "12.4", "--dry-run"],
        ),
        with_var(
            &t,
            "CUDAENV_TARGET_ARCH",
            "hopper",
            &["install", "12.4", "--dry-run"],
        ),
    ]
    .join("---\n");
    insta::assert_snapshot!("a_bad_variable_is_named_as_a_variable", all);
}

/// Defect: a bad CUDAENV_NVIDIA_MIRROR was reported as an invalid
/// configuration file named `$CUDAENV_NVIDIA_MIRROR`. The variable is the
/// variable; the same value in config.toml is the file and its key.
#[test]
fn a_bad_nvidia_mirror_variable_is_not_a_config_file_error() {
    let t = TestEnv::new();
    let args = ["install", "--source", "legacy", "--dry-run", "11.2"];
    let var = with_var(&t, "CUDAENV_NVIDIA_MIRROR", "mirror.local", &args);
    std::fs::create_dir_all(&t.root).unwrap();
    std::fs::write(
        t.root.join("config.toml"),
        "nvidia-mirror = \"mirror.local\"\n",
    )
    .unwrap();
    let file = outcome(&t, &t.run(&args));
    insta::assert_snapshot!(
        "a_bad_nvidia_mirror_variable_is_not_a_config_file_error",
        format!("{var}---\n{file}")
    );
}

/// `--with`/`--without` are checked by clap against the registry's
/// components, and a SPEC that is not a CUDA version is refused there too:
/// nothing below the command line sees an unchecked string.
#[test]
fn arguments_are_typed_at_the_boundary() {
    let t = TestEnv::new();
    let with = outcome(&t, &t.run(&["install", "12.4", "--with", "nvcc,nvc"]));
    assert!(with.contains("[possible values: "), "{with}");
    assert!(with.contains("cudart"), "{with}");
    let system = outcome(&t, &t.run(&["install", "system"]));
    let lock = outcome(&t, &t.run(&["lock", "--without", "cuda-fft"]));
    insta::assert_snapshot!(
        "arguments_are_typed_at_the_boundary",
        format!(
            "{}---\n{system}---\n{lock}",
            with.lines().take(2).collect::<Vec<_>>().join("\n") + "\n"
        )
    );
    assert!(!t.root.exists(), "nothing was written");
}

/// Defect: about thirty failures were `Error::Other(String)`, with no hint;
/// each now has its own message and says what to do.
#[test]
fn each_failure_has_its_own_message_and_hint() {
    let t = TestEnv::new();
    let all = [
        outcome(
            &t,
            &t.cmd()
                .arg("explain")
                .stdin(Stdio::null())
                .output()
                .unwrap(),
        ),
        outcome(&t, &t.run(&["prefix", "system"])),
        outcome(&t, &t.run(&["shell"])),
    ]
    .join("---\n");
    insta::assert_snapshot!("each_failure_has_its_own_message_and_hint", all);
}
