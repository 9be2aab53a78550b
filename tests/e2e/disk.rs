//! What the cache costs, and giving it back: `cache size`, `cache prune`,
//! and what `uninstall` says remains (live PyPI, the ~1 MB cudart wheel).

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
    let wheel = s["downloads"]["bytes"].as_u64().unwrap();
    assert!(wheel > 100_000, "{s}");
    // The package's files are the version's too (hard links): not freeable,
    // but for the store's own bookkeeping (its file list).
    let pkgs = s["pkgs"]["bytes"].as_u64().unwrap();
    assert!(
        pkgs > 0 && s["pkgs"]["freeable"].as_u64().unwrap() < pkgs / 100,
        "{s}"
    );

    // Nothing to prune while the version is installed.
    let o = env.run(&["cache", "prune"]);
    assert!(text(&o).contains("freed 0 B (0 files)"), "{}", text(&o));
    assert_eq!(size(&env)["downloads"]["bytes"].as_u64(), Some(wheel));

    let o = env.run(&["uninstall", "12.4.1", "-y"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(
            "that no installed version was installed from; `cudaenv cache prune` frees it"
        ),
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
