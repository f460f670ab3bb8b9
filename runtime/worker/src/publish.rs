//! Publishing envelopes: to their session's subject, with `Nats-Msg-Id` set
//! to the event id so the stream stores a re-published event once (within
//! [`DEDUP_WINDOW`](crate::DEDUP_WINDOW)), and `persisted` only once the
//! stream's publish ack came back.

use async_nats::HeaderMap;
use async_nats::jetstream::{self, context::PublishAckFuture};
use hookrt::{Durability, Envelope};

use crate::WorkerError;
use crate::subject::subject_of;

/// The header naming where a decision or edit event's resolution is published.
pub const REPLY_HEADER: &str = "Hookrt-Reply-To";
/// What a [`REPLY_HEADER`] must start with: the reply inboxes NATS clients
/// make (`Client::new_inbox`). A worker answers nowhere else, so a
/// publisher cannot make it write a KV key or a JetStream API subject.
pub const REPLY_PREFIX: &str = "_INBOX.";
/// The JetStream header the stream dedups on.
pub const MSG_ID_HEADER: &str = "Nats-Msg-Id";
/// Deliveries a message had before it was re-driven from the dead letters:
/// the attempts of its next deliveries continue after them.
pub const ATTEMPT_BASE_HEADER: &str = "Hookrt-Attempt-Base";

/// What a publish answers, once JetStream stored (or recognised) the event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// The event id.
    pub event_id: String,
    /// `persisted`: the stream acked it.
    pub durability: Durability,
    /// The subject it went to.
    pub subject: String,
    /// Its sequence in the stream (the original one for a duplicate).
    pub seq: u64,
    /// True when the stream already held this id (within its dedup window):
    /// nothing new was stored.
    pub duplicate: bool,
}

/// Where and how envelopes are published.
#[derive(Debug, Clone)]
pub struct Publisher {
    js: jetstream::Context,
    prefix: String,
    partitions: u32,
}

impl Publisher {
    /// A publisher on `client` under `prefix`, hashing sessions into `partitions`.
    pub fn new(client: async_nats::Client, prefix: &str, partitions: u32) -> Publisher {
        Publisher {
            js: jetstream::new(client),
            prefix: prefix.to_owned(),
            partitions,
        }
    }

    /// Sends `envelope` (with `headers`) without waiting for the stream's
    /// ack: await [`Pending::persisted`] for it. Sending many before waiting
    /// lets their acks overlap.
    pub async fn send(
        &self,
        envelope: &Envelope,
        mut headers: HeaderMap,
    ) -> Result<Pending, WorkerError> {
        let subject = subject_of(&self.prefix, envelope, self.partitions);
        let payload = serde_json::to_vec(envelope).map_err(|source| WorkerError::Encode {
            event_id: envelope.id.clone(),
            source,
        })?;
        headers.insert(MSG_ID_HEADER, envelope.id.as_str());
        let ack = self
            .js
            .publish_with_headers(subject.clone(), headers, payload.into())
            .await
            .map_err(|e| {
                WorkerError::nats(
                    format!("cannot publish event {} to {subject}", envelope.id),
                    e,
                )
            })?;
        Ok(Pending {
            ack,
            event_id: envelope.id.clone(),
            subject,
        })
    }

    /// Publishes `envelope` and waits for the stream's ack.
    pub async fn publish(&self, envelope: &Envelope) -> Result<Published, WorkerError> {
        self.send(envelope, HeaderMap::new())
            .await?
            .persisted()
            .await
    }
}

/// A publish whose ack is on its way.
pub struct Pending {
    ack: PublishAckFuture,
    event_id: String,
    subject: String,
}

impl Pending {
    /// Waits for the stream's ack.
    pub async fn persisted(self) -> Result<Published, WorkerError> {
        let ack = self.ack.await.map_err(|e| {
            WorkerError::nats(
                format!("event {} was not stored on {}", self.event_id, self.subject),
                e,
            )
        })?;
        Ok(Published {
            event_id: self.event_id,
            durability: Durability::Persisted,
            subject: self.subject,
            seq: ack.sequence,
            duplicate: ack.duplicate,
        })
    }
}
