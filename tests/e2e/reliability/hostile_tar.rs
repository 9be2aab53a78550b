//! Hostile tarballs (issue §1) in the four forms cudaenv reads: `.tar.xz`
//! (NVIDIA redist), `.tgz` (legacy cuDNN), the payload of a runfile and the
//! `data.tar.xz` of a Debian package (`.deb`; its own `ar` framing has its
//! battery in `hostile_deb`).
//!
//! Every case is unpacked into a fresh `dest/` in a sandbox next to an
//! `outside/` directory; a refusal must be `BadArchive` (exit code 4) whose
//! message contains the member's name, and nothing outside `dest/` may change.

use cudaenv::error::{Error, ExitCode, InstallError};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cudaenv::install::sources::{ArchiveFormat, Layout};
use cudaenv::install::unpack::{Limits, deb, runfile, tar};

use super::support::{diff, snapshot};
use super::tarbuild::{TarEntry, build, dir, entry, file, gz, hardlink, symlink, xz};

enum Expect {
    Refused(&'static str),
    Accepted(fn(&Path)),
}

struct Case {
    label: &'static str,
    entries: Vec<TarEntry>,
    trailing: Vec<u8>,
    limits: Limits,
    expect: Expect,
}

fn case(label: &'static str, entries: Vec<TarEntry>, expect: Expect) -> Case {
    Case {
        label,
        entries,
        trailing: Vec::new(),
        limits: Limits::default(),
        expect,
    }
}

/// The cases, with member names under `top` (the directory the layout keeps).
fn cases(top: &str) -> Vec<Case> {
    use Expect::*;
    let p = |rel: &str| format!("{top}/{rel}");
    let ok = || file(&p("lib/libok.so.1"), b"fine");
    let mut v = vec![
        case(
            "../ member",
            vec![ok(), file("../escaped", b"x")],
            Refused("../escaped"),
        ),
        case(
            "absolute member",
            vec![file("/tmp/escaped-abs", b"x")],
            Refused("/tmp/escaped-abs"),
        ),
        case(
            "a/../../x",
            vec![file(&p("lib/../../../escaped"), b"x")],
            Refused("escaped"),
        ),
        case(
            "absolute symlink",
            vec![symlink(&p("lib/libpw.so"), "/etc/passwd")],
            Refused("libpw.so"),
        ),
        case(
            "symlink to ..",
            vec![symlink(&p("up"), "../..")],
            Refused("up"),
        ),
        case(
            "symlink then a write through it",
            vec![symlink(&p("lib/d"), "."), file(&p("lib/d/written"), b"x")],
            Refused("written"),
        ),
        case(
            "chained symlinks",
            vec![
                symlink(&p("lib/q"), "."),
                symlink(&p("lib/r"), "q/../../.."),
            ],
            Refused("r"),
        ),
        case(
            "absolute hardlink",
            vec![hardlink(&p("lib/hl"), "/etc/passwd")],
            Refused("hl"),
        ),
        case(
            "escaping hardlink",
            vec![hardlink(&p("lib/hl"), "../../etc/passwd")],
            Refused("hl"),
        ),
        case(
            "hardlink then a regular member at the same path",
            vec![
                ok(),
                hardlink(&p("lib/hl"), &p("lib/libok.so.1")),
                file(&p("lib/hl"), b"over"),
            ],
            Refused("hl"),
        ),
        case(
            "hardlink to a symlink",
            vec![
                symlink(&p("lib/s"), "libok.so.1"),
                ok(),
                hardlink(&p("lib/h"), &p("lib/s")),
            ],
            Refused("h"),
        ),
        case(
            "duplicate changing type (file then directory)",
            vec![file(&p("lib/x"), b"a"), dir(&p("lib/x/"))],
            Refused("x"),
        ),
        case(
            "duplicate changing type (directory then symlink)",
            vec![
                dir(&p("inc/")),
                file(&p("inc/a.h"), b"a"),
                symlink(&p("inc"), "lib"),
            ],
            Refused("inc"),
        ),
        case(
            "duplicate file",
            vec![file(&p("lib/a"), b"1"), file(&p("lib/a"), b"2")],
            Refused("lib/a"),
        ),
        case(
            "character device",
            vec![entry(b'3', &p("lib/tty"))],
            Refused("tty"),
        ),
        case(
            "block device",
            vec![entry(b'4', &p("lib/sda"))],
            Refused("sda"),
        ),
        case("FIFO", vec![entry(b'6', &p("lib/fifo"))], Refused("fifo")),
        case(
            "PAX size disagrees with the ustar size",
            vec![TarEntry {
                pax: vec![("size", b"700".to_vec())],
                header_size: Some(5),
                ..file(&p("lib/libpax.so"), &[1u8; 5])
            }],
            Refused("libpax.so"),
        ),
        case(
            "PAX path escaping",
            vec![TarEntry {
                pax: vec![("path", b"../../pax-escaped".to_vec())],
                ..file(&p("lib/innocent"), b"x")
            }],
            Refused("pax-escaped"),
        ),
        case(
            "PAX absolute link target",
            vec![TarEntry {
                pax: vec![("linkpath", b"/etc/shadow".to_vec())],
                ..symlink(&p("lib/libsh.so"), "libok.so.1")
            }],
            Refused("libsh.so"),
        ),
        case(
            "cudaenv's completeness marker",
            vec![ok(), file(&p(".cudaenv/complete"), b"")],
            Refused(".cudaenv/complete"),
        ),
        case(
            "NUL in a name (PAX)",
            vec![TarEntry {
                pax: vec![("path", p("lib/a\0b").into_bytes())],
                ..file(&p("lib/c"), b"x")
            }],
            Refused("lib/a"),
        ),
        case(
            "newline in a name",
            vec![file(&p("lib/a\nb"), b"x")],
            Refused("lib/a"),
        ),
        case(
            "non-UTF-8 name",
            vec![TarEntry {
                name: [p("lib/").as_bytes(), b"\xff\xfe"].concat(),
                ..file("x", b"x")
            }],
            Refused("lib/"),
        ),
        case(
            "absurd depth (GNU long name)",
            vec![TarEntry {
                gnu_long_name: true,
                ..file(&p(&format!("{}f", "d/".repeat(3000))), b"x")
            }],
            Refused("d/d/d"),
        ),
        case(
            "sparse member",
            vec![entry(b'S', &p("lib/sparse"))],
            Refused("sparse"),
        ),
        case(
            "truncated data",
            vec![TarEntry {
                header_size: Some(1 << 20),
                ..file(&p("lib/libcut.so"), b"short")
            }],
            Refused(""),
        ),
        case(
            "setuid and world-writable modes are stripped",
            vec![
                TarEntry {
                    mode: 0o4777,
                    ..file(&p("bin/suid"), b"x")
                },
                TarEntry {
                    mode: 0o666,
                    ..file(&p("lib/ww"), b"y")
                },
                TarEntry {
                    mode: 0o1777,
                    ..dir(&p("share/"))
                },
            ],
            Accepted(|dest| {
                let m = |n: &str| {
                    std::fs::metadata(dest.join(n))
                        .unwrap()
                        .permissions()
                        .mode()
                        & 0o7777
                };
                assert_eq!(m("bin/suid"), 0o755);
                assert_eq!(m("lib64/ww"), 0o644);
                assert_eq!(m("share") & 0o7002, 0, "sticky or world-writable directory");
            }),
        ),
    ];
    v.push(Case {
        trailing: vec![0xAB; 4096],
        ..case(
            "trailing garbage after the end blocks",
            vec![ok()],
            Refused("trailing"),
        )
    });
    v.push(Case {
        limits: Limits {
            max_entries: 50,
            ..Limits::default()
        },
        ..case(
            "more members than the limit",
            (0..60)
                .map(|i| file(&p(&format!("lib/m{i}")), b""))
                .collect(),
            Refused("too many"),
        )
    });
    v.push(Case {
        limits: Limits {
            max_total_bytes: 4 << 20,
            ..Limits::default()
        },
        ..case(
            "decompression bomb past the size limit",
            vec![file(&p("lib/libbomb.so"), &vec![0u8; 16 << 20])],
            Refused("libbomb.so"),
        )
    });
    v
}

#[derive(Clone, Copy, Debug)]
enum Form {
    TarXz,
    Tgz,
    Runfile,
    Deb,
}

fn run(form: Form, c: &Case) -> Result<bool, String> {
    let tmp = tempfile::tempdir().unwrap();
    let sb = tmp.path();
    std::fs::create_dir_all(sb.join("outside")).unwrap();
    std::fs::write(sb.join("outside/victim"), "original").unwrap();
    let dest = sb.join("dest");
    std::fs::create_dir(&dest).unwrap();
    let tar_bytes = build(&c.entries, &c.trailing);
    let archive = sb.join("archive");
    let bytes = match form {
        Form::TarXz => xz(&tar_bytes),
        Form::Tgz => gz(&tar_bytes),
        Form::Runfile => runfile::build(&tar_bytes, runfile::Compression::Xz, "CUDA 11.2.2"),
        Form::Deb => super::hostile_deb::deb(&[
            ("debian-binary", b"2.0\n".to_vec()),
            ("control.tar.xz", xz(&build(&[], &[]))),
            ("data.tar.xz", xz(&tar_bytes)),
        ]),
    };
    std::fs::write(&archive, bytes).unwrap();
    let mut before = snapshot(sb);
    let result = match form {
        Form::TarXz => tar::unpack_file(
            &archive,
            "evil.tar.xz",
            ArchiveFormat::TarXz,
            Layout::StripTop,
            &dest,
            c.limits,
        ),
        Form::Tgz => tar::unpack_file(
            &archive,
            "evil.tgz",
            ArchiveFormat::TarGz,
            Layout::StripTop,
            &dest,
            c.limits,
        ),
        Form::Runfile => runfile::unpack(
            &archive,
            "evil.run",
            Layout::Runfile {
                members: vec!["builds/cuda_cudart".into()],
                optional: vec![],
            },
            &dest,
            c.limits,
        ),
        // The tar rules do not depend on the layout: the members of these
        // cases sit under one top directory, as in a redist archive.
        Form::Deb => deb::unpack_file(&archive, "evil.deb", Layout::StripTop, &dest, c.limits),
    };
    let mut after = snapshot(sb);
    before.retain(|p, _| !p.starts_with("dest/"));
    after.retain(|p, _| !p.starts_with("dest/"));
    let changed = diff(&before, &after);
    let ctx = format!("{form:?} / {}", c.label);
    if !changed.is_empty() {
        return Err(format!("{ctx}: wrote outside dest: {changed:?}"));
    }
    match (&c.expect, result) {
        (Expect::Refused(needle), Err(e)) => {
            let msg = e.to_string();
            let ok = matches!(
                e,
                Error::Install(InstallError::BadArchive { .. })
                    | Error::Install(InstallError::BadRunfile { .. })
            ) && msg.contains(needle)
                && e.exit_code() == ExitCode::Integrity;
            if ok {
                Ok(true)
            } else {
                Err(format!(
                    "{ctx}: refused but not naming `{needle}` with exit 4: {msg} ({:?})",
                    e.exit_code()
                ))
            }
        }
        (Expect::Refused(_), Ok(s)) => Err(format!("{ctx}: accepted ({s:?})")),
        (Expect::Accepted(check), Ok(_)) => {
            check(&dest);
            Ok(false)
        }
        (Expect::Accepted(_), Err(e)) => Err(format!("{ctx}: refused: {e}")),
    }
}

#[test]
fn hostile_tarballs_and_runfile_payloads_are_refused_and_nothing_escapes() {
    let mut failures = Vec::new();
    let mut refused = 0;
    for (form, top) in [
        (Form::TarXz, "cuda_cudart-linux-x86_64-12.4.127-archive"),
        (Form::Tgz, "cuda_cudart-linux-x86_64-12.4.127-archive"),
        (Form::Runfile, "builds/cuda_cudart"),
        (Form::Deb, "cuda_cudart-linux-x86_64-12.4.127-archive"),
    ] {
        for c in cases(top) {
            match run(form, &c) {
                Ok(true) => refused += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(refused >= 100, "{refused}");
}

/// Runs the case of that label in all three forms (for regression tests).
pub fn run_case(label: &str) {
    for (form, top) in [
        (Form::TarXz, "t"),
        (Form::Tgz, "t"),
        (Form::Runfile, "builds/cuda_cudart"),
    ] {
        let c = cases(top)
            .into_iter()
            .find(|c| c.label == label)
            .expect(label);
        run(form, &c).unwrap();
    }
}
