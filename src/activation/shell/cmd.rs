//! cmd.exe: `set "NAME=value"` lines, for a batch file (`cudaenv env
//! --shell cmd > activate.cmd`, then `call activate.cmd`) or a `for /f` loop.
//!
//! In `set "NAME=value"` everything between the first `=` and the last `"`
//! is the value, spaces, `&`, `|`, `<`, `>`, `^` and `(` included; only `%`
//! still expands in a batch file, so it is doubled. A value cmd cannot carry
//! inside quotes (a `"`, a line break, text that is not UTF-8) is refused:
//! Windows paths never hold those. cmd has no prompt or directory hook, so
//! its rc code only puts the shims first on PATH (the shims switch versions
//! per directory by themselves); PowerShell has the hook.

use std::ffi::OsStr;

use super::Dialect;

pub(super) struct Cmd;

impl Dialect for Cmd {
    fn names(&self) -> &'static [&'static str] {
        &["cmd", "cmd.exe"]
    }

    fn rc_file(&self) -> (&'static str, &'static str) {
        (
            r"HKCU\Software\Microsoft\Command Processor\AutoRun",
            r#"for /f "delims=" %i in ('cudaenv init cmd') do @%i"#,
        )
    }

    fn init(&self) -> &'static str {
        include_str!("scripts/init.cmd")
    }

    fn hook(&self) -> &'static str {
        ""
    }

    fn quote(&self, value: &OsStr) -> Option<Vec<u8>> {
        let s = value.to_str()?;
        if s.contains(['"', '\r', '\n', '\0']) {
            return None;
        }
        Some(format!("\"{}\"", s.replace('%', "%%")).into_bytes())
    }

    fn set(&self, name: &str, value: &OsStr) -> Option<Vec<u8>> {
        let s = value.to_str()?;
        if s.contains(['"', '\r', '\n', '\0']) {
            return None;
        }
        Some(format!("set \"{name}={}\"", s.replace('%', "%%")).into_bytes())
    }

    fn unset(&self, name: &str) -> Vec<u8> {
        format!("set \"{name}=\"").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::super::{Shell, fixture};

    #[test]
    fn delta() {
        insta::assert_snapshot!(fixture::delta(Shell::Cmd));
    }

    #[test]
    fn values_are_quoted_whole_and_percent_signs_doubled() {
        let got = Shell::Cmd
            .assign(
                "CUDA_PATH",
                Some(OsStr::new(r"C:\Program Files (x86)\a&b^c %PATH% !x!")),
            )
            .unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "set \"CUDA_PATH=C:\\Program Files (x86)\\a&b^c %%PATH%% !x!\"\n"
        );
        assert_eq!(
            Shell::Cmd.assign("CUDA_PATH", None).unwrap(),
            b"set \"CUDA_PATH=\"\n"
        );
    }

    #[test]
    fn values_cmd_cannot_carry_are_refused() {
        for bad in ["a\"b", "a\nb"] {
            assert!(
                Shell::Cmd.assign("X", Some(OsStr::new(bad))).is_err(),
                "{bad:?}"
            );
        }
        assert!(Shell::Cmd.assign("X", Some(&fixture::non_utf8())).is_err());
    }
}
