//! Snapshots of what users read: the real binary's exit code, stdout and
//! stderr, for the tables and `--json` documents that people and scripts
//! read (`versions`, `version`, `ls-remote`, `compat`, `explain`, `cache
//! size`, `install --dry-run`, `verify`, `doctor`), and for the errors met
//! first (an unknown version, a bad spec, a bad `.cuda-version`, a version
//! that is not installed, `--offline` with an empty cache). `lock` and
//! `export` have theirs in `lock.rs`, `trace` in `trace.rs`.
//!
//! No network: `--offline`, the embedded release list and registry, and
//! versions made on disk (`fake_installed`, `link`). The planning commands
//! plan for a fixed driver (`CUDAENV_TARGET_DRIVER`) so that this machine's
//! GPU, or the lack of one, does not show. What varies from run to run (the
//! temporary directory, this machine's platform) is replaced by insta
//! filters, so a snapshot changes only when what the user reads does.
//!
//! Each snapshot is a file in `snapshots/` (`e2e__output__NAME.snap`);
//! `INSTA_UPDATE=always cargo test --test e2e output::` rewrites them after a
//! deliberate change, for review in the diff.

use std::path::Path;
use std::process::Output;

use crate::common::*;

/// The driver every planning command here plans for.
const TARGET_DRIVER: &str = "550.54.15";

/// The commands of one snapshot, run in one environment.
pub(crate) struct Session<'t> {
    t: &'t TestEnv,
    cwd: &'t Path,
    pub(crate) text: String,
    /// This snapshot's own filters (regex, replacement), after the common ones.
    pub(crate) filters: Vec<(&'static str, &'static str)>,
    /// Variables set for every command of this session (a loopback index).
    pub(crate) envs: Vec<(String, String)>,
    /// Sort each run of per-component progress lines (`cudnn 9.1.0.70:
    /// downloaded …`): downloads run in parallel, so their lines come in the
    /// order they finish.
    pub(crate) sort_progress: bool,
}

