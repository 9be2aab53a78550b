//! `$CUDAENV_ROOT/config.toml`: settings that outlive one command.
//!
//! ```toml
//! nvidia-mirror = "https://mirror.example.org/nvidia"   # or file:///srv/nvidia
//! pypi-index = "https://pypi.example.org/simple"        # or file:///srv/mirror/pypi/simple
//! debian-mirror = "https://mirrors.example.org/debian"  # or file:///srv/debian
//! system-root = "/opt/cudaenv"          # versions an administrator installed
//!
//! bundled-cuda = "wheels"   # next to a venv's own CUDA wheels: keep the stack off LD_LIBRARY_PATH
//!
//! [sources]
//! order = ["pypi", "nvidia", "debian", "legacy"]   # for --source auto (the default order)
//! [sources.component]
//! cudnn = ["nvidia", "legacy", "pypi"]       # per component, overrides `order`
//! ```
//!
//! Environment variables win over the file (`CUDAENV_NVIDIA_MIRROR`,
//! `CUDAENV_DEBIAN_MIRROR`, `CUDAENV_PYPI_INDEX`), so a one-off command can override a setting. A
//! missing file means defaults; a malformed one is an error naming the file,
//! never silently ignored. Unknown keys are rejected so typos show up.
//!
//! `Settings` is every setting resolved once, from the file and the
//! variables, each value with its `Origin` (a variable, `PATH:key` in the
//! file, pip's configuration, or the default) — as rustup's `ActiveSource`
//! says why a toolchain is active. Values are checked here and nowhere else,
//! and a bad one is reported as coming from where it came from: a variable as
//! `ContextError::BadVariable` (its name, its value, what it takes), the file as
//! `ContextError::Config` (the path and the key). Base URLs are checked when a
//! source that uses them is opened, so a mistyped NVIDIA mirror does not
//! stop a command that only asks PyPI.
//!
//! The system root is needed on the shim path, so `store` finds it cheaply:
//! `CUDAENV_SYSTEM_ROOT` if set (set but empty: none), else the file — only
//! parsed when it exists and mentions `system-root` at all, so a machine
//! without one pays a failed `open`.
//!
//! Nothing opens the file but `Loaded`, behind `Context::config`: the first
//! ask reads it (and the first that needs its keys parses it), later asks
//! get what was read, so a shim that needs three of its settings reads it
//! once, and a path that needs none never opens it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ContextError, Error, Result};
use crate::i18n::Lang;
use crate::spec::source::{SourceKind, SourceOrder};

pub const FILE_NAME: &str = "config.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Replaces `https://developer.download.nvidia.com` for every NVIDIA download.
    pub nvidia_mirror: Option<String>,
    /// The Python package index for the PyPI source.
    pub pypi_index: Option<String>,
    /// NVIDIA's package index (TensorRT's wheels), or a mirror of it.
    pub pypi_nvidia_index: Option<String>,
    /// A shared root of versions installed by an administrator, seen next to
    /// the user's own (absolute path).
    pub system_root: Option<PathBuf>,
    /// How long the PyPI release catalogue is reused (`1d`, `12h`, seconds).
    pub catalogue_max_age: Option<String>,
    /// Keep downloaded archives after an install (default: deleted once
    /// unpacked; the unpacked packages serve reinstalls).
    pub keep_downloads: Option<bool>,
    /// Replaces `http://deb.debian.org/debian` for the Debian source.
    pub debian_mirror: Option<String>,
    #[serde(default)]
    pub sources: SourcesConfig,
    /// What activation does next to a Python environment's own CUDA wheels.
    pub bundled_cuda: Option<BundledCuda>,
    /// The language of messages (`en`, `zh-CN`), over the locale.
    pub lang: Option<String>,
    /// The host compiler nvcc is pointed at (`auto`, a path or a name).
    pub host_compiler: Option<String>,
}

/// Which host compiler activation points nvcc at (`CUDAENV_HOST_COMPILER`,
/// config key `host-compiler`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostCompiler {
    /// The newest installed `g++-N` the active CUDA accepts.
    Auto,
    /// This compiler (a path, or a name looked up on PATH).
    Named(PathBuf),
}

impl HostCompiler {
    fn parse(v: &str) -> Option<HostCompiler> {
        let v = v.trim();
        // nvcc's flags are split on spaces: a path with one cannot be passed.
        if v.is_empty() || v.contains(char::is_whitespace) {
            return None;
        }
        Some(if v == "auto" {
            HostCompiler::Auto
        } else {
            HostCompiler::Named(v.into())
        })
    }

