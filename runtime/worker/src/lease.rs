//! Leases: which worker owns which partition, kept in a JetStream key-value
//! bucket (`hookrt-lease-<durable>`) whose entries expire after the lease
//! TTL (the bucket's `max_age`; nats-server 2.9 has no per-key TTL).
//!
//! Every TTL/3 each worker: writes its heartbeat `member.<id>`; renews each
//! lease it holds with a compare-and-set on the revision it wrote last
//! (a lost compare means someone else owns the partition now: it stops
//! consuming it at once); counts the live members and takes its fair share,
//! `ceil(partitions / members)`, by creating absent `partition.<N>` keys
//! (create fails if the key exists), or gives back what is above its share
//! once the partition's in-flight message is finished. A worker that dies
//! stops renewing: its leases and heartbeat expire after the TTL, and the
//! others take its partitions.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use async_nats::jetstream::kv;
use futures_util::StreamExt;

use crate::subject::partition_of;
use crate::{WorkerError, nats};

/// A worker's view of the leases.
pub(crate) struct Leases {
    store: kv::Store,
    me: String,
    partitions: u32,
    ttl: Duration,
    /// Partition -> (revision last written, when that write was sent).
    held: BTreeMap<u32, (u64, Instant)>,
    /// Partitions being given back: not renewed past their release.
    releasing: BTreeSet<u32>,
}

/// What a tick changed.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// Partitions now owned: start consuming them.
    pub acquired: Vec<u32>,
    /// Partitions lost (another worker owns them): stop at once.
    pub lost: Vec<u32>,
    /// Partitions above the fair share: finish the in-flight message, stop,
    /// then [`Leases::release`].
    pub surplus: Vec<u32>,
}

fn partition_key(p: u32) -> String {
    format!("partition.{p}")
}

impl Leases {
    /// Leases in `store` for worker `me`.
    pub(crate) fn new(store: kv::Store, me: &str, partitions: u32, ttl: Duration) -> Leases {
        Leases {
            store,
            me: me.to_owned(),
            partitions,
            ttl,
            held: BTreeMap::new(),
            releasing: BTreeSet::new(),
        }
    }

    /// Until when the lease on `p` is certainly still ours: the last renewal
    /// was sent before the server stored it, so it expires after this.
    pub(crate) fn valid_until(&self, p: u32) -> Option<Instant> {
        self.held.get(&p).map(|(_, sent)| *sent + self.ttl)
    }

    /// Heartbeat, renewals, and the fair share.
    pub(crate) async fn tick(&mut self) -> Result<Changes, WorkerError> {
        let mut changes = Changes::default();
        self.store
            .put(format!("member.{}", self.me), "1".into())
            .await
            .map_err(nats("cannot send the heartbeat"))?;
        let held: Vec<(u32, u64)> = self.held.iter().map(|(p, (r, _))| (*p, *r)).collect();
        for (p, revision) in held {
            let sent = Instant::now();
            match self
                .store
                .update(partition_key(p), self.me.clone().into(), revision)
                .await
            {
                Ok(r) => {
                    self.held.insert(p, (r, sent));
                }
                Err(e) => {
                    tracing::warn!(target: "hookrt", partition = p, "lease lost: {e}");
                    self.held.remove(&p);
                    self.releasing.remove(&p);
                    changes.lost.push(p);
                }
            }
        }
        let members = self.members().await?.max(1);
        let share = self.partitions.div_ceil(members) as usize;
        let keeping = self.held.len() - self.releasing.len();
        if keeping > share {
            let extra: Vec<u32> = self
                .held
                .keys()
                .rev()
                .filter(|p| !self.releasing.contains(p))
                .take(keeping - share)
                .copied()
                .collect();
            tracing::info!(target: "hookrt", ?extra, members, share, "giving leases back");
            self.releasing.extend(&extra);
            changes.surplus = extra;
        } else if self.held.len() < share {
            // Start where this worker's id hashes to, so workers starting
            // together try different partitions first.
            let start = partition_of(&self.me, "", self.partitions);
            for i in 0..self.partitions {
                if self.held.len() >= share {
                    break;
                }
                let p = (start + i) % self.partitions;
                if self.held.contains_key(&p) {
                    continue;
                }
                let sent = Instant::now();
                let created = self
                    .store
                    .create(partition_key(p), self.me.clone().into())
                    .await;
                if let Err(e) = &created {
                    tracing::debug!(target: "hookrt", partition = p, "lease not taken: {e}");
                }
                if let Ok(r) = created {
                    tracing::info!(target: "hookrt", partition = p, members, share, "lease taken");
                    self.held.insert(p, (r, sent));
                    changes.acquired.push(p);
                }
            }
        }
        Ok(changes)
    }

    /// Live workers of the group (heartbeats not expired). Counted by
    /// distinct key: a heartbeat written while the listing runs can be
    /// listed twice, and counting it twice made the fair share shrink and
    /// partitions move back and forth under load.
    async fn members(&self) -> Result<u32, WorkerError> {
        let mut keys = self
            .store
            .keys()
            .await
            .map_err(nats("cannot list the group's members"))?;
        let mut members = BTreeSet::new();
        while let Some(k) = keys.next().await {
            let k = k.map_err(nats("cannot list the group's members"))?;
            if k.starts_with("member.") {
                members.insert(k);
            }
        }
        Ok(members.len() as u32)
    }

    /// Gives the lease on `p` back (its consumer is stopped, nothing in flight).
    pub(crate) async fn release(&mut self, p: u32) {
        self.releasing.remove(&p);
        if let Some((revision, _)) = self.held.remove(&p)
            && let Err(e) = self
                .store
                .delete_expect_revision(partition_key(p), Some(revision))
                .await
        {
            tracing::warn!(target: "hookrt", partition = p, "cannot give the lease back: {e}");
        }
    }

    /// Gives every lease and the heartbeat back (shutdown).
    pub(crate) async fn release_all(&mut self) {
        let held: Vec<u32> = self.held.keys().copied().collect();
        for p in held {
            self.release(p).await;
        }
        let _ = self.store.delete(format!("member.{}", self.me)).await;
    }
}
