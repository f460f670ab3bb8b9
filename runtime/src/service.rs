//! The service: a loaded runtime running in the background, fed by `emit`.
//!
//! One dispatcher thread owns the hooks and (in durable mode) the journal.
//! Emitted events queue up while it works; each turn of its loop takes every
//! queued event (up to [`MAX_BATCH`]), commits them in one transaction (group
//! commit), answers their receipts, delivers them in order, then acks the
//! batch in one transaction. Without a journal the same loop runs on memory
//! only, and receipts say `accepted`.
//!
//! Shutdown lets the queued work finish until its deadline, then cancels the
//! running delivery through the epoch and leaves the rest unacked: the next
//! start delivers it again with `attempt` + 1.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::cascade::{self, Failure};
use crate::delivery::Delivery;
use crate::dispatch::{deliver, to_wit};
use crate::envelope::{Durability, Envelope, EnvelopeError};
use crate::journal::{Ack, Inserted, Journal, JournalError, PendingDelivery, Plan};
use crate::outcome::Outcome;
use crate::runtime::Runtime;

/// Most events committed in one transaction.
pub const MAX_BATCH: usize = 256;
/// Ids remembered for deduplication without a journal: re-submissions within
/// this window are no-ops; memory stays bounded however long the process runs.
pub const MEMORY_DEDUP_WINDOW: usize = 100_000;

/// What `emit` answers once the event is held.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Receipt {
    /// The event id.
    pub event_id: String,
    /// How durably it is held: `persisted` only after the journal commit returned.
    pub durability: Durability,
    /// Its position in the journal (durable mode).
    pub seq: Option<i64>,
    /// True when the id was already held: nothing new was stored or delivered,
    /// and this is the original receipt.
    pub duplicate: bool,
}

/// Why an event was not taken.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The envelope is invalid.
    #[error("event refused: {0}")]
    Invalid(#[from] EnvelopeError),
    /// The service is shutting down (or has stopped); the event was not stored.
    #[error("hookrt is shutting down: event `{0}` was not stored; send it again after restart")]
    ShuttingDown(String),
    /// The journal failed; the event was not stored.
    #[error("event `{id}` was not stored: {message}")]
    Journal {
        /// The event id.
        id: String,
        /// What the journal said.
        message: String,
    },
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The journal could not be opened.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The dispatcher thread could not be started.
    #[error("cannot start the dispatcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Counts kept by the dispatcher, returned at shutdown.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Events taken (not counting duplicates).
    pub events: u64,
    /// Re-submissions answered with the original receipt.
    pub duplicates: u64,
    /// Deliveries finished (every attempt counts).
    pub deliveries: u64,
    /// Deliveries by outcome.
    pub outcomes: HashMap<Outcome, u64>,
    /// Deliveries run again after a restart or as a retry.
    pub repeats: u64,
    /// Final failures of optional hooks (recorded only).
    pub optional_failures: u64,
    /// Final failures of critical hooks.
    pub critical_failures: u64,
    /// `turn.failed` / `session.failed` events the cascade emitted.
    pub cascades: u64,
    /// Deliveries left unacked by shutdown.
    pub left_unacked: u64,
}

/// Called with every finished delivery, before it is acked.
pub type Observer = Box<dyn FnMut(&Delivery) + Send>;

enum Command {
    Emit(Envelope, oneshot::Sender<Result<Receipt, EmitError>>),
    Flush(oneshot::Sender<()>),
}

/// A receipt to wait for.
pub struct PendingReceipt(Result<oneshot::Receiver<Result<Receipt, EmitError>>, Option<EmitError>>, String);

impl PendingReceipt {
    /// Waits for the receipt (async).
    pub async fn receipt(self) -> Result<Receipt, EmitError> {
        match self.0 {
            Ok(rx) => rx.await.unwrap_or(Err(EmitError::ShuttingDown(self.1))),
            Err(e) => Err(e.unwrap_or(EmitError::ShuttingDown(self.1))),
        }
    }

    /// Waits for the receipt, blocking the thread (not for async contexts).
    pub fn wait(self) -> Result<Receipt, EmitError> {
        match self.0 {
            Ok(rx) => rx.blocking_recv().unwrap_or(Err(EmitError::ShuttingDown(self.1))),
            Err(e) => Err(e.unwrap_or(EmitError::ShuttingDown(self.1))),
        }
    }
}

/// A runtime running in the background.
pub struct HookService {
    tx: Option<mpsc::Sender<Command>>,
    thread: Option<JoinHandle<Stats>>,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    durability: Durability,
}

