//! How long cudaenv waits for a server, and when it stops waiting.
//!
//! One setting, `CUDAENV_HTTP_TIMEOUT` (seconds, default 30), bounds every
//! request in windows of that length: the connection, the request and the
//! response headers must be done within the first window, and in every
//! window after that the body must bring at least [`MIN_RATE`] bytes per
//! second on average, or the attempt counts as *stalled*. The window catches
//! a server that accepts and never answers; the rate catches one that sends
//! a byte a second, which a timeout per read alone never stops. A server
//! faster than the floor is working, however slowly, and is waited for.
//!
//! A stalled attempt is retried once ([`STALL_ATTEMPTS`]); when a request
//! gives up on a stall, the whole command stops waiting: every later request
//! made with the same `Timeouts` (one per command, shared by its clients
//! through clones) fails at once with an error that says which URL stalled
//! ([`Breaker`]), so
//! that a stalled index does not cost one timeout per page and then one per
//! download. With the default, a command facing a server that stalls or
//! trickles ends within [`Timeouts::worst_case`] (about a minute; a unit
//! test holds it under 150 s).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Stream, StreamExt};

use super::{Attempt, describe};
use crate::context::Context;
use crate::context::env_vars;
use crate::error::{ContextError, Error, InstallError, Result};

/// The default of `CUDAENV_HTTP_TIMEOUT`, in seconds (uv's too).
pub const DEFAULT_SECS: u64 = 30;

/// The slowest average a response body may arrive at over a window, in
/// bytes per second: a server below it is treated as stalled.
pub const MIN_RATE: u64 = 1024;

/// Attempts of one request that may stall before it gives up.
pub const STALL_ATTEMPTS: u32 = 2;

/// How long requests may wait (see the module docs), and whether one of
/// them already gave up on a stall. Clones share the breaker: a command makes
/// one and hands clones to each of its clients.
#[derive(Debug, Clone)]
pub struct Timeouts {
    /// The window: no answer, or less than `MIN_RATE` on average, for this long is a stall.
    pub window: Duration,
    pub breaker: Breaker,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts::with_window(Duration::from_secs(DEFAULT_SECS))
    }
}

impl Timeouts {
    fn with_window(window: Duration) -> Timeouts {
        Timeouts {
            window,
            breaker: Breaker::default(),
        }
    }
}

impl Timeouts {
    /// `CUDAENV_HTTP_TIMEOUT`, else the default.
    pub fn from_ctx(ctx: &Context) -> Result<Timeouts> {
        let Some(v) = ctx.var(env_vars::CUDAENV_HTTP_TIMEOUT) else {
            return Ok(Timeouts::default());
        };
        match v.trim().parse::<u64>() {
            Ok(s) if (1..=24 * 3600).contains(&s) => {
                Ok(Timeouts::with_window(Duration::from_secs(s)))
            }
            _ => Err(Error::Context(ContextError::InvalidHttpTimeout {
                variable: env_vars::CUDAENV_HTTP_TIMEOUT,
                value: v.escape_debug().to_string(),
                default_secs: DEFAULT_SECS,
            })),
        }
    }

    /// The longest a command waits on a server that stalls or trickles,
    /// when retries start after `first_backoff`: every stalled attempt
    /// lasts one window, with the backoff between them; after that the
    /// breaker fails every other request at once.
    pub fn worst_case(&self, first_backoff: Duration) -> Duration {
        let mut total = Duration::ZERO;
        let mut delay = first_backoff;
        for attempt in 0..STALL_ATTEMPTS {
            if attempt > 0 {
                total += delay;
                delay *= 2;
            }
            total += self.window;
        }
        total
    }

    /// The least a body must bring in one window.
    fn floor(&self) -> u64 {
        MIN_RATE.saturating_mul(self.window.as_secs().max(1))
    }
}

/// Reads a response body under the window rule: each item is the next
/// chunk, or a stall (`Attempt::Stalled`), or a broken connection
/// (`Attempt::Retry`). The first window started when the request was sent
/// (`started`), so the wait for the headers counts in it.
pub(crate) struct Paced<S> {
    stream: S,
    window: Duration,
    /// The least a window must bring (`Timeouts::floor`).
    floor: u64,
    window_start: tokio::time::Instant,
    bytes: u64,
}

impl<S, B> Paced<S>
where
    S: Stream<Item = reqwest::Result<B>> + Unpin,
    B: AsRef<[u8]>,
{
    pub fn new(stream: S, timeouts: &Timeouts, started: tokio::time::Instant) -> Paced<S> {
        Paced {
            stream,
            window: timeouts.window,
            floor: timeouts.floor(),
            window_start: started,
            bytes: 0,
        }
    }

    pub async fn next(&mut self) -> Option<std::result::Result<B, Attempt>> {
        loop {
            let end = self.window_start + self.window;
            match tokio::time::timeout_at(end, self.stream.next()).await {
                Ok(Some(Ok(chunk))) => {
                    self.bytes += chunk.as_ref().len() as u64;
                    return Some(Ok(chunk));
                }
                Ok(Some(Err(e))) => return Some(Err(Attempt::from_reqwest(&e))),
                Ok(None) => return None,
                Err(_) if self.bytes >= self.floor => {
                    self.window_start = end;
                    self.bytes = 0;
                }
                Err(_) => {
                    return Some(Err(Attempt::Stalled(format!(
                        "{} bytes in the last {} s (less than {} bytes per second)",
                        self.bytes,
                        self.window.as_secs(),
                        MIN_RATE
                    ))));
                }
            }
        }
    }
}

