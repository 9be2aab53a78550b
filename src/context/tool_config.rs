//! Other tools' settings that cudaenv honours, so that what a user set up
//! for them just works: pip's package index (`PIP_INDEX_URL`, pip.conf) and
//! apt's Debian mirror (`/etc/apt/sources.list`, `sources.list.d`). `/etc`
//! is the context's (`Context::etc`), so tests read a directory of their own.
//!
//! Both are read as the tool itself reads them — pip's files in pip's order
//! with pip's precedence, apt's one-line and deb822 formats — and only the
//! one value cudaenv needs is taken. cudaenv's own settings
//! (`CUDAENV_PYPI_INDEX`, `pypi-index`, `CUDAENV_DEBIAN_MIRROR`,
//! `debian-mirror`) win over them; `config::Settings` decides. An absent
//! file is skipped, as the tools skip it; one that is there but cannot be
//! read (a FIFO, a device, a directory, larger than a configuration file
//! can reasonably be, not readable by this user) is skipped too, never
//! opened for reading when it is not a regular file, and named
//! (`PassedOver`), so that the index or mirror used instead is no surprise.

use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::context::env_vars;
use crate::os::platform::Platform;

/// PyPI's own index, when nothing else is configured.
pub const DEFAULT_PYPI_INDEX: &str = "https://pypi.org/simple";

/// A configuration file of another tool that is there but was not read,
/// and why (`it is a FIFO, not a regular file`): said as a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub file: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for PassedOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} was not read: {}", self.file.display(), self.reason)
    }
}

