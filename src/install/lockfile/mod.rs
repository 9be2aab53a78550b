//! `cuda.lock`: the exact artifacts of a stack, committed next to
//! `.cuda-version` so that every machine installs the same bytes.
//!
//! A spec such as `12.4+cudnn9` means different files on different days (a
//! newer cuDNN 9.x, a component re-resolved to another source). The lock
//! records what resolution chose — the CUDA and cuDNN releases, the profile
//! and component choices, and for every platform asked for each component's
//! source, file, URL, size and sha256 — in a TOML file whose schema carries a
//! version number (docs/lock.md). Rendering is a pure function of the
//! resolution: artifacts sorted by platform and component, no timestamps, no
//! machine-specific paths, so the same catalogue gives the same bytes.
//!
//! A lock arrives with a cloned repository, so it is untrusted input, read
//! the way `.cuda-version` is: a size cap before parsing, a schema version
//! checked before the rest, unknown keys refused, every name, version, hash
//! and size checked against what a real resolution can produce. Its URLs are
//! never trusted as such. `install --locked` re-resolves the locked versions
//! through the user's own sources and refuses any difference of version,
//! size, hash or source (the lock's URLs are not used); `install --frozen`
//! does not resolve at all and fetches the lock's URLs, but only those on a
//! configured source (`Origins`). Either way the download is checked against
//! the locked sha256, so a lock can at worst fail to install — it cannot make
//! cudaenv fetch from a host the user did not configure or install bytes
//! other than the pinned ones.
//!
//! The pins also drive `cudaenv export` (`export`): the `nvidia-*` wheels
//! matching the locked components, for pip's and uv's constraints.

pub(crate) mod export;
pub(crate) mod follow;
pub(crate) mod relock;

use crate::error::{Error, InstallError, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::install::settings::Settings;
use crate::install::sources::resolve::SourceChoice;
use crate::install::sources::{
    ArchiveFormat, Artifact, Layout, Plan, Platform, Profile, SourceKind,
};
use crate::spec::safe_url::DisplaySafeUrl;
use crate::spec::{Libraries, Spec, StackSpec, Version, VersionName};

/// The lock's file name, beside `.cuda-version`.
pub const FILE_NAME: &str = "cuda.lock";

/// The schema this build reads and writes.
pub const SCHEMA: u32 = 1;

/// Larger files are refused before parsing: a real lock is a few KB.
const MAX_BYTES: u64 = 1 << 20;
/// More artifacts than any stack has on all platforms together.
const MAX_ARTIFACTS: usize = 512;
/// No CUDA file comes near this (the largest runfiles are ~5 GB).
const MAX_SIZE: u64 = 64 << 30;

/// One pinned file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    pub platform: Platform,
    pub component: String,
    pub version: String,
    pub source: SourceKind,
    pub file: String,
    pub url: String,
    /// Absent only where the source announces none (NVIDIA's legacy cuDNN archives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub sha256: String,
}

/// What the stack was resolved from and to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    pub cuda: Version,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn: Option<Version>,
    pub profile: Profile,
    /// NCCL, TensorRT, cuSPARSELt, cuTENSOR, at full versions (`nccl = "2.21.5"`).
    #[serde(default, skip_serializing_if = "Libraries::is_empty")]
    pub libraries: Libraries,
    #[serde(default)]
    pub with: Vec<String>,
    #[serde(default)]
    pub without: Vec<String>,
    /// `--source` when locked (`auto`: per component, the configured order).
    pub source: String,
}

/// A parsed, checked lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The schema (`SCHEMA`).
    pub version: u32,
    /// The spec `.cuda-version` held when the lock was made (canonical form).
    pub spec: String,
    pub stack: Stack,
    #[serde(default, rename = "artifact")]
    pub artifacts: Vec<Locked>,
}

