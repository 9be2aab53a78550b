//! The TensorRT check: a builder on the GPU, then a small engine built, run
//! there and compared with the host.
//!
//! TensorRT has no C API. Its only C entry points are `getInferLibVersion`
//! and the factories the C++ headers' inline `createInferBuilder` /
//! `createInferRuntime` call (`create…_INTERNAL(logger, version)`); all else
//! is C++ classes. Since 8.0 those classes are thin on purpose: a public
//! object (`IBuilder`, `INetworkDefinition`, `ITensor`, `ILayer`, …) is
//! `{ vptr; apiv::VXxx* mImpl }` (`INoCopy`'s virtual destructor is its only
//! virtual function that matters here), and each public method is an inline
//! call of `mImpl`'s virtual function of the same name, declared in
//! `NvInferImpl.h`. So a program that knows the slot of each `apiv::V…`
//! function it needs calls TensorRT exactly as code compiled against the
//! headers does. That is what the check does (`engine`), with the slots and
//! signatures of each layout taken from the real headers of the releases
//! it covers (`abi`, which says how they were read and checked).
//!
//! Which release gets what (`plan`): TensorRT 8.5 to 11.x get the builder
//! and the engine. Their layouts come from their headers; the tests run
//! the engine's calls against a stand-in laid out the same way, and the
//! only real TensorRT a GPU machine here can get is pypi.org's 8.6.0
//! (`scripts/gpu-tensorrt.sh`). Older majors (5 to 8.4), whose logger's
//! layout is known (`log`, then the destructor), get the builder check,
//! and the report says that the engine check was not available; a major
//! newer than 11 gets neither, said the same way, because a logger
//! TensorRT would call through a wrong slot would crash.
//! On Windows (MSVC's ABI: one destructor slot, overloads grouped) the
//! engine check is not available, nor TensorRT 11's builder check. A slot
//! mistake can still crash TensorRT: it runs in the verify child, which the
//! parent reports when it dies.

#![allow(non_snake_case)]

use crate::error::MachineError;
use std::ffi::{c_int, c_void};

use serde::{Deserialize, Serialize};

use crate::os::dylib::api;

mod abi;
mod engine;

pub use abi::{Layout, LoggerAbi};
pub use engine::run_tensorrt;

api! {
    /// TensorRT (`libnvinfer.so.<major>`): its C entry points, declared
    /// `extern "C"` in `NvInferRuntimeBase.h`, `NvInferRuntime.h` and
    /// `NvInfer.h` of every release from 5 to 11.
    Tensorrt {
        getInferLibVersion: fn() -> c_int;
        createInferBuilder_INTERNAL: fn(*mut c_void, c_int) -> *mut c_void;
        createInferRuntime_INTERNAL: fn(*mut c_void, c_int) -> *mut c_void;
    }
}

/// The engine's shape: `[M, K] · [K, N] + [1, N]`.
pub const M: usize = 32;
pub const K: usize = 64;
pub const N: usize = 32;

/// What the TensorRT check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TensorrtResult {
    /// `10.1.0`, from `getInferLibVersion`.
    pub version: Option<String>,
    /// The GPU a builder was created on, when one was tried.
    pub device: Option<u32>,
    /// Whether the builder was created there.
    pub builder: Option<bool>,
    /// Whether the engine was built and loaded (absent: not tried).
    #[serde(default)]
    pub engine_built: Option<bool>,
    /// The largest difference between the engine's output and the host's
    /// exact result (absent: it did not run).
    #[serde(default)]
    pub max_error: Option<f64>,
    /// How long `buildSerializedNetwork` took.
    #[serde(default)]
    pub build_ms: Option<f64>,
    /// Why the engine check (or the builder's) did not run: this release's
    /// C++ layout is not one cudaenv knows.
    #[serde(default)]
    pub engine_note: Option<String>,
    /// The first failing call and its message (with TensorRT's last logged
    /// error, when it logged one).
    pub error: Option<String>,
}

