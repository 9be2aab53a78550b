//! bash (and `sh`, which `$SHELL` names on systems where it is bash).
//!
//! Values are quoted by `shell-quote`'s bash rules: single quotes, with
//! `$'…'` for control characters, so nothing inside is expanded. The hook runs
//! first in `PROMPT_COMMAND` (a string or, from bash 5.1, an array), and the
//! direnv library (`use cudaenv`) is bash too, so it lives here.

use std::ffi::OsStr;

use super::Dialect;

pub(super) struct Bash;

/// The direnv library file (`src/activation/shell/scripts/direnvrc.bash`, see `init::render_direnvrc`).
pub(super) const DIRENVRC: &str = include_str!("scripts/direnvrc.bash");

/// Quoting shared with zsh, which reads the same `'…'` and `$'…'` words.
pub(super) fn quote(value: &OsStr) -> Vec<u8> {
    shell_quote::Bash::quote_vec(value)
}

/// `export NAME=value`, shared with zsh.
pub(super) fn export(name: &str, value: &OsStr) -> Vec<u8> {
    let mut out = format!("export {name}=").into_bytes();
    out.extend(quote(value));
    out
}

impl Dialect for Bash {
    fn names(&self) -> &'static [&'static str] {
        &["bash", "sh"]
    }

    fn rc_file(&self) -> (&'static str, &'static str) {
        ("~/.bashrc", r#"eval "$(cudaenv init bash)""#)
    }

    fn init(&self) -> &'static str {
        include_str!("scripts/init.bash")
    }

    fn hook(&self) -> &'static str {
        include_str!("scripts/hook.bash")
    }

    fn quote(&self, value: &OsStr) -> Option<Vec<u8>> {
        Some(quote(value))
    }

    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>> {
        Some(export(name, value))
    }

    fn unset(&self, name: &str) -> Vec<u8> {
        format!("unset {name}").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Shell, fixture};

    #[test]
    fn init() {
        insta::assert_snapshot!(fixture::init(Shell::Bash));
    }

    #[test]
    fn delta() {
        insta::assert_snapshot!(fixture::delta(Shell::Bash));
    }

    #[test]
    fn tricky_values() {
        insta::assert_snapshot!(fixture::tricky(Shell::Bash));
    }

    #[test]
    fn tricky_values_round_trip_through_bash() {
        fixture::round_trip(Shell::Bash, "bash");
    }

    #[test]
    fn non_utf8_values_pass() {
        let code = Shell::Bash
            .assign("CUDA_HOME", Some(&fixture::non_utf8()))
            .unwrap();
        assert_eq!(code, b"export CUDA_HOME=$'/opt/cuda-\\xFF/bin'\n");
    }

    #[test]
    fn direnvrc() {
        let out = super::super::init::render_direnvrc(std::path::Path::new(
            "/opt/it's cudaenv/bin/cudaenv",
        ))
        .unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
