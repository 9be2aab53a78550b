//! `cudaenv verify` without a GPU, as CI runs it: the no-driver path for
//! real, with real ELF libraries for the loader to find.
//!
//! The libraries are tiny stand-ins compiled here with `cc`: they export
//! every entry point `verify` binds and report chosen versions, and the
//! runtime answers `cudaErrorInsufficientDriver` as the real one does when
//! `libcuda.so.1` is missing. Which copy the loader picked is told by the
//! version it reports. One test uses the real `libcudart` from PyPI.

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, assert_code, cc_shared, stderr, stdout};

fn stubs(names: &[&str], ret: i32) -> String {
    names
        .iter()
        .map(|n| format!("int {n}(void) {{ return {ret}; }}\n"))
        .collect()
}

/// A libcudart reporting `cuda` (`12.4` → 12040) that finds no driver.
fn stub_cudart(lib: &Path, file: &str, cuda: (u32, u32)) {
    let src = format!(
        "int cudaRuntimeGetVersion(int *v) {{ *v = {}; return 0; }}\n\
         int cudaDriverGetVersion(int *v) {{ *v = 0; return 0; }}\n\
         const char *cudaGetErrorName(int e) {{ return e == 35 ? \"cudaErrorInsufficientDriver\" : \"cudaErrorUnknown\"; }}\n\
         const char *cudaGetErrorString(int e) {{ return \"CUDA driver version is insufficient for CUDA runtime version\"; }}\n{}",
        cuda.0 * 1000 + cuda.1 * 10,
        stubs(
            &[
                "cudaGetDeviceCount",
                "cudaSetDevice",
                "cudaDeviceGetAttribute",
                "cudaMalloc",
                "cudaFree",
                "cudaMemcpy",
                "cudaMemset",
                "cudaDeviceSynchronize",
                "cudaEventCreate",
                "cudaEventDestroy",
                "cudaEventRecord",
                "cudaEventSynchronize",
                "cudaEventElapsedTime",
                "cudaGetLastError",
            ],
            35
        )
    );
    let soname = format!("libcudart.so.{}", cuda.0);
    cc_shared(&lib.join(file), &soname, &src);
    if file != soname {
        std::os::unix::fs::symlink(file, lib.join(&soname)).unwrap();
    }
}

fn stub_cublas(lib: &Path, major: u32) {
    cc_shared(
        &lib.join(format!("libcublasLt.so.{major}")),
        &format!("libcublasLt.so.{major}"),
        &format!(
            "#include <stddef.h>\nsize_t cublasLtGetVersion(void) {{ return {major}0405; }}\n"
        ),
    );
    cc_shared(
        &lib.join(format!("libcublas.so.{major}")),
        &format!("libcublas.so.{major}"),
        &format!(
            "int cublasGetProperty(int t, int *v) {{ int p[3] = {{{major}, 4, 5}}; *v = p[t]; return 0; }}\n{}",
            stubs(
                &[
                    "cublasCreate_v2",
                    "cublasDestroy_v2",
                    "cublasSetMathMode",
                    "cublasGemmEx"
                ],
                1
            )
        ),
    );
}

/// A libcudnn reporting `v` (`(9, 1, 0)` → 90100).
fn stub_cudnn(lib: &Path, v: (u32, u32, u32)) {
    cc_shared(
        &lib.join(format!("libcudnn.so.{}", v.0)),
        &format!("libcudnn.so.{}", v.0),
        &format!(
            "#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {}; }}\n\
             size_t cudnnGetCudartVersion(void) {{ return 12040; }}\n\
             const char *cudnnGetErrorString(int s) {{ return \"CUDNN_STATUS_NOT_INITIALIZED\"; }}\n{}",
            v.0 * 10000 + v.1 * 100 + v.2,
            stubs(
                &[
                    "cudnnCreate",
                    "cudnnDestroy",
                    "cudnnCreateTensorDescriptor",
                    "cudnnDestroyTensorDescriptor",
                    "cudnnSetTensor4dDescriptor",
                    "cudnnCreateFilterDescriptor",
                    "cudnnDestroyFilterDescriptor",
                    "cudnnSetFilter4dDescriptor",
                    "cudnnCreateConvolutionDescriptor",
                    "cudnnDestroyConvolutionDescriptor",
                    "cudnnSetConvolution2dDescriptor",
                    "cudnnSetConvolutionMathType",
                    "cudnnGetConvolution2dForwardOutputDim",
                    "cudnnGetConvolutionForwardWorkspaceSize",
                    "cudnnConvolutionForward",
                ],
                1
            )
        ),
    );
}

