//! Hostile `.tool-versions` files: asdf's and mise's per-project file arrives
//! from cloned repositories as `.cuda-version` does, and its `cuda` line is a
//! pin. A broken `cuda` line, or a file cudaenv cannot read as a small regular
//! UTF-8 file, must give exit code 2, an `error:` naming the file, nothing on
//! stdout, no change on disk and no hang. Lines of other tools are never
//! parsed, and a file without a `cuda` line pins nothing, so the search goes
//! on upwards. In one directory `.cuda-version` comes first.

use std::path::Path;
use std::time::Duration;

use super::bad_version_file::{Make, make};
use super::support::{diff, fake_version, run_with_deadline, snapshot, without_dac_override};
use crate::common::{TestEnv, bin};

fn bytes(b: &[u8]) -> Make {
    Make::Bytes(b.to_vec())
}

pub fn hostile_cases() -> Vec<(&'static str, Make)> {
    vec![
        ("cuda without version", bytes(b"python 3.11.9\ncuda\n")),
        ("cuda with only a comment", bytes(b"cuda # later\n")),
        (
            "two cuda lines",
            bytes(b"cuda 12.4\nnodejs 20\ncuda 11.8\n"),
        ),
        ("parent traversal", bytes(b"cuda ../../x\n")),
        ("absolute path", bytes(b"cuda /etc\n")),
        ("asdf path: version", bytes(b"cuda path:/opt/cuda\n")),
        ("asdf ref: version", bytes(b"cuda ref:v12.4\n")),
        ("command substitution", bytes(b"cuda $(touch SENTINEL)\n")),
        ("backticks", bytes(b"cuda `touch SENTINEL`\n")),
        ("semicolon chain", bytes(b"cuda 12.4;touch SENTINEL\n")),
        ("variable expansion", bytes(b"cuda ${HOME}\n")),
        ("glob", bytes(b"cuda 12.*\n")),
        ("NUL in the cuda line", bytes(b"cuda 12.4\0\n")),
        ("escape sequence", bytes(b"cuda \x1b]0;pwned\x07\n")),
        ("non-UTF-8", bytes(b"python 3.11\ncuda 12.4\xff\n")),
        ("UTF-16 with BOM", bytes(b"\xff\xfec\x00u\x00d\x00a\x00")),
        (
            "over the cap",
            Make::Bytes([b"cuda 12.4\n#".as_slice(), &[b'x'; 70_000]].concat()),
        ),
        ("FIFO", Make::Fifo),
        ("symlink to /dev/zero", Make::SymlinkTo("/dev/zero")),
        ("directory of that name", Make::Directory),
        ("unreadable file", Make::Unreadable),
        ("dangling symlink", Make::DanglingSymlink),
        ("symlink loop", Make::SymlinkTo(".tool-versions")),
    ]
}

/// The commands that read the pin: each must refuse the same way.
const COMMANDS: [&[&str]; 4] = [
    &["version", "--json"],
    &["env", "--shell", "bash"],
    &["prefix"],
    &["exec", "--", "sh", "-c", "touch EXEC_RAN"],
];

#[test]
fn hostile_tool_versions_are_refused_naming_the_file_and_change_nothing() {
    let mut failures = Vec::new();
    for (label, what) in &hostile_cases() {
        let env = TestEnv::new();
        fake_version(&env.root, "12.4.1", "12.4.1");
        let proj = env.home.join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        // A valid pin further up must not stand in for the broken one.
        std::fs::write(env.home.join(".cuda-version"), "12.4\n").unwrap();
        let file = proj.join(".tool-versions");
        make(what, &file);
        let before = snapshot(env.tmp.path());
        for args in COMMANDS {
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
                (stderr.contains('\x1b'), "raw escape in stderr"),
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
        }
        let changed = diff(&before, &snapshot(env.tmp.path()));
        if !changed.is_empty() {
            failures.push(format!("{label}: the tree changed: {changed:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn version_bare(env: &TestEnv, dir: &Path) -> (Option<i32>, String, String) {
    let out = env
        .cmd()
        .current_dir(dir)
        .args(["version", "--json"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn asdf_forms_select_the_cuda_line() {
    let cases: [(&str, &[u8]); 7] = [
        ("only cuda", b"cuda 12.4\n"),
        ("no newline", b"cuda 12.4"),
        (
            "among other tools",
            b"python 3.11.9\ncuda 12.4\nnodejs 20.1.0\n",
        ),
        ("fallback versions", b"cuda 12.4 11.8 system\n"),
        (
            "comments and tabs",
            b"# toolchain\n\tcuda\t12.4   # for torch\n",
        ),
        ("BOM and CRLF", b"\xef\xbb\xbfpython 3.12\r\ncuda 12.4\r\n"),
        (
            "other tools' lines are not parsed",
            b"nodejs \xe2\x80\x8b$(id) `x`\ncuda 12.4\n",
        ),
    ];
    let env = TestEnv::new();
    fake_version(&env.root, "12.4.1", "12.4.1");
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let file = proj.join(".tool-versions");
    for (label, content) in cases {
        std::fs::write(&file, content).unwrap();
        let before = snapshot(env.tmp.path());
        let (code, out, err) = version_bare(&env, &proj);
        assert_eq!(code, Some(0), "{label}: {err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(json["name"], "12.4.1", "{label}");
        assert_eq!(json["spec"], "12.4", "{label}");
        assert_eq!(json["origin_kind"], "local", "{label}");
        assert_eq!(json["origin_path"], file.to_str().unwrap(), "{label}");
        assert!(
            diff(&before, &snapshot(env.tmp.path())).is_empty(),
            "{label}"
        );
    }
}

/// The documented order (docs/versions.md): the nearest directory with a pin
/// wins; in one directory `.cuda-version` before `.tool-versions`; a
/// `.tool-versions` without a `cuda` line pins nothing.
#[test]
fn tool_versions_take_their_place_in_the_search() {
    let env = TestEnv::new();
    fake_version(&env.root, "12.4.1", "12.4.1");
    fake_version(&env.root, "11.8.0", "11.8.0");
    let outer = env.home.join("outer");
    let inner = outer.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    let name = |dir: &Path| {
        let (code, out, err) = version_bare(&env, dir);
        assert_eq!(code, Some(0), "{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        (
            json["name"].as_str().unwrap().to_owned(),
            json["origin_path"].as_str().unwrap_or("").to_owned(),
        )
    };
    let at = |dir: &Path, f: &str| dir.join(f).to_str().unwrap().to_owned();

    std::fs::write(outer.join(".cuda-version"), "11.8\n").unwrap();
    std::fs::write(inner.join(".tool-versions"), "python 3.11\n").unwrap();
    assert_eq!(
        name(&inner),
        ("11.8.0".into(), at(&outer, ".cuda-version")),
        "no cuda line: the parent's pin"
    );

    std::fs::write(inner.join(".tool-versions"), "python 3.11\ncuda 12.4\n").unwrap();
    assert_eq!(
        name(&inner),
        ("12.4.1".into(), at(&inner, ".tool-versions")),
        "the nearer directory wins"
    );

    std::fs::write(inner.join(".cuda-version"), "11.8\n").unwrap();
    assert_eq!(
        name(&inner),
        ("11.8.0".into(), at(&inner, ".cuda-version")),
        ".cuda-version first in one directory"
    );

    // `cudaenv local` shows the pin in effect, wherever it comes from.
    std::fs::remove_file(inner.join(".cuda-version")).unwrap();
    let out = env.run_in(&inner, &["local"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "12.4");
}
