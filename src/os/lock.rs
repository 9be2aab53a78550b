//! Lock files: the one exclusive lock cudaenv takes on a path, from sync
//! and async code alike (a version being installed or removed, a download
//! or package in the cache, the shims directory, a mirror).
//!
//! The lock is the OS's advisory lock (`flock`) on an open file, so a holder
//! killed with SIGKILL releases it at once (the kernel closes the
//! descriptor) and a stale lock file on disk means nothing. Dropping the
//! `LockFile` releases it; the file itself stays, as it must (deleting it
//! while someone waits on it would let two holders in).
//!
//! Waiting is never silent for long: when the lock is still taken after
//! `NOTICE_AFTER`, the caller's `Waiting` (the printer, or the progress
//! display) is told once which lock it is, so a second `cudaenv` that seems
//! stuck says why.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long a lock may be waited for before the user is told.
pub const NOTICE_AFTER: Duration = Duration::from_millis(500);

/// How often the async wait tries the lock again.
const POLL: Duration = Duration::from_millis(20);

/// Where the notice that a lock is taken goes.
pub trait Waiting: Sync {
    fn waiting(&self, notice: &str);
}

impl<F: Fn(&str) + Sync> Waiting for F {
    fn waiting(&self, notice: &str) {
        self(notice)
    }
}

/// Tells nobody (tests, and locks taken only with `try_acquire`).
#[cfg(test)]
pub struct Silently;

#[cfg(test)]
impl Waiting for Silently {
    fn waiting(&self, _: &str) {}
}

/// What the user is told while another process holds `path`.
pub fn notice(path: &Path) -> String {
    format!("waiting for another cudaenv holding {}…", path.display())
}

/// An exclusive lock, held until dropped.
#[derive(Debug)]
pub struct LockFile {
    _file: File,
}

impl LockFile {
    fn open(path: &Path) -> Result<File> {
        File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(Error::io("cannot open lock file", path))
    }

    /// Takes the lock if nobody holds it; `None` when someone does.
    pub fn try_acquire(path: &Path) -> Result<Option<LockFile>> {
        let file = Self::open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(LockFile { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io("cannot lock", path)(e)),
        }
    }

    /// Takes the lock, blocking this thread while another process holds it;
    /// `waiting` hears of it once after `NOTICE_AFTER`.
    pub fn acquire(path: &Path, waiting: &dyn Waiting) -> Result<LockFile> {
        let file = Self::open(path)?;
        match file.try_lock() {
            Ok(()) => return Ok(LockFile { _file: file }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(Error::io("cannot lock", path)(e)),
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let locked = std::thread::scope(|s| {
            s.spawn(move || {
                // Disconnected (the lock came first) tells nothing.
                if rx.recv_timeout(NOTICE_AFTER) == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                {
                    waiting.waiting(&notice(path));
                }
            });
            let r = file.lock();
            drop(tx);
            r
        });
        locked.map_err(Error::io("cannot lock", path))?;
        Ok(LockFile { _file: file })
    }

    /// `acquire` for async code: waits without blocking the runtime's
    /// thread (it tries again every few milliseconds).
    pub async fn acquire_async(path: &Path, waiting: &dyn Waiting) -> Result<LockFile> {
        let file = Self::open(path)?;
        let started = Instant::now();
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(LockFile { _file: file }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(Error::io("cannot lock", path)(e)),
            }
            if !told && started.elapsed() >= NOTICE_AFTER {
                waiting.waiting(&notice(path));
                told = true;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    type Told = Mutex<Vec<String>>;

    fn push(told: &Told, notice: &str) {
        told.lock().unwrap().push(notice.to_string());
    }

    #[test]
    fn a_free_lock_is_taken_silently_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let told = Told::default();
        let l = LockFile::acquire(&p, &|n: &str| push(&told, n)).unwrap();
        assert!(LockFile::try_acquire(&p).unwrap().is_none());
        drop(l);
        assert!(LockFile::try_acquire(&p).unwrap().is_some());
        assert!(told.lock().unwrap().is_empty());
    }

    #[test]
    fn a_long_wait_is_announced_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let held = LockFile::acquire(&p, &Silently).unwrap();
        let told = Told::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(NOTICE_AFTER * 3);
                drop(held);
            });
            let started = Instant::now();
            let _l = LockFile::acquire(&p, &|n: &str| push(&told, n)).unwrap();
            assert!(started.elapsed() >= NOTICE_AFTER * 2);
        });
        assert_eq!(*told.lock().unwrap(), [notice(&p)]);
        assert!(notice(&p).starts_with("waiting for another cudaenv holding "));
    }

    #[test]
    fn the_async_wait_is_announced_once_too() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let held = LockFile::acquire(&p, &Silently).unwrap();
        let told = Told::default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(NOTICE_AFTER * 3);
                drop(held);
            });
            rt.block_on(async {
                let _l = LockFile::acquire_async(&p, &|n: &str| push(&told, n))
                    .await
                    .unwrap();
            });
        });
        assert_eq!(*told.lock().unwrap(), [notice(&p)]);
    }
}
