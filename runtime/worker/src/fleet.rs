//! The fleet: the JetStream objects a group of workers (one durable name)
//! shares, their names, and their creation.
//!
//! | object | name | what |
//! |---|---|---|
//! | events stream | `--stream` (`HOOKRT_EVENTS`) | captures `<prefix>.>`; dedups on `Nats-Msg-Id` |
//! | partition consumer | `<durable>-p<N>` | pull, explicit ack, one message in flight, `max_deliver`, backoff |
//! | dead-letter stream | `HOOKRT_DEAD` | captures `hookrt.dead.>`; one subject per durable |
//! | completion bucket | KV `hookrt-done-<durable>` | one key per finished (event, hook, handler) |
//! | lease bucket | KV `hookrt-lease-<durable>` | `partition.<N>` owner leases, `member.<id>` heartbeats |

use std::time::Duration;

use async_nats::jetstream::{
    self, consumer::AckPolicy, consumer::PullConsumer, consumer::pull, kv, stream,
};

use crate::subject::partition_filter;
use crate::{WorkerError, nats};

/// The dead-letter stream.
pub(crate) const DEAD_STREAM: &str = "HOOKRT_DEAD";
/// The dead-letter subjects' prefix: `hookrt.dead.<durable>`.
pub(crate) const DEAD_PREFIX: &str = "hookrt.dead";
/// How long the events stream remembers a `Nats-Msg-Id` to drop a duplicate.
pub(crate) const DEDUP_WINDOW: Duration = Duration::from_secs(120);

/// Where a group of workers keeps its work, by name.
#[derive(Debug, Clone)]
pub struct Names {
    /// The events stream.
    pub stream: String,
    /// The subject prefix.
    pub prefix: String,
    /// The durable name every worker of the group shares.
    pub durable: String,
    /// How many partitions sessions are hashed into.
    pub partitions: u32,
    /// How many servers of a JetStream cluster keep each stream and bucket
    /// the group creates (1 on a single server; 3 survives one lost node).
    pub replicas: usize,
}

impl Names {
    /// The consumer of one partition.
    pub fn consumer(&self, partition: u32) -> String {
        format!("{}-p{partition}", self.durable)
    }

    /// The completion bucket.
    pub(crate) fn done_bucket(&self) -> String {
        format!("hookrt-done-{}", self.durable)
    }

    /// The lease bucket.
    pub(crate) fn lease_bucket(&self) -> String {
        format!("hookrt-lease-{}", self.durable)
    }
}

/// The dead-letter subject of a durable name.
pub(crate) fn dead_subject(durable: &str) -> String {
    format!("{DEAD_PREFIX}.{durable}")
}

/// Checks a durable name: it names consumers, buckets and a subject token.
pub(crate) fn check_durable(durable: &str) -> Result<(), WorkerError> {
    let ok = !durable.is_empty()
        && durable.len() <= 64
        && durable
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(WorkerError::Config(format!(
            "durable name {durable:?} is not usable: it names consumers, KV buckets and a subject token, so use 1 to 64 of [A-Za-z0-9_-]"
        )))
    }
}

/// The events stream, created for `<prefix>.>` when missing.
pub(crate) async fn events_stream(
    js: &jetstream::Context,
    names: &Names,
) -> Result<stream::Stream, WorkerError> {
    js.get_or_create_stream(stream::Config {
        name: names.stream.clone(),
        subjects: vec![format!("{}.>", names.prefix)],
        duplicate_window: DEDUP_WINDOW,
        num_replicas: names.replicas,
        ..Default::default()
    })
    .await
    .map_err(|e| WorkerError::nats(format!("cannot open the events stream {}", names.stream), e))
}

/// The dead-letter stream, created when missing.
pub(crate) async fn dead_stream(
    js: &jetstream::Context,
    replicas: usize,
) -> Result<stream::Stream, WorkerError> {
    js.get_or_create_stream(stream::Config {
        name: DEAD_STREAM.to_owned(),
        subjects: vec![format!("{DEAD_PREFIX}.>")],
        duplicate_window: DEDUP_WINDOW,
        num_replicas: replicas,
        ..Default::default()
    })
    .await
    .map_err(nats("cannot open the dead-letter stream HOOKRT_DEAD"))
}

/// A KV bucket, created when missing (`max_age` zero: entries never
/// expire). Its stream is created here as async-nats would create it:
/// async-nats' own `create_key_value` first reads the account's API level,
/// an answer nats-server 2.9 does not give in the form it expects.
pub(crate) async fn bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
    replicas: usize,
) -> Result<kv::Store, WorkerError> {
    let fail = || format!("cannot open the key-value bucket {name}");
    if let Ok(store) = js.get_key_value(name).await {
        return Ok(store);
    }
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{name}"),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        max_age,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        num_replicas: replicas,
        discard: stream::DiscardPolicy::New,
        duplicate_window: if max_age.is_zero() {
            DEDUP_WINDOW
        } else {
            max_age.min(DEDUP_WINDOW)
        },
        ..Default::default()
    })
    .await
    .map_err(|e| WorkerError::nats(fail(), e))?;
    js.get_key_value(name)
        .await
        .map_err(|e| WorkerError::nats(fail(), e))
}

/// How a partition's consumer redelivers.
#[derive(Debug, Clone)]
pub(crate) struct Redelivery {
    /// How long an unacked message waits before it is delivered again.
    pub ack_wait: Duration,
    /// Deliveries in all; then the message is dead (JetStream stops).
    pub max_deliver: i64,
    /// Waits before the 2nd, 3rd, ... delivery (the last repeats).
    pub backoff: Vec<Duration>,
}

/// One partition's durable consumer, created when missing. One message in
/// flight (`max_ack_pending` 1) is what keeps per-hook order: the next
/// message of the partition is handed out only once this one is acked or
/// dead (docs/worker.md, "Order").
pub(crate) async fn partition_consumer(
    events: &stream::Stream,
    names: &Names,
    partition: u32,
    redelivery: &Redelivery,
) -> Result<PullConsumer, WorkerError> {
    let name = names.consumer(partition);
    events
        .get_or_create_consumer(
            &name,
            pull::Config {
                durable_name: Some(name.clone()),
                ack_policy: AckPolicy::Explicit,
                ack_wait: redelivery.ack_wait,
                max_deliver: redelivery.max_deliver,
                backoff: redelivery.backoff.clone(),
                max_ack_pending: 1,
                filter_subject: partition_filter(&names.prefix, partition),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| WorkerError::nats(format!("cannot open the consumer {name}"), e))
}
