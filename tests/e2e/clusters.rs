//! The tools people already use on shared machines (docs/clusters.md):
//! direnv's `use cudaenv`, driven by Debian's real `direnv` in a real
//! interactive bash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{TestEnv, assert_code, assert_success, fake_installed};
use crate::shell::{BASE_PATH, Sh, run_script};

/// Prints `CUDART=<version>` as the glibc loader's `libcudart.so.<major>`
/// reports it (after a `@step`, it lands in that step's variables).
fn cudart_probe(major: u32) -> String {
    format!(
        "python3 -c 'import ctypes; v = ctypes.c_int(); ctypes.CDLL(\"libcudart.so.{major}\").cudaRuntimeGetVersion(ctypes.byref(v)); print(\"CUDART=%d\" % v.value)'"
    )
}

/// The variables a step saw, without the ones that change with every `cd`.
fn steady(vars: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut v = vars.clone();
    for k in ["PWD", "OLDPWD", "_", "CUDART"] {
        v.remove(k);
    }
    v
}

/// Sets a file's modification time a few seconds ahead: direnv compares
/// watched files' times in whole seconds.
fn touch_ahead(file: &str, secs: u32) -> String {
    format!("touch -d \"@$(( $(date +%s) + {secs} ))\" {file}")
}

/// The variables whose values differ, with both values.
fn differences(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Vec<(String, Option<String>, Option<String>)> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| (k.clone(), a.get(k).cloned(), b.get(k).cloned()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn direnv_use_cudaenv_activates_follows_the_pin_and_gives_everything_back() {
    let t = TestEnv::new();
    let v12 = fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let v11 = fake_installed(&t.root, "11.8.0", "11.8.0", None);
    let lib = t.home.join(".config/direnv/lib");
    std::fs::create_dir_all(&lib).unwrap();
    let out = t.run(&["direnv"]);
    assert_success(&out, "cudaenv direnv");
    std::fs::write(lib.join("cudaenv.sh"), &out.stdout).unwrap();

    let proj = t.home.join("my proj");
    let fixed = t.home.join("fixed");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::create_dir_all(&fixed).unwrap();
    std::fs::write(proj.join(".envrc"), "use cudaenv\n").unwrap();
    std::fs::write(proj.join(".cuda-version"), "12.4\n").unwrap();
    std::fs::write(fixed.join(".envrc"), "use cudaenv 11.8\n").unwrap();
    let broken = t.home.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join(".envrc"), "use cudaenv\n").unwrap();
    std::fs::write(broken.join(".cuda-version"), "13.0\n").unwrap();
    for dir in [&proj, &fixed, &broken] {
        let out = std::process::Command::new("direnv")
            .arg("allow")
            .arg(dir)
            .env_clear()
            .env("HOME", &t.home)
            .env("PATH", BASE_PATH)
            .output()
            .expect("direnv is needed by the tests: run scripts/test.sh");
        assert_success(&out, "direnv allow");
    }

    let lines: Vec<String> = vec![
        "eval \"$(direnv hook bash)\"".into(),
        "@step start".into(),
        "cd \"$PROJ\"".into(),
        "@step proj".into(),
        cudart_probe(12),
        // The pin changes in place: direnv reloads (a watched file).
        "printf '11.8\\n' > .cuda-version".into(),
        touch_ahead(".cuda-version", 2),
        "@step repinned".into(),
        cudart_probe(11),
        // A .tool-versions beside it cannot win, one in sub/ does (nearest).
        "printf 'cuda 12.4\\n' > sub/.tool-versions".into(),
        "cd sub".into(),
        "@step sub".into(),
        "cd \"$FIXED\"".into(),
        "@step fixed".into(),
        // A pin to something not installed: the error, and no stale stack.
        "cd ../broken".into(),
        "@step broken".into(),
        "cd ~".into(),
        "@step out".into(),
    ];
    let run = run_script(
        Sh::Bash,
        &t,
        &[
            ("PROJ", proj.to_str().unwrap()),
            ("FIXED", fixed.to_str().unwrap()),
        ],
        &lines,
    );
    let shown = |dir: &Path| dir.to_str().unwrap().to_owned();
    let expect = |step: &str, version: &Path, name: &str, cudart: Option<&str>| {
        let got = run.step(step);
        let want = [
            (
                "PATH",
                Some(format!("{}:{BASE_PATH}", shown(&version.join("bin")))),
            ),
            ("LD_LIBRARY_PATH", Some(shown(&version.join("lib64")))),
            ("CUDA_HOME", Some(shown(version))),
            ("CUDA_PATH", Some(shown(version))),
            ("CUDAENV_ACTIVE", Some(name.to_owned())),
            ("CUDART", cudart.map(str::to_owned)),
        ];
        for (k, v) in want {
            assert_eq!(got.get(k), v.as_ref(), "step {step}: {k}\n{}", run.stderr);
        }
    };
    expect("proj", &v12, "12.4.1", Some("12040"));
    expect("repinned", &v11, "11.8.0", Some("11080"));
    // sub/ has no .envrc: direnv keeps the parent's, which re-selects from
    // proj (11.8); cudaenv itself would pick sub/.tool-versions there.
    expect("sub", &v11, "11.8.0", None);
    expect("fixed", &v11, "11.8.0", None);
    let got = run.step("broken");
    assert_eq!(got.get("CUDAENV_ACTIVE"), None, "{}", run.stderr);
    assert_eq!(got.get("PATH").map(String::as_str), Some(BASE_PATH));
    assert!(
        run.stderr.contains("version `13.0` is not installed"),
        "{}",
        run.stderr
    );
    let (start, out) = (run.step("start"), run.step("out"));
    assert!(
        steady(start) == steady(out),
        "leaving must give back the environment; differences: {:?}",
        differences(&steady(start), &steady(out))
    );
    assert!(!out.contains_key("CUDAENV_ACTIVE") && !out.contains_key("LD_LIBRARY_PATH"));
}

/// A root whose path holds every character the modulefile languages treat
/// specially (Lua: `"` `\`; Tcl: `$` `[` `]` `{` `}` `"` `\`; both: spaces).
const AWKWARD_ROOT: &str = "cuda root's \"x\" $HOME [y] {z} \\w";
/// The same without `"` and `\`, which Lmod's Tcl reader cannot take (see
/// `modulefile`).
const AWKWARD_TCL_ROOT: &str = "cuda root's $HOME [y] {z} x";

/// Lmod's own bookkeeping, which `module unload` may leave behind.
fn without_lmod(vars: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    steady(vars)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("__LMOD_") && !k.starts_with("_ModuleTable"))
        .collect()
}

