//! Shell integration, driven through real interactive bash, zsh and fish.
//!
//! Each test feeds a script to `SHELL -i` on stdin, so the shell prints a
//! prompt, and runs its prompt hooks, before every line, exactly as for a user
//! typing. After each step the script prints a marker and the exported
//! environment (`/usr/bin/env`), and the test compares PATH, LD_LIBRARY_PATH,
//! CUDA_HOME, CUDA_PATH, CUDNN_PATH and CUDAENV_ACTIVE with the exact expected
//! values, including "unset stays unset" and "no empty element".

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cudaenv::spec::VersionName;
use cudaenv::store::{Kind, Metadata, Store};

use crate::common::{TestEnv, bin};

pub(crate) const BASE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
const USER_CUDA_HOME: &str = "/opt/user's cuda";

/// Creates a complete version `name` in the store the way an install does
/// (staging + commit): `cuda/bin` with the given tools (each prints its
/// version name and the CUDA_HOME it sees), `cuda/lib64`, `cudnn/lib`.
pub fn fake_version(root: &Path, name: &str, tools: &[&str]) -> PathBuf {
    let store = Store::new(root);
    let staging = store.stage(&VersionName::parse(name).unwrap()).unwrap();
    let bin_dir = staging.path().join("cuda/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::create_dir_all(staging.path().join("cuda/lib64")).unwrap();
    std::fs::create_dir_all(staging.path().join("cudnn/lib")).unwrap();
    for tool in tools {
        let p = bin_dir.join(tool);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\necho \"{tool} from {name} CUDA_HOME=$CUDA_HOME depth=$CUDAENV_SHIM_DEPTH args=$*\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut meta = Metadata::new(Kind::Installed, "test");
    meta.bin_dirs = vec!["cuda/bin".into()];
    meta.lib_dirs = vec!["cuda/lib64".into(), "cudnn/lib".into()];
    meta.home = Some("cuda".into());
    meta.cudnn_home = Some("cudnn".into());
    staging.commit(&meta).unwrap().dir
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Sh {
    Bash,
    Zsh,
    Fish,
}

impl Sh {
    fn command(self) -> Command {
        let mut c = match self {
            Sh::Bash => {
                let mut c = Command::new("bash");
                c.args(["--norc", "--noprofile", "-i"]);
                c
            }
            Sh::Zsh => {
                let mut c = Command::new("zsh");
                c.args(["-f", "-i"]);
                c
            }
            // fish fires `fish_prompt` only when it really prompts, i.e.
            // on a terminal: run it on a pty made by script(1).
            Sh::Fish => {
                let mut c = Command::new("script");
                c.args(["-qfec", "fish --no-config -i", "/dev/null"]);
                c
            }
        };
        c.env("TERM", "dumb");
        c
    }

    fn init(self, exe: &Path, extra: &str) -> String {
        let exe = quote(exe.to_str().unwrap());
        match self {
            Sh::Bash => format!("eval \"$({exe} init bash{extra})\""),
            Sh::Zsh => format!("eval \"$({exe} init zsh{extra})\""),
            Sh::Fish => format!("{exe} init fish{extra} | source"),
        }
    }

    /// Prepends a directory to PATH the way a user would.
    fn prepend_path(self, dir: &str) -> String {
        match self {
            Sh::Fish => format!("set -gx PATH {} $PATH", quote(dir)),
            _ => format!("export PATH={}:\"$PATH\"", quote(dir)),
        }
    }
}

/// Single-quotes for all three shells (no `'` or `\` inside, as fish
/// treats `\` specially inside single quotes).
fn quote(s: &str) -> String {
    assert!(!s.contains('\'') && !s.contains('\\'), "{s}");
    format!("'{s}'")
}

/// A variable reference that every shell expands to one word: paths with
/// quotes reach the scripts through the environment, never through quoting.
fn env_ref(var: &str) -> String {
    format!("\"${var}\"")
}

/// One run of a script: the environment after each step, and stderr.
pub(crate) struct Run {
    pub(crate) steps: Vec<(String, BTreeMap<String, String>)>,
    pub(crate) stderr: String,
}

impl Run {
    pub(crate) fn step(&self, name: &str) -> &BTreeMap<String, String> {
        &self
            .steps
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no step {name}; stderr:\n{}", self.stderr))
            .1
    }
}

/// Runs `lines` in an interactive `sh`; a line `@step NAME` dumps the environment.
pub(crate) fn run_script(sh: Sh, t: &TestEnv, extra_env: &[(&str, &str)], lines: &[String]) -> Run {
    let mut script = String::new();
    for line in lines {
        if let Some(name) = line.strip_prefix("@step ") {
            script.push_str(&format!("echo @@{name}; /usr/bin/env\n"));
        } else {
            script.push_str(line);
            script.push('\n');
        }
    }
    script.push_str("exit\n");
    let mut cmd = sh.command();
    cmd.env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("PATH", BASE_PATH)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .current_dir(&t.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // A pty (fish) carries stderr on stdout: keep both for messages and checks.
    let stderr = format!(
        "{}\n--- stdout ---\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut steps: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(name) = line.strip_prefix("@@") {
            steps.push((name.to_owned(), BTreeMap::new()));
        } else if let Some((_, vars)) = steps.last_mut()
            && let Some((k, v)) = line.split_once('=')
        {
            vars.insert(k.to_owned(), v.to_owned());
        }
    }
    Run { steps, stderr }
}

/// Expected values of the watched variables (`None`: unset).
type Expect = [(&'static str, Option<String>); 6];

fn check(run: &Run, step: &str, expect: &Expect) {
    let got = run.step(step);
    for (name, want) in expect {
        assert_eq!(
            got.get(*name),
            want.as_ref(),
            "step `{step}`: {name}\nstderr:\n{}",
            run.stderr
        );
        if let Some(v) = got.get(*name)
            && name.ends_with("PATH")
            && *name != "CUDA_PATH"
            && *name != "CUDNN_PATH"
        {
            assert!(
                !v.split(':').any(str::is_empty),
                "step `{step}`: {name} has an empty element: {v:?}"
            );
        }
    }
}

struct Version {
    bin: String,
    libs: String,
    home: String,
    cudnn: String,
    name: &'static str,
}

impl Version {
    fn new(root: &Path, name: &'static str) -> Version {
        let dir = root.join("versions").join(name);
        let s = |p: &str| dir.join(p).to_str().unwrap().to_owned();
        Version {
            bin: s("cuda/bin"),
            libs: format!("{}:{}", s("cuda/lib64"), s("cudnn/lib")),
            home: s("cuda"),
            cudnn: s("cudnn"),
            name,
        }
    }

    /// Active, with `path_rest` after the version's bin directory.
    fn active(&self, path_rest: &str) -> Expect {
        [
            ("PATH", Some(format!("{}:{path_rest}", self.bin))),
            ("LD_LIBRARY_PATH", Some(self.libs.clone())),
            ("CUDA_HOME", Some(self.home.clone())),
            ("CUDA_PATH", Some(self.home.clone())),
            ("CUDNN_PATH", Some(self.cudnn.clone())),
            ("CUDAENV_ACTIVE", Some(self.name.to_owned())),
        ]
    }
}

/// Nothing active: the user's own values.
fn inactive(path: &str) -> Expect {
    [
        ("PATH", Some(path.to_owned())),
        ("LD_LIBRARY_PATH", None),
        ("CUDA_HOME", Some(USER_CUDA_HOME.to_owned())),
        ("CUDA_PATH", None),
        ("CUDNN_PATH", None),
        ("CUDAENV_ACTIVE", None),
    ]
}

/// A root and projects whose paths have spaces and quotes.
fn setup() -> (TestEnv, Version, Version, PathBuf, PathBuf) {
    let mut t = TestEnv::new();
    t.root = t.tmp.path().join("cuda env's \"root\"");
    fake_version(&t.root, "alpha", &["nvcc", "ptxas"]);
    fake_version(&t.root, "beta", &["nvcc", "ncu"]);
    let out = t.cmd().arg("rehash").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let proj = t.tmp.path().join("my \"proj\" it's");
    let nested = proj.join("sub dir/nested");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(proj.join(".cuda-version"), "alpha\n").unwrap();
    std::fs::write(nested.join(".cuda-version"), "beta\n").unwrap();
    let (a, b) = (
        Version::new(&t.root, "alpha"),
        Version::new(&t.root, "beta"),
    );
    (t, a, b, proj, nested)
}

fn walk_through_projects(sh: Sh) {
    let (t, a, b, proj, nested) = setup();
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    let base = format!("{shims}:{BASE_PATH}");
    let mine = format!("/mine:{base}");
    let lines: Vec<String> = vec![
        sh.init(bin(), ""),
        "@step start".into(),
        format!("cd {}", env_ref("PROJ")),
        "@step proj".into(),
        format!("cd {}", env_ref("NESTED")),
        "@step nested".into(),
        // The user's own PATH edit, made while a version is active, survives.
        sh.prepend_path("/mine"),
        format!("cd {}", env_ref("PROJ")),
        "@step back-to-proj".into(),
        "cd ~".into(),
        "@step out".into(),
        "cudaenv shell beta".into(),
        "@step shell-beta".into(),
        format!("cd {}", env_ref("PROJ")),
        "@step shell-beta-in-proj".into(),
        "cudaenv shell --unset".into(),
        "@step shell-unset".into(),
        // Uninstalled while active: the hook notices and gives everything back.
        "command rm -rf \"$CUDAENV_ROOT/versions/alpha\"".into(),
        "@step uninstalled".into(),
        "cd ~".into(),
        "@step out-again".into(),
        // The real `cudaenv uninstall` (it rehashes; the hook sees the new generation).
        format!("cd {}", env_ref("NESTED")),
        "@step nested-again".into(),
        "cudaenv uninstall beta -y".into(),
        "@step uninstalled-by-command".into(),
    ];
    let proj_s = proj.to_str().unwrap();
    let nested_s = nested.to_str().unwrap();
    let run = run_script(
        sh,
        &t,
        &[
            ("CUDA_HOME", USER_CUDA_HOME),
            ("PROJ", proj_s),
            ("NESTED", nested_s),
        ],
        &lines,
    );
    check(&run, "start", &inactive(&base));
    check(&run, "proj", &a.active(&base));
    check(&run, "nested", &b.active(&base));
    check(&run, "back-to-proj", &a.active(&mine));
    check(&run, "out", &inactive(&mine));
    check(&run, "shell-beta", &b.active(&mine));
    check(&run, "shell-beta-in-proj", &b.active(&mine));
    check(&run, "shell-unset", &a.active(&mine));
    check(&run, "uninstalled", &inactive(&mine));
    assert!(
        run.stderr.contains("version `alpha` is not installed"),
        "{}",
        run.stderr
    );
    check(&run, "out-again", &inactive(&mine));
    check(&run, "nested-again", &b.active(&mine));
    check(&run, "uninstalled-by-command", &inactive(&mine));
    assert!(
        run.stderr.contains("version `beta` is not installed"),
        "{}",
        run.stderr
    );
}

#[test]
fn bash_walks_through_projects() {
    walk_through_projects(Sh::Bash);
}

#[test]
fn zsh_walks_through_projects() {
    walk_through_projects(Sh::Zsh);
}

#[test]
fn fish_walks_through_projects() {
    walk_through_projects(Sh::Fish);
}

/// The hook must not start a process when nothing changed: the init code is
/// pointed at a wrapper that logs every start of the binary, and the script
/// records the number of `hook-env` starts at each step.
fn hook_runs_binary_only_on_change(sh: Sh) {
    let (t, a, b, proj, _nested) = setup();
    let (rc, log) = logged_init(sh, &t);
    let count = hook_count(sh);
    let lines: Vec<String> = vec![
        source(sh, &rc),
        "cd \"$PROJ\"".into(),
        count.into(),
        "@step settled".into(),
        "true".into(),
        "true".into(),
        "true".into(),
        count.into(),
        "@step idle".into(),
        // Rewritten with the same content: nothing relevant changed.
        "echo alpha > \"$PROJ/.cuda-version\"".into(),
        "true".into(),
        count.into(),
        "@step same-content".into(),
        "echo beta > \"$PROJ/.cuda-version\"".into(),
        count.into(),
        "@step changed".into(),
    ];
    let run = run_script(
        sh,
        &t,
        &[
            ("CUDA_HOME", USER_CUDA_HOME),
            ("PROJ", proj.to_str().unwrap()),
            ("LOG", log.to_str().unwrap()),
        ],
        &lines,
    );
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    let base = format!("{shims}:{BASE_PATH}");
    check(&run, "settled", &a.active(&base));
    check(&run, "changed", &b.active(&base));
    let starts = |step: &str| -> u32 { run.step(step)["STARTS"].parse().unwrap() };
    let settled = starts("settled");
    assert!(settled >= 1, "{sh:?}: the hook never ran:\n{}", run.stderr);
    assert_eq!(
        starts("idle"),
        settled,
        "{sh:?}: idle prompts started the binary"
    );
    assert_eq!(
        starts("same-content"),
        settled,
        "{sh:?}: an unchanged .cuda-version started the binary"
    );
    assert_eq!(
        starts("changed"),
        settled + 1,
        "{sh:?}: a changed pin must be noticed once"
    );
}

/// The init code for `sh`, pointed at a wrapper that logs every start of
/// the binary (one line per start: its first argument) to the returned log.
fn logged_init(sh: Sh, t: &TestEnv) -> (PathBuf, PathBuf) {
    let dir = t.tmp.path().join("bindir");
    std::fs::create_dir_all(&dir).unwrap();
    let log = t.tmp.path().join("starts.log");
    std::fs::write(&log, "").unwrap();
    let wrapper = dir.join("cudaenv");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let name = format!("{sh:?}").to_lowercase();
    let init = t.cmd().args(["init", &name]).output().unwrap();
    assert!(init.status.success());
    // The init code names the running binary; point it at the logging wrapper.
    let code = String::from_utf8(init.stdout)
        .unwrap()
        .replace(bin().to_str().unwrap(), wrapper.to_str().unwrap());
    let rc = t.tmp.path().join("init-code");
    std::fs::write(&rc, code).unwrap();
    (rc, log)
}

fn source(sh: Sh, rc: &Path) -> String {
    match sh {
        Sh::Fish => format!("source {}", quote(rc.to_str().unwrap())),
        _ => format!(". {}", quote(rc.to_str().unwrap())),
    }
}

/// Sets STARTS to the number of `hook-env` runs so far.
fn hook_count(sh: Sh) -> &'static str {
    match sh {
        Sh::Fish => "set -gx STARTS (/usr/bin/grep -c hook-env $LOG)",
        _ => "export STARTS=$(/usr/bin/grep -c hook-env \"$LOG\")",
    }
}

#[test]
fn bash_hook_is_free_when_nothing_changed() {
    hook_runs_binary_only_on_change(Sh::Bash);
}

#[test]
fn zsh_hook_is_free_when_nothing_changed() {
    hook_runs_binary_only_on_change(Sh::Zsh);
}

#[test]
fn fish_hook_is_free_when_nothing_changed() {
    hook_runs_binary_only_on_change(Sh::Fish);
}

#[test]
fn bash_keeps_prompt_command_string_and_array() {
    let (t, a, _b, _proj, _nested) = setup();
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    for (form, decl) in [
        ("string", "PROMPT_COMMAND='user_pc'"),
        ("array", "PROMPT_COMMAND=(user_pc 'echo second >/dev/null')"),
    ] {
        let lines = vec![
            "user_pc() { export USER_PC_RAN=$((${USER_PC_RAN:-0}+1)); }".to_string(),
            decl.to_string(),
            Sh::Bash.init(bin(), ""),
            // Evaluating init twice (a re-sourced ~/.bashrc) adds the hook once.
            Sh::Bash.init(bin(), ""),
            "cd \"$PROJ\"".into(),
            "@step in".into(),
            "export PC_DECL=\"$(declare -p PROMPT_COMMAND)\"".into(),
            "@step decl".into(),
        ];
        let run = run_script(
            Sh::Bash,
            &t,
            &[
                ("CUDA_HOME", USER_CUDA_HOME),
                (
                    "PROJ",
                    t.tmp.path().join("my \"proj\" it's").to_str().unwrap(),
                ),
            ],
            &lines,
        );
        check(&run, "in", &a.active(&format!("{shims}:{BASE_PATH}")));
        let ran: u32 = run.step("in")["USER_PC_RAN"].parse().unwrap();
        assert!(
            ran >= 2,
            "{form}: the user's PROMPT_COMMAND ran {ran} times"
        );
        let decl = &run.step("decl")["PC_DECL"];
        assert_eq!(decl.matches("_cudaenv_hook").count(), 1, "{form}: {decl}");
        if form == "array" {
            assert!(decl.starts_with("declare -a"), "{decl}");
            assert!(decl.contains("echo second"), "{decl}");
        }
    }
}

#[test]
fn no_hook_gives_shims_only() {
    let (t, _a, _b, _proj, _nested) = setup();
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    for sh in [Sh::Bash, Sh::Zsh, Sh::Fish] {
        let lines = vec![
            sh.init(bin(), " --no-hook"),
            format!("cd {}", env_ref("PROJ")),
            "@step in".into(),
            // The shims resolve per directory all the same.
            "export SHIM_SAYS=\"$(nvcc)\"".into(),
            "@step shim".into(),
        ];
        let lines: Vec<String> = lines
            .into_iter()
            .map(|l| {
                if sh == Sh::Fish && l.starts_with("export SHIM_SAYS") {
                    "set -gx SHIM_SAYS (nvcc)".into()
                } else {
                    l
                }
            })
            .collect();
        let run = run_script(
            sh,
            &t,
            &[
                ("CUDA_HOME", USER_CUDA_HOME),
                (
                    "PROJ",
                    t.tmp.path().join("my \"proj\" it's").to_str().unwrap(),
                ),
            ],
            &lines,
        );
        check(&run, "in", &inactive(&format!("{shims}:{BASE_PATH}")));
        let says = &run.step("shim")["SHIM_SAYS"];
        assert!(
            says.starts_with("nvcc from alpha"),
            "{sh:?}: {says}\n{}",
            run.stderr
        );
    }
}

#[test]
fn init_without_shell_explains_on_stderr() {
    let t = TestEnv::new();
    let out = t
        .cmd()
        .arg("init")
        .env("SHELL", "/usr/bin/zsh")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "nothing to evaluate on stdout");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("Detected shell: zsh"), "{err}");
    assert!(err.contains("eval \"$(cudaenv init zsh)\""), "{err}");
    assert!(err.contains("~/.zshrc"), "{err}");
}

/// The hook follows `.tool-versions` as it follows `.cuda-version`: entering
/// a directory whose file has a `cuda` line activates it, editing the line in
/// place switches, removing the line gives back what the user had, and a
/// `.cuda-version` beside it wins.
fn follows_tool_versions(sh: Sh) {
    let (t, a, b, proj, _) = setup();
    std::fs::remove_file(proj.join(".cuda-version")).unwrap();
    let tools = proj.join(".tool-versions");
    std::fs::write(&tools, "python 3.11.9\ncuda alpha\n").unwrap();
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    let base = format!("{shims}:{BASE_PATH}");
    let write = |content: &str| format!("printf '{content}' > {}", env_ref("TOOLS"));
    let lines: Vec<String> = vec![
        sh.init(bin(), ""),
        format!("cd {}", env_ref("PROJ")),
        "@step entered".into(),
        write("python 3.11.9\\ncuda beta  # newer\\n"),
        "@step edited".into(),
        write("python 3.11.9\\n"),
        "@step no-cuda-line".into(),
        write("cuda beta\\n"),
        "printf 'alpha\\n' > .cuda-version".into(),
        "@step cuda-version-beside".into(),
        "cd ~".into(),
        "@step out".into(),
    ];
    let run = run_script(
        sh,
        &t,
        &[
            ("CUDA_HOME", USER_CUDA_HOME),
            ("PROJ", proj.to_str().unwrap()),
            ("TOOLS", tools.to_str().unwrap()),
        ],
        &lines,
    );
    check(&run, "entered", &a.active(&base));
    check(&run, "edited", &b.active(&base));
    check(&run, "no-cuda-line", &inactive(&base));
    check(&run, "cuda-version-beside", &a.active(&base));
    check(&run, "out", &inactive(&base));
}

#[test]
fn bash_follows_tool_versions() {
    follows_tool_versions(Sh::Bash);
}

#[test]
fn zsh_follows_tool_versions() {
    follows_tool_versions(Sh::Zsh);
}

#[test]
fn fish_follows_tool_versions() {
    follows_tool_versions(Sh::Fish);
}

/// A version of the system root, pinned by a project, is activated by the
/// hook, and idle prompts start no process (the hook finds the version's
/// marker in `$CUDAENV_SYSTEM_ROOT`); the administrator's rehash of the
/// system root is noticed once.
fn hook_follows_a_system_version(sh: Sh) {
    let t = TestEnv::new();
    let sys = t.tmp.path().join("system root");
    fake_version(&sys, "alpha", &["nvcc"]);
    let a = Version::new(&sys, "alpha");
    let proj = t.tmp.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(".cuda-version"), "alpha\n").unwrap();
    let (rc, log) = logged_init(sh, &t);
    let count = hook_count(sh);
    let lines: Vec<String> = vec![
        source(sh, &rc),
        "cd \"$PROJ\"".into(),
        count.into(),
        "@step settled".into(),
        "true".into(),
        "true".into(),
        count.into(),
        "@step idle".into(),
        "env CUDAENV_ROOT=\"$CUDAENV_SYSTEM_ROOT\" \"$CUDAENV\" rehash 2>/dev/null".into(),
        "true".into(),
        count.into(),
        "@step system-rehashed".into(),
    ];
    let run = run_script(
        sh,
        &t,
        &[
            ("CUDA_HOME", USER_CUDA_HOME),
            ("PROJ", proj.to_str().unwrap()),
            ("LOG", log.to_str().unwrap()),
            ("CUDAENV_SYSTEM_ROOT", sys.to_str().unwrap()),
            ("CUDAENV", bin().to_str().unwrap()),
        ],
        &lines,
    );
    let shims = t.root.join("shims").to_str().unwrap().to_owned();
    check(&run, "settled", &a.active(&format!("{shims}:{BASE_PATH}")));
    let starts = |step: &str| -> u32 { run.step(step)["STARTS"].parse().unwrap() };
    let settled = starts("settled");
    assert!(settled >= 1, "{sh:?}: the hook never ran:\n{}", run.stderr);
    assert_eq!(
        starts("idle"),
        settled,
        "{sh:?}: idle prompts started the binary"
    );
    assert_eq!(
        starts("system-rehashed"),
        settled + 1,
        "{sh:?}: the system root's rehash must be noticed once"
    );
}

#[test]
fn bash_hook_follows_a_system_version() {
    hook_follows_a_system_version(Sh::Bash);
}

#[test]
fn zsh_hook_follows_a_system_version() {
    hook_follows_a_system_version(Sh::Zsh);
}

#[test]
fn fish_hook_follows_a_system_version() {
    hook_follows_a_system_version(Sh::Fish);
}