    /// The setting, if one is made, with where it came from.
    pub fn resolve(ctx: &Context) -> Result<Option<Setting<HostCompiler>>> {
        let expected = "`auto`, or a compiler's path or name without spaces";
        if let Some(s) = variable(
            ctx,
            env_vars::CUDAENV_HOST_COMPILER,
            expected,
            HostCompiler::parse,
        )? {
            return Ok(Some(s));
        }
        let config = ctx.config()?;
        match &config.host_compiler {
            None => Ok(None),
            Some(v) => match HostCompiler::parse(v) {
                Some(h) => Ok(Some(Setting::new(h, Origin::file(ctx, "host-compiler")))),
                None => Err(Origin::file(ctx, "host-compiler").invalid(v, expected)),
            },
        }
    }
}

/// Activation next to a Python environment that bundles CUDA wheels of the
/// version's major (`CUDAENV_BUNDLED_CUDA`, config key `bundled-cuda`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BundledCuda {
    /// The version's libraries go first on LD_LIBRARY_PATH, as everywhere (a warning says so).
    #[default]
    Stack,
    /// The version's libraries stay off LD_LIBRARY_PATH (and XLA/Triton are not
    /// pointed at it), so the wheels are the only copy; PATH and CUDA_HOME are set.
    Wheels,
}

impl BundledCuda {
    /// `CUDAENV_BUNDLED_CUDA`, else the config key, else `stack`.
    pub fn resolve(ctx: &Context) -> Result<BundledCuda> {
        Ok(Self::resolve_with_origin(ctx)?.value)
    }

