//! Slots handed out by priority, not in arrival order: an install's
//! connections, and its cores.
//!
//! Every download of an install shares a fixed number of connections
//! (`fetch`), and every archive being unpacked shares the machine's cores
//! (`unpack::zip`). When a slot frees up it goes to the waiter whose work
//! matters most *now*: each waiter carries a function that says how urgent
//! it is, asked at the moment a slot is free (a ranged download learns which
//! bytes it wants most only after its first bytes arrived, and that changes
//! as it goes). Equal urgency is served first come, first served. Tasks wait
//! with `acquire`, threads with `acquire_blocking`.
//!
//! Urgency is what shortens the whole install: the largest member of any
//! archive is inflated on one core from start to end and so bounds when the
//! install can finish (docs/PERFORMANCE.md). Its bytes come before every
//! other download's, and once they are there it gets the next free core,
//! ahead of the smaller members of every archive.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// How urgent a waiter is, asked whenever a slot is free; higher first.
pub type Urgency = Box<dyn Fn() -> u64 + Send>;

/// A fixed number of slots, granted by urgency.
pub struct Slots {
    state: Mutex<State>,
}

struct State {
    /// How many slots there are in all.
    count: usize,
    free: usize,
    next_seq: u64,
    waiting: Vec<Waiter>,
}

struct Waiter {
    seq: u64,
    urgency: Urgency,
    grant: oneshot::Sender<Slot>,
}

/// One slot; given back when dropped.
pub struct Slot {
    slots: Option<Arc<Slots>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(slots) = self.slots.take() {
            Slots::give_back(&slots);
        }
    }
}

impl Slots {
    pub fn new(count: usize) -> Arc<Slots> {
        Arc::new(Slots {
            state: Mutex::new(State {
                count: count.max(1),
                free: count.max(1),
                next_seq: 0,
                waiting: Vec::new(),
            }),
        })
    }

    /// How many slots there are in all.
    pub fn count(&self) -> usize {
        self.state.lock().expect("poisoned").count
    }

    /// Waits for a slot. Dropping the future gives up the place in line
    /// (and any slot already granted to it).
    pub async fn acquire(self: &Arc<Self>, urgency: Urgency) -> Slot {
        match self.queue(urgency) {
            Ok(slot) => slot,
            // A waiter leaves the line only by being granted a slot or by
            // giving up (then its receiver is gone), so the sender is never
            // dropped unsent while the receiver waits.
            Err(receiver) => receiver.await.expect("a waiter is always granted a slot"),
        }
    }

    /// Keeps `slot` for more work at `urgency`, unless someone waits with
    /// more urgent work: then the slot goes to them, and this waits in line
    /// again. A holder that gave its slot back between two pieces of work
    /// would lose it to whoever happened to wait, however much less urgent
    /// (a ranged download's next range of the largest member, to another
    /// file's bytes).
    pub async fn renew(self: &Arc<Self>, slot: Slot, urgency: Urgency) -> Slot {
        let mine = urgency();
        let outranked = self
            .state
            .lock()
            .expect("poisoned")
            .waiting
            .iter()
            .any(|w| !w.grant.is_closed() && (w.urgency)() > mine);
        if !outranked {
            return slot;
        }
        drop(slot);
        self.acquire(urgency).await
    }

    /// `acquire` for a thread outside the async runtime: blocks it until a
    /// slot is granted.
    pub fn acquire_blocking(self: &Arc<Self>, urgency: Urgency) -> Slot {
        match self.queue(urgency) {
            Ok(slot) => slot,
            Err(receiver) => receiver
                .blocking_recv()
                .expect("a waiter is always granted a slot"),
        }
    }

    /// A slot at once when one is free and no one waits; else a place in
    /// line, whose receiver is granted the slot.
    fn queue(self: &Arc<Self>, urgency: Urgency) -> Result<Slot, oneshot::Receiver<Slot>> {
        let receiver = {
            let mut s = self.state.lock().expect("poisoned");
            if s.free > 0 && s.waiting.is_empty() {
                s.free -= 1;
                return Ok(Slot {
                    slots: Some(self.clone()),
                });
            }
            let (grant, receiver) = oneshot::channel();
            let seq = s.next_seq;
            s.next_seq += 1;
            s.waiting.push(Waiter {
                seq,
                urgency,
                grant,
            });
            receiver
        };
        // A slot may be free while others wait (one given back as its
        // receiver gave up): hand it out now rather than at the next return.
        Self::hand_out(self);
        Err(receiver)
    }

    /// Takes back a slot, then hands free slots to the most urgent waiters.
    fn give_back(this: &Arc<Self>) {
        this.state.lock().expect("poisoned").free += 1;
        Self::hand_out(this);
    }

