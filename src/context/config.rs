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

use std::collections::BTreeMap;
use std::path::PathBuf;

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
        let config = Config::load(ctx)?;
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
        let config = Config::load(ctx)?;
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
    if let Some(l) = Config::load(ctx)?.lang {
        let lang = Lang::parse(&l).expect("checked by load");
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

    /// Reads the file, or the defaults when there is none.
    pub fn load(ctx: &Context) -> Result<Config> {
        let path = Self::path(ctx);
        let text = match crate::os::fs::read_bounded_text(&path, crate::os::fs::SMALL) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(Config::default()),
            Err(e) => return Err(Error::io("cannot read", &path)(e.into())),
        };
        let config: Config = toml::from_str(&text).map_err(|e| {
            Error::Context(ContextError::Config {
                path: path.clone(),
                reason: e.message().to_string(),
            })
        })?;
        if let Some(l) = &config.lang
            && Lang::parse(l).is_none()
        {
            return Err(Error::Context(ContextError::Config {
                path: path.clone(),
                reason: format!("lang: `{}` is not {LANG_EXPECTED}", l.escape_debug()),
            }));
        }
        if let Some(i) = &config.pypi_index {
            check_base(i).map_err(|reason| {
                Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("pypi-index: {reason}"),
                })
            })?;
        }
        if let Some(r) = &config.system_root
            && !r.is_absolute()
        {
            return Err(Error::Context(ContextError::Config {
                path: path.clone(),
                reason: format!("system-root: `{}` is not an absolute path", r.display()),
            }));
        }
        if let Some(a) = &config.catalogue_max_age {
            parse_age(a).map_err(|reason| {
                Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("catalogue-max-age: {reason}"),
                })
            })?;
        }
        if let Some(m) = &config.nvidia_mirror {
            check_base(m).map_err(|reason| {
                Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("nvidia-mirror: {reason}"),
                })
            })?;
        }
        if let Some(m) = &config.debian_mirror {
            check_base(m).map_err(|reason| {
                Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("debian-mirror: {reason}"),
                })
            })?;
        }
        if let Some(m) = &config.pypi_nvidia_index {
            check_base(m).map_err(|reason| {
                Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("pypi-nvidia-index: {reason}"),
                })
            })?;
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
                return Err(Error::Context(ContextError::Config {
                    path: path.clone(),
                    reason: format!("sources.{what} is empty"),
                }));
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
    let path = Config::path(ctx);
    match crate::os::fs::read_bounded(&path, crate::os::fs::SMALL) {
        Ok(bytes) if !bytes.windows(11).any(|w| w == b"system-root") => Ok(None),
        Ok(_) => Ok(Config::load(ctx)?.system_root),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(Error::io("cannot read", &path)(e.into())),
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