/// `module export` then Debian's real Lmod: `module load` sets what `cudaenv
/// env` sets and makes the glibc loader resolve libcudart into the stack, a
/// second cuda module replaces the first (family), and `module unload` gives
/// back the environment as it was (for Lua, a user's CUDA_HOME included; Tcl
/// modulefiles under Lmod unset it, see `modulefile`).
fn lmod_load_swap_unload(format: &str) {
    let t = TestEnv::with_root_name(if format == "lmod" {
        AWKWARD_ROOT
    } else {
        AWKWARD_TCL_ROOT
    });
    let v12 = fake_installed(&t.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    let v11 = fake_installed(&t.root, "11.8.0", "11.8.0", None);
    // Lmod 8.6 cannot run a Tcl modulefile whose own path has a space (its
    // translator gets the path as two words); the Lua ones can.
    let mods = t.tmp.path().join(if format == "lmod" {
        "modules dir"
    } else {
        "modules"
    });
    let out = t
        .cmd()
        .args(["module", "export", "--format", format])
        .arg(&mods)
        .output()
        .unwrap();
    assert_success(&out, "cudaenv module export");
    let ext = if format == "lmod" { ".lua" } else { "" };
    assert_eq!(
        crate::common::stdout(&out),
        format!(
            "cuda/11.8.0\t{}/cuda/11.8.0{ext}\ncuda/12.4.1-cudnn9.1.0\t{}/cuda/12.4.1-cudnn9.1.0{ext}\n",
            mods.display(),
            mods.display()
        )
    );
    // What `cudaenv env` sets for each, to compare with what the module sets.
    let env_of = |name: &str| {
        let out = t
            .cmd()
            .args(["exec", "--version", name, "--", "/usr/bin/env"])
            .output()
            .unwrap();
        assert_success(&out, "cudaenv exec");
        crate::common::stdout(&out)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<BTreeMap<_, _>>()
    };
    let lines: Vec<String> = vec![
        "source /usr/share/lmod/lmod/init/bash".into(),
        "module use \"$MODS\"".into(),
        "@step before".into(),
        "module load cuda/11.8.0".into(),
        "@step loaded".into(),
        cudart_probe(11),
        "module load cuda/12.4.1-cudnn9.1.0".into(),
        "@step swapped".into(),
        cudart_probe(12),
        "module list 2>&1 | grep -c 'cuda/' | sed 's/^/LOADED=/'".into(),
        "module unload cuda".into(),
        "@step after".into(),
    ];
    let mut vars = vec![("MODS", mods.to_str().unwrap())];
    if format == "lmod" {
        vars.push(("CUDA_HOME", "/opt/site cuda"));
    }
    let run = run_script(Sh::Bash, &t, &vars, &lines);
    for (step, version, name, cudart) in [
        ("loaded", &v11, "11.8.0", "11080"),
        ("swapped", &v12, "12.4.1+cudnn9.1.0", "12040"),
    ] {
        let got = run.step(step);
        let want = env_of(name);
        for k in [
            "PATH",
            "LD_LIBRARY_PATH",
            "CUDA_HOME",
            "CUDA_PATH",
            "CUDNN_PATH",
            "CUDAENV_ACTIVE",
        ] {
            assert_eq!(
                got.get(k),
                want.get(k),
                "{format} {step}: {k}\n{}",
                run.stderr
            );
        }
        assert!(
            got["PATH"].starts_with(&format!("{}:", version.join("bin").display())),
            "{format} {step}: {}",
            got["PATH"]
        );
        assert_eq!(
            got.get("CUDART").map(String::as_str),
            Some(cudart),
            "{format} {step}\n{}",
            run.stderr
        );
    }
    assert_eq!(
        run.step("swapped").get("LOADED").map(String::as_str),
        Some("1"),
        "{}",
        run.stderr
    );
    let (before, after) = (
        without_lmod(run.step("before")),
        without_lmod(run.step("after")),
    );
    assert!(
        before == after,
        "{format}: unload must give back the environment; differences: {:?}",
        differences(&before, &after)
    );
    if format == "lmod" {
        assert_eq!(run.step("after")["CUDA_HOME"], "/opt/site cuda");
    }
}

#[test]
fn lmod_lua_modulefiles_load_swap_and_unload_cleanly() {
    lmod_load_swap_unload("lmod");
}

#[test]
fn lmod_reads_tcl_modulefiles_that_load_swap_and_unload_cleanly() {
    lmod_load_swap_unload("tcl");
}

/// What `module export` refuses: a file of that name it did not write (left
/// as it was), `system`, a spec nothing matches, a Tcl modulefile for a path
/// Lmod would misread; and what it does: a spec exports its newest match,
/// and a second export replaces its own files.
#[test]
fn module_export_replaces_only_its_own_files_and_refuses_what_it_cannot_write() {
    let t = TestEnv::new();
    fake_installed(&t.root, "12.4.1", "12.4.1", None);
    fake_installed(&t.root, "12.6.3", "12.6.3", None);
    let mods = t.tmp.path().join("mods");
    let export = |args: &[&str]| {
        t.cmd()
            .args(["module", "export"])
            .args(args)
            .arg(&mods)
            .output()
            .unwrap()
    };

    let out = export(&["12"]);
    assert_success(&out, "export 12");
    assert_eq!(
        crate::common::stdout(&out),
        format!("cuda/12.6.3\t{}/cuda/12.6.3.lua\n", mods.display())
    );
    let again = export(&["12.6", "12.4"]);
    assert_success(&again, "export again");
    assert!(mods.join("cuda/12.4.1.lua").is_file());

    let site = mods.join("cuda/12.4.1");
    std::fs::write(&site, "#%Module1.0\nsetenv SITE 1\n").unwrap();
    let out = export(&["--format", "tcl", "12.4"]);
    let err = assert_code(&out, 1, "a site's own modulefile");
    assert!(
        err.contains(&*site.to_string_lossy()) && err.contains("not written by cudaenv"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&site).unwrap(),
        "#%Module1.0\nsetenv SITE 1\n"
    );

    let err = assert_code(&export(&["system"]), 2, "system");
    assert!(err.contains("`system` is not a cudaenv version"), "{err}");
    let err = assert_code(&export(&["11.8"]), 3, "not installed");
    assert!(err.contains("version `11.8` is not installed"), "{err}");
    assert!(crate::common::stdout(&export(&["11.8"])).is_empty());

    let q = TestEnv::with_root_name("root \"quoted\"");
    fake_installed(&q.root, "12.4.1", "12.4.1", None);
    let out = q
        .cmd()
        .args(["module", "export", "--format", "tcl"])
        .arg(q.tmp.path().join("mods"))
        .output()
        .unwrap();
    let err = assert_code(&out, 2, "a quote in a Tcl prepend-path");
    assert!(
        err.contains("root \"quoted\"") && err.contains("--format lmod"),
        "{err}"
    );
    assert!(!q.tmp.path().join("mods/cuda/12.4.1").exists());
}

// --- the examples of docs/clusters.md, read from the file ------------------

const CLUSTERS_MD: &str = include_str!("../../docs/clusters.md");

/// The code block after `<!-- KIND: NAME -->` in docs/clusters.md.
pub(crate) fn doc_block(kind: &str, name: &str) -> String {
    let marker = format!("<!-- {kind}: {name} -->\n");
    let at = CLUSTERS_MD
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/clusters.md has no {marker:?}"));
    let rest = &CLUSTERS_MD[at + marker.len()..];
    assert!(
        rest.starts_with("```"),
        "{marker:?} is not followed by a code block"
    );
    let body = &rest[rest.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_owned()
}

/// A console block's commands (`$ ` lines) with the output shown after each.
fn console(block: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => out.push((cmd.to_owned(), String::new())),
            None => {
                let last = out.last_mut().expect("output before the first command");
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
    }
    out
}

/// Runs a console block's commands one after the other in one `bash`
/// (what `shell` starts), stdout and stderr together as a terminal shows
/// them, and compares each command's output with the block's, after
/// replacing the documented paths with `subs`.
fn run_console(kind_name: &str, mut shell: Command, prelude: &str, subs: &[(&str, &Path)]) {
    let mut block = doc_block("console", kind_name);
    for (from, to) in subs {
        block = block.replace(from, to.to_str().unwrap());
    }
    let steps = console(&block);
    let mut script = format!("{prelude}\n");
    for (i, (cmd, _)) in steps.iter().enumerate() {
        script.push_str(&format!("printf '@@{i}\\n'\n{{ {cmd}\n}} 2>&1\n"));
    }
    let out = shell
        .args(["--noprofile", "--norc", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut got: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("@@") {
            got.push(String::new());
        } else if let Some(last) = got.last_mut() {
            last.push_str(line);
        }
    }
    assert_eq!(
        got.len(),
        steps.len(),
        "{kind_name}: the script stopped early\n{text}\n{}",
        crate::common::stderr(&out)
    );
    for ((cmd, want), got) in steps.iter().zip(&got) {
        assert_eq!(got, want, "docs/clusters.md `{kind_name}`: `$ {cmd}`");
    }
}

/// `bash` as `nobody` when the tests run as root (as the user of a system
/// root), else as this user.
fn bash_as_user(home: &Path, vars: &[(&str, &Path)]) -> Command {
    let mut c = if crate::reliability::support::is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            "bash",
        ]);
        c
    } else {
        Command::new("bash")
    };
    c.env_clear()
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .current_dir(home);
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

#[test]
fn docs_clusters_examples_run_as_shown() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The documented paths are written unquoted: no spaces in these.
    let (sys, toolkit, mods, home) = (
        base.join("opt/cudaenv"),
        base.join("cuda-12.4"),
        base.join("modulefiles"),
        base.join("home"),
    );
    crate::common::fake_toolkit(&toolkit, "12.4.1", None);
    std::fs::create_dir_all(home.join("project")).unwrap();
    let bin_dir = crate::common::bin().parent().unwrap();
    let path = |first: &Path| {
        PathBuf::from(format!(
            "{}:{}:/usr/bin:/bin",
            first.display(),
            bin_dir.display()
        ))
    };
    let subs: [(&str, &Path); 4] = [
        ("/opt/cudaenv", &sys),
        ("/usr/local/cuda-12.4", &toolkit),
        ("/opt/modulefiles", &mods),
        ("/home/me", &home),
    ];

    // The administrator (this process).
    let mut admin = Command::new("bash");
    admin
        .env_clear()
        .env("HOME", base)
        .env("NO_COLOR", "1")
        .env("PATH", path(bin_dir))
        .current_dir(base);
    run_console("admin", admin, "", &subs);

    // A user of it.
    if crate::reliability::support::is_root() {
        let st = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&home)
            .status()
            .unwrap();
        assert!(st.success());
    }
    let shims = home.join(".cudaenv/shims");
    let user = |vars: &[(&str, &Path)]| {
        let mut v = vec![("CUDAENV_SYSTEM_ROOT", sys.as_path())];
        v.extend_from_slice(vars);
        bash_as_user(&home, &v)
    };
    let user_path = path(&shims);
    run_console("user", user(&[("PATH", &user_path)]), "", &subs);

    // The job script, as sbatch would run it: from elsewhere, with
    // SLURM_SUBMIT_DIR naming the project.
    let project = home.join("project");
    let job = home.join("job.sh");
    std::fs::write(&job, doc_block("script", "slurm")).unwrap();
    std::fs::write(
        project.join("train.py"),
        "import ctypes\nv = ctypes.c_int()\nctypes.CDLL('libcudart.so.12').cudaRuntimeGetVersion(ctypes.byref(v))\nprint('libcudart', v.value)\n",
    )
    .unwrap();
    let plain_path = path(Path::new("/usr/local/bin"));
    let out = user(&[("PATH", &plain_path), ("SLURM_SUBMIT_DIR", &project)])
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&out, "the Slurm job script");
    assert_eq!(
        crate::common::stdout(&out),
        "Cuda compilation tools, release 12.4, V12.4.131\nlibcudart 12040\n"
    );

    // An administrator who lets group members write `versions/`.
    std::fs::set_permissions(sys.join("versions"), std::fs::Permissions::from_mode(0o775)).unwrap();
    let mut unsafe_user = user(&[("PATH", &user_path)]);
    unsafe_user.current_dir(&project);
    run_console("unsafe", unsafe_user, "", &subs);

    // Modules, from a root with the versions the block names.
    let t = TestEnv::new();
    fake_installed(&t.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    fake_installed(&t.root, "11.8.0", "11.8.0", None);
    let mut admin = Command::new("bash");
    admin
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("NO_COLOR", "1")
        .env("PATH", path(bin_dir))
        .current_dir(&t.home);
    run_console(
        "modules",
        admin,
        "source /usr/share/lmod/lmod/init/bash",
        &subs,
    );
}

