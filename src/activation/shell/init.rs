//! `cudaenv init SHELL`: the code users put in their rc file.
//!
//! Each shell's module brings its code (from `shims/` at the top of the
//! repository, one pair of files per shell: `init.*`, shims on PATH and the
//! `cudaenv` function; `hook.*`, the prompt / directory-change hook); this
//! module completes it with two values quoted for that shell: the path of
//! this binary (so the hook never searches PATH for it) and the shims
//! directory.
//!
//! The hook decides in the shell, with builtins only, whether anything the
//! selection depends on changed since its last run (see `__cudaenv_fingerprint`
//! in each file): the working directory, `CUDAENV_VERSION`, the nearest
//! `.cuda-version` (its path and content) or the global version file, every
//! `.tool-versions` on the way up (its path and content), and the
//! store's generation file. Only then does it run `cudaenv hook-env`, whose
//! output (a `session` transition) it evaluates. A prompt where nothing
//! changed costs a few `stat`s and one or two small reads, and no process.

use std::path::Path;

use super::Shell;
use crate::error::Result;

/// Whether to install the prompt hook, or only shims and the `cudaenv` function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Install,
    Omit,
}

/// The rc-file code for `shell`.
pub fn render(shell: Shell, exe: &Path, shims_dir: &Path, hook: Hook) -> Result<Vec<u8>> {
    let (init, hook_code) = shell.templates();
    let mut text = init.to_owned();
    if hook == Hook::Install {
        text.push_str(hook_code);
    }
    let exe = shell.quote(exe.as_os_str())?;
    let shims = shell.quote(shims_dir.as_os_str())?;
    Ok(substitute(
        text.as_bytes(),
        &[(b"@CUDAENV@", &exe), (b"@SHIMS@", &shims)],
    ))
}

/// The direnv library file (`use cudaenv [SPEC]`, see `src/activation/shell/scripts/direnvrc.bash`),
/// calling the binary at `exe`.
pub fn render_direnvrc(exe: &Path) -> Result<Vec<u8>> {
    let exe = Shell::Bash.quote(exe.as_os_str())?;
    Ok(substitute(
        super::bash::DIRENVRC.as_bytes(),
        &[(b"@CUDAENV@", &exe)],
    ))
}

/// Replaces each placeholder; the values are already quoted words.
fn substitute(text: &[u8], pairs: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 256);
    let mut i = 0;
    'outer: while i < text.len() {
        for (key, value) in pairs {
            if text[i..].starts_with(key) {
                out.extend_from_slice(value);
                i += key.len();
                continue 'outer;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(shell: Shell, hook: Hook) -> String {
        let out = render(
            shell,
            Path::new("/opt/it's cudaenv/bin/cudaenv"),
            Path::new("/home/u/.cudaenv/shims"),
            hook,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    // Each shell's module snapshots its complete code; this checks what they
    // all share.
    #[test]
    fn no_hook_leaves_out_the_hook() {
        for shell in Shell::ALL {
            let with = rendered(shell, Hook::Install);
            let without = rendered(shell, Hook::Omit);
            assert!(with.contains("_cudaenv_hook"), "{shell}");
            assert!(!without.contains("_cudaenv_hook"), "{shell}");
            assert!(without.contains("/home/u/.cudaenv/shims"), "{shell}");
            for placeholder in ["@CUDAENV@", "@SHIMS@"] {
                assert!(!with.contains(placeholder), "{shell}: {placeholder} left");
            }
        }
    }
}
