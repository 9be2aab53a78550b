//! One stream per download: for small files, files of unknown size and
//! servers that ignore ranges. The bytes are hashed as they arrive and
//! appended to the `.part` file in blocks (`os::WRITE_BLOCK`); a part that has
//! bytes already is resumed with a `Range` request, and a server that
//! answers with the whole file gets a fresh part. A `file://` artifact is
//! copied the same way, with the same hashing and bounds.

use crate::error::{Error, InstallError, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::Fetcher;
use super::arrival::{Arrival, ArrivalEnd};
use super::part::{no_room, remove_part, room_for, write_failed};
use super::retry::{ATTEMPTS, Attempt, retrying};
use super::timeouts::{self, Paced};
use crate::install::sources::Artifact;
use crate::os::WRITE_BLOCK;
use crate::os::hash::Hasher;

/// How urgent a one-stream download is: such files are small (under
/// `PARALLEL_MIN`) or come from servers without ranges; they go before the
/// ranges of large files, whose weights are member sizes.
const STREAM_URGENCY: u64 = u64::MAX - 1;

impl Fetcher {
    /// Copies a `file://` artifact into `part`, hashing as it goes.
    pub(super) fn copy_local(
        &self,
        a: &Artifact,
        src: &Path,
        part: &Path,
        line: usize,
    ) -> Result<String> {
        let unreadable = |e: std::io::Error| {
            Error::Install(InstallError::Network {
                url: a.url.to_string(),
                reason: format!("cannot read the mirror's file: {e}"),
                from: Some(a.source),
            })
        };
        let mut from = match crate::os::fs::open_regular(src) {
            Ok((f, _)) => f,
            Err(crate::os::fs::ReadError::NotRegular(what)) => {
                return Err(Error::Install(InstallError::NotRegularArtifact {
                    url: a.url.to_string(),
                    what,
                }));
            }
            Err(e) => return Err(unreadable(e.into())),
        };
        // The file's own size tells the room it needs, announced or not.
        let len = from.metadata().map(|m| m.len()).unwrap_or(0);
        if len > self.bound(a) {
            return Err(self.past_bound(a, "the file holds"));
        }
        room_for(a, part, 0, len, true)?;
        let mut to = File::create(part).map_err(|e| write_failed(a, part, 0, e))?;
        self.progress.reset(line);
        let mut hasher = Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut got: u64 = 0;
        loop {
            let n = from.read(&mut buf).map_err(unreadable)?;
            if n == 0 {
                break;
            }
            got += n as u64;
            if got > self.bound(a) {
                drop(to);
                remove_part(part);
                return Err(self.past_bound(a, "the file holds"));
            }
            hasher.update(&buf[..n]);
            if let Err(e) = std::io::Write::write_all(&mut to, &buf[..n]) {
                drop(to);
                return Err(write_failed(a, part, got, e));
            }
            self.progress.advance(line, n as u64);
        }
        if let Some(want) = a.size
            && got != want
        {
            drop(to);
            remove_part(part);
            return Err(Error::Install(InstallError::SizeMismatch {
                url: a.url.to_string(),
                reason: format!("got {got} bytes, the index announced {want}"),
                from: Some(a.source),
            }));
        }
        Ok(hasher.finish())
    }

    /// One stream, appended to `part`, hashed as it arrives.
    pub(super) async fn download_stream(
        &self,
        a: &Artifact,
        part: &Path,
        line: usize,
        mark: &Arc<Arrival>,
    ) -> Result<String> {
        retrying(
            &a.url.to_string(),
            ATTEMPTS,
            self.backoff,
            &self.timeouts,
            || self.stream_once(a, part, line, mark),
        )
        .await
        .map_err(|e| e.from_source(a.source))
    }

    /// One try at the stream: on from the end of `part` when it has bytes
    /// already, else from the start.
    async fn stream_once(
        &self,
        a: &Artifact,
        part: &Path,
        line: usize,
        mark: &Arc<Arrival>,
    ) -> Result<String, Attempt> {
        let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
        let _slot = self.slots.acquire(Box::new(|| STREAM_URGENCY)).await;
        let mut req = self.client.get(a.url.expose());
        if have > 0 {
            req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let (resp, started) = timeouts::send(req, &self.timeouts).await?;
        let status = resp.status();
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(Attempt::Retry(format!("server answered {status}")));
        }
        if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
            // What we have is not a prefix the server recognises: start over.
            mark.finish(ArrivalEnd::Abandoned);
            remove_part(part);
            return Err(Attempt::Retry("resume refused; restarting".into()));
        }
        if !status.is_success() {
            return Err(Attempt::Fail(Error::Install(InstallError::Network {
                url: a.url.to_string(),
                reason: format!("server answered {status}"),
                from: Some(a.source),
            })));
        }
        let start = if have > 0 && status == reqwest::StatusCode::PARTIAL_CONTENT {
            StreamStart::Resume
        } else {
            StreamStart::Fresh
        };
        // A size the index did not announce but the server does: bounded
        // and given room before a byte is written.
        if a.size.is_none()
            && let Some(len) = resp.content_length()
        {
            let before = match start {
                StreamStart::Resume => have,
                StreamStart::Fresh => 0,
            };
            self.bound_announced(a, part, before, len)
                .map_err(Attempt::Fail)?;
        }
        let mut into = self
            .open_stream_part(a, part, line, mark, start, have)
            .map_err(Attempt::Fail)?;
        let have = into.got;
        self.progress.advance(line, have);
        let expected_len = resp.content_length().map(|l| l + have).or(a.size);
        self.receive(&mut into, resp, started, line).await?;
        let got = into.got;
        if let Some(want) = expected_len
            && got < want
        {
            return Err(Attempt::Retry(format!(
                "connection closed after {got} of {want} bytes"
            )));
        }
        if let Some(want) = a.size
            && got != want
        {
            return Err(Attempt::Retry(format!(
                "got {got} bytes, the index announced {want}"
            )));
        }
        Ok(into.hasher.finish())
    }

    /// The bound and the room for the `len` bytes a server announces for a
    /// download whose index announced no size (`before`: the bytes the part
    /// keeps).
    fn bound_announced(&self, a: &Artifact, part: &Path, before: u64, len: u64) -> Result<()> {
        if before + len > self.bound(a) {
            remove_part(part);
            return Err(self.past_bound(a, "the server announced"));
        }
        if let Err(e) = room_for(a, part, before, len, true) {
            remove_part(part);
            return Err(e);
        }
        Ok(())
    }

    /// The part the stream goes into: the one there, its bytes hashed
    /// first, when the server resumes it; else a new one.
    fn open_stream_part<'s>(
        &self,
        a: &'s Artifact,
        part: &'s Path,
        line: usize,
        mark: &'s Arrival,
        start: StreamStart,
        have: u64,
    ) -> Result<StreamInto<'s>> {
        let io = |e: std::io::Error| Error::io("cannot write", part)(e);
        let mut hasher = Hasher::new();
        let (file, got) = match start {
            StreamStart::Resume => {
                // Hash what we already have, then append.
                hasher
                    .read_from(File::open(part).map_err(io)?)
                    .map_err(io)?;
                let f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(part)
                    .map_err(io)?;
                (f, have)
            }
            StreamStart::Fresh => {
                // Fresh start (also when the server ignored our Range). A
                // follower that read earlier bytes cannot go on.
                if have > 0 {
                    mark.finish(ArrivalEnd::Abandoned);
                }
                self.progress.reset(line);
                // A new file, not the old one truncated: what a follower mapped
                // from the old one stays valid until it notices.
                remove_part(part);
                let f = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(part)
                    .map_err(io)?;
                mark.attach(&f);
                (f, 0)
            }
        };
        Ok(StreamInto {
            a,
            part,
            mark,
            file,
            hasher,
            block: Vec::with_capacity(WRITE_BLOCK),
            got,
        })
    }

    /// Reads the body into the part until it ends, breaks or passes the
    /// download's bound. What is held is flushed before any return that
    /// keeps the part, so a resume starts after it.
    async fn receive(
        &self,
        into: &mut StreamInto<'_>,
        resp: reqwest::Response,
        started: tokio::time::Instant,
        line: usize,
    ) -> Result<(), Attempt> {
        let (a, part) = (into.a, into.part);
        // A part that ran out of room is removed.
        let failed = |e: Error| no_room(Attempt::Fail(e), part);
        let mut stream = Paced::new(resp.bytes_stream(), &self.timeouts, started);
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    into.flush().map_err(failed)?;
                    return Err(e);
                }
            };
            into.take(&chunk).map_err(failed)?;
            self.progress.advance(line, chunk.len() as u64);
            if into.got > self.bound(a) {
                remove_part(part);
                // More bytes than announced (or than any such file has) is
                // not a flaky connection but a different file: an
                // integrity failure, never retried.
                return Err(Attempt::Fail(self.past_bound(a, "the server sent")));
            }
        }
        into.flush().map_err(failed)
    }
}

