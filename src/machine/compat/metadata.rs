//! The frameworks' own word: what each release's wheel on PyPI pins.
//!
//! `registry/compat/frameworks.toml` has one row per release on PyPI of torch,
//! tensorflow, the jax CUDA plugins and the cupy-cudaNNx packages, generated
//! from their wheels' `Requires-Dist` (`scripts/gen-framework-compat.py`). A
//! row says what the metadata says and nothing more: the CUDA major.minor range
//! of the CUDA-numbered wheels, the cuDNN, NCCL, cuSPARSELt and TensorRT pins,
//! or that the wheel names no NVIDIA wheel at all. `framework` merges these with
//! the hand-kept tables (PyTorch's other builds, TensorFlow's tested builds and
//! Python ranges, CuPy's supported toolkits), which keep what metadata does not
//! say; driver floors and GPU architectures always come from the CUDA tables.

use std::fmt;

use crate::spec::{Library, Version};

use super::data::{self, Bound, MetaRelease};
use super::framework::Framework;

impl Bound {
    /// The lowest version it allows, where it says one.
    pub fn floor(&self) -> Option<&Version> {
        self.eq.as_ref().or(self.ge.as_ref())
    }

    /// What a stack spec asks for to satisfy it: an exact pin's major.minor
    /// (any patch of it), else the major (the newest of that major: a range
    /// `>=2.18.1` or `>=9.0, <10` is met by the newest build, as pip would pick).
    pub fn spec_prefix(&self) -> Option<Version> {
        match (&self.eq, &self.ge) {
            (Some(e), _) => Some(e.truncate(2)),
            (None, Some(g)) => Some(g.truncate(1)),
            (None, None) => None,
        }
    }

    /// The CUDA a range asks a stack for (`cuda` rows: major.minor bounds): the
    /// major when the range runs to its end, else the last minor below the cap.
    pub fn cuda_spec(&self) -> Option<Version> {
        if let Some(e) = &self.eq {
            return Some(e.truncate(2));
        }
        let major = self.floor().or(self.lt.as_ref())?.major();
        if let Some(le) = &self.le {
            return Some(le.truncate(2));
        }
        match &self.lt {
            Some(lt) if lt.major() == major && lt.minor().unwrap_or(0) > 0 => {
                Some(Version::from_parts(&[major, lt.minor().unwrap_or(0) - 1]))
            }
            _ => Some(Version::from_parts(&[major])),
        }
    }

    /// Whether a CUDA major.minor lies in the range.
    pub fn allows(&self, v: &Version) -> bool {
        let v = v.truncate(2);
        if let Some(e) = &self.eq {
            return v == e.truncate(2);
        }
        self.ge.as_ref().is_none_or(|g| v >= g.truncate(2))
            && self.le.as_ref().is_none_or(|l| v <= l.truncate(2))
            && self.lt.as_ref().is_none_or(|l| v < *l)
    }
}

impl fmt::Display for Bound {
    /// `== 9.1.0.70`, `≥ 9.0, < 10.0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A whole major (`cuda-toolkit==12.*`, or a package's name): `12.x`.
        if let (None, None, Some(g), Some(l)) = (&self.eq, &self.le, &self.ge, &self.lt)
            && g.minor().unwrap_or(0) == 0
            && *l == Version::from_parts(&[g.major() + 1, 0])
        {
            return write!(f, "{}.x", g.major());
        }
        let mut parts = Vec::new();
        if let Some(v) = &self.eq {
            parts.push(format!("== {v}"));
        }
        if let Some(v) = &self.ge {
            parts.push(format!("≥ {v}"));
        }
        if let Some(v) = &self.le {
            parts.push(format!("≤ {v}"));
        }
        if let Some(v) = &self.lt {
            parts.push(format!("< {v}"));
        }
        f.write_str(&parts.join(", "))
    }
}