/// `stderr` with each run of consecutive `<component> <version>: …` lines
/// sorted.
fn progress_sorted(stderr: &str) -> String {
    let is_progress = |l: &str| {
        l.split_once(": ").is_some_and(|(head, _)| {
            head.split_once(' ').is_some_and(|(name, version)| {
                !name.is_empty()
                    && !version.contains(' ')
                    && version.starts_with(|c: char| c.is_ascii_digit())
            })
        })
    };
    let mut out: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for line in stderr.split_inclusive('\n') {
        if is_progress(line) {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        out.append(&mut run);
        out.push(line);
    }
    run.sort_unstable();
    out.append(&mut run);
    out.concat()
}

impl<'t> Session<'t> {
    pub(crate) fn new(t: &'t TestEnv, cwd: &'t Path) -> Self {
        Session {
            t,
            cwd,
            text: String::new(),
            filters: Vec::new(),
            envs: Vec::new(),
            sort_progress: false,
        }
    }

    /// Runs `cudaenv ARGS…` and appends its exit code, stdout and stderr.
    pub(crate) fn run(&mut self, args: &[&str]) -> Output {
        self.run_with(&[], args)
    }

    /// `run` with these variables set too (each shown in the snapshot).
    pub(crate) fn run_with(&mut self, vars: &[(&str, &str)], args: &[&str]) -> Output {
        let o = self
            .t
            .cmd()
            .current_dir(self.cwd)
            .env("CUDAENV_TARGET_DRIVER", TARGET_DRIVER)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .envs(vars.iter().copied())
            .args(args)
            .output()
            .unwrap();
        let shown: String = vars.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        if args.contains(&"--json") && o.status.success() {
            json_without_duplicate_keys(&o.stdout)
                .unwrap_or_else(|e| panic!("cudaenv {}: {e}", args.join(" ")));
        }
        self.text.push_str(&format!(
            "$ {shown}cudaenv {}\n[exit {}]\n--- stdout\n{}--- stderr\n{}\n",
            args.join(" "),
            o.status.code().map_or("signal".into(), |c| c.to_string()),
            String::from_utf8_lossy(&o.stdout),
            if self.sort_progress {
                progress_sorted(&String::from_utf8_lossy(&o.stderr))
            } else {
                String::from_utf8_lossy(&o.stderr).into_owned()
            },
        ));
        o
    }

    /// Snapshots everything run so far as `name`, with what varies redacted.
    pub(crate) fn snapshot(self, name: &str) {
        let tmp = self.t.tmp.path().display().to_string();
        let platform = cudaenv::install::sources::Platform::current()
            .expect("tests run on Linux x86_64 or aarch64")
            .manifest_key();
        let arch = std::env::consts::ARCH;
        let mut settings = insta::Settings::clone_current();
        // Longest first: the root and home are inside the temporary directory.
        settings.add_filter(&literal(&self.t.root.display().to_string()), "[ROOT]");
        settings.add_filter(&literal(&self.t.home.display().to_string()), "[HOME]");
        settings.add_filter(&literal(&tmp), "[TMP]");
        settings.add_filter(&literal(platform), "[PLATFORM]");
        settings.add_filter(
            &format!(r"manylinux(\w+)_{}", literal(arch)),
            "manylinux${1}_[ARCH]",
        );
        for (regex, replacement) in &self.filters {
            settings.add_filter(regex, *replacement);
        }
        settings.bind(|| insta::assert_snapshot!(name, self.text));
    }
}

/// A regular expression that matches `s` literally.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !c.is_alphanumeric() && c != '/' && c != '_' && c != '-' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Two installed versions and a linked one, a project that pins one of them.
fn three_versions(t: &TestEnv) -> std::path::PathBuf {
    fake_installed(&t.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    fake_installed(&t.root, "11.8.0", "11.8.0", None);
    let tree = fake_toolkit(&t.path("opt/cuda-13.0"), "13.0.1", None);
    t.link("site-13", &tree);
    let project = t.home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "12.4.1+cudnn9.1.0\n").unwrap();
    project
}

/// `versions` and `version`: the table, the names alone, and `--json`, with
/// the active version and what selected it.
#[test]
fn versions_and_version_tables_and_json() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["versions"]);
    s.run(&["versions", "--json"]);
    s.run(&["version"]);
    s.run(&["version", "--json"]);
    let project = three_versions(&t);
    let mut s2 = Session::new(&t, &project);
    s2.text = s.text;
    s2.run(&["versions"]);
    s2.run(&["versions", "--bare"]);
    s2.run(&["versions", "--json"]);
    s2.run(&["versions", "--check"]);
    s2.run(&["version"]);
    s2.run(&["version", "--json"]);
    s2.run(&["version", "--bare"]);
    s2.snapshot("versions_and_version");
}

/// `ls-remote --offline` without a stored release list: the warning, then the
/// embedded list as a table; `--json` has the same releases.
#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "the snapshot is of the release list for x86_64 (some releases exist for it only)"
)]
fn ls_remote_offline_table_and_json() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["ls-remote", "--offline"]);
    s.snapshot("ls_remote_offline");

    // The document is long (every release): its shape and first entries.
    let o = t
        .cmd()
        .env("CUDAENV_TARGET_DRIVER", TARGET_DRIVER)
        .args(["ls-remote", "--offline", "--json"])
        .output()
        .unwrap();
    assert_success(&o, "ls-remote --offline --json");
    let mut v = json(&o);
    let obj = v.as_object_mut().unwrap();
    for list in obj.values_mut() {
        if let Some(a) = list.as_array_mut() {
            a.truncate(2);
        }
    }
    insta::assert_json_snapshot!("ls_remote_offline_json_head", v);
}