    /// `resolve`, saying where the value came from.
    pub fn resolve_with_origin(ctx: &Context) -> Result<Setting<BundledCuda>> {
        let var = variable(
            ctx,
            env_vars::CUDAENV_BUNDLED_CUDA,
            "`stack` or `wheels`",
            |v| match v {
                "stack" => Some(BundledCuda::Stack),
                "wheels" => Some(BundledCuda::Wheels),
                _ => None,
            },
        )?;
        if let Some(s) = var {
            return Ok(s);
        }
        let config = ctx.config()?;
        Ok(match config.bundled_cuda {
            Some(b) => Setting::new(b, Origin::file(ctx, "bundled-cuda")),
            None => Setting::new(BundledCuda::default(), Origin::Default),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            BundledCuda::Stack => "stack",
            BundledCuda::Wheels => "wheels",
        }
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag (`--target-driver`), checked by clap.
    Flag(&'static str),
    /// An environment variable.
    Variable(&'static str),
    /// A key of `$CUDAENV_ROOT/config.toml`.
    File { path: PathBuf, key: &'static str },
    /// pip's own configuration (`PIP_INDEX_URL`, a pip.conf), for the index.
    Pip(String),
    /// apt's sources (the file naming the Debian mirror), for the Debian source.
    Apt(String),
    /// Nothing set it.
    Default,
}

impl Origin {
    pub(crate) fn file(ctx: &Context, key: &'static str) -> Origin {
        Origin::File {
            path: Config::path(ctx),
            key,
        }
    }

    /// The error for `value`, which is not `expected`, as coming from here.
    pub fn invalid(&self, value: &str, expected: impl Into<String>) -> Error {
        let expected = expected.into();
        match self {
            // Only the target flags have a variable behind them.
            Origin::Flag(flag) => Error::Context(ContextError::InvalidTarget {
                setting: flag.to_string(),
                input: value.escape_debug().to_string(),
                reason: format!("expected {expected}"),
            }),
            Origin::Variable(name) => Error::Context(ContextError::BadVariable {
                variable: name,
                value: value.escape_debug().to_string(),
                expected,
            }),
            Origin::File { path, key } => Error::Context(ContextError::Config {
                path: path.clone(),
                reason: format!("{key}: `{}` is not {expected}", value.escape_debug()),
            }),
            Origin::Pip(from) | Origin::Apt(from) => Error::Context(ContextError::Config {
                path: PathBuf::from(from),
                reason: format!("`{}` is not {expected}", value.escape_debug()),
            }),
            Origin::Default => Error::Context(ContextError::Config {
                path: PathBuf::from("cudaenv's built-in defaults"),
                reason: format!("`{}` is not {expected}", value.escape_debug()),
            }),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Flag(flag) | Origin::Variable(flag) => f.write_str(flag),
            Origin::File { path, key } => write!(f, "{}:{key}", path.display()),
            Origin::Pip(from) | Origin::Apt(from) => f.write_str(from),
            Origin::Default => f.write_str("the default"),
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Setting<T> {
    pub fn new(value: T, origin: Origin) -> Setting<T> {
        Setting { value, origin }
    }
}

impl Setting<String> {
    /// The value as a base URL (no trailing slash), or the error naming
    /// where it came from.
    pub fn base(&self) -> Result<&str> {
        check_base(&self.value).map_err(|_| {
            self.origin.invalid(
                &self.value,
                "an http(s):// or file:/// URL (without ?, # or spaces)",
            )
        })?;
        Ok(self.value.trim_end_matches('/'))
    }
}

/// A variable parsed by `parse`: `None` when it is unset or empty; a value
/// `parse` refuses is `ContextError::BadVariable` with `expected`.
pub(crate) fn variable<T>(
    ctx: &Context,
    name: &'static str,
    expected: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<Setting<T>>> {
    let Some(raw) = ctx.var_os(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let bad = || {
        Error::Context(ContextError::BadVariable {
            variable: name,
            value: raw.to_string_lossy().escape_debug().to_string(),
            expected: expected.to_string(),
        })
    };
    let text = raw.to_str().ok_or_else(bad)?;
    match parse(text) {
        Some(v) => Ok(Some(Setting::new(v, Origin::Variable(name)))),
        None => Err(bad()),
    }
}

const LANG_EXPECTED: &str = "a language cudaenv speaks: `en` or `zh-CN`";

/// The language of messages: `CUDAENV_LANG`, else `lang` in config.toml,
/// else the locale. A bad variable or key is an error naming it.
pub fn language(ctx: &Context) -> Result<Setting<Lang>> {
    if let Some(s) = variable(ctx, env_vars::CUDAENV_LANG, LANG_EXPECTED, Lang::parse)? {
        return Ok(s);
    }
    if let Some(l) = &ctx.config()?.lang {
        let lang = Lang::parse(l).expect("checked by load");
        return Ok(Setting::new(lang, Origin::file(ctx, "lang")));
    }
    Ok(locale_language(ctx))
}

/// `CUDAENV_LANG`, checked (every command does this first, so a wrong
/// value is an error before anything is shown in the wrong language).
pub fn check_language_variable(ctx: &Context) -> Result<()> {
    variable(ctx, env_vars::CUDAENV_LANG, LANG_EXPECTED, Lang::parse).map(|_| ())
}

/// The language the locale asks for, as gettext reads it: the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty.
pub fn locale_language(ctx: &Context) -> Setting<Lang> {
    for name in [env_vars::LC_ALL, env_vars::LC_MESSAGES, env_vars::LANG] {
        if let Some(v) = ctx.var(name).filter(|v| !v.is_empty()) {
            return Setting::new(Lang::from_locale(v), Origin::Variable(name));
        }
    }
    Setting::new(Lang::En, Origin::Default)
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesConfig {
    pub order: Option<Vec<SourceKind>>,
    #[serde(default)]
    pub component: BTreeMap<String, Vec<SourceKind>>,
}

impl Config {
    pub fn path(ctx: &Context) -> PathBuf {
        ctx.root().join(FILE_NAME)
    }

    /// The file's text checked: every key that can be checked without
    /// knowing what a command will do. A refusal is the reason, said of
    /// the file (`ContextError::Config`).
    fn parse(bytes: &[u8]) -> std::result::Result<Config, String> {
        // As `os::fs::read_bounded_text`: a stray byte does not make the whole file unreadable.
        let text = String::from_utf8_lossy(bytes);
        let config: Config = toml::from_str(&text).map_err(|e| e.message().to_string())?;
        if let Some(l) = &config.lang
            && Lang::parse(l).is_none()
        {
            return Err(format!(
                "lang: `{}` is not {LANG_EXPECTED}",
                l.escape_debug()
            ));
        }
        if let Some(i) = &config.pypi_index {
            check_base(i).map_err(|reason| format!("pypi-index: {reason}"))?;
        }
        if let Some(r) = &config.system_root
            && !r.is_absolute()
        {
            return Err(format!(
                "system-root: `{}` is not an absolute path",
                r.display()
            ));
        }
        if let Some(a) = &config.catalogue_max_age {
            parse_age(a).map_err(|reason| format!("catalogue-max-age: {reason}"))?;
        }
        if let Some(m) = &config.nvidia_mirror {
            check_base(m).map_err(|reason| format!("nvidia-mirror: {reason}"))?;
        }
        if let Some(m) = &config.debian_mirror {
            check_base(m).map_err(|reason| format!("debian-mirror: {reason}"))?;
        }
        if let Some(m) = &config.pypi_nvidia_index {
            check_base(m).map_err(|reason| format!("pypi-nvidia-index: {reason}"))?;
        }
        for (what, list) in config
            .sources
            .order
            .iter()
            .map(|l| ("order".to_string(), l))
            .chain(
                config
                    .sources
                    .component
                    .iter()
                    .map(|(k, l)| (format!("component.{k}"), l)),
            )
        {
            if list.is_empty() {
                return Err(format!("sources.{what} is empty"));
            }
        }
        Ok(config)
    }

    /// The per-component source order for `--source auto`.
    pub fn source_order(&self) -> SourceOrder {
        let mut order = SourceOrder::default();
        if let Some(o) = &self.sources.order {
            order.default = o.clone();
        }
        order.per_component.extend(self.sources.component.clone());
        order
    }
}

/// config.toml as this process read it, for `Context::config`: the bytes
/// once, the checked file once, each the first time something asks, so a
/// path that never asks never opens the file and one that asks three times
/// (a shim: the system root, bundled CUDA, the host compiler) opens it once.
/// A failure is kept as what rebuilds its error (errors are not `Clone`),
/// so every ask reports it the same way.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    bytes: OnceLock<std::result::Result<Option<Vec<u8>>, Failure>>,
    config: OnceLock<std::result::Result<Config, Failure>>,
}

/// Why config.toml could not be used, as data to rebuild the error from.
#[derive(Debug, Clone)]
enum Failure {
    /// Reading it failed: `Error::Io` with this source.
    Read {
        path: PathBuf,
        kind: std::io::ErrorKind,
        os_code: Option<i32>,
        message: String,
    },
    /// It is not a valid file: `ContextError::Config`.
    Invalid { path: PathBuf, reason: String },
}

impl Failure {
    fn error(&self) -> Error {
        match self {
            Failure::Read {
                path,
                kind,
                os_code,
                message,
            } => {
                let source = match os_code {
                    Some(code) => std::io::Error::from_raw_os_error(*code),
                    None => std::io::Error::new(*kind, message.clone()),
                };
                Error::io("cannot read", path)(source)
            }
            Failure::Invalid { path, reason } => Error::Context(ContextError::Config {
                path: path.clone(),
                reason: reason.clone(),
            }),
        }
    }
}

impl Loaded {
    /// The file's bytes, `None` when there is none.
    pub(crate) fn bytes(&self, ctx: &Context) -> Result<Option<&[u8]>> {
        let read = self.bytes.get_or_init(|| {
            let path = Config::path(ctx);
            match crate::os::fs::read_bounded(&path, crate::os::fs::SMALL) {
                Ok(b) => Ok(Some(b)),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => {
                    let e = std::io::Error::from(e);
                    Err(Failure::Read {
                        path,
                        kind: e.kind(),
                        os_code: e.raw_os_error(),
                        message: e.to_string(),
                    })
                }
            }
        });
        match read {
            Ok(b) => Ok(b.as_deref()),
            Err(f) => Err(f.error()),
        }
    }

    /// The file checked, or the defaults when there is none.
    pub(crate) fn config(&self, ctx: &Context) -> Result<&Config> {
        if self.config.get().is_none() {
            let parsed = match self.bytes(ctx)? {
                None => Ok(Config::default()),
                Some(b) => Config::parse(b).map_err(|reason| Failure::Invalid {
                    path: Config::path(ctx),
                    reason,
                }),
            };
            // Another thread may have got there first: both parsed the same bytes.
            let _ = self.config.set(parsed);
        }
        match self.config.get().expect("set above") {
            Ok(c) => Ok(c),
            Err(f) => Err(f.error()),
        }
    }
}

/// The system root, if any: `CUDAENV_SYSTEM_ROOT`, else `system-root` in
/// config.toml.
pub fn system_root(ctx: &Context) -> Result<Option<PathBuf>> {
    if let Some(v) = ctx.var_os(env_vars::CUDAENV_SYSTEM_ROOT) {
        if v.is_empty() {
            return Ok(None);
        }
        return Ok(Some(crate::context::absolutize(
            std::path::Path::new(v),
            ctx.cwd(),
        )));
    }
    // Only parsed when it mentions the key at all: a file of other settings
    // costs this path one read, never a parse (nor its errors).
    match ctx.config_bytes()? {
        Some(bytes) if bytes.windows(11).any(|w| w == b"system-root") => {
            Ok(ctx.config()?.system_root.clone())
        }
        _ => Ok(None),
    }
}

pub(crate) const DAY: u64 = 24 * 60 * 60;

/// `3600`, `90s`, `90m`, `12h`, `1d` → seconds.
pub fn parse_age(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let n: u64 = num.parse().map_err(|_| {
        format!(
            "`{}` is not a duration such as `1d`, `12h` or `3600`",
            s.escape_debug()
        )
    })?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => DAY,
        _ => {
            return Err(format!(
                "`{}`: the unit must be s, m, h or d",
                s.escape_debug()
            ));
        }
    };
    Ok(n.saturating_mul(scale))
}

/// A mirror or index is an `http://`, `https://` or `file://` URL (a
/// directory laid out like NVIDIA's server or a simple index, as `cudaenv
/// mirror` writes them). Anything else is a mistake worth reporting.
pub(crate) fn check_base(s: &str) -> std::result::Result<(), String> {
    let ok = ["https://", "http://", "file:///"]
        .iter()
        .any(|p| s.starts_with(p) && s.len() > p.len());
    if !ok {
        return Err(format!(
            "`{}` is not an http(s):// or file:/// URL",
            crate::spec::safe_url::DisplaySafeUrl::new(s)
                .to_string()
                .escape_debug()
        ));
    }
    // A directory's path may hold spaces; a URL's may not.
    let spaces = !s.starts_with("file:///") && s.contains(char::is_whitespace);
    if spaces || s.contains(['\n', '\r', '\t', '?', '#']) {
        return Err(format!(
            "`{}` has characters a base URL may not have",
            crate::spec::safe_url::DisplaySafeUrl::new(s)
                .to_string()
                .escape_debug()
        ));
    }
    Ok(())
}

/// `CUDAENV_KEEP_DOWNLOADS`, else `keep-downloads` in the file, else off:
/// an installed version's archives are deleted once unpacked, since the
/// package store's unpacked copy (the version's own files, hard-linked)
/// serves reinstalls. `cudaenv mirror` is the way to keep archives for
/// machines without a network.
pub fn keep_downloads(ctx: &Context, config: &Config) -> Result<Setting<bool>> {
    let var = variable(
        ctx,
        env_vars::CUDAENV_KEEP_DOWNLOADS,
        "`1` or `0` (`true`/`false`, `yes`/`no`)",
        |v| match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(true),
            "0" | "false" | "no" | "off" => Some(false),
            _ => None,
        },
    )?;
    Ok(var.unwrap_or_else(|| match config.keep_downloads {
        Some(k) => Setting::new(k, Origin::file(ctx, "keep-downloads")),
        None => Setting::new(false, Origin::Default),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_at(root: &std::path::Path) -> Context {
        let env = [
            ("HOME".into(), root.as_os_str().to_owned()),
            ("CUDAENV_ROOT".into(), root.as_os_str().to_owned()),
        ];
        Context::new(env, root.to_path_buf()).unwrap()
    }

    /// What a user reads of an error: its message and causes, hint and exit code.
    fn seen(e: &Error) -> (String, Option<String>, crate::error::ExitCode) {
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            text.push_str(&format!("\ncaused by: {c}"));
            cause = c.source();
        }
        (text, e.hint(), e.exit_code())
    }

    #[test]
    fn a_bad_file_is_the_same_error_on_every_ask() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(FILE_NAME), "nvidia-mirror = \"ftp://x\"\n").unwrap();
        let ctx = ctx_at(tmp.path());
        let first = ctx.config().unwrap_err();
        assert!(matches!(
            first,
            Error::Context(ContextError::Config { ref path, .. }) if *path == Config::path(&ctx)
        ));
        // Fixed on disk: this process keeps what it read.
        std::fs::write(tmp.path().join(FILE_NAME), "").unwrap();
        let again = ctx.clone().config().unwrap_err();
        assert_eq!(seen(&again), seen(&first));
        assert_eq!(
            seen(&HostCompiler::resolve(&ctx).unwrap_err()),
            seen(&first)
        );
        assert!(
            ctx_at(tmp.path()).config().is_ok(),
            "a new process reads it anew"
        );
    }

    #[test]
    fn an_unreadable_file_is_the_same_error_on_every_ask() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(FILE_NAME)).unwrap();
        let ctx = ctx_at(tmp.path());
        let first = ctx.config().unwrap_err();
        assert!(matches!(first, Error::Io { .. }), "{first:?}");
        assert_eq!(seen(&ctx.config().unwrap_err()), seen(&first));
        assert_eq!(seen(&system_root(&ctx).unwrap_err()), seen(&first));
    }

    #[test]
    fn another_root_reads_its_own_file() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(a.path().join(FILE_NAME), "lang = \"zh-CN\"\n").unwrap();
        let ctx = ctx_at(a.path());
        assert_eq!(ctx.config().unwrap().lang.as_deref(), Some("zh-CN"));
        let other = ctx.with_root(b.path().to_path_buf());
        assert_eq!(other.config().unwrap().lang, None);
    }
}