/// A configuration file's text: a regular file of at most `max` bytes
/// (`os::fs::read_bounded_text`: a FIFO or device is refused, not opened).
/// An absent file is `None`; one that is there but unreadable is `None`
/// and noted in `passed`.
fn read_small(path: &Path, max: u64, passed: &mut Vec<PassedOver>) -> Option<String> {
    match crate::os::fs::read_bounded_text(path, max) {
        Ok(t) => Some(t),
        Err(crate::os::fs::ReadError::Open(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            None
        }
        Err(e) => {
            passed.push(PassedOver {
                file: path.to_path_buf(),
                reason: e.to_string(),
            });
            None
        }
    }
}

// --- pip ---------------------------------------------------------------------

/// Where the index is, and why (for messages): `CUDAENV_PYPI_INDEX`, else
/// pip's own setting as pip itself would read it (`PIP_INDEX_URL`, then its
/// configuration files), else PyPI.
/// Files that are there but could not be read go to `passed`.
pub fn index_url(ctx: &Context, passed: &mut Vec<PassedOver>) -> (String, String) {
    index_url_for(ctx, Platform::host(), passed)
}

fn index_url_for(
    ctx: &Context,
    platform: Platform,
    passed: &mut Vec<PassedOver>,
) -> (String, String) {
    for var in [env_vars::CUDAENV_PYPI_INDEX, env_vars::PIP_INDEX_URL] {
        if let Some(v) = ctx.var(var).filter(|v| !v.trim().is_empty()) {
            return (v.trim().to_string(), var.into());
        }
    }
    match pip_config_index(ctx, platform, passed) {
        Some((url, file)) => (url, file.display().to_string()),
        None => (DEFAULT_PYPI_INDEX.into(), "the default".into()),
    }
}

/// pip's configuration files, in the order pip reads them (pip's
/// `configuration.py`, "Configuration" in its documentation): the global
/// ones (`$XDG_CONFIG_DIRS/pip/pip.conf`, default `/etc/xdg`, then
/// `/etc/pip.conf`), the user's (`~/.pip/pip.conf`, then
/// `$XDG_CONFIG_HOME/pip/pip.conf`, default `~/.config`), the site's (the
/// active environment's `pip.conf`), then `PIP_CONFIG_FILE`. A later file's
/// value wins. As in pip, an existing `PIP_CONFIG_FILE` replaces the user's
/// files, and `PIP_CONFIG_FILE=/dev/null` turns every file off.
///
/// On Windows the files are `pip.ini`: `%ProgramData%\pip\pip.ini` (global),
/// `~\pip\pip.ini` then `%APPDATA%\pip\pip.ini` (the user's), the
/// environment's `pip.ini`, then `PIP_CONFIG_FILE` (`nul` turns them off).
fn pip_config_files_for(ctx: &Context, platform: Platform) -> Vec<PathBuf> {
    let windows = platform == Platform::WindowsX86_64;
    let env_file = ctx
        .var(env_vars::PIP_CONFIG_FILE)
        .filter(|f| !f.is_empty())
        .map(PathBuf::from);
    let devnull = if windows { "nul" } else { "/dev/null" };
    if env_file
        .as_deref()
        .is_some_and(|f| f.as_os_str().eq_ignore_ascii_case(devnull))
    {
        return Vec::new();
    }
    if windows {
        return pip_ini_files(ctx, env_file);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    match ctx.var(env_vars::XDG_CONFIG_DIRS).filter(|d| !d.is_empty()) {
        Some(dirs) => {
            for dir in dirs.split(':').filter(|d| !d.is_empty()) {
                files.push(PathBuf::from(dir).join("pip/pip.conf"));
            }
        }
        None => files.push(ctx.etc().join("xdg/pip/pip.conf")),
    }
    files.push(ctx.etc().join("pip.conf"));
    if !env_file.as_ref().is_some_and(|f| f.is_file()) {
        if let Some(h) = ctx.home() {
            files.push(h.join(".pip/pip.conf"));
        }
        let config_home = ctx
            .var(env_vars::XDG_CONFIG_HOME)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| ctx.home().map(|h| h.join(".config")));
        if let Some(c) = config_home {
            files.push(c.join("pip/pip.conf"));
        }
    }
    // pip's "site" file is in its interpreter's prefix: the active environment.
    if let Some(prefix) = [env_vars::VIRTUAL_ENV, env_vars::CONDA_PREFIX]
        .into_iter()
        .find_map(|v| ctx.var(v).filter(|p| !p.is_empty()))
    {
        files.push(PathBuf::from(prefix).join("pip.conf"));
    }
    files.extend(env_file);
    files
}

/// pip's files on Windows (see `pip_config_files`).
fn pip_ini_files(ctx: &Context, env_file: Option<PathBuf>) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(d) = ctx.var(env_vars::PROGRAMDATA).filter(|d| !d.is_empty()) {
        files.push(PathBuf::from(d).join("pip").join("pip.ini"));
    }
    if !env_file.as_ref().is_some_and(|f| f.is_file()) {
        if let Some(h) = ctx.home() {
            files.push(h.join("pip").join("pip.ini"));
        }
        if let Some(d) = ctx.var(env_vars::APPDATA).filter(|d| !d.is_empty()) {
            files.push(PathBuf::from(d).join("pip").join("pip.ini"));
        }
    }
    if let Some(prefix) = [env_vars::VIRTUAL_ENV, env_vars::CONDA_PREFIX]
        .into_iter()
        .find_map(|v| ctx.var(v).filter(|p| !p.is_empty()))
    {
        files.push(PathBuf::from(prefix).join("pip.ini"));
    }
    files.extend(env_file);
    files
}

/// The largest pip configuration file read: a few lines in practice.
const MAX_PIP_CONF: u64 = 1 << 20;

/// The `index-url` pip's configuration gives `pip install`, and the file it
/// comes from: `[install]` wins over `[global]` whichever file each is in,
/// and within a section the last file read wins. A file that cannot be read
/// (absent, not a regular file, too large) is skipped, as pip skips it;
/// one that is there is noted in `passed`.
fn pip_config_index(
    ctx: &Context,
    platform: Platform,
    passed: &mut Vec<PassedOver>,
) -> Option<(String, PathBuf)> {
    let mut global = None;
    let mut install = None;
    for file in pip_config_files_for(ctx, platform) {
        let Some(text) = read_small(&file, MAX_PIP_CONF, passed) else {
            continue;
        };
        let found = pip_conf_index(&text);
        if let Some(url) = found.global {
            global = Some((url, file.clone()));
        }
        if let Some(url) = found.install {
            install = Some((url, file.clone()));
        }
    }
    install.or(global)
}

