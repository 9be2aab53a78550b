//! The host compiler nvcc hands the host half of a `.cu` file to, and the
//! newest one each CUDA release accepts.
//!
//! nvcc refuses a host compiler newer than its release knows, with an
//! `#error` in `crt/host_config.h` ("unsupported GNU version! gcc versions
//! later than 12 are not supported!"). The table
//! (`registry/compat/host_compiler.toml`) is read from that header of each
//! release's nvcc by `scripts/gen-host-compilers.py`, so it is the rule nvcc
//! applies. Which compiler nvcc uses is, in order: `-ccbin` in
//! `NVCC_PREPEND_FLAGS` (every nvcc since 11.x reads it), `NVCC_CCBIN`
//! (nvcc 12.x and later), else `gcc`/`g++` from PATH. A compiler is known by
//! what it says of itself (`--version`, `-dumpversion`), never by its name:
//! `g++` is often a link to a numbered one.
//!
//! The `host-compiler` setting (`CUDAENV_HOST_COMPILER`) points nvcc at a
//! compiler: a path or name, or `auto` for the newest installed `g++-N` the
//! active CUDA accepts. Activation then sets `NVCC_PREPEND_FLAGS=-ccbin …`,
//! `NVCC_CCBIN` and `CUDAHOSTCXX` (CMake's), and says so.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;

use crate::spec::Version;

const TOML: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/registry/compat/host_compiler.toml"
));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct Table {
    pub source: String,
    pub release: Vec<Limits>,
}

/// The newest GCC and Clang majors one CUDA release's nvcc accepts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// major.minor
    pub cuda: Version,
    pub gcc_max: u32,
    pub clang_max: u32,
    /// The nvcc build whose header says so.
    pub from: String,
}

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        toml::from_str(TOML)
            .unwrap_or_else(|e| panic!("registry/compat/host_compiler.toml is invalid: {e}"))
    })
}

/// The limits of a CUDA release (by major.minor), if the table has it.
pub fn limits(cuda: &Version) -> Option<&'static Limits> {
    let mm = cuda.truncate(2);
    table().release.iter().find(|l| l.cuda == mm)
}

/// GCC or Clang.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Gcc,
    Clang,
}

/// A host compiler, as it describes itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Compiler {
    pub path: PathBuf,
    pub family: Family,
    pub major: u32,
    /// The version it printed (`12.2.0`).
    pub version: String,
}

impl Compiler {
    /// Does nvcc of a release with these limits accept it?
    pub fn accepted_by(&self, l: &Limits) -> bool {
        match self.family {
            Family::Gcc => self.major <= l.gcc_max,
            Family::Clang => self.major <= l.clang_max,
        }
    }

    pub fn describe(&self) -> String {
        let name = match self.family {
            Family::Gcc => "GCC",
            Family::Clang => "Clang",
        };
        format!("{} ({name} {})", self.path.display(), self.version)
    }
}

impl Limits {
    pub fn describe(&self) -> String {
        format!(
            "CUDA {} accepts GCC up to {} and Clang up to {}",
            self.cuda, self.gcc_max, self.clang_max
        )
    }
}

/// Reads `--version`'s first line: `clang version 16.0.6 …` is Clang;
/// anything else that answers `-dumpfullversion`/`-dumpversion` is GCC.
pub fn parse_version(version_output: &str, dump: &str) -> Option<(Family, u32, String)> {
    let first = version_output.lines().next().unwrap_or("");
    if let Some(i) = first.find("clang version ") {
        let v = first[i + "clang version ".len()..]
            .split_whitespace()
            .next()?
            .to_string();
        let major = v.split('.').next()?.parse().ok()?;
        return Some((Family::Clang, major, v));
    }
    let v = dump.trim().to_string();
    let major = v.split('.').next()?.parse().ok()?;
    Some((Family::Gcc, major, v))
}

