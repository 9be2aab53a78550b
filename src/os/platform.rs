//! The one platform type: an operating system and CPU pair that CUDA is
//! built for. Sources use it to pick files (under NVIDIA's manifest keys),
//! `cuda.lock` to pin them per platform (under its own names, which are
//! Python's `sys_platform-platform_machine` and part of the file format),
//! and the command line to name them (`--platform linux-aarch64`).

use serde::{Deserialize, Serialize};

/// A platform, named as NVIDIA's manifests name it.
///
/// Ordered as locks list their artifacts.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    clap::ValueEnum,
    Serialize,
    Deserialize,
)]
pub enum Platform {
    #[value(name = "linux-x86_64")]
    #[serde(rename = "linux-x86_64")]
    LinuxX86_64,
    /// Arm64 servers (`aarch64`), "server base system architecture":
    /// `linux-sbsa` to NVIDIA, `linux-aarch64` in a lock.
    #[value(name = "linux-aarch64", alias = "linux-sbsa")]
    #[serde(rename = "linux-aarch64")]
    LinuxSbsa,
    #[value(name = "windows-x86_64")]
    #[serde(rename = "windows-x86_64")]
    WindowsX86_64,
}

impl Platform {
    pub const ALL: [Platform; 3] = [
        Platform::LinuxX86_64,
        Platform::LinuxSbsa,
        Platform::WindowsX86_64,
    ];

    /// The machine cudaenv runs on, if NVIDIA ships CUDA for it.
    pub fn current() -> Option<Platform> {
        match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => Some(Platform::LinuxX86_64),
            ("linux", "aarch64") => Some(Platform::LinuxSbsa),
            ("windows", "x86_64") => Some(Platform::WindowsX86_64),
            _ => None,
        }
    }

    /// The machine cudaenv runs on, for choosing file names and layouts:
    /// Linux x86_64's where NVIDIA ships no CUDA (another Unix names its
    /// libraries as Linux does).
    pub fn host() -> Platform {
        Platform::current().unwrap_or(Platform::LinuxX86_64)
    }

    /// The key in NVIDIA's manifests (`linux-x86_64`, `linux-sbsa`).
    pub fn manifest_key(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "linux-x86_64",
            Platform::LinuxSbsa => "linux-sbsa",
            Platform::WindowsX86_64 => "windows-x86_64",
        }
    }

    /// Its name in `cuda.lock`, on the command line and in messages
    /// (`linux-aarch64`).
    pub fn name(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "linux-x86_64",
            Platform::LinuxSbsa => "linux-aarch64",
            Platform::WindowsX86_64 => "windows-x86_64",
        }
    }

    /// Whether a wheel with this platform tag installs on it: manylinux (or
    /// plain linux) tags of its architecture on Linux, `win_amd64` on
    /// Windows.
    pub fn wheel_tag_fits(self, tag: &str) -> bool {
        let linux = |arch: &str| {
            (tag.starts_with("manylinux") || tag.starts_with("linux"))
                && tag.ends_with(&format!("_{arch}"))
        };
        match self {
            Platform::LinuxX86_64 => linux("x86_64"),
            Platform::LinuxSbsa => linux("aarch64"),
            Platform::WindowsX86_64 => tag == "win_amd64",
        }
    }

    /// Python's `platform_machine` on it.
    pub fn machine(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "x86_64",
            Platform::LinuxSbsa => "aarch64",
            Platform::WindowsX86_64 => "AMD64",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Row {
        platform: Platform,
    }

    /// The names in `cuda.lock` are a file format: they must not change.
    #[test]
    fn lock_names_are_stable() {
        for (p, name) in [
            (Platform::LinuxX86_64, "linux-x86_64"),
            (Platform::LinuxSbsa, "linux-aarch64"),
            (Platform::WindowsX86_64, "windows-x86_64"),
        ] {
            let text = toml::to_string(&Row { platform: p }).unwrap();
            assert_eq!(text.trim(), format!("platform = \"{name}\""));
            assert_eq!(toml::from_str::<Row>(&text).unwrap().platform, p);
            assert_eq!(p.name(), name);
        }
        assert!(toml::from_str::<Row>("platform = \"linux-sbsa\"").is_err());
    }

    #[test]
    fn the_command_line_takes_lock_names_and_nvidias_alias() {
        use clap::ValueEnum;
        assert_eq!(
            Platform::from_str("linux-sbsa", false),
            Ok(Platform::LinuxSbsa)
        );
        assert_eq!(
            Platform::from_str("linux-aarch64", false),
            Ok(Platform::LinuxSbsa)
        );
        assert_eq!(
            Platform::from_str("windows-x86_64", false),
            Ok(Platform::WindowsX86_64)
        );
        let shown: Vec<String> = Platform::value_variants()
            .iter()
            .filter_map(|p| p.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(shown, ["linux-x86_64", "linux-aarch64", "windows-x86_64"]);
    }

    #[test]
    fn manifest_keys_are_nvidias() {
        let keys: Vec<&str> = Platform::ALL.iter().map(|p| p.manifest_key()).collect();
        assert_eq!(keys, ["linux-x86_64", "linux-sbsa", "windows-x86_64"]);
        assert!(Platform::LinuxX86_64 < Platform::LinuxSbsa);
    }
}
