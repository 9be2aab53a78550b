//! Every setting an installing command uses, resolved once from
//! `config.toml` (`context::config`) and the environment, each value with
//! where it came from; and the machine to plan for instead of this one
//! (`--target-driver`, `--target-arch`).
//!
//! They sit here, above the sources, because their defaults are the
//! sources' own (NVIDIA's host, Debian's archive, pip's index).

use crate::context::Context;
use crate::context::config::{Config, DAY, Origin, Setting, parse_age, variable};
use crate::context::env_vars;
use crate::context::tool_config;
use crate::error::{ContextError, Error, Result};
use crate::install::sources::nvidia::DEFAULT_BASE;
use crate::machine::compat::target::Target;
use crate::spec::source::SourceOrder;

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
            _ => Error::Context(ContextError::InvalidTarget {
                setting: flag_name.to_string(),
                input,
                reason: b.reason,
            }),
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
    /// The bound of a download whose size nobody announces.
    pub max_download: Setting<u64>,
    /// Whether an install keeps the archives it downloaded.
    pub keep_downloads: Setting<bool>,
    /// Other tools' configuration files that are there but were not read
    /// (a FIFO, a device, too large): the command warns of each.
    pub passed_over: Vec<tool_config::PassedOver>,
}

impl Settings {
    /// Reads the file and the variables, and checks what is not a base URL.
    pub fn resolve(ctx: &Context) -> Result<Settings> {
        let config = ctx.config()?.clone();
        let mut passed_over = Vec::new();
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
        // The variable, the file's key, else the Debian mirror apt uses here.
        let mut debian_mirror = base(
            env_vars::CUDAENV_DEBIAN_MIRROR,
            "debian-mirror",
            &config.debian_mirror,
            crate::install::sources::debian::DEFAULT_MIRROR,
        );
        if debian_mirror.origin == Origin::Default
            && let Some((uri, file)) = tool_config::apt_debian_mirror(ctx, &mut passed_over)
        {
            debian_mirror = Setting::new(uri, Origin::Apt(file.display().to_string()));
        }
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
                let (url, why) = tool_config::index_url(ctx, &mut passed_over);
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
        let max_download = variable(
            ctx,
            env_vars::CUDAENV_MAX_DOWNLOAD,
            "a size such as `16G`, `500M` or a number of bytes (1 or more)",
            |v| parse_size(v).filter(|n| *n > 0),
        )?
        .unwrap_or_else(|| Setting::new(crate::install::fetch::MAX_DOWNLOAD, Origin::Default));
        let keep_downloads = crate::context::config::keep_downloads(ctx, &config)?;
        Ok(Settings {
            config,
            nvidia_mirror,
            debian_mirror,
            pypi_index,
            pypi_nvidia_index,
            catalogue_max_age,
            parallel_download_min,
            max_download,
            keep_downloads,
            passed_over,
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
            Origin::Pip(_) | Origin::Apt(_) | Origin::Default => Ok(self.pypi_index.value.clone()),
        }
    }
}

/// `1234`, `64K`, `500M`, `16G`, `1T` (binary multiples; `KiB`/`MiB`… and
/// a trailing `B` are accepted too) → bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let shift = match unit
        .trim()
        .trim_end_matches(['B', 'b'])
        .trim_end_matches('i')
    {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        "T" | "t" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::config::{BundledCuda, FILE_NAME, system_root};
    use crate::spec::source::SourceKind;
    use std::collections::BTreeMap;

    /// A context whose HOME, root and `/etc` are `root` (an empty
    /// `root/etc`: no apt sources, no pip files but the test's).
    fn ctx_with(root: &std::path::Path, vars: &[(&str, &str)]) -> Context {
        let mut env = BTreeMap::new();
        env.insert("HOME".into(), root.as_os_str().to_owned());
        env.insert("CUDAENV_ROOT".into(), root.as_os_str().to_owned());
        for (k, v) in vars {
            env.insert((*k).into(), (*v).into());
        }
        Context::new(env, root.to_path_buf())
            .unwrap()
            .with_etc(root.join("etc"))
    }

    /// config.toml under `root` as a new context reads it.
    fn load(root: &std::path::Path) -> Result<Config> {
        ctx_with(root, &[]).config().cloned()
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
        // A context reads config.toml once: a changed file needs a new one.
        let ctx = ctx_with(tmp.path(), &[]);
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
        assert!(load(tmp.path()).is_err());
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
        let ctx = ctx_with(tmp.path(), &[]);
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
                Err(Error::Context(ContextError::BadVariable {
                    variable, value: v, ..
                })) => assert_eq!((variable, v.as_str()), (var, value)),
                other => panic!("{var}: {other:?}"),
            }
        }
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_BUNDLED_CUDA", "sometimes")]);
        assert!(matches!(
            BundledCuda::resolve(&ctx),
            Err(Error::Context(ContextError::BadVariable {
                variable: "CUDAENV_BUNDLED_CUDA",
                ..
            }))
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
            Err(Error::Context(ContextError::BadVariable {
                variable: "CUDAENV_TARGET_ARCH",
                expected,
                ..
            })) => assert!(expected.contains("not `hopper`"), "{expected}"),
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
        let ctx = ctx_with(tmp.path(), &[]);
        assert_eq!(system_root(&ctx).unwrap(), None);
        // Absolute on this platform (`C:\…` on Windows), as a TOML literal string.
        let opt = tmp.path().join("opt-cudaenv");
        std::fs::write(
            tmp.path().join(FILE_NAME),
            format!("system-root = '{}'\n", opt.display()),
        )
        .unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        assert_eq!(system_root(&ctx).unwrap(), Some(opt));
        let srv = tmp.path().join("srv-cuda");
        let ctx = ctx_with(
            tmp.path(),
            &[("CUDAENV_SYSTEM_ROOT", srv.to_str().unwrap())],
        );
        assert_eq!(system_root(&ctx).unwrap(), Some(srv));
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_SYSTEM_ROOT", "")]);
        assert_eq!(system_root(&ctx).unwrap(), None);
        // A broken file is an error even on the shim's path, never ignored.
        std::fs::write(tmp.path().join(FILE_NAME), "system-root = 3\n").unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
        assert!(matches!(
            system_root(&ctx),
            Err(Error::Context(ContextError::Config { .. }))
        ));
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
        // apt's Debian mirror, when cudaenv's own setting is absent.
        std::fs::create_dir_all(tmp.path().join("etc/apt")).unwrap();
        std::fs::write(
            tmp.path().join("etc/apt/sources.list"),
            "deb https://mirrors.tuna.tsinghua.edu.cn/debian/ bookworm main\n",
        )
        .unwrap();
        let c = Settings::resolve(&ctx).unwrap();
        assert_eq!(
            c.debian_base().unwrap(),
            "https://mirrors.tuna.tsinghua.edu.cn/debian"
        );
        assert!(matches!(c.debian_mirror.origin, Origin::Apt(_)));
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "debian-mirror = \"https://mirrors.example.org/debian/\"\n",
        )
        .unwrap();
        let ctx = ctx_with(tmp.path(), &[]);
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
            Err(Error::Context(ContextError::BadVariable {
                variable: "CUDAENV_DEBIAN_MIRROR",
                ..
            }))
        ));
        std::fs::write(tmp.path().join(FILE_NAME), "debian-mirror = \"ftp://x\"\n").unwrap();
        assert!(matches!(
            load(tmp.path()),
            Err(Error::Context(ContextError::Config { .. }))
        ));
    }

    #[test]
    fn rejects_bad_files_and_mirrors() {
        let tmp = tempfile::tempdir().unwrap();
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
                matches!(
                    load(tmp.path()),
                    Err(Error::Context(ContextError::Config { .. }))
                ),
                "{bad:?}"
            );
        }
        // A simple index on disk (as `cudaenv mirror` writes one) is an index too.
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "pypi-index = \"file:///srv/cuda mirror/pypi/simple\"\n",
        )
        .unwrap();
        assert!(load(tmp.path()).is_ok());
        std::fs::write(
            tmp.path().join(FILE_NAME),
            "pypi-index = \"/srv/m/simple\"\n",
        )
        .unwrap();
        assert!(matches!(
            load(tmp.path()),
            Err(Error::Context(ContextError::Config { .. }))
        ));
        std::fs::remove_file(tmp.path().join(FILE_NAME)).unwrap();
        let ctx = ctx_with(tmp.path(), &[("CUDAENV_NVIDIA_MIRROR", "mirror.local")]);
        assert!(matches!(
            Settings::resolve(&ctx).unwrap().nvidia_base(),
            Err(Error::Context(ContextError::BadVariable {
                variable: "CUDAENV_NVIDIA_MIRROR",
                ..
            }))
        ));
    }
}
