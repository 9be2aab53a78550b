//! `cudaenv verify` without a GPU, as CI runs it: the no-driver path for
//! real, with real ELF libraries for the loader to find.
//!
//! The libraries are tiny stand-ins compiled here with `cc`: they export
//! every entry point `verify` binds and report chosen versions, and the
//! runtime answers `cudaErrorInsufficientDriver` as the real one does when
//! `libcuda.so.1` is missing. Which copy the loader picked is told by the
//! version it reports. One test uses the real `libcudart` from PyPI.

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, assert_code, cc_shared, json, stderr, stdout};

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
pub(crate) fn stack(env: &TestEnv, name: &str) -> PathBuf {
    let prefix = env.path(name);
    let lib = prefix.join("lib64");
    stub_cudart(&lib, "libcudart.so.12.4.127", (12, 4));
    stub_cublas(&lib, 12);
    stub_cudnn(&lib, (9, 1, 0));
    version(env, name, &prefix, "12.4.1", Some("9.1.0"));
    prefix
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
    // With no driver, that is said once: the runtime's own complaint
    // (cudaErrorInsufficientDriver, "driver version is insufficient") is
    // not repeated before the error.
    assert!(text.contains("runtime   CUDA 12.4\n"), "{text}");
    assert!(
        !text.contains("Insufficient") && !err.contains("insufficient"),
        "{text}{err}"
    );
    let tmp = env.tmp.path().display().to_string();
    let lib_real = std::fs::canonicalize(env.tmp.path())
        .unwrap()
        .display()
        .to_string();
    insta::assert_snapshot!(
        "verify_no_driver",
        format!("--- stdout\n{text}--- stderr\n{err}")
            .replace(&lib_real, "[TMP]")
            .replace(&tmp, "[TMP]")
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

/// Whether `pid` is still a live member of `group` 5 s on: a process killed
/// with its group takes a moment to exit on a loaded machine, and one that
/// survives the kill is still there long after.
fn survives_in_group(pid: u32, group: u32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive_in_group(pid, group) {
        if std::time::Instant::now() > deadline {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
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
            !survives_in_group(child, child),
            "the check process {child} is still running"
        );
        assert!(
            !survives_in_group(helper, child),
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

/// A driver with one H200 (sm_90) that reports CUDA 13.0, as driver 580 does.
fn h200_libcuda(lib: &Path) {
    cc_shared(
        &lib.join("libcuda.so.1"),
        "libcuda.so.1",
        &format!(
            "#include <string.h>\n#include <stddef.h>\n\
             int cuInit(unsigned f) {{ return 0; }}\n\
             int cuDriverGetVersion(int *v) {{ *v = 13000; return 0; }}\n\
             int cuDeviceGetCount(int *n) {{ *n = 1; return 0; }}\n\
             int cuDeviceGet(int *d, int i) {{ *d = i; return 0; }}\n\
             int cuDeviceGetName(char *s, int n, int d) {{ strncpy(s, \"NVIDIA H200\", n); return 0; }}\n\
             int cuDeviceGetAttribute(int *v, int a, int d) {{ *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 132 : 0; return 0; }}\n\
             int cuDeviceTotalMem_v2(size_t *m, int d) {{ *m = (size_t)150 << 30; return 0; }}\n\
             int cuGetErrorName(int e, const char **s) {{ *s = \"CUDA_ERROR_UNKNOWN\"; return 0; }}\n{}",
            stubs(&["nvmlInit_v2"], 1)
        ),
    );
}

/// CUDA 11.2's runtime (soname `libcudart.so.11.0`) that sees one GPU, and a
/// cuBLAS 11 whose `cublasCreate` does what cuBLAS 11.4 does on an sm_90
/// GPU: the driver JIT-compiles its PTX, burning CPU and filling the compute
/// cache, for longer than the check may take.
fn cuda_11_2_stack_jit_compiling(lib: &Path) {
    let src = format!(
        "int cudaRuntimeGetVersion(int *v) {{ *v = 11020; return 0; }}\n\
         int cudaDriverGetVersion(int *v) {{ *v = 13000; return 0; }}\n\
         int cudaGetDeviceCount(int *n) {{ *n = 1; return 0; }}\n\
         int cudaSetDevice(int d) {{ return 0; }}\n\
         const char *cudaGetErrorName(int e) {{ return \"cudaErrorUnknown\"; }}\n\
         const char *cudaGetErrorString(int e) {{ return \"unknown error\"; }}\n{}",
        stubs(
            &[
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
            999
        )
    );
    cc_shared(
        &lib.join("libcudart.so.11.2.152"),
        "libcudart.so.11.0",
        &src,
    );
    std::os::unix::fs::symlink("libcudart.so.11.2.152", lib.join("libcudart.so.11.0")).unwrap();
    cc_shared(
        &lib.join("libcublasLt.so.11"),
        "libcublasLt.so.11",
        "#include <stddef.h>\nsize_t cublasLtGetVersion(void) { return 11401; }\n",
    );
    cc_shared(
        &lib.join("libcublas.so.11"),
        "libcublas.so.11",
        &format!(
            "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
             int cublasGetProperty(int t, int *v) {{ int p[3] = {{11, 4, 1}}; *v = p[t]; return 0; }}\n\
             int cublasCreate_v2(void **h) {{\n\
               char path[4096];\n\
               snprintf(path, sizeof path, \"%s/jit.bin\", getenv(\"CUDA_CACHE_PATH\"));\n\
               static char block[65536];\n\
               volatile unsigned long x = 0;\n\
               for (;;) {{\n\
                 for (unsigned long i = 0; i < 20000000UL; i++) x += i;\n\
                 FILE *f = fopen(path, \"ab\"); fwrite(block, 1, sizeof block, f); fclose(f);\n\
               }}\n\
             }}\n{}",
            stubs(
                &["cublasDestroy_v2", "cublasSetMathMode", "cublasGemmEx"],
                1
            )
        ),
    );
}

/// The guides' scenario on today's GPUs: CUDA 11.2 on an H200. verify says
/// so from the facts, before its first kernel; its cuBLAS call then runs
/// into the deadline, and the timeout names the call, the evidence (CPU
/// busy, compute cache growing) and what it means, instead of a hang; the
/// facts gathered before the deadline are kept in the report and `--json`.
#[test]
fn cuda_11_2_on_an_h200_is_diagnosed_before_its_slow_first_cublas_call() {
    let env = TestEnv::new();
    let prefix = env.path("cu112");
    let lib = prefix.join("lib64");
    h200_libcuda(&lib);
    cuda_11_2_stack_jit_compiling(&lib);
    version(&env, "cu112", &prefix, "11.2.2", None);
    let cache = env.path("ComputeCache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("old.bin"), vec![0u8; 19 << 20]).unwrap();
    for json_flag in [false, true] {
        let _ = std::fs::remove_file(cache.join("jit.bin"));
        let mut args = vec!["verify", "cu112", "--size", "64", "--timeout", "3"];
        if json_flag {
            args.push("--json");
        }
        let out = assert_cmd::Command::from_std(env.cmd())
            .env("CUDA_CACHE_PATH", &cache)
            .args(&args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let err = assert_code(&out, 18, &args.join(" "));
        let predates = "GPU 0 (NVIDIA H200, sm_90) is newer than CUDA 11.2: the stack has no \
                        native code for it, only PTX that the driver must JIT-compile (if the \
                        libraries carry PTX at all)";
        // Said first, while the checks still ran …
        let warned = err
            .find(&format!("warning: {predates}; running the checks anyway"))
            .unwrap_or_else(|| panic!("no early diagnosis:\n{err}"));
        // … then as the first problem, with the CUDA and framework releases to use.
        let first = err
            .find(&format!("error: {predates}"))
            .unwrap_or_else(|| panic!("{err}"));
        let stopped = err
            .find(
                "error: the verification process did not finish within 3 s; \
                 it was stopped while cublasCreate on GPU 0",
            )
            .unwrap_or_else(|| panic!("{err}"));
        assert!(warned < first && first < stopped, "{err}");
        assert!(
            err.contains("hint: use CUDA 11.8 or newer, the first with native sm_90 code (`cudaenv install 11.8`), and a framework built for it: TensorFlow 2."),
            "{err}"
        );
        assert!(err.contains("PyTorch 2.1 (CUDA 11.8)"), "{err}");
        assert!(
            err.contains("hint: `cublasCreate on GPU 0` was slow, not stuck: the process used "),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "the driver's compute cache ({}) grew from 20 MB to ",
                cache.display()
            )),
            "{err}"
        );
        assert!(
            err.contains(
                "CUDA 11.2 has no sm_90 code, so the driver JIT-compiles cuBLAS 11.4.1's PTX"
            ),
            "{err}"
        );
        assert!(
            err.contains("CUDA_CACHE_MAXSIZE, 256 MiB by default")
                && err.contains("CUDA_CACHE_MAXSIZE=4294967296"),
            "{err}"
        );
        assert!(!err.contains("every CUDA program"), "{err}");
        if json_flag {
            let v = json(&out);
            assert_eq!(v["exit_code"], 18);
            assert_eq!(kinds(&v), ["ptx_jit_only", "timed_out"]);
            // What was learned before the deadline is kept.
            assert_eq!(v["driver"]["cuda"], "13.0");
            assert_eq!(v["runtime"]["version"], "11.2");
            assert_eq!(v["runtime"]["device_count"], 1);
            assert_eq!(v["devices"][0]["name"], "NVIDIA H200");
            assert_eq!(v["devices"][0]["cc"], 90);
            assert_eq!(library(&v, "cublas")["version"], "11.4.1");
            // cuBLASLt 11 encodes its version as major*1000 (11401), 12 as major*10000.
            assert_eq!(library(&v, "cublasLt")["version"], "11.4.1");
            assert_eq!(library(&v, "cudart")["origin"], "version");
            let last = v["timings"].as_array().unwrap().last().unwrap().clone();
            assert_eq!(last["stage"], "cublasCreate on GPU 0", "{v}");
        } else {
            let text = stdout(&out);
            assert!(text.contains("NVIDIA H200"), "{text}");
        }
    }
}

/// Results are streamed as they come: a GEMM that fails is kept in the
/// report when the next one hangs, and an idle hang outside `cuInit` is
/// said to be waiting, not computing.
#[test]
fn a_gemm_result_survives_a_later_gemm_that_hangs() {
    let env = TestEnv::new();
    let prefix = env.path("cu124");
    let lib = prefix.join("lib64");
    h200_libcuda(&lib);
    cc_shared(
        &lib.join("libcudart.so.12.4.127"),
        "libcudart.so.12",
        &format!(
            "#include <stddef.h>\n\
             int cudaRuntimeGetVersion(int *v) {{ *v = 12040; return 0; }}\n\
             int cudaDriverGetVersion(int *v) {{ *v = 13000; return 0; }}\n\
             int cudaGetDeviceCount(int *n) {{ *n = 1; return 0; }}\n\
             int cudaMalloc(void **p, size_t n) {{ *p = (void *)0x1000; return 0; }}\n\
             const char *cudaGetErrorName(int e) {{ return \"cudaErrorUnknown\"; }}\n\
             const char *cudaGetErrorString(int e) {{ return \"unknown error\"; }}\n{}",
            stubs(
                &[
                    "cudaSetDevice",
                    "cudaDeviceGetAttribute",
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
                0
            )
        ),
    );
    std::os::unix::fs::symlink("libcudart.so.12.4.127", lib.join("libcudart.so.12")).unwrap();
    cc_shared(
        &lib.join("libcublasLt.so.12"),
        "libcublasLt.so.12",
        "#include <stddef.h>\nsize_t cublasLtGetVersion(void) { return 120405; }\n",
    );
    cc_shared(
        &lib.join("libcublas.so.12"),
        "libcublas.so.12",
        &format!(
            "#include <unistd.h>\n\
             int cublasGetProperty(int t, int *v) {{ int p[3] = {{12, 4, 5}}; *v = p[t]; return 0; }}\n\
             int cublasGemmEx(void) {{ static int calls; if (calls++ == 0) return 13; for (;;) pause(); }}\n{}",
            stubs(
                &["cublasCreate_v2", "cublasDestroy_v2", "cublasSetMathMode"],
                0
            )
        ),
    );
    version(&env, "cu124", &prefix, "12.4.1", None);
    let out = assert_cmd::Command::from_std(env.cmd())
        .args([
            "verify",
            "cu124",
            "--size",
            "64",
            "--timeout",
            "3",
            "--json",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let v = json(&out);
    let err = stderr(&out);
    assert_eq!(v["gemm"][0]["dtype"], "fp32", "{v}");
    assert_eq!(v["gemm"][0]["outcome"], "error", "{v}");
    assert_eq!(v["gemm"][0]["error"]["call"], "cublasGemmEx", "{v}");
    assert_eq!(v["gemm"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        kinds(&v).last().map(String::as_str),
        Some("timed_out"),
        "{v}"
    );
    assert!(
        err.contains("it was stopped while GEMM tf32 64x64x64 on GPU 0"),
        "{err}"
    );
    assert!(
        err.contains("hint: `GEMM tf32 64x64x64 on GPU 0` did not return and the process was idle"),
        "{err}"
    );
    assert!(!err.contains("every CUDA program"), "{err}");
}
