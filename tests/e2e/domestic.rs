//! Domestic mirrors that just work: a PyPI mirror configured for pip the
//! way Chinese users configure Tsinghua's or Aliyun's (`pip config set
//! global.index-url …`, a site pip.conf, `PIP_INDEX_URL`), and a Debian
//! mirror named in apt's sources, are what cudaenv downloads from, with no
//! setting of cudaenv's own. The mirrors are loopback servers laid out like
//! the real ones: a PEP 503 HTML simple index whose links are relative
//! (`../../packages/…#sha256=…`, as Tsinghua's are), and a Debian archive
//! (`debian/pool/…`). apt's sources are read from `/etc/apt`, so that test
//! runs cudaenv in a private mount namespace (`unshare`) where a directory
//! of the test's is mounted over `/etc/apt`: the machine's own is never
//! touched.
//!
//! The Chinese quick start's commands run here too, as README.zh-CN.md
//! writes them (`<!-- run: NAME -->` blocks), with the public mirror's
//! address replaced by the loopback one's.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use crate::nvidia::Mirror;
use crate::pypi::{ONLY_CUDART, good_wheel, sha256, wheel_name};

const TSINGHUA: &str = "https://pypi.tuna.tsinghua.edu.cn/simple";

/// A PyPI mirror with the runtime wheel of CUDA 12.4.1, laid out as
/// Tsinghua's: `simple/<project>/index.html` linking `../../packages/…`.
fn pypi_mirror(dir: PathBuf) -> Mirror {
    let mirror = Mirror::start(dir);
    let wheel = good_wheel();
    let sha = sha256(&wheel);
    let name = wheel_name();
    let pool = format!("packages/{}/{}/{}", &sha[..2], &sha[2..4], name);
    mirror.put(&pool, &wheel);
    mirror.put(
        "simple/nvidia-cuda-runtime-cu12/index.html",
        format!(
            "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\"></head><body>\n\
             <h1>Links for nvidia-cuda-runtime-cu12</h1>\n\
             <a href=\"../../{pool}#sha256={sha}\">{name}</a><br/>\n</body></html>\n"
        )
        .as_bytes(),
    );
    mirror
}

fn pip(t: &TestEnv, args: &[&str]) {
    let o = Command::new("python3")
        .args(["-m", "pip"])
        .args(args)
        .env_clear()
        .env("HOME", &t.home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .output()
        .unwrap();
    assert_success(&o, &format!("pip {}", args.join(" ")));
}

fn install_cudart(t: &TestEnv, vars: &[(&str, &str)]) -> std::process::Output {
    t.cmd()
        .envs(vars.iter().copied())
        .args(["install", "12.4.1", ONLY_CUDART])
        .output()
        .unwrap()
}

fn assert_installed_from(t: &TestEnv, o: &std::process::Output, mirror: &Mirror) {
    assert_code(o, 0, "install from the mirror pip is configured with");
    let meta = std::fs::read_to_string(t.root.join("versions/12.4.1/.cudaenv/meta.toml")).unwrap();
    assert!(meta.contains(&mirror.url()), "{meta}");
    assert!(
        mirror.requested("simple/nvidia-cuda-runtime-cu12/"),
        "the index page was not read"
    );
}

/// `pip config set global.index-url …` (what the Chinese guides say to run),
/// then `cudaenv install`: the wheel comes from the mirror.
#[test]
fn a_mirror_set_with_pip_config_is_what_install_downloads_from() {
    let t = TestEnv::new();
    let mirror = pypi_mirror(t.path("mirror"));
    let index = format!("{}/simple", mirror.url());
    pip(&t, &["config", "set", "global.index-url", &index]);
    let conf = std::fs::read_to_string(t.home.join(".config/pip/pip.conf")).unwrap();
    assert!(conf.contains(&index), "{conf}");
    let o = install_cudart(&t, &[]);
    assert_installed_from(&t, &o, &mirror);
}

/// pip's precedence, as pip has it: the site file (the active virtual
/// environment's pip.conf) over the user's, `[install]` over `[global]`,
/// `PIP_INDEX_URL` over every file, `PIP_CONFIG_FILE` read last, and
/// `CUDAENV_PYPI_INDEX` over pip's settings.
#[test]
fn pips_files_and_variables_are_read_in_pips_order() {
    let (site, var, env_file, own) = (
        TestEnv::new(),
        TestEnv::new(),
        TestEnv::new(),
        TestEnv::new(),
    );
    let mirrors: Vec<Mirror> = (0..5)
        .map(|i| pypi_mirror(site.path(&format!("m{i}"))))
        .collect();
    let idx = |i: usize| format!("{}/simple", mirrors[i].url());
    let write = |p: &Path, text: String| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };

    // User [global] and a virtualenv's [install]: the virtualenv's wins.
    let venv = site.path("venv");
    write(
        &site.home.join(".config/pip/pip.conf"),
        format!("[global]\nindex-url = {}\n", idx(0)),
    );
    write(
        &venv.join("pip.conf"),
        format!("[install]\nindex-url = {}\n", idx(1)),
    );
    let o = install_cudart(&site, &[("VIRTUAL_ENV", venv.to_str().unwrap())]);
    assert_installed_from(&site, &o, &mirrors[1]);

    // PIP_INDEX_URL over the files.
    write(
        &var.home.join(".pip/pip.conf"),
        format!("[global]\nindex-url = {}\n", idx(0)),
    );
    let o = install_cudart(&var, &[("PIP_INDEX_URL", &idx(2))]);
    assert_installed_from(&var, &o, &mirrors[2]);

    // PIP_CONFIG_FILE, read last, over the user's file (which it replaces).
    write(
        &env_file.home.join(".config/pip/pip.conf"),
        format!("[install]\nindex-url = {}\n", idx(0)),
    );
    let file = env_file.path("pip-ci.conf");
    write(&file, format!("[global]\nindex-url = {}\n", idx(3)));
    let o = install_cudart(&env_file, &[("PIP_CONFIG_FILE", file.to_str().unwrap())]);
    assert_installed_from(&env_file, &o, &mirrors[3]);

    // cudaenv's own setting over pip's.
    write(
        &own.home.join(".config/pip/pip.conf"),
        format!("[global]\nindex-url = {}\n", idx(0)),
    );
    let o = install_cudart(&own, &[("CUDAENV_PYPI_INDEX", &idx(4))]);
    assert_installed_from(&own, &o, &mirrors[4]);
    assert!(!mirrors[0].requested("simple/nvidia-cuda-runtime-cu12/"));
}

