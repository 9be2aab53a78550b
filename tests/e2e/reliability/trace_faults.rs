//! `trace` under signals and with libraries under other names: Ctrl-C and
//! SIGTERM stop the traced program and leave no scratch directory, a missing
//! command is 127 however it is named, and a CUDA library is recognised by
//! its ELF soname, not its file name.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, cc_shared, fake_toolkit, text};

/// The scratch directories `trace` left in `tmp`.
fn scratch_left(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cudaenv-trace-"))
        .collect()
}

/// Waits for `child` up to `limit`; kills it (and its group) if it is still there.
fn wait_for(child: &mut std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the process group this test created.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    None
}

/// Defect: `trace` ignored SIGINT and SIGQUIT before starting the program,
/// which inherited the ignored dispositions, so Ctrl-C did nothing; SIGTERM
/// to `trace` left the program running and its scratch directory behind.
/// Ctrl-C (SIGINT to the terminal's process group) stops the program and
/// trace reports 130; SIGTERM to trace alone is passed on (143); neither
/// leaves a scratch directory or a process.
#[test]
fn ctrl_c_and_sigterm_stop_a_traced_program_and_clean_up() {
    for (signal, to_group, code) in [
        (libc::SIGINT, true, 130),
        (libc::SIGQUIT, true, 131),
        (libc::SIGTERM, false, 143),
    ] {
        let env = TestEnv::new();
        let tmp = env.path("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let pidfile = env.path("pid");
        let mut c = env.cmd();
        c.env("TMPDIR", &tmp)
            .args(["trace", "--", "sh", "-c"])
            .arg(format!("echo $$ > {}; exec sleep 60", pidfile.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = c.spawn().unwrap();
        let start = Instant::now();
        while !std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n')) {
            assert!(start.elapsed() < Duration::from_secs(20), "never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        let program: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let target = if to_group {
            -(child.id() as i32)
        } else {
            child.id() as i32
        };
        // SAFETY: signalling this test's own child (or its group).
        unsafe { libc::kill(target, signal) };
        let status = wait_for(&mut child, Duration::from_secs(20));
        let out = child.wait_with_output().unwrap();
        // SAFETY: probing (signal 0) whether the program still exists.
        let alive = unsafe { libc::kill(program, 0) } == 0;
        if alive {
            unsafe { libc::kill(program, libc::SIGKILL) };
        }
        assert!(status.is_some(), "signal {signal}: trace did not end");
        assert!(!alive, "signal {signal}: the traced program kept running");
        assert_eq!(
            status.unwrap().code(),
            Some(code),
            "signal {signal}: {}",
            text(&out)
        );
        assert_eq!(scratch_left(&tmp), Vec::<String>::new(), "signal {signal}");
    }
}

/// A missing command is 127 however it is named (by name, by a relative
/// or an absolute path, through a script whose interpreter is missing), as
/// for `exec` and the docs.
#[test]
fn a_missing_command_is_127_however_it_is_named() {
    let env = TestEnv::new();
    let script = env.path("bad-interpreter");
    crate::common::write_executable(&script, "#!/nonexistent/interpreter\n");
    for cmd in [
        "no-such-command-here".to_string(),
        "./no-such-command".to_string(),
        "/nonexistent/dir/tool".to_string(),
        script.display().to_string(),
    ] {
        for sub in ["trace", "exec"] {
            let o = env.cmd().args([sub, "--", &cmd]).output().unwrap();
            assert_eq!(o.status.code(), Some(127), "{sub} {cmd}: {}", text(&o));
            assert!(
                String::from_utf8_lossy(&o.stderr).contains(&cmd),
                "{sub} {cmd}: {}",
                text(&o)
            );
        }
    }
}

/// Defect: `trace` recognised CUDA libraries by their file names, so a
/// second libcudart loaded under another name — auditwheel's
/// `libcudart-<hash>.so.12` in older torch and CuPy wheels, or any copy
/// renamed — was not reported. The ELF soname decides.
#[test]
fn a_cuda_library_under_another_file_name_is_recognised_by_its_soname() {
    let env = TestEnv::new();
    let tk = fake_toolkit(&env.path("cuda-12.4"), "12.4", None);
    env.link("tk", &tk);
    let wheels = env.path("site/torch/lib");
    // auditwheel's rename: file and soname carry the hash.
    cc_shared(
        &wheels.join("libcudart-d0da41ae.so.12"),
        "libcudart-d0da41ae.so.12",
        "int cudaRuntimeGetVersion(int *v) { *v = 12010; return 0; }\n",
    );
    // A copy renamed by hand: only the soname says what it is.
    cc_shared(
        &wheels.join("libmy_runtime.so"),
        "libcudart.so.12",
        "int cudaRuntimeGetVersion(int *v) { *v = 12020; return 0; }\n",
    );
    let app = env.path("app");
    let src = env.path("app.c");
    std::fs::write(
        &src,
        format!(
            "#include <dlfcn.h>\n#include <stdio.h>\nint main(void) {{\n\
             if (!dlopen(\"libcudart.so.12\", RTLD_NOW)) return 2;\n\
             if (!dlopen(\"{0}/libcudart-d0da41ae.so.12\", RTLD_NOW)) return 3;\n\
             if (!dlopen(\"{0}/libmy_runtime.so\", RTLD_NOW)) return 4;\n\
             return 0; }}\n",
            wheels.display()
        ),
    )
    .unwrap();
    let st = Command::new("cc")
        .arg("-o")
        .arg(&app)
        .arg(&src)
        .arg("-ldl")
        .status()
        .unwrap();
    assert!(st.success());
    let o = env
        .cmd()
        .args(["trace", "--json", "--version", "tk", "--"])
        .arg(&app)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let libs: Vec<(String, String)> = r["processes"][0]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["component"].as_str().unwrap().to_string(),
                Path::new(l["path"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            )
        })
        .collect();
    let cudart: Vec<&str> = libs
        .iter()
        .filter(|(c, _)| c == "cudart")
        .map(|(_, f)| f.as_str())
        .collect();
    assert_eq!(
        cudart,
        [
            "libcudart.so.12",
            "libcudart-d0da41ae.so.12",
            "libmy_runtime.so"
        ],
        "{libs:?}"
    );
    let dup = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "duplicate")
        .unwrap_or_else(|| panic!("no duplicate reported: {}", r["problems"]));
    assert!(
        dup["message"]
            .as_str()
            .unwrap()
            .starts_with("3 copies of libcudart"),
        "{dup}"
    );
}
