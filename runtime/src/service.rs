//! The service: a loaded runtime running in the background, fed by `emit`.
//!
//! Two threads split the work so a receipt never waits for a hook:
//! - the **writer** takes every queued event (up to [`MAX_BATCH`]), commits
//!   them in one transaction (group commit), answers their receipts and hands
//!   them to the dispatcher;
//! - the **dispatcher** ([`crate::dispatcher`]) owns the hooks and delivers
//!   events in journal order, acking each batch in one transaction.
//!
//! The queue between them holds at most [`DISPATCH_QUEUE`] batches: when hooks
//! fall that far behind, the writer waits, and receipts with it
//! (backpressure), so memory stays flat under any load.
//!
//! Without a journal the same pipeline runs on memory, and receipts say
//! `accepted`. Shutdown lets queued work run until its deadline, then cancels
//! the running delivery through the epoch and leaves the rest unacked: the
//! next start delivers it again with `attempt` + 1.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::delivery::{Delivery, Resolution};
use crate::dispatcher::{Dispatcher, Msg, Work};
use crate::envelope::{Durability, Envelope, EnvelopeError};
use crate::journal::{Inserted, Journal, JournalError, PendingDelivery, Plan};
use crate::outcome::Outcome;
use crate::registry::Planner;
use crate::runtime::Runtime;
use crate::scope::Scope;
use crate::state::StateStore;

/// Most events committed in one transaction.
pub const MAX_BATCH: usize = 256;
/// Batches (of up to [`MAX_BATCH`] events) waiting for the dispatcher at
/// most; when they are full, the writer waits and receipts slow down: the
/// backpressure that keeps memory flat however fast events come.
pub const DISPATCH_QUEUE: usize = 4;
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
    /// The journal could not be opened or recovered.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A service thread could not be started.
    #[error("cannot start a service thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Counts kept by the service, returned at shutdown.
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

/// What the observer is told.
#[derive(Debug, Clone, Copy)]
pub enum Report<'a> {
    /// A delivery finished (before it is acked).
    Delivery(&'a Delivery),
    /// A decision or edit event's deliveries finished, with what they decided.
    Resolved {
        /// The event id.
        event_id: &'a str,
        /// The event kind.
        kind: &'a str,
        /// What was decided.
        resolution: &'a Resolution,
    },
}

/// Called on the dispatcher thread with every finished delivery (before it is
/// acked) and every resolution.
pub type Observer = Box<dyn FnMut(Report<'_>) + Send>;

type ReceiptTx = oneshot::Sender<Result<Receipt, EmitError>>;
type ResolutionTx = oneshot::Sender<Option<Resolution>>;
type ResolvingRx = (
    oneshot::Receiver<Result<Receipt, EmitError>>,
    oneshot::Receiver<Option<Resolution>>,
);

enum Command {
    Emit(Envelope, ReceiptTx, Option<ResolutionTx>),
    Flush(oneshot::Sender<()>),
}

/// A receipt and, for decision and edit events, what they decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The receipt.
    pub receipt: Receipt,
    /// What the event decided: `None` for observe events, and for a duplicate
    /// (a re-submitted event is not decided again).
    pub resolution: Option<Resolution>,
}

/// A receipt to wait for.
pub struct PendingReceipt(
    Result<oneshot::Receiver<Result<Receipt, EmitError>>, Option<EmitError>>,
    String,
);

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
            Ok(rx) => rx
                .blocking_recv()
                .unwrap_or(Err(EmitError::ShuttingDown(self.1))),
            Err(e) => Err(e.unwrap_or(EmitError::ShuttingDown(self.1))),
        }
    }
}

/// A runtime running in the background.
pub struct HookService {
    tx: Option<mpsc::Sender<Command>>,
    writer: Option<JoinHandle<Stats>>,
    dispatcher: Option<JoinHandle<Stats>>,
    cancel: Arc<AtomicBool>,
    durability: Durability,
}

/// Most workers a service runs (more are cut to this; the pooling allocator
/// keeps a fresh-instance slot for each).
pub const MAX_WORKERS: usize = 64;