/// The release catalogue on a Tsinghua-style mirror: NVIDIA's `cuda-toolkit`
/// metapackage with one release PyPI itself does not have (13.9.0), its
/// metadata served beside the wheel link (PEP 658), as the mirrors do.
fn put_catalogue(mirror: &Mirror) {
    let name = "cuda_toolkit-13.9.0-py2.py3-none-any.whl";
    let meta = "Metadata-Version: 2.5\nName: cuda-toolkit\nVersion: 13.9.0\nProvides-Extra: all\n\
                Requires-Dist: nvidia-cuda-runtime==13.9.10.*; (sys_platform == 'linux') and extra == 'all'\n";
    let pool = format!("packages/13/90/{name}");
    mirror.put(&format!("{pool}.metadata"), meta.as_bytes());
    mirror.put(
        "simple/cuda-toolkit/index.html",
        format!(
            "<!DOCTYPE html>\n<html><body>\n<h1>Links for cuda-toolkit</h1>\n\
             <a href=\"../../{pool}#sha256={}\" data-core-metadata=\"sha256={}\">{name}</a><br/>\n</body></html>\n",
            "cd".repeat(32),
            sha256(meta.as_bytes())
        )
        .as_bytes(),
    );
    // What ls-remote reads of 13.9: its runtime's builds and the cuDNN builds.
    let runtime = format!(
        "nvidia_cuda_runtime-13.9.10-py3-none-manylinux_2_27_{}.whl",
        std::env::consts::ARCH
    );
    let page = |project: &str, links: &str| {
        mirror.put(
            &format!("simple/{project}/index.html"),
            format!("<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n").as_bytes(),
        )
    };
    page(
        "nvidia-cuda-runtime",
        &format!(
            "<a href=\"../../packages/ab/ab/{runtime}#sha256={}\">{runtime}</a><br/>\n",
            "ab".repeat(32)
        ),
    );
    page("nvidia-cudnn-cu13", "");
}

