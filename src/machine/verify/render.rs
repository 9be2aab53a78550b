//! The human-readable report: facts first, then one line per check.
//!
//! Plain text with aligned columns and no colour (it is data on stdout); the
//! problems and hints are printed separately, on stderr, by the CLI.

use std::fmt::Write;

use super::{LibraryFacts, Origin, Outcome, Probe, Verification};

const GIB: f64 = (1u64 << 30) as f64;

fn sci(x: Option<f64>) -> String {
    x.map_or_else(|| "NaN".into(), |e| format!("{e:.1e}"))
}

fn library_line(out: &mut String, l: &LibraryFacts) {
    let version = l.version.as_deref().unwrap_or("-");
    match (&l.soname, &l.path) {
        (Some(_), Some(path)) => {
            let flag = match l.origin {
                Some(Origin::Outside) => "  [outside the version]",
                _ => "",
            };
            let _ = writeln!(
                out,
                "  {:<9} {:<8} {}{flag}",
                l.name,
                version,
                path.display()
            );
        }
        (Some(soname), None) => {
            let _ = writeln!(
                out,
                "  {:<9} {:<8} {soname} (file unknown)",
                l.name, version
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "  {:<9} {:<8} not found (tried {})",
                l.name,
                "-",
                l.tried.join(", ")
            );
        }
    }
}

pub fn render(v: &Verification) -> String {
    let mut out = String::new();
    let p = &v.probe;
    version_line(&mut out, v);
    machine_lines(&mut out, p);
    let _ = writeln!(out, "libraries");
    for l in &p.libraries {
        library_line(&mut out, l);
    }
    gemm_lines(&mut out, p);
    conv_lines(&mut out, p);
    beside_toolkit_lines(&mut out, p);
    cpu_line(&mut out, p);
    out
}

/// The version under test, its stack and why it was selected.
fn version_line(out: &mut String, v: &Verification) {
    let mut stack = Vec::new();
    if let Some(c) = &v.cuda {
        stack.push(format!("CUDA {c}"));
    }
    if let Some(c) = &v.cudnn {
        stack.push(format!("cuDNN {c}"));
    }
    let _ = writeln!(
        out,
        "version   {}{} (selected by {})",
        v.version,
        if stack.is_empty() {
            String::new()
        } else {
            format!(": {}", stack.join(", "))
        },
        v.selected_by
    );
}

/// The driver, the runtime and each GPU.
fn machine_lines(out: &mut String, p: &Probe) {
    match (p.driver.unusable(), &p.driver.version) {
        (Some(_), _) => {
            let _ = writeln!(
                out,
                "driver    not found ({} does not load)",
                crate::machine::libcuda::file_name()
            );
        }
        (None, version) => {
            let _ = writeln!(
                out,
                "driver    {}, supports CUDA {}{}",
                version.as_deref().unwrap_or("version unknown"),
                p.driver
                    .driver_api
                    .map_or_else(|| "?".into(), |c| super::probe::api_version(c).to_string()),
                p.driver
                    .path
                    .as_ref()
                    .map(|l| format!("  {l}"))
                    .unwrap_or_default()
            );
        }
    }
    let runtime = match (&p.runtime.version, p.runtime.device_count, &p.runtime.error) {
        (None, _, _) => "not loaded".to_string(),
        (Some(r), Some(n), _) => format!("CUDA {r}, {n} GPU{}", if n == 1 { "" } else { "s" }),
        // No driver: the runtime's own complaint (cudaErrorInsufficientDriver,
        // "driver version is insufficient") would say it a second time, and
        // wrongly suggest a driver too old rather than none.
        (Some(r), None, Some(_)) if p.driver.unusable().is_some() => format!("CUDA {r}"),
        (Some(r), None, Some(e)) => format!("CUDA {r}, {}", e),
        (Some(r), None, None) => format!("CUDA {r}"),
    };
    let _ = writeln!(out, "runtime   {runtime}");
    for d in &p.devices {
        let _ = writeln!(
            out,
            "GPU {:<5} {}, compute capability {}, {:.1} GiB, {} SMs",
            d.index,
            d.name,
            d.cc_string(),
            d.memory_bytes as f64 / GIB,
            d.multiprocessors
        );
    }
}

