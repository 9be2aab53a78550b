//! Running the small external programs the facts come from (nvidia-smi,
//! ldconfig, python) with a deadline: a hung driver tool must not hang the
//! command that asked.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::context::Context;
use crate::context::env_vars;
use crate::os::path_list;

/// Output of a finished command, or why there is none.
#[derive(Debug)]
pub struct Output {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.status == Some(0)
    }
}

/// Runs `cmd` through the one runner (`os::process`), killing it and
/// whatever it started after `timeout`; `Err` says why there is no output.
pub fn run(cmd: Command, timeout: Duration) -> Result<Output, String> {
    let o = crate::os::process::run(cmd, timeout).map_err(|e| e.to_string())?;
    if o.timed_out {
        return Err(format!("did not finish within {} s", timeout.as_secs()));
    }
    Ok(Output {
        status: o.status.and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

/// Finds an executable on the context's PATH (and in `extra` directories after it).
pub fn which(ctx: &Context, name: &str, extra: &[&str]) -> Option<PathBuf> {
    which_in(ctx, name, extra.iter().map(Path::new))
}

/// `which`, with the extra directories as paths (`os::nvidia_smi_dirs`).
pub fn which_in<P: AsRef<Path>>(
    ctx: &Context,
    name: &str,
    extra: impl IntoIterator<Item = P>,
) -> Option<PathBuf> {
    let path = ctx.var_os(env_vars::PATH).unwrap_or_default();
    let extra: Vec<P> = extra.into_iter().collect();
    path_list::find(
        name.as_ref(),
        path_list::dirs(path).chain(extra.iter().map(AsRef::as_ref)),
    )
}
