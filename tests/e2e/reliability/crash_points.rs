//! §3 crash consistency at named points: `CUDAENV_CRASH_AT=<point>` makes the
//! installer SIGKILL itself at exactly one moment (see `src/failpoint.rs`).
//! For each point the test proves the crash happened there (killed by
//! SIGKILL, and the leftovers that point must leave are on disk), then that
//! nothing partial is listed, every listed version is whole, and a plain
//! re-run installs a tree whose shims work.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::zipbuild::{self, Member};
use crate::common::{TestEnv, assert_success};
use crate::pypi::{Mode, ONLY_CUDART, Server, sha256, versions};

const TOOLS: [&str; 2] = ["crash-tool-a", "crash-tool-b"];

fn lib_bytes() -> Vec<u8> {
    (0..200_000u32).map(|i| (i * 13 % 251) as u8).collect()
}

fn tool_script(name: &str) -> String {
    format!("#!/bin/sh\necho {name}-ran\n")
}

/// A runtime wheel with two executables, so that rehash has more than one
/// shim to write and `mid-rehash` falls between them.
fn wheel() -> Vec<u8> {
    let mut m: Vec<Member> = vec![
        zipbuild::file("nvidia/__init__.py", b""),
        zipbuild::file("nvidia/cuda_runtime/lib/libcudart.so.12", &lib_bytes()),
        zipbuild::file(
            "nvidia/cuda_runtime/include/cuda_runtime_api.h",
            b"/* api */\n",
        ),
    ];
    for t in TOOLS {
        m.push(Member {
            mode: 0o100755,
            ..zipbuild::file(
                &format!("nvidia/cuda_runtime/bin/{t}"),
                tool_script(t).as_bytes(),
            )
        });
    }
    m.push(zipbuild::file(
        "nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD",
        b"",
    ));
    zipbuild::build(&m, b"")
}

fn install(env: &TestEnv, srv: &Server, crash_at: Option<&str>) -> std::process::Output {
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", "12.4.1", ONLY_CUDART]);
    if let Some(p) = crash_at {
        c.env("CUDAENV_CRASH_AT", p);
    }
    c.output().unwrap()
}

/// `versions --check`: every listed version matches its recorded file list.
pub(crate) fn assert_versions_check(env: &TestEnv, what: &str) {
    let out = env.run(&["versions", "--check"]);
    assert_success(&out, &format!("{what}: versions --check"));
}

