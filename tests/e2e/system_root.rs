//! The shared, read-only system root (docs/clusters.md): an administrator's
//! versions seen next to each user's own, used by a second, unprivileged user
//! (`setpriv` to `nobody` when the tests run as root; otherwise the system
//! root is made read-only with `chmod a-w`, so a write would fail), and never
//! written to by them; and the refusal to activate a version others could
//! have tampered with.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{
    assert_code, assert_success, fake_installed, fake_toolkit, snapshot, stderr, stdout,
};
use crate::reliability::support::is_root;

const NOBODY: u32 = 65534;

/// A system root and one user of it.
struct Site {
    _tmp: tempfile::TempDir,
    tmp: PathBuf,
    sys: PathBuf,
    home: PathBuf,
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown_tree(p: &Path, uid: u32) {
    let st = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

impl Site {
    /// `sys` holds 12.4.1 and 11.8.0 (real tiny libcudart), installed by
    /// "the administrator" (this process); `home` belongs to the user.
    fn new() -> Site {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        // Others must be able to reach what is inside (tempdir makes 0700).
        chmod(&base, 0o755);
        let sys = base.join("opt cudaenv");
        fake_installed(&sys, "12.4.1", "12.4.1", None);
        fake_installed(&sys, "11.8.0", "11.8.0", None);
        let home = base.join("home");
        std::fs::create_dir_all(home.join("proj")).unwrap();
        if is_root() {
            chown_tree(&home, NOBODY);
        }
        Site {
            _tmp: tmp,
            tmp: base,
            sys,
            home,
        }
    }

    /// Makes the system root read-only to the user: as root the user is
    /// `nobody` and the root stays root's; otherwise no one may write it.
    fn seal(&self) {
        if !is_root() {
            Command::new("chmod")
                .args(["-R", "a-w"])
                .arg(&self.sys)
                .status()
                .unwrap();
        }
    }

    /// `cudaenv ARGS` as the user, in `cwd`, with the system root named by
    /// the variable.
    fn user(&self, cwd: &Path, args: &[&str]) -> Output {
        self.user_cmd(cwd, args).output().unwrap()
    }

    fn user_cmd(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = self.as_user(crate::common::bin(), cwd);
        c.args(args);
        c
    }

    /// `program` as the user, with the user's environment.
    fn as_user(&self, program: &Path, cwd: &Path) -> Command {
        let mut c = if is_root() {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "--",
            ])
            .arg(program);
            c
        } else {
            Command::new(program)
        };
        c.env_clear()
            .env("HOME", &self.home)
            .env("CUDAENV_ROOT", self.home.join(".cudaenv"))
            .env("CUDAENV_SYSTEM_ROOT", &self.sys)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(cwd);
        c
    }
}

/// What `libcudart.so.<major>` the loader finds reports, as `cudaenv exec` runs it.
const CUDART_12: &str = "import ctypes; v = ctypes.c_int(); ctypes.CDLL('libcudart.so.12').cudaRuntimeGetVersion(ctypes.byref(v)); print(v.value)";

