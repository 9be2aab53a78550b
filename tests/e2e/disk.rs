//! What the cache costs, and giving it back: `cache size`, `cache prune`,
//! and what `uninstall` says remains (live PyPI, the ~1 MB cudart wheel);
//! what a stack costs on disk against `du` of the root, and the
//! `keep-downloads` setting (a loopback index with cuDNN wheels).

use crate::common::{TestEnv, text};
use crate::pypi::ONLY_CUDART;

fn size(env: &TestEnv) -> serde_json::Value {
    serde_json::from_str(&env.ok(&["cache", "size", "--json"])).unwrap()
}

#[test]
fn prune_keeps_what_installed_versions_use_and_uninstall_says_what_remains() {
    let env = TestEnv::new();
    env.ok(&["install", "12.4.1", ONLY_CUDART]);
    let s = size(&env);
    // The wheel was deleted once unpacked (keep-downloads is off).
    assert_eq!(s["downloads"]["bytes"], 0, "{s}");
    // The package's files are the version's too (hard links): not freeable,
    // but for the store's own bookkeeping (its file list).
    let pkgs = s["pkgs"]["bytes"].as_u64().unwrap();
    assert!(
        pkgs > 0 && s["pkgs"]["freeable"].as_u64().unwrap() < pkgs / 100,
        "{s}"
    );

    // Nothing to prune while the version is installed.
    let o = env.run(&["cache", "prune"]);
    assert!(text(&o).contains("freed 0 B ("), "{}", text(&o));
    assert_eq!(size(&env)["pkgs"]["bytes"].as_u64(), Some(pkgs));

    let o = env.run(&["uninstall", "12.4.1", "-y"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("that no installed version uses; `cudaenv cache prune` frees it"),
        "{}",
        text(&o)
    );
    let o = env.run(&["cache", "prune"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("freed "), "{}", text(&o));
    let s = size(&env);
    assert_eq!(s["downloads"]["bytes"], 0, "{s}");
    assert_eq!(s["pkgs"]["bytes"], 0, "{s}");
    // The index pages and the release list stay, for --offline.
    assert!(s["index"]["bytes"].as_u64().unwrap() > 0, "{s}");
}

/// A cuDNN wheel of `version` (a library of `size` bytes whose content
/// depends on the version, and its header), as PyPI names them.
fn cudnn_wheel(version: &str, size: usize) -> (String, Vec<u8>, String) {
    use crate::pypi::{file, sha256, zip};
    let seed = version.bytes().map(u32::from).sum::<u32>();
    let lib: Vec<u8> = (0..size as u32)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed) % 253) as u8)
        .collect();
    let p: Vec<&str> = version.split('.').collect();
    let header = format!(
        "#define CUDNN_MAJOR {}\n#define CUDNN_MINOR {}\n#define CUDNN_PATCHLEVEL {}\n",
        p[0], p[1], p[2]
    );
    let body = zip(&[
        file("nvidia/__init__.py", b""),
        file("nvidia/cudnn/lib/libcudnn.so.9", &lib),
        file("nvidia/cudnn/include/cudnn_version.h", header.as_bytes()),
        file(
            &format!("nvidia_cudnn_cu12-{version}.dist-info/RECORD"),
            b"",
        ),
    ]);
    let name = format!(
        "nvidia_cudnn_cu12-{version}-py3-none-manylinux2014_{}.whl",
        std::env::consts::ARCH
    );
    let sha = sha256(&body);
    (name, body, sha)
}

