//! The live release catalogue: NVIDIA's own map of each CUDA release to its
//! component wheels, read from PyPI's `cuda-toolkit` metapackage.
//!
//! Every `cuda-toolkit` release (11.8.0, 12.0.0 … 13.5.0) is a wheel with no
//! files, whose `Requires-Dist` lines pin the exact `nvidia-*` wheel of every
//! component, each with an environment marker saying for which platforms
//! (`sys_platform == 'linux' and platform_machine == 'aarch64' … and extra ==
//! 'all'`). Reading those lines for every release gives the catalogue without
//! downloading a single component wheel:
//!
//! - the project page comes through the Simple API (PEP 691 JSON, or PEP 503
//!   HTML from a mirror), through the same index settings as installs, so a
//!   mirror serves the catalogue too;
//! - each release's metadata comes from the PEP 658/714 metadata file when
//!   the index announces one (`core-metadata`), else from the metapackage
//!   wheel itself (PyPI announces no metadata file for `cuda-toolkit`; its
//!   wheels are ~3 KB, so this costs what the metadata file would). Either is
//!   checked against the sha256 the index gave, and refused above 1 MiB;
//! - all releases are read at once, and each release's metadata is kept under
//!   the index's cache directory by its sha256 (it never changes), so a
//!   refresh reads only the project page and the releases that are new.
//!
//! Yanked releases and pre-releases are left out, as pip leaves them out;
//! a release whose metadata is missing or malformed is left out with the
//! reason (`skipped`), never guessed. The result is stored with its fetch
//! time (`catalogue.json`); `sources::remote` decides when it is fresh enough.

use crate::error::{Error, InstallError, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::pypi::{Index, IndexFile, PyVersion, normalize};
use super::{ArchiveFormat, Artifact, Layout, Platform, SourceKind};
use crate::registry::Pypi;
use crate::spec::Version;
use crate::spec::safe_url::DisplaySafeUrl;

/// The metapackage whose releases are the catalogue.
pub const PROJECT: &str = "cuda-toolkit";
/// No metadata file (or metapackage wheel) is larger than this.
const MAX_METADATA: usize = 1 << 20;
/// Metadata files read at once.
const PARALLEL: usize = 16;

/// What PyPI's `cuda-toolkit` releases say, when they said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalogue {
    /// Seconds since the Unix epoch when the index was read.
    pub fetched_at: u64,
    /// The index it came from, without credentials.
    pub index: String,
    /// Oldest first.
    pub releases: Vec<CatalogueRelease>,
    /// Releases left out, and why (yanked, metadata missing …).
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub version: String,
    pub reason: String,
}

/// One CUDA release as the metapackage describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueRelease {
    /// `13.5.0`.
    pub version: String,
    /// cudaenv's component name → the wheel the release pins.
    pub components: BTreeMap<String, CatalogueComponent>,
    /// Projects the release names that cudaenv has no component for (npp, …).
    #[serde(default)]
    pub other_projects: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueComponent {
    pub project: String,
    /// The pinned version (`13.10.0.20` for `==13.10.0.20.*`), or the lower
    /// bound of a range (`>=13.5.37`).
    pub version: String,
    /// Manifest keys of the platforms the marker allows (`linux-x86_64` …).
    pub platforms: Vec<String>,
}

impl CatalogueRelease {
    pub fn cuda(&self) -> Option<Version> {
        Version::parse_parts(&self.version, 3).ok()
    }

    /// Its components that have a wheel for `platform`.
    pub fn components_for(
        &self,
        platform: Platform,
    ) -> impl Iterator<Item = (&String, &CatalogueComponent)> {
        self.components
            .iter()
            .filter(move |(_, c)| c.platforms.iter().any(|p| p == platform.manifest_key()))
    }

