//! `cudaenv trace` over real programs built here: the real loader, real
//! RPATH/RUNPATH set by the linker, a fake Python environment whose NVIDIA
//! wheels hold real shared libraries and pip's RECORD files, and a child
//! process started through a shell.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// A `*.dist-info` with METADATA and a RECORD listing `files` (relative to `site`).
fn dist_info(site: &Path, name: &str, version: &str, files: &[&str]) {
    let d = site.join(format!("{}-{version}.dist-info", name.replace('-', "_")));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"),
    )
    .unwrap();
    let mut record = String::new();
    for f in files {
        record.push_str(&format!("{f},sha256=x,1\n"));
    }
    std::fs::write(d.join("RECORD"), record).unwrap();
}

fn cc(args: &[&str]) {
    let status = Command::new("cc").args(args).status().unwrap();
    assert!(status.success(), "cc {args:?}");
}

struct Layout {
    t: TestEnv,
    app: PathBuf,
}

/// The torch-and-JAX situation in miniature:
/// - the active version `sys13` (CUDA 13.0 + cuDNN 9.14) holds libcublasLt.so.13,
///   libcudnn.so.9 and libcudnn_cnn.so.9;
/// - the Python environment holds nvidia-cudnn-cu13 9.19.0.56 (libcudnn.so.9,
///   whose `cudnnInit` dlopens libcudnn_cnn.so.9 by soname) and
///   nvidia-cublas 13.1.0.3 (libcublasLt.so.13);
///   and nvidia-nccl-cu13 (libnccl.so.2);
/// - `libfw.so` (a framework's extension) has a DT_RPATH to the wheel's NCCL
///   and needs libnccl.so.2;
/// - `app` needs libfw.so (RUNPATH) and libcublasLt.so.13 (from LD_LIBRARY_PATH),
///   dlopens the wheel's libcudnn.so.9 by path and calls it (as torch preloads
///   it: its sub-library then comes from LD_LIBRARY_PATH, the active 9.14),
///   then dlopens the wheel's libcublasLt.so.13 by path (a second copy, as JAX
///   does) and a CUDA 12 libcudart.so.12 from elsewhere.
fn layout() -> Layout {
    let t = TestEnv::new();
    let tk = fake_toolkit(&t.path("cuda-13.0"), "13.0", Some("9.14.0"));
    let lib64 = tk.join("lib64");
    cc_shared(
        &lib64.join("libcublasLt.so.13.0.2.14"),
        "libcublasLt.so.13",
        "int cublasLtVersion(void) { return 1; }\n",
    );
    std::os::unix::fs::symlink("libcublasLt.so.13.0.2.14", lib64.join("libcublasLt.so.13"))
        .unwrap();
    cc_shared(
        &lib64.join("libcudnn_cnn.so.9.14.0"),
        "libcudnn_cnn.so.9",
        "int cnn(void) { return 914; }\n",
    );
    std::os::unix::fs::symlink("libcudnn_cnn.so.9.14.0", lib64.join("libcudnn_cnn.so.9")).unwrap();
    t.link("sys13", &tk);

    let site = t.path("venv/lib/python3.12/site-packages");
    let cudnn_lib = site.join("nvidia/cudnn/lib");
    cc_shared(
        &cudnn_lib.join("libcudnn.so.9"),
        "libcudnn.so.9",
        "#include <dlfcn.h>\n#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 91900; }\nint cudnnInit(void) { return dlopen(\"libcudnn_cnn.so.9\", RTLD_NOW) != NULL; }\n",
    );
    cc_shared(
        &cudnn_lib.join("libcudnn_cnn.so.9"),
        "libcudnn_cnn.so.9",
        "int cnn(void) { return 919; }\n",
    );
    dist_info(
        &site,
        "nvidia-cudnn-cu13",
        "9.19.0.56",
        &[
            "nvidia/cudnn/lib/libcudnn.so.9",
            "nvidia/cudnn/lib/libcudnn_cnn.so.9",
        ],
    );
    cc_shared(
        &site.join("nvidia/cu13/lib/libcublasLt.so.13"),
        "libcublasLt.so.13",
        "int cublasLtVersion(void) { return 2; }\n",
    );
    dist_info(
        &site,
        "nvidia-cublas",
        "13.1.0.3",
        &["nvidia/cu13/lib/libcublasLt.so.13"],
    );
    let other = t.path("opt/cuda-12/lib");
    fake_cudart(&other, "libcudart.so.12.4.127", "12.4");

    let nccl_lib = site.join("nvidia/nccl/lib");
    cc_shared(
        &nccl_lib.join("libnccl.so.2"),
        "libnccl.so.2",
        "int ncclGetVersion(int *v) { *v = 22703; return 0; }\n",
    );
    dist_info(
        &site,
        "nvidia-nccl-cu13",
        "2.27.3",
        &["nvidia/nccl/lib/libnccl.so.2"],
    );

    let fw = t.path("fw");
    std::fs::create_dir_all(&fw).unwrap();
    std::fs::write(
        fw.join("fw.c"),
        "int ncclGetVersion(int *v);\nint fw_init(void) { int v; return ncclGetVersion(&v); }\n",
    )
    .unwrap();
    cc(&[
        "-shared",
        "-fPIC",
        "-o",
        fw.join("libfw.so").to_str().unwrap(),
        fw.join("fw.c").to_str().unwrap(),
        &format!("-L{}", nccl_lib.display()),
        "-l:libnccl.so.2",
        "-Wl,--disable-new-dtags",
        &format!("-Wl,-rpath,{}", nccl_lib.display()),
    ]);
    let app = t.path("app/app");
    std::fs::create_dir_all(app.parent().unwrap()).unwrap();
    let src = app.with_extension("c");
    // As torch preloads its cuDNN wheel by path and JAX opens the wheels' cuBLAS by path.
    std::fs::write(
        &src,
        format!(
            "#include <dlfcn.h>\n#include <stdio.h>\nint fw_init(void);\nint cublasLtVersion(void);\n\
             int main(void) {{\n  fw_init();\n  cublasLtVersion();\n\
               void *cudnn = dlopen(\"{}\", RTLD_NOW | RTLD_GLOBAL);\n\
               if (!cudnn) return 89;\n\
               int (*init)(void) = (int (*)(void))dlsym(cudnn, \"cudnnInit\");\n\
               if (!init || !init()) return 88;\n\
               if (!dlopen(\"{}\", RTLD_NOW)) return 90;\n\
               if (!dlopen(\"{}\", RTLD_NOW)) return 91;\n\
               puts(\"app ran\");\n  return 7;\n}}\n",
            cudnn_lib.join("libcudnn.so.9").display(),
            site.join("nvidia/cu13/lib/libcublasLt.so.13").display(),
            other.join("libcudart.so.12").display()
        ),
    )
    .unwrap();
    cc(&[
        "-o",
        app.to_str().unwrap(),
        src.to_str().unwrap(),
        &format!("-L{}", fw.display()),
        "-lfw",
        &format!("-Wl,-rpath,{}", fw.display()),
        &format!("-L{}", lib64.display()),
        "-l:libcublasLt.so.13",
        // libfw's own needs are found through its RPATH at run time.
        &format!("-Wl,-rpath-link,{}", nccl_lib.display()),
        "-ldl",
    ]);
    Layout { t, app }
}

