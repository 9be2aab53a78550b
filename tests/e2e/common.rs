//! Shared test harness: an isolated HOME + CUDAENV_ROOT and a command builder
//! for the real binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub root: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let root = tmp.path().join("root");
        std::fs::create_dir_all(&home).unwrap();
        TestEnv { tmp, home, root }
    }

    /// The binary, with a clean, isolated environment (PATH kept minimal).
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(bin());
        c.env_clear()
            .env("HOME", &self.home)
            .env("CUDAENV_ROOT", &self.root)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NO_COLOR", "1")
            .current_dir(&self.home);
        c
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
}

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cudaenv"))
}