    /// The platforms for which it has a CUDA runtime (what makes it installable).
    pub fn platforms(&self) -> Vec<&str> {
        self.components
            .get("cudart")
            .map(|c| c.platforms.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

impl Catalogue {
    /// The release with exactly this version.
    pub fn get(&self, cuda: &Version) -> Option<&CatalogueRelease> {
        self.releases
            .iter()
            .find(|r| r.cuda().as_ref() == Some(cuda))
    }

    /// Seconds since it was fetched (0 for a clock that went backwards).
    pub fn age_secs(&self, now: u64) -> u64 {
        now.saturating_sub(self.fetched_at)
    }

    /// Reads a stored catalogue; `None` when there is none or it is unreadable
    /// (a cache: a broken one is refetched, never trusted).
    pub fn load(path: &Path) -> Option<Catalogue> {
        serde_json::from_slice(&crate::os::fs::read_bounded(path, crate::os::fs::SMALL).ok()?).ok()
    }

    /// Stores it atomically (a temporary file renamed over the old one).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self).expect("a catalogue serializes");
        crate::os::write_atomically(path, &text, None)
    }
}

/// Where an index's catalogue is stored.
pub fn path(index_cache: &Path) -> PathBuf {
    index_cache.join("catalogue.json")
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Reads the catalogue from the index (network), using and filling the
/// metadata cache under `cache` (the index's cache directory).
pub async fn fetch(
    index: &Index,
    cache: &Path,
    pypi: &Pypi,
    shown_index: &str,
) -> Result<Catalogue> {
    let files = index.files(PROJECT).await?.ok_or_else(|| {
        Error::Install(InstallError::NotAvailable {
            what: format!("the project `{PROJECT}`"),
            source_name: Some(shown_index.to_string()),
            hint: Some(crate::msg!("hint-index-lacks-metapackage")),
        })
    })?;
    let mut skipped = Vec::new();
    let mut wanted: BTreeMap<String, IndexFile> = BTreeMap::new();
    for f in files {
        let Some(version) = metapackage_version(&f.filename) else {
            continue;
        };
        // Pre-releases (`13.4.0rc1`, `0.0.0a0`) are never offered, as pip does.
        if PyVersion::parse(&version).is_none() || version.starts_with("0.") {
            continue;
        }
        if f.yanked {
            skipped.push(Skipped {
                version,
                reason: "yanked on the index".into(),
            });
            continue;
        }
        wanted.insert(version, f);
    }
    let meta_dir = cache.join("metadata");
    let answers = futures_util::stream::iter(wanted)
        .map(|(version, f)| {
            let meta_dir = meta_dir.clone();
            async move {
                let text = metadata(index, &f, &meta_dir).await;
                (version, text)
            }
        })
        .buffer_unordered(PARALLEL)
        .collect::<Vec<_>>()
        .await;
    let mut releases = Vec::new();
    for (version, text) in answers {
        match text {
            Ok(Some(text)) => match release(&version, &text, pypi) {
                Ok(r) => releases.push(r),
                Err(reason) => skipped.push(Skipped { version, reason }),
            },
            Ok(None) => skipped.push(Skipped {
                version,
                reason: "its metadata is missing on the index".into(),
            }),
            // The whole index down is an error for the caller; one file that
            // keeps failing leaves that release out.
            Err(e) => skipped.push(Skipped {
                version,
                reason: e.to_string(),
            }),
        }
    }
    if releases.is_empty()
        && let Some(s) = skipped.iter().find(|s| s.reason.contains("gave up"))
    {
        return Err(Error::Install(InstallError::Network {
            url: shown_index.to_string(),
            reason: s.reason.clone(),
            from: Some(crate::install::sources::SourceKind::Pypi),
        }));
    }
    releases.sort_by_key(|r| r.cuda());
    skipped.sort_by(|a, b| a.version.cmp(&b.version));
    Ok(Catalogue {
        fetched_at: now(),
        index: shown_index.to_string(),
        releases,
        skipped,
    })
}

/// The metapackage wheel of the CUDA release `cuda` on the index, as an
/// artifact (`mirror` copies it, so that a machine reading the mirror knows
/// the release from its own catalogue). `None` when the index has none, or
/// only a yanked one.
pub async fn metapackage(index: &Index, cuda: &Version) -> Result<Option<Artifact>> {
    let Some(files) = index.files(PROJECT).await? else {
        return Ok(None);
    };
    Ok(files
        .into_iter()
        .filter(|f| !f.yanked && f.sha256.is_some())
        .find(|f| {
            metapackage_version(&f.filename)
                .and_then(|v| v.parse::<Version>().ok())
                .is_some_and(|v| v == *cuda)
        })
        .map(|f| Artifact {
            component: PROJECT.to_string(),
            version: cuda.to_string(),
            url: f.url,
            sha256: f.sha256,
            md5: None,
            size: f.size,
            // Announced or not, a metapackage wheel is no larger than any
            // metadata file: its download stops there.
            max_size: Some(MAX_METADATA as u64),
            format: ArchiveFormat::Wheel,
            layout: Layout::Wheel,
            source: SourceKind::Pypi,
            file_name: f.filename,
        }))
}

/// `cuda_toolkit-13.5.0-py2.py3-none-any.whl` → `13.5.0`.
pub fn metapackage_version(filename: &str) -> Option<String> {
    let stem = filename.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    let name = parts.next()?;
    if normalize(name) != PROJECT {
        return None;
    }
    Some(parts.next()?.to_string())
}

/// The core metadata of one release: the PEP 658 file, else the wheel's
/// `*.dist-info/METADATA`. `None` when the index has neither.
async fn metadata(index: &Index, f: &IndexFile, dir: &Path) -> Result<Option<String>> {
    // Keyed by the file's name and hash (or URL, for an index that gives no
    // hash): a release re-uploaded under the same name is read again.
    let id = format!(
        "{}\n{}",
        f.filename,
        f.sha256
            .clone()
            .unwrap_or_else(|| f.url.without_credentials())
    );
    let key = crate::os::hash::sha256(id.as_bytes());
    let cached = dir.join(format!("{key}.metadata"));
    if let Ok(text) = crate::os::fs::read_bounded_text(&cached, crate::os::fs::SMALL) {
        return Ok(Some(text));
    }
    let mut text = None;
    if let Some(expected) = &f.metadata
        && let Some(bytes) = index
            .small_file(&format!("{}.metadata", f.url.expose()).into(), MAX_METADATA)
            .await?
    {
        check_sha(&bytes, expected.as_deref(), &f.url)?;
        text = Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    if text.is_none()
        && f.size.is_none_or(|s| s <= MAX_METADATA as u64)
        && let Some(bytes) = index.small_file(&f.url, MAX_METADATA).await?
    {
        check_sha(&bytes, f.sha256.as_deref(), &f.url)?;
        text = wheel_metadata(&bytes).map_err(|reason| {
            Error::Install(InstallError::BadArchive {
                archive: f.filename.clone(),
                entry: None,
                reason,
            })
        })?;
    }
    if let Some(t) = &text {
        // Best effort: the cache only ever saves a request.
        let _ = std::fs::create_dir_all(dir);
        let tmp = cached.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, t).is_ok() {
            let _ = std::fs::rename(&tmp, &cached);
        }
    }
    Ok(text)
}

fn check_sha(bytes: &[u8], expected: Option<&str>, url: &DisplaySafeUrl) -> Result<()> {
    if let Some(expected) = expected {
        let actual = crate::os::hash::sha256(bytes);
        if actual != expected {
            return Err(Error::Install(InstallError::HashMismatch {
                algorithm: "sha256",
                url: url.to_string(),
                expected: expected.to_string(),
                actual,
            }));
        }
    }
    Ok(())
}

/// `<name>.dist-info/METADATA` of a wheel held in memory.
fn wheel_metadata(bytes: &[u8]) -> std::result::Result<Option<String>, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("not a wheel: {e}"))?;
    let name = (0..zip.len())
        .filter_map(|i| {
            zip.name_for_index(i)
                .and_then(|n| n.ok())
                .map(|n| n.to_string())
        })
        .find(|n| n.ends_with(".dist-info/METADATA") && n.matches('/').count() == 1);
    let Some(name) = name else {
        return Ok(None);
    };
    let mut f = zip.by_name(&name).map_err(|e| e.to_string())?;
    if f.size() > MAX_METADATA as u64 {
        return Err("its METADATA is larger than any metadata file".into());
    }
    // Bounded by the cap, not only by the size the archive claims.
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(&mut f, MAX_METADATA as u64 + 1),
        &mut text,
    )
    .map_err(|e| e.to_string())?;
    if text.len() > MAX_METADATA {
        return Err("its METADATA is larger than any metadata file".into());
    }
    Ok(Some(text))
}