/// The `index-url` of a pip configuration file's `[global]` and `[install]`
/// sections (INI as Python's configparser reads it: `=` or `:`, comments
/// on their own lines, names in any case with `_` or `-`).
#[derive(Debug, Default, PartialEq, Eq)]
struct PipConfIndex {
    global: Option<String>,
    install: Option<String>,
}

fn pip_conf_index(text: &str) -> PipConfIndex {
    let mut found = PipConfIndex::default();
    let mut section = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('#') || l.starts_with(';') || l.is_empty() {
            continue;
        }
        if let Some(s) = l.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.trim().to_string();
            continue;
        }
        if let Some((k, v)) = l.split_once(['=', ':']) {
            let k = k.trim().to_ascii_lowercase().replace('_', "-");
            let v = v.trim();
            if k != "index-url" || v.is_empty() {
                continue;
            }
            match section.as_str() {
                "global" => found.global = Some(v.to_string()),
                "install" => found.install = Some(v.to_string()),
                _ => {}
            }
        }
    }
    found
}

// --- apt ---------------------------------------------------------------------

/// The largest sources file read.
const MAX_SOURCES: u64 = 1 << 20;

/// The Debian archive apt is configured with, and the file that says so:
/// the first `deb` source of a Debian suite (`bookworm`, `trixie-updates`,
/// `stable`…, never `…-security`, whose archive is another) in
/// `sources.list`, then the files of `sources.list.d` in name order (those
/// apt reads: `*.list` and deb822 `*.sources`, `Enabled: no` skipped). Only
/// `http(s)://` and `file:` URIs are taken. An Ubuntu machine has none: its
/// archive does not carry Debian's packages. Files that are there but
/// could not be read go to `passed`.
pub fn apt_debian_mirror(ctx: &Context, passed: &mut Vec<PassedOver>) -> Option<(String, PathBuf)> {
    let dirs = AptDirs::read(ctx, passed);
    let mut files = vec![dirs.sourcelist()];
    if let Ok(rd) = std::fs::read_dir(dirs.sourceparts()) {
        let mut parts: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(apt_reads)
            })
            .collect();
        parts.sort();
        files.extend(parts);
    }
    for file in files {
        let Some(text) = read_small(&file, MAX_SOURCES, passed) else {
            continue;
        };
        let deb822 = file.extension().is_some_and(|e| e == "sources");
        let found = if deb822 {
            deb822_debian_uri(&text)
        } else {
            one_line_debian_uri(&text)
        };
        if let Some(uri) = found {
            return Some((uri, file));
        }
    }
    None
}

/// The largest apt configuration file read, and the most files of
/// `apt.conf.d` read.
const MAX_APT_CONF: u64 = 1 << 20;
const MAX_APT_CONF_PARTS: usize = 256;

/// Where apt reads its sources, as apt's own configuration says: `Dir`,
/// `Dir::Etc`, `Dir::Etc::sourcelist` and `Dir::Etc::sourceparts`, set in
/// `APT_CONFIG`'s file, the files of `Dir::Etc::parts` (`apt.conf.d`) and
/// `Dir::Etc::main` (`apt.conf`), read in that order with the later value
/// winning, as apt reads them. Only these keys are taken; a relative value
/// is under its parent (`Dir::Etc "etc/apt/"` under `Dir`), as apt has it.
/// The default root is the context's `/etc`'s parent, so `Context::etc`
/// moves everything for tests.
#[derive(Debug, Default)]
struct AptDirs {
    /// Lower-cased key → value, for the keys above.
    values: std::collections::BTreeMap<String, String>,
    etc: PathBuf,
}

