//! Named crash points for the crash-consistency tests.
//!
//! `CUDAENV_CRASH_AT=<point>` makes `cudaenv install` kill itself with
//! SIGKILL at exactly that moment of the install, so a test can prove that
//! what is left behind is never mistaken for an installed version and that
//! a plain re-run repairs it. SIGKILL (not a panic, not `exit`) is the point:
//! no destructor, no cleanup handler and no buffered write runs, as after a
//! power cut or the OOM killer.
//!
//! The point is armed once by the CLI (which reads the variable through its
//! `Context`, like every other variable) and checked with one atomic load, only
//! in install and rehash code: the shim and hook paths never arm or check it.
//! A process-wide value is used because the points sit deep in unpacking
//! threads that have no context to consult, and one process runs one install.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{ContextError, Error, Result};

/// Where the install can be made to die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Point {
    /// An artifact is in the download cache, nothing unpacked yet.
    AfterDownload = 1,
    /// The first archive member has been written into the package store.
    MidExtract = 2,
    /// The staging tree holds its metadata and completeness marker, but has
    /// not been renamed into `versions/`.
    BeforeCommit = 3,
    /// The version was renamed into `versions/`; the shims are not updated.
    AfterCommit = 4,
    /// Rehash has installed its first shim and not the others.
    MidRehash = 5,
}

impl Point {
    pub const ALL: [Point; 5] = [
        Point::AfterDownload,
        Point::MidExtract,
        Point::BeforeCommit,
        Point::AfterCommit,
        Point::MidRehash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Point::AfterDownload => "after-download",
            Point::MidExtract => "mid-extract",
            Point::BeforeCommit => "before-commit",
            Point::AfterCommit => "after-commit",
            Point::MidRehash => "mid-rehash",
        }
    }

    /// Parses a point's name; an unknown name is an error listing the known
    /// ones, so a typo in a test cannot silently disable the crash.
    pub fn parse(s: &str) -> Result<Point> {
        Point::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                Error::Context(ContextError::BadVariable {
                    variable: crate::context::env_vars::CUDAENV_CRASH_AT,
                    value: s.escape_debug().to_string(),
                    expected: format!("one of: {}", Point::ALL.map(Point::name).join(", ")),
                })
            })
    }
}

/// 0: nothing armed.
static ARMED: AtomicU8 = AtomicU8::new(0);

/// Arms `point` for the rest of this process.
pub fn arm(point: Point) {
    ARMED.store(point as u8, Ordering::Relaxed);
}

/// Kills this process with SIGKILL if `point` is armed.
#[inline]
pub fn hit(point: Point) {
    if ARMED.load(Ordering::Relaxed) == point as u8 {
        crate::os::kill_self();
        // Delivery to ourselves is immediate, but never run on past a crash
        // point even if it were not.
        loop {
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_typos_are_refused() {
        for p in Point::ALL {
            assert_eq!(Point::parse(p.name()).unwrap(), p);
        }
        let e = Point::parse("mid-extrat").unwrap_err().to_string();
        assert!(e.contains("mid-extract"), "{e}");
    }
}