/// Temporary paths and pids out of a report, so it can be snapshot.
fn redact(text: &str, t: &TestEnv) -> String {
    let tmp = std::fs::canonicalize(t.tmp.path()).unwrap();
    let mut s = text.replace(&tmp.display().to_string(), "[TMP]");
    s = s.replace(&t.tmp.path().display().to_string(), "[TMP]");
    let mut out = String::new();
    for line in s.lines() {
        let mut l = line.to_string();
        for prefix in ["pid ", "\"pid\": "] {
            if let Some(i) = l.find(prefix) {
                let start = i + prefix.len();
                let end = l[start..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(l.len(), |e| start + e);
                if end > start {
                    l.replace_range(start..end, "[PID]");
                }
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[test]
fn trace_reports_rules_copies_majors_and_children() {
    let Layout { t, app } = layout();
    // Through a shell: the libraries are loaded by a child process of the command.
    let out = t
        .cmd()
        .args([
            "trace",
            "--version",
            "sys13",
            "--",
            "sh",
            "-c",
            "\"$0\"; exit $?",
        ])
        .arg(&app)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(7),
        "the command's own exit code is kept: {}",
        stderr(&out)
    );
    assert_eq!(
        stdout(&out),
        "app ran\n",
        "the command's stdout is untouched"
    );
    let report = redact(&stderr(&out), &t);
    insta::assert_snapshot!("trace_sys13", report);

    let out = t
        .cmd()
        .args(["trace", "--json", "--version", "sys13", "--"])
        .arg(&app)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let text = stdout(&out);
    let json = text
        .strip_prefix("app ran\n")
        .expect("the command's output comes first");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let kinds: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"duplicate"), "{v:#}");
    assert!(kinds.contains(&"major-mismatch"), "{v:#}");
    assert!(kinds.contains(&"outside-version"), "{v:#}");
    insta::assert_snapshot!("trace_sys13_json", redact(json, &t));
}

#[test]
fn trace_with_nothing_active_reports_where_each_copy_came_from() {
    let Layout { t, app } = layout();
    // The user's own LD_LIBRARY_PATH (a copy of the toolkit's libraries
    // outside any cudaenv version) serves the app; no version is active.
    let lib64 = t.path("usr-lib");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(t.path("cuda-13.0/lib64"))
        .arg(&lib64)
        .status()
        .unwrap();
    assert!(status.success());
    let out = t
        .cmd()
        .env("LD_LIBRARY_PATH", &lib64)
        .arg("trace")
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let report = redact(&stderr(&out), &t);
    assert!(
        report.contains("active: system; 6 CUDA libraries"),
        "{report}"
    );
    assert!(
        report.contains("libcublasLt.so.13  13.0.2.14  system copy  [LD_LIBRARY_PATH]"),
        "{report}"
    );
    // Without an active version there is nothing to differ from or bypass…
    assert!(!report.contains("outside the active"), "{report}");
    assert!(!report.contains("CUDA 12 library"), "{report}");
    // …but two copies and a split cuDNN are problems whatever is active.
    assert!(report.contains("2 copies of libcublasLt"), "{report}");
    assert!(
        report.contains("cuDNN libraries of different versions"),
        "{report}"
    );

    // Without it, the app does not start: the loader's own error, its exit code.
    let out = t.cmd().arg("trace").arg("--").arg(&app).output().unwrap();
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    let err = stderr(&out);
    // The command failed, so what was not found is a warning, not a note.
    let line = err
        .lines()
        .find(|l| l.contains("found nowhere"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.starts_with("warning: pid ") && line.ends_with(": libcublasLt.so.13"),
        "{line}"
    );
}

#[test]
fn trace_keeps_a_signal_death_and_reports_a_missing_command() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .args(["trace", "--", "sh", "-c", "kill -TERM $$"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + 15), "{}", stderr(&out));
    let out = t
        .cmd()
        .args(["trace", "--", "no-such-command-here"])
        .output()
        .unwrap();
    let err = assert_code(&out, 127, "trace of a missing command");
    assert!(err.contains("no-such-command-here"), "{err}");
}

/// A library of the active stack whose file name is only its soname
/// (`libcudart.so.12`, as PyPI's wheels ship it) is reported with the
/// version the stack records for its component, not `-`; and the command
/// is echoed with its quoting, so it can be copied back into a shell (live
/// PyPI, the ~1 MB cudart wheel; the real loader, no GPU needed).
#[test]
fn trace_shows_the_recorded_version_and_the_command_as_typed() {
    let env = TestEnv::new();
    let o = env.run(&["install", "12.4.1", crate::pypi::ONLY_CUDART]);
    assert!(o.status.success(), "{}", text(&o));
    let script = "import ctypes; ctypes.CDLL('libcudart.so.12'); print('a b')";
    let o = env.run(&[
        "trace",
        "--version",
        "12.4.1",
        "--",
        "python3",
        "-c",
        script,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("  libcudart.so.12  12.4.127  active version 12.4.1"),
        "{err}"
    );
    assert!(
        err.contains(
            r#"trace: `python3 -c 'import ctypes; ctypes.CDLL('\''libcudart.so.12'\''); print('\''a b'\'')'` exited 0"#
        ),
        "{err}"
    );
    let o = env.run(&[
        "trace",
        "--version",
        "12.4.1",
        "--json",
        "--",
        "python3",
        "-c",
        script,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let report: serde_json::Value = serde_json::from_str(
        out.lines()
            .skip_while(|l| *l != "{")
            .collect::<Vec<_>>()
            .join("\n")
            .as_str(),
    )
    .unwrap_or_else(|e| panic!("{e}: {out}"));
    let libs: Vec<&serde_json::Value> = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["libraries"].as_array().unwrap())
        .collect();
    let cudart = libs
        .iter()
        .find(|l| l["name"] == "libcudart.so.12")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(cudart["version"], "12.4.127", "{cudart}");
}
