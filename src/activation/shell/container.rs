//! Activation for places that are not shells: a Dockerfile's `ENV` lines and
//! a GitHub Actions step's `$GITHUB_ENV` file (`cudaenv env --format …`).
//!
//! A Dockerfile is written once and built anywhere, so its lines do not carry
//! this machine's PATH: they prepend the version's directories to the
//! image's own (`ENV PATH="…:${PATH}"`), and LD_LIBRARY_PATH gets the
//! image's value only when it has one (`${LD_LIBRARY_PATH:+:…}`), never an
//! empty element (which the loader reads as "the current directory"). A CI
//! step's file, read by the runner for the steps that follow, gets the full
//! values computed from the step's own environment, as `exec` would set them.
//!
//! Both also say which driver the stack needs: `NVIDIA_REQUIRE_CUDA=cuda>=X.Y`,
//! the constraint the NVIDIA container runtime checks against the host's
//! driver before it starts a container (the same form NVIDIA's CUDA images
//! use), so a host whose driver is too old refuses the container at start
//! instead of failing inside it. The Dockerfile also asks for the GPUs and the
//! driver's compute libraries (`NVIDIA_VISIBLE_DEVICES=all`,
//! `NVIDIA_DRIVER_CAPABILITIES=compute,utility`), as NVIDIA's images do.

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::activation::EnvDelta;
use crate::context::env_vars;
use crate::error::{ActivationError, Error, Result};
use crate::spec::Version;

/// `cuda>=12.4` for CUDA 12.4.x: what `NVIDIA_REQUIRE_CUDA` says.
pub fn require_cuda(cuda: &Version) -> String {
    format!("cuda>={}.{}", cuda.major(), cuda.minor().unwrap_or(0))
}

/// A value as text, or the error that names it.
fn text<'a>(name: &'static str, value: &'a OsStr, why: &'static str) -> Result<&'a str> {
    value.to_str().ok_or_else(|| {
        Error::Activation(ActivationError::UnrepresentablePath {
            path: PathBuf::from(value),
            variable: name,
            reason: why,
        })
    })
}

/// Inside a Dockerfile's double quotes, `\`, `"` and `$` are special.
fn docker_quote(name: &'static str, value: &OsStr) -> Result<String> {
    let s = text(name, value, "a Dockerfile is text, and this is not UTF-8")?;
    crate::activation::single_line(
        name,
        value,
        "it contains a line break, which an ENV line cannot hold",
    )?;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// `ENV` lines for an image. `delta` is the activation computed without any
/// PATH or LD_LIBRARY_PATH of this machine (only the version's directories).
pub fn dockerfile(name: &str, delta: &EnvDelta, cuda: Option<&Version>) -> Result<Vec<u8>> {
    let mut out = format!("# cudaenv: {name}\n");
    for (var, value) in &delta.changes {
        let Some(value) = value else {
            // An image has nothing of cudaenv's to remove.
            continue;
        };
        let quoted = docker_quote(var, value)?;
        // The escaped directories, without the quotes around them.
        let dirs = &quoted[1..quoted.len() - 1];
        let line = match *var {
            env_vars::PATH => format!("ENV PATH=\"{dirs}:${{PATH}}\"\n"),
            env_vars::LD_LIBRARY_PATH => format!(
                "ENV LD_LIBRARY_PATH=\"{dirs}${{LD_LIBRARY_PATH:+:${{LD_LIBRARY_PATH}}}}\"\n"
            ),
            _ => format!("ENV {var}={quoted}\n"),
        };
        out.push_str(&line);
    }
    match cuda {
        Some(c) => out.push_str(&format!(
            "ENV {}=\"{}\"\n",
            env_vars::NVIDIA_REQUIRE_CUDA,
            require_cuda(c)
        )),
        None => out.push_str(&format!(
            "# the CUDA version of {name} is unknown: no {} line\n",
            env_vars::NVIDIA_REQUIRE_CUDA
        )),
    }
    out.push_str(&format!(
        "ENV {}=all\nENV {}=compute,utility\n",
        env_vars::NVIDIA_VISIBLE_DEVICES,
        env_vars::NVIDIA_DRIVER_CAPABILITIES
    ));
    Ok(out.into_bytes())
}

/// Lines for `$GITHUB_ENV`: `NAME=value`, or `NAME<<DELIMITER` … for a value
/// with a line break; an unset variable becomes empty (the file cannot unset).
pub fn github(delta: &EnvDelta, cuda: Option<&Version>) -> Result<Vec<u8>> {
    let mut out = String::new();
    let mut push = |name: &'static str, value: &str| {
        if value.contains(['\n', '\r']) {
            // A delimiter the value cannot contain.
            let mut delim = String::from("CUDAENV_EOF");
            while value.contains(&delim) {
                delim.push('_');
            }
            out.push_str(&format!("{name}<<{delim}\n{value}\n{delim}\n"));
        } else {
            out.push_str(&format!("{name}={value}\n"));
        }
    };
    for (var, value) in &delta.changes {
        let v = match value {
            Some(v) => text(var, v, "$GITHUB_ENV is text, and this is not UTF-8")?,
            None => "",
        };
        push(var, v);
    }
    if let Some(c) = cuda {
        push(env_vars::NVIDIA_REQUIRE_CUDA, &require_cuda(c));
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn delta(pairs: &[(&'static str, Option<&str>)]) -> EnvDelta {
        EnvDelta {
            changes: pairs
                .iter()
                .map(|(k, v)| (*k, v.map(OsString::from)))
                .collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn dockerfile_prepends_to_the_image_and_escapes() {
        let d = delta(&[
            (env_vars::PATH, Some("/opt/c/versions/12.4.1/bin")),
            (
                env_vars::LD_LIBRARY_PATH,
                Some("/opt/c/versions/12.4.1/lib64"),
            ),
            (env_vars::CUDA_HOME, Some("/opt/my \"c\" $HOME/x")),
            (env_vars::CUDNN_PATH, None),
        ]);
        let out = dockerfile("12.4.1", &d, Some(&"12.4.1".parse().unwrap())).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r#"
        # cudaenv: 12.4.1
        ENV PATH="/opt/c/versions/12.4.1/bin:${PATH}"
        ENV LD_LIBRARY_PATH="/opt/c/versions/12.4.1/lib64${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
        ENV CUDA_HOME="/opt/my \"c\" \$HOME/x"
        ENV NVIDIA_REQUIRE_CUDA="cuda>=12.4"
        ENV NVIDIA_VISIBLE_DEVICES=all
        ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
        "#);
        let bad = delta(&[(env_vars::CUDA_HOME, Some("/a\nb"))]);
        assert!(matches!(
            dockerfile("x", &bad, None),
            Err(Error::Activation(
                ActivationError::UnrepresentablePath { .. }
            ))
        ));
    }

    #[test]
    fn github_env_lines_use_a_delimiter_for_line_breaks() {
        let d = delta(&[
            (env_vars::PATH, Some("/v/bin:/usr/bin")),
            (env_vars::CUDA_HOME, Some("/odd\nCUDAENV_EOF")),
            (env_vars::CUDNN_PATH, None),
        ]);
        let out = github(&d, Some(&"13.0.1".parse().unwrap())).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r"
        PATH=/v/bin:/usr/bin
        CUDA_HOME<<CUDAENV_EOF_
        /odd
        CUDAENV_EOF
        CUDAENV_EOF_
        CUDNN_PATH=
        NVIDIA_REQUIRE_CUDA=cuda>=13.0
        ");
    }
}