impl HookService {
    /// Starts the dispatcher. With `journal`, events are `persisted` and
    /// unacked deliveries from an earlier run are delivered first (in their
    /// original order, with `attempt` + 1).
    pub fn start(runtime: Runtime, journal: Option<&Path>, observer: Observer) -> Result<HookService, StartError> {
        let journal = journal.map(Journal::open).transpose()?;
        let durability = if journal.is_some() { Durability::Persisted } else { Durability::Accepted };
        let cancel = runtime.sandbox().cancel_flag();
        let (tx, rx) = mpsc::channel();
        let mut d = Dispatcher {
            rt: runtime,
            journal,
            observer,
            stats: Stats::default(),
            seen: (HashSet::new(), VecDeque::new()),
            acks: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("hookrt-dispatch".into())
            .spawn(move || {
                d.recover();
                d.serve(rx);
                d.stats
            })?;
        Ok(HookService { tx: Some(tx), thread: Some(thread), cancel, durability })
    }

    /// What receipts from this service say: `persisted` with a journal.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Validates and queues `envelope` without waiting; the receipt arrives
    /// once it is committed (or held in memory without a journal).
    pub fn submit(&self, mut envelope: Envelope) -> PendingReceipt {
        let id = envelope.id.clone();
        if let Err(e) = envelope.validate() {
            return PendingReceipt(Err(Some(EmitError::Invalid(e))), id);
        }
        let (reply, rx) = oneshot::channel();
        match self.tx.as_ref().map(|tx| tx.send(Command::Emit(envelope, reply))) {
            Some(Ok(())) => PendingReceipt(Ok(rx), id),
            _ => PendingReceipt(Err(None), id),
        }
    }

    /// Emits one event and waits for its receipt.
    pub async fn emit(&self, envelope: Envelope) -> Result<Receipt, EmitError> {
        self.submit(envelope).receipt().await
    }

    /// Resolves once everything submitted before it has been delivered.
    pub async fn flush(&self) {
        let (reply, rx) = oneshot::channel();
        if let Some(tx) = &self.tx
            && tx.send(Command::Flush(reply)).is_ok()
        {
            let _ = rx.await;
        }
    }

    /// Blocking form of [`HookService::flush`].
    pub fn flush_blocking(&self) {
        let (reply, rx) = oneshot::channel();
        if let Some(tx) = &self.tx
            && tx.send(Command::Flush(reply)).is_ok()
        {
            let _ = rx.blocking_recv();
        }
    }

    /// Stops taking events, lets queued work finish until `deadline`, then
    /// cancels the running delivery and leaves the rest unacked.
    pub async fn shutdown(mut self, deadline: Duration) -> Stats {
        let thread = self.begin_shutdown();
        let until = Instant::now() + deadline;
        while !thread.as_ref().is_none_or(JoinHandle::is_finished) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        self.finish(thread)
    }

    /// Blocking form of [`HookService::shutdown`].
    pub fn shutdown_blocking(mut self, deadline: Duration) -> Stats {
        let thread = self.begin_shutdown();
        let until = Instant::now() + deadline;
        while !thread.as_ref().is_none_or(JoinHandle::is_finished) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.finish(thread)
    }

    fn begin_shutdown(&mut self) -> Option<JoinHandle<Stats>> {
        self.tx = None; // the dispatcher ends once the queue is drained
        self.thread.take()
    }

    fn finish(&self, thread: Option<JoinHandle<Stats>>) -> Stats {
        self.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        thread.and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for HookService {
    fn drop(&mut self) {
        let thread = self.begin_shutdown();
        self.finish(thread);
    }
}

struct Dispatcher {
    rt: Runtime,
    journal: Option<Journal>,
    observer: Observer,
    stats: Stats,
    /// Without a journal: recently seen ids (set + insertion order).
    seen: (HashSet<String>, VecDeque<String>),
    acks: Vec<Ack>,
}

/// One event ready to deliver.
struct Work {
    seq: i64,
    envelope: Envelope,
    deliveries: Vec<PendingDelivery>,
}

impl Dispatcher {
    fn durability(&self) -> Durability {
        if self.journal.is_some() { Durability::Persisted } else { Durability::Accepted }
    }

    fn cancelled(&self) -> bool {
        self.rt.sandbox().is_cancelled()
    }

    fn recover(&mut self) {
        let Some(journal) = self.journal.as_mut() else { return };
        match journal.recover() {
            Ok(pending) => {
                if !pending.is_empty() {
                    let n: usize = pending.iter().map(|p| p.deliveries.len()).sum();
                    tracing::info!(events = pending.len(), deliveries = n, "recovering unacked deliveries from the journal");
                }
                let work = pending.into_iter().map(|p| Work { seq: p.seq, envelope: p.envelope, deliveries: p.deliveries }).collect();
                self.run(work);
            }
            Err(e) => tracing::error!("cannot recover from the journal: {e}"),
        }
    }

    fn serve(&mut self, rx: mpsc::Receiver<Command>) {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(c) => batch.push(c),
                    Err(_) => break,
                }
            }
            let mut emits = Vec::new();
            let mut flushes = Vec::new();
            for c in batch {
                match c {
                    Command::Emit(e, reply) => emits.push((e, reply)),
                    Command::Flush(reply) => flushes.push(reply),
                }
            }
            if self.cancelled() {
                for (e, reply) in emits {
                    let _ = reply.send(Err(EmitError::ShuttingDown(e.id)));
                }
                continue;
            }
            let work = self.take(emits);
            self.run(work);
            for f in flushes {
                let _ = f.send(());
            }
        }
    }