    fn hand_out(this: &Arc<Self>) {
        loop {
            let waiter = {
                let mut s = this.state.lock().expect("poisoned");
                s.waiting.retain(|w| !w.grant.is_closed());
                if s.free == 0 || s.waiting.is_empty() {
                    return;
                }
                let best = s
                    .waiting
                    .iter()
                    .enumerate()
                    .max_by(|(_, a), (_, b)| {
                        (a.urgency)().cmp(&(b.urgency)()).then(b.seq.cmp(&a.seq))
                    })
                    .map(|(i, _)| i)
                    .expect("not empty");
                s.free -= 1;
                s.waiting.swap_remove(best)
            };
            let slot = Slot {
                slots: Some(this.clone()),
            };
            // A waiter that gave up just now: the slot comes straight back
            // (its drop runs `give_back`, which hands it on).
            if let Err(slot) = waiter.grant.send(slot) {
                drop(slot);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn fixed(n: u64) -> Urgency {
        Box::new(move || n)
    }

    #[tokio::test]
    async fn free_slots_are_granted_at_once() {
        let slots = Slots::new(2);
        let a = slots.acquire(fixed(0)).await;
        let b = slots.acquire(fixed(0)).await;
        drop((a, b));
        let _c = slots.acquire(fixed(0)).await;
    }

    #[tokio::test]
    async fn the_most_urgent_waiter_goes_first_and_ties_in_order() {
        let slots = Slots::new(1);
        let held = slots.acquire(fixed(0)).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (name, urgency) in [("low", 1), ("high", 9), ("mid-1", 5), ("mid-2", 5)] {
            let (mine, order) = (slots.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _slot = mine.acquire(fixed(urgency)).await;
                order.lock().unwrap().push(name);
            }));
            // Queued in this order.
            while slots.state.lock().unwrap().waiting.len() < tasks.len() {
                tokio::task::yield_now().await;
            }
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["high", "mid-1", "mid-2", "low"]);
    }

    #[tokio::test]
    async fn urgency_is_asked_when_a_slot_frees_not_when_queued() {
        let slots = Slots::new(1);
        let held = slots.acquire(fixed(0)).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let rising = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for name in ["fixed", "rising"] {
            let (mine, order, rising) = (slots.clone(), order.clone(), rising.clone());
            let urgency: Urgency = match name {
                "fixed" => fixed(5),
                _ => Box::new(move || rising.load(Ordering::SeqCst)),
            };
            tasks.push(tokio::spawn(async move {
                let _slot = mine.acquire(urgency).await;
                order.lock().unwrap().push(name);
            }));
            while slots.state.lock().unwrap().waiting.len() < tasks.len() {
                tokio::task::yield_now().await;
            }
        }
        // Queued at 0, now more urgent than the one queued first at 5.
        rising.store(7, Ordering::SeqCst);
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["rising", "fixed"]);
    }

    /// Spawns a task that waits for a slot at `urgency`; returns once it is
    /// in line.
    async fn waiter(slots: &Arc<Slots>, urgency: u64) -> tokio::task::JoinHandle<Slot> {
        let before = slots.state.lock().unwrap().waiting.len();
        let mine = slots.clone();
        let task = tokio::spawn(async move { mine.acquire(fixed(urgency)).await });
        while slots.state.lock().unwrap().waiting.len() <= before {
            tokio::task::yield_now().await;
        }
        task
    }

    /// A holder keeps its slot for work as urgent as any waiter's, and hands
    /// it over to a more urgent waiter.
    #[tokio::test]
    async fn a_renewed_slot_stays_unless_someone_more_urgent_waits() {
        let slots = Slots::new(1);
        let held = slots.acquire(fixed(5)).await;
        let low = waiter(&slots, 1).await;
        // Kept at once (a slot handed to the waiter would leave this waiting).
        let held = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            slots.renew(held, fixed(5)),
        )
        .await
        .expect("renewed without waiting");
        let in_line = slots.state.lock().unwrap().waiting.len();
        assert_eq!(in_line, 1, "a less urgent waiter still waits");
        let high = waiter(&slots, 9).await;
        let renewing = {
            let slots = slots.clone();
            tokio::spawn(async move { slots.renew(held, fixed(5)).await })
        };
        // The slot went to the most urgent waiter; the renewer waits.
        drop(high.await.unwrap());
        let renewed = renewing.await.unwrap();
        let in_line = slots.state.lock().unwrap().waiting.len();
        assert_eq!(in_line, 1, "the least urgent is still last");
        drop(renewed);
        drop(low.await.unwrap());
    }

    /// Threads wait in the same line as tasks: the most urgent first.
    #[test]
    fn threads_are_granted_slots_by_urgency_too() {
        let slots = Slots::new(1);
        assert_eq!(slots.count(), 1);
        let held = slots.acquire_blocking(fixed(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            for (queued, (name, urgency)) in [("small", 10), ("large", 500)].into_iter().enumerate()
            {
                let (mine, order) = (slots.clone(), order.clone());
                s.spawn(move || {
                    let _slot = mine.acquire_blocking(fixed(urgency));
                    order.lock().unwrap().push(name);
                });
                // Queued in this order.
                while slots.state.lock().unwrap().waiting.len() <= queued {
                    std::thread::yield_now();
                }
            }
            drop(held);
        });
        assert_eq!(*order.lock().unwrap(), ["large", "small"]);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_loses_nothing() {
        let slots = Slots::new(1);
        let held = slots.acquire(fixed(0)).await;
        let gave_up = {
            let slots = slots.clone();
            tokio::spawn(async move {
                let _s = slots.acquire(fixed(9)).await;
            })
        };
        while slots.state.lock().unwrap().waiting.is_empty() {
            tokio::task::yield_now().await;
        }
        gave_up.abort();
        let _ = gave_up.await;
        drop(held);
        // The slot is free again, not lost with the one who left.
        let _again = slots.acquire(fixed(0)).await;
        assert_eq!(slots.state.lock().unwrap().free, 0);
    }
}