/// How the service runs, beyond the runtime and the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceOptions {
    /// Threads delivering observe events side by side across hooks (each
    /// hook still gets its deliveries one at a time, in order; decision and
    /// edit events run alone). 1 delivers everything on one thread, in plan
    /// order across hooks too. At most [`MAX_WORKERS`].
    pub workers: usize,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions { workers: 1 }
    }
}

impl HookService {
    /// Starts the service with default options (one worker). With `journal`,
    /// events are `persisted`, and deliveries an earlier run left unacked are
    /// delivered first (in their original order, with `attempt` + 1).
    pub fn start(
        runtime: Runtime,
        journal: Option<&Path>,
        observer: Observer,
    ) -> Result<HookService, StartError> {
        Self::start_with(runtime, journal, observer, ServiceOptions::default())
    }

    /// Starts the service with `options` (see [`HookService::start`]).
    pub fn start_with(
        runtime: Runtime,
        journal: Option<&Path>,
        observer: Observer,
        options: ServiceOptions,
    ) -> Result<HookService, StartError> {
        let (writer_journal, dispatcher_journal, recovered) = match journal {
            Some(path) => {
                let mut j = Journal::open(path)?;
                // Read before the writer starts, so nothing is both recovered and new.
                let pending = j.recover()?;
                (Some(Journal::open(path)?), Some(j), pending)
            }
            None => (None, None, Vec::new()),
        };
        let durability = if journal.is_some() {
            Durability::Persisted
        } else {
            Durability::Accepted
        };
        let cancel = runtime.sandbox().cancel_flag();
        let planner = runtime.registry().planner();
        let (tx, rx) = mpsc::channel();
        // Bounded: under overload the writer waits for the dispatcher, so
        // receipts slow down instead of memory growing without end.
        let (work_tx, work_rx) = mpsc::sync_channel(DISPATCH_QUEUE);

        let recovered: Vec<Work> = recovered
            .into_iter()
            .map(|p| Work {
                seq: p.seq,
                envelope: p.envelope,
                deliveries: p.deliveries,
                resolve: None,
            })
            .collect();
        if !recovered.is_empty() {
            let n: usize = recovered.iter().map(|w| w.deliveries.len()).sum();
            tracing::info!(
                events = recovered.len(),
                deliveries = n,
                "recovering unacked deliveries from the journal"
            );
        }
        let mut runtime = runtime;
        if let Some(path) = journal {
            // Hooks' state lives beside the events, so it survives restarts.
            let store = StateStore::open(path).map_err(|sqlite| JournalError::Sqlite {
                path: path.to_path_buf(),
                sqlite,
            })?;
            runtime.use_state(store);
        }
        let mut dispatcher =
            Dispatcher::new(runtime, dispatcher_journal, observer, options.workers)?;
        let dispatcher = std::thread::Builder::new()
            .name("hookrt-dispatch".into())
            .spawn(move || {
                dispatcher.run(recovered);
                dispatcher.serve(work_rx);
                dispatcher.into_stats()
            })?;
        let mut writer = Writer {
            journal: writer_journal,
            planner,
            cancel: cancel.clone(),
            seen: Seen::default(),
            stats: Stats::default(),
        };
        let writer = std::thread::Builder::new()
            .name("hookrt-journal".into())
            .spawn(move || {
                writer.serve(rx, work_tx);
                writer.stats
            })?;
        Ok(HookService {
            tx: Some(tx),
            writer: Some(writer),
            dispatcher: Some(dispatcher),
            cancel,
            durability,
        })
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
        match self
            .tx
            .as_ref()
            .map(|tx| tx.send(Command::Emit(envelope, reply, None)))
        {
            Some(Ok(())) => PendingReceipt(Ok(rx), id),
            _ => PendingReceipt(Err(None), id),
        }
    }