    /// Stores (or remembers) new events, answers every receipt, and returns
    /// the new events as work.
    fn take(&mut self, emits: Vec<(Envelope, oneshot::Sender<Result<Receipt, EmitError>>)>) -> Vec<Work> {
        let durability = self.durability();
        let plans: Vec<Plan> = emits.iter().map(|(e, _)| self.plan(&e.kind)).collect();
        let stored: Result<Vec<Inserted>, JournalError> = match self.journal.as_mut() {
            Some(j) => {
                let batch: Vec<(&Envelope, &Plan, &str)> = emits.iter().zip(&plans).map(|((e, _), p)| (e, p, "agent")).collect();
                j.insert(&batch)
            }
            None => Ok(emits.iter().map(|(e, _)| if self.remember(&e.id) { Inserted::New(0) } else { Inserted::Duplicate(0) }).collect()),
        };
        let stored = match stored {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("journal commit failed: {e}");
                let message = e.to_string();
                for (env, reply) in emits {
                    let _ = reply.send(Err(EmitError::Journal { id: env.id, message: message.clone() }));
                }
                return Vec::new();
            }
        };
        let mut work = Vec::new();
        for (((envelope, reply), plan), inserted) in emits.into_iter().zip(plans).zip(stored) {
            let (seq, duplicate) = match inserted {
                Inserted::New(seq) => (seq, false),
                Inserted::Duplicate(seq) => (seq, true),
            };
            let journal_seq = self.journal.is_some().then_some(seq);
            let _ = reply.send(Ok(Receipt { event_id: envelope.id.clone(), durability, seq: journal_seq, duplicate }));
            if duplicate {
                self.stats.duplicates += 1;
                continue;
            }
            self.stats.events += 1;
            // Without a journal the caller's attempt is kept (replaying a
            // recorded redelivery); the journal numbers attempts itself.
            let first = if self.journal.is_some() { 1 } else { envelope.attempt };
            let deliveries = plan
                .into_iter()
                .enumerate()
                .map(|(i, (hook, handler))| PendingDelivery { position: i as i64, hook, handler, attempts: first })
                .collect();
            work.push(Work { seq, envelope, deliveries });
        }
        work
    }

    fn plan(&self, kind: &str) -> Plan {
        let hooks = self.rt.hooks();
        self.rt.registry().plan(kind).into_iter().map(|p| (hooks[p.index].slug.to_string(), p.handler.to_owned())).collect()
    }

    /// Remembers an id without a journal; false when it was already seen.
    fn remember(&mut self, id: &str) -> bool {
        let (set, order) = &mut self.seen;
        if set.contains(id) {
            return false;
        }
        set.insert(id.to_owned());
        order.push_back(id.to_owned());
        if order.len() > MEMORY_DEDUP_WINDOW
            && let Some(old) = order.pop_front()
        {
            set.remove(&old);
        }
        true
    }

    /// Delivers the work in order, then acks it in one transaction.
    fn run(&mut self, work: Vec<Work>) {
        let mut queue: VecDeque<Work> = work.into();
        while let Some(w) = queue.pop_front() {
            if self.cancelled() {
                self.stats.left_unacked += w.deliveries.len() as u64 + queue.iter().map(|w| w.deliveries.len() as u64).sum::<u64>();
                break;
            }
            for follow_up in self.run_event(w).into_iter().rev() {
                queue.push_front(follow_up);
            }
        }
        let acks = std::mem::take(&mut self.acks);
        if let Some(j) = self.journal.as_mut()
            && let Err(e) = j.ack(&acks)
        {
            // Unacked deliveries run again after a restart: at-least-once holds.
            tracing::error!("journal ack failed (deliveries will repeat after restart): {e}");
        }
    }

    /// Runs one event's deliveries; returns cascade events to run next.
    fn run_event(&mut self, w: Work) -> Vec<Work> {
        let mut wit = match to_wit(&w.envelope, self.durability()) {
            Ok(wit) => wit,
            Err(e) => {
                tracing::error!(event_id = %w.envelope.id, "event cannot be delivered: {e}");
                return Vec::new();
            }
        };
        let mut follow_ups = Vec::new();
        for (i, pd) in w.deliveries.iter().enumerate() {
            let Some(index) = self.rt.hooks().iter().position(|h| h.slug.as_str() == pd.hook) else {
                let message = format!("hook `{}` is no longer loaded", pd.hook);
                self.acks.push(Ack { event_seq: w.seq, position: pd.position, attempts: pd.attempts, outcome: Outcome::Error, dead: Some(message) });
                continue;
            };
            let mut attempt = pd.attempts;
            loop {
                let hook = &self.rt.hooks()[index];
                let (settings_retry, critical) = (hook.settings.retry, hook.settings.critical);
                let (d, cancelled) = deliver(self.rt.sandbox(), hook, &w.envelope, &mut wit, &pd.handler, attempt);
                if cancelled {
                    self.stats.left_unacked += (w.deliveries.len() - i) as u64;
                    return follow_ups;
                }
                self.stats.deliveries += 1;
                *self.stats.outcomes.entry(d.outcome).or_default() += 1;
                if attempt > 1 {
                    self.stats.repeats += 1;
                }
                (self.observer)(&d);
                if d.outcome == Outcome::Ok {
                    self.acks.push(Ack { event_seq: w.seq, position: pd.position, attempts: attempt, outcome: d.outcome, dead: None });
                    break;
                }
                if attempt < settings_retry.max_attempts {
                    self.wait(settings_retry.backoff(attempt + 1));
                    if self.cancelled() {
                        // Retries are left: not a final failure; the next start goes on.
                        self.stats.left_unacked += (w.deliveries.len() - i) as u64;
                        return follow_ups;
                    }
                    attempt += 1;
                    if let Some(j) = self.journal.as_mut()
                        && let Err(e) = j.start_attempt(w.seq, pd.position, attempt)
                    {
                        tracing::error!("journal: cannot record retry: {e}");
                    }
                    continue;
                }
                let message = d.error.clone().unwrap_or_default();
                self.acks.push(Ack {
                    event_seq: w.seq,
                    position: pd.position,
                    attempts: attempt,
                    outcome: d.outcome,
                    dead: Some(message.clone()),
                });
                if critical {
                    self.stats.critical_failures += 1;
                    let failure = Failure { hook: &pd.hook, event: &w.envelope, outcome: d.outcome, message: &message };
                    if let Some(next) = cascade::follow_up(&failure).and_then(|e| self.emit_cascade(e)) {
                        follow_ups.push(next);
                    }
                } else {
                    self.stats.optional_failures += 1;
                    tracing::warn!(hook = %pd.hook, event_id = %w.envelope.id, outcome = %d.outcome, "optional hook failed; recorded, no cascade");
                }
                break;
            }
        }
        follow_ups
    }

    /// Sleeps for a retry's backoff, waking early when shutdown cancels.
    fn wait(&self, backoff: Duration) {
        let until = Instant::now() + backoff;
        while Instant::now() < until && !self.cancelled() {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
        }
    }

    /// Stores a cascade event once (by its deterministic id); None when it
    /// was already emitted for that turn or session.
    fn emit_cascade(&mut self, envelope: Envelope) -> Option<Work> {
        let plan = self.plan(&envelope.kind);
        let seq = if let Some(j) = self.journal.as_mut() {
            match j.insert(&[(&envelope, &plan, "cascade")]) {
                Ok(v) => match v.first() {
                    Some(Inserted::New(seq)) => *seq,
                    _ => return None,
                },
                Err(e) => {
                    tracing::error!("journal: cannot store {}: {e}", envelope.kind);
                    return None;
                }
            }
        } else if self.remember(&envelope.id) {
            0
        } else {
            return None;
        };
        self.stats.cascades += 1;
        tracing::warn!(event_id = %envelope.id, kind = %envelope.kind, "failure cascade");
        let deliveries = plan.into_iter().enumerate().map(|(i, (hook, handler))| PendingDelivery { position: i as i64, hook, handler, attempts: 1 }).collect();
        Some(Work { seq, envelope, deliveries })
    }
}
