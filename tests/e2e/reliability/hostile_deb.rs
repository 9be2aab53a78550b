//! Hostile Debian packages: the `ar` framing of a `.deb` and what Debian's
//! layout takes from its data. (The tar rules themselves run over a `.deb`
//! in `hostile_tar`, as a fourth form.)
//!
//! The archives are written byte by byte here, so framing no real tool would
//! produce (sizes past the end, members out of order, bytes after the last
//! member) can be built. Every case unpacks into a fresh `dest/` beside an
//! `outside/` directory: a refusal must be `BadArchive` (exit code 4) naming
//! the offending member or fault, and nothing outside `dest/` may change.

use cudaenv::error::{Error, ExitCode, InstallError};
use std::path::Path;

use cudaenv::install::sources::Layout;
use cudaenv::install::unpack::{Limits, deb};

use super::support::{diff, snapshot};
use super::tarbuild::{build, dir, file, symlink, xz};

/// One `ar` member header (common format, GNU `/`-terminated names) + data.
fn member(name: &str, declared: usize, data: &[u8]) -> Vec<u8> {
    let mut h = format!(
        "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
        format!("{name}/"),
        0,
        0,
        0,
        100644,
        declared
    )
    .into_bytes();
    assert_eq!(h.len(), 60, "{name}");
    h.extend_from_slice(data);
    if declared % 2 == 1 && declared == data.len() {
        h.push(b'\n');
    }
    h
}

/// A member header with the name and size fields exactly as given.
fn raw_member(name: &str, size: &str, data: &[u8]) -> Vec<u8> {
    let mut h = format!(
        "{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n",
        0, 0, 0, 100644
    )
    .into_bytes();
    assert_eq!(h.len(), 60, "{name}");
    h.extend_from_slice(data);
    h
}

/// A `.deb`-shaped `ar` archive of `members`.
pub fn deb(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        out.extend(member(name, data.len(), data));
    }
    out
}

fn version() -> (&'static str, Vec<u8>) {
    ("debian-binary", b"2.0\n".to_vec())
}

fn control() -> (&'static str, Vec<u8>) {
    ("control.tar.xz", xz(&build(&[], &[])))
}

/// A data.tar as Debian builds them: `./` first, the library, its soname
/// link, and documentation the layout leaves out.
fn good_data() -> Vec<u8> {
    build(
        &[
            dir("./"),
            dir("./usr/"),
            file("./usr/lib/x86_64-linux-gnu/libcudart.so.11.2.152", b"ELF"),
            file("./usr/share/doc/libcudart11.0/copyright", b"(c)"),
            symlink(
                "./usr/lib/x86_64-linux-gnu/libcudart.so.11.0",
                "libcudart.so.11.2.152",
            ),
        ],
        &[],
    )
}

