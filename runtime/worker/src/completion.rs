//! Completion: which (hook, handler) deliveries of an event have finished,
//! kept in a JetStream key-value bucket (`hookrt-done-<durable>`) that every
//! worker of the group shares: one mark per event, `done.<digest>` (the
//! first 20 bytes of [`Envelope::digest`] in hex, which covers the agent,
//! the id and what the event says, so two agents' events with one id, or
//! two events under one id, never share a mark), listing its finished
//! deliveries.
//!
//! A mark is written only when a message is not acked whole: before a nak
//! for a retry, and before a message whose deliveries failed for good goes
//! to the dead letters. Its redelivery (or re-drive) then runs only the
//! deliveries the mark does not list. A message whose deliveries all ended
//! is acked without a mark (the ack says it all), which spares the server a
//! write per delivery; a worker that dies mid-message leaves no mark, so the
//! redelivery runs that one message's deliveries again, at a higher attempt
//! (at-least-once, docs/worker.md).

use std::collections::BTreeSet;

use async_nats::jetstream::kv;

use crate::{WorkerError, nats};
use hookrt::Envelope;

/// The finished deliveries of one event: (hook id, handler).
pub(crate) type Done = BTreeSet<(String, String)>;

/// The key of an event's mark: `done.<digest>`.
pub(crate) fn key(envelope: &Envelope) -> String {
    format!("done.{}", hex::encode(&envelope.digest()[..20]))
}

/// The key a decision's answer is kept under: `decided.<digest>`.
pub(crate) fn decided_key(envelope: &Envelope) -> String {
    format!("decided.{}", hex::encode(&envelope.digest()[..20]))
}

/// A mark as stored.
#[derive(serde::Serialize, serde::Deserialize)]
struct Mark {
    /// The finished (hook, handler) pairs.
    finished: Vec<(String, String)>,
    /// The attempt that wrote it.
    attempt: u32,
    /// The worker that wrote it.
    worker: String,
}

/// The group's completion marks.
#[derive(Clone)]
pub(crate) struct Completion {
    store: kv::Store,
}

impl Completion {
    /// The marks in `store`.
    pub(crate) fn new(store: kv::Store) -> Completion {
        Completion { store }
    }

    /// The deliveries of `event_id` a mark lists as finished (none without
    /// a mark). A mark that does not read is ignored, with a warning: the
    /// deliveries run again, which at-least-once allows.
    pub(crate) async fn finished(&self, envelope: &Envelope) -> Result<Done, WorkerError> {
        let event_id = envelope.id.as_str();
        let Some(stored) = self.get(&key(envelope)).await? else {
            return Ok(Done::new());
        };
        match serde_json::from_slice::<Mark>(&stored) {
            Ok(mark) => Ok(mark.finished.into_iter().collect()),
            Err(e) => {
                tracing::warn!(target: "hookrt", event_id, "completion mark unreadable, its deliveries run again: {e}");
                Ok(Done::new())
            }
        }
    }

    /// Stores the mark of `event_id` (replacing any): `finished` lists every
    /// delivery finished so far, those of earlier attempts included.
    pub(crate) async fn mark(
        &self,
        envelope: &Envelope,
        finished: &Done,
        attempt: u32,
        worker: &str,
    ) -> Result<(), WorkerError> {
        let mark = Mark {
            finished: finished.iter().cloned().collect(),
            attempt,
            worker: worker.to_owned(),
        };
        let value = serde_json::to_vec(&mark).map_err(|e| WorkerError::Encode {
            event_id: envelope.id.clone(),
            source: e,
        })?;
        self.store
            .put(key(envelope), value.into())
            .await
            .map_err(nats("cannot store a completion mark"))?;
        Ok(())
    }

    /// Stores a marker once: true if this call created it (nobody had).
    pub(crate) async fn create_once(&self, key: &str) -> Result<bool, WorkerError> {
        self.create_once_with(key, "1").await
    }

    async fn create_once_with(&self, key: &str, value: &str) -> Result<bool, WorkerError> {
        match self.store.create(key, value.to_owned().into()).await {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(WorkerError::nats("cannot create a marker", e)),
        }
    }

    /// The value of `key`, stored as `value` first if it had none.
    pub(crate) async fn get_or_create(
        &self,
        key: &str,
        value: &str,
    ) -> Result<String, WorkerError> {
        if self.create_once_with(key, value).await? {
            return Ok(value.to_owned());
        }
        Ok(String::from_utf8_lossy(&self.get(key).await?.unwrap_or_default()).into_owned())
    }

    /// Whether a marker exists (any key).
    pub(crate) async fn exists(&self, key: &str) -> Result<bool, WorkerError> {
        Ok(self.get(key).await?.is_some())
    }

    async fn get(&self, key: &str) -> Result<Option<bytes::Bytes>, WorkerError> {
        self.store
            .get(key)
            .await
            .map_err(nats("cannot read a marker"))
    }
}