impl AptDirs {
    fn read(ctx: &Context, passed: &mut Vec<PassedOver>) -> AptDirs {
        let mut dirs = AptDirs {
            values: Default::default(),
            etc: ctx.etc().to_path_buf(),
        };
        if let Some(file) = ctx.var(env_vars::APT_CONFIG).filter(|v| !v.is_empty()) {
            dirs.read_file(Path::new(file), passed);
        }
        let parts = dirs.find_dir("dir::etc::parts", "apt.conf.d");
        if let Ok(rd) = std::fs::read_dir(&parts) {
            let mut files: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(apt_reads_conf)
                })
                .collect();
            files.sort();
            for f in files.iter().take(MAX_APT_CONF_PARTS) {
                dirs.read_file(f, passed);
            }
        }
        let main = dirs.find_dir("dir::etc::main", "apt.conf");
        dirs.read_file(&main, passed);
        dirs
    }

    fn read_file(&mut self, path: &Path, passed: &mut Vec<PassedOver>) {
        if let Some(text) = read_small(path, MAX_APT_CONF, passed) {
            for (key, value) in apt_conf_values(&text) {
                if matches!(
                    key.as_str(),
                    "dir"
                        | "dir::etc"
                        | "dir::etc::parts"
                        | "dir::etc::main"
                        | "dir::etc::sourcelist"
                        | "dir::etc::sourceparts"
                ) {
                    self.values.insert(key, value);
                }
            }
        }
    }

    /// `Dir::Etc`: absolute, or under `Dir` (default: the context's etc's
    /// parent, `/`).
    fn etc_apt(&self) -> PathBuf {
        let root = match self.values.get("dir") {
            Some(d) => PathBuf::from(d),
            None => self.etc.parent().unwrap_or(Path::new("/")).to_path_buf(),
        };
        match self.values.get("dir::etc") {
            Some(e) => root.join(e),
            None => match self.values.get("dir") {
                Some(_) => root.join("etc/apt"),
                None => self.etc.join("apt"),
            },
        }
    }

    /// A path under `Dir::Etc` (an absolute value stands alone).
    fn find_dir(&self, key: &str, default: &str) -> PathBuf {
        self.etc_apt()
            .join(self.values.get(key).map_or(default, String::as_str))
    }

    fn sourcelist(&self) -> PathBuf {
        self.find_dir("dir::etc::sourcelist", "sources.list")
    }

    fn sourceparts(&self) -> PathBuf {
        self.find_dir("dir::etc::sourceparts", "sources.list.d")
    }
}

/// The names apt reads in `apt.conf.d`: letters, digits, `_-.`, with no
/// extension or `.conf` (apt skips `*.dpkg-old`, `*.save` and the like).
fn apt_reads_conf(name: &str) -> bool {
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    valid
        && match name.rsplit_once('.') {
            None => true,
            Some((stem, ext)) => !stem.is_empty() && ext == "conf",
        }
}

/// The `key value` pairs of apt's configuration syntax, keys in full
/// (`Dir { Etc "x"; };` gives `dir::etc`) and lower-cased (apt's keys are
/// case-insensitive): `key "value";`, `key value;`, `key { … };` scopes,
/// `//`, `#` and `/* */` comments. `#include` and `#clear` are skipped.
fn apt_conf_values(text: &str) -> Vec<(String, String)> {
    #[derive(Debug, PartialEq)]
    enum Tok {
        Word(String),
        Open,
        Close,
        Semi,
    }
    let mut toks = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '{' => toks.push(Tok::Open),
            '}' => toks.push(Tok::Close),
            ';' => toks.push(Tok::Semi),
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' => {
                let mut s = String::new();
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    s.push(c);
                }
                toks.push(Tok::Word(s));
            }
            c => {
                let mut s = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, '{' | '}' | ';' | '"') {
                        break;
                    }
                    s.push(n);
                    chars.next();
                }
                toks.push(Tok::Word(s));
            }
        }
    }
    let mut out = Vec::new();
    let mut scope: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Word(key) => {
                let full = scope
                    .iter()
                    .map(String::as_str)
                    .chain([key.as_str()])
                    .collect::<Vec<_>>()
                    .join("::")
                    .to_ascii_lowercase();
                match toks.get(i + 1) {
                    Some(Tok::Open) => {
                        scope.push(key.clone());
                        i += 2;
                    }
                    Some(Tok::Word(value)) => {
                        out.push((full, value.clone()));
                        i += 2;
                    }
                    _ => i += 1,
                }
            }
            Tok::Close => {
                scope.pop();
                i += 1;
            }
            Tok::Open | Tok::Semi => i += 1,
        }
    }
    out
}