impl MetaRelease {
    /// The libraries beside cuDNN that its metadata pins, with their bounds.
    pub fn libraries(&self) -> impl Iterator<Item = (Library, &Bound)> {
        [
            (Library::Nccl, &self.nccl),
            (Library::Cusparselt, &self.cusparselt),
            (Library::Tensorrt, &self.tensorrt),
        ]
        .into_iter()
        .filter_map(|(l, b)| b.as_ref().map(|b| (l, b)))
    }

    /// The Python it can be installed on, as its metadata and wheel tags say:
    /// `>=3.9; wheels for 3.9–3.12` (`Requires-Python` is mostly a floor,
    /// the tags say where a wheel exists), or `None` when neither says.
    pub fn python(&self) -> Option<String> {
        // The tags are sorted oldest first: a kind's first and last bound it.
        let span = |kind: fn(&str) -> bool| {
            let mut of = self.python_wheels.iter().filter(|w| kind(w));
            let first = of.next()?;
            Some(match of.next_back() {
                Some(last) => format!("{first}–{last}"),
                None => first.clone(),
            })
        };
        let mut wheels: Vec<String> = Vec::new();
        wheels.extend(span(|w| !w.ends_with(['t', '+'])));
        wheels.extend(span(|w| w.ends_with('t')).map(|s| format!("free-threaded {s}")));
        wheels.extend(
            self.python_wheels
                .iter()
                .find(|w| w.ends_with('+'))
                .map(|w| format!("{} and newer (abi3)", w.trim_end_matches('+'))),
        );
        let wheels = (!wheels.is_empty()).then(|| format!("wheels for {}", wheels.join(", ")));
        match (&self.requires_python, wheels) {
            (Some(r), Some(w)) => Some(format!("{r}; {w}")),
            (Some(r), None) => Some(r.clone()),
            (None, w) => w,
        }
    }

    /// `torch 2.4.1's wheel (torch-2.4.1-cp312-….whl)`, for provenance lines:
    /// the wheel whose metadata the pins were read from (`jax 0.4.25's wheel`
    /// for the plugin releases that pin none themselves).
    pub fn wheel_named(&self) -> String {
        match (&self.pins_project, &self.pins_wheel) {
            (Some(p), Some(w)) => {
                format!("{p} {}'s wheel ({w}), for {}", self.version, self.project)
            }
            _ => format!("{} {}'s wheel ({})", self.project, self.version, self.wheel),
        }
    }
}

/// The framework's rows, oldest first.
pub fn releases(framework: Framework) -> impl Iterator<Item = &'static MetaRelease> {
    data::frameworks()
        .release
        .iter()
        .filter(move |r| r.framework == framework.name())
}