/// Records a linked version `name` whose libraries are in `prefix/lib64`.
fn version(env: &TestEnv, name: &str, prefix: &Path, cuda: &str, cudnn: Option<&str>) {
    let dir = env.root.join("versions").join(name).join(".cudaenv");
    std::fs::create_dir_all(&dir).unwrap();
    let cudnn = cudnn
        .map(|c| format!("cudnn = \"{c}\"\n"))
        .unwrap_or_default();
    std::fs::write(
        dir.join("meta.toml"),
        format!(
            "schema = 1\nkind = \"linked\"\ncuda = \"{cuda}\"\n{cudnn}prefix = \"{}\"\n\
             lib_dirs = [\"lib64\"]\nsource = \"link\"\ncreated = 0\n",
            prefix.display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("complete"), "").unwrap();
}

/// A full stand-in stack: cudart 12.4, cuBLAS 12, cuDNN 9.1.
fn stack(env: &TestEnv, name: &str) -> PathBuf {
    let prefix = env.path(name);
    let lib = prefix.join("lib64");
    stub_cudart(&lib, "libcudart.so.12.4.127", (12, 4));
    stub_cublas(&lib, 12);
    stub_cudnn(&lib, (9, 1, 0));
    version(env, name, &prefix, "12.4.1", Some("9.1.0"));
    prefix
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", stdout(out), stderr(out)))
}

fn library<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

fn kinds(v: &serde_json::Value) -> Vec<String> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn no_driver_is_said_plainly_and_everything_else_is_still_reported() {
    let env = TestEnv::new();
    let prefix = stack(&env, "stack");
    let out = env.run(&["verify", "stack"]);
    let err = assert_code(&out, 10, "verify without a driver");
    assert!(
        err.contains("error: no NVIDIA driver: libcuda.so.1 could not be loaded"),
        "{err}"
    );
    assert!(
        err.contains("hint: on a machine with an NVIDIA GPU, install NVIDIA's driver"),
        "{err}"
    );
    // Only the driver is a problem: every library came from the version.
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    let text = stdout(&out);
    assert!(text.contains("driver    not found"), "{text}");
    assert!(
        text.contains(
            "runtime   CUDA 12.4, cudaGetDeviceCount returned cudaErrorInsufficientDriver (35)"
        ),
        "{text}"
    );
    let lib = std::fs::canonicalize(prefix.join("lib64")).unwrap();
    assert!(
        text.contains(&format!(
            "cudart    12.4     {}",
            lib.join("libcudart.so.12.4.127").display()
        )),
        "{text}"
    );
    assert!(text.contains("cublas    12.4.5"), "{text}");
    assert!(text.contains("cudnn     9.1.0"), "{text}");
    assert!(
        !text.contains("GEMM"),
        "no GPU checks without a driver: {text}"
    );

    let out = env.run(&["verify", "stack", "--json"]);
    assert_code(&out, 10, "verify --json without a driver");
    let v = json(&out);
    assert_eq!(v["exit_code"], 10);
    assert_eq!(v["passed"], false);
    assert_eq!(kinds(&v), ["no_driver"]);
    assert!(
        v["driver"]["load_error"]
            .as_str()
            .unwrap()
            .contains("libcuda.so.1")
    );
    assert_eq!(v["runtime"]["version"], "12.4");
    assert_eq!(v["runtime"]["error"]["code"], 35);
    for name in ["cudart", "cublasLt", "cublas", "cudnn"] {
        assert_eq!(library(&v, name)["origin"], "version", "{name}: {v}");
    }
    assert_eq!(library(&v, "cudnn")["version"], "9.1.0");
}

#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn a_stale_cudart_on_ld_library_path_loses_to_the_version_and_is_flagged_when_it_wins() {
    let env = TestEnv::new();
    stack(&env, "stack");
    let stale = env.path("stale");
    stub_cudart(&stale, "libcudart.so.12", (12, 2));

    // Activation puts the version's directory first: the stale copy is not used.
    let out = env
        .cmd()
        .args(["verify", "stack", "--json"])
        .env("LD_LIBRARY_PATH", &stale)
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(library(&v, "cudart")["version"], "12.4", "{v}");
    assert_eq!(library(&v, "cudart")["origin"], "version");

    // A version that lacks cudart: the loader finds the stale one; both the
    // shadowing and the version skew are named.
    let prefix = env.path("nocudart");
    stub_cublas(&prefix.join("lib64"), 12);
    stub_cudnn(&prefix.join("lib64"), (9, 1, 0));
    version(&env, "nocudart", &prefix, "12.4.1", Some("9.1.0"));
    let out = env
        .cmd()
        .args(["verify", "nocudart", "--json"])
        .env("LD_LIBRARY_PATH", &stale)
        .output()
        .unwrap();
    let v = json(&out);
    let cudart = library(&v, "cudart");
    assert_eq!(cudart["origin"], "outside", "{v}");
    assert_eq!(cudart["version"], "12.2");
    assert!(cudart["path"].as_str().unwrap().contains("/stale/"), "{v}");
    assert_eq!(
        kinds(&v),
        ["no_driver", "library_shadowed", "library_mismatch"],
        "{v}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("cudart was loaded from") && err.contains("outside version `nocudart`"),
        "{err}"
    );
    assert!(
        err.contains("cudart 12.2 was loaded, but version `nocudart` records 12.4"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn a_library_missing_from_the_version_is_named_with_the_sonames_tried() {
    let env = TestEnv::new();
    let prefix = env.path("partial");
    stub_cudart(&prefix.join("lib64"), "libcudart.so.12", (12, 4));
    version(&env, "partial", &prefix, "12.4.1", Some("9.1.0"));
    let out = env.run(&["verify", "partial", "--json"]);
    assert_code(&out, 10, "verify of a partial version");
    let v = json(&out);
    assert_eq!(
        kinds(&v),
        [
            "no_driver",
            "library_missing",
            "library_missing",
            "library_missing"
        ],
        "{v}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("cublas could not be loaded for version `partial` (tried libcublas.so.12)"),
        "{err}"
    );
    assert!(
        err.contains("cudnn could not be loaded for version `partial` (tried libcudnn.so.9)"),
        "{err}"
    );
}

#[test]
fn arguments_are_checked_before_anything_runs() {
    let env = TestEnv::new();
    for (args, what) in [
        (&["verify", "--size", "7"][..], "multiple of 8"),
        (&["verify", "--size", "1000000"][..], "multiple of 8"),
        (&["verify", "--dtype", "fp8"][..], "unknown dtype `fp8`"),
        (&["verify", "--device", "first"][..], "not a GPU index"),
        (&["verify", "--timeout", "0"][..], "from 1 to 86400"),
        (
            &["verify", "--timeout", "soon"][..],
            "whole number of seconds",
        ),
    ] {
        let err = assert_code(&env.run(args), 2, &args.join(" "));
        assert!(err.contains(what), "{args:?}: {err}");
    }
    let err = assert_code(
        &env.run(&["verify", "12.8"]),
        3,
        "verify of a missing version",
    );
    assert!(err.contains("12.8"), "{err}");
}

/// A `libcuda.so.1` whose `cuInit` never returns, as a wedged driver's does.
/// It first forks a helper (as drivers start daemons) that also waits forever
/// and holds the child's stdout/stderr, then writes both pids to `pids`.
fn hanging_libcuda(lib: &Path, pids: &Path) {
    let path = pids
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    cc_shared(
        &lib.join("libcuda.so.1"),
        "libcuda.so.1",
        &format!(
            "#include <stdio.h>\n#include <unistd.h>\n\
             int cuInit(unsigned f) {{\n\
               pid_t helper = fork();\n\
               if (helper == 0) {{ for (;;) pause(); }}\n\
               FILE *o = fopen(\"{path}\", \"w\");\n\
               fprintf(o, \"%d %d\\n\", (int)getpid(), (int)helper);\n\
               fclose(o);\n\
               for (;;) pause();\n\
             }}\n\
             int cuDriverGetVersion(int *v) {{ *v = 13000; return 0; }}\n\
             int cuGetErrorName(int e, const char **s) {{ *s = \"CUDA_ERROR_UNKNOWN\"; return 0; }}\n{}",
            stubs(
                &[
                    "cuDeviceGetCount",
                    "cuDeviceGet",
                    "cuDeviceGetName",
                    "cuDeviceGetAttribute",
                    "cuDeviceTotalMem_v2",
                ],
                999
            )
        ),
    );
}

/// True while `pid` is a live (not zombie) member of process group `group`:
/// a recycled pid in another group does not count.
fn alive_in_group(pid: u32, group: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) state ppid pgrp …`; comm may hold spaces, so split after `)`.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    !matches!(fields[0], "Z" | "X") && fields[2] == group.to_string()
}

/// A driver that hangs in `cuInit` must not hang `verify`: the child is
/// killed with everything it started, and the cause is named.
#[test]
fn a_driver_hanging_in_cuinit_is_stopped_by_the_timeout() {
    let env = TestEnv::new();
    let prefix = stack(&env, "stack");
    let pids = env.path("pids");
    hanging_libcuda(&prefix.join("lib64"), &pids);
    for json_flag in [false, true] {
        let _ = std::fs::remove_file(&pids);
        let mut args = vec!["verify", "stack", "--timeout", "2"];
        if json_flag {
            args.push("--json");
        }
        // A safety net, not a measurement: if the fix regresses, the test
        // fails (killed, no exit code) instead of hanging the suite.
        let out = assert_cmd::Command::from_std(env.cmd())
            .args(&args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let err = assert_code(&out, 17, &args.join(" "));
        assert!(
            err.contains(
                "error: the verification process did not finish within 2 s; \
                 it was stopped while cuInit"
            ),
            "{err}"
        );
        assert!(
            err.contains("hint: the driver hangs in its initialisation (cuInit)"),
            "{err}"
        );
        assert!(err.contains("--timeout SECS"), "{err}");
        if json_flag {
            let v = json(&out);
            assert_eq!(v["exit_code"], 17);
            assert_eq!(v["passed"], false);
            assert_eq!(kinds(&v), ["timed_out"]);
        }
        // The stand-in got as far as cuInit, and neither it nor its helper survived.
        let text = std::fs::read_to_string(&pids).expect("cuInit was reached");
        let ids: Vec<u32> = text
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        let [child, helper] = ids[..] else {
            panic!("bad pid file: {text}")
        };
        assert!(
            !alive_in_group(child, child),
            "the check process {child} is still running"
        );
        assert!(
            !alive_in_group(helper, child),
            "its helper {helper} is still running"
        );
    }
}

/// The real runtime from PyPI, on a machine without a driver: it loads from
/// the version, reports 12.4, and says the driver is missing.
#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn live_pypi_cudart_without_a_driver() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "12.4.1",
        "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti",
    ]);
    assert_code(&o, 0, "install 12.4.1 (cudart only)");
    let out = env.run(&["verify", "12.4.1", "--json"]);
    assert_code(&out, 10, "verify 12.4.1");
    let v = json(&out);
    let cudart = library(&v, "cudart");
    assert_eq!(cudart["version"], "12.4");
    assert_eq!(cudart["origin"], "version");
    assert!(
        cudart["path"]
            .as_str()
            .unwrap()
            .contains("/versions/12.4.1/"),
        "{v}"
    );
    assert_eq!(v["runtime"]["error"]["name"], "cudaErrorInsufficientDriver");
    assert_eq!(kinds(&v)[0], "no_driver");
    assert!(
        kinds(&v).contains(&"library_missing".to_string()),
        "cuBLAS was left out: {v}"
    );
}