/// `du -sb`: bytes of file data under `dir`, each inode once (hard links
/// shared by a version and the package store count once), as Debian's du
/// counts them.
fn du(dir: &std::path::Path) -> u64 {
    let o = std::process::Command::new("du")
        .arg("-sb")
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "du: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// What takes the room under `root`, for a failure's message.
fn breakdown(root: &std::path::Path) -> String {
    let o = std::process::Command::new("du")
        .args(["-ab", "--max-depth=3"])
        .arg(root)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A stack costs its unpacked size once: after an install the root is the
/// version's tree plus small bookkeeping (the archives are gone, the package
/// store is hard links of the tree), `cache prune` frees nothing and breaks
/// nothing, and a second stack that differs only in cuDNN adds only its
/// cuDNN. The cache commands agree with each other and with `install`; a
/// reinstall from the package store needs neither the archives nor the
/// network.
#[test]
fn a_stack_costs_its_unpacked_size_once() {
    use crate::pypi::{Mode, Server, good_wheel, sha256, wheel_name};
    let cudart = good_wheel();
    let (a_name, a_body, a_sha) = cudnn_wheel("9.1.0.70", 2_000_000);
    let (b_name, b_body, b_sha) = cudnn_wheel("9.1.1.17", 2_100_000);
    let archives = (cudart.len() + a_body.len() + b_body.len()) as u64;
    let srv = Server::start_wheels(
        vec![
            (wheel_name(), cudart.clone(), sha256(&cudart)),
            (a_name, a_body, a_sha),
            (b_name, b_body, b_sha),
        ],
        Mode::Normal,
    );
    let env = TestEnv::new();
    let mut s = crate::output::Session::new(&env, &env.home);
    s.envs.push(("CUDAENV_PYPI_INDEX".into(), srv.index()));
    s.sort_progress = true;
    s.filters.push((r"127\.0\.0\.1:\d+", "[HOST]"));
    s.filters.push((r"in \d+\.\d+s", "in [TIME]"));
    // What the root may hold beside the trees: the index pages, file lists
    // and metadata of the versions and packages, and the package store's
    // directories (du counts 4 KiB for each). The archives would be 2 MB.
    let slack = |root: u64, trees: u64| root.saturating_sub(trees);
    const SLACK: u64 = 128 << 10;

    let o = s.run(&["install", "12.4.1+cudnn9.1.0.70", ONLY_CUDART]);
    assert!(o.status.success(), "{}", text(&o));
    let a = env.root.join("versions/12.4.1+cudnn9.1.0.70");
    let stack_a = du(&a);
    assert!(stack_a > 2_000_000, "{stack_a}");
    let root = du(&env.root);
    assert!(
        slack(root, stack_a) < SLACK,
        "root {root} for a stack of {stack_a} (archives were {archives}): {}",
        breakdown(&env.root)
    );
    let downloads: Vec<_> = std::fs::read_dir(env.root.join("cache/downloads"))
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        downloads
            .iter()
            .all(|n| !n.to_string_lossy().ends_with(".whl")),
        "{downloads:?}"
    );
    s.run(&["cache", "size"]);
    s.run(&["cache", "prune"]);
    assert_eq!(
        du(&env.root),
        root,
        "prune changed a root with nothing to free"
    );
    assert!(a.join("lib64/libcudnn.so.9").is_file());
    s.run(&["cache", "size"]);

    // The second stack shares cudart: the root grows by its cuDNN only.
    let o = s.run(&["install", "12.4.1+cudnn9.1.1.17", ONLY_CUDART]);
    assert!(o.status.success(), "{}", text(&o));
    let b = env.root.join("versions/12.4.1+cudnn9.1.1.17");
    let both = du(&env.root.join("versions"));
    let cudnn_b = std::fs::metadata(b.join("lib64/libcudnn.so.9"))
        .unwrap()
        .len();
    assert!(
        both < stack_a + cudnn_b + 4096 + SLACK,
        "versions {both}: stack {stack_a} + cuDNN {cudnn_b}"
    );
    let root = du(&env.root);
    assert!(
        slack(root, both) < 2 * SLACK,
        "root {root}, versions {both}"
    );
    s.run(&["cache", "size"]);

    // A reinstall needs no archive and no network: the package store has it.
    let before = srv.downloads.load(std::sync::atomic::Ordering::SeqCst);
    env.ok(&["uninstall", "12.4.1+cudnn9.1.1.17", "-y"]);
    let o = s.run(&["install", "12.4.1+cudnn9.1.1.17", ONLY_CUDART, "--offline"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        srv.downloads.load(std::sync::atomic::Ordering::SeqCst),
        before,
        "a reinstall downloaded again"
    );
    assert!(b.join("lib64/libcudnn.so.9").is_file());
    s.snapshot("disk_stack_costs_its_size_once");
}

/// `keep-downloads = true` (or `CUDAENV_KEEP_DOWNLOADS=1`) keeps the
/// archives, `install` says so, and then `cache prune` keeps them too while
/// `cache size` says prune frees nothing of them.
#[test]
fn keep_downloads_keeps_the_archives_and_the_cache_commands_agree() {
    use crate::pypi::{Mode, Server, good_wheel, sha256};
    let w = good_wheel();
    let srv = Server::start(w.clone(), sha256(&w), Mode::Normal);
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.root).unwrap();
    std::fs::write(env.root.join("config.toml"), "keep-downloads = true\n").unwrap();
    let mut s = crate::output::Session::new(&env, &env.home);
    s.envs.push(("CUDAENV_PYPI_INDEX".into(), srv.index()));
    s.filters.push((r"127\.0\.0\.1:\d+", "[HOST]"));
    s.filters.push((r"in \d+\.\d+s", "in [TIME]"));
    let o = s.run(&["install", "12.4.1", ONLY_CUDART]);
    assert!(o.status.success(), "{}", text(&o));
    let wheel = size(&env)["downloads"]["bytes"].as_u64().unwrap();
    assert_eq!(wheel, w.len() as u64);
    s.run(&["cache", "size"]);
    s.run(&["cache", "prune"]);
    assert_eq!(size(&env)["downloads"]["bytes"].as_u64(), Some(wheel));
    // The variable overrides the file, either way.
    s.envs.push(("CUDAENV_KEEP_DOWNLOADS".into(), "0".into()));
    s.run(&["cache", "size"]);
    s.run(&["cache", "prune"]);
    assert_eq!(size(&env)["downloads"]["bytes"].as_u64(), Some(0));
    s.snapshot("disk_keep_downloads");
}
