//! One partition's consumer: messages of the partition, one at a time, in
//! stream order (its consumer has one message in flight, pulled through the
//! partition's standing [`Pull`]), each acked only once all its deliveries
//! finished.
//!
//! For each message: parse the envelope (malformed: dead letter, `+TERM`);
//! number the attempt from JetStream's delivery count (raised above the
//! attempt this task last ran the message at); on a redelivery, read
//! the event's completion mark and leave out what it lists (observe events;
//! a decision or edit event runs whole, its answer needs every hook, and
//! one answered before is answered again as first kept); run
//! the rest through the library's event loop ([`crate::sink`]); answer a `Hookrt-Reply-To`; then either store the mark and nak
//! with the hook's backoff (a failed delivery with retries left), or store
//! the mark, bury what failed for good, raise the failure cascade for a
//! critical hook, and ack. A message whose deliveries all ended is acked
//! with no mark.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind, Message, consumer::PullConsumer};
use hookrt::delivery::{Conclusion, Retries};
use hookrt::front::input::LineError;
use hookrt::front::line::{Placement, write_delivery};
use hookrt::{Delivery, Durability, Envelope, EventClass, Outcome, Runtime, class_of};

use crate::completion::{self, Completion};
use crate::dead::{self, Burial};
use crate::fleet::Names;
use crate::publish::{Publisher, REPLY_HEADER, REPLY_PREFIX};
use crate::pull::Pull;
use crate::received::{Received, header};
use crate::sink::{Failed, Finished, Ran, Verdicts};
use crate::subject::{subject_of, token};
use crate::{Source, WorkerError};

/// What every partition of a worker shares.
pub(crate) struct Shared {
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
    /// Deliveries that ran again (a retry or a redelivery).
    pub repeats: AtomicU64,
    /// Deliveries by outcome, in [`Outcome::ALL`]'s order.
    #[serde(skip)]
    pub outcomes: [AtomicU64; Outcome::ALL.len()],
    /// Final failures of optional hooks.
    pub optional_failures: AtomicU64,
    /// Final failures of critical hooks.
    pub critical_failures: AtomicU64,
}