/// The GEMMs, one heading per GPU and one line per dtype.
fn gemm_lines(out: &mut String, p: &Probe) {
    let mut device = None;
    for g in &p.gemm {
        if device != Some(g.device) {
            device = Some(g.device);
            let _ = writeln!(out, "GEMM {n}x{n}x{n} on GPU {}", g.device, n = g.size);
        }
        let line = match g.outcome {
            Outcome::Passed => format!(
                "{:>8.1} TFLOP/s  {:>7.2} ms (median of {:>2})  error {} <= {:.0e}  ok",
                g.tflops.unwrap_or(0.0),
                g.median_ms.unwrap_or(0.0),
                g.repeats,
                sci(g
                    .max_error
                    .into_iter()
                    .chain(g.checksum_error)
                    .reduce(f64::max)),
                g.bound
            ),
            Outcome::WrongResult => format!(
                "WRONG RESULT: error {} (checksums {}) > {:.0e}{}",
                sci(g.max_error),
                sci(g.checksum_error),
                g.bound,
                if g.non_finite {
                    ", NaN/inf in the result"
                } else {
                    ""
                }
            ),
            Outcome::Error => format!(
                "FAILED: {}",
                g.error.as_ref().map_or_else(String::new, |e| e.to_string())
            ),
            Outcome::Skipped => format!("skipped: {}", g.note.as_deref().unwrap_or("")),
        };
        let _ = writeln!(out, "  {:<5}{line}", g.dtype.as_str());
    }
}

fn conv_lines(out: &mut String, p: &Probe) {
    for c in &p.cudnn_conv {
        let line = match c.outcome {
            Outcome::Passed => format!("error {} <= {:.0e}  ok", sci(c.max_error), c.bound),
            Outcome::WrongResult => {
                format!("WRONG RESULT: error {} > {:.0e}", sci(c.max_error), c.bound)
            }
            Outcome::Error => format!(
                "FAILED: {}",
                c.error.as_ref().map_or_else(String::new, |e| e.to_string())
            ),
            Outcome::Skipped => "skipped".into(),
        };
        let _ = writeln!(
            out,
            "cuDNN convolution {} on GPU {}: {line}",
            c.shape, c.device
        );
    }
}

/// NCCL and TensorRT, when the version carries them.
fn beside_toolkit_lines(out: &mut String, p: &Probe) {
    if let Some(n) = &p.nccl {
        let v = n.version.as_deref().unwrap_or("?");
        let line = match (&n.error, n.devices.is_empty()) {
            (Some(e), _) => format!("FAILED: {e}"),
            (None, true) => "version only (no GPU to run on)".into(),
            (None, false) if n.wrong > 0 => {
                format!("WRONG RESULT: {} of {} elements", n.wrong, n.checked)
            }
            (None, false) => format!(
                "all-reduce over GPUs {:?}, {} elements exact, {:.1} ms  ok",
                n.devices,
                n.checked,
                n.milliseconds.unwrap_or(0.0)
            ),
        };
        let _ = writeln!(out, "NCCL {v}: {line}");
    }
    if let Some(t) = &p.tensorrt {
        let _ = writeln!(out, "{}", super::tensorrt::render_line(t));
    }
}