/// `compat`: a framework release's table, its `--json`, and the errors for a
/// release or a framework cudaenv has no data for. (Its `--json` wrote
/// `builds` twice, the release's and the machine's verdicts, until the
/// duplicate-key check of `Session::run` found it.)
#[test]
fn compat_tables_json_and_errors() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["compat", "torch==2.5"]);
    s.run(&["compat", "torch==2.5", "--json"]);
    s.run(&["compat", "tensorflow==2.10"]);
    // Native Windows: the tested configuration up to 2.10, then no GPU build.
    s.run(&["compat", "tensorflow==2.10", "--platform", "windows"]);
    s.run(&["compat", "tensorflow==2.15", "--platform", "windows"]);
    s.run(&["compat", "jax==0.10"]);
    s.run(&["compat", "torch==0.1"]);
    s.run(&["compat", "nosuch"]);
    s.snapshot("compat");
}

/// `compat` of releases the hand-kept tables never had, answered from the
/// frameworks' own wheel metadata (registry/compat/frameworks.toml, generated
/// from the committed registry/inputs/frameworks): JAX 0.4.30's CUDA and cuDNN
/// ranges and NCCL floor, JAX 0.4.25's from jax's own wheel (its plugin pins
/// only `jax-cuda12-pjrt`), an old torch whose PyPI build pins its cuDNN (and the
/// matrix's other build beside it), an old TensorFlow 2.x whose `and-cuda` extra
/// pins NCCL and TensorRT 8 (shown, not installed), an old CuPy whose wheel names
/// no NVIDIA wheel (its major from the package's name), and a JAX release that
/// has no CUDA plugin on PyPI. Each answer says where each fact comes from,
/// the Python range too: JAX's and the older CuPy's from their wheels'
/// `Requires-Python` and tags (free-threaded builds of JAX 0.8 among them),
/// CuPy 13's from its guide.
#[test]
fn compat_from_the_frameworks_wheel_metadata() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["compat", "jax==0.4.30"]);
    s.run(&["compat", "jax==0.4.30", "--json"]);
    s.run(&["compat", "jax==0.4.25"]);
    s.run(&["compat", "torch==1.13.1"]);
    s.run(&["compat", "tensorflow==2.14.0"]);
    s.run(&["compat", "cupy-cuda12x==12.2.0"]);
    s.run(&["compat", "cupy-cuda12x==13.3.0"]);
    s.run(&["compat", "jax==0.8.0"]);
    s.run(&["compat", "jax==0.4.20"]);
    s.snapshot("compat_metadata");
}

/// `explain`: the diagnosis of the two most common CUDA errors, as text and
/// as `--json`, and text it does not recognise.
#[test]
fn explain_text_and_json() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    let missing = "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory";
    let driver = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version";
    s.run(&["explain", missing]);
    s.run(&["explain", "--json", missing]);
    s.run(&["explain", driver]);
    s.run(&["explain", "--json", driver]);
    fake_installed(&t.root, "11.8.0", "11.8.0", None);
    s.run(&["explain", missing]);
    s.run(&["explain", "everything is fine"]);
    s.snapshot("explain");
}

/// `cache size` of an empty cache and of one holding a download, as the
/// table and as `--json`; `cache dir`.
#[test]
fn cache_size_table_and_json() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["cache", "size"]);
    s.run(&["cache", "size", "--json"]);
    s.run(&["cache", "dir"]);
    let downloads = t.root.join("cache/downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    std::fs::write(
        downloads.join("cuda_cudart-12.4.127.tar.xz"),
        vec![0u8; 3000],
    )
    .unwrap();
    s.run(&["cache", "size"]);
    s.run(&["cache", "size", "--json"]);
    s.snapshot("cache_size");
}

/// The errors of asking for versions that do not exist or are not
/// installed, offline: each names what was asked and says what to do.
#[test]
fn errors_for_unknown_and_missing_versions() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    // Unknown, and not a spec at all.
    s.run(&["install", "99.9", "--offline"]);
    s.run(&["install", "foo+bar", "--offline"]);
    s.run(&["install", "12.4+cudnn", "--offline"]);
    s.run(&["local", "12..4"]);
    // Known but not in the (empty) download cache.
    s.run(&["install", "12.4", "--offline"]);
    // Not installed, asked for directly or through a pin.
    s.run(&["prefix", "12.4"]);
    s.run(&["which", "nvcc"]);
    s.run(&["uninstall", "12.9", "-y"]);
    std::fs::write(t.home.join(".cuda-version"), "12.4\n").unwrap();
    s.run(&["prefix"]);
    s.run(&["exec", "--", "nvcc", "--version"]);
    // A typo in a command.
    s.run(&["instal", "12.4"]);
    s.snapshot("errors_unknown_and_missing_versions");
}