/// Debian's Environment Modules, unpacked by scripts/test.sh (the package
/// conflicts with lmod, so it is not installed).
fn environment_modules_cmd() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/debian/environment-modules/usr/lib/modulecmd.tcl");
    assert!(
        p.exists(),
        "{} is needed by the tests: run scripts/test.sh (it unpacks Debian's environment-modules)",
        p.display()
    );
    p
}

/// Environment Modules' own bookkeeping.
fn without_modules(vars: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    steady(vars)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("__MODULES_") && !k.starts_with("BASH_FUNC_module"))
        .collect()
}

/// Tcl modulefiles under Environment Modules 5: `module load` sets what
/// `cudaenv env` sets and the loader resolves libcudart into the stack,
/// `conflict cuda` refuses a second CUDA (the first stays), and `module
/// unload` gives back the environment, a user's CUDA_HOME included
/// (`pushenv`).
#[test]
fn environment_modules_tcl_modulefiles_load_conflict_and_unload_cleanly() {
    let modulecmd = environment_modules_cmd();
    let t = TestEnv::with_root_name(AWKWARD_TCL_ROOT);
    let v11 = fake_installed(&t.root, "11.8.0", "11.8.0", None);
    fake_installed(&t.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    let mods = t.tmp.path().join("modules dir");
    let out = t
        .cmd()
        .args(["module", "export", "--format", "tcl"])
        .arg(&mods)
        .output()
        .unwrap();
    assert_success(&out, "cudaenv module export --format tcl");
    let exec_env = {
        let out = t
            .cmd()
            .args(["exec", "--version", "11.8.0", "--", "/usr/bin/env"])
            .output()
            .unwrap();
        crate::common::stdout(&out)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<BTreeMap<_, _>>()
    };
    let lines: Vec<String> = vec![
        "module() { eval \"$(tclsh \"$MODULECMD\" bash \"$@\")\"; }".into(),
        "module use \"$MODS\"".into(),
        "@step before".into(),
        "module load cuda/11.8.0".into(),
        "@step loaded".into(),
        cudart_probe(11),
        "module load cuda/12.4.1-cudnn9.1.0; echo SECOND=$?".into(),
        "@step second".into(),
        "module unload cuda".into(),
        "@step after".into(),
    ];
    let run = run_script(
        Sh::Bash,
        &t,
        &[
            ("MODS", mods.to_str().unwrap()),
            ("MODULECMD", modulecmd.to_str().unwrap()),
            ("CUDA_HOME", "/opt/site cuda"),
        ],
        &lines,
    );
    let loaded = run.step("loaded");
    for k in [
        "PATH",
        "LD_LIBRARY_PATH",
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDNN_PATH",
        "CUDAENV_ACTIVE",
    ] {
        assert_eq!(
            loaded.get(k),
            exec_env.get(k),
            "loaded: {k}\n{}",
            run.stderr
        );
    }
    assert!(loaded["PATH"].starts_with(&format!("{}:", v11.join("bin").display())));
    assert_eq!(
        loaded.get("CUDART").map(String::as_str),
        Some("11080"),
        "{}",
        run.stderr
    );
    // Printed after the `loaded` step's variables: the second load failed.
    assert_eq!(
        loaded.get("SECOND").map(String::as_str),
        Some("1"),
        "{}",
        run.stderr
    );
    let second = run.step("second");
    assert!(run.stderr.contains("conflict"), "{}", run.stderr);
    assert_eq!(
        second.get("CUDAENV_ACTIVE").map(String::as_str),
        Some("11.8.0")
    );
    let (before, after) = (
        without_modules(run.step("before")),
        without_modules(run.step("after")),
    );
    assert!(
        before == after,
        "unload must give back the environment; differences: {:?}",
        differences(&before, &after)
    );
    assert_eq!(run.step("after")["CUDA_HOME"], "/opt/site cuda");
}
