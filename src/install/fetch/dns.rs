//! Host names are looked up once per command, however many requests go there.
//!
//! A cold `ls-remote` or install opens a dozen connections to the same few
//! hosts at once (an index, its file host). With the default resolver each
//! opens with its own `getaddrinfo`, and glibc sends the A and AAAA questions
//! of every one of them in parallel over UDP. Resolvers behind NAT and
//! connection tracking (containers, Kubernetes, these development machines)
//! drop one of such a burst now and then, and glibc then waits its full 5 s
//! timeout before asking again: measured here, a cold `ls-remote` took 0.14 s
//! or 5.03 s, about half the time each (`scripts/bench-ls-remote.sh`). So the
//! lookups of one name share one answer: the first caller resolves (on a
//! blocking thread, with the system's rules: /etc/hosts, nsswitch, search
//! domains), the others wait for it. A failed lookup is not kept, so the next
//! request asks again. Answers live as long as the client, one command.

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::OnceCell;

type Answer = Arc<OnceCell<Vec<SocketAddr>>>;

/// The system resolver, each name asked once (see the module docs).
#[derive(Default)]
pub struct SharedLookups {
    names: Mutex<HashMap<String, Answer>>,
}

impl SharedLookups {
    fn answer(&self, name: &str) -> Answer {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        names.entry(name.to_string()).or_default().clone()
    }
}

impl Resolve for SharedLookups {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let answer = self.answer(&host);
        Box::pin(async move {
            let addrs = answer
                .get_or_try_init(|| async {
                    let h = host.clone();
                    // Port 0: hyper sets the URL's port on each address.
                    tokio::task::spawn_blocking(move || {
                        (h.as_str(), 0).to_socket_addrs().map(Vec::from_iter)
                    })
                    .await
                    .map_err(std::io::Error::other)?
                })
                .await?
                .clone();
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn concurrent_lookups_of_one_name_share_one_answer() {
        let r = SharedLookups::default();
        let (a, b) = tokio::join!(
            r.resolve("localhost".parse().unwrap()),
            r.resolve("localhost".parse().unwrap())
        );
        let a: Vec<SocketAddr> = a.unwrap().collect();
        let b: Vec<SocketAddr> = b.unwrap().collect();
        assert!(!a.is_empty());
        assert_eq!(a, b);
        assert!(a.iter().all(|s| s.ip().is_loopback()));
        assert_eq!(r.names.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_failed_lookup_is_asked_again() {
        let r = SharedLookups::default();
        let name = "no-such-host.invalid";
        assert!(r.resolve(name.parse().unwrap()).await.is_err());
        assert!(!r.answer(name).initialized());
    }
}