/// One `Requires-Dist` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub project: String,
    /// The pinned version, or a range's lower bound.
    pub version: Option<String>,
    pub marker: Option<String>,
}

/// The `Requires-Dist` lines of a core metadata file (RFC 822 headers; the
/// body after the first blank line is the description, not read).
pub fn requirements(metadata: &str) -> Vec<Requirement> {
    let mut out = Vec::new();
    for line in metadata.lines() {
        if line.trim().is_empty() {
            break;
        }
        let Some(value) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let (req, marker) = match value.split_once(';') {
            Some((r, m)) => (r.trim(), Some(m.trim().to_string())),
            None => (value.trim(), None),
        };
        let end = req
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(req.len());
        let (name, spec) = req.split_at(end);
        if name.is_empty() {
            continue;
        }
        let spec = spec.trim().trim_start_matches('(').trim_end_matches(')');
        let mut version = None;
        for clause in spec.split(',').map(str::trim) {
            if let Some(v) = clause
                .strip_prefix("===")
                .or_else(|| clause.strip_prefix("=="))
            {
                version = Some(v.trim().trim_end_matches(".*").to_string());
                break;
            }
            if let Some(v) = clause.strip_prefix(">=") {
                version = Some(v.trim().to_string());
            }
        }
        out.push(Requirement {
            project: normalize(name),
            version,
            marker,
        });
    }
    out
}

