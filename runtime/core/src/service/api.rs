//! The service: a loaded runtime running in the background, fed by `emit`.
//!
//! Two threads split the work so a receipt never waits for a hook:
//! - the **writer** takes every queued event (up to [`MAX_BATCH`]), commits
//!   them in one transaction (group commit), answers their receipts and hands
//!   them to the dispatcher;
//! - the **dispatcher** ([`crate::service::dispatcher`]) owns the hooks and delivers
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

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::oneshot;

use crate::delivery::record::Resolution;
use crate::event::envelope::{Durability, Envelope};
use crate::runtime::Runtime;
use crate::sandbox::state::StateStore;
use crate::service::dispatcher::Dispatcher;
use crate::service::journal::trail::{TrailOptions, trail_context};
use crate::service::journal::{DEFAULT_RETENTION, Journal, JournalError};
use crate::service::owner::JournalLock;
use crate::service::report::{Observer, Receipt, Reloaded, ResolveReply, Stats};
use crate::service::work::{
    Command, DISPATCH_QUEUE, EmitError, ReloadError, ResolvingRx, SUBMIT_QUEUE, Seen, Work,
};
use crate::service::writer::Writer;

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

/// A receipt to wait for.
pub struct PendingReceipt(
    Result<oneshot::Receiver<Result<Receipt, EmitError>>, Option<EmitError>>,
    String,
);

impl PendingReceipt {
    /// Why the event was refused without being queued (invalid, or the queue
    /// was full inside an async runtime), if it was.
    pub fn refused(&self) -> Option<&EmitError> {
        self.0.as_ref().err().and_then(Option::as_ref)
    }

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

/// Why a command was not queued.
enum Unsent {
    /// The queue is full and the caller must not block.
    Full,
    /// The service is shutting down.
    Closed,
}
use Unsent::{Closed, Full};

/// A runtime running in the background.
pub struct HookService {
    tx: Option<tokio::sync::mpsc::Sender<Command>>,
    writer: Option<JoinHandle<Stats>>,
    dispatcher: Option<JoinHandle<Stats>>,
    /// Disconnected when the dispatcher thread has ended (behind a lock only
    /// so that the service is `Sync`: shared behind an `Arc` by tasks).
    ended: Option<Mutex<mpsc::Receiver<()>>>,
    ended_async: Option<oneshot::Receiver<()>>,
    cancel: Arc<AtomicBool>,
    durability: Durability,
}

/// How the service runs, beyond the runtime and the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceOptions {
    /// Threads delivering observe events side by side across hooks (each
    /// hook still gets its deliveries one at a time, in order), and the
    /// hooks of a tool approval side by side (recorded in plan order);
    /// file-edit and edit events run hook after hook. 1 delivers
    /// everything on one thread, in plan order across hooks too. At most
    /// [`MAX_THREADS`](crate::sandbox::MAX_THREADS).
    pub threads: usize,
    /// How long the journal keeps an event whose every delivery finished
    /// (dead letters and pending deliveries are kept whatever their age);
    /// `None` keeps everything. Pruning runs on the writer thread between
    /// commits, at most once a second, [`PRUNE_BATCH`](crate::journal::PRUNE_BATCH)
    /// events at a time. Without a journal it does nothing.
    pub retention: Option<Duration>,
    /// The auditor's trail in the journal (docs/journal.md#the-auditors-trail).
    pub trail: TrailOptions,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions {
            threads: 1,
            retention: Some(DEFAULT_RETENTION),
            trail: TrailOptions::default(),
        }
    }
}

/// A service's journal, opened: a connection for each thread, and what an
/// earlier run left unacked (read before the writer starts, so nothing is
/// both recovered and new).
struct Opened {
    writer_journal: Option<Journal>,
    dispatcher_journal: Option<Journal>,
    recovered: Vec<Work>,
}