    fn send_resolving(&self, mut envelope: Envelope) -> Result<(ResolvingRx, String), EmitError> {
        let id = envelope.id.clone();
        envelope.validate()?;
        let (reply, receipt_rx) = oneshot::channel();
        let (resolve, resolution_rx) = oneshot::channel();
        match self
            .tx
            .as_ref()
            .map(|tx| tx.send(Command::Emit(envelope, reply, Some(resolve))))
        {
            Some(Ok(())) => Ok(((receipt_rx, resolution_rx), id)),
            _ => Err(EmitError::ShuttingDown(id)),
        }
    }

    /// Emits one event and waits until its deliveries finished: for a
    /// decision event (tool approval, file-edit ownership) the merged answer,
    /// for an edit event the final state and each hook's account.
    pub async fn resolve(&self, envelope: Envelope) -> Result<Resolved, EmitError> {
        let ((receipt_rx, resolution_rx), id) = self.send_resolving(envelope)?;
        let receipt = receipt_rx
            .await
            .unwrap_or_else(|_| Err(EmitError::ShuttingDown(id.clone())))?;
        if receipt.duplicate {
            return Ok(Resolved {
                receipt,
                resolution: None,
            });
        }
        let resolution = resolution_rx
            .await
            .map_err(|_| EmitError::ShuttingDown(id))?;
        Ok(Resolved {
            receipt,
            resolution,
        })
    }

    /// Blocking form of [`HookService::resolve`] (not for async contexts).
    pub fn resolve_blocking(&self, envelope: Envelope) -> Result<Resolved, EmitError> {
        let ((receipt_rx, resolution_rx), id) = self.send_resolving(envelope)?;
        let receipt = receipt_rx
            .blocking_recv()
            .unwrap_or_else(|_| Err(EmitError::ShuttingDown(id.clone())))?;
        if receipt.duplicate {
            return Ok(Resolved {
                receipt,
                resolution: None,
            });
        }
        let resolution = resolution_rx
            .blocking_recv()
            .map_err(|_| EmitError::ShuttingDown(id))?;
        Ok(Resolved {
            receipt,
            resolution,
        })
    }

    /// Emits one event and waits for its receipt.
    pub async fn emit(&self, envelope: Envelope) -> Result<Receipt, EmitError> {
        self.submit(envelope).receipt().await
    }

    fn send_flush(&self) -> Option<oneshot::Receiver<()>> {
        let (reply, rx) = oneshot::channel();
        self.tx.as_ref()?.send(Command::Flush(reply)).ok()?;
        Some(rx)
    }

    /// Resolves once everything submitted before it has been delivered.
    pub async fn flush(&self) {
        if let Some(rx) = self.send_flush() {
            let _ = rx.await;
        }
    }

    /// Blocking form of [`HookService::flush`].
    pub fn flush_blocking(&self) {
        if let Some(rx) = self.send_flush() {
            let _ = rx.blocking_recv();
        }
    }

    /// Stops taking events, lets queued work finish until `deadline`, then
    /// cancels the running delivery and leaves the rest unacked.
    pub async fn shutdown(mut self, deadline: Duration) -> Stats {
        let until = Instant::now() + deadline;
        self.tx = None; // the writer, then the dispatcher, end once drained
        while !self.drained() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        self.finish()
    }

    /// Blocking form of [`HookService::shutdown`].
    pub fn shutdown_blocking(mut self, deadline: Duration) -> Stats {
        let until = Instant::now() + deadline;
        self.tx = None;
        while !self.drained() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.finish()
    }

    fn drained(&self) -> bool {
        self.dispatcher.as_ref().is_none_or(JoinHandle::is_finished)
    }

    fn finish(&mut self) -> Stats {
        self.tx = None;
        self.cancel.store(true, Ordering::Relaxed);
        let taken = self
            .writer
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let mut stats = self
            .dispatcher
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        stats.events = taken.events;
        stats.duplicates = taken.duplicates;
        stats
    }
}