// --- versions and layouts ---------------------------------------------------------

/// `getInferLibVersion`'s integer as (major, minor, patch): `100100` is
/// 10.1.0 (10 and later: major·10000 + minor·100); `8601` is 8.6.1 (before
/// 10: major·1000 + minor·100).
pub fn version_parts(code: c_int) -> (u32, u32, u32) {
    let c = code.max(0) as u32;
    if c >= 100_000 {
        (c / 10000, c / 100 % 100, c % 100)
    } else {
        (c / 1000, c / 100 % 10, c % 100)
    }
}

/// `getInferLibVersion`'s integer as text.
pub fn tensorrt_version(code: c_int) -> String {
    let (a, b, c) = version_parts(code);
    format!("{a}.{b}.{c}")
}

/// What the TensorRT check can do with a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The logger's layout, or why no builder is created.
    pub logger: Result<LoggerAbi, String>,
    /// The engine's layout, or why no engine is built.
    pub engine: Result<Layout, String>,
}

/// The checks a release (`getInferLibVersion`'s integer) gets, on a
/// platform whose C++ ABI is Itanium's or not.
pub fn plan(code: c_int, itanium: bool) -> Plan {
    let (major, minor, _) = version_parts(code);
    let logger = match major {
        ..=10 => Ok(LoggerAbi::Plain),
        11 if itanium => Ok(LoggerAbi::Versioned),
        11 => Err(format!(
            "builder and engine checks not available for TensorRT {major} on this platform \
             (its C++ ABI is not the Itanium one the checks call through)"
        )),
        _ => Err(format!(
            "builder and engine checks not available for TensorRT {major}: cudaenv knows \
             TensorRT's C++ layout up to 11"
        )),
    };
    let engine = match (major, minor) {
        _ if !itanium => Err(format!(
            "engine check not available for TensorRT {major} on this platform (its C++ ABI \
             is not the Itanium one the check calls through)"
        )),
        (8, 5..) | (9, _) => Ok(Layout::V8),
        (10, _) => Ok(Layout::V10),
        (11, _) => Ok(Layout::V11),
        (..=8, _) => Err(format!(
            "engine check not available for TensorRT {major}.{minor}: it needs enqueueV3 \
             and named tensor addresses (TensorRT 8.5 and later)"
        )),
        _ => Err(format!(
            "engine check not available for TensorRT {major}: cudaenv knows TensorRT's C++ \
             layout up to 11"
        )),
    };
    let engine = match (&logger, engine) {
        (Err(e), _) => Err(e.clone()),
        (Ok(_), e) => e,
    };
    Plan { logger, engine }
}

// --- the host's side of the engine ------------------------------------------------

/// The input at row `i`, column `k`: -3..=3.
pub fn input(i: usize, k: usize) -> f32 {
    ((i * 3 + k) % 7) as f32 - 3.0
}

/// The constant matrix at row `k`, column `n`: -4..=4.
pub fn weight(k: usize, n: usize) -> f32 {
    ((k * 5 + n * 2) % 9) as f32 - 4.0
}

/// The bias of column `n`: -2..=2.
pub fn bias(n: usize) -> f32 {
    (n % 5) as f32 - 2.0
}

/// The engine's exact output, row-major `[M, N]`, computed in integers.
pub fn reference() -> Vec<f32> {
    let mut out = Vec::with_capacity(M * N);
    for i in 0..M {
        for n in 0..N {
            let dot: i64 = (0..K)
                .map(|k| input(i, k) as i64 * weight(k, n) as i64)
                .sum();
            out.push((dot + bias(n) as i64) as f32);
        }
    }
    out
}

/// The largest |got − want| (infinite for a NaN, or for a missing value).
pub fn max_error(got: &[f32], want: &[f32]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let d = (f64::from(*g) - f64::from(*w)).abs();
            if d.is_nan() { f64::INFINITY } else { d }
        })
        .fold(0.0, f64::max)
}

