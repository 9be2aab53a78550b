//! The retry policy every HTTP request shares: a few tries with exponential
//! backoff; network trouble, 5xx answers and truncated bodies are tried
//! again, a stall at most once (`timeouts::STALL_ATTEMPTS`), and a request
//! that gives up on a stall gives up on the network for the rest of the
//! command (`timeouts::Breaker`). `Tries` keeps that count for a loop of
//! one's own (the ranges of a large file), `retrying` is the loop itself.

use crate::error::{Error, InstallError, Result};
use std::time::Duration;

use super::timeouts::{self, Breaker, STALL_ATTEMPTS, Timeouts};

/// Attempts per request before giving up.
pub(super) const ATTEMPTS: u32 = 5;

/// The retry policy every HTTP request shares: up to `attempts` tries of `op`,
/// with exponential backoff from `first_delay`, retrying only what `op` marks
/// `Attempt::Retry` or `Attempt::Stalled` (at most `STALL_ATTEMPTS` of
/// those); the last reason is reported when it gives up. Nothing is tried
/// once a request made with the same `timeouts` gave up on a stall
/// (`timeouts::Breaker`).
pub(crate) async fn retrying<T, F, Fut>(
    url: &str,
    attempts: u32,
    first_delay: Duration,
    timeouts: &Timeouts,
    mut op: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, Attempt>>,
{
    let mut tries = Tries::new(url, first_delay, timeouts);
    for attempt in 0..attempts {
        tries.start(attempt).await?;
        match op().await {
            Ok(v) => return Ok(v),
            Err(failed) => tries.failed(failed)?,
        }
    }
    Err(Error::Install(InstallError::Network {
        url: url.into(),
        reason: tries.gave_up(attempts),
        from: None,
    }))
}

/// The tries of one request so far: the backoff before the next, the
/// stalls, and why the last one failed.
pub(super) struct Tries<'t> {
    /// The request's URL, as shown.
    url: &'t str,
    timeouts: &'t Timeouts,
    delay: Duration,
    stalls: u32,
    last: String,
}

impl<'t> Tries<'t> {
    pub(super) fn new(url: &'t str, first_delay: Duration, timeouts: &'t Timeouts) -> Tries<'t> {
        Tries {
            url,
            timeouts,
            delay: first_delay,
            stalls: 0,
            last: String::new(),
        }
    }

    /// Before try `attempt` (from 0): nothing is tried once a request gave
    /// up on a stall; every try after the first waits, twice as long each
    /// time.
    pub(super) async fn start(&mut self, attempt: u32) -> Result<()> {
        if let Some(stalled) = self.timeouts.breaker.tripped() {
            return Err(Breaker::error(self.url, &stalled));
        }
        if attempt > 0 {
            tokio::time::sleep(self.delay).await;
            self.delay *= 2;
        }
        Ok(())
    }

    /// Counts a failed try: a final failure is the error, a stall past the
    /// allowed ones gives up, anything else leaves its reason for the end.
    pub(super) fn failed(&mut self, failed: Attempt) -> Result<()> {
        match failed {
            Attempt::Fail(e) => Err(e),
            Attempt::Retry(why) => {
                self.retry(why);
                Ok(())
            }
            Attempt::Stalled(why) => {
                self.stalls += 1;
                if self.stalls >= STALL_ATTEMPTS {
                    return Err(gave_up_stalled(
                        self.url,
                        &why,
                        self.stalls,
                        &self.timeouts.breaker,
                    ));
                }
                self.last = why;
                Ok(())
            }
        }
    }

    /// A try failed in a way worth another.
    pub(super) fn retry(&mut self, why: String) {
        self.last = why;
    }

    /// The reason given when the tries ran out.
    pub(super) fn gave_up(&self, attempts: u32) -> String {
        format!("{} (gave up after {attempts} attempts)", self.last)
    }
}

/// Gives up on a stalled request, and with it on the network for the rest
/// of the command.
fn gave_up_stalled(url: &str, why: &str, stalls: u32, breaker: &Breaker) -> Error {
    breaker.trip(url);
    Error::Install(InstallError::NetworkStalled {
        url: url.into(),
        reason: format!("{why} (gave up after {stalls} attempts)"),
        default_secs: timeouts::DEFAULT_SECS,
    })
}

pub(crate) enum Attempt {
    /// Worth another try (network trouble, 5xx, truncated body).
    Retry(String),
    /// The server stopped answering or trickles (see `timeouts`): tried
    /// again at most once.
    Stalled(String),
    /// Final.
    Fail(Error),
}
