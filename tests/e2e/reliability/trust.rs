//! Secrets and trust: credentials masked in text that is not a URL, the
//! system root's check of what does not exist yet, file names from an index,
//! and paths no output format can carry.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use super::loopback::{Index, Wheel};
use super::support::{diff, is_root, snapshot};
use crate::common::{TestEnv, bin, fake_installed, text};
use crate::pypi::{ONLY_CUDART, good_wheel, wheel_name};

const SECRET: &str = "s3cr3tT0ken";

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Defect: an index URL with a typo (a port out of range, an unclosed IPv6
/// bracket, an unknown scheme, no scheme at all) was printed whole, token
/// included, in warnings and in `invalid CUDAENV_PYPI_INDEX=…`. Wherever it
/// is given (the variable, pip's, the configuration file), every message
/// masks it.
#[test]
fn credentials_are_masked_in_urls_that_do_not_parse() {
    let typos = [
        format!("http://me:{SECRET}@127.0.0.1:99999/simple"),
        format!("http://me:{SECRET}@[::1/simple"),
        format!("htps://me:{SECRET}@pypi.example/simple"),
        format!("https://{SECRET}@host name/simple"),
        format!("me:{SECRET}@pypi.example/simple"),
    ];
    let mut shown = String::new();
    for url in &typos {
        for how in ["CUDAENV_PYPI_INDEX", "PIP_INDEX_URL", "config.toml"] {
            let env = TestEnv::new();
            let mut c = env.cmd();
            match how {
                "config.toml" => {
                    std::fs::create_dir_all(&env.root).unwrap();
                    std::fs::write(
                        env.root.join("config.toml"),
                        format!("pypi-index = {url:?}\n"),
                    )
                    .unwrap();
                }
                var => {
                    c.env(var, url);
                }
            }
            for args in [
                &["install", "12.4.1", ONLY_CUDART, "--dry-run"][..],
                &["ls-remote", "12.4", "--offline"],
                &["doctor", "--json"],
            ] {
                let o = c.args(args).output().unwrap();
                let all = text(&o);
                assert!(
                    !all.contains(SECRET),
                    "{how}={url} `{}` printed the secret:\n{all}",
                    args.join(" ")
                );
                if args[0] == "install" {
                    shown.push_str(&format!(
                        "$ {how}={} cudaenv install …\nexit {:?}\n{}\n",
                        url.replace(SECRET, "[SECRET]"),
                        o.status.code(),
                        String::from_utf8_lossy(&o.stderr)
                            .replace(&env.tmp.path().display().to_string(), "[TMP]")
                    ));
                }
                c = env.cmd();
                if how != "config.toml" {
                    c.env(how, url);
                }
            }
            let mut leaked = Vec::new();
            for f in walk(&env.tmp.path().to_path_buf()) {
                if f.file_name().is_some_and(|n| n == "config.toml") {
                    continue;
                }
                if std::fs::read(&f).is_ok_and(|b| String::from_utf8_lossy(&b).contains(SECRET)) {
                    leaked.push(f);
                }
            }
            assert!(leaked.is_empty(), "{how}={url}: written to {leaked:?}");
        }
    }
    insta::assert_snapshot!("credentials_in_urls_that_do_not_parse", shown);
}

fn walk(dir: &std::path::PathBuf) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => out.extend(walk(&p)),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

/// A system root with 12.4.1, reachable by others; `cudaenv ARGS` run as
/// `nobody` with it as the system root.
struct SystemRoot {
    _tmp: tempfile::TempDir,
    base: std::path::PathBuf,
    sys: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl SystemRoot {
    fn new() -> SystemRoot {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        chmod(&base, 0o755);
        let sys = base.join("sys");
        fake_installed(&sys, "12.4.1", "12.4.1", None);
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        chmod(&home, 0o777);
        SystemRoot {
            _tmp: tmp,
            base,
            sys,
            home,
        }
    }

    fn meta(&self) -> std::path::PathBuf {
        self.sys.join("versions/12.4.1/.cudaenv/meta.toml")
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin())
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("CUDAENV_ROOT", self.home.join(".cudaenv"))
            .env("CUDAENV_SYSTEM_ROOT", &self.sys)
            .env("PATH", "/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&self.home);
        c.output().unwrap()
    }
}

/// Defect: a directory in a system version's metadata that does not exist
/// (under a directory anyone can write), or a dangling link into a sticky
/// directory, was skipped by the trust check, so activation put on
/// LD_LIBRARY_PATH a place any user could create later and plant a library
/// in. The nearest existing ancestor of what is missing, and the owner of
/// everything on the way, are checked too: exit 8, naming the path.
#[test]
#[cfg_attr(
    cudaenv_not_root,
    ignore = "needs root: the check is about other users (it runs cudaenv as nobody)"
)]
fn the_system_roots_trust_check_covers_what_does_not_exist_yet() {
    assert!(is_root());
    let mut failures = Vec::new();
    let mut shown = String::new();
    type Setup = fn(&SystemRoot) -> std::path::PathBuf;
    let cases: [(&str, Setup, bool); 5] = [
        (
            "a missing library directory under a world-writable directory",
            |s| {
                let open = s.base.join("open");
                std::fs::create_dir_all(&open).unwrap();
                chmod(&open, 0o777);
                let meta = std::fs::read_to_string(s.meta()).unwrap().replace(
                    "lib_dirs = [\"lib64\"]",
                    &format!("lib_dirs = [\"lib64\", \"{}/lib\"]", open.display()),
                );
                std::fs::write(s.meta(), meta).unwrap();
                open
            },
            false,
        ),
        (
            "a dangling link into a sticky world-writable directory",
            |s| {
                let tmp = s.base.join("tmp");
                std::fs::create_dir_all(&tmp).unwrap();
                chmod(&tmp, 0o1777);
                let lib = s.sys.join("versions/12.4.1/lib64");
                std::fs::remove_dir_all(&lib).unwrap();
                symlink(tmp.join("planted"), &lib).unwrap();
                tmp
            },
            false,
        ),
        (
            "a missing bin directory in a directory another user owns",
            |s| {
                let theirs = s.base.join("theirs");
                std::fs::create_dir_all(&theirs).unwrap();
                std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).unwrap();
                let meta = std::fs::read_to_string(s.meta()).unwrap().replace(
                    "bin_dirs = [\"bin\"]",
                    &format!("bin_dirs = [\"bin\", \"{}/bin\"]", theirs.display()),
                );
                std::fs::write(s.meta(), meta).unwrap();
                theirs
            },
            false,
        ),
        (
            "a missing directory deeper under a world-writable one",
            |s| {
                let open = s.base.join("open2");
                std::fs::create_dir_all(&open).unwrap();
                chmod(&open, 0o777);
                let meta = std::fs::read_to_string(s.meta()).unwrap().replace(
                    "lib_dirs = [\"lib64\"]",
                    &format!("lib_dirs = [\"lib64\", \"{}/a/b/lib\"]", open.display()),
                );
                std::fs::write(s.meta(), meta).unwrap();
                open
            },
            false,
        ),
        (
            "a missing directory under the administrator's own directory (fine)",
            |s| {
                let meta = std::fs::read_to_string(s.meta()).unwrap().replace(
                    "lib_dirs = [\"lib64\"]",
                    "lib_dirs = [\"lib64\", \"extras/lib\"]",
                );
                std::fs::write(s.meta(), meta).unwrap();
                s.sys.join("versions/12.4.1")
            },
            true,
        ),
    ];
    for (label, setup, safe) in cases {
        let s = SystemRoot::new();
        let culprit = setup(&s);
        for args in [
            &["prefix", "12.4.1"][..],
            &["env", "--shell", "bash", "12.4.1"],
            &["exec", "--version", "12.4.1", "--", "true"],
        ] {
            let o = s.run(args);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            let good = if safe {
                o.status.code() == Some(0)
            } else {
                o.status.code() == Some(8)
                    && o.stdout.is_empty()
                    && err.contains(&culprit.display().to_string())
            };
            if !good {
                failures.push(format!("{label}: {args:?}: {}", text(&o)));
            }
            if args[0] == "prefix" && !safe {
                shown.push_str(&format!(
                    "# {label}\n{}\n",
                    err.replace(&s.base.display().to_string(), "[BASE]")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    insta::assert_snapshot!("system_root_missing_paths", shown);
}

/// Defect: a file name from an index was used as it came when resolving,
/// so `lock` wrote `…whl/../../../x.whl`, which `install --locked` then
/// refused. A name the resolution would take (wheel-shaped) that is not a
/// plain file name fails it, exit 4, naming it; any other is never taken.
/// Either way: no lock, no pin, no download, no version.
#[test]
fn file_names_from_an_index_are_plain_names() {
    let w = wheel_name();
    let names = [
        (format!("{w}/../../../x.whl"), true),
        (format!("{w}\nINJECTED"), false),
        (format!("{}{w}", "a/".repeat(3)), false),
        ("../../../.bashrc".to_string(), false),
        (".hidden.whl".to_string(), false),
        (format!("..\\..\\{w}"), false),
        (format!("{w}\u{0}"), false),
        (
            w.replace(".whl", &format!("{}.whl", "a".repeat(300))),
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (name, taken) in &names {
        let mut wheel = Wheel::new("nvidia-cuda-runtime-cu12", &w, good_wheel());
        wheel.filename = name.clone();
        let idx = Index::start(vec![wheel]);
        let env = TestEnv::new();
        let proj = env.home.join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        for args in [
            &["lock", "12.4.1", ONLY_CUDART, "--source", "pypi"][..],
            &["install", "12.4.1", ONLY_CUDART, "--source", "pypi"],
            &[
                "install",
                "12.4.1",
                ONLY_CUDART,
                "--source",
                "pypi",
                "--dry-run",
            ],
        ] {
            let o = env
                .cmd()
                .current_dir(&proj)
                .env("CUDAENV_PYPI_INDEX", idx.url())
                .args(args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            let good = if *taken {
                o.status.code() == Some(4) && err.contains("not a plain file name")
            } else {
                o.status.code() != Some(0)
            };
            if !good || !o.stdout.is_empty() {
                failures.push(format!("{name:?} {args:?}: {}", text(&o)));
            }
        }
        if idx.downloads() != 0 {
            failures.push(format!("{name:?}: a file was downloaded"));
        }
        if proj.join("cuda.lock").exists() || proj.join(".cuda-version").exists() {
            failures.push(format!("{name:?}: a lock or pin was written"));
        }
        if env.root.join("versions/12.4.1").exists() {
            failures.push(format!("{name:?}: installed"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Defect: a path with a line break went into modulefiles (Lmod cuts
/// LD_LIBRARY_PATH at the newline) and other formats that cannot carry it.
/// Every format that cannot is refused, naming the path, exit 2, nothing
/// written; the shells and `$GITHUB_ENV` (a delimited value) carry it.
#[test]
fn paths_with_line_breaks_are_refused_where_a_format_cannot_carry_them() {
    let env = TestEnv::with_root_name("root\nINJECTED");
    fake_installed(&env.root, "12.4.1", "12.4.1", None);
    let modules = env.path("modules");
    std::fs::create_dir_all(&modules).unwrap();
    let before = snapshot(&modules);
    let mut failures = Vec::new();
    let mut shown = String::new();
    for (args, carries) in [
        (vec!["module", "export", "--format", "lmod"], false),
        (vec!["module", "export", "--format", "tcl"], false),
        (vec!["env", "--format", "dockerfile", "12.4.1"], false),
        (vec!["env", "--format", "github", "12.4.1"], true),
        (vec!["env", "--shell", "bash", "12.4.1"], true),
        (vec!["env", "--shell", "fish", "12.4.1"], true),
    ] {
        let mut c = env.cmd();
        c.args(&args);
        if args[0] == "module" {
            c.arg(&modules);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr)
            .replace(&env.tmp.path().display().to_string(), "[TMP]");
        let good = if carries {
            o.status.code() == Some(0)
        } else {
            o.status.code() == Some(2) && o.stdout.is_empty() && err.contains("line break")
        };
        if !good {
            failures.push(format!("{args:?}: {}", text(&o)));
        }
        if !carries {
            shown.push_str(&format!("$ cudaenv {}\n{err}\n", args.join(" ")));
        }
    }
    assert_eq!(diff(&before, &snapshot(&modules)), Vec::<String>::new());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    insta::assert_snapshot!("line_breaks_in_paths", shown);
}