/// Builds one release from its metadata.
fn release(
    version: &str,
    metadata: &str,
    pypi: &Pypi,
) -> std::result::Result<CatalogueRelease, String> {
    // Some uploads spell the release with a fourth `.0` (`12.8.2.0`).
    let cuda = Version::parse_parts(version, 4).map_err(|e| format!("version `{version}`: {e}"))?;
    let cuda = match cuda.parts() {
        [_, _, _, 0] => cuda.truncate(3),
        [_, _, _, _] => return Err(format!("version `{version}` is not a CUDA release")),
        _ => cuda,
    };
    let reqs = requirements(metadata);
    if reqs.is_empty() {
        return Err("its metadata names no component".into());
    }
    let mut components = BTreeMap::new();
    let mut other = Vec::new();
    for r in reqs {
        let platforms: Vec<String> = Platform::ALL
            .iter()
            .filter(|p| {
                r.marker
                    .as_deref()
                    .is_none_or(|m| marker_holds(m, **p).unwrap_or(false))
            })
            .map(|p| p.manifest_key().to_string())
            .collect();
        let (Some(v), false) = (r.version, platforms.is_empty()) else {
            continue;
        };
        match pypi.component_of(&r.project, cuda.major()) {
            Some(c) => {
                let entry = components
                    .entry(c.to_string())
                    .or_insert_with(|| CatalogueComponent {
                        project: r.project.clone(),
                        version: v.clone(),
                        platforms: Vec::new(),
                    });
                for p in platforms {
                    if !entry.platforms.contains(&p) {
                        entry.platforms.push(p);
                    }
                }
            }
            None => {
                if !other.contains(&r.project) {
                    other.push(r.project);
                }
            }
        }
    }
    if components.is_empty() {
        return Err("its metadata names no CUDA component cudaenv knows".into());
    }
    other.sort();
    Ok(CatalogueRelease {
        version: cuda.to_string(),
        components,
        other_projects: other,
    })
}

/// Evaluates a PEP 508 marker for a platform. `extra` comparisons hold for
/// every extra (the catalogue is the union of all of them, which is what the
/// `all` extra lists); variables other than the platform's hold (a marker on
/// the Python version does not decide whether NVIDIA ships the component).
/// `None` for a marker that does not parse.
pub fn marker_holds(marker: &str, platform: Platform) -> Option<bool> {
    let tokens = tokenize(marker)?;
    let mut p = MarkerParser {
        tokens: &tokens,
        at: 0,
        platform,
    };
    let v = p.or()?;
    (p.at == tokens.len()).then_some(v)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Open,
    Close,
    And,
    Or,
    Op(String),
    Word(String),
    Str(String),
}