/// Asks a compiler what it is (two short runs, 10 s at most each).
pub fn probe(path: &Path) -> Option<Compiler> {
    let run = |args: &[&str]| {
        let mut c = std::process::Command::new(path);
        c.args(args).env("LC_ALL", "C");
        crate::os::process::run(c, Duration::from_secs(10))
            .ok()
            .filter(|o| o.status.is_some_and(|s| s.success()))
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let version = run(&["--version"])?;
    let dump = if version.contains("clang version ") {
        String::new()
    } else {
        run(&["-dumpfullversion"]).or_else(|| run(&["-dumpversion"]))?
    };
    let (family, major, version) = parse_version(&version, &dump)?;
    Some(Compiler {
        path: path.to_path_buf(),
        family,
        major,
        version,
    })
}

/// The `-ccbin` (or `--compiler-bindir`) value in an nvcc flags string.
pub fn ccbin_in(flags: &str) -> Option<&str> {
    let mut words = flags.split_whitespace();
    while let Some(w) = words.next() {
        if w == "-ccbin" || w == "--compiler-bindir" {
            return words.next();
        }
        if let Some(v) = w
            .strip_prefix("-ccbin=")
            .or_else(|| w.strip_prefix("--compiler-bindir="))
        {
            return Some(v);
        }
    }
    None
}

/// `flags` without any `-ccbin X` (the setting replaces them: nvcc refuses
/// two), with `-ccbin <path>` first.
pub fn with_ccbin(flags: &str, path: &Path) -> String {
    let mut out = vec!["-ccbin".to_string(), path.display().to_string()];
    let mut words = flags.split_whitespace();
    while let Some(w) = words.next() {
        if w == "-ccbin" || w == "--compiler-bindir" {
            words.next();
            continue;
        }
        if w.starts_with("-ccbin=") || w.starts_with("--compiler-bindir=") {
            continue;
        }
        out.push(w.to_string());
    }
    out.join(" ")
}

/// The newest `g++-N` in `dirs` (PATH) that nvcc of `limits` accepts, else
/// `g++` itself when it is accepted.
pub fn choose(limits: &Limits, dirs: &[PathBuf]) -> Option<Compiler> {
    let find = |name: &str| {
        dirs.iter()
            .map(|d| d.join(name))
            .find(|p| crate::os::is_executable_file(p))
    };
    let mut candidates: Vec<PathBuf> = (1..=limits.gcc_max)
        .rev()
        .filter_map(|n| find(&format!("g++-{n}")))
        .collect();
    candidates.extend(find("g++"));
    candidates
        .into_iter()
        .filter_map(|p| probe(&p))
        .find(|c| c.accepted_by(limits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_its_inputs_and_the_known_limits() {
        let t = table();
        assert!(t.source.contains("host_config.h"));
        // Every row of the generator's input is a row of the table.
        let tsv = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/registry/inputs/host_config/nvcc_host_config.tsv"
        ))
        .unwrap();
        let rows: Vec<Vec<&str>> = tsv
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(rows.len(), t.release.len());
        for (r, l) in rows.iter().zip(&t.release) {
            assert_eq!(r[0], l.cuda.to_string());
            assert_eq!(r[3].parse::<u32>().unwrap(), l.gcc_max);
            assert_eq!(r[4].parse::<u32>().unwrap(), l.clang_max);
            assert_eq!(format!("{} {}", r[1], r[2]), l.from);
        }
        let gcc = |v: &str| limits(&v.parse().unwrap()).map(|l| l.gcc_max);
        assert_eq!(gcc("11.8.0"), Some(11));
        assert_eq!(gcc("12.3"), Some(12));
        assert_eq!(gcc("12.4.1"), Some(13));
        assert_eq!(gcc("12.6"), Some(13));
        assert_eq!(gcc("12.8"), Some(14));
        assert_eq!(gcc("13.0"), Some(15));
        assert_eq!(gcc("13.5"), Some(16));
        assert_eq!(gcc("10.2"), None);
    }

    #[test]
    fn compilers_say_what_they_are() {
        assert_eq!(
            parse_version("g++ (Debian 12.2.0-14) 12.2.0\n", "12.2.0\n"),
            Some((Family::Gcc, 12, "12.2.0".into()))
        );
        assert_eq!(
            parse_version(
                "Debian clang version 16.0.6 (15~deb12u1)\nTarget: x86_64\n",
                ""
            ),
            Some((Family::Clang, 16, "16.0.6".into()))
        );
        assert_eq!(parse_version("", ""), None);
        let l = limits(&"11.8".parse().unwrap()).unwrap();
        let c = |family, major| Compiler {
            path: "/usr/bin/x".into(),
            family,
            major,
            version: major.to_string(),
        };
        assert!(c(Family::Gcc, 11).accepted_by(l));
        assert!(!c(Family::Gcc, 12).accepted_by(l));
        assert!(c(Family::Clang, 14).accepted_by(l));
        assert!(!c(Family::Clang, 15).accepted_by(l));
    }

    #[test]
    fn ccbin_flags_are_read_and_replaced() {
        assert_eq!(
            ccbin_in("-O2 -ccbin /usr/bin/g++-12 -g"),
            Some("/usr/bin/g++-12")
        );
        assert_eq!(ccbin_in("--compiler-bindir=/opt/gcc"), Some("/opt/gcc"));
        assert_eq!(ccbin_in("-O2"), None);
        assert_eq!(
            with_ccbin(
                "-O2 -ccbin /usr/bin/g++-12 -g",
                Path::new("/usr/bin/g++-11")
            ),
            "-ccbin /usr/bin/g++-11 -O2 -g"
        );
        assert_eq!(with_ccbin("", Path::new("/x/g++")), "-ccbin /x/g++");
        assert_eq!(
            with_ccbin("--compiler-bindir=/a -ccbin=/b -lineinfo", Path::new("/c")),
            "-ccbin /c -lineinfo"
        );
    }
}
