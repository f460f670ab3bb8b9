//! Dead letters: messages the group gave up on, kept in the `HOOKRT_DEAD`
//! stream on `hookrt.dead.<durable>`, and how to list and re-drive them
//! (`hookrt worker dead` / `hookrt worker redrive`).
//!
//! A message is dead when it is malformed (terminated at once), when a
//! delivery failed for good (the hook's retries or `max_deliver` spent; the
//! other deliveries finished and the message was acked), or when JetStream
//! delivered it `max_deliver` times without an ack (workers kept dying on
//! it; the server's `MAX_DELIVERIES` advisory names it and any worker copies
//! it). The copy keeps the payload and says why in headers; its
//! `Nats-Msg-Id` is `<durable>:<stream>:<seq>`, so two workers copying the
//! same message store it once. Re-driving publishes the payload again to its
//! subject, with the attempts so far in `Hookrt-Attempt-Base`, and deletes
//! the dead copy: its finished deliveries have completion marks, so only
//! the failed ones run again.

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, consumer::AckPolicy, consumer::pull};
use futures_util::StreamExt;

use crate::fleet::{self, dead_subject};
use crate::publish::{ATTEMPT_BASE_HEADER, MSG_ID_HEADER};
use crate::{WorkerError, nats};

/// Why a message is dead.
pub(crate) const ERROR_HEADER: &str = "Hookrt-Error";
/// The subject the message was consumed from.
pub(crate) const SUBJECT_HEADER: &str = "Hookrt-Subject";
/// The deliveries it had (the last attempt).
pub(crate) const ATTEMPT_HEADER: &str = "Hookrt-Attempt";
/// The deliveries that failed for good, `hook handler outcome` joined by `; `.
pub(crate) const FAILED_HEADER: &str = "Hookrt-Failed";

/// One message to bury.
pub(crate) struct Burial<'a> {
    /// The stream it was in and its sequence there.
    pub stream: &'a str,
    /// Its sequence in that stream.
    pub seq: u64,
    /// The subject it was published to.
    pub subject: &'a str,
    /// Its payload, as published.
    pub payload: bytes::Bytes,
    /// Why it is dead.
    pub reason: &'a str,
    /// Deliveries so far.
    pub attempt: u32,
    /// What failed for good, if deliveries did.
    pub failed: Option<&'a str>,
}

/// Copies a message to the group's dead-letter subject and waits until the
/// dead-letter stream stored it (once per message, whoever copies it).
pub(crate) async fn bury(
    js: &jetstream::Context,
    durable: &str,
    burial: Burial<'_>,
) -> Result<(), WorkerError> {
    let one_line = |s: &str| s.replace(['\r', '\n'], " ");
    let mut headers = HeaderMap::new();
    headers.insert(
        MSG_ID_HEADER,
        format!("{durable}:{}:{}", burial.stream, burial.seq).as_str(),
    );
    headers.insert(ERROR_HEADER, one_line(burial.reason).as_str());
    headers.insert(SUBJECT_HEADER, burial.subject);
    headers.insert(ATTEMPT_HEADER, burial.attempt.to_string().as_str());
    if let Some(failed) = burial.failed {
        headers.insert(FAILED_HEADER, one_line(failed).as_str());
    }
    js.publish_with_headers(dead_subject(durable), headers, burial.payload)
        .await
        .map_err(nats("cannot publish a dead letter"))?
        .await
        .map_err(nats("a dead letter was not stored"))?;
    Ok(())
}

/// A message of the group's dead-letter stream, as listed: the whole
/// message, with the deliveries that failed for good (the journal's
/// `DeadLetter` is one delivery).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeadMessage {
    /// Its sequence in the dead-letter stream (what `redrive` takes).
    pub seq: u64,
    /// The event id, when the payload is an envelope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// The subject it was consumed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Why it is dead.
    pub reason: String,
    /// Deliveries it had.
    pub attempt: u32,
    /// The deliveries that failed for good.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The payload.
    #[serde(skip)]
    pub payload: bytes::Bytes,
}

fn header(headers: Option<&HeaderMap>, name: &str) -> Option<String> {
    headers
        .and_then(|h| h.get(name))
        .map(|v| v.as_str().to_owned())
}

/// How often the reading consumer is asked for in all.
const READER_TRIES: u32 = 8;

