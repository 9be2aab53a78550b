//! Modulefiles for Lmod and Environment Modules: `cudaenv module export`.
//!
//! HPC sites give users software through `module load`. Each installed
//! version becomes one modulefile, `cuda/<version>` (the version's name with
//! `+` written `-`: `cuda/12.4.1-cudnn9.1.0.70`), that sets what
//! `activate::activation` says activation sets — the same data `cudaenv env`
//! applies, so the two cannot drift apart:
//! - the list variables (PATH, LD_LIBRARY_PATH) with `prepend_path`, one
//!   directory per call in reverse order, so the first directory ends up first
//!   and `module unload` removes exactly those entries;
//! - the single-valued ones (CUDA_HOME, CUDA_PATH, CUDNN_PATH, CUDAENV_ACTIVE)
//!   with `pushenv`, which gives back the value they had before on unload
//!   (`setenv` would leave them unset).
//!
//! `family("cuda")` makes Lmod swap rather than stack two CUDAs (also against a
//! site's own modules of that family), and `conflict cuda` makes Environment
//! Modules refuse a second one. Values are quoted for the modulefile's
//! language: Lua strings with decimal escapes for every byte outside
//! printable ASCII (any path survives), Tcl words in double quotes with
//! `\ " $ [ ] { }` escaped and everything outside printable ASCII as `\u`
//! escapes (a Tcl modulefile is text, so a path that is not UTF-8 is refused).
//! Lmod reads Tcl modulefiles by translating them to Lua, and its translator
//! (8.6) copies `prepend-path` values into Lua strings without escaping them:
//! a directory holding `"` or `\` is refused in Tcl modulefiles rather than
//! written as one that Lmod misreads (the Lua format has no such limit). Its
//! Tcl `pushenv` also pushes twice, so that unload restores a wrong value: a
//! Tcl modulefile run by Lmod (`$ModuleTool` is `Lmod`) uses `setenv`, and
//! unload then unsets those variables instead of restoring them. Lmod sites
//! should use the Lua format, which has neither limit.
//!
//! Files are written atomically (temporary file + rename). A file of the same
//! name that cudaenv did not write (it lacks the marker line) is never
//! replaced.

use crate::error::{ActivationError, Error, Result};
use crate::os::OsStrBytes;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::activation::Activation;
use crate::store::Installed;

/// The module name every version is exported under.
pub const MODULE_NAME: &str = "cuda";
/// In the first lines of every file cudaenv writes: only such files are replaced.
const MARKER: &str = "written by `cudaenv module export`";

/// The modulefile language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lua modulefiles (`cuda/X.lua`), read by Lmod.
    Lmod,
    /// Tcl modulefiles (`cuda/X`), read by Environment Modules and by Lmod.
    Tcl,
}

/// One modulefile written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `cuda/12.4.1-cudnn9.1.0.70`, what `module load` takes.
    pub module: String,
    pub path: PathBuf,
}

/// The module version of an installed version: its name with `+` as `-`
/// (`+` means "add a module" on some modules command lines).
pub fn module_version(v: &Installed) -> String {
    v.name.as_str().replace('+', "-")
}

/// The text of `v`'s modulefile.
pub fn render(format: Format, v: &Installed, activation: &Activation) -> Result<Vec<u8>> {
    let module = format!("{MODULE_NAME}/{}", module_version(v));
    let mut with: Vec<String> = v
        .cudnn()
        .map(|d| format!("cuDNN {d}"))
        .into_iter()
        .collect();
    with.extend(v.libs().iter().map(|(l, lv)| format!("{} {lv}", l.title())));
    let what = match (v.cuda(), with.is_empty()) {
        (Some(c), false) => format!("CUDA {c} with {}", with.join(", ")),
        (Some(c), true) => format!("CUDA {c}"),
        (None, _) => format!("the CUDA stack `{}`", v.name),
    };
    let prefix = v.prefix();
    let mut help = format!(
        "{what}, managed by cudaenv.\n\
         Prefix: {}\n\n\
         Loading it sets what `cudaenv env {}` sets:\n",
        prefix.display(),
        v.name
    );
    for (name, dirs) in &activation.lists {
        if !dirs.is_empty() {
            let _ = writeln!(help, "  {name}: {} put first", join(dirs));
        }
    }
    for (name, value) in &activation.values {
        if let Some(value) = value {
            let _ = writeln!(help, "  {name}={}", value.to_string_lossy());
        }
    }
    help.push_str("Unloading takes them back. Only one cuda module loads at a time.");
    // Lmod and Environment Modules keep a variable up to its first line
    // break: a directory with one would be cut short on LD_LIBRARY_PATH.
    activation.single_line(
        "it contains a line break, which Lmod and Environment Modules cut the variable at",
    )?;
    let description = format!("{what} (cudaenv version {})", v.name);
    match format {
        Format::Lmod => lua(&module, &help, &description, activation),
        Format::Tcl => tcl(&module, &help, &description, activation),
    }
}

