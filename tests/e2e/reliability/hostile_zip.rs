//! Hostile zips and wheels (issue §1) against the zip unpacker.
//!
//! Each archive is unpacked into a fresh `dest/` inside a sandbox that also
//! holds an `outside/` directory with a file an escape would overwrite. A
//! refused archive must fail with `BadArchive` naming the member (exit code
//! 4, "integrity"), and nothing outside `dest/` may change. The install-level
//! check (no version listed after a refused wheel) is in the install battery.

use cudaenv::error::{Error, ExitCode, InstallError};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cudaenv::install::slots::Slots;
use cudaenv::install::sources::Layout;
use cudaenv::install::unpack::{Limits, zip::unpack};

use super::support::{diff, snapshot};
use super::zipbuild::{Member, build, deflate, dir, file, raw_file, symlink};

const LIB: &str = "nvidia/cuda_runtime/lib";

fn lib(name: &str) -> String {
    format!("{LIB}/{name}")
}

/// What a case must produce.
pub enum Expect {
    /// Refused; the message must contain this text (the member's name).
    Refused(&'static str),
    /// Accepted, and then this must hold of the unpacked tree.
    Accepted(fn(&Path)),
}

pub struct Case {
    pub label: &'static str,
    pub members: Vec<Member>,
    pub trailing: Vec<u8>,
    pub limits: Limits,
    pub expect: Expect,
}

fn case(label: &'static str, members: Vec<Member>, expect: Expect) -> Case {
    Case {
        label,
        members,
        trailing: Vec::new(),
        limits: Limits::default(),
        expect,
    }
}

/// `len` bytes that compress somewhat, like code (not all zeros).
fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678;
    (0..len)
        .map(|i| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if i % 7 < 3 {
                (x >> 24) as u8
            } else {
                (i / 64) as u8
            }
        })
        .collect()
}

fn ok_file() -> Member {
    file(&lib("libok.so.1"), b"fine")
}

