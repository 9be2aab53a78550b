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
//! The system root is needed on the shim path, so `store` finds it cheaply:
//! `CUDAENV_SYSTEM_ROOT` if set (set but empty: none), else the file — only
//! parsed when it exists and mentions `system-root` at all, so a machine
//! without one pays a failed `open`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::context::Context;
use crate::env_vars;
use crate::error::{Error, Result};
use crate::sources::SourceKind;
use crate::sources::nvidia::DEFAULT_BASE;
use crate::sources::resolve::SourceOrder;
use crate::store::Store;

pub const FILE_NAME: &str = "config.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Replaces `https://developer.download.nvidia.com` for every NVIDIA download.
    pub nvidia_mirror: Option<String>,
    /// The Python package index for the PyPI source.
    pub pypi_index: Option<String>,
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
        if let Some(v) = ctx.var(env_vars::CUDAENV_BUNDLED_CUDA) {
            return match v {
                "stack" => Ok(BundledCuda::Stack),
                "wheels" => Ok(BundledCuda::Wheels),
                other => Err(Error::Config {
                    path: PathBuf::from(format!("${}", env_vars::CUDAENV_BUNDLED_CUDA)),
                    reason: format!("`{}` is not `stack` or `wheels`", other.escape_debug()),
                }),
            };
        }
        Ok(Config::load(ctx)?.bundled_cuda.unwrap_or_default())
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

    /// The base URL for NVIDIA downloads: `CUDAENV_NVIDIA_MIRROR`, else the
    /// config key, else NVIDIA's host. No trailing slash.
    pub fn nvidia_base(&self, ctx: &Context) -> Result<String> {
        if let Some(m) = ctx.var(env_vars::CUDAENV_NVIDIA_MIRROR) {
            check_base(m).map_err(|reason| Error::Config {
                path: PathBuf::from(format!("${}", env_vars::CUDAENV_NVIDIA_MIRROR)),
                reason,
            })?;
            return Ok(m.trim_end_matches('/').to_string());
        }
        Ok(self
            .nvidia_mirror
            .as_deref()
            .unwrap_or(DEFAULT_BASE)
            .trim_end_matches('/')
            .to_string())
    }

    /// The Debian mirror: `CUDAENV_DEBIAN_MIRROR`, else the config key,
    /// else Debian's redirector. No trailing slash.
    pub fn debian_mirror(&self, ctx: &Context) -> Result<String> {
        if let Some(m) = ctx.var(env_vars::CUDAENV_DEBIAN_MIRROR) {
            check_base(m).map_err(|reason| Error::Config {
                path: PathBuf::from(format!("${}", env_vars::CUDAENV_DEBIAN_MIRROR)),
                reason,
            })?;
            return Ok(m.trim_end_matches('/').to_string());
        }
        Ok(self
            .debian_mirror
            .as_deref()
            .unwrap_or(crate::sources::debian::DEFAULT_MIRROR)
            .trim_end_matches('/')
            .to_string())
    }

    /// The PyPI index and why it was chosen: `CUDAENV_PYPI_INDEX`, else the
    /// `pypi-index` key, else pip's settings (`PIP_INDEX_URL`, pip.conf), else PyPI.
    pub fn pypi_index(&self, ctx: &Context) -> (String, String) {
        if ctx.var(env_vars::CUDAENV_PYPI_INDEX).is_none()
            && let Some(i) = &self.pypi_index
        {
            return (
                i.trim_end_matches('/').to_string(),
                format!("pypi-index in {}", Self::path(ctx).display()),
            );
        }
        crate::sources::pypi::index_url(ctx)
    }

    /// How long the PyPI release catalogue is reused, in seconds:
    /// `CUDAENV_CATALOGUE_MAX_AGE`, else `catalogue-max-age`, else a day.
    pub fn catalogue_max_age(&self, ctx: &Context) -> Result<u64> {
        if let Some(v) = ctx.var(env_vars::CUDAENV_CATALOGUE_MAX_AGE) {
            return parse_age(v).map_err(|reason| Error::InvalidSpec {
                input: v.escape_debug().to_string(),
                reason: format!("{}: {reason}", env_vars::CUDAENV_CATALOGUE_MAX_AGE),
            });
        }
        Ok(self
            .catalogue_max_age
            .as_deref()
            .map(|a| parse_age(a).expect("checked by load"))
            .unwrap_or(DAY))
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
            crate::safe_url::DisplaySafeUrl::new(s)
                .to_string()
                .escape_debug()
        ));
    }
    // A directory's path may hold spaces; a URL's may not.
    let spaces = !s.starts_with("file:///") && s.contains(char::is_whitespace);
    if spaces || s.contains(['\n', '\r', '\t', '?', '#']) {
        return Err(format!(
            "`{}` has characters a base URL may not have",
            crate::safe_url::DisplaySafeUrl::new(s)
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
        assert_eq!(
            Config::load(&ctx).unwrap().catalogue_max_age(&ctx).unwrap(),
            DAY
        );
        std::fs::write(tmp.path().join(FILE_NAME), "catalogue-max-age = \"12h\"\n").unwrap();
        let c = Config::load(&ctx).unwrap();
        assert_eq!(c.catalogue_max_age(&ctx).unwrap(), 12 * 3600);
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_CATALOGUE_MAX_AGE", "0")]);
        assert_eq!(c.catalogue_max_age(&ctx).unwrap(), 0);
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
        let c = Config::load(&ctx).unwrap();
        assert_eq!(c.nvidia_base(&ctx).unwrap(), DEFAULT_BASE);
        assert_eq!(c.source_order(), SourceOrder::default());
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "nvidia-mirror = \"file:///srv/nvidia/\"\n[sources]\norder = [\"nvidia\", \"legacy\"]\n[sources.component]\ncudnn = [\"legacy\"]\n",
        )
        .unwrap();
        let c = Config::load(&ctx).unwrap();
        assert_eq!(c.nvidia_base(&ctx).unwrap(), "file:///srv/nvidia");
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
        assert_eq!(c.nvidia_base(&ctx).unwrap(), "http://127.0.0.1:9/nv");
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
        let c = Config::load(&ctx).unwrap();
        assert_eq!(
            c.debian_mirror(&ctx).unwrap(),
            crate::sources::debian::DEFAULT_MIRROR
        );
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "debian-mirror = \"https://mirrors.example.org/debian/\"\n",
        )
        .unwrap();
        let c = Config::load(&ctx).unwrap();
        assert_eq!(
            c.debian_mirror(&ctx).unwrap(),
            "https://mirrors.example.org/debian"
        );
        let ctx = ctx_with(
            tmp.path(),
            &[("CUDAENV_DEBIAN_MIRROR", "file:///srv/debian")],
        );
        assert_eq!(c.debian_mirror(&ctx).unwrap(), "file:///srv/debian");
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_DEBIAN_MIRROR", "deb.debian.org")]);
        assert!(matches!(c.debian_mirror(&ctx), Err(Error::Config { .. })));
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
        assert!(Config::default().nvidia_base(&ctx).is_err());
    }
}
