//! Bounds on everything read or written: no reader hangs on a FIFO or reads
//! a device, no download is unbounded or starts without the space for it,
//! and no write under a directory cudaenv was given leaves it.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::loopback::{Body, Index, Wheel};
use super::support::{diff, snapshot};
use crate::common::{TestEnv, bin, text};
use crate::pypi::{ONLY_CUDART, good_wheel, wheel_name};

const DEADLINE: Duration = Duration::from_secs(20);

fn mkfifo(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// How a hostile file is made.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    Fifo,
    DevZero,
}

fn make(h: Hostile, p: &Path) {
    let _ = std::fs::remove_file(p);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    match h {
        Hostile::Fifo => mkfifo(p),
        Hostile::DevZero => symlink("/dev/zero", p).unwrap(),
    }
}

fn cudart_index() -> Index {
    Index::start(vec![Wheel::new(
        "nvidia-cuda-runtime-cu12",
        &wheel_name(),
        good_wheel(),
    )])
}

/// `cudaenv mirror DIR 12.4.1` from the loopback index: a mirror to spoil.
fn mirror(env: &TestEnv, idx: &Index, dir: &Path) {
    let o = env
        .cmd()
        .env("CUDAENV_PYPI_INDEX", idx.url())
        .arg("mirror")
        .arg(dir)
        .args(["12.4.1", ONLY_CUDART])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

fn file_index(dir: &Path) -> String {
    format!("file://{}/pypi/simple", dir.display())
}

/// One reader of untrusted files, spoiled.
struct Reader {
    what: &'static str,
    /// Prepares the environment and returns the file to spoil and the command.
    setup: fn(&TestEnv) -> (PathBuf, Command),
    /// The exit code expected once the file is refused (`None`: the command
    /// goes on without the file, with a note naming it).
    code: Option<i32>,
    /// Whether the output names the file.
    named: bool,
}

/// Runs `cmd`, killing it after `limit`: `Err` says it hung (the battery
/// goes on to the next case and reports them all).
fn run_bounded(cmd: &mut Command, limit: Duration) -> Result<std::process::Output, String> {
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Ok(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    Err(format!(
        "did not finish within {limit:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn readers() -> Vec<Reader> {
    vec![
        Reader {
            what: "a mirror's record",
            setup: |env| {
                let dir = env.path("m");
                std::fs::create_dir_all(&dir).unwrap();
                // The index lives as long as the test process: a thread each.
                let idx = Box::leak(Box::new(cudart_index()));
                let mut c = env.cmd();
                c.env("CUDAENV_PYPI_INDEX", idx.url())
                    .arg("mirror")
                    .arg(&dir)
                    .args(["12.4.1", ONLY_CUDART]);
                (dir.join("mirror.json"), c)
            },
            code: Some(4),
            named: true,
        },
        Reader {
            what: "an index page read through file://",
            setup: |env| {
                let dir = env.path("m");
                let page = dir.join("pypi/simple/nvidia-cuda-runtime-cu12/index.html");
                let mut c = env.cmd();
                c.env("CUDAENV_PYPI_INDEX", file_index(&dir)).args([
                    "install",
                    "12.4.1",
                    ONLY_CUDART,
                ]);
                (page, c)
            },
            code: Some(5),
            named: true,
        },
        Reader {
            what: "pip's configuration",
            setup: |env| {
                let conf = env.path("pip.conf");
                let mut c = env.cmd();
                // The index is pip's (no CUDAENV_PYPI_INDEX): the global file
                // names a loopback one (the test process keeps it), the
                // spoiled PIP_CONFIG_FILE is passed over with a warning.
                let idx = Box::leak(Box::new(cudart_index()));
                let xdg = env.path("xdg");
                std::fs::create_dir_all(xdg.join("pip")).unwrap();
                std::fs::write(
                    xdg.join("pip/pip.conf"),
                    format!("[global]\nindex-url = {}\n", idx.url()),
                )
                .unwrap();
                c.env("PIP_CONFIG_FILE", &conf)
                    .env("XDG_CONFIG_DIRS", &xdg)
                    .args(["install", "12.4.1", ONLY_CUDART, "--dry-run"]);
                (conf, c)
            },
            code: Some(0),
            named: true,
        },
        Reader {
            what: "a mirror's record read through a file:// index",
            setup: |env| {
                let dir = env.path("m");
                let idx = Box::leak(Box::new(cudart_index()));
                mirror(env, idx, &dir);
                let site = env.path("site");
                let mut c = env.cmd();
                c.env("CUDAENV_ROOT", &site)
                    .env("CUDAENV_PYPI_INDEX", file_index(&dir))
                    .args(["install", "12.4.1", ONLY_CUDART, "--source", "pypi"]);
                (dir.join("mirror.json"), c)
            },
            code: Some(4),
            named: true,
        },
        Reader {
            what: "cudaenv's configuration",
            setup: |env| {
                let mut c = env.cmd();
                c.args(["versions"]);
                (env.root.join("config.toml"), c)
            },
            code: Some(1),
            named: true,
        },
        Reader {
            what: "an installed version's metadata",
            setup: |env| {
                let v = super::support::fake_version(&env.root, "12.4.1", "12.4.1");
                let mut c = env.cmd();
                c.args(["prefix", "12.4.1"]);
                (v.join(".cudaenv/meta.toml"), c)
            },
            code: Some(1),
            named: true,
        },
        Reader {
            what: "an installed version's file list",
            setup: |env| {
                let v = super::support::fake_version(&env.root, "12.4.1", "12.4.1");
                let mut c = env.cmd();
                c.args(["versions", "--check"]);
                (v.join(".cudaenv/files.json"), c)
            },
            code: Some(4),
            named: true,
        },
        Reader {
            what: "a loader log the traced program replaced",
            setup: |env| {
                // The program plants `$LD_DEBUG_OUTPUT.1` (a pid no process
                // of the tree has) before it exits.
                let marker = env.path("planted");
                let mut c = env.cmd();
                c.args(["trace", "--", "sh", "-c"]).arg(format!(
                    "ln -s \"$(cat {0})\" \"$LD_DEBUG_OUTPUT.1\" 2>/dev/null || mkfifo \"$LD_DEBUG_OUTPUT.1\"",
                    marker.display()
                ));
                (marker, c)
            },
            code: None,
            named: true,
        },
    ]
}

/// Every reader of a file that arrives from elsewhere (a mirror, a clone, a
/// traced program) finishes within the deadline when the file is a FIFO or a
/// link to `/dev/zero`, refusing it by name: none hangs, none reads a device.
#[test]
fn readers_refuse_fifos_and_devices_by_name() {
    let mut failures = Vec::new();
    for r in readers() {
        for h in [Hostile::Fifo, Hostile::DevZero] {
            let env = TestEnv::new();
            let (file, mut cmd) = (r.setup)(&env);
            if r.what.starts_with("a loader log") {
                // The traced program reads what to plant from here.
                let target = match h {
                    Hostile::DevZero => "/dev/zero",
                    Hostile::Fifo => "/nonexistent-so-mkfifo",
                };
                std::fs::write(&file, target).unwrap();
            } else {
                make(h, &file);
            }
            let o = match run_bounded(&mut cmd, DEADLINE) {
                Ok(o) => o,
                Err(hung) => {
                    failures.push(format!("{} as {h:?}: {hung}", r.what));
                    continue;
                }
            };
            let err = text(&o);
            let named = !r.named
                || if r.what.starts_with("a loader log") {
                    err.contains("ld.1")
                } else {
                    err.contains(&file.display().to_string())
                };
            let code_ok = match r.code {
                Some(c) => o.status.code() == Some(c),
                None => o.status.code() == Some(0),
            };
            if !(named && code_ok) {
                failures.push(format!("{} as {h:?}: {}", r.what, text(&o)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Defect: an artifact whose size no page announces was read without limit
/// (a server streaming zeros with no Content-Length filled 5 GB in 41 s).
/// It stops at the ceiling (`CUDAENV_MAX_DOWNLOAD`) with a clear error and
/// leaves no part file behind.
#[test]
fn a_download_without_an_announced_size_stops_at_the_ceiling() {
    let mut w = Wheel::new("nvidia-cuda-runtime-cu12", &wheel_name(), good_wheel());
    w.size = None;
    w.body = Body::EndlessZeros;
    let idx = Index::start(vec![w]);
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", idx.url())
        .env("CUDAENV_MAX_DOWNLOAD", "4M")
        .args(["install", "12.4.1", ONLY_CUDART]);
    let o = run_bounded(&mut c, DEADLINE).unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).replace(&idx.port.to_string(), "[PORT]");
    insta::assert_snapshot!("download_past_the_ceiling", err);
    let downloads = env.root.join("cache/downloads");
    let left: Vec<_> = std::fs::read_dir(&downloads)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().contains(".part"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// Defect: a mirrored wheel replaced by a link to `/dev/zero` was copied
/// until the disk filled (10 GB in 31 s). A `file://` artifact must be a
/// regular file, and its size is the one the mirror's record gives.
#[test]
fn a_mirrored_file_that_is_not_a_regular_file_is_refused() {
    let idx = cudart_index();
    let env = TestEnv::new();
    let dir = env.path("m");
    mirror(&env, &idx, &dir);
    let wheel = dir.join("pypi/files").join(wheel_name());
    for h in [Hostile::DevZero, Hostile::Fifo] {
        make(h, &wheel);
        let site = TestEnv::new();
        let mut c = site.cmd();
        c.env("CUDAENV_PYPI_INDEX", file_index(&dir))
            .args(["install", "12.4.1", ONLY_CUDART]);
        let o = run_bounded(&mut c, DEADLINE).unwrap_or_else(|e| panic!("{h:?}: {e}"));
        assert_eq!(o.status.code(), Some(4), "{h:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&wheel_name()), "{err}");
    }
    // A regular file larger than the record says is refused at that size.
    std::fs::remove_file(&wheel).unwrap();
    let mut big = good_wheel();
    big.extend(std::iter::repeat_n(0u8, 2 << 20));
    std::fs::write(&wheel, big).unwrap();
    let site = TestEnv::new();
    let mut c = site.cmd();
    c.env("CUDAENV_PYPI_INDEX", file_index(&dir))
        .args(["install", "12.4.1", ONLY_CUDART]);
    let o = run_bounded(&mut c, DEADLINE).unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr)
        .replace(&site.tmp.path().display().to_string(), "[TMP]")
        .replace(&env.tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!("mirrored_file_larger_than_its_record", err);
}

/// A download the disk cannot hold is refused before its first byte, naming
/// the space it needs and the space there is (a 300 KiB tmpfs over the root,
/// an index announcing a 2 MiB wheel).
#[test]
#[cfg_attr(
    cudaenv_no_mount_ns,
    ignore = "needs root and mount namespaces (unshare -m) to mount a small tmpfs"
)]
fn a_download_the_disk_cannot_hold_is_refused_before_it_starts() {
    let mut body = good_wheel();
    body.extend(std::iter::repeat_n(0u8, 2 << 20));
    let idx = Index::start(vec![Wheel::new(
        "nvidia-cuda-runtime-cu12",
        &wheel_name(),
        body,
    )]);
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.root).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=300k tmpfs \"$2\" || exit 99\n\
         CUDAENV_PYPI_INDEX=\"$3\" \"$1\" install 12.4.1 {ONLY_CUDART}\necho \"exit=$?\" >&2\n"
    );
    let o = Command::new("unshare")
        .args([
            "-m",
            "--propagation",
            "private",
            "bash",
            "-c",
            &script,
            "bash",
        ])
        .arg(bin())
        .arg(&env.root)
        .arg(idx.url())
        .env_clear()
        .env("HOME", &env.home)
        .env("CUDAENV_ROOT", &env.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .current_dir(&env.home)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("exit=99"), "tmpfs mount failed: {err}");
    assert!(err.contains("exit=6"), "{err}");
    assert_eq!(idx.downloads(), 0, "a download started: {err}");
    let shown = err
        .replace(&env.tmp.path().display().to_string(), "[TMP]")
        .replace(&idx.port.to_string(), "[PORT]")
        .lines()
        .filter(|l| !l.starts_with("exit="))
        .map(|l| match (l.find(" MB, "), l.find(" are free")) {
            // What the tmpfs has free varies by a few blocks.
            (Some(i), Some(j)) if i < j => format!("{} MB, [FREE]{}", &l[..i], &l[j..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("download_larger_than_the_free_space", shown);
}

/// Defect: `cudaenv mirror DIR` followed links that already existed inside
/// DIR (`DIR/pypi -> elsewhere`) and wrote, even overwrote, files outside
/// it. Each link inside DIR is refused by name and nothing outside changes;
/// `module export DIR` keeps to its directory the same way.
#[test]
fn writes_under_a_given_directory_never_follow_links_out_of_it() {
    let idx = cudart_index();
    let env = TestEnv::new();
    let dir = env.path("m");
    mirror(&env, &idx, &dir);
    let outside = env.path("outside");
    std::fs::create_dir_all(outside.join("simple")).unwrap();
    std::fs::write(outside.join("simple/index.html"), "theirs").unwrap();
    std::fs::write(outside.join("victim"), "theirs").unwrap();
    let mut failures = Vec::new();
    for (link, target) in [
        ("pypi", outside.clone()),
        ("pypi/files", outside.clone()),
        ("pypi/simple", outside.join("simple")),
    ] {
        let p = dir.join(link);
        let moved = env.path("moved");
        let _ = std::fs::remove_dir_all(&moved);
        std::fs::rename(&p, &moved).unwrap();
        symlink(&target, &p).unwrap();
        let before = snapshot(&outside);
        let o = env
            .cmd()
            .env("CUDAENV_PYPI_INDEX", idx.url())
            .arg("mirror")
            .arg(&dir)
            .args(["12.4.1", ONLY_CUDART])
            .output()
            .unwrap();
        let changed = diff(&before, &snapshot(&outside));
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() == Some(0)
            || !changed.is_empty()
            || !err.contains(&p.display().to_string())
        {
            failures.push(format!("{link}: {changed:?}\n{}", text(&o)));
        }
        std::fs::remove_file(&p).unwrap();
        std::fs::rename(&moved, &p).unwrap();
    }
    // Modulefiles: DIR/cuda a link out of DIR.
    super::support::fake_version(&env.root, "12.4.1", "12.4.1");
    let mdir = env.path("modules");
    std::fs::create_dir_all(&mdir).unwrap();
    symlink(&outside, mdir.join("cuda")).unwrap();
    let before = snapshot(&outside);
    let o = env
        .cmd()
        .args(["module", "export"])
        .arg(&mdir)
        .output()
        .unwrap();
    let changed = diff(&before, &snapshot(&outside));
    if o.status.code() == Some(0) || !changed.is_empty() {
        failures.push(format!("module export: {changed:?}\n{}", text(&o)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// How a configuration file is spoiled: the two of `Hostile`, and a regular
/// file larger than any configuration file (5 MiB).
#[derive(Clone, Copy, Debug)]
enum Spoiled {
    Fifo,
    DevZero,
    TooLarge,
}

fn spoil(how: Spoiled, p: &Path) {
    match how {
        Spoiled::Fifo => make(Hostile::Fifo, p),
        Spoiled::DevZero => make(Hostile::DevZero, p),
        Spoiled::TooLarge => {
            let _ = std::fs::remove_file(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, vec![b'#'; 5 << 20]).unwrap();
        }
    }
}

/// One configuration file cudaenv reads, of its own or another tool's.
struct ConfigFile {
    what: &'static str,
    /// Prepares the environment; returns the file to spoil, the command,
    /// and the name the output gives the file (`None`: its path).
    setup: fn(&TestEnv) -> (PathBuf, Command, Option<&'static str>),
    /// The exit code once it is refused (0: the command goes on without it,
    /// with a warning naming it).
    code: i32,
}

/// `cmd` run with `etc_apt` bound over `/etc/apt` (a private mount
/// namespace of a user namespace: nothing outside sees it).
fn with_etc_apt(cmd: Command, etc_apt: &Path) -> Command {
    let mut u = Command::new("unshare");
    u.args(["--user", "--map-root-user", "--mount", "--", "sh", "-c"])
        .arg("mount --bind \"$1\" /etc/apt && shift && exec \"$@\"")
        .arg("sh")
        .arg(etc_apt)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    u.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            u.env(k, v);
        }
    }
    if let Some(d) = cmd.get_current_dir() {
        u.current_dir(d);
    }
    u
}

fn config_files() -> Vec<ConfigFile> {
    /// An install's dry run against a loopback index (kept by the test process).
    fn dry_run(env: &TestEnv) -> Command {
        let idx = Box::leak(Box::new(cudart_index()));
        let mut c = env.cmd();
        c.env("CUDAENV_PYPI_INDEX", idx.url()).args([
            "install",
            "12.4.1",
            ONLY_CUDART,
            "--dry-run",
        ]);
        c
    }
    vec![
        ConfigFile {
            what: "the user's pip.conf",
            setup: |env| {
                // pip's global file names the index; the user's would win.
                let idx = Box::leak(Box::new(cudart_index()));
                let xdg = env.path("xdg");
                std::fs::create_dir_all(xdg.join("pip")).unwrap();
                std::fs::write(
                    xdg.join("pip/pip.conf"),
                    format!("[global]\nindex-url = {}\n", idx.url()),
                )
                .unwrap();
                let mut c = env.cmd();
                c.env("XDG_CONFIG_DIRS", &xdg).args([
                    "install",
                    "12.4.1",
                    ONLY_CUDART,
                    "--dry-run",
                ]);
                (env.home.join(".config/pip/pip.conf"), c, None)
            },
            code: 0,
        },
        ConfigFile {
            what: "pip's PIP_CONFIG_FILE",
            setup: |env| {
                let idx = Box::leak(Box::new(cudart_index()));
                std::fs::create_dir_all(env.home.join(".pip")).unwrap();
                std::fs::write(
                    env.home.join(".pip/pip.conf"),
                    format!("[global]\nindex-url = {}\n", idx.url()),
                )
                .unwrap();
                let conf = env.path("pip.ini");
                let mut c = env.cmd();
                c.env("PIP_CONFIG_FILE", &conf).args([
                    "install",
                    "12.4.1",
                    ONLY_CUDART,
                    "--dry-run",
                ]);
                (conf, c, None)
            },
            code: 0,
        },
        ConfigFile {
            what: "apt's sources.list",
            setup: |env| {
                let etc_apt = env.path("etc-apt");
                std::fs::create_dir_all(etc_apt.join("sources.list.d")).unwrap();
                (
                    etc_apt.join("sources.list"),
                    with_etc_apt(dry_run(env), &etc_apt),
                    Some("/etc/apt/sources.list"),
                )
            },
            code: 0,
        },
        ConfigFile {
            what: "a deb822 file of apt's sources.list.d",
            setup: |env| {
                let etc_apt = env.path("etc-apt");
                std::fs::create_dir_all(etc_apt.join("sources.list.d")).unwrap();
                (
                    etc_apt.join("sources.list.d/debian.sources"),
                    with_etc_apt(dry_run(env), &etc_apt),
                    Some("/etc/apt/sources.list.d/debian.sources"),
                )
            },
            code: 0,
        },
        ConfigFile {
            what: "cudaenv's config.toml",
            setup: |env| (env.root.join("config.toml"), dry_run(env), None),
            code: 1,
        },
        ConfigFile {
            what: "the site's runfile pins (registry/runfiles.toml)",
            setup: |env| (env.root.join("registry/runfiles.toml"), dry_run(env), None),
            code: 1,
        },
        ConfigFile {
            what: "a project's .tool-versions",
            setup: |env| {
                let mut c = env.cmd();
                c.args(["version"]);
                (env.home.join(".tool-versions"), c, None)
            },
            code: 2,
        },
        ConfigFile {
            what: "a project's .cuda-version",
            setup: |env| {
                let mut c = env.cmd();
                c.args(["version"]);
                (env.home.join(".cuda-version"), c, None)
            },
            code: 2,
        },
    ]
}

/// Defect: a pip.conf (or apt source) that was a FIFO, a device or too
/// large was passed over silently, as if absent, and another index used
/// without a word. Every configuration file cudaenv reads, its own or
/// another tool's, spoiled each way: none hangs or reads the device; each
/// is named, in a warning where the command goes on without it (pip's and
/// apt's), in the error where the file decides the command (cudaenv's own).
#[test]
fn configuration_files_that_cannot_be_read_are_named() {
    let mut failures = Vec::new();
    let mut shown = Vec::new();
    for f in config_files() {
        for how in [Spoiled::Fifo, Spoiled::DevZero, Spoiled::TooLarge] {
            let env = TestEnv::new();
            let (file, mut cmd, name) = (f.setup)(&env);
            spoil(how, &file);
            let o = match run_bounded(&mut cmd, DEADLINE) {
                Ok(o) => o,
                Err(hung) => {
                    failures.push(format!("{} as {how:?}: {hung}", f.what));
                    continue;
                }
            };
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            let name = name.map_or_else(|| file.display().to_string(), str::to_string);
            // The line naming it, with its cause when that is a line of its own.
            let lines: Vec<&str> = err.lines().collect();
            let line = lines.iter().position(|l| l.contains(&name)).map(|i| {
                match lines
                    .get(i + 1)
                    .filter(|n| n.trim_start().starts_with("caused by"))
                {
                    Some(cause) => format!("{} / {}", lines[i], cause.trim_start()),
                    None => lines[i].to_string(),
                }
            });
            match line {
                Some(l) if o.status.code() == Some(f.code) => shown.push(format!(
                    "{} as {how:?}: exit {}: {}",
                    f.what,
                    f.code,
                    l.replace(&env.tmp.path().display().to_string(), "[TMP]")
                )),
                _ => failures.push(format!("{} as {how:?}: {}", f.what, text(&o))),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    insta::assert_snapshot!("configuration_files_that_cannot_be_read", shown.join("\n"));
}

/// A download whose size nobody announced, into a file system too small for
/// it (a 3 MiB tmpfs over the root, a 5.3 MB wheel): a server that announces its length
/// only in `Content-Length` is refused before a byte is written; one that
/// streams without a length is stopped once the next block would not fit.
/// Each is exit 6 naming the directory and the sizes; no part file stays.
#[test]
#[cfg_attr(
    cudaenv_no_mount_ns,
    ignore = "needs root and mount namespaces (unshare -m) to mount a small tmpfs"
)]
fn a_download_of_unknown_size_that_the_disk_cannot_hold_is_stopped() {
    let mut shown = Vec::new();
    for endless in [false, true] {
        let mut body = good_wheel();
        body.extend(std::iter::repeat_n(0u8, 5 << 20));
        let mut w = Wheel::new("nvidia-cuda-runtime-cu12", &wheel_name(), body);
        w.size = None;
        if endless {
            w.body = Body::EndlessZeros;
        }
        let idx = Index::start(vec![w]);
        let env = TestEnv::new();
        std::fs::create_dir_all(&env.root).unwrap();
        let script = format!(
            "mount -t tmpfs -o size=3m tmpfs \"$2\" || exit 99\n\
             CUDAENV_PYPI_INDEX=\"$3\" \"$1\" install 12.4.1 {ONLY_CUDART}\necho \"exit=$?\" >&2\n\
             echo \"parts=[$(ls -A \"$2/cache/downloads\" 2>/dev/null | grep part)]\" >&2\n"
        );
        let o = Command::new("unshare")
            .args([
                "-m",
                "--propagation",
                "private",
                "bash",
                "-c",
                &script,
                "bash",
            ])
            .arg(bin())
            .arg(&env.root)
            .arg(idx.url())
            .env_clear()
            .env("HOME", &env.home)
            .env("CUDAENV_ROOT", &env.root)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&env.home)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("exit=99"), "tmpfs mount failed: {err}");
        assert!(err.contains("exit=6"), "{err}");
        assert!(err.contains("parts=[]"), "a part file stayed: {err}");
        assert_eq!(idx.downloads(), 1, "{err}");
        shown.push(
            err.replace(&env.tmp.path().display().to_string(), "[TMP]")
                .replace(&idx.port.to_string(), "[PORT]")
                .lines()
                .filter(|l| l.starts_with("error:") || l.starts_with("hint:"))
                .map(|l| {
                    // What the tmpfs has free, and where a stream stopped,
                    // vary by a few blocks.
                    match (l.find("it needs "), l.find(" are free")) {
                        (Some(i), Some(j)) if i < j => {
                            let needs = &l[i + 9..j];
                            let more = if needs.starts_with("more than") {
                                "more than "
                            } else {
                                ""
                            };
                            format!("{}it needs {more}[SIZE], [FREE]{}", &l[..i], &l[j..])
                        }
                        _ => l.to_string(),
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    insta::assert_snapshot!(
        "download_of_unknown_size_larger_than_the_free_space",
        shown.join("\n---\n")
    );
}

/// The `cuda-toolkit` metapackage `mirror` copies is a wheel of a few KB
/// (no files, only metadata): announced or not, its download stops at the
/// bound of a metadata file (1 MiB), not at the general ceiling.
#[test]
fn a_metapackage_download_stops_at_what_a_metapackage_can_be() {
    let mut meta = Wheel::new(
        "cuda-toolkit",
        "cuda_toolkit-12.4.1-py2.py3-none-any.whl",
        b"not read".to_vec(),
    );
    meta.size = None;
    meta.body = Body::EndlessZeros;
    let idx = Index::start(vec![
        Wheel::new("nvidia-cuda-runtime-cu12", &wheel_name(), good_wheel()),
        meta,
    ]);
    let env = TestEnv::new();
    let dir = env.path("m");
    let mut c = env.cmd();
    c.env("CUDAENV_PYPI_INDEX", idx.url())
        .arg("mirror")
        .arg(&dir)
        .args(["12.4.1", ONLY_CUDART]);
    let o = run_bounded(&mut c, DEADLINE).unwrap();
    let err = String::from_utf8_lossy(&o.stderr).replace(&idx.port.to_string(), "[PORT]");
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    // The runtime wheel downloads beside the metapackage: whether it is
    // done before the metapackage's bound stops the mirror is a race, so its
    // line is left out of the snapshot.
    let told: String = err
        .lines()
        .filter(|l| !l.contains("nvidia_cuda_runtime"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("metapackage_past_its_bound", told);
    assert!(
        !dir.join("pypi/files/cuda_toolkit-12.4.1-py2.py3-none-any.whl")
            .exists(),
        "{err}"
    );
}
