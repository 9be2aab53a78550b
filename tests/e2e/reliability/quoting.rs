//! Awkward CUDAENV_ROOT and HOME paths turned into shell code (issue §8).
//!
//! For every path and every shell, the activation code that `cudaenv env`
//! prints is evaluated by the real shell, which then `exec`s `env -0` so the
//! test sees exactly what a child process would inherit. The sentinel that
//! the hostile names try to create must never exist, and the first PATH and
//! LD_LIBRARY_PATH entries must be exactly the version's directories, byte
//! for byte. A path with `:` cannot be represented in those lists: it must be
//! refused with a clear message, exit code 2, and no code on stdout.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::support::{fake_version, parse_env0, run_with_deadline};
use crate::common::bin;

/// Path components, each used as a directory name in the root or home path.
fn awkward_names() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("space", b"with space".to_vec()),
        ("single quote", b"it's".to_vec()),
        ("double quote", b"say \"hi\"".to_vec()),
        ("command substitution", b"$(touch SENTINEL)".to_vec()),
        ("backtick", b"`touch SENTINEL`".to_vec()),
        ("semicolon", b"a;touch SENTINEL;b".to_vec()),
        ("quote breakout", b"'; touch SENTINEL; '".to_vec()),
        ("backslash", b"back\\slash\\".to_vec()),
        ("newline", b"new\nline; touch SENTINEL".to_vec()),
        ("glob", b"star*?[a]".to_vec()),
        ("leading dash", b"-n -e".to_vec()),
        ("non-ASCII", "ünïcødé ✓ 中文".as_bytes().to_vec()),
        ("dollar variable", b"$HOME${PATH}".to_vec()),
        ("tab", b"tab\there".to_vec()),
        ("braces and bang", b"{a,b}!!%s".to_vec()),
        ("fish specials", b"(touch SENTINEL)&|<>#".to_vec()),
        ("colon", b"a:b".to_vec()),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Sh {
    Bash,
    Zsh,
    Fish,
}

impl Sh {
    const ALL: [Sh; 3] = [Sh::Bash, Sh::Zsh, Sh::Fish];

    fn name(self) -> &'static str {
        match self {
            Sh::Bash => "bash",
            Sh::Zsh => "zsh",
            Sh::Fish => "fish",
        }
    }

    /// Evaluates the file of code `code`, then replaces itself with `env -0`.
    fn eval_then_env(self, code: &Path) -> Command {
        let mut c;
        match self {
            Sh::Bash => {
                c = Command::new("bash");
                c.args(["--norc", "--noprofile", "-c"])
                    .arg(r#"eval "$(cat "$1")" && exec /usr/bin/env -0"#)
                    .arg("bash");
            }
            Sh::Zsh => {
                c = Command::new("zsh");
                c.args(["-f", "-c"])
                    .arg(r#"eval "$(<$1)" && exec /usr/bin/env -0"#)
                    .arg("zsh");
            }
            Sh::Fish => {
                c = Command::new("fish");
                c.args(["--no-config", "-c"])
                    .arg("source $argv[1]; and exec /usr/bin/env -0");
            }
        }
        c.arg(code);
        c
    }
}

/// Where the battery looks for the sentinel any injection would create.
fn sentinel_anywhere(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == "SENTINEL" {
            return Some(p);
        }
        if e.file_type().is_ok_and(|t| t.is_dir())
            && let Some(found) = sentinel_anywhere(&p)
        {
            return Some(found);
        }
    }
    None
}

fn first_entry(v: Option<&OsString>) -> Option<&OsStr> {
    v.map(|v| OsStr::from_bytes(v.as_bytes().split(|&b| b == b':').next().unwrap()))
}

/// How the awkward path reaches cudaenv.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// `CUDAENV_ROOT=<tmp>/<name>/root`.
    Root,
    /// `HOME=<tmp>/<name>/home`, root defaulting to `$HOME/.cudaenv`.
    Home,
}