enum Expect {
    Refused(&'static str),
    Accepted,
}

fn cases() -> Vec<(&'static str, Vec<u8>, Expect)> {
    use Expect::*;
    let data = || ("data.tar.xz", xz(&good_data()));
    let with_data = |tar: Vec<u8>| deb(&[version(), control(), ("data.tar.xz", xz(&tar))]);
    let truncated = {
        let mut b = deb(&[version(), control()]);
        b.extend(member("data.tar.xz", 1 << 20, &xz(&good_data())));
        b
    };
    let zst_escape = ruzstd::encoding::compress_to_vec(
        &build(&[file("../../escaped", b"x")], &[])[..],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    vec![
        (
            "a real-shaped package",
            deb(&[version(), control(), data()]),
            Accepted,
        ),
        (
            "not an ar archive",
            b"#!/bin/sh\nrm -rf ~\n".to_vec(),
            Refused("not a Debian package"),
        ),
        (
            "a truncated member header",
            b"!<arch>\ndebian-binary/  0     ".to_vec(),
            Refused("not a Debian package"),
        ),
        (
            "a member declaring more bytes than the file has",
            truncated,
            Refused("truncated"),
        ),
        (
            "a GNU long-name reference without a name table",
            [
                deb(&[version(), control()]),
                raw_member("/123", "4", b"data"),
            ]
            .concat(),
            Refused("extended names"),
        ),
        (
            "a GNU name table claiming 9 GB",
            [deb(&[version()]), raw_member("//", "9999999999", b"x")].concat(),
            Refused("extended names"),
        ),
        (
            "a BSD long name of absurd length",
            [
                deb(&[version()]),
                raw_member("#1/9999999999", "9999999999", b"x"),
            ]
            .concat(),
            Refused("extended names"),
        ),
        (
            "a size that is not a number",
            [
                deb(&[version()]),
                raw_member("control.tar.xz/", "12a", b"x"),
            ]
            .concat(),
            Refused("bad member size"),
        ),
        (
            "an odd-sized member without its padding",
            [
                b"!<arch>\n".to_vec(),
                raw_member("debian-binary/", "5", b"2.0\n\n"),
                member("control.tar.xz", 4, b"abcd"),
            ]
            .concat(),
            Refused("padding"),
        ),
        (
            "format version 3.0",
            deb(&[("debian-binary", b"3.0\n".to_vec()), control(), data()]),
            Refused("3.0"),
        ),
        (
            "data before debian-binary",
            deb(&[data(), version(), control()]),
            Refused("debian-binary"),
        ),
        (
            "no data member",
            deb(&[version(), control()]),
            Refused("no data member"),
        ),
        (
            "an unknown data compression",
            deb(&[version(), control(), ("data.tar.bz2", b"BZh9".to_vec())]),
            Refused("data.tar.bz2"),
        ),
        (
            "a path as a member name",
            deb(&[version(), control(), ("../data.tar.xz", xz(&good_data()))]),
            Refused("../data.tar.xz"),
        ),
        (
            "a second data member",
            deb(&[version(), control(), data(), data()]),
            Refused("after data.tar"),
        ),
        (
            "garbage after the last member",
            [
                deb(&[version(), control(), data()]),
                b"PK\x03\x04junk".to_vec(),
            ]
            .concat(),
            Refused("not a Debian package"),
        ),
        (
            "bytes after the xz stream",
            deb(&[
                version(),
                control(),
                (
                    "data.tar.xz",
                    [xz(&good_data()), b"hidden".to_vec()].concat(),
                ),
            ]),
            Refused("data.tar.xz"),
        ),
        (
            "a zstd data member escaping the tree",
            deb(&[version(), control(), ("data.tar.zst", zst_escape)]),
            Refused("escaped"),
        ),
        (
            "a library linked to an absolute path",
            with_data(build(
                &[symlink(
                    "./usr/lib/x86_64-linux-gnu/libcudart.so.11.0",
                    "/etc/passwd",
                )],
                &[],
            )),
            Refused("libcudart.so.11.0"),
        ),
        (
            "a library linked out of the tree",
            with_data(build(
                &[symlink(
                    "./usr/lib/x86_64-linux-gnu/libcublas.so.11",
                    "../../../../etc/shadow",
                )],
                &[],
            )),
            Refused("libcublas.so.11"),
        ),
        (
            "cudaenv's metadata through the layout",
            with_data(build(
                &[file(
                    "./usr/lib/x86_64-linux-gnu/../../../.cudaenv/complete",
                    b"",
                )],
                &[],
            )),
            Refused(".."),
        ),
    ]
}

fn run(label: &str, bytes: &[u8], expect: &Expect) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let sb = tmp.path();
    std::fs::create_dir_all(sb.join("outside")).unwrap();
    std::fs::write(sb.join("outside/victim"), "original").unwrap();
    let dest = sb.join("dest");
    std::fs::create_dir(&dest).unwrap();
    let archive = sb.join("archive.deb");
    std::fs::write(&archive, bytes).unwrap();
    let mut before = snapshot(sb);
    let layout = Layout::Debian {
        triplet: "x86_64-linux-gnu".into(),
    };
    let result = deb::unpack_file(&archive, "evil.deb", layout, &dest, Limits::default());
    let mut after = snapshot(sb);
    before.retain(|p, _| !p.starts_with("dest/"));
    after.retain(|p, _| !p.starts_with("dest/"));
    let changed = diff(&before, &after);
    if !changed.is_empty() {
        return Err(format!("{label}: wrote outside dest: {changed:?}"));
    }
    match (expect, result) {
        (Expect::Refused(needle), Err(e)) => {
            let msg = e.to_string();
            if matches!(e, Error::Install(InstallError::BadArchive { .. }))
                && msg.contains(needle)
                && e.exit_code() == ExitCode::Integrity
            {
                Ok(())
            } else {
                Err(format!(
                    "{label}: refused but not naming `{needle}` with exit 4: {msg}"
                ))
            }
        }
        (Expect::Refused(_), Ok(s)) => Err(format!("{label}: accepted ({s:?})")),
        (Expect::Accepted, Ok(_)) => {
            let lib = dest.join("lib64");
            if std::fs::read(lib.join("libcudart.so.11.2.152"))
                .ok()
                .as_deref()
                != Some(b"ELF")
                || std::fs::read_link(lib.join("libcudart.so.11.0"))
                    .ok()
                    .as_deref()
                    != Some(Path::new("libcudart.so.11.2.152"))
                || dest.join("usr").exists()
                || dest.join("share").exists()
            {
                return Err(format!("{label}: unexpected tree {:?}", snapshot(&dest)));
            }
            Ok(())
        }
        (Expect::Accepted, Err(e)) => Err(format!("{label}: refused: {e}")),
    }
}

#[test]
fn hostile_debian_packages_are_refused_and_nothing_escapes() {
    let mut failures = Vec::new();
    let all = cases();
    for (label, bytes, expect) in &all {
        if let Err(e) = run(label, bytes, expect) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