impl Opened {
    fn at(journal: Option<&Path>) -> Result<Opened, StartError> {
        let Some(path) = journal else {
            return Ok(Opened {
                writer_journal: None,
                dispatcher_journal: None,
                recovered: Vec::new(),
            });
        };
        let mut j = Journal::open(path)?;
        let recovered: Vec<Work> = j
            .recover()?
            .into_iter()
            .map(|p| Work {
                seq: p.seq,
                envelope: p.envelope,
                deliveries: p.deliveries,
                resolve: None,
                answered: p.answered,
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
        Ok(Opened {
            writer_journal: Some(j.open_beside()?),
            dispatcher_journal: Some(j),
            recovered,
        })
    }
}

/// Both connections write `runtime`'s trail; a tail a stopped or crashed
/// process left is signed now, if it verifies (else the start fails: it is
/// never signed as found).
fn keep_trail(
    runtime: &Runtime,
    options: &ServiceOptions,
    writer: Option<&mut Journal>,
    dispatcher: Option<&mut Journal>,
) -> Result<(), JournalError> {
    let context = Arc::new(std::sync::RwLock::new(Arc::new(trail_context(
        runtime,
        &options.trail,
    ))));
    if let Some(j) = dispatcher {
        j.keep_trail(context.clone());
    }
    if let Some(j) = writer {
        j.keep_trail(context);
        j.sign_found_tail()?;
    }
    Ok(())
}

impl HookService {
    /// Starts the service. With `journal`, events are `persisted`, and
    /// deliveries an earlier run left unacked are delivered first (in their
    /// original order, with `attempt` + 1). Opening and recovering a journal
    /// reads the disk, so this runs [`HookService::start_blocking`] on a
    /// blocking thread.
    pub async fn start(
        runtime: Runtime,
        journal: Option<PathBuf>,
        observer: Observer,
        options: ServiceOptions,
    ) -> Result<HookService, StartError> {
        let started = tokio::task::spawn_blocking(move || {
            Self::start_blocking(runtime, journal.as_deref(), observer, options)
        })
        .await;
        match started {
            Ok(service) => service,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// [`HookService::start`] for a caller outside async code: it blocks
    /// while the journal opens and recovers.
    pub fn start_blocking(
        runtime: Runtime,
        journal: Option<&Path>,
        observer: Observer,
        options: ServiceOptions,
    ) -> Result<HookService, StartError> {
        // One journal, one owner: held by both threads, released when both end.
        let lock = journal.map(JournalLock::acquire).transpose()?.map(Arc::new);
        let Opened {
            mut writer_journal,
            mut dispatcher_journal,
            recovered,
        } = Opened::at(journal)?;
        if options.trail.on {
            keep_trail(
                &runtime,
                &options,
                writer_journal.as_mut(),
                dispatcher_journal.as_mut(),
            )?;
        }
        let durability = if journal.is_some() {
            Durability::Persisted
        } else {
            Durability::Accepted
        };
        let cancel = runtime.sandbox().cancel_flag();
        let planner = runtime.registry().planner();
        let (tx, rx) = tokio::sync::mpsc::channel(SUBMIT_QUEUE);
        // Bounded: under overload the writer waits for the dispatcher, so
        // receipts slow down instead of memory growing without end.
        let (work_tx, work_rx) = mpsc::sync_channel(DISPATCH_QUEUE);
        let mut runtime = runtime;
        if let (Some(path), Some(j)) = (journal, dispatcher_journal.as_ref()) {
            // Hooks' state lives beside the events, so it survives restarts;
            // its writes share the journal's write lock.
            let store =
                StateStore::open_with_write_lock(path, j.write_lock()).map_err(|sqlite| {
                    JournalError::Sqlite {
                        path: path.to_path_buf(),
                        sqlite,
                    }
                })?;
            runtime.use_state(store);
        }
        let mut dispatcher =
            Dispatcher::new(runtime, dispatcher_journal, observer, options.threads)?;
        // Both senders drop when the dispatcher thread ends: that is the
        // signal `shutdown` waits for (no polling).
        let (ended_tx, ended) = mpsc::channel::<()>();
        let (ended_async_tx, ended_async) = oneshot::channel::<()>();
        let dispatcher = std::thread::Builder::new()
            .name("hookrt-dispatch".into())
            .spawn({
                let lock = lock.clone();
                move || {
                    let _owner = lock;
                    let _ended = (ended_tx, ended_async_tx);
                    dispatcher.run(recovered);
                    dispatcher.serve(work_rx);
                    dispatcher.into_stats()
                }
            })?;
        let mut writer = Writer {
            journal: writer_journal,
            planner,
            cancel: cancel.clone(),
            seen: Seen::default(),
            stats: Stats::default(),
            retention: options.retention,
            pruned_at: None,
        };
        let writer = std::thread::Builder::new()
            .name("hookrt-journal".into())
            .spawn(move || {
                let _owner = lock;
                writer.serve(rx, work_tx);
                writer.stats
            })?;
        Ok(HookService {
            tx: Some(tx),
            writer: Some(writer),
            dispatcher: Some(dispatcher),
            ended: Some(Mutex::new(ended)),
            ended_async: Some(ended_async),
            cancel,
            durability,
        })
    }

    /// What receipts from this service say: `persisted` with a journal.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Validates and queues `envelope`; the receipt arrives once it is
    /// committed (or held in memory without a journal). When
    /// [`SUBMIT_QUEUE`](crate::service::SUBMIT_QUEUE) events already wait, it blocks
    /// the thread for room, or, inside an async runtime, refuses the event as
    /// [`EmitError::Overloaded`] (use [`HookService::emit`] there).
    pub fn submit(&self, mut envelope: Envelope) -> PendingReceipt {
        let id = envelope.id.clone();
        if let Err(e) = envelope.validate() {
            return PendingReceipt(Err(Some(EmitError::Invalid(e))), id);
        }
        let (reply, rx) = oneshot::channel();
        match self.send_sync(Command::Emit(envelope, reply, None)) {
            Ok(()) => PendingReceipt(Ok(rx), id),
            Err(Full) => PendingReceipt(Err(Some(EmitError::Overloaded(id.clone()))), id),
            Err(Closed) => PendingReceipt(Err(None), id),
        }
    }

    /// [`HookService::submit`] that never waits, and never refuses for
    /// want of room: when [`SUBMIT_QUEUE`](crate::service::SUBMIT_QUEUE)
    /// events already wait, `envelope` comes back, to be given to
    /// [`HookService::emit`] (which waits for room) once earlier receipts
    /// came. For an async caller that must not lose the event nor copy it.
    #[allow(
        clippy::result_large_err,
        reason = "the caller's own envelope comes back as it gave it, to be emitted later"
    )]
    pub fn try_submit(&self, mut envelope: Envelope) -> Result<PendingReceipt, Envelope> {
        let id = envelope.id.clone();
        if let Err(e) = envelope.validate() {
            return Ok(PendingReceipt(Err(Some(EmitError::Invalid(e))), id));
        }
        let Some(tx) = self.tx.as_ref() else {
            return Ok(PendingReceipt(Err(None), id));
        };
        let (reply, rx) = oneshot::channel();
        match tx.try_send(Command::Emit(envelope, reply, None)) {
            Ok(()) => Ok(PendingReceipt(Ok(rx), id)),
            Err(TrySendError::Full(Command::Emit(envelope, _, _))) => Err(envelope),
            Err(_) => Ok(PendingReceipt(Err(None), id)),
        }
    }

    /// Queues `command` without an executor: blocks for room, except inside
    /// an async runtime, where blocking could stall it.
    fn send_sync(&self, command: Command) -> Result<(), Unsent> {
        let tx = self.tx.as_ref().ok_or(Closed)?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return tx.try_send(command).map_err(|e| match e {
                TrySendError::Full(_) => Full,
                TrySendError::Closed(_) => Closed,
            });
        }
        tx.blocking_send(command).map_err(|_| Closed)
    }

    /// Queues `command`, waiting for room.
    async fn send(&self, command: Command) -> Result<(), Unsent> {
        let tx = self.tx.as_ref().ok_or(Closed)?;
        tx.send(command).await.map_err(|_| Closed)
    }

    /// The command that emits `envelope` for `resolve`, and its replies.
    fn resolving(mut envelope: Envelope) -> Result<(Command, ResolvingRx), EmitError> {
        envelope.validate()?;
        let (reply, receipt_rx) = oneshot::channel();
        let (resolve, resolution_rx) = oneshot::channel();
        let command = Command::Emit(envelope, reply, Some(resolve));
        Ok((command, (receipt_rx, resolution_rx)))
    }

    /// Emits one event and waits until its deliveries finished: for a
    /// decision event (tool approval, file-edit ownership) the merged answer,
    /// for an edit event the final state and each hook's account.
    pub async fn resolve(&self, envelope: Envelope) -> Result<ResolveReply, EmitError> {
        let id = envelope.id.clone();
        let (command, (receipt_rx, resolution_rx)) = Self::resolving(envelope)?;
        if self.send(command).await.is_err() {
            return Err(EmitError::ShuttingDown(id));
        }
        // The resolution first: the receipt was sent before it, so the
        // caller wakes once, when the hooks have answered (a re-submitted
        // event is answered with what it decided, from the journal).
        let resolution = resolution_rx.await;
        let receipt = receipt_rx.await;
        answered(id, receipt, resolution)
    }

    /// Blocking form of [`HookService::resolve`] (not for async contexts).
    pub fn resolve_blocking(&self, envelope: Envelope) -> Result<ResolveReply, EmitError> {
        let id = envelope.id.clone();
        let (command, (receipt_rx, resolution_rx)) = Self::resolving(envelope)?;
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| EmitError::ShuttingDown(id.clone()))?;
        if tx.blocking_send(command).is_err() {
            return Err(EmitError::ShuttingDown(id));
        }
        let resolution = resolution_rx.blocking_recv();
        let receipt = receipt_rx.blocking_recv();
        answered(id, receipt, resolution)
    }