impl Lock {
    /// Builds the lock of per-platform plans of one stack.
    pub fn from_plans(
        spec: &StackSpec,
        choice: SourceChoice,
        with: &[String],
        without: &[String],
        plans: &[(Platform, Plan)],
    ) -> Result<Lock> {
        let (_, first) = plans.first().expect("at least one platform");
        let mut artifacts = Vec::new();
        for (platform, plan) in plans {
            for a in &plan.artifacts {
                let Some(sha256) = &a.sha256 else {
                    if a.md5.is_some() {
                        // NVIDIA's Windows installers: md5 is all there is,
                        // and a lock pins by sha256.
                        return Err(Error::Install(InstallError::NotAvailable {
                            what: format!(
                                "a lock of {} for {}",
                                a.file_name,
                                platform.manifest_key()
                            ),
                            source_name: Some(a.source.name().into()),
                            hint: Some(crate::msg!("hint-lock-md5-only", spec = spec)),
                        }));
                    }
                    return Err(Error::Install(InstallError::Unverified {
                        url: a.url.to_string(),
                    }));
                };
                artifacts.push(Locked {
                    platform: *platform,
                    component: a.component.clone(),
                    version: a.version.clone(),
                    source: a.source,
                    file: a.file_name.clone(),
                    // Credentials are the configuration's, never the lock's:
                    // `frozen_plan` applies them again by origin.
                    url: a.url.without_credentials(),
                    size: a.size,
                    sha256: sha256.to_ascii_lowercase(),
                });
            }
        }
        artifacts.sort_by(|a, b| (a.platform, &a.component).cmp(&(b.platform, &b.component)));
        let sorted = |v: &[String]| {
            let s: BTreeSet<String> = v.iter().cloned().collect();
            s.into_iter().collect::<Vec<_>>()
        };
        Ok(Lock {
            version: SCHEMA,
            spec: spec.to_string(),
            stack: Stack {
                cuda: first.cuda.clone(),
                cudnn: first.cudnn.clone(),
                profile: first.profile,
                libraries: first.libs.clone(),
                with: sorted(with),
                without: sorted(without),
                source: choice_name(choice).to_string(),
            },
            artifacts,
        })
    }

    /// The spec as `.cuda-version` held it.
    pub fn spec(&self) -> StackSpec {
        match Spec::parse(&self.spec) {
            Ok(Spec::Stack(s)) => s,
            _ => unreachable!("checked by parse"),
        }
    }

    /// The exact stack: `12.4.1+cudnn9.1.0.70`.
    pub fn exact(&self) -> StackSpec {
        StackSpec {
            cuda: self.stack.cuda.clone(),
            cudnn: self.stack.cudnn.clone(),
            libs: self.stack.libraries.clone(),
        }
    }

    pub fn name(&self) -> VersionName {
        VersionName::for_stack_with(
            &self.stack.cuda,
            self.stack.cudnn.as_ref(),
            &self.stack.libraries,
        )
    }

    pub fn choice(&self) -> SourceChoice {
        <SourceChoice as clap::ValueEnum>::from_str(&self.stack.source, false)
            .expect("checked by parse")
    }

    /// The platforms it has artifacts for, sorted.
    pub fn platforms(&self) -> Vec<Platform> {
        let s: BTreeSet<Platform> = self.artifacts.iter().map(|a| a.platform).collect();
        s.into_iter().collect()
    }

    pub fn for_platform(&self, p: Platform) -> impl Iterator<Item = &Locked> {
        self.artifacts.iter().filter(move |a| a.platform == p)
    }

    /// The file's text: a comment, then TOML in a fixed order.
    pub fn render(&self) -> String {
        let body = toml::to_string(self).expect("a lock always serialises");
        format!(
            "# {FILE_NAME}: the exact CUDA artifacts of this project, written by `cudaenv lock`.\n\
             # Commit it; do not edit it by hand. Schema: docs/lock.md.\n\n{body}"
        )
    }
}

fn choice_name(c: SourceChoice) -> &'static str {
    match c {
        SourceChoice::Auto => "auto",
        SourceChoice::Pypi => "pypi",
        SourceChoice::Nvidia => "nvidia",
        SourceChoice::Debian => "debian",
        SourceChoice::Legacy => "legacy",
    }
}

/// The lock beside a `.cuda-version`.
pub fn beside(version_file: &Path) -> PathBuf {
    version_file
        .parent()
        .unwrap_or(Path::new("."))
        .join(FILE_NAME)
}

/// Reads and checks the lock at `path` (a FIFO, a device or a huge file is
/// refused before anything is parsed).
pub fn read(path: &Path) -> Result<Lock> {
    let bytes = crate::activation::version_file::read_small_regular(
        path,
        MAX_BYTES,
        |n| {
            format!(
                "it is {n} bytes; a lock is a few KB (at most {} KiB)",
                MAX_BYTES >> 10
            )
        },
        |reason| {
            Error::Install(InstallError::InvalidLock {
                path: path.to_path_buf(),
                reason,
            })
        },
    )?;
    parse(&bytes, path)
}