#[test]
fn a_user_pins_activates_links_and_rehashes_without_writing_the_system_root() {
    let site = Site::new();
    site.seal();
    let before = snapshot(&site.sys);
    let proj = site.home.join("proj");

    let out = site.user(&proj, &["versions"]);
    assert_success(&out, "versions");
    let sys = site.sys.display();
    assert_eq!(
        stdout(&out),
        format!("* system\n  11.8.0 (in {sys})\n  12.4.1 (in {sys})\n")
    );
    let out = site.user(&proj, &["versions", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["versions"][1]["location"], "system");
    assert_eq!(json["versions"][1]["shadowed"], false);

    assert_success(&site.user(&proj, &["local", "12.4"]), "local 12.4");
    assert_eq!(
        std::fs::read_to_string(proj.join(".cuda-version")).unwrap(),
        "12.4\n"
    );
    let out = site.user(&proj, &["exec", "--", "python3", "-c", CUDART_12]);
    assert_success(&out, "exec python3");
    assert_eq!(stdout(&out).trim(), "12040");
    let out = site.user(&proj, &["version", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["location"], "system", "{json}");
    let out = site.user(&proj, &["prefix"]);
    assert_eq!(
        stdout(&out).trim(),
        site.sys.join("versions/12.4.1").to_str().unwrap()
    );
    let out = site.user(&proj, &["env", "--shell", "bash"]);
    assert_success(&out, "env");
    assert!(
        stdout(&out).contains("CUDAENV_ACTIVE=12.4.1"),
        "{}",
        stdout(&out)
    );

    // verify runs (this machine has no GPU: exit 10) and writes nothing there.
    let out = site.user(&proj, &["verify", "--timeout", "60"]);
    assert!(
        matches!(out.status.code(), Some(0 | 10 | 13)),
        "verify: {}",
        stderr(&out)
    );

    // Shims for the system versions' tools go to the user's root.
    assert_success(&site.user(&proj, &["rehash"]), "rehash");
    let nvcc = site.home.join(".cudaenv/shims/nvcc");
    assert!(nvcc.exists());
    let out = site
        .as_user(&nvcc, &proj)
        .arg("--version")
        .output()
        .unwrap();
    assert_success(&out, "the nvcc shim");
    assert!(stdout(&out).contains("release 12.4"), "{}", stdout(&out));

    // A link of the user's own goes to the user's root.
    let mine = site.home.join("my-cuda");
    fake_toolkit(&mine, "12.6.3", None);
    if is_root() {
        chown_tree(&mine, NOBODY);
    }
    assert_success(
        &site.user(&proj, &["link", "mine", mine.to_str().unwrap()]),
        "link",
    );
    assert!(site.home.join(".cudaenv/versions/mine").is_dir());

    // The same name in both roots: the user's wins; the list shows both.
    fake_installed(&site.home.join(".cudaenv"), "11.8.0", "11.8.0", None);
    if is_root() {
        chown_tree(&site.home, NOBODY);
    }
    let out = site.user(&proj, &["prefix", "11.8.0"]);
    assert_eq!(
        stdout(&out).trim(),
        site.home.join(".cudaenv/versions/11.8.0").to_str().unwrap()
    );
    let listed = stdout(&site.user(&proj, &["versions"]));
    assert!(
        listed.contains(&format!(
            "  11.8.0 (in {sys}, hidden by yours of that name)\n"
        )),
        "{listed}"
    );
    assert_eq!(listed.matches("11.8.0").count(), 2, "{listed}");

    // Writing the system root is refused, before anything is fetched.
    let err = assert_code(
        &site.user(&proj, &["install", "--system", "12.4", "--offline"]),
        9,
        "install --system",
    );
    assert!(err.contains(&*site.sys.to_string_lossy()), "{err}");
    let err = assert_code(
        &site.user(&proj, &["uninstall", "12.4.1", "-y"]),
        9,
        "uninstall",
    );
    assert!(err.contains("12.4.1") && err.contains("hint:"), "{err}");

    assert_eq!(before, snapshot(&site.sys), "the system root changed");
}

/// The system root from config.toml, the rule that an empty variable turns it
/// off, and an administrator's `install --system` (from a loopback index).
#[test]
fn the_system_root_comes_from_config_and_the_administrator_installs_into_it() {
    let site = Site::new();
    let proj = site.home.join("proj");
    let root = site.home.join(".cudaenv");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("config.toml"),
        format!("system-root = {:?}\n", site.sys.to_str().unwrap()),
    )
    .unwrap();
    if is_root() {
        chown_tree(&site.home, NOBODY);
    }
    let bare = |cmd: &mut Command| stdout(&cmd.output().unwrap());
    let mut c = site.user_cmd(&proj, &["versions", "--bare"]);
    c.env_remove("CUDAENV_SYSTEM_ROOT");
    assert_eq!(bare(&mut c), "11.8.0\n12.4.1\n");
    let mut c = site.user_cmd(&proj, &["versions", "--bare"]);
    c.env("CUDAENV_SYSTEM_ROOT", "");
    assert_eq!(bare(&mut c), "");

    let w = crate::pypi::good_wheel();
    let srv = crate::pypi::Server::start(
        w.clone(),
        crate::pypi::sha256(&w),
        crate::pypi::Mode::Normal,
    );
    let admin_home = site.tmp.join("admin");
    std::fs::create_dir_all(&admin_home).unwrap();
    let fresh = site.tmp.join("fresh root");
    let out = Command::new(crate::common::bin())
        .env_clear()
        .env("HOME", &admin_home)
        .env("PATH", "/usr/bin:/bin")
        .env("CUDAENV_SYSTEM_ROOT", &fresh)
        .env("CUDAENV_PYPI_INDEX", srv.index())
        .args(["install", "--system", "12.4.1", crate::pypi::ONLY_CUDART])
        .output()
        .unwrap();
    assert_success(&out, "install --system");
    let v = fresh.join("versions/12.4.1");
    assert!(v.join("lib64/libcudart.so.12").is_file());
    assert_eq!(
        std::fs::metadata(&v).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert!(
        !admin_home.join(".cudaenv/versions").exists(),
        "nothing in the admin's own root"
    );
    assert!(
        admin_home.join(".cudaenv/cache").is_dir(),
        "the admin's own cache"
    );

    let mut c = site.user_cmd(&proj, &["versions", "--bare"]);
    c.env("CUDAENV_SYSTEM_ROOT", &fresh);
    assert_eq!(bare(&mut c), "12.4.1\n");

    // A user asking for what the system root has gets it without a download.
    let downloads = srv.downloads.load(std::sync::atomic::Ordering::SeqCst);
    let mut c = site.user_cmd(&proj, &["install", "12.4.1", crate::pypi::ONLY_CUDART]);
    c.env("CUDAENV_SYSTEM_ROOT", &fresh)
        .env("CUDAENV_PYPI_INDEX", srv.index());
    let out = c.output().unwrap();
    assert_success(&out, "install what the system has");
    assert!(
        stderr(&out).contains("already installed in the system root"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        srv.downloads.load(std::sync::atomic::Ordering::SeqCst),
        downloads
    );
    assert!(!site.home.join(".cudaenv/versions/12.4.1").exists());

    site.seal();
    let err = assert_code(
        &site.user(&proj, &["install", "--system", "12.4"]),
        9,
        "not the owner",
    );
    assert!(err.contains("not writable by this user"), "{err}");
    let mut c = site.user_cmd(&proj, &["install", "--system", "12.4"]);
    c.env("CUDAENV_SYSTEM_ROOT", "");
    std::fs::remove_file(root.join("config.toml")).unwrap();
    let out = c.output().unwrap();
    let err = assert_code(&out, 2, "no system root");
    assert!(err.contains("no system root is configured"), "{err}");
}

/// Anyone who can write into a system version (or the root, or a parent
/// without the sticky bit) could plant a library for everyone: such a version
/// is not activated; the error names the path and its mode (exit 8), prints
/// nothing on stdout, and a sticky, world-writable parent such as /tmp is fine.
#[test]
fn a_system_version_others_can_write_is_not_activated() {
    let cases: [(&str, &str, u32); 5] = [
        (
            "group-writable library directory",
            "versions/12.4.1/lib64",
            0o775,
        ),
        ("world-writable bin directory", "versions/12.4.1/bin", 0o777),
        (
            "writable metadata",
            "versions/12.4.1/.cudaenv/meta.toml",
            0o666,
        ),
        ("group-writable versions directory", "versions", 0o775),
        ("world-writable root, even sticky", "", 0o1777),
    ];
    for (label, rel, mode) in cases {
        let site = Site::new();
        let target = site.sys.join(rel);
        chmod(&target, mode);
        let proj = site.home.join("proj");
        for args in [
            &["exec", "--version", "12.4", "--", "true"][..],
            &["env", "--shell", "bash", "12.4.1"],
            &["prefix", "12.4"],
        ] {
            let out = site.user(&proj, args);
            let err = assert_code(&out, 8, label);
            assert!(stdout(&out).is_empty(), "{label}: {}", stdout(&out));
            let target = target.canonicalize().unwrap();
            assert!(
                err.contains(&*target.to_string_lossy())
                    && err.contains(&format!("mode {mode:04o}")),
                "{label}: {err}"
            );
            assert!(err.contains("chmod go-w"), "{label}: {err}");
        }
        // The other version is still refused when the shared part is unsafe,
        // and usable when only 12.4.1's own directories are.
        let out = site.user(&proj, &["prefix", "11.8"]);
        let shared = rel.is_empty() || rel == "versions";
        assert_eq!(
            out.status.code(),
            Some(if shared { 8 } else { 0 }),
            "{label}: {}",
            stderr(&out)
        );
    }

    // A sticky world-writable parent (as /tmp is) does not make it unsafe.
    let site = Site::new();
    let parent = site.sys.parent().unwrap();
    chmod(parent, 0o1777);
    let out = site.user(&site.home.join("proj"), &["prefix", "12.4"]);
    assert_success(&out, "sticky parent");
    chmod(parent, 0o777);
    let out = site.user(&site.home.join("proj"), &["prefix", "12.4"]);
    let err = assert_code(&out, 8, "writable parent");
    assert!(err.contains("mode 0777"), "{err}");
}

/// A config.toml that breaks while a version is active: the hook reports it
/// and still gives back what the activation changed (its output is always
/// evaluated).
#[test]
fn the_hook_undoes_an_activation_when_config_toml_breaks() {
    let t = crate::common::TestEnv::new();
    let v = fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let proj = t.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(".cuda-version"), "12.4\n").unwrap();
    let config = t.root.join("config.toml");
    let script = format!(
        "eval \"$('{}' init bash)\"; cd proj; _cudaenv_hook; printf 'IN %s\\n' \"$PATH\"; \
         printf 'system-root = 3\\n' > '{}'; cd ..; _cudaenv_hook; printf 'OUT %s\\n' \"$PATH\"",
        crate::common::bin().display(),
        config.display()
    );
    let out = crate::common::bash(&t, &t.home, &[], &script);
    let bin_dir = v.join("bin").display().to_string();
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("IN ") && lines[0].contains(&bin_dir),
        "{out}"
    );
    assert!(
        lines[1].starts_with("OUT ") && !lines[1].contains(&bin_dir),
        "{out}"
    );
}
