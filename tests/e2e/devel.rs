//! A PyPI devel stack is a working toolkit: installed from live PyPI, its
//! `nvcc` compiles and links a CUDA program, CMake's CUDA language and
//! `FindCUDAToolkit` find the stack and build a target, and the glibc loader
//! resolves the runtime into the stack. No GPU is needed for any of it; the
//! program itself reports "no device" here (exit 3) and runs on a GPU machine.
//!
//! Downloads (x86_64, 13.5.0): nvcc 47 MB, nvvm 75 MB, cccl 4 MB, cudart
//! 2.5 MB, crt 0.2 MB. cuBLAS (440 MB) and the other libraries are left out.

use std::path::Path;

use crate::common::{TestEnv, text};

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/devel");

/// 13.x's runtime profile but cudart.
const RUNTIME_BUT_CUDART: &str =
    "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti";
/// 13.x's devel additions but the compiler (nvcc, crt, nvvm) and cccl.
const DEVEL_TOOLS: &str = "--without=culibos,profiler_api,nvtx,nvml_dev,cuobjdump,nvdisasm,nvprune,cuxxfilt,nvptxcompiler,nvfatbin";

fn exec(env: &TestEnv, cwd: &Path, version: &str, cmd: &[&str]) -> std::process::Output {
    env.cmd()
        .current_dir(cwd)
        .args(["exec", "--version", version, "--"])
        .args(cmd)
        .output()
        .unwrap()
}

#[test]
fn pypi_13_devel_stack_compiles_links_and_builds_with_cmake() {
    let env = TestEnv::new();
    // A runtime install first; `--profile devel` then adds the compiler to it.
    let o = env.run(&["install", "13.5.0", "--source", "pypi", RUNTIME_BUT_CUDART]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = env.run(&[
        "install",
        "13.5.0",
        "--source",
        "pypi",
        "--profile",
        "devel",
        RUNTIME_BUT_CUDART,
        DEVEL_TOOLS,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains(
            "adding cccl, crt, nvcc, nvvm to 13.5.0 (installed with the runtime profile)"
        ),
        "{}",
        text(&o)
    );
    let v = env.root.join("versions/13.5.0");

    // The layout NVIDIA's tools expect.
    for f in [
        "bin/nvcc",
        "bin/ptxas",
        "bin/cudafe++",
        "bin/fatbinary",
        "bin/nvlink",
        "bin/nvcc.profile",
        "bin/crt/link.stub",
        "nvvm/bin/cicc",
        "nvvm/libdevice/libdevice.10.bc",
        "include/cuda_runtime.h",
        "include/crt/host_config.h",
        "include/cccl/cuda/std/version",
        "lib64/libcudart.so.13",
        "lib64/libcudart_static.a",
    ] {
        assert!(v.join(f).exists(), "{f} missing in {}", v.display());
    }
    assert_eq!(
        std::fs::read_link(v.join("lib64/libcudart.so")).unwrap(),
        Path::new("libcudart.so.13")
    );
    let profile = std::fs::read_to_string(v.join("bin/nvcc.profile")).unwrap();
    assert!(profile.contains("$(TOP)/nvvm/bin") && profile.contains("$(TOP)/nvvm/libdevice"));

    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(format!("{FIXTURES}/add.cu"), work.join("add.cu")).unwrap();
    std::fs::copy(
        format!("{FIXTURES}/CMakeLists.txt"),
        work.join("CMakeLists.txt"),
    )
    .unwrap();

    // nvcc, from the shims' PATH: compiles device code (cicc, ptxas,
    // fatbinary) and links against the stack's shared runtime.
    let o = exec(&env, &work, "13.5.0", &["nvcc", "--version"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("release 13.5"), "{}", text(&o));
    let o = exec(
        &env,
        &work,
        "13.5.0",
        &[
            "nvcc",
            "-arch=sm_90",
            "-cudart",
            "shared",
            "-o",
            "add",
            "add.cu",
        ],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));

    // The loader resolves the runtime into the stack when it is active, and
    // not otherwise (nothing was written outside the root).
    let o = exec(&env, &work, "13.5.0", &["ldd", "./add"]);
    let want = format!(
        "libcudart.so.13 => {}",
        v.join("lib64/libcudart.so.13").display()
    );
    assert!(text(&o).contains(&want), "{}", text(&o));
    let o = std::process::Command::new("ldd")
        .arg(work.join("add"))
        .output()
        .unwrap();
    assert!(
        text(&o).contains("libcudart.so.13 => not found"),
        "{}",
        text(&o)
    );
    let o = exec(&env, &work, "13.5.0", &["./add"]);
    assert!(text(&o).contains("runtime 13050"), "{}", text(&o));
    // No GPU here: the runtime starts and finds no device.
    assert!(matches!(code(&o), 0 | 3), "{}", text(&o));

    // CMake: the CUDA language finds the stack's nvcc, FindCUDAToolkit the
    // stack itself, and the target links the stack's runtime.
    let o = exec(&env, &work, "13.5.0", &["cmake", "-S", ".", "-B", "build"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "cudaenv-test: toolkit 13.5.37 bin {} cudart {}",
            v.join("bin").display(),
            v.join("lib/libcudart.so").display()
        )),
        "{t}"
    );
    let o = exec(&env, &work, "13.5.0", &["cmake", "--build", "build"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = exec(&env, &work, "13.5.0", &["ldd", "build/add"]);
    assert!(text(&o).contains(&want), "{}", text(&o));
}

/// CUDA 12's PyPI compiler wheel (`nvidia-cuda-nvcc-cu12`) has `ptxas`,
/// libdevice, libNVVM and the `crt` headers but no `nvcc` and no `cicc`
/// (NVIDIA's redist has those). What it has is laid out where the tools
/// look, and works: `ptxas` assembles PTX into a cubin. (~45 MB from PyPI.)
#[test]
fn pypi_12_devel_stack_has_a_working_ptxas_and_says_nvcc_is_missing() {
    let env = TestEnv::new();
    let o = env.run(&[
        "install",
        "12.9.1",
        "--source",
        "pypi",
        "--profile",
        "devel",
        RUNTIME_BUT_CUDART,
        "--without=culibos,profiler_api,nvtx,nvml_dev,cuobjdump,nvdisasm,nvprune,cuxxfilt,nvptxcompiler,nvfatbin",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("ship only ptxas and NVVM, not the nvcc driver"),
        "{}",
        text(&o)
    );
    let v = env.root.join("versions/12.9.1");
    for f in [
        "bin/ptxas",
        "nvvm/libdevice/libdevice.10.bc",
        "nvvm/lib64/libnvvm.so",
        "include/crt/host_config.h",
        "include/cuda_runtime.h",
        "lib64/libcudart.so.12",
    ] {
        assert!(v.join(f).exists(), "{f} missing in {}", v.display());
    }
    assert!(!v.join("bin/nvcc").exists());
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("noop.ptx"),
        ".version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry noop()\n{\n\tret;\n}\n",
    )
    .unwrap();
    let o = exec(
        &env,
        &work,
        "12.9.1",
        &["ptxas", "-arch=sm_80", "noop.ptx", "-o", "noop.cubin"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let cubin = std::fs::read(work.join("noop.cubin")).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF", "a cubin is an ELF file");
}