impl Drop for HookService {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Ids seen recently (without a journal): a set plus insertion order.
#[derive(Default)]
pub(crate) struct Seen(HashSet<String>, VecDeque<String>);

impl Seen {
    /// Remembers `id`; false when it was already seen.
    pub(crate) fn insert(&mut self, id: &str) -> bool {
        if self.0.contains(id) {
            return false;
        }
        self.0.insert(id.to_owned());
        self.1.push_back(id.to_owned());
        if self.1.len() > MEMORY_DEDUP_WINDOW
            && let Some(old) = self.1.pop_front()
        {
            self.0.remove(&old);
        }
        true
    }
}

/// Commits batches of emitted events and answers their receipts.
struct Writer {
    journal: Option<Journal>,
    planner: Planner,
    cancel: Arc<AtomicBool>,
    seen: Seen,
    stats: Stats,
}

impl Writer {
    fn serve(&mut self, rx: mpsc::Receiver<Command>, work: mpsc::SyncSender<Msg>) {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(c) => batch.push(c),
                    Err(_) => break,
                }
            }
            let mut emits = Vec::new();
            for c in batch {
                match c {
                    Command::Emit(e, reply, resolve) => emits.push((e, reply, resolve)),
                    Command::Flush(reply) => {
                        // Everything before the flush must reach the dispatcher first.
                        let new = self.take(std::mem::take(&mut emits));
                        let _ = work.send(Msg::Work(new));
                        let _ = work.send(Msg::Flush(reply));
                    }
                }
            }
            let new = self.take(emits);
            if !new.is_empty() {
                let _ = work.send(Msg::Work(new));
            }
        }
    }

    /// Stores (or remembers) new events, answers every receipt, and returns
    /// the new events as work.
    fn take(&mut self, emits: Vec<(Envelope, ReceiptTx, Option<ResolutionTx>)>) -> Vec<Work> {
        if emits.is_empty() {
            return Vec::new();
        }
        if self.cancel.load(Ordering::Relaxed) {
            for (e, reply, _) in emits {
                let _ = reply.send(Err(EmitError::ShuttingDown(e.id)));
            }
            return Vec::new();
        }
        let plans: Vec<Plan> = emits
            .iter()
            .map(|(e, _, _)| {
                self.planner
                    .plan(&e.kind, &Scope::of_event(e.coordinates.subagent.as_deref()))
            })
            .collect();
        let stored = match self.journal.as_mut() {
            Some(j) => {
                let batch: Vec<(&Envelope, &Plan, &str)> = emits
                    .iter()
                    .zip(&plans)
                    .map(|((e, _, _), p)| (e, p, "agent"))
                    .collect();
                j.insert(&batch)
            }
            None => Ok(emits
                .iter()
                .map(|(e, _, _)| {
                    if self.seen.insert(&e.id) {
                        Inserted::New(0)
                    } else {
                        Inserted::Duplicate(0)
                    }
                })
                .collect()),
        };
        let stored = match stored {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("journal commit failed: {e}");
                let message = e.to_string();
                for (env, reply, _) in emits {
                    let _ = reply.send(Err(EmitError::Journal {
                        id: env.id,
                        message: message.clone(),
                    }));
                }
                return Vec::new();
            }
        };
        let durable = self.journal.is_some();
        let durability = if durable {
            Durability::Persisted
        } else {
            Durability::Accepted
        };
        let mut work = Vec::new();
        for (((envelope, reply, resolve), plan), inserted) in
            emits.into_iter().zip(plans).zip(stored)
        {
            let (seq, duplicate) = match inserted {
                Inserted::New(seq) => (seq, false),
                Inserted::Duplicate(seq) => (seq, true),
            };
            let _ = reply.send(Ok(Receipt {
                event_id: envelope.id.clone(),
                durability,
                seq: durable.then_some(seq),
                duplicate,
            }));
            if duplicate {
                self.stats.duplicates += 1;
                continue;
            }
            self.stats.events += 1;
            // Without a journal the caller's attempt is kept (replaying a
            // recorded redelivery); the journal numbers attempts itself.
            let first = if durable { 1 } else { envelope.attempt };
            let deliveries = PendingDelivery::planned(plan, first);
            work.push(Work {
                seq,
                envelope,
                deliveries,
                resolve,
            });
        }
        work
    }
}
