//! Disk and permission failures (issue §5).
//!
//! A full disk is a real one: a 450 KiB tmpfs mounted over `$CUDAENV_ROOT` in
//! a private mount namespace (`unshare -m`, root only; the mount vanishes
//! with the namespace), so the install runs out of space while unpacking.
//! A read-only root is a read-only bind mount of it, and "permission denied
//! on versions/" is a mode-000 directory with the capabilities that let root
//! ignore modes dropped (`setpriv`).

use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use super::support::without_dac_override;
use crate::common::{TestEnv, bin};
use crate::pypi::{Mode, ONLY_CUDART, Server, good_wheel, sha256};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `script` in bash inside a private mount namespace with the test's
/// environment; `$1` is the binary, `$2` the root, `$3` the index.
fn in_namespace(env: &TestEnv, srv: &Server, script: &str) -> Output {
    Command::new("unshare")
        .args([
            "-m",
            "--propagation",
            "private",
            "bash",
            "-c",
            script,
            "bash",
        ])
        .arg(bin())
        .arg(&env.root)
        .arg(srv.index())
        .env_clear()
        .env("HOME", &env.home)
        .env("CUDAENV_ROOT", &env.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .current_dir(&env.home)
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(
    cudaenv_no_mount_ns,
    ignore = "needs root and mount namespaces (unshare -m) to fill a small tmpfs"
)]
fn full_disk_mid_install_leaves_no_partial_version_and_no_empty_files() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.root).unwrap();
    let script = format!(
        r#"set -u
mount -t tmpfs -o size=450k tmpfs "$2" || exit 99
CUDAENV_PYPI_INDEX="$3" "$1" install 12.4.1 {ONLY_CUDART} 2>&1
echo "exit=$?"
echo "versions=[$("$1" versions --bare 2>&1)]"
echo "staging=[$(ls -A "$2/versions/.staging" 2>/dev/null)]"
echo "empty=[$(find "$2/versions" -type f -size 0 ! -path '*/.locks/*' 2>/dev/null)]"
echo "listed_dirs=[$(ls -A "$2/versions" 2>/dev/null | grep -v '^\.')]"
"#
    );
    let o = in_namespace(&env, &srv, &script);
    let out = text(&o);
    assert!(!out.contains("exit=99"), "tmpfs mount failed: {out}");
    assert!(srv.downloads.load(Ordering::SeqCst) >= 1, "{out}");
    let exit: i32 = out
        .lines()
        .find_map(|l| l.strip_prefix("exit="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    // A full disk has its own exit code (6), whichever write hit it.
    assert_eq!(exit, 6, "the install did not fail as a full disk: {out}");
    assert!(
        out.contains("No space left") && out.contains("hint: free some space there"),
        "no clear message: {out}"
    );
    assert!(out.contains("versions=[]"), "{out}");
    assert!(out.contains("staging=[]"), "{out}");
    assert!(out.contains("empty=[]"), "{out}");
    assert!(out.contains("listed_dirs=[]"), "{out}");
    eprintln!("full disk: {out}");
}

#[test]
#[cfg_attr(
    cudaenv_no_mount_ns,
    ignore = "needs root and mount namespaces (unshare -m) to fill a small tmpfs"
)]
fn read_only_root_fails_clearly_and_changes_nothing() {
    let good = good_wheel();
    let srv = Server::start(good.clone(), sha256(&good), Mode::Normal);
    let env = TestEnv::new();
    std::fs::create_dir_all(env.root.join("versions")).unwrap();
    let before = super::support::snapshot(env.tmp.path());
    let script = format!(
        r#"mount --bind "$2" "$2" && mount -o remount,bind,ro "$2" || exit 99
CUDAENV_PYPI_INDEX="$3" "$1" install 12.4.1 {ONLY_CUDART} 2>&1
echo "exit=$?"
"#
    );
    let o = in_namespace(&env, &srv, &script);
    let out = text(&o);
    assert!(!out.contains("exit=99"), "{out}");
    assert!(!out.contains("exit=0"), "{out}");
    assert!(
        out.contains("Read-only") || out.contains("read-only"),
        "no clear message: {out}"
    );
    assert!(
        out.contains(&*env.root.to_string_lossy()),
        "the path is not named: {out}"
    );
    let changed = super::support::diff(&before, &super::support::snapshot(env.tmp.path()));
    assert!(changed.is_empty(), "{changed:?}");
}

#[test]
fn permission_denied_on_versions_fails_clearly() {
    let env = TestEnv::new();
    crate::common::fake_installed(&env.root, "12.4.1", "12.4.1", None);
    let versions = env.root.join("versions");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&versions, std::fs::Permissions::from_mode(0o000)).unwrap();
    for args in [
        &["versions"][..],
        &["install", "12.4.1", "--offline"],
        &["prefix", "12.4.1"],
    ] {
        let o = without_dac_override(bin())
            .env_clear()
            .env("HOME", &env.home)
            .env("CUDAENV_ROOT", &env.root)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&env.home)
            .args(args)
            .output()
            .unwrap();
        let out = text(&o);
        assert!(!o.status.success(), "{args:?}: {out}");
        assert!(out.contains("error:"), "{args:?}: {out}");
        assert!(
            out.contains("ermission denied") && out.contains("versions"),
            "{args:?}: the message does not say what was denied: {out}"
        );
    }
    std::fs::set_permissions(&versions, std::fs::Permissions::from_mode(0o755)).unwrap();
}