/// The CPU GEMM, and how much faster each dtype ran on the GPU.
fn cpu_line(out: &mut String, p: &Probe) {
    if let Some(cpu) = &p.cpu_gemm {
        let best = |dtype: super::Dtype| {
            p.gemm
                .iter()
                .filter(|g| g.dtype == dtype && g.outcome == Outcome::Passed)
                .filter_map(|g| g.tflops)
                .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))))
        };
        let mut speedups = Vec::new();
        for dtype in super::Dtype::ALL {
            if let Some(t) = best(dtype) {
                speedups.push(format!("{dtype} {:.0}x", t * 1e3 / cpu.gflops));
            }
        }
        let _ = writeln!(
            out,
            "CPU GEMM  fp32 {n}x{n}x{n}, {} threads ({}): {:.0} GFLOP/s; GPU speed-up: {}",
            cpu.threads,
            cpu.isa,
            cpu.gflops,
            speedups.join(", "),
            n = cpu.size
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::verify::*;

    pub(crate) fn sample() -> Verification {
        let v = |s: &str| s.parse::<crate::spec::Version>().unwrap();
        let lib = |name: &str, version: &str, path: &str, origin| LibraryFacts {
            name: name.into(),
            tried: vec![],
            soname: Some(format!("lib{name}.so.13")),
            path: Some(path.into()),
            origin: Some(origin),
            version: Some(version.into()),
            error: None,
        };
        let gemm = |dtype: Dtype, tflops: f64, ms: f64, err: f64| GemmResult {
            device: 0,
            dtype,
            size: 8192,
            outcome: Outcome::Passed,
            max_error: Some(err),
            checksum_error: Some(err / 10.0),
            bound: dtype.bound(),
            samples: 256,
            non_finite: false,
            tflops: Some(tflops),
            median_ms: Some(ms),
            repeats: 7,
            error: None,
            note: None,
        };
        let mut wrong = gemm(Dtype::Bf16, 0.0, 0.0, 0.52);
        wrong.outcome = Outcome::WrongResult;
        wrong.tflops = None;
        Verification {
            version: "sys13".into(),
            selected_by: "the command line".into(),
            cuda: Some(v("13.0")),
            cudnn: Some(v("9.13.0")),
            size: 8192,
            probe: Probe {
                driver: driver::Probe {
                    loaded: true,
                    path: Some("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04".into()),
                    driver_api: Some(13000),
                    version: Some("580.159.04".into()),
                    gpus_present: Some(1),
                    ..driver::Probe::default()
                },
                runtime: RuntimeFacts {
                    version: Some(v("13.0")),
                    device_count: Some(1),
                    error: None,
                },
                libraries: vec![
                    lib(
                        "cudart",
                        "13.0",
                        "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96",
                        Origin::Version,
                    ),
                    lib(
                        "cublas",
                        "13.1.0",
                        "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13.1.0.3",
                        Origin::Version,
                    ),
                    lib(
                        "cudnn",
                        "9.13.0",
                        "/opt/venv/nvidia/cudnn/lib/libcudnn.so.9",
                        Origin::Outside,
                    ),
                    LibraryFacts {
                        name: "cublasLt".into(),
                        tried: vec!["libcublasLt.so.13".into()],
                        soname: None,
                        path: None,
                        origin: None,
                        version: None,
                        error: Some("not found".into()),
                    },
                ],
                devices: vec![DeviceFacts {
                    index: 0,
                    name: "NVIDIA H200".into(),
                    cc: 90,
                    memory_bytes: 150_110_011_392,
                    multiprocessors: 132,
                }],
                gemm: vec![
                    gemm(Dtype::Fp32, 50.9, 21.6, 1.2e-7),
                    gemm(Dtype::Fp16, 701.3, 1.57, 2.4e-4),
                    wrong,
                ],
                cudnn_conv: vec![ConvResult {
                    device: 0,
                    outcome: Outcome::Passed,
                    shape: "4x16x16x16 * 32x16x3x3, pad 1".into(),
                    algo: Some(1),
                    max_error: Some(3.0e-8),
                    bound: 5e-3,
                    error: None,
                    note: None,
                }],
                nccl: Some(super::super::libraries::NcclResult {
                    version: Some("2.21.5".into()),
                    devices: vec![0],
                    wrong: 0,
                    checked: 1 << 20,
                    error: None,
                    milliseconds: Some(0.4),
                }),
                tensorrt: Some(super::super::libraries::TensorrtResult {
                    version: Some("10.1.0".into()),
                    device: Some(0),
                    builder: Some(true),
                    engine_built: Some(true),
                    max_error: Some(0.0),
                    build_ms: Some(1234.5),
                    engine_note: None,
                    error: None,
                }),
                cpu_gemm: Some(CpuGemm {
                    size: 1024,
                    threads: 16,
                    isa: "avx2+fma".into(),
                    gflops: 250.0,
                    median_ms: 8.6,
                }),
                missing_device: None,
                cuda_visible_devices: None,
                seconds: 1.9,
                timings: vec![],
            },
            problems: vec![],
            warnings: vec![],
            passed: false,
            exit_code: 15,
            wall_seconds: 2.1,
        }
    }

    #[test]
    fn renders_the_report() {
        insta::assert_snapshot!(render(&sample()));
    }

    #[test]
    fn json_round_trips_and_keeps_its_shape() {
        let v = sample();
        let json = serde_json::to_string_pretty(&v).unwrap();
        // The probe's fields stand at the top level, and read back whole.
        let back: Probe = serde_json::from_str(&json).unwrap();
        assert_eq!(back, v.probe);
        insta::assert_snapshot!(json);
    }

    /// A libcuda lacking a function is written as one that does not load
    /// (its file kept), and reads back as the same probe.
    #[test]
    fn a_libcuda_lacking_a_function_is_written_as_a_load_error() {
        let mut v = sample();
        v.probe.driver = driver::Probe {
            loaded: true,
            path: Some("/usr/lib/libcuda.so.1".into()),
            incomplete: Some("undefined symbol: cuDeviceTotalMem_v2".into()),
            ..Default::default()
        };
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["driver"]["library"], "/usr/lib/libcuda.so.1");
        assert_eq!(
            json["driver"]["load_error"],
            "undefined symbol: cuDeviceTotalMem_v2"
        );
        let back: Probe = serde_json::from_value(json).unwrap();
        assert_eq!(back, v.probe);
        assert!(render(&v).contains("driver    not found"));
    }

    #[test]
    fn renders_no_driver() {
        let mut v = sample();
        v.probe = Probe::default();
        v.probe.driver.load_error = Some("libcuda.so.1: cannot open shared object file".into());
        v.probe.libraries.push(LibraryFacts {
            name: "cudart".into(),
            tried: vec!["libcudart.so.13".into()],
            soname: None,
            path: None,
            origin: None,
            version: None,
            error: Some("nope".into()),
        });
        let text = render(&v);
        assert!(text.contains("driver    not found"), "{text}");
        assert!(
            text.contains("cudart    -        not found (tried libcudart.so.13)"),
            "{text}"
        );
        assert!(!text.contains("GEMM"));
    }
}
