//! One partition's consumer: messages of the partition, one at a time, in
//! stream order (its consumer has one message in flight), each acked only
//! once all its deliveries finished and their completion marks are stored.
//!
//! For each message: parse the envelope (malformed: dead letter, `+TERM`);
//! number the attempt from JetStream's delivery count; on a redelivery, look
//! up which deliveries already finished and leave them out (observe events;
//! a decision or edit event runs whole, its answer needs every hook); run
//! the rest, marking each success as it ends; answer a `Hookrt-Reply-To`;
//! then either nak with the hook's backoff (a failed delivery with retries
//! left), or bury what failed for good, raise the failure cascade for a
//! critical hook, and ack.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_nats::jetstream::{self, AckKind, Message, consumer::PullConsumer};
use futures_util::StreamExt;
use hookrt::delivery::{Conclusion, Next};
use hookrt::event::WILDCARD;
use hookrt::front::line::{Placement, write_delivery};
use hookrt::hooks::LoadedHook;
use hookrt::{Delivery, Durability, Envelope, EventClass, Outcome, Runtime, class_of};

use crate::completion::{self, Completion};
use crate::dead::{self, Burial};
use crate::fleet::Names;
use crate::publish::{ATTEMPT_BASE_HEADER, Publisher, REPLY_HEADER};
use crate::subject::token;

/// What every partition of a worker shares.
pub struct Shared {
    /// The loaded hooks.
    pub runtime: Arc<Runtime>,
    /// JetStream.
    pub js: jetstream::Context,
    /// The plain client (replies).
    pub client: async_nats::Client,
    /// The group's completion marks.
    pub completion: Completion,
    /// Publishes cascade events.
    pub publisher: Publisher,
    /// The group's names.
    pub names: Names,
    /// The consumers' `max_deliver` (0: unlimited).
    pub max_deliver: i64,
    /// This worker's id.
    pub me: String,
    /// Print one JSON line per delivery on stdout.
    pub print: bool,
    /// Bounds the hooks running at once in this worker.
    pub threads: Arc<tokio::sync::Semaphore>,
    /// Counts for the summary.
    pub counts: Counts,
}

/// What a worker did, for its summary.
#[derive(Debug, Default, serde::Serialize)]
pub struct Counts {
    /// Messages acked after all their deliveries finished.
    pub acked: AtomicU64,
    /// Deliveries run.
    pub deliveries: AtomicU64,
    /// Deliveries left out because a completion mark said they had finished.
    pub skipped: AtomicU64,
    /// Messages nak'ed for a retry.
    pub retried: AtomicU64,
    /// Messages copied to the dead letters.
    pub dead: AtomicU64,
    /// Failure cascade events published.
    pub cascades: AtomicU64,
}

/// Steers one partition's task.
pub struct Control {
    /// Finish the message in flight, then stop.
    pub stop: AtomicBool,
    /// The lease is ours until then; past it the task stops without acking.
    pub valid_until: Mutex<Instant>,
}

/// Consumes one partition until told to stop.
pub async fn consume(
    shared: Arc<Shared>,
    consumer: PullConsumer,
    partition: u32,
    ctl: Arc<Control>,
) {
    let valid = || Instant::now() < *ctl.valid_until.lock().unwrap_or_else(|e| e.into_inner());
    while !ctl.stop.load(Ordering::Relaxed) {
        if !valid() {
            // The renewal is late (a busy machine): take nothing until it
            // is renewed, or the lease manager stops this task.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        // A waiting pull (not `fetch`, which asks with no_wait and would
        // spin while the partition is idle).
        let fetched = consumer
            .batch()
            .max_messages(1)
            .expires(Duration::from_millis(500))
            .messages()
            .await;
        let mut batch = match fetched {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(target: "hookrt", partition, "pulling failed: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        while let Some(m) = batch.next().await {
            let Ok(message) = m else { continue };
            if !valid() {
                // The lease may be someone else's now: hand the message back.
                let _ = message.ack_with(AckKind::Nak(None)).await;
                break;
            }
            if let Err(e) = handle(&shared, message, partition).await {
                tracing::warn!(target: "hookrt", partition, "message not finished, to be redelivered: {e}");
            }
        }
    }
}

/// One finished delivery (its record without the hook's logs), as reported
/// to the async side.
struct Finished {
    delivery: Delivery,
    at_us: u64,
}

fn settings_of<'r>(runtime: &'r Runtime, hook: &str) -> Option<&'r LoadedHook> {
    runtime.hooks().iter().find(|h| h.has_id(hook))
}