/// Bad `.cuda-version` files: each error names the file and line and says
/// how to fix it, and nothing runs with a version guessed from it.
#[test]
fn errors_for_bad_version_files() {
    let t = TestEnv::new();
    let project = t.home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut s = Session::new(&t, &project);
    for content in [
        "garbage!\n",
        "12.4\n11.8\n",
        "# only a comment\n",
        "12.4+cudnn9.1+cudnn8\n",
    ] {
        std::fs::write(project.join(".cuda-version"), content).unwrap();
        s.text.push_str(&format!("# .cuda-version: {content:?}\n"));
        s.run(&["version"]);
    }
    std::fs::write(project.join(".cuda-version"), "garbage!\n").unwrap();
    s.run(&["exec", "--", "true"]);
    s.run(&["versions"]);
    s.snapshot("errors_bad_version_files");
}

/// The duplicate-key check finds a key written twice at any depth.
#[test]
fn the_duplicate_key_check_finds_a_repeated_key() {
    assert!(json_without_duplicate_keys(br#"{"a": [1, {"b": null}], "c": {"d": 1}}"#).is_ok());
    let e = json_without_duplicate_keys(br#"{"a": 1, "c": [{"d": 1, "d": 2}]}"#).unwrap_err();
    assert!(e.contains("`d` appears twice"), "{e}");
    assert!(json_without_duplicate_keys(b"{} trailing").is_err());
}

/// `install --dry-run`: the plan (artifacts, URLs, sizes, hashes, totals) as
/// text and as `--json`, from the embedded manifests, offline.
#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "the snapshot is of x86_64's archives (their sizes and hashes differ by platform)"
)]
fn install_dry_run_plan_and_json() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    s.run(&["install", "12.4+cudnn9.1", "--dry-run", "--offline"]);
    s.run(&["install", "12.4", "--dry-run", "--offline", "--json"]);
    s.snapshot("install_dry_run");
}

/// `verify` of a stack on a machine without a driver: what was found, the
/// one problem, and its `--json`.
#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn verify_without_a_driver_text_and_json() {
    let t = TestEnv::new();
    crate::verify::stack(&t, "stack");
    let mut s = Session::new(&t, &t.home);
    // How long each stage took, and the size of the stub libraries the C
    // compiler made.
    s.filters.push((
        r#""(seconds|wall_seconds)": [0-9.e-]+"#,
        r#""$1": [SECONDS]"#,
    ));
    s.filters.push((r#""size": \d+"#, r#""size": [SIZE]"#));
    s.run(&["verify", "stack"]);
    s.run(&["verify", "stack", "--json"]);
    s.snapshot("verify_without_a_driver");
}

/// `doctor` on a machine without a driver, with a version active and a
/// directory on `LD_LIBRARY_PATH` that shadows it: the findings as text and
/// as `--json` (the `container` finding, which depends on where the tests
/// run, left out; of the facts, which describe this machine, their names).
#[test]
#[cfg_attr(
    any(cudaenv_has_driver, cudaenv_system_cudart),
    ignore = "this machine has an NVIDIA driver or a CUDA runtime in the loader's cache: the snapshot is of a machine with neither"
)]
fn doctor_findings_text_and_json() {
    let t = TestEnv::new();
    fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let project = t.home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "12.4.1\n").unwrap();
    let stray = t.path("stray/lib");
    fake_cudart(&stray, "libcudart.so.12", "12.1");
    let doctor = |json: bool| {
        let mut c = t.cmd();
        c.current_dir(&project)
            .env("CUDAENV_TARGET_DRIVER", TARGET_DRIVER)
            .env("LD_LIBRARY_PATH", &stray)
            .args(["doctor", "--no-python"]);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let o = doctor(false);
    let text = String::from_utf8(o.stdout).unwrap();
    let text: String = text
        .lines()
        // What the machine has (a container, its g++) is not the product.
        .filter(|l| !l.starts_with("ok       container") && !l.contains(" host-compiler "))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut s = Session::new(&t, &project);
    s.text = format!(
        "$ cudaenv doctor --no-python\n[exit {}]\n--- stdout\n{text}--- stderr\n{}\n",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr)
    );

    let o = doctor(true);
    let mut v = json(&o);
    v["findings"]
        .as_array_mut()
        .unwrap()
        .retain(|f| f["code"] != "container" && f["code"] != "host-compiler");
    let facts: Vec<String> = v["facts"].as_object().unwrap().keys().cloned().collect();
    v["facts"] = serde_json::json!(facts);
    s.text.push_str(&format!(
        "$ cudaenv doctor --no-python --json (findings; the names of the facts)\n[exit {}]\n{}\n",
        o.status.code().unwrap_or(-1),
        serde_json::to_string_pretty(&v).unwrap()
    ));
    s.snapshot("doctor_findings");
}