/// The engine as the report names it.
pub fn engine_shape() -> String {
    format!("{M}x{K} * {K}x{N} + bias")
}

// --- judgement and report ---------------------------------------------------------

/// The check as a problem names it: the builder, or the engine once a
/// builder was created.
fn check_name(t: &TensorrtResult) -> String {
    match (t.device, t.builder) {
        (None, _) => "TensorRT".into(),
        (Some(d), Some(true)) => format!("TensorRT engine ({}) on GPU {d}", engine_shape()),
        (Some(d), _) => format!("TensorRT builder on GPU {d}"),
    }
}

/// The problems a TensorRT result shows: a failed call, or an engine whose
/// output is not the exact result.
pub fn problems(t: &TensorrtResult) -> Vec<MachineError> {
    if let Some(e) = &t.error {
        vec![MachineError::CheckFailed {
            check: check_name(t),
            detail: e.clone(),
        }]
    } else if let Some(err) = t.max_error.filter(|e| *e != 0.0) {
        vec![MachineError::WrongResult {
            check: check_name(t),
            detail: format!(
                "the output differs from the host's exact result by up to {err} (its inputs \
                 are small integers: every product and sum is exact in fp32)"
            ),
        }]
    } else {
        Vec::new()
    }
}

/// A check that did not run because of what cudaenv knows, said as a warning.
pub fn warnings(t: &TensorrtResult) -> Vec<String> {
    t.engine_note
        .iter()
        .map(|n| format!("TensorRT {}: {n}", t.version.as_deref().unwrap_or("?")))
        .collect()
}

