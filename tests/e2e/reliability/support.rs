//! Helpers shared by the battery: tree snapshots, a fake installed version,
//! running a command with a deadline.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What a snapshot records of one entry: enough to see any change a command
/// could make (type, permissions, size, modification time, content digest,
/// link target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: &'static str,
    pub mode: u32,
    pub size: u64,
    pub mtime_ns: i128,
    pub digest: Option<u64>,
    pub link: Option<PathBuf>,
}

/// Every entry under `root` (not following symlinks), keyed by relative path.
pub type Snapshot = BTreeMap<PathBuf, Entry>;

pub fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let ft = m.file_type();
        use std::os::unix::fs::FileTypeExt;
        let kind = if ft.is_symlink() {
            "symlink"
        } else if ft.is_dir() {
            "dir"
        } else if ft.is_file() {
            "file"
        } else if ft.is_fifo() {
            "fifo"
        } else {
            "other"
        };
        let digest = if ft.is_file() && m.len() <= 8 << 20 {
            std::fs::read(&p).ok().map(|b| fnv(&b))
        } else {
            None
        };
        out.insert(
            p.strip_prefix(root).unwrap().to_path_buf(),
            Entry {
                kind,
                mode: m.permissions().mode(),
                size: if ft.is_dir() { 0 } else { m.len() },
                mtime_ns: if ft.is_dir() {
                    0
                } else {
                    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128
                },
                digest,
                link: std::fs::read_link(&p).ok(),
            },
        );
        if ft.is_dir() {
            walk(root, &p, out);
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// A readable description of what differs between two snapshots.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (p, e) in after {
        match before.get(p) {
            None => out.push(format!("created {}", p.display())),
            Some(b) if b != e => out.push(format!("changed {}: {b:?} -> {e:?}", p.display())),
            _ => {}
        }
    }
    for p in before.keys() {
        if !after.contains_key(p) {
            out.push(format!("removed {}", p.display()));
        }
    }
    out
}

/// Creates a complete installed version `name` (CUDA `cuda`) directly in the
/// store at `root`, with `bin/` and `lib64/`, as an install would leave it.
pub fn fake_version(root: &Path, name: &str, cuda: &str) -> PathBuf {
    let dir = root.join("versions").join(name);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(dir.join("lib64")).unwrap();
    std::fs::create_dir_all(dir.join(".cudaenv")).unwrap();
    let nvcc = dir.join("bin/nvcc");
    std::fs::write(&nvcc, "#!/bin/sh\necho fake nvcc\n").unwrap();
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join(".cudaenv/meta.toml"),
        format!(
            "schema = 1\nkind = \"installed\"\ncuda = \"{cuda}\"\nbin_dirs = [\"bin\"]\n\
             lib_dirs = [\"lib64\"]\nhome = \".\"\nsource = \"test\"\ncreated = 0\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join(".cudaenv/complete"), "").unwrap();
    dir
}

/// Runs `cmd` to completion, killing it after `limit` (a hang is a failure,
/// reported as such, not a stuck test suite). Stdin is closed.
pub fn run_with_deadline(cmd: &mut Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} did not finish within {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Parses the NUL-separated output of `env -0` into a map.
pub fn parse_env0(bytes: &[u8]) -> BTreeMap<OsString, OsString> {
    use std::os::unix::ffi::OsStrExt;
    bytes
        .split(|&b| b == 0)
        .filter(|kv| !kv.is_empty())
        .filter_map(|kv| {
            let i = kv.iter().position(|&b| b == b'=')?;
            Some((
                std::ffi::OsStr::from_bytes(&kv[..i]).to_os_string(),
                std::ffi::OsStr::from_bytes(&kv[i + 1..]).to_os_string(),
            ))
        })
        .collect()
}

/// True when this process runs as root (permission tests then drop the
/// capabilities that bypass file modes, see `without_dac_override`).
pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Wraps `program` so it runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH
/// when we are root: file modes then apply to it as to any user, which is what
/// "an unreadable file" and "a read-only root" mean. Not root: unchanged.
pub fn without_dac_override(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-all",
            "--",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}