/// Every command that downloads from PyPI — `install`, `mirror`, `lock`,
/// `ls-remote`, `update` — takes the index from pip's configuration, set
/// either way the Chinese guides set it (`pip config set`, which writes the
/// user's pip.conf, or `PIP_INDEX_URL`): the wheel, the index pages and the
/// release catalogue all come from the loopback mirror, and nothing names
/// pypi.org.
#[test]
fn every_pypi_download_takes_the_mirror_pip_is_configured_with() {
    for how in ["pip.conf", "PIP_INDEX_URL"] {
        let t = TestEnv::new();
        let mirror = pypi_mirror(t.path("mirror"));
        put_catalogue(&mirror);
        let index = format!("{}/simple", mirror.url());
        let vars: Vec<(&str, &str)> = match how {
            "pip.conf" => {
                pip(&t, &["config", "set", "global.index-url", &index]);
                vec![]
            }
            _ => vec![("PIP_INDEX_URL", index.as_str())],
        };
        // No NVIDIA server here: a closed loopback port fails at once.
        let mut vars = vars;
        vars.push(("CUDAENV_NVIDIA_MIRROR", "http://127.0.0.1:9"));
        let run = |args: &[&str]| {
            let o = t
                .cmd()
                .envs(vars.iter().copied())
                .args(args)
                .output()
                .unwrap();
            assert!(
                !text(&o).contains("pypi.org"),
                "{how}: {args:?}: {}",
                text(&o)
            );
            o
        };
        let wheel = wheel_name();

        let o = run(&["update"]);
        assert!(
            mirror.requested("simple/cuda-toolkit/"),
            "{how}: update: {}",
            text(&o)
        );
        assert!(
            text(&o).contains("13.9.0"),
            "{how}: update names the mirror's new release: {}",
            text(&o)
        );

        let o = run(&["ls-remote", "13.9", "--source", "pypi", "--refresh"]);
        assert_code(&o, 0, &format!("{how}: ls-remote"));
        assert!(
            stdout(&o).contains("13.9.0"),
            "{how}: ls-remote: {}",
            text(&o)
        );

        let o = run(&["lock", "12.4.1", "--source", "pypi", ONLY_CUDART]);
        assert_code(&o, 0, &format!("{how}: lock"));
        let lock = std::fs::read_to_string(t.home.join("cuda.lock")).unwrap();
        assert!(
            lock.contains(&format!("{}/packages/", mirror.url())) && lock.contains(&wheel),
            "{how}: {lock}"
        );

        let dir = t.path("offline-mirror");
        let o = run(&[
            "mirror",
            dir.to_str().unwrap(),
            "12.4.1",
            "--source",
            "pypi",
            ONLY_CUDART,
        ]);
        assert_code(&o, 0, &format!("{how}: mirror"));
        assert!(
            walk_find(&dir, &wheel).is_file(),
            "{how}: the wheel is in the offline mirror"
        );

        let o = install_cudart(&t, &vars);
        assert_installed_from(&t, &o, &mirror);
    }
}

/// Runs `cudaenv ARGS…` in a private mount namespace where `etc_apt` is
/// mounted over `/etc/apt`.
fn with_apt_sources(t: &TestEnv, etc_apt: &Path, args: &[&str]) -> std::process::Output {
    let mut c = t.cmd();
    let program = c.get_program().to_owned();
    let mut u = Command::new("unshare");
    u.args(["--user", "--map-root-user", "--mount", "--", "sh", "-c"])
        .arg("mount --bind \"$1\" /etc/apt && shift && exec \"$@\"")
        .arg("sh")
        .arg(etc_apt)
        .arg(program)
        .args(args);
    u.env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            u.env(k, v);
        }
    }
    u.current_dir(&t.home);
    c = u;
    c.output().unwrap()
}

