//! The shell hook facing hostile `.cuda-version` files (issue §7, in the
//! shell): for every hostile input of the version-file battery and each of
//! bash, zsh and fish, a shell that evaluated `cudaenv init` enters the
//! directory and runs the hook. The shell must keep working (it prints our
//! marker line after the hook and exits 0), the hook must print nothing on
//! stdout, no injected command may run, and PATH must not gain a version.
//! The same for the `.tool-versions` battery.

use std::process::Command;
use std::time::Duration;

use super::bad_version_file::{Make, hostile_cases, make};
use super::support::{fake_version, run_with_deadline};
use crate::common::{TestEnv, bin};

fn script(shell: &str) -> String {
    let b = bin().display();
    match shell {
        "bash" => format!(
            "eval \"$('{b}' init bash)\"; cd proj || exit 9; _cudaenv_hook; printf 'ALIVE %s\\n' \"$PATH\""
        ),
        "zsh" => format!(
            "eval \"$('{b}' init zsh)\"; cd proj || exit 9; _cudaenv_hook; printf 'ALIVE %s\\n' \"$PATH\""
        ),
        _ => format!(
            "'{b}' init fish | source; cd proj; or exit 9; _cudaenv_hook; printf 'ALIVE %s\\n' \"$PATH\""
        ),
    }
}

#[test]
fn hook_survives_every_hostile_version_file_in_bash_zsh_and_fish() {
    let runs = hostile_files_in_the_hook(".cuda-version", hostile_cases(), "12.4\n");
    assert!(runs >= 120, "{runs}");
}

#[test]
fn hook_survives_every_hostile_tool_versions_file_in_bash_zsh_and_fish() {
    let runs = hostile_files_in_the_hook(
        ".tool-versions",
        super::bad_tool_versions::hostile_cases(),
        "python 3.11\ncuda 12.4\n",
    );
    assert!(runs >= 60, "{runs}");
}

/// Each hostile `file` in each shell, then a positive control with `valid`;
/// returns the number of hostile runs.
fn hostile_files_in_the_hook(file: &str, cases: Vec<(&'static str, Make)>, valid: &str) -> usize {
    let mut failures = Vec::new();
    let mut runs = 0;
    for (label, what) in cases {
        if matches!(what, Make::Unreadable) {
            continue; // shells run as root here: the file would be readable
        }
        let env = TestEnv::new();
        fake_version(&env.root, "12.4.1", "12.4.1");
        let proj = env.home.join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        make(&what, &proj.join(file));
        for shell in ["bash", "zsh", "fish"] {
            let mut c = Command::new(shell);
            match shell {
                "bash" => c.args(["--norc", "--noprofile", "-c"]),
                "zsh" => c.args(["-f", "-c"]),
                _ => c.args(["--no-config", "-c"]),
            };
            c.arg(script(shell))
                .env_clear()
                .env("HOME", &env.home)
                .env("CUDAENV_ROOT", &env.root)
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("NO_COLOR", "1")
                .current_dir(&env.home);
            let o = run_with_deadline(&mut c, Duration::from_secs(20));
            runs += 1;
            let out = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = out.lines().collect();
            let ok = o.status.success()
                && lines.len() == 1
                && lines[0].starts_with("ALIVE ")
                && !lines[0].contains("versions/12.4.1");
            if !ok {
                failures.push(format!(
                    "{label} in {shell}: exit {:?}, stdout {out:?}, stderr {:?}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
            if env.home.join("SENTINEL").exists() || proj.join("SENTINEL").exists() {
                failures.push(format!("{label} in {shell}: an injected command ran"));
            }
        }
    }
    // Positive control: the same script with a valid pin activates it, so
    // the runs above did exercise the hook.
    let env = TestEnv::new();
    let v = fake_version(&env.root, "12.4.1", "12.4.1");
    let proj = env.home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(file), valid).unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let mut c = Command::new(shell);
        match shell {
            "bash" => c.args(["--norc", "--noprofile", "-c"]),
            "zsh" => c.args(["-f", "-c"]),
            _ => c.args(["--no-config", "-c"]),
        };
        c.arg(script(shell))
            .env_clear()
            .env("HOME", &env.home)
            .env("CUDAENV_ROOT", &env.root)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .current_dir(&env.home);
        let o = run_with_deadline(&mut c, Duration::from_secs(20));
        let out = String::from_utf8_lossy(&o.stdout);
        if !out.contains(&*v.join("bin").to_string_lossy()) {
            failures.push(format!(
                "control in {shell}: a valid pin was not activated: {out:?} {:?}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{file}: {} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    runs
}