pub fn cases() -> Vec<Case> {
    use Expect::*;
    let mut v = vec![
        case(
            "zip-slip ../",
            vec![ok_file(), file("../escaped", b"x")],
            Refused("../escaped"),
        ),
        case(
            "traversal inside a wheel path",
            vec![file("nvidia/cuda_runtime/../../../escaped", b"x")],
            Refused("nvidia/cuda_runtime/../../../escaped"),
        ),
        case(
            "absolute path",
            vec![file("/tmp/escaped-abs", b"x")],
            Refused("/tmp/escaped-abs"),
        ),
        case(
            "backslash traversal",
            vec![file("nvidia\\cuda_runtime\\..\\..\\escaped", b"x")],
            Refused("escaped"),
        ),
        case(
            "drive letter",
            vec![file("C:/escaped", b"x")],
            Refused("C:/escaped"),
        ),
        case(
            "drive-relative",
            vec![file("c:escaped", b"x")],
            Refused("c:escaped"),
        ),
        case(
            "absolute symlink",
            vec![symlink(&lib("libpasswd.so"), "/etc/passwd")],
            Refused("libpasswd.so"),
        ),
        case(
            "symlink to ..",
            vec![symlink(&lib("up"), "../../..")],
            Refused("up"),
        ),
        case(
            "symlink then a write through it",
            vec![symlink(&lib("d"), "."), file(&lib("d/written"), b"x")],
            Refused("d/written"),
        ),
        case(
            "chained symlinks climbing out",
            vec![symlink(&lib("q"), "."), symlink(&lib("p"), "q/../../../..")],
            Refused("p"),
        ),
        case(
            "duplicate member",
            vec![file(&lib("libdup.so"), b"a"), file(&lib("libdup.so"), b"b")],
            Refused("duplicate"),
        ),
        case(
            "duplicate changing type (file then dir)",
            vec![
                file(&lib("x"), b"a"),
                dir(&format!("{}/", lib("x"))),
                file(&lib("x/y"), b"b"),
            ],
            Refused("x"),
        ),
        case(
            "duplicate changing type (file then symlink)",
            vec![
                file(&lib("libz.so"), b"a"),
                symlink(&lib("libz.so"), "libok.so.1"),
            ],
            Refused("libz.so"),
        ),
        case(
            "character device",
            vec![Member {
                mode: 0o020644,
                ..file(&lib("tty"), b"")
            }],
            Refused("tty"),
        ),
        case(
            "FIFO",
            vec![Member {
                mode: 0o010644,
                ..file(&lib("fifo"), b"")
            }],
            Refused("fifo"),
        ),
        case(
            "local header name differs from the central directory",
            vec![Member {
                local_name: Some(b"../../escaped-local".to_vec()),
                ..file(&lib("innocent.so"), b"x")
            }],
            Refused("innocent.so"),
        ),
        case(
            "declared size smaller than the data",
            vec![Member {
                size: Some(2),
                ..file(&lib("libbig.so"), &[7u8; 4096])
            }],
            Refused("libbig.so"),
        ),
        case(
            "bad CRC",
            vec![Member {
                crc: Some(0xdeadbeef),
                ..file(&lib("libcrc.so"), b"hello")
            }],
            Refused("libcrc.so"),
        ),
        case(
            "bad CRC on a large deflated member",
            vec![Member {
                crc: Some(0xdeadbeef),
                deflate: true,
                ..file(&lib("libcrcbig.so"), &pattern(3 << 20))
            }],
            Refused("libcrcbig.so"),
        ),
        case(
            "declared size larger than the deflated data",
            vec![Member {
                size: Some((3 << 20) + 1),
                deflate: true,
                ..file(&lib("libshort.so"), &pattern(3 << 20))
            }],
            Refused("libshort.so"),
        ),
        case(
            "corrupt deflate stream",
            vec![Member {
                deflate: true,
                body: Some({
                    let mut b = deflate(&pattern(2 << 20));
                    let mid = b.len() / 2;
                    b[mid..mid + 64].fill(0xff);
                    b
                }),
                ..file(&lib("libcorrupt.so"), &pattern(2 << 20))
            }],
            Refused("libcorrupt.so"),
        ),
        case(
            "large deflated and stored members come out byte for byte",
            vec![
                Member {
                    deflate: true,
                    ..file(&lib("libbig.so.1"), &pattern(5 << 20))
                },
                file(&lib("libstored.so.1"), &pattern((2 << 20) + 17)),
            ],
            Accepted(|dest| {
                let got = std::fs::read(dest.join("lib64/libbig.so.1")).unwrap();
                assert!(got == pattern(5 << 20), "libbig.so.1 differs");
                let got = std::fs::read(dest.join("lib64/libstored.so.1")).unwrap();
                assert!(got == pattern((2 << 20) + 17), "libstored.so.1 differs");
            }),
        ),
        case(
            "compression bomb with a lying size",
            vec![Member {
                size: Some(1024),
                deflate: true,
                ..file(&lib("libbomb.so"), &vec![0u8; 64 << 20])
            }],
            Refused("libbomb.so"),
        ),
        case(
            "declared sizes beyond the expansion limit",
            (0..20)
                .map(|i| Member {
                    size: Some(0xFFFF_FFF0),
                    ..file(&lib(&format!("huge{i}")), b"x")
                })
                .collect(),
            Refused("huge"),
        ),
        case(
            "overlapping members (one body, many names)",
            {
                let mut m = vec![Member {
                    deflate: true,
                    ..file(&lib("o0"), &vec![0u8; 1 << 20])
                }];
                for i in 1..8 {
                    m.push(Member {
                        reuse_local_of: Some(0),
                        deflate: true,
                        ..file(&lib(&format!("o{i}")), &vec![0u8; 1 << 20])
                    });
                }
                m
            },
            Refused("o1"),
        ),
        case(
            "cudaenv's own completeness marker",
            vec![
                ok_file(),
                file("nvidia/cuda_runtime/.cudaenv/complete", b""),
            ],
            Refused(".cudaenv/complete"),
        ),
        case(
            "cudaenv's own metadata",
            vec![file(
                "nvidia/cuda_runtime/.cudaenv/meta.toml",
                b"schema = 1",
            )],
            Refused(".cudaenv/meta.toml"),
        ),
        case(
            "NUL in a name",
            vec![raw_file(b"nvidia/cuda_runtime/lib/a\0b", b"x")],
            Refused("lib/a"),
        ),
        case(
            "newline in a name",
            vec![raw_file(b"nvidia/cuda_runtime/lib/a\nb", b"x")],
            Refused("lib/a"),
        ),
        case(
            "non-UTF-8 name",
            vec![raw_file(b"nvidia/cuda_runtime/lib/\xff\xfe.so", b"x")],
            Refused("lib/"),
        ),
        case(
            "absurd depth",
            vec![file(&format!("{LIB}/{}f", "d/".repeat(3000)), b"x")],
            Refused("d/d/d"),
        ),
        case(
            "overlong component",
            vec![file(&lib(&"n".repeat(300)), b"x")],
            Refused("nnnn"),
        ),
        case(
            "encrypted member",
            vec![Member {
                flags: 1,
                ..file(&lib("libenc.so"), b"x")
            }],
            Refused("libenc.so"),
        ),
        case(
            "setuid and world-writable modes are stripped",
            vec![
                Member {
                    mode: 0o104777,
                    ..file(&lib("libsuid.so"), b"x")
                },
                Member {
                    mode: 0o100666,
                    ..file(&lib("libww.so"), b"y")
                },
            ],
            Accepted(|dest| {
                let m = |n: &str| {
                    std::fs::metadata(dest.join("lib64").join(n))
                        .unwrap()
                        .permissions()
                        .mode()
                        & 0o7777
                };
                assert_eq!(m("libsuid.so"), 0o755);
                assert_eq!(m("libww.so"), 0o644);
            }),
        ),
    ];
    v.push(Case {
        trailing: b"GARBAGE AFTER THE END RECORD".to_vec(),
        ..case("trailing garbage", vec![ok_file()], Refused("trailing"))
    });
    v.push(Case {
        limits: Limits {
            max_entries: 100,
            ..Limits::default()
        },
        ..case(
            "more members than the limit",
            (0..101)
                .map(|i| file(&lib(&format!("m{i}")), b""))
                .collect(),
            Refused("too many"),
        )
    });
    v
}