fn tokenize(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            '(' => {
                chars.next();
                out.push(Tok::Open);
            }
            ')' => {
                chars.next();
                out.push(Tok::Close);
            }
            '\'' | '"' => {
                chars.next();
                let mut v = String::new();
                loop {
                    let ch = chars.next()?;
                    if ch == c {
                        break;
                    }
                    v.push(ch);
                }
                out.push(Tok::Str(v));
            }
            '=' | '!' | '<' | '>' | '~' => {
                let mut op = String::new();
                while let Some(&ch) = chars.peek() {
                    if matches!(ch, '=' | '!' | '<' | '>' | '~') {
                        op.push(ch);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Tok::Op(op));
            }
            _ => {
                let mut w = String::new();
                while let Some(&ch) = chars.peek() {
                    if ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' {
                        w.push(ch);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if w.is_empty() {
                    return None;
                }
                out.push(match w.as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "in" | "not" => Tok::Op(w),
                    _ => Tok::Word(w),
                });
            }
        }
    }
    Some(out)
}

struct MarkerParser<'a> {
    tokens: &'a [Tok],
    at: usize,
    platform: Platform,
}

impl MarkerParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn or(&mut self) -> Option<bool> {
        let mut v = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.at += 1;
            let r = self.and()?;
            v = v || r;
        }
        Some(v)
    }

    fn and(&mut self) -> Option<bool> {
        let mut v = self.atom()?;
        while self.peek() == Some(&Tok::And) {
            self.at += 1;
            let r = self.atom()?;
            v = v && r;
        }
        Some(v)
    }

    fn atom(&mut self) -> Option<bool> {
        if self.peek() == Some(&Tok::Open) {
            self.at += 1;
            let v = self.or()?;
            if self.peek() != Some(&Tok::Close) {
                return None;
            }
            self.at += 1;
            return Some(v);
        }
        let left = self.value()?;
        let mut op = match self.tokens.get(self.at)? {
            Tok::Op(o) => o.clone(),
            _ => return None,
        };
        self.at += 1;
        // `not in`
        if op == "not"
            && let Some(Tok::Op(o)) = self.peek()
            && o == "in"
        {
            self.at += 1;
            op = "not in".into();
        }
        let right = self.value()?;
        Some(self.compare(&left, &op, &right))
    }

    fn value(&mut self) -> Option<Value> {
        let v = match self.tokens.get(self.at)? {
            Tok::Word(w) => Value::Var(w.clone()),
            Tok::Str(s) => Value::Lit(s.clone()),
            _ => return None,
        };
        self.at += 1;
        Some(v)
    }

    fn compare(&self, left: &Value, op: &str, right: &Value) -> bool {
        let resolve = |v: &Value| -> Option<String> {
            match v {
                Value::Lit(s) => Some(s.clone()),
                Value::Var(name) => self.var(name),
            }
        };
        let (Some(l), Some(r)) = (resolve(left), resolve(right)) else {
            // An `extra` or a variable that does not decide the platform.
            return true;
        };
        match op {
            "==" | "===" => l == r,
            "!=" => l != r,
            "in" => r.contains(&l),
            "not in" => !r.contains(&l),
            _ => true,
        }
    }

    /// The platform's value of a marker variable; `None` for the others.
    fn var(&self, name: &str) -> Option<String> {
        let (sys, machine, system) = match self.platform {
            Platform::LinuxX86_64 => ("linux", "x86_64", "Linux"),
            Platform::LinuxSbsa => ("linux", "aarch64", "Linux"),
            Platform::WindowsX86_64 => ("win32", "AMD64", "Windows"),
        };
        match name {
            "sys_platform" => Some(sys.into()),
            "platform_machine" => Some(machine.into()),
            "platform_system" => Some(system.into()),
            "os_name" => Some(if system == "Windows" { "nt" } else { "posix" }.into()),
            _ => None,
        }
    }
}