/// Checks a lock's bytes (`path` is for messages).
pub fn parse(bytes: &[u8], path: &Path) -> Result<Lock> {
    let bad = |reason: String| {
        Error::Install(InstallError::InvalidLock {
            path: path.to_path_buf(),
            reason,
        })
    };
    if bytes.len() as u64 > MAX_BYTES {
        return Err(bad(format!("larger than {} KiB", MAX_BYTES >> 10)));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|r| text[..r.start.min(text.len())].lines().count().max(1));
        bad(format!(
            "not valid TOML{}: {}",
            line.map(|l| format!(" (line {l})")).unwrap_or_default(),
            e.message()
        ))
    })?;
    // The schema first: a newer cudaenv's lock is refused as such, not as
    // "unknown key".
    match table.get("version") {
        Some(toml::Value::Integer(n)) if *n == i64::from(SCHEMA) => {}
        Some(toml::Value::Integer(n)) => {
            return Err(bad(format!(
                "schema version {n} is not one this cudaenv reads (it reads {SCHEMA}); a newer cudaenv may have written it"
            )));
        }
        Some(_) => return Err(bad("`version` must be an integer (the schema)".into())),
        None => return Err(bad("no `version` (schema) key".into())),
    }
    let lock: Lock = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| bad(e.message().to_string()))?;
    check(&lock).map_err(bad)?;
    Ok(lock)
}

/// Everything a resolution could have produced, and nothing else.
fn check(lock: &Lock) -> std::result::Result<(), String> {
    let spec = match Spec::parse(&lock.spec) {
        Ok(Spec::Stack(s)) => s,
        _ => return Err(format!("`spec` {:?} is not a CUDA spec", lock.spec)),
    };
    let st = &lock.stack;
    if !spec.matches_libs(&st.cuda, st.cudnn.as_ref(), &st.libraries) {
        return Err(format!(
            "the locked stack {} does not satisfy its spec {}",
            lock.name(),
            spec
        ));
    }
    if <SourceChoice as clap::ValueEnum>::from_str(&st.source, false).is_err() {
        return Err(format!("unknown source {:?}", st.source));
    }
    for c in st.with.iter().chain(&st.without) {
        if !crate::registry::is_stack_component(c) {
            return Err(format!("unknown component {c:?}"));
        }
    }
    if lock.artifacts.is_empty() {
        return Err("no artifacts".into());
    }
    if lock.artifacts.len() > MAX_ARTIFACTS {
        return Err(format!(
            "{} artifacts (at most {MAX_ARTIFACTS})",
            lock.artifacts.len()
        ));
    }
    let mut seen = BTreeSet::new();
    for a in &lock.artifacts {
        let at = format!("artifact {} ({})", a.component, a.platform.name());
        if !crate::registry::is_stack_component(&a.component) {
            return Err(format!("unknown component {:?}", a.component));
        }
        if !seen.insert((a.platform, a.component.clone())) {
            return Err(format!("{at} is listed twice"));
        }
        if a.version.is_empty()
            || a.version.len() > 40
            || !a
                .version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
        {
            return Err(format!("{at}: version {:?} is not a version", a.version));
        }
        if !crate::install::sources::is_plain_file_name(&a.file) {
            return Err(format!(
                "{at}: file {:?} is not a plain file name (no paths)",
                a.file
            ));
        }
        if a.sha256.len() != 64
            || !a
                .sha256
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            return Err(format!("{at}: sha256 is not 64 lower-case hex digits"));
        }
        match a.size {
            Some(0) => return Err(format!("{at}: size 0")),
            Some(s) if s > MAX_SIZE => {
                return Err(format!(
                    "{at}: size {s} bytes is absurd (at most {} GiB)",
                    MAX_SIZE >> 30
                ));
            }
            _ => {}
        }
        let url = reqwest::Url::parse(&a.url).map_err(|_| format!("{at}: url is not a URL"))?;
        if !matches!(url.scheme(), "https" | "http") {
            return Err(format!("{at}: url scheme {} is not http(s)", url.scheme()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!("{at}: url carries credentials"));
        }
    }
    // Every locked library has its file on every platform, of that version.
    for (lib, v) in st.libraries.iter() {
        for p in lock.platforms() {
            let want = v.to_string();
            if !lock.for_platform(p).any(|a| {
                a.component == lib.component()
                    && (a.version == want || a.version.starts_with(&format!("{want}.")))
            }) {
                return Err(format!(
                    "the stack locks {} {v} but {} has no artifact of it",
                    lib.title(),
                    p.name()
                ));
            }
        }
    }
    Ok(())
}