/// Sends a request, waiting at most the first window for the headers.
pub(crate) async fn send(
    req: reqwest::RequestBuilder,
    timeouts: &Timeouts,
) -> std::result::Result<(reqwest::Response, tokio::time::Instant), Attempt> {
    let started = tokio::time::Instant::now();
    match tokio::time::timeout_at(started + timeouts.window, req.send()).await {
        Ok(Ok(resp)) => Ok((resp, started)),
        Ok(Err(e)) => Err(Attempt::from_reqwest(&e)),
        Err(_) => Err(Attempt::Stalled(format!(
            "no answer within {} s",
            timeouts.window.as_secs()
        ))),
    }
}

/// Reads a whole (small) body under the window rule, refusing more than
/// `max` bytes (`None` then).
pub(crate) async fn body(
    resp: reqwest::Response,
    started: tokio::time::Instant,
    timeouts: &Timeouts,
    max: usize,
) -> std::result::Result<Option<Vec<u8>>, Attempt> {
    let mut paced = Paced::new(resp.bytes_stream(), timeouts, started);
    let mut out = Vec::new();
    while let Some(chunk) = paced.next().await {
        out.extend_from_slice(chunk?.as_ref());
        if out.len() > max {
            return Ok(None);
        }
    }
    Ok(Some(out))
}

/// Remembers, for the rest of a command, that a request gave up on a
/// stalled server: later requests then fail at once instead of waiting out
/// their own windows (see the module docs). Clones share what they remember.
#[derive(Debug, Clone, Default)]
pub struct Breaker(Arc<Mutex<Option<String>>>);

impl Breaker {
    /// The URL (as shown) of the request that gave up, if one did.
    pub fn tripped(&self) -> Option<String> {
        self.0.lock().map(|s| s.clone()).unwrap_or(None)
    }

    pub fn trip(&self, url: &str) {
        if let Ok(mut s) = self.0.lock()
            && s.is_none()
        {
            *s = Some(url.to_string());
        }
    }

    /// The error for a request not tried because of an earlier stall.
    pub fn error(url: &str, stalled: &str) -> Error {
        Error::Install(InstallError::NetworkStalled {
            url: url.to_string(),
            reason: format!("not tried: {stalled} stalled earlier in this command"),
            default_secs: DEFAULT_SECS,
        })
    }
}

impl Attempt {
    /// How a failed request counts: a timeout is a stall, anything else
    /// (a reset, a refused connection, a broken body) is worth a retry.
    pub(crate) fn from_reqwest(e: &reqwest::Error) -> Attempt {
        if e.is_timeout() {
            Attempt::Stalled(describe(e))
        } else {
            Attempt::Retry(describe(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The breaker belongs to one command's `Timeouts` and its clones, not
    /// to the process: tests (and library users) running side by side do
    /// not stop each other's requests.
    #[test]
    fn a_stall_stops_the_command_that_saw_it_and_no_other() {
        let command = Timeouts::default();
        let client_of_it = command.clone();
        let other = Timeouts::default();
        client_of_it.breaker.trip("https://stalled.example/simple/");
        assert_eq!(
            command.breaker.tripped().as_deref(),
            Some("https://stalled.example/simple/")
        );
        assert_eq!(other.breaker.tripped(), None);
    }

    /// The bound: with the default settings, a stalled or trickling
    /// server ends a command within 2.5 minutes, retries included (index
    /// pages back off from 300 ms, downloads from 500 ms).
    #[test]
    fn network_faults_are_bounded_by_default() {
        let t = Timeouts::default();
        for first in [Duration::from_millis(300), Duration::from_millis(500)] {
            let worst = t.worst_case(first);
            assert!(worst <= Duration::from_secs(150), "{worst:?}");
        }
        assert_eq!(
            t.worst_case(Duration::from_millis(500)),
            Duration::from_millis(60_500)
        );
    }

    #[test]
    fn the_timeout_is_read_from_its_variable() {
        let ctx = |v: &str| {
            Context::new(
                [(env_vars::CUDAENV_HTTP_TIMEOUT.into(), v.into())],
                std::path::PathBuf::from("/"),
            )
            .unwrap()
        };
        assert_eq!(
            Timeouts::from_ctx(&ctx("5")).unwrap().window,
            Duration::from_secs(5)
        );
        for bad in ["0", "-1", "5s", "1e3"] {
            assert!(
                matches!(
                    Timeouts::from_ctx(&ctx(bad)),
                    Err(Error::Context(ContextError::InvalidHttpTimeout { .. }))
                ),
                "{bad}"
            );
        }
    }
}