/// The names apt reads in `sources.list.d` (apt ignores the rest, such as
/// `*.save` or `*.disabled`).
fn apt_reads(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    matches!(ext, "list" | "sources")
        && !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Debian's code names and aliases; a suite is one of them with an optional
/// `-updates`, `-backports`, `-proposed-updates` or `-backports-sloppy`.
fn is_debian_suite(suite: &str) -> bool {
    const NAMES: &[&str] = &[
        "stretch",
        "buster",
        "bullseye",
        "bookworm",
        "trixie",
        "forky",
        "duke",
        "sid",
        "oldoldstable",
        "oldstable",
        "stable",
        "testing",
        "unstable",
        "experimental",
    ];
    let base = [
        "-backports-sloppy",
        "-proposed-updates",
        "-backports",
        "-updates",
    ]
    .iter()
    .find_map(|s| suite.strip_suffix(s))
    .unwrap_or(suite);
    NAMES.contains(&base.trim_end_matches('/'))
}

/// An apt URI cudaenv can download from, as a base URL (`file:/srv/debian`
/// becomes `file:///srv/debian`); `None` for other schemes (`cdrom:`,
/// `mirror+…`, `tor+…`).
fn usable_uri(uri: &str) -> Option<String> {
    let uri = uri.trim().trim_end_matches('/');
    if uri.starts_with("http://") || uri.starts_with("https://") || uri.starts_with("file:///") {
        return Some(uri.to_string());
    }
    uri.strip_prefix("file:/")
        .filter(|p| !p.starts_with('/'))
        .map(|p| format!("file:///{p}"))
}

/// `deb [options] URI SUITE [COMPONENT…]` lines.
fn one_line_debian_uri(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(rest) = line
            .strip_prefix("deb")
            .filter(|r| r.starts_with([' ', '\t']))
        else {
            continue;
        };
        let mut rest = rest.trim_start();
        if let Some(opts) = rest.strip_prefix('[') {
            let Some(end) = opts.find(']') else { continue };
            rest = opts[end + 1..].trim_start();
        }
        let mut words = rest.split_whitespace();
        let (Some(uri), Some(suite)) = (words.next(), words.next()) else {
            continue;
        };
        if is_debian_suite(suite)
            && let Some(u) = usable_uri(uri)
        {
            return Some(u);
        }
    }
    None
}

