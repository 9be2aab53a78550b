//! Regression tests for bugs the battery found, each named after its bug.

use super::support::fake_version;
use crate::common::TestEnv;

/// `exec` declared `--version SPEC` while clap propagated its own `--version`
/// flag to every subcommand: clap's debug assertion panicked (exit 101) on
/// every `cudaenv exec`, before any argument was looked at.
#[test]
fn exec_version_option_clashed_with_clap_version_flag() {
    let env = TestEnv::new();
    let v = fake_version(&env.root, "12.4.1", "12.4.1");
    let out = env
        .cmd()
        .args([
            "exec",
            "--version",
            "12.4.1",
            "--",
            "sh",
            "-c",
            "printf %s \"$PATH\"",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        path.split(':').next(),
        Some(v.join("bin").to_str().unwrap())
    );
    let plain = env.cmd().args(["exec", "--", "true"]).output().unwrap();
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
}
