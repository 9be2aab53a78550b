//! Tab completion, man pages and help topics, in the real shells.
//!
//! bash and zsh run interactively inside tmux: the test types `cudaenv lo`,
//! presses TAB and reads the screen, so the shells' own completion machinery
//! (readline's programmable completion, zsh's compsys after `compinit`) calls
//! the registered completer as it would for a user. fish answers
//! `complete -C LINE` with exactly what TAB would offer. Each run has one
//! installed version, `12.4.1+cudnn9.1.0`, which must be offered where a
//! version is expected.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;

const VERSION: &str = "12.4.1+cudnn9.1.0";

fn env_with_version() -> TestEnv {
    let t = TestEnv::new();
    fake_installed(&t.root, VERSION, "12.4.1", Some("9.1.0.70"));
    t
}

/// A shell on a tmux pane of its own server (socket in the test's tmp dir).
struct Pane {
    socket: std::path::PathBuf,
}

impl Pane {
    fn start(t: &TestEnv, shell: &str) -> Pane {
        let socket = t.tmp.path().join("tmux.sock");
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            bin().parent().unwrap().display()
        );
        let ok = Command::new("tmux")
            .env_clear()
            .env("HOME", &t.home)
            .env("CUDAENV_ROOT", &t.root)
            .env("PATH", &path)
            .env("TERM", "xterm")
            .env("NO_COLOR", "1")
            .current_dir(&t.home)
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "150",
                "-y",
                "40",
            ])
            .arg(shell)
            .status()
            .expect("tmux runs (scripts/test.sh installs it)");
        assert!(ok.success());
        Pane { socket }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `text` literally, then the named keys (`Tab`, `Enter`).
    fn send(&self, text: &str, keys: &[&str]) {
        if !text.is_empty() {
            self.tmux(&["send-keys", "-t", "0", "-l", text]);
        }
        for k in keys {
            self.tmux(&["send-keys", "-t", "0", k]);
        }
    }

    fn screen(&self) -> String {
        // -N keeps trailing spaces: a completed word ends in one.
        self.tmux(&["capture-pane", "-p", "-N", "-t", "0"])
    }

    /// Waits until the screen shows `want` (a shell and its completer take
    /// their time on a busy machine), else fails with the screen.
    fn expect(&self, want: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(want) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the screen never showed {want:?}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// Loads the completions in an interactive shell, then checks that TAB
/// completes a subcommand and offers the installed version.
fn complete_interactively(shell: &str, setup: &str) {
    let t = env_with_version();
    let pane = Pane::start(&t, shell);
    pane.send(setup, &["Enter"]);
    pane.send("echo loaded-$((6*7))", &["Enter"]);
    pane.expect("loaded-42");
    // `loca`: `lo` alone is also `lock`.
    pane.send("cudaenv loca", &["Tab"]);
    pane.expect("cudaenv local ");
    // An empty word is offered the options too; one digit picks the version.
    pane.send("1", &["Tab"]);
    pane.expect(&format!("cudaenv local {VERSION}"));
    pane.send("", &["C-u"]);
    pane.send("cudaenv uninstall 1", &["Tab"]);
    pane.expect(&format!("cudaenv uninstall {VERSION}"));
}

#[test]
fn bash_completes_subcommands_and_installed_versions() {
    complete_interactively(
        "bash --norc --noprofile",
        r#"PS1='$ '; eval "$(cudaenv completions bash)""#,
    );
}

#[test]
fn zsh_completes_subcommands_and_installed_versions() {
    complete_interactively(
        "zsh -f",
        r#"PS1='%% '; autoload -U compinit && compinit -u && eval "$(cudaenv completions zsh)""#,
    );
}

/// fish's `complete -C` prints what TAB offers, one `value<TAB>description`
/// per line.
fn fish_complete(t: &TestEnv, line: &str) -> Vec<String> {
    let script = format!("cudaenv completions fish | source; complete -C '{line}'");
    let out = Command::new("fish")
        .env_clear()
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                bin().parent().unwrap().display()
            ),
        )
        .env("XDG_CONFIG_HOME", t.tmp.path().join("config"))
        .env("XDG_DATA_HOME", t.tmp.path().join("data"))
        .args(["--no-config", "-c", &script])
        .output()
        .unwrap();
    assert_success(&out, "fish complete -C");
    // Options are offered too; keep the values.
    stdout(&out)
        .lines()
        .filter(|l| !l.starts_with('-'))
        .map(String::from)
        .collect()
}