/// Where the user's configuration lets bytes come from: the package index's
/// host (and, for pypi.org, its file host), and the NVIDIA base URL.
#[derive(Debug, Clone)]
pub struct Origins {
    pypi: Vec<String>,
    nvidia: String,
    debian: String,
    /// The configured index and mirrors, with their credentials: a lock
    /// records none, and gets them from here by origin (`credentials_for`).
    configured: Vec<DisplaySafeUrl>,
}

impl Origins {
    pub fn from_settings(settings: &Settings) -> Result<Origins> {
        let index = settings.pypi_base()?;
        let mut pypi = Vec::new();
        if let Ok(u) = reqwest::Url::parse(&index) {
            pypi.push(u.origin().ascii_serialization());
            // pypi.org's Simple API links its files on its own file host.
            if u.host_str() == Some("pypi.org") {
                pypi.push("https://files.pythonhosted.org".into());
            }
        }
        // TensorRT's wheels are on NVIDIA's package index.
        let nvidia_index = settings.pypi_nvidia_base()?;
        if let Ok(u) = reqwest::Url::parse(&nvidia_index) {
            pypi.push(u.origin().ascii_serialization());
        }
        let nvidia = settings.nvidia_base()?;
        let debian = settings.debian_base()?;
        let configured = [&index, &nvidia_index, &nvidia, &debian]
            .into_iter()
            .map(|u| DisplaySafeUrl::new(u.as_str()))
            .collect();
        Ok(Origins {
            pypi,
            nvidia,
            debian,
            configured,
        })
    }

    /// A locked URL with the credentials of the configured index or mirror
    /// on its origin, if that has any.
    pub fn credentials_for(&self, url: &str) -> DisplaySafeUrl {
        self.configured
            .iter()
            .fold(DisplaySafeUrl::new(url), |u, c| u.with_credentials_of(c))
    }

    /// Is `url` on a configured source for artifacts of `source`?
    pub fn allows(&self, source: SourceKind, url: &str) -> bool {
        let Ok(u) = reqwest::Url::parse(url) else {
            return false;
        };
        match source {
            SourceKind::Pypi => self.pypi.contains(&u.origin().ascii_serialization()),
            SourceKind::Nvidia | SourceKind::Legacy | SourceKind::Debian => {
                let base = if source == SourceKind::Debian {
                    &self.debian
                } else {
                    &self.nvidia
                };
                let base = reqwest::Url::parse(&format!("{base}/"));
                base.is_ok_and(|b| u.origin() == b.origin() && u.path().starts_with(b.path()))
            }
        }
    }

    /// As shown in messages.
    pub fn shown(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .pypi
            .iter()
            .map(|o| crate::install::sources::remote::shown(o))
            .collect();
        v.push(crate::install::sources::remote::shown(&self.nvidia));
        v.push(crate::install::sources::remote::shown(&self.debian));
        v
    }
}