/// The report's line: `TensorRT 10.1.0: …`.
pub fn render_line(t: &TensorrtResult) -> String {
    let v = t.version.as_deref().unwrap_or("?");
    let line = match (&t.error, t.device, t.max_error) {
        (Some(e), _, _) => format!("FAILED: {e}"),
        (None, None, _) => "version only (no GPU to run on)".into(),
        (None, Some(d), Some(err)) if err != 0.0 => format!(
            "WRONG RESULT: engine {} on GPU {d}, error {err} (expected exact)",
            engine_shape()
        ),
        (None, Some(d), Some(_)) => format!(
            "engine {} built in {:.0} ms, run on GPU {d}: exact  ok",
            engine_shape(),
            t.build_ms.unwrap_or(0.0)
        ),
        (None, Some(d), None) => match (t.builder, &t.engine_note) {
            (Some(true), Some(n)) => format!("builder created on GPU {d}  ok; {n}"),
            (Some(true), None) => format!("builder created on GPU {d}  ok"),
            (_, Some(n)) => format!("version only; {n}"),
            (_, None) => "version only".into(),
        },
    };
    format!("TensorRT {v}: {line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diagnostic;

    #[test]
    fn version_integers_read_as_tensorrt_writes_them() {
        assert_eq!(version_parts(8601), (8, 6, 1));
        assert_eq!(version_parts(9300), (9, 3, 0));
        assert_eq!(version_parts(100100), (10, 1, 0));
        assert_eq!(version_parts(101600), (10, 16, 0));
        assert_eq!(version_parts(110100), (11, 1, 0));
        assert_eq!(tensorrt_version(8600), "8.6.0");
    }

    #[test]
    fn the_engine_check_runs_only_for_the_layouts_read_from_headers() {
        let engine = |code, itanium| plan(code, itanium).engine;
        let logger = |code, itanium| plan(code, itanium).logger;
        assert_eq!(engine(8600, true), Ok(Layout::V8));
        assert_eq!(engine(8601, true), Ok(Layout::V8));
        assert_eq!(engine(8503, true), Ok(Layout::V8));
        assert_eq!(engine(9300, true), Ok(Layout::V8));
        assert_eq!(engine(100000, true), Ok(Layout::V10));
        assert_eq!(engine(101600, true), Ok(Layout::V10));
        assert_eq!(engine(110100, true), Ok(Layout::V11));
        // Before 8.5: no enqueueV3; the builder check still runs.
        let old = engine(8403, true).unwrap_err();
        assert!(
            old.starts_with("engine check not available for TensorRT 8.4"),
            "{old}"
        );
        assert_eq!(logger(8403, true), Ok(LoggerAbi::Plain));
        assert!(engine(7103, true).unwrap_err().contains("TensorRT 7.1"));
        assert_eq!(logger(7103, true), Ok(LoggerAbi::Plain));
        // 11's logger is versioned; a later major is unknown: neither check.
        assert_eq!(logger(110000, true), Ok(LoggerAbi::Versioned));
        let new = plan(120000, true);
        assert!(
            new.logger
                .as_ref()
                .unwrap_err()
                .starts_with("builder and engine checks not available for TensorRT 12"),
            "{new:?}"
        );
        assert_eq!(new.engine, Err(new.logger.clone().unwrap_err()));
        // MSVC's ABI (Windows): no engine; 8 to 10 keep the builder, whose
        // logger MSVC lays out alike; 11's versioned logger is not built there.
        for code in [8601, 100100] {
            assert_eq!(logger(code, false), Ok(LoggerAbi::Plain));
            assert!(
                engine(code, false)
                    .unwrap_err()
                    .contains("on this platform"),
                "{code}"
            );
        }
        assert!(
            logger(110100, false)
                .unwrap_err()
                .contains("on this platform")
        );
    }

    #[test]
    fn the_engines_output_is_exact_in_fp32_and_its_inputs_in_tf32() {
        let want = reference();
        assert_eq!(want.len(), M * N);
        // Integers below 2^24: exact in fp32 whatever the order of the sums
        // (every partial sum is bounded by the sum of magnitudes).
        let bound: f32 = (0..K).map(|_| 3.0 * 4.0).sum::<f32>() + 2.0;
        assert!(bound < (1u32 << 24) as f32);
        for i in 0..M {
            for n in 0..N {
                let forward = (0..K).fold(0f32, |s, k| s + input(i, k) * weight(k, n));
                let backward = (0..K)
                    .rev()
                    .fold(0f32, |s, k| s + input(i, k) * weight(k, n));
                assert_eq!(forward + bias(n), want[i * N + n]);
                assert_eq!(backward + bias(n), want[i * N + n]);
            }
        }
        // Small integers keep their value in TF32's 10-bit mantissa.
        let tf32 = |x: f32| f32::from_bits(x.to_bits() & !0x1fff);
        assert!((0..M * K).all(|i| tf32(input(i / K, i % K)) == input(i / K, i % K)));
        assert!((0..K * N).all(|i| tf32(weight(i / N, i % N)) == weight(i / N, i % N)));
        // The values are not trivial: signs and zeros both occur.
        assert!(want.iter().any(|x| *x < 0.0) && want.iter().any(|x| *x > 0.0));
    }

    #[test]
    fn any_difference_a_nan_or_a_missing_value_is_an_error() {
        let want = reference();
        assert_eq!(max_error(&want, &want), 0.0);
        let mut got = want.clone();
        got[5] += 1.0;
        assert_eq!(max_error(&got, &want), 1.0);
        got[7] = f32::NAN;
        assert_eq!(max_error(&got, &want), f64::INFINITY);
        assert_eq!(max_error(&want[1..], &want), f64::INFINITY);
    }

    fn ran() -> TensorrtResult {
        TensorrtResult {
            version: Some("8.6.0".into()),
            device: Some(0),
            builder: Some(true),
            engine_built: Some(true),
            max_error: Some(0.0),
            build_ms: Some(812.4),
            ..TensorrtResult::default()
        }
    }

    #[test]
    fn results_become_problems_and_warnings() {
        assert!(problems(&ran()).is_empty());
        assert!(warnings(&ran()).is_empty());
        let wrong = TensorrtResult {
            max_error: Some(3.0),
            ..ran()
        };
        let p = problems(&wrong);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].exit_code(), crate::error::ExitCode::WrongResult);
        assert!(
            p[0].to_string()
                .starts_with("TensorRT engine (32x64 * 64x32 + bias) on GPU 0"),
            "{}",
            p[0]
        );
        let failed = TensorrtResult {
            error: Some("buildSerializedNetwork built no engine".into()),
            engine_built: Some(false),
            max_error: None,
            ..ran()
        };
        let p = problems(&failed);
        assert_eq!(p[0].exit_code(), crate::error::ExitCode::Failure);
        assert!(p[0].to_string().contains("TensorRT engine"), "{}", p[0]);
        let no_builder = TensorrtResult {
            builder: Some(false),
            error: Some("createInferBuilder returned no builder".into()),
            ..TensorrtResult::default()
        };
        assert!(
            problems(&TensorrtResult {
                device: Some(1),
                ..no_builder
            })[0]
                .to_string()
                .contains("TensorRT builder on GPU 1")
        );
        // Not knowing a layout is said, and is no failure.
        let unknown = TensorrtResult {
            version: Some("8.4.3".into()),
            device: Some(0),
            builder: Some(true),
            engine_note: plan(8403, true).engine.err(),
            ..TensorrtResult::default()
        };
        assert!(problems(&unknown).is_empty());
        assert_eq!(
            warnings(&unknown),
            [
                "TensorRT 8.4.3: engine check not available for TensorRT 8.4: it needs \
                 enqueueV3 and named tensor addresses (TensorRT 8.5 and later)"
            ]
        );
    }

    #[test]
    fn each_outcome_has_its_line() {
        assert_eq!(
            render_line(&ran()),
            "TensorRT 8.6.0: engine 32x64 * 64x32 + bias built in 812 ms, run on GPU 0: exact  ok"
        );
        assert_eq!(
            render_line(&TensorrtResult {
                max_error: Some(f64::INFINITY),
                ..ran()
            }),
            "TensorRT 8.6.0: WRONG RESULT: engine 32x64 * 64x32 + bias on GPU 0, error inf \
             (expected exact)"
        );
        assert_eq!(
            render_line(&TensorrtResult {
                error: Some("enqueueV3 failed".into()),
                max_error: None,
                ..ran()
            }),
            "TensorRT 8.6.0: FAILED: enqueueV3 failed"
        );
        let builder_only = TensorrtResult {
            version: Some("8.4.3".into()),
            device: Some(0),
            builder: Some(true),
            engine_note: Some("engine check not available for TensorRT 8.4: …".into()),
            ..TensorrtResult::default()
        };
        assert_eq!(
            render_line(&builder_only),
            "TensorRT 8.4.3: builder created on GPU 0  ok; engine check not available for \
             TensorRT 8.4: …"
        );
        assert_eq!(
            render_line(&TensorrtResult {
                builder: None,
                engine_note: Some("builder and engine checks not available …".into()),
                ..builder_only.clone()
            }),
            "TensorRT 8.4.3: version only; builder and engine checks not available …"
        );
        assert_eq!(
            render_line(&TensorrtResult {
                engine_note: None,
                ..builder_only.clone()
            }),
            "TensorRT 8.4.3: builder created on GPU 0  ok"
        );
        assert_eq!(
            render_line(&TensorrtResult {
                device: None,
                builder: None,
                engine_note: None,
                ..builder_only
            }),
            "TensorRT 8.4.3: version only (no GPU to run on)"
        );
    }

    /// Reports written before the engine check still read.
    #[test]
    fn a_result_without_the_engine_fields_reads() {
        let old: TensorrtResult = serde_json::from_str(
            r#"{"version": "8.6.0", "device": 0, "builder": true, "error": null}"#,
        )
        .unwrap();
        assert_eq!(old.engine_built, None);
        assert_eq!(
            render_line(&old),
            "TensorRT 8.6.0: builder created on GPU 0  ok"
        );
    }
}