/// The rows of the newest release matching `version` (`2.4` → 2.4.1, `0.4.30`
/// → 0.4.30), one per project that has it (the jax plugins for CUDA 12 and 13,
/// the cupy packages), narrowed to a CUDA `major` when the request names one.
pub fn find(
    framework: Framework,
    version: &Version,
    major: Option<u32>,
) -> Vec<&'static MetaRelease> {
    let candidates: Vec<&MetaRelease> = releases(framework)
        .filter(|r| r.version.matches(version))
        .filter(|r| major.is_none_or(|m| r.major == Some(m)))
        .collect();
    let Some(newest) = candidates.iter().map(|r| &r.version).max() else {
        return Vec::new();
    };
    candidates
        .iter()
        .filter(|r| &r.version == newest)
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    /// The generated table as the metadata has it, for releases a user asks about.
    #[test]
    fn the_generated_rows_say_what_the_wheels_pin() {
        assert!(data::frameworks().source.contains("Requires-Dist"));
        let jax = find(Framework::Jax, &v("0.4.30"), None);
        assert_eq!(jax.len(), 1, "no CUDA 13 plugin for 0.4.30");
        let j = jax[0];
        assert_eq!(j.project, "jax-cuda12-plugin");
        let cuda = j.cuda.as_ref().unwrap();
        assert_eq!(cuda.to_string(), "≥ 12.1, < 13.0");
        assert_eq!(cuda.cuda_spec().unwrap().to_string(), "12");
        assert_eq!(j.cudnn.as_ref().unwrap().to_string(), "9.x");
        assert_eq!(j.nccl.as_ref().unwrap().to_string(), "≥ 2.18.1");
        assert_eq!(j.extra.as_deref(), Some("with_cuda"));

        // `torch==2.4` is its newest patch release; the wheel pins exactly.
        let t = find(Framework::Torch, &v("2.4"), None)[0];
        assert_eq!(t.version.to_string(), "2.4.1");
        assert_eq!(t.cuda.as_ref().unwrap().to_string(), "== 12.1");
        assert_eq!(
            t.cudnn.as_ref().unwrap().spec_prefix().unwrap().to_string(),
            "9.1"
        );
        assert_eq!(t.nccl.as_ref().unwrap().to_string(), "== 2.20.5");

        // cuBLAS `<12.9` caps the CUDA a JAX 0.6.1 stack may have.
        let j = find(Framework::Jax, &v("0.6.1"), None)[0];
        let cuda = j.cuda.as_ref().unwrap();
        assert_eq!(cuda.cuda_spec().unwrap().to_string(), "12.8");
        assert!(cuda.allows(&v("12.6")) && !cuda.allows(&v("12.9")) && !cuda.allows(&v("12.5")));

        // Both plugins of a release that has both; a major narrows to one.
        assert_eq!(find(Framework::Jax, &v("0.9.0"), None).len(), 2);
        let j13 = find(Framework::Jax, &v("0.9.0"), Some(13));
        assert_eq!(j13.len(), 1);
        assert_eq!(j13[0].project, "jax-cuda13-plugin");

        // JAX 0.4.25: the plugin pins only its pjrt half; jax's `cuda12`
        // extra says CUDA ≥ 12.3 and cuDNN ≥ 8.9.7.29.
        let j = find(Framework::Jax, &v("0.4.25"), None)[0];
        assert_eq!(j.project, "jax-cuda12-plugin");
        assert_eq!(j.cuda.as_ref().unwrap().to_string(), "≥ 12.3, < 13.0");
        assert_eq!(j.cudnn.as_ref().unwrap().to_string(), "≥ 8.9.7.29");
        assert_eq!(j.extra.as_deref(), Some("cuda12"));
        assert!(
            j.wheel_named()
                .starts_with("jax 0.4.25's wheel (jax-0.4.25-py3-none-any.whl)")
        );

        // A wheel that names no NVIDIA wheel says so, with its package's major.
        let c = find(Framework::Cupy, &v("12.2.0"), Some(12))[0];
        assert!(!c.nvidia && c.cuda.is_none());
        assert_eq!(c.project, "cupy-cuda12x");
        let tf = find(Framework::Tensorflow, &v("2.10"), None)[0];
        assert_eq!(tf.version.to_string(), "2.10.1");
        assert!(!tf.nvidia);

        // TensorFlow 2.14's and-cuda extra pins TensorRT 8.
        let tf = find(Framework::Tensorflow, &v("2.14.0"), None)[0];
        assert_eq!(tf.tensorrt.as_ref().unwrap().to_string(), "== 8.5.3.1");
        assert_eq!(tf.cuda.as_ref().unwrap().to_string(), "== 11.8");
    }

    /// The Python a release's wheels say: `Requires-Python` (a floor) and the
    /// interpreters the Linux wheels are tagged for, each kind as a span.
    #[test]
    fn the_python_of_a_release_is_its_floor_and_its_wheels() {
        let j = find(Framework::Jax, &v("0.4.30"), None)[0];
        assert_eq!(j.python().unwrap(), ">=3.9; wheels for 3.9–3.12");
        let j = find(Framework::Jax, &v("0.8.0"), Some(12))[0];
        assert_eq!(
            j.python().unwrap(),
            ">=3.11; wheels for 3.11–3.14, free-threaded 3.13t–3.14t"
        );
        let c = find(Framework::Cupy, &v("11.0.0"), Some(11))[0];
        assert_eq!(c.python().unwrap(), ">=3.7; wheels for 3.7–3.10");
        let mut r = j.clone();
        r.requires_python = None;
        r.python_wheels = vec!["3.9+".into()];
        assert_eq!(r.python().unwrap(), "wheels for 3.9 and newer (abi3)");
        r.python_wheels = vec!["3.12".into(), "3.12t".into()];
        assert_eq!(r.python().unwrap(), "wheels for 3.12, free-threaded 3.12t");
        r.python_wheels.clear();
        assert_eq!(r.python(), None);
        // Every release on PyPI has a Linux x86_64 wheel tagged for some CPython.
        assert!(
            data::frameworks()
                .release
                .iter()
                .all(|r| !r.python_wheels.is_empty())
        );
    }

    /// The committed table is exactly what the generator makes of the committed
    /// inputs: re-run it (no network: it reads registry/inputs/frameworks only)
    /// and compare, so an edited table or a refreshed input without a
    /// regenerated table fails here.
    #[test]
    fn frameworks_toml_is_generated_from_its_inputs() {
        let root = env!("CARGO_MANIFEST_DIR");
        let out = std::process::Command::new("python3")
            .arg(format!("{root}/scripts/gen-framework-compat.py"))
            .arg(format!("{root}/registry/inputs/frameworks"))
            .output()
            .expect("python3 runs the generator");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let made = String::from_utf8(out.stdout).unwrap();
        assert!(
            made == data::FRAMEWORKS_TOML,
            "registry/compat/frameworks.toml differs from the output of \
             `python3 scripts/gen-framework-compat.py registry/inputs/frameworks`: regenerate it"
        );
    }

    /// Every release of every input file has a row, and every row with NVIDIA
    /// wheels has a CUDA range of its own major.
    #[test]
    fn every_release_on_pypi_has_a_row() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/inputs/frameworks");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let project = path.file_stem().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            files += 1;
            if project == "jax" {
                // The jax wheel's pins complete plugin rows; it has none of its own.
                continue;
            }
            for line in text.lines().skip(2) {
                let version = line.split('\t').next().unwrap();
                let base = version.split(".post").next().unwrap();
                assert!(
                    data::frameworks()
                        .release
                        .iter()
                        .any(|r| r.project == project && r.version.to_string() == base),
                    "{project} {version}"
                );
            }
        }
        assert_eq!(files, 8);
        // A row whose pins come from another wheel names a row of jax.tsv.
        let jax = std::fs::read_to_string(format!("{dir}/jax.tsv")).unwrap();
        let borrowed: Vec<&MetaRelease> = data::frameworks()
            .release
            .iter()
            .filter(|r| r.pins_wheel.is_some())
            .collect();
        assert!(borrowed.len() >= 8, "0.4.22–0.4.29");
        for r in borrowed {
            let line = format!(
                "{}\t{}\t{}\t",
                r.version,
                r.pins_wheel.as_ref().unwrap(),
                r.pins_wheel_sha256.as_ref().unwrap()
            );
            assert!(jax.lines().any(|l| l.starts_with(&line)), "{line}");
            assert_eq!(r.pins_project.as_deref(), Some("jax"));
            assert!(r.cuda.is_some(), "{} {}", r.project, r.version);
        }
        for r in &data::frameworks().release {
            if let Some(c) = &r.cuda {
                assert!(r.nvidia);
                assert_eq!(
                    c.floor().map(Version::major),
                    r.major,
                    "{} {}",
                    r.project,
                    r.version
                );
            }
        }
    }
}