/// A Debian mirror named in apt's sources (deb822, as Debian 12 writes
/// them; the security archive first, which is not taken) is the one the
/// Debian source downloads from: CUDA 11.2's real cudart, fetched once from
/// deb.debian.org and then served by a loopback mirror.
#[test]
fn the_debian_mirror_apt_uses_is_what_the_debian_source_downloads_from() {
    // The real package, from Debian's own redirector.
    let first = TestEnv::new();
    let o = first
        .cmd()
        .env("CUDAENV_DEBIAN_MIRROR", "http://deb.debian.org/debian")
        // The archive is reused below: installs keep archives only when asked.
        .env("CUDAENV_KEEP_DOWNLOADS", "1")
        .args([
            "install",
            "11.2",
            "--source",
            "debian",
            crate::debian::ONLY_CUDART,
        ])
        .output()
        .unwrap();
    assert_code(&o, 0, "the live Debian install");
    let deb = walk_find(
        &first.root.join("cache/downloads"),
        "libcudart11.0_11.2.152",
    );
    let t = TestEnv::new();
    let mirror = Mirror::start(t.path("mirror"));
    let pool = crate::debian::cudart_pool_path();
    mirror.put(&format!("debian/{pool}"), &std::fs::read(&deb).unwrap());

    let etc_apt = t.path("etc-apt");
    std::fs::create_dir_all(etc_apt.join("sources.list.d")).unwrap();
    std::fs::write(
        etc_apt.join("sources.list.d/debian.sources"),
        format!(
            "Types: deb\nURIs: {url}/debian-security\nSuites: bookworm-security\nComponents: main\n\n\
             Types: deb\nURIs: {url}/debian\nSuites: bookworm bookworm-updates\n\
             Components: main contrib non-free non-free-firmware\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
            url = mirror.url()
        ),
    )
    .unwrap();
    // Left by tools that disable a file: apt does not read it, nor does cudaenv.
    std::fs::write(
        etc_apt.join("sources.list.d/other.sources.disabled"),
        "Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm\n",
    )
    .unwrap();
    let o = with_apt_sources(
        &t,
        &etc_apt,
        &[
            "install",
            "11.2",
            "--source",
            "debian",
            crate::debian::ONLY_CUDART,
        ],
    );
    assert_code(&o, 0, "install through apt's Debian mirror");
    assert!(mirror.requested(&format!("debian/{pool}")), "{}", text(&o));
    let meta = std::fs::read_to_string(t.root.join("versions/11.2.2/.cudaenv/meta.toml")).unwrap();
    assert!(
        meta.contains(&format!("{}/debian/{pool}", mirror.url())),
        "{meta}"
    );
    crate::debian::assert_real_cudart_11_2(&t, "11.2.2");

    // cudaenv's own setting wins over apt's: a dry run names it.
    let o = with_apt_sources(
        &t,
        &etc_apt,
        &[
            "install",
            "11.2",
            "--source",
            "debian",
            "--dry-run",
            "-f",
            crate::debian::ONLY_CUDART,
        ],
    );
    assert!(stdout(&o).contains(&mirror.url()), "{}", text(&o));
    let mut c = t.cmd();
    c.env(
        "CUDAENV_DEBIAN_MIRROR",
        "https://mirrors.tuna.tsinghua.edu.cn/debian",
    );
    let o = c
        .args([
            "install",
            "11.2",
            "--source",
            "debian",
            "--dry-run",
            "-f",
            crate::debian::ONLY_CUDART,
        ])
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("https://mirrors.tuna.tsinghua.edu.cn/debian/pool/"),
        "{}",
        text(&o)
    );
}

/// apt's own configuration moves its sources, and cudaenv follows: an
/// `APT_CONFIG` file whose `Dir::Etc` points at another directory (what a
/// chroot or an unprivileged apt setup does), whose `apt.conf.d` names the
/// list file. No mount namespace needed: the machine's /etc/apt is only read.
#[test]
fn apt_config_and_dir_etc_move_the_sources_cudaenv_reads() {
    let t = TestEnv::new();
    let etc_apt = t.path("apt-root/etc/apt");
    std::fs::create_dir_all(etc_apt.join("apt.conf.d")).unwrap();
    std::fs::write(
        etc_apt.join("apt.conf.d/10sources"),
        "Dir::Etc { SourceList \"tuna.list\"; };\n",
    )
    .unwrap();
    std::fs::write(
        etc_apt.join("tuna.list"),
        "deb https://mirrors.tuna.tsinghua.edu.cn/debian bookworm main\n",
    )
    .unwrap();
    let conf = t.path("apt.conf");
    std::fs::write(
        &conf,
        format!("// moved\nDir \"{}/\";\n", t.path("apt-root").display()),
    )
    .unwrap();
    let o = t
        .cmd()
        .env("APT_CONFIG", &conf)
        .args([
            "install",
            "11.2",
            "--source",
            "debian",
            "--dry-run",
            crate::debian::ONLY_CUDART,
        ])
        .output()
        .unwrap();
    assert_code(&o, 0, "a dry run through apt's moved sources");
    assert!(
        stdout(&o).contains("https://mirrors.tuna.tsinghua.edu.cn/debian/pool/"),
        "{}",
        text(&o)
    );
}