/// Where a stream's bytes start in the part.
#[derive(Clone, Copy)]
enum StreamStart {
    /// After the bytes the part has (the server answered a range with 206).
    Resume,
    /// At zero, in a new part.
    Fresh,
}

/// A stream's bytes on their way into the part: hashed as they arrive,
/// written in blocks (see `os::WRITE_BLOCK`), shown to a follower once written.
struct StreamInto<'s> {
    a: &'s Artifact,
    part: &'s Path,
    mark: &'s Arrival,
    file: File,
    hasher: Hasher,
    /// Bytes received and not written yet.
    block: Vec<u8>,
    /// Bytes of the download so far, those in `block` included.
    got: u64,
}

impl StreamInto<'_> {
    /// Takes a chunk of the body, writing a block once one is full.
    fn take(&mut self, chunk: &[u8]) -> Result<()> {
        self.hasher.update(chunk);
        self.block.extend_from_slice(chunk);
        self.got += chunk.len() as u64;
        if self.block.len() >= WRITE_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the block held. Before each block, the room for it: a
    /// download of unknown size stops, naming the space, before the disk is
    /// full.
    fn flush(&mut self) -> Result<()> {
        let (a, part, upto) = (self.a, self.part, self.got);
        let len = self.block.len() as u64;
        if a.size.is_none() {
            room_for(a, part, upto - len, len, false)?;
        }
        std::io::Write::write_all(&mut self.file, &self.block)
            .map_err(|e| write_failed(a, part, upto - len, e))?;
        self.block.clear();
        self.mark.update(|m| {
            m.prefix = upto;
            m.hashed = upto;
        });
        Ok(())
    }
}
