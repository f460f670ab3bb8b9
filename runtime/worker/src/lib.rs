//! hookrt on NATS JetStream: `hookrt worker DIR --nats URL --stream S
//! --subject SUBJ --durable NAME --journal J` (docs/worker.md).
//!
//! A worker is a durable JetStream pull consumer (explicit ack) in front of a
//! local [`HookService`] with a journal. Each message is one envelope: it is
//! emitted (a decision or edit event with a `Hookrt-Reply-To` header is
//! resolved and its resolution published there), and the JetStream message
//! is acked only after the local journal commit answered `persisted`. A
//! malformed message is terminated and copied, with a `Hookrt-Error` header
//! saying why, to `hookrt.dead.<durable>`; a message the service could not
//! take is nak'ed and redelivered. Workers sharing a durable name share the
//! messages (a consumer group). This package is apart from the `hookrt`
//! library so that an embedder of the library brings no NATS client.

#![warn(missing_docs)]

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, AckKind, Message, consumer::AckPolicy, consumer::pull};
use futures_util::StreamExt;
use hookrt::{
    EmitError, Envelope, EventClass, HookService, PendingReceipt, Runtime, ServiceOptions, Stats,
    Transport, class_of,
};

/// The header naming where a decision or edit event's resolution is published.
pub const REPLY_HEADER: &str = "Hookrt-Reply-To";
/// The header of a dead-lettered message saying why it was refused.
pub const ERROR_HEADER: &str = "Hookrt-Error";

/// Why the worker could not run or publish.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A NATS or JetStream operation failed.
    #[error("NATS: {0}")]
    Nats(String),
    /// The hook service did not start.
    #[error(transparent)]
    Start(#[from] hookrt::StartError),
}

fn nats(e: impl std::fmt::Display) -> WorkerError {
    WorkerError::Nats(e.to_string())
}

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The NATS server, e.g. `nats://127.0.0.1:4222`.
    pub nats: String,
    /// The JetStream stream (created for `subject` if missing).
    pub stream: String,
    /// The subject consumed.
    pub subject: String,
    /// The durable consumer's name: workers with the same name share the work.
    pub durable: String,
    /// The local journal: a message is acked only after its commit.
    pub journal: PathBuf,
    /// How long JetStream waits for an ack before redelivering.
    pub ack_wait: Duration,
    /// Messages pulled at once.
    pub batch: usize,
    /// How long queued deliveries may run at shutdown.
    pub drain_timeout: Duration,
    /// Service workers.
    pub workers: usize,
}