/// Pinning, linking and cleaning: what `local`, `global`, `link`,
/// `uninstall` of a link, `which`, `prefix` and `cache prune|clean` say on
/// success and on the usual mistakes.
#[test]
fn pins_links_and_cache_messages() {
    let t = TestEnv::new();
    let project = t.home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let empty = t.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let tree = fake_toolkit(&t.path("opt/cuda-12.6"), "12.6.3", Some("9.5.1"));
    let mut s = Session::new(&t, &project);
    s.run(&["global"]);
    s.run(&["global", "12.4"]);
    s.run(&["global"]);
    s.run(&["local"]);
    s.run(&["local", "12.6"]);
    s.run(&["local"]);
    s.run(&["link", "bad", empty.to_str().unwrap()]);
    s.run(&["link", "gone", t.path("nonexistent").to_str().unwrap()]);
    s.run(&["link", "site-12.6", tree.to_str().unwrap()]);
    s.run(&["link", "site-12.6", tree.to_str().unwrap()]);
    s.run(&["local", "site-12.6"]);
    s.run(&["prefix"]);
    s.run(&["which", "nvcc"]);
    s.run(&["which", "ptxas"]);
    s.run(&["exec", "--", "nosuchcmd"]);
    s.run(&["uninstall", "site-12.6", "-y"]);
    s.run(&["cache", "prune"]);
    s.run(&["cache", "clean"]);
    s.snapshot("pins_links_and_cache");
    assert!(tree.join("bin/nvcc").is_file(), "the linked tree is kept");
}

/// `cudaenv shell 12.4` run as a program (no `cudaenv init` function) can
/// only print code: it says shell integration is not enabled and how to
/// enable it, as pyenv does, and still prints the code for `eval`. Through
/// the function, the shell changes and nothing is said.
#[test]
fn shell_without_integration_says_how_to_enable_it() {
    let t = TestEnv::new();
    fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let mut s = Session::new(&t, &t.home);
    s.envs.push(("SHELL".into(), "/bin/bash".into()));
    let o = s.run(&["shell", "12.4.1"]);
    assert!(
        stdout(&o).contains("export CUDAENV_VERSION=12.4.1"),
        "{}",
        text(&o)
    );
    s.run(&["shell", "--shell", "fish", "12.4.1"]);
    s.run(&["shell", "--unset"]);
    s.snapshot("shell_without_integration");

    // The printed code works with eval; through the function, no warning.
    let out = bash(
        &t,
        &t.home,
        &[],
        r#"eval "$("$CUDAENV" shell 12.4.1 2>/dev/null)"; echo "eval:$CUDAENV_VERSION"
           unset CUDAENV_VERSION
           eval "$("$CUDAENV" init bash)"
           cudaenv shell 12.4.1 2>&1; echo "function:$CUDAENV_VERSION""#,
    );
    assert_eq!(out, "eval:12.4.1\nfunction:12.4.1\n");
}
