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
//! `Error::BadVariable` (its name, its value, what it takes), the file as
//! `Error::Config` (the path and the key). Base URLs are checked when a
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
use crate::error::{Error, Result};
use crate::install::sources::SourceKind;
use crate::install::sources::nvidia::DEFAULT_BASE;
use crate::install::sources::resolve::SourceOrder;
use crate::machine::compat::target::Target;
use crate::store::Store;

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
    /// Replaces `http://deb.debian.org/debian` for the Debian source.
    pub debian_mirror: Option<String>,
    #[serde(default)]
    pub sources: SourcesConfig,
    /// What activation does next to a Python environment's own CUDA wheels.
    pub bundled_cuda: Option<BundledCuda>,
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
    /// Nothing set it.
    Default,
}

impl Origin {
    fn file(ctx: &Context, key: &'static str) -> Origin {
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
            Origin::Flag(flag) => Error::InvalidTarget {
                setting: flag.to_string(),
                input: value.escape_debug().to_string(),
                reason: format!("expected {expected}"),
            },
            Origin::Variable(name) => Error::BadVariable {
                variable: name,
                value: value.escape_debug().to_string(),
                expected,
            },
            Origin::File { path, key } => Error::Config {
                path: path.clone(),
                reason: format!("{key}: `{}` is not {expected}", value.escape_debug()),
            },
            Origin::Pip(from) => Error::Config {
                path: PathBuf::from(from),
                reason: format!("`{}` is not {expected}", value.escape_debug()),
            },
            Origin::Default => Error::Config {
                path: PathBuf::from("cudaenv's built-in defaults"),
                reason: format!("`{}` is not {expected}", value.escape_debug()),
            },
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Flag(flag) | Origin::Variable(flag) => f.write_str(flag),
            Origin::File { path, key } => write!(f, "{}:{key}", path.display()),
            Origin::Pip(from) => f.write_str(from),
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

/// The machine to plan for instead of this one: each part from its flag,
/// else from its variable; `None` for this machine. A bad flag is
/// `InvalidTarget` naming the flag, a bad variable `BadVariable`.
pub fn target(
    ctx: &Context,
    driver_flag: Option<&str>,
    arch_flag: Option<&str>,
) -> Result<Option<Setting<Target>>> {
    let part = |flag: Option<&str>,
                flag_name: &'static str,
                var: &'static str,
                is_driver: bool|
     -> Result<Option<Setting<Target>>> {
        let (value, origin) = match (flag, ctx.var(var)) {
            (Some(f), _) => (f, Origin::Flag(flag_name)),
            (None, Some(v)) => (v, Origin::Variable(var)),
            (None, None) => return Ok(None),
        };
        let parsed = if is_driver {
            Target::parse(Some(value), None)
        } else {
            Target::parse(None, Some(value))
        };
        let b = match parsed {
            Ok(t) => return Ok(t.map(|t| Setting::new(t, origin))),
            Err(b) => b,
        };
        let input = if b.input.is_empty() {
            value.to_string()
        } else {
            b.input
        };
        Err(match origin {
            Origin::Variable(_) => {
                // Target's reasons read "not X": what is expected is X.
                let expected = match b.reason.strip_prefix("not ") {
                    Some(x) if input == value => x.to_string(),
                    Some(x) => format!("{x} (not `{input}`)"),
                    None => format!("a list of GPU architectures ({})", b.reason),
                };
                origin.invalid(value, expected)
            }
            _ => Error::InvalidTarget {
                setting: flag_name.to_string(),
                input,
                reason: b.reason,
            },
        })
    };
    let driver = part(
        driver_flag,
        "--target-driver",
        env_vars::CUDAENV_TARGET_DRIVER,
        true,
    )?;
    let arch = part(
        arch_flag,
        "--target-arch",
        env_vars::CUDAENV_TARGET_ARCH,
        false,
    )?;
    Ok(match (driver, arch) {
        (None, None) => None,
        (d, a) => {
            // Said as the driver's origin, else the architecture's.
            let origin = d
                .as_ref()
                .or(a.as_ref())
                .map(|s| s.origin.clone())
                .unwrap_or(Origin::Default);
            Some(Setting::new(
                Target {
                    driver: d.and_then(|t| t.value.driver),
                    arch: a.map(|t| t.value.arch).unwrap_or_default(),
                },
                origin,
            ))
        }
    })
}

/// A variable parsed by `parse`: `None` when it is unset or empty; a value
/// `parse` refuses is `Error::BadVariable` with `expected`.
fn variable<T>(
    ctx: &Context,
    name: &'static str,
    expected: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<Setting<T>>> {
    let Some(raw) = ctx.var_os(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let bad = || Error::BadVariable {
        variable: name,
        value: raw.to_string_lossy().escape_debug().to_string(),
        expected: expected.to_string(),
    };
    let text = raw.to_str().ok_or_else(bad)?;
    match parse(text) {
        Some(v) => Ok(Some(Setting::new(v, Origin::Variable(name)))),
        None => Err(bad()),
    }
}

/// Every setting an installing command uses, resolved once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The file as read (checked when it was read).
    pub config: Config,
    /// NVIDIA's download host or a mirror of it (checked by `Setting::base`).
    pub nvidia_mirror: Setting<String>,
    /// Debian's archive or a mirror of it (checked by `Setting::base`).
    pub debian_mirror: Setting<String>,
    /// The package index for the PyPI source.
    pub pypi_index: Setting<String>,
    /// NVIDIA's package index, for the libraries only it has (TensorRT).
    pub pypi_nvidia_index: Setting<String>,
    /// How long the PyPI release catalogue is reused, in seconds.
    pub catalogue_max_age: Setting<u64>,
    /// From what size a download is fetched over several connections.
    pub parallel_download_min: Setting<u64>,
}

impl Settings {
    /// Reads the file and the variables, and checks what is not a base URL.
    pub fn resolve(ctx: &Context) -> Result<Settings> {
        let config = Config::load(ctx)?;
        let base =
            |var: &'static str, key: &'static str, file: &Option<String>, default: &str| match ctx
                .var(var)
            {
                Some(v) => Setting::new(v.to_string(), Origin::Variable(var)),
                None => match file {
                    Some(f) => Setting::new(f.clone(), Origin::file(ctx, key)),
                    None => Setting::new(default.to_string(), Origin::Default),
                },
            };
        let nvidia_mirror = base(
            env_vars::CUDAENV_NVIDIA_MIRROR,
            "nvidia-mirror",
            &config.nvidia_mirror,
            DEFAULT_BASE,
        );
        let debian_mirror = base(
            env_vars::CUDAENV_DEBIAN_MIRROR,
            "debian-mirror",
            &config.debian_mirror,
            crate::install::sources::debian::DEFAULT_MIRROR,
        );
        let pypi_nvidia_index = base(
            env_vars::CUDAENV_PYPI_NVIDIA_INDEX,
            "pypi-nvidia-index",
            &config.pypi_nvidia_index,
            crate::install::sources::pypi::NVIDIA_INDEX,
        );
        let pypi_index = match (ctx.var(env_vars::CUDAENV_PYPI_INDEX), &config.pypi_index) {
            (None, Some(i)) => Setting::new(
                i.trim_end_matches('/').to_string(),
                Origin::file(ctx, "pypi-index"),
            ),
            _ => {
                let (url, why) = crate::install::sources::pypi::index_url(ctx);
                let origin = match why.as_str() {
                    env_vars::CUDAENV_PYPI_INDEX => Origin::Variable(env_vars::CUDAENV_PYPI_INDEX),
                    "the default" => Origin::Default,
                    _ => Origin::Pip(why),
                };
                Setting::new(url, origin)
            }
        };
        let catalogue_max_age = match variable(
            ctx,
            env_vars::CUDAENV_CATALOGUE_MAX_AGE,
            "a duration such as `1d`, `12h` or `3600` (seconds)",
            |v| parse_age(v).ok(),
        )? {
            Some(s) => s,
            None => match &config.catalogue_max_age {
                Some(a) => Setting::new(
                    parse_age(a).expect("checked by load"),
                    Origin::file(ctx, "catalogue-max-age"),
                ),
                None => Setting::new(DAY, Origin::Default),
            },
        };
        let parallel_download_min = variable(
            ctx,
            env_vars::CUDAENV_PARALLEL_DOWNLOAD_MIN,
            "a number of bytes",
            |v| v.trim().parse().ok(),
        )?
        .unwrap_or_else(|| Setting::new(crate::install::fetch::PARALLEL_MIN, Origin::Default));
        Ok(Settings {
            config,
            nvidia_mirror,
            debian_mirror,
            pypi_index,
            pypi_nvidia_index,
            catalogue_max_age,
            parallel_download_min,
        })
    }

    /// The per-component source order for `--source auto`.
    pub fn source_order(&self) -> SourceOrder {
        self.config.source_order()
    }

    /// The NVIDIA base URL, checked.
    pub fn nvidia_base(&self) -> Result<String> {
        self.nvidia_mirror.base().map(str::to_string)
    }

    /// The Debian mirror, checked.
    pub fn debian_base(&self) -> Result<String> {
        self.debian_mirror.base().map(str::to_string)
    }

    /// NVIDIA's package index (or its mirror), checked.
    pub fn pypi_nvidia_base(&self) -> Result<String> {
        self.pypi_nvidia_index.base().map(str::to_string)
    }

    /// The package index, checked when cudaenv's own setting names it
    /// (pip's settings are pip's: they are used as pip would).
    pub fn pypi_base(&self) -> Result<String> {
        match self.pypi_index.origin {
            Origin::Flag(_) | Origin::Variable(_) | Origin::File { .. } => {
                self.pypi_index.base().map(str::to_string)
            }
            Origin::Pip(_) | Origin::Default => Ok(self.pypi_index.value.clone()),
        }
    }
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
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(Error::io("cannot read", &path)(e)),
        };
        let config: Config = toml::from_str(&text).map_err(|e| Error::Config {
            path: path.clone(),
            reason: e.message().to_string(),
        })?;
        if let Some(i) = &config.pypi_index {
            check_base(i).map_err(|reason| Error::Config {
                path: path.clone(),
                reason: format!("pypi-index: {reason}"),
            })?;
        }
        if let Some(r) = &config.system_root
            && !r.is_absolute()
        {
            return Err(Error::Config {
                path: path.clone(),
                reason: format!("system-root: `{}` is not an absolute path", r.display()),
            });
        }
        if let Some(a) = &config.catalogue_max_age {
            parse_age(a).map_err(|reason| Error::Config {
                path: path.clone(),
                reason: format!("catalogue-max-age: {reason}"),
            })?;
        }
        if let Some(m) = &config.nvidia_mirror {
            check_base(m).map_err(|reason| Error::Config {
                path: path.clone(),
                reason: format!("nvidia-mirror: {reason}"),
            })?;
        }
        if let Some(m) = &config.debian_mirror {
            check_base(m).map_err(|reason| Error::Config {
                path: path.clone(),
                reason: format!("debian-mirror: {reason}"),
            })?;
        }
        if let Some(m) = &config.pypi_nvidia_index {
            check_base(m).map_err(|reason| Error::Config {
                path: path.clone(),
                reason: format!("pypi-nvidia-index: {reason}"),
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
                return Err(Error::Config {
                    path: path.clone(),
                    reason: format!("sources.{what} is empty"),
                });
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
    match std::fs::read(&path) {
        Ok(bytes) if !bytes.windows(11).any(|w| w == b"system-root") => Ok(None),
        Ok(_) => Ok(Config::load(ctx)?.system_root),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot read", &path)(e)),
    }
}

/// The store as configured: the user's root and the system root, if any.
pub fn store(ctx: &Context) -> Result<Store> {
    Ok(Store::with_system(ctx.root(), system_root(ctx)?))
}

const DAY: u64 = 24 * 60 * 60;

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
fn check_base(s: &str) -> std::result::Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_with(root: &std::path::Path, vars: &[(&str, &str)]) -> Context {
        let mut env = BTreeMap::new();
        env.insert("HOME".into(), root.as_os_str().to_owned());
        env.insert("CUDAENV_ROOT".into(), root.as_os_str().to_owned());
        for (k, v) in vars {
            env.insert((*k).into(), (*v).into());
        }
        Context::new(env, root.to_path_buf()).unwrap()
    }

    #[test]
    fn catalogue_max_age_from_env_file_or_a_day() {
        assert_eq!(parse_age("3600"), Ok(3600));
        assert_eq!(parse_age("90m"), Ok(5400));
        assert_eq!(parse_age("1d"), Ok(86400));
        assert!(parse_age("1w").is_err() && parse_age("soon").is_err() && parse_age("").is_err());
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        let age = |ctx: &Context| Settings::resolve(ctx).unwrap().catalogue_max_age;
        assert_eq!(age(&ctx), Setting::new(DAY, Origin::Default));
        std::fs::write(tmp.path().join(FILE_NAME), "catalogue-max-age = \"12h\"\n").unwrap();
        assert_eq!(
            age(&ctx),
            Setting::new(
                12 * 3600,
                Origin::File {
                    path: tmp.path().join(FILE_NAME),
                    key: "catalogue-max-age"
                }
            )
        );
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_CATALOGUE_MAX_AGE", "0")]);
        assert_eq!(
            age(&ctx),
            Setting::new(0, Origin::Variable("CUDAENV_CATALOGUE_MAX_AGE"))
        );
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "catalogue-max-age = \"later\"\n",
        )
        .unwrap();
        assert!(Config::load(&ctx).is_err());
    }

    #[test]
    fn defaults_file_and_env_precedence() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(c.nvidia_base().unwrap(), DEFAULT_BASE);
        assert_eq!(c.source_order(), SourceOrder::default());
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "nvidia-mirror = \"file:///srv/nvidia/\"\n[sources]\norder = [\"nvidia\", \"legacy\"]\n[sources.component]\ncudnn = [\"legacy\"]\n",
        )
        .unwrap();
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(c.nvidia_base().unwrap(), "file:///srv/nvidia");
        assert_eq!(
            c.nvidia_mirror.origin.to_string(),
            format!("{}:nvidia-mirror", tmp.path().join(FILE_NAME).display())
        );
        let o = c.source_order();
        assert_eq!(o.default, vec![SourceKind::Nvidia, SourceKind::Legacy]);
        assert_eq!(o.per_component["cudnn"], vec![SourceKind::Legacy]);
        assert_eq!(
            o.per_component["nvcc"][0],
            SourceKind::Nvidia,
            "defaults stay"
        );
        let ctx = ctx_with(
            tmp.path(),
            &[("CUDAENV_NVIDIA_MIRROR", "http://127.0.0.1:9/nv")],
        );
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(c.nvidia_base().unwrap(), "http://127.0.0.1:9/nv");
        assert_eq!(c.nvidia_mirror.origin.to_string(), "CUDAENV_NVIDIA_MIRROR");
    }

    /// Defect: a bad variable was reported as an invalid version spec, or as
    /// a config file error; it is reported as the variable, with its value
    /// and what it takes.
    #[test]
    fn a_bad_variable_is_named_as_a_variable() {
        let tmp = tempfile::tempdir().unwrap();
        for (var, value) in [
            ("CUDAENV_CATALOGUE_MAX_AGE", "soon"),
            ("CUDAENV_PARALLEL_DOWNLOAD_MIN", "lots"),
        ] {
            let ctx = ctx_with(tmp.path(), &[(var, value)]);
            match Settings::resolve(&ctx) {
                Err(Error::BadVariable {
                    variable, value: v, ..
                }) => assert_eq!((variable, v.as_str()), (var, value)),
                other => panic!("{var}: {other:?}"),
            }
        }
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_BUNDLED_CUDA", "sometimes")]);
        assert!(matches!(
            BundledCuda::resolve(&ctx),
            Err(Error::BadVariable {
                variable: "CUDAENV_BUNDLED_CUDA",
                ..
            })
        ));
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_BUNDLED_CUDA", "wheels")]);
        assert_eq!(
            BundledCuda::resolve_with_origin(&ctx).unwrap(),
            Setting::new(
                BundledCuda::Wheels,
                Origin::Variable("CUDAENV_BUNDLED_CUDA")
            )
        );
    }

    #[test]
    fn a_target_part_comes_from_its_flag_else_its_variable() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(
            tmp.path(),
            &[
                ("CUDAENV_TARGET_DRIVER", "550.54.15"),
                ("CUDAENV_TARGET_ARCH", "8.6"),
            ],
        );
        let t = target(&ctx, None, None).unwrap().unwrap();
        assert_eq!(t.origin, Origin::Variable("CUDAENV_TARGET_DRIVER"));
        assert_eq!(t.value.driver.as_deref(), Some("550.54.15"));
        assert_eq!(t.value.arch, ["sm_86"]);
        let t = target(&ctx, Some("580"), None).unwrap().unwrap();
        assert_eq!(t.origin.to_string(), "--target-driver");
        assert_eq!(
            (t.value.driver.as_deref(), t.value.arch),
            (Some("580"), vec!["sm_86".to_string()])
        );
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_TARGET_ARCH", "sm_90,hopper")]);
        match target(&ctx, None, None) {
            Err(Error::BadVariable {
                variable: "CUDAENV_TARGET_ARCH",
                expected,
                ..
            }) => assert!(expected.contains("not `hopper`"), "{expected}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            target(&ctx_with(tmp.path(), &[]), None, None).unwrap(),
            None
        );
    }

    #[test]
    fn system_root_from_variable_then_file() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        assert_eq!(system_root(&ctx).unwrap(), None);
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "pypi-index = \"https://x/simple\"\n",
        )
        .unwrap();
        assert_eq!(system_root(&ctx).unwrap(), None);
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "system-root = \"/opt/cudaenv\"\n",
        )
        .unwrap();
        assert_eq!(system_root(&ctx).unwrap(), Some("/opt/cudaenv".into()));
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_SYSTEM_ROOT", "/srv/cuda")]);
        assert_eq!(system_root(&ctx).unwrap(), Some("/srv/cuda".into()));
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_SYSTEM_ROOT", "")]);
        assert_eq!(system_root(&ctx).unwrap(), None);
        // A broken file is an error even on the shim's path, never ignored.
        std::fs::write(tmp.path().join(FILE_NAME), "system-root = 3\n").unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        assert!(matches!(system_root(&ctx), Err(Error::Config { .. })));
    }

    #[test]
    fn debian_mirror_from_default_file_and_env() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(
            c.debian_base().unwrap(),
            crate::install::sources::debian::DEFAULT_MIRROR
        );
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "debian-mirror = \"https://mirrors.example.org/debian/\"\n",
        )
        .unwrap();
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(
            c.debian_base().unwrap(),
            "https://mirrors.example.org/debian"
        );
        let ctx = ctx_with(
            tmp.path(),
            &[("CUDAENV_DEBIAN_MIRROR", "file:///srv/debian")],
        );
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(c.debian_base().unwrap(), "file:///srv/debian");
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_DEBIAN_MIRROR", "deb.debian.org")]);
        assert!(matches!(
            Settings::resolve(&ctx).unwrap().debian_base(),
            Err(Error::BadVariable {
                variable: "CUDAENV_DEBIAN_MIRROR",
                ..
            })
        ));
        std::fs::write(tmp.path().join(FILE_NAME), "debian-mirror = \"ftp://x\"\n").unwrap();
        assert!(matches!(Config::load(&ctx), Err(Error::Config { .. })));
    }

    #[test]
    fn rejects_bad_files_and_mirrors() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        for bad in [
            "nvidia-miror = \"https://x\"\n",
            "nvidia-mirror = \"ftp://x\"\n",
            "nvidia-mirror = \"/srv/nvidia\"\n",
            "[sources]\norder = [\"conda\"]\n",
            "[sources]\norder = []\n",
            "system-root = \"relative/dir\"\n",
            "not toml",
        ] {
            std::fs::write(tmp.path().join(FILE_NAME), bad).unwrap();
            assert!(
                matches!(Config::load(&ctx), Err(Error::Config { .. })),
                "{bad:?}"
            );
        }
        // A simple index on disk (as `cudaenv mirror` writes one) is an index too.
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "pypi-index = \"file:///srv/cuda mirror/pypi/simple\"\n",
        )
        .unwrap();
        assert!(Config::load(&ctx).is_ok());
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "pypi-index = \"/srv/m/simple\"\n",
        )
        .unwrap();
        assert!(matches!(Config::load(&ctx), Err(Error::Config { .. })));
        std::fs::remove_file(tmp.path().join(FILE_NAME)).unwrap();
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_NVIDIA_MIRROR", "mirror.local")]);
        assert!(matches!(
            Settings::resolve(&ctx).unwrap().nvidia_base(),
            Err(Error::BadVariable {
                variable: "CUDAENV_NVIDIA_MIRROR",
                ..
            })
        ));
    }
}