    /// Emits one event, waiting for room in the queue, then for its receipt.
    pub async fn emit(&self, mut envelope: Envelope) -> Result<Receipt, EmitError> {
        let id = envelope.id.clone();
        envelope.validate()?;
        let (reply, rx) = oneshot::channel();
        if self
            .send(Command::Emit(envelope, reply, None))
            .await
            .is_err()
        {
            return Err(EmitError::ShuttingDown(id));
        }
        PendingReceipt(Ok(rx), id).receipt().await
    }

    /// Resolves once everything submitted before it has been delivered.
    pub async fn flush(&self) {
        let (reply, rx) = oneshot::channel();
        if self.send(Command::Flush(reply)).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Swaps in `runtime`'s hooks (hot reload). The swap has one place among
    /// the events: every event taken before this call is delivered by the
    /// hooks that were running (deliveries in flight finish on them), every
    /// event taken after it by the new ones, so no (event, hook) delivery is
    /// lost or doubled by the swap. The new runtime takes over the service's
    /// hooks' `state`, hooks' `metrics`, transport and shutdown (see
    /// [`Runtime::set_transport`]); load and check it first
    /// ([`Runtime::load`]): a runtime that did not load is never
    /// swapped in. Resolves once every earlier event has been delivered and
    /// the new hooks run, with the hook ids before and after.
    pub async fn reload(&self, runtime: Runtime) -> Result<Reloaded, ReloadError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Reload(Box::new(runtime), reply))
            .await
            .map_err(|_| ReloadError::ShuttingDown)?;
        rx.await.map_err(|_| ReloadError::ShuttingDown)
    }

    /// Blocking form of [`HookService::flush`] (not for async contexts).
    pub fn flush_blocking(&self) {
        let (reply, rx) = oneshot::channel();
        if let Some(tx) = &self.tx
            && tx.blocking_send(Command::Flush(reply)).is_ok()
        {
            let _ = rx.blocking_recv();
        }
    }

    /// Stops taking events, lets queued work finish until `deadline`, then
    /// cancels the running delivery and leaves the rest unacked. Never blocks
    /// the async caller's thread: it waits on the dispatcher's end, and joins
    /// the threads on a blocking thread.
    pub async fn shutdown(mut self, deadline: Duration) -> Stats {
        self.tx = None; // the writer, then the dispatcher, end once drained
        if let Some(ended) = self.ended_async.take() {
            let _ = tokio::time::timeout(deadline, ended).await;
        }
        match tokio::task::spawn_blocking(move || self.finish()).await {
            Ok(stats) => stats,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Blocking form of [`HookService::shutdown`] (not for async contexts).
    pub fn shutdown_blocking(mut self, deadline: Duration) -> Stats {
        self.tx = None;
        if let Some(ended) = self.ended.take() {
            let ended = ended.into_inner().unwrap_or_else(|e| e.into_inner());
            let _ = ended.recv_timeout(deadline);
        }
        self.finish()
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

/// What a resolve of event `id` comes to, from its two replies: a refused
/// receipt says why (the resolution's sender is dropped with it); a
/// resolution that never came, with the receipt taken, means the service
/// stopped first.
fn answered(
    id: String,
    receipt: Result<Result<Receipt, EmitError>, oneshot::error::RecvError>,
    resolution: Result<Option<Resolution>, oneshot::error::RecvError>,
) -> Result<ResolveReply, EmitError> {
    let receipt = receipt.unwrap_or_else(|_| Err(EmitError::ShuttingDown(id.clone())))?;
    let resolution = resolution.map_err(|_| EmitError::ShuttingDown(id))?;
    Ok(ResolveReply {
        receipt,
        resolution,
    })
}