/// deb822 stanzas (`Types:`, `URIs:`, `Suites:`, `Enabled:`).
fn deb822_debian_uri(text: &str) -> Option<String> {
    let mut stanza: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().peekable();
    loop {
        let line = lines.next();
        let end_of_stanza = line.is_none_or(|l| l.trim().is_empty());
        if end_of_stanza {
            if let Some(u) = deb822_stanza_uri(&stanza) {
                return Some(u);
            }
            stanza.clear();
            line?;
            continue;
        }
        let l = line.unwrap_or("");
        if l.starts_with('#') {
            continue;
        }
        if l.starts_with([' ', '\t']) {
            if let Some(last) = stanza.last_mut() {
                last.1.push(' ');
                last.1.push_str(l.trim());
            }
            continue;
        }
        if let Some((k, v)) = l.split_once(':') {
            stanza.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
}

fn deb822_stanza_uri(stanza: &[(String, String)]) -> Option<String> {
    let field = |name: &str| {
        stanza
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if field("enabled").is_some_and(|v| v.eq_ignore_ascii_case("no")) {
        return None;
    }
    if !field("types")?.split_whitespace().any(|t| t == "deb") {
        return None;
    }
    if !field("suites")?.split_whitespace().any(is_debian_suite) {
        return None;
    }
    field("uris")?.split_whitespace().find_map(usable_uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_conf() {
        let g = |t: &str| pip_conf_index(t).global;
        assert_eq!(
            g("[global]\nindex-url = https://mirror.example/simple\n").as_deref(),
            Some("https://mirror.example/simple")
        );
        assert_eq!(
            pip_conf_index("[other]\nindex-url=x\n"),
            PipConfIndex::default()
        );
        assert_eq!(g("[global]\nindex_url: y\n").as_deref(), Some("y"));
        assert_eq!(
            g("[global]\nINDEX-URL = a\nindex-url = b\n").as_deref(),
            Some("b")
        );
        assert_eq!(
            pip_conf_index("[global]\nindex-url = a\n[install]\nindex-url = b\ntrusted-host = m\n"),
            PipConfIndex {
                global: Some("a".into()),
                install: Some("b".into())
            }
        );
        // Section names are case-sensitive in configparser, so in pip.
        assert_eq!(
            pip_conf_index("[Global]\nindex-url = a\n"),
            PipConfIndex::default()
        );
    }

    /// pip's order over real files: global, user, site, PIP_CONFIG_FILE;
    /// `[install]` over `[global]`; `PIP_INDEX_URL` over every file.
    #[test]
    fn pip_files_in_pips_order() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let write = |rel: &str, section: &str, url: &str| {
            let p = t.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("[{section}]\nindex-url = {url}\n")).unwrap();
        };
        let ctx = |vars: &[(&str, &str)]| {
            let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
                vec![("HOME".into(), t.join("home").into())];
            env.extend(vars.iter().map(|(k, v)| ((*k).into(), (*v).into())));
            Context::new(env, t.to_path_buf())
                .unwrap()
                .with_etc(t.join("etc"))
        };
        let linux = Platform::LinuxX86_64;
        let index_url = |ctx: &Context| index_url_for(ctx, linux, &mut Vec::new());
        let url = |vars: &[(&str, &str)]| index_url(&ctx(vars)).0;
        assert_eq!(url(&[]), DEFAULT_PYPI_INDEX);
        write("etc/xdg/pip/pip.conf", "global", "http://xdg/simple");
        assert_eq!(url(&[]), "http://xdg/simple");
        write("etc/pip.conf", "global", "http://etc/simple");
        assert_eq!(url(&[]), "http://etc/simple");
        write("home/.pip/pip.conf", "global", "http://legacy/simple");
        assert_eq!(url(&[]), "http://legacy/simple");
        write("home/.config/pip/pip.conf", "global", "http://user/simple");
        let (u, from) = index_url(&ctx(&[]));
        assert_eq!(u, "http://user/simple");
        assert!(Path::new(&from).ends_with(".config/pip/pip.conf"), "{from}");
        write("venv/pip.conf", "global", "http://site/simple");
        let venv = t.join("venv");
        let venv = venv.to_str().unwrap();
        assert_eq!(url(&[("VIRTUAL_ENV", venv)]), "http://site/simple");
        // [install] in an earlier file beats [global] in a later one.
        write("etc/pip.conf", "install", "http://etc-install/simple");
        assert_eq!(url(&[("VIRTUAL_ENV", venv)]), "http://etc-install/simple");
        write("ci.conf", "install", "http://ci/simple");
        let ci = t.join("ci.conf");
        let ci = ci.to_str().unwrap();
        assert_eq!(url(&[("PIP_CONFIG_FILE", ci)]), "http://ci/simple");
        assert_eq!(url(&[("PIP_CONFIG_FILE", "/dev/null")]), DEFAULT_PYPI_INDEX);
        assert_eq!(
            url(&[
                ("PIP_CONFIG_FILE", ci),
                ("PIP_INDEX_URL", "http://var/simple")
            ]),
            "http://var/simple"
        );
        assert_eq!(
            url(&[
                ("PIP_INDEX_URL", "http://var/simple"),
                ("CUDAENV_PYPI_INDEX", "http://own/simple")
            ]),
            "http://own/simple"
        );
        // XDG_CONFIG_HOME moves the user's file.
        write("xdg-home/pip/pip.conf", "global", "http://xdg-home/simple");
        let xh = t.join("xdg-home");
        assert_eq!(
            url(&[("XDG_CONFIG_HOME", xh.to_str().unwrap())]),
            "http://etc-install/simple"
        );
        std::fs::write(t.join("etc/pip.conf"), "[global]\ncert = /x\n").unwrap();
        assert_eq!(
            url(&[("XDG_CONFIG_HOME", xh.to_str().unwrap())]),
            "http://xdg-home/simple"
        );
    }

    /// On Windows pip reads pip.ini: %ProgramData%, then ~\pip, then
    /// %APPDATA%, then the environment's, then PIP_CONFIG_FILE (`nul`: none).
    #[test]
    fn pip_ini_files_in_pips_order_on_windows() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let write = |rel: &str, url: &str| {
            let p = t.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("[global]\nindex-url = {url}\n")).unwrap();
        };
        let ctx = |vars: &[(&str, &std::path::Path)]| {
            let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
                ("HOME".into(), t.join("home").into()),
                ("ProgramData".into(), t.join("programdata").into()),
                ("APPDATA".into(), t.join("appdata").into()),
            ];
            env.extend(
                vars.iter()
                    .map(|(k, v)| ((*k).into(), v.as_os_str().into())),
            );
            Context::new(env, t.to_path_buf()).unwrap()
        };
        let url = |vars: &[(&str, &std::path::Path)]| {
            index_url_for(&ctx(vars), Platform::WindowsX86_64, &mut Vec::new()).0
        };
        assert_eq!(url(&[]), DEFAULT_PYPI_INDEX);
        // A pip.conf means nothing to pip on Windows.
        write("appdata/pip/pip.conf", "http://conf/simple");
        assert_eq!(url(&[]), DEFAULT_PYPI_INDEX);
        write("programdata/pip/pip.ini", "http://global/simple");
        assert_eq!(url(&[]), "http://global/simple");
        write("home/pip/pip.ini", "http://legacy/simple");
        assert_eq!(url(&[]), "http://legacy/simple");
        write(
            "appdata/pip/pip.ini",
            "https://pypi.tuna.tsinghua.edu.cn/simple",
        );
        assert_eq!(url(&[]), "https://pypi.tuna.tsinghua.edu.cn/simple");
        write("venv/pip.ini", "http://site/simple");
        assert_eq!(
            url(&[("VIRTUAL_ENV", &t.join("venv"))]),
            "http://site/simple"
        );
        assert_eq!(
            url(&[("PIP_CONFIG_FILE", std::path::Path::new("NUL"))]),
            DEFAULT_PYPI_INDEX
        );
    }

    #[test]
    fn apt_one_line_sources() {
        let t = "# deb http://old/debian bookworm main\n\
                 deb-src https://src.example/debian bookworm main\n\
                 deb https://mirrors.tuna.tsinghua.edu.cn/debian-security bookworm-security main\n\
                 deb [arch=amd64 signed-by=/k.gpg] https://mirrors.tuna.tsinghua.edu.cn/debian/ bookworm main contrib\n";
        assert_eq!(
            one_line_debian_uri(t).as_deref(),
            Some("https://mirrors.tuna.tsinghua.edu.cn/debian")
        );
        assert_eq!(
            one_line_debian_uri("deb http://mirrors.aliyun.com/ubuntu/ jammy main\n"),
            None
        );
        assert_eq!(
            one_line_debian_uri("deb file:/srv/debian trixie-updates main\n").as_deref(),
            Some("file:///srv/debian")
        );
        assert_eq!(
            one_line_debian_uri("deb cdrom:[Debian]/ bookworm main\n"),
            None
        );
    }

    #[test]
    fn apt_configuration_syntax() {
        let t = "// a comment\nDir \"/srv/root/\";\n# another\nDir::Etc {\n  SourceList \"my.list\"; /* inline */\n  sourceparts \"/x/parts\";\n};\nAPT { Get { Assume-Yes \"true\"; }; };\n";
        assert_eq!(
            apt_conf_values(t),
            vec![
                ("dir".to_string(), "/srv/root/".to_string()),
                ("dir::etc::sourcelist".into(), "my.list".into()),
                ("dir::etc::sourceparts".into(), "/x/parts".into()),
                ("apt::get::assume-yes".into(), "true".into()),
            ]
        );
        assert!(apt_reads_conf("70debconf") && apt_reads_conf("99-mirror.conf"));
        assert!(!apt_reads_conf("50x.dpkg-old") && !apt_reads_conf("a.conf.save"));
    }

    /// Where apt's sources are: /etc/apt by default; moved by `Dir::Etc` in
    /// apt.conf.d, by `APT_CONFIG`'s file (read first, so apt.conf.d's
    /// files win over it), and by `Dir::Etc::sourcelist`/`sourceparts`.
    #[test]
    fn apt_sources_where_apts_configuration_puts_them() {
        let t = tempfile::tempdir().unwrap();
        let etc = t.path().join("etc");
        let ctx = |vars: &[(&str, &str)]| {
            let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vars
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect();
            Context::new(env, t.path().to_path_buf())
                .unwrap()
                .with_etc(etc.clone())
        };
        let write = |p: &Path, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let line = |host: &str| format!("deb http://{host}/debian bookworm main\n");
        write(&etc.join("apt/sources.list"), &line("default"));
        let mirror = |c: &Context| apt_debian_mirror(c, &mut Vec::new()).map(|(u, _)| u);
        assert_eq!(mirror(&ctx(&[])).as_deref(), Some("http://default/debian"));

        let other = t.path().join("other-apt");
        write(&other.join("sources.list"), &line("other"));
        let conf = t.path().join("apt.conf");
        write(&conf, &format!("Dir::Etc \"{}/\";\n", other.display()));
        let via_env = [("APT_CONFIG", conf.to_str().unwrap())];
        assert_eq!(
            mirror(&ctx(&via_env)).as_deref(),
            Some("http://other/debian")
        );

        // The parts of the moved Dir::Etc are read: one names another list file.
        write(&other.join("tuna.list"), &line("tuna"));
        write(
            &other.join("apt.conf.d/99mirror"),
            "Dir::Etc::SourceList \"tuna.list\";\n",
        );
        assert_eq!(
            mirror(&ctx(&via_env)).as_deref(),
            Some("http://tuna/debian")
        );
        // Without APT_CONFIG, /etc/apt's parts: a list file that is not there…
        write(
            &etc.join("apt/apt.conf.d/50list"),
            "Dir { Etc { SourceList \"none.list\"; }; };\n",
        );
        write(
            &etc.join("apt/apt.conf.d/60list.dpkg-old"),
            "Dir::Etc::SourceList \"sources.list\";",
        );
        write(&etc.join("apt/sources.list.d/x.list"), &line("parts"));
        assert_eq!(mirror(&ctx(&[])).as_deref(), Some("http://parts/debian"));
        // …and sourceparts moves the directory.
        let parts = t.path().join("parts");
        write(&parts.join("y.list"), &line("moved-parts"));
        write(
            &etc.join("apt/apt.conf"),
            &format!("Dir::Etc::sourceparts \"{}\";", parts.display()),
        );
        assert_eq!(
            mirror(&ctx(&[])).as_deref(),
            Some("http://moved-parts/debian")
        );
    }

    #[test]
    fn apt_deb822_sources() {
        let t = "Types: deb\nURIs: https://mirrors.ustc.edu.cn/debian-security\nSuites: bookworm-security\nComponents: main\n\n\
                 Types: deb deb-src\nURIs: https://mirrors.aliyun.com/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n";
        assert_eq!(
            deb822_debian_uri(t).as_deref(),
            Some("https://mirrors.aliyun.com/debian")
        );
        let off = "Types: deb\nURIs: https://x/debian\nSuites: trixie\nEnabled: no\n";
        assert_eq!(deb822_debian_uri(off), None);
        assert!(apt_reads("debian.sources") && apt_reads("tuna.list"));
        assert!(!apt_reads("nodesource.sources.disabled-by-x") && !apt_reads("a.list.save"));
    }
}