/// Every path under `dest` resolves (following links) inside `dest`.
fn assert_contained(dest: &Path) {
    let canon = dest.canonicalize().unwrap();
    for e in walk(dest) {
        if let Ok(real) = e.canonicalize() {
            assert!(
                real.starts_with(&canon),
                "{} escapes to {}",
                e.display(),
                real.display()
            );
        }
    }
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            out.push(e.path());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(walk(&e.path()));
            }
        }
    }
    out
}

/// Runs one case; `Err` says what went wrong. `Ok(true)`: refused as expected.
fn run(c: &Case) -> Result<bool, String> {
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = tmp.path();
    std::fs::create_dir_all(sandbox.join("outside")).unwrap();
    std::fs::write(sandbox.join("outside/victim"), "original").unwrap();
    let archive = sandbox.join("evil-1.0-py3-none-manylinux2014_x86_64.whl");
    std::fs::write(&archive, build(&c.members, &c.trailing)).unwrap();
    let dest = sandbox.join("dest");
    std::fs::create_dir(&dest).unwrap();
    let mut before = snapshot(sandbox);
    let cores = Slots::new(2);
    let result = unpack(&archive, "evil.whl", Layout::Wheel, &dest, c.limits, &cores);
    let mut after = snapshot(sandbox);
    after.retain(|p, _| !p.starts_with("dest/"));
    before.retain(|p, _| !p.starts_with("dest/"));
    let changed = diff(&before, &after);
    if !changed.is_empty() {
        return Err(format!("{}: wrote outside dest: {changed:?}", c.label));
    }
    assert_contained(&dest);
    match (&c.expect, result) {
        (Expect::Refused(needle), Err(e)) => {
            let msg = e.to_string();
            let named = matches!(&e, Error::Install(InstallError::BadArchive { .. }))
                && msg.contains(needle);
            if !named || e.exit_code() != ExitCode::Integrity {
                return Err(format!(
                    "{}: refused, but not as a bad archive naming `{needle}` with exit code 4: {msg} ({:?})",
                    c.label,
                    e.exit_code()
                ));
            }
            Ok(true)
        }
        (Expect::Refused(_), Ok(s)) => Err(format!("{}: accepted ({s:?})", c.label)),
        (Expect::Accepted(check), Ok(_)) => {
            check(&dest);
            Ok(false)
        }
        (Expect::Accepted(_), Err(e)) => Err(format!("{}: refused: {e}", c.label)),
    }
}

/// Runs the case of that label alone (for the regression tests named after bugs).
pub fn run_case(label: &str) {
    let c = cases().into_iter().find(|c| c.label == label).expect(label);
    run(&c).unwrap();
}

#[test]
fn hostile_zips_are_refused_naming_the_member_and_nothing_escapes() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut refused = 0;
    for c in &cases {
        match run(c) {
            Ok(true) => refused += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(refused >= 25, "only {refused} refusals");
}
