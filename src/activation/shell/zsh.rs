//! zsh: bash's quoting and `export`, its own hook (`chpwd_functions` and
//! `precmd_functions`, so that a `cd` inside a script or function activates
//! too).

use std::ffi::OsStr;

use super::{Dialect, bash};

pub(super) struct Zsh;

impl Dialect for Zsh {
    fn names(&self) -> &'static [&'static str] {
        &["zsh"]
    }

    fn rc_file(&self) -> (&'static str, &'static str) {
        ("~/.zshrc", r#"eval "$(cudaenv init zsh)""#)
    }

    fn init(&self) -> &'static str {
        include_str!("scripts/init.zsh")
    }

    fn hook(&self) -> &'static str {
        include_str!("scripts/hook.zsh")
    }

    fn quote(&self, value: &OsStr) -> Option<Vec<u8>> {
        Some(bash::quote(value))
    }

    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>> {
        Some(bash::export(name, value))
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
        insta::assert_snapshot!(fixture::init(Shell::Zsh));
    }

    #[test]
    fn delta() {
        insta::assert_snapshot!(fixture::delta(Shell::Zsh));
    }

    #[test]
    fn tricky_values() {
        insta::assert_snapshot!(fixture::tricky(Shell::Zsh));
    }

    #[test]
    fn tricky_values_round_trip_through_zsh() {
        fixture::round_trip(Shell::Zsh, "zsh");
    }
}