enum Value {
    Var(String),
    Lit(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    const META_135: &str = "Metadata-Version: 2.5\nName: cuda-toolkit\nVersion: 13.5.0\n\
Requires-Dist: nvidia-cublas==13.10.0.20.*; (sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'ARM64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'all'\n\
Requires-Dist: nvidia-cuda-culibos==13.5.25.*; (sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64') and extra == 'all'\n\
Requires-Dist: nvidia-cudla==13.5.25.*; (sys_platform == 'linux' and platform_machine == 'aarch64') and extra == 'all'\n\
Requires-Dist: nvidia-cuda-runtime==13.5.37.*; (sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'ARM64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'all'\n\
Requires-Dist: nvidia-nvjitlink<14,>=13.5.37; (sys_platform == 'linux' and platform_machine == 'x86_64') and extra == 'all'\n\
Requires-Dist: nvidia-cuda-tileiras==13.5.37.*; sys_platform == 'linux' and extra == 'all'\n\
\n\
Requires-Dist: not-a-requirement==1\n";

    #[test]
    fn requirements_are_parsed_with_pins_and_markers() {
        let r = requirements(META_135);
        assert_eq!(r.len(), 6);
        assert_eq!(r[0].project, "nvidia-cublas");
        assert_eq!(r[0].version.as_deref(), Some("13.10.0.20"));
        assert_eq!(r[4].project, "nvidia-nvjitlink");
        assert_eq!(r[4].version.as_deref(), Some("13.5.37"));
    }

    #[test]
    fn markers_decide_platforms() {
        let m = "(sys_platform == 'linux' and platform_machine == 'aarch64') and extra == 'all'";
        assert_eq!(marker_holds(m, Platform::LinuxSbsa), Some(true));
        assert_eq!(marker_holds(m, Platform::LinuxX86_64), Some(false));
        assert_eq!(marker_holds(m, Platform::WindowsX86_64), Some(false));
        let m = "(sys_platform == 'win32' or sys_platform == 'linux') and extra == 'all'";
        assert!(
            Platform::ALL
                .iter()
                .all(|p| marker_holds(m, *p) == Some(true))
        );
        assert_eq!(
            marker_holds(
                "python_version >= '3.9' and sys_platform != \"win32\"",
                Platform::LinuxX86_64
            ),
            Some(true)
        );
        assert_eq!(
            marker_holds("(sys_platform == 'linux'", Platform::LinuxX86_64),
            None
        );
        assert_eq!(marker_holds("sys_platform ==", Platform::LinuxX86_64), None);
    }

    #[test]
    fn a_release_maps_projects_to_components_per_platform() {
        let r = release("13.5.0", META_135, crate::registry::pypi()).unwrap();
        let cudart = &r.components["cudart"];
        assert_eq!(cudart.project, "nvidia-cuda-runtime");
        assert_eq!(cudart.version, "13.5.37");
        assert_eq!(
            cudart.platforms,
            ["linux-x86_64", "linux-sbsa", "windows-x86_64"]
        );
        assert_eq!(
            r.components["culibos"].platforms,
            ["linux-x86_64", "linux-sbsa"]
        );
        assert_eq!(r.components["nvjitlink"].platforms, ["linux-x86_64"]);
        assert!(
            r.other_projects
                .contains(&"nvidia-cuda-tileiras".to_string()),
            "{r:?}"
        );
        let x86: Vec<&String> = r
            .components_for(Platform::LinuxX86_64)
            .map(|(c, _)| c)
            .collect();
        assert!(!x86.iter().any(|c| *c == "cudla"));
        assert!(release("13.5.0", "Name: x\n", crate::registry::pypi()).is_err());
    }

    #[test]
    fn a_fourth_zero_is_the_same_release() {
        let meta = "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90.*; sys_platform == 'linux'\n";
        let r = release("12.8.2.0", meta, crate::registry::pypi()).unwrap();
        assert_eq!(r.version, "12.8.2");
        assert_eq!(
            r.components["cudart"].platforms,
            ["linux-x86_64", "linux-sbsa"]
        );
        assert!(release("12.8.2.1", meta, crate::registry::pypi()).is_err());
    }

    #[test]
    fn metapackage_file_names() {
        assert_eq!(
            metapackage_version("cuda_toolkit-13.5.0-py2.py3-none-any.whl").as_deref(),
            Some("13.5.0")
        );
        assert_eq!(metapackage_version("cuda_toolkit-0.0.0a0.tar.gz"), None);
        assert_eq!(metapackage_version("other-1.0-py3-none-any.whl"), None);
    }
}
