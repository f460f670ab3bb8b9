//! The connection cap (`--max-connections`), held for good only by
//! connections that authenticated.
//!
//! Every open connection takes one of `max_connections` slots. A connection
//! is *trusted* once one of its requests carried a valid token (without
//! tokens: a loopback `Host` and no `Origin`); until then its slot is only
//! lent. When every slot is taken and a newcomer is waiting to be accepted,
//! the server closes one untrusted connection to make room: of the peer
//! address holding the most untrusted connections, the one open longest.
//! Only when every slot is held by a trusted connection do newcomers wait in
//! the kernel's backlog. So callers without a token cannot hold the cap
//! however many sockets they keep open or however they pace their
//! requests, and `/healthz` (which needs no token) is answered all the same.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

/// The slots, and who holds each.
#[derive(Debug)]
pub(crate) struct Slots {
    permits: Arc<Semaphore>,
    /// Open connections by the order they were accepted in (oldest first).
    open: Mutex<BTreeMap<u64, Holder>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Holder {
    peer: IpAddr,
    trusted: Arc<AtomicBool>,
    close: Option<oneshot::Sender<()>>,
}

/// One connection's slot: given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    id: u64,
    slots: Arc<Slots>,
    /// Set once a request on the connection authenticated.
    pub trusted: Arc<AtomicBool>,
    /// Resolves when the connection must close to make room.
    pub evicted: oneshot::Receiver<()>,
    _permit: OwnedSemaphorePermit,
}

impl Slots {
    /// `max` slots (at least one).
    pub(crate) fn new(max: usize) -> Arc<Slots> {
        Arc::new(Slots {
            permits: Arc::new(Semaphore::new(max.clamp(1, Semaphore::MAX_PERMITS))),
            open: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        })
    }

    /// A free slot now, if there is one.
    pub(crate) fn try_free(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// A free slot, once there is one.
    pub(crate) async fn free(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().acquire_owned().await.ok()
    }

    /// Whether some connection holds its slot without having authenticated.
    pub(crate) fn any_untrusted(&self) -> bool {
        self.lock()
            .values()
            .any(|h| !h.trusted.load(Ordering::SeqCst))
    }

    /// Closes one untrusted connection, to make room for a newcomer: of the
    /// peer holding the most untrusted connections, the one open longest.
    /// False when every connection is trusted.
    pub(crate) fn make_room(&self) -> bool {
        let mut open = self.lock();
        let mut per_peer: HashMap<IpAddr, (usize, u64)> = HashMap::new();
        for (id, h) in open.iter() {
            if !h.trusted.load(Ordering::SeqCst) {
                // Oldest first: the first id seen for a peer is its oldest.
                per_peer.entry(h.peer).or_insert((0, *id)).0 += 1;
            }
        }
        let Some((_, (_, id))) = per_peer
            .into_iter()
            .max_by_key(|(_, (count, id))| (*count, std::cmp::Reverse(*id)))
        else {
            return false;
        };
        if let Some(close) = open.get_mut(&id).and_then(|h| h.close.take()) {
            let _ = close.send(());
        }
        open.remove(&id);
        true
    }

    /// The slot of a connection from `peer` accepted with `permit`.
    pub(crate) fn hold(self: &Arc<Self>, permit: OwnedSemaphorePermit, peer: IpAddr) -> Slot {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let trusted = Arc::new(AtomicBool::new(false));
        let (close, evicted) = oneshot::channel();
        self.lock().insert(
            id,
            Holder {
                peer,
                trusted: trusted.clone(),
                close: Some(close),
            },
        );
        Slot {
            id,
            slots: self.clone(),
            trusted,
            evicted,
            _permit: permit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Holder>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_made_by_the_busiest_peers_oldest_untrusted_connection_never_a_trusted_one() {
        let slots = Slots::new(4);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let mut held: Vec<Slot> = [a, b, b, a]
            .into_iter()
            .map(|peer| slots.hold(slots.try_free().expect("a slot"), peer))
            .collect();
        assert!(slots.try_free().is_none(), "all four taken");
        held[0].trusted.store(true, Ordering::SeqCst);
        // b holds two untrusted connections, a one: b's oldest goes.
        assert!(slots.make_room());
        assert!(held[1].evicted.try_recv().is_ok(), "b's oldest closed");
        assert!(held[2].evicted.try_recv().is_err());
        drop(held.remove(1));
        assert!(slots.try_free().is_some(), "its slot is free");
        for h in &held {
            h.trusted.store(true, Ordering::SeqCst);
        }
        assert!(!slots.any_untrusted());
        assert!(!slots.make_room(), "trusted connections keep their slots");
    }
}