async fn handle(shared: &Shared, message: Message, partition: u32) -> Result<(), String> {
    let (delivered, seq, stream) = {
        let info = message.info().map_err(|e| e.to_string())?;
        (
            info.delivered.max(1) as u32,
            info.stream_sequence,
            info.stream.to_owned(),
        )
    };
    let header = |name: &str| {
        message
            .headers
            .as_ref()
            .and_then(|h| h.get(name))
            .map(|v| v.as_str().to_owned())
    };
    let base: u32 = header(ATTEMPT_BASE_HEADER)
        .and_then(|b| b.parse().ok())
        .unwrap_or(0);
    let parsed = std::str::from_utf8(&message.payload)
        .map_err(|_| "not valid UTF-8".to_owned())
        .and_then(|text| Envelope::from_json(text).map_err(|e| e.to_string()));
    let mut envelope = match parsed {
        Ok(e) => e,
        Err(reason) => {
            tracing::warn!(target: "hookrt", subject = %message.subject, "malformed message: {reason}");
            dead::bury(
                &shared.js,
                &shared.names.durable,
                Burial {
                    stream: &stream,
                    seq,
                    subject: message.subject.as_str(),
                    payload: message.payload.clone(),
                    reason: &reason,
                    attempt: base + delivered,
                    failed: None,
                },
            )
            .await
            .map_err(|e| e.to_string())?;
            shared.counts.dead.fetch_add(1, Ordering::Relaxed);
            return message
                .ack_with(AckKind::Term)
                .await
                .map_err(|e| e.to_string());
        }
    };
    // The attempt: JetStream's delivery count, after the deliveries a
    // re-driven message had before.
    envelope.attempt = envelope.attempt.max(1) - 1 + base + delivered;
    let class = class_of(&envelope.kind);
    let runtime = shared.runtime.clone();
    let mut done: HashSet<(String, String)> = HashSet::new();
    if (delivered > 1 || base > 0) && class == EventClass::Observe {
        for h in runtime.hooks() {
            for handler in [envelope.kind.as_str(), WILDCARD] {
                if h.subscriptions.iter().any(|s| s == handler) {
                    let id = h.id();
                    let key = completion::key(&envelope.id, &id, handler);
                    if shared
                        .completion
                        .is_done(&key)
                        .await
                        .map_err(|e| e.to_string())?
                    {
                        done.insert((id, handler.to_owned()));
                    }
                }
            }
        }
    }
    shared
        .counts
        .skipped
        .fetch_add(done.len() as u64, Ordering::Relaxed);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Finished>();
    let permit = shared.threads.clone().acquire_owned().await.ok();
    let run = {
        let envelope = envelope.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            runtime.dispatch_except(
                &envelope,
                Durability::Persisted,
                &|hook, handler| done.contains(&(hook.to_owned(), handler.to_owned())),
                &mut |d| {
                    let at_us = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |t| t.as_micros() as u64);
                    let delivery = Delivery {
                        event_id: d.event_id.clone(),
                        kind: d.kind.clone(),
                        hook: d.hook.clone(),
                        handler: d.handler.clone(),
                        error: d.error.clone(),
                        logs: Vec::new(),
                        console: String::new(),
                        ..*d
                    };
                    let _ = tx.send(Finished { delivery, at_us });
                },
            )
        })
    };
    let mut marks = Vec::new();
    let mut failed = Vec::new();
    while let Some(f) = rx.recv().await {
        shared.counts.deliveries.fetch_add(1, Ordering::Relaxed);
        if shared.print {
            let placement = Placement {
                partition,
                worker: shared.me.clone(),
                at_us: f.at_us,
            };
            let mut out = std::io::stdout().lock();
            if write_delivery(&mut out, &f.delivery, Some(&placement), false).is_ok() {
                let _ = writeln!(out);
            }
            let _ = out.flush();
        }
        let f = f.delivery;
        if f.outcome == Outcome::Ok {
            let value =
                serde_json::json!({ "attempt": f.attempt, "worker": shared.me }).to_string();
            let key = completion::key(&envelope.id, &f.hook, &f.handler);
            marks.push(
                shared
                    .completion
                    .mark(&key, value)
                    .await
                    .map_err(|e| e.to_string())?,
            );
        } else {
            failed.push(f);
        }
    }
    let dispatch = match run.await {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => return Err(e.to_string()),
        Err(e) => return Err(format!("dispatch panicked: {e}")),
    };
    for mark in marks {
        mark.await
            .map_err(|e| format!("completion mark not stored: {e}"))?;
    }
    // A failure with retries left (the delivery policy's decision, as in
    // the service): redeliver after the longest backoff asked; the finished
    // deliveries are marked and will not run again. Past the consumer's
    // `max_deliver` JetStream would not redeliver: every failure is final.
    let out_of_deliveries = shared.max_deliver > 0 && i64::from(delivered) >= shared.max_deliver;
    let retry = failed
        .iter()
        .filter(|_| !out_of_deliveries)
        .filter_map(|f| {
            let hook = settings_of(&shared.runtime, &f.hook)?;
            match hookrt::delivery::next(hook, f.outcome, f.attempt) {
                Next::Retry(wait) => Some(wait),
                Next::Final => None,
            }
        })
        .max();
    if let Some(wait) = retry {
        shared.counts.retried.fetch_add(1, Ordering::Relaxed);
        return message
            .ack_with(AckKind::Nak(Some(wait)))
            .await
            .map_err(|e| e.to_string());
    }
    if let Some(to) = header(REPLY_HEADER)
        && class != EventClass::Observe
    {
        let answer = serde_json::json!({
            "receipt": { "event_id": envelope.id, "durability": "persisted", "seq": seq, "duplicate": false },
            "resolution": dispatch.resolution,
        });
        let _ = shared.client.publish(to, answer.to_string().into()).await;
    }
    if !failed.is_empty() {
        bury_failures(shared, &message, &envelope, &failed, &stream, seq).await?;
    }
    message.double_ack().await.map_err(|e| e.to_string())?;
    shared.counts.acked.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Dead-letters a message whose deliveries failed for good, and raises the
