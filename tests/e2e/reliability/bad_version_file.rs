//! Hostile `.cuda-version` files (issue §7): a file from a cloned repository
//! is untrusted. Each refused input must give exit code 2 (usage: bad input),
//! an `error:` naming the file, nothing on stdout (so `eval "$(cudaenv env)"`
//! evaluates nothing), no change anywhere under the temporary HOME and root,
//! and no hang (FIFO, /dev/zero, 1 MiB). The tolerated forms (BOM, CRLF,
//! comments, surrounding blanks) must select the pinned version.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use super::support::{diff, fake_version, run_with_deadline, snapshot, without_dac_override};
use crate::common::{TestEnv, bin};

/// How to put the hostile thing at `proj/.cuda-version`.
pub enum Make {
    Bytes(Vec<u8>),
    Fifo,
    SymlinkTo(&'static str),
    Directory,
    Unreadable,
    DanglingSymlink,
    SymlinkLoop,
}

fn bytes(b: &[u8]) -> Make {
    Make::Bytes(b.to_vec())
}

pub fn hostile_cases() -> Vec<(&'static str, Make)> {
    vec![
        ("empty", bytes(b"")),
        ("whitespace only", bytes(b"  \t \n\n   \r\n")),
        ("comments only", bytes(b"# pinned later\n# really\n")),
        ("dot-dot", bytes(b"..\n")),
        ("parent traversal", bytes(b"../../x\n")),
        ("traversal behind a version", bytes(b"12.4/../../../etc\n")),
        ("absolute path", bytes(b"/etc\n")),
        ("tilde path", bytes(b"~/x\n")),
        ("command substitution", bytes(b"$(touch SENTINEL)\n")),
        ("backticks", bytes(b"`touch SENTINEL`\n")),
        ("semicolon chain", bytes(b"12.4;touch SENTINEL\n")),
        ("and chain", bytes(b"12.4 && touch SENTINEL\n")),
        ("pipe", bytes(b"12.4|sh\n")),
        ("variable expansion", bytes(b"${HOME}\n")),
        ("two conflicting lines", bytes(b"12.4\n11.8\n")),
        ("line injection", bytes(b"12.4\nexport PATH=/tmp\n")),
        ("NUL inside", bytes(b"12.4\0\n")),
        ("NUL before", bytes(b"\x0012.4\n")),
        ("one MiB", Make::Bytes(vec![b'1'; 1 << 20])),
        ("just over the cap", Make::Bytes(vec![b'#'; 4097])),
        ("non-UTF-8", bytes(b"12.4\xff\xfe\n")),
        ("UTF-16 with BOM", bytes(b"\xff\xfe1\x002\x00.\x004\x00")),
        ("glob star", bytes(b"12.*\n")),
        ("glob question", bytes(b"12.?\n")),
        ("bare star", bytes(b"*\n")),
        ("brace expansion", bytes(b"{12.4,11.8}\n")),
        ("inner space", bytes(b"12 .4\n")),
        ("leading dash", bytes(b"-12.4\n")),
        ("option-like", bytes(b"--help\n")),
        ("full-width digits", "１２.４\n".as_bytes().to_vec().into()),
        (
            "zero-width space",
            "12.4\u{200b}\n".as_bytes().to_vec().into(),
        ),
        ("escape sequence", bytes(b"\x1b]0;pwned\x07\n")),
        ("cudnn without version", bytes(b"12.4+cudnn\n")),
        ("slash in name", bytes(b"cuda/12.4\n")),
        ("FIFO", Make::Fifo),
        ("symlink to /dev/zero", Make::SymlinkTo("/dev/zero")),
        ("symlink to /dev/urandom", Make::SymlinkTo("/dev/urandom")),
        ("symlink to /etc/passwd", Make::SymlinkTo("/etc/passwd")),
        ("directory of that name", Make::Directory),
        ("unreadable file", Make::Unreadable),
        ("dangling symlink", Make::DanglingSymlink),
        ("symlink loop", Make::SymlinkLoop),
    ]
}

impl From<Vec<u8>> for Make {
    fn from(v: Vec<u8>) -> Make {
        Make::Bytes(v)
    }
}

pub fn make(what: &Make, file: &Path) {
    match what {
        Make::Bytes(b) => std::fs::write(file, b).unwrap(),
        Make::Fifo => {
            let c = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        Make::SymlinkTo(target) => std::os::unix::fs::symlink(target, file).unwrap(),
        Make::Directory => std::fs::create_dir(file).unwrap(),
        Make::Unreadable => {
            std::fs::write(file, "12.4\n").unwrap();
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        Make::DanglingSymlink => std::os::unix::fs::symlink("nowhere/at/all", file).unwrap(),
        Make::SymlinkLoop => std::os::unix::fs::symlink(".cuda-version", file).unwrap(),
    }
}

/// The commands that read the pin: each must refuse the same way.
const COMMANDS: [&[&str]; 5] = [
    &["version"],
    &["version", "--json"],
    &["env", "--shell", "bash"],
    &["prefix"],
    &["exec", "--", "sh", "-c", "touch EXEC_RAN"],
];

#[test]
fn hostile_version_files_are_refused_naming_the_file_and_change_nothing() {
    let cases = hostile_cases();
    assert!(cases.len() >= 24, "issue §7 asks for at least 24 inputs");
    let mut failures = Vec::new();
    for (label, what) in &cases {
        let env = TestEnv::new();
        fake_version(&env.root, "12.4.1", "12.4.1");
        let proj = env.home.join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        let file = proj.join(".cuda-version");
        make(what, &file);
        let before = snapshot(env.tmp.path());
        for args in COMMANDS {
            // `unreadable` only means something without root's override.
            let mut cmd = match what {
                Make::Unreadable => without_dac_override(bin()),
                _ => std::process::Command::new(bin()),
            };
            cmd.env_clear()
                .env("HOME", &env.home)
                .env("CUDAENV_ROOT", &env.root)
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("NO_COLOR", "1")
                .current_dir(&proj)
                .args(args);
            let out = run_with_deadline(&mut cmd, Duration::from_secs(20));
            let stderr = String::from_utf8_lossy(&out.stderr);
            let problems: Vec<&str> = [
                (out.status.code() != Some(2), "exit code is not 2"),
                (!out.stdout.is_empty(), "printed something on stdout"),
                (
                    !stderr.contains(&*file.to_string_lossy()),
                    "the message does not name the file",
                ),
                (!stderr.starts_with("error:"), "no `error:` line"),
            ]
            .into_iter()
            .filter_map(|(bad, why)| bad.then_some(why))
            .collect();
            if !problems.is_empty() {
                failures.push(format!(
                    "{label} / {args:?}: {problems:?}; exit {:?}; stdout {:?}; stderr {stderr:?}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
            // The file's content must never reach the terminal raw: no ESC.
            if stderr.contains('\x1b') {
                failures.push(format!("{label} / {args:?}: raw escape in stderr"));
            }
        }
        let changed = diff(&before, &snapshot(env.tmp.path()));
        if !changed.is_empty() {
            failures.push(format!("{label}: the tree changed: {changed:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tolerated_forms_select_the_pinned_version() {
    let cases: [(&str, &[u8]); 8] = [
        ("plain", b"12.4\n"),
        ("no newline", b"12.4"),
        ("BOM", b"\xef\xbb\xbf12.4\n"),
        ("CRLF", b"12.4\r\n"),
        ("BOM and CRLF", b"\xef\xbb\xbf12.4\r\n"),
        ("surrounding blanks", b"  \t12.4 \t\n"),
        ("comments and blank lines", b"# for tf\n\n12.4\n# end\n"),
        ("CRLF comments", b"# c\r\n\r\n12.4\r\n"),
    ];
    let env = TestEnv::new();
    fake_version(&env.root, "12.4.1", "12.4.1");
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    for (label, content) in cases {
        std::fs::write(proj.join(".cuda-version"), content).unwrap();
        let before = snapshot(env.tmp.path());
        let out = env
            .cmd()
            .current_dir(&proj)
            .args(["version", "--bare"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{label}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "12.4.1",
            "{label}"
        );
        assert!(
            diff(&before, &snapshot(env.tmp.path())).is_empty(),
            "{label}"
        );
    }
}

/// A broken pin in a subdirectory is an error, never silently replaced by a
/// valid pin further up (pyenv's CVE-2022-35861 class: the nearest file wins).
#[test]
fn broken_nearer_pin_is_not_skipped_for_a_parent_pin() {
    let env = TestEnv::new();
    fake_version(&env.root, "12.4.1", "12.4.1");
    let outer = env.home.join("outer");
    let inner = outer.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(outer.join(".cuda-version"), "12.4\n").unwrap();
    std::fs::write(inner.join(".cuda-version"), "../../../12.4\n").unwrap();
    let out = env
        .cmd()
        .current_dir(&inner)
        .args(["version", "--bare"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inner/.cuda-version"));
}
