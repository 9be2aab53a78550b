//! `scripts/install.sh` as a new user runs it: a fresh HOME (Debian's
//! /etc/skel files, no cudaenv, no Rust), a PATH without the install
//! directory, and the user's login shell asked what it finds. The stack comes
//! from the live PyPI (CUDA 12.4.1's ~1 MB cudart wheel only); the binary is
//! this build's (`--binary`), so the test does not spend a release build on
//! `cargo install`, the one step it does not run.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::pypi::ONLY_CUDART;

const BASE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn fresh_home() -> TestEnv {
    let t = TestEnv::new();
    if Path::new("/etc/skel").is_dir() {
        let ok = Command::new("cp")
            .args(["-r", "/etc/skel/."])
            .arg(&t.home)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    t
}

fn install_sh(t: &TestEnv, shell: &str, extra: &[&str]) -> Output {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install.sh");
    Command::new("bash")
        .env_clear()
        .env("HOME", &t.home)
        .env("PATH", BASE_PATH)
        .env("SHELL", shell)
        .env("USER", "tester")
        .env("NO_COLOR", "1")
        .current_dir(&t.home)
        .arg(script)
        .args(extra)
        .arg("--binary")
        .arg(bin())
        .args(["12.4.1", "--", ONLY_CUDART])
        .output()
        .unwrap()
}

/// The closing advice: from "next steps" (or the line that replaces them) to
/// the end, with HOME written as `~`.
fn advice(t: &TestEnv, o: &Output) -> String {
    let err = stderr(o);
    let start = err
        .find("==> next steps")
        .or_else(|| err.find("==> cudaenv is on PATH"))
        .unwrap_or_else(|| panic!("no closing advice:\n{err}"));
    err[start..].replace(&t.home.display().to_string(), "~")
}

/// Everything under HOME except the shims' generation stamp, which every
/// rehash rewrites on purpose (the shell hook watches it; see src/activation/shims/mod.rs).
fn home_snapshot(t: &TestEnv) -> Vec<String> {
    snapshot(&t.home)
        .into_iter()
        .filter(|l| {
            !l.starts_with(".cudaenv/shims/.generation ") && !l.starts_with(".cudaenv/shims ")
        })
        .collect()
}

/// Debian's bash-completion, which loads per-command completion files on
/// demand (absent on a minimal system, and from scripts/test.sh's list).
fn bash_completion_present() -> bool {
    Path::new("/usr/share/bash-completion/bash_completion").is_file()
        || Path::new("/etc/bash_completion").is_file()
}

fn login_shell_finds(t: &TestEnv, shell: &str, query: &str) -> String {
    let o = Command::new(shell)
        .env_clear()
        .env("HOME", &t.home)
        .env("PATH", BASE_PATH)
        .env("TERM", "dumb")
        .args(["-l", "-i", "-c", query])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    stdout(&o).lines().last().unwrap_or_default().to_string()
}

#[test]
fn install_script_says_what_to_do_next_and_a_second_run_changes_nothing() {
    let t = fresh_home();
    let bashrc_before = std::fs::read(t.home.join(".bashrc")).ok();
    let o = install_sh(&t, "/bin/bash", &[]);
    assert_code(&o, 0, "install.sh");
    if bash_completion_present() {
        insta::assert_snapshot!(advice(&t, &o), @r#"
        ==> next steps (bash):
          1. add these lines to ~/.bashrc (or run this script again with --modify-rc):
               export PATH="$HOME/.cargo/bin:$PATH"
               eval "$(cudaenv init bash)"
          2. open a new shell (or: exec bash -l) so that `cudaenv` and its shell integration are there
          3. make the stack you installed the default, or pin it per project:
               cudaenv global 12.4.1
               cd PROJECT && cudaenv local 12.4.1
        ==> more: `cudaenv help` (topics: `cudaenv help shell`, `cudaenv help versions`)
        ==> changed: ~/.cargo/bin/cudaenv; completions and manual pages; the stack 12.4.1
        "#);
    } else {
        // Nothing would load the completion file: the rc file does.
        insta::assert_snapshot!(advice(&t, &o), @r#"
        ==> next steps (bash):
          1. add these lines to ~/.bashrc (or run this script again with --modify-rc):
               export PATH="$HOME/.cargo/bin:$PATH"
               eval "$(cudaenv init bash)"
               eval "$(cudaenv completions bash)"
          2. open a new shell (or: exec bash -l) so that `cudaenv` and its shell integration are there
          3. make the stack you installed the default, or pin it per project:
               cudaenv global 12.4.1
               cd PROJECT && cudaenv local 12.4.1
        ==> more: `cudaenv help` (topics: `cudaenv help shell`, `cudaenv help versions`)
        ==> changed: ~/.cargo/bin/cudaenv; completions and manual pages; the stack 12.4.1
        "#);
    }
    // No rc file is touched unless asked.
    assert_eq!(std::fs::read(t.home.join(".bashrc")).ok(), bashrc_before);
    assert!(!t.home.join(".zshrc").exists());
    assert!(
        t.home
            .join(".cudaenv/versions/12.4.1/lib64/libcudart.so.12")
            .is_file()
    );
    // Completions and man pages are where bash-completion and man look.
    let completion = t
        .home
        .join(".local/share/bash-completion/completions/cudaenv");
    assert!(
        std::fs::read_to_string(completion)
            .unwrap()
            .contains("CUDAENV_COMPLETE")
    );
    let man = Command::new("man")
        .env_clear()
        .env("HOME", &t.home)
        .env(
            "PATH",
            format!("{}/.cargo/bin:{BASE_PATH}", t.home.display()),
        )
        .args(["-w", "cudaenv-install"])
        .output()
        .expect("man runs (man-db, in scripts/test.sh's REQUIREMENTS)");
    assert_eq!(
        stdout(&man).trim(),
        t.home
            .join(".cargo/share/man/man1/cudaenv-install.1")
            .display()
            .to_string()
    );

    // Again: nothing changes, and it says so.
    let before = home_snapshot(&t);
    let o = install_sh(&t, "/bin/bash", &[]);
    assert_code(&o, 0, "install.sh again");
    let err = stderr(&o);
    assert!(err.contains("already installed, unchanged"), "{err}");
    assert!(
        err.ends_with("==> nothing changed: everything was already installed and set up\n"),
        "{err}"
    );
    assert_eq!(home_snapshot(&t), before);

    // zsh and fish users get their own lines.
    let o = install_sh(&t, "/usr/bin/zsh", &[]);
    assert_code(&o, 0, "install.sh for zsh");
    insta::assert_snapshot!(advice(&t, &o), @r#"
    ==> next steps (zsh):
      1. add these lines to ~/.zshrc (or run this script again with --modify-rc):
           export PATH="$HOME/.cargo/bin:$PATH"
           eval "$(cudaenv init zsh)"
           (( $+functions[compdef] )) && eval "$(cudaenv completions zsh)"
      2. open a new shell (or: exec zsh -l) so that `cudaenv` and its shell integration are there
      3. make the stack you installed the default, or pin it per project:
           cudaenv global 12.4.1
           cd PROJECT && cudaenv local 12.4.1
    ==> more: `cudaenv help` (topics: `cudaenv help shell`, `cudaenv help versions`)
    ==> nothing changed: everything was already installed and set up
    "#);
    let o = install_sh(&t, "/usr/bin/fish", &[]);
    assert_code(&o, 0, "install.sh for fish");
    let fish = advice(&t, &o);
    assert!(
        fish.contains("add these lines to ~/.config/fish/config.fish"),
        "{fish}"
    );
    assert!(
        fish.contains("       fish_add_path $HOME/.cargo/bin\n       cudaenv init fish | source\n"),
        "{fish}"
    );
}

#[test]
fn install_script_modify_rc_adds_the_lines_once() {
    let t = fresh_home();
    let o = install_sh(&t, "/bin/bash", &["--modify-rc"]);
    assert_code(&o, 0, "install.sh --modify-rc");
    let err = stderr(&o);
    // Without bash-completion, the rc file loads the completions itself.
    let completions = if bash_completion_present() {
        ""
    } else {
        "eval \"$(cudaenv completions bash)\"\n"
    };
    assert!(
        err.contains(&format!("==> added to ~/.bashrc:\n      export PATH=\"$HOME/.cargo/bin:$PATH\"\n      eval \"$(cudaenv init bash)\"\n{}", completions.replace("eval", "      eval"))),
        "{err}"
    );
    let rc = std::fs::read_to_string(t.home.join(".bashrc")).unwrap();
    assert!(
        rc.ends_with(&format!("\n# added by cudaenv (scripts/install.sh)\nexport PATH=\"$HOME/.cargo/bin:$PATH\"\neval \"$(cudaenv init bash)\"\n{completions}")),
        "{rc}"
    );
    // Without bash-completion, TAB completes `cudaenv` in a new interactive
    // shell all the same (with it, bash-completion loads the file at TAB).
    if completions.is_empty() {
        assert!(
            t.home
                .join(".local/share/bash-completion/completions/cudaenv")
                .is_file()
        );
    } else {
        let registered = login_shell_finds(&t, "bash", "complete -p cudaenv");
        assert!(
            registered.ends_with("-F _clap_complete_cudaenv cudaenv"),
            "{registered}"
        );
    }
    // A new login shell now finds the binary, with the integration loaded.
    let cudaenv = t.home.join(".cargo/bin/cudaenv").display().to_string();
    assert_eq!(login_shell_finds(&t, "bash", "type -P cudaenv"), cudaenv);
    assert_eq!(login_shell_finds(&t, "bash", "type -t cudaenv"), "function");

    // Twice: the rc file is left alone.
    let o = install_sh(&t, "/bin/bash", &["--modify-rc"]);
    assert_code(&o, 0, "install.sh --modify-rc again");
    assert!(
        stderr(&o).ends_with("==> nothing changed: everything was already installed and set up\n")
    );
    assert_eq!(std::fs::read_to_string(t.home.join(".bashrc")).unwrap(), rc);

    // With a global version, there is nothing left to do.
    let o = t
        .cmd()
        .env("CUDAENV_ROOT", t.home.join(".cudaenv"))
        .args(["global", "12.4.1"])
        .output()
        .unwrap();
    assert_success(&o, "cudaenv global");
    let o = install_sh(&t, "/bin/bash", &[]);
    insta::assert_snapshot!(advice(&t, &o), @r"
    ==> cudaenv is on PATH, set up in ~/.bashrc, and 12.4.1 is the global version: nothing more to do
    ==> more: `cudaenv help` (topics: `cudaenv help shell`, `cudaenv help versions`)
    ==> nothing changed: everything was already installed and set up
    ");
}