/// The version's tree holds exactly the wheel's bytes, with its marker.
fn assert_whole(dir: &Path, what: &str) {
    assert!(dir.join(".cudaenv/complete").is_file(), "{what}: no marker");
    assert_eq!(
        std::fs::read(dir.join("lib64/libcudart.so.12")).ok(),
        Some(lib_bytes()),
        "{what}: libcudart differs"
    );
    assert_eq!(
        std::fs::read(dir.join("include/cuda_runtime_api.h")).ok(),
        Some(b"/* api */\n".to_vec()),
        "{what}: header differs"
    );
    for t in TOOLS {
        let p = dir.join("bin").join(t);
        assert_eq!(
            std::fs::read(&p).ok(),
            Some(tool_script(t).into_bytes()),
            "{what}: {t} differs"
        );
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{what}: {t} not executable");
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn crash_and_recover(point: &str) {
    let env = TestEnv::new();
    let body = wheel();
    let srv = Server::start(body.clone(), sha256(&body), Mode::Normal);
    let out = install(&env, &srv, Some(point));
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "{point}: not killed by SIGKILL: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    // What the point must have left behind: proves the crash happened there.
    let staging = env.root.join("versions/.staging");
    let pkgs = env.root.join("cache/pkgs");
    let shims = entries(&env.root.join("shims"));
    let listed = versions(&env);
    match point {
        "after-download" => {
            assert!(
                !entries(&env.root.join("cache")).is_empty(),
                "{point}: nothing downloaded"
            );
            assert!(
                entries(&pkgs)
                    .iter()
                    .all(|n| n.starts_with('.') || n.ends_with(".lock")),
                "{point}: a package was unpacked: {:?}",
                entries(&pkgs)
            );
        }
        "mid-extract" => {
            let tmp: Vec<_> = entries(&pkgs)
                .into_iter()
                .filter(|n| n.starts_with(".tmp-"))
                .collect();
            assert_eq!(
                tmp.len(),
                1,
                "{point}: no half-unpacked package: {:?}",
                entries(&pkgs)
            );
        }
        "before-commit" => {
            // A staging tree that looks finished, marker included, must
            // still not count.
            let left = entries(&staging);
            assert_eq!(left.len(), 1, "{point}: staging {left:?}");
            let marker = staging.join(&left[0]).join(".cudaenv/complete");
            assert!(marker.is_file(), "{point}: marker not written yet");
        }
        "after-commit" => {
            assert!(
                TOOLS.iter().all(|t| !shims.contains(&t.to_string())),
                "{point}: shims written: {shims:?}"
            );
        }
        "mid-rehash" => {
            let made = TOOLS
                .iter()
                .filter(|t| shims.contains(&t.to_string()))
                .count();
            assert_eq!(made, 1, "{point}: shims {shims:?}");
        }
        _ => unreachable!(),
    }

    // No partial version is listed; a listed one is whole.
    match point {
        "after-commit" | "mid-rehash" => {
            assert_eq!(listed.trim(), "12.4.1", "{point}");
            assert_whole(&env.root.join("versions/12.4.1"), point);
        }
        _ => {
            assert_eq!(listed.trim(), "", "{point}: partial version listed");
            assert!(!env.root.join("versions/12.4.1").exists(), "{point}");
        }
    }

    assert_versions_check(&env, point);

    // A plain re-run repairs everything.
    let again = install(&env, &srv, None);
    assert_success(&again, &format!("re-install after {point}"));
    assert_eq!(versions(&env).trim(), "12.4.1", "{point}");
    assert_whole(&env.root.join("versions/12.4.1"), point);
    assert_versions_check(&env, point);
    assert!(
        entries(&staging).is_empty(),
        "{point}: staging left after re-install: {:?}",
        entries(&staging)
    );
    assert!(
        !entries(&pkgs).iter().any(|n| n.starts_with(".tmp-")),
        "{point}: half-unpacked package left: {:?}",
        entries(&pkgs)
    );
    for t in TOOLS {
        let shim = env.root.join("shims").join(t);
        let run = std::process::Command::new(&shim)
            .env("HOME", &env.home)
            .env("CUDAENV_ROOT", &env.root)
            .env("CUDAENV_VERSION", "12.4.1")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert_success(&run, &format!("{point}: shim {t}"));
        assert_eq!(
            String::from_utf8_lossy(&run.stdout).trim(),
            format!("{t}-ran"),
            "{point}: shim {t}"
        );
    }
}

#[test]
fn crash_after_download() {
    crash_and_recover("after-download");
}

#[test]
fn crash_mid_extract() {
    crash_and_recover("mid-extract");
}

#[test]
fn crash_before_commit() {
    crash_and_recover("before-commit");
}

#[test]
fn crash_after_commit() {
    crash_and_recover("after-commit");
}

#[test]
fn crash_mid_rehash() {
    crash_and_recover("mid-rehash");
}

#[test]
fn an_unknown_crash_point_is_refused() {
    let env = TestEnv::new();
    let body = wheel();
    let srv = Server::start(body.clone(), sha256(&body), Mode::Normal);
    let out = install(&env, &srv, Some("mid-extrat"));
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "{:?}",
        out.status
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mid-extract"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(versions(&env).trim(), "");
}

/// The recorded file list catches a changed byte, a changed size, a removed
/// file and an added one, naming each path, and exits 4.
#[test]
fn versions_check_detects_tampering() {
    let env = TestEnv::new();
    let body = wheel();
    let srv = Server::start(body.clone(), sha256(&body), Mode::Normal);
    assert_success(&install(&env, &srv, None), "install");
    assert_versions_check(&env, "fresh install");
    let ok = env.run(&["versions", "--check"]);
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "12.4.1 ok\n");

    let dir = env.root.join("versions/12.4.1");
    // The tree's files are hard links into the package store: write a new
    // file in place of one rather than through it.
    let lib = dir.join("lib64/libcudart.so.12");
    let mut bytes = std::fs::read(&lib).unwrap();
    bytes[1000] ^= 1;
    std::fs::remove_file(&lib).unwrap();
    std::fs::write(&lib, &bytes).unwrap();
    let hdr = dir.join("include/cuda_runtime_api.h");
    std::fs::remove_file(&hdr).unwrap();
    std::fs::write(&hdr, b"/* api */\n/* more */\n").unwrap();
    std::fs::remove_file(dir.join(format!("bin/{}", TOOLS[0]))).unwrap();
    std::fs::write(dir.join("bin/intruder"), b"").unwrap();

    let out = env.run(&["versions", "--check"]);
    assert_eq!(out.status.code(), Some(4), "{:?}", out.status);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("12.4.1 FAILED\n"), "{text}");
    for needle in [
        "lib64/libcudart.so.12: content changed",
        "include/cuda_runtime_api.h: size 21, recorded 10",
        &format!("bin/{}: missing", TOOLS[0]),
        "bin/intruder: not in the recorded list",
    ] {
        assert!(text.contains(needle), "{needle} not in {text}");
    }
}