fn join(dirs: &[PathBuf]) -> String {
    crate::os::path_list::join(dirs)
        .to_string_lossy()
        .into_owned()
}

fn lua(module: &str, help: &str, description: &str, a: &Activation) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut line = |parts: &[&[u8]]| {
        for p in parts {
            out.extend_from_slice(p);
        }
        out.push(b'\n');
    };
    line(&[b"-- ", module.as_bytes(), b": ", MARKER.as_bytes(), b"."]);
    line(&[b"-- Written again by the next export; edits are lost."]);
    line(&[b"help(", &lua_str(help.as_bytes()), b")"]);
    line(&[
        b"whatis(",
        &lua_str(format!("Name: {MODULE_NAME}").as_bytes()),
        b")",
    ]);
    line(&[
        b"whatis(",
        &lua_str(format!("Version: {}", module.split_once('/').map_or("", |m| m.1)).as_bytes()),
        b")",
    ]);
    line(&[
        b"whatis(",
        &lua_str(format!("Description: {description}").as_bytes()),
        b")",
    ]);
    line(&[b"family(", &lua_str(MODULE_NAME.as_bytes()), b")"]);
    for (name, dirs) in &a.lists {
        for d in dirs.iter().rev() {
            line(&[
                b"prepend_path(",
                &lua_str(name.as_bytes()),
                b", ",
                &lua_str(d.as_os_str().as_bytes()),
                b")",
            ]);
        }
    }
    for (name, value) in &a.values {
        if let Some(value) = value {
            line(&[
                b"pushenv(",
                &lua_str(name.as_bytes()),
                b", ",
                &lua_str(value.as_bytes()),
                b")",
            ]);
        }
    }
    Ok(out)
}

/// A Lua string literal holding exactly `bytes`.
fn lua_str(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 2);
    out.push(b'"');
    for &b in bytes {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            0x20..=0x7e => out.push(b),
            // Three digits always, so a following digit is not taken in.
            _ => out.extend_from_slice(format!("\\{b:03}").as_bytes()),
        }
    }
    out.push(b'"');
    out
}

fn tcl(module: &str, help: &str, description: &str, a: &Activation) -> Result<Vec<u8>> {
    let mut out = String::new();
    let _ = writeln!(out, "#%Module1.0");
    let _ = writeln!(out, "# {module}: {MARKER}.");
    let _ = writeln!(out, "# Written again by the next export; edits are lost.");
    let _ = writeln!(
        out,
        "proc ModulesHelp {{}} {{\n    puts stderr {}\n}}",
        tcl_str(help)
    );
    let _ = writeln!(out, "module-whatis {}", tcl_str(description));
    let _ = writeln!(out, "conflict {MODULE_NAME}");
    let _ = writeln!(out, "family {MODULE_NAME}");
    let _ = writeln!(
        out,
        "# Lmod's Tcl pushenv pushes twice; there setenv (unload unsets).\n\
         if {{[info exists ModuleTool] && $ModuleTool eq \"Lmod\"}} {{\n    \
         set cudaenv_set setenv\n}} else {{\n    set cudaenv_set pushenv\n}}"
    );
    for (name, dirs) in &a.lists {
        for d in dirs.iter().rev() {
            if d.as_os_str()
                .as_bytes()
                .iter()
                .any(|b| matches!(b, b'"' | b'\\'))
            {
                return Err(Error::Activation(ActivationError::UnrepresentablePath {
                    path: d.clone(),
                    variable: name,
                    reason: "Lmod misreads `\"` and `\\` in a Tcl modulefile's prepend-path; use --format lmod",
                }));
            }
            let _ = writeln!(
                out,
                "prepend-path {name} {}",
                tcl_path(d.as_os_str(), name)?
            );
        }
    }
    for (name, value) in &a.values {
        if let Some(value) = value {
            let _ = writeln!(out, "$cudaenv_set {name} {}", tcl_path(value, name)?);
        }
    }
    Ok(out.into_bytes())
}

fn tcl_path(value: &OsStr, variable: &'static str) -> Result<String> {
    let text = value.to_str().ok_or_else(|| {
        Error::Activation(ActivationError::UnrepresentablePath {
            path: PathBuf::from(value),
            variable,
            reason: "a Tcl modulefile holds text, and the path is not valid UTF-8",
        })
    })?;
    Ok(tcl_str(text))
}