/// Consumes until `shutdown` resolves; `on_ready` is called once the
/// consumer exists. Returns the service's counts.
pub async fn run(
    mut runtime: Runtime,
    options: WorkerOptions,
    shutdown: impl Future<Output = ()> + Send,
    on_ready: impl FnOnce(),
) -> Result<Stats, WorkerError> {
    let client = async_nats::connect(&options.nats).await.map_err(nats)?;
    let js = jetstream::new(client.clone());
    let stream = js
        .get_or_create_stream(jetstream::stream::Config {
            name: options.stream.clone(),
            subjects: vec![options.subject.clone()],
            ..Default::default()
        })
        .await
        .map_err(nats)?;
    let consumer: jetstream::consumer::PullConsumer = stream
        .get_or_create_consumer(
            &options.durable,
            pull::Config {
                durable_name: Some(options.durable.clone()),
                ack_policy: AckPolicy::Explicit,
                ack_wait: options.ack_wait,
                filter_subject: options.subject.clone(),
                ..Default::default()
            },
        )
        .await
        .map_err(nats)?;
    runtime.set_transport(Transport {
        kind: "nats".into(),
        detail: Some(options.subject.clone()),
    });
    let service = HookService::start_async(
        runtime,
        Some(options.journal.clone()),
        Box::new(|_| {}),
        ServiceOptions {
            workers: options.workers,
            ..ServiceOptions::default()
        },
    )
    .await?;
    on_ready();
    let dead = format!("hookrt.dead.{}", options.durable);
    tokio::pin!(shutdown);
    loop {
        let pulled = tokio::select! {
            _ = &mut shutdown => break,
            b = consumer.batch().max_messages(options.batch).expires(Duration::from_millis(500)).messages() => b,
        };
        let mut batch = match pulled {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(target: "hookrt", "pulling from JetStream failed: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut pending: Vec<(Message, PendingReceipt)> = Vec::new();
        while let Some(m) = batch.next().await {
            let Ok(message) = m else { continue };
            let envelope = match std::str::from_utf8(&message.payload)
                .map_err(|_| "not valid UTF-8".to_owned())
                .and_then(|text| Envelope::from_json(text).map_err(|e| e.to_string()))
            {
                Ok(e) => e,
                Err(reason) => {
                    refuse(&client, &dead, message, &reason).await;
                    continue;
                }
            };
            let reply = message
                .headers
                .as_ref()
                .and_then(|h| h.get(REPLY_HEADER))
                .map(|v| v.as_str().to_owned());
            match reply {
                Some(to) if class_of(&envelope.kind) != EventClass::Observe => {
                    settle(&client, &dead, &mut pending).await;
                    let answer = match service.resolve(envelope).await {
                        Ok(r) => {
                            serde_json::json!({ "receipt": r.receipt, "resolution": r.resolution })
                        }
                        Err(e) => serde_json::json!({ "error": e.to_string() }),
                    };
                    let _ = client.publish(to, answer.to_string().into()).await;
                    finish(message, Ok(())).await;
                }
                _ => pending.push((message, service.submit(envelope))),
            }
        }
        settle(&client, &dead, &mut pending).await;
    }
    let _ = client.flush().await;
    Ok(service.shutdown(options.drain_timeout).await)
}

/// Acks each message once its receipt says it is persisted.
async fn settle(
    client: &async_nats::Client,
    dead: &str,
    pending: &mut Vec<(Message, PendingReceipt)>,
) {
    for (message, p) in pending.drain(..) {
        match p.receipt().await {
            Ok(_) => finish(message, Ok(())).await,
            Err(EmitError::Invalid(e)) => refuse(client, dead, message, &e.to_string()).await,
            Err(e) => finish(message, Err(e.to_string())).await,
        }
    }
}

/// Acks, or naks for a redelivery in a second.
async fn finish(message: Message, result: Result<(), String>) {
    let ack = match result {
        Ok(()) => message.ack().await,
        Err(reason) => {
            tracing::warn!(target: "hookrt", "not taken, to be redelivered: {reason}");
            message
                .ack_with(AckKind::Nak(Some(Duration::from_secs(1))))
                .await
        }
    };
    if let Err(e) = ack {
        tracing::warn!(target: "hookrt", "cannot ack: {e}");
    }
}

/// Terminates a malformed message and copies it to the dead subject with the reason.
async fn refuse(client: &async_nats::Client, dead: &str, message: Message, reason: &str) {
    tracing::warn!(target: "hookrt", "malformed message on {}: {reason}", message.subject);
    let mut headers = HeaderMap::new();
    headers.insert(ERROR_HEADER, reason.replace(['\r', '\n'], " ").as_str());
    let _ = client
        .publish_with_headers(dead.to_owned(), headers, message.payload.clone())
        .await;
    if let Err(e) = message.ack_with(AckKind::Term).await {
        tracing::warn!(target: "hookrt", "cannot terminate: {e}");
    }
}

/// Publishes each of `lines` to `subject` through JetStream, waiting for the
/// stream's ack; with `reply_to`, each message carries it in [`REPLY_HEADER`].
/// Returns how many were stored.
pub async fn publish(
    url: &str,
    subject: &str,
    lines: &[String],
    reply_to: Option<&str>,
) -> Result<usize, WorkerError> {
    let client = async_nats::connect(url).await.map_err(nats)?;
    let js = jetstream::new(client);
    let mut acks = Vec::new();
    for line in lines {
        let mut headers = HeaderMap::new();
        if let Some(to) = reply_to {
            headers.insert(REPLY_HEADER, to);
        }
        let ack = js
            .publish_with_headers(subject.to_owned(), headers, line.clone().into())
            .await
            .map_err(nats)?;
        acks.push(ack);
    }
    for ack in acks {
        ack.await.map_err(nats)?;
    }
    Ok(lines.len())
}
