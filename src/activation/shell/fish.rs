//! fish: `set -gx` and `set -e`, `shell-quote`'s fish rules, and a hook on
//! the `PWD` variable and the `fish_prompt` event.
//!
//! fish keeps variables whose names end in `PATH` as lists and joins them
//! with `:` for child processes, so such a value is given as its elements: a
//! single word holding `:`s would become one element and break `contains`.

use std::ffi::OsStr;

use super::Dialect;

pub(super) struct Fish;

impl Dialect for Fish {
    fn names(&self) -> &'static [&'static str] {
        &["fish"]
    }

    fn rc_file(&self) -> (&'static str, &'static str) {
        ("~/.config/fish/config.fish", "cudaenv init fish | source")
    }

    fn init(&self) -> &'static str {
        include_str!("scripts/init.fish")
    }

    fn hook(&self) -> &'static str {
        include_str!("scripts/hook.fish")
    }

    fn quote(&self, value: &OsStr) -> Option<Vec<u8>> {
        Some(shell_quote::Fish::quote_vec(value))
    }

    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>> {
        let mut out = format!("set -gx {name}").into_bytes();
        let elements: Vec<&OsStr> = if name.ends_with("PATH") {
            crate::os::path_list::entries(value).collect()
        } else {
            vec![value]
        };
        for e in elements {
            out.push(b' ');
            out.extend(shell_quote::Fish::quote_vec(e));
        }
        Some(out)
    }

    fn unset(&self, name: &str) -> Vec<u8> {
        format!("set -e {name}").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Shell, fixture};

    #[test]
    fn init() {
        insta::assert_snapshot!(fixture::init(Shell::Fish));
    }

    #[test]
    fn delta() {
        insta::assert_snapshot!(fixture::delta(Shell::Fish));
    }

    #[test]
    fn tricky_values() {
        insta::assert_snapshot!(fixture::tricky(Shell::Fish));
    }

    #[test]
    fn tricky_values_round_trip_through_fish() {
        fixture::round_trip(Shell::Fish, "fish");
    }

    #[test]
    fn path_lists_are_elements_even_when_tricky() {
        let code = Shell::Fish
            .assign(
                "LD_LIBRARY_PATH",
                Some("/a b/lib:/it's/lib::/$x/lib".as_ref()),
            )
            .unwrap();
        insta::assert_snapshot!(String::from_utf8(code).unwrap());
    }
}