#[test]
fn awkward_root_and_home_paths_are_data_in_bash_zsh_and_fish() {
    let names = awkward_names();
    assert!(names.len() >= 12, "issue §8 asks for at least 12 paths");
    let tmp = tempfile::tempdir().unwrap();
    // Shells run here, so a relative `touch SENTINEL` would land here.
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (label, name) in &names {
        for via in [Via::Root, Via::Home] {
            let base = tmp
                .path()
                .join(format!("{label}-{via:?}").replace(' ', "_"))
                .join(OsStr::from_bytes(name));
            let home = match via {
                Via::Root => tmp.path().join("plainhome"),
                Via::Home => base.join("home"),
            };
            let root = match via {
                Via::Root => base.join("root"),
                Via::Home => home.join(".cudaenv"),
            };
            std::fs::create_dir_all(&home).unwrap();
            let version = fake_version(&root, "12.4.1", "12.4.1");
            let has_colon = name.contains(&b':');
            for sh in Sh::ALL {
                let mut cmd = Command::new(bin());
                cmd.env_clear()
                    .env("HOME", &home)
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("LD_LIBRARY_PATH", "/opt/user/lib")
                    .env("NO_COLOR", "1")
                    .current_dir(&work)
                    .args(["env", "--shell", sh.name(), "12.4.1"]);
                if let Via::Root = via {
                    cmd.env("CUDAENV_ROOT", &root);
                }
                let out = run_with_deadline(&mut cmd, Duration::from_secs(20));
                let stderr = String::from_utf8_lossy(&out.stderr);
                let ctx = format!("{label} via {via:?} in {}", sh.name());
                if has_colon {
                    if out.status.code() != Some(2)
                        || !out.stdout.is_empty()
                        || !stderr.contains('`')
                        || !stderr.contains("PATH")
                    {
                        failures.push(format!(
                            "{ctx}: a `:` path must be refused (exit 2, no code, a message naming PATH); \
                             got exit {:?}, stdout {:?}, stderr {stderr:?}",
                            out.status.code(),
                            String::from_utf8_lossy(&out.stdout)
                        ));
                    }
                    checked += 1;
                    continue;
                }
                if !out.status.success() {
                    failures.push(format!("{ctx}: cudaenv env failed: {stderr}"));
                    continue;
                }
                let code = work.join(format!("code.{}", sh.name()));
                std::fs::write(&code, &out.stdout).unwrap();
                let mut shell = sh.eval_then_env(&code);
                shell
                    .env_clear()
                    .env("HOME", &home)
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("LD_LIBRARY_PATH", "/opt/user/lib")
                    .current_dir(&work);
                let got = run_with_deadline(&mut shell, Duration::from_secs(20));
                let shell_err = String::from_utf8_lossy(&got.stderr);
                if !got.status.success() || !shell_err.is_empty() {
                    failures.push(format!(
                        "{ctx}: the shell failed ({:?}): {shell_err}\ncode: {}",
                        got.status.code(),
                        String::from_utf8_lossy(&out.stdout)
                    ));
                    continue;
                }
                let vars = parse_env0(&got.stdout);
                let want_bin = version.join("bin").into_os_string();
                let want_lib = version.join("lib64").into_os_string();
                let path = vars.get(OsStr::new("PATH"));
                let ld = vars.get(OsStr::new("LD_LIBRARY_PATH"));
                if first_entry(path) != Some(&want_bin) {
                    failures.push(format!("{ctx}: PATH is {path:?}, want {want_bin:?} first"));
                }
                if first_entry(ld) != Some(&want_lib) {
                    failures.push(format!(
                        "{ctx}: LD_LIBRARY_PATH is {ld:?}, want {want_lib:?} first"
                    ));
                }
                // What the user had survives, after the version's entries.
                let expect_ld = {
                    let mut v = want_lib.clone().into_vec();
                    v.extend_from_slice(b":/opt/user/lib");
                    OsString::from_vec(v)
                };
                if ld != Some(&expect_ld) {
                    failures.push(format!(
                        "{ctx}: LD_LIBRARY_PATH is {ld:?}, want {expect_ld:?}"
                    ));
                }
                checked += 1;
            }
        }
    }
    if let Some(s) = sentinel_anywhere(tmp.path()) {
        failures.push(format!("an injection ran: {} exists", s.display()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, names.len() * 2 * Sh::ALL.len());
}
