//! Publishing envelopes: to their session's subject, with `Nats-Msg-Id` set
//! from the agent and the event id ([`msg_id`]) so the stream stores a
//! re-published event once (within [`DEDUP_WINDOW`](crate::DEDUP_WINDOW))
//! and never takes one agent's event for another's, and `persisted` only
//! once the stream's publish ack came back. An id the stream already holds
//! is a duplicate only when the stored event says the same (its digest);
//! another event under the agent's id is a [`WorkerError::Conflict`],
//! refused as the journal refuses one.

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
pub(crate) const REPLY_PREFIX: &str = "_INBOX.";
/// The JetStream header the stream dedups on.
pub(crate) const MSG_ID_HEADER: &str = "Nats-Msg-Id";
/// Deliveries a message had before it was re-driven from the dead letters:
/// the attempts of its next deliveries continue after them.
pub(crate) const ATTEMPT_BASE_HEADER: &str = "Hookrt-Attempt-Base";

/// The `Nats-Msg-Id` of an event: a digest of its agent and id, so two
/// agents' events with one id are two messages, and one agent's event sent
/// again is one.
pub(crate) fn msg_id(envelope: &Envelope) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(b"hookrt-msg-id-v1\0");
    h.update(envelope.coordinates.agent.as_bytes());
    h.update([0]);
    h.update(envelope.id.as_bytes());
    format!("ev1-{}", hex::encode(&h.finalize()[..20]))
}

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
        headers.insert(MSG_ID_HEADER, msg_id(envelope).as_str());
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
            js: self.js.clone(),
            event_id: envelope.id.clone(),
            agent: envelope.coordinates.agent.clone(),
            digest: envelope.digest(),
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
    js: jetstream::Context,
    event_id: String,
    agent: String,
    digest: [u8; 32],
    subject: String,
}

impl Pending {
    /// Waits for the stream's ack. A duplicate's stored event is read back:
    /// another event under the agent's id is a conflict.
    pub async fn persisted(self) -> Result<Published, WorkerError> {
        let Pending {
            ack,
            js,
            event_id,
            agent,
            digest,
            subject,
        } = self;
        let ack = ack.await.map_err(|e| {
            WorkerError::nats(format!("event {event_id} was not stored on {subject}"), e)
        })?;
        if ack.duplicate {
            let stored = Stored {
                js: &js,
                stream: &ack.stream,
                seq: ack.sequence,
            };
            if !stored.says(&event_id, &agent, &digest).await? {
                return Err(WorkerError::Conflict {
                    event_id,
                    agent,
                    seq: ack.sequence,
                });
            }
        }
        Ok(Published {
            event_id,
            durability: Durability::Persisted,
            subject,
            seq: ack.sequence,
            duplicate: ack.duplicate,
        })
    }
}

/// An event the stream stored.
struct Stored<'a> {
    js: &'a jetstream::Context,
    stream: &'a str,
    seq: u64,
}

impl Stored<'_> {
    /// Whether it is `agent`'s event `event_id` with this `digest`.
    async fn says(
        &self,
        event_id: &str,
        agent: &str,
        digest: &[u8; 32],
    ) -> Result<bool, WorkerError> {
        let doing = || {
            format!(
                "cannot read back event {event_id} (stream {}, seq {}) to compare it with the one sent again",
                self.stream, self.seq
            )
        };
        let stored = self
            .js
            .get_stream_no_info(self.stream)
            .await
            .map_err(|e| WorkerError::nats(doing(), e))?
            .get_raw_message(self.seq)
            .await
            .map_err(|e| WorkerError::nats(doing(), e))?;
        Ok(
            serde_json::from_slice::<Envelope>(&stored.payload).is_ok_and(|e| {
                e.coordinates.agent == agent && e.id == event_id && e.digest() == *digest
            }),
        )
    }
}