/// The differences between a lock's artifacts for `platform` and a fresh
/// resolution of the same stack (empty: they agree).
pub fn differences(lock: &Lock, platform: Platform, plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    if plan.cuda != lock.stack.cuda {
        out.push(format!(
            "CUDA {} is locked, the sources resolve {}",
            lock.stack.cuda, plan.cuda
        ));
    }
    if plan.cudnn != lock.stack.cudnn {
        let show = |v: &Option<Version>| v.as_ref().map_or("none".into(), |v| v.to_string());
        out.push(format!(
            "cuDNN {} is locked, the sources resolve {}",
            show(&lock.stack.cudnn),
            show(&plan.cudnn)
        ));
    }
    let locked: BTreeMap<&str, &Locked> = lock
        .for_platform(platform)
        .map(|a| (a.component.as_str(), a))
        .collect();
    let fresh: BTreeMap<&str, &Artifact> = plan
        .artifacts
        .iter()
        .map(|a| (a.component.as_str(), a))
        .collect();
    for (c, l) in &locked {
        let Some(a) = fresh.get(c) else {
            out.push(format!("{c} is locked but no longer resolved"));
            continue;
        };
        if a.source != l.source {
            out.push(format!(
                "{c} is locked from {}, the sources now give it from {}",
                l.source.name(),
                a.source.name()
            ));
        }
        if a.version != l.version {
            out.push(format!(
                "{c} {} is locked, the sources now give {}",
                l.version, a.version
            ));
        }
        if a.sha256.as_deref().map(str::to_ascii_lowercase).as_deref() != Some(&l.sha256) {
            out.push(format!(
                "{c}: the locked sha256 {} differs from the index's {}",
                short(&l.sha256),
                a.sha256.as_deref().map(short).unwrap_or("none")
            ));
        }
        if let (Some(ls), Some(s)) = (l.size, a.size)
            && ls != s
        {
            out.push(format!(
                "{c}: {ls} bytes are locked, the index announces {s}"
            ));
        }
    }
    for c in fresh.keys() {
        if !locked.contains_key(c) {
            out.push(format!("{c} is resolved but not in the lock"));
        }
    }
    out
}

