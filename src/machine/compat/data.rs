//! The embedded compatibility tables (`registry/compat/*.toml`), parsed once.
//!
//! The TOML is generated from the public reference tables by
//! `scripts/gen-compat-registry.py` and reviewed like code. Parsing happens on
//! first use; the tests below parse every table and check it against the
//! reference CSV files, so a malformed table never reaches a release.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::spec::Version;

use super::driver::DriverVersion;

macro_rules! table {
    ($file:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/registry/compat/",
            $file
        ))
    };
}

pub const DRIVER_TOML: &str = table!("cuda_driver.toml");
pub const ARCH_TOML: &str = table!("cuda_arch.toml");
pub const TENSORFLOW_TOML: &str = table!("tensorflow.toml");
pub const PYTORCH_TOML: &str = table!("pytorch.toml");
pub const CUDNN_TOML: &str = table!("cudnn.toml");
pub const JAX_TOML: &str = table!("jax.toml");
pub const CUPY_TOML: &str = table!("cupy.toml");
pub const LIBRARIES_TOML: &str = table!("libraries.toml");
pub const FRAMEWORKS_TOML: &str = table!("frameworks.toml");
pub const FRAMEWORK_ARCH_TOML: &str = table!("framework_arch.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct DriverTable {
    pub source: String,
    pub release: Vec<DriverRelease>,
    pub minor_compat: Vec<MinorCompat>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct DriverRelease {
    pub cuda: Version,
    pub label: String,
    pub linux: DriverVersion,
    pub windows: Option<DriverVersion>,
    /// For a release newer than the reference copy of Table 3: the NVIDIA
    /// file its driver comes from.
    #[serde(default)]
    pub evidence: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinorCompat {
    pub family: String,
    pub cuda: Vec<Version>,
    pub linux: DriverVersion,
    pub windows: Option<DriverVersion>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct ArchTable {
    pub source: String,
    pub arch: Vec<ArchRow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchRow {
    pub sm: String,
    pub family: String,
    pub added: Option<Version>,
    pub deprecated: Option<Version>,
    pub removed: Option<Version>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct TensorflowTable {
    pub source: String,
    pub build: Vec<TfBuild>,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TfBuild {
    pub platform: String,
    pub package: String,
    pub version: Version,
    pub python: Vec<String>,
    pub cuda: Version,
    pub cudnn: Version,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct PytorchTable {
    pub source: String,
    pub release: Vec<TorchRelease>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct TorchRelease {
    pub version: Version,
    pub python: Option<String>,
    pub python_min: Option<Version>,
    pub python_max: Option<Version>,
    pub confirmed: bool,
    pub note: Option<String>,
    pub build: Vec<TorchBuild>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Experimental,
    Stable,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchBuild {
    pub cuda: Version,
    pub cudnn: Option<Version>,
    pub channel: Channel,
    #[serde(default)]
    pub cudnn_shared: bool,
    /// `cudnn` is a minimum: any later cuDNN of that major works (JAX's `>=9.8, <10`).
    #[serde(default)]
    pub cudnn_minimum: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct CudnnTable {
    pub source: String,
    pub release: Vec<CudnnRow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct CudnnRow {
    pub cudnn: Version,
    pub cuda: Vec<Version>,
    pub evidence: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct LibrariesTable {
    pub source: String,
    pub library: Vec<LibraryRow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryRow {
    pub name: String,
    pub major: String,
    pub cuda: Vec<Version>,
}

/// What every framework release on PyPI says about its stack in its own
/// wheel's metadata (`frameworks.toml`, generated by
/// `scripts/gen-framework-compat.py` from `registry/inputs/frameworks`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct MetadataTable {
    pub source: String,
    pub release: Vec<MetaRelease>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct MetaRelease {
    /// `torch`, `tensorflow`, `jax`, `cupy`.
    pub framework: String,
    /// The PyPI project (`jax-cuda12-plugin`, `cupy-cuda12x`).
    pub project: String,
    pub version: Version,
    pub wheel: String,
    pub wheel_sha256: String,
    /// False when the metadata names no NVIDIA wheel.
    #[serde(default = "yes")]
    pub nvidia: bool,
    /// The CUDA major, from the project's name or its pins.
    pub major: Option<u32>,
    /// The extra that brings the NVIDIA wheels (`and-cuda`, `with-cuda`, `ctk`).
    pub extra: Option<String>,
    /// CUDA major.minor, from the CUDA-numbered wheels' pins.
    pub cuda: Option<Bound>,
    #[serde(default)]
    pub cuda_from: Vec<String>,
    pub cudnn: Option<Bound>,
    pub nccl: Option<Bound>,
    pub cusparselt: Option<Bound>,
    pub tensorrt: Option<Bound>,
    /// Where the pins come from when not from `wheel`'s own metadata: JAX
    /// 0.4.22–0.4.29's plugins pin only their pjrt half, and `jax`'s wheel
    /// pins the NVIDIA wheels in its `cudaNN` extra.
    pub pins_project: Option<String>,
    pub pins_wheel: Option<String>,
    pub pins_wheel_sha256: Option<String>,
    /// The metadata's `Requires-Python`, as written (`>=3.9`).
    pub requires_python: Option<String>,
    /// The interpreters its Linux x86_64 wheels are tagged for, oldest first:
    /// `3.10`, `3.13t` (free-threaded), `3.9+` (an abi3 wheel).
    #[serde(default)]
    pub python_wheels: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A version range as a requirement writes it: `==`, `>=`, `<=`, `<`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bound {
    pub eq: Option<Version>,
    pub ge: Option<Version>,
    pub le: Option<Version>,
    pub lt: Option<Version>,
    /// The requirement it was read from (absent for `cuda`: see `cuda_from`).
    pub from: Option<String>,
}

/// Hand-kept facts about the architectures frameworks' wheels carry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct FrameworkArchTable {
    pub source: String,
    pub floor: Vec<ArchFloor>,
}

/// A framework's builds for `cuda_min` and newer start at `oldest`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the data's provenance and records, required by its schema and read by people and the generators"
)]
pub struct ArchFloor {
    pub framework: String,
    pub cuda_min: Version,
    pub oldest: String,
    pub evidence: String,
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> T {
    // Embedded, generated and tested data: a failure here is a build defect.
    toml::from_str(text)
        .unwrap_or_else(|e| panic!("embedded registry/compat/{name} is invalid: {e}"))
}

pub fn driver() -> &'static DriverTable {
    static T: OnceLock<DriverTable> = OnceLock::new();
    T.get_or_init(|| parse("cuda_driver.toml", DRIVER_TOML))
}

pub fn arch() -> &'static ArchTable {
    static T: OnceLock<ArchTable> = OnceLock::new();
    T.get_or_init(|| parse("cuda_arch.toml", ARCH_TOML))
}

pub fn tensorflow() -> &'static TensorflowTable {
    static T: OnceLock<TensorflowTable> = OnceLock::new();
    T.get_or_init(|| parse("tensorflow.toml", TENSORFLOW_TOML))
}

pub fn pytorch() -> &'static PytorchTable {
    static T: OnceLock<PytorchTable> = OnceLock::new();
    T.get_or_init(|| parse("pytorch.toml", PYTORCH_TOML))
}

/// JAX's `-local` wheel variants, in the shape of the PyTorch table.
pub fn jax() -> &'static PytorchTable {
    static T: OnceLock<PytorchTable> = OnceLock::new();
    T.get_or_init(|| parse("jax.toml", JAX_TOML))
}

/// CuPy's CUDA Toolkit support per major release, in the shape of the PyTorch table.
pub fn cupy() -> &'static PytorchTable {
    static T: OnceLock<PytorchTable> = OnceLock::new();
    T.get_or_init(|| parse("cupy.toml", CUPY_TOML))
}

pub fn cudnn() -> &'static CudnnTable {
    static T: OnceLock<CudnnTable> = OnceLock::new();
    T.get_or_init(|| parse("cudnn.toml", CUDNN_TOML))
}

pub fn frameworks() -> &'static MetadataTable {
    static T: OnceLock<MetadataTable> = OnceLock::new();
    T.get_or_init(|| parse("frameworks.toml", FRAMEWORKS_TOML))
}

pub fn libraries() -> &'static LibrariesTable {
    static T: OnceLock<LibrariesTable> = OnceLock::new();
    T.get_or_init(|| parse("libraries.toml", LIBRARIES_TOML))
}

pub fn framework_arch() -> &'static FrameworkArchTable {
    static T: OnceLock<FrameworkArchTable> = OnceLock::new();
    T.get_or_init(|| parse("framework_arch.toml", FRAMEWORK_ARCH_TOML))
}

#[cfg(test)]
mod tests {
    //! Each table against the reference file it was generated from.

    use super::*;

    const REF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/inputs/compat/");

    fn csv_rows(file: &str) -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(format!("{REF}{file}")).unwrap();
        text.lines()
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(split_csv)
            .collect()
    }

    fn split_csv(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    }

    #[test]
    fn every_table_parses_and_names_its_source() {
        assert!(driver().source.contains("Table 3"));
        assert!(arch().source.contains("cuda_gpu_arch_support.csv"));
        assert!(tensorflow().source.contains("tensorflow"));
        assert!(pytorch().source.contains("RELEASE.md"));
        assert!(cudnn().source.contains("manifests"));
        assert!(libraries().source.contains("manifests"));
        assert!(jax().source.contains("JAX installation guide"));
        assert!(cupy().source.contains("CuPy installation guide"));
        assert!(framework_arch().source.contains("build_cuda.sh"));
    }

    /// The JAX and CuPy tables are reviewed by hand: check their shape and the
    /// figures their sources state (no reference copy to diff against).
    #[test]
    fn jax_and_cupy_tables_hold_what_their_sources_state() {
        for r in &jax().release {
            let cudas: Vec<String> = r.build.iter().map(|b| b.cuda.to_string()).collect();
            assert_eq!(cudas, ["13.0", "12.3"], "jax {}", r.version);
            assert!(
                r.build
                    .iter()
                    .all(|b| b.cudnn.as_ref().map(|c| c.to_string()) == Some("9.8".into()))
            );
        }
        assert!(
            jax()
                .release
                .iter()
                .any(|r| r.version.to_string() == "0.11")
        );
        let v14 = cupy()
            .release
            .iter()
            .find(|r| r.version.to_string() == "14")
            .unwrap();
        assert_eq!(v14.build.first().unwrap().cuda.to_string(), "13.1");
        assert_eq!(v14.build.last().unwrap().cuda.to_string(), "12.0");
        assert!(
            !v14.build.iter().any(|b| b.cuda.to_string() == "12.7"),
            "12.7 was never released"
        );
        let v13 = cupy()
            .release
            .iter()
            .find(|r| r.version.to_string() == "13")
            .unwrap();
        assert_eq!(v13.build.last().unwrap().cuda.to_string(), "11.2");
        assert_eq!(v13.python_max.as_ref().unwrap().to_string(), "3.12");
    }

    #[test]
    fn driver_table_matches_table3() {
        let rows = csv_rows("cuda_toolkit_driver_table3.csv");
        let t = driver();
        let table3: Vec<&DriverRelease> =
            t.release.iter().filter(|r| r.evidence.is_none()).collect();
        assert_eq!(rows.len(), table3.len());
        for (row, rel) in rows.iter().zip(table3) {
            assert_eq!(row[0], rel.label);
            assert_eq!(row[1], rel.linux.to_string(), "{}", rel.label);
            match &rel.windows {
                Some(w) => assert_eq!(row[2], w.to_string()),
                None => assert_eq!(row[2], "N/A"),
            }
            // The version must be the release the label names.
            let label_ver = rel.label.split_whitespace().nth(1).unwrap();
            assert!(
                rel.cuda
                    .to_string()
                    .starts_with(label_ver.trim_end_matches(|c: char| !c.is_ascii_digit())),
                "{} -> {}",
                rel.label,
                rel.cuda
            );
        }
        assert_eq!(t.minor_compat.len(), 4);
        let floors = csv_rows("cuda_minor_version_compat.csv");
        for mc in &t.minor_compat {
            let row = floors.iter().find(|r| r[0] == mc.family).unwrap();
            assert!(row[1].contains(&mc.linux.to_string()), "{}", mc.family);
        }
    }

    #[test]
    fn arch_table_matches_csv() {
        let rows = csv_rows("cuda_gpu_arch_support.csv");
        let t = arch();
        for row in &rows {
            let cuda: Version = row[0].parse().unwrap();
            // Plain architectures only (`sm_90a` is a compile target), before any remark.
            let added = row[2].split('(').next().unwrap();
            for sm in added.split_whitespace().filter(|s| {
                s.strip_prefix("sm_")
                    .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
            }) {
                let a = t
                    .arch
                    .iter()
                    .find(|a| a.sm == sm)
                    .unwrap_or_else(|| panic!("{sm}"));
                assert_eq!(a.added.as_ref(), Some(&cuda), "{sm}");
            }
            for sm in row[3].split_whitespace().filter(|s| s.starts_with("sm_")) {
                let a = t
                    .arch
                    .iter()
                    .find(|a| a.sm == sm)
                    .unwrap_or_else(|| panic!("{sm}"));
                assert_eq!(a.removed.as_ref(), Some(&cuda), "{sm}");
            }
        }
    }

    #[test]
    fn tensorflow_table_matches_csv() {
        for platform in ["linux", "windows"] {
            let rows = csv_rows(&format!("tensorflow_tested_gpu_{platform}.csv"));
            let builds: Vec<_> = tensorflow()
                .build
                .iter()
                .filter(|b| b.platform == platform)
                .collect();
            assert_eq!(rows.len(), builds.len());
            for (row, b) in rows.iter().zip(builds) {
                assert_eq!(row[0], format!("{}-{}", b.package, b.version));
                assert_eq!(row[1], b.python.join(", "));
                assert_eq!(row[4], b.cudnn.to_string());
                let cuda = if row[5].contains('.') {
                    row[5].clone()
                } else {
                    format!("{}.0", row[5])
                };
                assert_eq!(cuda, b.cuda.to_string());
            }
        }
    }

    #[test]
    fn pytorch_table_matches_matrix() {
        let md = std::fs::read_to_string(format!("{REF}pytorch_release_matrix.md")).unwrap();
        let t = pytorch();
        let mut seen = 0;
        for line in md.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 7
                || !cells[1].starts_with(|c: char| c.is_ascii_digit())
                || !cells[3].starts_with("C++")
            {
                continue;
            }
            seen += 1;
            let v: Version = cells[1].parse().unwrap();
            let rel = t.release.iter().find(|r| r.version == v).unwrap();
            assert_eq!(rel.python.as_deref(), Some(cells[2]));
            let stable = cells[4].matches("CUDA ").count();
            let exp = cells[5].matches("CUDA ").count();
            assert_eq!(
                rel.build
                    .iter()
                    .filter(|b| b.channel == Channel::Stable)
                    .count(),
                stable,
                "{v}"
            );
            assert_eq!(
                rel.build
                    .iter()
                    .filter(|b| b.channel == Channel::Experimental)
                    .count(),
                exp,
                "{v}"
            );
            for b in &rel.build {
                let cell = if b.channel == Channel::Stable {
                    cells[4]
                } else {
                    cells[5]
                };
                assert!(cell.contains(&format!("CUDA {}", b.cuda)), "{v} {}", b.cuda);
                if let Some(c) = &b.cudnn {
                    assert!(cell.contains(&format!("CUDNN {c}")), "{v} {c}");
                }
            }
            assert_eq!(rel.confirmed, v < "2.12".parse().unwrap(), "{v}");
        }
        assert_eq!(seen, 17);
    }

    #[test]
    fn cudnn_and_library_tables_cover_the_manifests() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/registry/inputs/manifests/cudnn"
        );
        let n = std::fs::read_dir(dir).unwrap().count();
        assert!(cudnn().release.len() >= n - 10, "one row per minor release");
        for name in [
            "cudart", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvrtc",
        ] {
            assert!(libraries().library.iter().any(|l| l.name == name), "{name}");
        }
    }
}
