//! Completion: which (event, hook, handler) deliveries have finished, kept
//! in a JetStream key-value bucket (`hookrt-done-<durable>`) that every
//! worker of the group shares.
//!
//! A worker marks each delivery as soon as it ends and waits for every mark
//! of a message to be stored before it acks the message. A redelivered
//! message (a worker died, or a hook failed and is retried) therefore runs
//! only the deliveries with no mark: the finished ones are not repeated.
//! A mark is written only for a delivery that succeeded; a failed one is run
//! again (retry) or dead-lettered, and a re-driven dead letter runs it again.

use async_nats::jetstream::{self, context::PublishAckFuture, kv};

use crate::subject::token;
use crate::{WorkerError, nats};

/// The key of one delivery: `<event>.<hook>.<handler>`, each a subject token.
pub fn key(event_id: &str, hook: &str, handler: &str) -> String {
    format!("{}.{}.{}", token(event_id), token(hook), token(handler))
}

/// The group's completion marks.
#[derive(Clone)]
pub struct Completion {
    js: jetstream::Context,
    store: kv::Store,
    bucket: String,
}

impl Completion {
    /// The marks in `store` (the bucket named `bucket`).
    pub fn new(js: jetstream::Context, store: kv::Store, bucket: &str) -> Completion {
        Completion {
            js,
            store,
            bucket: bucket.to_owned(),
        }
    }

    /// Whether the delivery has a mark.
    pub async fn is_done(&self, key: &str) -> Result<bool, WorkerError> {
        Ok(self
            .store
            .get(key)
            .await
            .map_err(nats("cannot read a completion mark"))?
            .is_some())
    }

    /// Sends a mark without waiting for it to be stored (a KV put is a
    /// publish to `$KV.<bucket>.<key>`): the caller awaits every mark of a
    /// message before acking it.
    pub async fn mark(&self, key: &str, value: String) -> Result<PublishAckFuture, WorkerError> {
        self.js
            .publish(format!("$KV.{}.{key}", self.bucket), value.into())
            .await
            .map_err(nats("cannot send a completion mark"))
    }

    /// Stores a marker once: true if this call created it (nobody had).
    pub async fn create_once(&self, key: &str) -> Result<bool, WorkerError> {
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
    pub async fn get_or_create(&self, key: &str, value: &str) -> Result<String, WorkerError> {
        if self.create_once_with(key, value).await? {
            return Ok(value.to_owned());
        }
        let stored = self
            .store
            .get(key)
            .await
            .map_err(nats("cannot read a marker"))?
            .unwrap_or_default();
        Ok(String::from_utf8_lossy(&stored).into_owned())
    }

    /// Whether a marker exists (any key).
    pub async fn exists(&self, key: &str) -> Result<bool, WorkerError> {
        self.is_done(key).await
    }
}
