//! PowerShell: `$env:NAME = '…'` and `Remove-Item Env:NAME`, single-quoted
//! strings (the only quoting without expansion: a `'` is doubled), and a
//! hook that wraps the user's `prompt` function.
//!
//! PowerShell's strings are text, so a value that is not UTF-8 cannot be
//! given to it: [`Dialect::quote`] says so with `None`, and the caller
//! reports the value.

use std::ffi::OsStr;

use super::Dialect;

pub(super) struct Pwsh;

impl Dialect for Pwsh {
    fn names(&self) -> &'static [&'static str] {
        &["pwsh", "pwsh-preview", "powershell"]
    }

    fn rc_file(&self) -> (&'static str, &'static str) {
        (
            "$PROFILE",
            "cudaenv init pwsh | Out-String | Invoke-Expression",
        )
    }

    fn init(&self) -> &'static str {
        include_str!("scripts/init.ps1")
    }

    fn hook(&self) -> &'static str {
        include_str!("scripts/hook.ps1")
    }

    fn quote(&self, value: &OsStr) -> Option<Vec<u8>> {
        let s = value.to_str()?;
        Some(format!("'{}'", s.replace('\'', "''")).into_bytes())
    }

    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>> {
        let mut out = format!("$env:{name} = ").into_bytes();
        out.extend(self.quote(value)?);
        Some(out)
    }

    fn unset(&self, name: &str) -> Vec<u8> {
        format!("Remove-Item -ErrorAction SilentlyContinue Env:{name}").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Shell, fixture};

    #[test]
    fn init() {
        insta::assert_snapshot!(fixture::init(Shell::Pwsh));
    }

    #[test]
    fn delta() {
        insta::assert_snapshot!(fixture::delta(Shell::Pwsh));
    }

    #[test]
    fn tricky_values() {
        insta::assert_snapshot!(fixture::tricky(Shell::Pwsh));
    }

    #[test]
    fn non_utf8_values_are_refused() {
        let err = Shell::Pwsh
            .assign("CUDA_HOME", Some(&fixture::non_utf8()))
            .unwrap_err();
        assert!(err.to_string().contains("non-UTF-8"), "{err}");
    }
}