fn walk_find(dir: &Path, needle: &str) -> PathBuf {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_string_lossy().contains(needle) {
                return p;
            }
        }
    }
    panic!("no {needle} under {}", dir.display());
}

// --- README.zh-CN.md, as written ---------------------------------------------

const QUICK_START: &str = include_str!("../../README.zh-CN.md");

/// The shell block after `<!-- run: NAME -->`.
fn block(name: &str) -> String {
    let marker = format!("<!-- run: {name} -->\n```sh\n");
    let at = QUICK_START
        .find(&marker)
        .unwrap_or_else(|| panic!("README.zh-CN.md has no {marker:?}"));
    let body = &QUICK_START[at + marker.len()..];
    body[..body.find("```").unwrap()].to_string()
}

/// Runs a block's lines in one bash, as a user pastes them into a Chinese
/// terminal (`LANG=zh_CN.UTF-8`), with cudaenv and pip on PATH.
fn paste(t: &TestEnv, script: &str) -> std::process::Output {
    let bin_dir = bin().parent().unwrap();
    Command::new("bash")
        .args(["--noprofile", "--norc", "-e", "-c", script])
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display()),
        )
        .env("NO_COLOR", "1")
        .env("LANG", "zh_CN.UTF-8")
        .current_dir(&t.home)
        .output()
        .unwrap()
}

/// Every `run:` block of the Chinese quick start, as written: the mirror
/// set with pip (pointed at a loopback mirror instead of Tsinghua's, then
/// used by an install), the pin, the TensorFlow recipes' `compat`, and
/// `explain` — each in Chinese where it speaks.
#[test]
fn the_chinese_quick_start_runs_as_written() {
    let t = TestEnv::new();
    let mirror = pypi_mirror(t.path("mirror"));
    let script = block("pip-mirror");
    assert!(script.contains(TSINGHUA), "{script}");
    let o = paste(
        &t,
        &script.replace(TSINGHUA, &format!("{}/simple", mirror.url())),
    );
    assert_code(&o, 0, "pip-mirror");
    let o = install_cudart(&t, &[]);
    assert_installed_from(&t, &o, &mirror);

    // The pin, where the version is installed (from the mirror above)…
    let o = paste(&t, &block("pin"));
    assert_code(&o, 0, "pin");
    let out = stdout(&o);
    assert!(out.starts_with("12.4\n12.4.1 (set by "), "{out}");
    // …and where it is not yet: the hint says how, in Chinese.
    let fresh = TestEnv::new();
    let o = paste(&fresh, &block("pin"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(out, "12.4\n", "{}", text(&o));
    assert!(
        err.contains("提示: 运行 `cudaenv install 12.4` 来安装它"),
        "{err}"
    );
    assert!(fresh.home.join("myproject/.cuda-version").is_file());

    let o = paste(&t, &block("tf210"));
    assert_code(&o, 0, "tf210");
    assert!(stdout(&o).contains("stack: 11.2+cudnn8.1"), "{}", text(&o));

    let o = paste(&t, &block("tf-current"));
    assert_code(&o, 0, "tf-current");
    assert!(stdout(&o).contains("stack: 12.5+cudnn9.3"), "{}", text(&o));
    assert!(stdout(&o).contains("tensorflow[and-cuda]"), "{}", text(&o));

    let o = paste(&t, &block("explain"));
    assert_code(&o, 0, "explain");
    let out = stdout(&o);
    assert!(
        out.contains("含义：") && out.contains("CUDA 11.0–11.8"),
        "{out}"
    );
    assert!(
        out.contains("cudaenv install 11.8 && cudaenv local 11.8"),
        "{out}"
    );
}

/// Every link of the Chinese quick start leads to a file of the repository.
#[test]
fn the_chinese_quick_starts_links_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut rest = QUICK_START;
    let mut n = 0;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find(')').unwrap();
        let target = rest[..end].split('#').next().unwrap();
        if !target.starts_with("http") {
            assert!(
                root.join(target).exists(),
                "README.zh-CN.md links to {target}, which does not exist"
            );
            n += 1;
        }
    }
    assert!(n >= 5, "{n} links");
    let readme = include_str!("../../README.md");
    assert!(
        readme.contains("(README.zh-CN.md)"),
        "README.md does not link the Chinese quick start"
    );
}
