//! `$CUDAENV_ROOT/config.toml`: settings that outlive one command.
//!
//! ```toml
//! nvidia-mirror = "https://mirror.example.org/nvidia"   # or file:///srv/nvidia
//! pypi-index = "https://pypi.example.org/simple"
//! debian-mirror = "https://mirrors.example.org/debian"  # or file:///srv/debian
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

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::context::Context;
use crate::env_vars;
use crate::error::{Error, Result};
use crate::sources::SourceKind;
use crate::sources::nvidia::DEFAULT_BASE;
use crate::sources::resolve::SourceOrder;

pub const FILE_NAME: &str = "config.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Replaces `https://developer.download.nvidia.com` for every NVIDIA download.
    pub nvidia_mirror: Option<String>,
    /// The Python package index for the PyPI source.
    pub pypi_index: Option<String>,
    /// Replaces `http://deb.debian.org/debian` for the Debian source.
    pub debian_mirror: Option<String>,
    #[serde(default)]
    pub sources: SourcesConfig,
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
        if let Some(i) = &config.pypi_index
            && !(i.starts_with("https://") || i.starts_with("http://"))
        {
            return Err(Error::Config {
                path: path.clone(),
                reason: format!(
                    "pypi-index: `{}` is not an http(s):// URL",
                    i.escape_debug()
                ),
            });
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

/// A mirror is an `http://`, `https://` or `file://` URL (a directory laid out
/// like NVIDIA's server). Anything else is a mistake worth reporting.
fn check_base(s: &str) -> std::result::Result<(), String> {
    let ok = ["https://", "http://", "file:///"]
        .iter()
        .any(|p| s.starts_with(p) && s.len() > p.len());
    if !ok {
        return Err(format!(
            "`{}` is not an http(s):// or file:/// URL",
            s.escape_debug()
        ));
    }
    if s.contains(char::is_whitespace) || s.contains('?') || s.contains('#') {
        return Err(format!(
            "`{}` has characters a base URL may not have",
            s.escape_debug()
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
            "not toml",
        ] {
            std::fs::write(tmp.path().join(FILE_NAME), bad).unwrap();
            assert!(
                matches!(Config::load(&ctx), Err(Error::Config { .. })),
                "{bad:?}"
            );
        }
        std::fs::remove_file(tmp.path().join(FILE_NAME)).unwrap();
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_NVIDIA_MIRROR", "mirror.local")]);
        assert!(Config::default().nvidia_base(&ctx).is_err());
    }
}