/// A double-quoted Tcl word holding exactly `text`.
fn tcl_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' | '"' | '$' | '[' | ']' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            // Always the full width, so a following hex digit is not taken in.
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Where `v`'s modulefile goes under `dir`: `dir/cuda/<version>[.lua]`,
/// with `dir/cuda` created as a real directory (a link there, out of `dir`,
/// is refused: `os::fs::within`).
pub fn file_path(dir: &Path, format: Format, v: &Installed) -> Result<PathBuf> {
    let version = module_version(v);
    let file = match format {
        Format::Lmod => format!("{version}.lua"),
        Format::Tcl => version,
    };
    crate::os::fs::within(dir, &Path::new(MODULE_NAME).join(file))
}

/// Fails unless `path` is free or holds a modulefile cudaenv wrote.
pub fn check_replaceable(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() && written_by_us(path) => Ok(()),
        Ok(_) => Err(Error::Activation(ActivationError::ModulefileNotOurs {
            path: path.to_path_buf(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("cannot look at", path)(e)),
    }
}

/// Writes `text` at `path` atomically, unless a file cudaenv did not write is there.
pub fn write(path: &Path, text: &[u8]) -> Result<()> {
    check_replaceable(path)?;
    // Modulefiles are read by every user of the site.
    crate::os::write_atomically(path, text, Some(0o644))
}

/// Does the file carry the marker in its first lines?
fn written_by_us(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    // A FIFO or device put there is not ours (and must not hang us).
    let Ok((f, _)) = crate::os::fs::open_regular(path) else {
        return false;
    };
    if f.take(512).read_to_end(&mut head).is_err() {
        return false;
    }
    head.split(|&b| b == b'\n')
        .take(3)
        .any(|l| l.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activation::select::Active;
    use crate::spec::{Version, VersionName};
    use crate::store::{Kind, Metadata};

    fn version() -> Installed {
        let mut meta = Metadata::new(Kind::Installed, "pypi");
        meta.cuda = Some(Version::parse_parts("12.4.1", 3).unwrap());
        meta.cudnn = Some(Version::parse_parts("9.1.0.70", 4).unwrap());
        meta.bin_dirs = vec!["bin".into()];
        meta.lib_dirs = vec!["lib64".into(), "cudnn/lib".into()];
        meta.home = Some(".".into());
        meta.cudnn_home = Some("cudnn".into());
        Installed {
            name: VersionName::parse("12.4.1+cudnn9.1.0.70").unwrap(),
            dir: "/opt/cudaenv/versions/12.4.1+cudnn9.1.0.70".into(),
            meta,
        }
    }

    fn rendered(format: Format) -> String {
        let v = version();
        let a = crate::activation::activation(&Active::Version(Box::new(v.clone()))).unwrap();
        String::from_utf8(render(format, &v, &a).unwrap()).unwrap()
    }

    #[test]
    fn lmod_modulefile() {
        insta::assert_snapshot!(rendered(Format::Lmod));
    }

    #[test]
    fn tcl_modulefile() {
        insta::assert_snapshot!(rendered(Format::Tcl));
    }

    #[test]
    fn a_stack_with_nccl_and_tensorrt_names_them() {
        let mut v = version();
        for (name, version) in [("nccl", "2.21.5"), ("tensorrt", "10.0.1.6")] {
            v.meta.components.push(crate::store::Component {
                name: name.into(),
                version: version.into(),
                source: "pypi".into(),
                url: None,
                sha256: None,
            });
        }
        let a = crate::activation::activation(&Active::Version(Box::new(v.clone()))).unwrap();
        let text = String::from_utf8(render(Format::Lmod, &v, &a).unwrap()).unwrap();
        assert!(
            text.contains("CUDA 12.4.1 with cuDNN 9.1.0.70, NCCL 2.21.5, TensorRT 10.0.1.6"),
            "{text}"
        );
    }

    #[test]
    fn lua_strings_keep_every_byte() {
        assert_eq!(lua_str(b"a\"b\\c"), b"\"a\\\"b\\\\c\"");
        assert_eq!(lua_str(b"x\n1\xff"), b"\"x\\0101\\255\"");
    }

    #[test]
    fn tcl_strings_escape_what_tcl_substitutes() {
        assert_eq!(
            tcl_str("$HOME [x] {y} \"q\" \\"),
            r#""\$HOME \[x\] \{y\} \"q\" \\""#
        );
        assert_eq!(tcl_str("é\n1"), r#""\u00e9\u000a1""#);
        assert_eq!(tcl_str("🙂"), r#""\U0001f642""#);
    }
}
