//! Hostile wheels through the whole install (issue §1, end to end): every
//! refused case of the zip battery is served by a loopback PyPI index with
//! its correct sha256, and `cudaenv install` must exit 4 naming the member,
//! list no version, leave `versions/.staging` empty, and change nothing in
//! the temporary HOME and root outside the download cache and lock files.

use std::path::Path;

use super::hostile_zip::{Expect, cases};
use super::support::{Snapshot, diff, snapshot};
use super::zipbuild::build;
use crate::common::TestEnv;
use crate::pypi::{Mode, Server, install_from, sha256, versions};

/// What an install may legitimately leave behind after a refusal.
fn outside_cache(s: &Snapshot) -> Snapshot {
    let mut s = s.clone();
    s.retain(|p, _| {
        !(p.starts_with("root/cache")
            || p.starts_with("root/versions/.locks")
            || p.starts_with("root/versions/.staging")
            || p == Path::new("root")
            || p == Path::new("root/versions"))
    });
    s
}

#[test]
fn hostile_wheels_install_nothing_and_name_the_member() {
    let mut failures = Vec::new();
    let mut count = 0;
    for c in cases() {
        let Expect::Refused(needle) = c.expect else {
            continue;
        };
        if c.limits.max_entries < 1000 {
            continue; // needs a lowered limit: library-level only
        }
        let wheel = build(&c.members, &c.trailing);
        let srv = Server::start(wheel.clone(), sha256(&wheel), Mode::Normal);
        let env = TestEnv::new();
        std::fs::create_dir_all(env.path("outside")).unwrap();
        std::fs::write(env.path("outside/victim"), "original").unwrap();
        let before = outside_cache(&snapshot(env.tmp.path()));
        let o = install_from(&env, &srv, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        let after = outside_cache(&snapshot(env.tmp.path()));
        let changed = diff(&before, &after);
        let staging: Vec<_> = std::fs::read_dir(env.root.join("versions/.staging"))
            .map(|r| r.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        let listed = versions(&env);
        if o.status.code() != Some(4)
            || !err.contains(needle)
            || !changed.is_empty()
            || !staging.is_empty()
            || !listed.trim().is_empty()
        {
            failures.push(format!(
                "{}: exit {:?}, names `{needle}`: {}, changed {changed:?}, staging {staging:?}, listed {listed:?}\n  {err}",
                c.label,
                o.status.code(),
                err.contains(needle)
            ));
        }
        count += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count >= 25, "{count}");
}
