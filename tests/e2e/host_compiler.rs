//! The host-compiler setting against a real nvcc: Debian bookworm's CUDA
//! 11.8 (`nvidia-cuda-toolkit` and `nvidia-cuda-dev`, 84 MB and 774 MB from
//! deb.debian.org, unpacked with dpkg-deb; with a CUDA 11.8 runtime from
//! PyPI, linked as a version), whose
//! nvcc accepts GCC up to 11. This machine's default g++ is Debian 12's
//! GCC 12, so the same `nvcc -c` fails without the setting and builds with
//! `CUDAENV_HOST_COMPILER=auto` (Debian's g++-11, which scripts/test.sh
//! installs) or a named compiler.
//!
//! Debian's own `gcc`/`g++` wrappers (which pick g++-11 themselves) are left
//! out of the tree, and nvcc.profile points at the tree, as an NVIDIA
//! toolkit's does.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{TestEnv, text};

const POOL: &str = "http://deb.debian.org/debian/pool/non-free/n/nvidia-cuda-toolkit";
const DEBS: &[&str] = &[
    "nvidia-cuda-toolkit_11.8.89~11.8.0-5~deb12u1_amd64.deb",
    "nvidia-cuda-dev_11.8.89~11.8.0-5~deb12u1_amd64.deb",
];

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Downloads and unpacks the two packages; returns the tree to link, whose
/// `lib64` is a CUDA 11.8 runtime cudaenv installed from PyPI (Debian's
/// `libcudart11.0` package is 200 MB; the wheel is 1 MB).
fn debian_cuda_11_8(env: &TestEnv) -> PathBuf {
    let tmp = env.tmp.path();
    let o = env.run(&[
        "install",
        "11.8",
        "--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,cupti",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let runtime = std::fs::read_dir(env.root.join("versions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("11.8"))
        })
        .unwrap();
    let x = tmp.join("debian");
    std::fs::create_dir_all(&x).unwrap();
    for deb in DEBS {
        let file = tmp.join(deb);
        let ok = Command::new("curl")
            .args(["-sSf", "--retry", "3", "-o"])
            .arg(&file)
            .arg(format!("{POOL}/{deb}"))
            .status()
            .unwrap();
        assert!(ok.success(), "downloading {deb}");
        let ok = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&file)
            .arg(&x)
            .status()
            .unwrap();
        assert!(ok.success(), "unpacking {deb}");
    }
    let tree = tmp.join("cuda-11.8");
    let bin = tree.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tk = x.join("usr/lib/nvidia-cuda-toolkit");
    for f in ["nvcc", "cicc", "crt"] {
        std::os::unix::fs::symlink(tk.join("bin").join(f), bin.join(f)).unwrap();
    }
    for f in ["cudafe++", "ptxas", "fatbinary", "nvlink", "bin2c"] {
        std::os::unix::fs::symlink(x.join("usr/bin").join(f), bin.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(x.join("usr/include"), tree.join("include")).unwrap();
    std::os::unix::fs::symlink(runtime.join("lib64"), tree.join("lib64")).unwrap();
    std::fs::write(
        bin.join("nvcc.profile"),
        format!(
            "TOP = $(_HERE_)/..\nNVVMIR_LIBRARY_DIR = {}\nPATH += $(_HERE_):\nINCLUDES += \"-I$(TOP)/include\" $(_SPACE_)\n",
            tk.join("libdevice").display()
        ),
    )
    .unwrap();
    tree
}

fn gxx_major() -> u32 {
    let o = Command::new("g++").arg("-dumpversion").output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .split('.')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "Debian's CUDA 11.8 packages used here are the amd64 ones"
)]
fn an_11_8_nvcc_refuses_gcc_12_and_the_host_compiler_setting_makes_the_same_build_pass() {
    assert!(
        gxx_major() > 11,
        "the test needs a default g++ newer than 11 (Debian 12 has 12)"
    );
    let env = TestEnv::new();
    let tree = debian_cuda_11_8(&env);
    env.link("cuda118", &tree);
    let work = env.home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("k.cu"),
        "__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n",
    )
    .unwrap();
    std::fs::write(work.join(".cuda-version"), "cuda118\n").unwrap();
    let nvcc = |vars: &[(&str, &str)]| {
        let mut c = env.cmd();
        c.current_dir(&work)
            .envs(vars.iter().copied())
            .args(["exec", "--", "nvcc", "-c", "k.cu", "-o", "k.o"]);
        c.output().unwrap()
    };

    // The default g++ (12): nvcc 11.8 refuses it.
    let o = nvcc(&[]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("unsupported GNU version! gcc versions later than 11 are not supported!"),
        "{}",
        text(&o)
    );
    assert!(!work.join("k.o").exists());

    // doctor says so, and what fixes it.
    let o = env.run_in(&work, &["doctor"]);
    let t = text(&o);
    assert!(
        t.contains("nvcc of cuda118 refuses its host compiler")
            && t.contains("CUDA 11.8 accepts GCC up to 11"),
        "{t}"
    );
    assert!(
        t.contains("CUDAENV_HOST_COMPILER=auto") && t.contains("g++-11"),
        "{t}"
    );

    // explain of nvcc's message gives the same fix.
    let o = env.run(&[
        "explain",
        "unsupported GNU version! gcc versions later than 11 are not supported!",
    ]);
    assert!(
        text(&o).contains("CUDAENV_HOST_COMPILER=auto"),
        "{}",
        text(&o)
    );

    // The setting: the same build passes, and exec says which compiler.
    for setting in ["auto", "g++-11", "/usr/bin/g++-11"] {
        let _ = std::fs::remove_file(work.join("k.o"));
        let o = nvcc(&[("CUDAENV_HOST_COMPILER", setting)]);
        assert_eq!(code(&o), 0, "{setting}: {}", text(&o));
        assert!(work.join("k.o").is_file(), "{setting}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("nvcc uses /usr/bin/g++-11 (GCC 11."),
            "{setting}: {}",
            text(&o)
        );
    }

    // The user's own nvcc flags are kept; their -ccbin is replaced.
    let o = env
        .cmd()
        .current_dir(&work)
        .env("CUDAENV_HOST_COMPILER", "auto")
        .env("NVCC_PREPEND_FLAGS", "-ccbin /usr/bin/g++ -lineinfo")
        .args([
            "exec",
            "--",
            "sh",
            "-c",
            "echo \"$NVCC_PREPEND_FLAGS|$NVCC_CCBIN|$CUDAHOSTCXX\"",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "-ccbin /usr/bin/g++-11 -lineinfo|/usr/bin/g++-11|/usr/bin/g++-11"
    );

    // doctor under the setting: accepted.
    let o = env
        .cmd()
        .current_dir(&work)
        .env("CUDAENV_HOST_COMPILER", "auto")
        .args(["doctor"])
        .output()
        .unwrap();
    assert!(
        text(&o).contains("host compiler: /usr/bin/g++-11 (GCC 11."),
        "{}",
        text(&o)
    );

    // A bad setting is refused by name.
    let o = nvcc(&[("CUDAENV_HOST_COMPILER", "g++ 11")]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("CUDAENV_HOST_COMPILER"), "{}", text(&o));
}