/// failure cascade for each critical hook among them (once: a deterministic
/// id, a KV marker and the stream's dedup).
async fn bury_failures(
    shared: &Shared,
    message: &Message,
    envelope: &Envelope,
    failed: &[Delivery],
    stream: &str,
    seq: u64,
) -> Result<(), String> {
    let list: Vec<String> = failed
        .iter()
        .map(|f| format!("{} {} {}", f.hook, f.handler, f.outcome.as_str()))
        .collect();
    dead::bury(
        &shared.js,
        &shared.names.durable,
        Burial {
            stream,
            seq,
            subject: message.subject.as_str(),
            payload: message.payload.clone(),
            reason: "deliveries failed for good",
            attempt: envelope.attempt,
            failed: Some(&list.join("; ")),
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    shared.counts.dead.fetch_add(1, Ordering::Relaxed);
    for f in failed {
        let critical = settings_of(&shared.runtime, &f.hook).is_some_and(|h| h.settings.critical);
        // The error was masked once, when the delivery ended.
        let conclusion =
            hookrt::delivery::conclude(&f.hook, critical, envelope, f.outcome, f.error.as_deref());
        let Conclusion::Cascade {
            cascade: Some(cascade),
            ..
        } = conclusion
        else {
            continue;
        };
        let marker = format!("cascade.{}", token(&cascade.id));
        if shared
            .completion
            .exists(&marker)
            .await
            .map_err(|e| e.to_string())?
        {
            continue;
        }
        let published = shared
            .publisher
            .publish(&cascade)
            .await
            .map_err(|e| e.to_string())?;
        shared
            .completion
            .create_once(&marker)
            .await
            .map_err(|e| e.to_string())?;
        if !published.duplicate {
            shared.counts.cascades.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}