/// The differences between a lock's artifacts for `platform` and what an
/// installed version of the locked name recorded of its components (empty:
/// it holds the locked files). A component the version lacks is not a
/// difference (an install adds it); one it holds at another version, from
/// another source or with other bytes is.
pub fn differences_installed(
    lock: &Lock,
    platform: Platform,
    installed: &[crate::store::Component],
) -> Vec<String> {
    let mut out = Vec::new();
    for l in lock.for_platform(platform) {
        let Some(c) = installed.iter().find(|c| c.name == l.component) else {
            continue;
        };
        if c.version != l.version {
            out.push(format!(
                "{} {} is locked, {} is installed",
                l.component, l.version, c.version
            ));
        } else if let Some(sha) = &c.sha256
            && !sha.eq_ignore_ascii_case(&l.sha256)
        {
            out.push(format!(
                "{}: the locked sha256 {} differs from the installed file's {}",
                l.component,
                short(&l.sha256),
                short(sha)
            ));
        } else if c.source != l.source.name() {
            out.push(format!(
                "{} is locked from {}, installed from {}",
                l.component,
                l.source.name(),
                c.source
            ));
        }
    }
    out
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

/// The plan of `platform`'s artifacts as the lock gives them, without any
/// resolution (`install --frozen`). Every URL must be on a configured source.
pub fn frozen_plan(
    lock: &Lock,
    path: &Path,
    platform: Platform,
    origins: &Origins,
) -> Result<Plan> {
    let mut artifacts = Vec::new();
    for l in lock.for_platform(platform) {
        if !origins.allows(l.source, &l.url) {
            return Err(Error::Install(InstallError::LockForeignUrl {
                path: path.to_path_buf(),
                url: crate::install::sources::remote::shown(&l.url),
                allowed: origins.shown(),
            }));
        }
        if l.source == SourceKind::Debian {
            return Err(Error::Install(InstallError::NotAvailable {
                what: format!("`--frozen` for the Debian package {}", l.file),
                source_name: Some("debian".into()),
                hint: Some(crate::msg!("hint-frozen-debian")),
            }));
        }
        let format = format_of(&l.file).ok_or_else(|| {
            Error::Install(InstallError::InvalidLock {
                path: path.to_path_buf(),
                reason: format!("{}: {} is no archive cudaenv unpacks", l.component, l.file),
            })
        })?;
        let layout = match (l.source, format) {
            (SourceKind::Pypi, ArchiveFormat::Wheel) => Layout::Wheel,
            (
                SourceKind::Nvidia,
                ArchiveFormat::TarXz | ArchiveFormat::TarGz | ArchiveFormat::Zip,
            ) => Layout::StripTop,
            (
                SourceKind::Legacy,
                ArchiveFormat::TarGz | ArchiveFormat::TarXz | ArchiveFormat::Zip,
            ) if l.component == "cudnn" => Layout::LegacyCudnn,
            (SourceKind::Legacy, ArchiveFormat::Runfile) => {
                return Err(Error::Install(InstallError::NotAvailable {
                    what: format!("`--frozen` for the runfile {}", l.file),
                    source_name: Some("legacy".into()),
                    hint: Some(crate::msg!("hint-frozen-runfile")),
                }));
            }
            _ => {
                return Err(Error::Install(InstallError::InvalidLock {
                    path: path.to_path_buf(),
                    reason: format!(
                        "{}: {} does not come from {} as a {:?}",
                        l.component,
                        l.file,
                        l.source.name(),
                        format
                    ),
                }));
            }
        };
        artifacts.push(Artifact {
            component: l.component.clone(),
            version: l.version.clone(),
            url: origins.credentials_for(&l.url),
            sha256: Some(l.sha256.clone()),
            md5: None,
            size: l.size,
            max_size: None,
            format,
            layout,
            source: l.source,
            file_name: l.file.clone(),
        });
    }
    Ok(Plan {
        name: lock.name(),
        cuda: lock.stack.cuda.clone(),
        cudnn: lock.stack.cudnn.clone(),
        libs: lock.stack.libraries.clone(),
        profile: lock.stack.profile,
        artifacts,
        notes: Vec::new(),
        info: Vec::new(),
    })
}

fn format_of(file: &str) -> Option<ArchiveFormat> {
    Some(match file {
        f if f.ends_with(".whl") => ArchiveFormat::Wheel,
        f if f.ends_with(".tar.xz") => ArchiveFormat::TarXz,
        f if f.ends_with(".tar.gz") || f.ends_with(".tgz") => ArchiveFormat::TarGz,
        f if f.ends_with(".zip") => ArchiveFormat::Zip,
        f if f.ends_with(".run") => ArchiveFormat::Runfile,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
version = 1
spec = "12.4"

[stack]
cuda = "12.4.1"
profile = "runtime"
with = []
without = []
source = "auto"

[[artifact]]
platform = "linux-x86_64"
component = "cudart"
version = "12.4.127"
source = "pypi"
file = "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl"
url = "https://files.pythonhosted.org/packages/x/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl"
size = 883610
sha256 = "64403288fa2136ee8e467cdc9c9427e0434110899d07c779f25b5c068934faa5"
"#;

    fn err(text: &str) -> String {
        parse(text.as_bytes(), Path::new("cuda.lock"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_good_lock_parses_and_renders_to_the_same_lock() {
        let lock = parse(GOOD.as_bytes(), Path::new("cuda.lock")).unwrap();
        assert_eq!(lock.name().as_str(), "12.4.1");
        let again = parse(lock.render().as_bytes(), Path::new("x")).unwrap();
        assert_eq!(again, lock);
        assert_eq!(again.render(), lock.render());
    }

    #[test]
    fn hostile_or_broken_locks_are_refused_with_the_reason() {
        assert!(err("version = [").contains("not valid TOML"));
        assert!(err(&GOOD.replace("version = 1", "version = 2")).contains("schema version 2"));
        assert!(err(&GOOD.replace("version = 1\n", "")).contains("no `version`"));
        assert!(err(&GOOD.replace("size = 883610", "size = 99999999999999")).contains("absurd"));
        assert!(
            err(&GOOD.replace(
                "file = \"nvidia_cuda_runtime",
                "file = \"../../.bashrc/nvidia_cuda_runtime"
            ))
            .contains("not a plain file name")
        );
        assert!(
            err(&GOOD.replace("component = \"cudart\"", "component = \"../x\""))
                .contains("unknown component")
        );
        assert!(err(&GOOD.replace("sha256 = \"6440", "sha256 = \"XX40")).contains("sha256"));
        assert!(err(&GOOD.replace("https://files", "file:///etc/files")).contains("scheme"));
        assert!(err(&GOOD.replace("https://files", "https://u:p@files")).contains("credentials"));
        assert!(
            err(&GOOD.replace("spec = \"12.4\"", "spec = \"11.8\"")).contains("does not satisfy")
        );
        assert!(
            err(&GOOD.replace("source = \"auto\"", "source = \"auto\"\nextra = 1"))
                .contains("unknown field")
        );
        assert!(
            err(&format!(
                "{GOOD}{}",
                &GOOD[GOOD.find("[[artifact]]").unwrap()..]
            ))
            .contains("twice")
        );
    }

    #[test]
    fn frozen_plans_take_the_layout_of_their_source_and_refuse_foreign_urls() {
        let nv = GOOD
            .replace("source = \"pypi\"", "source = \"nvidia\"")
            .replace(
                "https://files.pythonhosted.org/packages/x/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
                "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz",
            )
            .replace(
                "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
                "cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz",
            );
        let lock = parse(nv.as_bytes(), Path::new("cuda.lock")).unwrap();
        let o = Origins {
            pypi: vec!["https://pypi.org".into()],
            nvidia: "https://developer.download.nvidia.com/compute".into(),
            debian: "http://deb.debian.org/debian".into(),
            configured: vec![],
        };
        let plan = frozen_plan(&lock, Path::new("cuda.lock"), Platform::LinuxX86_64, &o).unwrap();
        assert_eq!(plan.artifacts[0].layout, Layout::StripTop);
        assert_eq!(plan.artifacts[0].format, ArchiveFormat::TarXz);
        let mirror = Origins {
            pypi: vec![],
            nvidia: "https://mirror.example/nvidia".into(),
            debian: String::new(),
            configured: vec![],
        };
        let e = frozen_plan(
            &lock,
            Path::new("cuda.lock"),
            Platform::LinuxX86_64,
            &mirror,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::error::ExitCode::InvalidLock);
        // A wheel that claims to come from NVIDIA's redist is no redist archive.
        let odd = GOOD.replace("source = \"pypi\"", "source = \"nvidia\"");
        let lock = parse(odd.as_bytes(), Path::new("cuda.lock")).unwrap();
        let o2 = Origins {
            pypi: vec![],
            nvidia: "https://files.pythonhosted.org".into(),
            debian: String::new(),
            configured: vec![],
        };
        assert!(frozen_plan(&lock, Path::new("cuda.lock"), Platform::LinuxX86_64, &o2).is_err());
    }

    #[test]
    fn only_configured_hosts_are_allowed() {
        let o = Origins {
            pypi: vec![
                "https://pypi.org".into(),
                "https://files.pythonhosted.org".into(),
            ],
            nvidia: "https://developer.download.nvidia.com/compute".into(),
            debian: "http://deb.debian.org/debian".into(),
            configured: vec![],
        };
        assert!(o.allows(
            SourceKind::Pypi,
            "https://files.pythonhosted.org/packages/a.whl"
        ));
        assert!(!o.allows(SourceKind::Pypi, "https://evil.example/packages/a.whl"));
        assert!(!o.allows(SourceKind::Pypi, "http://files.pythonhosted.org/a.whl"));
        assert!(o.allows(
            SourceKind::Nvidia,
            "https://developer.download.nvidia.com/compute/cuda/redist/x.tar.xz"
        ));
        assert!(!o.allows(
            SourceKind::Nvidia,
            "https://developer.download.nvidia.com/computer/x.tar.xz"
        ));
        assert!(!o.allows(
            SourceKind::Nvidia,
            "https://developer.download.nvidia.com/compute/../x.tar.xz"
        ));
    }

    #[test]
    fn an_md5_pinned_windows_installer_is_refused_with_the_way_out() {
        use crate::install::sources::legacy::{LegacyRegistry, LegacySource};
        let src = LegacySource {
            registry: LegacyRegistry::default(),
            base: "https://developer.download.nvidia.com".into(),
            platform: Platform::WindowsX86_64,
            allow_unverified: false,
        };
        let r = src.find_cuda(&"11.2".parse().unwrap()).unwrap();
        let a = src.cuda_artifact(&r, Profile::Runtime).unwrap();
        let Ok(crate::spec::Spec::Stack(spec)) = crate::spec::Spec::parse("11.2+cudnn8.1") else {
            panic!()
        };
        let plan = Plan {
            name: crate::spec::VersionName::for_stack(&r.cuda, None),
            cuda: r.cuda.clone(),
            cudnn: None,
            libs: Default::default(),
            profile: Profile::Runtime,
            artifacts: vec![a],
            notes: vec![],
            info: vec![],
        };
        let e = Lock::from_plans(
            &spec,
            SourceChoice::Legacy,
            &[],
            &[],
            &[(Platform::WindowsX86_64, plan)],
        )
        .unwrap_err();
        let Error::Install(InstallError::NotAvailable { hint, .. }) = &e else {
            panic!("{e:?}")
        };
        assert!(hint.as_ref().unwrap().en().contains("md5"), "{e}");
    }
}