#[test]
fn fish_completes_subcommands_and_installed_versions() {
    let t = env_with_version();
    let subs = fish_complete(&t, "cudaenv lo");
    assert!(subs.iter().any(|l| l.starts_with("local\t")), "{subs:?}");
    assert!(!subs.iter().any(|l| l.starts_with("install")), "{subs:?}");
    let versions = fish_complete(&t, "cudaenv local ");
    assert_eq!(
        versions,
        [
            format!("{VERSION}\tCUDA 12.4.1 + cuDNN 9.1.0.70"),
            "system\twhatever CUDA is on PATH, no cudaenv version".to_string()
        ]
    );
    let topics = fish_complete(&t, "cudaenv help exi");
    assert_eq!(topics, ["exit-codes\tExit codes"]);
    let commands = fish_complete(&t, "cudaenv help exe");
    assert_eq!(commands, ["exec\tRun a command with a version activated"]);
    let names = fish_complete(&t, "cudaenv uninstall ");
    assert_eq!(names, [format!("{VERSION}\tCUDA 12.4.1 + cuDNN 9.1.0.70")]);
}

#[test]
fn completions_name_this_executable_and_reject_unknown_shells() {
    let t = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "pwsh"] {
        let script = t.ok(&["completions", shell]);
        assert!(
            script.contains(&bin().display().to_string()),
            "{shell}: {script}"
        );
        assert!(script.contains("CUDAENV_COMPLETE"), "{shell}");
    }
    let out = t.run(&["completions", "tcsh"]);
    assert_code(&out, 2, "unknown shell");
}

#[test]
fn man_prints_roff_and_writes_every_page() {
    let t = TestEnv::new();
    let page = t.ok(&["man"]);
    assert!(page.contains(".TH cudaenv 1"), "{page}");
    assert!(
        page.contains("cudaenv\\-install(1)"),
        "the page lists the commands"
    );
    let install = t.ok(&["man", "install"]);
    assert!(install.contains(".TH cudaenv-install 1"), "{install}");
    let dir = t.tmp.path().join("man1");
    t.ok(&["man", "--dir", dir.to_str().unwrap()]);
    for page in ["cudaenv.1", "cudaenv-install.1", "cudaenv-cache-clean.1"] {
        assert!(dir.join(page).is_file(), "{page}");
    }
    // Hidden, internal commands get no page.
    assert!(!dir.join("cudaenv-hook-env.1").exists());
    // man(1) itself renders the page, examples included.
    let out = Command::new("man")
        .arg("-l")
        .arg(dir.join("cudaenv-install.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs (man-db, in scripts/test.sh's REQUIREMENTS)");
    assert_success(&out, "man -l");
    let text = stdout(&out);
    assert!(text.contains("cudaenv-install"), "{text}");
    assert!(text.contains("cudaenv install 12.4+cudnn9"), "{text}");
}

#[test]
fn help_shows_topics_and_commands() {
    let t = TestEnv::new();
    let top = t.ok(&["help"]);
    assert!(
        top.contains("Documentation (`cudaenv help TOPIC`):"),
        "{top}"
    );
    assert!(top.contains("  exit-codes"), "{top}");
    let topic = t.run(&["help", "shell"]);
    assert_success(&topic, "help shell");
    assert!(stdout(&topic).starts_with("# Shell integration"));
    assert_eq!(
        stderr(&topic),
        "hint: the options of the `shell` command: `cudaenv shell --help`\n"
    );
    let cmd = t.ok(&["help", "cache", "clean"]);
    assert!(cmd.contains("Usage: cudaenv cache clean"), "{cmd}");
    let bad = t.run(&["help", "nope"]);
    insta::assert_snapshot!(assert_code(&bad, 2, "help nope"), @r"
    error: `nope` is neither a help topic nor a command
    hint: topics: ci, clusters, compat, configuration, doctor, environment, exit-codes, frameworks, install, layout, lock, performance, reliability, shell, sources, verify, versions, windows, zh-cn; `cudaenv help` lists the commands too
    ");
}