impl Counts {
    /// One finished delivery.
    fn count(&self, d: &Delivery) {
        self.deliveries.fetch_add(1, Ordering::Relaxed);
        if d.attempt > 1 {
            self.repeats.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(i) = Outcome::ALL.iter().position(|o| *o == d.outcome) {
            self.outcomes[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Steers one partition's task.
pub(crate) struct Control {
    /// Finish the message in flight, then stop.
    pub stop: AtomicBool,
    /// The lease is ours until then; past it the task stops without acking.
    pub valid_until: Mutex<Instant>,
}

/// Consumes one partition until told to stop.
pub(crate) async fn consume(
    shared: Arc<Shared>,
    consumer: PullConsumer,
    partition: u32,
    ctl: Arc<Control>,
) {
    let valid = || Instant::now() < *ctl.valid_until.lock().unwrap_or_else(|e| e.into_inner());
    let stopping = || ctl.stop.load(Ordering::Relaxed);
    // A JetStream cluster whose consumer leader dies may not have
    // replicated what the old leader knew to the new one, which then hands
    // a message back after later ones, or at a delivery count it had:
    // - `acked_through`: the stream sequence of the last message whose ack
    //   the server confirmed;
    // - `last`: the sequence and attempt of the last message this task ran.
    // A message at or below the first, or below the second (the consumer
    // has one message in flight, so a later one was handed out only once it
    // ended), finished: it is acked again, not run out of order. The last
    // one coming back runs at a higher attempt than it ran at.
    let mut acked_through: u64 = 0;
    let mut last: Option<(u64, u32)> = None;
    while !stopping() {
        if !valid() {
            // The renewal is late (a busy machine): take nothing until it
            // is renewed, or the lease manager stops this task.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        let mut pull = match Pull::open(consumer.clone(), &shared.client, shared.js.clone()).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(target: "hookrt", partition, "pulling failed: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        // The pull is closed before the last message's ack or nak: still
        // open, it would be handed the next message (or the nak'ed one).
        loop {
            let message = match pull.next(|| stopping() || !valid()).await {
                Ok(Some(m)) => m,
                Ok(None) => {
                    pull.close().await;
                    break;
                }
                Err(e) => {
                    tracing::warn!(target: "hookrt", partition, "pulling failed: {e}");
                    pull.close().await;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    break;
                }
            };
            if stopping() || !valid() {
                // Stopping, or the lease may be someone else's now: hand
                // the message back.
                pull.close().await;
                let _ = message.ack_with(AckKind::Nak(None)).await;
                break;
            }
            let seq = message.info().map_or(0, |i| i.stream_sequence);
            if seq > 0 && (seq <= acked_through || last.is_some_and(|(s, _)| seq < s)) {
                tracing::debug!(target: "hookrt", partition, seq, "a message that finished came back (a cluster's ack not replicated): acked again");
                finish(&shared, &message, Ending::Ack, partition).await;
                continue;
            }
            let received = match Received::of(&message) {
                Ok(r) => r.after(last.filter(|(s, _)| *s == seq).map(|(_, a)| a)),
                Err(e) => {
                    tracing::warn!(target: "hookrt", partition, "message not handled, to be redelivered: {e}");
                    continue;
                }
            };
            last = Some((seq, received.attempt));
            let ending = match handle(&shared, &message, &received, partition).await {
                Ok(ending) => ending,
                Err(e) => {
                    tracing::warn!(target: "hookrt", partition, "message not finished, to be redelivered: {e}");
                    continue;
                }
            };
            if stopping() || !valid() {
                pull.close().await;
                finish(&shared, &message, ending, partition).await;
                break;
            }
            if finish(&shared, &message, ending, partition).await {
                acked_through = acked_through.max(seq);
            }
        }
    }
}

/// How a handled message ends.
#[derive(Clone, Copy)]
enum Ending {
    /// Every delivery ended: acked (a double ack, the server confirms).
    Ack,
    /// A delivery has attempts left: redelivered after this wait.
    Retry(Duration),
    /// Malformed: never delivered again.
    Term,
}

/// Acks, naks or terminates a handled message: whether the server
/// confirmed an ack.
async fn finish(shared: &Shared, message: &Message, ending: Ending, partition: u32) -> bool {
    let (done, doing) = match ending {
        Ending::Ack => (message.double_ack().await, "cannot ack a finished message"),
        Ending::Retry(wait) => (
            message.ack_with(AckKind::Nak(Some(wait))).await,
            "cannot nak a message for its retry",
        ),
        Ending::Term => (
            message.ack_with(AckKind::Term).await,
            "cannot end a malformed message",
        ),
    };
    match done {
        Ok(()) if matches!(ending, Ending::Ack) => {
            shared.counts.acked.fetch_add(1, Ordering::Relaxed);
            true
        }
        Ok(()) => false,
        Err(e) => {
            tracing::warn!(target: "hookrt", partition, "message not finished, to be redelivered: {}", WorkerError::nats(doing, e));
            false
        }
    }
}

/// One message: its envelope's deliveries run (those not finished before),
/// then, when a delivery has attempts left, a completion mark and a retry;
/// otherwise the reply, and for what failed for good a completion mark, the
/// dead letter and the cascade. Returns how the message ends; the caller
/// acks or naks it.
async fn handle(
    shared: &Shared,
    message: &Message,
    received: &Received,
    partition: u32,
) -> Result<Ending, WorkerError> {
    let mut envelope = match accept(&shared.names, &message.subject, &message.payload) {
        Ok(e) => e,
        Err(refused) => {
            let reason = refused.to_string();
            return bury_malformed(shared, message, received, &reason).await;
        }
    };
    envelope.attempt = received.attempt;
    // A decision or edit event runs whole: its answer needs every hook.
    let observe = class_of(&envelope.kind) == EventClass::Observe;
    // Where its answer goes, and where the answer is kept: a decision
    // answered before (its worker died between the answer and the ack) runs
    // again, at-least-once, but is answered as it was the first time (hooks
    // keep state, and a second run could decide otherwise).
    let reply_to = header(message, REPLY_HEADER).filter(|to| !observe && replyable(to));
    let kept = reply_to
        .as_ref()
        .map(|_| completion::decided_key(&envelope));
    let mut finished = if received.is_repeat() && observe {
        shared.completion.finished(&envelope).await?
    } else {
        completion::Done::new()
    };
    shared
        .counts
        .skipped
        .fetch_add(finished.len() as u64, Ordering::Relaxed);
    // Past the consumer's `max_deliver` JetStream would not redeliver.
    let may_retry =
        !(shared.max_deliver > 0 && i64::from(received.delivered) >= shared.max_deliver);
    let ran = run(shared, &envelope, &finished, partition, may_retry).await?;
    let retry = ran.retry;
    if observe && (retry.is_some() || !ran.failed.is_empty()) && !ran.succeeded.is_empty() {
        // The redelivery, or a re-drive of the dead letter, runs only what
        // has not finished.
        finished.extend(ran.succeeded);
        shared
            .completion
            .mark(&envelope, &finished, envelope.attempt, &shared.me)
            .await?;
    }
    if let Some(wait) = retry {
        shared.counts.retried.fetch_add(1, Ordering::Relaxed);
        return Ok(Ending::Retry(wait));
    }
    if let Some(key) = &kept {
        // Kept before it is told: the first answer kept is the one told,
        // whichever worker ran the event first.
        let resolution =
            serde_json::to_string(&ran.resolution).map_err(|e| WorkerError::Encode {
                event_id: envelope.id.clone(),
                source: e,
            })?;
        let answered = shared.completion.get_or_create(key, &resolution).await?;
        reply(shared, reply_to.as_deref(), &envelope, received, answered).await;
    }
    if !ran.failed.is_empty() {
        bury_failures(shared, message, &envelope, ran.failed, received).await?;
    }
    Ok(Ending::Ack)
}

/// Publishes a decision's `resolution` (its JSON text, as kept) to `to`.
async fn reply(
    shared: &Shared,
    to: Option<&str>,
    envelope: &Envelope,
    received: &Received,
    resolution: String,
) {
    let Some(to) = to else { return };
    let resolution: serde_json::Value =
        serde_json::from_str(&resolution).unwrap_or(serde_json::Value::Null);
    let answer = serde_json::json!({
        "receipt": { "event_id": envelope.id, "durability": "persisted", "seq": received.seq, "duplicate": false },
        "resolution": resolution,
    });
    let _ = shared
        .client
        .publish(to.to_owned(), answer.to_string().into())
        .await;
}

/// Why a consumed message is not delivered: its dead letter's reason.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Its payload is no valid envelope (not UTF-8, or not an envelope).
    #[error("{0}")]
    Malformed(#[from] LineError),
    /// It was published anywhere but its own session's subject.
    #[error("published to `{subject}`, but its agent and session belong on `{own}`; not delivered")]
    Elsewhere {
        /// Where it was published.
        subject: String,
        /// Where its agent and session belong.
        own: String,
    },
}

/// The envelope a message consumed from `subject` carries, or why it is not
/// delivered (the dead letter's reason): its payload is no valid envelope,
/// or it was published anywhere but its own session's subject (the subject
/// a publisher's permissions are granted by; one published elsewhere is
/// someone else's session in disguise). Pure: fuzzed as `nats_message`.
pub fn accept(names: &Names, subject: &str, payload: &[u8]) -> Result<Envelope, Refused> {
    let text = std::str::from_utf8(payload).map_err(|_| LineError::NotUtf8)?;
    let envelope = Envelope::from_json(text).map_err(LineError::from)?;
    let own = subject_of(&names.prefix, &envelope, names.partitions);
    if subject != own {
        return Err(Refused::Elsewhere {
            subject: subject.to_owned(),
            own,
        });
    }
    Ok(envelope)
}

/// Whether a decision's answer may go to `to`: only a reply inbox
/// ([`REPLY_PREFIX`], with no wildcard or space in it), never a KV key, a
/// completion mark, a lease or a JetStream API subject a publisher names.
pub fn replyable(to: &str) -> bool {
    let ok = to.len() > REPLY_PREFIX.len()
        && to.starts_with(REPLY_PREFIX)
        && !to.contains(['*', '>', ' ', '\t', '\r', '\n'])
        && !to.split('.').any(str::is_empty);
    if !ok {
        tracing::warn!(
            target: "hookrt",
            "not answering to `{}`: {REPLY_HEADER} must name a reply inbox ({REPLY_PREFIX}...)",
            to.chars().take(100).collect::<String>()
        );
    }
    ok
}

/// A message that is no envelope, or not where its envelope belongs: a dead
/// letter with the reason, then `+TERM` (never again).
async fn bury_malformed(
    shared: &Shared,
    message: &Message,
    received: &Received,
    reason: &str,
) -> Result<Ending, WorkerError> {
    tracing::warn!(target: "hookrt", subject = %message.subject, "malformed message: {reason}");
    bury(shared, message, received, reason, received.attempt, None).await?;
    Ok(Ending::Term)
}

/// Runs the envelope's deliveries but those `done`, on a blocking thread
/// (one of the worker's `threads`), counting and printing each delivery
/// line as it ends. A failure with attempts left asks for a retry (the
/// delivery policy's decision, as in the service) unless `may_retry` is
/// false: past the consumer's `max_deliver` JetStream would not redeliver,
/// so every failure is final.
async fn run(
    shared: &Shared,
    envelope: &Envelope,
    done: &completion::Done,
    partition: u32,
    may_retry: bool,
) -> Result<Ran, WorkerError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Finished>();
    let permit = shared.threads.clone().acquire_owned().await.ok();
    let run = {
        let envelope = envelope.clone();
        let runtime = shared.runtime.clone();
        let done = done.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut verdicts = Verdicts::new(tx);
            let resolution = runtime.dispatch_into(
                &envelope,
                Durability::Persisted,
                &|hook, handler| done.contains(&(hook.to_owned(), handler.to_owned())),
                Retries::BySource { may_retry },
                &mut verdicts,
            );
            resolution.map(|r| verdicts.into_ran(r))
        })
    };
    while let Some(f) = rx.recv().await {
        shared.counts.count(&f.delivery);
        if shared.print {
            print_line(shared, &f, partition);
        }
    }
    match run.await {
        Ok(Ok(ran)) => Ok(ran),
        Ok(Err(e)) => Err(dispatch_error(envelope, e.into())),
        Err(e) => Err(dispatch_error(envelope, e.into())),
    }
}

fn dispatch_error(envelope: &Envelope, source: Source) -> WorkerError {
    WorkerError::Dispatch {
        event_id: envelope.id.clone(),
        source,
    }
}

/// One delivery line on stdout, with where it ran.
fn print_line(shared: &Shared, f: &Finished, partition: u32) {
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

/// Copies `message` to the group's dead letters, with why, after how many
/// deliveries and which failed.
async fn bury(
    shared: &Shared,
    message: &Message,
    received: &Received,
    reason: &str,
    attempt: u32,
    failed: Option<&str>,
) -> Result<(), WorkerError> {
    dead::bury(
        &shared.js,
        &shared.names.durable,
        Burial {
            stream: &received.stream,
            seq: received.seq,
            subject: message.subject.as_str(),
            payload: message.payload.clone(),
            reason,
            attempt,
            failed,
        },
    )
    .await?;
    shared.counts.dead.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Dead-letters a message whose deliveries failed for good, and raises the
/// failure cascade the event loop concluded for each critical hook among
/// them (once: a deterministic id, a KV marker and the stream's dedup).
async fn bury_failures(
    shared: &Shared,
    message: &Message,
    envelope: &Envelope,
    failed: Vec<Failed>,
    received: &Received,
) -> Result<(), WorkerError> {
    let list: Vec<String> = failed
        .iter()
        .map(|f| format!("{} {} {}", f.hook, f.handler, f.outcome.as_str()))
        .collect();
    let reason = "deliveries failed for good";
    let failed_list = list.join("; ");
    bury(
        shared,
        message,
        received,
        reason,
        envelope.attempt,
        Some(&failed_list),
    )
    .await?;
    for f in failed {
        let Some(Conclusion::Cascade { cascade, .. }) = f.conclusion else {
            shared
                .counts
                .optional_failures
                .fetch_add(1, Ordering::Relaxed);
            continue;
        };
        shared
            .counts
            .critical_failures
            .fetch_add(1, Ordering::Relaxed);
        let Some(cascade) = cascade else {
            continue;
        };
        let marker = format!("cascade.{}", token(&cascade.id));
        if shared.completion.exists(&marker).await? {
            continue;
        }
        let published = shared.publisher.publish(&cascade).await?;
        shared.completion.create_once(&marker).await?;
        if !published.duplicate {
            shared.counts.cascades.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}