/// A consumer reading `durable`'s dead letters. For a few seconds after a
/// node of a cluster dies the server may place it on that node (each
/// placement a draw among the stream's peers), and the request times out:
/// it is asked again, [`READER_TRIES`] times in all (three were not enough:
/// one run in ten of the cluster test drew the dead node three times).
async fn reader(
    stream: &jetstream::stream::Stream,
    durable: &str,
) -> Result<jetstream::consumer::PullConsumer, WorkerError> {
    let mut tries = 1;
    loop {
        let made = stream
            .create_consumer(pull::Config {
                ack_policy: AckPolicy::None,
                filter_subject: dead_subject(durable),
                inactive_threshold: Duration::from_secs(10),
                ..Default::default()
            })
            .await;
        match made {
            Ok(consumer) => return Ok(consumer),
            Err(e) if tries < READER_TRIES => {
                tracing::debug!(target: "hookrt", tries, "reading the dead letters failed, asked again: {e}");
                tries += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(WorkerError::nats("cannot read the dead letters", e)),
        }
    }
}

/// Every dead letter of `durable`, oldest first.
pub(crate) async fn list(
    js: &jetstream::Context,
    durable: &str,
) -> Result<Vec<DeadMessage>, WorkerError> {
    let stream = fleet::dead_stream(js, 1).await?;
    let consumer = reader(&stream, durable).await?;
    let mut left = consumer.cached_info().num_pending;
    let mut out = Vec::new();
    while left > 0 {
        let mut batch = consumer
            .fetch()
            .max_messages(left.min(1000) as usize)
            .expires(Duration::from_secs(2))
            .messages()
            .await
            .map_err(nats("cannot fetch dead letters"))?;
        let before = left;
        while let Some(m) = batch.next().await {
            let m = m.map_err(nats("cannot fetch a dead letter"))?;
            let seq = m
                .info()
                .map_err(nats("a dead letter has no stream info"))?
                .stream_sequence;
            let h = m.headers.as_ref();
            out.push(DeadMessage {
                seq,
                event_id: serde_json::from_slice::<serde_json::Value>(&m.payload)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_owned)),
                subject: header(h, SUBJECT_HEADER),
                reason: header(h, ERROR_HEADER).unwrap_or_default(),
                attempt: header(h, ATTEMPT_HEADER)
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(0),
                failed: header(h, FAILED_HEADER),
                payload: m.payload.clone(),
            });
            left -= 1;
        }
        if left == before {
            break; // nothing came in the fetch's time: gone meanwhile
        }
    }
    Ok(out)
}

/// What re-driving one dead letter did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Redriven {
    /// Its sequence in the dead-letter stream.
    pub seq: u64,
    /// The event id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Where it was published again, or why it was not.
    #[serde(flatten)]
    pub result: RedriveResult,
}

/// Published again, or kept.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedriveResult {
    /// Published again to this subject (stream ack received) and removed from the dead letters.
    Redriven(String),
    /// Kept in the dead letters, because of this.
    Kept(String),
}

/// Publishes the dead letters of `durable` whose sequence is in `only` (all
/// when `None`) again to their subjects, and deletes each once the events
/// stream stored it again. Malformed ones have no subject and are kept; so
/// is one whose recorded subject is not an event subject under `prefix` (a
/// dead letter is a copy anyone on the fleet could have published: its
/// subject must not send a re-drive to a KV key or a JetStream API subject).
pub(crate) async fn redrive(
    js: &jetstream::Context,
    durable: &str,
    prefix: &str,
    only: Option<&[u64]>,
) -> Result<Vec<Redriven>, WorkerError> {
    let stream = fleet::dead_stream(js, 1).await?;
    let letters = list(js, durable).await?;
    if let Some(only) = only
        && let Some(missing) = only.iter().find(|s| !letters.iter().any(|d| d.seq == **s))
    {
        return Err(WorkerError::Config(format!(
            "no dead letter {missing} for durable {durable:?}: `hookrt worker dead` lists them"
        )));
    }
    let mut out = Vec::new();
    for dead in letters {
        if only.is_some_and(|o| !o.contains(&dead.seq)) {
            continue;
        }
        let valid = std::str::from_utf8(&dead.payload)
            .ok()
            .is_some_and(|text| hookrt::Envelope::from_json(text).is_ok());
        let under = |subject: &str| {
            subject
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| {
                    rest.split('.').count() == 3
                        && !rest.split('.').any(str::is_empty)
                        && !rest.contains(['*', '>', ' ', '\t', '\r', '\n'])
                })
        };
        let result = match (&dead.subject, &dead.event_id) {
            (Some(subject), Some(_)) if valid && !under(subject) => RedriveResult::Kept(format!(
                "its subject `{}` is not an event subject under `{prefix}` (`{prefix}.<agent>.<session>.<partition>`); not re-driven",
                subject.chars().take(200).collect::<String>()
            )),
            (Some(subject), Some(id)) if valid => {
                let mut headers = HeaderMap::new();
                // A new id for the stream's dedup (the original is likely
                // still in its window), the event id unchanged inside.
                headers.insert(MSG_ID_HEADER, format!("{id}:redrive:{}", dead.seq).as_str());
                headers.insert(ATTEMPT_BASE_HEADER, dead.attempt.to_string().as_str());
                js.publish_with_headers(subject.clone(), headers, dead.payload.clone())
                    .await
                    .map_err(nats("cannot re-publish a dead letter"))?
                    .await
                    .map_err(nats("a re-driven message was not stored"))?;
                stream
                    .delete_message(dead.seq)
                    .await
                    .map_err(nats("cannot delete a re-driven dead letter"))?;
                RedriveResult::Redriven(subject.clone())
            }
            _ => RedriveResult::Kept(format!(
                "not a valid envelope ({}): it would die again; fix it and publish it with `hookrt publish`",
                dead.reason
            )),
        };
        out.push(Redriven {
            seq: dead.seq,
            event_id: dead.event_id.clone(),
            result,
        });
    }
    Ok(out)
}
